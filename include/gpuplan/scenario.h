/*
 * scenario.h - a validated, immutable scenario (docs/scenario.md).
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
#include "gpuplan/gpupolicy.h"
#include "gpuplan/override.h"
#include "gpuplan/requests.h"
#include "gpuplan/sharing.h"
#include "gpuplan/trace.h"
#include "gpuplan/units.h"

#include <string.h>

/* Refuse inputs that would need more memory than a planning run should take
 * (a count of 1e12 jobs).  Raised with GPUPLAN_MAX_JOBS in the environment. */
#define SCENARIO_DEFAULT_MAX_JOBS INT64_C(50000000)

struct kv {
	char *key;
	char *value;
};

enum taint_effect { EFFECT_NO_SCHEDULE, EFFECT_PREFER_NO_SCHEDULE, EFFECT_NO_EXECUTE };

/* The taint of a cordoned node (kubectl cordon sets spec.unschedulable; the
 * node lifecycle controller adds this with effect NoSchedule). */
#define SCENARIO_CORDON_TAINT "node.kubernetes.io/unschedulable"

struct taint {
	char *key;
	char *value; /* "" when absent */
	enum taint_effect effect;
};

enum toleration_op { TOLERATION_EQUAL, TOLERATION_EXISTS };

struct toleration {
	char *key; /* "" with Exists tolerates every taint */
	enum toleration_op op;
	char *value;
	int effect; /* an enum taint_effect, or -1 for all effects */
};

/* One requirement of `affinity` (a nodeSelectorTerm's matchExpressions; the
 * list is ANDed, like one term). */
enum affinity_op { AFFINITY_IN, AFFINITY_NOT_IN, AFFINITY_EXISTS, AFFINITY_DOES_NOT_EXIST };

struct affinity_expr {
	char *key;
	enum affinity_op op;
	char **values; /* In, NotIn: at least one; Exists, DoesNotExist: none */
	size_t n_values;
};

enum spread_when { SPREAD_DO_NOT_SCHEDULE, SPREAD_SCHEDULE_ANYWAY };

/* topology_spread: the pods of the workload spread over the values of a node
 * label (kube-scheduler's PodTopologySpread, one constraint). */
struct topology_spread {
	char *key;        /* NULL: no constraint */
	int32_t max_skew; /* >= 1 */
	enum spread_when when;
};

/* A pool's prices per hour.  committed: the pool's first `committed` GPUs
 * (in node order) are a commitment (a reservation, a committed-use
 * discount) at committed_gpu_hour, billed over the whole span whether
 * powered, used or not; the GPUs after them bill gpu_hour while powered. */
struct price {
	double gpu_hour;
	double cpu_hour;
	double gib_hour;
	char currency[4]; /* its ISO 4217 code (price.currency); "" = USD */
	double committed_gpu_hour;
	int32_t committed; /* GPUs; 0: none */
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

/* Cluster Autoscaler's expanders: which node group grows when several could. */
enum expander_kind {
	EXPANDER_RANDOM,
	EXPANDER_LEAST_WASTE,
	EXPANDER_PRICE,
	EXPANDER_PRIORITY,
	EXPANDER_MOST_PODS,
	EXPANDER_LEAST_NODES,
};

/* The longest chain of expanders (--expander=priority,least-waste). */
#define EXPANDER_CHAIN_MAX 6

/* A line of the priority expander's ConfigMap (cluster-autoscaler-priority-
 * expander, key priorities): node groups whose name the regular expression
 * finds a match in have this priority. */
struct expander_priority {
	int32_t priority;
	char *pattern; /* POSIX extended, unanchored like Go's FindStringIndex */
	struct srcloc loc;
};

/*
 * pools[].autoscale: the pool is a node group of the Cluster Autoscaler
 * (autoscale.h), sized between min and max; `nodes` is its initial size.
 * Defaults are the autoscaler's: scan every 10s, a node unneeded for 10m
 * below 0.5 of its GPUs requested is removed, no scale-down for 10m after a
 * scale-up; a new node is billed from launch and Ready after provision_time.
 */
struct autoscale_spec {
	bool on;
	int32_t min, max;
	sim_time provision_time;     /* launch to Ready; default the pool's startup */
	sim_time unneeded_time;      /* --scale-down-unneeded-time, 10m */
	double threshold;            /* --scale-down-utilization-threshold, 0.5 */
	sim_time scan_interval;      /* --scan-interval, 10s */
	sim_time delay_after_add;    /* --scale-down-delay-after-add, 10m */
	enum expander_kind expander; /* --expander's first, least-waste (the same for every pool) */
	enum expander_kind expanders[EXPANDER_CHAIN_MAX]; /* --expander=a,b: filters in turn */
	int32_t n_expanders;
	bool expander_given;         /* the pool names it (else it takes the others') */
	sim_time max_provision_time; /* --max-node-provision-time, 15m: a node not Ready by
				       * then is given up and the group backs off */
	int32_t priority;            /* the priority expander's: higher wins */
	struct srcloc loc;
	struct srcloc min_loc, max_loc; /* where min and max were given (a file, or --set) */
};

/*
 * pools[].spot: spot capacity.  Its price is the pool's (price:) with
 * `discount` off, or `price` itself; each node is interrupted after an
 * exponential time of mean 1/rate, with a notice (default 2m): at the notice
 * the node is cordoned and drained (its batch jobs are evicted with their
 * checkpoints), at its end the node is gone.
 */
struct spot_spec {
	bool on;
	double rate;     /* interruptions per node-second */
	sim_time notice; /* 2m */
	struct srcloc loc;
};

struct pool_spec {
	char *name;
	struct srcloc loc;
	int32_t nodes;
	const struct gpu_type *gpu; /* the catalog's, or gpu_own */
	struct gpu_type *gpu_own;   /* gpu_memory: the catalog's type with that memory
				     * (what the node's nvidia.com/gpu.memory says); owned */
	int32_t gpus_per_node;      /* 1 .. 64 */
	double cpu;                 /* cores per node */
	double memory_bytes;        /* per node */
	struct kv *labels;
	size_t n_labels;
	struct taint *taints;
	size_t n_taints;
	struct window *windows; /* none: always open */
	size_t n_windows;
	struct price price;     /* what the pool bills: spot's price on a spot pool */
	struct price on_demand; /* a spot pool's price before spot: what the bill
				 * shows beside it (scenario_on_demand) */
	sim_time startup;
	struct sharing sharing;
	bool powered_in_windows; /* powered: window; idle is charged only while open */
	struct autoscale_spec autoscale;
	struct spot_spec spot;
	char *trace_path; /* an openb node list while loading; the loader replaces
				    * the entry by its pools (openb.h), so NULL after */
	struct srcloc trace_loc;
};

/* A batch job does its duration of work, slower where it shares a GPU; a
 * service holds its pods for its duration of wall time, whatever it shares
 * (what import makes of a Deployment's pods: they serve for --horizon). */
enum workload_kind { WORKLOAD_BATCH, WORKLOAD_INFERENCE, WORKLOAD_SERVICE };
enum arrival_kind { ARRIVAL_AT, ARRIVAL_POISSON, ARRIVAL_TRACE, ARRIVAL_SCHEDULE };
enum trace_format { TRACE_CSV, TRACE_OPENB };
struct openb_pod;
enum dist_kind {
	DIST_FIXED,
	DIST_EXPONENTIAL,
	DIST_LOGNORMAL,
	DIST_GAMMA,
	DIST_UNIFORM,
	DIST_EMPIRICAL
};

/* A distribution of a positive quantity, in its natural unit (seconds for
 * durations).  fixed: mean.  exponential: mean.  lognormal: mean and sigma of
 * the underlying normal.  gamma: mean and shape k.  uniform: min and max.
 * empirical (durations only): one of values, drawn uniformly; mean is
 * theirs; the values belong to the scenario (scenario.dist_values). */
struct dist {
	enum dist_kind kind;
	double mean;
	double sigma;
	double shape;
	double min;
	double max;
	const double *values;
	size_t n_values;
};

/* A distribution's mean (uniform: the middle of its range). */
static inline double scenario_dist_mean(const struct dist *d)
{
	return d->kind == DIST_UNIFORM ? (d->min + d->max) / 2 : d->mean;
}

/* The most values an empirical distribution takes. */
#define SCENARIO_MAX_EMPIRICAL 100000

enum deadline_kind { DEADLINE_NONE, DEADLINE_AT, DEADLINE_WITHIN };

/*
 * A rate that follows the week (rate_by_hour, by_weekday): during hour h of
 * a day (UTC, the scenario's calendar) the rate is by_hour[h] x
 * by_weekday[d], d = 0 for Monday.  An inhomogeneous Poisson process with
 * that piecewise-constant rate (arrivals_calendar.c).  on: false is the
 * plain constant rate.
 */
struct weekly_rate {
	bool on;
	double by_hour[24];   /* per second */
	double by_weekday[7]; /* factors, Monday first; 1 when not given */
	double week_mass;     /* expected arrivals in one week (> 0) */
};

struct arrival {
	enum arrival_kind kind;
	sim_time at;               /* ARRIVAL_AT: all `count` jobs arrive then */
	double rate;               /* ARRIVAL_POISSON: per second */
	sim_time from;             /* ARRIVAL_POISSON, ARRIVAL_SCHEDULE: first possible arrival */
	struct weekly_rate weekly; /* ARRIVAL_POISSON: rate_by_hour instead of rate */
	struct cron cron;          /* ARRIVAL_SCHEDULE: one job per firing (units.h) */
	const char *schedule;      /* ARRIVAL_SCHEDULE: as written (the tree owns it) */
	char *trace_path;          /* ARRIVAL_TRACE: resolved against the scenario's folder */
	enum trace_format format;
	struct trace_job *rows; /* ARRIVAL_TRACE: sorted by submit (stable); NULL for a
				 * CSV trace in submit order, which the run reads again
				 * as its clock reaches the rows (trace.h) */
	size_t n_rows;
	struct trace_summary summary; /* ARRIVAL_TRACE: its rows summed up */
	struct trace_limits limits;   /* TRACE_CSV: what its rows were checked against */
	struct openb_pod *pods;       /* TRACE_OPENB: the pod list as read (openb.h), file order */
	size_t n_pods;
};

/*
 * Inference workloads (kind: inference, docs/inference.md).  Each replica is a continuous-batching server; requests arrive
 * from a synthetic process or a trace and are routed to the ready replicas.
 * Token counts are tokens; times are sim_time.
 */
enum request_process { REQUESTS_POISSON, REQUESTS_GAMMA, REQUESTS_TRACE };
enum route_policy { ROUTE_ROUND_ROBIN, ROUTE_LEAST_OUTSTANDING };

struct request_spec {
	enum request_process process;
	double rate;               /* poisson, gamma: requests per second */
	double shape;              /* gamma: shape k of the inter-arrival times (cv 1/sqrt(k)) */
	struct weekly_rate weekly; /* poisson: rate_by_hour instead of rate */
	sim_time from;             /* first possible arrival (default 0) */
	int64_t count;             /* synthetic: requests; -1 runs to the horizon.
				    * trace: rows x repeat */
	struct dist prompt_tokens; /* synthetic, in tokens */
	struct dist output_tokens;
	char *trace_path;         /* resolved against the scenario's folder */
	struct request_row *rows; /* trace: sorted by time (stable) */
	size_t n_rows;
	double speedup;  /* trace times are divided by it; default 1 */
	int32_t repeat;  /* the trace is tiled this often; default 1 */
	sim_time period; /* one tile before speedup: span + one mean gap */
};

struct slo_spec {
	sim_time ttft; /* 0: no bound */
	sim_time tpot;
	sim_time e2e;
	double percentile; /* the percentile the bounds hold at; default 99 */
};

/* disaggregated: prefill and decode on separate replicas (docs/inference.md,
 * "Disaggregated prefill and decode"; sim/infer_disagg.c).  A role's keys
 * default to the workload's. */
struct disagg_role {
	int32_t replicas;           /* fixed */
	int32_t gpus;               /* per replica = its tensor_parallel */
	int32_t max_batch;          /* vLLM max_num_seqs of the role's servers */
	int32_t max_batched_tokens; /* vLLM max_num_batched_tokens */
	double memory_fraction;     /* 0: the workload's sizing */
};

enum disagg_link {
	DISAGG_LINK_GIVEN,
	DISAGG_LINK_NVLINK,
	DISAGG_LINK_INFINIBAND,
	DISAGG_LINK_ETHERNET
};

struct disagg_spec {
	struct disagg_role prefill, decode;
	enum disagg_link link;
	double link_bandwidth; /* bytes/s per GPU, achieved; 0 for nvlink: the GPU's (roofline.c) */
	double link_latency_s; /* per transfer; nvlink: the GPU's */
};

struct inference_spec {
	int32_t replicas;           /* fixed count, or the autoscaler's minimum */
	int32_t max_replicas;       /* = replicas when fixed */
	double target_queue;        /* autoscaled: waiting requests per replica; 0 = fixed */
	sim_time scale_interval;    /* autoscaler period, default 15s (the HPA's) */
	sim_time scale_down_window; /* stabilization before scaling down, default 5m */
	double load_bandwidth;      /* bytes/s a new replica loads its weights at, default 2 GB/s */
	int32_t tensor_parallel;    /* GPUs per replica for REQUEST_GPUS; 1 otherwise */
	int32_t max_batch;          /* sequences in a batch (vLLM max_num_seqs), default 256 */
	int32_t max_batched_tokens; /* tokens per iteration (chunked prefill), default 2048 */
	double memory_fraction;     /* of the unit's memory the server takes; 0 = footprint */
	bool vram_given;            /* the workload's vram is the server's memory per GPU */
	int kv_cache;               /* an enum quant */
	sim_time tokenize;          /* CPU time per request on a tokenizer worker */
	int32_t tokenize_workers;   /* tokenizer workers per replica, default 1 */
	bool step_overhead_given;   /* step_overhead: the server's fixed time per
				     * iteration, else the GPU type's (roofline.c) */
	sim_time step_overhead;
	enum route_policy route;
	int64_t context; /* tokens of a typical request (mean prompt + mean
				    * output): the fit check and the default memory */
	struct request_spec requests;
	struct slo_spec slo;
	/* A group of a routed service (groups: and router:, docs/inference.md,
	 * "Routed fleets"): the service's name (its one request stream's seed and
	 * the scope of its whole figures), the group's place in it, and the
	 * prompts its router sends here, prompt_lo < prompt_tokens <= prompt_hi.
	 * NULL service: not routed. */
	char *service;
	int32_t group, n_groups;
	int64_t prompt_lo, prompt_hi;

	struct disagg_spec *disagg; /* disaggregated prefill and decode; NULL: not */
};

/* The annotation cluster-autoscaler.kubernetes.io/safe-to-evict of a
 * workload's pods (safe_to_evict:): absent, "false" or "true". */
enum safe_to_evict { SAFE_TO_EVICT_UNSET, SAFE_TO_EVICT_FALSE, SAFE_TO_EVICT_TRUE };

/* A workload's PodDisruptionBudget (pdb:), policy/v1's spec: none, minAvailable
 * or maxUnavailable, a whole number of pods. */
enum pdb_kind { PDB_NONE, PDB_MIN_AVAILABLE, PDB_MAX_UNAVAILABLE };

struct workload_spec {
	char *name;
	struct srcloc loc;
	enum workload_kind kind;
	int64_t count; /* jobs; for traces, the number of rows; -1 for a
				    * poisson stream without count (runs to the horizon) */
	struct arrival arrival;
	enum gpu_request request;
	int32_t gpus;         /* REQUEST_GPUS: units per job, on one node */
	bool shared;          /* gpus: {shared: N}, nvidia.com/gpu.shared units (a
			       * pool with renameByDefault) */
	char *mig_profile;    /* REQUEST_MIG: "3g.40gb" */
	int32_t milli;        /* REQUEST_MILLI: 1 .. 1000 */
	struct dist duration; /* seconds, exclusive-GPU duration */
	enum deadline_kind deadline_kind;
	sim_time deadline;     /* DEADLINE_AT: absolute; DEADLINE_WITHIN: after arrival */
	sim_time queue_goal;   /* goal.queue_p95: the queue p95 its team accepts,
				    * resolved (given, else the scenario's goals by
				    * kind); -1: none (batch work with a deadline) */
	bool queue_goal_given; /* the workload's own goal: key */
	/* data_loader: {workers: 4, rate: 150/s, need: 1000/s}: the CPU workers
	 * that feed its GPUs input, each delivering rate (samples/s), where
	 * the GPUs consume need.  loader_fraction = min(1, workers x rate /
	 * need) is the share of its GPU time not spent waiting on input: its
	 * jobs last duration / fraction, busy gpu_busy x fraction; 0 without. */
	int32_t loader_workers;
	double loader_rate, loader_need, loader_fraction;
	double gpu_busy;                /* f in (0, 1], default 1 */
	double sm_share;                /* s in (0, 1], default 1 */
	double vram_bytes;              /* per GPU; given, or derived from model and quantization;
				    * 0 = unknown */
	const struct model_arch *model; /* NULL: none */
	int quantization;               /* an enum quant (footprint.h) when model is set */
	double pass_rate;               /* quality: probability a result passes verification,
				    * resolved for the workload's quantization; default 1 */
	sim_time startup;               /* per job: image pull, model load; holds the GPUs */
	sim_time checkpoint;            /* a preempted job resumes from its last multiple of
				    * this much work; 0: it starts over */
	sim_time checkpoint_write;      /* each checkpoint holds the GPUs this long, not
				    * working (checkpoint: {every, write}); 0: free */
	int32_t restart_limit;          /* OOM kills retried this often, default 6 */
	sim_time restart_backoff;       /* first delay, doubled per restart up to 5m; default 10s */
	double cpu;                     /* cores per job */
	double memory_bytes;
	struct kv *node_selector;
	size_t n_node_selector;
	char *namespace;   /* showback: its Kubernetes namespace; NULL: "default" */
	struct kv *labels; /* showback: its pods' labels (team: ...), for costs by label */
	size_t n_labels;
	struct toleration *tolerations;
	size_t n_tolerations;
	char **gpu_spec; /* allowed GPU type names; none = any */
	size_t n_gpu_spec;
	struct affinity_expr *affinity;
	size_t n_affinity;
	struct topology_spread spread;
	int32_t pods;  /* pods per job, each asking for `gpus` (default 1) */
	bool gang;     /* all pods of a job start together or none does;
				    * without gang, each pod is a job of its own */
	int32_t queue; /* index into scenario.queues */
	int32_t priority;
	uint8_t safe_to_evict;            /* enum safe_to_evict: its pods' annotation
				   * cluster-autoscaler.kubernetes.io/safe-to-evict */
	bool local_storage;               /* its pods mount emptyDir or hostPath volumes */
	uint8_t pdb;                      /* enum pdb_kind: a PodDisruptionBudget selecting
					   * its pods (pdb: {min_available: N} or
					   * {max_unavailable: N}) */
	int32_t pdb_value;                /* its N, whole pods */
	bool preempt_never;               /* preemption_policy Never: its pods never evict others
			       * (PriorityClass preemptionPolicy) */
	sim_time grace;                   /* termination_grace_period: how long an evicted pod holds
			       * its node (terminationGracePeriodSeconds, default 30s) */
	struct inference_spec *inference; /* kind inference; NULL for batch */
	/* windows: its pods start only inside them, and inside their pool's
	 * (both must allow; window_policy applies to both); none: always */
	struct window *windows;
	size_t n_windows;
	/* idle_cull (services): a pod whose activity (gpu_busy) stays below
	 * cull_threshold for cull_after once it has started up is culled: it
	 * releases its GPUs (JupyterHub's idle culler, Kubeflow's notebook
	 * culling).  cull_after 0: never. */
	sim_time cull_after;
	double cull_threshold;
};

/* Whether workload w's jobs have deadlines: its own (`deadline:`), or its
 * trace's deadline_s column. */
static inline bool scenario_has_deadlines(const struct workload_spec *w)
{
	return w->deadline_kind != DEADLINE_NONE ||
	       (w->arrival.kind == ARRIVAL_TRACE && w->arrival.summary.deadlines > 0);
}

enum queue_strategy { STRATEGY_BEST_EFFORT_FIFO, STRATEGY_STRICT_FIFO };

/* Kueue's reclaimWithinCohort: whom a queue may preempt to get back quota
 * that other queues of its cohort borrowed. */
enum reclaim_policy { RECLAIM_NEVER, RECLAIM_LOWER_PRIORITY, RECLAIM_ANY };

/* Kueue's withinClusterQueue: whom a job may preempt in its own queue. */
enum within_policy { WITHIN_NEVER, WITHIN_LOWER_PRIORITY, WITHIN_LOWER_OR_NEWER_EQUAL };

/* Kueue's borrowWithinCohort.policy: whether a job that must borrow may
 * preempt lower-priority jobs of other queues of its cohort. */
enum borrow_within_policy { BORROW_WITHIN_NEVER, BORROW_WITHIN_LOWER_PRIORITY };

/* Kueue's flavorFungibility policies (v1beta2 names; v1beta1's Borrow and
 * Preempt are MayStopSearch). */
enum fungibility { FUNGIBILITY_MAY_STOP_SEARCH, FUNGIBILITY_TRY_NEXT_FLAVOR };

/* A ResourceFlavor (resource_flavors:): the nodes it stands for.  Kueue
 * adds its node_labels to the pods it admits as a node selector and its
 * tolerations to their tolerations; its node_taints decide which pods may
 * use it (pkg/scheduler/flavorassigner, checkFlavorForPodSets). */
struct flavor_spec {
	char *name;
	struct srcloc loc;
	struct kv *node_labels;
	size_t n_node_labels;
	struct taint *node_taints;
	size_t n_node_taints;
	struct toleration *tolerations;
	size_t n_tolerations;
};

/* The most resource groups a queue may have, and flavors per group, in
 * gpuplan (Kueue allows 16 of each; an admitted job's flavors pack in 64
 * bits). */
#define SCENARIO_MAX_GROUPS        8
#define SCENARIO_MAX_GROUP_FLAVORS 16

/* A resource group of a queue: the resources it covers, and its flavors in
 * the order Kueue tries them (indexes into scenario.flavors). */
struct resource_group {
	char **covered;
	size_t n_covered;
	int32_t *flavors;
	size_t n_flavors;
	struct srcloc loc;
};

/* A quota line of a ClusterQueue-like queue, per (flavor, resource):
 * nvidia.com/gpu (units), nvidia.com/mig-<profile> (instances), cpu (cores)
 * or memory (bytes). */
struct quota_entry {
	char *resource;
	int32_t flavor; /* index into scenario.flavors */
	double nominal;
	double borrowing_limit; /* INFINITY: may borrow all the cohort has unused */
	double lending_limit;   /* INFINITY: lends all it does not use; else keeps
				 * nominal - lending_limit to itself (Kueue's guaranteed quota) */
	struct srcloc loc;
};

struct queue_spec {
	char *name;
	struct srcloc loc;
	enum queue_strategy strategy;
	char *cohort;              /* NULL: borrows from and lends to nobody */
	struct quota_entry *quota; /* resources not listed are not limited */
	size_t n_quota;
	struct resource_group *groups; /* the quota's resource groups (quota: one,
					* of flavor "default") */
	size_t n_groups;
	enum fungibility when_can_borrow;  /* default MayStopSearch */
	enum fungibility when_can_preempt; /* default TryNextFlavor */
	enum reclaim_policy reclaim;
	enum within_policy within;
	enum borrow_within_policy borrow_within;
	int32_t borrow_within_max_priority; /* maxPriorityThreshold */
	bool borrow_within_threshold;       /* it is given */
	bool implicit; /* the "default" queue no `queues:` entry declares: no Kueue */
};

/* A cohort may belong to a parent cohort (Kueue's hierarchical cohorts);
 * queues borrow across the whole tree. */
struct cohort_spec {
	char *name;
	char *parent; /* NULL: a root */
	struct srcloc loc;
	int32_t parent_index; /* the parent's index in cohorts; -1: a root */
};

enum sched_order { ORDER_FIFO, ORDER_PRIORITY, ORDER_EDF, ORDER_SJF };
enum sched_scoring {
	SCORING_MOST_ALLOCATED,
	SCORING_LEAST_ALLOCATED,
	SCORING_REQUESTED_TO_CAPACITY_RATIO,
};

/* The resources NodeResourcesFit's score can weigh (kube's resources list). */
enum score_resource { SCORE_GPU, SCORE_CPU, SCORE_MEMORY, SCORE_RESOURCES };

#define SCORING_MAX_SHAPE 16 /* points of a requestedToCapacityRatio shape */

/*
 * scheduler.scoring: kube-scheduler's NodeResourcesFit scoringStrategy
 * {type, resources: [{name, weight}], requestedToCapacityRatio: {shape}}.
 * Default, as a stock kube-scheduler: LeastAllocated over cpu and memory,
 * weight 1 each.  The short names are aliases: MostAllocated and
 * LeastAllocated over nvidia.com/gpu, weight 1.
 */
struct scoring_spec {
	enum sched_scoring type;
	int32_t weight[SCORE_RESOURCES]; /* 0: the resource is not scored */
	int32_t n_shape;                 /* requestedToCapacityRatio only */
	struct scoring_point {
		int32_t utilization; /* 0..100, increasing */
		int32_t score;       /* 0..10 (kube's MaxCustomPriorityScore) */
	} shape[SCORING_MAX_SHAPE];
};

/* "MostAllocated" for the alias, else e.g. "LeastAllocated(cpu:1,memory:1)". */
void scenario_scoring_name(const struct scoring_spec *s, char *buf, size_t len);
enum window_policy {
	WINDOW_FIT,     /* start only what ends before the window closes */
	WINDOW_PREEMPT, /* start anything; stop and requeue what runs at the close */
};

struct scheduler_spec {
	enum sched_order order;
	struct scoring_spec scoring;
	enum window_policy window_policy;
	enum gpu_policy gpu_policy; /* placement policy (gpupolicy.h); default best-fit */
	/* KubeSchedulerConfiguration's percentageOfNodesToScore, 1..100; 0 (or
	 * absent): kube's adaptive default (placement.h, "Sampling") */
	int32_t percentage_of_nodes_to_score;
};

/* experiment: {protocol: inflation, inflate: 1.3} runs the ATC'23 paper's
 * protocol instead of a timed simulation (inflation.h). */
enum experiment_protocol { EXPERIMENT_NONE, EXPERIMENT_INFLATION };

struct experiment_spec {
	enum experiment_protocol protocol;
	double inflate;    /* arrived GPU demand to reach, x capacity; default 1.3 */
	double popularity; /* share of pods FGD's target workload covers; default 0.95 */
	struct srcloc loc;
};

struct output_spec {
	char *db;               /* resolved: as given (relative to the working
				    * directory, as users expect of an output path) */
	sim_time step;          /* timeseries resolution; 0 (the default): chosen for
				    * the span, 1m to 364d (collect.h, results.step) */
	struct srcloc step_loc; /* where an explicit step was given */
	int64_t max_windows;    /* per scope an explicit step may make: the load's
				    * check sees a lower bound of the span, the run
				    * the span itself; 0: no limit */
	bool jobs;              /* default true */
	bool requests;          /* default false */
};

/*
 * history: the period a twin scenario was learned from (`import --history`,
 * docs/import.md).  `backtest` replays the observed pods of that period; run,
 * advise and search only note that the scenario is a twin (advise's refusal
 * rules).  Absent: on is false.
 */
struct history_spec {
	bool on;
	int64_t from_epoch; /* seconds since the Unix epoch */
	int64_t to_epoch;   /* > from_epoch */
	char *pods_path;    /* the observed pods CSV, resolved against the scenario's folder */
	struct srcloc loc;
	struct srcloc pods_loc;
};

/*
 * A value tagged !placeholder: the loader uses it like any other, and keeps
 * where it is (key path), what it was written as, and why it is not learned
 * (the YAML comment on its line, else "not learned"), for `check` and for
 * advise's refusal rules.  Paths name list items by their name:
 * workloads[finetune].duration; items without one by index: [0].
 */
struct placeholder {
	char *path;
	char *value;
	char *reason;
	struct srcloc loc;
};

/* A --set override as given, for the params table: the last override of
 * each key, in the order applied (an overridden one was not used). */
struct param {
	char *key;
	char *value;
};

/* The longest simulated span: time is int64 microseconds (292,000 years), and
 * a plan past this is a typo (a rate in /h meant as /s), not a question. */
#define SCENARIO_MAX_YEARS           1000
/* The longest scenario, pool, workload or queue name (as a Kubernetes object's). */
#define SCENARIO_MAX_NAME            253
/* Timeseries windows per scope an explicit output.step may make (over the
 * horizon, or the known arrivals): raise with GPUPLAN_MAX_WINDOWS. */
#define SCENARIO_DEFAULT_MAX_WINDOWS 1000000
/* Timeseries and allocation rows a run may keep (scopes x windows, and
 * workloads x windows; about 300 bytes each while it runs, so 2.4 GB): raise
 * with GPUPLAN_MAX_ROWS.  And node slots of all pools together (a cluster
 * of 20 pools of 10^6 nodes passed check and ran out of memory): raise with
 * GPUPLAN_MAX_NODES. */
#define SCENARIO_DEFAULT_MAX_ROWS    8000000
#define SCENARIO_DEFAULT_MAX_NODES   1000000
/* The windows per scope of a run without output.step (collect.h's
 * COLLECT_MAX_WINDOWS, which collect.c asserts equal). */
#define SCENARIO_ADAPTIVE_WINDOWS    2000
#define SCENARIO_MAX_SPAN            ((sim_time)SCENARIO_MAX_YEARS * 365 * SIM_DAY)
/* Where the clock of a run without a horizon stops (status horizon): the
 * span of the arrivals and one duration, each at most SCENARIO_MAX_SPAN; a
 * queue of 1000-year jobs would otherwise run the clock past int64. */
#define SCENARIO_MAX_RUN             (2 * SCENARIO_MAX_SPAN)
/* The loader's limits, public so that what writes a scenario (import) checks
 * its inputs against the same figures, where it reads them. */
#define SCENARIO_MAX_GPUS_PER_NODE   GPUPOLICY_MAX_GPUS
/* $/hour of a gpu_hour, cpu_hour or gib_hour: past this, bills overflow to
 * infinity (NULL costs). */
#define SCENARIO_MAX_PRICE           1e6
/* Time-sliced replicas per GPU, and MPS clients (CUDA MPS serves at most 48
 * clients per GPU since Volta). */
#define SCENARIO_MAX_TIME_SLICES     64
#define SCENARIO_MAX_MPS_CLIENTS     48
/* A workload's priority: a pod's spec.priority is an int32 in Kubernetes
 * (PriorityClass values reach 1e9 for user classes, 2000001000 for
 * system-node-critical, and may be negative). */
#define SCENARIO_MIN_PRIORITY        INT32_MIN
#define SCENARIO_MAX_PRIORITY        INT32_MAX
#define SCENARIO_NAME_HINT           "letters, digits, '.', '_' or '-', like eval-window"
#define SCENARIO_ITEM_NAME_HINT      "letters, digits, '_' or '-', like batch"

/* cost: how idle is shared (docs/cost.md): OpenCost's shareIdle, by
 * resource in proportion to each workload's cost of it (weighted, the
 * default), equal parts (even) or not at all (none); over the cluster (the
 * default) or in each pool. */
enum share_idle { SHARE_IDLE_WEIGHTED, SHARE_IDLE_EVEN, SHARE_IDLE_NONE };
enum idle_by { IDLE_BY_CLUSTER, IDLE_BY_POOL, IDLE_BY_NODE };

struct cost_spec {
	enum share_idle share_idle;
	enum idle_by idle_by;
};

/* goals: {batch: 1h, service: 5m}, the queue p95 a workload without a
 * goal of its own is held to: batch work without a deadline, and interactive
 * work (kind service, inference: notebooks, servers) that should start soon. */
#define SCENARIO_GOAL_BATCH   SIM_HOUR
#define SCENARIO_GOAL_SERVICE (5 * SIM_MINUTE)
struct goals_spec {
	sim_time batch;
	sim_time service;
};

/* kubernetes_version: the default, the current stable release, and the
 * range the messages are modelled for. */
#define SCENARIO_KUBE_MINOR     34
#define SCENARIO_KUBE_MINOR_MIN 25
#define SCENARIO_KUBE_MINOR_MAX 36

struct scenario {
	char *name;
	char *path;          /* as given */
	char *dir;           /* folder of path, for relative references */
	char sha256[65];     /* of the file's bytes */
	uint64_t seed;       /* default 1 */
	int64_t start_epoch; /* seconds since the Unix epoch; default 2026-01-01T00:00:00Z */
	sim_time horizon;    /* 0 = run until all work is done */
	int32_t kube_minor;  /* kubernetes_version 1.N: whose kube-scheduler wording the
			      * messages take; default SCENARIO_KUBE_MINOR */
	struct pool_spec *pools;
	size_t n_pools;
	char currency[4];   /* the pools' prices' ISO 4217 code; "" (none loaded) = USD */
	char money_unit[4]; /* the metrics' unit of money: the code in lower case ("usd") */
	struct workload_spec *workloads;
	size_t n_workloads;
	struct queue_spec *queues; /* always at least one: "default" */
	size_t n_queues;
	struct cohort_spec *cohorts;
	size_t n_cohorts;
	struct flavor_spec *flavors; /* resource_flavors, then "default" if a quota: uses it */
	size_t n_flavors;
	struct expander_priority *expander_priorities; /* autoscale.priorities (one ConfigMap
							 * for the cluster); none: each pool's
							 * autoscale.priority */
	size_t n_expander_priorities;
	struct scheduler_spec scheduler;
	struct goals_spec goals;
	struct experiment_spec experiment;
	struct output_spec output;
	struct cost_spec cost;
	struct param *params;
	size_t n_params;
	struct model_arch **models; /* read from model_config: files, owned */
	size_t n_models;
	struct history_spec history;
	double growth; /* `growth:` (or --growth): every arrival and request rate is
			* multiplied by it, for "next quarter at +30%"; default 1 */
	struct placeholder *placeholders; /* in document order */
	size_t n_placeholders;
	struct ytree *tree;   /* owns the strings locations point to (its nodes go once loaded) */
	double **dist_values; /* the values of empirical distributions, owned */
	size_t n_dist_values;
};

/* Whether workload w's pods may evict pods of lower priority: kube-scheduler's
 * DefaultPreemption runs for a one-pod batch job of no declared Kueue queue
 * whose PriorityClass preempts (sim_preempt.c; Kueue preempts by its own
 * rules, a gang is placed whole, a replica never preempts). */
static inline bool scenario_may_preempt(const struct scenario *sc, size_t w)
{
	const struct workload_spec *ws = &sc->workloads[w];
	return !ws->inference && !ws->preempt_never && sc->queues[ws->queue].implicit &&
	       !(ws->gang && ws->pods > 1);
}

/*
 * The replay of a twin's observed pods (history.h), which `backtest` runs:
 * scenario_replay replaces the workloads of a loaded twin by workloads whose
 * jobs are the pods.  Each pod becomes a job of its workload (the twin's
 * selectors, tolerations, affinity, queue and priority; the row's GPUs, cpu
 * and memory), submitted at its creation (at 0 when created before the
 * period) and held, as a service is, for the wall time it ran: finished -
 * scheduled, or from 0 for a pod running when the period began, or to the
 * horizon when it still ran at the end (or never started).  Pods running at
 * the start are in workloads of their own ahead of the others, so that they
 * are placed first.  The horizon is the period, the start its beginning.
 * Pods the replay cannot hold are left out, each with its reason.
 */
enum replay_skip {
	REPLAY_KEPT,
	REPLAY_UNKNOWN_WORKLOAD, /* its workload is not in the twin */
	REPLAY_DELETED_PENDING,  /* deleted before it was ever scheduled */
	REPLAY_NO_GPUS,          /* asks for no GPU (or, for a fractional workload, none) */
	REPLAY_TOO_WIDE,         /* asks for more GPUs than any node of the pools offers */
};

struct history_pod;

struct scenario_replay {
	size_t n_workloads;     /* the replay's */
	int32_t *twin_workload; /* per replay workload: the twin's workload it stands for */
	bool *running_at_start; /* per replay workload: its pods ran when the period began */
	size_t **pods;          /* per replay workload: its pods (indexes), in job order */
	size_t *n_pods;
	uint8_t *skip; /* per pod: an enum replay_skip */
	size_t n_skipped[REPLAY_TOO_WIDE + 1];
};

/* sc must be a twin (history.on) as loaded; n pods as history_read_pods read
 * them.  Output rows are always kept (output.jobs). */
int scenario_replay(struct scenario *sc, const struct history_pod *pods, size_t n,
		    struct scenario_replay *out, struct gp_err *err);
void scenario_replay_free(struct scenario_replay *m);

/* The label that names a workload's team (showback: cost by team). */
#define SCENARIO_TEAM_LABEL "team"

/* A workload's namespace ("default" when it names none). */
const char *scenario_namespace(const struct workload_spec *w);
/* The value of a workload's label, or NULL. */
const char *scenario_label(const struct workload_spec *w, const char *key);
/* kube's ToleratesTaint: effect and key match (empty = any), then the value
 * (Equal) or anything (Exists). */
static inline bool scenario_tolerates(const struct toleration *t, const struct taint *taint)
{
	if (t->effect >= 0 && t->effect != (int)taint->effect)
		return false;
	if (t->key[0] && strcmp(t->key, taint->key))
		return false;
	return t->op == TOLERATION_EXISTS || !strcmp(t->value, taint->value);
}

/* Loads and validates.  sets: "KEY=VALUE" strings applied in order. */
int scenario_load(const char *path, const char *const *sets, size_t n_sets, struct scenario **out,
		  struct gp_err *err);
/* The same, then the typed overrides ov[0 .. n_ov) in order (override.h:
 * advise's alternatives), each applied by its key and value and recorded in
 * params as a --set of the same text would be. */
int scenario_load_overrides(const char *path, const char *const *sets, size_t n_sets,
			    const struct override *ov, size_t n_ov, struct scenario **out,
			    struct gp_err *err);

void scenario_free(struct scenario *sc);

/* The placeholder at path, or at a key below it (path "workloads[a]"
 * finds "workloads[a].duration"), or NULL. */
const struct placeholder *scenario_placeholder(const struct scenario *sc, const char *path);

/* The root cohort of queue q (following parents), or NULL when it has none. */
const char *scenario_root_cohort(const struct scenario *sc, size_t q);

/* Index of the pool / workload / queue with that name, or -1. */
/* Whether name is a valid scenario name (SCENARIO_NAME_HINT), or pool,
 * workload, queue or cohort name (SCENARIO_ITEM_NAME_HINT, and not one of the
 * whole-run scopes all and __idle__), at most SCENARIO_MAX_NAME characters. */
bool scenario_name_ok(const char *name);
bool scenario_item_name_ok(const char *name);

/* Kubernetes' object names (apimachinery validation.IsDNS1123Subdomain and
 * IsDNS1123Label): a subdomain is up to 253 characters of dot-separated parts
 * of a-z, 0-9 and '-', each starting and ending with a letter or digit (pod
 * and node names); a label is one such part of up to 63 (namespaces). */
bool scenario_dns_subdomain_ok(const char *name);
bool scenario_dns_label_ok(const char *name);
#define SCENARIO_DNS_SUBDOMAIN_HINT                                                     \
	"a DNS subdomain: up to 253 of a-z, 0-9, '-' and '.', each dot-separated part " \
	"starting and ending with a letter or digit"
#define SCENARIO_DNS_LABEL_HINT \
	"a DNS label: up to 63 of a-z, 0-9 and '-', starting and ending with a letter or digit"

/* Kubernetes' label syntax, as the API server checks it (the loader's for
 * label, selector, affinity, taint and toleration keys; import's for what it
 * reads): a key is an optional DNS subdomain prefix (at most 253 characters)
 * and '/', then a name of 1 to 63 letters, digits, '-', '_' or '.', starting
 * and ending with a letter or digit; a value is such a name, or empty. */
bool scenario_label_key_ok(const char *key);
bool scenario_label_value_ok(const char *value);
#define SCENARIO_LABEL_KEY_HINT                                                           \
	"an optional DNS prefix and '/', then up to 63 letters, digits, '-', '_' or '.' " \
	"starting and ending with a letter or digit, like topology.kubernetes.io/zone"
#define SCENARIO_LABEL_VALUE_HINT                                                      \
	"up to 63 letters, digits, '-', '_' or '.' starting and ending with a letter " \
	"or digit, or nothing"

/* Whether key is a key of section's items in the scenario format (a pool's,
 * a workload's, a queue's, a cohort's; the scheduler's own); known gets the
 * section's keys joined by ", " (empty for a section without items). */
bool scenario_format_key(const char *section, const char *key, char *known, size_t len);
int scenario_pool_index(const struct scenario *sc, const char *name);
int scenario_workload_index(const struct scenario *sc, const char *name);
/* The latest arrival the scenario is known to have (or its horizon): a lower
 * bound of its span when it runs until done. */
sim_time scenario_known_span(const struct scenario *sc);
int scenario_queue_index(const struct scenario *sc, const char *name);
int scenario_flavor_index(const struct scenario *sc, const char *name);

/* The flavor the scenario's queues use when they give a plain quota: map. */
#define SCENARIO_DEFAULT_FLAVOR "default"

/* Node slots the cluster keeps for pool p: its nodes, or room for its
 * autoscaler's maximum (twice with spot: interrupted nodes linger through
 * their notice while replacements launch). */
static inline int32_t scenario_pool_slots(const struct pool_spec *p)
{
	int32_t n = p->autoscale.on && p->autoscale.max > p->nodes ? p->autoscale.max : p->nodes;
	return p->autoscale.on && p->spot.on ? 2 * n : n;
}

/* Total GPUs of all pools (their initial nodes). */
int64_t scenario_capacity_gpus(const struct scenario *sc);

/* Kubernetes' name of what a workload's pods request: "nvidia.com/gpu" or
 * "nvidia.com/mig-3g.40gb" (buf of at least 64 bytes). */
const char *scenario_resource_name(const struct workload_spec *w, char *buf, size_t len);

/* Workload w's pod request, as the sharing module reads it (sharing.h). */
struct sharing_ask scenario_ask(const struct workload_spec *w);

/* Frees what a pool spec owns (not the spec itself). */
void scenario_pool_free(struct pool_spec *p);

/* Pool p's answers from sharing.h for workload w's pods: whether p offers
 * the resource they ask for; the memory one unit guarantees (0 where memory
 * is not isolated); and how many GPUs' worth one pod is allocated there, 0
 * when p can never host it. */
bool scenario_pool_offers(const struct pool_spec *p, const struct workload_spec *w);
/* Whether w's gpu_spec (none: any) allows GPU type g. */
bool scenario_gpu_spec_allows(const struct workload_spec *w, const struct gpu_type *g);
/* The first MIG pool whose GPU has the MIG profile w asks for, whatever its
 * layout (another layout would offer it), or -1. */
int32_t scenario_mig_pool_for(const struct scenario *sc, const struct workload_spec *w);
/* `--goal WHO=DURATION` as the override it stands for, into set (len at
 * least SCENARIO_MAX_NAME + 64): batch=2h -> goals.batch=2h, service=5m ->
 * goals.service=5m, WORKLOAD=30m -> workloads.WORKLOAD.goal={queue_p95:
 * 30m} (docs/scenario.md, "Goals").  GP_EINPUT for another form. */
int scenario_goal_override(const char *value, char *set, size_t len, struct gp_err *err);

/* Every node carries its pool's name under this label (as GKE's
 * cloud.google.com/gke-nodepool), unless the pool's labels set it: a routed
 * service's group asks for its pool by it (pool:, docs/inference.md). */
#define SCENARIO_LABEL_POOL "gpuplan.io/pool"
/* The value of label key on every node of pool p: its own labels, or the
 * implicit nvidia.com/gpu.product of its GPU and gpuplan.io/pool; NULL when absent. */
const char *scenario_pool_label(const struct pool_spec *p, const char *key);
double scenario_unit_memory(const struct pool_spec *p, const struct workload_spec *w);
double scenario_gpu_equivalent(const struct pool_spec *p, const struct workload_spec *w);

/* The unit of money metrics: the currency's code in lower case, "usd" when unsaid. */
const char *scenario_money_unit(const struct scenario *sc);

/* The pool's on-demand prices: on_demand for a spot pool, else its price. */
const struct price *scenario_on_demand(const struct pool_spec *p);

/* $/h of the GPUs a pod holds in pool p: `equivalent` GPUs' worth spread
 * evenly over the GPUs of mask, the node's GPU i at index first + i of the
 * pool, each at its price (committed_gpu_hour below price.committed, else
 * gpu_hour), times sharing_charge (a MIG layout's unusable slices). */
double scenario_gpu_rate_committed(const struct pool_spec *p, int32_t first, uint64_t mask,
				   double equivalent);
static inline double scenario_gpu_rate(const struct pool_spec *p, int32_t first, uint64_t mask,
				       double equivalent)
{
	if (p->price.committed <= 0 || !mask) /* one price: no call (a pod's start and finish) */
		return equivalent * sharing_charge(&p->sharing) * p->price.gpu_hour;
	return scenario_gpu_rate_committed(p, first, mask, equivalent);
}

/* What `check` warns of (docs/scenario.md, "The week"): a counted stream
 * whose count / rate fills under a quarter of its horizon (or of the other
 * workloads' arrivals), and a horizon that ends before a workload with
 * deadlines can finish its last arrivals; a node_selector value no pool has
 * (naming the closest value the pools have).  *out (n of them) is the caller's
 * to free; none: NULL. */
struct scenario_warning {
	struct srcloc loc;
	char text[480];
};
void scenario_warnings(const struct scenario *sc, struct scenario_warning **out, size_t *n);

/* Jobs the scenario will submit (sum of counts); used for the resource limit. */
int64_t scenario_job_count(const struct scenario *sc);

/* Requests the stream will emit: count, rows x repeat, or rate x span up
 * to the horizon for an open synthetic stream (an estimate, for sizing). */
int64_t scenario_requests_expected(const struct workload_spec *w, sim_time horizon);

#endif
