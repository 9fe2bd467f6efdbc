/*
 * ytree_json.c - JSON (RFC 8259) read straight into a located tree (see
 * ytree.h, ytree_load_json).
 *
 * libyaml reads JSON too, but through three copies (its event scan for the
 * depth check, its document, then the tree) at about 150 bytes of heap per
 * node: a 100,000-node kubectl dump took 1.6 GB and 7 s.  This reader makes
 * one pass over the text and puts the tree in an arena: nodes, arrays and
 * values packed in 1 MiB chunks, map keys interned (a dump repeats a few
 * hundred keys millions of times), and no per-node malloc.  Locations are
 * libyaml's (line, and column in characters, of the node's first character),
 * so errors read the same as before.
 */
#include "gpuplan/hash.h"
#include "gpuplan/ytree.h"

#include "ytree_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CHUNK (1u << 20)

struct chunk {
	struct chunk *next;
	size_t used, size;
	max_align_t data[];
};

/* Strings interned by id; the copies are in the arena, so their addresses
 * hold while the index grows. */
struct interned {
	const char **s; /* by id */
	size_t n, cap;
	struct hash_ids index;
};

struct json {
	const char *file, *text;
	size_t len, pos;
	/* the column of a position, counted forward from the last one asked */
	int line;
	size_t line_start, col_pos;
	int col;
	struct ytree *t;
	struct gp_err *err;
	const char *const *skip; /* member keys dropped (NULL-terminated) */
	/* > 0 inside a dropped member: its syntax is checked and nothing is
	 * kept, so what import never reads costs no memory (a node's images
	 * and managed fields made the arena 6 times the text) */
	int dry;
	struct ynode scratch; /* what a dry value "builds" */
	/* map keys, each with whether it is in skip (looked up once per key,
	 * not per member), and short scalar values ("Running", "True",
	 * "nvidia.com/gpu", a zone: a dump repeats them in every object) */
	struct interned keys, vals;
	bool *skips; /* by key id */
	size_t cap_skips;
	/* the entries of the open maps and lists, innermost last */
	struct entry {
		const char *key;
		struct srcloc key_loc;
		struct ynode *item;
	} * stack;
	size_t n_stack, cap_stack;
	char *buf; /* a string being unescaped */
	size_t buf_cap;
};

int ytree_utf8_length(const unsigned char *s, size_t n)
{
	if (!n)
		return 0;
	if (s[0] < 0x80)
		return 1;
	int k = s[0] >= 0xC2 && s[0] <= 0xDF   ? 2
		: s[0] >= 0xE0 && s[0] <= 0xEF ? 3
		: s[0] >= 0xF0 && s[0] <= 0xF4 ? 4
					       : 0;
	if ((size_t)k > n)
		return 0;
	for (int i = 1; i < k; i++)
		if ((s[i] & 0xC0) != 0x80)
			return 0;
	if ((k == 3 && s[0] == 0xE0 && s[1] < 0xA0) || (k == 3 && s[0] == 0xED && s[1] >= 0xA0) ||
	    (k == 4 && s[0] == 0xF0 && s[1] < 0x90) || (k == 4 && s[0] == 0xF4 && s[1] >= 0x90))
		return 0;
	return k;
}

static void *arena_alloc(struct json *j, size_t size)
{
	size = (size + 7) & ~(size_t)7;
	struct chunk *c = j->t->arena;
	if (!c || c->size - c->used < size) {
		size_t want = size > CHUNK / 4 ? size : CHUNK;
		c = gp_xmalloc(sizeof *c + want);
		c->next = j->t->arena;
		c->used = 0;
		c->size = want;
		j->t->arena = c;
	}
	void *p = (char *)c->data + c->used;
	c->used += size;
	return p;
}

void ytree_arena_free(void *arena)
{
	for (struct chunk *c = arena, *next; c; c = next) {
		next = c->next;
		free(c);
	}
}

static struct srcloc loc_at(struct json *j, size_t pos)
{
	if (pos < j->col_pos || pos < j->line_start) {
		j->col_pos = j->line_start;
		j->col = 0;
	}
	for (size_t i = j->col_pos; i < pos; i++)
		j->col += ((unsigned char)j->text[i] & 0xC0) != 0x80;
	j->col_pos = pos;
	return (struct srcloc){j->file, j->line, j->col + 1};
}

static int fail(struct json *j, size_t pos, const char *what)
{
	return gp_located(j->err, loc_at(j, pos), "%s", what);
}

static void skip_space(struct json *j)
{
	for (; j->pos < j->len; j->pos++) {
		char c = j->text[j->pos];
		if (c == '\n') {
			j->line++;
			j->line_start = j->col_pos = j->pos + 1;
			j->col = 0;
		} else if (c != ' ' && c != '\t' && c != '\r') {
			break;
		}
	}
}

static bool skipped(const struct json *j, const char *key)
{
	for (const char *const *s = j->skip; s && *s; s++)
		if (!strcmp(*s, key))
			return true;
	return false;
}

/* The id of the interned copy of s (n bytes, no NUL inside); *added says
 * whether it is new. */
static size_t intern(struct json *j, struct interned *t, const char *s, size_t n, bool *added)
{
	if (hash_ids_crowded(&t->index)) {
		hash_ids_reset(&t->index, t->index.slot ? 2 * hash_ids_slots(&t->index) : 256);
		for (size_t id = 0; id < t->n; id++)
			hash_ids_put(&t->index, hash_str(t->s[id]), id);
	}
	size_t i = hash_ids_home(&t->index, hash_str(s));
	for (; hash_ids_at(&t->index, i); i = hash_ids_next(&t->index, i))
		if (!strcmp(t->s[hash_ids_at(&t->index, i) - 1], s)) {
			*added = false;
			return hash_ids_at(&t->index, i) - 1u;
		}
	char *copy = arena_alloc(j, n + 1);
	memcpy(copy, s, n + 1);
	GP_GROW(t->s, t->cap, t->n + 1);
	hash_ids_put_at(&t->index, i, t->n);
	t->s[t->n] = copy;
	*added = true;
	return t->n++;
}

static void interned_free(struct interned *t)
{
	free(t->s);
	hash_ids_free(&t->index);
}

/* The interned copy of key s (n bytes); *skip, whether it is dropped. */
static const char *intern_key(struct json *j, const char *s, size_t n, bool *skip)
{
	bool added;
	size_t id = intern(j, &j->keys, s, n, &added);
	if (added) {
		GP_GROW(j->skips, j->cap_skips, id + 1);
		j->skips[id] = skipped(j, j->keys.s[id]);
	}
	*skip = j->skips[id];
	return j->keys.s[id];
}

static void buf_put(struct json *j, size_t *n, const char *s, size_t len)
{
	if (*n + len + 1 > j->buf_cap) {
		j->buf_cap = 2 * (*n + len + 1);
		j->buf = gp_xrealloc(j->buf, j->buf_cap);
	}
	memcpy(j->buf + *n, s, len);
	*n += len;
}

static int hex4(const char *s, unsigned *out)
{
	*out = 0;
	for (int i = 0; i < 4; i++) {
		char c = s[i];
		unsigned d = c >= '0' && c <= '9'   ? (unsigned)(c - '0')
			     : c >= 'a' && c <= 'f' ? (unsigned)(c - 'a' + 10)
			     : c >= 'A' && c <= 'F' ? (unsigned)(c - 'A' + 10)
						    : 16;
		if (d == 16)
			return -1;
		*out = *out * 16 + d;
	}
	return 0;
}

/* A string at j->pos (its quote), unescaped into j->buf; *n its length. */
static int read_string(struct json *j, size_t *n)
{
	size_t start = j->pos++;
	*n = 0;
	for (;;) {
		size_t run = j->pos;
		while (j->pos < j->len && j->text[j->pos] != '"' && j->text[j->pos] != '\\' &&
		       (unsigned char)j->text[j->pos] >= 0x20 &&
		       (unsigned char)j->text[j->pos] < 0x80)
			j->pos++;
		buf_put(j, n, j->text + run, j->pos - run);
		if (j->pos >= j->len)
			return fail(j, start, "a string without its closing quote; expected '\"'");
		unsigned char c = (unsigned char)j->text[j->pos];
		if (c == '"') {
			j->pos++;
			j->buf[*n] = '\0';
			return GP_OK;
		}
		if (c < 0x20)
			return fail(j, j->pos,
				    "a control character in a string; expected it escaped (\\n, "
				    "\\t, \\u00XX)");
		if (c >= 0x80) {
			int len = ytree_utf8_length((const unsigned char *)j->text + j->pos,
						    j->len - j->pos);
			if (!len)
				return fail(j, j->pos, "invalid UTF-8; expected UTF-8 text");
			buf_put(j, n, j->text + j->pos, (size_t)len);
			j->pos += (size_t)len;
			continue;
		}
		/* an escape */
		if (j->pos + 1 >= j->len)
			return fail(j, start, "a string without its closing quote; expected '\"'");
		char e = j->text[j->pos + 1], one = 0;
		switch (e) {
		case '"': one = '"'; break;
		case '\\': one = '\\'; break;
		case '/': one = '/'; break;
		case 'b': one = '\b'; break;
		case 'f': one = '\f'; break;
		case 'n': one = '\n'; break;
		case 'r': one = '\r'; break;
		case 't': one = '\t'; break;
		case 'u': break;
		default:
			return fail(j, j->pos,
				    "an unknown escape; expected \\\", \\\\, \\/, \\b, \\f, \\n, "
				    "\\r, \\t or \\u and four hex digits");
		}
		if (one) {
			buf_put(j, n, &one, 1);
			j->pos += 2;
			continue;
		}
		unsigned cp, lo;
		if (j->pos + 6 > j->len || hex4(j->text + j->pos + 2, &cp))
			return fail(j, j->pos, "\\u without the four hex digits it needs");
		size_t at = j->pos;
		j->pos += 6;
		if (cp >= 0xD800 && cp <= 0xDBFF) {
			if (j->pos + 6 > j->len || j->text[j->pos] != '\\' ||
			    j->text[j->pos + 1] != 'u' || hex4(j->text + j->pos + 2, &lo) ||
			    lo < 0xDC00 || lo > 0xDFFF)
				return fail(j, at,
					    "a lone UTF-16 surrogate; expected a pair "
					    "(\\uD800-\\uDBFF then \\uDC00-\\uDFFF)");
			cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
			j->pos += 6;
		} else if (cp >= 0xDC00 && cp <= 0xDFFF) {
			return fail(j, at,
				    "a lone UTF-16 surrogate; expected a pair (\\uD800-\\uDBFF "
				    "then \\uDC00-\\uDFFF)");
		}
		if (cp == 0)
			return fail(j, at,
				    "a NUL character (\\0) in a value; expected text without one");
		char u[4];
		size_t k = cp < 0x80 ? 1 : cp < 0x800 ? 2 : cp < 0x10000 ? 3 : 4;
		static const unsigned lead[] = {0, 0, 0xC0, 0xE0, 0xF0};
		u[0] = (char)(k == 1 ? cp : lead[k] | cp >> (6 * (k - 1)));
		for (size_t b = 1; b < k; b++)
			u[b] = (char)(0x80 | ((cp >> (6 * (k - 1 - b))) & 0x3F));
		buf_put(j, n, u, k);
	}
}

static struct ynode *new_node(struct json *j, enum ynode_kind kind, struct srcloc loc)
{
	struct ynode *n = j->dry ? &j->scratch : arena_alloc(j, sizeof *n);
	memset(n, 0, sizeof *n);
	n->kind = kind;
	n->loc = loc;
	return n;
}

/* Values up to this long are interned: longer ones (names, messages) seldom
 * repeat. */
#define INTERN_MAX 32

/* The interned copy of value s (n bytes, no NUL inside). */
static char *intern_value(struct json *j, const char *s, size_t n)
{
	bool added;
	size_t id = intern(j, &j->vals, s, n, &added); /* may move j->vals.s */
	return (char *)j->vals.s[id];
}

static struct ynode *new_scalar(struct json *j, struct srcloc loc, const char *s, size_t len,
				bool quoted)
{
	struct ynode *n = new_node(j, YNODE_SCALAR, loc);
	if (j->dry)
		return n;
	n->quoted = quoted;
	if (len <= INTERN_MAX) {
		char v[INTERN_MAX + 1];
		memcpy(v, s, len);
		v[len] = '\0';
		n->value = intern_value(j, v, len);
		return n;
	}
	n->value = arena_alloc(j, len + 1);
	memcpy(n->value, s, len);
	n->value[len] = '\0';
	return n;
}

static void push(struct json *j, const char *key, struct srcloc key_loc, struct ynode *item)
{
	GP_GROW(j->stack, j->cap_stack, j->n_stack + 1);
	j->stack[j->n_stack++] = (struct entry){key, key_loc, item};
}

/* Moves the entries from base on into the arena as n's arrays. */
static void close_collection(struct json *j, struct ynode *n, size_t base)
{
	n->n = j->n_stack - base;
	if (n->n) {
		n->items = arena_alloc(j, n->n * sizeof *n->items);
		if (n->kind == YNODE_MAP) {
			n->keys = arena_alloc(j, n->n * sizeof *n->keys);
			n->key_locs = arena_alloc(j, n->n * sizeof *n->key_locs);
		}
	}
	for (size_t i = 0; i < n->n; i++) {
		const struct entry *e = &j->stack[base + i];
		n->items[i] = e->item;
		if (n->kind == YNODE_MAP) {
			n->keys[i] = (char *)e->key;
			n->key_locs[i] = e->key_loc;
		}
	}
	j->n_stack = base;
}

static int value(struct json *j, int depth, struct ynode **out);

static int collection(struct json *j, int depth, struct ynode **out)
{
	bool map = j->text[j->pos] == '{';
	char close = map ? '}' : ']';
	struct srcloc loc = loc_at(j, j->pos);
	if (depth >= YTREE_MAX_DEPTH)
		return gp_located(j->err, loc,
				  "nesting deeper than %d levels; expected a flatter document",
				  YTREE_MAX_DEPTH);
	struct ynode *n = new_node(j, map ? YNODE_MAP : YNODE_SEQ, loc);
	size_t base = j->n_stack;
	j->pos++;
	skip_space(j);
	if (j->pos < j->len && j->text[j->pos] == close) {
		j->pos++;
		*out = n;
		return GP_OK;
	}
	for (;;) {
		const char *key = NULL;
		bool skip = false;
		struct srcloc key_loc = {0};
		if (map) {
			if (j->pos >= j->len || j->text[j->pos] != '"')
				return fail(j, j->pos, "expected a member name in double quotes");
			key_loc = loc_at(j, j->pos);
			size_t len;
			int rc = read_string(j, &len);
			if (rc)
				return rc;
			if (memchr(j->buf, '\0', len))
				return fail(j, j->pos, "a NUL character (\\0) in a key");
			key = j->dry ? "" : intern_key(j, j->buf, len, &skip);
			skip_space(j);
			if (j->pos >= j->len || j->text[j->pos] != ':')
				return fail(j, j->pos, "expected ':' after a member name");
			j->pos++;
			skip_space(j);
		}
		struct ynode *item = NULL;
		bool drop = j->dry || skip;
		j->dry += drop;
		int rc = value(j, depth + 1, &item);
		j->dry -= drop;
		if (rc)
			return rc;
		if (!drop)
			push(j, key, key_loc, item);
		skip_space(j);
		if (j->pos < j->len && j->text[j->pos] == ',') {
			j->pos++;
			skip_space(j);
			/* a comma before the end, as YAML's flow collections allow
			 * (libyaml read these files before) */
			if (j->pos >= j->len || j->text[j->pos] != close)
				continue;
		}
		if (j->pos < j->len && j->text[j->pos] == close) {
			j->pos++;
			break;
		}
		return fail(j, j->pos,
			    map ? "expected ',' or '}' after a member"
				: "expected ',' or ']' after an item");
	}
	*out = n;
	if (j->dry)
		return GP_OK;
	close_collection(j, n, base);
	return map ? ytree_check_duplicates(n, j->err) : GP_OK;
}

static int value(struct json *j, int depth, struct ynode **out)
{
	if (j->pos >= j->len)
		return fail(j, j->pos, "the text ends; expected a value");
	char c = j->text[j->pos];
	if (c == '{' || c == '[')
		return collection(j, depth, out);
	struct srcloc loc = loc_at(j, j->pos);
	if (c == '"') {
		size_t len;
		int rc = read_string(j, &len);
		if (!rc)
			*out = new_scalar(j, loc, j->buf, len, true);
		return rc;
	}
	static const char *const words[] = {"true", "false", "null"};
	for (size_t w = 0; w < 3; w++) {
		size_t n = strlen(words[w]);
		if (j->len - j->pos >= n && !memcmp(j->text + j->pos, words[w], n)) {
			*out = new_scalar(j, loc, words[w], n, false);
			j->pos += n;
			return GP_OK;
		}
	}
	/* a number: -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)? */
	size_t p = j->pos, start = p;
	const char *s = j->text;
	p += p < j->len && s[p] == '-';
	size_t int_start = p;
	while (p < j->len && s[p] >= '0' && s[p] <= '9')
		p++;
	bool ok = p > int_start && !(s[int_start] == '0' && p - int_start > 1);
	if (ok && p < j->len && s[p] == '.') {
		size_t f = ++p;
		while (p < j->len && s[p] >= '0' && s[p] <= '9')
			p++;
		ok = p > f;
	}
	if (ok && p < j->len && (s[p] == 'e' || s[p] == 'E')) {
		p++;
		p += p < j->len && (s[p] == '+' || s[p] == '-');
		size_t e = p;
		while (p < j->len && s[p] >= '0' && s[p] <= '9')
			p++;
		ok = p > e;
	}
	if (!ok)
		return fail(j, start,
			    "expected a JSON value (an object, a list, a string in double quotes, "
			    "a number, true, false or null)");
	*out = new_scalar(j, loc, s + start, p - start, false);
	j->pos = p;
	return GP_OK;
}

bool ytree_looks_json(const char *text, size_t len)
{
	size_t i = len >= 3 && !memcmp(text, "\xEF\xBB\xBF", 3) ? 3 : 0;
	while (i < len && (text[i] == ' ' || text[i] == '\t' || text[i] == '\r' || text[i] == '\n'))
		i++;
	return i < len && (text[i] == '{' || text[i] == '[');
}

int ytree_parse_json(const char *name, const char *text, size_t len, const char *const *skip,
		     struct ytree **out, struct gp_err *err)
{
	struct ytree *t = gp_xcalloc(1, sizeof *t);
	struct json j = {.text = text, .len = len, .line = 1, .t = t, .err = err, .skip = skip};
	j.file = ytree_intern(t, name);
	if (len >= 3 && !memcmp(text, "\xEF\xBB\xBF", 3))
		j.pos = j.line_start = j.col_pos = 3;
	skip_space(&j);
	int rc = value(&j, 0, &t->root);
	if (!rc) {
		skip_space(&j);
		if (j.pos < len)
			rc = fail(&j, j.pos,
				  "text after the JSON value; expected one value per file");
	}
	interned_free(&j.keys);
	free(j.skips);
	interned_free(&j.vals);
	free(j.stack);
	free(j.buf);
	if (rc) {
		ytree_free(t);
		t = NULL;
	}
	*out = t;
	return rc;
}

int ytree_load_json(const char *path, const char *const *skip, struct ytree **out,
		    struct gp_err *err)
{
	char *text = NULL;
	size_t len = 0;
	*out = NULL;
	int rc = ytree_read_all(path, &text, &len, err);
	if (rc)
		return rc;
	rc = ytree_looks_json(text, len) ? ytree_parse_json(path, text, len, skip, out, err)
					 : ytree_parse(path, text, len, out, err);
	free(text);
	return rc;
}
