/*
 * results.h - what one simulation run produced, in the shape of the results
 * tables (DESIGN.md section 6).  The simulation fills it; store writes it to
 * SQLite and report prints it.  Strings (scopes, units, names) point to the
 * scenario or to static text unless noted, so a results object must not
 * outlive the scenario it was made from.
 */
#ifndef GPUPLAN_RESULTS_H
#define GPUPLAN_RESULTS_H

#include "gpuplan/common.h"
#include "gpuplan/scenario.h"

struct metric {
	const char *scope;   /* "all", a pool or a workload name */
	const char *name;    /* DESIGN.md metric name */
	double value;        /* NAN is stored as NULL */
	const char *unit;    /* "s", "gpus", "pct", "count", "gpu_hours", ... */
};

enum job_status { JOB_PENDING, JOB_RUNNING, JOB_COMPLETED, JOB_FAILED };

/* "completed", "failed", or "unfinished" for pending/running at the end. */
const char *job_status_name(enum job_status s);

struct job_record {
	int64_t job_id;      /* 0-based in submission order */
	int32_t workload;    /* index into scenario.workloads */
	int32_t node;        /* index into results.node_names; -1 never placed */
	int32_t gpus;
	uint8_t status;      /* enum job_status */
	bool deadline_met;
	bool verified;
	sim_time submit;
	sim_time start;      /* SIM_NEVER: never started */
	sim_time end;        /* SIM_NEVER: not finished */
	sim_time deadline;   /* SIM_NEVER: none */
	double cost;
	int32_t reason;      /* last pending reason, kube-scheduler's message: an
			      * index into results.reason_texts; -1: never waited with one */
	bool has_trace_queue; /* the trace gives the job's own wait (openb) */
	sim_time trace_queue; /* that wait, scheduled - creation in the trace */
};

/* One point of the inflation curve (inflation.h). */
struct curve_row {
	int32_t arrived_pct;      /* whole percent of the GPU capacity requested so far */
	double allocated_pct;     /* GPU capacity allocated, % */
	double fragmentation_pct; /* fragmented GPU milli / GPU capacity, % (gpupolicy_frag) */
};

struct ts_row {
	sim_time t;          /* start of the step window */
	const char *scope;
	/* time-weighted means over [t, t + step) */
	double gpus_capacity;
	double gpus_allocated;
	double gpus_demand;
	double engine_active;  /* GPUs' worth of engine activity (sum of f) */
	double sm_active;      /* GPUs' worth of SM activity (sum of f*s) */
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
	double gpu_efficiency;   /* NAN when nothing was allocated */
};

/* Pending time per kube-scheduler message (see reasons.h). */
struct pending_reason {
	const char *scope;      /* "all" or a workload name */
	const char *reason;     /* in results.reason_texts */
	double pending_seconds; /* pod-seconds spent pending with the reason */
	int64_t pods;           /* pods that began to wait with it */
};

/* One inference request (only with output.requests). */
enum request_status { REQUEST_UNFINISHED, REQUEST_COMPLETED, REQUEST_REJECTED };

struct request_record {
	int64_t request_id;  /* 0-based per workload, in arrival order */
	int32_t workload;    /* index into scenario.workloads */
	int32_t prompt_tokens;
	int32_t output_tokens;
	uint8_t status;      /* enum request_status */
	bool slo_met;
	bool verified;
	sim_time arrival;
	sim_time first_token; /* SIM_NEVER: none yet */
	sim_time done;        /* SIM_NEVER: not finished */
};

/* One finding of the diagnosis (diagnose.h), a row of the findings table. */
struct finding {
	int32_t rank;        /* 1 = the first thing to look at */
	char step[16];       /* "allocation", "memory", "placement" or "application" */
	char scope[64];      /* the pool or workload it is about (not a column) */
	char *text;          /* owned: what is wrong and what would help */
	char *evidence;      /* owned: the figures that support it */
};

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
};

struct results {
	struct metric *metrics;
	size_t n_metrics, cap_metrics;
	struct job_record *jobs;   /* only when output.jobs */
	size_t n_jobs, cap_jobs;
	struct ts_row *ts;
	size_t n_ts, cap_ts;
	struct allocation *allocations;
	size_t n_allocations, cap_allocations;
	struct pending_reason *pending_reasons;
	size_t n_pending_reasons, cap_pending_reasons;
	char **reason_texts;       /* owned: the messages rows and jobs point to */
	size_t n_reason_texts;
	struct request_record *requests; /* only when output.requests */
	size_t n_requests;
	struct finding *findings;  /* ranked; none for a healthy run */
	size_t n_findings;
	struct curve_row *curve;   /* the inflation experiment's curve; none otherwise */
	struct pool_scaling *scaling; /* autoscaled and spot pools; none otherwise */
	size_t n_scaling;
	size_t n_curve;
	char **node_names;         /* owned */
	size_t n_nodes;
	uint64_t events;           /* events the engine processed */
	sim_time sim_end;          /* clock when the run ended */
	double wall_seconds;
	char started_at[32];       /* RFC 3339 wall clock */
	const char *status;        /* "ok", or "horizon" when work was left unfinished */
};

void results_init(struct results *r);
void results_free(struct results *r);
void results_add_metric(struct results *r, const char *scope, const char *name, double value,
			const char *unit);
/* The metric's value, or NAN when absent. */
double results_metric(const struct results *r, const char *scope, const char *name);

#endif
