/*
 * test_openmetrics.c - `gpuplan report DB --openmetrics` (openmetrics.h):
 * exact samples of a worked example, the text format's rules (families
 * never interleaved, samples of a series in time order, "# EOF" last),
 * vLLM's names, labels and histograms for an inference run, and a backfill
 * with the real promtool (Debian's prometheus package; the test skips when
 * it is not installed).
 *
 * References: the OpenMetrics text format,
 * https://github.com/OpenObservability/OpenMetrics/blob/main/specification/OpenMetrics.md
 * (MetricFamilies MUST NOT be interleaved; MetricPoints of a Metric in
 * increasing timestamp order; the exposition ends with "# EOF"; a
 * counter's sample carries the _total suffix, a histogram's buckets are
 * cumulative with le="+Inf" equal to _count); vLLM's metric names, buckets
 * and labels: vllm-project/vllm vllm/engine/metrics.py; backfilling:
 * prometheus/prometheus cmd/promtool/backfill.go (promtool tsdb
 * create-blocks-from openmetrics).
 */
#include <criterion/criterion.h>

#include "gpuplan/ytree.h"
#include "scratch.h"
#include <ctype.h>

#include <math.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

TestSuite(openmetrics, .init = scratch_make, .fini = scratch_remove, .timeout = 120);

static char out[1 << 20];

/* Four 2-GPU jobs at 12:00 on one 4-GPU node, one hour each: two run from
 * 12:00 to 13:00 while two wait, then those two run until 14:00. */
static const char worked[] =
	"name: om\n"
	"start: 2026-10-27T00:00:00Z\n"
	"pools:\n"
	"  - {name: gpus, nodes: 1, gpu: A100-80GB, gpus_per_node: 4, cpu: 96, memory: 1024GiB}\n"
	"workloads:\n"
	"  - {name: eval, count: 4, arrival: {at: \"12:00\"}, gpus: 2, duration: 1h, gpu_busy: 0.5}\n"
	"output: {step: 30m}\n";

/* A small vLLM-like service: 300 Poisson requests, every request recorded. */
static const char chat[] =
	"name: chat\n"
	"start: 2026-10-27T00:00:00Z\n"
	"seed: 3\n"
	"pools: [{name: h100, nodes: 1, gpu: H100-80GB, gpus_per_node: 1}]\n"
	"workloads:\n"
	"  - {name: chat, kind: inference, model: llama-3-8b, memory_fraction: 0.9,\n"
	"     requests: {process: poisson, rate: 10/s, count: 300,\n"
	"                prompt_tokens: {dist: lognormal, mean: 800, sigma: 0.5},\n"
	"                output_tokens: {dist: lognormal, mean: 150, sigma: 0.5}}}\n"
	"output: {step: 10s, requests: true}\n";

static const char *path(const char *name)
{
	static char bufs[4][160];
	static int next;
	char *b = bufs[next++ % 4];
	snprintf(b, sizeof bufs[0], "%s/%s", dir, name);
	return b;
}

static void write_text(const char *name, const char *text)
{
	FILE *f = fopen(path(name), "w");
	cr_assert_not_null(f);
	fputs(text, f);
	fclose(f);
}

/* Runs the scenario text into DIR/NAME.db and exports it to DIR/NAME.om. */
static void export(const char *name, const char *text)
{
	char yaml[64], cmd[1024];
	snprintf(yaml, sizeof yaml, "%s.yaml", name);
	write_text(yaml, text);
	snprintf(cmd, sizeof cmd, "bin/gpuplan run %s/%s.yaml --db %s/%s.db --quiet", dir, name,
		 dir, name);
	cr_assert_eq(capture(cmd, out, sizeof out), 0, "%s", out);
	snprintf(cmd, sizeof cmd, "bin/gpuplan report %s/%s.db --openmetrics > %s/%s.om", dir, name,
		 dir, name);
	cr_assert_eq(system(cmd), 0, "%s", cmd);
	snprintf(yaml, sizeof yaml, "%s.om", name);
	FILE *f = fopen(path(yaml), "r");
	cr_assert_not_null(f);
	size_t n = fread(out, 1, sizeof out - 1, f);
	out[n] = '\0';
	fclose(f);
}

static bool has_line(const char *line)
{
	size_t len = strlen(line);
	for (const char *p = strstr(out, line); p; p = strstr(p + 1, line))
		if ((p == out || p[-1] == '\n') && p[len] == '\n')
			return true;
	return false;
}

static int count_prefix(const char *prefix)
{
	int n = 0;
	size_t len = strlen(prefix);
	for (const char *p = out; *p; p = strchr(p, '\n') + 1) {
		n += !strncmp(p, prefix, len);
		if (!strchr(p, '\n'))
			break;
	}
	return n;
}

/* 2026-10-27T00:00:00Z is 1793059200 s; the windows start at 12:00 (the
 * first arrival) and last 30 min, so they end at 12:30, 13:00, 13:30 and
 * 14:00 = 1793059200 + 45000, 46800, 48600, 50400.  Each sample is the
 * window's mean: the pool's 4 GPUs all allocated; two jobs pending during
 * the first hour; demand 8 GPUs, then 4; engine activity 0.5 on every
 * allocated GPU. */
Test(openmetrics, gauges_are_window_means_stamped_at_each_window_end)
{
	export("om", worked);
	const char *pool = "{pool=\"gpus\",scenario=\"om\",run=\"1\"}";
	const char *eval = "{workload=\"eval\",scenario=\"om\",run=\"1\"}";
	const long ends[] = {1793104200, 1793106000, 1793107800, 1793109600};
	const double pending[] = {2, 2, 0, 0}, demand[] = {8, 8, 4, 4};
	char line[256];
	for (int k = 0; k < 4; k++) {
		snprintf(line, sizeof line, "gpuplan_gpus_capacity%s 4 %ld.000", pool, ends[k]);
		cr_expect(has_line(line), "%s", line);
		snprintf(line, sizeof line, "gpuplan_gpus_allocated%s 4 %ld.000", pool, ends[k]);
		cr_expect(has_line(line), "%s", line);
		snprintf(line, sizeof line, "gpuplan_pods_running%s 2 %ld.000", eval, ends[k]);
		cr_expect(has_line(line), "%s", line);
		snprintf(line, sizeof line, "gpuplan_pods_pending%s %g %ld.000", eval, pending[k],
			 ends[k]);
		cr_expect(has_line(line), "%s", line);
		snprintf(line, sizeof line, "gpuplan_gpus_demand%s %g %ld.000", eval, demand[k],
			 ends[k]);
		cr_expect(has_line(line), "%s", line);
		snprintf(line, sizeof line, "gpuplan_gpu_engine_active_ratio%s 0.5 %ld.000", pool,
			 ends[k]);
		cr_expect(has_line(line), "%s", line);
	}
	cr_expect_eq(count_prefix("gpuplan_gpus_capacity{"), 4, "one sample per window\n%s", out);
	cr_expect_eq(count_prefix("gpuplan_gpus_capacity{pool=\"gpus\""), 4, "pools only");
	cr_expect_eq(count_prefix("gpuplan_pods_pending{pool="), 0,
		     "pending pods are a workload's");
	cr_expect_eq(count_prefix("vllm:"), 0, "no inference workload, no vLLM series");
	cr_expect(has_line("# TYPE gpuplan_gpu_memory_used_bytes gauge"));
}

/* The format's rules, checked line by line on an inference run: every
 * sample after its family's TYPE, families contiguous, one series' samples
 * in increasing time, "# EOF" the last line. */
Test(openmetrics, families_are_contiguous_and_each_series_is_in_time_order)
{
	export("chat", chat);
	char family[128] = "", seen[64][128];
	size_t n_seen = 0;
	char last_key[512] = "";
	double last_t = -1;
	char *save = NULL, *text = strdup(out);
	const char *last_line = "";
	for (char *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		last_line = line;
		if (!strncmp(line, "# TYPE ", 7)) {
			sscanf(line + 7, "%127s", family);
			for (size_t i = 0; i < n_seen; i++)
				cr_assert_str_neq(seen[i], family, "family %s appears twice",
						  family);
			strcpy(seen[n_seen++], family);
			continue;
		}
		if (line[0] == '#')
			continue;
		cr_assert(family[0] && !strncmp(line, family, strlen(family)), "%s outside %s",
			  line, family);
		char *value = strrchr(line, ' ');
		double t = atof(value + 1);
		*value = '\0';
		char *key = line; /* name{labels} value: drop the value too */
		*strrchr(key, ' ') = '\0';
		/* A histogram's MetricPoint has many samples at one time. */
		const char *brace = strchr(key, '{');
		char series[512];
		snprintf(series, sizeof series, "%s%s", family, brace ? brace : "");
		char *le = strstr(series, ",le=");
		if (le)
			strcpy(le, "}");
		if (!strcmp(series, last_key))
			cr_assert_geq(t, last_t, "%s goes back in time", key);
		snprintf(last_key, sizeof last_key, "%s", series);
		last_t = t;
	}
	cr_expect_str_eq(last_line, "# EOF");
	cr_expect_eq(n_seen, 18,
		     "9 gpuplan families, 4 vLLM gauges and counters, 3 histograms, 2 of energy");
	free(text);
}

/* The value of the last sample whose line starts with prefix. */
static double last_value(const char *prefix)
{
	double v = NAN;
	size_t len = strlen(prefix);
	for (const char *p = out; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL)
		if (!strncmp(p, prefix, len))
			v = atof(strchr(p + len, ' ') + 1);
	return v;
}

/* vLLM's names with model_name and simulated="true"; the histograms end
 * with every request the database holds: one TTFT per request with a first
 * token, one TPOT per output token after the first, one e2e per completed
 * request; buckets are cumulative and +Inf equals the count. */
Test(openmetrics, inference_runs_appear_under_vllms_names_and_histograms)
{
	export("chat", chat);
	const char *labels = "{model_name=\"llama-3-8b\",simulated=\"true\",workload=\"chat\","
			     "scenario=\"chat\",run=\"1\"";
	char prefix[512];
	const char *gauges[] = {"vllm:num_requests_running", "vllm:num_requests_waiting",
				"vllm:gpu_cache_usage_perc", "vllm:num_preemptions_total"};
	for (int i = 0; i < 4; i++) {
		snprintf(prefix, sizeof prefix, "%s%s}", gauges[i], labels);
		cr_expect_gt(count_prefix(prefix), 0, "%s", prefix);
	}
	cr_expect(has_line("# TYPE vllm:num_preemptions counter"));
	const char *db = path("chat.db");
	struct {
		const char *family;
		long long expected;
	} hists[] = {
		{"vllm:time_to_first_token_seconds",
		 scratch_query(db, "SELECT count(*) FROM requests WHERE ttft_s IS NOT NULL")},
		{"vllm:time_per_output_token_seconds",
		 scratch_query(
			 db,
			 "SELECT sum(output_tokens - 1) FROM requests WHERE tpot_s IS NOT NULL")},
		{"vllm:e2e_request_latency_seconds",
		 scratch_query(db, "SELECT count(*) FROM requests WHERE e2e_s IS NOT NULL")},
	};
	cr_assert_eq(hists[0].expected, 300);
	for (int i = 0; i < 3; i++) {
		snprintf(prefix, sizeof prefix, "%s_count%s}", hists[i].family, labels);
		cr_expect_float_eq(last_value(prefix), (double)hists[i].expected, 0, "%s", prefix);
		snprintf(prefix, sizeof prefix, "%s_bucket%s,le=\"+Inf\"}", hists[i].family,
			 labels);
		cr_expect_float_eq(last_value(prefix), (double)hists[i].expected, 0, "%s", prefix);
	}
	/* TTFT buckets at the last point: non-decreasing, and the 0.1 s one
	 * holds the requests the database says took at most 0.1 s. */
	snprintf(prefix, sizeof prefix, "vllm:time_to_first_token_seconds_bucket%s,le=\"0.1\"}",
		 labels);
	cr_expect_float_eq(
		last_value(prefix),
		(double)scratch_query(db, "SELECT count(*) FROM requests WHERE ttft_s <= 0.1"), 0);
	const char *les[] = {"0.001", "0.005", "0.01", "0.02", "0.04", "0.06",
			     "0.08",  "0.1",   "0.25", "0.5",  "0.75", "1.0",
			     "2.5",   "5.0",   "7.5",  "10.0", "+Inf"};
	double prev = 0;
	for (int i = 0; i < 17; i++) {
		snprintf(prefix, sizeof prefix,
			 "vllm:time_to_first_token_seconds_bucket%s,le=\"%s\"}", labels, les[i]);
		double v = last_value(prefix);
		cr_expect_geq(v, prev, "bucket %s", les[i]);
		prev = v;
	}
	/* The TPOT sum is every request's decode time: (e2e - ttft) summed. */
	snprintf(prefix, sizeof prefix, "vllm:time_per_output_token_seconds_sum%s}", labels);
	double decode = (double)scratch_query(
				db, "SELECT CAST(round(sum(e2e_s - ttft_s) * 1000) AS INTEGER) "
				    "FROM requests WHERE tpot_s IS NOT NULL") /
			1000;
	cr_expect_float_eq(last_value(prefix), decode, 1e-3, "%g vs %g", last_value(prefix),
			   decode);
	/* Energy: the run's energy_kwh in joules, and its tokens per joule. */
	cr_expect(has_line("# TYPE gpuplan_inference_energy_joules counter"));
	double kwh =
		(double)scratch_query(db, "SELECT CAST(round(value * 1e9) AS INTEGER) FROM "
					  "metrics WHERE scope = 'chat' AND name = 'energy_kwh'") /
		1e9;
	cr_assert_gt(kwh, 0);
	cr_expect_float_eq(last_value("gpuplan_inference_energy_joules_total{workload=\"chat\","
				      "scenario=\"chat\",run=\"1\"}"),
			   kwh * 3.6e6, 1e-2);
	cr_expect_gt(last_value("gpuplan_inference_tokens_per_joule{workload=\"chat\","
				"scenario=\"chat\",run=\"1\"}"),
		     0);
}

/* scenarios/autoscale.yaml launches two 4-GPU nodes at 00:00 that are Ready
 * after its 5-minute provision time: the first 5-minute window holds 8 GPUs
 * provisioning and none Ready; by the next they are capacity. */
Test(openmetrics, provisioning_gpus_are_a_pool_gauge)
{
	char cmd[512];
	snprintf(cmd, sizeof cmd,
		 "bin/gpuplan run scenarios/autoscale.yaml --db %s --quiet && "
		 "bin/gpuplan report %s --openmetrics",
		 path("as.db"), path("as.db"));
	cr_assert_eq(capture(cmd, out, sizeof out), 0, "%s", out);
	cr_expect(has_line("# TYPE gpuplan_gpus_provisioning gauge"));
	const char *first = strstr(out, "gpuplan_gpus_provisioning{pool=\"batch\"");
	cr_assert_not_null(first);
	cr_expect(!strncmp(strchr(first, '}'), "} 8 ", 4), "%.80s", first);
	cr_expect(
		has_line("gpuplan_gpus_capacity{pool=\"batch\",scenario=\"autoscale\",run=\"1\"} 0 "
			 "1767225900.000"),
		"none Ready in the first window");
}

Test(openmetrics, a_missing_run_exits_2_and_prints_nothing)
{
	char cmd[512];
	export("om", worked);
	snprintf(cmd, sizeof cmd, "bin/gpuplan report %s/om.db --run 7 --openmetrics", dir);
	cr_expect_eq(capture(cmd, out, sizeof out), 2, "%s", out);
	cr_expect(strstr(out, "no run 7"), "%s", out);
	cr_expect_null(strstr(out, "# EOF"), "%s", out);
	snprintf(cmd, sizeof cmd, "bin/gpuplan report %s/om.db --openmetrics --opencost", dir);
	cr_expect_eq(capture(cmd, out, sizeof out), 2, "%s", out);
}

/* The worked run with its timeseries replaced by n_series workloads of 100
 * one-minute windows each, one value each (running): DIR/NAME.db. */
static void many_series(const char *name, int n_series)
{
	char cmd[1536];
	snprintf(
		cmd, sizeof cmd,
		"cp %s/om.db %s/%s.db && sqlite3 %s/%s.db \"DELETE FROM timeseries; WITH RECURSIVE "
		"w(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM w WHERE i < %d), k(j) AS (SELECT 0 "
		"UNION ALL SELECT j + 1 FROM k WHERE j < 99) INSERT INTO timeseries (run_id, t_s, "
		"scope, running) SELECT 1, j * 60.0, 'w' || i, 1 FROM w, k ORDER BY i, j; UPDATE "
		"runs SET sim_seconds = 6000\"",
		dir, dir, name, dir, name, n_series - 1);
	cr_assert_eq(system(cmd), 0, "%s", cmd);
}

/* The peak resident set (KiB) of the export of DIR/NAME.db into DIR/NAME.om
 * (wait4's rusage is that child's alone), which must succeed. */
static long export_rss(const char *name)
{
	char db[160], om[160];
	snprintf(db, sizeof db, "%s/%s.db", dir, name);
	snprintf(om, sizeof om, "%s/%s.om", dir, name);
	pid_t pid = fork();
	cr_assert(pid >= 0);
	if (pid == 0) {
		if (!freopen(om, "w", stdout))
			_exit(127);
		execl("bin/gpuplan", "gpuplan", "report", db, "--openmetrics", (char *)NULL);
		_exit(127);
	}
	int status;
	struct rusage ru;
	cr_assert_eq(wait4(pid, &status, 0, &ru), pid);
	cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0, "export of %s", name);
	return ru.ru_maxrss;
}

/* OpenMetrics is written as a stream: memory is one series, not the run.
 * 1,000 series of 100 windows (100,000 rows) take no more than 100 series
 * (10,000 rows) give or take 8 MiB; an export that held the rows needed about
 * 270 bytes a row, 24 MiB more here (and 210 MB for 5,000 workloads of a
 * real run).  Every sample is there: 100 per series. */
Test(openmetrics, memory_is_one_series_however_many_series_the_run_has)
{
	export("om", worked);
	many_series("few", 100);
	many_series("many", 1000);
	long few = export_rss("few"), many = export_rss("many");
	cr_expect_lt(many, few + 8192, "peak RSS %ld KiB for 1,000 series, %ld KiB for 100", many,
		     few);
	char cmd[512];
	snprintf(
		cmd, sizeof cmd,
		"{ grep -c '^gpuplan_pods_running{workload=\"w' %s/many.om; tail -n 1 %s/many.om; }",
		dir, dir);
	cr_assert_eq(capture(cmd, out, sizeof out), 0, "%s", out);
	cr_expect_str_eq(out, "100000\n# EOF\n");
}

/* Backfills the inference export with the real promtool, then reads the
 * blocks back: every sample of the file is in the TSDB, with its labels,
 * its value and its timestamp in milliseconds. */
Test(openmetrics, promtool_backfills_every_sample_at_its_timestamp)
{
	if (system("command -v promtool >/dev/null 2>&1") != 0)
		cr_skip_test("promtool is not installed (make deps installs Debian's prometheus)");
	export("chat", chat);
	long samples = 0;
	for (const char *p = out; *p; p = strchr(p, '\n') + 1) {
		samples += *p != '#';
		if (!strchr(p, '\n'))
			break;
	}
	char cmd[1024];
	/* dump opens the folder as a live TSDB, which needs a (here empty) WAL. */
	snprintf(cmd, sizeof cmd,
		 "{ promtool tsdb create-blocks-from openmetrics %s/chat.om %s/tsdb && "
		 "mkdir -p %s/tsdb/wal; }",
		 dir, dir, dir);
	cr_assert_eq(capture(cmd, out, sizeof out), 0, "%s", out);
	snprintf(cmd, sizeof cmd, "promtool tsdb dump %s/tsdb > %s/dump.txt 2>&1", dir, dir);
	cr_assert_eq(system(cmd), 0);
	snprintf(cmd, sizeof cmd, "wc -l < %s/dump.txt", dir);
	cr_assert_eq(capture(cmd, out, sizeof out), 0);
	cr_expect_eq(atol(out), samples, "every sample backfilled: %s vs %ld", out, samples);
	/* The first TTFT count and a KV-cache gauge, with millisecond stamps:
	 * the windows of 10 s from the first arrival at 00:00:00. */
	snprintf(
		cmd, sizeof cmd,
		"grep -c '^{__name__=\"vllm:time_to_first_token_seconds_count\", model_name=\"llama-3-8b\", "
		"run=\"1\", scenario=\"chat\", simulated=\"true\", workload=\"chat\"} [0-9.e+]* "
		"17930592[0-9]0000$' %s/dump.txt",
		dir);
	cr_assert_eq(capture(cmd, out, sizeof out), 0, "%s", out);
	cr_expect_gt(atol(out), 1, "TTFT counts at the 10 s window ends");
	snprintf(cmd, sizeof cmd,
		 "grep -c '^{__name__=\"gpuplan_gpus_capacity\", pool=\"h100\", run=\"1\", "
		 "scenario=\"chat\"} 1 1793059210000$' %s/dump.txt",
		 dir);
	cr_assert_eq(capture(cmd, out, sizeof out), 0, "%s", out);
	cr_expect_eq(atol(out), 1, "capacity of the first window, stamped at its end");
}

/* A database written before the scopes table and the server columns, read
 * without migrating it (report opens read-only): the gpuplan gauges are
 * still there, a scope with capacity_gpus labelled as a pool. */
Test(openmetrics, a_database_from_before_the_scopes_table_still_exports)
{
	export("om", worked);
	char cmd[1024];
	snprintf(
		cmd, sizeof cmd,
		"sqlite3 %s/om.db 'DROP VIEW jobs; DROP TABLE scopes; CREATE VIEW jobs AS SELECT "
		"run_id, job_id FROM job_rows; ALTER TABLE timeseries DROP COLUMN preemptions; "
		"ALTER TABLE timeseries DROP COLUMN kv_cache_usage; ALTER TABLE timeseries DROP COLUMN "
		"requests_waiting; ALTER TABLE timeseries DROP COLUMN requests_running' && "
		"bin/gpuplan report %s/om.db --openmetrics",
		dir, dir);
	cr_assert_eq(capture(cmd, out, sizeof out), 0, "%s", out);
	cr_expect(has_line("gpuplan_gpus_capacity{pool=\"gpus\",scenario=\"om\",run=\"1\"} 4 "
			   "1793104200.000"),
		  "%s", out);
	cr_expect(has_line("gpuplan_pods_pending{workload=\"eval\",scenario=\"om\",run=\"1\"} 2 "
			   "1793104200.000"),
		  "%s", out);
	cr_expect(has_line("# EOF"));
}

/* Cost and pending time: gpuplan_cost_total per workload and __idle__ adds up
 * the OpenCost allocations window after window (the last sample of each is
 * its cost_total; together they are the bill), and gpuplan_pending_seconds
 * gives each workload's pod-seconds per message at the run's end.  4 GPUs at
 * $2/h, one 4-GPU job of 1h and a second that waits for it: $8 each, the
 * second 3600 pod-seconds pending per pod with Insufficient nvidia.com/gpu. */
Test(openmetrics, cost_and_pending_time_are_counters_per_workload)
{
	export("bill", "name: bill\nstart: 2026-10-27T00:00:00Z\n"
		       "pools: [{name: p, nodes: 1, gpu: A100-80GB, gpus_per_node: 4, price: "
		       "{gpu_hour: 2}}]\n"
		       "workloads: [{name: w, count: 2, gpus: 4, duration: 1h, arrival: {at: "
		       "\"12:00\"}}]\n");
	cr_expect(has_line("# TYPE gpuplan_cost counter"));
	cr_expect(has_line("# TYPE gpuplan_pending_seconds counter"));
	cr_expect_float_eq(
		last_value("gpuplan_cost_total{workload=\"w\",scenario=\"bill\",run=\"1\"}"), 16,
		1e-9);
	cr_expect_float_eq(
		last_value("gpuplan_pending_seconds_total{workload=\"w\",reason=\"0/1 nodes are "
			   "available: 1 Insufficient nvidia.com/gpu. preemption: 0/1 nodes are "
			   "available: 1 No preemption victims found for incoming pod..\","
			   "scenario=\"bill\",run=\"1\"}"),
		3600, 1e-6);
}

/* --- docs/grafana/gpuplan.json: every expression on the export's series --- */

/* The metric names of a PromQL expression: identifiers outside label
 * matchers {..}, ranges [..], strings and by/without/on/ignoring/group
 * lists, not followed by "(" (functions, aggregations), not keywords. */
static size_t promql_metrics(const char *e, char names[][96], size_t max)
{
	static const char *const words[] = {
		"by",  "without", "on",     "ignoring", "group_left", "group_right", "bool",
		"and", "or",      "unless", "offset",   "inf",        "nan"};
	size_t n = 0;
	for (const char *p = e; *p;) {
		if (*p == '"') {
			for (p++; *p && *p != '"'; p++)
				if (*p == '\\' && p[1])
					p++;
			p += *p == '"';
		} else if (*p == '{' || *p == '[') {
			char close = *p == '{' ? '}' : ']';
			while (*p && *p != close) {
				if (*p == '"') /* a quoted '}' does not close */
					for (p++; *p && *p != '"'; p++)
						if (*p == '\\' && p[1])
							p++;
				p += *p != 0;
			}
			p += *p != 0;
		} else if (isalpha((unsigned char)*p) || *p == '_' || *p == ':') {
			const char *s = p;
			while (isalnum((unsigned char)*p) || *p == '_' || *p == ':')
				p++;
			size_t len = (size_t)(p - s);
			const char *q = p;
			while (*q == ' ')
				q++;
			bool keyword = false;
			for (size_t k = 0; k < sizeof words / sizeof *words; k++)
				keyword |= len == strlen(words[k]) && !strncmp(s, words[k], len);
			if (keyword && *q == '(') { /* by (a, b): a label list */
				while (*q && *q != ')')
					q++;
				p = q + (*q != 0);
				continue;
			}
			/* an aggregation written "sum by (a) (...)" */
			bool grouped = (!strncmp(q, "by", 2) && !isalnum((unsigned char)q[2]) &&
					q[2] != '_') ||
				       (!strncmp(q, "without", 7) &&
					!isalnum((unsigned char)q[7]) && q[7] != '_');
			if (keyword || grouped || *q == '(' || len >= 96 || n == max)
				continue;
			memcpy(names[n], s, len);
			names[n++][len] = '\0';
		} else if (isdigit((unsigned char)*p)) {
			while (isalnum((unsigned char)*p) || *p == '.')
				p++;
		} else {
			p++;
		}
	}
	return n;
}

/* Every "expr" and variable "definition" under node v, into out. */
static void expressions(const struct ynode *v, const char **exprs, size_t *n, size_t max)
{
	for (size_t i = 0; i < v->n; i++) {
		const struct ynode *x = v->items[i];
		if (v->kind == YNODE_MAP && x->kind == YNODE_SCALAR && *n < max &&
		    (!strcmp(v->keys[i], "expr") || !strcmp(v->keys[i], "definition")))
			exprs[(*n)++] = x->value;
		else if (x->kind != YNODE_SCALAR)
			expressions(x, exprs, n, max);
	}
}

/* A name the export wrote as a sample: "NAME{" at the start of a line. */
static bool exported(const char *name)
{
	char prefix[2048];
	snprintf(prefix, sizeof prefix, "%s{", name);
	return count_prefix(prefix) > 0;
}

/* The dashboard parses (JSON is YAML), has the scenario and run variables,
 * and each of its PromQL expressions names only series that
 * `report --openmetrics` writes for the team's week (scenarios/week.yaml,
 * with its requests kept so that vLLM's histograms are there), every
 * selector filtered by $scenario and $run. */
Test(openmetrics, the_grafana_dashboard_reads_only_exported_series)
{
	char cmd[1024], om[128];
	snprintf(cmd, sizeof cmd,
		 "bin/gpuplan run scenarios/week.yaml --quiet --db %s/week.db "
		 "--set output.requests=true --set horizon=2d && bin/gpuplan report %s/week.db "
		 "--openmetrics > %s/week.om",
		 dir, dir, dir);
	cr_assert_eq(system(cmd), 0, "%s", cmd);
	snprintf(om, sizeof om, "%s/week.om", dir);
	FILE *f = fopen(om, "r");
	cr_assert_not_null(f);
	static char text[64 << 20];
	size_t len = fread(text, 1, sizeof text - 1, f);
	fclose(f);
	text[len] = '\0';
	/* count_prefix and has_line read `out`: the export's head and every
	 * family's first sample are enough, so keep one line per name */
	size_t o = 0;
	char last[128] = "";
	for (char *line = text; *line && o + 1024 < sizeof out;) {
		char *end = strchr(line, '\n');
		size_t n = end ? (size_t)(end - line) : strlen(line);
		size_t name = strcspn(line, "{ ");
		if (line[0] != '#' && (name != strlen(last) || strncmp(line, last, name))) {
			snprintf(last, sizeof last, "%.*s", (int)name, line);
			o += (size_t)snprintf(out + o, sizeof out - o, "%.*s\n", (int)n, line);
		}
		line += n + (end != NULL);
	}
	struct ytree *t = NULL;
	struct gp_err err GP_ERR_SCOPE = {0};
	cr_assert_eq(ytree_load("docs/grafana/gpuplan.json", &t, &err), GP_OK, "%s", err.msg);
	const struct ynode *vars = ynode_get(ynode_get(t->root, "templating"), "list");
	cr_assert_not_null(vars);
	bool scenario = false, run = false;
	for (size_t i = 0; i < vars->n; i++) {
		const struct ynode *name = ynode_get(vars->items[i], "name");
		scenario |= name && !strcmp(name->value, "scenario");
		run |= name && !strcmp(name->value, "run");
	}
	cr_expect(scenario && run, "the scenario and run template variables");
	const char *exprs[256];
	size_t n = 0, checked = 0;
	expressions(t->root, exprs, &n, 256);
	cr_assert_geq(n, 20, "the panels' queries were found");
	for (size_t i = 0; i < n; i++) {
		char names[16][96];
		size_t k = promql_metrics(exprs[i], names, 16);
		cr_expect_gt(k, 0, "no metric in %s", exprs[i]);
		if (!strncmp(exprs[i], "label_values(", 13) && k > 1)
			k = 1; /* label_values(METRIC, LABEL): a label name last */
		for (size_t j = 0; j < k; j++, checked++) {
			cr_expect(exported(names[j]), "%s is not in the export (%s)", names[j],
				  exprs[i]);
			/* each selector of a panel is filtered by the run */
			const char *at = strstr(exprs[i], names[j]);
			const char *brace = at ? at + strlen(names[j]) : NULL;
			if (strncmp(exprs[i], "label_values", 12))
				cr_expect(brace && *brace == '{' &&
						  strstr(brace, "scenario=~\"$scenario\"") &&
						  strstr(brace, "run=~\"$run\""),
					  "%s is not filtered by $scenario and $run in %s",
					  names[j], exprs[i]);
		}
	}
	cr_expect_geq(checked, 30);
	/* the check can fail: a name the export does not write is caught */
	char bogus[4][96];
	cr_assert_eq(promql_metrics("sum by (pool) (rate(DCGM_FI_DEV_GPU_UTIL{pool=\"a}\"}[5m]))",
				    bogus, 4),
		     1);
	cr_expect_str_eq(bogus[0], "DCGM_FI_DEV_GPU_UTIL");
	cr_expect(!exported(bogus[0]));
	ytree_free(t);
}
