/*
 * sim_jobs.c - a batch job's life in a run: it arrives (a workload's next
 * arrivals, EV_ARRIVAL) and waits in its stage's queue (sim_admit.c); it
 * starts on the nodes placement found, runs its start-up and its work at the
 * pace its GPUs' sharing gives it (sim_gauges.c), and finishes (EV_FINISH);
 * or it is evicted (a window, a spot notice, a preemption) with the work its
 * checkpoints kept, or OOM-killed when its memory overflows a shared GPU and
 * restarted after a backoff (EV_RETRY); at its end its counts go to its
 * workload and its slot to the next arrival.  Evictions that lose all their
 * work are counted here for the loop's test of a stall (sim.c).
 */
#include "sim_int.h"

#include "gpuplan/arrivals.h"
#include "gpuplan/autoscale.h"
#include "gpuplan/cluster.h"
#include "gpuplan/collect.h"
#include "gpuplan/engine.h"
#include "gpuplan/placement.h"
#include "gpuplan/quota.h"
#include "gpuplan/reasons.h"
#include "gpuplan/sched.h"

#include <math.h>
#include <stdlib.h>

/* GPUs' worth the job's pods hold. */
static double job_equivalent(const struct sim_job *j)
{
	double eq = 0;
	for (int32_t k = 0; k < j->pods; k++)
		eq += pods_of((struct sim_job *)j)[k].equivalent;
	return eq;
}

/* The checkpoints written over `work` µs of work from the last one: one at
 * every multiple of the interval, none at the very end. */
static double checkpoint_writes(const struct workload_spec *ws, double work)
{
	double every = (double)ws->checkpoint;
	return every > 0 && work > 0 ? ceil(work / every) - 1 : 0;
}

/* What a job that starts does: whether it is culled, its time to run (work,
 * start-up, checkpoints) and its busy fraction over that time. */
struct work_plan {
	bool culled;
	double total;
	double busy;
};

/*
 * Start-up (image pull, model load) holds the GPUs without using them.  It is
 * folded into the job's busy fraction: with D of work at f and S of start-up,
 * the job is busy f*D/(D+S) of its D+S, which gives the same finish time as
 * start-up followed by work under any constant slowdown.
 */
static struct work_plan plan_work(const struct sim *s, const struct sim_job *j, bool doomed)
{
	const struct workload_spec *ws = &s->sc->workloads[j->workload];
	struct work_plan wp = {0};
	double work = (double)j->duration - j->kept;
	/* idle_cull: a pod idle below the threshold is culled cull_after past
	 * its start-up (JupyterHub's culler, Kubeflow's culling; scenario.md) */
	wp.culled = ws->cull_after > 0 && ws->gpu_busy < ws->cull_threshold &&
		    work > (double)ws->cull_after && !doomed;
	if (wp.culled)
		work = (double)ws->cull_after;
	wp.total = work + (double)ws->startup;
	if (doomed) /* its pod dies with OOM as its start-up ends: no work */
		work = 0, wp.total = (double)ws->startup;
	else
		wp.total += checkpoint_writes(ws, work) * (double)ws->checkpoint_write;
	wp.busy = wp.total > 0 ? ws->gpu_busy * work / wp.total : ws->gpu_busy;
	return wp;
}

/* The job's work as it starts, planned before its pods are placed as if no
 * OOM were coming (its tenants are given its busy fraction as they are
 * placed: cluster.busy); planned again for a job doomed to one, whose
 * tenants then get the fraction where they are. */
static void begin_work(struct sim *s, struct sim_job *j, struct work_plan wp)
{
	if (j->doomed)
		wp = plan_work(s, j, true);
	j->culled = wp.culled;
	j->remaining = wp.total;
	j->span_work = wp.total;
	j->busy = wp.busy;
	if (!j->doomed) /* its tenants got wp.busy as they were placed */
		return;
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

/* Something that lasts happened at time at: a new epoch starts, in which no
 * eviction has lost work yet. */
void sim_kept_progress(struct sim *s, sim_time at)
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
		GP_GROW(s->held, s->cap_held, s->n_jobs + 1);
		id = (uint32_t)s->n_jobs++;
	}
	s->held[id].node = -1;
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
	sim_queue_gauges(s, (int32_t)w, j->demand, 1);
	sim_enqueue(s, id);
	s->last_progress = now;
	sim_kept_progress(s, now);
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
		sim_release_quota(s, j);
		sim_gauge(s, -1, j->workload, GAUGE_PENDING, -1);
		sim_gauge(s, -1, j->workload, GAUGE_DEMAND, -j->demand);
		retire(s, id);
		sim_kept_progress(s, s->engine.now); /* a failed job is an end */
		return;
	}
	/* The Job makes a new pod; its workload stays admitted meanwhile. */
	sim_time backoff = sim_backoff(ws->restart_backoff, j->restarts++);
	s->backing_off++;
	engine_push(&s->engine, s->engine.now + backoff, s->ev_retry, id, 0);
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
	struct pod_request pod = job_pod(s, j);
	if (j->pods > 1 && !j->more)
		j->more = gp_xcalloc((size_t)j->pods, sizeof *j->more);
	struct work_plan wp = plan_work(s, j, false);
	s->cluster.busy = wp.busy;
	placement_take(&s->placer, &pod, nodes, id, pods_of(j));
	s->cluster.busy = -1;
	if (j->more)
		j->grant = j->more[0];
	s->held[id] = (struct held_lines){j->grant.node, j->grant.first_gpu, j->grant.gpu_mask};
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
	begin_work(s, j, wp);
	j->rate = 0; /* retime() sets it and schedules the finish */
	j->status = JOB_RUNNING;
	s->running++;
	/* Demand follows the pod to where it landed (a replica is 1/R of a GPU). */
	const double queue[2] = {job_equivalent(j) - j->demand, -1};
	j->demand = job_equivalent(j);
	j->cost_per_h = sim_job_gauges(s, j, +1, queue);
	for (int32_t k = 0; k < j->pods; k++)
		sim_gpus_changed(s, &pods_of(j)[k]);
	if (!j->grant.gpu_mask)
		sim_retime(s, id); /* a CPU-only pod (openb traces): no GPU to retime it */
}

/* A pod whose memory overflows its GPU starts up (its image, its model
 * load) and dies with OOM as the start-up ends: the attempt holds its GPUs,
 * and is billed to its workload, for the start-up (docs/cost.md). */
static void oom_after_startup(struct sim *s, uint32_t id)
{
	struct sim_job *j = &s->jobs[id];
	sim_time now = s->engine.now;
	j->cost += j->cost_per_h * sim_seconds(now - j->span_start) / 3600;
	sim_job_gauges(s, j, -1, NULL);
	placement_release(&s->placer, j->workload, id, pods_of(j));
	j->status = JOB_PENDING;
	j->gen++;
	j->doomed = false;
	s->running--;
	if (j->lost_epoch == s->epoch)
		s->futile_running--; /* it stopped running */
	sim_gauge(s, -1, j->workload, GAUGE_PENDING, 1);
	for (int32_t k = 0; k < j->pods; k++)
		sim_gpus_changed(s, &pods_of(j)[k]);
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
	/* the first pod's lines were asked for an event ahead (finish_ahead) */
	for (int32_t k = 1; k < j->pods; k++)
		cluster_prefetch(&s->cluster, &pods_of(j)[k]);
	sim_slowed(s, j, s->engine.now);
	/* Its demand leaves the queue's gauges with it (in the same touches). */
	sim_job_gauges(s, j, -1, (const double[]){-j->demand, 0});
	placement_release(&s->placer, j->workload, id, pods_of(j));
	s->freed++;
	j->end = s->engine.now;
	j->status = JOB_COMPLETED;
	j->cost += j->cost_per_h * sim_seconds(j->end - j->span_start) / 3600;
	sim_release_quota(s, j);
	/* Every result gets a quality draw, in completion order.  At a pass
	 * rate of 1 (the default) every draw passes (gsl_rng_uniform < 1), and
	 * the stream is the workload's own, drawn nowhere else: it is not drawn. */
	const struct workload_spec *ws = &s->sc->workloads[j->workload];
	bool passed = ws->pass_rate >= 1;
	if (!passed) {
		gsl_rng *q = arrivals_rng(&s->wl[j->workload].quality,
					  s->sc->seed ^ UINT64_C(0x7175616c697479) /* "quality" */,
					  ws->name);
		passed = gsl_rng_uniform(q) < ws->pass_rate;
	}
	j->verified = passed && j->end <= j->deadline;
	s->wl[j->workload].verified += j->verified;
	if (j->culled) {
		s->wl[j->workload].culled++;
		s->wl[j->workload].culled_gpu_s +=
			j->demand * sim_seconds(j->duration - (sim_time)j->kept - ws->cull_after);
	}
	s->running--;
	for (int32_t k = 0; k < j->pods; k++)
		sim_gpus_changed(s, &pods_of(j)[k]);
	s->dirty = true;
	s->last_progress = s->engine.now;
	sim_kept_progress(s, s->engine.now);
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
		sim_kept_progress(s, s->engine.now);
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
	sim_job_gauges(s, j, -1, NULL);
	placement_release(&s->placer, j->workload, id, pods_of(j));
	if (readmit)
		sim_release_quota(s, j);
	j->status = JOB_PENDING;
	j->gen++; /* its finish event is stale */
	s->running--;
	s->wl[j->workload].preemptions++;
	j->preemptions++;
	s->freed++;
	sim_gauge(s, -1, j->workload, GAUGE_PENDING, 1);
	for (int32_t k = 0; k < j->pods; k++)
		sim_gpus_changed(s, &pods_of(j)[k]);
	sim_enqueue(s, id);
	s->last_progress = now;
	lost_work(s, j, j->kept > kept);
	if (j->terminating)
		sim_victim_gone(s, j);
}

static void on_retry(struct sim *s, uint32_t id)
{
	s->backing_off--;
	sim_enqueue(s, id);
}

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
		engine_push(&s->engine, next, s->ev_arrival, (uint32_t)w, 0);
	else
		s->arriving--;
}

/* --- the jobs' events (engine.h) ---------------------------------------- */

static void arrival_event(void *ctx, const struct event *ev) { on_arrival(ctx, ev->id); }

static void finish_event(void *ctx, const struct event *ev) { finish(ctx, ev->id, ev->gen); }

static void retry_event(void *ctx, const struct event *ev) { on_retry(ctx, ev->id); }

/* Asks for the record of the job the next event finishes (engine_warm_next):
 * cold after the hours the job ran, it would be the first miss of that
 * event.  The engine's peek is right nearly always (99.7% of the finishes
 * of tests/bench/batch-10m.yaml). */
static void finish_ahead(void *ctx, const struct event *next)
{
	const struct sim *s = ctx;
	const char *job = (const char *)&s->jobs[next->id];
	for (size_t k = 0; k < sizeof(struct sim_job); k += 64)
		__builtin_prefetch(job + k);
	__builtin_prefetch(job + sizeof(struct sim_job) - 1);
	const struct held_lines *h = &s->held[next->id];
	if (h->node < 0)
		return; /* a stale event of a reused slot */
	__builtin_prefetch(&s->cluster.nodes[h->node], 1);
	for (uint64_t m = h->gpu_mask; m; m &= m - 1) /* the GPUs its release reads */
		__builtin_prefetch(&s->cluster.gpus[h->first_gpu + __builtin_ctzll(m)], 1);
}

/* Asks for the held lines of the job the event after the next finishes:
 * finish_ahead reads them to know which lines to ask for. */
static void finish_far(void *ctx, const struct event *after)
{
	const struct sim *s = ctx;
	__builtin_prefetch(&s->held[after->id]);
}

void sim_jobs_start(struct sim *s)
{
	s->ev_arrival = engine_register(&s->engine, 1, arrival_event, NULL, s);
	s->ev_finish = engine_register(&s->engine, 1, finish_event, finish_ahead, s);
	engine_register_far(&s->engine, s->ev_finish, finish_far);
	s->ev_retry = engine_register(&s->engine, 1, retry_event, NULL, s);
	for (size_t w = 0; w < s->sc->n_workloads; w++) {
		sim_time next = s->arrivals.streams[w].next;
		if (next == SIM_NEVER)
			continue;
		engine_push(&s->engine, next < 0 ? 0 : next, s->ev_arrival, (uint32_t)w, 0);
		s->arriving++;
	}
}
