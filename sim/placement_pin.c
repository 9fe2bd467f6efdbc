/*
 * placement_pin.c - node affinity on kubernetes.io/hostname, the one key
 * whose value differs from node to node (placement.h, "Node labels"): which
 * nodes of a pool a workload's hostname terms allow (see placement_int.h,
 * struct pool_rule).
 *
 * `gpuplan import` pins each running pod's workload to its node with such
 * a term (import.h): a cluster of 100,000 nodes gives about as many pinned
 * workloads.  A term In a few hostnames allows a few nodes, so they are
 * held as sorted node indexes found from the term's values (a pinned
 * workload: one), never a pool-sized mask; only where no term narrows the
 * nodes (NotIn, Exists) is there a mask of the pool's nodes.  A mask per
 * (pinned workload, pool) cost a word per 64 nodes of every pool and a pass
 * over them: on one pool of 100,000 nodes, 12.5 KB per workload, 1.2 GB.
 */
#include "gpuplan/placement.h"

#include <stdlib.h>
#include <string.h>

#include "placement_int.h"

/* The node of pool p whose implicit hostname ("<pool>-<index>") is value,
 * or -1: the inverse of the implicit label, so a hostname term costs its
 * values, not the pool's nodes. */
static int32_t host_node(const struct pool_spec *p, const char *value, int32_t slots)
{
	size_t n = strlen(p->name);
	if (strncmp(value, p->name, n) || value[n] != '-' || value[n + 1] < '0' ||
	    value[n + 1] > '9' || (value[n + 1] == '0' && value[n + 2]))
		return -1;
	int64_t i = 0;
	for (const char *c = value + n + 1; *c; c++) {
		if (*c < '0' || *c > '9' || (i = i * 10 + (*c - '0')) >= slots)
			return -1;
	}
	return (int32_t)i;
}

/* A hostname term: node_selector's (In, one value) or an affinity's. */
struct host_term {
	enum affinity_op op;
	const char *const *values;
	size_t n_values;
};

/* The i-th of w's terms on the hostname key of pool p (node_selector's
 * first, then affinity's); false when term i is on another key. */
static bool term_at(const struct workload_spec *w, const struct pool_spec *p, size_t i,
		    struct host_term *t)
{
	if (i < w->n_node_selector) {
		const struct kv *s = &w->node_selector[i];
		*t = (struct host_term){AFFINITY_IN, (const char *const *)&s->value, 1};
		return pli_per_node_key(p, s->key);
	}
	const struct affinity_expr *e = &w->affinity[i - w->n_node_selector];
	*t = (struct host_term){e->op, (const char *const *)e->values, e->n_values};
	return pli_per_node_key(p, e->key);
}

static int by_index(const void *a, const void *b)
{
	int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
	return (x > y) - (x < y);
}

/* The nodes of the pool a term's values name, sorted, each once; their
 * count.  out holds t->n_values. */
static size_t term_nodes(const struct host_term *t, const struct pool_spec *p, int32_t slots,
			 int32_t *out)
{
	size_t n = 0;
	for (size_t i = 0; t->op != AFFINITY_DOES_NOT_EXIST && i < t->n_values; i++) {
		int32_t node = host_node(p, t->values[i], slots);
		if (node >= 0)
			out[n++] = node;
	}
	qsort(out, n, sizeof *out, by_index);
	size_t k = 0;
	for (size_t i = 0; i < n; i++)
		if (!k || out[k - 1] != out[i])
			out[k++] = out[i];
	return k;
}

static bool listed(const int32_t *v, size_t n, int32_t node)
{
	size_t lo = 0, hi = n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (v[mid] < node)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < n && v[lo] == node;
}

bool pli_host_listed(const struct pool_rule *r, int32_t local)
{
	return listed(r->hosts, (size_t)r->n_allowed, local);
}

/* Whether the terms on the pool's other keys (and gpu_spec) hold: they hold
 * for every node of the pool or for none (pool labels). */
static bool common_terms(const struct workload_spec *w, const struct pool_spec *p)
{
	bool common = w->n_gpu_spec == 0;
	for (size_t i = 0; i < w->n_gpu_spec; i++)
		common = common || !strcmp(w->gpu_spec[i], p->gpu->name);
	for (size_t i = 0; common && i < w->n_node_selector; i++)
		if (!pli_per_node_key(p, w->node_selector[i].key)) {
			const char *v = pli_pool_label(p, w->node_selector[i].key);
			common = v && !strcmp(v, w->node_selector[i].value);
		}
	for (size_t i = 0; common && i < w->n_affinity; i++)
		if (!pli_per_node_key(p, w->affinity[i].key))
			common = pli_expr_matches(&w->affinity[i],
						  pli_pool_label(p, w->affinity[i].key));
	return common;
}

/* The first term that narrows the nodes to those it names (In, or
 * DoesNotExist: none), or SIZE_MAX. */
static size_t narrowing_term(const struct workload_spec *w, const struct pool_spec *p)
{
	struct host_term t;
	for (size_t i = 0; i < w->n_node_selector + w->n_affinity; i++)
		if (term_at(w, p, i, &t) &&
		    (t.op == AFFINITY_IN || t.op == AFFINITY_DOES_NOT_EXIST))
			return i;
	return SIZE_MAX;
}

/* The nodes term `first` names, less those another term refuses: sorted
 * indexes in r->hosts.  O(values x log values). */
static void init_hosts(struct pool_rule *r, const struct workload_spec *w,
		       const struct pool_spec *p, int32_t slots, size_t first)
{
	struct host_term t;
	term_at(w, p, first, &t);
	int32_t *hosts = gp_xcalloc(t.n_values + 1, sizeof *hosts);
	size_t n = term_nodes(&t, p, slots, hosts);
	for (size_t i = 0; n && i < w->n_node_selector + w->n_affinity; i++) {
		if (i == first || !term_at(w, p, i, &t) || t.op == AFFINITY_EXISTS)
			continue;
		int32_t *named = gp_xcalloc(t.n_values + 1, sizeof *named);
		size_t n_named = term_nodes(&t, p, slots, named), k = 0;
		for (size_t h = 0; h < n; h++)
			if (listed(named, n_named, hosts[h]) == (t.op == AFFINITY_IN))
				hosts[k++] = hosts[h]; /* In: named; NotIn: not named */
		n = t.op == AFFINITY_DOES_NOT_EXIST ? 0 : k;
		free(named);
	}
	r->hosts = hosts;
	r->n_allowed = (int32_t)n;
}

/* Intersects mask (words of 64 nodes, every slot's) with the nodes whose hostname makes
 * term t true: NotIn the nodes it does not name, Exists all (every node
 * has one). */
static void mask_term(uint64_t *mask, const struct pool_spec *p, int32_t slots,
		      const struct host_term *t)
{
	if (t->op == AFFINITY_EXISTS)
		return;
	int32_t *named = gp_xcalloc(t->n_values + 1, sizeof *named);
	size_t n = term_nodes(t, p, slots, named);
	for (size_t i = 0; i < n; i++)
		mask[named[i] / 64] &= ~(UINT64_C(1) << (named[i] % 64));
	free(named);
}

/* Terms that leave most of the pool (NotIn, Exists): a mask of its nodes. */
static void init_mask(struct pool_rule *r, const struct workload_spec *w, const struct pool_spec *p,
		      int32_t slots)
{
	size_t words = ((size_t)slots + 63) / 64;
	r->allowed = gp_xcalloc(words, sizeof *r->allowed);
	for (int32_t i = 0; i < slots; i++)
		r->allowed[i / 64] |= UINT64_C(1) << (i % 64);
	struct host_term t;
	for (size_t i = 0; i < w->n_node_selector + w->n_affinity; i++)
		if (term_at(w, p, i, &t))
			mask_term(r->allowed, p, slots, &t);
	for (size_t i = 0; i < words; i++)
		r->n_allowed += gp_popcount64(r->allowed[i]);
}

void pli_init_hosts(struct pool_rule *r, const struct workload_spec *w, const struct pool_spec *p)
{
	int32_t slots = scenario_pool_slots(p);
	r->n_allowed = 0;
	if (common_terms(w, p)) {
		size_t first = narrowing_term(w, p);
		if (first != SIZE_MAX)
			init_hosts(r, w, p, slots, first);
		else
			init_mask(r, w, p, slots);
	}
	r->affinity_ok = r->n_allowed > 0;
	if (r->n_allowed == slots || r->n_allowed == 0)
		pli_free_hosts(r); /* every node, or none: the pool's rule says it */
}

void pli_free_hosts(struct pool_rule *r)
{
	free(r->allowed);
	free(r->hosts);
	r->allowed = NULL;
	r->hosts = NULL;
}
