/*
 * store_read.c - reading a run back from the results database for the
 * reports (see store.h).
 */
#include "gpuplan/store.h"
#include "gpuplan/units.h"

#include <assert.h>
#include <math.h>
#include <string.h>

#include "store_int.h"

/* --- reading back ---------------------------------------------------------- */

/* The answer's run of the search whose probes include run id, or id itself
 * (also when the database predates the searches table). */
static int64_t search_answer_of(struct store *st, int64_t id)
{
	sqlite3_stmt *s;
	if (sqlite3_prepare_v2(st->db,
			       "SELECT run_id FROM searches WHERE ?1 BETWEEN first_run_id AND "
			       "last_run_id ORDER BY rowid DESC LIMIT 1",
			       -1, &s, NULL) != SQLITE_OK)
		return id;
	sqlite3_bind_int64(s, 1, id);
	int64_t answer = sqlite3_step(s) == SQLITE_ROW ? sqlite3_column_int64(s, 0) : id;
	sqlite3_finalize(s);
	return answer;
}

int store_run_info(struct store *st, int64_t run_id, struct store_run *out, struct gp_err *err)
{
	if (run_id <= 0) {
		int rc = sti_query_int(st, "SELECT coalesce(max(run_id), 0) FROM runs", &run_id,
				       "reading runs", err);
		if (rc)
			return rc;
		if (!run_id)
			return gp_errorf(err, GP_EINPUT, "%s: no runs yet", st->path);
		run_id = search_answer_of(st, run_id);
	}
	sqlite3_stmt *s;
	const char *sql =
		run_id > 0 ? "SELECT run_id, name, start, sim_seconds, currency FROM runs WHERE "
			     "run_id = ?"
			   : "SELECT run_id, name, start, sim_seconds, currency FROM runs "
			     "ORDER BY run_id DESC LIMIT 1";
	if (sqlite3_prepare_v2(st->db, sql, -1, &s, NULL) != SQLITE_OK)
		return sti_db_error(st, err, "reading runs");
	if (run_id > 0)
		sqlite3_bind_int64(s, 1, run_id);
	int step = sqlite3_step(s);
	int rc = GP_OK;
	if (step == SQLITE_ROW) {
		const unsigned char *name = sqlite3_column_text(s, 1);
		const unsigned char *start = sqlite3_column_text(s, 2);
		out->run_id = sqlite3_column_int64(s, 0);
		snprintf(out->name, sizeof out->name, "%s", name ? (const char *)name : "");
		snprintf(out->start, sizeof out->start, "%s", start ? (const char *)start : "");
		out->sim_seconds = sqlite3_column_double(s, 3);
		const unsigned char *cur = sqlite3_column_text(s, 4);
		snprintf(out->currency, sizeof out->currency, "%s",
			 cur && strlen((const char *)cur) == 3 ? (const char *)cur : "USD");
	} else if (step == SQLITE_DONE) {
		rc = run_id > 0 ? gp_errorf(err, GP_EINPUT, "%s: no run %lld", st->path,
					    (long long)run_id)
				: gp_errorf(err, GP_EINPUT, "%s: no runs yet", st->path);
	} else {
		rc = sti_db_error(st, err, "reading runs");
	}
	sqlite3_finalize(s);
	return rc;
}

static int read_allocations(struct store *st, int64_t run_id, bool by_node,
			    struct allocation **rows, size_t *n, struct gp_err *err)
{
	sqlite3_stmt *s;
	*rows = NULL;
	*n = 0;
	/* A database from before the showback columns (or the scopes table)
	 * reads them as NULL. */
	bool showback = false, labels = false;
	if (sqlite3_prepare_v2(st->db,
			       "SELECT (SELECT count(*) FROM pragma_table_info('allocations') "
			       "WHERE name = 'pool'), (SELECT count(*) FROM "
			       "pragma_table_info('scopes') WHERE name = 'labels')",
			       -1, &s, NULL) != SQLITE_OK)
		return sti_db_error(st, err, "reading allocations");
	if (sqlite3_step(s) == SQLITE_ROW) {
		showback = sqlite3_column_int(s, 0) > 0;
		labels = sqlite3_column_int(s, 1) > 0;
	}
	sqlite3_finalize(s);
	char sql[700];
	snprintf(
		sql, sizeof sql,
		"SELECT a.name, a.start_s, a.end_s, a.gpu_hours, a.gpu_cost, a.cpu_core_hours, "
		"a.cpu_cost, a.ram_byte_hours, a.ram_cost, a.total_cost, a.gpu_efficiency, %s, %s, "
		"%s FROM %s a %s WHERE a.run_id = ? ORDER BY a.rowid",
		showback ? "a.namespace, a.queue, a.team, a.pool" : "NULL, NULL, NULL, NULL",
		labels ? "s.workload_kind, s.labels" : "NULL, NULL", by_node ? "a.node" : "NULL",
		by_node ? "node_allocations" : "allocations",
		labels ? "LEFT JOIN scopes s ON s.run_id = a.run_id AND s.scope = a.name "
			 "AND s.kind = 'workload'"
		       : "");
	if (sqlite3_prepare_v2(st->db, sql, -1, &s, NULL) != SQLITE_OK)
		return sti_db_error(st, err, "reading allocations");
	sqlite3_bind_int64(s, 1, run_id);
	size_t cap = 0;
	int step;
	while ((step = sqlite3_step(s)) == SQLITE_ROW) {
		GP_GROW(*rows, cap, *n + 1);
		struct allocation *a = &(*rows)[(*n)++];
		const unsigned char *name = sqlite3_column_text(s, 0);
		a->name = gp_xstrdup(name ? (const char *)name : "");
		a->start = (sim_time)llround(sqlite3_column_double(s, 1) * (double)SIM_SECOND);
		a->end = (sim_time)llround(sqlite3_column_double(s, 2) * (double)SIM_SECOND);
		double *f[] = {&a->gpu_hours,  &a->gpu_cost,       &a->cpu_core_hours,
			       &a->cpu_cost,   &a->ram_byte_hours, &a->ram_cost,
			       &a->total_cost, &a->gpu_efficiency};
		for (int k = 0; k < 8; k++)
			*f[k] = sqlite3_column_type(s, 3 + k) == SQLITE_NULL
					? NAN
					: sqlite3_column_double(s, 3 + k);
		char **text[] = {&a->namespace, &a->queue,  &a->team, &a->pool_name,
				 &a->kind,      &a->labels, &a->node};
		for (int k = 0; k < 7; k++) {
			const unsigned char *v = sqlite3_column_text(s, 11 + k);
			*text[k] = v ? gp_xstrdup((const char *)v) : NULL;
		}
		a->workload = a->pool = -1;
	}
	int rc = step == SQLITE_DONE ? GP_OK : sti_db_error(st, err, "reading allocations");
	sqlite3_finalize(s);
	return rc;
}

int store_read_allocations(struct store *st, int64_t run_id, struct allocation **rows, size_t *n,
			   struct gp_err *err)
{
	return read_allocations(st, run_id, false, rows, n, err);
}

int store_read_node_allocations(struct store *st, int64_t run_id, struct allocation **rows,
				size_t *n, struct gp_err *err)
{
	return read_allocations(st, run_id, true, rows, n, err);
}

void store_free_allocations(struct allocation *rows, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free((char *)rows[i].name);
		free(rows[i].namespace);
		free(rows[i].queue);
		free(rows[i].team);
		free(rows[i].pool_name);
		free(rows[i].kind);
		free(rows[i].labels);
		free(rows[i].node);
	}
	free(rows);
}

/* Fills row i of a query's result from the statement's current row. */
typedef void (*read_row_fn)(sqlite3_stmt *s, void *rows, size_t i);

/* Runs sql with run_id bound to ?1 and collects its rows (elem bytes each). */
static int read_rows(struct store *st, const char *sql, int64_t run_id, void **rows, size_t *n,
		     size_t elem, read_row_fn fn, const char *what, struct gp_err *err)
{
	sqlite3_stmt *s;
	*rows = NULL;
	*n = 0;
	if (sqlite3_prepare_v2(st->db, sql, -1, &s, NULL) != SQLITE_OK)
		return sti_db_error(st, err, what);
	sqlite3_bind_int64(s, 1, run_id);
	size_t cap = 0;
	int step;
	while ((step = sqlite3_step(s)) == SQLITE_ROW) {
		gp_grow(rows, &cap, *n + 1, elem);
		fn(s, *rows, (*n)++);
	}
	int rc = step == SQLITE_DONE ? GP_OK : sti_db_error(st, err, what);
	sqlite3_finalize(s);
	return rc;
}

/* An owned copy of a text column ("" for NULL). */
static char *col_text(sqlite3_stmt *s, int i)
{
	const unsigned char *t = sqlite3_column_text(s, i);
	return gp_xstrdup(t ? (const char *)t : "");
}

static double col_real(sqlite3_stmt *s, int i)
{
	return sqlite3_column_type(s, i) == SQLITE_NULL ? NAN : sqlite3_column_double(s, i);
}

static void read_metric(sqlite3_stmt *s, void *rows, size_t i)
{
	struct metric *m = &((struct metric *)rows)[i];
	*m = (struct metric){col_text(s, 0), col_text(s, 1), col_real(s, 2), col_text(s, 3)};
}

int store_read_metrics(struct store *st, int64_t run_id, struct metric **rows, size_t *n,
		       struct gp_err *err)
{
	return read_rows(
		st, "SELECT scope, name, value, unit FROM metrics WHERE run_id = ?1 ORDER BY rowid",
		run_id, (void **)rows, n, sizeof **rows, read_metric, "reading metrics", err);
}

void store_free_metrics(struct metric *rows, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free((char *)rows[i].scope);
		free((char *)rows[i].name);
		free((char *)rows[i].unit);
	}
	free(rows);
}

static void read_ts(sqlite3_stmt *s, void *rows, size_t i)
{
	struct ts_row *t = &((struct ts_row *)rows)[i];
	memset(t, 0, sizeof *t);
	t->t = (sim_time)llround(sqlite3_column_double(s, 0) * (double)SIM_SECOND);
	t->scope = col_text(s, 1);
	double *f[] = {&t->gpus_capacity,    &t->gpus_allocated, &t->gpus_demand,
		       &t->engine_active,    &t->sm_active,      &t->vram_used_gib,
		       &t->pending,          &t->running,        &t->requests_running,
		       &t->requests_waiting, &t->kv_cache_usage, &t->preemptions,
		       &t->gpus_provisioning};
	for (int k = 0; k < 13; k++)
		*f[k] = col_real(s, 2 + k);
}

bool sti_has_column(struct store *st, const char *table, const char *column)
{
	sqlite3_stmt *s;
	bool has = false;
	if (sqlite3_prepare_v2(st->db, "SELECT 1 FROM pragma_table_info(?1) WHERE name = ?2", -1,
			       &s, NULL) != SQLITE_OK)
		return false;
	sti_bind_text(s, 1, table);
	sti_bind_text(s, 2, column);
	has = sqlite3_step(s) == SQLITE_ROW;
	sqlite3_finalize(s);
	return has;
}

int store_read_timeseries(struct store *st, int64_t run_id, struct ts_row **rows, size_t *n,
			  struct gp_err *err)
{
	bool servers = sti_has_column(st, "timeseries", "preemptions");
	bool provisioning = sti_has_column(st, "timeseries", "gpus_provisioning");
	char sql[512];
	snprintf(sql, sizeof sql,
		 "SELECT t_s, scope, gpus_capacity, gpus_allocated, gpus_demand, engine_active, "
		 "sm_active, vram_used_gib, pending, running, %s, %s FROM timeseries "
		 "WHERE run_id = ?1 ORDER BY rowid",
		 servers ? "requests_running, requests_waiting, kv_cache_usage, preemptions"
			 : "NULL, NULL, NULL, NULL",
		 provisioning ? "gpus_provisioning" : "0");
	return read_rows(st, sql, run_id, (void **)rows, n, sizeof **rows, read_ts,
			 "reading timeseries", err);
}

void store_free_timeseries(struct ts_row *rows, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free((char *)rows[i].scope);
	free(rows);
}

static void read_reason(sqlite3_stmt *s, void *rows, size_t i)
{
	struct pending_reason *pr = &((struct pending_reason *)rows)[i];
	*pr = (struct pending_reason){
		col_text(s, 0), col_text(s, 1), col_real(s, 2), sqlite3_column_int64(s, 3), -1, 0};
}

int store_read_pending_reasons(struct store *st, int64_t run_id, struct pending_reason **rows,
			       size_t *n, struct gp_err *err)
{
	return read_rows(st,
			 "SELECT scope, reason, pending_seconds, pods FROM pending_reasons "
			 "WHERE run_id = ?1 ORDER BY rowid",
			 run_id, (void **)rows, n, sizeof **rows, read_reason,
			 "reading pending_reasons", err);
}

void store_free_pending_reasons(struct pending_reason *rows, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free((char *)rows[i].scope);
		free((char *)rows[i].reason);
	}
	free(rows);
}

static void read_finding(sqlite3_stmt *s, void *rows, size_t i)
{
	struct finding *f = &((struct finding *)rows)[i];
	memset(f, 0, sizeof *f);
	f->rank = sqlite3_column_int(s, 0);
	int step = finding_step_of((const char *)sqlite3_column_text(s, 1));
	f->step = (uint8_t)(step < 0 ? FINDING_CAPACITY : step);
	f->pool = f->workload = f->queue = f->reason = f->constraint = -1;
	f->text = col_text(s, 2);
	f->evidence = col_text(s, 3);
}

int store_read_findings(struct store *st, int64_t run_id, struct finding **rows, size_t *n,
			struct gp_err *err)
{
	return read_rows(st,
			 "SELECT rank, step, finding, evidence FROM findings WHERE run_id = ?1 "
			 "ORDER BY rank, rowid",
			 run_id, (void **)rows, n, sizeof **rows, read_finding, "reading findings",
			 err);
}

void store_free_findings(struct finding *rows, size_t n)
{
	for (size_t i = 0; i < n; i++)
		finding_free(&rows[i]);
	free(rows);
}

/* Rates as set ("12.5/s", "300/h", or a bare number of requests per second). */
static void read_load_point(sqlite3_stmt *s, void *rows, size_t i)
{
	struct store_load_point *p = &((struct store_load_point *)rows)[i];
	const unsigned char *v = sqlite3_column_text(s, 1);
	double rate = NAN;
	if (v && units_rate((const char *)v, &rate) && units_number((const char *)v, &rate))
		rate = NAN;
	*p = (struct store_load_point){sqlite3_column_int64(s, 0),
				       rate,
				       col_real(s, 2),
				       col_real(s, 3),
				       col_real(s, 4),
				       col_real(s, 5)};
}

static int by_rate(const void *a, const void *b)
{
	const struct store_load_point *x = a, *y = b;
	if (x->rate != y->rate)
		return x->rate < y->rate ? -1 : 1;
	return x->run_id < y->run_id ? -1 : x->run_id > y->run_id;
}

int store_read_load_curve(struct store *st, int64_t run_id, struct store_load_point **pts,
			  size_t *n, struct gp_err *err)
{
#define LOAD_METRIC \
	" (SELECT value FROM metrics m WHERE m.run_id = r.run_id AND m.scope = 'all' AND m.name = '%s')"
	char sql[1024]; /* the names are the table's, lower_snake_case */
	snprintf(sql, sizeof sql,
		 "SELECT r.run_id, p.value," LOAD_METRIC "," LOAD_METRIC "," LOAD_METRIC
		 "," LOAD_METRIC " FROM runs r JOIN runs me ON me.run_id = ?1 AND me.name = r.name"
		 " AND me.scenario_sha256 IS r.scenario_sha256"
		 " JOIN params p ON p.run_id = r.run_id AND p.key LIKE 'workloads.%%.requests.rate'"
		 " ORDER BY r.run_id",
		 metric_name(METRIC_TTFT_P99_S), metric_name(METRIC_E2E_P99_S),
		 metric_name(METRIC_THROUGHPUT_RPS), metric_name(METRIC_SLO_ATTAINMENT_PCT));
#undef LOAD_METRIC
	int rc = read_rows(st, sql, run_id, (void **)pts, n, sizeof **pts, read_load_point,
			   "reading the load test", err);
	size_t kept = 0;
	for (size_t i = 0; i < *n && !rc; i++)
		if (!isnan((*pts)[i].rate) && !isnan((*pts)[i].ttft_p99_s))
			(*pts)[kept++] = (*pts)[i];
	*n = rc ? 0 : kept;
	if (*n)
		qsort(*pts, *n, sizeof **pts, by_rate);
	return rc;
}

static void read_latency(sqlite3_stmt *s, void *rows, size_t i)
{
	((struct store_latency *)rows)[i] = (struct store_latency){col_real(s, 0),
								   col_real(s, 1),
								   col_real(s, 2),
								   col_real(s, 3),
								   sqlite3_column_int64(s, 4),
								   col_text(s, 5)};
}

int store_read_latencies(struct store *st, int64_t run_id, struct store_latency **rows, size_t *n,
			 struct gp_err *err)
{
	return read_rows(
		st,
		"SELECT arrival_s, ttft_s, e2e_s, tpot_s, output_tokens, workload FROM requests "
		"WHERE run_id = ?1 ORDER BY arrival_s, rowid",
		run_id, (void **)rows, n, sizeof **rows, read_latency, "reading requests", err);
}

void store_free_latencies(struct store_latency *rows, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(rows[i].workload);
	free(rows);
}

static void read_scope(sqlite3_stmt *s, void *rows, size_t i)
{
	((struct store_scope *)rows)[i] = (struct store_scope){
		col_text(s, 0), col_text(s, 1), col_text(s, 2), col_text(s, 3), col_text(s, 4)};
}

int store_read_scopes(struct store *st, int64_t run_id, struct store_scope **rows, size_t *n,
		      struct gp_err *err)
{
	if (!sti_has_column(st, "scopes", "scope")) {
		*rows = NULL;
		*n = 0;
		return GP_OK;
	}
	return read_rows(
		st,
		"SELECT scope, kind, workload_kind, model, gpu FROM scopes WHERE run_id = ?1 "
		"ORDER BY rowid",
		run_id, (void **)rows, n, sizeof **rows, read_scope, "reading scopes", err);
}

void store_free_scopes(struct store_scope *rows, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(rows[i].scope);
		free(rows[i].kind);
		free(rows[i].workload_kind);
		free(rows[i].model);
		free(rows[i].gpu);
	}
	free(rows);
}

static void read_flavor(sqlite3_stmt *s, void *rows, size_t i)
{
	((struct store_flavor *)rows)[i] = (struct store_flavor){
		col_text(s, 0), col_text(s, 1), sqlite3_column_int64(s, 2), col_real(s, 3)};
}

int store_read_flavors(struct store *st, int64_t run_id, struct store_flavor **rows, size_t *n,
		       struct gp_err *err)
{
	if (!sti_has_column(st, "job_rows", "flavor_id")) {
		*rows = NULL;
		*n = 0;
		return GP_OK;
	}
	return read_rows(st,
			 "SELECT workload, flavor, count(*), "
			 "coalesce(sum(gpus * (coalesce(end_s, (SELECT sim_seconds FROM runs r "
			 "WHERE r.run_id = ?1)) - start_s)) / 3600.0, 0) "
			 "FROM jobs WHERE run_id = ?1 AND flavor IS NOT NULL "
			 "GROUP BY workload, flavor ORDER BY workload, flavor",
			 run_id, (void **)rows, n, sizeof **rows, read_flavor, "reading flavors",
			 err);
}

void store_free_flavors(struct store_flavor *rows, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(rows[i].workload);
		free(rows[i].flavor);
	}
	free(rows);
}

int store_each_row(struct store *st, const char *table, int64_t run_id, store_row_fn fn, void *ctx,
		   struct gp_err *err)
{
	static const char *const tables[] = {"runs", "params", "metrics", "findings", "advice"};
	bool known = false;
	for (size_t i = 0; i < sizeof tables / sizeof tables[0]; i++)
		known |= !strcmp(table, tables[i]);
	assert(known && "only tables keyed by run_id");
	if (!known || !sti_has_column(st, table, "run_id"))
		return GP_OK;
	char sql[160], what[64];
	snprintf(sql, sizeof sql, "SELECT * FROM %s WHERE run_id = ?1 ORDER BY rowid", table);
	snprintf(what, sizeof what, "reading %s", table);
	sqlite3_stmt *s;
	if (sqlite3_prepare_v2(st->db, sql, -1, &s, NULL) != SQLITE_OK)
		return sti_db_error(st, err, what);
	sqlite3_bind_int64(s, 1, run_id);
	int ncols = sqlite3_column_count(s);
	struct store_cell *cells = gp_xcalloc((size_t)ncols, sizeof *cells);
	int step;
	while ((step = sqlite3_step(s)) == SQLITE_ROW) {
		size_t n = 0;
		for (int c = 0; c < ncols; c++) {
			const char *name = sqlite3_column_name(s, c);
			if (!strcmp(name, "run_id"))
				continue;
			struct store_cell *cell = &cells[n++];
			*cell = (struct store_cell){.name = name};
			switch (sqlite3_column_type(s, c)) {
			case SQLITE_INTEGER:
				cell->type = STORE_INTEGER;
				cell->integer = sqlite3_column_int64(s, c);
				break;
			case SQLITE_FLOAT:
				cell->type = STORE_REAL;
				cell->real = sqlite3_column_double(s, c);
				break;
			case SQLITE_NULL: cell->type = STORE_NULL; break;
			default:
				cell->type = STORE_TEXT;
				cell->text = (const char *)sqlite3_column_text(s, c);
				break;
			}
		}
		fn(ctx, cells, n);
	}
	int rc = step == SQLITE_DONE ? GP_OK : sti_db_error(st, err, what);
	free(cells);
	sqlite3_finalize(s);
	return rc;
}
