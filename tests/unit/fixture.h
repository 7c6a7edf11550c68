/*
** Test fixtures in the nsys export layout, generated from SQL at test time
** (never copied from ../shared/traces). Owned by the trace tests; used by
** every suite that needs a small trace on disk.
**
** A shape string creates the tables tracegate reads, with the column lists
** of a real export of that nsys version (names, types, NOT NULL), fills the
** ENUM tables as that version does and records its versions in the
** metadata table. NOT NULL columns other than start/end carry DEFAULT 0
** ('' for text) so an INSERT names only the columns a test cares about:
**
**   char *path = tg_fixture_build(tg_fixture_schema_3_0,
**       "INSERT INTO StringIds VALUES (1, 'saxpy'), (2, 'cudaLaunchKernel');"
**       "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL (start, end, deviceId, streamId,"
**       "  correlationId, globalPid, demangledName, shortName)"
**       "  VALUES (1000, 2000, 0, 7, 42, 1234 << 24, 1, 1);");
**   tg_trace *t = tg_trace_open(path, &diag);
**   ...
**   tg_fixture_remove(path);
**
** Drift between shapes: 2.9 (nsys 2022.1) has no ENUM tables at all and
** records its versions in EXPORT_META_DATA; 3.0 (nsys 2022.4) adds the
** ENUM tables (columns id, name, label); 3.25 (nsys 2026.2) moves the
** metadata to META_DATA_EXPORT (+ META_DATA_CAPTURE) and adds columns
** (greenContextId, copyCount, cluster*, deprecatedSyncType, binaryData, ...).
*/
#ifndef TG_FIXTURE_H
#define TG_FIXTURE_H

#include <stdbool.h>
#include <stdint.h>

/* CREATE TABLE statements of the main tables of an export of a given shape,
** plus the ENUM rows and the metadata rows of that version. */
extern const char *const tg_fixture_schema_3_0;   /* nsys 2022.4.2, EXPORT_META_DATA */
extern const char *const tg_fixture_schema_2_9;   /* nsys 2022.1.3, no ENUM tables */
extern const char *const tg_fixture_schema_3_25;  /* nsys 2026.2.1, META_DATA_EXPORT */

/* Write a fresh SQLite file from the given SQL (schema + inserts) into a
** new temporary directory ($TMPDIR or /tmp); returns its malloc'd path, or
** NULL on error (the SQLite error is printed to stderr: tests only). */
char *tg_fixture_from_sql(const char *sql);
/* Same, with a schema prefix followed by rows (rows_sql may be NULL). */
char *tg_fixture_build(const char *schema_sql, const char *rows_sql);
/* Remove the fixture's directory with everything in it (tests may put more
** files beside the trace) and free the path. NULL-safe; a path outside a
** tg-fixture-* directory is only freed, never deleted. */
void tg_fixture_remove(char *path);

/* Append printf-formatted SQL to *sql (malloc'd, NULL to start); for tests
** that generate many rows. Returns false when out of memory. */
bool tg_fixture_append(char **sql, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Serialized GlobalIds as nsys writes them (pid in bits 24..47). */
static inline int64_t tg_fixture_gpid(int64_t pid) { return pid << 24; }
static inline int64_t tg_fixture_gtid(int64_t pid, int64_t tid) { return (pid << 24) | tid; }

#endif
