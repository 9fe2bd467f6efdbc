/*
 * json.c - runs as JSON documents (see json.h).
 */
#include "gpuplan/json.h"
#include "gpuplan/report.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* The length of the UTF-8 sequence at s (1 to 4), or 0 when it is not one
 * (overlong forms, surrogates and code points past U+10FFFF included). */
static int utf8_length(const unsigned char *s)
{
	if (s[0] < 0x80)
		return 1;
	int n = s[0] >= 0xC2 && s[0] <= 0xDF   ? 2
		: s[0] >= 0xE0 && s[0] <= 0xEF ? 3
		: s[0] >= 0xF0 && s[0] <= 0xF4 ? 4
					       : 0;
	for (int i = 1; i < n; i++)
		if ((s[i] & 0xC0) != 0x80)
			return 0;
	if ((n == 3 && s[0] == 0xE0 && s[1] < 0xA0) || (n == 3 && s[0] == 0xED && s[1] >= 0xA0) ||
	    (n == 4 && s[0] == 0xF0 && s[1] < 0x90) || (n == 4 && s[0] == 0xF4 && s[1] >= 0x90))
		return 0;
	return n;
}

void json_string(FILE *out, const char *s)
{
	fputc('"', out);
	for (const unsigned char *p = (const unsigned char *)s; *p;) {
		int n = utf8_length(p);
		if (n == 0) {
			fputs("\\ufffd", out);
			p++;
		} else if (*p == '"' || *p == '\\') {
			fputc('\\', out);
			fputc(*p++, out);
		} else if (*p == '\n') {
			fputs("\\n", out), p++;
		} else if (*p == '\t') {
			fputs("\\t", out), p++;
		} else if (*p < 0x20 || *p == 0x7F) {
			fprintf(out, "\\u%04x", *p++);
		} else {
			fwrite(p, 1, (size_t)n, out);
			p += n;
		}
	}
	fputc('"', out);
}

void json_number(FILE *out, double v)
{
	if (!isfinite(v)) {
		fputs("null", out);
		return;
	}
	char buf[40];
	snprintf(buf, sizeof buf, "%.15g", v);
	if (strtod(buf, NULL) != v)
		snprintf(buf, sizeof buf, "%.17g", v);
	fputs(buf, out);
}

/* --- rows as objects ------------------------------------------------------------ */

static void json_cell(FILE *out, const struct store_cell *c)
{
	switch (c->type) {
	case STORE_INTEGER: fprintf(out, "%lld", (long long)c->integer); break;
	case STORE_REAL: json_number(out, c->real); break;
	case STORE_TEXT: json_string(out, c->text); break;
	case STORE_NULL: fputs("null", out); break;
	}
}

/* Rows of a table as an array of objects, or (key_value) one object. */
struct rows_out {
	FILE *out;
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
		fputs(ro->n++ ? ",\n  " : "\n  ", ro->out);
	}
	if (ro->key_value && n == 2) {
		json_string(ro->out, cells[0].type == STORE_TEXT ? cells[0].text : "");
		fputs(": ", ro->out);
		json_cell(ro->out, &cells[1]);
		return;
	}
	fputc('{', ro->out);
	for (size_t i = 0; i < n; i++) {
		if (i)
			fputs(", ", ro->out);
		json_string(ro->out, cells[i].name);
		fputs(": ", ro->out);
		json_cell(ro->out, &cells[i]);
	}
	fputc('}', ro->out);
}

/* "name": [rows...] or "name": {KEY: VALUE, ...} */
static int put_table(FILE *out, struct store *st, const char *name, const char *table,
		     int64_t run_id, bool key_value, struct gp_err *err)
{
	struct rows_out ro = {out, 0, key_value, false, false};
	fprintf(out, ",\n\"%s\": %c", name, key_value ? '{' : '[');
	int rc = store_each_row(st, table, run_id, put_row, &ro, err);
	fputc(key_value ? '}' : ']', out);
	return rc;
}

/* The run row itself, as an object. */
static int put_run_row(FILE *out, struct store *st, int64_t run_id, struct gp_err *err)
{
	struct rows_out ro = {out, 0, false, false, false};
	fputs(",\n\"run\": ", out); /* (put_row puts a newline before its one row) */
	return store_each_row(st, "runs", run_id, put_row, &ro, err);
}

/* --- metrics by scope ------------------------------------------------------------- */

static void put_scope(FILE *out, const struct metric *m, size_t n, const char *scope)
{
	bool first = true;
	fputc('{', out);
	for (size_t i = 0; i < n; i++) {
		if (strcmp(m[i].scope, scope))
			continue;
		fputs(first ? "" : ", ", out);
		first = false;
		json_string(out, m[i].name);
		fputs(": ", out);
		json_number(out, m[i].value);
	}
	fputc('}', out);
}

/* "summary", "metrics" (scopes in the order they first appear) and "units". */
static void put_metrics(FILE *out, const struct metric *m, size_t n)
{
	fputs(",\n\"summary\": ", out);
	put_scope(out, m, n, "all");
	fputs(",\n\"metrics\": {", out);
	size_t scopes = 0;
	for (size_t i = 0; i < n; i++) {
		bool seen = false;
		for (size_t k = 0; k < i && !seen; k++)
			seen = !strcmp(m[k].scope, m[i].scope);
		if (seen)
			continue;
		fputs(scopes++ ? ",\n  " : "\n  ", out);
		json_string(out, m[i].scope);
		fputs(": ", out);
		put_scope(out, m, n, m[i].scope);
	}
	fputs("},\n\"units\": {", out);
	size_t units = 0;
	for (size_t i = 0; i < n; i++) {
		bool seen = false;
		for (size_t k = 0; k < i && !seen; k++)
			seen = !strcmp(m[k].name, m[i].name);
		if (seen)
			continue;
		fputs(units++ ? ", " : "", out);
		json_string(out, m[i].name);
		fputs(": ", out);
		json_string(out, m[i].unit);
	}
	fputc('}', out);
}

/* The members of a run's document, after its opening brace. */
static int put_run(FILE *out, struct store *st, const char *db, int64_t run_id, struct gp_err *err)
{
	struct store_run run;
	int rc = store_run_info(st, run_id, &run, err);
	if (rc)
		return rc;
	fputs("\"db\": ", out);
	json_string(out, db);
	fprintf(out, ",\n\"run_id\": %lld", (long long)run.run_id);
	rc = put_run_row(out, st, run.run_id, err);
	if (!rc)
		rc = put_table(out, st, "params", "params", run.run_id, true, err);
	struct metric *m = NULL;
	size_t n = 0;
	if (!rc)
		rc = store_read_metrics(st, run.run_id, &m, &n, err);
	if (!rc)
		put_metrics(out, m, n);
	store_free_metrics(m, n);
	if (!rc)
		rc = put_table(out, st, "findings", "findings", run.run_id, false, err);
	return rc;
}

int json_write_run(FILE *out, struct store *st, const char *db, int64_t run_id, struct gp_err *err)
{
	fputc('{', out);
	int rc = put_run(out, st, db, run_id, err);
	fputs("}\n", out);
	return rc;
}

int json_write_advice(FILE *out, struct store *st, const char *db, int64_t base_run,
		      struct gp_err *err)
{
	fputs("{\"db\": ", out);
	json_string(out, db);
	fputs(",\n\"base\": {", out);
	int rc = put_run(out, st, db, base_run, err);
	fputc('}', out);
	if (!rc)
		rc = put_table(out, st, "alternatives", "advice", base_run, false, err);
	if (!rc) {
		struct rows_out ro = {out, 0, false, true, false};
		fputs(",\n\"recommendation\": ", out);
		rc = store_each_row(st, "advice", base_run, put_row, &ro, err);
		if (!ro.wrote)
			fputs("null", out);
	}
	fputs("}\n", out);
	return rc;
}

void json_write_backtest(FILE *out, const struct scenario *twin, const struct results *r,
			 const struct report_backtest_info *info)
{
	fprintf(out, "{\"db\": ");
	json_string(out, info->db);
	fprintf(out, ", \"run_id\": %lld, \"scenario\": ", (long long)info->run_id);
	json_string(out, twin->name);
	fprintf(out,
		", \"observed_pods\": %zu, \"replayed_pods\": %zu, \"tolerance\": ", info->observed,
		info->replayed);
	json_number(out, info->tolerance);
	bool all_within = true;
	fprintf(out, ",\n \"rows\": [");
	for (size_t i = 0; i < r->n_backtest; i++) {
		const struct backtest_row *b = &r->backtest[i];
		bool ok = results_backtest_within(b, info->tolerance);
		all_within &= ok;
		fprintf(out, "%s\n  {\"scope\": ", i ? "," : "");
		json_string(out, b->scope);
		fprintf(out, ", \"metric\": ");
		json_string(out, b->metric);
		fprintf(out, ", \"observed\": ");
		json_number(out, b->observed);
		fprintf(out, ", \"simulated\": ");
		json_number(out, b->simulated);
		fprintf(out, ", \"error\": ");
		json_number(out, b->error);
		fprintf(out, ", \"within\": %s}", ok ? "true" : "false");
	}
	fprintf(out, "],\n \"within_tolerance\": %s,\n \"could_not_model\": [",
		all_within ? "true" : "false");
	for (size_t i = 0; i < r->n_gaps; i++) {
		const struct backtest_gap *g = &r->gaps[i];
		char text[768];
		fprintf(out, "%s\n  {\"kind\": ", i ? "," : "");
		json_string(out, report_gap_names[g->kind]);
		fprintf(out, ", \"pods\": %lld, \"text\": ", (long long)g->pods);
		json_string(out, report_gap_text(g, text, sizeof text));
		fprintf(out, "}");
	}
	fprintf(out, "]}\n");
}
