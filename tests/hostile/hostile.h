/*
** The hostile-input suite (project issue #8): every case runs the real
** `tracegate` binary ($TG_BINARY) on an input a broken or malicious
** upstream job could hand a CI gate, under a deadline, and asserts what a
** CI log reader relies on: the documented exit status, one message line on
** stderr that says what is wrong, no crash, no hang, nothing written to
** the input. This header is the runner those tests share (hostile.c).
*/
#ifndef TG_HOSTILE_H
#define TG_HOSTILE_H

#include <stdbool.h>
#include <stddef.h>

/* Per-case budget in CPU seconds (user + system time of the child, from
** wait4; tests/hostile/README.md: a gate answers fast, whatever it is
** fed). CPU time is work, not wall-clock speed: a loaded machine does not
** change it, so a case over it did too much work (a loop, a quadratic
** join). TG_HOSTILE_TIMEOUT_SCALE multiplies it (valgrind), an
** AddressSanitizer build gets three times as much. The child also gets
** RLIMIT_CPU just above it, so a spinning binary is stopped there. */
#define HX_DEADLINE 5.0
/* The wall-clock safety net, only for a child that waits forever without
** using CPU (a lock, a pipe nobody writes): HX_WALL_FACTOR times the CPU
** budget (100 s plain), so a machine slowed down 20 times does not trip it.
** It is no speed assertion. */
#define HX_WALL_FACTOR 20.0

typedef struct hx_result {
    int status;            /* exit status, -1 when killed or not run */
    int signal;            /* terminating signal, 0 if it exited */
    bool timed_out;        /* stopped: over its CPU budget or past the wall-clock safety net */
    bool over_cpu;         /* ... the CPU budget (else the safety net) */
    double seconds;        /* wall clock, for the log only */
    double cpu_seconds;    /* the child's user + system time (wait4) */
    double cpu_budget;     /* the budget it ran under (hx_cpu_budget) */
    long max_rss_kb;       /* the child's peak resident memory (getrusage) */
    char *out;             /* stdout, NUL-terminated (first 8 MiB) */
    size_t out_len;
    char *err;             /* stderr, NUL-terminated (first 8 MiB) */
    size_t err_len;
} hx_result;

/* Path of the binary under test ($TG_BINARY); skips the test when unset. */
const char *hx_binary(void);

/* Run the binary with args (NULL-terminated, without argv[0]); stdin is
** /dev/null. When ro_dir is not NULL the child first remounts that
** directory read-only in a private mount namespace (when the kernel lets
** it: *ro_mounted says whether it did). */
void hx_run_in(hx_result *r, const char *ro_dir, bool *ro_mounted, const char *const *args);
#define hx_run(r, ...) hx_run_in((r), NULL, NULL, (const char *const[]){__VA_ARGS__, NULL})

void hx_free(hx_result *r);

/* The CPU budget of the runs that follow is `factor` times the per-case
** one (1 restores it): a run over n inputs (test_readonly.c) gets n. */
void hx_budget_scale(double factor);
/* The CPU budget of a run now, in seconds. */
double hx_cpu_budget(void);
/* Fails the test when r was stopped, saying by which bound: the CPU budget
** (too much work) or the wall-clock safety net (waiting, a hang). */
void hx_expect_in_time(const char *what, const hx_result *r);

/* Number of lines of s (a final line without '\n' counts). */
size_t hx_lines(const char *s);

/* The common assertion: exited (no signal, before the deadline) with
** `status`, and stderr is exactly one line "tracegate: ..." containing
** `part`. Prints the case's outcome for the test log. */
void hx_expect_line(const char *what, const hx_result *r, int status, const char *part);
/* For rule and baseline errors, which show the offending line and a caret:
** exactly one ": error: " message, containing `part`, at most 5 lines and 2 KiB
** of stderr in all. */
void hx_expect_rule_error(const char *what, const hx_result *r, int status, const char *part);
/* Exited with `status` in time, no sanitizer report; stderr holds exactly
** `warnings` lines containing "warning:" and nothing else. */
void hx_expect_warnings(const char *what, const hx_result *r, int status, size_t warnings,
                        const char *part);

/* Small helpers for the cases. */
bool hx_sanitized(void);                     /* built with AddressSanitizer */
/* Whether a child's peak RSS is the binary's own: $TG_BINARY is an ELF
** executable (not a wrapper script such as valgrind's) of a plain build. */
bool hx_rss_is_the_binarys(void);
long hx_rss_cap_kb(long plain_kb);           /* a plain build's memory bound, with ASan's room */
char *hx_tempdir(void);                      /* fresh private directory, malloc'd */
void hx_rmtree(const char *dir);             /* remove a directory made by hx_tempdir */
char *hx_path(const char *dir, const char *name);  /* dir/name, malloc'd */
void hx_write_file(const char *path, const void *data, size_t len);
char *hx_copy_fixture(const char *fixture, const char *dir, const char *name);
/* A whole file, NUL-terminated (malloc'd; *len its size when len), or NULL
** when it cannot be opened. */
char *hx_slurp(const char *path, size_t *len);
/* The bundled example export: `given` (argv[1] of the test, realpath'd)
** when set, else examples/example.sqlite beside the binary (malloc'd). */
char *hx_example_path(const char *given);
/* How many of n commands to run an input through: n, or with
** TG_HOSTILE_ONE_COMMAND=1 only the first (check). The commands share
** the loaders that refuse a hostile input, so one of them meets the same
** code; ci/valgrind.sh's phase 2 sets it, where each run costs seconds. */
size_t hx_commands(size_t n);
/* check, info and metrics (hx_commands) on one path: exit 3 and one line
** with `part`, naming the file. */
void hx_expect_bad_trace(const char *what, const char *path, const char *part);

#endif
