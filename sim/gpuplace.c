/*
 * gpuplace.c - scheduler.gpu_policy inside the timed simulation (see
 * gpuplace.h): cluster nodes seen as gpupolicy nodes, pods as gpupolicy
 * pods, FGD's target and score cache, GPU clustering's affinity tags.
 */
#include "gpuplan/gpuplace.h"

#include "gpuplan/arrivals.h"

#include <assert.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define NO_TYPE 31 /* a gpu_spec that names no pool's GPU */

struct gpuplace {
	const struct cluster *c;
	enum gpu_policy policy;
	gsl_rng *rng;                   /* random's draws, a stream of its own */
	int32_t *type_of_pool;          /* type bit of each pool's GPU */
	uint32_t *types_of_workload;    /* gpu_spec as a mask of type bits; 0: any */
	struct gpupolicy_target target; /* FGD */
	uint16_t *tags; /* [node * GPUPOLICY_TAGS + tag]: GPU pods per affinity tag */
	/* Scores (a function of the node's state and the request, random's
	 * aside): [node * n_workloads + w] with the gpus and the node version
	 * they were computed for */
	int64_t *score;
	int32_t *score_gpus;
	uint32_t *stamp, *version;
	size_t n_workloads;
};

static int32_t type_bit(const struct scenario *sc, const char *name)
{
	int32_t t = 0;
	for (size_t p = 0; p < sc->n_pools; p++) {
		const char *g = sc->pools[p].gpu->name;
		bool first = true;
		for (size_t q = 0; q < p && first; q++)
			first = strcmp(sc->pools[q].gpu->name, g) != 0;
		if (!strcmp(g, name))
			return t < NO_TYPE ? t : NO_TYPE;
		t += first;
	}
	return -1;
}

/* The pod of workload w asking for `gpus` units, as the policies see it. */
static struct gpupolicy_pod pod_of(const struct gpuplace *g, int32_t w, int32_t gpus)
{
	const struct workload_spec *ws = &g->c->sc->workloads[w];
	bool milli = ws->request == REQUEST_MILLI;
	return (struct gpupolicy_pod){(int32_t)llround(ws->cpu * 1000), milli ? 1 : gpus,
				      milli      ? ws->milli
				      : gpus > 0 ? GPUPOLICY_MILLI
						 : 0,
				      g->types_of_workload[w], llround(ws->memory_bytes / GP_MIB)};
}

/* FGD's target: every workload's request, weighted by its jobs. */
static void build_target(struct gpuplace *g)
{
	const struct scenario *sc = g->c->sc;
	for (size_t w = 0; w < sc->n_workloads; w++) {
		const struct workload_spec *ws = &sc->workloads[w];
		if (ws->inference)
			continue;
		if (ws->arrival.kind == ARRIVAL_TRACE) { /* each GPU count once, by its jobs */
			const struct trace_summary *sum = &ws->arrival.summary;
			for (size_t k = 0; k < sum->n_shapes; k++) {
				struct gpupolicy_pod p = pod_of(g, (int32_t)w, sum->shapes[k].gpus);
				gpupolicy_target_add(&g->target, &p, (double)sum->shapes[k].jobs);
			}
			continue;
		}
		struct gpupolicy_pod p = pod_of(g, (int32_t)w, ws->gpus);
		gpupolicy_target_add(&g->target, &p, ws->count > 0 ? (double)ws->count : 1);
	}
	gpupolicy_target_finish(&g->target, sc->experiment.popularity);
}

struct gpuplace *gpuplace_create(const struct cluster *c)
{
	const struct scenario *sc = c->sc;
	if (sc->scheduler.gpu_policy == GPU_POLICY_BEST_FIT)
		return NULL;
	struct gpuplace *g = gp_xcalloc(1, sizeof *g);
	g->c = c;
	g->policy = sc->scheduler.gpu_policy;
	g->rng = gsl_rng_alloc(gsl_rng_mt19937);
	gsl_rng_set(g->rng, (unsigned long)arrivals_stream_seed(sc->seed, "gpu_policy"));
	g->n_workloads = sc->n_workloads;
	g->type_of_pool = gp_xcalloc(sc->n_pools + 1, sizeof *g->type_of_pool);
	for (size_t p = 0; p < sc->n_pools; p++)
		g->type_of_pool[p] = type_bit(sc, sc->pools[p].gpu->name);
	g->types_of_workload = gp_xcalloc(sc->n_workloads + 1, sizeof *g->types_of_workload);
	for (size_t w = 0; w < sc->n_workloads; w++) {
		const struct workload_spec *ws = &sc->workloads[w];
		for (size_t i = 0; i < ws->n_gpu_spec; i++) {
			int32_t t = type_bit(sc, ws->gpu_spec[i]);
			g->types_of_workload[w] |= UINT32_C(1) << (t < 0 ? NO_TYPE : t);
		}
	}
	if (g->policy == GPU_POLICY_GPU_CLUSTERING)
		g->tags = gp_xcalloc(c->n_nodes * GPUPOLICY_TAGS + 1, sizeof *g->tags);
	if (g->policy == GPU_POLICY_FGD)
		build_target(g);
	if (g->policy != GPU_POLICY_RANDOM) {
		size_t cells = c->n_nodes * sc->n_workloads + 1;
		g->score = gp_xcalloc(cells, sizeof *g->score);
		g->score_gpus = gp_xcalloc(cells, sizeof *g->score_gpus);
		g->stamp = gp_xcalloc(cells, sizeof *g->stamp);
		g->version = gp_xcalloc(c->n_nodes + 1, sizeof *g->version);
		for (size_t n = 0; n < c->n_nodes; n++)
			g->version[n] = 1; /* stamps start at 0: nothing cached */
	}
	return g;
}

void gpuplace_free(struct gpuplace *g)
{
	if (!g)
		return;
	gsl_rng_free(g->rng);
	free(g->type_of_pool);
	free(g->types_of_workload);
	gpupolicy_target_free(&g->target);
	free(g->tags);
	free(g->score);
	free(g->score_gpus);
	free(g->stamp);
	free(g->version);
	free(g);
}

enum gpu_policy gpuplace_policy(const struct gpuplace *g) { return g->policy; }

unsigned long gpuplace_draw(struct gpuplace *g, unsigned long n)
{
	return gsl_rng_uniform_int(g->rng, n);
}

/* Cluster node `node` as the policies see it. */
static void view(const struct gpuplace *g, int32_t node, struct gpupolicy_node *v)
{
	const struct cluster *c = g->c;
	const struct node *nd = &c->nodes[node];
	const struct pool_spec *sp = &c->sc->pools[nd->pool];
	bool shares = sp->sharing.mode == SHARING_FRACTIONAL;
	assert(shares || sp->sharing.mode == SHARING_EXCLUSIVE);
	gpupolicy_node_init(v, nd->gpus, 0, 0, g->type_of_pool[nd->pool], shares);
	if (sp->cpu > 0)
		v->cpu_left = (int32_t)fmax(0, floor(nd->cpu_free * 1000 + 1e-6));
	if (sp->memory_bytes > 0)
		v->memory_left = (int64_t)fmax(0, floor(nd->memory_free / GP_MIB + 1e-6));
	for (int32_t i = 0; i < nd->gpus; i++) {
		int32_t f = c->gpus[nd->first_gpu + i].free;
		v->free[i] = (int16_t)(shares ? f : f > 0 ? GPUPOLICY_MILLI : 0);
	}
	if (g->tags)
		memcpy(v->tag_count, &g->tags[(size_t)node * GPUPOLICY_TAGS], sizeof v->tag_count);
	gpupolicy_node_refresh(v);
}

int64_t gpuplace_score(struct gpuplace *g, int32_t node, int32_t w, int32_t gpus)
{
	size_t at = (size_t)node * g->n_workloads + (size_t)w;
	if (g->stamp && g->stamp[at] == g->version[node] && g->score_gpus[at] == gpus)
		return g->score[at];
	struct gpupolicy_node v;
	view(g, node, &v);
	struct gpupolicy_pod p = pod_of(g, w, gpus);
	int64_t s = gpupolicy_score(g->policy, &v, &p, &g->target);
	if (g->stamp) {
		g->score[at] = s;
		g->score_gpus[at] = gpus;
		g->stamp[at] = g->version[node];
	}
	return s;
}

uint64_t gpuplace_choose(struct gpuplace *g, int32_t node, int32_t w, int32_t gpus)
{
	struct gpupolicy_node v;
	view(g, node, &v);
	struct gpupolicy_pod p = pod_of(g, w, gpus);
	return gpupolicy_choose(g->policy, &v, &p, &g->target, g->rng);
}

void gpuplace_moved(struct gpuplace *g, const struct cluster_grant *grant, int sign)
{
	if (!g)
		return;
	if (g->version)
		g->version[grant->node]++;
	if (!g->tags || !grant->gpu_mask)
		return;
	const struct cluster *c = g->c;
	bool shares = c->sc->pools[c->nodes[grant->node].pool].sharing.mode == SHARING_FRACTIONAL;
	int gpus = __builtin_popcountll(grant->gpu_mask);
	int tag = shares && grant->units < GPUPOLICY_MILLI ? 0 : gpus;
	if (tag < GPUPOLICY_TAGS)
		g->tags[(size_t)grant->node * GPUPOLICY_TAGS + (size_t)tag] += (uint16_t)sign;
}
