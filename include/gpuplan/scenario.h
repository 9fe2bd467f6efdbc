/*
 * scenario.h - a validated, immutable scenario (DESIGN.md section 4).
 *
 * scenario_load reads the YAML file, applies --set overrides, checks every
 * value (units, ranges, references to the catalog and between sections) and
 * loads the batch traces the workloads name, so that a scenario that loads
 * can be simulated without any further input error.  Errors are located
 * ("PATH:LINE:COL: error: ..." or "TRACE:LINE: error: ...") and return
 * GP_EINPUT.  The scenario owns everything it points to; scenario_free
 * releases it.  Times are sim_time relative to `start`.
 */
#ifndef GPUPLAN_SCENARIO_H
#define GPUPLAN_SCENARIO_H

#include "gpuplan/catalog.h"
#include "gpuplan/common.h"

/* Refuse inputs that would need more memory than a planning run should take
 * (a count of 1e12 jobs).  Raised with GPUPLAN_MAX_JOBS in the environment. */
#define SCENARIO_DEFAULT_MAX_JOBS INT64_C(50000000)

struct kv {
	char *key;
	char *value;
};

enum taint_effect { EFFECT_NO_SCHEDULE, EFFECT_PREFER_NO_SCHEDULE, EFFECT_NO_EXECUTE };

struct taint {
	char *key;
	char *value;               /* "" when absent */
	enum taint_effect effect;
};

enum toleration_op { TOLERATION_EQUAL, TOLERATION_EXISTS };

struct toleration {
	char *key;                 /* "" with Exists tolerates every taint */
	enum toleration_op op;
	char *value;
	int effect;                /* an enum taint_effect, or -1 for all effects */
};

struct price {
	double gpu_hour;
	double cpu_hour;
	double gib_hour;
};

/* A daily window [from, to) in seconds since midnight; to < from wraps past
 * midnight.  days: bit 0 = Monday .. bit 6 = Sunday (the day the window opens). */
struct window {
	int32_t from;
	int32_t to;
	uint8_t days;
	struct srcloc loc;
};

#define WINDOW_EVERY_DAY 0x7f

enum sharing_mode {
	SHARING_EXCLUSIVE,    /* one pod per GPU */
	SHARING_TIME_SLICING, /* R units per GPU, kernels serialized, no memory isolation */
	SHARING_MPS,          /* R units per GPU, 1/R of the SMs and of the memory each */
	SHARING_MIG,          /* a fixed layout of isolated instances per GPU */
	SHARING_FRACTIONAL,   /* milli requests: milli/1000 of the SMs and memory */
};

struct sharing {
	enum sharing_mode mode;
	int32_t replicas;     /* time-slicing, mps: units per GPU (>= 1) */
	double overhead;      /* time-slicing: context-switch overhead o, default 0.05 */
	const struct mig_profile **layout; /* mig: the instances of every GPU */
	size_t n_layout;
	struct srcloc loc;
};

struct pool_spec {
	char *name;
	struct srcloc loc;
	int32_t nodes;
	const struct gpu_type *gpu;
	int32_t gpus_per_node;     /* 1 .. 64 */
	double cpu;                /* cores per node */
	double memory_bytes;       /* per node */
	struct kv *labels;
	size_t n_labels;
	struct taint *taints;
	size_t n_taints;
	struct window *windows;    /* none: always open */
	size_t n_windows;
	struct price price;
	sim_time startup;
	struct sharing sharing;
};

enum workload_kind { WORKLOAD_BATCH, WORKLOAD_INFERENCE };
enum arrival_kind { ARRIVAL_AT, ARRIVAL_POISSON, ARRIVAL_TRACE };
enum trace_format { TRACE_CSV };
enum dist_kind { DIST_FIXED, DIST_EXPONENTIAL, DIST_LOGNORMAL, DIST_GAMMA, DIST_UNIFORM };

/* A distribution of a positive quantity, in its natural unit (seconds for
 * durations).  fixed: mean.  exponential: mean.  lognormal: mean and sigma of
 * the underlying normal.  gamma: mean and shape k.  uniform: min and max. */
struct dist {
	enum dist_kind kind;
	double mean;
	double sigma;
	double shape;
	double min;
	double max;
};

/* One row of a batch trace (csv: submit_s,duration_s,gpus[,deadline_s]). */
struct trace_job {
	sim_time submit;
	sim_time duration;
	sim_time deadline;         /* absolute; SIM_NEVER when absent */
	int32_t gpus;
	int32_t line;              /* in the trace file, for messages */
};

enum deadline_kind { DEADLINE_NONE, DEADLINE_AT, DEADLINE_WITHIN };

struct arrival {
	enum arrival_kind kind;
	sim_time at;               /* ARRIVAL_AT: all `count` jobs arrive then */
	double rate;               /* ARRIVAL_POISSON: per second */
	sim_time from;             /* ARRIVAL_POISSON: first possible arrival (default 0) */
	char *trace_path;          /* ARRIVAL_TRACE: resolved against the scenario's folder */
	enum trace_format format;
	struct trace_job *rows;    /* ARRIVAL_TRACE: sorted by submit (stable) */
	size_t n_rows;
};

/* What one pod asks for: nvidia.com/gpu units (whole GPUs, or time-slicing
 * and MPS replicas, one per GPU), one MIG instance, or a share of one GPU. */
enum gpu_request { REQUEST_GPUS, REQUEST_MIG, REQUEST_MILLI };

struct workload_spec {
	char *name;
	struct srcloc loc;
	enum workload_kind kind;
	int64_t count;             /* jobs; for traces, the number of rows; -1 for a
				    * poisson stream without count (runs to the horizon) */
	struct arrival arrival;
	enum gpu_request request;
	int32_t gpus;              /* REQUEST_GPUS: units per job, on one node */
	char *mig_profile;         /* REQUEST_MIG: "3g.40gb" */
	int32_t milli;             /* REQUEST_MILLI: 1 .. 1000 */
	struct dist duration;      /* seconds, exclusive-GPU duration */
	enum deadline_kind deadline_kind;
	sim_time deadline;         /* DEADLINE_AT: absolute; DEADLINE_WITHIN: after arrival */
	double gpu_busy;           /* f in (0, 1], default 1 */
	double sm_share;           /* s in (0, 1], default 1 */
	double vram_bytes;         /* per GPU; given, or derived from model and quantization;
				    * 0 = unknown */
	const struct model_arch *model;  /* NULL: none */
	int quantization;          /* an enum quant (footprint.h) when model is set */
	int32_t restart_limit;     /* OOM kills retried this often, default 6 */
	sim_time restart_backoff;  /* first delay, doubled per restart up to 5m; default 10s */
	double cpu;                /* cores per job */
	double memory_bytes;
	struct kv *node_selector;
	size_t n_node_selector;
	struct toleration *tolerations;
	size_t n_tolerations;
	char **gpu_spec;           /* allowed GPU type names; none = any */
	size_t n_gpu_spec;
	int32_t queue;             /* index into scenario.queues */
	int32_t priority;
};

enum queue_strategy { STRATEGY_BEST_EFFORT_FIFO, STRATEGY_STRICT_FIFO };

struct queue_spec {
	char *name;
	struct srcloc loc;
	enum queue_strategy strategy;
};

enum sched_order { ORDER_FIFO, ORDER_PRIORITY, ORDER_EDF, ORDER_SJF };
enum sched_scoring { SCORING_MOST_ALLOCATED, SCORING_LEAST_ALLOCATED };
enum window_policy { WINDOW_FIT };

struct scheduler_spec {
	enum sched_order order;
	enum sched_scoring scoring;
	enum window_policy window_policy;
};

struct output_spec {
	char *db;                  /* resolved: as given (relative to the working
				    * directory, as users expect of an output path) */
	sim_time step;             /* timeseries resolution, default 5m */
	bool jobs;                 /* default true */
	bool requests;             /* default false */
};

/* A --set override as given, for the params table. */
struct param {
	char *key;
	char *value;
};

struct scenario {
	char *name;
	char *path;                /* as given */
	char *dir;                 /* folder of path, for relative references */
	char sha256[65];           /* of the file's bytes */
	uint64_t seed;             /* default 1 */
	int64_t start_epoch;       /* seconds since the Unix epoch; default 2026-01-01T00:00:00Z */
	sim_time horizon;          /* 0 = run until all work is done */
	struct pool_spec *pools;
	size_t n_pools;
	struct workload_spec *workloads;
	size_t n_workloads;
	struct queue_spec *queues; /* always at least one: "default" */
	size_t n_queues;
	struct scheduler_spec scheduler;
	struct output_spec output;
	struct param *params;
	size_t n_params;
	struct ytree *tree;        /* owns the strings locations point to */
};

/* Loads and validates.  sets: "KEY=VALUE" strings applied in order. */
int scenario_load(const char *path, const char *const *sets, size_t n_sets,
		  struct scenario **out, struct gp_err *err);

void scenario_free(struct scenario *sc);

/* Index of the pool / workload / queue with that name, or -1. */
int scenario_pool_index(const struct scenario *sc, const char *name);
int scenario_workload_index(const struct scenario *sc, const char *name);
int scenario_queue_index(const struct scenario *sc, const char *name);

/* Total GPUs of all pools. */
int64_t scenario_capacity_gpus(const struct scenario *sc);

/* Kubernetes' name of what a workload's pods request: "nvidia.com/gpu" or
 * "nvidia.com/mig-3g.40gb" (buf of at least 64 bytes). */
const char *scenario_resource_name(const struct workload_spec *w, char *buf, size_t len);

/* Whether pool p offers the resource workload w's pods ask for. */
bool scenario_pool_offers(const struct pool_spec *p, const struct workload_spec *w);

/* Whether pool p can ever host a pod of workload w (the resource exists there
 * and the pod's memory fits the unit's limit), and if so how many GPUs' worth
 * one pod is allocated there (1/R for a replica, g/7 for a MIG instance,
 * milli/1000 for a share); 0 when it cannot. */
double scenario_gpu_equivalent(const struct pool_spec *p, const struct workload_spec *w);

/* Jobs the scenario will submit (sum of counts); used for the resource limit. */
int64_t scenario_job_count(const struct scenario *sc);

#endif
