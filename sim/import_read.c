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

/* What kubectl writes of a node or pod that import never reads: left out of
 * the tree as it is read (their syntax still checked), so a real dump's
 * node images, probes, environments and managed fields cost no memory.
 * Nothing in import_*.c reads these keys (keep it so). */
static const char *const kube_skip[] = {
	"managedFields", "images", "env", "envFrom", "volumeMounts", "volumeDevices",
	"livenessProbe", "readinessProbe", "startupProbe", "lifecycle", "command", "args", "ports",
	"addresses", "initContainerStatuses", "ephemeralContainerStatuses",
	/* a node's, beside what it reads */
	"capacity", "daemonEndpoints", "volumesAttached", "volumesInUse", "providerID", "podCIDR",
	"podCIDRs", "lastHeartbeatTime",
	/* bookkeeping of any object */
	"apiVersion", "uid", "resourceVersion", "generateName", "selfLink", "finalizers",
	"blockOwnerDeletion", "lastProbeTime", "lastTransitionTime",
	/* a pod's and its containers', beside their requests */
	"image", "imagePullPolicy", "imageID", "containerID", "lastState", "restartCount",
	"terminationMessagePath", "terminationMessagePolicy", "securityContext", "dnsPolicy",
	"serviceAccountName", "serviceAccount", "enableServiceLinks", "schedulerName", "hostIP",
	"hostIPs", "podIP", "podIPs", "qosClass", NULL};

void imp_keep(struct strindex *x, int pass, char **s)
{
	if (!*s)
		return;
	if (pass)
		*s = (char *)strindex_key(x, strindex_find(x, *s));
	else
		strindex_add(x, *s, NULL);
}

static int open_tree(struct imp_file *f, const char *path, const char *const *skip,
		     struct gp_err *err)
{
	memset(f, 0, sizeof *f);
	f->path = path;
	f->err = err;
	/* JSON (what kubectl, Prometheus and OpenCost write) by the one-pass
	 * reader; YAML by libyaml */
	int rc = ytree_load_json(path, skip, &f->tree, err);
	if (!rc && !f->tree->root)
		rc = gp_located(err, (struct srcloc){path, 0, 0}, "empty file; expected %s",
				"a JSON or YAML document");
	return rc;
}

int imp_open(struct imp_file *f, const char *path, struct gp_err *err)
{
	return open_tree(f, path, NULL, err);
}

int imp_open_kube(struct imp_file *f, const char *path, struct gp_err *err)
{
	return open_tree(f, path, kube_skip, err);
}

int imp_open_text(struct imp_file *f, const char *name, const char *text, size_t len,
		  struct gp_err *err)
{
	memset(f, 0, sizeof *f);
	f->path = name;
	f->err = err;
	return ytree_parse(name, text, len, &f->tree, err);
}

void imp_close(struct imp_file *f)
{
	if (f->tree)
		ytree_free(f->tree);
	f->tree = NULL;
}

/* Whether key is one identifier ("spec", "nodeSelectorTerms"): it is then
 * written .key; any other key ("nvidia.com/gpu", "gpu.product", "A100-80GB")
 * is one key all the same and is written ["key"], as jq spells it, so the
 * path can be pasted into jq.  A path of several steps written in the code
 * ("spec.taints") is imp_push_path's, never a key's. */
static bool identifier(const char *key)
{
	if (!isalpha((unsigned char)*key) && *key != '_')
		return false;
	for (const char *c = key; *c; c++)
		if (!isalnum((unsigned char)*c) && *c != '_')
			return false;
	return true;
}

/* Appends n bytes of text to buf at *len (truncating at size). */
static void path_put(char *buf, size_t size, size_t *len, const char *text, size_t n)
{
	for (size_t i = 0; i < n && *len + 1 < size; i++)
		buf[(*len)++] = text[i];
	buf[*len] = '\0';
}

/* Appends the step for one key to buf at *len: .key, or ["key"] with '"'
 * and '\\' escaped as in a JSON string. */
static void path_step(char *buf, size_t size, size_t *len, const char *key)
{
	if (identifier(key)) {
		path_put(buf, size, len, ".", 1);
		path_put(buf, size, len, key, strlen(key));
		return;
	}
	path_put(buf, size, len, "[\"", 2);
	for (const char *c = key; *c; c++) {
		if (*c == '"' || *c == '\\')
			path_put(buf, size, len, "\\", 1);
		path_put(buf, size, len, c, 1);
	}
	path_put(buf, size, len, "\"]", 2);
}

/* Appends steps written in the code ("spec.taints", "a.b[0]") as they are. */
static void path_steps(char *buf, size_t size, size_t *len, const char *steps)
{
	path_put(buf, size, len, ".", 1);
	path_put(buf, size, len, steps, strlen(steps));
}

size_t imp_push_key(struct imp_file *f, const char *key)
{
	size_t len = f->len;
	path_step(f->jpath, sizeof f->jpath, &f->len, key);
	return len;
}

size_t imp_push_path(struct imp_file *f, const char *steps)
{
	size_t len = f->len;
	path_steps(f->jpath, sizeof f->jpath, &f->len, steps);
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

/* The error at the reader's path, then the step for key (one key) or steps
 * (a path written in the code), whichever is not NULL. */
static int verror(struct imp_file *f, const struct ynode *at, const char *key, const char *steps,
		  const char *fmt, va_list ap) GP_PRINTF(5, 0);
static int verror(struct imp_file *f, const struct ynode *at, const char *key, const char *steps,
		  const char *fmt, va_list ap)
{
	char path[sizeof f->jpath + 128];
	char *msg = gp_vstrf(fmt, ap);
	struct srcloc loc = at ? at->loc : (struct srcloc){f->path, 0, 0};
	size_t len = f->len;
	memcpy(path, f->jpath, len);
	path[len] = '\0';
	if (key)
		path_step(path, sizeof path, &len, key);
	if (steps)
		path_steps(path, sizeof path, &len, steps);
	int rc = gp_located(f->err, loc, "%s: %s", len ? path : ".", msg);
	free(msg);
	return rc;
}

int imp_error(struct imp_file *f, const struct ynode *at, const char *key, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int rc = verror(f, at, key, NULL, fmt, ap);
	va_end(ap);
	return rc;
}

int imp_error_at(struct imp_file *f, const struct ynode *at, const char *steps, const char *fmt,
		 ...)
{
	va_list ap;
	va_start(ap, fmt);
	int rc = verror(f, at, NULL, steps, fmt, ap);
	va_end(ap);
	return rc;
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

/* The suffixes of a Kubernetes quantity (resource.Quantity: binarySI and
 * decimalSI; "" is the plain number), each as 2^bin * 10^dec. */
static const struct {
	const char *suffix;
	int bin, dec;
	double factor;
} quantity_suffixes[] = {
	{"Ki", 10, 0, 1024.0},
	{"Mi", 20, 0, 1048576.0},
	{"Gi", 30, 0, 1073741824.0},
	{"Ti", 40, 0, 1099511627776.0},
	{"Pi", 50, 0, 1125899906842624.0},
	{"Ei", 60, 0, 1152921504606846976.0},
	{"n", 0, -9, 1e-9},
	{"u", 0, -6, 1e-6},
	{"m", 0, -3, 1e-3},
	{"", 0, 0, 1.0},
	{"k", 0, 3, 1e3},
	{"M", 0, 6, 1e6},
	{"G", 0, 9, 1e9},
	{"T", 0, 12, 1e12},
	{"P", 0, 15, 1e15},
	{"E", 0, 18, 1e18},
};

/* Doubles the decimal fraction 0.d[0]d[1]... in place; returns the carry into
 * the units (0 or 1). */
static unsigned double_fraction(char *d, size_t n)
{
	unsigned carry = 0;
	for (size_t i = n; i-- > 0;) {
		unsigned v = (unsigned)(d[i] - '0') * 2 + carry;
		d[i] = (char)('0' + v % 10);
		carry = v / 10;
	}
	return carry;
}

/* Whether digits (n of them, the first not 0) * 10^(point - n) * 2^bin is at
 * most INT64_MAX, decided exactly: the whole part is built in an unsigned
 * 64-bit integer that stops past INT64_MAX, the fraction doubled digit by
 * digit for a binary suffix, and at INT64_MAX itself any fraction left is
 * past it.  point: how many of the digits are whole. */
static bool within_int64(const char *digits, size_t n, long point, int bin)
{
	const uint64_t max = (uint64_t)INT64_MAX;
	if (point < -20)
		return true; /* under 10^-20 * 2^60 < 1 */
	if (point > 20)
		return false; /* at least 10^20 */
	uint64_t whole = 0;
	bool over = false;
	for (long i = 0; !over && i < point; i++) {
		unsigned d = i < (long)n ? (unsigned)(digits[i] - '0') : 0;
		over = whole > (max - d) / 10;
		whole = whole * 10 + d;
	}
	size_t lead = point < 0 ? (size_t)-point : 0, from = point > 0 ? (size_t)point : 0;
	size_t nfrac = from < n ? n - from : 0;
	char *frac = gp_xcalloc(lead + nfrac + 1, 1);
	memset(frac, '0', lead);
	if (nfrac)
		memcpy(frac + lead, digits + from, nfrac);
	for (int b = 0; !over && b < bin; b++) {
		unsigned carry = double_fraction(frac, lead + nfrac);
		over = whole > (max - carry) / 2;
		whole = whole * 2 + carry;
	}
	/* INT64_MAX and a fraction is past it. */
	if (!over && whole == max)
		over = strspn(frac, "0") < lead + nfrac;
	free(frac);
	return !over;
}

enum quantity_check { QUANTITY_OK, QUANTITY_SYNTAX, QUANTITY_RANGE };

/* A quantity as Kubernetes writes it (resource.Quantity's grammar: a signed
 * decimal number, then a binarySI or decimalSI suffix or an exponent e<N>),
 * from 0 to INT64_MAX: an allocatable or a request is no larger
 * (resource.Quantity caps a binarySI one there).  The bound is checked on
 * the exact decimal value, not on a double, in which 2^63 and 2^63-1 are one
 * number. */
static enum quantity_check quantity(const char *s, double *out)
{
	const char *p = s;
	bool negative = *p == '-';
	if (*p == '-' || *p == '+')
		p++;
	const char *int_at = p;
	while (isdigit((unsigned char)*p))
		p++;
	size_t n_int = (size_t)(p - int_at);
	const char *frac_at = p;
	if (*p == '.')
		for (frac_at = ++p; isdigit((unsigned char)*p);)
			p++;
	size_t n_frac = (size_t)(p - frac_at);
	if (!n_int && !n_frac)
		return QUANTITY_SYNTAX;
	const char *suffix = p;
	int bin = 0;
	long dec = 0;
	double factor = 1.0;
	size_t k = 0, n_suffixes = sizeof quantity_suffixes / sizeof *quantity_suffixes;
	while (k < n_suffixes && strcmp(suffix, quantity_suffixes[k].suffix))
		k++;
	if (k < n_suffixes) {
		bin = quantity_suffixes[k].bin;
		dec = quantity_suffixes[k].dec;
		factor = quantity_suffixes[k].factor;
	} else {
		/* An exponent: e or E, then a signed integer (12e6). */
		const char *e = suffix + 1;
		bool down = *e == '-';
		if ((*suffix != 'e' && *suffix != 'E') || ((*e == '-' || *e == '+') && !*++e) ||
		    !*e)
			return QUANTITY_SYNTAX;
		for (; isdigit((unsigned char)*e); e++)
			dec = dec < 100000 ? dec * 10 + (*e - '0') : dec;
		if (*e)
			return QUANTITY_SYNTAX;
		dec = down ? -dec : dec;
	}
	/* The digits without the point, from the first that is not 0. */
	char *digits = gp_xcalloc(n_int + n_frac + 1, 1);
	memcpy(digits, int_at, n_int);
	memcpy(digits + n_int, frac_at, n_frac);
	size_t lead = 0;
	while (digits[lead] == '0')
		lead++;
	bool zero = !digits[lead];
	bool ok = zero || (!negative && within_int64(digits + lead, n_int + n_frac - lead,
						     (long)n_int - (long)lead + dec, bin));
	free(digits);
	if (!ok)
		return QUANTITY_RANGE;
	/* The number as strtod reads it (with its exponent; the grammar was
	 * checked, so it stops where the suffix begins), times the suffix. */
	*out = zero ? 0 : strtod(s, NULL) * factor;
	return QUANTITY_OK;
}

int imp_label_key(struct imp_file *f, const struct ynode *at, const char *key, const char *label,
		  const char *where)
{
	if (scenario_label_key_ok(label))
		return GP_OK;
	return imp_error(f, at, key,
			 "invalid label key '%s' in %s; expected " SCENARIO_LABEL_KEY_HINT, label,
			 where);
}

int imp_label_value(struct imp_file *f, const struct ynode *at, const char *key, const char *value,
		    const char *where)
{
	if (scenario_label_value_ok(value))
		return GP_OK;
	return imp_error(f, at, key,
			 "invalid label value '%s' in %s; expected " SCENARIO_LABEL_VALUE_HINT,
			 value, where);
}

int imp_labels(struct imp_file *f, const struct ynode *labels, const char *where)
{
	size_t at = imp_push_key(f, "labels");
	int rc = GP_OK;
	for (size_t i = 0; !rc && labels && i < labels->n; i++) {
		const struct ynode *v = labels->items[i];
		const char *k = labels->keys[i];
		rc = imp_label_key(f, v, k, k, where);
		if (!rc && v->kind != YNODE_SCALAR)
			rc = imp_error(f, v, k, "expected a label value (a string) in %s", where);
		if (!rc)
			rc = imp_label_value(f, v, k, v->value, where);
	}
	imp_pop(f, at);
	return rc;
}

int imp_dns_name(struct imp_file *f, const struct ynode *at, const char *key, const char *name,
		 enum imp_dns rule, const char *what)
{
	bool ok = rule == IMP_DNS_LABEL ? scenario_dns_label_ok(name)
		  : rule == IMP_DNS_SUBDOMAIN
			  ? scenario_dns_subdomain_ok(name)
			  : /* a kind: CRD names validation lower-cases it to a DNS-1035 label */
			  strlen(name) <= 63 && isalpha((unsigned char)name[0]);
	for (size_t i = 0; ok && rule == IMP_DNS_KIND && name[i]; i++)
		ok = isalnum((unsigned char)name[i]);
	if (ok)
		return GP_OK;
	char shown[72];
	size_t i = 0;
	for (; name[i] && i < 64; i++)
		shown[i] = (unsigned char)name[i] < 0x20 || name[i] == 0x7f ? '?' : name[i];
	snprintf(shown + i, sizeof shown - i, "%s", name[i] ? "..." : "");
	return imp_error(f, at, key, "invalid %s '%s' (%zu characters); expected %s", what, shown,
			 strlen(name),
			 rule == IMP_DNS_LABEL       ? SCENARIO_DNS_LABEL_HINT
			 : rule == IMP_DNS_SUBDOMAIN ? SCENARIO_DNS_SUBDOMAIN_HINT
						     : "a kind: up to 63 letters and digits, "
						       "starting with a letter");
}

int imp_quantity(struct imp_file *f, const struct ynode *v, const char *key, double *out)
{
	enum quantity_check q =
		v && v->kind == YNODE_SCALAR ? quantity(v->value, out) : QUANTITY_SYNTAX;
	if (q == QUANTITY_RANGE)
		return imp_error(f, v, key,
				 "expected a quantity from 0 to 9223372036854775807 (2^63 - 1, "
				 "Kubernetes' int64), got '%s'",
				 v->value);
	if (q == QUANTITY_SYNTAX)
		return imp_error(f, v, key,
				 "expected a Kubernetes quantity like 16Gi or 500m%s%s%s",
				 v && v->kind == YNODE_SCALAR ? ", got '" : "",
				 v && v->kind == YNODE_SCALAR ? v->value : "",
				 v && v->kind == YNODE_SCALAR ? "'" : "");
	return GP_OK;
}
