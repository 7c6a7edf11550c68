/*
** The escaping rule of text.h: one pass over the bytes of a value, each
** valid UTF-8 character passed through or replaced by a visible escape,
** each invalid byte shown as \xNN, the output cut at a cap. The state it
** carries is what the CI-log rules need: the last byte written (for "##")
** and whether only blanks were written since the value or line began
** (for a leading "::"). Blanks are every character .NET's TrimStart skips,
** since that is what GitHub's runner trims before it looks for "::".
*/
#include "text.h"

#include <stdlib.h>
#include <string.h>

/* Code points shown as \uXXXX although they are valid UTF-8. */
static const struct { uint32_t lo, hi; } shown_as_code[] = {
    {0x0080, 0x009F},   /* C1 controls: U+009B is CSI on terminals that take 8-bit controls */
    {0x061C, 0x061C},   /* bidirectional controls: text that reads other than it runs */
    {0x200E, 0x200F},
    {0x202A, 0x202E},
    {0x2066, 0x2069},
    {0x2028, 0x2029},   /* line and paragraph separators */
    {0xFDD0, 0xFDEF},   /* noncharacters (with U+xxFFFE and U+xxFFFF below) */
};

static bool shown_as_escape(uint32_t cp)
{
    if ((cp & 0xFFFE) == 0xFFFE) return true;   /* U+FFFE, U+FFFF, U+1FFFE, ...: not XML characters */
    for (size_t i = 0; i < sizeof shown_as_code / sizeof *shown_as_code; i++)
        if (cp >= shown_as_code[i].lo && cp <= shown_as_code[i].hi) return true;
    return false;
}

/* Unicode White_Space left after escaping (controls and separators are
** escaped before they could count). */
static bool is_blank(uint32_t cp)
{
    return cp == ' ' || cp == 0xA0 || cp == 0x1680 || (cp >= 0x2000 && cp <= 0x200A) || cp == 0x202F ||
           cp == 0x205F || cp == 0x3000;
}

static uint32_t utf8_decode(const unsigned char *s, size_t len)
{
    if (len == 1) return s[0];
    uint32_t cp = s[0] & (0xFF >> (len + 1));
    for (size_t i = 1; i < len; i++) cp = cp << 6 | (s[i] & 0x3F);
    return cp;
}

typedef struct escaper {
    tg_text_sink sink;
    void *ctx;
    size_t cap, out;     /* bytes allowed and written */
    char last;           /* last byte written, 0 at the start */
    bool line_start;     /* only blanks written since the value or line began */
} escaper;

/* Write a piece when it fits under the cap; false when it does not. */
static bool emit(escaper *e, const char *s, size_t n, bool blank)
{
    if (n > e->cap - e->out) return false;
    e->sink(e->ctx, s, n);
    e->out += n;
    e->last = s[n - 1];
    if (!blank) e->line_start = false;
    return true;
}

/* The escape for one control character (C0 or DEL). */
static size_t control_escape(char *buf, size_t size, uint32_t cp)
{
    switch (cp) {
    case '\n': return (size_t)snprintf(buf, size, "\\n");
    case '\r': return (size_t)snprintf(buf, size, "\\r");
    case '\t': return (size_t)snprintf(buf, size, "\\t");
    default: return (size_t)snprintf(buf, size, "\\x%02x", (unsigned)cp);
    }
}

/* One character (k bytes at p, a valid sequence) as it is written. */
static bool put_char(escaper *e, const unsigned char *p, size_t k, const unsigned char *end, unsigned flags)
{
    char buf[16];
    uint32_t cp = utf8_decode(p, k);
    if (cp == '\n' && (flags & TG_TEXT_KEEP_NEWLINES)) {
        if (!emit(e, "\n", 1, true)) return false;
        e->line_start = true;
        return true;
    }
    if (cp < 0x20 || cp == 0x7F) return emit(e, buf, control_escape(buf, sizeof buf, cp), false);
    if (shown_as_escape(cp))
        return emit(e, buf, (size_t)snprintf(buf, sizeof buf, cp > 0xFFFF ? "\\U%08x" : "\\u%04x", (unsigned)cp),
                    false);
    if (cp == '#' && e->last == '#') return emit(e, "\\x23", 4, false);
    if (cp == ':' && e->line_start && p + 1 < end && p[1] == ':') return emit(e, "\\x3a", 4, false);
    return emit(e, (const char *)p, k, is_blank(cp));
}

size_t tg_text_escape(const char *s, size_t len, size_t cap, unsigned flags, tg_text_sink sink, void *ctx)
{
    if (!s) return 0;
    escaper e = {.sink = sink, .ctx = ctx, .cap = cap, .line_start = true};
    const unsigned char *p = (const unsigned char *)s, *end = p + len;
    while (p < end) {
        size_t k = tg_utf8_seq(p, (size_t)(end - p));
        bool fits;
        if (k) {
            fits = put_char(&e, p, k, end, flags);
        } else {
            char buf[8];   /* a byte that starts no valid sequence */
            k = 1;
            fits = emit(&e, buf, (size_t)snprintf(buf, sizeof buf, "\\x%02x", *p), false);
        }
        if (!fits) {
            char tail[48];
            int n = snprintf(tail, sizeof tail, "\xe2\x80\xa6(%zu bytes)", len);
            sink(ctx, tail, (size_t)n);
            return e.out + (size_t)n;
        }
        p += k;
    }
    return e.out;
}

static void file_sink(void *ctx, const char *s, size_t n) { fwrite(s, 1, n, ctx); }

void tg_text_fput(FILE *out, const char *s, size_t cap, unsigned flags)
{
    if (s) tg_text_escape(s, strlen(s), cap, flags, file_sink, out);
}

typedef struct growbuf {
    char *s;
    size_t len, cap;
    bool oom;
} growbuf;

static void buf_sink(void *ctx, const char *s, size_t n)
{
    growbuf *b = ctx;
    if (b->oom) return;
    if (b->len + n + 1 > b->cap) {
        size_t cap = (b->len + n + 1) * 2;
        char *p = realloc(b->s, cap);
        if (!p) {
            b->oom = true;
            return;
        }
        b->s = p;
        b->cap = cap;
    }
    memcpy(b->s + b->len, s, n);
    b->len += n;
    b->s[b->len] = 0;
}

bool tg_ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), m = strlen(suffix);
    return n >= m && strcmp(s + n - m, suffix) == 0;
}

/* s between quotes q, each q inside doubled. */
static void put_quoted(FILE *f, const char *s, char q)
{
    fputc(q, f);
    for (; s && *s; s++) {
        if (*s == q) fputc(q, f);
        fputc(*s, f);
    }
    fputc(q, f);
}

void tg_sql_put_string(FILE *f, const char *s) { put_quoted(f, s, '\''); }
void tg_sql_put_ident(FILE *f, const char *s) { put_quoted(f, s, '"'); }

char *tg_sql_string(const char *s)
{
    char *out = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&out, &len);
    if (!f) return NULL;
    tg_sql_put_string(f, s);
    if (fclose(f) != 0) {
        free(out);
        return NULL;
    }
    return out;
}

char *tg_text_dup(const char *s, size_t cap, unsigned flags)
{
    growbuf b = {0};
    if (s) tg_text_escape(s, strlen(s), cap, flags, buf_sink, &b);
    if (!b.oom && !b.s) b.s = calloc(1, 1);
    if (b.oom) {
        free(b.s);
        return NULL;
    }
    return b.s;
}
