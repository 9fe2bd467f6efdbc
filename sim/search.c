/*
 * search.c - bisection over one scenario parameter (see search.h).
 */
#include "gpuplan/search.h"

#include "search_int.h"

#include "gpuplan/scenario.h"
#include "gpuplan/run.h"
#include "gpuplan/units.h"
#include "gpuplan/ytree.h"

#include <assert.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const struct {
	const char *text;
	enum search_op op;
} ops[] = {{"<=", OP_LE}, {">=", OP_GE}, {"==", OP_EQ}, {"!=", OP_NE}, {"<", OP_LT}, {">", OP_GT}};

/* "--until 'deadline_met >= 100': unknown metric 'deadline_met'; did you mean
 * 'deadline_met_pct'?": the closest name by edit distance, else one that
 * begins with it. */
static int unknown_metric(const char *text, const char *metric, struct gp_err *err)
{
	const char *close = metric_closest(metric);
	if (close)
		return gp_errorf(err, GP_EINPUT,
				 "--until '%s': unknown metric '%s'; did you mean '%s'?", text,
				 metric, close);
	return gp_errorf(err, GP_EINPUT,
			 "--until '%s': unknown metric '%s'; see docs/results.md "
			 "for the metrics",
			 text, metric);
}

int search_parse_condition(const char *text, struct search_condition *c, struct gp_err *err)
{
	memset(c, 0, sizeof *c);
	/* The operator is the first run of its characters: "=>" is one, unknown. */
	const char *at = text + strcspn(text, "<>=!");
	size_t len = strspn(at, "<>=!"), k = 0;
	while (k < sizeof ops / sizeof ops[0] &&
	       (strlen(ops[k].text) != len || strncmp(ops[k].text, at, len)))
		k++;
	if (!len)
		return gp_errorf(err, GP_EINPUT,
				 "--until '%s': expected 'METRIC OP VALUE' with OP "
				 "one of <= >= < > == !=, like 'deadline_met_pct >= 100'",
				 text);
	if (k == sizeof ops / sizeof ops[0])
		return gp_errorf(err, GP_EINPUT,
				 "--until '%s': unknown operator '%.*s'; expected one of "
				 "<= >= < > == !=",
				 text, (int)len, at);
	c->op = ops[k].op;
	char name[sizeof c->scope + 64];
	size_t n = (size_t)(at - text);
	while (n && text[n - 1] == ' ')
		n--;
	const char *start = text;
	while (*start == ' ' && n)
		start++, n--;
	if (!n || n >= sizeof name)
		return gp_errorf(err, GP_EINPUT,
				 "--until '%s': expected a metric name before the "
				 "operator",
				 text);
	memcpy(name, start, n);
	name[n] = '\0';
	const char *dot = strchr(name, '.');
	snprintf(c->scope, sizeof c->scope, "%.*s", dot ? (int)(dot - name) : 3,
		 dot ? name : "all");
	const char *metric = dot ? dot + 1 : name;
	int id = metric_of(metric);
	if (id < 0)
		return unknown_metric(text, metric, err);
	c->metric = (enum metric_id)id;
	const char *value = at + len;
	while (*value == ' ')
		value++;
	if (units_number(value, &c->value))
		return gp_errorf(err, GP_EINPUT,
				 "--until '%s': expected a number after the "
				 "operator, got '%s'",
				 text, value);
	snprintf(c->text, sizeof c->text, "%s", text);
	return GP_OK;
}

int search_parse_value(const char *text, struct search_value *v, struct gp_err *err)
{
	char *end;
	v->number = strtod(text, &end);
	if (end == text || !isfinite(v->number) || strlen(end) >= sizeof v->suffix)
		return gp_errorf(err, GP_EINPUT,
				 "'%s' is not numeric; expected a number with an "
				 "optional unit, like 4, 2.5 or 10/s",
				 text);
	snprintf(v->suffix, sizeof v->suffix, "%s", end);
	return GP_OK;
}

/* Bounds in two duration units ("30s", "10m") become seconds. */
static void same_duration_unit(struct search_spec *s)
{
	char a[32], b[32];
	sim_time ta, tb;
	snprintf(a, sizeof a, "1%s", s->lo.suffix);
	snprintf(b, sizeof b, "1%s", s->hi.suffix);
	if (!s->lo.suffix[0] || !s->hi.suffix[0] || units_duration(a, &ta) ||
	    units_duration(b, &tb))
		return;
	s->lo.number *= sim_seconds(ta);
	s->hi.number *= sim_seconds(tb);
	snprintf(s->lo.suffix, sizeof s->lo.suffix, "s");
	snprintf(s->hi.suffix, sizeof s->hi.suffix, "s");
}

int search_check_range(struct search_spec *s, struct gp_err *err)
{
	if (strcmp(s->lo.suffix, s->hi.suffix))
		same_duration_unit(s);
	if (strcmp(s->lo.suffix, s->hi.suffix))
		return gp_errorf(err, GP_EINPUT, "--lo and --hi have different units ('%s', '%s')",
				 s->lo.suffix, s->hi.suffix);
	if (!(s->lo.number < s->hi.number))
		return gp_errorf(err, GP_EINPUT, "--lo %.6g is not below --hi %.6g", s->lo.number,
				 s->hi.number);
	s->integer = s->lo.number == floor(s->lo.number) && s->hi.number == floor(s->hi.number) &&
		     !strchr(s->lo.suffix, '.');
	return GP_OK;
}

static bool holds(enum search_op op, double a, double b)
{
	switch (op) {
	case OP_LT: return a < b;
	case OP_LE: return a <= b;
	case OP_GT: return a > b;
	case OP_GE: return a >= b;
	case OP_EQ: return a == b;
	case OP_NE: return a != b;
	}
	return false;
}

/* The worse of two metric values with respect to the condition. */
static double worse(enum search_op op, double a, double b)
{
	return op == OP_GT || op == OP_GE ? fmin(a, b) : fmax(a, b);
}

static void format_value(const struct search_spec *s, double x, char *buf, size_t len)
{
	if (s->integer)
		snprintf(buf, len, "%lld%s", (long long)llround(x), s->lo.suffix);
	else
		snprintf(buf, len, "%.6g%s", x, s->lo.suffix);
}

/* The stop rule (infer.h) of a condition that bounds a quantile of a
 * per-request figure from above (ttft_p99_s <= 0.5): once more of the
 * scope's requests are late than the quantile allows, the condition fails
 * whatever the rest of the run does.  false for any other condition. */
static bool stop_rule(const struct search_condition *c, struct infer_stop *stop)
{
	/* the quantiles as infer_results.c computes them: pct(v, 99) is 99.0 / 100 */
	static const struct {
		enum metric_id metric;
		enum infer_figure figure;
		double percentile;
	} quantiles[] = {
		{METRIC_TTFT_P50_S, INFER_TTFT, 50}, {METRIC_TTFT_P95_S, INFER_TTFT, 95},
		{METRIC_TTFT_P99_S, INFER_TTFT, 99}, {METRIC_TPOT_P50_S, INFER_TPOT, 50},
		{METRIC_TPOT_P95_S, INFER_TPOT, 95}, {METRIC_TPOT_P99_S, INFER_TPOT, 99},
		{METRIC_E2E_P50_S, INFER_E2E, 50},   {METRIC_E2E_P99_S, INFER_E2E, 99},
	};
	if (c->op != OP_LE && c->op != OP_LT)
		return false;
	for (size_t k = 0; k < sizeof quantiles / sizeof quantiles[0]; k++)
		if (quantiles[k].metric == c->metric) {
			*stop = (struct infer_stop){c->scope, quantiles[k].figure,
						    quantiles[k].percentile / 100, c->value};
			return true;
		}
	return false;
}

void search_simulate(const struct search_spec *s, const char *value, uint64_t seed_offset,
		     const atomic_bool *cancel, struct search_sim *out)
{
	/* The spec's typed overrides, then the probe's own: KEY=value, the
	 * nodes that hold value replicas, the linked ones, the seed. */
	size_t n = s->n_overrides, own = n;
	struct override *ov = gp_xcalloc(n + 3 + SEARCH_MAX_LINKED, sizeof *ov);
	if (n)
		memcpy(ov, s->overrides, n * sizeof *ov); /* borrowed */
	ov[n++] = override_make(s->key, value);
	if (s->with_key && s->with_per > 0) {
		long long v = atoll(value), per = (long long)s->with_per;
		ov[n++] = override_makef(s->with_key, "%lld",
					 (long long)s->with_base + (v + per - 1) / per);
	}
	if (s->linked)
		n += s->linked(s->linked_ctx, value, ov + n);
	*out = (struct search_sim){0};
	results_init(&out->r);
	int rc = scenario_load_overrides(s->scenario, s->sets, s->n_sets, ov, n, &out->sc,
					 &out->err);
	if (!rc && seed_offset) {
		/* Seeds follow the scenario's own: seed, seed + 1, ... */
		ov[n++] = override_makef("seed", "%llu",
					 (unsigned long long)(out->sc->seed + seed_offset));
		scenario_free(out->sc);
		out->sc = NULL;
		rc = scenario_load_overrides(s->scenario, s->sets, s->n_sets, ov, n, &out->sc,
					     &out->err);
	}
	struct infer_stop stop;
	if (!rc)
		rc = run_simulate_stop(out->sc, &out->r, stop_rule(&s->until, &stop) ? &stop : NULL,
				       cancel, &out->stopped, &out->err);
	out->rc = rc;
	for (size_t i = own; i < n; i++)
		override_free(&ov[i]);
	free(ov);
}

void search_sim_free(struct search_sim *p)
{
	results_free(&p->r);
	scenario_free(p->sc);
	p->sc = NULL;
	gp_err_free(&p->err);
}

/* One run of the scenario with KEY=value and seed, appended to the database
 * (taken from the runs simulated ahead when it is there); *metric receives
 * the condition's metric (NAN when the run has none), and *recut, when cal
 * is given, the first cut calibrated by the run (search_recut; NAN when
 * there is none).  A condition with a stop rule ends the run as soon as it
 * is certain to fail (*stopped): the run is stored with status "stopped"
 * and the figures of the part it ran, whose quantile is past the bound as
 * the whole run's would be. */
static int run_once(const struct search_spec *s, struct store *st, struct search_ahead *ahead,
		    double x, const char *value, uint64_t seed_offset, double *metric,
		    struct search_calib *cal, double *recut, bool *stopped, int64_t *run_id,
		    struct gp_err *err)
{
	struct search_sim sim;
	if (seed_offset || !search_ahead_take(ahead, x, &sim))
		search_simulate(s, value, seed_offset, NULL, &sim);
	int rc = sim.rc;
	*stopped = sim.stopped;
	if (rc)
		gp_err_move(err, &sim.err);
	if (!rc)
		rc = store_write_run(st, sim.sc, &sim.r, run_id, err);
	if (!rc &&
	    (!results_get(&sim.r, s->until.scope, s->until.metric, metric) || isnan(*metric)))
		rc = gp_errorf(err, GP_EINPUT, "--until: the run has no metric '%s' in scope '%s'",
			       metric_name(s->until.metric), s->until.scope);
	/* while the run's scenario (its model, its GPU) is at hand, unless no
	 * probe follows this one's verdict */
	bool ok = !rc && holds(s->until.op, *metric, s->until.value);
	bool last =
		s->seeds == 1 && (ok ? cal && cal->closes_if_holds : cal && cal->closes_if_fails);
	if (!rc && cal && !last)
		*recut = search_recut(s, sim.sc, &sim.r, atoll(value), cal);
	if (!rc && s->on_run)
		s->on_run(s->run_ctx, *run_id, sim.sc, &sim.r);
	search_sim_free(&sim);
	return rc;
}

/* Whether the condition holds at x for every seed; with cal, *recut the
 * first cut calibrated by the probe, the most of its seeds'. */
static int probe(const struct search_spec *s, struct store *st, struct search_ahead *ahead,
		 double x, search_probe_fn fn, void *ctx, struct search_answer *a, bool *ok,
		 struct search_calib *cal, double *recut, struct gp_err *err)
{
	char value[64];
	format_value(s, x, value, sizeof value);
	struct search_probe p = {value, true, NAN, 0, false};
	*recut = NAN;
	for (int k = 0; k < s->seeds; k++) {
		double m = NAN, cut = NAN;
		int64_t id;
		bool stopped;
		int rc = run_once(s, st, ahead, x, value, (uint64_t)k, &m, cal, &cut, &stopped, &id,
				  err);
		if (rc)
			return rc;
		assert(!(stopped && holds(s->until.op, m, s->until.value)) &&
		       "a stopped run's quantile is past the bound");
		p.stopped |= stopped;
		*recut = fmax(*recut, cut); /* fmax ignores a NAN */
		if (k == 0)
			p.first_run_id = id;
		if (!a->first_run_id)
			a->first_run_id = id;
		a->last_run_id = id;
		p.metric = k == 0 ? m : worse(s->until.op, p.metric, m);
		p.holds &= holds(s->until.op, m, s->until.value);
	}
	if (fn)
		fn(ctx, &p);
	*ok = p.holds;
	if (p.holds)
		a->run_id = p.first_run_id; /* probes that hold close in on the answer */
	return GP_OK;
}

void search_estimate(struct search_spec *s, const struct scenario *sc)
{
	s->start = search_first_cut(s, sc, &s->service);
	s->has_service = s->start > 0 && s->service.model;
}

/* The bisection's next value between good and bad; NAN once they are
 * within the tolerance or adjacent whole numbers. */
static double midpoint(const struct search_spec *s, double good, double bad, double tol)
{
	if (!(fabs(bad - good) > tol))
		return NAN;
	double mid = (good + bad) / 2;
	if (s->integer)
		mid = s->maximize ? floor(mid) : ceil(mid);
	return mid == good || mid == bad ? NAN : mid;
}

/* Runs ahead (search_ahead_plan): now, and next unless it is NAN. */
static void plan_ahead(const struct search_spec *s, struct search_ahead *ahead, double bad,
		       double good, double now, double next)
{
	char now_text[64], next_text[64];
	format_value(s, now, now_text, sizeof now_text);
	format_value(s, next, next_text, sizeof next_text);
	search_ahead_plan(ahead, bad, good, now, now_text, next, isnan(next) ? NULL : next_text);
}

/* Bisects between good (holds) and bad (fails) down to the tolerance,
 * guessing that each probe holds for the run ahead. */
static int bisect(const struct search_spec *s, struct store *st, struct search_ahead *ahead,
		  search_probe_fn fn, void *ctx, struct search_answer *a, double *good, double bad,
		  double tol, struct gp_err *err)
{
	bool ok;
	double unused, mid;
	while (!isnan(mid = midpoint(s, *good, bad, tol))) {
		plan_ahead(s, ahead, bad, *good, mid, midpoint(s, mid, bad, tol));
		int rc = probe(s, st, ahead, mid, fn, ctx, a, &ok, NULL, &unused, err);
		if (rc)
			return rc;
		if (ok)
			*good = mid;
		else
			bad = mid;
	}
	return GP_OK;
}

/*
 * --min from a first guess, the bracket kept as whole numbers: bad fails (lo
 * - 1 before any probe fails), good holds (hi + 1 before any holds), and the
 * answer is good once good = bad + 1: the boundary pair, so the answer is
 * the bisection's wherever the condition is monotone.
 */
struct walk {
	double bad, good;
	double bad_cut, good_cut; /* their first cuts, calibrated by their probes */
	double step, next;        /* the gallop's: 1, 1, 2, 4, ... */
	int guided;               /* probes chosen by the calibrated first cut */
};

#define MAX_GUIDED 3 /* guided probes within a two-sided bracket; then bisect */

/* The value to probe next, within (bad, good), the last probe's cut (a real
 * number; search_recut) in the walk.  A cut says the answer is near it, one
 * of its two nearest whole numbers, so the probe is the lower of them,
 * ceil(cut - 1/2): whether it holds or fails, its neighbour closes the
 * bracket.  Once both ends of the bracket have a cut, regula falsi: a
 * failing probe's cut lies above it and a holding one's at or below it, so
 * cut(n) - n changes sign between them, and its root on the line through
 * the two is the guess.  A cut more than a factor 2 from its probe comes
 * from a tail the model reads badly (far below the bound, where the model's
 * idle tail differs from the simulation's), and a saturated probe's (+inf)
 * says only "more": the step is then at most a halving or a doubling, or
 * the bracket's middle once it has two ends.  Without a model (NAN), or
 * past MAX_GUIDED, gallop from the last probe away from it (a first cut one
 * off costs one probe more, not two), then bisect. */
static double next_value(struct walk *w, double lo, double hi, double last, bool ok)
{
	double y, cut = ok ? w->good_cut : w->bad_cut;
	bool two = w->bad >= lo && w->good <= hi;
	bool wild = isinf(cut) || cut < last / 2; /* outside the model's reach */
	if (!isnan(cut) && w->guided < MAX_GUIDED && !(two && wild)) {
		w->guided += two; /* misses inside the bracket */
		if (two && isfinite(w->good_cut) && isfinite(w->bad_cut)) {
			double fb = w->bad_cut - w->bad, fg = w->good_cut - w->good;
			if (fb > 0 && fg <= 0)
				cut = w->bad + fb * (w->good - w->bad) / (fb - fg);
		}
		y = isinf(cut) ? 2 * last : fmin(2 * last, fmax(floor(last / 2), ceil(cut - 0.5)));
	} else if (!two && ok && w->bad < lo) { /* nothing failed yet */
		y = last - w->step;
		w->step = w->next, w->next *= 2;
	} else if (!two && !ok && w->good > hi) { /* nothing held yet */
		y = last + w->step;
		w->step = w->next, w->next *= 2;
	} else {
		y = ceil((w->bad + w->good) / 2);
	}
	return fmin(w->good - 1, fmax(w->bad + 1, y));
}

/* The value the walk is likely to probe after x, to simulate meanwhile:
 * x's neighbour on the side the walk is going (down from a hold, up while
 * only failures are known), else on the other side; NAN when x closes the
 * bracket either way. */
static double guess_after(const struct walk *w, double lo, double hi, double x)
{
	double step = w->good > hi && w->bad >= lo ? 1 : -1;
	if (x + step <= w->bad || x + step >= w->good)
		step = -step;
	return x + step > w->bad && x + step < w->good ? x + step : NAN;
}

static int from_start(const struct search_spec *s, struct store *st, search_probe_fn fn, void *ctx,
		      struct search_answer *a, struct gp_err *err)
{
	double lo = s->lo.number, hi = s->hi.number;
	struct walk w = {lo - 1, hi + 1, NAN, NAN, 1, 1, 0};
	struct search_calib cal = {0};
	struct search_ahead *ahead = search_ahead_create(s);
	double x = fmin(hi, fmax(lo, (double)s->start));
	int rc = GP_OK;
	while (!rc && w.good > w.bad + 1) {
		bool ok;
		double cut;
		plan_ahead(s, ahead, w.bad, w.good, x, guess_after(&w, lo, hi, x));
		cal.closes_if_holds = x - 1 <= w.bad;
		cal.closes_if_fails = x + 1 >= w.good;
		if ((rc = probe(s, st, ahead, x, fn, ctx, a, &ok, &cal, &cut, err)))
			break;
		if (ok)
			w.good = x, w.good_cut = cut;
		else
			w.bad = x, w.bad_cut = cut;
		if (w.good > w.bad + 1)
			x = next_value(&w, lo, hi, x, ok);
	}
	search_ahead_free(ahead);
	if (rc || w.good > hi)
		return rc; /* an error, or not even hi holds */
	a->found = true;
	format_value(s, w.good, a->value, sizeof a->value);
	a->number = w.good;
	return GP_OK;
}

int search_run(const struct search_spec *s, struct store *st, search_probe_fn fn, void *ctx,
	       struct search_answer *a, struct gp_err *err)
{
	*a = (struct search_answer){0};
	if (s->start > 0 && s->integer && !s->maximize)
		return from_start(s, st, fn, ctx, a, err);
	/* good: the end of the range where the condition should hold. */
	double good = s->maximize ? s->lo.number : s->hi.number;
	double bad = s->maximize ? s->hi.number : s->lo.number;
	double tol = s->integer         ? 1
		     : s->tolerance > 0 ? s->tolerance
					: fabs(s->hi.number - s->lo.number) / 1000;
	bool ok;
	double unused;
	struct search_ahead *ahead = search_ahead_create(s);
	plan_ahead(s, ahead, -INFINITY, INFINITY, good, bad);
	int rc = probe(s, st, ahead, good, fn, ctx, a, &ok, NULL, &unused, err);
	if (!rc && ok) {
		a->found = true;
		rc = probe(s, st, ahead, bad, fn, ctx, a, &ok, NULL, &unused, err);
	}
	if (!rc && a->found && ok)
		good = bad; /* the whole range meets the condition */
	else if (!rc && a->found)
		rc = bisect(s, st, ahead, fn, ctx, a, &good, bad, tol, err);
	search_ahead_free(ahead);
	if (rc || !a->found)
		return rc;
	format_value(s, good, a->value, sizeof a->value);
	a->number = s->integer ? (double)llround(good) : good;
	return GP_OK;
}
