/*
 * test_history.c - what makes a scenario a twin (docs/scenario.md, "Twins and
 * placeholders"; docs/import.md, "Learning a twin"): the history section, the
 * !placeholder values the loader records with their key paths and reasons,
 * and the observed pods CSV reader.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "gpuplan/history.h"
#include "gpuplan/scenario.h"

#include <math.h>

static char dir[64];
static char path[128];

static void make_dir(void)
{
	strcpy(dir, "/tmp/gpuplan-history-XXXXXX");
	cr_assert_not_null(mkdtemp(dir));
	snprintf(path, sizeof path, "%s/twin.yaml", dir);
}

static void remove_dir(void)
{
	char cmd[160];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
	cr_assert_eq(system(cmd), 0);
}

TestSuite(history, .init = make_dir, .fini = remove_dir);

static void write_file(const char *name, const char *text)
{
	char p[256];
	snprintf(p, sizeof p, "%s/%s", dir, name);
	FILE *f = fopen(p, "w");
	cr_assert_not_null(f, "cannot write %s", p);
	fputs(text, f);
	fclose(f);
}

static int load_text(const char *text, struct scenario **sc, struct gp_err *err)
{
	write_file("twin.yaml", text);
	return scenario_load(path, NULL, 0, sc, err);
}

#define TWIN_HEAD      \
	"name: twin\n" \
	"pools: [{name: gpu, nodes: 1, gpu: A100-80GB, gpus_per_node: 2}]\n"

Test(history, the_history_section_makes_a_twin)
{
	struct scenario *sc = NULL;
	struct gp_err err GP_ERR_SCOPE = {0};
	int rc = load_text(TWIN_HEAD
			   "history:\n"
			   "  from: 2026-11-02T00:00:00Z\n"
			   "  to: 2026-11-09T00:00:00Z\n"
			   "  pods: twin.pods.csv\n"
			   "workloads: [{name: w, arrival: {at: \"00:00\"}, duration: 1h}]\n",
			   &sc, &err);
	cr_assert_eq(rc, GP_OK, "%s", err.msg);
	cr_assert(sc->history.on);
	cr_assert_eq(sc->history.from_epoch, INT64_C(1793577600));
	cr_assert_eq(sc->history.to_epoch - sc->history.from_epoch, 7 * 86400);
	char want[256];
	snprintf(want, sizeof want, "%s/twin.pods.csv", dir);
	cr_assert_str_eq(sc->history.pods_path, want);
	cr_assert_eq(sc->n_placeholders, 0);
	scenario_free(sc);
}

Test(history, a_scenario_without_history_is_not_a_twin)
{
	struct scenario *sc = NULL;
	struct gp_err err GP_ERR_SCOPE = {0};
	cr_assert_eq(load_text(TWIN_HEAD "workloads: [{name: w, arrival: {at: \"00:00\"}, "
					 "duration: 1h}]\n",
			       &sc, &err),
		     GP_OK, "%s", err.msg);
	cr_assert_not(sc->history.on);
	cr_assert_null(sc->history.pods_path);
	scenario_free(sc);
}

static void history_fails(const char *history, const char *msg)
{
	char text[1024];
	snprintf(text, sizeof text,
		 TWIN_HEAD "history: %s\nworkloads: [{name: w, arrival: {at: \"00:00\"}, "
			   "duration: 1h}]\n",
		 history);
	struct scenario *sc = NULL;
	struct gp_err err GP_ERR_SCOPE = {0};
	cr_assert_eq(load_text(text, &sc, &err), GP_EINPUT, "expected an error for %s", history);
	cr_assert_null(sc);
	char want[512];
	snprintf(want, sizeof want, "%s/twin.yaml:%s", dir, msg);
	cr_assert_str_eq(err.msg, want);
}

Test(history, history_errors_are_located)
{
	history_fails("{from: 2026-11-02T00:00:00Z, to: 2026-11-01T00:00:00Z, pods: p.csv}",
		      "3:43: error: history ends at or before it begins; expected `to` after "
		      "`from`");
	history_fails("{from: 2026-11-02T00:00:00Z, pods: p.csv}",
		      "3:10: error: missing key 'to' in history; expected to: "
		      "2026-11-09T00:00:00Z");
	history_fails("{from: yesterday, to: 2026-11-01T00:00:00Z, pods: p.csv}",
		      "3:17: error: invalid from 'yesterday'; expected an RFC 3339 time like "
		      "2026-10-27T00:00:00Z");
	history_fails("{from: 2026-11-01T00:00:00Z, to: 2026-11-02T00:00:00Z, pod: p.csv}",
		      "3:65: error: unknown key 'pod' in history; did you mean 'pods'?");
}

Test(history, placeholders_are_listed_with_path_value_and_reason)
{
	struct scenario *sc = NULL;
	struct gp_err err GP_ERR_SCOPE = {0};
	int rc = load_text(TWIN_HEAD "workloads:\n"
				     "  - name: finetune\n"
				     "    gpus: 1\n"
				     "    duration: !placeholder 6h   # no finished sibling\n"
				     "    arrival: {process: poisson, rate: !placeholder 1/h}\n"
				     "    count: 3\n"
				     "  - name: eval\n"
				     "    duration: !placeholder  # the horizon\n"
				     "      dist: fixed\n"
				     "      mean: 30m\n"
				     "    arrival: {at: \"00:00\"}\n",
			   &sc, &err);
	cr_assert_eq(rc, GP_OK, "%s", err.msg);
	cr_assert_eq(sc->n_placeholders, 3);
	const struct placeholder *p = sc->placeholders;
	cr_assert_str_eq(p[0].path, "workloads[finetune].duration");
	cr_assert_str_eq(p[0].value, "6h");
	cr_assert_str_eq(p[0].reason, "no finished sibling");
	cr_assert_eq(p[0].loc.line, 6);
	cr_assert_str_eq(p[1].path, "workloads[finetune].arrival.rate");
	cr_assert_str_eq(p[1].value, "1/h");
	cr_assert_str_eq(p[1].reason, "not learned");
	cr_assert_str_eq(p[2].path, "workloads[eval].duration");
	cr_assert_str_eq(p[2].value, "{dist: fixed, mean: 30m}");
	cr_assert_str_eq(p[2].reason, "the horizon");
	/* The values are used as written. */
	cr_assert_eq(sc->workloads[0].duration.mean, 6 * 3600);
	cr_assert_float_eq(sc->workloads[0].arrival.rate, 1.0 / 3600, 1e-12);
	cr_assert_eq(sc->workloads[1].duration.mean, 1800);
	cr_assert_eq(scenario_placeholder(sc, "workloads[finetune].duration"), &p[0]);
	cr_assert_eq(scenario_placeholder(sc, "workloads[finetune]"), &p[0]);
	cr_assert_eq(scenario_placeholder(sc, "workloads[eval].duration"), &p[2]);
	cr_assert_null(scenario_placeholder(sc, "workloads[fine]"));
	cr_assert_null(scenario_placeholder(sc, "workloads[eval].gpus"));
	scenario_free(sc);
}

Test(history, a_set_override_may_be_a_placeholder)
{
	write_file("twin.yaml", TWIN_HEAD "workloads: [{name: w, arrival: {at: \"00:00\"}, "
					  "duration: 1h}]\n");
	const char *sets[] = {"workloads.w.duration=!placeholder 2h"};
	struct scenario *sc = NULL;
	struct gp_err err GP_ERR_SCOPE = {0};
	cr_assert_eq(scenario_load(path, sets, 1, &sc, &err), GP_OK, "%s", err.msg);
	cr_assert_eq(sc->n_placeholders, 1);
	cr_assert_str_eq(sc->placeholders[0].path, "workloads[w].duration");
	cr_assert_str_eq(sc->placeholders[0].value, "2h");
	cr_assert_eq(sc->workloads[0].duration.mean, 7200);
	scenario_free(sc);
}

/* --- the observed pods CSV (history.h) ---------------------------------------- */

#define PODS_HEADER                                                                    \
	"workload,namespace,pod,node,created_s,scheduled_s,finished_s,gpus,cpu_milli," \
	"memory_bytes,phase\n"

static int read_pods(const char *text, struct history_pod **pods, size_t *n, struct gp_err *err)
{
	write_file("p.csv", text);
	char p[256];
	snprintf(p, sizeof p, "%s/p.csv", dir);
	return history_read_pods(p, (struct srcloc){"twin.yaml", 5, 10}, 7200, pods, n, err);
}

Test(history, observed_pods_are_read_with_censored_times)
{
	struct history_pod *pods = NULL;
	size_t n = 0;
	struct gp_err err GP_ERR_SCOPE = {0};
	int rc =
		read_pods("# written by import --history\n"
			  "phase,workload,namespace,pod,node,created_s,scheduled_s,finished_s,gpus,"
			  "cpu_milli,memory_bytes\n"
			  "Running,train,ml,train-a,node-1,-900.5,-600,,2,4000,17179869184\n"
			  "\n"
			  "Pending,train,ml,train-b,,60,,,1,0,0\n",
			  &pods, &n, &err);
	cr_assert_eq(rc, GP_OK, "%s", err.msg);
	cr_assert_eq(n, 2);
	cr_expect_str_eq(pods[0].workload, "train");
	cr_expect_str_eq(pods[0].namespace_, "ml");
	cr_expect_str_eq(pods[0].pod, "train-a");
	cr_expect_str_eq(pods[0].node, "node-1");
	cr_expect_eq(pods[0].created_s, -900.5);
	cr_expect_eq(pods[0].scheduled_s, -600);
	cr_expect(isnan(pods[0].finished_s), "still running: censored");
	cr_expect_eq(pods[0].gpus, 2);
	cr_expect_eq(pods[0].cpu_milli, 4000);
	cr_expect_eq(pods[0].memory_bytes, 17179869184.0);
	cr_expect_eq(pods[0].phase, HISTORY_RUNNING);
	cr_expect_eq(pods[0].line, 3);
	cr_expect_str_eq(pods[1].node, "");
	cr_expect(isnan(pods[1].scheduled_s));
	cr_expect_eq(pods[1].phase, HISTORY_PENDING);
	history_free_pods(pods, n);
}

static void pods_fail(const char *rows, const char *msg)
{
	char text[2048];
	snprintf(text, sizeof text, PODS_HEADER "%s", rows);
	struct history_pod *pods = NULL;
	size_t n = 0;
	struct gp_err err GP_ERR_SCOPE = {0};
	cr_assert_eq(read_pods(text, &pods, &n, &err), GP_EINPUT, "expected an error for %s", rows);
	cr_assert_null(pods);
	char want[512];
	snprintf(want, sizeof want, "%s/p.csv:%s", dir, msg);
	cr_expect_str_eq(err.msg, want);
}

Test(history, bad_rows_are_errors_at_their_line)
{
	pods_fail("train,ml,a,n,x,,,1,0,0,Running\n",
		  "2: error: expected a number of seconds in column created_s, got 'x'");
	pods_fail("train,ml,\"a,n,10,5,,1,0,0,Running\n",
		  "2: error: a quoted cell is not closed by the end of the file");
	pods_fail("train,ml,\"a\"x,n,10,5,,1,0,0,Running\n",
		  "2: error: a quoted cell is not closed, or text follows its closing quote; "
		  "expected \"...\" with \"\" for a quote");
	pods_fail("train,ml,a,n,10,20,15,1,0,0,Succeeded\n",
		  "2: error: finished_s '15' is before scheduled_s '20'; expected a pod that ends "
		  "after it started");
	pods_fail("train,ml,a,n,10,20,9000,1,0,0,Succeeded\n",
		  "2: error: finished_s '9000' is after the history's end (7200 s); expected "
		  "seconds since its start up to its end");
	pods_fail("train,ml,a,n,10,20,30,1,0,0,Done\n",
		  "2: error: unknown phase 'Done'; expected Succeeded, Failed, Running, Pending "
		  "or Deleted");
	pods_fail("train,ml,a,n,10,20,30,-1,0,0,Succeeded\n",
		  "2: error: expected a whole number of GPUs >= 0 in column gpus, got '-1'");
	pods_fail("train,ml,a,n,10,20,30,1,0\n",
		  "2: error: expected 11 columns (workload,namespace,pod,node,created_s,"
		  "scheduled_s,finished_s,gpus,cpu_milli,memory_bytes,phase), got 9");
	pods_fail(",ml,a,n,10,20,30,1,0,0,Succeeded\n",
		  "2: error: empty workload; expected the name of a workload of the scenario");
	pods_fail("train,ml,a,n,10,20,30,1,0,0,Succeeded\ntrain,ml,a,n,10,20,30,1,0,0,"
		  "Succeeded\n",
		  "3: error: pod ml/a is listed twice (first at line 2); expected one row per pod");
}

Test(history, quoted_cells_and_a_scheduling_clock_skew_are_read)
{
	struct history_pod *pods = NULL;
	size_t n = 0;
	struct gp_err err GP_ERR_SCOPE = {0};
	int rc = read_pods(PODS_HEADER "w,\"odd\"\"ns\n- x\",\"p,1\",n,-3600,-3630,100,1,0,0,"
				       "Succeeded\nw,ml,p2,n,10,20,30,1,0,0,Succeeded\n",
			   &pods, &n, &err);
	cr_assert_eq(rc, GP_OK, "%s", err.msg);
	cr_assert_eq(n, 2);
	cr_expect_str_eq(pods[0].namespace_, "odd\"ns\n- x");
	cr_expect_str_eq(pods[0].pod, "p,1");
	cr_expect_eq(pods[0].scheduled_s, -3600, "scheduled 30 s before its creation: at it");
	cr_expect_eq(pods[0].line, 2);
	cr_expect_eq(pods[1].line, 4, "the quoted line end counts");
	history_free_pods(pods, n);
}

Test(history, a_bad_header_or_a_missing_file_is_an_error)
{
	struct history_pod *pods = NULL;
	size_t n = 0;
	struct gp_err err GP_ERR_SCOPE = {0};
	cr_assert_eq(
		read_pods("workload,namespace,pod,node,created,scheduled_s\n", &pods, &n, &err),
		GP_EINPUT);
	char want[512];
	snprintf(want, sizeof want,
		 "%s/p.csv:1: error: unknown column 'created'; expected the header "
		 "workload,namespace,pod,node,created_s,scheduled_s,finished_s,gpus,cpu_milli,"
		 "memory_bytes,phase",
		 dir);
	cr_expect_str_eq(err.msg, want);
	cr_assert_eq(history_read_pods("/nonexistent/p.csv", (struct srcloc){"twin.yaml", 5, 10},
				       7200, &pods, &n, &err),
		     GP_EINPUT);
	cr_expect_str_eq(err.msg, "twin.yaml:5:10: error: cannot read the observed pods "
				  "/nonexistent/p.csv: No such file or directory");
}
