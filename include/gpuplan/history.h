/*
 * history.h - the observed pods CSV of a twin (`history: {pods: ...}`,
 * docs/import.md "backtest"), which `import --history` writes and `backtest`
 * replays: one row per pod that existed in the history's period.
 *
 *   workload,namespace,pod,node,created_s,scheduled_s,finished_s,gpus,
 *   cpu_milli,memory_bytes,phase
 *
 * Times are seconds since the period's start (decimals allowed): created_s
 * may be negative (created before it); scheduled_s is empty when the pod was
 * never scheduled by its end, finished_s when it still ran then (censored).
 * gpus is the pod's request in its workload's unit (GPUs, MIG instances or
 * shared replicas), cpu_milli and memory_bytes its requests; phase is one of
 * Succeeded, Failed, Running, Pending, Deleted.  One header line (the columns
 * by name, in any order), `#` comment lines and blank lines.
 *
 * Cells may be quoted as RFC 4180 has it ("a,b", "" for a quote, line ends
 * inside quotes).  history_read_pods checks every row (a number where one is
 * expected, an end after the start, times within the period, a known phase)
 * and reports the first bad one as "PODS:LINE: error: ..." (GP_EINPUT), as
 * is a pod listed twice.  A pod scheduled before its creation (clocks of
 * different controllers) counts as scheduled when it was created.
 * Rows come back in file order; history_free_pods frees them and their
 * strings (one allocation per row).
 */
#ifndef GPUPLAN_HISTORY_H
#define GPUPLAN_HISTORY_H

#include "gpuplan/common.h"

#include <stdbool.h>
#include <stddef.h>

enum history_phase {
	HISTORY_SUCCEEDED,
	HISTORY_FAILED,
	HISTORY_RUNNING,
	HISTORY_PENDING,
	HISTORY_DELETED,
};

extern const char *const history_phase_names[5];

struct history_pod {
	const char *workload;
	const char *namespace_;
	const char *pod;
	const char *node; /* "" when unknown (never scheduled, or not recorded) */
	double created_s;
	double scheduled_s; /* NAN: never scheduled by the period's end */
	double finished_s;  /* NAN: still running at the period's end (censored) */
	int32_t gpus;
	double cpu_milli;
	double memory_bytes;
	enum history_phase phase;
	int32_t line; /* in the file, for messages */
};

/* Reads and checks the file at path for a period of span_s seconds (times
 * after it are refused; a little rounding, one second, is allowed); a file
 * that cannot be opened is reported at ref (where the scenario names it). */
int history_read_pods(const char *path, struct srcloc ref, double span_s, struct history_pod **pods,
		      size_t *n, struct gp_err *err);

void history_free_pods(struct history_pod *pods, size_t n);

#endif
