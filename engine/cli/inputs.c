/*
** Resolving trace arguments: see inputs.h. The cache key is the SHA-256 of
** the report's bytes (common/sha256.h), so a re-run on the same report
** reuses the export, a changed report is exported again, and no report can
** be made to collide with another's entry (a 64-bit FNV-1a could be).
**
** The cache is trusted only as far as nobody else can write it (README,
** "Nsight Systems reports"; docs/limits.md, "The export cache"): its
** directory must be a real directory (not a symbolic link) owned by this
** user and not writable by its group or others, and an entry a regular
** file of this user's, not group/other-writable, opened with O_NOFOLLOW
** relative to the directory. Anything else gets one warning and the
** report is exported into a private temporary directory instead.
**
** An export is made from a private copy of the report, written while its
** bytes are hashed (one read), so the entry named by a hash holds the
** export of exactly those bytes, whatever happens to the report meanwhile.
*/
#include "inputs.h"
#include "cli.h"

#include <dirent.h>
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
#include "../common/sha256.h"
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

/* Read fd from where it is to its end, hashing the bytes into h (the
** SHA-256 as hex digits) and, when out >= 0, writing them there. 0; or an
** errno in *rerr (reading the report failed) or *werr (writing the copy
** failed), returning -1. */
static int hash_copy(int fd, int out, char h[TG_SHA256_HEX], int *rerr, int *werr)
{
    unsigned char buf[65536];
    tg_sha256 s;
    tg_sha256_init(&s);
    h[0] = 0;
    for (;;) {
        ssize_t n = read(fd, buf, sizeof buf);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) return *rerr = errno, -1;
        if (n == 0) {
            tg_sha256_hex(&s, h);
            return 0;
        }
        tg_sha256_update(&s, buf, (size_t)n);
        for (ssize_t done = 0; out >= 0 && done < n;) {
            ssize_t w = write(out, buf + done, (size_t)(n - done));
            if (w < 0 && errno == EINTR) continue;
            if (w < 0) return *werr = errno, -1;
            done += w;
        }
    }
}

/* Why a directory or file of the cache cannot be trusted: NULL when it is
** this user's and not writable by group or others. */
static char *untrusted(const struct stat *st)
{
    if (st->st_uid != geteuid())
        return sentence("it belongs to uid %ld, not to this user (uid %ld)", (long)st->st_uid, (long)geteuid());
    if (st->st_mode & (S_IWGRP | S_IWOTH))
        return sentence("it is writable by its group or others (mode %03o)", (unsigned)(st->st_mode & 0777));
    return NULL;
}

/* The cache directory's path: $XDG_CACHE_HOME/tracegate, ~/.cache/tracegate,
** or /tmp/tracegate-cache-UID (only absolute settings count, as in the XDG
** base directory specification). */
static char *cache_path(void)
{
    const char *xdg = getenv("XDG_CACHE_HOME");
    const char *home = getenv("HOME");
    if (xdg && *xdg == '/') return sentence("%s/tracegate", xdg);
    if (home && *home == '/') return sentence("%s/.cache/tracegate", home);
    return sentence("/tmp/tracegate-cache-%ld", (long)geteuid());
}

/* Open the cache directory at path, creating what is missing (0700; each
** directory created is checked). The descriptor, or -1 with the reason in
** *why (NULL when out of memory). */
static int open_cache(char *path, char **why)
{
    int mkerr = 0;
    for (char *p = path + 1;; p++) {
        if (*p != '/' && *p) continue;
        char c = *p;
        *p = 0;
        struct stat st;
        if (mkdir(path, 0700) == 0) {
            char *bad = lstat(path, &st) != 0 || !S_ISDIR(st.st_mode) ? sentence("gone") : untrusted(&st);
            if (bad) {
                *why = sentence("%s, created here, was changed at once by someone else (%s)", path, bad);
                free(bad);
                *p = c;
                return -1;
            }
        } else if (errno != EEXIST) {
            mkerr = errno;
        }
        *p = c;
        if (!c) break;
    }
    struct stat st;
    if (lstat(path, &st) != 0) {
        *why = sentence("cannot create it: %s", strerror(mkerr ? mkerr : errno));
        return -1;
    }
    if (S_ISLNK(st.st_mode)) {
        *why = sentence("it is a symbolic link, and tracegate uses only a real directory as its cache (set "
                        "XDG_CACHE_HOME to a folder holding the real one)");
        return -1;
    }
    int fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) {
        *why = sentence("cannot open it: %s", strerror(errno));
        return -1;
    }
    if (fstat(fd, &st) != 0) {
        *why = sentence("cannot open it: %s", strerror(errno));
        close(fd);
        return -1;
    }
    if ((*why = untrusted(&st)) != NULL) {
        close(fd);
        return -1;
    }
    return fd;
}

/* Remove the directory name of parent (AT_FDCWD: a path) and the files in
** it; a directory nsys might leave there stays (nothing is followed). */
static void remove_dir(int parent, const char *name)
{
    int fd = openat(parent, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
    if (d) {
        struct dirent *e;
        while ((e = readdir(d)) != NULL)
            if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) unlinkat(fd, e->d_name, 0);
        closedir(d);
    } else if (fd >= 0) {
        close(fd);
    }
    unlinkat(parent, name, AT_REMOVEDIR);
}

/* The command line run, as one string: each argument shell-quoted where it
** needs it, so that what is shown is exactly what ran. */
static char *command_line(char *const *argv)
{
    size_t len = 1;
    for (size_t i = 0; argv[i]; i++) len += 4 * strlen(argv[i]) + 3;
    char *s = malloc(len), *o = s;
    if (!s) return NULL;
    for (size_t i = 0; argv[i]; i++) {
        const char *a = argv[i];
        bool plain = *a != 0;
        for (const char *c = a; *c; c++)
            if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_./=:,@%+-", *c)) plain = false;
        if (i) *o++ = ' ';
        if (plain) {
            o = stpcpy(o, a);
            continue;
        }
        *o++ = '\'';
        for (const char *c = a; *c; c++) o = *c == '\'' ? stpcpy(o, "'\\''") : (*o = *c, o + 1);
        *o++ = '\'';
    }
    *o = 0;
    return s;
}

typedef struct resolver {
    char *nsys;          /* nsys on PATH, or NULL */
    bool looked;         /* the cache directory was looked at */
    char *cache;         /* its path */
    int cache_fd;        /* its descriptor, -1 when it is not used */
    bool cache_writable; /* false once writing in it failed */
    char **private_dir;  /* the private temporary directory (tg_inputs), once made */
    int private_fd;
} resolver;

/* The warning of a cache that is not used (or not written). */
static void warn_cache(const char *what, const char *dir, const char *why)
{
    tg_cli_say("warning: %s %s: %s; exporting into a private temporary directory instead", what, dir,
               why ? why : "out of memory");
}

static void look_at_cache(resolver *r)
{
    if (r->looked) return;
    r->looked = true;
    r->cache = cache_path();
    if (!r->cache) return;
    char *why = NULL;
    r->cache_fd = open_cache(r->cache, &why);
    r->cache_writable = r->cache_fd >= 0;
    if (r->cache_fd < 0) warn_cache("not using the cache directory", r->cache, why);
    free(why);
}

enum { MISS, HIT, BAD };

/* Is NAME in the cache an export to use? A bad one gets its warning. */
static int look_up(resolver *r, const char *name)
{
    int fd = openat(r->cache_fd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0 && errno == ENOENT) return MISS;
    struct stat st;
    char *why = NULL;
    if (fd < 0)
        why = errno == ELOOP ? sentence("it is a symbolic link") : sentence("cannot open it: %s", strerror(errno));
    else if (fstat(fd, &st) != 0)
        why = sentence("cannot open it: %s", strerror(errno));
    else if (!S_ISREG(st.st_mode))
        why = sentence("it is not a regular file");
    else
        why = untrusted(&st);
    bool empty = fd >= 0 && !why && st.st_size == 0;   /* not an export: made again */
    if (fd >= 0) close(fd);
    if (!why) return empty ? MISS : HIT;
    char *entry = sentence("%s/%s", r->cache, name);
    warn_cache("not using the cached export", entry ? entry : name, why);
    free(entry);
    free(why);
    return BAD;
}

enum { DONE, REPORT_ERROR, DIR_ERROR };

/* Export the report (open as fd, at its start) into the directory dfd
** (path dir): its bytes copied to dir/STEM<suffix> while hashed into *h,
** nsys run on that copy with --output dir/STEM.sqlite, the copy removed.
** DONE; REPORT_ERROR with the report's sentence in *why; DIR_ERROR with
** the errno of writing in the directory in *werr. */
static int export_into(const resolver *r, const char *report, int fd, int dfd, const char *dir, const char *stem,
                       char h[TG_SHA256_HEX], char **why, int *werr)
{
    const char *suffix = tg_trace_report_suffix(report);
    char *copy_name = sentence("%s%s", stem, suffix);
    char *out_name = sentence("%s.sqlite", stem);
    char *copy = sentence("%s/%s%s", dir, stem, suffix);
    char *out = sentence("%s/%s.sqlite", dir, stem);
    int rc = REPORT_ERROR;
    *why = NULL;
    if (!copy_name || !out_name || !copy || !out) goto done;
    int cfd = openat(dfd, copy_name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (cfd < 0) {
        *werr = errno;
        rc = DIR_ERROR;
        goto done;
    }
    int rerr = 0;
    *werr = 0;
    int copied = hash_copy(fd, cfd, h, &rerr, werr);
    if (close(cfd) != 0 && copied == 0) copied = -1, *werr = errno;
    if (copied != 0) {
        unlinkat(dfd, copy_name, 0);
        if (rerr) *why = sentence("%s: cannot read the report: %s", report, strerror(rerr));
        else rc = DIR_ERROR;
        goto done;
    }
    char *argv[] = {r->nsys, "export", "--type", "sqlite", "--force-overwrite", "true", "--output", out, copy, NULL};
    pid_t pid = fork();
    if (pid == 0) {
        int devnull = open("/dev/null", O_WRONLY);
        if (devnull >= 0) dup2(devnull, 1);
        execv(r->nsys, argv);
        _exit(127);
    }
    int status = 0;
    pid_t waited = -1;
    while (pid > 0 && (waited = waitpid(pid, &status, 0)) < 0 && errno == EINTR) {}
    unlinkat(dfd, copy_name, 0);
    struct stat st;
    int efd = -1;
    bool ran = waited == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0;
    if (ran) efd = openat(dfd, out_name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    bool ok = efd >= 0 && fstat(efd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0;
    if (efd >= 0) close(efd);
    if (ok) {
        rc = DONE;
        goto done;
    }
    unlinkat(dfd, out_name, 0);
    char *cmd = command_line(argv);
    const char *tail = "; it ran on a private copy of the report, since removed";
    if (pid < 0) *why = sentence("%s: cannot start nsys to export it: %s", report, strerror(errno));
    else if (!ran && waited == pid && WIFEXITED(status) && WEXITSTATUS(status) == 127)
        *why = sentence("%s: `%s` failed: nsys could not be run%s", report, cmd ? cmd : r->nsys, tail);
    else if (!ran && waited == pid && WIFEXITED(status))
        *why = sentence("%s: `%s` failed (exit status %d)%s", report, cmd ? cmd : r->nsys, WEXITSTATUS(status), tail);
    else if (!ran && waited == pid && WIFSIGNALED(status))
        *why = sentence("%s: `%s` failed (killed by signal %d)%s", report, cmd ? cmd : r->nsys, WTERMSIG(status), tail);
    else
        *why = sentence("%s: `%s` failed: it exited 0 but wrote no export%s", report, cmd ? cmd : r->nsys, tail);
    free(cmd);
done:
    free(copy_name);
    free(out_name);
    free(copy);
    free(out);
    return rc;
}

/* Export in a staging directory of the cache, renamed into the cache as
** HASH.sqlite: the export's path, or NULL (with *why for an error of the
** report; without, the cache could not be written and was warned of). */
static char *export_to_cache(resolver *r, const char *report, int fd, char **why)
{
    char *stage = sentence("%s/.export-XXXXXX", r->cache);
    int werr = 0;
    if (!stage) return NULL;
    if (!mkdtemp(stage)) {
        werr = errno;
        goto cannot_write;
    }
    const char *stage_name = strrchr(stage, '/') + 1;
    int sfd = openat(r->cache_fd, stage_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (sfd < 0) {
        werr = errno;
        remove_dir(r->cache_fd, stage_name);
        goto cannot_write;
    }
    char h[TG_SHA256_HEX] = "";
    int rc = export_into(r, report, fd, sfd, stage, "report", h, why, &werr);
    char name[TG_SHA256_HEX + 8];
    snprintf(name, sizeof name, "%s.sqlite", h);
    if (rc == DONE && renameat(sfd, "report.sqlite", r->cache_fd, name) != 0) {
        werr = errno;
        rc = DIR_ERROR;
    }
    close(sfd);
    remove_dir(r->cache_fd, stage_name);
    if (rc == DONE) {
        char *path = sentence("%s/%s", r->cache, name);
        free(stage);
        return path;
    }
    if (rc == REPORT_ERROR) {
        free(stage);
        return NULL;
    }
cannot_write:
    free(stage);
    r->cache_writable = false;
    warn_cache("cannot write the cache directory", r->cache, strerror(werr));
    return NULL;
}

/* Export into the private temporary directory (made at the first call)
** as I.sqlite: its path, or NULL with *why. */
static char *export_privately(resolver *r, const char *report, int fd, size_t i, char **why)
{
    if (!*r->private_dir) {
        const char *tmp = getenv("TMPDIR");
        char *dir = sentence("%s/tracegate-XXXXXX", tmp && *tmp == '/' ? tmp : "/tmp");
        if (!dir) return NULL;
        if (!mkdtemp(dir) || (r->private_fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0) {
            *why = sentence("%s: cannot make a private temporary directory to export it into (%s): %s", report, dir,
                            strerror(errno));
            rmdir(dir);
            free(dir);
            return NULL;
        }
        *r->private_dir = dir;
    }
    char stem[32];
    snprintf(stem, sizeof stem, "%zu", i);
    char h[TG_SHA256_HEX];
    int werr = 0;
    int rc = export_into(r, report, fd, r->private_fd, *r->private_dir, stem, h, why, &werr);
    if (rc == DIR_ERROR)
        *why = sentence("%s: cannot write the private temporary directory %s to export it into: %s", report,
                        *r->private_dir, strerror(werr));
    return rc == DONE ? sentence("%s/%s.sqlite", *r->private_dir, stem) : NULL;
}

/* Resolve one report: the malloc'd export path, or NULL with the sentence
** saying why in *why (NULL there too: out of memory). */
static char *resolve_report(resolver *r, const char *report, size_t i, char **why)
{
    *why = NULL;
    int fd = open(report, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0) {
        *why = sentence("%s: cannot read the report: %s", report, strerror(errno));
        if (fd >= 0) close(fd);
        return NULL;
    }
    if (!S_ISREG(st.st_mode)) {
        *why = sentence("%s: the report is not a regular file", report);
        close(fd);
        return NULL;
    }
    char h[TG_SHA256_HEX];
    int rerr = 0, werr = 0;
    char *path = NULL;
    if (hash_copy(fd, -1, h, &rerr, &werr) != 0) {
        *why = sentence("%s: cannot read the report: %s", report, strerror(rerr));
        goto done;
    }
    look_at_cache(r);
    char name[TG_SHA256_HEX + 8];
    snprintf(name, sizeof name, "%s.sqlite", h);
    int found = r->cache_fd >= 0 ? look_up(r, name) : BAD;
    if (found == HIT) {
        path = sentence("%s/%s", r->cache, name);
        goto done;
    }
    if (!r->nsys) {
        const char *suffix = tg_trace_report_suffix(report);
        *why = sentence("%s: this is an Nsight Systems report, and nsys is not on PATH to export it; run "
                        "`nsys export --type sqlite --output %.*s.sqlite %s` and check the .sqlite file",
                        report, (int)(strlen(report) - strlen(suffix)), report, report);
        goto done;
    }
    if (lseek(fd, 0, SEEK_SET) != 0) {
        *why = sentence("%s: cannot read the report again: %s", report, strerror(errno));
        goto done;
    }
    if (found == MISS && r->cache_writable) {
        path = export_to_cache(r, report, fd, why);
        if (path || *why || lseek(fd, 0, SEEK_SET) != 0) goto done;
    }
    path = export_privately(r, report, fd, i, why);
done:
    close(fd);
    return path;
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
    resolver r = {.nsys = find_on_path("nsys"), .cache_fd = -1, .private_dir = &out->private_dir, .private_fd = -1};
    int st = TG_OK;
    for (size_t i = 0; i < n; i++) {
        out->given[i] = out->paths[i] = args[i];
        out->n++;
        if (!tg_inputs_is_report(args[i])) continue;
        char *why = NULL;
        char *p = resolve_report(&r, args[i], i, &why);
        out->paths[i] = p;
        if (p) {
            out->owned[out->n_owned++] = p;
        } else if (!(out->errors[i] = why)) {
            st = TG_EINTERNAL;   /* out of memory: no sentence */
            break;
        }
    }
    if (r.cache_fd >= 0) close(r.cache_fd);
    if (r.private_fd >= 0) close(r.private_fd);
    free(r.cache);
    free(r.nsys);
    if (st != TG_OK) tg_inputs_free(out);
    return st;
}

void tg_inputs_free(tg_inputs *in)
{
    for (size_t i = 0; i < in->n_owned; i++) free(in->owned[i]);
    for (size_t i = 0; in->errors && i < in->n; i++) free(in->errors[i]);
    if (in->private_dir) remove_dir(AT_FDCWD, in->private_dir);
    free(in->private_dir);
    free(in->owned);
    free(in->errors);
    free(in->paths);
    free(in->given);
    memset(in, 0, sizeof *in);
}
