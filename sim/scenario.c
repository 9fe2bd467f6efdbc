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
#include "gpuplan/openb.h"
#include "gpuplan/requests.h"
#include "gpuplan/sha256.h"
#include "gpuplan/trace.h"
#include "gpuplan/units.h"
#include "gpuplan/ytree.h"

#define N_OF(a) (sizeof(a) / sizeof *(a))

#define DEFAULT_START_EPOCH INT64_C(1767225600) /* 2026-01-01T00:00:00Z */
#define DEFAULT_STEP 0 /* adaptive: collect.h chooses it for the span */
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

/* A DNS subdomain (a key's prefix): up to 253 lower-case letters, digits, '-'
 * and '.', starting and ending with a letter or digit. */
static bool dns_subdomain_ok(const char *s, size_t n)
{
	if (n == 0 || n > 253 || !isalnum((unsigned char)s[0]) || !isalnum((unsigned char)s[n - 1]))
		return false;
	for (size_t i = 0; i < n; i++)
		if (!(islower((unsigned char)s[i]) || isdigit((unsigned char)s[i]) || s[i] == '-' ||
		      s[i] == '.'))
			return false;
	return true;
}

#define LABEL_KEY_HINT                                                                             \
	"an optional DNS prefix and '/', then up to 63 letters, digits, '-', '_' or '.' "          \
	"starting and ending with a letter or digit, like topology.kubernetes.io/zone"

/* A label, taint or toleration key, as the Kubernetes API server checks it:
 * the scheduler could never match a key the API would have refused. */
static int check_label_key(struct loader *ld, struct srcloc loc, const char *what,
			   const char *where, const char *key)
{
	const char *slash = strchr(key, '/');
	bool ok = slash ? dns_subdomain_ok(key, (size_t)(slash - key)) &&
				  label_name_ok(slash + 1, strlen(slash + 1))
			: label_name_ok(key, strlen(key));
	if (ok)
		return GP_OK;
	return gp_located(ld->err, loc, "invalid %s '%s' in %s; expected " LABEL_KEY_HINT, what, key,
			  where);
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
		int rc = check_label_key(ld, v->key_locs[i], "label key", what, v->keys[i]);
		if (rc)
			return rc;
		(*out)[i].key = gp_xstrdup(v->keys[i]);
		rc = get_text(ld, v->items[i], what, &(*out)[i].value);
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
	struct taint *t = obj;
	int rc = get_string(ld, v, "taint key", "a label key like dedicated", &t->key);
	return rc ? rc : check_label_key(ld, v->loc, "label key", "taint", t->key);
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

/* powered: always (the default) | window: the pool's nodes are up only in its windows,
 * so idle capacity is charged only then. */
static int pool_powered(struct loader *ld, const struct ynode *v, void *obj)
{
	static const char *const names[] = {"always", "window"};
	int k = 0;
	int rc = get_enum(ld, v, "powered", names, 2, &k);
	((struct pool_spec *)obj)->powered_in_windows = k == 1;
	return rc;
}

static int pool_startup(struct loader *ld, const struct ynode *v, void *obj)
{
	return get_duration(ld, v, "startup", false, &((struct pool_spec *)obj)->startup);
}

static char *resolve(const char *dir, const char *path);

/* trace: an openb node list in place of nodes, gpu, gpus_per_node, cpu and
 * memory; the entry becomes one pool per node shape (openb_expand_pools). */
static int pool_trace(struct loader *ld, const struct ynode *v, void *obj)
{
	struct pool_spec *p = obj;
	char *path = NULL;
	int rc = get_string(ld, v, "trace", "a path to an openb node list like "
			    "openb_node_list_gpu_node.csv", &path);
	if (rc)
		return rc;
	free(p->trace_path);
	p->trace_path = resolve(ld->sc->dir, path);
	p->trace_loc = v->loc;
	free(path);
	return GP_OK;
}

static int pool_format(struct loader *ld, const struct ynode *v, void *obj)
{
	static const char *const names[] = {"openb"};
	int f = 0;
	(void)obj;
	return get_enum(ld, v, "node list format", names, N_OF(names), &f);
}

/* An openb entry: the node list decides the nodes; sharing defaults to fractional. */
static int check_openb_pool(struct loader *ld, const struct ynode *item, struct pool_spec *p)
{
	static const char *const from_list[] = {"nodes", "gpu", "gpus_per_node", "cpu", "memory"};
	for (size_t i = 0; i < item->n; i++)
		for (size_t k = 0; k < N_OF(from_list); k++)
			if (!strcmp(item->keys[i], from_list[k]))
				return gp_located(ld->err, item->key_locs[i],
						  "%s comes from the node list (one node per row); "
						  "expected no %s with a trace", item->keys[i],
						  item->keys[i]);
	int rc = require(ld, item, "format", "pool", "format: openb beside the trace");
	if (!rc && p->sharing.mode == SHARING_MIG)
		return gp_located(ld->err, p->sharing.loc, "an openb node list shares GPUs by milli; "
				  "expected sharing fractional or exclusive");
	if (!ynode_get(item, "sharing"))
		p->sharing.mode = SHARING_FRACTIONAL;
	return rc;
}

static const struct key_rule pool_rules[] = {
	{"trace", pool_trace},     {"format", pool_format},
	{"name", pool_name},       {"nodes", pool_nodes},
	{"gpu", pool_gpu},         {"gpus_per_node", pool_gpus_per_node},
	{"cpu", pool_cpu},         {"memory", pool_memory},
	{"labels", pool_labels},   {"taints", pool_taints},
	{"sharing", pool_sharing}, {"windows", pool_windows},
	{"price", pool_price},     {"startup", pool_startup},
	{"powered", pool_powered},
};

static int load_pool(struct loader *ld, const struct ynode *item, struct pool_spec *p)
{
	p->loc = item->loc;
	p->sharing.overhead = 0.05;
	p->sharing.replicas = 1;
	int rc = walk_map(ld, item, "pool", POOL_HINT, pool_rules, N_OF(pool_rules), p);
	if (!rc)
		rc = require(ld, item, "name", "pool", "a name like batch");
	if (!rc && p->trace_path)
		return check_openb_pool(ld, item, p);
	if (!rc && ynode_get(item, "format"))
		return gp_located(ld->err, ynode_get(item, "format")->loc,
				  "format applies to a node list; expected a trace beside it");
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

/* Entries with an openb node list become their pools; names stay distinct. */
static int expand_openb_pools(struct loader *ld)
{
	struct scenario *sc = ld->sc;
	int rc = openb_expand_pools(sc, ld->err);
	for (size_t i = 0; i < sc->n_pools && !rc; i++) {
		if (sc->pools[i].gpus_per_node > ld->widest_node)
			ld->widest_node = sc->pools[i].gpus_per_node;
		for (size_t j = 0; j < i; j++)
			if (!strcmp(sc->pools[j].name, sc->pools[i].name))
				return gp_located(ld->err, sc->pools[i].loc,
						  "pool name '%s' (of an openb node list) is also the "
						  "name of the pool at line %d; expected distinct names",
						  sc->pools[i].name, sc->pools[j].loc.line);
	}
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
	return expand_openb_pools(ld);
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

static int queue_cohort(struct loader *ld, const struct ynode *v, void *obj)
{
	return get_item_name(ld, v, "cohort", &((struct queue_spec *)obj)->cohort);
}

/* The resources a quota may name, and how their amounts read. */
static int quota_amount(struct loader *ld, const char *key, const struct ynode *v, double *out)
{
	if (!strcmp(key, "memory"))
		return get_size(ld, v, "memory quota", out);
	if (!strcmp(key, "cpu") || !strcmp(key, "nvidia.com/gpu") ||
	    !strncmp(key, "nvidia.com/mig-", 15))
		return get_amount(ld, v, key, "an amount >= 0, like 4", out);
	return gp_located(ld->err, v->loc, "unknown resource '%s'; expected nvidia.com/gpu, "
			  "nvidia.com/mig-<profile>, cpu or memory", key);
}

static struct quota_entry *quota_line(struct queue_spec *q, const char *resource)
{
	for (size_t i = 0; i < q->n_quota; i++)
		if (!strcmp(q->quota[i].resource, resource))
			return &q->quota[i];
	q->quota = gp_xrealloc(q->quota, (q->n_quota + 1) * sizeof *q->quota);
	struct quota_entry *e = &q->quota[q->n_quota++];
	*e = (struct quota_entry){gp_xstrdup(resource), INFINITY, INFINITY, {0}};
	return e;
}

/* quota: {nvidia.com/gpu: 4, ...} and borrowing_limit: {nvidia.com/gpu: 2} */
static int quota_map(struct loader *ld, const struct ynode *v, struct queue_spec *q, bool limit)
{
	if (v->kind != YNODE_MAP)
		return bad_value(ld, v, limit ? "borrowing_limit" : "quota",
				 "a map like {nvidia.com/gpu: 4}");
	for (size_t i = 0; i < v->n; i++) {
		double amount;
		int rc = quota_amount(ld, v->keys[i], v->items[i], &amount);
		if (rc)
			return rc;
		struct quota_entry *e = quota_line(q, v->keys[i]);
		if (limit)
			e->borrowing_limit = amount;
		else
			e->nominal = amount;
		e->loc = v->key_locs[i];
	}
	return GP_OK;
}

static int queue_quota(struct loader *ld, const struct ynode *v, void *obj)
{
	return quota_map(ld, v, obj, false);
}

static int queue_borrowing_limit(struct loader *ld, const struct ynode *v, void *obj)
{
	return quota_map(ld, v, obj, true);
}

static int preemption_reclaim(struct loader *ld, const struct ynode *v, void *obj)
{
	static const char *const names[] = {"Never", "LowerPriority", "Any"};
	int k = 0;
	int rc = get_enum(ld, v, "reclaim_within_cohort", names, N_OF(names), &k);
	((struct queue_spec *)obj)->reclaim = (enum reclaim_policy)k;
	return rc;
}

static const struct key_rule preemption_rules[] = {{"reclaim_within_cohort", preemption_reclaim}};

static int queue_preemption(struct loader *ld, const struct ynode *v, void *obj)
{
	return walk_map(ld, v, "preemption", "a map like {reclaim_within_cohort: Any}",
			preemption_rules, N_OF(preemption_rules), obj);
}

static const struct key_rule queue_rules[] = {
	{"name", queue_name},   {"strategy", queue_strategy},
	{"cohort", queue_cohort}, {"quota", queue_quota},
	{"borrowing_limit", queue_borrowing_limit}, {"preemption", queue_preemption},
};

/* A borrowing limit needs a quota to borrow beyond, and a cohort to borrow from. */
static int check_queue(struct loader *ld, const struct queue_spec *q)
{
	for (size_t i = 0; i < q->n_quota; i++) {
		const struct quota_entry *e = &q->quota[i];
		if (isinf(e->nominal))
			return gp_located(ld->err, e->loc, "borrowing_limit for %s without a quota "
					  "for it; expected %s in quota too", e->resource, e->resource);
		if (!isinf(e->borrowing_limit) && !q->cohort)
			return gp_located(ld->err, e->loc, "borrowing_limit without a cohort to "
					  "borrow from; expected cohort: NAME in queue %s", q->name);
	}
	return GP_OK;
}

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
		if (!rc)
			rc = check_queue(ld, q);
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
	static const char *const names[] = {"fit", "preempt"};
	int p = 0;
	int rc = get_enum(ld, v, "window_policy", names, N_OF(names), &p);
	((struct scheduler_spec *)obj)->window_policy = (enum window_policy)p;
	return rc;
}

static int sched_gpu_policy(struct loader *ld, const struct ynode *v, void *obj)
{
	int p = 0;
	int rc = get_enum(ld, v, "gpu_policy", gpupolicy_names, GPU_POLICY_COUNT, &p);
	((struct scheduler_spec *)obj)->gpu_policy = (enum gpu_policy)p;
	return rc;
}

static const struct key_rule scheduler_rules[] = {
	{"order", sched_order},
	{"scoring", sched_scoring},
	{"window_policy", sched_window_policy},
	{"gpu_policy", sched_gpu_policy},
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

static struct inference_spec *new_inference(void);

static int workload_kind(struct loader *ld, const struct ynode *v, void *obj)
{
	int k = 0;
	struct workload_spec *w = obj;
	int rc = get_enum(ld, v, "kind", kind_names, N_OF(kind_names), &k);
	w->kind = (enum workload_kind)k;
	/* Read before the other keys (load_workload), so theirs can land here. */
	if (!rc && k == WORKLOAD_INFERENCE && !w->inference)
		w->inference = new_inference();
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

static int workload_checkpoint(struct loader *ld, const struct ynode *v, void *obj)
{
	return get_duration(ld, v, "checkpoint", true, &((struct workload_spec *)obj)->checkpoint);
}

static int workload_startup(struct loader *ld, const struct ynode *v, void *obj)
{
	return get_duration(ld, v, "startup", false, &((struct workload_spec *)obj)->startup);
}

static int get_pass_rate(struct loader *ld, const struct ynode *v, double *out)
{
	if (v->kind != YNODE_SCALAR || units_number(v->value, out) || *out < 0 || *out > 1)
		return bad_value(ld, v, "pass_rate", "a probability from 0 to 1, like 0.99");
	return GP_OK;
}

/* quality: {pass_rate: p} or {pass_rate: {fp16: p, int8: q, ...}}; the rate for
 * the workload's own quantization is resolved in derive_quality. */
static int quality_pass_rate(struct loader *ld, const struct ynode *v, void *obj)
{
	struct workload_spec *w = obj;
	if (v->kind != YNODE_MAP)
		return get_pass_rate(ld, v, &w->pass_rate);
	for (size_t i = 0; i < v->n; i++) {
		enum quant q;
		double p;
		if (quant_parse(v->keys[i], &q))
			return unknown_word(ld, v->key_locs[i], "quantization", v->keys[i], quant_names,
					    QUANT_COUNT);
		int rc = get_pass_rate(ld, v->items[i], &p);
		if (rc)
			return rc;
	}
	return GP_OK;
}

static const struct key_rule quality_rules[] = {{"pass_rate", quality_pass_rate}};

static int workload_quality(struct loader *ld, const struct ynode *v, void *obj)
{
	return walk_map(ld, v, "quality", "a map like {pass_rate: 0.99}", quality_rules,
			N_OF(quality_rules), obj);
}

/* A per-quantization pass rate needs the workload's quantization (fp16 without one). */
static int derive_quality(struct loader *ld, const struct ynode *item, struct workload_spec *w)
{
	const struct ynode *rates = ynode_get(ynode_get(item, "quality"), "pass_rate");
	if (!rates || rates->kind != YNODE_MAP)
		return GP_OK;
	const char *want = quant_name(w->model ? (enum quant)w->quantization : QUANT_FP16);
	for (size_t i = 0; i < rates->n; i++) {
		enum quant q;
		if (!quant_parse(rates->keys[i], &q) && !strcmp(quant_name(q), want))
			return get_pass_rate(ld, rates->items[i], &w->pass_rate);
	}
	return gp_located(ld->err, rates->loc, "pass_rate has no entry for %s; expected one for "
			  "the workload's quantization", want);
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
	int rc = get_text(ld, v, "toleration key", &t->key);
	if (rc || !t->key[0]) /* empty: with Exists, every key */
		return rc;
	return check_label_key(ld, v->loc, "label key", "toleration", t->key);
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

/* --- placement rules: affinity, topology_spread, pods, gang -------------- */

#define AFFINITY_HINT "a map like {key: nvidia.com/gpu.product, operator: In, values: [NVIDIA-H100-80GB-HBM3]}"

static const char *const affinity_op_names[] = {"In", "NotIn", "Exists", "DoesNotExist"};

static int affinity_key(struct loader *ld, const struct ynode *v, void *obj)
{
	struct affinity_expr *e = obj;
	int rc = get_string(ld, v, "affinity key", "a label key like nvidia.com/gpu.product", &e->key);
	return rc ? rc : check_label_key(ld, v->loc, "label key", "affinity", e->key);
}

static int affinity_operator(struct loader *ld, const struct ynode *v, void *obj)
{
	int op = 0;
	int rc = get_enum(ld, v, "affinity operator", affinity_op_names, N_OF(affinity_op_names), &op);
	((struct affinity_expr *)obj)->op = (enum affinity_op)op;
	return rc;
}

static int affinity_values(struct loader *ld, const struct ynode *v, void *obj)
{
	struct affinity_expr *e = obj;
	int rc = expect_list(ld, v, "affinity values", "a list of label values like [a, b]");
	if (rc)
		return rc;
	e->values = gp_xcalloc(v->n ? v->n : 1, sizeof *e->values);
	e->n_values = v->n;
	for (size_t i = 0; i < v->n && !rc; i++)
		rc = get_text(ld, v->items[i], "affinity value", &e->values[i]);
	return rc;
}

static const struct key_rule affinity_rules[] = {
	{"key", affinity_key}, {"operator", affinity_operator}, {"values", affinity_values}};

/* Kubernetes rules: In and NotIn need values; Exists and DoesNotExist take none. */
static int load_affinity_expr(struct loader *ld, const struct ynode *item, struct affinity_expr *e)
{
	int rc = walk_map(ld, item, "affinity requirement", AFFINITY_HINT, affinity_rules,
			  N_OF(affinity_rules), e);
	if (!rc)
		rc = require(ld, item, "key", "affinity requirement", "a label key");
	if (!rc)
		rc = require(ld, item, "operator", "affinity requirement",
			     "In, NotIn, Exists or DoesNotExist");
	if (rc)
		return rc;
	bool listed = e->op == AFFINITY_IN || e->op == AFFINITY_NOT_IN;
	if (listed && e->n_values == 0)
		return gp_located(ld->err, item->loc,
				  "affinity operator %s needs values; expected values: [A, B]",
				  affinity_op_names[e->op]);
	if (!listed && ynode_get(item, "values"))
		return gp_located(ld->err, ynode_get(item, "values")->loc,
				  "affinity operator %s takes no values; expected In or NotIn "
				  "with values, or no values",
				  affinity_op_names[e->op]);
	return GP_OK;
}

static int workload_affinity(struct loader *ld, const struct ynode *v, void *obj)
{
	struct workload_spec *w = obj;
	int rc = expect_list(ld, v, "affinity", "a list like [" AFFINITY_HINT "]");
	if (rc)
		return rc;
	w->affinity = gp_xcalloc(v->n ? v->n : 1, sizeof *w->affinity);
	w->n_affinity = v->n;
	for (size_t i = 0; i < v->n && !rc; i++)
		rc = load_affinity_expr(ld, v->items[i], &w->affinity[i]);
	return rc;
}

static const char *const spread_when_names[] = {"DoNotSchedule", "ScheduleAnyway"};

static int spread_key(struct loader *ld, const struct ynode *v, void *obj)
{
	struct topology_spread *t = obj;
	int rc = get_string(ld, v, "topology_spread key",
			    "a label key like topology.kubernetes.io/zone", &t->key);
	return rc ? rc : check_label_key(ld, v->loc, "label key", "topology_spread", t->key);
}

static int spread_max_skew(struct loader *ld, const struct ynode *v, void *obj)
{
	int64_t n = 0;
	int rc = get_int(ld, v, "max_skew", 1, INT32_MAX, &n);
	((struct topology_spread *)obj)->max_skew = (int32_t)n;
	return rc;
}

static int spread_when(struct loader *ld, const struct ynode *v, void *obj)
{
	int when = 0;
	int rc = get_enum(ld, v, "when_unsatisfiable", spread_when_names, N_OF(spread_when_names),
			  &when);
	((struct topology_spread *)obj)->when = (enum spread_when)when;
	return rc;
}

static const struct key_rule spread_rules[] = {{"key", spread_key},
					       {"max_skew", spread_max_skew},
					       {"when_unsatisfiable", spread_when}};

static int workload_topology_spread(struct loader *ld, const struct ynode *v, void *obj)
{
	struct topology_spread *t = &((struct workload_spec *)obj)->spread;
	t->max_skew = 1;
	t->when = SPREAD_DO_NOT_SCHEDULE;
	int rc = walk_map(ld, v, "topology_spread",
			  "a map like {key: topology.kubernetes.io/zone, max_skew: 1, "
			  "when_unsatisfiable: DoNotSchedule}",
			  spread_rules, N_OF(spread_rules), t);
	if (!rc)
		rc = require(ld, v, "key", "topology_spread", "a label key like topology.kubernetes.io/zone");
	return rc;
}

static int workload_pods(struct loader *ld, const struct ynode *v, void *obj)
{
	int64_t n = 0;
	int rc = get_int(ld, v, "pods", 1, 10000, &n);
	((struct workload_spec *)obj)->pods = (int32_t)n;
	return rc;
}

static int workload_gang(struct loader *ld, const struct ynode *v, void *obj)
{
	return get_bool(ld, v, "gang", &((struct workload_spec *)obj)->gang);
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
	static const char *const names[] = {"csv", "openb"};
	int f = 0;
	if (v->kind == YNODE_SCALAR && !strcmp(v->value, "azure"))
		return gp_located(ld->err, v->loc, "format 'azure' is for inference requests; "
				  "expected csv or openb");
	int rc = get_enum(ld, v, "format", names, N_OF(names), &f);
	((struct arrival *)obj)->format = f ? TRACE_OPENB : TRACE_CSV;
	return rc;
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
	if (!rc && a->kind == ARRIVAL_TRACE && a->format == TRACE_OPENB)
		return openb_read_pods(a->trace_path, ynode_get(v, "trace")->loc,
				       ld->sc->experiment.protocol == EXPERIMENT_NONE, &a->pods,
				       &a->n_pods, ld->err);
	if (!rc && a->kind == ARRIVAL_TRACE) {
		struct trace_limits lim = {ld->widest_node, ld->max_jobs};
		rc = trace_read_csv(a->trace_path, ynode_get(v, "trace")->loc, &lim, &a->rows,
				    &a->n_rows, ld->err);
	}
	return rc;
}

/* --- inference workloads ------------------------------------------------- */

/*
 * kind: inference (DESIGN.md section 5, "Inference servers").  The keys of
 * a server go to w->inference, allocated with the kind (which is read before
 * the other keys).  finish_inference resolves what depends on several keys:
 * GPUs against tensor_parallel, the KV-cache type, the typical context and
 * whether the model fits a unit of some pool at that TP degree.
 */
#define REQUESTS_HINT                                                                              \
	"{process: poisson, rate: 5/s, prompt_tokens: 1000, output_tokens: 200} or {trace: PATH, "  \
	"format: azure}"
#define TOKENS_HINT "a number of tokens like 512, or {dist: lognormal, mean: 1000, sigma: 1}"
#define INFER_DEFAULT_MAX_BATCH 256       /* vLLM's max_num_seqs */
#define INFER_DEFAULT_BATCHED_TOKENS 2048 /* vLLM's max_num_batched_tokens with chunked prefill */
#define INFER_DEFAULT_LOAD_BANDWIDTH 2e9  /* bytes/s: safetensors from local NVMe or a warm cache */

static struct inference_spec *new_inference(void)
{
	struct inference_spec *in = gp_xcalloc(1, sizeof *in);
	in->replicas = in->max_replicas = 1;
	in->scale_interval = 15 * SIM_SECOND;
	in->scale_down_window = 5 * SIM_MINUTE;
	in->load_bandwidth = INFER_DEFAULT_LOAD_BANDWIDTH;
	in->tensor_parallel = 1;
	in->max_batch = INFER_DEFAULT_MAX_BATCH;
	in->max_batched_tokens = INFER_DEFAULT_BATCHED_TOKENS;
	in->kv_cache = -1; /* resolved from the weights */
	in->route = ROUTE_ROUND_ROBIN;
	in->requests.speedup = 1;
	in->requests.repeat = 1;
	in->requests.count = -1;
	in->slo.percentile = 99;
	return in;
}

/* The server keys exist only beside kind: inference. */
static struct inference_spec *inference_of(struct loader *ld, const struct ynode *v, void *obj,
					   const char *key)
{
	struct workload_spec *w = obj;
	if (!w->inference)
		gp_located(ld->err, v->loc, "%s applies to inference workloads; expected kind: "
			   "inference beside it", key);
	return w->inference;
}

static int infer_replicas_min(struct loader *ld, const struct ynode *v, void *obj)
{
	int64_t n = 0;
	int rc = get_int(ld, v, "min", 0, 100000, &n);
	((struct inference_spec *)obj)->replicas = (int32_t)n;
	return rc;
}

static int infer_replicas_max(struct loader *ld, const struct ynode *v, void *obj)
{
	int64_t n = 0;
	int rc = get_int(ld, v, "max", 1, 100000, &n);
	((struct inference_spec *)obj)->max_replicas = (int32_t)n;
	return rc;
}

static int infer_target_queue(struct loader *ld, const struct ynode *v, void *obj)
{
	return get_positive(ld, v, "target_queue", "a number of waiting requests > 0, like 4",
			    &((struct inference_spec *)obj)->target_queue);
}

static int infer_interval(struct loader *ld, const struct ynode *v, void *obj)
{
	return get_duration(ld, v, "interval", true, &((struct inference_spec *)obj)->scale_interval);
}

static int infer_scale_down(struct loader *ld, const struct ynode *v, void *obj)
{
	return get_duration(ld, v, "scale_down_window", false,
			    &((struct inference_spec *)obj)->scale_down_window);
}

static int infer_load_bandwidth(struct loader *ld, const struct ynode *v, void *obj)
{
	double *bw = &((struct inference_spec *)obj)->load_bandwidth;
	if (v->kind != YNODE_SCALAR || units_bandwidth(v->value, bw) || !(*bw > 0))
		return bad_value(ld, v, "load_bandwidth", "a bandwidth like 2GB/s");
	return GP_OK;
}

static const struct key_rule replicas_rules[] = {
	{"min", infer_replicas_min},        {"max", infer_replicas_max},
	{"target_queue", infer_target_queue}, {"interval", infer_interval},
	{"scale_down_window", infer_scale_down}, {"load_bandwidth", infer_load_bandwidth},
};

#define REPLICAS_HINT "a whole number like 2, or {min: 1, max: 8, target_queue: 4}"

/* replicas: N | {min, max, target_queue, interval, scale_down_window, load_bandwidth} */
static int workload_replicas(struct loader *ld, const struct ynode *v, void *obj)
{
	struct inference_spec *in = inference_of(ld, v, obj, "replicas");
	if (!in)
		return GP_EINPUT;
	int64_t n = 0;
	if (v->kind != YNODE_MAP) {
		int rc = get_int(ld, v, "replicas", 1, 100000, &n);
		in->replicas = in->max_replicas = (int32_t)n;
		return rc;
	}
	int rc = walk_map(ld, v, "replicas", REPLICAS_HINT, replicas_rules, N_OF(replicas_rules), in);
	if (!rc)
		rc = require(ld, v, "max", "replicas", "the largest number of replicas, like 8");
	if (!rc)
		rc = require(ld, v, "target_queue", "replicas",
			     "the waiting requests per replica to scale at, like 4");
	if (!rc && !ynode_get(v, "min"))
		in->replicas = 1;
	if (!rc && in->max_replicas < in->replicas)
		return gp_located(ld->err, ynode_get(v, "max")->loc,
				  "max %d is below min %d; expected max >= min",
				  (int)in->max_replicas, (int)in->replicas);
	return rc;
}

static int workload_tensor_parallel(struct loader *ld, const struct ynode *v, void *obj)
{
	struct inference_spec *in = inference_of(ld, v, obj, "tensor_parallel");
	int64_t n = 0;
	int rc = in ? get_int(ld, v, "tensor_parallel", 1, FOOTPRINT_MAX_TP, &n) : GP_EINPUT;
	if (!rc)
		in->tensor_parallel = (int32_t)n;
	return rc;
}

static int workload_max_batch(struct loader *ld, const struct ynode *v, void *obj)
{
	struct inference_spec *in = inference_of(ld, v, obj, "max_batch");
	int64_t n = 0;
	int rc = in ? get_int(ld, v, "max_batch", 1, 100000, &n) : GP_EINPUT;
	if (!rc)
		in->max_batch = (int32_t)n;
	return rc;
}

static int workload_max_batched_tokens(struct loader *ld, const struct ynode *v, void *obj)
{
	struct inference_spec *in = inference_of(ld, v, obj, "max_batched_tokens");
	int64_t n = 0;
	int rc = in ? get_int(ld, v, "max_batched_tokens", 1, 10000000, &n) : GP_EINPUT;
	if (!rc)
		in->max_batched_tokens = (int32_t)n;
	return rc;
}

static int workload_memory_fraction(struct loader *ld, const struct ynode *v, void *obj)
{
	struct inference_spec *in = inference_of(ld, v, obj, "memory_fraction");
	return in ? get_fraction(ld, v, "memory_fraction", &in->memory_fraction) : GP_EINPUT;
}

static int workload_kv_cache(struct loader *ld, const struct ynode *v, void *obj)
{
	struct inference_spec *in = inference_of(ld, v, obj, "kv_cache");
	return in ? get_enum(ld, v, "kv_cache", quant_names, QUANT_COUNT, &in->kv_cache) : GP_EINPUT;
}

static int workload_tokenize(struct loader *ld, const struct ynode *v, void *obj)
{
	struct inference_spec *in = inference_of(ld, v, obj, "tokenize");
	return in ? get_duration(ld, v, "tokenize", false, &in->tokenize) : GP_EINPUT;
}

static int workload_route(struct loader *ld, const struct ynode *v, void *obj)
{
	static const char *const names[] = {"round-robin", "least-outstanding"};
	struct inference_spec *in = inference_of(ld, v, obj, "route");
	int r = 0;
	int rc = in ? get_enum(ld, v, "route", names, N_OF(names), &r) : GP_EINPUT;
	if (!rc)
		in->route = (enum route_policy)r;
	return rc;
}

/* slo: {ttft: 2s, tpot: 100ms, e2e: 60s, percentile: 99} */
static int slo_ttft(struct loader *ld, const struct ynode *v, void *obj)
{
	return get_duration(ld, v, "ttft", true, &((struct slo_spec *)obj)->ttft);
}

static int slo_tpot(struct loader *ld, const struct ynode *v, void *obj)
{
	return get_duration(ld, v, "tpot", true, &((struct slo_spec *)obj)->tpot);
}

static int slo_e2e(struct loader *ld, const struct ynode *v, void *obj)
{
	return get_duration(ld, v, "e2e", true, &((struct slo_spec *)obj)->e2e);
}

static int slo_percentile(struct loader *ld, const struct ynode *v, void *obj)
{
	double *p = &((struct slo_spec *)obj)->percentile;
	if (v->kind != YNODE_SCALAR || units_number(v->value, p) || !(*p > 0 && *p <= 100))
		return bad_value(ld, v, "percentile", "a percentile in (0, 100] like 99");
	return GP_OK;
}

static const struct key_rule slo_rules[] = {
	{"ttft", slo_ttft}, {"tpot", slo_tpot}, {"e2e", slo_e2e}, {"percentile", slo_percentile}};

static int workload_slo(struct loader *ld, const struct ynode *v, void *obj)
{
	struct inference_spec *in = inference_of(ld, v, obj, "slo");
	return in ? walk_map(ld, v, "slo", "a map like {ttft: 2s, tpot: 100ms, percentile: 99}",
			     slo_rules, N_OF(slo_rules), &in->slo)
		  : GP_EINPUT;
}

/* Token counts: a number, or a distribution whose parameters are tokens. */
static int tok_number(struct loader *ld, const struct ynode *v, const char *what, double lo,
		      double *out)
{
	char hint[64];
	snprintf(hint, sizeof hint, "a number of tokens >= %g", lo);
	if (v->kind != YNODE_SCALAR || units_number(v->value, out) || *out < lo || *out > 1e7)
		return bad_value(ld, v, what, hint);
	return GP_OK;
}

static int tok_mean(struct loader *ld, const struct ynode *v, void *obj)
{
	return tok_number(ld, v, "mean", 1, &((struct dist *)obj)->mean);
}

static int tok_min(struct loader *ld, const struct ynode *v, void *obj)
{
	return tok_number(ld, v, "min", 1, &((struct dist *)obj)->min);
}

static int tok_max(struct loader *ld, const struct ynode *v, void *obj)
{
	return tok_number(ld, v, "max", 1, &((struct dist *)obj)->max);
}

static const struct key_rule tok_dist_rules[] = {
	{"dist", dist_kind},   {"mean", tok_mean}, {"sigma", dist_sigma},
	{"shape", dist_shape}, {"min", tok_min},   {"max", tok_max},
};

static int load_tokens(struct loader *ld, const struct ynode *v, const char *what, struct dist *d)
{
	if (v->kind == YNODE_SCALAR) {
		d->kind = DIST_FIXED;
		return tok_number(ld, v, what, 1, &d->mean);
	}
	int rc = walk_map(ld, v, what, TOKENS_HINT, tok_dist_rules, N_OF(tok_dist_rules), d);
	if (!rc)
		rc = require(ld, v, "dist", what, "fixed, exponential, lognormal, gamma or uniform");
	if (rc)
		return rc;
	const char *const *params = dist_params[d->kind];
	const char *allowed[3] = {"dist", params[0], params[1]};
	char kind[48];
	snprintf(kind, sizeof kind, "dist %s", dist_names[d->kind]);
	for (size_t i = 0; i < 2 && params[i] && !rc; i++)
		rc = require(ld, v, params[i], kind,
			     !strcmp(params[i], "sigma") || !strcmp(params[i], "shape")
				     ? dist_param_hint(params[i])
				     : "a number of tokens");
	if (!rc)
		rc = only_keys(ld, v, allowed, N_OF(allowed), kind);
	if (!rc && d->kind == DIST_UNIFORM && d->max < d->min)
		return gp_located(ld->err, ynode_get(v, "max")->loc,
				  "max is below min; expected min <= max");
	return rc;
}

static int req_process(struct loader *ld, const struct ynode *v, void *obj)
{
	static const char *const names[] = {"poisson", "gamma"};
	int p = 0;
	int rc = get_enum(ld, v, "process", names, N_OF(names), &p);
	((struct request_spec *)obj)->process = (enum request_process)p;
	return rc;
}

/* A rate with its unit, or a bare number of requests per second (so that
 * `search --vary workloads.chat.requests.rate` can bisect plain numbers). */
static int req_rate(struct loader *ld, const struct ynode *v, void *obj)
{
	double *rate = &((struct request_spec *)obj)->rate;
	if (v->kind == YNODE_SCALAR && (!units_rate(v->value, rate) || !units_number(v->value, rate)) &&
	    *rate > 0 && *rate <= 1e9)
		return GP_OK;
	return bad_value(ld, v, "rate", UNITS_HINT_RATE ", or a number of requests per second > 0");
}

static int req_shape(struct loader *ld, const struct ynode *v, void *obj)
{
	return get_positive(ld, v, "shape", "a number > 0 like 0.5 (below 1 is burstier than poisson)",
			    &((struct request_spec *)obj)->shape);
}

static int req_from(struct loader *ld, const struct ynode *v, void *obj)
{
	return get_clock(ld, v, "requests from", &((struct request_spec *)obj)->from);
}

static int req_count(struct loader *ld, const struct ynode *v, void *obj)
{
	return get_int(ld, v, "count", 1, INT64_MAX, &((struct request_spec *)obj)->count);
}

static int req_prompt(struct loader *ld, const struct ynode *v, void *obj)
{
	return load_tokens(ld, v, "prompt_tokens", &((struct request_spec *)obj)->prompt_tokens);
}

static int req_output(struct loader *ld, const struct ynode *v, void *obj)
{
	return load_tokens(ld, v, "output_tokens", &((struct request_spec *)obj)->output_tokens);
}

static int req_trace(struct loader *ld, const struct ynode *v, void *obj)
{
	struct request_spec *rs = obj;
	char *path = NULL;
	rs->process = REQUESTS_TRACE;
	int rc = get_string(ld, v, "trace", "a path to an Azure LLM trace, like traces/conv.csv",
			    &path);
	if (rc)
		return rc;
	rs->trace_path = resolve(ld->sc->dir, path);
	free(path);
	return GP_OK;
}

static int req_format(struct loader *ld, const struct ynode *v, void *obj)
{
	static const char *const names[] = {"azure"};
	int f = 0;
	(void)obj;
	if (v->kind == YNODE_SCALAR && !strcmp(v->value, "csv"))
		return gp_located(ld->err, v->loc, "format 'csv' is for batch job traces; expected "
				  "azure (TIMESTAMP,ContextTokens,GeneratedTokens)");
	return get_enum(ld, v, "format", names, N_OF(names), &f);
}

static int req_speedup(struct loader *ld, const struct ynode *v, void *obj)
{
	double *k = &((struct request_spec *)obj)->speedup;
	int rc = get_positive(ld, v, "speedup", "a factor > 0 like 2 (twice as fast)", k);
	if (!rc && *k > 1e6)
		return bad_value(ld, v, "speedup", "a factor from 0 to 1000000");
	return rc;
}

static int req_repeat(struct loader *ld, const struct ynode *v, void *obj)
{
	int64_t n = 0;
	int rc = get_int(ld, v, "repeat", 1, 1000000, &n);
	((struct request_spec *)obj)->repeat = (int32_t)n;
	return rc;
}

static const struct key_rule request_rules[] = {
	{"process", req_process}, {"rate", req_rate},       {"shape", req_shape},
	{"from", req_from},       {"count", req_count},     {"prompt_tokens", req_prompt},
	{"output_tokens", req_output}, {"trace", req_trace}, {"format", req_format},
	{"speedup", req_speedup}, {"repeat", req_repeat},
};

static const char *const synthetic_keys[] = {"process", "rate",          "shape", "from",
					     "count",   "prompt_tokens", "output_tokens"};
static const char *const trace_keys[] = {"trace", "format", "speedup", "repeat", "from"};

/* The keys each kind of request stream needs, once the map is read. */
static int check_requests(struct loader *ld, const struct ynode *v, struct request_spec *rs)
{
	int rc;
	if (rs->process == REQUESTS_TRACE) {
		rc = only_keys(ld, v, trace_keys, N_OF(trace_keys), "a trace of requests");
		if (!rc)
			rc = requests_read_azure(rs->trace_path, ynode_get(v, "trace")->loc,
						 ld->max_jobs, &rs->rows, &rs->n_rows, ld->err);
		if (!rc)
			rs->period = requests_period(rs->rows, rs->n_rows);
		return rc;
	}
	rc = only_keys(ld, v, synthetic_keys, N_OF(synthetic_keys), "a synthetic request process");
	if (!rc)
		rc = require(ld, v, "rate", "requests", UNITS_HINT_RATE);
	if (!rc && rs->process == REQUESTS_GAMMA)
		rc = require(ld, v, "shape", "a gamma process", "a number > 0 like 0.5");
	if (!rc && rs->process == REQUESTS_POISSON && ynode_get(v, "shape"))
		return gp_located(ld->err, ynode_get(v, "shape")->loc,
				  "shape applies to a gamma process; expected process: gamma");
	if (!rc)
		rc = require(ld, v, "prompt_tokens", "requests", TOKENS_HINT);
	if (!rc)
		rc = require(ld, v, "output_tokens", "requests", TOKENS_HINT);
	if (!rc && rs->count < 0 && !ld->sc->horizon)
		return gp_located(ld->err, v->loc, "a request process without count never ends; "
				  "expected a count or a scenario horizon");
	return rc;
}

static int workload_requests(struct loader *ld, const struct ynode *v, void *obj)
{
	struct inference_spec *in = inference_of(ld, v, obj, "requests");
	if (!in)
		return GP_EINPUT;
	struct request_spec *rs = &in->requests;
	int rc = walk_map(ld, v, "requests", REQUESTS_HINT, request_rules, N_OF(request_rules), rs);
	if (rc)
		return rc;
	if (!!ynode_get(v, "process") + !!ynode_get(v, "trace") != 1)
		return gp_located(ld->err, v->loc, "requests need exactly one of process or trace; "
				  "expected " REQUESTS_HINT);
	return check_requests(ld, v, rs);
}

/* Mean prompt + mean output, in whole tokens: the request the server is sized for. */
static int64_t typical_context(const struct request_spec *rs)
{
	double sum = 0;
	if (rs->process == REQUESTS_TRACE) {
		for (size_t i = 0; i < rs->n_rows; i++)
			sum += rs->rows[i].prompt + rs->rows[i].output;
		sum /= (double)rs->n_rows;
	} else {
		const struct dist *p = &rs->prompt_tokens, *o = &rs->output_tokens;
		sum = (p->kind == DIST_UNIFORM ? (p->min + p->max) / 2 : p->mean) +
		      (o->kind == DIST_UNIFORM ? (o->min + o->max) / 2 : o->mean);
	}
	return (int64_t)ceil(sum);
}

/* The memory one GPU of a replica may use in pool p: the workload's vram, or
 * memory_fraction of the unit, or the whole unit (no isolation: the GPU). */
static double server_cap(const struct pool_spec *p, const struct workload_spec *w)
{
	const struct inference_spec *in = w->inference;
	double unit = scenario_unit_memory(p, w);
	if (unit <= 0)
		unit = p->gpu->memory_bytes;
	if (in->vram_given)
		return w->vram_bytes;
	return in->memory_fraction > 0 ? in->memory_fraction * unit : unit;
}

/* "llama-3-70b in fp16 does not fit ..." with the smallest TP that fits. */
static int does_not_fit(struct loader *ld, struct srcloc at, const struct workload_spec *w,
			const struct pool_spec *p, double cap)
{
	const struct inference_spec *in = w->inference;
	enum quant q = (enum quant)w->quantization, kv = (enum quant)in->kv_cache;
	struct footprint fp;
	footprint_compute(w->model, q, kv, in->tensor_parallel, cap, &fp);
	double need = footprint_bytes_per_gpu(&fp, in->context), gib = 1024.0 * 1024 * 1024;
	char what[256];
	snprintf(what, sizeof what,
		 "%s in %s does not fit a replica of %d x %s (pool %s): one GPU needs %.2f GiB "
		 "(weights, runtime and the KV cache of one %lld-token request) and has %.2f GiB",
		 w->model->name, quant_name(q), (int)in->tensor_parallel, p->gpu->name, p->name,
		 need / gib, (long long)in->context, cap / gib);
	int tp = footprint_min_tp(w->model, q, kv, cap, in->context);
	if (tp && w->request == REQUEST_GPUS && tp <= p->gpus_per_node)
		return gp_located(ld->err, at, "%s; the smallest tensor_parallel that fits is %d",
				  what, tp);
	enum quant narrower;
	if (footprint_widest_fitting_quant(w->model, in->tensor_parallel, cap, in->context,
					   &narrower) && quant_weight_bytes(narrower) < quant_weight_bytes(q))
		return gp_located(ld->err, at, "%s; quantization %s fits", what,
				  quant_name(narrower));
	return gp_located(ld->err, at, "%s; expected a larger GPU or unit", what);
}

/* The model fits a unit of at least one pool offering the resource. */
static int check_fits(struct loader *ld, const struct ynode *item, struct workload_spec *w)
{
	const struct scenario *sc = ld->sc;
	const struct ynode *at = ynode_get(item, "tensor_parallel");
	const struct pool_spec *best = NULL;
	double best_cap = 0;
	for (size_t i = 0; i < sc->n_pools; i++) {
		const struct pool_spec *p = &sc->pools[i];
		if (!scenario_pool_offers(p, w) ||
		    (w->request == REQUEST_GPUS && w->gpus > p->gpus_per_node))
			continue;
		double cap = server_cap(p, w);
		struct footprint fp;
		footprint_compute(w->model, (enum quant)w->quantization,
				  (enum quant)w->inference->kv_cache, w->inference->tensor_parallel,
				  cap, &fp);
		if (footprint_max_sequences(&fp, w->inference->context) >= 1)
			return GP_OK;
		if (!best || cap > best_cap)
			best = p, best_cap = cap;
	}
	if (!best)
		return GP_OK; /* no pool offers the resource: check_hosted says so */
	if (!at)
		at = ynode_get(item, "gpus");
	if (!at)
		at = ynode_get(item, "model");
	return does_not_fit(ld, at->loc, w, best, best_cap);
}

/* tensor_parallel and gpus name the same GPUs; a MIG or milli unit holds one. */
static int resolve_tp(struct loader *ld, const struct ynode *item, struct workload_spec *w)
{
	struct inference_spec *in = w->inference;
	const struct ynode *tp = ynode_get(item, "tensor_parallel"), *g = ynode_get(item, "gpus");
	if (w->request != REQUEST_GPUS) {
		if (tp && in->tensor_parallel > 1)
			return gp_located(ld->err, tp->loc, "tensor_parallel %d needs %d GPUs; a "
					  "replica on a MIG instance or a GPU share has one",
					  (int)in->tensor_parallel, (int)in->tensor_parallel);
		in->tensor_parallel = 1;
	} else if (tp && g && w->gpus != in->tensor_parallel) {
		return gp_located(ld->err, tp->loc, "tensor_parallel %d differs from gpus %d; "
				  "expected one GPU per tensor-parallel rank", (int)in->tensor_parallel,
				  (int)w->gpus);
	} else if (tp) {
		w->gpus = in->tensor_parallel;
	} else {
		in->tensor_parallel = w->gpus;
	}
	if (footprint_tp_valid(w->model, in->tensor_parallel))
		return GP_OK;
	return gp_located(ld->err, (tp ? tp : g)->loc,
			  "tensor_parallel %d does not divide the %d attention heads of %s; expected "
			  "1, 2, 4 or 8", (int)in->tensor_parallel, w->model->heads, w->model->name);
}

static int finish_inference(struct loader *ld, const struct ynode *item, struct workload_spec *w)
{
	/* Batch keys, and why a service has no use for them. */
	static const char *const batch_only[][2] = {
		{"count", "expected requests: " REQUESTS_HINT},
		{"arrival", "expected requests: " REQUESTS_HINT},
		{"duration", "a request lasts its prefill and decode steps"},
		{"deadline", "expected an slo like {ttft: 2s}"},
		{"gpu_busy", "a replica's activity comes from its iterations"},
		{"queue", "replicas are placed as the service starts or scales, before batch work"},
		{"priority", "replicas are placed as the service starts or scales, before batch work"},
		{"pods", "a replica is one pod (tensor_parallel spans the GPUs of one node)"},
		{"gang", "a replica is one pod (tensor_parallel spans the GPUs of one node)"},
	};
	struct inference_spec *in = w->inference;
	for (size_t i = 0; i < item->n; i++)
		for (size_t k = 0; k < N_OF(batch_only); k++)
			if (!strcmp(item->keys[i], batch_only[k][0]))
				return gp_located(ld->err, item->key_locs[i],
						  "%s does not apply to an inference workload; %s",
						  item->keys[i], batch_only[k][1]);
	const struct ynode *limit = ynode_get(ynode_get(item, "restart"), "limit");
	if (limit)
		return gp_located(ld->err, limit->loc, "limit does not apply to an inference "
				  "workload; its replicas restart for ever, as a Deployment's pods do");
	int rc = require(ld, item, "model", "inference workload", "a catalog model like llama-3-8b");
	if (!rc)
		rc = require(ld, item, "requests", "inference workload", REQUESTS_HINT);
	if (!rc)
		rc = resolve_tp(ld, item, w);
	if (rc)
		return rc;
	if (!ynode_get(item, "max_batched_tokens") && in->max_batched_tokens < in->max_batch)
		in->max_batched_tokens = in->max_batch;
	if (in->max_batched_tokens < in->max_batch)
		return gp_located(ld->err, ynode_get(item, "max_batched_tokens")->loc,
				  "max_batched_tokens %d is below max_batch %d; expected at least "
				  "one token per sequence (vLLM refuses to start otherwise)",
				  (int)in->max_batched_tokens, (int)in->max_batch);
	if (in->kv_cache < 0)
		in->kv_cache = quant_default_kv((enum quant)w->quantization);
	in->context = typical_context(&in->requests);
	in->vram_given = ynode_get(item, "vram") != NULL;
	if (in->vram_given && in->memory_fraction > 0)
		return gp_located(ld->err, ynode_get(item, "memory_fraction")->loc,
				  "memory_fraction and vram both size the server; expected one");
	rc = check_fits(ld, item, w);
	if (rc)
		return rc;
	if (requests_expected(w, ld->sc->horizon) > ld->max_jobs)
		return gp_located(ld->err, ynode_get(item, "requests")->loc,
				  "the workload sends %lld requests, above the limit of %lld; "
				  "expected fewer, or raise the limit with the environment variable "
				  "GPUPLAN_MAX_JOBS",
				  (long long)requests_expected(w, ld->sc->horizon),
				  (long long)ld->max_jobs);
	/* What a unit must guarantee for the server to start (placement's filter). */
	if (!in->vram_given) {
		struct footprint fp;
		footprint_compute(w->model, (enum quant)w->quantization, (enum quant)in->kv_cache,
				  in->tensor_parallel, 0, &fp);
		w->vram_bytes = footprint_bytes_per_gpu(&fp, in->context);
		if (in->memory_fraction > 0)
			w->vram_bytes /= in->memory_fraction;
	}
	/* No batch jobs: the requests are the work. */
	w->count = 0;
	w->arrival.kind = ARRIVAL_AT;
	w->duration = (struct dist){DIST_FIXED, 0, 0, 0, 0, 0};
	return GP_OK;
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
	{"affinity", workload_affinity},
	{"topology_spread", workload_topology_spread},
	{"pods", workload_pods},
	{"gang", workload_gang},
	/* DESIGN.md, not simulated yet */
	{"quality", workload_quality},
	{"startup", workload_startup},
	{"checkpoint", workload_checkpoint},
	{"model", workload_model},
	{"quantization", workload_quantization},
	{"kv_cache", workload_kv_cache},
	{"replicas", workload_replicas},
	{"tensor_parallel", workload_tensor_parallel},
	{"max_batch", workload_max_batch},
	{"max_batched_tokens", workload_max_batched_tokens},
	{"memory_fraction", workload_memory_fraction},
	{"requests", workload_requests},
	{"slo", workload_slo},
	{"tokenize", workload_tokenize},
	{"route", workload_route},
	{"restart", workload_restart},
};

/* An openb pod list decides every pod's request and times too.  The
 * workload stands for its pods until a timed replay splits it by request
 * (openb_expand_workloads); the inflation protocol reads the pods as they are. */
static int finish_openb_workload(struct loader *ld, const struct ynode *item,
				 struct workload_spec *w)
{
	static const char *const from_list[] = {"count", "gpus", "duration", "cpu", "memory",
						"gpu_spec", "pods", "gang", "vram", "model"};
	for (size_t i = 0; i < item->n; i++)
		for (size_t k = 0; k < N_OF(from_list); k++)
			if (!strcmp(item->keys[i], from_list[k]))
				return gp_located(ld->err, item->key_locs[i],
						  "%s comes from the pod list (one pod per row); "
						  "expected no %s with format openb",
						  item->keys[i], item->keys[i]);
	w->count = (int64_t)w->arrival.n_pods;
	w->request = REQUEST_GPUS;
	w->gpus = 1;
	w->duration = (struct dist){DIST_FIXED, 0, 0, 0, 0, 0};
	return GP_OK;
}

/* A trace decides count, gpus and durations; the workload's keys would contradict it. */
static int finish_trace_workload(struct loader *ld, const struct ynode *item,
				 struct workload_spec *w)
{
	if (w->arrival.format == TRACE_OPENB)
		return finish_openb_workload(ld, item, w);
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
		rc = derive_quality(ld, item, w);
	if (!rc)
		rc = require(ld, item, "name", "workload", "a name like eval");
	if (!rc && w->inference)
		return finish_inference(ld, item, w);
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
	w->pods = 1;
	w->gpu_busy = 1;
	w->sm_share = 1;
	w->pass_rate = 1;
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

static void free_workload(struct workload_spec *w);

/* A timed replay runs an openb workload as one workload per pod request
 * (openb_split_workload), in its place. */
static int expand_openb_workloads(struct loader *ld)
{
	struct scenario *sc = ld->sc;
	for (size_t i = 0; i < sc->n_workloads; i++) {
		struct workload_spec *w = &sc->workloads[i], *subs;
		if (w->arrival.kind != ARRIVAL_TRACE || w->arrival.format != TRACE_OPENB)
			continue;
		size_t n = 0;
		int rc = openb_split_workload(w, ld->widest_node, &subs, &n, ld->err);
		if (rc)
			return rc;
		size_t total = sc->n_workloads - 1 + n;
		struct workload_spec *all = gp_xcalloc(total + 1, sizeof *all);
		memcpy(all, sc->workloads, i * sizeof *all);
		memcpy(all + i, subs, n * sizeof *all);
		memcpy(all + i + n, sc->workloads + i + 1, (sc->n_workloads - i - 1) * sizeof *all);
		free_workload(w);
		free(subs);
		free(sc->workloads);
		sc->workloads = all;
		sc->n_workloads = total;
		i += n - 1;
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

static int cohort_name(struct loader *ld, const struct ynode *v, void *obj)
{
	return get_item_name(ld, v, "cohort name", &((struct cohort_spec *)obj)->name);
}

static int cohort_parent(struct loader *ld, const struct ynode *v, void *obj)
{
	return get_item_name(ld, v, "parent cohort", &((struct cohort_spec *)obj)->parent);
}

static const struct key_rule cohort_rules[] = {{"name", cohort_name}, {"parent", cohort_parent}};

static int cohort_index(const struct scenario *sc, const char *name)
{
	for (size_t i = 0; i < sc->n_cohorts; i++)
		if (!strcmp(sc->cohorts[i].name, name))
			return (int)i;
	return -1;
}

/* cohorts: [{name, parent}]; a parent must exist and the parents never loop. */
static int load_cohorts(struct loader *ld, const struct ynode *v)
{
	struct scenario *sc = ld->sc;
	if (!v)
		return GP_OK;
	int rc = expect_list(ld, v, "cohorts", "a list like [{name: org, parent: company}]");
	if (rc)
		return rc;
	sc->cohorts = gp_xcalloc(v->n ? v->n : 1, sizeof *sc->cohorts);
	for (size_t i = 0; i < v->n && !rc; i++) {
		struct cohort_spec *c = &sc->cohorts[sc->n_cohorts++];
		c->loc = v->items[i]->loc;
		rc = walk_map(ld, v->items[i], "cohort", "a map like {name: org, parent: company}",
			      cohort_rules, N_OF(cohort_rules), c);
		if (!rc)
			rc = require(ld, v->items[i], "name", "cohort", "a name like org");
	}
	for (size_t i = 0; i < sc->n_cohorts && !rc; i++) {
		const struct cohort_spec *c = &sc->cohorts[i];
		if (c->parent && cohort_index(sc, c->parent) < 0)
			return gp_located(ld->err, c->loc, "cohort %s has an unknown parent '%s'; "
					  "expected a cohort of the cohorts list", c->name, c->parent);
		size_t steps = 0;
		for (int k = (int)i; k >= 0 && sc->cohorts[k].parent; steps++) {
			if (steps > sc->n_cohorts)
				return gp_located(ld->err, c->loc, "cohort %s is its own ancestor (a "
						  "cohort loop); expected parents that end at a root",
						  c->name);
			k = cohort_index(sc, sc->cohorts[k].parent);
		}
	}
	return rc;
}

/* experiment: {protocol: inflation, inflate: 1.3, popularity: 0.95} (inflation.h). */
static int experiment_protocol(struct loader *ld, const struct ynode *v, void *obj)
{
	static const char *const names[] = {"inflation"};
	int p = 0;
	((struct experiment_spec *)obj)->protocol = EXPERIMENT_INFLATION;
	return get_enum(ld, v, "protocol", names, N_OF(names), &p);
}

static int experiment_inflate(struct loader *ld, const struct ynode *v, void *obj)
{
	double *x = &((struct experiment_spec *)obj)->inflate;
	int rc = get_positive(ld, v, "inflate", "a multiple of the GPU capacity like 1.3", x);
	if (!rc && *x > 100)
		return bad_value(ld, v, "inflate", "a multiple of the GPU capacity up to 100");
	return rc;
}

static int experiment_popularity(struct loader *ld, const struct ynode *v, void *obj)
{
	return get_fraction(ld, v, "popularity", &((struct experiment_spec *)obj)->popularity);
}

static const struct key_rule experiment_rules[] = {{"protocol", experiment_protocol},
						   {"inflate", experiment_inflate},
						   {"popularity", experiment_popularity}};

static int top_experiment(struct loader *ld, const struct ynode *v, void *obj)
{
	(void)obj;
	struct experiment_spec *e = &ld->sc->experiment;
	e->loc = v->loc;
	int rc = walk_map(ld, v, "experiment", "a map like {protocol: inflation, inflate: 1.3}",
			  experiment_rules, N_OF(experiment_rules), e);
	return rc ? rc : require(ld, v, "protocol", "experiment", "protocol: inflation");
}

/* The paper's policies (gpu_policy other than best-fit) place whole GPUs and
 * milli shares; the inflation protocol places batch pods with them. */
static int check_experiment(struct loader *ld)
{
	const struct scenario *sc = ld->sc;
	for (size_t i = 0; sc->scheduler.gpu_policy != GPU_POLICY_BEST_FIT && i < sc->n_pools; i++) {
		enum sharing_mode m = sc->pools[i].sharing.mode;
		if (m != SHARING_EXCLUSIVE && m != SHARING_FRACTIONAL)
			return gp_located(ld->err, sc->pools[i].sharing.loc,
					  "gpu_policy %s places whole GPUs and milli shares; "
					  "expected pool %s with sharing exclusive or fractional",
					  gpupolicy_names[sc->scheduler.gpu_policy], sc->pools[i].name);
	}
	if (sc->experiment.protocol != EXPERIMENT_INFLATION)
		return GP_OK;
	for (size_t i = 0; i < sc->n_pools; i++) {
		enum sharing_mode m = sc->pools[i].sharing.mode;
		if (m != SHARING_EXCLUSIVE && m != SHARING_FRACTIONAL)
			return gp_located(ld->err, sc->pools[i].loc,
					  "experiment inflation places whole GPUs and milli shares; "
					  "expected pool %s with sharing exclusive or fractional",
					  sc->pools[i].name);
		if (sc->pools[i].gpus_per_node > GPUPOLICY_MAX_GPUS)
			return gp_located(ld->err, sc->pools[i].loc, "too many GPUs per node");
	}
	for (size_t i = 0; i < sc->n_workloads; i++) {
		const struct workload_spec *w = &sc->workloads[i];
		if (w->inference || w->request == REQUEST_MIG)
			return gp_located(ld->err, w->loc,
					  "experiment inflation places batch pods of GPUs or milli "
					  "shares; expected workload %s without %s",
					  w->name, w->inference ? "kind: inference" : "a MIG profile");
	}
	return GP_OK;
}

static const struct key_rule top_rules[] = {
	{"name", top_name},     {"seed", top_seed},
	{"start", top_start},   {"horizon", top_horizon},
	{"pools", top_later},   {"workloads", top_later},
	{"queues", top_later},  {"scheduler", top_scheduler},
	{"cohorts", top_later},
	{"output", top_output}, {"experiment", top_experiment},
	{"gpu_types", NULL},
	{"models", NULL},
};

/* Expected jobs of a workload: its count, or rate x span for an open poisson stream. */
static double expected_jobs(const struct scenario *sc, const struct workload_spec *w)
{
	double per = w->gang ? 1 : w->pods; /* pods without gang are jobs of their own */
	if (w->count >= 0)
		return (double)w->count * per;
	double span = sim_seconds(sc->horizon - w->arrival.from);
	return span > 0 ? ceil(w->arrival.rate * span) * per : 0;
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
		rc = load_cohorts(ld, ynode_get(root, "cohorts"));
	if (!rc)
		rc = load_queues(ld, ynode_get(root, "queues"));
	if (!rc)
		rc = load_workloads(ld, ynode_get(root, "workloads"));
	if (!rc)
		rc = check_experiment(ld);
	if (!rc)
		rc = check_hosted(ld, ynode_get(root, "workloads"));
	/* After the checks that map workloads to their YAML items one to one. */
	if (!rc && sc->experiment.protocol == EXPERIMENT_NONE)
		rc = expand_openb_workloads(ld);
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
	sc->scheduler = (struct scheduler_spec){ORDER_FIFO, SCORING_MOST_ALLOCATED, WINDOW_FIT,
						GPU_POLICY_BEST_FIT};
	sc->experiment = (struct experiment_spec){EXPERIMENT_NONE, 1.3, 0.95, {NULL, 0, 0}};
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

void scenario_pool_free(struct pool_spec *p)
{
	free(p->name);
	free(p->trace_path);
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
	if (w->inference) {
		free(w->inference->requests.trace_path);
		free(w->inference->requests.rows);
		free(w->inference);
	}
	free(w->name);
	free(w->arrival.trace_path);
	free(w->arrival.rows);
	openb_free_pods(w->arrival.pods, w->arrival.n_pods);
	free_kvs(w->node_selector, w->n_node_selector);
	for (size_t i = 0; i < w->n_tolerations; i++) {
		free(w->tolerations[i].key);
		free(w->tolerations[i].value);
	}
	free(w->tolerations);
	for (size_t i = 0; i < w->n_gpu_spec; i++)
		free(w->gpu_spec[i]);
	free(w->gpu_spec);
	for (size_t i = 0; i < w->n_affinity; i++) {
		free(w->affinity[i].key);
		for (size_t k = 0; k < w->affinity[i].n_values; k++)
			free(w->affinity[i].values[k]);
		free(w->affinity[i].values);
	}
	free(w->affinity);
	free(w->spread.key);
	free(w->mig_profile);
}

void scenario_free(struct scenario *sc)
{
	if (!sc)
		return;
	for (size_t i = 0; i < sc->n_pools; i++)
		scenario_pool_free(&sc->pools[i]);
	free(sc->pools);
	for (size_t i = 0; i < sc->n_workloads; i++)
		free_workload(&sc->workloads[i]);
	free(sc->workloads);
	for (size_t i = 0; i < sc->n_queues; i++) {
		struct queue_spec *q = &sc->queues[i];
		free(q->name);
		free(q->cohort);
		for (size_t k = 0; k < q->n_quota; k++)
			free(q->quota[k].resource);
		free(q->quota);
	}
	free(sc->queues);
	for (size_t i = 0; i < sc->n_cohorts; i++) {
		free(sc->cohorts[i].name);
		free(sc->cohorts[i].parent);
	}
	free(sc->cohorts);
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
double scenario_unit_memory(const struct pool_spec *p, const struct workload_spec *w)
{
	const struct sharing *sh = &p->sharing;
	switch (sh->mode) {
	case SHARING_MPS: return p->gpu->memory_bytes / sh->replicas;
	case SHARING_FRACTIONAL:
		return w->request == REQUEST_MILLI ? p->gpu->memory_bytes * w->milli / 1000.0
						   : p->gpu->memory_bytes;
	case SHARING_MIG:
		for (size_t i = 0; i < sh->n_layout; i++)
			if (w->mig_profile && !strcmp(sh->layout[i]->name, w->mig_profile))
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
	double limit = scenario_unit_memory(p, w);
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

const char *scenario_root_cohort(const struct scenario *sc, size_t q)
{
	const char *name = sc->queues[q].cohort;
	for (size_t steps = 0; name && steps <= sc->n_cohorts; steps++) {
		int k = cohort_index(sc, name);
		if (k < 0 || !sc->cohorts[k].parent)
			break;
		name = sc->cohorts[k].parent;
	}
	return name;
}
