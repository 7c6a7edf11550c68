/*
** Comparing a run with a baseline (docs/regressions.md): the mismatch guard
** (GPU model, export schema major version, iteration marker, the workload
** fingerprint a baseline judging regression rules must carry), then per
** rule with a metric the baseline comparison, and for regression rules the
** verdict: pass, fail (a regression) or inconclusive.
**
** Statistics at the level they vary. The iterations of one run are not
** independent samples of what another run of the same code gives: wall
** time moves 10-15% between identical runs (host, data loader) while
** their iterations agree to 1%. So the decision rests on the run-to-run
** spread: measured from the baseline's per-run values when it holds 3+
** runs, else assumed from the rule's param run_noise (or the spread of 2
** runs when larger). A change is a regression when it is beyond
** min_change in the worse direction and outside the band median +- 3 x
** spread; the within-run Mann-Whitney test is a second guard (a change the
** run's own iterations do not support passes), and needs at least
** TG_BASELINE_MIN_SAMPLES values per side to count. A change beyond
** min_change but inside a band that was only assumed is inconclusive: the
** baseline cannot tell it from noise, and says to record more runs.
**
** A regression rule the baseline holds must be judged: a metric that
** cannot be computed on the trace, data skipped by --missing-data=skip, a
** trace whose kernels are not the baseline's workload, are errors, never a
** silent pass. Failing and inconclusive findings say what changed: the
** kernels (copy kinds, memsets) and NVTX ranges whose time per iteration
** moved most, and for wall time how much of the change the GPU was busy.
*/
#include "baseline.h"
#include "../common/units.h"
#include "../common/stats.h"
#include "baseline_int.h"
#include "../eval/eval.h"

#include <math.h>
#include <stdio.h>
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

/* The trace's format against every run's (docs/kineto.md): the same run
** read from its JSON and from its export gives the same metrics, but a
** baseline says what it was measured on, so another format is refused
** unless --allow-mismatch. */
static bool format_matches(const tg_baseline *b, const char *format, const char **seen)
{
    for (size_t i = 0; i < b->n_runs; i++) {
        *seen = tg_baseline_run_format(&b->runs[i]);
        if (strcmp(*seen, format)) return false;
    }
    return true;
}

/* The trace's iteration marker against the runs' that recorded one; a
** side without iterations is left to the regression rules. */
static bool marker_matches(const tg_baseline *b, const char *marker, const char **seen)
{
    if (!marker || !marker[0]) return true;
    bool any_known = false;
    for (size_t i = 0; i < b->n_runs; i++) {
        const char *m = b->runs[i].iteration_marker;
        if (!m || !m[0]) continue;
        any_known = true;
        *seen = m;
        if (tg_baseline_same_names(marker, m)) return true;
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
        char *marker = tg_utf8_clean(NULL, tr->iteration_marker);
        if ((tr->gpu_names && !gpus) || (tr->schema_version && !schema) || (tr->iteration_marker && !marker)) {
            free(gpus);
            free(schema);
            free(marker);
            tg_diag_error(diag, TG_EINTERNAL, "out of memory while comparing with the baseline");
            return TG_EINTERNAL;
        }
        if (gpus && !gpu_matches(b, gpus, &seen) &&
            mismatch(file, "GPU", gpus, bname, seen, allow_mismatch, diag))
            st = TG_EUSAGE;
        if (!marker_matches(b, marker, &seen)) {
            if (allow_mismatch) {
                tg_diag_add(diag, TG_DIAG_WARNING, TG_OK, (tg_pos){0}, NULL,
                            "%s: its iterations are %s ranges but %s was recorded on %s ranges; "
                            "comparing anyway because of --allow-mismatch", file, marker,
                            bname, seen);
            } else {
                tg_diag_error(diag, TG_EUSAGE,
                              "%s: its iterations are %s ranges but %s was recorded on %s ranges, "
                              "so their times are not comparable; select the baseline's marker with "
                              "--iteration-pattern, or record a baseline on this one",
                              file, marker, bname, seen);
                st = TG_EUSAGE;
            }
        }
        if (tr->trace_format && !format_matches(b, tr->trace_format, &seen) &&
            mismatch(file, "trace format", tr->trace_format, bname, seen, allow_mismatch, diag))
            st = TG_EUSAGE;
        if (!schema_matches(b, schema, &seen) &&
            mismatch(file, "export schema", schema, bname, seen, allow_mismatch, diag))
            st = TG_EUSAGE;
        free(gpus);
        free(schema);
        free(marker);
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

bool tg_baseline_is_outlier(const tg_baseline_metric *m, size_t run)
{
    for (size_t i = 0; i < m->n_kept_outliers; i++)
        if (m->kept_outliers[i] == run) return true;
    return false;
}

double tg_baseline_floor(double value, double iteration_se)
{
    double f = TG_BASELINE_MIN_REL_NOISE * fabs(value);
    return isfinite(iteration_se) ? fmax(f, iteration_se) : f;
}

bool tg_baseline_nonnegative(tg_unit unit)
{
    return unit == TG_UNIT_NS || unit == TG_UNIT_BYTES || unit == TG_UNIT_RATIO || unit == TG_UNIT_RATE;
}

bool tg_baseline_spread(const tg_baseline *b, const tg_baseline_metric *m, double run_noise, tg_spread *out)
{
    *out = (tg_spread){.value = NAN, .spread = NAN, .rel = NAN, .lo = NAN, .hi = NAN};
    size_t n = 0;
    double *v = b->n_runs ? malloc(b->n_runs * sizeof *v) : NULL;
    if (b->n_runs && !v) return false;
    /* the estimates ignore the kept outliers (docs/regressions.md) */
    for (size_t i = 0; i < b->n_runs; i++) {
        if (!isfinite(m->runs[i])) continue;
        if (tg_baseline_is_outlier(m, i)) out->n_outliers++;
        else v[n++] = m->runs[i];
    }
    double med = n ? tg_stats_median(v, n) : NAN, scale = fabs(med);
    out->value = med;
    out->n_runs = n;
    if (n >= TG_BASELINE_MIN_BAND_RUNS) {
        out->spread = tg_stats_spread(v, n);
        out->measured = true;
    } else {
        double noise = isnan(run_noise) ? TG_BASELINE_DEFAULT_RUN_NOISE : run_noise;
        out->spread = noise * scale;
        if (n == 2) out->spread = fmax(out->spread, tg_stats_sd(v, n));
    }
    free(v);
    if (isnan(out->spread) || isnan(med)) return true;
    /* the floor: how precisely one run's value is known from its own
    ** iterations (the pooled samples, n_samples / runs values a run), and
    ** TG_BASELINE_MIN_REL_NOISE */
    double se = n && m->n_samples >= 2 ? tg_stats_median_se(m->samples, m->n_samples,
                                                            (double)m->n_samples_total / (double)n) : NAN;
    out->spread = fmax(out->spread, tg_baseline_floor(med, se));
    /* a kept outlier never widens the band: it stays outside it */
    for (size_t i = 0; i < m->n_kept_outliers; i++) {
        size_t k = m->kept_outliers[i];
        if (k < b->n_runs && isfinite(m->runs[k]))
            out->spread = fmin(out->spread, fabs(m->runs[k] - med) / TG_BASELINE_OUTLIER_K);
    }
    out->rel = scale > 0 ? out->spread / scale : NAN;
    out->lo = med - TG_BASELINE_BAND_K * out->spread;
    out->hi = med + TG_BASELINE_BAND_K * out->spread;
    /* a period, a time, a size, a rate or a ratio is never below 0 */
    if (out->lo < 0 && med >= 0 && tg_baseline_nonnegative(m->unit)) {
        out->lo = 0;
        out->clamped = true;
    }
    return true;
}

/* Fill r->baseline from the metric entry. False when out of memory. */
static bool fill_cmp(const tg_baseline *b, const tg_baseline_metric *m, tg_rule_result *r, double run_noise)
{
    tg_baseline_cmp *c = &r->baseline;
    tg_spread sp;
    if (!tg_baseline_spread(b, m, run_noise, &sp)) return false;
    /* the value compared with: the median of the runs not kept as outliers */
    double value = isnan(sp.value) ? m->median : sp.value;
    *c = (tg_baseline_cmp){.present = true, .value = value, .current = r->metric_value,
                           .p_value = NAN, .band_lo = NAN, .band_hi = NAN, .spread = NAN,
                           .workload_match = NAN, .busy_then = NAN, .busy_now = NAN};
    if (value != 0)
        c->change = (c->current - value) / fabs(value);
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

    c->n_runs = sp.n_runs;
    c->spread = sp.rel;
    c->band_measured = sp.measured;
    c->band_lo = sp.lo;
    c->band_hi = sp.hi;
    c->outside_band = !isnan(sp.lo) && (c->current < sp.lo || c->current > sp.hi);
    return true;
}

static void format_p(double p, char *buf, size_t size)
{
    if (isnan(p)) snprintf(buf, size, "p=n/a");
    else if (p == 0) snprintf(buf, size, "p<1e-300");
    else if (p < 0.001) snprintf(buf, size, "p=%.2g", p);
    else snprintf(buf, size, "p=%.3f", p);
}

/* What the band rests on: "3 runs" / "2 runs; 15% run-to-run noise assumed". */
static void band_basis(const tg_baseline_cmp *c, char *buf, size_t size)
{
    if (c->band_measured)
        snprintf(buf, size, "the spread of %zu baseline runs", c->n_runs);
    else
        snprintf(buf, size, "%.3g%% run-to-run spread assumed with %zu baseline run%s", 100 * c->spread,
                 c->n_runs, c->n_runs == 1 ? "" : "s");
}

/* What would let a change outside an assumed band be judged, when the
** within-run test could not run: a trace with too few values says so (a
** cut capture, not the baseline, is what to fix; audit of issue 13), the
** baseline's runs otherwise. */
static void no_test_advice(const tg_baseline_cmp *c, char *buf, size_t size)
{
    if (c->n_current < TG_BASELINE_MIN_SAMPLES)
        snprintf(buf, size, "this trace is too short to judge: capture at least %d steady iterations (it gives "
                 "%zu value%s), or record at least %d runs in the baseline to measure the spread",
                 TG_BASELINE_MIN_SAMPLES, c->n_current, c->n_current == 1 ? "" : "s", TG_BASELINE_MIN_BAND_RUNS);
    else
        snprintf(buf, size, "the baseline holds %zu value%s: record at least %d runs in the baseline",
                 c->n_baseline, c->n_baseline == 1 ? "" : "s", TG_BASELINE_MIN_BAND_RUNS);
}

/* z of a two-sided test at alpha: Phi^-1(1 - alpha / 2), by bisection on
** erfc (60 halvings: far below any alpha's precision). */
static double z_two_sided(double alpha)
{
    double lo = 0, hi = 40;
    for (int i = 0; i < 60; i++) {
        double mid = (lo + hi) / 2;
        if (erfc(mid / sqrt(2.0)) > alpha) lo = mid;
        else hi = mid;
    }
    return (lo + hi) / 2;
}

/* How many steady iterations would let the within-run test tell a change
** of c->change from this trace's own spread (docs/regressions.md, "What an
** inconclusive result needs"): the sample size per side for a two-sided
** test at alpha with 80% power on a shift of that size, times pi / 3 for
** Mann-Whitney's efficiency against a t-test, at least
** TG_BASELINE_MIN_SAMPLES; 0 when the spread is unknown. */
static size_t iterations_needed(const tg_rule_result *r, const tg_baseline_cmp *c, double alpha)
{
    size_t n = 0;
    double *x = finite_copy(r->samples, r->n_samples, &n);
    if (!x || n < 3 || !(fabs(c->change) > 0) || !(fabs(c->value) > 0)) {
        free(x);
        return 0;
    }
    double sigma = tg_stats_spread(x, n) / fabs(c->value);
    free(x);
    if (!(sigma > 0)) return TG_BASELINE_MIN_SAMPLES;
    double z = z_two_sided(alpha) + 0.8416;   /* Phi^-1(0.8) */
    double need = ceil(2 * pow(z * sigma / fabs(c->change), 2) * M_PI / 3);
    if (!(need < 1e9)) return 0;
    return need < TG_BASELINE_MIN_SAMPLES ? TG_BASELINE_MIN_SAMPLES : (size_t)need;
}

/* "; 2 more baseline runs, or about 40 steady iterations of this trace
** (it gives 6), would decide it": what an inconclusive result needs. */
static void what_decides(const tg_rule_result *r, const tg_baseline_cmp *c, double alpha, char *buf, size_t size)
{
    size_t runs = c->n_runs < TG_BASELINE_MIN_BAND_RUNS ? TG_BASELINE_MIN_BAND_RUNS - c->n_runs : 0;
    size_t iters = iterations_needed(r, c, alpha);
    bool more_iters = iters > c->n_current;
    if (!runs && !more_iters) {
        *buf = 0;
        return;
    }
    size_t l = (size_t)snprintf(buf, size, "; ");
    if (runs && l < size)
        l += (size_t)snprintf(buf + l, size - l, "%zu more baseline run%s", runs, runs == 1 ? "" : "s");
    if (more_iters && l < size)
        l += (size_t)snprintf(buf + l, size - l, "%sabout %zu steady iterations of this trace (it gives %zu)",
                              runs ? ", or " : "", iters, c->n_current);
    if (l < size) snprintf(buf + l, size - l, " would decide it");
}

/* s += t, within size. */
static void append(char *s, size_t size, const char *t)
{
    size_t l = strlen(s);
    if (l + 1 < size) snprintf(s + l, size - l, "%s", t);
}

/* Decide a regression rule's verdict; `why` gets the reason. */
static void decide(tg_rule_result *r, double min_change, double alpha, const tg_baseline_metric *m,
                   char *why, size_t size)
{
    tg_baseline_cmp *c = &r->baseline;
    int dir = r->regression > 0 ? 1 : -1;
    bool worse = dir * c->change > 0;
    bool exceeds = fabs(c->change) > min_change;
    bool have_p = !isnan(c->p_value) && c->n_baseline >= TG_BASELINE_MIN_SAMPLES &&
                  c->n_current >= TG_BASELINE_MIN_SAMPLES;
    bool significant = have_p && c->p_value < alpha;
    char lo[48], hi[48], basis[128];
    tg_fmt_num(lo, sizeof lo, c->band_lo, m->unit);
    tg_fmt_num(hi, sizeof hi, c->band_hi, m->unit);
    band_basis(c, basis, sizeof basis);
    r->verdict = TG_V_PASS;
    if (!exceeds && c->outside_band && (have_p ? significant : c->band_measured)) {
        /* what would fail but for the gate is said, not passed silently
        ** (docs/regressions.md, "The decision"); an improvement so is one */
        if (!worse) c->improvement = true;
        snprintf(why, size, "%ssignificant, below the %.3g%% gate: outside the run-to-run band %s..%s (%g x %s)%s",
                 worse ? "" : "an improvement, ", min_change * 100, lo, hi, TG_BASELINE_BAND_K, basis,
                 significant ? " and significant within the run" : "");
    } else if (!exceeds) {
        snprintf(why, size, "within the %.3g%% threshold", min_change * 100);
    } else if (have_p && !significant) {
        snprintf(why, size, "%sbeyond the %.3g%% threshold but not significant within the run at alpha %.3g",
                 worse ? "" : "an improvement ",
                 min_change * 100, alpha);
    } else if (c->outside_band && (have_p || c->band_measured)) {
        if (worse) {
            r->verdict = TG_V_FAIL;
            c->regression = true;
        } else {
            c->improvement = true;
        }
        snprintf(why, size, "%s beyond the %.3g%% threshold, outside the run-to-run band %s..%s (%g x %s)",
                 worse ? "regression" : "improvement", min_change * 100, lo, hi, TG_BASELINE_BAND_K, basis);
        if (significant) {
            size_t l = strlen(why);
            snprintf(why + l, size - l, ", significant within the run at alpha %.3g", alpha);
        }
    } else if (c->outside_band) {
        /* no within-run test (too few samples) and no measured spread */
        if (worse) {
            r->verdict = TG_V_INCONCLUSIVE;
            c->inconclusive = true;
        }
        char advice[256], needs[160];
        no_test_advice(c, advice, sizeof advice);
        what_decides(r, c, alpha, needs, sizeof needs);
        snprintf(why, size, "%s: beyond the %.3g%% threshold and outside %s..%s (%g x %s), but with fewer "
                 "than %d values per side there is no within-run test, and the spread is not measured; %s",
                 worse ? "inconclusive" : "improvement not claimed", min_change * 100, lo, hi,
                 TG_BASELINE_BAND_K, basis, TG_BASELINE_MIN_SAMPLES, advice);
        if (worse) append(why, size, needs);
    } else if (c->band_measured) {
        /* an improvement is called one, though too small for the band to claim it */
        snprintf(why, size, "%sbeyond the %.3g%% threshold but inside the run-to-run band %s..%s (%g x %s)",
                 worse ? "" : "an improvement ", min_change * 100, lo, hi, TG_BASELINE_BAND_K, basis);
    } else if (worse) {
        r->verdict = TG_V_INCONCLUSIVE;
        c->inconclusive = true;
        char short_trace[160] = "";
        if (c->n_current < TG_BASELINE_MIN_SAMPLES)
            snprintf(short_trace, sizeof short_trace, " (and this trace gives %zu value%s, too few for the "
                     "within-run test: capture at least %d steady iterations)", c->n_current,
                     c->n_current == 1 ? "" : "s", TG_BASELINE_MIN_SAMPLES);
        char needs[160];
        what_decides(r, c, alpha, needs, sizeof needs);
        snprintf(why, size, "inconclusive: beyond the %.3g%% threshold%s, but inside %s..%s, what run-to-run "
                 "noise can do (%g x %s); record at least %d runs in the baseline to measure the spread%s",
                 min_change * 100, significant ? " and significant within the run" : "", lo, hi,
                 TG_BASELINE_BAND_K, basis, TG_BASELINE_MIN_BAND_RUNS, short_trace);
        append(why, size, needs);
    } else {
        snprintf(why, size, "an improvement beyond the %.3g%% threshold, but inside %s..%s (%g x %s): "
                 "not claimed", min_change * 100, lo, hi, TG_BASELINE_BAND_K, basis);
    }
}

/* ---------------------------------------------------------- what ran */

static const tg_work_entry *find_entry(const tg_work_entry *list, size_t n, const char *name, tg_work_kind kind)
{
    for (size_t i = 0; i < n; i++)
        if (list[i].kind == kind && !strcmp(list[i].name, name)) return &list[i];
    return NULL;
}

static bool is_other(const tg_work_entry *e)
{
    return !strcmp(e->name, TG_BASELINE_OTHER);
}

/* Weight of an entry: its time per iteration, or over the whole trace. */
static double weight(const tg_work_entry *e)
{
    return isnan(e->time) ? e->total : e->time;
}

/* Share of the baseline's GPU time (its listed names) whose names this
** trace runs at all. NaN when either side has no GPU work. */
double tg_baseline_workload_match(const tg_workload *base, const tg_workload *cur)
{
    double total = 0, present = 0;
    for (size_t i = 0; i < base->n_ops; i++) {
        const tg_work_entry *e = &base->ops[i];
        if (is_other(e) || !(weight(e) > 0)) continue;
        total += weight(e);
        const tg_work_entry *now = find_entry(cur->ops, cur->n_ops, e->name, e->kind);
        if (now && now->count > 0) present += weight(e);
    }
    return total > 0 && cur->n_ops > 0 ? present / total : NAN;
}

/* The fingerprint guard. A baseline judges regression rules only with the
** fingerprint of what it was recorded on (docs/regressions.md, "The
** workload"): without one (its `workload:` removed, or listing no GPU
** work), a trace of a wholly different workload would be compared with it
** as if it were the same, and pass as an "improvement". Refused (exit 2)
** unless --allow-mismatch, which warns. */
static bool has_fingerprint(const tg_workload *w)
{
    for (size_t i = 0; w && i < w->n_ops; i++)
        if (!is_other(&w->ops[i]) && weight(&w->ops[i]) > 0) return true;
    return false;
}

/* Does the run hold a regression rule the baseline has an entry for? */
static bool judges_regressions(const tg_baseline *b, const tg_run_result *run)
{
    for (size_t t = 0; t < run->n_traces; t++) {
        const tg_trace_result *tr = &run->traces[t];
        for (size_t i = 0; tr->status == TG_OK && i < tr->n_results; i++)
            if (tr->results[i].regression && tr->results[i].rule && tg_baseline_find(b, tr->results[i].rule))
                return true;
    }
    return false;
}

static tg_status check_fingerprint(const tg_baseline *b, const tg_run_result *run, bool allow_mismatch,
                                   tg_diag *diag)
{
    if (has_fingerprint(b->workload) || !judges_regressions(b, run)) return TG_OK;
    const char *bname = b->path ? b->path : "the baseline";
    const char *why = b->workload ? "its 'workload' lists no GPU work" : "it has no 'workload' section";
    if (allow_mismatch) {
        tg_diag_add(diag, TG_DIAG_WARNING, TG_OK, (tg_pos){0}, NULL,
                    "%s carries no workload fingerprint (%s): comparing anyway because of --allow-mismatch, "
                    "without checking that the traces run the baseline's workload", bname, why);
        return TG_OK;
    }
    tg_diag_error(diag, TG_EUSAGE,
                  "%s carries no workload fingerprint (%s), so a trace of another workload would be compared "
                  "with it as if it were the same one; record the baseline again ('tracegate baseline record "
                  "-o FILE TRACE...'), or pass --allow-mismatch to compare anyway", bname, why);
    return TG_EUSAGE;
}

/* The top contributors of ops (and, for wall-time rules, NVTX ranges):
** engine/eval/eval_contrib.c, which merge's cross-rank comparison shares. */
static bool attribute(const tg_baseline *b, const tg_baseline_metric *m, const tg_trace_result *tr,
                      tg_rule_result *r, tg_arena *a)
{
    const tg_workload *base = b->workload, *cur = tr->workload;
    if (!base || !cur || isnan(base->gpu_time) || isnan(cur->gpu_time)) return true;
    bool ranges = !m->samples_field || strcmp(m->samples_field, "gpu_time") != 0;
    return tg_workload_attribute(base, cur, r->metric_value - r->baseline.value, ranges, &r->baseline, a);
}

/* ------------------------------------------------------------ judging */

/* The verdict, the numbers and the reason as the rule's message. */
static bool judge(const tg_baseline *b, const tg_baseline_metric *m, const tg_trace_result *tr, tg_rule_result *r,
                  double min_change, double alpha, const char *evaluated, tg_arena *arena)
{
    tg_baseline_cmp *c = &r->baseline;
    char why[1024];
    decide(r, min_change, alpha, m, why, sizeof why);
    if ((r->verdict == TG_V_FAIL || r->verdict == TG_V_INCONCLUSIVE) && !attribute(b, m, tr, r, arena))
        return false;
    char cur[48], base[48], pct[TG_FMT_BUF], p[32];
    tg_fmt_num(cur, sizeof cur, c->current, m->unit);
    tg_fmt_num(base, sizeof base, c->value, m->unit);
    /* the one formatter (units.h): the message says the change as the
    ** baseline line under it does (+9.98%, not +10.0% beside it) */
    tg_fmt_change(pct, sizeof pct, c->change);
    format_p(c->p_value, p, sizeof p);
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    if (!f) return false;
    /* Lead with the rule's own rendered message when the evaluator produced
    ** one ("p50 iteration period 48.1 ms over 95 steady iterations"), else
    ** with the metric and its value. */
    if (evaluated && evaluated[0]) fprintf(f, "%s vs baseline %s", evaluated, base);
    else fprintf(f, "%s %s vs baseline %s", m->metric, cur, base);
    fprintf(f, " (%s, %s, n=%zu now vs %zu in the baseline): %s", pct, p, c->n_current, c->n_baseline, why);
    if (m->n_kept_outliers) {
        /* recorded with --keep-outliers: the band is the other runs' */
        fprintf(f, "; the baseline keeps %zu outlier run%s (", m->n_kept_outliers,
                m->n_kept_outliers == 1 ? "" : "s");
        for (size_t i = 0; i < m->n_kept_outliers; i++) {
            size_t k = m->kept_outliers[i];
            char v[48];
            tg_fmt_num(v, sizeof v, k < b->n_runs ? m->runs[k] : NAN, m->unit);
            fprintf(f, "%s%s at %s", i ? ", " : "", k < b->n_runs && b->runs[k].trace ? b->runs[k].trace : "?", v);
        }
        fprintf(f, ") out of its value and band");
    }
    if (r->verdict == TG_V_FAIL || r->verdict == TG_V_INCONCLUSIVE)
        tg_workload_put_changes(f, c, !m->samples_field || strcmp(m->samples_field, "gpu_time") != 0);
    bool ok = fclose(f) == 0;
    r->message = ok ? tg_arena_strdup(arena, text) : NULL;
    free(text);
    return r->message != NULL;
}

/* A regression rule that cannot be judged: an error, with why. */
static bool cannot_judge(tg_rule_result *r, tg_status status, tg_arena *arena, const char *fmt, const char *a,
                         const char *b, const char *c)
{
    r->verdict = TG_V_ERROR;
    r->error_status = status;
    r->message = tg_arena_printf(arena, fmt, a, b, c);
    return r->message != NULL;
}

static bool apply_trace(const tg_baseline *b, const tg_baseline_rules *rules, tg_trace_result *tr,
                        tg_arena *arena)
{
    const char *bname = b->path ? b->path : "the baseline";
    for (size_t i = 0; i < tr->n_results; i++) {
        tg_rule_result *r = &tr->results[i];
        if (!r->rule) continue;
        const tg_baseline_metric *m = r->metric ? tg_baseline_find(b, r->rule) : NULL;
        double run_noise = rule_param(rules, r->rule, "run_noise", TG_BASELINE_DEFAULT_RUN_NOISE);
        if (!r->regression) {
            if (m && !isnan(r->metric_value) && !r->missing_data && r->verdict != TG_V_ERROR &&
                !fill_cmp(b, m, r, run_noise))
                return false;
            continue;
        }
        if (r->verdict == TG_V_ERROR) continue;   /* already says why */
        const char *evaluated =
            r->verdict == TG_V_PASS || r->verdict == TG_V_FAIL ? r->message : NULL;
        r->baseline = (tg_baseline_cmp){.p_value = NAN, .band_lo = NAN, .band_hi = NAN, .spread = NAN,
                                        .workload_match = NAN, .busy_then = NAN, .busy_now = NAN};
        bool ok;
        if (!r->metric) {
            ok = cannot_judge(r, TG_EUSAGE, arena, "%s%s%s: a regression rule needs a metric", r->rule, "", "");
        } else if (!m) {
            ok = cannot_judge(r, TG_EUSAGE, arena,
                              "%s is not in the baseline %s%s: record the baseline again with this rule enabled",
                              r->metric, bname, "");
        } else if (r->missing_data) {
            ok = cannot_judge(r, TG_ETRACE, arena, "%s; %s holds this rule's metric, so the comparison cannot be "
                              "skipped%s", r->message ? r->message : "data is missing", bname, "");
        } else if (isnan(r->metric_value)) {
            ok = cannot_judge(r, TG_ETRACE, arena, "%s cannot be computed on this trace: %s; %s holds it, so the "
                              "comparison cannot be made", r->metric,
                              r->metric_missing ? r->metric_missing : "it has no value", bname);
        } else {
            double match = b->workload && tr->workload ? tg_baseline_workload_match(b->workload, tr->workload) : NAN;
            double min_match = rule_param(rules, r->rule, "min_workload_match", TG_BASELINE_DEFAULT_MIN_MATCH);
            if (!isnan(match) && match < min_match) {
                char got[32], want[32];
                snprintf(got, sizeof got, "%.3g%%", 100 * match);
                snprintf(want, sizeof want, "%.3g%%", 100 * min_match);
                ok = cannot_judge(r, TG_EUSAGE, arena, "this trace does not look like the baseline's workload: "
                                  "the kernels it runs account for %s of the baseline's GPU time (at least %s "
                                  "needed, param min_workload_match); check it against a baseline of the same "
                                  "workload (%s)", got, want, bname);
                r->baseline.workload_match = match;
            } else {
                if (!fill_cmp(b, m, r, run_noise)) return false;
                r->baseline.workload_match = match;
                double min_change = rule_param(rules, r->rule, "min_change", TG_BASELINE_DEFAULT_MIN_CHANGE);
                double alpha = rule_param(rules, r->rule, "alpha", TG_BASELINE_DEFAULT_ALPHA);
                ok = judge(b, m, tr, r, min_change, alpha, evaluated, arena);
            }
        }
        if (!ok) return false;
    }
    return true;
}

tg_status tg_baseline_apply_with(const tg_baseline *b, const tg_baseline_rules *rules,
                                 tg_run_result *run, bool allow_mismatch, tg_diag *diag)
{
    tg_status st = check_mismatch(b, run, allow_mismatch, diag);
    if (st == TG_OK) st = check_fingerprint(b, run, allow_mismatch, diag);
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
