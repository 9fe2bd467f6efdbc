/*
 * quota.h - admission by queue quota, as Kueue's ClusterQueues do it.
 *
 * Admission reserves quota; it does not place pods.  A queue's quota lists
 * resources (nvidia.com/gpu, nvidia.com/mig-<profile>, cpu, memory) with a
 * nominal amount; a job is admitted when what its queue has admitted plus
 * the job fits, and it holds that quota from admission until it ends or is
 * preempted, while its pods wait for nodes or run (kube-scheduler's part,
 * placement.h).  Queues of one cohort tree lend each other what they do
 * not use (quota flows up the tree as Kueue's resource nodes keep it): a queue may go over its nominal quota by
 * up to its borrowing_limit, as long as the cohort as a whole stays within
 * the sum of its members' nominal quotas.  Resources a queue does not list
 * are not limited for it.  Quota is kept per column, a (flavor, resource)
 * as Kueue's FlavorResource; quota_assign picks a flavor per resource group
 * as Kueue's flavor assigner does (a plain quota: is the one flavor
 * "default").  A job is one pod set, "main".
 *
 * Preemption (quota_preempt) follows Kueue's classical preemptor
 * (pkg/scheduler/preemption/preemption.go): candidates come from the
 * queue itself under withinClusterQueue and from the borrowing queues of
 * its cohort under reclaimWithinCohort; they are ordered other queues
 * first, then lower priority, then the most recently admitted; the
 * smallest set is found by removing candidates in that order until the job
 * fits, then adding back, in reverse, those it fits without.
 *
 * Costs: quota_check and a fit test are O(queues * resources) (cohort
 * sums); quota_preempt sorts its candidates, O(n log n), plus a fit test
 * per candidate.  quota_init allocates; nothing else does.
 */
#ifndef GPUPLAN_QUOTA_H
#define GPUPLAN_QUOTA_H

#include "gpuplan/results.h"
#include "gpuplan/scenario.h"

/* A job's flavors: one byte per resource group of its queue, the flavor's
 * position in the group; QUOTA_NO_FLAVOR where it asks nothing of the group. */
#define QUOTA_NO_FLAVOR  0xffu
#define QUOTA_UNASSIGNED UINT64_MAX

struct quota {
	const struct scenario *sc;
	size_t n_res;       /* columns: distinct (flavor, resource) any quota names */
	const char **res;   /* their resources' names (the scenario's strings) */
	int32_t *flav;      /* their flavors (scenario.flavors) */
	int32_t *name_of;   /* their resources' index in names */
	size_t n_names;     /* distinct resources any quota names */
	const char **names; /* their names */
	double *probe;      /* scratch [n_res]: one flavor's request, for the oracle */
	/* Kueue's messages, whole whatever the names they carry: scratch that
	 * grows to the longest and is reused, so no call allocates after it. */
	struct gp_sbuf why;         /* the last message (quota_why) */
	struct gp_sbuf reason_text; /* quota_assign's reasons, each ended by its NUL */
	size_t *reason_at;          /* their offsets in reason_text */
	size_t n_reasons, cap_reasons;
	const char **sorted; /* scratch: the reasons in Kueue's order */
	size_t cap_sorted;
	double *nominal;    /* [queue * n_res + r]; INFINITY: not limited */
	double *limit;      /* borrowing limit; INFINITY: none */
	double *guaranteed; /* quota not lent to the cohort: nominal - lending limit, or 0 */
	double *usage;      /* admitted amounts */
	double *saved;      /* scratch: usage while quota_preempt simulates */
	bool *need;         /* scratch: per resource, short of quota */
	int32_t *root;      /* per queue: its root cohort's number, -1 for none */
	/* the cohort tree (Kueue's hierarchical cohorts): nodes are the
	 * cohorts, declared or named by a queue */
	size_t n_nodes;
	int32_t *parent; /* per node: its parent node, -1 for a root */
	int32_t *height; /* per node: its distance to its furthest leaf (a queue is 0) */
	int32_t *qnode;  /* per queue: its cohort's node, -1 for none */
	bool *adv;       /* scratch per node on a path: hierarchical advantage */
	double *rem;     /* scratch [n_res]: what is left of a request up the path */
	bool *limited;   /* per queue: it lists a quota (else it admits anything) */
};

enum quota_verdict {
	QUOTA_FITS,   /* admit */
	QUOTA_WAIT,   /* not now: a release or a preemption may let it in */
	QUOTA_NO_FIT, /* never: the request is above what the queue may ever use */
};

void quota_init(struct quota *q, const struct scenario *sc);
void quota_free(struct quota *q);

/* What a job of workload w (gpus units per pod, pods pods) asks of each
 * resource, into ask[n_names]. */
void quota_request(const struct quota *q, const struct workload_spec *w, int32_t gpus, int32_t pods,
		   double *ask);

/* The amounts per column (flavor, resource), req[n_res], that a job of
 * queue qi asking ask holds under its flavors assign. */
void quota_columns(const struct quota *q, size_t qi, const double *ask, uint64_t assign,
		   double *req);

/* The flavor shown for a job of queue qi with flavors assign: the one of
 * the group covering gpu_resource (nvidia.com/gpu or nvidia.com/mig-...),
 * else of its first group; -1 for none.  Into flavors[SCENARIO_MAX_GROUPS]
 * goes every flavor it was assigned; *n how many. */
int32_t quota_flavor(const struct quota *q, size_t qi, uint64_t assign, const char *gpu_resource,
		     int32_t *flavors, size_t *n);

/* Whether queue qi may admit req now; otherwise Kueue's message in
 * quota_why ("couldn't assign flavors to pod set main: insufficient unused
 * quota for nvidia.com/gpu in flavor default, 2 more needed"). */
enum quota_verdict quota_check(struct quota *q, size_t qi, const double *req);

/* Kueue's message of the last quota_check or quota_assign that did not admit,
 * or of quota_behind: whole (names of up to 253 characters included), owned
 * by q and valid until the next of those calls. */
const char *quota_why(const struct quota *q);

/* Which limit keeps a job of queue qi asking ask (quota_request's) out now
 * (bind.h): CONSTRAINT_RECLAIM, its own nominal quota would hold it but
 * the cohort's borrowers hold it (param: qi, the lender that does not
 * reclaim); CONSTRAINT_BORROWING_LIMIT, it would borrow past its limit;
 * CONSTRAINT_LENDING_LIMIT, the cohort lacks it while another queue keeps
 * idle quota to itself (param: the one keeping the most); else
 * CONSTRAINT_QUOTA (param: qi).  O(queues) when the cohort lacks it, else
 * O(resources). */
enum constraint_kind quota_binding(const struct quota *q, size_t qi, const double *ask,
				   int32_t *param);

/* The reason of a job of StrictFIFO queue qi that waits behind the queue's
 * head: Kueue never nominates it, so it has no condition of its own.  The
 * text is quota_why's. */
const char *quota_behind(struct quota *q, size_t qi);

/* Whether queue qi limits any resource: a queue without a quota admits a
 * job at once and is never short, so it neither preempts nor is preempted. */
static inline bool quota_limited(const struct quota *q, size_t qi) { return q->limited[qi]; }

/* Adds (sign +1, admission) or removes (-1, release) req to queue qi's usage. */
void quota_charge(struct quota *q, size_t qi, const double *req, double sign);

/* Whether admitting req would take queue qi over its nominal quota of a
 * resource: it would borrow from its cohort. */
bool quota_borrows(const struct quota *q, size_t qi, const double *req);

/* Whether queue qi uses more of resource r than its nominal quota. */
bool quota_borrowing(const struct quota *q, size_t qi, size_t r);

/* Whether queues a and b share a cohort. */
bool quota_same_cohort(const struct quota *q, size_t a, size_t b);

/* An admitted job that a preemption could evict. */
struct quota_candidate {
	uint32_t job; /* the caller's id */
	uint32_t seq; /* submission order: the last tie-breaker, newer first */
	size_t queue;
	int32_t priority;
	sim_time admitted;    /* when it reserved its quota */
	sim_time queued;      /* its queue-order timestamp (submission) */
	const double *req;    /* what it holds, [n_res] */
	bool own;             /* set by quota_preempt: of the preemptor's queue */
	bool while_borrowing; /* set by quota_preempt: another queue's that may be
			       * preempted while the preemptor borrows
			       * (borrowWithinCohort, or hierarchical reclaim) */
	bool hier;            /* set by quota_preempt: the preemptor has a hierarchical
			       * advantage over it (HiearchicalReclaim) */
	int32_t lca;          /* set by quota_preempt: the lowest cohort it shares with
			       * the preemptor */
};

/* The smallest set of the n candidates (the caller's admitted jobs, in any
 * order) whose eviction lets a job of queue qi (priority prio, queued at
 * queued) asking req be admitted, as Kueue's getTargets and
 * minimalPreemptions choose it under the queue's withinClusterQueue and
 * reclaimWithinCohort policies.  Reorders cands; writes the chosen
 * candidates' job ids to targets (room for n) and returns how many, 0 when
 * no set lets the job in.  Usage is unchanged on return. */
size_t quota_preempt(struct quota *q, size_t qi, int32_t prio, sim_time queued, const double *req,
		     struct quota_candidate *cands, size_t n, uint32_t *targets);

/* The admitted jobs a preemption could evict, asked for when the flavor
 * assigner needs them (each call rebuilds them: quota_preempt reorders and
 * filters the array). */
struct quota_oracle {
	size_t (*candidates)(void *ctx, struct quota_candidate **out);
	void *ctx;
};

/* A job waiting for admission. */
struct quota_job {
	const struct workload_spec *w;
	int32_t priority;
	sim_time queued;
	const double *ask; /* [n_names] */
};

/*
 * Kueue's flavor assignment for a job of queue qi (flavorassigner.go,
 * assignFlavors and findFlavorForPodSets): for each resource group, its
 * flavors in order; a flavor whose node taints the job does not tolerate
 * or whose node labels its selector or affinity refuse is skipped; each
 * covered resource the job asks for is Fit (maybe borrowing), Preempt /
 * Reclaim (the oracle found victims), NoCandidates or NoFit
 * (fitsResourceQuota); the queue's flavor_fungibility decides whether the
 * search stops at a flavor that borrows or preempts; the best flavor wins
 * (isPreferred: preemption mode, then borrowing).  QUOTA_FITS: *assign and
 * req[n_res] hold the flavors and amounts, and *targets the *n_targets jobs
 * to evict first (the oracle's candidates callback keeps *targets with room
 * for every candidate).  Else quota_why holds
 * Kueue's message.
 */
enum quota_verdict quota_assign(struct quota *q, size_t qi, const struct quota_job *job,
				const struct quota_oracle *oracle, uint64_t *assign, double *req,
				uint32_t **targets, size_t *n_targets);

#endif
