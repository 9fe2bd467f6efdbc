/* results.c - the results of one run (see results.h). */
#include "gpuplan/results.h"

#include <assert.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

const char *job_status_name(enum job_status s)
{
	switch (s) {
	case JOB_COMPLETED: return "completed";
	case JOB_FAILED: return "failed";
	case JOB_PENDING:
	case JOB_RUNNING: break;
	}
	return "unfinished";
}

static const char *const step_names[FINDING_STEPS] = {"allocation", "memory", "placement",
						      "application", "capacity"};

const char *finding_step_name(enum finding_step s)
{
	return s < FINDING_STEPS ? step_names[s] : "?";
}

int finding_step_of(const char *name)
{
	for (int i = 0; i < FINDING_STEPS; i++)
		if (name && !strcmp(name, step_names[i]))
			return i;
	return -1;
}

const char *finding_kind_name(enum finding_kind k)
{
	static const char *const names[FINDING_KINDS] = {
		"sharing",        "admission",     "fragmentation", "stalled",        "oom",
		"vram-full",      "preallocation", "kv-cache",      "rules",          "requests",
		"tokenizer",      "off-gpu",       "restarts",      "autoscaler-max", "replicas",
		"node-group-max", "provisioning",  "capacity",      "data-loader",    "contention",
		"priority",       "startup",       "reclaim",       "mig-profile",    "binds",
		"max-batch",      "deadline",      "scale-down",    "mixed-gpus",     "preempted"};
	return k < FINDING_KINDS ? names[k] : "?";
}

static const char *const constraint_names[CONSTRAINT_KINDS] = {
	"quota",    "borrowing-limit", "lending-limit", "reclaim",        "queueing-strategy",
	"priority", "node-selector",   "affinity",      "taint",          "spread",
	"gpu-spec", "mig-profile",     "cpu-request",   "memory-request", "vram",
	"sharing",  "fragmentation",   "contention",    "window",         "provisioning",
	"startup",  "capacity"};

const char *constraint_kind_name(enum constraint_kind k)
{
	return (unsigned)k < CONSTRAINT_KINDS ? constraint_names[k] : NULL;
}

int constraint_kind_of(const char *name)
{
	for (int i = 0; i < CONSTRAINT_KINDS; i++)
		if (name && !strcmp(name, constraint_names[i]))
			return i;
	return -1;
}

void finding_free(struct finding *f)
{
	free(f->key);
	free(f->value);
	free(f->relaxed);
	free(f->text);
	free(f->evidence);
	free(f->members);
	for (size_t i = 0; i < f->n_fixes; i++) {
		free(f->fixes[i].label);
		for (size_t k = 0; k < f->fixes[i].n_sets; k++)
			override_free(&f->fixes[i].sets[k]);
		free(f->fixes[i].sets);
	}
	free(f->fixes);
	memset(f, 0, sizeof *f);
}

void finding_copy(struct finding *dst, const struct finding *src)
{
	*dst = *src;
	dst->text = src->text ? gp_xstrdup(src->text) : NULL;
	dst->evidence = src->evidence ? gp_xstrdup(src->evidence) : NULL;
	dst->key = src->key ? gp_xstrdup(src->key) : NULL;
	dst->value = src->value ? gp_xstrdup(src->value) : NULL;
	dst->relaxed = src->relaxed ? gp_xstrdup(src->relaxed) : NULL;
	dst->members = NULL;
	if (src->n_members) {
		dst->members = gp_xmalloc(src->n_members * sizeof *dst->members);
		memcpy(dst->members, src->members, src->n_members * sizeof *dst->members);
	}
	dst->fixes = NULL;
	dst->n_fixes = 0;
	for (size_t i = 0; i < src->n_fixes; i++) {
		struct finding_fix *x = finding_add_fix(dst, src->fixes[i].label);
		for (size_t k = 0; k < src->fixes[i].n_sets; k++)
			finding_fix_add(x, override_copy(&src->fixes[i].sets[k]));
	}
}

struct finding_fix *finding_add_fix(struct finding *f, const char *label)
{
	f->fixes = gp_xrealloc(f->fixes, (f->n_fixes + 1) * sizeof *f->fixes);
	struct finding_fix *x = &f->fixes[f->n_fixes++];
	memset(x, 0, sizeof *x);
	x->label = gp_xstrdup(label);
	return x;
}

void finding_fix_add(struct finding_fix *x, struct override o)
{
	if (!x) {
		override_free(&o);
		return;
	}
	GP_GROW(x->sets, x->cap_sets, x->n_sets + 1);
	x->sets[x->n_sets++] = o;
}

struct finding_fix *finding_fixf(struct finding *f, const char *fmt, ...)
{
	struct gp_sbuf label = {0};
	va_list ap;
	va_start(ap, fmt);
	gp_sb_vprintf(&label, fmt, ap);
	va_end(ap);
	bool dup = false;
	for (size_t i = 0; i < f->n_fixes && !dup; i++)
		dup = !strcmp(f->fixes[i].label, gp_sb_str(&label));
	struct finding_fix *x = dup ? NULL : finding_add_fix(f, gp_sb_str(&label));
	free(label.s);
	return x;
}

void finding_fix_setf(struct finding_fix *x, const char *fmt, ...)
{
	if (!x)
		return;
	va_list ap;
	va_start(ap, fmt);
	finding_fix_add(x, override_vsetf(fmt, ap));
	va_end(ap);
}

const char *finding_scope(const struct finding *f, const struct scenario *sc)
{
	return f->workload >= 0 && (size_t)f->workload < sc->n_workloads
		       ? sc->workloads[f->workload].name
	       : f->pool >= 0 && (size_t)f->pool < sc->n_pools ? sc->pools[f->pool].name
							       : NULL;
}

char *finding_fix_text(const struct finding_fix *x)
{
	struct gp_sbuf s = {0};
	for (size_t i = 0; i < x->n_sets; i++)
		gp_sb_printf(&s, "%s--set '%s=%s'", i ? " " : "", x->sets[i].key, x->sets[i].value);
	return gp_sb_take(&s);
}

void results_init(struct results *r)
{
	memset(r, 0, sizeof *r);
	r->status = "ok";
}

void results_free(struct results *r)
{
	for (size_t i = 0; i < r->n_nodes; i++)
		free(r->node_names[i]);
	free(r->node_names);
	free(r->metrics);
	hash_ids_free(&r->metric_index);
	free(r->jobs);
	free(r->requests);
	free(r->ts);
	for (size_t i = 0; i < r->n_reason_texts; i++)
		free(r->reason_texts[i]);
	free(r->reason_texts);
	free(r->pending_reasons);
	free(r->allocations);
	for (size_t i = 0; i < r->n_node_allocations; i++)
		free(r->node_allocations[i].node);
	free(r->node_allocations);
	for (size_t i = 0; i < r->n_findings; i++)
		finding_free(&r->findings[i]);
	free(r->findings);
	free(r->constraints);
	free(r->curve);
	free(r->scaling);
	for (size_t i = 0; i < r->n_backtest; i++)
		free(r->backtest[i].scope);
	free(r->backtest);
	for (size_t i = 0; i < r->n_gaps; i++)
		free(r->gaps[i].example);
	free(r->gaps);
	memset(r, 0, sizeof *r);
}

const char *const backtest_metric_names[RESULTS_BACKTEST_METRICS] = {
	"pods_started", "queue_time_mean_s", "queue_time_p95_s", "gpu_hours",
	"peak_allocated_gpus"};

bool results_backtest_within(const struct backtest_row *row, double tolerance)
{
	if (isnan(row->observed) && isnan(row->simulated))
		return true; /* nothing to compare: no pod queued on either side */
	if (isnan(row->observed) || isnan(row->simulated))
		return false;
	bool queue = !strncmp(row->metric, "queue_time_", 11);
	if (queue && fabs(row->simulated - row->observed) <= RESULTS_BACKTEST_QUEUE_FLOOR_S)
		return true;
	return !isnan(row->error) && fabs(row->error) <= tolerance + 1e-12;
}

/* FNV-1a over scope, a separator and name. */
static uint64_t metric_hash(const char *scope, const char *name)
{
	return hash_fnv1a(hash_fnv1a_byte(hash_fnv1a(HASH_FNV_BASIS, scope), 0xff), name);
}

/* Indexes the metric at pos, doubling the table past half full. */
static void index_add(struct results *r, size_t pos)
{
	struct hash_ids *x = &r->metric_index;
	if (r->n_indexed != pos)
		return; /* metrics were added around the index: it stays a scan */
	if (hash_ids_crowded(x)) {
		hash_ids_reset(x, x->slot ? 2 * hash_ids_slots(x) : 64);
		for (size_t k = 0; k < pos; k++)
			hash_ids_put(x, metric_hash(r->metrics[k].scope, r->metrics[k].name), k);
	}
	hash_ids_put(x, metric_hash(r->metrics[pos].scope, r->metrics[pos].name), pos);
	r->n_indexed = pos + 1;
}

void results_add_metric(struct results *r, const char *scope, enum metric_id id, double value)
{
	const struct metric_def *d = metric_def(id);
	assert(d->unit || r->currency); /* a money metric: the run sets its currency */
	const char *unit = d->unit ? d->unit : r->currency ? r->currency : "usd";
	GP_GROW(r->metrics, r->cap_metrics, r->n_metrics + 1);
	r->metrics[r->n_metrics++] = (struct metric){scope, d->name, value, unit};
	index_add(r, r->n_metrics - 1);
}

/* The position of the first metric added under (scope, name), as the scan
 * finds it; SIZE_MAX: none. */
static size_t find(const struct results *r, const char *scope, const char *name)
{
	const struct hash_ids *x = &r->metric_index;
	if (x->slot && r->n_indexed == r->n_metrics) {
		size_t best = SIZE_MAX;
		size_t i = hash_ids_home(x, metric_hash(scope, name));
		for (; hash_ids_at(x, i); i = hash_ids_next(x, i)) {
			size_t pos = hash_ids_at(x, i) - 1u;
			const struct metric *m = &r->metrics[pos];
			if (pos < best && !strcmp(m->scope, scope) && !strcmp(m->name, name))
				best = pos;
		}
		return best;
	}
	for (size_t i = 0; i < r->n_metrics; i++)
		if (!strcmp(r->metrics[i].scope, scope) && !strcmp(r->metrics[i].name, name))
			return i;
	return SIZE_MAX;
}

bool results_get(const struct results *r, const char *scope, enum metric_id id, double *out)
{
	size_t at = find(r, scope, metric_name(id));
	*out = at == SIZE_MAX ? NAN : r->metrics[at].value;
	return at != SIZE_MAX;
}

double results_or(const struct results *r, const char *scope, enum metric_id id, double absent)
{
	double v;
	return results_get(r, scope, id, &v) ? v : absent;
}

bool results_holds(const struct results *r, const char *scope, enum metric_id id)
{
	double v;
	return results_get(r, scope, id, &v) && v >= 1;
}
