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
};

struct results {
	struct metric *metrics;
	size_t n_metrics, cap_metrics;
	struct job_record *jobs;   /* only when output.jobs */
	size_t n_jobs, cap_jobs;
	struct ts_row *ts;
	size_t n_ts, cap_ts;
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
