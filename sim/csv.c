/*
 * csv.c - line helpers of the trace readers (see csv.h).
 */
#include "gpuplan/csv.h"

#include <stdarg.h>
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

int csv_error(struct gp_err *err, const char *path, int line, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	gp_vlocated(err, (struct srcloc){path, line, 0}, fmt, ap);
	va_end(ap);
	return GP_EINPUT;
}
