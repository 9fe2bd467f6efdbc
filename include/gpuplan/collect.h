/*
 * collect.h - gauges that the simulation moves and the collector integrates
 * over time, for the timeseries table and the time-averaged metrics.
 *
 * Scopes: 0 is "all", then one per pool, then one per workload.  A gauge
 * changes only when the simulation says so (collect_add, or collect_move for
 * all the gauges a state change moves in one scope); integrals advance
 * lazily, so a change costs O(1) and a timeseries window costs O(scopes).
 * The first change of a scope at a new instant brings its integrals up to
 * date (out of line); the others at that instant are an inline add.
 * Peaks are taken when the clock is about to move (collect_settle), over
 * the scopes that moved since the last settle only, so the transient states
 * inside one instant (a job finishing and another starting at 13:00) never
 * count as peaks and an instant costs what it changed, not O(scopes).
 *
 * Two spans: timeseries windows are aligned to multiples of `step` from the
 * scenario start, beginning with the window of the first arrival; the totals
 * (time averages, GPU-hours) cover [first arrival, end of the run].  Before
 * the first arrival only the powered GPUs are integrated, for the bill, which
 * starts at the scenario start (collect_powered_before).
 *
 * Without output.step the step adapts to the span, which is known only at
 * the end: windows start at 1m and, whenever more than COLLECT_MAX_WINDOWS
 * of them are closed, merge in place into the next readable step (5m, 15m,
 * 1h, 6h, 1d, 7d, 28d, 364d; each divides the next, so windows nest and stay
 * aligned to the scenario start; durations are at most 1000 years, which
 * keeps the longest span near 2,000 windows of 364d).  A merge sums integrals, so totals and Little's law
 * are unchanged; the rows held never exceed the bound, which keeps both the
 * database and the memory of a long run small.  The step used ends up in
 * results.step.  An explicit output.step is never changed.
 */
#ifndef GPUPLAN_COLLECT_H
#define GPUPLAN_COLLECT_H

#include "gpuplan/results.h"

#include <assert.h>

/* The gauges a pod's start and finish move come first: the block every
 * pod moves, engine and SM activity last of it (collect_move_block); then
 * the gauges of the cluster and the queue; then the rest of what a pod
 * moves, which a scenario without prices, CPU, memory or VRAM leaves at 0,
 * and the autoscaler's.  A scope integrates its gauges up to the last one
 * that ever moved (scope_gauges.pairs), so gauges that stay 0 come last.  A
 * gauge's place here changes no figure, as every gauge is summed on its own. */
enum gauge {
	GAUGE_ALLOCATED, /* GPUs */
	GAUGE_RUNNING,   /* jobs */
	GAUGE_CHARGED,   /* GPUs charged: allocated x sharing_charge (a MIG layout's
			  * unusable slices go to its tenants) */
	GAUGE_ENGINE,    /* GPUs' worth of engine activity */
	GAUGE_SM,        /* GPUs' worth of SM activity */
	GAUGE_CAPACITY,  /* GPUs */
	GAUGE_DEMAND,    /* GPUs requested by work that arrived and has not finished */
	GAUGE_PENDING,   /* jobs */
	GAUGE_POWERED,   /* GPUs powered (capacity, or only in windows with powered: window) */
	GAUGE_VRAM,      /* GiB */
	GAUGE_CPU,       /* cores allocated */
	GAUGE_RAM,       /* GiB allocated */
	GAUGE_GPU_COST,  /* $/h accruing for allocated GPUs */
	GAUGE_CPU_COST,  /* $/h for allocated cores */
	GAUGE_RAM_COST,  /* $/h for allocated memory */
	/* the autoscaler's nodes, the committed part of the bill */
	GAUGE_PROVISIONING,      /* GPUs of nodes launched and not Ready yet (autoscale.h) */
	GAUGE_POWERED_COMMITTED, /* of GAUGE_POWERED, the pool's committed GPUs (price.committed) */
	/* inference servers (vLLM's scheduler and cache gauges), last: a run
	 * without inference leaves them at 0 and does not integrate them */
	GAUGE_REQ_RUNNING, /* requests in a running batch */
	GAUGE_REQ_WAITING, /* requests arrived, not in a batch (router, tokenizer, queue) */
	GAUGE_KV_USED,     /* KV-cache blocks held by sequences */
	GAUGE_KV_TOTAL,    /* KV-cache blocks of the serving replicas */
	GAUGE_COUNT
};

/* The gauges whose peak since the span start is kept: peak_allocated_gpus,
 * a pool's capacity_gpus and an autoscaled one's most nodes,
 * peak_demand_gpus.  Settling an event costs a compare for each, not one
 * per gauge. */
enum peak { PEAK_ALLOCATED, PEAK_CAPACITY, PEAK_DEMAND, PEAK_COUNT };

/* Windows an adaptive run keeps per scope, at most. */
#define COLLECT_MAX_WINDOWS 2000

/* A scope's gauge arrays are GAUGE_COUNT rounded up to an even length: the
 * slot past the gauges stays 0, and bringing a scope up to an instant
 * (collect_catch_up, at every instant a scope changes at) goes through
 * them two doubles at a time, vectorized at -O2 too, with the same sums. */
#define GAUGE_SLOTS ((GAUGE_COUNT + 1) / 2 * 2)

struct scope_gauges {
	double value[GAUGE_SLOTS];
	double initial[GAUGE_SLOTS]; /* values before the first arrival */
	double window[GAUGE_SLOTS];  /* integral over the current window, value x µs */
	double total[GAUGE_SLOTS];   /* integral since the span start */
	double peak[PEAK_COUNT];
	double committed_before; /* of powered_before, committed GPUs' (price.committed) */
	double powered_before;   /* GPU-µs powered from the scenario start to the
				* first arrival (the bill's span, cost.h) */
	double preemptions;      /* counted in the current window (collect_preempted) */
	sim_time last;           /* integrals are up to date until here */
	bool moved;              /* changed since the last collect_settle */
	uint8_t pairs;           /* slot pairs integrated: those up to the last gauge
				  * ever moved (collect_live).  A gauge that stayed 0
				  * would add 0 to integrals that are never -0: skipping
				  * it changes no bit. */
};

/* What one workload's pods cost in one pool, by resource (GPU, CPU, RAM):
 * the cross of a workload's and a pool's cost gauges, which idle_by: pool
 * shares idle with (cost.h).  Integrated lazily, like the gauges. */
enum cost_resource { COST_GPU, COST_CPU, COST_RAM, COST_RESOURCES };
/* A cell also integrates what is charged: GPUs (as charged), cores, GiB. */
#define COST_TRACKED (2 * COST_RESOURCES)

struct cost_cell {
	int32_t pool;
	bool priced;                /* a figure other than the GPUs charged moved by
				     * more than 0: until then the others are 0 and
				     * are neither moved nor integrated (adding 0
				     * to a figure never -0 changes no bit) */
	sim_time last;              /* total is up to date until here */
	double rate[COST_TRACKED];  /* $/h accruing now by resource, then GPUs, cores, GiB */
	double total[COST_TRACKED]; /* $, then GPU-, core- and GiB-hours, since the start */
};

struct cost_cells {
	struct cost_cell *cell; /* the pools the workload's pods used, first use first */
	size_t n, cap;
};

/* idle_by: node (collect_track_nodes): what each workload's pods cost on
 * each node, and how long each node was powered, which OpenCost's
 * idleByNode shares idle with (cost.h).  Kept only when asked for:
 * workloads x nodes cells. */
struct node_costs {
	size_t n_nodes;
	struct cost_cell *cell; /* [w * n_nodes + node] */
	double *on_hours;       /* per node: hours powered, up to on_since */
	sim_time *on_since;     /* per node: powered since; -1: not powered */
};

struct collect {
	struct scope_gauges *scopes;
	struct cost_cells *cells; /* per workload */
	struct node_costs nodes;  /* idle_by: node; n_nodes 0 otherwise */
	size_t n_workloads;
	const char **names;
	size_t n_scopes;
	sim_time step;         /* current window length */
	bool adaptive;         /* no output.step: coarsen as windows accumulate */
	bool overflow;         /* an explicit step made more windows than the
				* scenario's output.max_windows: the run stops */
	size_t max_windows;    /* that limit; 0: none */
	size_t n_windows;      /* closed windows, rows from ts_first */
	size_t ts_first;       /* index of the collector's first row in out->ts */
	sim_time first_window; /* start of the earliest window held */
	double *held_kv;       /* adaptive: KV used and total integrals per window
				      * and scope (rows hold only their ratio) */
	size_t cap_held_kv;
	double *sum;         /* scratch: one window's sums per scope */
	bool started;        /* first arrival seen */
	sim_time span_start; /* first arrival */
	sim_time window_start;
	struct results *out; /* receives timeseries rows */
	size_t *moved;       /* scopes changed since the last settle */
	size_t n_moved;
};

void collect_init(struct collect *c, const struct scenario *sc, struct results *out);

/* Keeps the cost of every workload on every node, and the nodes' powered
 * hours (idle_by: node); the nodes powered now are those of cl's pools not
 * powered: window, below their initial size. */
struct cluster;
void collect_track_nodes(struct collect *c, const struct cluster *cl);

/* Node goes up (sign 1) or down (-1) at now; only when tracked. */
void collect_node_powered(struct collect *c, int32_t node, double sign, sim_time now);

/* What workload w's pods cost on node by resource, then their GPU-, core-
 * and GiB-hours (COST_TRACKED figures), and the node's powered hours, up
 * to end (tracked nodes only). */
void collect_node_cost_of(const struct collect *c, size_t w, int32_t node, sim_time end,
			  double *cost);
double collect_node_hours(const struct collect *c, int32_t node, sim_time end);
void collect_free(struct collect *c);

static inline size_t collect_scope_pool(const struct scenario *sc, size_t p)
{
	(void)sc;
	return 1 + p;
}
static inline size_t collect_scope_workload(const struct scenario *sc, size_t w)
{
	return 1 + sc->n_pools + w;
}

/* Starts the spans at the first arrival (called once, at that time). */
void collect_start(struct collect *c, sim_time now);

/* Brings scope's integrals (and the windows) up to now: the first change
 * of a scope at an instant calls it, through collect_add or collect_move.
 * Before the first arrival only the powered GPUs are integrated
 * (powered_before), for the bill. */
void collect_catch_up(struct collect *c, size_t scope, sim_time now);

/* Float dust from adding and removing fractions is a zero. */
static inline double collect_undust(double v) { return v < 0 && v > -1e-9 ? 0 : v; }

/* Adds value x dt to the integrals of slots 2k and 2k + 1 (one vector op). */
#define COLLECT_PAIR(s, k, dt)                                      \
	do {                                                        \
		for (size_t g_ = 2 * (k); g_ < 2 * (k) + 2; g_++) { \
			(s)->window[g_] += (s)->value[g_] * (dt);   \
			(s)->total[g_] += (s)->value[g_] * (dt);    \
		}                                                   \
	} while (0)

_Static_assert(GAUGE_SLOTS == 22, "collect_integrate adds 11 pairs at most");

/* Adds value x dt to the integrals of the pairs of slots up to the last
 * gauge that ever moved in s, the last pair first, each unrolled. */
static inline void collect_integrate(struct scope_gauges *s, double dt)
{
	for (size_t g = 2 * (size_t)s->pairs; g < GAUGE_SLOTS; g++)
		assert(s->value[g] == 0 && "a gauge moved without collect_live");
	switch (s->pairs) {
	case 11: COLLECT_PAIR(s, 10, dt); /* fall through */
	case 10: COLLECT_PAIR(s, 9, dt);  /* fall through */
	case 9: COLLECT_PAIR(s, 8, dt);   /* fall through */
	case 8: COLLECT_PAIR(s, 7, dt);   /* fall through */
	case 7: COLLECT_PAIR(s, 6, dt);   /* fall through */
	case 6: COLLECT_PAIR(s, 5, dt);   /* fall through */
	case 5: COLLECT_PAIR(s, 4, dt);   /* fall through */
	case 4: COLLECT_PAIR(s, 3, dt);   /* fall through */
	case 3: COLLECT_PAIR(s, 2, dt);   /* fall through */
	case 2: COLLECT_PAIR(s, 1, dt);   /* fall through */
	case 1: COLLECT_PAIR(s, 0, dt);   /* fall through */
	default: break;
	}
}

/* The first change of a scope at an instant inside the open window brings
 * its integrals up to it inline (no window closes); collect_catch_up does
 * the rest, with the same sums. */
static inline struct scope_gauges *collect_touch(struct collect *c, size_t scope, sim_time now)
{
	struct scope_gauges *s = &c->scopes[scope];
	if (now > s->last) {
		if (c->started && now < c->window_start + c->step) {
			collect_integrate(s, (double)(now - s->last));
			s->last = now;
		} else {
			collect_catch_up(c, scope, now);
		}
	}
	if (!s->moved) {
		s->moved = true;
		c->moved[c->n_moved++] = scope;
	}
	return s;
}

/* Gauges below end of scope s may be nonzero from now on: its integrals
 * advance over them too. */
static inline void collect_live(struct scope_gauges *s, size_t end)
{
	if (end > 2 * (size_t)s->pairs)
		s->pairs = (uint8_t)((end + 1) / 2);
}

/* Adds delta to gauge g of scope at time now. */
static inline void collect_add(struct collect *c, size_t scope, enum gauge g, double delta,
			       sim_time now)
{
	struct scope_gauges *s = collect_touch(c, scope, now);
	collect_live(s, (size_t)g + 1);
	s->value[g] = collect_undust(s->value[g] + delta);
}

/* Adds delta[k] to gauge first + k of s, a scope touched at this instant
 * (collect_touch), for k < n. */
static inline void collect_block(struct scope_gauges *s, enum gauge first, const double *delta,
				 size_t n)
{
	collect_live(s, (size_t)first + n);
	double *v = s->value + first;
	for (size_t k = 0; k < n; k++)
		v[k] = collect_undust(v[k] + delta[k]);
}

/* v[i] += delta[k * width + i], i < width, for each row k < n, in k's order:
 * a rise (collect_block_up). */
static inline void collect_rise(double *v, const double *delta, size_t width, size_t n)
{
	for (size_t k = 0; k < n; k++, delta += width)
		for (size_t i = 0; i < width; i++) {
			assert(delta[i] >= 0 &&
			       collect_undust(v[i] + delta[i]) == v[i] + delta[i] &&
			       "a rise lands in no dust");
			v[i] += delta[i];
		}
}

/* collect_block for a rise: every delta[k] >= 0.  Gauges are never in
 * collect_undust's dust, and none below it where a rise could land in it (a
 * gauge is a sum of what is held: >= 0, give or take dust), so each sum is
 * what collect_undust would return and it is not called (a start moves its
 * pod's gauges up, a finish down: half of the undusting a run did). */
static inline void collect_block_up(struct scope_gauges *s, enum gauge first, const double *delta,
				    size_t n)
{
	collect_live(s, (size_t)first + n);
	collect_rise(s->value + first, delta, n, 1);
}

/* Adds delta[k] to gauge first + k of scope at time now, for k < n: the
 * same values as one collect_add per gauge, in a loop that vectorizes. */
static inline void collect_move_block(struct collect *c, size_t scope, enum gauge first,
				      const double *delta, size_t n, sim_time now)
{
	collect_block(collect_touch(c, scope, now), first, delta, n);
}

/* Adds delta[k * width + i] to gauge first + i of scope at time now, for
 * i < width and k < n: the same values as one collect_move_block per k, in
 * k's order, at the cost of one touch. */
static inline void collect_move_rows(struct collect *c, size_t scope, enum gauge first,
				     size_t width, const double *delta, size_t n, sim_time now)
{
	struct scope_gauges *s = collect_touch(c, scope, now);
	collect_live(s, (size_t)first + width);
	double *v = s->value + first;
	for (size_t k = 0; k < n; k++, delta += width)
		for (size_t i = 0; i < width; i++)
			v[i] = collect_undust(v[i] + delta[i]);
}

/* collect_move_rows for a rise (collect_block_up): every delta >= 0. */
static inline void collect_move_rows_up(struct collect *c, size_t scope, enum gauge first,
					size_t width, const double *delta, size_t n, sim_time now)
{
	struct scope_gauges *s = collect_touch(c, scope, now);
	collect_live(s, (size_t)first + width);
	collect_rise(s->value + first, delta, width, n);
}

/* Adds delta[k] to gauge gauges[k] of scope at time now, for k < n: the
 * same values as one collect_add per gauge, at the cost of one touch.  The
 * last gauge of the list is its largest. */
static inline void collect_move(struct collect *c, size_t scope, const uint8_t *gauges,
				const double *delta, size_t n, sim_time now)
{
	struct scope_gauges *s = collect_touch(c, scope, now);
	if (n)
		collect_live(s, (size_t)gauges[n - 1] + 1);
	for (size_t k = 0; k < n; k++) {
		assert(gauges[k] <= gauges[n - 1] && "a gauge list ends with its largest");
		s->value[gauges[k]] = collect_undust(s->value[gauges[k]] + delta[k]);
	}
}

/* The figure of a cell that is not priced (struct cost_cell). */
#define COST_CHARGED (COST_RESOURCES + COST_GPU)

/* Brings cell x's totals up to t. */
static inline void collect_cost_advance(struct cost_cell *x, sim_time t)
{
	if (t <= x->last)
		return;
	if (!x->priced)
		x->total[COST_CHARGED] +=
			x->rate[COST_CHARGED] * (double)(t - x->last) / (double)SIM_HOUR;
	else
		for (int k = 0; k < COST_TRACKED; k++)
			x->total[k] += x->rate[k] * (double)(t - x->last) / (double)SIM_HOUR;
	x->last = t;
}

static inline void collect_cost_cell_move(struct cost_cell *x, const double *delta, bool priced,
					  sim_time now)
{
	collect_cost_advance(x, now);
	x->priced |= priced;
	if (!x->priced) {
		x->rate[COST_CHARGED] = collect_undust(x->rate[COST_CHARGED] + delta[COST_CHARGED]);
		return;
	}
	for (int k = 0; k < COST_TRACKED; k++)
		x->rate[k] = collect_undust(x->rate[k] + delta[k]);
}

/* Adds workload w's cell for pool, the first time its pods use pool. */
struct cost_cell *collect_cost_cell_new(struct collect *c, size_t w, int32_t pool);

_Static_assert(COST_TRACKED == 6 && COST_CHARGED == 3, "the priced test reads five figures");

/* Adds delta[r] $/h of resource r to what workload w's pods accrue in pool,
 * on node, at time now (beside the cost gauges of its scopes), and
 * delta[COST_RESOURCES + r] of what they hold (GPUs as charged, cores, GiB).
 * The cell of workload w in pool is made on first use: a workload's pods use
 * few pools, so the search is short and a cell is made once per pool. */
static inline void collect_cost_move(struct collect *c, size_t w, int32_t pool, int32_t node,
				     const double *delta, sim_time now)
{
	bool priced = (delta[0] != 0) | (delta[1] != 0) | (delta[2] != 0) | (delta[4] != 0) |
		      (delta[5] != 0);
	struct cost_cells *cs = &c->cells[w];
	struct cost_cell *x = NULL;
	for (size_t i = 0; i < cs->n && !x; i++)
		if (cs->cell[i].pool == pool)
			x = &cs->cell[i];
	collect_cost_cell_move(x ? x : collect_cost_cell_new(c, w, pool), delta, priced, now);
	if (c->nodes.n_nodes)
		collect_cost_cell_move(&c->nodes.cell[w * c->nodes.n_nodes + (size_t)node], delta,
				       priced, now);
}

/* What workload w's pods cost in pool by resource until end, into cost[r]
 * (zeros where it never ran). */
void collect_cost_of(const struct collect *c, size_t w, int32_t pool, sim_time end, double *cost);

/* Counts one preemption of scope at time now (a counter: the timeseries
 * row holds the number in its window, not a time average). */
void collect_preempted(struct collect *c, size_t scope, sim_time now);

/* Called when the clock is about to leave `now`: records the peaks of the
 * scopes that moved. */
void collect_settle(struct collect *c);

/* Closes the last window and the totals at `end`. */
void collect_finish(struct collect *c, sim_time end);

/* The step a run of sc ends with, at least: its output.step, or, adaptive,
 * the first readable step whose COLLECT_MAX_WINDOWS windows hold the span
 * the scenario is known to reach (scenario_known_span).  Rows made at a
 * finer step will be merged; a writer that stores rows while the run goes
 * on (store_writer) waits for this step, so that a merge rarely rewrites
 * rows it stored (results.ts_merges). */
sim_time collect_least_step(const struct scenario *sc);

/* The start of the first timeseries window (the end of the run when nothing
 * arrived): the bill's part before it is collect_powered_before's. */
sim_time collect_span_from(const struct collect *c, sim_time end);

/* GPU-hours powered in scope (a pool, or all) from the scenario start to
 * collect_span_from: the time before the first arrival, less the part of it
 * that the first window already holds at the value of the first arrival. */
double collect_powered_before(const struct collect *c, size_t scope, sim_time end);
/* Of them, the committed GPUs' (GAUGE_POWERED_COMMITTED). */
double collect_committed_before(const struct collect *c, size_t scope, sim_time end);

#endif
