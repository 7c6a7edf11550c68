/*
** Every file the CLI writes (reports of `check -o` and `merge -o`, the
** baseline of `baseline record -o`, and standard output) goes through this
** one piece of infrastructure (docs/formats.md, "Output files"):
**
** 1. Before anything is written, tg_cli_outputs_refused compares each
**    output with the files the command reads (tg_cli_reads: traces and the
**    exports made from reports, rule files, the baseline, merge inputs) by
**    device and inode, so a symlink, a hard link or `./x` for `x` is seen
**    through. An output that is an input, the same file as another
**    output, or a directory, block device or socket is refused: one
**    sentence naming both, exit 2.
** 2. A regular file, or a path that does not exist yet, is written whole
**    or not at all: into a temporary file beside it (`.tracegate-XXXXXX`
**    in the same directory, with the mode of the file it replaces),
**    flushed, fsync'ed and renamed over it. On any error the temporary
**    file is removed, the previous file is left untouched and the command
**    exits 4 with the reason. A symlink is followed: its target is
**    replaced, the link stays.
** 3. A FIFO or a character device (/dev/null, /dev/stdout, a pipe made by
**    `>(...)`) is written directly, as a shell redirection would; it is
**    never replaced by a regular file.
**
** The reason of a failed write is the errno of the write that failed,
** captured where it happened (the stream is a cookie over the file
** descriptor), never an errno left over from an unrelated call.
*/
#ifndef TG_CLI_OUTFILE_H
#define TG_CLI_OUTFILE_H

#include <stdbool.h>
#include <stdio.h>
#include <sys/types.h>

#include "../rules/rules.h"

/* ------------------------------------------------------------ inputs */

typedef struct tg_cli_read {
    dev_t dev;
    ino_t ino;
    const char *path;          /* as given (not owned) */
    const char *role;          /* "trace", "rule file", "baseline", ... */
} tg_cli_read;

typedef struct tg_cli_reads {
    tg_cli_read *files;
    size_t n, cap;
} tg_cli_reads;

/* Note that the command reads path. A path that cannot be stat'ed is
** skipped (its reader reports it); false only when out of memory. */
bool tg_cli_reads_add(tg_cli_reads *r, const char *path, const char *role);
/* Every rule file the set was loaded from. */
bool tg_cli_reads_add_rules(tg_cli_reads *r, const tg_ruleset *rs);
void tg_cli_reads_free(tg_cli_reads *r);

/* ----------------------------------------------------------- outputs */

/* One file the command will write: path NULL or "-" is standard output;
** label says what goes there ("the json report", "the baseline"). */
typedef struct tg_cli_output {
    const char *path;
    const char *label;
} tg_cli_output;

/* Refuse outputs that would destroy an input or another output, or that
** cannot hold a file (see the head of this file). Prints one sentence per
** refused output and returns TG_EUSAGE, else TG_OK; writes nothing. */
int tg_cli_outputs_refused(const tg_cli_reads *reads, const tg_cli_output *outs, size_t n);

/* ------------------------------------------------------------ writing */

typedef struct tg_cli_outfile {
    const char *path;          /* as given; NULL: standard output */
    const char *label;
    char *target;              /* file the temporary is renamed over */
    char *tmp;                 /* temporary beside target; NULL: written directly */
    int fd;
    FILE *f;                   /* the stream to write the content to */
    int err;                   /* errno of the first failed write or call, 0 if none */
} tg_cli_outfile;

/* Open an output for writing (see the head of this file). TG_OK, or
** TG_EINTERNAL after printing why. */
int tg_cli_outfile_open(tg_cli_outfile *of, const char *path, const char *label);

/* Finish an output. content_ok false (the content could not be produced)
** discards it. A regular file is flushed, fsync'ed and renamed into place;
** on any failure the temporary file is removed. TG_OK, or TG_EINTERNAL
** after one message with the label, the path and the reason. */
int tg_cli_outfile_close(tg_cli_outfile *of, bool content_ok);

#endif
