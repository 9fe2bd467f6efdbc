/*
 * scenario_history.c - what makes a scenario a twin (scenario.h): the
 * `history:` section (the period it was learned from and its observed pods)
 * and the values tagged !placeholder, gathered from the tree with their key
 * paths after the sections were read.
 */
#include <stdio.h>
#include <string.h>

#include "gpuplan/units.h"

#include "scenario_int.h"

static int history_time(struct loader *ld, const struct ynode *v, const char *what, int64_t *out)
{
	if (v->kind != YNODE_SCALAR || units_rfc3339(v->value, out))
		return ld_bad_value(ld, v, what, UNITS_HINT_TIME);
	return GP_OK;
}

static int history_from(struct loader *ld, const struct ynode *v, void *obj)
{
	return history_time(ld, v, "from", &((struct history_spec *)obj)->from_epoch);
}

static int history_to(struct loader *ld, const struct ynode *v, void *obj)
{
	return history_time(ld, v, "to", &((struct history_spec *)obj)->to_epoch);
}

static int history_pods(struct loader *ld, const struct ynode *v, void *obj)
{
	struct history_spec *h = obj;
	char *path = NULL;
	int rc = ld_get_string(ld, v, "pods", "a path to the observed pods CSV, like twin.pods.csv",
			       &path);
	if (rc)
		return rc;
	free(h->pods_path);
	h->pods_path = ld_resolve(ld->sc->dir, path);
	h->pods_loc = v->loc;
	free(path);
	return GP_OK;
}

static const struct key_rule history_rules[] = {
	{"from", history_from}, {"to", history_to}, {"pods", history_pods}};

int ld_load_history(struct loader *ld, const struct ynode *v)
{
	struct history_spec *h = &ld->sc->history;
	static const char hint[] =
		"a map like {from: 2026-11-02T00:00:00Z, to: 2026-11-09T00:00:00Z, pods: "
		"twin.pods.csv}";
	h->loc = v->loc;
	int rc = ld_walk_map(ld, v, "history", hint, history_rules, N_OF(history_rules), h);
	static const struct ld_need need[] = {{"from", "from: 2026-11-02T00:00:00Z"},
					      {"to", "to: 2026-11-09T00:00:00Z"},
					      {"pods", "pods: twin.pods.csv"}};
	if (!rc)
		rc = ld_require_all(ld, v, "history", need, N_OF(need));
	if (rc)
		return rc;
	if (h->to_epoch <= h->from_epoch)
		return gp_located(ld->err, ynode_get(v, "to")->loc,
				  "history ends at or before it begins; expected `to` after "
				  "`from`");
	if ((double)(h->to_epoch - h->from_epoch) * SIM_SECOND > (double)SCENARIO_MAX_SPAN)
		return gp_located(ld->err, ynode_get(v, "to")->loc,
				  "history spans more than the %d years gpuplan simulates; "
				  "expected a shorter period",
				  SCENARIO_MAX_YEARS);
	h->on = true;
	return GP_OK;
}

/* --- growth ------------------------------------------------------------------- */

#define MAX_GROWTH 1000.0

int ld_load_growth(struct loader *ld, const struct ynode *v)
{
	double f = 0;
	int rc = ld_get_positive(ld, v, "growth", "a factor like 1.3 (+30%)", &f);
	if (!rc && f > MAX_GROWTH)
		return ld_bad_value(ld, v, "growth", "a factor up to 1000, like 1.3 (+30%)");
	ld->sc->growth = f;
	return rc;
}

static void grow_weekly(struct weekly_rate *r, double f)
{
	if (!r->on)
		return;
	for (int h = 0; h < 24; h++)
		r->by_hour[h] *= f;
	r->week_mass *= f;
}

/* Multiplies every synthetic arrival and request rate by the growth: a
 * poisson workload's rate (or rate_by_hour), an inference workload's
 * poisson or gamma request rate.  Traces, `at` and CronJob schedules keep
 * their times. */
void ld_apply_growth(struct loader *ld)
{
	double f = ld->sc->growth;
	if (f == 1)
		return;
	for (size_t i = 0; i < ld->sc->n_workloads; i++) {
		struct workload_spec *w = &ld->sc->workloads[i];
		if (w->arrival.kind == ARRIVAL_POISSON) {
			w->arrival.rate *= f;
			grow_weekly(&w->arrival.weekly, f);
		}
		struct request_spec *rq = w->inference ? &w->inference->requests : NULL;
		if (rq && (rq->process == REQUESTS_POISSON || rq->process == REQUESTS_GAMMA)) {
			rq->rate *= f;
			grow_weekly(&rq->weekly, f);
		}
	}
}

/* --- placeholders ------------------------------------------------------------ */

/* Appends a step to the key path in buf (of size len); returns its new length. */
static size_t path_push(char *buf, size_t len, size_t at, const char *fmt, const char *word)
{
	if (at >= len)
		return at;
	int n = snprintf(buf + at, len - at, fmt, word);
	return n < 0 ? at : at + (size_t)n;
}

/* Appends n to sb as a YAML flow value (a block map reads {dist: fixed, mean: 6h}). */
static void render(const struct ynode *n, struct gp_sbuf *sb)
{
	if (n->kind == YNODE_SCALAR) {
		gp_sb_printf(sb, n->quoted ? "\"%s\"" : "%s", n->value);
		return;
	}
	gp_sb_printf(sb, "%s", n->kind == YNODE_MAP ? "{" : "[");
	for (size_t i = 0; i < n->n; i++) {
		gp_sb_printf(sb, "%s", i ? ", " : "");
		if (n->keys)
			gp_sb_printf(sb, "%s: ", n->keys[i]);
		render(n->items[i], sb);
	}
	gp_sb_printf(sb, "%s", n->kind == YNODE_MAP ? "}" : "]");
}

static void add_placeholder(struct scenario *sc, const struct ynode *n, const char *path)
{
	size_t k = sc->n_placeholders++;
	sc->placeholders =
		gp_xrealloc(sc->placeholders, sc->n_placeholders * sizeof *sc->placeholders);
	struct placeholder *p = &sc->placeholders[k];
	p->path = gp_xstrdup(path);
	if (n->kind == YNODE_SCALAR) {
		p->value = gp_xstrdup(n->source ? n->source : n->value);
	} else {
		struct gp_sbuf sb = {0};
		render(n, &sb);
		p->value = gp_sb_take(&sb);
	}
	p->reason = gp_xstrdup(n->note ? n->note : "not learned");
	p->loc = n->loc;
}

/* Walks n (at key path buf[0, at)) and records every placeholder in document order. */
/* Whether n or a node below it is tagged: paths are made only on the way to
 * one (for a scenario of 100,000 workloads, a path per node was a tenth of
 * its load). */
static bool any_placeholder(const struct ynode *n)
{
	if (!n || n->placeholder)
		return n != NULL;
	for (size_t i = 0; i < n->n; i++)
		if (any_placeholder(n->items[i]))
			return true;
	return false;
}

static void gather(struct scenario *sc, const struct ynode *n, char *buf, size_t len, size_t at)
{
	if (!n)
		return;
	buf[at < len ? at : len - 1] = '\0';
	if (n->placeholder)
		add_placeholder(sc, n, buf);
	for (size_t i = 0; i < n->n; i++) {
		size_t next;
		if (!any_placeholder(n->items[i]))
			continue;
		if (n->kind == YNODE_MAP) {
			next = path_push(buf, len, at, at ? ".%s" : "%s", n->keys[i]);
		} else {
			const struct ynode *name = ynode_get(n->items[i], "name");
			char index[32];
			snprintf(index, sizeof index, "%zu", i);
			next = path_push(buf, len, at, "[%s]",
					 name && name->kind == YNODE_SCALAR ? name->value : index);
		}
		gather(sc, n->items[i], buf, len, next);
	}
}

void ld_gather_placeholders(struct loader *ld, const struct ynode *root)
{
	char buf[1024];
	gather(ld->sc, root, buf, sizeof buf, 0);
}

void ld_free_placeholders(struct scenario *sc)
{
	for (size_t i = 0; i < sc->n_placeholders; i++) {
		free(sc->placeholders[i].path);
		free(sc->placeholders[i].value);
		free(sc->placeholders[i].reason);
	}
	free(sc->placeholders);
	free(sc->history.pods_path);
}

const struct placeholder *scenario_placeholder(const struct scenario *sc, const char *path)
{
	size_t n = strlen(path);
	for (size_t i = 0; i < sc->n_placeholders; i++) {
		const char *p = sc->placeholders[i].path;
		if (!strncmp(p, path, n) && (p[n] == '\0' || p[n] == '.' || p[n] == '['))
			return &sc->placeholders[i];
	}
	return NULL;
}
