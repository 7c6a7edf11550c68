/*
** sql2sqlite SQLFILE OUT.sqlite: builds an SQLite file from SQL text. Used by
** the build to materialise the bundled example export (examples/NAME.sql), so
** the repository holds readable SQL rather than binary traces, and the build
** needs no sqlite3 shell.
*/
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: sql2sqlite SQLFILE OUT.sqlite\n");
        return 2;
    }
    FILE *f = fopen(argv[1], "rb");
    if (!f) {
        perror(argv[1]);
        return 1;
    }
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *sql = malloc((size_t)n + 1);
    if (!sql || fread(sql, 1, (size_t)n, f) != (size_t)n) {
        fprintf(stderr, "%s: read error\n", argv[1]);
        return 1;
    }
    sql[n] = 0;
    fclose(f);
    unlink(argv[2]);
    sqlite3 *db;
    char *err = NULL;
    if (sqlite3_open(argv[2], &db) != SQLITE_OK ||
        sqlite3_exec(db, sql, NULL, NULL, &err) != SQLITE_OK) {
        fprintf(stderr, "%s: %s\n", argv[1], err ? err : sqlite3_errmsg(db));
        sqlite3_close(db);
        unlink(argv[2]);
        return 1;
    }
    free(sql);
    return sqlite3_close(db) == SQLITE_OK ? 0 : 1;
}
