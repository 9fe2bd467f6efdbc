/*
 * placement.c - kube-scheduler's filters and scores over pools and nodes, and
 * the reasons a pod does not fit (see placement.h).
 *
 * The static filters (taints, labels, gpu_spec, the resource and its VRAM)
 * are answered once per (workload, pool) in a pool_rule; a search then asks
 * the cluster's bucket indexes for the best node of every pool that passes,
 * with a per-node condition only where one is needed (hostname keys), and
 * compares the pools' best nodes by kube-scheduler's weighted score.
 */
#include "gpuplan/placement.h"

#include "gpuplan/arrivals.h"
#include "gpuplan/gpuplace.h"

#include <assert.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "placement_int.h"

/* Tenant ids of a gang's pods while it is tried (PROBE_JOB - k for pod k):
 * distinct, so that releasing them in reverse restores every GPU exactly. */
#define PROBE_JOB UINT32_MAX

#define LABEL_PRODUCT  "nvidia.com/gpu.product"
#define LABEL_HOSTNAME "kubernetes.io/hostname"

#define DOMAIN_NONE     (-1) /* the pool's nodes lack the key */
#define DOMAIN_PER_NODE (-2) /* each node is a domain (its hostname) */

/* Resource scores by node class (cluster.h), workload and GPUs asked: the
 * nodes of a cluster of identical nodes are of a few classes, and an id
 * with its version names one class for good, so a score serves every later
 * search too.  Direct-mapped, SCORE_CACHE entries (a power of two). */
#define SCORE_CACHE 4096
struct score_entry {
	uint32_t id, version; /* version 0: empty (versions start at 1) */
	int32_t workload, gpus;
	int64_t score;
};

static const struct pool_rule *rule_of(const struct placer *pl, int32_t w, size_t p)
{
	return &pl->rules[(size_t)w * pl->n_pools + p];
}

/* The rule of the pod's workload and variant in pool p. */
static const struct pool_rule *pod_rule(const struct placer *pl, const struct pod_request *pod,
					size_t p)
{
	size_t v = (size_t)pod->variant;
	return &pl->rules[(v * pl->n_workloads + (size_t)pod->workload) * pl->n_pools + p];
}

static const char *const fixed_reasons[REASON_FIXED] = {
	[REASON_UNSCHEDULABLE] = "node(s) were unschedulable",
	[REASON_WINDOW] = "node(s) didn't have time before their window closes",
	[REASON_AFFINITY] = "node(s) didn't match Pod's node affinity/selector",
	[REASON_SPREAD] = "node(s) didn't match pod topology spread constraints",
	[REASON_SPREAD_LABEL] =
		"node(s) didn't match pod topology spread constraints (missing required label)",
	[REASON_CPU] = "Insufficient cpu",
	[REASON_MEMORY] = "Insufficient memory",
	[REASON_VRAM] = "node(s) had GPU units with less memory than the pod's VRAM",
};

/* The slot of a reason text, added if new with its kind (enum pend_kind). */
static int32_t slot_of(struct placer *pl, const char *text, enum pend_kind kind)
{
	for (size_t i = 0; i < pl->n_reasons; i++)
		if (!strcmp(pl->reasons[i], text))
			return (int32_t)i;
	pl->reasons = gp_xrealloc(pl->reasons, (pl->n_reasons + 1) * sizeof *pl->reasons);
	pl->reason_kinds =
		gp_xrealloc(pl->reason_kinds, (pl->n_reasons + 1) * sizeof *pl->reason_kinds);
	pl->reasons[pl->n_reasons] = gp_xstrdup(text);
	pl->reason_kinds[pl->n_reasons] = (uint8_t)kind;
	return (int32_t)pl->n_reasons++;
}

/* --- labels, affinity, taints -------------------------------------------- */

/* A label every node of the pool has: its own, or the implicit product. */
const char *pli_pool_label(const struct pool_spec *p, const char *key)
{
	for (size_t i = 0; i < p->n_labels; i++)
		if (!strcmp(p->labels[i].key, key))
			return p->labels[i].value;
	if (!strcmp(key, LABEL_PRODUCT) && p->gpu && p->gpu->product)
		return p->gpu->product;
	if (!strcmp(key, SCENARIO_LABEL_POOL)) /* as GKE's cloud.google.com/gke-nodepool */
		return p->name;
	return NULL;
}

/* Whether the key's value differs from node to node (the implicit hostname). */
bool pli_per_node_key(const struct pool_spec *p, const char *key)
{
	return !strcmp(key, LABEL_HOSTNAME) && !pli_pool_label(p, key);
}

/* The value of key on node `local` of pool p, NULL when absent. */
static const char *node_label(const struct pool_spec *p, int32_t local, const char *key, char *buf,
			      size_t len)
{
	if (!pli_per_node_key(p, key))
		return pli_pool_label(p, key);
	snprintf(buf, len, "%s-%d", p->name, (int)local);
	return buf;
}

bool pli_expr_matches(const struct affinity_expr *e, const char *value)
{
	bool listed = false;
	for (size_t i = 0; value && i < e->n_values; i++)
		listed = listed || !strcmp(e->values[i], value);
	switch (e->op) {
	case AFFINITY_IN: return listed;
	case AFFINITY_NOT_IN: return !listed;
	case AFFINITY_EXISTS: return value != NULL;
	case AFFINITY_DOES_NOT_EXIST: return value == NULL;
	}
	return false;
}

/* NodeAffinity: node_selector, affinity and gpu_spec on node `local`. */
static bool affinity_matches(const struct workload_spec *w, const struct pool_spec *p,
			     int32_t local)
{
	char buf[SCENARIO_MAX_NAME + 16]; /* a hostname: "POOL-INDEX" whole */
	for (size_t i = 0; i < w->n_node_selector; i++) {
		const char *v = node_label(p, local, w->node_selector[i].key, buf, sizeof buf);
		if (!v || strcmp(v, w->node_selector[i].value))
			return false;
	}
	for (size_t i = 0; i < w->n_affinity; i++)
		if (!pli_expr_matches(&w->affinity[i],
				      node_label(p, local, w->affinity[i].key, buf, sizeof buf)))
			return false;
	bool model = w->n_gpu_spec == 0;
	for (size_t i = 0; i < w->n_gpu_spec; i++)
		model = model || !strcmp(w->gpu_spec[i], p->gpu->name);
	return model;
}

static bool affinity_varies(const struct workload_spec *w, const struct pool_spec *p)
{
	for (size_t i = 0; i < w->n_node_selector; i++)
		if (pli_per_node_key(p, w->node_selector[i].key))
			return true;
	for (size_t i = 0; i < w->n_affinity; i++)
		if (pli_per_node_key(p, w->affinity[i].key))
			return true;
	return false;
}

bool placement_tolerated(const struct workload_spec *w, const struct taint *taint)
{
	for (size_t i = 0; i < w->n_tolerations; i++)
		if (scenario_tolerates(&w->tolerations[i], taint))
			return true;
	return false;
}

bool placement_pool_tolerated(const struct workload_spec *w, const struct pool_spec *ps)
{
	for (size_t t = 0; t < ps->n_taints; t++)
		if (ps->taints[t].effect != EFFECT_PREFER_NO_SCHEDULE &&
		    !placement_tolerated(w, &ps->taints[t]))
			return false;
	return true;
}

/* --- setup ---------------------------------------------------------------- */

/* The rule of workload w (its spec ws: the workload's own, or with a
 * variant's labels and tolerations) in pool p, into r. */
void pli_init_rule(struct placer *pl, const struct workload_spec *ws, size_t w, size_t p,
		   struct pool_rule *r)
{
	const struct pool_spec *ps = &pl->c->sc->pools[p];
	char text[512], res[96];
	*r = (struct pool_rule){.filtered = -1, .unfit = -1};
	snprintf(text, sizeof text, "Insufficient %s", scenario_resource_name(ws, res, sizeof res));
	r->resource = slot_of(pl, text, PEND_RESOURCE);
	/* A cordoned node (spec.unschedulable, which the node lifecycle
	 * controller mirrors as a taint): kube-scheduler's NodeUnschedulable
	 * filter, which runs before TaintToleration, refuses it first. */
	for (size_t i = 0; i < ps->n_taints; i++)
		if (!strcmp(ps->taints[i].key, SCENARIO_CORDON_TAINT) &&
		    ps->taints[i].effect == EFFECT_NO_SCHEDULE &&
		    !placement_tolerated(ws, &ps->taints[i]))
			r->filtered = REASON_UNSCHEDULABLE;
	for (size_t i = 0; i < ps->n_taints; i++) {
		const struct taint *t = &ps->taints[i];
		if (placement_tolerated(ws, t))
			continue;
		if (t->effect == EFFECT_PREFER_NO_SCHEDULE) {
			r->prefer++;
		} else if (r->filtered < 0) {
			snprintf(text, sizeof text, "node(s) had untolerated taint {%s: %s}",
				 t->key, t->value);
			r->filtered = slot_of(pl, text, PEND_TAINT);
		}
	}
	if (affinity_varies(ws, ps))
		pli_init_hosts(r, ws, ps);
	else
		r->affinity_ok = affinity_matches(ws, ps, -1);
	if (r->filtered < 0 && !r->affinity_ok)
		r->filtered = REASON_AFFINITY;
	if (!scenario_pool_offers(ps, ws))
		r->unfit = r->resource;
	else if (pl->equivalent[w * pl->n_pools + p] <= 0)
		r->unfit = REASON_VRAM; /* offered, but a unit isolates less memory */
}

/* The domain of a node for w's constraint, or -1 when the node lacks the key. */
static int32_t domain_of(const struct placer *pl, const struct spread_state *st, int32_t node)
{
	int32_t p = pl->c->nodes[node].pool;
	int32_t d = st->pool_domain[p];
	return d == DOMAIN_PER_NODE ? st->node_base[p] + node - pl->c->pools[p].first_node : d;
}

/* Domains of w's constraint: one per node for an implicit hostname, else one
 * per distinct label value.  A domain is eligible (counts toward the least
 * loaded) when a node of it matches the pod's node affinity; taints do not
 * matter (kube's defaults: nodeAffinityPolicy Honor, nodeTaintsPolicy Ignore). */
static void init_spread(struct placer *pl, size_t w)
{
	const struct scenario *sc = pl->c->sc;
	const struct workload_spec *ws = &sc->workloads[w];
	struct spread_state *st = &pl->spread[w];
	const char *key = ws->spread.key;
	const char **values = gp_xcalloc(pl->n_pools + pl->c->n_nodes + 1, sizeof *values);
	st->on = true;
	st->pool_domain = gp_xcalloc(pl->n_pools, sizeof *st->pool_domain);
	st->node_base = gp_xcalloc(pl->n_pools, sizeof *st->node_base);
	st->eligible = gp_xcalloc(pl->n_pools + pl->c->n_nodes + 1, sizeof *st->eligible);
	for (size_t p = 0; p < pl->n_pools; p++) {
		const struct pool_spec *ps = &sc->pools[p];
		const struct pool_rule *r = &pl->rules[w * pl->n_pools + p];
		if (pli_per_node_key(ps, key)) {
			st->pool_domain[p] = DOMAIN_PER_NODE;
			st->node_base[p] = st->n_domains;
			for (int32_t i = 0; i < scenario_pool_slots(ps); i++)
				st->eligible[st->n_domains++] = r->affinity_ok && pli_allows(r, i);
			continue;
		}
		const char *v = pli_pool_label(ps, key);
		int32_t d = 0;
		while (v && d < st->n_domains && (!values[d] || strcmp(values[d], v)))
			d++;
		if (v && d == st->n_domains)
			values[st->n_domains++] = v;
		st->pool_domain[p] = v ? d : DOMAIN_NONE;
		if (v && r->affinity_ok)
			st->eligible[d] = 1;
	}
	free(values);
	st->count = gp_xcalloc((size_t)st->n_domains + 1, sizeof *st->count);
	GP_GROW(st->hist, st->cap_hist, 16);
	memset(st->hist, 0, st->cap_hist * sizeof *st->hist);
	for (int32_t d = 0; d < st->n_domains; d++)
		st->hist[0] += st->eligible[d];
}

void placement_init(struct placer *pl, struct cluster *c)
{
	const struct scenario *sc = c->sc;
	memset(pl, 0, sizeof *pl);
	pl->c = c;
	pl->n_pools = sc->n_pools;
	pl->n_workloads = sc->n_workloads;
	for (size_t i = 0; i < REASON_FIXED; i++)
		slot_of(pl, fixed_reasons[i], (enum pend_kind)i); /* REASON_x == PEND_x */
	pl->equivalent = gp_xcalloc(sc->n_workloads * sc->n_pools + 1, sizeof *pl->equivalent);
	pl->shape = gp_xcalloc(sc->n_workloads * sc->n_pools + 1, sizeof *pl->shape);
	pl->pods = gp_xcalloc(sc->n_workloads + 1, sizeof *pl->pods);
	pl->rules = gp_xcalloc(sc->n_workloads * sc->n_pools + 1, sizeof *pl->rules);
	pl->n_variants = 1;
	pl->spread = gp_xcalloc(sc->n_workloads + 1, sizeof *pl->spread);
	int32_t domains = 1;
	for (size_t w = 0; w < sc->n_workloads; w++) {
		/* Per unit: trace jobs ask for different numbers of GPUs. */
		struct workload_spec one = sc->workloads[w];
		if (one.request == REQUEST_GPUS)
			one.gpus = 1;
		for (size_t p = 0; p < sc->n_pools; p++) {
			pl->equivalent[w * sc->n_pools + p] =
				scenario_gpu_equivalent(&sc->pools[p], &one);
			pli_init_rule(pl, &sc->workloads[w], w, p, &pl->rules[w * sc->n_pools + p]);
			pl->shape[w * sc->n_pools + p] =
				(uint8_t)pli_score_shape(pl, p, &sc->workloads[w]);
		}
		pl->pods[w] = sc->workloads[w].gang && sc->workloads[w].pods > 1
				      ? sc->workloads[w].pods
				      : 1;
		if (sc->workloads[w].spread.key) {
			init_spread(pl, w);
			if (pl->spread[w].n_domains > domains)
				domains = pl->spread[w].n_domains;
		}
	}
	pl->candidate = gp_xcalloc(sc->n_pools + 1, sizeof *pl->candidate);
	pl->filters = gp_xcalloc(sc->n_pools + 1, sizeof *pl->filters);
	pl->passes = gp_xcalloc(sc->n_pools + 1, sizeof *pl->passes);
	pl->scratch = gp_xcalloc(c->n_nodes + 1, sizeof *pl->scratch);
	pl->stamp = gp_xcalloc((size_t)domains + 1, sizeof *pl->stamp);
	pl->gpu = gpuplace_create(c);
	pl->sample = gp_xcalloc(1, sizeof *pl->sample);
	pl->sample->nodes = gp_xcalloc(c->n_nodes + 1, sizeof *pl->sample->nodes);
	pl->sample->segs = gp_xcalloc(2 * sc->n_pools + 1, sizeof *pl->sample->segs);
	pl->sample->runs = gp_xcalloc(2 * sc->n_pools + 1, sizeof *pl->sample->runs);
	pl->sample->best_slots =
		gp_xcalloc((2 * sc->n_pools + 1) * CLUSTER_GROUPS, sizeof *pl->sample->best_slots);
	pl->scores = gp_xcalloc(SCORE_CACHE, sizeof *pl->scores);
	pl->sample->memo = gp_xcalloc((size_t)c->classes.cap, sizeof *pl->sample->memo);
	pl->sample->orders = gp_xcalloc(sc->n_pools * GROUP_ORDERS + 1, sizeof *pl->sample->orders);
	pl->sample->order_next = gp_xcalloc(sc->n_pools + 1, sizeof *pl->sample->order_next);
	for (size_t i = 0; i < sc->n_pools * GROUP_ORDERS; i++)
		pl->sample->orders[i].workload = -1;
	for (size_t p = 0; p < sc->n_pools; p++) /* keys -1 .. gpus_per_node */
		if ((size_t)sc->pools[p].gpus_per_node + 2 > pl->sample->key_stride)
			pl->sample->key_stride = (size_t)sc->pools[p].gpus_per_node + 2;
	pl->sample->keys =
		gp_xcalloc(sc->n_pools * pl->sample->key_stride + 1, sizeof *pl->sample->keys);
	for (size_t i = 0; i < sc->n_pools * pl->sample->key_stride; i++)
		pl->sample->keys[i].workload = -1;
	pl->sample->planned = -1;
	/* The paper's simulator scores every node: its KubeSchedulerConfiguration
	 * sets percentageOfNodesToScore: 100 (hkust-adsl/kubernetes-scheduler-
	 * simulator, example/test-scheduler-config.yaml). */
	pl->percentage = sc->scheduler.percentage_of_nodes_to_score;
	if (pl->gpu && !pl->percentage)
		pl->percentage = 100;
	pl->ties = gsl_rng_alloc(gsl_rng_mt19937);
	gsl_rng_set(pl->ties, (unsigned long)arrivals_stream_seed(sc->seed, "scheduler"));
}

void placement_free(struct placer *pl)
{
	for (size_t i = 0; i < pl->n_variants * pl->n_workloads * pl->n_pools; i++)
		pli_free_hosts(&pl->rules[i]);
	free(pl->variants);
	for (size_t w = 0; w < pl->n_workloads; w++) {
		struct spread_state *st = &pl->spread[w];
		free(st->pool_domain);
		free(st->node_base);
		free(st->count);
		free(st->eligible);
		free(st->hist);
	}
	for (size_t i = 0; i < pl->n_reasons; i++)
		free(pl->reasons[i]);
	free(pl->reasons);
	free(pl->reason_kinds);
	free(pl->rules);
	free(pl->spread);
	free(pl->equivalent);
	free(pl->shape);
	free(pl->pods);
	free(pl->candidate);
	free(pl->filters);
	free(pl->passes);
	free(pl->scratch);
	free(pl->stamp);
	gsl_rng_free(pl->ties);
	if (pl->sample) {
		free(pl->sample->nodes);
		free(pl->sample->segs);
		free(pl->sample->runs);
		free(pl->sample->best_slots);
		free(pl->sample->memo);
		free(pl->sample->orders);
		free(pl->sample->order_next);
		free(pl->sample->keys);
	}
	free(pl->scores);
	free(pl->sample);
	free(pl->tentative);
	gpuplace_free(pl->gpu);
	memset(pl, 0, sizeof *pl);
}

/* --- spread counts -------------------------------------------------------- */

/* A pod of w arrived at (delta 1) or left (-1) node: its domain's count, and
 * the least count over eligible domains, which moves by one at most. */
static void spread_move(struct placer *pl, size_t w, int32_t node, int32_t delta)
{
	struct spread_state *st = &pl->spread[w];
	if (!st->on)
		return;
	int32_t d = domain_of(pl, st, node);
	if (d < 0)
		return;
	int32_t old = st->count[d], now = old + delta;
	st->count[d] = now;
	if (!st->eligible[d])
		return;
	size_t had = st->cap_hist;
	GP_GROW(st->hist, st->cap_hist, (size_t)now + 1);
	memset(st->hist + had, 0, (st->cap_hist - had) * sizeof *st->hist);
	st->hist[old]--;
	st->hist[now]++;
	if (now < st->min)
		st->min = now;
	while (st->hist[st->min] == 0)
		st->min++;
}

bool placement_pool_filtered(const struct placer *pl, size_t w, size_t p)
{
	return rule_of(pl, (int32_t)w, p)->filtered >= 0;
}

bool placement_pool_ruled(const struct placer *pl, size_t w, size_t p)
{
	int32_t f = rule_of(pl, (int32_t)w, p)->filtered;
	return f >= 0 && f != REASON_UNSCHEDULABLE;
}

bool placement_pool_usable(const struct placer *pl, size_t w, size_t p)
{
	const struct pool_rule *rule = rule_of(pl, (int32_t)w, p);
	return !placement_pool_ruled(pl, w, p) && rule->unfit < 0;
}

bool placement_start_unblocks(const struct placer *pl, size_t w)
{
	return pl->spread[w].on && pl->c->sc->workloads[w].spread.when == SPREAD_DO_NOT_SCHEDULE;
}

/* --- filters and scores ---------------------------------------------------- */

/* NodeUnschedulable and the window fit: the slot when the pool cannot take
 * the pod now, else -1.  A workload's own windows count as its pool's do:
 * both must be open, and the earlier close is the one to fit before. */
static int32_t pool_closed(const struct cluster *c, size_t p, const struct pod_request *pod,
			   sim_time now)
{
	const struct pool_state *ps = &c->pools[p];
	bool wl_shut = pod->workload >= 0 && c->wl_shut[pod->workload];
	if (!ps->open || wl_shut)
		return REASON_UNSCHEDULABLE;
	sim_time closes = ps->closes_at,
		 wl_closes = pod->workload >= 0 ? c->wl_closes_at[pod->workload] : 0;
	if (wl_closes > 0 && wl_closes < closes)
		closes = wl_closes;
	/* window_policy fit: the expected duration must end by the close
	 * (under preempt anything starts, and the close stops it). */
	if (pod->fit_window && closes != SIM_NEVER && pod->duration > closes - now)
		return REASON_WINDOW;
	return -1;
}

bool placement_fits_empty(const struct placer *pl, const struct pod_request *pod, size_t p,
			  sim_time now)
{
	const struct pool_rule *r = pod_rule(pl, pod, p);
	if (r->filtered >= 0 || r->unfit >= 0 || pool_closed(pl->c, p, pod, now) >= 0)
		return false;
	return cluster_pods_per_node(pl->c, p, &pl->c->sc->workloads[pod->workload], pod->gpus) > 0;
}

/* --- resource scores (kube-scheduler's noderesources plugins) ------------- */

/* a * scale / b, as kube-scheduler's int64 arithmetic would give it had it
 * room: in 128 bits, so 1 EiB of memory times 100 does not overflow. */
static int64_t scaled(int64_t a, int64_t scale, int64_t b)
{
	return (int64_t)((__int128)a * scale / b);
}

/* leastRequestedScore and mostRequestedScore (least_allocated.go,
 * most_allocated.go). */
static int64_t least_requested(int64_t requested, int64_t capacity)
{
	if (requested > capacity)
		return 0;
	return scaled(capacity - requested, MAX_NODE_SCORE, capacity);
}

static int64_t most_requested(int64_t requested, int64_t capacity)
{
	if (requested > capacity)
		requested = capacity;
	return scaled(requested, MAX_NODE_SCORE, capacity);
}

/* helper.BuildBrokenLinearFunction over the shape, scores scaled to 0..100. */
static int64_t broken_linear(const struct scoring_spec *s, int64_t u)
{
	const int64_t k = MAX_NODE_SCORE / MAX_CUSTOM_SCORE;
	for (int32_t i = 0; i < s->n_shape; i++) {
		if (u > s->shape[i].utilization)
			continue;
		if (i == 0)
			return s->shape[0].score * k;
		int64_t u0 = s->shape[i - 1].utilization, u1 = s->shape[i].utilization;
		int64_t s0 = s->shape[i - 1].score * k, s1 = s->shape[i].score * k;
		return s0 + (s1 - s0) * (u - u0) / (u1 - u0);
	}
	return s->shape[s->n_shape - 1].score * k;
}

/* requested_to_capacity_ratio.go: the shape at requested x 100 / capacity. */
static int64_t ratio_requested(const struct scoring_spec *s, int64_t requested, int64_t capacity)
{
	if (requested > capacity)
		return broken_linear(s, 100);
	return broken_linear(s, requested <= 0 ? 0 : scaled(requested, 100, capacity));
}

int64_t placement_fit_score(const struct scoring_spec *s, const int64_t *requested,
			    const int64_t *allocatable)
{
	int64_t node_score = 0, weight_sum = 0;
	for (int r = 0; r < SCORE_RESOURCES; r++) {
		if (!s->weight[r] || allocatable[r] == 0)
			continue; /* not scored, or the node does not have it */
		int64_t score = s->type == SCORING_MOST_ALLOCATED
					? most_requested(requested[r], allocatable[r])
				: s->type == SCORING_LEAST_ALLOCATED
					? least_requested(requested[r], allocatable[r])
					: ratio_requested(s, requested[r], allocatable[r]);
		if (s->type == SCORING_REQUESTED_TO_CAPACITY_RATIO && score <= 0)
			continue; /* kube counts only positive ratio scores */
		node_score += score * s->weight[r];
		weight_sum += s->weight[r];
	}
	if (weight_sum == 0)
		return 0;
	if (s->type == SCORING_REQUESTED_TO_CAPACITY_RATIO)
		return gp_llround((double)node_score / (double)weight_sum);
	return node_score / weight_sum;
}

int64_t placement_balanced_score(const int64_t *requested, const int64_t *allocatable, size_t n)
{
	double fraction[SCORE_RESOURCES], total = 0;
	size_t k = 0;
	for (size_t i = 0; i < n && k < SCORE_RESOURCES; i++) {
		if (allocatable[i] == 0)
			continue;
		double f = (double)requested[i] / (double)allocatable[i];
		fraction[k++] = f > 1 ? 1 : f;
		total += f > 1 ? 1 : f;
	}
	double sd = 0;
	if (k == 2) {
		sd = fabs((fraction[0] - fraction[1]) / 2);
	} else if (k > 2) {
		double mean = total / (double)k, sum = 0;
		for (size_t i = 0; i < k; i++)
			sum += (fraction[i] - mean) * (fraction[i] - mean);
		sd = sqrt(sum / (double)k);
	}
	return (int64_t)((1 - sd) * MAX_NODE_SCORE);
}

/* BalancedAllocation skips a pod that requests neither cpu nor memory
 * (a best-effort pod: kubernetes#129138). */
static bool balanced_applies(const struct workload_spec *w)
{
	return w->cpu > 0 || w->memory_bytes > 0;
}

/* NodeResourcesFit and BalancedAllocation for a pod of the request on node,
 * weighted: GPUs as GPU equivalents (the pod's eq included), cpu and memory
 * as kube-scheduler's non-zero requests; a resource the pool does not set
 * has allocatable 0 and is left out, as kube leaves out what a node lacks. */
static int64_t class_score(const struct placer *pl, const struct node_class *nd,
			   const struct pod_request *pod, double eq)
{
	const struct pool_spec *ps = &pl->c->sc->pools[nd->pool];
	const struct workload_spec *w = &pl->c->sc->workloads[pod->workload];
	int64_t gpus = pl->c->pools[nd->pool].gpus_per_node;
	int64_t alloc[SCORE_RESOURCES] = {gpus * GPU_MILLI, gp_llround(ps->cpu * 1000),
					  gp_llround(ps->memory_bytes)};
	int64_t req[SCORE_RESOURCES] = {gp_llround((nd->allocated + eq) * GPU_MILLI),
					nd->cpu_scored + cluster_scored_cpu(w),
					nd->memory_scored + cluster_scored_memory(w)};
	int64_t s = WEIGHT_FIT * placement_fit_score(&pl->c->sc->scheduler.scoring, req, alloc);
	if (!balanced_applies(w))
		return s;
	/* BalancedAllocation counts the requests as they are (useRequested) */
	int64_t used[2] = {gp_llround((ps->cpu - nd->cpu_free + w->cpu) * 1000),
			   gp_llround(ps->memory_bytes - nd->memory_free + w->memory_bytes)};
	return s + WEIGHT_BALANCED * placement_balanced_score(used, alloc + SCORE_CPU, 2);
}

/* class_score of class id through the score cache; eq is the pod's GPU
 * equivalent in the class's pool (placement_equivalent). */
int64_t pli_cached_score(const struct placer *pl, int32_t id, const struct pod_request *pod,
			 double eq)
{
	const struct class_table *t = &pl->c->classes;
	assert(id >= 0 && id < t->cap);
	uint64_t h = (uint64_t)(uint32_t)id * UINT64_C(0x9E3779B97F4A7C15) ^
		     (uint64_t)(uint32_t)pod->workload * UINT64_C(0xC2B2AE3D27D4EB4F) ^
		     (uint64_t)(uint32_t)pod->gpus * UINT64_C(0x165667B19E3779F9);
	struct score_entry *e = &pl->scores[(h >> 40) & (SCORE_CACHE - 1)];
	if (e->id != (uint32_t)id || e->version != t->version[id] || e->workload != pod->workload ||
	    e->gpus != pod->gpus)
		*e = (struct score_entry){(uint32_t)id, t->version[id], pod->workload, pod->gpus,
					  class_score(pl, &t->at[id], pod, eq)};
	return e->score;
}

int64_t pli_resource_score(const struct placer *pl, int32_t node, const struct pod_request *pod,
			   double eq)
{
	return pli_cached_score(pl, pl->c->class_of[node], pod, eq);
}

enum score_shape pli_score_shape(const struct placer *pl, size_t p, const struct workload_spec *w)
{
	const struct scoring_spec *s = &pl->c->sc->scheduler.scoring;
	const struct pool_spec *ps = &pl->c->sc->pools[p];
	bool cpu = ps->cpu > 0, memory = ps->memory_bytes > 0;
	if ((s->weight[SCORE_CPU] && cpu) || (s->weight[SCORE_MEMORY] && memory) ||
	    (balanced_applies(w) && cpu && memory))
		return SHAPE_PER_NODE;
	if (!s->weight[SCORE_GPU])
		return SHAPE_FLAT;
	/* Whole exclusive GPUs: the key (untouched GPUs) is what the node has
	 * free, so one bucket is one score; shares and ratio shapes are not. */
	bool whole = pl->c->pools[p].units_per_gpu == 1 && w->request == REQUEST_GPUS &&
		     !sharing_replicated(&ps->sharing);
	return whole && s->type != SCORING_REQUESTED_TO_CAPACITY_RATIO ? SHAPE_GPU_KEY
								       : SHAPE_PER_NODE;
}

/* --- the best node: kube-scheduler's selectHost ------------------------------- */

void pli_pick_init(struct pick *pk) { *pk = (struct pick){INT64_MIN, 0, -1, 0, -1, false, -1, -1}; }

/* Offers one node (group 0) or a group of n nodes of pool p with equal score. */
bool pli_pick_offer(const struct placer *pl, struct pick *pk, int64_t score, int32_t node, size_t p,
		    int32_t n, bool best_only)
{
	if (score < pk->score || n <= 0)
		return false;
	if (score > pk->score) {
		pk->score = score;
		pk->count = 0;
	}
	pk->count += (uint64_t)n;
	if (pk->count > (uint64_t)n &&
	    (pl->sample->draws++,
	     gsl_rng_uniform_int(pl->ties, (unsigned long)pk->count) >= (unsigned long)n))
		return false;
	pk->node = node;
	pk->pool = p;
	pk->best_only = best_only;
	pl->sample->draws += n > 1;
	pk->nth = n > 1 ? (int32_t)gsl_rng_uniform_int(pl->ties, (unsigned long)n) : -1;
	pk->seg = -1;
	return true;
}

static int32_t pick_node(const struct placer *pl, const struct pick *pk,
			 const struct pod_request *pod)
{
	if (pk->nth < 0)
		return pk->node;
	const struct workload_spec *w = &pl->c->sc->workloads[pod->workload];
	return cluster_nth_room(pl->c, pk->pool, w, pod->gpus, pk->best_only,
				pl->c->sc->scheduler.scoring.type, pk->nth);
}

/* TaintToleration's normalized score: fewer untolerated PreferNoSchedule
 * taints than the worst feasible node score higher. */
int64_t pli_taint_score(int32_t prefer, int32_t max_prefer)
{
	if (max_prefer == 0)
		return MAX_NODE_SCORE;
	return MAX_NODE_SCORE - (int64_t)MAX_NODE_SCORE * prefer / max_prefer;
}

/* The DoNotSchedule constraint of the pod's workload, or NULL. */
const struct spread_state *pli_hard_spread(const struct placer *pl, const struct pod_request *pod,
					   int64_t *threshold)
{
	const struct spread_state *st = &pl->spread[pod->workload];
	const struct topology_spread *t = &pl->c->sc->workloads[pod->workload].spread;
	if (!st->on || t->when != SPREAD_DO_NOT_SCHEDULE)
		return NULL;
	/* count + 1 (the pod itself) - min <= max_skew */
	*threshold = (int64_t)st->min + t->max_skew - 1;
	return st;
}

bool pli_node_passes(const struct cluster *c, int32_t node, const void *ctx)
{
	const struct node_filter *f = ctx;
	int32_t local = node - f->first_node;
	(void)c;
	if (!pli_allows(f->rule, local))
		return false;
	return !f->st || f->st->count[f->base + local] <= f->threshold;
}

/* A visit of cluster_each_room: offers a node with its own score. */
struct scan_offer {
	const struct placer *pl;
	const struct pod_request *pod;
	struct pick *pick;
	size_t pool;
	double eq;
	int64_t base;   /* the pool's part of the score (TaintToleration) */
	uint32_t stamp; /* the search's scores by class (pli_memo_score) */
};

static void offer_node(int32_t node, void *ctx)
{
	struct scan_offer *o = ctx;
	int64_t s =
		pli_memo_score(o->pl, o->pl->c->class_of[node], o->stamp, o->base, o->pod, o->eq);
	pli_pick_offer(o->pl, o->pick, s, node, o->pool, 1, false);
}

/*
 * Whether pool p's nodes can pass the filters that are the same on all of
 * them (window, taints, node affinity, the resource, a DoNotSchedule spread
 * over a label the pool carries); f receives what is then checked node by
 * node (a hostname affinity or spread).  O(1).
 */
bool pli_pool_passes(const struct placer *pl, const struct pod_request *pod, sim_time now, size_t p,
		     const struct spread_state *st, int64_t threshold, struct node_filter *f)
{
	const struct cluster *c = pl->c;
	const struct pool_rule *r = pod_rule(pl, pod, p);
	if (r->filtered >= 0 || r->unfit >= 0 || pool_closed(c, p, pod, now) >= 0)
		return false;
	*f = (struct node_filter){r, NULL, c->pools[p].first_node, 0, threshold};
	if (st) {
		int32_t d = st->pool_domain[p];
		if (d == DOMAIN_NONE || (d >= 0 && st->count[d] > threshold))
			return false;
		if (d == DOMAIN_PER_NODE) {
			f->st = st;
			f->base = st->node_base[p];
		}
	}
	return true;
}

/* The node a one-node rule pins the pod to when it can take the pod now,
 * else -1: what cluster_find_where and cluster_each_room find among that
 * one node, in O(1) (they walk the pool's nodes with room: 100,000 pinned
 * pods on 100,000 nodes made it quadratic). */
static int32_t pinned_room(const struct placer *pl, const struct pod_request *pod, size_t p,
			   const struct node_filter *f)
{
	int32_t local = f->rule->hosts[0];
	return cluster_room_at(pl->c, p, &pl->c->sc->workloads[pod->workload], pod->gpus, local,
			       true, pli_node_passes, f)
		       ? f->first_node + local
		       : -1;
}

/*
 * Whether each pool has a node that can host the pod (pl->candidate),
 * through the indexes; then the weighted scores, by the cheapest way the
 * pool's score shape allows: one score for a whole group of tied nodes
 * (every node with room, or the best bucket), or node by node.  Ties are
 * drawn (pick_offer).
 */
static int32_t find_indexed(const struct placer *pl, const struct pod_request *pod, sim_time now)
{
	const struct cluster *c = pl->c;
	const struct workload_spec *w = &c->sc->workloads[pod->workload];
	enum sched_scoring how = c->sc->scheduler.scoring.type;
	int64_t threshold = 0;
	const struct spread_state *st = pli_hard_spread(pl, pod, &threshold);
	int32_t max_prefer = 0, found = 0, last = -1;
	struct node_filter *filters = pl->filters;
	for (size_t p = 0; p < pl->n_pools; p++) {
		const struct pool_rule *r = pod_rule(pl, pod, p);
		pl->candidate[p] = -1;
		if (!pli_pool_passes(pl, pod, now, p, st, threshold, &filters[p]))
			continue;
		bool per_node_check = pli_some_nodes(r) || filters[p].st;
		int32_t node = pli_one_node(r)
				       ? pinned_room(pl, pod, p, &filters[p])
				       : cluster_find_where(c, p, w, pod->gpus, how,
							    per_node_check ? pli_node_passes : NULL,
							    &filters[p]);
		pl->candidate[p] = node;
		if (node < 0)
			continue;
		found++;
		last = node;
		if (r->prefer > max_prefer)
			max_prefer = r->prefer;
	}
	/* One candidate, in a pool of one Ready node: it is the only node
	 * offered, once (n = 1), so the pick takes it whatever its score and
	 * draws no tie.  Debug builds score it and compare. */
	int32_t only = found == 1 && c->pools[c->nodes[last].pool].n_ready == 1 ? last : -1;
#ifdef NDEBUG
	if (only >= 0)
		return only;
#endif
	struct pick pk;
	pli_pick_init(&pk);
	uint32_t stamp = 0; /* the scores by class, from the first pool scored node by node */
	for (size_t p = 0; p < pl->n_pools; p++) {
		int32_t node = pl->candidate[p];
		if (node < 0)
			continue;
		const struct pool_rule *r = pod_rule(pl, pod, p);
		double eq = placement_equivalent(pl, (size_t)pod->workload, p, pod->gpus);
		int64_t base = WEIGHT_TAINT * pli_taint_score(r->prefer, max_prefer);
		bool per_node_check =
			pli_some_nodes(r) || filters[p].st || cluster_cpu_memory_bind(c, p, w);
		enum score_shape shape =
			per_node_check ? SHAPE_PER_NODE : pli_score_shape(pl, p, w);
		if (shape == SHAPE_PER_NODE) {
			stamp = stamp ? stamp : pli_memo_stamp(pl);
			struct scan_offer o = {pl, pod, &pk, p, eq, base, stamp};
			bool check = pli_some_nodes(r) || filters[p].st;
			if (pli_one_node(r)) /* the candidate is the one node with room */
				offer_node(node, &o);
			else
				cluster_each_room(c, p, w, pod->gpus,
						  check ? pli_node_passes : NULL, &filters[p],
						  offer_node, &o);
			continue;
		}
		bool best_only = shape == SHAPE_GPU_KEY;
		int32_t n = cluster_count_room(c, p, w, pod->gpus, best_only, how);
		pli_pick_offer(pl, &pk, base + pli_resource_score(pl, node, pod, eq), node, p, n,
			       best_only);
	}
	int32_t picked = pick_node(pl, &pk, pod);
	assert((only < 0 || picked == only) && "the one candidate of a one-node pool is picked");
	return picked;
}

/* Whether node passes every filter for the pod (the pool's have passed). */
bool pli_node_feasible(const struct placer *pl, const struct pool_rule *r, int32_t node,
		       int32_t local, const struct pod_request *pod)
{
	const struct workload_spec *w = &pl->c->sc->workloads[pod->workload];
	if (!pli_allows(r, local))
		return false;
	return cluster_has_units(pl->c, node, w, pod->gpus) && cluster_cpu_fits(pl->c, node, w) &&
	       cluster_memory_fits(pl->c, node, w);
}

/* PodTopologySpread's raw score of a node, -1 for a node without the key. */
static int64_t spread_raw(const struct placer *pl, const struct spread_state *st, int32_t node,
			  double weight, int32_t max_skew)
{
	int32_t d = domain_of(pl, st, node);
	return d < 0 ? -1 : gp_llround(st->count[d] * weight + (max_skew - 1));
}

/*
 * A ScheduleAnyway constraint scores every feasible node (the sampled ones,
 * or all) against the least and most loaded ones: their domains first, then
 * their weighted scores.
 */
static int32_t find_scan(const struct placer *pl, const struct pod_request *pod, sim_time now,
			 bool sampled)
{
	const struct cluster *c = pl->c;
	const struct workload_spec *w = &c->sc->workloads[pod->workload];
	const struct spread_state *st = &pl->spread[pod->workload];
	const struct node_sample *sm = pl->sample;
	if (!sampled)
		pli_feasible_all(pl, pod, now);
	int32_t max_prefer = 0, domains = 0, stamp = ++pl->stamp[0];
	for (int32_t i = 0; i < sm->n; i++) {
		int32_t node = sm->nodes[i], d = domain_of(pl, st, node);
		const struct pool_rule *r = pod_rule(pl, pod, (size_t)c->nodes[node].pool);
		max_prefer = r->prefer > max_prefer ? r->prefer : max_prefer;
		if (d >= 0 && pl->stamp[1 + d] != stamp) {
			pl->stamp[1 + d] = stamp;
			domains++;
		}
	}
	double weight = log(domains + 2.0);
	int64_t lo = INT64_MAX, hi = 0;
	for (int32_t i = 0; i < sm->n; i++) {
		int64_t raw = spread_raw(pl, st, sm->nodes[i], weight, w->spread.max_skew);
		pl->scratch[i] = raw;
		if (raw >= 0) {
			lo = raw < lo ? raw : lo;
			hi = raw > hi ? raw : hi;
		}
	}
	struct pick pk;
	pli_pick_init(&pk);
	for (int32_t i = 0; i < sm->n; i++) {
		int32_t node = sm->nodes[i];
		int64_t raw = pl->scratch[i];
		int32_t p = c->nodes[node].pool;
		const struct pool_rule *r = pod_rule(pl, pod, (size_t)p);
		int64_t spread = raw < 0   ? 0 /* ignored: no key */
				 : hi == 0 ? MAX_NODE_SCORE
					   : MAX_NODE_SCORE * (hi + lo - raw) / hi;
		double eq = placement_equivalent(pl, (size_t)pod->workload, (size_t)p, pod->gpus);
		int64_t s = pli_resource_score(pl, node, pod, eq) +
			    WEIGHT_TAINT * pli_taint_score(r->prefer, max_prefer) +
			    WEIGHT_SPREAD * spread;
		pli_pick_offer(pl, &pk, s, node, (size_t)p, 1, false);
	}
	return pk.node;
}

/*
 * scheduler.gpu_policy other than best-fit: the paper's policies score every
 * node that passes the filters (a DoNotSchedule spread included), or the
 * sampled ones; their score stands for kube-scheduler's scoring plugins.
 * Ties go to the first node offered; random draws among the feasible nodes.
 */
static int32_t find_policy(const struct placer *pl, const struct pod_request *pod, sim_time now,
			   bool sampled)
{
	const struct node_sample *sm = pl->sample;
	if (!sampled)
		pli_feasible_all(pl, pod, now);
	bool random = gpuplace_policy(pl->gpu) == GPU_POLICY_RANDOM;
	int64_t best_score = INT64_MIN;
	int32_t best = -1;
	for (int32_t i = 0; i < sm->n; i++) {
		int32_t node = sm->nodes[i];
		if (random) {
			best = gpuplace_draw(pl->gpu, (unsigned long)i + 1) == 0 ? node : best;
			continue;
		}
		int64_t s = gpuplace_score(pl->gpu, node, pod->workload, pod->gpus);
		if (s > best_score) {
			best = node;
			best_score = s;
		}
	}
	return best;
}

static int32_t find_one(const struct placer *pl, const struct pod_request *pod, sim_time now)
{
	const struct topology_spread *t = &pl->c->sc->workloads[pod->workload].spread;
	bool scan = pl->gpu || (t->key && t->when == SPREAD_SCHEDULE_ANYWAY);
	bool sampled = pli_sample_nodes(pl, pod, now, !scan); /* the scans score node by node */
	if (pl->gpu)
		return find_policy(pl, pod, now, sampled);
	if (t->key && t->when == SPREAD_SCHEDULE_ANYWAY)
		return find_scan(pl, pod, now, sampled);
	return sampled ? pli_find_sampled(pl, pod) : find_indexed(pl, pod, now);
}

/* --- reasons ----------------------------------------------------------------- */

/* Counts node by node in pool p what NodeResourcesFit and PodTopologySpread
 * say about the nodes that passed the earlier filters. */
static void explain_nodes(const struct placer *pl, size_t p, const struct pool_rule *r,
			  const struct pod_request *pod, const struct spread_state *st,
			  int64_t threshold, int32_t *why)
{
	const struct cluster *c = pl->c;
	const struct workload_spec *w = &c->sc->workloads[pod->workload];
	const struct pool_state *ps = &c->pools[p];
	int32_t need = 0;
	const int32_t *keys = cluster_unit_keys(c, p, w, pod->gpus, &need); /* Ready nodes' */
	int32_t n = r->hosts ? r->n_allowed : ps->n_nodes; /* a pinned pod: its node */
	for (int32_t k = 0; k < n; k++) {
		int32_t i = r->hosts ? r->hosts[k] : k, node = ps->first_node + i;
		if (!c->nodes[node].ready) /* a node slot the scheduler does not see */
			continue;
		if (!pli_allows(r, i))
			continue;
		bool units = keys && keys[i] >= need;
		bool cpu = cluster_cpu_fits(c, node, w), memory = cluster_memory_fits(c, node, w);
		why[r->resource] += !units;
		why[REASON_CPU] += !cpu;
		why[REASON_MEMORY] += !memory;
		if (!units || !cpu || !memory || !st)
			continue;
		int32_t d = domain_of(pl, st, node);
		if (d < 0)
			why[REASON_SPREAD_LABEL]++;
		else if (st->count[d] > threshold)
			why[REASON_SPREAD]++;
	}
}

/* Ready nodes of pool p a hostname-keyed affinity allows (O(nodes
 * allowed), or O(slots) for a mask; only such affinities get here). */
static int32_t ready_allowed(const struct cluster *c, size_t p, const struct pool_rule *r)
{
	const struct pool_state *ps = &c->pools[p];
	if (ps->n_ready == ps->n_nodes)
		return r->n_allowed;
	int32_t n = 0;
	for (int32_t k = 0; r->hosts && k < r->n_allowed; k++)
		n += c->nodes[ps->first_node + r->hosts[k]].ready;
	for (int32_t i = 0; !r->hosts && i < ps->n_nodes; i++)
		n += c->nodes[ps->first_node + i].ready && pli_allows(r, i);
	return n;
}

/* How many nodes fail the pod for each reason (the first filter each fails). */
static void explain(const struct placer *pl, const struct pod_request *pod, sim_time now,
		    int32_t *why)
{
	const struct cluster *c = pl->c;
	const struct workload_spec *w = &c->sc->workloads[pod->workload];
	int64_t threshold = 0;
	const struct spread_state *st = pli_hard_spread(pl, pod, &threshold);
	memset(why, 0, pl->n_reasons * sizeof *why);
	for (size_t p = 0; p < pl->n_pools; p++) {
		const struct pool_rule *r = pod_rule(pl, pod, p);
		int32_t n = c->pools[p].n_ready, closed = pool_closed(c, p, pod, now);
		int32_t slot = closed >= 0 ? closed : r->filtered;
		if (slot >= 0) {
			why[slot] += n;
			continue;
		}
		int32_t allowed = pli_some_nodes(r) ? ready_allowed(c, p, r) : n;
		why[REASON_AFFINITY] += n - allowed;
		if (r->unfit >= 0) {
			why[r->unfit] += allowed;
			continue;
		}
		int32_t d = st ? st->pool_domain[p] : 0;
		if (pli_some_nodes(r) || d == DOMAIN_PER_NODE || cluster_cpu_memory_bind(c, p, w)) {
			explain_nodes(pl, p, r, pod, st, threshold, why);
			continue;
		}
		/* Only GPU units vary from node to node: count by bucket. */
		int32_t short_nodes = cluster_count_short(c, p, w, pod->gpus);
		why[r->resource] += short_nodes;
		if (st && d == DOMAIN_NONE)
			why[REASON_SPREAD_LABEL] += n - short_nodes;
		else if (st && st->count[d] > threshold)
			why[REASON_SPREAD] += n - short_nodes;
	}
}

/* --- plans ------------------------------------------------------------------ */

static void take_pod(struct placer *pl, const struct pod_request *pod, int32_t node, uint32_t job,
		     struct cluster_grant *out)
{
	const struct workload_spec *w = &pl->c->sc->workloads[pod->workload];
	if (pl->gpu) /* the policy's GPUs, not cluster_take's best fit */
		pl->c->prefer = gpuplace_choose(pl->gpu, node, pod->workload, pod->gpus);
	cluster_take(pl->c, node, w, pod->gpus, job, out);
	spread_move(pl, (size_t)pod->workload, node, +1);
	gpuplace_moved(pl->gpu, out, +1);
}

static void release_pod(struct placer *pl, int32_t workload, uint32_t job,
			const struct cluster_grant *p)
{
	cluster_release(pl->c, job, p);
	spread_move(pl, (size_t)workload, p->node, -1);
	gpuplace_moved(pl->gpu, p, -1);
}

bool placement_fits_node(const struct placer *pl, const struct pod_request *pod, int32_t node,
			 sim_time now)
{
	size_t p = (size_t)pl->c->nodes[node].pool;
	const struct pool_rule *r = pod_rule(pl, pod, p);
	if (r->filtered >= 0 || r->unfit >= 0 || pool_closed(pl->c, p, pod, now) >= 0)
		return false;
	return pli_node_feasible(pl, r, node, node - pl->c->pools[p].first_node, pod);
}

/* placement_int.h's doors for placement_preempt.c. */
const struct pool_rule *pli_pod_rule(const struct placer *pl, const struct pod_request *pod,
				     size_t p)
{
	return pod_rule(pl, pod, p);
}

int32_t pli_pool_closed(const struct cluster *c, size_t p, const struct pod_request *pod,
			sim_time now)
{
	return pool_closed(c, p, pod, now);
}

void placement_take_pod(struct placer *pl, const struct pod_request *pod, int32_t node,
			uint32_t job, struct cluster_grant *grant)
{
	take_pod(pl, pod, node, job, grant);
}

void placement_release_pod(struct placer *pl, int32_t workload, uint32_t job,
			   const struct cluster_grant *grant)
{
	release_pod(pl, workload, job, grant);
}

int32_t placement_pods(const struct placer *pl, size_t w)
{
	assert(w < pl->n_workloads);
	return pl->pods[w];
}

bool placement_plan(struct placer *pl, const struct pod_request *pod, sim_time now, int32_t *nodes,
		    int32_t *why)
{
	int32_t n = placement_pods(pl, (size_t)pod->workload), k = 0;
	bool ok = true;
	pl->sample->cursor = pl->sample->next_start;
	pl->sample->plan_draws = pl->sample->draws;
	if (n == 1) {
		nodes[0] = find_one(pl, pod, now);
		ok = nodes[0] >= 0;
	} else {
		/* A gang: each pod placed for real, so the next one sees it; then undone. */
		GP_GROW(pl->tentative, pl->cap_tentative, (size_t)n);
		for (; k < n; k++) {
			nodes[k] = find_one(pl, pod, now);
			if (nodes[k] < 0) {
				ok = false;
				break;
			}
			take_pod(pl, pod, nodes[k], PROBE_JOB - (uint32_t)k, &pl->tentative[k]);
		}
	}
	if (ok) { /* placement_take moves the rotation on if these are the nodes taken */
		pl->sample->planned = pl->sample->cursor;
		pl->sample->planned_first = nodes[0];
		for (int32_t i = 0; i < n; i++)
			cluster_prefetch_node(pl->c, nodes[i]);
	}
	if (!ok && why)
		explain(pl, pod, now, why); /* while the gang's earlier pods hold their place */
	while (k-- > 0)
		release_pod(pl, pod->workload, PROBE_JOB - (uint32_t)k, &pl->tentative[k]);
	return ok;
}

int32_t placement_find(const struct placer *pl, const struct pod_request *pod, sim_time now)
{
	pl->sample->cursor = pl->sample->next_start;
	return find_one(pl, pod, now);
}

void placement_take(struct placer *pl, const struct pod_request *pod, const int32_t *nodes,
		    uint32_t job, struct cluster_grant *grants)
{
	int32_t n = placement_pods(pl, (size_t)pod->workload);
	struct node_sample *sm = pl->sample;
	/* The simulation takes the last plan that succeeded (a failed plan
	 * processed every node and leaves the rotation as it was). */
	if (sm->planned >= 0 && nodes[0] == sm->planned_first)
		sm->next_start = sm->planned;
	sm->planned = -1;
	for (int32_t k = 0; k < n; k++)
		take_pod(pl, pod, nodes[k], job, &grants[k]);
}

void placement_release(struct placer *pl, int32_t workload, uint32_t job,
		       const struct cluster_grant *grants)
{
	for (int32_t k = placement_pods(pl, (size_t)workload) - 1; k >= 0; k--)
		release_pod(pl, workload, job, &grants[k]);
}
