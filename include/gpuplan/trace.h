/*
 * trace.h - batch job traces in CSV, for `arrival: {trace: PATH, format: csv}`
 * (docs/scenario.md).
 *
 * A trace is one job per line: submit_s,duration_s,gpus[,deadline_s], seconds
 * since the scenario start (deadline_s absolute, an empty cell = none).  The
 * header line is optional; lines starting with '#' (and the rest of a line
 * after '#') and blank lines are skipped.  Rows come back sorted by submit,
 * ties in file order.  Errors are "TRACE:LINE: error: ..." (GP_EINPUT); a file
 * that cannot be opened is reported at ref, where the scenario names it.
 * The caller owns and frees *rows.
 */
#ifndef GPUPLAN_TRACE_H
#define GPUPLAN_TRACE_H

#include "gpuplan/common.h"

/* One row of a batch trace (csv: submit_s,duration_s,gpus[,deadline_s]). */
struct trace_job {
	sim_time submit;
	sim_time duration;
	sim_time deadline; /* absolute; SIM_NEVER when absent */
	int32_t gpus;
	int32_t line;         /* in the trace file, for messages */
	sim_time trace_queue; /* openb: the trace's own wait, scheduled - creation;
				    * SIM_NEVER when the trace has none */
};

struct trace_limits {
	int32_t max_gpus; /* the widest node of any pool: wider jobs can never run */
	int64_t max_rows; /* the job limit (GPUPLAN_MAX_JOBS) */
};

int trace_read_csv(const char *path, struct srcloc ref, const struct trace_limits *lim,
		   struct trace_job **rows, size_t *n_rows, struct gp_err *err);

#endif
