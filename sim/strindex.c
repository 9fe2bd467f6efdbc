/*
 * strindex.c - strings interned to dense ids (see strindex.h).
 */
#include "gpuplan/strindex.h"

#include <stdlib.h>
#include <string.h>

uint64_t strindex_hash(const char *s)
{
	uint64_t h = UINT64_C(0xcbf29ce484222325); /* FNV-1a 64: offset basis, then the prime */
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * UINT64_C(0x100000001b3);
	return h;
}

static void rebuild(struct strindex *x, size_t n_slots)
{
	free(x->slots);
	x->n_slots = n_slots;
	x->slots = gp_xcalloc(n_slots, sizeof *x->slots);
	for (size_t id = 0; id < x->n; id++) {
		size_t i = (size_t)strindex_hash(strindex_key(x, id)) & (n_slots - 1);
		while (x->slots[i])
			i = (i + 1) & (n_slots - 1);
		x->slots[i] = (uint32_t)id + 1;
	}
}

size_t strindex_find(const struct strindex *x, const char *key)
{
	if (!x->n_slots)
		return STRINDEX_NONE;
	size_t i = (size_t)strindex_hash(key) & (x->n_slots - 1);
	for (; x->slots[i]; i = (i + 1) & (x->n_slots - 1))
		if (!strcmp(strindex_key(x, x->slots[i] - 1), key))
			return x->slots[i] - 1;
	return STRINDEX_NONE;
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
	if (2 * x->n > x->n_slots) {
		rebuild(x, x->n_slots ? 2 * x->n_slots : 64);
		return id;
	}
	size_t i = (size_t)strindex_hash(key) & (x->n_slots - 1);
	while (x->slots[i])
		i = (i + 1) & (x->n_slots - 1);
	x->slots[i] = (uint32_t)id + 1;
	return id;
}

void strindex_free(struct strindex *x)
{
	free(x->offsets);
	free(x->text);
	free(x->slots);
	memset(x, 0, sizeof *x);
}
