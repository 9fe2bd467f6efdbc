/*
 * relax_diagnose.c - the binding constraint of a diagnosed run (relax.h):
 * among the workloads that missed their goals, the constraint with the most
 * pod-seconds (results.constraints, bind.h) names the first finding, with
 * its key, value, relaxed value and pod-hours, and the findings it shows to
 * be false are dropped.
 */
#include "gpuplan/relax.h"

#include "gpuplan/diagnose.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum finding_step relax_step(enum constraint_kind k)
{
	switch (k) {
	case CONSTRAINT_QUOTA:
	case CONSTRAINT_BORROWING_LIMIT:
	case CONSTRAINT_LENDING_LIMIT:
	case CONSTRAINT_RECLAIM:
	case CONSTRAINT_QUEUEING_STRATEGY:
	case CONSTRAINT_SHARING:
	case CONSTRAINT_FRAGMENTATION: return FINDING_ALLOCATION;
	case CONSTRAINT_VRAM: return FINDING_MEMORY;
	case CONSTRAINT_PRIORITY:
	case CONSTRAINT_NODE_SELECTOR:
	case CONSTRAINT_AFFINITY:
	case CONSTRAINT_TAINT:
	case CONSTRAINT_SPREAD:
	case CONSTRAINT_GPU_SPEC:
	case CONSTRAINT_MIG_PROFILE:
	case CONSTRAINT_CPU_REQUEST:
	case CONSTRAINT_MEMORY_REQUEST:
	case CONSTRAINT_WINDOW: return FINDING_PLACEMENT;
	case CONSTRAINT_CONTENTION:
	case CONSTRAINT_STARTUP: return FINDING_APPLICATION;
	case CONSTRAINT_PROVISIONING:
	case CONSTRAINT_CAPACITY:
	case CONSTRAINT_KINDS: break;
	}
	return FINDING_CAPACITY;
}

/* What a kind's key names: 'q' a queue, 'w' a workload, 'p' a pool, 's' the
 * scheduler (the first letter of its key). */
static char scope_of(enum constraint_kind k) { return relax_table[k].key[0]; }

static bool missed(const struct scenario *sc, const struct results *r, int32_t w)
{
	return w >= 0 && (size_t)w < sc->n_workloads &&
	       !results_holds(r, sc->workloads[w].name, METRIC_GOAL_MET);
}

/* Whether workload v is lower-value work w may wait behind: batch with no
 * goal of its own, no higher priority, that ran on a pool w may use.  (Batch
 * work without a deadline always has a goal once the scenario resolves its
 * goals, goals.batch by default, so no workload passes the first test.) */
static bool behind(const struct scenario *sc, const struct results *r, size_t w, size_t v,
		   const bool *usable)
{
	const struct workload_spec *ws = &sc->workloads[w], *vs = &sc->workloads[v];
	if (v == w || vs->kind != WORKLOAD_BATCH || scenario_has_deadlines(vs) ||
	    vs->queue_goal >= 0 || vs->priority > ws->priority ||
	    !(results_or(r, vs->name, METRIC_GPU_HOURS_ALLOCATED, 0) > 0))
		return false;
	for (size_t p = 0; p < sc->n_pools; p++)
		if (usable[p] && scenario_gpu_equivalent(&sc->pools[p], vs) > 0)
			return true;
	return false;
}

/* The constraint w's "Insufficient" time is: a priority when lower-value
 * work (behind()) held the GPUs it may use, else capacity. */
static enum constraint_kind capacity_or_priority(const struct scenario *sc, const struct results *r,
						 size_t w)
{
	const struct workload_spec *ws = &sc->workloads[w];
	if (!scenario_has_deadlines(ws) && ws->queue_goal < 0)
		return CONSTRAINT_CAPACITY;
	bool *usable = gp_xcalloc(sc->n_pools + 1, sizeof *usable);
	diagnose_usable_pools(sc, w, usable);
	enum constraint_kind k = CONSTRAINT_CAPACITY;
	for (size_t v = 0; v < sc->n_workloads && k == CONSTRAINT_CAPACITY; v++)
		if (behind(sc, r, w, v, usable))
			k = CONSTRAINT_PRIORITY;
	free(usable);
	return k;
}

static bool is_rule(enum constraint_kind k)
{
	return k == CONSTRAINT_NODE_SELECTOR || k == CONSTRAINT_AFFINITY || k == CONSTRAINT_TAINT ||
	       k == CONSTRAINT_GPU_SPEC;
}

/* Whether w's rules keep it off GPUs it could use that were idle: the
 * placement detector found them (diagnose.h), on a pool whose GPUs hold its
 * VRAM (a taint on nodes that hold nothing, a control plane, hides nothing;
 * a pool whose GPUs idle replicas hold hides nothing free). */
static bool hides(const struct scenario *sc, const struct results *r, size_t w)
{
	bool found = false;
	for (size_t k = 0; k < r->n_findings && !found; k++)
		found = r->findings[k].kind == KIND_RULES && r->findings[k].workload == (int32_t)w;
	if (!found)
		return false;
	bool *hidden = gp_xcalloc(sc->n_pools + 1, sizeof *hidden), any = false;
	diagnose_hidden_pools(sc, w, hidden);
	for (size_t p = 0; p < sc->n_pools; p++) /* GPUs that hold its VRAM */
		any |= hidden[p] && !(sc->workloads[w].vram_bytes > sc->pools[p].gpu->memory_bytes);
	free(hidden);
	return any;
}

/* The binding constraints of the workloads that missed their goals, summed
 * by key (kind and the queue, workload or pool its key names), most
 * pod-seconds first; ties in the step order, then the kinds' order.
 * Returns how many (malloc'd into *out). */
static int by_weight(const void *a, const void *b)
{
	const struct constraint *x = a, *y = b;
	if (x->pod_seconds != y->pod_seconds)
		return x->pod_seconds > y->pod_seconds ? -1 : 1;
	int sx = (int)relax_step(x->kind), sy = (int)relax_step(y->kind);
	if (sx != sy)
		return sx < sy ? -1 : 1;
	if (x->kind != y->kind)
		return x->kind < y->kind ? -1 : 1;
	return (x->workload > y->workload) - (x->workload < y->workload);
}

size_t relax_binding(const struct scenario *sc, const struct results *r, struct constraint **out)
{
	struct constraint *g = gp_xcalloc(r->n_constraints + 1, sizeof *g);
	size_t n = 0;
	for (size_t i = 0; i < r->n_constraints; i++) {
		struct constraint c = r->constraints[i];
		if (!missed(sc, r, c.workload))
			continue;
		if (is_rule(c.kind) && !hides(sc, r, (size_t)c.workload))
			c.kind = CONSTRAINT_CAPACITY; /* a rule that hides nothing w could use */
		if (c.kind == CONSTRAINT_CAPACITY)
			c.kind = capacity_or_priority(sc, r, (size_t)c.workload);
		char s = scope_of(c.kind);
		if (s != 'w')
			c.workload = -1; /* summed over the workloads it binds */
		if (s != 'q')
			c.queue = -1;
		if (s != 'p')
			c.pool = -1;
		size_t k = 0;
		while (k < n && !(g[k].kind == c.kind && g[k].pool == c.pool &&
				  g[k].workload == c.workload && g[k].queue == c.queue))
			k++;
		if (k == n)
			g[n++] = c;
		else
			g[k].pod_seconds += c.pod_seconds;
		/* A kind summed over workloads keeps one it binds, for the words. */
		if (s != 'w' && g[k].workload < 0)
			g[k].workload = -1;
	}
	qsort(g, n, sizeof *g, by_weight);
	*out = g;
	return n;
}

/* Whether finding f (of the detectors, diagnose.h) is about constraint c:
 * the same kind of cause for the same workload, pool or queue. */
static bool same_cause(const struct finding *f, const struct constraint *c, int32_t w)
{
	if (f->constraint >= 0) /* a detector that names its constraint (diagnose_binds.c) */
		return f->constraint == (int32_t)c->kind &&
		       (scope_of(c->kind) == 'w'   ? f->workload == c->workload
			: scope_of(c->kind) == 'p' ? f->pool == c->pool || f->pool < 0
						   : f->workload == w || f->queue == c->queue);
	switch ((enum finding_kind)f->kind) {
	case KIND_ADMISSION: return scope_of(c->kind) == 'q' && f->workload == w;
	case KIND_RULES:
		return (c->kind == CONSTRAINT_NODE_SELECTOR || c->kind == CONSTRAINT_AFFINITY ||
			c->kind == CONSTRAINT_TAINT || c->kind == CONSTRAINT_SPREAD ||
			c->kind == CONSTRAINT_GPU_SPEC) &&
		       f->workload == c->workload;
	case KIND_REQUESTS:
		return (c->kind == CONSTRAINT_CPU_REQUEST ||
			c->kind == CONSTRAINT_MEMORY_REQUEST) &&
		       f->workload == c->workload;
	case KIND_PROVISIONING: return c->kind == CONSTRAINT_PROVISIONING && f->pool == c->pool;
	case KIND_FRAGMENTATION: return c->kind == CONSTRAINT_FRAGMENTATION;
	case KIND_SHARING: return c->kind == CONSTRAINT_SHARING && f->pool == c->pool;
	case KIND_STALLED: /* a MIG profile no layout has, or VRAM */
		return c->kind == CONSTRAINT_VRAM ||
		       (c->kind == CONSTRAINT_MIG_PROFILE && f->fig.stalled.why == PEND_RESOURCE);
	case KIND_OOM:
	case KIND_VRAM_FULL:
	case KIND_PREALLOCATION:
	case KIND_KV_CACHE: return c->kind == CONSTRAINT_VRAM;
	case KIND_CAPACITY:
		return (c->kind == CONSTRAINT_CAPACITY || c->kind == CONSTRAINT_MIG_PROFILE) &&
		       f->pool == c->pool && (f->workload < 0 || f->workload == w);
	default: return false;
	}
}

/* The workload of the waiting side of c: its own, or the one among the
 * missing workloads with the most of c's pod-seconds. */
static int32_t waiting_workload(const struct scenario *sc, const struct results *r,
				const struct constraint *c)
{
	if (c->workload >= 0)
		return c->workload;
	int32_t best = -1;
	double most = 0;
	for (size_t i = 0; i < r->n_constraints; i++) {
		const struct constraint *x = &r->constraints[i];
		bool kind = x->kind == c->kind ||
			    (c->kind == CONSTRAINT_PRIORITY && x->kind == CONSTRAINT_CAPACITY);
		bool param = scope_of(c->kind) == 'q'   ? x->queue == c->queue
			     : scope_of(c->kind) == 'p' ? x->pool == c->pool
							: true;
		if (kind && param && missed(sc, r, x->workload) && x->pod_seconds > most) {
			most = x->pod_seconds;
			best = x->workload;
		}
	}
	return best;
}

/* The value of the first override of key among f's fixes, else NULL. */
static char *relaxed_value(const struct finding *f, const char *key)
{
	for (size_t k = 0; k < f->n_fixes; k++)
		for (size_t i = 0; i < f->fixes[k].n_sets; i++)
			if (!strcmp(f->fixes[k].sets[i].key, key))
				return gp_xstrdup(f->fixes[k].sets[i].value);
	return NULL;
}

/* Fills f's key, value, relaxed and pod-hours from c, with c's relaxations
 * (the table's) after the detector's own fixes (which read the run's
 * figures). */
static void name_key(const struct scenario *sc, const struct results *r, const struct constraint *c,
		     struct finding *f)
{
	char *key = relax_key(sc, c), *value = relax_value(sc, c);
	struct finding mine = {0};
	const struct workload_spec *ws = c->workload >= 0   ? &sc->workloads[c->workload]
					 : f->workload >= 0 ? &sc->workloads[f->workload]
							    : NULL;
	struct constraint own = *c; /* relaxed for the finding's workload: a queue's
				     * limit grows by a job of the one that waits on it */
	if (ws && (scope_of(c->kind) == 'q' || c->kind == CONSTRAINT_WINDOW))
		own.workload = (int32_t)(ws - sc->workloads);
	if (c->kind == CONSTRAINT_WINDOW && ws && ws->n_windows &&
	    (c->pool < 0 || !sc->pools[c->pool].n_windows)) { /* the workload's own windows */
		struct gp_sbuf k = {0}, v = {0};
		gp_sb_printf(&k, "workloads.%s.windows", ws->name);
		gp_sb_printf(&v, "%zu window%s", ws->n_windows, ws->n_windows == 1 ? "" : "s");
		free(key), free(value);
		key = gp_sb_take(&k), value = gp_sb_take(&v);
		relax_workload_windows(sc, r, &own, &mine);
	} else {
		relax_constraint(sc, r, scope_of(c->kind) == 'q' ? &own : c, &mine);
	}
	for (size_t i = 0; i < mine.n_fixes; i++) {
		bool dup = false;
		for (size_t k = 0; k < f->n_fixes && !dup; k++)
			dup = !strcmp(mine.fixes[i].label, f->fixes[k].label);
		if (dup)
			continue;
		struct finding_fix *x = finding_add_fix(f, mine.fixes[i].label);
		for (size_t k = 0; k < mine.fixes[i].n_sets; k++)
			finding_fix_add(x, override_copy(&mine.fixes[i].sets[k]));
	}
	finding_free(&mine);
	free(f->key), free(f->value), free(f->relaxed);
	f->key = key;
	f->value = value;
	f->relaxed = relaxed_value(f, key);
	f->pod_hours = c->pod_seconds / 3600;
	f->constraint = (int32_t)c->kind;
}

/* Whether finding f is one the binding constraint c (of workload w) shows
 * to be false: capacity for a workload none of whose time waited on busy
 * GPUs (slowed, starting up); fragmentation under a spread rule (the free
 * GPUs are in the domains the rule forbids); capacity for work held by a
 * queue's limit. */
static bool ruled_out(const struct scenario *sc, const struct results *r, const struct finding *f,
		      const struct constraint *c, int32_t w)
{
	if (f->kind == KIND_CAPACITY && f->workload >= 0) { /* nothing of it waited on busy GPUs */
		double busy = 0;
		for (size_t i = 0; i < r->n_constraints; i++) {
			const struct constraint *x = &r->constraints[i];
			if (x->workload == f->workload &&
			    (x->kind == CONSTRAINT_CAPACITY || x->kind == CONSTRAINT_MIG_PROFILE ||
			     x->kind == CONSTRAINT_WINDOW ||
			     (is_rule(x->kind) && !hides(sc, r, (size_t)x->workload))))
				busy += x->pod_seconds;
		}
		if (!(busy > 0))
			return true;
	}
	if (f->workload != w || w < 0)
		return false;
	if (c->kind == CONSTRAINT_SPREAD)
		return f->kind == KIND_FRAGMENTATION;
	if (scope_of(c->kind) == 'q')
		return f->kind == KIND_CAPACITY;
	return false;
}

void relax_findings(const struct scenario *sc, struct results *r)
{
	struct constraint *g;
	size_t n = relax_binding(sc, r, &g);
	if (!n || !r->n_findings) { /* a healthy run has no finding, nor gets one */
		free(g);
		return;
	}
	/* Quota that a StrictFIFO head's wait holds for the jobs behind it (the
	 * admission detector says most of the wait is behind the head): the
	 * strategy binds, as its relaxation frees them at no cost. */
	for (size_t i = 0; i < n; i++)
		for (size_t k = 0; g[i].kind == CONSTRAINT_QUOTA && k < r->n_findings; k++)
			if (r->findings[k].kind == KIND_ADMISSION &&
			    r->findings[k].fig.wait.strict && r->findings[k].queue == g[i].queue)
				g[i].kind = CONSTRAINT_QUEUEING_STRATEGY;
	/* A rule the placement detector found to hide the idle pools: a taint
	 * its messages name beside a selector that other pools fail. */
	for (size_t i = 0; i < n; i++)
		for (size_t k = 0; is_rule(g[i].kind) && k < r->n_findings; k++)
			if (r->findings[k].kind == KIND_RULES &&
			    r->findings[k].workload == g[i].workload &&
			    r->findings[k].fig.rules.rules == FINDING_RULE_TAINT)
				g[i].kind = CONSTRAINT_TAINT;
	for (size_t i = 0; i < n; i++) /* the same key twice: one */
		for (size_t j = i + 1; j < n; j++)
			if (g[j].kind == g[i].kind && g[j].queue == g[i].queue &&
			    g[j].pool == g[i].pool && g[j].workload == g[i].workload &&
			    g[j].pod_seconds > 0) {
				g[i].pod_seconds += g[j].pod_seconds;
				g[j].pod_seconds = 0;
			}
	qsort(g, n, sizeof *g, by_weight);
	while (n && !(g[n - 1].pod_seconds > 0))
		n--;
	if (!n) {
		free(g);
		return;
	}
	const struct constraint *top = &g[0];
	int32_t w = waiting_workload(sc, r, top);
	if (top->kind == CONSTRAINT_CAPACITY) { /* only hardware: the detectors' order stands */
		for (size_t k = 0; k < r->n_findings; k++)
			if (!r->findings[k].key && same_cause(&r->findings[k], top, w))
				name_key(sc, r, top, &r->findings[k]);
		/* The detectors' findings about other binding constraints get their keys. */
		for (size_t i = 1; i < n; i++)
			for (size_t k = 0; k < r->n_findings; k++)
				if (!r->findings[k].key &&
				    same_cause(&r->findings[k], &g[i],
					       waiting_workload(sc, r, &g[i])))
					name_key(sc, r, &g[i], &r->findings[k]);
		free(g);
		return;
	}
	/* The findings it shows to be false go first. */
	size_t kept = 0;
	for (size_t k = 0; k < r->n_findings; k++) {
		if (ruled_out(sc, r, &r->findings[k], top, w)) {
			finding_free(&r->findings[k]);
			continue;
		}
		r->findings[kept++] = r->findings[k];
	}
	r->n_findings = kept;
	/* The detectors' finding of the same cause names its key; the binding
	 * constraint is a finding of its own where none does, before the
	 * capacity findings.  It comes first when the detectors found nothing
	 * but capacity (a kind no detector has). */
	size_t at = r->n_findings;
	for (size_t k = 0; k < r->n_findings && at == r->n_findings; k++)
		if (same_cause(&r->findings[k], top, w))
			at = k;
	struct finding mine;
	if (at < r->n_findings) {
		mine = r->findings[at];
		memmove(r->findings + at, r->findings + at + 1,
			(r->n_findings - at - 1) * sizeof *r->findings);
		r->n_findings--;
	} else {
		memset(&mine, 0, sizeof mine);
		mine.step = (uint8_t)relax_step(top->kind);
		mine.kind = KIND_BINDS;
		mine.pool = top->pool;
		mine.workload = w;
		mine.queue = top->queue;
		mine.reason = -1;
		mine.weight = mine.figure = top->pod_seconds;
	}
	size_t cap = 0; /* the first capacity finding, or the end */
	while (cap < r->n_findings && r->findings[cap].step != FINDING_CAPACITY)
		cap++;
	if (at < cap)
		cap = at; /* a detector's finding before the capacity ones keeps its place */
	name_key(sc, r, top, &mine);
	r->findings = gp_xrealloc(r->findings, (r->n_findings + 1) * sizeof *r->findings);
	memmove(r->findings + cap + 1, r->findings + cap,
		(r->n_findings - cap) * sizeof *r->findings);
	r->findings[cap] = mine;
	r->n_findings++;
	/* The detectors' findings about other binding constraints get their keys. */
	for (size_t i = 1; i < n; i++)
		for (size_t k = 0; k < r->n_findings; k++)
			if (!r->findings[k].key &&
			    same_cause(&r->findings[k], &g[i], waiting_workload(sc, r, &g[i])))
				name_key(sc, r, &g[i], &r->findings[k]);
	for (size_t k = 0; k < r->n_findings; k++)
		r->findings[k].rank = (int32_t)(k + 1);
	free(g);
}
