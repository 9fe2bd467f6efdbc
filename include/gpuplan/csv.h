/*
 * csv.h - what the trace readers (batch CSV, Azure, openb) share: trimming
 * and splitting a line into cells in place, and errors that name the file
 * and line ("TRACE:LINE: error: ...").  The cells point into the line.
 */
#ifndef GPUPLAN_CSV_H
#define GPUPLAN_CSV_H

#include "gpuplan/common.h"

/* s without leading and trailing blanks (and line ends), and without a UTF-8
 * byte order mark at its start, in place. */
char *csv_trim(char *s);

/* Splits line at commas into trimmed cells[0 .. max); returns the number of
 * cells, or max + 1 when there are more than max. */
int csv_split(char *line, char **cells, int max);

/* Like csv_split, for RFC 4180 cells: a cell in double quotes may hold
 * commas, line ends and doubled quotes (""), and is unquoted in place;
 * blanks around a quoted cell are dropped.  Returns -1 when a quote is
 * left open or text follows a closing quote in its cell. */
int csv_split_quoted(char *line, char **cells, int max);

/* Whether line (a whole physical line) leaves a double quote open, so that
 * its last cell goes on after the line end. */
bool csv_quote_open(const char *line);

/* An error message quotes at most CSV_QUOTE_MAX bytes of a cell: a field of
 * 5,000 characters is cut with "...", and a control byte shows as \xNN rather
 * than raw (a terminal would act on it).  CSV_Q(cell) quotes into a buffer
 * that lives as long as the enclosing block: row_error(r, "'%s'", CSV_Q(c)). */
#define CSV_QUOTE_MAX  40
#define CSV_QUOTE_SIZE (4 * CSV_QUOTE_MAX + 4)
#define CSV_Q(cell)    csv_quote((cell), (char[CSV_QUOTE_SIZE]){0})
const char *csv_quote(const char *cell, char *buf);

/* GP_OK, or a located error when the len bytes of line text hold a NUL byte
 * (C strings would end there, and the row would be read as cut short). */
int csv_check_text(struct gp_err *err, const char *path, int line, const char *text, size_t len);

/* Fills err with "PATH:LINE: error: MESSAGE" and returns GP_EINPUT. */
int csv_error(struct gp_err *err, const char *path, int line, const char *fmt, ...) GP_PRINTF(4, 5);

#endif
