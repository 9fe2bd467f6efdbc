/*
 * test_hash.c - the one hash table (hash.h): FNV-1a's reference values, the
 * probe past collisions, growth, and the same slots for the same additions.
 */
#include "gpuplan/hash.h"
#include "gpuplan/strindex.h"

#include <criterion/criterion.h>
#include <string.h>

/* FNV-1a 64 test vectors of the FNV page (http://www.isthe.com/chongo/tech/
 * comp/fnv/, "FNV-1a 64 bit"): "" is the offset basis itself. */
Test(hash, fnv1a_gives_the_reference_values)
{
	cr_expect_eq(hash_str(""), UINT64_C(0xcbf29ce484222325));
	cr_expect_eq(hash_str("a"), UINT64_C(0xaf63dc4c8601ec8c));
	cr_expect_eq(hash_str("foobar"), UINT64_C(0x85944171f73967e8));
	/* continuing over a second string is hashing the two joined */
	cr_expect_eq(hash_fnv1a(hash_str("foo"), "bar"), hash_str("foobar"));
	cr_expect_eq(hash_fnv1a_byte(hash_str("fooba"), 'r'), hash_str("foobar"));
}

/* The records of the tests below: the index holds their ids only. */
static const char *const names[] = {"a", "b", "c", "d", "e", "f", "g", "h", "i", "j"};

static size_t find(const struct hash_ids *x, uint64_t h, const char *key, size_t *slot)
{
	size_t i = hash_ids_home(x, h);
	for (; hash_ids_at(x, i); i = hash_ids_next(x, i))
		if (!strcmp(names[hash_ids_at(x, i) - 1], key))
			break;
	if (slot)
		*slot = i;
	return hash_ids_at(x, i) ? hash_ids_at(x, i) - 1u : SIZE_MAX;
}

/* Every key hashed to 7 in 8 slots: the first sits at 7, the next wraps to
 * 0, 1, 2 - linear probing - and each is still found, and a missing key's
 * probe stops at the first empty slot (3). */
Test(hash, colliding_keys_probe_on_and_wrap_around)
{
	struct hash_ids x = {0};
	hash_ids_reset(&x, 8);
	for (size_t id = 0; id < 4; id++) {
		size_t slot;
		cr_assert_eq(find(&x, 7, names[id], &slot), SIZE_MAX);
		cr_assert_eq(slot, (7 + id) % 8);
		hash_ids_put_at(&x, slot, id);
	}
	for (size_t id = 0; id < 4; id++)
		cr_expect_eq(find(&x, 7, names[id], NULL), id);
	size_t slot;
	cr_expect_eq(find(&x, 7, "z", &slot), SIZE_MAX);
	cr_expect_eq(slot, 3);
	cr_expect_eq(x.n, 4);
	hash_ids_free(&x);
	cr_expect_null(x.slot);
}

/* An empty index is crowded (it has no slots); 8 slots take 4 ids (half
 * full), and the 5th would fill more than half: the caller doubles first. */
Test(hash, half_full_is_crowded)
{
	struct hash_ids x = {0};
	cr_expect(hash_ids_crowded(&x));
	cr_expect_eq(hash_ids_slots(&x), 0);
	hash_ids_reset(&x, 8);
	for (size_t id = 0; id < 4; id++) {
		cr_expect_not(hash_ids_crowded(&x), "%zu ids", id);
		hash_ids_put(&x, hash_str(names[id]), id);
	}
	cr_expect(hash_ids_crowded(&x), "2 x (4 + 1) > 8");
	hash_ids_reset(&x, 16);
	cr_expect_eq(x.n, 0);
	cr_expect_eq(hash_ids_slots(&x), 16);
	for (size_t id = 0; id < 10; id++)
		hash_ids_put(&x, hash_str(names[id]), id);
	for (size_t id = 0; id < 10; id++)
		cr_expect_eq(find(&x, hash_str(names[id]), names[id], NULL), id);
	hash_ids_free(&x);
}

/* Two indexes given the same ids in the same order have the same slots:
 * nothing in the table depends on an address or a clock. */
Test(hash, the_same_additions_give_the_same_slots)
{
	struct hash_ids a = {0}, b = {0};
	hash_ids_reset(&a, 32);
	hash_ids_reset(&b, 32);
	for (size_t id = 0; id < 10; id++) {
		hash_ids_put(&a, hash_str(names[id]), id);
		hash_ids_put(&b, hash_str(names[id]), id);
	}
	cr_expect_eq(memcmp(a.slot, b.slot, 32 * sizeof *a.slot), 0);
	hash_ids_free(&a);
	hash_ids_free(&b);
}

/* strindex grows its index through hash.h: 1,000 names in order of
 * addition, each found again after the table doubled from 64 slots at the
 * 33rd, 65th, 129th, 257th and 513th name to 2,048 (2 x 1,000 <= 2,048),
 * ids unchanged. */
Test(hash, a_table_grown_keeps_every_id)
{
	struct strindex s = {0};
	char key[32];
	for (int i = 0; i < 1000; i++) {
		snprintf(key, sizeof key, "pod-%d", i);
		cr_assert_eq(strindex_add(&s, key, NULL), (size_t)i);
	}
	cr_expect_eq(hash_ids_slots(&s.index), 2048);
	cr_expect_eq(s.index.n, 1000);
	for (int i = 0; i < 1000; i += 7) {
		snprintf(key, sizeof key, "pod-%d", i);
		cr_expect_eq(strindex_find(&s, key), (size_t)i);
	}
	cr_expect_eq(strindex_find(&s, "pod-1000"), STRINDEX_NONE);
	strindex_free(&s);
}
