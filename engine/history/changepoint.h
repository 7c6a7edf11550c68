/*
** Change points with a count of the work they took (changepoint.c): what
** the unit tests and bench/changepoints.c bound and time, since a test may
** bound work but never time (docs/regressions.md, "Change points"). The
** public entry point is tg_changepoints in history.h.
*/
#ifndef TG_CHANGEPOINT_H
#define TG_CHANGEPOINT_H

#include "history.h"

/* The generator of the permutations (splitmix64, Steele et al. 2014):
** the next 64 random bits of *state. The tests and the bench draw their
** synthetic noise from it too. */
static inline uint64_t tg_cp_random(uint64_t *state)
{
    uint64_t z = (*state += 0x9e3779b97f4a7c15u);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
    return z ^ (z >> 31);
}

/* The work one call of tg_changepoints_counted did. */
typedef struct tg_cp_work {
    uint64_t tests;         /* permutation tests run (one per candidate split) */
    uint64_t permutations;  /* permutations drawn, over all tests */
    uint64_t scans;         /* segments whose every split was scored (one
                               O(n log n) pass each) */
    uint64_t permutations_max;  /* the permutations one test may draw (R) */
    uint64_t bounded;       /* permuted segments a bound settled without a scan */
} tg_cp_work;

/* tg_changepoints, counting its work into *work (zeroed first; may be NULL). */
bool tg_changepoints_counted(const double *x, size_t n, const tg_cp_opts *opts, tg_cp **out, size_t *n_out,
                             tg_cp_work *work);

/* One series of tg_changepoints_batch: x[0..n) in, and what
** tg_changepoints gives for it out (cps malloc'd, the caller frees it). */
typedef struct tg_cp_job {
    const double *x;
    size_t n;
    tg_cp *cps;
    size_t n_cps;
    bool ok;            /* false: out of memory on this one */
} tg_cp_job;

/* tg_changepoints of every job, on up to `threads` threads (0: as many as
** the cores this process may run on). Each series is searched alone, from
** the same seed, so the answers are those of one call each, whatever the
** threads and the order they take the jobs in. False when any job ran out
** of memory (the others' answers stay, to free). */
bool tg_changepoints_batch(tg_cp_job *jobs, size_t n, const tg_cp_opts *opts, int threads);

#endif
