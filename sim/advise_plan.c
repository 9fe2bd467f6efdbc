/*
 * advise_plan.c - what to try: the relaxations of the table (relax.h) that
 * the base run's findings call for (replicas, culling, partitions,
 * quantization, inference settings, a shared pool, windows, lending,
 * tolerations, selectors and rules), and a finding's own fixes, each a label
 * and --set overrides on top of the user's (see advise.c), in the order
 * planned.
 */
#include "advise_int.h"

#include "gpuplan/diagnose.h"
#include "gpuplan/infer.h"
#include "gpuplan/relax.h"
#include "gpuplan/report.h"
#include "gpuplan/scenario.h"
#include "gpuplan/ytree.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* --- what to try ----------------------------------------------------------- */

/* The fixes of f as alternatives, in order (a label planned already is not
 * planned again); frees f. */
static void plan_from(struct plan *pl, struct finding *f)
{
	for (size_t i = 0; i < f->n_fixes; i++) {
		const struct finding_fix *x = &f->fixes[i];
		struct advise_row *a = advise_plan_add(pl, "%s", x->label);
		for (size_t k = 0; a && k < x->n_sets; k++)
			advise_add(a, override_copy(&x->sets[k]));
	}
	finding_free(f);
}

/* One relaxation of the table (relax.h) about pool p, workload w, queue q. */
static void plan_relax(struct plan *pl, const struct scenario *sc, const struct results *r,
		       relax_fn fn, int32_t p, int32_t w, int32_t q)
{
	struct finding f = {0};
	struct constraint c = relax_about(CONSTRAINT_KINDS, p, w, q);
	fn(sc, r, &c, &f);
	plan_from(pl, &f);
}

/* A queue that waits on admission in a cohort: each other queue of the
 * cohort that keeps GPUs to itself (a lending limit under its quota) lends
 * them all, before anyone's quota grows (Kueue's lendingLimit). */
static void plan_lending(struct plan *pl, const struct scenario *sc, const struct results *r)
{
	for (size_t f = 0; f < r->n_findings; f++) {
		const struct finding *fd = &r->findings[f];
		if (fd->kind != KIND_ADMISSION || fd->queue < 0 ||
		    !scenario_root_cohort(sc, (size_t)fd->queue))
			continue;
		const char *root = scenario_root_cohort(sc, (size_t)fd->queue);
		for (size_t q = 0; q < sc->n_queues; q++) {
			const char *other = scenario_root_cohort(sc, q);
			if ((int)q != fd->queue && other && !strcmp(other, root))
				plan_relax(pl, sc, r, relax_lending, -1, -1, (int32_t)q);
		}
	}
}

/* The rules a placement finding blames, one relaxed at a time, then all of
 * them together when there are several (whether or not the finding planned
 * some of them already). */
static void plan_rules(struct plan *pl, const struct scenario *sc, const struct results *r,
		       size_t w)
{
	plan_relax(pl, sc, r, relax_selector_fix, -1, (int32_t)w, -1);
	static const relax_fn each[] = {relax_selector_drop, relax_affinity, relax_gpu_spec,
					relax_taint, relax_spread};
	struct finding one = {0};
	struct constraint c = relax_about(CONSTRAINT_KINDS, -1, (int32_t)w, -1);
	for (size_t i = 0; i < sizeof each / sizeof *each; i++)
		each[i](sc, r, &c, &one);
	for (size_t i = 0; i < one.n_fixes; i++) {
		struct advise_row *a = advise_plan_add(pl, "%s", one.fixes[i].label);
		if (a)
			advise_add(a, override_copy(&one.fixes[i].sets[0]));
	}
	struct advise_row *all = one.n_fixes > 1 ? advise_plan_add(pl, "%s with every rule relaxed",
								   sc->workloads[w].name)
						 : NULL;
	for (size_t i = 0; all && i < one.n_fixes; i++)
		advise_add(all, override_copy(&one.fixes[i].sets[0]));
	finding_free(&one);
}

/* Every alternative a finding names, in the finding's order. */
static void plan_fixes(struct plan *pl, const struct results *r)
{
	for (size_t f = 0; f < r->n_findings; f++)
		for (size_t i = 0; i < r->findings[f].n_fixes; i++) {
			const struct finding_fix *x = &r->findings[f].fixes[i];
			struct advise_row *a = advise_plan_add(pl, "%s", x->label);
			for (size_t k = 0; a && k < x->n_sets; k++)
				advise_add(a, override_copy(&x->sets[k]));
		}
}

/* The table's relaxations of each finding that names its binding constraint
 * (diagnose_binds.c's: contention, priority, start-up, reclaim, MIG). */
static void plan_constraints(struct plan *pl, const struct scenario *sc, const struct results *r)
{
	for (size_t i = 0; i < r->n_findings; i++) {
		const struct finding *fd = &r->findings[i];
		if (fd->constraint < 0 || fd->constraint >= CONSTRAINT_KINDS)
			continue;
		struct finding f = {0};
		struct constraint c = relax_about((enum constraint_kind)fd->constraint, fd->pool,
						  fd->workload, fd->queue);
		relax_constraint(sc, r, &c, &f);
		plan_from(pl, &f);
	}
}

/* The binding constraints advise relaxes: the first ADVISE_BINDING of the
 * workloads that missed their goals (relax_binding), capacity left out
 * (only hardware relaxes it: advise sizes the pool). */
#define ADVISE_BINDING 3

static size_t binding(const struct scenario *sc, const struct results *r, struct constraint *out)
{
	struct constraint *g;
	size_t n = relax_binding(sc, r, &g), k = 0;
	for (size_t i = 0; i < n && k < ADVISE_BINDING; i++)
		if (g[i].kind != CONSTRAINT_CAPACITY && relax_table[g[i].kind].relax)
			out[k++] = g[i];
	free(g);
	return k;
}

/* The table's relaxations of the binding constraints, each on its own. */
static void plan_binding(struct plan *pl, const struct scenario *sc, const struct results *r)
{
	struct constraint c[ADVISE_BINDING];
	size_t n = binding(sc, r, c);
	for (size_t i = 0; i < n; i++) {
		struct finding f = {0};
		relax_constraint(sc, r, &c[i], &f);
		plan_from(pl, &f);
	}
}

struct plan advise_plan_pairs(const struct scenario *sc, const struct results *r)
{
	struct plan pl = {0};
	struct constraint c[ADVISE_BINDING];
	struct finding f[ADVISE_BINDING] = {{0}};
	size_t n = binding(sc, r, c);
	for (size_t i = 0; i < n; i++)
		relax_constraint(sc, r, &c[i], &f[i]);
	for (size_t i = 0; i < n; i++)
		for (size_t j = i + 1; j < n; j++) {
			if (!f[i].n_fixes || !f[j].n_fixes)
				continue;
			struct advise_row *a = advise_plan_add(&pl, "%s + %s", f[i].fixes[0].label,
							       f[j].fixes[0].label);
			for (size_t k = 0; a && k < f[i].fixes[0].n_sets; k++)
				advise_add(a, override_copy(&f[i].fixes[0].sets[k]));
			for (size_t k = 0; a && k < f[j].fixes[0].n_sets; k++)
				advise_add(a, override_copy(&f[j].fixes[0].sets[k]));
		}
	for (size_t i = 0; i < n; i++)
		finding_free(&f[i]);
	return pl;
}

struct plan advise_plan_alternatives(const struct scenario *sc, const struct results *r)
{
	struct plan pl = {0};
	plan_relax(&pl, sc, r, relax_inference, -1, -1, -1); /* a server's own settings
								 * before more of it */
	plan_relax(&pl, sc, r, relax_service, -1, -1, -1);   /* then where it serves */
	plan_lending(&pl, sc, r);                /* what an idle queue keeps before more quota */
	for (size_t p = 0; p < sc->n_pools; p++) /* idle holders apart, before sharing all */
		plan_relax(&pl, sc, r, relax_shared_pool, (int32_t)p, -1, -1);
	plan_fixes(&pl, r);
	plan_constraints(&pl, sc, r);
	plan_binding(&pl, sc, r); /* the binding constraints relaxed, before anything generic */
	for (size_t f = 0; f < r->n_findings; f++) {
		const struct finding *fd = &r->findings[f];
		int p = fd->pool, w = fd->workload;
		if (p >= 0 && fd->step == FINDING_ALLOCATION) {
			plan_relax(&pl, sc, r, relax_culling, p, -1, -1);
			plan_relax(&pl, sc, r, relax_replicas, p, -1, -1);
			plan_relax(&pl, sc, r, relax_partitions, p, -1, -1);
		}
		if (w >= 0 && fd->step == FINDING_PLACEMENT)
			plan_rules(&pl, sc, r, (size_t)w);
	}
	plan_relax(&pl, sc, r, relax_windows, -1, -1, -1);
	plan_relax(&pl, sc, r, relax_workload_windows, -1, -1, -1);
	plan_relax(&pl, sc, r, relax_quantization, -1, -1, -1);
	for (size_t f = 0; f < r->n_findings; f++) /* narrower weights, shared, where they
						    * did not fit */
		if (r->findings[f].step == FINDING_MEMORY && r->findings[f].pool >= 0)
			plan_relax(&pl, sc, r, relax_quant_sharing, r->findings[f].pool, -1, -1);
	return pl;
}
