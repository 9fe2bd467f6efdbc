/*
 * sim_gauges.c - what a run's batch jobs show in the collector (collect.h):
 * the gauges a job's pods move as they start and stop (allocation, VRAM,
 * CPU, RAM, their cost rates, their own activity), what an allocation costs
 * per hour, and, when the tenants of a GPU change, the GPU's engine and SM
 * activity and the pace of every job still on it (contention.h), which
 * moves their finish.  sim_jobs.c calls it at each step of a job's life.
 */
#include "sim_int.h"

#include "gpuplan/collect.h"
#include "gpuplan/contention.h"
#include "gpuplan/engine.h"
#include "gpuplan/infer.h"

#include <math.h>

/* Moves gauges[k] by delta[k], k < n, in scope all, and in the pool's and the
 * workload's when >= 0: one touch per scope. */
void sim_gauges(struct sim *s, int32_t pool, int32_t w, const uint8_t *list, const double *delta,
		size_t n)
{
	sim_time now = s->engine.now;
	collect_move(&s->collect, 0, list, delta, n, now);
	if (pool >= 0)
		collect_move(&s->collect, collect_scope_pool(s->sc, (size_t)pool), list, delta, n,
			     now);
	if (w >= 0)
		collect_move(&s->collect, collect_scope_workload(s->sc, (size_t)w), list, delta, n,
			     now);
}

void sim_queue_gauges(struct sim *s, int32_t w, double demand, double pending)
{
	_Static_assert(GAUGE_PENDING == GAUGE_DEMAND + 1, "demand and pending side by side");
	const double d[2] = {demand, pending};
	sim_time now = s->engine.now;
	collect_move_block(&s->collect, 0, GAUGE_DEMAND, d, 2, now);
	collect_move_block(&s->collect, collect_scope_workload(s->sc, (size_t)w), GAUGE_DEMAND, d,
			   2, now);
}

void sim_gauge(struct sim *s, int32_t pool, int32_t w, enum gauge g, double delta)
{
	const uint8_t list[] = {(uint8_t)g};
	sim_gauges(s, pool, w, list, &delta, 1);
}

/* The job's slowdown: the worst over the GPUs its pods have a share of (a
 * gang's pods advance together, at the pace of the slowest). */
static double job_slow(struct sim *s, const struct sim_job *j)
{
	double slow = 1;
	for (int32_t p = 0; p < j->pods; p++) {
		const struct cluster_grant *grant = &pods_of((struct sim_job *)j)[p];
		const struct sharing *sh = sharing_of(s, grant->node);
		if (sh->mode == SHARING_EXCLUSIVE)
			continue;
		for (uint64_t m = grant->gpu_mask; m;) {
			const struct gpu *g = gpu_at(s, grant->node, pop_gpu(&m));
			const struct tenant *t = GPU_TENANTS(g);
			for (uint16_t k = 0; k < g->n_tenants; k++)
				if (t[k].job == (uint32_t)(j - s->jobs))
					slow = gp_fmax(slow,
						       contention_slow(sh, t, g->n_tenants, &t[k]));
		}
	}
	return slow;
}

/* Re-rates a running job after its co-tenants changed; moves its finish. */
void sim_retime(struct sim *s, uint32_t id)
{
	struct sim_job *j = &s->jobs[id];
	/* A service holds its GPUs for its duration whoever shares them. */
	double rate = s->sc->workloads[j->workload].kind == WORKLOAD_SERVICE
			      ? 1
			      : contention_rate(j->busy, job_slow(s, j));
	if (rate == j->rate)
		return;
	sim_time now = s->engine.now;
	sim_slowed(s, j, now);
	j->remaining = gp_fmax(0, j->remaining - (double)(now - j->last) * j->rate);
	j->last = now;
	j->rate = rate;
	j->finish_at = now + gp_llround_any(j->remaining / rate); /* to the nearest µs */
	j->gen++; /* the previous finish event is now stale */
	engine_push(&s->engine, j->finish_at, s->ev_finish, id, j->gen);
}

/* sim_gpus_changed for the GPUs of an exclusive pod: each holds that pod
 * alone, or nothing once it left, so each moves as the first does (the same
 * activity before and after): one GPU's activity and one retime stand for
 * all, and the gauges still add the deltas GPU by GPU.  *up: they rise. */
static size_t exclusive_changed(struct sim *s, const struct sharing *sh,
				const struct cluster_grant *grant, double (*delta)[2], bool *up)
{
	const struct gpu *first = gpu_at(s, grant->node, __builtin_ctzll(grant->gpu_mask));
	const struct tenant *t = GPU_TENANTS(first);
	double engine, sm;
	contention_activity(sh, t, first->n_tenants, &engine, &sm);
	double was_engine = first->engine, was_sm = first->sm;
	double d0 = engine - was_engine, d1 = sm - was_sm;
	*up = d0 >= 0 && d1 >= 0; /* the pod starting */
	size_t n = 0;
	for (uint64_t m = grant->gpu_mask; m; n++) {
		struct gpu *g = gpu_at(s, grant->node, pop_gpu(&m));
		assert(g->n_tenants == first->n_tenants && g->engine == was_engine &&
		       g->sm == was_sm && (!g->n_tenants || GPU_TENANTS(g)[0].job == t[0].job) &&
		       "an exclusive pod's GPUs move alike");
		delta[n][0] = d0;
		delta[n][1] = d1;
		g->engine = engine;
		g->sm = sm;
	}
	if (first->n_tenants && !infer_is_tenant(t[0].job)) /* replicas time themselves */
		sim_retime(s, t[0].job);
	return n;
}

/* sim_gpus_changed for GPUs that may be shared: each GPU's activity from
 * its tenants, and everyone on them retimed. */
static size_t shared_changed(struct sim *s, const struct sharing *sh,
			     const struct cluster_grant *grant, double (*delta)[2])
{
	/* A job retimed here is retimed again to no effect: the tenants its
	 * rate depends on do not change in this loop.  The one before is
	 * skipped, which is every GPU but the first of a pod alone on them. */
	uint32_t retimed = UINT32_MAX;
	size_t n = 0;
	for (uint64_t m = grant->gpu_mask; m;) {
		struct gpu *g = gpu_at(s, grant->node, pop_gpu(&m));
		const struct tenant *t = GPU_TENANTS(g);
		double engine, sm;
		contention_activity(sh, t, g->n_tenants, &engine, &sm);
		delta[n][0] = engine - g->engine;
		delta[n++][1] = sm - g->sm;
		g->engine = engine;
		g->sm = sm;
		for (uint16_t k = 0; k < g->n_tenants; k++)
			if (!infer_is_tenant(t[k].job) &&
			    t[k].job != retimed) /* replicas time themselves */
				sim_retime(s, (retimed = t[k].job));
	}
	return n;
}

/* After the tenants of the job's GPUs changed: their activity, and the rates
 * of everyone still on them. */
void sim_gpus_changed(struct sim *s, const struct cluster_grant *grant)
{
	const struct sharing *sh = sharing_of(s, grant->node);
	int32_t pool = s->cluster.nodes[grant->node].pool;
	double delta[64][2]; /* engine and SM by GPU, moved in one touch a scope */
	bool up = false;     /* every delta >= 0 (collect_move_rows_up) */
	size_t n = sh->mode == SHARING_EXCLUSIVE && grant->gpu_mask
			   ? exclusive_changed(s, sh, grant, delta, &up)
			   : shared_changed(s, sh, grant, delta);
	/* GPU by GPU, added in GPU order as one move per GPU would. */
	_Static_assert(GAUGE_SM == GAUGE_ENGINE + 1, "engine and SM activity side by side");
	sim_time now = s->engine.now;
	size_t scope_pool = collect_scope_pool(s->sc, (size_t)pool);
	if (up) {
		collect_move_rows_up(&s->collect, 0, GAUGE_ENGINE, 2, delta[0], n, now);
		collect_move_rows_up(&s->collect, scope_pool, GAUGE_ENGINE, 2, delta[0], n, now);
	} else {
		collect_move_rows(&s->collect, 0, GAUGE_ENGINE, 2, delta[0], n, now);
		collect_move_rows(&s->collect, scope_pool, GAUGE_ENGINE, 2, delta[0], n, now);
	}
}

/* The share of its GPUs' compute a pod has (sharing_compute): 1 on exclusive
 * and time-sliced GPUs, without reading the GPU's tenants (a cache miss per
 * pod on a large cluster); else its tenant's.  A CPU-only pod (an openb
 * trace has them) holds no GPU. */
static double pod_share(struct sim *s, const struct sim_job *j, const struct cluster_grant *grant)
{
	enum sharing_mode mode = sharing_of(s, grant->node)->mode;
	if (mode == SHARING_EXCLUSIVE || mode == SHARING_TIME_SLICING || !grant->gpu_mask)
		return 1;
	const struct gpu *g = gpu_at(s, grant->node, __builtin_ctzll(grant->gpu_mask));
	const struct tenant *t = GPU_TENANTS(g);
	for (uint16_t k = 0; k < g->n_tenants; k++)
		if (t[k].job == (uint32_t)(j - s->jobs))
			return t[k].share;
	return 1;
}

/* The gauges a running pod moves itself (collect.h): the block that starts
 * the gauges (allocation, and its own (uncapped) activity in its workload's
 * scope, the last two), then VRAM, CPU, RAM and their cost rates, which a
 * pod without them, priced at 0, moves by 0 and leaves out, as it leaves out
 * those after the last it moves (adding a 0 changes no gauge: they are
 * never -0).  A job counts as running once.  One
 * touch per scope.  Returns the pod's cost per hour times sign. */
#define POD_GAUGES (GAUGE_SM + 1)
#define POD_MORE   (GAUGE_RAM_COST + 1 - GAUGE_VRAM)
_Static_assert(GAUGE_ALLOCATED == 0 && GAUGE_ENGINE == POD_GAUGES - 2 &&
		       GAUGE_CHARGED < GAUGE_ENGINE && GAUGE_VRAM < GAUGE_CPU &&
		       GAUGE_CPU < GAUGE_RAM && GAUGE_RAM < GAUGE_GPU_COST &&
		       GAUGE_GPU_COST < GAUGE_CPU_COST && GAUGE_CPU_COST < GAUGE_RAM_COST,
	       "a pod's gauges are the first block, activity last, then the others in one block");

static double pod_gauges(struct sim *s, const struct sim_job *j, const struct cluster_grant *grant,
			 double sign, const double *queue)
{
	const struct workload_spec *ws = &s->sc->workloads[j->workload];
	int32_t pool = s->cluster.nodes[grant->node].pool;
	double gpus = gp_popcount64(grant->gpu_mask);
	double share = pod_share(s, j, grant);
	bool mig = sharing_of(s, grant->node)->mode == SHARING_MIG;
	const struct pool_spec *ps = &s->sc->pools[pool];
	const struct price *price = &ps->price;
	/* A MIG instance's engine activity is its own (DCGM reports a GPU
	 * instance's GR engine activity over the instance), so a busy
	 * instance is as efficient as a busy GPU. */
	const double d[POD_GAUGES] = {
		[GAUGE_ALLOCATED] = sign * grant->equivalent,
		[GAUGE_RUNNING] = grant == pods_of((struct sim_job *)j) ? sign : 0,
		[GAUGE_CHARGED] = sign * grant->equivalent * sharing_charge(&ps->sharing),
		[GAUGE_ENGINE] = sign * j->busy * (mig ? grant->equivalent : gpus),
		[GAUGE_SM] = sign * gpus * j->busy * gp_fmin(ws->sm_share, share),
	};
	/* A pod without VRAM, CPU or memory in a pool without prices moves
	 * each of the six by a zero (-0 at a finish): they are left at +0,
	 * which leaves them out of the gauges and the cost cell as a -0 would,
	 * adds nothing to a figure that is never -0, and prices nothing. */
	bool bare = ws->vram_bytes == 0 && ws->cpu == 0 && ws->memory_bytes == 0 &&
		    price->gpu_hour == 0 && price->committed <= 0 && price->cpu_hour == 0 &&
		    price->gib_hour == 0;
	assert(!bare || scenario_gpu_rate(ps, grant->first_gpu - s->cluster.pools[pool].first_gpu,
					  grant->gpu_mask, grant->equivalent) == 0);
	double more[POD_MORE] = {0};
	size_t n_more = 0; /* up to the last that moves: a scope integrates what moved */
	if (!bare) {
		double ram = ws->memory_bytes / GP_GIB;
		double gpu_rate =
			scenario_gpu_rate(ps, grant->first_gpu - s->cluster.pools[pool].first_gpu,
					  grant->gpu_mask, grant->equivalent);
		more[0] = sign * gpus * ws->vram_bytes / GP_GIB;
		more[GAUGE_CPU - GAUGE_VRAM] = sign * ws->cpu;
		more[GAUGE_RAM - GAUGE_VRAM] = sign * ram;
		more[GAUGE_GPU_COST - GAUGE_VRAM] = sign * gpu_rate;
		more[GAUGE_CPU_COST - GAUGE_VRAM] = sign * ws->cpu * price->cpu_hour;
		more[GAUGE_RAM_COST - GAUGE_VRAM] = sign * ram * price->gib_hour;
		n_more = POD_MORE;
		while (n_more && more[n_more - 1] == 0)
			n_more--;
	}
	sim_time now = s->engine.now;
	size_t scopes[3] = {0, collect_scope_pool(s->sc, (size_t)pool),
			    collect_scope_workload(s->sc, (size_t)j->workload)};
	for (size_t k = 0; k < 3; k++) {
		struct scope_gauges *sg = collect_touch(&s->collect, scopes[k], now);
		/* Scopes all and pool get the GPUs' capped activity in sim_gpus_changed(). */
		size_t n = k == 2 ? POD_GAUGES : POD_GAUGES - 2;
		if (sign > 0) { /* a start: every gauge rises */
			collect_block_up(sg, GAUGE_ALLOCATED, d, n);
			if (n_more)
				collect_block_up(sg, GAUGE_VRAM, more, n_more);
		} else {
			collect_block(sg, GAUGE_ALLOCATED, d, n);
			if (n_more)
				collect_block(sg, GAUGE_VRAM, more, n_more);
		}
		if (queue && k != 1) /* the queue's gauges have no pool */
			collect_block(sg, GAUGE_DEMAND, queue, 2);
	}
#define MORE(g) more[(g)-GAUGE_VRAM]
	collect_cost_move(&s->collect, (size_t)j->workload, pool, grant->node,
			  (const double[]){MORE(GAUGE_GPU_COST), MORE(GAUGE_CPU_COST),
					   MORE(GAUGE_RAM_COST), d[GAUGE_CHARGED], MORE(GAUGE_CPU),
					   MORE(GAUGE_RAM)},
			  now);
	return MORE(GAUGE_GPU_COST) + MORE(GAUGE_CPU_COST) + MORE(GAUGE_RAM_COST);
#undef MORE
}

/* The pods' cost rates are the allocation's price per hour (times sign, an
 * exact 1 or -1), summed in the order the start's bill always summed them:
 * a start takes its price from here instead of pricing its GPUs twice. */
double sim_job_gauges(struct sim *s, const struct sim_job *j, double sign, const double *queue)
{
	_Static_assert(GAUGE_PENDING == GAUGE_DEMAND + 1, "demand and pending side by side");
	double cost = 0;
	for (int32_t k = 0; k < j->pods; k++)
		cost += pod_gauges(s, j, &pods_of((struct sim_job *)j)[k], sign, k ? NULL : queue);
	return cost;
}
