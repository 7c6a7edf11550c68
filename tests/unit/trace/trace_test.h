/*
** Shared by the trace tests: one small, fully specified capture (a kernel,
** a copy, a memset, their launching calls, a synchronize, NVTX ranges and a
** mark, profiler overhead, a GPU, a process) whose INSERTs fit every
** fixture shape, and helpers to open fixtures and inspect a diag.
*/
#ifndef TG_TRACE_TEST_H
#define TG_TRACE_TEST_H

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fixture.h"
#include "trace/trace.h"

/* Process 1234, thread 1235 (globalTid = 1234 << 24 | 1235). */
#define TT_PID 1234
#define TT_TID 1235
#define TT_GPID "(1234 << 24)"
#define TT_GTID "((1234 << 24) | 1235)"

#define TT_ROWS                                                                                  \
    "INSERT INTO StringIds VALUES (1, 'void saxpy<float>(int, float, float*, float*)'),"        \
    " (2, 'saxpy'), (3, 'cudaLaunchKernel_v7000'), (4, 'cudaMemcpyAsync_v3020'),"                \
    " (5, 'cudaMemsetAsync_v3020'), (6, 'unused string'), (7, 'CUDA profiling overhead'),"       \
    " (8, 'cudaStreamSynchronize_v3020'), (9, 'registered range');\n"                            \
    "INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME (start, end, globalTid, correlationId, nameId,"    \
    " returnValue) VALUES (100, 150, " TT_GTID ", 11, 3, 0), (300, 320, " TT_GTID ", 12, 4, 0),"  \
    " (400, 420, " TT_GTID ", 13, 5, 0), (500, 900, " TT_GTID ", 14, 8, 999);\n"                  \
    "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL (start, end, deviceId, contextId, streamId,"        \
    " correlationId, globalPid, demangledName, shortName, registersPerThread, gridX, gridY,"     \
    " gridZ, blockX, blockY, blockZ, staticSharedMemory, dynamicSharedMemory)"                   \
    " VALUES (200, 260, 0, 1, 7, 11, " TT_GPID ", 1, 2, 32, 64, 2, 1, 256, 1, 1, 16, 1024);\n"   \
    "INSERT INTO CUPTI_ACTIVITY_KIND_MEMCPY (start, end, deviceId, contextId, streamId,"        \
    " correlationId, globalPid, bytes, copyKind, srcKind, dstKind, srcDeviceId, dstDeviceId)"    \
    " VALUES (330, 380, 0, 1, 7, 12, " TT_GPID ", 16777216, 1, 0, 2, 0, 0);\n"                   \
    "INSERT INTO CUPTI_ACTIVITY_KIND_MEMSET (start, end, deviceId, contextId, streamId,"        \
    " correlationId, globalPid, value, bytes, memKind)"                                          \
    " VALUES (430, 440, 0, 1, 7, 13, " TT_GPID ", 255, 4096, 1);\n"                              \
    "INSERT INTO CUPTI_ACTIVITY_KIND_SYNCHRONIZATION (start, end, deviceId, contextId,"         \
    " streamId, correlationId, globalPid, syncType, eventId)"                                    \
    " VALUES (510, 890, 0, 1, 7, 14, " TT_GPID ", 3, 0);\n"                                      \
    "INSERT INTO NVTX_EVENTS (start, end, eventType, text, textId, globalTid, domainId)"        \
    " VALUES (90, 950, 59, 'iteration', NULL, " TT_GTID ", 0),"                                  \
    " (95, 96, 59, NULL, 9, " TT_GTID ", 0), (97, NULL, 34, 'a mark', NULL, " TT_GTID ", 0);\n" \
    "INSERT INTO PROFILER_OVERHEAD (start, end, globalTid, nameId)"                             \
    " VALUES (960, 990, ((1234 << 24) | 1236), 7);\n"                                            \
    "INSERT INTO TARGET_INFO_GPU (vmId, id, name, totalMemory, smCount, computeMajor,"          \
    " computeMinor) VALUES (0, 0, 'NVIDIA H200', 150109880320, 132, 9, 0);\n"                    \
    "INSERT INTO PROCESSES (globalPid, pid, name) VALUES (" TT_GPID ", 1234, 'train.py');\n"     \
    "INSERT INTO TARGET_INFO_SESSION_START_TIME (utcEpochNs) VALUES (1700000000000000000);\n"

/* Build a fixture from schema + rows and open it; the path goes to *path
** (removed by the caller with tg_fixture_remove). */
static inline tg_trace *tt_open(const char *schema, const char *rows, char **path, tg_diag *diag)
{
    *path = tg_fixture_build(schema, rows);
    if (!*path) return NULL;
    tg_diag_init(diag);
    return tg_trace_open(*path, diag);
}

/* A string of the trace, "" for null (so assert_string_equal never sees NULL). */
static inline const char *tt_str(const tg_trace *t, int32_t id)
{
    const char *s = tg_trace_str(t, id);
    return s ? s : "";
}

static inline const char *tt_first_error(const tg_diag *d)
{
    for (size_t i = 0; i < d->n; i++)
        if (d->msgs[i].level == TG_DIAG_ERROR) return d->msgs[i].text;
    return "";
}

static inline int tt_cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}
/* Names of the entries of a fixture's directory, sorted, joined by spaces. */
static inline void tt_dir_listing(const char *trace_path, char *out, size_t size)
{
    char dir[4096];
    snprintf(dir, sizeof dir, "%s", trace_path);
    char *slash = strrchr(dir, '/');
    if (slash) *slash = 0;
    char *names[64];
    size_t n = 0;
    DIR *d = opendir(dir);
    struct dirent *e;
    while (d && n < 64 && (e = readdir(d)) != NULL)
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) names[n++] = strdup(e->d_name);
    if (d) closedir(d);
    qsort(names, n, sizeof *names, tt_cmp_str);
    out[0] = 0;
    for (size_t i = 0; i < n; i++) {
        if (i) strncat(out, " ", size - strlen(out) - 1);
        strncat(out, names[i], size - strlen(out) - 1);
        free(names[i]);
    }
}

#endif
