/*
 * cost.c - allocations, idle and cost per verified result (see cost.h).
 */
#include "gpuplan/cost.h"

#include <math.h>
#include <stdlib.h>

/* The end of the timeseries window starting at t: a step later (the step
 * the run used, so allocations follow an adaptive step), or the run's end;
 * never before t (a row the run wrote at or after its end, as a power
 * window's closing row can be, is an empty window, not a reversed one). */
static sim_time window_end(const struct scenario *sc, const struct results *r, sim_time t)
{
	(void)sc;
	sim_time end = t + r->step < r->sim_end ? t + r->step : r->sim_end;
	return end > t ? end : t;
}

static double window_hours(const struct scenario *sc, const struct results *r, sim_time t)
{
	return sim_seconds(window_end(sc, r, t) - t) / 3600.0;
}

static void add_allocation(struct results *r, struct allocation a)
{
	a.total_cost = a.gpu_cost + a.cpu_cost + a.ram_cost;
	GP_GROW(r->allocations, r->cap_allocations, r->n_allocations + 1);
	r->allocations[r->n_allocations++] = a;
}

/* What a workload's pods were allocated and charged in one window. */
static struct allocation workload_window(const struct scenario *sc, const struct results *r,
					 const struct ts_row *row)
{
	double h = window_hours(sc, r, row->t);
	sim_time end = window_end(sc, r, row->t);
	return (struct allocation){
		row->scope,
		row->t,
		end,
		row->gpus_allocated * h,
		row->gpu_cost_per_h * h,
		row->cpu_cores * h,
		row->cpu_cost_per_h * h,
		row->ram_gib * GP_GIB * h,
		row->ram_cost_per_h * h,
		0,
		row->gpus_allocated > 0 ? row->engine_active / row->gpus_allocated : NAN};
}

/* Idle GPU-, core- and GiB-hours of one pool, at its prices: powered GPUs
 * (nodes' cpu and memory in proportion) less what is allocated, over h hours. */
static void add_idle_hours(const struct pool_spec *p, double powered_gpus, double gpus,
			   double cores, double gib, double h, struct allocation *idle)
{
	double powered_nodes = powered_gpus / p->gpus_per_node;
	double gpu_h = fmax(0, powered_gpus - gpus) * h;
	double cpu_h = fmax(0, powered_nodes * p->cpu - cores) * h;
	double gib_h = fmax(0, powered_nodes * p->memory_bytes / GP_GIB - gib) * h;
	idle->gpu_hours += gpu_h;
	idle->gpu_cost += gpu_h * p->price.gpu_hour;
	idle->cpu_core_hours += cpu_h;
	idle->cpu_cost += cpu_h * p->price.cpu_hour;
	idle->ram_byte_hours += gib_h * GP_GIB;
	idle->ram_cost += gib_h * p->price.gib_hour;
}

/* Powered but unallocated capacity of one pool in one window, at its prices. */
static void add_idle(const struct pool_spec *p, const struct scenario *sc, const struct results *r,
		     const struct ts_row *row, struct allocation *idle)
{
	add_idle_hours(p, row->powered_gpus, row->gpus_allocated, row->cpu_cores, row->ram_gib,
		       window_hours(sc, r, row->t), idle);
}

/* The bill's span starts at the scenario start: what the pools had powered
 * before the first timeseries window (the first arrival's) is idle, one
 * __idle__ allocation over [0, until). */
static void add_before(const struct scenario *sc, struct results *r, const struct cost_span *span,
		       double *idle_by_pool)
{
	if (span->until <= 0)
		return;
	struct allocation idle = {COST_IDLE_NAME, 0, span->until, 0, 0, 0, 0, 0, 0, 0, 0};
	for (size_t p = 0; p < sc->n_pools; p++) {
		double before = idle.gpu_cost + idle.cpu_cost + idle.ram_cost;
		add_idle_hours(&sc->pools[p], span->powered_gpu_hours[p], 0, 0, 0, 1, &idle);
		idle_by_pool[p] += idle.gpu_cost + idle.cpu_cost + idle.ram_cost - before;
	}
	if (idle.gpu_hours > 0 || idle.cpu_core_hours > 0 || idle.ram_byte_hours > 0)
		add_allocation(r, idle);
}

/* Rows arrive window by window, scopes in a fixed order: all, pools, workloads. */
static void add_allocations(const struct scenario *sc, struct results *r, double *cost,
			    double *idle_by_pool)
{
	size_t n_ts = r->n_ts, per_window = 1 + sc->n_pools + sc->n_workloads;
	for (size_t i = 0; i + per_window <= n_ts; i += per_window) {
		const struct ts_row *row = &r->ts[i];
		if (window_end(sc, r, row->t) <= row->t)
			continue; /* an empty window charges nothing */
		struct allocation idle = {
			COST_IDLE_NAME, row->t, window_end(sc, r, row->t), 0, 0, 0, 0, 0, 0, 0, 0};
		for (size_t p = 0; p < sc->n_pools; p++) {
			double before = idle.gpu_cost + idle.cpu_cost + idle.ram_cost;
			add_idle(&sc->pools[p], sc, r, &row[1 + p], &idle);
			idle_by_pool[p] += idle.gpu_cost + idle.cpu_cost + idle.ram_cost - before;
		}
		for (size_t w = 0; w < sc->n_workloads; w++) {
			struct allocation a = workload_window(sc, r, &row[1 + sc->n_pools + w]);
			if (a.gpu_hours > 0 || a.cpu_core_hours > 0 || a.ram_byte_hours > 0) {
				add_allocation(r, a);
				cost[w] += r->allocations[r->n_allocations - 1].total_cost;
			}
		}
		idle.gpu_efficiency = 0;
		add_allocation(r, idle);
	}
}

void cost_account(const struct scenario *sc, struct results *r, const int64_t *verified,
		  const struct cost_span *span)
{
	double *cost = gp_xcalloc(sc->n_workloads, sizeof *cost);
	double *idle_by_pool = gp_xcalloc(sc->n_pools, sizeof *idle_by_pool);
	if (span)
		add_before(sc, r, span, idle_by_pool);
	add_allocations(sc, r, cost, idle_by_pool);
	double total = 0, idle = 0;
	int64_t all_verified = 0;
	for (size_t w = 0; w < sc->n_workloads; w++) {
		total += cost[w];
		all_verified += verified[w];
	}
	for (size_t p = 0; p < sc->n_pools; p++) {
		idle += idle_by_pool[p];
		results_add_metric(r, sc->pools[p].name, "cost_idle", idle_by_pool[p], "usd");
	}
	for (size_t w = 0; w < sc->n_workloads; w++) {
		const char *name = sc->workloads[w].name;
		/* shareIdle: idle follows cost; with no cost at all, nobody is charged for it. */
		double share = total > 0 ? idle * cost[w] / total : 0;
		results_add_metric(r, name, "cost_total", cost[w], "usd");
		results_add_metric(r, name, "cost_allocated", cost[w], "usd");
		results_add_metric(r, name, "cost_idle", share, "usd");
		results_add_metric(r, name, "verified_results", (double)verified[w], "results");
		results_add_metric(r, name, "cost_per_verified_result",
				   verified[w] ? (cost[w] + share) / (double)verified[w] : NAN,
				   "usd");
	}
	/* The bill: allocations plus idle, OpenCost's total over every
	 * allocation including __idle__. */
	results_add_metric(r, "all", "cost_total", total + idle, "usd");
	results_add_metric(r, "all", "cost_allocated", total, "usd");
	results_add_metric(r, "all", "cost_idle", idle, "usd");
	results_add_metric(r, "all", "verified_results", (double)all_verified, "results");
	results_add_metric(r, "all", "cost_per_verified_result",
			   all_verified ? (total + idle) / (double)all_verified : NAN, "usd");
	free(cost);
	free(idle_by_pool);
}
