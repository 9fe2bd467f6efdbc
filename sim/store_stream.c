/*
 * store_stream.c - a run read back row by row (see store.h, "Streaming a
 * run"), for exports whose memory must not grow with the run:
 * `report --openmetrics` of thousands of workloads held every timeseries
 * row, and scanned them once per series.
 *
 * Every query walks an index or SQLite's sorter, which spills to temporary
 * files past its cache: the process holds one row per cursor.
 */
#include "gpuplan/store.h"

#include <math.h>
#include <string.h>

#include "store_int.h"

struct store_cursor {
	struct store *st;
	sqlite3_stmt *s;
	enum store_query q;
	int64_t run_id;
	const char *what; /* for errors: "reading timeseries" */
};

/* The series: each scope but all, numbered by its first timeseries row (in
 * the order the rows were written); a pool by the scopes table (its first
 * row for the scope), or, for a run written before that table, by having a
 * capacity_gpus metric; the model of an inference workload.  A query, not a
 * table: the database is open read-only (PRAGMA query_only), TEMP included. */
static int series_sql(struct store *st, int64_t run_id, char *buf, size_t size, struct gp_err *err)
{
	int64_t scoped = 0;
	if (sti_has_column(st, "scopes", "scope")) {
		char q[128];
		snprintf(q, sizeof q, "SELECT EXISTS (SELECT 1 FROM scopes WHERE run_id = %lld)",
			 (long long)run_id);
		int rc = sti_query_int(st, q, &scoped, "reading scopes", err);
		if (rc)
			return rc;
	}
	static const char by_scopes[] =
		"coalesce((SELECT s.kind = 'pool' FROM scopes s WHERE s.run_id = ?1 AND "
		"s.scope = t.scope ORDER BY s.rowid LIMIT 1), 0) AS pool, (SELECT CASE WHEN "
		"s.workload_kind = 'inference' AND s.model <> '' THEN s.model END FROM scopes s "
		"WHERE s.run_id = ?1 AND s.scope = t.scope ORDER BY s.rowid LIMIT 1) AS model";
	char by_metrics[160];
	snprintf(by_metrics, sizeof by_metrics,
		 "EXISTS (SELECT 1 FROM metrics m WHERE m.run_id = ?1 AND m.scope = t.scope AND "
		 "m.name = '%s') AS pool, NULL AS model",
		 metric_name(METRIC_CAPACITY_GPUS));
	snprintf(buf, size,
		 "SELECT min(t.rowid) AS ord, t.scope AS scope, %s FROM timeseries t "
		 "WHERE t.run_id = ?1 AND t.scope IS NOT 'all' GROUP BY t.scope",
		 scoped ? by_scopes : by_metrics);
	return GP_OK;
}

/* The SQL of query q into buf; ?1 is the run, ?2 and ?3 the keys. */
static int query_sql(struct store *st, enum store_query q, int64_t run_id, char *buf, size_t size,
		     struct gp_err *err)
{
	char series[1024];
	int rc = GP_OK;
	switch (q) {
	case STORE_Q_SERIES:
		rc = series_sql(st, run_id, series, sizeof series, err);
		snprintf(buf, size, "SELECT ord, scope, pool, model FROM (%s) ORDER BY ord",
			 series);
		break;
	case STORE_Q_WINDOWS: {
		bool servers = sti_has_column(st, "timeseries", "preemptions");
		bool provisioning = sti_has_column(st, "timeseries", "gpus_provisioning");
		snprintf(buf, size,
			 "SELECT t_s, gpus_capacity, gpus_allocated, gpus_demand, engine_active, "
			 "sm_active, vram_used_gib, pending, running, %s, %s FROM timeseries "
			 "WHERE run_id = ?1 AND scope = ?2 ORDER BY t_s, rowid",
			 servers ? "requests_running, requests_waiting, kv_cache_usage, preemptions"
				 : "NULL, NULL, NULL, NULL",
			 provisioning ? "gpus_provisioning" : "0");
		break;
	}
	case STORE_Q_REQUESTS:
		/* CROSS JOIN keeps requests outer: one pass, a lookup of the
		 * series (SQLite indexes the materialized view) and a sort, not a
		 * scan of the requests per series. */
		rc = series_sql(st, run_id, series, sizeof series, err);
		snprintf(buf, size,
			 "WITH s AS MATERIALIZED (%s) SELECT s.ord, r.arrival_s, r.ttft_s, "
			 "r.e2e_s, r.tpot_s, r.output_tokens FROM requests r CROSS JOIN s ON "
			 "s.scope = r.workload WHERE r.run_id = ?1 AND s.model IS NOT NULL "
			 "ORDER BY s.ord, r.arrival_s, r.rowid",
			 series);
		break;
	case STORE_Q_COSTS:
		snprintf(buf, size, "%s",
			 "SELECT name, end_s, total_cost FROM (SELECT name, end_s, total_cost, "
			 "rowid AS r, min(rowid) OVER (PARTITION BY name) AS first FROM "
			 "allocations WHERE run_id = ?1) ORDER BY first, r");
		break;
	case STORE_Q_PENDING:
		snprintf(buf, size, "%s",
			 "SELECT scope, reason, pending_seconds FROM pending_reasons WHERE "
			 "run_id = ?1 AND scope IS NOT 'all' ORDER BY rowid");
		break;
	case STORE_Q_PRICED:
		snprintf(buf, size, "%s",
			 "SELECT EXISTS (SELECT 1 FROM allocations WHERE run_id = ?1 AND "
			 "total_cost > 0)");
		break;
	case STORE_Q_METRIC:
		snprintf(buf, size, "%s",
			 "SELECT value FROM metrics WHERE run_id = ?1 AND scope = ?2 AND "
			 "name = ?3 ORDER BY rowid");
		break;
	}
	return rc;
}

static const char *const query_what[] = {
	[STORE_Q_SERIES] = "reading the series",       [STORE_Q_WINDOWS] = "reading timeseries",
	[STORE_Q_REQUESTS] = "reading requests",       [STORE_Q_COSTS] = "reading allocations",
	[STORE_Q_PENDING] = "reading pending_reasons", [STORE_Q_METRIC] = "reading metrics",
	[STORE_Q_PRICED] = "reading allocations",
};

/* Each series' rows are scattered over the table (a window's rows of every
 * scope are written together), so reading the series one after another
 * reads each page once per series on it: with SQLite's default 2 MiB page
 * cache every such read went through the kernel.  A fixed cache keeps the
 * memory bounded whatever the run's size. */
#define STREAM_CACHE_KIB 65536

int store_stream_begin(struct store *st, struct gp_err *err)
{
	char sql[64];
	snprintf(sql, sizeof sql, "PRAGMA cache_size = -%d", STREAM_CACHE_KIB);
	return sti_exec(st, sql, "sizing the page cache", err);
}

int store_cursor_open(struct store *st, enum store_query q, int64_t run_id,
		      struct store_cursor **out, struct gp_err *err)
{
	char sql[2048];
	sqlite3_stmt *s;
	*out = NULL;
	int rc = query_sql(st, q, run_id, sql, sizeof sql, err);
	if (rc)
		return rc;
	if (sqlite3_prepare_v2(st->db, sql, -1, &s, NULL) != SQLITE_OK)
		return sti_db_error(st, err, query_what[q]);
	struct store_cursor *c = gp_xcalloc(1, sizeof *c);
	*c = (struct store_cursor){st, s, q, run_id, query_what[q]};
	sqlite3_bind_int64(s, 1, run_id);
	*out = c;
	return GP_OK;
}

void store_cursor_rewind(struct store_cursor *c, const char *key, const char *key2)
{
	sqlite3_reset(c->s);
	sqlite3_clear_bindings(c->s);
	sqlite3_bind_int64(c->s, 1, c->run_id);
	if (key)
		sti_bind_text(c->s, 2, key);
	if (key2)
		sti_bind_text(c->s, 3, key2);
}

static double col_real(sqlite3_stmt *s, int i)
{
	return sqlite3_column_type(s, i) == SQLITE_NULL ? NAN : sqlite3_column_double(s, i);
}

/* Seconds as stored, through sim_time as the reports read them. */
static sim_time col_time(sqlite3_stmt *s, int i)
{
	return (sim_time)llround(sqlite3_column_double(s, i) * (double)SIM_SECOND);
}

static const char *col_text(sqlite3_stmt *s, int i)
{
	const unsigned char *t = sqlite3_column_text(s, i);
	return t ? (const char *)t : "";
}

static void fill(sqlite3_stmt *s, enum store_query q, struct store_item *it)
{
	memset(it, 0, sizeof *it);
	switch (q) {
	case STORE_Q_SERIES:
		it->series = sqlite3_column_int64(s, 0);
		it->name = col_text(s, 1);
		it->pool = sqlite3_column_int(s, 2) != 0;
		it->text = sqlite3_column_type(s, 3) == SQLITE_NULL ? NULL : col_text(s, 3);
		break;
	case STORE_Q_WINDOWS: {
		it->ts.t = col_time(s, 0);
		double *f[] = {
			&it->ts.gpus_capacity,    &it->ts.gpus_allocated, &it->ts.gpus_demand,
			&it->ts.engine_active,    &it->ts.sm_active,      &it->ts.vram_used_gib,
			&it->ts.pending,          &it->ts.running,        &it->ts.requests_running,
			&it->ts.requests_waiting, &it->ts.kv_cache_usage, &it->ts.preemptions,
			&it->ts.gpus_provisioning};
		for (int k = 0; k < 13; k++)
			*f[k] = col_real(s, 1 + k);
		break;
	}
	case STORE_Q_REQUESTS:
		it->series = sqlite3_column_int64(s, 0);
		it->lat = (struct store_latency){col_real(s, 1),
						 col_real(s, 2),
						 col_real(s, 3),
						 col_real(s, 4),
						 sqlite3_column_int64(s, 5),
						 NULL};
		break;
	case STORE_Q_COSTS:
		it->name = col_text(s, 0);
		it->end = col_time(s, 1);
		it->value = col_real(s, 2);
		break;
	case STORE_Q_PENDING:
		it->name = col_text(s, 0);
		it->text = col_text(s, 1);
		it->value = col_real(s, 2);
		break;
	case STORE_Q_PRICED:
	case STORE_Q_METRIC: it->value = col_real(s, 0); break;
	}
}

int store_cursor_next(struct store_cursor *c, struct store_item *it, bool *got, struct gp_err *err)
{
	int step = sqlite3_step(c->s);
	*got = step == SQLITE_ROW;
	if (*got)
		fill(c->s, c->q, it);
	return step == SQLITE_ROW || step == SQLITE_DONE ? GP_OK
							 : sti_db_error(c->st, err, c->what);
}

void store_cursor_close(struct store_cursor *c)
{
	if (!c)
		return;
	sqlite3_finalize(c->s);
	free(c);
}
