/*
 * scenario_route.c - routed services (docs/inference.md, "Routed fleets"):
 * an inference workload with groups: and router: is one request stream in
 * front of two or more groups of replicas, each with its own pool, GPUs,
 * tensor parallelism, batch and replicas, and a router that sends each request
 * to a group by its prompt length.
 *
 * The groups become workloads of their own in the tree, before the workloads
 * are read: group g of service S is the item of S without its groups: and
 * router:, with the group's keys over S's, named S-g.  So a group is read,
 * checked, placed, costed and reported as any inference workload, with
 * errors located on the key that was written (S's or the group's); and the
 * one-to-one map of workloads to YAML items the loader's later checks rely
 * on holds.  ld_route_apply then tells each group's server its service and
 * the prompts it takes: with thresholds t_1 < ... < t_{n-1}, group g takes
 * t_g < prompt <= t_{g+1} (t_0 = -inf, t_n = +inf), so the ranges cover every
 * prompt once by construction.  Every group draws the service's one stream
 * (seeded by S's name) and keeps its range, so the groups partition the same
 * requests exactly.
 *
 * inference-fleet-sim's LengthRouter (vllm-project/semantic-router,
 * src/fleet-sim/fleet_sim/routing/length_based.py) routes on prompt + output
 * tokens <= threshold; a router in front of real servers sees only the
 * prompt, so gpuplan routes on prompt_tokens.
 */
#include "gpuplan/scenario.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpuplan/units.h"

#include "scenario_int.h"

#define ROUTER_HINT \
	"{by: prompt_tokens, threshold: 4096} (or threshold: [2048, 8192] for three groups)"
#define GROUPS_HINT                                                                          \
	"a list of two or more groups like [{name: short, pool: l40s, replicas: 4}, {name: " \
	"long, pool: h100, replicas: 2}]"
#define MAX_THRESHOLD INT64_C(1000000000)

/* Keys of the service that a group may not set: they are the service's one
 * stream and goal, or its routing. */
static const char *const service_only[] = {"kind", "requests", "slo", "router", "groups"};

/* --- building nodes ------------------------------------------------------------- */

static struct ynode *scalar(const char *text, struct srcloc loc)
{
	struct ynode *n = gp_xcalloc(1, sizeof *n);
	n->kind = YNODE_SCALAR;
	n->loc = loc;
	n->value = gp_xstrdup(text);
	return n;
}

static struct ynode *empty_map(struct srcloc loc)
{
	struct ynode *m = gp_xcalloc(1, sizeof *m);
	m->kind = YNODE_MAP;
	m->loc = loc;
	m->keys = gp_xcalloc(1, sizeof *m->keys);
	m->key_locs = gp_xcalloc(1, sizeof *m->key_locs);
	m->items = gp_xcalloc(1, sizeof *m->items);
	return m;
}

/* Sets key to value (which m then owns), replacing an entry of that key. */
static void put(struct ynode *m, const char *key, struct srcloc loc, struct ynode *value)
{
	for (size_t i = 0; i < m->n; i++)
		if (!strcmp(m->keys[i], key)) {
			ynode_free(m->items[i]);
			m->items[i] = value;
			m->key_locs[i] = loc;
			return;
		}
	m->keys = gp_xrealloc(m->keys, (m->n + 1) * sizeof *m->keys);
	m->key_locs = gp_xrealloc(m->key_locs, (m->n + 1) * sizeof *m->key_locs);
	m->items = gp_xrealloc(m->items, (m->n + 1) * sizeof *m->items);
	m->keys[m->n] = gp_xstrdup(key);
	m->key_locs[m->n] = loc;
	m->items[m->n++] = value;
}

static size_t key_at(const struct ynode *m, const char *key)
{
	for (size_t i = 0; i < m->n; i++)
		if (!strcmp(m->keys[i], key))
			return i;
	return m->n;
}

/* --- checking the service --------------------------------------------------------- */

/* The thresholds of router: into t[0..n_groups-1), ascending. */
static int read_router(struct loader *ld, const struct ynode *router, size_t n_groups, int64_t *t)
{
	static const char *const keys[] = {"by", "threshold"};
	if (router->kind != YNODE_MAP)
		return ld_bad_value(ld, router, "router", ROUTER_HINT);
	int rc = ld_only_keys(ld, router, keys, 2, "router");
	const struct ynode *by = ynode_get(router, "by");
	if (!rc && by && (by->kind != YNODE_SCALAR || strcmp(by->value, "prompt_tokens")))
		return ld_bad_value(ld, by, "router.by",
				    "prompt_tokens (the router sees a request's prompt, not its "
				    "answer)");
	if (!rc)
		rc = ld_require(ld, router, "threshold", "router",
				"the longest prompt of the first group, like 4096");
	if (rc)
		return rc;
	const struct ynode *th = ynode_get(router, "threshold");
	const struct ynode *const *items = (const struct ynode *const *)&th;
	size_t n = 1;
	if (th->kind == YNODE_SEQ) {
		items = (const struct ynode *const *)th->items;
		n = th->n;
	}
	if (n != n_groups - 1)
		return gp_located(ld->err, th->loc,
				  "router.threshold has %zu value%s for %zu groups; expected %zu, "
				  "the longest prompt of each group but the last",
				  n, n == 1 ? "" : "s", n_groups, n_groups - 1);
	for (size_t i = 0; i < n; i++) {
		rc = ld_get_int(ld, items[i], "router.threshold", 1, MAX_THRESHOLD, &t[i]);
		if (rc)
			return rc;
		if (i && t[i] <= t[i - 1])
			return gp_located(
				ld->err, items[i]->loc,
				"router.threshold %lld is not above %lld; expected ascending "
				"thresholds, one range of prompts per group",
				(long long)t[i], (long long)t[i - 1]);
	}
	return GP_OK;
}

/* A group's own keys: a name, no key of the service's, a pool that exists. */
static int check_group(struct loader *ld, const struct ynode *g, const struct ynode *groups,
		       size_t k)
{
	if (g->kind != YNODE_MAP)
		return ld_bad_value(ld, g, "group", GROUPS_HINT);
	int rc = ld_require(ld, g, "name", "group", "a name like short");
	char *name = NULL;
	if (!rc)
		rc = ld_get_item_name(ld, ynode_get(g, "name"), "group name", &name);
	for (size_t j = 0; !rc && j < k; j++) {
		const struct ynode *other = ynode_get(groups->items[j], "name");
		if (!strcmp(other->value, name))
			rc = ld_duplicate(ld, g, "group", name, other->loc);
	}
	free(name);
	for (size_t i = 0; !rc && i < sizeof service_only / sizeof *service_only; i++) {
		size_t at = key_at(g, service_only[i]);
		if (at < g->n)
			rc = gp_located(ld->err, g->key_locs[at],
					"%s belongs to the service, not to a group; expected it "
					"beside groups:",
					service_only[i]);
	}
	const struct ynode *pool = ynode_get(g, "pool");
	if (rc || !pool)
		return rc;
	if (pool->kind != YNODE_SCALAR)
		return ld_bad_value(ld, pool, "pool", "the name of a pool, like h100");
	if (scenario_pool_index(ld->sc, pool->value) >= 0)
		return GP_OK;
	const char **names = gp_xcalloc(ld->sc->n_pools + 1, sizeof *names);
	for (size_t p = 0; p < ld->sc->n_pools; p++)
		names[p] = ld->sc->pools[p].name;
	rc = ld_unknown_word(ld, pool->loc, "pool", pool->value, names, ld->sc->n_pools);
	free(names);
	return rc;
}

/* Checks a routed service's item; *n_groups gets its groups, t its thresholds. */
static int check_service(struct loader *ld, const struct ynode *item, size_t *n_groups, int64_t **t)
{
	const struct ynode *groups = ynode_get(item, "groups"), *router = ynode_get(item, "router"),
			   *kind = ynode_get(item, "kind");
	if (!groups)
		return gp_located(ld->err, router->loc,
				  "router applies to a service with groups; expected groups: %s "
				  "beside it",
				  GROUPS_HINT);
	if (!router)
		return gp_located(ld->err, groups->loc,
				  "groups need a router; expected router: " ROUTER_HINT
				  " beside them");
	if (!kind || kind->kind != YNODE_SCALAR || strcmp(kind->value, "inference"))
		return gp_located(ld->err, groups->loc,
				  "groups apply to inference workloads; expected kind: inference "
				  "beside them");
	/* A disaggregated group would add a service infer_results does not
	 * count among the groups: not modelled (docs/inference.md, Limits). */
	const struct ynode *split = ynode_get(item, "disaggregated");
	for (size_t i = 0; !split && groups->kind == YNODE_SEQ && i < groups->n; i++)
		split = ynode_get(groups->items[i], "disaggregated");
	if (split)
		return gp_located(ld->err, split->loc,
				  "a routed service's groups are not disaggregated; expected "
				  "replicas: N in each group, or a service without groups:");
	int rc = ld_require(ld, item, "name", "workload", "a name like chat");
	if (rc)
		return rc;
	if (groups->kind != YNODE_SEQ)
		return ld_bad_value(ld, groups, "groups", GROUPS_HINT);
	if (groups->n < 2)
		return gp_located(ld->err, groups->loc,
				  "groups has %zu group; expected %s, one per range of prompts",
				  groups->n, GROUPS_HINT);
	for (size_t k = 0; k < groups->n && !rc; k++)
		rc = check_group(ld, groups->items[k], groups, k);
	if (rc)
		return rc;
	*n_groups = groups->n;
	*t = gp_xcalloc(groups->n, sizeof **t);
	rc = read_router(ld, router, groups->n, *t);
	if (rc) {
		free(*t);
		*t = NULL;
	}
	return rc;
}

/* --- expanding ------------------------------------------------------------------- */

/* The item of group g: the service's keys, the group's over them, its name
 * S-g, and its pool as a node selector on gpuplan.io/pool. */
static struct ynode *group_item(const struct ynode *item, const struct ynode *g)
{
	const struct ynode *service = ynode_get(item, "name"), *gname = ynode_get(g, "name");
	struct ynode *m = empty_map(g->loc);
	for (size_t i = 0; i < item->n; i++) {
		const char *key = item->keys[i];
		if (!strcmp(key, "name") || !strcmp(key, "groups") || !strcmp(key, "router"))
			continue;
		put(m, key, item->key_locs[i], ynode_copy(item->items[i]));
	}
	for (size_t i = 0; i < g->n; i++)
		if (strcmp(g->keys[i], "name") && strcmp(g->keys[i], "pool"))
			put(m, g->keys[i], g->key_locs[i], ynode_copy(g->items[i]));
	size_t len = strlen(service->value) + strlen(gname->value) + 2;
	char *name = gp_xmalloc(len);
	snprintf(name, len, "%s-%s", service->value, gname->value);
	put(m, "name", gname->loc, scalar(name, gname->loc));
	free(name);
	const struct ynode *pool = ynode_get(g, "pool");
	if (!pool)
		return m;
	size_t at = key_at(m, "node_selector");
	if (at == m->n)
		put(m, "node_selector", pool->loc, empty_map(pool->loc));
	at = key_at(m, "node_selector");
	if (m->items[at]->kind == YNODE_MAP) /* else the loader reports it as written */
		put(m->items[at], SCENARIO_LABEL_POOL, pool->loc, scalar(pool->value, pool->loc));
	return m;
}

static bool routed(const struct ynode *item)
{
	return item->kind == YNODE_MAP && (ynode_get(item, "groups") || ynode_get(item, "router"));
}

int ld_route_expand(struct loader *ld, const struct ynode *list)
{
	if (!list || list->kind != YNODE_SEQ)
		return GP_OK; /* ld_load_workloads reports it */
	size_t total = 0;
	bool any = false;
	for (size_t i = 0; i < list->n; i++) {
		const struct ynode *groups = ynode_get(list->items[i], "groups");
		any |= routed(list->items[i]);
		total += routed(list->items[i]) && groups && groups->kind == YNODE_SEQ ? groups->n
										       : 1;
	}
	if (!any)
		return GP_OK;
	/* The loader owns the tree (scenario_load) and nothing reads the
	 * service's item after this: its groups take its place. */
	struct ynode *seq = (struct ynode *)list;
	struct ynode **items = gp_xcalloc(total, sizeof *items);
	struct route_note *notes = gp_xcalloc(total, sizeof *notes);
	size_t n = 0;
	int rc = GP_OK;
	for (size_t i = 0; i < seq->n; i++) {
		struct ynode *item = seq->items[i];
		if (rc || !routed(item)) {
			items[n++] = item;
			continue;
		}
		size_t groups = 0;
		int64_t *t = NULL;
		rc = check_service(ld, item, &groups, &t);
		if (rc) {
			items[n++] = item;
			continue;
		}
		const struct ynode *list_of = ynode_get(item, "groups");
		for (size_t g = 0; g < groups; g++) {
			notes[n] = (struct route_note){gp_xstrdup(ynode_get(item, "name")->value),
						       (int32_t)g,
						       (int32_t)groups,
						       g ? t[g - 1] : -1,
						       g + 1 < groups ? t[g] : INT64_MAX,
						       item->loc};
			items[n++] = group_item(item, list_of->items[g]);
		}
		free(t);
		ynode_free(item);
	}
	free(seq->items);
	seq->items = items;
	seq->n = n;
	ld->routes = notes;
	ld->n_routes = n;
	return rc;
}

/* The service's name is a scope of its own: no workload or pool may have it. */
static int check_service_name(struct loader *ld, const struct route_note *r)
{
	const struct scenario *sc = ld->sc;
	int p = scenario_pool_index(sc, r->service);
	if (p >= 0)
		return gp_located(ld->err, r->loc,
				  "service name '%s' is also a pool name (line %d); expected "
				  "distinct names, as results are reported per name",
				  r->service, sc->pools[p].loc.line);
	for (size_t i = 0; i < sc->n_workloads; i++) {
		const struct route_note *o = i < ld->n_routes ? &ld->routes[i] : NULL;
		if (!strcmp(sc->workloads[i].name, r->service) ||
		    (o && o->service && o->group == 0 && o != r &&
		     !strcmp(o->service, r->service) && o->loc.line != r->loc.line))
			return gp_located(ld->err, r->loc,
					  "service name '%s' is also the name of the workload at "
					  "line %d; expected distinct names",
					  r->service, sc->workloads[i].loc.line);
	}
	return GP_OK;
}

int ld_route_apply(struct loader *ld)
{
	int rc = GP_OK;
	for (size_t i = 0; i < ld->n_routes && i < ld->sc->n_workloads && !rc; i++) {
		struct route_note *r = &ld->routes[i];
		struct inference_spec *is = ld->sc->workloads[i].inference;
		if (!r->service || !is)
			continue;
		if (r->group == 0)
			rc = check_service_name(ld, r);
		is->service = r->service;
		r->service = NULL;
		is->group = r->group;
		is->n_groups = r->n_groups;
		is->prompt_lo = r->lo;
		is->prompt_hi = r->hi;
	}
	return rc;
}

void ld_route_free(struct loader *ld)
{
	for (size_t i = 0; i < ld->n_routes; i++)
		free(ld->routes[i].service);
	free(ld->routes);
	ld->routes = NULL;
	ld->n_routes = 0;
}

/* The item of list named name[0..len), or NULL. */
static const struct ynode *item_named(const struct ynode *list, const char *name, size_t len)
{
	for (size_t i = 0; list && list->kind == YNODE_SEQ && i < list->n; i++) {
		const struct ynode *n = ynode_get(list->items[i], "name");
		if (n && n->kind == YNODE_SCALAR && strlen(n->value) == len &&
		    !strncmp(n->value, name, len))
			return list->items[i];
	}
	return NULL;
}

char *ld_route_alias(const struct ynode *root, const char *assignment)
{
	static const char prefix[] = "workloads.";
	size_t skip = sizeof prefix - 1;
	if (strncmp(assignment, prefix, skip))
		return NULL;
	const char *name = assignment + skip;
	size_t len = strcspn(name, ".=");
	const struct ynode *list = ynode_get(root, "workloads");
	if (name[len] != '.' || item_named(list, name, len))
		return NULL;
	for (size_t i = 0; list && list->kind == YNODE_SEQ && i < list->n; i++) {
		const struct ynode *s = ynode_get(list->items[i], "name"),
				   *groups = ynode_get(list->items[i], "groups");
		if (!s || s->kind != YNODE_SCALAR || !groups)
			continue;
		size_t sl = strlen(s->value);
		if (len <= sl + 1 || strncmp(name, s->value, sl) || name[sl] != '-' ||
		    !item_named(groups, name + sl + 1, len - sl - 1))
			continue;
		size_t n = strlen(assignment) + sizeof ".groups";
		char *path = gp_xmalloc(n);
		snprintf(path, n, "%s%s.groups.%s", prefix, s->value, name + sl + 1);
		return path;
	}
	return NULL;
}
