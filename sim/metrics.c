/*
 * metrics.c - reduces a finished run to its metrics (metrics.h).
 */
#include "gpuplan/metrics.h"

#include "gpuplan/cost.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static void add_queue_metrics(struct results *r, const char *scope, const struct samples_stats *st)
{
	results_add_metric(r, scope, METRIC_QUEUE_TIME_MEAN_S, st->mean);
	results_add_metric(r, scope, METRIC_QUEUE_TIME_P50_S, st->p50);
	results_add_metric(r, scope, METRIC_QUEUE_TIME_P95_S, st->p95);
	results_add_metric(r, scope, METRIC_QUEUE_TIME_P99_S, st->p99);
	results_add_metric(r, scope, METRIC_QUEUE_TIME_MAX_S, st->max);
}

/* The workload whose jobs are the only ones that started, or -1: then scope
 * all has its very waits, and its queue figures are computed once. */
static int32_t sole_waiting_workload(const struct sim *s, const struct scenario *sc)
{
	int32_t sole = -1;
	for (size_t w = 0; w < sc->n_workloads; w++)
		if (samples_count(&sim_workloads(s)[w].waits)) {
			if (sole >= 0)
				return -1;
			sole = (int32_t)w;
		}
	return sole;
}

/* The metrics only some runs have: idle culling's where a workload asks for
 * idle_cull, scale-down's where a pool autoscales, priority preemption's
 * where a workload may evict one of lower priority. */
struct optional {
	bool culls, scales_down, preempts;
};

static struct optional optional_metrics(const struct scenario *sc)
{
	struct optional o = {0};
	int32_t lowest = SCENARIO_MAX_PRIORITY;
	for (size_t k = 0; k < sc->n_workloads; k++) {
		o.culls |= sc->workloads[k].cull_after > 0;
		lowest = sc->workloads[k].priority < lowest ? sc->workloads[k].priority : lowest;
	}
	for (size_t k = 0; k < sc->n_workloads; k++)
		o.preempts |= scenario_may_preempt(sc, k) && sc->workloads[k].priority > lowest;
	for (size_t p = 0; p < sc->n_pools; p++)
		o.scales_down |= sc->pools[p].autoscale.on;
	return o;
}

/* Job counts, deadlines, queue times and makespan of the jobs of workload w
 * (w < 0: all jobs), from the counts the run kept per workload (sim.h):
 * finished jobs may be gone.  The queue times are the workloads' samples
 * (samples.h), so the figures do not depend on the jobs being kept.  Queue
 * figures already known (known, not NULL) are not computed again.  Returns
 * the queue figures. */
static struct samples_stats add_job_metrics(const struct sim *s, const struct scenario *sc,
					    struct results *r, const char *scope, int32_t w,
					    const struct samples_stats *known,
					    const int64_t *censored, struct optional opt)
{
	const struct sim_workload *wl = sim_workloads(s);
	/* the workloads summed: all, or w alone (a scan of all per workload
	 * was quadratic: 40,000 imported workloads) */
	size_t lo = w < 0 ? 0 : (size_t)w, hi = w < 0 ? sc->n_workloads : (size_t)w + 1;
	const struct samples **waits = gp_xcalloc(hi - lo + 1, sizeof *waits);
	size_t n = 0;
	int64_t submitted = 0, completed = 0, failed = 0, met = 0, judged = 0;
	/* deadline_met_pct in scope all: over the workloads with a deadline,
	 * where there is one (jobs without one count as met when they end) */
	bool any_deadline = false;
	for (size_t k = lo; w < 0 && k < hi; k++)
		any_deadline |= scenario_has_deadlines(&sc->workloads[k]);
	sim_time first = SIM_NEVER, last = SIM_NEVER;
	for (size_t k = lo; k < hi; k++) {
		const struct sim_workload *x = &wl[k];
		submitted += x->submitted;
		completed += x->completed;
		failed += x->failed;
		if (!any_deadline || scenario_has_deadlines(&sc->workloads[k])) {
			met += x->met;
			judged += x->submitted - censored[k];
		}
		if (x->first_submit != SIM_NEVER && (first == SIM_NEVER || x->first_submit < first))
			first = x->first_submit;
		if (x->last_end != SIM_NEVER && (last == SIM_NEVER || x->last_end > last))
			last = x->last_end;
		waits[n++] = &x->waits;
	}
	struct samples_stats st = known ? *known : samples_stats(waits, n);
	free(waits);
	add_queue_metrics(r, scope, &st);
	results_add_metric(r, scope, METRIC_JOBS_SUBMITTED, (double)submitted);
	results_add_metric(r, scope, METRIC_JOBS_COMPLETED, (double)completed);
	results_add_metric(r, scope, METRIC_JOBS_FAILED, (double)failed);
	results_add_metric(r, scope, METRIC_JOBS_UNFINISHED,
			   (double)(submitted - completed - failed));
	results_add_metric(r, scope, METRIC_DEADLINE_MET_PCT,
			   judged > 0 ? 100.0 * (double)met / (double)judged : NAN);
	results_add_metric(r, scope, METRIC_MAKESPAN_S,
			   last != SIM_NEVER ? sim_seconds(last - first) : NAN);
	int64_t oom = 0;
	for (size_t k = lo; k < hi; k++)
		oom += wl[k].oom_kills;
	results_add_metric(r, scope, METRIC_OOM_KILLS, (double)oom);
	int64_t preempted = 0;
	for (size_t k = lo; k < hi; k++)
		preempted += wl[k].preemptions;
	results_add_metric(r, scope, METRIC_JOBS_PREEMPTED, (double)preempted);
	int64_t scaled = 0, by_priority = 0;
	for (size_t k = lo; k < hi; k++) {
		scaled += wl[k].scaled_down;
		by_priority += wl[k].priority_preempted;
	}
	if (opt.scales_down)
		results_add_metric(r, scope, METRIC_JOBS_SCALED_DOWN, (double)scaled);
	if (opt.preempts)
		results_add_metric(r, scope, METRIC_JOBS_PRIORITY_PREEMPTED, (double)by_priority);
	int64_t culled = 0;
	double culled_s = 0;
	for (size_t k = lo; k < hi; k++) {
		culled += wl[k].culled;
		culled_s += wl[k].culled_gpu_s;
	}
	if (opt.culls) {
		results_add_metric(r, scope, METRIC_JOBS_CULLED, (double)culled);
		results_add_metric(r, scope, METRIC_CULLED_GPU_HOURS, culled_s / 3600);
	}
	return st;
}

/* Capacity, allocation and activity from the integrated gauges of a scope. */
static void add_gauge_metrics(const struct collect *c, const struct scenario *sc, struct results *r,
			      size_t scope, double gpu_gib)
{
	const struct scope_gauges *g = &c->scopes[scope];
	const char *name = c->names[scope];
	const double hour = (double)SIM_HOUR;
	double cap = g->total[GAUGE_CAPACITY];
	bool has_capacity = scope <= sc->n_pools;
	if (has_capacity) {
		/* An autoscaled pool ends at its min: its capacity is the most it had Ready. */
		results_add_metric(r, name, METRIC_CAPACITY_GPUS,
				   fmax(g->value[GAUGE_CAPACITY], g->peak[PEAK_CAPACITY]));
		results_add_metric(r, name, METRIC_GPU_ALLOCATION_PCT,
				   cap > 0 ? 100 * g->total[GAUGE_ALLOCATED] / cap : NAN);
		results_add_metric(r, name, METRIC_ENGINE_ACTIVE_PCT,
				   cap > 0 ? 100 * g->total[GAUGE_ENGINE] / cap : NAN);
		results_add_metric(r, name, METRIC_SM_ACTIVE_PCT,
				   cap > 0 ? 100 * g->total[GAUGE_SM] / cap : NAN);
		results_add_metric(r, name, METRIC_VRAM_USED_PCT,
				   cap > 0 && gpu_gib > 0
					   ? 100 * g->total[GAUGE_VRAM] / (cap * gpu_gib)
					   : NAN);
		/* What vram_used_gib rows are out of (the HTML report's VRAM %). */
		results_add_metric(r, name, METRIC_VRAM_CAPACITY_GIB,
				   g->value[GAUGE_CAPACITY] * gpu_gib);
	}
	if (scope == 0 || scope > sc->n_pools)
		results_add_metric(r, name, METRIC_PEAK_DEMAND_GPUS, g->peak[PEAK_DEMAND]);
	results_add_metric(r, name, METRIC_PEAK_ALLOCATED_GPUS, g->peak[PEAK_ALLOCATED]);
	results_add_metric(r, name, METRIC_GPU_HOURS_ALLOCATED, g->total[GAUGE_ALLOCATED] / hour);
	results_add_metric(r, name, METRIC_GPU_HOURS_BUSY, g->total[GAUGE_ENGINE] / hour);
}

/* Mean GPU memory (GiB) per GPU over the pools of a scope, for vram_used_pct. */
static double gpu_gib(const struct scenario *sc, size_t scope)
{
	double gpus = 0, gib = 0;
	for (size_t p = 0; p < sc->n_pools; p++) {
		if (scope != 0 && scope != collect_scope_pool(sc, p))
			continue;
		double n = (double)scenario_pool_slots(&sc->pools[p]) * sc->pools[p].gpus_per_node;
		gpus += n;
		gib += n * sc->pools[p].gpu->memory_bytes / GP_GIB;
	}
	return gpus > 0 ? gib / gpus : 0;
}

/* Per workload, the jobs unfinished at the horizon whose deadline falls
 * after it: a run cut off there cannot tell whether they meet it, so
 * deadline_met_pct leaves them out (a job that arrives in the horizon's last
 * hours is neither met nor missed).  A run that stalled before it counts
 * them missed: nothing would start them. */
static int64_t *censored_deadlines(const struct sim *s, const struct scenario *sc,
				   const struct results *r)
{
	size_t n = 0;
	const struct sim_job *jobs = sim_jobs(s, &n);
	int64_t *censored = gp_xcalloc(sc->n_workloads + 1, sizeof *censored);
	if (!r->status || strcmp(r->status, "horizon"))
		n = 0;
	for (size_t i = 0; i < n; i++) {
		const struct sim_job *j = &jobs[i];
		if ((j->status == JOB_PENDING || j->status == JOB_RUNNING) && j->workload >= 0 &&
		    j->submit != SIM_NEVER && j->deadline != SIM_NEVER && j->deadline > r->sim_end)
			censored[j->workload]++;
	}
	return censored;
}

/* Jobs still waiting at the end (never started, or requeued) and the
 * longest of their waits so far, per workload and for all: what a queue
 * percentile over the jobs that started leaves out. */
static void add_waiting_metrics(const struct sim *s, const struct scenario *sc, struct results *r)
{
	size_t n = 0;
	const struct sim_job *jobs = sim_jobs(s, &n);
	int64_t *count = gp_xcalloc(sc->n_workloads + 1, sizeof *count);
	double *longest = gp_xcalloc(sc->n_workloads + 1, sizeof *longest);
	for (size_t i = 0; i < n; i++) {
		const struct sim_job *j = &jobs[i];
		if (j->status != JOB_PENDING || j->workload < 0 || j->submit == SIM_NEVER)
			continue;
		size_t w = (size_t)j->workload;
		double waited = sim_seconds(r->sim_end - j->submit);
		count[w]++, count[sc->n_workloads]++;
		longest[w] = fmax(longest[w], waited);
		longest[sc->n_workloads] = fmax(longest[sc->n_workloads], waited);
	}
	for (size_t w = 0; w <= sc->n_workloads; w++) {
		const char *scope = w < sc->n_workloads ? sc->workloads[w].name : "all";
		results_add_metric(r, scope, METRIC_JOBS_WAITING, (double)count[w]);
		results_add_metric(r, scope, METRIC_WAIT_SO_FAR_MAX_S, count[w] ? longest[w] : 0);
	}
	free(count);
	free(longest);
}

/* Whether workload w met its goal: nothing failed or OOM-killed, every
 * deadline and SLO met, queue p95 within its queue goal and no job still
 * waiting longer than it (an inference service: no replica waiting longer
 * to be placed), and nothing left unfinished in a run that stalled. */
static bool workload_goal_met(const struct scenario *sc, struct results *r, size_t w)
{
	const struct workload_spec *ws = &sc->workloads[w];
	const char *n = ws->name;
	double goal = ws->queue_goal >= 0 ? sim_seconds(ws->queue_goal) : INFINITY;
	/* A figure the workload does not have (slo_met of a batch workload,
	 * replica_wait_max_s of one that is not a service) is a goal it does not
	 * have: the defaults below meet it.  A figure that does not apply (NAN:
	 * no job started) misses nothing either. */
	double left = results_or(r, n, METRIC_JOBS_UNFINISHED, 0);
	bool stalled = r->status && !strcmp(r->status, "stalled");
	return !(results_or(r, n, METRIC_JOBS_FAILED, 0) > 0) &&
	       !(results_or(r, n, METRIC_OOM_KILLS, 0) > 0) &&
	       !(results_or(r, n, METRIC_DEADLINE_MET_PCT, 100) < 100 &&
		 scenario_has_deadlines(ws)) &&
	       !(results_or(r, n, METRIC_SLO_MET, 1) < 1) &&
	       !(results_or(r, n, METRIC_QUEUE_TIME_P95_S, 0) > goal) &&
	       !(results_or(r, n, METRIC_WAIT_SO_FAR_MAX_S, 0) > goal) &&
	       !(results_or(r, n, METRIC_REPLICA_WAIT_MAX_S, 0) > goal) && !(stalled && left > 0);
}

void metrics_goals(const struct scenario *sc, struct results *r)
{
	bool *met = gp_xcalloc(sc->n_workloads + 1, sizeof *met);
	double missed = 0;
	for (size_t w = 0; w < sc->n_workloads; w++) {
		const struct workload_spec *ws = &sc->workloads[w];
		met[w] = workload_goal_met(sc, r, w);
		missed += !met[w];
		if (ws->queue_goal >= 0)
			results_add_metric(r, ws->name, METRIC_QUEUE_GOAL_S,
					   sim_seconds(ws->queue_goal));
		results_add_metric(r, ws->name, METRIC_GOAL_MET, met[w]);
	}
	for (size_t p = 0; p < sc->n_pools; p++) {
		bool all = true;
		for (size_t w = 0; w < sc->n_workloads; w++)
			all &= met[w] || !scenario_pool_offers(&sc->pools[p], &sc->workloads[w]);
		results_add_metric(r, sc->pools[p].name, METRIC_GOAL_MET, all);
	}
	results_add_metric(r, "all", METRIC_GOALS_MISSED, missed);
	results_add_metric(r, "all", METRIC_GOAL_MET, missed == 0);
	free(met);
}

void metrics_bill(const struct scenario *sc, struct results *r)
{
	double bill = results_or(r, "all", METRIC_COST_TOTAL, NAN);
	sim_time span = sc->horizon > 0 ? sc->horizon : r->sim_end;
	if (isnan(bill) || span <= 0)
		return; /* the inflation protocol has no time, so no bill */
	results_add_metric(r, "all", METRIC_COST_PER_DAY, bill / (sim_seconds(span) / 86400.0));
	double cost[2] = {0, 0}, verified[2] = {0, 0};
	bool any[2] = {false, false};
	for (size_t w = 0; w < sc->n_workloads; w++) {
		const char *n = sc->workloads[w].name;
		int k = sc->workloads[w].inference != NULL;
		double c = results_or(r, n, METRIC_COST_TOTAL, NAN) +
			   results_or(r, n, METRIC_COST_IDLE, NAN);
		double v = results_or(r, n, METRIC_VERIFIED_RESULTS, NAN);
		any[k] = true;
		cost[k] += isnan(c) ? 0 : c;
		verified[k] += isnan(v) ? 0 : v;
	}
	static const enum metric_id ids[] = {METRIC_COST_PER_VERIFIED_JOB,
					     METRIC_COST_PER_VERIFIED_REQUEST};
	for (int k = 0; k < 2; k++)
		if (any[k])
			results_add_metric(r, "all", ids[k],
					   verified[k] > 0 ? cost[k] / verified[k] : NAN);
}

void metrics_reduce(const struct sim *s, const struct scenario *sc, struct results *r)
{
	const struct collect *c = sim_collect(s);
	int32_t sole = sole_waiting_workload(s, sc);
	struct samples_stats all = {0};
	struct optional opt = optional_metrics(sc);
	int64_t *censored = censored_deadlines(s, sc, r);
	for (size_t scope = 0; scope < c->n_scopes; scope++) {
		add_gauge_metrics(c, sc, r, scope, gpu_gib(sc, scope));
		if (scope == 0) {
			all = add_job_metrics(s, sc, r, "all", -1, NULL, censored, opt);
		} else if (scope > sc->n_pools) {
			int32_t w = (int32_t)(scope - 1 - sc->n_pools);
			add_job_metrics(s, sc, r, c->names[scope], w, w == sole ? &all : NULL,
					censored, opt);
		}
	}
	free(censored);
	add_waiting_metrics(s, sc, r);
	const struct sim_workload *wl = sim_workloads(s);
	int64_t *verified = gp_xcalloc(sc->n_workloads + 1, sizeof *verified);
	for (size_t w = 0; w < sc->n_workloads; w++)
		verified[w] = wl[w].verified;
	double *before = gp_xcalloc(2 * sc->n_pools + 1, sizeof *before);
	for (size_t p = 0; p < sc->n_pools; p++) {
		before[p] = collect_powered_before(c, collect_scope_pool(sc, p), r->sim_end);
		before[sc->n_pools + p] =
			collect_committed_before(c, collect_scope_pool(sc, p), r->sim_end);
	}
	bool *usable = gp_xcalloc(sc->n_workloads * sc->n_pools + 1, sizeof *usable);
	for (size_t w = 0; w < sc->n_workloads; w++)
		for (size_t p = 0; p < sc->n_pools; p++)
			usable[w * sc->n_pools + p] = placement_pool_usable(sim_placer(s), w, p);
	struct cost_run run = {collect_span_from(c, r->sim_end),
			       before,
			       before + sc->n_pools,
			       c,
			       usable,
			       sim_placer(s)->c};
	cost_account(sc, r, verified, &run);
	free(usable);
	free(before);
	free(verified);
}
