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
