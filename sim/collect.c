/*
 * collect.c - time-integrated gauges and the timeseries (see collect.h).
 */
#include "gpuplan/collect.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>


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
			c->scopes[collect_scope_pool(sc, p)].value[GAUGE_POWERED] = gpus;
			c->scopes[0].value[GAUGE_POWERED] += gpus;
		}
	}
	for (size_t w = 0; w < sc->n_workloads; w++)
		c->names[collect_scope_workload(sc, w)] = sc->workloads[w].name;
	c->step = sc->output.step;
	c->out = out;
}

void collect_free(struct collect *c)
{
	free(c->scopes);
	free(c->names);
	memset(c, 0, sizeof *c);
}

/* Brings the integrals of one scope up to time t. */
static void advance(struct collect *c, struct scope_gauges *s, sim_time t)
{
	if (!c->started || t <= s->last)
		return;
	double dt = (double)(t - s->last);
	for (int g = 0; g < GAUGE_COUNT; g++) {
		s->window[g] += s->value[g] * dt;
		s->total[g] += s->value[g] * dt;
	}
	s->last = t;
}

/* Emits the rows of the current window, which ends at window_start + step. */
static void close_window(struct collect *c, sim_time end)
{
	double len = (double)(end - c->window_start);
	for (size_t i = 0; i < c->n_scopes; i++) {
		struct scope_gauges *s = &c->scopes[i];
		advance(c, s, end);
		const double *m = s->window;
		struct ts_row row = {c->window_start, c->names[i],
			m[GAUGE_CAPACITY] / len, m[GAUGE_ALLOCATED] / len, m[GAUGE_DEMAND] / len,
			m[GAUGE_ENGINE] / len, m[GAUGE_SM] / len, m[GAUGE_VRAM] / len,
			m[GAUGE_PENDING] / len, m[GAUGE_RUNNING] / len, m[GAUGE_POWERED] / len,
			m[GAUGE_CPU] / len, m[GAUGE_RAM] / len, m[GAUGE_GPU_COST] / len,
			m[GAUGE_CPU_COST] / len, m[GAUGE_RAM_COST] / len,
			m[GAUGE_REQ_RUNNING] / len, m[GAUGE_REQ_WAITING] / len,
			m[GAUGE_KV_TOTAL] > 0 ? m[GAUGE_KV_USED] / m[GAUGE_KV_TOTAL] : NAN,
			s->preemptions};
		GP_GROW(c->out->ts, c->out->cap_ts, c->out->n_ts + 1);
		c->out->ts[c->out->n_ts++] = row;
		memset(s->window, 0, sizeof s->window);
		s->preemptions = 0;
	}
	c->window_start = end;
}

/* Closes every window that ends at or before t. */
static void roll(struct collect *c, sim_time t)
{
	while (c->window_start + c->step <= t)
		close_window(c, c->window_start + c->step);
}

void collect_start(struct collect *c, sim_time now)
{
	c->started = true;
	c->span_start = now;
	c->window_start = now >= 0 ? now - now % c->step : now - (c->step + now % c->step) % c->step;
	for (size_t i = 0; i < c->n_scopes; i++) {
		struct scope_gauges *s = &c->scopes[i];
		s->last = c->window_start;
		/* The window before the first arrival counts; the totals start at it. */
		for (int g = 0; g < GAUGE_COUNT; g++)
			s->window[g] = s->value[g] * (double)(now - c->window_start);
		s->last = now;
		memcpy(s->peak, s->value, sizeof s->peak);
	}
}

void collect_add(struct collect *c, size_t scope, enum gauge g, double delta, sim_time now)
{
	struct scope_gauges *s = &c->scopes[scope];
	if (c->started) {
		roll(c, now);
		advance(c, s, now);
	}
	s->value[g] += delta;
	if (s->value[g] < 0 && s->value[g] > -1e-9)
		s->value[g] = 0; /* float dust from adding and removing fractions */
}

void collect_preempted(struct collect *c, size_t scope, sim_time now)
{
	if (c->started)
		roll(c, now);
	c->scopes[scope].preemptions++;
}

void collect_settle(struct collect *c)
{
	for (size_t i = 0; i < c->n_scopes; i++)
		for (int g = 0; g < GAUGE_COUNT; g++)
			if (c->scopes[i].value[g] > c->scopes[i].peak[g])
				c->scopes[i].peak[g] = c->scopes[i].value[g];
}

void collect_finish(struct collect *c, sim_time end)
{
	if (!c->started)
		return;
	collect_settle(c);
	roll(c, end);
	if (end > c->window_start)
		close_window(c, end);
	for (size_t i = 0; i < c->n_scopes; i++)
		advance(c, &c->scopes[i], end);
}

