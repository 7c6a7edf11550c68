/*
** Reading rule files: the file into memory (with its line table), then
** libyaml's event stream into a tree of tg_ynode, enforcing the limits of
** yaml_doc.h as events arrive so that a hostile file stops early. Aliases
** are not copied: an alias node points at its anchor's node, and the
** number of nodes it would expand to is charged to a budget.
**
** libyaml marks count characters, not bytes; mark_offset turns a mark into
** a byte offset with the line table so that columns are byte columns, the
** unit tg_diag_format places its caret with.
*/
#include "yaml_doc.h"

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

static tg_src *src_register(tg_rules_ctx *ctx, const char *name, char *text, size_t len)
{
    tg_src *s = tg_arena_alloc(ctx->arena, sizeof *s);
    if (!s || !TG_PUSH(ctx->srcs, ctx->n_srcs, ctx->cap_srcs, s)) {
        free(text);
        tg_diag_error(ctx->diag, TG_EINTERNAL, "out of memory");
        return NULL;
    }
    s->name = tg_arena_strdup(ctx->arena, name);
    s->text = text;
    s->len = len;
    size_t cap = 0, n = 0;
    size_t first = (len >= 3 && memcmp(text, "\xEF\xBB\xBF", 3) == 0) ? 3 : 0;
    if (!TG_PUSH(s->line_starts, n, cap, first)) goto oom;
    for (size_t i = first; i < len; i++) {
        if (text[i] == '\n' || (text[i] == '\r' && (i + 1 >= len || text[i + 1] != '\n')))
            if (!TG_PUSH(s->line_starts, n, cap, i + 1)) goto oom;
    }
    s->n_lines = n;
    return s;
oom:
    tg_diag_error(ctx->diag, TG_EINTERNAL, "out of memory");
    return NULL;
}

tg_src *tg_src_from_text(tg_rules_ctx *ctx, const char *name, const char *text, size_t len)
{
    if (len > TG_YAML_MAX_FILE) {
        tg_diag_add(ctx->diag, TG_DIAG_ERROR, TG_EUSAGE, (tg_pos){.file = name}, NULL,
                    "the text is %zu bytes, more than the %u bytes (4 MiB) a rule file may hold",
                    len, TG_YAML_MAX_FILE);
        return NULL;
    }
    char *copy = malloc(len + 1);
    if (!copy) {
        tg_diag_error(ctx->diag, TG_EINTERNAL, "out of memory");
        return NULL;
    }
    memcpy(copy, text, len);
    copy[len] = 0;
    return src_register(ctx, name, copy, len);
}

tg_src *tg_src_read_file(tg_rules_ctx *ctx, const char *path)
{
    tg_pos at = {.file = path};
    /* O_NONBLOCK: opening a FIFO must not wait for a writer; fstat below
    ** refuses anything but a regular file. */
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    FILE *f = fd >= 0 ? fdopen(fd, "rb") : NULL;
    if (!f) {
        int err = errno;   /* close must not replace the reason */
        if (fd >= 0) close(fd);
        tg_diag_add(ctx->diag, TG_DIAG_ERROR, TG_EUSAGE, at, NULL, "cannot open the rule file: %s",
                    strerror(err));
        return NULL;
    }
    struct stat st;
    if (fstat(fileno(f), &st) != 0 || !S_ISREG(st.st_mode)) {
        fclose(f);
        tg_diag_add(ctx->diag, TG_DIAG_ERROR, TG_EUSAGE, at, NULL, "not a regular file");
        return NULL;
    }
    if ((uintmax_t)st.st_size > TG_YAML_MAX_FILE) {
        fclose(f);
        tg_diag_add(ctx->diag, TG_DIAG_ERROR, TG_EUSAGE, at, NULL,
                    "the file is %jd bytes, more than the %u bytes (4 MiB) a rule file may hold",
                    (intmax_t)st.st_size, TG_YAML_MAX_FILE);
        return NULL;
    }
    size_t len = (size_t)st.st_size;
    char *text = malloc(len + 1);
    if (!text) {
        fclose(f);
        tg_diag_error(ctx->diag, TG_EINTERNAL, "out of memory");
        return NULL;
    }
    size_t got = fread(text, 1, len, f);
    fclose(f);
    if (got != len) {
        free(text);
        tg_diag_add(ctx->diag, TG_DIAG_ERROR, TG_EUSAGE, at, NULL, "cannot read the rule file");
        return NULL;
    }
    text[len] = 0;
    return src_register(ctx, path, text, len);
}

void tg_src_release_all(tg_rules_ctx *ctx)
{
    for (size_t i = 0; i < ctx->n_srcs; i++) {
        free((char *)ctx->srcs[i]->text);
        free(ctx->srcs[i]->line_starts);
        ctx->srcs[i]->text = NULL;
        ctx->srcs[i]->line_starts = NULL;
        ctx->srcs[i]->n_lines = 0;
    }
    free(ctx->srcs);
    ctx->srcs = NULL;
    ctx->n_srcs = ctx->cap_srcs = 0;
}

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
    tg_rules_ctx *ctx;
    const tg_src *src;
    frame stack[TG_YAML_MAX_DEPTH + 1];
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
    va_list ap;
    va_start(ap, fmt);
    tg_rules_vmsg(b->ctx, TG_DIAG_ERROR, p, fmt, ap);
    va_end(ap);
    b->failed = true;
}

static tg_ynode *new_node(builder *b, tg_ynode_kind kind, yaml_mark_t m)
{
    if (++b->nodes > TG_YAML_MAX_NODES) {
        fail_at(b, m, "the file holds more than %d YAML nodes; refusing it", TG_YAML_MAX_NODES);
        return NULL;
    }
    tg_ynode *n = tg_arena_alloc(b->ctx->arena, sizeof *n);
    if (!n) {
        b->failed = true;
        tg_diag_error(b->ctx->diag, TG_EINTERNAL, "out of memory");
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
        tg_diag_error(b->ctx->diag, TG_EINTERNAL, "out of memory");
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
        tg_diag_error(b->ctx->diag, TG_EINTERNAL, "out of memory");
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
        if (b->expanded > TG_YAML_MAX_EXPANDED) {
            fail_at(b, e->start_mark,
                    "YAML aliases expand to more than %d nodes (at alias *%s); refusing the file",
                    TG_YAML_MAX_EXPANDED, name);
            return;
        }
        add_child(b, a->node);
        return;
    }
    fail_at(b, e->start_mark, "alias *%s has no anchor &%s before it", name, name);
}

static void on_scalar(builder *b, const yaml_event_t *e)
{
    if (e->data.scalar.length > TG_YAML_MAX_SCALAR) {
        fail_at(b, e->start_mark, "a scalar of %zu bytes is more than the 64 KiB allowed",
                e->data.scalar.length);
        return;
    }
    tg_ynode *n = new_node(b, TG_Y_SCALAR, e->start_mark);
    if (!n) return;
    n->value = tg_arena_strndup(b->ctx->arena, (const char *)e->data.scalar.value,
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
    if (b->depth >= TG_YAML_MAX_DEPTH) {
        fail_at(b, e->start_mark, "YAML nested deeper than %d levels; refusing the file",
                TG_YAML_MAX_DEPTH);
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
        n->items = tg_arena_alloc(b->ctx->arena, f->n * sizeof *n->items);
        if (n->items) memcpy(n->items, f->items, f->n * sizeof *n->items);
    }
    if (n->kind == TG_Y_MAP && f->n) {
        n->vals = tg_arena_alloc(b->ctx->arena, f->n * sizeof *n->vals);
        if (n->vals) memcpy(n->vals, f->vals, f->nv * sizeof *n->vals);
    }
    free(f->items);
    free(f->vals);
    if ((f->n && !n->items) || (n->kind == TG_Y_MAP && f->n && !n->vals)) {
        b->failed = true;
        tg_diag_error(b->ctx->diag, TG_EINTERNAL, "out of memory");
        return;
    }
    if (f->anchor) b->anchors[f->anchor - 1].complete = true;
    add_child(b, n);
}

static void on_event(builder *b, const yaml_event_t *e)
{
    switch (e->type) {
    case YAML_DOCUMENT_START_EVENT:
        if (++b->documents > 1)
            fail_at(b, e->start_mark, "a rule file holds one YAML document; this is a second one");
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

tg_ynode *tg_yaml_parse(tg_rules_ctx *ctx, const tg_src *src, bool *ok)
{
    builder b = {.ctx = ctx, .src = src};
    yaml_parser_t parser;
    *ok = false;
    if (!yaml_parser_initialize(&parser)) {
        tg_diag_error(ctx->diag, TG_EINTERNAL, "out of memory");
        return NULL;
    }
    yaml_parser_set_input_string(&parser, (const unsigned char *)src->text, src->len);
    for (;;) {
        yaml_event_t e;
        if (!yaml_parser_parse(&parser, &e)) {
            const char *problem = parser.problem ? parser.problem : "malformed YAML";
            yaml_mark_t m = parser.problem_mark;
            if (parser.error == YAML_MEMORY_ERROR) {
                tg_diag_error(ctx->diag, TG_EINTERNAL, "out of memory while reading YAML");
            } else if (parser.context) {
                tg_pos p = tg_src_pos(src, mark_offset(src, m));
                tg_rules_error(ctx, p, "YAML syntax error: %s %s", problem, parser.context);
            } else {
                tg_pos p = tg_src_pos(src, mark_offset(src, m));
                tg_rules_error(ctx, p, "YAML syntax error: %s", problem);
            }
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
