/*
 * import_extra.c - the optional inputs of `gpuplan import`: Kueue objects,
 * DCGM metrics, OpenCost allocations and a price list (see import.h).
 *
 * Kueue (kueue.x-k8s.io v1beta1, and v1beta2's renamed fields): a
 * ClusterQueue's spec.cohort (v1beta2: cohortName), queueingStrategy
 * (default BestEffortFIFO), resourceGroups[] (coveredResources, and per
 * flavor its resources[] with nominalQuota, borrowingLimit and
 * lendingLimit: a quota per flavor and resource, as Kueue keeps it),
 * flavorFungibility, preemption.reclaimWithinCohort and withinClusterQueue;
 * a ResourceFlavor's spec.nodeLabels, nodeTaints and tolerations; a
 * LocalQueue's spec.clusterQueue; a Cohort's spec.parent (v1beta2:
 * parentName).
 *
 * DCGM (github.com/NVIDIA/dcgm-exporter, etc/default-counters.csv):
 * DCGM_FI_PROF_GR_ENGINE_ACTIVE and DCGM_FI_PROF_SM_ACTIVE are ratios in
 * [0, 1], DCGM_FI_DEV_FB_USED is MiB; with Kubernetes mapping on, each series
 * carries the pod's namespace and pod labels (exported_namespace and
 * exported_pod once Prometheus has renamed them beside its own target labels).
 *
 * OpenCost (opencost.io/docs/integrations/api): {"code": 200, "data": [{NAME:
 * {properties: {node, namespace, pod, ...}, window: {start, end}, gpuHours,
 * gpuCost, cpuCoreHours, cpuCost, ramByteHours, ramCost, totalCost}}]}.
 */
#include "import_int.h"

#include "gpuplan/units.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define GIB 1073741824.0

/* --- Kueue --------------------------------------------------------------------- */

/* Kueue's names are DNS subdomains, dots allowed; the scenario's queue and
 * cohort names appear in --set paths, so they may not hold one. */
static int kueue_name(struct imp_file *f, const struct ynode *at, const char *steps,
		      const char *what, const char *noun, const char *name)
{
	if (!name || scenario_item_name_ok(name))
		return GP_OK;
	return imp_error_at(f, at, steps, "%s '%s' cannot be a gpuplan %s name; expected %s", what,
			    name, noun, SCENARIO_ITEM_NAME_HINT);
}

/* The index of the cohort, ClusterQueue or LocalQueue of that name read so
 * far, or -1. */
/* Cohorts are found by hashing (id = index into im->cohorts): a chain of
 * 3,000 imported in 54 s with a scan per lookup. */
static int cohort_index(const struct imp *im, const char *name)
{
	size_t k = name ? strindex_find(&im->cohort_ids, name) : STRINDEX_NONE;
	return k == STRINDEX_NONE ? -1 : (int)k;
}

static void add_cohort(struct imp *im, struct imp_cohort c)
{
	size_t n = im->n_cohorts;
	if (!(n & (n - 1))) /* 0, 1, 2, 4 ...: doubled */
		im->cohorts = gp_xrealloc(im->cohorts, (n ? 2 * n : 1) * sizeof *im->cohorts);
	im->cohorts[im->n_cohorts++] = c;
	strindex_add(&im->cohort_ids, c.name, NULL);
}

static int queue_index(const struct imp *im, const char *name)
{
	for (size_t k = 0; name && k < im->n_queues; k++)
		if (!strcmp(im->queues[k].name, name))
			return (int)k;
	return -1;
}

static int local_queue_index(const struct imp *im, const char *ns, const char *name)
{
	for (size_t k = 0; name && k < im->n_local_queues; k++)
		if (!strcmp(im->local_queues[k].ns, ns) && !strcmp(im->local_queues[k].name, name))
			return (int)k;
	return -1;
}

/* An object of kind named name, of the same name as one read before (the
 * scenario refuses duplicate queues and cohorts; kubectl lists an object once). */
static int kueue_duplicate(struct imp_file *f, const struct ynode *meta, const char *kind,
			   const char *name, size_t first)
{
	return imp_error_at(f, ynode_get(meta, "name"), "metadata.name",
			    "%s '%s' is listed twice (first at .items[%zu]); expected one object "
			    "per name",
			    kind, name, first);
}

/* The resources gpuplan's quotas model; others (pods, ephemeral-storage)
 * are left out of a resource group. */
static bool modelled(const char *name)
{
	return !strcmp(name, "cpu") || !strcmp(name, "memory") || !strcmp(name, "nvidia.com/gpu") ||
	       !strncmp(name, "nvidia.com/mig-", 15);
}

/* The index of flavor name in im->flavors, added (without an object yet)
 * when new. */
static int32_t flavor_ref(struct imp *im, const char *name)
{
	for (size_t k = 0; k < im->n_flavors; k++)
		if (!strcmp(im->flavors[k].name, name))
			return (int32_t)k;
	im->flavors = gp_xrealloc(im->flavors, (im->n_flavors + 1) * sizeof *im->flavors);
	im->flavors[im->n_flavors] = (struct imp_flavor){.name = name, .item = SIZE_MAX};
	return (int32_t)im->n_flavors++;
}

/* One flavor's resources[] of a resource group: its quota per modelled
 * covered resource, as a quota entry of the flavor. */
static int kueue_flavor_resources(struct imp *im, const struct ynode *res, int32_t flavor,
				  struct imp_queue *q)
{
	struct imp_file *f = &im->kueue_f;
	int rc = GP_OK;
	for (size_t r = 0; !rc && res && r < res->n; r++) {
		const char *name = NULL;
		const struct ynode *nominal, *limit, *lend;
		size_t at = imp_push_key(f, "resources");
		imp_push_index(f, r);
		rc = imp_str(f, res->items[r], "name", &name);
		nominal = ynode_get(res->items[r], "nominalQuota");
		limit = ynode_get(res->items[r], "borrowingLimit");
		lend = ynode_get(res->items[r], "lendingLimit");
		double n = 0, l = INFINITY, lent = INFINITY;
		if (!rc && (!name || !nominal))
			rc = imp_error(f, res->items[r], NULL,
				       "expected a resource with name and nominalQuota");
		if (!rc)
			rc = imp_quantity(f, nominal, "nominalQuota", &n);
		if (!rc && limit)
			rc = imp_quantity(f, limit, "borrowingLimit", &l);
		if (!rc && lend)
			rc = imp_quantity(f, lend, "lendingLimit", &lent);
		if (!rc && lend && lent > n)
			rc = imp_error(f, lend, "lendingLimit",
				       "lendingLimit %g is above nominalQuota %g; expected at most "
				       "the quota",
				       lent, n);
		imp_pop(f, at);
		if (rc || !modelled(name))
			continue; /* pods, ephemeral-storage: not modelled */
		q->quota = gp_xrealloc(q->quota, (q->n_quota + 1) * sizeof *q->quota);
		q->quota[q->n_quota++] = (struct quota_entry){.resource = (char *)name,
							      .flavor = flavor,
							      .nominal = n,
							      .borrowing_limit = l,
							      .lending_limit = lent};
	}
	return rc;
}

/* Whether the queue gives flavor f a quota for resource name. */
static bool has_quota(const struct imp_queue *q, int32_t f, const char *name)
{
	for (size_t k = 0; k < q->n_quota; k++)
		if (q->quota[k].flavor == f && !strcmp(q->quota[k].resource, name))
			return true;
	return false;
}

/* spec.resourceGroups: per group, its modelled covered resources and its
 * flavors in order, each with a quota per (flavor, resource), as Kueue
 * keeps them (a FlavorResource each). */
static int kueue_quota(struct imp *im, const struct ynode *spec, struct imp_queue *q)
{
	struct imp_file *f = &im->kueue_f;
	const struct ynode *groups = NULL;
	int rc = imp_seq(f, spec, "resourceGroups", &groups);
	for (size_t g = 0; !rc && groups && g < groups->n; g++) {
		const struct ynode *flavors = NULL, *covered = NULL;
		size_t base = imp_push_key(f, "resourceGroups");
		imp_push_index(f, g);
		rc = imp_seq(f, groups->items[g], "coveredResources", &covered);
		if (!rc)
			rc = imp_seq(f, groups->items[g], "flavors", &flavors);
		struct imp_group grp = {0};
		if (!rc && covered) {
			grp.covered = gp_xcalloc(covered->n + 1, sizeof *grp.covered);
			for (size_t k = 0; k < covered->n; k++) {
				const char *name = covered->items[k]->value;
				if (covered->items[k]->kind == YNODE_SCALAR && modelled(name))
					grp.covered[grp.n_covered++] = name;
			}
		}
		if (!rc && flavors)
			grp.flavors = gp_xcalloc(flavors->n + 1, sizeof *grp.flavors);
		for (size_t fl = 0; !rc && flavors && fl < flavors->n; fl++) {
			const struct ynode *res = NULL;
			const char *fname = NULL;
			size_t at = imp_push_key(f, "flavors");
			imp_push_index(f, fl);
			rc = imp_str(f, flavors->items[fl], "name", &fname);
			if (!rc && !fname)
				rc = imp_error(f, flavors->items[fl], "name",
					       "expected the flavor's name");
			if (!rc)
				rc = kueue_name(f, ynode_get(flavors->items[fl], "name"), "name",
						"flavor", "flavor", fname);
			if (!rc)
				rc = imp_seq(f, flavors->items[fl], "resources", &res);
			int32_t k = rc ? -1 : flavor_ref(im, fname);
			if (!rc)
				rc = kueue_flavor_resources(im, res, k, q);
			for (size_t c = 0; !rc && c < grp.n_covered; c++)
				if (!has_quota(q, k, grp.covered[c]))
					rc = imp_error(
						f, flavors->items[fl], "resources",
						"flavor %s has no quota for covered resource "
						"%s; expected one per covered resource",
						fname, grp.covered[c]);
			if (!rc)
				grp.flavors[grp.n_flavors++] = k;
			imp_pop(f, at);
		}
		imp_pop(f, base);
		if (!rc && grp.n_covered && grp.n_flavors) {
			q->groups = gp_xrealloc(q->groups, (q->n_groups + 1) * sizeof *q->groups);
			q->groups[q->n_groups++] = grp;
		} else {
			free(grp.covered);
			free(grp.flavors);
		}
	}
	return rc;
}

/* spec.flavorFungibility: v1beta2's MayStopSearch / TryNextFlavor, and
 * v1beta1's Borrow / Preempt. */
static int kueue_fungibility(struct imp_file *f, const struct ynode *fun, struct imp_queue *q)
{
	size_t base = imp_push_key(f, "flavorFungibility");
	int rc = imp_str(f, fun, "whenCanBorrow", &q->when_borrow);
	if (!rc && q->when_borrow && strcmp(q->when_borrow, "Borrow") &&
	    strcmp(q->when_borrow, "MayStopSearch") && strcmp(q->when_borrow, "TryNextFlavor"))
		rc = imp_error(f, ynode_get(fun, "whenCanBorrow"), "whenCanBorrow",
			       "expected MayStopSearch, TryNextFlavor or Borrow, got '%s'",
			       q->when_borrow);
	if (!rc)
		rc = imp_str(f, fun, "whenCanPreempt", &q->when_preempt);
	if (!rc && q->when_preempt && strcmp(q->when_preempt, "Preempt") &&
	    strcmp(q->when_preempt, "MayStopSearch") && strcmp(q->when_preempt, "TryNextFlavor"))
		rc = imp_error(f, ynode_get(fun, "whenCanPreempt"), "whenCanPreempt",
			       "expected MayStopSearch, TryNextFlavor or Preempt, got '%s'",
			       q->when_preempt);
	imp_pop(f, base);
	return rc;
}

/* A ResourceFlavor's spec.nodeTaints (key, value, effect) or tolerations
 * (key, operator, value, effect): checked here, written as they are. */
static int kueue_taint_list(struct imp_file *f, const struct ynode *list, const char *key,
			    bool tolerations)
{
	size_t base = imp_push_key(f, key);
	int rc = GP_OK;
	for (size_t i = 0; !rc && list && i < list->n; i++) {
		const struct ynode *t = list->items[i];
		const char *k = NULL, *v = NULL, *e = NULL, *op = NULL;
		size_t at = imp_push_index(f, i);
		rc = imp_str(f, t, "key", &k);
		if (!rc)
			rc = imp_str(f, t, "value", &v);
		if (!rc)
			rc = imp_str(f, t, "effect", &e);
		if (!rc && tolerations)
			rc = imp_str(f, t, "operator", &op);
		if (!rc && ((!tolerations && !k) || (k && k[0] && !scenario_label_key_ok(k))))
			rc = imp_error(f, t, "key", "expected a label key, got '%s'", k ? k : "");
		if (!rc && v && !scenario_label_value_ok(v))
			rc = imp_error(f, t, "value", "expected a label value, got '%s'", v);
		if (!rc && ((!tolerations && !e) ||
			    (e && strcmp(e, "NoSchedule") && strcmp(e, "PreferNoSchedule") &&
			     strcmp(e, "NoExecute"))))
			rc = imp_error(
				f, t, "effect",
				"expected NoSchedule, PreferNoSchedule or NoExecute, got '%s'",
				e ? e : "");
		if (!rc && op && strcmp(op, "Equal") && strcmp(op, "Exists"))
			rc = imp_error(f, t, "operator", "expected Equal or Exists, got '%s'", op);
		imp_pop(f, at);
	}
	imp_pop(f, base);
	return rc;
}

/* A ResourceFlavor: its node labels, node taints and tolerations. */
static int kueue_flavor(struct imp *im, const struct ynode *item, size_t i, const char *name)
{
	struct imp_file *f = &im->kueue_f;
	const struct ynode *spec = NULL, *meta = ynode_get(item, "metadata");
	int rc = imp_map(f, item, "spec", &spec);
	if (!rc)
		rc = kueue_name(f, meta, "metadata.name", "ResourceFlavor", "flavor", name);
	int32_t k = rc ? -1 : flavor_ref(im, name);
	if (!rc && im->flavors[k].item != SIZE_MAX)
		rc = kueue_duplicate(f, meta, "ResourceFlavor", name, im->flavors[k].item);
	struct imp_flavor fl = {.name = name, .item = i};
	size_t base = imp_push_key(f, "spec");
	if (!rc && spec)
		rc = imp_map(f, spec, "nodeLabels", &fl.labels);
	for (size_t l = 0; !rc && fl.labels && l < fl.labels->n; l++) {
		const struct ynode *v = fl.labels->items[l];
		if (!scenario_label_key_ok(fl.labels->keys[l]) || v->kind != YNODE_SCALAR ||
		    !scenario_label_value_ok(v->value))
			rc = imp_error(f, v, "nodeLabels",
				       "expected a label key and value, got '%s'",
				       fl.labels->keys[l]);
	}
	if (!rc && spec)
		rc = imp_seq(f, spec, "nodeTaints", &fl.taints);
	if (!rc)
		rc = kueue_taint_list(f, fl.taints, "nodeTaints", false);
	if (!rc && spec)
		rc = imp_seq(f, spec, "tolerations", &fl.tolerations);
	if (!rc)
		rc = kueue_taint_list(f, fl.tolerations, "tolerations", true);
	imp_pop(f, base);
	if (!rc)
		im->flavors[k] = fl;
	return rc;
}

/* spec.preemption's policies, as Kueue spells them. */
static int kueue_preemption(struct imp_file *f, const struct ynode *pre, struct imp_queue *q)
{
	size_t base = imp_push_key(f, "preemption");
	int rc = imp_str(f, pre, "reclaimWithinCohort", &q->reclaim);
	if (!rc && q->reclaim && strcmp(q->reclaim, "Never") &&
	    strcmp(q->reclaim, "LowerPriority") && strcmp(q->reclaim, "Any"))
		rc = imp_error(f, ynode_get(pre, "reclaimWithinCohort"), "reclaimWithinCohort",
			       "expected Never, LowerPriority or Any, got '%s'", q->reclaim);
	if (!rc)
		rc = imp_str(f, pre, "withinClusterQueue", &q->within);
	if (!rc && q->within && strcmp(q->within, "Never") && strcmp(q->within, "LowerPriority") &&
	    strcmp(q->within, "LowerOrNewerEqualPriority"))
		rc = imp_error(
			f, ynode_get(pre, "withinClusterQueue"), "withinClusterQueue",
			"expected Never, LowerPriority or LowerOrNewerEqualPriority, got '%s'",
			q->within);
	imp_pop(f, base);
	return rc;
}

static int kueue_cluster_queue(struct imp *im, const struct ynode *item, const char *name, size_t i)
{
	struct imp_file *f = &im->kueue_f;
	const struct ynode *spec = NULL, *pre = NULL;
	struct imp_queue q = {.name = name, .strategy = "BestEffortFIFO", .item = i};
	int rc = imp_map(f, item, "spec", &spec);
	if (!rc && !spec)
		rc = imp_error(f, item, "spec", "expected the ClusterQueue's spec");
	if (rc)
		return rc;
	size_t base = imp_push_key(f, "spec");
	if (!(rc = imp_str(f, spec, "cohort", &q.cohort)) && !q.cohort)
		rc = imp_str(f, spec, "cohortName", &q.cohort);
	if (!rc && q.cohort) {
		bool v2 = !ynode_get(spec, "cohort");
		rc = kueue_name(f, ynode_get(spec, v2 ? "cohortName" : "cohort"),
				v2 ? "cohortName" : "cohort", "cohort", "cohort", q.cohort);
	}
	const char *strategy = NULL;
	if (!rc && !(rc = imp_str(f, spec, "queueingStrategy", &strategy)) && strategy) {
		if (strcmp(strategy, "StrictFIFO") && strcmp(strategy, "BestEffortFIFO"))
			rc = imp_error(f, ynode_get(spec, "queueingStrategy"), "queueingStrategy",
				       "expected StrictFIFO or BestEffortFIFO, got '%s'", strategy);
		q.strategy = strategy;
	}
	if (!rc && !(rc = imp_map(f, spec, "preemption", &pre)) && pre)
		rc = kueue_preemption(f, pre, &q);
	const struct ynode *fun = NULL;
	if (!rc && !(rc = imp_map(f, spec, "flavorFungibility", &fun)) && fun)
		rc = kueue_fungibility(f, fun, &q);
	if (!rc)
		rc = kueue_quota(im, spec, &q);
	imp_pop(f, base);
	if (rc) {
		free(q.quota);
		for (size_t g = 0; g < q.n_groups; g++) {
			free(q.groups[g].covered);
			free(q.groups[g].flavors);
		}
		free(q.groups);
		return rc;
	}
	im->queues = gp_xrealloc(im->queues, (im->n_queues + 1) * sizeof *im->queues);
	im->queues[im->n_queues++] = q;
	return GP_OK;
}

static int kueue_local_queue(struct imp *im, const struct ynode *item, size_t i, const char *ns,
			     const char *name)
{
	struct imp_file *f = &im->kueue_f;
	const struct ynode *spec = NULL, *meta = ynode_get(item, "metadata");
	const char *ref = NULL;
	int rc = imp_map(f, item, "spec", &spec);
	if (!rc && spec && !(rc = imp_str(f, spec, "clusterQueue", &ref)) && !ref)
		rc = imp_error_at(f, item, "spec.clusterQueue", "expected the ClusterQueue");
	if (!rc && !spec)
		rc = imp_error(f, item, "spec", "expected the LocalQueue's spec.clusterQueue");
	int had = local_queue_index(im, ns, name);
	if (!rc && had >= 0)
		rc = kueue_duplicate(f, meta, "LocalQueue", name, im->local_queues[had].item);
	if (rc)
		return rc;
	im->local_queues =
		gp_xrealloc(im->local_queues, (im->n_local_queues + 1) * sizeof *im->local_queues);
	im->local_queues[im->n_local_queues++] = (struct imp_local_queue){ns, name, ref, i};
	return GP_OK;
}

static int kueue_cohort(struct imp *im, const struct ynode *item, size_t i, const char *name)
{
	struct imp_file *f = &im->kueue_f;
	const struct ynode *spec = NULL, *meta = ynode_get(item, "metadata");
	const char *ref = NULL;
	int rc = imp_map(f, item, "spec", &spec);
	if (!rc && spec && !(rc = imp_str(f, spec, "parent", &ref)) && !ref)
		rc = imp_str(f, spec, "parentName", &ref);
	if (!rc)
		rc = kueue_name(f, meta, "metadata.name", "Cohort", "cohort", name);
	if (!rc && ref)
		rc = kueue_name(f,
				ynode_get(spec, "parent") ? ynode_get(spec, "parent")
							  : ynode_get(spec, "parentName"),
				ynode_get(spec, "parent") ? "spec.parent" : "spec.parentName",
				"parent cohort", "cohort", ref);
	int had = cohort_index(im, name);
	if (!rc && had >= 0)
		rc = kueue_duplicate(f, meta, "Cohort", name, im->cohorts[had].item);
	if (rc)
		return rc;
	add_cohort(im, (struct imp_cohort){name, ref, i});
	return GP_OK;
}

static int kueue_item(struct imp *im, const struct ynode *item, size_t i)
{
	struct imp_file *f = &im->kueue_f;
	const char *kind = NULL, *name = NULL, *ns = NULL;
	const struct ynode *meta = NULL;
	int rc = imp_str(f, item, "kind", &kind);
	if (!rc)
		rc = imp_map(f, item, "metadata", &meta);
	if (!rc && meta && !(rc = imp_str(f, meta, "name", &name)))
		rc = imp_str(f, meta, "namespace", &ns);
	if (!rc && (!kind || !name))
		rc = imp_error(f, item, NULL, "expected an object with kind and metadata.name");
	if (rc)
		return rc;
	if (!strcmp(kind, "ClusterQueue")) {
		rc = kueue_name(f, ynode_get(meta, "name"), "metadata.name", "ClusterQueue",
				"queue", name);
		int had = queue_index(im, name);
		if (!rc && had >= 0)
			rc = kueue_duplicate(f, meta, "ClusterQueue", name, im->queues[had].item);
		return rc ? rc : kueue_cluster_queue(im, item, name, i);
	}
	if (!strcmp(kind, "LocalQueue"))
		return kueue_local_queue(im, item, i, ns ? ns : "default", name);
	if (!strcmp(kind, "Cohort"))
		return kueue_cohort(im, item, i, name);
	if (!strcmp(kind, "ResourceFlavor"))
		return kueue_flavor(im, item, i, name);
	if (strcmp(kind, "ResourceFlavor") && strcmp(kind, "WorkloadPriorityClass"))
		return imp_error(f, ynode_get(item, "kind"), "kind",
				 "expected ClusterQueue, "
				 "LocalQueue, ResourceFlavor or Cohort, got '%s'",
				 kind);
	return GP_OK;
}

/* A cohort named by a queue or as a parent, without an object of its own, is
 * a root (Kueue creates it implicitly). */
static void implied_cohort(struct imp *im, const char *name)
{
	if (!name || cohort_index(im, name) >= 0)
		return;
	add_cohort(im, (struct imp_cohort){name, NULL, SIZE_MAX});
}

/* A cohort that is its own ancestor: Kueue marks such a hierarchy inactive,
 * and the scenario refuses it; named at the Cohort's parent. */
static int cohort_loop(struct imp *im, const struct ynode *items)
{
	struct imp_file *f = &im->kueue_f;
	/* each cohort's ancestors walked once: marked with the walk's c + 1;
	 * a mark of this walk closes a loop, one of an earlier walk is a path
	 * already checked.  The loop named is the first cohort in one. */
	size_t *mark = gp_xcalloc(im->n_cohorts + 1, sizeof *mark), first = SIZE_MAX;
	for (size_t c = 0; c < im->n_cohorts; c++) {
		int k = (int)c;
		for (; k >= 0; k = cohort_index(im, im->cohorts[k].parent)) {
			if (mark[k])
				break;
			mark[k] = c + 1;
		}
		if (k < 0 || mark[k] != c + 1)
			continue;
		int at = k; /* in the loop: its members are at and its ancestors */
		do {
			first = (size_t)k < first ? (size_t)k : first;
			k = cohort_index(im, im->cohorts[k].parent);
		} while (k != at);
	}
	free(mark);
	if (first == SIZE_MAX)
		return GP_OK;
	const struct imp_cohort *co = &im->cohorts[first];
	const struct ynode *spec = ynode_get(items->items[co->item], "spec");
	bool v2 = !ynode_get(spec, "parent");
	size_t base = imp_push_key(f, "items");
	imp_push_index(f, co->item);
	int rc = imp_error_at(f, ynode_get(spec, v2 ? "parentName" : "parent"),
			      v2 ? "spec.parentName" : "spec.parent",
			      "cohort '%s' is its own ancestor (a cohort loop); "
			      "expected parents that end at a root",
			      co->name);
	imp_pop(f, base);
	return rc;
}

int imp_read_kueue(struct imp *im)
{
	struct imp_file *f = &im->kueue_f;
	const struct ynode *items = NULL;
	int rc = imp_open(f, im->o->kueue, im->err);
	if (!rc)
		rc = imp_list(f, NULL, &items);
	for (size_t i = 0; !rc && items && i < items->n; i++) {
		size_t base = imp_push_key(f, "items");
		imp_push_index(f, i);
		rc = kueue_item(im, items->items[i], i);
		imp_pop(f, base);
	}
	for (size_t k = 0; !rc && k < im->n_flavors; k++)
		if (im->flavors[k].item == SIZE_MAX)
			imp_warn(im,
				 "a ClusterQueue names flavor %s, but %s has no ResourceFlavor of "
				 "that name; it is written without node labels, taints or "
				 "tolerations",
				 im->flavors[k].name, im->o->kueue);
	if (rc || !im->n_cohorts)
		return rc;
	for (size_t q = 0; q < im->n_queues; q++)
		implied_cohort(im, im->queues[q].cohort);
	for (size_t c = 0; c < im->n_cohorts; c++)
		implied_cohort(im, im->cohorts[c].parent);
	return cohort_loop(im, items);
}

const struct imp_local_queue *imp_local_queue(const struct imp *im, const struct imp_pod *p)
{
	int k = local_queue_index(im, p->ns, p->queue);
	return k < 0 ? NULL : &im->local_queues[k];
}

const char *imp_cluster_queue(const struct imp *im, const struct imp_pod *p)
{
	const struct imp_local_queue *lq = imp_local_queue(im, p);
	int q = lq ? queue_index(im, lq->cluster_queue) : -1;
	return q < 0 ? NULL : im->queues[q].name;
}

/* --- DCGM ----------------------------------------------------------------------- */

enum dcgm_field { DCGM_BUSY, DCGM_SM, DCGM_FB, DCGM_OTHER };

static enum dcgm_field dcgm_field(const char *name, size_t len)
{
	static const char *const names[] = {"DCGM_FI_PROF_GR_ENGINE_ACTIVE",
					    "DCGM_FI_PROF_SM_ACTIVE", "DCGM_FI_DEV_FB_USED"};
	for (int i = 0; i < 3; i++)
		if (strlen(names[i]) == len && !strncmp(name, names[i], len))
			return (enum dcgm_field)i;
	return DCGM_OTHER;
}

static struct imp_pod *find_pod(struct imp *im, const char *ns, const char *pod)
{
	for (size_t i = 0; ns && pod && i < im->n_pods; i++)
		if (!strcmp(im->pods[i].ns, ns) && !strcmp(im->pods[i].name, pod))
			return &im->pods[i];
	return NULL;
}

/* What a dcgm-exporter scrape can hold for the fields read, or NULL when v is
 * one (the reason into buf).  The profiling fields are ratios in [0, 1] and
 * FB_USED is MiB of the GPU's framebuffer (NVIDIA DCGM field docs,
 * dcgm_fields.h; dcgm-exporter's etc/dcp-metrics-included.csv).  The exporter
 * leaves out a field DCGM has no value for (gpu_collector.go toMetric skips
 * blank values), so NaN and infinities are no reading of a real exporter. */
static const char *dcgm_bad(const struct imp *im, enum dcgm_field field, const struct imp_pod *p,
			    double v, struct gp_sbuf *buf)
{
	if (!isfinite(v))
		return "expected a finite number (dcgm-exporter leaves out a blank value, "
		       "it writes no NaN or Inf)";
	if (field != DCGM_FB) {
		if (v >= 0 && v <= 1)
			return NULL;
		gp_sb_printf(buf, "expected a ratio from 0 to 1, got %g", v);
		return buf->s;
	}
	int n = p ? imp_node_index(im, p->node) : -1;
	const struct gpu_type *gpu = n >= 0 ? im->nodes[n].shape.gpu : NULL;
	double most = gpu ? gpu->memory_bytes / 1048576.0 : INFINITY;
	if (v >= 0 && v <= most)
		return NULL;
	if (gpu)
		gp_sb_printf(buf, "expected MiB from 0 to the %.0f MiB of node %s's %s, got %g",
			     most, im->nodes[n].name, gpu->name, v);
	else
		gp_sb_printf(buf, "expected MiB >= 0, got %g", v);
	return buf->s;
}

/* Adds sample v of field to its pod; the reason when v is no reading, whole
 * (written to buf, which the caller frees, when it names the values). */
static const char *dcgm_sample(struct imp *im, enum dcgm_field field, const char *ns,
			       const char *pod, double v, struct gp_sbuf *buf)
{
	if (field == DCGM_OTHER)
		return NULL; /* a field not read: no pod lookup, no check */
	struct imp_pod *p = im->dcgm_sink ? NULL : find_pod(im, ns, pod);
	const char *bad = dcgm_bad(im, field, p, v, buf);
	if (!bad && im->dcgm_sink && ns && pod)
		im->dcgm_sink(im->dcgm_ctx, (int)field, ns, pod, v);
	if (bad || !p)
		return bad;
	if (field == DCGM_BUSY)
		p->busy += v, p->n_busy++;
	else if (field == DCGM_SM)
		p->sm += v, p->n_sm++;
	else
		p->fb += v, p->n_fb++;
	return NULL;
}

/* A sample value as the exposition formats write it: a float, NaN, +Inf or
 * -Inf (strtod reads them all, and hex floats, which are refused); the end
 * of what was read, or NULL. */
static const char *sample_value(const char *s, double *v)
{
	char *end;
	errno = 0;
	*v = strtod(s, &end);
	if (end == s || errno == ERANGE || memchr(s, 'x', (size_t)(end - s)) ||
	    memchr(s, 'X', (size_t)(end - s)))
		return NULL;
	return end;
}

/* One label value of the text format ("..." with \\, \" and \n escapes) into buf. */
static const char *text_label_value(const char *s, char *buf, size_t len)
{
	size_t n = 0;
	for (; *s && *s != '"'; s++) {
		char c = *s;
		if (c == '\\' && s[1]) {
			s++;
			c = *s == 'n' ? '\n' : *s;
		}
		if (n + 1 < len)
			buf[n++] = c;
	}
	buf[n] = '\0';
	return *s == '"' ? s + 1 : NULL;
}

/* The labels of a sample that say whose it is. */
struct text_sample {
	char ns[256], pod[256], xns[256], xpod[256];
};

static char *text_target(struct text_sample *t, const char *k, size_t kl)
{
	return kl == 9 && !strncmp(k, "namespace", 9)              ? t->ns
	       : kl == 3 && !strncmp(k, "pod", 3)                  ? t->pod
	       : kl == 18 && !strncmp(k, "exported_namespace", 18) ? t->xns
	       : kl == 12 && !strncmp(k, "exported_pod", 12)       ? t->xpod
								   : NULL;
}

/* The label set {k="v",...} at s; returns its end, or NULL after an error. */
static const char *text_labels(struct imp *im, const char *line, const char *s, int lineno,
			       struct text_sample *t)
{
	const char *file = im->o->dcgm;
	/* The exposition format gives each label once per sample: every name
	 * is hashed (a repeat after the 64th went unseen). */
	struct strindex names = {0};
	const char *end = NULL;
	for (s++; *s && *s != '}';) {
		const char *k = s;
		while (isalnum((unsigned char)*s) || *s == '_')
			s++;
		size_t kl = (size_t)(s - k);
		struct srcloc at = {file, lineno, (int)(k - line) + 1};
		if (!kl || s[0] != '=' || s[1] != '"') {
			at.col = (int)(s - line) + 1;
			gp_located(im->err, at, "expected label=\"value\"");
			goto out;
		}
		char *key = strndup(k, kl);
		bool added = false;
		strindex_add(&names, key, &added);
		free(key);
		if (!added) {
			gp_located(im->err, at,
				   "label %.*s given twice in one sample; expected each label once",
				   (int)(kl < 200 ? kl : 200), k);
			goto out;
		}
		char v[256], *dst = text_target(t, k, kl);
		if (!(s = text_label_value(s + 2, v, sizeof v))) {
			gp_located(im->err, at, "unterminated label value");
			goto out;
		}
		if (dst)
			snprintf(dst, 256, "%s", v);
		if (*s == ',')
			s++;
	}
	if (*s != '}')
		gp_located(im->err, (struct srcloc){file, lineno, (int)(s - line) + 1},
			   "expected '}'");
	else
		end = s + 1;
out:
	strindex_free(&names);
	return end;
}

/* After the value: an optional integer timestamp (ms), then the line's end. */
static bool text_tail(const char *s)
{
	while (*s == ' ' || *s == '\t')
		s++;
	const char *sign = s;
	if (*s == '-')
		s++;
	const char *digits = s;
	while (isdigit((unsigned char)*s))
		s++;
	if (*sign == '-' && s == digits)
		return false; /* a timestamp of "-" */
	/* an int64, as Prometheus' parser reads it (strconv.ParseInt) */
	while (*digits == '0' && s - digits > 1)
		digits++;
	size_t n = (size_t)(s - digits);
	if (n > 19 ||
	    (n == 19 &&
	     strncmp(digits, *sign == '-' ? "9223372036854775808" : "9223372036854775807", 19) > 0))
		return false;
	while (*s == ' ' || *s == '\t' || *s == '\r' || *s == '\n')
		s++;
	return !*s;
}

/* One sample line: NAME{k="v",...} VALUE [TIMESTAMP]. */
static int text_line(struct imp *im, const char *line, int lineno)
{
	const char *file = im->o->dcgm, *s = line;
	while (isalnum((unsigned char)*s) || *s == '_' || *s == ':')
		s++;
	size_t name_len = (size_t)(s - line);
	struct text_sample t = {0};
	if (!name_len)
		return gp_located(im->err, (struct srcloc){file, lineno, 1},
				  "expected a metric name (Prometheus text format)");
	if (*s == '{' && !(s = text_labels(im, line, s, lineno, &t)))
		return GP_EINPUT;
	while (*s == ' ' || *s == '\t')
		s++;
	double v;
	const char *end = sample_value(s, &v);
	struct srcloc at = {file, lineno, (int)(s - line) + 1};
	if (!end)
		return gp_located(im->err, at, "expected the sample's value");
	if (!text_tail(end))
		return gp_located(im->err, (struct srcloc){file, lineno, (int)(end - line) + 1},
				  "expected an integer timestamp (milliseconds) or the line's "
				  "end after the value");
	struct gp_sbuf why = {0};
	const char *bad = dcgm_sample(im, dcgm_field(line, name_len), t.xns[0] ? t.xns : t.ns,
				      t.xpod[0] ? t.xpod : t.pod, v, &why);
	int rc = bad ? gp_located(im->err, at, "%.*s: %s", (int)name_len, line, bad) : GP_OK;
	free(why.s);
	return rc;
}

/* --dcgm through the opener every input shares: a FIFO, device or folder
 * is refused instead of waited on. */
static FILE *open_dcgm(struct imp *im)
{
	const char *why = NULL;
	FILE *in = gp_open_input(im->o->dcgm, &why);
	if (!in)
		gp_located(im->err, (struct srcloc){im->o->dcgm, 0, 0}, "cannot read: %s", why);
	return in;
}

static int read_text(struct imp *im)
{
	FILE *in = open_dcgm(im);
	if (!in)
		return GP_EINPUT;
	char *line = NULL;
	size_t cap = 0;
	int rc = GP_OK, lineno = 0;
	ssize_t got;
	while (!rc && (got = getline(&line, &cap, in)) >= 0) {
		lineno++;
		/* The exposition format is UTF-8 text with \n line ends: a NUL would
		 * cut the line short unseen, and a lone \r (CR-only line ends) made
		 * the whole file one comment, calibrating nothing. */
		const char *cr = strchr(line, '\r');
		if ((size_t)got != strlen(line))
			rc = gp_located(im->err,
					(struct srcloc){im->o->dcgm, lineno, (int)strlen(line) + 1},
					"a NUL byte; expected text");
		else if (gp_utf8_check(line, (size_t)got) < (size_t)got)
			rc = gp_located(
				im->err,
				(struct srcloc){im->o->dcgm, lineno,
						(int)gp_utf8_check(line, (size_t)got) + 1},
				"invalid UTF-8; expected the exposition format's UTF-8 text");
		else if (cr && strcmp(cr, "\r\n") && strcmp(cr, "\r"))
			rc = gp_located(
				im->err, (struct srcloc){im->o->dcgm, lineno, (int)(cr - line) + 1},
				"a carriage return inside the line; expected lines that end "
				"in \\n (or \\r\\n)");
		if (rc)
			break;
		char *s = line;
		while (*s == ' ' || *s == '\t')
			s++;
		if (*s && *s != '#' && *s != '\n' && *s != '\r')
			rc = text_line(im, s, lineno);
	}
	/* getline's -1 is end of file only when feof says so (ENOMEM, EIO). */
	if (!rc && (ferror(in) || !feof(in)))
		rc = gp_errorf(im->err, GP_ERUNTIME, "%s: error: reading after line %d: %s",
			       im->o->dcgm, lineno, strerror(errno));
	free(line);
	fclose(in);
	return rc;
}

/* One [timestamp, "value"] point of a series of metric name; Prometheus
 * writes values as strings, "NaN" and "+Inf" among them. */
static int json_point(struct imp *im, const struct ynode *pt, const char *name, const char *ns,
		      const char *pod)
{
	struct imp_file *f = &im->dcgm_f;
	double v, ts;
	const char *end = NULL;
	if (pt->kind == YNODE_SEQ && pt->n == 2 && pt->items[1]->kind == YNODE_SCALAR)
		end = sample_value(pt->items[1]->value, &v);
	if (!end || *end || pt->items[0]->kind != YNODE_SCALAR ||
	    units_number(pt->items[0]->value, &ts))
		return imp_error(f, pt, NULL, "expected a [timestamp, \"value\"] pair");
	struct gp_sbuf why = {0};
	const char *bad = dcgm_sample(im, dcgm_field(name, strlen(name)), ns, pod, v, &why);
	int rc = bad ? imp_error(f, pt->items[1], NULL, "%s: %s", name, bad) : GP_OK;
	free(why.s);
	return rc;
}

/* A Prometheus /api/v1/query (vector) or query_range (matrix) response. */
static int read_prometheus_json(struct imp *im)
{
	struct imp_file *f = &im->dcgm_f;
	const struct ynode *data = NULL, *result = NULL;
	const char *status = NULL;
	int rc = imp_open(f, im->o->dcgm, im->err);
	if (!rc)
		rc = imp_str(f, f->tree->root, "status", &status);
	if (!rc && (!status || strcmp(status, "success")))
		rc = imp_error(f, f->tree->root, "status",
			       "expected a Prometheus API response "
			       "with status success");
	if (!rc)
		rc = imp_map(f, f->tree->root, "data", &data);
	if (!rc && data)
		rc = imp_seq(f, data, "result", &result);
	if (!rc && !result)
		rc = imp_error_at(f, f->tree->root, "data.result", "expected the query's result");
	size_t base = imp_push_path(f, "data.result"), keyed = f->len;
	for (size_t i = 0; !rc && i < result->n; i++) {
		const struct ynode *metric = NULL, *values = NULL, *value = NULL;
		const char *name = NULL, *ns = NULL, *pod = NULL, *x = NULL;
		imp_push_index(f, i);
		const struct ynode *s = result->items[i];
		if (!(rc = imp_map(f, s, "metric", &metric)) && metric &&
		    !(rc = imp_str(f, metric, "__name__", &name)) &&
		    !(rc = imp_str(f, metric, "namespace", &ns)) &&
		    !(rc = imp_str(f, metric, "pod", &pod)) &&
		    !(rc = imp_str(f, metric, "exported_namespace", &x))) {
			ns = x ? x : ns;
			rc = imp_str(f, metric, "exported_pod", &x);
			pod = x ? x : pod;
		}
		if (!rc && !name)
			rc = imp_error_at(f, s, "metric.__name__",
					  "expected the series' metric name");
		if (!rc && !(rc = imp_seq(f, s, "values", &values)) && !values)
			rc = imp_seq(f, s, "value", &value);
		const struct ynode *one[1] = {value};
		const struct ynode *const *pts =
			values ? (const struct ynode *const *)values->items : one;
		size_t n = values ? values->n : value ? 1 : 0;
		for (size_t k = 0; !rc && k < n; k++) {
			size_t at = imp_push_key(f, values ? "values" : "value");
			if (values)
				imp_push_index(f, k);
			rc = json_point(im, pts[k], name, ns, pod);
			imp_pop(f, at);
		}
		imp_pop(f, keyed);
	}
	imp_pop(f, base);
	return rc;
}

int imp_read_dcgm(struct imp *im)
{
	FILE *in = open_dcgm(im);
	if (!in)
		return GP_EINPUT;
	int c;
	while ((c = fgetc(in)) != EOF && isspace(c))
		;
	bool failed = c == EOF && ferror(in);
	int saved = errno;
	fclose(in);
	if (failed)
		return gp_errorf(im->err, GP_ERUNTIME, "%s: error: cannot read: %s", im->o->dcgm,
				 strerror(saved));
	return c == '{' ? read_prometheus_json(im) : read_text(im);
}

/* --- prices ----------------------------------------------------------------------- */

static struct imp_gpu_price *price_of(struct imp *im, const char *type)
{
	for (size_t i = 0; i < im->n_prices; i++)
		if (!strcmp(im->prices[i].type, type))
			return &im->prices[i];
	im->prices = gp_xrealloc(im->prices, (im->n_prices + 1) * sizeof *im->prices);
	struct imp_gpu_price *p = &im->prices[im->n_prices++];
	memset(p, 0, sizeof *p);
	p->type = type;
	return p;
}

/* OpenCost's rate: cost over usage, 0 without usage. */
static double rate(double cost, double usage) { return usage > 0 ? cost / usage : 0; }

/* The rates OpenCost's sums give type p, within the loader's limit (each
 * allocation was checked; a cost charged without usage is not). */
static int opencost_rates(struct imp *im, struct imp_gpu_price *p)
{
	p->price.gpu_hour = rate(p->gpu_cost, p->gpu_hours);
	p->price.cpu_hour = rate(p->cpu_cost, p->cpu_hours);
	p->price.gib_hour = rate(p->ram_cost, p->gib_hours);
	const double got[3] = {p->price.gpu_hour, p->price.cpu_hour, p->price.gib_hour};
	static const char *const what[3] = {"gpuCost / gpuHours", "cpuCost / cpuCoreHours",
					    "ramCost / ramByteHours (per GiB)"};
	for (int i = 0; i < 3; i++)
		if (got[i] > SCENARIO_MAX_PRICE)
			return gp_located(im->err, (struct srcloc){im->o->opencost, 0, 0},
					  "%s over the allocations on %s nodes is %g "
					  "per hour; expected at most %g",
					  what[i], p->type, got[i], SCENARIO_MAX_PRICE);
	return GP_OK;
}

/* Sets every pool's price from the table (OpenCost's rates, --prices over them). */
static int apply_prices(struct imp *im)
{
	for (size_t k = 0; k < im->n_prices; k++) {
		int rc = im->prices[k].given ? GP_OK : opencost_rates(im, &im->prices[k]);
		if (rc)
			return rc;
	}
	for (size_t i = 0; i < im->n_pools; i++) {
		struct imp_pool *pool = &im->pools[i];
		const char *type = pool->shape.gpu ? pool->shape.gpu->name : "cpu";
		for (size_t k = 0; k < im->n_prices; k++) {
			if (strcmp(im->prices[k].type, type))
				continue;
			pool->price = im->prices[k].price;
			pool->priced = true;
		}
	}
	return GP_OK;
}

int imp_read_prices(struct imp *im)
{
	static const char *const keys[] = {"gpu_hour", "cpu_hour", "gib_hour"};
	struct imp_file *f = &im->prices_f;
	int rc = imp_open(f, im->o->prices, im->err);
	const struct ynode *root = rc ? NULL : f->tree->root;
	if (!rc && root->kind != YNODE_MAP)
		rc = imp_error(f, root, NULL, "expected a map like {H100-80GB: {gpu_hour: 4.5}}");
	for (size_t i = 0; !rc && i < root->n; i++) {
		const char *type = root->keys[i];
		if (strcmp(type, "cpu") && !catalog_gpu(type))
			return imp_error(f, root->items[i], type,
					 "not a catalog GPU type (or cpu)");
		struct imp_gpu_price *p = price_of(im, type);
		double *dst[3] = {&p->price.gpu_hour, &p->price.cpu_hour, &p->price.gib_hour};
		p->price = (struct price){0};
		p->given = true;
		size_t base = imp_push_key(f, type);
		const struct ynode *m = root->items[i];
		if (m->kind != YNODE_MAP)
			rc = imp_error(f, m, NULL, "expected a map like {gpu_hour: 4.5}");
		for (size_t k = 0; !rc && k < m->n; k++) {
			int j = 0;
			while (j < 3 && strcmp(m->keys[k], keys[j]))
				j++;
			if (j == 3)
				rc = imp_error(f, m->items[k], m->keys[k],
					       "expected gpu_hour, cpu_hour or gib_hour");
			else if (!(rc = imp_num(f, m, keys[j], dst[j])) &&
				 !(*dst[j] >= 0 && *dst[j] <= SCENARIO_MAX_PRICE))
				rc = imp_error(f, m->items[k], m->keys[k],
					       "expected a price per hour from 0 to %g, got %s",
					       SCENARIO_MAX_PRICE, m->items[k]->value);
		}
		imp_pop(f, base);
	}
	return rc ? rc : apply_prices(im);
}

/* --- OpenCost ---------------------------------------------------------------------- */

/* An OpenCost figure: hours and costs are >= 0 (OpenCost reports adjustments
 * in fields of their own, which are not read). */
static int cost_number(struct imp_file *f, const struct ynode *a, const char *key, double *out)
{
	int rc = imp_num(f, a, key, out);
	if (!rc && !(*out >= 0))
		rc = imp_error(f, ynode_get(a, key), key, "expected a number >= 0, got %s",
			       ynode_get(a, key)->value);
	return rc;
}

static int cost_allocation(struct imp *im, const struct ynode *a)
{
	struct imp_file *f = &im->cost_f;
	const struct ynode *props = NULL, *window = NULL;
	const char *node = NULL, *ns = NULL, *pod = NULL;
	double v[7] = {0};
	static const char *const keys[] = {"gpuHours",     "gpuCost", "cpuCoreHours", "cpuCost",
					   "ramByteHours", "ramCost", "totalCost"};
	int rc = imp_map(f, a, "properties", &props);
	if (!rc && props && !(rc = imp_str(f, props, "node", &node)) &&
	    !(rc = imp_str(f, props, "namespace", &ns)))
		rc = imp_str(f, props, "pod", &pod);
	for (int k = 0; !rc && k < 7; k++)
		rc = cost_number(f, a, keys[k], &v[k]);
	/* A cost per unit past the loader's limit would fail the scenario's price. */
	for (int k = 0; !rc && k < 6; k += 2) {
		double per = k == 4 ? v[k] / GIB : v[k];
		if (per > 0 && v[k + 1] / per > SCENARIO_MAX_PRICE)
			rc = imp_error(f, ynode_get(a, keys[k + 1]), keys[k + 1],
				       "%g over %g %s is %g per hour; expected at most %g",
				       v[k + 1], per, k == 4 ? "GiB-hours" : keys[k],
				       v[k + 1] / per, SCENARIO_MAX_PRICE);
	}
	if (!rc && !(rc = imp_map(f, a, "window", &window)) && window) {
		int64_t s = 0, e = 0;
		if (!(rc = imp_time(f, window, "start", &s)) &&
		    !(rc = imp_time(f, window, "end", &e))) {
			if (!im->cost_start || s < im->cost_start)
				im->cost_start = s;
			if (e > im->cost_end)
				im->cost_end = e;
		}
	}
	if (rc)
		return rc;
	struct imp_pod *p = find_pod(im, ns, pod);
	if (p)
		p->real_cost += v[6];
	int n = imp_node_index(im, node);
	if (n < 0)
		return GP_OK;
	const struct imp_shape *s = &im->pools[im->nodes[n].pool].shape;
	struct imp_gpu_price *pr = price_of(im, s->gpu ? s->gpu->name : "cpu");
	pr->gpu_hours += v[0], pr->gpu_cost += v[1];
	pr->cpu_hours += v[2], pr->cpu_cost += v[3];
	pr->gib_hours += v[4] / GIB, pr->ram_cost += v[5];
	return GP_OK;
}

int imp_read_opencost(struct imp *im)
{
	struct imp_file *f = &im->cost_f;
	const struct ynode *data = NULL;
	int rc = imp_open(f, im->o->opencost, im->err);
	if (!rc)
		rc = imp_seq(f, f->tree->root, "data", &data);
	if (!rc && !data)
		rc = imp_error(f, f->tree->root, "data",
			       "expected OpenCost's /allocation response "
			       "{\"code\": 200, \"data\": [...]}");
	for (size_t i = 0; !rc && i < data->n; i++) {
		const struct ynode *set = data->items[i];
		size_t base = imp_push_key(f, "data");
		imp_push_index(f, i);
		if (set->kind != YNODE_MAP)
			rc = imp_error(f, set, NULL, "expected a set of allocations by name");
		for (size_t k = 0; !rc && k < set->n; k++) {
			size_t at = imp_push_key(f, set->keys[k]);
			if (strcmp(set->keys[k], "__idle__") &&
			    strcmp(set->keys[k], "__unallocated__"))
				rc = cost_allocation(im, set->items[k]);
			imp_pop(f, at);
		}
		imp_pop(f, base);
	}
	return rc || im->o->prices ? rc : apply_prices(im);
}
