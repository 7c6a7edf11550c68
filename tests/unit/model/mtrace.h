/*
** In-memory traces for the model tests: rows appended one call at a time
** into a tg_trace, with rowids numbered per table from 1. No SQLite file is
** involved, so each test states its events and the values it expects next
** to each other.
*/
#ifndef TG_TEST_MTRACE_H
#define TG_TEST_MTRACE_H

#include <math.h>
#include "model/model.h"

/* cmocka's float assertion works in single precision; this one in double.
** (Include cmocka.h first.) */
#define assert_near(a, b, eps) do { \
        double a_ = (a), b_ = (b); \
        if (!(fabs(a_ - b_) <= (eps))) fail_msg("%s = %.17g, expected %.17g", #a, a_, b_); \
    } while (0)

tg_trace *mt_new(void);
void mt_free(tg_trace *t);
/* Set first_ns/last_ns from the rows (call before tg_model_build). */
void mt_finish(tg_trace *t);
int32_t mt_str(tg_trace *t, const char *s);

size_t mt_api(tg_trace *t, int32_t pid, int32_t tid, int64_t corr, const char *name,
              int64_t start, int64_t end);
size_t mt_kernel(tg_trace *t, int32_t pid, int32_t device, int64_t corr, const char *name,
                 int64_t start, int64_t end);
size_t mt_memcpy(tg_trace *t, int32_t pid, int32_t device, int64_t corr, int32_t copy_kind,
                 int32_t src_kind, int32_t dst_kind, int64_t bytes, int64_t start, int64_t end);
size_t mt_memset(tg_trace *t, int32_t pid, int32_t device, int64_t corr, int32_t mem_kind,
                 int64_t bytes, int64_t start, int64_t end);
size_t mt_nvtx(tg_trace *t, int32_t pid, int32_t tid, int32_t event_type, const char *name,
               int64_t start, int64_t end);
size_t mt_overhead(tg_trace *t, int32_t pid, const char *name, int64_t start, int64_t end);
void mt_gpu(tg_trace *t, int32_t id, const char *name);

/* A kernel and its launching call (cuLaunchKernel on pid/tid) in one go. */
size_t mt_launch(tg_trace *t, int32_t pid, int32_t tid, int32_t device, int64_t corr,
                 const char *kernel, int64_t call_start, int64_t call_end,
                 int64_t start, int64_t end);

/* An integer field of a rule source as rules read it (computed fields
** included): row `row` of source `source` ("kernel", "api", ...); null
** reads as TG_NULL_I64. */
int64_t mt_field(const tg_model *m, const char *source, const char *field, size_t row);

/* Build with default params; fails the test on error. */
tg_model *mt_build(tg_trace *t);
const char *mt_s(const tg_trace *t, int32_t id);

#endif
