/*
 * html_int.h - what html.c and html_reasons.c share: the run read back as
 * struct page, the chart geometry and the drawing helpers (see html.c).
 * Not part of the public interface.
 */
#ifndef GPUPLAN_HTML_INT_H
#define GPUPLAN_HTML_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "gpuplan/html.h"
#include "gpuplan/report.h"

#define CHART_W  960
#define CHART_H  300
#define MARGIN_L 64 /* y tick labels and the axis title */
#define MARGIN_R 20
#define MARGIN_T 34 /* the legend */
#define MARGIN_B 40 /* x tick labels and the axis title */

/* One scope's windows. */
struct scope_series {
	const char *name;
	bool has_capacity; /* all and pools */
	size_t n;
	double *start, *end; /* hours since the scenario start */
	const struct ts_row **row;
};

struct page {
	struct store_run run;
	int64_t epoch; /* of the scenario start; 0 when unknown */
	struct metric *metrics;
	size_t n_metrics;
	struct ts_row *ts;
	size_t n_ts;
	struct pending_reason *reasons;
	size_t n_reasons;
	struct finding *findings;
	size_t n_findings;
	struct store_load_point *load;
	size_t n_load;
	struct store_latency *lat;
	size_t n_lat;
	struct scope_series *scopes;
	size_t n_scopes;
	struct backtest_row *backtest; /* a backtest run's figures; none otherwise */
	size_t n_backtest;
};

/* html.c: text and drawing */
void html_esc(FILE *out, const char *s);
double html_nice_top(double max);
void html_svg_open_sized(FILE *out, const char *id, const char *title, int height);
void html_svg_close(FILE *out, const char *caption);
void html_legend(FILE *out, const char *const *labels, const char *const *colors,
		 const bool *dashed, size_t n);

/* html_reasons.c: the chart of pending reasons */
void html_chart_reasons(FILE *out, const struct page *pg);

#endif
