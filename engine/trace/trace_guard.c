/*
** What a read connection to an export allows (docs/limits.md, "Reading an
** export"). An export is a file someone else wrote, and SQLite runs code
** stored in it: a view is a query (a recursive one never ends), a virtual
** table is a module, a generated column is an expression evaluated on
** every read, and the schema itself is parsed in time that grows with the
** square of its entries. nsys writes none of these: plain tables, about a
** hundred schema entries. So a connection opened here
**
**   - refuses, by name, any table the trace layer reads that is a view, a
**     virtual table or has a generated column among the columns read
**     (tg_load_check_table, called by tg_row_open for every read);
**   - runs with SQLite's defensive settings: an untrusted schema (no
**     function with side effects in it), views and triggers disabled;
**   - caps any one value at TG_MAX_VALUE_BYTES;
**   - counts SQLite's virtual-machine steps through a progress handler:
**     TG_SCHEMA_STEPS for parsing and listing the schema, then a read
**     budget proportional to the file's size (TG_STEPS_PER_BYTE; a plain
**     table costs steps in proportion to its bytes, whatever they hold).
**     A connection over its budget is interrupted and the load fails with
**     one sentence saying which budget ran out, status TG_ETRACE.
*/
#include "trace_int.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* The progress handler runs every this many virtual-machine steps. */
#define PROGRESS_PERIOD 1000

/* ---------------------------------------------------------------- budget */

static int on_progress(void *arg)
{
    tg_loader *ld = arg;
    ld->steps += PROGRESS_PERIOD;
    if (ld->steps <= ld->step_budget) return 0;
    ld->budget_hit = true;
    return 1;   /* SQLite stops the statement with SQLITE_INTERRUPT */
}

void tg_load_watch(tg_loader *ld)
{
    sqlite3_progress_handler(ld->db, PROGRESS_PERIOD, on_progress, ld);
}

int64_t tg_load_read_budget(int64_t file_bytes)
{
    if (file_bytes < 0) file_bytes = 0;
    if (file_bytes > INT64_MAX / TG_STEPS_PER_BYTE / 2) return INT64_MAX / 2;
    int64_t b = file_bytes * TG_STEPS_PER_BYTE;
    return b < TG_MIN_READ_STEPS ? TG_MIN_READ_STEPS : b;
}

void tg_load_budget_fail(tg_loader *ld, const char *what)
{
    if (ld->reading)
        tg_load_fail(ld, TG_ETRACE,
                     "%s took more than the %lld million SQLite steps allowed for a file of this size "
                     "(%d per byte, docs/limits.md): the export makes SQLite run away instead of reading "
                     "its tables, so it is refused",
                     what, (long long)(ld->step_budget / 1000000), TG_STEPS_PER_BYTE);
    else
        tg_load_fail(ld, TG_ETRACE,
                     "its schema took more than the %d SQLite steps allowed for reading it "
                     "(docs/limits.md; nsys writes about a hundred tables): the export holds tens of "
                     "thousands of schema entries or more, so it is refused",
                     TG_SCHEMA_STEPS);
}

/* ---------------------------------------------------------------- one file per run */

/*
** A run opens its trace many times: the file check, up to three SQLite
** connections, the direct reader once per table, the reopen for host-side
** tables; a Kineto trace once per pass and once more for its second half.
** A file replaced by a rename between two of them (rsync, copy-then-move,
** a retry writing the same name) or rewritten in place would be read half
** from each. So the first open (tg_file_first_open, by the file check)
** resolves the path and records the file's device, inode, size and
** modification time from fstat of the descriptor it opened, and every
** later open goes through here and must find the same (docs/limits.md,
** "One file per run").
*/

static void id_of(const struct stat *st, tg_file_id *id)
{
    id->dev = (uint64_t)st->st_dev;
    id->ino = (uint64_t)st->st_ino;
    id->size = (int64_t)st->st_size;
    id->mtime_s = (int64_t)st->st_mtim.tv_sec;
    id->mtime_ns = (int64_t)st->st_mtim.tv_nsec;
}

static bool same_id(const tg_file_id *id, const struct stat *st)
{
    tg_file_id now = {0};
    id_of(st, &now);
    return now.dev == id->dev && now.ino == id->ino && now.size == id->size && now.mtime_s == id->mtime_s &&
           now.mtime_ns == id->mtime_ns;
}

const tg_file_id *tg_load_file(const tg_loader *ld)
{
    return ld->t && ld->t->file.set ? &ld->t->file : NULL;
}

const char *tg_load_file_path(const tg_loader *ld)
{
    const tg_file_id *id = tg_load_file(ld);
    return id ? id->real : ld->path;
}

int tg_file_first_open(const char *path, tg_file_id *id)
{
    *id = (tg_file_id){0};
    char *real = realpath(path, NULL);
    if (!real) return -1;
    int fd = open(real, O_RDONLY | O_CLOEXEC);
    struct stat st;
    if (fd >= 0 && fstat(fd, &st) != 0) {
        int e = errno;
        close(fd);
        fd = -1;
        errno = e;
    }
    if (fd < 0) {
        int e = errno;
        free(real);
        errno = e;
        return -1;
    }
    id_of(&st, id);
    id->real = real;
    id->set = true;
    return fd;
}

void tg_file_id_free(tg_file_id *id)
{
    free(id->real);
    *id = (tg_file_id){0};
}

int tg_file_open(const tg_file_id *id, const char *path)
{
    bool checked = id && id->set;
    int fd = open(checked ? id->real : path, O_RDONLY | O_CLOEXEC);
    if (fd < 0 || !checked) return fd;
    struct stat st;
    if (fstat(fd, &st) == 0 && same_id(id, &st)) return fd;
    close(fd);
    return TG_FILE_CHANGED;
}

void tg_load_changed(tg_loader *ld)
{
    tg_load_fail(ld, TG_ETRACE,
                 "the file changed while tracegate was reading it (replaced or rewritten); "
                 "re-run on a stable copy");
    ld->changed = true;
}

bool tg_load_same_file(tg_loader *ld)
{
    const tg_file_id *id = tg_load_file(ld);
    struct stat st;
    if (!id || (stat(id->real, &st) == 0 && same_id(id, &st))) return true;
    tg_load_changed(ld);
    return false;
}

/* ---------------------------------------------------------------- opening */

bool tg_load_open(tg_loader *ld, int64_t max_steps)
{
    const tg_file_id *id = tg_load_file(ld);
    struct stat st;
    int64_t file_bytes = id ? id->size : stat(ld->path, &st) == 0 ? (int64_t)st.st_size : 0;
    char *uri = tg_trace_uri(tg_load_file_path(ld));
    /* NOMUTEX: the connection never leaves this thread (a deferred API
    ** table is read by the thread that builds the model), and the per-call
    ** mutex is a tenth of the load time on big tables. */
    int flags = SQLITE_OPEN_READONLY | SQLITE_OPEN_URI | SQLITE_OPEN_NOMUTEX;
    int rc = uri ? sqlite3_open_v2(uri, &ld->db, flags, NULL) : SQLITE_NOMEM;
    free(uri);
    if (rc != SQLITE_OK) {
        tg_load_sqlite_fail(ld, rc, "opening it read-only");
        return false;
    }
    /* SQLite opened the file in sqlite3_open_v2: what the path names now
    ** is what it reads (a file swapped in before is seen here) */
    if (!tg_load_same_file(ld)) return false;
    sqlite3_db_config(ld->db, SQLITE_DBCONFIG_TRUSTED_SCHEMA, 0, NULL);
    sqlite3_db_config(ld->db, SQLITE_DBCONFIG_DEFENSIVE, 1, NULL);
    sqlite3_db_config(ld->db, SQLITE_DBCONFIG_ENABLE_VIEW, 0, NULL);
    sqlite3_db_config(ld->db, SQLITE_DBCONFIG_ENABLE_TRIGGER, 0, NULL);
    sqlite3_limit(ld->db, SQLITE_LIMIT_LENGTH, TG_MAX_VALUE_BYTES);
    ld->steps = 0;
    ld->step_budget = TG_SCHEMA_STEPS;
    ld->reading = false;
    tg_load_watch(ld);
    if (!tg_load_list_tables(ld)) return false;
    ld->reading = true;
    ld->steps = 0;
    ld->step_budget = max_steps > 0 ? max_steps : tg_load_read_budget(file_bytes);
    return true;
}

/* ---------------------------------------------------------------- tables */

bool tg_load_list_tables(tg_loader *ld)
{
    sqlite3_stmt *st = NULL;
    int rc = sqlite3_prepare_v2(ld->db,
        "SELECT name, type = 'view' FROM sqlite_master WHERE type IN ('table', 'view')", -1, &st, NULL);
    if (rc != SQLITE_OK) {
        tg_load_sqlite_fail(ld, rc, "reading the list of tables");
        return false;
    }
    size_t cap = 0, view_cap = 0, n_views = 0;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        const char *name = (const char *)sqlite3_column_text(st, 0);
        if (!name) continue;
        char *copy = strdup(name);
        bool view = sqlite3_column_int(st, 1) != 0;
        if (!copy || !TG_PUSH(ld->table_list, ld->n_tables, cap, copy)) {
            free(copy);
            rc = SQLITE_NOMEM;
            break;
        }
        if (!TG_PUSH(ld->table_is_view, n_views, view_cap, view)) {
            rc = SQLITE_NOMEM;
            break;
        }
    }
    sqlite3_finalize(st);
    if (rc == SQLITE_NOMEM) tg_load_fail(ld, TG_EINTERNAL, "out of memory");
    else if (rc != SQLITE_DONE) tg_load_sqlite_fail(ld, rc, "reading the list of tables");
    return !ld->failed;
}

void tg_load_free_tables(tg_loader *ld)
{
    for (size_t i = 0; i < ld->n_tables; i++) free(ld->table_list[i]);
    free(ld->table_list);
    free(ld->table_is_view);
    ld->table_list = NULL;
    ld->table_is_view = NULL;
    ld->n_tables = 0;
}

static bool is_view(const tg_loader *ld, const char *table)
{
    for (size_t i = 0; i < ld->n_tables; i++)
        if (strcmp(ld->table_list[i], table) == 0) return ld->table_is_view[i];
    return false;
}

/* What the table is, as SQLite's schema knows it: "table", "virtual",
** "shadow" (a virtual table's storage), or NULL (diag set) with *without_rowid. */
static char *table_type(tg_loader *ld, const char *table, bool *without_rowid)
{
    sqlite3_stmt *st = NULL;
    int rc = sqlite3_prepare_v2(ld->db, "SELECT type, wr FROM pragma_table_list(?1)", -1, &st, NULL);
    if (rc == SQLITE_OK) rc = sqlite3_bind_text(st, 1, table, -1, SQLITE_STATIC);
    char *type = NULL;
    if (rc == SQLITE_OK && (rc = sqlite3_step(st)) == SQLITE_ROW) {
        const char *t = (const char *)sqlite3_column_text(st, 0);
        *without_rowid = sqlite3_column_int(st, 1) != 0;
        type = strdup(t ? t : "");
        rc = type ? SQLITE_OK : SQLITE_NOMEM;
    } else if (rc == SQLITE_DONE) {
        type = strdup("table");   /* not listed: SQLite's prepare will say what is wrong */
        rc = type ? SQLITE_OK : SQLITE_NOMEM;
    }
    sqlite3_finalize(st);
    if (rc == SQLITE_NOMEM) tg_load_fail(ld, TG_EINTERNAL, "out of memory");
    else if (rc != SQLITE_OK) tg_load_sqlite_fail(ld, rc, "reading the list of tables");
    return rc == SQLITE_OK ? type : NULL;
}

bool tg_load_check_table(tg_loader *ld, const char *table)
{
    /* A view is told from sqlite_master alone: asking SQLite more about it
    ** would compile its query. */
    const char *what = NULL;
    bool without_rowid = false;
    char *type = is_view(ld, table) ? NULL : table_type(ld, table, &without_rowid);
    if (!type && ld->failed) return false;
    if (!type)
        what = "a view (a query stored in the file), not a table";
    else if (strcmp(type, "virtual") == 0)
        what = "a virtual table (rows made by a module, not stored), not a table";
    else if (strcmp(type, "table") != 0)
        what = "a virtual table's storage, not a table";
    else if (without_rowid)
        what = "a WITHOUT ROWID table, whose rows have no rowid to cite as evidence";
    free(type);
    if (!what) return true;
    tg_load_fail(ld, TG_ETRACE,
                 "%s is %s: nsys writes its data to plain tables, and tracegate reads nothing else "
                 "(docs/limits.md)", table, what);
    return false;
}

bool tg_load_check_column(tg_loader *ld, const char *table, const char *column, int hidden)
{
    /* pragma table_xinfo: 2 a VIRTUAL generated column (computed on every
    ** read), 3 a STORED one (computed when written), 1 a virtual table's
    ** hidden column. */
    if (hidden == 0) return true;
    tg_load_fail(ld, TG_ETRACE,
                 "column '%s' of %s is %s, not a stored value: nsys writes plain columns, and "
                 "tracegate reads nothing else (docs/limits.md)",
                 column, table, hidden == 1 ? "a hidden column" : "generated by an expression stored in the file");
    return false;
}
