/*
 * requests.h - request traces of inference workloads: the Azure LLM trace
 * reader and the tile period of a replay (docs/inference.md).
 *
 * The streams that emit the requests are arrivals' (arrivals.h).
 *
 * requests_read_azure reads TIMESTAMP,ContextTokens,GeneratedTokens (the
 * header is optional, CRLF or LF, the last line may lack its end).  Errors
 * are "TRACE:LINE: error: ..." (GP_EINPUT); a file that cannot be opened is
 * reported at ref, where the scenario names it.  The caller frees *rows.
 * The rows of the last trace read, up to 2^20 of them, are kept (by path,
 * limits and the file's device, inode, size and modification time), so
 * loading a scenario again (a search's probes) copies them instead of
 * parsing the file again.
 */
#ifndef GPUPLAN_REQUESTS_H
#define GPUPLAN_REQUESTS_H

#include "gpuplan/common.h"

/* The most tokens a prompt or output may have: far above any model's
 * context, and keeps sums exact. */
#define REQUESTS_MAX_TOKENS 10000000

/* One row of a request trace (azure: TIMESTAMP,ContextTokens,GeneratedTokens). */
struct request_row {
	sim_time at;    /* since the trace's first row, before speedup */
	int32_t prompt; /* >= 1 */
	int32_t output; /* >= 1 (a row with 0 generated tokens counts 1) */
};

/* Reads an Azure LLM trace.  max_rows: the request limit (GPUPLAN_MAX_JOBS);
 * max_span: the longest time from the first request to the last. */
int requests_read_azure(const char *path, struct srcloc ref, int64_t max_rows, sim_time max_span,
			struct request_row **rows, size_t *n_rows, struct gp_err *err);

/* The tile period of rows (span + mean gap; 1 s for a single row). */
sim_time requests_period(const struct request_row *rows, size_t n);

#endif
