/* test_sha256.c - SHA-256 against the FIPS 180-4 / NIST example vectors. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "gpuplan/sha256.h"

static void hex_of(const char *msg, char out[65]) { sha256_hex(msg, strlen(msg), out); }

Test(sha256, empty_message)
{
	char h[65];
	hex_of("", h);
	cr_assert_str_eq(h, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
}

Test(sha256, abc_one_block_vector)
{
	char h[65];
	hex_of("abc", h);
	cr_assert_str_eq(h, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

Test(sha256, two_block_448_bit_vector)
{
	char h[65];
	hex_of("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq", h);
	cr_assert_str_eq(h, "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
}

Test(sha256, one_million_a_vector_fed_in_odd_chunks)
{
	char chunk[997];
	memset(chunk, 'a', sizeof chunk);
	struct sha256 s;
	sha256_init(&s);
	size_t left = 1000000;
	while (left > 0) {
		size_t n = left < sizeof chunk ? left : sizeof chunk;
		sha256_update(&s, chunk, n);
		left -= n;
	}
	uint8_t d[32];
	sha256_final(&s, d);
	static const uint8_t want[32] = {
		0xcd, 0xc7, 0x6e, 0x5c, 0x99, 0x14, 0xfb, 0x92, 0x81, 0xa1, 0xc7,
		0xe2, 0x84, 0xd7, 0x3e, 0x67, 0xf1, 0x80, 0x9a, 0x48, 0xa4, 0x97,
		0x20, 0x0e, 0x04, 0x6d, 0x39, 0xcc, 0xc7, 0x11, 0x2c, 0xd0,
	};
	cr_assert_arr_eq(d, want, 32);
}

Test(sha256, result_does_not_depend_on_how_input_is_split)
{
	/* Lengths around the 55/56/64-byte padding boundaries. */
	char msg[200];
	for (size_t i = 0; i < sizeof msg; i++)
		msg[i] = (char)('A' + i % 26);
	for (size_t len = 50; len < 140; len++) {
		char whole[65], parts[65];
		sha256_hex(msg, len, whole);
		struct sha256 s;
		uint8_t d[32];
		sha256_init(&s);
		for (size_t i = 0; i < len; i++)
			sha256_update(&s, msg + i, 1);
		sha256_final(&s, d);
		for (int i = 0; i < 32; i++)
			snprintf(parts + 2 * i, 3, "%02x", d[i]);
		cr_assert_str_eq(whole, parts, "length %zu", len);
	}
}

Test(sha256, boundary_lengths_match_known_digests)
{
	/* 55, 56 and 64 'a's: the lengths where padding spills into a second block. */
	static const struct {
		size_t len;
		const char *hex;
	} v[] = {
		{55, "9f4390f8d30c2dd92ec9f095b65e2b9ae9b0a925a5258e241c9f1e910f734318"},
		{56, "b35439a4ac6f0948b6d6f9e3c6af0f5f590ce20f1bde7090ef7970686ec6738a"},
		{64, "ffe054fe7ae0cb6dc65c3af9b61d5209f439851db43d0ba5997337df154668eb"},
	};
	char msg[64];
	memset(msg, 'a', sizeof msg);
	for (size_t i = 0; i < sizeof v / sizeof v[0]; i++) {
		char h[65];
		sha256_hex(msg, v[i].len, h);
		cr_assert_str_eq(h, v[i].hex, "length %zu", v[i].len);
	}
}
