/*
 * openmetrics.h - a run of the results database as OpenMetrics text
 * (`gpuplan report DB --openmetrics`), so that
 *   promtool tsdb create-blocks-from openmetrics run.om DATA_DIR
 * backfills a simulated run into Prometheus and the dashboards people
 * already have show it next to production.
 *
 * Every sample carries a timestamp: the scenario's wall-clock start (the
 * run's `start`) plus the end of its timeseries window, in seconds with
 * milliseconds.  A gauge's value is the window's time-weighted mean (what a
 * scrape at the end of a window of `output.step` would average to); a
 * counter or histogram holds everything up to the window's end.  Samples of
 * one series are in time order, and families are never interleaved
 * (OpenMetrics requires both; promtool refuses out-of-order samples).
 *
 * Families, all labelled scenario="<name>" and run="<run id>":
 *   gpuplan_gpus_capacity             pools         GPUs
 *   gpuplan_gpus_allocated            pools, workloads
 *   gpuplan_gpus_demand               workloads     GPUs requested by work that has arrived
 *   gpuplan_gpu_engine_active_ratio   pools, workloads  (DCGM_FI_PROF_GR_ENGINE_ACTIVE:
 *                                     of the pool's GPUs, of the workload's allocated GPUs)
 *   gpuplan_gpu_sm_active_ratio       pools, workloads  (DCGM_FI_PROF_SM_ACTIVE, likewise)
 *   gpuplan_gpu_memory_used_bytes     pools, workloads
 *   gpuplan_pods_pending              workloads
 *   gpuplan_pods_running              pools, workloads
 * with pool="<name>" or workload="<name>" (the all scope is left out: it is
 * the sum over the pools, and would be counted twice by sum()).  Inference
 * workloads with a model also appear under vLLM's own names (vLLM
 * vllm/engine/metrics.py), labelled model_name="<catalog model>",
 * simulated="true", workload, scenario and run:
 *   vllm:num_requests_running, vllm:num_requests_waiting   gauges
 *   vllm:gpu_cache_usage_perc                              gauge, 0..1
 *   vllm:num_preemptions (sample vllm:num_preemptions_total)  counter
 *   vllm:time_to_first_token_seconds, vllm:time_per_output_token_seconds,
 *   vllm:e2e_request_latency_seconds    histograms with vLLM's buckets, from
 *                                       the requests table (output.requests)
 * A TTFT is observed at the first token, a request's TPOT once per output
 * token after the first (so _count and _sum equal vLLM's exactly; each
 * observation is the request's mean), an e2e latency at the last token.
 * The text ends with "# EOF".  The same run gives the same bytes.
 *
 * It is written as a stream (store.h, "Streaming a run"): memory is one
 * series (a workload's requests, for its histograms), whatever the run's
 * size; a write error stops the export at once.
 */
#ifndef GPUPLAN_OPENMETRICS_H
#define GPUPLAN_OPENMETRICS_H

#include "gpuplan/store.h"

#include <stdio.h>

/* Writes run run_id (the latest when <= 0).  Errors from the database are
 * GP_ERUNTIME; a missing run, or one without a start time, GP_EINPUT. */
int openmetrics_write(FILE *out, struct store *st, int64_t run_id, struct gp_err *err);

#endif
