/*
 * quota.c - Kueue-like admission (see quota.h).
 */
#include "gpuplan/quota.h"

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
	q->usage = gp_xcalloc(cells, sizeof *q->usage);
	q->root = gp_xcalloc(sc->n_queues, sizeof *q->root);
	for (size_t i = 0; i < sc->n_queues * q->n_res; i++)
		q->nominal[i] = q->limit[i] = INFINITY;
	for (size_t i = 0; i < sc->n_queues; i++)
		for (size_t k = 0; k < sc->queues[i].n_quota; k++) {
			const struct quota_entry *e = &sc->queues[i].quota[k];
			size_t cell = i * q->n_res + (size_t)res_index(q, e->resource);
			q->nominal[cell] = e->nominal;
			q->limit[cell] = e->borrowing_limit;
		}
	number_roots(q);
}

void quota_free(struct quota *q)
{
	free(q->res);
	free(q->nominal);
	free(q->limit);
	free(q->usage);
	free(q->root);
	memset(q, 0, sizeof *q);
}

void quota_request(const struct quota *q, const struct workload_spec *w, int32_t gpus,
		   int32_t pods, double *req)
{
	char mig[96];
	if (w->request == REQUEST_MIG)
		snprintf(mig, sizeof mig, "nvidia.com/mig-%s", w->mig_profile);
	for (size_t r = 0; r < q->n_res; r++) {
		const char *name = q->res[r];
		double per_pod = 0;
		if (!strcmp(name, "nvidia.com/gpu"))
			per_pod = w->request == REQUEST_GPUS ? gpus
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

/* Sums of nominal quota and usage of resource r over the cohort root k. */
static void cohort_totals(const struct quota *q, int32_t k, size_t r, double *nominal,
			  double *usage)
{
	*nominal = *usage = 0;
	for (size_t i = 0; i < q->sc->n_queues; i++)
		if (q->root[i] == k && !isinf(q->nominal[i * q->n_res + r])) {
			*nominal += q->nominal[i * q->n_res + r];
			*usage += q->usage[i * q->n_res + r];
		}
}

/* Amounts as Kubernetes quantities: whole numbers plainly, memory in Gi. */
static void amount(const char *res, double v, char *buf, size_t len)
{
	if (!strcmp(res, "memory"))
		snprintf(buf, len, "%.6gGi", v / (1024.0 * 1024 * 1024));
	else
		snprintf(buf, len, "%.6g", v);
}

static enum quota_verdict wait(char *why, size_t len, const char *res, double missing)
{
	char a[32];
	amount(res, missing, a, sizeof a);
	snprintf(why, len, "insufficient unused quota for %s in flavor default, %s more needed",
		 res, a);
	return QUOTA_WAIT;
}

static enum quota_verdict too_big(char *why, size_t len, const char *res, double req,
				  double max)
{
	char a[32], b[32];
	amount(res, req, a, sizeof a);
	amount(res, max, b, sizeof b);
	snprintf(why, len, "insufficient quota for %s in flavor default, request > maximum "
		 "capacity (%s > %s)", res, a, b);
	return QUOTA_WAIT;
}

/* The verdict for one resource. */
static enum quota_verdict check_one(const struct quota *q, size_t qi, size_t r, double req,
				    char *why, size_t len)
{
	size_t cell = qi * q->n_res + r;
	double nominal = q->nominal[cell], own = q->usage[cell] + req;
	const char *res = q->res[r];
	if (isinf(nominal) || req <= 0)
		return QUOTA_FITS;
	int32_t k = q->root[qi];
	if (k < 0)
		return req > nominal ? too_big(why, len, res, req, nominal)
		       : own > nominal ? wait(why, len, res, own - nominal)
				       : QUOTA_FITS;
	double cohort_nominal, cohort_usage;
	cohort_totals(q, k, r, &cohort_nominal, &cohort_usage);
	double most = nominal + fmin(q->limit[cell], cohort_nominal - nominal);
	if (req > most)
		return too_big(why, len, res, req, most);
	if (own - nominal > q->limit[cell])
		return wait(why, len, res, own - nominal - q->limit[cell]);
	if (cohort_usage + req <= cohort_nominal)
		return QUOTA_FITS;
	/* Within its own quota while others borrow it: it may take it back. */
	if (own <= nominal && q->sc->queues[qi].reclaim != RECLAIM_NEVER)
		return QUOTA_RECLAIM;
	return wait(why, len, res, cohort_usage + req - cohort_nominal);
}

enum quota_verdict quota_check(const struct quota *q, size_t qi, const double *req, char *why,
			       size_t why_len)
{
	enum quota_verdict v = QUOTA_FITS;
	for (size_t r = 0; r < q->n_res; r++) {
		enum quota_verdict one = check_one(q, qi, r, req[r], why, why_len);
		if (one == QUOTA_WAIT)
			return one;
		if (one == QUOTA_RECLAIM)
			v = one;
	}
	return v;
}

void quota_charge(struct quota *q, size_t qi, const double *req, double sign)
{
	for (size_t r = 0; r < q->n_res; r++) {
		double *u = &q->usage[qi * q->n_res + r];
		*u += sign * req[r];
		if (*u < 1e-9)
			*u = 0; /* float dust */
	}
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

/* Whether candidate v may give back quota to a job of queue qi (priority
 * prio) asking req: it borrows a resource req needs, within qi's cohort. */
static bool may_reclaim_from(const struct quota *q, size_t qi, int32_t prio, const double *req,
			     const struct quota_candidate *v)
{
	if (v->queue == qi || !quota_same_cohort(q, qi, v->queue))
		return false;
	if (q->sc->queues[qi].reclaim == RECLAIM_LOWER_PRIORITY && v->priority >= prio)
		return false;
	for (size_t r = 0; r < q->n_res; r++)
		if (req[r] > 0 && quota_borrowing(q, v->queue, r))
			return true;
	return false;
}

int64_t quota_pick_victim(const struct quota *q, size_t qi, int32_t prio, const double *req,
			  const struct quota_candidate *cands, size_t n)
{
	int64_t victim = -1;
	for (size_t i = 0; i < n; i++) {
		const struct quota_candidate *c = &cands[i];
		if (!may_reclaim_from(q, qi, prio, req, c))
			continue;
		const struct quota_candidate *b = victim >= 0 ? &cands[victim] : NULL;
		if (!b || c->priority < b->priority ||
		    (c->priority == b->priority && c->started >= b->started))
			victim = (int64_t)i;
	}
	return victim;
}
