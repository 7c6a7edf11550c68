/*
** Shared by the lean-load tests (test_stream.c, test_stream_twins.c): the
** SQL row writers their exports are made of (for the fixture builder of
** ../fixture.h, one process, one thread, two GPUs), a model built on a
** trace opened whole or with its API table deferred, the field-by-field
** comparisons that say a streamed build equals the full one, and a keep_api
** that keeps the blocking calls and logs every call it is asked about.
**
** Failures are cmocka assertions: include cmocka.h before this header.
*/
#ifndef TG_TEST_STREAM_FIXTURE_H
#define TG_TEST_STREAM_FIXTURE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "model/model.h"

/* Process 1234, thread 1235: every row of the fixtures is theirs. */
#define GTID "((1234 << 24) | 1235)"
#define GPID "(1234 << 24)"
#define TID 1235

/* StringIds of the fixtures (sql_strings writes them all). */
enum {
    S_LAUNCH = 1, S_GRAPH, S_MEMCPY, S_MEMCPY_ASYNC, S_MEMSET_ASYNC, S_STREAM_SYNC, S_GET_LAST_ERROR,
    S_DEVICE_SYNC, S_MALLOC, S_GEMM, S_GEMM_SHORT, S_RELU, S_RELU_SHORT, S_NCCL, S_NCCL_SHORT,
    S_ITERATION, S_ORPHAN, S_OVERHEAD, S_MEMCPY_OUTER, S_DEVICE_SYNC_OUTER, S_LAUNCH_OUTER, S_COUNT
};

/* ---------------------------------------------------------------- fixture SQL */

/* Each appends INSERTs to *sql (tg_fixture_append): every string above; a
** runtime call named `name` (a string id) on the thread; a kernel on
** `device`; a copy on device 0 (copyKind, srcKind, dstKind); an NVTX
** push/pop range on the thread, named by inline text or, when text is
** NULL, by text_id; the two GPUs, the process and the session start. */
void sql_strings(char **sql);
void sql_call(char **sql, long long start, long long end, long long corr, int name);
void sql_kernel(char **sql, long long start, long long end, int device, int stream, long long corr,
                int name, int short_name);
void sql_memcpy(char **sql, long long start, long long end, long long corr, long long bytes, int kind,
                int src_kind, int dst_kind);
void sql_range(char **sql, long long start, long long end, const char *text, int text_id);
void sql_devices(char **sql);

/* ---------------------------------------------------------------- builds */

typedef struct built {
    tg_trace *t;
    tg_model *m;
    tg_diag d;
} built;

/* Open path (whole when opts is NULL, else tg_trace_open_with) and build
** its model with params p (may be NULL); fails the test on any error. */
void build(built *b, const char *path, const tg_load_opts *opts, const tg_model_params *p);
void unbuild(built *b);

/* ---------------------------------------------------------------- comparisons */

/* The text of string id (or "<null>"). */
const char *str_of(const tg_trace *t, int32_t id);
#define SAME(x, y) assert_int_equal((x), (y))
/* Member f of rows x and y (of traces ta and tb): equal values, equal text. */
#define F(f) SAME(x->f, y->f)
#define FS(f) assert_string_equal(str_of(ta, x->f), str_of(tb, y->f))

void same_kspans(const tg_model *a, const tg_model *b);
void same_iterations(const tg_model *a, const tg_model *b);
void same_devices(const tg_model *a, const tg_model *b);
void same_facts(const tg_model *a, const tg_model *b);
/* Every field of two calls, DERIVED ones included. */
void same_api(const tg_trace *ta, const tg_api *x, const tg_trace *tb, const tg_api *y);
/* Everything but the api rows (b may hold a subset of them). b_streamed:
** b's ops carry no index into its API table. */
void same_models(const tg_model *a, const tg_model *b, bool b_streamed);

/* ---------------------------------------------------------------- keep_api */

#define LOG_MAX 128

/* What keep_blocking was asked, in order (the first LOG_MAX calls). */
typedef struct keep_log {
    size_t calls;
    struct { int64_t rowid; int32_t iteration; int8_t steady, blocking; char name[64]; } seen[LOG_MAX];
} keep_log;

/* keep_api (ctx: a keep_log): keeps the blocking calls. */
bool keep_blocking(void *ctx, const tg_model *m, const tg_api *row);

#endif
