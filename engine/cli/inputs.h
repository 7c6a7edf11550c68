/*
** Trace inputs of the CLI (docs/architecture.md, the check's step 3): SQLite exports and Kineto traces
** are used as given; Nsight Systems reports (`.nsys-rep`, and `.qdrep` of
** nsys before 2021.4) are exported on the fly with `nsys export` when nsys
** is on PATH, cached by content hash in $XDG_CACHE_HOME/tracegate
** (~/.cache/tracegate), and otherwise refused with the exact command to
** run. A report that cannot be exported is one unreadable input, like a
** text file in its place: the other inputs are checked all the same.
** A cache directory or entry that someone else could have written is not
** used (one warning on stderr): the report is then exported into a
** private temporary directory, removed by tg_inputs_free (inputs.c,
** docs/limits.md "The export cache").
*/
#ifndef TG_INPUTS_H
#define TG_INPUTS_H

#include <stdbool.h>
#include <stddef.h>

typedef struct tg_inputs {
    const char **given;   /* as given, in order */
    const char **paths;   /* what to open: the file, or the export made from a
                             report; NULL when errors[i] says why there is none */
    char **errors;        /* one sentence per input that is not a trace, or NULL */
    char **owned;         /* paths allocated here (exported reports) */
    char *private_dir;    /* the private temporary directory of exports, or NULL */
    size_t n, n_owned;
} tg_inputs;

/* Is path named as an Nsight Systems report (.nsys-rep, .qdrep)? */
bool tg_inputs_is_report(const char *path);

/* Resolve every argument. Returns 0, or 4 (TG_EINTERNAL) when out of
** memory; an input that could not be exported has its sentence in
** errors[] (only the warnings of an untrusted or read-only cache are
** printed here). */
int tg_inputs_resolve(const char *const *args, size_t n, tg_inputs *out);
void tg_inputs_free(tg_inputs *in);

#endif
