/*
 * csv.c - line helpers of the trace readers (see csv.h).
 */
#include "gpuplan/csv.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

char *csv_trim(char *s)
{
	/* A UTF-8 byte order mark, which spreadsheet exports put before the
	 * header, is no part of the first cell. */
	if ((unsigned char)s[0] == 0xEF && (unsigned char)s[1] == 0xBB &&
	    (unsigned char)s[2] == 0xBF)
		s += 3;
	while (*s == ' ' || *s == '\t')
		s++;
	size_t n = strlen(s);
	while (n && (s[n - 1] == ' ' || s[n - 1] == '\t' || s[n - 1] == '\r' || s[n - 1] == '\n'))
		s[--n] = '\0';
	return s;
}

int csv_split(char *line, char **cells, int max)
{
	int n = 0;
	for (char *p = line;; n++) {
		char *comma = strchr(p, ',');
		if (comma)
			*comma = '\0';
		if (n < max)
			cells[n] = csv_trim(p);
		if (!comma)
			return n + 1 > max ? max + 1 : n + 1;
		p = comma + 1;
	}
}

bool csv_quote_open(const char *line)
{
	bool open = false;
	for (const char *p = line; *p; p++)
		open ^= *p == '"';
	return open;
}

int csv_split_quoted(char *line, char **cells, int max)
{
	int n = 0;
	char *p = line;
	for (;; n++) {
		while (*p == ' ' || *p == '\t')
			p++;
		char *cell = p, *end;
		bool quoted = *p == '"';
		if (quoted) {
			char *w = cell;
			for (p++;; p++) {
				if (!*p)
					return -1;
				if (*p == '"' && p[1] != '"')
					break;
				*w++ = *p;
				p += *p == '"'; /* "" is one quote */
			}
			end = w;
			p++;
			while (*p == ' ' || *p == '\t' || *p == '\r' || *p == '\n')
				p++;
			if (*p && *p != ',')
				return -1;
		} else {
			p += strcspn(p, ",");
			end = p;
		}
		char sep = *p;
		*end = '\0';
		if (n < max)
			cells[n] = quoted ? cell : csv_trim(cell);
		if (sep != ',')
			return n + 1 > max ? max + 1 : n + 1;
		p++;
	}
}

/* n, or less so that buf[0 .. n) does not end in a UTF-8 character cut short. */
static size_t whole_utf8(const char *buf, size_t n)
{
	size_t k = n;
	while (k && ((unsigned char)buf[k - 1] & 0xC0) == 0x80)
		k--;
	if (!k || (unsigned char)buf[k - 1] < 0xC0)
		return n; /* no lead byte before the continuation bytes: not UTF-8 */
	unsigned char lead = (unsigned char)buf[k - 1];
	size_t need = lead >= 0xF0 ? 4 : lead >= 0xE0 ? 3 : 2;
	return n - (k - 1) >= need ? n : k - 1;
}

const char *csv_quote(const char *cell, char *buf)
{
	size_t n = 0, i = 0;
	for (; cell[i] && i < CSV_QUOTE_MAX; i++) {
		unsigned char c = (unsigned char)cell[i];
		if (c < 0x20 || c == 0x7f)
			n += (size_t)snprintf(buf + n, 5, "\\x%02x", c);
		else
			buf[n++] = (char)c;
	}
	if (cell[i]) {
		n = whole_utf8(buf, n);
		memcpy(buf + n, "...", 3);
		n += 3;
	}
	buf[n] = '\0';
	return buf;
}

int csv_check_text(struct gp_err *err, const char *path, int line, const char *text, size_t len)
{
	const char *nul = memchr(text, '\0', len);
	if (!nul)
		return GP_OK;
	return csv_error(err, path, line,
			 "a NUL byte at byte %zu of the line; expected text (is this a binary "
			 "file?)",
			 (size_t)(nul - text) + 1);
}

int csv_error(struct gp_err *err, const char *path, int line, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	gp_vlocated(err, (struct srcloc){path, line, 0}, fmt, ap);
	va_end(ap);
	return GP_EINPUT;
}
