/* Running reproduce SQL on an export (sqlrun.h). */
#include "sqlrun.h"

#include <math.h>
#include <regex.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* regexp(pattern, text): the rule language's POSIX ERE. */
static void regexp_fn(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
    (void)argc;
    const char *pattern = (const char *)sqlite3_value_text(argv[0]);
    const char *text = (const char *)sqlite3_value_text(argv[1]);
    if (!pattern || !text) {
        sqlite3_result_null(ctx);
        return;
    }
    regex_t re;
    if (regcomp(&re, pattern, REG_EXTENDED | REG_NOSUB) != 0) {
        sqlite3_result_error(ctx, "bad regular expression", -1);
        return;
    }
    sqlite3_result_int(ctx, regexec(&re, text, 0, NULL, 0) == 0);
    regfree(&re);
}

static json_t *cell(sqlite3_stmt *st, int c)
{
    switch (sqlite3_column_type(st, c)) {
    case SQLITE_INTEGER: return json_integer(sqlite3_column_int64(st, c));
    case SQLITE_FLOAT: return json_real(sqlite3_column_double(st, c));
    case SQLITE_TEXT: return json_string((const char *)sqlite3_column_text(st, c));
    default: return json_null();
    }
}

json_t *sqlrun(const char *export_path, const char *sql, char *err, size_t err_size)
{
    char uri[4200];
    snprintf(uri, sizeof uri, "file:%s?mode=ro&immutable=1", export_path);
    sqlite3 *db = NULL;
    json_t *sets = json_array();
    if (sqlite3_open_v2(uri, &db, SQLITE_OPEN_READONLY | SQLITE_OPEN_URI, NULL) != SQLITE_OK) {
        snprintf(err, err_size, "cannot open %s", export_path);
        sqlite3_close(db);
        json_decref(sets);
        return NULL;
    }
    sqlite3_create_function(db, "regexp", 2, SQLITE_UTF8 | SQLITE_DETERMINISTIC, NULL, regexp_fn, NULL, NULL);
    const char *tail = sql;
    while (sets && tail && *tail) {
        sqlite3_stmt *st = NULL;
        const char *at = tail;
        if (sqlite3_prepare_v2(db, tail, -1, &st, &tail) != SQLITE_OK) {
            snprintf(err, err_size, "%s, in: %.200s", sqlite3_errmsg(db), at);
            json_decref(sets);
            sets = NULL;
            break;
        }
        if (!st) continue;                 /* blanks or a comment */
        json_t *rows = sqlite3_column_count(st) ? json_array() : NULL;
        int rc;
        while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
            json_t *row = json_object();
            for (int c = 0; c < sqlite3_column_count(st); c++)
                json_object_set_new(row, sqlite3_column_name(st, c), cell(st, c));
            json_array_append_new(rows, row);
        }
        if (rc != SQLITE_DONE) {
            snprintf(err, err_size, "%s, in: %.200s", sqlite3_errmsg(db), at);
            json_decref(rows);
            json_decref(sets);
            sets = NULL;
        } else if (rows) {
            json_array_append_new(sets, rows);
        }
        sqlite3_finalize(st);
    }
    sqlite3_close(db);
    return sets;
}

bool sqlrun_agrees(const json_t *want, const json_t *got, double rel)
{
    if (!got) return false;
    if (json_is_null(want) || json_is_null(got)) return json_is_null(want) && json_is_null(got);
    if (json_is_string(want)) return json_is_string(got) && !strcmp(json_string_value(want), json_string_value(got));
    if (json_is_boolean(want)) return json_is_integer(got) && (json_integer_value(got) != 0) == json_is_true(want);
    if (!json_is_number(want) || !json_is_number(got)) return false;
    if (json_is_integer(want) && json_is_integer(got)) return json_integer_value(want) == json_integer_value(got);
    double x = json_number_value(want), y = json_number_value(got);
    return fabs(x - y) <= rel * fabs(x) + 1e-9;
}
