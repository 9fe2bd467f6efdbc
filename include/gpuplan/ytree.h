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

/* The flags beside the kind, so a node takes 80 bytes, not 96 (a
 * 100,000-node kubectl dump makes millions of them). */
struct ynode {
	enum ynode_kind kind;
	bool quoted;      /* scalar was quoted (so "12:00" is a string) */
	bool placeholder; /* tagged !placeholder */
	struct srcloc loc;
	char *value; /* scalar text; NULL for maps and sequences */
	size_t n;    /* entries of a map or items of a sequence */
	char **keys; /* map keys (NULL for sequences) */
	struct srcloc *key_locs;
	struct ynode **items; /* map values or sequence items */
	char *source;         /* placeholder: the value as written (its source text) */
	char *note;           /* placeholder: the # comment on its line; NULL: none */
};

#define YTREE_PLACEHOLDER_TAG "!placeholder"

struct ytree {
	struct ynode *root;
	/* private: strings for locations (file names, override texts) */
	char **strings;
	size_t n_strings, cap_strings;
	void *arena; /* a JSON tree's nodes and strings (ytree_load_json); NULL: malloc'd */
};

/* Parses PATH.  Syntax errors: "PATH:LINE:COL: error: ...", GP_EINPUT; unreadable
 * file: GP_EINPUT with "PATH: error: cannot read: ..." */
int ytree_load(const char *path, struct ytree **out, struct gp_err *err);

/* Same, from memory; name is used in locations. */
int ytree_parse(const char *name, const char *text, size_t len, struct ytree **out,
		struct gp_err *err);

/* Parses PATH as JSON (RFC 8259) when its first character (after a byte
 * order mark and white space) opens an object or a list, else as YAML
 * (ytree_load).  One pass, into an arena: a 100,000-node kubectl dump in
 * about 1 s and 200 bytes of memory per node.  There are no aliases, so the
 * tree is never bigger than the text.  Members whose key is in skip (a
 * NULL-terminated list, or NULL) are read for their syntax (duplicate keys
 * aside) and left out of the tree, at no cost in memory.  Errors: "PATH:LINE:COL: error: ..." (columns in characters, as
 * libyaml counts them), GP_EINPUT.  The tree cannot take ytree_set. */
int ytree_load_json(const char *path, const char *const *skip, struct ytree **out,
		    struct gp_err *err);
/* The same from memory (JSON only); name is used in locations. */
int ytree_parse_json(const char *name, const char *text, size_t len, const char *const *skip,
		     struct ytree **out, struct gp_err *err);
/* Whether text opens a JSON object or list. */
bool ytree_looks_json(const char *text, size_t len);

/* Applies "KEY=VALUE".  A missing map key is created (the scenario validator then
 * rejects unknown keys); a missing list item or a path through a scalar is an
 * error naming the closest existing name.  A last step "+" appends the value
 * to a list: pools.+={name: shared, ...}. */
int ytree_set(struct ytree *t, const char *assignment, struct gp_err *err);
/* The same for an override given as its key and value (override.h): no
 * "KEY=VALUE" text to split.  Messages name it as ytree_set's do. */
int ytree_set_key(struct ytree *t, const char *key, const char *value, struct gp_err *err);

/* The file name of an override's locations begins so: "--set KEY=VALUE". */
#define YTREE_OVERRIDE     "--set "
#define YTREE_OVERRIDE_LEN (sizeof YTREE_OVERRIDE - 1)

/* Whether a location's file is an override (ytree_set), not a file. */
static inline bool ytree_is_override(const char *file)
{
	return file && !strncmp(file, YTREE_OVERRIDE, YTREE_OVERRIDE_LEN);
}

void ytree_free(struct ytree *t);

/* Keeps a copy of s for the tree's lifetime, past ytree_drop_nodes: the file
 * names locations point to, and values a loader keeps as written. */
const char *ytree_intern(struct ytree *t, const char *s);

/* Frees the document's nodes (root becomes NULL) and keeps ytree_intern's
 * strings, so the locations a loader copied stay valid: an imported
 * scenario of 100,000 workloads is a tree of 350 MB. */
void ytree_drop_nodes(struct ytree *t);

/* A deep copy of n (locations kept), owned by the caller until it is put
 * in a tree; ynode_free releases a node that is not (ytree_free releases
 * the rest).  Not for a JSON tree's arena nodes' owner: the copy is malloc'd. */
struct ynode *ynode_copy(const struct ynode *n);
void ynode_free(struct ynode *n);
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
