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

static int name_index(const struct quota *q, const char *name)
{
	for (size_t k = 0; k < q->n_names; k++)
		if (!strcmp(q->names[k], name))
			return (int)k;
	return -1;
}

/* The column of (flavor f, resource name k), or -1. */
static int column(const struct quota *q, int32_t f, int k)
{
	for (size_t r = 0; r < q->n_res; r++)
		if (q->flav[r] == f && q->name_of[r] == k)
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

/* The cohort tree: the declared cohorts (node = their index), then the
 * names queues give that no cohort declares (roots of their own). */
static void build_tree(struct quota *q)
{
	const struct scenario *sc = q->sc;
	size_t cap = sc->n_cohorts + sc->n_queues + 1;
	const char **names = gp_xcalloc(cap, sizeof *names);
	q->parent = gp_xcalloc(cap, sizeof *q->parent);
	q->height = gp_xcalloc(cap, sizeof *q->height);
	q->qnode = gp_xcalloc(sc->n_queues + 1, sizeof *q->qnode);
	q->adv = gp_xcalloc(cap, sizeof *q->adv);
	for (size_t k = 0; k < sc->n_cohorts; k++)
		names[q->n_nodes++] = sc->cohorts[k].name;
	for (size_t k = 0; k < sc->n_cohorts; k++)
		q->parent[k] = sc->cohorts[k].parent_index; /* found by the loader */
	for (size_t i = 0; i < sc->n_queues; i++) {
		const char *c = sc->queues[i].cohort;
		q->qnode[i] = -1;
		if (!c)
			continue;
		size_t k = 0;
		while (k < q->n_nodes && strcmp(names[k], c))
			k++;
		if (k == q->n_nodes) {
			names[q->n_nodes] = c;
			q->parent[q->n_nodes++] = -1;
		}
		q->qnode[i] = (int32_t)k;
	}
	/* getNodeHeight: a cohort with queues is 1, else 1 + its highest child */
	for (size_t i = 0; i < sc->n_queues; i++)
		for (int32_t k = q->qnode[i], h = 1; k >= 0; k = q->parent[k], h++)
			if (q->height[k] < h)
				q->height[k] = h;
	free(names);
}

/* Whether node k is queue qi's cohort or one of its ancestors. */
static bool in_subtree(const struct quota *q, size_t qi, int32_t k)
{
	for (int32_t n = q->qnode[qi]; n >= 0; n = q->parent[n])
		if (n == k)
			return true;
	return false;
}

void quota_init(struct quota *q, const struct scenario *sc)
{
	memset(q, 0, sizeof *q);
	q->sc = sc;
	size_t cap = 0;
	for (size_t i = 0; i < sc->n_queues; i++)
		cap += sc->queues[i].n_quota;
	q->res = gp_xcalloc(cap + 1, sizeof *q->res);
	q->flav = gp_xcalloc(cap + 1, sizeof *q->flav);
	q->name_of = gp_xcalloc(cap + 1, sizeof *q->name_of);
	q->names = gp_xcalloc(cap + 1, sizeof *q->names);
	for (size_t i = 0; i < sc->n_queues; i++)
		for (size_t k = 0; k < sc->queues[i].n_quota; k++) {
			const struct quota_entry *e = &sc->queues[i].quota[k];
			int n = name_index(q, e->resource);
			if (n < 0) {
				n = (int)q->n_names;
				q->names[q->n_names++] = e->resource;
			}
			if (column(q, e->flavor, n) < 0) {
				q->res[q->n_res] = e->resource;
				q->flav[q->n_res] = e->flavor;
				q->name_of[q->n_res++] = (int32_t)n;
			}
		}
	size_t cells = sc->n_queues * q->n_res + 1; /* + 1: never a zero-size calloc */
	q->nominal = gp_xcalloc(cells, sizeof *q->nominal);
	q->limit = gp_xcalloc(cells, sizeof *q->limit);
	q->guaranteed = gp_xcalloc(cells, sizeof *q->guaranteed);
	q->usage = gp_xcalloc(cells, sizeof *q->usage);
	q->saved = gp_xcalloc(cells, sizeof *q->saved);
	q->need = gp_xcalloc(q->n_res + 1, sizeof *q->need);
	q->probe = gp_xcalloc(q->n_res + 1, sizeof *q->probe);
	q->root = gp_xcalloc(sc->n_queues, sizeof *q->root);
	q->limited = gp_xcalloc(sc->n_queues + 1, sizeof *q->limited);
	for (size_t i = 0; i < sc->n_queues * q->n_res; i++)
		q->nominal[i] = q->limit[i] = INFINITY;
	for (size_t i = 0; i < sc->n_queues; i++)
		for (size_t k = 0; k < sc->queues[i].n_quota; k++) {
			const struct quota_entry *e = &sc->queues[i].quota[k];
			int r = column(q, e->flavor, name_index(q, e->resource));
			size_t cell = i * q->n_res + (size_t)r;
			q->nominal[cell] = e->nominal;
			q->limit[cell] = e->borrowing_limit;
			q->guaranteed[cell] = isinf(e->lending_limit)
						      ? 0
						      : fmax(0, e->nominal - e->lending_limit);
			q->limited[i] = true;
		}
	number_roots(q);
	build_tree(q);
	q->rem = gp_xcalloc(q->n_res + 1, sizeof *q->rem);
}

void quota_free(struct quota *q)
{
	free(q->res);
	free(q->flav);
	free(q->name_of);
	free(q->names);
	free(q->probe);
	free(q->reason_text.s);
	free(q->reason_at);
	free(q->sorted);
	free(q->why.s);
	free(q->nominal);
	free(q->limit);
	free(q->guaranteed);
	free(q->usage);
	free(q->saved);
	free(q->need);
	free(q->root);
	free(q->limited);
	free(q->parent);
	free(q->height);
	free(q->qnode);
	free(q->adv);
	free(q->rem);
	memset(q, 0, sizeof *q);
}

void quota_request(const struct quota *q, const struct workload_spec *w, int32_t gpus, int32_t pods,
		   double *ask)
{
	char mig[96];
	if (w->request == REQUEST_MIG)
		snprintf(mig, sizeof mig, "nvidia.com/mig-%s", w->mig_profile);
	for (size_t r = 0; r < q->n_names; r++) {
		const char *name = q->names[r];
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
		ask[r] = per_pod * pods;
	}
}

void quota_columns(const struct quota *q, size_t qi, const double *ask, uint64_t assign,
		   double *req)
{
	const struct queue_spec *qs = &q->sc->queues[qi];
	memset(req, 0, q->n_res * sizeof *req);
	for (size_t g = 0; g < qs->n_groups; g++) {
		unsigned fp = (unsigned)(assign >> (8 * g)) & 0xffu;
		if (fp == QUOTA_NO_FLAVOR)
			continue;
		const struct resource_group *rg = &qs->groups[g];
		for (size_t k = 0; k < rg->n_covered; k++) {
			int n = name_index(q, rg->covered[k]);
			int r = n < 0 ? -1 : column(q, rg->flavors[fp], n);
			if (r >= 0 && ask[n] > 0)
				req[r] = ask[n];
		}
	}
}

int32_t quota_flavor(const struct quota *q, size_t qi, uint64_t assign, const char *gpu_resource,
		     int32_t *flavors, size_t *n)
{
	const struct queue_spec *qs = &q->sc->queues[qi];
	int32_t shown = -1;
	*n = 0;
	if (assign == QUOTA_UNASSIGNED)
		return -1;
	for (size_t g = 0; g < qs->n_groups; g++) {
		unsigned fp = (unsigned)(assign >> (8 * g)) & 0xffu;
		if (fp == QUOTA_NO_FLAVOR)
			continue;
		int32_t f = qs->groups[g].flavors[fp];
		flavors[(*n)++] = f;
		if (shown < 0)
			shown = f;
		for (size_t k = 0; k < qs->groups[g].n_covered; k++)
			if (!strcmp(qs->groups[g].covered[k], gpu_resource))
				shown = f;
	}
	return shown;
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

/* Cohort node k's SubtreeQuota and Usage of column r (resource_node.go,
 * accumulateFromChild): its queues' nominal less what each keeps
 * (guaranteed), and their usage past that.  gpuplan's cohorts have no quota
 * of their own, so a cohort's local quota is 0. */
static void subtree_totals(const struct quota *q, int32_t k, size_t r, double *quota, double *usage)
{
	*quota = *usage = 0;
	for (size_t i = 0; i < q->sc->n_queues; i++) {
		size_t cell = i * q->n_res + r;
		if (!isinf(q->nominal[cell]) && in_subtree(q, i, k)) {
			*quota += q->nominal[cell] - q->guaranteed[cell];
			*usage += fmax(0, q->usage[cell] - q->guaranteed[cell]);
		}
	}
}

/* IsWithinNominalInResources of cohort node k over the columns that need
 * preemption. */
static bool node_within(const struct quota *q, int32_t k)
{
	for (size_t r = 0; r < q->n_res; r++) {
		double quota, usage;
		if (!q->need[r])
			continue;
		subtree_totals(q, k, r, &quota, &usage);
		if (usage > quota + 1e-9)
			return false;
	}
	return true;
}

/* hierarchical_preemption.go, FindHeightOfLowestSubtreeThatFits: the height
 * of the lowest subtree of queue qi's cohort tree that fits val more of
 * column r (0: the queue itself), and in *below_root whether that subtree
 * is below the root (mayReclaimInHierarchy). */
static int lowest_fit(const struct quota *q, size_t qi, size_t r, double val, bool *below_root)
{
	size_t cell = qi * q->n_res + r;
	int32_t k = q->qnode[qi];
	*below_root = k >= 0;
	if (q->usage[cell] + val <= q->nominal[cell] + 1e-9 || k < 0)
		return 0;
	double remaining = val - fmax(0, q->guaranteed[cell] - q->usage[cell]);
	int32_t root = k;
	for (; k >= 0; root = k, k = q->parent[k]) {
		double quota, usage;
		subtree_totals(q, k, r, &quota, &usage);
		if (usage + remaining <= quota + 1e-9) {
			*below_root = q->parent[k] >= 0;
			return q->height[k];
		}
	}
	*below_root = false;
	return q->height[root];
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

static const char *flavor_name(const struct quota *q, size_t r)
{
	return q->sc->flavors[q->flav[r]].name;
}

/* flavorassigner.go, fitsResourceQuota's "No Fit" reason (Kueue >= 0.15's
 * words: a job is one pod set, so no earlier pod set used the flavor),
 * appended to out. */
static void no_fit_reason(const struct quota *q, size_t r, double req, double most,
			  struct gp_sbuf *out)
{
	char a[32], b[32];
	amount(q->res[r], req, a, sizeof a);
	amount(q->res[r], most, b, sizeof b);
	gp_sb_printf(out,
		     "insufficient quota for %s in flavor %s, previously considered podsets "
		     "requests (0) + current podset request (%s) > maximum capacity (%s)",
		     q->res[r], flavor_name(q, r), a, b);
}

/* fitsResourceQuota's "Preempt" reason, appended to out. */
static void unused_reason(const struct quota *q, size_t r, double more, struct gp_sbuf *out)
{
	char a[32];
	amount(q->res[r], more, a, sizeof a);
	gp_sb_printf(out, "insufficient unused quota for %s in flavor %s, %s more needed",
		     q->res[r], flavor_name(q, r), a);
}

const char *quota_why(const struct quota *q) { return gp_sb_str(&q->why); }

enum quota_verdict quota_check(struct quota *q, size_t qi, const double *req)
{
	/* flavorassigner.go fitsResourceQuota: "No Fit" first, above the
	 * maximum capacity; then "Preempt", above what is available now. */
	for (size_t r = 0; r < q->n_res; r++) {
		double most = potential(q, qi, r);
		if (req[r] > 0 && req[r] > most + 1e-9) {
			gp_sb_clear(&q->why);
			gp_sb_printf(&q->why, POD_SET);
			no_fit_reason(q, r, req[r], most, &q->why);
			return QUOTA_NO_FIT;
		}
	}
	for (size_t r = 0; r < q->n_res; r++) {
		double free_now = available(q, qi, r);
		if (req[r] > 0 && req[r] > free_now + 1e-9) {
			gp_sb_clear(&q->why);
			gp_sb_printf(&q->why, POD_SET);
			unused_reason(q, r, req[r] - free_now, &q->why);
			return QUOTA_WAIT;
		}
	}
	return QUOTA_FITS;
}

enum constraint_kind quota_binding(const struct quota *q, size_t qi, const double *ask,
				   int32_t *param)
{
	*param = (int32_t)qi;
	for (size_t r = 0; r < q->n_res; r++) {
		size_t cell = qi * q->n_res + r;
		double a = ask[q->name_of[r]], nominal = q->nominal[cell], own = q->usage[cell];
		if (!(a > 0) || isinf(nominal) || available(q, qi, r) >= a - 1e-9)
			continue;
		if (q->root[qi] < 0)
			return CONSTRAINT_QUOTA;
		if (own + a <= nominal + 1e-9)
			return CONSTRAINT_RECLAIM; /* its own quota, lent and held */
		if (own + a > nominal + q->limit[cell] + 1e-9)
			return CONSTRAINT_BORROWING_LIMIT;
		/* The cohort lacks it: a queue that keeps idle quota to itself. */
		double most = 1e-9;
		for (size_t o = 0; o < q->sc->n_queues; o++) {
			size_t oc = o * q->n_res + r;
			double kept = fmax(0, q->guaranteed[oc] - q->usage[oc]);
			if (o != qi && q->root[o] == q->root[qi] && kept > most) {
				most = kept;
				*param = (int32_t)o;
			}
		}
		return (size_t)*param != qi ? CONSTRAINT_LENDING_LIMIT : CONSTRAINT_QUOTA;
	}
	return CONSTRAINT_QUOTA;
}

const char *quota_behind(struct quota *q, size_t qi)
{
	gp_sb_clear(&q->why);
	gp_sb_printf(&q->why, "waiting for the head of StrictFIFO ClusterQueue %s to be admitted",
		     q->sc->queues[qi].name);
	return gp_sb_str(&q->why);
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

/* Whether the nodes between queue c's cohort and lca (lca excluded) all
 * use more than their quota of a column that needs preemption
 * (collectCandidatesInSubtree skips a subtree within nominal;
 * candidateIsValid checks the path again as candidates go). */
static bool path_over(const struct quota *q, size_t c, int32_t lca)
{
	for (int32_t k = q->qnode[c]; k >= 0 && k != lca; k = q->parent[k])
		if (node_within(q, k))
			return false;
	return true;
}

/* hierarchical_preemption.go, collectCandidatesForHierarchicalReclaim: along
 * queue qi's path (its cohort up to the root), whether the preemptor has a
 * hierarchical advantage at each node: its request fits its own quota, or a
 * node below fits what is left of it (QuantitiesFitInQuota).  Into q->adv,
 * by depth. */
static void advantage(struct quota *q, size_t qi, const double *req)
{
	bool adv = true;
	for (size_t r = 0; r < q->n_res; r++) {
		size_t cell = qi * q->n_res + r;
		if (req[r] > 0 && !isinf(q->nominal[cell]) &&
		    q->usage[cell] + req[r] > q->nominal[cell] + 1e-9)
			adv = false;
		q->rem[r] = fmax(0, req[r] - fmax(0, q->guaranteed[cell] - q->usage[cell]));
	}
	size_t d = 0;
	for (int32_t k = q->qnode[qi]; k >= 0; k = q->parent[k], d++) {
		q->adv[d] = adv;
		bool fits = true;
		for (size_t r = 0; r < q->n_res; r++) {
			double quota, usage;
			if (q->rem[r] <= 0)
				continue;
			subtree_totals(q, k, r, &quota, &usage);
			fits = fits && usage + q->rem[r] <= quota + 1e-9;
		}
		adv = adv || fits;
	}
}

/* The depth on queue qi's path of the lowest cohort it shares with queue c
 * (their lowest common ancestor), and that node in *lca; -1 when none. */
static int lca_depth(const struct quota *q, size_t qi, size_t c, int32_t *lca)
{
	int d = 0;
	for (int32_t k = q->qnode[qi]; k >= 0; k = q->parent[k], d++)
		if (in_subtree(q, c, k)) {
			*lca = k;
			return d;
		}
	*lca = -1;
	return -1;
}

/* preemption.go, findCandidates, with hierarchical_preemption.go's
 * classification: keeps, in place, the candidates the queue's policies
 * allow; returns how many. */
static size_t find_candidates(struct quota *q, size_t qi, int32_t prio, sim_time queued,
			      const double *req, struct quota_candidate *cands, size_t n)
{
	const struct queue_spec *qs = &q->sc->queues[qi];
	size_t k = 0;
	advantage(q, qi, req);
	for (size_t i = 0; i < n; i++) {
		struct quota_candidate c = cands[i];
		if (!uses_needed(q, c.req))
			continue;
		c.own = c.queue == qi;
		c.while_borrowing = false;
		c.hier = false;
		c.lca = -1;
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
			int d = lca_depth(q, qi, c.queue, &c.lca);
			if (d < 0 || !path_over(q, c.queue, c.lca))
				continue;
			/* hierarchical_preemption.go, classifyPreemptionVariant:
			 * HiearchicalReclaim with the advantage; else
			 * ReclaimWhileBorrowing under borrowWithinCohort for a lower
			 * priority at most maxPriorityThreshold, else
			 * ReclaimWithoutBorrowing. */
			c.hier = q->adv[d];
			c.while_borrowing =
				c.hier ||
				(qs->borrow_within != BORROW_WITHIN_NEVER && c.priority < prio &&
				 !(qs->borrow_within_threshold &&
				   c.priority > qs->borrow_within_max_priority));
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
	/* candidate_generator.go: the hierarchy candidates, then the other
	 * queues' by priority, then the queue's own */
	if (a->own != b->own)
		return a->own ? 1 : -1;
	if (a->hier != b->hier)
		return a->hier ? -1 : 1;
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
		/* candidateIsValid: another queue's, while it borrows; when the
		 * preemptor may borrow, only one ReclaimWhileBorrowing */
		if (!cands[i].own &&
		    (!borrows_needed(q, cands[i].queue) || (borrow && !cands[i].while_borrowing) ||
		     !path_over(q, cands[i].queue, cands[i].lca)))
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
	}
	if (!any)
		return 0;
	n = find_candidates(q, qi, prio, queued, req, cands, n);
	if (!n)
		return 0;
	qsort(cands, n, sizeof *cands, candidate_order);
	size_t others = 0; /* the other queues' candidates come first */
	while (others < n && !cands[others].own)
		others++;
	/* preemption.go, classicalPreemptions: only its own queue's
	 * candidates, or borrowing forbidden and the queue at its nominal
	 * quota: one attempt, borrowing allowed (other queues' candidates
	 * but hierarchy ones, ReclaimWithoutBorrowing then, are skipped).
	 * Borrowing forbidden and no hierarchy candidate: first without
	 * borrowing, then with.  Else first with borrowing, then without. */
	bool forbidden = qs->borrow_within == BORROW_WITHIN_NEVER;
	if (others == 0 || (forbidden && !under_nominal(q, qi)))
		return minimal(q, qi, req, cands, n, true, targets);
	if (forbidden && cands[0].hier)
		forbidden = false; /* hierarchy candidates: first with borrowing */
	size_t t = minimal(q, qi, req, cands, n, !forbidden, targets);
	return t ? t : minimal(q, qi, req, cands, n, forbidden, targets);
}

/* --- flavor assignment ------------------------------------------------------ */

/* flavorassigner.go's preemption modes, worst first, and a borrowing level
 * (0: within the queue's nominal quota; 1: from its cohort). */
enum fmode { FM_NO_FIT, FM_NO_CANDIDATES, FM_PREEMPT, FM_RECLAIM, FM_FIT };

struct gmode {
	enum fmode mode;
	int borrow;
};

/* isPreferred, with the default preference BorrowingOverPreemption. */
static bool preferred(struct gmode a, struct gmode b)
{
	if (a.mode == FM_NO_FIT)
		return false;
	if (b.mode == FM_NO_FIT)
		return true;
	bool a_none = a.mode == FM_NO_CANDIDATES, b_none = b.mode == FM_NO_CANDIDATES;
	if (a_none != b_none)
		return !a_none;
	if (a.mode != b.mode)
		return a.mode > b.mode;
	return a.borrow < b.borrow;
}

/* shouldTryNextFlavor */
static bool try_next(struct gmode m, const struct queue_spec *qs)
{
	if (m.mode == FM_NO_FIT || m.mode == FM_NO_CANDIDATES)
		return true;
	if ((m.mode == FM_PREEMPT || m.mode == FM_RECLAIM) &&
	    qs->when_can_preempt == FUNGIBILITY_TRY_NEXT_FLAVOR)
		return true;
	return m.borrow > 0 && qs->when_can_borrow == FUNGIBILITY_TRY_NEXT_FLAVOR;
}

/* A reason of quota_assign's is appended whole to reason_text between
 * reason_begin and reason_end, each ended by its NUL. */
static struct gp_sbuf *reason_begin(struct quota *q)
{
	GP_GROW(q->reason_at, q->cap_reasons, q->n_reasons + 1);
	q->reason_at[q->n_reasons++] = q->reason_text.n;
	return &q->reason_text;
}

static void reason_end(struct quota *q) { gp_sb_putc(&q->reason_text, '\0'); }

static const char *label_of(const struct flavor_spec *f, const char *key)
{
	for (size_t i = 0; i < f->n_node_labels; i++)
		if (!strcmp(f->node_labels[i].key, key))
			return f->node_labels[i].value;
	return NULL;
}

/* checkFlavorForPodSets: the flavor's NoSchedule and NoExecute node taints
 * are tolerated by the pod's tolerations and the flavor's own; the pod's
 * node selector and affinity, cut to the keys the flavor labels, match the
 * flavor's labels (flavorSelector). */
static bool flavor_matches(struct quota *q, const struct flavor_spec *f,
			   const struct workload_spec *w)
{
	static const char *const effects[] = {"NoSchedule", "PreferNoSchedule", "NoExecute"};
	for (size_t i = 0; i < f->n_node_taints; i++) {
		const struct taint *t = &f->node_taints[i];
		if (t->effect == EFFECT_PREFER_NO_SCHEDULE)
			continue;
		bool ok = false;
		for (size_t k = 0; k < w->n_tolerations && !ok; k++)
			ok = scenario_tolerates(&w->tolerations[k], t);
		for (size_t k = 0; k < f->n_tolerations && !ok; k++)
			ok = scenario_tolerates(&f->tolerations[k], t);
		if (!ok) {
			/* Go's %s of a corev1.Taint value: its fields in braces */
			gp_sb_printf(reason_begin(q),
				     "untolerated taint {%s %s %s <nil>} in flavor %s", t->key,
				     t->value, effects[t->effect], f->name);
			reason_end(q);
			return false;
		}
	}
	bool match = true;
	for (size_t i = 0; i < w->n_node_selector && match; i++) {
		const char *v = label_of(f, w->node_selector[i].key);
		match = !v || !strcmp(v, w->node_selector[i].value);
	}
	for (size_t i = 0; i < w->n_affinity && match; i++) {
		const struct affinity_expr *e = &w->affinity[i];
		if (!f->n_node_labels)
			break;
		bool has_key = false;
		for (size_t k = 0; k < f->n_node_labels; k++)
			has_key = has_key || !strcmp(f->node_labels[k].key, e->key);
		if (!has_key)
			continue;
		const char *v = label_of(f, e->key);
		bool listed = false;
		for (size_t k = 0; k < e->n_values; k++)
			listed = listed || !strcmp(e->values[k], v);
		match = e->op == AFFINITY_IN       ? listed
			: e->op == AFFINITY_NOT_IN ? !listed
						   : e->op == AFFINITY_EXISTS;
	}
	if (!match) {
		gp_sb_printf(reason_begin(q), "flavor %s doesn't match node affinity", f->name);
		reason_end(q);
	}
	return match;
}

/* The mode a job asking val of column r would have (fitsResourceQuota);
 * *never: no later release can change a NoFit. */
static struct gmode fits_column(struct quota *q, size_t qi, size_t r, double val,
				const struct quota_job *job, const struct quota_oracle *oracle,
				uint32_t **targets, bool *never)
{
	const struct queue_spec *qs = &q->sc->queues[qi];
	size_t cell = qi * q->n_res + r;
	double most = potential(q, qi, r);
	*never = false;
	if (val > most + 1e-9) {
		no_fit_reason(q, r, val, most, reason_begin(q));
		reason_end(q);
		*never = true;
		return (struct gmode){FM_NO_FIT, 0};
	}
	bool in_hierarchy;
	int borrow = lowest_fit(q, qi, r, val, &in_hierarchy);
	double free_now = available(q, qi, r);
	if (val <= free_now + 1e-9)
		return (struct gmode){FM_FIT, borrow};
	unused_reason(q, r, val - free_now, reason_begin(q));
	reason_end(q);
	/* preemption is tried for a request within the nominal quota, where a
	 * subtree below the root fits it (mayReclaimInHierarchy), or under
	 * borrowWithinCohort (canPreemptWhileBorrowing); withinClusterQueue
	 * does not open it to a larger one */
	bool may_preempt = val <= q->nominal[cell] + 1e-9 || in_hierarchy ||
			   qs->borrow_within != BORROW_WITHIN_NEVER;
	if (!may_preempt)
		return (struct gmode){FM_NO_FIT, borrow};
	if (!oracle || (qs->within == WITHIN_NEVER && qs->reclaim == RECLAIM_NEVER))
		return (struct gmode){FM_NO_CANDIDATES, borrow};
	/* preemption_oracle.go, SimulatePreemption: the targets for this one
	 * flavor-resource; Preempt when one is of the queue itself. */
	struct quota_candidate *cands;
	size_t n = oracle->candidates(oracle->ctx, &cands);
	memset(q->probe, 0, q->n_res * sizeof *q->probe);
	q->probe[r] = val;
	size_t t = quota_preempt(q, qi, job->priority, job->queued, q->probe, cands, n, *targets);
	if (!t)
		return (struct gmode){FM_NO_CANDIDATES, borrow};
	bool own = false;
	for (size_t i = 0; i < n && !own; i++)
		for (size_t k = 0; k < t && !own; k++)
			own = cands[i].job == (*targets)[k] && cands[i].queue == qi;
	return (struct gmode){own ? FM_PREEMPT : FM_RECLAIM, borrow};
}

static int reason_order(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Kueue's Status.Message: the reasons sorted, joined by ", ", into q->why. */
static void status_message(struct quota *q)
{
	GP_GROW(q->sorted, q->cap_sorted, q->n_reasons + 1);
	for (size_t i = 0; i < q->n_reasons; i++)
		q->sorted[i] = q->reason_text.s + q->reason_at[i];
	qsort(q->sorted, q->n_reasons, sizeof *q->sorted, reason_order);
	gp_sb_clear(&q->why);
	gp_sb_printf(&q->why, POD_SET);
	for (size_t i = 0; i < q->n_reasons; i++)
		gp_sb_printf(&q->why, "%s%s", i > 0 ? ", " : "", q->sorted[i]);
}

enum quota_verdict quota_assign(struct quota *q, size_t qi, const struct quota_job *job,
				const struct quota_oracle *oracle, uint64_t *assign, double *req,
				uint32_t **targets, size_t *n_targets)
{
	const struct queue_spec *qs = &q->sc->queues[qi];
	const struct scenario *sc = q->sc;
	bool preempts = false;
	*assign = QUOTA_UNASSIGNED;
	*n_targets = 0;
	q->n_reasons = 0;
	gp_sb_clear(&q->reason_text);
	uint64_t chosen = QUOTA_UNASSIGNED;
	for (size_t g = 0; g < qs->n_groups; g++) {
		const struct resource_group *rg = &qs->groups[g];
		bool asks = false;
		for (size_t k = 0; k < rg->n_covered; k++) {
			int n = name_index(q, rg->covered[k]);
			asks = asks || (n >= 0 && job->ask[n] > 0);
		}
		if (!asks)
			continue;
		size_t from = q->n_reasons; /* this group's reasons */
		struct gmode best = {FM_NO_FIT, 0};
		int best_fp = -1;
		bool never = true;
		for (size_t fp = 0; fp < rg->n_flavors; fp++) {
			int32_t f = rg->flavors[fp];
			if (!flavor_matches(q, &sc->flavors[f], job->w))
				continue;
			struct gmode rep = {FM_FIT, 0};
			bool flavor_never = false;
			for (size_t k = 0; k < rg->n_covered && rep.mode != FM_NO_FIT; k++) {
				int n = name_index(q, rg->covered[k]);
				int r = n < 0 ? -1 : column(q, f, n);
				if (r < 0 || job->ask[n] <= 0)
					continue;
				bool col_never;
				struct gmode m = fits_column(q, qi, (size_t)r, job->ask[n], job,
							     oracle, targets, &col_never);
				flavor_never = flavor_never || col_never;
				if (preferred(rep, m))
					rep = m;
			}
			never = never && flavor_never;
			if (!try_next(rep, qs)) {
				best = rep;
				best_fp = (int)fp;
				break;
			}
			if (preferred(rep, best)) {
				best = rep;
				best_fp = (int)fp;
			}
		}
		if (best.mode == FM_NO_FIT || best_fp < 0) {
			/* the group's status alone (assignFlavors breaks) */
			memmove(q->reason_at, q->reason_at + from,
				(q->n_reasons - from) * sizeof *q->reason_at);
			q->n_reasons -= from;
			status_message(q);
			return never ? QUOTA_NO_FIT : QUOTA_WAIT;
		}
		if (best.mode == FM_FIT)
			q->n_reasons = from; /* a group that fits has no status */
		preempts = preempts || best.mode != FM_FIT;
		chosen &= ~(UINT64_C(0xff) << (8 * g));
		chosen |= (uint64_t)best_fp << (8 * g);
	}
	quota_columns(q, qi, job->ask, chosen, req);
	if (preempts) {
		/* the preemptor's targets for the whole assignment */
		struct quota_candidate *cands = NULL;
		size_t n = oracle ? oracle->candidates(oracle->ctx, &cands) : 0;
		size_t t = n ? quota_preempt(q, qi, job->priority, job->queued, req, cands, n,
					     *targets)
			     : 0;
		if (!t) {
			status_message(q);
			return QUOTA_WAIT;
		}
		*n_targets = t;
	}
	*assign = chosen;
	return QUOTA_FITS;
}
