/*
** Internals of the rule tests: the inline events of a case as plain rows
** (what `input.events` says after defaults, `repeat` expansion and
** correlation ids), shared by the YAML reader (ruletest_events.c) and the
** SQLite writer (ruletest_sqlite.c), plus the small helpers the readers of
** a test file share (ruletest_load.c).
*/
#ifndef TG_RULETEST_RULETEST_INT_H
#define TG_RULETEST_RULETEST_INT_H

#include "ruletest.h"
#include "../rules/yaml_doc.h"

/* Defaults of unspecified columns (tests/rules/README.md lists them). */
#define TG_RT_DEFAULT_PID 1000
#define TG_RT_DEFAULT_TID 1000
#define TG_RT_DEFAULT_DEVICE 0
#define TG_RT_DEFAULT_STREAM 7
#define TG_RT_DEFAULT_CONTEXT 1
#define TG_RT_DEFAULT_BYTES 1048576
#define TG_RT_DEFAULT_GPU_NAME "NVIDIA H200"
#define TG_RT_PROCESS_NAME "tracegate-test"
#define TG_RT_OVERHEAD_NAME "CUDA profiling overhead"
/* The high bits nsys sets in every serialized GlobalId of a local capture
** (vmId of TARGET_INFO_GPU): globalPid = HIGH | pid << 24, globalTid adds tid. */
#define TG_RT_GLOBAL_ID_HIGH (INT64_C(1) << 48)
/* Rows one case may generate after `repeat` (a hostile count stops here). */
#define TG_RT_MAX_ROWS 1000000

typedef enum tg_rt_cat {
    TG_RT_KERNELS, TG_RT_MEMCPYS, TG_RT_MEMSETS, TG_RT_API, TG_RT_NVTX, TG_RT_DEVICES,
    TG_RT_OVERHEAD, TG_RT_OSRT, TG_RT_THREADS, TG_RT_CUDNN, TG_RT_CUBLAS, TG_RT_CAT_COUNT
} tg_rt_cat;

extern const char *const tg_rt_cat_names[TG_RT_CAT_COUNT];

/* A call stack (`stack:`), innermost frame first; written to
** CUDA_CALLCHAINS or OSRT_CALLCHAINS with id = its index + 1. */
typedef struct tg_rt_frame {
    const char *symbol, *module;
} tg_rt_frame;

typedef struct tg_rt_stack {
    tg_rt_frame *frames;       /* malloc'd */
    size_t n;
} tg_rt_stack;

/* A CUDA runtime or driver call (CUPTI_ACTIVITY_KIND_RUNTIME). */
typedef struct tg_rt_call {
    int64_t start, end;
    const char *name;
    int64_t correlation;       /* -1: assign a fresh id */
    int32_t pid, tid;
    int32_t return_value;
    int32_t stack;             /* index into events.stacks, -1 none */
} tg_rt_call;

/* An OS runtime call (OSRT_API). */
typedef struct tg_rt_osrt {
    int64_t start, end;
    const char *name;
    int32_t pid, tid;
    int64_t return_value;
    int32_t stack;             /* index into events.stacks, -1 none */
} tg_rt_osrt;

/* A cuDNN or cuBLAS call (CUDNN_EVENTS, CUBLAS_EVENTS). */
typedef struct tg_rt_libcall {
    int64_t start, end;
    const char *name;
    int32_t pid, tid;
} tg_rt_libcall;

/* A thread's name (ThreadNames). */
typedef struct tg_rt_thread {
    int32_t pid, tid;
    const char *name;
} tg_rt_thread;

/* A kernel, copy or memset. */
typedef struct tg_rt_op {
    int64_t start, end;
    int32_t device, context, stream, pid;
    int64_t correlation;       /* -1: from the launch, or a fresh id */
    int64_t launch;            /* index into calls of the call `launch:` made, -1 */
    /* kernels */
    const char *name, *short_name;
    int32_t grid[3], block[3];
    int32_t registers, static_smem, dynamic_smem;
    /* copies (copy_kind, src_kind, dst_kind: ENUM ids) and memsets (mem_kind) */
    int64_t bytes;
    int32_t copy_kind, src_kind, dst_kind;
    int32_t mem_kind;
    int64_t value;
} tg_rt_op;

/* An NVTX range or mark. */
typedef struct tg_rt_range {
    int64_t start, end;        /* end TG_NULL_I64 for marks */
    const char *name;
    const char *domain;        /* NULL: the default domain */
    int32_t pid, tid;
    int32_t event_type;        /* 59 push/pop, 60 start/end, 34 mark */
} tg_rt_range;

typedef struct tg_rt_gpu {
    int32_t id;
    const char *name;
    int32_t sm_count;
    int64_t memory;
    int32_t cc_major, cc_minor;
} tg_rt_gpu;

typedef struct tg_rt_overhead {
    int64_t start, end;
    const char *name;
    int32_t pid, tid;
} tg_rt_overhead;

/* Rows of each category in the order written (`repeat` expanded in place);
** that order is the rowid order of the generated tables. Calls made by
** `launch:` follow the `api` entries, in the order of their operations. */
struct tg_rt_events {
    bool listed[TG_RT_CAT_COUNT];   /* the key was given (an empty list too) */
    tg_rt_op *ops[3];               /* kernels, memcpys, memsets */
    size_t n_ops[3], cap_ops[3];
    tg_rt_call *calls;
    size_t n_calls, cap_calls;
    tg_rt_range *ranges;
    size_t n_ranges, cap_ranges;
    tg_rt_gpu *gpus;
    size_t n_gpus, cap_gpus;
    tg_rt_overhead *overheads;
    size_t n_overheads, cap_overheads;
    tg_rt_osrt *osrts;
    size_t n_osrts, cap_osrts;
    tg_rt_libcall *libcalls[2];     /* cudnn, cublas */
    size_t n_libcalls[2], cap_libcalls[2];
    tg_rt_thread *threads;
    size_t n_threads, cap_threads;
    tg_rt_stack *stacks;            /* of calls (CUDA) and OS runtime calls */
    size_t n_stacks, cap_stacks;
    size_t n_rows;                  /* all rows so far, against TG_RT_MAX_ROWS */
};

/* State of reading one test file. */
typedef struct tg_rt_reader {
    tg_rules_ctx ctx;               /* arena = the file's arena */
    const char *dir;                /* folder of the file, for relative paths */
    bool failed;
} tg_rt_reader;

/* ruletest_load.c: helpers the readers share. */
void tg_rt_error(tg_rt_reader *rd, tg_pos pos, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Keys of a mapping are scalars, unique and among `allowed` (did-you-mean
** on a typo). False after reporting. */
bool tg_rt_check_keys(tg_rt_reader *rd, const tg_ynode *map, const char *const *allowed,
                      size_t n_allowed, const char *where);
/* A node of the expected kind, else an error naming `what`. */
bool tg_rt_expect_kind(tg_rt_reader *rd, const tg_ynode *n, tg_ynode_kind kind, const char *what);
/* A literal of the rule language (1ms, 16MiB, 20%, 42): its value. An error
** unless it is a number of unit `unit` (or plain when allow_plain). */
bool tg_rt_number(tg_rt_reader *rd, const tg_ynode *n, tg_unit unit, bool allow_plain,
                  const char *what, tg_value *out);
/* A whole number (with unit when `unit` is not NONE) within [lo, hi]. */
bool tg_rt_int(tg_rt_reader *rd, const tg_ynode *n, tg_unit unit, int64_t lo, int64_t hi,
               const char *what, int64_t *out);
/* A non-empty string scalar (arena copy). */
bool tg_rt_string(tg_rt_reader *rd, const tg_ynode *n, const char *what, const char **out);

/* The texts of a loaded file (ruletest_load.c), so that errors found while
** running show the offending line too. */
tg_rules_ctx *tg_rt_file_ctx(const tg_ruletest_file *f);

/* ruletest_events.c */
tg_rt_events *tg_rt_events_read(tg_rt_reader *rd, const tg_ynode *events);
void tg_rt_events_free(tg_rt_events *ev);

#endif
