/*
 * diagcheck.h - what the diagnosis property (test_breakers.c) and the
 * one-cause corpus (test_corpus.c) check of an advice: that its first
 * finding names a key, and that its recommendation meets every goal without
 * hardware.  advise runs in the test's process (advise_run), into a
 * database of its own.  Functions are static so each test file has its own.
 */
#ifndef GPUPLAN_TESTS_DIAGCHECK_H
#define GPUPLAN_TESTS_DIAGCHECK_H

#include "gpuplan/advise.h"
#include "gpuplan/store.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Whether finding f names key: the binding key it names (finding.key,
 * DIAG-CONTRACT.md) is it or a key under it.  A finding that names no key
 * yet (those the relaxation table's attribution has not reached) names it
 * when one of its fixes sets it, or when it leaves the relaxation to advise
 * (placement rules, a window) and the recommendation rec sets it. */
static bool diagcheck_names_key(const struct finding *f, const struct advise_row *rec,
				const char *key)
{
	size_t k = strlen(key);
	if (f->key)
		return !strncmp(f->key, key, k);
	for (size_t i = 0; i < f->n_fixes; i++)
		for (size_t j = 0; j < f->fixes[i].n_sets; j++)
			if (!strncmp(f->fixes[i].sets[j].key, key, k))
				return true;
	for (size_t j = 0; rec && j < rec->n_sets; j++)
		if (!strncmp(rec->sets[j].key, key, k))
			return true;
	return false;
}

/* Whether an advise row adds hardware: more nodes, a pool, a larger max. */
static bool diagcheck_adds_hardware(const struct advise_row *r)
{
	if (r->hardware)
		return true;
	for (size_t i = 0; i < r->n_sets; i++)
		if (!strcmp(r->sets[i].key, "pools.+") || !strcmp(r->sets[i].key, "pools") ||
		    strstr(r->sets[i].key, "autoscale.max") ||
		    strstr(r->sets[i].key, "gpus_per_node"))
			return true;
	return false;
}

/* advise on the scenario at path, into path.db (removed first). */
static void diagcheck_advise(const char *path, struct advice *a, struct store **st)
{
	char db[512];
	snprintf(db, sizeof db, "%s.db", path);
	unlink(db);
	struct gp_err err GP_ERR_SCOPE = {0};
	cr_assert_eq(store_open(db, st, &err), GP_OK, "%s", err.msg);
	struct advise_spec spec = {.scenario = path, .db = db};
	cr_assert_eq(advise_run(&spec, *st, NULL, NULL, a, &err), GP_OK, "%s: %s", path, err.msg);
}

/* The base run's row. */
static const struct advise_row *diagcheck_base(const struct advice *a)
{
	for (size_t i = 0; i < a->n; i++)
		if (a->rows[i].seq == 0)
			return &a->rows[i];
	return NULL;
}

/* The advice in words, for a failure's message (malloc'd). */
static char *diagcheck_text(const struct advice *a)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	advise_write(f, a);
	fclose(f);
	return buf;
}

/* Why the advice a of a scenario broken at one key is wrong, or NULL: it
 * must miss a goal as given, its first finding be of one of kinds (NULL
 * ends them) and name key, and its recommendation meet every goal without
 * hardware.  *kind: the first finding's kind. */
static const char *diagcheck_why(const struct advice *a, const char *const *kinds, size_t n_kinds,
				 const char *key, const char **kind)
{
	const struct advise_row *base = diagcheck_base(a);
	*kind = "-";
	if (!base || base->meets)
		return "no workload misses its goal as given";
	if (!a->n_findings)
		return "no finding";
	const struct finding *f = &a->findings[0];
	/* A finding of its own for a binding constraint (relax.h, kind binds)
	 * shows as the constraint's kind: "window", "contention", "startup". */
	*kind = f->kind == KIND_BINDS && f->constraint >= 0
			? constraint_kind_name((enum constraint_kind)f->constraint)
			: finding_kind_name((enum finding_kind)f->kind);
	bool kind_ok = false;
	for (size_t i = 0; i < n_kinds && kinds[i]; i++)
		kind_ok |= !strcmp(*kind, kinds[i]);
	if (!kind_ok)
		return "the first finding is not of the kind the cause shows as";
	if (!diagcheck_names_key(f, &a->rows[0], key))
		return "the first finding does not name the broken key";
	if (!a->rows[0].meets)
		return "nothing advise ran meets every goal";
	if (diagcheck_adds_hardware(&a->rows[0]))
		return "the recommendation adds hardware";
	return NULL;
}

#endif
