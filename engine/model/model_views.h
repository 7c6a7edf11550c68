/*
** What the two reproduce writers share: model_sql.c (SQL over an nsys
** export, docs/evidence.md) and model_jq.c (jq over a Kineto trace,
** docs/kineto.md). Both write a query as views, each view once and only
** when asked for, after the views it reads; this header holds which rule
** sources have a view and that driving, written once.
**
** A writer lists its views once, X(NAME, call) -- call writes view NAME
** on the writer `w` -- and expands the list into its `enum view`
** (TG_VIEW_ENUM, then V_COUNT) and, below its view functions, into
** TG_VIEW_DRIVER: need(w, v), which writes view v the first time it is
** asked for (each view's function first needs the views it reads, so a
** query holds only what its rule uses, in order), and source_view(src),
** the view of a rule source.
*/
#ifndef TG_MODEL_VIEWS_H
#define TG_MODEL_VIEWS_H

#include "source.h"

/* The rule sources with a view, by their names in fields.def; a writer's
** view of a source has the same name (V_KERNEL for TG_SRC_KERNEL). Not
** the host side (osrt, cudnn, cublas), whose findings cite their rows
** only (docs/evidence.md). */
#define TG_VIEW_SOURCES(X) X(KERNEL) X(MEMCPY) X(MEMSET) X(API) X(NVTX) X(ITERATION) X(GAP) X(DEVICE) X(TRACE)

/* One entry of a writer's list as an enumerator of its enum view. */
#define TG_VIEW_ENUM(name, call) V_##name,

/* need() and source_view() of a writer: its struct `type` holds
** bool done[V_COUNT], its views are LIST(X). */
#define TG_VIEW_DRIVER(type, LIST)                                                                             \
    static void need(type *w, enum view v)                                                                     \
    {                                                                                                          \
        if (w->done[v]) return;                                                                                \
        w->done[v] = true;                                                                                     \
        switch (v) {                                                                                           \
            LIST(TG_VIEW_WRITE_)                                                                               \
        default: TG_UNREACHABLE(); break;                                                                      \
        }                                                                                                      \
    }                                                                                                          \
                                                                                                               \
    static enum view source_view(tg_source_id src)                                                             \
    {                                                                                                          \
        switch (src) {                                                                                         \
            TG_VIEW_SOURCES(TG_VIEW_SOURCE_)                                                                   \
        default: TG_UNREACHABLE(); return V_TRACE;                                                             \
        }                                                                                                      \
    }

/* The cases TG_VIEW_DRIVER expands its lists into. */
#define TG_VIEW_WRITE_(name, call) case V_##name: call; break;
#define TG_VIEW_SOURCE_(name) case TG_SRC_##name: return V_##name;

#endif
