/*
** Resolving trace arguments: see inputs.h. The cache key is a 64-bit FNV-1a
** hash of the report's bytes, so a re-run on the same report reuses the
** export and a changed report is exported again.
*/
#include "inputs.h"
#include "cli.h"

#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <fcntl.h>
#include <unistd.h>

#include "../common/common.h"
#include "../trace/trace.h"

bool tg_inputs_is_report(const char *path)
{
    return tg_trace_report_suffix(path) != NULL;
}

static char *find_on_path(const char *prog)
{
    const char *path = getenv("PATH");
    if (!path) return NULL;
    char buf[4096];
    for (const char *p = path; *p;) {
        const char *colon = strchr(p, ':');
        size_t len = colon ? (size_t)(colon - p) : strlen(p);
        snprintf(buf, sizeof buf, "%.*s/%s", (int)len, len ? p : ".", prog);
        if (access(buf, X_OK) == 0) return strdup(buf);
        p += len + (colon ? 1 : 0);
        if (!colon) break;
    }
    return NULL;
}

/* 0, or the errno of the call that failed (kept before fclose can change it). */
static int hash_file(const char *path, uint64_t *out)
{
    FILE *f = fopen(path, "rb");
    if (!f) return errno ? errno : EIO;
    uint64_t h = 1469598103934665603ULL;
    unsigned char buf[65536];
    size_t n;
    errno = 0;
    while ((n = fread(buf, 1, sizeof buf, f)) > 0)
        for (size_t i = 0; i < n; i++) {
            h ^= buf[i];
            h *= 1099511628211ULL;
        }
    int err = ferror(f) ? (errno ? errno : EIO) : 0;
    fclose(f);
    *out = h;
    return err;
}

static char *cache_dir(void)
{
    const char *xdg = getenv("XDG_CACHE_HOME");
    const char *home = getenv("HOME");
    char buf[4096];
    if (xdg && *xdg) snprintf(buf, sizeof buf, "%s/tracegate", xdg);
    else if (home && *home) snprintf(buf, sizeof buf, "%s/.cache/tracegate", home);
    else snprintf(buf, sizeof buf, "/tmp/tracegate-cache-%ld", (long)getuid());
    /* mkdir -p for the last two components */
    char parent[4096];
    snprintf(parent, sizeof parent, "%s", buf);
    char *slash = strrchr(parent, '/');
    if (slash) {
        *slash = 0;
        mkdir(parent, 0700);
    }
    mkdir(buf, 0700);
    return strdup(buf);
}

/* printf into a malloc'd sentence (NULL when out of memory). */
static char *sentence(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static char *sentence(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *s = NULL;
    if (vasprintf(&s, fmt, ap) < 0) s = NULL;
    va_end(ap);
    return s;
}

/* Export a report with nsys: the malloc'd export path, or NULL with the
** sentence saying why in *why. */
static char *export_report(const char *report, char **why)
{
    const char *suffix = tg_trace_report_suffix(report);
    char *nsys = find_on_path("nsys");
    if (!nsys) {
        *why = sentence("%s: this is an Nsight Systems report, and nsys is not on PATH to export it; run "
                        "`nsys export --type sqlite --output %.*s.sqlite %s` and check the .sqlite file",
                        report, (int)(strlen(report) - strlen(suffix)), report, report);
        return NULL;
    }
    uint64_t h;
    int err = hash_file(report, &h);
    if (err) {
        *why = sentence("%s: cannot read the report: %s", report, strerror(err));
        free(nsys);
        return NULL;
    }
    char *dir = cache_dir();
    char *out = dir ? malloc(strlen(dir) + 40) : NULL;
    if (!out) {
        free(dir);
        free(nsys);
        return NULL;
    }
    sprintf(out, "%s/%016llx.sqlite", dir, (unsigned long long)h);
    free(dir);
    struct stat st;
    if (stat(out, &st) == 0 && st.st_size > 0) {
        free(nsys);
        return out;
    }
    /* exported beside its cache name, renamed once nsys succeeded: an
    ** export cut short (nsys or tracegate killed) is never taken for a
    ** whole one by the next run */
    char *part = sentence("%.*s.partial-%ld.sqlite", (int)(strlen(out) - strlen(".sqlite")), out, (long)getpid());
    if (!part) {
        free(out);
        free(nsys);
        return NULL;
    }
    pid_t pid = fork();
    if (pid == 0) {
        int devnull = open("/dev/null", O_WRONLY);
        if (devnull >= 0) dup2(devnull, 1);
        execl(nsys, "nsys", "export", "--type", "sqlite", "--force-overwrite", "true",
              "--output", part, report, (char *)NULL);
        _exit(127);
    }
    int status = 0;
    bool ok = pid > 0 && waitpid(pid, &status, 0) == pid && WIFEXITED(status) &&
              WEXITSTATUS(status) == 0 && stat(part, &st) == 0 && st.st_size > 0 && rename(part, out) == 0;
    if (!ok) {
        *why = sentence("%s: `%s export --type sqlite --output %s %s` failed", report, nsys, out, report);
        unlink(part);
        free(out);
        out = NULL;
    }
    free(part);
    free(nsys);
    return out;
}

int tg_inputs_resolve(const char *const *args, size_t n, tg_inputs *out)
{
    memset(out, 0, sizeof *out);
    size_t cap = n ? n : 1;
    out->given = calloc(cap, sizeof *out->given);
    out->paths = calloc(cap, sizeof *out->paths);
    out->errors = calloc(cap, sizeof *out->errors);
    out->owned = calloc(cap, sizeof *out->owned);
    if (!out->given || !out->paths || !out->errors || !out->owned) {
        tg_inputs_free(out);
        return TG_EINTERNAL;
    }
    for (size_t i = 0; i < n; i++) {
        out->given[i] = out->paths[i] = args[i];
        out->n++;
        if (!tg_inputs_is_report(args[i])) continue;
        char *why = NULL;
        char *p = export_report(args[i], &why);
        out->paths[i] = p;
        if (p) {
            out->owned[out->n_owned++] = p;
        } else if (!(out->errors[i] = why)) {
            tg_inputs_free(out);   /* out of memory: no sentence */
            return TG_EINTERNAL;
        }
    }
    return TG_OK;
}

void tg_inputs_free(tg_inputs *in)
{
    for (size_t i = 0; i < in->n_owned; i++) free(in->owned[i]);
    for (size_t i = 0; in->errors && i < in->n; i++) free(in->errors[i]);
    free(in->owned);
    free(in->errors);
    free(in->paths);
    free(in->given);
    memset(in, 0, sizeof *in);
}
