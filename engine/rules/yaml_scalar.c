/*
** Where each byte of a scalar's value sits in the file. Expressions are
** written inside YAML scalars, so an error at offset k of `where` must be
** reported at the scalar's start plus k -- after the opening quote of a
** quoted scalar, across escapes (\" is one value byte from two raw ones),
** across line folding, and in block scalars (| and >) after the header
** line and each line's indentation.
**
** The map is built by decoding the raw text again, style by style, and
** recording the raw offset of every value byte it produces. If the result
** differs from libyaml's value (an exotic construct this decoder does not
** know), a greedy alignment of value bytes onto raw bytes is used instead:
** still close, never out of the scalar.
*/
#include "yaml_doc.h"

#include <stdlib.h>
#include <string.h>

typedef struct decoder {
    const char *raw;
    size_t b, e;               /* raw range being decoded */
    char *out;                 /* decoded bytes */
    size_t *at;                /* raw offset of each decoded byte */
    size_t n, cap;
    bool oom;
} decoder;

static void emit(decoder *d, char c, size_t raw_at)
{
    if (d->n == d->cap) {
        size_t cap = d->cap ? d->cap * 2 : 64;
        char *o = realloc(d->out, cap);
        if (!o) { d->oom = true; return; }
        d->out = o;
        size_t *a = realloc(d->at, cap * sizeof *a);
        if (!a) { d->oom = true; return; }
        d->at = a;
        d->cap = cap;
    }
    d->out[d->n] = c;
    d->at[d->n++] = raw_at;
}

static void emit_utf8(decoder *d, unsigned long cp, size_t raw_at)
{
    if (cp < 0x80) {
        emit(d, (char)cp, raw_at);
    } else if (cp < 0x800) {
        emit(d, (char)(0xC0 | (cp >> 6)), raw_at);
        emit(d, (char)(0x80 | (cp & 0x3F)), raw_at);
    } else if (cp < 0x10000) {
        emit(d, (char)(0xE0 | (cp >> 12)), raw_at);
        emit(d, (char)(0x80 | ((cp >> 6) & 0x3F)), raw_at);
        emit(d, (char)(0x80 | (cp & 0x3F)), raw_at);
    } else {
        emit(d, (char)(0xF0 | (cp >> 18)), raw_at);
        emit(d, (char)(0x80 | ((cp >> 12) & 0x3F)), raw_at);
        emit(d, (char)(0x80 | ((cp >> 6) & 0x3F)), raw_at);
        emit(d, (char)(0x80 | (cp & 0x3F)), raw_at);
    }
}

static bool is_break(char c) { return c == '\n' || c == '\r'; }
static bool is_blank(char c) { return c == ' ' || c == '\t'; }

static size_t skip_break(const decoder *d, size_t i)
{
    if (d->raw[i] == '\r' && i + 1 < d->e && d->raw[i + 1] == '\n') return i + 2;
    return i + 1;
}

/* A line break inside a flow scalar (plain or quoted): a single break
** folds into a space, each further empty line into a newline; the
** indentation of the next line is not content. */
static size_t fold_break(decoder *d, size_t i)
{
    size_t brk = i;
    i = skip_break(d, i);
    int empty = 0;
    for (;;) {
        while (i < d->e && is_blank(d->raw[i])) i++;
        if (i < d->e && is_break(d->raw[i])) {
            empty++;
            i = skip_break(d, i);
            continue;
        }
        break;
    }
    if (empty == 0) emit(d, ' ', brk);
    for (int k = 0; k < empty; k++) emit(d, '\n', brk);
    return i;
}

static int hexval(char c)
{
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

/* One escape of a double-quoted scalar at raw[i] == '\\'; returns the raw
** offset after it. */
static size_t decode_escape(decoder *d, size_t i)
{
    size_t start = i++;
    if (i >= d->e) return i;
    char c = d->raw[i++];
    static const char simple_from[] = "0abt\tnvfre \"/\\";
    static const char simple_to[] = "\0\a\b\t\t\n\v\f\r\033 \"/\\";
    const char *hit = memchr(simple_from, c, sizeof simple_from - 1);
    if (hit) {
        emit(d, simple_to[hit - simple_from], start);
        return i;
    }
    if (is_break(c)) {          /* escaped line break: joins the lines */
        i = skip_break(d, i - 1);
        while (i < d->e && is_blank(d->raw[i])) i++;
        return i;
    }
    int digits = c == 'x' ? 2 : c == 'u' ? 4 : c == 'U' ? 8 : 0;
    unsigned long cp = 0;
    if (c == 'N') cp = 0x85;
    else if (c == '_') cp = 0xA0;
    else if (c == 'L') cp = 0x2028;
    else if (c == 'P') cp = 0x2029;
    for (int k = 0; k < digits && i < d->e; k++) {
        int h = hexval(d->raw[i]);
        if (h < 0) break;
        cp = cp * 16 + (unsigned long)h;
        i++;
    }
    emit_utf8(d, cp, start);
    return i;
}

static void decode_flow(decoder *d, tg_yscalar_style style)
{
    size_t i = d->b;
    while (i < d->e && !d->oom) {
        char c = d->raw[i];
        if (is_blank(c)) {
            size_t j = i;
            while (j < d->e && is_blank(d->raw[j])) j++;
            if (j < d->e && is_break(d->raw[j])) {   /* trailing blanks: dropped */
                i = j;
                continue;
            }
            for (; i < j; i++) emit(d, d->raw[i], i);
        } else if (is_break(c)) {
            i = fold_break(d, i);
        } else if (style == TG_YS_DOUBLE && c == '\\') {
            i = decode_escape(d, i);
        } else if (style == TG_YS_SINGLE && c == '\'' && i + 1 < d->e && d->raw[i + 1] == '\'') {
            emit(d, '\'', i);
            i += 2;
        } else {
            emit(d, c, i);
            i++;
        }
    }
}

/* Leading spaces of the line starting at i. */
static size_t line_indent(const decoder *d, size_t i)
{
    size_t n = 0;
    while (i + n < d->e && d->raw[i + n] == ' ') n++;
    return n;
}

static bool line_is_empty(const decoder *d, size_t i)
{
    while (i < d->e && is_blank(d->raw[i])) i++;
    return i >= d->e || is_break(d->raw[i]);
}

static size_t line_end(const decoder *d, size_t i)
{
    while (i < d->e && !is_break(d->raw[i])) i++;
    return i;
}

/* Block scalars: header `|` or `>` with optional indentation digit and
** chomping indicator, then content lines at a common indentation. */
static void decode_block(decoder *d, tg_yscalar_style style, size_t header_line_start)
{
    size_t i = d->b + 1, explicit_indent = 0;
    while (i < d->e && !is_break(d->raw[i]) && !is_blank(d->raw[i]) && d->raw[i] != '#') {
        if (d->raw[i] >= '1' && d->raw[i] <= '9') explicit_indent = (size_t)(d->raw[i] - '0');
        i++;
    }
    i = line_end(d, i);
    if (i < d->e) i = skip_break(d, i);
    size_t indent = 0;
    if (explicit_indent) {
        indent = line_indent(d, header_line_start) + explicit_indent;
    } else {
        for (size_t j = i; j < d->e; j = skip_break(d, line_end(d, j))) {
            if (!line_is_empty(d, j)) {
                indent = line_indent(d, j);
                break;
            }
            if (line_end(d, j) >= d->e) break;
        }
    }
    bool prev_text = false, started = false;
    size_t pending_breaks = 0, pending_at = i;
    while (i < d->e && !d->oom) {
        size_t le = line_end(d, i);
        size_t ind = line_indent(d, i);
        if (line_is_empty(d, i) && ind <= indent) {
            pending_breaks++;
            pending_at = i;
        } else {
            if (ind < indent) break;            /* end of the block */
            size_t cs = i + indent;
            bool more = is_blank(d->raw[cs]);
            if (started) {
                if (style == TG_YS_FOLDED && prev_text && !more) {
                    if (pending_breaks == 0) emit(d, ' ', pending_at);
                    for (size_t k = 0; k < pending_breaks; k++) emit(d, '\n', pending_at);
                } else {
                    for (size_t k = 0; k <= pending_breaks; k++) emit(d, '\n', pending_at);
                }
            } else {
                for (size_t k = 0; k < pending_breaks; k++) emit(d, '\n', pending_at);
            }
            for (size_t k = cs; k < le; k++) emit(d, d->raw[k], k);
            started = true;
            prev_text = !more;
            pending_breaks = 0;
            pending_at = le;
        }
        if (le >= d->e) break;
        i = skip_break(d, le);
    }
    if (started) emit(d, '\n', pending_at);  /* clip; chomping only trims the tail */
}

/* Fallback: walk value and raw bytes together, skipping raw bytes that do
** not match. */
static void align_greedy(tg_srcmap *m, const tg_ynode *s)
{
    const char *raw = s->src->text;
    size_t r = s->raw_start;
    for (size_t k = 0; k < s->len; k++) {
        size_t probe = r;
        while (probe < s->raw_end && raw[probe] != s->value[k]) probe++;
        if (probe < s->raw_end) r = probe;
        m->pos[k] = tg_src_pos(s->src, r);
        if (probe < s->raw_end) r++;
    }
    m->pos[s->len] = tg_src_pos(s->src, r < s->raw_end ? r : s->raw_end);
}

tg_srcmap *tg_yaml_scalar_map(tg_arena *a, const tg_ynode *s)
{
    tg_srcmap *m = tg_arena_alloc(a, sizeof *m);
    if (!m) return NULL;
    m->src = s->src;
    m->text = s->value;
    m->len = s->len;
    m->pos = tg_arena_alloc(a, (s->len + 1) * sizeof *m->pos);
    if (!m->pos) return NULL;
    if (!s->src->text) {        /* text released: point at the scalar */
        for (size_t k = 0; k <= s->len; k++) m->pos[k] = s->pos;
        return m;
    }
    decoder d = {.raw = s->src->text, .b = s->raw_start, .e = s->raw_end};
    if (d.e > s->src->len) d.e = s->src->len;
    if (s->style == TG_YS_SINGLE || s->style == TG_YS_DOUBLE) {
        d.b++;                                   /* opening quote */
        if (d.e > d.b && d.raw[d.e - 1] == (s->style == TG_YS_SINGLE ? '\'' : '"')) d.e--;
        decode_flow(&d, s->style);
    } else if (s->style == TG_YS_LITERAL || s->style == TG_YS_FOLDED) {
        size_t ls = s->raw_start;
        while (ls > 0 && !is_break(d.raw[ls - 1])) ls--;
        decode_block(&d, s->style, ls);
    } else {
        decode_flow(&d, TG_YS_PLAIN);
    }
    /* Chomping only changes trailing newlines: a shorter decode whose
    ** missing tail is newlines (`|+` keeps them all) still matches. */
    size_t common = d.n < s->len ? d.n : s->len;
    bool match = !d.oom && (common == 0 || memcmp(d.out, s->value, common) == 0);
    for (size_t k = common; match && k < s->len; k++) match = s->value[k] == '\n' && d.n > 0;
    if (match) {
        for (size_t k = 0; k < s->len; k++) m->pos[k] = tg_src_pos(s->src, d.at[k < d.n ? k : d.n - 1]);
        size_t end_at = s->len < d.n ? d.at[s->len] : (d.n ? d.at[d.n - 1] + 1 : d.b);
        m->pos[s->len] = tg_src_pos(s->src, end_at);
    } else {
        align_greedy(m, s);
    }
    free(d.out);
    free(d.at);
    return m;
}
