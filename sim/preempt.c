/*
 * preempt.c - kube-scheduler's DefaultPreemption (see preempt.h).
 */
#include "gpuplan/preempt.h"

#include "gpuplan/reasons.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

/* A grant lifted off the node in a dry run: its tenant records start at
 * saved[at]. */
struct preempt_lift {
	uint32_t job;
	const struct cluster_grant *grant;
	size_t at;
};

/* DefaultPreemptionArgs' defaults (apis/config/v1/defaults.go). */
#define MIN_CANDIDATE_PERCENTAGE 10
#define MIN_CANDIDATE_ABSOLUTE   100

void preempt_init(struct preemptor *pe, struct placer *pl, struct preempt_host host)
{
	memset(pe, 0, sizeof *pe);
	pe->pl = pl;
	pe->host = host;
	pe->why = gp_xcalloc(pl->n_reasons + 2, sizeof *pe->why);
	pe->msg_why = gp_xcalloc(pl->n_reasons + 2, sizeof *pe->msg_why);
	pe->msg_nodes = -1;
	pe->msg_size = 256;
	pe->msg = gp_xmalloc(pe->msg_size);
	pe->msg[0] = 0;
}

void preempt_free(struct preemptor *pe)
{
	free(pe->cand);
	free(pe->best);
	free(pe->try_v);
	free(pe->lifts);
	free(pe->saved);
	free(pe->why);
	free(pe->msg_why);
	free(pe->msg);
	memset(pe, 0, sizeof *pe);
}

/* MoreImportantPod (pkg/scheduler/util/utils.go): higher priority, then
 * the earlier start; then the job, so that the order is total. */
static int more_important(const void *a, const void *b)
{
	const struct preempt_victim *x = a, *y = b;
	if (x->priority != y->priority)
		return x->priority > y->priority ? -1 : 1;
	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return x->job < y->job ? -1 : x->job > y->job;
}

/* Node's pods the preemptor may evict (lower priority), each job once. */
static void gather(struct preemptor *pe, int32_t node, int32_t prio)
{
	const struct cluster *c = pe->pl->c;
	const struct node *nd = &c->nodes[node];
	pe->n_cand = 0;
	for (int32_t i = 0; i < nd->gpus; i++) {
		const struct gpu *g = &c->gpus[nd->first_gpu + i];
		const struct tenant *t = GPU_TENANTS(g);
		for (uint16_t k = 0; k < g->n_tenants; k++) {
			bool seen = false;
			for (size_t v = 0; v < pe->n_cand && !seen; v++)
				seen = pe->cand[v].job == t[k].job;
			struct preempt_victim v = {.job = t[k].job};
			if (seen || !pe->host.victim(pe->host.ctx, t[k].job, prio, &v.priority,
						     &v.start, &v.grants, &v.n))
				continue;
			GP_GROW(pe->cand, pe->cap_cand, pe->n_cand + 1);
			pe->cand[pe->n_cand++] = v;
		}
	}
}

/* Lifts the grants of v on node off the cluster (removePod). */
static void lift(struct preemptor *pe, const struct preempt_victim *v, int32_t node)
{
	struct cluster *c = pe->pl->c;
	for (int32_t k = 0; k < v->n; k++) {
		const struct cluster_grant *g = &v->grants[k];
		if (g->node != node)
			continue;
		size_t gpus = (size_t)gp_popcount64(g->gpu_mask);
		GP_GROW(pe->saved, pe->cap_saved, pe->n_saved + gpus + 1);
		GP_GROW(pe->lifts, pe->cap_lifts, pe->n_lifts + 1);
		cluster_save(c, v->job, g, pe->saved + pe->n_saved);
		pe->lifts[pe->n_lifts++] = (struct preempt_lift){v->job, g, pe->n_saved};
		pe->n_saved += gpus;
		cluster_release(c, v->job, g);
	}
}

/* Puts back the lifts from `from` on, the last first (addPod). */
static void put_back(struct preemptor *pe, size_t from)
{
	while (pe->n_lifts > from) {
		const struct preempt_lift *l = &pe->lifts[--pe->n_lifts];
		cluster_put_back(pe->pl->c, l->job, l->grant, pe->saved + l->at);
		pe->n_saved = l->at;
	}
}

enum node_verdict { NO_VICTIMS, STILL_SHORT, CANDIDATE };

/* SelectVictimsOnNode: the minimal victims on node into pe->try_v, most
 * important first.  The cluster is as it was on return. */
static enum node_verdict select_victims(struct preemptor *pe, const struct pod_request *pod,
					int32_t prio, int32_t node, sim_time now)
{
	const struct placer *pl = pe->pl;
	gather(pe, node, prio);
	if (!pe->n_cand)
		return NO_VICTIMS;
	qsort(pe->cand, pe->n_cand, sizeof *pe->cand, more_important);
	pe->n_lifts = pe->n_saved = 0;
	for (size_t v = 0; v < pe->n_cand; v++)
		lift(pe, &pe->cand[v], node);
	if (!placement_fits_node(pl, pod, node, now)) {
		placement_node_why(pl, pod, node, pe->why);
		put_back(pe, 0);
		return STILL_SHORT;
	}
	/* Reprieve the most important first: back on the node, it stays
	 * unless the pod no longer fits.  The lifts of candidate v are the
	 * ones that follow its predecessors'; put back one by one from the
	 * end would reorder them, so a reprieve takes its lifts out of turn. */
	pe->n_try = 0;
	size_t first = 0;
	for (size_t v = 0; v < pe->n_cand; v++) {
		size_t end = first;
		while (end < pe->n_lifts && pe->lifts[end].job == pe->cand[v].job)
			end++;
		for (size_t k = first; k < end; k++)
			cluster_put_back(pl->c, pe->lifts[k].job, pe->lifts[k].grant,
					 pe->saved + pe->lifts[k].at);
		if (!placement_fits_node(pl, pod, node, now)) {
			for (size_t k = first; k < end; k++) /* a victim after all */
				cluster_release(pl->c, pe->lifts[k].job, pe->lifts[k].grant);
			GP_GROW(pe->try_v, pe->cap_try, pe->n_try + 1);
			pe->try_v[pe->n_try++] = pe->cand[v];
		} else {
			for (size_t k = first; k < end; k++)
				pe->lifts[k].grant = NULL; /* back for good */
		}
		first = end;
	}
	for (size_t k = pe->n_lifts; k-- > 0;) /* the victims back: a dry run */
		if (pe->lifts[k].grant)
			cluster_put_back(pl->c, pe->lifts[k].job, pe->lifts[k].grant,
					 pe->saved + pe->lifts[k].at);
	pe->n_lifts = pe->n_saved = 0;
	return CANDIDATE;
}

/* The earliest start among the highest-priority victims (GetEarliestPodStartTime). */
static sim_time earliest_top(const struct preempt_victim *v, size_t n)
{
	sim_time t = v[0].start;
	for (size_t i = 1; i < n && v[i].priority == v[0].priority; i++)
		if (v[i].start < t)
			t = v[i].start;
	return t;
}

static int64_t priority_sum(const struct preempt_victim *v, size_t n)
{
	int64_t sum = 0;
	for (size_t i = 0; i < n; i++)
		sum += (int64_t)v[i].priority + (int64_t)INT32_MAX + 1;
	return sum;
}

/* pickOneNodeForPreemption's order: whether victims a beat victims b (no PDBs). */
static bool better(const struct preempt_victim *a, size_t na, const struct preempt_victim *b,
		   size_t nb)
{
	if (a[0].priority != b[0].priority)
		return a[0].priority < b[0].priority;
	int64_t sa = priority_sum(a, na), sb = priority_sum(b, nb);
	if (sa != sb)
		return sa < sb;
	if (na != nb)
		return na < nb;
	return earliest_top(a, na) > earliest_top(b, nb);
}

/* The FitError of a failed preemption, after "preemption: ".  It depends on
 * the counts and the ready nodes only: most failed attempts repeat the last
 * ones, and keep its text. */
static void failure_message(struct preemptor *pe, int32_t no_victims, int32_t hopeless)
{
	const struct placer *pl = pe->pl;
	size_t n = pl->n_reasons;
	pe->why[n] = no_victims;
	pe->why[n + 1] = hopeless;
	int64_t nodes = pl->c->n_ready;
	if (nodes == pe->msg_nodes && !memcmp(pe->why, pe->msg_why, (n + 2) * sizeof *pe->why))
		return;
	memcpy(pe->msg_why, pe->why, (n + 2) * sizeof *pe->why);
	pe->msg_nodes = nodes;
	pe->msg_made++;
	const char **texts = gp_xcalloc(n + 2, sizeof *texts);
	for (size_t i = 0; i < n; i++)
		texts[i] = pl->reasons[i];
	texts[n] = REASONS_NO_VICTIMS;
	texts[n + 1] = REASONS_NOT_HELPFUL;
	char probe[1];
	size_t need = reasons_format(probe, sizeof probe, nodes, texts, pe->why, n + 2) +
		      sizeof "preemption: .";
	if (need > pe->msg_size) {
		pe->msg = gp_xrealloc(pe->msg, need);
		pe->msg_size = need;
	}
	size_t at = (size_t)snprintf(pe->msg, pe->msg_size, "preemption: ");
	at += reasons_format(pe->msg + at, pe->msg_size - at, nodes, texts, pe->why, n + 2);
	snprintf(pe->msg + at, pe->msg_size - at, ".");
	free(texts);
}

bool preempt_find(struct preemptor *pe, const struct pod_request *pod, int32_t prio, sim_time now,
		  int32_t *node)
{
	const struct cluster *c = pe->pl->c;
	memset(pe->why, 0, (pe->pl->n_reasons + 2) * sizeof *pe->why);
	int32_t potential = 0, hopeless = 0, no_victims = 0;
	for (size_t i = 0; i < c->n_nodes; i++)
		if (c->nodes[i].ready)
			potential += placement_node_resolvable(pe->pl, pod, (int32_t)i, now,
							       pe->strict_size);
	/* calculateNumCandidates: 10% of the nodes looked at, at least 100, at most all. */
	int32_t want = potential * MIN_CANDIDATE_PERCENTAGE / 100;
	if (want < MIN_CANDIDATE_ABSOLUTE)
		want = MIN_CANDIDATE_ABSOLUTE;
	if (want > potential)
		want = potential;
	int32_t found = 0;
	*node = -1;
	pe->n_best = 0;
	for (size_t i = 0; i < c->n_nodes && found < want; i++) {
		int32_t nd = (int32_t)i;
		if (!c->nodes[i].ready)
			continue;
		if (!placement_node_resolvable(pe->pl, pod, nd, now, pe->strict_size)) {
			hopeless++;
			continue;
		}
		enum node_verdict v = select_victims(pe, pod, prio, nd, now);
		no_victims += v == NO_VICTIMS;
		if (v != CANDIDATE)
			continue;
		found++;
		if (*node >= 0 && !better(pe->try_v, pe->n_try, pe->best, pe->n_best))
			continue;
		*node = nd;
		GP_GROW(pe->best, pe->cap_best, pe->n_try);
		memcpy(pe->best, pe->try_v, pe->n_try * sizeof *pe->best);
		pe->n_best = pe->n_try;
	}
	if (*node >= 0)
		return true;
	failure_message(pe, no_victims, hopeless);
	pe->msg_counts = false;
	return false;
}

/* The Ready nodes too small for pod even empty (placement_count_too_small):
 * they depend on which nodes are Ready and open, not on what they hold, so
 * the count is kept while cluster.ready_changes stays.  A pod that must fit
 * its window (its duration against the time left) is counted each time
 * when there are windows. */
static int64_t too_small(struct preemptor *pe, const struct pod_request *pod, sim_time now)
{
	uint64_t at = pe->pl->c->ready_changes + 1; /* 0: none kept */
	if (pod->fit_window && pe->windows)
		return placement_count_too_small(pe->pl, pod, now);
	if (pe->small_at != at || pe->small_workload != pod->workload ||
	    pe->small_gpus != pod->gpus || pe->small_variant != pod->variant) {
		pe->small = placement_count_too_small(pe->pl, pod, now);
		pe->small_at = at;
		pe->small_workload = pod->workload;
		pe->small_gpus = pod->gpus;
		pe->small_variant = pod->variant;
	}
	return pe->small;
}

const char *preempt_default_post(struct preemptor *pe, const struct pod_request *pod, sim_time now,
				 const int32_t *why)
{
	if (!pe->strict_size || !pe->pl->c->n_ready)
		return NULL;
	const struct placer *pl = pe->pl;
	int64_t nodes = pl->c->n_ready, hopeless = too_small(pe, pod, now);
	size_t n = pl->n_reasons;
	for (size_t i = 0; i < n; i++)
		if (why[i] > 0 && reasons_unresolvable(pl->reason_kinds[i]))
			hopeless += why[i];
	if (hopeless > nodes)
		hopeless = nodes;
	/* the counts of the message already made: failure_message would keep it */
	if (pe->msg_counts && nodes == pe->msg_nodes && pe->msg_why[n] == nodes - hopeless &&
	    pe->msg_why[n + 1] == hopeless)
		return pe->msg;
	memset(pe->why, 0, (n + 2) * sizeof *pe->why);
	failure_message(pe, (int32_t)(nodes - hopeless), (int32_t)hopeless);
	pe->msg_counts = true;
	return pe->msg;
}
