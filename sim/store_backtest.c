/*
 * store_backtest.c - the backtest table (see store.h and docs/results.md):
 * binding a backtest's rows into the run's transaction, reading them back,
 * and finding the latest backtest of a scenario for advise.
 */
#include "gpuplan/store.h"

#include <math.h>
#include <string.h>

#include "store_int.h"

int sti_bind_backtest(sqlite3_stmt *s, int p, size_t i, const void *ctx, struct gp_err *err)
{
	const struct backtest_row *b = &((const struct results *)ctx)->backtest[i];
	(void)err;
	sti_bind_text(s, p, b->scope);
	sti_bind_text(s, p + 1, b->metric);
	const double v[] = {b->observed, b->simulated, b->error};
	for (int k = 0; k < 3; k++) {
		if (isnan(v[k]))
			sqlite3_bind_null(s, p + 2 + k);
		else
			sqlite3_bind_double(s, p + 2 + k, v[k]);
	}
	return GP_OK;
}

/* Whether the database has the backtest table (one opened read-only is not
 * migrated, and may predate it). */
static int has_table(struct store *st, bool *has, struct gp_err *err)
{
	int64_t n = 0;
	int rc = sti_query_int(st,
			       "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND "
			       "name = 'backtest'",
			       &n, "reading the schema", err);
	*has = n > 0;
	return rc;
}

static double col_real(sqlite3_stmt *s, int i)
{
	return sqlite3_column_type(s, i) == SQLITE_NULL ? NAN : sqlite3_column_double(s, i);
}

int store_read_backtest(struct store *st, int64_t run_id, struct backtest_row **rows, size_t *n,
			struct gp_err *err)
{
	*rows = NULL;
	*n = 0;
	bool has = false;
	int rc = has_table(st, &has, err);
	if (rc || !has)
		return rc;
	sqlite3_stmt *s;
	if (sqlite3_prepare_v2(st->db,
			       "SELECT scope, metric, observed, simulated, error FROM backtest "
			       "WHERE run_id = ?1 ORDER BY rowid",
			       -1, &s, NULL) != SQLITE_OK)
		return sti_db_error(st, err, "reading the backtest");
	sqlite3_bind_int64(s, 1, run_id);
	size_t cap = 0;
	int step;
	while ((step = sqlite3_step(s)) == SQLITE_ROW) {
		const char *metric = (const char *)sqlite3_column_text(s, 1);
		const char *name = NULL; /* the static name: rows compare by pointer or text */
		for (int m = 0; m < RESULTS_BACKTEST_METRICS && metric && !name; m++)
			if (!strcmp(metric, backtest_metric_names[m]))
				name = backtest_metric_names[m];
		if (!name)
			continue; /* a metric of a later version */
		const unsigned char *scope = sqlite3_column_text(s, 0);
		GP_GROW(*rows, cap, *n + 1);
		(*rows)[(*n)++] =
			(struct backtest_row){gp_xstrdup(scope ? (const char *)scope : ""), name,
					      col_real(s, 2), col_real(s, 3), col_real(s, 4)};
	}
	rc = step == SQLITE_DONE ? GP_OK : sti_db_error(st, err, "reading the backtest");
	sqlite3_finalize(s);
	return rc;
}

void store_free_backtest(struct backtest_row *rows, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(rows[i].scope);
	free(rows);
}

int store_latest_backtest(struct store *st, const char *sha256, int64_t *run_id, struct gp_err *err)
{
	*run_id = 0;
	bool has = false;
	int rc = has_table(st, &has, err);
	if (rc || !has)
		return rc;
	sqlite3_stmt *s;
	if (sqlite3_prepare_v2(st->db,
			       "SELECT max(r.run_id) FROM runs r WHERE r.scenario_sha256 = ?1 AND "
			       "EXISTS (SELECT 1 FROM backtest b WHERE b.run_id = r.run_id)",
			       -1, &s, NULL) != SQLITE_OK)
		return sti_db_error(st, err, "looking up the backtest");
	sti_bind_text(s, 1, sha256);
	int step = sqlite3_step(s);
	if (step == SQLITE_ROW && sqlite3_column_type(s, 0) != SQLITE_NULL)
		*run_id = sqlite3_column_int64(s, 0);
	rc = step == SQLITE_ROW || step == SQLITE_DONE
		     ? GP_OK
		     : sti_db_error(st, err, "looking up the backtest");
	sqlite3_finalize(s);
	return rc;
}
