/*
** Comparing a run with a baseline (DESIGN §6): the mismatch guard (GPU
** model, export schema major version), then per rule with a metric the
** baseline comparison, and for regression rules the verdict.
**
** A regression needs all of: a relative change beyond min_change in the
** worse direction; a two-sided Mann-Whitney p-value below alpha for the
** baseline's per-row samples against the current ones; and, when the
** baseline holds 3+ runs, a current value outside the run-to-run band
** median +- 3 * 1.4826 * MAD of the per-run values. Wall time shifts
** between runs of the same code; the band is what keeps such shifts from
** failing innocent changes, and min_change keeps a statistically certain
** but practically irrelevant shift (thousands of samples make tiny changes
** "significant") from failing the gate. Without samples on a side the
** U test cannot run; the band alone then decides significance, and with
** fewer than 3 runs as well the change is reported as not testable.
*/
#include "baseline.h"
#include "stats.h"
#include "baseline_int.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static double rule_param(const tg_baseline_rules *rules, const char *rule, const char *name,
                         double dflt)
{
    if (!rules || !rules->param) return dflt;
    double v = rules->param(rules->ctx, rule, name, dflt);
    return isnan(v) ? dflt : v;
}

/* The trace must match one recorded run in GPU names and in schema major
** version; what the baseline does not record is not compared. `seen` gets
** a recorded value for the message. */
static bool gpu_matches(const tg_baseline *b, const char *gpus, const char **seen)
{
    bool any_known = false;
    for (size_t i = 0; i < b->n_runs; i++) {
        const char *g = b->runs[i].gpu_names;
        if (!g) continue;
        any_known = true;
        *seen = g;
        if (tg_baseline_same_names(gpus, g)) return true;
    }
    return !any_known;
}

static bool schema_matches(const tg_baseline *b, const char *schema, const char **seen)
{
    int cur = tg_baseline_schema_major(schema);
    if (cur < 0) return true;
    bool any_known = false;
    for (size_t i = 0; i < b->n_runs; i++) {
        int m = tg_baseline_schema_major(b->runs[i].schema_version);
        if (m < 0) continue;
        any_known = true;
        *seen = b->runs[i].schema_version;
        if (m == cur) return true;
    }
    return !any_known;
}

static tg_status mismatch(const char *file, const char *what, const char *cur,
                          const char *bname, const char *seen, bool allow_mismatch,
                          tg_diag *diag)
{
    if (allow_mismatch) {
        tg_diag_add(diag, TG_DIAG_WARNING, TG_OK, (tg_pos){0}, NULL,
                    "%s has %s %s but %s was recorded with %s; comparing anyway because of "
                    "--allow-mismatch", file, what, cur, bname, seen);
        return TG_OK;
    }
    tg_diag_error(diag, TG_EUSAGE,
                  "%s has %s %s but %s was recorded with %s; record a baseline for this "
                  "setup, or pass --allow-mismatch to compare anyway", file, what, cur, bname,
                  seen);
    return TG_EUSAGE;
}

static tg_status check_mismatch(const tg_baseline *b, const tg_run_result *run,
                                bool allow_mismatch, tg_diag *diag)
{
    tg_status st = TG_OK;
    const char *bname = b->path ? b->path : "the baseline";
    for (size_t t = 0; t < run->n_traces; t++) {
        const tg_trace_result *tr = &run->traces[t];
        if (tr->status != TG_OK) continue;
        const char *file = tr->file ? tr->file : "the trace";
        const char *seen = NULL;
        /* compared as recorded: invalid UTF-8 bytes became U+FFFD */
        char *gpus = tg_utf8_clean(NULL, tr->gpu_names);
        char *schema = tg_utf8_clean(NULL, tr->schema_version);
        if ((tr->gpu_names && !gpus) || (tr->schema_version && !schema)) {
            free(gpus);
            free(schema);
            tg_diag_error(diag, TG_EINTERNAL, "out of memory while comparing with the baseline");
            return TG_EINTERNAL;
        }
        if (gpus && !gpu_matches(b, gpus, &seen) &&
            mismatch(file, "GPU", gpus, bname, seen, allow_mismatch, diag))
            st = TG_EUSAGE;
        if (!schema_matches(b, schema, &seen) &&
            mismatch(file, "export schema", schema, bname, seen, allow_mismatch, diag))
            st = TG_EUSAGE;
        free(gpus);
        free(schema);
    }
    return st;
}

/* Finite values of a sample array, copied (NULL when none). */
static double *finite_copy(const double *x, size_t n, size_t *out_n)
{
    *out_n = 0;
    if (!x || n == 0) return NULL;
    double *c = malloc(n * sizeof *c);
    if (!c) return NULL;
    for (size_t i = 0; i < n; i++)
        if (isfinite(x[i])) c[(*out_n)++] = x[i];
    return c;
}

/* Fill r->baseline from the metric entry. False when out of memory. */
static bool fill_cmp(const tg_baseline *b, const tg_baseline_metric *m, tg_rule_result *r)
{
    tg_baseline_cmp *c = &r->baseline;
    *c = (tg_baseline_cmp){.present = true, .value = m->median, .current = r->metric_value,
                           .p_value = NAN, .band_lo = NAN, .band_hi = NAN};
    if (m->median != 0)
        c->change = (c->current - m->median) / fabs(m->median);
    else
        c->change = c->current == 0 ? 0 : copysign(INFINITY, c->current);

    size_t n_cur = 0;
    double *cur = finite_copy(r->samples, r->n_samples, &n_cur);
    if (r->n_samples && !cur) return false;
    c->n_baseline = m->n_samples;
    c->n_current = n_cur;
    tg_mwu mwu;
    if (m->n_samples && n_cur && tg_stats_mann_whitney(m->samples, m->n_samples, cur, n_cur, &mwu))
        c->p_value = mwu.p_value;
    free(cur);

    size_t nv = 0;
    double *vals = finite_copy(m->runs, b->n_runs, &nv);
    if (b->n_runs && !vals) return false;
    if (tg_stats_band(vals, nv, TG_BASELINE_MIN_BAND_RUNS, TG_BASELINE_BAND_K, &c->band_lo,
                      &c->band_hi))
        c->outside_band = c->current < c->band_lo || c->current > c->band_hi;
    free(vals);
    return true;
}

static void format_pct(double change, char *buf, size_t size)
{
    double pct = change * 100;
    if (isinf(change)) snprintf(buf, size, "%s", change > 0 ? "+inf%" : "-inf%");
    else if (pct != 0 && fabs(pct) < 0.1) snprintf(buf, size, "%+.2g%%", pct);  /* +0.026% */
    else snprintf(buf, size, "%+.1f%%", pct);
}

static void format_p(double p, char *buf, size_t size)
{
    if (isnan(p)) snprintf(buf, size, "p=n/a");
    else if (p == 0) snprintf(buf, size, "p<1e-300");
    else if (p < 0.001) snprintf(buf, size, "p=%.2g", p);
    else snprintf(buf, size, "p=%.3f", p);
}

/* Decide a regression rule's verdict and rewrite its message. */
static bool judge(const tg_baseline_metric *m, tg_rule_result *r, double min_change,
                  double alpha, const char *evaluated, tg_arena *arena)
{
    tg_baseline_cmp *c = &r->baseline;
    int dir = r->regression > 0 ? 1 : -1;
    bool worse = dir * c->change > 0;
    bool exceeds = fabs(c->change) > min_change;
    bool have_p = !isnan(c->p_value);
    bool have_band = !isnan(c->band_lo);
    bool significant = have_p ? c->p_value < alpha : have_band;
    bool band_ok = have_band ? c->outside_band : true;
    bool qualifies = exceeds && significant && band_ok;

    char cur[48], base[48], pct[32], p[32], lo[48], hi[48], why[256];
    tg_baseline_format_value(c->current, m->unit, cur, sizeof cur);
    tg_baseline_format_value(c->value, m->unit, base, sizeof base);
    format_pct(c->change, pct, sizeof pct);
    format_p(c->p_value, p, sizeof p);
    tg_baseline_format_value(c->band_lo, m->unit, lo, sizeof lo);
    tg_baseline_format_value(c->band_hi, m->unit, hi, sizeof hi);

    if (qualifies && worse) {
        r->verdict = TG_V_FAIL;
        c->regression = true;
        int l = snprintf(why, sizeof why, "regression beyond the %.3g%% threshold",
                         min_change * 100);
        if (have_p && l > 0 && (size_t)l < sizeof why)
            l += snprintf(why + l, sizeof why - (size_t)l, ", significant at alpha %.3g", alpha);
        if (have_band && l > 0 && (size_t)l < sizeof why)
            snprintf(why + l, sizeof why - (size_t)l, ", outside the run-to-run band %s..%s",
                     lo, hi);
    } else if (qualifies) {
        r->verdict = TG_V_PASS;
        c->improvement = true;
        snprintf(why, sizeof why, "improvement beyond the %.3g%% threshold", min_change * 100);
    } else {
        r->verdict = TG_V_PASS;
        if (!exceeds)
            snprintf(why, sizeof why, "within the %.3g%% threshold", min_change * 100);
        else if (!have_p && !have_band)
            snprintf(why, sizeof why, "not testable: no per-row samples and fewer than %d "
                     "baseline runs", TG_BASELINE_MIN_BAND_RUNS);
        else if (!significant)
            snprintf(why, sizeof why, "not significant at alpha %.3g", alpha);
        else
            snprintf(why, sizeof why, "inside the run-to-run band %s..%s", lo, hi);
    }
    /* Lead with the rule's own rendered message when the evaluator produced
    ** one ("p50 iteration period 48.1 ms over 95 steady iterations"), else
    ** with the metric and its value. */
    if (evaluated && evaluated[0])
        r->message = tg_arena_printf(arena, "%s vs baseline %s (%s, %s, n=%zu now vs %zu in the baseline): %s",
                                     evaluated, base, pct, p, c->n_current, c->n_baseline, why);
    else
        r->message = tg_arena_printf(arena, "%s %s vs baseline %s (%s, %s, n=%zu now vs %zu in the baseline): %s",
                                     m->metric, cur, base, pct, p, c->n_current,
                                     c->n_baseline, why);
    return r->message != NULL;
}

static bool apply_trace(const tg_baseline *b, const tg_baseline_rules *rules,
                        tg_trace_result *tr, tg_arena *arena)
{
    for (size_t i = 0; i < tr->n_results; i++) {
        tg_rule_result *r = &tr->results[i];
        if (!r->rule) continue;
        if (r->verdict == TG_V_ERROR || r->missing_data) continue;
        const tg_baseline_metric *m = r->metric ? tg_baseline_find(b, r->rule) : NULL;
        if (!r->regression) {
            if (m && !isnan(r->metric_value) && !fill_cmp(b, m, r)) return false;
            continue;
        }
        const char *evaluated =
            r->verdict == TG_V_PASS || r->verdict == TG_V_FAIL ? r->message : NULL;
        r->baseline = (tg_baseline_cmp){.p_value = NAN, .band_lo = NAN, .band_hi = NAN};
        r->verdict = TG_V_SKIP;
        if (!r->metric) {
            r->message = "regression rule without a metric: nothing to compare";
        } else if (!m) {
            r->message = tg_arena_printf(arena, "%s: not in the baseline%s%s", r->metric,
                                         b->path ? " " : "", b->path ? b->path : "");
        } else if (isnan(r->metric_value)) {
            r->message = tg_arena_printf(arena, "%s has no value in this trace", r->metric);
        } else {
            if (!fill_cmp(b, m, r)) return false;
            double min_change = rule_param(rules, r->rule, "min_change",
                                           TG_BASELINE_DEFAULT_MIN_CHANGE);
            double alpha = rule_param(rules, r->rule, "alpha", TG_BASELINE_DEFAULT_ALPHA);
            if (!judge(m, r, min_change, alpha, evaluated, arena)) return false;
        }
        if (!r->message) return false;
    }
    return true;
}

tg_status tg_baseline_apply_with(const tg_baseline *b, const tg_baseline_rules *rules,
                                 tg_run_result *run, bool allow_mismatch, tg_diag *diag)
{
    tg_status st = check_mismatch(b, run, allow_mismatch, diag);
    if (st != TG_OK) return st;
    for (size_t t = 0; t < run->n_traces; t++) {
        tg_trace_result *tr = &run->traces[t];
        if (tr->status != TG_OK) continue;
        if (!apply_trace(b, rules, tr, tr->arena ? tr->arena : run->arena)) {
            tg_diag_error(diag, TG_EINTERNAL, "out of memory while comparing with the baseline");
            return TG_EINTERNAL;
        }
    }
    return TG_OK;
}
