/*
 * scenario_replay.c - a twin made into the replay of its observed pods
 * (scenario.h, scenario_replay): the backtest's scenario.
 *
 * Pods are grouped by what a workload of the format can hold once: their
 * twin workload, whether they ran when the period began, and their cpu and
 * memory requests (GPUs vary per row of a trace).  A group is a workload
 * with trace rows in memory, kind service (held for wall time, not slowed by
 * sharing: the observed times already are), named after its twin workload:
 * the first group of each keeps the name, the others add "/running" (pods
 * running at the start) and "/<cpu>m-<memory>Mi" (other requests).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpuplan/history.h"

#include "scenario_int.h"

#define REPLAY_MIN_HOLD_S 0.001 /* a pod that ran for no time still takes its place */

/* Whether pod p was running when the period began (it started before it). */
static bool running_at_start(const struct history_pod *p)
{
	return !isnan(p->scheduled_s) && p->scheduled_s <= 0 && p->created_s < 0;
}

/* Seconds after the start the pod is submitted at, and held for. */
static double submit_of(const struct history_pod *p) { return p->created_s > 0 ? p->created_s : 0; }

static double hold_of(const struct history_pod *p, double span_s)
{
	if (isnan(p->scheduled_s) || isnan(p->finished_s))
		return span_s; /* censored: runs to the horizon */
	double from = p->scheduled_s > 0 ? p->scheduled_s : 0;
	double hold = p->finished_s - from;
	return hold > REPLAY_MIN_HOLD_S ? hold : REPLAY_MIN_HOLD_S;
}

/* The most units one pod of w may ask for on a node of a pool that offers them. */
static int32_t widest_for(const struct scenario *sc, const struct workload_spec *w)
{
	int32_t widest = 0;
	for (size_t p = 0; p < sc->n_pools; p++) {
		const struct pool_spec *ps = &sc->pools[p];
		int32_t most = sharing_max_units(&ps->sharing, ps->gpus_per_node);
		if (scenario_pool_offers(ps, w) && most > widest)
			widest = most;
	}
	return widest;
}

/* Why pod p stays out of the replay, or REPLAY_KEPT; *w its twin workload. */
static enum replay_skip classify(const struct scenario *sc, const struct history_pod *p,
				 const int32_t *widest, int *w)
{
	*w = scenario_workload_index(sc, p->workload);
	if (*w < 0)
		return REPLAY_UNKNOWN_WORKLOAD;
	if (isnan(p->scheduled_s) && !isnan(p->finished_s))
		return REPLAY_DELETED_PENDING;
	if (p->gpus < 1)
		return REPLAY_NO_GPUS;
	if (sc->workloads[*w].request != REQUEST_MILLI && p->gpus > widest[*w])
		return REPLAY_TOO_WIDE;
	return REPLAY_KEPT;
}

struct member {
	size_t pod;
	int32_t w;
	bool running;
	double cpu, memory, submit;
};

/* Group order: running pods first, then by twin workload and requests;
 * within a group by submission, ties in file order. */
static int cmp_member(const void *a, const void *b)
{
	const struct member *x = a, *y = b;
	if (x->running != y->running)
		return x->running ? -1 : 1;
	if (x->w != y->w)
		return x->w < y->w ? -1 : 1;
	if (x->cpu != y->cpu)
		return x->cpu < y->cpu ? -1 : 1;
	if (x->memory != y->memory)
		return x->memory < y->memory ? -1 : 1;
	if (x->submit != y->submit)
		return x->submit < y->submit ? -1 : 1;
	return (x->pod > y->pod) - (x->pod < y->pod);
}

static bool same_group(const struct member *a, const struct member *b)
{
	return a->running == b->running && a->w == b->w && a->cpu == b->cpu &&
	       a->memory == b->memory;
}

static char *group_name(const char *parent, bool running, bool first, const struct member *m)
{
	char buf[SCENARIO_MAX_NAME + 96];
	int n = snprintf(buf, sizeof buf, "%s%s", parent, running ? "/running" : "");
	if (!first && n > 0 && (size_t)n < sizeof buf)
		snprintf(buf + n, sizeof buf - (size_t)n, "%s%.0fm-%.0fMi", running ? "-" : "/",
			 m->cpu, m->memory / GP_MIB);
	return gp_xstrdup(buf);
}

/* A workload for the group of members m[0, k): parent's rules, the group's
 * requests, its pods as trace rows. */
static void make_group(struct workload_spec *g, const struct workload_spec *parent,
		       const struct member *m, size_t k, const struct history_pod *pods,
		       double span_s, char *name)
{
	*g = (struct workload_spec){0};
	g->name = name;
	g->loc = parent->loc;
	g->kind = WORKLOAD_SERVICE;
	g->request = parent->request == REQUEST_MIG || parent->request == REQUEST_MILLI
			     ? parent->request
			     : REQUEST_GPUS;
	g->mig_profile = parent->mig_profile ? gp_xstrdup(parent->mig_profile) : NULL;
	g->milli = parent->milli;
	g->gpu_busy = parent->gpu_busy;
	g->sm_share = parent->sm_share;
	g->vram_bytes = parent->inference ? 0 : parent->vram_bytes;
	g->quantization = parent->quantization;
	g->pass_rate = 1;
	g->restart_limit = parent->restart_limit;
	g->restart_backoff = parent->restart_backoff;
	g->cpu = m[0].cpu / 1000;
	g->memory_bytes = m[0].memory;
	g->pods = 1;
	g->queue = parent->queue;
	g->priority = parent->priority;
	g->deadline_kind = DEADLINE_NONE;
	ld_copy_rules(g, parent);
	g->gpu_spec = gp_xcalloc(parent->n_gpu_spec + 1, sizeof *g->gpu_spec);
	for (size_t i = 0; i < parent->n_gpu_spec; i++)
		g->gpu_spec[i] = gp_xstrdup(parent->gpu_spec[i]);
	g->n_gpu_spec = parent->n_gpu_spec;
	struct arrival *a = &g->arrival;
	a->kind = ARRIVAL_TRACE;
	a->format = TRACE_CSV;
	a->rows = gp_xcalloc(k, sizeof *a->rows);
	a->n_rows = k;
	double held = 0;
	for (size_t i = 0; i < k; i++) {
		const struct history_pod *p = &pods[m[i].pod];
		double hold = hold_of(p, span_s);
		held += hold;
		a->rows[i] = (struct trace_job){
			.submit = (sim_time)llround(m[i].submit * (double)SIM_SECOND),
			.duration = (sim_time)llround(hold * (double)SIM_SECOND),
			.deadline = SIM_NEVER,
			.gpus = g->request == REQUEST_MILLI ? 1 : p->gpus,
			.line = p->line,
			.trace_queue = SIM_NEVER};
		trace_summary_add(&a->summary, &a->rows[i]);
	}
	g->count = (int64_t)k;
	g->duration = (struct dist){.kind = DIST_FIXED, .mean = held / (double)k};
}

int scenario_replay(struct scenario *sc, const struct history_pod *pods, size_t n,
		    struct scenario_replay *out, struct gp_err *err)
{
	(void)err;
	*out = (struct scenario_replay){0};
	double span_s = (double)(sc->history.to_epoch - sc->history.from_epoch);
	int32_t *widest = gp_xcalloc(sc->n_workloads + 1, sizeof *widest);
	for (size_t w = 0; w < sc->n_workloads; w++)
		widest[w] = widest_for(sc, &sc->workloads[w]);
	out->skip = gp_xcalloc(n + 1, sizeof *out->skip);
	struct member *m = gp_xcalloc(n + 1, sizeof *m);
	size_t k = 0;
	for (size_t i = 0; i < n; i++) {
		int w;
		enum replay_skip why = classify(sc, &pods[i], widest, &w);
		out->skip[i] = (uint8_t)why;
		out->n_skipped[why]++;
		if (why == REPLAY_KEPT)
			m[k++] = (struct member){i,
						 w,
						 running_at_start(&pods[i]),
						 pods[i].cpu_milli,
						 pods[i].memory_bytes,
						 submit_of(&pods[i])};
	}
	free(widest);
	qsort(m, k, sizeof *m, cmp_member);
	size_t groups = 0;
	for (size_t i = 0; i < k; i++)
		groups += i == 0 || !same_group(&m[i - 1], &m[i]);
	struct workload_spec *ws = gp_xcalloc(groups + 1, sizeof *ws);
	out->twin_workload = gp_xcalloc(groups + 1, sizeof *out->twin_workload);
	out->running_at_start = gp_xcalloc(groups + 1, sizeof *out->running_at_start);
	out->pods = gp_xcalloc(groups + 1, sizeof *out->pods);
	out->n_pods = gp_xcalloc(groups + 1, sizeof *out->n_pods);
	size_t g = 0;
	for (size_t i = 0; i < k; g++) {
		size_t j = i + 1;
		while (j < k && same_group(&m[i], &m[j]))
			j++;
		bool first = i == 0 || m[i - 1].w != m[i].w || m[i - 1].running != m[i].running;
		const struct workload_spec *parent = &sc->workloads[m[i].w];
		make_group(&ws[g], parent, &m[i], j - i, pods, span_s,
			   group_name(parent->name, m[i].running, first, &m[i]));
		out->twin_workload[g] = m[i].w;
		out->running_at_start[g] = m[i].running;
		out->pods[g] = gp_xcalloc(j - i, sizeof **out->pods);
		for (size_t q = i; q < j; q++)
			out->pods[g][out->n_pods[g]++] = m[q].pod;
		i = j;
	}
	free(m);
	for (size_t w = 0; w < sc->n_workloads; w++)
		ld_free_workload(&sc->workloads[w]);
	free(sc->workloads);
	sc->workloads = ws;
	sc->n_workloads = groups;
	out->n_workloads = groups;
	sc->start_epoch = sc->history.from_epoch;
	sc->horizon = (sim_time)span_s * SIM_SECOND;
	sc->output.jobs = true;
	return GP_OK;
}

void scenario_replay_free(struct scenario_replay *m)
{
	for (size_t i = 0; i < m->n_workloads; i++)
		free(m->pods[i]);
	free(m->pods);
	free(m->n_pods);
	free(m->twin_workload);
	free(m->running_at_start);
	free(m->skip);
	*m = (struct scenario_replay){0};
}
