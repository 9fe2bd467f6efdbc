/*
 * scenario_flavors.c - Kueue's ResourceFlavors (resource_flavors:) and a
 * queue's resource groups (queues[].resource_groups, flavor_fungibility).
 *
 * The form maps 1:1 onto Kueue's objects, in the scenario's snake_case:
 * ResourceFlavor spec.nodeLabels, nodeTaints and tolerations are a flavor's
 * node_labels, node_taints and tolerations; a ClusterQueue's
 * spec.resourceGroups[].coveredResources and flavors[].resources[] (name,
 * nominalQuota, borrowingLimit, lendingLimit) are resource_groups[].
 * covered_resources and flavors[].resources[] (name, nominal_quota,
 * borrowing_limit, lending_limit); spec.flavorFungibility is
 * flavor_fungibility: {when_can_borrow, when_can_preempt}.
 */
#include "gpuplan/scenario.h"

#include <math.h>
#include <string.h>

#include "scenario_int.h"

/* --- resource_flavors ------------------------------------------------------ */

static int flavor_name(struct loader *ld, const struct ynode *v, void *obj)
{
	return ld_get_item_name(ld, v, "flavor name", &((struct flavor_spec *)obj)->name);
}

static int flavor_labels(struct loader *ld, const struct ynode *v, void *obj)
{
	struct flavor_spec *f = obj;
	return ld_get_kv_map(ld, v, "node_labels", &f->node_labels, &f->n_node_labels);
}

static int flavor_taints(struct loader *ld, const struct ynode *v, void *obj)
{
	struct flavor_spec *f = obj;
	return ld_load_taints(ld, v, &f->node_taints, &f->n_node_taints);
}

static int flavor_tolerations(struct loader *ld, const struct ynode *v, void *obj)
{
	struct flavor_spec *f = obj;
	return ld_load_tolerations(ld, v, &f->tolerations, &f->n_tolerations);
}

static const struct key_rule flavor_rules[] = {
	{"name", flavor_name},
	{"node_labels", flavor_labels},
	{"node_taints", flavor_taints},
	{"tolerations", flavor_tolerations},
};

int scenario_flavor_index(const struct scenario *sc, const char *name)
{
	for (size_t i = 0; i < sc->n_flavors; i++)
		if (!strcmp(sc->flavors[i].name, name))
			return (int)i;
	return -1;
}

/* resource_flavors: [{name, node_labels, node_taints, tolerations}].  Room is
 * kept for the "default" flavor a plain quota: adds. */
int ld_load_flavors(struct loader *ld, const struct ynode *v)
{
	struct scenario *sc = ld->sc;
	size_t n = v ? v->n : 0;
	int rc = v ? ld_expect_list(ld, v, "resource_flavors",
				    "a list like [{name: a100, node_labels: "
				    "{nvidia.com/gpu.product: NVIDIA-A100-SXM4-80GB}}]")
		   : GP_OK;
	if (rc)
		return rc;
	sc->flavors = gp_xcalloc(n + 1, sizeof *sc->flavors);
	for (size_t i = 0; i < n && !rc; i++) {
		const struct ynode *item = v->items[i];
		struct flavor_spec *f = &sc->flavors[sc->n_flavors++];
		f->loc = item->loc;
		rc = ld_walk_map(ld, item, "resource flavor",
				 "a map like {name: a100, node_labels: {pool: a100}}", flavor_rules,
				 N_OF(flavor_rules), f);
		if (!rc)
			rc = ld_require(ld, item, "name", "resource flavor", "a name like a100");
		int first = rc ? -1 : scenario_flavor_index(sc, f->name);
		if (first >= 0 && (size_t)first < i)
			rc = ld_duplicate(ld, item, "resource flavor", f->name,
					  sc->flavors[first].loc);
	}
	return rc;
}

void ld_free_flavor(struct flavor_spec *f)
{
	free(f->name);
	for (size_t i = 0; i < f->n_node_labels; i++) {
		free(f->node_labels[i].key);
		free(f->node_labels[i].value);
	}
	free(f->node_labels);
	for (size_t i = 0; i < f->n_node_taints; i++) {
		free(f->node_taints[i].key);
		free(f->node_taints[i].value);
	}
	free(f->node_taints);
	for (size_t i = 0; i < f->n_tolerations; i++) {
		free(f->tolerations[i].key);
		free(f->tolerations[i].value);
	}
	free(f->tolerations);
}

void ld_free_groups(struct queue_spec *q)
{
	for (size_t g = 0; g < q->n_groups; g++) {
		for (size_t k = 0; k < q->groups[g].n_covered; k++)
			free(q->groups[g].covered[k]);
		free(q->groups[g].covered);
		free(q->groups[g].flavors);
	}
	free(q->groups);
	q->groups = NULL;
	q->n_groups = 0;
}

/* The "default" flavor of a plain quota: the declared one, or a flavor
 * without labels or taints added once. */
static int32_t default_flavor(struct scenario *sc)
{
	int k = scenario_flavor_index(sc, SCENARIO_DEFAULT_FLAVOR);
	if (k >= 0)
		return (int32_t)k;
	struct flavor_spec *f = &sc->flavors[sc->n_flavors];
	*f = (struct flavor_spec){.name = gp_xstrdup(SCENARIO_DEFAULT_FLAVOR),
				  .loc = {sc->path, 0, 0}};
	return (int32_t)sc->n_flavors++;
}

/* A plain quota: {nvidia.com/gpu: 4} is one resource group covering its
 * resources, with the one flavor "default". */
void ld_plain_group(struct loader *ld, struct queue_spec *q)
{
	if (!q->n_quota || q->n_groups)
		return;
	int32_t f = default_flavor(ld->sc);
	struct resource_group *g = q->groups = gp_xcalloc(1, sizeof *q->groups);
	q->n_groups = 1;
	g->loc = q->loc;
	g->covered = gp_xcalloc(q->n_quota, sizeof *g->covered);
	g->flavors = gp_xcalloc(1, sizeof *g->flavors);
	g->flavors[g->n_flavors++] = f;
	for (size_t i = 0; i < q->n_quota; i++) {
		q->quota[i].flavor = f;
		g->covered[g->n_covered++] = gp_xstrdup(q->quota[i].resource);
	}
}

/* --- resource_groups ------------------------------------------------------- */

/* What the walk of one group fills. */
struct group_ctx {
	struct loader *ld;
	struct queue_spec *q;
	struct resource_group *g;
	const struct ynode *covered; /* the group's covered_resources */
	int32_t flavor;              /* the flavor being read */
	struct quota_entry entry;    /* the resource being read */
	size_t n_resources;          /* of the flavor being read */
};

static int group_covered(struct loader *ld, const struct ynode *v, void *obj)
{
	struct group_ctx *cx = obj;
	int rc = ld_expect_list(ld, v, "covered_resources", "a list like [nvidia.com/gpu]");
	if (!rc && !v->n)
		return gp_located(ld->err, v->loc,
				  "covered_resources is empty; expected at least one resource");
	struct resource_group *g = cx->g;
	g->covered = gp_xcalloc(v->n + 1, sizeof *g->covered);
	for (size_t i = 0; i < v->n && !rc; i++) {
		char *name = NULL;
		rc = ld_get_string(ld, v->items[i], "covered resource", "a resource like cpu",
				   &name);
		if (!rc)
			rc = ld_quota_amount_check(ld, name, v->items[i]->loc);
		if (rc) {
			free(name);
			break;
		}
		for (size_t k = 0; k < g->n_covered && !rc; k++)
			if (!strcmp(g->covered[k], name))
				rc = gp_located(ld->err, v->items[i]->loc,
						"resource %s is covered twice; expected each "
						"resource once",
						name);
		for (size_t o = 0; o < cx->q->n_groups && !rc; o++)
			for (size_t k = 0; k < cx->q->groups[o].n_covered && !rc; k++)
				if (!strcmp(cx->q->groups[o].covered[k], name))
					rc = gp_located(ld->err, v->items[i]->loc,
							"resource %s is covered by resource "
							"group %zu too; expected each resource in "
							"one group (Kueue's rule)",
							name, o);
		g->covered[g->n_covered++] = name;
	}
	cx->covered = v;
	return rc;
}

static int resource_name(struct loader *ld, const struct ynode *v, void *obj)
{
	struct group_ctx *cx = obj;
	char *name = NULL;
	int rc = ld_get_string(ld, v, "resource name", "a resource like nvidia.com/gpu", &name);
	cx->entry.resource = name;
	cx->entry.loc = v->loc;
	return rc;
}

static int resource_amount(struct loader *ld, const struct ynode *v, const char *what,
			   struct group_ctx *cx, double *out)
{
	if (!cx->entry.resource)
		return gp_located(ld->err, v->loc,
				  "%s before the resource's name; expected name: first", what);
	return ld_quota_amount(ld, cx->entry.resource, v, out);
}

static int resource_nominal(struct loader *ld, const struct ynode *v, void *obj)
{
	struct group_ctx *cx = obj;
	return resource_amount(ld, v, "nominal_quota", cx, &cx->entry.nominal);
}

static int resource_borrowing(struct loader *ld, const struct ynode *v, void *obj)
{
	struct group_ctx *cx = obj;
	return resource_amount(ld, v, "borrowing_limit", cx, &cx->entry.borrowing_limit);
}

static int resource_lending(struct loader *ld, const struct ynode *v, void *obj)
{
	struct group_ctx *cx = obj;
	return resource_amount(ld, v, "lending_limit", cx, &cx->entry.lending_limit);
}

static const struct key_rule resource_rules[] = {
	{"name", resource_name},
	{"nominal_quota", resource_nominal},
	{"borrowing_limit", resource_borrowing},
	{"lending_limit", resource_lending},
};

/* flavors[].resources: the covered resources, in their order (Kueue's
 * validation: "must match coveredResources"). */
static int flavor_resources(struct loader *ld, const struct ynode *v, void *obj)
{
	struct group_ctx *cx = obj;
	int rc = ld_expect_list(ld, v, "resources",
				"a list like [{name: nvidia.com/gpu, nominal_quota: 4}]");
	if (rc)
		return rc;
	if (cx->g->n_covered != v->n)
		return gp_located(ld->err, v->loc,
				  "flavor has %zu resources for %zu covered resources; expected "
				  "one per covered resource, in their order",
				  v->n, cx->g->n_covered);
	for (size_t i = 0; i < v->n && !rc; i++) {
		cx->entry = (struct quota_entry){.flavor = cx->flavor,
						 .nominal = INFINITY,
						 .borrowing_limit = INFINITY,
						 .lending_limit = INFINITY};
		rc = ld_walk_map(ld, v->items[i], "flavor resource",
				 "a map like {name: nvidia.com/gpu, nominal_quota: 4}",
				 resource_rules, N_OF(resource_rules), cx);
		if (!rc)
			rc = ld_require(ld, v->items[i], "name", "flavor resource",
					"a resource like nvidia.com/gpu");
		if (!rc)
			rc = ld_require(ld, v->items[i], "nominal_quota", "flavor resource",
					"an amount like 4");
		if (!rc && strcmp(cx->entry.resource, cx->g->covered[i]))
			rc = gp_located(ld->err, v->items[i]->loc,
					"resource %s where covered_resources has %s; expected the "
					"covered resources in their order",
					cx->entry.resource, cx->g->covered[i]);
		if (rc) {
			free(cx->entry.resource);
			break;
		}
		struct queue_spec *q = cx->q;
		q->quota = gp_xrealloc(q->quota, (q->n_quota + 1) * sizeof *q->quota);
		q->quota[q->n_quota++] = cx->entry;
	}
	cx->n_resources = v->n;
	return rc;
}

static int group_flavor_name(struct loader *ld, const struct ynode *v, void *obj)
{
	struct group_ctx *cx = obj;
	char *name = NULL;
	int rc = ld_get_item_name(ld, v, "flavor name", &name);
	int k = rc ? -1 : scenario_flavor_index(ld->sc, name);
	if (!rc && k < 0)
		rc = gp_located(ld->err, v->loc,
				"unknown flavor '%s'; expected a flavor of resource_flavors", name);
	for (size_t o = 0; o < cx->q->n_groups && !rc; o++)
		for (size_t i = 0; i < cx->q->groups[o].n_flavors && !rc; i++)
			if (cx->q->groups[o].flavors[i] == k)
				rc = gp_located(ld->err, v->loc,
						"flavor %s is listed twice in queue %s; expected "
						"each flavor in one resource group (Kueue's rule)",
						name, cx->q->name ? cx->q->name : "");
	for (size_t i = 0; i < cx->g->n_flavors && !rc; i++)
		if (cx->g->flavors[i] == k)
			rc = gp_located(ld->err, v->loc,
					"flavor %s is listed twice in queue %s; expected each "
					"flavor in one resource group (Kueue's rule)",
					name, cx->q->name ? cx->q->name : "");
	free(name);
	cx->flavor = (int32_t)k;
	return rc;
}

/* A key read before the walk (a flavor's name, a group's covered resources). */
static int read_first(struct loader *ld, const struct ynode *v, void *obj)
{
	(void)ld;
	(void)v;
	(void)obj;
	return GP_OK;
}

static const struct key_rule group_flavor_rules[] = {
	{"name", read_first},
	{"resources", flavor_resources},
};

static int group_flavors(struct loader *ld, const struct ynode *v, void *obj)
{
	struct group_ctx *cx = obj;
	int rc = ld_expect_list(ld, v, "flavors",
				"a list like [{name: a100, resources: [{name: nvidia.com/gpu, "
				"nominal_quota: 4}]}]");
	if (!rc && (v->n == 0 || v->n > SCENARIO_MAX_GROUP_FLAVORS))
		return gp_located(ld->err, v->loc,
				  "%zu flavors in a resource group; expected 1 to %d", v->n,
				  SCENARIO_MAX_GROUP_FLAVORS);
	if (!rc && !cx->covered)
		return gp_located(ld->err, v->loc,
				  "flavors before covered_resources; expected covered_resources "
				  "first");
	cx->g->flavors = gp_xcalloc(v->n, sizeof *cx->g->flavors);
	for (size_t i = 0; i < v->n && !rc; i++) {
		const struct ynode *item = v->items[i];
		/* name first, so that resources know their flavor */
		const struct ynode *name = ynode_get(item, "name");
		if (item->kind != YNODE_MAP)
			return ld_bad_value(ld, item, "flavor",
					    "a map like {name: a100, resources: [...]}");
		rc = ld_require(ld, item, "name", "flavor", "a flavor of resource_flavors");
		if (!rc)
			rc = group_flavor_name(ld, name, cx);
		if (!rc)
			rc = ld_walk_map(ld, item, "flavor",
					 "a map like {name: a100, resources: [...]}",
					 group_flavor_rules, N_OF(group_flavor_rules), cx);
		if (!rc && !ynode_get(item, "resources"))
			rc = ld_require(ld, item, "resources", "flavor",
					"a list like [{name: nvidia.com/gpu, nominal_quota: 4}]");
		if (!rc)
			cx->g->flavors[cx->g->n_flavors++] = cx->flavor;
	}
	return rc;
}

static const struct key_rule group_rules[] = {
	{"covered_resources", read_first},
	{"flavors", group_flavors},
};

int ld_queue_groups(struct loader *ld, const struct ynode *v, void *obj)
{
	struct queue_spec *q = obj;
	int rc = ld_expect_list(ld, v, "resource_groups",
				"a list like [{covered_resources: [nvidia.com/gpu], flavors: "
				"[{name: a100, resources: [{name: nvidia.com/gpu, nominal_quota: "
				"4}]}]}]");
	if (!rc && (v->n == 0 || v->n > SCENARIO_MAX_GROUPS))
		return gp_located(ld->err, v->loc, "%zu resource groups; expected 1 to %d", v->n,
				  SCENARIO_MAX_GROUPS);
	q->groups = gp_xcalloc(v->n, sizeof *q->groups);
	for (size_t i = 0; i < v->n && !rc; i++) {
		const struct ynode *item = v->items[i];
		struct resource_group *g = &q->groups[q->n_groups];
		struct group_ctx cx = {.ld = ld, .q = q, .g = g};
		g->loc = item->loc;
		/* covered_resources before flavors, whatever the order written */
		const struct ynode *cov =
			item->kind == YNODE_MAP ? ynode_get(item, "covered_resources") : NULL;
		if (item->kind != YNODE_MAP)
			rc = ld_bad_value(ld, item, "resource group",
					  "a map like {covered_resources: [nvidia.com/gpu], "
					  "flavors: [...]}");
		if (!rc)
			rc = ld_require(ld, item, "covered_resources", "resource group",
					"a list like [nvidia.com/gpu]");
		if (!rc)
			rc = ld_require(ld, item, "flavors", "resource group",
					"a list of flavors with their quotas");
		if (!rc)
			rc = group_covered(ld, cov, &cx);
		if (!rc)
			rc = ld_walk_map(
				ld, item, "resource group",
				"a map like {covered_resources: [nvidia.com/gpu], flavors: "
				"[...]}",
				group_rules, N_OF(group_rules), &cx);
		q->n_groups++;
	}
	return rc;
}

/* --- flavor_fungibility ------------------------------------------------------ */

/* v1beta2's names, and v1beta1's Borrow / Preempt for MayStopSearch. */
static int fungibility(struct loader *ld, const struct ynode *v, const char *what,
		       const char *v1beta1, enum fungibility *out)
{
	const char *const names[] = {"MayStopSearch", "TryNextFlavor", v1beta1};
	int k = 0;
	int rc = ld_get_enum(ld, v, what, names, N_OF(names), &k);
	*out = k == 1 ? FUNGIBILITY_TRY_NEXT_FLAVOR : FUNGIBILITY_MAY_STOP_SEARCH;
	return rc;
}

static int when_can_borrow(struct loader *ld, const struct ynode *v, void *obj)
{
	return fungibility(ld, v, "when_can_borrow", "Borrow",
			   &((struct queue_spec *)obj)->when_can_borrow);
}

static int when_can_preempt(struct loader *ld, const struct ynode *v, void *obj)
{
	return fungibility(ld, v, "when_can_preempt", "Preempt",
			   &((struct queue_spec *)obj)->when_can_preempt);
}

static const struct key_rule fungibility_rules[] = {
	{"when_can_borrow", when_can_borrow},
	{"when_can_preempt", when_can_preempt},
};

int ld_queue_fungibility(struct loader *ld, const struct ynode *v, void *obj)
{
	return ld_walk_map(ld, v, "flavor_fungibility",
			   "a map like {when_can_borrow: TryNextFlavor, when_can_preempt: "
			   "TryNextFlavor}",
			   fungibility_rules, N_OF(fungibility_rules), obj);
}
