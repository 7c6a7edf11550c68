/*
** The one YAML reader (yaml.h): texts with their line tables, a hardened
** small-file read, and libyaml's event stream built into tg_ynode trees
** under the caller's limits.
*/
#include "yaml.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <yaml.h>

/* ---------------------------------------------------------------- texts */

tg_src *tg_src_new(tg_arena *a, tg_diag *diag, const char *name, char *text, size_t len)
{
    tg_src *s = tg_arena_alloc(a, sizeof *s);
    const char *copy = s ? tg_arena_strdup(a, name) : NULL;
    size_t cap = 0, n = 0;
    size_t first = (len >= 3 && memcmp(text, "\xEF\xBB\xBF", 3) == 0) ? 3 : 0;
    size_t *starts = NULL;
    bool ok = copy && TG_PUSH(starts, n, cap, first);
    for (size_t i = first; ok && i < len; i++)
        if (text[i] == '\n' || (text[i] == '\r' && (i + 1 >= len || text[i + 1] != '\n')))
            ok = TG_PUSH(starts, n, cap, i + 1);
    if (!ok) {
        free(starts);
        free(text);
        tg_diag_error(diag, TG_EINTERNAL, "out of memory");
        return NULL;
    }
    *s = (tg_src){.name = copy, .text = text, .len = len, .line_starts = starts, .n_lines = n};
    return s;
}

void tg_src_release(tg_src *src)
{
    if (!src) return;
    free((char *)src->text);
    free(src->line_starts);
    src->text = NULL;
    src->line_starts = NULL;
    src->n_lines = 0;
}

tg_pos tg_src_pos(const tg_src *src, size_t offset)
{
    tg_pos p = {.file = src->name, .line = 1, .col = 1};
    if (!src->line_starts || src->n_lines == 0) {
        p.col = (int)offset + 1;
        return p;
    }
    size_t lo = 0, hi = src->n_lines;   /* last line start <= offset */
    while (hi - lo > 1) {
        size_t mid = lo + (hi - lo) / 2;
        if (src->line_starts[mid] <= offset) lo = mid;
        else hi = mid;
    }
    p.line = (int)lo + 1;
    p.col = (int)(offset - src->line_starts[lo]) + 1;
    return p;
}

char *tg_src_line(const tg_src *src, int line)
{
    if (!src || !src->text || line < 1 || (size_t)line > src->n_lines) return NULL;
    size_t b = src->line_starts[line - 1], e = b;
    while (e < src->len && src->text[e] != '\n' && src->text[e] != '\r') e++;
    /* Very long lines (a minified or hostile file) are cut for display. */
    if (e - b > 400) e = b + 400;
    char *s = malloc(e - b + 1);
    if (!s) return NULL;
    memcpy(s, src->text + b, e - b);
    s[e - b] = 0;
    return s;
}


void tg_src_msg(tg_diag *diag, tg_diag_level level, tg_status status, const tg_src *src, tg_pos pos,
                const char *fmt, ...)
{
    char *line = tg_src_line(src, pos.line);
    va_list ap;
    va_start(ap, fmt);
    tg_diag_vadd(diag, level, status, pos, line, fmt, ap);
    va_end(ap);
    free(line);
}

char *tg_read_small_file(const char *path, size_t max_bytes, size_t *len, char *why, size_t why_size)
{
    /* O_NONBLOCK: opening a FIFO must not wait for a writer; fstat then
    ** refuses anything but a regular file. */
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) {
        snprintf(why, why_size, "cannot be opened: %s", strerror(errno));
        return NULL;
    }
    struct stat st;
    if (fstat(fd, &st) != 0) {
        snprintf(why, why_size, "cannot be read: %s", strerror(errno));
        close(fd);
        return NULL;
    }
    if (S_ISDIR(st.st_mode) || !S_ISREG(st.st_mode)) {
        snprintf(why, why_size, "%s", S_ISDIR(st.st_mode) ? "is a directory" : "is not a regular file");
        close(fd);
        return NULL;
    }
    if ((uintmax_t)st.st_size > max_bytes) {
        char limit[32];
        tg_format_size((int64_t)max_bytes, limit, sizeof limit);
        snprintf(why, why_size, "is %jd bytes, more than the %s allowed", (intmax_t)st.st_size, limit);
        close(fd);
        return NULL;
    }
    /* the size may change under us: read up to max_bytes + 1 and check */
    size_t cap = (size_t)st.st_size + 1, n = 0;
    char *buf = malloc(cap + 1);
    if (!buf) {
        close(fd);
        why[0] = 0;
        return NULL;
    }
    for (;;) {
        ssize_t got = read(fd, buf + n, cap - n);
        if (got < 0 && errno == EINTR) continue;
        if (got < 0) {
            snprintf(why, why_size, "cannot be read: %s", strerror(errno));
            free(buf);
            close(fd);
            return NULL;
        }
        if (got == 0) break;
        n += (size_t)got;
        if (n == cap) {
            if (cap > max_bytes) {
                char limit[32];
                tg_format_size((int64_t)max_bytes, limit, sizeof limit);
                snprintf(why, why_size, "is more than the %s allowed", limit);
                free(buf);
                close(fd);
                return NULL;
            }
            size_t ncap = cap * 2 > max_bytes + 1 ? max_bytes + 1 : cap * 2;
            char *nb = realloc(buf, ncap + 1);
            if (!nb) {
                free(buf);
                close(fd);
                why[0] = 0;
                return NULL;
            }
            buf = nb;
            cap = ncap;
        }
    }
    close(fd);
    buf[n] = 0;
    *len = n;
    return buf;
}

/* ---------------------------------------------------------------- nodes */

static size_t mark_offset(const tg_src *src, yaml_mark_t m)
{
    if (m.line >= src->n_lines) return src->len;
    size_t off = src->line_starts[m.line];
    for (size_t c = 0; c < m.column && off < src->len; c++) {
        off++;
        while (off < src->len && ((unsigned char)src->text[off] & 0xC0) == 0x80) off++;
    }
    return off;
}

/* ---------------------------------------------------------------- events */

typedef struct frame {
    tg_ynode *node;
    tg_ynode **items, **vals;
    size_t n, cap, nv, capv;
    size_t anchor;             /* index+1 of the anchor this node defines, 0 = none */
} frame;

typedef struct anchor {
    char *name;
    tg_ynode *node;
    bool complete;
} anchor;

typedef struct builder {
    tg_arena *arena;
    tg_diag *diag;
    const tg_src *src;
    const tg_yaml_limits *lim;
    frame stack[TG_YAML_DEPTH_CAP + 1];
    size_t depth;
    anchor *anchors;
    size_t n_anchors, cap_anchors;
    size_t nodes, expanded;
    tg_ynode *root;
    int documents;
    bool failed;
} builder;

static void fail_at(builder *b, yaml_mark_t m, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void fail_at(builder *b, yaml_mark_t m, const char *fmt, ...)
{
    tg_pos p = tg_src_pos(b->src, mark_offset(b->src, m));
    char *line = tg_src_line(b->src, p.line);
    va_list ap;
    va_start(ap, fmt);
    tg_diag_vadd(b->diag, TG_DIAG_ERROR, TG_EUSAGE, p, line, fmt, ap);
    va_end(ap);
    free(line);
    b->failed = true;
}

static tg_ynode *new_node(builder *b, tg_ynode_kind kind, yaml_mark_t m)
{
    if (++b->nodes > b->lim->max_nodes) {
        fail_at(b, m, "the %s holds more than %zu YAML nodes; refusing it", b->lim->what, b->lim->max_nodes);
        return NULL;
    }
    tg_ynode *n = tg_arena_alloc(b->arena, sizeof *n);
    if (!n) {
        b->failed = true;
        tg_diag_error(b->diag, TG_EINTERNAL, "out of memory");
        return NULL;
    }
    n->kind = kind;
    n->src = b->src;
    n->raw_start = mark_offset(b->src, m);
    n->pos = tg_src_pos(b->src, n->raw_start);
    n->expanded = 1;
    return n;
}

static bool add_child(builder *b, tg_ynode *child)
{
    if (b->depth == 0) {
        if (b->root) return true;  /* cannot happen: one node per document */
        b->root = child;
        return true;
    }
    frame *f = &b->stack[b->depth - 1];
    f->node->expanded += child->expanded;
    bool ok;
    if (f->node->kind == TG_Y_SEQ || f->n == f->nv) ok = TG_PUSH(f->items, f->n, f->cap, child);
    else ok = TG_PUSH(f->vals, f->nv, f->capv, child);
    if (!ok) {
        b->failed = true;
        tg_diag_error(b->diag, TG_EINTERNAL, "out of memory");
    }
    return ok;
}

static size_t define_anchor(builder *b, const yaml_char_t *name, tg_ynode *node, bool complete)
{
    if (!name) return 0;
    anchor a = {.name = strdup((const char *)name), .node = node, .complete = complete};
    if (!a.name || !TG_PUSH(b->anchors, b->n_anchors, b->cap_anchors, a)) {
        free(a.name);
        b->failed = true;
        tg_diag_error(b->diag, TG_EINTERNAL, "out of memory");
        return 0;
    }
    return b->n_anchors;
}

static void on_alias(builder *b, const yaml_event_t *e)
{
    const char *name = (const char *)e->data.alias.anchor;
    for (size_t i = b->n_anchors; i-- > 0;) {
        anchor *a = &b->anchors[i];
        if (strcmp(a->name, name) != 0) continue;
        if (!a->complete) {
            fail_at(b, e->start_mark, "alias *%s refers to the node that contains it", name);
            return;
        }
        b->expanded += a->node->expanded;
        if (b->expanded > b->lim->max_expanded) {
            fail_at(b, e->start_mark,
                    "YAML aliases expand to more than %zu nodes (at alias *%s); refusing the %s",
                    b->lim->max_expanded, name, b->lim->what);
            return;
        }
        add_child(b, a->node);
        return;
    }
    fail_at(b, e->start_mark, "alias *%s has no anchor &%s before it", name, name);
}

static void on_scalar(builder *b, const yaml_event_t *e)
{
    if (e->data.scalar.length > b->lim->max_scalar) {
        char limit[32];
        tg_format_size((int64_t)b->lim->max_scalar, limit, sizeof limit);
        fail_at(b, e->start_mark, "a scalar of %zu bytes is more than the %s allowed", e->data.scalar.length, limit);
        return;
    }
    tg_ynode *n = new_node(b, TG_Y_SCALAR, e->start_mark);
    if (!n) return;
    n->value = tg_arena_strndup(b->arena, (const char *)e->data.scalar.value,
                                e->data.scalar.length);
    n->len = e->data.scalar.length;
    n->style = (tg_yscalar_style)e->data.scalar.style;
    n->raw_end = mark_offset(b->src, e->end_mark);
    if (!n->value) {
        b->failed = true;
        return;
    }
    define_anchor(b, e->data.scalar.anchor, n, true);
    add_child(b, n);
}

static void on_start(builder *b, const yaml_event_t *e, tg_ynode_kind kind)
{
    if (b->depth >= b->lim->max_depth || b->depth >= TG_YAML_DEPTH_CAP) {
        fail_at(b, e->start_mark, "YAML nested deeper than %zu levels; refusing the %s", b->lim->max_depth,
                b->lim->what);
        return;
    }
    tg_ynode *n = new_node(b, kind, e->start_mark);
    if (!n) return;
    const yaml_char_t *anchor_name = kind == TG_Y_SEQ ? e->data.sequence_start.anchor
                                                      : e->data.mapping_start.anchor;
    frame *f = &b->stack[b->depth++];
    memset(f, 0, sizeof *f);
    f->node = n;
    f->anchor = define_anchor(b, anchor_name, n, false);
}

static void on_end(builder *b, const yaml_event_t *e)
{
    (void)e;
    if (b->depth == 0) return;
    frame *f = &b->stack[--b->depth];
    tg_ynode *n = f->node;
    n->n = f->n;
    n->raw_end = mark_offset(b->src, e->end_mark);
    if (f->n) {
        n->items = tg_arena_alloc(b->arena, f->n * sizeof *n->items);
        if (n->items) memcpy(n->items, f->items, f->n * sizeof *n->items);
    }
    if (n->kind == TG_Y_MAP && f->n) {
        n->vals = tg_arena_alloc(b->arena, f->n * sizeof *n->vals);
        if (n->vals) memcpy(n->vals, f->vals, f->nv * sizeof *n->vals);
    }
    free(f->items);
    free(f->vals);
    if ((f->n && !n->items) || (n->kind == TG_Y_MAP && f->n && !n->vals)) {
        b->failed = true;
        tg_diag_error(b->diag, TG_EINTERNAL, "out of memory");
        return;
    }
    if (f->anchor) b->anchors[f->anchor - 1].complete = true;
    add_child(b, n);
}

static void on_event(builder *b, const yaml_event_t *e)
{
    switch (e->type) {
    case YAML_DOCUMENT_START_EVENT:
        if (++b->documents > 1 && b->lim->one_document)
            fail_at(b, e->start_mark, "a %s holds one YAML document; this is a second one", b->lim->what);
        break;
    case YAML_SCALAR_EVENT: on_scalar(b, e); break;
    case YAML_SEQUENCE_START_EVENT: on_start(b, e, TG_Y_SEQ); break;
    case YAML_MAPPING_START_EVENT: on_start(b, e, TG_Y_MAP); break;
    case YAML_SEQUENCE_END_EVENT:
    case YAML_MAPPING_END_EVENT: on_end(b, e); break;
    case YAML_ALIAS_EVENT: on_alias(b, e); break;
    default: break;
    }
}

tg_ynode *tg_yaml_read(tg_arena *a, tg_diag *diag, const tg_src *src, const tg_yaml_limits *limits, bool *ok)
{
    builder b = {.arena = a, .diag = diag, .src = src, .lim = limits};
    yaml_parser_t parser;
    *ok = false;
    if (!yaml_parser_initialize(&parser)) {
        tg_diag_error(diag, TG_EINTERNAL, "out of memory");
        return NULL;
    }
    yaml_parser_set_input_string(&parser, (const unsigned char *)src->text, src->len);
    for (;;) {
        yaml_event_t e;
        if (!yaml_parser_parse(&parser, &e)) {
            const char *problem = parser.problem ? parser.problem : "malformed YAML";
            yaml_mark_t m = parser.problem_mark;
            tg_pos p = tg_src_pos(src, mark_offset(src, m));
            if (parser.error == YAML_MEMORY_ERROR)
                tg_diag_error(diag, TG_EINTERNAL, "out of memory while reading YAML");
            else if (parser.context)
                tg_src_msg(diag, TG_DIAG_ERROR, TG_EUSAGE, src, p, "YAML syntax error: %s %s", problem, parser.context);
            else
                tg_src_msg(diag, TG_DIAG_ERROR, TG_EUSAGE, src, p, "YAML syntax error: %s", problem);
            b.failed = true;
            break;
        }
        bool end = e.type == YAML_STREAM_END_EVENT;
        on_event(&b, &e);
        yaml_event_delete(&e);
        if (end || b.failed) break;
    }
    yaml_parser_delete(&parser);
    while (b.depth > 0) {
        frame *f = &b.stack[--b.depth];
        free(f->items);
        free(f->vals);
    }
    for (size_t i = 0; i < b.n_anchors; i++) free(b.anchors[i].name);
    free(b.anchors);
    if (b.failed) return NULL;
    *ok = true;
    return b.root;
}

/* ---------------------------------------------------------------- lookup */

tg_ynode *tg_ymap_get(const tg_ynode *map, const char *key)
{
    if (!map || map->kind != TG_Y_MAP) return NULL;
    for (size_t i = 0; i < map->n; i++)
        if (tg_yscalar_is(map->items[i], key)) return map->vals[i];
    return NULL;
}

const char *tg_ynode_kind_name(const tg_ynode *n)
{
    if (!n) return "nothing";
    switch (n->kind) {
    case TG_Y_SCALAR: return "a scalar";
    case TG_Y_SEQ: return "a list";
    case TG_Y_MAP: return "a mapping";
    }
    return "?";
}

bool tg_ynode_is_null(const tg_ynode *n)
{
    if (!n || n->kind != TG_Y_SCALAR || n->style != TG_YS_PLAIN) return false;
    return n->len == 0 || tg_yscalar_is(n, "~") || tg_yscalar_is(n, "null") || tg_yscalar_is(n, "Null") ||
           tg_yscalar_is(n, "NULL");
}

static int cmp_key_index(const void *pa, const void *pb, void *ctx)
{
    const tg_ynode *map = ctx;
    size_t a = *(const size_t *)pa, b = *(const size_t *)pb;
    const tg_ynode *x = map->items[a], *y = map->items[b];
    bool sx = x->kind == TG_Y_SCALAR, sy = y->kind == TG_Y_SCALAR;
    if (sx != sy) return sx ? -1 : 1;
    if (sx) {
        size_t n = x->len < y->len ? x->len : y->len;
        int c = memcmp(x->value, y->value, n);
        if (c) return c;
        if (x->len != y->len) return x->len < y->len ? -1 : 1;
    }
    return (a > b) - (a < b);
}

long tg_ymap_duplicate(const tg_ynode *map)
{
    if (!map || map->kind != TG_Y_MAP || map->n < 2) return -1;
    size_t *idx = malloc(map->n * sizeof *idx);
    if (!idx) {
        /* no memory for the sort: the quadratic scan, which needs none */
        for (size_t i = 1; i < map->n; i++)
            for (size_t j = 0; j < i; j++)
                if (map->items[i]->kind == TG_Y_SCALAR && map->items[j]->kind == TG_Y_SCALAR &&
                    map->items[i]->len == map->items[j]->len &&
                    !memcmp(map->items[i]->value, map->items[j]->value, map->items[i]->len))
                    return (long)i;
        return -1;
    }
    for (size_t i = 0; i < map->n; i++) idx[i] = i;
    qsort_r(idx, map->n, sizeof *idx, cmp_key_index, (void *)map);
    long first = -1;
    for (size_t k = 1; k < map->n; k++) {
        const tg_ynode *x = map->items[idx[k - 1]], *y = map->items[idx[k]];
        if (x->kind != TG_Y_SCALAR || y->kind != TG_Y_SCALAR || x->len != y->len ||
            memcmp(x->value, y->value, x->len))
            continue;
        if (first < 0 || (long)idx[k] < first) first = (long)idx[k];   /* the later of the pair */
    }
    free(idx);
    return first;
}
