/*
 * sim_windows.c - the windows of a run (scenario.md, "windows"): a pool's
 * (its nodes schedulable, and powered when powered_in_windows, only while
 * one is open) and a workload's own (its pods placed only then).  Each
 * opens or closes at an EV_WINDOW event, which moves its state, lets pending
 * work try again when it opens, stops what runs under window_policy preempt
 * when it closes, moves the powered gauges, and schedules the next change.
 */
#include "sim_int.h"

#include "gpuplan/cluster.h"
#include "gpuplan/collect.h"
#include "gpuplan/engine.h"

#include <math.h>

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

/* Schedules pool p's next window change, at next (SIM_NEVER: none); p >=
 * n_pools is workload p - n_pools's own windows. */
static void push_window(struct sim *s, size_t p, sim_time next)
{
	/* Windows matter while there is work, and until the horizon for the
	 * bill (a powered pool is charged exactly its windows); without a
	 * horizon they would tick forever. */
	if (next != SIM_NEVER && (sim_work_left(s) || s->sc->horizon))
		engine_push(&s->engine, next, s->ev_window, (uint32_t)p, 0);
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
	cluster_changed(&s->cluster);
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
		sim_gauge(s, (int32_t)p, -1, GAUGE_POWERED, sign * (double)ps->capacity);
		sim_gauge(s, (int32_t)p, -1, GAUGE_POWERED_COMMITTED,
			  sign * fmin((double)ps->capacity, s->sc->pools[p].price.committed));
		/* idle_by: node keeps each node's hours (a scan at a window's
		 * open or close, only then) */
		for (int32_t k = 0; s->collect.nodes.n_nodes && k < ps->n_nodes; k++)
			if (ps->ready[k / 64] >> (k % 64) & 1)
				collect_node_powered(&s->collect, ps->first_node + k, sign,
						     s->engine.now);
	}
	ps->closes_at = ps->open ? next : SIM_NEVER;
	cluster_changed(&s->cluster); /* placement sees windows */
	if (ps->open) {
		s->dirty = true;
		s->freed++;
	}
	push_window(s, p, next);
}

static void window_event(void *ctx, const struct event *ev)
{
	struct sim *s = ctx;
	/* Past the last of the work the run has ended (without a horizon): a
	 * powered pool's gauges must not roll the time series on. */
	if (sim_work_left(s) || s->sc->horizon)
		on_window(s, ev->id);
}

void sim_windows_start(struct sim *s)
{
	const struct scenario *sc = s->sc;
	s->ev_window = engine_register(&s->engine, 1, window_event, NULL, s);
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
	s->preempt.windows = s->has_windows;
}

void sim_windows_serve(struct sim *s)
{
	const struct scenario *sc = s->sc;
	for (size_t p = 0; p < sc->n_pools && s->has_windows; p++) {
		sim_time next;
		cluster_window_state(&sc->pools[p], sc->start_epoch, s->engine.now, &next);
		push_window(s, p, next);
	}
}
