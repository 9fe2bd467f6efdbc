/*
 * hash.h - the project's one hash table: an index from a key to a dense id,
 * and the one string hash (FNV-1a).
 *
 * The records live in the caller's array, in the order they were added; the
 * index holds only their ids.  So, as Redis' dict.c is told how to hash and
 * compare what it holds, the caller hashes a key and compares records while
 * it walks the probe sequence:
 *
 *   size_t i = hash_ids_home(&x, h);
 *   for (; hash_ids_at(&x, i); i = hash_ids_next(&x, i))
 *           if (same(&recs[hash_ids_at(&x, i) - 1], key)) return found;
 *   ... i is now the empty slot where the key goes: hash_ids_put_at(&x, i, id)
 *
 * Open addressing with linear probing over a power-of-two table of id + 1
 * slots (0 = empty).  The caller decides when to grow (hash_ids_crowded: past
 * half full) and re-enters its ids with hash_ids_put after hash_ids_reset;
 * nothing is ever deleted (a table that drops records rebuilds without
 * them).  Nothing iterates the slots, so their layout never reaches an
 * output: ids, not slots, carry the order.
 *
 * Lookup and addition: O(1) expected; a reset O(slots).  hash_ids_free
 * releases the slots.
 */
#ifndef GPUPLAN_HASH_H
#define GPUPLAN_HASH_H

#include "gpuplan/common.h"

#include <assert.h>

/* FNV-1a 64: the offset basis, then for each byte xor and multiply by the
 * prime (http://www.isthe.com/chongo/tech/comp/fnv/). */
#define HASH_FNV_BASIS UINT64_C(0xcbf29ce484222325)
#define HASH_FNV_PRIME UINT64_C(0x100000001b3)

static inline uint64_t hash_fnv1a_byte(uint64_t h, unsigned char c)
{
	return (h ^ c) * HASH_FNV_PRIME;
}

/* h continued over the bytes of s (HASH_FNV_BASIS to start). */
static inline uint64_t hash_fnv1a(uint64_t h, const char *s)
{
	for (; *s; s++)
		h = hash_fnv1a_byte(h, (unsigned char)*s);
	return h;
}

/* FNV-1a of s. */
static inline uint64_t hash_str(const char *s) { return hash_fnv1a(HASH_FNV_BASIS, s); }

struct hash_ids {
	uint32_t *slot; /* id + 1, or 0: empty */
	size_t mask;    /* slots - 1 */
	size_t n;       /* ids in the slots */
};

/* An empty index of `slots` slots (a power of two), the old slots freed. */
void hash_ids_reset(struct hash_ids *x, size_t slots);
void hash_ids_free(struct hash_ids *x);

/* Whether one more id would fill more than half the slots (or there are
 * none): then the caller resets at twice the size and puts its ids again. */
static inline bool hash_ids_crowded(const struct hash_ids *x)
{
	return !x->slot || 2 * (x->n + 1) > x->mask + 1;
}

static inline size_t hash_ids_slots(const struct hash_ids *x) { return x->slot ? x->mask + 1 : 0; }

/* The first slot of the keys of hash h, the next slot of the probe, and
 * what slot i holds (id + 1, or 0 where the probe ends). */
static inline size_t hash_ids_home(const struct hash_ids *x, uint64_t h)
{
	return (size_t)h & x->mask;
}
static inline size_t hash_ids_next(const struct hash_ids *x, size_t i) { return (i + 1) & x->mask; }
static inline uint32_t hash_ids_at(const struct hash_ids *x, size_t i) { return x->slot[i]; }

/* Puts id in the empty slot i where its probe ended. */
static inline void hash_ids_put_at(struct hash_ids *x, size_t i, size_t id)
{
	assert(!x->slot[i] && id < UINT32_MAX);
	x->slot[i] = (uint32_t)id + 1;
	x->n++;
}

/* Puts id, whose key is not in the index, at the end of h's probe. */
void hash_ids_put(struct hash_ids *x, uint64_t h, size_t id);

#endif
