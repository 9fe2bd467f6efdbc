/*
 * metric.h - the metrics a run can write: one id per metric and one table of
 * their names, units, scopes and meanings (docs/results.md lists the same,
 * tests/test_metric.c checks that the two agree).
 *
 * A module adds a metric by id (results_add_metric) and reads one by id
 * (results_get): the name and unit written to the metrics table come from
 * here, so a call site cannot spell a name wrong or give a metric a second
 * unit.  A name the user types (search --until) is resolved here once
 * (metric_of).  The ids are in the order of the names before the table
 * existed, so "did you mean" picks the same name it did.
 *
 * Adding a metric: an enumerator below and its row in sim/metric.c, which
 * must fill every slot: a designated initializer per id, so inserting an id
 * shifts no row.  The compiler fails on a last id without its row (the
 * table's size against METRIC_COUNT) and on an id given two rows
 * (-Woverride-init, in -Wextra); a row left out in the middle is a NULL
 * name that metric_def asserts on and tests/test_metric.c reports.  Then its
 * line in docs/results.md's list, which the same test compares.
 */
#ifndef GPUPLAN_METRIC_H
#define GPUPLAN_METRIC_H

#include <stdint.h>

enum metric_id {
	METRIC_ARRIVED_DEMAND_PCT,
	METRIC_AUTOSCALER_AT_MAX_S,
	METRIC_CAPACITY_GPUS,
	METRIC_COST_ALLOCATED,
	METRIC_COST_BILL,
	METRIC_COST_COMMITTED,
	METRIC_COST_IDLE,
	METRIC_COST_NODES,
	METRIC_COST_ON_DEMAND,
	METRIC_COST_PER_DAY,
	METRIC_COST_PER_MILLION_TOKENS,
	METRIC_ENERGY_KWH,
	METRIC_ENERGY_PER_1K_TOKENS_WH,
	METRIC_ENERGY_PER_VERIFIED_RESULT_WH,
	METRIC_TOKENS_PER_JOULE,
	METRIC_COST_PER_VERIFIED_JOB,
	METRIC_COST_PER_VERIFIED_REQUEST,
	METRIC_COST_PER_VERIFIED_RESULT,
	METRIC_COST_TOTAL,
	METRIC_CULLED_GPU_HOURS,
	METRIC_DEADLINE_MET_PCT,
	METRIC_DECODE_COST,
	METRIC_DECODE_DUTY_CYCLE_PCT,
	METRIC_DECODE_GPU_HOURS,
	METRIC_DECODE_GPUS,
	METRIC_DUTY_CYCLE_PCT,
	METRIC_E2E_MEAN_S,
	METRIC_E2E_P50_S,
	METRIC_E2E_P99_S,
	METRIC_ENGINE_ACTIVE_PCT,
	METRIC_FAILED_SCALE_UPS,
	METRIC_FRAGMENTATION_PCT,
	METRIC_GOAL_MET,
	METRIC_GOALS_MISSED,
	METRIC_GPU_ALLOCATION_PCT,
	METRIC_GPU_HOURS_ALLOCATED,
	METRIC_GPU_HOURS_BUSY,
	METRIC_JOBS_COMPLETED,
	METRIC_JOBS_CULLED,
	METRIC_JOBS_FAILED,
	METRIC_JOBS_PREEMPTED,
	METRIC_JOBS_PRIORITY_PREEMPTED,
	METRIC_JOBS_SCALED_DOWN,
	METRIC_JOBS_SUBMITTED,
	METRIC_JOBS_UNFINISHED,
	METRIC_JOBS_WAITING,
	METRIC_KV_TRANSFER_GB,
	METRIC_KV_TRANSFER_MEAN_S,
	METRIC_KV_TRANSFER_P50_S,
	METRIC_KV_TRANSFER_P99_S,
	METRIC_KV_TRANSFERS,
	METRIC_MAKESPAN_S,
	METRIC_NODE_HOURS,
	METRIC_NODES_ADDED,
	METRIC_NODES_PEAK,
	METRIC_OOM_KILLS,
	METRIC_PEAK_ALLOCATED_GPUS,
	METRIC_PEAK_DEMAND_GPUS,
	METRIC_PODS_SCHEDULED,
	METRIC_PODS_TRACE,
	METRIC_PREEMPTIONS,
	METRIC_PREFILL_COST,
	METRIC_PREFILL_DUTY_CYCLE_PCT,
	METRIC_PREFILL_GPU_HOURS,
	METRIC_PREFILL_GPUS,
	METRIC_PROVISIONING_WAIT_S,
	METRIC_QUEUE_GOAL_S,
	METRIC_QUEUE_TIME_MAX_S,
	METRIC_QUEUE_TIME_MEAN_S,
	METRIC_QUEUE_TIME_P50_S,
	METRIC_QUEUE_TIME_P95_S,
	METRIC_QUEUE_TIME_P99_S,
	METRIC_REPLICA_WAIT_MAX_S,
	METRIC_REPLICAS_EVICTED,
	METRIC_REQUEST_QUEUE_MEAN_S,
	METRIC_REQUESTS_COMPLETED,
	METRIC_REQUESTS_REJECTED,
	METRIC_REQUESTS_SUBMITTED,
	METRIC_REQUESTS_UNFINISHED,
	METRIC_SCALE_DOWNS,
	METRIC_SCALE_UPS,
	METRIC_SLO_ATTAINMENT_PCT,
	METRIC_SLO_MET,
	METRIC_SLO_TPOT_S,
	METRIC_SLO_TTFT_S,
	METRIC_SM_ACTIVE_PCT,
	METRIC_SPOT_INTERRUPTIONS,
	METRIC_TARGET_SHAPES,
	METRIC_THROUGHPUT_RPS,
	METRIC_TOKENIZE_WAIT_MEAN_S,
	METRIC_TOKENS_PER_S,
	METRIC_TPOT_P50_S,
	METRIC_TPOT_P95_S,
	METRIC_TPOT_P99_S,
	METRIC_TTFT_MEAN_S,
	METRIC_TTFT_P50_S,
	METRIC_TTFT_P95_S,
	METRIC_TTFT_P99_S,
	METRIC_VERIFIED_RESULTS,
	METRIC_VRAM_CAPACITY_GIB,
	METRIC_VRAM_USED_PCT,
	METRIC_WAIT_SO_FAR_MAX_S,
	METRIC_COUNT
};

/* Where a metric is written: bits of metric_def.scopes. */
enum metric_scope {
	METRIC_SCOPE_ALL = 1,      /* scope "all": the whole run */
	METRIC_SCOPE_POOL = 2,     /* a pool's name */
	METRIC_SCOPE_WORKLOAD = 4, /* a workload's name */
	METRIC_SCOPE_SERVICE = 8,  /* a routed inference service's name (scenario_route.c) */
};

/* A metric's unit when it is money: the scenario's currency
 * (scenario_money_unit), which results.currency carries. */
#define METRIC_MONEY NULL

struct metric_def {
	const char *name; /* lower_snake_case, the unit last: "queue_time_p95_s" */
	const char *unit; /* as written to the metrics table; METRIC_MONEY: the currency */
	uint8_t scopes;   /* enum metric_scope bits */
	const char *what; /* one line: what it measures */
};

extern const struct metric_def metric_defs[METRIC_COUNT];

/* The row of id, which must be < METRIC_COUNT. */
const struct metric_def *metric_def(enum metric_id id);
const char *metric_name(enum metric_id id);
/* The id of a metric name, or -1 when no metric has it. */
int metric_of(const char *name);
/* The name the user likely meant by an unknown one: the closest by edit
 * distance (ytree_closest), else the first that begins with it; NULL: none. */
const char *metric_closest(const char *name);

#endif
