/*
** The read-only guarantee (docs/architecture.md, the check's step 5.1) on the real corpus: every file under
** $TG_SHARED_TRACES is hashed (SHA-256, below) with its size and mtime,
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

/* ---------------------------------------------------------------- SHA-256 (FIPS 180-4) */

typedef struct sha256 {
    uint32_t h[8];
    uint64_t len;
    uint8_t buf[64];
    size_t n;
} sha256;

static const uint32_t K[64] = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
};

#define ROR(x, n) (((x) >> (n)) | ((x) << (32 - (n))))

static void sha256_block(sha256 *s, const uint8_t *p)
{
    uint32_t w[64];
    for (int i = 0; i < 16; i++)
        w[i] = (uint32_t)p[4 * i] << 24 | (uint32_t)p[4 * i + 1] << 16 | (uint32_t)p[4 * i + 2] << 8 | p[4 * i + 3];
    for (int i = 16; i < 64; i++) {
        uint32_t s0 = ROR(w[i - 15], 7) ^ ROR(w[i - 15], 18) ^ (w[i - 15] >> 3);
        uint32_t s1 = ROR(w[i - 2], 17) ^ ROR(w[i - 2], 19) ^ (w[i - 2] >> 10);
        w[i] = w[i - 16] + s0 + w[i - 7] + s1;
    }
    uint32_t a = s->h[0], b = s->h[1], c = s->h[2], d = s->h[3], e = s->h[4], f = s->h[5], g = s->h[6], h = s->h[7];
    for (int i = 0; i < 64; i++) {
        uint32_t t1 = h + (ROR(e, 6) ^ ROR(e, 11) ^ ROR(e, 25)) + ((e & f) ^ (~e & g)) + K[i] + w[i];
        uint32_t t2 = (ROR(a, 2) ^ ROR(a, 13) ^ ROR(a, 22)) + ((a & b) ^ (a & c) ^ (b & c));
        h = g; g = f; f = e; e = d + t1; d = c; c = b; b = a; a = t1 + t2;
    }
    s->h[0] += a; s->h[1] += b; s->h[2] += c; s->h[3] += d;
    s->h[4] += e; s->h[5] += f; s->h[6] += g; s->h[7] += h;
}

static void sha256_init(sha256 *s)
{
    static const uint32_t h0[8] = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
                                   0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};
    memset(s, 0, sizeof *s);
    memcpy(s->h, h0, sizeof h0);
}

static void sha256_update(sha256 *s, const void *data, size_t len)
{
    const uint8_t *p = data;
    s->len += len;
    while (len > 0) {
        size_t take = 64 - s->n < len ? 64 - s->n : len;
        memcpy(s->buf + s->n, p, take);
        s->n += take;
        p += take;
        len -= take;
        if (s->n == 64) {
            sha256_block(s, s->buf);
            s->n = 0;
        }
    }
}

static void sha256_hex(sha256 *s, char out[65])
{
    uint64_t bits = s->len * 8;
    uint8_t pad = 0x80, zero = 0;
    sha256_update(s, &pad, 1);
    while (s->n != 56) sha256_update(s, &zero, 1);
    uint8_t be[8];
    for (int i = 0; i < 8; i++) be[i] = (uint8_t)(bits >> (56 - 8 * i));
    sha256_update(s, be, 8);
    for (int i = 0; i < 8; i++) snprintf(out + 8 * i, 9, "%08x", s->h[i]);
}

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
    sha256 s;
    sha256_init(&s);
    FILE *f = fopen(path, "rb");
    if (!f) fail_msg("cannot read %s: %s", path, strerror(errno));
    static uint8_t buf[1 << 16];
    size_t got;
    while ((got = fread(buf, 1, sizeof buf, f)) > 0) sha256_update(&s, buf, got);
    fclose(f);
    sha256_hex(&s, e->digest);
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
    sha256 s;
    char hex[65];
    sha256_init(&s);
    sha256_update(&s, "abc", 3);
    sha256_hex(&s, hex);
    assert_string_equal(hex, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    sha256_init(&s);
    const char *two = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
    sha256_update(&s, two, strlen(two));
    sha256_hex(&s, hex);
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
