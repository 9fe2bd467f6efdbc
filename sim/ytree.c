/*
 * ytree.c - YAML documents as located trees (see ytree.h).
 *
 * A document is built into struct ynode from libyaml's events in one pass
 * (load_stream); one with anchors or aliases goes through libyaml's document
 * API, which resolves them, and is copied from its node graph (convert).
 * Either way libyaml's 0-based marks become the 1-based lines and columns
 * users see.  It rejects what a scenario can never
 * mean (duplicate keys, non-scalar keys, several documents) and bounds the
 * copy, so that an alias bomb or a self-referencing anchor is an input error
 * rather than an exhausted machine.
 *
 * ytree_set parses the value of an override with the same code, under the
 * pseudo file name "--set KEY=VALUE", shifting columns by the position of
 * the value so that errors point into the assignment as typed.
 */
#include "gpuplan/ytree.h"

#include "ytree_int.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <yaml.h>

#define YTREE_MAX_LABEL 200 /* characters of an override named in a message */
/* A document may hold as many nodes as it has bytes (a node takes at least
 * one), or this many when it is smaller: only aliases copied again and again
 * go past it.  Counted in bytes, a 100,000-pod kubectl dump is read whole,
 * and an alias bomb still stops at a size of the order of its file. */
#define YTREE_MAX_NODES 2000000

/* Words longer than this get no suggestion (the distance table is quadratic). */
#define CLOSEST_MAX_LEN 128

/* State of one copy from a libyaml document into ynodes. */
struct builder {
	yaml_document_t *doc;
	const char *file; /* interned name used in locations */
	int col_shift;    /* added to columns on the first line (--set values) */
	size_t one_line;  /* a --set value on one line: its length, else 0 */
	size_t nodes;
	struct gp_err *err;
	const char *text; /* the parsed text: placeholders keep their source and comment */
	size_t len;
};

const char *ytree_intern(struct ytree *t, const char *s)
{
	GP_GROW(t->strings, t->cap_strings, t->n_strings + 1);
	char *copy = gp_xstrdup(s);
	t->strings[t->n_strings++] = copy;
	return copy;
}

static struct srcloc mark_loc(const struct builder *b, yaml_mark_t m)
{
	/* libyaml reports "end of input" on a line after the text; a --set value has one. */
	if (b->one_line && m.line > 0) {
		m.line = 0;
		m.column = b->one_line;
	}
	int line = (int)m.line + 1;
	int col = (int)m.column + 1 + (m.line == 0 ? b->col_shift : 0);
	return (struct srcloc){b->file, line, col};
}

void ynode_free(struct ynode *n)
{
	if (!n)
		return;
	if (n->value != (char *)(n + 1)) /* new_scalar's is in the node's block */
		free(n->value);
	free(n->source);
	free(n->note);
	for (size_t i = 0; i < n->n; i++) {
		if (n->keys)
			free(n->keys[i]);
		ynode_free(n->items[i]);
	}
	free(n->keys);
	free(n->key_locs);
	free(n->items);
	free(n);
}

/* A scalar and its text in one block: a scenario of 100,000 workloads has
 * a million scalars, each a malloc and a free fewer. */
static struct ynode *new_scalar(struct srcloc loc, const char *text, size_t len, bool quoted)
{
	struct ynode *n = gp_xcalloc(1, sizeof *n + len + 1);
	n->kind = YNODE_SCALAR;
	n->loc = loc;
	n->value = (char *)(n + 1);
	memcpy(n->value, text, len);
	n->value[len] = '\0';
	n->quoted = quoted;
	return n;
}

static struct ynode *new_map(struct srcloc loc, size_t n)
{
	struct ynode *m = gp_xcalloc(1, sizeof *m);
	m->kind = YNODE_MAP;
	m->loc = loc;
	m->n = n;
	m->keys = gp_xcalloc(n, sizeof *m->keys);
	m->key_locs = gp_xcalloc(n, sizeof *m->key_locs);
	m->items = gp_xcalloc(n, sizeof *m->items);
	return m;
}

static const char *kind_name(yaml_node_type_t type)
{
	return type == YAML_MAPPING_NODE    ? "a map"
	       : type == YAML_SEQUENCE_NODE ? "a list"
					    : "a scalar";
}

/* Sorting map entries by key finds duplicates in O(n log n) even for huge maps. */
struct key_ref {
	const char *key;
	size_t index;
};

static int cmp_key_ref(const void *a, const void *b)
{
	const struct key_ref *x = a, *y = b;
	int c = strcmp(x->key, y->key);
	if (c)
		return c;
	return (x->index > y->index) - (x->index < y->index);
}

static int duplicate(const struct ynode *m, size_t dup, size_t first, struct gp_err *err)
{
	struct srcloc at = m->key_locs[dup], was = m->key_locs[first];
	return gp_located(err, at, "duplicate key '%s' (first defined at line %d, column %d)",
			  m->keys[dup], was.line, was.col);
}

int ytree_check_duplicates(const struct ynode *m, struct gp_err *err)
{
	if (m->n < 2)
		return GP_OK;
	if (m->n <= 8) { /* most maps: pairs, without a sort or an allocation */
		for (size_t i = 1; i < m->n; i++)
			for (size_t k = 0; k < i; k++)
				if (m->keys[k][0] == m->keys[i][0] &&
				    !strcmp(m->keys[k], m->keys[i]))
					return duplicate(m, i, k, err);
		return GP_OK;
	}
	struct key_ref *refs = gp_xmalloc(m->n * sizeof *refs);
	for (size_t i = 0; i < m->n; i++)
		refs[i] = (struct key_ref){m->keys[i], i};
	qsort(refs, m->n, sizeof *refs, cmp_key_ref);
	size_t dup = SIZE_MAX, first = 0;
	for (size_t i = 1; i < m->n; i++) {
		if (strcmp(refs[i].key, refs[i - 1].key) != 0 || refs[i].index >= dup)
			continue;
		/* refs[i-1] is an earlier occurrence; find the first of the run. */
		size_t j = i - 1;
		while (j > 0 && strcmp(refs[j - 1].key, refs[i].key) == 0)
			j--;
		dup = refs[i].index;
		first = refs[j].index;
	}
	free(refs);
	return dup == SIZE_MAX ? GP_OK : duplicate(m, dup, first, err);
}

static int convert(struct builder *b, yaml_node_t *yn, int depth, struct ynode **out);

static int convert_seq(struct builder *b, yaml_node_t *yn, int depth, struct ynode *s)
{
	yaml_node_item_t *start = yn->data.sequence.items.start;
	s->n = (size_t)(yn->data.sequence.items.top - start);
	s->items = gp_xcalloc(s->n, sizeof *s->items);
	for (size_t i = 0; i < s->n; i++) {
		int rc = convert(b, yaml_document_get_node(b->doc, start[i]), depth + 1,
				 &s->items[i]);
		if (rc)
			return rc;
	}
	return GP_OK;
}

static int convert_map(struct builder *b, yaml_node_t *yn, int depth, struct ynode **out)
{
	yaml_node_pair_t *start = yn->data.mapping.pairs.start;
	struct ynode *m =
		new_map(mark_loc(b, yn->start_mark), (size_t)(yn->data.mapping.pairs.top - start));
	*out = m;
	for (size_t i = 0; i < m->n; i++) {
		yaml_node_t *k = yaml_document_get_node(b->doc, start[i].key);
		m->key_locs[i] = mark_loc(b, k->start_mark);
		if (k->type != YAML_SCALAR_NODE)
			return gp_located(b->err, m->key_locs[i],
					  "a key must be a scalar, not %s; expected KEY: VALUE",
					  kind_name(k->type));
		m->keys[i] = gp_xmalloc(k->data.scalar.length + 1);
		memcpy(m->keys[i], k->data.scalar.value, k->data.scalar.length);
		m->keys[i][k->data.scalar.length] = '\0';
		int rc = convert(b, yaml_document_get_node(b->doc, start[i].value), depth + 1,
				 &m->items[i]);
		if (rc)
			return rc;
	}
	return ytree_check_duplicates(m, b->err);
}

/* A copy of text[from, to) with every run of white space made one blank. */
static char *squeeze(const char *text, size_t from, size_t to)
{
	char *out = gp_xmalloc(to - from + 1);
	size_t n = 0;
	for (size_t i = from; i < to; i++) {
		bool blank = isspace((unsigned char)text[i]);
		if (!blank)
			out[n++] = text[i];
		else if (n && out[n - 1] != ' ')
			out[n++] = ' ';
	}
	while (n && out[n - 1] == ' ')
		n--;
	out[n] = '\0';
	return out;
}

/* The `#` comment in text[from, end of line), or NULL: a '#' after white
 * space (YAML's rule), its text without the '#' and the blanks around it. */
static char *line_comment(const char *text, size_t len, size_t from)
{
	for (size_t i = from; i < len && text[i] != '\n'; i++) {
		if (text[i] != '#' || (i > 0 && !isspace((unsigned char)text[i - 1])))
			continue;
		size_t a = i + 1, b = a;
		while (b < len && text[b] != '\n' && text[b] != '\r')
			b++;
		char *note = squeeze(text, a, b);
		if (*note)
			return note;
		free(note);
		return NULL;
	}
	return NULL;
}

/*
 * Checks a node's tag: !placeholder flags n (placeholder_text then keeps the
 * value's source text, the tag left out, and the comment on its line: the
 * line it ends on; for a block value, which ends on a later line, the line
 * of its tag); another local tag is refused.  YAML's own tags
 * (tag:yaml.org,2002:...) pass.
 */
static int check_tag(struct builder *b, const char *tag, struct ynode *n)
{
	if (!tag || tag[0] != '!')
		return GP_OK;
	if (strcmp(tag, YTREE_PLACEHOLDER_TAG))
		return gp_located(b->err, n->loc,
				  "unknown tag '%.64s'; expected " YTREE_PLACEHOLDER_TAG
				  " (a value that was not learned) or none",
				  tag);
	n->placeholder = true;
	return GP_OK;
}

/* A placeholder's source text and note, from text[from, to) (the node's
 * marks: a collection's end is known at its end event). */
static void placeholder_text(struct builder *b, struct ynode *n, size_t from, size_t to)
{
	if (!n->placeholder || !b->text || to > b->len || from > to)
		return;
	size_t tag_len = sizeof YTREE_PLACEHOLDER_TAG - 1;
	size_t after_tag = from;
	if (to - from >= tag_len && !memcmp(b->text + from, YTREE_PLACEHOLDER_TAG, tag_len))
		after_tag = from + tag_len;
	n->source = squeeze(b->text, after_tag, to);
	/* A block value begins on the line after its tag: the comment is the tag's. */
	size_t i = after_tag;
	while (i < to && (b->text[i] == ' ' || b->text[i] == '\t'))
		i++;
	bool block = i == to || b->text[i] == '#' || b->text[i] == '\n' || b->text[i] == '\r';
	n->note = line_comment(b->text, b->len, block ? after_tag : to);
}

/* The tag of a document node (libyaml gives untagged and "!" nodes its
 * default tags, which are not local). */
static int read_tag(struct builder *b, yaml_node_t *yn, struct ynode *n)
{
	int rc = check_tag(b, (const char *)yn->tag, n);
	if (!rc)
		placeholder_text(b, n, yn->start_mark.index, yn->end_mark.index);
	return rc;
}

/* Copies yn (and below) into *out; on error *out is still freeable. */
static int convert(struct builder *b, yaml_node_t *yn, int depth, struct ynode **out)
{
	struct srcloc loc = mark_loc(b, yn->start_mark);
	if (depth > YTREE_MAX_DEPTH)
		return gp_located(b->err, loc, "nesting deeper than %d levels (a recursive alias?)",
				  YTREE_MAX_DEPTH);
	size_t most = b->len > YTREE_MAX_NODES ? b->len : YTREE_MAX_NODES;
	if (++b->nodes > most)
		return gp_located(b->err, loc,
				  "the document expands to more than %zu nodes, more than its %zu "
				  "bytes could hold without aliases; expected each alias copied "
				  "less often",
				  most, b->len);
	switch (yn->type) {
	case YAML_SCALAR_NODE:
		/* "a\0b" would be cut to "a" by every C string after this point. */
		if (memchr(yn->data.scalar.value, '\0', yn->data.scalar.length))
			return gp_located(b->err, loc,
					  "a NUL character (\\0) in a value; expected "
					  "text without one");
		*out = new_scalar(loc, (const char *)yn->data.scalar.value, yn->data.scalar.length,
				  yn->data.scalar.style != YAML_PLAIN_SCALAR_STYLE);
		return read_tag(b, yn, *out);
	case YAML_SEQUENCE_NODE: {
		*out = gp_xcalloc(1, sizeof **out);
		(*out)->kind = YNODE_SEQ;
		(*out)->loc = loc;
		int rc = read_tag(b, yn, *out);
		return rc ? rc : convert_seq(b, yn, depth, *out);
	}
	case YAML_MAPPING_NODE: {
		int rc = convert_map(b, yn, depth, out);
		return rc ? rc : read_tag(b, yn, *out);
	}
	case YAML_NO_NODE: break;
	}
	return gp_located(b->err, loc, "empty node");
}

/* Line and column of a byte offset, for libyaml's reader errors (which have no mark). */
static yaml_mark_t offset_mark(const char *text, size_t len, size_t offset)
{
	yaml_mark_t m = {0, 0, 0};
	for (size_t i = 0; i < offset && i < len; i++) {
		if (text[i] == '\n') {
			m.line++;
			m.column = 0;
		} else {
			m.column++;
		}
	}
	return m;
}

static int parser_error(const struct builder *b, const yaml_parser_t *p, const char *text,
			size_t len)
{
	if (p->error == YAML_MEMORY_ERROR)
		return gp_errorf(b->err, GP_ERUNTIME, "%s: error: out of memory parsing YAML",
				 b->file);
	const char *problem = p->problem ? p->problem : "invalid YAML";
	if (p->error == YAML_READER_ERROR)
		return gp_located(b->err, mark_loc(b, offset_mark(text, len, p->problem_offset)),
				  "%s; expected UTF-8 text", problem);
	if (p->context) {
		struct srcloc ctx = mark_loc(b, p->context_mark);
		return gp_located(b->err, mark_loc(b, p->problem_mark),
				  "%s (%s at line %d, column %d)", problem, p->context, ctx.line,
				  ctx.col);
	}
	return gp_located(b->err, mark_loc(b, p->problem_mark), "%s", problem);
}

/* Follows the nesting depth through event ev; an error past YTREE_MAX_DEPTH. */
static int nest(struct builder *b, const yaml_event_t *ev, int *depth)
{
	if (ev->type == YAML_SEQUENCE_START_EVENT || ev->type == YAML_MAPPING_START_EVENT) {
		if (++*depth > YTREE_MAX_DEPTH)
			return gp_located(
				b->err, mark_loc(b, ev->start_mark),
				"nesting deeper than %d levels; expected a flatter document",
				YTREE_MAX_DEPTH);
	} else if (ev->type == YAML_SEQUENCE_END_EVENT || ev->type == YAML_MAPPING_END_EVENT) {
		--*depth;
	}
	return GP_OK;
}

/*
 * Refuses nesting deeper than YTREE_MAX_DEPTH from the event stream, before
 * libyaml builds a document: libyaml's scanner re-checks every open simple
 * key at each token, so a document nested N deep costs O(N^2) to load (a
 * 200 KB "[[[..." took minutes).  Stopping at the first event past the limit
 * keeps that cost to the limit's square.  Syntax errors are left for the
 * loader to report in its usual words.
 */
static int check_depth(struct builder *b, const char *text, size_t len)
{
	yaml_parser_t parser;
	if (!yaml_parser_initialize(&parser))
		return gp_errorf(b->err, GP_ERUNTIME, "%s: error: cannot initialize libyaml",
				 b->file);
	yaml_parser_set_input_string(&parser, (const unsigned char *)text, len);
	int depth = 0, rc = GP_OK;
	for (bool done = false; !done && !rc;) {
		yaml_event_t ev;
		if (!yaml_parser_parse(&parser, &ev))
			break;
		rc = nest(b, &ev, &depth);
		done = ev.type == YAML_STREAM_END_EVENT;
		yaml_event_delete(&ev);
	}
	yaml_parser_delete(&parser);
	return rc;
}

/* --- one pass from libyaml's events ---------------------------------------- */

/*
 * A document without anchors is built from libyaml's events in the pass that
 * checks its depth: libyaml's own document (a node per value, every string
 * copied) is never made, which for an imported scenario of 100,000 workloads
 * was 700 MB and a second parse of its 43 MB.  Anchors and aliases take the
 * document path (load_document): aliases there are copied with the bounds
 * that stop an alias bomb.  The tree and every error are the document path's,
 * in the same order: a depth error anywhere before a syntax error, then a
 * syntax error in the first document, then what the copy refuses (the first
 * in document order), then the second document's syntax error or its start.
 */

/* A node of the stream still open, and its entries so far (from base in
 * stream.entries: a map's are key, value; a list's items). */
struct stream_open {
	struct ynode *node;
	size_t base;
	char *tag;   /* a map's, checked at its end (a copy: the event goes) */
	size_t from; /* its start, for a placeholder's source text */
};

struct stream_entry {
	char *key;
	struct srcloc key_loc;
	struct ynode *item;
};

struct stream {
	struct builder *b;
	struct ynode *root;
	struct stream_open *open;
	size_t n_open, cap_open;
	struct stream_entry *entries;
	size_t n_entries, cap_entries;
	bool key_next; /* the open map's next event is a key */
	int refused;   /* what the copy refused (first), GP_OK while building */
};

/* Frees what is built: the open nodes' entries (the finished ones own theirs),
 * then the root; nothing more is built after. */
static void stream_drop(struct stream *st)
{
	for (size_t i = 0; i < st->n_entries; i++) {
		free(st->entries[i].key);
		ynode_free(st->entries[i].item);
	}
	for (size_t i = 0; i < st->n_open; i++)
		free(st->open[i].tag);
	st->n_entries = st->n_open = 0;
	ynode_free(st->root);
	st->root = NULL;
}

/* Records the first refusal (err holds its message) and stops building. */
static void stream_refuse(struct stream *st, int rc)
{
	if (rc && !st->refused) {
		st->refused = rc;
		stream_drop(st);
	}
}

/* A node where the stream is: the root, a list's item, a map's value. */
static void stream_place(struct stream *st, struct ynode *n)
{
	if (!st->n_open) {
		st->root = n;
		return;
	}
	struct stream_open *top = &st->open[st->n_open - 1];
	if (top->node->kind == YNODE_MAP) {
		st->entries[st->n_entries - 1].item = n;
		st->key_next = true;
		return;
	}
	GP_GROW(st->entries, st->cap_entries, st->n_entries + 1);
	st->entries[st->n_entries++] = (struct stream_entry){NULL, {0}, n};
}

/* A map's key: a scalar (its text up to a NUL, as the document path copies
 * keys), else refused. */
static bool stream_key(struct stream *st, const yaml_event_t *ev)
{
	if (ev->type != YAML_SCALAR_EVENT && ev->type != YAML_SEQUENCE_START_EVENT &&
	    ev->type != YAML_MAPPING_START_EVENT)
		return false;
	if (!st->n_open || st->open[st->n_open - 1].node->kind != YNODE_MAP || !st->key_next)
		return false;
	struct srcloc at = mark_loc(st->b, ev->start_mark);
	if (ev->type != YAML_SCALAR_EVENT) {
		stream_refuse(
			st, gp_located(st->b->err, at,
				       "a key must be a scalar, not %s; expected KEY: VALUE",
				       ev->type == YAML_MAPPING_START_EVENT ? "a map" : "a list"));
		return true;
	}
	char *key = gp_xmalloc(ev->data.scalar.length + 1);
	memcpy(key, ev->data.scalar.value, ev->data.scalar.length);
	key[ev->data.scalar.length] = '\0';
	GP_GROW(st->entries, st->cap_entries, st->n_entries + 1);
	st->entries[st->n_entries++] = (struct stream_entry){key, at, NULL};
	st->key_next = false;
	return true;
}

/* The document path's bound on copies (convert): never reached without
 * aliases, but the same figure. */
static bool stream_count(struct stream *st, struct srcloc loc)
{
	struct builder *b = st->b;
	size_t most = b->len > YTREE_MAX_NODES ? b->len : YTREE_MAX_NODES;
	if (++b->nodes <= most)
		return true;
	stream_refuse(st, gp_located(b->err, loc,
				     "the document expands to more than %zu nodes, more than its "
				     "%zu bytes could hold without aliases; expected each alias "
				     "copied less often",
				     most, b->len));
	return false;
}

/* libyaml's loader gives "!" (non-specific) its default tag. */
static const char *stream_tag(const yaml_char_t *tag)
{
	return tag && strcmp((const char *)tag, "!") ? (const char *)tag : NULL;
}

static void stream_scalar(struct stream *st, const yaml_event_t *ev)
{
	struct srcloc loc = mark_loc(st->b, ev->start_mark);
	if (!stream_count(st, loc))
		return;
	const char *value = (const char *)ev->data.scalar.value;
	size_t len = ev->data.scalar.length;
	/* "a\0b" would be cut to "a" by every C string after this point. */
	if (memchr(value, '\0', len)) {
		stream_refuse(st, gp_located(st->b->err, loc,
					     "a NUL character (\\0) in a value; expected text "
					     "without one"));
		return;
	}
	struct ynode *n =
		new_scalar(loc, value, len, ev->data.scalar.style != YAML_PLAIN_SCALAR_STYLE);
	stream_place(st, n);
	int rc = check_tag(st->b, stream_tag(ev->data.scalar.tag), n);
	if (!rc)
		placeholder_text(st->b, n, ev->start_mark.index, ev->end_mark.index);
	stream_refuse(st, rc);
}

/* A map or list opens: counted and placed now (document order), filled at
 * its end.  A list's tag is checked now, a map's at its end, as convert does. */
static void stream_start(struct stream *st, const yaml_event_t *ev)
{
	struct srcloc loc = mark_loc(st->b, ev->start_mark);
	if (!stream_count(st, loc))
		return;
	bool map = ev->type == YAML_MAPPING_START_EVENT;
	struct ynode *n = gp_xcalloc(1, sizeof *n);
	n->kind = map ? YNODE_MAP : YNODE_SEQ;
	n->loc = loc;
	stream_place(st, n);
	const char *tag =
		stream_tag(map ? ev->data.mapping_start.tag : ev->data.sequence_start.tag);
	int rc = map ? GP_OK : check_tag(st->b, tag, n);
	if (rc) {
		stream_refuse(st, rc);
		return;
	}
	GP_GROW(st->open, st->cap_open, st->n_open + 1);
	st->open[st->n_open++] = (struct stream_open){
		n, st->n_entries, map && tag ? gp_xstrdup(tag) : NULL, ev->start_mark.index};
	st->key_next = map;
}

/* A map or list closes: its entries become its arrays, exactly sized. */
static void stream_end(struct stream *st, const yaml_event_t *ev)
{
	struct stream_open o = st->open[--st->n_open];
	struct ynode *n = o.node;
	struct stream_entry *e = &st->entries[o.base];
	size_t k = st->n_entries - o.base;
	n->n = k;
	n->items = gp_xcalloc(k, sizeof *n->items);
	if (n->kind == YNODE_MAP) {
		n->keys = gp_xcalloc(k, sizeof *n->keys);
		n->key_locs = gp_xcalloc(k, sizeof *n->key_locs);
	}
	for (size_t i = 0; i < k; i++) {
		n->items[i] = e[i].item;
		if (n->keys) {
			n->keys[i] = e[i].key;
			n->key_locs[i] = e[i].key_loc;
		}
	}
	st->n_entries = o.base;
	st->key_next = st->n_open && st->open[st->n_open - 1].node->kind == YNODE_MAP;
	int rc = n->kind == YNODE_MAP ? ytree_check_duplicates(n, st->b->err) : GP_OK;
	if (!rc && n->kind == YNODE_MAP)
		rc = check_tag(st->b, o.tag, n);
	free(o.tag);
	if (!rc)
		placeholder_text(st->b, n, o.from, ev->end_mark.index);
	stream_refuse(st, rc);
}

/* Takes one event of the first document into the tree. */
static void stream_event(struct stream *st, const yaml_event_t *ev)
{
	if (st->refused || stream_key(st, ev))
		return;
	switch (ev->type) {
	case YAML_SCALAR_EVENT: stream_scalar(st, ev); break;
	case YAML_SEQUENCE_START_EVENT:
	case YAML_MAPPING_START_EVENT: stream_start(st, ev); break;
	case YAML_SEQUENCE_END_EVENT:
	case YAML_MAPPING_END_EVENT: stream_end(st, ev); break;
	default: break;
	}
}

/* Whether ev names an anchor or an alias (the document path's). */
static bool anchored(const yaml_event_t *ev)
{
	switch (ev->type) {
	case YAML_ALIAS_EVENT: return true;
	case YAML_SCALAR_EVENT: return ev->data.scalar.anchor != NULL;
	case YAML_SEQUENCE_START_EVENT: return ev->data.sequence_start.anchor != NULL;
	case YAML_MAPPING_START_EVENT: return ev->data.mapping_start.anchor != NULL;
	default: return false;
	}
}

/* Where the pass stands in the stream. */
struct stream_pass {
	int docs; /* documents started */
	bool first_done, second_done;
	yaml_mark_t second; /* where the second document starts */
	int syntax;         /* where the parser failed (and stopped): 0 nowhere, 1 in the
		     * first document, 2 before the second ended, 3 later */
};

/*
 * Reads text in one pass (see above): GP_OK with *out, or an error, or
 * *aliased when an anchor or alias was seen (nothing built: the caller takes
 * the document path).
 */
static int load_stream(struct builder *b, yaml_parser_t *parser, bool set_value, struct ynode **out,
		       bool *aliased)
{
	struct stream st = {.b = b};
	struct stream_pass ps = {0};
	int depth = 0, rc = GP_OK;
	*aliased = false;
	for (bool done = false; !done && !rc && !*aliased;) {
		yaml_event_t ev;
		if (!yaml_parser_parse(parser, &ev)) {
			ps.syntax = !ps.first_done ? 1 : !ps.second_done ? 2 : 3;
			break;
		}
		rc = nest(b, &ev, &depth);
		*aliased = anchored(&ev);
		if (ev.type == YAML_DOCUMENT_START_EVENT && ++ps.docs == 2)
			ps.second = ev.start_mark;
		if (ev.type == YAML_DOCUMENT_END_EVENT) {
			ps.second_done = ps.second_done || ps.docs == 2;
			ps.first_done = true;
		}
		if (!rc && !*aliased && ps.docs == 1 && !ps.first_done)
			stream_event(&st, &ev);
		done = ev.type == YAML_STREAM_END_EVENT;
		yaml_event_delete(&ev);
	}
	if (rc || *aliased) {
		stream_drop(&st);
	} else if (ps.syntax == 1) {
		stream_drop(&st);
		rc = parser_error(b, parser, b->text, b->len);
	} else if (!ps.docs) {
		if (set_value)
			st.root = new_scalar((struct srcloc){b->file, 1, 1 + b->col_shift}, "", 0,
					     false);
		else
			rc = gp_located(b->err, (struct srcloc){b->file, 1, 1},
					"the document is empty; expected a YAML map");
	} else if (st.refused) {
		rc = st.refused;
	} else if (ps.syntax == 2) {
		stream_drop(&st);
		rc = parser_error(b, parser, b->text, b->len);
	} else if (ps.docs >= 2) {
		stream_drop(&st);
		rc = gp_located(b->err, mark_loc(b, ps.second),
				"a second YAML document starts here; expected one document");
	}
	free(st.open);
	free(st.entries);
	*out = rc ? NULL : st.root;
	if (rc)
		ynode_free(st.root);
	return rc;
}

/*
 * The document path: libyaml's document (aliases resolved), copied into a
 * tree by convert under its bounds.  For text with anchors or aliases.
 */
static int load_document(struct builder *b, bool set_value, struct ynode **out)
{
	const char *text = b->text, *file = b->file;
	size_t len = b->len;
	struct gp_err *err = b->err;
	yaml_parser_t parser;
	yaml_document_t doc;
	if (!yaml_parser_initialize(&parser))
		return gp_errorf(err, GP_ERUNTIME, "%s: error: cannot initialize libyaml", file);
	yaml_parser_set_input_string(&parser, (const unsigned char *)text, len);
	int rc = check_depth(b, text, len);
	if (rc) {
		yaml_parser_delete(&parser);
		return rc;
	}
	if (!yaml_parser_load(&parser, &doc)) {
		rc = parser_error(b, &parser, text, len);
		yaml_parser_delete(&parser);
		return rc;
	}
	b->doc = &doc;
	yaml_node_t *root = yaml_document_get_root_node(&doc);
	if (root)
		rc = convert(b, root, 0, out);
	else if (set_value)
		*out = new_scalar((struct srcloc){file, 1, 1 + b->col_shift}, "", 0, false);
	else
		rc = gp_located(err, (struct srcloc){file, 1, 1},
				"the document is empty; expected a YAML map");
	yaml_document_delete(&doc);
	if (rc == GP_OK) {
		/* One document per input: a second one is almost always a pasting accident. */
		if (!yaml_parser_load(&parser, &doc)) {
			rc = parser_error(b, &parser, text, len);
		} else {
			if (yaml_document_get_root_node(&doc))
				rc = gp_located(err, mark_loc(b, doc.start_mark),
						"a second YAML document starts here; expected one "
						"document");
			yaml_document_delete(&doc);
		}
	}
	yaml_parser_delete(&parser);
	if (rc) {
		ynode_free(*out);
		*out = NULL;
	}
	return rc;
}

/*
 * Parses one document of text into *out.  An empty document is an error for
 * a file but an empty scalar for a --set value ("KEY=" sets null).
 */
static int parse_text(const char *file, const char *text, size_t len, int col_shift, bool set_value,
		      struct ynode **out, struct gp_err *err)
{
	struct builder b = {NULL, file, col_shift, set_value && !memchr(text, '\n', len) ? len : 0,
			    0,    err,  text,      len};
	yaml_parser_t parser;
	*out = NULL;
	if (!yaml_parser_initialize(&parser))
		return gp_errorf(err, GP_ERUNTIME, "%s: error: cannot initialize libyaml", file);
	yaml_parser_set_input_string(&parser, (const unsigned char *)text, len);
	bool aliased;
	int rc = load_stream(&b, &parser, set_value, out, &aliased);
	yaml_parser_delete(&parser);
	if (!aliased)
		return rc;
	b.nodes = 0;
	return load_document(&b, set_value, out);
}

int ytree_parse(const char *name, const char *text, size_t len, struct ytree **out,
		struct gp_err *err)
{
	struct ytree *t = gp_xcalloc(1, sizeof *t);
	const char *file = ytree_intern(t, name);
	int rc = parse_text(file, text, len, 0, false, &t->root, err);
	if (rc) {
		ytree_free(t);
		t = NULL;
	}
	*out = t;
	return rc;
}

int ytree_read_all(const char *path, char **text, size_t *len, struct gp_err *err)
{
	const char *why;
	if (gp_read_input(path, text, len, &why))
		return gp_located(err, (struct srcloc){path, 0, 0}, "cannot read: %s", why);
	return GP_OK;
}

int ytree_load(const char *path, struct ytree **out, struct gp_err *err)
{
	char *text = NULL;
	size_t len = 0;
	*out = NULL;
	int rc = ytree_read_all(path, &text, &len, err);
	if (rc)
		return rc;
	rc = ytree_parse(path, text, len, out, err);
	free(text);
	return rc;
}

void ytree_drop_nodes(struct ytree *t)
{
	if (t->arena)
		ytree_arena_free(t->arena);
	else
		ynode_free(t->root);
	t->arena = NULL;
	t->root = NULL;
}

void ytree_free(struct ytree *t)
{
	if (!t)
		return;
	if (t->arena)
		ytree_arena_free(t->arena);
	else
		ynode_free(t->root);
	for (size_t i = 0; i < t->n_strings; i++)
		free(t->strings[i]);
	free(t->strings);
	free(t);
}

struct ynode *ynode_get(const struct ynode *map, const char *key)
{
	if (!map || map->kind != YNODE_MAP)
		return NULL;
	for (size_t i = 0; i < map->n; i++)
		if (strcmp(map->keys[i], key) == 0)
			return map->items[i];
	return NULL;
}

struct ynode *ynode_copy(const struct ynode *n)
{
	if (!n)
		return NULL;
	struct ynode *c = gp_xcalloc(1, sizeof *c);
	*c = *n;
	c->value = n->value ? gp_xstrdup(n->value) : NULL;
	c->source = n->source ? gp_xstrdup(n->source) : NULL;
	c->note = n->note ? gp_xstrdup(n->note) : NULL;
	c->keys = NULL;
	c->key_locs = NULL;
	c->items = n->n ? gp_xcalloc(n->n, sizeof *c->items) : NULL;
	if (n->keys) {
		c->keys = gp_xcalloc(n->n ? n->n : 1, sizeof *c->keys);
		c->key_locs = gp_xcalloc(n->n ? n->n : 1, sizeof *c->key_locs);
		for (size_t i = 0; i < n->n; i++) {
			c->keys[i] = gp_xstrdup(n->keys[i]);
			c->key_locs[i] = n->key_locs[i];
		}
	}
	for (size_t i = 0; i < n->n; i++)
		c->items[i] = ynode_copy(n->items[i]);
	return c;
}

/* --- --set ------------------------------------------------------------------ */

/* One step of a --set path: the text and where it starts in the assignment. */
struct step {
	char text[256];
	int col;
	bool last;
};

/* Appends an entry to map m; its value is NULL until the caller fills it. */
static size_t map_add(struct ynode *m, const char *key, struct srcloc loc)
{
	m->keys = gp_xrealloc(m->keys, (m->n + 1) * sizeof *m->keys);
	m->key_locs = gp_xrealloc(m->key_locs, (m->n + 1) * sizeof *m->key_locs);
	m->items = gp_xrealloc(m->items, (m->n + 1) * sizeof *m->items);
	m->keys[m->n] = gp_xstrdup(key);
	m->key_locs[m->n] = loc;
	m->items[m->n] = NULL;
	return m->n++;
}

static bool all_digits(const char *s)
{
	if (!*s)
		return false;
	for (; *s; s++)
		if (!isdigit((unsigned char)*s))
			return false;
	return true;
}

/* Lists the names of a sequence's items for "did you mean" and "its items are". */
static size_t item_names(const struct ynode *seq, const char **names)
{
	size_t n = 0;
	for (size_t i = 0; i < seq->n; i++) {
		const struct ynode *name = ynode_get(seq->items[i], "name");
		if (name && name->kind == YNODE_SCALAR)
			names[n++] = name->value;
	}
	return n;
}

static int missing_item(const struct ynode *seq, const char *path, const struct step *st,
			struct srcloc loc, struct gp_err *err)
{
	const char **names = gp_xcalloc(seq->n, sizeof *names);
	size_t n = item_names(seq, names);
	const char *close = ytree_closest(st->text, names, n);
	int rc;
	if (close) {
		rc = gp_located(err, loc, "no item named '%s' in %s; did you mean '%s'?", st->text,
				path, close);
	} else if (n == 0) {
		rc = gp_located(err, loc, "no item named '%s' in %s; it has %zu unnamed items",
				st->text, path, seq->n);
	} else {
		char list[512] = "";
		size_t used = 0;
		for (size_t i = 0; i < n && used < sizeof list; i++)
			used += (size_t)snprintf(list + used, sizeof list - used, "%s%s",
						 i ? ", " : "", names[i]);
		rc = gp_located(err, loc, "no item named '%s' in %s; expected one of %s", st->text,
				path, list);
	}
	free(names);
	return rc;
}

/* A list step: the item named st->text, else the item at that index. */
static int seq_step(struct ynode *seq, const char *path, const struct step *st, struct srcloc loc,
		    struct ynode ***slot, struct gp_err *err)
{
	for (size_t i = 0; i < seq->n; i++) {
		const struct ynode *name = ynode_get(seq->items[i], "name");
		if (name && name->kind == YNODE_SCALAR && strcmp(name->value, st->text) == 0) {
			*slot = &seq->items[i];
			return GP_OK;
		}
	}
	if (!strcmp(st->text, "+") && st->last) { /* pools.+={name: x, ...} appends */
		seq->items = gp_xrealloc(seq->items, (seq->n + 1) * sizeof *seq->items);
		seq->items[seq->n] = NULL;
		*slot = &seq->items[seq->n++];
		return GP_OK;
	}
	if (all_digits(st->text)) {
		unsigned long long i = strtoull(st->text, NULL, 10);
		if (i < seq->n) {
			*slot = &seq->items[i];
			return GP_OK;
		}
		return gp_located(err, loc, "no item %s in %s; it has %zu items (indexes from 0)",
				  st->text, path, seq->n);
	}
	return missing_item(seq, path, st, loc, err);
}

/* A map step: the value under st->text, created (as an empty map) when missing. */
static void map_step(struct ynode *map, const struct step *st, struct srcloc loc,
		     struct ynode ***slot)
{
	for (size_t i = 0; i < map->n; i++) {
		if (strcmp(map->keys[i], st->text) == 0) {
			*slot = &map->items[i];
			return;
		}
	}
	size_t i = map_add(map, st->text, loc);
	if (!st->last)
		map->items[i] = new_map(loc, 0);
	*slot = &map->items[i];
}

/* Splits the next step off key (at *pos); returns -1 on an empty, overlong
 * or unclosed step.  A step in double quotes may hold dots, as a resource
 * name does: queues.team-a.quota."nvidia.com/gpu". */
static int next_step(const char *key, size_t keylen, size_t *pos, struct step *st)
{
	size_t start = *pos, end = start, from = start, to;
	if (start < keylen && key[start] == '"') {
		from = start + 1;
		for (end = from; end < keylen && key[end] != '"'; end++)
			;
		if (end == keylen || (end + 1 < keylen && key[end + 1] != '.'))
			return -1;
		to = end++;
	} else {
		while (end < keylen && key[end] != '.')
			end++;
		to = end;
	}
	if (to == from || to - from >= sizeof st->text)
		return -1;
	memcpy(st->text, key + from, to - from);
	st->text[to - from] = '\0';
	st->col = (int)start + 1;
	st->last = end == keylen;
	*pos = end + 1;
	return 0;
}

/* Walks the path of key to the slot the value goes into. */
static int find_slot(struct ytree *t, const char *file, const char *key, size_t keylen,
		     struct ynode ***out, struct gp_err *err)
{
	struct ynode **slot = &t->root;
	char path[512] = "";
	size_t pos = 0;
	struct step st = {"", 1, false};
	while (!st.last) {
		int col = (int)pos + 1;
		if (next_step(key, keylen, &pos, &st))
			return gp_located(
				err, (struct srcloc){file, 1, col},
				"empty, overlong or unclosed step in '%.*s'; expected a dotted "
				"path like pools.batch.nodes (a step with dots in double quotes: "
				"quota.\"nvidia.com/gpu\")",
				(int)keylen, key);
		struct srcloc loc = {file, 1, st.col};
		struct ynode *cur = *slot;
		if (cur->kind == YNODE_SCALAR)
			return gp_located(err, loc,
					  "%s is a scalar, so it has no '%s'; expected a "
					  "path through maps and lists",
					  path[0] ? path : "the document", st.text);
		if (cur->kind == YNODE_SEQ) {
			int rc = seq_step(cur, path, &st, loc, &slot, err);
			if (rc)
				return rc;
		} else {
			map_step(cur, &st, loc, &slot);
		}
		snprintf(path + strlen(path), sizeof path - strlen(path), "%s%s",
			 path[0] ? "." : "", st.text);
	}
	*out = slot;
	return GP_OK;
}

/* The label that names override KEY=VALUE in messages, "--set KEY=VALUE",
 * kept by t; a huge one is cut so that the message after it still fits in
 * the error buffer.  value NULL: the text had no '=' (key is all of it). */
static const char *override_label(struct ytree *t, const char *key, size_t keylen,
				  const char *value)
{
	struct gp_sbuf label = {0};
	size_t n = keylen + (value ? 1 + strlen(value) : 0) + 7;
	gp_sb_printf(&label, YTREE_OVERRIDE "%.*s%s%s", (int)keylen, key, value ? "=" : "",
		     value ? value : "");
	if (n > YTREE_MAX_LABEL)
		snprintf(label.s + YTREE_OVERRIDE_LEN + YTREE_MAX_LABEL - 16, 4, "...");
	const char *file = ytree_intern(t, gp_sb_str(&label));
	free(label.s);
	return file;
}

/* Sets key (keylen characters) to value (NULL: none was given). */
static int set_key(struct ytree *t, const char *key, size_t keylen, const char *value,
		   struct gp_err *err)
{
	if (t->arena)
		return gp_located(err, (struct srcloc){t->root ? t->root->loc.file : "?", 0, 0},
				  "a JSON document takes no --set");
	const char *file = override_label(t, key, keylen, value);
	if (!value)
		return gp_located(err, (struct srcloc){file, 1, 1},
				  "expected KEY=VALUE, like pools.batch.nodes=3");
	if (keylen == 0)
		return gp_located(
			err, (struct srcloc){file, 1, 1},
			"empty key before '='; expected KEY=VALUE, like pools.batch.nodes=3");
	/* The value first: then a failed path leaves nothing half-built behind. */
	struct ynode *node, **slot;
	int rc = parse_text(file, value, strlen(value), (int)keylen + 1, true, &node, err);
	if (rc)
		return rc;
	rc = find_slot(t, file, key, keylen, &slot, err);
	if (rc) {
		ynode_free(node);
		return rc;
	}
	ynode_free(*slot);
	*slot = node;
	return GP_OK;
}

int ytree_set(struct ytree *t, const char *assignment, struct gp_err *err)
{
	const char *eq = strchr(assignment, '=');
	if (!eq)
		return set_key(t, assignment, strlen(assignment), NULL, err);
	return set_key(t, assignment, (size_t)(eq - assignment), eq + 1, err);
}

int ytree_set_key(struct ytree *t, const char *key, const char *value, struct gp_err *err)
{
	return set_key(t, key, strlen(key), value, err);
}

/* --- did you mean -------------------------------------------------------- */

/* Edit distance where letters differing only in case are equal: "mostallocated"
 * is clearly "MostAllocated". */
static size_t distance(const char *a, const char *b, size_t *row)
{
	size_t la = strlen(a), lb = strlen(b);
	for (size_t j = 0; j <= lb; j++)
		row[j] = j;
	for (size_t i = 1; i <= la; i++) {
		size_t diag = row[0];
		row[0] = i;
		for (size_t j = 1; j <= lb; j++) {
			size_t up = row[j];
			size_t same = tolower((unsigned char)a[i - 1]) ==
				      tolower((unsigned char)b[j - 1]);
			size_t best = diag + !same;
			if (up + 1 < best)
				best = up + 1;
			if (row[j - 1] + 1 < best)
				best = row[j - 1] + 1;
			row[j] = best;
			diag = up;
		}
	}
	return row[lb];
}

const char *ytree_closest(const char *word, const char *const *candidates, size_t n)
{
	size_t len = strlen(word);
	if (len > CLOSEST_MAX_LEN)
		return NULL;
	size_t limit = len / 3 > 2 ? len / 3 : 2;
	size_t row[CLOSEST_MAX_LEN + 2];
	const char *best = NULL;
	size_t best_d = limit + 1;
	for (size_t i = 0; i < n; i++) {
		if (!candidates[i] || strlen(candidates[i]) > CLOSEST_MAX_LEN)
			continue;
		size_t d = distance(word, candidates[i], row);
		if (d < best_d) {
			best_d = d;
			best = candidates[i];
		}
	}
	return best;
}

const char *ytree_suggest(const char *word, const char *const *names, size_t n)
{
	size_t len = strlen(word);
	for (size_t i = 0; i < n && len; i++)
		if (names[i] && strlen(names[i]) > len && !strncasecmp(names[i], word, len))
			return names[i];
	return ytree_closest(word, names, n);
}
