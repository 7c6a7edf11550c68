/*
** measure: run one command and report its wall time and peak memory, the
** two numbers bench/run tabulates. It forks, execs the command with its
** output untouched, waits with wait4() and prints one line to stderr:
**
**     measure: wall_s=1.234567 maxrss_kb=45678 status=0 user_s=1.5 sys_s=0.2
**
**     measure [-o FILE] -- COMMAND [ARGS...]
**
** With -o the line goes to FILE instead (overwritten), so the command's own
** stderr stays separate. measure exits with the command's exit status
** (128 + signal when it was killed). Peak memory is ru_maxrss of the child
** (Linux: KiB), the same number as /usr/bin/time -v "Maximum resident set
** size", without needing that tool installed. user_s and sys_s are its
** CPU time (ru_utime, ru_stime): on a machine shared with other work they
** move less than the wall time, so bench/run records them beside it.
*/
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
    const char *out_path = NULL;
    int i = 1;
    if (i + 1 < argc && strcmp(argv[i], "-o") == 0) {
        out_path = argv[i + 1];
        i += 2;
    }
    if (i < argc && strcmp(argv[i], "--") == 0) i++;
    if (i >= argc) {
        fprintf(stderr, "usage: measure [-o FILE] -- COMMAND [ARGS...]\n");
        return 2;
    }

    double t0 = now_s();
    pid_t pid = fork();
    if (pid < 0) {
        fprintf(stderr, "measure: fork: %s\n", strerror(errno));
        return 125;
    }
    if (pid == 0) {
        execvp(argv[i], argv + i);
        fprintf(stderr, "measure: cannot run %s: %s\n", argv[i], strerror(errno));
        _exit(127);
    }
    int status = 0;
    struct rusage ru;
    pid_t got;
    while ((got = wait4(pid, &status, 0, &ru)) < 0 && errno == EINTR)
        ;
    double wall = now_s() - t0;
    if (got < 0) {
        fprintf(stderr, "measure: wait4: %s\n", strerror(errno));
        return 125;
    }
    int code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);

    FILE *out = stderr;
    if (out_path && !(out = fopen(out_path, "w"))) {
        fprintf(stderr, "measure: cannot write %s: %s\n", out_path, strerror(errno));
        return 125;
    }
    fprintf(out, "measure: wall_s=%.6f maxrss_kb=%ld status=%d user_s=%.6f sys_s=%.6f\n", wall, ru.ru_maxrss, code,
            (double)ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6,
            (double)ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6);
    if (out != stderr && fclose(out) != 0) return 125;
    return code;
}
