/*
 * report.h - what people read: the run summary table and the resolved
 * scenario that `check` prints.  Writes to the stream it is given.
 */
#ifndef GPUPLAN_REPORT_H
#define GPUPLAN_REPORT_H

#include "gpuplan/results.h"
#include "gpuplan/scenario.h"

#include <stdio.h>

/* The summary of a run: the four meanings of utilization, queue time, peak
 * demand and deadlines, for every scope. */
void report_summary(FILE *out, const struct scenario *sc, const struct results *r, const char *db,
		    int64_t run_id);

/* The resolved pools, workloads, queues and scheduler of a scenario. */
void report_scenario(FILE *out, const struct scenario *sc);

/* "1h30m", "45s", "2d3h" for a duration. */
void report_duration(sim_time t, char *buf, size_t len);

/* Dollars: cents from a dollar up, three significant digits below (a verified
 * request costs 0.000218, not 0.00), "-" for NAN.  Returns buf. */
const char *report_money(double v, char *buf, size_t len);

/* How money in currency `code` (ISO 4217; NULL, "" or USD: the dollar) is
 * marked, before an amount and in a heading: "$" ("$5.41", "$/verified"),
 * else the code ("EUR 5.41", "EUR/verified"). */
const char *report_currency(const char *code);

/* A heading that starts with "$" (a money column, "$/verified") in the
 * currency of `code`, into buf. */
const char *report_money_title(const char *title, const char *code, char *buf, size_t len);

/* Formats of report_cell besides a number of decimals. */
#define REPORT_GPUS  (-1) /* a GPU count: whole, or to 0.01 when a share ("0.5", not "0") */
#define REPORT_MONEY (-2) /* report_money, or "-" when the scenario has no prices */

/* A summary cell as the CLI's table shows it: v with `format` decimals, or a
 * REPORT_ format; "-" for NAN.  Returns buf. */
const char *report_cell(char *buf, size_t len, double v, int format, bool prices);

/* The diagnosis' findings in rank order (diagnose.h), or a line saying the
 * run has none, with the figures that say so; part of report_summary. */
void report_findings(FILE *out, const struct results *r);

/* What `gpuplan backtest` prints besides the results' rows. */
struct report_backtest_info {
	size_t observed, replayed; /* pods in the history, pods the replay held */
	double tolerance;          /* a fraction: 0.25 */
	const char *db;
	int64_t run_id;
};

/* The backtest of twin (report_backtest.c): the history's figures beside the
 * replay's per scope, the ones past the tolerance, what it could not model. */
void report_backtest(FILE *out, const struct scenario *twin, const struct results *r,
		     const struct report_backtest_info *info);

/* A gap in words, with its evidence (buf of at least 512 bytes); its short
 * name by kind. */
const char *report_gap_text(const struct backtest_gap *g, char *buf, size_t len);
extern const char *const report_gap_names[GAP_GANG + 1];

/* A relative error as a signed whole percent ("+12%", "0%"), "-" for NAN. */
const char *report_error_pct(double error, char *buf, size_t len);

#endif
