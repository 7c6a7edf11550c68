/*
** Opening an export: tg_trace_open checks the file itself (exists, regular,
** readable, an SQLite header, no writer holding it, no journal beside it),
** opens it strictly read-only with an immutable URI so SQLite never
** creates a -journal, -wal or -shm file nor takes a lock, detects the nsys
** and schema versions, resolves the tables present, and runs the loaders
** of trace_load.c / trace_nvtx.c. Rows end up sorted by start, with the
** trace's first and last timestamps.
**
** Every failure is one sentence in the diag that starts with the file
** name, with status TG_ETRACE (TG_EINTERNAL when memory runs out); a file
** that loads but had rows skipped or clamped earns one warning per table.
*/
#include "trace_kineto.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../common/text.h"

const char *const tg_table_names[TG_TABLE_COUNT] = {
#define X(id, name, what, option, kineto, torch_option) name,
    TG_TABLE_LIST(X)
#undef X
};
const char *const tg_table_what[TG_TABLE_COUNT] = {
#define X(id, name, what, option, kineto, torch_option) what,
    TG_TABLE_LIST(X)
#undef X
};
const char *const tg_table_option[TG_TABLE_COUNT] = {
#define X(id, name, what, option, kineto, torch_option) option,
    TG_TABLE_LIST(X)
#undef X
};
const char *const tg_table_kineto[TG_TABLE_COUNT] = {
#define X(id, name, what, option, kineto, torch_option) kineto,
    TG_TABLE_LIST(X)
#undef X
};
const char *const tg_table_torch_option[TG_TABLE_COUNT] = {
#define X(id, name, what, option, kineto, torch_option) torch_option,
    TG_TABLE_LIST(X)
#undef X
};
const char *const tg_query_lang_names[TG_QUERY_COUNT] = {
#define X(id, name, what) name,
    TG_QUERY_LANG_LIST(X)
#undef X
};

const char *const tg_query_lang_what[TG_QUERY_COUNT] = {
#define X(id, name, what) what,
    TG_QUERY_LANG_LIST(X)
#undef X
};

const tg_trace_format_def tg_trace_formats[TG_FORMAT_COUNT] = {
#define X(id, name, what, lang, list, noun, rank, label, versioned, run_with) \
    {name, what, TG_QUERY_##lang, list, noun, rank, label, versioned, run_with},
    TG_TRACE_FORMAT_LIST(X)
#undef X
};

const char *const tg_trace_format_names[TG_FORMAT_COUNT] = {
#define X(id, name, what, lang, list, noun, rank, label, versioned, run_with) name,
    TG_TRACE_FORMAT_LIST(X)
#undef X
};
const char *const tg_trace_format_what[TG_FORMAT_COUNT] = {
#define X(id, name, what, lang, list, noun, rank, label, versioned, run_with) what,
    TG_TRACE_FORMAT_LIST(X)
#undef X
};

int tg_trace_format_parse(const char *name)
{
    for (int i = 0; name && i < TG_FORMAT_COUNT; i++)
        if (!strcmp(name, tg_trace_format_names[i])) return i;
    return -1;
}

const tg_trace_format_def *tg_trace_format_of(const char *name)
{
    if (!name) return &tg_trace_formats[TG_FORMAT_NSYS];
    int f = tg_trace_format_parse(name);
    return f < 0 ? NULL : &tg_trace_formats[f];
}

const char *tg_trace_report_suffix(const char *path)
{
#define X(suffix) suffix,
    static const char *const suffixes[] = {TG_REPORT_SUFFIX_LIST(X)};
#undef X
    for (size_t i = 0; i < sizeof suffixes / sizeof *suffixes; i++)
        if (tg_ends_with(path, suffixes[i])) return suffixes[i];
    return NULL;
}

const char *tg_trace_table_label(const tg_trace *t, tg_table_id id)
{
    if (t && t->format == TG_FORMAT_KINETO) return tg_table_kineto[id];
    return t && t->table_name[id] ? t->table_name[id] : tg_table_names[id];
}

const char *tg_trace_table_option(const tg_trace *t, tg_table_id id)
{
    return t && t->format == TG_FORMAT_KINETO ? tg_table_torch_option[id] : tg_table_option[id];
}

const char *tg_trace_table_also(const tg_trace *t, tg_table_id id)
{
    /* torch.profiler's NVTX option already says how to mark the steps */
    return id == TG_TABLE_NVTX && (!t || t->format == TG_FORMAT_NSYS) ? " and NVTX annotations in the program" : "";
}

bool tg_trace_range_profiled(const tg_trace *t, tg_table_id id, char *buf, size_t size)
{
    if (size) buf[0] = 0;
    bool ops = id == TG_TABLE_KERNEL || id == TG_TABLE_MEMCPY || id == TG_TABLE_MEMSET;
    if (!t || !ops || !t->n_profiler_ranges) return false;
    size_t rows = id == TG_TABLE_KERNEL ? t->n_kernels : id == TG_TABLE_MEMCPY ? t->n_memcpys : t->n_memsets;
    if (rows) return false;
    const char *how = "torch.profiler's experimental_config with profiler_metrics";
    if (id == TG_TABLE_KERNEL)
        snprintf(buf, size,
                 "they were recorded as %zu CUPTI range-profiler events (cuda_profiler_range, %s), which tracegate "
                 "does not read as GPU activity: they hold counters but no correlation id, no stream and no "
                 "measured times; record kernels with '%s' and without profiler_metrics",
                 t->n_profiler_ranges, how, tg_trace_table_option(t, id));
    else
        snprintf(buf, size,
                 "the capture was made with the CUPTI range profiler (%zu cuda_profiler_range events, %s), which "
                 "records counters of kernels and no %s; record them with '%s' and without profiler_metrics",
                 t->n_profiler_ranges, how, tg_table_what[id], tg_trace_table_option(t, id));
    return true;
}

const char *tg_trace_never_records(const tg_trace *t, tg_table_id id)
{
    if (!t || t->format != TG_FORMAT_KINETO) return NULL;
    switch (id) {
    case TG_TABLE_OSRT:
        return "the PyTorch profiler does not record them";
    case TG_TABLE_CALLCHAINS:
        return "tracegate reads no call stacks from a PyTorch profiler trace (with_stack=True records Python "
               "frames, not the CUDA calls' callers)";
    default:
        return NULL;
    }
}

const char *tg_trace_cite_table(const tg_trace *t, int id)
{
    if (tg_trace_formats[t->format].cite_list) return tg_trace_formats[t->format].cite_list;
    if (id < 0 || id >= TG_TABLE_COUNT) return "?";
    return t->table_name[id] ? t->table_name[id] : tg_table_names[id];
}

const char *tg_trace_rank_source(const tg_trace *t)
{
    return t->rank_source ? t->rank_source : tg_trace_formats[t->format].rank_source;
}

/* ---------------------------------------------------------------- errors */

static void vfail(tg_diag *diag, const char *path, tg_status st, const char *fmt, va_list ap)
{
    char msg[1024];
    vsnprintf(msg, sizeof msg, fmt, ap);
    tg_diag_error(diag, st, "%s: %s", path, msg);
}

static void fail(tg_diag *diag, const char *path, tg_status st, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static void fail(tg_diag *diag, const char *path, tg_status st, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vfail(diag, path, st, fmt, ap);
    va_end(ap);
}

void tg_load_fail(tg_loader *ld, tg_status st, const char *fmt, ...)
{
    if (ld->failed) return;     /* one sentence per file */
    ld->failed = true;
    va_list ap;
    va_start(ap, fmt);
    vfail(ld->diag, ld->path, st, fmt, ap);
    va_end(ap);
}

bool tg_load_oom(tg_loader *ld)
{
    tg_load_fail(ld, TG_EINTERNAL, "out of memory");
    return false;
}

void tg_load_sqlite_fail(tg_loader *ld, int rc, const char *what)
{
    switch (rc & 0xFF) {
    case SQLITE_CORRUPT:
        tg_load_fail(ld, TG_ETRACE,
                     "database disk image is malformed (%s): the export is truncated or corrupt", what);
        break;
    case SQLITE_NOTADB:
        tg_load_fail(ld, TG_ETRACE, "not an SQLite database (%s)", what);
        break;
    case SQLITE_NOMEM:
        tg_load_fail(ld, TG_EINTERNAL, "out of memory (%s)", what);
        break;
    case SQLITE_INTERRUPT:
        if (ld->budget_hit) tg_load_budget_fail(ld, what);
        else tg_load_fail(ld, TG_ETRACE, "cannot read the export (%s): interrupted", what);
        break;
    case SQLITE_TOOBIG:
        tg_load_fail(ld, TG_ETRACE,
                     "%s: a value is longer than the %d MiB tracegate reads (docs/limits.md); nsys "
                     "writes no such value, so the export is refused", what, TG_MAX_VALUE_BYTES >> 20);
        break;
    case SQLITE_IOERR:
        tg_load_fail(ld, TG_ETRACE, "read error (%s): %s; the export may be truncated", what,
                     ld->db ? sqlite3_errmsg(ld->db) : sqlite3_errstr(rc));
        break;
    default:
        tg_load_fail(ld, TG_ETRACE, "cannot read the export (%s): %s", what,
                     ld->db ? sqlite3_errmsg(ld->db) : sqlite3_errstr(rc));
        break;
    }
}

/* ---------------------------------------------------------------- file checks */

/* SQLite's lock bytes (os_unix.c): a writer holds a write lock on the
** RESERVED byte from its first write until commit. */
#define SQLITE_PENDING_BYTE 0x40000000
#define SQLITE_RESERVED_BYTE (SQLITE_PENDING_BYTE + 1)

static bool sibling_exists(const char *path, const char *suffix)
{
    char buf[4096];
    if ((size_t)snprintf(buf, sizeof buf, "%s%s", path, suffix) >= sizeof buf) return false;
    struct stat st;
    return stat(buf, &st) == 0 && st.st_size > 0;
}

/* Everything that can be said about the file before SQLite sees it; a
** file whose first bytes are gzip or JSON text is a Kineto trace
** (*kineto set), read by trace_kineto.c. This is the run's first open of
** the file: *id records it (resolved through symlinks; every later open
** must find the same file, trace_guard.c), and the sidecars a writer
** leaves are looked for beside the resolved file, where SQLite looks for
** them (docs/limits.md, "One file per run"). */
static bool check_file(const char *path, tg_diag *diag, bool *kineto, tg_file_id *id)
{
    struct stat st;
    if (stat(path, &st) != 0) {
        fail(diag, path, TG_ETRACE, "cannot open the trace: %s", strerror(errno));
        return false;
    }
    if (S_ISDIR(st.st_mode)) {
        fail(diag, path, TG_ETRACE, "is a directory, not an nsys SQLite export");
        return false;
    }
    if (!S_ISREG(st.st_mode)) {
        fail(diag, path, TG_ETRACE, "is not a regular file, so it cannot be an nsys SQLite export");
        return false;
    }
    int fd = tg_file_first_open(path, id);
    if (fd < 0) {
        fail(diag, path, TG_ETRACE, "cannot open the trace: %s", strerror(errno));
        return false;
    }
    st.st_size = (off_t)id->size;   /* the file opened, should it have been swapped since the stat */
    unsigned char header[100] = {0};
    ssize_t got = read(fd, header, sizeof header);
    if (st.st_size == 0) {
        close(fd);
        fail(diag, path, TG_ETRACE, "is empty (0 bytes), not an nsys SQLite export");
        return false;
    }
    if (got < 16 || memcmp(header, "SQLite format 3", 16) != 0) {
        close(fd);
        if (got > 0 && tg_kin_sniff_bytes(header, (size_t)got) != TG_KIN_NOT_JSON) {
            *kineto = true;
            return true;
        }
        if (tg_trace_report_suffix(path))
            fail(diag, path, TG_ETRACE,
                 "is an Nsight Systems report, not its SQLite export; run `nsys export --type sqlite %s`",
                 path);
        else
            fail(diag, path, TG_ETRACE,
                 "is not an SQLite database (no SQLite header) nor a PyTorch profiler JSON trace "
                 "(neither JSON text nor gzip)");
        return false;
    }
    /* The header's page size and page count (valid when the two change
    ** counters agree) say how long the file must be; SQLite itself reads a
    ** cut-short last page as zeros. */
    int64_t page_size = header[16] << 8 | header[17];
    if (page_size == 1) page_size = 65536;
    int64_t pages = (int64_t)header[28] << 24 | header[29] << 16 | header[30] << 8 | header[31];
    bool counted = got == (ssize_t)sizeof header && memcmp(header + 24, header + 92, 4) == 0;
    int64_t expected = counted && pages > 0 ? pages * page_size : 512;
    if (st.st_size < expected) {
        close(fd);
        fail(diag, path, TG_ETRACE,
             "database disk image is malformed (%lld bytes of the %lld its header announces): "
             "the export is truncated",
             (long long)st.st_size, (long long)expected);
        return false;
    }
    struct flock lk = {.l_type = F_WRLCK, .l_whence = SEEK_SET,
                       .l_start = SQLITE_RESERVED_BYTE, .l_len = 1};
    bool locked = fcntl(fd, F_GETLK, &lk) == 0 && lk.l_type != F_UNLCK;
    close(fd);
    if (locked) {
        fail(diag, path, TG_ETRACE,
             "is locked by a process writing to it (pid %ld); wait until the export is complete",
             (long)lk.l_pid);
        return false;
    }
    /* beside the resolved file: through a symlink, SQLite (and sqlite3)
    ** reads the -wal and rolls back the -journal beside the target */
    const char *real = id->real;
    if (sibling_exists(real, "-journal") || sibling_exists(real, "-wal")) {
        fail(diag, path, TG_ETRACE,
             "has a %s file beside it%s, so it is being written or its writer crashed; "
             "wait until the export is complete (or re-export it)",
             sibling_exists(real, "-wal") ? "-wal" : "-journal",
             strcmp(real, path) ? " (beside the file its path resolves to)" : "");
        return false;
    }
    return true;
}

/* "file:" URI with every byte outside the unreserved set percent-encoded;
** an absolute path gets an empty authority ("file:///..."). */
char *tg_trace_uri(const char *path)
{
    size_t n = strlen(path);
    char *uri = malloc(3 * n + 64);
    if (!uri) return NULL;
    char *p = uri;
    p += sprintf(p, "file:%s", path[0] == '/' ? "//" : "");
    for (const unsigned char *s = (const unsigned char *)path; *s; s++) {
        if ((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') ||
            strchr("/-._~", *s))
            *p++ = (char)*s;
        else
            p += sprintf(p, "%%%02X", *s);
    }
    strcpy(p, "?mode=ro&immutable=1");
    return uri;
}

/* ---------------------------------------------------------------- metadata */

static char *xstrdup(tg_loader *ld, const char *s)
{
    char *c = strdup(s);
    if (!c) tg_load_fail(ld, TG_EINTERNAL, "out of memory");
    return c;
}

/* EXPORT_META_DATA (<= 2024.x) or META_DATA_EXPORT (newer); neither in some
** old exports, whose versions stay NULL. */
static bool metadata_row(tg_loader *ld, const tg_row *st, void *ctx)
{
    (void)ctx;
    tg_trace *t = ld->t;
    /* whole values, as names: "2024.5\0x" is not the version 2024.5 */
    const char *name, *value;
    size_t name_len, value_len;
    char *name_owned, *value_owned = NULL;
    if (!tg_cell_text(st, COL(0), &name, &name_len, &name_owned) ||
        !tg_cell_text(st, COL(1), &value, &value_len, &value_owned)) {
        free(name_owned);
        return tg_load_oom(ld);
    }
    char **slot = !name || !value ? NULL
                : !strcmp(name, "EXPORT_PRODUCT_VERSION") ? &t->nsys_version
                : !strcmp(name, "EXPORT_SCHEMA_VERSION") ? &t->schema_version
                : !strcmp(name, "EXPORT_PRODUCT_NAME") ? &t->product_name : NULL;
    bool stored = !slot || *slot || (*slot = xstrdup(ld, value)) != NULL;
    free(name_owned);
    free(value_owned);
    return stored;
}

static bool load_metadata(tg_loader *ld)
{
    tg_trace *t = ld->t;
    const char *table = tg_load_find_table(ld, "EXPORT_META_DATA");
    if (!table) table = tg_load_find_table(ld, "META_DATA_EXPORT");
    static const tg_colspec cols[] = {{"name", NULL, true}, {"value", NULL, true}};
    bool ok = tg_load_rows(ld, table, cols, 2, metadata_row, NULL);
    if (t->schema_version &&
        sscanf(t->schema_version, "%d.%d", &t->schema_major, &t->schema_minor) != 2)
        t->schema_major = t->schema_minor = -1;
    return ok;
}

/* The first row only: false stops the read there. */
static bool session_start_row(tg_loader *ld, const tg_row *st, void *ctx)
{
    (void)ctx;
    ld->t->session_start_ns = tg_cell_i64(st, COL(0));
    return false;
}

static bool load_session_start(tg_loader *ld)
{
    static const tg_colspec cols[] = {{"utcEpochNs", NULL, false}};
    return tg_load_rows(ld, tg_load_find_table(ld, "TARGET_INFO_SESSION_START_TIME"), cols, 1, session_start_row,
                        NULL);
}

/* ---------------------------------------------------------------- finishing */

/* Widen [*first, *last] to the rows' spans. */
static void span_of(int64_t *first, int64_t *last, const void *rows, size_t n, size_t esz,
                    size_t start_off, size_t end_off)
{
    for (size_t i = 0; i < n; i++) {
        int64_t s, e;
        memcpy(&s, (const char *)rows + i * esz + start_off, sizeof s);
        memcpy(&e, (const char *)rows + i * esz + end_off, sizeof e);
        if (e == TG_NULL_I64) e = s;
        if (*first == TG_NULL_I64 || s < *first) *first = s;
        if (*last == TG_NULL_I64 || e > *last) *last = e;
    }
}

/* Order one array of rows by start and widen the loader's span to it. */
#define FINISH(arr, n, type, table)                                                                   \
    (tg_sort_rows_by_i64((void **)&(arr), &t->rows_mapped[table], (n), sizeof(type), offsetof(type, start)) && \
     (span_of(&ld->span_first, &ld->span_last, (arr), (n), sizeof(type), offsetof(type, start),              \
              offsetof(type, end)), true))

/* Sort the rows of one activity table (all but the API table) and take
** their span: done by the loader that read them, so a table read beside
** the others is finished beside them too. */
static bool finish_table(tg_loader *ld, tg_table_id id)
{
    tg_trace *t = ld->t;
    bool ok = true;
    switch (id) {
    case TG_TABLE_KERNEL:
        ok = (!t->kernels || FINISH(t->kernels, t->n_kernels, tg_kernel, id)) &&
             (!t->kspans || FINISH(t->kspans, t->n_kernels, tg_kspan, id));
        break;
    case TG_TABLE_MEMCPY: ok = FINISH(t->memcpys, t->n_memcpys, tg_memop, id); break;
    case TG_TABLE_MEMSET: ok = FINISH(t->memsets, t->n_memsets, tg_memop, id); break;
    case TG_TABLE_NVTX: ok = FINISH(t->nvtx, t->n_nvtx, tg_nvtx, id); break;
    case TG_TABLE_SYNC: ok = FINISH(t->syncs, t->n_syncs, tg_sync, id); break;
    case TG_TABLE_OVERHEAD: ok = FINISH(t->overheads, t->n_overheads, tg_overhead, id); break;
    default: break;
    }
    if (!ok) tg_load_fail(ld, TG_EINTERNAL, "out of memory");
    return ok;
}

/* The activity tables finish_table orders, in the order they are finished. */
static const tg_table_id row_tables[] = {
    TG_TABLE_KERNEL, TG_TABLE_MEMCPY, TG_TABLE_MEMSET, TG_TABLE_NVTX, TG_TABLE_SYNC, TG_TABLE_OVERHEAD,
};

void tg_load_warn_rows(tg_loader *ld, int table, const char *fields)
{
    const tg_rowstats *rs = &ld->stats[table];
    if (!rs->skipped && !rs->clamped) return;
    tg_diag_add(ld->diag, TG_DIAG_WARNING, TG_OK, (tg_pos){0}, NULL,
                "%s: %s: skipped %zu rows whose %s is missing, not a number or out of range, "
                "clamped %zu rows whose end precedes their start",
                ld->path, ld->t->table_name[table], rs->skipped, fields, rs->clamped);
}

/* After the API table is read (whole or streamed): order and span. */
static bool finish_apis(tg_loader *ld, bool span)
{
    tg_trace *t = ld->t;
    if (!tg_sort_rows_by_i64((void **)&t->apis, &t->rows_mapped[TG_TABLE_RUNTIME], t->n_apis, sizeof(tg_api),
                             offsetof(tg_api, start))) {
        tg_load_fail(ld, TG_EINTERNAL, "out of memory");
        return false;
    }
    if (span) span_of(&t->first_ns, &t->last_ns, t->apis, t->n_apis, sizeof(tg_api), offsetof(tg_api, start),
                      offsetof(tg_api, end));
    t->n_api_rows = t->n_apis;
    tg_load_warn_rows(ld, TG_TABLE_RUNTIME, "start or end");
    return true;
}

/* Every table read: the ones `done` lists were finished where they were
** read (their span in done_first/done_last), the others are now. */
static bool finish_except(tg_loader *ld, const bool *done, int64_t done_first, int64_t done_last)
{
    tg_trace *t = ld->t;
    ld->span_first = done_first;
    ld->span_last = done_last;
    for (size_t i = 0; i < sizeof row_tables / sizeof *row_tables; i++)
        if (!(done && done[row_tables[i]]) && !finish_table(ld, row_tables[i])) return false;
    t->sorted_by_start = true;
    t->first_ns = ld->span_first;
    t->last_ns = ld->span_last;
    for (int i = 0; i < TG_TABLE_COUNT; i++)
        if (i != TG_TABLE_RUNTIME) tg_load_warn_rows(ld, i, "start or end");
    return t->apis_deferred || finish_apis(ld, true);
}

static bool finish(tg_loader *ld)
{
    return finish_except(ld, NULL, TG_NULL_I64, TG_NULL_I64);
}

/* ---------------------------------------------------------------- open/close */

static bool resolve_tables(tg_loader *ld)
{
    tg_trace *t = ld->t;
    bool any = false;
    for (int i = 0; i < TG_TABLE_COUNT; i++) {
        const char *name = tg_load_find_table(ld, tg_table_names[i]);
        if (!name) continue;
        if (strcmp(name, tg_table_names[i]) == 0) {
            t->table_name[i] = tg_table_names[i];
        } else {
            int32_t id = tg_strpool_intern(t->strings, name, strlen(name));
            if (id < 0) {
                tg_load_fail(ld, TG_EINTERNAL, "out of memory");
                return false;
            }
            t->table_name[i] = tg_strpool_get(t->strings, id);
        }
        t->has_table[i] = true;
        any = true;
    }
    if (!any) {
        tg_load_fail(ld, TG_ETRACE,
                     "is an SQLite database but not an nsys export (no StringIds table and none "
                     "of the CUDA, NVTX or GPU tables)");
        return false;
    }
    return true;
}

/* ---------------------------------------------------------------- reading in parallel */

/* The kernel table is the biggest an export holds after the API table: with
** a second thread, it is read (and sorted) on a connection of its own while
** this one reads the others (docs/architecture.md, "Reading an export").
** The export is immutable for the run, so the two connections see the same
** file. What the two loaders share: the trace (each writes its own
** tables), the string pool (interning locked), the StringIds map (read
** only). The side loader reports into a diag of its own, moved into the
** trace's after the join. */

typedef struct side_load {
    tg_loader ld;
    tg_diag diag;
    bool ok;
} side_load;

static void *read_kernels(void *arg)
{
    side_load *s = arg;
    s->ok = tg_load_kernels(&s->ld) && finish_table(&s->ld, TG_TABLE_KERNEL);
    return NULL;
}

static void loader_close(tg_loader *ld)
{
    tg_load_apis_stop(ld);   /* a producer still reading: stopped, its rows dropped */
    if (ld->early) {
        ld->early->strings = (tg_idmap){0};   /* ld's, shared */
        loader_close(ld->early);
        free(ld->early);
        ld->early = NULL;
    }
    sqlite3_close(ld->db);   /* NULL-safe; nothing was written */
    ld->db = NULL;
    tg_idmap_free(&ld->strings);
    tg_load_free_tables(ld);
    free(ld->devs);
    free(ld->devs_before);
    ld->devs = ld->devs_before = NULL;
}

/* The tables after StringIds but the kernel one, in the order they have
** always been read. */
static bool load_others(tg_loader *ld)
{
    return tg_load_memcpys(ld) && tg_load_memsets(ld) && (ld->t->apis_deferred || tg_load_apis(ld)) &&
           tg_load_syncs(ld) && tg_load_overheads(ld) && tg_load_nvtx(ld);
}

static bool load_rest(tg_loader *ld)
{
    return tg_load_gpus(ld) && tg_load_processes(ld) && tg_load_host(ld, ld->host);
}

static bool load_serial(tg_loader *ld)
{
    return tg_load_kernels(ld) && load_others(ld) && load_rest(ld) && finish(ld);
}

/* A reader of the deferred API table on a third connection, its producer
** started (tg_load_apis_start) so that decoded calls queue up while the
** open and the model's first steps go on; it becomes the trace's API
** reader. Nothing happens when it cannot be set up: the table is then
** read at stream time from the open's connection. */
static void start_early_reader(tg_loader *ld, int64_t max_steps, pthread_mutex_t *lock)
{
    tg_trace *t = ld->t;
    if (!t->table_name[TG_TABLE_RUNTIME]) return;
    tg_loader *r = calloc(1, sizeof *r);
    if (!r) return;
    tg_diag scratch;
    tg_diag_init(&scratch);
    *r = (tg_loader){.t = t, .path = t->path, .diag = &scratch, .pool_lock = lock, .threads = ld->threads,
                     .sqlite_reads = ld->sqlite_reads};
    bool ok = tg_load_open(r, max_steps);
    r->strings = ld->strings;          /* read only from here on; ld's to free */
    ok = ok && tg_load_apis_start(r);
    r->pool_lock = NULL;
    r->diag = NULL;
    tg_diag_clear(&scratch);
    if (r->changed) tg_load_changed(ld);   /* not the file of the run: no fallback */
    if (!ok) {
        r->strings = (tg_idmap){0};
        loader_close(r);
        free(r);
        return;
    }
    ld->early = r;
}

/* Kernels on a side connection and thread, the other tables here; false
** (nothing started, nothing read) when the side cannot be set up: then
** the caller reads serially. */
static bool load_parallel(tg_loader *ld, int64_t max_steps, bool *ok)
{
    pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
    side_load *side = calloc(1, sizeof *side);
    if (!side) return false;
    tg_diag_init(&side->diag);
    side->ld = (tg_loader){.t = ld->t, .path = ld->path, .diag = &side->diag, .kernel_rows = ld->kernel_rows,
                           .sqlite_reads = ld->sqlite_reads,
                           .pool_lock = &lock, .span_first = TG_NULL_I64, .span_last = TG_NULL_I64};
    pthread_t th;
    if (!tg_load_open(&side->ld, max_steps)) {
        /* no second connection (out of memory, ...): read with one; but a
        ** file that is no longer the run's is read no further */
        bool changed = side->ld.changed;
        if (changed) tg_load_changed(ld);
        tg_diag_clear(&side->diag);
        loader_close(&side->ld);
        free(side);
        *ok = false;
        return changed;
    }
    side->ld.strings = ld->strings;           /* shared, read only; not the side's to free */
    ld->pool_lock = &lock;
    if (pthread_create(&th, NULL, read_kernels, side) != 0) {
        ld->pool_lock = NULL;
        side->ld.strings = (tg_idmap){0};
        tg_diag_clear(&side->diag);
        loader_close(&side->ld);
        free(side);
        return false;
    }
    bool here = load_others(ld);
    bool done[TG_TABLE_COUNT] = {false};
    ld->span_first = ld->span_last = TG_NULL_I64;
    for (size_t i = 1; here && i < sizeof row_tables / sizeof *row_tables; i++)
        here = finish_table(ld, row_tables[i]), done[row_tables[i]] = here;
    /* the API table starts streaming now, on a connection of its own,
    ** while the kernels are still being read */
    if (here && ld->t->apis_deferred) start_early_reader(ld, max_steps, &lock);
    pthread_join(th, NULL);
    ld->pool_lock = NULL;
    side->ld.strings = (tg_idmap){0};
    ld->stats[TG_TABLE_KERNEL] = side->ld.stats[TG_TABLE_KERNEL];
    if (!side->ok && !ld->failed) {
        /* the side's one sentence is the trace's */
        for (size_t i = 0; i < side->diag.n; i++)
            if (side->diag.msgs[i].level == TG_DIAG_ERROR)
                tg_diag_add(ld->diag, TG_DIAG_ERROR, side->diag.status, (tg_pos){0}, NULL, "%s",
                            side->diag.msgs[i].text);
        ld->failed = true;
    }
    done[TG_TABLE_KERNEL] = side->ok;
    ld->devs_before = side->ld.devs;
    side->ld.devs = NULL;
    /* the span of the tables both loaders finished */
    int64_t first = side->ld.span_first, last = side->ld.span_last;
    if (ld->span_first != TG_NULL_I64 && (first == TG_NULL_I64 || ld->span_first < first)) first = ld->span_first;
    if (ld->span_last != TG_NULL_I64 && (last == TG_NULL_I64 || ld->span_last > last)) last = ld->span_last;
    tg_diag_clear(&side->diag);
    loader_close(&side->ld);
    free(side);
    *ok = !ld->failed && load_rest(ld) && finish_except(ld, done, first, last);
    return true;
}

/* Below this size a second thread and connection cost more than they
** save (a 1 MiB export reads in about 10 ms; a thread and a connection
** take about half a millisecond). */
#define TG_THREADS_MIN_BYTES ((int64_t)1 << 20)

int tg_trace_read_threads(const char *path, int cores)
{
    struct stat st;
    if (cores < 2 || !path || stat(path, &st) != 0 || st.st_size < TG_THREADS_MIN_BYTES) return 1;
    return cores;
}

static bool load_all(tg_loader *ld, const tg_load_opts *opts)
{
    if (!(resolve_tables(ld) && load_metadata(ld) && load_session_start(ld) && tg_load_strings(ld))) return false;
    bool ok = false;
    if (!(opts->threads >= 2 && ld->t->table_name[TG_TABLE_KERNEL] && load_parallel(ld, opts->max_steps, &ok)))
        ok = load_serial(ld);
    return ok && tg_load_origin(ld) && tg_load_capture(ld);
}

/* A Kineto trace: every row is read in one pass (the API calls as rows,
** never deferred: the JSON cannot be read again cheaply). */
static tg_trace *open_kineto(tg_loader *ld, const tg_load_opts *opts)
{
    tg_trace *t = ld->t;
    t->format = TG_FORMAT_KINETO;
    if (!(t->product_name = strdup("PyTorch profiler (Kineto JSON)"))) {
        tg_load_fail(ld, TG_EINTERNAL, "out of memory");
        tg_trace_close(t);
        return NULL;
    }
    /* and the file is still the one the passes opened: the second half's
    ** thread opens it by path (trace_kineto.c), and a file rewritten in
    ** place is seen only here */
    bool ok = tg_kin_load(ld, opts) && finish(ld) && tg_load_same_file(ld);
    loader_close(ld);   /* the devices noted while reading, the string map */
    if (!ok) {
        tg_trace_close(t);
        return NULL;
    }
    return t;
}

tg_trace *tg_trace_open(const char *path, tg_diag *diag)
{
    static const tg_load_opts all = {.kernel_rows = true};
    return tg_trace_open_with(path, &all, diag);
}

tg_trace *tg_trace_open_with(const char *path, const tg_load_opts *opts, tg_diag *diag)
{
    static const tg_load_opts least = {0};
    if (!opts) opts = &least;
    if (!path || !*path) {
        tg_diag_error(diag, TG_ETRACE, "no trace file given");
        return NULL;
    }
    bool kineto = false;
    tg_file_id file = {0};
    if (!check_file(path, diag, &kineto, &file)) {
        tg_file_id_free(&file);
        return NULL;
    }

    tg_trace *t = calloc(1, sizeof *t);
    if (t) t->file = file;
    else tg_file_id_free(&file);
    /* TRACEGATE_READER=sqlite: every command reads through SQLite alone
    ** (docs/architecture.md, "Reading an export"; tracegate help's
    ** ENVIRONMENT), to compare when a result looks wrong */
    const char *reader = getenv("TRACEGATE_READER");
    bool sqlite_reads = opts->sqlite_reads || (reader && strcmp(reader, "sqlite") == 0);
    tg_loader ld = {.t = t, .path = path, .diag = diag, .kernel_rows = opts->kernel_rows, .threads = opts->threads,
                    .host = opts->host & TG_HOST_ALL, .sqlite_reads = sqlite_reads};
    if (!t || !(t->path = strdup(path)) || !(t->strings = tg_strpool_new())) {
        tg_diag_error(diag, TG_EINTERNAL, "%s: out of memory", path);
        tg_trace_close(t);
        return NULL;
    }
    t->schema_major = t->schema_minor = -1;
    t->rank = t->world_size = -1;
    t->first_ns = t->last_ns = t->session_start_ns = TG_NULL_I64;
    tg_capture_init(&t->capture);
    if (kineto) return open_kineto(&ld, opts);
    t->apis_deferred = opts->defer_api;
    t->sqlite_reads = sqlite_reads;

    if (tg_load_open(&ld, opts->max_steps)) load_all(&ld, opts);
    /* a file rewritten in place while its tables were read */
    if (!ld.failed) tg_load_same_file(&ld);

    if (!ld.failed && t->apis_deferred && t->table_name[TG_TABLE_RUNTIME]) {
        t->api_reader = malloc(sizeof *t->api_reader);
        if (t->api_reader && ld.early) {
            /* the reader started during the open: it takes the StringIds map */
            tg_loader *r = ld.early;
            ld.early = NULL;
            r->strings = ld.strings;
            ld.strings = (tg_idmap){0};
            t->api_reader->ld = *r;
            free(r);
            loader_close(&ld);
            return t;      /* its producer runs: its step counter is the producer's */
        }
        if (t->api_reader) {
            t->api_reader->ld = ld;
            t->api_reader->ld.path = t->path;
            t->api_reader->ld.diag = NULL;
            tg_load_watch(&t->api_reader->ld);   /* the step counter lives in the loader */
            return t;
        }
        tg_load_fail(&ld, TG_EINTERNAL, "out of memory");
    }
    t->apis_deferred = false;    /* no API table: nothing to wait for */
    loader_close(&ld);
    if (ld.failed) {
        tg_trace_close(t);
        return NULL;
    }
    return t;
}

/* The deferred API table is read once: whole, or streamed. */
static tg_loader *reader_begin(tg_trace *t, tg_diag *diag)
{
    if (!t->api_reader) return NULL;
    tg_loader *ld = &t->api_reader->ld;
    ld->diag = diag;
    ld->failed = false;
    tg_rows_free(t->apis, t->rows_mapped[TG_TABLE_RUNTIME]);
    t->apis = NULL;
    t->n_apis = 0;
    t->rows_mapped[TG_TABLE_RUNTIME] = 0;
    ld->stats[TG_TABLE_RUNTIME] = (tg_rowstats){0};
    ld->apis_visited = 0;
    return ld;
}

static void reader_end(tg_trace *t)
{
    if (!t->api_reader) return;
    loader_close(&t->api_reader->ld);
    free(t->api_reader);
    t->api_reader = NULL;
    t->apis_deferred = false;
}

tg_stream_status tg_trace_stream_apis(tg_trace *t, const tg_api_reader_cb *cb, tg_diag *diag)
{
    tg_loader *ld = reader_begin(t, diag);
    if (!ld) return t->apis_deferred ? TG_STREAM_FAILED : TG_STREAM_DONE;
    int rc = tg_load_apis_with(ld, cb);
    if (rc < 0) return TG_STREAM_STOPPED;     /* the reader stays open for tg_trace_load_apis */
    bool ok = rc > 0 && finish_apis(ld, false) && tg_load_same_file(ld);
    t->n_api_rows = ld->apis_visited;
    t->apis_partial = ld->apis_visited != t->n_apis;
    reader_end(t);
    return ok ? TG_STREAM_DONE : TG_STREAM_FAILED;
}

bool tg_trace_load_apis(tg_trace *t, tg_diag *diag)
{
    tg_loader *ld = reader_begin(t, diag);
    if (!ld && t->apis_partial) {
        tg_diag_error(diag, TG_EINTERNAL, "%s: the API table was streamed once already; open the trace again "
                      "to read it whole", t->path);
        return false;
    }
    if (!ld) return !t->apis_deferred;
    bool ok = tg_load_apis(ld) && finish_apis(ld, true) && tg_load_same_file(ld);
    t->apis_partial = false;
    reader_end(t);
    return ok;
}

void tg_trace_close(tg_trace *t)
{
    if (!t) return;
    free(t->path);
    free(t->nsys_version);
    free(t->schema_version);
    free(t->product_name);
    free(t->host);
    free(t->job);
    tg_capture_free(&t->capture);
    tg_strpool_free(t->strings);
    reader_end(t);
    tg_file_id_free(&t->file);    /* after the API reader's thread stopped: it reads it */
    tg_trace_drop_rows(t);
    free(t);
}

void tg_trace_drop_rows(tg_trace *t)
{
    tg_rows_free(t->kernels, t->rows_mapped[TG_TABLE_KERNEL]);
    tg_rows_free(t->kspans, t->rows_mapped[TG_TABLE_KERNEL]);
    tg_rows_free(t->memcpys, t->rows_mapped[TG_TABLE_MEMCPY]);
    tg_rows_free(t->memsets, t->rows_mapped[TG_TABLE_MEMSET]);
    tg_rows_free(t->apis, t->rows_mapped[TG_TABLE_RUNTIME]);
    tg_rows_free(t->nvtx, t->rows_mapped[TG_TABLE_NVTX]);
    tg_rows_free(t->syncs, t->rows_mapped[TG_TABLE_SYNC]);
    tg_rows_free(t->overheads, t->rows_mapped[TG_TABLE_OVERHEAD]);
    free(t->gpus);
    free(t->processes);
    tg_rows_free(t->osrts, t->rows_mapped[TG_TABLE_OSRT]);
    tg_rows_free(t->libcalls[TG_LIB_CUDNN], t->rows_mapped[TG_TABLE_CUDNN]);
    tg_rows_free(t->libcalls[TG_LIB_CUBLAS], t->rows_mapped[TG_TABLE_CUBLAS]);
    for (int i = 0; i < TG_STACKS_COUNT; i++) free(t->frames[i]);
    free(t->threads);
    t->osrts = NULL; t->n_osrts = 0; t->threads = NULL; t->n_threads = 0;
    for (int i = 0; i < TG_LIB_COUNT; i++) t->libcalls[i] = NULL, t->n_libcalls[i] = 0;
    for (int i = 0; i < TG_STACKS_COUNT; i++) t->frames[i] = NULL, t->n_frames[i] = 0;
    t->host_loaded = 0;
    t->kernels = NULL; t->kspans = NULL; t->memcpys = t->memsets = NULL; t->apis = NULL;
    t->nvtx = NULL; t->syncs = NULL; t->overheads = NULL; t->gpus = NULL; t->processes = NULL;
    t->n_kernels = t->n_memcpys = t->n_memsets = t->n_apis = t->n_nvtx = t->n_syncs = t->n_overheads = 0;
    t->n_gpus = t->n_processes = 0;
    memset(t->rows_mapped, 0, sizeof t->rows_mapped);
}

/* ---------------------------------------------------------------- memory estimate */

/* One integer out of a query, -1 when it fails (a missing column, ...). */
static int64_t query_i64(sqlite3 *db, const char *sql)
{
    sqlite3_stmt *st = NULL;
    int64_t v = -1;
    if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW)
        v = sqlite3_column_type(st, 0) == SQLITE_NULL ? 0 : sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    return v;
}

/* total plus the bytes table i takes to load at row_bytes a row; -1 when
** that cannot be known here (a table the load will refuse, a read over the
** budget: the load itself then says why). */
static double add_table_estimate(tg_loader *ld, int i, size_t row_bytes, double total)
{
    const char *name = tg_load_find_table(ld, tg_table_names[i]);
    if (!name || !row_bytes) return total;
    if (!tg_load_check_table(ld, name)) return -1;
    char sql[512];
    snprintf(sql, sizeof sql, "SELECT count(*) FROM \"%s\"", name);
    int64_t rows = query_i64(ld->db, sql);
    if (ld->budget_hit) return -1;
    if (rows < 0) return total;
    total += (double)rows * (double)row_bytes;
    /* names are interned: their text is held once more */
    const char *text_col = i == TG_TABLE_STRINGS ? "value" : i == TG_TABLE_NVTX ? "text" : NULL;
    if (text_col) {
        snprintf(sql, sizeof sql, "SELECT sum(length(\"%s\")) FROM \"%s\"", text_col, name);
        int64_t chars = query_i64(ld->db, sql);
        if (ld->budget_hit) return -1;
        if (chars > 0) total += 1.5 * (double)chars;
    }
    return total;
}

/* Bytes per loaded row: the row struct twice (the array with its growth
** slack, the stable sort's copy) plus the model's per-op arrays; names
** once more for the string pool and its hash. Calibrated against peak RSS
** of check, info and metrics on the shared corpus (RSS 0.4-0.7x of the
** estimate: small exports are dominated by the fixed part) and on a
** one-million-range NVTX export (0.75-0.95x). */
/* A Kineto trace: 8 MiB plus its JSON text (tg_kin_input_size: for gzip,
** never less than the compressed size times TG_KIN_GZIP_RATIO), five
** eighths of it for gzip. A trace of nothing but kernels and launches
** holds about that much (its rows and names, measured by the reader's
** meter; a plain file over 16 MiB also holds its second half's record);
** real captures a tenth to a half of it (most events are cpu_op and
** python_function, never loaded): docs/limits.md has the figures. The
** reader's meter holds the limit where this misjudges. -2 when PATH is
** not JSON or gzip. */
static int64_t kineto_estimate(const char *path)
{
    unsigned char head[64];
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return -2;
    ssize_t got = read(fd, head, sizeof head);
    close(fd);
    if (got <= 0 || (got >= 16 && memcmp(head, "SQLite format 3", 16) == 0) ||
        tg_kin_sniff_bytes(head, (size_t)got) == TG_KIN_NOT_JSON)
        return -2;
    int64_t text = tg_kin_input_size(path);
    if (text < 0) return -1;
    /* gzip: one parser, its rows; a big plain file: also the second half's record */
    int64_t rows = tg_kin_sniff_bytes(head, (size_t)got) == TG_KIN_GZIP ? text / 8 * 5 : text;
    return rows > INT64_MAX - 8 * 1024 * 1024 ? INT64_MAX : 8 * 1024 * 1024 + rows;
}

int64_t tg_trace_estimate_bytes(const char *path)
{
    return tg_trace_estimate_bytes_with(path, NULL);
}

int64_t tg_trace_estimate_bytes_with(const char *path, const tg_load_opts *opts)
{
    static const tg_load_opts all = {.kernel_rows = true};
    if (!opts) opts = &all;
    size_t row_bytes[TG_TABLE_COUNT] = {
        [TG_TABLE_KERNEL] = sizeof(tg_kernel) * 2 + 64, [TG_TABLE_MEMCPY] = sizeof(tg_memop) * 2 + 64,
        [TG_TABLE_MEMSET] = sizeof(tg_memop) * 2 + 64,  [TG_TABLE_RUNTIME] = sizeof(tg_api) * 2 + 32,
        [TG_TABLE_SYNC] = sizeof(tg_sync) * 2,          [TG_TABLE_NVTX] = sizeof(tg_nvtx) * 2 + 48,
        [TG_TABLE_GPU] = sizeof(tg_gpu) * 2,            [TG_TABLE_OVERHEAD] = sizeof(tg_overhead) * 2 + 32,
        [TG_TABLE_STRINGS] = 64,
    };
    /* A lean load (measured on 10M kernels: RSS 0.86x of this): a kernel
    ** is a tg_kspan (big tables are sorted by page moves, not a copy) plus
    ** its slot in the launch join's index and its queue time, a copy or
    ** memset its row and its slot, and a streamed call nothing once
    ** visited. */
    /* the host side only when asked for (docs/host.md) */
    if (opts->host & TG_HOST_OSRT) row_bytes[TG_TABLE_OSRT] = sizeof(tg_osrt) * 2 + 16;
    if (opts->host & TG_HOST_STACKS)
        row_bytes[TG_TABLE_CALLCHAINS] = row_bytes[TG_TABLE_OSRT_CALLCHAINS] = sizeof(tg_frame) * 2;
    if (opts->host & TG_HOST_LIBRARIES)
        row_bytes[TG_TABLE_CUDNN] = row_bytes[TG_TABLE_CUBLAS] = sizeof(tg_libcall) * 2 + 16;
    if (!opts->kernel_rows) row_bytes[TG_TABLE_KERNEL] = sizeof(tg_kspan) + 24;
    if (opts->defer_api) {
        row_bytes[TG_TABLE_RUNTIME] = 0;
        row_bytes[TG_TABLE_MEMCPY] = row_bytes[TG_TABLE_MEMSET] = sizeof(tg_memop) + 24;
    }
    struct stat st;
    if (stat(path, &st) != 0 || !S_ISREG(st.st_mode)) return -1;
    int64_t json = kineto_estimate(path);
    if (json != -2) return json;
    tg_diag scratch;
    tg_diag_init(&scratch);
    tg_loader ld = {.path = path, .diag = &scratch};
    double total = -1;
    if (tg_load_open(&ld, opts->max_steps)) {
        total = 8.0 * 1024 * 1024;   /* the binary, SQLite's cache, reports */
        for (int i = 0; total >= 0 && i < TG_TABLE_COUNT; i++)
            total = add_table_estimate(&ld, i, row_bytes[i], total);
        /* read by two threads: the streamed calls queued ahead of their visit */
        if (total >= 0 && opts->threads >= 2 && opts->defer_api) total += (double)TG_API_QUEUE_BYTES;
    }
    sqlite3_close(ld.db);
    tg_load_free_tables(&ld);
    tg_diag_clear(&scratch);
    return total < 0 ? -1 : total > 9e18 ? INT64_MAX : (int64_t)total;
}

bool tg_trace_fits(const char *path, int64_t max_bytes, tg_diag *diag)
{
    return tg_trace_fits_with(path, NULL, max_bytes, diag);
}

bool tg_trace_fits_with(const char *path, const tg_load_opts *opts, int64_t max_bytes, tg_diag *diag)
{
    if (max_bytes <= 0) return true;
    int64_t need = tg_trace_estimate_bytes_with(path, opts);
    if (need < 0 || need <= max_bytes) return true;
    char limit[32], estimate[32];
    tg_format_size(max_bytes, limit, sizeof limit);
    tg_format_size(need, estimate, sizeof estimate);
    fail(diag, path, TG_ETRACE, TG_MAX_MEMORY_SENTENCE, limit, "about", estimate);
    return false;
}
