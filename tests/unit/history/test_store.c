/*
** The history store's cases (store_cases.h) on SQLite files: each case's
** databases are new files in one temporary directory ($TMPDIR or /tmp),
** removed at the end; the SQLite-only cases (files that are not a history
** or cannot be written) run too.
*/
#define _XOPEN_SOURCE 700
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "store_cases.h"

typedef struct files {
    char dir[4096];
    char name[4200];
    unsigned next;
} files;

/* dir/hN.sqlite: a name no case has used. */
static const char *fresh_db(void *ctx)
{
    files *f = ctx;
    snprintf(f->name, sizeof f->name, "%s/h%u.sqlite", f->dir, f->next++);
    return f->name;
}

static int remove_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st, (void)flag, (void)ftw;
    chmod(path, 0700);
    return remove(path);
}

int main(void)
{
    files f = {0};
    const char *tmp = getenv("TMPDIR");
    snprintf(f.dir, sizeof f.dir, "%s/tg-history-store-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(f.dir)) {
        perror("mkdtemp");
        return 1;
    }
    int failed = tg_store_cases_run(fresh_db, &f, true);
    nftw(f.dir, remove_one, 16, FTW_DEPTH | FTW_PHYS);
    return failed ? 1 : 0;
}
