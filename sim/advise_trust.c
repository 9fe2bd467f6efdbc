/*
 * advise_trust.c - whether advise may recommend hardware (advise.h,
 * "Trust"): a twin must have a backtest of the same file within tolerance,
 * and no workload whose wait matters may run on a placeholder duration.
 * Each reason is a sentence with its evidence, for the output and the
 * advice table.
 */
#include "gpuplan/advise.h"

#include <math.h>
#include <stdarg.h>
#include <string.h>

#include "gpuplan/report.h"

static void add_reason(struct advice *a, const char *fmt, ...) GP_PRINTF(2, 3);

static void add_reason(struct advice *a, const char *fmt, ...)
{
	struct gp_sbuf sb = {0};
	va_list ap;
	va_start(ap, fmt);
	char line[2048];
	vsnprintf(line, sizeof line, fmt, ap);
	va_end(ap);
	gp_sb_printf(&sb, "%s", line);
	a->reasons = gp_xrealloc(a->reasons, (a->n_reasons + 1) * sizeof *a->reasons);
	a->reasons[a->n_reasons++] = gp_sb_take(&sb);
}

/* Whether anyone waits on w: a deadline, a goal of its own, an SLO or a
 * server (inference), or pods people hold open (kind service: interactive
 * services and notebooks).  The default goal of batch work does not count. */
static bool wait_matters(const struct workload_spec *w)
{
	return scenario_has_deadlines(w) || w->queue_goal_given || w->kind == WORKLOAD_INFERENCE ||
	       w->kind == WORKLOAD_SERVICE;
}

static const char *kind_words(const struct workload_spec *w)
{
	return scenario_has_deadlines(w)       ? "has a deadline"
	       : w->queue_goal_given           ? "has a queue goal of its own"
	       : w->kind == WORKLOAD_INFERENCE ? "serves requests"
					       : "is held open by people (a service or notebook)";
}

#define NAMED_AT_MOST 4 /* workloads a reason names; the others are counted */

/* One reason for every workload people wait on that runs on a placeholder
 * duration: how many, the first few by name, the first one's value and why. */
static void check_placeholders(const struct scenario *sc, struct advice *a)
{
	struct gp_sbuf names = {0};
	const struct placeholder *first = NULL;
	const struct workload_spec *first_w = NULL;
	size_t n = 0;
	for (size_t i = 0; i < sc->n_workloads; i++) {
		const struct workload_spec *w = &sc->workloads[i];
		char path[SCENARIO_MAX_NAME + 32];
		snprintf(path, sizeof path, "workloads[%s].duration", w->name);
		const struct placeholder *p =
			wait_matters(w) ? scenario_placeholder(sc, path) : NULL;
		if (!p)
			continue;
		if (n < NAMED_AT_MOST)
			gp_sb_printf(&names, "%s%s", n ? ", " : "", w->name);
		first = first ? first : p;
		first_w = first_w ? first_w : w;
		n++;
	}
	char *list = gp_sb_take(&names);
	if (n == 1) {
		bool plain = !strcmp(first->reason, "not learned");
		add_reason(a,
			   "workload %s %s, so its wait matters, but its duration is a "
			   "placeholder: %s = %s (not learned%s%s)",
			   first_w->name, kind_words(first_w), first->path, first->value,
			   plain ? "" : ": ", plain ? "" : first->reason);
	} else if (n > 1) {
		bool plain = !strcmp(first->reason, "not learned");
		char more[48] = "";
		if (n > NAMED_AT_MOST)
			snprintf(more, sizeof more, " and %zu more", n - NAMED_AT_MOST);
		add_reason(
			a,
			"%zu workloads whose wait matters (a deadline, a goal of their own, an "
			"inference server, a service or notebook) run on a placeholder duration: "
			"%s%s; e.g. %s = %s (not learned%s%s)",
			n, list, more, first->path, first->value, plain ? "" : ": ",
			plain ? "" : first->reason);
	}
	free(list);
}

/* The figures of the latest backtest that pass the tolerance: queue p95
 * and GPU-hours, for all and for every workload with at least
 * ADVISE_BACKTEST_MIN_PODS pods started in the history. */
static void check_backtest(const struct backtest_row *rows, size_t n, int64_t run, double tolerance,
			   struct advice *a)
{
	struct gp_sbuf sb = {0};
	size_t bad = 0;
	for (size_t i = 0; i < n; i++) {
		const struct backtest_row *b = &rows[i];
		if (strcmp(b->metric, "queue_time_p95_s") && strcmp(b->metric, "gpu_hours"))
			continue;
		double pods = 0;
		for (size_t k = 0; k < n; k++)
			if (!strcmp(rows[k].scope, b->scope) &&
			    !strcmp(rows[k].metric, "pods_started"))
				pods = rows[k].observed;
		if (strcmp(b->scope, "all") && !(pods >= ADVISE_BACKTEST_MIN_PODS))
			continue;
		if (results_backtest_within(b, tolerance))
			continue;
		char e[16];
		gp_sb_printf(&sb, "%s%s %s observed %.4g, simulated %.4g (%s)", bad ? "; " : "",
			     b->scope, b->metric, b->observed, b->simulated,
			     report_error_pct(b->error, e, sizeof e));
		bad++;
	}
	char *what = gp_sb_take(&sb);
	if (bad)
		add_reason(a,
			   "the latest backtest (run %lld) differs from the history by more than "
			   "%g%% (queue p95 by more than 5m too): %s",
			   (long long)run, 100 * tolerance, what);
	free(what);
}

int advise_trust(const struct advise_spec *sp, const struct scenario *sc, struct store *st,
		 struct advice *a, struct gp_err *err)
{
	double tolerance = sp->tolerance > 0 ? sp->tolerance : ADVISE_DEFAULT_TOLERANCE;
	a->twin = sc->history.on;
	if (sc->history.on) {
		int64_t run = 0;
		int rc = store_latest_backtest(st, sc->sha256, &run, err);
		if (rc)
			return rc;
		if (!run) {
			add_reason(a,
				   "%s is a twin and %s holds no backtest of it (this file, sha256 "
				   "%.12s...): run `gpuplan backtest %s --db %s` first",
				   sc->path, a->db, sc->sha256, sc->path, a->db);
		} else {
			struct backtest_row *rows = NULL;
			size_t n = 0;
			rc = store_read_backtest(st, run, &rows, &n, err);
			if (rc)
				return rc;
			check_backtest(rows, n, run, tolerance, a);
			store_free_backtest(rows, n);
		}
	}
	check_placeholders(sc, a);
	a->refused = a->n_reasons && !sp->force;
	a->forced = a->n_reasons && sp->force;
	return GP_OK;
}
