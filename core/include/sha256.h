/*
 * sha256.h - SHA-256 (FIPS 180-4) and HMAC-SHA256 (RFC 2104): what the
 * server's users file keeps of a token (its hash, never the token) and
 * what signs a payload. Small and dependency-free; not for passwords
 * (tokens are 32 random bytes: a fast hash of them is enough).
 */
#ifndef OP_CORE_SHA256_H
#define OP_CORE_SHA256_H

#include <stddef.h>
#include <stdint.h>

#define SHA256_LEN 32
#define SHA256_HEX_LEN 64

typedef struct sha256_ctx {
    uint32_t h[8];
    uint64_t bytes;     /* hashed so far */
    unsigned char buf[64];
    size_t nbuf;
} sha256_ctx;

void sha256_init(sha256_ctx *c);
void sha256_update(sha256_ctx *c, const void *data, size_t n);
void sha256_final(sha256_ctx *c, unsigned char out[SHA256_LEN]);

/* The digest of data[0..n) in one call. */
void sha256(const void *data, size_t n, unsigned char out[SHA256_LEN]);
/* The same as 64 lowercase hex digits and a NUL. */
void sha256_hex(const void *data, size_t n, char out[SHA256_HEX_LEN + 1]);
/* HMAC-SHA256 of msg under key. */
void hmac_sha256(const void *key, size_t klen, const void *msg, size_t mlen,
                 unsigned char out[SHA256_LEN]);

#endif
