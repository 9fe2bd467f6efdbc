/*
 * test_import_history.c - `gpuplan import --history`: a hand-made DIR
 * (tests/fixtures/history-small/make.py derives every figure asserted here),
 * the duration fits on samples of known distributions, and the located
 * errors that leave nothing written.
 *
 * Label names checked against their sources: jobset.sigs.k8s.io/jobset-name
 * (JobSet's JobSetNameKey), training.kubeflow.org/job-name (Kubeflow's
 * training operator), ray.io/originated-from-crd and -cr-name (KubeRay
 * ray-operator/controllers/ray/utils/constant.go), notebook-name (Kubeflow's
 * notebook controller), component=singleuser-server (Zero to JupyterHub);
 * kube-state-metrics writes them sanitised as label_<key>.
 */
#include <criterion/criterion.h>

#include "gpuplan/import.h"

#include "scratch.h"

#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define SMALL "tests/fixtures/history-small"

static struct import_result res;

static void build(const char *dir_)
{
	struct import_options o = {.history = dir_, .pods_csv = "twin.pods.csv"};
	struct gp_err err GP_ERR_SCOPE = {0};
	cr_assert_eq(import_history_build(&o, &res, &err), GP_OK, "%s", err.msg);
}

static void teardown(void) { import_result_free(&res); }

/* The text of workload name's block (up to the next "  - name:" or end). */
static char *block(const char *name)
{
	char key[128];
	snprintf(key, sizeof key, "  - name: %s\n", name);
	const char *at = strstr(res.yaml, key);
	cr_assert_not_null(at, "no workload %s in\n%s", name, res.yaml);
	const char *end = strstr(at + 1, "\n  - name: ");
	size_t n = end ? (size_t)(end - at) : strlen(at);
	char *b = malloc(n + 1);
	memcpy(b, at, n);
	b[n] = '\0';
	return b;
}

static void expect_in(const char *text, const char *want)
{
	cr_expect_not_null(strstr(text, want), "expected '%s' in\n%s", want, text);
}

TestSuite(import_history, .fini = teardown);

Test(import_history, a_jobs_arrivals_are_a_rate_by_hour_and_censored_runs_are_left_out_of_its_fit)
{
	build(SMALL);
	char *b = block("finetune");
	/* created 01:00, 05:00, 09:00 of a one-day period: 1/h in those hours */
	expect_in(b, "rate_by_hour: [0, 1, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, "
		     "0, 0, 0, 0]}");
	expect_in(b, "learned from 3 arrivals");
	/* the 2h and 4h runs; the one from 23:00 the day before and the one
	 * running at TO are censored */
	expect_in(b, "(2 censored left out: 1 running at FROM, 1 at TO)");
	expect_in(b, "duration: {dist: empirical, values: [7200s, 14400s]}");
	/* GPUs 4, 4, 4, 2: the median is 4; cpu 8, 8, 8, 4: 8 */
	expect_in(b, "gpus: 4\n    cpu: 8\n    memory: 65536MiB\n");
	/* DCGM: engine 0.5 and 0.7, SM 0.3 and 0.42, FB 30000 and 40000 MiB */
	expect_in(b, "gpu_busy: 0.6 ");
	expect_in(b, "sm_share: 0.6 ");
	expect_in(b, "vram: 35000MiB");
	expect_in(b, "gpu_spec: [H100-80GB]");
	free(b);
}

Test(import_history, workloads_are_grouped_by_what_created_them)
{
	build(SMALL);
	char *b = block("nightly-eval"); /* a Job of CronJob nightly-eval */
	expect_in(res.yaml, "# CronJob \"research\"/\"nightly-eval\": 2 pods, 2 instances");
	expect_in(b, "arrival: {schedule: \"0 22 * * *\"}");
	free(b);
	b = block("pretrain"); /* JobSet pretrain-7k2xq: two pods, one instance */
	expect_in(res.yaml, "# JobSet \"research\"/\"pretrain\": 2 pods, 1 instances");
	expect_in(b, "pods: 2 ");
	expect_in(b, "gang: true");
	free(b);
	b = block("alice-nb"); /* a Kubeflow Notebook: a service, 08:00 to 18:00 */
	expect_in(b, "kind: service");
	expect_in(b, "values: [36000s]");
	free(b);
	b = block("jupyterhub"); /* a JupyterHub server still running at TO */
	expect_in(b, "kind: service");
	expect_in(b, "duration: !placeholder 24h   # no instance both started and finished");
	free(b);
	b = block("triton"); /* a Deployment by its ReplicaSet less the hash, on MIG */
	expect_in(res.yaml, "# Deployment \"serving\"/\"triton\": 1 pods");
	expect_in(b, "count: 1 ");
	expect_in(b, "gpus: {mig: 3g.40gb}");
	free(b);
	/* kube-system/coredns asks for no GPU */
	cr_expect_null(strstr(res.yaml, "coredns"));
}

Test(import_history, a_vllm_deployment_is_an_inference_workload_with_its_traffic_by_hour)
{
	build(SMALL);
	char *b = block("vllm-llama");
	expect_in(b, "kind: inference");
	expect_in(b, "model: llama-3-8b ");
	expect_in(b, "replicas: 1 ");
	/* 3600 requests an hour, 500 prompt and 100 generated tokens each */
	expect_in(b, "rate_by_hour: [1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, "
		     "1, 1, 1, 1], prompt_tokens: 500, output_tokens: 100}");
	free(b);
}

Test(import_history, hostile_names_are_quoted_in_yaml_comments_and_csv)
{
	build(SMALL);
	expect_in(res.yaml, "# Pod \"evil\\\"ns\\x0a- name: x\"/\"job#1: [x]\"");
	expect_in(res.yaml, "  - name: job-1-x\n");
	expect_in(res.csv, "job-1-x,\"evil\"\"ns\n- name: x\",job#1: [x],l4-1,7200,");
	/* a node's name and an owner's kind, from labels too */
	expect_in(res.yaml, "  # nodes: \"cpu-1\\x0a- name: z\"\n");
	expect_in(res.yaml, "  # \"Evil\\\"Kind\\x0a- name: y\" \"research\"/\"odd\": 1 pods");
	/* every comment line is one line: no name broke out of it */
	for (const char *l = res.yaml; (l = strstr(l, "\n- name: ")); l++)
		cr_expect(0, "a name broke out of its comment: %.40s", l);
}

Test(import_history, the_observed_pods_are_sorted_by_creation_with_their_phases)
{
	build(SMALL);
	expect_in(res.csv, "workload,namespace,pod,node,created_s,scheduled_s,finished_s,gpus,"
			   "cpu_milli,memory_bytes,phase\n"
			   "vllm-llama,serving,vllm-llama-5f7c9d8b6a-abcde,h100-1,-259200,");
	expect_in(res.csv, "alice-nb,kubeflow-user,alice-nb-0,l4-1,28800,28770,64800,1,"
			   "2000,8589934592,Deleted\n");
	expect_in(res.csv, "jupyterhub,jhub,jupyter-bob,l4-1,36000,35970,,1,2000,8589934592,"
			   "Running\n");
	/* yesterday's nightly-eval ended before FROM: not a pod of the period */
	cr_expect_null(strstr(res.csv, "nightly-eval-29557920"));
	cr_expect_eq(res.n_censored, 6); /* finetune 2, nightly-eval 1, jupyterhub 1, services 2 */
}

/* --- fits ------------------------------------------------------------------------- */

static double *draw(int kind, double a, double b, size_t n)
{
	gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
	gsl_rng_set(rng, 42);
	double *x = malloc(n * sizeof *x);
	for (size_t i = 0; i < n; i++)
		x[i] = kind == 0 ? gsl_ran_lognormal(rng, a, b) : gsl_ran_gamma(rng, a, b);
	gsl_rng_free(rng);
	return x;
}

Test(import_history, lognormal_samples_are_fitted_as_lognormal_within_sampling_error)
{
	size_t n = 2000;
	double *x = draw(0, log(3600.0 * 6) - 0.31 * 0.31 / 2, 0.31, n); /* mean 6h, sigma 0.31 */
	struct import_fit f, ln, ga;
	import_fit_choose(x, n, &f, &ln, &ga);
	cr_expect_eq(f.kind, IMPORT_FIT_LOGNORMAL, "lognormal p=%g gamma p=%g", ln.p, ga.p);
	/* sd of the mean: 6h x sqrt(e^0.31^2 - 1) / sqrt(2000) = 0.7% */
	cr_expect(fabs(f.mean / 21600 - 1) < 0.03, "mean %g", f.mean);
	cr_expect(fabs(f.sigma - 0.31) < 0.02, "sigma %g", f.sigma); /* sd 0.31/sqrt(4000) */
	cr_expect(f.p > 0.05);
	free(x);
}

Test(import_history, gamma_samples_are_fitted_as_gamma_within_sampling_error)
{
	size_t n = 2000;
	double *x = draw(1, 0.7, 3600, n); /* shape 0.7, mean 2520 s */
	struct import_fit f, ln, ga;
	import_fit_choose(x, n, &f, &ln, &ga);
	cr_expect_eq(f.kind, IMPORT_FIT_GAMMA, "lognormal p=%g gamma p=%g", ln.p, ga.p);
	cr_expect(fabs(f.mean / 2520 - 1) < 0.08, "mean %g", f.mean); /* sd 2.7% */
	cr_expect(fabs(f.shape / 0.7 - 1) < 0.1, "shape %g", f.shape);
	free(x);
}

Test(import_history, runs_cut_off_at_the_end_are_lower_bounds_not_short_runs)
{
	size_t n = 2000, k = 0, m = 0;
	double *x = draw(0, log(3600.0 * 6) - 0.5 * 0.5 / 2, 0.5, n); /* mean 6h, sigma 0.5 */
	double *done = malloc(n * sizeof *done), *cut = malloc(n * sizeof *cut);
	for (size_t i = 0; i < n; i++) /* a run past 8 h is still going at TO */
		if (x[i] > 8 * 3600.0)
			cut[m++] = 8 * 3600.0;
		else
			done[k++] = x[i];
	cr_assert(m > 200, "%zu cut", m); /* about 20% */
	struct import_fit with, without;
	double *copy = malloc(k * sizeof *copy);
	memcpy(copy, done, k * sizeof *copy);
	import_fit_choose(copy, k, &without, NULL, NULL);
	import_fit_choose_censored(done, k, cut, m, &with, NULL, NULL);
	/* leaving them out learns short runs; as lower bounds, the model's mean */
	cr_expect(without.mean < 0.9 * 21600, "without: %g", without.mean);
	cr_expect(fabs(with.mean / 21600 - 1) < 0.04, "with: %g (%d)", with.mean, (int)with.kind);
	cr_expect_eq(with.censored, m);
	free(x), free(done), free(cut), free(copy);
}

Test(import_history, a_sample_neither_fits_is_kept_as_its_quantiles)
{
	size_t n = 1000;
	double *x = malloc(n * sizeof *x);
	for (size_t i = 0; i < n; i++) /* two runs lengths, 10 minutes and 5 hours */
		x[i] = i % 2 ? 600 + (double)(i % 7) : 18000 + (double)(i % 11);
	struct import_fit f;
	import_fit_choose(x, n, &f, NULL, NULL);
	cr_expect_eq(f.kind, IMPORT_FIT_EMPIRICAL);
	double q[100];
	cr_expect_eq(import_fit_quantiles(x, n, q, 100), 100);
	cr_expect(q[0] >= 600 && q[0] < 610 && q[99] >= 18000, "%g %g", q[0], q[99]);
	free(x);
}

Test(import_history, the_ks_p_value_follows_the_kolmogorov_distribution)
{
	/* the 5% critical value of D for large n is 1.358 / sqrt(n) */
	cr_expect(fabs(import_ks_pvalue(1.358 / sqrt(10000.0), 10000) - 0.05) < 0.003);
	cr_expect(import_ks_pvalue(0.5, 100) < 1e-6);
	cr_expect_eq(import_ks_pvalue(0, 10), 1);
}

/* --- errors ------------------------------------------------------------------------ */

static void copy_small(void)
{
	char cmd[256];
	scratch_make();
	snprintf(cmd, sizeof cmd, "cp -r " SMALL " %s/h", dir);
	cr_assert_eq(system(cmd), 0);
}

Test(import_history, malformed_json_is_a_located_error_and_nothing_is_written)
{
	char cmd[512], out[4096], path[256];
	copy_small();
	snprintf(path, sizeof path, "%s/h/pod_started.json", dir);
	FILE *f = fopen(path, "w");
	fputs("{\"status\":\"success\",\"data\":{\"resultType\":\"vector\",\"result\":[\n"
	      "{\"metric\":{\"namespace\":\"a\",\"pod\":\"b\"},\"value\":[1,\"x1\"]}]}}\n",
	      f);
	fclose(f);
	snprintf(cmd, sizeof cmd, "bin/gpuplan import --history %s/h -o %s/twin.yaml", dir, dir);
	cr_expect_eq(capture(cmd, out, sizeof out), 2);
	expect_in(out, "pod_started.json:2:50: error: .data.result[0].value[1]: expected a number, "
		       "got 'x1'");
	snprintf(path, sizeof path, "%s/twin.yaml", dir);
	struct stat st;
	cr_expect_neq(stat(path, &st), 0, "twin.yaml was written");
	snprintf(path, sizeof path, "%s/twin.pods.csv", dir);
	cr_expect_neq(stat(path, &st), 0, "twin.pods.csv was written");
	scratch_remove();
}

Test(import_history, a_missing_required_file_is_named_and_nothing_is_written)
{
	char cmd[512], out[4096], path[256];
	copy_small();
	snprintf(cmd, sizeof cmd, "rm %s/h/pod_owner.json", dir);
	cr_assert_eq(system(cmd), 0);
	snprintf(cmd, sizeof cmd, "bin/gpuplan import --history %s/h -o %s/twin.yaml", dir, dir);
	cr_expect_eq(capture(cmd, out, sizeof out), 2);
	expect_in(out, "/h/pod_owner.json: error: cannot read: No such file or directory; expected "
		       "the file scripts/export-history.sh writes (required)");
	snprintf(path, sizeof path, "%s/twin.yaml", dir);
	struct stat st;
	cr_expect_neq(stat(path, &st), 0);
	scratch_remove();
}

/* A folder that is not the export's: its meta.json is named with what was
 * expected, as a missing query file is. */
Test(import_history, a_folder_without_meta_json_says_what_was_expected)
{
	char cmd[512], out[4096];
	scratch_make();
	snprintf(cmd, sizeof cmd, "bin/gpuplan import --history %s -o %s/twin.yaml", dir, dir);
	cr_expect_eq(capture(cmd, out, sizeof out), 2);
	expect_in(out, "/meta.json: error: cannot read: No such file or directory; expected the "
		       "folder scripts/export-history.sh writes, with its meta.json");
	scratch_remove();
}

Test(import_history, a_failed_query_and_a_bad_label_are_located)
{
	char cmd[512], out[4096], path[256];
	copy_small();
	snprintf(path, sizeof path, "%s/h/pod_phase.json", dir);
	FILE *f = fopen(path, "w");
	fputs("{\"status\":\"error\",\"errorType\":\"timeout\",\"error\":\"query timed out\"}\n",
	      f);
	fclose(f);
	snprintf(cmd, sizeof cmd, "bin/gpuplan import --history %s/h -o %s/twin.yaml", dir, dir);
	cr_expect_eq(capture(cmd, out, sizeof out), 2);
	expect_in(out, "pod_phase.json:1:2: error: .status: the query failed ('error')");
	f = fopen(path, "w");
	fputs("{\"status\":\"success\",\"data\":{\"resultType\":\"vector\",\"result\":[\n"
	      "{\"metric\":{\"namespace\":\"a\",\"pod\":\"b\",\"phase\":\"Done\"},"
	      "\"value\":[1,\"1\"]}]}}\n",
	      f);
	fclose(f);
	cr_expect_eq(capture(cmd, out, sizeof out), 2);
	expect_in(out,
		  "pod_phase.json:2:46: error: .data.result[0].metric.phase: expected Pending, "
		  "Running, Succeeded, Failed or Unknown");
	scratch_remove();
}

/* --- one thread or two ------------------------------------------------------------- */

/* What an import of DIR/h printed and wrote with GPUPLAN_THREADS=threads. */
struct import_run {
	int rc;
	char out[4096];
	char *yaml, *csv; /* NULL: not written */
	size_t n_yaml, n_csv;
};

static void import_with(const char *threads, struct import_run *r)
{
	char cmd[512], path[256];
	snprintf(cmd, sizeof cmd,
		 "GPUPLAN_THREADS=%s bin/gpuplan import --history %s/h -o %s/twin.yaml", threads,
		 dir, dir);
	r->rc = capture(cmd, r->out, sizeof r->out);
	snprintf(path, sizeof path, "%s/twin.yaml", dir);
	r->yaml = scratch_slurp(path, &r->n_yaml);
	remove(path);
	snprintf(path, sizeof path, "%s/twin.pods.csv", dir);
	r->csv = scratch_slurp(path, &r->n_csv);
	remove(path);
}

/* Expects one thread and two to print and write the same bytes; the second's
 * output is left in out. */
static void expect_same_either_way(char *out, size_t size)
{
	struct import_run one, two;
	import_with("1", &one);
	import_with("2", &two);
	cr_expect_eq(one.rc, two.rc);
	cr_expect_str_eq(one.out, two.out);
	cr_expect((one.yaml == NULL) == (two.yaml == NULL));
	cr_expect(!one.yaml ||
			  (one.n_yaml == two.n_yaml && !memcmp(one.yaml, two.yaml, one.n_yaml)),
		  "the twins differ");
	cr_expect(!one.csv || (one.n_csv == two.n_csv && !memcmp(one.csv, two.csv, one.n_csv)),
		  "the pods' CSVs differ");
	snprintf(out, size, "%s", two.out);
	free(one.yaml), free(one.csv), free(two.yaml), free(two.csv);
}

/* DIR/h/file: n items (many batches of the parser thread's ring), item i for
 * a pod nobody requested GPUs for, save the items at bad_value (a ratio of 7
 * for a pod of the DIR) and at bad_syntax (a comma too many); -1: none. */
static void write_dcgm(const char *file, int n, int bad_value, int bad_syntax)
{
	char path[256];
	snprintf(path, sizeof path, "%s/h/%s", dir, file);
	FILE *f = fopen(path, "w");
	cr_assert_not_null(f);
	fputs("{\"status\":\"success\",\"data\":{\"resultType\":\"vector\",\"result\":[\n", f);
	for (int i = 0; i < n; i++) {
		if (i == bad_value)
			fputs("{\"metric\":{\"namespace\":\"research\",\"pod\":\"finetune-b2c4d-xk2p9\"},"
			      "\"value\":[1793664000,\"7\"]}",
			      f);
		else
			fprintf(f,
				"{\"metric\":{\"namespace\":\"other\",\"pod\":\"p-%d\","
				"\"Hostname\":\"n\"},\"value\":[1793664000,\"0.5\"]}",
				i);
		fputs(i + 1 < n ? (i + 1 == bad_syntax ? ",,\n" : ",\n") : "\n", f);
	}
	fputs("]}}\n", f);
	fclose(f);
}

/* The vLLM pod's requests by hour: one series of n hourly points (more than
 * a batch holds), from the DIR's FROM on. */
static void write_matrix(const char *file, int n)
{
	char path[256];
	snprintf(path, sizeof path, "%s/h/%s", dir, file);
	FILE *f = fopen(path, "w");
	cr_assert_not_null(f);
	fputs("{\"status\":\"success\",\"data\":{\"resultType\":\"matrix\",\"result\":[\n"
	      "{\"metric\":{\"namespace\":\"serving\",\"pod\":\"vllm-llama-5f7c9d8b6a-abcde\"},"
	      "\"values\":[",
	      f);
	for (int i = 0; i < n; i++)
		fprintf(f, "%s[%d,\"1\"]", i ? "," : "", 1793664000 + 3600 * i);
	fputs("]}]}}\n", f);
	fclose(f);
}

Test(import_history, the_parser_thread_changes_no_output_and_no_error)
{
	char out[4096], path[256];
	copy_small();
	write_dcgm("dcgm_sm.json", 6000, -1, -1);
	write_matrix("vllm_requests_hourly.json", 20000);
	expect_same_either_way(out, sizeof out);
	expect_in(out, "wrote ");
	/* an error in the middle of a large file: the parser's, a callback's, the
	 * first of the two either way */
	write_dcgm("dcgm_sm.json", 6000, -1, 3000);
	expect_same_either_way(out, sizeof out);
	expect_in(out, "/h/dcgm_sm.json:3001:91: error: did not find expected node content");
	write_dcgm("dcgm_sm.json", 6000, 3000, -1);
	expect_same_either_way(out, sizeof out);
	expect_in(out, "/h/dcgm_sm.json:3002:85: error: .data.result[3000].value[1]: expected a "
		       "ratio from 0 to 1, got 7");
	write_dcgm("dcgm_sm.json", 6000, 3000, 3100);
	expect_same_either_way(out, sizeof out);
	expect_in(out, ".data.result[3000].value[1]: expected a ratio");
	write_dcgm("dcgm_sm.json", 6000, 3100, 3000);
	expect_same_either_way(out, sizeof out);
	expect_in(out, "/h/dcgm_sm.json:3001:91: error: did not find expected node content");
	/* and in a later file, the large one read whole before it */
	write_dcgm("dcgm_sm.json", 6000, -1, -1);
	snprintf(path, sizeof path, "%s/h/vllm_requests.json", dir);
	FILE *f = fopen(path, "w");
	fputs("{\"status\":\"success\",\"data\":{\"resultType\":\"vector\",\"result\":[", f);
	fclose(f);
	expect_same_either_way(out, sizeof out);
	expect_in(out, "/h/vllm_requests.json:2:1: error: did not find expected node content");
	scratch_remove();
}

/* --- the empirical duration -------------------------------------------------------- */

#include "gpuplan/arrivals.h"
#include "gpuplan/scenario.h"

Test(import_history, an_empirical_duration_draws_only_its_values_and_has_their_mean)
{
	char path[256];
	scratch_make();
	snprintf(path, sizeof path, "%s/emp.yaml", dir);
	FILE *f = fopen(path, "w");
	fputs("name: emp\npools:\n  - {name: a, nodes: 1, gpu: H100-80GB, gpus_per_node: 8}\n"
	      "workloads:\n  - name: w\n    arrival: {at: \"00:00\"}\n    gpus: 1\n"
	      "    duration: {dist: empirical, values: [600s, 1h, 5400]}\n",
	      f);
	fclose(f);
	struct scenario *sc;
	struct gp_err err GP_ERR_SCOPE = {0};
	cr_assert_eq(scenario_load(path, NULL, 0, &sc, &err), GP_OK, "%s", err.msg);
	const struct dist *d = &sc->workloads[0].duration;
	cr_expect_eq(d->kind, DIST_EMPIRICAL);
	cr_expect_eq(d->n_values, 3);
	cr_expect_float_eq(scenario_dist_mean(d), 3200, 1e-9); /* (600 + 3600 + 5400) / 3 */
	gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
	int seen[3] = {0};
	for (int i = 0; i < 300; i++) {
		double x = arrivals_dist_draw(d, rng);
		cr_assert(x == 600 || x == 3600 || x == 5400, "drew %g", x);
		seen[x == 600 ? 0 : x == 3600 ? 1 : 2]++;
	}
	cr_expect(seen[0] > 60 && seen[1] > 60 && seen[2] > 60); /* about 100 each */
	gsl_rng_free(rng);
	scenario_free(sc);
	/* a value that is no duration is located */
	f = fopen(path, "w");
	fputs("name: emp\npools:\n  - {name: a, nodes: 1, gpu: H100-80GB, gpus_per_node: 8}\n"
	      "workloads:\n  - name: w\n    arrival: {at: \"00:00\"}\n    gpus: 1\n"
	      "    duration: {dist: empirical, values: [600s, soon]}\n",
	      f);
	fclose(f);
	cr_expect_eq(scenario_load(path, NULL, 0, &sc, &err), GP_EINPUT);
	cr_expect(strstr(err.msg, "emp.yaml:8:48: error: invalid value 'soon'") != NULL, "%s",
		  err.msg);
	scratch_remove();
}

/* --- the twin loads, and learns the exported week's model ---------------------------------- */

#include "gpuplan/ytree.h"

static struct scenario *import_and_load(const char *from, char *path, size_t size)
{
	struct import_options o = {.history = from, .pods_csv = "twin.pods.csv"};
	struct gp_err err GP_ERR_SCOPE = {0};
	cr_assert_eq(import_history_build(&o, &res, &err), GP_OK, "%s", err.msg);
	scratch_make();
	snprintf(path, size, "%s/twin.yaml", dir);
	FILE *f = fopen(path, "w");
	fwrite(res.yaml, 1, res.yaml_len, f);
	fclose(f);
	char csv[256];
	snprintf(csv, sizeof csv, "%s/twin.pods.csv", dir);
	f = fopen(csv, "w");
	fwrite(res.csv, 1, res.csv_len, f);
	fclose(f);
	struct scenario *sc;
	cr_assert_eq(scenario_load(path, NULL, 0, &sc, &err), GP_OK, "%s\n%s", err.msg, res.yaml);
	return sc;
}

static const struct workload_spec *workload(const struct scenario *sc, const char *name)
{
	for (size_t i = 0; i < sc->n_workloads; i++)
		if (!strcmp(sc->workloads[i].name, name))
			return &sc->workloads[i];
	cr_assert_fail("no workload %s", name);
	return NULL;
}

Test(import_history, the_written_twin_loads_with_its_history_and_placeholders)
{
	char path[256];
	struct scenario *sc = import_and_load(SMALL, path, sizeof path);
	cr_expect(sc->history.on);
	cr_expect_eq(sc->history.to_epoch - sc->history.from_epoch, 86400);
	cr_expect_eq(sc->n_workloads, 9);
	/* the one duration not learned is the one placeholder */
	cr_assert_eq(sc->n_placeholders, 1);
	cr_expect_str_eq(sc->placeholders[0].path, "workloads[jupyterhub].duration");
	const struct workload_spec *w = workload(sc, "finetune");
	cr_expect(w->arrival.weekly.on);
	cr_expect_float_eq(w->arrival.weekly.by_hour[5] * 3600, 1, 1e-9);
	cr_expect_eq(w->duration.kind, DIST_EMPIRICAL);
	cr_expect_float_eq(scenario_dist_mean(&w->duration), 10800, 1e-9); /* (2h + 4h) / 2 */
	cr_expect_eq(workload(sc, "nightly-eval")->arrival.kind, ARRIVAL_SCHEDULE);
	cr_expect_eq(workload(sc, "vllm-llama")->kind, WORKLOAD_INFERENCE);
	scenario_free(sc);
	scratch_remove();
}

#define EXPORT "tests/fixtures/history"

/* A number of truth.json at a path of keys ("workloads", "finetune", ...). */
static double truth(const struct ytree *t, const char *const *keys, size_t n)
{
	const struct ynode *v = t->root;
	for (size_t i = 0; i < n && v; i++)
		v = ynode_get(v, keys[i]);
	cr_assert(v && v->kind == YNODE_SCALAR, "truth.json: no %s", keys[n - 1]);
	return strtod(v->value, NULL);
}
#define TRUTH(...)                                   \
	truth(t, (const char *const[]){__VA_ARGS__}, \
	      sizeof((const char *const[]){__VA_ARGS__}) / sizeof(const char *))

/* Expected arrivals of rate r (per second, by hour) over the period's hours. */
static double arrivals_over(const double *r, int64_t from, int64_t to)
{
	double n = 0;
	for (int64_t t = from; t < to; t += 3600)
		n += r[t % 86400 / 3600] * 3600;
	return n;
}

Test(import_history, the_exported_week_is_learned_within_sampling_error_of_its_model)
{
	char path[256];
	struct ytree *t;
	struct gp_err err GP_ERR_SCOPE = {0};
	cr_assert_eq(ytree_load(EXPORT "/truth.json", &t, &err), GP_OK, "%s", err.msg);
	struct scenario *sc = import_and_load(EXPORT, path, sizeof path);
	int64_t from = sc->history.from_epoch, to = sc->history.to_epoch;
	/* finetune: Poisson arrivals by hour, lognormal durations (mean 45m, sigma
	 * 0.5), 2 GPUs; tests/history/gen_week.py drew them */
	const struct workload_spec *w = workload(sc, "finetune");
	double learned = arrivals_over(w->arrival.weekly.by_hour, from, to);
	/* what the generator recorded, exactly */
	cr_expect_float_eq(learned, TRUTH("workloads", "finetune", "arrivals_in_period"), 1e-6);
	double model_rate[24];
	const struct ynode *mr = ynode_get(
		ynode_get(ynode_get(ynode_get(t->root, "workloads"), "finetune"), "model"),
		"rate_by_hour");
	cr_assert(mr && mr->n == 24);
	for (int h = 0; h < 24; h++)
		model_rate[h] = strtod(mr->items[h]->value, NULL) / 3600;
	double expected = arrivals_over(model_rate, from, to);
	/* 45 arrivals where the model expects 42: within 10% */
	cr_expect(fabs(learned / expected - 1) < 0.10, "learned %g, model %g", learned, expected);
	double mean = scenario_dist_mean(&w->duration);
	double observed = TRUTH("workloads", "finetune", "observed", "completed_duration_mean_s");
	/* the fit's mean is near the mean of the runs that completed in the period,
	 * raised a little by the 3 still going at TO (lower bounds) */
	cr_expect(mean > observed && mean / observed - 1 < 0.02, "learned %g, observed %g", mean,
		  observed);
	/* and within 3 standard errors of the model's (39 runs, cv 0.53 for sigma 0.5:
	 * 8.5% each); 10% is not within the sampling error of 39 runs */
	double model = TRUTH("workloads", "finetune", "model", "duration", "mean_s");
	cr_expect(fabs(mean / model - 1) < 3 * 0.085, "learned %g, model %g", mean, model);
	cr_expect_eq(w->gpus, (int32_t)TRUTH("workloads", "finetune", "model", "gpus"));
	cr_expect(fabs(w->gpu_busy / TRUTH("workloads", "finetune", "model", "gpu_busy") - 1) <
		  0.1);
	/* nightly-eval: its CronJob's schedule */
	w = workload(sc, "nightly-eval");
	cr_expect_eq(w->arrival.kind, ARRIVAL_SCHEDULE);
	cr_expect_str_eq(w->arrival.schedule, "0 22 * * *");
	cr_expect_eq(w->gpus, 4);
	/* chat: vLLM's traffic by hour within 10% of the model where it is 1/s or
	 * more (an hour of 3 requests a second holds ~11,000), token means within 5% */
	w = workload(sc, "chat");
	cr_assert_eq(w->kind, WORKLOAD_INFERENCE);
	cr_expect_str_eq(w->model->name, "llama-3-8b");
	const struct ynode *req = ynode_get(
		ynode_get(ynode_get(ynode_get(t->root, "workloads"), "chat"), "model"), "requests");
	const struct ynode *rr = ynode_get(req, "rate_by_hour_per_s");
	cr_assert(rr && rr->n == 24);
	for (int h = 0; h < 24; h++) {
		double m = strtod(rr->items[h]->value, NULL);
		double got = w->inference->requests.weekly.by_hour[h];
		if (m >= 1)
			cr_expect(fabs(got / m - 1) < 0.10, "hour %d: %g, model %g", h, got, m);
	}
	cr_expect(fabs(scenario_dist_mean(&w->inference->requests.prompt_tokens) / 600 - 1) < 0.05);
	cr_expect(fabs(scenario_dist_mean(&w->inference->requests.output_tokens) / 180 - 1) < 0.05);
	/* notebooks: each session its own arrival, though the pod's name comes back */
	const char *nb[] = {"alice", "bob", "carol"};
	for (size_t i = 0; i < 3; i++) {
		w = workload(sc, nb[i]);
		cr_expect_eq(w->kind, WORKLOAD_SERVICE);
		cr_expect_float_eq(arrivals_over(w->arrival.weekly.by_hour, from, to),
				   TRUTH("workloads", nb[i], "arrivals_in_period"), 1e-6, "%s",
				   nb[i]);
	}
	scenario_free(sc);
	ytree_free(t);
	scratch_remove();
}

/* The fields of a CSV line without quotes: f[0..n), pointers into line. */
static size_t fields(char *line, char **f, size_t max)
{
	size_t n = 0;
	f[n++] = line;
	for (char *c = line; *c && n < max; c++)
		if (*c == ',') {
			*c = '\0';
			f[n++] = c + 1;
		}
	return n;
}

static bool same_time(const char *a, const char *b)
{
	if (!*a || !*b)
		return !*a && !*b;
	return fabs(strtod(a, NULL) - strtod(b, NULL)) <= 1;
}

/* Every cell of twin.pods.csv against the generator's own record of the pods
 * (truth.pods.csv): the same rows, times within a second (kube-state-metrics'
 * values are the times themselves, whatever the sampling). */
Test(import_history, the_observed_pods_are_what_the_generator_recorded)
{
	size_t n;
	char *want = scratch_slurp(EXPORT "/truth.pods.csv", &n);
	cr_assert_not_null(want);
	build(EXPORT);
	char *got = strdup(res.csv);
	char *rows[256][11];
	size_t n_rows = 0, matched = 0;
	for (char *line = strtok(got, "\n"); line; line = strtok(NULL, "\n"))
		if (line[0] != '#' && strncmp(line, "workload,", 9) && n_rows < 256)
			cr_assert_eq(fields(line, rows[n_rows++], 11), 11, "%s", line);
	size_t n_want = 0;
	for (char *line = strtok(want, "\n"); line; line = strtok(NULL, "\n")) {
		if (line[0] == '#' || !strncmp(line, "workload,", 9))
			continue;
		char *w[11];
		cr_assert_eq(fields(line, w, 11), 11);
		n_want++;
		for (size_t r = 0; r < n_rows; r++) {
			char **g = rows[r];
			if (strcmp(g[2], w[2]) || !same_time(g[4], w[4]))
				continue;
			matched++;
			for (int k = 0; k < 11; k++)
				cr_expect(k == 4 || k == 5 || k == 6 ? same_time(g[k], w[k])
								     : !strcmp(g[k], w[k]),
					  "pod %s column %d: '%s', the generator's '%s'", w[2], k,
					  g[k], w[k]);
		}
	}
	cr_expect_eq(matched, n_want);
	cr_expect_eq(n_rows, n_want);
	free(got);
	free(want);
}

/* --- two weeks: the rate by weekday ----------------------------------------------------- */

static void write_json(const char *folder, const char *file, const char *body)
{
	char path[512];
	snprintf(path, sizeof path, "%s/%s", folder, file);
	FILE *f = fopen(path, "w");
	cr_assert_not_null(f, "%s", path);
	fprintf(f,
		"{\"status\":\"success\",\"data\":{\"resultType\":\"vector\",\"result\":[%s]}}\n",
		body);
	fclose(f);
}

/* Sixteen one-hour Jobs of "train" at 10:00 over two weeks from Monday
 * 2026-11-02: four each Monday, one each Tuesday to Friday, none at the
 * weekend.  16 in 14 days is 1.142857 a day; Monday's 4 a day is 3.5 times
 * that, Tuesday's 1 is 0.875 times. */
Test(import_history, two_weeks_learn_a_factor_by_weekday)
{
	scratch_make();
	char h[128];
	snprintf(h, sizeof h, "%s/h", dir);
	cr_assert_eq(mkdir(h, 0755), 0);
	const long long from = 1793577600, to = from + 14 * 86400;
	static const int per_day[7] = {4, 1, 1, 1, 1, 0, 0};
	char *times[6] = {0};
	size_t lens[6] = {0};
	FILE *f[6];
	for (int k = 0; k < 6; k++)
		f[k] = open_memstream(&times[k], &lens[k]);
	char *own = NULL, *info = NULL, *req = NULL, *phase = NULL;
	size_t lo = 0, li = 0, lr = 0, lp = 0;
	FILE *fo = open_memstream(&own, &lo), *fi = open_memstream(&info, &li),
	     *fr = open_memstream(&req, &lr), *fp = open_memstream(&phase, &lp);
	int n = 0;
	for (int day = 0; day < 14; day++)
		for (int j = 0; j < per_day[day % 7]; j++, n++) {
			long long c = from + day * 86400 + 10 * 3600, e = c + 3600;
			char m[160];
			snprintf(m, sizeof m,
				 "{\"metric\":{\"namespace\":\"ml\",\"pod\":\"train-%d-bcdfg\"", n);
			long long v[6] = {c, c, c, e, c, e}; /* created ... completed, seen */
			for (int k = 0; k < 6; k++)
				fprintf(f[k], "%s%s},\"value\":[%lld,\"%lld\"]}", n ? "," : "", m,
					to, v[k]);
			fprintf(fo,
				"%s%s,\"owner_kind\":\"Job\",\"owner_name\":\"train-%d\"},\"value\":[1,"
				"\"1\"]}",
				n ? "," : "", m, n);
			fprintf(fi, "%s%s,\"node\":\"n1\"},\"value\":[1,\"1\"]}", n ? "," : "", m);
			fprintf(fr,
				"%s%s,\"container\":\"c\",\"resource\":\"nvidia_com_gpu\"},\"value\":[1,"
				"\"1\"]}",
				n ? "," : "", m);
			fprintf(fp, "%s%s,\"phase\":\"Succeeded\"},\"value\":[1,\"1\"]}",
				n ? "," : "", m);
		}
	static const char *const names[6] = {"pod_created.json",    "pod_scheduled.json",
					     "pod_started.json",    "pod_completed.json",
					     "pod_first_seen.json", "pod_last_seen.json"};
	for (int k = 0; k < 6; k++) {
		fclose(f[k]);
		write_json(h, names[k], times[k]);
		free(times[k]);
	}
	fclose(fo), fclose(fi), fclose(fr), fclose(fp);
	write_json(h, "pod_owner.json", own);
	write_json(h, "pod_info.json", info);
	write_json(h, "pod_requests.json", req);
	write_json(h, "pod_limits.json", req);
	write_json(h, "pod_phase.json", phase);
	free(own), free(info), free(req), free(phase);
	write_json(h, "node_labels.json",
		   "{\"metric\":{\"node\":\"n1\",\"label_nvidia_com_gpu_product\":\"NVIDIA-L4\"},"
		   "\"value\":[1,\"1\"]}");
	write_json(
		h, "node_allocatable.json",
		"{\"metric\":{\"node\":\"n1\",\"resource\":\"nvidia_com_gpu\"},\"value\":[1,\"4\"]},"
		"{\"metric\":{\"node\":\"n1\",\"resource\":\"cpu\"},\"value\":[1,\"8\"]}");
	char meta[512];
	snprintf(meta, sizeof meta, "%s/meta.json", h);
	FILE *m = fopen(meta, "w");
	fputs("{\"format\":\"gpuplan-history/1\",\"from\":\"2026-11-02T00:00:00Z\","
	      "\"to\":\"2026-11-16T00:00:00Z\"}\n",
	      m);
	fclose(m);
	build(h);
	char *b = block("train");
	expect_in(b, "learned from 16 arrivals");
	expect_in(b, "rate_by_hour: [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1.143, 0, 0, 0, 0, 0, 0, 0, 0, "
		     "0, 0, 0, 0, 0], by_weekday: [3.5, 0.875, 0.875, 0.875, 0.875, 0, 0]}");
	expect_in(b, "values: [3600s");
	free(b);
	/* and it loads: the weekday factors shape the week's rate */
	char path[256];
	snprintf(path, sizeof path, "%s/twin.yaml", dir);
	FILE *y = fopen(path, "w");
	fwrite(res.yaml, 1, res.yaml_len, y);
	fclose(y);
	struct scenario *sc;
	struct gp_err err GP_ERR_SCOPE = {0};
	cr_assert_eq(scenario_load(path, NULL, 0, &sc, &err), GP_OK, "%s", err.msg);
	cr_expect_float_eq(sc->workloads[0].arrival.weekly.by_weekday[0], 3.5, 1e-9);
	scenario_free(sc);
	scratch_remove();
}

Test(import_history, nodes_given_with_history_are_the_pools)
{
	char cmd[512], out[4096], path[256];
	scratch_make();
	snprintf(cmd, sizeof cmd,
		 "bin/gpuplan import --history " SMALL " --nodes tests/fixtures/import/nodes.json "
		 "-o %s/twin.yaml",
		 dir);
	cr_assert_eq(capture(cmd, out, sizeof out), 0, "%s", out);
	expect_in(out, "4 pools from 5 nodes");
	/* the history's nodes are not the file's: no GPU type to pin them to */
	expect_in(out, "note: pods ran on nodes the pools lack (e.g. ");
	size_t n;
	snprintf(path, sizeof path, "%s/twin.yaml", dir);
	char *y = scratch_slurp(path, &n);
	cr_assert_not_null(y);
	expect_in(y, "  # nodes: cp-1\n");
	expect_in(y, "  # nodes: gpu-h100-1, gpu-h100-2\n");
	cr_expect_null(strstr(y, "gpu_spec"));
	free(y);
	/* --pods is a snapshot's instant, not a period's, and the refusal says so */
	snprintf(cmd, sizeof cmd,
		 "bin/gpuplan import --history " SMALL " --pods tests/fixtures/import/pods.json "
		 "-o %s/twin2.yaml",
		 dir);
	cr_expect_eq(capture(cmd, out, sizeof out), 2);
	expect_in(out, "--history learns from a period, --pods and --at describe one instant");
	snprintf(cmd, sizeof cmd,
		 "bin/gpuplan import --history " SMALL " --at 2026-11-02T12:00:00Z "
		 "-o %s/twin2.yaml",
		 dir);
	cr_expect_eq(capture(cmd, out, sizeof out), 2);
	expect_in(out, "so --pods and --at are not combined with --history");
	scratch_remove();
}

Test(import_history, a_hostile_nesting_stops_at_its_limit)
{
	char cmd[512], out[4096], path[256];
	copy_small();
	snprintf(path, sizeof path, "%s/h/pod_info.json", dir);
	FILE *f = fopen(path, "w");
	fputs("{\"status\":\"success\",\"warnings\":", f);
	for (int i = 0; i < 100000; i++)
		fputc('[', f);
	fputs("\n", f);
	fclose(f);
	snprintf(cmd, sizeof cmd, "bin/gpuplan import --history %s/h -o %s/twin.yaml", dir, dir);
	cr_expect_eq(capture(cmd, out, sizeof out), 2);
	expect_in(out, "pod_info.json:1:96: error: nesting deeper than 64 levels");
	scratch_remove();
}

/* OpenCost's /allocation prices the pools as the snapshot import does: per GPU
 * type, gpuCost / gpuHours, cpuCost / cpuCoreHours and ramCost per GiB-hour,
 * summed over the allocations on that type's nodes (OpenCost's allocation API,
 * docs: opencost.io/docs/integrations/api; fields gpuHours, gpuCost, ...).
 * tests/fixtures/history-opencost.json: h100-1 holds 10 + 30 GPU-h for 40 + 140
 * (4.5/h), 40 + 60 core-h for 1 + 2 (0.03/h), 100 + 300 GiB-h for 0.5 + 1.5
 * (0.005/h); l4-1 8 GPU-h for 6 (0.75/h), 16 core-h for 0.48, 64 GiB-h for 0.32. */
Test(import_history, opencost_prices_the_learned_twins_pools_and_prices_override_per_type)
{
	struct import_options o = {.history = SMALL,
				   .pods_csv = "twin.pods.csv",
				   .opencost = "tests/fixtures/history-opencost.json"};
	struct gp_err err GP_ERR_SCOPE = {0};
	cr_assert_eq(import_history_build(&o, &res, &err), GP_OK, "%s", err.msg);
	expect_in(res.yaml, ", prices from tests/fixtures/history-opencost.json:\n");
	expect_in(res.yaml, "    gpu: H100-80GB\n");
	expect_in(res.yaml, "    price: {gpu_hour: 4.5, cpu_hour: 0.03, gib_hour: 0.005}\n");
	expect_in(res.yaml, "    price: {gpu_hour: 0.75, cpu_hour: 0.03, gib_hour: 0.005}\n");
	/* the A100 and cpu-only nodes have no allocation: unpriced */
	const char *a100 = strstr(res.yaml, "    gpu: A100-80GB\n");
	cr_assert_not_null(a100);
	const char *next = strstr(a100, "\n  - name: ");
	const char *price = strstr(a100, "price:");
	cr_expect(!price || (next && price > next), "A100 priced:\n%s", res.yaml);
	import_result_free(&res);
	/* --prices wins for the types it names (L4 at 0.80), OpenCost for the rest */
	o.prices = "tests/fixtures/import/prices.yaml";
	cr_assert_eq(import_history_build(&o, &res, &err), GP_OK, "%s", err.msg);
	expect_in(res.yaml, "    price: {gpu_hour: 4.5, cpu_hour: 0.03, gib_hour: 0.005}\n");
	expect_in(res.yaml, "    price: {gpu_hour: 0.8, cpu_hour: 0.031611, gib_hour: 0.004237}\n");
	expect_in(res.yaml, "    price: {gpu_hour: 2.9, cpu_hour: 0.031611, gib_hour: 0.004237}\n");
}

Test(import_history, a_bad_opencost_file_is_located_and_the_twin_loads_with_its_prices)
{
	char cmd[512], out[8192], path[256];
	copy_small();
	snprintf(path, sizeof path, "%s/oc.json", dir);
	FILE *f = fopen(path, "w");
	fputs("{\"code\": 200, \"data\": [{\"p\": {\"gpuHours\": \"x\"}}]}\n", f);
	fclose(f);
	snprintf(cmd, sizeof cmd,
		 "bin/gpuplan import --history %s/h --opencost %s/oc.json -o %s/twin.yaml", dir,
		 dir, dir);
	cr_expect_eq(capture(cmd, out, sizeof out), 2);
	expect_in(out, "oc.json:1:");
	expect_in(out, "gpuHours");
	struct stat st;
	snprintf(path, sizeof path, "%s/twin.yaml", dir);
	cr_expect_neq(stat(path, &st), 0, "twin.yaml was written");
	/* a good one: written, and `check` loads the priced twin */
	snprintf(cmd, sizeof cmd,
		 "bin/gpuplan import --history %s/h --opencost "
		 "tests/fixtures/history-opencost.json -o %s/twin.yaml && bin/gpuplan check "
		 "%s/twin.yaml",
		 dir, dir, dir);
	cr_expect_eq(capture(cmd, out, sizeof out), 0, "%s", out);
	size_t n;
	char *y = scratch_slurp(path, &n);
	cr_assert_not_null(y);
	expect_in(y, "    price: {gpu_hour: 4.5, cpu_hour: 0.03, gib_hour: 0.005}\n");
	free(y);
	scratch_remove();
}

/* The section from "resource_flavors:" up to the next of "scheduler:" (the
 * snapshot's) and "workloads:" of text (malloc'd). */
static char *queues_section(const char *text)
{
	const char *at = strstr(text, "\nresource_flavors:\n");
	cr_assert_not_null(at, "no resource_flavors in\n%s", text);
	const char *end = strstr(at, "\nworkloads:\n"), *sched = strstr(at, "\nscheduler:\n");
	cr_assert_not_null(end);
	if (sched && sched < end)
		end = sched;
	return strndup(at, (size_t)(end - at));
}

/* Kueue: the twin gets --kueue's ResourceFlavors, cohorts and ClusterQueues as
 * the snapshot import writes them (the same code), and a workload its pods'
 * kueue.x-k8s.io/queue-name LocalQueue's ClusterQueue (Kueue's
 * pkg/controller/jobframework QueueName: the label names a LocalQueue in the
 * pod's namespace; its spec.clusterQueue is where the workload is queued).
 * By hand: finetune's pod names LocalQueue research in namespace research, whose
 * clusterQueue is research; pretrain's names "big", which kueue.yaml lacks: no
 * queue, and a note says why; vllm-llama's names serving, but an inference
 * service is not queued (a note); the other workloads name none. */
Test(import_history, kueue_queues_are_the_snapshots_and_workloads_queue_by_their_localqueue)
{
	char cmd[768], out[8192], path[256];
	copy_small();
	snprintf(
		cmd, sizeof cmd,
		"sed -i 's/\"pod\":\"finetune-b2c4d-xk2p9\",/&\"label_kueue_x_k8s_io_queue_name\":"
		"\"research\",/; s/\"pod\":\"pretrain-7k2xq-workers-0-0-abcd0\",/&"
		"\"label_kueue_x_k8s_io_queue_name\":\"big\",/; s/\"pod\":\"vllm-llama-5f7c9d8b6a-abcde\",/&"
		"\"label_kueue_x_k8s_io_queue_name\":\"serving\",/' %s/h/pod_labels.json",
		dir);
	cr_assert_eq(system(cmd), 0);
	snprintf(cmd, sizeof cmd,
		 "(bin/gpuplan import --history %s/h --kueue tests/fixtures/import/kueue.yaml -o "
		 "%s/twin.yaml && bin/gpuplan check %s/twin.yaml && bin/gpuplan import --nodes "
		 "tests/fixtures/import/nodes.json --pods tests/fixtures/import/pods.json --kueue "
		 "tests/fixtures/import/kueue.yaml -o %s/snap.yaml)",
		 dir, dir, dir, dir);
	cr_assert_eq(capture(cmd, out, sizeof out), 0, "%s", out);
	expect_in(out,
		  "note: pod research/pretrain-7k2xq-workers-0-0-abcd0 names Kueue LocalQueue "
		  "big, but tests/fixtures/import/kueue.yaml has no LocalQueue of that name in "
		  "namespace research; its workload has no queue");
	expect_in(out, "note: workload vllm-llama is an inference service, placed before batch "
		       "work and not through Kueue: its pods' LocalQueue serving is left out");
	size_t n;
	snprintf(path, sizeof path, "%s/twin.yaml", dir);
	char *twin = scratch_slurp(path, &n);
	snprintf(path, sizeof path, "%s/snap.yaml", dir);
	char *snap = scratch_slurp(path, &n);
	cr_assert(twin && snap);
	char *a = queues_section(twin), *b = queues_section(snap);
	cr_expect_str_eq(a, b);
	expect_in(a, "  - name: research\n    strategy: BestEffortFIFO\n    cohort: org\n");
	free(a);
	free(b);
	free(res.yaml);
	res.yaml = twin; /* block() reads it; teardown frees it */
	char *ft = block("finetune");
	expect_in(ft, "    queue: research   # LocalQueue \"research\"/\"research\" of its pods' "
		      "kueue.x-k8s.io/queue-name\n");
	free(ft);
	const char *names[] = {"pretrain", "nightly-eval", "alice-nb", "triton"};
	for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
		char *b2 = block(names[i]);
		cr_expect_null(strstr(b2, "queue:"), "%s has a queue:\n%s", names[i], b2);
		free(b2);
	}
	free(snap);
	scratch_remove();
}

/* --dcgm: a workload without DCGM series in the history is calibrated from the
 * scrape as the snapshot import calibrates (import_extra.c dcgm_sample, the
 * mean of the samples of its pods; sm_share SM over engine activity; DCGM field
 * docs: GR_ENGINE_ACTIVE and SM_ACTIVE ratios, FB_USED MiB).  By hand from
 * tests/fixtures/history-dcgm.prom: pretrain's two pods 0.4 and 0.6 engine
 * (0.5), 0.3 and 0.3 SM (0.3 / 0.5 = 0.6), 20480 and 40960 MiB (30720); odd's
 * one pod 0.25, no SM, no FB.  finetune has history series (engine 0.5, 0.7):
 * the history wins, 0.6, not the scrape's 0.9.  gone-0 is no pod of the
 * history, and a GPU without a pod has no workload: both left out. */
Test(import_history, a_dcgm_scrape_calibrates_the_workloads_the_history_has_no_dcgm_for)
{
	struct import_options o = {.history = SMALL,
				   .pods_csv = "twin.pods.csv",
				   .dcgm = "tests/fixtures/history-dcgm.prom"};
	struct gp_err err GP_ERR_SCOPE = {0};
	cr_assert_eq(import_history_build(&o, &res, &err), GP_OK, "%s", err.msg);
	char *b = block("pretrain");
	expect_in(b, "    # gpu_busy, sm_share, vram: no DCGM series for its pods in the history; "
		     "from the scrape tests/fixtures/history-dcgm.prom (--dcgm), 2 pods\n"
		     "    gpu_busy: 0.5   # DCGM engine activity, mean of 2 samples\n"
		     "    sm_share: 0.6   # DCGM SM activity over engine activity\n"
		     "    vram: 30720MiB   # DCGM framebuffer used, mean of 2 samples\n");
	free(b);
	b = block("odd");
	expect_in(b, "(--dcgm), 1 pods\n    gpu_busy: 0.25   # DCGM engine activity, mean of 1 "
		     "samples\n");
	cr_expect_null(strstr(b, "    sm_share:"));
	cr_expect_null(strstr(b, "    vram:"));
	free(b);
	b = block("finetune");
	expect_in(b, "    gpu_busy: 0.6   # DCGM engine activity, mean of 2 pods\n");
	cr_expect_null(strstr(b, "scrape"));
	free(b);
	b = block("triton");
	expect_in(b, "    # gpu_busy, sm_share, vram: not learned (no DCGM series for its pods)\n");
	free(b);
}

Test(import_history, a_bad_dcgm_scrape_is_located_and_nothing_is_written)
{
	char cmd[512], out[4096], path[256];
	copy_small();
	snprintf(path, sizeof path, "%s/d.prom", dir);
	FILE *f = fopen(path, "w");
	fputs("DCGM_FI_PROF_GR_ENGINE_ACTIVE{namespace=\"research\",pod=\"odd-0\"} 1.5\n", f);
	fclose(f);
	snprintf(cmd, sizeof cmd,
		 "bin/gpuplan import --history %s/h --dcgm %s/d.prom -o %s/twin.yaml", dir, dir,
		 dir);
	cr_expect_eq(capture(cmd, out, sizeof out), 2);
	expect_in(out, "d.prom:1:");
	expect_in(out, "expected a ratio from 0 to 1, got 1.5");
	struct stat st;
	snprintf(path, sizeof path, "%s/twin.yaml", dir);
	cr_expect_neq(stat(path, &st), 0, "twin.yaml was written");
	scratch_remove();
}

/* A workload whose pods ran on an H100 (80 GiB) and an L4 (22.5 GiB) used
 * 70,000 and 20,000 MiB at their peaks, as a server that preallocates a
 * share of its GPU does.  Their mean, 45,000 MiB, does not fit the L4, where
 * the twin would OOM-kill what the cluster ran: vram is the most its pods
 * used there, 20,000 MiB.  Both on the H100, the mean stands. */
Test(import_history, vram_fits_every_gpu_type_the_pods_ran_on)
{
	copy_small();
	char cmd[1024], h[160];
	snprintf(h, sizeof h, "%s/h", dir);
	snprintf(cmd, sizeof cmd,
		 "sed -i 's/\"30000\"/\"70000\"/; s/\"40000\"/\"20000\"/' %s/dcgm_fb_used.json", h);
	cr_assert_eq(system(cmd), 0);
	build(h);
	char *b = block("finetune");
	expect_in(b, "vram: 45000MiB   # DCGM framebuffer used, mean of 2 pods' peaks\n");
	free(b);
	import_result_free(&res);
	snprintf(
		cmd, sizeof cmd,
		"sed -i 's/\\(\"pod\":\"finetune-x9z8w-q7w2f\",[^}]*\"node\":\"\\)h100-1/\\1l4-1/' "
		"%s/pod_info.json",
		h);
	cr_assert_eq(system(cmd), 0);
	build(h);
	b = block("finetune");
	expect_in(b, "gpu_spec: [H100-80GB, L4]");
	expect_in(b, "vram: 20000MiB   # DCGM framebuffer used: the most its pods used on L4, at "
		     "most what it holds (the mean of 2 pods' peaks, 45000MiB, does not fit it)\n");
	free(b);
	scratch_remove();
}
