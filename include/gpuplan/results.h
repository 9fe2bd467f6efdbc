/*
 * results.h - what one simulation run produced, in the shape of the results
 * tables (docs/results.md).  The simulation fills it; store writes it to
 * SQLite and report prints it.  Strings (scopes, units, names) point to the
 * scenario or to static text unless noted, so a results object must not
 * outlive the scenario it was made from.
 */
#ifndef GPUPLAN_RESULTS_H
#define GPUPLAN_RESULTS_H

#include "gpuplan/common.h"
#include "gpuplan/hash.h"
#include "gpuplan/metric.h"
#include "gpuplan/override.h"
#include "gpuplan/scenario.h"

/* A row of the metrics table.  A run's rows take name and unit from metric.h's
 * table (results_add_metric); rows read back from a database
 * (store_read_metrics) hold what it stored. */
struct metric {
	const char *scope; /* "all", a pool or a workload name */
	const char *name;  /* metric name, as docs/results.md lists it */
	double value;      /* NAN is stored as NULL */
	const char *unit;  /* "s", "gpus", "pct", "count", "gpu_hours", ... */
};

enum job_status { JOB_PENDING, JOB_RUNNING, JOB_COMPLETED, JOB_FAILED };

/* "completed", "failed", or "unfinished" for pending/running at the end. */
const char *job_status_name(enum job_status s);

struct job_record {
	int64_t job_id;   /* 0-based in submission order */
	int32_t workload; /* index into scenario.workloads */
	int32_t node;     /* index into results.node_names; -1 never placed */
	int32_t gpus;
	uint8_t status; /* enum job_status */
	bool deadline_met;
	bool verified;
	sim_time submit;
	sim_time start;    /* SIM_NEVER: never started */
	sim_time end;      /* SIM_NEVER: not finished */
	sim_time deadline; /* SIM_NEVER: none */
	double cost;
	int32_t reason;       /* last pending reason, kube-scheduler's message: an
			      * index into results.reason_texts; -1: never waited with one */
	bool has_trace_queue; /* the trace gives the job's own wait (openb) */
	sim_time trace_queue; /* that wait, scheduled - creation in the trace */
	int32_t preemptions;  /* times it was stopped: window, spot notice, Kueue preemption */
	int32_t oom_kills;    /* times a pod of it was OOM-killed */
	int32_t flavor;       /* its Kueue flavor (scenario.flavors; of its GPU resource,
			       * quota.h's quota_flavor); -1: none */
};

/* One point of the inflation curve (inflation.h). */
struct curve_row {
	int32_t arrived_pct;      /* whole percent of the GPU capacity requested so far */
	double allocated_pct;     /* GPU capacity allocated, % */
	double fragmentation_pct; /* fragmented GPU milli / GPU capacity, % (gpupolicy_frag) */
};

struct ts_row {
	sim_time t; /* start of the step window */
	const char *scope;
	/* time-weighted means over [t, t + step) */
	double gpus_capacity;
	double gpus_allocated;
	double gpus_demand;
	double engine_active; /* GPUs' worth of engine activity (sum of f) */
	double sm_active;     /* GPUs' worth of SM activity (sum of f*s) */
	double vram_used_gib;
	double pending;
	double running;
	/* for allocations and idle cost; not columns of the timeseries table */
	double powered_gpus;
	double cpu_cores;
	double ram_gib;
	double gpu_cost_per_h;
	double cpu_cost_per_h;
	double ram_cost_per_h;
	double gpus_charged;           /* allocated x sharing_charge */
	double powered_committed_gpus; /* of powered_gpus, those committed (price.committed) */
	/* inference servers (vLLM's gauges); columns of the timeseries table */
	double requests_running; /* time-weighted means, like the gauges above */
	double requests_waiting;
	double kv_cache_usage; /* KV blocks used / blocks of the serving replicas,
				   * 0..1 (vLLM's gpu_cache_usage_perc); NAN: none */
	double preemptions;    /* sequences preempted in the window (a count) */
	/* the Cluster Autoscaler: GPUs of nodes launched and not Ready yet, beside
	 * gpus_capacity (the Ready ones); a column of the timeseries table */
	double gpus_provisioning;
};

/* One OpenCost allocation: a workload (or __idle__) over one window. */
struct allocation {
	const char *name;
	sim_time start, end;
	double gpu_hours;
	double gpu_cost;
	double cpu_core_hours;
	double cpu_cost;
	double ram_byte_hours;
	double ram_cost;
	double total_cost;
	double gpu_efficiency; /* NAN when nothing was allocated */
	int32_t workload;      /* index into scenario.workloads; -1: __idle__ */
	int32_t pool;          /* the one pool its pods used in the run; -1: several, none */
	/* read back from a database (store_read_allocations), owned there; NULL
	 * when absent: the workload's showback and what OpenCost's properties say */
	char *namespace, *queue, *team, *pool_name, *kind, *labels; /* labels: a JSON object */
	char *node; /* a node_allocations row's node (owned); NULL in allocations */
};

/* What a pending reason is about: placement.h's slots (kube-scheduler's
 * filters), the GPU resource itself, a taint, or a Kueue quota.  One message
 * can give several reasons (nodes fail differently), hence a mask. */
enum pend_kind {
	PEND_UNSCHEDULABLE, /* node(s) were unschedulable: a closed window */
	PEND_WINDOW,        /* no time before the window closes */
	PEND_AFFINITY,      /* node_selector, affinity, gpu_spec */
	PEND_SPREAD,        /* topology spread */
	PEND_SPREAD_LABEL,  /* topology spread, the node lacks the key */
	PEND_CPU,
	PEND_MEMORY,
	PEND_VRAM,        /* units isolate less memory than the pod's VRAM */
	PEND_RESOURCE,    /* Insufficient nvidia.com/gpu, a MIG profile, milli */
	PEND_TAINT,       /* an untolerated taint */
	PEND_QUOTA,       /* Kueue: insufficient unused quota */
	PEND_QUEUE_ORDER, /* Kueue: behind a StrictFIFO head that lacks quota */
	PEND_KINDS
};

#define PEND_BIT(k) (1u << (k))
/* The kinds that are rules keeping pods off nodes (placement's step). */
#define PEND_RULES                                                                \
	(PEND_BIT(PEND_AFFINITY) | PEND_BIT(PEND_TAINT) | PEND_BIT(PEND_SPREAD) | \
	 PEND_BIT(PEND_SPREAD_LABEL))

/* What holds a pod back or slows it: one kind per constraining scenario key
 * (relax.h's table has one row per kind).  The run attributes every waiting
 * and slowed pod-second to one of them (bind.h). */
enum constraint_kind {
	CONSTRAINT_QUOTA,             /* queues.Q.quota (nominal) */
	CONSTRAINT_BORROWING_LIMIT,   /* queues.Q.borrowing_limit */
	CONSTRAINT_LENDING_LIMIT,     /* queues.L.lending_limit (of the lender) */
	CONSTRAINT_RECLAIM,           /* queues.L.preemption.reclaim_within_cohort */
	CONSTRAINT_QUEUEING_STRATEGY, /* queues.Q.strategy (a StrictFIFO head) */
	CONSTRAINT_PRIORITY,          /* workloads.W.priority (waits behind lower-value work) */
	CONSTRAINT_NODE_SELECTOR,     /* workloads.W.node_selector */
	CONSTRAINT_AFFINITY,          /* workloads.W.affinity */
	CONSTRAINT_TAINT,             /* workloads.W.tolerations vs pools.P.taints */
	CONSTRAINT_SPREAD,            /* workloads.W.topology_spread (max_skew / when) */
	CONSTRAINT_GPU_SPEC,          /* workloads.W.gpu_spec */
	CONSTRAINT_MIG_PROFILE,       /* pools.P.sharing.layout lacks the profile asked for */
	CONSTRAINT_CPU_REQUEST,       /* workloads.W.cpu strands GPUs */
	CONSTRAINT_MEMORY_REQUEST,    /* workloads.W.memory strands GPUs */
	CONSTRAINT_VRAM,              /* GPU memory: unit too small / full / OOM */
	CONSTRAINT_SHARING,           /* pools.P.sharing: whole GPUs held by idle pods */
	CONSTRAINT_FRAGMENTATION,     /* scheduler.gpu_policy / scoring */
	CONSTRAINT_CONTENTION,        /* pools.P.sharing.replicas: slowdown under sharing */
	CONSTRAINT_WINDOW,            /* pools.P.windows / workloads.W.windows */
	CONSTRAINT_PROVISIONING,      /* pools.P.autoscale (min, provision_time) */
	CONSTRAINT_STARTUP,           /* workloads.W.startup / pools.P.startup (pull, load) */
	CONSTRAINT_CAPACITY,          /* pools.P.nodes / autoscale.max: only hardware helps */
	CONSTRAINT_KINDS
};

/* "quota", "lending-limit", ... (the constraints table's kind column); NULL past the end. */
const char *constraint_kind_name(enum constraint_kind k);
/* The kind of a name, or -1. */
int constraint_kind_of(const char *name);

/* One binding constraint and what it cost: a row of the constraints table. */
struct constraint {
	enum constraint_kind kind;
	int32_t pool, workload, queue; /* indexes into the scenario; -1: not about one */
	double pod_seconds;            /* waiting + slowed + start-up + provisioning time */
};

/* Pending time per kube-scheduler message (see reasons.h). */
struct pending_reason {
	const char *scope;      /* "all" or a workload name */
	const char *reason;     /* in results.reason_texts */
	double pending_seconds; /* pod-seconds spent pending with the reason */
	int64_t pods;           /* pods that began to wait with it */
	int32_t workload;       /* index into scenario.workloads; -1 for scope all */
	uint32_t kinds;         /* PEND_BIT of each enum pend_kind the message gives */
};

/* One inference request (only with output.requests). */
enum request_status { REQUEST_UNFINISHED, REQUEST_COMPLETED, REQUEST_REJECTED };

struct request_record {
	int64_t request_id; /* 0-based per workload, in arrival order */
	int32_t workload;   /* index into scenario.workloads */
	int32_t prompt_tokens;
	int32_t output_tokens;
	uint8_t status; /* enum request_status */
	bool slo_met;
	bool verified;
	sim_time arrival;
	sim_time first_token; /* SIM_NEVER: none yet */
	sim_time done;        /* SIM_NEVER: not finished */
};

/* The diagnosis' steps, in the order that separates causes (diagnose.h). */
enum finding_step {
	FINDING_ALLOCATION,  /* whole-GPU allocation, admission (quota), fragmentation */
	FINDING_MEMORY,      /* VRAM: OOM kills, no room, KV cache, preallocation */
	FINDING_PLACEMENT,   /* rules keep pods off idle capacity */
	FINDING_APPLICATION, /* the work is bound off the GPU (tokenizer, CPU, I/O) */
	FINDING_CAPACITY,    /* none of the above: the pool is too small */
	FINDING_STEPS
};

/* What a finding says; each kind has its own alternatives in advise. */
enum finding_kind {
	KIND_SHARING,        /* allocated GPUs idle: sharing modes would hold the pods */
	KIND_ADMISSION,      /* a queue's quota refuses work while GPUs are free */
	KIND_FRAGMENTATION,  /* free capacity in pieces no pending pod fits */
	KIND_STALLED,        /* a pod fits no unit anywhere: it can never run */
	KIND_OOM,            /* pods are OOM-killed */
	KIND_VRAM_FULL,      /* no VRAM left on the allocated GPUs for one more pod */
	KIND_PREALLOCATION,  /* time-sliced servers preallocate more than the GPU has */
	KIND_KV_CACHE,       /* an inference server's KV cache is too small */
	KIND_RULES,          /* placement rules hide idle capacity */
	KIND_REQUESTS,       /* a pod's cpu or memory request fills nodes before their GPUs */
	KIND_TOKENIZER,      /* requests wait for the CPU tokenizer */
	KIND_OFF_GPU,        /* batch jobs' time goes off the GPU */
	KIND_RESTARTS,       /* evicted jobs lose their work and start again */
	KIND_AUTOSCALER_MAX, /* an autoscaled service sits at max_replicas */
	KIND_REPLICAS,       /* a service's fixed replicas are saturated beside idle GPUs */
	KIND_NODE_GROUP_MAX, /* a node pool's Cluster Autoscaler sits at max with pods pending */
	KIND_PROVISIONING,   /* pods wait for nodes being provisioned, not for capacity */
	KIND_CAPACITY,       /* busy GPUs, work waits: a larger pool */
	KIND_DATA_LOADER,    /* batch GPUs wait on input from too few loader workers */
	/* diagnose_binds.c: constraints without a pending message of their own */
	KIND_CONTENTION,  /* jobs slowed by the pods sharing stacks beside them */
	KIND_PRIORITY,    /* urgent work waits behind work that matters less */
	KIND_STARTUP,     /* start-up (image pull, model load) makes jobs late */
	KIND_RECLAIM,     /* a queue's lent quota is not taken back */
	KIND_MIG_PROFILE, /* pods short of their MIG profile; the layout favours others */
	KIND_BINDS,       /* a constraint no detector names binds the most pod-seconds
			      * (relax.h): its key, value and relaxation */
	KIND_MAX_BATCH,   /* a server's batch is full at max_batch while memory holds more */
	KIND_DEADLINE,    /* jobs run longer than their deadline allows: no queue to cut */
	KIND_SCALE_DOWN,  /* the Cluster Autoscaler's scale-down evicts running jobs */
	KIND_MIXED_GPUS,  /* round-robin replicas on GPU types too slow for their share */
	KIND_PREEMPTED,   /* kube-scheduler's priority preemption evicts running jobs */
	FINDING_KINDS
};

const char *finding_step_name(enum finding_step s); /* "allocation", ... */
const char *finding_kind_name(enum finding_kind k); /* "sharing", "admission", ... */
/* The step of a name, or -1. */
int finding_step_of(const char *name);

/* An alternative a finding names: a label and its overrides, typed
 * (override.h; owned; as many as it takes: one idle_cull over 30 notebooks
 * is 30 of them). */
struct finding_fix {
	char *label;
	struct override *sets;
	size_t n_sets, cap_sets;
};

/* The rules a placement finding's pending reasons name (finding_figures.rules). */
enum { FINDING_RULE_AFFINITY = 1, FINDING_RULE_TAINT = 2, FINDING_RULE_SPREAD = 4 };

/* The figures a finding's sentences are made of, by kind: what the diagnosis
 * computed.  What the scenario or the run's metrics already hold (names,
 * memory, queue p95, SLO attainment) is looked up there by explain.h. */
union finding_figures {
	struct finding_pool {                  /* sharing, vram-full: over the windows in which
				 * work the pool could host pended */
		double pend_s, span;           /* seconds of those windows; of all windows */
		double pods, gpus;             /* pending pod- and GPU-seconds */
		double cap, alloc, engine, sm; /* the pool's GPU-seconds */
		double vram;                   /* GiB-seconds of VRAM used */
		double pod_gib;                /* vram-full: the smallest pending pod's VRAM */
		bool holders;                  /* sharing: the members are the idle workloads
						* holding the GPUs, not the pending ones */
	} pool;
	struct {
		double kills;      /* on the pool */
		int32_t elsewhere; /* workloads whose pods GPUs of other pools hold */
	} oom;
	struct {
		double kills; /* of the workload */
		double fit;   /* the memory_fraction that would fit */
	} prealloc;
	struct {
		double target; /* the memory_fraction that would give it the memory; 0:
				* it has it already, the cache's format is the fix */
		double preemptions, requests;
		double fits; /* typical sequences its cache holds (target 0) */
	} kv;
	struct finding_scaling {          /* autoscaler-max, node-group-max, provisioning */
		double at_max_s, span;    /* seconds at max (with pods pending); of all windows */
		double wait_s, pending_s; /* provisioning: pod-seconds waiting for nodes; pending */
		double node_hours;
		int64_t scale_ups, scale_downs;
		int32_t warm; /* provisioning: the nodes to keep warm */
	} scaling;
	struct {
		double pool_alloc_pct; /* a workload's: its busiest pool's allocation */
	} capacity;
	struct finding_rules {
		double pending_s;       /* pod-seconds with a rule's reason */
		double idle, cap, secs; /* GPU-seconds idle and in capacity in the hidden
					 * pools, seconds, over the windows w pended */
		double most;            /* most GPUs idle there at once */
		int64_t pods;           /* 0: a service's replicas, none pending, kept
					 * off them while serving (the windows counted) */
		double duty;            /* that service's replicas' % of time in iterations */
		int32_t rules;          /* FINDING_RULE_* the messages name (or its rules hide) */
	} rules;
	struct finding_tokenizer {
		double rate, busy; /* requests/s offered; tokenizer utilisation */
		int32_t replicas, workers, need;
	} tokenizer;
	struct finding_loader {
		double fraction;       /* of GPU time not waiting on input */
		int32_t workers, need; /* loader workers now; that would keep up */
	} loader;
	struct finding_restarts {
		double evictions, jobs, unfinished;
		double attempt_s;    /* a job's mean allocation before it ended or was evicted */
		double checkpoint_s; /* the checkpoint interval that would keep work */
	} restarts;
	struct finding_wait {           /* admission, fragmentation: the windows w pended */
		double pending_s;       /* pod-seconds with a quota (resource) reason */
		double secs, free, cap; /* seconds; GPU-seconds free and in capacity */
		double need;            /* GPUs a job asks for */
		double pend, covered;   /* fragmentation: w's pending pod-seconds, of which
				       * in windows whose free capacity held a job */
		bool strict;            /* admission: mostly behind a StrictFIFO head */
	} wait;
	struct finding_requests {       /* the windows w pended with cpu or memory reasons */
		double pending_s;       /* pod-seconds with such a reason */
		double secs, free, cap; /* seconds; GPU-seconds free and in capacity */
		double pend, covered;   /* w's pending pod-seconds; in windows with a job's
					  * GPUs free */
		double cpu, memory;     /* the requests that fit a pod per its GPUs on a node
					  * of the finding's pool (cores, bytes); 0: not short */
		int32_t pods_per_node;  /* pods of w a node of it holds now */
	} requests;
	struct finding_batch {           /* max-batch: a server's batch is full */
		double offered, served;  /* requests per second offered and served */
		double in_batch;         /* sequences in a replica's batch on average */
		int32_t max_batch, fits; /* the setting; the sequences its KV cache holds */
	} batch;
	struct finding_deadline {  /* deadline: jobs longer than their deadline allows */
		double run_s;      /* a job's run on its GPUs, start-up included, s */
		double within_s;   /* the deadline's allowance from arrival, s */
		double jobs, late; /* jobs; of which missed */
		double need;       /* the speed-up that would fit the run in the deadline */
		bool tail;         /* the mean fits: run_s is the longest of the late jobs,
				    * each of which missed on its own, without waiting */
	} deadline;
	struct finding_replicas {       /* a service's fixed replicas, saturated */
		double offered, served; /* requests per second offered and served */
		double duty;            /* its replicas' time in iterations, percent */
		double idle;            /* GPUs idle on average in the pools it may use */
		int32_t need;           /* the replicas that would serve the load, as
					 * many as the idle GPUs hold */
		int32_t wanted;         /* the replicas the load needs, idle GPUs or not */
	} replicas;
	struct finding_stalled {
		int32_t why;          /* enum pend_kind: PEND_VRAM, RESOURCE, CPU or AFFINITY */
		int32_t quant;        /* an enum quant that fits, or -1 */
		double quant_vram;    /* a pod's VRAM with it, bytes */
		int32_t mps_replicas; /* MPS replicas that fit (1: exclusive), or 0 */
	} stalled;
};

/* One finding of the diagnosis (diagnose.h), a row of the findings table.
 * The diagnosis fills the typed fields; text and evidence are made from them
 * by explain.h (NULL until then). */
struct finding {
	int32_t rank;     /* 1 = the first thing to look at */
	uint8_t step;     /* enum finding_step */
	uint8_t kind;     /* enum finding_kind */
	int32_t pool;     /* index into scenario.pools; -1: not about one pool */
	int32_t workload; /* index into scenario.workloads; -1: not about one */
	int32_t queue;    /* index into scenario.queues; -1: none */
	double weight;    /* how much it explains (pod- or GPU-seconds, kills, ...) */
	double figure;    /* the kind's headline figure (GPUs free, preemptions, ...) */
	int32_t reason;   /* the longest pending reason it cites: an index into
			      * results.reason_texts; -1: none */
	int32_t *members; /* owned: the workloads it is about (sharing, oom,
			      * vram-full) or the pools a rule hides (rules) */
	size_t n_members;
	union finding_figures fig;
	char *text;                /* owned: what is wrong and what would help (explain.h) */
	char *evidence;            /* owned: the figures that support it (explain.h) */
	struct finding_fix *fixes; /* owned: the alternatives it names, best guess first */
	size_t n_fixes;
	/* The binding constraint it names (relax.h): the key in --set form with
	 * names filled in ("queues.team-a.lending_limit"), its value as scenario
	 * text, the value that met the goal when advise verified one (else the
	 * first relaxation proposed), and the pod-hours it explains.  All owned;
	 * NULL (and 0) when the finding names no key. */
	char *key, *value, *relaxed;
	double pod_hours;
	int32_t constraint; /* enum constraint_kind; -1: none */
};

/* Frees what f owns. */
void finding_free(struct finding *f);
/* A deep copy of src into dst. */
void finding_copy(struct finding *dst, const struct finding *src);
/* Appends an alternative to f: label, then n --set overrides. */
struct finding_fix *finding_add_fix(struct finding *f, const char *label);
/* Appends override o to x (x takes what o owns; x NULL: o is freed).  The
 * detectors make o with override_setf. */
void finding_fix_add(struct finding_fix *x, struct override o);
/* An alternative named by label (formatted), unless f names it already (then
 * NULL): the detectors' (diagnose, relax) way to add one. */
struct finding_fix *finding_fixf(struct finding *f, const char *fmt, ...) GP_PRINTF(2, 3);
/* One override of alternative x, typed (override_vsetf: KEYFMT=VALUEFMT; x
 * NULL: ignored). */
void finding_fix_setf(struct finding_fix *x, const char *fmt, ...) GP_PRINTF(2, 3);
/* The name of the workload, else the pool, f is about in sc; NULL: neither
 * (the findings table's scope). */
const char *finding_scope(const struct finding *f, const struct scenario *sc);
/* The --set text of a fix: "--set 'A' --set 'B'" (malloc'd). */
char *finding_fix_text(const struct finding_fix *x);

/* What the autoscaler did to one pool, and what the diagnosis needs to tell
 * capacity (at max with pods pending) from provisioning time (autoscale.h).
 * One row per pool that autoscales or is spot, in scenario order. */
struct pool_scaling {
	int32_t pool;               /* index into scenario.pools */
	int64_t scale_ups;          /* scale-up decisions for the pool */
	int64_t nodes_added;        /* nodes launched (scale-ups and spot replacements) */
	int64_t scale_downs;        /* nodes removed as unneeded */
	int64_t interruptions;      /* spot interruption notices */
	double node_hours;          /* billed: from launch to removal */
	double peak_nodes;          /* most Ready nodes at once */
	double at_max_s;            /* seconds at max with pending pods it could host */
	double provisioning_wait_s; /* pod-seconds pending while nodes for them provisioned */
	int64_t failed_scale_ups;   /* scale-ups given up: nodes not Ready within
				     * max_node_provision_time */
};

/* One figure of a backtest (backtest.h), a row of the backtest table: the
 * history's beside the replay's.  metric is one of backtest_metric_names. */
struct backtest_row {
	char *scope;        /* owned: "all" or a workload of the twin */
	const char *metric; /* static */
	double observed;    /* NAN: none (no pod queued) */
	double simulated;   /* NAN: none */
	double error;       /* (simulated - observed) / observed; 0 when both are 0;
			     * NAN when observed is 0 and simulated not, or either is NAN */
};

#define RESULTS_BACKTEST_METRICS 5
extern const char *const backtest_metric_names[RESULTS_BACKTEST_METRICS];
/* Queue times within this many seconds of the history's pass whatever their ratio. */
#define RESULTS_BACKTEST_QUEUE_FLOOR_S 300.0

/* Whether row's replay is within tolerance (a fraction: 0.25) of the
 * history: |error| <= tolerance, or, for a queue time, within
 * RESULTS_BACKTEST_QUEUE_FLOOR_S; a figure only one side has is not. */
bool results_backtest_within(const struct backtest_row *row, double tolerance);

/* What a backtest could not model, with the evidence the history gave for it
 * (backtest.h): typed, put into words by the report. */
enum backtest_gap_kind {
	GAP_UNKNOWN_WORKLOAD, /* pods of a workload the twin does not have */
	GAP_DELETED_PENDING,  /* pods deleted before they were ever scheduled */
	GAP_NO_GPUS,          /* pods that asked for no GPU */
	GAP_TOO_WIDE,         /* pods wider than any node of the pools */
	GAP_NO_NODE,          /* scheduled pods whose node is not recorded */
	GAP_NODES,            /* more distinct nodes ran pods than the pools have */
	GAP_PREEMPTION,       /* lower-priority pods that ended Failed or Deleted early */
	GAP_GANG,             /* a gang workload replayed pod by pod */
};

struct backtest_gap {
	uint8_t kind;   /* enum backtest_gap_kind */
	int64_t pods;   /* pods it concerns (GAP_NODES: distinct nodes seen) */
	int64_t figure; /* GAP_NODES: nodes the pools have; GAP_GANG: pods per job */
	char *example;  /* owned: a workload, pod or node name; NULL: none */
};

/* Where a timed run hands its job rows while it goes on (store.h's
 * store_writer): once every job below a row has retired, the rows are final,
 * and the run hands them on in order, `batch` at a time, each hand-off a
 * pointer into results.jobs valid during the call only (the callee copies).
 * n_nodes is the cluster's node slots, which the node ids of the rows need.
 * The rest of the rows stay in results.jobs for the end of the run. */
struct results_sink {
	void (*jobs)(void *ctx, const struct job_record *rows, size_t n, size_t n_nodes);
	void (*simulated)(void *ctx); /* results.jobs whole and read-only from here on */
	void *ctx;
	size_t batch; /* rows per hand-off, > 0 */
};

struct results {
	struct metric *metrics;
	size_t n_metrics, cap_metrics;
	/* A hash index of metrics by (scope, name), kept by results_add_metric, so
	 * that reports over 16,000 workloads do not scan every metric per cell;
	 * metrics put in the array by other means are found by a scan. */
	struct hash_ids metric_index; /* positions, by hash of (scope, name) */
	size_t n_indexed;
	struct job_record *jobs; /* only when output.jobs */
	size_t n_jobs, cap_jobs;
	struct ts_row *ts;
	size_t n_ts, cap_ts;
	sim_time step; /* of the ts windows: output.step, or the one chosen
				    * for the span when output.step is absent (collect.h) */
	/* Times an adaptive step merged the rows of ts in place (collect.h):
	 * between two merges rows are only appended, so a writer that stored
	 * some while the run went on knows whether they still hold. */
	uint32_t ts_merges;
	struct allocation *allocations;
	size_t n_allocations, cap_allocations;
	/* idle_by: node: per node, each workload's allocations and the node's
	 * __idle__ over the whole span (the node_allocations table) */
	struct allocation *node_allocations;
	size_t n_node_allocations, cap_node_allocations;
	struct pending_reason *pending_reasons;
	size_t n_pending_reasons, cap_pending_reasons;
	char **reason_texts; /* owned: the messages rows and jobs point to */
	size_t n_reason_texts;
	struct request_record *requests; /* only when output.requests */
	size_t n_requests;
	struct finding *findings; /* ranked; none for a healthy run */
	size_t n_findings;
	struct constraint *constraints; /* pod-seconds per binding constraint (bind.h):
					 * kinds in enum order, then workload, pool, queue */
	size_t n_constraints;
	struct curve_row *curve;       /* the inflation experiment's curve; none otherwise */
	struct pool_scaling *scaling;  /* autoscaled and spot pools; none otherwise */
	struct backtest_row *backtest; /* a backtest's figures; none for other runs */
	size_t n_backtest;
	struct backtest_gap *gaps; /* what the backtest could not model */
	size_t n_gaps;
	size_t n_scaling;
	size_t n_curve;
	char **node_names; /* owned */
	size_t n_nodes;
	uint64_t events;  /* events the engine processed */
	sim_time sim_end; /* clock when the run ended */
	double wall_seconds;
	char started_at[32];  /* RFC 3339 wall clock */
	const char *status;   /* "ok"; "horizon" or "stalled" when work was left unfinished;
			       * "stopped" when a stop rule ended it (run_simulate_stop) */
	const char *currency; /* the unit of money metrics (METRIC_MONEY): the
			       * scenario's scenario_money_unit, set when a run starts */
};

void results_init(struct results *r);
void results_free(struct results *r);
/* Adds metric id of scope with its name and unit from metric.h's table (a
 * money metric: r->currency, which must be set). */
void results_add_metric(struct results *r, const char *scope, enum metric_id id, double value);

/* Whether the run has metric id in scope; *out: its value (the first added),
 * NAN when it does not apply, and NAN when absent.  Absence is not a value:
 * a caller that tests a goal says what a missing metric means. */
bool results_get(const struct results *r, const char *scope, enum metric_id id, double *out);
/* The value of metric id in scope, or `absent` when the run has none: for
 * figures that are shown, where the caller names what stands for none. */
double results_or(const struct results *r, const char *scope, enum metric_id id, double absent);
/* Whether a yes/no metric (goal_met, slo_met) is present and yes: a scope
 * without it has not shown that it met anything. */
bool results_holds(const struct results *r, const char *scope, enum metric_id id);

#endif
