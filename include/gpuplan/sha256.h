/*
 * sha256.h - SHA-256 (FIPS 180-4), used to fingerprint scenario files in the
 * runs table.  None of the project's dependencies exposes a hash, and this is
 * small enough to own.
 */
#ifndef GPUPLAN_SHA256_H
#define GPUPLAN_SHA256_H

#include <stddef.h>
#include <stdint.h>

struct sha256 {
	uint32_t h[8];
	uint64_t length; /* bytes hashed so far */
	uint8_t block[64];
	size_t used;
};

void sha256_init(struct sha256 *s);
void sha256_update(struct sha256 *s, const void *data, size_t len);
void sha256_final(struct sha256 *s, uint8_t digest[32]);

/* Hex digest (64 chars + NUL) of a buffer. */
void sha256_hex(const void *data, size_t len, char hex[65]);

#endif
