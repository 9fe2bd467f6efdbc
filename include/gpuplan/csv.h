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

/* Fills err with "PATH:LINE: error: MESSAGE" and returns GP_EINPUT. */
int csv_error(struct gp_err *err, const char *path, int line, const char *fmt, ...) GP_PRINTF(4, 5);

#endif
