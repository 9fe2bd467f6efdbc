/*
 * main.c - the gpuplan command line.  Parses arguments and calls modules;
 * holds no simulation logic.  Exit codes: 0 ok, 1 runtime failure (I/O,
 * SQLite), 2 invalid usage, scenario or trace.
 */
#include "gpuplan/advise.h"
#include "gpuplan/estimate.h"
#include "gpuplan/html.h"
#include "gpuplan/outfile.h"
#include "gpuplan/report.h"
#include "gpuplan/opencost.h"
#include "gpuplan/openmetrics.h"
#include "gpuplan/scenario.h"
#include "gpuplan/search.h"
#include "gpuplan/sim.h"
#include "gpuplan/store.h"
#include "gpuplan/sweep.h"
#include "gpuplan/units.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char usage[] =
	"usage: gpuplan <command> [options]\n"
	"\n"
	"commands:\n"
	"  run SCENARIO.yaml [--db PATH] [--set KEY=VALUE]... [--seed N] [--quiet]\n"
	"                     simulate and append the run to the results database\n"
	"  check SCENARIO.yaml [--set KEY=VALUE]... [--seed N]\n"
	"                     validate only; print the resolved pools and workloads\n"
	"  estimate --model M --quant Q --gpu G [--context N] [--batch B] [--tp N] [--json]\n"
	"                     footprint and step times of one model on one GPU type\n"
	"  sweep SWEEP.yaml [--db PATH] [--jobs N] [--shard K/N] [--resume] [--quiet]\n"
	"                     run every point of a sweep file (grid, zip, seeds)\n"
	"  merge OUT.db IN.db...\n"
	"                     combine results databases (sweep shards) into OUT.db\n"
	"  report DB [--run ID] (--opencost | --openmetrics | --html PATH)\n"
	"                     a run's allocations as OpenCost's /allocation response, its\n"
	"                     time series as OpenMetrics text for Prometheus, or one HTML\n"
	"                     page of charts and the diagnosis\n"
	"  advise SCENARIO.yaml [--db PATH] [--set KEY=VALUE]...\n"
	"                     diagnose, run the alternatives the findings suggest, rank them\n"
	"  search SCENARIO.yaml --vary KEY --lo X --hi Y (--min|--max) --until 'METRIC OP VALUE'\n"
	"         [--seeds N] [--db PATH] [--set KEY=VALUE]...\n"
	"                     bisect one parameter: smallest pool, largest sustainable rate\n"
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

static const char estimate_help[] =
	"usage: gpuplan estimate --model M --quant Q --gpu G [--context N] [--batch B]\n"
	"                        [--tp N] [--kv-cache Q] [--json]\n"
	"\n"
	"Prints the memory footprint and step times of one model on one GPU type.\n"
	"  --model M     llama-2-7b, llama-2-13b, llama-2-70b, llama-3-8b, llama-3-70b,\n"
	"                mistral-7b\n"
	"  --quant Q     weights: fp16, bf16, fp8, int8, int4\n"
	"  --gpu G       a catalog GPU type: A100-80GB, H100-80GB, L40S, L4, T4, ...\n"
	"  --context N   tokens per sequence, prompt + output (default 4096)\n"
	"  --batch B     sequences decoding together (default 1)\n"
	"  --tp N        tensor-parallel degree (default: the smallest that fits)\n"
	"  --kv-cache Q  KV-cache type (default: fp16; bf16 for bf16 weights)\n"
	"  --json        print one JSON object\n";

/* The integer after the flag at argv[*i], in 1..max. */
static int estimate_int(int argc, char **argv, int *i, int64_t max, int64_t *v)
{
	const char *flag = argv[*i];
	if (*i + 1 < argc && !units_integer(argv[*i + 1], v) && *v >= 1 && *v <= max) {
		++*i;
		return GP_OK;
	}
	fprintf(stderr, "gpuplan: error: %s expects an integer from 1 to %lld, got '%s'\n", flag,
		(long long)max, *i + 1 < argc ? argv[*i + 1] : "");
	return GP_EINPUT;
}

static int cmd_estimate(int argc, char **argv)
{
	struct estimate_request req = {.context = ESTIMATE_DEFAULT_CONTEXT,
				       .batch = ESTIMATE_DEFAULT_BATCH};
	const char **names[] = {&req.model, &req.quant, &req.gpu, &req.kv_cache};
	static const char *const flags[] = {"--model", "--quant", "--gpu", "--kv-cache"};
	bool json = false;
	int64_t tp = 0;
	for (int i = 0; i < argc; i++) {
		const char *a = argv[i];
		size_t f = 0;
		while (f < 4 && strcmp(a, flags[f]))
			f++;
		if (!strcmp(a, "--help") || !strcmp(a, "-h"))
			return fputs(estimate_help, stdout), 0;
		if (f < 4) {
			if (i + 1 >= argc || !argv[i + 1][0])
				return usage_error("%s expects a name", a);
			*names[f] = argv[++i];
		} else if (!strcmp(a, "--json")) {
			json = true;
		} else if (!strcmp(a, "--context")) {
			if (estimate_int(argc, argv, &i, 100000000, &req.context))
				return GP_EINPUT;
		} else if (!strcmp(a, "--batch")) {
			if (estimate_int(argc, argv, &i, 100000000, &req.batch))
				return GP_EINPUT;
		} else if (!strcmp(a, "--tp")) {
			if (estimate_int(argc, argv, &i, 1024, &tp))
				return GP_EINPUT;
		} else {
			return usage_error("unknown option '%s'", a);
		}
	}
	for (size_t f = 0; f < 3; f++)
		if (!*names[f])
			return usage_error("estimate: missing %s", flags[f]);
	req.tp = (int)tp;
	struct estimate e;
	struct gp_err err;
	int rc = estimate_compute(&req, &e, &err);
	if (rc)
		return fprintf(stderr, "gpuplan: error: %s\n", err.msg), rc;
	if (json)
		estimate_write_json(stdout, &e);
	else
		estimate_write_text(stdout, &e);
	return 0;
}

static const char sweep_help[] =
	"usage: gpuplan sweep SWEEP.yaml [--db PATH] [--jobs N] [--shard K/N] [--resume] [--quiet]\n"
	"\n"
	"Runs every point of a sweep file: a base scenario, a grid (every combination)\n"
	"and/or zip (paired lists) of --set paths to lists of values, and seeds.  Each\n"
	"point is a run whose overrides are in the params table.  The whole sweep is\n"
	"checked before the first run.\n"
	"  --db PATH    results database (default: db: in the sweep file, else\n"
	"               results/<sweep name>.db)\n"
	"  --jobs N     worker processes writing to the database (default 1)\n"
	"  --shard K/N  run only shard K of N, numbered from 0 (point i goes to shard\n"
	"               i mod N): one machine or pod per shard, then 'gpuplan merge'\n"
	"  --resume     skip points the database already holds (a killed sweep goes\n"
	"               on where it stopped); without it they are an error\n"
	"  --quiet      print nothing on success\n"
	"Progress (points done/total, runs/s, ETA) goes to stderr when it is a terminal.\n";

static const char merge_help[] =
	"usage: gpuplan merge OUT.db IN.db...\n"
	"\n"
	"Copies the runs of every IN.db into OUT.db (created if needed) with new run ids.\n"
	"Runs OUT.db already holds are skipped: sweep points by sweep name and point,\n"
	"other runs by scenario, seed and start time, so merging twice adds nothing.\n"
	"Every input is checked before anything is written.\n";

struct sweep_cli {
	const char *file;
	const char *db;
	struct sweep_shard shard;
	int64_t jobs;
	bool resume;
	bool quiet;
};

/* Parses the options of sweep.  Returns GP_OK, GP_EINPUT, or -1 after help. */
static int parse_sweep(int argc, char **argv, struct sweep_cli *o)
{
	for (int i = 0; i < argc; i++) {
		const char *a = argv[i];
		const char *v = i + 1 < argc ? argv[i + 1] : NULL;
		struct gp_err err;
		if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
			fputs(sweep_help, stdout);
			return -1;
		} else if (!strcmp(a, "--db")) {
			if (!v || !v[0])
				return usage_error("%s expects a path", a);
			o->db = argv[++i];
		} else if (!strcmp(a, "--jobs")) {
			if (!v || units_integer(v, &o->jobs) || o->jobs < 1 || o->jobs > SWEEP_MAX_JOBS)
				return usage_error("--jobs expects a number of processes from 1 to 256, "
						   "got '%s'", v ? v : "");
			i++;
		} else if (!strcmp(a, "--shard")) {
			if (!v)
				return usage_error("%s expects K/N, like 0/4", a);
			if (sweep_parse_shard(argv[++i], &o->shard, &err))
				return fprintf(stderr, "%s\n", err.msg), GP_EINPUT;
		} else if (!strcmp(a, "--resume")) {
			o->resume = true;
		} else if (!strcmp(a, "--quiet")) {
			o->quiet = true;
		} else if (a[0] == '-' && a[1]) {
			return usage_error("unknown option '%s'", a);
		} else if (!o->file) {
			o->file = a;
		} else {
			return usage_error("unexpected argument '%s'", a);
		}
	}
	return o->file ? GP_OK : usage_error("%s", "missing SWEEP.yaml");
}

/* Seconds as "1h02m", "3m05s" or "12s". */
static void format_eta(double s, char *buf, size_t len)
{
	long t = (long)(s + 0.5);
	if (t >= 3600)
		snprintf(buf, len, "%ldh%02ldm", t / 3600, t / 60 % 60);
	else if (t >= 60)
		snprintf(buf, len, "%ldm%02lds", t / 60, t % 60);
	else
		snprintf(buf, len, "%lds", t);
}

struct progress_line {
	const char *name;
	double drawn_s; /* elapsed time when last drawn */
};

/* The progress line, redrawn in place (stderr is a terminal) at most ten
 * times a second, and for the last point. */
static void sweep_progress_line(void *ctx, const struct sweep_progress *p)
{
	struct progress_line *line = ctx;
	size_t ran = p->written + p->raced, done = p->present + ran;
	if (done > 0 && done < p->total && p->elapsed_s - line->drawn_s < 0.1)
		return;
	line->drawn_s = p->elapsed_s;
	double rate = p->elapsed_s > 0 ? (double)ran / p->elapsed_s : 0;
	char eta[32] = "--";
	if (rate > 0)
		format_eta((double)(p->total - done) / rate, eta, sizeof eta);
	fprintf(stderr, "\r%s: %zu/%zu points, %.1f runs/s, ETA %s\033[K", line->name, done,
		p->total, rate, eta);
}

/* Input errors carry their own "PATH: error:" prefix; runtime ones do not. */
static int print_error(int rc, const struct gp_err *err)
{
	fprintf(stderr, rc == GP_EINPUT ? "%s\n" : "gpuplan: error: %s\n", err->msg);
	return rc;
}

static int cmd_sweep(int argc, char **argv)
{
	struct sweep_cli o = {.jobs = 1};
	struct sweep *sw = NULL;
	struct gp_err err;
	int rc = parse_sweep(argc, argv, &o);
	if (rc)
		return rc < 0 ? 0 : rc;
	if ((rc = sweep_load(o.file, &sw, &err)))
		return print_error(rc, &err);
	bool tty = isatty(2);
	struct progress_line line = {sw->name, 0};
	struct sweep_options so = {o.db ? o.db : sw->db, (unsigned)o.jobs, o.shard, o.resume,
				   tty ? sweep_progress_line : NULL, &line};
	struct sweep_progress p;
	rc = sweep_run(sw, &so, &p, &err);
	if (tty)
		fputc('\n', stderr);
	if (rc)
		print_error(rc, &err);
	else if (!o.quiet)
		printf("sweep %s: %zu points, %zu run, %zu already in the database%s -> %s (%.1f s)\n",
		       sw->name, p.total, p.written, p.present + p.raced,
		       o.shard.n ? " (this shard)" : "", so.db, p.elapsed_s);
	sweep_free(sw);
	return rc;
}

/* Checks every input before creating or changing the output. */
static int cmd_merge(int argc, char **argv)
{
	for (int i = 0; i < argc; i++) {
		if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h"))
			return fputs(merge_help, stdout), 0;
		if (argv[i][0] == '-' && argv[i][1])
			return usage_error("unknown option '%s'", argv[i]);
	}
	if (argc < 2)
		return usage_error("%s", "merge expects OUT.db and at least one IN.db");
	struct gp_err err;
	int rc = GP_OK;
	for (int i = 1; i < argc && !rc; i++)
		rc = store_check_merge_input(argv[i], argv[0], &err);
	struct store *st = NULL;
	if (!rc)
		rc = store_open(argv[0], &st, &err);
	for (int i = 1; i < argc && !rc; i++) {
		struct store_merge_stats ms;
		rc = store_merge(st, argv[i], &ms, &err);
		if (!rc)
			printf("%s: %lld runs merged, %lld already in %s\n", argv[i],
			       (long long)ms.copied, (long long)ms.duplicates, argv[0]);
	}
	store_close(st);
	return rc ? print_error(rc, &err) : 0;
}

static const char search_help[] =
	"usage: gpuplan search SCENARIO.yaml --vary KEY --lo X --hi Y (--min|--max)\n"
	"                      --until 'METRIC OP VALUE' [--seeds N] [--tolerance T]\n"
	"                      [--db PATH] [--set KEY=VALUE]... [--seed N] [--quiet]\n"
	"\n"
	"Bisects KEY (a --set path) over [X, Y].  --min finds the smallest value that meets\n"
	"the condition (the smallest pool that meets every deadline), --max the largest\n"
	"(the highest request rate within the SLO); the condition is assumed monotone.\n"
	"METRIC is a metric of scope all, or SCOPE.METRIC; OP is one of <= >= < > == !=.\n"
	"Bounds may carry a unit (10/s, 90m); whole-number bounds bisect to the exact answer,\n"
	"others to within the tolerance (default (Y - X) / 1000).  With --seeds N the\n"
	"condition must hold for the N seeds from the scenario's.  Every probe is a run in\n"
	"the database.  The last line is KEY=VALUE; exit 3 when no value in range meets it.\n";

struct search_cli {
	struct options o;
	struct search_spec spec;
	bool have_dir, have_lo, have_hi;
};

/* Parses the search-only flags, passing the others to parse_options. */
static int parse_search(int argc, char **argv, struct search_cli *cli)
{
	struct search_spec *sp = &cli->spec;
	char **rest = calloc((size_t)argc + 1, sizeof *rest);
	int n_rest = 0, rc = GP_OK;
	struct gp_err err;
	sp->seeds = 1;
	for (int i = 0; i < argc && rc == GP_OK; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
		int64_t seeds;
		if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
			fputs(search_help, stdout);
			rc = -1;
		} else if (!strcmp(a, "--min") || !strcmp(a, "--max")) {
			cli->have_dir = true;
			sp->maximize = !strcmp(a, "--max");
		} else if (!strcmp(a, "--vary") || !strcmp(a, "--lo") || !strcmp(a, "--hi") ||
			   !strcmp(a, "--until") || !strcmp(a, "--seeds") || !strcmp(a, "--tolerance")) {
			if (!v)
				rc = usage_error("%s expects a value", a);
			else if (!strcmp(a, "--vary"))
				sp->key = v;
			else if (!strcmp(a, "--lo") && (cli->have_lo = true) &&
				 search_parse_value(v, &sp->lo, &err))
				rc = usage_error("--lo %s", err.msg);
			else if (!strcmp(a, "--hi") && (cli->have_hi = true) &&
				 search_parse_value(v, &sp->hi, &err))
				rc = usage_error("--hi %s", err.msg);
			else if (!strcmp(a, "--until") && search_parse_condition(v, &sp->until, &err))
				rc = usage_error("%s", err.msg);
			else if (!strcmp(a, "--seeds") && (units_integer(v, &seeds) || seeds < 1 || seeds > 1000))
				rc = usage_error("--seeds expects a whole number from 1 to 1000, got '%s'", v);
			else if (!strcmp(a, "--seeds"))
				sp->seeds = (int)seeds;
			else if (!strcmp(a, "--tolerance") && (units_number(v, &sp->tolerance) || sp->tolerance <= 0))
				rc = usage_error("--tolerance expects a number > 0, got '%s'", v);
			i++;
		} else {
			rest[n_rest++] = argv[i];
		}
	}
	if (rc == GP_OK)
		rc = parse_options(n_rest, rest, true, &cli->o);
	free(rest);
	if (rc != GP_OK)
		return rc;
	if (!sp->key || !cli->have_dir || !sp->until.metric[0] || !cli->have_lo || !cli->have_hi)
		return usage_error("%s", "search needs --vary KEY, --lo X, --hi Y, --min or --max, "
				   "and --until 'METRIC OP VALUE'");
	if (search_check_range(sp, &err))
		return usage_error("%s", err.msg);
	sp->scenario = cli->o.scenario;
	sp->sets = cli->o.sets;
	sp->n_sets = cli->o.n_sets;
	return GP_OK;
}

/* Loads the scenario with KEY at a bound, so that a bad key fails before any run. */
static int check_bound(const struct search_spec *sp, const struct search_value *b, struct scenario **sc)
{
	char assign[512];
	snprintf(assign, sizeof assign, "%s=%.17g%s", sp->key, b->number, b->suffix);
	const char **sets = calloc(sp->n_sets + 1, sizeof *sets);
	if (sp->n_sets)
		memcpy(sets, sp->sets, sp->n_sets * sizeof *sets);
	sets[sp->n_sets] = assign;
	struct gp_err err;
	int rc = scenario_load(sp->scenario, sets, sp->n_sets + 1, sc, &err);
	if (rc)
		fprintf(stderr, "%s\n", err.msg);
	free(sets);
	return rc;
}

static void print_probe(void *ctx, const struct search_probe *p)
{
	const struct search_cli *cli = ctx;
	if (!cli->o.quiet)
		printf("probe %s=%s: %s.%s = %.6g, %s (run %lld)\n", cli->spec.key, p->value,
		       cli->spec.until.scope, cli->spec.until.metric, p->metric,
		       p->holds ? "holds" : "fails", (long long)p->first_run_id);
}

static int cmd_search(int argc, char **argv)
{
	struct search_cli cli = {0};
	struct scenario *sc = NULL, *hi = NULL;
	struct store *st = NULL;
	struct gp_err err;
	char answer[64];
	bool found = false;
	int rc = parse_search(argc, argv, &cli);
	if (rc == GP_OK)
		rc = check_bound(&cli.spec, &cli.spec.lo, &sc);
	if (rc == GP_OK)
		rc = check_bound(&cli.spec, &cli.spec.hi, &hi);
	if (rc == GP_OK && (rc = store_open(cli.o.db ? cli.o.db : sc->output.db, &st, &err)))
		fprintf(stderr, "gpuplan: error: %s\n", err.msg);
	if (rc == GP_OK && (rc = search_run(&cli.spec, st, print_probe, &cli, &found, answer,
					    sizeof answer, &err)))
		fprintf(stderr, "%s%s\n", rc == GP_ERUNTIME ? "gpuplan: error: " : "", err.msg);
	if (rc == GP_OK && found)
		printf("%s=%s\n", cli.spec.key, answer);
	else if (rc == GP_OK) {
		printf("no value of %s in [%.6g%s, %.6g%s] meets %s.%s\n", cli.spec.key,
		       cli.spec.lo.number, cli.spec.lo.suffix, cli.spec.hi.number, cli.spec.hi.suffix,
		       cli.spec.until.scope, cli.spec.until.metric);
		rc = 3;
	}
	store_close(st);
	scenario_free(sc);
	scenario_free(hi);
	options_free(&cli.o);
	return rc < 0 ? 0 : rc;
}

static const char report_help[] =
	"usage: gpuplan report DB [--run ID] (--opencost | --openmetrics | --html PATH)\n"
	"\n"
	"Prints a run of the database (default: the latest) for other tools:\n"
	"  --opencost   its allocations per workload and output.step window, __idle__\n"
	"               included, in the shape of OpenCost's /allocation API response\n"
	"  --openmetrics  its time series as OpenMetrics text stamped at the scenario's\n"
	"               wall-clock times (gpuplan_* gauges per pool and workload, vLLM's\n"
	"               metrics per inference workload), for\n"
	"               promtool tsdb create-blocks-from openmetrics FILE DATA_DIR\n"
	"  --html PATH  one self-contained HTML page (inline SVG, no script, no network):\n"
	"               the diagnosis, capacity, demand and allocation over time, the four\n"
	"               meanings of utilization, queue and pending reasons, latencies\n";

/* Writes the run's HTML page to path, replacing it only once the page is whole. */
static int report_html(struct store *st, const char *db, int64_t run_id, const char *path,
		       struct gp_err *err)
{
	struct outfile of;
	int rc = outfile_open(&of, path, db, err);
	if (rc)
		return rc;
	rc = html_report(of.f, st, run_id, err);
	if (rc) {
		outfile_abort(&of);
		return rc;
	}
	return outfile_commit(&of, err);
}

static int cmd_report(int argc, char **argv)
{
	const char *db = NULL;
	int64_t run_id = 0;
	bool opencost = false, openmetrics = false;
	const char *html = NULL;
	for (int i = 0; i < argc; i++) {
		const char *a = argv[i];
		if (!strcmp(a, "--help") || !strcmp(a, "-h"))
			return fputs(report_help, stdout), 0;
		if (!strcmp(a, "--opencost"))
			opencost = true;
		else if (!strcmp(a, "--openmetrics"))
			openmetrics = true;
		else if (!strcmp(a, "--html") && i + 1 < argc && argv[i + 1][0])
			html = argv[++i];
		else if (!strcmp(a, "--html"))
			return usage_error("%s expects a path", a);
		else if (!strcmp(a, "--run") && i + 1 < argc && !units_integer(argv[i + 1], &run_id) &&
			 run_id > 0)
			i++;
		else if (!strcmp(a, "--run"))
			return usage_error("--run expects a run id >= 1, got '%s'", i + 1 < argc ? argv[i + 1] : "");
		else if (a[0] == '-' || db)
			return usage_error("unexpected argument '%s'", a);
		else
			db = a;
	}
	if (!db)
		return usage_error("%s", "missing DB");
	if (!opencost && !openmetrics && !html)
		return usage_error("%s", "report needs --opencost, --openmetrics or --html PATH (see "
				   "'gpuplan report --help')");
	if (opencost && openmetrics)
		return usage_error("%s", "--opencost and --openmetrics both print: choose one");
	if (access(db, R_OK) != 0)
		return usage_error("cannot read database '%s'", db);
	struct store *st = NULL;
	struct store_run run;
	struct allocation *rows = NULL;
	size_t n = 0;
	struct gp_err err;
	int64_t epoch = 0;
	int rc = store_open_read(db, &st, &err);
	if (!rc && html)
		rc = report_html(st, db, run_id, html, &err);
	if (!rc && openmetrics)
		rc = openmetrics_write(stdout, st, run_id, &err);
	if (rc || !opencost) {
		if (rc)
			fprintf(stderr, "gpuplan: error: %s\n", err.msg);
		store_close(st);
		return rc;
	}
	if (!rc)
		rc = store_run_info(st, run_id, &run, &err);
	if (!rc)
		rc = store_read_allocations(st, run.run_id, &rows, &n, &err);
	if (!rc && units_rfc3339(run.start, &epoch))
		rc = gp_errorf(&err, GP_ERUNTIME, "%s: run %lld has no start time", db, (long long)run.run_id);
	if (!rc)
		opencost_write(stdout, rows, n, epoch);
	else
		fprintf(stderr, "gpuplan: error: %s\n", err.msg);
	store_free_allocations(rows, n);
	store_close(st);
	return rc;
}

static const char advise_help[] =
	"usage: gpuplan advise SCENARIO.yaml [--db PATH] [--set KEY=VALUE]... [--seed N] [--quiet]\n"
	"\n"
	"Runs the scenario, diagnoses it, and runs the alternatives the findings suggest:\n"
	"sharing modes (time-slicing, MPS, MIG, fractional) for a pool whose allocated GPUs\n"
	"idle while pods wait, int8/int4 weights for workloads with a model, and the smallest\n"
	"pool that meets every deadline (or SLO, or keeps queue p95 within a minute).  Every\n"
	"run goes to the database with its overrides in params.  Prints the runs ranked:\n"
	"meeting every deadline and SLO first, then by cost per verified result, then by\n"
	"queue p95; the last line names the recommendation.\n";

static void print_advise_progress(void *ctx, const struct advise_row *row)
{
	(void)ctx;
	fprintf(stderr, "\radvise: run %lld %-60.60s\033[K", (long long)row->run_id, row->label);
}

static int cmd_advise(int argc, char **argv)
{
	for (int i = 0; i < argc; i++)
		if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h"))
			return fputs(advise_help, stdout), 0;
	struct options o = {0};
	struct scenario *sc = NULL;
	struct store *st = NULL;
	struct advice advice = {0};
	struct gp_err err;
	int rc = parse_options(argc, argv, true, &o);
	if (rc == GP_OK)
		rc = load(&o, &sc); /* a bad scenario fails before the database is touched */
	if (rc == GP_OK && (rc = store_open(o.db ? o.db : sc->output.db, &st, &err)))
		print_error(rc, &err);
	struct advise_spec spec = {o.scenario, o.sets, o.n_sets};
	bool tty = isatty(2) && !o.quiet;
	if (rc == GP_OK && (rc = advise_run(&spec, st, tty ? print_advise_progress : NULL, NULL,
					    &advice, &err)))
		print_error(rc, &err);
	if (tty)
		fputc('\n', stderr);
	if (rc == GP_OK && !o.quiet) {
		printf("advise %s: %zu alternatives, every run in %s\n", sc->name, advice.n,
		       o.db ? o.db : sc->output.db);
		advise_write(stdout, &advice);
	}
	advice_free(&advice);
	store_close(st);
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
	if (!strcmp(cmd, "report"))
		return cmd_report(argc - 2, argv + 2);
	if (!strcmp(cmd, "search"))
		return cmd_search(argc - 2, argv + 2);
	if (!strcmp(cmd, "check"))
		return cmd_check(argc - 2, argv + 2);
	if (!strcmp(cmd, "sweep"))
		return cmd_sweep(argc - 2, argv + 2);
	if (!strcmp(cmd, "merge"))
		return cmd_merge(argc - 2, argv + 2);
	if (!strcmp(cmd, "advise"))
		return cmd_advise(argc - 2, argv + 2);
	if (!strcmp(cmd, "estimate"))
		return cmd_estimate(argc - 2, argv + 2);
	return usage_error("unknown command '%s'", cmd);
}
