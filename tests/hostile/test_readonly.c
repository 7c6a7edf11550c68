/*
** The read-only guarantee (docs/architecture.md, the check's step 5.1) on the real corpus: every file under
** $TG_SHARED_TRACES is hashed (SHA-256, common/sha256.h) with its size and mtime,
** then `check --missing-data=skip`, `info` and `metrics` run over every
** export there, then everything is hashed again. Nothing may change, and
** no -journal, -wal or -shm file may appear anywhere in the tree. Skips
** (exit 77) with a message when the folder is absent.
**
** The corpus may be reached through symbolic links (CI's ../shared may be
** a copy or a link, and folders or files inside it links too): the walk
** follows them (nftw without FTW_PHYS, which skips a folder it has already
** entered, so a loop ends), and an export reached by two paths is run once.
*/
#define _XOPEN_SOURCE 700
#include <errno.h>
#include <ftw.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <cmocka.h>

#include "hostile.h"
#include "common/sha256.h"

/* ---------------------------------------------------------------- the tree */

typedef struct entry {
    char *path;
    dev_t dev;
    ino_t ino;
    char digest[65];
    off_t size;
    struct timespec mtime;
} entry;

typedef struct tree {
    entry *e;
    size_t n, cap;
    size_t sidecars;          /* -journal / -wal / -shm files seen */
    char **exports;           /* *.sqlite files */
    size_t n_exports;
} tree;

static tree *walking;

static int visit(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
    (void)ftw;
    size_t len = strlen(path);
    static const char *const sidecar[] = {"-journal", "-wal", "-shm"};
    for (size_t i = 0; i < 3; i++) {
        size_t m = strlen(sidecar[i]);
        if (len >= m && strcmp(path + len - m, sidecar[i]) == 0) {
            fprintf(stderr, "sidecar file in the corpus: %s\n", path);
            walking->sidecars++;
        }
    }
    if (type == FTW_DNR || type == FTW_NS) fail_msg("cannot read %s in the corpus", path);
    if (type == FTW_SLN) fprintf(stderr, "dangling symbolic link in the corpus (ignored): %s\n", path);
    if (type != FTW_F) return 0;
    tree *t = walking;
    if (t->n == t->cap) {
        t->cap = t->cap ? t->cap * 2 : 64;
        t->e = realloc(t->e, t->cap * sizeof *t->e);
        assert_non_null(t->e);
    }
    entry *e = &t->e[t->n++];
    e->path = strdup(path);
    e->dev = st->st_dev;
    e->ino = st->st_ino;
    e->size = st->st_size;
    e->mtime = st->st_mtim;
    tg_sha256 s;
    tg_sha256_init(&s);
    FILE *f = fopen(path, "rb");
    if (!f) fail_msg("cannot read %s: %s", path, strerror(errno));
    static uint8_t buf[1 << 16];
    size_t got;
    while ((got = fread(buf, 1, sizeof buf, f)) > 0) tg_sha256_update(&s, buf, got);
    fclose(f);
    tg_sha256_hex(&s, e->digest);
    bool seen = false;   /* the same export through another link */
    for (size_t i = 0; i + 1 < t->n; i++) seen |= t->e[i].dev == e->dev && t->e[i].ino == e->ino;
    if (len > 7 && strcmp(path + len - 7, ".sqlite") == 0 && !seen) {
        t->exports = realloc(t->exports, (t->n_exports + 1) * sizeof *t->exports);
        assert_non_null(t->exports);
        t->exports[t->n_exports++] = e->path;
    }
    return 0;
}

static int by_path(const void *a, const void *b)
{
    return strcmp(((const entry *)a)->path, ((const entry *)b)->path);
}

static void scan(const char *root, tree *t)
{
    memset(t, 0, sizeof *t);
    walking = t;
    /* no FTW_PHYS: links are followed, at the top and inside */
    assert_int_equal(nftw(root, visit, 16, 0), 0);
    qsort(t->e, t->n, sizeof *t->e, by_path);
}

static void tree_free(tree *t)
{
    for (size_t i = 0; i < t->n; i++) free(t->e[i].path);
    free(t->e);
    free(t->exports);
}

/* ---------------------------------------------------------------- the test */

static const char *corpus;

static void run_over_all(const char *what, const char *const *head, size_t n_head, const tree *t,
                         int allowed_mask)
{
    const char **args = calloc(n_head + t->n_exports + 1, sizeof *args);
    assert_non_null(args);
    for (size_t i = 0; i < n_head; i++) args[i] = head[i];
    for (size_t i = 0; i < t->n_exports; i++) args[n_head + i] = t->exports[i];
    hx_result r;
    hx_budget_scale((double)t->n_exports);   /* one case's CPU budget per export */
    hx_run_in(&r, NULL, NULL, args);
    hx_budget_scale(1);
    printf("  %-44s exit %d in %.2f s (%.2f s CPU) over %zu exports, %zu bytes of output\n", what, r.status,
           r.seconds, r.cpu_seconds, t->n_exports, r.out_len);
    hx_expect_in_time(what, &r);
    if (r.signal || r.status < 0 || !(allowed_mask & (1 << r.status)))
        fail_msg("%s: exit %d, signal %d; stderr:\n%.3000s", what, r.status, r.signal, r.err);
    if (strstr(r.err, "Sanitizer") || strstr(r.err, "runtime error:")) fail_msg("%s: sanitizer report:\n%s", what, r.err);
    hx_free(&r);
    free(args);
}

static void test_corpus_unchanged(void **state)
{
    (void)state;
    tree before, after;
    scan(corpus, &before);
    printf("  hashed %zu files (%zu exports) under %s\n", before.n, before.n_exports, corpus);
    assert_true(before.n_exports > 0);
    assert_int_equal(before.sidecars, 0);

    /* the gate may pass or fail on these; it must read them all */
    run_over_all("check --missing-data=skip (all exports)",
                 (const char *[]){"check", "--missing-data=skip", "--jobs", "2", "--format", "json"}, 6, &before,
                 1 << 0 | 1 << 1);
    run_over_all("check (missing data fails: exit 3)", (const char *[]){"check"}, 1, &before, 1 << 0 | 1 << 1 | 1 << 3);
    run_over_all("info --format json (all exports)", (const char *[]){"info", "--format", "json"}, 3, &before, 1 << 0);
    run_over_all("metrics (all exports)", (const char *[]){"metrics"}, 1, &before, 1 << 0);

    scan(corpus, &after);
    assert_int_equal(after.sidecars, 0);
    assert_int_equal(after.n, before.n);
    for (size_t i = 0; i < before.n; i++) {
        const entry *a = &before.e[i], *b = &after.e[i];
        assert_string_equal(a->path, b->path);
        if (strcmp(a->digest, b->digest) != 0) fail_msg("%s changed: %s -> %s", a->path, a->digest, b->digest);
        if (a->size != b->size || a->mtime.tv_sec != b->mtime.tv_sec || a->mtime.tv_nsec != b->mtime.tv_nsec)
            fail_msg("%s: size or mtime changed", a->path);
    }
    printf("  all %zu files byte-identical, no -journal/-wal/-shm\n", after.n);
    tree_free(&before);
    tree_free(&after);
}

static void test_sha256(void **state)
{
    (void)state;
    tg_sha256 s;
    char hex[65];
    tg_sha256_init(&s);
    tg_sha256_update(&s, "abc", 3);
    tg_sha256_hex(&s, hex);
    assert_string_equal(hex, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    tg_sha256_init(&s);
    const char *two = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
    tg_sha256_update(&s, two, strlen(two));
    tg_sha256_hex(&s, hex);
    assert_string_equal(hex, "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
}

int main(void)
{
    corpus = getenv("TG_SHARED_TRACES");
    struct stat st;
    if (!corpus || stat(corpus, &st) != 0 || !S_ISDIR(st.st_mode)) {
        printf("SKIP: the shared traces (%s) are absent; the read-only check needs them\n",
               corpus ? corpus : "TG_SHARED_TRACES unset");
        return 77;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sha256),
        cmocka_unit_test(test_corpus_unchanged),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
