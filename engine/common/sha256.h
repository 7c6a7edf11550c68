/*
** SHA-256 (FIPS 180-4), for identities that must be the same on every
** machine and change with any change of what they name: the rule-set
** digest a JSON result records (docs/formats.md, "Where a result comes
** from"), which merge compares, and the name of a .nsys-rep report's cached
** export (engine/cli/inputs.c: the hash of the report's bytes). The
** project's one cryptographic hash, for whatever needs one.
*/
#ifndef TG_SHA256_H
#define TG_SHA256_H

#include <stddef.h>
#include <stdint.h>

typedef struct tg_sha256 {
    uint32_t h[8];
    uint64_t len;              /* bytes so far */
    unsigned char block[64];
    size_t used;
} tg_sha256;

#define TG_SHA256_HEX 65       /* 64 hex digits and the NUL */

void tg_sha256_init(tg_sha256 *s);
void tg_sha256_update(tg_sha256 *s, const void *data, size_t n);
/* n bytes preceded by their length (8 bytes, little-endian), so that
** consecutive fields cannot run into each other ("ab","c" vs "a","bc"). */
void tg_sha256_field(tg_sha256 *s, const void *data, size_t n);
void tg_sha256_str(tg_sha256 *s, const char *str);   /* a field; NULL differs from "" */
/* The digest as 64 lowercase hex digits into hex[TG_SHA256_HEX]. */
void tg_sha256_hex(tg_sha256 *s, char hex[TG_SHA256_HEX]);

#endif
