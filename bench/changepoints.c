/*
** changepoints: the cost of change-point detection (tg_changepoints,
** engine/history/changepoint.c) at the size issue 30 item 8 sets for
** `history show`: 20 metrics over 1,000 runs, in under 1 s with the rest of
** the command. Each case is 20 series of 1,000 points (normal noise, sd 1,
** from a fixed seed, so every repeat does the same work):
**
**   none      no change: each search ends in one test that stops early
**   step      a 1 sd step at run 600 of every series: one accepted split
**             each (all R permutations) and one test more of the two halves
**   two       steps of 1 sd at runs 300 and 700 of every series
**
** and prints, per case, the wall time of the 20 calls (min, median, max of
** the repeats, CLOCK_MONOTONIC), the median CPU time of the process over
** them (CLOCK_PROCESS_CPUTIME_ID: what a loaded host does not inflate) and
** the work the calls did (permutation tests, permutations, change points
** found).
**
**     changepoints [REPEATS]      (default 11)
*/
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/stats.h"
#include "history/changepoint.h"

#define N_SERIES 20
#define N_POINTS 1000

static double uniform(uint64_t *s) { return ((double)(tg_cp_random(s) >> 11) + 0.5) / 9007199254740992.0; }

static double normal(uint64_t *s) { return sqrt(-2 * log(uniform(s))) * cos(6.283185307179586 * uniform(s)); }

typedef struct bench_case {
    const char *name;
    size_t at[2];       /* steps of 1 sd from these runs on; 0: none */
} bench_case;

static const bench_case cases[] = {
    {"none", {0, 0}},
    {"step", {600, 0}},
    {"two", {300, 700}},
};

static double clock_s(clockid_t clock)
{
    struct timespec t;
    clock_gettime(clock, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

int main(int argc, char **argv)
{
    int reps = argc > 1 ? atoi(argv[1]) : 11;
    if (reps < 1 || argc > 2) {
        fprintf(stderr, "usage: changepoints [REPEATS]\n");
        return 2;
    }
    static double x[N_SERIES][N_POINTS];
    double *times = malloc((size_t)reps * sizeof *times), *cpu = malloc((size_t)reps * sizeof *cpu);
    if (!times || !cpu) return 1;
    printf("case  series x points  wall: min_s  median_s  max_s  cpu: median_s  tests  permutations  found\n");
    for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
        uint64_t rng = 2026;
        for (size_t s = 0; s < N_SERIES; s++)
            for (size_t i = 0; i < N_POINTS; i++)
                x[s][i] = 100 + normal(&rng) + (cases[c].at[0] && i >= cases[c].at[0]) +
                          (cases[c].at[1] && i >= cases[c].at[1]);
        uint64_t tests = 0, permutations = 0, found = 0;
        for (int r = 0; r < reps; r++) {
            double t0 = clock_s(CLOCK_MONOTONIC), c0 = clock_s(CLOCK_PROCESS_CPUTIME_ID);
            for (size_t s = 0; s < N_SERIES; s++) {
                tg_cp *cp;
                size_t n;
                tg_cp_work work;
                if (!tg_changepoints_counted(x[s], N_POINTS, NULL, &cp, &n, &work)) {
                    fprintf(stderr, "changepoints: out of memory\n");
                    return 1;
                }
                free(cp);
                if (r == 0) tests += work.tests, permutations += work.permutations, found += n;
            }
            times[r] = clock_s(CLOCK_MONOTONIC) - t0;
            cpu[r] = clock_s(CLOCK_PROCESS_CPUTIME_ID) - c0;
        }
        tg_stats_sort(times, (size_t)reps);
        printf("%-5s %d x %d  %.4f  %.4f  %.4f  %.4f  %llu  %llu  %llu\n", cases[c].name, N_SERIES, N_POINTS,
               times[0], tg_stats_percentile_sorted(times, (size_t)reps, 0.5), times[reps - 1],
               tg_stats_median(cpu, (size_t)reps), (unsigned long long)tests, (unsigned long long)permutations,
               (unsigned long long)found);
    }
    free(times);
    free(cpu);
    return 0;
}
