/*
 * import_hist.h - what the files of `gpuplan import --history` share: the
 * streaming reader of Prometheus API responses (import_prom.c) and the
 * learner (import_history.c, import_learn.c).
 *
 * import_prom_read streams one response (`{"status":"success","data":{"resultType":
 * "vector"|"matrix","result":[...]}}`) through libyaml's event API, which
 * reads JSON: no document tree is built, so a month of a large cluster costs
 * the memory of one series at a time.  Each item of data.result is handed
 * to the callback as a struct prom_series, valid during the call only.
 * With two processors libyaml runs ahead on a parser thread (a bounded ring
 * of batches); the callback still runs on the caller's thread, in the file's
 * order, and sees what GPUPLAN_THREADS=1 shows it.
 * Errors name the file, line and column and the JSON path
 * ("pod_created.json:3:40: error: .data.result[2].value[1]: ...").
 */
#ifndef GPUPLAN_IMPORT_HIST_H
#define GPUPLAN_IMPORT_HIST_H

#include "gpuplan/common.h"

#include <stddef.h>

struct prom_series {
	const char *file;
	size_t index;       /* .data.result[index] */
	struct srcloc loc;  /* where the item starts */
	const char **names; /* metric labels */
	const char **values;
	struct srcloc *locs; /* per label: its value's */
	size_t n_labels;
	bool has_value; /* "value": [t, "v"] (an instant vector) */
	double t, v;
	struct srcloc value_loc;
	const double *ts, *vs; /* "values": [[t, "v"], ...] (a matrix) */
	size_t n_points;
};

/* Returns GP_OK to go on, an error status (err filled) to stop. */
typedef int (*prom_fn)(void *ctx, const struct prom_series *s, struct gp_err *err);

int import_prom_read(const char *path, prom_fn fn, void *ctx, struct gp_err *err);

/* The value of label name, or NULL. */
const char *import_prom_label(const struct prom_series *s, const char *name);

/* "FILE:L:C: error: .data.result[i].metric.NAME: MESSAGE" at label name
 * (NULL: at the item; "value": at its value). */
int import_prom_error(struct gp_err *err, const struct prom_series *s, const char *name,
		      const char *fmt, ...) GP_PRINTF(4, 5);

#endif
