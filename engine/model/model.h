/*
** The model: derives the rule sources (docs/rules.md, "Sources and fields")
** from a loaded trace.
** It fills the DERIVED fields of the trace's row structs (launching call,
** queue time, iteration, steady state, ...) and builds the sources that
** have no table of their own: iteration, gap, device and trace.
**
** Rule code never sees these structs directly: it reaches rows through
** tg_source_view and the field table of fields.def (see source.h).
*/
#ifndef TG_MODEL_H
#define TG_MODEL_H

#include "../trace/trace.h"

typedef struct tg_iteration {
    int64_t rowid;             /* NVTX_EVENTS rowid of the range */
    int32_t index;             /* within its process, 0-based */
    int32_t name;
    int32_t marker;            /* the name with digit runs as N (string id) */
    int32_t pid, tid;
    int64_t start, end, duration;  /* end: the capture's end when the range never closed */
    int8_t warmup;
    int8_t partial;            /* cut by the capture (docs/iterations.md) */
    int8_t steady;             /* neither warmup nor partial */
    int64_t period;            /* null for the first of a process */
    int64_t gpu_end;           /* end of the last GPU op launched inside; null if none */
    int64_t gpu_time, gpu_span;
    int32_t kernels;
    int32_t blocking_calls;
    /* launch overhead (docs/host.md): calls that launched kernels in it */
    int32_t launches;          /* such calls */
    int32_t short_kernels;     /* kernels that ran shorter than the call that launched them */
    int64_t launch_time;       /* sum of those calls' durations */
    int32_t launches_lost;     /* launch calls in it without a GPU record (coverage) */
    int64_t kernel_time;       /* sum of the durations of the kernels they launched */
    /* of those calls, the ones that launched several kernels (a CUDA graph
    ** launch), and their kernels (docs/rules.md, "CUDA graphs") */
    int32_t graph_launches;
    int32_t graph_kernels;
} tg_iteration;

typedef struct tg_gap {
    int64_t rowid;             /* rowid of the op before the gap ... */
    int32_t table;             /* ... in this tg_table_id */
    int64_t prev_start;        /* ... and its start (its end is the gap's start) */
    int64_t next_rowid;        /* the op after the gap */
    int32_t next_table;
    int64_t start, end, duration;
    int32_t device, pid;
    int8_t in_steady_state;
} tg_gap;

typedef struct tg_device {
    int64_t rowid;             /* -1: no table row */
    int32_t device;
    int32_t name;
    int64_t start, end, span;
    double busy_frac, busy_frac_steady;
    int32_t kernels;
    int64_t kernel_time, nccl_time, exposed_nccl_time;
    double nccl_overlap;       /* NaN without NCCL kernels */
    int64_t queue_p50;
    int32_t queue_kernels;     /* kernels with a launching call: the median's count */
    int32_t queue_clamped;     /* of those, started before the call returned (queue 0) */
    int32_t gaps;
    int64_t busy_time_steady;  /* union of op time inside the steady window */
    int64_t copy_time_steady;  /* union of copy time inside the steady window */
    double copy_frac_steady;   /* copy_time_steady / busy_time_steady; NaN when idle */
} tg_device;

typedef struct tg_trace_facts {
    int64_t rowid;             /* -1 */
    int64_t duration;
    int32_t schema_version, nsys_version;
    int64_t kernels, memcpys, memsets, api_calls, nvtx_ranges;
    int64_t devices, iterations, steady_iterations, steady_duration;
    int64_t blocking_calls, blocked_time;
} tg_trace_facts;

/* ------------------------------------------------- iteration markers */

/* What a range matching the iteration pattern became (docs/iterations.md).
** X(id, name, doc): one list for the enum, the names and the docs. */
#define TG_MARKER_ROLES(X) \
    X(ITERATIONS, "iterations", "the outermost matching ranges of the chosen thread") \
    X(NESTED, "nested", "inside another matching range of the chosen thread: not iterations") \
    X(OTHER_THREAD, "other thread", "on another thread of the process: not iterations")

enum {
#define X(id, name, doc) TG_MARKER_##id,
    TG_MARKER_ROLES(X)
#undef X
    TG_MARKER_ROLE_COUNT
};

const char *tg_marker_role_name(int role);

/* Matching ranges of one process counted by thread, marker and role. */
typedef struct tg_marker_count {
    int32_t pid, tid;
    int32_t marker;            /* tg_iter_marker_name */
    int8_t role;               /* TG_MARKER_* */
    int64_t ranges;
} tg_marker_count;

/* The iterations of one process. */
typedef struct tg_iter_series {
    int32_t pid, tid;          /* tid: the thread whose ranges are the iterations */
    bool main_thread;          /* tid == pid */
    int64_t iterations, partial;
    size_t first_count, n_counts;  /* its entries of counts[]: iterations first,
                                      then nested, then other threads */
} tg_iter_series;

/* One chosen range. */
typedef struct tg_iter_pick {
    uint32_t nvtx;             /* index into trace->nvtx */
    int32_t marker;
    int64_t start, end;        /* end: the capture's end when the range never closed */
    bool open;                 /* never closed */
    int8_t partial;
} tg_iter_pick;

typedef struct tg_iter_selection {
    char *pattern;                               /* the iteration pattern used */
    tg_strpool *names;                           /* marker names */
    tg_marker_count *counts; size_t n_counts;    /* grouped by process, as series */
    tg_iter_series *series;  size_t n_series;    /* sorted by pid */
    tg_iter_pick *picks;     size_t n_picks;     /* by pid, then start */
} tg_iter_selection;

/* Choose the iterations of every process of a loaded trace (the model does
** this; `info` calls it alone). pattern NULL: the default. NULL with one
** error in diag on a bad pattern (TG_EUSAGE) or out of memory. */
tg_iter_selection *tg_model_select_iterations(const tg_trace *t, const char *pattern, tg_diag *diag);
void tg_iter_selection_free(tg_iter_selection *sel);
const char *tg_iter_marker_name(const tg_iter_selection *sel, int32_t marker);
/* The distinct markers of the iterations, sorted, joined by ", " ("" when
** none; after TG_MARKERS_LISTED of them, " and N more"); malloc'd, NULL
** when out of memory. */
#define TG_MARKERS_LISTED 8
char *tg_iter_selection_markers(const tg_iter_selection *sel);

/* Is name's marker (digit runs as N) one of the markers the pattern
** matched? False for names the pattern never saw. */
bool tg_iter_selection_has_marker(const tg_iter_selection *sel, const char *name);

/* --------------------------------------------------------- work by name */

typedef struct tg_model tg_model;

/* GPU work of one name (a kernel name, "[memcpy HtoD]", "[memset]"), or
** NVTX ranges of one name (TG_WORK_NVTX). */
#define TG_WORK_TOP 5
typedef struct tg_work_name {
    const char *name;          /* points into the trace's pool or static text */
    tg_work_kind kind;
    int64_t count, time;       /* whole trace */
    int64_t steady_count, steady_time;  /* launched (opened) in steady iterations */
    int64_t p50;               /* median duration; null unless asked for */
    /* the longest ones launched (opened) in steady iterations, longest
    ** first: what a regression finding's contributor cites (rowids of its
    ** table: kernel, memcpy, memset or NVTX; traceEvents indices) */
    int64_t top_rowid[TG_WORK_TOP], top_duration[TG_WORK_TOP];
    int n_top;
} tg_work_name;

typedef struct tg_work_summary {
    tg_work_name *names;  size_t n_names;   /* by steady_time, then time, descending */
    tg_work_name *ranges; size_t n_ranges;  /* NVTX ranges in steady iterations, not
                                               iteration markers; none without iterations */
    int64_t steady_iterations;
    int64_t time, steady_time;              /* sums over names */
} tg_work_summary;

/* The family of kernel name id (string id): its short name, the function
** name without return type, namespaces, template arguments and parameters
** (model_family.h); id itself when unknown. */
int32_t tg_model_kernel_family(const tg_model *m, int32_t id);

/* GPU work by name over a built model (model_work.c); with_medians also
** sorts every op's duration for p50. False when out of memory. */
bool tg_model_work_summary(const tg_model *m, bool with_medians, tg_work_summary *out);
void tg_work_summary_free(tg_work_summary *s);

/* ------------------------------------------------------------- host side */

/* What the host did (docs/host.md), by source of the activity. X(id, name,
** what). ORDER: tg_host_source. */
#define TG_HOST_SOURCE_LIST(X) \
    X(OSRT, "osrt", "OS runtime call") \
    X(CUDA, "cuda", "CUDA API call of 100 us or more") \
    X(NVTX, "nvtx", "NVTX range")

typedef enum tg_host_source {
#define X(id, name, what) TG_HSRC_##id,
    TG_HOST_SOURCE_LIST(X)
#undef X
    TG_HSRC_COUNT
} tg_host_source;

extern const char *const tg_host_source_names[TG_HSRC_COUNT];

/* CUDA calls the launch pass keeps for host attribution: this long or more
** (a launch or a query takes microseconds; a call that holds the host
** does not). */
#define TG_HOST_CUDA_MIN_NS 100000

/* The rowids an entry cites, longest overlap first. */
#define TG_HOST_ROWIDS 5

/* One thing the host did during a window: the rows of one source, name
** and thread, with the time they overlap the window. */
typedef struct tg_host_entry {
    tg_host_source source;
    int32_t name;              /* string id: call or range name */
    int32_t pid, tid;
    int32_t thread;            /* thread name, -1 */
    bool launch_thread;        /* a thread that made CUDA calls (one that feeds the GPU) */
    int64_t rows;              /* calls or ranges */
    int64_t time;              /* ns of their spans inside the window, summed */
    int64_t rowids[TG_HOST_ROWIDS];
    int64_t overlaps[TG_HOST_ROWIDS];  /* each cited row's ns inside the window */
    size_t n_rowids;
    int32_t callchain;         /* stack of the first cited row (as recorded), -1 */
} tg_host_entry;

typedef struct tg_host_window {
    int32_t pid;
    int64_t start, end;
    tg_host_entry *entries;    /* malloc'd; launch threads first, then by time */
    size_t n_entries;
    int64_t launch_busy;       /* union of the launch threads' OS runtime and CUDA call
                                  time in the window (what is accounted for) */
    int64_t launch_threads;    /* threads of pid that made CUDA calls */
} tg_host_window;

/* A kernel name whose kernels ran shorter than the calls that launched
** them, in steady state. */
typedef struct tg_short_kernel {
    int32_t name;              /* string id: the kernel's (demangled) name */
    int64_t count;             /* such kernels */
    int64_t kernel_time;       /* their durations, summed */
    int64_t launch_time;       /* the durations of the calls that launched them, summed */
} tg_short_kernel;

/* ------------------------------------------------------------- coverage */

/* What the capture's CUDA activity covers (docs/formats.md, "coverage";
** issue 32): per activity its first and last record and how many, the
** launch calls whose correlation id has no GPU record, and whether CUDA
** activity stops early. X(id, name, what). ORDER: tg_cov_activity. */
#define TG_COV_ACTIVITY_LIST(X) \
    X(KERNEL, "kernels", "kernels") \
    X(MEMCPY, "memcpy", "copies") \
    X(MEMSET, "memset", "memsets") \
    X(API, "cuda_api", "CUDA API calls") \
    X(NVTX, "nvtx", "NVTX ranges") \
    X(OSRT, "osrt", "OS runtime calls")

typedef enum tg_cov_activity {
#define X(id, name, what) TG_COV_##id,
    TG_COV_ACTIVITY_LIST(X)
#undef X
    TG_COV_COUNT
} tg_cov_activity;

extern const char *const tg_cov_activity_names[TG_COV_COUNT];
extern const char *const tg_cov_activity_what[TG_COV_COUNT];

typedef struct tg_cov_window {
    int64_t first, last;       /* earliest start, latest end (or start); null when none */
    int64_t records;
    /* kernels, memcpy, memset: the calls of TG_OP_CALL_PREFIXES with a
    ** correlation id that launch this kind, and those of them whose id
    ** has no GPU record of the process (0 for the others) */
    int64_t launch_calls, launches_without_gpu;
    int64_t op_calls;          /* kernels, memcpy, memset: every call that launches this
                                  kind (tg_model.op_calls), its table recorded or not */
    int64_t launches_after_capture;   /* past the process's last op while its GPU
                                         worked to the capture's end: run after it,
                                         not lost (engine/model/model_join.c) */
} tg_cov_window;

/* The profiler's own warnings and errors a coverage carries (copies of
** tg_trace.capture.notes: a result outlives its trace), the first
** TG_COV_NOTES, each cut at TG_COV_NOTE_TEXT bytes. */
#define TG_COV_NOTES 8
#define TG_COV_NOTE_TEXT 200
typedef struct tg_cov_note {
    int32_t severity;          /* 2 warning, 3 error (ENUM_DIAGNOSTIC_SEVERITY_LEVEL) */
    int64_t count, first_ns;
    char text[TG_COV_NOTE_TEXT];
} tg_cov_note;

/* The nsys releases and the CUDA toolkit each shipped with, oldest first
** (docs/formats.md, "coverage"): a capture whose driver supports a newer
** CUDA than its profiler's is recorded by a profiler older than the
** driver, whose CUPTI may stop recording. A release between two rows takes
** the earlier row; one past the last row is not judged.
** X(release "YYYY.N", cuda 1000 * major + 10 * minor). */
#define TG_NSYS_CUDA_LIST(X) \
    X("2022.1", 11060) X("2022.2", 11070) X("2022.4", 12000) X("2023.1", 12010) \
    X("2023.2", 12020) X("2023.3", 12030) X("2023.4", 12040) X("2024.2", 12050) \
    X("2024.4", 12060) X("2025.1", 12080) X("2025.2", 12090) X("2025.3", 13000)

/* The newest CUDA nsys release `version` ("2022.4.2.1") supports, from
** TG_NSYS_CUDA_LIST; TG_NULL_I64 when it is not in the list's range or
** does not parse. */
int64_t tg_nsys_cuda(const char *version);

/* Launches without a GPU record beyond this share make a capture damaged
** for the rules that read GPU ops or launch calls (docs/rules.md, "Lost
** data"; the param coverage_tolerance overrides it). */
#define TG_COV_TOLERANCE 0.01
/* CUDA activity stops early when its last record comes before a tenth of
** the NVTX ranges' span, with this long or more of ranges after it (1 s). */
#define TG_COV_STOP_AFTER_NS 1000000000

typedef struct tg_coverage {
    bool set;                  /* computed (false: a result read back, a trace
                                  that reads no CUDA activity) */
    tg_cov_window act[TG_COV_COUNT];
    int64_t launch_calls, launches_without_gpu;   /* over kernels, memcpy, memset */
    int64_t launches_after_capture;
    double launch_fraction;    /* launches_without_gpu / launch_calls; NaN without */
    int64_t unmatched_first, unmatched_last;      /* starts of the first and last of those; null */
    /* CUDA activity that stops early (TG_COV_STOP_AFTER_NS): the activity (TG_COV_API, or TG_COV_KERNEL for the GPU ops),
    ** when it stopped, and the share of the run after it; stopped_at null
    ** when it does not stop early */
    int stopped;
    int64_t stopped_at;
    int went_on;               /* the activity that goes on after it: TG_COV_NVTX or TG_COV_OSRT */
    int64_t run_first, run_last;  /* earliest and latest record of any activity above */
    double uncovered;          /* (run_last - stopped_at) / (run_last - run_first) */
    /* the iterations (tg_model.iterations) the lost data cuts: those that
    ** end after CUDA activity stopped, else those holding a launch without
    ** a GPU record; the starts of the earliest and latest, how many, of how
    ** many (null starts when none) */
    int64_t cut_first, cut_last, cut_count, iterations;
    /* What the profiler said of itself (tg_trace.capture, docs/formats.md):
    ** versions (null or "" when not recorded) and its capture's window */
    bool by_kineto;            /* recorded by torch.profiler: a Kineto trace, or an export
                                  converted from one (product "kineto2nsys") */
    char profiler_version[32]; /* nsys_version: "2022.4.2.1" */
    int64_t profiler_cuda;     /* tg_nsys_cuda of it */
    int64_t cuda_driver, cuda_runtime, cupti;
    char nv_driver[32];
    int64_t capture_start, capture_stop;
    tg_cov_note notes[TG_COV_NOTES];
    size_t n_notes, notes_total;   /* kept, and distinct texts the export held */
} tg_coverage;

/* What a damaged capture lost and why, as check's errors and `info` both
** say it
** (docs/rules.md, "Lost data"): CUDA activity that stops early, else
** kernel and copy launch calls without a GPU record beyond
** TG_COV_TOLERANCE, over the kinds with records (memsets are counted but
** do not damage it: CUPTI and Kineto leave out memsets that did no work;
** an op table emptied whole is the evaluator's missing data), beyond
** `tolerance` (a share; negative or NaN: TG_COV_TOLERANCE; the param
** coverage_tolerance). Into buf: what stopped or is missing, when, how
** much of the run and which iterations are left unjudged ("the capture's
** GPU activity ... is left unjudged; ..."), then why and what records it
** whole: a profiler older than the driver (an nsys release of
** TG_NSYS_CUDA_LIST vs CudaDriverVersion, or Kineto's CUPTI vs
** cuda_driver_version), the profiler's own warning, dropped buffers and
** the option that keeps them. False, buf "", when the capture lost
** nothing so. */
bool tg_coverage_lost(const tg_coverage *c, double tolerance, char *buf, size_t size);


/* What an op table (TG_TABLE_KERNEL, _MEMCPY, _MEMSET) without rows means,
** `calls` being the calls that launch its ops (tg_model.op_calls), or the
** API table (TG_TABLE_RUNTIME) without rows, `calls` the GPU ops: one
** clause into buf, the same for check's missing data (eval_missing.c) and
** info's "missing" lines. CUDA was traced when the capture has a CUDA
** table or such calls: with calls the ops were recorded and lost, without
** the program launched none; never "record them with -t cuda". False, buf
** "", when CUDA was not traced (the caller says how to record it). */
bool tg_coverage_ops_absent(const tg_trace *t, int table, int64_t calls, char *buf, size_t size);

/* ------------------------------------------------------------- model */

typedef struct tg_model_params {
    const char *iteration_pattern;  /* POSIX ERE; NULL = TG_DEFAULT_ITERATION_PATTERN
                                       (docs/iterations.md) */
    int64_t gap_min_ns;             /* gaps counted in device.gaps; default 500 ms */
    int64_t gap_rows_min_ns;        /* gap rows materialised: the ones at least this
                                       long (<= 0: all); a predicate pushed down from
                                       the rules. device.gaps counts all the same */
    /* A trace opened with a deferred API table (tg_load_opts.defer_api) is
    ** streamed: keep_api says which calls to keep as rows of the `api`
    ** source, seeing each with its DERIVED fields set. Every call is
    ** joined, attributed and counted whether kept or not. NULL keeps all:
    ** the table is then simply loaded. */
    bool (*keep_api)(void *ctx, const tg_model *m, const tg_api *row);
    void *keep_ctx;
    bool skip_nvtx_gpu;             /* no rule reads nvtx.gpu_time/gpu_span/depth or
                                       kernel.nvtx: leave them unset */
} tg_model_params;

/* Warmup: with at least TG_WARMUP_MIN_ITERATIONS iterations in a process
** ("more than 10"), its first TG_WARMUP_COUNT (docs/iterations.md). */
#define TG_WARMUP_COUNT 5
#define TG_WARMUP_MIN_ITERATIONS 11
/* device.gaps counts idle gaps at least this long (500 ms). */
#define TG_GAP_MIN_NS 500000000

/* The base name of an API name: the length of name (len bytes) without its
** version suffixes _ptsz, _ptds and _v<digits>, stripped from the end as
** long as they stack (cuMemcpyHtoDAsync_v2_ptsz, cudaMemcpy_ptsz_v7000)
** and something is left before them (_v2_v3 is _v2). The one C form of the
** rule; tg_sql_put_base_name (model_sql.h) and tg_jq_put_base_name
** (model_jq.h) write the same rule in SQL and jq, and
** tests/unit/model/test_naming.c runs the three on the same names. Every
** API name a user reads (evidence, groups, causes) is this base name; the
** raw name is api.raw_name. */
size_t tg_model_base_name_len(const char *name, size_t len);

/* The synchronize calls that block the host (api.blocking), by base name. */
#define TG_BLOCKING_CALLS(X) \
    X("cudaDeviceSynchronize") X("cudaStreamSynchronize") X("cudaEventSynchronize") \
    X("cuCtxSynchronize") X("cuStreamSynchronize") X("cuEventSynchronize")
/* The calls that launch GPU work, by base-name prefix, with the table
** their ops go to. Copy and memset calls without "Async" in the name block
** (memcpy.api_sync, memset.api_sync). The launch pass counts the calls of
** each table (tg_model.op_calls), so that an op table emptied beside its
** calls reads as missing data, not as a program that made no such op
** (engine/eval/eval.c, docs/rules.md "Missing data"). Host-function
** launches (cudaLaunchHostFunc) run no GPU op and graph launches run any
** kind, so neither is listed. */
#define TG_OP_CALL_PREFIXES(X) \
    X(KERNEL, "cudaLaunchKernel") X(KERNEL, "cudaLaunchCooperativeKernel") \
    X(KERNEL, "cuLaunchKernel") X(KERNEL, "cuLaunchCooperativeKernel") X(KERNEL, "cuLaunchGrid") \
    X(MEMCPY, "cudaMemcpy") X(MEMCPY, "cuMemcpy") X(MEMSET, "cudaMemset") X(MEMSET, "cuMemset")
/* PROFILER_OVERHEAD rows that count as GPU busy time (NVIDIA's gpu_gaps rule). */
#define TG_BUSY_OVERHEADS(X) \
    X("CUDA profiling overhead") X("CUDA profiling data flush overhead") X("CUDA profiling stop overhead")

/* Step markers of common layouts, with or without a step counter:
** `iteration`, `iter_0012`, `step 12`, `train_step`, `ProfilerStep#3`. */
#define TG_DEFAULT_ITERATION_PATTERN \
    "^(iteration|iter|train_step|step|ProfilerStep)([ _#-]?[0-9]+)?$"

struct tg_model {
    tg_trace *trace;                /* not owned */
    tg_iteration *iterations; size_t n_iterations;  /* sorted by pid, start */
    tg_iter_selection *selection;   /* how they were chosen */
    tg_gap *gaps;             size_t n_gaps;        /* sorted by device, start */
    tg_device *devices;       size_t n_devices;     /* sorted by device id */
    tg_trace_facts facts;
    int64_t steady_start, steady_end;  /* steady window; whole trace without iterations */
    bool has_iterations;
    /* Calls of the API table that launch ops of table t (TG_OP_CALL_PREFIXES:
    ** TG_TABLE_KERNEL, _MEMCPY, _MEMSET; 0 for the others), twins counted once. */
    int64_t op_calls[TG_TABLE_COUNT];
    tg_coverage coverage;           /* what the CUDA activity covers (above) */
};

/* Check an iteration pattern as tg_model_build would (POSIX ERE within the
** limits of tg_regex_refuse); false with one TG_EUSAGE error in diag. The
** CLI calls it while parsing options, before any trace is read. */
bool tg_model_pattern_ok(const char *pattern, tg_diag *diag);

/* Derive everything. Returns NULL with a diag on failure (bad pattern, OOM). */
tg_model *tg_model_build(tg_trace *trace, const tg_model_params *params, tg_diag *diag);

/* The share of each of n_bins equal slices of [from, to) that each device
** was busy (the union of its kernels, copies and memsets), into busy:
** m->n_devices rows of n_bins, in m->devices' order (model_timeline.c).
** False when out of memory or the span is empty. */
bool tg_model_busy_bins(const tg_model *m, int64_t from, int64_t to, size_t n_bins, double *busy);

/* The host side (model_host.c, docs/host.md). */
/* Read the host-side tables of `what` (TG_HOST_*) now if the load did not
** (tg_trace_load_host) and derive their rows: thread names, iterations,
** call sites. False with a diag when the export cannot be read again;
** the model stays usable. */
bool tg_model_host_load(tg_model *m, unsigned what, tg_diag *diag);
/* The call site of a stack as a row records it (TG_STACKS_*): the first
** frame outside CUDA and system libraries (engine/model/modules.def):
** its symbol, or with `module` the file name of its module; -1 when the
** stack is not loaded, unknown, or has no such frame. */
int32_t tg_model_call_site(const tg_model *m, int stacks, int32_t chain, bool module);
/* The frames of a recorded stack, innermost first (n 0: none). */
const tg_frame *tg_model_stack(const tg_model *m, int stacks, int32_t chain, size_t *n);
/* What the export's stack ids are off by: a row's chain c is CUDA_CALLCHAINS
** id c + offset (1 in nsys 2022.2 exports, else 0). */
int32_t tg_model_stack_offset(const tg_model *m, int stacks);
/* What the threads of process pid did in [start, end): OS runtime calls,
** CUDA calls of TG_HOST_CUDA_MIN_NS or more, NVTX ranges. False on OOM. */
bool tg_model_host_window(const tg_model *m, int32_t pid, int64_t start, int64_t end, tg_host_window *out);
void tg_host_window_free(tg_host_window *w);
/* The process of a device's first operation, -1 when it has none. */
int32_t tg_model_device_pid(const tg_model *m, int32_t device);
/* Did thread (pid, tid) make CUDA calls? How many threads of pid did? */
bool tg_model_launch_thread(const tg_model *m, int32_t pid, int32_t tid);
size_t tg_model_launch_threads(const tg_model *m, int32_t pid);
/* Kernel names that ran shorter than their launches in steady state, by
** count, descending. */
const tg_short_kernel *tg_model_short_kernels(const tg_model *m, size_t *n);

/* Kernel i (< trace->n_kernels) as the model read it (queue, nccl set),
** whether the trace holds tg_kernel rows or only tg_kspan ones. */
const tg_kspan *tg_model_kernel(const tg_model *m, size_t i);
void tg_model_free(tg_model *m);

#endif
