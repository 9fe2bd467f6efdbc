/*
 * hash.c - the index of ids by hash (see hash.h).
 */
#include "gpuplan/hash.h"

#include <stdlib.h>

void hash_ids_reset(struct hash_ids *x, size_t slots)
{
	assert(slots && !(slots & (slots - 1)));
	free(x->slot);
	x->slot = gp_xcalloc(slots, sizeof *x->slot);
	x->mask = slots - 1;
	x->n = 0;
}

void hash_ids_free(struct hash_ids *x)
{
	free(x->slot);
	*x = (struct hash_ids){0};
}

void hash_ids_put(struct hash_ids *x, uint64_t h, size_t id)
{
	size_t i = hash_ids_home(x, h);
	while (x->slot[i])
		i = hash_ids_next(x, i);
	hash_ids_put_at(x, i, id);
}
