/*
 * test_cli.c - bin/gpuplan as users run it: exit codes, located errors on
 * stderr, nothing written on bad input, runs appended in the database, and
 * identical result rows for the same scenario and seed.
 */
#include <criterion/criterion.h>

#include "scratch.h"
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static char out[8192];

TestSuite(cli, .init = scratch_make, .fini = scratch_remove);

/* Runs bin/gpuplan with args; returns its exit code, stdout+stderr in out. */
static int gpuplan(const char *args)
{
	char cmd[7000];
	snprintf(cmd, sizeof cmd, "bin/gpuplan %s", args);
	return capture(cmd, out, sizeof out);
}

Test(cli, run_writes_a_run_and_prints_the_summary)
{
	char args[256], db[128];
	snprintf(db, sizeof db, "%s/r.db", dir);
	snprintf(args, sizeof args, "run scenarios/eval-window.yaml --db %s", db);
	cr_assert_eq(gpuplan(args), 0, "%s", out);
	cr_assert(strstr(out, "peak-demand"), "%s", out);
	cr_assert(strstr(out, "workload eval"), "%s", out);
	cr_assert_eq(scratch_query(db, "SELECT count(*) FROM runs"), 1);
	cr_assert_eq(scratch_query(db, "SELECT count(*) FROM jobs"), 4);
	cr_assert_eq(
		scratch_query(
			db,
			"SELECT value FROM metrics WHERE scope='all' AND name='peak_demand_gpus'"),
		8);
	cr_assert_eq(scratch_query(db, "SELECT count(*) FROM timeseries WHERE scope='all'"), 8,
		     "2 h in 15 min steps");
	cr_assert_eq(gpuplan(args), 0, "%s", out);
	cr_assert_eq(scratch_query(db, "SELECT max(run_id) FROM runs"), 2, "runs append");
}

Test(cli, same_seed_gives_byte_identical_rows)
{
	char args[256], db[128];
	snprintf(db, sizeof db, "%s/d.db", dir);
	snprintf(args, sizeof args, "run scenarios/quickstart.yaml --quiet --db %s", db);
	cr_assert_eq(gpuplan(args), 0, "%s", out);
	cr_assert_eq(gpuplan(args), 0, "%s", out);
	static const char *const tables[] = {
		"SELECT scope, name, value, unit FROM metrics WHERE run_id = %d",
		"SELECT job_id, workload, submit_s, start_s, end_s, queue_s, gpus, node, status,"
		" deadline_s, deadline_met, verified, cost FROM jobs WHERE run_id = %d",
		"SELECT t_s, scope, gpus_capacity, gpus_allocated, gpus_demand, engine_active,"
		" sm_active, vram_used_gib, pending, running FROM timeseries WHERE run_id = %d",
	};
	for (size_t i = 0; i < 3; i++) {
		char sql[2400], a[1100], b[1100];
		snprintf(a, sizeof a, tables[i], 1);
		snprintf(b, sizeof b, tables[i], 2);
		snprintf(sql, sizeof sql, "SELECT count(*) FROM (%s EXCEPT %s)", a, b);
		cr_assert_eq(scratch_query(db, sql), 0, "rows differ: %s", tables[i]);
		snprintf(sql, sizeof sql, "SELECT count(*) FROM (%s)", a);
		cr_assert_gt(scratch_query(db, sql), 0);
	}
	cr_assert_eq(scratch_query(db, "SELECT count(DISTINCT scenario_sha256) FROM runs"), 1);
}

Test(cli, set_and_seed_are_recorded_as_params)
{
	char args[256], db[128];
	snprintf(db, sizeof db, "%s/p.db", dir);
	snprintf(
		args, sizeof args,
		"run scenarios/eval-window.yaml --quiet --set pools.batch.nodes=2 --seed 7 --db %s",
		db);
	cr_assert_eq(gpuplan(args), 0, "%s", out);
	cr_assert_eq(
		scratch_query(
			db,
			"SELECT count(*) FROM params WHERE key='pools.batch.nodes' AND value='2'"),
		1);
	cr_assert_eq(scratch_query(db, "SELECT seed FROM runs"), 7);
	cr_assert_eq(
		scratch_query(
			db,
			"SELECT value FROM metrics WHERE scope='all' AND name='queue_time_max_s'"),
		0);
}

/* --seed wins over --set seed=M, and a key set twice wins with its last value:
 * params hold what the run used, once per key (not both seeds). */
Test(cli, params_record_the_values_the_run_used_once_per_key)
{
	char args[256], db[128];
	snprintf(db, sizeof db, "%s/p.db", dir);
	snprintf(args, sizeof args,
		 "run scenarios/eval-window.yaml --quiet --seed 3 --set seed=4 "
		 "--set pools.batch.nodes=3 --set pools.batch.nodes=2 --db %s",
		 db);
	cr_assert_eq(gpuplan(args), 0, "%s", out);
	cr_expect_eq(scratch_query(db, "SELECT seed FROM runs"), 3);
	cr_expect_eq(scratch_query(db, "SELECT count(*) FROM params WHERE key = 'seed'"), 1);
	cr_expect_eq(scratch_query(db, "SELECT value FROM params WHERE key = 'seed'"), 3);
	cr_expect_eq(scratch_query(db, "SELECT count(*) FROM params"), 2);
	cr_expect_eq(scratch_query(db, "SELECT value FROM params WHERE key = 'pools.batch.nodes'"),
		     2);
}

/* Each bad input exits 2, names the place, and leaves the database byte for
 * byte as it was. */
static void assert_rejected(const char *args, const char *expect)
{
	char full[512], db[128];
	snprintf(db, sizeof db, "%s/keep.db", dir);
	snprintf(full, sizeof full, "run scenarios/eval-window.yaml --quiet --db %s", db);
	if (access(db, F_OK) != 0)
		cr_assert_eq(gpuplan(full), 0, "%s", out);
	size_t n;
	char *before = scratch_slurp(db, &n);
	snprintf(full, sizeof full, "%s --db %s", args, db);
	cr_assert_eq(gpuplan(full), 2, "exit 2 for: %s\n%s", args, out);
	cr_assert(strstr(out, expect), "expected '%s' in:\n%s", expect, out);
	scratch_expect_same_bytes(db, before, n);
	free(before);
}

Test(cli, bad_input_exits_2_with_a_located_message_and_writes_nothing)
{
	assert_rejected("run scenarios/eval-window.yaml --set pools.batch.nodes=0",
			"--set pools.batch.nodes=0:1:");
	assert_rejected("run scenarios/eval-window.yaml --set pools.btach.nodes=2",
			"--set pools.btach.nodes=2:1:7: error: no item named 'btach' in pools; did "
			"you mean 'batch'?\n");
	assert_rejected("run scenarios/eval-window.yaml --set nosuchkey",
			"--set nosuchkey:1:1: error: expected KEY=VALUE");
	assert_rejected("run scenarios/eval-window.yaml --set workloads.eval.duration=1x",
			"--set workloads.eval.duration=1x:1:25: error: invalid duration '1x'; "
			"expected a duration like 90s, 500ms, 15m, 1h30m or 2d\n");
	/* column 21: the value, after "workloads.eval.gpus=" */
	assert_rejected("run scenarios/eval-window.yaml --set workloads.eval.gpus=5",
			"--set workloads.eval.gpus=5:1:21: error: no node has 5 GPUs; the largest "
			"pool node has 4");
	assert_rejected("run scenarios/eval-window.yaml --set pools.batch.gpu=A200",
			"pools.batch.gpu=A200:1:");
	assert_rejected("run scenarios/eval-window.yaml --seed -1",
			"gpuplan: error: --seed expects a non-negative integer, got '-1'\n"
			"(see 'gpuplan --help')\n");
	assert_rejected("run scenarios/eval-window.yaml --frobnicate",
			"gpuplan: error: unknown option '--frobnicate'\n(see 'gpuplan --help')\n");
	assert_rejected("run", "gpuplan: error: missing SCENARIO.yaml\n(see 'gpuplan --help')\n");
	assert_rejected("run tests/fixtures/does-not-exist.yaml",
			"tests/fixtures/does-not-exist.yaml: error: cannot read: No such file or "
			"directory\n");
	assert_rejected("advise scenarios/eval-window.yaml --set pools.batch.gpu=A200",
			"pools.batch.gpu=A200:1:");
	assert_rejected("search scenarios/eval-window.yaml --vary pools.batch.nodes --lo 1 --hi 3 "
			"--min --until 'deadline_met_pct >= 100' --set pools.batch.gpu=A200",
			"pools.batch.gpu=A200:1:");
}

Test(cli, bad_fixture_files_never_create_a_database)
{
	char args[512], db[128];
	snprintf(db, sizeof db, "%s/never.db", dir);
	snprintf(
		args, sizeof args,
		"sh -c 'ls tests/fixtures/bad/*.yaml >/dev/null || exit 1;"
		" for f in tests/fixtures/bad/*.yaml; do bin/gpuplan run \"$f\" --quiet --db %s 2>/dev/null;"
		" [ $? -eq 2 ] || { echo \"not 2: $f\"; exit 1; }; done'",
		db);
	cr_assert_eq(system(args), 0);
	cr_assert_neq(access(db, F_OK), 0, "no database was created");
}

Test(cli, check_prints_the_resolved_scenario_and_writes_nothing)
{
	cr_assert_eq(gpuplan("check scenarios/eval-window.yaml --set pools.batch.gpus_per_node=8"),
		     0, "%s", out);
	cr_assert(strstr(out, "pool batch: 1 x 8 A100-80GB"), "%s", out);
	cr_assert(strstr(out, "workload eval"), "%s", out);
	/* a uniform duration's mean is the middle of its range (it said 0s) */
	cr_assert_eq(gpuplan("check scenarios/eval-window.yaml --set "
			     "'workloads.eval.duration={dist: uniform, min: 1h, max: 2h}'"),
		     0, "%s", out);
	cr_expect(strstr(out, "duration mean 1h30m"), "%s", out);
	/* an affinity no pool's labels match (an imported pod's selector of a
	 * product the cluster lacks) is warned of, with what the pools have */
	cr_assert_eq(
		gpuplan("check scenarios/eval-window.yaml --set 'workloads.eval.affinity=[{key: "
			"nvidia.com/gpu.product, operator: In, values: [NVIDIA-B300]}]'"),
		0, "%s", out);
	cr_expect(strstr(out, "warning: workload eval: its affinity nvidia.com/gpu.product In "
			      "[NVIDIA-B300] matches no node, so its pods never start; a pool has "
			      "nvidia.com/gpu.product=NVIDIA-A100-SXM4-80GB"),
		  "%s", out);
}

Test(cli, help_and_unknown_commands)
{
	cr_assert_eq(gpuplan("--help"), 0);
	cr_assert(strstr(out, "gpuplan run SCENARIO.yaml") || strstr(out, "run SCENARIO.yaml"));
	cr_assert_eq(gpuplan("run --help"), 0);
	cr_assert(strstr(out, "--set KEY=VALUE"));
	cr_assert_eq(gpuplan("frobnicate"), 2);
	cr_assert(strstr(out, "unknown command 'frobnicate'"));
	cr_assert_eq(gpuplan(""), 2);
}

/* GPUPLAN_THREADS and GPUPLAN_WRITER_ROWS are input too: a value that is not
 * a whole number from 1 to the limit is refused, exit 2, before anything
 * runs (abc ran everything on one thread; 99999 forked 256 sweep workers). */
Test(cli, a_bad_thread_or_batch_setting_in_the_environment_is_refused)
{
	static const char *const bad[] = {"GPUPLAN_THREADS=abc",   "GPUPLAN_THREADS=0",
					  "GPUPLAN_THREADS=-2",    "GPUPLAN_THREADS=99999",
					  "GPUPLAN_WRITER_ROWS=0", "GPUPLAN_WRITER_ROWS=1.5"};
	char cmd[512], db[160];
	snprintf(db, sizeof db, "%s/env.db", dir);
	for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
		snprintf(cmd, sizeof cmd, "%s bin/gpuplan run scenarios/quickstart.yaml --db %s",
			 bad[i], db);
		cr_expect_eq(capture(cmd, out, sizeof out), 2, "%s: %s", bad[i], out);
		const char *eq = strchr(bad[i], '=');
		char want[96];
		snprintf(want, sizeof want,
			 "gpuplan: error: %.*s='%s' in the environment; expected "
			 "a whole number from 1 to ",
			 (int)(eq - bad[i]), bad[i], eq + 1);
		cr_expect(strstr(out, want), "%s", out);
		cr_expect_neq(access(db, F_OK), 0, "%s: nothing is written", bad[i]);
	}
	snprintf(cmd, sizeof cmd,
		 "GPUPLAN_THREADS=256 bin/gpuplan check scenarios/quickstart.yaml");
	cr_expect_eq(capture(cmd, out, sizeof out), 0, "%s", out);
}

/* Every command's --help comes from its argument table: it exits 0 and lists
 * the options the command accepts; the usage text names every exit code. */
Test(cli, every_command_has_help_and_the_usage_names_every_exit_code)
{
	static const char *const cmds[][2] = {
		{"run", "--quiet"},       {"check", "--seed N"},       {"estimate", "--kv-cache Q"},
		{"sweep", "--shard K/N"}, {"merge", "OUT.db IN.db"},   {"report", "--run ID"},
		{"advise", "--db PATH"},  {"search", "--tolerance T"},
	};
	char args[64];
	for (size_t i = 0; i < sizeof cmds / sizeof *cmds; i++) {
		snprintf(args, sizeof args, "%s --help", cmds[i][0]);
		cr_assert_eq(gpuplan(args), 0, "%s: %s", args, out);
		cr_expect(strstr(out, cmds[i][1]), "%s lists %s:\n%s", args, cmds[i][1], out);
	}
	cr_assert_eq(gpuplan("--help"), 0);
	cr_expect(strstr(out, "3 search found no value"), "%s", out);
}

/* A mistyped flag gets the closest flag of its command, by the rule that
 * suggests scenario keys (ytree_suggest: a longer name it begins, else the
 * nearest by edit distance); none when nothing is near. */
Test(cli, unknown_flags_get_the_closest_flag_of_their_command)
{
	cr_assert_eq(gpuplan("import --node nodes.json --pods pods.json"), 2);
	cr_expect(strstr(out, "unknown option '--node'; did you mean '--nodes'?"), "%s", out);
	cr_assert_eq(gpuplan("run scenarios/eval-window.yaml --quite"), 2);
	cr_expect(strstr(out, "unknown option '--quite'; did you mean '--quiet'?"), "%s", out);
	cr_assert_eq(gpuplan("report x.db --openmetric"), 2);
	cr_expect(strstr(out, "unknown option '--openmetric'; did you mean '--openmetrics'?"), "%s",
		  out);
	/* the flags of another command are not offered */
	cr_assert_eq(gpuplan("check scenarios/eval-window.yaml --db x.db"), 2);
	cr_expect(strstr(out, "unknown option '--db'\n"), "%s", out);
}

/* One parser for every command: the same message for the same mistake. */
Test(cli, every_command_reports_unknown_options_and_missing_values_alike)
{
	cr_assert_eq(gpuplan("report x.db --frobnicate"), 2);
	cr_expect(strstr(out, "unknown option '--frobnicate'"), "%s", out);
	cr_assert_eq(gpuplan("sweep x.yaml --frobnicate"), 2);
	cr_expect(strstr(out, "unknown option '--frobnicate'"), "%s", out);
	cr_assert_eq(gpuplan("estimate --model m --quant q --gpu g --tp"), 2);
	cr_expect(strstr(out, "--tp expects an integer from 1 to 1024, got ''"), "%s", out);
	cr_assert_eq(gpuplan("search scenarios/eval-window.yaml --lo"), 2);
	cr_expect(strstr(out, "--lo expects a value"), "%s", out);
	cr_assert_eq(gpuplan("check scenarios/eval-window.yaml extra.yaml"), 2);
	cr_expect(strstr(out, "unexpected argument 'extra.yaml'"), "%s", out);
}

/* An option whose value is left out does not take the next option as its
 * value (`--db --quiet` created a database named --quiet); a negative
 * number still is a value. */
Test(cli, an_option_without_its_value_does_not_swallow_the_next_option)
{
	cr_assert_eq(gpuplan("run scenarios/eval-window.yaml --db --quiet"), 2, "%s", out);
	cr_expect(strstr(out, "--db: expected PATH, got the option '--quiet'"), "%s", out);
	bool swallowed = access("--quiet", F_OK) == 0;
	if (swallowed)
		unlink("--quiet");
	cr_expect(!swallowed, "a database named --quiet was created");
	cr_assert_eq(gpuplan("import --nodes n.json --pods p.json --at -o out.yaml"), 2, "%s", out);
	cr_expect(strstr(out, "--at: expected TIME, got the option '-o'"), "%s", out);
	cr_assert_eq(gpuplan("search scenarios/eval-window.yaml --vary pools.batch.nodes --lo -5 "
			     "--hi 3 --min --until 'deadline_met_pct >= 100'"),
		     2, "%s", out);
	cr_expect(strstr(out, "pools.batch.nodes=-5:1:"), "-5 is --lo's value: %s", out);
}

/* One value per single-valued option, one of --min and --max: a repeated
 * or contradictory option is refused, whichever was meant. */
Test(cli, a_repeated_or_conflicting_option_is_refused)
{
	char args[256];
	snprintf(args, sizeof args, "run scenarios/eval-window.yaml --db %s/a.db --db %s/b.db", dir,
		 dir);
	cr_assert_eq(gpuplan(args), 2, "%s", out);
	cr_expect(strstr(out, "--db is given twice; give it once"), "%s", out);
	snprintf(args, sizeof args, "%s/a.db", dir);
	cr_expect_neq(access(args, F_OK), 0, "nothing was written");
	cr_assert_eq(gpuplan("search scenarios/eval-window.yaml --vary pools.batch.nodes --lo 1 "
			     "--hi 3 --min --max --until 'deadline_met_pct >= 100'"),
		     2, "%s", out);
	cr_expect(strstr(out, "choose one of --min and --max"), "%s", out);
	cr_assert_eq(gpuplan("estimate --model llama-2-7b --quant fp16 --gpu L4 --tp 1 --tp 2"), 2,
		     "%s", out);
	cr_expect(strstr(out, "--tp is given twice"), "%s", out);
	/* repeatable options and flags stay repeatable */
	cr_assert_eq(gpuplan("check scenarios/eval-window.yaml --set pools.batch.nodes=2 "
			     "--set pools.batch.nodes=3"),
		     0, "%s", out);
}

/* A database path that cannot hold results is bad input (exit 2) named for
 * what it is, for every command that takes one, and left as it was; the
 * message fits the command (report has no --db to choose). */
Test(cli, a_database_path_that_is_a_folder_or_not_sqlite_exits_2)
{
	char text[128], in[128], args[512];
	snprintf(in, sizeof in, "%s/in.db", dir);
	snprintf(args, sizeof args, "run scenarios/eval-window.yaml --quiet --db %s", in);
	cr_assert_eq(gpuplan(args), 0, "%s", out);
	snprintf(text, sizeof text, "%s/notes.db", dir);
	FILE *f = fopen(text, "w");
	cr_assert_not_null(f);
	for (int i = 0; i < 20; i++)
		fputs("plain text, not a database, long enough for SQLite to read it\n", f);
	fclose(f);
	size_t n;
	char *before = scratch_slurp(text, &n);
	static const char *const cmds[] = {
		"run scenarios/eval-window.yaml --quiet --db %s",
		"sweep tests/fixtures/sweep/zip.yaml --quiet --db %s",
		"merge %s %s",
		"report %s --opencost",
	};
	const char *paths[] = {dir, text};
	for (size_t i = 0; i < sizeof cmds / sizeof *cmds; i++)
		for (size_t p = 0; p < 2; p++) {
			snprintf(args, sizeof args, cmds[i], paths[p], in);
			cr_expect_eq(gpuplan(args), 2, "%s: %s", args, out);
			cr_expect(strstr(out, p ? "is not a SQLite database"
						: "is a directory; expected a database file"),
				  "%s: %s", args, out);
			cr_expect_null(strstr(out, "--db"), "%s: %s", args, out);
		}
	/* a file where a folder of the path should be: exit 2, named (SQLite
	 * said "unable to open database file", exit 1) */
	snprintf(args, sizeof args, "run scenarios/quickstart.yaml --quiet --db %s/sub/x.db", text);
	cr_expect_eq(gpuplan(args), 2, "%s", out);
	char want[300];
	snprintf(want, sizeof want, "%s is a file, not a folder; choose another path", text);
	cr_expect(strstr(out, want), "%s", out);
	scratch_expect_same_bytes(text, before, n);
	free(before);
}

/* Every command refuses a single-valued option given twice: --seed, report's
 * --run, import's --nodes (last-wins dropped the first silently). */
Test(cli, a_single_valued_option_given_twice_is_refused_by_every_command)
{
	cr_assert_eq(gpuplan("run scenarios/eval-window.yaml --seed 1 --seed 2"), 2);
	cr_expect(strstr(out, "--seed is given twice; give it once"), "%s", out);
	cr_assert_eq(gpuplan("report x.db --run 1 --run 2"), 2);
	cr_expect(strstr(out, "--run is given twice"), "%s", out);
	cr_assert_eq(gpuplan("import --nodes a.json --nodes b.json --pods p.json -o o.yaml"), 2);
	cr_expect(strstr(out, "--nodes is given twice"), "%s", out);
}

/* main reports an error by its kind (common.h), set where it was made: a
 * located one as it is, every other after "gpuplan: error: "; the status
 * gives the exit code.  The whole output is compared. */
Test(cli, each_kind_of_error_is_reported_as_its_kind_says)
{
	char args[6000], want[1024], db[5000];
	/* located: the override's place, column 7 the item name */
	cr_assert_eq(gpuplan("run scenarios/eval-window.yaml --set pools.btach.nodes=2"), 2);
	cr_assert_str_eq(out, "--set pools.btach.nodes=2:1:7: error: no item named 'btach' in "
			      "pools; did you mean 'batch'?\n");
	cr_assert_eq(gpuplan("run tests/fixtures/does-not-exist.yaml"), 2);
	cr_assert_str_eq(out, "tests/fixtures/does-not-exist.yaml: error: cannot read: No such "
			      "file or directory\n");
	/* input: a flag has no place of its own; a usage error says where to look */
	cr_assert_eq(gpuplan("run scenarios/eval-window.yaml --seed -1"), 2);
	cr_assert_str_eq(out, "gpuplan: error: --seed expects a non-negative integer, got '-1'\n"
			      "(see 'gpuplan --help')\n");
	cr_assert_eq(gpuplan("report x.db --html x.html --window 2026"), 2);
	cr_assert_str_eq(out, "gpuplan: error: --window, --aggregate, --accumulate, --share-idle "
			      "and --idle-by-node shape --opencost's response: add --opencost\n"
			      "(see 'gpuplan --help')\n");
	/* a --goal is placed as typed, not as the --set it stands for; a
	 * workload's that names none says what else WHO can be */
	cr_assert_eq(gpuplan("check scenarios/eval-window.yaml --goal evlas=1h"), 2);
	cr_assert_str_eq(out, "--goal 'evlas=1h': error: no item named 'evlas' in workloads; did "
			      "you mean 'eval'? (WHO may also be batch or service)\n");
	cr_assert_eq(gpuplan("check scenarios/eval-window.yaml --goal batch=2x"), 2);
	cr_assert_str_eq(out, "--goal 'batch=2x': error: invalid goals.batch '2x'; expected a "
			      "duration like 90s, 500ms, 15m, 1h30m or 2d\n");
	/* limit of an input: 17 goals, one past main's 16 */
	size_t n = (size_t)snprintf(args, sizeof args, "run scenarios/eval-window.yaml");
	for (int i = 0; i < 17; i++)
		n += (size_t)snprintf(args + n, sizeof args - n, " --goal batch=1h");
	cr_assert_eq(gpuplan(args), 2);
	cr_assert_str_eq(out,
			 "gpuplan: error: --goal: at most 16 of them\n(see 'gpuplan --help')\n");
	/* input: a regular file where a folder of the database's path should be
	 * (exit 2: the path cannot hold results) */
	snprintf(db, sizeof db, "%s/plain", dir);
	FILE *f = fopen(db, "w");
	cr_assert_not_null(f);
	fclose(f);
	snprintf(args, sizeof args, "run scenarios/eval-window.yaml --quiet --db %s/plain/r.db",
		 dir);
	cr_assert_eq(gpuplan(args), 2);
	snprintf(want, sizeof want,
		 "gpuplan: error: %s/plain/r.db: %s/plain is a file, not a folder; choose another "
		 "path for the results\n",
		 dir, dir);
	cr_assert_str_eq(out, want);
	/* io: a write past the file size limit fails (EFBIG, as a full disk; the
	 * run ignores SIGXFSZ) and the run's new file is removed (exit 1) */
	char cmd[700];
	snprintf(cmd, sizeof cmd,
		 "ulimit -f 200; bin/gpuplan run scenarios/eval-window.yaml --quiet --db %s/big.db",
		 dir);
	cr_assert_eq(capture(cmd, out, sizeof out), 1, "%s", out);
	snprintf(want, sizeof want, "gpuplan: error: %s/big.db: ", dir);
	cr_assert(!strncmp(out, want, strlen(want)), "%s", out);
	snprintf(db, sizeof db, "%s/big.db", dir);
	cr_expect_neq(access(db, F_OK), 0, "%s is left", db);
	/* limit of the system: a path of PATH_MAX (4096) characters or more (exit 1) */
	n = (size_t)snprintf(db, sizeof db, "%s/", dir);
	while (n < 4200)
		n += (size_t)snprintf(db + n, sizeof db - n, "d/");
	snprintf(db + n, sizeof db - n, "x.db");
	snprintf(args, sizeof args, "run scenarios/eval-window.yaml --quiet --db %s", db);
	cr_assert_eq(gpuplan(args), 1);
	snprintf(want, sizeof want,
		 "gpuplan: error: %.80s...: a path of %zu characters; expected at most 4095\n", db,
		 strlen(db));
	cr_assert_str_eq(out, want);
}

/* A ClusterQueue name as long as the loader allows (253 characters) keeps
 * its jobs' reason whole, from quota through the store to the summary and
 * the HTML report: "... ClusterQueue NAME to be admitted" is 316
 * characters (it was cut at 199).  A scenario name as long is the run's name
 * whole in the OpenMetrics labels and OpenCost's cluster (cut at 127).  kueue-strict's eight small jobs wait
 * behind wide from 00:10 to 10:00: 8 x 9h50m = 283,200 pod-seconds
 * (test_kueue.c, the_diagnosis_names_strict_fifo_when_the_order_holds_the_jobs). */
Test(cli, names_of_253_characters_stay_whole_in_the_database_and_the_reports)
{
	char queue[254], name[254], path[128], db[128], args[1024], reason[400], sql[600];
	memcpy(queue, "team-", 5);
	memset(queue + 5, 'q', 248);
	queue[253] = '\0';
	memcpy(name, "kueue-strict-", 13);
	memset(name + 13, 's', 240);
	name[253] = '\0';
	snprintf(path, sizeof path, "%s/long-queue.yaml", dir);
	FILE *f = fopen(path, "w");
	cr_assert_not_null(f);
	fprintf(f,
		"name: %s\n"
		"start: 2026-10-27T00:00:00Z\n"
		"pools:\n"
		"  - {name: p, nodes: 2, gpu: L4, gpus_per_node: 8}\n"
		"queues:\n"
		"  - {name: %s, strategy: StrictFIFO, quota: {nvidia.com/gpu: 6}}\n"
		"workloads:\n"
		"  - {name: long, queue: %s, arrival: {at: \"00:00\"}, gpus: 4, duration: 10h}\n"
		"  - {name: wide, queue: %s, arrival: {at: \"00:05\"}, gpus: 4, duration: 1h}\n"
		"  - {name: small, queue: %s, count: 8, arrival: {at: \"00:10\"}, gpus: 1, "
		"duration: 1h}\n",
		name, queue, queue, queue, queue);
	fclose(f);
	snprintf(db, sizeof db, "%s/long-queue.db", dir);
	snprintf(args, sizeof args, "run %s --db %s", path, db);
	cr_assert_eq(gpuplan(args), 0, "%s", out);
	cr_assert_eq(snprintf(reason, sizeof reason,
			      "waiting for the head of StrictFIFO ClusterQueue %s to be admitted",
			      queue),
		     316);
	cr_assert(strstr(out, reason), "the summary cuts the reason:\n%s", out);
	snprintf(
		sql, sizeof sql,
		"SELECT pending_seconds FROM pending_reasons WHERE scope = 'small' AND reason = '%s'",
		reason);
	cr_assert_eq(scratch_query(db, sql), 283200, "the stored reason is not whole");
	snprintf(args, sizeof args, "report %s --html %s/long-queue.html", db, dir);
	cr_assert_eq(gpuplan(args), 0, "%s", out);
	snprintf(path, sizeof path, "%s/long-queue.html", dir);
	size_t n;
	char *html = scratch_slurp(path, &n);
	cr_assert_not_null(html);
	cr_assert(strstr(html, reason), "the HTML report cuts the reason");
	free(html);
	/* every sample names the whole scenario: no line without it (grep's exit 1: none) */
	snprintf(args, sizeof args,
		 "report %s --openmetrics | grep -v '^#' | grep -vc 'scenario=\"%s\",run=\"1\"}'",
		 db, name);
	gpuplan(args);
	cr_assert_str_eq(out, "0\n", "samples without the whole name");
	snprintf(args, sizeof args, "report %s --opencost | grep -c '\"cluster\":\"%s\"'", db,
		 name);
	cr_assert_eq(gpuplan(args), 0, "the cluster is cut: %s", out);
}
