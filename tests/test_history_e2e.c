/*
 * test_history_e2e.c - the history pipeline of issue 37 against a real
 * Prometheus: tests/history.sh generates a week of kube-state-metrics,
 * dcgm-exporter and vLLM series from a known model
 * (tests/history/gen_week.py), backfills them with promtool, serves them with
 * Debian's prometheus on a free localhost port, exports them with
 * scripts/export-history.sh, and checks the export (and, where bin/gpuplan
 * has them, the twin `import --history` learns and its `backtest`) against
 * the generator's truth.  Skips, with the reason, where prometheus cannot be
 * installed or started (the script's exit code 77).
 * (Backfilling: prometheus/prometheus cmd/promtool/backfill.go; the HTTP
 * API: https://prometheus.io/docs/prometheus/latest/querying/api/.)
 *
 * Also the export script's argument checks, which need no server: each bad
 * argument is named, with exit code 2.
 */
#include <criterion/criterion.h>

#include "scratch.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

TestSuite(history_e2e, .init = scratch_make, .fini = scratch_remove, .timeout = 240);

static char out[1 << 16];

Test(history_e2e, export_import_backtest_of_a_generated_week_meets_the_truth)
{
	int rc = capture("tests/history.sh", out, sizeof out);
	if (rc == 77)
		cr_skip_test("%s", out);
	cr_assert_eq(rc, 0, "%s", out);
	cr_expect(strstr(out, "pods read back equal truth.pods.csv"), "%s", out);
	cr_expect_null(strstr(out, "FAIL"), "%s", out);
}

/* The replay keeps the twin's rules: a workload pinned to pool l4 by its
 * node selector waits there for the one GPU, as it did, although pool h100
 * has a free one (the replay once dropped the selector, tolerations,
 * affinity and windows: scenario_replay zeroes the workload before
 * ld_copy_rules, which copied the arrays but not their counts). */
Test(history_e2e, backtest_replay_keeps_the_node_selector)
{
	static const char twin[] =
		"name: pinned\n"
		"history: {from: 2026-11-02T00:00:00Z, to: 2026-11-02T03:00:00Z, pods: pinned.pods.csv}\n"
		"pools:\n"
		"  - {name: l4, nodes: 1, gpu: L4, gpus_per_node: 1}\n"
		"  - {name: h100, nodes: 1, gpu: H100-80GB, gpus_per_node: 1}\n"
		"workloads:\n"
		"  - {name: nb, gpus: 1, duration: 1h, arrival: {at: \"00:00\"},\n"
		"     node_selector: {nvidia.com/gpu.product: NVIDIA-L4}}\n";
	static const char pods[] =
		"workload,namespace,pod,node,created_s,scheduled_s,finished_s,gpus,cpu_milli,"
		"memory_bytes,phase\n"
		"nb,team-a,nb-0,l4-0,0,0,3600,1,0,0,Deleted\n"
		"nb,team-a,nb-0,l4-0,60,3600,7200,1,0,0,Deleted\n";
	char path[128], cmd[512];
	snprintf(path, sizeof path, "%s/pinned.yaml", dir);
	FILE *f = fopen(path, "w");
	cr_assert_not_null(f);
	fputs(twin, f);
	fclose(f);
	snprintf(path, sizeof path, "%s/pinned.pods.csv", dir);
	f = fopen(path, "w");
	cr_assert_not_null(f);
	fputs(pods, f);
	fclose(f);
	/* nb-0 twice: a StatefulSet's pod created again is another pod. */
	snprintf(cmd, sizeof cmd, "bin/gpuplan backtest %s/pinned.yaml --db %s/bt.db", dir, dir);
	int rc = capture(cmd, out, sizeof out);
	cr_assert_eq(rc, 0, "%s", out);
	snprintf(path, sizeof path, "%s/bt.db", dir);
	cr_expect_eq(scratch_query(path, "SELECT CAST(simulated AS INT) FROM backtest WHERE "
					 "scope = 'nb' AND metric = 'queue_time_mean_s'"),
		     (3600 - 60) / 2, "%s", out);
	cr_expect_eq(scratch_query(path, "SELECT CAST(simulated AS INT) FROM backtest WHERE "
					 "scope = 'nb' AND metric = 'peak_allocated_gpus'"),
		     1, "%s", out);
}

/* Runs the export against tests/history/stub_prom.py, which fails the
 * queries matching fail (a regex) with Prometheus' error body; returns the
 * script's exit code, its output in out. */
static int export_against_stub(const char *fail)
{
	char cmd[2048];
	snprintf(cmd, sizeof cmd,
		 "{ python3 tests/history/stub_prom.py %s/port '%s' & pid=$!; "
		 "for i in $(seq 1 100); do [ -s %s/port ] && break; sleep 0.05; done; "
		 "scripts/export-history.sh http://127.0.0.1:$(cat %s/port) 2026-11-02T00:00:00Z "
		 "2026-11-09T00:00:00Z %s/out.d; rc=$?; kill $pid; exit $rc; }",
		 dir, fail, dir, dir, dir);
	return capture(cmd, out, sizeof out);
}

/* A required query that Prometheus refuses stops the export: exit 2, the
 * file, the query and Prometheus' own error, and no meta.json (nothing is
 * moved into the folder). */
Test(history_e2e, export_stops_at_a_failed_required_query)
{
	if (system("command -v python3 >/dev/null 2>&1") != 0)
		cr_skip_test("python3 is not installed");
	int rc = export_against_stub("kube_pod_owner");
	cr_expect_eq(rc, 2, "%s", out);
	cr_expect(strstr(out, "error: pod_owner.json: the query failed: "
			      "max_over_time(kube_pod_owner[604800s])\n"
			      "  HTTP 422: stub: refusing max_over_time(kube_pod_owner[604800s])"),
		  "%s", out);
	char cmd[256];
	snprintf(cmd, sizeof cmd, "test -z \"$(ls -A %s/out.d)\"", dir);
	cr_expect_eq(system(cmd), 0, "the folder is left empty");
}

/* An optional one is skipped with a note, and meta.json lists it under
 * skipped with the reason, the query's quotes unescaped once. */
Test(history_e2e, export_skips_a_failed_optional_query)
{
	if (system("command -v python3 >/dev/null 2>&1") != 0)
		cr_skip_test("python3 is not installed");
	int rc = export_against_stub("DCGM_FI_PROF_SM_ACTIVE");
	cr_assert_eq(rc, 0, "%s", out);
	cr_expect(strstr(out, "note: dcgm_sm.json skipped (optional)"), "%s", out);
	cr_expect(strstr(out, "25 queries, 2026-11-02T00:00:00Z..2026-11-09T00:00:00Z"), "%s", out);
	char path[128];
	snprintf(path, sizeof path, "%s/out.d/meta.json", dir);
	size_t n;
	char *meta = scratch_slurp(path, &n);
	cr_assert_not_null(meta);
	cr_expect(strstr(meta,
			 "\"dcgm_sm.json\":\"HTTP 422: stub: refusing avg by (namespace, pod) "
			 "(avg_over_time(DCGM_FI_PROF_SM_ACTIVE{pod!=\\\"\\\"}[604800s]))\""),
		  "%s", meta);
	cr_expect(
		strstr(meta, "\"format\":\"gpuplan-history/1\",\"from\":\"2026-11-02T00:00:00Z\""),
		"%s", meta);
	free(meta);
}

/* The committed export (tests/fixtures/history, written by
 * tests/history/make-fixture.sh from a real Prometheus) still reads back as
 * the generator recorded it: the importer's tests rest on it. */
Test(history_e2e, committed_fixture_reads_back_as_its_truth)
{
	if (system("command -v python3 >/dev/null 2>&1") != 0)
		cr_skip_test("python3 is not installed");
	int rc = capture(
		"python3 tests/history/check_export.py tests/fixtures/history tests/fixtures/history",
		out, sizeof out);
	cr_assert_eq(rc, 0, "%s", out);
	cr_expect(strstr(out, "58 pods read back equal truth.pods.csv"), "%s", out);
}

Test(history_e2e, export_script_rejects_bad_arguments_with_exit_2)
{
	static const struct {
		const char *args, *says;
	} cases[] = {
		{"", "usage: scripts/export-history.sh URL FROM TO DIR"},
		{"http://127.0.0.1:9 2026-11-02 2026-11-09T00:00:00Z D",
		 "FROM: '2026-11-02' is not an RFC 3339 time"},
		{"http://127.0.0.1:9 2026-11-02T00:00:00Z 2026-02-30T00:00:00Z D",
		 "TO: '2026-02-30T00:00:00Z' is not a valid date and time"},
		{"http://127.0.0.1:9 2026-11-09T00:00:00Z 2026-11-02T00:00:00+01:00 D",
		 "FROM (2026-11-09T00:00:00Z) must be before TO"},
		{"127.0.0.1:9 2026-11-02T00:00:00Z 2026-11-09T00:00:00Z D",
		 "URL: '127.0.0.1:9' is not an http:// or https:// URL"},
		{"http://127.0.0.1:9 2026-11-02T00:00:00Z 2026-11-09T00:00:00Z D",
		 "URL: http://127.0.0.1:9 does not answer as a Prometheus HTTP API"},
	};
	char cwd[256];
	cr_assert_not_null(getcwd(cwd, sizeof cwd));
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		char cmd[512];
		snprintf(cmd, sizeof cmd, "cd %s && %s/scripts/export-history.sh %s", dir, cwd,
			 cases[i].args);
		int rc = capture(cmd, out, sizeof out);
		cr_expect_eq(rc, 2, "%s: exit %d\n%s", cases[i].args, rc, out);
		cr_expect(strstr(out, cases[i].says), "%s: expected \"%s\", got:\n%s",
			  cases[i].args, cases[i].says, out);
	}
	/* Nothing written where nothing could be read. */
	char cmd[256];
	snprintf(cmd, sizeof cmd, "test ! -e %s/D/meta.json", dir);
	cr_expect_eq(system(cmd), 0);
}
