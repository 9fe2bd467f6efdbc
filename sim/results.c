/* results.c - the results of one run (see results.h). */
#include "gpuplan/results.h"

#include <assert.h>
#include <math.h>
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
		"max-batch",      "deadline"};
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
			free(f->fixes[i].sets[k]);
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
			finding_fix_set(x, src->fixes[i].sets[k]);
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

void finding_fix_set(struct finding_fix *x, const char *set)
{
	if (!x)
		return;
	GP_GROW(x->sets, x->cap_sets, x->n_sets + 1);
	x->sets[x->n_sets++] = gp_xstrdup(set);
}

char *finding_fix_text(const struct finding_fix *x)
{
	size_t len = 1;
	for (size_t i = 0; i < x->n_sets; i++)
		len += strlen(x->sets[i]) + 10;
	char *s = gp_xmalloc(len), *at = s;
	*s = '\0';
	for (size_t i = 0; i < x->n_sets; i++)
		at += snprintf(at, len - (size_t)(at - s), "%s--set '%s'", i ? " " : "",
			       x->sets[i]);
	return s;
}

const char *const results_metric_names[] = {
	"arrived_demand_pct",
	"autoscaler_at_max_s",
	"capacity_gpus",
	"cost_allocated",
	"cost_bill",
	"cost_committed",
	"cost_idle",
	"cost_nodes",
	"cost_on_demand",
	"cost_per_day",
	"cost_per_million_tokens",
	"energy_kwh",
	"energy_per_1k_tokens_wh",
	"energy_per_verified_result_wh",
	"tokens_per_joule",
	"cost_per_verified_job",
	"cost_per_verified_request",
	"cost_per_verified_result",
	"cost_total",
	"culled_gpu_hours",
	"deadline_met_pct",
	"decode_cost",
	"decode_duty_cycle_pct",
	"decode_gpu_hours",
	"decode_gpus",
	"duty_cycle_pct",
	"e2e_mean_s",
	"e2e_p50_s",
	"e2e_p99_s",
	"engine_active_pct",
	"failed_scale_ups",
	"fragmentation_pct",
	"goal_met",
	"goals_missed",
	"gpu_allocation_pct",
	"gpu_hours_allocated",
	"gpu_hours_busy",
	"jobs_completed",
	"jobs_culled",
	"jobs_failed",
	"jobs_preempted",
	"jobs_submitted",
	"jobs_unfinished",
	"jobs_waiting",
	"kv_transfer_gb",
	"kv_transfer_mean_s",
	"kv_transfer_p50_s",
	"kv_transfer_p99_s",
	"kv_transfers",
	"makespan_s",
	"node_hours",
	"nodes_added",
	"nodes_peak",
	"oom_kills",
	"peak_allocated_gpus",
	"peak_demand_gpus",
	"pods_scheduled",
	"pods_trace",
	"preemptions",
	"prefill_cost",
	"prefill_duty_cycle_pct",
	"prefill_gpu_hours",
	"prefill_gpus",
	"provisioning_wait_s",
	"queue_goal_s",
	"queue_time_max_s",
	"queue_time_mean_s",
	"queue_time_p50_s",
	"queue_time_p95_s",
	"queue_time_p99_s",
	"replica_wait_max_s",
	"replicas_evicted",
	"request_queue_mean_s",
	"requests_completed",
	"requests_rejected",
	"requests_submitted",
	"requests_unfinished",
	"scale_downs",
	"scale_ups",
	"slo_attainment_pct",
	"slo_met",
	"slo_tpot_s",
	"slo_ttft_s",
	"sm_active_pct",
	"spot_interruptions",
	"target_shapes",
	"throughput_rps",
	"tokenize_wait_mean_s",
	"tokens_per_s",
	"tpot_p50_s",
	"tpot_p95_s",
	"tpot_p99_s",
	"ttft_mean_s",
	"ttft_p50_s",
	"ttft_p95_s",
	"ttft_p99_s",
	"verified_results",
	"vram_capacity_gib",
	"vram_used_pct",
	"wait_so_far_max_s",
};
const size_t results_n_metric_names = sizeof results_metric_names / sizeof results_metric_names[0];

bool results_known_metric(const char *name)
{
	for (size_t i = 0; i < results_n_metric_names; i++)
		if (!strcmp(results_metric_names[i], name))
			return true;
	return false;
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

void results_add_metric(struct results *r, const char *scope, const char *name, double value,
			const char *unit)
{
	assert(results_known_metric(name)); /* a new metric goes in results_metric_names too */
	GP_GROW(r->metrics, r->cap_metrics, r->n_metrics + 1);
	r->metrics[r->n_metrics++] = (struct metric){scope, name, value, unit};
	index_add(r, r->n_metrics - 1);
}

/* The first metric added under (scope, name), as the scan finds it. */
double results_metric(const struct results *r, const char *scope, const char *name)
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
		return best == SIZE_MAX ? NAN : r->metrics[best].value;
	}
	for (size_t i = 0; i < r->n_metrics; i++)
		if (!strcmp(r->metrics[i].scope, scope) && !strcmp(r->metrics[i].name, name))
			return r->metrics[i].value;
	return NAN;
}
