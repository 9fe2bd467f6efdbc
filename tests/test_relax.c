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
	char key[128], value[64];
	struct constraint c = relax_about(CONSTRAINT_LENDING_LIMIT, -1, 0, 1);
	cr_assert_str_eq(relax_key(sc, &c, key, sizeof key), "queues.team-b.lending_limit");
	cr_assert_str_eq(relax_value(sc, &c, value, sizeof value), "0");
	c.kind = CONSTRAINT_QUOTA;
	cr_assert_str_eq(relax_value(sc, &c, value, sizeof value), "12");
	c.kind = CONSTRAINT_BORROWING_LIMIT; /* no limit */
	cr_assert_str_eq(relax_value(sc, &c, value, sizeof value), "none");
	c.kind = CONSTRAINT_STARTUP;
	cr_assert_str_eq(relax_key(sc, &c, key, sizeof key), "workloads.a.startup");
	c = relax_about(CONSTRAINT_CAPACITY, -1, -1, -1); /* no pool: the letter stays */
	cr_assert_str_eq(relax_key(sc, &c, key, sizeof key), "pools.P.nodes");
	c.pool = 0;
	cr_assert_str_eq(relax_key(sc, &c, key, sizeof key), "pools.h100.nodes");
	cr_assert_str_eq(relax_value(sc, &c, value, sizeof value), "2");
	cr_assert_str_eq(relax_key(sc, &c, key, 6), "pools"); /* cut, NUL-terminated */
}

Test(relax, lends_what_an_idle_lender_keeps)
{
	run("tests/fixtures/diagnosis/lending.yaml", NULL, 0);
	struct finding f = {0};
	struct constraint c = relax_about(CONSTRAINT_LENDING_LIMIT, -1, -1, 1);
	cr_assert_eq(relax_constraint(sc, &r, &c, &f), 1);
	cr_assert_str_eq(f.fixes[0].label, "lending limit of team-b at 12 GPUs");
	cr_assert_str_eq(f.fixes[0].sets[0],
			 "queues.team-b.lending_limit={\"nvidia.com/gpu\": 12}");
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
	cr_assert_str_eq(f.fixes[0].sets[0], "queues.team-a.quota={nvidia.com/gpu: 5}");
	finding_free(&f);
}

Test(relax, tolerates_the_taint_that_hides_a_pool)
{
	run("tests/fixtures/diagnosis/taint.yaml", NULL, 0);
	struct finding f = {0};
	struct constraint c = relax_about(CONSTRAINT_TAINT, -1, 0, -1);
	cr_assert_eq(relax_constraint(sc, &r, &c, &f), 1);
	cr_assert_str_eq(f.fixes[0].label, "batch tolerating team=research");
	cr_assert_str_eq(f.fixes[0].sets[0],
			 "workloads.batch.tolerations=[{key: \"team\", operator: Equal, value: "
			 "\"research\", effect: NoSchedule}]");
	char key[64];
	cr_assert_str_eq(relax_key(sc, &c, key, sizeof key), "workloads.batch.tolerations");
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
