/*
 * import_read.c - typed, located access to the JSON and YAML that kubectl,
 * Prometheus and OpenCost produce (see import_int.h).
 *
 * JSON is read by the scenario's own YAML reader (ytree): JSON is YAML 1.2
 * flow syntax, and libyaml handles what kubectl writes (escapes such as
 * \u003c, nested flow collections, long lines).  One reader, so every error
 * carries the file, line and column, to which this file adds the JSON path
 * of the value (.items[3].spec.containers[0].resources.limits.cpu), which is
 * what users search a kubectl dump for.
 */
#include "import_int.h"

#include "gpuplan/units.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int imp_open(struct imp_file *f, const char *path, struct gp_err *err)
{
	memset(f, 0, sizeof *f);
	f->path = path;
	f->err = err;
	int rc = ytree_load(path, &f->tree, err);
	if (!rc && !f->tree->root)
		rc = gp_located(err, (struct srcloc){path, 0, 0}, "empty file; expected %s",
				"a JSON or YAML document");
	return rc;
}

void imp_close(struct imp_file *f)
{
	if (f->tree)
		ytree_free(f->tree);
	f->tree = NULL;
}

/* Whether key reads as dot-separated identifiers ("spec.taints"): it is then
 * written as such; any other key ("nvidia.com/gpu", "A100-80GB") is written
 * ["key"], as jq spells it, so the path can be pasted into jq. */
static bool plain_path(const char *key)
{
	bool start = true;
	for (const char *c = key; *c; c++) {
		if (*c == '.' && !start && c[1]) {
			start = true;
			continue;
		}
		if (!(isalpha((unsigned char)*c) || *c == '_' ||
		      (!start && isdigit((unsigned char)*c))))
			return false;
		start = false;
	}
	return !start;
}

/* Appends the step for key to buf at *len (truncating at size). */
static void path_step(char *buf, size_t size, size_t *len, const char *key)
{
	int n = plain_path(key) ? snprintf(buf + *len, size - *len, ".%s", key)
				: snprintf(buf + *len, size - *len, "[\"%s\"]", key);
	if (n > 0)
		*len = *len + (size_t)n < size ? *len + (size_t)n : size - 1;
}

size_t imp_push_key(struct imp_file *f, const char *key)
{
	size_t len = f->len;
	path_step(f->jpath, sizeof f->jpath, &f->len, key);
	return len;
}

size_t imp_push_index(struct imp_file *f, size_t i)
{
	size_t len = f->len;
	int n = snprintf(f->jpath + len, sizeof f->jpath - len, "[%zu]", i);
	if (n > 0)
		f->len = len + (size_t)n < sizeof f->jpath ? len + (size_t)n : sizeof f->jpath - 1;
	return len;
}

void imp_pop(struct imp_file *f, size_t len)
{
	f->len = len;
	f->jpath[len] = '\0';
}

int imp_error(struct imp_file *f, const struct ynode *at, const char *key, const char *fmt, ...)
{
	char msg[600], path[sizeof f->jpath + 128];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	struct srcloc loc = at ? at->loc : (struct srcloc){f->path, 0, 0};
	size_t len = f->len;
	memcpy(path, f->jpath, len);
	path[len] = '\0';
	if (key)
		path_step(path, sizeof path, &len, key);
	return gp_located(f->err, loc, "%s: %s", len ? path : ".", msg);
}

bool imp_is_null(const struct ynode *v)
{
	return !v || (v->kind == YNODE_SCALAR && !v->quoted &&
		      (!strcmp(v->value, "null") || !strcmp(v->value, "~") || !v->value[0]));
}

static const char *const kind_names[] = {"a string or number", "an object", "a list"};

/* The member, checked to be of kind; *out NULL when absent or null. */
static int member(struct imp_file *f, const struct ynode *m, const char *key, enum ynode_kind kind,
		  const struct ynode **out)
{
	*out = NULL;
	if (!m || m->kind != YNODE_MAP)
		return imp_error(f, m, NULL, "expected an object with '%s'", key);
	const struct ynode *v = ynode_get(m, key);
	if (imp_is_null(v))
		return GP_OK;
	if (v->kind != kind)
		return imp_error(f, v, key, "expected %s", kind_names[kind]);
	*out = v;
	return GP_OK;
}

int imp_map(struct imp_file *f, const struct ynode *m, const char *key, const struct ynode **out)
{
	return member(f, m, key, YNODE_MAP, out);
}

int imp_seq(struct imp_file *f, const struct ynode *m, const char *key, const struct ynode **out)
{
	return member(f, m, key, YNODE_SEQ, out);
}

int imp_str(struct imp_file *f, const struct ynode *m, const char *key, const char **out)
{
	const struct ynode *v;
	int rc = member(f, m, key, YNODE_SCALAR, &v);
	*out = v ? v->value : NULL;
	return rc;
}

int imp_int(struct imp_file *f, const struct ynode *m, const char *key, int64_t *out)
{
	const struct ynode *v;
	int rc = member(f, m, key, YNODE_SCALAR, &v);
	if (!rc && v && units_integer(v->value, out))
		rc = imp_error(f, v, key, "expected an integer, got '%s'", v->value);
	return rc;
}

int imp_num(struct imp_file *f, const struct ynode *m, const char *key, double *out)
{
	const struct ynode *v;
	int rc = member(f, m, key, YNODE_SCALAR, &v);
	if (!rc && v && units_number(v->value, out))
		rc = imp_error(f, v, key, "expected a number, got '%s'", v->value);
	return rc;
}

int imp_time(struct imp_file *f, const struct ynode *m, const char *key, int64_t *out)
{
	const struct ynode *v;
	int rc = member(f, m, key, YNODE_SCALAR, &v);
	if (!rc && v && units_rfc3339(v->value, out))
		rc = imp_error(f, v, key, "expected %s, got '%s'", UNITS_HINT_TIME, v->value);
	return rc;
}

int imp_list(struct imp_file *f, const char *kind, const struct ynode **items)
{
	const struct ynode *root = f->tree->root;
	const char *k = NULL;
	if (root->kind != YNODE_MAP)
		return imp_error(f, root, NULL,
				 "expected a kubectl List (`kubectl get %s -o json`)",
				 kind ? kind : "...");
	int rc = imp_str(f, root, "kind", &k);
	if (!rc && (!k || strcmp(k, "List")))
		rc = imp_error(f, ynode_get(root, "kind"), "kind",
			       "expected a List, as `kubectl get %s -o json` writes, got '%s'",
			       kind ? kind : "...", k ? k : "nothing");
	if (!rc)
		rc = imp_seq(f, root, "items", items);
	/* kubectl writes "items": [] for an empty list: a List without one is cut short. */
	if (!rc && !*items)
		rc = imp_error(
			f, root, NULL,
			"no .items list; expected a List, as `kubectl get %s -o json` writes",
			kind ? kind : "...");
	if (rc || !kind)
		return rc;
	for (size_t i = 0; i < (*items)->n; i++) {
		const struct ynode *it = (*items)->items[i];
		size_t base = imp_push_key(f, "items");
		imp_push_index(f, i);
		rc = imp_str(f, it, "kind", &k);
		if (!rc && k && strcmp(k, kind))
			rc = imp_error(f, ynode_get(it, "kind"), "kind", "expected a %s, got '%s'",
				       kind, k);
		imp_pop(f, base);
		if (rc)
			return rc;
	}
	return GP_OK;
}

/* Kubernetes keeps a quantity's value in an int64 (resource.Quantity's
 * fast path); a larger one is no allocatable or request a cluster reports. */
#define QUANTITY_MAX 9.223372036854775807e18

/* Splits a quantity into its number and suffix multiplier. */
static bool quantity(const char *s, double *out)
{
	static const struct {
		const char *suffix;
		double factor;
	} suffixes[] = {{"Ki", 1024.0},
			{"Mi", 1048576.0},
			{"Gi", 1073741824.0},
			{"Ti", 1099511627776.0},
			{"Pi", 1125899906842624.0},
			{"n", 1e-9},
			{"u", 1e-6},
			{"m", 1e-3},
			{"k", 1e3},
			{"M", 1e6},
			{"G", 1e9},
			{"T", 1e12},
			{"P", 1e15},
			{"", 1.0}};
	size_t len = strlen(s);
	for (size_t i = 0; i < sizeof suffixes / sizeof *suffixes; i++) {
		size_t sl = strlen(suffixes[i].suffix);
		if (sl > len || strcmp(s + len - sl, suffixes[i].suffix))
			continue;
		char num[64];
		if (len - sl == 0 || len - sl >= sizeof num)
			return false;
		memcpy(num, s, len - sl);
		num[len - sl] = '\0';
		double v;
		if (units_number(num, &v) || v < 0)
			return false;
		*out = v * suffixes[i].factor;
		return *out <= QUANTITY_MAX;
	}
	return false;
}

int imp_quantity(struct imp_file *f, const struct ynode *v, const char *key, double *out)
{
	if (!v || v->kind != YNODE_SCALAR || !quantity(v->value, out))
		return imp_error(f, v, key,
				 "expected a Kubernetes quantity like 16Gi or 500m, at most "
				 "2^63-1%s%s%s",
				 v && v->kind == YNODE_SCALAR ? ", got '" : "",
				 v && v->kind == YNODE_SCALAR ? v->value : "",
				 v && v->kind == YNODE_SCALAR ? "'" : "");
	return GP_OK;
}
