/*
** Internal invariants (common.h): the first failure is kept for the CLI,
** which turns it into exit 4; debug builds abort at the place.
*/
#include "common.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>

#ifdef NDEBUG
static atomic_bool abort_on_failure = false;
#else
static atomic_bool abort_on_failure = true;
#endif
static atomic_flag taken = ATOMIC_FLAG_INIT;
static char first[512];
static atomic_bool recorded = false;

void tg_invariant_failed(const char *what, const char *file, int line)
{
    if (!atomic_flag_test_and_set(&taken)) {
        snprintf(first, sizeof first, "%s:%d: %s", file, line, what);
        atomic_store(&recorded, true);
    }
    /* The library never prints, but an abort without the place would
    ** leave nothing to go on: the one exception, on the way down. */
    if (atomic_load(&abort_on_failure)) {
        fprintf(stderr, "tracegate: internal error: %s:%d: %s\n", file, line, what);
        abort();
    }
}

const char *tg_invariant_failure(void)
{
    return atomic_load(&recorded) ? first : NULL;
}

void tg_invariant_set_abort(bool on)
{
    atomic_store(&abort_on_failure, on);
}
