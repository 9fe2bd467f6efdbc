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
 * The caller owns and frees *rows and the summary's shapes.
 */
#ifndef GPUPLAN_TRACE_H
#define GPUPLAN_TRACE_H

#include "gpuplan/common.h"

#include <stdbool.h>
#include <stdio.h>

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

/* A distinct GPU count of a trace's jobs, and how many ask for it. */
struct trace_shape {
	int32_t gpus;
	int64_t jobs;
};

/* The file a trace was read from, to know it again: its device and inode,
 * size and modification time (ns). */
struct trace_file {
	uint64_t dev, ino;
	int64_t size, mtime_ns;
};

/* What the scenario knows of a trace without holding its rows: the rows
 * summed up in submit order (trace_summary_add), and the file. */
struct trace_summary {
	int32_t max_gpus;
	double duration_s; /* the rows' durations summed */
	sim_time first_submit, last_submit;
	int64_t deadlines;          /* rows with a deadline_s */
	struct trace_shape *shapes; /* the distinct GPU counts, first seen first */
	size_t n_shapes;
	struct trace_file file;
};

void trace_summary_add(struct trace_summary *s, const struct trace_job *row);
void trace_summary_free(struct trace_summary *s);

/*
 * Reads and checks a whole trace.  A long trace sorted by submit, as traces
 * usually are, is not kept: *rows is NULL, and a run reads it again as its
 * clock reaches the rows (trace_stream), so memory does not grow with the
 * trace.  Other traces come back in *rows, sorted (ties in file order): rows
 * out of submit order, and traces of at most TRACE_HELD_ROWS rows, which
 * would cost a run a file descriptor and a second reading for little.
 * *n_rows and *sum are filled either way.
 */
#define TRACE_HELD_ROWS 4096
int trace_read_csv(const char *path, struct srcloc ref, const struct trace_limits *lim,
		   struct trace_job **rows, size_t *n_rows, struct trace_summary *sum,
		   struct gp_err *err);

/* A sorted trace read row by row, checked as trace_read_csv checks it. */
struct trace_stream {
	FILE *f;
	char *buf;
	size_t cap;
	const char *path;
	struct trace_limits lim;
	int line;
	int ncols;
	size_t n;        /* rows read so far */
	sim_time submit; /* the last row's */
	bool sorted;     /* every row so far at or after the one before */
	size_t expected; /* the rows the trace had when the scenario read it */
};

/* Opens the trace again: an error (GP_ERUNTIME) when it cannot be read, or
 * is no longer the file `was` (another size or modification time). */
int trace_stream_open(struct trace_stream *s, const char *path, const struct trace_limits *lim,
		      size_t expected, const struct trace_file *was, struct gp_err *err);
/* The next row into *row, *got false at the end, where the file is closed.
 * Errors, for a file that changed since trace_read_csv read it and kept its
 * size and time: a row no longer valid (GP_EINPUT, at its line), more or
 * fewer rows, a row out of order (GP_ERUNTIME). */
int trace_stream_next(struct trace_stream *s, struct trace_job *row, bool *got, struct gp_err *err);
void trace_stream_close(struct trace_stream *s);

#endif
