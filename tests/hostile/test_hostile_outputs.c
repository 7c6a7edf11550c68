/*
** Hostile output paths (issue #16, data loss), through the binary: an
** output that is an input (the trace itself, through a symlink, a hard
** link, `./x`, `d/../x`; a rule file, a rule folder's file, the baseline,
** a merged result, standard output appended to the trace, the GitHub job
** summary) must be refused with exit 2 before anything is written, and
** the input must keep every byte; two outputs into one file likewise.
** Outputs onto a FIFO or a character device are written into, never
** replaced by a regular file. A full disk (RLIMIT_FSIZE, SIGXFSZ ignored:
** writes fail with EFBIG) leaves every report format and the baseline
** either complete or untouched: exit 4 with the reason, the previous file
** unchanged, no temporary file left behind. engine/cli/outfile.h.
**
** The trace is the bundled example (argv[1], else examples/example.sqlite
** beside the binary): it has iterations, so `baseline record` has metrics.
*/
#include <dirent.h>
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include "hostile.h"

static const char *example_arg;

typedef struct world {
    char *dir;
    char *trace;        /* a private copy of the example */
    char *trace_bytes;  /* its content, to prove it unchanged */
    size_t trace_len;
    char cwd[4096];     /* restored by teardown: a case may chdir */
} world;

static int setup(void **state)
{
    world *w = calloc(1, sizeof *w);
    if (!w) return -1;
    if (!getcwd(w->cwd, sizeof w->cwd)) return -1;
    w->dir = hx_tempdir();
    char *example = hx_example_path(example_arg);
    w->trace = hx_copy_fixture(example, w->dir, "run.sqlite");
    free(example);
    w->trace_bytes = hx_slurp(w->trace, &w->trace_len);
    if (!w->trace_bytes || w->trace_len < 4096) return -1;
    *state = w;
    return 0;
}

static int teardown(void **state)
{
    world *w = *state;
    if (chdir(w->cwd) != 0) return -1;
    hx_rmtree(w->dir);
    free(w->dir);
    free(w->trace);
    free(w->trace_bytes);
    free(w);
    return 0;
}

/* The file holds exactly these bytes. */
static void expect_content(const char *what, const char *path, const char *bytes, size_t len)
{
    size_t n;
    char *got = hx_slurp(path, &n);
    if (!got) fail_msg("%s: %s is gone", what, path);
    if (n != len || memcmp(got, bytes, len) != 0)
        fail_msg("%s: %s was changed (%zu bytes, had %zu)", what, path, n, len);
    free(got);
}

static void expect_trace_intact(const world *w, const char *what)
{
    expect_content(what, w->trace, w->trace_bytes, w->trace_len);
}

/* No `.tracegate-XXXXXX` temporary file left in dir. */
static void expect_no_temp(const char *what, const char *dir)
{
    DIR *d = opendir(dir);
    assert_non_null(d);
    for (struct dirent *e; (e = readdir(d));)
        if (!strncmp(e->d_name, ".tracegate-", 11)) {
            closedir(d);
            fail_msg("%s: temporary file %s/%s left behind", what, dir, e->d_name);
        }
    closedir(d);
}

/* Exit 2, one line refusing the output and naming the input. */
static void expect_refused(const world *w, const char *what, const hx_result *r, const char *input)
{
    hx_expect_line(what, r, 2, "refusing to write");
    if (!strstr(r->err, input)) fail_msg("%s: the message does not name %s: %s", what, input, r->err);
    expect_trace_intact(w, what);
    expect_no_temp(what, w->dir);
}

static const char *const formats[] = {"text", "json", "junit", "sarif", "github", "markdown"};

/* ------------------------------------------------- outputs onto inputs */

static void test_report_onto_trace(void **state)
{
    world *w = *state;
    char *soft = hx_path(w->dir, "link.sqlite"), *hard = hx_path(w->dir, "hard.sqlite");
    char *sub = hx_path(w->dir, "sub"), *dotted = hx_path(w->dir, "sub/../run.sqlite");
    assert_int_equal(symlink("run.sqlite", soft), 0);
    assert_int_equal(link(w->trace, hard), 0);
    assert_int_equal(mkdir(sub, 0700), 0);
    /* ./x for x: from the trace's own directory (teardown goes back) */
    assert_int_equal(chdir(w->dir), 0);
    const char *const targets[] = {w->trace, soft, hard, dotted, "./run.sqlite"};
    /* every format is refused before its writer runs: one is enough where
    ** each run is costly (TG_HOSTILE_ONE_COMMAND, the binary under memcheck) */
    for (size_t f = 0; f < hx_commands(sizeof formats / sizeof *formats); f++)
        for (size_t t = 0; t < sizeof targets / sizeof *targets; t++) {
            char opt[4200], what[4400];
            snprintf(opt, sizeof opt, "%s=%s", formats[f], targets[t]);
            snprintf(what, sizeof what, "check -o %s", opt);
            hx_result r;
            hx_run(&r, "check", "-o", opt, "run.sqlite");
            expect_refused(w, what, &r, "run.sqlite");
            hx_free(&r);
        }
    free(soft);
    free(hard);
    free(sub);
    free(dotted);
}

static void test_baseline_onto_trace(void **state)
{
    world *w = *state;
    char *link = hx_path(w->dir, "link.sqlite");
    assert_int_equal(symlink(w->trace, link), 0);
    hx_result r;
    hx_run(&r, "baseline", "record", "-o", w->trace, w->trace);
    expect_refused(w, "baseline record -o TRACE TRACE", &r, w->trace);
    hx_free(&r);
    hx_run(&r, "baseline", "record", "-o", link, w->trace);
    expect_refused(w, "baseline record -o LINK-TO-TRACE TRACE", &r, w->trace);
    hx_free(&r);
    free(link);
}

static void test_report_onto_rules_and_baseline(void **state)
{
    world *w = *state;
    /* a rule file, given alone and as a folder's file */
    char *rules = hx_path(w->dir, "rules"), *rule = hx_path(w->dir, "rules/team.yaml");
    assert_int_equal(mkdir(rules, 0700), 0);
    static const char rule_text[] =
        "version: 1\nrules:\n  - id: huge-copies\n    title: No copy over 1 GB\n    severity: error\n"
        "    source: memcpy\n    where: bytes > 1GB\n    fail_when: count > 0\n    message: \"{count} copies\"\n";
    hx_write_file(rule, rule_text, sizeof rule_text - 1);
    char opt[4200];
    snprintf(opt, sizeof opt, "json=%s", rule);
    hx_result r;
    hx_run(&r, "check", "--rules", rule, "-o", opt, w->trace);
    expect_refused(w, "check --rules FILE -o json=FILE", &r, "rule file");
    expect_content("check --rules FILE -o json=FILE", rule, rule_text, sizeof rule_text - 1);
    hx_free(&r);
    hx_run(&r, "check", "--rules", rules, "-o", opt, w->trace);
    expect_refused(w, "check --rules DIR -o json=DIR/FILE", &r, "team.yaml");
    expect_content("check --rules DIR -o json=DIR/FILE", rule, rule_text, sizeof rule_text - 1);
    hx_free(&r);
    hx_run(&r, "baseline", "record", "--rules", "builtin", "--rules", rules, "-o", rule, w->trace);
    expect_refused(w, "baseline record --rules DIR -o DIR/FILE", &r, "team.yaml");
    expect_content("baseline record --rules DIR -o DIR/FILE", rule, rule_text, sizeof rule_text - 1);
    hx_free(&r);

    /* the baseline a check compares with */
    char *base = hx_path(w->dir, "base.yaml");
    hx_run(&r, "baseline", "record", "-o", base, w->trace);
    assert_int_equal(r.status, 0);
    hx_free(&r);
    size_t base_len;
    char *base_bytes = hx_slurp(base, &base_len);
    assert_non_null(base_bytes);
    snprintf(opt, sizeof opt, "markdown=%s", base);
    hx_run(&r, "check", "--baseline", base, "-o", opt, w->trace);
    expect_refused(w, "check --baseline B -o markdown=B", &r, "baseline");
    expect_content("check --baseline B -o markdown=B", base, base_bytes, base_len);
    hx_free(&r);
    free(base_bytes);
    free(base);
    free(rule);
    free(rules);
}

static void test_merge_onto_result(void **state)
{
    world *w = *state;
    char *json = hx_path(w->dir, "rank0.json");
    char opt[4200];
    snprintf(opt, sizeof opt, "json=%s", json);
    hx_result r;
    hx_run(&r, "check", "--fail-on", "never", "-o", opt, w->trace);
    assert_int_equal(r.status, 0);
    hx_free(&r);
    size_t len;
    char *bytes = hx_slurp(json, &len);
    assert_non_null(bytes);
    snprintf(opt, sizeof opt, "junit=%s", json);
    hx_run(&r, "merge", "-o", opt, json);
    expect_refused(w, "merge -o junit=IN.json IN.json", &r, "rank0.json");
    expect_content("merge -o junit=IN.json IN.json", json, bytes, len);
    hx_free(&r);
    /* the --files-from list is an input too: a report written over it
    ** would leave the next merge a list it cannot read */
    char *list = hx_path(w->dir, "results.list");
    FILE *f = fopen(list, "w");
    assert_non_null(f);
    fprintf(f, "%s\n", json);
    assert_int_equal(fclose(f), 0);
    size_t list_len;
    char *list_bytes = hx_slurp(list, &list_len);
    assert_non_null(list_bytes);
    snprintf(opt, sizeof opt, "json=%s", list);
    hx_run(&r, "merge", "--files-from", list, "-o", opt);
    expect_refused(w, "merge --files-from L -o json=L", &r, "--files-from list");
    expect_content("merge --files-from L -o json=L", list, list_bytes, list_len);
    expect_content("merge --files-from L -o json=L", json, bytes, len);
    hx_free(&r);
    free(list_bytes);
    free(list);
    free(bytes);
    free(json);
}

/* `tracegate check TRACE >> TRACE`: the shell opens the trace for
** appending as standard output before tracegate runs. */
static void test_stdout_appends_to_trace(void **state)
{
    world *w = *state;
    char *err_path = hx_path(w->dir, "stderr.txt");
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        int out = open(w->trace, O_WRONLY | O_APPEND);
        int err = open(err_path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
        int in = open("/dev/null", O_RDONLY);
        if (out < 0 || err < 0 || in < 0) _exit(127);
        dup2(in, 0);
        dup2(out, 1);
        dup2(err, 2);
        execl(hx_binary(), hx_binary(), "check", "--format", "json", w->trace, (char *)NULL);
        _exit(127);
    }
    int ws;
    assert_int_equal(waitpid(pid, &ws, 0), pid);
    char *err = hx_slurp(err_path, NULL);
    assert_non_null(err);
    printf("  check TRACE >> TRACE: exit %d: %s", WIFEXITED(ws) ? WEXITSTATUS(ws) : -1, err);
    if (!WIFEXITED(ws) || WEXITSTATUS(ws) != 2) fail_msg("check TRACE >> TRACE: not exit 2: %s", err);
    if (!strstr(err, "standard output") || !strstr(err, "run.sqlite"))
        fail_msg("check TRACE >> TRACE: the message names neither: %s", err);
    expect_trace_intact(w, "check TRACE >> TRACE");
    free(err);
    free(err_path);
}

static void test_job_summary_is_trace(void **state)
{
    world *w = *state;
    setenv("GITHUB_STEP_SUMMARY", w->trace, 1);
    hx_result r;
    hx_run(&r, "check", "--format", "github", w->trace);
    unsetenv("GITHUB_STEP_SUMMARY");
    expect_refused(w, "GITHUB_STEP_SUMMARY=TRACE check --format github", &r, "job summary");
    hx_free(&r);
}

static void test_two_outputs_one_file(void **state)
{
    world *w = *state;
    char *a = hx_path(w->dir, "a.out");
    char o1[4200], o2[4200];
    snprintf(o1, sizeof o1, "json=%s", a);
    snprintf(o2, sizeof o2, "junit=%s/../%s/a.out", w->dir, strrchr(w->dir, '/') + 1);
    hx_result r;
    hx_run(&r, "check", "-o", o1, "-o", o2, w->trace);
    hx_expect_line("check -o json=a -o junit=d/../d/a (a new file)", &r, 2, "the json report goes to the same file");
    if (access(a, F_OK) == 0) fail_msg("a refused output was written");
    hx_free(&r);
    hx_write_file(a, "x", 1);
    hx_run(&r, "check", "-o", o1, "-o", o2, w->trace);
    hx_expect_line("check -o json=a -o junit=d/../d/a (existing)", &r, 2, "the json report goes to the same file");
    expect_content("check -o json=a -o junit=a", a, "x", 1);
    hx_free(&r);
    /* a character device takes any number of reports */
    hx_run(&r, "check", "--fail-on", "never", "-o", "json=/dev/null", "-o", "junit=/dev/null", w->trace);
    assert_int_equal(r.status, 0);
    hx_free(&r);
    free(a);
}

/* -------------------------------------------------- non-regular files */

/* Read a FIFO into a file in a child; returns its pid. */
static pid_t drain_fifo(const char *fifo, const char *into)
{
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        /* a FIFO nobody opens for writing: never wait forever (a safety
        ** net past the binary's run and reap's wait, hostile.h) */
        alarm((unsigned)(2 * HX_WALL_FACTOR * hx_cpu_budget()) + 10);
        int in = open(fifo, O_RDONLY);
        int out = open(into, O_WRONLY | O_CREAT | O_TRUNC, 0600);
        if (in < 0 || out < 0) _exit(1);
        char buf[65536];
        ssize_t n;
        while ((n = read(in, buf, sizeof buf)) > 0)
            if (write(out, buf, (size_t)n) != n) _exit(1);
        _exit(0);
    }
    return pid;
}

/* The drain ends once the binary, which has exited, closed the FIFO; one
** still reading after the wall-clock safety net (hostile.h: no speed check)
** is killed and the case fails. */
static void reap(pid_t pid, const char *what)
{
    double net = HX_WALL_FACTOR * hx_cpu_budget();
    for (int i = 0; i < (int)(net * 20); i++) {
        int ws;
        if (waitpid(pid, &ws, WNOHANG) == pid) return;
        struct timespec ts = {0, 50 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
    kill(pid, SIGKILL);
    waitpid(pid, NULL, 0);
    fail_msg("%s: nothing was written into the FIFO (its reader still waited after %.0f s, the wall-clock "
             "safety net)", what, net);
}

static void expect_fifo(const char *what, const char *path)
{
    struct stat st;
    assert_int_equal(lstat(path, &st), 0);
    if (!S_ISFIFO(st.st_mode)) fail_msg("%s: the FIFO was replaced (mode %o)", what, (unsigned)st.st_mode);
}

static void test_fifo_outputs(void **state)
{
    world *w = *state;
    char *fifo = hx_path(w->dir, "out.fifo"), *got = hx_path(w->dir, "drained");
    assert_int_equal(mkfifo(fifo, 0600), 0);

    pid_t reader = drain_fifo(fifo, got);
    hx_result r;
    hx_run(&r, "baseline", "record", "-o", fifo, w->trace);
    hx_expect_line("baseline record -o FIFO", &r, 0, "recorded");
    reap(reader, "baseline record -o FIFO");
    expect_fifo("baseline record -o FIFO", fifo);
    char *yaml = hx_slurp(got, NULL);
    assert_non_null(yaml);
    if (!strstr(yaml, "format_version: 1")) fail_msg("baseline record -o FIFO: the reader got %s", yaml);
    free(yaml);
    hx_free(&r);

    reader = drain_fifo(fifo, got);
    char opt[4200];
    snprintf(opt, sizeof opt, "json=%s", fifo);
    hx_run(&r, "check", "--fail-on", "never", "-o", opt, w->trace);
    assert_int_equal(r.status, 0);
    reap(reader, "check -o json=FIFO");
    expect_fifo("check -o json=FIFO", fifo);
    char *json = hx_slurp(got, NULL);
    assert_non_null(json);
    if (!strstr(json, "\"tool\": \"tracegate\"")) fail_msg("check -o json=FIFO: the reader got %.200s", json);
    free(json);
    hx_free(&r);
    free(fifo);
    free(got);
}

/* A private copy of /dev/null's device node (root only): the old code
** replaced such a node by a regular file, so /dev/null itself is not used
** to show it. */
static void test_char_device_outputs(void **state)
{
    world *w = *state;
    char *node = hx_path(w->dir, "null");
    if (mknod(node, S_IFCHR | 0666, makedev(1, 3)) != 0) {
        printf("  (no mknod here: only /dev/null and /dev/full)\n");
    } else {
        hx_result r;
        hx_run(&r, "baseline", "record", "-o", node, w->trace);
        hx_expect_line("baseline record -o CHAR-DEVICE", &r, 0, "recorded");
        struct stat st;
        assert_int_equal(lstat(node, &st), 0);
        if (!S_ISCHR(st.st_mode)) fail_msg("baseline record -o CHAR-DEVICE replaced the node");
        hx_free(&r);
    }
    hx_result r;
    hx_run(&r, "baseline", "record", "-o", "/dev/null", w->trace);
    hx_expect_line("baseline record -o /dev/null", &r, 0, "recorded");
    hx_free(&r);
    struct stat st;
    assert_int_equal(stat("/dev/null", &st), 0);
    assert_true(S_ISCHR(st.st_mode));
    hx_run(&r, "baseline", "record", "-o", "/dev/full", w->trace);
    hx_expect_line("baseline record -o /dev/full", &r, 4, "cannot write the baseline to /dev/full: No space left on device");
    hx_free(&r);
    free(node);
}

static void test_directory_output(void **state)
{
    world *w = *state;
    char opt[4200];
    snprintf(opt, sizeof opt, "sarif=%s", w->dir);
    hx_result r;
    hx_run(&r, "check", "-o", opt, w->trace);
    hx_expect_line("check -o sarif=DIR", &r, 2, "it is a directory");
    hx_free(&r);
    hx_run(&r, "baseline", "record", "-o", w->dir, w->trace);
    hx_expect_line("baseline record -o DIR", &r, 2, "it is a directory");
    hx_free(&r);
}

/* ------------------------------------------------------------ full disk */

/* A wrapper that runs the binary with a file size limit of one block (512 or 1024 bytes)
** and SIGXFSZ ignored, so writes past it fail with EFBIG (a full disk,
** without root). */
static char *limited_binary(const world *w)
{
    char *path = hx_path(w->dir, "limited.sh");
    char script[8192];
    int n = snprintf(script, sizeof script,
                     "#!/bin/sh\nulimit -f 1 || exit 126\ntrap '' XFSZ\nexec '%s' \"$@\"\n", hx_binary());
    hx_write_file(path, script, (size_t)n);
    assert_int_equal(chmod(path, 0700), 0);
    return path;
}

static void run_limited(const world *w, hx_result *r, const char *const *args)
{
    char *saved = strdup(hx_binary());
    char *wrapper = limited_binary(w);
    setenv("TG_BINARY", wrapper, 1);
    hx_run_in(r, NULL, NULL, args);
    setenv("TG_BINARY", saved, 1);
    free(saved);
    free(wrapper);
}

static void test_full_disk_reports(void **state)
{
    world *w = *state;
    static const char old[] = "the previous report\n";
    for (size_t f = 0; f < sizeof formats / sizeof *formats; f++) {
        char name[64], opt[4200], what[256];
        snprintf(name, sizeof name, "report.%s", formats[f]);
        char *out = hx_path(w->dir, name);
        snprintf(opt, sizeof opt, "%s=%s", formats[f], out);

        /* without a limit the report is larger than the limit */
        hx_result r;
        hx_run(&r, "check", "--fail-on", "never", "-o", opt, w->trace);
        assert_int_equal(r.status, 0);
        hx_free(&r);
        struct stat st;
        assert_int_equal(stat(out, &st), 0);
        if (st.st_size <= 1024) fail_msg("%s: report of %lld bytes is too small for this case", name, (long long)st.st_size);

        /* a previous report stays whole */
        hx_write_file(out, old, sizeof old - 1);
        snprintf(what, sizeof what, "check -o %s=FILE, disk full", formats[f]);
        run_limited(w, &r, (const char *const[]){"check", "--fail-on", "never", "-o", opt, w->trace, NULL});
        hx_expect_line(what, &r, 4, "File too large");
        if (!strstr(r.err, out)) fail_msg("%s: the message does not name %s: %s", what, out, r.err);
        expect_content(what, out, old, sizeof old - 1);
        expect_no_temp(what, w->dir);
        hx_free(&r);

        /* a new report is not created at all */
        unlink(out);
        run_limited(w, &r, (const char *const[]){"check", "--fail-on", "never", "-o", opt, w->trace, NULL});
        hx_expect_line(what, &r, 4, "File too large");
        if (access(out, F_OK) == 0) fail_msg("%s: a truncated new report was left", what);
        expect_no_temp(what, w->dir);
        hx_free(&r);
        free(out);
    }
}

static void test_full_disk_baseline(void **state)
{
    world *w = *state;
    char *out = hx_path(w->dir, "nightly.yaml");
    static const char old[] = "# the previous baseline\n";
    hx_write_file(out, old, sizeof old - 1);
    assert_int_equal(chmod(out, 0640), 0);
    hx_result r;
    run_limited(w, &r, (const char *const[]){"baseline", "record", "-o", out, w->trace, NULL});
    hx_expect_line("baseline record, disk full", &r, 4, "cannot write the baseline to");
    if (!strstr(r.err, "File too large")) fail_msg("baseline record, disk full: no reason: %s", r.err);
    expect_content("baseline record, disk full", out, old, sizeof old - 1);
    expect_no_temp("baseline record, disk full", w->dir);
    hx_free(&r);

    /* written for real: replaced whole, keeping its mode */
    hx_run(&r, "baseline", "record", "-o", out, w->trace);
    hx_expect_line("baseline record over an existing file", &r, 0, "recorded");
    hx_free(&r);
    struct stat st;
    assert_int_equal(stat(out, &st), 0);
    assert_int_equal(st.st_mode & 07777, 0640);
    char *yaml = hx_slurp(out, NULL);
    assert_non_null(yaml);
    assert_non_null(strstr(yaml, "format_version: 1"));
    free(yaml);
    expect_no_temp("baseline record over an existing file", w->dir);
    free(out);
}

/* A report written through a symlink replaces the link's target; the
** link stays a link. */
static void test_symlinked_output(void **state)
{
    world *w = *state;
    char *target = hx_path(w->dir, "real.json"), *link = hx_path(w->dir, "report.json");
    hx_write_file(target, "old", 3);
    assert_int_equal(symlink("real.json", link), 0);
    char opt[4200];
    snprintf(opt, sizeof opt, "json=%s", link);
    hx_result r;
    hx_run(&r, "check", "--fail-on", "never", "-o", opt, w->trace);
    assert_int_equal(r.status, 0);
    hx_free(&r);
    struct stat st;
    assert_int_equal(lstat(link, &st), 0);
    assert_true(S_ISLNK(st.st_mode));
    char *json = hx_slurp(target, NULL);
    assert_non_null(json);
    assert_non_null(strstr(json, "\"tool\": \"tracegate\""));
    free(json);
    /* a dangling link: its target is created */
    unlink(target);
    hx_run(&r, "check", "--fail-on", "never", "-o", opt, w->trace);
    assert_int_equal(r.status, 0);
    hx_free(&r);
    assert_int_equal(lstat(link, &st), 0);
    assert_true(S_ISLNK(st.st_mode));
    assert_int_equal(access(target, F_OK), 0);
    free(target);
    free(link);
}

int main(int argc, char **argv)
{
    example_arg = argc > 1 ? realpath(argv[1], NULL) : NULL;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_report_onto_trace, setup, teardown),
        cmocka_unit_test_setup_teardown(test_baseline_onto_trace, setup, teardown),
        cmocka_unit_test_setup_teardown(test_report_onto_rules_and_baseline, setup, teardown),
        cmocka_unit_test_setup_teardown(test_merge_onto_result, setup, teardown),
        cmocka_unit_test_setup_teardown(test_stdout_appends_to_trace, setup, teardown),
        cmocka_unit_test_setup_teardown(test_job_summary_is_trace, setup, teardown),
        cmocka_unit_test_setup_teardown(test_two_outputs_one_file, setup, teardown),
        cmocka_unit_test_setup_teardown(test_fifo_outputs, setup, teardown),
        cmocka_unit_test_setup_teardown(test_char_device_outputs, setup, teardown),
        cmocka_unit_test_setup_teardown(test_directory_output, setup, teardown),
        cmocka_unit_test_setup_teardown(test_full_disk_reports, setup, teardown),
        cmocka_unit_test_setup_teardown(test_full_disk_baseline, setup, teardown),
        cmocka_unit_test_setup_teardown(test_symlinked_output, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
