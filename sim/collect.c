/*
 * collect.c - time-integrated gauges and the timeseries (see collect.h).
 */
#include "gpuplan/collect.h"

#include "gpuplan/cluster.h"

#include <assert.h>
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

_Static_assert(COLLECT_MAX_WINDOWS == SCENARIO_ADAPTIVE_WINDOWS,
	       "the loader estimates rows with the collector's window count");

/* The readable steps of an adaptive run, finest first; each divides the
 * next, so a coarser window is a whole number of finer ones.  The issue's
 * units (1m to 7d), then 4 and 52 weeks, so that spans past 38 years (2,000
 * weeks) stay bounded too. */
static const sim_time auto_steps[] = {SIM_MINUTE,  5 * SIM_MINUTE, 15 * SIM_MINUTE,
				      SIM_HOUR,    6 * SIM_HOUR,   SIM_DAY,
				      7 * SIM_DAY, 28 * SIM_DAY,   364 * SIM_DAY};
#define N_AUTO_STEPS (sizeof auto_steps / sizeof auto_steps[0])

/* Where each gauge's window mean sits in a timeseries row; the KV-cache
 * gauges have none (the row holds their ratio), so a merge keeps their
 * integrals aside (collect.held_kv). */
#define NO_FIELD SIZE_MAX
static const size_t row_field[GAUGE_COUNT] = {
	[GAUGE_CAPACITY] = offsetof(struct ts_row, gpus_capacity),
	[GAUGE_ALLOCATED] = offsetof(struct ts_row, gpus_allocated),
	[GAUGE_DEMAND] = offsetof(struct ts_row, gpus_demand),
	[GAUGE_ENGINE] = offsetof(struct ts_row, engine_active),
	[GAUGE_SM] = offsetof(struct ts_row, sm_active),
	[GAUGE_VRAM] = offsetof(struct ts_row, vram_used_gib),
	[GAUGE_PENDING] = offsetof(struct ts_row, pending),
	[GAUGE_RUNNING] = offsetof(struct ts_row, running),
	[GAUGE_POWERED] = offsetof(struct ts_row, powered_gpus),
	[GAUGE_CPU] = offsetof(struct ts_row, cpu_cores),
	[GAUGE_RAM] = offsetof(struct ts_row, ram_gib),
	[GAUGE_GPU_COST] = offsetof(struct ts_row, gpu_cost_per_h),
	[GAUGE_CPU_COST] = offsetof(struct ts_row, cpu_cost_per_h),
	[GAUGE_RAM_COST] = offsetof(struct ts_row, ram_cost_per_h),
	[GAUGE_CHARGED] = offsetof(struct ts_row, gpus_charged),
	[GAUGE_POWERED_COMMITTED] = offsetof(struct ts_row, powered_committed_gpus),
	[GAUGE_REQ_RUNNING] = offsetof(struct ts_row, requests_running),
	[GAUGE_REQ_WAITING] = offsetof(struct ts_row, requests_waiting),
	[GAUGE_KV_USED] = NO_FIELD,
	[GAUGE_KV_TOTAL] = NO_FIELD,
	[GAUGE_PROVISIONING] = offsetof(struct ts_row, gpus_provisioning)};

static double *field(struct ts_row *row, size_t g)
{
	return (double *)((char *)row + row_field[g]);
}

/* A merge's sums per scope: the gauges' integrals, then the preemptions. */
#define SUMS (GAUGE_COUNT + 1)

/* The integral of gauge g over window k of scope i, whose rows hold means. */
static double window_integral(const struct collect *c, size_t k, size_t i, size_t g, double len)
{
	if (row_field[g] == NO_FIELD)
		return c->held_kv[(k * c->n_scopes + i) * 2 + (g == GAUGE_KV_TOTAL)];
	return *field(&c->out->ts[c->ts_first + k * c->n_scopes + i], g) * len;
}

/* Fills window k's rows from the sums of its scopes over len µs. */
static void fill_window(struct collect *c, size_t k, sim_time t, double len, const double *sum)
{
	if (c->adaptive)
		GP_GROW(c->held_kv, c->cap_held_kv, (k + 1) * c->n_scopes * 2);
	for (size_t i = 0; i < c->n_scopes; i++) {
		const double *m = &sum[i * SUMS];
		struct ts_row *row = &c->out->ts[c->ts_first + k * c->n_scopes + i];
		row->t = t;
		row->scope = c->names[i];
		for (size_t g = 0; g < GAUGE_COUNT; g++)
			if (row_field[g] != NO_FIELD)
				*field(row, g) = m[g] / len;
		row->kv_cache_usage =
			m[GAUGE_KV_TOTAL] > 0 ? m[GAUGE_KV_USED] / m[GAUGE_KV_TOTAL] : NAN;
		row->preemptions = m[GAUGE_COUNT];
		if (c->adaptive) {
			c->held_kv[(k * c->n_scopes + i) * 2] = m[GAUGE_KV_USED];
			c->held_kv[(k * c->n_scopes + i) * 2 + 1] = m[GAUGE_KV_TOTAL];
		}
	}
}

/* The start of the window of length step that holds t (floor, also below 0). */
static sim_time align_down(sim_time t, sim_time step)
{
	sim_time r = t % step;
	return r < 0 ? t - r - step : t - r;
}

void collect_init(struct collect *c, const struct scenario *sc, struct results *out)
{
	memset(c, 0, sizeof *c);
	c->n_scopes = 1 + sc->n_pools + sc->n_workloads;
	c->scopes = gp_xcalloc(c->n_scopes, sizeof *c->scopes);
	c->names = gp_xcalloc(c->n_scopes, sizeof *c->names);
	c->names[0] = "all";
	for (size_t p = 0; p < sc->n_pools; p++) {
		const struct pool_spec *ps = &sc->pools[p];
		double gpus = (double)ps->nodes * ps->gpus_per_node;
		c->names[collect_scope_pool(sc, p)] = ps->name;
		c->scopes[collect_scope_pool(sc, p)].value[GAUGE_CAPACITY] = gpus;
		c->scopes[0].value[GAUGE_CAPACITY] += gpus;
		if (!ps->powered_in_windows) { /* otherwise the window events power it */
			double committed = fmin(gpus, ps->price.committed);
			c->scopes[collect_scope_pool(sc, p)].value[GAUGE_POWERED] = gpus;
			c->scopes[0].value[GAUGE_POWERED] += gpus;
			c->scopes[collect_scope_pool(sc, p)].value[GAUGE_POWERED_COMMITTED] =
				committed;
			c->scopes[0].value[GAUGE_POWERED_COMMITTED] += committed;
		}
	}
	for (size_t w = 0; w < sc->n_workloads; w++)
		c->names[collect_scope_workload(sc, w)] = sc->workloads[w].name;
	for (size_t i = 0; i < c->n_scopes; i++)
		for (size_t g = 0; g < GAUGE_COUNT; g++)
			if (c->scopes[i].value[g] != 0)
				collect_live(&c->scopes[i], g + 1);
	c->cells = gp_xcalloc(sc->n_workloads + 1, sizeof *c->cells);
	c->n_workloads = sc->n_workloads;
	c->adaptive = sc->output.step <= 0;
	c->max_windows = (size_t)sc->output.max_windows;
	c->step = c->adaptive ? auto_steps[0] : sc->output.step;
	c->out = out;
	c->ts_first = out->n_ts;
	c->sum = gp_xcalloc(c->n_scopes * SUMS, sizeof *c->sum);
	c->moved = gp_xcalloc(c->n_scopes, sizeof *c->moved);
	out->step = c->step;
}

void collect_track_nodes(struct collect *c, const struct cluster *cl)
{
	struct node_costs *nc = &c->nodes;
	nc->n_nodes = cl->n_nodes;
	nc->cell = gp_xcalloc(c->n_workloads * cl->n_nodes + 1, sizeof *nc->cell);
	nc->on_hours = gp_xcalloc(cl->n_nodes + 1, sizeof *nc->on_hours);
	nc->on_since = gp_xcalloc(cl->n_nodes + 1, sizeof *nc->on_since);
	for (size_t i = 0; i < cl->n_nodes; i++)
		nc->on_since[i] = -1;
	for (size_t p = 0; p < cl->n_pools; p++) {
		const struct pool_spec *ps = &cl->sc->pools[p];
		if (ps->powered_in_windows)
			continue; /* the window events power them */
		for (int32_t k = 0; k < ps->nodes && k < cl->pools[p].n_nodes; k++)
			nc->on_since[cl->pools[p].first_node + k] = 0;
	}
}

void collect_node_powered(struct collect *c, int32_t node, double sign, sim_time now)
{
	struct node_costs *nc = &c->nodes;
	if (!nc->n_nodes)
		return;
	if (sign > 0 && nc->on_since[node] < 0) {
		nc->on_since[node] = now;
	} else if (sign < 0 && nc->on_since[node] >= 0) {
		nc->on_hours[node] += sim_seconds(now - nc->on_since[node]) / 3600;
		nc->on_since[node] = -1;
	}
}

double collect_node_hours(const struct collect *c, int32_t node, sim_time end)
{
	const struct node_costs *nc = &c->nodes;
	sim_time since = nc->on_since[node];
	return nc->on_hours[node] +
	       (since >= 0 && end > since ? sim_seconds(end - since) / 3600 : 0);
}

void collect_free(struct collect *c)
{
	free(c->nodes.cell);
	free(c->nodes.on_hours);
	free(c->nodes.on_since);
	for (size_t w = 0; c->cells && w < c->n_workloads; w++)
		free(c->cells[w].cell);
	free(c->cells);
	free(c->scopes);
	free(c->names);
	free(c->sum);
	free(c->held_kv);
	free(c->moved);
	memset(c, 0, sizeof *c);
}

/* Brings the integrals of one scope up to time t. */
static inline void advance(struct collect *c, struct scope_gauges *s, sim_time t)
{
	if (!c->started || t <= s->last)
		return;
	collect_integrate(s, (double)(t - s->last));
	s->last = t;
}

static void coarsen(struct collect *c);

/* Emits the rows of the current window, which ends at window_start + step
 * (or earlier, for the last window of the run). */
static void close_window(struct collect *c, sim_time end)
{
	double len = (double)(end - c->window_start);
	GP_GROW(c->out->ts, c->out->cap_ts, c->out->n_ts + c->n_scopes);
	c->out->n_ts += c->n_scopes;
	double *sum = c->sum;
	for (size_t i = 0; i < c->n_scopes; i++) {
		struct scope_gauges *s = &c->scopes[i];
		advance(c, s, end);
		memcpy(&sum[i * SUMS], s->window, GAUGE_COUNT * sizeof *s->window);
		sum[i * SUMS + GAUGE_COUNT] = s->preemptions;
		memset(s->window, 0, sizeof s->window);
		s->preemptions = 0;
	}
	fill_window(c, c->n_windows, c->window_start, len, sum);
	c->window_start = end;
	c->n_windows++;
	c->overflow |= !c->adaptive && c->max_windows && c->n_windows > c->max_windows;
	while (c->adaptive && c->n_windows > COLLECT_MAX_WINDOWS &&
	       c->step < auto_steps[N_AUTO_STEPS - 1])
		coarsen(c);
}

/* Adds window k's integrals (len µs long) and preemptions to sum. */
static void add_window(struct collect *c, size_t k, double len, double *sum)
{
	for (size_t i = 0; i < c->n_scopes; i++) {
		for (size_t g = 0; g < GAUGE_COUNT; g++)
			sum[i * SUMS + g] += window_integral(c, k, i, g, len);
		sum[i * SUMS + GAUGE_COUNT] +=
			c->out->ts[c->ts_first + k * c->n_scopes + i].preemptions;
	}
}

/* Adds the values before the first arrival over len µs (the part of the
 * first coarse window that lies before the first window held). */
static void add_initial(struct collect *c, double len, double *sum)
{
	for (size_t i = 0; i < c->n_scopes; i++)
		for (size_t g = 0; g < GAUGE_COUNT; g++)
			sum[i * SUMS + g] += c->scopes[i].initial[g] * len;
}

/*
 * Merges the windows held into the next readable step.  A complete coarse
 * window becomes one row per scope (its integrals over its length); the one
 * that holds the open window goes back into the open window's integrals, and
 * the open window then starts where it does (at the end of the run too:
 * collect_finish then closes it again).  Rows are rewritten in place: a
 * coarse window never starts after the first fine window it absorbs.
 */
static void coarsen(struct collect *c)
{
	size_t k = 0;
	while (k < N_AUTO_STEPS - 1 && auto_steps[k] <= c->step)
		k++;
	sim_time to = auto_steps[k], now = c->window_start;
	size_t out = 0, i = 0;
	double *sum = c->sum;
	sim_time first = align_down(c->first_window, to);
	while (i < c->n_windows) {
		sim_time start = align_down(c->out->ts[c->ts_first + i * c->n_scopes].t, to);
		sim_time end = start + to;
		memset(sum, 0, c->n_scopes * SUMS * sizeof *sum);
		if (start == first)
			add_initial(c, (double)(c->first_window - first), sum);
		for (; i < c->n_windows; i++) {
			sim_time t = c->out->ts[c->ts_first + i * c->n_scopes].t;
			if (t >= end)
				break;
			sim_time t_end = t + c->step < now ? t + c->step : now;
			add_window(c, i, (double)(t_end - t), sum);
		}
		if (end > now) { /* the open window's coarse window */
			for (size_t s = 0; s < c->n_scopes; s++) {
				for (size_t g = 0; g < GAUGE_COUNT; g++)
					c->scopes[s].window[g] += sum[s * SUMS + g];
				c->scopes[s].preemptions += sum[s * SUMS + GAUGE_COUNT];
			}
			c->window_start = start;
			break;
		}
		fill_window(c, out++, start, (double)(end - start), sum);
	}
	c->n_windows = out;
	c->out->n_ts = c->ts_first + out * c->n_scopes;
	c->first_window = first;
	c->step = to;
	c->out->step = to;
	c->out->ts_merges++;
}

/* Closes every window that ends at or before t. */
static void roll(struct collect *c, sim_time t)
{
	while (c->window_start + c->step <= t && !c->overflow)
		close_window(c, c->window_start + c->step);
}

/* The gauge of each peak (enum peak). */
static const enum gauge peak_gauge[PEAK_COUNT] = {
	[PEAK_ALLOCATED] = GAUGE_ALLOCATED,
	[PEAK_CAPACITY] = GAUGE_CAPACITY,
	[PEAK_DEMAND] = GAUGE_DEMAND,
};

void collect_start(struct collect *c, sim_time now)
{
	c->started = true;
	c->span_start = now;
	c->window_start = align_down(now, c->step);
	c->first_window = c->window_start;
	for (size_t i = 0; i < c->n_scopes; i++) {
		struct scope_gauges *s = &c->scopes[i];
		s->powered_before += s->value[GAUGE_POWERED] * (double)(now - s->last);
		s->committed_before += s->value[GAUGE_POWERED_COMMITTED] * (double)(now - s->last);
		memcpy(s->initial, s->value, sizeof s->initial);
		/* The window before the first arrival counts; the totals start at it. */
		for (int g = 0; g < GAUGE_COUNT; g++)
			s->window[g] = s->value[g] * (double)(now - c->window_start);
		s->last = now;
		for (int k = 0; k < PEAK_COUNT; k++)
			s->peak[k] = s->value[peak_gauge[k]];
	}
}

void collect_catch_up(struct collect *c, size_t scope, sim_time now)
{
	if (!c->started) {
		struct scope_gauges *s = &c->scopes[scope];
		s->powered_before += s->value[GAUGE_POWERED] * (double)(now - s->last);
		s->committed_before += s->value[GAUGE_POWERED_COMMITTED] * (double)(now - s->last);
		s->last = now;
		return;
	}
	roll(c, now);
	advance(c, &c->scopes[scope], now);
}

/* Values only change through collect_touch, which lists the scope; the
 * others' peaks are already at least their values. */
void collect_settle(struct collect *c)
{
	for (size_t k = 0; k < c->n_moved; k++) {
		struct scope_gauges *s = &c->scopes[c->moved[k]];
		for (int p = 0; p < PEAK_COUNT; p++) {
			double v = s->value[peak_gauge[p]];
			s->peak[p] = v > s->peak[p] ? v : s->peak[p];
		}
		s->moved = false;
	}
	c->n_moved = 0;
}

sim_time collect_span_from(const struct collect *c, sim_time end)
{
	return c->started ? c->first_window : end;
}

static double before_of(const struct collect *c, const struct scope_gauges *s, double integral,
			enum gauge g, sim_time end)
{
	double before =
		c->started ? integral - s->initial[g] * (double)(c->span_start - c->first_window)
			   : integral + s->value[g] * (double)(end - s->last);
	return fmax(0, before) / (double)SIM_HOUR;
}

double collect_powered_before(const struct collect *c, size_t scope, sim_time end)
{
	const struct scope_gauges *s = &c->scopes[scope];
	return before_of(c, s, s->powered_before, GAUGE_POWERED, end);
}

double collect_committed_before(const struct collect *c, size_t scope, sim_time end)
{
	const struct scope_gauges *s = &c->scopes[scope];
	return before_of(c, s, s->committed_before, GAUGE_POWERED_COMMITTED, end);
}

void collect_finish(struct collect *c, sim_time end)
{
	if (!c->started)
		return;
	collect_settle(c);
	roll(c, end);
	while (end > c->window_start) /* again if coarsening reopened a longer window */
		close_window(c, end);
	for (size_t i = 0; i < c->n_scopes; i++)
		advance(c, &c->scopes[i], end);
}

sim_time collect_least_step(const struct scenario *sc)
{
	if (sc->output.step > 0)
		return sc->output.step;
	double span = (double)scenario_known_span(sc);
	size_t k = 0;
	while (k < N_AUTO_STEPS - 1 && span / (double)auto_steps[k] > COLLECT_MAX_WINDOWS)
		k++;
	return auto_steps[k];
}

/* The cells double from one, not GP_GROW's 16: a pinned workload uses one
 * pool, and 16 cells of 112 bytes for each of 86,000 were 150 MB. */
struct cost_cell *collect_cost_cell_new(struct collect *c, size_t w, int32_t pool)
{
	struct cost_cells *cs = &c->cells[w];
	if (cs->n == cs->cap) {
		cs->cap = cs->cap ? 2 * cs->cap : 1;
		cs->cell = gp_xrealloc(cs->cell, cs->cap * sizeof *cs->cell);
	}
	cs->cell[cs->n] = (struct cost_cell){.pool = pool};
	return &cs->cell[cs->n++];
}

void collect_node_cost_of(const struct collect *c, size_t w, int32_t node, sim_time end,
			  double *cost)
{
	struct cost_cell x = c->nodes.cell[w * c->nodes.n_nodes + (size_t)node];
	collect_cost_advance(&x, end);
	for (int k = 0; k < COST_TRACKED; k++)
		cost[k] = x.total[k];
}

void collect_cost_of(const struct collect *c, size_t w, int32_t pool, sim_time end, double *cost)
{
	const struct cost_cells *cs = &c->cells[w];
	for (int k = 0; k < COST_RESOURCES; k++)
		cost[k] = 0;
	for (size_t i = 0; i < cs->n; i++) {
		if (cs->cell[i].pool != pool)
			continue;
		struct cost_cell x = cs->cell[i];
		collect_cost_advance(&x, end);
		for (int k = 0; k < COST_RESOURCES; k++)
			cost[k] = x.total[k];
	}
}

void collect_preempted(struct collect *c, size_t scope, sim_time now)
{
	if (c->started)
		roll(c, now);
	c->scopes[scope].preemptions++;
}
