/*
 * placement_undo.c - placement_state (placement.h): a one-pod job's release
 * followed by a take that gives back what it took (the M/M/1's server: a
 * finish and the next start), so that the failure of a search before them
 * is kept as it would be had nothing changed.  The view compared is what
 * placement reads of the node and the cluster that a take or a release
 * changes; the rest changes only with cluster.changes, which the take must
 * be the only change of since the release.
 */
#include "gpuplan/placement.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "placement_int.h"

/* What placement reads of a node and its GPUs that a release and a take
 * change, but the tenants' jobs, as words compared bit for bit (a double by
 * its bits): 14 of the node, its pool and the cluster, 6 per GPU. */
#define UNDO_NODE_WORDS 14
#define UNDO_GPU_WORDS  6
#define UNDO_WORDS      (UNDO_NODE_WORDS + 64 * UNDO_GPU_WORDS)

struct placement_undo {
	bool valid;             /* a one-pod release, nothing changed since but its take */
	int32_t workload, node; /* the pod's */
	uint64_t before;        /* placement_state() before the release */
	uint64_t after;         /* cluster.changes after it */
	uint64_t from, to;      /* placement_state() is `to` while cluster.changes is `from` */
	size_t n_view;
	uint64_t view[UNDO_WORDS]; /* before the release */
};

static uint64_t bits(double x)
{
	uint64_t b;
	memcpy(&b, &x, sizeof b);
	return b;
}

static uint64_t pair(int32_t a, int32_t b) { return (uint64_t)(uint32_t)a << 32 | (uint32_t)b; }

/* Node's view into v; its words, or 0 when a GPU has more than one tenant
 * (their order would count). */
static size_t undo_view(const struct placer *pl, int32_t node, uint64_t *v)
{
	const struct cluster *c = pl->c;
	const struct node *nd = &c->nodes[node];
	const struct pool_state *ps = &c->pools[nd->pool];
	if (nd->gpus > 64)
		return 0;
	v[0] = pair(nd->pool, nd->gpus);
	v[1] = nd->ready;
	v[2] = bits(nd->allocated);
	v[3] = bits(nd->cpu_free);
	v[4] = bits(nd->memory_free);
	v[5] = (uint64_t)nd->cpu_scored;
	v[6] = (uint64_t)nd->memory_scored;
	v[7] = nd->untouched;
	v[8] = pair(c->class_of[node], ps->tight);
	v[9] = c->classes.rebuilds;
	v[10] = c->prefer;
	v[11] = (uint64_t)(pl->sample ? pl->sample->next_start : 0);
	v[12] = bits(ps->allocated);
	v[13] = bits(c->allocated);
	uint64_t *u = v + UNDO_NODE_WORDS;
	for (int32_t i = 0; i < nd->gpus; i++, u += UNDO_GPU_WORDS) {
		const struct gpu *g = &c->gpus[nd->first_gpu + i];
		if (g->n_tenants > 1)
			return 0;
		const struct tenant *t = GPU_TENANTS(g);
		bool one = g->n_tenants == 1;
		u[0] = pair(g->free, one ? t->units : 0);
		u[1] = pair(g->n_tenants, g->mig_free);
		u[2] = one ? bits(t->f) : 0;
		u[3] = one ? bits(t->s) : 0;
		u[4] = one ? bits(t->share) : 0;
		u[5] = bits(c->vram_used[nd->first_gpu + i]);
	}
	return UNDO_NODE_WORDS + (size_t)nd->gpus * UNDO_GPU_WORDS;
}

uint64_t placement_state(const struct placer *pl)
{
	const struct placement_undo *u = pl->undo;
	return u && pl->c->changes == u->from ? u->to : pl->c->changes;
}

void pli_undo_save(struct placer *pl, int32_t w, int32_t node)
{
	if (!pl->undo)
		pl->undo = gp_xcalloc(1, sizeof *pl->undo);
	struct placement_undo *u = pl->undo;
	u->before = placement_state(pl);
	u->workload = w;
	u->node = node;
	u->n_view = !pl->gpu && !pl->spread[w].on ? undo_view(pl, node, u->view) : 0;
	u->valid = u->n_view > 0;
}

void pli_undo_released(struct placer *pl, bool one)
{
	if (pl->undo) {
		pl->undo->valid &= one;
		pl->undo->after = pl->c->changes;
	}
}

void pli_undo_taken(struct placer *pl, int32_t w, int32_t node)
{
	struct placement_undo *u = pl->undo;
	if (!u || !u->valid)
		return;
	u->valid = false;
	uint64_t now[UNDO_WORDS];
	if (u->after + 1 != pl->c->changes || u->workload != w || u->node != node ||
	    undo_view(pl, node, now) != u->n_view || memcmp(now, u->view, u->n_view * sizeof *now))
		return;
	u->from = pl->c->changes;
	u->to = u->before;
}
