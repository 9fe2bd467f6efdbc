/*
 * json.h - runs of the results database as one JSON document on stdout
 * (`gpuplan run --json`, `gpuplan advise --json`), for scripts and
 * notebooks: json.load(subprocess.run(...).stdout) and the figures are there.
 *
 * A run's document:
 *   {"db": PATH, "run_id": N,
 *    "run": {name, scenario_path, scenario_sha256, seed, ..., status, start},
 *    "params": {KEY: VALUE, ...},            the --set overrides, as given
 *    "summary": {METRIC: VALUE, ...},        the metrics of scope all
 *    "metrics": {SCOPE: {METRIC: VALUE, ...}, ...},  every scope, all included
 *    "units": {METRIC: UNIT, ...},
 *    "findings": [{rank, step, finding, evidence, kind, scope, fix, ...}, ...]}
 * advise's document:
 *   {"db": PATH, "base": <the base run's document>,
 *    "alternatives": [{rank, alternative, overrides, alternative_run_id, meets,
 *                      peak_demand_gpus, queue_time_p95_s, ...}, ...],
 *    "recommendation": <the first alternative when it meets every deadline
 *                       and SLO, else null>}
 * run --json reads its rows back from the database with whatever columns it
 * has (store_each_row); advise --json writes from the structs it wrote the
 * store from (the base run's scenario and results, the advice rows), column
 * for column as the store binds them, so the two give the same bytes for a
 * run written by this version.  A metric that does not apply (NULL,
 * NaN) is null.  Written with jsonw.h: strings escaped per RFC 8259, bytes
 * that are not UTF-8 as U+FFFD, numbers exact.
 */
#ifndef GPUPLAN_JSON_H
#define GPUPLAN_JSON_H

#include "gpuplan/report.h"
#include "gpuplan/store.h"

#include <stdio.h>

/* The document of run run_id (the latest when <= 0); db is the path shown. */
int json_write_run(FILE *out, struct store *st, const char *db, int64_t run_id, struct gp_err *err);

/* `backtest --json`: {db, run_id, scenario, observed_pods, replayed_pods,
 * tolerance, rows: [{scope, metric, observed, simulated, error, within}],
 * within_tolerance, could_not_model: [{kind, pods, text}]}. */
void json_write_backtest(FILE *out, const struct scenario *twin, const struct results *r,
			 const struct report_backtest_info *info);

/* What advise's document is written from: the base run as it was written
 * (its id, scenario and results) and the advice table's rows, ranked. */
struct json_advice {
	int64_t base_run;
	const struct scenario *sc;
	const struct results *r;
	const struct store_advice *rows;
	size_t n_rows;
	const char *const *keep; /* advise --keep's paths; none: no "kept" key */
	size_t n_keep;
	size_t kept_out; /* the alternatives they left out */
};

/* The document of advise's ranking, from the structs the store was written
 * from (no read-back): the same bytes as reading the rows back would give. */
void json_write_advice(FILE *out, const char *db, const struct json_advice *a);

#endif
