/*
** Rule sources as the compiler and evaluator see them: a source is an
** array of row structs (base, count, stride) and a field is a typed member
** at an offset. The table is generated from fields.def.
*/
#ifndef TG_SOURCE_H
#define TG_SOURCE_H

#include <math.h>
#include <string.h>
#include "model.h"
#include "../common/value.h"

typedef enum tg_source_id {
#define TG_SOURCE(id, name, row_type, table, doc) TG_SRC_##id,
#define TG_FIELD(src, name, type, unit, row_type, member, nullable, doc)
#define TG_COMPUTED(src, name, type, unit, store, row_type, member, member2, nullable, doc)
#include "fields.def"
#undef TG_SOURCE
#undef TG_FIELD
#undef TG_COMPUTED
    TG_SRC_COUNT
} tg_source_id;

typedef enum tg_store {
    TG_STORE_I64, TG_STORE_I32, TG_STORE_I8, TG_STORE_F64,
    /* computed on read (TG_COMPUTED in fields.def): not a member of its own */
    TG_STORE_SPAN,             /* int64 at offset - int64 at offset2, null if either is */
    TG_STORE_SITE,             /* call site of the stack id (int32) at offset: its symbol */
    TG_STORE_SITE_MODULE       /* ... its module's file name (tg_model_call_site) */
} tg_store;

typedef struct tg_field_def {
    tg_source_id source;
    const char *name;
    tg_type type;
    tg_unit unit;
    tg_store store;
    size_t offset;
    bool nullable;
    const char *doc;
    size_t offset2;            /* TG_STORE_SPAN: the subtracted member */
} tg_field_def;

typedef struct tg_source_def {
    tg_source_id id;
    const char *name;
    tg_table_id table;          /* or TG_TABLE_COUNT: per-row `table` */
    size_t stride;
    size_t rowid_offset;
    const char *doc;
} tg_source_def;

extern const tg_source_def tg_source_defs[TG_SRC_COUNT];
extern const tg_field_def tg_field_defs[];
extern const size_t tg_field_count;

/* Lookups by name; NULL / -1 when unknown. */
const tg_source_def *tg_source_find(const char *name);
const tg_field_def *tg_field_find(tg_source_id src, const char *name);

/* The rows of one source in a built model. */
typedef struct tg_source_view {
    const tg_source_def *def;
    const char *base;
    size_t n;
} tg_source_view;

tg_source_view tg_model_source(const tg_model *m, tg_source_id id);

/* Bit mask (1u << tg_table_id) of the tables without which this source
** would be empty only because the capture did not record them. */
unsigned tg_source_required_tables(tg_source_id id);

/* Bit mask (1u << tg_table_id) of the op tables (TG_TABLE_KERNEL, _MEMCPY,
** _MEMSET) whose rows make a source's rows (kernel, memcpy, memset; gaps:
** all three), or that a field is computed from (an iteration's period and
** gpu_time from all three, its kernels and kernel_time from kernels, a
** device's busy fraction from all three and its NCCL overlap from kernels,
** trace.memcpys from copies, ...): with such a
** table emptied beside the calls that launched its ops, the rule reads
** missing data (engine/eval/eval_missing.c, docs/rules.md "Missing data"). */
unsigned tg_source_op_tables(tg_source_id id);
unsigned tg_field_op_tables(const tg_field_def *f);

/* The call-stack table a field reads (call_site, call_module, callchain:
** TG_TABLE_CALLCHAINS, or TG_TABLE_OSRT_CALLCHAINS on the osrt source),
** or -1. */
int tg_field_stack_table(const tg_field_def *f);

/* Why a trace format never fills field f ("the PyTorch profiler does not
** record return codes"), with the table whose recording fills it in
** *records; NULL when the format can (docs/kineto.md). */
const char *tg_field_never_filled(const tg_field_def *f, tg_trace_format format, tg_table_id *records);

/* Evidence table and rowid of row i. */
int tg_source_row_table(const tg_source_view *v, size_t i);
int64_t tg_source_row_id(const tg_source_view *v, size_t i);

/* The integer of a computed field (TG_STORE_SPAN) of the row at `row`;
** TG_NULL_I64 for null. */
static inline int64_t tg_field_computed(const tg_model *m, const char *row, const tg_field_def *f)
{
    (void)m;
    int64_t a, b;
    memcpy(&a, row + f->offset, 8);
    memcpy(&b, row + f->offset2, 8);
    return a == TG_NULL_I64 || b == TG_NULL_I64 ? TG_NULL_I64 : a - b;
}

/* The string id of a call-site field (TG_STORE_SITE, TG_STORE_SITE_MODULE)
** of the row at `row`; -1 for null. */
static inline int32_t tg_field_site(const tg_model *m, const char *row, const tg_field_def *f)
{
    int32_t chain;
    memcpy(&chain, row + f->offset, 4);
    return tg_model_call_site(m, f->source == TG_SRC_OSRT ? TG_STACKS_OSRT : TG_STACKS_CUDA, chain,
                              f->store == TG_STORE_SITE_MODULE);
}

/* Read a field of row i as a value (strings resolved through the pool). */
static inline tg_value tg_field_get(const tg_model *m, const tg_source_view *v,
                                    const tg_field_def *f, size_t i)
{
    const char *p = v->base + i * v->def->stride + f->offset;
    int64_t iv;
    switch (f->store) {
    case TG_STORE_I64: memcpy(&iv, p, 8); if (iv == TG_NULL_I64) return tg_null(); break;
    case TG_STORE_SPAN:
        iv = tg_field_computed(m, v->base + i * v->def->stride, f);
        if (iv == TG_NULL_I64) return tg_null();
        break;
    case TG_STORE_SITE: case TG_STORE_SITE_MODULE: {
        int32_t sid = tg_field_site(m, v->base + i * v->def->stride, f);
        return sid < 0 ? tg_null() : tg_str(tg_strpool_get(m->trace->strings, sid)); }
    case TG_STORE_I32: { int32_t x; memcpy(&x, p, 4);
        if (f->nullable && x == -1) return tg_null();
        if (f->type == TG_TY_STRING) return tg_str(tg_strpool_get(m->trace->strings, x));
        iv = x; break; }
    case TG_STORE_I8: { int8_t x; memcpy(&x, p, 1); if (x < 0) return tg_null();
        if (f->type == TG_TY_BOOL) return tg_bool(x != 0);
        iv = x; break; }
    case TG_STORE_F64: { double d; memcpy(&d, p, 8); if (isnan(d)) return tg_null();
        return tg_float(d, f->unit); }
    default: return tg_null();
    }
    if (f->type == TG_TY_BOOL) return tg_bool(iv != 0);
    return tg_int(iv, f->unit);
}

#endif
