/*
 * scenario_int.h - the scenario loader's private header, shared by its files
 * (as SQLite's whereInt.h is by where*.c).  Not part of the public interface.
 *
 * The loader is split by section of the format:
 *   scenario.c            the top level, output and experiment, loading, freeing
 *   scenario_values.c     messages and the readers of scalars, maps and lists
 *   scenario_pools.c      pools: shape, sharing, taints, windows, prices
 *   scenario_queues.c     queues, quotas, cohorts and the scheduler
 *   scenario_flavors.c    Kueue's ResourceFlavors and a queue's resource groups
 *   scenario_workloads.c  workloads: resources, durations, rules
 *   scenario_arrivals.c   a workload's arrival: at, poisson, schedule, trace
 *   scenario_week.c       a workload's week: windows, rates by hour, CronJobs, culling
 *   scenario_inference.c  inference keys: replicas, batching, requests, SLOs
 *   scenario_route.c      routed services: groups and router, expanded in the tree
 *   scenario_disagg.c     an inference workload's disaggregated: key
 *   scenario_openb.c      pools and workloads from the openb node and pod lists
 *   scenario_history.c    a twin's history section and its !placeholder values
 *   scenario_replay.c     a twin made into the replay of its observed pods
 * Names shared between the files carry the prefix ld_ (loader).
 */
#ifndef GPUPLAN_SCENARIO_INT_H
#define GPUPLAN_SCENARIO_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "gpuplan/catalog.h"
#include "gpuplan/scenario.h"
#include "gpuplan/ytree.h"

#define N_OF(a) (sizeof(a) / sizeof *(a))

#define DEFAULT_START_EPOCH INT64_C(1767225600) /* 2026-01-01T00:00:00Z */
#define DEFAULT_STEP        0                   /* adaptive: collect.h chooses it for the span */
#define DEFAULT_QUEUE       "default"
#define MAX_NODES_PER_POOL  1000000
#define MAX_GPUS_PER_NODE   SCENARIO_MAX_GPUS_PER_NODE

/* The state of one load: where errors go and what later sections need. */
struct loader {
	struct scenario *sc;
	struct gp_err *err;
	int64_t max_jobs;
	int32_t widest_node;       /* largest gpus_per_node of any pool */
	int32_t widest_request;    /* most units a pod may ask for on a node (sharing_max_units) */
	struct route_note *routes; /* per workload item after ld_route_expand; NULL: none routed */
	size_t n_routes;
};

typedef int (*key_fn)(struct loader *ld, const struct ynode *v, void *obj);

struct key_rule {
	const char *key;
	key_fn fn; /* NULL: in the scenario format, not simulated yet */
};

/* scenario.c */
void ld_free_workload(struct workload_spec *w);

/* scenario_history.c */
void ld_apply_growth(struct loader *ld);
void ld_free_placeholders(struct scenario *sc);
void ld_gather_placeholders(struct loader *ld, const struct ynode *root);
int ld_load_growth(struct loader *ld, const struct ynode *v);
int ld_load_history(struct loader *ld, const struct ynode *v);

/* scenario_inference.c */
int ld_finish_inference(struct loader *ld, const struct ynode *item, struct workload_spec *w);
struct inference_spec *ld_new_inference(void);
int ld_workload_kv_cache(struct loader *ld, const struct ynode *v, void *obj);
int ld_workload_max_batch(struct loader *ld, const struct ynode *v, void *obj);
int ld_workload_max_batched_tokens(struct loader *ld, const struct ynode *v, void *obj);
int ld_workload_memory_fraction(struct loader *ld, const struct ynode *v, void *obj);
int ld_workload_replicas(struct loader *ld, const struct ynode *v, void *obj);
int ld_workload_requests(struct loader *ld, const struct ynode *v, void *obj);
int ld_workload_route(struct loader *ld, const struct ynode *v, void *obj);
int ld_workload_slo(struct loader *ld, const struct ynode *v, void *obj);
int ld_workload_tensor_parallel(struct loader *ld, const struct ynode *v, void *obj);
int ld_workload_step_overhead(struct loader *ld, const struct ynode *v, void *obj);
int ld_workload_tokenize(struct loader *ld, const struct ynode *v, void *obj);

/* scenario_route.c: a routed service (groups:, router:) becomes one workload
 * item per group in the tree, before the workloads are read; ld_route_apply
 * then gives each group's inference_spec its service, range and index. */
struct route_note {
	char *service; /* NULL: the item is not a group */
	int32_t group, n_groups;
	int64_t lo, hi;
	struct srcloc loc; /* the service's item */
};
int ld_route_expand(struct loader *ld, const struct ynode *list);
int ld_route_apply(struct loader *ld);
void ld_route_free(struct loader *ld);
/* `--set workloads.S-G.KEY=V`, group G of routed service S by its workload's
 * name (advise's fixes name it so), as the path the tree has,
 * workloads.S.groups.G.KEY=V (malloc'd); NULL when it is no such path. */
char *ld_route_alias(const struct ynode *root, const char *assignment);

/* scenario_disagg.c */
int ld_workload_disaggregated(struct loader *ld, const struct ynode *v, void *obj);
int ld_finish_disagg(struct loader *ld, const struct ynode *item, struct workload_spec *w);
double ld_disagg_least_vram(const struct workload_spec *w);

/* scenario_pools.c */
extern const char *const ld_effect_names[3];
extern const char *const ld_expander_names[6];
int ld_load_pools(struct loader *ld, const struct ynode *v);
int ld_load_taints(struct loader *ld, const struct ynode *v, struct taint **out, size_t *n);
int ld_load_window(struct loader *ld, const struct ynode *item, struct window *w);

/* scenario_week.c: the week of a workload (windows, arrivals by hour and
 * weekday, CronJob schedules, idle culling) */
int ld_workload_windows(struct loader *ld, const struct ynode *v, void *obj);
int ld_workload_idle_cull(struct loader *ld, const struct ynode *v, void *obj);
int ld_arrival_schedule(struct loader *ld, const struct ynode *v, void *obj);
/* A workload's arrival key (scenario_arrivals.c). */
#define ARRIVAL_HINT                                                                      \
	"{at: \"12:00\"}, {process: poisson, rate: 10/h}, {schedule: \"0 22 * * *\"} or " \
	"{trace: PATH, format: csv}"
int ld_workload_arrival(struct loader *ld, const struct ynode *v, void *obj);
/* rate_by_hour and by_weekday of map v into *r; numbers without a unit are
 * per hour (per_hour) or per second.  Nothing when v has neither key. */
int ld_weekly_rate(struct loader *ld, const struct ynode *v, bool per_hour, struct weekly_rate *r);
double ld_cron_rate(const struct cron *c, int64_t start_epoch);
int ld_read_later(struct loader *ld, const struct ynode *v, void *obj);
int ld_finish_week(struct loader *ld, const struct ynode *item, struct workload_spec *w);

/* scenario_queues.c */
int ld_cohort_index(const struct scenario *sc, const char *name);
int ld_load_cohorts(struct loader *ld, const struct ynode *v);
int ld_load_queues(struct loader *ld, const struct ynode *v);
int ld_quota_amount(struct loader *ld, const char *key, const struct ynode *v, double *out);
int ld_quota_amount_check(struct loader *ld, const char *key, struct srcloc loc);

/* scenario_flavors.c */
int ld_load_flavors(struct loader *ld, const struct ynode *v);
int ld_queue_groups(struct loader *ld, const struct ynode *v, void *obj);
int ld_queue_fungibility(struct loader *ld, const struct ynode *v, void *obj);
void ld_plain_group(struct loader *ld, struct queue_spec *q);
void ld_free_flavor(struct flavor_spec *f);
void ld_free_groups(struct queue_spec *q);
extern const struct key_rule ld_scheduler_rules[5];
/* The keys of a pool, a workload, a queue and a cohort (scenario_format_key). */
const struct key_rule *ld_pool_rules(size_t *n);
const struct key_rule *ld_workload_rules(size_t *n);
const struct key_rule *ld_queue_rules(size_t *n);
const struct key_rule *ld_cohort_rules(size_t *n);

/* scenario_values.c */
int ld_bad_value(struct loader *ld, const struct ynode *v, const char *what, const char *hint);
int ld_check_label_key(struct loader *ld, struct srcloc loc, const char *what, const char *where,
		       const char *key);
int ld_duplicate(struct loader *ld, const struct ynode *item, const char *what, const char *name,
		 struct srcloc first);
int ld_expect_list(struct loader *ld, const struct ynode *v, const char *what, const char *hint);
int ld_get_amount(struct loader *ld, const struct ynode *v, const char *what, const char *hint,
		  double *out);
/* ld_get_amount for cores, also in Kubernetes' millicores (500m). */
int ld_get_cores(struct loader *ld, const struct ynode *v, const char *what, const char *hint,
		 double *out);
int ld_get_bool(struct loader *ld, const struct ynode *v, const char *what, bool *out);
int ld_get_clock(struct loader *ld, const struct ynode *v, const char *what, sim_time *out);
int ld_get_duration(struct loader *ld, const struct ynode *v, const char *what, bool positive,
		    sim_time *out);
/* Every rate key's one rule: a rate with its unit (10/h), or a bare number
 * per second (so that `search --vary` can bisect plain numbers); > 0. */
int ld_get_rate(struct loader *ld, const struct ynode *v, const char *what, double *per_second);
int ld_get_enum(struct loader *ld, const struct ynode *v, const char *what,
		const char *const *names, size_t n, int *out);
int ld_get_fraction(struct loader *ld, const struct ynode *v, const char *what, double *out);
int ld_get_gpu_type(struct loader *ld, const struct ynode *v, const char *what,
		    const struct gpu_type **out);
int ld_get_int(struct loader *ld, const struct ynode *v, const char *what, int64_t lo, int64_t hi,
	       int64_t *out);
int ld_get_item_name(struct loader *ld, const struct ynode *v, const char *what, char **out);
int ld_get_kv_map(struct loader *ld, const struct ynode *v, const char *what, struct kv **out,
		  size_t *n);
int ld_get_positive(struct loader *ld, const struct ynode *v, const char *what, const char *hint,
		    double *out);
int ld_get_scenario_name(struct loader *ld, const struct ynode *v, char **out);
int ld_get_size(struct loader *ld, const struct ynode *v, const char *what, double *out);
int ld_get_string(struct loader *ld, const struct ynode *v, const char *what, const char *hint,
		  char **out);
int ld_get_text(struct loader *ld, const struct ynode *v, const char *what, char **out);
bool ld_is_null(const struct ynode *v);
const char *ld_join(char *buf, size_t size, const char *const *words, size_t n,
		    const char *last_sep);
int ld_only_keys(struct loader *ld, const struct ynode *map, const char *const *allowed, size_t n,
		 const char *what);
int ld_require(struct loader *ld, const struct ynode *map, const char *key, const char *what,
	       const char *hint);
/* A key map must have, and what its value looks like (ld_require_all's table). */
struct ld_need {
	const char *key, *hint;
};
/* ld_require of each of the n keys in turn, up to the first missing. */
int ld_require_all(struct loader *ld, const struct ynode *map, const char *what,
		   const struct ld_need *need, size_t n);
int ld_unknown_word(struct loader *ld, struct srcloc loc, const char *what, const char *word,
		    const char *const *names, size_t n);
int ld_walk_map(struct loader *ld, const struct ynode *map, const char *what, const char *hint,
		const struct key_rule *rules, size_t n, void *obj);

/* scenario_workloads.c */
extern const char *const ld_dist_params[][2];
int ld_dist_kind(struct loader *ld, const struct ynode *v, void *obj);
extern const char *const ld_dist_names[6];
const char *ld_dist_param_hint(const char *param);
int ld_dist_shape(struct loader *ld, const struct ynode *v, void *obj);
int ld_dist_sigma(struct loader *ld, const struct ynode *v, void *obj);
int ld_expand_openb_workloads(struct loader *ld);
int ld_load_workloads(struct loader *ld, const struct ynode *v);
int ld_load_tolerations(struct loader *ld, const struct ynode *v, struct toleration **out,
			size_t *n);
char *ld_resolve(const char *dir, const char *path);

/* --- openb (scenario_openb.c) --- */

/* Deep copies of what parent owns besides its name, arrival, request and
 * gpu_spec into w: selectors, tolerations, affinity, spread. */
void ld_copy_rules(struct workload_spec *w, const struct workload_spec *parent);

/*
 * Replaces every pool of sc that names an openb node list (pool_spec.trace_path)
 * by one pool per distinct node shape (model, GPUs, CPU, memory), in order of
 * first appearance: "<pool>-<model>-<gpus>x<cores>c" (with "-<GiB>Gi" when
 * two shapes differ by memory only), gpu the model's type, the model as the
 * label OPENB_MODEL_LABEL, the other keys of the entry (sharing, price,
 * labels, taints, windows, startup) copied.
 */
int ld_openb_expand_pools(struct scenario *sc, struct gp_err *err);

/*
 * For a timed replay: the workloads that stand for the pods of an openb
 * workload, one per distinct request (cpu, memory, GPUs, milli, gpu_spec), in
 * order of first appearance, named "<workload>/<cpu>m-<memory>Mi-<n>x<milli>m"
 * ("-cpu" for CPU-only pods, "-<models>" after a gpu_spec).  Each takes the
 * parent's other settings (queue, priority, tolerations, selectors ...) and
 * trace rows: submit = creation_time, duration = deletion_time -
 * scheduled_time (deletion - creation for a pod the trace never scheduled),
 * trace_queue = scheduled - creation.  A pod wider than widest (GPUs of the
 * largest node) is an error at its line.  The caller owns *subs (n of them).
 */
int ld_openb_split_workload(const struct workload_spec *parent, int32_t widest,
			    struct workload_spec **subs, size_t *n, struct gp_err *err);

#endif
