/*
 * html.h - a run of the results database as one self-contained HTML page
 * (`gpuplan report DB --html PATH`).
 *
 * The page holds the charts people would rather look at than read, drawn as
 * inline SVG by the small plotting helpers in html.c: no script, no style
 * sheet or font from the network, so it opens anywhere and renders the same
 * in every browser.  Sections, with the ids tests and readers can rely on:
 *   #backtest-table     a backtest run's figures, observed beside simulated,
 *                       tr.over where past 25% (backtest.h)
 *   #findings           the diagnosis in rank order (li.finding, one per
 *                       finding), or p#healthy when the run has none
 *   #summary-table      the figures of every scope, as the run summary
 *   svg#chart-capacity  capacity, demand and allocation over time
 *   svg#chart-utilization  the four meanings of "utilization" side by side:
 *                       allocation, engine activity, SM activity, VRAM (%)
 *   svg#chart-pool-N    allocation and activity of pool N (several pools)
 *   svg#chart-queue     pending pods per workload over time (stacked)
 *   svg#chart-reasons   pending pod-hours per kube-scheduler message
 *   svg#chart-latency   TTFT, TPOT and e2e percentiles (inference runs)
 *   svg#chart-latency-time  TTFT p50/p99 by arrival window (with requests rows)
 *   svg#chart-loadtest  TTFT p99 against request rate, over the runs of the
 *                       same scenario that set a request rate (search --max)
 * The output is a function of the database rows: the same run gives the
 * same bytes.
 */
#ifndef GPUPLAN_HTML_H
#define GPUPLAN_HTML_H

#include "gpuplan/store.h"

#include <stdio.h>

/* Writes the page of run run_id (the latest when <= 0) to out.  Errors from
 * the database are GP_ERUNTIME, a missing run GP_EINPUT. */
int html_report(FILE *out, struct store *st, int64_t run_id, struct gp_err *err);

/* Writes the page to path, replacing it only once the page is whole; path
 * must not be the database db itself (outfile.h). */
int html_report_file(struct store *st, const char *db, int64_t run_id, const char *path,
		     struct gp_err *err);

#endif
