/*
 * main.c - the gpuplan command line.  Parses arguments and calls modules;
 * holds no simulation logic.  Exit codes: 0 ok, 1 runtime failure (I/O,
 * SQLite), 2 invalid usage, scenario, trace or database file (a directory,
 * not SQLite, not gpuplan's), 3 search found no value.
 *
 * Every command declares its arguments as one table of rows (name, kind,
 * target, help) that one parser reads (cli_parse), and every failure is
 * printed by one function (fail).  Adding a flag is adding a row; adding a
 * command is a row in `commands` and a cmd_ function that builds its table.
 * import's cmd_ function and its helpers are in main_import.c, estimate's in
 * main_estimate.c (main_int.h).
 */
#include "gpuplan/advise.h"
#include "gpuplan/backtest.h"
#include "gpuplan/catalog.h"
#include "gpuplan/html.h"
#include "gpuplan/json.h"
#include "gpuplan/import.h"
#include "gpuplan/outfile.h"
#include "gpuplan/report.h"
#include "gpuplan/opencost.h"
#include "gpuplan/openmetrics.h"
#include "gpuplan/scenario.h"
#include "gpuplan/search.h"
#include "gpuplan/run.h"
#include "gpuplan/store.h"
#include "gpuplan/sweep.h"
#include "gpuplan/units.h"
#include "gpuplan/ytree.h"

#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "main_int.h"

/* Exit code of `search` when no value in range meets the condition. */
#define EXIT_NOT_FOUND 3

/* --- errors: the one way main reports a failure ---------------------------- */

/* Prints err: located input errors ("FILE:LINE:COL: error: ...") carry their
 * own prefix, others get "gpuplan: error: " (the kind decides, gp_err_prefix);
 * a usage error adds where to look. */
int cli_fail(int rc, const struct gp_err *err, bool usage)
{
	fprintf(stderr, "%s%s\n", gp_err_prefix(rc, err), gp_err_msg(err));
	if (usage)
		fputs("(see 'gpuplan --help')\n", stderr);
	return rc;
}

int cli_usage_error(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	struct gp_err err GP_ERR_SCOPE = {.kind = GP_ERR_INPUT, .msg = gp_vstrf(fmt, ap)};
	va_end(ap);
	return cli_fail(GP_EINPUT, &err, true);
}

/* --- the argument parser ----------------------------------------------------- */

/* The tables it reads (struct cli_opt, struct cli_cmd) are in main_int.h. */

static void list_push(struct cli_list *l, const char *v)
{
	GP_GROW(l->v, l->cap, l->n + 1);
	l->v[l->n++] = v;
}

void cli_list_free(struct cli_list *l)
{
	free(l->v);
	*l = (struct cli_list){0};
}

/* Writes text indented by `indent` after each '\n'. */
static void put_indented(FILE *out, const char *text, int indent)
{
	for (const char *p = text; *p; p++) {
		fputc(*p, out);
		if (*p == '\n' && p[1])
			fprintf(out, "%*s", indent, "");
	}
}

/* "--db PATH", or "--quiet" for a row without a value. */
static int opt_label(const struct cli_opt *o, char *buf, size_t len)
{
	return snprintf(buf, len, "%s%s%s", o->name, o->meta ? " " : "", o->meta ? o->meta : "");
}

static void print_help(const struct cli_cmd *cmd, const struct cli_opt *opts, size_t n)
{
	printf("usage: gpuplan %s ", cmd->name);
	put_indented(stdout, cmd->synopsis, (int)strlen(cmd->name) + 16);
	printf("\n\n%s", cmd->about);
	int width = 0;
	char label[64];
	for (size_t i = 0; i < n; i++)
		if (opts[i].name && opts[i].help) {
			int w = opt_label(&opts[i], label, sizeof label);
			width = w > width ? w : width;
		}
	for (size_t i = 0; i < n; i++)
		if (opts[i].name && opts[i].help) {
			opt_label(&opts[i], label, sizeof label);
			printf("  %-*s  ", width, label);
			put_indented(stdout, opts[i].help, width + 4);
			putchar('\n');
		}
}

/* Stores one value into row o's target; the message names the flag. */
static int set_value(const struct cli_opt *o, const char *v)
{
	struct gp_err err GP_ERR_SCOPE = {0};
	if (!o->name && o->kind == CLI_LIST) {
		list_push(o->target, v);
		return GP_OK;
	}
	if (!o->name) { /* a positional is taken as it is, "" included */
		*(const char **)o->target = v;
		return GP_OK;
	}
	switch (o->kind) {
	case CLI_PATH:
	case CLI_NAME:
		if (!v || !v[0])
			return cli_usage_error("%s expects a %s", o->name,
					       o->kind == CLI_PATH ? "path" : "name");
		*(const char **)o->target = v;
		return GP_OK;
	case CLI_TEXT:
		if (!v)
			return cli_usage_error("%s expects %s", o->name,
					       o->expects ? o->expects : o->meta);
		*(const char **)o->target = v;
		return GP_OK;
	case CLI_INT:
		if (!v || units_integer(v, o->target) || *(int64_t *)o->target < o->lo ||
		    *(int64_t *)o->target > o->hi)
			return cli_usage_error("%s expects %s, got '%s'", o->name, o->expects,
					       v ? v : "");
		return GP_OK;
	case CLI_LIST:
		if (!v)
			return cli_usage_error("%s expects %s", o->name,
					       o->expects ? o->expects : o->meta);
		list_push(o->target, v);
		return GP_OK;
	case CLI_PARSE:
		if (!v)
			return cli_usage_error("%s expects %s", o->name,
					       o->expects ? o->expects : o->meta);
		if (o->parse(v, o->target, &err))
			return cli_fail(GP_EINPUT, &err, true);
		return GP_OK;
	case CLI_FLAG: *(bool *)o->target = true; return GP_OK;
	case CLI_CHOICE: *(int *)o->target = (int)o->lo; return GP_OK;
	}
	return GP_EINPUT;
}

static bool takes_value(enum cli_kind k) { return k != CLI_FLAG && k != CLI_CHOICE; }

/* The row of the option named a, or n. */
static size_t find_option(const struct cli_opt *opts, size_t n, const char *a)
{
	size_t r = 0;
	while (r < n && !(opts[r].name && !strcmp(opts[r].name, a)))
		r++;
	return r;
}

/* "unknown option '--node'; did you mean '--nodes'?": the closest option of
 * the command, by the rule that suggests scenario keys (ytree_suggest). */
static int unknown_option(const struct cli_opt *opts, size_t n, const char *a)
{
	const char **names = gp_xcalloc(n + 1, sizeof *names);
	size_t k = 0;
	for (size_t r = 0; r < n; r++)
		if (opts[r].name)
			names[k++] = opts[r].name;
	const char *close = ytree_suggest(a, names, k);
	int rc = close ? cli_usage_error("unknown option '%s'; did you mean '%s'?", a, close)
		       : cli_usage_error("unknown option '%s'", a);
	free(names);
	return rc;
}

/* Whether the argument after an option that takes a value is another option
 * instead, the value having been left out: `--db --quiet` must not create a
 * database named --quiet.  A negative number ("-5") is a value. */
static bool is_option(const struct cli_opt *opts, size_t n, const char *a)
{
	return !strncmp(a, "--", 2) || find_option(opts, n, a) < n;
}

/* Refuses row r given again: a single value given twice is a mistake
 * whichever one was meant (--db a --db b), and so are two rows that set one
 * target (--min --max).  Repeatable rows (CLI_LIST) and flags may repeat. */
static int check_repeat(const struct cli_opt *opts, size_t n, const bool *seen, size_t r)
{
	for (size_t s = 0; s < n; s++) {
		if (!seen[s] || !opts[s].name || opts[s].target != opts[r].target)
			continue;
		if (s != r)
			return cli_usage_error("choose one of %s and %s", opts[s].name,
					       opts[r].name);
		if (takes_value(opts[r].kind) && opts[r].kind != CLI_LIST && !opts[r].repeat)
			return cli_usage_error("%s is given twice; give it once", opts[r].name);
	}
	return GP_OK;
}

/* Fills the targets of opts from argv.  Returns GP_OK, GP_EINPUT after
 * printing the error, or CLI_HELP after printing the help. */
int cli_parse(const struct cli_cmd *cmd, const struct cli_opt *opts, size_t n, int argc,
	      char **argv)
{
	for (int i = 0; i < argc; i++)
		if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h"))
			return print_help(cmd, opts, n), CLI_HELP;
	bool *seen = gp_xcalloc(n + 1, sizeof *seen);
	size_t next_pos = 0;
	int rc = GP_OK;
	for (int i = 0; i < argc && rc == GP_OK; i++) {
		const char *a = argv[i];
		size_t r = 0;
		if (a[0] == '-' && a[1]) {
			if ((r = find_option(opts, n, a)) == n) {
				rc = unknown_option(opts, n, a);
				break;
			}
			if ((rc = check_repeat(opts, n, seen, r)))
				break;
			const char *v = NULL;
			if (takes_value(opts[r].kind) && i + 1 < argc) {
				if (is_option(opts, n, argv[i + 1])) {
					rc = cli_usage_error("%s: expected %s, got the option '%s'",
							     a, opts[r].meta, argv[i + 1]);
					break;
				}
				v = argv[++i];
			}
			rc = set_value(&opts[r], v);
		} else {
			for (r = next_pos;
			     r < n && (opts[r].name || (seen[r] && opts[r].kind != CLI_LIST)); r++)
				;
			if (r == n) {
				rc = cli_usage_error("unexpected argument '%s'", a);
				break;
			}
			next_pos = r;
			rc = set_value(&opts[r], a);
		}
		seen[r] = true;
	}
	for (size_t r = 0; r < n && rc == GP_OK; r++) {
		bool given = opts[r].kind == CLI_LIST; /* rows sharing a target (--min/--max) */
		for (size_t s = 0; s < n && !given; s++)
			given = seen[s] && opts[s].target == opts[r].target;
		if (given)
			continue;
		if (!opts[r].name)
			rc = cli_usage_error("missing %s", opts[r].meta);
		else if (opts[r].required && cmd->needs)
			rc = cli_usage_error("%s", cmd->needs);
		else if (opts[r].required)
			rc = cli_usage_error("%s: missing %s", cmd->name, opts[r].name);
	}
	free(seen);
	return rc;
}

/* --- run, check, advise: a scenario with overrides ---------------------------- */

#define CLI_MAX_GOALS 16
#define CLI_GOAL_LEN  (SCENARIO_MAX_NAME + 64)

struct options {
	const char *scenario;
	const char *db;
	struct cli_list sets; /* --set values, then "seed=N" */
	int64_t seed;         /* -1: not given */
	char seed_set[32];
	const char *growth; /* --growth F, which is --set growth=F */
	char growth_set[128];
	bool quiet;
	bool json;        /* run, advise: one JSON document on stdout */
	const char *emit; /* advise: the folder the recommendation's objects go to */
	char goals[CLI_MAX_GOALS][CLI_GOAL_LEN]; /* --goal, as the --set it stands for */
	const char *goals_given[CLI_MAX_GOALS];  /* and as typed */
	size_t n_goals;
};

#define OPT_JSON(o, what)                                                       \
	{                                                                       \
		.name = "--json", .kind = CLI_FLAG, .target = &(o)->json,       \
		.help = "print one JSON document instead of the tables, even\n" \
			"with --quiet: " what                                   \
	}
#define OPT_SCENARIO(o)                                                             \
	{                                                                           \
		.kind = CLI_PATH, .target = &(o)->scenario, .meta = "SCENARIO.yaml" \
	}
#define OPT_DB(o, what)                                                                            \
	{                                                                                          \
		.name = "--db", .kind = CLI_PATH, .target = &(o)->db, .meta = "PATH", .help = what \
	}
#define OPT_SET(o)                                                                            \
	{                                                                                     \
		.name = "--set", .kind = CLI_LIST, .target = &(o)->sets, .meta = "KEY=VALUE", \
		.help = "override a scenario value by dotted path, naming list items by\n"    \
			"their name: --set pools.batch.nodes=3 (repeatable)"                  \
	}
#define OPT_SEED(o)                                                                   \
	{                                                                             \
		.name = "--seed", .kind = CLI_INT, .target = &(o)->seed, .meta = "N", \
		.help = "same as --set seed=N", .lo = 0, .hi = INT64_MAX,             \
		.expects = "a non-negative integer"                                   \
	}
#define OPT_QUIET(o)                                                        \
	{                                                                   \
		.name = "--quiet", .kind = CLI_FLAG, .target = &(o)->quiet, \
		.help = "print nothing on success"                          \
	}
/* --goal batch=2h, --goal service=10m, --goal WORKLOAD=30m: the --set of
 * goals.batch, goals.service or workloads.WORKLOAD.goal it stands for. */
static int parse_goal(const char *value, void *target, struct gp_err *err)
{
	struct options *o = target;
	if (o->n_goals >= CLI_MAX_GOALS)
		return gp_errkindf(err, GP_ERR_LIMIT, GP_EINPUT, "--goal: at most %d of them",
				   CLI_MAX_GOALS);
	int rc = scenario_goal_override(value, o->goals[o->n_goals], CLI_GOAL_LEN, err);
	if (!rc)
		o->goals_given[o->n_goals++] = value;
	return rc;
}

#define OPT_GOAL(o)                                                                         \
	{                                                                                   \
		.name = "--goal", .kind = CLI_PARSE, .target = (o), .meta = "WHO=DURATION", \
		.parse = parse_goal, .repeat = true,                                        \
		.help = "the queue p95 a workload accepts: batch=2h (batch work\n"          \
			"without a deadline), service=10m (services, notebooks,\n"          \
			"servers) or WORKLOAD=30m (repeatable)"                             \
	}

#define DEFAULT_DB "results database (default: output.db, else results/<name>.db)"

#define OPT_GROWTH(o)                                                                      \
	{                                                                                  \
		.name = "--growth", .kind = CLI_TEXT, .target = &(o)->growth, .meta = "F", \
		.help = "multiply every arrival and request rate by F (1.3: +30%),\n"      \
			"same as --set growth=F"                                           \
	}

/* --tolerance PCT of backtest and advise: "25%" or "25", a percentage above 0. */
static int parse_pct_tolerance(const char *value, void *target, struct gp_err *err)
{
	return units_percent(value, target) ? gp_errorf(err, GP_EINPUT,
							"--tolerance expects a percentage above "
							"0 like 25%%, got '%s'",
							value)
					    : GP_OK;
}

#define OPT_TOLERANCE(t, what)                                                                 \
	{                                                                                      \
		.name = "--tolerance", .kind = CLI_PARSE, .target = (t), .meta = "PCT",        \
		.help = what, .expects = "a percentage like 25%", .parse = parse_pct_tolerance \
	}

/* After parsing: --seed N goes last, so that it wins over --set seed=M. */
static void options_finish(struct options *o)
{
	for (size_t i = 0; i < o->n_goals; i++)
		list_push(&o->sets, o->goals[i]);
	if (o->growth && snprintf(o->growth_set, sizeof o->growth_set, "growth=%s", o->growth))
		list_push(&o->sets, o->growth_set);
	if (o->seed >= 0) {
		snprintf(o->seed_set, sizeof o->seed_set, "seed=%lld", (long long)o->seed);
		list_push(&o->sets, o->seed_set);
	}
}

/* An error in the --set a --goal stands for is placed at the --goal as
 * typed, which is what the user can find on the command line; a workload's
 * goal that names no workload also says what else WHO can be. */
static void place_at_goal(const struct options *o, struct gp_err *err)
{
	for (size_t i = 0; i < o->n_goals && err->msg && err->place_len; i++) {
		char place[CLI_GOAL_LEN + 8];
		int n = snprintf(place, sizeof place, "--set %s:", o->goals[i]);
		if (strncmp(err->msg, place, (size_t)n))
			continue;
		bool workload = !strncmp(o->goals[i], "workloads.", 10) &&
				strstr(err->msg, "no item named");
		char *at = gp_strf("--goal '%s'", o->goals_given[i]);
		char *msg = gp_strf("%s%s%s", at, err->msg + err->place_len,
				    workload ? " (WHO may also be batch or service)" : "");
		err->place_len = (unsigned)strlen(at);
		free(at);
		free(err->msg);
		err->msg = msg;
		return;
	}
}

static int load(const struct options *o, struct scenario **sc)
{
	struct gp_err err GP_ERR_SCOPE = {0};
	int rc = scenario_load(o->scenario, o->sets.v, o->sets.n, sc, &err);
	if (rc)
		place_at_goal(o, &err);
	return rc ? cli_fail(rc, &err, false) : GP_OK;
}

static int cmd_check(const struct cli_cmd *cmd, int argc, char **argv)
{
	struct options o = {.seed = -1};
	const struct cli_opt opts[] = {OPT_SCENARIO(&o), OPT_SET(&o), OPT_GOAL(&o), OPT_SEED(&o)};
	struct scenario *sc = NULL;
	int rc = cli_parse(cmd, opts, N_OPTS(opts), argc, argv);
	if (rc == GP_OK) {
		options_finish(&o);
		if ((rc = load(&o, &sc)) == GP_OK)
			report_scenario(stdout, sc);
	}
	scenario_free(sc);
	cli_list_free(&o.sets);
	return rc < 0 ? 0 : rc;
}

/* Simulates and writes the run, in one transaction: the database is
 * touched only once the scenario is valid, by the writer thread while the
 * run goes on (store.h's store_writer), and left as it was when either
 * fails. */
static int cmd_run(const struct cli_cmd *cmd, int argc, char **argv)
{
	struct options o = {.seed = -1};
	const struct cli_opt opts[] = {
		OPT_SCENARIO(&o), OPT_DB(&o, DEFAULT_DB),
		OPT_SET(&o),      OPT_GOAL(&o),
		OPT_SEED(&o),     OPT_GROWTH(&o),
		OPT_QUIET(&o),    OPT_JSON(&o, "the summary, metrics per scope,\nfindings")};
	struct scenario *sc = NULL;
	struct store *st = NULL;
	struct results r;
	struct gp_err err GP_ERR_SCOPE = {0};
	int64_t run_id = 0;
	results_init(&r);
	int rc = cli_parse(cmd, opts, N_OPTS(opts), argc, argv);
	if (rc == GP_OK) {
		options_finish(&o);
		rc = load(&o, &sc);
	}
	if (rc == GP_OK) {
		const char *db = o.db ? o.db : sc->output.db;
		struct store_writer *w = store_writer_create(db, sc, &r);
		rc = run_simulate_to(sc, &r, store_writer_sink(w), &err);
		struct gp_err werr GP_ERR_SCOPE = {0};
		int wrc = store_writer_finish(w, rc == GP_OK, &st, &run_id, NULL, &werr);
		if (rc == GP_OK && wrc) {
			rc = wrc;
			gp_err_move(&err, &werr);
		}
		if (rc == GP_OK && o.json)
			rc = json_write_run(stdout, st, db, run_id, &err);
		else if (rc == GP_OK && !o.quiet)
			report_summary(stdout, sc, &r, db, run_id);
		if (rc > 0)
			cli_fail(rc, &err, false);
	}
	store_close(st);
	results_free(&r);
	scenario_free(sc);
	cli_list_free(&o.sets);
	return rc < 0 ? 0 : rc;
}

static void print_advise_progress(void *ctx, const struct advise_row *row)
{
	(void)ctx;
	fprintf(stderr, "\radvise: run %lld %-60.60s\033[K", (long long)row->run_id, row->label);
}

static int cmd_advise(const struct cli_cmd *cmd, int argc, char **argv)
{
	struct options o = {.seed = -1};
	double tolerance = BACKTEST_DEFAULT_TOLERANCE;
	bool force = false;
	int64_t jobs = 0;
	struct cli_list keep = {0};
	const struct cli_opt opts[] = {
		OPT_SCENARIO(&o),
		OPT_DB(&o, DEFAULT_DB),
		OPT_SET(&o),
		OPT_GOAL(&o),
		OPT_SEED(&o),
		OPT_GROWTH(&o),
		OPT_TOLERANCE(&tolerance, "the backtest error past which a twin's hardware advice\n"
					  "is refused (default 25%; queue p95 also within 5m)"),
		{.name = "--force",
		 .kind = CLI_FLAG,
		 .target = &force,
		 .help = "recommend hardware even when the twin is not trusted\n"
			 "(a warning in the output and the advice table)"},
		{.name = "--jobs",
		 .kind = CLI_INT,
		 .target = &jobs,
		 .meta = "N",
		 .help = "alternatives simulated at once, on threads (default: one\n"
			 "per processor); the results are the same for any N",
		 .lo = 1,
		 .hi = ADVISE_MAX_JOBS,
		 .expects = "a number of threads from 1 to 256"},
		OPT_QUIET(&o),
		{.name = "--emit",
		 .kind = CLI_PATH,
		 .target = &o.emit,
		 .meta = "DIR",
		 .help = "write the objects that carry out the recommendation"},
		{.name = "--keep",
		 .kind = CLI_LIST,
		 .target = &keep,
		 .meta = "PATH",
		 .help = "a --set path that is policy, not a mistake: no alternative\n"
			 "changes it, e.g. pools.reserved.taints or 'workloads.*.tolerations'\n"
			 "(repeatable)"},
		OPT_JSON(&o, "the base run, the alternatives ranked,\nthe recommendation")};
	struct scenario *sc = NULL;
	struct store *st = NULL;
	struct advice advice = {0};
	struct gp_err err GP_ERR_SCOPE = {0};
	int rc = cli_parse(cmd, opts, N_OPTS(opts), argc, argv);
	if (rc == GP_OK) {
		options_finish(&o);
		rc = load(&o, &sc); /* a bad scenario fails before the database is touched */
	}
	for (size_t i = 0; rc == GP_OK && i < keep.n; i++)
		if ((rc = advise_keep_check(sc, keep.v[i], &err)))
			cli_fail(rc, &err, false);
	if (rc == GP_OK && (rc = store_open(o.db ? o.db : sc->output.db, &st, &err)))
		cli_fail(rc, &err, false);
	struct advise_spec spec = {
		o.scenario,     o.sets.v, o.sets.n,
		tolerance,      force,    o.db ? o.db : (sc ? sc->output.db : NULL),
		(unsigned)jobs, keep.v,   keep.n};
	bool tty = rc == GP_OK && isatty(2) && !o.quiet && !o.json;
	if (rc == GP_OK &&
	    (rc = advise_run(&spec, st, tty ? print_advise_progress : NULL, NULL, &advice, &err)))
		cli_fail(rc, &err, false);
	if (tty)
		fputc('\n', stderr);
	if (rc == GP_OK && o.json) {
		struct json_advice ja = {advice.base_run, advice.base_sc, &advice.base_r,
					 advice.table,    advice.n_table, advice.keep,
					 advice.n_keep,   advice.kept_out};
		json_write_advice(stdout, o.db ? o.db : sc->output.db, &ja);
	} else if (rc == GP_OK && !o.quiet) {
		printf("advise %s: %zu alternative%s, every run in %s\n", sc->name, advice.n,
		       advice.n == 1 ? "" : "s", o.db ? o.db : sc->output.db);
		advise_write(stdout, &advice);
	}
	char *emitted = NULL;
	if (rc == GP_OK && o.emit && (rc = advise_emit(&spec, &advice, o.emit, &emitted, &err)))
		cli_fail(rc, &err, false);
	if (emitted && !o.quiet && !o.json) /* README.txt says how to apply them */
		printf("wrote into %s:\n%s", o.emit, emitted);
	free(emitted);
	advice_free(&advice);
	store_close(st);
	scenario_free(sc);
	cli_list_free(&o.sets);
	cli_list_free(&keep);
	return rc < 0 ? 0 : rc;
}

/* Replays a twin's history and writes the run with its backtest rows in one
 * transaction. */
static int cmd_backtest(const struct cli_cmd *cmd, int argc, char **argv)
{
	struct options o = {.seed = -1};
	struct backtest_cmd bc = {.tolerance = BACKTEST_DEFAULT_TOLERANCE};
	const struct cli_opt opts[] = {
		OPT_SCENARIO(&o), OPT_DB(&o, DEFAULT_DB),
		OPT_TOLERANCE(&bc.tolerance, "the relative error a figure may have (default 25%;\n"
					     "queue times also pass within 5 minutes)"),
		OPT_QUIET(&o), OPT_JSON(&o, "the figures, the verdict, what\nit could not model")};
	int rc = cli_parse(cmd, opts, N_OPTS(opts), argc, argv);
	if (rc)
		return rc < 0 ? 0 : rc;
	struct gp_err err GP_ERR_SCOPE = {0};
	bc.scenario = o.scenario, bc.db = o.db, bc.json = o.json, bc.quiet = o.quiet;
	rc = backtest_command(&bc, stdout, &err);
	return rc ? cli_fail(rc, &err, false) : 0;
}

/* --- sweep, merge --------------------------------------------------------------- */

static int parse_shard(const char *value, void *target, struct gp_err *err)
{
	return sweep_parse_shard(value, target, err);
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

static int cmd_sweep(const struct cli_cmd *cmd, int argc, char **argv)
{
	const char *file = NULL, *db = NULL;
	struct sweep_shard shard = {0};
	int64_t jobs = 0; /* 0: gp_default_jobs */
	bool resume = false, quiet = false;
	const struct cli_opt opts[] = {
		{.kind = CLI_PATH, .target = &file, .meta = "SWEEP.yaml"},
		{.name = "--db",
		 .kind = CLI_PATH,
		 .target = &db,
		 .meta = "PATH",
		 .help = "results database (default: db: in the sweep file, else\n"
			 "results/<sweep name>.db)"},
		{.name = "--jobs",
		 .kind = CLI_INT,
		 .target = &jobs,
		 .meta = "N",
		 .help = "worker processes writing to the database (default: one\n"
			 "per processor; GPUPLAN_THREADS=N in the environment sets it)",
		 .lo = 1,
		 .hi = SWEEP_MAX_JOBS,
		 .expects = "a number of processes from 1 to 256"},
		{.name = "--shard",
		 .kind = CLI_PARSE,
		 .target = &shard,
		 .meta = "K/N",
		 .parse = parse_shard,
		 .expects = "K/N, like 0/4",
		 .help = "run only shard K of N, numbered from 0 (point i goes to shard\n"
			 "i mod N): one machine or pod per shard, then 'gpuplan merge'"},
		{.name = "--resume",
		 .kind = CLI_FLAG,
		 .target = &resume,
		 .help = "skip points the database already holds (a killed sweep goes\n"
			 "on where it stopped); without it they are an error"},
		{.name = "--quiet",
		 .kind = CLI_FLAG,
		 .target = &quiet,
		 .help = "print nothing on success"},
	};
	int rc = cli_parse(cmd, opts, N_OPTS(opts), argc, argv);
	if (rc)
		return rc < 0 ? 0 : rc;
	struct sweep *sw = NULL;
	struct gp_err err GP_ERR_SCOPE = {0};
	if ((rc = sweep_load(file, &sw, &err)))
		return cli_fail(rc, &err, false);
	bool tty = isatty(2);
	struct progress_line line = {sw->name, 0};
	struct sweep_options so = {db ? db : sw->db,
				   jobs ? (unsigned)jobs : gp_default_jobs(SWEEP_MAX_JOBS),
				   shard,
				   resume,
				   tty ? sweep_progress_line : NULL,
				   &line};
	struct sweep_progress p;
	rc = sweep_run(sw, &so, &p, &err);
	if (tty)
		fputc('\n', stderr);
	if (rc)
		cli_fail(rc, &err, false);
	else if (!quiet)
		printf("sweep %s: %zu points, %zu run, %zu already in the database%s -> %s (%.1f s)\n",
		       sw->name, p.total, p.written, p.present + p.raced,
		       shard.n ? " (this shard)" : "", so.db, p.elapsed_s);
	sweep_free(sw);
	return rc;
}

/* Checks every input before creating or changing the output. */
static int cmd_merge(const struct cli_cmd *cmd, int argc, char **argv)
{
	struct cli_list dbs = {0};
	const struct cli_opt opts[] = {
		{.kind = CLI_LIST, .target = &dbs, .meta = "OUT.db IN.db..."}};
	int rc = cli_parse(cmd, opts, N_OPTS(opts), argc, argv);
	if (rc == GP_OK && dbs.n < 2)
		rc = cli_usage_error("%s", "merge expects OUT.db and at least one IN.db");
	struct gp_err err GP_ERR_SCOPE = {0};
	struct store_merge_out m = {0}; /* a new OUT.db appears whole or not at all */
	const char *out = rc == GP_OK ? dbs.v[0] : NULL;
	for (size_t i = 1; i < dbs.n && rc == GP_OK; i++)
		if ((rc = store_check_merge_input(dbs.v[i], out, &err)))
			cli_fail(rc, &err, false);
	if (rc == GP_OK && (rc = store_merge_open(&m, out, &err)))
		cli_fail(rc, &err, false);
	for (size_t i = 1; i < dbs.n && rc == GP_OK; i++) {
		struct store_merge_stats ms;
		if ((rc = store_merge(m.st, dbs.v[i], &ms, &err)))
			cli_fail(rc, &err, false);
		else
			printf("%s: %lld runs merged, %lld already in %s\n", dbs.v[i],
			       (long long)ms.copied, (long long)ms.duplicates, out);
	}
	int closed = m.path ? store_merge_finish(&m, rc == GP_OK, &err) : GP_OK;
	if (closed && rc == GP_OK)
		cli_fail(rc = closed, &err, false);
	cli_list_free(&dbs);
	return rc < 0 ? 0 : rc;
}

/* --- search --------------------------------------------------------------------- */

struct search_cli {
	struct options o;
	struct search_spec spec;
	int dir;       /* 0 none, 1 --min, 2 --max */
	int64_t seeds; /* --seeds */
	bool no_first_cut;
	int64_t jobs; /* --jobs; 0: the default */
};

static int parse_bound(const char *flag, const char *value, struct search_value *v,
		       struct gp_err *err)
{
	if (!search_parse_value(value, v, err))
		return GP_OK;
	return gp_wrapf(err, err, GP_EINPUT, "%s %s", flag, err->msg);
}

static int parse_lo(const char *value, void *target, struct gp_err *err)
{
	return parse_bound("--lo", value, target, err);
}

static int parse_hi(const char *value, void *target, struct gp_err *err)
{
	return parse_bound("--hi", value, target, err);
}

static int parse_until(const char *value, void *target, struct gp_err *err)
{
	return search_parse_condition(value, target, err);
}

static int parse_tolerance(const char *value, void *target, struct gp_err *err)
{
	double *t = target;
	if (units_number(value, t) || *t <= 0)
		return gp_errorf(err, GP_EINPUT, "--tolerance expects a number > 0, got '%s'",
				 value);
	return GP_OK;
}

/* Loads the scenario with KEY at a bound, so that a bad key fails before any run. */
static int check_bound(const struct search_spec *sp, const struct search_value *b,
		       struct scenario **sc)
{
	char assign[512];
	snprintf(assign, sizeof assign, "%s=%.17g%s", sp->key, b->number, b->suffix);
	const char **sets = gp_xcalloc(sp->n_sets + 1, sizeof *sets);
	if (sp->n_sets)
		memcpy(sets, sp->sets, sp->n_sets * sizeof *sets);
	sets[sp->n_sets] = assign;
	struct gp_err err GP_ERR_SCOPE = {0};
	int rc = scenario_load(sp->scenario, sets, sp->n_sets + 1, sc, &err);
	if (rc)
		cli_fail(rc, &err, false);
	free(sets);
	return rc;
}

static void print_probe(void *ctx, const struct search_probe *p)
{
	const struct search_cli *cli = ctx;
	if (!cli->o.quiet) /* a stopped run's figure is that of the part it ran */
		printf("probe %s=%s: %s.%s = %.6g%s, %s (%srun %lld)\n", cli->spec.key, p->value,
		       cli->spec.until.scope, metric_name(cli->spec.until.metric), p->metric,
		       p->stopped ? " so far" : "", p->holds ? "holds" : "fails",
		       p->stopped ? "stopped early, " : "", (long long)p->first_run_id);
}

static int search_parse(const struct cli_cmd *cmd, struct search_cli *cli, int argc, char **argv)
{
	struct options *o = &cli->o;
	struct search_spec *sp = &cli->spec;
	const struct cli_opt opts[] = {
		OPT_SCENARIO(o),
		{.name = "--vary",
		 .kind = CLI_TEXT,
		 .target = &sp->key,
		 .meta = "KEY",
		 .expects = "a value",
		 .required = true,
		 .help = "the --set path that varies"},
		{.name = "--lo",
		 .kind = CLI_PARSE,
		 .target = &sp->lo,
		 .meta = "X",
		 .parse = parse_lo,
		 .expects = "a value",
		 .required = true,
		 .help = "lower bound, with an optional unit (10/s, 90m)"},
		{.name = "--hi",
		 .kind = CLI_PARSE,
		 .target = &sp->hi,
		 .meta = "Y",
		 .parse = parse_hi,
		 .expects = "a value",
		 .required = true,
		 .help = "upper bound"},
		{.name = "--min",
		 .kind = CLI_CHOICE,
		 .target = &cli->dir,
		 .lo = 1,
		 .required = true,
		 .help = "find the smallest value that meets the condition"},
		{.name = "--max",
		 .kind = CLI_CHOICE,
		 .target = &cli->dir,
		 .lo = 2,
		 .required = true,
		 .help = "find the largest value that meets the condition"},
		{.name = "--until",
		 .kind = CLI_PARSE,
		 .target = &sp->until,
		 .meta = "'METRIC OP VALUE'",
		 .parse = parse_until,
		 .expects = "a value",
		 .required = true,
		 .help = "the condition"},
		{.name = "--seeds",
		 .kind = CLI_INT,
		 .target = &cli->seeds,
		 .meta = "N",
		 .lo = 1,
		 .hi = 1000,
		 .expects = "a whole number from 1 to 1000",
		 .help = "seeds that must all meet it (default 1)"},
		{.name = "--tolerance",
		 .kind = CLI_PARSE,
		 .target = &sp->tolerance,
		 .meta = "T",
		 .parse = parse_tolerance,
		 .help = "for real ranges (default (Y - X) / 1000)"},
		{.name = "--no-first-cut",
		 .kind = CLI_FLAG,
		 .target = &cli->no_first_cut,
		 .help = "bisect [X, Y] even when a first cut could start the search"},
		{.name = "--jobs",
		 .kind = CLI_INT,
		 .target = &cli->jobs,
		 .meta = "N",
		 .help = "threads: the probe and the one guessed to come next run at\n"
			 "once (default: one per processor, at most 2); the probes\n"
			 "written and the answer are the same for any N",
		 .lo = 1,
		 .hi = 256,
		 .expects = "a number of threads from 1 to 256"},
		OPT_DB(o, DEFAULT_DB),
		OPT_SET(o),
		OPT_SEED(o),
		OPT_GROWTH(o),
		OPT_QUIET(o),
	};
	int rc = cli_parse(cmd, opts, N_OPTS(opts), argc, argv);
	if (rc)
		return rc;
	options_finish(o);
	struct gp_err err GP_ERR_SCOPE = {0};
	sp->maximize = cli->dir == 2;
	sp->seeds = (int)cli->seeds;
	sp->jobs = (unsigned)cli->jobs;
	if (search_check_range(sp, &err))
		return cli_fail(GP_EINPUT, &err, true);
	sp->scenario = o->scenario;
	sp->sets = o->sets.v;
	sp->n_sets = o->sets.n;
	return GP_OK;
}

/* So that `report` on the database shows the answer, not the last probe. */
static int record_search(struct store *st, const struct search_spec *sp,
			 const struct search_answer *ans, struct gp_err *err)
{
	struct store_search row = {sp->key,     ans->value,        sp->until.text,
				   ans->run_id, ans->first_run_id, ans->last_run_id};
	return store_write_search(st, &row, err);
}

static int cmd_search(const struct cli_cmd *cmd, int argc, char **argv)
{
	struct search_cli cli = {.o.seed = -1, .seeds = 1};
	struct scenario *sc = NULL, *hi = NULL;
	struct store *st = NULL;
	struct gp_err err GP_ERR_SCOPE = {0};
	struct search_answer ans = {0};
	int rc = search_parse(cmd, &cli, argc, argv);
	if (rc == GP_OK)
		rc = check_bound(&cli.spec, &cli.spec.lo, &sc);
	if (rc == GP_OK)
		rc = check_bound(&cli.spec, &cli.spec.hi, &hi);
	if (rc == GP_OK && (rc = store_open(cli.o.db ? cli.o.db : sc->output.db, &st, &err)))
		cli_fail(rc, &err, false);
	if (rc == GP_OK && !cli.no_first_cut) /* on the scenario at --lo, as search_estimate asks */
		search_estimate(&cli.spec, sc);
	if (rc == GP_OK && cli.spec.start && !cli.o.quiet)
		printf("first cut (an estimate): %s=%lld; confirming by simulation\n", cli.spec.key,
		       (long long)cli.spec.start);
	if (rc == GP_OK && (rc = search_run(&cli.spec, st, print_probe, &cli, &ans, &err)))
		cli_fail(rc, &err, false);
	if (rc == GP_OK && ans.found && (rc = record_search(st, &cli.spec, &ans, &err)))
		cli_fail(rc, &err, false);
	if (rc == GP_OK && ans.found)
		printf("%s=%s\n", cli.spec.key, ans.value);
	else if (rc == GP_OK) {
		printf("no value of %s in [%.6g%s, %.6g%s] meets '%s'\n", cli.spec.key,
		       cli.spec.lo.number, cli.spec.lo.suffix, cli.spec.hi.number,
		       cli.spec.hi.suffix, cli.spec.until.text);
		rc = EXIT_NOT_FOUND;
	}
	store_close(st);
	scenario_free(sc);
	scenario_free(hi);
	cli_list_free(&cli.o.sets);
	return rc < 0 ? 0 : rc;
}

/* --- report --------------------------------------------------------------------- */

static int cmd_report(const struct cli_cmd *cmd, int argc, char **argv)
{
	const char *db = NULL, *html = NULL, *window = NULL, *aggregate = NULL;
	int64_t run_id = 0;
	bool opencost = false, openmetrics = false;
	struct opencost_query q = {0};
	const struct cli_opt opts[] = {
		{.kind = CLI_PATH, .target = &db, .meta = "DB"},
		{.name = "--run",
		 .kind = CLI_INT,
		 .target = &run_id,
		 .meta = "ID",
		 .lo = 1,
		 .hi = INT64_MAX,
		 .expects = "a run id >= 1",
		 .help = "the run (default: the latest; when the latest runs are a\n"
			 "search's probes, the search's answer)"},
		{.name = "--opencost",
		 .kind = CLI_FLAG,
		 .target = &opencost,
		 .help = "its allocations per workload and output.step window, __idle__\n"
			 "included, in the shape of OpenCost's /allocation API response"},
		{.name = "--window",
		 .kind = CLI_TEXT,
		 .target = &window,
		 .meta = "START,END",
		 .help = "with --opencost: the windows starting in [START, END), RFC 3339"},
		{.name = "--aggregate",
		 .kind = CLI_TEXT,
		 .target = &aggregate,
		 .meta = "BY",
		 .help = "with --opencost: namespace, label:KEY, controller, pool or queue"},
		{.name = "--accumulate",
		 .kind = CLI_FLAG,
		 .target = &q.accumulate,
		 .help = "with --opencost: one set over every window"},
		{.name = "--share-idle",
		 .kind = CLI_FLAG,
		 .target = &q.share_idle,
		 .help = "with --opencost: __idle__ shared per resource by cost"},
		{.name = "--idle-by-node",
		 .kind = CLI_FLAG,
		 .target = &q.idle_by_node,
		 .help = "with --opencost: idle per node, shared on its node (a run of\n"
			 "cost: {idle_by: node}; one set over the run)"},
		{.name = "--openmetrics",
		 .kind = CLI_FLAG,
		 .target = &openmetrics,
		 .help = "its time series as OpenMetrics text stamped at the scenario's\n"
			 "wall-clock times (gpuplan_* gauges per pool and workload, vLLM's\n"
			 "metrics per inference workload), for\n"
			 "promtool tsdb create-blocks-from openmetrics FILE DATA_DIR"},
		{.name = "--html",
		 .kind = CLI_PATH,
		 .target = &html,
		 .meta = "PATH",
		 .help = "one self-contained HTML page (inline SVG, no script, no network):\n"
			 "the diagnosis, capacity, demand and allocation over time, the four\n"
			 "meanings of utilization, queue and pending reasons, latencies"},
	};
	int rc = cli_parse(cmd, opts, N_OPTS(opts), argc, argv);
	if (rc)
		return rc < 0 ? 0 : rc;
	if (!opencost && !openmetrics && !html)
		return cli_usage_error("%s",
				       "report needs --opencost, --openmetrics or --html PATH (see "
				       "'gpuplan report --help')");
	if (opencost && openmetrics)
		return cli_usage_error("%s", "--opencost and --openmetrics both print: choose one");
	struct gp_err err GP_ERR_SCOPE = {0};
	if ((rc = opencost_flags(opencost, window, aggregate, &q, &err)))
		return cli_fail(rc, &err, true);
	if (access(db, R_OK) != 0)
		return cli_usage_error("cannot read database '%s'", db);
	struct store *st = NULL;
	rc = store_open_read(db, &st, &err);
	if (!rc && html)
		rc = html_report_file(st, db, run_id, html, &err);
	if (!rc && opencost)
		rc = opencost_report(stdout, st, db, run_id, &q, &err);
	if (!rc && openmetrics)
		rc = openmetrics_write(stdout, st, run_id, &err);
	store_close(st);
	return rc ? cli_fail(rc, &err, false) : 0;
}

/* --- the commands ------------------------------------------------------------------ */

static const struct cli_cmd commands[] = {
	{"run",
	 "SCENARIO.yaml [--db PATH] [--set KEY=VALUE]... [--goal WHO=DURATION]...\n"
	 "[--seed N] [--growth F] [--quiet] [--json]",
	 "simulate and append the run to the results database",
	 "Simulates the scenario, prints a summary and appends the run to the database.\n", NULL,
	 cmd_run},
	{"check", "SCENARIO.yaml [--set KEY=VALUE]... [--goal WHO=DURATION]... [--seed N]",
	 "validate only; print the resolved pools and workloads",
	 "Validates the scenario (and the traces it names) and prints what it resolved to.\n"
	 "Writes nothing.\n",
	 NULL, cmd_check},
	{"estimate",
	 "(--model M | --model-config PATH) --quant Q (--gpu G | --compare-gpus)\n[--context N] [--batch B] [--tp N] [--kv-cache Q] [--json]\n[--rate R [--prompt N] [--output N] [--ttft D] [--tpot D] [--price TYPE=USD]...\n [--route GPU:MAX,...,GPU | --disaggregated [--link L]]]",
	 "footprint and step times of one model on one GPU type; with --rate, the\nfirst-cut size of a service on it or on each type (of its routed groups\nwith --route, of its prefill and decode workers with --disaggregated)",
	 "Prints the memory footprint and step times of one model on one GPU type.\n", NULL,
	 cmd_estimate},
	{"sweep", "SWEEP.yaml [--db PATH] [--jobs N] [--shard K/N] [--resume] [--quiet]",
	 "run every point of a sweep file (grid, zip, seeds)",
	 "Runs every point of a sweep file: a base scenario, a grid (every combination)\n"
	 "and/or zip (paired lists) of --set paths to lists of values, and seeds.  Each\n"
	 "point is a run whose overrides are in the params table.  The whole sweep is\n"
	 "checked before the first run.  Progress (points done/total, runs/s, ETA) goes\n"
	 "to stderr when it is a terminal.\n",
	 NULL, cmd_sweep},
	{"merge", "OUT.db IN.db...", "combine results databases (sweep shards) into OUT.db",
	 "Copies the runs of every IN.db into OUT.db (created if needed) with new run ids.\n"
	 "Runs OUT.db already holds are skipped: sweep points by sweep name and point,\n"
	 "other runs by scenario, seed and start time, so merging twice adds nothing.\n"
	 "Every input is checked before anything is written.\n",
	 NULL, cmd_merge},
	{"report",
	 "DB [--run ID] [--opencost | --openmetrics] [--html PATH]\n[--window START,END] "
	 "[--aggregate BY] [--accumulate] [--share-idle] [--idle-by-node]",
	 "a run's allocations as OpenCost's /allocation response, its\ntime series as "
	 "OpenMetrics text for Prometheus, or one HTML\npage of charts and the diagnosis",
	 "Prints a run of the database (default: the latest) for other tools:\n", NULL, cmd_report},
	{"advise",
	 "SCENARIO.yaml [--db PATH] [--set KEY=VALUE]... [--goal WHO=DURATION]...\n"
	 "[--seed N] [--growth F] [--tolerance PCT] [--force] [--quiet] [--json]\n"
	 "[--emit DIR] [--jobs N] [--keep PATH]...",
	 "diagnose, run the alternatives the findings suggest, rank them",
	 "Runs the scenario, diagnoses it, and runs the alternatives the findings suggest:\n"
	 "sharing modes (time-slicing, MPS, MIG, fractional) for a pool whose allocated GPUs\n"
	 "idle while pods wait, int8/int4 weights for workloads with a model, relaxed\n"
	 "placement rules, and for each pool a finding names, the smallest node count that\n"
	 "meets every goal of the workloads it hosts.  Every run goes to the database with\n"
	 "its overrides in params.  Prints the runs ranked: those in which every workload\n"
	 "meets its goal first (deadlines, SLO, queue p95 goal; among those, more hardware\n"
	 "last, then narrower weights, then components beyond stock Kubernetes, Kueue,\n"
	 "the Cluster Autoscaler and NVIDIA's device plugin: a GPU policy's scheduler\n"
	 "plugin, another vendor's GPUs), then by bill per day, cost per\n"
	 "verified result and queue p95; runs that miss, nearest first.  The last line\n"
	 "names the recommendation, or the closest run.\n"
	 "Hardware is recommended only from a model it trusts: a twin needs a backtest of\n"
	 "the same file within --tolerance, and no workload people wait on may run on a\n"
	 "!placeholder duration (docs/cli.md); --force recommends anyway, with a warning.\n",
	 NULL, cmd_advise},
	{"backtest", "TWIN.yaml [--db PATH] [--tolerance PCT] [--quiet] [--json]",
	 "replay a twin's history on its pools and compare with what\nhappened",
	 "Replays a twin's history (docs/import.md) on its pools; prints, per workload and\n"
	 "for all, observed beside simulated with the error, the figures past the\n"
	 "tolerance, and what it could not model.  One transaction writes the run.\n",
	 NULL, cmd_backtest},
	{"search",
	 "SCENARIO.yaml --vary KEY --lo X --hi Y (--min|--max)\n--until 'METRIC OP VALUE' [--seeds N] "
	 "[--tolerance T]\n[--no-first-cut] [--jobs N] [--db PATH] [--set KEY=VALUE]... [--seed N]\n"
	 "[--growth F] [--quiet]",
	 "bisect one parameter: smallest pool, largest sustainable rate",
	 "Bisects KEY (a --set path) over [X, Y].  --min finds the smallest value that meets\n"
	 "the condition (the smallest pool that meets every deadline), --max the largest\n"
	 "(the highest request rate within the SLO); the condition is assumed monotone.\n"
	 "METRIC is a metric of scope all, or SCOPE.METRIC; OP is one of <= >= < > == !=.\n"
	 "Bounds may carry a unit (10/s, 90m); whole-number bounds bisect to the exact answer,\n"
	 "others to within the tolerance (default (Y - X) / 1000).  With --seeds N the\n"
	 "condition must hold for the N seeds from the scenario's.  Every probe is a run in\n"
	 "the database.  The last line is KEY=VALUE; exit 3 when no value in range meets it.\n"
	 "A --min over an inference workload's replicas bounded by its TTFT tail starts from\n"
	 "the first cut (docs/inference.md), re-solved with each probe's TTFT tail, not [X, Y].\n",
	 "search needs --vary KEY, --lo X, --hi Y, --min or --max, and --until 'METRIC OP VALUE'",
	 cmd_search},
	{"import",
	 "(--nodes NODES --pods PODS | --history DIR) [--kueue KUEUE] [--dcgm METRICS]\n[--opencost ALLOC] [--prices PRICES] "
	 "[--pdbs PDBS] [--gpu-map PRODUCT=TYPE]...\n[--at TIME] [--horizon DURATION] [--name NAME] -o "
	 "SCENARIO.yaml",
	 "a scenario from kubectl, GPU Feature Discovery, Kueue, DCGM\nand OpenCost output",
	 "Writes a scenario that reproduces a cluster snapshot (docs/import.md): nodes\n"
	 "become pools, pods workloads, running pods start on their own node.  Then it\n"
	 "simulates the first second and prints each pending pod's PodScheduled message\n"
	 "beside gpuplan's, with the count that agree.  Bad input: exit 2, nothing written.\n"
	 "With --history DIR (scripts/export-history.sh's files) it learns a twin instead:\n"
	 "workloads by controller, their arrivals, durations, requests and DCGM activity,\n"
	 "and writes the observed pods beside it (NAME.pods.csv); it takes --nodes,\n"
	 "--kueue, --dcgm, --opencost, --prices, --gpu-map, --horizon and --name, not\n"
	 "--pods or --at.\n",
	 NULL, cmd_import},
};

static void print_usage(FILE *out)
{
	fputs("usage: gpuplan <command> [options]\n\ncommands:\n", out);
	for (size_t i = 0; i < N_OPTS(commands); i++) {
		fprintf(out, "  %s ", commands[i].name);
		put_indented(out, commands[i].synopsis, (int)strlen(commands[i].name) + 3);
		fputs("\n                     ", out);
		put_indented(out, commands[i].summary, 21);
		fputc('\n', out);
	}
	fputs("\nRun 'gpuplan COMMAND --help' for a command's options.  Exit codes: 0 ok,\n"
	      "1 runtime failure (I/O, SQLite), 2 invalid usage, scenario, trace or\n"
	      "database file, 3 search found no value in range that meets the condition.\n",
	      out);
}

/* A full disk or a closed pipe under stdout is a failure, not rc 0. */
static int stdout_checked(int rc)
{
	if (!fflush(stdout) && !ferror(stdout))
		return rc;
	fprintf(stderr, "gpuplan: error: writing to standard output: %s\n", strerror(errno));
	return rc ? rc : GP_ERUNTIME;
}

int main(int argc, char **argv)
{
	/* Past `ulimit -f` a write fails with EFBIG and is reported, instead of
	 * the process dying of SIGXFSZ with no message. */
	signal(SIGXFSZ, SIG_IGN);
	if (argc < 2)
		return print_usage(stderr), GP_EINPUT;
	struct gp_err env GP_ERR_SCOPE = {0};
	if (gp_check_environment(&env))
		return cli_fail(GP_EINPUT, &env, false);
	const char *name = argv[1];
	if (!strcmp(name, "--help") || !strcmp(name, "-h") || !strcmp(name, "help"))
		return print_usage(stdout), stdout_checked(0);
	for (size_t i = 0; i < N_OPTS(commands); i++)
		if (!strcmp(name, commands[i].name))
			return stdout_checked(commands[i].run(&commands[i], argc - 2, argv + 2));
	return cli_usage_error("unknown command '%s'", name);
}
