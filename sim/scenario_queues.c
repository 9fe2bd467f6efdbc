/*
 * scenario_queues.c - the queues section (Kueue-like quotas, borrowing, cohorts)
 * and the scheduler section.
 */
#include "gpuplan/scenario.h"

#include <math.h>
#include <string.h>

#include "scenario_int.h"

#include "gpuplan/strindex.h"

/* --- queues, scheduler, output ------------------------------------------- */

static const char *const strategy_names[] = {"BestEffortFIFO", "StrictFIFO"};

static int queue_name(struct loader *ld, const struct ynode *v, void *obj)
{
	return ld_get_item_name(ld, v, "queue name", &((struct queue_spec *)obj)->name);
}

static int queue_strategy(struct loader *ld, const struct ynode *v, void *obj)
{
	int s = 0;
	int rc = ld_get_enum(ld, v, "strategy", strategy_names, N_OF(strategy_names), &s);
	((struct queue_spec *)obj)->strategy = (enum queue_strategy)s;
	return rc;
}

static int queue_cohort(struct loader *ld, const struct ynode *v, void *obj)
{
	return ld_get_item_name(ld, v, "cohort", &((struct queue_spec *)obj)->cohort);
}

/* Whether a quota may name the resource: nvidia.com/gpu,
 * nvidia.com/mig-<profile>, cpu or memory. */
int ld_quota_amount_check(struct loader *ld, const char *key, struct srcloc loc)
{
	if (!strcmp(key, "memory") || !strcmp(key, "cpu") || !strcmp(key, "nvidia.com/gpu") ||
	    !strncmp(key, "nvidia.com/mig-", 15))
		return GP_OK;
	return gp_located(ld->err, loc,
			  "unknown resource '%s'; expected nvidia.com/gpu, "
			  "nvidia.com/mig-<profile>, cpu or memory",
			  key);
}

/* The resources a quota may name, and how their amounts read. */
int ld_quota_amount(struct loader *ld, const char *key, const struct ynode *v, double *out)
{
	int rc = ld_quota_amount_check(ld, key, v->loc);
	if (rc)
		return rc;
	if (!strcmp(key, "memory"))
		return ld_get_size(ld, v, "memory quota", out);
	return ld_get_amount(ld, v, key, "an amount >= 0, like 4", out);
}

static struct quota_entry *quota_line(struct queue_spec *q, const char *resource)
{
	for (size_t i = 0; i < q->n_quota; i++)
		if (!strcmp(q->quota[i].resource, resource))
			return &q->quota[i];
	q->quota = gp_xrealloc(q->quota, (q->n_quota + 1) * sizeof *q->quota);
	struct quota_entry *e = &q->quota[q->n_quota++];
	*e = (struct quota_entry){.resource = gp_xstrdup(resource),
				  .nominal = INFINITY,
				  .borrowing_limit = INFINITY,
				  .lending_limit = INFINITY};
	return e;
}

/* The three maps of amounts a queue gives per resource. */
enum quota_field { FIELD_QUOTA, FIELD_BORROWING, FIELD_LENDING };

/* quota: {nvidia.com/gpu: 4, ...}, borrowing_limit: {nvidia.com/gpu: 2} and
 * lending_limit: {nvidia.com/gpu: 1} */
static int quota_map(struct loader *ld, const struct ynode *v, struct queue_spec *q,
		     enum quota_field field)
{
	static const char *const names[] = {"quota", "borrowing_limit", "lending_limit"};
	if (v->kind != YNODE_MAP)
		return ld_bad_value(ld, v, names[field], "a map like {nvidia.com/gpu: 4}");
	for (size_t i = 0; i < v->n; i++) {
		double amount;
		int rc = ld_quota_amount(ld, v->keys[i], v->items[i], &amount);
		if (rc)
			return rc;
		struct quota_entry *e = quota_line(q, v->keys[i]);
		double *to[] = {&e->nominal, &e->borrowing_limit, &e->lending_limit};
		*to[field] = amount;
		e->loc = v->key_locs[i];
	}
	return GP_OK;
}

static int queue_quota(struct loader *ld, const struct ynode *v, void *obj)
{
	return quota_map(ld, v, obj, FIELD_QUOTA);
}

static int queue_borrowing_limit(struct loader *ld, const struct ynode *v, void *obj)
{
	return quota_map(ld, v, obj, FIELD_BORROWING);
}

static int queue_lending_limit(struct loader *ld, const struct ynode *v, void *obj)
{
	return quota_map(ld, v, obj, FIELD_LENDING);
}

static int preemption_reclaim(struct loader *ld, const struct ynode *v, void *obj)
{
	static const char *const names[] = {"Never", "LowerPriority", "Any"};
	int k = 0;
	int rc = ld_get_enum(ld, v, "reclaim_within_cohort", names, N_OF(names), &k);
	((struct queue_spec *)obj)->reclaim = (enum reclaim_policy)k;
	return rc;
}

/* Kueue's ClusterQueue spec.preemption.withinClusterQueue (Never by default). */
static int preemption_within(struct loader *ld, const struct ynode *v, void *obj)
{
	static const char *const names[] = {"Never", "LowerPriority", "LowerOrNewerEqualPriority"};
	int k = 0;
	int rc = ld_get_enum(ld, v, "within_cluster_queue", names, N_OF(names), &k);
	((struct queue_spec *)obj)->within = (enum within_policy)k;
	return rc;
}

static int borrow_within_policy(struct loader *ld, const struct ynode *v, void *obj)
{
	static const char *const names[] = {"Never", "LowerPriority"};
	int k = 0;
	int rc = ld_get_enum(ld, v, "borrow_within_cohort policy", names, N_OF(names), &k);
	((struct queue_spec *)obj)->borrow_within = (enum borrow_within_policy)k;
	return rc;
}

static int borrow_within_threshold(struct loader *ld, const struct ynode *v, void *obj)
{
	struct queue_spec *q = obj;
	int64_t p = 0;
	int rc = ld_get_int(ld, v, "max_priority_threshold", SCENARIO_MIN_PRIORITY,
			    SCENARIO_MAX_PRIORITY, &p);
	q->borrow_within_max_priority = (int32_t)p;
	q->borrow_within_threshold = true;
	return rc;
}

static const struct key_rule borrow_within_rules[] = {
	{"policy", borrow_within_policy},
	{"max_priority_threshold", borrow_within_threshold},
};

/* Kueue's spec.preemption.borrowWithinCohort: {policy, maxPriorityThreshold}. */
static int preemption_borrow_within(struct loader *ld, const struct ynode *v, void *obj)
{
	return ld_walk_map(ld, v, "borrow_within_cohort",
			   "a map like {policy: LowerPriority, max_priority_threshold: 100}",
			   borrow_within_rules, N_OF(borrow_within_rules), obj);
}

static const struct key_rule preemption_rules[] = {
	{"reclaim_within_cohort", preemption_reclaim},
	{"within_cluster_queue", preemption_within},
	{"borrow_within_cohort", preemption_borrow_within},
};

static int queue_preemption(struct loader *ld, const struct ynode *v, void *obj)
{
	const struct queue_spec *q = obj;
	int rc = ld_walk_map(ld, v, "preemption", "a map like {reclaim_within_cohort: Any}",
			     preemption_rules, N_OF(preemption_rules), obj);
	/* Kueue's ClusterQueuePreemption validation */
	if (!rc && q->borrow_within != BORROW_WITHIN_NEVER && q->reclaim == RECLAIM_NEVER)
		return gp_located(ld->err, ynode_get(v, "borrow_within_cohort")->loc,
				  "borrow_within_cohort with reclaim_within_cohort Never; expected "
				  "reclaim_within_cohort LowerPriority or Any (Kueue's rule)");
	return rc;
}

static const struct key_rule queue_rules[] = {
	{"name", queue_name},
	{"strategy", queue_strategy},
	{"cohort", queue_cohort},
	{"quota", queue_quota},
	{"borrowing_limit", queue_borrowing_limit},
	{"lending_limit", queue_lending_limit},
	{"preemption", queue_preemption},
	{"resource_groups", ld_queue_groups},
	{"flavor_fungibility", ld_queue_fungibility},
};

const struct key_rule *ld_queue_rules(size_t *n)
{
	*n = N_OF(queue_rules);
	return queue_rules;
}

/* A borrowing or lending limit needs a quota to go beyond or lend from, and a
 * cohort to borrow from or lend to; a lending limit is at most the quota
 * (Kueue's ClusterQueue validation). */
static int check_queue(struct loader *ld, const struct queue_spec *q)
{
	for (size_t i = 0; i < q->n_quota; i++) {
		const struct quota_entry *e = &q->quota[i];
		const char *which = isinf(e->borrowing_limit) ? "lending_limit" : "borrowing_limit";
		if (isinf(e->nominal))
			return gp_located(ld->err, e->loc,
					  "%s for %s without a quota for it; expected %s in "
					  "quota too",
					  which, e->resource, e->resource);
		if ((!isinf(e->borrowing_limit) || !isinf(e->lending_limit)) && !q->cohort)
			return gp_located(ld->err, e->loc,
					  "%s without a cohort to %s; expected cohort: NAME in "
					  "queue %s",
					  which,
					  isinf(e->borrowing_limit) ? "lend to" : "borrow from",
					  q->name);
		if (!isinf(e->lending_limit) && e->lending_limit > e->nominal)
			return gp_located(ld->err, e->loc,
					  "lending_limit %g for %s is above its quota %g; expected "
					  "at most the quota",
					  e->lending_limit, e->resource, e->nominal);
	}
	return GP_OK;
}

/* A queue gives its quota as quota: (one flavor, "default") or as
 * resource_groups:, not both; the plain form's limits are maps beside it. */
static int plain_or_groups(struct loader *ld, const struct ynode *item, struct queue_spec *q)
{
	const struct ynode *groups = ynode_get(item, "resource_groups");
	if (!groups) {
		const struct ynode *f = ynode_get(item, "flavor_fungibility");
		if (f && !ynode_get(item, "quota"))
			return gp_located(ld->err, f->loc,
					  "flavor_fungibility without a quota; expected "
					  "resource_groups or quota in queue %s",
					  q->name);
		return GP_OK;
	}
	static const char *const plain[] = {"quota", "borrowing_limit", "lending_limit"};
	for (size_t i = 0; i < N_OF(plain); i++) {
		const struct ynode *v = ynode_get(item, plain[i]);
		if (v)
			return gp_located(
				ld->err, v->loc,
				"%s beside resource_groups; expected the quotas in "
				"resource_groups' flavors (nominal_quota, borrowing_limit, "
				"lending_limit) or a plain quota: without resource_groups",
				plain[i]);
	}
	return GP_OK;
}

int ld_load_queues(struct loader *ld, const struct ynode *v)
{
	struct scenario *sc = ld->sc;
	size_t n = v ? v->n : 0;
	int rc = v ? ld_expect_list(ld, v, "queues",
				    "a list like [{name: team-a, strategy: StrictFIFO}]")
		   : GP_OK;
	if (rc)
		return rc;
	sc->queues = gp_xcalloc(n + 1, sizeof *sc->queues);
	sc->n_queues = n;
	for (size_t i = 0; i < n; i++) {
		const struct ynode *item = v->items[i];
		struct queue_spec *q = &sc->queues[i];
		q->loc = item->loc;
		q->when_can_preempt = FUNGIBILITY_TRY_NEXT_FLAVOR;
		rc = ld_walk_map(ld, item, "queue",
				 "a map like {name: team-a, strategy: BestEffortFIFO}", queue_rules,
				 N_OF(queue_rules), q);
		if (!rc)
			rc = ld_require(ld, item, "name", "queue", "a name like team-a");
		if (!rc)
			rc = plain_or_groups(ld, item, q);
		if (!rc)
			rc = check_queue(ld, q);
		if (rc)
			return rc;
		ld_plain_group(ld, q);
		for (size_t j = 0; j < i; j++)
			if (!strcmp(sc->queues[j].name, q->name))
				return ld_duplicate(ld, item, "queue", q->name, sc->queues[j].loc);
	}
	/* Workloads without a queue go to "default", declared or not. */
	if (scenario_queue_index(sc, DEFAULT_QUEUE) < 0) {
		struct queue_spec *q = &sc->queues[sc->n_queues++];
		q->name = gp_xstrdup(DEFAULT_QUEUE);
		q->loc = (struct srcloc){sc->path, 0, 0};
		q->strategy = STRATEGY_BEST_EFFORT_FIFO;
		q->when_can_preempt = FUNGIBILITY_TRY_NEXT_FLAVOR;
		q->implicit = true;
	}
	return GP_OK;
}

static const char *const order_names[] = {"fifo", "priority", "edf", "sjf"};
/* The scoringStrategy types; the first two are also the short aliases. */
static const char *const scoring_names[] = {"MostAllocated", "LeastAllocated",
					    "RequestedToCapacityRatio"};
static const char *const score_resource_names[SCORE_RESOURCES] = {"nvidia.com/gpu", "cpu",
								  "memory"};

#define SCORING_HINT                                                                      \
	"MostAllocated, LeastAllocated, or a map like {type: LeastAllocated, resources: " \
	"[{name: cpu, weight: 1}, {name: memory, weight: 1}]}"

static int sched_order(struct loader *ld, const struct ynode *v, void *obj)
{
	int o = 0;
	int rc = ld_get_enum(ld, v, "order", order_names, N_OF(order_names), &o);
	((struct scheduler_spec *)obj)->order = (enum sched_order)o;
	return rc;
}

static int strategy_type(struct loader *ld, const struct ynode *v, void *obj)
{
	int t = 0;
	int rc = ld_get_enum(ld, v, "scoring type", scoring_names, N_OF(scoring_names), &t);
	((struct scoring_spec *)obj)->type = (enum sched_scoring)t;
	return rc;
}

struct resource_item {
	int name; /* enum score_resource; -1 until read */
	int64_t weight;
};

static int resource_name(struct loader *ld, const struct ynode *v, void *obj)
{
	return ld_get_enum(ld, v, "scored resource", score_resource_names, SCORE_RESOURCES,
			   &((struct resource_item *)obj)->name);
}

static int resource_weight(struct loader *ld, const struct ynode *v, void *obj)
{
	/* kube's validation: weights from 1 to 100 */
	return ld_get_int(ld, v, "weight", 1, 100, &((struct resource_item *)obj)->weight);
}

static const struct key_rule resource_rules[] = {{"name", resource_name},
						 {"weight", resource_weight}};

/* resources: [{name, weight}]; the list replaces the default cpu and memory. */
static int strategy_resources(struct loader *ld, const struct ynode *v, void *obj)
{
	struct scoring_spec *s = obj;
	int rc = ld_expect_list(ld, v, "resources", "a list like [{name: cpu, weight: 1}]");
	if (!rc && v->n == 0)
		return gp_located(ld->err, v->loc,
				  "resources is empty; expected at least one of "
				  "nvidia.com/gpu, cpu, memory");
	memset(s->weight, 0, sizeof s->weight);
	for (size_t i = 0; i < v->n && !rc; i++) {
		struct resource_item it = {-1, 1};
		rc = ld_walk_map(ld, v->items[i], "scored resource",
				 "a map like {name: cpu, weight: 1}", resource_rules,
				 N_OF(resource_rules), &it);
		if (!rc)
			rc = ld_require(ld, v->items[i], "name", "scored resource",
					"nvidia.com/gpu, cpu or memory");
		if (!rc && s->weight[it.name])
			return gp_located(
				ld->err, v->items[i]->loc,
				"resource %s is listed twice; expected each resource once",
				score_resource_names[it.name]);
		if (!rc)
			s->weight[it.name] = (int32_t)it.weight;
	}
	return rc;
}

static int point_utilization(struct loader *ld, const struct ynode *v, void *obj)
{
	int64_t u = 0;
	int rc = ld_get_int(ld, v, "utilization", 0, 100, &u);
	((struct scoring_point *)obj)->utilization = (int32_t)u;
	return rc;
}

static int point_score(struct loader *ld, const struct ynode *v, void *obj)
{
	int64_t x = 0;
	int rc = ld_get_int(ld, v, "score", 0, 10, &x); /* kube's MaxCustomPriorityScore */
	((struct scoring_point *)obj)->score = (int32_t)x;
	return rc;
}

static const struct key_rule point_rules[] = {{"utilization", point_utilization},
					      {"score", point_score}};

/* shape: [{utilization, score}], utilization strictly increasing (kube's validation). */
static int ratio_shape(struct loader *ld, const struct ynode *v, void *obj)
{
	struct scoring_spec *s = obj;
	int rc = ld_expect_list(ld, v, "shape",
				"a list like [{utilization: 0, score: 0}, "
				"{utilization: 100, score: 10}]");
	if (!rc && (v->n == 0 || v->n > SCORING_MAX_SHAPE))
		return gp_located(ld->err, v->loc, "shape has %zu points; expected 1 to %d", v->n,
				  SCORING_MAX_SHAPE);
	for (size_t i = 0; i < v->n && !rc; i++) {
		struct scoring_point *pt = &s->shape[i];
		rc = ld_walk_map(ld, v->items[i], "shape point",
				 "a map like {utilization: 50, score: 5}", point_rules,
				 N_OF(point_rules), pt);
		if (!rc)
			rc = ld_require(ld, v->items[i], "utilization", "shape point", "0 to 100");
		if (!rc)
			rc = ld_require(ld, v->items[i], "score", "shape point", "0 to 10");
		if (!rc && i > 0 && pt->utilization <= s->shape[i - 1].utilization)
			return gp_located(ld->err, v->items[i]->loc,
					  "utilization %d does not increase; expected points in "
					  "increasing utilization",
					  (int)pt->utilization);
		s->n_shape = (int32_t)i + 1;
	}
	return rc;
}

static const struct key_rule ratio_rules[] = {{"shape", ratio_shape}};

static int strategy_ratio(struct loader *ld, const struct ynode *v, void *obj)
{
	int rc = ld_walk_map(ld, v, "requestedToCapacityRatio", "a map like {shape: [...]}",
			     ratio_rules, N_OF(ratio_rules), obj);
	return rc ? rc
		  : ld_require(ld, v, "shape", "requestedToCapacityRatio",
			       "a list of {utilization, score}");
}

static const struct key_rule strategy_rules[] = {
	{"type", strategy_type},
	{"resources", strategy_resources},
	{"requestedToCapacityRatio", strategy_ratio},
};

/* The stock kube-scheduler's: LeastAllocated over cpu and memory, weight 1. */
static void scoring_default(struct scoring_spec *s)
{
	*s = (struct scoring_spec){.type = SCORING_LEAST_ALLOCATED};
	s->weight[SCORE_CPU] = s->weight[SCORE_MEMORY] = 1;
}

/* scoring: an alias (MostAllocated, LeastAllocated: over nvidia.com/gpu) or
 * kube's scoringStrategy map. */
static int sched_scoring(struct loader *ld, const struct ynode *v, void *obj)
{
	struct scoring_spec *s = &((struct scheduler_spec *)obj)->scoring;
	if (v->kind == YNODE_SCALAR) {
		int t = 0;
		int rc = ld_get_enum(ld, v, "scoring", scoring_names, 2, &t);
		*s = (struct scoring_spec){.type = (enum sched_scoring)t};
		s->weight[SCORE_GPU] = 1;
		return rc;
	}
	if (v->kind != YNODE_MAP)
		return ld_bad_value(ld, v, "scoring", SCORING_HINT);
	scoring_default(s);
	int rc = ld_walk_map(ld, v, "scoring", SCORING_HINT, strategy_rules, N_OF(strategy_rules),
			     s);
	if (rc)
		return rc;
	const struct ynode *ratio = ynode_get(v, "requestedToCapacityRatio");
	if (s->type == SCORING_REQUESTED_TO_CAPACITY_RATIO && !ratio)
		return gp_located(ld->err, v->loc,
				  "type RequestedToCapacityRatio needs "
				  "requestedToCapacityRatio: {shape: [{utilization, score}, ...]}");
	if (s->type != SCORING_REQUESTED_TO_CAPACITY_RATIO && ratio)
		return gp_located(ld->err, ratio->loc,
				  "requestedToCapacityRatio applies to type "
				  "RequestedToCapacityRatio only; expected no shape with type %s",
				  scoring_names[s->type]);
	return GP_OK;
}

void scenario_scoring_name(const struct scoring_spec *s, char *buf, size_t len)
{
	bool alias = s->type != SCORING_REQUESTED_TO_CAPACITY_RATIO && s->weight[SCORE_GPU] == 1 &&
		     !s->weight[SCORE_CPU] && !s->weight[SCORE_MEMORY];
	size_t n = (size_t)snprintf(buf, len, "%s", scoring_names[s->type]);
	if (alias)
		return;
	const char *sep = "(";
	for (int r = 0; r < SCORE_RESOURCES; r++)
		if (s->weight[r] && n < len) {
			n += (size_t)snprintf(buf + n, len - n, "%s%s:%d", sep,
					      score_resource_names[r], (int)s->weight[r]);
			sep = ",";
		}
	if (n < len)
		snprintf(buf + n, len - n, ")");
}

static int sched_window_policy(struct loader *ld, const struct ynode *v, void *obj)
{
	static const char *const names[] = {"fit", "preempt"};
	int p = 0;
	int rc = ld_get_enum(ld, v, "window_policy", names, N_OF(names), &p);
	((struct scheduler_spec *)obj)->window_policy = (enum window_policy)p;
	return rc;
}

static int sched_gpu_policy(struct loader *ld, const struct ynode *v, void *obj)
{
	int p = 0;
	int rc = ld_get_enum(ld, v, "gpu_policy", gpupolicy_names, GPU_POLICY_COUNT, &p);
	((struct scheduler_spec *)obj)->gpu_policy = (enum gpu_policy)p;
	return rc;
}

/* percentageOfNodesToScore (KubeSchedulerConfiguration v1): 0 is kube's
 * adaptive default, as an absent key; kube's validation refuses the rest
 * ("not in valid range [0-100]", pkg/scheduler/apis/config/validation). */
static int sched_percentage(struct loader *ld, const struct ynode *v, void *obj)
{
	int64_t n = 0;
	int rc = ld_get_int(ld, v, "percentage_of_nodes_to_score", 0, 100, &n);
	((struct scheduler_spec *)obj)->percentage_of_nodes_to_score = (int32_t)n;
	return rc;
}

const struct key_rule ld_scheduler_rules[] = {
	{"order", sched_order},
	{"scoring", sched_scoring},
	{"window_policy", sched_window_policy},
	{"gpu_policy", sched_gpu_policy},
	{"percentage_of_nodes_to_score", sched_percentage},
};

static int cohort_name(struct loader *ld, const struct ynode *v, void *obj)
{
	return ld_get_item_name(ld, v, "cohort name", &((struct cohort_spec *)obj)->name);
}

static int cohort_parent(struct loader *ld, const struct ynode *v, void *obj)
{
	return ld_get_item_name(ld, v, "parent cohort", &((struct cohort_spec *)obj)->parent);
}

static const struct key_rule cohort_rules[] = {{"name", cohort_name}, {"parent", cohort_parent}};

const struct key_rule *ld_cohort_rules(size_t *n)
{
	*n = N_OF(cohort_rules);
	return cohort_rules;
}

int ld_cohort_index(const struct scenario *sc, const char *name)
{
	for (size_t i = 0; i < sc->n_cohorts; i++)
		if (!strcmp(sc->cohorts[i].name, name))
			return (int)i;
	return -1;
}

/* cohorts: [{name, parent}]; a parent must exist and the parents never loop.
 * Names are hashed and each cohort walked up once (a walk stops at a cohort
 * already seen): linear, where index lookups on every step of every walk
 * took 48 s for a chain of 4,000. */
int ld_load_cohorts(struct loader *ld, const struct ynode *v)
{
	struct scenario *sc = ld->sc;
	if (!v)
		return GP_OK;
	int rc = ld_expect_list(ld, v, "cohorts", "a list like [{name: org, parent: company}]");
	if (rc)
		return rc;
	sc->cohorts = gp_xcalloc(v->n ? v->n : 1, sizeof *sc->cohorts);
	struct strindex names = {0}; /* id = index into cohorts */
	for (size_t i = 0; i < v->n && !rc; i++) {
		struct cohort_spec *c = &sc->cohorts[sc->n_cohorts++];
		c->loc = v->items[i]->loc;
		c->parent_index = -1;
		rc = ld_walk_map(ld, v->items[i], "cohort",
				 "a map like {name: org, parent: company}", cohort_rules,
				 N_OF(cohort_rules), c);
		if (!rc)
			rc = ld_require(ld, v->items[i], "name", "cohort", "a name like org");
		/* Two cohorts of one name would make the tree depend on which one
		 * a lookup finds. */
		bool added = true;
		size_t first = rc ? 0 : strindex_add(&names, c->name, &added);
		if (!added)
			rc = ld_duplicate(ld, v->items[i], "cohort", c->name,
					  sc->cohorts[first].loc);
	}
	for (size_t i = 0; i < sc->n_cohorts && !rc; i++) {
		struct cohort_spec *c = &sc->cohorts[i];
		size_t k = c->parent ? strindex_find(&names, c->parent) : STRINDEX_NONE;
		if (c->parent && k == STRINDEX_NONE)
			rc = gp_located(ld->err, c->loc,
					"cohort %s has an unknown parent '%s'; "
					"expected a cohort of the cohorts list",
					c->name, c->parent);
		c->parent_index = k == STRINDEX_NONE ? -1 : (int32_t)k;
	}
	/* walk i's ancestors, marking them with i + 1; meeting a mark of
	 * this walk is a loop, one of an earlier walk a checked path */
	size_t *mark = gp_xcalloc(sc->n_cohorts + 1, sizeof *mark);
	for (size_t i = 0; i < sc->n_cohorts && !rc; i++) {
		for (int32_t k = (int32_t)i; k >= 0 && !rc; k = sc->cohorts[k].parent_index) {
			if (mark[k] && mark[k] != i + 1)
				break;
			if (mark[k] == i + 1)
				rc = gp_located(ld->err, sc->cohorts[i].loc,
						"cohort %s is its own ancestor (a "
						"cohort loop); expected parents that end at a root",
						sc->cohorts[i].name);
			mark[k] = i + 1;
		}
	}
	free(mark);
	strindex_free(&names);
	return rc;
}

/* experiment: {protocol: inflation, inflate: 1.3, popularity: 0.95} (inflation.h). */
