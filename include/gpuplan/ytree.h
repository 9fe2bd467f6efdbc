/*
 * ytree.h - a YAML document as a small tree whose every node knows where it
 * came from (file, line, column), so that validation errors can point at it.
 *
 * ytree_load parses one document with libyaml (aliases resolved, one document
 * per file).  ytree_set applies a `--set KEY=VALUE` override: KEY is a dotted
 * path whose list steps name items by their `name` key (pools.batch.nodes) or
 * by index (pools.0.nodes); VALUE is parsed as a YAML flow value, so lists and
 * maps can be set too.  Overridden nodes carry the location "--set KEY=VALUE"
 * so errors about them name the override.
 *
 * The tag !placeholder may mark any value (a scalar, a flow or block map or
 * list): the node keeps its value as usual and is flagged, with the text it
 * was written as and the `#` comment on its line (the reason it is not a
 * learned figure; docs/scenario.md, "Placeholders").  Any other local tag
 * (!foo) is an error; YAML's own (!!str) are accepted and ignored.
 *
 * The tree owns all its nodes and strings; ytree_free releases everything.
 */
#ifndef GPUPLAN_YTREE_H
#define GPUPLAN_YTREE_H

#include "gpuplan/common.h"

#include <string.h>

enum ynode_kind { YNODE_SCALAR, YNODE_MAP, YNODE_SEQ };

struct ynode {
	enum ynode_kind kind;
	struct srcloc loc;
	char *value; /* scalar text; NULL for maps and sequences */
	bool quoted; /* scalar was quoted (so "12:00" is a string) */
	size_t n;    /* entries of a map or items of a sequence */
	char **keys; /* map keys (NULL for sequences) */
	struct srcloc *key_locs;
	struct ynode **items; /* map values or sequence items */
	bool placeholder;     /* tagged !placeholder */
	char *source;         /* placeholder: the value as written (its source text) */
	char *note;           /* placeholder: the # comment on its line; NULL: none */
};

#define YTREE_PLACEHOLDER_TAG "!placeholder"

struct ytree {
	struct ynode *root;
	/* private: strings for locations (file names, override texts) */
	char **strings;
	size_t n_strings, cap_strings;
};

/* Parses PATH.  Syntax errors: "PATH:LINE:COL: error: ...", GP_EINPUT; unreadable
 * file: GP_EINPUT with "PATH: error: cannot read: ..." */
int ytree_load(const char *path, struct ytree **out, struct gp_err *err);

/* Same, from memory; name is used in locations. */
int ytree_parse(const char *name, const char *text, size_t len, struct ytree **out,
		struct gp_err *err);

/* Applies "KEY=VALUE".  A missing map key is created (the scenario validator then
 * rejects unknown keys); a missing list item or a path through a scalar is an
 * error naming the closest existing name.  A last step "+" appends the value
 * to a list: pools.+={name: shared, ...}. */
int ytree_set(struct ytree *t, const char *assignment, struct gp_err *err);

/* The file name of an override's locations begins so: "--set KEY=VALUE". */
#define YTREE_OVERRIDE     "--set "
#define YTREE_OVERRIDE_LEN (sizeof YTREE_OVERRIDE - 1)

/* Whether a location's file is an override (ytree_set), not a file. */
static inline bool ytree_is_override(const char *file)
{
	return file && !strncmp(file, YTREE_OVERRIDE, YTREE_OVERRIDE_LEN);
}

void ytree_free(struct ytree *t);

/* Map lookup: the value under key, or NULL. */
struct ynode *ynode_get(const struct ynode *map, const char *key);

/* Of candidates[0..n), the one closest to word by edit distance (at most
 * max(2, strlen/3) edits away), or NULL.  Used for "did you mean" hints. */
const char *ytree_closest(const char *word, const char *const *candidates, size_t n);

/* The name the user likely meant: the first longer one that word begins,
 * case aside ("H100" -> "H100-80GB", not "A10" two edits away), else
 * ytree_closest's; NULL: none. */
const char *ytree_suggest(const char *word, const char *const *names, size_t n);

#endif
