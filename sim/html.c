/*
 * html.c - a run as one self-contained HTML page (see html.h).
 *
 * Reading: the run's rows come back through store.h's read functions into
 * struct page; timeseries rows are split per scope into windows [start,
 * end) in hours since the scenario start (a window ends where the next
 * begins, the last one at the end of the run).
 *
 * Plotting: every chart is one <svg> of CHART_W x CHART_H user units with
 * a plot area inside fixed margins.  Window means are drawn as steps (the
 * value holds over its window), which is what they are; the y axis starts at
 * zero and ends at a "nice" number (1, 2 or 5 times a power of ten), the
 * time axis has clock ticks ("13:00") for runs of up to two days and day
 * ticks beyond.  Latencies span milliseconds to minutes, so their axis is
 * logarithmic.  Numbers are printed with fixed precision: same rows, same
 * bytes.
 */
#include "gpuplan/html.h"

#include "gpuplan/outfile.h"
#include "gpuplan/report.h"

#include "gpuplan/units.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "html_int.h"

static const char *const palette[] = {"#2563eb", "#dc2626", "#16a34a", "#9333ea",
				      "#ea580c", "#0891b2", "#ca8a04", "#db2777"};
#define N_PALETTE (sizeof palette / sizeof palette[0])

/* --- the run, read back ---------------------------------------------------- */

/* Metric id of scope as the database holds it; NAN: absent, or it does not apply. */
static double metric(const struct page *pg, const char *scope, enum metric_id id)
{
	const char *name = metric_name(id);
	for (size_t i = 0; i < pg->n_metrics; i++)
		if (!strcmp(pg->metrics[i].scope, scope) && !strcmp(pg->metrics[i].name, name))
			return pg->metrics[i].value;
	return NAN;
}

static struct scope_series *scope_of(struct page *pg, const char *name)
{
	for (size_t i = 0; i < pg->n_scopes; i++)
		if (!strcmp(pg->scopes[i].name, name))
			return &pg->scopes[i];
	pg->scopes = gp_xrealloc(pg->scopes, (pg->n_scopes + 1) * sizeof *pg->scopes);
	struct scope_series *s = &pg->scopes[pg->n_scopes++];
	*s = (struct scope_series){.name = name,
				   .has_capacity = !isnan(metric(pg, name, METRIC_CAPACITY_GPUS))};
	return s;
}

/* Splits the timeseries rows into per-scope windows, in the order scopes appear. */
static void split_scopes(struct page *pg)
{
	for (size_t i = 0; i < pg->n_ts; i++) {
		struct scope_series *s = scope_of(pg, pg->ts[i].scope);
		s->row = gp_xrealloc(s->row, (s->n + 1) * sizeof *s->row);
		s->start = gp_xrealloc(s->start, (s->n + 1) * sizeof *s->start);
		s->end = gp_xrealloc(s->end, (s->n + 1) * sizeof *s->end);
		s->row[s->n] = &pg->ts[i];
		s->start[s->n] = sim_seconds(pg->ts[i].t) / 3600;
		s->n++;
	}
	double last = pg->run.sim_seconds / 3600;
	for (size_t k = 0; k < pg->n_scopes; k++) {
		struct scope_series *s = &pg->scopes[k];
		for (size_t i = 0; i < s->n; i++)
			s->end[i] = i + 1 < s->n ? s->start[i + 1] : fmax(last, s->start[i] + 1e-9);
	}
}

static int page_read(struct page *pg, struct store *st, int64_t run_id, struct gp_err *err)
{
	memset(pg, 0, sizeof *pg);
	int rc = store_run_info(st, run_id, &pg->run, err);
	int64_t id = pg->run.run_id;
	if (!rc)
		rc = store_read_metrics(st, id, &pg->metrics, &pg->n_metrics, err);
	if (!rc)
		rc = store_read_timeseries(st, id, &pg->ts, &pg->n_ts, err);
	if (!rc)
		rc = store_read_pending_reasons(st, id, &pg->reasons, &pg->n_reasons, err);
	if (!rc)
		rc = store_read_findings(st, id, &pg->findings, &pg->n_findings, err);
	if (!rc)
		rc = store_read_load_curve(st, id, &pg->load, &pg->n_load, err);
	if (!rc)
		rc = store_read_latencies(st, id, &pg->lat, &pg->n_lat, err);
	if (!rc)
		rc = store_read_backtest(st, id, &pg->backtest, &pg->n_backtest, err);
	if (!rc && units_rfc3339(pg->run.start, &pg->epoch))
		pg->epoch = 0;
	if (!rc)
		split_scopes(pg);
	return rc;
}

static void page_free(struct page *pg)
{
	for (size_t i = 0; i < pg->n_scopes; i++) {
		free(pg->scopes[i].start);
		free(pg->scopes[i].end);
		free(pg->scopes[i].row);
	}
	free(pg->scopes);
	store_free_metrics(pg->metrics, pg->n_metrics);
	store_free_timeseries(pg->ts, pg->n_ts);
	store_free_pending_reasons(pg->reasons, pg->n_reasons);
	store_free_findings(pg->findings, pg->n_findings);
	free(pg->load);
	store_free_latencies(pg->lat, pg->n_lat);
	store_free_backtest(pg->backtest, pg->n_backtest);
}

/* --- text ------------------------------------------------------------------ */

/* Writes s with &, <, >, " and ' escaped. */
void html_esc(FILE *out, const char *s)
{
	for (; s && *s; s++) {
		switch (*s) {
		case '&': fputs("&amp;", out); break;
		case '<': fputs("&lt;", out); break;
		case '>': fputs("&gt;", out); break;
		case '"': fputs("&quot;", out); break;
		case '\'': fputs("&#39;", out); break;
		default: fputc(*s, out);
		}
	}
}

/* --- plotting -------------------------------------------------------------- */

struct plot {
	FILE *out;
	double x0, x1, y0, y1; /* data ranges */
	bool log_y;
};

static double px(const struct plot *p, double x)
{
	double w = CHART_W - MARGIN_L - MARGIN_R;
	return MARGIN_L + (p->x1 > p->x0 ? (x - p->x0) / (p->x1 - p->x0) : 0) * w;
}

static double py(const struct plot *p, double y)
{
	double h = CHART_H - MARGIN_T - MARGIN_B, f;
	if (p->log_y)
		f = (log10(fmax(y, p->y0)) - log10(p->y0)) / (log10(p->y1) - log10(p->y0));
	else
		f = p->y1 > p->y0 ? (y - p->y0) / (p->y1 - p->y0) : 0;
	return CHART_H - MARGIN_B - fmin(1, fmax(0, f)) * h;
}

/* At most this many ticks on an axis, whatever the data. */
#define MAX_TICKS 60

/* 1, 2 or 5 times a power of ten, near range / target. */
static double nice_step(double range, int target)
{
	double raw = range / target, mag = pow(10, floor(log10(raw))), f = raw / mag;
	return (f <= 1 ? 1 : f <= 2 ? 2 : f <= 5 ? 5 : 10) * mag;
}

/* The top of a linear axis from the data's largest value. */
double html_nice_top(double max)
{
	if (!(max > 0))
		return 1;
	double step = nice_step(max * 1.05, 5);
	return ceil(max * 1.05 / step) * step;
}

/* A figure with a visible title around an svg of CHART_W x height. */
void html_svg_open_sized(FILE *out, const char *id, const char *title, int height)
{
	fputs("<figure><h3 class=\"chart-title\">", out);
	html_esc(out, title);
	fprintf(out,
		"</h3><svg id=\"%s\" class=\"chart\" xmlns=\"http://www.w3.org/2000/svg\" "
		"viewBox=\"0 0 %d %d\" width=\"%d\" height=\"%d\" role=\"img\" "
		"aria-labelledby=\"%s-title\"><title id=\"%s-title\">",
		id, CHART_W, height, CHART_W, height, id, id);
	html_esc(out, title);
	fprintf(out, "</title>\n<rect x=\"0\" y=\"0\" width=\"%d\" height=\"%d\" fill=\"#fff\"/>\n",
		CHART_W, height);
}

static void svg_open(FILE *out, const char *id, const char *title)
{
	html_svg_open_sized(out, id, title, CHART_H);
}

void html_svg_close(FILE *out, const char *caption)
{
	fputs("</svg><figcaption>", out);
	html_esc(out, caption);
	fputs("</figcaption></figure>\n", out);
}

/* The y axis: grid lines, tick labels and its title. */
static void y_axis(const struct plot *p, const char *title)
{
	FILE *out = p->out;
	if (p->log_y) {
		int n = 0; /* bounded: values read from a database may be anything */
		for (double v = p->y0; v > 0 && v <= p->y1 * 1.0001 && n++ < MAX_TICKS; v *= 10) {
			double y = py(p, v);
			fprintf(out,
				"<line class=\"grid\" x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\"/>"
				"<text class=\"tick\" x=\"%d\" y=\"%.1f\" text-anchor=\"end\">%g</text>\n",
				MARGIN_L, y, CHART_W - MARGIN_R, y, MARGIN_L - 6, y + 4, v);
		}
	} else {
		double step = nice_step(p->y1 - p->y0, 5);
		int n = 0;
		for (double v = p->y0; step > 0 && v <= p->y1 + step * 1e-6 && n++ < MAX_TICKS;
		     v += step) {
			double y = py(p, v);
			fprintf(out,
				"<line class=\"grid\" x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\"/>"
				"<text class=\"tick\" x=\"%d\" y=\"%.1f\" text-anchor=\"end\">%g</text>\n",
				MARGIN_L, y, CHART_W - MARGIN_R, y, MARGIN_L - 6, y + 4, v);
		}
	}
	fprintf(out,
		"<text class=\"axis-title\" transform=\"translate(14 %d) rotate(-90)\" "
		"text-anchor=\"middle\">",
		(MARGIN_T + CHART_H - MARGIN_B) / 2);
	html_esc(out, title);
	fputs("</text>\n", out);
}

/* "Tue 3 Nov" for the day that starts `days` whole days after the epoch. */
static void day_name(int64_t days, char *buf, size_t len)
{
	static const char *const wd[] = {"Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"};
	static const char *const mon[] = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
					  "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
	int64_t y;
	int m, d;
	units_civil_from_days(days, &y, &m, &d);
	snprintf(buf, len, "%s %d %s", wd[((days % 7) + 7 + 3) % 7], d, mon[m - 1]);
}

/* Day markers on an axis longer than a day: a dotted line at each midnight of
 * the scenario clock, labelled with its weekday and date ("day N" when the
 * start is unknown) above the plot, under the legend; at most MAX_DAY_MARKS of them,
 * every k-th day beyond. */
#define MAX_DAY_MARKS 16
#define DAY_LABEL_W   58 /* "Wed 30 Sep" at 11px */

static void day_marks(const struct plot *p, int64_t epoch)
{
	double span = p->x1 - p->x0;
	if (!(span > 24) || !isfinite(span))
		return;
	int64_t base = ((epoch % 86400) + 86400) % 86400, day0 = (epoch - base) / 86400;
	double first = floor((p->x0 * 3600 + (double)base) / 86400 + 1e-9); /* days since day0 */
	double every = ceil(span / 24 / MAX_DAY_MARKS);
	for (double k = first; k * 24 - (double)base / 3600 <= p->x1 + 1e-9; k += every) {
		double h = k * 24 - (double)base / 3600;
		bool partial = h < p->x0 - 1e-9; /* the day the axis starts in: its name only */
		double x = px(p, partial ? p->x0 : h);
		char name[32];
		if (epoch)
			day_name(day0 + (int64_t)k, name, sizeof name);
		else
			snprintf(name, sizeof name, "day %.0f", k);
		if (!partial)
			fprintf(p->out,
				"<line class=\"day\" x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\"/>",
				x, MARGIN_T - 12, x, CHART_H - MARGIN_B);
		/* a name needs about DAY_LABEL_W px: none that would run off the
		 * chart or into the next day's */
		if (x + 3 + DAY_LABEL_W <= CHART_W &&
		    !(partial && px(p, h + 24 * every) - x < DAY_LABEL_W + 6))
			fprintf(p->out, "<text class=\"day-label\" x=\"%.1f\" y=\"%d\">%s</text>\n",
				x + 3, MARGIN_T - 3, name);
	}
}

/* The time axis in hours since the start: clock ticks for up to two days,
 * then days; day markers past a day (day_marks). */
static void time_axis(const struct plot *p, int64_t epoch)
{
	static const double steps[] = {
		10.0 / 3600, 30.0 / 3600, 1.0 / 60, 2.0 / 60, 5.0 / 60, 10.0 / 60, 0.25, 0.5, 1,
		2,           3,           6,        12,       24,       48,        168,  336, 720};
	double span = p->x1 - p->x0, step = steps[0];
	for (size_t i = 0; i < sizeof steps / sizeof steps[0] && span / step > 10; i++)
		step = steps[i];
	if (span / step > 10) /* longer than months: whole days, 1, 2 or 5 times a power of 10 */
		step = 24 * nice_step(span / 24, 10);
	if (!isfinite(span) || !(step > 0) || !isfinite(step))
		step = INFINITY;              /* a span no chart can show: no ticks */
	bool clock = span <= 48 || step < 24; /* ticks within days read as clock times */
	int base = (int)(((epoch % 86400) + 86400) % 86400); /* seconds after midnight */
	int n = 0;
	day_marks(p, epoch);
	for (double h = ceil(p->x0 / step - 1e-9) * step; h <= p->x1 + 1e-9 && n++ < MAX_TICKS;
	     h += step) {
		double x = px(p, h);
		long s = ((long)llround(h * 3600) + base) % 86400;
		fprintf(p->out,
			"<line class=\"tickline\" x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\"/>", x,
			CHART_H - MARGIN_B, x, CHART_H - MARGIN_B + 5);
		if (clock && step < 1.0 / 60)
			fprintf(p->out,
				"<text class=\"tick\" x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">"
				"%02ld:%02ld:%02ld</text>\n",
				x, CHART_H - MARGIN_B + 18, s / 3600, s / 60 % 60, s % 60);
		else if (clock)
			fprintf(p->out,
				"<text class=\"tick\" x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">"
				"%02ld:%02ld</text>\n",
				x, CHART_H - MARGIN_B + 18, s / 3600, s / 60 % 60);
		else
			fprintf(p->out,
				"<text class=\"tick\" x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">"
				"day %ld</text>\n",
				x, CHART_H - MARGIN_B + 18, (long)floor(h / 24));
	}
	fprintf(p->out, "<line class=\"axis\" x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\"/>\n",
		MARGIN_L, CHART_H - MARGIN_B, CHART_W - MARGIN_R, CHART_H - MARGIN_B);
	fprintf(p->out,
		"<text class=\"axis-title\" x=\"%d\" y=\"%d\" text-anchor=\"middle\">%s</text>\n",
		(MARGIN_L + CHART_W - MARGIN_R) / 2, CHART_H - 4,
		clock ? "time of day (scenario clock)" : "days since the start");
}

/* One legend entry per label, left to right along the top. */
void html_legend(FILE *out, const char *const *labels, const char *const *colors,
		 const bool *dashed, size_t n)
{
	double x = MARGIN_L;
	for (size_t i = 0; i < n; i++) {
		fprintf(out,
			"<g class=\"legend-item\"><line x1=\"%.1f\" y1=\"14\" x2=\"%.1f\" y2=\"14\" "
			"stroke=\"%s\" stroke-width=\"3\"%s/><text class=\"legend\" x=\"%.1f\" "
			"y=\"18\">",
			x, x + 18, colors[i],
			dashed && dashed[i] ? " stroke-dasharray=\"5 3\"" : "", x + 24);
		html_esc(out, labels[i]);
		fputs("</text></g>\n", out);
		x += 40 + 7.2 * (double)strlen(labels[i]);
	}
}

/* A value held over each window: a stepped line. */
static void step_line(const struct plot *p, const struct scope_series *s, const double *y,
		      const char *color, bool dashed)
{
	if (!s->n)
		return;
	fprintf(p->out,
		"<path class=\"series\" fill=\"none\" stroke=\"%s\" stroke-width=\"2\"%s d=\"M%.1f %.1f",
		color, dashed ? " stroke-dasharray=\"6 4\"" : "", px(p, s->start[0]), py(p, y[0]));
	for (size_t i = 0; i < s->n; i++) {
		if (i)
			fprintf(p->out, "V%.1f", py(p, y[i]));
		fprintf(p->out, "H%.1f", px(p, s->end[i]));
	}
	fputs("\"/>\n", p->out);
}

/* The band between lower and upper, both stepped. */
static void step_band(const struct plot *p, const struct scope_series *s, const double *lower,
		      const double *upper, const char *color)
{
	if (!s->n)
		return;
	fprintf(p->out,
		"<path class=\"band\" fill=\"%s\" fill-opacity=\"0.35\" stroke=\"%s\" "
		"stroke-width=\"1\" d=\"M%.1f %.1f",
		color, color, px(p, s->start[0]), py(p, upper[0]));
	for (size_t i = 0; i < s->n; i++) {
		if (i)
			fprintf(p->out, "V%.1f", py(p, upper[i]));
		fprintf(p->out, "H%.1f", px(p, s->end[i]));
	}
	for (size_t i = s->n; i-- > 0;) {
		fprintf(p->out, "V%.1f", py(p, lower[i]));
		fprintf(p->out, "H%.1f", px(p, s->start[i]));
	}
	fputs("Z\"/>\n", p->out);
}

/* A plot over a scope's windows, y from 0 to top. */
static struct plot time_plot(FILE *out, const struct scope_series *s, double top)
{
	return (struct plot){out,  s->n ? s->start[0] : 0, s->n ? s->end[s->n - 1] : 1, 0, top,
			     false};
}

/* --- charts ---------------------------------------------------------------- */

enum field {
	F_CAPACITY,
	F_ALLOCATED,
	F_DEMAND,
	F_ENGINE,
	F_SM,
	F_VRAM,
	F_PENDING,
	F_REQ_RUNNING,
	F_REQ_WAITING,
	F_KV_USAGE,
	F_PROVISIONING
};

static double field(const struct ts_row *r, enum field f)
{
	switch (f) {
	case F_CAPACITY: return r->gpus_capacity;
	case F_ALLOCATED: return r->gpus_allocated;
	case F_DEMAND: return r->gpus_demand;
	case F_ENGINE: return r->engine_active;
	case F_SM: return r->sm_active;
	case F_VRAM: return r->vram_used_gib;
	case F_PENDING: return r->pending;
	case F_REQ_RUNNING: return r->requests_running;
	case F_REQ_WAITING: return r->requests_waiting;
	case F_KV_USAGE: return r->kv_cache_usage;
	case F_PROVISIONING: return r->gpus_capacity + r->gpus_provisioning;
	}
	return 0;
}

/* The field of every window, times scale (NAN reads as 0). */
static double *column(const struct scope_series *s, enum field f, double scale)
{
	double *y = gp_xcalloc(s->n + 1, sizeof *y);
	for (size_t i = 0; i < s->n; i++) {
		double v = field(s->row[i], f) * scale;
		y[i] = isnan(v) ? 0 : v;
	}
	return y;
}

static double max_of(const double *y, size_t n)
{
	double m = 0;
	for (size_t i = 0; i < n; i++)
		m = fmax(m, y[i]);
	return m;
}

static void chart_capacity(FILE *out, const struct page *pg, const struct scope_series *all)
{
	double *cap = column(all, F_CAPACITY, 1), *alloc = column(all, F_ALLOCATED, 1);
	double *demand = column(all, F_DEMAND, 1), *zero = gp_xcalloc(all->n + 1, sizeof *zero);
	double *launched = column(all, F_PROVISIONING, 1);
	bool provisioning = false; /* some node was launched and not Ready yet */
	for (size_t i = 0; i < all->n && !provisioning; i++)
		provisioning = all->row[i]->gpus_provisioning > 0;
	double top = html_nice_top(fmax(max_of(launched, all->n), max_of(demand, all->n)));
	struct plot p = time_plot(out, all, top);
	svg_open(out, "chart-capacity", "Capacity, demand and allocation (GPUs)");
	y_axis(&p, "GPUs");
	time_axis(&p, pg->epoch);
	step_band(&p, all, zero, alloc, palette[0]);
	step_line(&p, all, demand, palette[1], false);
	if (provisioning)
		step_line(&p, all, launched, palette[3], true);
	step_line(&p, all, cap, "#111827", true);
	static const char *const labels[] = {"allocated", "demand (arrived, not finished)",
					     "capacity", "capacity + provisioning"};
	const char *colors[] = {palette[0], palette[1], "#111827", palette[3]};
	static const bool dashed[] = {false, false, true, true};
	html_legend(out, labels, colors, dashed, provisioning ? 4 : 3);
	html_svg_close(
		out, provisioning ? "Demand above capacity is work that waits; allocation below "
				    "capacity with demand above it is work that cannot use what "
				    "is free; capacity counts Ready nodes, provisioning the nodes "
				    "the autoscaler launched that are not Ready yet."
				  : "Demand above capacity is work that waits; allocation below "
				    "capacity with demand above it is work that cannot use what "
				    "is free.");
	free(cap), free(alloc), free(demand), free(zero), free(launched);
}

/* vLLM's server gauges over time (scope all): requests running and waiting
 * (vllm:num_requests_running, vllm:num_requests_waiting), and the share of
 * KV-cache blocks in use (vllm:gpu_cache_usage_perc). */
static void chart_servers(FILE *out, const struct page *pg, const struct scope_series *all)
{
	bool kv = false;
	for (size_t i = 0; i < all->n; i++)
		kv |= !isnan(all->row[i]->kv_cache_usage);
	if (!kv)
		return; /* no inference server ran */
	double *run = column(all, F_REQ_RUNNING, 1), *wait = column(all, F_REQ_WAITING, 1);
	struct plot p =
		time_plot(out, all, html_nice_top(fmax(max_of(run, all->n), max_of(wait, all->n))));
	svg_open(out, "chart-servers", "Inference servers: requests running and waiting");
	y_axis(&p, "requests");
	time_axis(&p, pg->epoch);
	step_line(&p, all, run, palette[0], false);
	step_line(&p, all, wait, palette[1], false);
	static const char *const labels[] = {"running (in the batch)", "waiting (queued)"};
	const char *colors[] = {palette[0], palette[1]};
	html_legend(out, labels, colors, NULL, 2);
	html_svg_close(out, "Time-weighted means per window, every replica together: vLLM's "
			    "num_requests_running and num_requests_waiting.");
	double *usage = column(all, F_KV_USAGE, 100);
	p = time_plot(out, all, 100);
	svg_open(out, "chart-kv-cache", "KV cache in use (% of the serving replicas' blocks)");
	y_axis(&p, "% of blocks");
	time_axis(&p, pg->epoch);
	step_line(&p, all, usage, palette[2], false);
	html_svg_close(out,
		       "vLLM's gpu_cache_usage_perc; near 100% the server preempts sequences and "
		       "TTFT grows.");
	free(run), free(wait), free(usage);
}

/* Allocation, engine, SM and VRAM as % of the scope's capacity. */
static void chart_utilization(FILE *out, const struct page *pg, const struct scope_series *s,
			      const char *id, const char *title)
{
	double *cap = column(s, F_CAPACITY, 1);
	double vram_cap = metric(pg, s->name, METRIC_VRAM_CAPACITY_GIB);
	double gib_per_gpu =
		vram_cap > 0 && cap[s->n ? s->n - 1 : 0] > 0 ? vram_cap / cap[s->n - 1] : NAN;
	enum field fs[] = {F_ALLOCATED, F_ENGINE, F_SM, F_VRAM};
	static const char *const labels[] = {"allocated", "engine active", "SM active",
					     "VRAM used"};
	const char *colors[] = {palette[0], palette[1], palette[2], palette[3]};
	struct plot p = time_plot(out, s, 100);
	svg_open(out, id, title);
	y_axis(&p, "% of capacity");
	time_axis(&p, pg->epoch);
	size_t shown = isnan(gib_per_gpu) ? 3 : 4;
	double *zero = gp_xcalloc(s->n + 1, sizeof *zero);
	for (size_t k = 0; k < shown; k++) {
		double *y = column(s, fs[k], 1);
		for (size_t i = 0; i < s->n; i++) {
			double c = cap[i] * (fs[k] == F_VRAM ? gib_per_gpu : 1);
			y[i] = c > 0 ? 100 * y[i] / c : 0;
		}
		if (k == 0) /* the allocation under the activity it allows */
			step_band(&p, s, zero, y, colors[k]);
		else
			step_line(&p, s, y, colors[k], k == 2);
		free(y);
	}
	free(zero);
	static const bool dashed[] = {false, false, true, false};
	html_legend(out, labels, colors, dashed, shown);
	html_svg_close(
		out,
		"Four meanings of utilization: GPUs allocated to pods, GR engine active and SM "
		"active (DCGM), and framebuffer used, each as a share of the GPUs there are.");
	free(cap);
}

static void chart_queue(FILE *out, const struct page *pg)
{
	const struct scope_series *first = NULL;
	double *lower = NULL, *upper = NULL;
	const char *labels[N_PALETTE], *colors[N_PALETTE];
	size_t n = 0;
	for (size_t k = 0; k < pg->n_scopes; k++) {
		const struct scope_series *s = &pg->scopes[k];
		if (s->has_capacity || !s->n)
			continue;
		if (!first) {
			first = s;
			lower = gp_xcalloc(s->n + 1, sizeof *lower);
			upper = gp_xcalloc(s->n + 1, sizeof *upper);
		}
		for (size_t i = 0; i < s->n && i < first->n; i++)
			upper[i] += field(s->row[i], F_PENDING);
	}
	if (!first) {
		fputs("<p class=\"none\">No workload windows in this run.</p>\n", out);
		return;
	}
	struct plot p = time_plot(out, first, html_nice_top(max_of(upper, first->n)));
	memset(upper, 0, first->n * sizeof *upper);
	svg_open(out, "chart-queue", "Pending pods by workload");
	y_axis(&p, "pods pending");
	time_axis(&p, pg->epoch);
	for (size_t k = 0; k < pg->n_scopes; k++) {
		const struct scope_series *s = &pg->scopes[k];
		if (s->has_capacity || !s->n)
			continue;
		for (size_t i = 0; i < first->n; i++)
			upper[i] = lower[i] + (i < s->n ? field(s->row[i], F_PENDING) : 0);
		const char *color = palette[n % N_PALETTE];
		step_band(&p, first, lower, upper, color);
		memcpy(lower, upper, first->n * sizeof *lower);
		if (n < N_PALETTE)
			labels[n] = s->name, colors[n] = color;
		n++;
	}
	html_legend(out, labels, colors, NULL, n < N_PALETTE ? n : N_PALETTE);
	html_svg_close(out, "Pods waiting to start, stacked by workload (mean over each window).");
	free(lower), free(upper);
}

/* The log axis's decades around [lo, hi] (lo > 0). */
static void log_range(struct plot *p, double lo, double hi)
{
	p->log_y = true;
	p->y0 = pow(10, floor(log10(lo)));
	p->y1 = pow(10, ceil(log10(hi * 1.01)));
	if (p->y1 <= p->y0)
		p->y1 = p->y0 * 10;
}

/* Extends [*lo, *hi] by the positive values of metric name in every scope. */
static void slo_range(const struct page *pg, enum metric_id id, double *lo, double *hi)
{
	const char *name = metric_name(id);
	for (size_t i = 0; i < pg->n_metrics; i++)
		if (!strcmp(pg->metrics[i].name, name) && pg->metrics[i].value > 0)
			*lo = fmin(*lo, pg->metrics[i].value),
			*hi = fmax(*hi, pg->metrics[i].value);
}

/* The SLO lines of a chart: each service's bound, dashed across the plot;
 * their labels go to the legend row above the plot (slo_legend), so no
 * label ever lies over a bar, a point or another label. */
#define MAX_SLO_KEYS 8

struct slo_keys {
	char text[MAX_SLO_KEYS][96];
	const char *label[MAX_SLO_KEYS], *color[MAX_SLO_KEYS];
	bool dashed[MAX_SLO_KEYS];
	size_t n, more;
};

static void slo_lines(const struct plot *p, const struct page *pg, enum metric_id id,
		      const char *what, const char *color, struct slo_keys *keys)
{
	const char *name = metric_name(id);
	for (size_t i = 0; i < pg->n_metrics; i++) {
		const struct metric *m = &pg->metrics[i];
		if (strcmp(m->name, name) || !(m->value > 0))
			continue;
		double y = py(p, m->value);
		fprintf(p->out,
			"<line class=\"slo\" x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" "
			"stroke=\"%s\" stroke-width=\"1.5\" stroke-dasharray=\"6 4\"/>\n",
			MARGIN_L, y, CHART_W - MARGIN_R, y, color);
		if (keys->n == MAX_SLO_KEYS) {
			keys->more++;
			continue;
		}
		size_t k = keys->n++;
		snprintf(keys->text[k], sizeof keys->text[k], "%s SLO %.4g s (%s)", what, m->value,
			 m->scope);
		keys->label[k] = keys->text[k];
		keys->color[k] = color;
		keys->dashed[k] = true;
	}
}

/* The legend row: the chart's own entries, then its SLOs, as many as fit the
 * width ("+N more SLOs" for the rest). */
static void slo_legend(FILE *out, const char *const *labels, const char *const *colors, size_t n,
		       const struct slo_keys *keys)
{
	const char *l[16], *c[16];
	bool d[16];
	size_t m = 0;
	double width = MARGIN_L, room = CHART_W - MARGIN_R - 90; /* keep the "+N more" */
	for (size_t i = 0; i < n + keys->n && m < 16; i++) {
		const char *label = i < n ? labels[i] : keys->label[i - n];
		double need = 40 + 7.2 * (double)strlen(label);
		if (width + need > room && i >= n)
			break;
		l[m] = label;
		c[m] = i < n ? colors[i] : keys->color[i - n];
		d[m++] = i >= n;
		width += need;
	}
	html_legend(out, l, c, d, m);
	size_t left = n + keys->n - m + keys->more;
	if (left)
		fprintf(out, "<text class=\"legend\" x=\"%.1f\" y=\"18\">+%zu more SLO%s</text>\n",
			width, left, left == 1 ? "" : "s");
}

/* Bars of the latency percentiles of scope all, on a log axis, with
 * every service's TTFT and TPOT SLO. */
static void chart_latency(FILE *out, const struct page *pg)
{
	static const enum metric_id ids[] = {METRIC_TTFT_P50_S, METRIC_TTFT_P99_S,
					     METRIC_TPOT_P50_S, METRIC_TPOT_P99_S,
					     METRIC_E2E_P50_S,  METRIC_E2E_P99_S};
	static const char *const labels[] = {"TTFT p50", "TTFT p99", "TPOT p50",
					     "TPOT p99", "e2e p50",  "e2e p99"};
	double v[6], lo = INFINITY, hi = 0;
	for (size_t i = 0; i < 6; i++) {
		v[i] = metric(pg, "all", ids[i]);
		if (v[i] > 0)
			lo = fmin(lo, v[i]), hi = fmax(hi, v[i]);
	}
	if (!(hi > 0))
		return;
	slo_range(pg, METRIC_SLO_TTFT_S, &lo, &hi);
	slo_range(pg, METRIC_SLO_TPOT_S, &lo, &hi);
	struct plot p = {out, 0, 6, 0, 0, true};
	log_range(&p, lo, hi);
	svg_open(out, "chart-latency", "Latency percentiles (seconds, log scale)");
	y_axis(&p, "seconds (log)");
	double slot = (CHART_W - MARGIN_L - MARGIN_R) / 6.0;
	for (size_t i = 0; i < 6; i++) {
		double x = MARGIN_L + slot * (double)i + slot * 0.2,
		       top = py(&p, v[i] > 0 ? v[i] : p.y0);
		fprintf(out,
			"<rect class=\"bar\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" "
			"fill=\"%s\"/><text class=\"tick\" x=\"%.1f\" y=\"%.1f\" "
			"text-anchor=\"middle\">%.4g s</text><text class=\"tick\" x=\"%.1f\" y=\"%d\" "
			"text-anchor=\"middle\">%s</text>\n",
			x, top, slot * 0.6, CHART_H - MARGIN_B - top, palette[i / 2],
			x + slot * 0.3, top - 4, v[i], x + slot * 0.3, CHART_H - MARGIN_B + 18,
			labels[i]);
	}
	struct slo_keys keys = {.n = 0};
	slo_lines(&p, pg, METRIC_SLO_TTFT_S, "TTFT", palette[0], &keys);
	slo_lines(&p, pg, METRIC_SLO_TPOT_S, "TPOT", palette[1], &keys);
	slo_legend(out, NULL, NULL, 0, &keys);
	html_svg_close(
		out, "Time to first token, time per output token and end-to-end latency of every "
		     "request of the run: median and 99th percentile; dashed: each service's SLO.");
}

static int by_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

/* The q-quantile of sorted v[0..n) (nearest rank). */
static double quantile(const double *v, size_t n, double q)
{
	size_t i = (size_t)ceil(q * (double)n);
	return v[i ? i - 1 : 0];
}

/* The q-quantile of the first m values of buf, sorted in place; 0 when m = 0. */
static double window_quantile(double *buf, size_t m, double q)
{
	if (!m)
		return 0;
	qsort(buf, m, sizeof *buf, by_double);
	return quantile(buf, m, q);
}

/* TTFT p50 and p99 and TPOT p99 of the requests arriving in each window of
 * scope all, on a log axis (TTFT spans milliseconds to minutes, TPOT is
 * milliseconds), with every service's TTFT and TPOT SLO as a dashed line. */
static void chart_latency_time(FILE *out, const struct page *pg, const struct scope_series *all)
{
	if (!pg->n_lat || !all->n)
		return;
	double *y[3];
	for (size_t k = 0; k < 3; k++)
		y[k] = gp_xcalloc(all->n, sizeof *y[k]);
	double *ttft = gp_xcalloc(pg->n_lat, sizeof *ttft),
	       *tpot = gp_xcalloc(pg->n_lat, sizeof *tpot);
	double lo = INFINITY, hi = 0;
	size_t j = 0;
	for (size_t i = 0; i < all->n; i++) {
		size_t m = 0, t = 0;
		for (; j < pg->n_lat && pg->lat[j].arrival_s / 3600 < all->end[i]; j++) {
			if (!isnan(pg->lat[j].ttft_s))
				ttft[m++] = pg->lat[j].ttft_s;
			if (!isnan(pg->lat[j].tpot_s))
				tpot[t++] = pg->lat[j].tpot_s;
		}
		y[0][i] = window_quantile(ttft, m, 0.5);
		y[1][i] = window_quantile(ttft, m, 0.99);
		y[2][i] = window_quantile(tpot, t, 0.99);
		for (size_t k = 0; k < 3; k++)
			if (y[k][i] > 0)
				lo = fmin(lo, y[k][i]), hi = fmax(hi, y[k][i]);
	}
	slo_range(pg, METRIC_SLO_TTFT_S, &lo, &hi);
	slo_range(pg, METRIC_SLO_TPOT_S, &lo, &hi);
	if (hi > 0) {
		struct plot p = time_plot(out, all, 1);
		log_range(&p, lo, hi);
		svg_open(
			out, "chart-latency-time",
			"Time to first token and per output token by arrival window (seconds, log scale)");
		y_axis(&p, "seconds (log)");
		time_axis(&p, pg->epoch);
		const char *colors[] = {palette[0], palette[1], palette[2]};
		for (size_t k = 0; k < 3; k++)
			step_line(&p, all, y[k], colors[k], false);
		struct slo_keys keys = {.n = 0};
		slo_lines(&p, pg, METRIC_SLO_TTFT_S, "TTFT", palette[1], &keys);
		slo_lines(&p, pg, METRIC_SLO_TPOT_S, "TPOT", palette[2], &keys);
		static const char *const labels[] = {"TTFT p50", "TTFT p99", "TPOT p99"};
		slo_legend(out, labels, colors, 3, &keys);
		html_svg_close(
			out,
			"Percentiles of the requests that arrived in each window (requests that "
			"never got a first token are left out); dashed: each service's SLO.");
	}
	for (size_t k = 0; k < 3; k++)
		free(y[k]);
	free(ttft), free(tpot);
}

/* TTFT p99 against the request rate, over the runs of the load test. */
static void chart_loadtest(FILE *out, const struct page *pg)
{
	if (pg->n_load < 2)
		return;
	double xmax = pg->load[pg->n_load - 1].rate, ymax = 0;
	for (size_t i = 0; i < pg->n_load; i++)
		ymax = fmax(ymax, pg->load[i].ttft_p99_s);
	struct plot p = {out, 0, html_nice_top(xmax), 0, html_nice_top(ymax), false};
	svg_open(out, "chart-loadtest", "Load test: TTFT p99 against request rate");
	y_axis(&p, "TTFT p99 (s)");
	double step = nice_step(p.x1, 8);
	int n = 0;
	for (double x = 0; step > 0 && x <= p.x1 + step * 1e-6 && n++ < MAX_TICKS; x += step)
		fprintf(out,
			"<text class=\"tick\" x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">%g</text>\n",
			px(&p, x), CHART_H - MARGIN_B + 18, x);
	fprintf(out,
		"<text class=\"axis-title\" x=\"%d\" y=\"%d\" text-anchor=\"middle\">requests per "
		"second</text>\n<path class=\"series\" fill=\"none\" stroke=\"%s\" stroke-width=\"2\" d=\"",
		(MARGIN_L + CHART_W - MARGIN_R) / 2, CHART_H - 4, palette[0]);
	for (size_t i = 0; i < pg->n_load; i++)
		fprintf(out, "%s%.1f %.1f", i ? "L" : "M", px(&p, pg->load[i].rate),
			py(&p, pg->load[i].ttft_p99_s));
	fputs("\"/>\n", out);
	for (size_t i = 0; i < pg->n_load; i++) {
		bool me = pg->load[i].run_id == pg->run.run_id;
		fprintf(out,
			"<circle class=\"point\" cx=\"%.1f\" cy=\"%.1f\" r=\"%d\" fill=\"%s\"><title>run "
			"%lld: %.4g/s, TTFT p99 %.4g s, SLO %.1f%%</title></circle>\n",
			px(&p, pg->load[i].rate), py(&p, pg->load[i].ttft_p99_s), me ? 6 : 4,
			me ? palette[1] : palette[0], (long long)pg->load[i].run_id,
			pg->load[i].rate, pg->load[i].ttft_p99_s, pg->load[i].slo_attainment_pct);
	}
	html_svg_close(out,
		       "Each point is a run of this scenario at one request rate (gpuplan search "
		       "--max probes); the larger red point is this run.");
}

/* --- sections -------------------------------------------------------------- */

static const char style[] =
	"body{font-family:system-ui,-apple-system,'Segoe UI',Roboto,sans-serif;margin:24px auto;"
	"max-width:1000px;color:#111827;background:#f9fafb;padding:0 16px}"
	"h1{font-size:26px;margin:0 0 4px}h2{font-size:19px;margin:28px 0 8px;border-bottom:1px solid "
	"#e5e7eb;padding-bottom:4px}.meta{color:#4b5563;margin:0}"
	"figure{margin:8px 0 16px;background:#fff;border:1px solid #e5e7eb;border-radius:6px;padding:8px}"
	"figcaption{font-size:13px;color:#4b5563;margin-top:4px}svg.chart{width:100%;height:auto;"
	"display:block}.grid{stroke:#e5e7eb;stroke-width:1}.axis,.tickline{stroke:#6b7280;stroke-width:1}"
	".tick{font-size:12px;fill:#374151}.axis-title{font-size:12px;fill:#374151}.legend{font-size:13px;"
	"fill:#111827}.bar-label{font-size:12px;fill:#111827}.day{stroke:#9ca3af;stroke-width:1;"
	"stroke-dasharray:2 3}.day-label{font-size:11px;fill:#6b7280}"
	"ol#findings{padding-left:22px}li.finding{margin:0 0 12px;background:#fff;border:1px solid #e5e7eb;"
	"border-left:4px solid #dc2626;border-radius:4px;padding:8px 12px}li.finding .step{display:inline-block;"
	"font-size:12px;font-weight:600;text-transform:uppercase;color:#fff;background:#dc2626;border-radius:3px;"
	"padding:1px 6px;margin-right:6px}li.step-memory{border-left-color:#9333ea}li.step-memory .step{background:"
	"#9333ea}li.step-placement{border-left-color:#ea580c}li.step-placement .step{background:#ea580c}"
	"li.step-application{border-left-color:#0891b2}li.step-application .step{background:#0891b2}"
	".evidence{font-size:13px;color:#374151;margin:6px 0 0}#healthy{background:#ecfdf5;border:1px solid "
	"#a7f3d0;border-radius:4px;padding:8px 12px}"
	"table{border-collapse:collapse;font-size:13px;background:#fff}th,td{border:1px solid #e5e7eb;"
	"padding:3px 8px;text-align:right}th:first-child,td:first-child{text-align:left}th{background:#f3f4f6}"
	".none{color:#4b5563;font-style:italic}tr.over td{background:#fef2f2;color:#991b1b}"
	"tr.over td:last-child{font-weight:600}#backtest-table td:nth-child(2){text-align:left}h3.chart-title{font-size:15px;margin:2px 4px 6px;"
	"font-weight:600}";

/* Whether the run was priced: without prices every cost is 0, shown "-". */
static bool priced(const struct page *pg) { return metric(pg, "all", METRIC_COST_TOTAL) > 0; }

static void section_header(FILE *out, const struct page *pg)
{
	fputs("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
	      "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<title>gpuplan: ",
	      out);
	html_esc(out, pg->run.name);
	fprintf(out, " (run %lld)</title>\n<style>%s</style>\n</head>\n<body>\n<header>\n<h1>",
		(long long)pg->run.run_id, style);
	html_esc(out, pg->run.name);
	fprintf(out, " <small>run %lld</small></h1>\n<p class=\"meta\">scenario start ",
		(long long)pg->run.run_id);
	html_esc(out, pg->run.start);
	fprintf(out, ", %.2f simulated hours", pg->run.sim_seconds / 3600);
	static const struct {
		const char *what;
		enum metric_id metric;
		const char *before, *after;
		int format;
	} facts[] = {{"capacity", METRIC_CAPACITY_GPUS, "", " GPUs", REPORT_GPUS},
		     {"peak demand", METRIC_PEAK_DEMAND_GPUS, "", " GPUs", REPORT_GPUS},
		     {"queue p95", METRIC_QUEUE_TIME_P95_S, "", " s", 0},
		     {"TTFT p99", METRIC_TTFT_P99_S, "", " s", 3},
		     {"energy per 1,000 tokens", METRIC_ENERGY_PER_1K_TOKENS_WH, "", " Wh", 3},
		     {"cost per verified result", METRIC_COST_PER_VERIFIED_RESULT, "$", "",
		      REPORT_MONEY}};
	for (size_t i = 0; i < sizeof facts / sizeof facts[0]; i++) {
		double v = metric(pg, "all", facts[i].metric);
		if (isnan(v) || (facts[i].format == REPORT_MONEY && !priced(pg)))
			continue;
		char cell[32];
		bool money = facts[i].format == REPORT_MONEY;
		const char *cur = report_currency(pg->run.currency);
		fprintf(out, "; %s %s%s%s%s", facts[i].what, money ? cur : facts[i].before,
			money && strcmp(cur, "$") ? " " : "",
			report_cell(cell, sizeof cell, v, facts[i].format, true), facts[i].after);
	}
	fputs("</p>\n</header>\n", out);
}

static void section_findings(FILE *out, const struct page *pg)
{
	fputs("<section id=\"diagnosis\">\n<h2>Diagnosis</h2>\n<ol id=\"findings\">\n", out);
	for (size_t i = 0; i < pg->n_findings; i++) {
		const struct finding *f = &pg->findings[i];
		const char *step = finding_step_name((enum finding_step)f->step);
		fprintf(out, "<li class=\"finding step-%s\" data-rank=\"%d\"><span class=\"step\">",
			step, (int)f->rank);
		html_esc(out, step);
		fputs("</span><span class=\"text\">", out);
		html_esc(out, f->text);
		fputs("</span><p class=\"evidence\">", out);
		html_esc(out, f->evidence);
		fputs("</p></li>\n", out);
	}
	fputs("</ol>\n", out);
	if (!pg->n_findings)
		fputs("<p id=\"healthy\">No finding: nothing waited on idle allocated GPUs, on memory, "
		      "on placement rules while the capacity they hide was idle, or on work off the "
		      "GPU.</p>\n",
		      out);
	fputs("<p class=\"meta\">In the order that separates the causes: allocation, memory, "
	      "placement, application, and capacity only when none of them explains the "
	      "wait.</p>\n</section>\n",
	      out);
}

static const struct {
	const char *title;
	enum metric_id metric;
	int decimals;
} columns[] = {
	{"capacity", METRIC_CAPACITY_GPUS, REPORT_GPUS},
	{"peak demand", METRIC_PEAK_DEMAND_GPUS, REPORT_GPUS},
	{"peak alloc", METRIC_PEAK_ALLOCATED_GPUS, REPORT_GPUS},
	{"alloc %", METRIC_GPU_ALLOCATION_PCT, 1},
	{"engine %", METRIC_ENGINE_ACTIVE_PCT, 1},
	{"SM %", METRIC_SM_ACTIVE_PCT, 1},
	{"VRAM %", METRIC_VRAM_USED_PCT, 1},
	{"queue p95 s", METRIC_QUEUE_TIME_P95_S, 0},
	{"deadline %", METRIC_DEADLINE_MET_PCT, 1},
	{"SLO %", METRIC_SLO_ATTAINMENT_PCT, 1},
	{"cost", METRIC_COST_TOTAL, REPORT_MONEY},
	{"$/verified", METRIC_COST_PER_VERIFIED_RESULT, REPORT_MONEY},
};

static void section_summary(FILE *out, const struct page *pg)
{
	size_t nc = sizeof columns / sizeof columns[0];
	bool prices = priced(pg);
	fputs("<section id=\"summary\">\n<h2>Summary</h2>\n<table id=\"summary-table\">\n<tr><th>scope</th>",
	      out);
	char title[32];
	for (size_t c = 0; c < nc; c++)
		fprintf(out, "<th>%s</th>",
			report_money_title(columns[c].title, pg->run.currency, title,
					   sizeof title));
	fputs("</tr>\n", out);
	for (size_t k = 0; k < pg->n_scopes; k++) {
		const char *scope = pg->scopes[k].name;
		/* As the CLI's summary labels them: pools have capacity, workloads not. */
		fputs(k == 0                       ? "<tr><td>"
		      : pg->scopes[k].has_capacity ? "<tr><td>pool "
						   : "<tr><td>workload ",
		      out);
		html_esc(out, scope);
		fputs("</td>", out);
		for (size_t c = 0; c < nc; c++) {
			char cell[32];
			fprintf(out, "<td>%s</td>",
				report_cell(cell, sizeof cell, metric(pg, scope, columns[c].metric),
					    columns[c].decimals, prices));
		}
		fputs("</tr>\n", out);
	}
	fputs("</table>\n</section>\n", out);
}

/* A backtest run: the history's figures beside the replay's (backtest.h),
 * figures past the default tolerance marked. */
static void section_backtest(FILE *out, const struct page *pg)
{
	if (!pg->n_backtest)
		return;
	fputs("<section id=\"backtest\">\n<h2>Backtest: the replay beside the history</h2>\n"
	      "<table id=\"backtest-table\">\n<tr><th>scope</th><th>metric</th><th>observed</th>"
	      "<th>simulated</th><th>error</th></tr>\n",
	      out);
	size_t over = 0;
	for (size_t i = 0; i < pg->n_backtest; i++) {
		const struct backtest_row *b = &pg->backtest[i];
		bool ok = results_backtest_within(b, 0.25);
		over += !ok;
		char o[32], sim[32], e[16];
		int decimals = strcmp(b->metric, "gpu_hours") ? 0 : 1;
		fprintf(out, "<tr%s><td>", ok ? "" : " class=\"over\"");
		html_esc(out, b->scope);
		fprintf(out, "</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td></tr>\n", b->metric,
			report_cell(o, sizeof o, b->observed, decimals, false),
			report_cell(sim, sizeof sim, b->simulated, decimals, false),
			report_error_pct(b->error, e, sizeof e));
	}
	fprintf(out,
		"</table>\n<p class=\"meta\">Observed: the pods of the period the twin was "
		"learned from; simulated: the same pods replayed on its pools. %s</p>\n"
		"</section>\n",
		over ? "Rows in red differ by more than 25% (queue times by more than 5 minutes "
		       "too): the twin does not reproduce them."
		     : "Every figure is within 25% (queue times within 5 minutes).");
}

static void section_charts(FILE *out, const struct page *pg)
{
	const struct scope_series *all = pg->n_scopes ? &pg->scopes[0] : NULL;
	if (!all || strcmp(all->name, "all") || !all->n) {
		fputs("<p class=\"none\">This run has no timeseries rows.</p>\n", out);
		return;
	}
	fputs("<section id=\"capacity\">\n<h2>Capacity, demand and allocation</h2>\n", out);
	chart_capacity(out, pg, all);
	fputs("</section>\n<section id=\"utilization\">\n<h2>Four meanings of utilization</h2>\n",
	      out);
	chart_utilization(out, pg, all, "chart-utilization",
			  "Allocation, engine and SM activity, VRAM (% of capacity)");
	size_t pools = 0;
	for (size_t k = 1; k < pg->n_scopes; k++)
		pools += pg->scopes[k].has_capacity;
	for (size_t k = 1, i = 0; k < pg->n_scopes && pools > 1; k++) {
		if (!pg->scopes[k].has_capacity)
			continue;
		char id[32], title[160];
		snprintf(id, sizeof id, "chart-pool-%zu", i++);
		snprintf(title, sizeof title,
			 "Pool %s: allocation, activity, VRAM (%% of its capacity)",
			 pg->scopes[k].name);
		chart_utilization(out, pg, &pg->scopes[k], id, title);
	}
	fputs("</section>\n<section id=\"queue\">\n<h2>Queue and pending reasons</h2>\n", out);
	chart_queue(out, pg);
	html_chart_reasons(out, pg);
	fputs("</section>\n", out);
	if (isnan(metric(pg, "all", METRIC_TTFT_P50_S)) && pg->n_load < 2)
		return;
	fputs("<section id=\"latency\">\n<h2>Latency</h2>\n", out);
	chart_latency(out, pg);
	chart_latency_time(out, pg, all);
	chart_servers(out, pg, all);
	chart_loadtest(out, pg);
	fputs("</section>\n", out);
}

/* The Kueue flavors jobs were admitted with, per workload (none: no
 * section). */
static int section_flavors(FILE *out, struct store *st, int64_t run_id, struct gp_err *err)
{
	struct store_flavor *rows;
	size_t n;
	int rc = store_read_flavors(st, run_id, &rows, &n, err);
	if (rc || !n)
		return rc;
	fputs("<section id=\"flavors\">\n<h2>Kueue flavors</h2>\n<table id=\"flavor-table\">\n"
	      "<tr><th>workload</th><th>flavor</th><th>jobs</th><th>GPU-hours</th></tr>\n",
	      out);
	for (size_t i = 0; i < n; i++) {
		fputs("<tr><td>", out);
		html_esc(out, rows[i].workload);
		fputs("</td><td>", out);
		html_esc(out, rows[i].flavor);
		fprintf(out, "</td><td>%lld</td><td>%.1f</td></tr>\n", (long long)rows[i].jobs,
			rows[i].gpu_hours);
	}
	fputs("</table>\n</section>\n", out);
	store_free_flavors(rows, n);
	return GP_OK;
}

/* Cost by team beside the summary's cost by workload: the workloads' team
 * label, their allocations, the idle charged to them and what each verified
 * result cost them (docs/cost.md). */
static int section_teams(FILE *out, const struct page *pg, struct store *st, struct gp_err *err)
{
	struct store_team *rows;
	size_t n;
	int rc = store_read_teams(st, pg->run.run_id, &rows, &n, err);
	if (rc || !n || !priced(pg) || (n == 1 && !rows[0].team)) {
		store_free_teams(rows, n);
		return rc;
	}
	fprintf(out,
		"<section id=\"teams\">\n<h2>Cost by team</h2>\n<table id=\"team-table\">\n"
		"<tr><th>team</th><th>cost</th><th>share of idle</th><th>verified</th>"
		"<th>%s/verified</th></tr>\n",
		report_currency(pg->run.currency));
	for (size_t i = 0; i < n; i++) {
		char c[32], idle[32], per[32];
		fputs("<tr><td>", out);
		html_esc(out, rows[i].team ? rows[i].team : "(no team label)");
		fprintf(out, "</td><td>%s</td><td>%s</td><td>%.0f</td><td>%s</td></tr>\n",
			report_cell(c, sizeof c, rows[i].cost, REPORT_MONEY, true),
			report_cell(idle, sizeof idle, rows[i].idle, REPORT_MONEY, true),
			rows[i].verified,
			report_cell(per, sizeof per,
				    rows[i].verified > 0
					    ? (rows[i].cost + rows[i].idle) / rows[i].verified
					    : NAN,
				    REPORT_MONEY, true));
	}
	fputs("</table>\n<p class=\"meta\">By the workloads' <code>team</code> label; cost is "
	      "their allocations, idle what the run's rule charged them.</p>\n</section>\n",
	      out);
	store_free_teams(rows, n);
	return GP_OK;
}

int html_report(FILE *out, struct store *st, int64_t run_id, struct gp_err *err)
{
	struct page pg;
	int rc = page_read(&pg, st, run_id, err);
	if (!rc) {
		section_header(out, &pg);
		section_backtest(out, &pg);
		section_findings(out, &pg);
		section_summary(out, &pg);
		rc = section_teams(out, &pg, st, err);
		if (!rc)
			rc = section_flavors(out, st, pg.run.run_id, err);
	}
	if (!rc) {
		section_charts(out, &pg);
		fputs("<footer><p class=\"meta\">Written by gpuplan report --html from the results "
		      "database; self-contained: no script, nothing from the network.</p></footer>\n"
		      "</body>\n</html>\n",
		      out);
	}
	page_free(&pg);
	return rc;
}

/* Writes the run's HTML page to path, replacing it only once the page is whole. */
int html_report_file(struct store *st, const char *db, int64_t run_id, const char *path,
		     struct gp_err *err)
{
	struct outfile of;
	int rc = outfile_open(&of, path, db, err);
	if (rc)
		return rc;
	rc = html_report(of.f, st, run_id, err);
	if (rc) {
		outfile_abort(&of);
		return rc;
	}
	return outfile_commit(&of, err);
}
