/*
 * import_prom.c - Prometheus HTTP API responses, streamed (see import_hist.h).
 *
 * A recursive descent over libyaml's events: one function per level of the
 * response (the document, data, result, an item, its metric and value), and
 * skip() for members gpuplan does not read (warnings, infos, histograms).
 * Timestamps are JSON numbers; sample values are strings, as the API writes
 * them ("1.5", "NaN", "+Inf").
 *
 * The items read go into a batch: their labels' text, the offsets of the
 * labels and their points, each item's record.  On one thread
 * (GPUPLAN_THREADS=1) a batch is one item, handed to the callback as it
 * ends, so memory is the widest item's.  On two, a parser thread runs
 * libyaml and fills batches of up to BATCH_ITEMS items (or BATCH_TEXT bytes,
 * BATCH_POINTS points), which it hands through a ring of RING_DEPTH batches
 * to the caller's thread; that thread runs the callback on every item in
 * the file's order, so what the callbacks see, and so every output, is the
 * same either way.  The batches are allocated once per file and recycled by
 * swapping buffers, so memory is bounded by the batches in flight, never by
 * the file's length.  An error on the parser's side waits in the ring behind
 * the items read before it (the callback may stop earlier, as on one
 * thread); a callback's error stops the parser at its next item and joins it.
 * libyaml's scanner and the allocations of its events are over half of an
 * import's time, the callbacks most of the rest: the two overlap.
 */
#include "import_hist.h"

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

#define PROM_MAX_DEPTH 64
#define BATCH_ITEMS    512
#define BATCH_TEXT     (64 << 10)
#define BATCH_POINTS   8192
#define RING_DEPTH     4

/*
 * Where a node is, as a JSON path made into text only for an error: a file
 * is a hundred thousand items, and most are right.  A fixed path (text), or
 * a place in the item .data.result[item]: its metric (a label's value when
 * label is not NULL), its value or values, and in those a point and an
 * element of a pair (SIZE_MAX: none).
 */
enum part { IN_ITEM, IN_METRIC, IN_VALUE, IN_VALUES };

struct where {
	const char *text;
	size_t item;
	enum part part;
	const char *label;
	size_t point, elem;
};

#define FIXED(t)  (&(struct where){.text = (t), .point = SIZE_MAX, .elem = SIZE_MAX})
#define PATH_TEXT 400 /* what an error's path is cut to */

/* An item read: its series, whose pointers are set when its batch is handed
 * on (the batch's buffers move until then), and where its labels and points
 * start in the batch. */
struct prom_item {
	struct prom_series s;
	size_t label0, point0;
};

/* Items read, with their labels and points; reused from batch to batch. */
struct batch {
	char *text; /* label names and values, NUL-terminated */
	size_t text_len, text_cap;
	size_t *name_at, *value_at; /* offsets into text */
	const char **names, **values;
	struct srcloc *locs;
	size_t n_labels, cap_labels;
	double *ts, *vs;
	size_t n_points, cap_points;
	struct prom_item *items;
	size_t n_items, cap_items;
};

/* The ring between the parser thread and the caller's: count batches from
 * head are full; the parser fills its own batch and swaps it in. */
struct pipe {
	pthread_mutex_t mu;
	pthread_cond_t put, take;
	struct batch ring[RING_DEPTH];
	size_t head, count;
	bool done;        /* the parser has ended: rc and err are its result */
	atomic_bool stop; /* the caller stopped: the parser ends at its next item */
	int rc;
	struct gp_err err; /* the parser's error, reported after its items */
};

struct reader {
	yaml_parser_t parser;
	FILE *f;
	const char *path;
	struct gp_err *err;
	prom_fn fn; /* one thread: called as each item ends */
	void *ctx;
	struct pipe *pipe;    /* two threads: the items go here */
	struct batch b;       /* the items being read */
	struct prom_series s; /* the current item: n_labels, n_points set from b as it ends */
	size_t label0, point0;
	char *key; /* the current map key */
	size_t key_cap;
	char status[16], result_type[16];
	bool seen_result;
};

static void key_step(char *buf, size_t size, const char *base, const char *key);

/* w as the text the reader's errors have always named. */
static void path_text(const struct where *w, char buf[PATH_TEXT])
{
	static const char *const parts[] = {"", ".metric", ".value", ".values"};
	if (w->text) {
		snprintf(buf, PATH_TEXT, "%s", w->text);
		return;
	}
	char base[320];
	int n = snprintf(base, sizeof base, ".data.result[%zu]%s", w->item, parts[w->part]);
	size_t len = n > 0 ? (size_t)n : 0;
	if (w->point != SIZE_MAX && len < sizeof base)
		snprintf(base + len, sizeof base - len, "[%zu]", w->point);
	if (w->label)
		key_step(buf, PATH_TEXT, base, w->label);
	else if (w->elem != SIZE_MAX)
		snprintf(buf, PATH_TEXT, "%s[%zu]", base, w->elem);
	else
		snprintf(buf, PATH_TEXT, "%s", base);
}

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

/* An error at ev for the JSON path w: expected what. */
static int expected(struct reader *r, const yaml_event_t *ev, const struct where *w,
		    const char *what)
{
	char path[PATH_TEXT];
	path_text(w, path);
	return gp_located(r->err, mark(r, ev->start_mark), "%s: expected %s, got %s", path, what,
			  kind_name(ev->type));
}

static int open_node(struct reader *r, yaml_event_type_t type, const struct where *w,
		     const char *what)
{
	yaml_event_t ev;
	int rc = next(r, &ev);
	if (rc)
		return rc;
	if (ev.type != type)
		rc = expected(r, &ev, w, what);
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
 * event consumed).  On the parser thread, a stop the caller asked for ends
 * the reading here (its status is not reported). */
static int next_item(struct reader *r, yaml_event_t *ev, bool *end)
{
	*end = false;
	if (r->pipe && atomic_load_explicit(&r->pipe->stop, memory_order_relaxed))
		return GP_ERUNTIME;
	int rc = next(r, ev);
	*end = !rc && ev->type == YAML_SEQUENCE_END_EVENT;
	if (*end)
		yaml_event_delete(ev);
	return rc;
}

/* What the readers of a map's values share: the path of the map read. */
struct walk {
	const struct where *w;
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

/* A scalar at w: copied into the batch's text; its offset in *at. */
static int scalar(struct reader *r, const struct where *w, size_t *at, struct srcloc *loc)
{
	yaml_event_t ev;
	int rc = next(r, &ev);
	if (rc)
		return rc;
	if (ev.type != YAML_SCALAR_EVENT) {
		rc = expected(r, &ev, w, "a string");
		skip(r, &ev);
		return rc;
	}
	struct batch *b = &r->b;
	size_t len = ev.data.scalar.length + 1;
	GP_GROW(b->text, b->text_cap, b->text_len + len);
	memcpy(b->text + b->text_len, ev.data.scalar.value, len);
	*at = b->text_len;
	b->text_len += len;
	*loc = mark(r, ev.start_mark);
	yaml_event_delete(&ev);
	return GP_OK;
}

/* A number, as JSON writes it or as the API writes a sample (a string). */
static int number(struct reader *r, const struct where *w, double *out, struct srcloc *loc)
{
	size_t at = 0, len0 = r->b.text_len;
	int rc = scalar(r, w, &at, loc);
	if (rc)
		return rc;
	const char *s = r->b.text + at;
	char *end;
	errno = 0;
	*out = strtod(s, &end);
	if (!*s || *end || errno == ERANGE) {
		char path[PATH_TEXT];
		path_text(w, path);
		rc = gp_located(r->err, *loc, "%s: expected a number, got '%s'", path, s);
	}
	r->b.text_len = len0;
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
	struct batch *b = &r->b;
	size_t n = b->n_labels;
	if (n == b->cap_labels) {
		b->cap_labels = b->cap_labels ? 2 * b->cap_labels : 16;
		b->name_at = gp_xrealloc(b->name_at, b->cap_labels * sizeof *b->name_at);
		b->value_at = gp_xrealloc(b->value_at, b->cap_labels * sizeof *b->value_at);
		b->locs = gp_xrealloc(b->locs, b->cap_labels * sizeof *b->locs);
		b->names = gp_xrealloc(b->names, b->cap_labels * sizeof *b->names);
		b->values = gp_xrealloc(b->values, b->cap_labels * sizeof *b->values);
	}
	size_t len = strlen(key) + 1;
	GP_GROW(b->text, b->text_cap, b->text_len + len);
	memcpy(b->text + b->text_len, key, len);
	b->name_at[n] = b->text_len;
	b->text_len += len;
	struct where w = *wk->w;
	w.label = b->text + b->name_at[n]; /* for an error, before the text grows */
	int rc = scalar(r, &w, &b->value_at[n], &b->locs[n]);
	if (!rc)
		b->n_labels++;
	return rc;
}

/* "metric": {"label": "value", ...} */
static int metric(struct reader *r, const struct where *item)
{
	static const struct prom_key rules[] = {{NULL, label}};
	struct where w = *item;
	w.part = IN_METRIC;
	int rc = open_node(r, YAML_MAPPING_START_EVENT, &w, "an object of labels");
	struct walk wk = {&w};
	return rc ? rc : keys(r, rules, 1, &wk);
}

/* The rest of a pair at w, once its "[" is read: t, "v" and the "]". */
static int pair_rest(struct reader *r, const struct where *w, double *t, double *v,
		     struct srcloc *vloc)
{
	struct srcloc loc;
	struct where e = *w;
	e.elem = 0;
	int rc = number(r, &e, t, &loc);
	e.elem = 1;
	if (rc || (rc = number(r, &e, v, vloc)))
		return rc;
	yaml_event_t ev;
	if ((rc = next(r, &ev)))
		return rc;
	if (ev.type != YAML_SEQUENCE_END_EVENT) {
		char path[PATH_TEXT];
		path_text(w, path);
		rc = gp_located(r->err, mark(r, ev.start_mark),
				"%s: expected [timestamp, \"value\"], got more items", path);
		skip(r, &ev);
		return rc;
	}
	yaml_event_delete(&ev);
	return GP_OK;
}

/* "value": [t, "v"] */
static int pair(struct reader *r, const struct where *w, double *t, double *v, struct srcloc *vloc)
{
	int rc = open_node(r, YAML_SEQUENCE_START_EVENT, w, "[timestamp, \"value\"]");
	return rc ? rc : pair_rest(r, w, t, v, vloc);
}

/* "values": [[t, "v"], ...] */
static int points(struct reader *r, const struct where *item)
{
	struct batch *b = &r->b;
	struct where w = *item;
	yaml_event_t ev;
	w.part = IN_VALUES;
	int rc = open_node(r, YAML_SEQUENCE_START_EVENT, &w, "an array of points");
	if (rc)
		return rc;
	for (size_t i = 0;; i++) {
		/* peek: an end, or the next pair (whose start event pair() reads) */
		bool end;
		if ((rc = next_item(r, &ev, &end)) || end)
			return rc;
		struct where step = w;
		step.point = i;
		if (ev.type != YAML_SEQUENCE_START_EVENT) {
			rc = expected(r, &ev, &step, "[timestamp, \"value\"]");
			skip(r, &ev);
			return rc;
		}
		yaml_event_delete(&ev);
		if (b->n_points == b->cap_points) {
			b->cap_points = b->cap_points ? 2 * b->cap_points : 64;
			b->ts = gp_xrealloc(b->ts, b->cap_points * sizeof *b->ts);
			b->vs = gp_xrealloc(b->vs, b->cap_points * sizeof *b->vs);
		}
		struct srcloc vloc;
		if ((rc = pair_rest(r, &step, &b->ts[b->n_points], &b->vs[b->n_points], &vloc)))
			return rc;
		if (b->n_points++ == r->point0)
			r->s.value_loc = vloc;
	}
}

/* An item's "metric", "value" and "values" (wk->w: the item). */
static int item_metric(struct reader *r, const char *key, yaml_mark_t at, struct walk *wk)
{
	(void)key, (void)at;
	return metric(r, wk->w);
}

static int item_value(struct reader *r, const char *key, yaml_mark_t at, struct walk *wk)
{
	(void)key, (void)at;
	struct where w = *wk->w;
	w.part = IN_VALUE;
	int rc = pair(r, &w, &r->s.t, &r->s.v, &r->s.value_loc);
	r->s.has_value = true;
	return rc;
}

static int item_values(struct reader *r, const char *key, yaml_mark_t at, struct walk *wk)
{
	(void)key, (void)at;
	return points(r, wk->w);
}

/* The batch's series pointed at its buffers, which no longer move. */
static void batch_resolve(struct batch *b)
{
	for (size_t i = 0; i < b->n_labels; i++) {
		b->names[i] = b->text + b->name_at[i];
		b->values[i] = b->text + b->value_at[i];
	}
	for (size_t i = 0; i < b->n_items; i++) {
		struct prom_item *it = &b->items[i];
		it->s.names = b->names ? b->names + it->label0 : NULL;
		it->s.values = b->values ? b->values + it->label0 : NULL;
		it->s.locs = b->locs ? b->locs + it->label0 : NULL;
		it->s.ts = b->ts ? b->ts + it->point0 : NULL;
		it->s.vs = b->vs ? b->vs + it->point0 : NULL;
	}
}

static void batch_clear(struct batch *b)
{
	b->text_len = b->n_labels = b->n_points = b->n_items = 0;
}

static void batch_free(struct batch *b)
{
	free(b->text);
	free(b->name_at);
	free(b->value_at);
	free(b->names);
	free(b->values);
	free(b->locs);
	free(b->ts);
	free(b->vs);
	free(b->items);
}

/* The parser's batch into the ring, once there is room; GP_ERUNTIME when the
 * caller has stopped (nothing handed on). */
static int hand_on(struct reader *r)
{
	struct pipe *p = r->pipe;
	batch_resolve(&r->b);
	pthread_mutex_lock(&p->mu);
	while (p->count == RING_DEPTH && !atomic_load(&p->stop))
		pthread_cond_wait(&p->put, &p->mu);
	bool stop = atomic_load(&p->stop);
	if (!stop) {
		GP_SWAP(r->b, p->ring[(p->head + p->count) % RING_DEPTH]);
		p->count++;
		pthread_cond_signal(&p->take);
	}
	pthread_mutex_unlock(&p->mu);
	batch_clear(&r->b);
	return stop ? GP_ERUNTIME : GP_OK;
}

/* The item read, to the callback (one thread) or into the batch. */
static int emit(struct reader *r)
{
	struct batch *b = &r->b;
	GP_GROW(b->items, b->cap_items, b->n_items + 1);
	r->s.n_labels = b->n_labels - r->label0;
	r->s.n_points = b->n_points - r->point0;
	b->items[b->n_items++] = (struct prom_item){r->s, r->label0, r->point0};
	if (!r->pipe) {
		batch_resolve(b);
		int rc = r->fn(r->ctx, &b->items[0].s, r->err);
		batch_clear(b);
		return rc;
	}
	if (b->n_items < BATCH_ITEMS && b->text_len < BATCH_TEXT && b->n_points < BATCH_POINTS)
		return GP_OK;
	return hand_on(r);
}

/* One item of data.result, then the callback. */
static int item(struct reader *r, size_t index, yaml_event_t *start)
{
	struct where w = {.item = index, .part = IN_ITEM, .point = SIZE_MAX, .elem = SIZE_MAX};
	if (start->type != YAML_MAPPING_START_EVENT) {
		int rc = expected(r, start, &w, "an object with metric and value");
		skip(r, start);
		return rc;
	}
	r->s = (struct prom_series){
		.file = r->path, .index = index, .loc = mark(r, start->start_mark)};
	yaml_event_delete(start);
	r->label0 = r->b.n_labels;
	r->point0 = r->b.n_points;
	static const struct prom_key rules[] = {
		{"metric", item_metric}, {"value", item_value}, {"values", item_values}};
	struct walk wk = {&w};
	int rc = keys(r, rules, N_RULES(rules), &wk);
	if (rc)
		return rc;
	if (!r->s.has_value && r->b.n_points == r->point0) {
		char path[PATH_TEXT];
		path_text(&w, path);
		return gp_located(r->err, r->s.loc, "%s: expected a value or values", path);
	}
	return emit(r);
}

static int result(struct reader *r)
{
	yaml_event_t ev;
	int rc = open_node(r, YAML_SEQUENCE_START_EVENT, FIXED(".data.result"), "an array");
	if (rc)
		return rc;
	r->seen_result = true;
	for (size_t i = 0;; i++) {
		bool end;
		if ((rc = next_item(r, &ev, &end)) || end)
			return rc;
		if ((rc = item(r, i, &ev)))
			return rc;
	}
}

/* A short text member that must be one of words (NULL-terminated); else
 * the error message why (its %s the text) at the member. */
static int word(struct reader *r, yaml_mark_t at, const char *path, char *buf, size_t size,
		const char *const *words, const char *why)
{
	size_t text_at = 0, len0 = r->b.text_len;
	struct srcloc loc;
	int rc = scalar(r, FIXED(path), &text_at, &loc);
	if (!rc)
		snprintf(buf, size, "%s", r->b.text + text_at);
	r->b.text_len = len0;
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
	(void)key, (void)at, (void)wk;
	return result(r);
}

static int data(struct reader *r, const char *key, yaml_mark_t at, struct walk *wk)
{
	(void)key, (void)at;
	static const struct prom_key rules[] = {{"resultType", data_type}, {"result", data_result}};
	int rc = open_node(r, YAML_MAPPING_START_EVENT, FIXED(".data"), "an object");
	return rc ? rc : keys(r, rules, N_RULES(rules), wk);
}

static int status(struct reader *r, const char *key, yaml_mark_t at, struct walk *wk)
{
	(void)key, (void)wk;
	static const char *const ok[] = {"success", NULL};
	return word(r, at, ".status", r->status, sizeof r->status, ok,
		    ".status: the query failed ('%s'); expected success");
}

static int document(struct reader *r)
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
				     : expected(r, &ev, FIXED("."), "an object");
			yaml_event_delete(&ev);
			return rc;
		}
		yaml_event_delete(&ev);
	}
	yaml_event_delete(&ev);
	static const struct prom_key rules[] = {{"status", status}, {"data", data}};
	struct walk wk = {FIXED(".")};
	if ((rc = keys(r, rules, N_RULES(rules), &wk)))
		return rc;
	if (!r->seen_result)
		return gp_located(r->err, (struct srcloc){r->path, 1, 1},
				  ".data.result: missing; expected a Prometheus API response");
	return GP_OK;
}

/* The parser thread: the document into the ring, then the items before an
 * error, then its status. */
static void *parse_thread(void *arg)
{
	struct reader *r = arg;
	struct pipe *p = r->pipe;
	int rc = document(r);
	if (r->b.n_items && !atomic_load(&p->stop))
		hand_on(r);
	pthread_mutex_lock(&p->mu);
	p->done = true;
	p->rc = rc;
	pthread_cond_signal(&p->take);
	pthread_mutex_unlock(&p->mu);
	return NULL;
}

/* The caller's side: the callback on every item the parser thread hands
 * on, in order; the parser's error once its items are done. */
static int run_pipe(struct reader *r, struct gp_err *err)
{
	struct pipe *p = gp_xcalloc(1, sizeof *p);
	pthread_mutex_init(&p->mu, NULL);
	pthread_cond_init(&p->put, NULL);
	pthread_cond_init(&p->take, NULL);
	atomic_init(&p->stop, false);
	r->pipe = p;
	r->err = &p->err;
	pthread_t t;
	int rc = GP_OK;
	if (pthread_create(&t, NULL, parse_thread, r)) { /* then on this thread */
		r->pipe = NULL;
		r->err = err;
		rc = document(r);
	} else {
		for (;;) {
			pthread_mutex_lock(&p->mu);
			while (!p->count && !p->done)
				pthread_cond_wait(&p->take, &p->mu);
			struct batch *b = p->count ? &p->ring[p->head] : NULL;
			pthread_mutex_unlock(&p->mu);
			if (!b)
				break;
			for (size_t i = 0; !rc && i < b->n_items; i++)
				rc = r->fn(r->ctx, &b->items[i].s, err);
			pthread_mutex_lock(&p->mu);
			p->head = (p->head + 1) % RING_DEPTH;
			p->count--;
			if (rc)
				atomic_store(&p->stop, true);
			pthread_cond_signal(&p->put);
			pthread_mutex_unlock(&p->mu);
			if (rc)
				break;
		}
		pthread_join(t, NULL);
		if (!rc && p->rc) {
			rc = p->rc;
			gp_err_move(err, &p->err);
		}
	}
	for (size_t i = 0; i < RING_DEPTH; i++)
		batch_free(&p->ring[i]);
	gp_err_free(&p->err);
	pthread_cond_destroy(&p->take);
	pthread_cond_destroy(&p->put);
	pthread_mutex_destroy(&p->mu);
	free(p);
	r->pipe = NULL;
	return rc;
}

int import_prom_read(const char *path, prom_fn fn, void *ctx, struct gp_err *err)
{
	const char *why = NULL;
	struct reader r = {.path = path, .err = err, .fn = fn, .ctx = ctx};
	r.f = gp_open_input(path, &why);
	if (!r.f)
		return gp_located(err, (struct srcloc){path, 0, 0}, "cannot read: %s", why);
	if (!yaml_parser_initialize(&r.parser)) {
		fclose(r.f);
		return gp_errorf(err, GP_ERUNTIME, "%s: error: cannot initialize libyaml", path);
	}
	yaml_parser_set_input_file(&r.parser, r.f);
	/* GPUPLAN_THREADS=1, or one processor: the items on this thread */
	int rc = gp_default_jobs(2) > 1 ? run_pipe(&r, err) : document(&r);
	yaml_parser_delete(&r.parser);
	fclose(r.f);
	batch_free(&r.b);
	free(r.key);
	return rc;
}

/* The first bytes compared inline: most names differ there, and the callbacks
 * ask for a few labels of every series. */
const char *import_prom_label(const struct prom_series *s, const char *name)
{
	for (size_t i = 0; i < s->n_labels; i++)
		if (s->names[i][0] == name[0] && !strcmp(s->names[i], name))
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
