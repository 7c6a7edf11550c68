/*
** The history's stores (docs/history.md, "Stores"): one table of functions,
** one row per database (store_sqlite.c, store_pg.c). history_store.c writes
** the schema and every query once, in the SQL both speak, with parameters
** as $1, $2, ... (the SQLite row binds them as ?1, ?2, ...) and every value
** passed and returned as text (NULL as a null pointer): a double as
** "%.17g", an integer in decimal. The rows hold no SQL of their own beyond
** how a transaction begins.
*/
#ifndef TG_HISTORY_STORE_H
#define TG_HISTORY_STORE_H

#include "../common/common.h"

typedef struct tg_store tg_store;   /* a backend's connection */

/* One row of a result: n columns, text or NULL. Return false when out
** of memory: the query then fails (TG_EINTERNAL). */
typedef bool (*tg_store_row_fn)(void *ctx, size_t n, const char *const *cols);

typedef struct tg_store_ops {
    const char *name;           /* "sqlite", "postgresql" */
    /* Does db name this store? ("postgresql://", "postgres://" for the
    ** PostgreSQL row; the SQLite row takes the rest.) */
    bool (*claims)(const char *db);
    /* The name messages give db, the history's name (tg_history_name):
    ** the password of a URI this row reads masked as the row reads it.
    ** malloc'd; NULL when out of memory. A NULL member: db as given. */
    char *(*shown)(const char *db);
    /* Connect. create: WRITE mode (an SQLite file may be created). A
    ** failure is one sentence naming db (the library's words after it);
    ** *exists false when the database holds no table at all (a new
    ** history may be made there). NULL on error. */
    tg_store *(*open)(const char *db, bool create, bool *exists, tg_diag *diag);
    void (*close)(tg_store *s);
    /* BEGIN for a writer that must see every other writer's commit before
    ** it reads (SQLite: BEGIN IMMEDIATE with a busy timeout; PostgreSQL:
    ** BEGIN and the writers' advisory transaction lock, which needs no
    ** table, with lock_timeout). */
    tg_status (*begin_write)(tg_store *s, tg_diag *diag);
    tg_status (*begin_read)(tg_store *s, tg_diag *diag);
    tg_status (*commit)(tg_store *s, tg_diag *diag);
    void (*rollback)(tg_store *s);
    /* Run one statement with n params; each row of its result goes to
    ** row (may be NULL). Errors are one sentence in diag (TG_EUSAGE for
    ** a constraint, a lock or a read-only database; TG_EINTERNAL else). */
    tg_status (*exec)(tg_store *s, const char *sql, const char *const *params, size_t n, tg_store_row_fn row,
                      void *ctx, tg_diag *diag);
    /* Run several statements without params or results (the schema). */
    tg_status (*script)(tg_store *s, const char *sql, tg_diag *diag);
    /* The one query of the database's own catalog: the names of the
    ** tables it holds, one per row, for the sentence that refuses a
    ** database that holds tables but is no history ("it holds other
    ** tables: ..."); NULL: that sentence names none. */
    const char *tables_sql;
} tg_store_ops;

/* The rows, in the order claims is asked: PostgreSQL first, SQLite last
** (it takes any other name). */
extern const tg_store_ops tg_store_pg_ops;
extern const tg_store_ops tg_store_sqlite_ops;
const tg_store_ops *tg_store_for(const char *db);

/* The settings of the rows, from the environment (history_store.c). */
#define TG_STORE_BUSY_MS_DEFAULT 60000   /* TG_HISTORY_BUSY_MS unset or empty */
#define TG_STORE_BUSY_MS_MAX 86400000    /* a day */

/* A whole number in [lo, hi] from environment variable name, def when it
** is unset or empty; false with one sentence naming it ("... must be a
** whole number of <unit> from lo to hi, not '...'") when it is anything
** else. */
bool tg_store_env_long(const char *name, long def, long lo, long hi, const char *unit, long *out, tg_diag *diag);

/* TG_HISTORY_BUSY_MS: how long a writer waits for another writer's lock,
** in milliseconds, the same rule for every row (tg_store_env_long). */
bool tg_store_busy_ms(long *out, tg_diag *diag);

#endif
