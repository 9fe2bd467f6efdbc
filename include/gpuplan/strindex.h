/*
 * strindex.h - strings interned to dense ids, found by hashing.
 *
 * The names' table, on hash.h's index (FNV-1a, open addressing over id + 1
 * slots, rebuilt at twice the size past half full).  Ids are
 * given in order of first addition, from 0, and never change; the keys are
 * copied into one growing arena, so adding a key costs one amortised copy
 * and no allocation of its own.
 *
 * Lookup and addition: O(1) expected.  strindex_free releases everything.
 */
#ifndef GPUPLAN_STRINDEX_H
#define GPUPLAN_STRINDEX_H

#include "gpuplan/common.h"
#include "gpuplan/hash.h"

struct strindex {
	size_t *offsets; /* per id: its key's offset in text */
	size_t n, cap;
	char *text; /* the keys, NUL-terminated, one after another */
	size_t text_len, text_cap;
	struct hash_ids index;
};

#define STRINDEX_NONE SIZE_MAX

/* The id of key, or STRINDEX_NONE. */
size_t strindex_find(const struct strindex *x, const char *key);
/* The id of key, added when new (*added says which; may be NULL). */
size_t strindex_add(struct strindex *x, const char *key, bool *added);
/* The key of id (valid until the next strindex_add). */
static inline const char *strindex_key(const struct strindex *x, size_t id)
{
	return x->text + x->offsets[id];
}
void strindex_free(struct strindex *x);

#endif
