/*
** Internals of the PyTorch profiler (Kineto) reader, shared by its three
** files and by nothing else (docs/kineto.md describes the format and the
** mapping):
**
**   trace_kineto_in.c   the bytes: a plain or gzip-compressed file read in
**                       chunks (zlib), so memory never holds the file;
**   trace_kineto.c      the JSON: yajl's event callbacks assemble one
**                       traceEvents entry at a time (tg_kin_event) plus the
**                       top-level deviceProperties and distributedInfo;
**   trace_kineto_map.c  an assembled event onto the trace's rows (kernels,
**                       copies, memsets, API calls, ranges), and the
**                       finishing steps: launching process of GPU work,
**                       processes, GPUs, order.
*/
#ifndef TG_TRACE_KINETO_H
#define TG_TRACE_KINETO_H

#include <sys/types.h>

#include "trace_int.h"

/* ---- trace_kineto_in.c */

typedef struct tg_kin_input {
    int fd;
    bool gz;                   /* gzip members, inflated as read */
    bool gz_done;              /* the last member ended with the file */
    void *z;                   /* z_stream */
    unsigned char *raw;        /* compressed bytes read ahead */
    size_t raw_cap;
    uint64_t file_bytes;       /* bytes of the file read so far */
    uint64_t bytes;            /* bytes inflated (or read) so far, by whichever thread reads */
    uint64_t delivered;        /* bytes handed to the parser so far (the parser's thread) */
    uint64_t limit;            /* plain files: stop there (0: the end) */
    struct tg_kin_pipe *pipe;  /* gzip: the inflating thread, NULL when inline */
} tg_kin_input;

/* What the first bytes of a file say it is. */
typedef enum tg_kin_sniff {
    TG_KIN_NOT_JSON,           /* neither gzip nor JSON text */
    TG_KIN_JSON,               /* first non-blank byte is { or [ */
    TG_KIN_GZIP                /* gzip magic */
} tg_kin_sniff;

tg_kin_sniff tg_kin_sniff_bytes(const unsigned char *head, size_t n);

bool tg_kin_input_open(tg_kin_input *in, const char *path, tg_loader *ld);
/* Up to cap bytes of JSON text: the count, 0 at the end, -1 on failure (one
** sentence in ld). */
ssize_t tg_kin_input_read(tg_kin_input *in, unsigned char *buf, size_t cap, tg_loader *ld);
void tg_kin_input_close(tg_kin_input *in);
/* A plain file read from offset on (a second parser's half). */
bool tg_kin_input_seek(tg_kin_input *in, uint64_t offset);
/* Uncompressed size of a file, for --max-memory's estimate: the larger of
** the gzip trailer's ISIZE (the last member's, modulo 4 GiB) and the
** compressed size times TG_KIN_GZIP_RATIO, else its size; -1 when it
** cannot be read. Not a bound (gzip reaches 1000x): the reader's meter
** holds the limit while reading (docs/limits.md). */
#define TG_KIN_GZIP_RATIO 8    /* the corpus compresses 11x to 30x: ISIZE decides there */
int64_t tg_kin_input_size(const char *path);

/* ---- trace_kineto_map.c */

/* Event categories (`cat`), spellings of 2021 to 2025 traces. ORDER: the
** switch in tg_kin_emit. */
#define TG_KIN_CAT_LIST(X)                                   \
    X(KERNEL, "kernel")  X(KERNEL, "Kernel")                 \
    X(MEMCPY, "gpu_memcpy") X(MEMCPY, "Memcpy")              \
    X(MEMSET, "gpu_memset") X(MEMSET, "Memset")              \
    X(API, "cuda_runtime") X(API, "cuda_driver") X(API, "Runtime") X(API, "Driver") \
    X(RANGE, "user_annotation")                              \
    X(GPU_RANGE, "gpu_user_annotation")                      \
    X(OP, "cpu_op") X(OP, "Operator")                        \
    X(SYNC, "cuda_sync")                                     \
    X(PROFILER_RANGE, "cuda_profiler_range")

typedef enum tg_kin_cat {
    TG_KIN_OTHER,
    TG_KIN_KERNEL, TG_KIN_MEMCPY, TG_KIN_MEMSET, TG_KIN_API, TG_KIN_RANGE, TG_KIN_GPU_RANGE,
    TG_KIN_OP, TG_KIN_SYNC, TG_KIN_PROFILER_RANGE
} tg_kin_cat;

tg_kin_cat tg_kin_cat_of(const char *s, size_t len);

/* One traceEvents entry as assembled from its keys (any order). Numbers
** are TG_NULL_I64 when absent or not numbers; strings point into buffers
** the parser owns. */
typedef struct tg_kin_event {
    int64_t index;             /* position in traceEvents */
    char ph;                   /* 'X', 'M', ... (0: absent) */
    tg_kin_cat cat;
    bool has_cat;
    const char *name; size_t name_len; bool has_name;
    int64_t pid, tid;          /* numbers, or the last digits of a string id */
    bool pid_text;             /* pid was a string ("Spans", "Traces") */
    int64_t ts, dur;           /* ns */
    int64_t device, context, stream, correlation, bytes, registers, smem;
    int64_t grid[3], block[3];
    const char *arg_name; size_t arg_name_len; /* M events: args.name / args.labels */
    const char *labels; size_t labels_len;
} tg_kin_event;

typedef struct tg_kin_meta {
    int64_t pid;
    int32_t name;              /* process_name */
    bool gpu;                  /* process_labels "GPU n" */
} tg_kin_meta;

/* Row arrays under construction and what the finishing steps need. */
typedef struct tg_kin_rows {
    tg_loader *ld;
    size_t cap_kernels, cap_memcpys, cap_memsets, cap_apis, cap_nvtx, cap_syncs, cap_gpus;
    tg_kin_meta *meta; size_t n_meta, cap_meta;
    size_t n_gpu_ranges;       /* gpu_user_annotation events (not loaded) */
    size_t n_cpu_ops;
    size_t n_events;
} tg_kin_rows;

bool tg_kin_emit(tg_kin_rows *r, const tg_kin_event *e);
/* deviceProperties[i] */
bool tg_kin_add_gpu(tg_kin_rows *r, int64_t id, const char *name, size_t name_len, int64_t sms,
                    int64_t memory, int64_t major, int64_t minor);
bool tg_kin_finish(tg_kin_rows *r);
void tg_kin_rows_free(tg_kin_rows *r);

/* Events a second parser assembled (the second half of a big plain file,
** trace_kineto.c), kept compactly until the first half's rows are in and
** its events counted, then replayed through tg_kin_emit with their
** indices shifted. Only what tg_kin_emit would keep is recorded. */
typedef struct tg_kin_rec {
    unsigned char *buf;
    size_t len, cap;
    bool oom;
    int64_t rank, world_size;  /* distributedInfo met there, TG_NULL_I64 */
    int64_t schema;            /* schemaVersion met there, TG_NULL_I64 */
    int64_t versions[3];       /* cuda_driver_version, cuda_runtime_version, cupti_version; TG_NULL_I64 */
    size_t n_cpu_ops, n_gpu_ranges, n_profiler_ranges;
} tg_kin_rec;

/* The trace's schema_version from a Kineto schemaVersion (kept when set). */
void tg_kin_set_schema(tg_trace *t, int64_t v);
/* The trace's capture.cuda_driver (k 0), cuda_runtime (1) or cupti (2). */
void tg_kin_set_version(tg_trace *t, int k, int64_t v);

bool tg_kin_rec_event(tg_kin_rec *rec, const tg_kin_event *e);
bool tg_kin_rec_gpu(tg_kin_rec *rec, int64_t id, const char *name, size_t name_len, int64_t sms,
                    int64_t memory, int64_t major, int64_t minor);
bool tg_kin_rec_replay(tg_kin_rows *r, const tg_kin_rec *rec, int64_t index_offset);
void tg_kin_rec_free(tg_kin_rec *rec);

/* ---- trace_kineto_skip.c: events nobody reads, elided before the parser */

#define TG_KIN_CHUNK ((size_t)1 << 18)

typedef struct tg_kin_skip {
    int depth, drop_depth;     /* open containers outside strings */
    bool in_string, escaped, dropping, started, top_object;
    size_t elided, elided_ops; /* events replaced by 0; of them operators */
    size_t n_carry;            /* an undecided event head, at the start of work */
    /* an elided event's own keys (strings directly in it followed by ':'):
    ** a second ph, cat or name, or an escape in a key, could make it an
    ** event the parser must see (docs/kineto.md, "Duplicate keys"):
    ** `suspect`, and the reader reads the file again without eliding */
    uint8_t str_n, n_ph, n_cat, n_name;
    char str_head[4];
    bool str_escaped, suspect;
    unsigned char work[TG_KIN_CHUNK + 256];
} tg_kin_skip;

/* n bytes of text (at most TG_KIN_CHUNK) in, the text with elided events
** into out (room for TG_KIN_CHUNK + 256 bytes); its length. final: no more
** text follows (an undecided head is then kept). */
size_t tg_kin_skip_run(tg_kin_skip *k, const unsigned char *in, size_t n, unsigned char *out, bool final);

/* ---- trace_kineto.c */

/* Read PATH (sniffed as JSON or gzip by the caller) into ld->t. False with
** one sentence in ld on failure. */
bool tg_kin_load(tg_loader *ld, const tg_load_opts *opts);

/* ---- trace_load.c, shared with this reader */
bool tg_load_add_gpu(tg_loader *ld, size_t *cap, tg_gpu g);
bool tg_load_activity_gpus(tg_loader *ld, size_t *cap);
/* Note the devices of every activity row loaded (the Kineto reader, whose
** rows get their devices last). */
bool tg_load_note_row_devices(tg_loader *ld);

#endif
