/*
 * main.c - the gpuplan command line.  Parses arguments and calls modules;
 * holds no simulation logic.  Exit codes: 0 ok, 1 runtime failure (I/O,
 * SQLite), 2 invalid usage, scenario or trace.
 */
#include "gpuplan/report.h"
#include "gpuplan/scenario.h"
#include "gpuplan/sim.h"
#include "gpuplan/store.h"
#include "gpuplan/units.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char usage[] =
	"usage: gpuplan <command> [options]\n"
	"\n"
	"commands:\n"
	"  run SCENARIO.yaml [--db PATH] [--set KEY=VALUE]... [--seed N] [--quiet]\n"
	"                     simulate and append the run to the results database\n"
	"  check SCENARIO.yaml [--set KEY=VALUE]... [--seed N]\n"
	"                     validate only; print the resolved pools and workloads\n"
	"\n"
	"Run 'gpuplan COMMAND --help' for a command's options.  Exit codes: 0 ok,\n"
	"1 runtime failure (I/O, SQLite), 2 invalid usage, scenario or trace.\n";

static const char run_help[] =
	"usage: gpuplan run SCENARIO.yaml [--db PATH] [--set KEY=VALUE]... [--seed N] [--quiet]\n"
	"\n"
	"Simulates the scenario, prints a summary and appends the run to the database.\n"
	"  --db PATH        results database (default: output.db, else results/<name>.db)\n"
	"  --set KEY=VALUE  override a scenario value by dotted path, naming list items by\n"
	"                   their name: --set pools.batch.nodes=3 (repeatable)\n"
	"  --seed N         same as --set seed=N\n"
	"  --quiet          print nothing on success\n";

static const char check_help[] =
	"usage: gpuplan check SCENARIO.yaml [--set KEY=VALUE]... [--seed N]\n"
	"\n"
	"Validates the scenario (and the traces it names) and prints what it resolved to.\n"
	"Writes nothing.\n";

struct options {
	const char *scenario;
	const char *db;
	const char **sets;
	size_t n_sets;
	char *seed_set;   /* "seed=N", owned */
	bool quiet;
};

static int usage_error(const char *fmt, const char *arg)
{
	fputs("gpuplan: error: ", stderr);
	fprintf(stderr, fmt, arg);
	fputs("\n(see 'gpuplan --help')\n", stderr);
	return GP_EINPUT;
}

/* Parses the options of run/check; `allow_db` for run. Returns GP_OK, GP_EINPUT,
 * or -1 when help was printed. */
static int parse_options(int argc, char **argv, bool is_run, struct options *o)
{
	o->sets = calloc((size_t)argc + 1, sizeof *o->sets);
	for (int i = 0; i < argc; i++) {
		const char *a = argv[i];
		bool has_value = i + 1 < argc;
		if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
			fputs(is_run ? run_help : check_help, stdout);
			return -1;
		} else if (!strcmp(a, "--set")) {
			if (!has_value)
				return usage_error("%s expects KEY=VALUE", a);
			o->sets[o->n_sets++] = argv[++i];
		} else if (!strcmp(a, "--seed")) {
			int64_t seed;
			if (!has_value || units_integer(argv[i + 1], &seed) || seed < 0)
				return usage_error("--seed expects a non-negative integer, got '%s'",
						   has_value ? argv[i + 1] : "");
			size_t len = strlen(argv[++i]) + 6;
			free(o->seed_set);
			o->seed_set = malloc(len);
			snprintf(o->seed_set, len, "seed=%s", argv[i]);
		} else if (is_run && !strcmp(a, "--db")) {
			if (!has_value || !argv[i + 1][0])
				return usage_error("%s expects a path", a);
			o->db = argv[++i];
		} else if (is_run && !strcmp(a, "--quiet")) {
			o->quiet = true;
		} else if (a[0] == '-' && a[1]) {
			return usage_error("unknown option '%s'", a);
		} else if (!o->scenario) {
			o->scenario = a;
		} else {
			return usage_error("unexpected argument '%s'", a);
		}
	}
	if (!o->scenario)
		return usage_error("%s", "missing SCENARIO.yaml");
	if (o->seed_set)
		o->sets[o->n_sets++] = o->seed_set;
	return GP_OK;
}

static void options_free(struct options *o)
{
	free(o->sets);
	free(o->seed_set);
}

static int load(const struct options *o, struct scenario **sc)
{
	struct gp_err err;
	int rc = scenario_load(o->scenario, o->sets, o->n_sets, sc, &err);
	if (rc)
		fprintf(stderr, "%s\n", err.msg);
	return rc;
}

static int cmd_check(int argc, char **argv)
{
	struct options o = {0};
	struct scenario *sc = NULL;
	int rc = parse_options(argc, argv, false, &o);
	if (rc == GP_OK && (rc = load(&o, &sc)) == GP_OK)
		report_scenario(stdout, sc);
	scenario_free(sc);
	options_free(&o);
	return rc < 0 ? 0 : rc;
}

/* Simulates, then writes the run: the database is touched only once the
 * scenario is valid and the run has finished, in one transaction. */
static int cmd_run(int argc, char **argv)
{
	struct options o = {0};
	struct scenario *sc = NULL;
	struct store *st = NULL;
	struct results r;
	struct gp_err err;
	int64_t run_id = 0;
	results_init(&r);
	int rc = parse_options(argc, argv, true, &o);
	if (rc == GP_OK)
		rc = load(&o, &sc);
	if (rc == GP_OK) {
		const char *db = o.db ? o.db : sc->output.db;
		rc = sim_run(sc, &r, &err);
		if (rc == GP_OK)
			rc = store_open(db, &st, &err);
		if (rc == GP_OK)
			rc = store_write_run(st, sc, &r, &run_id, &err);
		if (rc == GP_OK && !o.quiet)
			report_summary(stdout, sc, &r, db, run_id);
		if (rc > 0)
			fprintf(stderr, "gpuplan: error: %s\n", err.msg);
	}
	store_close(st);
	results_free(&r);
	scenario_free(sc);
	options_free(&o);
	return rc < 0 ? 0 : rc;
}

int main(int argc, char **argv)
{
	if (argc < 2)
		return fputs(usage, stderr), GP_EINPUT;
	const char *cmd = argv[1];
	if (!strcmp(cmd, "--help") || !strcmp(cmd, "-h") || !strcmp(cmd, "help"))
		return fputs(usage, stdout), 0;
	if (!strcmp(cmd, "run"))
		return cmd_run(argc - 2, argv + 2);
	if (!strcmp(cmd, "check"))
		return cmd_check(argc - 2, argv + 2);
	return usage_error("unknown command '%s'", cmd);
}
