/*
 * store.h - the results database (SQLite, DESIGN.md section 6).
 *
 * store_open creates the schema if needed and sets WAL mode and a busy
 * timeout, so several processes can append to one database.  store_write_run
 * writes one run (runs, params, metrics, jobs, timeseries rows) in a single
 * transaction: either the whole run is there or none of it.  Runs append.
 */
#ifndef GPUPLAN_STORE_H
#define GPUPLAN_STORE_H

#include "gpuplan/results.h"
#include "gpuplan/scenario.h"

struct store;

/* Opens (creating the file, its parent folder and the schema if needed). */
int store_open(const char *path, struct store **out, struct gp_err *err);

/* Writes the run; *run_id receives its id. */
int store_write_run(struct store *st, const struct scenario *sc, const struct results *r,
		    int64_t *run_id, struct gp_err *err);

void store_close(struct store *st);

#endif
