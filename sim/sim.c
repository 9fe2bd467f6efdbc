/*
 * sim.c - the run loop and its clock: it pops events in time order and hands
 * each to the client that registered its type (engine.h's table, filled as
 * the clients start: a job's arrival, finish and restart in sim_jobs.c, the
 * windows in sim_windows.c, preemption's kills in sim_preempt.c, inference
 * in infer.c, the Cluster Autoscaler in autoscale.c), so it knows none of
 * them.  After all the events of one instant are handled, one scheduling
 * pass starts what can start (so that simultaneous arrivals are ordered by
 * the scheduler's order, not by chance, and so that jobs finishing at 13:00
 * free their GPUs before the 13:00 pass): inference replicas pending for
 * room first, then Kueue's admission and kube-scheduler's placement
 * (sim_schedule.c, sim_admit.c), then the autoscaler's scan, and the
 * collector's gauges are settled.  A pass runs only when something changed
 * that could let work start: an arrival, a completion, a window opening.  A
 * head that does not fit gives its class Kueue's or kube-scheduler's reason
 * (reasons.h), and the class is not asked again until quota or capacity is
 * freed or a job joins it; every pending job carries a reason from the
 * instant it joins.  The loop ends at the horizon, when the work is done,
 * or when work is left that nothing will get done (a stall).
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
#include "gpuplan/quota.h"
#include "gpuplan/reasons.h"
#include "gpuplan/sched.h"

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

/* --- what the loop hears from its clients, and lends them --------------- */

bool sim_work_left(const struct sim *s)
{
	return s->arriving || s->running || s->sched.pending || s->admit.pending ||
	       s->backing_off || infer_work_left(s->infer);
}

static bool as_work_left(void *ctx) { return sim_work_left(ctx); }

/* Acts on what the inference module reports it did (infer.h): freed units
 * may let blocked work start; requests moving mean the run is not stalled. */
static void infer_heard(struct sim *s)
{
	sim_time at;
	unsigned news = infer_news(s->infer, &at);
	if (news & (INFER_FREED | INFER_STOP)) { /* rare: one test for both */
		if (news & INFER_FREED) {
			s->dirty = true;
			s->freed++;
		}
		if (news & INFER_STOP) { /* the loop's condition ends it */
			s->stopping = true;
			s->until = -1;
		}
	}
	if (news & INFER_PROGRESS) {
		s->last_progress = at;
		sim_kept_progress(s, at);
	}
}

bool sim_set_stop(struct sim *s, const struct infer_stop *stop)
{
	return infer_set_stop(s->infer, stop);
}

void sim_set_cancel(struct sim *s, const atomic_bool *cancel) { s->cancel = cancel; }

static void heard(void *ctx) { infer_heard(ctx); }

/* A node the autoscaler takes away (a spot notice, a scale-down): its batch
 * jobs are evicted, its replicas replaced (autoscale.h, infer.h). */
static void drain_node(void *ctx, int32_t node, bool scale_down)
{
	struct sim *s = ctx;
	const struct node *nd = &s->cluster.nodes[node];
	for (int32_t i = 0; i < nd->gpus; i++) {
		struct gpu *g = &s->cluster.gpus[nd->first_gpu + i];
		while (g->n_tenants) {
			uint32_t id = GPU_TENANTS(g)[0].job;
			if (infer_is_tenant(id))
				infer_evict(s->infer, id);
			else {
				s->wl[s->jobs[id].workload].scaled_down += scale_down;
				sim_evict(s, id, false);
			}
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
	for (size_t w = 0; w < sc->n_workloads; w++) {
		s->wl[w].first_submit = s->wl[w].last_end = SIM_NEVER;
		if (sc->workloads[w].count > 0) /* each job's queue time, at most */
			samples_reserve(&s->wl[w].waits, &s->waits_held,
					(size_t)sc->workloads[w].count);
	}
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
	/* The clients register their event types and push their first events,
	 * in this order (simultaneous events pop in the order pushed). */
	sim_preempt_start(s);
	sim_jobs_start(s);
	bool batch_work = sim_work_left(s); /* windows push their next changes only if so */
	sim_windows_start(s);
	struct infer_host host = {&s->engine,  &s->cluster, &s->placer, &s->collect,
				  &s->reasons, heard,       s};
	s->infer = infer_create(sc, &host);
	infer_start(s->infer);
	infer_heard(s);
	/* Inference services are work too: a replica that could not be placed
	 * while its pool's window was shut is placed when it opens. */
	if (!batch_work)
		sim_windows_serve(s);
	struct autoscale_host ah = {&s->engine,   &s->cluster, &s->placer, &s->collect, &s->sched,
				    &s->reasons,  s->infer,    &s->freed,  &s->dirty,   s,
				    as_work_left, drain_node,  batch_pod};
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
	free(s->held);
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
	free(s->class_post);
	free(s->post_why);
	free(s->planned_at);
	free(s->class_plan);
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
	out->currency = scenario_money_unit(sc); /* of its money metrics */
	sim_init(s, sc, out);
	return s;
}

/* Whether work is left that will never get done (STALL_AFTER): nothing more
 * arrives or waits out a backoff, and nothing ran for STALL_AFTER, or all that
 * ran for STALL_AFTER was evicted again and again without keeping any work. */
static bool stalled(const struct sim *s)
{
	if (s->arriving || s->backing_off || (s->sc->horizon && !sim_work_left(s)))
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
	/* s->until, not stop: the stop rule sets it to -1 (infer_heard), and
	 * the loop ends without a test of its own per event */
	s->until = stop;
	while (engine_next_time(&s->engine) <= s->until && engine_pop(&s->engine, &ev)) {
		engine_warm_next(&s->engine);
		engine_dispatch(&s->engine, &ev);
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
		if (s->cancel && atomic_load_explicit(s->cancel, memory_order_relaxed)) {
			s->stopping = true;
			break;
		}
	}
	/* The run ends where the stop rule fired, at the horizon, or with the
	 * last arrival, start or completion: window events after that are not
	 * part of the work. */
	bool at_limit = !sc->horizon && sim_work_left(s) && engine_next_time(&s->engine) > stop &&
			engine_next_time(&s->engine) != SIM_NEVER;
	sim_time end = s->stopping   ? s->engine.now
		       : sc->horizon ? sc->horizon
		       : at_limit    ? stop
				     : s->last_progress;
	sim_time settled = autoscale_settled_at(s->as);
	if (!sc->horizon && !sim_work_left(s) && settled != SIM_NEVER && settled > end)
		end = settled; /* nodes billed until the autoscaler removed them */
	collect_finish(&s->collect, end);
	reasons_finish(&s->reasons, end);
	out->status = s->stopping               ? "stopped"
		      : !sim_work_left(s)       ? "ok"
		      : sc->horizon || at_limit ? "horizon"
						: "stalled";
	out->sim_end = end;
	out->events = s->engine.processed;
	for (size_t w = 0; w < sc->n_workloads; w++) {
		s->wl[w].oom_kills += infer_oom_kills(s->infer, w);
		s->wl[w].verified += infer_verified(s->infer, w);
		samples_sort(&s->wl[w].waits); /* the figures read them in order */
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
		gp_err_copy(err, &s->arrivals.err);
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
