/*
** Test fixtures in the nsys export layout, generated from SQL at test time
** (never copied from ../shared/traces). Owned by the trace tests; used by
** every suite that needs a small trace on disk.
*/
#ifndef TG_FIXTURE_H
#define TG_FIXTURE_H

/* CREATE TABLE statements of the main tables of an export of a given shape. */
extern const char *const tg_fixture_schema_3_0;   /* nsys 2022.4, EXPORT_META_DATA */
extern const char *const tg_fixture_schema_2_9;   /* nsys 2022.1, no ENUM label column */
extern const char *const tg_fixture_schema_3_25;  /* nsys 2026.2, META_DATA_EXPORT */

/* Write a fresh SQLite file from the given SQL (schema + inserts) into a
** temporary directory; returns its malloc'd path, or NULL on error. */
char *tg_fixture_from_sql(const char *sql);
/* Same, with a schema prefix followed by rows. */
char *tg_fixture_build(const char *schema_sql, const char *rows_sql);
/* Remove the file (and its directory) and free the path. */
void tg_fixture_remove(char *path);

#endif
