/*
** check's options for where its traces were recorded (check.h,
** docs/formats.md "Where a result comes from"): --rank and --world-size,
** --rank-pattern (the rank read from each trace's path, for one check
** over the several ranks of a node), --job and --host. They are checked
** before any trace is read, so a recipe that passes them never runs a
** long check to learn its arguments were wrong, and they win over what a
** trace's recorded environment says, with a warning when the two differ
** (a launcher's variables can mislead: SLURM_PROCID numbers srun tasks).
*/
#include "check.h"

#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The rank group 1 of re finds in path: -1 no match, -2 not a number. */
static int64_t rank_in(const regex_t *re, const char *path)
{
    regmatch_t m[2];
    if (regexec(re, path, 2, m, 0) != 0 || m[1].rm_so < 0) return -1;
    int64_t v = 0;
    if (m[1].rm_eo == m[1].rm_so || m[1].rm_eo - m[1].rm_so > 9) return -2;
    for (regoff_t i = m[1].rm_so; i < m[1].rm_eo; i++) {
        if (path[i] < '0' || path[i] > '9') return -2;
        v = v * 10 + (path[i] - '0');
    }
    return v;
}

static bool compile_pattern(const char *pattern, regex_t *re, tg_diag *diag)
{
    const char *refuse = tg_regex_refuse(pattern);
    if (refuse) {
        tg_diag_error(diag, TG_EUSAGE, "--rank-pattern: the pattern %s", refuse);
        return false;
    }
    if (regcomp(re, pattern, REG_EXTENDED) != 0) {
        tg_diag_error(diag, TG_EUSAGE, "--rank-pattern: '%s' is not a POSIX extended regular expression",
                      pattern);
        return false;
    }
    if (re->re_nsub < 1) {
        regfree(re);
        tg_diag_error(diag, TG_EUSAGE, "--rank-pattern: '%s' has no group: put the rank's digits in one, "
                      "as in 'rank([0-9]+)'", pattern);
        return false;
    }
    return true;
}

tg_status tg_origin_opts_check(const tg_origin_opts *o, const char *const *paths, size_t n, tg_diag *diag)
{
    if (o->rank >= 0 && o->rank_pattern) {
        tg_diag_error(diag, TG_EUSAGE, "--rank and --rank-pattern both give the rank: use one");
        return TG_EUSAGE;
    }
    if (o->rank >= 0 && n != 1) {
        tg_diag_error(diag, TG_EUSAGE, "--rank %lld names the rank of one trace, and %zu are given: check each "
                      "rank's trace on its own, or name them with --rank-pattern", (long long)o->rank, n);
        return TG_EUSAGE;
    }
    if (o->rank >= 0 && o->world_size > 0 && o->rank >= o->world_size) {
        tg_diag_error(diag, TG_EUSAGE, "--rank %lld is not a rank of a world of %lld (ranks 0 to %lld)",
                      (long long)o->rank, (long long)o->world_size, (long long)o->world_size - 1);
        return TG_EUSAGE;
    }
    if (!o->rank_pattern) return TG_OK;
    regex_t re;
    if (!compile_pattern(o->rank_pattern, &re, diag)) return TG_EUSAGE;
    tg_status st = TG_OK;
    for (size_t i = 0; i < n && st == TG_OK; i++) {
        int64_t rank = rank_in(&re, paths[i]);
        if (rank < 0) {
            tg_diag_error(diag, TG_EUSAGE, "%s: --rank-pattern '%s' %s", paths[i], o->rank_pattern,
                          rank == -1 ? "does not match this path" : "matches, but its group is not a rank (digits)");
            st = TG_EUSAGE;
        } else if (o->world_size > 0 && rank >= o->world_size) {
            tg_diag_error(diag, TG_EUSAGE, "%s: rank %lld (--rank-pattern) is not a rank of a world of %lld",
                          paths[i], (long long)rank, (long long)o->world_size);
            st = TG_EUSAGE;
        }
    }
    regfree(&re);
    return st;
}

/* A warning when an option replaces a different recorded value. */
static void replaces(tg_diag *diag, const char *file, const char *option, const char *given, const char *what,
                     const char *recorded)
{
    if (recorded && strcmp(given, recorded) != 0)
        tg_diag_add(diag, TG_DIAG_WARNING, TG_OK, (tg_pos){0}, NULL,
                    "%s: %s %s replaces the %s %s that the trace records", file, option, given, what, recorded);
}

bool tg_origin_apply(const tg_origin_opts *o, tg_trace_result *r, const char *path, tg_arena *a, tg_diag *diag)
{
    tg_origin *og = &r->origin;
    const char *file = r->file ? r->file : "(trace)";
    char given[32], recorded[32];
    int64_t rank = o->rank;
    const char *from = rank >= 0 ? "--rank" : NULL;
    if (o->rank_pattern) {
        regex_t re;
        tg_diag scratch;   /* the pattern was checked: no error here */
        tg_diag_init(&scratch);
        if (compile_pattern(o->rank_pattern, &re, &scratch)) {
            rank = rank_in(&re, path);
            from = rank >= 0 ? "--rank-pattern" : NULL;
            regfree(&re);
        }
        tg_diag_clear(&scratch);
    }
    if (from) {
        snprintf(given, sizeof given, "%lld", (long long)rank);
        snprintf(recorded, sizeof recorded, "%lld", (long long)og->rank);
        replaces(diag, file, from, given, "rank", tg_origin_has_rank(og) ? recorded : NULL);
        og->rank = rank;
        og->rank_from = from;
    }
    if (o->world_size > 0) {
        snprintf(given, sizeof given, "%lld", (long long)o->world_size);
        snprintf(recorded, sizeof recorded, "%lld", (long long)og->world_size);
        replaces(diag, file, "--world-size", given, "world size", og->world_size > 0 ? recorded : NULL);
        og->world_size = o->world_size;
    }
    if (o->job) {
        replaces(diag, file, "--job", o->job, "job id", og->job);
        if (!(og->job = tg_arena_strdup(a, o->job))) return false;
    }
    if (o->host) {
        replaces(diag, file, "--host", o->host, "host name", og->host);
        if (!(og->host = tg_arena_strdup(a, o->host))) return false;
    }
    return true;
}
