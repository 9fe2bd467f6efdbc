/*
 * test_firstcut.c - the first cut of a service's size (firstcut.h) against
 * figures worked by hand from the roofline: capacity, batch, the tail
 * prompt's prefill, Erlang C, cost and energy; and `estimate --rate` /
 * `--compare-gpus` on the command line.
 */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>

#include "gpuplan/firstcut.h"

static struct firstcut_service llama_on(const char *gpu, double rate)
{
	return (struct firstcut_service){
		.model = catalog_model("llama-3-8b"),
		.weights = QUANT_FP16,
		.kv = QUANT_FP16,
		.gpu = catalog_gpu(gpu),
		.memory_fraction = 0.9,
		.max_batch = 256,
		.max_batched_tokens = 2048,
		.rate = rate,
		.prompt_mean = 1000,
		.prompt_tail = 6212,
		.output_mean = 200,
		.output_cv2 = exp(1.0) - 1,
		.ttft_slo_s = 0.5,
		.percentile = 99,
	};
}

Test(firstcut, lognormal_quantiles)
{
	/* mean 1000, sigma 1: mu = ln 1000 - 1/2; p50 = e^mu, p99 = e^(mu + 2.3263) */
	cr_assert_float_eq(firstcut_lognormal_quantile(1000, 1, 50), 1000 * exp(-0.5), 1e-6);
	cr_assert_float_eq(firstcut_lognormal_quantile(1000, 1, 99), 1000 * exp(-0.5 + 2.326347874),
			   1e-3);
	cr_assert_eq(firstcut_lognormal_quantile(1000, 0, 99), 1000);
}

Test(firstcut, one_replica_capacity_is_the_roofline_batch_over_its_slot_time)
{
	struct firstcut_service s = llama_on("H100-80GB", 10);
	struct firstcut f;
	cr_assert_eq(firstcut_size(&s, &f), FIRSTCUT_OK);
	struct roofline r;
	roofline_init(&r, s.model, QUANT_FP16, QUANT_FP16, s.gpu, NULL, GPU_SHARE_WHOLE, 1);
	/* 256 sequences of 1,200 tokens fit the 72 GiB server: the batch is max_batch */
	cr_assert_eq(f.tp, 1);
	cr_assert_eq(f.batch, 256);
	double step = roofline_decode_time(&r, 256, 1100);
	double c_p = roofline_prefill_time(&r, 1000, 0) - r.step_overhead_s;
	/* a full iteration: 256 decodes and the 1,280 prefill tokens (256 x 1000 /
	 * 200) that keep the batch full, within the 2,048 - 256 budget */
	struct roofline_work full = ROOFLINE_WORK_NONE;
	roofline_add_prefill(&full, 1280, 500);
	roofline_add_decode(&full, 256, 1100);
	double t_full = roofline_iteration_time(&r, &full);
	double mu = 256 / (200 * t_full);
	cr_assert_float_eq(f.decode_step_s, step, 1e-15);
	cr_assert_float_eq(f.capacity_rps, mu, 1e-9);
	cr_assert_eq(f.replicas, 1);
	cr_assert_float_eq(f.utilisation, 10 / mu, 1e-12);
	/* at 41 % of 256 slots nobody waits; TTFT = the tail prompt in 3 chunks
	 * beside the a = 10 x 256 / mu running decodes, + half their step */
	double a = 10 * 256 / mu;
	cr_assert_eq(f.wait_tail_s, 0);
	double t = 0, done = 0;
	for (double left = 6212; left > 0;) {
		double chunk = fmin(left, 2048 - a);
		struct roofline_work w = ROOFLINE_WORK_NONE;
		roofline_add_prefill(&w, chunk, done);
		roofline_add_decode(&w, a, 1100);
		t += roofline_iteration_time(&r, &w);
		left -= chunk, done += chunk;
	}
	cr_assert_float_eq(f.prefill_tail_s, t, 1e-12);
	cr_assert_float_eq(f.ttft_tail_s,
			   t + f.prefill_wait_s + roofline_decode_time(&r, a, 1100) / 2, 1e-12);
	/* the prefill queue: the budget prefills at r = 6212 / t tokens/s, so a
	 * request waits for the prompts ahead with chance rho = 10 x 1000 / r
	 * (M/G/1; a batch slot at a = 75 of 256 never waits: Erlang C ~ 1e-30),
	 * then an exponential time of mean m = E[S] (1 + cs^2) / (2 (1 - rho))
	 * (Kingman), cs^2 = e^sigma^2 - 1 of the lognormal whose p99 is 6,212
	 * (sigma = z - sqrt(z^2 - 2 ln 6.212), z = 2.3263: ~1).  At the tail
	 * T = t + prefill_wait, 1 % of requests wait and prefill longer:
	 * (1 - rho) P(X/r > T) + rho (e^(-T/m) + int_0^T e^(-w/m)/m P(X/r > T - w) dw),
	 * here by the trapezoid rule on 20,000 steps */
	double z = 2.326347874, sigma = z - sqrt(z * z - 2 * log(6.212));
	double rate = 6212 / t, es = 1000 / rate, rho = 10 * es;
	double m = es * (exp(sigma * sigma) / 2) / (1 - rho), mu_x = log(1000) - sigma * sigma / 2;
	double big_t = t + f.prefill_wait_s, integral = 0, h = big_t / 20000;
#define OVER(y) ((y) <= 0 ? 1 : 0.5 * erfc((log((y)*rate) - mu_x) / sigma / sqrt(2)))
	for (int i = 0; i <= 20000; i++) {
		double w = i * h, k = i == 0 || i == 20000 ? 0.5 : 1;
		integral += k * exp(-w / m) / m * OVER(big_t - w) * h;
	}
	double late = (1 - rho) * OVER(big_t) + rho * (exp(-big_t / m) + integral);
#undef OVER
	cr_assert_gt(rho, 0.1);
	cr_assert_gt(f.prefill_wait_s, 0.01, "%g", f.prefill_wait_s);
	cr_assert_float_eq(late, 0.01, 2e-4, "%g", late);
	cr_assert_float_eq(firstcut_late_share(&s, 1, big_t), 0.01, 1e-6);
	/* cost and energy: one H100 at $4.02/h busy nearly always (duty 1 - e^-10 x T1) */
	cr_assert_float_eq(f.usd_per_hour, 4.02, 1e-12);
	cr_assert_float_eq(f.usd_per_mtok, 4.02 / (2000 * 3600) * 1e6, 1e-12);
	double t1 = c_p + 200 * roofline_decode_time(&r, 1, 1100);
	double duty = 1 - exp(-10 * t1);
	cr_assert_float_eq(f.duty, duty, 1e-12);
	cr_assert_float_eq(f.watts, 145 + 555 * duty, 1e-9);
	cr_assert_float_eq(f.tokens_per_joule, 2000 / f.watts, 1e-12);
}

Test(firstcut, replicas_grow_with_the_rate_and_the_answer_holds_its_bound)
{
	int last = 0;
	for (double rate = 5; rate <= 400; rate *= 2) {
		struct firstcut_service s = llama_on("H100-80GB", rate);
		struct firstcut f;
		cr_assert_eq(firstcut_size(&s, &f), FIRSTCUT_OK);
		cr_assert_geq(f.replicas, last, "rate %g", rate);
		cr_assert_leq(f.ttft_tail_s, 0.5, "rate %g", rate);
		cr_assert_leq(f.utilisation, 0.95);
		/* one fewer replica breaks the bound or the utilisation cap */
		if (f.replicas > 1) {
			struct firstcut g;
			double t = firstcut_ttft_tail(&s, f.replicas - 1, &g);
			cr_assert(t > 0.5 || g.utilisation > 0.95, "rate %g: %d replicas", rate,
				  f.replicas - 1);
		}
		last = f.replicas;
	}
	cr_assert_gt(last, 10);
}

Test(firstcut, saturated_replicas_have_no_finite_ttft_and_erlang_c_waits)
{
	struct firstcut_service s = llama_on("H100-80GB", 1000);
	struct firstcut f;
	cr_assert(isinf(firstcut_ttft_tail(&s, 1, &f)));
	cr_assert_gt(f.utilisation, 1);
	/* near saturation (97 % of each of 4 replicas) the wait dominates */
	int n = 4;
	s.rate = 0.97 * n * f.capacity_rps;
	double t = firstcut_ttft_tail(&s, n, &f);
	cr_assert_gt(f.utilisation, 0.95);
	cr_assert_gt(f.wait_tail_s, 0, "at %.1f %% someone waits", 100 * f.utilisation);
	cr_assert_gt(t, f.prefill_tail_s);
	/* bursty arrivals (ca^2 = 4, not Poisson's 1) wait (4 + cs^2) / (1 + cs^2) as long */
	double poisson = f.wait_tail_s, ttft = t;
	s.arrival_cv2 = 4;
	t = firstcut_ttft_tail(&s, n, &f);
	cr_assert_float_eq(f.wait_tail_s, poisson * (4 + s.output_cv2) / (1 + s.output_cv2), 1e-9);
	cr_assert_gt(t, ttft);
	/* a rate that moves (half the requests at 1.5 x the mean, half at 0.5 x)
	 * waits longer than a steady one: the busy half's queue */
	s.arrival_cv2 = 1;
	s.rate = 0.6 * n * f.capacity_rps;
	double steady = firstcut_ttft_tail(&s, n, &f);
	s.n_rate_classes = 2;
	s.rate_class[0] = 0.5, s.rate_class[1] = 1.5;
	cr_assert_gt(firstcut_ttft_tail(&s, n, &f), steady);
}

Test(firstcut, what_cannot_be_sized_says_why)
{
	struct firstcut f;
	/* the A100's tail prompt: 6,212 tokens at 218 TFLOPS is ~0.47 s alone */
	struct firstcut_service s = llama_on("A100-80GB", 10);
	cr_assert_eq(firstcut_size(&s, &f), FIRSTCUT_TAIL_PROMPT);
	s = llama_on("T4", 10);
	s.model = catalog_model("llama-3-70b");
	cr_assert_eq(firstcut_size(&s, &f), FIRSTCUT_NO_FIT);
	s = llama_on("L4", 1);
	s.tpot_slo_s = 0.01; /* 16 GB of weights over 240 GB/s is 67 ms a token */
	cr_assert_eq(firstcut_size(&s, &f), FIRSTCUT_TPOT);
	/* a TPOT bound caps the batch */
	s = llama_on("H100-80GB", 10);
	s.tpot_slo_s = 0.012;
	cr_assert_eq(firstcut_size(&s, &f), FIRSTCUT_OK);
	cr_assert_lt(f.batch, 256);
	cr_assert_leq(f.decode_step_s, 0.012);
}

/* --- the command line ------------------------------------------------------ */

static char out[16384];

static int gpuplan(const char *args)
{
	char cmd[1024];
	snprintf(cmd, sizeof cmd, "bin/gpuplan %s 2>&1", args);
	FILE *p = popen(cmd, "r");
	cr_assert_not_null(p);
	size_t n = fread(out, 1, sizeof out - 1, p);
	out[n] = '\0';
	int status = pclose(p);
	cr_assert(WIFEXITED(status), "%s", cmd);
	return WEXITSTATUS(status);
}

Test(firstcut_cli, compare_gpus_prints_every_type_labelled_as_an_estimate)
{
	cr_assert_eq(gpuplan("estimate --model llama-3-8b --quant fp16 --compare-gpus --rate 10 "
			     "--ttft 500ms --price H100-80GB=2"),
		     0, "%s", out);
	cr_assert(strstr(out, "first-cut estimate"), "%s", out);
	for (size_t i = 0; i < catalog_gpu_count(); i++)
		cr_assert(strstr(out, catalog_gpu_at(i)->name), "%s", catalog_gpu_at(i)->name);
	cr_assert(strstr(out, "A100-80GB   the tail prompt's prefill alone exceeds --ttft"), "%s",
		  out);
	/* --price: one H100 at $2/h, 2,000 tokens/s: $0.278 per million */
	cr_assert(strstr(out, "H100-80GB    1        1     1     2.00   0.278"), "%s", out);
	cr_assert_eq(gpuplan("estimate --model llama-3-8b --quant fp16 --gpu L4 --compare-gpus "
			     "--rate 1"),
		     2);
	cr_assert(strstr(out, "--compare-gpus compares every GPU type; expected no --gpu"));
	cr_assert_eq(gpuplan("estimate --model llama-3-8b --quant fp16 --compare-gpus"), 2);
	cr_assert(strstr(out, "--compare-gpus needs --rate R"));
	cr_assert_eq(gpuplan("estimate --model llama-3-8b --quant fp16 --compare-gpus --rate 1 "
			     "--price B300=2"),
		     2);
	cr_assert(strstr(out, "--price B300=2: 'B300' is not a catalog GPU type"), "%s", out);
	cr_assert_eq(gpuplan("estimate --model llama-3-8b --quant fp16 --gpu H100-80GB --rate 0"),
		     2);
	cr_assert(strstr(out, "--rate expects a rate like 10/s"), "%s", out);
}

Test(firstcut_cli, a_service_on_one_gpu_as_json)
{
	cr_assert_eq(gpuplan("estimate --model-config models/mixtral-8x7b.json --quant fp8 --gpu "
			     "H100-80GB --rate 20/s --ttft 1s --json"),
		     0, "%s", out);
	cr_assert(strstr(out, "\"estimate\": \"first cut\""), "%s", out);
	cr_assert(strstr(out, "{\"gpu\": \"H100-80GB\", \"verdict\": \"ok\", \"tp\": 1"), "%s",
		  out);
}

/* firstcut_load_at_tail inverts the tail in the load a replica takes: the
 * tail at 40 requests/s on n replicas stands for 40 / n a replica (to the
 * 2^-16 of the capacity it bisects to), on a steady and on a varying rate;
 * a tail below an idle replica's stands for no load, and the longest tails
 * for the load where the replica saturates, at most its capacity. */
Test(firstcut, the_load_at_a_tail_inverts_the_tail)
{
	struct firstcut_service s = llama_on("H100-80GB", 40);
	struct firstcut f;
	for (int varying = 0; varying < 2; varying++) {
		if (varying) { /* half the requests at 0.5 x the rate, half at 1.5 x */
			s.n_rate_classes = 2;
			s.rate_class[0] = 0.5, s.rate_class[1] = 1.5;
		}
		for (int n = 2; n <= 8; n *= 2) {
			double t = firstcut_ttft_tail(&s, n, &f);
			cr_assert(isfinite(t), "%d replicas", n);
			cr_assert_float_eq(firstcut_load_at_tail(&s, t), 40.0 / n,
					   2 * f.capacity_rps / 65536, "%d replicas", n);
		}
	}
	double idle = firstcut_ttft_tail(&s, 1000000, &f);
	cr_assert_eq(firstcut_load_at_tail(&s, 0.9 * idle), 0);
	double most = firstcut_load_at_tail(&s, 1e6);
	cr_assert(most > firstcut_load_at_tail(&s, 0.5) && most <= f.capacity_rps, "%g", most);
	s.gpu = catalog_gpu("T4"); /* llama-3-8b's 16 GB of FP16 weights do not fit one T4 */
	s.tp = 1;
	cr_assert(isnan(firstcut_load_at_tail(&s, 0.5)));
}
