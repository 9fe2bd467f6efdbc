/*
 * inflation.c - the ATC'23 paper's inflation experiment (see inflation.h).
 *
 * The protocol, as the authors' simulator runs it (pkg/simulator:
 * TunePodsByNodeTotalResource, SortClusterPods, SchedulePods,
 * ClusterGpuFragReport; scripts/generate_run_scripts.py: tune 1.3, seeds
 * 42..51, shuffled pods):
 *   1. The pods are the trace's.  While their GPU requests (gpus x milli)
 *      are below inflate x the cluster's GPU milli, a pod drawn uniformly
 *      from the trace is appended, until the next draw would pass the mark;
 *      above the mark, pods drawn at random are removed until it holds.
 *   2. The pods are shuffled.  (The simulator tunes, then shuffles; which
 *      pods are added does not depend on the order.)
 *   3. Each pod in turn is offered to the policy: every node that fits it is
 *      scored and the highest score wins; a pod that fits nowhere stays
 *      unscheduled and never comes back.  Nothing leaves.  Ties go to the
 *      node first in an order drawn from the seed: the authors' scheduler
 *      (a kube-scheduler v1.20.5 fork, github.com/mental2008/kubernetes)
 *      picks the lexicographically smallest node name among the best, and
 *      the simulator prefixes node names with a seeded random permutation
 *      (syncClusterResourceList).  This matters: uniform random ties spread
 *      FGD's whole-GPU and CPU pods over idle nodes (about 90% allocation on
 *      the default trace instead of the paper's 95%).  Random draws its node
 *      uniformly among the feasible ones (RandomScore's PreScore).
 *   4. After each pod, the allocation ratio (GPU milli allocated / GPU milli
 *      of the cluster) and the fragmentation (sum of gpupolicy_frag over the
 *      nodes / GPU milli of the cluster) are what the curve reports at every
 *      whole percent of arrived demand the pod crosses.
 * FGD's target workload is the trace's pod shapes (step 1's pods before
 * re-sampling), the most frequent ones up to experiment.popularity (0.95).
 *
 * Simplifications, all documented in docs/openb.md: the simulator's re-sampling
 * stops on a pod's per-GPU milli and adds its total (a slip in the source);
 * here both are the total.  The draws (node order, re-sampling, shuffle)
 * come from one GSL stream of the scenario seed, not Go's math/rand: the
 * same protocol, other samples.
 *
 * Cost: every pod scores every node, O(nodes) per pod (the nodes kube finds
 * with an explicit percentage_of_nodes_to_score); FGD keeps each
 * node's score per pod request until the node changes (one node changes per
 * pod), so a run scores a node again only where it has to.
 */
#include "gpuplan/inflation.h"

#include "gpuplan/arrivals.h"
#include "gpuplan/gpupolicy.h"
#include "gpuplan/openb.h"
#include "gpuplan/placement.h"
#include "gpuplan/units.h"

#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define NO_TYPE 31 /* a type bit no node has: a gpu_spec that matches no pool */

/* A pod of the experiment: its request, the request's index among the
 * distinct (cpu, gpus, milli) of the run (FGD's score cache) and its workload. */
struct ipod {
	struct gpupolicy_pod p;
	int32_t req;
	int32_t workload;
};

struct experiment {
	const struct scenario *sc;
	enum gpu_policy policy;
	gsl_rng *rng;
	struct gpupolicy_node *nodes;
	int32_t *pool_of; /* per node */
	uint32_t *rank;   /* per node: its place in the seed's node order (ties) */
	size_t n_nodes;
	const char *types[32]; /* GPU type names by type bit */
	int32_t n_types;
	struct ipod *pods; /* after tuning and shuffling */
	size_t n_pods, cap_pods;
	size_t n_base;              /* the trace's own pods, before tuning */
	struct gpupolicy_pod *reqs; /* the distinct (cpu, gpus, milli) */
	int32_t n_reqs, cap_reqs;
	struct gpupolicy_target target;
	int64_t capacity; /* milli-GPUs */
	double *frag;     /* per node, under the target */
	double frag_total;
	int64_t allocated; /* milli-GPUs */
	/* FGD's cache: score of node n for request r, valid while stamp == version[n] */
	int64_t *score;
	uint32_t *stamp, *version;
	int32_t *placed_on; /* per pod: node, -1 unscheduled */
	/* kube-scheduler's sampling (feasible_nodes): nodes looked for per pod,
	 * where the search starts, and the nodes found for the pod at hand */
	size_t to_find, next_start, *found;
};

/* --- the cluster ------------------------------------------------------------ */

static int32_t type_bit(struct experiment *x, const char *name)
{
	for (int32_t t = 0; t < x->n_types; t++)
		if (!strcmp(x->types[t], name))
			return t;
	return -1;
}

static int build_nodes(struct experiment *x, struct gp_err *err)
{
	const struct scenario *sc = x->sc;
	for (size_t p = 0; p < sc->n_pools; p++)
		x->n_nodes += (size_t)sc->pools[p].nodes;
	x->nodes = gp_xcalloc(x->n_nodes + 1, sizeof *x->nodes);
	x->pool_of = gp_xcalloc(x->n_nodes + 1, sizeof *x->pool_of);
	x->rank = gp_xcalloc(x->n_nodes + 1, sizeof *x->rank);
	x->found = gp_xcalloc(x->n_nodes + 1, sizeof *x->found);
	/* the authors' simulator scores every node (percentageOfNodesToScore
	 * 100); an explicit value applies (docs/placement.md) */
	int32_t pct = sc->scheduler.percentage_of_nodes_to_score;
	x->to_find = (size_t)placement_nodes_to_find(pct ? pct : 100, (int32_t)x->n_nodes);
	for (size_t n = 0; n < x->n_nodes; n++)
		x->rank[n] = (uint32_t)n;
	if (x->n_nodes > 1)
		gsl_ran_shuffle(x->rng, x->rank, x->n_nodes, sizeof *x->rank);
	size_t k = 0;
	for (size_t p = 0; p < sc->n_pools; p++) {
		const struct pool_spec *ps = &sc->pools[p];
		int32_t t = type_bit(x, ps->gpu->name);
		if (t < 0 && x->n_types == NO_TYPE)
			return gp_located(err, ps->loc,
					  "experiment inflation tells at most %d GPU "
					  "types apart",
					  NO_TYPE);
		if (t < 0) {
			t = x->n_types;
			x->types[x->n_types++] = ps->gpu->name;
		}
		for (int32_t i = 0; i < ps->nodes; i++, k++) {
			gpupolicy_node_init(&x->nodes[k], ps->gpus_per_node,
					    llround(ps->cpu * 1000),
					    llround(ps->memory_bytes / GP_MIB), t,
					    ps->sharing.mode == SHARING_FRACTIONAL);
			x->pool_of[k] = (int32_t)p;
			x->capacity += (int64_t)ps->gpus_per_node * GPUPOLICY_MILLI;
		}
	}
	return GP_OK;
}

/* --- the pods ----------------------------------------------------------------- */

/* The type mask of allowed GPU type names (none: any). */
static uint32_t types_of(struct experiment *x, const char *const *names, size_t n)
{
	uint32_t mask = 0;
	for (size_t i = 0; i < n; i++) {
		int32_t t = type_bit(x, names[i]);
		mask |= t >= 0 ? UINT32_C(1) << t : 0;
	}
	return n && !mask ? UINT32_C(1) << NO_TYPE : mask;
}

static uint32_t spec_types(struct experiment *x, uint32_t spec)
{
	const char *names[32];
	size_t n = 0;
	for (size_t i = 0; i < openb_gpu_count() && i < 32; i++)
		if (spec >> i & 1)
			names[n++] = openb_gpu_at(i)->name;
	return types_of(x, names, n);
}

/* The index of p's (cpu, gpus, milli) among the requests seen so far. */
static int32_t request_index(struct experiment *x, const struct gpupolicy_pod *p)
{
	for (int32_t i = 0; i < x->n_reqs; i++) {
		const struct gpupolicy_pod *q = &x->reqs[i];
		if (q->cpu == p->cpu && q->gpus == p->gpus && q->milli == p->milli)
			return i;
	}
	if (x->n_reqs == x->cap_reqs) {
		x->cap_reqs = x->cap_reqs ? 2 * x->cap_reqs : 64;
		x->reqs = gp_xrealloc(x->reqs, (size_t)x->cap_reqs * sizeof *x->reqs);
	}
	x->reqs[x->n_reqs] = *p;
	return x->n_reqs++;
}

static void add_pod(struct experiment *x, struct gpupolicy_pod p, int32_t workload)
{
	int32_t req = request_index(x, &p);
	GP_GROW(x->pods, x->cap_pods, x->n_pods + 1);
	x->pods[x->n_pods++] = (struct ipod){p, req, workload};
}

static int32_t clamp32(int64_t v) { return v > INT32_MAX ? INT32_MAX : (int32_t)v; }

static void add_openb_pods(struct experiment *x, const struct workload_spec *w, int32_t wi)
{
	for (size_t i = 0; i < w->arrival.n_pods; i++) {
		const struct openb_pod *o = &w->arrival.pods[i];
		struct gpupolicy_pod p = {clamp32(o->cpu_milli), o->num_gpu, o->gpu_milli,
					  o->spec ? spec_types(x, o->spec) : 0, o->memory_mib};
		add_pod(x, p, wi);
	}
}

static int64_t demand_of(const struct ipod *p) { return (int64_t)p->p.gpus * p->p.milli; }

/* Step 1: re-sample up to inflate x capacity, or thin down to it. */
static void tune(struct experiment *x)
{
	double goal = x->sc->experiment.inflate * (double)x->capacity;
	int64_t total = 0;
	for (size_t i = 0; i < x->n_pods; i++)
		total += demand_of(&x->pods[i]);
	while ((double)total > goal && x->n_pods > 0) {
		size_t k = gsl_rng_uniform_int(x->rng, x->n_pods);
		total -= demand_of(&x->pods[k]);
		memmove(&x->pods[k], &x->pods[k + 1], (x->n_pods - k - 1) * sizeof *x->pods);
		x->n_pods--;
	}
	size_t base = x->n_pods;
	while (base > 0 && total < goal) {
		struct ipod p = x->pods[gsl_rng_uniform_int(x->rng, base)];
		if ((double)(total + demand_of(&p)) > goal)
			break;
		total += demand_of(&p);
		GP_GROW(x->pods, x->cap_pods, x->n_pods + 1);
		x->pods[x->n_pods++] = p;
	}
}

static int build_pods(struct experiment *x)
{
	const struct scenario *sc = x->sc;
	for (size_t w = 0; w < sc->n_workloads; w++) /* pod lists only (scenario.c) */
		add_openb_pods(x, &sc->workloads[w], (int32_t)w);
	x->n_base = x->n_pods;
	struct gpupolicy_pod *base = gp_xcalloc(x->n_base + 1, sizeof *base);
	for (size_t i = 0; i < x->n_base; i++)
		base[i] = x->pods[i].p;
	gpupolicy_target_build(&x->target, base, x->n_base, sc->experiment.popularity);
	free(base);
	tune(x);
	if (x->n_pods > 1)
		gsl_ran_shuffle(x->rng, x->pods, x->n_pods, sizeof *x->pods);
	return GP_OK;
}

/* --- placing ------------------------------------------------------------------ */

static int64_t node_score(struct experiment *x, size_t n, const struct ipod *p)
{
	if (x->policy != GPU_POLICY_FGD)
		return gpupolicy_score(x->policy, &x->nodes[n], &p->p, NULL);
	size_t at = n * (size_t)x->n_reqs + (size_t)p->req;
	if (x->stamp[at] != x->version[n]) {
		x->score[at] = gpupolicy_score(GPU_POLICY_FGD, &x->nodes[n], &p->p, &x->target);
		x->stamp[at] = x->version[n];
	}
	return x->score[at];
}

/* kube-scheduler's findNodesThatPassFilters (pkg/scheduler/schedule_one.go):
 * the nodes that fit p, in node order from x->next_start on, wrapping, until
 * x->to_find of them are found; the start moves past every node processed,
 * feasible or not (all of them, so it stays, when fewer fit).  Into
 * x->found; returns how many.  With every node looked for, the start never
 * moves: the nodes in order, as the authors' simulator scores them. */
static size_t feasible_nodes(struct experiment *x, const struct ipod *p)
{
	size_t found = 0, k = 0;
	for (; k < x->n_nodes && found < x->to_find; k++) {
		size_t n = (x->next_start + k) % x->n_nodes;
		if (gpupolicy_fits(&x->nodes[n], &p->p))
			x->found[found++] = n;
	}
	x->next_start = (x->next_start + k) % x->n_nodes;
	return found;
}

/* Random: a feasible node drawn uniformly (reservoir sampling). */
static int64_t random_node(struct experiment *x, const struct ipod *p)
{
	int64_t pick = -1;
	unsigned long seen = 0;
	for (size_t i = 0, n = feasible_nodes(x, p); i < n; i++)
		if (gsl_rng_uniform_int(x->rng, ++seen) == 0)
			pick = (int64_t)x->found[i];
	return pick;
}

/* The node the policy gives the pod, -1 when none fits: the highest score
 * of the nodes found, ties to the node first in the seed's node order (see
 * the top of the file). */
static int64_t choose_node(struct experiment *x, const struct ipod *p)
{
	if (x->policy == GPU_POLICY_RANDOM)
		return random_node(x, p);
	int64_t best = -1, best_score = INT64_MIN;
	for (size_t i = 0, m = feasible_nodes(x, p); i < m; i++) {
		size_t n = x->found[i];
		int64_t s = node_score(x, n, p);
		if (s > best_score || (s == best_score && x->rank[n] < x->rank[best])) {
			best = (int64_t)n;
			best_score = s;
		}
	}
	return best;
}

static void place(struct experiment *x, size_t n, const struct ipod *p)
{
	struct gpupolicy_node *nd = &x->nodes[n];
	uint64_t mask = gpupolicy_choose(x->policy, nd, &p->p, &x->target, x->rng);
	gpupolicy_take(nd, &p->p, mask);
	x->allocated += demand_of(p);
	x->version[n]++;
	x->frag_total -= x->frag[n];
	x->frag[n] = gpupolicy_frag(nd, &x->target);
	x->frag_total += x->frag[n];
}

static double pct(double part, int64_t whole)
{
	return whole > 0 ? 100 * part / (double)whole : NAN;
}

/* Rows of the curve up to arrived demand `arrived` (milli), or all the rows
 * left with to_end, not beyond `last` %. */
static void record(struct experiment *x, struct results *out, int64_t arrived, int32_t last,
		   bool to_end)
{
	while ((int32_t)out->n_curve <= last &&
	       (to_end || (int64_t)out->n_curve * x->capacity <= arrived * 100)) {
		out->curve = gp_xrealloc(out->curve, (out->n_curve + 1) * sizeof *out->curve);
		out->curve[out->n_curve] = (struct curve_row){
			(int32_t)out->n_curve, pct((double)x->allocated, x->capacity),
			pct(x->frag_total, x->capacity)};
		out->n_curve++;
	}
}

static void run(struct experiment *x, struct results *out)
{
	int32_t last = (int32_t)floor(x->sc->experiment.inflate * 100 + 1e-9);
	int64_t arrived = 0;
	x->placed_on = gp_xcalloc(x->n_pods + 1, sizeof *x->placed_on);
	for (size_t n = 0; n < x->n_nodes; n++) {
		x->frag[n] = gpupolicy_frag(&x->nodes[n], &x->target);
		x->frag_total += x->frag[n];
	}
	record(x, out, 0, last, false);
	for (size_t i = 0; i < x->n_pods; i++) {
		const struct ipod *p = &x->pods[i];
		int64_t n = choose_node(x, p);
		x->placed_on[i] = (int32_t)n;
		if (n >= 0)
			place(x, (size_t)n, p);
		arrived += demand_of(p);
		record(x, out, arrived, last, false);
	}
	/* The last pod lands just short of the mark: the end state stands for the rest. */
	record(x, out, arrived, last, true);
}

/* --- results -------------------------------------------------------------------- */

static char *node_name(const struct scenario *sc, int32_t pool, int32_t local)
{
	char buf[SCENARIO_MAX_NAME + 16]; /* "POOL-INDEX" whole */
	snprintf(buf, sizeof buf, "%s-%d", sc->pools[pool].name, (int)local);
	return gp_xstrdup(buf);
}

static void write_jobs(const struct experiment *x, struct results *out)
{
	const struct scenario *sc = x->sc;
	out->n_nodes = x->n_nodes;
	out->node_names = gp_xcalloc(x->n_nodes + 1, sizeof *out->node_names);
	for (size_t n = 0, local = 0; n < x->n_nodes; n++, local++) {
		if (n > 0 && x->pool_of[n] != x->pool_of[n - 1])
			local = 0;
		out->node_names[n] = node_name(sc, x->pool_of[n], (int32_t)local);
	}
	if (!sc->output.jobs)
		return;
	out->jobs = gp_xcalloc(x->n_pods + 1, sizeof *out->jobs);
	out->n_jobs = out->cap_jobs = x->n_pods;
	for (size_t i = 0; i < x->n_pods; i++) {
		const struct ipod *p = &x->pods[i];
		bool placed = x->placed_on[i] >= 0;
		out->jobs[i] = (struct job_record){.flavor = -1,
						   .job_id = (int64_t)i,
						   .workload = p->workload,
						   .node = x->placed_on[i],
						   .gpus = p->p.gpus,
						   .status = placed ? JOB_RUNNING : JOB_FAILED,
						   .submit = 0,
						   .start = placed ? 0 : SIM_NEVER,
						   .end = SIM_NEVER,
						   .deadline = SIM_NEVER,
						   .cost = NAN,
						   .reason = -1,
						   .trace_queue = SIM_NEVER};
	}
}

/* Allocation of the GPUs of pool p (p < 0: all) at the end, in GPUs. */
static double allocated_gpus(const struct experiment *x, int32_t p)
{
	int64_t milli = 0;
	for (size_t n = 0; n < x->n_nodes; n++)
		if (p < 0 || x->pool_of[n] == p)
			milli += (int64_t)x->nodes[n].gpus * GPUPOLICY_MILLI -
				 x->nodes[n].milli_left;
	return (double)milli / GPUPOLICY_MILLI;
}

static void write_metrics(const struct experiment *x, struct results *out)
{
	const struct scenario *sc = x->sc;
	size_t failed = 0;
	int64_t arrived = 0;
	for (size_t i = 0; i < x->n_pods; i++) {
		failed += x->placed_on[i] < 0;
		arrived += demand_of(&x->pods[i]);
	}
	double cap = (double)x->capacity / GPUPOLICY_MILLI, alloc = allocated_gpus(x, -1);
	results_add_metric(out, "all", METRIC_CAPACITY_GPUS, cap);
	results_add_metric(out, "all", METRIC_PEAK_DEMAND_GPUS, (double)arrived / GPUPOLICY_MILLI);
	results_add_metric(out, "all", METRIC_PEAK_ALLOCATED_GPUS, alloc);
	results_add_metric(out, "all", METRIC_GPU_ALLOCATION_PCT, pct(alloc, (int64_t)cap));
	results_add_metric(out, "all", METRIC_FRAGMENTATION_PCT, pct(x->frag_total, x->capacity));
	results_add_metric(out, "all", METRIC_ARRIVED_DEMAND_PCT,
			   pct((double)arrived, x->capacity));
	results_add_metric(out, "all", METRIC_JOBS_SUBMITTED, (double)x->n_pods);
	results_add_metric(out, "all", METRIC_JOBS_FAILED, (double)failed);
	results_add_metric(out, "all", METRIC_PODS_SCHEDULED, (double)(x->n_pods - failed));
	results_add_metric(out, "all", METRIC_PODS_TRACE, (double)x->n_base);
	results_add_metric(out, "all", METRIC_TARGET_SHAPES, (double)x->target.n);
	for (size_t p = 0; p < sc->n_pools; p++) {
		double pcap = (double)sc->pools[p].nodes * sc->pools[p].gpus_per_node;
		double palloc = allocated_gpus(x, (int32_t)p);
		const char *name = sc->pools[p].name;
		results_add_metric(out, name, METRIC_CAPACITY_GPUS, pcap);
		results_add_metric(out, name, METRIC_PEAK_ALLOCATED_GPUS, palloc);
		results_add_metric(out, name, METRIC_GPU_ALLOCATION_PCT,
				   pcap > 0 ? 100 * palloc / pcap : NAN);
	}
}

/* --- the run ----------------------------------------------------------------------- */

static double wall_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void experiment_free(struct experiment *x)
{
	gsl_rng_free(x->rng);
	free(x->nodes);
	free(x->pool_of);
	free(x->rank);
	free(x->found);
	free(x->pods);
	free(x->reqs);
	gpupolicy_target_free(&x->target);
	free(x->frag);
	free(x->score);
	free(x->stamp);
	free(x->version);
	free(x->placed_on);
}

int inflation_run(const struct scenario *sc, struct results *out, struct gp_err *err)
{
	double t0 = wall_now();
	units_format_rfc3339((int64_t)time(NULL), out->started_at, sizeof out->started_at);
	struct experiment x = {.sc = sc, .policy = sc->scheduler.gpu_policy};
	x.rng = gsl_rng_alloc(gsl_rng_mt19937);
	gsl_rng_set(x.rng, (unsigned long)arrivals_stream_seed(sc->seed, "inflation"));
	int rc = build_nodes(&x, err);
	if (!rc)
		rc = build_pods(&x);
	if (rc) {
		experiment_free(&x);
		return rc;
	}
	x.frag = gp_xcalloc(x.n_nodes + 1, sizeof *x.frag);
	x.version = gp_xcalloc(x.n_nodes + 1, sizeof *x.version);
	for (size_t n = 0; n < x.n_nodes; n++)
		x.version[n] = 1; /* stamps start at 0: nothing cached */
	if (x.policy == GPU_POLICY_FGD) {
		size_t cells = x.n_nodes * (size_t)x.n_reqs + 1;
		x.score = gp_xcalloc(cells, sizeof *x.score);
		x.stamp = gp_xcalloc(cells, sizeof *x.stamp);
	}
	run(&x, out);
	write_metrics(&x, out);
	write_jobs(&x, out);
	out->events = x.n_pods;
	out->sim_end = 0;
	out->status = "ok";
	experiment_free(&x);
	out->wall_seconds = wall_now() - t0;
	return GP_OK;
}
