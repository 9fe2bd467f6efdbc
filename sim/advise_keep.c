/*
 * advise_keep.c - what advise may not change (advise --keep).
 *
 * A taint that reserves nodes for a team, a quota in a contract, a selector
 * that keeps data in a region: a platform's rules are often policy, not
 * mistakes, and only the planner knows which.  A pattern is a --set path
 * whose segments are names or "*" ("pools.reserved.taints",
 * "workloads.*.tolerations", "queues"), checked against the scenario.  An
 * alternative that sets a path under a pattern, or above one (a whole pool),
 * is not run, and no search varies such a path.
 */
#include "advise_int.h"

#include <stdlib.h>
#include <string.h>

/* Whether pattern and path agree on every segment both have ("*" is any
 * one): the path is under the pattern, or the pattern under the path. */
static bool overlaps(const char *pattern, const char *path)
{
	while (*pattern && *path) {
		size_t p = strcspn(pattern, "."), k = strcspn(path, ".");
		bool any = p == 1 && *pattern == '*';
		if (!any && (p != k || strncmp(pattern, path, p)))
			return false;
		pattern += p + (pattern[p] == '.');
		path += k + (path[k] == '.');
	}
	return true;
}

bool advise_keeps(const struct advise_spec *sp, const char *path)
{
	for (size_t i = 0; i < sp->n_keep; i++)
		if (overlaps(sp->keep[i], path))
			return true;
	return false;
}

bool advise_sets_kept(const struct advise_spec *sp, const struct override *sets, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (advise_keeps(sp, sets[i].key))
			return true;
	return false;
}

size_t advise_drop_kept(const struct advise_spec *sp, struct plan *pl)
{
	size_t k = 0;
	for (size_t i = 0; i < pl->n; i++)
		if (advise_sets_kept(sp, pl->alts[i].sets, pl->alts[i].n_sets))
			advise_row_free(&pl->alts[i]);
		else
			pl->alts[k++] = pl->alts[i];
	size_t dropped = pl->n - k;
	pl->n = k;
	return dropped;
}

/* The name of item i of a list section, or NULL past its end. */
static const char *item_name(const struct scenario *sc, const char *section, size_t i)
{
	if (!strcmp(section, "pools"))
		return i < sc->n_pools ? sc->pools[i].name : NULL;
	if (!strcmp(section, "workloads"))
		return i < sc->n_workloads ? sc->workloads[i].name : NULL;
	if (!strcmp(section, "queues"))
		return i < sc->n_queues ? sc->queues[i].name : NULL;
	return i < sc->n_cohorts ? sc->cohorts[i].name : NULL;
}

/* Whether a list section has an item called name; names gets them all. */
static bool has_item(const struct scenario *sc, const char *section, const char *name,
		     struct gp_sbuf *names)
{
	bool found = false;
	const char *item;
	for (size_t i = 0; (item = item_name(sc, section, i)); i++) {
		found |= !strcmp(item, name);
		gp_sb_printf(names, "%s%s", i ? ", " : "", item);
	}
	return found;
}

#define KEEP_HINT                                                                      \
	"expected a --set path under pools, workloads, queues, cohorts or scheduler, " \
	"its segments names or *, like pools.reserved.taints or 'workloads.*.tolerations'"

int advise_keep_check(const struct scenario *sc, const char *pattern, struct gp_err *err)
{
	char seg[3][256] = {{0}};
	size_t n = 0;
	for (const char *p = pattern;; n++) {
		size_t len = strcspn(p, ".");
		if (!len || len >= sizeof seg[0])
			return gp_errorf(err, GP_EINPUT, "--keep %s: %s", pattern, KEEP_HINT);
		if (n < 3)
			memcpy(seg[n], p, len);
		if (!p[len])
			break;
		p += len + 1;
	}
	const char *section = seg[0];
	char known[512];
	bool list = !strcmp(section, "pools") || !strcmp(section, "workloads") ||
		    !strcmp(section, "queues") || !strcmp(section, "cohorts");
	if (!list && strcmp(section, "scheduler"))
		return gp_errorf(err, GP_EINPUT, "--keep %s: %s", pattern, KEEP_HINT);
	struct gp_sbuf names = {0};
	if (list && seg[1][0] && strcmp(seg[1], "*") && !has_item(sc, section, seg[1], &names)) {
		int rc = gp_errorf(err, GP_EINPUT,
				   "--keep %s: the scenario has no %.*s named %s; its %s: %s",
				   pattern, (int)strlen(section) - 1, section, seg[1], section,
				   names.s ? names.s : "none");
		free(names.s);
		return rc;
	}
	free(names.s);
	const char *field = list ? seg[2] : seg[1];
	if (field[0] && !scenario_format_key(section, field, known, sizeof known))
		return gp_errorf(err, GP_EINPUT,
				 "--keep %s: %s%.*s has no key %s; expected one of %s", pattern,
				 list ? "a " : "the ", (int)strlen(section) - list, section, field,
				 known);
	return GP_OK;
}
