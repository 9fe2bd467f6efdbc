/*
 * json.c - runs as JSON documents (see json.h).
 */
#include "gpuplan/json.h"
#include "gpuplan/jsonw.h"
#include "gpuplan/report.h"

#include "gpuplan/units.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* The document's own members, one a line; a table's rows, one a line, each
 * indented by two; a row's cells, on its line. */
static const struct jsonw_style doc_style = {"", "\n", "", " "};
static const struct jsonw_style rows_style = {"\n  ", "\n  ", "", " "};
/* backtest's document: its figures on the first line, its tables below. */
static const struct jsonw_style tables_style = {"", "\n ", "", " "};

/* --- rows as objects ------------------------------------------------------------ */

static void put_cell(struct jsonw *w, const struct store_cell *c)
{
	switch (c->type) {
	case STORE_INTEGER: jsonw_int(w, c->integer); break;
	case STORE_REAL: jsonw_number(w, c->real); break;
	case STORE_TEXT: jsonw_string(w, c->text); break;
	case STORE_NULL: jsonw_null(w); break;
	}
}

/* Rows of a table as an array of objects, or (key_value) one object. */
struct rows_out {
	struct jsonw *w;
	size_t n;
	bool key_value;  /* params: {KEY: VALUE} */
	bool first_only; /* advice's recommendation: the first row, if it meets */
	bool wrote;      /* first_only: it did */
};

static void put_row(void *ctx, const struct store_cell *cells, size_t n)
{
	struct rows_out *ro = ctx;
	if (ro->first_only) {
		bool meets = false;
		for (size_t i = 0; i < n; i++)
			meets |= !strcmp(cells[i].name, "meets") &&
				 cells[i].type == STORE_INTEGER && cells[i].integer == 1;
		if (ro->n++ > 0 || !meets)
			return;
		ro->wrote = true;
	} else {
		ro->n++;
	}
	if (ro->key_value && n == 2) {
		jsonw_key(ro->w, cells[0].type == STORE_TEXT ? cells[0].text : "");
		put_cell(ro->w, &cells[1]);
		return;
	}
	jsonw_object(ro->w, &jsonw_inline);
	for (size_t i = 0; i < n; i++) {
		jsonw_key(ro->w, cells[i].name);
		put_cell(ro->w, &cells[i]);
	}
	jsonw_close(ro->w);
}

/* "name": [rows...] or "name": {KEY: VALUE, ...} */
static int put_table(struct jsonw *w, struct store *st, const char *name, const char *table,
		     int64_t run_id, bool key_value, struct gp_err *err)
{
	struct rows_out ro = {w, 0, key_value, false, false};
	jsonw_key(w, name);
	if (key_value)
		jsonw_object(w, &rows_style);
	else
		jsonw_array(w, &rows_style);
	int rc = store_each_row(st, table, run_id, put_row, &ro, err);
	jsonw_close(w);
	return rc;
}

/* The run row itself, as an object, on a line of its own. */
static int put_run_row(struct jsonw *w, struct store *st, int64_t run_id, struct gp_err *err)
{
	struct rows_out ro = {w, 0, false, false, false};
	jsonw_key(w, "run");
	jsonw_space(w, "\n  ");
	return store_each_row(st, "runs", run_id, put_row, &ro, err);
}

/* --- cells from structs, as the store writes and reads them back --------------- */

/* A REAL cell: NaN is NULL (sti_bind_real); a whole value comes back from
 * SQLite as a positive zero. */
static void put_real(struct jsonw *w, double v)
{
	if (isnan(v))
		jsonw_null(w);
	else
		jsonw_number(w, v == 0 ? 0 : v);
}

static void key_real(struct jsonw *w, const char *key, double v)
{
	jsonw_key(w, key);
	put_real(w, v);
}

/* A time in seconds, SIM_NEVER as NULL (sti_bind_time). */
static void key_time(struct jsonw *w, const char *key, sim_time t)
{
	jsonw_key(w, key);
	if (t == SIM_NEVER)
		jsonw_null(w);
	else
		put_real(w, sim_seconds(t));
}

static void key_text(struct jsonw *w, const char *key, const char *s)
{
	jsonw_key(w, key);
	if (s)
		jsonw_string(w, s);
	else
		jsonw_null(w);
}

static void key_int(struct jsonw *w, const char *key, int64_t v)
{
	jsonw_key(w, key);
	jsonw_int(w, v);
}

/* --- metrics by scope ------------------------------------------------------------- */

static void put_scope(struct jsonw *w, const struct metric *m, size_t n, const char *scope)
{
	jsonw_object(w, &jsonw_inline);
	for (size_t i = 0; i < n; i++) {
		if (strcmp(m[i].scope, scope))
			continue;
		jsonw_key(w, m[i].name);
		put_real(w, m[i].value);
	}
	jsonw_close(w);
}

/* "summary", "metrics" (scopes in the order they first appear) and "units". */
static void put_metrics(struct jsonw *w, const struct metric *m, size_t n)
{
	jsonw_key(w, "summary");
	put_scope(w, m, n, "all");
	jsonw_key(w, "metrics");
	jsonw_object(w, &rows_style);
	for (size_t i = 0; i < n; i++) {
		bool seen = false;
		for (size_t k = 0; k < i && !seen; k++)
			seen = !strcmp(m[k].scope, m[i].scope);
		if (seen)
			continue;
		jsonw_key(w, m[i].scope);
		put_scope(w, m, n, m[i].scope);
	}
	jsonw_close(w);
	jsonw_key(w, "units");
	jsonw_object(w, &jsonw_inline);
	for (size_t i = 0; i < n; i++) {
		bool seen = false;
		for (size_t k = 0; k < i && !seen; k++)
			seen = !strcmp(m[k].name, m[i].name);
		if (seen)
			continue;
		jsonw_key(w, m[i].name);
		jsonw_string(w, m[i].unit ? m[i].unit : "");
	}
	jsonw_close(w);
}

/* The members of a run's document, inside its object. */
static int put_run(struct jsonw *w, struct store *st, const char *db, int64_t run_id,
		   struct gp_err *err)
{
	struct store_run run;
	int rc = store_run_info(st, run_id, &run, err);
	if (rc)
		return rc;
	jsonw_key(w, "db");
	jsonw_string(w, db);
	jsonw_key(w, "run_id");
	jsonw_int(w, run.run_id);
	rc = put_run_row(w, st, run.run_id, err);
	if (!rc)
		rc = put_table(w, st, "params", "params", run.run_id, true, err);
	struct metric *m = NULL;
	size_t n = 0;
	if (!rc)
		rc = store_read_metrics(st, run.run_id, &m, &n, err);
	if (!rc)
		put_metrics(w, m, n);
	store_free_metrics(m, n);
	if (!rc)
		rc = put_table(w, st, "findings", "findings", run.run_id, false, err);
	return rc;
}

int json_write_run(FILE *out, struct store *st, const char *db, int64_t run_id, struct gp_err *err)
{
	struct jsonw w;
	jsonw_init(&w, out);
	jsonw_object(&w, &doc_style);
	int rc = put_run(&w, st, db, run_id, err);
	jsonw_close(&w);
	fputc('\n', out);
	return rc;
}

/* The runs row of a run, as store.c's sti_write_run_row writes it. */
static void put_run_struct(struct jsonw *w, const struct scenario *sc, const struct results *r)
{
	jsonw_key(w, "run");
	jsonw_space(w, "\n  ");
	jsonw_object(w, &jsonw_inline);
	key_text(w, "name", sc->name);
	key_text(w, "scenario_path", sc->path);
	key_text(w, "scenario_sha256", sc->sha256[0] ? sc->sha256 : NULL);
	key_int(w, "seed", (int64_t)sc->seed);
	key_text(w, "started_at", r->started_at[0] ? r->started_at : NULL);
	key_real(w, "wall_seconds", r->wall_seconds);
	key_int(w, "events", (int64_t)r->events);
	key_time(w, "sim_seconds", r->sim_end);
	key_text(w, "status", r->status);
	char start[32];
	units_format_rfc3339(sc->start_epoch, start, sizeof start);
	key_text(w, "start", start);
	key_time(w, "step_s", r->step > 0 && r->n_ts ? r->step : SIM_NEVER);
	key_text(w, "currency", sc->currency[0] ? sc->currency : "USD");
	jsonw_close(w);
}

/* The findings rows of a run, as store.c's bind_finding writes them. */
static void put_findings(struct jsonw *w, const struct scenario *sc, const struct results *r)
{
	jsonw_key(w, "findings");
	jsonw_array(w, &rows_style);
	for (size_t i = 0; i < r->n_findings; i++) {
		const struct finding *f = &r->findings[i];
		jsonw_object(w, &jsonw_inline);
		key_int(w, "rank", f->rank);
		key_text(w, "step", finding_step_name((enum finding_step)f->step));
		key_text(w, "finding", f->text);
		key_text(w, "evidence", f->evidence);
		key_text(w, "kind", finding_kind_name((enum finding_kind)f->kind));
		key_text(w, "scope", finding_scope(f, sc));
		char *fix = f->n_fixes ? finding_fix_text(&f->fixes[0]) : NULL;
		key_text(w, "fix", fix);
		free(fix);
		key_text(w, "key", f->key);
		key_text(w, "value", f->value);
		key_text(w, "relaxed", f->relaxed);
		key_real(w, "pod_hours", f->key ? f->pod_hours : NAN);
		jsonw_close(w);
	}
	jsonw_close(w);
}

/* An advice row, as store_write_advice writes it (rank: its place, from 1);
 * its figures' columns are named after their metrics. */
static void put_advice(struct jsonw *w, const struct store_advice *a, size_t rank)
{
	jsonw_object(w, &jsonw_inline);
	key_int(w, "rank", (int64_t)rank);
	key_text(w, "alternative", a->alternative);
	key_text(w, "overrides", a->overrides);
	key_int(w, "alternative_run_id", a->run_id);
	key_int(w, "meets", a->meets);
	key_real(w, metric_name(METRIC_PEAK_DEMAND_GPUS), a->peak_demand);
	key_real(w, metric_name(METRIC_QUEUE_TIME_P95_S), a->queue_p95);
	key_real(w, metric_name(METRIC_DEADLINE_MET_PCT), a->deadline_pct);
	key_real(w, metric_name(METRIC_SLO_ATTAINMENT_PCT), a->slo_pct);
	key_real(w, metric_name(METRIC_COST_TOTAL), a->cost);
	key_real(w, metric_name(METRIC_COST_PER_VERIFIED_RESULT), a->cost_per_verified);
	key_int(w, "forced", a->forced);
	key_text(w, "untrusted", a->untrusted);
	jsonw_close(w);
}

void json_write_advice(FILE *out, const char *db, const struct json_advice *a)
{
	struct jsonw w;
	jsonw_init(&w, out);
	jsonw_object(&w, &doc_style);
	jsonw_key(&w, "db");
	jsonw_string(&w, db);
	jsonw_key(&w, "base");
	jsonw_object(&w, &doc_style);
	jsonw_key(&w, "db");
	jsonw_string(&w, db);
	jsonw_key(&w, "run_id");
	jsonw_int(&w, a->base_run);
	put_run_struct(&w, a->sc, a->r);
	jsonw_key(&w, "params");
	jsonw_object(&w, &rows_style);
	for (size_t i = 0; i < a->sc->n_params; i++) {
		jsonw_key(&w, a->sc->params[i].key ? a->sc->params[i].key : "");
		if (a->sc->params[i].value)
			jsonw_string(&w, a->sc->params[i].value);
		else
			jsonw_null(&w);
	}
	jsonw_close(&w);
	put_metrics(&w, a->r->metrics, a->r->n_metrics);
	put_findings(&w, a->sc, a->r);
	jsonw_close(&w);
	jsonw_key(&w, "alternatives");
	jsonw_array(&w, &rows_style);
	for (size_t i = 0; i < a->n_rows; i++)
		put_advice(&w, &a->rows[i], i + 1);
	jsonw_close(&w);
	jsonw_key(&w, "recommendation");
	if (a->n_rows && a->rows[0].meets)
		put_advice(&w, &a->rows[0], 1);
	else
		jsonw_null(&w);
	if (a->n_keep) {
		jsonw_key(&w, "kept");
		jsonw_object(&w, &rows_style);
		jsonw_key(&w, "paths");
		jsonw_array(&w, &rows_style);
		for (size_t i = 0; i < a->n_keep; i++)
			jsonw_string(&w, a->keep[i]);
		jsonw_close(&w);
		jsonw_key(&w, "alternatives_not_run");
		jsonw_int(&w, (int64_t)a->kept_out);
		jsonw_close(&w);
	}
	jsonw_close(&w);
	fputc('\n', out);
}

void json_write_backtest(FILE *out, const struct scenario *twin, const struct results *r,
			 const struct report_backtest_info *info)
{
	struct jsonw w;
	jsonw_init(&w, out);
	jsonw_object(&w, &jsonw_inline);
	jsonw_key(&w, "db");
	jsonw_string(&w, info->db);
	jsonw_key(&w, "run_id");
	jsonw_int(&w, info->run_id);
	jsonw_key(&w, "scenario");
	jsonw_string(&w, twin->name);
	jsonw_key(&w, "observed_pods");
	jsonw_int(&w, (int64_t)info->observed);
	jsonw_key(&w, "replayed_pods");
	jsonw_int(&w, (int64_t)info->replayed);
	jsonw_key(&w, "tolerance");
	jsonw_number(&w, info->tolerance);
	jsonw_restyle(&w, &tables_style);
	bool all_within = true;
	jsonw_key(&w, "rows");
	jsonw_array(&w, &rows_style);
	for (size_t i = 0; i < r->n_backtest; i++) {
		const struct backtest_row *b = &r->backtest[i];
		bool ok = results_backtest_within(b, info->tolerance);
		all_within &= ok;
		jsonw_object(&w, &jsonw_inline);
		jsonw_key(&w, "scope");
		jsonw_string(&w, b->scope);
		jsonw_key(&w, "metric");
		jsonw_string(&w, b->metric);
		jsonw_key(&w, "observed");
		jsonw_number(&w, b->observed);
		jsonw_key(&w, "simulated");
		jsonw_number(&w, b->simulated);
		jsonw_key(&w, "error");
		jsonw_number(&w, b->error);
		jsonw_key(&w, "within");
		jsonw_bool(&w, ok);
		jsonw_close(&w);
	}
	jsonw_close(&w);
	jsonw_key(&w, "within_tolerance");
	jsonw_bool(&w, all_within);
	jsonw_key(&w, "could_not_model");
	jsonw_array(&w, &rows_style);
	for (size_t i = 0; i < r->n_gaps; i++) {
		const struct backtest_gap *g = &r->gaps[i];
		char text[768];
		jsonw_object(&w, &jsonw_inline);
		jsonw_key(&w, "kind");
		jsonw_string(&w, report_gap_names[g->kind]);
		jsonw_key(&w, "pods");
		jsonw_int(&w, (int64_t)g->pods);
		jsonw_key(&w, "text");
		jsonw_string(&w, report_gap_text(g, text, sizeof text));
		jsonw_close(&w);
	}
	jsonw_close(&w);
	jsonw_close(&w);
	fputc('\n', out);
}
