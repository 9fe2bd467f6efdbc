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
