/*
** Internals of the trace layer, shared by its files and by nothing else:
** the loader context that lives while an export is being read, the map
** from nsys string ids to string-pool ids, column resolution by name and
** the typed readers that turn one cell (SQLite's, or the direct reader's)
** into a row field.
**
** trace.c opens the file and drives the load, trace_cols.c resolves tables
** and columns (the drift docs/architecture.md lists) and opens each read,
** trace_btree.c steps a table's rows out of the file's pages, trace_load.c
** holds one loader per activity table and trace_sort.c orders the rows by
** start.
** Every loader reads its table the same way, through tg_load_rows: it
** names its columns and decodes one row, the read itself is here once.
*/
#ifndef TG_TRACE_INT_H
#define TG_TRACE_INT_H

#include <pthread.h>
#include <stdatomic.h>
#include <sqlite3.h>

#include "trace.h"
#include "../common/idmap.h"


/* Per-table counters for the one warning a table may earn. */
typedef struct tg_rowstats {
    size_t skipped;            /* missing / non-numeric start or end */
    size_t clamped;            /* end < start, end set to start */
} tg_rowstats;

/* The most distinct device ids an export may name (trace_load.c). */
#define TG_MAX_GPUS 4096

/* Device ids the activity rows of one loader named, in first-seen order
** (for the bare GPU descriptions of tg_load_activity_gpus): noted as rows
** are read, so no second pass over the rows. One more than TG_MAX_GPUS
** is kept, so an export naming too many is still told. */
typedef struct tg_devset {
    int32_t ids[TG_MAX_GPUS + 1];
    uint32_t n;
    int32_t slots[2 * (TG_MAX_GPUS + 1)];   /* open addressing, -1 empty */
} tg_devset;

typedef struct tg_api_stream tg_api_stream;   /* trace_api.c */

typedef struct tg_loader {
    sqlite3 *db;
    tg_trace *t;
    const char *path;
    tg_diag *diag;
    bool failed;               /* an error is in diag; stop */
    tg_idmap strings;          /* nsys string id -> pool id */
    char **table_list;         /* every table and view name in the file */
    bool *table_is_view;       /* ORDER table_list: sqlite_master says 'view' */
    size_t n_tables;
    tg_rowstats stats[TG_TABLE_COUNT];
    bool kernel_rows;          /* tg_load_opts.kernel_rows */
    bool sqlite_reads;         /* tg_load_opts.sqlite_reads: no direct reader */
    unsigned host;             /* tg_load_opts.host */
    int threads;               /* tg_load_opts.threads */
    size_t apis_visited;       /* rows a streamed read showed its visitor */
    /* SQLite's work (trace_guard.c): steps counted by the progress
    ** handler against the budget of the phase, schema or reading */
    int64_t steps, step_budget;
    bool reading;              /* past the schema: the read budget applies */
    bool budget_hit;           /* the progress handler interrupted SQLite */
    bool changed;              /* failed: the file is no longer the run's (tg_load_changed) */
    /* reading in parallel (trace.c, docs/architecture.md "Reading an
    ** export"): interning into the trace's string pool is locked while two
    ** loaders read at once; NULL otherwise */
    pthread_mutex_t *pool_lock;
    int32_t dev_last;          /* last device id noted (when devs is set) */
    tg_devset *devs;           /* NULL until a device is noted */
    tg_devset *devs_before;    /* noted by the kernels' loader when it ran beside this one */
    int64_t span_first, span_last;   /* first start, last end of the rows this loader finished */
    tg_api_stream *stream;     /* the API table being read by a producer thread */
    struct tg_loader *early;   /* trace.c: the API reader started during the open */
} tg_loader;

/* A deferred API table (tg_load_opts.defer_api): the loader, its database
** and string map stay open until the table is read. */
struct tg_api_reader {
    tg_loader ld;
};

/* One column a loader wants. `alt` is a second name tried when `name` is
** absent. A required column that is absent makes the export unreadable;
** an absent optional column reads as NULL. */
typedef struct tg_colspec {
    const char *name;
    const char *alt;
    bool required;
} tg_colspec;

/* ---- trace.c: errors */
void tg_load_fail(tg_loader *ld, tg_status st, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Record an SQLite failure while doing `what` (e.g. "reading NVTX_EVENTS"). */
void tg_load_sqlite_fail(tg_loader *ld, int rc, const char *what);
/* ld fails out of memory; false, for `return pushed || tg_load_oom(ld);`. */
bool tg_load_oom(tg_loader *ld);
/* The one warning of a table whose rows were skipped or clamped (its
** counts in ld->stats); `fields` names what a skipped row lacked. */
void tg_load_warn_rows(tg_loader *ld, int table, const char *fields);

/* ---- trace_guard.c: what a read connection allows (docs/limits.md) */
/* SQLite steps for parsing and listing the schema: nsys's ~100 entries
** take about 1,000; 100,000 stop a schema of about 14,000 entries, whose
** parse (quadratic in SQLite) still takes a fraction of a second. */
#define TG_SCHEMA_STEPS 100000
/* SQLite steps per byte of the file for reading it, and the least budget
** (small files). Plain tables cost well under TG_STEPS_PER_BYTE / 10 (see
** docs/limits.md for the measurements). */
#define TG_STEPS_PER_BYTE 100
#define TG_MIN_READ_STEPS ((int64_t)100000000)
/* The longest value SQLite may hand the loader (any name or text). */
#define TG_MAX_VALUE_BYTES (16 << 20)

/* Open ld's file (tg_load_file_path) read-only with the guards, check it
** is still the file of the run (tg_load_same_file), list its tables (the
** schema budget) and arm the read budget: max_steps, or
** tg_load_read_budget of the file's size when 0. False when failed (diag
** set). */
bool tg_load_open(tg_loader *ld, int64_t max_steps);

/* One file per run (tg_file_id, docs/limits.md): every open of the trace
** file goes through these. */
#define TG_FILE_CHANGED (-2)
/* The run's file of ld (its trace's), NULL when none is recorded (a
** scratch loader: the --max-memory estimate). */
const tg_file_id *tg_load_file(const tg_loader *ld);
/* The path to open for ld: the resolved file when recorded, else ld->path. */
const char *tg_load_file_path(const tg_loader *ld);
/* The first open of a run: resolve path (realpath), open the file it
** names read-only and record what fstat says of it in *id. The fd, or -1
** (errno set; *id left unset). */
int tg_file_first_open(const char *path, tg_file_id *id);
void tg_file_id_free(tg_file_id *id);
/* A later open: open id's file (path when id is NULL or unset) read-only;
** the fd, -1 (errno set), or TG_FILE_CHANGED when what fstat says of it
** differs from id (the fd is then closed). */
int tg_file_open(const tg_file_id *id, const char *path);
/* Whether ld's file, stat'ed now, is still the one recorded (true when
** nothing is recorded); false fails ld with the sentence of
** tg_load_changed. Called right after every open that is not an fd of
** tg_file_open's (SQLite's connections, the direct reader). */
bool tg_load_same_file(tg_loader *ld);
/* Fail ld: the file changed while it was being read (status TG_ETRACE). */
void tg_load_changed(tg_loader *ld);
int64_t tg_load_read_budget(int64_t file_bytes);
/* (Re)install the step counter on ld->db for ld (after moving the loader). */
void tg_load_watch(tg_loader *ld);
/* The failure of an interrupted statement (ld->budget_hit) while doing what. */
void tg_load_budget_fail(tg_loader *ld, const char *what);
bool tg_load_list_tables(tg_loader *ld);
void tg_load_free_tables(tg_loader *ld);
/* False (diag set) when `table` is not a plain rowid table. */
bool tg_load_check_table(tg_loader *ld, const char *table);
/* False (diag set) when a column read is computed or hidden (`hidden` of
** pragma table_xinfo). */
bool tg_load_check_column(tg_loader *ld, const char *table, const char *column, int hidden);

/* ---- trace_btree.c: the direct reader of a table's B-tree pages */
/* One cell as the direct reader decoded it: SQLITE_INTEGER, SQLITE_FLOAT,
** SQLITE_TEXT, SQLITE_BLOB or SQLITE_NULL, as SQLite's scan would type it;
** text and blob bytes stay valid until the next row. */
typedef struct tg_cellv {
    int type;
    int n;                     /* bytes of a text or blob */
    union {
        int64_t i;
        double d;
        const char *p;
    };
} tg_cellv;

enum { TG_BT_CORRUPT = -1, TG_BT_TOOBIG = -2, TG_BT_NOMEM = -3, TG_BT_IO = -4 };

typedef struct tg_btree tg_btree;
/* Whether the direct reader reads a column of this declared type exactly
** as SQLite's scan does (not REAL affinity, no primary key, no default,
** not hidden). */
bool tg_btree_column_ok(const char *type, bool pk, bool has_default, bool hidden);
/* A scan of the rowid table whose B-tree starts at page `root` of the
** database file at path; cell i + 1 of a row is the value at position
** pos[i] of its record (-1: NULL). NULL when the file is not one the
** reader takes as SQLite would (then read it through SQLite). */
tg_btree *tg_btree_open(const char *path, uint32_t root, const int *pos, int n);
/* The next row in rowid order: 1, 0 at the end, or a TG_BT_* error. */
int tg_btree_next(tg_btree *b);
/* The row's cells: [0] the rowid, [1..n] the columns. */
const tg_cellv *tg_btree_cells(const tg_btree *b);
/* Whether the scan's error is one SQLite's scan may read past instead
** (docs/limits.md: a payload size no well-formed cell has, a cell whose
** bytes run past its page, an overflow chain damaged past the values
** read); fuzz-btree's oracle allows only these. */
bool tg_btree_stricter(const tg_btree *b);
void tg_btree_close(tg_btree *b);

/* ---- trace_cols.c: tables, columns, reads */
/* Actual name of a table: exact match, else the highest `NAME_V<n>`. */
const char *tg_load_find_table(const tg_loader *ld, const char *canonical);

/* The rows of one table being read: "SELECT rowid, c1, ..., cn FROM table"
** through SQLite (st), or the same cells stepped out of the file by the
** direct reader (bt; docs/architecture.md, "Reading an export"). Column i
** of the spec is cell i + 1 (COL), cell 0 is the rowid. */
typedef struct tg_row {
    sqlite3_stmt *st;          /* SQLite's statement, or NULL */
    tg_btree *bt;              /* the direct reader, or NULL */
    const tg_cellv *cells;     /* bt: the current row's cells */
    const char *table;
    int n;                     /* spec columns */
} tg_row;

/* Open a read of cols[0..n) of table: the direct reader when the file and
** every column read allow it (and ld->sqlite_reads is not set), else the
** SELECT. False when failed (diag set). */
bool tg_row_open(tg_loader *ld, const char *table, const tg_colspec *cols, int n, tg_row *row);
/* The next row: true on a row, false at the end or on error (ld->failed). */
bool tg_row_step(tg_loader *ld, tg_row *row);
void tg_row_close(tg_row *row);

/* Spec index -> cell of a row (0 is the rowid). */
#define COL(i) ((i) + 1)

/* The decode of one row of a tg_load_rows read: st is on the row; keep
** what the loader wants of it (in its ctx or the trace). False stops the
** read: when ld failed (out of memory, a cell that could not be read),
** or when the loader wants no more rows. */
typedef bool tg_row_decode(tg_loader *ld, const tg_row *st, void *ctx);

/* The shape every loader shares: one read of cols[0..n) from table
** (NULL: the export lacks it, nothing to read), every row through decode,
** the read closed. False when failed (diag set). tg_load_each is its
** loop, for a read opened elsewhere (the API table's). Inline, so that
** decode is called directly (and mostly inlined into the loop): the
** kernel, copy and API tables are most of a load (bench/README.md), and a
** call per row through a pointer would cost them. */
static inline void tg_load_each(tg_loader *ld, tg_row *row, tg_row_decode *decode, void *ctx)
{
    while (tg_row_step(ld, row))
        if (!decode(ld, row, ctx)) break;
}

static inline bool tg_load_rows(tg_loader *ld, const char *table, const tg_colspec *cols, int n,
                                tg_row_decode *decode, void *ctx)
{
    if (!table) return true;
    tg_row row;
    if (!tg_row_open(ld, table, cols, n, &row)) return false;
    tg_load_each(ld, &row, decode, ctx);
    tg_row_close(&row);
    return !ld->failed;
}

/* The text of a cell (any non-NULL type) read whole, by its byte count: a
** NUL byte inside the value becomes U+FFFD, so `cuMemcpyHtoD\0Async` is
** neither cuMemcpyHtoD (where a C string would stop) nor
** cuMemcpyHtoDAsync, as for SQL, which compares whole values; NULs at the
** end (a C writer's terminator stored with the name) are dropped
** (docs/formats.md). *text is NULL for a NULL cell; when the value had to
** be rewritten *owned holds it (free it), else NULL and *text points into
** SQLite's buffer until the next step. False when out of memory. */
bool tg_cell_text(const tg_row *st, int col, const char **text, size_t *len, char **owned);

/* Intern s into the trace's string pool (locked when ld->pool_lock is set);
** -1 when out of memory. */
int32_t tg_load_intern(tg_loader *ld, const char *s, size_t len);

/* Note that an activity row names device dev (any value; negatives are
** no device). False when out of memory (ld failed). */
bool tg_load_note_device_slow(tg_loader *ld, int32_t dev);
static inline bool tg_load_note_device(tg_loader *ld, int32_t dev)
{
    if (dev < 0 || (ld->devs && dev == ld->dev_last)) return true;
    ld->dev_last = dev;
    return tg_load_note_device_slow(ld, dev);
}

/* Intern the text of a cell (tg_cell_text), TG_NO_STR for NULL. */
int32_t tg_load_text(tg_loader *ld, const tg_row *st, int col);
/* A string-id cell: integer -> StringIds lookup; text -> interned as is. */
int32_t tg_load_strid(tg_loader *ld, const tg_row *st, int col);

/* A real as an integer field: truncated; false when it does not fit. */
static inline bool tg_real_int(double d, int64_t *out)
{
    if (!(d > -9.2e18 && d < 9.2e18)) return false;
    *out = (int64_t)d;
    return true;
}

/* Integer value of a cell; false for NULL, text, blob or a non-finite real.
** Through SQLite the cell is fetched once (sqlite3_column_value) and read
** through the value API: each sqlite3_column_* call costs a column lookup
** and an API exit of its own, and asking the type then the integer made
** two of them per cell, about a tenth of a big load. The connection never
** leaves its thread while a statement steps (SQLITE_OPEN_NOMUTEX), so
** reading the unprotected value is safe. */
static inline bool tg_value_int(sqlite3_value *v, int64_t *out)
{
    switch (sqlite3_value_type(v)) {
    case SQLITE_INTEGER:
        *out = sqlite3_value_int64(v);
        return true;
    case SQLITE_FLOAT:
        return tg_real_int(sqlite3_value_double(v), out);
    default:
        return false;
    }
}

static inline bool tg_cell_int(const tg_row *st, int col, int64_t *out)
{
    *out = 0;                  /* set whatever the cell (gcc -O1 cannot see that false leaves it unread) */
    if (st->cells) {
        const tg_cellv *v = &st->cells[col];
        if (v->type == SQLITE_INTEGER) {
            *out = v->i;
            return true;
        }
        return v->type == SQLITE_FLOAT && tg_real_int(v->d, out);
    }
    return tg_value_int(sqlite3_column_value(st->st, col), out);
}

/* The SQLITE_* type of a cell. */
static inline int tg_cell_type(const tg_row *st, int col)
{
    return st->cells ? st->cells[col].type : sqlite3_column_type(st->st, col);
}

/* The SQLITE_* type of a cell, and its value in *i when it is an integer
** (a string id), from one fetch of the cell. */
static inline int tg_cell_peek(const tg_row *st, int col, int64_t *i)
{
    if (st->cells) {
        const tg_cellv *v = &st->cells[col];
        if (v->type == SQLITE_INTEGER) *i = v->i;
        return v->type;
    }
    sqlite3_value *v = sqlite3_column_value(st->st, col);
    int type = sqlite3_value_type(v);
    if (type == SQLITE_INTEGER) *i = sqlite3_value_int64(v);
    return type;
}

/* The rowid of the row. */
static inline int64_t tg_row_id(const tg_row *st)
{
    return st->cells ? st->cells[0].i : sqlite3_column_int64(st->st, 0);
}

static inline int64_t tg_cell_i64(const tg_row *st, int col)
{
    int64_t v;
    return tg_cell_int(st, col, &v) ? v : TG_NULL_I64;
}

/* int32 fields: null and out-of-range values read as -1. */
static inline int32_t tg_cell_i32(const tg_row *st, int col)
{
    int64_t v;
    if (!tg_cell_int(st, col, &v) || v < INT32_MIN || v > INT32_MAX) return -1;
    return (int32_t)v;
}

/* Timestamps are accepted in (-2^62, 2^62): an end minus a start, and the
** span of a trace, then always fit in int64 (real exports hold ns since
** the session start, or at most ns since 1970, about 2^60.6). */
#define TG_TIME_LIMIT ((int64_t)1 << 62)

static inline bool tg_time_ok(int64_t t)
{
    return t > -TG_TIME_LIMIT && t < TG_TIME_LIMIT;
}

/* Columns 1 and 2 of every activity read are start and end. Returns
** false when the row must be skipped (missing, not a number or out of
** range). */
static inline bool tg_load_times(tg_rowstats *rs, const tg_row *st, int64_t *start, int64_t *end,
                       bool end_optional)
{
    if (!tg_cell_int(st, 1, start) || !tg_time_ok(*start)) {
        rs->skipped++;
        return false;
    }
    if (!tg_cell_int(st, 2, end) || !tg_time_ok(*end)) {
        if (!end_optional || tg_cell_type(st, 2) != SQLITE_NULL) {
            rs->skipped++;
            return false;
        }
        *end = TG_NULL_I64;
        return true;
    }
    if (*end < *start) {
        *end = *start;
        rs->clamped++;
    }
    return true;
}

/* Decoded process / thread ids of a serialized GlobalId
** (docs/architecture.md, "The nsys export"). */
static inline int32_t tg_global_pid(int64_t global)
{
    return global == TG_NULL_I64 ? -1 : (int32_t)(((uint64_t)global >> 24) & 0xFFFFFF);
}
static inline int32_t tg_global_tid(int64_t global)
{
    return global == TG_NULL_I64 ? -1 : (int32_t)((uint64_t)global & 0xFFFFFF);
}

/* ---- trace_load.c, trace_api.c: one loader per table; each returns false on failure */
bool tg_load_strings(tg_loader *ld);
bool tg_load_kernels(tg_loader *ld);
bool tg_load_memcpys(tg_loader *ld);
bool tg_load_memsets(tg_loader *ld);
bool tg_load_apis(tg_loader *ld);
/* The API rows through cb (NULL keeps every row): 1 read, -1 stopped (visit
** said so, or twins of an old export), 0 failed. */
int tg_load_apis_with(tg_loader *ld, const tg_api_reader_cb *cb);
/* The decoded calls a producer may hold ahead of their visit (trace_api.c;
** --max-memory counts them). */
#define TG_API_QUEUE_BYTES ((size_t)32 << 20)
/* Start reading the API table on a producer thread now (ld on a
** connection of its own), for a later tg_load_apis_with with a visitor;
** false (nothing started) when it cannot. */
bool tg_load_apis_start(tg_loader *ld);
/* Stop a started read and drop what it read. */
void tg_load_apis_stop(tg_loader *ld);
bool tg_load_syncs(tg_loader *ld);
bool tg_load_overheads(tg_loader *ld);
bool tg_load_nvtx(tg_loader *ld);
bool tg_load_gpus(tg_loader *ld);
bool tg_load_processes(tg_loader *ld);
/* trace_host.c: thread names, and the host-side tables of `what`
** (TG_HOST_*) not read yet, sorted; t->host_loaded gets the bits. */
bool tg_load_threads(tg_loader *ld);
bool tg_load_host(tg_loader *ld, unsigned what);
/* trace_origin.c: host, rank, world size and job id (after the activity) */
bool tg_load_origin(tg_loader *ld);

/* ---- trace_capture.c: the profiler's own account (tg_capture_info) */
void tg_capture_init(tg_capture_info *c);
void tg_capture_free(tg_capture_info *c);
/* ANALYSIS_DETAILS, DIAGNOSTIC_EVENT and the OS runtime calls' window.
** False when failed (diag set). */
bool tg_load_capture(tg_loader *ld);

/* ---- trace_mem.c: row arrays (see there) */
#define TG_ROWS_MAP_MIN ((size_t)8 << 20)  /* arrays this big get their own mapping */
/* Grow *rows to hold `need` rows of esz bytes (geometrically); *mapped is
** the size of its mapping, 0 while malloc'd. False when out of memory. */
bool tg_rows_grow(void **rows, size_t *mapped, size_t *cap, size_t need, size_t esz);
void tg_rows_free(void *rows, size_t mapped);
/* Free every row array, GPU and process of t and zero their counts (close,
** and a reader that starts over). */
void tg_trace_drop_rows(tg_trace *t);
/* A fresh anonymous mapping of at least `bytes` (its size in *mapped). */
void *tg_rows_map(size_t bytes, size_t *mapped);
size_t tg_rows_page(void);
/* Move the pages of [from, from + bytes) to `to` (page-aligned, both in
** mappings of tg_rows_map). 1 moved; 0 not moved, `to` mapped to fresh
** zero pages; -1 `to` is no longer mapped. */
int tg_rows_move(void *from, void *to, size_t bytes);

/* --max-memory while reading (see trace_mem.c): bytes charged by the
** threads a meter is attached to, against limit (0: none). */
typedef struct tg_mem_meter {
    _Atomic int64_t held;      /* charged so far (never taken off) */
    _Atomic int64_t peak;      /* the most held, a refused charge included */
    int64_t limit;
    _Atomic bool over;         /* a charge passed the limit: every later one fails */
} tg_mem_meter;
/* The meter of this thread (NULL: none); the one it had. */
tg_mem_meter *tg_mem_attach(tg_mem_meter *m);
/* Count bytes more; false when that passes the limit (the caller fails as
** out of memory, and tg_mem_fail says why). */
bool tg_mem_charge(size_t bytes);
/* When this thread's meter passed its limit: the --max-memory sentence in
** ld (status TG_ETRACE), true. */
bool tg_mem_fail(tg_loader *ld);
/* The one --max-memory sentence (tg_trace_fits_with's estimate, a reader's
** meter): the limit, "about" or "at least", the bytes. */
#define TG_MAX_MEMORY_SENTENCE \
    "needs more than %s (--max-memory): loading it takes %s %s; raise the limit or check it on a bigger machine"

/* TG_PUSH for the row arrays of the trace. */
#define TG_PUSH_ROWS(arr, n, cap, mapped, val) \
    (((n) < (cap) || tg_rows_grow((void **)&(arr), &(mapped), &(cap), (n) + 1, sizeof *(arr))) \
         ? ((arr)[(n)++] = (val), true) : false)

/* ---- trace_sort.c */
/* Stable sort of the n rows of size esz at *rows (a row array of
** trace_mem.c, mapping size *mapped) by the int64 at offset key_off. *rows
** and *mapped may be replaced by a new array (the old one freed). False
** when out of memory; the rows are then unchanged, except that a mapped
** array may have lost pages: the caller must give the trace up. */
bool tg_sort_rows_by_i64(void **rows, size_t *mapped, size_t n, size_t esz, size_t key_off);

#endif
