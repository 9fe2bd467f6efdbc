/*
 * placement_flavors.c - the placement variants of Kueue's flavors: the
 * labels and tolerations Kueue adds to the pods it admits (see
 * placement.h, placement_variant).
 */
#include "gpuplan/placement.h"

#include <stdlib.h>
#include <string.h>

#include "placement_int.h"

/* Whether the flavor changes a pod: labels to select, tolerations to add. */
static bool flavor_steers(const struct flavor_spec *f)
{
	return f->n_node_labels || f->n_tolerations;
}

static int flavor_order(const void *a, const void *b)
{
	int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
	return (x > y) - (x < y);
}

/* Workload w's spec with the variant's flavors merged in, its two arrays
 * fresh (freed by unmerge). */
static struct workload_spec merged(const struct scenario *sc, size_t w, const int32_t *flavors)
{
	struct workload_spec m = sc->workloads[w];
	size_t labels = m.n_node_selector, tols = m.n_tolerations;
	for (size_t k = 0; k < VARIANT_FLAVORS && flavors[k] >= 0; k++) {
		labels += sc->flavors[flavors[k]].n_node_labels;
		tols += sc->flavors[flavors[k]].n_tolerations;
	}
	m.node_selector = gp_xcalloc(labels + 1, sizeof *m.node_selector);
	m.tolerations = gp_xcalloc(tols + 1, sizeof *m.tolerations);
	const struct workload_spec *o = &sc->workloads[w];
	/* memcpy from a workload's NULL array, even of 0 bytes, is undefined. */
	if (o->n_node_selector)
		memcpy(m.node_selector, o->node_selector,
		       o->n_node_selector * sizeof *m.node_selector);
	if (o->n_tolerations)
		memcpy(m.tolerations, o->tolerations, o->n_tolerations * sizeof *m.tolerations);
	for (size_t k = 0; k < VARIANT_FLAVORS && flavors[k] >= 0; k++) {
		const struct flavor_spec *f = &sc->flavors[flavors[k]];
		for (size_t i = 0; i < f->n_node_labels; i++)
			m.node_selector[m.n_node_selector++] = f->node_labels[i];
		for (size_t i = 0; i < f->n_tolerations; i++)
			m.tolerations[m.n_tolerations++] = f->tolerations[i];
	}
	return m;
}

int32_t placement_variant(struct placer *pl, const int32_t *flavors, size_t n)
{
	const struct scenario *sc = pl->c->sc;
	int32_t key[VARIANT_FLAVORS];
	size_t k = 0;
	for (size_t i = 0; i < n && k < VARIANT_FLAVORS; i++)
		if (flavors[i] >= 0 && flavor_steers(&sc->flavors[flavors[i]]))
			key[k++] = flavors[i];
	if (!k)
		return 0;
	qsort(key, k, sizeof *key, flavor_order);
	for (size_t i = k; i < VARIANT_FLAVORS; i++)
		key[i] = -1;
	for (size_t v = 1; v < pl->n_variants; v++)
		if (!memcmp(&pl->variants[(v - 1) * VARIANT_FLAVORS], key, sizeof key))
			return (int32_t)v;
	size_t v = pl->n_variants++, per = pl->n_workloads * pl->n_pools;
	pl->variants = gp_xrealloc(pl->variants, v * VARIANT_FLAVORS * sizeof *pl->variants);
	memcpy(&pl->variants[(v - 1) * VARIANT_FLAVORS], key, sizeof key);
	pl->rules = gp_xrealloc(pl->rules, (v + 1) * per * sizeof *pl->rules + 1);
	for (size_t w = 0; w < pl->n_workloads; w++) {
		struct workload_spec m = merged(sc, w, key);
		for (size_t p = 0; p < pl->n_pools; p++)
			pli_init_rule(pl, &m, w, p,
				      &pl->rules[(v * pl->n_workloads + w) * pl->n_pools + p]);
		free(m.node_selector);
		free(m.tolerations);
	}
	return (int32_t)v;
}
