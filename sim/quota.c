/*
 * quota.c - Kueue-like admission: quota reservation and preemption targets
 * (see quota.h).
 */
#include "gpuplan/quota.h"

#include <assert.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int res_index(const struct quota *q, const char *name)
{
	for (size_t r = 0; r < q->n_res; r++)
		if (!strcmp(q->res[r], name))
			return (int)r;
	return -1;
}

/* Numbers the distinct root cohorts so queues can be compared cheaply. */
static void number_roots(struct quota *q)
{
	const struct scenario *sc = q->sc;
	const char **roots = gp_xcalloc(sc->n_queues, sizeof *roots);
	size_t n = 0;
	for (size_t i = 0; i < sc->n_queues; i++) {
		const char *root = scenario_root_cohort(sc, i);
		q->root[i] = -1;
		if (!root)
			continue;
		size_t k = 0;
		while (k < n && strcmp(roots[k], root))
			k++;
		if (k == n)
			roots[n++] = root;
		q->root[i] = (int32_t)k;
	}
	free(roots);
}

void quota_init(struct quota *q, const struct scenario *sc)
{
	memset(q, 0, sizeof *q);
	q->sc = sc;
	size_t cap = 0;
	for (size_t i = 0; i < sc->n_queues; i++)
		cap += sc->queues[i].n_quota;
	q->res = gp_xcalloc(cap ? cap : 1, sizeof *q->res);
	for (size_t i = 0; i < sc->n_queues; i++)
		for (size_t k = 0; k < sc->queues[i].n_quota; k++)
			if (res_index(q, sc->queues[i].quota[k].resource) < 0)
				q->res[q->n_res++] = sc->queues[i].quota[k].resource;
	size_t cells = sc->n_queues * q->n_res + 1; /* + 1: never a zero-size calloc */
	q->nominal = gp_xcalloc(cells, sizeof *q->nominal);
	q->limit = gp_xcalloc(cells, sizeof *q->limit);
	q->guaranteed = gp_xcalloc(cells, sizeof *q->guaranteed);
	q->usage = gp_xcalloc(cells, sizeof *q->usage);
	q->saved = gp_xcalloc(cells, sizeof *q->saved);
	q->need = gp_xcalloc(q->n_res + 1, sizeof *q->need);
	q->root = gp_xcalloc(sc->n_queues, sizeof *q->root);
	q->limited = gp_xcalloc(sc->n_queues + 1, sizeof *q->limited);
	for (size_t i = 0; i < sc->n_queues * q->n_res; i++)
		q->nominal[i] = q->limit[i] = INFINITY;
	for (size_t i = 0; i < sc->n_queues; i++)
		for (size_t k = 0; k < sc->queues[i].n_quota; k++) {
			const struct quota_entry *e = &sc->queues[i].quota[k];
			size_t cell = i * q->n_res + (size_t)res_index(q, e->resource);
			q->nominal[cell] = e->nominal;
			q->limit[cell] = e->borrowing_limit;
			q->guaranteed[cell] = isinf(e->lending_limit)
						      ? 0
						      : fmax(0, e->nominal - e->lending_limit);
			q->limited[i] = true;
		}
	number_roots(q);
}

void quota_free(struct quota *q)
{
	free(q->res);
	free(q->nominal);
	free(q->limit);
	free(q->guaranteed);
	free(q->usage);
	free(q->saved);
	free(q->need);
	free(q->root);
	free(q->limited);
	memset(q, 0, sizeof *q);
}

void quota_request(const struct quota *q, const struct workload_spec *w, int32_t gpus, int32_t pods,
		   double *req)
{
	char mig[96];
	if (w->request == REQUEST_MIG)
		snprintf(mig, sizeof mig, "nvidia.com/mig-%s", w->mig_profile);
	for (size_t r = 0; r < q->n_res; r++) {
		const char *name = q->res[r];
		double per_pod = 0;
		if (!strcmp(name, "nvidia.com/gpu"))
			per_pod = w->request == REQUEST_GPUS    ? gpus
				  : w->request == REQUEST_MILLI ? (double)w->milli / SHARING_MILLI
								: 0;
		else if (w->request == REQUEST_MIG && !strcmp(name, mig))
			per_pod = 1;
		else if (!strcmp(name, "cpu"))
			per_pod = w->cpu;
		else if (!strcmp(name, "memory"))
			per_pod = w->memory_bytes;
		req[r] = per_pod * pods;
	}
}

/*
 * The cohort root k's quota of resource r and the usage that counts against
 * it, as Kueue's resource tree keeps them (pkg/cache/resource_node.go): each
 * queue lends it its nominal quota less what its lending limit keeps
 * (guaranteed), and uses it for what it uses past that.
 */
static void cohort_totals(const struct quota *q, int32_t k, size_t r, double *quota, double *usage)
{
	*quota = *usage = 0;
	for (size_t i = 0; i < q->sc->n_queues; i++) {
		size_t cell = i * q->n_res + r;
		if (q->root[i] == k && !isinf(q->nominal[cell])) {
			*quota += q->nominal[cell] - q->guaranteed[cell];
			*usage += fmax(0, q->usage[cell] - q->guaranteed[cell]);
		}
	}
}

/* What queue qi could admit of resource r now (Kueue's available()): its
 * unused nominal quota without a cohort; in a cohort, what is left of its
 * guaranteed quota plus what the cohort has unused, the latter capped by
 * the borrowing limit past what the queue lent.  INFINITY when r is not
 * limited for qi. */
static double available(const struct quota *q, size_t qi, size_t r)
{
	size_t cell = qi * q->n_res + r;
	double nominal = q->nominal[cell], own = q->usage[cell], kept = q->guaranteed[cell];
	if (isinf(nominal))
		return INFINITY;
	int32_t k = q->root[qi];
	if (k < 0)
		return nominal - own;
	double cohort_quota, cohort_usage;
	cohort_totals(q, k, r, &cohort_quota, &cohort_usage);
	double lent = nominal - kept, used_there = fmax(0, own - kept);
	double from_cohort = fmin(cohort_quota - cohort_usage, lent - used_there + q->limit[cell]);
	return fmax(0, kept - own) + from_cohort;
}

/* The most queue qi could ever admit of r, with nothing else admitted
 * (Kueue's potentialAvailable()). */
static double potential(const struct quota *q, size_t qi, size_t r)
{
	size_t cell = qi * q->n_res + r;
	double nominal = q->nominal[cell];
	int32_t k = q->root[qi];
	if (isinf(nominal) || k < 0)
		return nominal;
	double cohort_quota, cohort_usage;
	cohort_totals(q, k, r, &cohort_quota, &cohort_usage);
	return fmin(nominal + q->limit[cell], q->guaranteed[cell] + cohort_quota);
}

/* Amounts as Kubernetes quantities: whole numbers plainly, memory in Gi. */
static void amount(const char *res, double v, char *buf, size_t len)
{
	if (!strcmp(res, "memory"))
		snprintf(buf, len, "%.6gGi", v / (1024.0 * 1024 * 1024));
	else
		snprintf(buf, len, "%.6g", v);
}

/* Kueue's flavor assigner writes "couldn't assign flavors to pod set NAME: "
 * before the per-resource status (flavorassigner.go, Assignment.Message);
 * a batch Job's single pod set is "main". */
#define POD_SET "couldn't assign flavors to pod set main: "

enum quota_verdict quota_check(const struct quota *q, size_t qi, const double *req, char *why,
			       size_t why_len)
{
	char a[32], b[32];
	/* flavorassigner.go fitsResourceQuota: "No Fit" first, above the
	 * maximum capacity; then "Preempt", above what is available now. */
	for (size_t r = 0; r < q->n_res; r++) {
		double most = potential(q, qi, r);
		if (req[r] > 0 && req[r] > most + 1e-9) {
			amount(q->res[r], req[r], a, sizeof a);
			amount(q->res[r], most, b, sizeof b);
			snprintf(why, why_len,
				 POD_SET "insufficient quota for %s in flavor default, "
					 "request > maximum capacity (%s > %s)",
				 q->res[r], a, b);
			return QUOTA_NO_FIT;
		}
	}
	for (size_t r = 0; r < q->n_res; r++) {
		double free_now = available(q, qi, r);
		if (req[r] > 0 && req[r] > free_now + 1e-9) {
			amount(q->res[r], req[r] - free_now, a, sizeof a);
			snprintf(why, why_len,
				 POD_SET "insufficient unused quota for %s in flavor "
					 "default, %s more needed",
				 q->res[r], a);
			return QUOTA_WAIT;
		}
	}
	return QUOTA_FITS;
}

void quota_behind(const struct quota *q, size_t qi, char *why, size_t why_len)
{
	snprintf(why, why_len, "waiting for the head of StrictFIFO ClusterQueue %s to be admitted",
		 q->sc->queues[qi].name);
}

void quota_charge(struct quota *q, size_t qi, const double *req, double sign)
{
	for (size_t r = 0; r < q->n_res; r++) {
		double *u = &q->usage[qi * q->n_res + r];
		*u += sign * req[r];
		if (*u < 1e-9)
			*u = 0; /* float dust */
		/* An admission keeps the queue within its nominal quota plus its
		 * borrowing limit, and its cohort within the sum of its quotas. */
		assert(sign < 0 || available(q, qi, r) >= -1e-6);
	}
}

bool quota_borrows(const struct quota *q, size_t qi, const double *req)
{
	for (size_t r = 0; r < q->n_res; r++) {
		size_t cell = qi * q->n_res + r;
		if (req[r] > 0 && q->usage[cell] + req[r] > q->nominal[cell] + 1e-9)
			return true;
	}
	return false;
}

bool quota_borrowing(const struct quota *q, size_t qi, size_t r)
{
	size_t cell = qi * q->n_res + r;
	return q->usage[cell] > q->nominal[cell] + 1e-9;
}

bool quota_same_cohort(const struct quota *q, size_t a, size_t b)
{
	return q->root[a] >= 0 && q->root[a] == q->root[b];
}

/* --- preemption ----------------------------------------------------------- */

/* Whether req fits queue qi now; without borrow, only within its nominal
 * quota (preemption.go, workloadFits). */
static bool fits(const struct quota *q, size_t qi, const double *req, bool borrow)
{
	for (size_t r = 0; r < q->n_res; r++) {
		size_t cell = qi * q->n_res + r;
		if (req[r] <= 0 || isinf(q->nominal[cell]))
			continue;
		if (!borrow && q->usage[cell] + req[r] > q->nominal[cell] + 1e-9)
			return false;
		if (req[r] > available(q, qi, r) + 1e-9)
			return false;
	}
	return true;
}

/* Whether a candidate holds a resource that needs preemption
 * (preemption.go, workloadUsesResources). */
static bool uses_needed(const struct quota *q, const double *req)
{
	for (size_t r = 0; r < q->n_res; r++)
		if (q->need[r] && req[r] > 0)
			return true;
	return false;
}

/* preemption.go, cqIsBorrowing: over the resources that need preemption. */
static bool borrows_needed(const struct quota *q, size_t qi)
{
	for (size_t r = 0; r < q->n_res; r++)
		if (q->need[r] && quota_borrowing(q, qi, r))
			return true;
	return false;
}

/* preemption.go, findCandidates: keeps, in place, the candidates the
 * queue's policies allow; returns how many. */
static size_t find_candidates(const struct quota *q, size_t qi, int32_t prio, sim_time queued,
			      struct quota_candidate *cands, size_t n)
{
	const struct queue_spec *qs = &q->sc->queues[qi];
	size_t k = 0;
	for (size_t i = 0; i < n; i++) {
		struct quota_candidate c = cands[i];
		if (!uses_needed(q, c.req))
			continue;
		c.own = c.queue == qi;
		if (c.own) {
			if (qs->within == WITHIN_NEVER || c.priority > prio)
				continue;
			/* Equal priority only under LowerOrNewerEqualPriority, and
			 * only if the candidate is newer than the preemptor. */
			if (c.priority == prio &&
			    !(qs->within == WITHIN_LOWER_OR_NEWER_EQUAL && queued < c.queued))
				continue;
		} else {
			if (qs->reclaim == RECLAIM_NEVER || !quota_same_cohort(q, qi, c.queue) ||
			    !borrows_needed(q, c.queue))
				continue;
			if (qs->reclaim == RECLAIM_LOWER_PRIORITY && c.priority >= prio)
				continue;
		}
		cands[k++] = c;
	}
	return k;
}

/* preemption.go, candidatesOrdering: other queues' workloads first, then
 * lower priority, then the most recently admitted (then the newer job,
 * where Kueue compares UIDs). */
static int candidate_order(const void *pa, const void *pb)
{
	const struct quota_candidate *a = pa, *b = pb;
	if (a->own != b->own)
		return a->own ? 1 : -1;
	if (a->priority != b->priority)
		return a->priority < b->priority ? -1 : 1;
	if (a->admitted != b->admitted)
		return a->admitted > b->admitted ? -1 : 1;
	return a->seq > b->seq ? -1 : a->seq < b->seq;
}

/* preemption.go, minimalPreemptions and fillBackWorkloads: removes
 * candidates in order (skipping other queues no longer borrowing) until
 * req fits, then adds back, latest removed first, each it fits without.
 * Returns the targets' job ids in targets. */
static size_t minimal(struct quota *q, size_t qi, const double *req,
		      const struct quota_candidate *cands, size_t n, bool borrow, uint32_t *targets)
{
	size_t cells = q->sc->n_queues * q->n_res;
	memcpy(q->saved, q->usage, cells * sizeof *q->usage);
	size_t t = 0;
	bool ok = false;
	for (size_t i = 0; i < n && !ok; i++) {
		if (!cands[i].own && !borrows_needed(q, cands[i].queue))
			continue;
		quota_charge(q, cands[i].queue, cands[i].req, -1);
		targets[t++] = (uint32_t)i;
		ok = fits(q, qi, req, borrow);
	}
	if (ok)
		for (size_t i = t - 1; i-- > 0;) {
			const struct quota_candidate *c = &cands[targets[i]];
			quota_charge(q, c->queue, c->req, +1);
			if (fits(q, qi, req, borrow))
				targets[i] = targets[--t]; /* not needed: it stays */
			else
				quota_charge(q, c->queue, c->req, -1);
		}
	memcpy(q->usage, q->saved, cells * sizeof *q->usage);
	if (!ok)
		return 0;
	for (size_t i = 0; i < t; i++)
		targets[i] = cands[targets[i]].job;
	return t;
}

/* Whether queue qi uses less than its nominal quota of every resource that
 * needs preemption (queueUnderNominalInResourcesNeedingPreemption). */
static bool under_nominal(const struct quota *q, size_t qi)
{
	for (size_t r = 0; r < q->n_res; r++)
		if (q->need[r] && q->usage[qi * q->n_res + r] >= q->nominal[qi * q->n_res + r])
			return false;
	return true;
}

size_t quota_preempt(struct quota *q, size_t qi, int32_t prio, sim_time queued, const double *req,
		     struct quota_candidate *cands, size_t n, uint32_t *targets)
{
	const struct queue_spec *qs = &q->sc->queues[qi];
	if (qs->within == WITHIN_NEVER && qs->reclaim == RECLAIM_NEVER)
		return 0;
	bool any = false;
	for (size_t r = 0; r < q->n_res; r++) {
		q->need[r] = req[r] > 0 && req[r] > available(q, qi, r) + 1e-9;
		any |= q->need[r];
		/* flavorassigner.go, fitsResourceQuota: preemption is an option
		 * for a request within the nominal quota, or for any under
		 * withinClusterQueue; a larger one can only wait.  (Its
		 * mayReclaimInHierarchy needs a subtree below the root cohort;
		 * gpuplan's cohorts are flattened to their root.) */
		if (q->need[r] && req[r] > q->nominal[qi * q->n_res + r] + 1e-9 &&
		    qs->within == WITHIN_NEVER)
			return 0;
	}
	if (!any)
		return 0;
	n = find_candidates(q, qi, prio, queued, cands, n);
	if (!n)
		return 0;
	qsort(cands, n, sizeof *cands, candidate_order);
	size_t others = 0; /* the other queues' candidates come first */
	while (others < n && !cands[others].own)
		others++;
	/* preemption.go, getTargets (without borrowWithinCohort): only its own
	 * queue's candidates: borrowing allowed.  Else first without
	 * borrowing, all candidates, if the queue is under its nominal quota;
	 * then its own queue's only, borrowing allowed. */
	if (others == 0)
		return minimal(q, qi, req, cands, n, true, targets);
	if (under_nominal(q, qi)) {
		size_t t = minimal(q, qi, req, cands, n, false, targets);
		if (t)
			return t;
	}
	return minimal(q, qi, req, cands + others, n - others, true, targets);
}
