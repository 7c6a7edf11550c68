/*
** Corpus test of the trace layer and `tracegate info`: every *.sqlite of
** $TG_SHARED_TRACES/{h200-nsys,h200-torch,public} loads without an error
** or warning, with as many kernels as reference/metrics.jsonl says, rows
** in start order; `tracegate info --format json` ($TG_BINARY) exits 0 with
** the same kernel count and the very document tg_info_json makes from the
** trace loaded whole (the command streams the API table and holds kernels
** as spans: its counts and processes must not change); and the file is byte-for-byte unchanged (size,
** mtime, inode and a 64-bit hash of its content) with no -journal, -wal or
** -shm file beside it. Skips (exit 77) when the traces folder is absent.
*/
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "report/info.h"
#include "trace/trace.h"
#include "model/model.h"

static const char *traces_dir;
static json_t *reference;      /* file name -> kernels */

typedef struct fingerprint {
    off_t size;
    ino_t inode;
    struct timespec mtime;
    uint64_t hash;             /* FNV-1a over the content */
} fingerprint;

static fingerprint take_fingerprint(const char *path)
{
    fingerprint fp = {0};
    struct stat st;
    if (stat(path, &st) != 0) fail_msg("cannot stat %s", path);
    fp.size = st.st_size;
    fp.inode = st.st_ino;
    fp.mtime = st.st_mtim;
    FILE *f = fopen(path, "rb");
    if (!f) fail_msg("cannot read %s", path);
    uint64_t h = 1469598103934665603ULL;
    unsigned char buf[65536];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, f)) > 0)
        for (size_t i = 0; i < n; i++) h = (h ^ buf[i]) * 1099511628211ULL;
    fclose(f);
    fp.hash = h;
    return fp;
}

static void assert_no_siblings(const char *path)
{
    static const char *suffixes[] = {"-journal", "-wal", "-shm"};
    for (size_t i = 0; i < 3; i++) {
        char p[4096];
        snprintf(p, sizeof p, "%s%s", path, suffixes[i]);
        struct stat st;
        if (stat(p, &st) == 0) fail_msg("%s exists after reading %s", p, path);
    }
}

static const char *basename_of(const char *path)
{
    const char *s = strrchr(path, '/');
    return s ? s + 1 : path;
}

#define CHECK_SORTED(arr, n)                                                    \
    for (size_t i_ = 1; i_ < (n); i_++)                                        \
        if ((arr)[i_ - 1].start > (arr)[i_].start) fail_msg("%s: " #arr " not sorted at %zu", path, i_)

/* The info document of the trace loaded whole (every row), or fails. */
static json_t *load_and_check(const char *path, long expected)
{
    tg_diag d;
    tg_diag_init(&d);
    tg_trace *t = tg_trace_open(path, &d);
    if (!t || d.n) fail_msg("%s: %s", path, d.n ? d.msgs[0].text : "failed without a message");
    if ((long)t->n_kernels != expected)
        fail_msg("%s: %zu kernels, reference says %ld", path, t->n_kernels, expected);
    CHECK_SORTED(t->kernels, t->n_kernels);
    CHECK_SORTED(t->memcpys, t->n_memcpys);
    CHECK_SORTED(t->memsets, t->n_memsets);
    CHECK_SORTED(t->apis, t->n_apis);
    CHECK_SORTED(t->nvtx, t->n_nvtx);
    if (t->first_ns != TG_NULL_I64) assert_true(t->first_ns <= t->last_ns);
    for (size_t i = 0; i < t->n_kernels; i++)
        if (t->kernels[i].name < 0) fail_msg("%s: kernel %zu has no name", path, i);
    /* with the coverage the model counts on the whole table: the lean
    ** stream of `tracegate info` must count the same */
    tg_model *m = tg_model_build(t, NULL, &d);
    if (!m) fail_msg("%s: the model could not be built: %s", path, d.n ? d.msgs[0].text : "?");
    json_t *info = tg_info_json_with(t, NULL, &m->coverage);
    if (!info) fail_msg("%s: tg_info_json failed", path);
    tg_model_free(m);
    tg_trace_close(t);
    tg_diag_clear(&d);
    return info;
}

static void run_info_json(const char *path, long expected, json_t *whole)
{
    const char *bin = getenv("TG_BINARY");
    if (!bin) fail_msg("TG_BINARY is not set");
    char cmd[8192];
    snprintf(cmd, sizeof cmd, "'%s' info --format json '%s'", bin, path);
    FILE *p = popen(cmd, "r");
    if (!p) fail_msg("cannot run %s", cmd);
    json_error_t err;
    json_t *doc = json_loadf(p, 0, &err);
    int st = pclose(p);
    if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
        fail_msg("%s: exit status %d", cmd, WIFEXITED(st) ? WEXITSTATUS(st) : -1);
    if (!doc) fail_msg("%s: output is not JSON: %s", cmd, err.text);
    json_t *trace = json_array_get(json_object_get(doc, "traces"), 0);
    json_t *kernels = json_object_get(json_object_get(trace, "counts"), "kernel");
    if (!json_is_integer(kernels) || json_integer_value(kernels) != expected)
        fail_msg("%s: counts.kernel is not %ld", cmd, expected);
    assert_string_equal(json_string_value(json_object_get(trace, "file")), path);
    if (!json_equal(trace, whole)) {
        char *a = json_dumps(trace, JSON_SORT_KEYS), *b = json_dumps(whole, JSON_SORT_KEYS);
        fail_msg("%s: `tracegate info` differs from the info of the trace loaded whole:\n  %.1500s\n  %.1500s",
                 path, a ? a : "?", b ? b : "?");
    }
    json_decref(doc);
}

static void test_one_trace(void **state)
{
    const char *path = *state;
    json_t *ref = json_object_get(reference, basename_of(path));
    if (!json_is_integer(ref)) fail_msg("%s has no kernel count in reference/metrics.jsonl", path);
    long expected = (long)json_integer_value(ref);

    fingerprint before = take_fingerprint(path);
    json_t *whole = load_and_check(path, expected);
    assert_no_siblings(path);
    run_info_json(path, expected, whole);
    json_decref(whole);
    assert_no_siblings(path);
    fingerprint after = take_fingerprint(path);
    if (before.size != after.size || before.inode != after.inode || before.hash != after.hash ||
        before.mtime.tv_sec != after.mtime.tv_sec || before.mtime.tv_nsec != after.mtime.tv_nsec)
        fail_msg("%s changed while being read", path);
}

static bool load_reference(void)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/reference/metrics.jsonl", traces_dir);
    FILE *f = fopen(path, "r");
    if (!f) return false;
    reference = json_object();
    char line[1 << 16];
    while (fgets(line, sizeof line, f)) {
        json_t *o = json_loads(line, 0, NULL);
        const char *file = json_string_value(json_object_get(o, "file"));
        json_t *k = json_object_get(o, "kernels");
        if (file && json_is_integer(k)) json_object_set(reference, file, k);
        json_decref(o);
    }
    fclose(f);
    return json_object_size(reference) > 0;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

int main(void)
{
    traces_dir = getenv("TG_SHARED_TRACES");
    struct stat st;
    if (!traces_dir || stat(traces_dir, &st) != 0 || !S_ISDIR(st.st_mode)) {
        printf("skipped: the shared traces folder (%s) is absent\n",
               traces_dir ? traces_dir : "TG_SHARED_TRACES unset");
        return 77;
    }
    if (!load_reference()) {
        printf("skipped: %s/reference/metrics.jsonl is absent or empty\n", traces_dir);
        return 77;
    }
    static const char *subdirs[] = {"h200-nsys", "h200-torch", "public"};
    char **paths = NULL;
    size_t n = 0, cap = 0;
    for (size_t s = 0; s < 3; s++) {
        char dir[4096];
        snprintf(dir, sizeof dir, "%s/%s", traces_dir, subdirs[s]);
        DIR *d = opendir(dir);
        struct dirent *e;
        while (d && (e = readdir(d)) != NULL) {
            size_t len = strlen(e->d_name);
            if (len < 8 || strcmp(e->d_name + len - 7, ".sqlite") != 0) continue;
            if (n == cap) paths = realloc(paths, (cap = cap ? cap * 2 : 64) * sizeof *paths);
            paths[n] = malloc(strlen(dir) + len + 2);
            sprintf(paths[n++], "%s/%s", dir, e->d_name);
        }
        if (d) closedir(d);
    }
    if (n == 0) {
        printf("skipped: no *.sqlite under %s\n", traces_dir);
        return 77;
    }
    qsort(paths, n, sizeof *paths, cmp_str);
    struct CMUnitTest *tests = calloc(n, sizeof *tests);
    for (size_t i = 0; i < n; i++) {
        tests[i].name = paths[i] + strlen(traces_dir) + 1;
        tests[i].test_func = test_one_trace;
        tests[i].initial_state = paths[i];
    }
    int failed = _cmocka_run_group_tests("info_corpus", tests, n, NULL, NULL);
    for (size_t i = 0; i < n; i++) free(paths[i]);
    free(paths);
    free(tests);
    json_decref(reference);
    return failed;
}
