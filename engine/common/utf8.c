/*
** UTF-8 validity and repair for text that comes from a profiled program or
** a file system (kernel and GPU names, nsys versions, file names): bytes,
** not necessarily UTF-8. What must be UTF-8 (YAML, JSON) gets U+FFFD for
** each byte that does not start a valid sequence (common.h).
*/
#include "common.h"

#include <stdlib.h>
#include <string.h>

size_t tg_utf8_seq(const unsigned char *s, size_t n)
{
    unsigned char c = s[0];
    size_t len;
    unsigned lo = 0x80, hi = 0xBF;   /* range of the second byte */
    if (c < 0x80) return 1;
    if (c >= 0xC2 && c <= 0xDF) len = 2;
    else if (c >= 0xE0 && c <= 0xEF) {
        len = 3;
        if (c == 0xE0) lo = 0xA0;    /* no overlong forms */
        if (c == 0xED) hi = 0x9F;    /* no surrogates */
    } else if (c >= 0xF0 && c <= 0xF4) {
        len = 4;
        if (c == 0xF0) lo = 0x90;
        if (c == 0xF4) hi = 0x8F;    /* nothing above U+10FFFF */
    } else return 0;
    if (len > n) return 0;
    if (s[1] < lo || s[1] > hi) return 0;
    for (size_t i = 2; i < len; i++)
        if ((s[i] & 0xC0) != 0x80) return 0;
    return len;
}

bool tg_utf8_valid(const char *s, size_t len)
{
    const unsigned char *p = (const unsigned char *)s;
    for (size_t i = 0; i < len;) {
        size_t k = tg_utf8_seq(p + i, len - i);
        if (!k) return false;
        i += k;
    }
    return true;
}

char *tg_utf8_clean(tg_arena *a, const char *s)
{
    if (!s) return NULL;
    size_t len = strlen(s);
    if (tg_utf8_valid(s, len)) return a ? tg_arena_strndup(a, s, len) : strdup(s);
    char *out = a ? tg_arena_alloc(a, 3 * len + 1) : malloc(3 * len + 1);
    if (!out) return NULL;
    const unsigned char *p = (const unsigned char *)s;
    size_t o = 0;
    for (size_t i = 0; i < len;) {
        size_t k = tg_utf8_seq(p + i, len - i);
        if (k) {
            memcpy(out + o, p + i, k);
            o += k;
            i += k;
        } else {
            memcpy(out + o, "\xef\xbf\xbd", 3);
            o += 3;
            i++;
        }
    }
    out[o] = 0;
    return out;
}
