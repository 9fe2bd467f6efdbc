/*
 * store_merge.c - merging the runs of another results database into this one
 * (see store.h): new run ids, and no run or sweep point twice.
 */
#include "gpuplan/store.h"

#include <assert.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <string.h>
#include <sys/stat.h>

#include "store_int.h"

/* --- merge ------------------------------------------------------------------ */

/* The input database is attached under this name for the merge. */
#define MERGE_SRC "merge_src"

/* Refuses an input that is missing or is the output's own file (merging a
 * database into itself would read the rows it is writing). */
static int check_merge_input(const char *in_path, const char *out_path, struct gp_err *err)
{
	struct stat in, out;
	if (stat(in_path, &in) != 0)
		return gp_located(err, (struct srcloc){in_path, 0, 0}, "cannot read: %s",
				  strerror(errno));
	if (!S_ISREG(in.st_mode))
		return gp_located(err, (struct srcloc){in_path, 0, 0}, "not a file");
	if (out_path && stat(out_path, &out) == 0 && in.st_dev == out.st_dev &&
	    in.st_ino == out.st_ino)
		return gp_located(err, (struct srcloc){in_path, 0, 0},
				  "is the output database itself; name it once");
	return GP_OK;
}

/* Whether table exists in schema (main or MERGE_SRC). */
static int has_table(struct store *st, const char *schema, const char *table, bool *has,
		     struct gp_err *err)
{
	char *sql = sqlite3_mprintf("SELECT count(*) FROM \"%w\".sqlite_master "
				    "WHERE type = 'table' AND name = %Q",
				    schema, table);
	int64_t n = 0;
	int rc = sti_query_int(st, sql, &n, "reading the schema", err);
	sqlite3_free(sql);
	*has = n > 0;
	return rc;
}

/* Checks that schema (of a connection to in_path) is a gpuplan results
 * database we can read: a SQLite file, a schema no newer than ours, a runs
 * table. */
static int check_merge_schema(struct store *st, const char *schema, const char *in_path,
			      struct gp_err *err)
{
	char *sql = sqlite3_mprintf("SELECT count(*) FROM \"%w\".sqlite_master", schema);
	int rc = sqlite3_exec(st->db, sql, NULL, NULL, NULL);
	sqlite3_free(sql);
	if (rc == SQLITE_NOTADB)
		return gp_located(err, (struct srcloc){in_path, 0, 0}, "not a SQLite database");
	if (rc != SQLITE_OK)
		return gp_errorf(err, GP_ERUNTIME, "%s: reading the database: %s", in_path,
				 sqlite3_errmsg(st->db));
	int64_t version = 0;
	bool runs = false;
	sql = sqlite3_mprintf("PRAGMA \"%w\".user_version", schema);
	rc = sti_query_int(st, sql, &version, "reading the schema version", err);
	sqlite3_free(sql);
	if (rc || has_table(st, schema, "runs", &runs, err))
		return GP_ERUNTIME;
	if (version > STORE_SCHEMA_VERSION)
		return gp_located(err, (struct srcloc){in_path, 0, 0},
				  "results schema version %lld is newer than this "
				  "gpuplan's (%d); merge with a newer gpuplan",
				  (long long)version, STORE_SCHEMA_VERSION);
	if (!runs)
		return gp_located(err, (struct srcloc){in_path, 0, 0},
				  "not a gpuplan results database (it has no runs table)");
	return GP_OK;
}

/* A damaged input is found before the output is opened: attached to the
 * output's connection, its errors would name the output (and leave an empty
 * one behind). */
static int check_integrity(struct store *in, const char *in_path, struct gp_err *err)
{
	sqlite3_stmt *s;
	int rc = sqlite3_prepare_v2(in->db, "PRAGMA quick_check(1)", -1, &s, NULL);
	const char *result = NULL;
	if (rc == SQLITE_OK && sqlite3_step(s) == SQLITE_ROW)
		result = (const char *)sqlite3_column_text(s, 0);
	if (!result || strcmp(result, "ok")) {
		gp_located(err, (struct srcloc){in_path, 0, 0},
			   "a damaged database (%s); expected an intact "
			   "gpuplan results database",
			   result ? result : sqlite3_errmsg(in->db));
		rc = GP_EINPUT;
	} else {
		rc = GP_OK;
	}
	sqlite3_finalize(s);
	return rc;
}

int store_check_merge_input(const char *in_path, const char *out_path, struct gp_err *err)
{
	assert(in_path && err);
	if (check_merge_input(in_path, out_path, err))
		return GP_EINPUT;
	struct store in = {.db = NULL, .path = (char *)in_path};
	int rc;
	if (sqlite3_open_v2(in_path, &in.db, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK)
		rc = gp_located(err, (struct srcloc){in_path, 0, 0}, "cannot open: %s",
				in.db ? sqlite3_errmsg(in.db) : "out of memory");
	else
		rc = check_merge_schema(&in, "main", in_path, err);
	if (!rc)
		rc = check_integrity(&in, in_path, err);
	sqlite3_close(in.db);
	return rc;
}

/* A run of the input that the output already holds: the same sweep point,
 * or, for a run outside any sweep, the same identity (looked up through the
 * runs_identity index: without it, merging 20,000 runs into 20,000 took two
 * minutes). */
static const char dup_point_sql[] =
	"EXISTS (SELECT 1 FROM " MERGE_SRC ".sweep_points sp JOIN main.sweep_points mp"
	" ON mp.sweep = sp.sweep AND mp.point = sp.point WHERE sp.run_id = r.run_id)";
static const char in_sweep_sql[] =
	"EXISTS (SELECT 1 FROM " MERGE_SRC ".sweep_points sp WHERE sp.run_id = r.run_id)";
static const char dup_run_sql[] =
	"EXISTS (SELECT 1 FROM main.runs o WHERE o.name IS r.name"
	" AND o.scenario_sha256 IS r.scenario_sha256 AND o.seed IS r.seed"
	" AND o.started_at IS r.started_at AND o.wall_seconds IS r.wall_seconds"
	" AND o.events IS r.events AND o.sim_seconds IS r.sim_seconds)";

/* Fills temp.merge_map with the input runs to copy, in run_id order, and
 * their new ids after the output's last run. */
static int map_new_runs(struct store *st, bool src_points, struct gp_err *err)
{
	if (sti_exec(st,
		     "CREATE TEMP TABLE IF NOT EXISTS merge_map (seq INTEGER PRIMARY KEY,"
		     " old INTEGER NOT NULL UNIQUE, new INTEGER);"
		     "DELETE FROM temp.merge_map;",
		     "preparing the merge", err))
		return GP_ERUNTIME;
	char *sql;
	if (src_points)
		sql = sqlite3_mprintf(
			"INSERT INTO temp.merge_map (old) SELECT r.run_id FROM " MERGE_SRC
			".runs r WHERE NOT %s AND (%s OR NOT %s) ORDER BY r.run_id",
			dup_point_sql, in_sweep_sql, dup_run_sql);
	else
		sql = sqlite3_mprintf(
			"INSERT INTO temp.merge_map (old) SELECT r.run_id FROM " MERGE_SRC
			".runs r WHERE NOT %s ORDER BY r.run_id",
			dup_run_sql);
	int rc = sti_exec(st, sql, "choosing the runs to merge", err);
	sqlite3_free(sql);
	if (!rc)
		rc = sti_exec(st,
			      "UPDATE temp.merge_map SET new = seq + "
			      "(SELECT coalesce(max(run_id), 0) FROM main.runs)",
			      "numbering the merged runs", err);
	return rc;
}

/* The columns of table other than run_id (and job_rows' key) that both
 * databases have, as a comma-separated list with the prefix before each
 * name ("t." or "").
 * With the prefix, a column that names another run (advice.alternative_run_id,
 * searches.first_run_id: any *_run_id) is renumbered as run_id is.
 * Returns NULL when there are none; sqlite3_free the result. */
static char *common_columns(struct store *st, const char *table, const char *prefix)
{
	sqlite3_stmt *s;
	char *sql =
		sqlite3_mprintf("SELECT m.name FROM pragma_table_info(%Q, 'main') m"
				" JOIN pragma_table_info(%Q, '" MERGE_SRC "') i ON i.name = m.name"
				" WHERE m.name NOT IN ('run_id', 'job_key') ORDER BY m.cid",
				table, table);
	int ok = sqlite3_prepare_v2(st->db, sql, -1, &s, NULL) == SQLITE_OK;
	sqlite3_free(sql);
	if (!ok)
		return NULL;
	char *list = NULL;
	while (sqlite3_step(s) == SQLITE_ROW) {
		const char *name = (const char *)sqlite3_column_text(s, 0);
		size_t n = strlen(name);
		bool run_ref = *prefix && n > 7 && !strcmp(name + n - 7, "_run_id");
		if (run_ref)
			list = sqlite3_mprintf(
				"%z%s(SELECT r.new FROM temp.merge_map r WHERE r.old = "
				"%s\"%w\")",
				list, list ? ", " : "", prefix, name);
		else
			list = sqlite3_mprintf("%z%s%s\"%w\"", list, list ? ", " : "", prefix,
					       name);
	}
	sqlite3_finalize(s);
	return list;
}

/* Copies the rows of one table for the mapped runs, in their order. */
static int copy_table(struct store *st, const char *table, struct gp_err *err)
{
	char *cols = common_columns(st, table, "");
	char *tcols = common_columns(st, table, "t.");
	const char *order = !strcmp(table, "runs") ? "m.seq" : "m.seq, t.rowid";
	char *sql = sqlite3_mprintf(
		"INSERT INTO main.\"%w\" (run_id%s%s) SELECT m.new%s%s FROM " MERGE_SRC
		".\"%w\" t JOIN temp.merge_map m ON m.old = t.run_id ORDER BY %s",
		table, cols ? ", " : "", cols ? cols : "", tcols ? ", " : "", tcols ? tcols : "",
		table, order);
	char what[128];
	snprintf(what, sizeof what, "merging %s", table);
	int rc = sti_exec(st, sql, what, err);
	sqlite3_free(sql);
	sqlite3_free(cols);
	sqlite3_free(tcols);
	return rc;
}

/* The output's tables other than runs that have a run_id column, and that
 * the input has too: every row there belongs to a run. */
static const char run_tables_sql[] =
	"SELECT t.name FROM main.sqlite_master t WHERE t.type = 'table' AND t.name <> 'runs'"
	" AND EXISTS (SELECT 1 FROM pragma_table_info(t.name, 'main') c WHERE c.name = 'run_id')"
	" AND EXISTS (SELECT 1 FROM " MERGE_SRC ".sqlite_master s WHERE s.type = 'table'"
	" AND s.name = t.name) ORDER BY t.name";

/* Copies runs first (the other tables reference them), then the rest. */
static int copy_tables(struct store *st, struct gp_err *err)
{
	if (copy_table(st, "runs", err))
		return GP_ERUNTIME;
	sqlite3_stmt *s;
	if (sqlite3_prepare_v2(st->db, run_tables_sql, -1, &s, NULL) != SQLITE_OK)
		return sti_db_error(st, err, "listing tables to merge");
	char **names = NULL;
	size_t n = 0, cap = 0;
	while (sqlite3_step(s) == SQLITE_ROW) {
		GP_GROW(names, cap, n + 1);
		names[n++] = gp_xstrdup((const char *)sqlite3_column_text(s, 0));
	}
	sqlite3_finalize(s);
	int rc = GP_OK;
	for (size_t i = 0; i < n; i++) {
		if (!rc)
			rc = copy_table(st, names[i], err);
		free(names[i]);
	}
	free(names);
	return rc;
}

/* Whether the input's table has column (of its own name, not ours). */
static bool src_has_column(struct store *st, const char *table, const char *column)
{
	char *sql = sqlite3_mprintf("SELECT count(*) FROM pragma_table_info(%Q, '" MERGE_SRC "') "
				    "WHERE name = %Q",
				    table, column);
	int64_t n = 0;
	struct gp_err ignored GP_ERR_SCOPE = {0};
	sti_query_int(st, sql, &n, "reading the schema", &ignored);
	sqlite3_free(sql);
	return n > 0;
}

/* Copies the input's job_rows, keyed anew by the runs' new ids, in their
 * order: a run's range of keys at a time where the input has the key
 * (schema version 3), by its columns run_id and job_id where not. */
static int copy_job_rows(struct store *st, struct gp_err *err)
{
	bool has = false;
	if (has_table(st, MERGE_SRC, "job_rows", &has, err))
		return GP_ERUNTIME;
	if (!has)
		return GP_OK;
	char *cols = common_columns(st, "job_rows", "");
	char *tcols = common_columns(st, "job_rows", "t.");
	char *sql = NULL;
	if (!cols || !tcols)
		;
	else if (src_has_column(st, "job_rows", "job_key"))
		sql = sqlite3_mprintf(
			"INSERT INTO main.job_rows (job_key, %s) SELECT m.new << 32 | "
			"(t.job_key & 4294967295), %s FROM temp.merge_map m CROSS JOIN "
			"" MERGE_SRC ".job_rows t ON t.job_key BETWEEN m.old << 32 AND "
			"(m.old << 32) | 4294967295 ORDER BY m.seq, t.job_key",
			cols, tcols);
	else
		sql = sqlite3_mprintf(
			"INSERT INTO main.job_rows (job_key, %s) SELECT m.new << 32 | "
			"t.job_id, %s FROM " MERGE_SRC ".job_rows t JOIN "
			"temp.merge_map m ON m.old = t.run_id ORDER BY m.seq, t.job_id",
			cols, tcols);
	int rc = sql ? sti_exec(st, sql, "merging job_rows", err)
		     : sti_db_error(st, err, "reading job_rows' columns");
	sqlite3_free(sql);
	sqlite3_free(cols);
	sqlite3_free(tcols);
	return rc;
}

/* An input made before job_texts holds its job rows in a jobs table: they go
 * to job_rows and job_texts as its runs' new ids, in the runs' order. */
static int copy_old_jobs(struct store *st, struct gp_err *err)
{
	bool old = false;
	if (has_table(st, MERGE_SRC, "jobs", &old, err))
		return GP_ERUNTIME;
	if (!old)
		return GP_OK;
	char *sql = sqlite3_mprintf(
		"CREATE TEMP VIEW old_jobs AS SELECT m.seq AS k1, j.rowid AS k2, m.new AS run_id, "
		"j.job_id, j.workload, j.submit_s, j.start_s, j.end_s, j.queue_s, j.gpus, j.node, "
		"j.status, j.deadline_s, j.deadline_met, j.verified, j.cost, %s AS reason, "
		"%s AS trace_queue_s, %s AS preemptions, %s AS oom_kills FROM " MERGE_SRC ".jobs j "
		"JOIN temp.merge_map m ON m.old = j.run_id",
		src_has_column(st, "jobs", "reason") ? "j.reason" : "NULL",
		src_has_column(st, "jobs", "trace_queue_s") ? "j.trace_queue_s" : "NULL",
		src_has_column(st, "jobs", "preemptions") ? "j.preemptions" : "NULL",
		src_has_column(st, "jobs", "oom_kills") ? "j.oom_kills" : "NULL");
	int rc = sti_exec(st, sql, "merging jobs", err);
	sqlite3_free(sql);
	return rc ? rc : sti_copy_old_jobs(st, err);
}

/* The merge proper, inside one transaction on the attached input. */
static int merge_tx(struct store *st, struct store_merge_stats *stats, struct gp_err *err)
{
	bool src_points = false;
	int64_t total = 0, copied = 0;
	int rc = has_table(st, MERGE_SRC, "sweep_points", &src_points, err);
	if (!rc)
		rc = map_new_runs(st, src_points, err);
	if (!rc)
		rc = copy_tables(st, err);
	if (!rc)
		rc = copy_job_rows(st, err);
	if (!rc)
		rc = copy_old_jobs(st, err);
	if (!rc)
		rc = sti_query_int(st, "SELECT count(*) FROM temp.merge_map", &copied,
				   "counting runs", err);
	if (!rc)
		rc = sti_query_int(st, "SELECT count(*) FROM " MERGE_SRC ".runs", &total,
				   "counting runs", err);
	stats->copied = copied;
	stats->duplicates = total - copied;
	return rc;
}

int store_merge(struct store *st, const char *in_path, struct store_merge_stats *stats,
		struct gp_err *err)
{
	assert(st && in_path && stats && err);
	*stats = (struct store_merge_stats){0, 0};
	if (check_merge_input(in_path, st->path, err))
		return GP_EINPUT;
	sqlite3_stmt *s;
	if (sqlite3_prepare_v2(st->db, "ATTACH ? AS " MERGE_SRC, -1, &s, NULL) != SQLITE_OK)
		return sti_db_error(st, err, "attaching the input");
	sti_bind_text(s, 1, in_path);
	int rc = sqlite3_step(s) == SQLITE_DONE
			 ? GP_OK
			 : gp_errorf(err, GP_ERUNTIME, "%s: cannot open database: %s", in_path,
				     sqlite3_errmsg(st->db));
	sqlite3_finalize(s);
	if (rc)
		return rc;
	rc = check_merge_schema(st, MERGE_SRC, in_path, err);
	if (!rc)
		rc = sti_exec(st, "BEGIN IMMEDIATE", "starting the merge", err);
	if (!rc) {
		rc = merge_tx(st, stats, err);
		if (!rc)
			rc = sti_exec(st, "COMMIT", "committing the merge", err);
		if (rc) {
			sti_rollback(st);
			*stats = (struct store_merge_stats){0, 0};
		}
	}
	sqlite3_exec(st->db, "DETACH " MERGE_SRC, NULL, NULL, NULL);
	return rc;
}

/* Removes a database file and what SQLite keeps beside it. */
static void remove_db(const char *path)
{
	static const char *const tails[] = {"", "-journal", "-wal", "-shm"};
	for (size_t i = 0; i < sizeof tails / sizeof *tails; i++) {
		size_t n = strlen(path) + 16;
		char *p = gp_xmalloc(n);
		snprintf(p, n, "%s%s", path, tails[i]);
		unlink(p);
		free(p);
	}
}

int store_merge_open(struct store_merge_out *m, const char *out_path, struct gp_err *err)
{
	*m = (struct store_merge_out){NULL, gp_xstrdup(out_path), NULL};
	if (sti_special_name(out_path, err)) /* named as given, not as OUT.partial-PID */
		return GP_EINPUT;
	struct stat sb;
	const char *open_path = out_path;
	if (stat(out_path, &sb) != 0 && errno == ENOENT) {
		size_t n = strlen(out_path) + 32;
		m->tmp = gp_xmalloc(n);
		snprintf(m->tmp, n, "%s.partial-%ld", out_path, (long)getpid());
		remove_db(m->tmp); /* a partial file of a killed merge with this pid */
		open_path = m->tmp;
	}
	int rc = store_open(open_path, &m->st, err);
	if (rc && m->tmp)
		remove_db(m->tmp);
	return rc;
}

int store_merge_finish(struct store_merge_out *m, bool ok, struct gp_err *err)
{
	int rc = GP_OK;
	store_close(m->st);
	m->st = NULL;
	if (m->tmp && ok && rename(m->tmp, m->path) != 0)
		rc = gp_errorf(err, GP_ERUNTIME, "cannot rename %s to %s: %s", m->tmp, m->path,
			       strerror(errno));
	if (m->tmp && (!ok || rc))
		remove_db(m->tmp);
	free(m->tmp);
	free(m->path);
	m->tmp = m->path = NULL;
	return rc;
}
