/*
** The history store's cases (engine/history/history.h, store.h), written
** once and run on each store: test_store.c runs them on SQLite files in a
** temporary directory, test_store_pg.c on databases of a throwaway
** PostgreSQL cluster. A case asks fresh_db for the name of a new, empty
** database (a path that does not exist yet, or a postgresql:// URI of a
** database holding no table) whenever it needs one; the name stays valid
** until the next call (copy it to keep it).
**
** The cases: a round trip of every field (NaN, NULL strings, samples,
** work entries, UTF-8); history order by time, then id; one transaction
** (a failing append in the middle of several runs leaves nothing);
** --replace; a label refused twice; workload keys that keep two workloads
** apart; accept and accepts; ten processes appending at once lose nothing;
** a writer killed mid-append leaves only complete runs. sqlite_only_cases
** adds those of files that are not a history or cannot be written (not
** SQLite, another program's database, a directory, a newer schema, a
** corrupt, read-only or locked file): each is refused with one sentence
** naming the file, and the file's bytes are left as they were; those cases
** derive their files from the directory of a fresh_db name.
*/
#ifndef TG_STORE_CASES_H
#define TG_STORE_CASES_H

#include <stdbool.h>

/* Runs the cases as one cmocka group; returns the number that failed (0:
** all passed), as cmocka_run_group_tests does. */
int tg_store_cases_run(const char *(*fresh_db)(void *ctx), void *ctx, bool sqlite_only_cases);

#endif
