/*
 * scenario_values.c - the loader's messages and its readers of scalars, maps and lists:
 * each reads one value, checks it and reports it at its location, naming what
 * was expected.
 */
#include "gpuplan/scenario.h"

#include <ctype.h>
#include <string.h>

#include "gpuplan/units.h"

#include "scenario_int.h"

/* --- messages ------------------------------------------------------------ */

/* What v is, empty or not: "expected a list of days, got a list" says nothing
 * of days: [] (it is the emptiness that is wrong). */
static const char *kind_text(const struct ynode *v)
{
	if (v->kind == YNODE_MAP)
		return v->n ? "a map" : "an empty map";
	return v->kind != YNODE_SEQ ? "a scalar" : v->n ? "a list" : "an empty list";
}

/* "invalid WHAT 'TEXT'; expected HINT", or "..., got a list" for the wrong kind
 * (or an empty list where items are needed). */
int ld_bad_value(struct loader *ld, const struct ynode *v, const char *what, const char *hint)
{
	if (v->kind != YNODE_SCALAR)
		return gp_located(ld->err, v->loc, "invalid %s: expected %s, got %s", what, hint,
				  kind_text(v));
	return gp_located(ld->err, v->loc, "invalid %s '%s'; expected %s", what, v->value, hint);
}

/* "a, b or c" into buf. */
const char *ld_join(char *buf, size_t size, const char *const *words, size_t n,
		    const char *last_sep)
{
	size_t used = 0;
	buf[0] = '\0';
	for (size_t i = 0; i < n && used < size; i++) {
		const char *sep = i == 0 ? "" : i + 1 == n ? last_sep : ", ";
		used += (size_t)snprintf(buf + used, size - used, "%s%s", sep, words[i]);
	}
	return buf;
}

/* An unknown word among names: suggest the closest, else list them all. */
int ld_unknown_word(struct loader *ld, struct srcloc loc, const char *what, const char *word,
		    const char *const *names, size_t n)
{
	const char *close = ytree_suggest(word, names, n);
	if (close)
		return gp_located(ld->err, loc, "unknown %s '%s'; did you mean '%s'?", what, word,
				  close);
	char list[512];
	return gp_located(ld->err, loc, "unknown %s '%s'; expected %s", what, word,
			  ld_join(list, sizeof list, names, n, " or "));
}

int ld_require(struct loader *ld, const struct ynode *map, const char *key, const char *what,
	       const char *hint)
{
	if (ynode_get(map, key))
		return GP_OK;
	return gp_located(ld->err, map->loc, "missing key '%s' in %s; expected %s", key, what,
			  hint);
}

int ld_require_all(struct loader *ld, const struct ynode *map, const char *what,
		   const struct ld_need *need, size_t n)
{
	int rc = GP_OK;
	for (size_t i = 0; i < n && !rc; i++)
		rc = ld_require(ld, map, need[i].key, what, need[i].hint);
	return rc;
}

/* --- scalars --------------------------------------------------------------- */

/* YAML's null: an unquoted empty value, ~ or null. */
bool ld_is_null(const struct ynode *v)
{
	return v->kind == YNODE_SCALAR && !v->quoted &&
	       (!v->value[0] || !strcmp(v->value, "~") || !strcmp(v->value, "null") ||
		!strcmp(v->value, "Null") || !strcmp(v->value, "NULL"));
}

/* Any scalar as text (null is ""), for label values and the like. */
int ld_get_text(struct loader *ld, const struct ynode *v, const char *what, char **out)
{
	if (v->kind != YNODE_SCALAR)
		return ld_bad_value(ld, v, what, "a string");
	*out = gp_xstrdup(ld_is_null(v) ? "" : v->value);
	return GP_OK;
}

/* A non-empty string. */
int ld_get_string(struct loader *ld, const struct ynode *v, const char *what, const char *hint,
		  char **out)
{
	if (v->kind != YNODE_SCALAR || ld_is_null(v))
		return ld_bad_value(ld, v, what, hint);
	*out = gp_xstrdup(v->value);
	return GP_OK;
}

static bool name_chars(const char *s, bool dots)
{
	if (!*s)
		return false;
	for (; *s; s++) {
		char c = *s;
		bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
			  (c >= '0' && c <= '9') || c == '_' || c == '-' || (dots && c == '.');
		if (!ok)
			return false;
	}
	return true;
}

/* A name becomes a file name, a metric scope and part of --set paths: at most
 * SCENARIO_MAX_NAME characters, a Kubernetes object name's limit. */
static int check_name_length(struct loader *ld, const struct ynode *v, const char *what)
{
	size_t n = strlen(v->value);
	if (n > SCENARIO_MAX_NAME)
		return gp_located(ld->err, v->loc, "%s of %zu characters; expected at most %d",
				  what, n, SCENARIO_MAX_NAME);
	return GP_OK;
}

bool scenario_name_ok(const char *name)
{
	return name_chars(name, true) && strlen(name) <= SCENARIO_MAX_NAME;
}

bool scenario_item_name_ok(const char *name)
{
	return name_chars(name, false) && strlen(name) <= SCENARIO_MAX_NAME &&
	       strcmp(name, "all") && strcmp(name, "__idle__");
}

int ld_get_scenario_name(struct loader *ld, const struct ynode *v, char **out)
{
	if (v->kind != YNODE_SCALAR || ld_is_null(v) || !name_chars(v->value, true))
		return ld_bad_value(ld, v, "name", SCENARIO_NAME_HINT);
	if (check_name_length(ld, v, "a name"))
		return GP_EINPUT;
	*out = gp_xstrdup(v->value);
	return GP_OK;
}

/* A pool, workload or queue name: it appears in --set paths (so no dots) and
 * as a metric scope (so not the scope of the whole run). */
int ld_get_item_name(struct loader *ld, const struct ynode *v, const char *what, char **out)
{
	if (v->kind != YNODE_SCALAR || ld_is_null(v) || !name_chars(v->value, false))
		return ld_bad_value(ld, v, what, SCENARIO_ITEM_NAME_HINT);
	if (!strcmp(v->value, "all") || !strcmp(v->value, "__idle__"))
		return gp_located(
			ld->err, v->loc,
			"%s '%s' is reserved for whole-run results; expected another name", what,
			v->value);
	if (check_name_length(ld, v, what))
		return GP_EINPUT;
	*out = gp_xstrdup(v->value);
	return GP_OK;
}

int ld_get_int(struct loader *ld, const struct ynode *v, const char *what, int64_t lo, int64_t hi,
	       int64_t *out)
{
	char hint[96];
	/* No bound is left out: 18446744073709551615 is a whole number >= 0. */
	snprintf(hint, sizeof hint, "a whole number from %lld to %lld%s", (long long)lo,
		 (long long)hi, hi == INT64_MAX ? " (2^63 - 1)" : "");
	if (v->kind != YNODE_SCALAR || units_integer(v->value, out) || *out < lo || *out > hi)
		return ld_bad_value(ld, v, what, hint);
	return GP_OK;
}

/* A number >= 0 (cores, prices). */
int ld_get_amount(struct loader *ld, const struct ynode *v, const char *what, const char *hint,
		  double *out)
{
	if (v->kind != YNODE_SCALAR || units_number(v->value, out) || *out < 0)
		return ld_bad_value(ld, v, what, hint);
	return GP_OK;
}

int ld_get_cores(struct loader *ld, const struct ynode *v, const char *what, const char *hint,
		 double *out)
{
	if (v->kind != YNODE_SCALAR)
		return ld_bad_value(ld, v, what, hint);
	size_t n = strlen(v->value);
	if (n < 2 || v->value[n - 1] != 'm') /* a plain number of cores */
		return ld_get_amount(ld, v, what, hint, out);
	char milli[64]; /* Kubernetes' millicores: 500m, 8000m */
	if (n >= sizeof milli)
		return ld_bad_value(ld, v, what, hint);
	snprintf(milli, sizeof milli, "%.*s", (int)(n - 1), v->value);
	if (units_number(milli, out) || *out < 0)
		return ld_bad_value(ld, v, what, hint);
	*out /= 1000;
	return GP_OK;
}

int ld_get_positive(struct loader *ld, const struct ynode *v, const char *what, const char *hint,
		    double *out)
{
	if (v->kind != YNODE_SCALAR || units_number(v->value, out) || !(*out > 0))
		return ld_bad_value(ld, v, what, hint);
	return GP_OK;
}

int ld_get_fraction(struct loader *ld, const struct ynode *v, const char *what, double *out)
{
	if (v->kind != YNODE_SCALAR || units_number(v->value, out) || !(*out > 0 && *out <= 1))
		return ld_bad_value(ld, v, what, "a fraction in (0, 1] like 0.9");
	return GP_OK;
}

int ld_get_duration(struct loader *ld, const struct ynode *v, const char *what, bool positive,
		    sim_time *out)
{
	if (v->kind != YNODE_SCALAR || units_duration(v->value, out))
		return ld_bad_value(ld, v, what, UNITS_HINT_DURATION);
	if (positive && *out <= 0)
		return ld_bad_value(ld, v, what, "a duration greater than 0, like 5m");
	return GP_OK;
}

/* A bare number is bytes, as in Kubernetes; one under a MiB is refused:
 * "vram: 60" means 60 GiB, and the run would go on with a pod of no memory. */
int ld_get_size(struct loader *ld, const struct ynode *v, const char *what, double *out)
{
	if (v->kind != YNODE_SCALAR || units_size(v->value, out) || *out < 0)
		return ld_bad_value(ld, v, what, UNITS_HINT_SIZE);
	size_t n = strlen(v->value);
	if (*out > 0 && *out < 1048576 && n && isdigit((unsigned char)v->value[n - 1]))
		return gp_located(
			ld->err, v->loc,
			"invalid %s '%s': a bare number is bytes, and %s "
			"bytes is under a MiB; expected %s (write %sB if bytes are meant)",
			what, v->value, v->value, UNITS_HINT_SIZE, v->value);
	return GP_OK;
}

int ld_get_bool(struct loader *ld, const struct ynode *v, const char *what, bool *out)
{
	if (v->kind != YNODE_SCALAR || units_bool(v->value, out))
		return ld_bad_value(ld, v, what, "true or false");
	return GP_OK;
}

/* A clock time at or after the start. */
int ld_get_clock(struct loader *ld, const struct ynode *v, const char *what, sim_time *out)
{
	if (v->kind != YNODE_SCALAR || units_clock(v->value, ld->sc->start_epoch, out))
		return ld_bad_value(ld, v, what, UNITS_HINT_CLOCK);
	if (*out < 0) {
		char start[32];
		units_format_rfc3339(ld->sc->start_epoch, start, sizeof start);
		return gp_located(ld->err, v->loc,
				  "%s '%s' is before the scenario start %s; expected a later time",
				  what, v->value, start);
	}
	return GP_OK;
}

/* One of names (exact spelling; the hint forgives case). */
int ld_get_enum(struct loader *ld, const struct ynode *v, const char *what,
		const char *const *names, size_t n, int *out)
{
	char list[256];
	if (v->kind != YNODE_SCALAR)
		return ld_bad_value(ld, v, what, ld_join(list, sizeof list, names, n, " or "));
	for (size_t i = 0; i < n; i++) {
		if (!strcmp(v->value, names[i])) {
			*out = (int)i;
			return GP_OK;
		}
	}
	return ld_unknown_word(ld, v->loc, what, v->value, names, n);
}

int ld_get_gpu_type(struct loader *ld, const struct ynode *v, const char *what,
		    const struct gpu_type **out)
{
	if (v->kind != YNODE_SCALAR || ld_is_null(v))
		return ld_bad_value(ld, v, what, "a catalog GPU type like A100-80GB");
	*out = catalog_gpu(v->value);
	if (*out)
		return GP_OK;
	size_t n = catalog_gpu_count();
	const char **names = gp_xcalloc(n, sizeof *names);
	for (size_t i = 0; i < n; i++)
		names[i] = catalog_gpu_at(i)->name;
	int rc = ld_unknown_word(ld, v->loc, "GPU type", v->value, names, n);
	free(names);
	return rc;
}

/* The name part of a Kubernetes qualified name: 1 to 63 letters, digits,
 * '-', '_' or '.', starting and ending with a letter or digit. */
static bool label_name_ok(const char *s, size_t n)
{
	if (n == 0 || n > 63 || !isalnum((unsigned char)s[0]) || !isalnum((unsigned char)s[n - 1]))
		return false;
	for (size_t i = 0; i < n; i++)
		if (!isalnum((unsigned char)s[i]) && s[i] != '-' && s[i] != '_' && s[i] != '.')
			return false;
	return true;
}

/* A DNS subdomain (a key's prefix, IsDNS1123Subdomain): up to 253 characters,
 * dot-separated parts of lower-case letters, digits and '-', each starting
 * and ending with a letter or digit. */
static bool dns_subdomain_ok(const char *s, size_t n)
{
	if (n == 0 || n > 253)
		return false;
	for (size_t i = 0; i < n; i++) {
		bool edge = i == 0 || s[i - 1] == '.' || i + 1 == n || s[i + 1] == '.';
		if (s[i] == '.' ? edge
				: !(islower((unsigned char)s[i]) || isdigit((unsigned char)s[i]) ||
				    (s[i] == '-' && !edge)))
			return false;
	}
	return true;
}

bool scenario_dns_subdomain_ok(const char *name) { return dns_subdomain_ok(name, strlen(name)); }

bool scenario_dns_label_ok(const char *name)
{
	size_t n = strlen(name);
	return n <= 63 && !strchr(name, '.') && dns_subdomain_ok(name, n);
}

bool scenario_label_key_ok(const char *key)
{
	const char *slash = strchr(key, '/');
	return slash ? dns_subdomain_ok(key, (size_t)(slash - key)) &&
			       label_name_ok(slash + 1, strlen(slash + 1))
		     : label_name_ok(key, strlen(key));
}

bool scenario_label_value_ok(const char *value)
{
	return !value[0] || label_name_ok(value, strlen(value));
}

/* A label, taint or toleration key, as the Kubernetes API server checks it:
 * the scheduler could never match a key the API would have refused. */
int ld_check_label_key(struct loader *ld, struct srcloc loc, const char *what, const char *where,
		       const char *key)
{
	if (scenario_label_key_ok(key))
		return GP_OK;
	return gp_located(ld->err, loc, "invalid %s '%s' in %s; expected " SCENARIO_LABEL_KEY_HINT,
			  what, key, where);
}

/* A map of string to string (labels, node selectors). */
int ld_get_kv_map(struct loader *ld, const struct ynode *v, const char *what, struct kv **out,
		  size_t *n)
{
	if (v->kind != YNODE_MAP)
		return ld_bad_value(ld, v, what,
				    "a map like {nvidia.com/gpu.product: NVIDIA-A100-SXM4-80GB}");
	*out = gp_xcalloc(v->n, sizeof **out);
	*n = v->n;
	for (size_t i = 0; i < v->n; i++) {
		if (!v->keys[i][0])
			return gp_located(ld->err, v->key_locs[i],
					  "empty key in %s; expected a label key", what);
		int rc = ld_check_label_key(ld, v->key_locs[i], "label key", what, v->keys[i]);
		if (rc)
			return rc;
		(*out)[i].key = gp_xstrdup(v->keys[i]);
		rc = ld_get_text(ld, v->items[i], what, &(*out)[i].value);
		if (rc)
			return rc;
		if (!scenario_label_value_ok((*out)[i].value))
			return gp_located(
				ld->err, v->items[i]->loc,
				"invalid label value '%s' in %s; expected " SCENARIO_LABEL_VALUE_HINT,
				(*out)[i].value, what);
	}
	return GP_OK;
}

/* --- maps and lists ------------------------------------------------------ */

static const struct key_rule *find_rule(const struct key_rule *rules, size_t n, const char *key)
{
	for (size_t i = 0; i < n; i++)
		if (rules[i].key[0] == key[0] && !strcmp(rules[i].key, key))
			return &rules[i];
	return NULL;
}

static int unknown_key(struct loader *ld, const struct ynode *map, size_t i, const char *what,
		       const struct key_rule *rules, size_t n)
{
	const char *names[64] = {NULL};
	size_t k = 0;
	for (size_t r = 0; r < n && k < N_OF(names); r++)
		names[k++] = rules[r].key;
	const char *close = ytree_closest(map->keys[i], names, k);
	if (close)
		return gp_located(ld->err, map->key_locs[i],
				  "unknown key '%s' in %s; did you mean '%s'?", map->keys[i], what,
				  close);
	/* Without a close match, list what is simulated today. */
	k = 0;
	for (size_t r = 0; r < n && k < N_OF(names); r++)
		if (rules[r].fn)
			names[k++] = rules[r].key;
	char list[512];
	return gp_located(ld->err, map->key_locs[i], "unknown key '%s' in %s; expected one of %s",
			  map->keys[i], what, ld_join(list, sizeof list, names, k, ", "));
}

/* Checks map against rules and calls the handler of each key with obj. */
int ld_walk_map(struct loader *ld, const struct ynode *map, const char *what, const char *hint,
		const struct key_rule *rules, size_t n, void *obj)
{
	if (map->kind != YNODE_MAP)
		return ld_bad_value(ld, map, what, hint);
	for (size_t i = 0; i < map->n; i++) {
		const struct key_rule *r = find_rule(rules, n, map->keys[i]);
		if (!r)
			return unknown_key(ld, map, i, what, rules, n);
		const struct ynode *v = map->items[i];
		if (!r->fn) {
			/* An empty list or map asks for nothing ("gpu_types: []"). */
			if (v->kind != YNODE_SCALAR && v->n == 0)
				continue;
			return gp_located(ld->err, map->key_locs[i], "%s is not supported yet",
					  map->keys[i]);
		}
		int rc = r->fn(ld, v, obj);
		if (rc)
			return rc;
	}
	return GP_OK;
}

/* For a key that is valid only with some other setting: "KEY does not apply to WHAT". */
int ld_only_keys(struct loader *ld, const struct ynode *map, const char *const *allowed, size_t n,
		 const char *what)
{
	for (size_t i = 0; i < map->n; i++) {
		bool ok = false;
		for (size_t k = 0; k < n && allowed[k]; k++)
			ok = ok || !strcmp(map->keys[i], allowed[k]);
		if (!ok) {
			char list[128];
			size_t m = 0;
			while (m < n && allowed[m])
				m++;
			return gp_located(ld->err, map->key_locs[i],
					  "%s does not apply to %s; expected only %s", map->keys[i],
					  what, ld_join(list, sizeof list, allowed, m, " and "));
		}
	}
	return GP_OK;
}

int ld_expect_list(struct loader *ld, const struct ynode *v, const char *what, const char *hint)
{
	return v->kind == YNODE_SEQ ? GP_OK : ld_bad_value(ld, v, what, hint);
}

int ld_duplicate(struct loader *ld, const struct ynode *item, const char *what, const char *name,
		 struct srcloc first)
{
	const struct ynode *v = ynode_get(item, "name");
	return gp_located(ld->err, v ? v->loc : item->loc,
			  "duplicate %s name '%s' (first defined at line %d, column %d); expected "
			  "unique names",
			  what, name, first.line, first.col);
}

int ld_get_rate(struct loader *ld, const struct ynode *v, const char *what, double *per_second)
{
	if (v->kind == YNODE_SCALAR &&
	    (!units_rate(v->value, per_second) || !units_number(v->value, per_second)) &&
	    *per_second > 0 && *per_second <= 1e9)
		return GP_OK;
	return ld_bad_value(ld, v, what, UNITS_HINT_RATE ", or a number per second > 0");
}
