/*
** Corpus test: loading only what the rules need changes nothing. By default
** `tracegate check` keeps only the rows its rules read (api rows filtered
** while the table streams, kernel rows materialised only when a rule reads
** them); `--load all` keeps every row of every table. On every *.sqlite
** under $TG_SHARED_TRACES (recursively) and on the bundled example trace
** (argv[1], so the comparison runs even without ../shared), the test runs
**
**     tracegate check [LOAD_ALL] --format json --missing-data=skip RULES FILE
**
** without and with LOAD_ALL and requires the same exit status and equal JSON
** documents (json_equal). RULES ranges over rule sets that need different
** parts of the trace: the built-in rules; tests/corpus/team-rules.yaml alone
** (memcpy and api rules that lean on iterations); rules.d plus that file;
** each rules.d file alone; and one probe rule per source (kernel, memcpy,
** memset, api, nvtx, iteration, gap, device, trace), written to a temporary
** folder, that cites most of its source's fields as evidence and every
** trace.* fact in its message, so a fact computed from fewer rows shows.
** A mismatch prints the trace, the rule set and the first differing member
** path with both values.
**
** No member is removed before comparing: the JSON has no timing, date or
** run-duration member (docs/result-schema.json; two runs on the whole
** corpus give byte-identical output). Paths in it ("file", a result's
** location) are the same in both runs.
**
** Under the built-in rules and rules.d + team-rules.yaml each trace is also
** checked on one core (`taskset -c 0`, so one thread reads the export) and
** compared with the default run, which reads exports of 1 MiB or more with
** two threads (docs/architecture.md, "Reading an export"); the comparison
** is left out, with a note, where the test has one core. Under the same
** two rule sets each trace is also checked with TRACEGATE_READER=sqlite
** (every table read through SQLite's statements, none by the direct reader
** of the file's pages) and compared with the default run; not under
** TG_CORPUS_QUICK, where the sanitizers and valgrind watch the direct
** reader through its own unit test (test_btree.c) instead.
**
** TG_CORPUS_QUICK=1 (the sanitizer and valgrind runs of ci/test.sh, where
** each run costs 5-20 times more) keeps two rule sets: rules.d (the
** built-in rules, read from their files) + team-rules.yaml, and every
** probe at once; the plain run compares them all.
**
** TG_LOAD_ALL_ARGS, when set, replaces "--load all" (shell words, may be
** empty). A self-check of the comparison: TG_LOAD_ALL_ARGS= must pass on any
** binary; TG_LOAD_ALL_ARGS='--set gpu-starvation.max_queue=1s' must fail
** and name the differing member.
**
** Needs $TG_BINARY; without ../shared only the example is compared; skips
** (exit 77) with a message when there is nothing to compare.
*/
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <sched.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "corpus.h"
#include "tg_config.h"

#define MAX_SETS 32

typedef struct rule_set {
    char label[128];
    char args[1024];   /* --rules ... (shell words), "" for the built-ins */
    bool one_core;     /* also compared with a run on one core */
} rule_set;

static const char *load_all;           /* TG_LOAD_ALL_ARGS or "--load all" */
static const char *one_core;           /* "taskset -c 0 ", or NULL: no second core to compare with */
static bool sqlite_reads = true;       /* also compared with TRACEGATE_READER=sqlite (not quick) */
static char workdir[] = "/tmp/tg-load-XXXXXX";
static rule_set sets[MAX_SETS];
static size_t n_sets;

/* Every probe's message: the trace facts, which must not depend on what was
** loaded. */
#define TRACE_FACTS                                                                               \
    " | {trace.kernels} {trace.memcpys} {trace.memsets} {trace.api_calls} {trace.nvtx_ranges} "   \
    "{trace.devices} {trace.iterations} {trace.steady_iterations} {trace.duration} "             \
    "{trace.steady_duration} {trace.blocking_calls} {trace.blocked_time}"

#define PROBE(src, cols, msg)                                                                     \
    "version: 1\nrules:\n  - id: probe-" src "\n    title: every " src " row\n"                  \
    "    severity: info\n    source: " src "\n    fail_when: count > 0\n"                        \
    "    evidence: {limit: 5, columns: [" cols "]}\n"                                             \
    "    message: \"" msg TRACE_FACTS "\"\n"

static const struct probe {
    const char *source, *yaml;
} probes[] = {
    {"kernel", PROBE("kernel",
                     "start, end, device, stream, pid, tid, short_name, api, queue, nccl, nvtx, iteration, "
                     "steady, grid_x, block_x, registers",
                     "{count} {sum(end - start)} {sum(queue)} {count(nccl)} {count(steady)} {max(iteration)} "
                     "{count(api != null)} {count(nvtx != null)}")},
    {"memcpy", PROBE("memcpy",
                     "start, end, device, stream, pid, tid, bytes, kind, src_kind, dst_kind, api, api_sync, "
                     "api_async, iteration, steady",
                     "{count} {sum(bytes)} {count(api_sync)} {count(api_async)} {count(api != null)} "
                     "{count(steady)} {max(iteration)}")},
    {"memset", PROBE("memset",
                     "start, end, device, stream, pid, tid, bytes, mem_kind, api, api_sync, iteration, steady",
                     "{count} {sum(bytes)} {count(api_sync)} {count(api != null)} {count(steady)} "
                     "{max(iteration)}")},
    {"api", PROBE("api", "name, raw_name, start, end, pid, tid, driver, blocking, iteration, steady",
                  "{count} {sum(end - start)} {count(driver)} {count(blocking)} {count(steady)} "
                  "{max(iteration)}")},
    {"nvtx", PROBE("nvtx", "name, domain, start, end, duration, pid, tid, depth, gpu_time, gpu_span",
                   "{count} {sum(duration)} {sum(gpu_time)} {sum(gpu_span)} {max(depth)}")},
    {"iteration", PROBE("iteration",
                        "index, name, pid, start, end, warmup, duration, period, gpu_time, gpu_span, kernels, "
                        "blocking_calls",
                        "{count} {sum(period)} {sum(gpu_time)} {sum(gpu_span)} {sum(kernels)} "
                        "{sum(blocking_calls)} {count(warmup)}")},
    {"gap", PROBE("gap", "start, end, duration, device, pid, in_steady_state",
                  "{count} {sum(duration)} {count(in_steady_state)}")},
    {"device", PROBE("device",
                     "device, name, start, end, span, busy_frac, busy_frac_steady, kernels, kernel_time, "
                     "nccl_time, nccl_overlap, exposed_nccl_time, queue_p50, gaps, busy_time_steady, "
                     "copy_time_steady, copy_frac_steady",
                     "{count} {sum(kernels)} {sum(kernel_time)} {sum(nccl_time)} {max(busy_frac)} "
                     "{max(busy_frac_steady)} {min(queue_p50)} {sum(gaps)}")},
    {"trace", PROBE("trace",
                    "duration, schema_version, nsys_version, kernels, memcpys, memsets, api_calls, nvtx_ranges, "
                    "devices, iterations, steady_iterations, steady_duration, blocking_calls, blocked_time",
                    "{count}")},
};

static void add_set(const char *label, const char *args)
{
    assert_true(n_sets < MAX_SETS);
    sets[n_sets].one_core = !strcmp(label, "built-in rules") || !strcmp(label, "rules.d + team-rules.yaml");
    snprintf(sets[n_sets].label, sizeof sets[n_sets].label, "%s", label);
    snprintf(sets[n_sets].args, sizeof sets[n_sets].args, "%s", args);
    n_sets++;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The rule sets to compare under (see the header), probes written to
** workdir. */
static int setup(void **state)
{
    (void)state;
    if (!mkdtemp(workdir)) return -1;
    char args[1024], label[128];
    const char *quick_env = getenv("TG_CORPUS_QUICK");
    bool quick = quick_env && !strcmp(quick_env, "1");
    /* quick: rules.d, which the built-in rules are, comes with team-rules */
    if (!quick) add_set("built-in rules", "");
    const char *team = TG_SOURCE_ROOT "/tests/corpus/team-rules.yaml";
    snprintf(args, sizeof args, "--rules '%s'", team);
    if (!quick) add_set("team-rules.yaml", args);
    snprintf(args, sizeof args, "--rules '%s/rules.d' --rules '%s'", TG_SOURCE_ROOT, team);
    add_set("rules.d + team-rules.yaml", args);
    if (quick) {
        sqlite_reads = false;
        fprintf(stderr, "load_corpus: TG_CORPUS_QUICK=1: two rule sets (rules.d, the built-in rules, + team; all probes)\n");
        char all[1024] = "";
        size_t len = 0;
        for (size_t i = 0; i < sizeof probes / sizeof *probes; i++) {
            char path[512];
            snprintf(path, sizeof path, "%s/probe-%s.yaml", workdir, probes[i].source);
            FILE *f = fopen(path, "w");
            if (!f || fputs(probes[i].yaml, f) < 0 || fclose(f) != 0) return -1;
            len += (size_t)snprintf(all + len, sizeof all - len, "%s--rules '%s'", len ? " " : "", path);
            if (len >= sizeof all) return -1;
        }
        add_set("every probe at once", all);
        return 0;
    }

    DIR *d = opendir(TG_SOURCE_ROOT "/rules.d");
    if (!d) return -1;
    char *names[MAX_SETS];
    size_t n = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL && n < MAX_SETS) {
        size_t len = strlen(e->d_name);
        if (len > 5 && strcmp(e->d_name + len - 5, ".yaml") == 0) names[n++] = strdup(e->d_name);
    }
    closedir(d);
    qsort(names, n, sizeof *names, cmp_str);
    for (size_t i = 0; i < n; i++) {
        snprintf(args, sizeof args, "--rules '%s/rules.d/%s'", TG_SOURCE_ROOT, names[i]);
        snprintf(label, sizeof label, "rules.d/%s alone", names[i]);
        add_set(label, args);
        free(names[i]);
    }

    for (size_t i = 0; i < sizeof probes / sizeof *probes; i++) {
        char path[512];
        snprintf(path, sizeof path, "%s/probe-%s.yaml", workdir, probes[i].source);
        FILE *f = fopen(path, "w");
        if (!f || fputs(probes[i].yaml, f) < 0 || fclose(f) != 0) return -1;
        snprintf(args, sizeof args, "--rules '%s'", path);
        snprintf(label, sizeof label, "probe of the %s source", probes[i].source);
        add_set(label, args);
    }
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", workdir);
    return system(cmd) == 0 ? 0 : -1;
}

/* One run's output and exit status; stderr's first line kept for the
** message when the output is not JSON. */
typedef struct run {
    json_t *doc;
    int status;
    char err[512];
} run;

static run check_with(const char *prefix, const char *load, const rule_set *rs, const char *file)
{
    run r = {.status = -1};
    char cmd[8192], errpath[64];
    snprintf(errpath, sizeof errpath, "%s/stderr", workdir);
    snprintf(cmd, sizeof cmd, "%s'%s' check %s --format json --missing-data=skip %s '%s' 2>'%s'", prefix,
             corpus_binary, load, rs->args, file, errpath);
    FILE *p = popen(cmd, "r");
    assert_non_null(p);
    /* Read to the end before parsing (no SIGPIPE for the writer). */
    char *out = NULL, chunk[65536];
    size_t len = 0, cap = 0, n;
    while ((n = fread(chunk, 1, sizeof chunk, p)) > 0) {
        if (len + n > cap) {
            cap = 2 * (len + n);
            out = realloc(out, cap);
            assert_non_null(out);
        }
        memcpy(out + len, chunk, n);
        len += n;
    }
    int st = pclose(p);
    r.status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
    json_error_t jerr;
    r.doc = out ? json_loadb(out, len, 0, &jerr) : NULL;
    free(out);
    if (!r.doc) {
        FILE *f = fopen(errpath, "r");
        if (!f || !fgets(r.err, sizeof r.err, f)) snprintf(r.err, sizeof r.err, "(nothing on stderr)");
        if (f) fclose(f);
        r.err[strcspn(r.err, "\n")] = 0;
    }
    return r;
}

static run check(const char *load, const rule_set *rs, const char *file)
{
    return check_with("", load, rs, file);
}

/* Appends to path the path of the first difference between a and b (a and b
** differ) and points *da, *db at the values there (NULL: member absent). */
static void first_diff(json_t *a, json_t *b, char *path, size_t cap, json_t **da, json_t **db)
{
    size_t len = strlen(path);
    *da = a;
    *db = b;
    if (json_is_object(a) && json_is_object(b)) {
        const char *key;
        json_t *va, *vb;
        json_object_foreach(a, key, va) {
            vb = json_object_get(b, key);
            if (vb && json_equal(va, vb)) continue;
            snprintf(path + len, cap - len, ".%s", key);
            if (vb) first_diff(va, vb, path, cap, da, db);
            else *da = va, *db = NULL;
            return;
        }
        json_object_foreach(b, key, vb) {
            if (json_object_get(a, key)) continue;
            snprintf(path + len, cap - len, ".%s", key);
            *da = NULL;
            *db = vb;
            return;
        }
    } else if (json_is_array(a) && json_is_array(b)) {
        size_t na = json_array_size(a), nb = json_array_size(b);
        for (size_t i = 0; i < na && i < nb; i++) {
            json_t *va = json_array_get(a, i), *vb = json_array_get(b, i);
            if (json_equal(va, vb)) continue;
            /* name a result by its rule: results[3](gpu-starvation) */
            const char *rule = json_string_value(json_object_get(va, "rule"));
            if (rule) snprintf(path + len, cap - len, "[%zu](%s)", i, rule);
            else snprintf(path + len, cap - len, "[%zu]", i);
            first_diff(va, vb, path, cap, da, db);
            return;
        }
        snprintf(path + len, cap - len, " (%zu elements vs %zu)", na, nb);
        *da = json_array_get(a, nb < na ? nb : na);
        *db = json_array_get(b, nb < na ? nb : na);
    }
}

static void show(const json_t *v, char *buf, size_t size)
{
    char *s = v ? json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY) : NULL;
    if (!v) snprintf(buf, size, "(absent)");
    else if (!s) snprintf(buf, size, "(unprintable)");
    else if (strlen(s) < 240) snprintf(buf, size, "%s", s);
    else snprintf(buf, size, "%.240s... (%zu characters)", s, strlen(s));
    free(s);
}

/* The default run a against the same check run with `prefix` (shell
** words before the binary); false after printing what differs. */
static bool same_as(const run *a, const char *prefix, const rule_set *rs, const char *file, const char *what,
                    const char *label)
{
    run c = check_with(prefix, "", rs, file);
    bool ok = c.doc && json_equal(a->doc, c.doc) && a->status == c.status;
    if (!ok) {
        char path[2048] = "$", va[320], vc[320];
        json_t *da = a->doc, *dc = c.doc;
        if (c.doc) first_diff(a->doc, c.doc, path, sizeof path, &da, &dc);
        show(da, va, sizeof va);
        show(dc, vc, sizeof vc);
        print_error("%s [%s]: %s report differently at %s (exit %d vs %d)\n    default:  %s\n"
                    "    %s: %s\n", file, rs->label, what, path, a->status, c.status, va, label, c.doc ? vc : c.err);
    }
    json_decref(c.doc);
    return ok;
}

/* The two runs of one trace under one rule set; false after printing what
** differs. */
static bool compare(const char *file, const rule_set *rs)
{
    run a = check("", rs, file), b = check(load_all, rs, file);
    bool ok = true;
    if (!a.doc || !b.doc) {
        const run *r = a.doc ? &b : &a;
        print_error("%s [%s]: `check%s%s` exited %d without JSON: %s\n", file, rs->label, r == &b ? " " : "",
                    r == &b ? load_all : "", r->status, r->err);
        ok = false;
    } else if (!json_equal(a.doc, b.doc)) {
        char path[2048] = "$", va[320], vb[320];
        json_t *da, *db;
        first_diff(a.doc, b.doc, path, sizeof path, &da, &db);
        show(da, va, sizeof va);
        show(db, vb, sizeof vb);
        print_error("%s [%s]: reports differ at %s\n    default:     %s\n    %s: %s\n", file, rs->label, path, va,
                    load_all, vb);
        ok = false;
    }
    if (a.status != b.status) {
        print_error("%s [%s]: exit status %d by default, %d with %s\n", file, rs->label, a.status, b.status,
                    load_all);
        ok = false;
    }
    json_decref(b.doc);
    /* one core: the export read by one thread (docs/architecture.md,
    ** "Reading an export"); the default run read it with every core */
    if (one_core && rs->one_core && a.doc && !same_as(&a, one_core, rs, file, "one thread", "one core"))
        ok = false;
    /* SQLite alone: no table read by the direct reader of the file's pages */
    if (sqlite_reads && rs->one_core && a.doc &&
        !same_as(&a, "TRACEGATE_READER=sqlite ", rs, file, "SQLite's reads", "sqlite"))
        ok = false;
    json_decref(a.doc);
    return ok;
}

static void test_one_trace(void **state)
{
    const char *file = *state;
    int bad = 0;
    for (size_t i = 0; i < n_sets; i++) bad += !compare(file, &sets[i]);
    if (bad) fail_msg("%s: %d of %zu rule sets report differently with `%s`", file, bad, n_sets, load_all);
}

/* Every *.sqlite and PyTorch profiler trace (*.json.gz, docs/kineto.md;
** those under 4 MB, which leaves out the five 113 MB series traces: a
** minute of suite time for the same reader) under dir, recursively.
** Symbolic links are followed, to files and to folders (../shared may be
** a link, and so may folders inside it); a folder already entered (a link
** back up, or two links to one folder) is not entered again. */
typedef struct dir_id {
    dev_t dev;
    ino_t ino;
} dir_id;

static void collect_in(const char *dir, char ***paths, size_t *n, size_t *cap, dir_id **seen, size_t *n_seen)
{
    struct stat here;
    if (stat(dir, &here) != 0) return;
    for (size_t i = 0; i < *n_seen; i++)
        if ((*seen)[i].dev == here.st_dev && (*seen)[i].ino == here.st_ino) return;
    *seen = realloc(*seen, (*n_seen + 1) * sizeof **seen);
    if (!*seen) abort();
    (*seen)[(*n_seen)++] = (dir_id){here.st_dev, here.st_ino};
    DIR *d = opendir(dir);
    struct dirent *e;
    while (d && (e = readdir(d)) != NULL) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) continue;
        size_t size = strlen(dir) + strlen(e->d_name) + 2;
        char *path = malloc(size);
        if (!path) abort();
        snprintf(path, size, "%s/%s", dir, e->d_name);
        struct stat st;
        size_t len = strlen(e->d_name);
        if (stat(path, &st) != 0) {   /* a dangling link */
        } else if (S_ISDIR(st.st_mode)) {
            collect_in(path, paths, n, cap, seen, n_seen);
        } else if (S_ISREG(st.st_mode) && ((len > 7 && strcmp(e->d_name + len - 7, ".sqlite") == 0) ||
                                           (len > 8 && strcmp(e->d_name + len - 8, ".json.gz") == 0 &&
                                            st.st_size < (4 << 20)))) {
            if (*n == *cap) *paths = realloc(*paths, (*cap = *cap ? *cap * 2 : 64) * sizeof **paths);
            (*paths)[(*n)++] = path;
            continue;
        }
        free(path);
    }
    if (d) closedir(d);
}

static void collect(const char *dir, char ***paths, size_t *n, size_t *cap)
{
    dir_id *seen = NULL;
    size_t n_seen = 0;
    collect_in(dir, paths, n, cap, &seen, &n_seen);
    free(seen);
}

int main(int argc, char **argv)
{
    corpus_binary = getenv("TG_BINARY");
    corpus_traces = getenv("TG_SHARED_TRACES");
    load_all = getenv("TG_LOAD_ALL_ARGS") ? getenv("TG_LOAD_ALL_ARGS") : "--load all";
    if (!corpus_binary) {
        printf("SKIP: TG_BINARY is unset; --load all not compared\n");
        return 77;
    }
    char **paths = NULL;
    size_t n = 0, cap = 0;
    struct stat st;
    const char *example = argc > 1 ? argv[1] : NULL;
    if (example && stat(example, &st) == 0) {
        paths = malloc((cap = 64) * sizeof *paths);
        paths[n++] = strdup(example);
    } else {
        printf("note: no example trace (argv[1] = %s)\n", example ? example : "(none)");
    }
    size_t corpus_from = n;
    if (corpus_traces && stat(corpus_traces, &st) == 0 && S_ISDIR(st.st_mode)) collect(corpus_traces, &paths, &n, &cap);
    else printf("note: ../shared/traces is absent (TG_SHARED_TRACES=%s); only the example is compared\n",
                corpus_traces ? corpus_traces : "(unset)");
    if (n == 0) {
        printf("SKIP: neither the example trace nor ../shared/traces is present; --load all not compared\n");
        return 77;
    }
    qsort(paths + corpus_from, n - corpus_from, sizeof *paths, cmp_str);
    printf("comparing `check` with and without `%s` on %zu traces\n", load_all, n);
    cpu_set_t cpus;
    if (sched_getaffinity(0, sizeof cpus, &cpus) == 0 && CPU_COUNT(&cpus) >= 2 &&
        system("taskset -c 0 true >/dev/null 2>&1") == 0) {
        one_core = "taskset -c 0 ";
        printf("and `check` on %d cores with `check` on one (taskset -c 0), under two rule sets\n",
               CPU_COUNT(&cpus));
    } else {
        printf("note: one core here (or no taskset): reading with one thread and with two not compared\n");
    }

    struct CMUnitTest *tests = calloc(n, sizeof *tests);
    for (size_t i = 0; i < n; i++) {
        size_t skip = i >= corpus_from ? strlen(corpus_traces) + 1 : 0;
        tests[i].name = paths[i] + skip;
        tests[i].test_func = test_one_trace;
        tests[i].initial_state = paths[i];
    }
    int failed = _cmocka_run_group_tests("load_corpus", tests, n, setup, teardown);
    for (size_t i = 0; i < n; i++) free(paths[i]);
    free(paths);
    free(tests);
    return failed;
}
