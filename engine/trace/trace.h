/*
** The trace layer: opens an nsys SQLite export strictly read-only, detects
** its schema, resolves the tables and columns that drift between nsys
** versions (docs/architecture.md, "The nsys export") and loads the activity
** into plain arrays of rows.
**
** Every row struct below carries its SQLite rowid (evidence cites it) and,
** after the raw columns, a block of DERIVED fields. The trace layer leaves
** those at their null values; engine/model fills them (queue time, launching
** call, iteration, ...). Rule sources (engine/model/fields.def) point
** straight into these structs, so a kernel is stored once.
**
** Conventions: times in ns (int64, TG_NULL_I64 = null); strings are ids in
** trace->strings (TG_NO_STR = null); flags are int8_t (0/1, -1 = null);
** pid/tid are the decoded process and thread ids (docs/architecture.md).
**
** Rows are kept small: 64-bit members first, then 32-bit, then flags, so
** there is no padding, and durations (end - start) are computed on read
** (TG_COMPUTED in fields.def). A run loads only what its rules read
** (tg_load_opts): ten million kernels are 1.4 GB as tg_kernel rows and
** 0.56 GB as tg_kspan ones, which is all the model needs when no rule reads
** the `kernel` source; and the API table, the biggest (1.5 calls per
** kernel), can stream through the model's launch join (tg_trace_stream_apis)
** instead of being held: only the calls some rule can count stay as rows.
*/
#ifndef TG_TRACE_H
#define TG_TRACE_H

#include <stddef.h>

#include "../common/common.h"

/* The activity tables the engine reads; used for "missing data" reports.
** Columns: id, export table, what it holds, the nsys option that records
** it, the Kineto events that fill it (a Kineto trace's table_name) and the
** torch.profiler setting that records those (docs/kineto.md). The
** settings are commands alone, quoted as they are in messages: whatever
** needs saying about them is said beside the quote. */
#define TG_TABLE_LIST(X) \
    X(KERNEL,   "CUPTI_ACTIVITY_KIND_KERNEL",   "CUDA kernels",         "nsys profile -t cuda", \
      "kernel events", "torch.profiler.profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA])") \
    X(MEMCPY,   "CUPTI_ACTIVITY_KIND_MEMCPY",   "CUDA memory copies",   "nsys profile -t cuda", \
      "gpu_memcpy events", "torch.profiler.profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA])") \
    X(MEMSET,   "CUPTI_ACTIVITY_KIND_MEMSET",   "CUDA memsets",         "nsys profile -t cuda", \
      "gpu_memset events", "torch.profiler.profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA])") \
    X(RUNTIME,  "CUPTI_ACTIVITY_KIND_RUNTIME",  "CUDA API calls",       "nsys profile -t cuda", \
      "cuda_runtime/cuda_driver events", "torch.profiler.profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA])") \
    X(SYNC,     "CUPTI_ACTIVITY_KIND_SYNCHRONIZATION", "CUDA synchronization events", "nsys profile -t cuda", \
      "cuda_sync events", "torch.profiler.profile(activities=[ProfilerActivity.CUDA], experimental_config=torch._C._profiler._ExperimentalConfig(enable_cuda_sync_events=True))") \
    X(NVTX,     "NVTX_EVENTS",                  "NVTX ranges",          "nsys profile -t nvtx", \
      "user_annotation and ProfilerStep#N ranges", "torch.profiler.profile(activities=[ProfilerActivity.CPU, ...], schedule=...) with prof.step() each step, or torch.profiler.record_function(\"train_step\")") \
    X(GPU,      "TARGET_INFO_GPU",              "GPU descriptions",     "nsys profile -t cuda", \
      "deviceProperties", "torch.profiler.profile(activities=[ProfilerActivity.CUDA])") \
    X(OVERHEAD, "PROFILER_OVERHEAD",            "profiler overhead",    "nsys profile -t cuda", \
      "overhead events", "torch.profiler.profile(activities=[ProfilerActivity.CUDA])") \
    X(OSRT,     "OSRT_API",                     "OS runtime calls",     "nsys profile -t osrt", \
      "OS runtime calls, which the PyTorch profiler does not record", \
      "nsys profile -t cuda,nvtx,osrt python SCRIPT") \
    X(CALLCHAINS, "CUDA_CALLCHAINS",            "CUDA call stacks",     "nsys profile --cudabacktrace=all -s cpu", \
      "CUDA call stacks, which tracegate does not read from a PyTorch profiler trace (with_stack=True records Python frames)", \
      "nsys profile --cudabacktrace=all -s cpu python SCRIPT") \
    X(OSRT_CALLCHAINS, "OSRT_CALLCHAINS",       "OS runtime call stacks", "nsys profile -t osrt --osrt-backtrace-threshold=0", \
      "OS runtime call stacks, which the PyTorch profiler does not record", \
      "nsys profile -t cuda,nvtx,osrt python SCRIPT") \
    X(CUDNN,    "CUDNN_EVENTS",                 "cuDNN API calls",      "nsys profile -t cudnn", \
      "cuDNN API calls, which the PyTorch profiler does not record", \
      "nsys profile -t cuda,cudnn python SCRIPT") \
    X(CUBLAS,   "CUBLAS_EVENTS",                "cuBLAS API calls",     "nsys profile -t cublas", \
      "cuBLAS API calls, which the PyTorch profiler does not record", \
      "nsys profile -t cuda,cublas python SCRIPT") \
    X(STRINGS,  "StringIds",                    "string table",         "nsys export --type sqlite", \
      "traceEvents", "prof.export_chrome_trace(path)")

typedef enum tg_table_id {
#define X(id, name, what, option, kineto, torch_option) TG_TABLE_##id,
    TG_TABLE_LIST(X)
#undef X
    TG_TABLE_COUNT
} tg_table_id;

extern const char *const tg_table_names[TG_TABLE_COUNT];   /* canonical names */
extern const char *const tg_table_what[TG_TABLE_COUNT];    /* "CUDA kernels" */
extern const char *const tg_table_option[TG_TABLE_COUNT];  /* how to record it */
extern const char *const tg_table_kineto[TG_TABLE_COUNT];  /* "kernel events" */
extern const char *const tg_table_torch_option[TG_TABLE_COUNT]; /* how torch.profiler records it */

/* The languages a trace's numbers are reproduced in (docs/evidence.md):
** SQL run by sqlite3 on an export, a jq program on a JSON trace.
** X(id, name: also a file's extension, what people call it). */
#define TG_QUERY_LANG_LIST(X) \
    X(SQL, "sql", "SQL") \
    X(JQ,  "jq", "jq")

typedef enum tg_query_lang {
#define X(id, name, what) TG_QUERY_##id,
    TG_QUERY_LANG_LIST(X)
#undef X
    TG_QUERY_COUNT
} tg_query_lang;

extern const char *const tg_query_lang_names[TG_QUERY_COUNT];   /* "sql" */
extern const char *const tg_query_lang_what[TG_QUERY_COUNT];    /* "SQL" */

/* The formats tracegate reads (docs/kineto.md, docs/architecture.md), and
** all that the layers above need to know of one: its name as baselines
** and reports write it; what a person calls it; the language its
** reproduce queries are written in; the one list every citation indexes
** (NULL: each row is cited in its own table); how a message names one of
** its tables ("table CUPTI_ACTIVITY_KIND_KERNEL", "Kineto kernel events");
** where its rank is recorded when the trace itself says (NULL: only the
** recorded environment, tg_trace.rank_source); how a report's header
** names it ("nsys 2024.5.1", "Kineto JSON") and whether the version of the
** tool that wrote it (tg_trace.nsys_version) follows that label; and how
** a report says where its reproduce queries run ("sqlite3 on the export").
** Everything else specific to a format stays in its reader, here in the
** trace layer. */
#define TG_TRACE_FORMAT_LIST(X) \
    X(NSYS,   "nsys-sqlite", "an nsys SQLite export", SQL, NULL, "table", NULL, \
      "nsys", true, "sqlite3 on the export") \
    X(KINETO, "kineto-json", "a PyTorch profiler (Kineto) JSON trace", JQ, "traceEvents", "Kineto", \
      "distributedInfo", "Kineto JSON", false, "jq on the trace")

typedef enum tg_trace_format {
#define X(id, name, what, lang, list, noun, rank, label, versioned, run_with) TG_FORMAT_##id,
    TG_TRACE_FORMAT_LIST(X)
#undef X
    TG_FORMAT_COUNT
} tg_trace_format;

typedef struct tg_trace_format_def {
    const char *name, *what;
    tg_query_lang query;
    const char *cite_list;
    const char *table_noun;
    const char *rank_source;
    const char *label;         /* a report's header: "nsys", "Kineto JSON" */
    bool versioned;            /* the label is followed by the writing tool's version */
    const char *reproduce_with;/* where its reproduce queries run: "sqlite3 on the export" */
} tg_trace_format_def;

extern const tg_trace_format_def tg_trace_formats[TG_FORMAT_COUNT];
extern const char *const tg_trace_format_names[TG_FORMAT_COUNT];
extern const char *const tg_trace_format_what[TG_FORMAT_COUNT];
/* The format of a name ("kineto-json"), or -1. */
int tg_trace_format_parse(const char *name);
/* The format of a name as results and baselines write it; NULL (a result
** or baseline written before the name was recorded: an export) is nsys.
** NULL for a name tracegate does not know. */
const tg_trace_format_def *tg_trace_format_of(const char *name);

/* X(suffix): how an Nsight Systems report (not its SQLite export) is
** named, as `nsys export` reads it: .qdrep before nsys 2021.4. The
** reader's message for a report given as a trace and the CLI's export of
** one (engine/cli/inputs.c) both know a report by these. */
#define TG_REPORT_SUFFIX_LIST(X) X(".nsys-rep") X(".qdrep")

/* The report suffix path ends with (".nsys-rep", ".qdrep"), or NULL. */
const char *tg_trace_report_suffix(const char *path);

/* A kernel as the model needs it: what the device sweep, the launch join
** and the queue statistics read, 56 bytes against tg_kernel's 136. Loaded
** instead of tg_kernel rows when no rule reads the `kernel` source (ten
** million kernels: 0.56 GB, not 1.4 GB); the head of every tg_kernel row
** otherwise, so the model reads either through one stride. */
#define TG_KSPAN_FIELDS                                                       \
    int64_t rowid, start, end;                                                \
    int64_t correlation;                                                      \
    int64_t queue;             /* DERIVED: start - end of the launching call, \
                                  0 when it started first; null if unmatched */ \
    int32_t pid;               /* from globalPid */                           \
    int32_t device;                                                           \
    int32_t name;              /* demangledName (falls back to shortName) */  \
    int8_t nccl;               /* DERIVED: name contains "nccl" (any case) */ \
    int8_t launched;           /* DERIVED: joined to its launching call */    \
    int8_t steady;             /* DERIVED: launched in steady state */      \
    int8_t queue_clamped;      /* DERIVED: started before its launching call \
                                  returned (queue 0) */

typedef struct tg_kspan {
    TG_KSPAN_FIELDS
} tg_kspan;

typedef struct tg_kernel {
    union {
        tg_kspan span;         /* the same members, as one tg_kspan */
        struct { TG_KSPAN_FIELDS };
    };
    int64_t launch_end;        /* DERIVED: end of the launching call, null if unmatched */
    int32_t context, stream;
    int32_t short_name;
    int32_t grid_x, grid_y, grid_z, block_x, block_y, block_z;
    int32_t registers, static_smem, dynamic_smem;
    /* DERIVED (engine/model) */
    int32_t api;               /* index into trace->apis of launching call; -1 when
                                  unmatched or when the API table was streamed */
    int32_t api_name;          /* launching call name, version suffix stripped */
    int32_t tid;               /* launching thread, -1 if unmatched */
    int32_t nvtx;              /* innermost NVTX range name at launch, -1 */
    int32_t iteration;         /* iteration index, -1 = null */
    int32_t callchain;         /* the launching call's callchainId, -1 none */
} tg_kernel;

_Static_assert(sizeof(tg_kspan) == 56, "tg_kspan is 56 bytes");
_Static_assert(offsetof(tg_kernel, launched) == offsetof(tg_kspan, launched), "tg_kernel starts with a tg_kspan");

/* Memcpy and memset share one row type: `kind` is the copy kind for copies
** (ENUM_CUDA_MEMCPY_OPER code) and -1 for memsets. */
typedef struct tg_memop {
    int64_t rowid, start, end;
    int64_t correlation;
    int64_t bytes;
    int64_t value;             /* memset value */
    int32_t pid;
    int32_t device, context, stream;
    int32_t copy_kind;         /* memcpy: ENUM_CUDA_MEMCPY_OPER id; memset: -1 */
    int32_t src_kind, dst_kind;/* ENUM_CUDA_MEM_KIND ids; memset: mem_kind in src_kind */
    int32_t src_device, dst_device;
    /* DERIVED (engine/model) */
    int32_t kind_name;         /* "HtoD", "DtoH", ... (memset: -1) */
    int32_t src_kind_name, dst_kind_name; /* "pageable", "pinned", ... */
    int32_t api;               /* index into trace->apis, -1 (as tg_kernel.api) */
    int32_t api_name;          /* version suffix stripped */
    int32_t tid;
    int32_t iteration;
    int32_t callchain;         /* the launching call's callchainId, -1 none */
    int8_t api_sync;           /* blocking copy/memset call (runtime or driver) */
    int8_t api_async;          /* launching call name contains "Async" */
    int8_t steady;
    int8_t launched;           /* joined to its launching call */
} tg_memop;

typedef struct tg_api {
    int64_t rowid, start, end;
    int64_t correlation;
    int32_t pid, tid;
    int32_t name;              /* raw name, e.g. cuMemcpyHtoD_v2 */
    int32_t return_value;
    int32_t callchain;         /* callchainId as recorded (CUDA_CALLCHAINS, --cudabacktrace), -1 none */
    /* DERIVED (engine/model) */
    int32_t base_name;         /* version suffix stripped: cuMemcpyHtoD */
    int32_t iteration;
    int32_t dup_of;            /* old exports record calls twice (same pid and
                                  correlation id): index of the first, else -1 */
    int8_t driver;             /* cu* (driver API) rather than cuda* */
    int8_t blocking;           /* synchronize family */
    int8_t steady;
    int8_t startup;            /* started before its process's first kernel
                                  (tg_model_launch_calls; docs/rules.md) */
} tg_api;

/* ENUM_NSYS_EVENT_TYPE ids of NVTX definition rows: NvtxCategory (33),
** NvtxThread (39), NvtxtCategory (64), NvtxtMeta* (72-74),
** NvtxDomainCreate/Destroy (75, 76), NvtxNameCuda{Device,Context,Stream}
** (97-99). They describe other rows; the loader (and the model's SQL) skip
** them. */
#define TG_NVTX_DEFINITION_TYPES(X) X(33) X(39) X(64) X(72) X(73) X(74) X(75) X(76) X(97) X(98) X(99)

/* Domain, category and thread-naming definition rows of NVTX_EVENTS are
** not loaded (trace_nvtx.c); every range and mark is. */
typedef struct tg_nvtx {
    int64_t rowid, start, end; /* end null for marks */
    int32_t event_type;        /* 59 push/pop, 60 start/end, 34 mark */
    int32_t pid, tid;
    int32_t name;              /* coalesce(StringIds via textId, text) */
    int32_t domain;            /* domain name id, -1 = default domain
                                  ("domain N" when the capture lacks its definition) */
    /* DERIVED (engine/model) */
    int64_t duration;
    int32_t depth;             /* push/pop nesting depth on its thread, 0 = outermost */
    int64_t gpu_time;          /* sum of GPU op durations launched inside it */
    int64_t gpu_span;          /* last GPU end - first GPU start of those ops */
    int32_t iteration;
} tg_nvtx;

typedef struct tg_sync {
    int64_t rowid, start, end;
    int64_t correlation;
    int32_t pid, device, context, stream;
    int32_t sync_type;
} tg_sync;

typedef struct tg_overhead {
    int64_t rowid, start, end;
    int32_t pid, tid;
    int32_t name;
} tg_overhead;

/* One OS runtime call of OSRT_API (nsys profile -t osrt): libc and
** pthread calls longer than nsys's threshold, on every thread. */
typedef struct tg_osrt {
    int64_t rowid, start, end;
    int64_t return_value;      /* null when not recorded */
    int32_t pid, tid;
    int32_t name;              /* usleep, poll, pthread_cond_wait, ... */
    int32_t callchain;         /* OSRT_CALLCHAINS id, -1 none */
    /* DERIVED (engine/model) */
    int32_t thread;            /* thread name (ThreadNames), -1 */
    int32_t iteration;
    int8_t nesting;            /* nestingLevel, -1 null */
    int8_t steady;
} tg_osrt;

/* One library call of CUDNN_EVENTS or CUBLAS_EVENTS (nsys -t cudnn,cublas). */
typedef struct tg_libcall {
    int64_t rowid, start, end;
    int64_t kernel_time;       /* DERIVED: GPU time of the kernels launched inside it */
    int32_t pid, tid;
    int32_t name;              /* cublasSgemm_v2, cudnnConvolutionForward, ... */
    /* DERIVED (engine/model) */
    int32_t kernels;           /* kernels launched by CUDA calls inside it (same thread) */
    int32_t thread, iteration;
    int8_t steady;
} tg_libcall;

/* One frame of a call stack (CUDA_CALLCHAINS, OSRT_CALLCHAINS); a stack is
** the frames of one chain id by depth, 0 = innermost. */
typedef struct tg_frame {
    int32_t chain, depth;
    int32_t symbol, module;    /* string ids; -1 unknown */
    int8_t unresolved;         /* the symbol is an address */
} tg_frame;

/* A thread's name (ThreadNames). */
typedef struct tg_thread_name {
    int32_t pid, tid;
    int32_t name;
} tg_thread_name;

/* GPUs of TARGET_INFO_GPU (else TARGET_INFO_CUDA_DEVICE), plus a bare entry
** (name -1, sm_count -1, memory null) for every device id activity rows
** use that no table describes; sorted by id. */
typedef struct tg_gpu {
    int32_t id;
    int32_t name;              /* "NVIDIA H200" */
    int32_t sm_count;
    int64_t memory;            /* bytes */
    int32_t compute_major, compute_minor;
} tg_gpu;

typedef struct tg_process {
    int32_t pid;
    int32_t name;
} tg_process;

/* The one file a run reads (trace_guard.c; docs/limits.md, "One file per
** run"): the path given, resolved through every symlink, and what fstat
** said of it at the first open. Every later open of the run (each SQLite
** connection, each direct read of a table, the reopen for host-side
** tables) opens `real` and must find the same device, inode, size and
** modification time, or the read stops. Zeroed (set false): nothing is
** checked, the path is opened as given (traces built by hand). */
typedef struct tg_file_id {
    char *real;                /* malloc'd realpath of the path given */
    uint64_t dev, ino;
    int64_t size, mtime_s, mtime_ns;
    bool set;
} tg_file_id;

/* What the profiler recorded of itself and of its capture (trace_capture.c,
** docs/formats.md "coverage"): the versions a diagnosis compares, the
** capture's window, the OS runtime calls' window, and the profiler's own
** warnings and errors. Null (TG_NULL_I64) or NULL when the trace does not
** say. */
typedef struct tg_prof_note {
    int32_t severity;          /* ENUM_DIAGNOSTIC_SEVERITY_LEVEL: 2 warning, 3 error */
    char *text;                /* the message, once per distinct text */
    int64_t count;             /* rows with this severity and text */
    int64_t first_ns;          /* the earliest of their timestamps */
} tg_prof_note;

typedef struct tg_capture_info {
    int64_t cuda_driver;       /* the newest CUDA the driver supports, 13000 = 13.0
                                  (TARGET_INFO_SYSTEM_ENV CudaDriverVersion, Kineto
                                  cuda_driver_version) */
    int64_t cuda_runtime;      /* Kineto cuda_runtime_version */
    int64_t cupti;             /* Kineto cupti_version (130001, or an API level as 28) */
    char *nv_driver;           /* NvDriverVersion: "580.95.05", or "52512506" in old exports */
    int64_t start_ns, stop_ns; /* ANALYSIS_DETAILS startTime, stopTime */
    int64_t osrt_records, osrt_first, osrt_last;   /* OSRT_API: rows, earliest start, latest end */
    tg_prof_note *notes; size_t n_notes;   /* DIAGNOSTIC_EVENT warnings and errors */
} tg_capture_info;

typedef struct tg_trace {
    char *path;
    tg_file_id file;           /* the file being read (above) */
    tg_trace_format format;    /* TG_FORMAT_NSYS for exports and traces built by hand */
    int32_t rank, world_size;  /* Kineto distributedInfo, or the environment an
                                  export recorded (trace_origin.c); -1 when not
                                  recorded. rank_source says which, below */
    char *nsys_version;        /* "2022.4.2.1", or NULL if not recorded */
    char *schema_version;      /* "3.0.0", or NULL */
    char *product_name;        /* "NVIDIA Nsight Systems", "kineto2nsys", or NULL */
    int64_t read_bytes;        /* the most bytes the reader's meter counted while
                                  reading (Kineto; docs/limits.md), else 0 */
    int schema_major, schema_minor;  /* -1 when not recorded */
    bool has_table[TG_TABLE_COUNT];
    const char *table_name[TG_TABLE_COUNT]; /* actual name in this file ("..._V2"), or NULL */
    int32_t columns[TG_TABLE_COUNT];        /* every column of the table read (",a,b,", its
                                               string id + 1; 0 when not read): tg_trace_has_column */
    bool mixed_duplicate_api;  /* API calls recorded twice (old exports) */
    size_t n_profiler_ranges;  /* Kineto cuda_profiler_range events: kernels the CUPTI
                                  range profiler measured, not read as kernels
                                  (trace_kineto_map.c) */
    size_t n_api_twins;        /* of those, the outer rows the model dropped from
                                  apis (engine/model/model_join.c): each call is
                                  one row once a model is built */

    tg_strpool *strings;       /* all names; ids stored in rows */

    tg_kernel *kernels;   size_t n_kernels;    /* sorted by start; NULL when not
                                                  loaded (tg_load_opts.kernel_rows) */
    tg_kspan *kspans;                          /* the same n_kernels kernels, when
                                                  `kernels` is NULL; else NULL */
    tg_memop *memcpys;    size_t n_memcpys;    /* sorted by start */
    tg_memop *memsets;    size_t n_memsets;    /* sorted by start */
    tg_api *apis;         size_t n_apis;       /* sorted by start; after a streamed
                                                  read, only the rows the reader kept */
    size_t n_api_rows;         /* rows of the API table read, kept or not (n_apis
                                  once read whole) */
    bool apis_deferred;        /* the API table waits for tg_trace_stream_apis */
    bool sqlite_reads;         /* tg_load_opts.sqlite_reads, for the reads after the open */
    bool apis_partial;         /* apis holds a chosen subset of the calls (a
                                  streamed read dropped some) */
    struct tg_api_reader *api_reader;   /* trace layer state while deferred */
    tg_nvtx *nvtx;        size_t n_nvtx;       /* sorted by start */
    tg_sync *syncs;       size_t n_syncs;
    tg_overhead *overheads; size_t n_overheads;
    tg_gpu *gpus;         size_t n_gpus;
    tg_process *processes; size_t n_processes;
    /* The host side (docs/host.md), read only when asked for
    ** (tg_load_opts.host, or later by tg_trace_load_host): */
    tg_osrt *osrts;       size_t n_osrts;      /* sorted by start */
    tg_libcall *libcalls[2]; size_t n_libcalls[2];  /* TG_LIB_CUDNN, TG_LIB_CUBLAS; by start */
    tg_frame *frames[2];  size_t n_frames[2];  /* TG_STACKS_CUDA, TG_STACKS_OSRT; by chain, depth */
    tg_thread_name *threads; size_t n_threads; /* sorted by pid, tid */
    unsigned host_loaded;      /* TG_HOST_* bits read (loaded or absent) */
    unsigned host_failed;      /* TG_HOST_* bits whose later read failed */

    /* Where an export was recorded (trace_origin.c, docs/formats.md): the
    ** host of TARGET_INFO_SYSTEM_ENV, and (rank and world_size above) the
    ** rank, world size and job id of the environment nsys recorded
    ** (origin.def); NULL or -1 when the export does not say. */
    char *host;
    char *job;
    const char *rank_source;   /* static: "env OMPI_COMM_WORLD_RANK" when the rank came
                                  from the environment; NULL otherwise (a Kineto
                                  trace's rank is its distributedInfo's) */

    int64_t first_ns, last_ns; /* span of all loaded events */
    int64_t session_start_ns;  /* TARGET_INFO_SESSION_START_TIME, or null */
    tg_capture_info capture;   /* the profiler's own account (above) */

    /* Trace layer bookkeeping: bytes of the anonymous mapping that holds a
    ** table's row array (big tables), 0 when the array is malloc'd. */
    size_t rows_mapped[TG_TABLE_COUNT];
    /* Every row array above is sorted by start (tg_trace_open sorts them);
    ** false for traces built by hand, whose readers check. */
    bool sorted_by_start;
} tg_trace;

/* Open PATH read-only and load it: an nsys SQLite export, or a PyTorch
** profiler (Kineto) JSON trace, plain or gzip (recognised by content,
** docs/kineto.md). On failure returns NULL and records one
** sentence naming the file and the problem in diag (status TG_ETRACE).
** Loads every table, kernels as tg_kernel rows. */
tg_trace *tg_trace_open(const char *path, tg_diag *diag);

/* The host-side tables, read on demand (docs/host.md). */
enum { TG_LIB_CUDNN, TG_LIB_CUBLAS, TG_LIB_COUNT };
enum { TG_STACKS_CUDA, TG_STACKS_OSRT, TG_STACKS_COUNT };
#define TG_HOST_OSRT      (1u << 0)   /* OSRT_API */
#define TG_HOST_STACKS    (1u << 1)   /* CUDA_CALLCHAINS and OSRT_CALLCHAINS */
#define TG_HOST_LIBRARIES (1u << 2)   /* CUDNN_EVENTS and CUBLAS_EVENTS */
#define TG_HOST_ALL       (TG_HOST_OSRT | TG_HOST_STACKS | TG_HOST_LIBRARIES)

/* What to load (tg_trace_open_with); a zeroed struct loads the least. */
typedef struct tg_load_opts {
    bool kernel_rows;          /* tg_kernel rows (the `kernel` source); else tg_kspan */
    bool defer_api;            /* leave the API table to one tg_trace_stream_apis */
    unsigned host;             /* TG_HOST_* tables to read now (thread names always) */
    int64_t max_steps;         /* SQLite steps reading may take; 0: the default
                                  budget, 100 per byte of the file (docs/limits.md) */
    int threads;               /* threads one export may be read with: 2 or more
                                  reads the kernel table beside the others and
                                  streams the API table from a thread of its own
                                  (docs/architecture.md); 0 or 1: one */
    bool sqlite_reads;         /* every table through SQLite statements, none by
                                  the direct B-tree reader (docs/architecture.md,
                                  "Reading an export"): the same rows, slower;
                                  tests compare the two */
    int64_t max_memory;        /* --max-memory: a reader that would hold more
                                  stops with its sentence (docs/limits.md; the
                                  Kineto reader); 0: no limit */
} tg_load_opts;

tg_trace *tg_trace_open_with(const char *path, const tg_load_opts *opts, tg_diag *diag);
/* The threads worth reading PATH with, given `cores` to spare: 1 for a file
** under 1 MiB (or cores < 2), else cores (tg_load_opts.threads). */
int tg_trace_read_threads(const char *path, int cores);

/* Streaming the deferred API table: every row, in table order, goes to
** visit with its raw columns (DERIVED fields null); 1 keeps it (appended
** to trace->apis), 0 drops it, -1 stops the read. Rows come in batches,
** read by a thread of their own when the trace was opened with 2 threads
** or more (trace_api.c); visit and ahead always run on the caller's
** thread. Each row is shown to `ahead` (may be NULL) a few dozen rows
** before its visit, so that it can prefetch what the visit will touch. */
typedef struct tg_api_reader_cb {
    int (*visit)(void *ctx, tg_api *row);
    void (*ahead)(void *ctx, const tg_api *row);
    void *ctx;
} tg_api_reader_cb;

typedef enum tg_stream_status {
    TG_STREAM_DONE,            /* every row visited; kept rows sorted by start */
    TG_STREAM_STOPPED,         /* visit said -1, or the table records calls twice
                                  (old exports): read it whole with tg_trace_load_apis */
    TG_STREAM_FAILED           /* diag says why */
} tg_stream_status;

tg_stream_status tg_trace_stream_apis(tg_trace *t, const tg_api_reader_cb *cb, tg_diag *diag);
/* Load every row of the API table (deferred or stopped), as tg_trace_open
** would have; false with a diag on failure or when a completed stream
** dropped rows (they cannot be read back: open the trace again). */
bool tg_trace_load_apis(tg_trace *t, tg_diag *diag);

/* Read the host-side tables of `what` (TG_HOST_*) that the open did not:
** the export is opened again, read-only, for them. A table the export
** lacks reads as empty. True when done (t->host_loaded has the bits); false
** with a diag when the file cannot be read again. A Kineto trace has none
** of them: true, nothing read. */
bool tg_trace_load_host(tg_trace *t, unsigned what, tg_diag *diag);
/* The name of thread (pid, tid), or -1. */
int32_t tg_trace_thread_name(const tg_trace *t, int32_t pid, int32_t tid);

/* The SQLite URI tg_trace_open reads PATH through: read-only, immutable,
** every byte outside the unreserved set percent-encoded so a file name
** cannot inject URI options. malloc'd; NULL when out of memory. Tools
** that must read an export exactly as tracegate does (bench/) use it. */
char *tg_trace_uri(const char *path);
void tg_trace_close(tg_trace *t);

/* --max-memory: an estimate, from the row counts and string lengths of the
** export (cheap SQL counts, nothing loaded), of the memory that loading it
** and building its model takes; -1 when the file cannot be read (then
** tg_trace_open says why). */
int64_t tg_trace_estimate_bytes(const char *path);
/* The same for a load with opts (tg_trace_open_with; NULL: tg_trace_open's).
** A deferred API table counts only what its stream costs, not its rows. */
int64_t tg_trace_estimate_bytes_with(const char *path, const tg_load_opts *opts);
/* True when the estimate is within max_bytes (or unknown); otherwise one
** sentence "PATH: needs more than N MiB (--max-memory) ..." in diag, status
** TG_ETRACE. */
bool tg_trace_fits(const char *path, int64_t max_bytes, tg_diag *diag);
bool tg_trace_fits_with(const char *path, const tg_load_opts *opts, int64_t max_bytes, tg_diag *diag);

/* Rows of the API table: those read (a streamed read keeps few of them as
** rows), or, for a trace built by hand, its rows. */
static inline size_t tg_trace_api_rows(const tg_trace *t)
{
    return t->n_api_rows > t->n_apis ? t->n_api_rows : t->n_apis;
}

/* The processes that did GPU work (kernels, copies, memsets), sorted, in
** a malloc'd array (*pids, free it); their count, or -1 when out of memory. */
int64_t tg_trace_gpu_pids(const tg_trace *t, int32_t **pids);

/* Missing-data wording for the trace's format: the table (export table
** or Kineto events) and how to record it (nsys or torch.profiler). */
const char *tg_trace_table_label(const tg_trace *t, tg_table_id id);
const char *tg_trace_table_option(const tg_trace *t, tg_table_id id);

/* What a capture needs besides the option to fill table `id` (" and NVTX
** annotations in the program"), or "". */
const char *tg_trace_table_also(const tg_trace *t, tg_table_id id);

/* A capture made with the CUPTI range profiler (Kineto cuda_profiler_range
** events) whose table `id` (kernels, copies, memsets) is empty: the
** sentence saying how that activity was recorded instead, and that
** tracegate does not read it, in buf (after "they were ..." of the
** caller's "no kernel events while ..."). False, buf empty, otherwise. */
bool tg_trace_range_profiled(const tg_trace *t, tg_table_id id, char *buf, size_t size);

/* Why the trace's format can never hold table `id`'s rows ("the PyTorch
** profiler does not record them"), or NULL when a capture can. */
const char *tg_trace_never_records(const tg_trace *t, tg_table_id id);

/* What evidence names as the table of a row of table `id` (an int so
** that a cited row's stored table index passes through; "?" out of
** range): the format's cite list, or the export's own table name. */
const char *tg_trace_cite_table(const tg_trace *t, int id);

/* The language the trace's reproduce queries are written in. */
static inline tg_query_lang tg_trace_query_lang(const tg_trace *t) { return tg_trace_formats[t->format].query; }

/* Where the trace's rank was read from ("distributedInfo", "env RANK"),
** or NULL when it has none. */
const char *tg_trace_rank_source(const tg_trace *t);

/* Does the file's table `id` have column `name` (SQLite names: any case)?
** True when the table's columns were not read (a trace built by hand). */
bool tg_trace_has_column(const tg_trace *t, tg_table_id id, const char *name);

/* Convenience: string of an id (NULL for TG_NO_STR). */
static inline const char *tg_trace_str(const tg_trace *t, int32_t id)
{
    return tg_strpool_get(t->strings, id);
}

#endif
