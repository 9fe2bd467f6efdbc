/*
 * jsonw.h - the one JSON writer: every JSON document gpuplan prints (run,
 * advise and backtest --json, estimate --json, report --opencost, the
 * kubectl List import --history builds) is written through it.
 *
 * The writer knows the nesting, so the caller never writes a comma, a colon
 * or a bracket:
 *
 *   struct jsonw w;
 *   jsonw_init(&w, out);
 *   jsonw_object(&w, &jsonw_inline);        {
 *   jsonw_key(&w, "gpu");                    "gpu":
 *   jsonw_string(&w, "H100-80GB");           "H100-80GB"
 *   jsonw_key(&w, "gpus");                   , "gpus":
 *   jsonw_int(&w, 8);                        8
 *   jsonw_close(&w);                         }
 *
 * Where white space goes is the container's style (struct jsonw_style), so
 * that each document keeps its layout; white space never changes what a
 * document means.  Strings are escaped per RFC 8259 ("\"", "\\", \n, \t,
 * \u00XX for the other control characters and DEL); bytes that are not
 * UTF-8 become U+FFFD, so the output is always valid JSON.  Numbers have
 * one rule, jsonw_real: a real that is not finite is null, and it is
 * written at the precision the caller names: JSONW_EXACT, the shortest
 * form that reads back the same (%.15g, else %.17g), or a number of
 * significant digits (%g) or of decimals (%f) where a document states
 * its figures rounded (run, advise and backtest: exact; estimate: the
 * decimals its tables show; opencost: 15 significant digits, as it always
 * has).  Integers are exact (jsonw_int).
 */
#ifndef GPUPLAN_JSONW_H
#define GPUPLAN_JSONW_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

/* White space of one container: before its first member, after each comma
 * between members, before its closing bracket when it has members, and
 * after each key's colon (objects). */
struct jsonw_style {
	const char *first, *next, *close, *colon;
};

/* {"a": 1, "b": 2} */
extern const struct jsonw_style jsonw_inline;
/* {"a":1,"b":2} */
extern const struct jsonw_style jsonw_compact;

enum { JSONW_DEPTH = 16 };

struct jsonw {
	FILE *out;
	int depth;
	bool after_key; /* a key was written: its value comes next */
	struct {
		const struct jsonw_style *style;
		size_t n;    /* members so far */
		bool object; /* else an array */
	} level[JSONW_DEPTH];
};

void jsonw_init(struct jsonw *w, FILE *out);

/* Opens an object or an array (a value: after a key in an object, or a
 * member of an array, or the document itself); jsonw_close closes the
 * innermost. */
void jsonw_object(struct jsonw *w, const struct jsonw_style *style);
void jsonw_array(struct jsonw *w, const struct jsonw_style *style);
void jsonw_close(struct jsonw *w);
/* The innermost container's style from its next member on. */
void jsonw_restyle(struct jsonw *w, const struct jsonw_style *style);

/* A member's key; its value is the next thing written. */
void jsonw_key(struct jsonw *w, const char *key);

/* Values. */
void jsonw_string(struct jsonw *w, const char *s);
void jsonw_int(struct jsonw *w, int64_t v);
void jsonw_bool(struct jsonw *w, bool v);
void jsonw_null(struct jsonw *w);

/* The precision of a real: JSONW_EXACT, JSONW_SIG(n) (%.ng), JSONW_DEC(n)
 * (%.nf). */
#define JSONW_EXACT  0
#define JSONW_SIG(n) (n)
#define JSONW_DEC(n) (-1 - (n))
void jsonw_real(struct jsonw *w, double v, int precision);
/* jsonw_real(w, v, JSONW_EXACT). */
void jsonw_number(struct jsonw *w, double v);

/* A value that is JSON already (a stored labels object), written as it is. */
void jsonw_raw(struct jsonw *w, const char *json);

/* White space written as it is, between a key and its value (a layout's
 * quirk). */
void jsonw_space(struct jsonw *w, const char *ws);

/* Writes s as a JSON string, quotes included, to a plain stream. */
void jsonw_quote(FILE *out, const char *s);

#endif
