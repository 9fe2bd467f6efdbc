/*
 * main_int.h - the command line's private header, shared by its files:
 *   main.c         the argument parser, errors, and every command but import
 *   main_import.c  `gpuplan import`: its flags, the self-check, --history
 *   main_estimate.c `gpuplan estimate`: one model on one GPU type, or on each
 */
#ifndef GPUPLAN_MAIN_INT_H
#define GPUPLAN_MAIN_INT_H

#include "gpuplan/common.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* cli_parse's answer when it printed the command's help: exit 0. */
#define CLI_HELP (-1)

#define N_OPTS(a) (sizeof(a) / sizeof *(a))

enum cli_kind {
	CLI_FLAG,   /* bool target: set to true */
	CLI_CHOICE, /* int target: set to the row's value (--min/--max) */
	CLI_PATH,   /* const char *target: a non-empty path */
	CLI_NAME,   /* const char *target: a non-empty name */
	CLI_TEXT,   /* const char *target: any value */
	CLI_INT,    /* int64_t target: an integer in [lo, hi] */
	CLI_LIST,   /* struct cli_list target: every occurrence, in order */
	CLI_PARSE,  /* any target: filled by the row's parse function */
};

/* Values of a repeatable option or of trailing arguments; the array is owned. */
struct cli_list {
	const char **v;
	size_t n;
	size_t cap;
};

/* One argument of a command.  A row without a name is a positional argument,
 * filled in table order; a positional CLI_LIST takes all remaining ones. */
struct cli_opt {
	const char *name; /* "--db"; NULL for a positional */
	enum cli_kind kind;
	void *target;
	const char *meta;    /* "PATH": the value in help and errors */
	const char *help;    /* NULL: not listed; '\n' continues the line */
	int64_t lo, hi;      /* CLI_INT range; CLI_CHOICE value in lo */
	const char *expects; /* what the error says it expects: "a run id >= 1" */
	int (*parse)(const char *value, void *target, struct gp_err *err); /* CLI_PARSE */
	bool required; /* an option that must be given (positionals always are) */
	bool repeat;   /* CLI_PARSE: may be given again (its parse function collects) */
};

/* One command: its synopsis (continuation lines after '\n'), one line for
 * the command list, the text of its --help, and what to say when a required
 * option is missing (NULL: "COMMAND: missing OPTION"). */
struct cli_cmd {
	const char *name;
	const char *synopsis;
	const char *summary;
	const char *about;
	const char *needs;
	int (*run)(const struct cli_cmd *cmd, int argc, char **argv);
};

/* Prints err: located input errors ("FILE:LINE:COL: error: ...") carry their
 * own prefix, others get "gpuplan: error: "; a usage error adds where to look. */
int cli_fail(int rc, const struct gp_err *err, bool usage);
int cli_usage_error(const char *fmt, ...) GP_PRINTF(1, 2);
void cli_list_free(struct cli_list *l);
/* Fills the table's targets from argv: 0, an exit code after printing the
 * error, or CLI_HELP after printing the help. */
int cli_parse(const struct cli_cmd *cmd, const struct cli_opt *opts, size_t n, int argc,
	      char **argv);

/* gpuplan import (main_import.c). */
int cmd_import(const struct cli_cmd *cmd, int argc, char **argv);

/* gpuplan estimate (main_estimate.c). */
int cmd_estimate(const struct cli_cmd *cmd, int argc, char **argv);

#endif
