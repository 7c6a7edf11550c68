/*
** Recording a baseline from an evaluated run, and the small helpers shared
** by the baseline files: provenance checks (one GPU model, one schema major
** version), lookups, units and human-readable values.
**
** Recording is deterministic by construction: metrics are sorted by rule
** id, per-run values keep the order of the traces, and the pooled per-row
** samples are sorted and thinned by picking the middle element of each of
** TG_BASELINE_MAX_SAMPLES equal strata of the sorted values (index
** floor((2k + 1) N / 2K), k = 0 .. K-1). That keeps the shape of the
** distribution (every quantile within 1/K of the full sample) and does not
** depend on the order the rows were read in.
*/
#include "baseline.h"
#include "../common/stats.h"
#include "baseline_int.h"
#include "../trace/trace.h"
#include "../common/units.h"

#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

void tg_baseline_free(tg_baseline *b)
{
    if (!b) return;
    tg_arena_free(b->arena);
    free(b);
}

const tg_baseline_metric *tg_baseline_find(const tg_baseline *b, const char *rule)
{
    size_t lo = 0, hi = b ? b->n_metrics : 0;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int c = strcmp(b->metrics[mid].rule, rule);
        if (c == 0) return &b->metrics[mid];
        if (c < 0) lo = mid + 1;
        else hi = mid;
    }
    return NULL;
}

const char *tg_baseline_direction_name(int direction)
{
    return direction > 0 ? "higher_is_worse" : direction < 0 ? "lower_is_worse" : "none";
}

/* ------------------------------------------------------------- record */

static const char *base_name(const char *path)
{
    const char *s = path ? strrchr(path, '/') : NULL;
    return s ? s + 1 : path;
}

static const tg_rule_result *find_result(const tg_trace_result *t, const char *rule)
{
    for (size_t i = 0; i < t->n_results; i++)
        if (t->results[i].rule && !strcmp(t->results[i].rule, rule)) return &t->results[i];
    return NULL;
}

static int cmp_metric(const void *a, const void *b)
{
    return strcmp(((const tg_baseline_metric *)a)->rule, ((const tg_baseline_metric *)b)->rule);
}

static char *dup_or_null(tg_arena *a, const char *s)
{
    return s ? tg_arena_strdup(a, s) : NULL;
}

/* ---------------------------------------------------------- workload */

static int cmp_entry(const void *a, const void *b)
{
    const tg_work_entry *x = a, *y = b;
    double wx = isnan(x->time) ? x->total : x->time, wy = isnan(y->time) ? y->total : y->time;
    if (wx != wy) return wx > wy ? -1 : 1;
    if (x->kind != y->kind) return x->kind - y->kind;
    return strcmp(x->name, y->name);
}

static int cmp_key(const void *a, const void *b)
{
    const tg_work_entry *x = a, *y = b;
    if (x->kind != y->kind) return x->kind - y->kind;
    return strcmp(x->name, y->name);
}

/* Entries of every trace's list (ops or ranges) pooled by (kind, name):
** counts and totals summed, per-iteration values weighted by each run's
** steady iterations; sorted, the tail past `keep` summed as "(other)". */
static bool pool_entries(tg_baseline *b, const tg_run_result *run, const bool *skip, bool ranges, size_t keep,
                         tg_work_entry **out, size_t *n_out, int64_t iters)
{
    size_t cap = 0, n = 0;
    for (size_t t = 0; t < run->n_traces; t++) {
        const tg_workload *w = skip[t] ? NULL : run->traces[t].workload;
        if (w) cap += ranges ? w->n_ranges : w->n_ops;
    }
    tg_work_entry *e = malloc((cap + 1) * sizeof *e);
    if (!e) return false;
    /* every run's entries, weighted, then merged by (kind, name) after one sort */
    for (size_t t = 0; t < run->n_traces; t++) {
        const tg_workload *w = skip[t] ? NULL : run->traces[t].workload;
        if (!w) continue;
        const tg_work_entry *list = ranges ? w->ranges : w->ops;
        size_t nl = ranges ? w->n_ranges : w->n_ops;
        double weight = iters > 0 ? (double)w->steady_iterations / (double)iters : 0;
        for (size_t i = 0; i < nl; i++) {
            const tg_work_entry *x = &list[i];
            e[n++] = (tg_work_entry){.name = x->name, .kind = x->kind, .count = x->count, .total = x->total,
                                     .time = isnan(x->time) ? 0 : x->time * weight,
                                     .launches = isnan(x->launches) ? 0 : x->launches * weight};
        }
    }
    qsort(e, n, sizeof *e, cmp_key);
    size_t m = 0;
    for (size_t k = 0; k < n; k++) {
        if (m > 0 && cmp_key(&e[m - 1], &e[k]) == 0) {
            e[m - 1].count += e[k].count;
            e[m - 1].total += e[k].total;
            e[m - 1].time += e[k].time;
            e[m - 1].launches += e[k].launches;
        } else {
            e[m++] = e[k];
        }
    }
    n = m;
    for (size_t k = 0; k < n && iters <= 0; k++) e[k].time = e[k].launches = NAN;
    qsort(e, n, sizeof *e, cmp_entry);
    if (n > keep) {
        tg_work_entry other = {.name = TG_BASELINE_OTHER, .kind = ranges ? TG_WORK_NVTX : TG_WORK_KERNEL,
                               .time = iters > 0 ? 0 : NAN, .launches = iters > 0 ? 0 : NAN};
        for (size_t k = keep; k < n; k++) {
            other.count += e[k].count;
            other.total += e[k].total;
            if (iters > 0) {
                other.time += e[k].time;
                other.launches += e[k].launches;
            }
        }
        e[keep] = other;
        n = keep + 1;
    }
    *out = tg_arena_alloc(b->arena, (n ? n : 1) * sizeof **out);
    bool ok = *out != NULL;
    for (size_t k = 0; ok && k < n; k++) {
        (*out)[k] = e[k];
        ok = ((*out)[k].name = tg_utf8_clean(b->arena, e[k].name)) != NULL;
    }
    *n_out = n;
    free(e);
    return ok;
}

/* What ran, pooled over the runs that have a workload and are not kept
** as an outlier on any metric (skip[t]). */
static bool record_workload(tg_baseline *b, const tg_run_result *run, const bool *skip)
{
    int64_t iters = 0;
    size_t with = 0;
    for (size_t t = 0; t < run->n_traces; t++) {
        const tg_workload *w = skip[t] ? NULL : run->traces[t].workload;
        if (!w) continue;
        with++;
        iters += w->steady_iterations;
    }
    if (with == 0) return true;
    tg_workload *w = tg_arena_alloc(b->arena, sizeof *w);
    if (!w) return false;
    *w = (tg_workload){.steady_iterations = iters, .gpu_time = iters > 0 ? 0 : NAN};
    for (size_t t = 0; t < run->n_traces; t++) {
        const tg_workload *x = skip[t] ? NULL : run->traces[t].workload;
        if (!x) continue;
        w->total += x->total;
        if (iters > 0 && !isnan(x->gpu_time)) w->gpu_time += x->gpu_time * (double)x->steady_iterations / (double)iters;
    }
    if (!pool_entries(b, run, skip, false, TG_BASELINE_MAX_WORK, &w->ops, &w->n_ops, iters) ||
        !pool_entries(b, run, skip, true, TG_BASELINE_MAX_RANGES, &w->ranges, &w->n_ranges, iters))
        return false;
    b->workload = w;
    return true;
}

/* Pool the finite samples of every trace, sort, thin to K strata. */
static bool record_samples(tg_baseline *b, tg_baseline_metric *m, const tg_run_result *run)
{
    size_t total = 0;
    for (size_t t = 0; t < run->n_traces; t++) {
        const tg_rule_result *r = tg_baseline_is_outlier(m, t) ? NULL : find_result(&run->traces[t], m->rule);
        if (r && r->samples)
            for (size_t i = 0; i < r->n_samples; i++) total += isfinite(r->samples[i]);
    }
    m->n_samples_total = total;
    if (total == 0) return true;
    double *pool = malloc(total * sizeof *pool);
    if (!pool) return false;
    size_t n = 0;
    for (size_t t = 0; t < run->n_traces; t++) {
        const tg_rule_result *r = tg_baseline_is_outlier(m, t) ? NULL : find_result(&run->traces[t], m->rule);
        if (r && r->samples)
            for (size_t i = 0; i < r->n_samples; i++)
                if (isfinite(r->samples[i])) pool[n++] = r->samples[i];
    }
    tg_stats_sort(pool, n);
    size_t k_max = n < TG_BASELINE_MAX_SAMPLES ? n : TG_BASELINE_MAX_SAMPLES;
    m->samples = tg_arena_alloc(b->arena, k_max * sizeof *m->samples);
    if (!m->samples) {
        free(pool);
        return false;
    }
    for (size_t k = 0; k < k_max; k++)
        m->samples[k] = pool[((2 * k + 1) * n) / (2 * k_max)];
    m->n_samples = k_max;
    free(pool);
    return true;
}

static bool record_metric(tg_baseline *b, tg_baseline_metric *m, const tg_rule_result *first,
                          const tg_run_result *run, const tg_baseline_rules *rules)
{
    m->metric = tg_arena_strdup(b->arena, first->metric);
    m->direction = first->regression > 0 ? 1 : first->regression < 0 ? -1 : 0;
    const char *samples = rules && rules->samples ? rules->samples(rules->ctx, m->rule) : NULL;
    m->samples_field = dup_or_null(b->arena, samples);
    m->unit = first->metric_unit;
    m->runs = tg_arena_alloc(b->arena, run->n_traces * sizeof *m->runs);
    double *finite = tg_arena_alloc(b->arena, run->n_traces * sizeof *finite);
    if (!m->metric || !m->runs || !finite) return false;
    for (size_t t = 0; t < run->n_traces; t++) {
        const tg_rule_result *r = find_result(&run->traces[t], m->rule);
        double v = r && r->metric && !r->missing_data ? r->metric_value : NAN;
        m->runs[t] = isfinite(v) ? v : NAN;
        if (isfinite(v)) finite[m->n_runs++] = v;
    }
    m->median = tg_stats_median(finite, m->n_runs);
    m->mad = tg_stats_mad(finite, m->n_runs);
    return true;
}

/* ------------------------------------------------------ outlier runs */

/* How precisely run t's value of the rule is known from its own per-row
** values: the standard error of their median; NaN without samples. */
static double run_se(const tg_run_result *run, size_t t, const char *rule)
{
    const tg_rule_result *r = find_result(&run->traces[t], rule);
    size_t n = 0;
    double *c = r && r->samples && r->n_samples ? malloc(r->n_samples * sizeof *c) : NULL;
    if (!c) return NAN;
    for (size_t i = 0; i < r->n_samples; i++)
        if (isfinite(r->samples[i])) c[n++] = r->samples[i];
    double se = tg_stats_median_se(c, n, (double)n);
    free(c);
    return se;
}

/* "a, b, c" (at most 6 values, then "..."), in the metric's unit. */
static void put_values(FILE *f, const double *v, size_t n, tg_unit unit)
{
    for (size_t i = 0; i < n && i < 6; i++) {
        char buf[48];
        tg_fmt_num_digits(buf, sizeof buf, v[i], unit, 4);
        fprintf(f, "%s%s", i ? ", " : "", buf);
    }
    if (n > 6) fputs(", ...", f);
}

/* One flagged run's sentence (malloc'd), or NULL when out of memory. */
static char *outlier_text(const tg_baseline_metric *m, const char *path, double v, const double *rest, size_t n_rest,
                          double center, double spread, bool keep)
{
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    if (!f) return NULL;
    char val[48], lo[48], hi[48], pct[TG_FMT_BUF];
    tg_fmt_num_digits(val, sizeof val, v, m->unit, 4);
    tg_fmt_num(lo, sizeof lo, center - TG_BASELINE_OUTLIER_K * spread, m->unit);
    tg_fmt_num(hi, sizeof hi, center + TG_BASELINE_OUTLIER_K * spread, m->unit);
    tg_fmt_change(pct, sizeof pct, center != 0 ? (v - center) / fabs(center) : NAN);
    fprintf(f, "run %s is inconsistent with the other runs on %s (%s): %s (%s from their median) against ", path,
            m->rule, m->metric, val, pct);
    put_values(f, rest, n_rest, m->unit);
    fprintf(f, ", outside %s..%s (their median +- %g x their spread)", lo, hi, TG_BASELINE_OUTLIER_K);
    if (keep)
        fputs("; kept as an outlier: listed in kept_outliers and left out of the value and band", f);
    else
        fputs("; no baseline written: drop the run, or record it with --keep-outliers (it is then listed and left "
              "out of the value and band)", f);
    if (fclose(f) != 0) {
        free(text);
        return NULL;
    }
    return text;
}

/* The outlier guard (docs/regressions.md, "Outlier runs") on one
** regression metric: leave-one-out, each run against the median and the
** floored robust spread of the others. Errors (refused: true) unless
** keep, which lists the runs in m->kept_outliers. False when out of
** memory. */
static bool find_outliers(tg_baseline *b, tg_baseline_metric *m, const tg_run_result *run,
                          const tg_baseline_rules *rules, bool keep, tg_diag *diag, bool *refused)
{
    size_t nt = run->n_traces, n = 0;
    if (m->direction == 0 || m->n_runs < 2) return true;
    double *v = malloc(nt * sizeof *v), *rest = malloc(nt * sizeof *rest), *se = malloc(nt * sizeof *se);
    size_t *idx = malloc(nt * sizeof *idx), *flag = malloc(nt * sizeof *flag);
    bool ok = v && rest && se && idx && flag;
    size_t n_se = 0, n_flag = 0;
    for (size_t t = 0; ok && t < nt; t++) {
        if (!isfinite(m->runs[t])) continue;
        idx[n] = t;
        v[n++] = m->runs[t];
        double e = run_se(run, t, m->rule);
        if (isfinite(e)) se[n_se++] = e;
    }
    /* the runs' own noise: the median of their standard errors */
    double floor_se = ok && n_se ? tg_stats_median(se, n_se) : NAN;
    if (ok && n == 2) {
        /* two runs: no telling which is odd; against the assumed noise */
        double center = (v[0] + v[1]) / 2;
        double noise = rules && rules->param ? rules->param(rules->ctx, m->rule, "run_noise",
                                                            TG_BASELINE_DEFAULT_RUN_NOISE)
                                             : TG_BASELINE_DEFAULT_RUN_NOISE;
        if (isnan(noise)) noise = TG_BASELINE_DEFAULT_RUN_NOISE;
        double s = fmax(noise * fabs(center), tg_baseline_floor(center, floor_se));
        if (fabs(v[0] - v[1]) > TG_BASELINE_OUTLIER_K * s) {
            char a[48], c[48], pct[TG_FMT_BUF];
            tg_fmt_num(a, sizeof a, v[0], m->unit);
            tg_fmt_num(c, sizeof c, v[1], m->unit);
            tg_fmt_change(pct, sizeof pct, v[0] != 0 ? (v[1] - v[0]) / fabs(v[0]) : NAN);
            const char *pa = run->traces[idx[0]].file, *pb = run->traces[idx[1]].file;
            if (keep) {
                tg_diag_add(diag, TG_DIAG_WARNING, TG_OK, (tg_pos){0}, NULL,
                            "runs %s and %s disagree on %s (%s): %s and %s (%s), more than %g x the %.3g%% "
                            "run-to-run spread assumed; with two runs there is no telling which one is odd, so "
                            "both are recorded (--keep-outliers)", pa ? pa : "?", pb ? pb : "?", m->rule,
                            m->metric, a, c, pct, TG_BASELINE_OUTLIER_K, 100 * s / fabs(center));
            } else {
                tg_diag_error(diag, TG_EUSAGE,
                              "runs %s and %s disagree on %s (%s): %s and %s (%s), more than %g x the %.3g%% "
                              "run-to-run spread assumed; with two runs there is no telling which one is odd: "
                              "no baseline written; record a third run to find it, or pass --keep-outliers",
                              pa ? pa : "?", pb ? pb : "?", m->rule, m->metric, a, c, pct,
                              TG_BASELINE_OUTLIER_K, 100 * s / fabs(center));
                *refused = true;
            }
        }
    } else if (ok) {
        for (size_t i = 0; i < n; i++) {
            size_t nr = 0;
            for (size_t k = 0; k < n; k++)
                if (k != i) rest[nr++] = v[k];
            double center = tg_stats_median(rest, nr);
            double s = fmax(tg_stats_spread(rest, nr), tg_baseline_floor(center, floor_se));
            if (fabs(v[i] - center) > TG_BASELINE_OUTLIER_K * s) {
                const char *path = run->traces[idx[i]].file;
                char *text = outlier_text(m, path ? path : "?", v[i], rest, nr, center, s, keep);
                if (!text) {
                    ok = false;
                    break;
                }
                tg_diag_add(diag, keep ? TG_DIAG_WARNING : TG_DIAG_ERROR, keep ? TG_OK : TG_EUSAGE, (tg_pos){0},
                            NULL, "%s", text);
                free(text);
                flag[n_flag++] = idx[i];
            }
        }
        if (ok && n_flag && !keep) *refused = true;
        if (ok && n_flag && keep && n - n_flag < 2) {
            tg_diag_error(diag, TG_EUSAGE, "the runs disagree on %s too much to tell the odd ones: fewer than two "
                          "would be left to estimate from; no baseline written", m->rule);
            *refused = true;
        } else if (ok && n_flag && keep) {
            m->kept_outliers = tg_arena_alloc(b->arena, n_flag * sizeof *m->kept_outliers);
            if (!m->kept_outliers) ok = false;
            else {
                memcpy(m->kept_outliers, flag, n_flag * sizeof *flag);
                m->n_kept_outliers = n_flag;
            }
        }
    }
    free(v);
    free(rest);
    free(se);
    free(idx);
    free(flag);
    return ok;
}

tg_baseline *tg_baseline_record_with(const tg_run_result *run, const tg_baseline_rules *rules,
                                     const char *tool_version, const char *date, tg_diag *diag)
{
    return tg_baseline_record_opts(run, rules, tool_version, date, false, diag);
}

tg_baseline *tg_baseline_record_opts(const tg_run_result *run, const tg_baseline_rules *rules,
                                     const char *tool_version, const char *date, bool keep_outliers,
                                     tg_diag *diag)
{
    if (!run || run->n_traces == 0) {
        tg_diag_error(diag, TG_EUSAGE, "a baseline needs at least one trace");
        return NULL;
    }
    for (size_t t = 0; t < run->n_traces; t++) {
        const tg_trace_result *tr = &run->traces[t];
        if (tr->status != TG_OK) {
            tg_diag_error(diag, TG_ETRACE, "cannot record a baseline from %s: %s",
                          tr->file ? tr->file : "(unnamed trace)",
                          tr->error ? tr->error : "the trace could not be read");
            return NULL;
        }
    }
    tg_baseline *b = calloc(1, sizeof *b);
    if (!b || !(b->arena = tg_arena_new())) goto oom;
    b->format_version = TG_BASELINE_FORMAT_PLAIN;
    b->tool_version = dup_or_null(b->arena, tool_version);
    b->date = dup_or_null(b->arena, date);
    b->n_runs = run->n_traces;
    b->runs = tg_arena_alloc(b->arena, b->n_runs * sizeof *b->runs);
    if (!b->runs) goto oom;
    for (size_t t = 0; t < run->n_traces; t++) {
        const tg_trace_result *tr = &run->traces[t];
        /* provenance is bytes from the file system and the export; a
        ** baseline holds UTF-8 (baselines/README.md): U+FFFD per bad byte */
        b->runs[t] = (tg_baseline_run){
            .trace = tg_utf8_clean(b->arena, base_name(tr->file)),
            .nsys_version = tg_utf8_clean(b->arena, tr->nsys_version),
            .schema_version = tg_utf8_clean(b->arena, tr->schema_version),
            .gpu_names = tg_utf8_clean(b->arena, tr->gpu_names),
            .iteration_marker = tg_utf8_clean(b->arena, tr->iteration_marker ? tr->iteration_marker : ""),
            /* absent means an export: baselines of exports stay as they were */
            .trace_format = tr->trace_format && strcmp(tr->trace_format, tg_trace_format_names[TG_FORMAT_NSYS])
                                ? dup_or_null(b->arena, tr->trace_format) : NULL,
        };
        const tg_baseline_run *r = &b->runs[t];
        if ((tr->file && !r->trace) || (tr->nsys_version && !r->nsys_version) ||
            (tr->schema_version && !r->schema_version) || (tr->gpu_names && !r->gpu_names) ||
            !r->iteration_marker)
            goto oom;
    }

    /* every rule id that has a metric on some trace, first occurrence wins */
    size_t cap = 0;
    for (size_t t = 0; t < run->n_traces; t++) cap += run->traces[t].n_results;
    b->metrics = tg_arena_alloc(b->arena, (cap ? cap : 1) * sizeof *b->metrics);
    if (!b->metrics) goto oom;
    for (size_t t = 0; t < run->n_traces; t++) {
        const tg_trace_result *tr = &run->traces[t];
        for (size_t i = 0; i < tr->n_results; i++) {
            const tg_rule_result *r = &tr->results[i];
            if (!r->metric || !r->rule) continue;
            bool seen = false;
            for (size_t k = 0; k < b->n_metrics && !seen; k++)
                seen = !strcmp(b->metrics[k].rule, r->rule);
            if (seen) continue;
            tg_baseline_metric *m = &b->metrics[b->n_metrics];
            *m = (tg_baseline_metric){.rule = tg_arena_strdup(b->arena, r->rule)};
            if (!m->rule || !record_metric(b, m, r, run, rules)) goto oom;
            if (r->regression && m->n_runs < run->n_traces) {
                /* a gate built on this baseline would compare against fewer
                ** runs than asked for, or none: refuse */
                for (size_t k = 0; k < run->n_traces; k++) {
                    const tg_rule_result *x = find_result(&run->traces[k], m->rule);
                    if (x && x->metric && !x->missing_data && isfinite(x->metric_value)) continue;
                    tg_diag_error(diag, TG_ETRACE, "cannot record regression rule %s from %s: %s%s", m->rule,
                                  base_name(run->traces[k].file),
                                  !x ? "the rule did not run" : x->missing_data && x->message ? x->message
                                  : x->metric_missing ? x->metric_missing : "its metric has no value",
                                  "; no baseline written");
                    break;
                }
                tg_baseline_free(b);
                return NULL;
            }
            if (m->n_runs == 0) {
                tg_diag_add(diag, TG_DIAG_WARNING, TG_OK, (tg_pos){0}, NULL,
                            "rule %s: metric %s has no value on any trace; not recorded",
                            m->rule, m->metric);
                continue;
            }
            b->n_metrics++;
        }
    }
    qsort(b->metrics, b->n_metrics, sizeof *b->metrics, cmp_metric);
    /* the outlier guard, then the samples of the runs not kept as outliers */
    bool refused = false, kept = false;
    for (size_t i = 0; i < b->n_metrics; i++) {
        if (!find_outliers(b, &b->metrics[i], run, rules, keep_outliers, diag, &refused)) goto oom;
        kept |= b->metrics[i].n_kept_outliers > 0;
    }
    if (refused) {
        tg_baseline_free(b);
        return NULL;
    }
    if (kept) b->format_version = TG_BASELINE_FORMAT_OUTLIERS;
    for (size_t i = 0; i < b->n_metrics; i++)
        if (!record_samples(b, &b->metrics[i], run)) goto oom;
    if (b->n_metrics == 0) {
        tg_diag_error(diag, TG_ETRACE, "no metric could be recorded from %s: a baseline without metrics would "
                      "pass every check; no baseline written", run->n_traces == 1 ? base_name(run->traces[0].file)
                      : "these traces");
        tg_baseline_free(b);
        return NULL;
    }
    /* the workload of the runs kept as outliers is left out too (what a
    ** failing check says changed is against the others) */
    bool *skip = calloc(run->n_traces, sizeof *skip);
    if (!skip) goto oom;
    for (size_t i = 0; i < b->n_metrics; i++)
        for (size_t k = 0; k < b->metrics[i].n_kept_outliers; k++) skip[b->metrics[i].kept_outliers[k]] = true;
    bool wok = record_workload(b, run, skip);
    free(skip);
    if (!wok) goto oom;
    return b;
oom:
    tg_diag_error(diag, TG_EINTERNAL, "out of memory while recording the baseline");
    tg_baseline_free(b);
    return NULL;
}

/* ----------------------------------------------------- provenance checks */

/* Is the name p[0..len) one of the comma-separated names of list? */
static bool list_has(const char *list, const char *p, size_t len)
{
    while (*list) {
        while (*list == ',' || *list == ' ') list++;
        const char *e = strchr(list, ',');
        if (!e) e = list + strlen(list);
        const char *te = e;
        while (te > list && te[-1] == ' ') te--;
        if ((size_t)(te - list) == len && !strncmp(list, p, len)) return true;
        list = e;
    }
    return false;
}

/* Every name of a is in b. */
static bool names_within(const char *a, const char *b)
{
    while (*a) {
        while (*a == ',' || *a == ' ') a++;
        if (!*a) break;
        const char *e = strchr(a, ',');
        if (!e) e = a + strlen(a);
        const char *te = e;
        while (te > a && te[-1] == ' ') te--;
        if (!list_has(b, a, (size_t)(te - a))) return false;
        a = e;
    }
    return true;
}

bool tg_baseline_same_names(const char *a, const char *b)
{
    return names_within(a, b) && names_within(b, a);
}

int tg_baseline_schema_major(const char *v)
{
    if (!v || !isdigit((unsigned char)*v)) return -1;
    return atoi(v);
}

static tg_status runs_differ(const tg_baseline_run *r0, const tg_baseline_run *ri,
                             const char *what, const char *v0, const char *vi,
                             bool allow_mismatch, tg_diag *diag)
{
    if (allow_mismatch) {
        tg_diag_add(diag, TG_DIAG_WARNING, TG_OK, (tg_pos){0}, NULL,
                    "recording runs with different %s (%s: %s, %s: %s) because of "
                    "--allow-mismatch", what, r0->trace, v0, ri->trace, vi);
        return TG_OK;
    }
    tg_diag_error(diag, TG_EUSAGE,
                  "the runs of a baseline must share one %s, but %s has %s and %s has %s "
                  "(use --allow-mismatch to record them anyway)", what, r0->trace, v0,
                  ri->trace, vi);
    return TG_EUSAGE;
}

const char *tg_baseline_run_format(const tg_baseline_run *r)
{
    return r->trace_format ? r->trace_format : tg_trace_format_names[TG_FORMAT_NSYS];
}

static tg_status check_runs(const tg_baseline_run *runs, size_t n_runs, bool allow_mismatch, tg_diag *diag)
{
    tg_status st = TG_OK;
    const tg_baseline_run *r0 = &runs[0];
    int major0 = tg_baseline_schema_major(r0->schema_version);
    for (size_t i = 1; i < n_runs; i++) {
        const tg_baseline_run *ri = &runs[i];
        int major = tg_baseline_schema_major(ri->schema_version);
        if (r0->gpu_names && ri->gpu_names && !tg_baseline_same_names(r0->gpu_names, ri->gpu_names) &&
            runs_differ(r0, ri, "GPU model", r0->gpu_names, ri->gpu_names, allow_mismatch, diag))
            st = TG_EUSAGE;
        const char *m0 = r0->iteration_marker, *mi = ri->iteration_marker;
        if (m0 && mi && m0[0] && mi[0] && !tg_baseline_same_names(m0, mi) &&
            runs_differ(r0, ri, "iteration marker", m0, mi, allow_mismatch, diag))
            st = TG_EUSAGE;
        if (strcmp(tg_baseline_run_format(r0), tg_baseline_run_format(ri)) &&
            runs_differ(r0, ri, "trace format", tg_baseline_run_format(r0), tg_baseline_run_format(ri),
                        allow_mismatch, diag))
            st = TG_EUSAGE;
        if (major0 >= 0 && major >= 0 && major0 != major &&
            runs_differ(r0, ri, "export schema major version", r0->schema_version,
                        ri->schema_version, allow_mismatch, diag))
            st = TG_EUSAGE;
    }
    return st;
}

tg_status tg_baseline_check_runs(const tg_baseline *b, bool allow_mismatch, tg_diag *diag)
{
    return b->n_runs ? check_runs(b->runs, b->n_runs, allow_mismatch, diag) : TG_OK;
}

tg_status tg_baseline_check_results(const tg_run_result *run, bool allow_mismatch, tg_diag *diag)
{
    if (!run || run->n_traces < 2) return TG_OK;
    tg_baseline_run *runs = calloc(run->n_traces, sizeof *runs);
    if (!runs) {
        tg_diag_error(diag, TG_EINTERNAL, "out of memory while recording the baseline");
        return TG_EINTERNAL;
    }
    for (size_t t = 0; t < run->n_traces; t++) {
        const tg_trace_result *tr = &run->traces[t];
        runs[t] = (tg_baseline_run){.trace = base_name(tr->file), .nsys_version = tr->nsys_version,
                                    .schema_version = tr->schema_version, .gpu_names = tr->gpu_names,
                                    .iteration_marker = tr->iteration_marker ? tr->iteration_marker : "",
                                    .trace_format = tr->trace_format};
    }
    tg_status st = check_runs(runs, run->n_traces, allow_mismatch, diag);
    free(runs);
    return st;
}
