/*
 * import_prom.c - Prometheus HTTP API responses, streamed (see import_hist.h).
 *
 * A recursive descent over libyaml's events: one function per level of the
 * response (the document, data, result, an item, its metric and value), and
 * skip() for members gpuplan does not read (warnings, infos, histograms).
 * The labels and points of the current item live in buffers that are reused
 * from item to item, so memory is the widest item's, whatever the file's
 * length.  Timestamps are JSON numbers; sample values are strings, as the
 * API writes them ("1.5", "NaN", "+Inf").
 */
#include "import_hist.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

#define PROM_MAX_DEPTH 64

struct reader {
	yaml_parser_t parser;
	FILE *f;
	const char *path;
	struct gp_err *err;
	struct prom_series s;
	/* label strings: offsets into text while an item is read */
	char *text;
	size_t text_len, text_cap;
	size_t *name_at, *value_at;
	const char **names, **values;
	struct srcloc *locs;
	size_t cap_labels;
	double *ts, *vs;
	size_t cap_points;
	char *key; /* the current map key */
	size_t key_cap;
	char status[16], result_type[16];
	bool seen_result;
};

static struct srcloc mark(const struct reader *r, yaml_mark_t m)
{
	return (struct srcloc){r->path, (int)m.line + 1, (int)m.column + 1};
}

static int parse_error(struct reader *r)
{
	const yaml_parser_t *p = &r->parser;
	if (p->error == YAML_MEMORY_ERROR)
		return gp_errorf(r->err, GP_ERUNTIME, "%s: error: out of memory", r->path);
	return gp_located(r->err, mark(r, p->problem_mark),
			  "%s; expected a Prometheus API response (JSON)",
			  p->problem ? p->problem : "invalid JSON");
}

static int next(struct reader *r, yaml_event_t *ev)
{
	if (!yaml_parser_parse(&r->parser, ev))
		return parse_error(r);
	return GP_OK;
}

/* Consumes the rest of the node that ev opened, and ev. */
static int skip(struct reader *r, yaml_event_t *ev)
{
	int depth = ev->type == YAML_MAPPING_START_EVENT || ev->type == YAML_SEQUENCE_START_EVENT;
	yaml_event_delete(ev);
	while (depth > 0) {
		yaml_event_t e;
		int rc = next(r, &e);
		if (rc)
			return rc;
		/* libyaml's scanner costs O(depth^2): stop a hostile nesting early */
		if ((e.type == YAML_MAPPING_START_EVENT || e.type == YAML_SEQUENCE_START_EVENT) &&
		    ++depth > PROM_MAX_DEPTH) {
			rc = gp_located(r->err, mark(r, e.start_mark),
					"nesting deeper than %d levels; expected a Prometheus API "
					"response",
					PROM_MAX_DEPTH);
			yaml_event_delete(&e);
			return rc;
		} else if (e.type == YAML_MAPPING_END_EVENT || e.type == YAML_SEQUENCE_END_EVENT)
			depth--;
		yaml_event_delete(&e);
	}
	return GP_OK;
}

/* Skips the value of a member gpuplan does not read. */
static int skip_value(struct reader *r)
{
	yaml_event_t ev;
	int rc = next(r, &ev);
	return rc ? rc : skip(r, &ev);
}

static const char *kind_name(yaml_event_type_t t)
{
	switch (t) {
	case YAML_MAPPING_START_EVENT: return "an object";
	case YAML_SEQUENCE_START_EVENT: return "an array";
	case YAML_SCALAR_EVENT: return "a value";
	default: return "nothing";
	}
}

/* An error at ev for the JSON path path: expected what. */
static int expected(struct reader *r, const yaml_event_t *ev, const char *path, const char *what)
{
	return gp_located(r->err, mark(r, ev->start_mark), "%s: expected %s, got %s", path, what,
			  kind_name(ev->type));
}

static int open_node(struct reader *r, yaml_event_type_t type, const char *path, const char *what)
{
	yaml_event_t ev;
	int rc = next(r, &ev);
	if (rc)
		return rc;
	if (ev.type != type)
		rc = expected(r, &ev, path, what);
	yaml_event_delete(&ev);
	return rc;
}

/* The next key of an open map, or NULL at its end: *key is valid until the
 * next call (callers compare it before they read deeper). */
static int next_key(struct reader *r, const char **key, yaml_mark_t *at)
{
	yaml_event_t ev;
	*key = NULL;
	int rc = next(r, &ev);
	if (rc)
		return rc;
	if (ev.type == YAML_SCALAR_EVENT) {
		GP_GROW(r->key, r->key_cap, ev.data.scalar.length + 1);
		memcpy(r->key, ev.data.scalar.value, ev.data.scalar.length + 1);
		*key = r->key;
		*at = ev.start_mark;
	}
	yaml_event_delete(&ev);
	return GP_OK;
}

/* The next item of an open array into *ev, or *end at the array's end (its
 * event consumed). */
static int next_item(struct reader *r, yaml_event_t *ev, bool *end)
{
	int rc = next(r, ev);
	*end = !rc && ev->type == YAML_SEQUENCE_END_EVENT;
	if (*end)
		yaml_event_delete(ev);
	return rc;
}

/* What the readers of a map's values share: the callback and the path of the
 * map being read. */
struct walk {
	prom_fn fn;
	void *ctx;
	const char *path;
};

#define N_RULES(a) (sizeof(a) / sizeof *(a))

/* A key of a map (NULL: any key) and what reads its value. */
struct prom_key {
	const char *key;
	int (*read)(struct reader *r, const char *key, yaml_mark_t at, struct walk *wk);
};

/* Reads the keys of an open map up to its end, each by the first rule that
 * names it; a key no rule names is skipped. */
static int keys(struct reader *r, const struct prom_key *rules, size_t n, struct walk *wk)
{
	for (;;) {
		const char *key;
		yaml_mark_t at;
		int rc = next_key(r, &key, &at);
		if (rc || !key)
			return rc;
		size_t i = 0;
		while (i < n && rules[i].key && strcmp(key, rules[i].key))
			i++;
		if ((rc = i < n ? rules[i].read(r, key, at, wk) : skip_value(r)))
			return rc;
	}
}

static void key_step(char *buf, size_t size, const char *base, const char *key);

/* A scalar: copied into the reader's text; its offset in *at.  Its JSON
 * path is path, or path's member key when key is not NULL (made only for
 * an error: most files are labels, and most labels are right). */
static int scalar_in(struct reader *r, const char *path, const char *key, size_t *at,
		     struct srcloc *loc)
{
	yaml_event_t ev;
	int rc = next(r, &ev);
	if (rc)
		return rc;
	if (ev.type != YAML_SCALAR_EVENT) {
		char full[400];
		if (key)
			key_step(full, sizeof full, path, key);
		rc = expected(r, &ev, key ? full : path, "a string");
		skip(r, &ev);
		return rc;
	}
	size_t len = ev.data.scalar.length + 1;
	GP_GROW(r->text, r->text_cap, r->text_len + len);
	memcpy(r->text + r->text_len, ev.data.scalar.value, len);
	*at = r->text_len;
	r->text_len += len;
	*loc = mark(r, ev.start_mark);
	yaml_event_delete(&ev);
	return GP_OK;
}

static int scalar(struct reader *r, const char *path, size_t *at, struct srcloc *loc)
{
	return scalar_in(r, path, NULL, at, loc);
}

/* A number, as JSON writes it or as the API writes a sample (a string). */
static int number(struct reader *r, const char *path, double *out, struct srcloc *loc)
{
	size_t at, len0 = r->text_len;
	int rc = scalar(r, path, &at, loc);
	if (rc)
		return rc;
	const char *s = r->text + at;
	char *end;
	errno = 0;
	*out = strtod(s, &end);
	if (!*s || *end || errno == ERANGE)
		rc = gp_located(r->err, *loc, "%s: expected a number, got '%s'", path, s);
	r->text_len = len0;
	return rc;
}

static void key_step(char *buf, size_t size, const char *base, const char *key)
{
	bool ident = (key[0] < '0' || key[0] > '9') && key[0];
	for (const char *c = key; *c && ident; c++)
		ident = (*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') ||
			(*c >= '0' && *c <= '9') || *c == '_';
	if (ident)
		snprintf(buf, size, "%s.%s", base, key);
	else
		snprintf(buf, size, "%s[\"%s\"]", base, key);
}

/* One label of "metric": its name (key) and its value. */
static int label(struct reader *r, const char *key, yaml_mark_t at, struct walk *wk)
{
	(void)at;
	size_t n = r->s.n_labels;
	if (n == r->cap_labels) {
		r->cap_labels = r->cap_labels ? 2 * r->cap_labels : 16;
		r->name_at = gp_xrealloc(r->name_at, r->cap_labels * sizeof *r->name_at);
		r->value_at = gp_xrealloc(r->value_at, r->cap_labels * sizeof *r->value_at);
		r->locs = gp_xrealloc(r->locs, r->cap_labels * sizeof *r->locs);
		r->names = gp_xrealloc(r->names, r->cap_labels * sizeof *r->names);
		r->values = gp_xrealloc(r->values, r->cap_labels * sizeof *r->values);
	}
	size_t len = strlen(key) + 1;
	GP_GROW(r->text, r->text_cap, r->text_len + len);
	memcpy(r->text + r->text_len, key, len);
	r->name_at[n] = r->text_len;
	r->text_len += len;
	int rc = scalar_in(r, wk->path, r->text + r->name_at[n], &r->value_at[n], &r->locs[n]);
	if (!rc)
		r->s.n_labels++;
	return rc;
}

/* "metric": {"label": "value", ...} */
static int metric(struct reader *r, const char *item)
{
	static const struct prom_key rules[] = {{NULL, label}};
	char path[320];
	snprintf(path, sizeof path, "%s.metric", item);
	int rc = open_node(r, YAML_MAPPING_START_EVENT, path, "an object of labels");
	struct walk wk = {NULL, NULL, path};
	return rc ? rc : keys(r, rules, 1, &wk);
}

/* "value": [t, "v"] */
static int pair(struct reader *r, const char *path, double *t, double *v, struct srcloc *vloc)
{
	yaml_event_t ev;
	char step[360];
	int rc = open_node(r, YAML_SEQUENCE_START_EVENT, path, "[timestamp, \"value\"]");
	if (rc)
		return rc;
	struct srcloc loc;
	snprintf(step, sizeof step, "%s[0]", path);
	if ((rc = number(r, step, t, &loc)))
		return rc;
	snprintf(step, sizeof step, "%s[1]", path);
	if ((rc = number(r, step, v, vloc)))
		return rc;
	if ((rc = next(r, &ev)))
		return rc;
	if (ev.type != YAML_SEQUENCE_END_EVENT) {
		rc = gp_located(r->err, mark(r, ev.start_mark),
				"%s: expected [timestamp, \"value\"], got more items", path);
		skip(r, &ev);
		return rc;
	}
	yaml_event_delete(&ev);
	return GP_OK;
}

/* "values": [[t, "v"], ...] */
static int points(struct reader *r, const char *item)
{
	char path[320], step[340];
	yaml_event_t ev;
	snprintf(path, sizeof path, "%s.values", item);
	int rc = open_node(r, YAML_SEQUENCE_START_EVENT, path, "an array of points");
	if (rc)
		return rc;
	for (size_t i = 0;; i++) {
		/* peek: an end, or the next pair (whose start event pair() reads) */
		bool end;
		if ((rc = next_item(r, &ev, &end)) || end)
			return rc;
		snprintf(step, sizeof step, "%s[%zu]", path, i);
		if (ev.type != YAML_SEQUENCE_START_EVENT) {
			rc = expected(r, &ev, step, "[timestamp, \"value\"]");
			skip(r, &ev);
			return rc;
		}
		yaml_event_delete(&ev);
		if (r->s.n_points == r->cap_points) {
			r->cap_points = r->cap_points ? 2 * r->cap_points : 64;
			r->ts = gp_xrealloc(r->ts, r->cap_points * sizeof *r->ts);
			r->vs = gp_xrealloc(r->vs, r->cap_points * sizeof *r->vs);
		}
		struct srcloc loc, vloc;
		char sub[360];
		snprintf(sub, sizeof sub, "%s[0]", step);
		if ((rc = number(r, sub, &r->ts[r->s.n_points], &loc)))
			return rc;
		snprintf(sub, sizeof sub, "%s[1]", step);
		if ((rc = number(r, sub, &r->vs[r->s.n_points], &vloc)))
			return rc;
		if (!r->s.n_points)
			r->s.value_loc = vloc;
		r->s.n_points++;
		if ((rc = next(r, &ev)))
			return rc;
		if (ev.type != YAML_SEQUENCE_END_EVENT) {
			rc = gp_located(r->err, mark(r, ev.start_mark),
					"%s: expected [timestamp, \"value\"], got more items",
					step);
			skip(r, &ev);
			return rc;
		}
		yaml_event_delete(&ev);
	}
}

/* An item's "metric", "value" and "values" (wk->path: the item's). */
static int item_metric(struct reader *r, const char *key, yaml_mark_t at, struct walk *wk)
{
	(void)key, (void)at;
	return metric(r, wk->path);
}

static int item_value(struct reader *r, const char *key, yaml_mark_t at, struct walk *wk)
{
	(void)key, (void)at;
	char vp[96];
	snprintf(vp, sizeof vp, "%s.value", wk->path);
	int rc = pair(r, vp, &r->s.t, &r->s.v, &r->s.value_loc);
	r->s.has_value = true;
	return rc;
}

static int item_values(struct reader *r, const char *key, yaml_mark_t at, struct walk *wk)
{
	(void)key, (void)at;
	return points(r, wk->path);
}

/* One item of data.result, then the callback. */
static int item(struct reader *r, size_t index, yaml_event_t *start, prom_fn fn, void *ctx)
{
	char path[64];
	snprintf(path, sizeof path, ".data.result[%zu]", index);
	if (start->type != YAML_MAPPING_START_EVENT) {
		int rc = expected(r, start, path, "an object with metric and value");
		skip(r, start);
		return rc;
	}
	r->s = (struct prom_series){
		.file = r->path, .index = index, .loc = mark(r, start->start_mark)};
	yaml_event_delete(start);
	r->text_len = 0;
	static const struct prom_key rules[] = {
		{"metric", item_metric}, {"value", item_value}, {"values", item_values}};
	struct walk wk = {fn, ctx, path};
	int rc = keys(r, rules, N_RULES(rules), &wk);
	if (rc)
		return rc;
	if (!r->s.has_value && !r->s.n_points)
		return gp_located(r->err, r->s.loc, "%s: expected a value or values", path);
	for (size_t i = 0; i < r->s.n_labels; i++) {
		r->names[i] = r->text + r->name_at[i];
		r->values[i] = r->text + r->value_at[i];
	}
	r->s.names = r->names;
	r->s.values = r->values;
	r->s.locs = r->locs;
	r->s.ts = r->ts;
	r->s.vs = r->vs;
	return fn(ctx, &r->s, r->err);
}

static int result(struct reader *r, prom_fn fn, void *ctx)
{
	yaml_event_t ev;
	int rc = open_node(r, YAML_SEQUENCE_START_EVENT, ".data.result", "an array");
	if (rc)
		return rc;
	r->seen_result = true;
	for (size_t i = 0;; i++) {
		bool end;
		if ((rc = next_item(r, &ev, &end)) || end)
			return rc;
		if ((rc = item(r, i, &ev, fn, ctx)))
			return rc;
	}
}

static int short_text(struct reader *r, const char *path, char *buf, size_t size)
{
	size_t at, len0 = r->text_len;
	struct srcloc loc;
	int rc = scalar(r, path, &at, &loc);
	if (!rc)
		snprintf(buf, size, "%s", r->text + at);
	r->text_len = len0;
	return rc;
}

/* A short text member that must be one of words (NULL-terminated); else
 * the error message why (its %s the text) at the member. */
static int word(struct reader *r, yaml_mark_t at, const char *path, char *buf, size_t size,
		const char *const *words, const char *why)
{
	int rc = short_text(r, path, buf, size);
	if (rc)
		return rc;
	for (const char *const *w = words; *w; w++)
		if (!strcmp(buf, *w))
			return GP_OK;
	return gp_located(r->err, mark(r, at), why, buf);
}

static int data_type(struct reader *r, const char *key, yaml_mark_t at, struct walk *wk)
{
	(void)key, (void)wk;
	static const char *const types[] = {"vector", "matrix", NULL};
	return word(r, at, ".data.resultType", r->result_type, sizeof r->result_type, types,
		    ".data.resultType: expected vector or matrix, got '%s'");
}

static int data_result(struct reader *r, const char *key, yaml_mark_t at, struct walk *wk)
{
	(void)key, (void)at;
	return result(r, wk->fn, wk->ctx);
}

static int data(struct reader *r, const char *key, yaml_mark_t at, struct walk *wk)
{
	(void)key, (void)at;
	static const struct prom_key rules[] = {{"resultType", data_type}, {"result", data_result}};
	int rc = open_node(r, YAML_MAPPING_START_EVENT, ".data", "an object");
	return rc ? rc : keys(r, rules, N_RULES(rules), wk);
}

static int status(struct reader *r, const char *key, yaml_mark_t at, struct walk *wk)
{
	(void)key, (void)wk;
	static const char *const ok[] = {"success", NULL};
	return word(r, at, ".status", r->status, sizeof r->status, ok,
		    ".status: the query failed ('%s'); expected success");
}

static int document(struct reader *r, prom_fn fn, void *ctx)
{
	yaml_event_t ev;
	int rc;
	for (;;) { /* stream and document starts */
		if ((rc = next(r, &ev)))
			return rc;
		if (ev.type == YAML_MAPPING_START_EVENT)
			break;
		if (ev.type != YAML_STREAM_START_EVENT && ev.type != YAML_DOCUMENT_START_EVENT) {
			rc = ev.type == YAML_STREAM_END_EVENT
				     ? gp_located(r->err, (struct srcloc){r->path, 1, 1},
						  "empty file; expected a Prometheus API response")
				     : expected(r, &ev, ".", "an object");
			yaml_event_delete(&ev);
			return rc;
		}
		yaml_event_delete(&ev);
	}
	yaml_event_delete(&ev);
	static const struct prom_key rules[] = {{"status", status}, {"data", data}};
	struct walk wk = {fn, ctx, "."};
	if ((rc = keys(r, rules, N_RULES(rules), &wk)))
		return rc;
	if (!r->seen_result)
		return gp_located(r->err, (struct srcloc){r->path, 1, 1},
				  ".data.result: missing; expected a Prometheus API response");
	return GP_OK;
}

int import_prom_read(const char *path, prom_fn fn, void *ctx, struct gp_err *err)
{
	const char *why = NULL;
	struct reader r = {.path = path, .err = err};
	r.f = gp_open_input(path, &why);
	if (!r.f)
		return gp_located(err, (struct srcloc){path, 0, 0}, "cannot read: %s", why);
	if (!yaml_parser_initialize(&r.parser)) {
		fclose(r.f);
		return gp_errorf(err, GP_ERUNTIME, "%s: error: cannot initialize libyaml", path);
	}
	yaml_parser_set_input_file(&r.parser, r.f);
	int rc = document(&r, fn, ctx);
	yaml_parser_delete(&r.parser);
	fclose(r.f);
	free(r.text);
	free(r.key);
	free(r.name_at);
	free(r.value_at);
	free(r.names);
	free(r.values);
	free(r.locs);
	free(r.ts);
	free(r.vs);
	return rc;
}

const char *import_prom_label(const struct prom_series *s, const char *name)
{
	for (size_t i = 0; i < s->n_labels; i++)
		if (!strcmp(s->names[i], name))
			return s->values[i];
	return NULL;
}

int import_prom_error(struct gp_err *err, const struct prom_series *s, const char *name,
		      const char *fmt, ...)
{
	char path[400];
	va_list ap;
	va_start(ap, fmt);
	char *msg = gp_vstrf(fmt, ap);
	va_end(ap);
	struct srcloc loc = s->loc;
	snprintf(path, sizeof path, ".data.result[%zu]", s->index);
	if (name && !strcmp(name, "value")) {
		loc = s->value_loc;
		snprintf(path, sizeof path, ".data.result[%zu].value%s", s->index,
			 s->has_value ? "[1]" : "s");
	} else if (name) {
		char base[64];
		snprintf(base, sizeof base, ".data.result[%zu].metric", s->index);
		key_step(path, sizeof path, base, name);
		for (size_t i = 0; i < s->n_labels; i++)
			if (!strcmp(s->names[i], name))
				loc = s->locs[i];
	}
	int rc = gp_located(err, loc, "%s: %s", path, msg);
	free(msg);
	return rc;
}
