/*
 * backtest.c - the replay of a twin's history beside the history itself
 * (see backtest.h).
 *
 * Both sides are reduced by one function from per-pod spans (created,
 * started, ended, GPUs): the history's from the observed pods CSV, the
 * replay's from the run's job rows, whose order within a replay workload is
 * the order of its pods (scenario_replay).  What the replay could not model
 * is read from the history: the pods it left out, pods without a node, more
 * nodes than the pools have, lower-priority pods that ended early where
 * priorities differ, gangs replayed pod by pod.
 */
#include "gpuplan/backtest.h"

#include <gsl/gsl_statistics_double.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "gpuplan/json.h"
#include "gpuplan/report.h"
#include "gpuplan/run.h"
#include "gpuplan/store.h"
#include "gpuplan/sort.h"

/* One pod on one side: NAN start = never started. */
struct span {
	double created; /* seconds since the period's start */
	double start, end;
	int32_t gpus;
	int32_t scope; /* the twin's workload; -1: none of the twin's */
};

int backtest_prepare(struct backtest *b, const char *path, struct gp_err *err)
{
	*b = (struct backtest){0};
	int rc = scenario_load(path, NULL, 0, &b->twin, err);
	if (rc)
		return rc;
	if (!b->twin->history.on)
		return gp_located(err, (struct srcloc){path, 1, 1},
				  "no history section, so there is nothing to replay; expected a "
				  "twin written by `gpuplan import --history` (history: {from, to, "
				  "pods})");
	const struct history_spec *h = &b->twin->history;
	rc = history_read_pods(h->pods_path, h->pods_loc, (double)(h->to_epoch - h->from_epoch),
			       &b->pods, &b->n_pods, err);
	if (!rc)
		rc = scenario_load(path, NULL, 0, &b->replay, err);
	if (!rc)
		rc = scenario_replay(b->replay, b->pods, b->n_pods, &b->map, err);
	return rc;
}

void backtest_free(struct backtest *b)
{
	scenario_replay_free(&b->map);
	history_free_pods(b->pods, b->n_pods);
	scenario_free(b->replay);
	scenario_free(b->twin);
	*b = (struct backtest){0};
}

/* --- the figures --------------------------------------------------------------- */

struct edge {
	double t;
	int32_t gpus; /* + at a start, - at an end */
};

static int cmp_edge(const void *a, const void *b)
{
	const struct edge *x = a, *y = b;
	if (x->t != y->t)
		return x->t < y->t ? -1 : 1;
	return (x->gpus > y->gpus) - (x->gpus < y->gpus); /* ends first */
}

/* The five figures of the spans of scope (-2: all), in backtest_metric_names' order. */
static void figures(const struct span *s, size_t n, int32_t scope, double span_s, double *out)
{
	double *queue = gp_xcalloc(n + 1, sizeof *queue);
	struct edge *edges = gp_xcalloc(2 * n + 1, sizeof *edges);
	size_t nq = 0, ne = 0;
	double started = 0, gpu_s = 0;
	for (size_t i = 0; i < n; i++) {
		if ((scope != -2 && s[i].scope != scope) || isnan(s[i].start))
			continue;
		started++;
		if (s[i].created >= 0)
			queue[nq++] = s[i].start - s[i].created;
		double from = fmax(s[i].start, 0), to = fmin(s[i].end, span_s);
		if (to > from) {
			gpu_s += s[i].gpus * (to - from);
			edges[ne++] = (struct edge){from, s[i].gpus};
			edges[ne++] = (struct edge){to, -s[i].gpus};
		}
	}
	sort_doubles(queue, nq);
	qsort(edges, ne, sizeof *edges, cmp_edge);
	double held = 0, peak = 0;
	for (size_t i = 0; i < ne; i++) {
		held += edges[i].gpus;
		peak = fmax(peak, held);
	}
	out[0] = started;
	out[1] = nq ? gsl_stats_mean(queue, 1, nq) : NAN;
	out[2] = nq ? gsl_stats_quantile_from_sorted_data(queue, 1, nq, 0.95) : NAN;
	out[3] = gpu_s / 3600;
	out[4] = peak;
	free(queue);
	free(edges);
}

static double relative_error(double observed, double simulated)
{
	if (isnan(observed) || isnan(simulated))
		return NAN;
	if (observed == 0)
		return simulated == 0 ? 0 : NAN;
	return (simulated - observed) / observed;
}

static void add_rows(struct results *r, const char *scope, const double *obs, const double *sim)
{
	r->backtest = gp_xrealloc(r->backtest,
				  (r->n_backtest + RESULTS_BACKTEST_METRICS) * sizeof *r->backtest);
	for (int m = 0; m < RESULTS_BACKTEST_METRICS; m++)
		r->backtest[r->n_backtest++] =
			(struct backtest_row){gp_xstrdup(scope), backtest_metric_names[m], obs[m],
					      sim[m], relative_error(obs[m], sim[m])};
}

/* The history's spans: every pod of the file. */
static struct span *observed_spans(const struct backtest *b, double span_s)
{
	struct span *s = gp_xcalloc(b->n_pods + 1, sizeof *s);
	for (size_t i = 0; i < b->n_pods; i++) {
		const struct history_pod *p = &b->pods[i];
		s[i] = (struct span){p->created_s, p->scheduled_s,
				     isnan(p->finished_s) ? span_s : p->finished_s, p->gpus,
				     (int32_t)scenario_workload_index(b->twin, p->workload)};
	}
	return s;
}

/* The replay's spans: the pods it held, from the run's job rows. */
static struct span *simulated_spans(const struct backtest *b, const struct results *r,
				    double span_s, size_t *n)
{
	struct span *s = gp_xcalloc(b->n_pods + 1, sizeof *s);
	size_t *next = gp_xcalloc(b->map.n_workloads + 1, sizeof *next);
	*n = 0;
	for (size_t i = 0; i < r->n_jobs; i++) {
		const struct job_record *j = &r->jobs[i];
		size_t w = (size_t)j->workload;
		if (j->workload < 0 || w >= b->map.n_workloads || next[w] >= b->map.n_pods[w])
			continue;
		const struct history_pod *p = &b->pods[b->map.pods[w][next[w]++]];
		double start = j->start == SIM_NEVER ? NAN : sim_seconds(j->start);
		double end = j->end == SIM_NEVER ? span_s : sim_seconds(j->end);
		s[(*n)++] =
			(struct span){p->created_s, start, end, j->gpus, b->map.twin_workload[w]};
	}
	free(next);
	return s;
}

/* --- what it could not model ---------------------------------------------------- */

static void add_gap(struct results *r, enum backtest_gap_kind kind, int64_t pods, int64_t figure,
		    const char *example)
{
	if (pods <= 0)
		return;
	r->gaps = gp_xrealloc(r->gaps, (r->n_gaps + 1) * sizeof *r->gaps);
	r->gaps[r->n_gaps++] = (struct backtest_gap){(uint8_t)kind, pods, figure,
						     example ? gp_xstrdup(example) : NULL};
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Distinct nodes the history's pods ran on, and the first of them by name. */
static int64_t distinct_nodes(const struct backtest *b, const char **first)
{
	const char **names = gp_xcalloc(b->n_pods + 1, sizeof *names);
	size_t k = 0;
	for (size_t i = 0; i < b->n_pods; i++)
		if (b->pods[i].node[0])
			names[k++] = b->pods[i].node;
	qsort(names, k, sizeof *names, cmp_str);
	int64_t d = 0;
	for (size_t i = 0; i < k; i++)
		d += i == 0 || strcmp(names[i], names[i - 1]);
	*first = k ? names[0] : NULL;
	free(names);
	return d;
}

/* Lower-priority pods that ended Failed or Deleted before the end, where the
 * twin's workloads have more than one priority: kube-scheduler's preemption
 * (or an eviction) the replay, holding each pod for its observed time, does
 * not make happen. */
static void preemption_gap(const struct backtest *b, struct results *r, double span_s)
{
	const struct scenario *tw = b->twin;
	if (!tw->n_workloads)
		return;
	int32_t top = tw->workloads[0].priority;
	bool differ = false;
	for (size_t w = 0; w < tw->n_workloads; w++) {
		differ |= tw->workloads[w].priority != tw->workloads[0].priority;
		top = tw->workloads[w].priority > top ? tw->workloads[w].priority : top;
	}
	if (!differ)
		return;
	int64_t n = 0;
	const char *example = NULL;
	for (size_t i = 0; i < b->n_pods; i++) {
		const struct history_pod *p = &b->pods[i];
		int w = scenario_workload_index(tw, p->workload);
		bool ended = !isnan(p->scheduled_s) && !isnan(p->finished_s) &&
			     p->finished_s < span_s &&
			     (p->phase == HISTORY_FAILED || p->phase == HISTORY_DELETED);
		if (w >= 0 && ended && tw->workloads[w].priority < top) {
			n++;
			example = example ? example : p->workload;
		}
	}
	add_gap(r, GAP_PREEMPTION, n, 0, example);
}

static void find_gaps(const struct backtest *b, struct results *r, double span_s)
{
	static const enum backtest_gap_kind skips[] = {
		[REPLAY_UNKNOWN_WORKLOAD] = GAP_UNKNOWN_WORKLOAD,
		[REPLAY_DELETED_PENDING] = GAP_DELETED_PENDING,
		[REPLAY_NO_GPUS] = GAP_NO_GPUS,
		[REPLAY_TOO_WIDE] = GAP_TOO_WIDE};
	for (int k = REPLAY_UNKNOWN_WORKLOAD; k <= REPLAY_TOO_WIDE; k++) {
		const char *example = NULL;
		for (size_t i = 0; i < b->n_pods && !example; i++)
			if (b->map.skip[i] == k)
				example = k == REPLAY_UNKNOWN_WORKLOAD ? b->pods[i].workload
								       : b->pods[i].pod;
		add_gap(r, skips[k], (int64_t)b->map.n_skipped[k], 0, example);
	}
	int64_t no_node = 0;
	const char *example = NULL;
	for (size_t i = 0; i < b->n_pods; i++)
		if (!isnan(b->pods[i].scheduled_s) && !b->pods[i].node[0]) {
			no_node++;
			example = example ? example : b->pods[i].pod;
		}
	add_gap(r, GAP_NO_NODE, no_node, 0, example);
	int64_t nodes = 0;
	for (size_t p = 0; p < b->twin->n_pools; p++)
		nodes += scenario_pool_slots(&b->twin->pools[p]);
	const char *first = NULL;
	int64_t seen = distinct_nodes(b, &first);
	if (seen > nodes)
		add_gap(r, GAP_NODES, seen, nodes, first);
	preemption_gap(b, r, span_s);
	for (size_t w = 0; w < b->twin->n_workloads; w++) {
		const struct workload_spec *ws = &b->twin->workloads[w];
		if (ws->gang && ws->pods > 1) {
			int64_t n = 0;
			for (size_t i = 0; i < b->n_pods; i++)
				n += !strcmp(b->pods[i].workload, ws->name);
			add_gap(r, GAP_GANG, n, ws->pods, ws->name);
		}
	}
}

int backtest_run(struct backtest *b, struct results *r, struct gp_err *err)
{
	int rc = run_simulate(b->replay, r, err);
	if (rc)
		return rc;
	const struct history_spec *h = &b->twin->history;
	double span_s = (double)(h->to_epoch - h->from_epoch);
	size_t n_sim = 0;
	struct span *obs = observed_spans(b, span_s);
	struct span *sim = simulated_spans(b, r, span_s, &n_sim);
	double o[RESULTS_BACKTEST_METRICS], s[RESULTS_BACKTEST_METRICS];
	figures(obs, b->n_pods, -2, span_s, o);
	figures(sim, n_sim, -2, span_s, s);
	add_rows(r, "all", o, s);
	for (size_t w = 0; w < b->twin->n_workloads; w++) {
		bool any = false;
		for (size_t i = 0; i < b->n_pods && !any; i++)
			any = obs[i].scope == (int32_t)w;
		if (!any)
			continue;
		figures(obs, b->n_pods, (int32_t)w, span_s, o);
		figures(sim, n_sim, (int32_t)w, span_s, s);
		add_rows(r, b->twin->workloads[w].name, o, s);
	}
	free(obs);
	free(sim);
	find_gaps(b, r, span_s);
	return GP_OK;
}

int backtest_command(const struct backtest_cmd *c, FILE *out, struct gp_err *err)
{
	struct backtest b = {0};
	struct store *st = NULL;
	struct results r;
	int64_t run_id = 0;
	results_init(&r);
	int rc = backtest_prepare(&b, c->scenario, err);
	const char *db = rc ? NULL : c->db ? c->db : b.twin->output.db;
	if (!rc)
		rc = backtest_run(&b, &r, err);
	if (!rc)
		rc = store_open(db, &st, err);
	if (!rc)
		rc = store_write_run(st, b.replay, &r, &run_id, err);
	size_t replayed = 0;
	for (size_t w = 0; !rc && w < b.map.n_workloads; w++)
		replayed += b.map.n_pods[w];
	struct report_backtest_info info = {b.n_pods, replayed, c->tolerance, db, run_id};
	if (!rc && c->json)
		json_write_backtest(out, b.twin, &r, &info);
	else if (!rc && !c->quiet)
		report_backtest(out, b.twin, &r, &info);
	store_close(st);
	results_free(&r);
	backtest_free(&b);
	return rc;
}
