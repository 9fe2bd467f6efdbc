/*
 * search.c - bisection over one scenario parameter (see search.h).
 */
#include "gpuplan/search.h"

#include "search_int.h"

#include "gpuplan/scenario.h"
#include "gpuplan/run.h"
#include "gpuplan/units.h"
#include "gpuplan/ytree.h"

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
	const char *close = ytree_closest(metric, results_metric_names, results_n_metric_names);
	for (size_t i = 0; !close && i < results_n_metric_names; i++)
		if (!strncmp(results_metric_names[i], metric, strlen(metric)))
			close = results_metric_names[i];
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
	char name[sizeof c->scope + sizeof c->metric];
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
	if (strlen(metric) >= sizeof c->metric || !results_known_metric(metric))
		return unknown_metric(text, metric, err);
	memcpy(c->metric, metric, strlen(metric) + 1);
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

/* One run of the scenario with KEY=value and seed, appended to the database;
 * *metric receives the condition's metric (NAN when the run has none). */
static int run_once(const struct search_spec *s, struct store *st, const char *value,
		    uint64_t seed_offset, double *metric, int64_t *run_id, struct gp_err *err)
{
	size_t n = s->n_sets;
	const char **sets = gp_xcalloc(n + 3, sizeof *sets);
	if (n)
		memcpy(sets, s->sets, n * sizeof *sets);
	char assign[512], seed[64], with[512];
	snprintf(assign, sizeof assign, "%s=%s", s->key, value);
	sets[n++] = assign;
	if (s->with_key && s->with_per > 0) { /* the nodes that hold value replicas */
		long long v = atoll(value), per = (long long)s->with_per;
		snprintf(with, sizeof with, "%s=%lld", s->with_key, (v + per - 1) / per);
		sets[n++] = with;
	}
	struct scenario *sc = NULL;
	int rc = scenario_load(s->scenario, sets, n, &sc, err);
	if (!rc && seed_offset) {
		/* Seeds follow the scenario's own: seed, seed + 1, ... */
		snprintf(seed, sizeof seed, "seed=%llu",
			 (unsigned long long)(sc->seed + seed_offset));
		sets[n++] = seed;
		scenario_free(sc);
		rc = scenario_load(s->scenario, sets, n, &sc, err);
	}
	struct results r;
	results_init(&r);
	if (!rc)
		rc = run_simulate(sc, &r, err);
	if (!rc)
		rc = store_write_run(st, sc, &r, run_id, err);
	if (!rc)
		*metric = results_metric(&r, s->until.scope, s->until.metric);
	if (!rc && isnan(*metric))
		rc = gp_errorf(err, GP_EINPUT, "--until: the run has no metric '%s' in scope '%s'",
			       s->until.metric, s->until.scope);
	results_free(&r);
	scenario_free(sc);
	free(sets);
	return rc;
}

/* Whether the condition holds at x for every seed. */
static int probe(const struct search_spec *s, struct store *st, double x, search_probe_fn fn,
		 void *ctx, struct search_answer *a, bool *ok, struct gp_err *err)
{
	char value[64];
	format_value(s, x, value, sizeof value);
	struct search_probe p = {value, true, NAN, 0};
	for (int k = 0; k < s->seeds; k++) {
		double m;
		int64_t id;
		int rc = run_once(s, st, value, (uint64_t)k, &m, &id, err);
		if (rc)
			return rc;
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

int search_estimate(const struct search_spec *s, int64_t *replicas, struct gp_err *err)
{
	*replicas = 0;
	if (s->maximize || !s->integer)
		return GP_OK;
	size_t n = s->n_sets;
	const char **sets = gp_xcalloc(n + 1, sizeof *sets);
	if (n)
		memcpy(sets, s->sets, n * sizeof *sets);
	char assign[512], value[64];
	format_value(s, s->lo.number, value, sizeof value);
	snprintf(assign, sizeof assign, "%s=%s", s->key, value);
	sets[n++] = assign;
	struct scenario *sc = NULL;
	int rc = scenario_load(s->scenario, sets, n, &sc, err);
	if (!rc)
		*replicas = search_first_cut(s, sc);
	scenario_free(sc);
	free(sets);
	return rc;
}

/* Bisects between good (holds) and bad (fails) down to the tolerance. */
static int bisect(const struct search_spec *s, struct store *st, search_probe_fn fn, void *ctx,
		  struct search_answer *a, double *good, double bad, double tol, struct gp_err *err)
{
	bool ok;
	while (fabs(bad - *good) > tol) {
		double mid = (*good + bad) / 2;
		if (s->integer)
			mid = s->maximize ? floor(mid) : ceil(mid);
		if (mid == *good || mid == bad)
			break;
		int rc = probe(s, st, mid, fn, ctx, a, &ok, err);
		if (rc)
			return rc;
		if (ok)
			*good = mid;
		else
			bad = mid;
	}
	return GP_OK;
}

/* --min from a first guess: probe it, then its neighbour, then gallop away
 * from it to a value of the other kind and bisect between the two. */
static int from_start(const struct search_spec *s, struct store *st, search_probe_fn fn, void *ctx,
		      struct search_answer *a, struct gp_err *err)
{
	double lo = s->lo.number, hi = s->hi.number;
	double x = fmin(hi, fmax(lo, (double)s->start)), good, bad;
	bool ok;
	int rc = probe(s, st, x, fn, ctx, a, &ok, err);
	/* steps 1, 1, 2, 4, ...: a first cut one off costs one probe more, not
	 * two (the pair below it, then the bisection) */
	double step = 1, next = 1;
	if (!rc && ok) { /* the answer is x or below: walk down until it fails */
		good = bad = x;
		while (!rc && ok && good > lo) {
			bad = fmax(lo, good - step);
			step = next, next *= 2;
			rc = probe(s, st, bad, fn, ctx, a, &ok, err);
			if (!rc && ok)
				good = bad;
		}
		a->found = true;
		if (!rc && !ok)
			rc = bisect(s, st, fn, ctx, a, &good, bad, 1, err);
	} else if (!rc) { /* above x: walk up until it holds */
		bad = good = x;
		while (!rc && !ok && good < hi) {
			good = fmin(hi, bad + step);
			step = next, next *= 2;
			rc = probe(s, st, good, fn, ctx, a, &ok, err);
			if (!rc && !ok)
				bad = good;
		}
		if (rc || !ok)
			return rc; /* not even hi holds */
		a->found = true;
		rc = bisect(s, st, fn, ctx, a, &good, bad, 1, err);
	}
	if (!rc)
		format_value(s, good, a->value, sizeof a->value);
	return rc;
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
	int rc = probe(s, st, good, fn, ctx, a, &ok, err);
	if (rc || !ok)
		return rc;
	a->found = true;
	rc = probe(s, st, bad, fn, ctx, a, &ok, err);
	if (rc)
		return rc;
	if (ok)
		good = bad; /* the whole range meets the condition */
	else if ((rc = bisect(s, st, fn, ctx, a, &good, bad, tol, err)))
		return rc;
	format_value(s, good, a->value, sizeof a->value);
	return GP_OK;
}
