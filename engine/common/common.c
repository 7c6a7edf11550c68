/*
** Implementation of the building blocks declared in common.h: a bump arena
** made of linked blocks, the diagnostic list, an open-addressing string pool
** and the growth helper behind TG_PUSH.
*/
#include "common.h"
#include "text.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>

/* ---------------------------------------------------------------- arena */

typedef struct arena_block {
    struct arena_block *next;
    size_t used, size;
    max_align_t data[];
} arena_block;

struct tg_arena {
    arena_block *head;
};

tg_arena *tg_arena_new(void) { return calloc(1, sizeof(tg_arena)); }

void tg_arena_free(tg_arena *a)
{
    if (!a) return;
    for (arena_block *b = a->head, *next; b; b = next) {
        next = b->next;
        free(b);
    }
    free(a);
}

void *tg_arena_alloc(tg_arena *a, size_t size)
{
    const size_t align = sizeof(max_align_t);
    size = (size + align - 1) / align * align;
    if (size == 0) size = align;
    arena_block *b = a->head;
    if (!b || b->size - b->used < size) {
        size_t block = size > 64 * 1024 ? size : 64 * 1024;
        b = malloc(sizeof(arena_block) + block);
        if (!b) return NULL;
        b->size = block;
        b->used = 0;
        /* A big one-off allocation goes behind the head so the head's
        ** remaining space stays usable. */
        if (a->head && size > 64 * 1024) {
            b->next = a->head->next;
            a->head->next = b;
        } else {
            b->next = a->head;
            a->head = b;
        }
    }
    void *p = (char *)b->data + b->used;
    b->used += size;
    memset(p, 0, size);
    return p;
}

char *tg_arena_strndup(tg_arena *a, const char *s, size_t n)
{
    char *p = tg_arena_alloc(a, n + 1);
    if (p) {
        memcpy(p, s, n);
        p[n] = 0;
    }
    return p;
}

char *tg_arena_strdup(tg_arena *a, const char *s) { return tg_arena_strndup(a, s, strlen(s)); }

char *tg_arena_printf(tg_arena *a, const char *fmt, ...)
{
    va_list ap, ap2;
    va_start(ap, fmt);
    va_copy(ap2, ap);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    char *p = n < 0 ? NULL : tg_arena_alloc(a, (size_t)n + 1);
    if (p) vsnprintf(p, (size_t)n + 1, fmt, ap2);
    va_end(ap2);
    return p;
}

/* ---------------------------------------------------------------- grow */

bool tg_grow(void **items, size_t *cap, size_t need, size_t esz)
{
    if (need <= *cap) return true;
    size_t ncap = *cap ? *cap : 8;
    while (ncap < need) {
        if (ncap > SIZE_MAX / 2 / esz) return false;
        ncap *= 2;
    }
    void *p = realloc(*items, ncap * esz);
    if (!p) return false;
    *items = p;
    *cap = ncap;
    return true;
}

/* ---------------------------------------------------------------- diag */

void tg_diag_init(tg_diag *d) { memset(d, 0, sizeof *d); }

void tg_diag_clear(tg_diag *d)
{
    for (size_t i = 0; i < d->n; i++) {
        free(d->msgs[i].text);
        free(d->msgs[i].line_text);
        free((char *)d->msgs[i].pos.file);
    }
    free(d->msgs);
    tg_diag_init(d);
}

static char *vformat(const char *fmt, va_list ap)
{
    va_list ap2;
    va_copy(ap2, ap);
    int n = vsnprintf(NULL, 0, fmt, ap2);
    va_end(ap2);
    if (n < 0) return NULL;
    char *p = malloc((size_t)n + 1);
    if (p) vsnprintf(p, (size_t)n + 1, fmt, ap);
    return p;
}

void tg_diag_vadd(tg_diag *d, tg_diag_level level, tg_status status, tg_pos pos,
                  const char *line_text, const char *fmt, va_list ap)
{
    tg_diag_msg m = {.level = level, .pos = pos};
    m.text = vformat(fmt, ap);
    m.line_text = line_text ? strdup(line_text) : NULL;
    /* The file name is copied too: a message outlives the rule set or
    ** trace whose memory the name came from. */
    m.pos.file = pos.file ? strdup(pos.file) : NULL;
    if (level == TG_DIAG_ERROR) {
        if (d->n_errors++ == 0) d->status = status;
    }
    /* Keep at most 1000 messages: a hostile file must not exhaust memory
    ** through its error list. The count above still grows. */
    if (d->n >= 1000 || !TG_PUSH(d->msgs, d->n, d->cap, m)) {
        free(m.text);
        free(m.line_text);
        free((char *)m.pos.file);
    }
}

void tg_diag_add(tg_diag *d, tg_diag_level level, tg_status status, tg_pos pos,
                 const char *line_text, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    tg_diag_vadd(d, level, status, pos, line_text, fmt, ap);
    va_end(ap);
}

static void file_sink(void *ctx, const char *s, size_t n) { fwrite(s, 1, n, ctx); }

/* Long source lines (a generated rule file, a 60 KB expression) are shown
** as a window of about TG_DIAG_WINDOW bytes around the column, cut at
** UTF-8 boundaries and marked with "...", so one message stays one screen. */
#define TG_DIAG_WINDOW 160

/* Window of the source line shown under a message: [*from, *to) around
** the 0-based byte column col, cut at UTF-8 boundaries. */
static void diag_window(const char *line, size_t line_len, size_t col, size_t *from, size_t *to)
{
    *from = 0;
    *to = line_len;
    if (line_len <= TG_DIAG_WINDOW) return;
    *from = col > TG_DIAG_WINDOW / 2 ? col - TG_DIAG_WINDOW / 2 : 0;
    *to = *from + TG_DIAG_WINDOW < line_len ? *from + TG_DIAG_WINDOW : line_len;
    if (*to == line_len && *to - *from < TG_DIAG_WINDOW) *from = line_len - TG_DIAG_WINDOW;
    while (*from > 0 && ((unsigned char)line[*from] & 0xC0) == 0x80) (*from)--;
    while (*to < line_len && ((unsigned char)line[*to] & 0xC0) == 0x80) (*to)++;
}

static void count_sink(void *ctx, const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++) *(size_t *)ctx += ((unsigned char)s[i] & 0xC0) != 0x80;
}

/* Every piece that comes from input (the file name, the message, the
** source line) is escaped by tg_text_escape (text.h, docs/formats.md): a
** message is its lines and no more, whatever the path or the line holds.
** The caret goes under the column: as many spaces as the escaped line
** has characters before it. */
char *tg_diag_format(const tg_diag_msg *m, bool color)
{
    static const char *names[] = {"note", "warning", "error"};
    static const char *colors[] = {"\033[1;36m", "\033[1;35m", "\033[1;31m"};
    char *file = m->pos.file ? tg_text_dup(m->pos.file, 400, 0) : NULL;
    char *text = tg_text_dup(m->text ? m->text : "", TG_TEXT_CAP_TEXT, 0);
    char *out = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&out, &len);
    if (!f || !text || (m->pos.file && !file)) goto fail;
    if (file && m->pos.line > 0) fprintf(f, "%s:%d:%d: ", file, m->pos.line, m->pos.col);
    else if (file) fprintf(f, "%s: ", file);
    fprintf(f, "%s%s:%s %s", color ? colors[m->level] : "", names[m->level], color ? "\033[0m" : "", text);
    if (m->line_text) {
        const char *line = m->line_text;
        size_t line_len = strlen(line), from, to;
        size_t col = m->pos.col > 0 ? (size_t)m->pos.col - 1 : 0;   /* 0-based byte column */
        if (col > line_len) col = line_len;
        diag_window(line, line_len, col, &from, &to);
        fprintf(f, "\n  %s", from > 0 ? "..." : "");
        tg_text_escape(line + from, to - from, TG_TEXT_NO_CAP, 0, file_sink, f);
        fprintf(f, "%s\n  %s", to < line_len ? "..." : "", from > 0 ? "   " : "");
        size_t indent = 0;
        tg_text_escape(line + from, col - from, TG_TEXT_NO_CAP, 0, count_sink, &indent);
        for (size_t i = 0; i < indent; i++) fputc(' ', f);
        fputc('^', f);
    }
    if (fclose(f) != 0) {
        f = NULL;
        goto fail;
    }
    free(file);
    free(text);
    return out;
fail:
    if (f) fclose(f);
    free(out);
    free(file);
    free(text);
    return NULL;
}

/* ---------------------------------------------------------------- hashing */

uint64_t tg_hash_seed(void)
{
    uint64_t seed = 0;
    if (getrandom(&seed, sizeof seed, GRND_NONBLOCK) == (ssize_t)sizeof seed) return seed;
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return tg_hash_mix((uint64_t)ts.tv_nsec ^ (uint64_t)ts.tv_sec << 30 ^ (uint64_t)(uintptr_t)&seed);
}

/* FNV-1a from the basis xor seed, then mixed: the slot bits of plain
** FNV-1a depend only on the low bits of the bytes, so colliding names are
** easy to make. */
uint64_t tg_hash_bytes(uint64_t seed, const void *s, size_t n)
{
    const unsigned char *p = s;
    uint64_t h = 1469598103934665603ULL ^ seed, w;
    for (; n >= sizeof w; n -= sizeof w, p += sizeof w) {
        memcpy(&w, p, sizeof w);
        h = (h ^ w) * 1099511628211ULL;
        h ^= h >> 29;   /* the word's high bits reach the low ones */
    }
    for (; n; n--, p++) h = (h ^ *p) * 1099511628211ULL;
    return tg_hash_mix(h ^ seed);
}

/* ---------------------------------------------------------------- strpool */

struct tg_strpool {
    char **strs;
    size_t *lens;
    size_t n, cap, lcap;
    int32_t *slots;   /* open addressing: id or -1 */
    size_t nslots;
    uint64_t seed;    /* tg_hash_seed: names come from the input */
};

tg_strpool *tg_strpool_new(void)
{
    tg_strpool *p = calloc(1, sizeof *p);
    if (!p) return NULL;
    p->nslots = 1024;
    p->seed = tg_hash_seed();
    p->slots = malloc(p->nslots * sizeof *p->slots);
    if (!p->slots) {
        free(p);
        return NULL;
    }
    memset(p->slots, 0xff, p->nslots * sizeof *p->slots);
    return p;
}

void tg_strpool_free(tg_strpool *p)
{
    if (!p) return;
    for (size_t i = 0; i < p->n; i++) free(p->strs[i]);
    free(p->strs);
    free(p->lens);
    free(p->slots);
    free(p);
}

static size_t find_slot(const tg_strpool *p, const char *s, size_t len)
{
    size_t mask = p->nslots - 1;
    size_t i = (size_t)tg_hash_bytes(p->seed, s, len) & mask;
    for (;;) {
        int32_t id = p->slots[i];
        if (id < 0) return i;
        if (p->lens[id] == len && memcmp(p->strs[id], s, len) == 0) return i;
        i = (i + 1) & mask;
    }
}

static bool rehash(tg_strpool *p)
{
    size_t n = p->nslots * 2;
    int32_t *slots = malloc(n * sizeof *slots);
    if (!slots) return false;
    memset(slots, 0xff, n * sizeof *slots);
    free(p->slots);
    p->slots = slots;
    p->nslots = n;
    for (size_t id = 0; id < p->n; id++)
        p->slots[find_slot(p, p->strs[id], p->lens[id])] = (int32_t)id;
    return true;
}

int32_t tg_strpool_find(const tg_strpool *p, const char *s, size_t len)
{
    return p->slots[find_slot(p, s, len)];
}

int32_t tg_strpool_intern(tg_strpool *p, const char *s, size_t len)
{
    size_t slot = find_slot(p, s, len);
    if (p->slots[slot] >= 0) return p->slots[slot];
    if (p->n >= INT32_MAX - 1) return -1;
    if ((p->n + 1) * 2 > p->nslots) {
        if (!rehash(p)) return -1;
        slot = find_slot(p, s, len);
    }
    size_t lcap = p->lcap;
    if (!tg_grow((void **)&p->strs, &p->cap, p->n + 1, sizeof *p->strs)) return -1;
    if (!tg_grow((void **)&p->lens, &lcap, p->n + 1, sizeof *p->lens)) return -1;
    p->lcap = lcap;
    char *copy = malloc(len + 1);
    if (!copy) return -1;
    memcpy(copy, s, len);
    copy[len] = 0;
    p->strs[p->n] = copy;
    p->lens[p->n] = len;
    p->slots[slot] = (int32_t)p->n;
    return (int32_t)p->n++;
}

const char *tg_strpool_get(const tg_strpool *p, int32_t id)
{
    return (id < 0 || (size_t)id >= p->n) ? NULL : p->strs[id];
}

size_t tg_strpool_len(const tg_strpool *p, int32_t id)
{
    return (id < 0 || (size_t)id >= p->n) ? 0 : p->lens[id];
}

int32_t tg_strpool_count(const tg_strpool *p) { return (int32_t)p->n; }

/* ---------------------------------------------------------------- sizes */

bool tg_parse_size(const char *s, int64_t *bytes)
{
    static const struct { const char *suffix; double scale; } units[] = {
        {"", 1}, {"b", 1}, {"k", 1024.0}, {"kib", 1024.0}, {"kb", 1e3},
        {"m", 1048576.0}, {"mib", 1048576.0}, {"mb", 1e6},
        {"g", 1073741824.0}, {"gib", 1073741824.0}, {"gb", 1e9},
        {"t", 1099511627776.0}, {"tib", 1099511627776.0}, {"tb", 1e12},
    };
    if (!s || !(*s >= '0' && *s <= '9')) return false;
    char *end;
    double v = strtod(s, &end);
    while (*end == ' ') end++;
    char suffix[8];
    size_t n = strlen(end);
    if (n >= sizeof suffix) return false;
    for (size_t i = 0; i <= n; i++) suffix[i] = (char)((end[i] >= 'A' && end[i] <= 'Z') ? end[i] + 32 : end[i]);
    for (size_t i = 0; i < sizeof units / sizeof *units; i++) {
        if (strcmp(suffix, units[i].suffix) != 0) continue;
        double b = v * units[i].scale;
        if (!(b >= 1 && b < 9.2e18)) return false;
        *bytes = (int64_t)b;
        return true;
    }
    return false;
}

void tg_format_size(int64_t bytes, char *buf, size_t size)
{
    static const char *const names[] = {"KiB", "MiB", "GiB", "TiB"};
    if (bytes < 1024) {
        snprintf(buf, size, "%lld bytes", (long long)bytes);
        return;
    }
    double v = (double)bytes;
    int u = -1;
    while (v >= 1024 && u < 3) {
        v /= 1024;
        u++;
    }
    if (v == (double)(int64_t)v) snprintf(buf, size, "%lld %s", (long long)v, names[u]);
    else snprintf(buf, size, "%.1f %s", v, names[u]);
}

int tg_path_dir_len(const char *dir)
{
    size_t n = strlen(dir);
    while (n > 1 && dir[n - 1] == '/') n--;
    return n == 1 && dir[0] == '/' ? 0 : (int)n;
}
