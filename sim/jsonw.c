/*
 * jsonw.c - the one JSON writer (see jsonw.h).
 */
#include "gpuplan/jsonw.h"

#include <assert.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>

const struct jsonw_style jsonw_inline = {"", " ", "", " "};
const struct jsonw_style jsonw_compact = {"", "", "", ""};

void jsonw_init(struct jsonw *w, FILE *out) { *w = (struct jsonw){.out = out}; }

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

void jsonw_quote(FILE *out, const char *s)
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

/* Before a value or a key: the comma and the white space its container puts
 * there, unless it is the value of the key just written. */
static void before(struct jsonw *w)
{
	if (w->after_key) {
		w->after_key = false;
		return;
	}
	if (w->depth == 0)
		return;
	size_t n = w->level[w->depth - 1].n++;
	const struct jsonw_style *s = w->level[w->depth - 1].style;
	if (n)
		fputc(',', w->out);
	fputs(n ? s->next : s->first, w->out);
}

static void push(struct jsonw *w, const struct jsonw_style *style, bool object)
{
	before(w);
	assert(w->depth < JSONW_DEPTH);
	w->level[w->depth].style = style;
	w->level[w->depth].n = 0;
	w->level[w->depth].object = object;
	w->depth++;
	fputc(object ? '{' : '[', w->out);
}

void jsonw_object(struct jsonw *w, const struct jsonw_style *style) { push(w, style, true); }

void jsonw_array(struct jsonw *w, const struct jsonw_style *style) { push(w, style, false); }

void jsonw_close(struct jsonw *w)
{
	assert(w->depth > 0);
	w->after_key = false; /* (a key with no value: an error cut the document) */
	w->depth--;
	if (w->level[w->depth].n)
		fputs(w->level[w->depth].style->close, w->out);
	fputc(w->level[w->depth].object ? '}' : ']', w->out);
}

void jsonw_restyle(struct jsonw *w, const struct jsonw_style *style)
{
	assert(w->depth > 0);
	w->level[w->depth - 1].style = style;
}

void jsonw_key(struct jsonw *w, const char *key)
{
	assert(w->depth > 0 && w->level[w->depth - 1].object && !w->after_key);
	before(w);
	jsonw_quote(w->out, key);
	fputc(':', w->out);
	fputs(w->level[w->depth - 1].style->colon, w->out);
	w->after_key = true;
}

void jsonw_string(struct jsonw *w, const char *s)
{
	before(w);
	jsonw_quote(w->out, s);
}

void jsonw_int(struct jsonw *w, int64_t v)
{
	before(w);
	fprintf(w->out, "%" PRId64, v);
}

void jsonw_bool(struct jsonw *w, bool v)
{
	before(w);
	fputs(v ? "true" : "false", w->out);
}

void jsonw_null(struct jsonw *w)
{
	before(w);
	fputs("null", w->out);
}

void jsonw_real(struct jsonw *w, double v, int precision)
{
	before(w);
	if (!isfinite(v)) {
		fputs("null", w->out);
		return;
	}
	char buf[400]; /* %.Nf of 1e308 */
	if (precision == JSONW_EXACT) {
		snprintf(buf, sizeof buf, "%.15g", v);
		if (strtod(buf, NULL) != v)
			snprintf(buf, sizeof buf, "%.17g", v);
	} else if (precision > 0) {
		snprintf(buf, sizeof buf, "%.*g", precision, v);
	} else {
		snprintf(buf, sizeof buf, "%.*f", -1 - precision, v);
	}
	fputs(buf, w->out);
}

void jsonw_number(struct jsonw *w, double v) { jsonw_real(w, v, JSONW_EXACT); }

void jsonw_raw(struct jsonw *w, const char *json)
{
	before(w);
	fputs(json, w->out);
}

void jsonw_space(struct jsonw *w, const char *ws) { fputs(ws, w->out); }
