/*
 * import_pdb.c - `kubectl get pdb -A -o json` (--pdbs): each
 * PodDisruptionBudget (policy/v1) the pods it selects, so that their
 * workloads say pdb: and the Cluster Autoscaler's scale-down keeps the nodes
 * it would not drain (docs/import.md, docs/autoscaling.md).
 *
 * A budget selects the pods of its namespace whose labels match
 * spec.selector: every matchLabels pair, and every matchExpressions
 * requirement (In, NotIn, Exists, DoesNotExist); an empty selector selects
 * every pod of the namespace, a missing one none (policy/v1, "an empty
 * selector matches all pods").  minAvailable or maxUnavailable is a whole
 * number or a percentage; a percentage is scaled as the disruption
 * controller scales it, rounding up (intstr.GetScaledValueFromIntOrPercent
 * with roundUp true, pkg/controller/disruption/disruption.go), over the pods
 * it selects in the snapshot.  A pod keeps the first budget that selects it
 * (the eviction API refuses a pod with two).
 */
#include "import_int.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* The pod's label key, or NULL. */
static const char *pod_label(const struct imp_pod *p, const char *key)
{
	for (size_t i = 0; i < p->n_labels; i++)
		if (!strcmp(p->labels[i].key, key))
			return p->labels[i].value;
	return NULL;
}

static bool in_values(const struct ynode *values, const char *v)
{
	for (size_t i = 0; v && values && values->kind == YNODE_SEQ && i < values->n; i++)
		if (values->items[i]->kind == YNODE_SCALAR && !strcmp(values->items[i]->value, v))
			return true;
	return false;
}

/* One matchExpressions requirement, read and checked at its path. */
static int requirement(struct imp_file *f, const struct ynode *r, const struct imp_pod *p,
		       bool *match)
{
	const char *key = NULL, *op = NULL;
	const struct ynode *values = NULL;
	int rc = imp_str(f, r, "key", &key);
	if (!rc)
		rc = imp_str(f, r, "operator", &op);
	if (!rc)
		rc = imp_seq(f, r, "values", &values);
	if (rc)
		return rc;
	if (!key || !op)
		return imp_error(f, r, NULL, "expected a requirement with key and operator");
	const char *v = pod_label(p, key);
	if (!strcmp(op, "In"))
		*match = in_values(values, v);
	else if (!strcmp(op, "NotIn"))
		*match = !in_values(values, v);
	else if (!strcmp(op, "Exists"))
		*match = v != NULL;
	else if (!strcmp(op, "DoesNotExist"))
		*match = v == NULL;
	else
		return imp_error(f, ynode_get(r, "operator"), "operator",
				 "expected In, NotIn, Exists or DoesNotExist, got '%s'", op);
	return GP_OK;
}

/* Whether the budget's selector (a map, or NULL: none) selects pod p. */
static int selects(struct imp_file *f, const struct ynode *sel, const struct imp_pod *p,
		   bool *match)
{
	*match = sel != NULL;
	if (!sel)
		return GP_OK;
	const struct ynode *labels = NULL, *exprs = NULL;
	int rc = imp_map(f, sel, "matchLabels", &labels);
	if (!rc)
		rc = imp_seq(f, sel, "matchExpressions", &exprs);
	for (size_t i = 0; !rc && labels && i < labels->n && *match; i++) {
		const char *v = pod_label(p, labels->keys[i]);
		*match = v && labels->items[i]->kind == YNODE_SCALAR &&
			 !strcmp(v, labels->items[i]->value);
	}
	for (size_t i = 0; !rc && exprs && i < exprs->n && *match; i++) {
		size_t base = imp_push_key(f, "matchExpressions");
		imp_push_index(f, i);
		rc = requirement(f, exprs->items[i], p, match);
		imp_pop(f, base);
	}
	return rc;
}

/* minAvailable or maxUnavailable: a whole number, or "N%" of `pods` rounded
 * up; *given false when absent. */
static int int_or_percent(struct imp_file *f, const struct ynode *spec, const char *key,
			  int64_t pods, bool *given, int32_t *out)
{
	const struct ynode *v = ynode_get(spec, key);
	*given = v && !imp_is_null(v);
	if (!*given)
		return GP_OK;
	char *end = NULL;
	long long n = v->kind == YNODE_SCALAR ? strtoll(v->value, &end, 10) : -1;
	if (v->kind == YNODE_SCALAR && end != v->value && !strcmp(end, "%") && n >= 0 && n <= 100) {
		*out = (int32_t)ceil((double)n * (double)pods / 100.0);
		return GP_OK;
	}
	if (v->kind != YNODE_SCALAR || end == v->value || *end || n < 0 || n > INT32_MAX)
		return imp_error(f, v, key,
				 "expected a whole number of pods or a percentage, "
				 "like 1 or 50%%");
	*out = (int32_t)n;
	return GP_OK;
}

static int one_budget(struct imp *im, const struct ynode *it)
{
	struct imp_file *f = &im->pdb_f;
	const struct ynode *meta = NULL, *spec = NULL, *sel = NULL;
	const char *ns = NULL, *name = NULL;
	int rc = imp_map(f, it, "metadata", &meta);
	if (!rc && meta)
		rc = imp_str(f, meta, "namespace", &ns);
	if (!rc && meta)
		rc = imp_str(f, meta, "name", &name);
	if (!rc)
		rc = imp_map(f, it, "spec", &spec);
	if (!rc && (!ns || !name || !spec))
		return imp_error(f, it, NULL,
				 "expected a PodDisruptionBudget with metadata.namespace, "
				 "metadata.name and spec");
	/* named in the scenario: checked as the API server names it */
	size_t m = imp_push_key(f, "metadata");
	rc = imp_dns_name(f, ynode_get(meta, "namespace"), "namespace", ns, IMP_DNS_LABEL,
			  "namespace");
	if (!rc)
		rc = imp_dns_name(f, ynode_get(meta, "name"), "name", name, IMP_DNS_SUBDOMAIN,
				  "PodDisruptionBudget name");
	imp_pop(f, m);
	if (rc)
		return rc;
	size_t base = imp_push_key(f, "spec");
	if (!rc)
		rc = imp_map(f, spec, "selector", &sel);
	int64_t pods = 0;
	for (size_t i = 0; !rc && i < im->n_pods; i++) {
		bool match = false;
		size_t at = imp_push_key(f, "selector");
		rc = strcmp(im->pods[i].ns, ns) ? GP_OK : selects(f, sel, &im->pods[i], &match);
		imp_pop(f, at);
		pods += match && !strcmp(im->pods[i].ns, ns);
	}
	bool min_given = false, max_given = false;
	int32_t min = 0, max = 0;
	if (!rc)
		rc = int_or_percent(f, spec, "minAvailable", pods, &min_given, &min);
	if (!rc)
		rc = int_or_percent(f, spec, "maxUnavailable", pods, &max_given, &max);
	if (!rc && min_given == max_given)
		rc = imp_error(f, spec, NULL, "expected one of minAvailable and maxUnavailable");
	for (size_t i = 0; !rc && i < im->n_pods; i++) {
		struct imp_pod *p = &im->pods[i];
		bool match = false;
		if (p->pdb != PDB_NONE || strcmp(p->ns, ns))
			continue;
		size_t at = imp_push_key(f, "selector");
		rc = selects(f, sel, p, &match);
		imp_pop(f, at);
		if (!match)
			continue;
		p->pdb = (uint8_t)(min_given ? PDB_MIN_AVAILABLE : PDB_MAX_UNAVAILABLE);
		p->pdb_value = min_given ? min : max;
		p->pdb_ns = ns;
		p->pdb_name = name;
	}
	imp_pop(f, base);
	return rc;
}

int imp_read_pdbs(struct imp *im)
{
	struct imp_file *f = &im->pdb_f;
	const struct ynode *items = NULL;
	int rc = imp_open(f, im->o->pdbs, im->err);
	if (!rc)
		rc = imp_list(f, "PodDisruptionBudget", &items);
	for (size_t i = 0; !rc && i < items->n; i++) {
		size_t base = imp_push_key(f, "items");
		imp_push_index(f, i);
		rc = one_budget(im, items->items[i]);
		imp_pop(f, base);
	}
	return rc;
}
