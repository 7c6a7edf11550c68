/*
** Trace inputs of the CLI (docs/architecture.md, the check's step 3): SQLite
** exports are used as given; `.nsys-rep` reports are exported on the fly with
** `nsys export` when nsys is on PATH, cached by content hash, and otherwise
** refused with the exact command to run.
*/
#ifndef TG_INPUTS_H
#define TG_INPUTS_H

#include <stddef.h>

typedef struct tg_inputs {
    const char **paths;   /* what to open, in the order given */
    char **owned;         /* paths allocated here (exported reports) */
    size_t n, n_owned;
} tg_inputs;

/* Returns 0, or 3 (TG_ETRACE) after printing one sentence per bad input. */
int tg_inputs_resolve(const char *const *args, size_t n, tg_inputs *out);
void tg_inputs_free(tg_inputs *in);

#endif
