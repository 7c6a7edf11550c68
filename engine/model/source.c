/*
** The source and field tables, expanded from fields.def, and the accessors
** that turn a built model into source views.
*/
#include "source.h"

#include <stddef.h>

#define STORE_OF(row_type, member) _Generic(((row_type *)0)->member, \
    int64_t: TG_STORE_I64, int32_t: TG_STORE_I32, int8_t: TG_STORE_I8, double: TG_STORE_F64)

const tg_source_def tg_source_defs[TG_SRC_COUNT] = {
#define TG_SOURCE(id, nm, row_type, table, doc) \
    [TG_SRC_##id] = {TG_SRC_##id, nm, table, sizeof(row_type), offsetof(row_type, rowid), doc},
#define TG_FIELD(src, name, type, unit, row_type, member, nullable, doc)
#define TG_COMPUTED(src, name, type, unit, store, row_type, member, member2, nullable, doc)
#include "fields.def"
#undef TG_SOURCE
#undef TG_FIELD
#undef TG_COMPUTED
};

const tg_field_def tg_field_defs[] = {
#define TG_SOURCE(id, name, row_type, table, doc)
#define TG_FIELD(src, nm, type, unit, row_type, member, nullable, doc) \
    {TG_SRC_##src, nm, TG_TY_##type, TG_UNIT_##unit, STORE_OF(row_type, member), \
     offsetof(row_type, member), nullable, doc, 0},
#define TG_COMPUTED(src, nm, type, unit, store, row_type, member, member2, nullable, doc) \
    {TG_SRC_##src, nm, TG_TY_##type, TG_UNIT_##unit, TG_STORE_##store, \
     offsetof(row_type, member), nullable, doc, offsetof(row_type, member2)},
#include "fields.def"
#undef TG_SOURCE
#undef TG_FIELD
#undef TG_COMPUTED
};

const size_t tg_field_count = sizeof tg_field_defs / sizeof tg_field_defs[0];

const tg_source_def *tg_source_find(const char *name)
{
    for (int i = 0; i < TG_SRC_COUNT; i++)
        if (strcmp(tg_source_defs[i].name, name) == 0) return &tg_source_defs[i];
    return NULL;
}

const tg_field_def *tg_field_find(tg_source_id src, const char *name)
{
    for (size_t i = 0; i < tg_field_count; i++)
        if (tg_field_defs[i].source == src && strcmp(tg_field_defs[i].name, name) == 0)
            return &tg_field_defs[i];
    return NULL;
}

tg_source_view tg_model_source(const tg_model *m, tg_source_id id)
{
    tg_source_view v = {.def = &tg_source_defs[id]};
    const tg_trace *t = m->trace;
    switch (id) {
    case TG_SRC_KERNEL: v.base = (const char *)t->kernels; v.n = t->kernels ? t->n_kernels : 0; break;
    case TG_SRC_MEMCPY: v.base = (const char *)t->memcpys; v.n = t->n_memcpys; break;
    case TG_SRC_MEMSET: v.base = (const char *)t->memsets; v.n = t->n_memsets; break;
    case TG_SRC_API: v.base = (const char *)t->apis; v.n = t->n_apis; break;
    case TG_SRC_NVTX: v.base = (const char *)t->nvtx; v.n = t->n_nvtx; break;
    case TG_SRC_ITERATION: v.base = (const char *)m->iterations; v.n = m->n_iterations; break;
    case TG_SRC_GAP: v.base = (const char *)m->gaps; v.n = m->n_gaps; break;
    case TG_SRC_DEVICE: v.base = (const char *)m->devices; v.n = m->n_devices; break;
    case TG_SRC_TRACE: v.base = (const char *)&m->facts; v.n = 1; break;
    case TG_SRC_OSRT: v.base = (const char *)t->osrts; v.n = t->n_osrts; break;
    case TG_SRC_CUDNN: v.base = (const char *)t->libcalls[TG_LIB_CUDNN]; v.n = t->n_libcalls[TG_LIB_CUDNN]; break;
    case TG_SRC_CUBLAS: v.base = (const char *)t->libcalls[TG_LIB_CUBLAS]; v.n = t->n_libcalls[TG_LIB_CUBLAS]; break;
    default: break;
    }
    return v;
}

int tg_source_row_table(const tg_source_view *v, size_t i)
{
    if (v->def->id == TG_SRC_GAP)
        return ((const tg_gap *)(const void *)(v->base + i * v->def->stride))->table;
    return v->def->table;
}

int64_t tg_source_row_id(const tg_source_view *v, size_t i)
{
    int64_t id;
    memcpy(&id, v->base + i * v->def->stride + v->def->rowid_offset, sizeof id);
    return id;
}

unsigned tg_source_required_tables(tg_source_id id)
{
    switch (id) {
    case TG_SRC_KERNEL: case TG_SRC_GAP: case TG_SRC_DEVICE:
        return 1u << TG_TABLE_KERNEL;
    case TG_SRC_MEMCPY: case TG_SRC_MEMSET: case TG_SRC_API:
        return 1u << TG_TABLE_RUNTIME;
    case TG_SRC_NVTX: case TG_SRC_ITERATION:
        return 1u << TG_TABLE_NVTX;
    case TG_SRC_OSRT: return 1u << TG_TABLE_OSRT;
    case TG_SRC_CUDNN: return 1u << TG_TABLE_CUDNN;
    case TG_SRC_CUBLAS: return 1u << TG_TABLE_CUBLAS;
    default:
        return 0;
    }
}

/* ------------------------------------------------ what a field rests on */

#define OPS_ALL (1u << TG_TABLE_KERNEL | 1u << TG_TABLE_MEMCPY | 1u << TG_TABLE_MEMSET)
#define OPS_KERNEL (1u << TG_TABLE_KERNEL)

unsigned tg_source_op_tables(tg_source_id id)
{
    switch (id) {
    case TG_SRC_KERNEL: return OPS_KERNEL;
    case TG_SRC_MEMCPY: return 1u << TG_TABLE_MEMCPY;
    case TG_SRC_MEMSET: return 1u << TG_TABLE_MEMSET;
    case TG_SRC_GAP: return OPS_ALL;
    default: return 0;
    }
}

/* The fields of the other sources that are computed from GPU ops. */
static const struct {
    tg_source_id source;
    const char *name;
    unsigned tables;
} op_fields[] = {
    {TG_SRC_ITERATION, "period", OPS_ALL},         {TG_SRC_ITERATION, "gpu_time", OPS_ALL},
    {TG_SRC_ITERATION, "gpu_span", OPS_ALL},       {TG_SRC_ITERATION, "kernels", OPS_KERNEL},
    {TG_SRC_ITERATION, "launches", OPS_KERNEL},    {TG_SRC_ITERATION, "launch_time", OPS_KERNEL},
    {TG_SRC_ITERATION, "kernel_time", OPS_KERNEL}, {TG_SRC_ITERATION, "short_kernels", OPS_KERNEL},
    {TG_SRC_ITERATION, "graph_launches", OPS_KERNEL}, {TG_SRC_ITERATION, "graph_kernels", OPS_KERNEL},
    {TG_SRC_DEVICE, "start", OPS_ALL},            {TG_SRC_DEVICE, "end", OPS_ALL},
    {TG_SRC_DEVICE, "span", OPS_ALL},             {TG_SRC_DEVICE, "busy_frac", OPS_ALL},
    {TG_SRC_DEVICE, "busy_frac_steady", OPS_ALL}, {TG_SRC_DEVICE, "gaps", OPS_ALL},
    {TG_SRC_DEVICE, "busy_time_steady", OPS_ALL}, {TG_SRC_DEVICE, "copy_time_steady", OPS_ALL},
    {TG_SRC_DEVICE, "copy_frac_steady", OPS_ALL}, {TG_SRC_DEVICE, "kernels", OPS_KERNEL},
    {TG_SRC_DEVICE, "kernel_time", OPS_KERNEL},   {TG_SRC_DEVICE, "nccl_time", OPS_KERNEL},
    {TG_SRC_DEVICE, "nccl_overlap", OPS_KERNEL},  {TG_SRC_DEVICE, "exposed_nccl_time", OPS_KERNEL},
    {TG_SRC_DEVICE, "queue_p50", OPS_KERNEL},     {TG_SRC_DEVICE, "queue_kernels", OPS_KERNEL},
    {TG_SRC_DEVICE, "queue_clamped", OPS_KERNEL},
    {TG_SRC_NVTX, "gpu_time", OPS_ALL},            {TG_SRC_NVTX, "gpu_span", OPS_ALL},
    {TG_SRC_TRACE, "kernels", OPS_KERNEL},         {TG_SRC_TRACE, "memcpys", 1u << TG_TABLE_MEMCPY},
    {TG_SRC_TRACE, "memsets", 1u << TG_TABLE_MEMSET}, {TG_SRC_TRACE, "devices", OPS_ALL},
    {TG_SRC_CUDNN, "kernels", OPS_KERNEL},         {TG_SRC_CUDNN, "kernel_time", OPS_KERNEL},
    {TG_SRC_CUBLAS, "kernels", OPS_KERNEL},        {TG_SRC_CUBLAS, "kernel_time", OPS_KERNEL},
};

unsigned tg_field_op_tables(const tg_field_def *f)
{
    unsigned own = tg_source_op_tables(f->source);
    if (own) return own;
    for (size_t i = 0; i < sizeof op_fields / sizeof op_fields[0]; i++)
        if (op_fields[i].source == f->source && !strcmp(op_fields[i].name, f->name)) return op_fields[i].tables;
    return 0;
}

int tg_field_stack_table(const tg_field_def *f)
{
    if (f->store != TG_STORE_SITE && f->store != TG_STORE_SITE_MODULE && strcmp(f->name, "callchain") != 0)
        return -1;
    return f->source == TG_SRC_OSRT ? TG_TABLE_OSRT_CALLCHAINS : TG_TABLE_CALLCHAINS;
}

/* Fields a format's reader leaves null on every row (docs/kineto.md). */
static const struct {
    tg_source_id source;
    const char *name;
    tg_trace_format format;
    tg_table_id records;
    const char *why;
} never_filled[] = {
    {TG_SRC_API, "return_value", TG_FORMAT_KINETO, TG_TABLE_RUNTIME,
     "the PyTorch profiler does not record return codes"},
};

const char *tg_field_never_filled(const tg_field_def *f, tg_trace_format format, tg_table_id *records)
{
    for (size_t i = 0; i < sizeof never_filled / sizeof never_filled[0]; i++)
        if (never_filled[i].source == f->source && never_filled[i].format == format &&
            !strcmp(never_filled[i].name, f->name)) {
            *records = never_filled[i].records;
            return never_filled[i].why;
        }
    return NULL;
}
