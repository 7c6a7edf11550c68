/*
** The API table (CUPTI_ACTIVITY_KIND_RUNTIME): read whole into rows, or
** streamed through a visitor (tg_trace_stream_apis: the model's launch
** join), which keeps only the rows it wants. It is the biggest table of an
** export (about 1.5 calls per kernel), so a stream is read in batches:
**
**   - one thread: a batch is decoded, then visited;
**   - two (tg_load_opts.threads): a producer thread steps SQLite and decodes
**     rows into a queue of batches while the caller's thread visits the
**     batches before it (docs/architecture.md, "Reading an export"). The
**     producer may be started early (tg_load_apis_start: by the open, on a
**     connection of its own, as soon as the tables the model needs first
**     are read), so the queue (at most QUEUE_BYTES) fills while the kernel
**     table and the iterations are still being built. The
**     producer owns the connection, its step budget and the row counters
**     until it is joined; it never touches the string pool: a name stored
**     as text (old exports) travels in the batch and is interned by the
**     visiting thread, which owns the pool and the kept rows. Rows reach the
**     visitor in table order either way, and the same batches: the two
**     modes give the same result.
**
** The visit of a batch first shows `ahead` the rows a few dozen ahead, so
** that it can prefetch what their visit will touch.
*/
#include "trace_int.h"

#include <stdlib.h>
#include <string.h>

enum { AC_START, AC_END, AC_GTID, AC_CORR, AC_NAME_ID, AC_NAME_TEXT, AC_RET, AC_CHAIN, AC_N };

static const tg_colspec api_cols[AC_N] = {
    [AC_START] = {"start", NULL, true},
    [AC_END] = {"end", NULL, true},
    [AC_GTID] = {"globalTid", NULL, false},
    [AC_CORR] = {"correlationId", NULL, false},
    [AC_NAME_ID] = {"nameId", NULL, false},
    [AC_NAME_TEXT] = {"name", NULL, false},   /* inline text in some old exports */
    [AC_RET] = {"returnValue", NULL, false},
    [AC_CHAIN] = {"callchainId", NULL, false},   /* --cudabacktrace (docs/host.md) */
};

/* Old exports record each runtime call twice (cudaMemcpy and
** cudaMemcpy_v3020: one correlation id, nested on one thread), and write
** the twins next to each other. Every read watches the last rows for that:
** a whole read records it (trace->mixed_duplicate_api), a streamed one
** stops, and the table is read whole (model_join.c pairs the twins). */
#define TWIN_WINDOW 32

typedef struct twin_ring {
    int64_t corr[TWIN_WINDOW];
    int32_t pid[TWIN_WINDOW], tid[TWIN_WINDOW];
    size_t n;
} twin_ring;

static bool twin_seen(twin_ring *r, const tg_api *a)
{
    if (a->correlation == TG_NULL_I64 || a->correlation == 0) return false;
    size_t have = r->n < TWIN_WINDOW ? r->n : TWIN_WINDOW;
    for (size_t i = 0; i < have; i++)
        if (r->corr[i] == a->correlation && r->pid[i] == a->pid && r->tid[i] == a->tid) return true;
    size_t slot = r->n++ % TWIN_WINDOW;
    r->corr[slot] = a->correlation;
    r->pid[slot] = a->pid;
    r->tid[slot] = a->tid;
    return false;
}

/* ---------------------------------------------------------------- batches */

#define BATCH_ROWS 1024       /* rows of a batch */
#define AHEAD_ROWS 32         /* how far ahead of its visit a row is shown to `ahead` */
#define QUEUE_BYTES TG_API_QUEUE_BYTES

/* A name read as text, to be interned by the visitor. */
typedef struct pending_name {
    uint32_t row;
    size_t off, len;
} pending_name;

typedef struct api_batch {
    tg_api rows[BATCH_ROWS];
    size_t n;
    pending_name *pending;     /* names still to intern (producer mode) */
    size_t n_pending, cap_pending;
    char *text;                /* their bytes */
    size_t text_len, text_cap;
    bool defer_names;          /* producer mode: do not touch the string pool */
    bool last;                 /* the table ends after this batch (or the read failed) */
    bool failed;               /* the read failed: visit nothing of it */
} api_batch;

/* The name of the row being decoded from text cell col: interned now, or
** parked in the batch. False when out of memory (ld failed). */
static bool text_name(tg_loader *ld, const tg_row *st, int col, api_batch *b, tg_api *a)
{
    if (!b || !b->defer_names) {
        a->name = tg_load_text(ld, st, col);
        return !ld->failed;
    }
    const char *s;
    size_t len;
    char *owned;
    if (!tg_cell_text(st, col, &s, &len, &owned)) goto oom;
    a->name = TG_NO_STR;
    if (s) {
        pending_name p = {.row = (uint32_t)b->n, .off = b->text_len, .len = len};
        bool ok = TG_PUSH(b->pending, b->n_pending, b->cap_pending, p);
        while (ok && b->text_len + len + 1 > b->text_cap) {
            size_t cap = b->text_cap ? 2 * b->text_cap : 4096;
            char *t = realloc(b->text, cap);
            ok = t != NULL;
            if (ok) b->text = t, b->text_cap = cap;
        }
        if (ok) {
            memcpy(b->text + b->text_len, s, len);
            b->text_len += len;
        }
        free(owned);
        if (!ok) goto oom;
    }
    return true;
oom:
    tg_load_fail(ld, TG_EINTERNAL, "out of memory");
    return false;
}

/* Decode the row st is on into *a: 1 a row, 0 skipped (bad times, counted),
** -1 failed. */
static int decode(tg_loader *ld, const tg_row *st, bool chains, api_batch *b, tg_api *a)
{
    if (!tg_load_times(&ld->stats[TG_TABLE_RUNTIME], st, &a->start, &a->end, false)) return 0;
    a->rowid = tg_row_id(st);
    a->correlation = tg_cell_i64(st, COL(AC_CORR));
    int64_t gtid = tg_cell_i64(st, COL(AC_GTID));
    a->pid = tg_global_pid(gtid);
    a->tid = tg_global_tid(gtid);
    int64_t id = 0;
    switch (tg_cell_peek(st, COL(AC_NAME_ID), &id)) {
    case SQLITE_INTEGER:
        a->name = tg_idmap_get(&ld->strings, id);
        break;
    case SQLITE_TEXT:
        if (!text_name(ld, st, COL(AC_NAME_ID), b, a)) return -1;
        break;
    default:
        a->name = TG_NO_STR;
    }
    if (a->name < 0 && !(b && b->defer_names && b->n_pending && b->pending[b->n_pending - 1].row == b->n) &&
        !text_name(ld, st, COL(AC_NAME_TEXT), b, a))
        return -1;
    a->return_value = tg_cell_i32(st, COL(AC_RET));
    a->callchain = chains ? tg_cell_i32(st, COL(AC_CHAIN)) : -1;
    a->base_name = TG_NO_STR;
    a->driver = 0;
    a->blocking = 0;
    a->steady = 0;
    a->iteration = -1;
    a->dup_of = -1;
    return ld->failed ? -1 : 1;
}

/* Fill b with the next rows of st (b->last when the table ends or the read
** fails). False when it failed (ld says why). */
static bool fill(tg_loader *ld, tg_row *st, bool chains, api_batch *b)
{
    b->n = b->n_pending = b->text_len = 0;
    b->last = b->failed = false;
    while (b->n < BATCH_ROWS) {
        if (ld->failed || !tg_row_step(ld, st)) {
            b->last = true;
            break;
        }
        int rc = decode(ld, st, chains, b, &b->rows[b->n]);
        if (rc < 0) {
            b->last = true;
            break;
        }
        b->n += (size_t)rc;
    }
    b->failed = ld->failed;
    return !ld->failed;
}

/* The visitor's side of a batch: intern the parked names, then visit the
** rows in order, keeping what visit keeps: 1 done, -1 stopped, 0 failed. */
static int visit_batch(tg_loader *ld, api_batch *b, twin_ring *ring, size_t *cap, const tg_api_reader_cb *cb)
{
    tg_trace *t = ld->t;
    for (size_t i = 0; i < b->n_pending; i++) {
        int32_t id = tg_strpool_intern(t->strings, b->text + b->pending[i].off, b->pending[i].len);
        if (id < 0) {
            tg_load_fail(ld, TG_EINTERNAL, "out of memory");
            return 0;
        }
        b->rows[b->pending[i].row].name = id;
    }
    if (cb->ahead)
        for (size_t i = 0; i < b->n && i < AHEAD_ROWS; i++) cb->ahead(cb->ctx, &b->rows[i]);
    for (size_t i = 0; i < b->n; i++) {
        tg_api *a = &b->rows[i];
        if (cb->ahead && i + AHEAD_ROWS < b->n) cb->ahead(cb->ctx, &b->rows[i + AHEAD_ROWS]);
        int keep = twin_seen(ring, a) ? -1 : cb->visit(cb->ctx, a);
        if (keep < 0) return -1;
        ld->apis_visited++;
        if (t->first_ns == TG_NULL_I64 || a->start < t->first_ns) t->first_ns = a->start;
        if (t->last_ns == TG_NULL_I64 || a->end > t->last_ns) t->last_ns = a->end;
        if (keep && !TG_PUSH_ROWS(t->apis, t->n_apis, *cap, t->rows_mapped[TG_TABLE_RUNTIME], *a)) {
            tg_load_fail(ld, TG_EINTERNAL, "out of memory");
            return 0;
        }
    }
    return 1;
}

static void batch_free(api_batch *b)
{
    if (!b) return;
    free(b->pending);
    free(b->text);
}

/* ---------------------------------------------------------------- the producer */

#define QUEUE ((size_t)(QUEUE_BYTES / sizeof(api_batch)))   /* batches queued at most */

struct tg_api_stream {
    pthread_t thread;
    pthread_mutex_t lock;
    pthread_cond_t moved;      /* a batch was filled or given back, or stop */
    api_batch **queue;         /* QUEUE slots, each batch allocated when first filled */
    size_t filled, taken;      /* batches filled by the producer, taken by the visitor */
    bool stop;                 /* produce no more */
    tg_loader ld;              /* the producer's copy: connection, budget, counters */
    tg_diag diag;              /* what it says */
    tg_row row;
    bool chains;
};

static void *produce(void *arg)
{
    tg_api_stream *s = arg;
    for (;;) {
        pthread_mutex_lock(&s->lock);
        while (!s->stop && s->filled - s->taken == QUEUE) pthread_cond_wait(&s->moved, &s->lock);
        bool stop = s->stop;
        pthread_mutex_unlock(&s->lock);
        if (stop) break;
        api_batch **slot = &s->queue[s->filled % QUEUE];
        if (!*slot && (*slot = calloc(1, sizeof **slot))) (*slot)->defer_names = true;
        api_batch *b = *slot;
        if (b) {
            fill(&s->ld, &s->row, s->chains, b);
        } else {
            tg_load_fail(&s->ld, TG_EINTERNAL, "out of memory");
            /* the visitor learns it from the stream's loader */
        }
        pthread_mutex_lock(&s->lock);
        if (b) s->filled++;
        else s->stop = true;
        pthread_cond_broadcast(&s->moved);
        pthread_mutex_unlock(&s->lock);
        if (!b || b->last) break;
    }
    pthread_mutex_lock(&s->lock);
    s->stop = true;            /* nothing more comes */
    pthread_cond_broadcast(&s->moved);
    pthread_mutex_unlock(&s->lock);
    return NULL;
}

static bool prepare(tg_loader *ld, bool *chains, tg_row *st)
{
    tg_trace *t = ld->t;
    const char *table = t->table_name[TG_TABLE_RUNTIME];
    /* callchainId means something only beside CUDA_CALLCHAINS (--cudabacktrace):
    ** without it the column is not read (15M calls: a tenth of a second) */
    *chains = t->table_name[TG_TABLE_CALLCHAINS] != NULL;
    _Static_assert(AC_CHAIN == AC_N - 1, "callchainId is the last API column");
    return table && tg_row_open(ld, table, api_cols, *chains ? AC_N : AC_CHAIN, st);
}

bool tg_load_apis_start(tg_loader *ld)
{
    if (ld->stream) return true;
    tg_api_stream *s = calloc(1, sizeof *s);
    if (!s || !(s->queue = calloc(QUEUE, sizeof *s->queue))) {
        free(s);
        return false;
    }
    if (!prepare(ld, &s->chains, &s->row)) {
        free(s->queue);
        free(s);
        return false;
    }
    pthread_mutex_init(&s->lock, NULL);
    pthread_cond_init(&s->moved, NULL);
    tg_diag_init(&s->diag);
    s->ld = *ld;                   /* shares the connection and the StringIds map */
    s->ld.diag = &s->diag;
    s->ld.failed = false;
    s->ld.pool_lock = NULL;        /* the producer interns nothing */
    s->ld.stream = NULL;
    tg_load_watch(&s->ld);         /* the step counter: the producer's now */
    if (pthread_create(&s->thread, NULL, produce, s) != 0) {
        tg_load_watch(ld);
        tg_row_close(&s->row);
        tg_diag_clear(&s->diag);
        pthread_cond_destroy(&s->moved);
        pthread_mutex_destroy(&s->lock);
        free(s->queue);
        free(s);
        return false;
    }
    ld->stream = s;
    return true;
}

/* Join the producer (stopping it), give ld back what it counted (and,
** when `report`, said), and free the stream. */
static void stream_end(tg_loader *ld, bool report)
{
    tg_api_stream *s = ld->stream;
    pthread_mutex_lock(&s->lock);
    s->stop = true;
    pthread_cond_broadcast(&s->moved);
    pthread_mutex_unlock(&s->lock);
    pthread_join(s->thread, NULL);
    tg_row_close(&s->row);
    ld->stats[TG_TABLE_RUNTIME] = s->ld.stats[TG_TABLE_RUNTIME];
    ld->steps = s->ld.steps;
    ld->budget_hit = s->ld.budget_hit;
    tg_load_watch(ld);
    if (report && s->ld.failed && !ld->failed) {
        for (size_t i = 0; i < s->diag.n; i++)
            if (s->diag.msgs[i].level == TG_DIAG_ERROR)
                tg_diag_add(ld->diag, TG_DIAG_ERROR, s->diag.status, (tg_pos){0}, NULL, "%s", s->diag.msgs[i].text);
        ld->failed = true;
    }
    tg_diag_clear(&s->diag);
    for (size_t i = 0; i < QUEUE; i++) {
        batch_free(s->queue[i]);
        free(s->queue[i]);
    }
    free(s->queue);
    pthread_cond_destroy(&s->moved);
    pthread_mutex_destroy(&s->lock);
    free(s);
    ld->stream = NULL;
}

void tg_load_apis_stop(tg_loader *ld)
{
    if (!ld->stream) return;
    stream_end(ld, false);     /* a discarded read's failure is no failure */
    ld->stats[TG_TABLE_RUNTIME] = (tg_rowstats){0};
}

/* Visit what the started producer decodes, to the end of the table or
** until visit stops: 1, -1 or 0 as tg_load_apis_with. */
static int stream_visit(tg_loader *ld, const tg_api_reader_cb *cb)
{
    tg_api_stream *s = ld->stream;
    twin_ring twins = {.n = 0};
    size_t cap = 0;
    int result = 1;
    for (;;) {
        pthread_mutex_lock(&s->lock);
        while (s->taken == s->filled && !s->stop) pthread_cond_wait(&s->moved, &s->lock);
        bool none = s->taken == s->filled;     /* stopped with nothing left: failed */
        pthread_mutex_unlock(&s->lock);
        if (none) {
            result = 0;
            break;
        }
        api_batch *b = s->queue[s->taken % QUEUE];
        result = b->failed ? 0 : visit_batch(ld, b, &twins, &cap, cb);
        bool last = b->last;
        pthread_mutex_lock(&s->lock);
        s->taken++;
        pthread_cond_broadcast(&s->moved);
        pthread_mutex_unlock(&s->lock);
        if (result <= 0 || last) break;
    }
    stream_end(ld, true);
    return ld->failed ? 0 : result;
}

/* ---------------------------------------------------------------- reading */

static int stream_serial(tg_loader *ld, tg_row *st, bool chains,
                         const tg_api_reader_cb *cb)
{
    api_batch *b = calloc(1, sizeof *b);
    if (!b) {
        tg_load_fail(ld, TG_EINTERNAL, "out of memory");
        return 0;
    }
    twin_ring twins = {.n = 0};
    size_t cap = 0;
    int result = 1;
    do {
        if (!fill(ld, st, chains, b)) break;
        result = visit_batch(ld, b, &twins, &cap, cb);
    } while (result > 0 && !b->last);
    batch_free(b);
    free(b);
    return ld->failed ? 0 : result;
}

/* A whole read: whether callchainId is read, and what it watches. */
typedef struct whole_read {
    bool chains;
    size_t cap;
    twin_ring twins;
} whole_read;

static bool whole_row(tg_loader *ld, const tg_row *st, void *ctx)
{
    tg_trace *t = ld->t;
    whole_read *w = ctx;
    tg_api a;
    int rc = decode(ld, st, w->chains, NULL, &a);
    if (rc <= 0) return rc == 0;
    if (!t->mixed_duplicate_api && twin_seen(&w->twins, &a)) t->mixed_duplicate_api = true;
    return TG_PUSH_ROWS(t->apis, t->n_apis, w->cap, t->rows_mapped[TG_TABLE_RUNTIME], a) || tg_load_oom(ld);
}

/* Every row into trace->apis. */
static bool read_whole(tg_loader *ld, tg_row *st, bool chains)
{
    whole_read w = {.chains = chains, .cap = 0, .twins = {.n = 0}};
    if (!ld->failed) tg_load_each(ld, st, whole_row, &w);
    return !ld->failed;
}

int tg_load_apis_with(tg_loader *ld, const tg_api_reader_cb *cb)
{
    if (!ld->t->table_name[TG_TABLE_RUNTIME]) return 1;
    if (cb && ld->threads >= 2) tg_load_apis_start(ld);   /* else (or failing that) one thread */
    if (ld->stream) {
        if (cb) return stream_visit(ld, cb);
        tg_load_apis_stop(ld);     /* a whole read: from the start, on this thread */
    }
    bool chains;
    tg_row st;
    if (!prepare(ld, &chains, &st)) return 0;
    int result = cb ? stream_serial(ld, &st, chains, cb) : read_whole(ld, &st, chains) ? 1 : 0;
    tg_row_close(&st);
    return ld->failed ? 0 : result;
}

bool tg_load_apis(tg_loader *ld)
{
    return tg_load_apis_with(ld, NULL) > 0;
}
