/*
** The op stream and the id map of model_int.h. The stream merges the
** kernel, memcpy and memset tables by start time; the trace layer loads
** them sorted by start (and says so), else the stream checks each table
** and, for one that is not, uses a sorted index array rather than trust an
** order that is not there.
*/
#include "model_int.h"

#include <stdlib.h>
#include <string.h>

int tg_model_op_table(tg_op_kind kind)
{
    static const int tables[TG_OPK_COUNT] = {TG_TABLE_KERNEL, TG_TABLE_MEMCPY, TG_TABLE_MEMSET};
    TG_ASSERT(kind >= 0 && kind < TG_OPK_COUNT);
    return tables[kind >= 0 && kind < TG_OPK_COUNT ? kind : TG_OPK_KERNEL];
}

size_t tg_model_op_count(const tg_model *m, tg_op_kind kind)
{
    const tg_trace *t = m->trace;
    switch (kind) {
    case TG_OPK_KERNEL: return t->n_kernels;
    case TG_OPK_MEMCPY: return t->n_memcpys;
    default: TG_ASSERT(kind == TG_OPK_MEMSET); return t->n_memsets;
    }
}

void tg_model_op_get(const tg_model *m, tg_op_kind kind, size_t index, tg_op *op)
{
    const tg_trace *t = m->trace;
    op->kind = kind;
    op->index = index;
    if (kind == TG_OPK_KERNEL) {
        const tg_kspan *k = tg_model_ks(tg_model_cpriv_of(m), index);
        op->rowid = k->rowid; op->start = k->start; op->end = k->end;
        op->device = k->device; op->pid = k->pid;
    } else {
        const tg_memop *r = kind == TG_OPK_MEMCPY ? &t->memcpys[index] : &t->memsets[index];
        op->rowid = r->rowid; op->start = r->start; op->end = r->end;
        op->device = r->device; op->pid = r->pid;
    }
}

static int64_t op_start(const tg_model *m, tg_op_kind kind, size_t i)
{
    const tg_trace *t = m->trace;
    switch (kind) {
    case TG_OPK_KERNEL: return tg_model_ks(tg_model_cpriv_of(m), i)->start;
    case TG_OPK_MEMCPY: return t->memcpys[i].start;
    default: TG_ASSERT(kind == TG_OPK_MEMSET); return t->memsets[i].start;
    }
}

/* qsort has no context argument; the sort key is copied next to the index. */
typedef struct keyed_index { int64_t key; size_t index; } keyed_index;

static int cmp_keyed(const void *a, const void *b)
{
    const keyed_index *x = a, *y = b;
    if (x->key != y->key) return x->key < y->key ? -1 : 1;
    return x->index < y->index ? -1 : x->index > y->index;
}

static bool sort_table(tg_op_stream *s, tg_op_kind kind, size_t n)
{
    keyed_index *tmp = malloc(n * sizeof *tmp);
    s->order[kind] = malloc(n * sizeof *s->order[kind]);
    if (!tmp || !s->order[kind]) { free(tmp); return false; }
    for (size_t i = 0; i < n; i++) tmp[i] = (keyed_index){op_start(s->m, kind, i), i};
    qsort(tmp, n, sizeof *tmp, cmp_keyed);
    for (size_t i = 0; i < n; i++) s->order[kind][i] = tmp[i].index;
    free(tmp);
    return true;
}

static void load_head(tg_op_stream *s, tg_op_kind kind)
{
    size_t n = tg_model_op_count(s->m, kind);
    s->has_head[kind] = s->pos[kind] < n;
    if (!s->has_head[kind]) return;
    size_t i = s->order[kind] ? s->order[kind][s->pos[kind]] : s->pos[kind];
    tg_model_op_get(s->m, kind, i, &s->head[kind]);
}

bool tg_model_ops_open(tg_op_stream *s, const tg_model *m)
{
    memset(s, 0, sizeof *s);
    s->m = m;
    const tg_trace *t = m->trace;
    for (int kind = 0; kind < TG_OPK_COUNT; kind++) {
        size_t n = tg_model_op_count(m, kind);
        bool sorted = true;
        for (size_t i = 1; i < n && sorted && !t->sorted_by_start; i++)
            sorted = op_start(m, kind, i - 1) <= op_start(m, kind, i);
        if (!sorted && !sort_table(s, kind, n)) { tg_model_ops_close(s); return false; }
        load_head(s, kind);
    }
    return true;
}

bool tg_model_ops_next(tg_op_stream *s, tg_op *op)
{
    int best = -1;
    for (int kind = 0; kind < TG_OPK_COUNT; kind++)
        if (s->has_head[kind] && (best < 0 || s->head[kind].start < s->head[best].start))
            best = kind;
    if (best < 0) return false;
    *op = s->head[best];
    s->pos[best]++;
    load_head(s, best);
    return true;
}

void tg_model_ops_close(tg_op_stream *s)
{
    for (int kind = 0; kind < TG_OPK_COUNT; kind++) {
        free(s->order[kind]);
        s->order[kind] = NULL;
    }
}

