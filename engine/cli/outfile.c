/*
** Output files of the CLI: refusing outputs that are inputs, and writing
** whole-or-nothing (outfile.h). Everything here prints its own one-line
** messages: it is the CLI's side of writing, below the subcommands.
*/
#include "outfile.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../common/common.h"
#include "cli.h"

#define SYMLINK_HOPS 40        /* as the kernel's ELOOP limit */

/* ------------------------------------------------------------ inputs */

bool tg_cli_reads_add(tg_cli_reads *r, const char *path, const char *role)
{
    struct stat st;
    if (!path || stat(path, &st) != 0) return true;
    tg_cli_read f = {st.st_dev, st.st_ino, path, role};
    return TG_PUSH(r->files, r->n, r->cap, f);
}

bool tg_cli_reads_add_rules(tg_cli_reads *r, const tg_ruleset *rs)
{
    for (size_t i = 0; rs && i < tg_rules_file_count(rs); i++)
        if (!tg_cli_reads_add(r, tg_rules_file(rs, i), "rule file")) return false;
    return true;
}

void tg_cli_reads_free(tg_cli_reads *r)
{
    free(r->files);
    memset(r, 0, sizeof *r);
}

/* ------------------------------------------------------------ paths */

static bool is_stdout(const char *path) { return !path || !strcmp(path, "-"); }

/* dir part of path ("." when none), malloc'd. */
static char *dir_of(const char *path)
{
    const char *slash = strrchr(path, '/');
    if (!slash) return strdup(".");
    if (slash == path) return strdup("/");
    return strndup(path, (size_t)(slash - path));
}

/* Follow symlinks in the last component of path, also dangling ones, so
** that a report written through a link replaces the link's target and
** not the link. malloc'd; NULL with errno on failure (ELOOP, ENOMEM). */
static char *follow_links(const char *path)
{
    char *p = strdup(path);
    for (int hop = 0; p; hop++) {
        struct stat st;
        if (lstat(p, &st) != 0 || !S_ISLNK(st.st_mode)) return p;
        if (hop == SYMLINK_HOPS) {
            free(p);
            errno = ELOOP;
            return NULL;
        }
        char link[PATH_MAX];
        ssize_t n = readlink(p, link, sizeof link - 1);
        if (n < 0) {
            int e = errno;
            free(p);
            errno = e;
            return NULL;
        }
        link[n] = 0;
        char *next;
        if (link[0] == '/') {
            next = strdup(link);
        } else {
            char *dir = dir_of(p);
            next = dir ? malloc(strlen(dir) + (size_t)n + 2) : NULL;
            if (next) sprintf(next, "%s/%s", dir, link);
            free(dir);
        }
        free(p);
        p = next;
    }
    errno = ENOMEM;
    return NULL;
}

/* Where an output lands: the file's identity when it exists, else its
** directory's identity and its name (two new outputs can still clash). */
typedef struct out_id {
    bool exists;
    mode_t mode;
    dev_t dev;
    ino_t ino;
    char *name;                /* last component, when !exists (malloc'd) */
} out_id;

static bool identify(const char *path, out_id *id)
{
    memset(id, 0, sizeof *id);
    struct stat st;
    if (stat(path, &st) == 0) {
        *id = (out_id){true, st.st_mode, st.st_dev, st.st_ino, NULL};
        return true;
    }
    char *target = follow_links(path);
    if (!target) return false;
    char *dir = dir_of(target);
    const char *slash = strrchr(target, '/');
    id->name = strdup(slash ? slash + 1 : target);
    bool ok = dir && id->name && stat(dir, &st) == 0;
    if (ok) {
        id->dev = st.st_dev;
        id->ino = st.st_ino;
    }
    free(dir);
    free(target);
    return ok;
}

static bool same_place(const out_id *a, const out_id *b)
{
    return a->exists == b->exists && a->dev == b->dev && a->ino == b->ino &&
           (a->exists || !strcmp(a->name, b->name));
}

static const char *shown(const char *path) { return is_stdout(path) ? "standard output" : path; }

/* Why no report can go to a file of this kind, or NULL. */
static const char *unwritable_kind(mode_t mode)
{
    if (S_ISDIR(mode)) return "it is a directory";
    if (S_ISBLK(mode)) return "it is a block device";
    if (S_ISSOCK(mode)) return "it is a socket";
    return NULL;
}

static int refuse(const tg_cli_output *o, const char *why_fmt, const char *a, const char *b)
{
    char why[8192];
    snprintf(why, sizeof why, why_fmt, a, b);
    tg_cli_say("refusing to write %s to %s: %s", o->label, shown(o->path), why);
    return TG_EUSAGE;
}

/* Is output o (identity id) one of the inputs? */
static int check_inputs(const tg_cli_reads *reads, const tg_cli_output *o, const out_id *id)
{
    if (!id->exists) return TG_OK;
    for (size_t i = 0; i < reads->n; i++) {
        const tg_cli_read *in = &reads->files[i];
        if (in->dev == id->dev && in->ino == id->ino)
            return refuse(o, "it is the %s %s, which this command reads", in->role, in->path);
    }
    return TG_OK;
}

int tg_cli_outputs_refused(const tg_cli_reads *reads, const tg_cli_output *outs, size_t n)
{
    int st = TG_OK;
    out_id *ids = calloc(n ? n : 1, sizeof *ids);
    if (!ids) return TG_EINTERNAL;
    for (size_t i = 0; i < n && st == TG_OK; i++) {
        const tg_cli_output *o = &outs[i];
        if (is_stdout(o->path)) {
            /* `check T >> T`: standard output appends to an input */
            struct stat sst;
            if (fstat(STDOUT_FILENO, &sst) == 0 && S_ISREG(sst.st_mode))
                ids[i] = (out_id){true, sst.st_mode, sst.st_dev, sst.st_ino, NULL};
        } else if (!identify(o->path, &ids[i])) {
            continue;   /* an unreachable directory: the write says why */
        }
        const char *bad = ids[i].exists ? unwritable_kind(ids[i].mode) : NULL;
        if (bad) {
            st = refuse(o, "%s%s", bad, "");
            break;
        }
        st = check_inputs(reads, o, &ids[i]);
        /* two outputs into one file: the second would replace the first;
        ** character devices (/dev/null) can take any number */
        for (size_t j = 0; j < i && st == TG_OK; j++)
            if ((ids[j].exists || ids[j].name) && same_place(&ids[i], &ids[j]) &&
                !(ids[i].exists && S_ISCHR(ids[i].mode)))
                st = refuse(o, "%s goes to the same file (%s)", outs[j].label, shown(outs[j].path));
    }
    for (size_t i = 0; i < n; i++) free(ids[i].name);
    free(ids);
    return st;
}

/* ------------------------------------------------------------ writing */

/* The stream's write: every byte reaches the descriptor or the first
** errno is kept (stdio would lose it to later calls). */
static ssize_t cookie_write(void *cookie, const char *buf, size_t size)
{
    tg_cli_outfile *of = cookie;
    size_t done = 0;
    while (done < size && !of->err) {
        ssize_t w = write(of->fd, buf + done, size - done);
        if (w > 0) done += (size_t)w;
        else if (w < 0 && errno == EINTR) continue;
        else of->err = w < 0 ? errno : EIO;
    }
    return of->err ? 0 : (ssize_t)size;   /* 0: an error, for stdio */
}

static int fail(tg_cli_outfile *of, const char *what, int err)
{
    tg_cli_say("cannot write %s to %s: %s%s%s", of->label, shown(of->path), what ? what : "", what ? ": " : "",
               strerror(err));
    return TG_EINTERNAL;
}

static bool attach_stream(tg_cli_outfile *of)
{
    of->f = fopencookie(of, "w", (cookie_io_functions_t){.write = cookie_write});
    if (!of->f) return false;
    setvbuf(of->f, NULL, _IOFBF, 1 << 16);
    return true;
}

/* A temporary file beside target, with the mode (and, for root, the
** owner) of the file it will replace. */
static int open_temp(tg_cli_outfile *of, const struct stat *old)
{
    char *dir = dir_of(of->target);
    of->tmp = dir ? malloc(strlen(dir) + sizeof "/.tracegate-XXXXXX") : NULL;
    if (!of->tmp) {
        free(dir);
        return fail(of, NULL, ENOMEM);
    }
    sprintf(of->tmp, "%s/.tracegate-XXXXXX", dir);
    free(dir);
    of->fd = mkostemp(of->tmp, O_CLOEXEC);
    if (of->fd < 0) {
        int e = errno;
        free(of->tmp);
        of->tmp = NULL;
        return fail(of, "cannot create a temporary file beside it", e);
    }
    mode_t mode;
    if (old) {
        mode = old->st_mode & 07777;
        if (fchown(of->fd, old->st_uid, old->st_gid) != 0) { /* not ours to give: keep ours */ }
    } else {
        mode_t mask = umask(0);
        umask(mask);
        mode = 0666 & ~mask;
    }
    if (fchmod(of->fd, mode) != 0) of->err = errno;
    return TG_OK;
}

/* Close without keeping anything: the temporary file goes. */
static void discard(tg_cli_outfile *of)
{
    if (of->f) fclose(of->f);
    if (of->path && of->fd >= 0) close(of->fd);
    if (of->tmp) unlink(of->tmp);
    free(of->tmp);
    free(of->target);
    of->f = NULL;
    of->fd = -1;
    of->tmp = of->target = NULL;
}

int tg_cli_outfile_open(tg_cli_outfile *of, const char *path, const char *label)
{
    *of = (tg_cli_outfile){.path = is_stdout(path) ? NULL : path, .label = label, .fd = -1};
    if (!of->path) {
        fflush(stdout);   /* what was printed before comes first */
        of->fd = STDOUT_FILENO;
        return attach_stream(of) ? TG_OK : fail(of, NULL, errno);
    }
    struct stat st;
    bool exists = stat(path, &st) == 0;
    if (exists && !S_ISREG(st.st_mode)) {
        const char *bad = unwritable_kind(st.st_mode);
        if (bad) {
            tg_cli_say("cannot write %s to %s: %s", label, path, bad);
            return TG_EINTERNAL;
        }
        /* FIFO or character device: written in place, never replaced */
        of->fd = open(path, O_WRONLY | O_CLOEXEC | O_NOCTTY);
        if (of->fd < 0) return fail(of, NULL, errno);
    } else {
        of->target = follow_links(path);
        if (!of->target) return fail(of, NULL, errno);
        int rc = open_temp(of, exists ? &st : NULL);
        if (rc != TG_OK) {
            free(of->target);
            of->target = NULL;
            return rc;
        }
    }
    if (attach_stream(of)) return TG_OK;
    int e = errno;
    discard(of);
    return fail(of, NULL, e);
}

/* fsync the directory so that the rename survives a crash; a directory
** that cannot be opened or synced (some file systems) is not an error. */
static void sync_dir(const char *target)
{
    char *dir = dir_of(target);
    int fd = dir ? open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC) : -1;
    if (fd >= 0) {
        if (fsync(fd) != 0) { /* best effort */ }
        close(fd);
    }
    free(dir);
}

int tg_cli_outfile_close(tg_cli_outfile *of, bool content_ok)
{
    const char *step = NULL;
    if (of->f) {
        if (fflush(of->f) != 0 && !of->err) of->err = EIO;
        fclose(of->f);   /* the cookie's stream: the descriptor stays open */
        of->f = NULL;
    }
    if (of->tmp) {
        if (content_ok && !of->err && fsync(of->fd) != 0) {
            of->err = errno;
            step = "cannot sync it to disk";
        }
        if (close(of->fd) != 0 && !of->err) of->err = errno;
        if (content_ok && !of->err && rename(of->tmp, of->target) != 0) {
            of->err = errno;
            step = "cannot rename the temporary file over it";
        }
        if (content_ok && !of->err) sync_dir(of->target);
        else unlink(of->tmp);
    } else if (of->path && of->fd >= 0) {
        if (close(of->fd) != 0 && !of->err) of->err = errno;
    }
    of->fd = -1;
    free(of->tmp);
    free(of->target);
    of->tmp = of->target = NULL;
    if (content_ok && !of->err) return TG_OK;
    if (of->err) return fail(of, step, of->err);
    tg_cli_say("cannot write %s to %s: it could not be produced (internal error)", of->label, shown(of->path));
    return TG_EINTERNAL;
}
