/*
 * strindex.c - strings interned to dense ids (see strindex.h).
 */
#include "gpuplan/strindex.h"

#include <stdlib.h>
#include <string.h>

static void rebuild(struct strindex *x, size_t n_slots)
{
	hash_ids_reset(&x->index, n_slots);
	for (size_t id = 0; id < x->n; id++)
		hash_ids_put(&x->index, hash_str(strindex_key(x, id)), id);
}

/* The slot of key, or the empty slot where it goes. */
static size_t slot_of(const struct strindex *x, const char *key)
{
	size_t i = hash_ids_home(&x->index, hash_str(key));
	for (; hash_ids_at(&x->index, i); i = hash_ids_next(&x->index, i))
		if (!strcmp(strindex_key(x, hash_ids_at(&x->index, i) - 1), key))
			break;
	return i;
}

size_t strindex_find(const struct strindex *x, const char *key)
{
	if (!x->n)
		return STRINDEX_NONE;
	uint32_t at = hash_ids_at(&x->index, slot_of(x, key));
	return at ? at - 1 : STRINDEX_NONE;
}

size_t strindex_add(struct strindex *x, const char *key, bool *added)
{
	size_t id = strindex_find(x, key);
	if (added)
		*added = id == STRINDEX_NONE;
	if (id != STRINDEX_NONE)
		return id;
	size_t len = strlen(key) + 1;
	GP_GROW(x->text, x->text_cap, x->text_len + len);
	memcpy(x->text + x->text_len, key, len);
	GP_GROW(x->offsets, x->cap, x->n + 1);
	x->offsets[x->n] = x->text_len;
	x->text_len += len;
	id = x->n++;
	if (hash_ids_crowded(&x->index))
		rebuild(x, x->index.slot ? 2 * hash_ids_slots(&x->index) : 64);
	else
		hash_ids_put_at(&x->index, slot_of(x, key), id);
	return id;
}

void strindex_free(struct strindex *x)
{
	free(x->offsets);
	free(x->text);
	hash_ids_free(&x->index);
	memset(x, 0, sizeof *x);
}
