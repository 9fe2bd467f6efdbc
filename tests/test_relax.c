/*
 * test_relax.c - the table of what binds and how it is relaxed (relax.h):
 * one row per kind, keys with names filled in, current values as scenario
 * text, and the relaxations of the rows that have one.
 */
#include "gpuplan/relax.h"

#include "run.h"

#include <criterion/criterion.h>
#include <string.h>

TestSuite(relax, .fini = cleanup);

/* relax_key and relax_value of c, kept until the next call (they are malloc'd). */
static const char *key_of(const struct constraint *c)
{
	static char *last;
	free(last);
	return last = relax_key(sc, c);
}

static const char *value_of(const struct constraint *c)
{
	static char *last;
	free(last);
	return last = relax_value(sc, c);
}

Test(relax, has_one_row_per_kind_in_enum_order)
{
	for (int k = 0; k < CONSTRAINT_KINDS; k++) {
		const struct relax_row *row = relax_row_of((enum constraint_kind)k);
		cr_assert_not_null(row);
		cr_assert_eq(row->kind, (enum constraint_kind)k, "row %d", k);
		cr_assert_not_null(row->key, "%d", k);
		cr_assert_not_null(row->relaxation, "%d", k);
		cr_assert_not_null(row->cost, "%d", k);
		cr_assert_not_null(constraint_kind_name((enum constraint_kind)k));
		cr_assert_eq(constraint_kind_of(constraint_kind_name((enum constraint_kind)k)), k);
		for (int j = 0; j < k; j++)
			cr_assert_str_neq(relax_table[j].key, row->key, "one row per key: %s",
					  row->key);
	}
	cr_assert_null(relax_row_of(CONSTRAINT_KINDS));
	cr_assert_eq(constraint_kind_of("no-such-kind"), -1);
}

Test(relax, fills_the_names_of_a_key)
{
	run("tests/fixtures/diagnosis/lending.yaml", NULL, 0);
	struct constraint c = relax_about(CONSTRAINT_LENDING_LIMIT, -1, 0, 1);
	cr_assert_str_eq(key_of(&c), "queues.team-b.lending_limit");
	cr_assert_str_eq(value_of(&c), "0");
	c.kind = CONSTRAINT_QUOTA;
	cr_assert_str_eq(value_of(&c), "12");
	c.kind = CONSTRAINT_BORROWING_LIMIT; /* no limit */
	cr_assert_str_eq(value_of(&c), "none");
	c.kind = CONSTRAINT_STARTUP;
	cr_assert_str_eq(key_of(&c), "workloads.a.startup");
	c = relax_about(CONSTRAINT_CAPACITY, -1, -1, -1); /* no pool: the letter stays */
	cr_assert_str_eq(key_of(&c), "pools.P.nodes");
	c.pool = 0;
	cr_assert_str_eq(key_of(&c), "pools.h100.nodes");
	cr_assert_str_eq(value_of(&c), "2");
}

/* Each key shows its own value: a MIG layout its list, a replica count its
 * number, and the VRAM of a pod without a model its request under
 * workloads.W.vram (there are no weights to narrow); with a model, the
 * weights' format under workloads.W.quantization. */
Test(relax, a_key_shows_its_own_value)
{
	run("tests/fixtures/diagnose/mig-layout.yaml", NULL, 0);
	struct constraint c = relax_about(CONSTRAINT_MIG_PROFILE, 2, 1, -1);
	cr_expect_str_eq(key_of(&c), "pools.mig.sharing.layout");
	cr_expect_str_eq(value_of(&c), "[3g.40gb, 2g.20gb, 2g.20gb]");
	c = relax_about(CONSTRAINT_VRAM, -1, 1, -1);
	cr_expect_str_eq(key_of(&c), "workloads.nb.vram");
	cr_expect_str_eq(relax_relaxation(sc, &c),
			 "a unit with more memory: fewer replicas per GPU, a larger MIG profile "
			 "or a GPU type with more");
	cleanup();
	run("tests/fixtures/diagnosis/contention.yaml", NULL, 0);
	c = relax_about(CONSTRAINT_CONTENTION, 0, 0, -1);
	cr_expect_str_eq(key_of(&c), "pools.a10.sharing.replicas");
	cr_expect_str_eq(value_of(&c), "8");
	c = relax_about(CONSTRAINT_VRAM, -1, 0, -1);
	cr_expect_str_eq(value_of(&c), "4GiB");
	cleanup();
	run("tests/fixtures/diagnosis/kv-cache.yaml", NULL, 0);
	c = relax_about(CONSTRAINT_VRAM, -1, 0, -1);
	cr_expect_str_eq(key_of(&c), "workloads.chat.quantization");
	cr_expect_str_eq(value_of(&c), "fp16");
	cr_expect_str_eq(relax_relaxation(sc, &c), relax_table[CONSTRAINT_VRAM].relaxation);
}

Test(relax, lends_what_an_idle_lender_keeps)
{
	run("tests/fixtures/diagnosis/lending.yaml", NULL, 0);
	struct finding f = {0};
	struct constraint c = relax_about(CONSTRAINT_LENDING_LIMIT, -1, -1, 1);
	cr_assert_eq(relax_constraint(sc, &r, &c, &f), 1);
	cr_assert_str_eq(f.fixes[0].label, "lending limit of team-b at 12 GPUs");
	cr_assert_str_eq(f.fixes[0].sets[0].key, "queues.team-b.lending_limit");
	cr_assert_str_eq(f.fixes[0].sets[0].value, "{\"nvidia.com/gpu\": 12}");
	c.queue = 0; /* team-a lends all it has: nothing to relax */
	cr_assert_eq(relax_constraint(sc, &r, &c, &f), 0);
	finding_free(&f);
}

Test(relax, raises_quota_by_a_waiting_jobs_gpus)
{
	run("tests/fixtures/diagnosis/lending.yaml", NULL, 0);
	struct finding f = {0};
	struct constraint c = relax_about(CONSTRAINT_QUOTA, -1, 0, 0);
	cr_assert_eq(relax_constraint(sc, &r, &c, &f), 1);
	cr_assert_str_eq(f.fixes[0].label, "quota of team-a at 5 GPUs"); /* 4 + one 1-GPU job */
	cr_assert_str_eq(f.fixes[0].sets[0].key, "queues.team-a.quota");
	cr_assert_str_eq(f.fixes[0].sets[0].value, "{nvidia.com/gpu: 5}");
	finding_free(&f);
}

/* A queue's constraint that names no workload (relax_binding's) grows the
 * quota by its smallest job: 2-GPU jobs behind 16 GPUs need 18 (17 admitted
 * none of them, and advise ran it as a row that changed nothing). */
Test(relax, raises_a_queues_quota_by_its_smallest_job)
{
	run("tests/fixtures/diagnosis/sized-then-evicted.yaml", NULL, 0);
	struct finding f = {0};
	struct constraint c = relax_about(CONSTRAINT_QUOTA, -1, -1, 0);
	cr_assert_eq(relax_constraint(sc, &r, &c, &f), 1);
	cr_assert_str_eq(f.fixes[0].label, "quota of ml at 18 GPUs");
	finding_free(&f);
}

Test(relax, tolerates_the_taint_that_hides_a_pool)
{
	run("tests/fixtures/diagnosis/taint.yaml", NULL, 0);
	struct finding f = {0};
	struct constraint c = relax_about(CONSTRAINT_TAINT, -1, 0, -1);
	cr_assert_eq(relax_constraint(sc, &r, &c, &f), 1);
	cr_assert_str_eq(f.fixes[0].label, "batch tolerating team=research");
	cr_assert_str_eq(f.fixes[0].sets[0].key, "workloads.batch.tolerations");
	cr_assert_str_eq(
		f.fixes[0].sets[0].value,
		"[{key: \"team\", operator: Equal, value: \"research\", effect: NoSchedule}]");
	cr_assert_str_eq(key_of(&c), "workloads.batch.tolerations");
	finding_free(&f);
}

Test(relax, a_row_without_a_function_adds_nothing)
{
	run("tests/fixtures/diagnosis/taint.yaml", NULL, 0);
	struct finding f = {0};
	struct constraint c = relax_about(CONSTRAINT_CAPACITY, 0, 0, -1);
	cr_assert_null(relax_table[CONSTRAINT_CAPACITY].relax);
	cr_assert_eq(relax_constraint(sc, &r, &c, &f), 0);
	cr_assert_eq(f.n_fixes, 0);
}

/* --- diagnosis: the binding constraint first (relax_findings) ------------- */

Test(relax, the_lenders_limit_is_named_in_the_cohort_finding)
{
	run("tests/fixtures/diagnosis/lending.yaml", NULL, 0);
	cr_assert_geq(r.n_findings, 1);
	const struct finding *f = &r.findings[0];
	cr_expect_eq(f->kind, KIND_ADMISSION, "the detector's finding of the same cause");
	cr_expect_eq(f->constraint, CONSTRAINT_LENDING_LIMIT);
	cr_expect_str_eq(f->key, "queues.team-b.lending_limit");
	cr_expect_str_eq(f->value, "0");
	cr_expect_str_eq(f->relaxed, "{\"nvidia.com/gpu\": 12}");
	cr_expect_float_eq(f->pod_hours, 8.0, 1e-9, "four jobs wait 2 h");
	cr_expect(strstr(f->text, "queues.team-b.lending_limit = 0 binds 8.0 pod-hours"), "%s",
		  f->text);
}

Test(relax, unreclaimed_lent_quota_is_not_capacity)
{
	run("tests/fixtures/bind/reclaim.yaml", NULL, 0);
	cr_assert_geq(r.n_findings, 1);
	cr_expect_str_eq(r.findings[0].key, "queues.team-a.preemption.reclaim_within_cohort");
	cr_expect_str_eq(r.findings[0].value, "Never");
	cr_expect_float_eq(r.findings[0].pod_hours, 9.0, 1e-9);
	for (size_t i = 0; i < r.n_findings; i++)
		cr_expect_neq(r.findings[i].kind, KIND_CAPACITY, "finding %zu", i);
}

Test(relax, contention_no_detector_names_is_the_first_finding)
{
	RUN_WITH("tests/fixtures/bind/contention.yaml", "workloads.j.deadline={within: 1h30m}");
	cr_assert_eq(r.n_findings, 1, "no capacity finding: nothing waited on busy GPUs");
	const struct finding *f = &r.findings[0];
	cr_expect_eq(f->constraint, CONSTRAINT_CONTENTION, "the contention finding names it");
	cr_expect_str_eq(f->key, "pools.ts.sharing.replicas");
	cr_expect_float_eq(f->pod_hours, 2.2, 1e-9, "2 x (2.1 h - 1 h)");
	cr_expect_str_eq(f->value, "2", "the replicas the key names");
}

Test(relax, start_up_no_detector_names_is_the_first_finding)
{
	RUN_WITH("tests/fixtures/bind/startup.yaml", "workloads.j.deadline={within: 1h5m}");
	cr_assert_eq(r.n_findings, 1);
	cr_expect_str_eq(r.findings[0].key, "workloads.j.startup");
	cr_expect_str_eq(r.findings[0].value, "10m");
	cr_expect_float_eq(r.findings[0].pod_hours, 1200 / 3600.0, 1e-9);
}

Test(relax, a_healthy_run_has_no_finding_though_time_was_bound)
{
	run("tests/fixtures/bind/startup.yaml", NULL, 0);
	cr_expect_eq(r.n_findings, 0);
	cr_expect_eq(r.n_constraints, 1, "the start-up is still recorded");
}

/* docs/diagnosis.md's table "What binds, and how it is relaxed" is this
 * table, row by row, so the two cannot drift. */
Test(relax, the_docs_table_is_the_relax_table)
{
	FILE *f = fopen("docs/diagnosis.md", "r");
	cr_assert_not_null(f);
	static char doc[1 << 18];
	size_t n = fread(doc, 1, sizeof doc - 1, f);
	fclose(f);
	doc[n] = '\0';
	const char *head = strstr(doc, "| kind | key | minimal relaxation | what it costs | "
				       "non-stock |\n|---|---|---|---|---|\n");
	cr_assert_not_null(head, "the table's header");
	const char *at = strchr(strchr(head, '\n') + 1, '\n') + 1;
	for (int k = 0; k < CONSTRAINT_KINDS; k++) {
		const struct relax_row *row = &relax_table[k];
		char want[1024];
		snprintf(want, sizeof want, "| %s | `%s` | %s | %s | %s |\n",
			 constraint_kind_name(row->kind), row->key, row->relaxation, row->cost,
			 row->non_stock ? "yes" : "no");
		cr_assert(!strncmp(at, want, strlen(want)), "row %d: want %s", k, want);
		at += strlen(want);
	}
	cr_expect(*at != '|', "no row beyond the table's");
}

/* A value longer than any buffer a caller might have kept comes out whole:
 * a node selector of 24 labels of 60-character values. */
Test(relax, a_long_value_comes_out_whole)
{
	struct gp_sbuf set = {0}, want = {0};
	gp_sb_printf(&set, "workloads.train.node_selector={");
	gp_sb_printf(&want, "{");
	for (int i = 0; i < 24; i++) {
		gp_sb_printf(&set, "%sk%02d: %060d", i ? ", " : "", i, i);
		gp_sb_printf(&want, "%sk%02d: %060d", i ? ", " : "", i, i);
	}
	gp_sb_printf(&set, "}");
	gp_sb_printf(&want, "}");
	const char *sets[] = {set.s};
	run("tests/fixtures/diagnosis/selector.yaml", sets, 1);
	struct constraint c = relax_about(CONSTRAINT_NODE_SELECTOR, -1, 0, -1);
	cr_expect_gt(strlen(want.s), 1024);
	cr_expect_str_eq(value_of(&c), want.s);
	cr_expect_str_eq(key_of(&c), "workloads.train.node_selector");
	free(set.s);
	free(want.s);
}
