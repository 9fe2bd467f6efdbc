/* bind.c - pod-seconds per binding constraint (see bind.h). */
#include "gpuplan/bind.h"

#include <stdlib.h>
#include <string.h>

void bind_init(struct bind *b, size_t n_workloads)
{
	memset(b, 0, sizeof *b);
	b->n_workloads = n_workloads;
	size_t n = (size_t)CONSTRAINT_KINDS * (n_workloads ? n_workloads : 1);
	b->seconds = gp_xcalloc(n, sizeof *b->seconds);
	b->param_s = gp_xcalloc(n, sizeof *b->param_s);
	b->param = gp_xmalloc(n * sizeof *b->param);
	for (size_t i = 0; i < n; i++)
		b->param[i] = -1;
}

void bind_free(struct bind *b)
{
	free(b->seconds);
	free(b->param);
	free(b->param_s);
	memset(b, 0, sizeof *b);
}

bool bind_queue_kind(enum constraint_kind k)
{
	switch (k) {
	case CONSTRAINT_QUOTA:
	case CONSTRAINT_BORROWING_LIMIT:
	case CONSTRAINT_LENDING_LIMIT:
	case CONSTRAINT_RECLAIM:
	case CONSTRAINT_QUEUEING_STRATEGY: return true;
	default: return false;
	}
}

/* Whether pool p's labels satisfy w's node_selector (0), gpu_spec (1) or
 * affinity (2): kube-scheduler's NodeAffinity over the pool's labels. */
static bool admits(const struct pool_spec *p, const struct workload_spec *w, int rule)
{
	if (rule == 0) {
		for (size_t i = 0; i < w->n_node_selector; i++) {
			const char *v = scenario_pool_label(p, w->node_selector[i].key);
			if (!v || strcmp(v, w->node_selector[i].value))
				return false;
		}
		return true;
	}
	if (rule == 1) {
		for (size_t i = 0; i < w->n_gpu_spec; i++)
			if (!strcmp(w->gpu_spec[i], p->gpu->name))
				return true;
		return !w->n_gpu_spec;
	}
	for (size_t i = 0; i < w->n_affinity; i++) {
		const struct affinity_expr *e = &w->affinity[i];
		const char *v = scenario_pool_label(p, e->key);
		bool in = false;
		for (size_t k = 0; v && k < e->n_values; k++)
			in |= !strcmp(v, e->values[k]);
		bool ok = e->op == AFFINITY_IN       ? in
			  : e->op == AFFINITY_NOT_IN ? !in
			  : e->op == AFFINITY_EXISTS ? v != NULL
						     : v == NULL;
		if (!ok)
			return false;
	}
	return true;
}

/* Whether pool p's labels satisfy every rule of w's. */
static bool admits_all(const struct pool_spec *p, const struct workload_spec *w)
{
	return admits(p, w, 0) && admits(p, w, 1) && admits(p, w, 2);
}

/* The first pool with windows whose GPUs workload ws may use (its rules
 * admitting it), or -1. */
static int32_t window_pool(const struct scenario *sc, const struct workload_spec *ws)
{
	for (size_t p = 0; p < sc->n_pools; p++) {
		const struct pool_spec *ps = &sc->pools[p];
		if (ps->n_windows && scenario_gpu_equivalent(ps, ws) > 0 && admits_all(ps, ws))
			return (int32_t)p;
	}
	return -1;
}

/* What only the scenario tells apart: the rule behind a node-affinity
 * message (the one that keeps it off the most pools that offer what its
 * pods ask for; ties: node_selector, gpu_spec, affinity), a MIG request's
 * "Insufficient". */
static enum constraint_kind refine(const struct scenario *sc, const struct workload_spec *ws,
				   enum constraint_kind k)
{
	if (k == CONSTRAINT_NODE_SELECTOR) {
		static const enum constraint_kind rules[] = {
			CONSTRAINT_NODE_SELECTOR, CONSTRAINT_GPU_SPEC, CONSTRAINT_AFFINITY};
		int best = -1;
		size_t most = 0;
		for (int rule = 0; rule < 3; rule++) {
			size_t off = 0;
			for (size_t p = 0; p < sc->n_pools; p++)
				off += scenario_gpu_equivalent(&sc->pools[p], ws) > 0 &&
				       !admits(&sc->pools[p], ws, rule);
			if (off > most)
				most = off, best = rule;
		}
		if (best >= 0)
			return rules[best];
		return ws->n_node_selector ? CONSTRAINT_NODE_SELECTOR
		       : ws->n_gpu_spec    ? CONSTRAINT_GPU_SPEC
					   : CONSTRAINT_AFFINITY;
	}
	if (k == CONSTRAINT_CAPACITY && ws->request == REQUEST_MIG)
		return CONSTRAINT_MIG_PROFILE;
	/* A node outside its window answers "unschedulable" before its rules
	 * (NodeUnschedulable filters first): where the workload has no window of
	 * its own and may use no pool with one, the window keeps it off nothing
	 * it could use, and what its pods wait for is capacity. */
	if (k == CONSTRAINT_WINDOW && !ws->n_windows && window_pool(sc, ws) < 0)
		return ws->request == REQUEST_MIG ? CONSTRAINT_MIG_PROFILE : CONSTRAINT_CAPACITY;
	return k;
}

/* The pool a pending kind is about when the run named none: the first that
 * offers what the workload's pods ask for (and, for capacity, that its rules
 * admit, where one does), or -1. */
static int32_t first_pool(const struct scenario *sc, const struct workload_spec *ws, bool admitted)
{
	int32_t offers = -1;
	for (size_t p = 0; p < sc->n_pools; p++) {
		const struct pool_spec *ps = &sc->pools[p];
		if (!(scenario_gpu_equivalent(ps, ws) > 0))
			continue;
		if (!admitted || admits_all(ps, ws))
			return (int32_t)p;
		if (offers < 0)
			offers = (int32_t)p;
	}
	/* no layout has the profile: a pool whose GPUs could */
	return offers >= 0 ? offers : scenario_mig_pool_for(sc, ws);
}

void bind_write(const struct bind *b, const struct scenario *sc, struct results *out)
{
	size_t nw = b->n_workloads < sc->n_workloads ? b->n_workloads : sc->n_workloads;
	double *sum = gp_xcalloc((size_t)CONSTRAINT_KINDS * (nw ? nw : 1), sizeof *sum);
	int32_t *par = gp_xmalloc((size_t)CONSTRAINT_KINDS * (nw ? nw : 1) * sizeof *par);
	for (size_t i = 0; i < (size_t)CONSTRAINT_KINDS * nw; i++)
		par[i] = -1;
	size_t n = 0;
	for (int k = 0; k < CONSTRAINT_KINDS; k++)
		for (size_t w = 0; w < nw; w++) {
			size_t i = (size_t)k * b->n_workloads + w;
			if (!(b->seconds[i] > 0))
				continue;
			enum constraint_kind to =
				refine(sc, &sc->workloads[w], (enum constraint_kind)k);
			size_t j = (size_t)to * nw + w;
			n += !(sum[j] > 0);
			sum[j] += b->seconds[i];
			/* a window refined away was about a pool the work cannot use */
			if (par[j] < 0 && !(k == CONSTRAINT_WINDOW && to != CONSTRAINT_WINDOW))
				par[j] = b->param[i];
		}
	out->constraints = gp_xcalloc(n + 1, sizeof *out->constraints);
	out->n_constraints = 0;
	for (int k = 0; k < CONSTRAINT_KINDS; k++)
		for (size_t w = 0; w < nw; w++) {
			size_t j = (size_t)k * nw + w;
			if (!(sum[j] > 0))
				continue;
			const struct workload_spec *ws = &sc->workloads[w];
			struct constraint c = {(enum constraint_kind)k, -1, (int32_t)w, -1, sum[j]};
			if (bind_queue_kind(c.kind))
				c.queue = par[j] >= 0 ? par[j] : ws->queue;
			else if (par[j] >= 0)
				c.pool = par[j];
			else if (k == CONSTRAINT_WINDOW && window_pool(sc, ws) >= 0)
				c.pool = window_pool(sc, ws);
			else
				c.pool = first_pool(sc, ws,
						    k == CONSTRAINT_CAPACITY ||
							    k == CONSTRAINT_MIG_PROFILE);
			out->constraints[out->n_constraints++] = c;
		}
	free(sum);
	free(par);
}
