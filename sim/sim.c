/*
 * sim.c - the run loop: arrivals, scheduling passes, completions, windows.
 *
 * Events: a workload's next arrival (EV_ARRIVAL), a job's completion
 * (EV_FINISH), a pool's window opening or closing (EV_WINDOW), a pod's
 * restart after an OOM kill's backoff (EV_RETRY); every other type is the
 * inference module's (enum infer_event: requests, iterations, replica
 * start-ups and restarts, autoscaler looks), handed to infer_event, which
 * reports back through infer_news what the loop must know.  After all the
 * events of one instant are handled, one scheduling pass starts what can
 * start (so that simultaneous arrivals are
 * ordered by the scheduler's order, not by chance, and so that jobs finishing
 * at 13:00 free their GPUs before the 13:00 pass).  A pass has two stages, as
 * Kueue and kube-scheduler do: admission reserves queue quota for the heads
 * of the admission classes (quota.h; a StrictFIFO queue offers only its
 * first head, so a head short of quota blocks the queue, never one short of
 * nodes), then placement asks about the heads of the admitted classes (see
 * sched.h).  A pass runs only when something changed that could let work
 * start: an arrival, a completion, a window opening.  A head that does not
 * fit gives its class Kueue's or kube-scheduler's reason (reasons.h), and
 * the class is not asked again until quota or capacity is freed or a job
 * joins it; every pending job carries a reason from the instant it joins.
 * A gang job's pods are placed together and run at the pace of the slowest.
 * The pass itself is in sim_schedule.c.
 */
#include "gpuplan/sim.h"

#include "sim_int.h"

#include "gpuplan/arrivals.h"
#include "gpuplan/autoscale.h"
#include "gpuplan/cluster.h"
#include "gpuplan/collect.h"
#include "gpuplan/engine.h"
#include "gpuplan/infer.h"
#include "gpuplan/placement.h"
#include "gpuplan/reasons.h"
#include "gpuplan/sched.h"
#include "gpuplan/units.h"

#include "gpuplan/quota.h"

#include <assert.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* A run stops as stalled when work is left that nothing can start: nothing
 * running, nothing more arriving, and no start through a week of windows. */
#define STALL_AFTER (8 * SIM_DAY)

/* Or when work is left that starts but never gets anywhere: for STALL_AFTER
 * nothing arrived, ended or kept a checkpoint, at least this many evictions
 * lost all their work meanwhile, and every job running is one of them,
 * started again.  A 1h job without checkpoints on spot nodes interrupted
 * every minute restarts forever; a long job that simply runs is not stalled.
 * An attempt that finishes with probability p fails this many times in a row
 * with (1 - p)^200, under 1e-6 for p >= 6.7%: a job that needs fewer than
 * about 15 attempts on average is not cut short by bad luck (with 10, a 2-day
 * job under one interruption a day, p = 13.5%, stalled 1 seed in 5). */
#define FUTILE_EVICTIONS 200

/* --- state changes, each mirrored in the gauges ------------------------- */

/* Moves gauges[k] by delta[k], k < n, in scope all, and in the pool's and the
 * workload's when >= 0: one touch per scope. */
static void gauges(struct sim *s, int32_t pool, int32_t w, const uint8_t *list, const double *delta,
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

static void gauge(struct sim *s, int32_t pool, int32_t w, enum gauge g, double delta)
{
	const uint8_t list[] = {(uint8_t)g};
	gauges(s, pool, w, list, &delta, 1);
}

/* Demand and pending, which a job's arrival and start move together. */
static const uint8_t demand_pending[] = {GAUGE_DEMAND, GAUGE_PENDING};

/* GPUs' worth the job's pods hold. */
static double job_equivalent(const struct sim_job *j)
{
	double eq = 0;
	for (int32_t k = 0; k < j->pods; k++)
		eq += pods_of((struct sim_job *)j)[k].equivalent;
	return eq;
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
					slow = fmax(slow,
						    contention_slow(sh, t, g->n_tenants, &t[k]));
		}
	}
	return slow;
}

/* Re-rates a running job after its co-tenants changed; moves its finish. */
static void retime(struct sim *s, uint32_t id)
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
	j->remaining = fmax(0, j->remaining - (double)(now - j->last) * j->rate);
	j->last = now;
	j->rate = rate;
	j->finish_at = now + (sim_time)llround(j->remaining / rate); /* to the nearest µs */
	j->gen++; /* the previous finish event is now stale */
	engine_push(&s->engine, j->finish_at, EV_FINISH, id, j->gen);
}

/* GPU by GPU, the engine and SM activity gauges: a node's GPUs' changes in
 * one list, added in GPU order as one move per GPU would. */
#define ACTIVITY2  GAUGE_ENGINE, GAUGE_SM
#define ACTIVITY8  ACTIVITY2, ACTIVITY2, ACTIVITY2, ACTIVITY2
#define ACTIVITY32 ACTIVITY8, ACTIVITY8, ACTIVITY8, ACTIVITY8
static const uint8_t activity_list[2 * 64] = {ACTIVITY32, ACTIVITY32, ACTIVITY32, ACTIVITY32};

/* After the tenants of the job's GPUs changed: their activity, and the rates
 * of everyone still on them. */
static void gpus_changed(struct sim *s, const struct cluster_grant *grant)
{
	const struct sharing *sh = sharing_of(s, grant->node);
	int32_t pool = s->cluster.nodes[grant->node].pool;
	/* A job retimed here is retimed again to no effect: the tenants its
	 * rate depends on do not change in this loop.  The one before is
	 * skipped, which is every GPU but the first of an exclusive pod. */
	uint32_t retimed = UINT32_MAX;
	double delta[2 * 64]; /* engine and SM by GPU, moved in one touch a scope */
	size_t n = 0;
	for (uint64_t m = grant->gpu_mask; m;) {
		struct gpu *g = gpu_at(s, grant->node, pop_gpu(&m));
		const struct tenant *t = GPU_TENANTS(g);
		double engine, sm;
		contention_activity(sh, t, g->n_tenants, &engine, &sm);
		delta[n++] = engine - g->engine;
		delta[n++] = sm - g->sm;
		g->engine = engine;
		g->sm = sm;
		for (uint16_t k = 0; k < g->n_tenants; k++)
			if (!infer_is_tenant(t[k].job) &&
			    t[k].job != retimed) /* replicas time themselves */
				retime(s, (retimed = t[k].job));
	}
	gauges(s, pool, -1, activity_list, delta, n);
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

/* The gauges a running pod moves itself, the block that starts the gauges
 * (collect.h): allocation, VRAM, and its own (uncapped) activity in its
 * workload's scope, the last two.  A job counts as running once.  One
 * collect_move_block per scope. */
#define POD_GAUGES (GAUGE_SM + 1)
_Static_assert(GAUGE_ALLOCATED == 0 && GAUGE_ENGINE == POD_GAUGES - 2 &&
		       GAUGE_CHARGED < GAUGE_ENGINE,
	       "a pod's gauges are the first block, activity last");

static void pod_gauges(struct sim *s, const struct sim_job *j, const struct cluster_grant *grant,
		       double sign)
{
	const struct workload_spec *ws = &s->sc->workloads[j->workload];
	int32_t pool = s->cluster.nodes[grant->node].pool;
	double gpus = gp_popcount64(grant->gpu_mask);
	double share = pod_share(s, j, grant);
	bool mig = sharing_of(s, grant->node)->mode == SHARING_MIG;
	const struct pool_spec *ps = &s->sc->pools[pool];
	const struct price *price = &ps->price;
	double ram = ws->memory_bytes / GP_GIB;
	double gpu_rate = scenario_gpu_rate(ps, grant->first_gpu - s->cluster.pools[pool].first_gpu,
					    grant->gpu_mask, grant->equivalent);
	/* A MIG instance's engine activity is its own (DCGM reports a GPU
	 * instance's GR engine activity over the instance), so a busy
	 * instance is as efficient as a busy GPU. */
	const double d[POD_GAUGES] = {
		[GAUGE_ALLOCATED] = sign * grant->equivalent,
		[GAUGE_VRAM] = sign * gpus * ws->vram_bytes / GP_GIB,
		[GAUGE_RUNNING] = grant == pods_of((struct sim_job *)j) ? sign : 0,
		[GAUGE_CPU] = sign * ws->cpu,
		[GAUGE_RAM] = sign * ram,
		[GAUGE_GPU_COST] = sign * gpu_rate,
		[GAUGE_CPU_COST] = sign * ws->cpu * price->cpu_hour,
		[GAUGE_RAM_COST] = sign * ram * price->gib_hour,
		[GAUGE_CHARGED] = sign * grant->equivalent * sharing_charge(&ps->sharing),
		[GAUGE_ENGINE] = sign * j->busy * (mig ? grant->equivalent : gpus),
		[GAUGE_SM] = sign * gpus * j->busy * fmin(ws->sm_share, share),
	};
	sim_time now = s->engine.now;
	/* Scopes all and pool get the GPUs' capped activity in gpus_changed(). */
	collect_move_block(&s->collect, 0, GAUGE_ALLOCATED, d, POD_GAUGES - 2, now);
	collect_move_block(&s->collect, collect_scope_pool(s->sc, (size_t)pool), GAUGE_ALLOCATED, d,
			   POD_GAUGES - 2, now);
	collect_move_block(&s->collect, collect_scope_workload(s->sc, (size_t)j->workload),
			   GAUGE_ALLOCATED, d, POD_GAUGES, now);
	collect_cost_move(&s->collect, (size_t)j->workload, pool, grant->node,
			  (const double[]){d[GAUGE_GPU_COST], d[GAUGE_CPU_COST], d[GAUGE_RAM_COST],
					   d[GAUGE_CHARGED], d[GAUGE_CPU], d[GAUGE_RAM]},
			  now);
}

static void job_gauges(struct sim *s, const struct sim_job *j, double sign)
{
	for (int32_t k = 0; k < j->pods; k++)
		pod_gauges(s, j, &pods_of((struct sim_job *)j)[k], sign);
}

/* What the job's allocation costs per hour at its pool's prices. */
static double cost_per_hour(const struct sim *s, const struct sim_job *j)
{
	const struct workload_spec *ws = &s->sc->workloads[j->workload];
	double cost = 0;
	for (int32_t k = 0; k < j->pods; k++) {
		const struct cluster_grant *grant = &pods_of((struct sim_job *)j)[k];
		int32_t pool = s->cluster.nodes[grant->node].pool;
		const struct pool_spec *ps = &s->sc->pools[pool];
		const struct price *p = &ps->price;
		cost += scenario_gpu_rate(ps, grant->first_gpu - s->cluster.pools[pool].first_gpu,
					  grant->gpu_mask, grant->equivalent) +
			ws->cpu * p->cpu_hour + ws->memory_bytes / GP_GIB * p->gib_hour;
	}
	return cost;
}

/* The checkpoints written over `work` µs of work from the last one: one at
 * every multiple of the interval, none at the very end. */
static double checkpoint_writes(const struct workload_spec *ws, double work)
{
	double every = (double)ws->checkpoint;
	return every > 0 && work > 0 ? ceil(work / every) - 1 : 0;
}

/*
 * Start-up (image pull, model load) holds the GPUs without using them.  It is
 * folded into the job's busy fraction: with D of work at f and S of start-up,
 * the job is busy f*D/(D+S) of its D+S, which gives the same finish time as
 * start-up followed by work under any constant slowdown.
 */
static void begin_work(struct sim *s, struct sim_job *j)
{
	const struct workload_spec *ws = &s->sc->workloads[j->workload];
	double work = (double)j->duration - j->kept;
	/* idle_cull: a pod idle below the threshold is culled cull_after past
	 * its start-up (JupyterHub's culler, Kubeflow's culling; scenario.md) */
	j->culled = ws->cull_after > 0 && ws->gpu_busy < ws->cull_threshold &&
		    work > (double)ws->cull_after && !j->doomed;
	if (j->culled)
		work = (double)ws->cull_after;
	double total = work + (double)ws->startup;
	if (j->doomed) /* its pod dies with OOM as its start-up ends: no work */
		work = 0, total = (double)ws->startup;
	else
		total += checkpoint_writes(ws, work) * (double)ws->checkpoint_write;
	j->remaining = total;
	j->span_work = total;
	j->busy = total > 0 ? ws->gpu_busy * work / total : ws->gpu_busy;
	for (int32_t p = 0; p < j->pods; p++) {
		const struct cluster_grant *grant = &pods_of(j)[p];
		for (uint64_t m = grant->gpu_mask; m;) {
			struct gpu *g = gpu_at(s, grant->node, pop_gpu(&m));
			struct tenant *t = GPU_TENANTS(g);
			for (uint16_t k = 0; k < g->n_tenants; k++)
				if (t[k].job == (uint32_t)(j - s->jobs))
					t[k].f = j->busy;
		}
	}
}

/* Admits (+1) or releases (-1) the job's request against its queue's quota.
 * Either may change what other jobs may be admitted or preempt, except in
 * a queue without a quota, which counts nothing. */
void sim_charge_quota(struct sim *s, struct sim_job *j, double sign)
{
	const struct workload_spec *ws = &s->sc->workloads[j->workload];
	j->admitted = sign > 0;
	if (!quota_limited(&s->quota, (size_t)ws->queue))
		return;
	quota_request(&s->quota, ws, j->gpus, j->pods, s->ask);
	quota_columns(&s->quota, (size_t)ws->queue, s->ask, j->flavors, s->req);
	quota_charge(&s->quota, (size_t)ws->queue, s->req, sign);
	s->quota_gen++;
	uint32_t id = (uint32_t)(j - s->jobs);
	if (sign > 0) { /* the preemption candidates, without a scan of every job */
		GP_GROW(s->holders, s->cap_holders, s->n_holders + 1);
		j->holder = (uint32_t)s->n_holders;
		s->holders[s->n_holders++] = id;
	} else {
		assert(j->holder < s->n_holders && s->holders[j->holder] == id);
		uint32_t last = s->holders[--s->n_holders];
		s->holders[j->holder] = last;
		s->jobs[last].holder = j->holder;
	}
	s->dirty = true;
}

/* Gives back the quota of a job that held it (it ended or was preempted). */
static void release_quota(struct sim *s, struct sim_job *j)
{
	if (j->admitted)
		sim_charge_quota(s, j, -1);
}

/* Kueue admits the job with flavors: the one shown (quota_flavor) and its
 * pods' placement variant (placement.h) follow. */
void sim_take_flavors(struct sim *s, struct sim_job *j, uint64_t flavors)
{
	const struct workload_spec *ws = &s->sc->workloads[j->workload];
	int32_t all[SCENARIO_MAX_GROUPS];
	size_t n;
	char res[96];
	j->flavors = flavors;
	j->flavor = quota_flavor(&s->quota, (size_t)ws->queue, flavors,
				 scenario_resource_name(ws, res, sizeof res), all, &n);
	j->variant = placement_variant(&s->placer, all, n);
}

/* Puts a pending job in the queue of its stage: its queue's admission
 * classes until it holds quota, then the classes kube-scheduler places. */
void sim_enqueue(struct sim *s, uint32_t id)
{
	struct sim_job *j = &s->jobs[id];
	const struct workload_spec *ws = &s->sc->workloads[j->workload];
	struct sched_entry e = sched_entry(s->sched.order, id, j->seq, j->submit, ws->priority,
					   j->deadline, j->duration);
	if (!j->admitted && !quota_limited(&s->quota, (size_t)ws->queue)) {
		j->admitted = true; /* nothing to wait for: no admission class */
		j->admitted_at = s->engine.now;
	}
	if (!j->admitted) {
		size_t cls = sched_add(&s->admit, j->workload, j->gpus, ws->queue, e);
		j->cls = (int32_t)cls;
		reasons_join(&s->reasons, ADMIT_RC(cls), id);
	} else {
		size_t cls = sched_add_variant(&s->sched, j->workload, j->gpus, j->variant,
					       ws->queue, e);
		j->cls = (int32_t)cls;
		reasons_join(&s->reasons, PLACE_RC(cls), id);
		autoscale_joined(s->as, cls, j->pods);
	}
	s->dirty = true;
}

/* Something that lasts happened at time at: a new epoch starts, in which no
 * eviction has lost work yet. */
static void kept_progress(struct sim *s, sim_time at)
{
	s->last_kept = at;
	s->epoch++;
	s->lost = 0;
	s->futile_running = 0;
}

static void submit(struct sim *s, size_t w, const struct new_job *nj)
{
	sim_time now = s->engine.now;
	if (!s->collect.started)
		collect_start(&s->collect, now);
	uint32_t id;
	uint16_t gen = 0;
	if (s->n_free) {
		id = s->free_ids[--s->n_free];
		gen = (uint16_t)(s->jobs[id].gen + 1); /* its old finish events stay stale */
	} else {
		GP_GROW(s->jobs, s->cap_jobs, s->n_jobs + 1);
		GP_GROW(s->node_of, s->cap_node_of, s->n_jobs + 1);
		id = (uint32_t)s->n_jobs++;
	}
	s->node_of[id] = -1;
	struct sim_job *j = &s->jobs[id];
	*j = (struct sim_job){.submit = now,
			      .start = SIM_NEVER,
			      .end = SIM_NEVER,
			      .deadline = nj->deadline,
			      .duration = nj->duration,
			      .demand = s->wl[w].demand_unit * nj->gpus,
			      .workload = (int32_t)w,
			      .gpus = nj->gpus,
			      .gen = gen,
			      .status = JOB_PENDING,
			      .trace_queue = nj->trace_queue,
			      .seq = s->submitted++,
			      .cls = -1,
			      .flavors = QUOTA_UNASSIGNED,
			      .flavor = -1,
			      .admitted_at = SIM_NEVER,
			      .nominated = -1};
	if (s->sc->output.jobs) {
		GP_GROW(s->out->jobs, s->out->cap_jobs, s->submitted);
		s->out->n_jobs = s->submitted;
	}
	struct sim_workload *wl = &s->wl[w];
	wl->submitted++;
	if (wl->first_submit == SIM_NEVER)
		wl->first_submit = now;
	j->grant.node = -1;
	j->pods = placement_pods(&s->placer, w);
	j->demand *= j->pods;
	gauges(s, -1, (int32_t)w, demand_pending, (const double[]){j->demand, 1}, 2);
	sim_enqueue(s, id);
	s->last_progress = now;
	kept_progress(s, now);
}

/* Whether the pod's footprint overflows a GPU's memory (sharing.h). */
static bool pod_overflows(struct sim *s, const struct cluster_grant *grant)
{
	const struct node *nd = &s->cluster.nodes[grant->node];
	return sharing_overflows(sharing_of(s, grant->node),
				 s->sc->pools[nd->pool].gpu->memory_bytes,
				 &s->cluster.vram_used[nd->first_gpu], grant->gpu_mask);
}

/* A gang dies with any of its pods. */
static bool overflows(struct sim *s, struct sim_job *j)
{
	for (int32_t k = 0; k < j->pods; k++)
		if (pod_overflows(s, &pods_of(j)[k]))
			return true;
	return false;
}

/* A job has completed or failed: its counts go to its workload, its row
 * (output.jobs) to the results, and its index to the next arrival (sim.h),
 * so memory follows the jobs in flight. */
static void retire(struct sim *s, uint32_t id)
{
	struct sim_job *j = &s->jobs[id];
	struct sim_workload *wl = &s->wl[j->workload];
	if (j->status == JOB_COMPLETED) {
		wl->completed++;
		wl->met += j->end <= j->deadline;
		if (wl->last_end == SIM_NEVER || j->end > wl->last_end)
			wl->last_end = j->end;
	} else {
		wl->failed++;
	}
	if (s->sc->output.jobs)
		sim_record_job(s, j, id);
	free(j->more);
	j->more = NULL;
	reasons_retire(&s->reasons, id);
	GP_GROW(s->free_ids, s->cap_free, s->n_free + 1);
	s->free_ids[s->n_free++] = id;
}

/* The pod whose allocation overflowed the GPU dies with OOM; the Job makes a
 * new one after a backoff, until its restart limit. */
static void oom_killed(struct sim *s, uint32_t id);

static void oom_kill(struct sim *s, uint32_t id)
{
	struct sim_job *j = &s->jobs[id];
	placement_release(&s->placer, j->workload, id, pods_of(j));
	oom_killed(s, id);
}

/* The rest of an OOM kill, once the pod's units are released. */
static void oom_killed(struct sim *s, uint32_t id)
{
	struct sim_job *j = &s->jobs[id];
	const struct workload_spec *ws = &s->sc->workloads[j->workload];
	s->freed++;
	s->wl[j->workload].oom_kills++;
	j->oom_kills++;
	if (j->restarts >= ws->restart_limit) {
		j->status = JOB_FAILED;
		j->end = s->engine.now;
		release_quota(s, j);
		gauge(s, -1, j->workload, GAUGE_PENDING, -1);
		gauge(s, -1, j->workload, GAUGE_DEMAND, -j->demand);
		retire(s, id);
		kept_progress(s, s->engine.now); /* a failed job is an end */
		return;
	}
	/* The Job makes a new pod; its workload stays admitted meanwhile. */
	sim_time backoff = sim_backoff(ws->restart_backoff, j->restarts++);
	s->backing_off++;
	engine_push(&s->engine, s->engine.now + backoff, EV_RETRY, id, 0);
}

static sim_time ws_startup(const struct sim *s, const struct sim_job *j)
{
	return s->sc->workloads[j->workload].startup;
}

/* Starts the head of class cls on the nodes placement_plan found for it. */
void sim_start(struct sim *s, size_t cls, const int32_t *nodes)
{
	uint32_t id = sched_head(&s->sched, cls)->job;
	sched_pop(&s->sched, cls);
	reasons_leave(&s->reasons, id, s->engine.now);
	struct sim_job *j = &s->jobs[id];
	j->cls = -1;
	autoscale_started(s->as, cls, j->pods);
	struct pod_request pod = {j->workload, j->gpus, j->duration, fit_window(s), j->variant};
	if (j->pods > 1 && !j->more)
		j->more = gp_xcalloc((size_t)j->pods, sizeof *j->more);
	placement_take(&s->placer, &pod, nodes, id, pods_of(j));
	if (j->more)
		j->grant = j->more[0];
	s->node_of[id] = j->grant.node;
	if (placement_start_unblocks(&s->placer, (size_t)j->workload))
		s->freed++;
	s->last_progress = s->engine.now;
	j->doomed = overflows(s, j);
	if (j->doomed && !ws_startup(s, j)) {
		oom_kill(s, id); /* nothing to start up: it dies as it is placed */
		return;
	}
	if (j->start == SIM_NEVER && !j->doomed) {
		j->start = s->engine.now; /* queue time runs to the first start */
		struct sim_workload *wl = &s->wl[j->workload];
		samples_add(&wl->waits, &s->waits_held, sim_seconds(j->start - j->submit));
	}
	j->span_start = s->engine.now;
	j->last = s->engine.now;
	bind_add(&s->bind, CONSTRAINT_STARTUP, j->workload, s->cluster.nodes[j->grant.node].pool,
		 sim_seconds(ws_startup(s, j)) * j->pods);
	s->futile_running += j->lost_epoch == s->epoch;
	begin_work(s, j);
	j->cost_per_h = cost_per_hour(s, j);
	j->rate = 0; /* retime() sets it and schedules the finish */
	j->status = JOB_RUNNING;
	s->running++;
	/* Demand follows the pod to where it landed (a replica is 1/R of a GPU). */
	gauges(s, -1, j->workload, demand_pending,
	       (const double[]){job_equivalent(j) - j->demand, -1}, 2);
	j->demand = job_equivalent(j);
	job_gauges(s, j, +1);
	for (int32_t k = 0; k < j->pods; k++)
		gpus_changed(s, &pods_of(j)[k]);
	if (!j->grant.gpu_mask)
		retime(s, id); /* a CPU-only pod (openb traces): no GPU to retime it */
}

/* A pod whose memory overflows its GPU starts up (its image, its model
 * load) and dies with OOM as the start-up ends: the attempt holds its GPUs,
 * and is billed to its workload, for the start-up (docs/cost.md). */
static void oom_after_startup(struct sim *s, uint32_t id)
{
	struct sim_job *j = &s->jobs[id];
	sim_time now = s->engine.now;
	j->cost += j->cost_per_h * sim_seconds(now - j->span_start) / 3600;
	job_gauges(s, j, -1);
	placement_release(&s->placer, j->workload, id, pods_of(j));
	j->status = JOB_PENDING;
	j->gen++;
	j->doomed = false;
	s->running--;
	if (j->lost_epoch == s->epoch)
		s->futile_running--; /* it stopped running */
	gauge(s, -1, j->workload, GAUGE_PENDING, 1);
	for (int32_t k = 0; k < j->pods; k++)
		gpus_changed(s, &pods_of(j)[k]);
	oom_killed(s, id);
}

static void finish(struct sim *s, uint32_t id, uint16_t gen)
{
	struct sim_job *j = &s->jobs[id];
	if (j->status != JOB_RUNNING || gen != j->gen || s->engine.now != j->finish_at)
		return; /* superseded by a later finish: the job's rate changed */
	if (j->doomed) {
		oom_after_startup(s, id);
		return;
	}
	for (int32_t k = 0; k < j->pods; k++)
		cluster_prefetch(&s->cluster, &pods_of(j)[k]);
	sim_slowed(s, j, s->engine.now);
	job_gauges(s, j, -1);
	placement_release(&s->placer, j->workload, id, pods_of(j));
	s->freed++;
	j->end = s->engine.now;
	j->status = JOB_COMPLETED;
	j->cost += j->cost_per_h * sim_seconds(j->end - j->span_start) / 3600;
	release_quota(s, j);
	/* Every result gets a quality draw, in completion order. */
	const struct workload_spec *ws = &s->sc->workloads[j->workload];
	gsl_rng *q =
		arrivals_rng(&s->wl[j->workload].quality,
			     s->sc->seed ^ UINT64_C(0x7175616c697479) /* "quality" */, ws->name);
	bool passed = gsl_rng_uniform(q) < ws->pass_rate;
	j->verified = passed && j->end <= j->deadline;
	s->wl[j->workload].verified += j->verified;
	if (j->culled) {
		s->wl[j->workload].culled++;
		s->wl[j->workload].culled_gpu_s +=
			j->demand * sim_seconds(j->duration - (sim_time)j->kept - ws->cull_after);
	}
	s->running--;
	gauge(s, -1, j->workload, GAUGE_DEMAND, -j->demand);
	for (int32_t k = 0; k < j->pods; k++)
		gpus_changed(s, &pods_of(j)[k]);
	s->dirty = true;
	s->last_progress = s->engine.now;
	kept_progress(s, s->engine.now);
	if (j->terminating)
		sim_victim_gone(s, j);
	retire(s, id);
}

/* Counts a running job's eviction toward a stall (STALL_AFTER): one that kept
 * a new checkpoint made progress; one that lost its work is futile until the
 * next progress, and so is its next start. */
static void lost_work(struct sim *s, struct sim_job *j, bool kept_more)
{
	if (j->lost_epoch == s->epoch)
		s->futile_running--; /* it stopped running */
	if (kept_more) {
		kept_progress(s, s->engine.now);
		return;
	}
	s->lost++;
	j->lost_epoch = s->epoch;
}

/*
 * Stops a running job and puts it back in a queue.  Its pool's window closed
 * under window_policy preempt, or its spot node is going: its workload stays
 * admitted (the Job makes new pods, which wait for nodes).  Kueue preempted
 * it (readmit): its quota goes back and it waits to be admitted again.
 * Its work since the last checkpoint is lost (all of it without checkpoints);
 * start-up comes first, so work is what was done beyond it.
 */
void sim_evict(struct sim *s, uint32_t id, bool readmit)
{
	struct sim_job *j = &s->jobs[id];
	const struct workload_spec *ws = &s->sc->workloads[j->workload];
	sim_time now = s->engine.now;
	double left = fmax(0, j->remaining - (double)(now - j->last) * j->rate);
	sim_slowed(s, j, now);
	/* Past start-up the span runs work and checkpoint writes in turn: a
	 * checkpoint counts once its write is done. */
	double past = j->doomed ? 0 : fmax(0, j->span_work - left - (double)ws->startup);
	double every = (double)ws->checkpoint;
	double kept = j->kept;
	j->kept =
		every > 0 ? kept + floor(past / (every + (double)ws->checkpoint_write)) * every : 0;
	j->cost += j->cost_per_h * sim_seconds(now - j->span_start) / 3600;
	job_gauges(s, j, -1);
	placement_release(&s->placer, j->workload, id, pods_of(j));
	if (readmit)
		release_quota(s, j);
	j->status = JOB_PENDING;
	j->gen++; /* its finish event is stale */
	s->running--;
	s->wl[j->workload].preemptions++;
	j->preemptions++;
	s->freed++;
	gauge(s, -1, j->workload, GAUGE_PENDING, 1);
	for (int32_t k = 0; k < j->pods; k++)
		gpus_changed(s, &pods_of(j)[k]);
	sim_enqueue(s, id);
	s->last_progress = now;
	lost_work(s, j, j->kept > kept);
	if (j->terminating)
		sim_victim_gone(s, j);
}

/* Kueue evicts an admitted job to admit another: a running one stops; one
 * whose pods wait for nodes leaves kube-scheduler's queue.  Either waits to
 * be admitted again. */
void sim_kueue_preempt(struct sim *s, uint32_t id)
{
	struct sim_job *j = &s->jobs[id];
	if (j->status == JOB_RUNNING) {
		sim_evict(s, id, true);
		return;
	}
	assert(j->admitted && j->cls >= 0 && "candidates run or wait for nodes");
	size_t cls = (size_t)j->cls;
	sched_remove(&s->sched, cls, id);
	reasons_leave(&s->reasons, id, s->engine.now);
	autoscale_started(s->as, cls, j->pods); /* its pods leave the class as a start's do */
	release_quota(s, j);
	s->wl[j->workload].preemptions++;
	j->preemptions++;
	sim_enqueue(s, id);
}

/* Under window_policy preempt, a closing window stops what runs on its pool
 * (but not what finishes at this very instant). */
static void preempt_pool(struct sim *s, size_t p)
{
	for (size_t i = 0; i < s->n_jobs; i++) {
		struct sim_job *j = &s->jobs[i];
		if (j->status != JOB_RUNNING || j->finish_at == s->engine.now)
			continue;
		for (int32_t k = 0; k < j->pods; k++)
			if (s->cluster.nodes[pods_of(j)[k].node].pool == (int32_t)p) {
				sim_evict(s, (uint32_t)i, false);
				break;
			}
	}
}

/* Under window_policy preempt, workload w's own window closing stops its
 * running jobs, as its pool's would. */
static void preempt_workload(struct sim *s, size_t w)
{
	for (size_t i = 0; i < s->n_jobs; i++) {
		struct sim_job *j = &s->jobs[i];
		if (j->status == JOB_RUNNING && j->workload == (int32_t)w &&
		    j->finish_at != s->engine.now)
			sim_evict(s, (uint32_t)i, false);
	}
}

static void infer_heard(struct sim *s);

/* A node the autoscaler takes away (a spot notice, a scale-down): its batch
 * jobs are evicted, its replicas replaced (autoscale.h, infer.h). */
static void drain_node(void *ctx, int32_t node)
{
	struct sim *s = ctx;
	const struct node *nd = &s->cluster.nodes[node];
	for (int32_t i = 0; i < nd->gpus; i++) {
		struct gpu *g = &s->cluster.gpus[nd->first_gpu + i];
		while (g->n_tenants) {
			uint32_t id = GPU_TENANTS(g)[0].job;
			if (infer_is_tenant(id))
				infer_evict(s->infer, id);
			else
				sim_evict(s, id, false);
		}
	}
	infer_heard(s);
}

/* A batch job's pod in CA's removal simulation (autoscale.h).  A Job's pod
 * is replicated (simulator/drainability/rules/replicated: its controller
 * makes a new one), so it may move unless its annotation
 * cluster-autoscaler.kubernetes.io/safe-to-evict is "false"
 * (rules/notsafetoevict) or it mounts local storage (rules/localstorage,
 * --skip-nodes-with-local-storage); "true" overrides both
 * (rules/safetoevict). */
static struct pod_request batch_pod(void *ctx, uint32_t id, bool *movable)
{
	const struct sim *s = ctx;
	const struct sim_job *j = &s->jobs[id];
	const struct workload_spec *ws = &s->sc->workloads[j->workload];
	*movable = ws->safe_to_evict == SAFE_TO_EVICT_TRUE ||
		   (ws->safe_to_evict == SAFE_TO_EVICT_UNSET && !ws->local_storage);
	return (struct pod_request){j->workload, j->gpus, 0, false, j->variant};
}

static bool work_left(const struct sim *s);

static bool sim_work_left(void *ctx) { return work_left(ctx); }

static void on_retry(struct sim *s, uint32_t id)
{
	s->backing_off--;
	sim_enqueue(s, id);
}

/* Acts on what the inference module reports it did (infer.h): freed units
 * may let blocked work start; requests moving mean the run is not stalled. */
static void infer_heard(struct sim *s)
{
	sim_time at;
	unsigned news = infer_news(s->infer, &at);
	if (news & INFER_FREED) {
		s->dirty = true;
		s->freed++;
	}
	if (news & INFER_PROGRESS) {
		s->last_progress = at;
		kept_progress(s, at);
	}
}

/* --- events ---------------------------------------------------------------- */

static void on_arrival(struct sim *s, size_t w)
{
	struct new_job nj = {0}; /* zeroed: with -flto, GCC cannot tell arrivals_take fills it */
	const struct workload_spec *ws = &s->sc->workloads[w];
	int32_t copies = ws->gang ? 1 : ws->pods; /* pods without gang: a job each */
	while (arrivals_take(&s->arrivals, w, s->engine.now, &nj))
		for (int32_t k = 0; k < copies; k++)
			submit(s, w, &nj);
	sim_time next = s->arrivals.streams[w].next;
	if (next != SIM_NEVER)
		engine_push(&s->engine, next, EV_ARRIVAL, (uint32_t)w, 0);
	else
		s->arriving--;
}

static bool work_left(const struct sim *s)
{
	return s->arriving || s->running || s->sched.pending || s->admit.pending ||
	       s->backing_off || infer_work_left(s->infer);
}

/* Schedules pool p's next window change, at next (SIM_NEVER: none); p >=
 * n_pools is workload p - n_pools's own windows. */
static void push_window(struct sim *s, size_t p, sim_time next)
{
	/* Windows matter while there is work, and until the horizon for the
	 * bill (a powered pool is charged exactly its windows); without a
	 * horizon they would tick forever. */
	if (next != SIM_NEVER && (work_left(s) || s->sc->horizon))
		engine_push(&s->engine, next, EV_WINDOW, (uint32_t)p, 0);
}

/* Moves workload w's own window state to now and schedules its next change:
 * placement reads it beside its pools' (placement.c, pool_closed). */
static void on_workload_window(struct sim *s, size_t w)
{
	const struct workload_spec *ws = &s->sc->workloads[w];
	sim_time next;
	bool was_open = !s->cluster.wl_shut[w];
	bool open = cluster_windows_state(ws->windows, ws->n_windows, s->sc->start_epoch,
					  s->engine.now, &next);
	s->cluster.wl_shut[w] = !open;
	if (was_open && !open && !fit_window(s))
		preempt_workload(s, w);
	s->cluster.wl_closes_at[w] = open && next != SIM_NEVER ? next : 0;
	s->cluster.changes++;
	if (open) {
		s->dirty = true;
		s->freed++;
	}
	push_window(s, s->sc->n_pools + w, next);
}

/* Moves pool p's window state to now and schedules its next change. */
static void on_window(struct sim *s, size_t p)
{
	if (p >= s->sc->n_pools) {
		on_workload_window(s, p - s->sc->n_pools);
		return;
	}
	struct pool_state *ps = &s->cluster.pools[p];
	sim_time next;
	bool was_open = ps->open;
	ps->open = cluster_window_state(&s->sc->pools[p], s->sc->start_epoch, s->engine.now, &next);
	if (was_open && !ps->open && !fit_window(s))
		preempt_pool(s, p);
	/* powered: window - the nodes are up (and idle is charged) only while open. */
	double powered = s->collect.scopes[collect_scope_pool(s->sc, p)].value[GAUGE_POWERED];
	if (s->sc->pools[p].powered_in_windows && ps->open != (powered > 0)) {
		double sign = ps->open ? 1.0 : -1.0;
		gauge(s, (int32_t)p, -1, GAUGE_POWERED, sign * (double)ps->capacity);
		gauge(s, (int32_t)p, -1, GAUGE_POWERED_COMMITTED,
		      sign * fmin((double)ps->capacity, s->sc->pools[p].price.committed));
		/* idle_by: node keeps each node's hours (a scan at a window's
		 * open or close, only then) */
		for (int32_t k = 0; s->collect.nodes.n_nodes && k < ps->n_nodes; k++)
			if (ps->ready[k / 64] >> (k % 64) & 1)
				collect_node_powered(&s->collect, ps->first_node + k, sign,
						     s->engine.now);
	}
	ps->closes_at = ps->open ? next : SIM_NEVER;
	s->cluster.changes++; /* placement sees windows */
	if (ps->open) {
		s->dirty = true;
		s->freed++;
	}
	push_window(s, p, next);
}

/* --- results -------------------------------------------------------------- */

/* The node names, and the rows of the jobs not retired (output.jobs). */
/* --- the loop ------------------------------------------------------------- */

static void sim_init(struct sim *s, const struct scenario *sc, struct results *out)
{
	memset(s, 0, sizeof *s);
	s->sc = sc;
	engine_init(&s->engine);
	cluster_init(&s->cluster, sc);
	placement_init(&s->placer, &s->cluster);
	preempt_init(&s->preempt, &s->placer, (struct preempt_host){sim_preempt_victim, s});
	s->preempt.strict_size = sc->kube_minor >= 34; /* kubernetes PR #131345 */
	s->min_priority = SCENARIO_MAX_PRIORITY;
	for (size_t w = 0; w < sc->n_workloads; w++)
		if (sc->workloads[w].priority < s->min_priority)
			s->min_priority = sc->workloads[w].priority;
	reasons_init(&s->reasons, sc->n_workloads, s->cluster.n_ready,
		     (const char *const *)s->placer.reasons, s->placer.reason_kinds,
		     s->placer.n_reasons);
	bind_init(&s->bind, sc->n_workloads);
	s->reasons.bind = &s->bind;
	int32_t pods = 1;
	for (size_t w = 0; w < sc->n_workloads; w++)
		if (sc->workloads[w].gang && sc->workloads[w].pods > pods)
			pods = sc->workloads[w].pods;
	s->plan = gp_xcalloc((size_t)pods, sizeof *s->plan);
	s->best_plan = gp_xcalloc((size_t)pods, sizeof *s->best_plan);
	s->wl = gp_xcalloc(sc->n_workloads, sizeof *s->wl);
	s->waits_held.max = SAMPLES_EXACT_MAX;
	for (size_t w = 0; w < sc->n_workloads; w++)
		s->wl[w].first_submit = s->wl[w].last_end = SIM_NEVER;
	quota_init(&s->quota, sc);
	s->req = gp_xcalloc(s->quota.n_res + 1, sizeof *s->req);
	s->ask = gp_xcalloc(s->quota.n_names + 1, sizeof *s->ask);
	s->cand_ask = gp_xcalloc(s->quota.n_names + 1, sizeof *s->cand_ask);
	for (size_t w = 0; w < sc->n_workloads; w++) {
		/* Before placement a pod counts as one unit of the first pool that fits it. */
		s->wl[w].demand_unit = 1;
		for (size_t p = 0; p < sc->n_pools; p++)
			if (placement_equivalent(&s->placer, w, p, 1) > 0) {
				s->wl[w].demand_unit = placement_equivalent(&s->placer, w, p, 1);
				break;
			}
	}
	sched_init(&s->sched, sc->scheduler.order);
	sched_init(&s->admit, sc->scheduler.order);
	arrivals_init(&s->arrivals, sc);
	collect_init(&s->collect, sc, out);
	if (sc->cost.idle_by == IDLE_BY_NODE)
		collect_track_nodes(&s->collect, &s->cluster);
	s->strict_head = gp_xcalloc(sc->n_queues, sizeof *s->strict_head);
	int64_t expected = scenario_job_count(sc);
	s->out = out;
	if (expected > 0 && sc->output.jobs) /* one row per job, at its submission number */
		GP_GROW(out->jobs, out->cap_jobs, (size_t)expected);
	for (size_t w = 0; w < sc->n_workloads; w++) {
		sim_time next = s->arrivals.streams[w].next;
		if (next == SIM_NEVER)
			continue;
		engine_push(&s->engine, next < 0 ? 0 : next, EV_ARRIVAL, (uint32_t)w, 0);
		s->arriving++;
	}
	bool batch_work = work_left(s); /* on_window pushes the next changes only if so */
	for (size_t p = 0; p < sc->n_pools; p++) {
		s->has_windows |= sc->pools[p].n_windows > 0;
		on_window(s, p);
	}
	for (size_t w = 0; w < sc->n_workloads; w++) {
		if (!sc->workloads[w].n_windows)
			continue;
		s->has_windows = true;
		on_window(s, sc->n_pools + w);
	}
	struct infer_host host = {&s->engine, &s->cluster, &s->placer, &s->collect};
	s->infer = infer_create(sc, &host);
	infer_start(s->infer);
	infer_heard(s);
	/* Inference services are work too: a replica that could not be placed
	 * while its pool's window was shut is placed when it opens. */
	for (size_t p = 0; p < sc->n_pools && !batch_work && s->has_windows; p++) {
		sim_time next;
		cluster_window_state(&sc->pools[p], sc->start_epoch, s->engine.now, &next);
		push_window(s, p, next);
	}
	struct autoscale_host ah = {&s->engine,    &s->cluster, &s->placer, &s->collect, &s->sched,
				    &s->reasons,   s->infer,    &s->freed,  &s->dirty,   s,
				    sim_work_left, drain_node,  batch_pod};
	s->as = autoscale_create(sc, &ah);
	autoscale_start(s->as);
}

static void sim_destroy(struct sim *s)
{
	infer_destroy(s->infer);
	autoscale_destroy(s->as);
	engine_free(&s->engine);
	cluster_free(&s->cluster);
	sched_free(&s->sched);
	sched_free(&s->admit);
	arrivals_free(&s->arrivals);
	collect_free(&s->collect);
	for (size_t i = 0; i < s->n_jobs; i++)
		free(s->jobs[i].more);
	free(s->jobs);
	free(s->node_of);
	free(s->admit_blocked);
	free(s->behind);
	free(s->strict_head);
	preempt_free(&s->preempt);
	placement_free(&s->placer);
	reasons_free(&s->reasons);
	bind_free(&s->bind);
	free(s->plan);
	free(s->best_plan);
	free(s->failed_at);
	free(s->class_why);
	for (size_t w = 0; w < s->sc->n_workloads; w++) {
		if (s->wl[w].quality)
			gsl_rng_free(s->wl[w].quality);
		samples_free(&s->wl[w].waits);
	}
	free(s->free_ids);
	free(s->wl);
	quota_free(&s->quota);
	free(s->req);
	free(s->ask);
	free(s->cand_ask);
	free(s->cands);
	free(s->holders);
	free(s->cand_req);
	free(s->victims);
	free(s->best_victims);
}

struct sim *sim_create(const struct scenario *sc, struct results *out)
{
	struct sim *s = gp_xmalloc(sizeof *s);
	sim_init(s, sc, out);
	return s;
}

/* Asks for the record of the job the next event finishes, if it is one:
 * cold after the hours the job ran, it would be the first miss of that
 * event.  The engine's peek is right nearly always (99.7% of the finishes
 * of tests/bench/batch-10m.yaml). */
static void prefetch_next(const struct sim *s)
{
	const struct event *next = engine_peek(&s->engine);
	if (!next || next->type != EV_FINISH)
		return;
	const char *job = (const char *)&s->jobs[next->id];
	for (size_t k = 0; k < sizeof(struct sim_job); k += 64)
		__builtin_prefetch(job + k);
	__builtin_prefetch(job + sizeof(struct sim_job) - 1);
	if (s->node_of[next->id] >= 0) /* else a stale event of a reused slot */
		cluster_prefetch_node(&s->cluster, s->node_of[next->id]);
}

/* Whether work is left that will never get done (STALL_AFTER): nothing more
 * arrives or waits out a backoff, and nothing ran for STALL_AFTER, or all that
 * ran for STALL_AFTER was evicted again and again without keeping any work. */
static bool stalled(const struct sim *s)
{
	if (s->arriving || s->backing_off || (s->sc->horizon && !work_left(s)))
		return false; /* nothing left to stall: windows tick to the horizon */
	sim_time now = s->engine.now;
	if (!s->running) {
		/* a node being provisioned is progress: the pods wait for it,
		 * however long provision_time is (8 days tripped this); not one
		 * that times out (max_node_provision_time) and is tried again
		 * forever, which ran to SCENARIO_MAX_RUN */
		sim_time last = s->last_progress > s->last_provisioning ? s->last_progress
									: s->last_provisioning;
		return !autoscale_registering(s->as) && now - last > STALL_AFTER;
	}
	return s->lost >= FUTILE_EVICTIONS && s->futile_running == s->running &&
	       now - s->last_kept > STALL_AFTER;
}

void sim_advance(struct sim *s, struct results *out)
{
	const struct scenario *sc = s->sc;
	sim_time stop = sc->horizon ? sc->horizon : SCENARIO_MAX_RUN;
	struct event ev;
	while (engine_next_time(&s->engine) <= stop && engine_pop(&s->engine, &ev)) {
		prefetch_next(s);
		switch ((enum event_type)ev.type) {
		case EV_ARRIVAL: on_arrival(s, ev.id); break;
		case EV_FINISH: finish(s, ev.id, ev.gen); break;
		case EV_WINDOW: /* past the last of the work the run has ended (without a
				   horizon): a powered pool's gauges must not roll the
				   time series on */
			if (work_left(s) || sc->horizon)
				on_window(s, ev.id);
			break;
		case EV_RETRY: on_retry(s, ev.id); break;
		case EV_KILL: sim_on_kill(s, ev.id); break;
		default:
			if (autoscale_owns_event(ev.type)) {
				autoscale_event(s->as, &ev);
				break;
			}
			infer_event(s->infer, &ev);
			infer_heard(s);
			break;
		}
		if (engine_next_time(&s->engine) == s->engine.now)
			continue; /* more happens at this instant */
		if (s->dirty && infer_has_pending(s->infer)) {
			infer_place_pending(s->infer); /* replicas go before batch work */
			infer_heard(s);
		}
		if (s->dirty)
			sim_schedule(s);
		if (autoscale_settle(s->as)) { /* its events go into the pods' messages */
			if (infer_has_pending(s->infer)) { /* replicas it moved */
				infer_place_pending(s->infer);
				infer_heard(s);
			}
			sim_schedule(s);
		}
		if (engine_next_time(&s->engine) != s->engine.now)
			collect_settle(&s->collect);
		if (autoscale_registering(s->as))
			s->last_provisioning = s->engine.now;
		if (stalled(s))
			break;
		if (s->collect.overflow || s->arrivals.failed)
			break; /* run_simulate refuses the run */
	}
	/* The run ends at the horizon, or with the last arrival, start or
	 * completion: window events after that are not part of the work. */
	bool at_limit = !sc->horizon && work_left(s) && engine_next_time(&s->engine) > stop &&
			engine_next_time(&s->engine) != SIM_NEVER;
	sim_time end = sc->horizon ? sc->horizon : at_limit ? stop : s->last_progress;
	sim_time settled = autoscale_settled_at(s->as);
	if (!sc->horizon && !work_left(s) && settled != SIM_NEVER && settled > end)
		end = settled; /* nodes billed until the autoscaler removed them */
	collect_finish(&s->collect, end);
	reasons_finish(&s->reasons, end);
	out->status = !work_left(s) ? "ok" : sc->horizon || at_limit ? "horizon" : "stalled";
	out->sim_end = end;
	out->events = s->engine.processed;
	for (size_t w = 0; w < sc->n_workloads; w++) {
		s->wl[w].oom_kills += infer_oom_kills(s->infer, w);
		s->wl[w].verified += infer_verified(s->infer, w);
	}
}

const struct sim_job *sim_jobs(const struct sim *s, size_t *n)
{
	*n = s->n_jobs;
	return s->jobs;
}

const struct sim_workload *sim_workloads(const struct sim *s) { return s->wl; }

const struct collect *sim_collect(const struct sim *s) { return &s->collect; }

const struct placer *sim_placer(const struct sim *s) { return &s->placer; }

int sim_failed(const struct sim *s, struct gp_err *err)
{
	if (s->arrivals.failed)
		*err = s->arrivals.err;
	return s->arrivals.failed;
}

void sim_finish(struct sim *s, struct results *out)
{
	sim_write_rows(s, out);
	infer_results(s->infer, out);
	autoscale_results(s->as, out, out->sim_end);
	reasons_write(&s->reasons, s->sc, out);
	bind_write(&s->bind, s->sc, out);
	sim_destroy(s);
	free(s);
}
