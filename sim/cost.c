/*
 * cost.c - allocations, idle and cost per verified result (see cost.h).
 */
#include "gpuplan/cost.h"

#include "gpuplan/cluster.h"
#include "gpuplan/collect.h"

#include <math.h>
#include <stdlib.h>

/* The end of the timeseries window starting at t: a step later (the step
 * the run used, so allocations follow an adaptive step), or the run's end;
 * never before t (a row the run wrote at or after its end, as a power
 * window's closing row can be, is an empty window, not a reversed one). */
static sim_time window_end(sim_time step, sim_time sim_end, sim_time t)
{
	sim_time end = t + step < sim_end ? t + step : sim_end;
	return end > t ? end : t;
}

static double window_hours(sim_time step, sim_time sim_end, sim_time t)
{
	return sim_seconds(window_end(step, sim_end, t) - t) / 3600.0;
}

/* Where allocation rows are appended. */
struct alloc_rows {
	struct allocation **rows;
	size_t *n, *cap;
};

static void add_allocation(struct alloc_rows out, struct allocation a)
{
	a.total_cost = a.gpu_cost + a.cpu_cost + a.ram_cost;
	GP_GROW(*out.rows, *out.cap, *out.n + 1);
	(*out.rows)[(*out.n)++] = a;
}

static struct alloc_rows results_rows(struct results *r)
{
	return (struct alloc_rows){&r->allocations, &r->n_allocations, &r->cap_allocations};
}

/* What a workload's pods were allocated and charged in one window. */
static struct allocation workload_window(sim_time step, sim_time sim_end, const struct ts_row *row)
{
	double h = window_hours(step, sim_end, row->t);
	sim_time end = window_end(step, sim_end, row->t);
	return (struct allocation){
		.name = row->scope,
		.start = row->t,
		.end = end,
		.gpu_hours = row->gpus_charged * h,
		.gpu_cost = row->gpu_cost_per_h * h,
		.cpu_core_hours = row->cpu_cores * h,
		.cpu_cost = row->cpu_cost_per_h * h,
		.ram_byte_hours = row->ram_gib * GP_GIB * h,
		.ram_cost = row->ram_cost_per_h * h,
		.gpu_efficiency =
			row->gpus_allocated > 0 ? row->engine_active / row->gpus_allocated : NAN,
		.workload = -1,
		.pool = -1};
}

/* One pool over h hours: what it powered (GPUs, of them committed) and
 * what its pods were allocated and charged (GPUs as charged, the GPUs'
 * cost, cores, GiB), means over the h hours. */
struct pool_use {
	double powered, committed;
	double charged, gpu_cost, cores, gib;
};

/* A pool's bill by term (the pool's metrics): all of it, its committed
 * GPUs, and the same powered capacity at on-demand prices. */
struct pool_bill {
	double total, committed, on_demand;
};

/* Idle GPU-, core- and GiB-hours of one pool, at its prices: the GPUs billed
 * (its committed ones whether powered or not, the others while powered;
 * nodes' cpu and memory in proportion to the powered GPUs) less what is
 * charged, over h hours; its cost by resource is added to by[COST_RESOURCES]
 * and the bill to bill. */
static void add_idle_hours(const struct pool_spec *p, const struct pool_use *u, double h,
			   struct allocation *idle, double *by, struct pool_bill *bill)
{
	const struct price *pr = &p->price, *od = scenario_on_demand(p);
	double powered_nodes = u->powered / p->gpus_per_node;
	double on_demand = fmax(0, u->powered - u->committed);
	double billed_gpus = on_demand + pr->committed;
	double gpu_bill = (on_demand * pr->gpu_hour + pr->committed * pr->committed_gpu_hour) * h;
	double gpu_h = fmax(0, billed_gpus - u->charged) * h;
	double gpu_c = fmax(0, gpu_bill - u->gpu_cost * h);
	double cores = powered_nodes * p->cpu, gib = powered_nodes * p->memory_bytes / GP_GIB;
	double cpu_h = fmax(0, cores - u->cores) * h;
	double gib_h = fmax(0, gib - u->gib) * h;
	idle->gpu_hours += gpu_h;
	idle->gpu_cost += gpu_c;
	idle->cpu_core_hours += cpu_h;
	idle->cpu_cost += cpu_h * pr->cpu_hour;
	idle->ram_byte_hours += gib_h * GP_GIB;
	idle->ram_cost += gib_h * pr->gib_hour;
	by[COST_GPU] += gpu_c;
	by[COST_CPU] += cpu_h * pr->cpu_hour;
	by[COST_RAM] += gib_h * pr->gib_hour;
	bill->total += gpu_bill + (cores * pr->cpu_hour + gib * pr->gib_hour) * h;
	bill->committed += pr->committed * pr->committed_gpu_hour * h;
	bill->on_demand +=
		(u->powered * od->gpu_hour + cores * od->cpu_hour + gib * od->gib_hour) * h;
}

/* The bill's span starts at the scenario start: what the pools had powered
 * before the first timeseries window (the first arrival's) is idle, one
 * __idle__ allocation over [0, until). */
static void add_before(const struct scenario *sc, struct results *r, const struct cost_run *run,
		       double *idle_by, struct pool_bill *bill)
{
	if (run->until <= 0)
		return;
	struct allocation idle = {
		.name = COST_IDLE_NAME, .start = 0, .end = run->until, .workload = -1, .pool = -1};
	double h = sim_seconds(run->until) / 3600;
	for (size_t p = 0; p < sc->n_pools; p++) {
		struct pool_use u = {.powered = run->powered_gpu_hours[p] / h,
				     .committed = run->committed_gpu_hours[p] / h};
		add_idle_hours(&sc->pools[p], &u, h, &idle, &idle_by[p * COST_RESOURCES], &bill[p]);
	}
	if (idle.gpu_hours > 0 || idle.cpu_core_hours > 0 || idle.ram_byte_hours > 0)
		add_allocation(results_rows(r), idle);
}

/* The rows of the window at row (its scopes in a fixed order: all, pools,
 * workloads), appended to out: each workload's with any use, then
 * __idle__; the pools' idle and bill go to idle_by and bill. */
static void window_rows(const struct scenario *sc, sim_time step, sim_time sim_end,
			const struct ts_row *row, const int32_t *pool_of, double *idle_by,
			struct pool_bill *bill, struct alloc_rows out)
{
	if (window_end(step, sim_end, row->t) <= row->t)
		return; /* an empty window charges nothing */
	struct allocation idle = {.name = COST_IDLE_NAME,
				  .start = row->t,
				  .end = window_end(step, sim_end, row->t),
				  .workload = -1,
				  .pool = -1};
	for (size_t p = 0; p < sc->n_pools; p++) {
		const struct ts_row *pr = &row[1 + p];
		struct pool_use u = {pr->powered_gpus, pr->powered_committed_gpus,
				     pr->gpus_charged, pr->gpu_cost_per_h,
				     pr->cpu_cores,    pr->ram_gib};
		add_idle_hours(&sc->pools[p], &u, window_hours(step, sim_end, row->t), &idle,
			       &idle_by[p * COST_RESOURCES], &bill[p]);
	}
	for (size_t w = 0; w < sc->n_workloads; w++) {
		struct allocation a = workload_window(step, sim_end, &row[1 + sc->n_pools + w]);
		a.workload = (int32_t)w;
		a.pool = pool_of[w];
		if (a.gpu_hours > 0 || a.cpu_core_hours > 0 || a.ram_byte_hours > 0)
			add_allocation(out, a);
	}
	idle.gpu_efficiency = 0;
	add_allocation(out, idle);
}

/* Rows arrive window by window, scopes in a fixed order: all, pools, workloads. */
static void add_allocations(const struct scenario *sc, struct results *r, double *cost,
			    double *idle_by, const int32_t *pool_of, struct pool_bill *bill)
{
	size_t n_ts = r->n_ts, per_window = 1 + sc->n_pools + sc->n_workloads;
	for (size_t i = 0; i + per_window <= n_ts; i += per_window) {
		size_t first = r->n_allocations;
		window_rows(sc, r->step, r->sim_end, &r->ts[i], pool_of, idle_by, bill,
			    results_rows(r));
		for (size_t k = first; k < r->n_allocations; k++)
			if (r->allocations[k].workload >= 0)
				cost[r->allocations[k].workload] += r->allocations[k].total_cost;
	}
}

size_t cost_window_rows(const struct scenario *sc, const struct ts_row *row, sim_time step,
			const int32_t *pool_of, struct allocation **rows, size_t *n, size_t *cap)
{
	/* the pools' idle and bill, not kept */
	double *idle_by = gp_xcalloc(sc->n_pools * COST_RESOURCES, sizeof *idle_by);
	struct pool_bill *bill = gp_xcalloc(sc->n_pools, sizeof *bill);
	size_t before = *n;
	window_rows(sc, step, SIM_NEVER, row, pool_of, idle_by, bill,
		    (struct alloc_rows){rows, n, cap});
	free(idle_by);
	free(bill);
	return *n - before;
}

/* What the sharing works with: idle[p][k] of each pool and resource, and
 * each workload's cost of each resource in each pool, wcost[w][p][k]. */
struct idle_split {
	const struct scenario *sc;
	double *idle;  /* [p * COST_RESOURCES + k] */
	double *wcost; /* [(w * n_pools + p) * COST_RESOURCES + k] */
	double *share; /* [w]: idle charged to w */
};

static double *wcost_of(const struct idle_split *x, size_t w, size_t p)
{
	return &x->wcost[(w * x->sc->n_pools + p) * COST_RESOURCES];
}

/* Idle held for one workload: a pool that no other workload's pods may use
 * (placement's rules: taints, node_selector, affinity, gpu_spec, the resource)
 * is kept for it, and its idle is charged to it whatever it used. */
static void charge_held(struct idle_split *x, const bool *usable)
{
	const struct scenario *sc = x->sc;
	for (size_t p = 0; p < sc->n_pools; p++) {
		size_t users = 0, only = 0;
		for (size_t w = 0; w < sc->n_workloads; w++)
			if (!usable || usable[w * sc->n_pools + p]) {
				users++;
				only = w;
			}
		if (users != 1 || sc->n_workloads < 2)
			continue; /* a lone workload gets the idle by the rule anyway */
		for (size_t k = 0; k < COST_RESOURCES; k++) {
			x->share[only] += x->idle[p * COST_RESOURCES + k];
			x->idle[p * COST_RESOURCES + k] = 0;
		}
	}
}

/* Shares the idle of the pools in [from, to) (one idle scope) over the
 * workloads' costs there.  weighted: OpenCost's shareIdle, per resource in
 * proportion to each allocation's cost of that resource (computeIdleCoeffs in
 * core/pkg/opencost/allocation.go); idle of a resource nobody was charged for
 * stays unshared.  even: equal parts to every workload charged anything
 * there (OpenCost's ShareEven weight of 1 per allocation). */
static void share_scope(struct idle_split *x, size_t from, size_t to, enum share_idle rule)
{
	const struct scenario *sc = x->sc;
	double idle[COST_RESOURCES] = {0}, total[COST_RESOURCES] = {0};
	size_t charged = 0;
	for (size_t p = from; p < to; p++)
		for (size_t k = 0; k < COST_RESOURCES; k++)
			idle[k] += x->idle[p * COST_RESOURCES + k];
	for (size_t w = 0; w < sc->n_workloads; w++) {
		double any = 0;
		for (size_t p = from; p < to; p++)
			for (size_t k = 0; k < COST_RESOURCES; k++) {
				total[k] += wcost_of(x, w, p)[k];
				any += wcost_of(x, w, p)[k];
			}
		charged += any > 0;
	}
	for (size_t w = 0; w < sc->n_workloads; w++) {
		double mine[COST_RESOURCES] = {0}, any = 0;
		for (size_t p = from; p < to; p++)
			for (size_t k = 0; k < COST_RESOURCES; k++) {
				mine[k] += wcost_of(x, w, p)[k];
				any += wcost_of(x, w, p)[k];
			}
		for (size_t k = 0; k < COST_RESOURCES; k++) {
			if (rule == SHARE_IDLE_EVEN && any > 0)
				x->share[w] += idle[k] / (double)charged;
			else if (rule == SHARE_IDLE_WEIGHTED && total[k] > 0)
				x->share[w] += idle[k] * mine[k] / total[k];
		}
	}
}

/* idle_by: node, OpenCost's idleByNode (getIdleId keys idle by
 * cluster/node, computeIdleCoeffs in core/pkg/opencost/allocation.go): each
 * node's idle is what it billed over the span (its committed GPUs the whole
 * span, the rest and its cores and memory while powered) less what the
 * workloads' pods on it were charged, shared over those pods' workloads by
 * the rule.  A node of a pool held for one workload carries its idle to it
 * (charge_held); a node nobody used keeps its idle unshared. */
/* A node_allocations row over the span: what's k-th figures hold (costs,
 * then GPU-, core- and GiB-hours). */
static void add_node_row(struct results *r, const char *name, int32_t w, char *node, sim_time end,
			 const double *f)
{
	struct allocation a = {.name = name,
			       .start = 0,
			       .end = end,
			       .gpu_cost = f[COST_GPU],
			       .cpu_cost = f[COST_CPU],
			       .ram_cost = f[COST_RAM],
			       .gpu_hours = f[COST_RESOURCES + COST_GPU],
			       .cpu_core_hours = f[COST_RESOURCES + COST_CPU],
			       .ram_byte_hours = f[COST_RESOURCES + COST_RAM] * GP_GIB,
			       .gpu_efficiency = NAN,
			       .workload = w,
			       .pool = -1,
			       .node = node};
	a.total_cost = a.gpu_cost + a.cpu_cost + a.ram_cost;
	GP_GROW(r->node_allocations, r->cap_node_allocations, r->n_node_allocations + 1);
	r->node_allocations[r->n_node_allocations++] = a;
}

static void share_by_node(struct idle_split *x, struct results *r, const struct cost_run *run,
			  sim_time end, enum share_idle rule)
{
	const struct scenario *sc = x->sc;
	const struct cluster *cl = run->cluster;
	const struct collect *c = run->collect;
	size_t nw = sc->n_workloads;
	double *mine = gp_xcalloc(nw * COST_TRACKED + 1, sizeof *mine);
	double span = sim_seconds(end) / 3600;
	for (size_t n = 0; n < cl->n_nodes; n++) {
		const struct node *nd = &cl->nodes[n];
		const struct pool_spec *ps = &sc->pools[nd->pool];
		bool held = true; /* its pool's idle went to one workload */
		for (size_t k = 0; k < COST_RESOURCES; k++)
			held &= x->idle[(size_t)nd->pool * COST_RESOURCES + k] == 0;
		double h = collect_node_hours(c, (int32_t)n, end), bill[COST_TRACKED];
		int32_t first = nd->first_gpu - cl->pools[nd->pool].first_gpu;
		bill[COST_GPU] = bill[COST_RESOURCES + COST_GPU] = 0;
		for (int32_t g = first; g < first + nd->gpus; g++) {
			bool committed = g < ps->price.committed;
			bill[COST_GPU] += committed ? ps->price.committed_gpu_hour * span
						    : ps->price.gpu_hour * h;
			bill[COST_RESOURCES + COST_GPU] += committed ? span : h;
		}
		bill[COST_RESOURCES + COST_CPU] = ps->cpu * h;
		bill[COST_RESOURCES + COST_RAM] = ps->memory_bytes / GP_GIB * h;
		bill[COST_CPU] = bill[COST_RESOURCES + COST_CPU] * ps->price.cpu_hour;
		bill[COST_RAM] = bill[COST_RESOURCES + COST_RAM] * ps->price.gib_hour;
		double total[COST_TRACKED] = {0}, idle[COST_TRACKED];
		size_t charged = 0;
		char *name = cluster_node_name(cl, (int32_t)n);
		for (size_t w = 0; w < nw; w++) {
			double *m = &mine[w * COST_TRACKED], any = 0;
			collect_node_cost_of(c, w, (int32_t)n, end, m);
			for (size_t k = 0; k < COST_TRACKED; k++) {
				total[k] += m[k];
				any += m[k];
			}
			charged += any > 0;
			if (any > 0)
				add_node_row(r, sc->workloads[w].name, (int32_t)w, gp_xstrdup(name),
					     end, m);
		}
		for (size_t k = 0; k < COST_TRACKED; k++)
			idle[k] = fmax(0, bill[k] - total[k]);
		if (idle[COST_GPU] + idle[COST_CPU] + idle[COST_RAM] > 0 || idle[3] + idle[4] > 0)
			add_node_row(r, COST_IDLE_NAME, -1, name, end, idle);
		else
			free(name);
		if (held)
			continue;
		for (size_t w = 0; w < nw; w++) {
			const double *m = &mine[w * COST_TRACKED];
			for (size_t k = 0; k < COST_RESOURCES; k++) {
				if (rule == SHARE_IDLE_EVEN && m[0] + m[1] + m[2] > 0)
					x->share[w] += idle[k] / (double)charged;
				else if (rule == SHARE_IDLE_WEIGHTED && total[k] > 0)
					x->share[w] += idle[k] * m[k] / total[k];
			}
		}
	}
	free(mine);
}

/* The rule, as the summary and docs/cost.md name it. */
const char *cost_rule_text(const struct scenario *sc)
{
	static const char *const texts[3][3] = {
		{"weighted per resource over the cluster", "weighted per resource in each pool",
		 "weighted per resource on each node"},
		{"evenly over the cluster", "evenly in each pool", "evenly on each node"},
		{"not shared", "not shared", "not shared"}};
	return texts[sc->cost.share_idle][sc->cost.idle_by];
}

void cost_account(const struct scenario *sc, struct results *r, const int64_t *verified,
		  const struct cost_run *run)
{
	size_t np = sc->n_pools, nw = sc->n_workloads;
	double *cost = gp_xcalloc(nw + 1, sizeof *cost);
	struct idle_split x = {sc, gp_xcalloc(np * COST_RESOURCES + 1, sizeof(double)),
			       gp_xcalloc(nw * np * COST_RESOURCES + 1, sizeof(double)),
			       gp_xcalloc(nw + 1, sizeof(double))};
	int32_t *pool_of = gp_xcalloc(nw + 1, sizeof *pool_of);
	struct pool_bill *bill = gp_xcalloc(np + 1, sizeof *bill);
	for (size_t w = 0; w < nw; w++) /* the pool of a workload that used one */
		pool_of[w] = run->collect && run->collect->cells[w].n == 1
				     ? run->collect->cells[w].cell[0].pool
				     : -1;
	add_before(sc, r, run, x.idle, bill);
	add_allocations(sc, r, cost, x.idle, pool_of, bill);
	free(pool_of);
	double total = 0, idle = 0;
	int64_t all_verified = 0;
	for (size_t w = 0; w < nw; w++) {
		total += cost[w];
		all_verified += verified[w];
		for (size_t p = 0; p < np && run->collect; p++)
			collect_cost_of(run->collect, w, (int32_t)p, r->sim_end,
					wcost_of(&x, w, p));
	}
	for (size_t p = 0; p < np; p++) {
		double *by = &x.idle[p * COST_RESOURCES];
		double pool_idle = by[COST_GPU] + by[COST_CPU] + by[COST_RAM];
		idle += pool_idle;
		results_add_metric(r, sc->pools[p].name, METRIC_COST_IDLE, pool_idle);
		results_add_metric(r, sc->pools[p].name, METRIC_COST_BILL, bill[p].total);
		results_add_metric(r, sc->pools[p].name, METRIC_COST_ON_DEMAND, bill[p].on_demand);
		if (sc->pools[p].price.committed > 0)
			results_add_metric(r, sc->pools[p].name, METRIC_COST_COMMITTED,
					   bill[p].committed);
	}
	free(bill);
	bool by_node = sc->cost.idle_by == IDLE_BY_NODE && run->cluster && run->collect &&
		       run->collect->nodes.n_nodes;
	if (sc->cost.share_idle == SHARE_IDLE_NONE && by_node)
		share_by_node(&x, r, run, r->sim_end, sc->cost.share_idle); /* the rows only */
	if (sc->cost.share_idle != SHARE_IDLE_NONE) {
		charge_held(&x, run->usable);
		if (by_node)
			share_by_node(&x, r, run, r->sim_end, sc->cost.share_idle);
		else if (sc->cost.idle_by == IDLE_BY_POOL)
			for (size_t p = 0; p < np; p++)
				share_scope(&x, p, p + 1, sc->cost.share_idle);
		else
			share_scope(&x, 0, np, sc->cost.share_idle);
	}
	for (size_t w = 0; w < nw; w++) {
		const char *name = sc->workloads[w].name;
		double share = x.share[w];
		results_add_metric(r, name, METRIC_COST_TOTAL, cost[w]);
		results_add_metric(r, name, METRIC_COST_ALLOCATED, cost[w]);
		results_add_metric(r, name, METRIC_COST_IDLE, share);
		results_add_metric(r, name, METRIC_VERIFIED_RESULTS, (double)verified[w]);
		results_add_metric(r, name, METRIC_COST_PER_VERIFIED_RESULT,
				   verified[w] ? (cost[w] + share) / (double)verified[w] : NAN);
	}
	/* The bill: allocations plus idle, OpenCost's total over every
	 * allocation including __idle__. */
	results_add_metric(r, "all", METRIC_COST_TOTAL, total + idle);
	results_add_metric(r, "all", METRIC_COST_ALLOCATED, total);
	results_add_metric(r, "all", METRIC_COST_IDLE, idle);
	results_add_metric(r, "all", METRIC_VERIFIED_RESULTS, (double)all_verified);
	results_add_metric(r, "all", METRIC_COST_PER_VERIFIED_RESULT,
			   all_verified ? (total + idle) / (double)all_verified : NAN);
	free(cost);
	free(x.idle);
	free(x.wcost);
	free(x.share);
}
