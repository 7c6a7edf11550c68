/*
** Reading a PyTorch profiler (Kineto) Chrome-trace JSON: yajl's streaming
** parser calls back per token, and this file assembles one traceEvents
** entry at a time (its keys come in any order) before trace_kineto_map.c
** turns it into a row; deviceProperties and distributedInfo are read the
** same way. Nothing else of the document is kept, so memory grows with the
** rows the model needs, not with the file (docs/kineto.md).
**
** Where the parser is, is a stack of frames (the top-level object, the
** events array, an event, its args, a grid/block array, ...); any value
** under a key this reader does not know is skipped whatever its depth.
**
** Numbers arrive as text (yajl's number callback), so timestamps convert
** exactly: Kineto writes microseconds with up to three decimals, read as
** integer nanoseconds (a fourth decimal rounds half away from zero).
**
** Some profiler versions wrote raw control characters inside strings
** (invalid JSON). A first pass that meets one starts over, its rows
** dropped, with those bytes read as spaces, and the trace earns a warning.
** Any other invalid, truncated or non-trace JSON is one sentence naming
** the byte where reading stopped.
*/
#include "trace_kineto.h"

#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <yajl/yajl_parse.h>

#define CHUNK TG_KIN_CHUNK
#define MAX_FRAMES 16          /* deeper values are skipped by depth count */

typedef enum frame_kind {
    F_SKIP, F_TOP, F_EVENTS, F_EVENT, F_ARGS, F_DIMS, F_DEVICES, F_DEVICE, F_DIST
} frame_kind;

/* Keys this reader acts on; ORDER: key_names. */
typedef enum key_id {
    K_NONE, K_TRACE_EVENTS, K_DEVICE_PROPS, K_DIST_INFO,
    K_PH, K_CAT, K_NAME, K_PID, K_TID, K_TS, K_DUR, K_ARGS,
    K_DEVICE, K_CONTEXT, K_STREAM, K_CORRELATION, K_BYTES, K_REGISTERS, K_SMEM, K_GRID, K_BLOCK,
    K_LABELS, K_ID, K_TOTAL_MEM, K_MAJOR, K_MINOR, K_NUM_SMS, K_RANK, K_WORLD_SIZE, K_SCHEMA,
    K_CUDA_DRIVER, K_CUDA_RUNTIME, K_CUPTI, K_COUNT
} key_id;

static const char *const key_names[K_COUNT] = {
    [K_TRACE_EVENTS] = "traceEvents", [K_DEVICE_PROPS] = "deviceProperties",
    [K_DIST_INFO] = "distributedInfo", [K_PH] = "ph", [K_CAT] = "cat", [K_NAME] = "name",
    [K_PID] = "pid", [K_TID] = "tid", [K_TS] = "ts", [K_DUR] = "dur", [K_ARGS] = "args",
    [K_DEVICE] = "device", [K_CONTEXT] = "context", [K_STREAM] = "stream",
    [K_CORRELATION] = "correlation", [K_BYTES] = "bytes", [K_REGISTERS] = "registers per thread",
    [K_SMEM] = "shared memory", [K_GRID] = "grid", [K_BLOCK] = "block", [K_LABELS] = "labels",
    [K_ID] = "id", [K_TOTAL_MEM] = "totalGlobalMem", [K_MAJOR] = "computeMajor",
    [K_MINOR] = "computeMinor", [K_NUM_SMS] = "numSms", [K_RANK] = "rank",
    [K_WORLD_SIZE] = "world_size", [K_SCHEMA] = "schemaVersion",
    [K_CUDA_DRIVER] = "cuda_driver_version", [K_CUDA_RUNTIME] = "cuda_runtime_version", [K_CUPTI] = "cupti_version",
};

/* Lengths of key_names, compared before the bytes: key lookups run once
** per key of every event, the hottest loop of a read. */
typedef struct key_table {
    uint8_t len[K_COUNT];
} key_table;

static key_table key_lengths(void)
{
    key_table kt = {{0}};
    for (int k = 1; k < K_COUNT; k++) kt.len[k] = (uint8_t)strlen(key_names[k]);
    return kt;
}

typedef struct frame {
    frame_kind kind;
    key_id key;                /* last key of an object frame */
    int n;                     /* elements seen (arrays) */
    uint64_t seen;             /* keys of used_keys met in this object (bit per key_id) */
} frame;

/* The keys each object frame reads: one of them twice is refused (jq and
** Python keep the last, a streaming reader met the first; docs/kineto.md,
** "Duplicate keys"). ORDER: frame_kind. */
#define KB(k) ((uint64_t)1 << (k))
static const uint64_t used_keys[] = {
    [F_TOP] = KB(K_TRACE_EVENTS) | KB(K_DEVICE_PROPS) | KB(K_DIST_INFO) | KB(K_SCHEMA) |
              KB(K_CUDA_DRIVER) | KB(K_CUDA_RUNTIME) | KB(K_CUPTI),
    [F_EVENT] = KB(K_PH) | KB(K_CAT) | KB(K_NAME) | KB(K_PID) | KB(K_TID) | KB(K_TS) | KB(K_DUR) | KB(K_ARGS),
    [F_ARGS] = KB(K_DEVICE) | KB(K_CONTEXT) | KB(K_STREAM) | KB(K_CORRELATION) | KB(K_BYTES) |
               KB(K_REGISTERS) | KB(K_SMEM) | KB(K_GRID) | KB(K_BLOCK) | KB(K_NAME) | KB(K_LABELS),
    [F_DEVICE] = KB(K_ID) | KB(K_NAME) | KB(K_NUM_SMS) | KB(K_TOTAL_MEM) | KB(K_MAJOR) | KB(K_MINOR),
    [F_DIST] = KB(K_RANK) | KB(K_WORLD_SIZE),
};
_Static_assert(K_COUNT <= 64, "frame.seen holds a bit per key");

/* A growable text buffer for one string value. */
typedef struct textbuf {
    char *s;
    size_t len, cap;
} textbuf;

typedef struct parser {
    tg_loader *ld;
    tg_kin_rows rows;
    frame frames[MAX_FRAMES];
    int depth;                 /* frames in use; deeper levels in `skip` */
    int skip;                  /* nesting below the last frame */
    bool saw_events;           /* a traceEvents array (or a top-level array) */
    int64_t n_events;
    tg_kin_event ev;
    textbuf name, cat, arg_name, labels, dev_name;
    int64_t dev[5];            /* id, sms, memory, major, minor of a deviceProperties entry */
    bool oom;
    key_table keys;
    tg_kin_rec *rec;           /* a second half's parser records, not emits */
    tg_kin_skip *elider;       /* events elided before yajl, or NULL */
    unsigned char *out;        /* the skipper's output */
    key_id dup;                /* a key met twice in one object (K_NONE: none) */
    frame_kind dup_in;         /* the object it was met in */
    uint64_t top_seen;         /* top-level keys met (a second half's are checked against the first's) */
} parser;

static bool text_set(parser *p, textbuf *b, const unsigned char *s, size_t len)
{
    if (len + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 64;
        while (cap < len + 1) cap *= 2;
        char *n = realloc(b->s, cap);
        if (!n) {
            p->oom = true;
            return false;
        }
        b->s = n;
        b->cap = cap;
    }
    memcpy(b->s, s, len);
    b->s[len] = '\0';
    b->len = len;
    return true;
}

/* The keys of every event (ph, cat, name, pid, tid, ts, dur, args) are
** told apart by length and first byte before one memcmp; the rest through
** the table. */
static key_id key_of(const key_table *kt, const unsigned char *s, size_t len)
{
    key_id k = K_NONE;
    switch (len) {
    case 2: k = s[0] == 'p' ? K_PH : s[0] == 't' ? K_TS : s[0] == 'i' ? K_ID : K_NONE; break;
    case 3: k = s[0] == 'c' ? K_CAT : s[0] == 'p' ? K_PID : s[0] == 't' ? K_TID : s[0] == 'd' ? K_DUR : K_NONE; break;
    case 4: k = s[0] == 'n' ? K_NAME : s[0] == 'a' ? K_ARGS : K_COUNT; break;
    default: k = K_COUNT; break;
    }
    if (k != K_COUNT)
        return k != K_NONE && memcmp(key_names[k], s, len) == 0 ? k : K_NONE;
    for (int i = 1; i < K_COUNT; i++)
        if (kt->len[i] == len && memcmp(key_names[i], s, len) == 0) return (key_id)i;
    return K_NONE;
}

/* ---------------------------------------------------------------- numbers */

/* Integer text (an optional '-', digits, nothing else); false otherwise or
** when it does not fit. */
static bool parse_int(const char *s, size_t len, int64_t *out)
{
    size_t i = 0;
    bool neg = len > 0 && s[0] == '-';
    if (neg) i = 1;
    if (i == len) return false;
    uint64_t v = 0;
    for (; i < len; i++) {
        if (s[i] < '0' || s[i] > '9') return false;
        if (v > (UINT64_C(1) << 62) / 10) return false;
        v = v * 10 + (uint64_t)(s[i] - '0');
    }
    *out = neg ? -(int64_t)v : (int64_t)v;
    return true;
}

/* A count or id: an integer, or a number with a zero fraction (2.0). */
static int64_t number_i64(const char *s, size_t len)
{
    int64_t v;
    if (parse_int(s, len, &v)) return v;
    char buf[64];
    if (len >= sizeof buf) return TG_NULL_I64;
    memcpy(buf, s, len);
    buf[len] = '\0';
    char *end;
    double d = strtod(buf, &end);
    if (*end || !(d > -9.2e18 && d < 9.2e18) || d != (double)(int64_t)d) return TG_NULL_I64;
    return (int64_t)d;
}

/* Microseconds as text to nanoseconds: digits, optional fraction, optional
** exponent; exact for plain decimals, rounded half away from zero. */
int64_t tg_kin_us_to_ns(const char *s, size_t len);
int64_t tg_kin_us_to_ns(const char *s, size_t len)
{
    size_t i = 0;
    bool neg = len > 0 && s[0] == '-';
    if (neg) i = 1;
    uint64_t whole = 0;
    size_t digits = 0;
    for (; i < len && s[i] >= '0' && s[i] <= '9'; i++, digits++) {
        if (whole > (UINT64_C(1) << 52)) return TG_NULL_I64;   /* beyond 2^62 ns */
        whole = whole * 10 + (uint64_t)(s[i] - '0');
    }
    uint64_t frac = 0;
    int fdigits = 0;
    bool round_up = false;
    if (i < len && s[i] == '.') {
        for (i++; i < len && s[i] >= '0' && s[i] <= '9'; i++, digits++) {
            if (fdigits < 3) frac = frac * 10 + (uint64_t)(s[i] - '0'), fdigits++;
            else if (fdigits++ == 3) round_up = s[i] >= '5';
        }
    }
    if (digits == 0) return TG_NULL_I64;
    if (i < len) {                      /* an exponent: rare, read as a double */
        char buf[64];
        if (len >= sizeof buf) return TG_NULL_I64;
        memcpy(buf, s, len);
        buf[len] = '\0';
        char *end;
        double us = strtod(buf, &end);
        if (*end || !(us > -4.6e15 && us < 4.6e15)) return TG_NULL_I64;
        double ns = us * 1000.0;
        return (int64_t)(ns < 0 ? ns - 0.5 : ns + 0.5);
    }
    for (int k = fdigits < 3 ? fdigits : 3; k < 3; k++) frac *= 10;
    uint64_t ns = whole * 1000 + frac + (round_up ? 1 : 0);
    return neg ? -(int64_t)ns : (int64_t)ns;
}

/* The number at the end of a string id: "stream 7" -> 7, "25738" -> 25738. */
static int64_t trailing_number(const unsigned char *s, size_t len)
{
    size_t end = len;
    while (end > 0 && s[end - 1] == ' ') end--;
    size_t start = end;
    while (start > 0 && s[start - 1] >= '0' && s[start - 1] <= '9') start--;
    int64_t v;
    if (start == end || end - start > 15 || !parse_int((const char *)s + start, end - start, &v))
        return TG_NULL_I64;
    return v;
}

/* ---------------------------------------------------------------- frames */

static frame *top(parser *p)
{
    return p->skip || p->depth == 0 ? NULL : &p->frames[p->depth - 1];
}

static void event_reset(parser *p)
{
    tg_kin_event *e = &p->ev;
    *e = (tg_kin_event){.index = p->n_events - 1, .cat = TG_KIN_OTHER};   /* counted by element() */
    int64_t *nulls[] = {&e->pid, &e->tid, &e->ts, &e->dur, &e->device, &e->context, &e->stream,
                        &e->correlation, &e->bytes, &e->registers, &e->smem,
                        &e->grid[0], &e->grid[1], &e->grid[2], &e->block[0], &e->block[1], &e->block[2]};
    for (size_t i = 0; i < sizeof nulls / sizeof *nulls; i++) *nulls[i] = TG_NULL_I64;
    p->name.len = p->arg_name.len = p->labels.len = 0;
}

static int push(parser *p, frame_kind kind)
{
    if (p->skip || p->depth == MAX_FRAMES || kind == F_SKIP) {
        p->skip++;
        return 1;
    }
    p->frames[p->depth++] = (frame){.kind = kind};
    return 1;
}

/* An element starting inside an array frame counts (traceEvents index). */
static void element(parser *p)
{
    frame *f = top(p);
    if (!f) return;
    if (f->kind == F_EVENTS) p->n_events++;
    f->n++;
}

/* The args of a cpu_op or python_function say nothing the rows hold; an
** event whose cat comes after its args is read whole. */
static bool args_needed(const tg_kin_event *e)
{
    if (!e->has_cat) return true;
    switch (e->cat) {
    case TG_KIN_KERNEL: case TG_KIN_MEMCPY: case TG_KIN_MEMSET: case TG_KIN_API: case TG_KIN_SYNC:
        return true;
    default:
        return false;
    }
}

static int on_start_map(void *ctx)
{
    parser *p = ctx;
    frame *f = top(p);
    frame_kind kind = F_SKIP;
    if (p->depth == 0 && !p->skip) kind = F_TOP;
    else if (f && f->kind == F_EVENTS) kind = F_EVENT;
    else if (f && f->kind == F_EVENT && f->key == K_ARGS) kind = args_needed(&p->ev) ? F_ARGS : F_SKIP;
    else if (f && f->kind == F_DEVICES) kind = F_DEVICE;
    else if (f && f->kind == F_TOP && f->key == K_DIST_INFO) kind = F_DIST;
    element(p);
    if (kind == F_EVENT) event_reset(p);
    if (kind == F_DEVICE) {
        for (int i = 0; i < 5; i++) p->dev[i] = TG_NULL_I64;
        p->dev_name.len = 0;
    }
    return push(p, kind);
}

static int on_start_array(void *ctx)
{
    parser *p = ctx;
    frame *f = top(p);
    frame_kind kind = F_SKIP;
    if (p->depth == 0 && !p->skip) kind = F_EVENTS;          /* a bare Chrome-trace array */
    else if (f && f->kind == F_TOP && f->key == K_TRACE_EVENTS) kind = F_EVENTS;
    else if (f && f->kind == F_TOP && f->key == K_DEVICE_PROPS) kind = F_DEVICES;
    else if (f && f->kind == F_ARGS && (f->key == K_GRID || f->key == K_BLOCK)) kind = F_DIMS;
    element(p);
    if (kind == F_EVENTS) p->saw_events = true;   /* a second traceEvents key is refused (on_key) */
    return push(p, kind);
}

static int pop(parser *p)
{
    if (p->skip) {
        p->skip--;
        return 1;
    }
    if (p->depth == 0) return 1;
    frame *f = &p->frames[--p->depth];
    if (f->kind == F_EVENT) {
        tg_kin_event *e = &p->ev;
        e->name = p->name.s;
        e->name_len = p->name.len;
        e->arg_name = p->arg_name.s;
        e->arg_name_len = p->arg_name.len;
        e->labels = p->labels.s;
        e->labels_len = p->labels.len;
        if (p->rec) return tg_kin_rec_event(p->rec, e);
        if (!tg_kin_emit(&p->rows, e)) return 0;
    } else if (f->kind == F_DEVICE && p->dev[0] != TG_NULL_I64) {
        if (p->rec)
            return tg_kin_rec_gpu(p->rec, p->dev[0], p->dev_name.s, p->dev_name.len, p->dev[1], p->dev[2],
                                  p->dev[3], p->dev[4]);
        if (!tg_kin_add_gpu(&p->rows, p->dev[0], p->dev_name.s, p->dev_name.len, p->dev[1], p->dev[2],
                            p->dev[3], p->dev[4]))
            return 0;
    }
    return 1;
}

static int on_end(void *ctx)
{
    return pop(ctx);
}

static int on_key(void *ctx, const unsigned char *s, size_t len)
{
    parser *p = ctx;
    frame *f = top(p);
    if (!f) return 1;
    f->key = key_of(&p->keys, s, len);
    uint64_t bit = f->key != K_NONE && (size_t)f->kind < sizeof used_keys / sizeof *used_keys
                 ? used_keys[f->kind] & KB(f->key) : 0;
    if (bit & f->seen) {
        p->dup = f->key;
        p->dup_in = f->kind;
        return 0;              /* feed says why */
    }
    f->seen |= bit;
    if (f->kind == F_TOP) p->top_seen |= bit;
    return 1;
}

/* ---------------------------------------------------------------- values */

static int on_number(void *ctx, const char *s, size_t len)
{
    parser *p = ctx;
    frame *f = top(p);
    element(p);
    if (!f) return 1;
    tg_kin_event *e = &p->ev;
    switch (f->kind) {
    case F_EVENT:
        switch (f->key) {
        case K_PID: e->pid = number_i64(s, len); break;
        case K_TID: e->tid = number_i64(s, len); break;
        case K_TS: e->ts = tg_kin_us_to_ns(s, len); break;
        case K_DUR: e->dur = tg_kin_us_to_ns(s, len); break;
        default: break;
        }
        break;
    case F_ARGS:
        switch (f->key) {
        case K_DEVICE: e->device = number_i64(s, len); break;
        case K_CONTEXT: e->context = number_i64(s, len); break;
        case K_STREAM: e->stream = number_i64(s, len); break;
        case K_CORRELATION: e->correlation = number_i64(s, len); break;
        case K_BYTES: e->bytes = number_i64(s, len); break;
        case K_REGISTERS: e->registers = number_i64(s, len); break;
        case K_SMEM: e->smem = number_i64(s, len); break;
        default: break;
        }
        break;
    case F_DIMS: {
        frame *args = &p->frames[p->depth - 2];
        int64_t *dims = args->key == K_GRID ? e->grid : e->block;
        if (f->n <= 3) dims[f->n - 1] = number_i64(s, len);
        break;
    }
    case F_DEVICE: {
        int slot = f->key == K_ID ? 0 : f->key == K_NUM_SMS ? 1 : f->key == K_TOTAL_MEM ? 2
                 : f->key == K_MAJOR ? 3 : f->key == K_MINOR ? 4 : -1;
        if (slot >= 0) p->dev[slot] = number_i64(s, len);
        break;
    }
    case F_TOP: {
        if (f->key == K_CUDA_DRIVER || f->key == K_CUDA_RUNTIME || f->key == K_CUPTI) {
            /* the versions a diagnosis compares (docs/formats.md, "coverage") */
            int64_t v = number_i64(s, len);
            if (v == TG_NULL_I64 || v < 0) break;
            int k = f->key == K_CUDA_DRIVER ? 0 : f->key == K_CUDA_RUNTIME ? 1 : 2;
            if (p->rec) p->rec->versions[k] = v;
            else tg_kin_set_version(p->ld->t, k, v);
            break;
        }
        /* the top-level schemaVersion (1 in every capture we hold) */
        int64_t v = f->key == K_SCHEMA ? number_i64(s, len) : TG_NULL_I64;
        if (v == TG_NULL_I64 || v < 0 || v > INT32_MAX) break;
        if (p->rec) p->rec->schema = v;
        else tg_kin_set_schema(p->ld->t, v);
        break;
    }
    case F_DIST: {
        int64_t v = number_i64(s, len);
        if (v < 0 || v > INT32_MAX || (f->key != K_RANK && f->key != K_WORLD_SIZE)) break;
        if (p->rec) *(f->key == K_RANK ? &p->rec->rank : &p->rec->world_size) = v;
        else *(f->key == K_RANK ? &p->ld->t->rank : &p->ld->t->world_size) = (int32_t)v;
        break;
    }
    default:
        break;
    }
    return 1;
}

static int on_string(void *ctx, const unsigned char *s, size_t len)
{
    parser *p = ctx;
    frame *f = top(p);
    element(p);
    if (!f) return 1;
    tg_kin_event *e = &p->ev;
    if (f->kind == F_EVENT) {
        switch (f->key) {
        case K_PH: e->ph = len ? (char)s[0] : 0; break;
        case K_CAT: e->cat = tg_kin_cat_of((const char *)s, len); e->has_cat = true; break;
        case K_NAME: e->has_name = text_set(p, &p->name, s, len); break;
        case K_PID: e->pid = trailing_number(s, len); e->pid_text = true; break;
        case K_TID: e->tid = trailing_number(s, len); break;
        case K_TS: e->ts = tg_kin_us_to_ns((const char *)s, len); break;
        case K_DUR: e->dur = tg_kin_us_to_ns((const char *)s, len); break;
        default: break;
        }
    } else if (f->kind == F_ARGS) {
        if (f->key == K_NAME) text_set(p, &p->arg_name, s, len);
        else if (f->key == K_LABELS) text_set(p, &p->labels, s, len);
    } else if (f->kind == F_DEVICE && f->key == K_NAME) {
        text_set(p, &p->dev_name, s, len);
    }
    return !p->oom;
}

static int on_other(void *ctx)
{
    element(ctx);
    return 1;
}

static int on_bool(void *ctx, int b)
{
    (void)b;
    return on_other(ctx);
}

static const yajl_callbacks callbacks = {
    .yajl_null = on_other, .yajl_boolean = on_bool, .yajl_number = on_number,
    .yajl_string = on_string, .yajl_start_map = on_start_map, .yajl_map_key = on_key,
    .yajl_end_map = on_end, .yajl_start_array = on_start_array, .yajl_end_array = on_end,
};

/* ---------------------------------------------------------------- driver */

/* Raw control characters inside strings read as spaces (the second pass
** over a trace some profiler version wrote them into). State carries over
** chunks. */
typedef struct ctl_filter {
    bool in_string, escaped;
    size_t replaced;
} ctl_filter;

static void filter_controls(ctl_filter *c, unsigned char *buf, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        unsigned char b = buf[i];
        if (!c->in_string) {
            c->in_string = b == '"';
        } else if (c->escaped) {
            c->escaped = false;
        } else if (b == '\\') {
            c->escaped = true;
        } else if (b == '"') {
            c->in_string = false;
        } else if (b < 0x20) {
            buf[i] = ' ';
            c->replaced++;
        }
    }
}

/* Drop every row of a first pass (it met a raw control character). */
static bool reset_rows(tg_loader *ld)
{
    tg_trace *t = ld->t;
    tg_trace_drop_rows(t);
    memset(ld->stats, 0, sizeof ld->stats);
    t->rank = t->world_size = -1;
    tg_strpool_free(t->strings);
    t->strings = tg_strpool_new();
    if (!t->strings) tg_load_fail(ld, TG_EINTERNAL, "out of memory");
    return t->strings != NULL;
}

static void parser_free(parser *p)
{
    tg_kin_rows_free(&p->rows);
    textbuf *bufs[] = {&p->name, &p->cat, &p->arg_name, &p->labels, &p->dev_name};
    for (size_t i = 0; i < sizeof bufs / sizeof *bufs; i++) free(bufs[i]->s);
}

/* Where reading stopped, for the one sentence. */
static void fail_json(tg_loader *ld, parser *p, yajl_handle h, const unsigned char *buf, size_t n,
                      uint64_t before, bool at_end)
{
    if (p->oom) {
        tg_load_fail(ld, TG_EINTERNAL, "out of memory");
        return;
    }
    if (ld->failed) return;
    unsigned char *err = yajl_get_error(h, 0, buf, n);
    char what[160] = "invalid JSON";
    if (err) {
        snprintf(what, sizeof what, "%s", (const char *)err);
        for (char *c = what; *c; c++)
            if (*c == '\n') *c = ' ';
        size_t l = strlen(what);
        while (l && (what[l - 1] == ' ' || what[l - 1] == '.')) what[--l] = '\0';
        yajl_free_error(h, err);
    }
    uint64_t at = before + (at_end ? 0 : yajl_get_bytes_consumed(h));
    if (at_end)
        tg_load_fail(ld, TG_ETRACE,
                     "the JSON ends early, after %llu bytes and %lld trace events (%s): the trace is "
                     "truncated",
                     (unsigned long long)at, (long long)p->n_events, what);
    else
        tg_load_fail(ld, TG_ETRACE, "is not valid JSON: %s at byte %llu (after %lld trace events)", what,
                     (unsigned long long)at, (long long)p->n_events);
}

/* A key the reader uses, met twice in one object: refused, since readers
** disagree on which one counts (jq and Python: the last). */
static void fail_duplicate(tg_loader *ld, key_id k, frame_kind in, int64_t event)
{
    char where[64];
    switch (in) {
    case F_TOP: snprintf(where, sizeof where, "at the top level"); break;
    case F_EVENT: snprintf(where, sizeof where, "in trace event %lld", (long long)event); break;
    case F_ARGS: snprintf(where, sizeof where, "in the args of trace event %lld", (long long)event); break;
    case F_DEVICE: snprintf(where, sizeof where, "in a deviceProperties entry"); break;
    default: snprintf(where, sizeof where, "in distributedInfo"); break;
    }
    tg_load_fail(ld, TG_ETRACE,
                 "has the key \"%s\" twice %s: JSON readers disagree on which one counts (jq and "
                 "Python take the last), so the trace is not read; write each key once",
                 key_names[k], where);
}

/* Did the parse stop on a raw control character inside a string? */
static bool stopped_on_control(yajl_handle h, const unsigned char *buf, size_t n)
{
    size_t at = yajl_get_bytes_consumed(h);
    for (size_t i = at > 0 ? at - 1 : 0; i <= at && i < n; i++)
        if (buf[i] < 0x20 && buf[i] != '\n' && buf[i] != '\r' && buf[i] != '\t') return true;
    unsigned char *err = yajl_get_error(h, 0, buf, n);
    bool inside = err && strstr((const char *)err, "inside string");
    if (err) yajl_free_error(h, err);
    return inside;
}

/* ---------------------------------------------------------------- two halves */

/* A big plain file is parsed by two threads: the second half from a line
** that starts an event (`,` newline `{`: a raw newline never occurs inside
** a JSON string, so this is between tokens), as if it followed
** `{"traceEvents":[`. Its events are recorded and replayed after the first
** half's, indices shifted, once the first parser, stopped at the split,
** shows it is exactly there: between two elements of traceEvents. Any doubt
** (another layout, an error in the second half) and the first parser reads
** on, alone: the halves never change what a read gives. */
#define SPLIT_MIN ((uint64_t)16 << 20)
#define SPLIT_WINDOW ((size_t)1 << 20)

/* Hand n bytes to yajl, through the skipper when there is one. */
static yajl_status parse_bytes(parser *p, yajl_handle h, unsigned char *buf, size_t n, bool final)
{
    if (!p->elider) return n ? yajl_parse(h, buf, n) : yajl_status_ok;
    size_t m = tg_kin_skip_run(p->elider, buf, n, p->out, final);
    return m ? yajl_parse(h, p->out, m) : yajl_status_ok;
}

/* A skipper for p; depth 2 for a half that starts inside traceEvents. */
static bool skipper_new(parser *p, int depth)
{
    p->elider = calloc(1, sizeof *p->elider);
    p->out = malloc(CHUNK + 256);
    if (!p->elider || !p->out) {
        free(p->elider);
        free(p->out);
        p->elider = NULL;
        p->out = NULL;
        return false;
    }
    if (depth) *p->elider = (tg_kin_skip){.depth = depth, .started = true, .top_object = true};
    return true;
}

static void skipper_free(parser *p)
{
    free(p->elider);
    free(p->out);
    p->elider = NULL;
    p->out = NULL;
}

typedef struct half {
    const char *path;
    tg_mem_meter *meter;       /* the reader's, shared by both halves */
    uint64_t from;
    parser p;
    tg_kin_rec rec;
    bool ok;
    pthread_t thread;
} half;

static uint64_t find_split(int fd, uint64_t size)
{
    if (size < SPLIT_MIN) return 0;
    unsigned char *w = malloc(SPLIT_WINDOW);
    if (!w) return 0;
    uint64_t base = size / 2, found = 0;
    ssize_t n = pread(fd, w, SPLIT_WINDOW, (off_t)base);
    for (ssize_t i = 0; i < n && !found; i++) {
        if (w[i] != ',') continue;
        ssize_t j = i + 1;
        while (j < n && (w[j] == ' ' || w[j] == '\t' || w[j] == '\r')) j++;
        if (j >= n || w[j] != '\n') continue;
        while (j < n && (w[j] == '\n' || w[j] == ' ' || w[j] == '\t' || w[j] == '\r')) j++;
        if (j < n && w[j] == '{') found = base + (uint64_t)j;
    }
    free(w);
    return found;
}

static void *parse_half(void *arg)
{
    half *hf = arg;
    tg_mem_attach(hf->meter);
    static const char head[] = "{\"traceEvents\":[";
    tg_diag scratch;
    tg_diag_init(&scratch);
    tg_loader ld = {.path = hf->path, .diag = &scratch};
    unsigned char *buf = malloc(CHUNK);
    yajl_handle h = buf ? yajl_alloc(&callbacks, NULL, &hf->p) : NULL;
    tg_kin_input in = {.fd = -1};
    bool ok = h && yajl_config(h, yajl_dont_validate_strings, 1) &&
              yajl_parse(h, (const unsigned char *)head, sizeof head - 1) == yajl_status_ok &&
              tg_kin_input_open(&in, hf->path, &ld) && tg_kin_input_seek(&in, hf->from);
    for (ssize_t n = 1; ok && n != 0;) {
        n = tg_kin_input_read(&in, buf, CHUNK, &ld);
        ok = n >= 0 && parse_bytes(&hf->p, h, buf, (size_t)(n > 0 ? n : 0), n == 0) == yajl_status_ok;
    }
    hf->ok = ok && yajl_complete_parse(h) == yajl_status_ok && !hf->p.oom && !hf->rec.oom &&
             !(hf->p.elider && hf->p.elider->suspect);
    if (hf->p.elider) hf->rec.n_cpu_ops += hf->p.elider->elided_ops;
    tg_kin_input_close(&in);
    if (h) yajl_free(h);
    free(buf);
    tg_diag_clear(&scratch);
    return NULL;
}

/* The second half's thread, or NULL (then one parser reads it all). */
static half *half_start(const char *path, uint64_t *limit, bool elide)
{
    *limit = 0;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return NULL;
    unsigned char magic[2] = {0};
    struct stat st;
    bool plain = fstat(fd, &st) == 0 && pread(fd, magic, 2, 0) == 2 && !(magic[0] == 0x1f && magic[1] == 0x8b);
    uint64_t split = plain ? find_split(fd, (uint64_t)st.st_size) : 0;
    close(fd);
    half *hf = split ? calloc(1, sizeof *hf) : NULL;
    if (!hf) return NULL;
    hf->path = path;
    hf->meter = tg_mem_attach(NULL);
    tg_mem_attach(hf->meter);
    hf->from = split;
    tg_kin_rec_free(&hf->rec);           /* its empty state */
    hf->p = (parser){.keys = key_lengths(), .rec = &hf->rec};
    if (elide && !skipper_new(&hf->p, 2)) {
        free(hf);
        return NULL;
    }
    if (pthread_create(&hf->thread, NULL, parse_half, hf) != 0) {
        skipper_free(&hf->p);
        free(hf);
        return NULL;
    }
    *limit = split;
    return hf;
}

/* Join; true when its events can stand for the rest of the file after p. */
static bool half_join(half *hf, const parser *p)
{
    pthread_join(hf->thread, NULL);
    return hf->ok && !p->skip && p->depth == 2 && p->frames[1].kind == F_EVENTS;
}

static void half_free(half *hf)
{
    if (!hf) return;
    skipper_free(&hf->p);
    tg_kin_rec_free(&hf->rec);
    textbuf *bufs[] = {&hf->p.name, &hf->p.cat, &hf->p.arg_name, &hf->p.labels, &hf->p.dev_name};
    for (size_t i = 0; i < sizeof bufs / sizeof *bufs; i++) free(bufs[i]->s);
    free(hf);
}

/* ---------------------------------------------------------------- one pass */

/* Feed the input to h up to its end (or limit): 1 fed, -1 stopped on a raw
** control character (first pass only), -2 the parser met an error with
** events elided (read again without eliding, for the exact sentence), 0
** failed (ld says why). */
static int feed(tg_loader *ld, parser *p, yajl_handle h, tg_kin_input *in, unsigned char *buf, ctl_filter *filter)
{
    for (;;) {
        uint64_t before = in->delivered;
        ssize_t n = tg_kin_input_read(in, buf, CHUNK, ld);
        if (n < 0) return 0;
        if (n > 0 && filter) filter_controls(filter, buf, (size_t)n);
        yajl_status st = parse_bytes(p, h, buf, (size_t)n, n == 0);
        if (st != yajl_status_ok) {
            if (p->dup != K_NONE) return fail_duplicate(ld, p->dup, p->dup_in, p->n_events - 1), 0;
            if (p->oom || ld->failed) return fail_json(ld, p, h, buf, 0, before, false), 0;
            if (p->elider) return -2;
            if (!filter && stopped_on_control(h, buf, (size_t)n)) return -1;
            fail_json(ld, p, h, buf, (size_t)n, before, false);
            return 0;
        }
        if (n == 0) return 1;
    }
}

/* The end of the document: complete, a trace, finished rows. 1 done, 0
** failed, -2 read again without eliding (as feed). */
static int finish_pass(tg_loader *ld, parser *p, yajl_handle h, tg_kin_input *in, unsigned char *buf, bool complete)
{
    if (complete && yajl_complete_parse(h) != yajl_status_ok) {
        if (p->elider && !p->oom) return -2;
        fail_json(ld, p, h, buf, 0, in->delivered, true);
        return 0;
    }
    if (p->elider && p->elider->suspect) return -2;   /* an elided event may have said more */
    if (p->elider) p->rows.n_cpu_ops += p->elider->elided_ops;
    if (!p->saw_events) {
        tg_load_fail(ld, TG_ETRACE, "is JSON but not a PyTorch profiler trace: it has no traceEvents array");
        return 0;
    }
    return tg_kin_finish(&p->rows) ? 1 : 0;
}

/* One pass over the file: 1 read, -1 stopped on a raw control character
** (first pass only), -2 read it again without eliding events, 0 failed. */
static int parse_pass(tg_loader *ld, const char *path, ctl_filter *filter, bool elide)
{
    parser p = {.ld = ld, .rows = {.ld = ld}, .keys = key_lengths()};
    tg_kin_input in = {.fd = -1};
    unsigned char *buf = malloc(CHUNK);
    yajl_handle h = buf ? yajl_alloc(&callbacks, NULL, &p) : NULL;
    if (!h || (elide && !filter && !skipper_new(&p, 0))) {
        tg_load_fail(ld, TG_EINTERNAL, "out of memory");
        if (h) yajl_free(h);
        free(buf);
        return 0;
    }
    yajl_config(h, yajl_dont_validate_strings, 1);
    int fed = 0, result = 0;
    half *hf = NULL;
    if (tg_kin_input_open(&in, path, ld)) {
        hf = filter ? NULL : half_start(path, &in.limit, elide);
        fed = feed(ld, &p, h, &in, buf, filter);
        if (hf) {
            bool joined = half_join(hf, &p) && (!p.elider || (!p.elider->dropping && !p.elider->in_string &&
                                                               p.elider->n_carry == 0 && p.elider->depth == 2));
            /* a top-level key on both sides of the split (traceEvents is the half's own head) */
            uint64_t twice = p.top_seen & hf->p.top_seen & ~KB(K_TRACE_EVENTS);
            if (fed > 0 && joined && twice) {
                int k = 0;
                while (!(twice & KB(k))) k++;
                fail_duplicate(ld, (key_id)k, F_TOP, 0);
                result = 0;
                goto done;
            }
            if (fed > 0 && joined) {
                bool ok = tg_kin_rec_replay(&p.rows, &hf->rec, p.n_events);
                p.n_events += hf->p.n_events;
                result = ok ? finish_pass(ld, &p, h, &in, buf, false) : 0;
                goto done;
            }
            in.limit = 0;               /* the first parser reads on alone */
            if (fed > 0) fed = feed(ld, &p, h, &in, buf, filter);
        }
        result = fed <= 0 ? fed : finish_pass(ld, &p, h, &in, buf, true);
    }
done:
    half_free(hf);
    skipper_free(&p);
    tg_kin_input_close(&in);
    yajl_free(h);
    free(buf);
    parser_free(&p);
    return result;
}

/* The read itself; tg_kin_load meters it. */
static bool load(tg_loader *ld)
{
    int rc = parse_pass(ld, ld->path, NULL, true);
    if (rc == -2) {            /* an error past elided events: read again to say it exactly */
        if (!reset_rows(ld)) return false;
        rc = parse_pass(ld, ld->path, NULL, false);
    }
    if (rc == -1) {
        ctl_filter filter = {0};
        if (!reset_rows(ld)) return false;
        rc = parse_pass(ld, ld->path, &filter, false);
        if (rc > 0)
            tg_diag_add(ld->diag, TG_DIAG_WARNING, TG_OK, (tg_pos){0}, NULL,
                        "%s: %zu raw control characters inside JSON strings (invalid JSON some "
                        "profiler versions wrote) were read as spaces",
                        ld->path, filter.replaced);
    }
    return rc > 0;
}

/* --max-memory holds while reading: every byte the rows, the names and a
** second half's record grow by is charged to one meter (trace_mem.c), and
** the read stops with the estimate's sentence when it would pass the limit
** (docs/limits.md). ld->kernel_rows carries the rest of what it needs. */
bool tg_kin_load(tg_loader *ld, const tg_load_opts *opts)
{
    tg_mem_meter m = {.limit = opts ? opts->max_memory : 0};
    tg_mem_meter *was = tg_mem_attach(&m);
    bool ok = load(ld);
    /* a second half may have passed it alone, its failure then silent */
    if (ok && atomic_load(&m.over)) ok = !tg_mem_fail(ld);
    ld->t->read_bytes = atomic_load(&m.peak);
    tg_mem_attach(was);
    return ok;
}
