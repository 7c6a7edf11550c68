/*
** Running a finding's reproduce text the way a reviewer does with
** `sqlite3 -readonly -header EXPORT "..."` (docs/evidence.md): every
** statement in order, on the export opened read-only and immutable, and
** the rows of each statement that returns any, as JSON. `matches`
** compiles to REGEXP, which the sqlite3 shell provides; here it is POSIX
** ERE, as the rule language's own.
*/
#ifndef TG_TEST_SQLRUN_H
#define TG_TEST_SQLRUN_H

#include <jansson.h>
#include <stdbool.h>

/* An array of result sets, each an array of {column: value} objects (only
** statements that return columns give a set). NULL with the SQLite error
** (and the failing statement's start) in err when a statement fails. */
json_t *sqlrun(const char *export_path, const char *sql, char *err, size_t err_size);

/* Whether a number or string of the finding (want) agrees with what the
** SQL gave (got): integers exactly, other numbers within rel (relative),
** strings and nulls exactly. */
bool sqlrun_agrees(const json_t *want, const json_t *got, double rel);

#endif
