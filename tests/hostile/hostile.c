/*
** The runner of hostile.h: fork + exec of $TG_BINARY with both output
** streams collected through pipes, a CPU-time budget (RLIMIT_CPU in the
** child, its user + system time from wait4) and a wall-clock safety net
** for a child that waits forever (SIGKILL; hostile.h says why the two);
** optional read-only remount of a directory in a private mount namespace
** (root only; unshare(CLONE_NEWNS) fails harmlessly elsewhere); and the
** assertions every hostile case shares.
*/
#include "hostile.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <sched.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#define HX_MAX_OUTPUT (8u << 20)

const char *hx_binary(void)
{
    const char *b = getenv("TG_BINARY");
    if (!b || !*b) {
        fprintf(stderr, "TG_BINARY is not set: run this through meson test\n");
        skip();
    }
    return b;
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static double budget_factor = 1.0;

void hx_budget_scale(double factor)
{
    budget_factor = factor > 0 ? factor : 1.0;
}

/* The budget holds for the plain build; a sanitized build (the test and
** the binary are built alike) gets three times as much, as meson's
** --timeout-multiplier 3 in ci/test.sh. */
double hx_cpu_budget(void)
{
    const char *s = getenv("TG_HOSTILE_TIMEOUT_SCALE");
    double scale = s ? strtod(s, NULL) : 1.0;
    if (!(scale > 0)) scale = 1.0;
    if (hx_sanitized()) scale *= 3;
    return HX_DEADLINE * scale * budget_factor;
}

static double wall_net_seconds(void)
{
    return HX_WALL_FACTOR * hx_cpu_budget();
}

bool hx_sanitized(void)
{
#if defined(__SANITIZE_ADDRESS__)
    return true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
    return true;
#endif
#endif
    return false;
}

/* The peak RSS of a child is the binary's own only when $TG_BINARY is the
** plain build's executable: not a sanitized build, and not a script that
** wraps it (ci/valgrind.sh's phase 2 runs the binary under memcheck, whose
** RSS is valgrind's). */
bool hx_rss_is_the_binarys(void)
{
    if (hx_sanitized()) return false;
    const char *b = getenv("TG_BINARY");
    if (!b) return false;
    FILE *f = fopen(b, "rb");
    if (!f) return false;
    unsigned char m[4] = {0};
    size_t n = fread(m, 1, sizeof m, f);
    fclose(f);
    return n == 4 && m[0] == 0x7f && m[1] == 'E' && m[2] == 'L' && m[3] == 'F';
}

/* AddressSanitizer keeps freed blocks in a quarantine (256 MiB by default)
** and shadows what is in use: a memory bound measured on the plain build
** holds there with that room added. */
long hx_rss_cap_kb(long plain_kb)
{
    if (hx_sanitized()) return 3 * plain_kb + 256 * 1024;
    /* a wrapper's RSS (valgrind's) bounds nothing of the binary */
    return hx_rss_is_the_binarys() ? plain_kb : LONG_MAX;
}

/* In the child: make ro_dir read-only for this process only. */
static int remount_readonly(const char *ro_dir)
{
    if (unshare(CLONE_NEWNS) != 0) return -1;
    if (mount("none", "/", "none", MS_REC | MS_PRIVATE, NULL) != 0) return -1;
    if (mount(ro_dir, ro_dir, "none", MS_BIND, NULL) != 0) return -1;
    if (mount("none", ro_dir, "none", MS_REMOUNT | MS_BIND | MS_RDONLY, NULL) != 0) return -1;
    return 0;
}

static void append(char **buf, size_t *len, size_t *cap, const char *data, size_t n)
{
    if (*len + n > HX_MAX_OUTPUT) n = HX_MAX_OUTPUT - *len;
    if (*len + n + 1 > *cap) {
        size_t c = *cap ? *cap : 4096;
        while (c < *len + n + 1) c *= 2;
        char *p = realloc(*buf, c);
        assert_non_null(p);
        *buf = p;
        *cap = c;
    }
    memcpy(*buf + *len, data, n);
    *len += n;
    (*buf)[*len] = 0;
}

void hx_run_in(hx_result *r, const char *ro_dir, bool *ro_mounted, const char *const *args)
{
    memset(r, 0, sizeof *r);
    r->status = -1;
    const char *bin = hx_binary();
    size_t n = 0;
    while (args[n]) n++;
    char **argv = calloc(n + 2, sizeof *argv);
    assert_non_null(argv);
    argv[0] = (char *)bin;
    for (size_t i = 0; i < n; i++) argv[i + 1] = (char *)args[i];

    int out[2], err[2], status_pipe[2];
    assert_int_equal(pipe2(out, O_CLOEXEC), 0);
    assert_int_equal(pipe2(err, O_CLOEXEC), 0);
    assert_int_equal(pipe2(status_pipe, O_CLOEXEC), 0);
    double budget = r->cpu_budget = hx_cpu_budget();
    /* the kernel stops the child (SIGXCPU, then SIGKILL) a little past its
    ** budget: a spinning binary costs at most that, whatever the load */
    rlim_t cpu_soft = (rlim_t)budget + 2;
    double start = now();
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        int devnull = open("/dev/null", O_RDONLY);
        dup2(devnull, 0);
        dup2(out[1], 1);
        dup2(err[1], 2);
        char mounted = 0;
        if (ro_dir) mounted = remount_readonly(ro_dir) == 0;
        struct rlimit cpu = {cpu_soft, cpu_soft + 3}, old;
        if (getrlimit(RLIMIT_CPU, &old) == 0 && (old.rlim_max == RLIM_INFINITY || old.rlim_max >= cpu.rlim_max))
            setrlimit(RLIMIT_CPU, &cpu);
        if (write(status_pipe[1], &mounted, 1) != 1) _exit(127);
        execv(bin, argv);
        _exit(127);
    }
    free(argv);
    close(out[1]);
    close(err[1]);
    close(status_pipe[1]);
    char mounted = 0;
    if (read(status_pipe[0], &mounted, 1) != 1) mounted = 0;
    close(status_pipe[0]);
    if (ro_mounted) *ro_mounted = mounted;

    double limit = wall_net_seconds();
    size_t out_cap = 0, err_cap = 0;
    struct pollfd fds[2] = {{out[0], POLLIN, 0}, {err[0], POLLIN, 0}};
    int open_fds = 2;
    while (open_fds > 0) {
        double left = start + limit - now();
        if (left <= 0) {
            kill(pid, SIGKILL);
            r->timed_out = true;
            break;
        }
        int rc = poll(fds, 2, (int)(left * 1000) + 1);
        if (rc < 0 && errno == EINTR) continue;
        assert_true(rc >= 0);
        for (int i = 0; i < 2; i++) {
            if (fds[i].fd < 0 || !(fds[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
            char buf[65536];
            ssize_t got = read(fds[i].fd, buf, sizeof buf);
            if (got <= 0) {
                close(fds[i].fd);
                fds[i].fd = -1;
                open_fds--;
            } else if (i == 0) {
                append(&r->out, &r->out_len, &out_cap, buf, (size_t)got);
            } else {
                append(&r->err, &r->err_len, &err_cap, buf, (size_t)got);
            }
        }
    }
    for (int i = 0; i < 2; i++)
        if (fds[i].fd >= 0) close(fds[i].fd);
    int ws = 0;
    struct rusage ru = {0};
    while (wait4(pid, &ws, 0, &ru) < 0 && errno == EINTR) {}
    r->seconds = now() - start;
    r->max_rss_kb = ru.ru_maxrss;
    r->cpu_seconds = (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 +
                     (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
    if (WIFEXITED(ws)) r->status = WEXITSTATUS(ws);
    if (WIFSIGNALED(ws)) r->signal = WTERMSIG(ws);
    /* over the budget: finished late, or stopped by RLIMIT_CPU (SIGXCPU at
    ** the soft limit, SIGKILL at the hard one) */
    if (r->cpu_seconds > budget || r->signal == SIGXCPU ||
        (r->signal == SIGKILL && !r->timed_out && r->cpu_seconds >= (double)cpu_soft - 0.5)) {
        r->over_cpu = true;
        r->timed_out = true;
    }
    /* a stream that printed nothing is an empty string, not NULL */
    if (!r->out) assert_non_null(r->out = calloc(1, 1));
    if (!r->err) assert_non_null(r->err = calloc(1, 1));
}

void hx_free(hx_result *r)
{
    free(r->out);
    free(r->err);
    memset(r, 0, sizeof *r);
}

size_t hx_lines(const char *s)
{
    size_t n = 0;
    for (const char *p = s; *p; p++)
        if (*p == '\n') n++;
    if (*s && s[strlen(s) - 1] != '\n') n++;
    return n;
}

static void report(const char *what, const hx_result *r)
{
    const char *nl = strchr(r->err, '\n');
    int len = nl ? (int)(nl - r->err) : (int)strlen(r->err);
    printf("  %-44s exit %d in %.2f s (%.2f s CPU): %.*s\n", what, r->status, r->seconds, r->cpu_seconds,
           len > 300 ? 300 : len, r->err);
    fflush(stdout);
}

void hx_expect_in_time(const char *what, const hx_result *r)
{
    if (r->over_cpu)
        fail_msg("%s: used %.2f s of CPU, over its budget of %.1f s (CPU time is work done, not the load of "
                 "the machine: a loop or a blow-up)", what, r->cpu_seconds, r->cpu_budget);
    if (r->timed_out)
        fail_msg("%s: still running after %.0f s of wall clock, having used %.2f s of CPU: a hang, waiting "
                 "for something (the wall-clock safety net, %.0f times the CPU budget of %.1f s)",
                 what, r->seconds, r->cpu_seconds, HX_WALL_FACTOR, r->cpu_budget);
}

static void expect_exited(const char *what, const hx_result *r, int status)
{
    report(what, r);
    hx_expect_in_time(what, r);
    if (r->signal) fail_msg("%s: killed by signal %d; stderr:\n%s", what, r->signal, r->err);
    if (strstr(r->err, "Sanitizer") || strstr(r->err, "runtime error:"))
        fail_msg("%s: sanitizer report:\n%s", what, r->err);
    if (r->status != status)
        fail_msg("%s: exit status %d, expected %d; stderr:\n%.2000s", what, r->status, status, r->err);
}

void hx_expect_line(const char *what, const hx_result *r, int status, const char *part)
{
    expect_exited(what, r, status);
    if (hx_lines(r->err) != 1) fail_msg("%s: expected one stderr line, got:\n%.2000s", what, r->err);
    if (strncmp(r->err, "tracegate: ", 11) != 0) fail_msg("%s: stderr does not start with 'tracegate: ': %s", what, r->err);
    if (part && !strstr(r->err, part)) fail_msg("%s: stderr lacks \"%s\": %s", what, part, r->err);
}

void hx_expect_rule_error(const char *what, const hx_result *r, int status, const char *part)
{
    expect_exited(what, r, status);
    size_t errors = 0;
    for (const char *p = r->err; (p = strstr(p, ": error: ")); p++) errors++;
    if (errors != 1) fail_msg("%s: expected one ': error: ' message, got %zu:\n%.2000s", what, errors, r->err);
    if (hx_lines(r->err) > 5 || r->err_len > 2048)
        fail_msg("%s: %zu lines / %zu bytes of stderr for one error:\n%.2000s", what, hx_lines(r->err),
                 r->err_len, r->err);
    if (part && !strstr(r->err, part)) fail_msg("%s: stderr lacks \"%s\":\n%s", what, part, r->err);
}

void hx_expect_warnings(const char *what, const hx_result *r, int status, size_t warnings, const char *part)
{
    expect_exited(what, r, status);
    size_t lines = hx_lines(r->err), found = 0;
    for (const char *p = r->err; (p = strstr(p, "warning:")); p++) found++;
    if (found != warnings || lines != warnings)
        fail_msg("%s: expected %zu warning lines, got:\n%.2000s", what, warnings, r->err);
    if (part && !strstr(r->err, part)) fail_msg("%s: stderr lacks \"%s\":\n%s", what, part, r->err);
}

char *hx_tempdir(void)
{
    const char *tmp = getenv("TMPDIR");
    char buf[4096];
    snprintf(buf, sizeof buf, "%s/tg-hostile-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    assert_non_null(mkdtemp(buf));
    char *dir = strdup(buf);
    assert_non_null(dir);
    return dir;
}

void hx_rmtree(const char *dir)
{
    const char *base = strrchr(dir, '/');
    if (!base || strncmp(base + 1, "tg-hostile-", 11) != 0) return;   /* only our own */
    chmod(dir, 0700);
    DIR *d = opendir(dir);
    struct dirent *e;
    while (d && (e = readdir(d)) != NULL) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
        char *p = hx_path(dir, e->d_name);
        struct stat st;
        if (lstat(p, &st) == 0 && S_ISDIR(st.st_mode)) {
            chmod(p, 0700);
            DIR *sub = opendir(p);
            struct dirent *f;
            while (sub && (f = readdir(sub)) != NULL) {
                if (!strcmp(f->d_name, ".") || !strcmp(f->d_name, "..")) continue;
                char *q = hx_path(p, f->d_name);
                unlink(q);
                free(q);
            }
            if (sub) closedir(sub);
            rmdir(p);
        } else {
            unlink(p);
        }
        free(p);
    }
    if (d) closedir(d);
    rmdir(dir);
}

char *hx_path(const char *dir, const char *name)
{
    size_t n = strlen(dir) + strlen(name) + 2;
    char *p = malloc(n);
    assert_non_null(p);
    snprintf(p, n, "%s/%s", dir, name);
    return p;
}

void hx_write_file(const char *path, const void *data, size_t len)
{
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(data, 1, len, f), len);
    assert_int_equal(fclose(f), 0);
}

char *hx_copy_fixture(const char *fixture, const char *dir, const char *name)
{
    char *to = hx_path(dir, name);
    FILE *in = fopen(fixture, "rb"), *out = fopen(to, "wb");
    assert_non_null(in);
    assert_non_null(out);
    char buf[65536];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, in)) > 0) assert_int_equal(fwrite(buf, 1, n, out), n);
    fclose(in);
    assert_int_equal(fclose(out), 0);
    return to;
}

char *hx_slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    size_t cap = 1 << 16, n = 0, got;
    char *buf = malloc(cap + 1);
    while (buf && (got = fread(buf + n, 1, cap - n, f)) > 0) {
        n += got;
        if (n == cap) {
            char *nb = realloc(buf, (cap *= 2) + 1);
            if (!nb) free(buf);
            buf = nb;
        }
    }
    fclose(f);
    if (!buf) fail_msg("out of memory reading %s", path);
    buf[n] = 0;
    if (len) *len = n;
    return buf;
}

char *hx_example_path(const char *given)
{
    if (given) return strdup(given);
    const char *bin = hx_binary();   /* build/tracegate -> build/examples/example.sqlite */
    char *p = malloc(strlen(bin) + 64);
    assert_non_null(p);
    strcpy(p, bin);
    char *slash = strrchr(p, '/');
    strcpy(slash ? slash + 1 : p, "examples/example.sqlite");
    return p;
}

size_t hx_commands(size_t n)
{
    const char *one = getenv("TG_HOSTILE_ONE_COMMAND");
    return one && !strcmp(one, "1") && n > 1 ? 1 : n;
}

void hx_expect_bad_trace(const char *what, const char *path, const char *part)
{
    static const char *const cmds[] = {"check", "info", "metrics"};
    for (size_t i = 0; i < hx_commands(3); i++) {
        char label[128];
        snprintf(label, sizeof label, "%s %s", cmds[i], what);
        hx_result r;
        hx_run(&r, cmds[i], path);
        hx_expect_line(label, &r, 3, part);
        if (!strstr(r.err, path)) fail_msg("%s: the message does not name the file: %s", label, r.err);
        hx_free(&r);
    }
}
