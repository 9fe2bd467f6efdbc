/*
 * test_history.c - what makes a scenario a twin (docs/scenario.md, "Twins and
 * placeholders"; TWIN-CONTRACT sections 2 and 3): the history section, the
 * !placeholder values the loader records with their key paths and reasons,
 * and the observed pods CSV reader.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "gpuplan/scenario.h"

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
	struct gp_err err = {""};
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
	struct gp_err err = {""};
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
	struct gp_err err = {""};
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
	struct gp_err err = {""};
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
	struct gp_err err = {""};
	cr_assert_eq(scenario_load(path, sets, 1, &sc, &err), GP_OK, "%s", err.msg);
	cr_assert_eq(sc->n_placeholders, 1);
	cr_assert_str_eq(sc->placeholders[0].path, "workloads[w].duration");
	cr_assert_str_eq(sc->placeholders[0].value, "2h");
	cr_assert_eq(sc->workloads[0].duration.mean, 7200);
	scenario_free(sc);
}
