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
	results_add_metric(r, scope, "queue_time_mean_s", st->mean, "s");
	results_add_metric(r, scope, "queue_time_p50_s", st->p50, "s");
	results_add_metric(r, scope, "queue_time_p95_s", st->p95, "s");
	results_add_metric(r, scope, "queue_time_p99_s", st->p99, "s");
	results_add_metric(r, scope, "queue_time_max_s", st->max, "s");
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

/* Job counts, deadlines, queue times and makespan of the jobs of workload w
 * (w < 0: all jobs), from the counts the run kept per workload (sim.h):
 * finished jobs may be gone.  The queue times are the workloads' samples
 * (samples.h), so the figures do not depend on the jobs being kept.  Queue
 * figures already known (known, not NULL) are not computed again.  Returns
 * the queue figures. */
static struct samples_stats add_job_metrics(const struct sim *s, const struct scenario *sc,
					    struct results *r, const char *scope, int32_t w,
					    const struct samples_stats *known, bool culls)
{
	const struct sim_workload *wl = sim_workloads(s);
	/* the workloads summed: all, or w alone (a scan of all per workload
	 * was quadratic: 40,000 imported workloads) */
	size_t lo = w < 0 ? 0 : (size_t)w, hi = w < 0 ? sc->n_workloads : (size_t)w + 1;
	const struct samples **waits = gp_xcalloc(hi - lo + 1, sizeof *waits);
	size_t n = 0;
	int64_t submitted = 0, completed = 0, failed = 0, met = 0;
	sim_time first = SIM_NEVER, last = SIM_NEVER;
	for (size_t k = lo; k < hi; k++) {
		const struct sim_workload *x = &wl[k];
		submitted += x->submitted;
		completed += x->completed;
		failed += x->failed;
		met += x->met;
		if (x->first_submit != SIM_NEVER && (first == SIM_NEVER || x->first_submit < first))
			first = x->first_submit;
		if (x->last_end != SIM_NEVER && (last == SIM_NEVER || x->last_end > last))
			last = x->last_end;
		waits[n++] = &x->waits;
	}
	struct samples_stats st = known ? *known : samples_stats(waits, n);
	free(waits);
	add_queue_metrics(r, scope, &st);
	results_add_metric(r, scope, "jobs_submitted", (double)submitted, "jobs");
	results_add_metric(r, scope, "jobs_completed", (double)completed, "jobs");
	results_add_metric(r, scope, "jobs_failed", (double)failed, "jobs");
	results_add_metric(r, scope, "jobs_unfinished", (double)(submitted - completed - failed),
			   "jobs");
	results_add_metric(r, scope, "deadline_met_pct",
			   submitted ? 100.0 * (double)met / (double)submitted : NAN, "pct");
	results_add_metric(r, scope, "makespan_s",
			   last != SIM_NEVER ? sim_seconds(last - first) : NAN, "s");
	int64_t oom = 0;
	for (size_t k = lo; k < hi; k++)
		oom += wl[k].oom_kills;
	results_add_metric(r, scope, "oom_kills", (double)oom, "kills");
	int64_t preempted = 0;
	for (size_t k = lo; k < hi; k++)
		preempted += wl[k].preemptions;
	results_add_metric(r, scope, "jobs_preempted", (double)preempted, "jobs");
	int64_t culled = 0;
	double culled_s = 0;
	for (size_t k = lo; k < hi; k++) {
		culled += wl[k].culled;
		culled_s += wl[k].culled_gpu_s;
	}
	if (culls) { /* only where a workload asks for idle_cull */
		results_add_metric(r, scope, "jobs_culled", (double)culled, "jobs");
		results_add_metric(r, scope, "culled_gpu_hours", culled_s / 3600, "gpu_hours");
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
		results_add_metric(r, name, "capacity_gpus",
				   fmax(g->value[GAUGE_CAPACITY], g->peak[PEAK_CAPACITY]), "gpus");
		results_add_metric(r, name, "gpu_allocation_pct",
				   cap > 0 ? 100 * g->total[GAUGE_ALLOCATED] / cap : NAN, "pct");
		results_add_metric(r, name, "engine_active_pct",
				   cap > 0 ? 100 * g->total[GAUGE_ENGINE] / cap : NAN, "pct");
		results_add_metric(r, name, "sm_active_pct",
				   cap > 0 ? 100 * g->total[GAUGE_SM] / cap : NAN, "pct");
		results_add_metric(
			r, name, "vram_used_pct",
			cap > 0 && gpu_gib > 0 ? 100 * g->total[GAUGE_VRAM] / (cap * gpu_gib) : NAN,
			"pct");
		/* What vram_used_gib rows are out of (the HTML report's VRAM %). */
		results_add_metric(r, name, "vram_capacity_gib", g->value[GAUGE_CAPACITY] * gpu_gib,
				   "GiB");
	}
	if (scope == 0 || scope > sc->n_pools)
		results_add_metric(r, name, "peak_demand_gpus", g->peak[PEAK_DEMAND], "gpus");
	results_add_metric(r, name, "peak_allocated_gpus", g->peak[PEAK_ALLOCATED], "gpus");
	results_add_metric(r, name, "gpu_hours_allocated", g->total[GAUGE_ALLOCATED] / hour,
			   "gpu_hours");
	results_add_metric(r, name, "gpu_hours_busy", g->total[GAUGE_ENGINE] / hour, "gpu_hours");
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
		results_add_metric(r, scope, "jobs_waiting", (double)count[w], "jobs");
		results_add_metric(r, scope, "wait_so_far_max_s", count[w] ? longest[w] : 0, "s");
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
	double left = results_metric(r, n, "jobs_unfinished");
	bool stalled = r->status && !strcmp(r->status, "stalled");
	return !(results_metric(r, n, "jobs_failed") > 0) &&
	       !(results_metric(r, n, "oom_kills") > 0) &&
	       !(results_metric(r, n, "deadline_met_pct") < 100 &&
		 ws->deadline_kind != DEADLINE_NONE) &&
	       !(results_metric(r, n, "slo_met") < 1) &&
	       !(results_metric(r, n, "queue_time_p95_s") > goal) &&
	       !(results_metric(r, n, "wait_so_far_max_s") > goal) &&
	       !(results_metric(r, n, "replica_wait_max_s") > goal) && !(stalled && left > 0);
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
			results_add_metric(r, ws->name, "queue_goal_s", sim_seconds(ws->queue_goal),
					   "s");
		results_add_metric(r, ws->name, "goal_met", met[w], "bool");
	}
	for (size_t p = 0; p < sc->n_pools; p++) {
		bool all = true;
		for (size_t w = 0; w < sc->n_workloads; w++)
			all &= met[w] || !scenario_pool_offers(&sc->pools[p], &sc->workloads[w]);
		results_add_metric(r, sc->pools[p].name, "goal_met", all, "bool");
	}
	results_add_metric(r, "all", "goals_missed", missed, "workloads");
	results_add_metric(r, "all", "goal_met", missed == 0, "bool");
	free(met);
}

void metrics_bill(const struct scenario *sc, struct results *r)
{
	double bill = results_metric(r, "all", "cost_total");
	sim_time span = sc->horizon > 0 ? sc->horizon : r->sim_end;
	if (isnan(bill) || span <= 0)
		return; /* the inflation protocol has no time, so no bill */
	results_add_metric(r, "all", "cost_per_day", bill / (sim_seconds(span) / 86400.0),
			   scenario_money_unit(sc));
	double cost[2] = {0, 0}, verified[2] = {0, 0};
	bool any[2] = {false, false};
	for (size_t w = 0; w < sc->n_workloads; w++) {
		const char *n = sc->workloads[w].name;
		int k = sc->workloads[w].inference != NULL;
		double c = results_metric(r, n, "cost_total") + results_metric(r, n, "cost_idle");
		double v = results_metric(r, n, "verified_results");
		any[k] = true;
		cost[k] += isnan(c) ? 0 : c;
		verified[k] += isnan(v) ? 0 : v;
	}
	static const char *const names[] = {"cost_per_verified_job", "cost_per_verified_request"};
	for (int k = 0; k < 2; k++)
		if (any[k])
			results_add_metric(r, "all", names[k],
					   verified[k] > 0 ? cost[k] / verified[k] : NAN,
					   scenario_money_unit(sc));
}

void metrics_reduce(const struct sim *s, const struct scenario *sc, struct results *r)
{
	const struct collect *c = sim_collect(s);
	int32_t sole = sole_waiting_workload(s, sc);
	struct samples_stats all = {0};
	bool culls = false; /* some workload asks for idle_cull */
	for (size_t k = 0; k < sc->n_workloads; k++)
		culls |= sc->workloads[k].cull_after > 0;
	for (size_t scope = 0; scope < c->n_scopes; scope++) {
		add_gauge_metrics(c, sc, r, scope, gpu_gib(sc, scope));
		if (scope == 0) {
			all = add_job_metrics(s, sc, r, "all", -1, NULL, culls);
		} else if (scope > sc->n_pools) {
			int32_t w = (int32_t)(scope - 1 - sc->n_pools);
			add_job_metrics(s, sc, r, c->names[scope], w, w == sole ? &all : NULL,
					culls);
		}
	}
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
