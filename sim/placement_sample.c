/*
 * placement_sample.c - kube-scheduler's feasible-node search
 * (percentageOfNodesToScore, placement.h "Sampling"): the walk that finds the
 * sampled nodes from the rotating start, every feasible node where there is
 * no sampling, and the best of the sampled nodes; a plan kept with the
 * rotation it left (placement.h, "A plan kept").
 */
#include "gpuplan/placement.h"

#include <assert.h>
#include <limits.h>
#include <stdint.h>
#include <string.h>

#include "placement_int.h"

/* kube-scheduler's feasible-node search (placement.h, "Sampling";
 * pkg/scheduler/schedule_one.go). */
#define MIN_FEASIBLE_NODES      100 /* minFeasibleNodesToFind */
#define MIN_FEASIBLE_PERCENTAGE 5   /* minFeasibleNodesPercentageToFind */

int32_t placement_nodes_to_find(int32_t percentage, int32_t all)
{
	if (all < MIN_FEASIBLE_NODES)
		return all;
	if (percentage == 0) {
		percentage = 50 - all / 125;
		if (percentage < MIN_FEASIBLE_PERCENTAGE)
			percentage = MIN_FEASIBLE_PERCENTAGE;
	}
	int32_t n = (int32_t)((int64_t)all * percentage / 100);
	return n < MIN_FEASIBLE_NODES ? MIN_FEASIBLE_NODES : n;
}

int64_t placement_next_start(const struct placer *pl) { return pl->sample->next_start; }

bool placement_plan_memo(const struct placer *pl, const int32_t *nodes, struct plan_memo *m)
{
	const struct node_sample *sm = pl->sample;
	if (pl->gpu || sm->draws != sm->plan_draws || sm->planned < 0)
		return false;
	*m = (struct plan_memo){sm->next_start, sm->planned, nodes[0]};
	return true;
}

bool placement_plan_kept(struct placer *pl, const struct plan_memo *m, int32_t *nodes)
{
	struct node_sample *sm = pl->sample;
	if (sm->next_start != m->start)
		return false;
	sm->cursor = sm->planned = m->planned; /* as placement_plan leaves them */
	sm->planned_first = nodes[0] = m->node;
	cluster_prefetch_node(pl->c, m->node);
	return true;
}

/* The nodes of pool p with the pod's units, of those its rule allows when
 * they are a list (a pinned pod: its node, O(1) rather than a walk of the
 * pool); at least as many as the walk finds. */
static int64_t room_of(const struct placer *pl, const struct pod_request *pod, size_t p,
		       const struct pool_rule *r)
{
	const struct workload_spec *w = &pl->c->sc->workloads[pod->workload];
	if (!r->hosts)
		return cluster_count_room(pl->c, p, w, pod->gpus, false, SCORING_LEAST_ALLOCATED);
	int64_t n = 0;
	for (int32_t k = 0; k < r->n_allowed; k++)
		n += cluster_room_at(pl->c, p, w, pod->gpus, r->hosts[k], false, NULL, NULL);
	return n;
}

/* sample_walk's nodes of pool p in slots [from, to) found one by one (its
 * filters checked node by node with `check`): at most `wanted` into the
 * sample as a run, counted in *found, and the first node past them, which
 * ends the search, or -1.  Out of line: its walk's frame is large, and the
 * pools the sample counts by key or by class group do not need it. */
static __attribute__((noinline)) int32_t take_nodes(const struct placer *pl,
						    const struct pod_request *pod, size_t p,
						    const struct node_filter *f, bool check,
						    int32_t from, int32_t to, int32_t wanted,
						    int32_t *found)
{
	struct node_sample *sm = pl->sample;
	const struct workload_spec *w = &pl->c->sc->workloads[pod->workload];
	struct cluster_walk wk;
	cluster_walk_init(&wk, pl->c, p, w, pod->gpus, check ? pli_node_passes : NULL, f, from, to);
	/* the nodes still wanted and one more, which ends the search */
	int32_t n = cluster_walk_take(&wk, &sm->nodes[sm->n], wanted + 1), next = -1;
	if (n > wanted)
		next = sm->nodes[sm->n + --n];
	sm->n += n;
	*found += n;
	if (n > 0)
		sm->runs[sm->n_runs++] = (struct sample_run){.pool = (int32_t)p, .end = sm->n};
	return next;
}

/*
 * findNodesThatPassFilters: the Ready nodes in node order from the rank
 * pl->sample->cursor on, wrapping, through the walks of the pools that pass
 * their pool-wide filters; the first placement_nodes_to_find feasible ones
 * go to pl->sample, one by one, or with `groups`, as counted runs of slots
 * for pools whose score is a function of the unit key (SHAPE_FLAT,
 * SHAPE_GPU_KEY) and that check nothing node by node, counted from the
 * index's "key need or more" bitset alone (find_sampled counts by key only
 * the keys it offers).  Filters run one node at a time, so the search ends at
 * the first feasible node beyond them, and the cursor moves there: past
 * every node processed, feasible or rejected.
 * False when the cluster has no more feasible nodes than that (every one is
 * then scored, without sampling) or is too small to sample; the cursor
 * stays, as kube's moves by all its nodes.  Cost: O(pools + nodes found one
 * by one + (blocks + words at either end) walked).  `want`:
 * placement_nodes_to_find, fewer than the Ready nodes.
 */
static bool sample_walk(const struct placer *pl, const struct pod_request *pod, sim_time now,
			bool groups, int32_t want)
{
	const struct cluster *c = pl->c;
	struct node_sample *sm = pl->sample;
	int32_t all = (int32_t)c->n_ready;
	const struct workload_spec *w = &c->sc->workloads[pod->workload];
	int64_t threshold = 0, room = 0;
	const struct spread_state *st = pli_hard_spread(pl, pod, &threshold);
	struct node_filter *filters = pl->filters;
	/* pools [0, judged) are judged here once for both loops: nothing they
	 * read changes in between */
	size_t judged = 0;
	for (; judged < pl->n_pools && room <= want; judged++) { /* more than want: enough */
		size_t p = judged;
		pl->passes[p] = pli_pool_passes(pl, pod, now, p, st, threshold, &filters[p]);
		if (pl->passes[p])
			room += room_of(pl, pod, p, filters[p].rule);
	}
	if (room <= want)
		return false; /* at most `want` nodes have the GPU units: all are scored */
	int64_t start = sm->cursor % all, offset = 0;
	size_t p0 = 0;
	while (offset + c->pools[p0].n_ready <= start)
		offset += c->pools[p0++].n_ready;
	int32_t local0 = cluster_ready_select(c, p0, (int32_t)(start - offset)), found = 0;
	sm->n = sm->n_segs = sm->n_runs = 0;
	/* p0 from local0 on, the other pools, then p0 again up to local0 */
	for (size_t k = 0; k <= pl->n_pools; k++) {
		size_t p = (p0 + k) % pl->n_pools;
		const struct pool_state *ps = &c->pools[p];
		if (k > 0 && p == 0)
			offset = 0; /* wrapped to the first node */
		int32_t from = k == 0 ? local0 : 0, to = k == pl->n_pools ? local0 : ps->n_nodes;
		const struct node_filter *f = &filters[p];
		bool passes = from < to && (p < judged ? pl->passes[p]
						       : pli_pool_passes(pl, pod, now, p, st,
									 threshold, &filters[p]));
		if (!passes) {
			offset += ps->n_ready;
			continue;
		}
		bool check = pli_some_nodes(f->rule) || f->st;
		int32_t next = -1, need = 0; /* the first feasible node too many */
		enum score_shape shape = SHAPE_PER_NODE;
		if (groups && !check && !cluster_cpu_memory_bind(c, p, w) &&
		    (shape = pli_pool_shape(pl, pod->workload, p)) != SHAPE_PER_NODE) {
			struct cluster_levels lv;
			cluster_levels_init(&lv, c, p, w, pod->gpus);
			int32_t n = 0;
			next = cluster_levels_find(&lv, -1, from, to, want - found, &n);
			if (next >= 0)
				to = next - ps->first_node; /* the first node too many ends it */
			if (n > 0)
				sm->segs[sm->n_segs++] =
					(struct sample_seg){.pool = (int32_t)p,
							    .from = from,
							    .to = to,
							    .count = n,
							    .flat = shape == SHAPE_FLAT,
							    .levels = lv};
			found += n;
		} else if (groups && !check && cluster_groups_answer(c, p, w, pod->gpus, &need)) {
			/* scored by class: the nodes are counted, not taken (no
			 * cpu, memory or node condition can fail them) */
			int32_t n = 0;
			next = cluster_level_find(c, p, w, pod->gpus, -1, from, to, want - found,
						  &n);
			if (next >= 0)
				to = next - ps->first_node;
			if (n > 0)
				sm->runs[sm->n_runs++] = (struct sample_run){.pool = (int32_t)p,
									     .end = sm->n,
									     .grouped = true,
									     .from = from,
									     .to = to,
									     .need = need};
			found += n;
		} else {
			next = take_nodes(pl, pod, p, f, check, from, to, want - found, &found);
		}
		if (next >= 0) {
			sm->cursor = offset + cluster_ready_rank(c, p, next - ps->first_node);
			return true;
		}
		offset += ps->n_ready;
	}
	return false;
}

/* sample_walk where there are more Ready nodes than kube looks for: the
 * small clusters, most scenarios, return here without calling it. */
bool pli_sample_nodes(const struct placer *pl, const struct pod_request *pod, sim_time now,
		      bool groups)
{
	int32_t all = (int32_t)pl->c->n_ready, want = placement_nodes_to_find(pl->percentage, all);
	return want < all && sample_walk(pl, pod, now, groups, want);
}

/* Every feasible node, in node order, into pl->sample: for the searches that
 * score node by node when there is no sampling.  Only Ready nodes: a slot
 * that is down or provisioning is no node the scheduler sees (node_feasible
 * judges any slot, for the autoscaler).  O(nodes). */
void pli_feasible_all(const struct placer *pl, const struct pod_request *pod, sim_time now)
{
	const struct cluster *c = pl->c;
	struct node_sample *sm = pl->sample;
	int64_t threshold = 0;
	const struct spread_state *st = pli_hard_spread(pl, pod, &threshold);
	struct node_filter f;
	sm->n = 0;
	for (size_t p = 0; p < pl->n_pools; p++) {
		if (!pli_pool_passes(pl, pod, now, p, st, threshold, &f))
			continue;
		for (int32_t i = 0; i < c->pools[p].n_nodes; i++) {
			int32_t node = f.first_node + i;
			if (c->nodes[node].ready && pli_node_feasible(pl, f.rule, node, i, pod) &&
			    (!f.st || f.st->count[f.base + i] <= threshold))
				sm->nodes[sm->n++] = node;
		}
	}
}

/* The memo of key `level`'s score in pool p (-1: any key, in a SHAPE_FLAT
 * pool or the top key's alone). */
static struct key_memo *key_memo(const struct placer *pl, size_t p, int32_t level)
{
	return &pl->sample->keys[p * pl->sample->key_stride + (size_t)(level + 1)];
}

/* Whether km holds the score of pods of pod's workload and size. */
static bool key_known(const struct key_memo *km, const struct pod_request *pod)
{
	return km->workload == pod->workload && km->gpus == pod->gpus;
}

/* Offers the sampled nodes of segment i with key `level` (-1: any key) as
 * one group of equal score, scored on the first of them: counted only when
 * the offer can count, as pli_pick_offer turns down a lower score than the
 * pick's whatever the number of nodes that hold it. */
static int64_t offer_segment(const struct placer *pl, struct pick *pk,
			     const struct pod_request *pod, int32_t i, int32_t level, int64_t base)
{
	const struct sample_seg *sg = &pl->sample->segs[i];
	size_t p = (size_t)sg->pool;
	int32_t n = 0, node = cluster_levels_find(&sg->levels, level, sg->from, sg->to, 0, &n);
	if (node < 0)
		return INT64_MAX; /* no node: does not end the search for the best key */
	/* the score of the key, or of any key in a flat pool, kept from search
	 * to search: the node's class need not be read */
	struct key_memo *km = key_memo(pl, p, level);
	double eq = placement_equivalent(pl, (size_t)pod->workload, p, pod->gpus);
	assert((!key_known(km, pod) || km->score == pli_resource_score(pl, node, pod, eq)) &&
	       "a key's score in a segment's pool is the key's alone");
	if (!key_known(km, pod))
		*km = (struct key_memo){pod->workload, pod->gpus,
					pli_resource_score(pl, node, pod, eq)};
	int64_t score = base + km->score;
	if (score < pk->score)
		return score;
	if (level < 0)
		n = sg->count;
	else
		cluster_levels_find(&sg->levels, level, sg->from, sg->to, -1, &n);
	if (pli_pick_offer(pl, pk, score, node, p, n, false)) {
		pk->seg = i;
		pk->level = level;
	}
	return score;
}

/* A segment of a SHAPE_GPU_KEY pool: its keys best first (the fewest
 * untouched GPUs for MostAllocated, the most for LeastAllocated, whose
 * scores fall monotonically from there), until one scores lower. */
static void offer_segment_keys(const struct placer *pl, struct pick *pk,
			       const struct pod_request *pod, int32_t i, int64_t base)
{
	int32_t top = pl->c->pools[pl->sample->segs[i].pool].gpus_per_node;
	if (pod->gpus == top) { /* one key, the top one: every node the sample counted */
		offer_segment(pl, pk, pod, i, -1, base);
		return;
	}
	bool most = pl->c->sc->scheduler.scoring.type == SCORING_MOST_ALLOCATED;
	size_t p = (size_t)pl->sample->segs[i].pool;
	int64_t best = INT64_MIN;
	for (int32_t j = pod->gpus; j <= top; j++) {
		int32_t level = most ? j : top + pod->gpus - j;
		const struct key_memo *km = key_memo(pl, p, level);
		if (best != INT64_MIN && key_known(km, pod) && base + km->score < best)
			break; /* known lower: so are the keys after it, with nodes or not */
		int64_t s = offer_segment(pl, pk, pod, i, level, base);
		if (s == INT64_MAX)
			continue;
		assert((best == INT64_MIN || s <= best) && "the scores fall with the keys");
		if (s < best)
			break;
		best = s;
	}
}

uint32_t pli_memo_stamp(const struct placer *pl)
{
	struct node_sample *sm = pl->sample;
	if (++sm->memo_stamp == 0) {
		memset(sm->memo, 0, (size_t)pl->c->classes.cap * sizeof *sm->memo);
		sm->memo_stamp = 1;
	}
	return sm->memo_stamp;
}

int64_t pli_memo_score(const struct placer *pl, int32_t id, uint32_t stamp, int64_t pool_base,
		       const struct pod_request *pod, double eq)
{
	struct class_memo *m = &pl->sample->memo[id];
	if (m->stamp != stamp)
		*m = (struct class_memo){stamp, pool_base + pli_cached_score(pl, id, pod, eq)};
	return m->score;
}

/* Slot s out of order o, if it is there. */
static void order_remove(struct group_order *o, int32_t s)
{
	for (int32_t i = 0; i < o->n; i++)
		if (o->slot[i] == s) {
			for (o->n--; i < o->n; i++) {
				o->slot[i] = o->slot[i + 1];
				o->score[i] = o->score[i + 1];
			}
			return;
		}
}

/* Slot s of pool p into order o after the slots that score at least as
 * much, if it lives with key o->need or more. */
static void order_insert(const struct placer *pl, struct group_order *o, size_t p, int32_t s,
			 const struct pod_request *pod, double eq)
{
	const struct class_group *g = &pl->c->pools[p].groups.at[s];
	if (!g->nodes || g->key < o->need)
		return;
	int64_t score = pli_cached_score(pl, g->id, pod, eq);
	int32_t i = o->n++;
	for (; i > 0 && o->score[i - 1] < score; i--) {
		o->slot[i] = o->slot[i - 1];
		o->score[i] = o->score[i - 1];
	}
	o->slot[i] = s;
	o->score[i] = score;
}

/* Pool p's order of its live groups of key `need` or more for the pod:
 * brought up to date with the slots made and freed since it was last
 * asked, or made again for a new kind of pod or past the pool's log. */
static const struct group_order *group_order(const struct placer *pl, size_t p,
					     const struct pod_request *pod, double eq, int32_t need)
{
	const struct class_groups *gs = &pl->c->pools[p].groups;
	struct group_order *o = &pl->sample->orders[p * GROUP_ORDERS];
	int32_t k = 0;
	while (k < GROUP_ORDERS &&
	       (o[k].workload != pod->workload || o[k].gpus != pod->gpus || o[k].need != need))
		k++;
	if (k == GROUP_ORDERS) { /* a kind of pod new to the pool's orders */
		k = pl->sample->order_next[p];
		pl->sample->order_next[p] = (uint8_t)((k + 1) % GROUP_ORDERS);
		o[k].workload = pod->workload;
		o[k].gpus = pod->gpus;
		o[k].need = need;
		o[k].seq = gs->seq - CLUSTER_GROUP_LOG - 1; /* made again below */
	}
	o += k;
	if (gs->seq - o->seq > CLUSTER_GROUP_LOG) {
		o->n = 0;
		for (int32_t j = 0; j < gs->n_live; j++)
			order_insert(pl, o, p, gs->live[j], pod, eq);
	} else {
		for (uint32_t q = o->seq; q != gs->seq; q++) {
			int32_t s = gs->log[q % CLUSTER_GROUP_LOG];
			order_remove(o, s);
			order_insert(pl, o, p, s, pod, eq);
		}
	}
	o->seq = gs->seq;
	return o;
}

#ifndef NDEBUG
/* score_run's answer from every live group scored again: its best score
 * and how many of the run's nodes hold it, and the first of them. */
static bool run_agrees(const struct placer *pl, const struct sample_run *r, int64_t pool_base,
		       const struct pod_request *pod, double eq, int64_t floor, int32_t first)
{
	const struct class_groups *gs = &pl->c->pools[r->pool].groups;
	int64_t best = INT64_MIN;
	int32_t n_best = 0, at_best = -1;
	for (int32_t j = 0; j < gs->n_live; j++) {
		const struct class_group *g = &gs->at[gs->live[j]];
		if (g->key < r->need)
			continue;
		int64_t s = pool_base + pli_cached_score(pl, g->id, pod, eq);
		int32_t at = -1, n = cluster_group_count(pl->c, (size_t)r->pool, gs->live[j],
							 r->from, r->to, &at);
		if (s < floor || n == 0 || s < best)
			continue;
		if (s > best) {
			best = s;
			n_best = 0;
			at_best = -1;
		}
		n_best += n;
		at_best = at_best < 0 || at < at_best ? at : at_best;
	}
	return r->best == best && r->n_best == n_best && (n_best == 0 || first == at_best);
}
#endif

/* A grouped run's best score, into r->best and r->n_best (how many of its
 * nodes hold it) and its groups of that score into the run's best_slots,
 * and the first of those nodes: its groups best score first, until one has
 * nodes in the run's slots, or scores below `floor` (the best found before
 * it: its nodes could not count, and the run has none, r->best INT64_MIN).
 * O(groups x (blocks + words at either end)) for the groups counted. */
static int32_t score_run(const struct placer *pl, struct sample_run *r, int64_t pool_base,
			 const struct pod_request *pod, double eq, int64_t floor)
{
	const struct group_order *o = group_order(pl, (size_t)r->pool, pod, eq, r->need);
	int32_t *best = pl->sample->best_slots + (r - pl->sample->runs) * CLUSTER_GROUPS;
	int32_t first = -1;
	r->best = INT64_MIN;
	r->n_best = 0;
	for (int32_t i = 0; i < o->n;) {
		int64_t top = pool_base + o->score[i];
		if (top < floor)
			break;
		r->n_slots = 0;
		int32_t j = i;
		for (; j < o->n && o->score[j] == o->score[i]; j++) {
			int32_t at = -1;
			r->n_best += cluster_group_count(pl->c, (size_t)r->pool, o->slot[j],
							 r->from, r->to, &at);
			first = at >= 0 && (first < 0 || at < first) ? at : first;
			best[r->n_slots++] = o->slot[j];
		}
		i = j;
		if (r->n_best > 0) {
			r->best = top;
			break;
		}
	}
	assert(run_agrees(pl, r, pool_base, pod, eq, floor, first) &&
	       "the kept order of the groups gives what scoring them all gives");
	return first;
}

/* The nth (node order) node of grouped run r among its nodes of its best
 * score (score_run's groups). */
static int32_t run_nth(const struct placer *pl, const struct sample_run *r, int32_t nth)
{
	const int32_t *best = pl->sample->best_slots + (r - pl->sample->runs) * CLUSTER_GROUPS;
	return cluster_groups_nth(pl->c, (size_t)r->pool, best, r->n_slots, r->from, r->to, nth);
}

/*
 * The best of the sampled nodes: the ones found one by one scored each, a
 * segment of a group-scored pool one score per key (or one for the pool);
 * TaintToleration normalized over the sampled nodes, as kube normalizes over
 * the nodes it scores.  O(nodes + segments x keys offered x (blocks +
 * words at either end)), and a span of one bitset for a group's winner.
 */
int32_t pli_find_sampled(const struct placer *pl, const struct pod_request *pod)
{
	struct node_sample *sm = pl->sample;
	const struct cluster *c = pl->c;
	int32_t max_prefer = 0;
	for (int32_t i = 0; i < sm->n_runs + sm->n_segs; i++) {
		size_t p =
			(size_t)(i < sm->n_runs ? sm->runs[i].pool : sm->segs[i - sm->n_runs].pool);
		const struct pool_rule *r = pli_pod_rule(pl, pod, p);
		max_prefer = r->prefer > max_prefer ? r->prefer : max_prefer;
	}
	/* The nodes found one by one: their best score and how many hold it, so
	 * that they enter the draw as one group (one draw, not one per tie).
	 * A class is scored once a search (its pool, so its base, is its own). */
	int64_t best = INT64_MIN;
	int32_t n_best = 0, first = -1;
	uint32_t stamp = pli_memo_stamp(pl);
	for (int32_t k = 0, i = 0; k < sm->n_runs; k++) {
		struct sample_run *r = &sm->runs[k];
		size_t p = (size_t)r->pool;
		double eq = placement_equivalent(pl, (size_t)pod->workload, p, pod->gpus);
		int64_t pool_base = WEIGHT_TAINT *
				    pli_taint_score(pli_pod_rule(pl, pod, p)->prefer, max_prefer);
		if (r->grouped) { /* no node in nodes[]: as if its nodes came one by one */
			int32_t at = score_run(pl, r, pool_base, pod, eq, best);
			if (r->best > best) {
				best = r->best;
				n_best = 0;
				first = at;
			}
			n_best += r->best == best ? r->n_best : 0;
			continue;
		}
		for (; i < r->end; i++) {
			int32_t node = sm->nodes[i];
			int64_t s =
				pli_memo_score(pl, c->class_of[node], stamp, pool_base, pod, eq);
			pl->scratch[i] = s;
			if (s > best) {
				best = s;
				n_best = 0;
				first = node;
			}
			n_best += s == best;
		}
	}
	struct pick pk;
	pli_pick_init(&pk);
	if (n_best > 0 &&
	    pli_pick_offer(pl, &pk, best, first, (size_t)c->nodes[first].pool, n_best, false))
		pk.seg = SEG_NODES;
	for (int32_t i = 0; i < sm->n_segs; i++) {
		size_t p = (size_t)sm->segs[i].pool;
		int64_t base = WEIGHT_TAINT *
			       pli_taint_score(pli_pod_rule(pl, pod, p)->prefer, max_prefer);
		if (sm->segs[i].flat)
			offer_segment(pl, &pk, pod, i, -1, base);
		else
			offer_segment_keys(pl, &pk, pod, i, base);
	}
	if (pk.nth < 0)
		return pk.node;
	if (pk.seg == SEG_NODES) {
		int32_t nth = pk.nth;
		for (int32_t k = 0, i = 0; k < sm->n_runs; k++) {
			const struct sample_run *r = &sm->runs[k];
			if (!r->grouped) {
				for (; i < r->end; i++)
					if (pl->scratch[i] == best && nth-- == 0)
						return sm->nodes[i];
				continue;
			}
			if (r->best != best)
				continue;
			if (nth >= r->n_best) {
				nth -= r->n_best;
				continue;
			}
			return run_nth(pl, r, nth);
		}
		return -1; /* not reached: n_best nodes hold the best score */
	}
	const struct sample_seg *sg = &sm->segs[pk.seg];
	int32_t before = 0;
	return cluster_levels_find(&sg->levels, pk.level, sg->from, sg->to, pk.nth, &before);
}
