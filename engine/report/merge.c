/*
** What `tracegate merge` adds to the results it reads (docs/formats.md,
** "merge"): the ranks of each job accounted for, and the cross-rank
** comparison (docs/architecture.md, "Many traces").
**
** Ranks: the results of one job (by job id; results without one are one
** job) must name each rank once and agree on the world size. Two results
** for one rank, a rank outside its world, and two world sizes are usage
** errors; a rank without a result, when the world size is known, becomes
** an unreadable-trace entry naming the missing ranks, so the merged
** verdict is an error (exit 3): a missing rank is not a pass. Without a
** world size the ranks below the highest one present are still known (a
** gap is a missing rank, the same entry); what lies above it is not, which
** a warning says.
**
** Comparison: in a data-parallel job every rank waits for the slowest at
** each collective, so one slow rank sets the pace of all. Per job, each
** rank's p50 steady iteration period (its workload, else the metric of
** iteration-time-regression) is compared with the median over the ranks;
** one more than `threshold` above it fails `rank-straggler`, which states
** its GPU time and idle time per iteration beside the median rank's, and
** the slowest rank names what it ran differently from the median rank:
** the GPU work and NVTX ranges that moved, or the time its GPU waited
** (engine/eval/eval_contrib.c, the attribution of regression findings).
*/
#include "json_read.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/stats.h"
#include "../common/units.h"
#include "../eval/eval.h"

/* ------------------------------------------------------------ grouping */

/* A trace of the run by job, then rank (unknown first), then position. */
typedef struct member {
    const char *job;
    int64_t rank;              /* -1 unknown */
    size_t i;
} member;

static int cmp_job(const char *a, const char *b)
{
    if (!a || !b) return (a != NULL) - (b != NULL);
    return strcmp(a, b);
}

static int cmp_member(const void *pa, const void *pb)
{
    const member *a = pa, *b = pb;
    int c = cmp_job(a->job, b->job);
    if (c) return c;
    if (a->rank != b->rank) return a->rank < b->rank ? -1 : 1;
    return (a->i > b->i) - (a->i < b->i);
}

/* The traces of run sorted into members; NULL when out of memory. */
static member *members_of(const tg_run_result *run)
{
    member *m = malloc((run->n_traces ? run->n_traces : 1) * sizeof *m);
    if (!m) return NULL;
    for (size_t i = 0; i < run->n_traces; i++) {
        const tg_origin *o = &run->traces[i].origin;
        m[i] = (member){o->job, tg_origin_has_rank(o) ? o->rank : -1, i};
    }
    qsort(m, run->n_traces, sizeof *m, cmp_member);
    return m;
}

/* End of the group (same job) that starts at g. */
static size_t group_end(const member *m, size_t n, size_t g)
{
    size_t e = g + 1;
    while (e < n && !cmp_job(m[e].job, m[g].job)) e++;
    return e;
}

/* ---------------------------------------------------------------- ranks */

/* "results/node0.json (rank3.sqlite)": where a trace's result came from. */
static const char *where(tg_arena *a, const tg_trace_result *t)
{
    const char *file = t->file ? t->file : "(unnamed trace)";
    return t->source ? tg_arena_printf(a, "%s (%s)", t->source, file) : file;
}

static const char *of_job(tg_arena *a, const char *job)
{
    return job ? tg_arena_printf(a, " of job %s", job) : "";
}

#define MAX_RANK_ERRORS 5

typedef struct rank_check {
    tg_run_result *run;
    int64_t world_size;        /* --world-size, -1 */
    tg_diag *diag;
    size_t errors;             /* reported; the ones after them are counted */
    size_t more;
    size_t untrusted;          /* world sizes above TG_MERGE_WORLD_MAX, ignored */
    tg_trace_result *added;    /* entries for missing ranks */
    size_t n_added;
} rank_check;

/* One error (text in the arena); after MAX_RANK_ERRORS only counted. */
static void rank_error(rank_check *rc, const char *text)
{
    if (rc->errors >= MAX_RANK_ERRORS) {
        rc->more++;
        return;
    }
    rc->errors++;
    tg_diag_error(rc->diag, TG_EUSAGE, "%s", text ? text : "the ranks of the results do not fit together");
}

/* The world size of a group: --world-size, or what its results agree on;
** -1 unknown, -2 after an error. */
static int64_t group_world(rank_check *rc, const member *m, size_t g, size_t e)
{
    tg_arena *a = rc->run->arena;
    int64_t w = rc->world_size;
    const tg_trace_result *from = NULL;
    for (size_t k = g; k < e; k++) {
        const tg_trace_result *t = &rc->run->traces[m[k].i];
        int64_t ws = t->origin.world_size;
        if (ws <= 0) continue;
        if (ws > TG_MERGE_WORLD_MAX) {   /* a claim, not trusted (docs/limits.md) */
            if (!rc->untrusted++)
                tg_diag_add(rc->diag, TG_DIAG_WARNING, TG_OK, (tg_pos){0}, NULL,
                            "%s says the world%s has %lld ranks, more than the %lld merge accepts "
                            "(docs/limits.md): not trusted, so that world size is not used", where(a, t),
                            of_job(a, m[g].job), (long long)ws, (long long)TG_MERGE_WORLD_MAX);
            continue;
        }
        if (w < 0) {
            w = ws;
            from = t;
        } else if (ws != w) {
            rank_error(rc, from ? tg_arena_printf(a, "the results%s disagree on the world size: %s says %lld ranks, "
                                                     "%s says %lld", of_job(a, m[g].job), where(a, from),
                                                  (long long)w, where(a, t), (long long)ws)
                                : tg_arena_printf(a, "--world-size %lld, but %s says the world%s has %lld ranks",
                                                  (long long)w, where(a, t), of_job(a, m[g].job), (long long)ws));
            return -2;
        }
    }
    return w;
}

/* The ranks of [0, w) not in the sorted present[0..n) (distinct, < w),
** as runs: (*out)[2k] to (*out)[2k + 1] (arena), at most n + 1 of them
** whatever w is -- a world size is a claim of the results or of an
** option, and the work and the output are bounded by the results given
** (docs/limits.md, "merge"). Their number; the ranks they hold in *count. */
static size_t missing_runs(tg_arena *a, const int64_t *present, size_t n, int64_t w, int64_t **out, int64_t *count)
{
    *out = tg_arena_alloc(a, 2 * (n + 1) * sizeof **out);
    *count = 0;
    if (!*out) return 0;
    size_t runs = 0;
    int64_t next = 0;          /* the lowest rank not yet accounted for */
    for (size_t k = 0; k <= n; k++) {
        int64_t upto = k < n ? present[k] : w;   /* ranks next..upto-1 are missing */
        if (upto > next) {
            (*out)[2 * runs] = next;
            (*out)[2 * runs + 1] = upto - 1;
            runs++;
            *count += upto - next;
        }
        if (k < n) next = present[k] + 1;
    }
    return runs;
}

/* "3, 5-7, 12": the runs, at most 20 then "and N more". */
static char *rank_runs(tg_arena *a, const int64_t *runs, size_t n)
{
    char buf[512] = "";
    size_t len = 0;
    for (size_t i = 0; i < n && i < 20; i++) {
        long long lo = (long long)runs[2 * i], hi = (long long)runs[2 * i + 1];
        int c = hi > lo ? snprintf(buf + len, sizeof buf - len, "%s%lld-%lld", len ? ", " : "", lo, hi)
                        : snprintf(buf + len, sizeof buf - len, "%s%lld", len ? ", " : "", lo);
        if (c > 0 && (size_t)c < sizeof buf - len) len += (size_t)c;
    }
    return n > 20 ? tg_arena_printf(a, "%s and %zu more runs of ranks", buf, n - 20) : tg_arena_strdup(a, buf);
}

/* The entry that stands for a group's missing ranks: those of [0, w)
** without a result. known: w is the world size; else it is the highest
** rank present + 1 (ranks are numbered from 0 without gaps, so a gap
** below the highest is a rank missing whatever the world size). */
static bool add_missing(rank_check *rc, const char *job, int64_t w, bool known, const int64_t *present, size_t n,
                        size_t unranked)
{
    tg_arena *a = rc->run->arena;
    int64_t *missing, n_missing;
    size_t n_runs = missing_runs(a, present, n, w, &missing, &n_missing);
    char *list = missing ? rank_runs(a, missing, n_runs) : NULL;
    const char *note = !unranked ? ""
                     : tg_arena_printf(a, " (%zu result%s name%s no rank: give check --rank or --rank-pattern)",
                                       unranked, unranked > 1 ? "s" : "", unranked > 1 ? "" : "s");
    const char *of = known ? tg_arena_printf(a, "the %lld ranks", (long long)w)
                           : tg_arena_printf(a, "the ranks 0 to %lld", (long long)w - 1);
    const char *unknown = known ? ""
                        : tg_arena_printf(a, "; the world size is unknown (no result records it and no --world-size "
                                             "is given), so ranks above %lld are not accounted for either",
                                          (long long)w - 1);
    tg_trace_result *x = &rc->added[rc->n_added++];
    memset(x, 0, sizeof *x);
    x->file = tg_arena_printf(a, "(ranks without a result%s)", of_job(a, job));
    x->status = TG_ETRACE;
    x->origin = (tg_origin){.rank = -1, .world_size = known ? w : -1, .job = job};
    x->missing_ranks = missing;
    x->n_missing_ranks = n_runs;
    x->error = tg_arena_printf(a, "no result for %lld of %s%s (rank%s %s): their check did not run, "
                               "failed before writing its result, or the result was not given to merge; a missing "
                               "rank is not a pass%s%s", (long long)n_missing, of ? of : "", of_job(a, job),
                               n_missing > 1 ? "s" : "", list ? list : "", unknown ? unknown : "", note ? note : "");
    return missing && list && note && of && unknown && x->file && x->error;
}

/* One group: ranks inside the world, each once; an entry for the missing. */
static bool check_group(rank_check *rc, const member *m, size_t g, size_t e)
{
    tg_arena *a = rc->run->arena;
    int64_t w = group_world(rc, m, g, e);
    if (w == -2) return true;
    int64_t *present = malloc((e - g) * sizeof *present);
    if (!present) return false;
    size_t n = 0, unranked = 0, errors = rc->errors + rc->more;
    for (size_t k = g; k < e; k++) {
        const tg_trace_result *t = &rc->run->traces[m[k].i];
        if (m[k].rank < 0) unranked++;
        else if (w > 0 && m[k].rank >= w)
            rank_error(rc, tg_arena_printf(a, "%s: rank %lld is not a rank%s, whose world has %lld ranks (0 to %lld)",
                                           where(a, t), (long long)m[k].rank, of_job(a, m[k].job), (long long)w,
                                           (long long)w - 1));
        else if (n && present[n - 1] == m[k].rank)
            rank_error(rc, tg_arena_printf(a, "rank %lld%s has two results, %s and %s: a rank's trace is checked "
                                              "once; give merge each rank's result once", (long long)m[k].rank,
                                           of_job(a, m[k].job), where(a, &rc->run->traces[m[k - 1].i]),
                                           where(a, t)));
        else
            present[n++] = m[k].rank;
    }
    bool ok = true;
    if (rc->errors + rc->more == errors) {
        if (w > 0 && (int64_t)n < w) ok = add_missing(rc, m[g].job, w, true, present, n, unranked);
        else if (w < 0 && n && present[n - 1] >= (int64_t)n)   /* a gap below the highest rank */
            ok = add_missing(rc, m[g].job, present[n - 1] + 1, false, present, n, unranked);
        else if (w < 0 && n)
            tg_diag_add(rc->diag, TG_DIAG_WARNING, TG_OK, (tg_pos){0}, NULL,
                        "the results%s name ranks 0 to %lld but not the world size (check --world-size, or "
                        "merge --world-size): a missing rank above %lld cannot be seen",
                        of_job(a, m[g].job), (long long)present[n - 1], (long long)present[n - 1]);
    }
    free(present);
    return ok;
}

tg_status tg_merge_ranks(tg_run_result *run, int64_t world_size, tg_diag *diag)
{
    if (world_size > TG_MERGE_WORLD_MAX) {
        tg_diag_error(diag, TG_EUSAGE, "--world-size %lld is more than the %lld ranks merge accepts (docs/limits.md)",
                      (long long)world_size, (long long)TG_MERGE_WORLD_MAX);
        return TG_EUSAGE;
    }
    member *m = members_of(run);
    size_t n = run->n_traces, groups = 0;
    for (size_t g = 0; g < n; g = group_end(m, n, g)) groups++;
    rank_check rc = {.run = run, .world_size = world_size, .diag = diag,
                     .added = malloc((groups ? groups : 1) * sizeof *rc.added)};
    bool ok = m && rc.added;
    for (size_t g = 0; ok && g < n; g = group_end(m, n, g)) ok = check_group(&rc, m, g, group_end(m, n, g));
    /* --world-size with no result at all is caught by merge's "no results" */
    if (ok && rc.more)
        tg_diag_error(diag, TG_EUSAGE, "... and %zu more such problems with the ranks", rc.more);
    tg_status st = !ok ? TG_EINTERNAL : rc.errors ? TG_EUSAGE : TG_OK;
    if (st == TG_OK && rc.n_added) {
        tg_trace_result *all = tg_arena_alloc(run->arena, (n + rc.n_added) * sizeof *all);
        if (!all) st = TG_EINTERNAL;
        else {
            memcpy(all, run->traces, n * sizeof *all);
            memcpy(all + n, rc.added, rc.n_added * sizeof *all);
            run->traces = all;
            run->n_traces += rc.n_added;
        }
    }
    if (st == TG_EINTERNAL) tg_diag_error(diag, TG_EINTERNAL, "out of memory while checking the ranks");
    free(rc.added);
    free(m);
    return st;
}

/* ----------------------------------------------------------- rule sets */

/* A side: the documents judged by one rule set (or one document without
** a digest), by version and digest. */
typedef struct judged {
    const char *version, *digest;
    size_t doc;
} judged;

static int cmp_str(const char *a, const char *b)
{
    if (!a || !b) return (a != NULL) - (b != NULL);
    return strcmp(a, b);
}

static int cmp_judged(const void *pa, const void *pb)
{
    const judged *a = pa, *b = pb;
    int c = cmp_str(a->digest, b->digest);
    if (!c) c = cmp_str(a->version, b->version);
    if (!c && !a->digest) c = (a->doc > b->doc) - (a->doc < b->doc);   /* each its own side */
    return c ? c : (a->doc > b->doc) - (a->doc < b->doc);
}

static bool same_side(const judged *a, const judged *b)
{
    return a->digest && b->digest && !cmp_str(a->digest, b->digest) && !cmp_str(a->version, b->version);
}

static int cmp_i64(const void *pa, const void *pb)
{
    int64_t a = *(const int64_t *)pa, b = *(const int64_t *)pb;
    return (a > b) - (a < b);
}

#define MAX_SIDES 4

/* "ranks 0-2, 5 (and 1 result without a rank, a.json)" of the side
** j[0..n); NULL when out of memory. */
static const char *side_ranks(const tg_merge *m, const tg_run_result *run, const judged *j, size_t n, tg_arena *a)
{
    size_t total = 0;
    for (size_t k = 0; k < n; k++) {
        const char *v, *d;
        size_t first, count;
        tg_merge_doc(m, j[k].doc, &v, &d, &first, &count);
        total += count;
    }
    int64_t *ranks = malloc((total ? total : 1) * sizeof *ranks);
    int64_t *runs = malloc(2 * (total ? total : 1) * sizeof *runs);
    if (!ranks || !runs) {
        free(ranks);
        free(runs);
        return NULL;
    }
    size_t nr = 0, unranked = 0;
    const char *file = NULL;
    for (size_t k = 0; k < n; k++) {
        const char *v, *d;
        size_t first, count;
        tg_merge_doc(m, j[k].doc, &v, &d, &first, &count);
        for (size_t i = first; i < first + count; i++) {
            const tg_trace_result *t = &run->traces[i];
            if (tg_origin_has_rank(&t->origin)) ranks[nr++] = t->origin.rank;
            else if (!unranked++) file = t->source;
        }
    }
    qsort(ranks, nr, sizeof *ranks, cmp_i64);
    size_t n_runs = 0;
    for (size_t i = 0; i < nr; i++) {
        if (n_runs && ranks[i] <= runs[2 * n_runs - 1] + 1) {
            if (ranks[i] > runs[2 * n_runs - 1]) runs[2 * n_runs - 1] = ranks[i];
            continue;
        }
        runs[2 * n_runs] = runs[2 * n_runs + 1] = ranks[i];
        n_runs++;
    }
    const char *list = nr ? rank_runs(a, runs, n_runs) : "";
    bool one = nr == 1 && runs[0] == runs[1];
    const char *text = !list ? NULL
                     : !unranked ? tg_arena_printf(a, "rank%s %s", one ? "" : "s", list)
                     : tg_arena_printf(a, "%s%s%s%zu result%s without a rank (%s%s)", nr ? "rank" : "",
                                       nr ? (one ? " " : "s ") : "", nr ? tg_arena_printf(a, "%s and ", list) : "",
                                       unranked, unranked > 1 ? "s" : "", file ? file : "(unnamed)",
                                       unranked > 1 ? ", ..." : "");
    free(ranks);
    free(runs);
    return text;
}

tg_status tg_merge_rules(const tg_merge *m, const tg_run_result *run, bool allow, tg_diag *diag, const char **note,
                         const char **digest)
{
    *note = *digest = NULL;
    size_t n = tg_merge_n_docs(m);
    if (!n) return TG_OK;
    judged *j = malloc(n * sizeof *j);
    if (!j) goto oom;
    for (size_t i = 0; i < n; i++) {
        size_t first, count;
        tg_merge_doc(m, i, &j[i].version, &j[i].digest, &first, &count);
        j[i].doc = i;
    }
    qsort(j, n, sizeof *j, cmp_judged);
    size_t sides = 0;
    for (size_t i = 0; i < n; i++) sides += !i || !same_side(&j[i - 1], &j[i]);
    if (sides == 1) {   /* one set, or one result that does not record it */
        *digest = j[0].digest;
        free(j);
        return TG_OK;
    }
    /* "ranks 0-2 by rules sha256:0123456789ab (tracegate 0.9); rank 3 by ..." */
    tg_arena *a = run->arena;
    const char *text = "";
    size_t shown = 0;
    for (size_t i = 0, e; text && i < n; i = e) {
        for (e = i + 1; e < n && same_side(&j[i], &j[e]); e++) {}
        if (shown++ == MAX_SIDES) {
            text = tg_arena_printf(a, "%s; and %zu more", text, sides - MAX_SIDES);
            break;
        }
        const char *ranks = side_ranks(m, run, j + i, e - i, a);
        const char *by = j[i].digest ? tg_arena_printf(a, "rules %.19s (tracegate %s)", j[i].digest,
                                                       j[i].version ? j[i].version : "of unknown version")
                                     : tg_arena_printf(a, "rules not recorded (a result of tracegate %s, older "
                                                          "than rules_digest, or a merge of mixed rules)",
                                                       j[i].version ? j[i].version : "of unknown version");
        text = ranks && by ? tg_arena_printf(a, "%s%s%s judged by %s", text, *text ? "; " : "", ranks, by) : NULL;
    }
    free(j);
    if (!text) goto oom;
    if (!allow) {
        tg_diag_error(diag, TG_EUSAGE, "the results were judged by %zu different rule sets, so their verdicts do not "
                      "add up to one: %s; check every rank with the same rules, --set and suppressions (and the same "
                      "tracegate), or give merge --allow-mixed-rules", sides, text);
        return TG_EUSAGE;
    }
    *note = tg_arena_printf(a, "results judged by %zu different rule sets were merged (--allow-mixed-rules): %s",
                            sides, text);
    if (!*note) goto oom;
    tg_diag_add(diag, TG_DIAG_WARNING, TG_OK, (tg_pos){0}, NULL, "%s", *note);
    return TG_OK;
oom:
    tg_diag_error(diag, TG_EINTERNAL, "out of memory while comparing the rule sets of the results");
    return TG_EINTERNAL;
}

/* ----------------------------------------------------------- stragglers */

/* A trace's p50 steady period: its workload's, else the metric of
** iteration-time-regression (results written before workloads were). */
static double rank_period(const tg_trace_result *t)
{
    if (t->workload && isfinite(t->workload->period)) return t->workload->period;
    for (size_t i = 0; i < t->n_results; i++) {
        const tg_rule_result *r = &t->results[i];
        if (!r->rule || strcmp(r->rule, "iteration-time-regression") != 0) continue;
        if (isfinite(r->metric_value)) return r->metric_value;
        for (size_t k = 0; k < r->n_values; k++)
            if (!strcmp(r->values[k].name, "p50_period_ns")) {
                const tg_value *v = &r->values[k].value;
                if (v->type == TG_TY_INT) return (double)v->u.i;
                if (v->type == TG_TY_FLOAT) return v->u.f;
            }
    }
    return NAN;
}

/* "rank 5 on nid001608", "rank 5", "this trace". */
static const char *who(tg_arena *a, const tg_trace_result *t)
{
    const tg_origin *o = &t->origin;
    if (tg_origin_has_rank(o))
        return o->host ? tg_arena_printf(a, "rank %lld on %s", (long long)o->rank, o->host)
                       : tg_arena_printf(a, "rank %lld", (long long)o->rank);
    return o->host ? tg_arena_printf(a, "the trace from %s", o->host) : "this trace";
}

/* The ranks compared of one job: a trace that holds several ranks
** (docs/iterations.md, "Ranks within one export") is each of them, any
** other trace one rank. */
typedef struct cmp_set {
    tg_straggler_rank *r;
    size_t *trace;             /* the trace each came from */
    size_t n;
} cmp_set;

/* Ties between equal periods are broken by trace, then by rank inside it. */
static void add_rank(cmp_set *c, double period, double gpu, double idle, const tg_workload *w, const char *who_,
                     tg_arena *a, size_t i, size_t k)
{
    if (!(isfinite(period) && period > 0) || !who_) return;
    c->r[c->n] = (tg_straggler_rank){period, gpu, idle, w, who_, a, i * ((size_t)1 << 24) + k};
    c->trace[c->n++] = i;
}

/* One trace's ranks into c. */
static void add_trace(cmp_set *c, tg_run_result *run, size_t i)
{
    tg_trace_result *t = &run->traces[i];
    tg_arena *a = t->arena ? t->arena : run->arena;
    if (!t->results) return;
    if (t->n_ranks < 2) {
        double idle = t->workload ? t->workload->idle : NAN, gpu = t->workload ? t->workload->gpu_time : NAN;
        add_rank(c, rank_period(t), gpu, idle, t->workload, who(a, t), a, i, 0);
        return;
    }
    for (size_t k = 0; k < t->n_ranks; k++) {
        const tg_rank_result *x = &t->ranks[k];
        add_rank(c, x->period, x->gpu_time, x->idle, NULL, tg_rank_who(a, x, t->source ? t->source : t->file), a, i, k);
    }
}

/* "ranks not compared: each of the 8 ranks has no steady iteration; ...":
** why a job's k ranks with results, n of them with a period, were not
** compared (n < 2), counting the others by what they lack; NULL when
** there is no second rank to compare with. A sentence, as every format
** states it (docs/formats.md, "merge"). */
static const char *not_compared(const tg_run_result *run, const member *m, size_t g, size_t e, tg_arena *a)
{
    size_t k = 0, n = 0, none = 0, one = 0, old = 0;
    for (size_t i = g; i < e; i++) {
        const tg_trace_result *t = &run->traces[m[i].i];
        if (!t->results) continue;
        k++;
        double x = rank_period(t);
        if (isfinite(x) && x > 0) n++;
        else if (!t->workload) old++;
        else if (t->workload->steady_iterations <= 0) none++;
        else if (t->workload->steady_iterations == 1) one++;
        else old++;   /* iterations, but no period between them */
    }
    if (k < 2 || n >= 2) return NULL;
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    if (!f) return NULL;
    if (m[g].job) fprintf(f, "job %s: ", m[g].job);
    fputs("ranks not compared: ", f);
    size_t lacking = k - n;
    const char *kinds[3] = {"no steady iteration", "1 steady iteration", "no p50 iteration period"};
    size_t counts[3] = {none, one, old};
    for (int i = 0; i < 3; i++) {
        if (counts[i] != lacking) continue;
        fprintf(f, "%s %zu ranks %s %s", n ? "the other" : "each of the", lacking, n ? "have" : "has", kinds[i]);
        lacking = 0;
        break;
    }
    if (lacking) {   /* several reasons: one count each */
        fprintf(f, "%zu of the %zu ranks %s a p50 iteration period (", n, k, n == 1 ? "has" : "have");
        bool first = true;
        for (int i = 0; i < 3; i++)
            if (counts[i]) {
                fprintf(f, "%s%zu with %s", first ? "" : ", ", counts[i], kinds[i]);
                first = false;
            }
        fputc(')', f);
    } else if (n) {
        fputs(" (1 has a p50 iteration period)", f);
    }
    fputs("; the straggler comparison needs a p50 iteration period, 2 or more steady iterations, "
          "on at least 2 ranks", f);
    bool ok = fclose(f) == 0;
    const char *out = ok ? tg_arena_strdup(a, text) : NULL;
    free(text);
    return out;
}

/* One job's ranks m[g..e): compared when two or more have a period; each
** trace's result is that of its slowest rank (tg_straggler_keep). */
static size_t compare_group(tg_run_result *run, const member *m, size_t g, size_t e, double threshold,
                            tg_severity severity, bool *oom)
{
    size_t cap = 0;
    for (size_t k = g; k < e; k++) cap += run->traces[m[k].i].n_ranks > 1 ? run->traces[m[k].i].n_ranks : 1;
    cmp_set c = {.r = malloc(cap * sizeof *c.r), .trace = malloc(cap * sizeof *c.trace)};
    tg_rule_result *out = malloc(cap * sizeof *out);
    if (!c.r || !c.trace || !out) *oom = true;
    for (size_t k = g; k < e && !*oom; k++) add_trace(&c, run, m[k].i);
    if (!*oom && c.n >= 2 && !tg_straggler_compare(c.r, c.n, threshold, severity, out)) *oom = true;
    for (size_t k = 0; k < c.n && c.n >= 2 && !*oom; k++) {
        tg_trace_result *t = &run->traces[c.trace[k]];
        if (k && c.trace[k - 1] == c.trace[k]) continue;   /* a trace's ranks are adjacent */
        size_t end = k;
        while (end < c.n && c.trace[end] == c.trace[k]) end++;
        tg_straggler_keep(&t->results[t->n_results++], out + k, end - k, t->arena ? t->arena : run->arena);
    }
    size_t compared = c.n >= 2 ? c.n : 0;
    free(c.r);
    free(c.trace);
    free(out);
    return compared;
}

size_t tg_merge_stragglers(tg_run_result *run, double threshold, tg_severity severity, const char **why)
{
    if (why) *why = NULL;
    member *m = members_of(run);
    if (!m) return 0;
    size_t n = run->n_traces, compared = 0;
    bool oom = false;
    char *text = NULL;
    size_t len = 0;
    size_t said = 0;
    FILE *f = why ? open_memstream(&text, &len) : NULL;
    for (size_t g = 0; g < n && !oom; g = group_end(m, n, g)) {
        size_t c = compare_group(run, m, g, group_end(m, n, g), threshold, severity, &oom);
        compared += c;
        const char *sentence = f && !c ? not_compared(run, m, g, group_end(m, n, g), run->arena) : NULL;
        if (sentence) fprintf(f, "%s%s", said++ ? ". " : "", sentence);
    }
    if (f && fclose(f) == 0 && said) *why = tg_arena_strdup(run->arena, text);
    free(text);
    free(m);
    return compared;
}
