/* metric.c - the table of metrics (see metric.h). */
#include "gpuplan/metric.h"

#include "gpuplan/ytree.h"

#include <assert.h>
#include <string.h>

/* Every id has its row: a row left out would be a zero row (a NULL name) that
 * the tests find; an id past the last row would fail this size check. */
const struct metric_def metric_defs[] = {
	[METRIC_ARRIVED_DEMAND_PCT] =
		{"arrived_demand_pct", "pct", METRIC_SCOPE_ALL,
		 "GPU capacity requested by the pods that arrived, % (inflation experiment)"},
	[METRIC_AUTOSCALER_AT_MAX_S] =
		{"autoscaler_at_max_s", "s", METRIC_SCOPE_POOL,
		 "seconds the pool sat at autoscale.max with pending pods it could host"},
	[METRIC_CAPACITY_GPUS] =
		{"capacity_gpus", "gpus", METRIC_SCOPE_ALL | METRIC_SCOPE_POOL,
		 "GPUs in the pools (an autoscaled pool: the most it had Ready at once)"},
	[METRIC_COST_ALLOCATED] = {"cost_allocated", METRIC_MONEY,
				   METRIC_SCOPE_ALL | METRIC_SCOPE_WORKLOAD,
				   "cost of the allocations at the pools' prices"},
	[METRIC_COST_BILL] = {"cost_bill", METRIC_MONEY, METRIC_SCOPE_POOL,
			      "the pool's bill over the span: its allocations and its idle"},
	[METRIC_COST_COMMITTED] =
		{"cost_committed", METRIC_MONEY, METRIC_SCOPE_POOL,
		 "of the pool's bill, its committed GPUs' part (price.committed)"},
	[METRIC_COST_IDLE] = {"cost_idle", METRIC_MONEY,
			      METRIC_SCOPE_ALL | METRIC_SCOPE_POOL | METRIC_SCOPE_WORKLOAD |
				      METRIC_SCOPE_SERVICE,
			      "idle cost: a pool's over the span, a workload's share of it"},
	[METRIC_COST_NODES] = {"cost_nodes", METRIC_MONEY, METRIC_SCOPE_POOL,
			       "the billed node-hours at the node price"},
	[METRIC_COST_ON_DEMAND] = {"cost_on_demand", METRIC_MONEY, METRIC_SCOPE_POOL,
				   "the pool's powered capacity at on-demand prices"},
	[METRIC_COST_PER_DAY] = {"cost_per_day", METRIC_MONEY, METRIC_SCOPE_ALL,
				 "the bill over its span per day"},
	[METRIC_COST_PER_MILLION_TOKENS] = {"cost_per_million_tokens", METRIC_MONEY,
					    METRIC_SCOPE_ALL | METRIC_SCOPE_WORKLOAD |
						    METRIC_SCOPE_SERVICE,
					    "allocations and idle share per million tokens served"},
	[METRIC_ENERGY_KWH] = {"energy_kwh", "kwh",
			       METRIC_SCOPE_ALL | METRIC_SCOPE_WORKLOAD | METRIC_SCOPE_SERVICE,
			       "energy the inference servers used"},
	[METRIC_ENERGY_PER_1K_TOKENS_WH] = {"energy_per_1k_tokens_wh", "wh",
					    METRIC_SCOPE_ALL | METRIC_SCOPE_WORKLOAD |
						    METRIC_SCOPE_SERVICE,
					    "energy per thousand tokens"},
	[METRIC_ENERGY_PER_VERIFIED_RESULT_WH] = {"energy_per_verified_result_wh", "wh",
						  METRIC_SCOPE_ALL | METRIC_SCOPE_WORKLOAD |
							  METRIC_SCOPE_SERVICE,
						  "energy per verified request"},
	[METRIC_TOKENS_PER_JOULE] = {"tokens_per_joule", "tokens/j",
				     METRIC_SCOPE_ALL | METRIC_SCOPE_WORKLOAD |
					     METRIC_SCOPE_SERVICE,
				     "output tokens per joule"},
	[METRIC_COST_PER_VERIFIED_JOB] = {"cost_per_verified_job", METRIC_MONEY, METRIC_SCOPE_ALL,
					  "cost of batch and service work per verified job"},
	[METRIC_COST_PER_VERIFIED_REQUEST] = {"cost_per_verified_request", METRIC_MONEY,
					      METRIC_SCOPE_ALL,
					      "cost of inference work per verified request"},
	[METRIC_COST_PER_VERIFIED_RESULT] = {"cost_per_verified_result", METRIC_MONEY,
					     METRIC_SCOPE_ALL | METRIC_SCOPE_WORKLOAD,
					     "allocations and idle share per verified result"},
	[METRIC_COST_TOTAL] = {"cost_total", METRIC_MONEY,
			       METRIC_SCOPE_ALL | METRIC_SCOPE_WORKLOAD | METRIC_SCOPE_SERVICE,
			       "the bill (scope all) or the allocations (a workload)"},
	[METRIC_CULLED_GPU_HOURS] = {"culled_gpu_hours", "gpu_hours",
				     METRIC_SCOPE_ALL | METRIC_SCOPE_WORKLOAD,
				     "GPU-hours idle culling saved (idle_cull)"},
	[METRIC_DEADLINE_MET_PCT] = {"deadline_met_pct", "pct",
				     METRIC_SCOPE_ALL | METRIC_SCOPE_WORKLOAD,
				     "jobs that completed by their deadline, %"},
	[METRIC_DECODE_COST] = {"decode_cost", METRIC_MONEY, METRIC_SCOPE_WORKLOAD,
				"a disaggregated workload's decode GPU-hours at the pools' prices"},
	[METRIC_DECODE_DUTY_CYCLE_PCT] =
		{"decode_duty_cycle_pct", "pct", METRIC_SCOPE_WORKLOAD,
		 "share of the decode role's serving time in iterations, %"},
	[METRIC_DECODE_GPU_HOURS] = {"decode_gpu_hours", "gpu_hours", METRIC_SCOPE_WORKLOAD,
				     "GPU-hours the decode role served"},
	[METRIC_DECODE_GPUS] = {"decode_gpus", "gpus", METRIC_SCOPE_WORKLOAD,
				"GPUs of the decode role"},
	[METRIC_DUTY_CYCLE_PCT] = {"duty_cycle_pct", "pct",
				   METRIC_SCOPE_ALL | METRIC_SCOPE_WORKLOAD | METRIC_SCOPE_SERVICE,
				   "share of an inference server's serving time in iterations, %"},
	[METRIC_E2E_MEAN_S] = {"e2e_mean_s", "s",
			       METRIC_SCOPE_ALL | METRIC_SCOPE_WORKLOAD | METRIC_SCOPE_SERVICE,
			       "mean request latency, arrival to last token"},
	[METRIC_E2E_P50_S] = {"e2e_p50_s", "s",
			      METRIC_SCOPE_ALL | METRIC_SCOPE_WORKLOAD | METRIC_SCOPE_SERVICE,
			      "median request latency"},
	[METRIC_E2E_P99_S] = {"e2e_p99_s", "s",
			      METRIC_SCOPE_ALL | METRIC_SCOPE_WORKLOAD | METRIC_SCOPE_SERVICE,
			      "99th percentile request latency"},
	[METRIC_ENGINE_ACTIVE_PCT] = {"engine_active_pct", "pct",
				      METRIC_SCOPE_ALL | METRIC_SCOPE_POOL,
				      "time average of GR engine activity against capacity, %"},
	[METRIC_FAILED_SCALE_UPS] =
		{"failed_scale_ups", "count", METRIC_SCOPE_POOL,
		 "scale-ups given up: nodes not Ready within max_node_provision_time"},
	[METRIC_FRAGMENTATION_PCT] = {"fragmentation_pct", "pct", METRIC_SCOPE_ALL,
				      "fragmented GPU capacity, % (inflation experiment)"},
	[METRIC_GOAL_MET] =
		{"goal_met", "bool", METRIC_SCOPE_ALL | METRIC_SCOPE_POOL | METRIC_SCOPE_WORKLOAD,
		 "whether the workload (every workload of the pool, of the run) met its goal"},
	[METRIC_GOALS_MISSED] = {"goals_missed", "workloads", METRIC_SCOPE_ALL,
				 "workloads that missed their goal"},
	[METRIC_GPU_ALLOCATION_PCT] = {"gpu_allocation_pct", "pct",
				       METRIC_SCOPE_ALL | METRIC_SCOPE_POOL,
				       "time average of GPUs allocated against capacity, %"},
	[METRIC_GPU_HOURS_ALLOCATED] = {"gpu_hours_allocated", "gpu_hours",
					METRIC_SCOPE_ALL | METRIC_SCOPE_POOL |
						METRIC_SCOPE_WORKLOAD | METRIC_SCOPE_SERVICE,
					"integral of GPUs allocated"},
	[METRIC_GPU_HOURS_BUSY] = {"gpu_hours_busy", "gpu_hours",
				   METRIC_SCOPE_ALL | METRIC_SCOPE_POOL | METRIC_SCOPE_WORKLOAD,
				   "integral of engine activity"},
	[METRIC_JOBS_COMPLETED] = {"jobs_completed", "jobs",
				   METRIC_SCOPE_ALL | METRIC_SCOPE_WORKLOAD, "jobs that completed"},
	[METRIC_JOBS_CULLED] = {"jobs_culled", "jobs", METRIC_SCOPE_ALL | METRIC_SCOPE_WORKLOAD,
				"services idle culling stopped (idle_cull)"},
	[METRIC_JOBS_FAILED] = {"jobs_failed", "jobs", METRIC_SCOPE_ALL | METRIC_SCOPE_WORKLOAD,
				"jobs that failed"},
	[METRIC_JOBS_PREEMPTED] =
		{"jobs_preempted", "jobs", METRIC_SCOPE_ALL | METRIC_SCOPE_WORKLOAD,
		 "jobs stopped by a window close, a spot notice, a scale-down or a Kueue "
		 "preemption"},
	[METRIC_JOBS_PRIORITY_PREEMPTED] = {"jobs_priority_preempted", "jobs",
					    METRIC_SCOPE_ALL | METRIC_SCOPE_WORKLOAD,
					    "running jobs kube-scheduler's priority preemption "
					    "evicted"},
	[METRIC_JOBS_SCALED_DOWN] = {"jobs_scaled_down", "jobs",
				     METRIC_SCOPE_ALL | METRIC_SCOPE_WORKLOAD,
				     "running jobs the Cluster Autoscaler's scale-down evicted"},
	[METRIC_JOBS_SUBMITTED] = {"jobs_submitted", "jobs",
				   METRIC_SCOPE_ALL | METRIC_SCOPE_WORKLOAD, "jobs that arrived"},
	[METRIC_JOBS_UNFINISHED] = {"jobs_unfinished", "jobs",
				    METRIC_SCOPE_ALL | METRIC_SCOPE_WORKLOAD,
				    "jobs neither completed nor failed at the end"},
	[METRIC_JOBS_WAITING] = {"jobs_waiting", "jobs", METRIC_SCOPE_ALL | METRIC_SCOPE_WORKLOAD,
				 "jobs still waiting at the end of the run"},
	[METRIC_KV_TRANSFER_GB] = {"kv_transfer_gb", "gb", METRIC_SCOPE_WORKLOAD,
				   "GB of KV cache sent from prefill to decode workers"},
	[METRIC_KV_TRANSFER_MEAN_S] = {"kv_transfer_mean_s", "s", METRIC_SCOPE_WORKLOAD,
				       "mean KV transfer time from the end of the prefill"},
	[METRIC_KV_TRANSFER_P50_S] = {"kv_transfer_p50_s", "s", METRIC_SCOPE_WORKLOAD,
				      "median KV transfer time"},
	[METRIC_KV_TRANSFER_P99_S] = {"kv_transfer_p99_s", "s", METRIC_SCOPE_WORKLOAD,
				      "99th percentile KV transfer time"},
	[METRIC_KV_TRANSFERS] = {"kv_transfers", "count", METRIC_SCOPE_WORKLOAD,
				 "KV caches sent from prefill to decode workers"},
	[METRIC_MAKESPAN_S] = {"makespan_s", "s", METRIC_SCOPE_ALL | METRIC_SCOPE_WORKLOAD,
			       "first arrival to last completion"},
	[METRIC_NODE_HOURS] = {"node_hours", "node_hours", METRIC_SCOPE_POOL,
			       "node-hours billed, from launch to removal"},
	[METRIC_NODES_ADDED] = {"nodes_added", "nodes", METRIC_SCOPE_POOL,
				"nodes launched (scale-ups and spot replacements)"},
	[METRIC_NODES_PEAK] = {"nodes_peak", "nodes", METRIC_SCOPE_POOL,
			       "most Ready nodes at once"},
	[METRIC_OOM_KILLS] = {"oom_kills", "kills", METRIC_SCOPE_ALL | METRIC_SCOPE_WORKLOAD,
			      "pods killed for overflowing GPU memory"},
	[METRIC_PEAK_ALLOCATED_GPUS] = {"peak_allocated_gpus", "gpus",
					METRIC_SCOPE_ALL | METRIC_SCOPE_POOL |
						METRIC_SCOPE_WORKLOAD | METRIC_SCOPE_SERVICE,
					"max over time of GPUs allocated"},
	[METRIC_PEAK_DEMAND_GPUS] =
		{"peak_demand_gpus", "gpus", METRIC_SCOPE_ALL | METRIC_SCOPE_WORKLOAD,
		 "max over time of GPUs requested by work arrived and not finished"},
	[METRIC_PODS_SCHEDULED] = {"pods_scheduled", "pods", METRIC_SCOPE_ALL,
				   "pods placed (inflation experiment)"},
	[METRIC_PODS_TRACE] = {"pods_trace", "pods", METRIC_SCOPE_ALL,
			       "pods of the trace (inflation experiment)"},
	[METRIC_PREEMPTIONS] = {"preemptions", "count",
				METRIC_SCOPE_ALL | METRIC_SCOPE_WORKLOAD | METRIC_SCOPE_SERVICE,
				"sequences an inference server preempted"},
	[METRIC_PREFILL_COST] =
		{"prefill_cost", METRIC_MONEY, METRIC_SCOPE_WORKLOAD,
		 "a disaggregated workload's prefill GPU-hours at the pools' prices"},
	[METRIC_PREFILL_DUTY_CYCLE_PCT] =
		{"prefill_duty_cycle_pct", "pct", METRIC_SCOPE_WORKLOAD,
		 "share of the prefill role's serving time in iterations, %"},
	[METRIC_PREFILL_GPU_HOURS] = {"prefill_gpu_hours", "gpu_hours", METRIC_SCOPE_WORKLOAD,
				      "GPU-hours the prefill role served"},
	[METRIC_PREFILL_GPUS] = {"prefill_gpus", "gpus", METRIC_SCOPE_WORKLOAD,
				 "GPUs of the prefill role"},
	[METRIC_PROVISIONING_WAIT_S] = {"provisioning_wait_s", "s", METRIC_SCOPE_POOL,
					"pod-seconds pending while nodes for them provisioned"},
	[METRIC_QUEUE_GOAL_S] = {"queue_goal_s", "s", METRIC_SCOPE_WORKLOAD,
				 "the workload's queue p95 goal"},
	[METRIC_QUEUE_TIME_MAX_S] = {"queue_time_max_s", "s",
				     METRIC_SCOPE_ALL | METRIC_SCOPE_WORKLOAD,
				     "longest wait from arrival to start"},
	[METRIC_QUEUE_TIME_MEAN_S] = {"queue_time_mean_s", "s",
				      METRIC_SCOPE_ALL | METRIC_SCOPE_WORKLOAD,
				      "mean wait from arrival to start"},
	[METRIC_QUEUE_TIME_P50_S] = {"queue_time_p50_s", "s",
				     METRIC_SCOPE_ALL | METRIC_SCOPE_WORKLOAD,
				     "median wait from arrival to start"},
	[METRIC_QUEUE_TIME_P95_S] = {"queue_time_p95_s", "s",
				     METRIC_SCOPE_ALL | METRIC_SCOPE_WORKLOAD,
				     "95th percentile wait from arrival to start"},
	[METRIC_QUEUE_TIME_P99_S] = {"queue_time_p99_s", "s",
				     METRIC_SCOPE_ALL | METRIC_SCOPE_WORKLOAD,
				     "99th percentile wait from arrival to start"},
	[METRIC_REPLICA_WAIT_MAX_S] = {"replica_wait_max_s", "s", METRIC_SCOPE_WORKLOAD,
				       "longest an inference replica waited to be placed"},
	[METRIC_REPLICAS_EVICTED] = {"replicas_evicted", "count", METRIC_SCOPE_WORKLOAD,
				     "inference replicas whose node was taken away"},
	[METRIC_REQUEST_QUEUE_MEAN_S] = {"request_queue_mean_s", "s",
					 METRIC_SCOPE_ALL | METRIC_SCOPE_WORKLOAD |
						 METRIC_SCOPE_SERVICE,
					 "mean wait of a request for a batch slot"},
	[METRIC_REQUESTS_COMPLETED] = {"requests_completed", "requests",
				       METRIC_SCOPE_ALL | METRIC_SCOPE_WORKLOAD |
					       METRIC_SCOPE_SERVICE,
				       "requests served"},
	[METRIC_REQUESTS_REJECTED] = {"requests_rejected", "requests",
				      METRIC_SCOPE_ALL | METRIC_SCOPE_WORKLOAD |
					      METRIC_SCOPE_SERVICE,
				      "requests refused"},
	[METRIC_REQUESTS_SUBMITTED] = {"requests_submitted", "requests",
				       METRIC_SCOPE_ALL | METRIC_SCOPE_WORKLOAD |
					       METRIC_SCOPE_SERVICE,
				       "requests that arrived"},
	[METRIC_REQUESTS_UNFINISHED] = {"requests_unfinished", "requests",
					METRIC_SCOPE_ALL | METRIC_SCOPE_WORKLOAD |
						METRIC_SCOPE_SERVICE,
					"requests not served at the end"},
	[METRIC_SCALE_DOWNS] = {"scale_downs", "nodes", METRIC_SCOPE_POOL,
				"nodes removed as unneeded"},
	[METRIC_SCALE_UPS] = {"scale_ups", "count", METRIC_SCOPE_POOL, "scale-up decisions"},
	[METRIC_SLO_ATTAINMENT_PCT] = {"slo_attainment_pct", "pct",
				       METRIC_SCOPE_ALL | METRIC_SCOPE_WORKLOAD |
					       METRIC_SCOPE_SERVICE,
				       "requests within the SLO, %"},
	[METRIC_SLO_MET] = {"slo_met", "bool",
			    METRIC_SCOPE_ALL | METRIC_SCOPE_WORKLOAD | METRIC_SCOPE_SERVICE,
			    "whether the SLO held"},
	[METRIC_SLO_TPOT_S] = {"slo_tpot_s", "s", METRIC_SCOPE_WORKLOAD | METRIC_SCOPE_SERVICE,
			       "the SLO's bound on the time per output token"},
	[METRIC_SLO_TTFT_S] = {"slo_ttft_s", "s", METRIC_SCOPE_WORKLOAD | METRIC_SCOPE_SERVICE,
			       "the SLO's bound on the time to first token"},
	[METRIC_SM_ACTIVE_PCT] = {"sm_active_pct", "pct", METRIC_SCOPE_ALL | METRIC_SCOPE_POOL,
				  "time average of SM activity against capacity, %"},
	[METRIC_SPOT_INTERRUPTIONS] = {"spot_interruptions", "count",
				       METRIC_SCOPE_ALL | METRIC_SCOPE_POOL,
				       "spot interruption notices"},
	[METRIC_TARGET_SHAPES] = {"target_shapes", "shapes", METRIC_SCOPE_ALL,
				  "pod shapes of the target workload (inflation experiment)"},
	[METRIC_THROUGHPUT_RPS] = {"throughput_rps", "rps",
				   METRIC_SCOPE_ALL | METRIC_SCOPE_WORKLOAD | METRIC_SCOPE_SERVICE,
				   "requests served per second"},
	[METRIC_TOKENIZE_WAIT_MEAN_S] = {"tokenize_wait_mean_s", "s",
					 METRIC_SCOPE_ALL | METRIC_SCOPE_WORKLOAD |
						 METRIC_SCOPE_SERVICE,
					 "mean wait for the CPU tokenizer"},
	[METRIC_TOKENS_PER_S] = {"tokens_per_s", "tokens/s",
				 METRIC_SCOPE_ALL | METRIC_SCOPE_WORKLOAD | METRIC_SCOPE_SERVICE,
				 "output tokens per second"},
	[METRIC_TPOT_P50_S] = {"tpot_p50_s", "s",
			       METRIC_SCOPE_ALL | METRIC_SCOPE_WORKLOAD | METRIC_SCOPE_SERVICE,
			       "median time per output token"},
	[METRIC_TPOT_P95_S] = {"tpot_p95_s", "s",
			       METRIC_SCOPE_ALL | METRIC_SCOPE_WORKLOAD | METRIC_SCOPE_SERVICE,
			       "95th percentile time per output token"},
	[METRIC_TPOT_P99_S] = {"tpot_p99_s", "s",
			       METRIC_SCOPE_ALL | METRIC_SCOPE_WORKLOAD | METRIC_SCOPE_SERVICE,
			       "99th percentile time per output token"},
	[METRIC_TTFT_MEAN_S] = {"ttft_mean_s", "s",
				METRIC_SCOPE_ALL | METRIC_SCOPE_WORKLOAD | METRIC_SCOPE_SERVICE,
				"mean time to first token"},
	[METRIC_TTFT_P50_S] = {"ttft_p50_s", "s",
			       METRIC_SCOPE_ALL | METRIC_SCOPE_WORKLOAD | METRIC_SCOPE_SERVICE,
			       "median time to first token"},
	[METRIC_TTFT_P95_S] = {"ttft_p95_s", "s",
			       METRIC_SCOPE_ALL | METRIC_SCOPE_WORKLOAD | METRIC_SCOPE_SERVICE,
			       "95th percentile time to first token"},
	[METRIC_TTFT_P99_S] = {"ttft_p99_s", "s",
			       METRIC_SCOPE_ALL | METRIC_SCOPE_WORKLOAD | METRIC_SCOPE_SERVICE,
			       "99th percentile time to first token"},
	[METRIC_VERIFIED_RESULTS] = {"verified_results", "results",
				     METRIC_SCOPE_ALL | METRIC_SCOPE_WORKLOAD,
				     "verified jobs and requests"},
	[METRIC_VRAM_CAPACITY_GIB] = {"vram_capacity_gib", "GiB",
				      METRIC_SCOPE_ALL | METRIC_SCOPE_POOL,
				      "GPU memory in the pools"},
	[METRIC_VRAM_USED_PCT] = {"vram_used_pct", "pct", METRIC_SCOPE_ALL | METRIC_SCOPE_POOL,
				  "time average of framebuffer used against capacity, %"},
	[METRIC_WAIT_SO_FAR_MAX_S] = {"wait_so_far_max_s", "s",
				      METRIC_SCOPE_ALL | METRIC_SCOPE_WORKLOAD,
				      "longest wait so far of the jobs still waiting at the end"},
};
_Static_assert(sizeof metric_defs / sizeof metric_defs[0] == METRIC_COUNT,
	       "a metric id without its row");

const struct metric_def *metric_def(enum metric_id id)
{
	assert((unsigned)id < METRIC_COUNT && metric_defs[id].name);
	return &metric_defs[id];
}

const char *metric_name(enum metric_id id) { return metric_def(id)->name; }

int metric_of(const char *name)
{
	for (int i = 0; name && i < METRIC_COUNT; i++)
		if (metric_defs[i].name && !strcmp(metric_defs[i].name, name))
			return i;
	return -1;
}

const char *metric_closest(const char *name)
{
	const char *names[METRIC_COUNT];
	for (size_t i = 0; i < METRIC_COUNT; i++)
		names[i] = metric_defs[i].name ? metric_defs[i].name : "";
	const char *close = ytree_closest(name, names, METRIC_COUNT);
	for (size_t i = 0; !close && i < METRIC_COUNT; i++)
		if (*names[i] && !strncmp(names[i], name, strlen(name)))
			close = names[i];
	return close;
}
