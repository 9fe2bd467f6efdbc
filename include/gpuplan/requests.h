/*
 * requests.h - the requests of an inference workload: synthetic arrival
 * processes and the replay of Azure LLM traces (docs/inference.md).
 *
 * Synthetic: inter-arrival times are exponential (poisson) or gamma with
 * shape k and the same mean (gamma-bursty: k < 1 gives bursts, the
 * coefficient of variation is 1/sqrt(k)); prompt and output lengths are
 * drawn from their distributions and rounded to whole tokens, at least 1.
 * Draw order per request is fixed (gap, prompt, output), from one GSL stream
 * per workload seeded from the scenario seed and the workload's name, so the
 * same scenario and seed give the same requests.
 *
 * Traces: rows are replayed at (tile x period + at) / speedup after `from`,
 * tile = 0 .. repeat-1.  A tile's period is the trace's span plus one mean
 * gap, so consecutive tiles neither overlap nor leave a hole.  Rows are read
 * once; tiles are generated lazily, so a million requests cost no more
 * memory than the trace.
 *
 * requests_read_azure reads TIMESTAMP,ContextTokens,GeneratedTokens (the
 * header is optional, CRLF or LF, the last line may lack its end).  Errors
 * are "TRACE:LINE: error: ..." (GP_EINPUT); a file that cannot be opened is
 * reported at ref, where the scenario names it.  The caller frees *rows.
 */
#ifndef GPUPLAN_REQUESTS_H
#define GPUPLAN_REQUESTS_H

#include "gpuplan/scenario.h"

#include <gsl/gsl_rng.h>

struct new_request {
	int32_t prompt;   /* tokens, >= 1 */
	int32_t output;   /* tokens, >= 1 */
};

struct request_stream {
	const struct workload_spec *w;
	sim_time horizon;  /* 0: none */
	gsl_rng *rng;      /* synthetic only */
	sim_time next;     /* time of the next arrival; SIM_NEVER when done */
	int64_t emitted;
	size_t row;        /* trace: next row of the current tile */
	int32_t tile;
};

/* Sets up the stream of inference workload w (w->inference != NULL). */
void request_stream_init(struct request_stream *st, const struct scenario *sc,
			 const struct workload_spec *w);
void request_stream_free(struct request_stream *st);

/* If a request arrives at `now` (the stream's next time), fills *rq and
 * advances the stream; false when none is due now. */
bool request_stream_take(struct request_stream *st, sim_time now, struct new_request *rq);

/* Requests the stream will emit: count, rows x repeat, or rate x span up
 * to the horizon for an open synthetic stream (an estimate, for sizing). */
int64_t requests_expected(const struct workload_spec *w, sim_time horizon);

/* Reads an Azure LLM trace.  max_rows: the request limit (GPUPLAN_MAX_JOBS). */
int requests_read_azure(const char *path, struct srcloc ref, int64_t max_rows,
			struct request_row **rows, size_t *n_rows, struct gp_err *err);

/* The tile period of rows (span + mean gap; 1 s for a single row). */
sim_time requests_period(const struct request_row *rows, size_t n);

#endif
