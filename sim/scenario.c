/*
 * scenario.c - loading and validating scenarios (see scenario.h, DESIGN.md
 * section 4).
 *
 * Each section of the format is a table of key rules.  One table drives the
 * dispatch, the "did you mean" hint for an unknown key and the refusal of
 * keys that DESIGN.md defines but the simulation does not model yet (a rule
 * without a handler), so that no key is ever silently ignored.  Sections are
 * read in dependency order (pools and queues before the workloads that refer
 * to them); each handler checks one value and reports it at its location,
 * naming what was expected.
 */
#include "gpuplan/scenario.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpuplan/footprint.h"
#include "gpuplan/sha256.h"
#include "gpuplan/trace.h"
#include "gpuplan/units.h"
#include "gpuplan/ytree.h"

#define N_OF(a) (sizeof(a) / sizeof *(a))

#define DEFAULT_START_EPOCH INT64_C(1767225600) /* 2026-01-01T00:00:00Z */
#define DEFAULT_STEP (5 * SIM_MINUTE)
#define DEFAULT_QUEUE "default"
#define MAX_NODES_PER_POOL 1000000
#define MAX_GPUS_PER_NODE 64

/* The state of one load: where errors go and what later sections need. */
struct loader {
	struct scenario *sc;
	struct gp_err *err;
	int64_t max_jobs;
	int32_t widest_node; /* largest gpus_per_node of any pool */
};

typedef int (*key_fn)(struct loader *ld, const struct ynode *v, void *obj);

struct key_rule {
	const char *key;
	key_fn fn; /* NULL: defined by DESIGN.md, not simulated yet */
};

/* --- messages ------------------------------------------------------------ */

static const char *kind_text(const struct ynode *v)
{
	return v->kind == YNODE_MAP ? "a map" : v->kind == YNODE_SEQ ? "a list" : "a scalar";
}

/* "invalid WHAT 'TEXT'; expected HINT", or "..., got a list" for the wrong kind. */
static int bad_value(struct loader *ld, const struct ynode *v, const char *what, const char *hint)
{
	if (v->kind != YNODE_SCALAR)
		return gp_located(ld->err, v->loc, "invalid %s: expected %s, got %s", what, hint,
				  kind_text(v));
	return gp_located(ld->err, v->loc, "invalid %s '%s'; expected %s", what, v->value, hint);
}

/* "a, b or c" into buf. */
static const char *join(char *buf, size_t size, const char *const *words, size_t n,
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
static int unknown_word(struct loader *ld, struct srcloc loc, const char *what, const char *word,
			const char *const *names, size_t n)
{
	const char *close = ytree_closest(word, names, n);
	if (close)
		return gp_located(ld->err, loc, "unknown %s '%s'; did you mean '%s'?", what, word,
				  close);
	char list[512];
	return gp_located(ld->err, loc, "unknown %s '%s'; expected %s", what, word,
			  join(list, sizeof list, names, n, " or "));
}

static int require(struct loader *ld, const struct ynode *map, const char *key, const char *what,
		   const char *hint)
{
	if (ynode_get(map, key))
		return GP_OK;
	return gp_located(ld->err, map->loc, "missing key '%s' in %s; expected %s", key, what,
			  hint);
}

/* --- scalars --------------------------------------------------------------- */

/* YAML's null: an unquoted empty value, ~ or null. */
static bool is_null(const struct ynode *v)
{
	return v->kind == YNODE_SCALAR && !v->quoted &&
	       (!v->value[0] || !strcmp(v->value, "~") || !strcmp(v->value, "null") ||
		!strcmp(v->value, "Null") || !strcmp(v->value, "NULL"));
}

/* Any scalar as text (null is ""), for label values and the like. */
static int get_text(struct loader *ld, const struct ynode *v, const char *what, char **out)
{
	if (v->kind != YNODE_SCALAR)
		return bad_value(ld, v, what, "a string");
	*out = gp_xstrdup(is_null(v) ? "" : v->value);
	return GP_OK;
}

/* A non-empty string. */
static int get_string(struct loader *ld, const struct ynode *v, const char *what, const char *hint,
		      char **out)
{
	if (v->kind != YNODE_SCALAR || is_null(v))
		return bad_value(ld, v, what, hint);
	*out = gp_xstrdup(v->value);
	return GP_OK;
}

static bool name_chars(const char *s, bool dots)
{
	for (; *s; s++) {
		char c = *s;
		bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
			  (c >= '0' && c <= '9') || c == '_' || c == '-' || (dots && c == '.');
		if (!ok)
			return false;
	}
	return true;
}

static int get_scenario_name(struct loader *ld, const struct ynode *v, char **out)
{
	if (v->kind != YNODE_SCALAR || is_null(v) || !name_chars(v->value, true))
		return bad_value(ld, v, "name",
				 "letters, digits, '.', '_' or '-', like eval-window");
	*out = gp_xstrdup(v->value);
	return GP_OK;
}

/* A pool, workload or queue name: it appears in --set paths (so no dots) and
 * as a metric scope (so not the scope of the whole run). */
static int get_item_name(struct loader *ld, const struct ynode *v, const char *what, char **out)
{
	if (v->kind != YNODE_SCALAR || is_null(v) || !name_chars(v->value, false))
		return bad_value(ld, v, what, "letters, digits, '_' or '-', like batch");
	if (!strcmp(v->value, "all") || !strcmp(v->value, "__idle__"))
		return gp_located(
			ld->err, v->loc,
			"%s '%s' is reserved for whole-run results; expected another name", what,
			v->value);
	*out = gp_xstrdup(v->value);
	return GP_OK;
}

static int get_int(struct loader *ld, const struct ynode *v, const char *what, int64_t lo,
		   int64_t hi, int64_t *out)
{
	char hint[96];
	if (hi == INT64_MAX)
		snprintf(hint, sizeof hint, "a whole number >= %lld", (long long)lo);
	else
		snprintf(hint, sizeof hint, "a whole number from %lld to %lld", (long long)lo,
			 (long long)hi);
	if (v->kind != YNODE_SCALAR || units_integer(v->value, out) || *out < lo || *out > hi)
		return bad_value(ld, v, what, hint);
	return GP_OK;
}

/* A number >= 0 (cores, prices). */
static int get_amount(struct loader *ld, const struct ynode *v, const char *what, const char *hint,
		      double *out)
{
	if (v->kind != YNODE_SCALAR || units_number(v->value, out) || *out < 0)
		return bad_value(ld, v, what, hint);
	return GP_OK;
}

static int get_positive(struct loader *ld, const struct ynode *v, const char *what,
			const char *hint, double *out)
{
	if (v->kind != YNODE_SCALAR || units_number(v->value, out) || !(*out > 0))
		return bad_value(ld, v, what, hint);
	return GP_OK;
}

static int get_fraction(struct loader *ld, const struct ynode *v, const char *what, double *out)
{
	if (v->kind != YNODE_SCALAR || units_number(v->value, out) || !(*out > 0 && *out <= 1))
		return bad_value(ld, v, what, "a fraction in (0, 1] like 0.9");
	return GP_OK;
}

static int get_duration(struct loader *ld, const struct ynode *v, const char *what, bool positive,
			sim_time *out)
{
	if (v->kind != YNODE_SCALAR || units_duration(v->value, out))
		return bad_value(ld, v, what, UNITS_HINT_DURATION);
	if (positive && *out <= 0)
		return bad_value(ld, v, what, "a duration greater than 0, like 5m");
	return GP_OK;
}

static int get_size(struct loader *ld, const struct ynode *v, const char *what, double *out)
{
	if (v->kind != YNODE_SCALAR || units_size(v->value, out) || *out < 0)
		return bad_value(ld, v, what, UNITS_HINT_SIZE);
	return GP_OK;
}

static int get_bool(struct loader *ld, const struct ynode *v, const char *what, bool *out)
{
	if (v->kind != YNODE_SCALAR || units_bool(v->value, out))
		return bad_value(ld, v, what, "true or false");
	return GP_OK;
}

/* A clock time at or after the start. */
static int get_clock(struct loader *ld, const struct ynode *v, const char *what, sim_time *out)
{
	if (v->kind != YNODE_SCALAR || units_clock(v->value, ld->sc->start_epoch, out))
		return bad_value(ld, v, what, UNITS_HINT_CLOCK);
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
static int get_enum(struct loader *ld, const struct ynode *v, const char *what,
		    const char *const *names, size_t n, int *out)
{
	char list[256];
	if (v->kind != YNODE_SCALAR)
		return bad_value(ld, v, what, join(list, sizeof list, names, n, " or "));
	for (size_t i = 0; i < n; i++) {
		if (!strcmp(v->value, names[i])) {
			*out = (int)i;
			return GP_OK;
		}
	}
	return unknown_word(ld, v->loc, what, v->value, names, n);
}

static int get_gpu_type(struct loader *ld, const struct ynode *v, const char *what,
			const struct gpu_type **out)
{
	if (v->kind != YNODE_SCALAR || is_null(v))
		return bad_value(ld, v, what, "a catalog GPU type like A100-80GB");
	*out = catalog_gpu(v->value);
	if (*out)
		return GP_OK;
	size_t n = catalog_gpu_count();
	const char **names = gp_xcalloc(n, sizeof *names);
	for (size_t i = 0; i < n; i++)
		names[i] = catalog_gpu_at(i)->name;
	int rc = unknown_word(ld, v->loc, "GPU type", v->value, names, n);
	free(names);
	return rc;
}

/* A map of string to string (labels, node selectors). */
static int get_kv_map(struct loader *ld, const struct ynode *v, const char *what, struct kv **out,
		      size_t *n)
{
	if (v->kind != YNODE_MAP)
		return bad_value(ld, v, what,
				 "a map like {nvidia.com/gpu.product: NVIDIA-A100-SXM4-80GB}");
	*out = gp_xcalloc(v->n, sizeof **out);
	*n = v->n;
	for (size_t i = 0; i < v->n; i++) {
		if (!v->keys[i][0])
			return gp_located(ld->err, v->key_locs[i],
					  "empty key in %s; expected a label key", what);
		(*out)[i].key = gp_xstrdup(v->keys[i]);
		int rc = get_text(ld, v->items[i], what, &(*out)[i].value);
		if (rc)
			return rc;
	}
	return GP_OK;
}

/* --- maps and lists ------------------------------------------------------ */

static const struct key_rule *find_rule(const struct key_rule *rules, size_t n, const char *key)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(rules[i].key, key))
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
			  map->keys[i], what, join(list, sizeof list, names, k, ", "));
}

/* Checks map against rules and calls the handler of each key with obj. */
static int walk_map(struct loader *ld, const struct ynode *map, const char *what, const char *hint,
		    const struct key_rule *rules, size_t n, void *obj)
{
	if (map->kind != YNODE_MAP)
		return bad_value(ld, map, what, hint);
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
static int only_keys(struct loader *ld, const struct ynode *map, const char *const *allowed,
		     size_t n, const char *what)
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
					  what, join(list, sizeof list, allowed, m, " and "));
		}
	}
	return GP_OK;
}

static int expect_list(struct loader *ld, const struct ynode *v, const char *what, const char *hint)
{
	return v->kind == YNODE_SEQ ? GP_OK : bad_value(ld, v, what, hint);
}

static int duplicate(struct loader *ld, const struct ynode *item, const char *what,
		     const char *name, struct srcloc first)
{
	const struct ynode *v = ynode_get(item, "name");
	return gp_located(ld->err, v ? v->loc : item->loc,
			  "duplicate %s name '%s' (first defined at line %d, column %d); expected "
			  "unique names",
			  what, name, first.line, first.col);
}

/* --- pools --------------------------------------------------------------- */

#define POOL_HINT "a map like {name: batch, nodes: 1, gpu: A100-80GB, gpus_per_node: 4}"
#define WINDOW_HINT "a map like {from: \"12:00\", to: \"17:00\"}"
#define TIME_OF_DAY_HINT "a time of day like \"12:00\" or \"17:30\""

static const char *const effect_names[] = {"NoSchedule", "PreferNoSchedule", "NoExecute"};

static int taint_key(struct loader *ld, const struct ynode *v, void *obj)
{
	return get_string(ld, v, "taint key", "a label key like dedicated",
			  &((struct taint *)obj)->key);
}

static int taint_value(struct loader *ld, const struct ynode *v, void *obj)
{
	return get_text(ld, v, "taint value", &((struct taint *)obj)->value);
}

static int taint_effect(struct loader *ld, const struct ynode *v, void *obj)
{
	int e = 0;
	int rc = get_enum(ld, v, "taint effect", effect_names, N_OF(effect_names), &e);
	((struct taint *)obj)->effect = (enum taint_effect)e;
	return rc;
}

static const struct key_rule taint_rules[] = {
	{"key", taint_key}, {"value", taint_value}, {"effect", taint_effect}};

static int pool_taints(struct loader *ld, const struct ynode *v, void *obj)
{
	struct pool_spec *p = obj;
	int rc = expect_list(ld, v, "taints", "a list like [{key: dedicated, effect: NoSchedule}]");
	if (rc)
		return rc;
	p->taints = gp_xcalloc(v->n, sizeof *p->taints);
	p->n_taints = v->n;
	for (size_t i = 0; i < v->n && !rc; i++) {
		const struct ynode *item = v->items[i];
		struct taint *t = &p->taints[i];
		rc = walk_map(ld, item, "taint",
			      "a map like {key: dedicated, value: batch, effect: NoSchedule}",
			      taint_rules, N_OF(taint_rules), t);
		if (!rc)
			rc = require(ld, item, "key", "taint", "a label key like dedicated");
		if (!rc)
			rc = require(ld, item, "effect", "taint",
				     "NoSchedule, PreferNoSchedule or NoExecute");
		if (!rc && !t->value)
			t->value = gp_xstrdup("");
	}
	return rc;
}

static int window_time(struct loader *ld, const struct ynode *v, const char *what, int32_t *out)
{
	if (v->kind != YNODE_SCALAR || units_time_of_day(v->value, out))
		return bad_value(ld, v, what, TIME_OF_DAY_HINT);
	return GP_OK;
}

static int window_from(struct loader *ld, const struct ynode *v, void *obj)
{
	struct window *w = obj;
	int rc = window_time(ld, v, "window from", &w->from);
	if (!rc && w->from == 86400)
		return bad_value(ld, v, "window from", "a time of day before \"24:00\"");
	return rc;
}

static int window_to(struct loader *ld, const struct ynode *v, void *obj)
{
	return window_time(ld, v, "window to", &((struct window *)obj)->to);
}

static const char *const day_names[] = {"mon",      "tue",    "wed",      "thu",     "fri",
					"sat",      "sun",    "monday",   "tuesday", "wednesday",
					"thursday", "friday", "saturday", "sunday"};

static int get_day(struct loader *ld, const struct ynode *v, int *day)
{
	char lower[16] = "";
	if (v->kind != YNODE_SCALAR)
		return bad_value(ld, v, "day", "mon, tue, wed, thu, fri, sat or sun");
	if (strlen(v->value) < sizeof lower)
		for (size_t i = 0; v->value[i]; i++)
			lower[i] = (char)tolower((unsigned char)v->value[i]);
	for (int i = 0; i < (int)N_OF(day_names); i++) {
		if (!strcmp(lower, day_names[i])) {
			*day = i % 7;
			return GP_OK;
		}
	}
	/* Suggest from the long names too ("mnday"), but list only the short ones. */
	const char *close = ytree_closest(v->value, day_names, N_OF(day_names));
	if (close)
		return gp_located(ld->err, v->loc, "unknown day '%s'; did you mean '%s'?", v->value,
				  close);
	return gp_located(ld->err, v->loc,
			  "unknown day '%s'; expected mon, tue, wed, thu, fri, "
			  "sat or sun",
			  v->value);
}

static int window_days(struct loader *ld, const struct ynode *v, void *obj)
{
	struct window *w = obj;
	if (v->kind != YNODE_SEQ || v->n == 0)
		return bad_value(ld, v, "days", "a list of days like [mon, tue, wed, thu, fri]");
	w->days = 0;
	for (size_t i = 0; i < v->n; i++) {
		int day = 0;
		int rc = get_day(ld, v->items[i], &day);
		if (rc)
			return rc;
		w->days = (uint8_t)(w->days | 1u << day);
	}
	return GP_OK;
}

static const struct key_rule window_rules[] = {
	{"from", window_from}, {"to", window_to}, {"days", window_days}};

static int load_window(struct loader *ld, const struct ynode *item, struct window *w)
{
	w->loc = item->loc;
	w->days = WINDOW_EVERY_DAY;
	int rc = walk_map(ld, item, "window", WINDOW_HINT, window_rules, N_OF(window_rules), w);
	if (!rc)
		rc = require(ld, item, "from", "window", TIME_OF_DAY_HINT);
	if (!rc)
		rc = require(ld, item, "to", "window", TIME_OF_DAY_HINT);
	if (!rc && w->from == w->to)
		return gp_located(ld->err, item->loc,
				  "window from '%s' to '%s' is empty; expected different times (a "
				  "window whose to is before from runs past midnight)",
				  ynode_get(item, "from")->value, ynode_get(item, "to")->value);
	return rc;
}

static int pool_windows(struct loader *ld, const struct ynode *v, void *obj)
{
	struct pool_spec *p = obj;
	int rc = expect_list(ld, v, "windows", "a list like [{from: \"12:00\", to: \"17:00\"}]");
	if (rc)
		return rc;
	p->windows = gp_xcalloc(v->n, sizeof *p->windows);
	p->n_windows = v->n;
	for (size_t i = 0; i < v->n && !rc; i++)
		rc = load_window(ld, v->items[i], &p->windows[i]);
	return rc;
}

#define PRICE_HINT "a price per hour >= 0, like 2.50"

static int price_gpu(struct loader *ld, const struct ynode *v, void *obj)
{
	return get_amount(ld, v, "gpu_hour", PRICE_HINT, &((struct price *)obj)->gpu_hour);
}

static int price_cpu(struct loader *ld, const struct ynode *v, void *obj)
{
	return get_amount(ld, v, "cpu_hour", PRICE_HINT, &((struct price *)obj)->cpu_hour);
}

static int price_gib(struct loader *ld, const struct ynode *v, void *obj)
{
	return get_amount(ld, v, "gib_hour", PRICE_HINT, &((struct price *)obj)->gib_hour);
}

static const struct key_rule price_rules[] = {
	{"gpu_hour", price_gpu}, {"cpu_hour", price_cpu}, {"gib_hour", price_gib}};

static int pool_price(struct loader *ld, const struct ynode *v, void *obj)
{
	return walk_map(ld, v, "price",
			"a map like {gpu_hour: 2.50, cpu_hour: 0.03, gib_hour: 0.004}", price_rules,
			N_OF(price_rules), &((struct pool_spec *)obj)->price);
}

static int pool_name(struct loader *ld, const struct ynode *v, void *obj)
{
	return get_item_name(ld, v, "pool name", &((struct pool_spec *)obj)->name);
}

static int pool_nodes(struct loader *ld, const struct ynode *v, void *obj)
{
	int64_t n = 0;
	int rc = get_int(ld, v, "nodes", 1, MAX_NODES_PER_POOL, &n);
	((struct pool_spec *)obj)->nodes = (int32_t)n;
	return rc;
}

static int pool_gpu(struct loader *ld, const struct ynode *v, void *obj)
{
	return get_gpu_type(ld, v, "gpu", &((struct pool_spec *)obj)->gpu);
}

static int pool_gpus_per_node(struct loader *ld, const struct ynode *v, void *obj)
{
	int64_t n = 0;
	int rc = get_int(ld, v, "gpus_per_node", 1, MAX_GPUS_PER_NODE, &n);
	((struct pool_spec *)obj)->gpus_per_node = (int32_t)n;
	return rc;
}

static int pool_cpu(struct loader *ld, const struct ynode *v, void *obj)
{
	return get_amount(ld, v, "cpu", "a number of cores >= 0, like 96",
			  &((struct pool_spec *)obj)->cpu);
}

static int pool_memory(struct loader *ld, const struct ynode *v, void *obj)
{
	return get_size(ld, v, "memory", &((struct pool_spec *)obj)->memory_bytes);
}

static int pool_labels(struct loader *ld, const struct ynode *v, void *obj)
{
	struct pool_spec *p = obj;
	return get_kv_map(ld, v, "labels", &p->labels, &p->n_labels);
}

static const char *const sharing_names[] = {"exclusive", "time-slicing", "mps", "mig",
					    "fractional"};

/* The keys each mode takes, beside mode. */
static const char *const sharing_keys[][3] = {
	{"mode"}, {"mode", "replicas", "overhead"}, {"mode", "replicas"}, {"mode", "layout"},
	{"mode"}};

static int sharing_params(struct loader *ld, const struct ynode *v, struct sharing *sh)
{
	const struct ynode *r = ynode_get(v, "replicas"), *o = ynode_get(v, "overhead");
	int64_t n = 0;
	int rc = GP_OK;
	if (sh->mode == SHARING_TIME_SLICING || sh->mode == SHARING_MPS) {
		if (!r)
			return gp_located(ld->err, v->loc,
					  "missing key 'replicas' in sharing; expected the units "
					  "per GPU, like {mode: %s, replicas: 4}",
					  sharing_names[sh->mode]);
		/* MPS serves at most 48 clients per GPU (Volta and later). */
		rc = get_int(ld, r, "replicas", 1, sh->mode == SHARING_MPS ? 48 : 64, &n);
		sh->replicas = (int32_t)n;
	}
	if (!rc && o) {
		rc = get_amount(ld, o, "overhead", "a fraction like 0.05", &sh->overhead);
		if (!rc && sh->overhead > 1)
			rc = bad_value(ld, o, "overhead", "a fraction from 0 to 1, like 0.05");
	}
	if (!rc && sh->mode == SHARING_MIG && !ynode_get(v, "layout"))
		rc = gp_located(ld->err, v->loc,
				"missing key 'layout' in sharing; expected the MIG instances of "
				"each GPU, like {mode: mig, layout: [3g.40gb, 3g.40gb]}");
	return rc;
}

/* exclusive | {mode: time-slicing, replicas: R, overhead: o} | {mode: mps, replicas: R}
 * | {mode: mig, layout: [...]} (checked against the GPU in check_mig_layout) | fractional */
static int pool_sharing(struct loader *ld, const struct ynode *v, void *obj)
{
	struct sharing *sh = &((struct pool_spec *)obj)->sharing;
	const struct ynode *mode = v->kind == YNODE_MAP ? ynode_get(v, "mode") : v;
	char list[128];
	join(list, sizeof list, sharing_names, N_OF(sharing_names), " or ");
	if (!mode)
		return gp_located(ld->err, v->loc, "missing key 'mode' in sharing; expected %s",
				  list);
	int m = 0;
	int rc = get_enum(ld, mode, "sharing mode", sharing_names, N_OF(sharing_names), &m);
	if (rc)
		return rc;
	sh->mode = (enum sharing_mode)m;
	sh->loc = v->loc;
	if (v == mode)
		return sh->mode == SHARING_EXCLUSIVE || sh->mode == SHARING_FRACTIONAL
			       ? GP_OK
			       : sharing_params(ld, v, sh);
	rc = only_keys(ld, v, sharing_keys[m], 3, "this sharing mode");
	return rc ? rc : sharing_params(ld, v, sh);
}

/* A MIG layout must use profiles of the pool's GPU, at most 7 compute and 8
 * memory slices, and no profile more often than the GPU allows. */
static int check_mig_layout(struct loader *ld, const struct ynode *item, struct pool_spec *p)
{
	const struct ynode *v = ynode_get(ynode_get(item, "sharing"), "layout");
	int rc = expect_list(ld, v, "layout", "a list of MIG profiles like [3g.40gb, 3g.40gb]");
	if (rc)
		return rc;
	if (!p->gpu->n_mig)
		return gp_located(ld->err, v->loc, "%s does not support MIG; expected a GPU with "
				  "MIG profiles like A100-80GB or H100-80GB", p->gpu->name);
	if (v->n == 0 || v->n > 7)
		return gp_located(ld->err, v->loc, "a MIG layout has 1 to 7 instances, not %zu", v->n);
	struct sharing *sh = &p->sharing;
	sh->layout = gp_xcalloc(v->n, sizeof *sh->layout);
	sh->n_layout = v->n;
	int compute = 0, memory = 0;
	for (size_t i = 0; i < v->n; i++) {
		const struct ynode *it = v->items[i];
		const struct mig_profile *mp =
			it->kind == YNODE_SCALAR ? catalog_mig_profile(p->gpu, it->value) : NULL;
		if (!mp) {
			const char *names[16];
			for (size_t k = 0; k < p->gpu->n_mig && k < 16; k++)
				names[k] = p->gpu->mig[k].name;
			return it->kind == YNODE_SCALAR
				       ? unknown_word(ld, it->loc, "MIG profile", it->value, names,
						      p->gpu->n_mig)
				       : bad_value(ld, it, "MIG profile", "a name like 3g.40gb");
		}
		sh->layout[i] = mp;
		compute += mp->compute_slices;
		memory += mp->memory_slices;
		int same = 0;
		for (size_t k = 0; k <= i; k++)
			same += sh->layout[k] == mp;
		if (same > mp->max_instances)
			return gp_located(ld->err, it->loc, "%s allows at most %d instance(s) of %s "
					  "per GPU", p->gpu->name, mp->max_instances, mp->name);
	}
	if (compute > 7 || memory > 8)
		return gp_located(ld->err, v->loc,
				  "invalid MIG layout for %s: it uses %d compute and %d memory "
				  "slices; expected at most 7 and 8",
				  p->gpu->name, compute, memory);
	return GP_OK;
}

static int pool_startup(struct loader *ld, const struct ynode *v, void *obj)
{
	return get_duration(ld, v, "startup", false, &((struct pool_spec *)obj)->startup);
}

static const struct key_rule pool_rules[] = {
	{"name", pool_name},       {"nodes", pool_nodes},
	{"gpu", pool_gpu},         {"gpus_per_node", pool_gpus_per_node},
	{"cpu", pool_cpu},         {"memory", pool_memory},
	{"labels", pool_labels},   {"taints", pool_taints},
	{"sharing", pool_sharing}, {"windows", pool_windows},
	{"price", pool_price},     {"startup", pool_startup},
};

static int load_pool(struct loader *ld, const struct ynode *item, struct pool_spec *p)
{
	p->loc = item->loc;
	p->sharing.overhead = 0.05;
	p->sharing.replicas = 1;
	int rc = walk_map(ld, item, "pool", POOL_HINT, pool_rules, N_OF(pool_rules), p);
	if (!rc)
		rc = require(ld, item, "name", "pool", "a name like batch");
	if (!rc)
		rc = require(ld, item, "nodes", "pool", "a whole number of nodes >= 1");
	if (!rc)
		rc = require(ld, item, "gpu", "pool", "a catalog GPU type like A100-80GB");
	if (!rc)
		rc = require(ld, item, "gpus_per_node", "pool", "a whole number from 1 to 64");
	if (!rc && p->sharing.mode == SHARING_MIG)
		rc = check_mig_layout(ld, item, p);
	return rc;
}

static int load_pools(struct loader *ld, const struct ynode *v)
{
	struct scenario *sc = ld->sc;
	int rc = expect_list(ld, v, "pools", "a list of pools like [" POOL_HINT "]");
	if (rc)
		return rc;
	if (v->n == 0)
		return gp_located(ld->err, v->loc, "pools is empty; expected at least one pool");
	sc->pools = gp_xcalloc(v->n, sizeof *sc->pools);
	sc->n_pools = v->n;
	for (size_t i = 0; i < v->n; i++) {
		struct pool_spec *p = &sc->pools[i];
		rc = load_pool(ld, v->items[i], p);
		if (rc)
			return rc;
		for (size_t j = 0; j < i; j++)
			if (!strcmp(sc->pools[j].name, p->name))
				return duplicate(ld, v->items[i], "pool", p->name,
						 sc->pools[j].loc);
		if (p->gpus_per_node > ld->widest_node)
			ld->widest_node = p->gpus_per_node;
	}
	return GP_OK;
}

/* --- queues, scheduler, output ------------------------------------------- */

static const char *const strategy_names[] = {"BestEffortFIFO", "StrictFIFO"};

static int queue_name(struct loader *ld, const struct ynode *v, void *obj)
{
	return get_item_name(ld, v, "queue name", &((struct queue_spec *)obj)->name);
}

static int queue_strategy(struct loader *ld, const struct ynode *v, void *obj)
{
	int s = 0;
	int rc = get_enum(ld, v, "strategy", strategy_names, N_OF(strategy_names), &s);
	((struct queue_spec *)obj)->strategy = (enum queue_strategy)s;
	return rc;
}

static const struct key_rule queue_rules[] = {
	{"name", queue_name}, {"strategy", queue_strategy}, {"cohort", NULL},
	{"quota", NULL},      {"borrowing_limit", NULL},
};

static int load_queues(struct loader *ld, const struct ynode *v)
{
	struct scenario *sc = ld->sc;
	size_t n = v ? v->n : 0;
	int rc = v ? expect_list(ld, v, "queues",
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
		rc = walk_map(ld, item, "queue",
			      "a map like {name: team-a, strategy: BestEffortFIFO}", queue_rules,
			      N_OF(queue_rules), q);
		if (!rc)
			rc = require(ld, item, "name", "queue", "a name like team-a");
		if (rc)
			return rc;
		for (size_t j = 0; j < i; j++)
			if (!strcmp(sc->queues[j].name, q->name))
				return duplicate(ld, item, "queue", q->name, sc->queues[j].loc);
	}
	/* Workloads without a queue go to "default", declared or not. */
	if (scenario_queue_index(sc, DEFAULT_QUEUE) < 0) {
		struct queue_spec *q = &sc->queues[sc->n_queues++];
		q->name = gp_xstrdup(DEFAULT_QUEUE);
		q->loc = (struct srcloc){sc->path, 0, 0};
		q->strategy = STRATEGY_BEST_EFFORT_FIFO;
	}
	return GP_OK;
}

static const char *const order_names[] = {"fifo", "priority", "edf", "sjf"};
static const char *const scoring_names[] = {"MostAllocated", "LeastAllocated"};

static int sched_order(struct loader *ld, const struct ynode *v, void *obj)
{
	int o = 0;
	int rc = get_enum(ld, v, "order", order_names, N_OF(order_names), &o);
	((struct scheduler_spec *)obj)->order = (enum sched_order)o;
	return rc;
}

static int sched_scoring(struct loader *ld, const struct ynode *v, void *obj)
{
	int s = 0;
	int rc = get_enum(ld, v, "scoring", scoring_names, N_OF(scoring_names), &s);
	((struct scheduler_spec *)obj)->scoring = (enum sched_scoring)s;
	return rc;
}

static int sched_window_policy(struct loader *ld, const struct ynode *v, void *obj)
{
	static const char *const names[] = {"fit"};
	((struct scheduler_spec *)obj)->window_policy = WINDOW_FIT;
	if (v->kind == YNODE_SCALAR && !strcmp(v->value, "preempt"))
		return gp_located(ld->err, v->loc,
				  "window_policy 'preempt' is not supported yet; expected fit");
	int p = 0;
	return get_enum(ld, v, "window_policy", names, N_OF(names), &p);
}

static const struct key_rule scheduler_rules[] = {
	{"order", sched_order},
	{"scoring", sched_scoring},
	{"window_policy", sched_window_policy},
	{"gpu_policy", NULL},
};

static int output_db(struct loader *ld, const struct ynode *v, void *obj)
{
	return get_string(ld, v, "db", "a path like results/run.db",
			  &((struct output_spec *)obj)->db);
}

static int output_step(struct loader *ld, const struct ynode *v, void *obj)
{
	return get_duration(ld, v, "step", true, &((struct output_spec *)obj)->step);
}

static int output_jobs(struct loader *ld, const struct ynode *v, void *obj)
{
	return get_bool(ld, v, "jobs", &((struct output_spec *)obj)->jobs);
}

static int output_requests(struct loader *ld, const struct ynode *v, void *obj)
{
	return get_bool(ld, v, "requests", &((struct output_spec *)obj)->requests);
}

static const struct key_rule output_rules[] = {{"db", output_db},
					       {"step", output_step},
					       {"jobs", output_jobs},
					       {"requests", output_requests}};

/* --- workloads ------------------------------------------------------------ */

#define WORKLOAD_HINT                                                                              \
	"a map like {name: eval, count: 4, arrival: {at: \"12:00\"}, gpus: 2, duration: 1h}"
#define ARRIVAL_HINT "{at: \"12:00\"}, {process: poisson, rate: 10/h} or {trace: PATH, format: csv}"
#define DURATION_HINT UNITS_HINT_DURATION ", or {dist: exponential, mean: 1h}"

static const char *const kind_names[] = {"batch", "inference"};

static int workload_kind(struct loader *ld, const struct ynode *v, void *obj)
{
	int k = 0;
	int rc = get_enum(ld, v, "kind", kind_names, N_OF(kind_names), &k);
	if (!rc && k == WORKLOAD_INFERENCE)
		return gp_located(ld->err, v->loc,
				  "kind 'inference' is not supported yet; expected batch");
	((struct workload_spec *)obj)->kind = WORKLOAD_BATCH;
	return rc;
}

static int workload_name(struct loader *ld, const struct ynode *v, void *obj)
{
	return get_item_name(ld, v, "workload name", &((struct workload_spec *)obj)->name);
}

static int workload_count(struct loader *ld, const struct ynode *v, void *obj)
{
	return get_int(ld, v, "count", 1, INT64_MAX, &((struct workload_spec *)obj)->count);
}

/* gpus: N (nvidia.com/gpu units) | {mig: 3g.40gb} | {milli: 300}.  Whether a
 * pool offers the resource is checked once all pools are known (check_hosted). */
static int workload_gpus(struct loader *ld, const struct ynode *v, void *obj)
{
	struct workload_spec *w = obj;
	int64_t g = 0;
	if (v->kind == YNODE_MAP) {
		static const char *const keys[] = {"mig", "milli"};
		int rc = only_keys(ld, v, keys, 2, "gpus");
		if (rc)
			return rc;
		if (v->n != 1)
			return bad_value(ld, v, "gpus", "one of {mig: 3g.40gb} or {milli: 300}");
		if (!strcmp(v->keys[0], "mig")) {
			w->request = REQUEST_MIG;
			return get_string(ld, v->items[0], "MIG profile", "a name like 3g.40gb",
					  &w->mig_profile);
		}
		w->request = REQUEST_MILLI;
		rc = get_int(ld, v->items[0], "milli", 1, 1000, &g);
		w->milli = (int32_t)g;
		return rc;
	}
	int rc = get_int(ld, v, "gpus", 1, INT64_MAX, &g);
	if (rc)
		return rc;
	if (g > ld->widest_node)
		return gp_located(ld->err, v->loc,
				  "no node has %lld GPUs; the largest pool node has %d",
				  (long long)g, (int)ld->widest_node);
	w->request = REQUEST_GPUS;
	w->gpus = (int32_t)g;
	return GP_OK;
}

static int workload_model(struct loader *ld, const struct ynode *v, void *obj)
{
	struct workload_spec *w = obj;
	if (v->kind == YNODE_SCALAR && (w->model = catalog_model(v->value)))
		return GP_OK;
	const char *names[16];
	size_t n = catalog_model_count();
	for (size_t i = 0; i < n && i < 16; i++)
		names[i] = catalog_model_at(i)->name;
	return v->kind == YNODE_SCALAR ? unknown_word(ld, v->loc, "model", v->value, names, n)
				       : bad_value(ld, v, "model", "a catalog model like llama-2-13b");
}

static int workload_quantization(struct loader *ld, const struct ynode *v, void *obj)
{
	int q = 0;
	int rc = get_enum(ld, v, "quantization", quant_names, QUANT_COUNT, &q);
	((struct workload_spec *)obj)->quantization = q;
	return rc;
}

static int restart_limit(struct loader *ld, const struct ynode *v, void *obj)
{
	int64_t n = 0;
	int rc = get_int(ld, v, "restart limit", 0, 1000, &n);
	((struct workload_spec *)obj)->restart_limit = (int32_t)n;
	return rc;
}

static int restart_backoff(struct loader *ld, const struct ynode *v, void *obj)
{
	return get_duration(ld, v, "backoff", false, &((struct workload_spec *)obj)->restart_backoff);
}

static const struct key_rule restart_rules[] = {{"limit", restart_limit},
						{"backoff", restart_backoff}};

static int workload_restart(struct loader *ld, const struct ynode *v, void *obj)
{
	return walk_map(ld, v, "restart", "a map like {limit: 6, backoff: 10s}", restart_rules,
			N_OF(restart_rules), obj);
}

/* Distribution parameters by kind (index = enum dist_kind). */
static const char *const dist_names[] = {"fixed", "exponential", "lognormal", "gamma", "uniform"};
static const char *const dist_params[][2] = {
	{"mean", NULL}, {"mean", NULL}, {"mean", "sigma"}, {"mean", "shape"}, {"min", "max"}};

static const char *dist_param_hint(const char *param)
{
	if (!strcmp(param, "sigma"))
		return "a number > 0 like 0.5";
	if (!strcmp(param, "shape"))
		return "a number > 0 like 2";
	return UNITS_HINT_DURATION;
}

static int dist_kind(struct loader *ld, const struct ynode *v, void *obj)
{
	int k = 0;
	int rc = get_enum(ld, v, "dist", dist_names, N_OF(dist_names), &k);
	((struct dist *)obj)->kind = (enum dist_kind)k;
	return rc;
}

static int dist_seconds(struct loader *ld, const struct ynode *v, const char *what, bool positive,
			double *out)
{
	sim_time t;
	int rc = get_duration(ld, v, what, positive, &t);
	*out = sim_seconds(t);
	return rc;
}

static int dist_mean(struct loader *ld, const struct ynode *v, void *obj)
{
	return dist_seconds(ld, v, "mean", true, &((struct dist *)obj)->mean);
}

static int dist_min(struct loader *ld, const struct ynode *v, void *obj)
{
	return dist_seconds(ld, v, "min", false, &((struct dist *)obj)->min);
}

static int dist_max(struct loader *ld, const struct ynode *v, void *obj)
{
	return dist_seconds(ld, v, "max", true, &((struct dist *)obj)->max);
}

static int dist_sigma(struct loader *ld, const struct ynode *v, void *obj)
{
	return get_positive(ld, v, "sigma", dist_param_hint("sigma"), &((struct dist *)obj)->sigma);
}

static int dist_shape(struct loader *ld, const struct ynode *v, void *obj)
{
	return get_positive(ld, v, "shape", dist_param_hint("shape"), &((struct dist *)obj)->shape);
}

static const struct key_rule dist_rules[] = {
	{"dist", dist_kind},   {"mean", dist_mean}, {"sigma", dist_sigma},
	{"shape", dist_shape}, {"min", dist_min},   {"max", dist_max},
};

static int load_dist(struct loader *ld, const struct ynode *v, struct dist *d)
{
	int rc = walk_map(ld, v, "duration", DURATION_HINT, dist_rules, N_OF(dist_rules), d);
	if (!rc)
		rc = require(ld, v, "dist", "duration", "exponential, lognormal, gamma or uniform");
	if (rc)
		return rc;
	const char *const *params = dist_params[d->kind];
	const char *allowed[3] = {"dist", params[0], params[1]};
	char what[48];
	snprintf(what, sizeof what, "dist %s", dist_names[d->kind]);
	for (size_t i = 0; i < 2 && params[i] && !rc; i++)
		rc = require(ld, v, params[i], what, dist_param_hint(params[i]));
	if (!rc)
		rc = only_keys(ld, v, allowed, N_OF(allowed), what);
	if (!rc && d->kind == DIST_UNIFORM && d->max < d->min)
		return gp_located(ld->err, ynode_get(v, "max")->loc,
				  "max is below min; expected min <= max");
	return rc;
}

static int workload_duration(struct loader *ld, const struct ynode *v, void *obj)
{
	struct dist *d = &((struct workload_spec *)obj)->duration;
	if (v->kind == YNODE_MAP)
		return load_dist(ld, v, d);
	d->kind = DIST_FIXED;
	if (v->kind != YNODE_SCALAR)
		return bad_value(ld, v, "duration", DURATION_HINT);
	return dist_seconds(ld, v, "duration", true, &d->mean);
}

static int deadline_within(struct loader *ld, const struct ynode *v, void *obj)
{
	return get_duration(ld, v, "within", true, &((struct workload_spec *)obj)->deadline);
}

static const struct key_rule deadline_rules[] = {{"within", deadline_within}};

static int workload_deadline(struct loader *ld, const struct ynode *v, void *obj)
{
	struct workload_spec *w = obj;
	if (v->kind == YNODE_SCALAR) {
		w->deadline_kind = DEADLINE_AT;
		return get_clock(ld, v, "deadline", &w->deadline);
	}
	w->deadline_kind = DEADLINE_WITHIN;
	int rc = walk_map(ld, v, "deadline", UNITS_HINT_CLOCK ", or {within: 5h}", deadline_rules,
			  N_OF(deadline_rules), w);
	return rc ? rc : require(ld, v, "within", "deadline", UNITS_HINT_DURATION);
}

static int workload_gpu_busy(struct loader *ld, const struct ynode *v, void *obj)
{
	return get_fraction(ld, v, "gpu_busy", &((struct workload_spec *)obj)->gpu_busy);
}

static int workload_sm_share(struct loader *ld, const struct ynode *v, void *obj)
{
	return get_fraction(ld, v, "sm_share", &((struct workload_spec *)obj)->sm_share);
}

static int workload_vram(struct loader *ld, const struct ynode *v, void *obj)
{
	return get_size(ld, v, "vram", &((struct workload_spec *)obj)->vram_bytes);
}

static int workload_cpu(struct loader *ld, const struct ynode *v, void *obj)
{
	return get_amount(ld, v, "cpu", "a number of cores >= 0, like 8",
			  &((struct workload_spec *)obj)->cpu);
}

static int workload_memory(struct loader *ld, const struct ynode *v, void *obj)
{
	return get_size(ld, v, "memory", &((struct workload_spec *)obj)->memory_bytes);
}

static int workload_node_selector(struct loader *ld, const struct ynode *v, void *obj)
{
	struct workload_spec *w = obj;
	return get_kv_map(ld, v, "node_selector", &w->node_selector, &w->n_node_selector);
}

static const char *const operator_names[] = {"Equal", "Exists"};

static int toleration_key(struct loader *ld, const struct ynode *v, void *obj)
{
	struct toleration *t = obj;
	free(t->key);
	return get_text(ld, v, "toleration key", &t->key);
}

static int toleration_operator(struct loader *ld, const struct ynode *v, void *obj)
{
	int op = 0;
	int rc = get_enum(ld, v, "operator", operator_names, N_OF(operator_names), &op);
	((struct toleration *)obj)->op = (enum toleration_op)op;
	return rc;
}

static int toleration_value(struct loader *ld, const struct ynode *v, void *obj)
{
	struct toleration *t = obj;
	free(t->value);
	return get_text(ld, v, "toleration value", &t->value);
}

static int toleration_effect(struct loader *ld, const struct ynode *v, void *obj)
{
	return get_enum(ld, v, "toleration effect", effect_names, N_OF(effect_names),
			&((struct toleration *)obj)->effect);
}

static const struct key_rule toleration_rules[] = {
	{"key", toleration_key},
	{"operator", toleration_operator},
	{"value", toleration_value},
	{"effect", toleration_effect},
};

/* Kubernetes rules: Equal needs a key; Exists matches any value so takes none. */
static int load_toleration(struct loader *ld, const struct ynode *item, struct toleration *t)
{
	t->key = gp_xstrdup("");
	t->value = gp_xstrdup("");
	t->op = TOLERATION_EQUAL;
	t->effect = -1;
	int rc = walk_map(
		ld, item, "toleration",
		"a map like {key: dedicated, operator: Equal, value: batch, effect: NoSchedule}",
		toleration_rules, N_OF(toleration_rules), t);
	if (rc)
		return rc;
	if (t->op == TOLERATION_EQUAL && !t->key[0])
		return gp_located(ld->err, item->loc,
				  "a toleration with operator Equal needs a key; "
				  "expected {key: KEY, value: VALUE} or operator Exists");
	const struct ynode *value = ynode_get(item, "value");
	if (t->op == TOLERATION_EXISTS && t->value[0])
		return gp_located(ld->err, value->loc,
				  "a toleration with operator Exists takes no "
				  "value; expected operator Equal or no value");
	return GP_OK;
}

static int workload_tolerations(struct loader *ld, const struct ynode *v, void *obj)
{
	struct workload_spec *w = obj;
	int rc =
		expect_list(ld, v, "tolerations",
			    "a list like [{key: dedicated, operator: Exists, effect: NoSchedule}]");
	if (rc)
		return rc;
	w->tolerations = gp_xcalloc(v->n, sizeof *w->tolerations);
	w->n_tolerations = v->n;
	for (size_t i = 0; i < v->n && !rc; i++)
		rc = load_toleration(ld, v->items[i], &w->tolerations[i]);
	return rc;
}

static int workload_gpu_spec(struct loader *ld, const struct ynode *v, void *obj)
{
	struct workload_spec *w = obj;
	int rc = expect_list(ld, v, "gpu_spec", "a list of GPU types like [A100-80GB, H100-80GB]");
	if (rc)
		return rc;
	w->gpu_spec = gp_xcalloc(v->n, sizeof *w->gpu_spec);
	w->n_gpu_spec = v->n;
	for (size_t i = 0; i < v->n; i++) {
		const struct gpu_type *gpu;
		rc = get_gpu_type(ld, v->items[i], "gpu_spec", &gpu);
		if (rc)
			return rc;
		w->gpu_spec[i] = gp_xstrdup(gpu->name);
	}
	return GP_OK;
}

static int workload_queue(struct loader *ld, const struct ynode *v, void *obj)
{
	struct scenario *sc = ld->sc;
	if (v->kind != YNODE_SCALAR || is_null(v))
		return bad_value(ld, v, "queue", "the name of a queue, like default");
	int q = scenario_queue_index(sc, v->value);
	if (q >= 0) {
		((struct workload_spec *)obj)->queue = q;
		return GP_OK;
	}
	const char **names = gp_xcalloc(sc->n_queues, sizeof *names);
	for (size_t i = 0; i < sc->n_queues; i++)
		names[i] = sc->queues[i].name;
	int rc = unknown_word(ld, v->loc, "queue", v->value, names, sc->n_queues);
	free(names);
	return rc;
}

static int workload_priority(struct loader *ld, const struct ynode *v, void *obj)
{
	int64_t p = 0;
	int rc = get_int(ld, v, "priority", INT32_MIN, INT32_MAX, &p);
	((struct workload_spec *)obj)->priority = (int32_t)p;
	return rc;
}

/* --- arrivals -------------------------------------------------------------- */

static int arrival_at(struct loader *ld, const struct ynode *v, void *obj)
{
	struct arrival *a = obj;
	a->kind = ARRIVAL_AT;
	return get_clock(ld, v, "arrival at", &a->at);
}

static int arrival_process(struct loader *ld, const struct ynode *v, void *obj)
{
	static const char *const names[] = {"poisson"};
	int p = 0;
	((struct arrival *)obj)->kind = ARRIVAL_POISSON;
	return get_enum(ld, v, "process", names, N_OF(names), &p);
}

static int arrival_rate(struct loader *ld, const struct ynode *v, void *obj)
{
	double *rate = &((struct arrival *)obj)->rate;
	if (v->kind != YNODE_SCALAR || units_rate(v->value, rate) || !(*rate > 0))
		return bad_value(ld, v, "rate", UNITS_HINT_RATE);
	return GP_OK;
}

static int arrival_from(struct loader *ld, const struct ynode *v, void *obj)
{
	return get_clock(ld, v, "arrival from", &((struct arrival *)obj)->from);
}

/* A path relative to the scenario's folder. */
static char *resolve(const char *dir, const char *path)
{
	if (path[0] == '/' || !strcmp(dir, "."))
		return gp_xstrdup(path);
	size_t n = strlen(dir) + strlen(path) + 2;
	char *s = gp_xmalloc(n);
	snprintf(s, n, "%s/%s", dir, path);
	return s;
}

/* Records the path; the rows are read once the arrival is known to be sound. */
static int arrival_trace(struct loader *ld, const struct ynode *v, void *obj)
{
	struct arrival *a = obj;
	char *path = NULL;
	a->kind = ARRIVAL_TRACE;
	int rc = get_string(ld, v, "trace", "a path to a CSV file, like traces/jobs.csv", &path);
	if (rc)
		return rc;
	a->trace_path = resolve(ld->sc->dir, path);
	free(path);
	return GP_OK;
}

static int arrival_format(struct loader *ld, const struct ynode *v, void *obj)
{
	static const char *const names[] = {"csv"};
	int f = 0;
	((struct arrival *)obj)->format = TRACE_CSV;
	if (v->kind == YNODE_SCALAR && (!strcmp(v->value, "openb") || !strcmp(v->value, "azure")))
		return gp_located(ld->err, v->loc, "format '%s' is not supported yet; expected csv",
				  v->value);
	return get_enum(ld, v, "format", names, N_OF(names), &f);
}

static const struct key_rule arrival_rules[] = {
	{"at", arrival_at},     {"process", arrival_process}, {"rate", arrival_rate},
	{"from", arrival_from}, {"trace", arrival_trace},     {"format", arrival_format},
	{"speedup", NULL},
};

/* The keys each kind of arrival takes (index = enum arrival_kind). */
static const char *const arrival_keys[][3] = {
	{"at", NULL, NULL}, {"process", "rate", "from"}, {"trace", "format", NULL}};
static const char *const arrival_kind_text[] = {"arrival at", "a poisson arrival",
						"a trace arrival"};

static int workload_arrival(struct loader *ld, const struct ynode *v, void *obj)
{
	struct arrival *a = &((struct workload_spec *)obj)->arrival;
	int rc = walk_map(ld, v, "arrival", ARRIVAL_HINT, arrival_rules, N_OF(arrival_rules), a);
	if (rc)
		return rc;
	int kinds = !!ynode_get(v, "at") + !!ynode_get(v, "process") + !!ynode_get(v, "trace");
	if (kinds != 1)
		return gp_located(ld->err, v->loc,
				  "arrival needs exactly one of at, process or trace; "
				  "expected " ARRIVAL_HINT);
	if (!rc)
		rc = only_keys(ld, v, arrival_keys[a->kind], 3, arrival_kind_text[a->kind]);
	if (!rc && a->kind == ARRIVAL_POISSON)
		rc = require(ld, v, "rate", "arrival", UNITS_HINT_RATE);
	if (!rc && a->kind == ARRIVAL_TRACE) {
		struct trace_limits lim = {ld->widest_node, ld->max_jobs};
		rc = trace_read_csv(a->trace_path, ynode_get(v, "trace")->loc, &lim, &a->rows,
				    &a->n_rows, ld->err);
	}
	return rc;
}

static const struct key_rule workload_rules[] = {
	{"name", workload_name},
	{"kind", workload_kind},
	{"count", workload_count},
	{"arrival", workload_arrival},
	{"gpus", workload_gpus},
	{"duration", workload_duration},
	{"deadline", workload_deadline},
	{"gpu_busy", workload_gpu_busy},
	{"sm_share", workload_sm_share},
	{"vram", workload_vram},
	{"cpu", workload_cpu},
	{"memory", workload_memory},
	{"node_selector", workload_node_selector},
	{"tolerations", workload_tolerations},
	{"gpu_spec", workload_gpu_spec},
	{"queue", workload_queue},
	{"priority", workload_priority},
	/* DESIGN.md, not simulated yet */
	{"affinity", NULL},
	{"quality", NULL},
	{"model", workload_model},
	{"quantization", workload_quantization},
	{"kv_cache", NULL},
	{"replicas", NULL},
	{"tensor_parallel", NULL},
	{"max_batch", NULL},
	{"memory_fraction", NULL},
	{"requests", NULL},
	{"slo", NULL},
	{"tokenize", NULL},
	{"restart", workload_restart},
};

/* A trace decides count, gpus and durations; the workload's keys would contradict it. */
static int finish_trace_workload(struct loader *ld, const struct ynode *item,
				 struct workload_spec *w)
{
	static const char *const from_trace[] = {"count", "gpus", "duration"};
	for (size_t i = 0; i < item->n; i++)
		for (size_t k = 0; k < N_OF(from_trace); k++)
			if (!strcmp(item->keys[i], from_trace[k]))
				return gp_located(ld->err, item->key_locs[i],
						  "%s comes from the trace (one job per row); "
						  "expected no %s with a trace arrival",
						  item->keys[i], item->keys[i]);
	const struct arrival *a = &w->arrival;
	double total = 0;
	w->count = (int64_t)a->n_rows;
	w->gpus = 0;
	for (size_t i = 0; i < a->n_rows; i++) {
		if (a->rows[i].gpus > w->gpus)
			w->gpus = a->rows[i].gpus;
		total += sim_seconds(a->rows[i].duration);
	}
	/* Informational (check, reports): jobs use their own rows. */
	w->duration = (struct dist){DIST_FIXED, total / (double)a->n_rows, 0, 0, 0, 0};
	return GP_OK;
}

/*
 * VRAM from the model when not given: each GPU of the pod holds its share of
 * the weights (tensor parallel over the pod's GPUs) plus the runtime overhead.
 */
static int derive_vram(struct loader *ld, const struct ynode *item, struct workload_spec *w)
{
	const struct ynode *q = ynode_get(item, "quantization");
	if (!w->model) {
		if (q)
			return gp_located(ld->err, q->loc, "quantization applies to a model; "
					  "expected a model like llama-2-13b beside it");
		return GP_OK;
	}
	if (!q)
		w->quantization = QUANT_FP16;
	if (ynode_get(item, "vram"))
		return GP_OK;
	int tp = w->request == REQUEST_GPUS ? w->gpus : 1;
	w->vram_bytes = footprint_weights_bytes(w->model, (enum quant)w->quantization) / tp +
			FOOTPRINT_OVERHEAD_BYTES;
	return GP_OK;
}

static int finish_workload(struct loader *ld, const struct ynode *item, struct workload_spec *w)
{
	int rc = derive_vram(ld, item, w);
	if (!rc)
		rc = require(ld, item, "name", "workload", "a name like eval");
	if (!rc)
		rc = require(ld, item, "arrival", "workload", ARRIVAL_HINT);
	if (rc)
		return rc;
	if (w->arrival.kind == ARRIVAL_TRACE)
		return finish_trace_workload(ld, item, w);
	rc = require(ld, item, "duration", "workload", DURATION_HINT);
	if (!rc && w->arrival.kind == ARRIVAL_POISSON && !ynode_get(item, "count")) {
		if (!ld->sc->horizon)
			return gp_located(ld->err, ynode_get(item, "arrival")->loc,
					  "a poisson arrival without count never ends; expected a "
					  "count or a scenario horizon");
		w->count = -1;
	}
	return rc;
}

static int load_workload(struct loader *ld, const struct ynode *item, struct workload_spec *w)
{
	w->loc = item->loc;
	w->kind = WORKLOAD_BATCH;
	w->count = 1;
	w->gpus = 1;
	w->gpu_busy = 1;
	w->sm_share = 1;
	w->restart_limit = 6;             /* a Kubernetes Job's default backoffLimit */
	w->restart_backoff = 10 * SIM_SECOND; /* the kubelet's first crash-loop delay */
	w->queue = (int32_t)scenario_queue_index(ld->sc, DEFAULT_QUEUE);
	w->deadline_kind = DEADLINE_NONE;
	/* The kind first: an inference workload fails on its kind, not on its first key. */
	const struct ynode *kind = ynode_get(item, "kind");
	int rc = kind ? workload_kind(ld, kind, w) : GP_OK;
	if (!rc)
		rc = walk_map(ld, item, "workload", WORKLOAD_HINT, workload_rules,
			      N_OF(workload_rules), w);
	return rc ? rc : finish_workload(ld, item, w);
}

static int load_workloads(struct loader *ld, const struct ynode *v)
{
	struct scenario *sc = ld->sc;
	int rc = expect_list(ld, v, "workloads", "a list of workloads like [" WORKLOAD_HINT "]");
	if (rc)
		return rc;
	if (v->n == 0)
		return gp_located(ld->err, v->loc,
				  "workloads is empty; expected at least one workload");
	sc->workloads = gp_xcalloc(v->n, sizeof *sc->workloads);
	sc->n_workloads = v->n;
	for (size_t i = 0; i < v->n; i++) {
		struct workload_spec *w = &sc->workloads[i];
		rc = load_workload(ld, v->items[i], w);
		if (rc)
			return rc;
		for (size_t j = 0; j < i; j++)
			if (!strcmp(sc->workloads[j].name, w->name))
				return duplicate(ld, v->items[i], "workload", w->name,
						 sc->workloads[j].loc);
		/* Metrics are scoped by pool or workload name: the two must not collide. */
		int p = scenario_pool_index(sc, w->name);
		if (p >= 0)
			return gp_located(
				ld->err, ynode_get(v->items[i], "name")->loc,
				"workload name '%s' is also a pool name (line %d); expected "
				"distinct names, as results are reported per name",
				w->name, sc->pools[p].loc.line);
	}
	return GP_OK;
}

/* --- the top level --------------------------------------------------------- */

static int top_name(struct loader *ld, const struct ynode *v, void *obj)
{
	(void)obj;
	return get_scenario_name(ld, v, &ld->sc->name);
}

static int top_seed(struct loader *ld, const struct ynode *v, void *obj)
{
	(void)obj;
	int64_t seed = 0;
	int rc = get_int(ld, v, "seed", 0, INT64_MAX, &seed);
	ld->sc->seed = (uint64_t)seed;
	return rc;
}

static int top_start(struct loader *ld, const struct ynode *v, void *obj)
{
	(void)obj;
	if (v->kind != YNODE_SCALAR || units_rfc3339(v->value, &ld->sc->start_epoch))
		return bad_value(ld, v, "start", UNITS_HINT_TIME);
	return GP_OK;
}

static int top_horizon(struct loader *ld, const struct ynode *v, void *obj)
{
	(void)obj;
	return get_duration(ld, v, "horizon", true, &ld->sc->horizon);
}

/* Sections read after the walk, in dependency order (see load_root). */
static int top_later(struct loader *ld, const struct ynode *v, void *obj)
{
	(void)ld, (void)v, (void)obj;
	return GP_OK;
}

static int top_scheduler(struct loader *ld, const struct ynode *v, void *obj)
{
	(void)obj;
	return walk_map(ld, v, "scheduler", "a map like {order: fifo, scoring: MostAllocated}",
			scheduler_rules, N_OF(scheduler_rules), &ld->sc->scheduler);
}

static int top_output(struct loader *ld, const struct ynode *v, void *obj)
{
	(void)obj;
	return walk_map(ld, v, "output", "a map like {db: results/run.db, step: 5m}", output_rules,
			N_OF(output_rules), &ld->sc->output);
}

static const struct key_rule top_rules[] = {
	{"name", top_name},     {"seed", top_seed},
	{"start", top_start},   {"horizon", top_horizon},
	{"pools", top_later},   {"workloads", top_later},
	{"queues", top_later},  {"scheduler", top_scheduler},
	{"output", top_output}, {"gpu_types", NULL},
	{"models", NULL},
};

/* Expected jobs of a workload: its count, or rate x span for an open poisson stream. */
static double expected_jobs(const struct scenario *sc, const struct workload_spec *w)
{
	if (w->count >= 0)
		return (double)w->count;
	double span = sim_seconds(sc->horizon - w->arrival.from);
	return span > 0 ? ceil(w->arrival.rate * span) : 0;
}

/* Every workload asks for a resource that some pool offers (memory aside: a pod
 * too large for every unit is a finding of the run, not an input error). */
static int check_hosted(struct loader *ld, const struct ynode *list)
{
	const struct scenario *sc = ld->sc;
	for (size_t i = 0; i < sc->n_workloads; i++) {
		const struct workload_spec *w = &sc->workloads[i];
		bool offered = false;
		int32_t widest = 0;
		for (size_t p = 0; p < sc->n_pools; p++) {
			const struct pool_spec *ps = &sc->pools[p];
			offered |= scenario_pool_offers(ps, w);
			if (scenario_pool_offers(ps, w) && ps->gpus_per_node > widest)
				widest = ps->gpus_per_node;
		}
		const struct ynode *item = list->items[i], *g = ynode_get(item, "gpus");
		struct srcloc at = g ? g->loc : item->loc;
		char res[80];
		if (!offered)
			return gp_located(ld->err, at,
					  "no pool offers %s; expected a pool with %s",
					  scenario_resource_name(w, res, sizeof res),
					  w->request == REQUEST_MIG ? "a MIG layout that includes it"
					  : w->request == REQUEST_MILLI
						  ? "sharing: fractional"
						  : "sharing exclusive, time-slicing, mps or fractional");
		if (w->request == REQUEST_GPUS && w->gpus > widest)
			return gp_located(ld->err, at,
					  "no node offering %s has %d GPUs; the largest has %d",
					  scenario_resource_name(w, res, sizeof res), (int)w->gpus,
					  (int)widest);
	}
	return GP_OK;
}

static int check_job_limit(struct loader *ld)
{
	const struct scenario *sc = ld->sc;
	double total = 0;
	for (size_t i = 0; i < sc->n_workloads; i++) {
		total += expected_jobs(sc, &sc->workloads[i]);
		if (total > (double)ld->max_jobs)
			return gp_located(
				ld->err, sc->workloads[i].loc,
				"the scenario submits %.0f jobs, above the limit of %lld; "
				"expected fewer, or raise the limit with the environment "
				"variable GPUPLAN_MAX_JOBS",
				total, (long long)ld->max_jobs);
	}
	return GP_OK;
}

static int load_root(struct loader *ld, const struct ynode *root)
{
	struct scenario *sc = ld->sc;
	int rc = walk_map(ld, root, "scenario", "a map with name, pools and workloads", top_rules,
			  N_OF(top_rules), NULL);
	if (!rc)
		rc = require(ld, root, "name", "scenario", "a name like eval-window");
	if (!rc)
		rc = require(ld, root, "pools", "scenario", "a list of pools");
	if (!rc)
		rc = require(ld, root, "workloads", "scenario", "a list of workloads");
	if (!rc)
		rc = load_pools(ld, ynode_get(root, "pools"));
	if (!rc)
		rc = load_queues(ld, ynode_get(root, "queues"));
	if (!rc)
		rc = load_workloads(ld, ynode_get(root, "workloads"));
	if (!rc)
		rc = check_hosted(ld, ynode_get(root, "workloads"));
	if (!rc)
		rc = check_job_limit(ld);
	if (!rc && !sc->output.db) {
		size_t n = strlen(sc->name) + sizeof "results/.db";
		sc->output.db = gp_xmalloc(n);
		snprintf(sc->output.db, n, "results/%s.db", sc->name);
	}
	return rc;
}

/* --- loading ----------------------------------------------------------------- */

static char *dir_of(const char *path)
{
	const char *slash = strrchr(path, '/');
	if (!slash)
		return gp_xstrdup(".");
	size_t n = slash == path ? 1 : (size_t)(slash - path);
	char *dir = gp_xmalloc(n + 1);
	memcpy(dir, path, n);
	dir[n] = '\0';
	return dir;
}

static int read_file(const char *path, char **text, size_t *len, struct gp_err *err)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return gp_errorf(err, GP_EINPUT, "%s: error: cannot read: %s", path,
				 strerror(errno));
	size_t cap = 4096, n = 0;
	char *buf = gp_xmalloc(cap);
	while ((n += fread(buf + n, 1, cap - n, f)) == cap)
		buf = gp_xrealloc(buf, cap *= 2);
	int failed = ferror(f), saved = errno;
	fclose(f);
	if (failed) {
		free(buf);
		return gp_errorf(err, GP_EINPUT, "%s: error: cannot read: %s", path,
				 strerror(saved));
	}
	*text = buf;
	*len = n;
	return GP_OK;
}

static int max_jobs(int64_t *out, struct gp_err *err)
{
	const char *s = getenv("GPUPLAN_MAX_JOBS");
	*out = SCENARIO_DEFAULT_MAX_JOBS;
	if (!s || !*s)
		return GP_OK;
	if (units_integer(s, out) || *out < 1)
		return gp_errorf(
			err, GP_EINPUT,
			"GPUPLAN_MAX_JOBS: error: '%s' is invalid; expected a whole number >= 1",
			s);
	return GP_OK;
}

/* Applies the --set overrides in order and records them for the params table. */
static int apply_sets(struct scenario *sc, const char *const *sets, size_t n, struct gp_err *err)
{
	sc->params = gp_xcalloc(n, sizeof *sc->params);
	for (size_t i = 0; i < n; i++) {
		int rc = ytree_set(sc->tree, sets[i], err);
		if (rc)
			return rc;
		const char *eq = strchr(sets[i], '=');
		struct param *p = &sc->params[sc->n_params++];
		p->key = gp_xmalloc((size_t)(eq - sets[i]) + 1);
		memcpy(p->key, sets[i], (size_t)(eq - sets[i]));
		p->key[eq - sets[i]] = '\0';
		p->value = gp_xstrdup(eq + 1);
	}
	return GP_OK;
}

static int load(struct scenario *sc, const char *const *sets, size_t n_sets, struct gp_err *err)
{
	struct loader ld = {sc, err, 0, 0};
	int rc = max_jobs(&ld.max_jobs, err);
	if (rc)
		return rc;
	char *text = NULL;
	size_t len = 0;
	rc = read_file(sc->path, &text, &len, err);
	if (rc)
		return rc;
	sha256_hex(text, len, sc->sha256);
	rc = ytree_parse(sc->path, text, len, &sc->tree, err);
	free(text);
	if (!rc)
		rc = apply_sets(sc, sets, n_sets, err);
	return rc ? rc : load_root(&ld, sc->tree->root);
}

int scenario_load(const char *path, const char *const *sets, size_t n_sets, struct scenario **out,
		  struct gp_err *err)
{
	struct scenario *sc = gp_xcalloc(1, sizeof *sc);
	sc->path = gp_xstrdup(path);
	sc->dir = dir_of(path);
	sc->seed = 1;
	sc->start_epoch = DEFAULT_START_EPOCH;
	sc->scheduler = (struct scheduler_spec){ORDER_FIFO, SCORING_MOST_ALLOCATED, WINDOW_FIT};
	sc->output = (struct output_spec){NULL, DEFAULT_STEP, true, false};
	int rc = load(sc, sets, n_sets, err);
	if (rc) {
		scenario_free(sc);
		sc = NULL;
	}
	*out = sc;
	return rc;
}

/* --- freeing and queries --------------------------------------------------- */

static void free_kvs(struct kv *kv, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(kv[i].key);
		free(kv[i].value);
	}
	free(kv);
}

static void free_pool(struct pool_spec *p)
{
	free(p->name);
	free_kvs(p->labels, p->n_labels);
	for (size_t i = 0; i < p->n_taints; i++) {
		free(p->taints[i].key);
		free(p->taints[i].value);
	}
	free(p->taints);
	free(p->windows);
	free(p->sharing.layout);
}

static void free_workload(struct workload_spec *w)
{
	free(w->name);
	free(w->arrival.trace_path);
	free(w->arrival.rows);
	free_kvs(w->node_selector, w->n_node_selector);
	for (size_t i = 0; i < w->n_tolerations; i++) {
		free(w->tolerations[i].key);
		free(w->tolerations[i].value);
	}
	free(w->tolerations);
	for (size_t i = 0; i < w->n_gpu_spec; i++)
		free(w->gpu_spec[i]);
	free(w->gpu_spec);
	free(w->mig_profile);
}

void scenario_free(struct scenario *sc)
{
	if (!sc)
		return;
	for (size_t i = 0; i < sc->n_pools; i++)
		free_pool(&sc->pools[i]);
	free(sc->pools);
	for (size_t i = 0; i < sc->n_workloads; i++)
		free_workload(&sc->workloads[i]);
	free(sc->workloads);
	for (size_t i = 0; i < sc->n_queues; i++)
		free(sc->queues[i].name);
	free(sc->queues);
	for (size_t i = 0; i < sc->n_params; i++) {
		free(sc->params[i].key);
		free(sc->params[i].value);
	}
	free(sc->params);
	free(sc->output.db);
	free(sc->name);
	free(sc->path);
	free(sc->dir);
	ytree_free(sc->tree);
	free(sc);
}

int scenario_pool_index(const struct scenario *sc, const char *name)
{
	for (size_t i = 0; i < sc->n_pools; i++)
		if (sc->pools[i].name && !strcmp(sc->pools[i].name, name))
			return (int)i;
	return -1;
}

int scenario_workload_index(const struct scenario *sc, const char *name)
{
	for (size_t i = 0; i < sc->n_workloads; i++)
		if (sc->workloads[i].name && !strcmp(sc->workloads[i].name, name))
			return (int)i;
	return -1;
}

int scenario_queue_index(const struct scenario *sc, const char *name)
{
	for (size_t i = 0; i < sc->n_queues; i++)
		if (sc->queues[i].name && !strcmp(sc->queues[i].name, name))
			return (int)i;
	return -1;
}

int64_t scenario_capacity_gpus(const struct scenario *sc)
{
	int64_t gpus = 0;
	for (size_t i = 0; i < sc->n_pools; i++)
		gpus += (int64_t)sc->pools[i].nodes * sc->pools[i].gpus_per_node;
	return gpus;
}

int64_t scenario_job_count(const struct scenario *sc)
{
	double total = 0;
	for (size_t i = 0; i < sc->n_workloads; i++)
		total += expected_jobs(sc, &sc->workloads[i]);
	return total >= 9.2e18 ? INT64_MAX : (int64_t)total;
}

const char *scenario_resource_name(const struct workload_spec *w, char *buf, size_t len)
{
	if (w->request == REQUEST_MIG)
		snprintf(buf, len, "nvidia.com/mig-%s", w->mig_profile);
	else
		snprintf(buf, len, "nvidia.com/gpu");
	return buf;
}

bool scenario_pool_offers(const struct pool_spec *p, const struct workload_spec *w)
{
	switch (w->request) {
	case REQUEST_GPUS: return p->sharing.mode != SHARING_MIG;
	case REQUEST_MILLI: return p->sharing.mode == SHARING_FRACTIONAL;
	case REQUEST_MIG:
		for (size_t i = 0; i < p->sharing.n_layout; i++)
			if (!strcmp(p->sharing.layout[i]->name, w->mig_profile))
				return true;
		return false;
	}
	return false;
}

/* The memory one unit of the pool guarantees a pod; 0 when it is not isolated. */
static double unit_memory(const struct pool_spec *p, const struct workload_spec *w)
{
	const struct sharing *sh = &p->sharing;
	switch (sh->mode) {
	case SHARING_MPS: return p->gpu->memory_bytes / sh->replicas;
	case SHARING_FRACTIONAL:
		return w->request == REQUEST_MILLI ? p->gpu->memory_bytes * w->milli / 1000.0
						   : p->gpu->memory_bytes;
	case SHARING_MIG:
		for (size_t i = 0; i < sh->n_layout; i++)
			if (!strcmp(sh->layout[i]->name, w->mig_profile))
				return sh->layout[i]->memory_bytes;
		return 0;
	case SHARING_EXCLUSIVE:
	case SHARING_TIME_SLICING: break;
	}
	return 0;
}

double scenario_gpu_equivalent(const struct pool_spec *p, const struct workload_spec *w)
{
	if (!scenario_pool_offers(p, w))
		return 0;
	double limit = unit_memory(p, w);
	if (limit > 0 && w->vram_bytes > limit)
		return 0; /* MPS, MIG and fractional enforce memory at placement */
	switch (w->request) {
	case REQUEST_MILLI: return w->milli / 1000.0;
	case REQUEST_MIG:
		for (size_t i = 0; i < p->sharing.n_layout; i++)
			if (!strcmp(p->sharing.layout[i]->name, w->mig_profile))
				return p->sharing.layout[i]->compute_slices / 7.0;
		return 0;
	case REQUEST_GPUS: break;
	}
	if (w->gpus > p->gpus_per_node)
		return 0;
	bool shared = p->sharing.mode == SHARING_TIME_SLICING || p->sharing.mode == SHARING_MPS;
	return shared ? (double)w->gpus / p->sharing.replicas : (double)w->gpus;
}
