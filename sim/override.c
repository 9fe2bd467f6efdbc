/*
 * override.c - a scenario override as a typed value (see override.h).
 */
#include "gpuplan/override.h"

#include <assert.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

static enum override_kind kind_of(const char *value)
{
	value += strspn(value, " \t");
	return *value == '{' ? OVERRIDE_MAP : *value == '[' ? OVERRIDE_LIST : OVERRIDE_SCALAR;
}

struct override override_make(const char *key, const char *value)
{
	return (struct override){gp_xstrdup(key), gp_xstrdup(value), kind_of(value)};
}

struct override override_makef(const char *key, const char *fmt, ...)
{
	struct gp_sbuf value = {0};
	va_list ap;
	va_start(ap, fmt);
	gp_sb_vprintf(&value, fmt, ap);
	va_end(ap);
	char *v = gp_sb_take(&value);
	struct override o = {gp_xstrdup(key), v, kind_of(v)};
	return o;
}

struct override override_setf(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	struct override o = override_vsetf(fmt, ap);
	va_end(ap);
	return o;
}

struct override override_vsetf(const char *fmt, va_list ap)
{
	const char *eq = strchr(fmt, '=');
	assert(eq && eq > fmt); /* KEYFMT=VALUEFMT */
	struct gp_sbuf key = {0};
	for (const char *p = fmt; p < eq; p++) {
		if (*p != '%') {
			gp_sb_putc(&key, *p);
			continue;
		}
		assert(p[1] == 's'); /* a name */
		gp_sb_printf(&key, "%s", va_arg(ap, const char *));
		p++;
	}
	struct gp_sbuf value = {0};
	gp_sb_vprintf(&value, eq + 1, ap);
	char *v = gp_sb_take(&value);
	return (struct override){gp_sb_take(&key), v, kind_of(v)};
}

int override_parse(const char *text, struct override *o, struct gp_err *err)
{
	*o = (struct override){0};
	const char *eq = strchr(text, '=');
	if (!eq || eq == text)
		return gp_errorf(err, GP_EINPUT,
				 "--set '%.80s': expected KEY=VALUE, like pools.batch.nodes=3",
				 text);
	size_t n = (size_t)(eq - text);
	o->key = gp_xmalloc(n + 1);
	memcpy(o->key, text, n);
	o->key[n] = '\0';
	o->value = gp_xstrdup(eq + 1);
	o->kind = kind_of(o->value);
	return GP_OK;
}

char *override_text(const struct override *o)
{
	struct gp_sbuf t = {0};
	gp_sb_printf(&t, "%s=%s", o->key, o->value);
	return gp_sb_take(&t);
}

bool override_same_key(const struct override *a, const struct override *b)
{
	return !strcmp(a->key, b->key);
}

bool override_sets_field(const struct override *o, const char *field)
{
	size_t n = strlen(o->key), m = strlen(field);
	return n > m && o->key[n - m - 1] == '.' && !strcmp(o->key + n - m, field);
}

struct override override_copy(const struct override *o)
{
	return (struct override){gp_xstrdup(o->key), gp_xstrdup(o->value), o->kind};
}

void override_free(struct override *o)
{
	free(o->key);
	free(o->value);
	*o = (struct override){0};
}
