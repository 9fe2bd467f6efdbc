/*
 * quota.h - admission by queue quota, as Kueue's ClusterQueues do it.
 *
 * A queue's quota lists resources (nvidia.com/gpu, nvidia.com/mig-<profile>,
 * cpu, memory) with a nominal amount; a job is admitted when what its queue
 * has admitted plus the job fits.  Queues of one cohort (the root of the
 * cohort tree) lend each other what they do not use: a queue may go over its
 * nominal quota by up to its borrowing_limit, as long as the cohort as a
 * whole stays within the sum of its members' nominal quotas.  A queue that
 * asks for no more than its own nominal quota while others borrow it may
 * reclaim it by preemption (reclaim_within_cohort: Any or LowerPriority);
 * the simulation lists the running jobs and quota_pick_victim chooses.
 * Resources a queue does not list are not limited for it.  Kueue's flavors
 * are not modeled: every resource is in the flavor "default".
 */
#ifndef GPUPLAN_QUOTA_H
#define GPUPLAN_QUOTA_H

#include "gpuplan/scenario.h"

struct quota {
	const struct scenario *sc;
	size_t n_res;           /* distinct resources any quota names */
	const char **res;       /* their names (the scenario's strings) */
	double *nominal;        /* [queue * n_res + r]; INFINITY: not limited */
	double *limit;          /* borrowing limit; INFINITY: none */
	double *usage;          /* admitted amounts */
	int32_t *root;          /* per queue: its root cohort's number, -1 for none */
};

enum quota_verdict {
	QUOTA_FITS,     /* admit */
	QUOTA_RECLAIM,  /* admit after preempting borrowers of the cohort */
	QUOTA_WAIT,     /* not now; the message says why */
};

void quota_init(struct quota *q, const struct scenario *sc);
void quota_free(struct quota *q);

/* What a job of workload w (gpus units per pod, pods pods) asks of each
 * resource, into req[n_res]. */
void quota_request(const struct quota *q, const struct workload_spec *w, int32_t gpus,
		   int32_t pods, double *req);

/* Whether queue qi may admit req now; on QUOTA_WAIT, Kueue's message in why
 * ("insufficient unused quota for nvidia.com/gpu in flavor default, 2 more
 * needed").  QUOTA_RECLAIM only when the queue's reclaim policy allows it. */
enum quota_verdict quota_check(const struct quota *q, size_t qi, const double *req, char *why,
			       size_t why_len);

/* Adds (sign +1, admission) or removes (-1, release) req to queue qi's usage. */
void quota_charge(struct quota *q, size_t qi, const double *req, double sign);

/* Whether queue qi uses more of resource r than its nominal quota. */
bool quota_borrowing(const struct quota *q, size_t qi, size_t r);

/* Whether queues a and b share a cohort. */
bool quota_same_cohort(const struct quota *q, size_t a, size_t b);

/* A running job that a reclaim could preempt. */
struct quota_candidate {
	uint32_t job;          /* the caller's id */
	size_t queue;
	int32_t priority;
	sim_time started;      /* when its current allocation began */
};

/* The victim Kueue's reclaimWithinCohort takes next for a job of queue qi
 * with priority prio asking req: among the candidates of other queues of its
 * cohort that borrow a resource req needs (under LowerPriority, only those of
 * lower priority), the lowest priority, then the most recently started (the
 * later candidate on a tie).  Returns its index in cands, -1 when none.  O(n). */
int64_t quota_pick_victim(const struct quota *q, size_t qi, int32_t prio, const double *req,
			  const struct quota_candidate *cands, size_t n);

#endif
