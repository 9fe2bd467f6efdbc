/*
 * test_json.c - `run --json` and `advise --json` (json.h): the escaping of
 * strings and numbers (RFC 8259, https://www.rfc-editor.org/rfc/rfc8259:
 * quotation mark, reverse solidus and the control characters U+0000 to
 * U+001F must be escaped; text is UTF-8; numbers have no NaN or Infinity),
 * and whole documents checked with SQLite's JSON functions (json_valid,
 * json_extract: https://sqlite.org/json1.html) against the rows of the
 * database they describe, and with python3 -m json.tool when it is there.
 */
#include <criterion/criterion.h>

#include "scratch.h"

#include <math.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpuplan/json.h"
#include "gpuplan/jsonw.h"

TestSuite(json, .init = scratch_make, .fini = scratch_remove, .timeout = 120);

static char out[1 << 20];

/* What fn writes for one value, as a string. */
static const char *written_string(const char *s)
{
	static char buf[256];
	FILE *f = fmemopen(buf, sizeof buf, "w");
	jsonw_quote(f, s);
	fclose(f);
	return buf;
}

static const char *written_number(double v)
{
	static char buf[64];
	FILE *f = fmemopen(buf, sizeof buf, "w");
	struct jsonw w;
	jsonw_init(&w, f);
	jsonw_number(&w, v);
	fclose(f);
	return buf;
}

Test(json, strings_escape_quotes_backslashes_and_control_characters)
{
	cr_expect_str_eq(written_string("plain"), "\"plain\"");
	cr_expect_str_eq(written_string("a\"b\\c"), "\"a\\\"b\\\\c\"");
	cr_expect_str_eq(written_string("line\nnext\ttab"), "\"line\\nnext\\ttab\"");
	cr_expect_str_eq(written_string("\x01\x1f\x7f"), "\"\\u0001\\u001f\\u007f\"");
	/* UTF-8 passes through: é (C3 A9), 日 (E6 97 A5), 😀 (F0 9F 98 80). */
	cr_expect_str_eq(written_string("\xc3\xa9\xe6\x97\xa5\xf0\x9f\x98\x80"),
			 "\"\xc3\xa9\xe6\x97\xa5\xf0\x9f\x98\x80\"");
}

Test(json, bytes_that_are_not_utf8_become_the_replacement_character)
{
	/* A lone continuation byte, a truncated sequence, an overlong '/'
	 * (C0 AF) and a UTF-16 surrogate (ED A0 80) are not UTF-8. */
	cr_expect_str_eq(written_string("a\x80z"), "\"a\\ufffdz\"");
	cr_expect_str_eq(written_string("\xe6\x97"), "\"\\ufffd\\ufffd\"");
	cr_expect_str_eq(written_string("\xc0\xaf"), "\"\\ufffd\\ufffd\"");
	cr_expect_str_eq(written_string("\xed\xa0\x80"), "\"\\ufffd\\ufffd\\ufffd\"");
}

Test(json, numbers_are_the_shortest_that_read_back_and_not_finite_is_null)
{
	cr_expect_str_eq(written_number(16), "16");
	cr_expect_str_eq(written_number(0.1), "0.1");
	cr_expect_str_eq(written_number(-2.5e-7), "-2.5e-07");
	cr_expect_eq(strtod(written_number(1.0 / 3), NULL), 1.0 / 3);
	cr_expect_str_eq(written_number(NAN), "null");
	cr_expect_str_eq(written_number(INFINITY), "null");
}

/* The writer puts the commas, colons and brackets; the style only the white
 * space. */
Test(json, the_writer_nests_and_separates)
{
	static char buf[256];
	FILE *f = fmemopen(buf, sizeof buf, "w");
	struct jsonw w;
	static const struct jsonw_style lines = {"\n  ", "\n  ", "\n", " "};
	jsonw_init(&w, f);
	jsonw_object(&w, &lines);
	jsonw_key(&w, "a");
	jsonw_array(&w, &jsonw_compact);
	jsonw_int(&w, -3);
	jsonw_bool(&w, true);
	jsonw_null(&w);
	jsonw_close(&w);
	jsonw_key(&w, "b");
	jsonw_object(&w, &jsonw_inline);
	jsonw_close(&w);
	jsonw_key(&w, "c\"");
	jsonw_object(&w, &jsonw_inline);
	jsonw_key(&w, "x");
	jsonw_raw(&w, "{\"k\":1}");
	jsonw_key(&w, "y");
	jsonw_string(&w, "z");
	jsonw_close(&w);
	jsonw_close(&w);
	fclose(f);
	cr_expect_str_eq(buf, "{\n  \"a\": [-3,true,null],\n  \"b\": {},\n"
			      "  \"c\\\"\": {\"x\": {\"k\":1}, \"y\": \"z\"}\n}");
}

/* One rule for reals, at the precision the document names. */
Test(json, reals_at_a_named_precision)
{
	static char buf[256];
	FILE *f = fmemopen(buf, sizeof buf, "w");
	struct jsonw w;
	jsonw_init(&w, f);
	jsonw_array(&w, &jsonw_compact);
	jsonw_real(&w, 2.0 / 3, JSONW_DEC(4));
	jsonw_real(&w, 7e9, JSONW_DEC(0));
	jsonw_real(&w, 2.0 / 3, JSONW_SIG(6));
	jsonw_real(&w, 1e20, JSONW_SIG(15));
	jsonw_real(&w, NAN, JSONW_DEC(2));
	jsonw_close(&w);
	fclose(f);
	cr_expect_str_eq(buf, "[0.6667,7000000000,0.666667,1e+20,null]");
}

/* The one value a query returns, as text ("" for NULL). */
static const char *query(const char *db, const char *sql, const char *bind)
{
	static char buf[4096];
	sqlite3 *h;
	sqlite3_stmt *s;
	buf[0] = '\0';
	cr_assert_eq(sqlite3_open_v2(db, &h, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
	cr_assert_eq(sqlite3_prepare_v2(h, sql, -1, &s, NULL), SQLITE_OK, "%s: %s", sql,
		     sqlite3_errmsg(h));
	if (bind)
		sqlite3_bind_text(s, 1, bind, -1, SQLITE_STATIC);
	if (sqlite3_step(s) == SQLITE_ROW && sqlite3_column_text(s, 0))
		snprintf(buf, sizeof buf, "%s", (const char *)sqlite3_column_text(s, 0));
	sqlite3_finalize(s);
	sqlite3_close(h);
	return buf;
}

/* Runs a gpuplan command line with stdout into DIR/out.json (stderr apart);
 * returns its exit code and leaves the document in out. */
static int gpuplan_json(const char *args)
{
	char cmd[2048], p[128];
	snprintf(p, sizeof p, "%s/out.json", dir);
	snprintf(cmd, sizeof cmd, "bin/gpuplan %s > %s 2>%s/err", args, p, dir);
	int rc = system(cmd);
	FILE *f = fopen(p, "r");
	cr_assert_not_null(f);
	size_t n = fread(out, 1, sizeof out - 1, f);
	out[n] = '\0';
	fclose(f);
	return WEXITSTATUS(rc);
}

/* json_extract(the document, path) compared in SQL with a query on db:
 * "the same" as SQLite sees it (numbers as numbers). */
static void expect_same(const char *db, const char *path, const char *sql)
{
	char q[1024];
	snprintf(q, sizeof q, "SELECT json_extract(?1, '%s') IS (%s)", path, sql);
	cr_expect_str_eq(query(db, q, out), "1", "%s vs %s", path, sql);
}

static void expect_valid(void)
{
	cr_assert_str_eq(query(":memory:", "SELECT json_valid(?1)", out), "1", "%s", out);
	if (system("command -v python3 >/dev/null 2>&1") == 0) {
		char cmd[256];
		snprintf(cmd, sizeof cmd, "python3 -m json.tool %s/out.json >/dev/null", dir);
		cr_expect_eq(system(cmd), 0, "python3 -m json.tool refuses it");
	}
}

Test(json, run_json_is_one_document_of_the_runs_rows)
{
	char args[512], db[128];
	snprintf(db, sizeof db, "%s/r.db", dir);
	/* A --set value with double quotes reaches params as given. */
	snprintf(
		args, sizeof args,
		"run scenarios/quickstart.yaml --db %s --json --set 'pools.a100.gpu=\"A100-80GB\"'",
		db);
	cr_assert_eq(gpuplan_json(args), 0, "%s", out);
	expect_valid();
	expect_same(db, "$.run_id", "SELECT max(run_id) FROM runs");
	expect_same(db, "$.run.name", "SELECT name FROM runs");
	expect_same(db, "$.run.seed", "SELECT seed FROM runs");
	expect_same(db, "$.params.\"pools.a100.gpu\"", "SELECT '\"A100-80GB\"'");
	expect_same(db, "$.summary.queue_time_p95_s",
		    "SELECT value FROM metrics WHERE scope = 'all' AND name = 'queue_time_p95_s'");
	expect_same(
		db, "$.metrics.a100.gpu_allocation_pct",
		"SELECT value FROM metrics WHERE scope = 'a100' AND name = 'gpu_allocation_pct'");
	expect_same(db, "$.metrics.eval.jobs_completed",
		    "SELECT value FROM metrics WHERE scope = 'eval' AND name = 'jobs_completed'");
	expect_same(db, "$.units.cost_total", "SELECT 'usd'");
	/* Metrics that do not apply are null, as in the table. */
	char q[256];
	snprintf(q, sizeof q, "SELECT json_type(?1, '$.summary.slo_attainment_pct')");
	const char *t = query(db, q, out);
	cr_expect(!strcmp(t, "") || !strcmp(t, "null") || !strcmp(t, "real"), "%s", t);
	/* Every metric row is in the document once. */
	expect_same(db, "$.summary", "SELECT json_extract(?1, '$.metrics.all')");
	char count[256];
	snprintf(count, sizeof count,
		 "SELECT (SELECT count(*) FROM json_tree(?1, '$.metrics') WHERE type IN "
		 "('integer', 'real', 'null') AND path LIKE '$.metrics.%%') = "
		 "(SELECT count(*) FROM metrics)");
	cr_expect_str_eq(query(db, count, out), "1", "every metric");
	cr_expect_eq(out[strlen(out) - 1], '\n');
}

Test(json, run_json_carries_the_findings_in_rank_order)
{
	char args[512], db[128];
	snprintf(db, sizeof db, "%s/f.db", dir);
	snprintf(args, sizeof args, "run tests/fixtures/diagnose/allocation.yaml --db %s --json",
		 db);
	cr_assert_eq(gpuplan_json(args), 0, "%s", out);
	expect_valid();
	cr_assert_neq(atoi(query(db, "SELECT count(*) FROM findings", NULL)), 0);
	expect_same(db, "$.findings[0].finding",
		    "SELECT finding FROM findings ORDER BY rank LIMIT 1");
	expect_same(db, "$.findings[0].evidence",
		    "SELECT evidence FROM findings ORDER BY rank LIMIT 1");
	expect_same(db, "$.findings[0].step", "SELECT step FROM findings ORDER BY rank LIMIT 1");
	char q[256];
	snprintf(q, sizeof q,
		 "SELECT json_array_length(?1, '$.findings') = (SELECT count(*) FROM findings)");
	cr_expect_str_eq(query(db, q, out), "1");
}

Test(json, advise_json_ranks_the_alternatives_of_the_base_run)
{
	char args[512], db[128];
	snprintf(db, sizeof db, "%s/a.db", dir);
	snprintf(args, sizeof args, "advise tests/fixtures/diagnose/allocation.yaml --db %s --json",
		 db);
	cr_assert_eq(gpuplan_json(args), 0, "%s", out);
	expect_valid();
	char q[512];
	snprintf(q, sizeof q,
		 "SELECT json_array_length(?1, '$.alternatives') = (SELECT count(*) FROM advice) "
		 "AND json_array_length(?1, '$.alternatives') > 1");
	cr_expect_str_eq(query(db, q, out), "1", "%s", out);
	expect_same(db, "$.base.run_id", "SELECT DISTINCT run_id FROM advice");
	expect_same(db, "$.alternatives[0].alternative",
		    "SELECT alternative FROM advice WHERE rank = 1");
	expect_same(db, "$.alternatives[0].alternative_run_id",
		    "SELECT alternative_run_id FROM advice WHERE rank = 1");
	expect_same(db, "$.base.findings[0].kind",
		    "SELECT kind FROM findings f JOIN advice a "
		    "ON a.run_id = f.run_id AND a.rank = 1 ORDER BY f.rank LIMIT 1");
	/* The recommendation is the first alternative when it meets, else null. */
	snprintf(q, sizeof q,
		 "SELECT CASE (SELECT meets FROM advice WHERE rank = 1) WHEN 1 THEN "
		 "json_extract(?1, '$.recommendation') = json_extract(?1, '$.alternatives[0]') "
		 "ELSE json_type(?1, '$.recommendation') = 'null' END");
	cr_expect_str_eq(query(db, q, out), "1", "%s", out);
}

Test(json, a_bad_scenario_prints_no_document_and_exits_2)
{
	char args[512];
	snprintf(args, sizeof args,
		 "run tests/fixtures/bad/arrival-before-start.yaml --db %s/x.db --json", dir);
	cr_expect_eq(gpuplan_json(args), 2);
	cr_expect_str_eq(out, "", "nothing on stdout");
}
