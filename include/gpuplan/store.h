/*
 * store.h - the results database (SQLite, DESIGN.md section 6).
 *
 * store_open creates the schema if needed and sets WAL mode and a busy
 * timeout, so several processes can append to one database.  store_write_run
 * writes one run (runs, params, metrics, jobs, timeseries rows) in a single
 * transaction: either the whole run is there or none of it.  Runs append.
 *
 * The schema is every table of DESIGN.md section 6 with declared column types
 * (times in seconds as REAL, NULL where a time never happened, flags as 0/1
 * INTEGER); tables the results object has no rows for yet (requests,
 * pending_reasons, allocations, findings) are created empty.  The schema
 * version is the database's `PRAGMA user_version` (STORE_SCHEMA_VERSION); a
 * database written by a newer schema is refused rather than half-understood.
 *
 * A struct store owns one SQLite connection: use it from one thread at a
 * time; other processes open their own.  store_close releases it.  Every
 * error is GP_ERUNTIME with a message that names the database path.
 */
#ifndef GPUPLAN_STORE_H
#define GPUPLAN_STORE_H

#include "gpuplan/results.h"
#include "gpuplan/scenario.h"

#define STORE_SCHEMA_VERSION 1

struct store;

/* Opens (creating the file, its parent folders and the schema if needed).
 * A file that is not a SQLite database is an error, and is left untouched. */
int store_open(const char *path, struct store **out, struct gp_err *err);

/* Writes the run; *run_id (may be NULL) receives its id.  Rows are inserted
 * in the order of the results arrays.  On error nothing of the run is left. */
int store_write_run(struct store *st, const struct scenario *sc, const struct results *r,
		    int64_t *run_id, struct gp_err *err);

/* Number of runs in the database. */
int store_run_count(struct store *st, int64_t *n, struct gp_err *err);

/* Closes the connection and frees st (NULL is fine). */
void store_close(struct store *st);

#endif
