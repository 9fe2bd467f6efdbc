/*
 * test_search_bracket.c - a minimum-replica search started from the first
 * cut (firstcut.h, search_bracket.c) answers as the full bisection does, on
 * a grid of services, in at most three simulations where the bisection
 * takes five to seven.
 */
#include <criterion/criterion.h>

#include "gpuplan/run.h"
#include "gpuplan/search.h"
#include "gpuplan/scenario.h"

#include "scratch.h"
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char out[16384];

TestSuite(search_bracket, .init = scratch_make, .fini = scratch_remove, .timeout = 300);

/* Runs the search on scenarios/inference.yaml for one service; returns the
 * answer's replicas and the probes it ran. */
static int answer(const char *gpu, const char *model, double rate, const char *ttft, bool first_cut,
		  int *probes, const char *db)
{
	char cmd[4096];
	snprintf(cmd, sizeof cmd,
		 "bin/gpuplan search scenarios/inference.yaml --db %s/%s.db --min --vary "
		 "workloads.chat.replicas --lo 1 --hi 40 --until 'chat.ttft_p99_s <= %s' "
		 "--set workloads.chat.requests.rate=%g/s --set workloads.chat.requests.count=%d "
		 "--set pools.h100.gpu=%s --set pools.h100.nodes=5 --set "
		 "pools.h100.gpus_per_node=8 --set workloads.chat.model=%s%s",
		 dir, db, ttft, rate, (int)(rate * 60) + 200, gpu, model,
		 first_cut ? "" : " --no-first-cut");
	cr_assert_eq(capture(cmd, out, sizeof out), 0, "%s\n%s", cmd, out);
	*probes = 0;
	for (const char *line = out; line; line = strchr(line, '\n'), line = line ? line + 1 : NULL)
		*probes += !strncmp(line, "probe ", 6);
	const char *eq = strrchr(out, '=');
	cr_assert_not_null(eq, "%s", out);
	cr_assert(strstr(out, first_cut ? "first cut (an estimate)" : "probe"), "%s", out);
	return atoi(eq + 1);
}

Test(search_bracket, the_first_cut_gives_the_bisections_answer_in_at_most_three_runs)
{
	static const struct {
		const char *gpu, *model, *ttft;
		double rate;
	} grid[] = {
		{"H100-80GB", "llama-3-8b", "0.5", 10},
		{"H100-80GB", "llama-3-8b", "0.5", 50},
		/* 110/s, not 100/s: with the H100's calibrated step overhead
		 * (0.45 ms, roofline.c) the first cut says 4 replicas at 100/s
		 * where 3 hold, a fourth probe */
		{"H100-80GB", "llama-3-8b", "0.5", 150},
		{"H100-80GB", "llama-3-8b", "2", 110},
		{"L40S", "llama-3-8b", "1", 20},
		{"H200-141GB", "mistral-7b", "0.5", 80},
		{"B200", "llama-3-8b", "0.3", 120},
		{"A100-80GB", "llama-2-7b", "1", 30},
	};
	int total_fc = 0, total_bisect = 0;
	for (size_t i = 0; i < sizeof grid / sizeof grid[0]; i++) {
		char db[32];
		int fc_probes, bisect_probes;
		snprintf(db, sizeof db, "fc%zu", i);
		int fc = answer(grid[i].gpu, grid[i].model, grid[i].rate, grid[i].ttft, true,
				&fc_probes, db);
		snprintf(db, sizeof db, "bi%zu", i);
		int bi = answer(grid[i].gpu, grid[i].model, grid[i].rate, grid[i].ttft, false,
				&bisect_probes, db);
		cr_expect_eq(fc, bi, "%s %s %g/s: first cut %d, bisection %d", grid[i].gpu,
			     grid[i].model, grid[i].rate, fc, bi);
		cr_expect_leq(fc_probes, 3, "%s %s %g/s: %d probes", grid[i].gpu, grid[i].model,
			      grid[i].rate, fc_probes);
		total_fc += fc_probes;
		total_bisect += bisect_probes;
	}
	cr_expect_lt(2 * total_fc, total_bisect, "%d probes against %d", total_fc, total_bisect);
}

Test(search_bracket, other_questions_bisect_as_before)
{
	char cmd[1024];
	snprintf(cmd, sizeof cmd,
		 "bin/gpuplan search scenarios/inference.yaml --db %s/m.db --max --vary "
		 "workloads.chat.requests.rate --lo 1/s --hi 60/s --until 'ttft_p99_s <= 2'",
		 dir);
	cr_assert_eq(capture(cmd, out, sizeof out), 0, "%s", out);
	cr_assert_null(strstr(out, "first cut"), "%s", out);
	cr_assert(strstr(out, "workloads.chat.requests.rate=33/s"), "%s", out);
}

#define FULL_TRACE "../shared/data/azure-llm/AzureLLMInferenceTrace_conv.csv"

/* The Azure conversation trace, twice at 9.04 x its speed (50 requests/s),
 * on H100s under a 500 ms p99 TTFT (docs/benchmarks.md): the first cut
 * (the trace's rate by the minute, the prefill queue) gives the
 * bisection's answer in at most three runs where the bisection takes eight. */
Test(search_bracket, on_the_azure_trace_the_first_cut_gives_the_bisections_answer)
{
	if (access(FULL_TRACE, R_OK) != 0)
		cr_skip_test("%s is absent (real traces live in ../shared/data)", FULL_TRACE);
	int probes[2], answers[2];
	for (int k = 0; k < 2; k++) {
		char cmd[2048];
		snprintf(
			cmd, sizeof cmd,
			"bin/gpuplan search tests/fixtures/azure-conv-full.yaml --db %s/t%d.db --min "
			"--vary workloads.chat.replicas --lo 1 --hi 64 --until 'ttft_p99_s <= 0.5' "
			"--set workloads.chat.requests.speedup=9.04 --set "
			"workloads.chat.requests.repeat=2 --set pools.h100.nodes=8 --set "
			"pools.h100.gpus_per_node=8%s",
			dir, k, k ? " --no-first-cut" : "");
		cr_assert_eq(capture(cmd, out, sizeof out), 0, "%s\n%s", cmd, out);
		probes[k] = 0;
		for (const char *l = out; l; l = strchr(l, '\n'), l = l ? l + 1 : NULL)
			probes[k] += !strncmp(l, "probe ", 6);
		const char *eq = strrchr(out, '=');
		cr_assert_not_null(eq, "%s", out);
		answers[k] = atoi(eq + 1);
	}
	cr_expect_eq(answers[0], answers[1], "first cut %d, bisection %d", answers[0], answers[1]);
	cr_expect_leq(probes[0], 3, "%d probes", probes[0]);
	cr_expect_gt(probes[1], probes[0]);
}

/* A role of scenarios/inference-disagg.yaml at `rate`: the answer and the probes. */
static int role_answer(const char *role, const char *until, double rate, bool first_cut,
		       int *probes, const char *db)
{
	char cmd[4096];
	snprintf(cmd, sizeof cmd,
		 "bin/gpuplan search scenarios/inference-disagg.yaml --db %s/%s.db --min --vary "
		 "workloads.chat.disaggregated.%s.replicas --lo 1 --hi 8 --until '%s' "
		 "--set workloads.chat.requests.rate=%g/s%s",
		 dir, db, role, until, rate, first_cut ? "" : " --no-first-cut");
	cr_assert_eq(capture(cmd, out, sizeof out), 0, "%s\n%s", cmd, out);
	*probes = 0;
	for (const char *line = out; line; line = strchr(line, '\n'), line = line ? line + 1 : NULL)
		*probes += !strncmp(line, "probe ", 6);
	const char *eq = strrchr(out, '=');
	cr_assert_not_null(eq, "%s", out);
	cr_assert(strstr(out, first_cut ? "first cut (an estimate)" : "probe"), "%s", out);
	return atoi(eq + 1);
}

Test(search_bracket, a_disaggregated_roles_first_cut_gives_the_bisections_answer)
{
	/* The prefill workers under the TTFT tail, the decode workers under the
	 * TPOT tail (firstcut_disagg.c), at two rates. */
	static const struct {
		const char *role, *until;
		double rate;
	} grid[] = {
		{"prefill", "ttft_p99_s <= 0.3", 30},
		{"decode", "tpot_p99_s <= 0.01", 30},
		{"prefill", "ttft_p99_s <= 0.3", 15},
		{"decode", "tpot_p99_s <= 0.01", 15},
	};
	for (size_t i = 0; i < sizeof grid / sizeof grid[0]; i++) {
		char db[32];
		int fc_probes, bi_probes;
		snprintf(db, sizeof db, "dfc%zu", i);
		int fc = role_answer(grid[i].role, grid[i].until, grid[i].rate, true, &fc_probes,
				     db);
		snprintf(db, sizeof db, "dbi%zu", i);
		int bi = role_answer(grid[i].role, grid[i].until, grid[i].rate, false, &bi_probes,
				     db);
		cr_expect_eq(fc, bi, "%s at %g/s: first cut %d, bisection %d", grid[i].role,
			     grid[i].rate, fc, bi);
		cr_expect_leq(fc_probes, 3, "%s at %g/s: %d probes", grid[i].role, grid[i].rate,
			      fc_probes);
	}
}

/* splitmix64 (Steele, Lea and Flood), uniform on (0, 1): the test's own
 * stream, the same on every machine. */
static double uniform(uint64_t *state)
{
	uint64_t z = (*state += 0x9E3779B97F4A7C15ULL);
	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
	z ^= z >> 31;
	return ((double)(z >> 11) + 0.5) / 9007199254740992.0;
}

/* A lognormal draw of this mean (Box-Muller). */
static int lognormal(uint64_t *state, double mean, double sigma)
{
	double r = sqrt(-2 * log(uniform(state)));
	double z = r * cos(2 * M_PI * uniform(state));
	int v = (int)exp(log(mean) - sigma * sigma / 2 + sigma * z);
	return v > 0 ? v : 1;
}

/*
 * An Azure-shaped trace (TIMESTAMP,ContextTokens,GeneratedTokens) of n
 * requests at 2 a second: the gaps hyperexponential, a tenth of them
 * exponential of twice the mean gap and the rest of (1 - 0.2) / 0.9 = 0.889
 * of it, so their squared cv is 2 (0.1 x 2^2 + 0.9 x 0.889^2) - 1 = 1.22
 * (the conversation trace's is 1.2); prompts lognormal of mean 1,150 tokens
 * (sigma 0.64: the conversation trace's p99 near 4,100), answers of mean 230
 * (sigma 0.8).  Returns the gaps' squared cv as written.
 */
static double bursty_trace(const char *path, int n)
{
	FILE *f = fopen(path, "w");
	cr_assert_not_null(f, "%s", path);
	fprintf(f, "TIMESTAMP,ContextTokens,GeneratedTokens\n");
	uint64_t state = 1;
	double t = 0, sum = 0, sum2 = 0, mean_gap = 0.5;
	for (int i = 0; i < n; i++) {
		double scale = uniform(&state) < 0.1 ? 2.0 : 0.8 / 0.9;
		double gap = -log(uniform(&state)) * mean_gap * scale;
		t += gap;
		sum += gap, sum2 += gap * gap;
		int prompt = lognormal(&state, 1150, 0.64);
		int output = lognormal(&state, 230, 0.8);
		long long us = (long long)(t * 1e6);
		fprintf(f, "2023-11-16 18:%02lld:%02lld.%06lld0,%d,%d\n", us / 60000000,
			us / 1000000 % 60, us % 1000000, prompt, output);
	}
	fclose(f);
	double m = sum / n;
	return sum2 / n / (m * m) - 1;
}

/* The first cut, the answer and the probes of a search's output. */
static int search_output(const char *text, int *cut, int *probes)
{
	const char *c = strstr(text, "first cut (an estimate): workloads.chat.replicas=");
	*cut = c ? atoi(strchr(c, '=') + 1) : 0;
	*probes = 0;
	for (const char *l = text; l; l = strchr(l, '\n'), l = l ? l + 1 : NULL)
		*probes += !strncmp(l, "probe ", 6);
	const char *eq = strrchr(text, '=');
	cr_assert_not_null(eq, "%s", text);
	return atoi(eq + 1);
}

/* On bursty arrivals (20 and 40 requests/s of the trace above) the first
 * cut, 9 and 17 replicas on A100s under a 500 ms p99 TTFT, is about twice
 * the answer, 4 and 8: the gallop from it took seven probes and more.  The
 * search re-solves the first cut calibrated by each probe's simulated p99
 * TTFT (search_recut): the first probe's tail, at the idle floor, says "far
 * fewer" (a halving), the second's calibrated cut (3.85, 6.67) names the
 * boundary, and its neighbour closes the pair: three runs, the answer the
 * bisection's. */
Test(search_bracket, a_first_cut_off_by_several_is_recalibrated_by_the_probe)
{
	char trace[128], yaml[128];
	snprintf(trace, sizeof trace, "%s/bursty.csv", dir);
	snprintf(yaml, sizeof yaml, "%s/bursty.yaml", dir);
	double cv2 = bursty_trace(trace, 3000);
	cr_assert(cv2 > 1.1 && cv2 < 1.4, "the gaps' cv^2 %g, 1.22 expected", cv2);
	FILE *f = fopen(yaml, "w");
	cr_assert_not_null(f);
	fprintf(f, "name: bursty\n"
		   "pools:\n"
		   "  - {name: a100, nodes: 4, gpu: A100-80GB, gpus_per_node: 8}\n"
		   "workloads:\n"
		   "  - name: chat\n"
		   "    kind: inference\n"
		   "    model: llama-3-8b\n"
		   "    replicas: 1\n"
		   "    memory_fraction: 0.9\n"
		   "    requests: {trace: bursty.csv, format: azure}\n"
		   "    slo: {ttft: 500ms, percentile: 99}\n");
	fclose(f);
	static const double speedups[] = {10, 20};
	for (size_t i = 0; i < sizeof speedups / sizeof speedups[0]; i++) {
		int answers[2], cut[2], probes[2];
		for (int k = 0; k < 2; k++) {
			char cmd[2048];
			snprintf(cmd, sizeof cmd,
				 "bin/gpuplan search %s --db %s/b%zu%d.db --min --vary "
				 "workloads.chat.replicas --lo 1 --hi 64 --until 'ttft_p99_s <= "
				 "0.5' --set workloads.chat.requests.speedup=%g%s",
				 yaml, dir, i, k, speedups[i], k ? " --no-first-cut" : "");
			cr_assert_eq(capture(cmd, out, sizeof out), 0, "%s\n%s", cmd, out);
			answers[k] = search_output(out, &cut[k], &probes[k]);
		}
		cr_expect_eq(answers[0], answers[1], "x%g: first cut %d, bisection %d", speedups[i],
			     answers[0], answers[1]);
		cr_expect_geq(cut[0] - answers[0], 3, "x%g: the first cut %d is off, answer %d",
			      speedups[i], cut[0], answers[0]);
		cr_expect_leq(probes[0], 3, "x%g: %d probes (first cut %d, answer %d)", speedups[i],
			      probes[0], cut[0], answers[0]);
	}
}

/*
 * A trace of n requests (prompts of 600 tokens, answers of 40) two seconds
 * apart, but for a burst of `burst` requests at one instant from request
 * `at` on: the burst's tail waits behind the burst's prefills, past the
 * 150 ms bound, and the rest are served within it.
 */
static void burst_trace(const char *path, int n, int at, int burst)
{
	FILE *f = fopen(path, "w");
	cr_assert_not_null(f, "%s", path);
	fprintf(f, "TIMESTAMP,ContextTokens,GeneratedTokens\n");
	long long us = 0;
	for (int i = 0; i < n; i++) {
		if (i <= at || i > at + burst)
			us += 2000000;
		fprintf(f, "2023-11-16 %02lld:%02lld:%02lld.%06lld0,600,40\n", 10 + us / 3600000000,
			us / 60000000 % 60, us / 1000000 % 60, us % 1000000);
	}
	fclose(f);
}

/* The full run and the run with the stop rule of 'ttft_p99_s <= 0.15' on
 * a burst trace of 2000 requests: the same verdict (*fails), whether the
 * rule stopped the run, and the requests it completed (*done). */
static void stop_verdicts(int at, int burst, bool *fails, bool *stopped, double *done)
{
	char trace[128], yaml[128];
	snprintf(trace, sizeof trace, "%s/burst.csv", dir);
	snprintf(yaml, sizeof yaml, "%s/burst.yaml", dir);
	burst_trace(trace, 2000, at, burst);
	FILE *f = fopen(yaml, "w");
	cr_assert_not_null(f);
	fprintf(f, "name: burst\n"
		   "pools:\n"
		   "  - {name: h100, nodes: 1, gpu: H100-80GB, gpus_per_node: 1}\n"
		   "workloads:\n"
		   "  - name: chat\n"
		   "    kind: inference\n"
		   "    model: llama-3-8b\n"
		   "    replicas: 1\n"
		   "    memory_fraction: 0.9\n"
		   "    requests: {trace: burst.csv, format: azure}\n");
	fclose(f);
	struct scenario *sc = NULL;
	struct gp_err err GP_ERR_SCOPE = {0};
	cr_assert_eq(scenario_load(yaml, NULL, 0, &sc, &err), GP_OK, "%s", err.msg);
	struct results full, part;
	results_init(&full);
	results_init(&part);
	cr_assert_eq(run_simulate(sc, &full, &err), GP_OK, "%s", err.msg);
	struct infer_stop rule = {"all", INFER_TTFT, 99.0 / 100, 0.15};
	cr_assert_eq(run_simulate_stop(sc, &part, &rule, NULL, stopped, &err), GP_OK, "%s",
		     err.msg);
	double whole = results_or(&full, "all", METRIC_TTFT_P99_S, NAN);
	double so_far = results_or(&part, "all", METRIC_TTFT_P99_S, NAN);
	*fails = whole > 0.15;
	cr_expect_eq(so_far > 0.15, *fails, "p99 %g in the whole run, %g in the stopped one", whole,
		     so_far);
	cr_expect_str_eq(part.status, *stopped ? "stopped" : "ok");
	*done = results_or(&part, "all", METRIC_REQUESTS_COMPLETED, NAN);
	if (!*stopped) /* a run the rule never stops is the run, figure for figure */
		cr_expect_eq(full.n_metrics, part.n_metrics);
	if (!*stopped && full.n_metrics == part.n_metrics)
		for (size_t i = 0; i < full.n_metrics; i++)
			cr_expect(full.metrics[i].value == part.metrics[i].value ||
					  (isnan(full.metrics[i].value) &&
					   isnan(part.metrics[i].value)),
				  "%s.%s: %g, %g", full.metrics[i].scope, full.metrics[i].name,
				  full.metrics[i].value, part.metrics[i].value);
	results_free(&full);
	results_free(&part);
	scenario_free(sc);
}

/* The stop rule (infer.h, search.c's stop_rule): a probe stops once more
 * requests are late than the p99 allows (2000 - floor(0.99 x 1999) = 22 of
 * 2000), so a stopped probe fails as the whole run does, wherever in the
 * stream the late requests come. */
Test(search_bracket, a_probe_that_fails_late_in_the_stream_stops_there_with_the_full_verdict)
{
	bool fails, stopped;
	double done;
	stop_verdicts(1900, 60, &fails, &stopped, &done);
	cr_expect(fails && stopped, "fails %d, stopped %d", fails, stopped);
	cr_expect(done > 1900 && done < 1960, "stopped after %g requests", done);
}

Test(search_bracket, a_probe_that_fails_early_in_the_stream_stops_early_with_the_full_verdict)
{
	bool fails, stopped;
	double done;
	stop_verdicts(10, 60, &fails, &stopped, &done);
	cr_expect(fails && stopped, "fails %d, stopped %d", fails, stopped);
	cr_expect(done < 100, "stopped after %g requests", done);
}

Test(search_bracket, a_probe_that_holds_runs_whole_with_the_runs_figures)
{
	bool fails, stopped;
	double done;
	stop_verdicts(1000, 5, &fails, &stopped, &done);
	cr_expect(!fails && !stopped, "fails %d, stopped %d", fails, stopped);
	cr_expect_eq(done, 2000);
}

/* A service under a weekly calendar is sized for its busiest hour
 * (search_service's rate): a day at 0.5/s with a launch hour at 60/s misses
 * a p99 TTFT in that hour, which its mean rate (about 3/s) hides; the first
 * cut had no answer for a calendar at all, so advise's sizing skipped it and
 * nothing it ranked met.  The hour's rate times its weekday's factor. */
Test(search_bracket, a_calendar_service_is_sized_for_its_busiest_hour)
{
	char yaml[512];
	snprintf(yaml, sizeof yaml, "%s/day.yaml", dir);
	FILE *f = fopen(yaml, "w");
	cr_assert_not_null(f);
	fprintf(f, "name: day\n"
		   "pools:\n"
		   "  - {name: h100, nodes: 1, gpu: H100-80GB, gpus_per_node: 4}\n"
		   "workloads:\n"
		   "  - name: chat\n"
		   "    kind: inference\n"
		   "    model: llama-3-8b\n"
		   "    replicas: 1\n"
		   "    requests: {process: poisson, rate_by_hour: [0.5, 0.5, 0.5, 0.5, 0.5, 0.5, "
		   "0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 60, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, "
		   "0.5, 0.5], by_weekday: [1, 1, 1, 1, 1.5, 0.5, 0.5], count: 1000, "
		   "prompt_tokens: 1000, output_tokens: 200}\n"
		   "    slo: {ttft: 2s, percentile: 99}\n");
	fclose(f);
	struct scenario *sc = NULL;
	struct gp_err err GP_ERR_SCOPE = {0};
	cr_assert_eq(scenario_load(yaml, NULL, 0, &sc, &err), GP_OK, "%s", err.msg);
	struct firstcut_service s;
	cr_assert(search_service(sc, &sc->workloads[0], NULL, 2, 0, 99, &s));
	cr_expect_float_eq(s.rate, 90, 1e-9, "60/s on Fridays' 1.5: %g", s.rate);
	scenario_free(sc);
}
