/*
** Runs and baselines of the history (docs/history.md): what a history keeps
** of an evaluated trace, which workload a run belongs to, and the baseline
** a check draws from the runs before it -- recorded by the baseline code
** itself from those runs, so that `check --history` and `check --baseline`
** judge alike.
*/
#include "history.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../common/sha256.h"
#include "../common/stats.h"
#include "../trace/trace.h"
#include "changepoint.h"

static const char *dup_or_null(tg_arena *a, const char *s)
{
    return s ? tg_utf8_clean(a, s) : NULL;
}

static const char *base_name(const char *path)
{
    if (!path) return NULL;
    const char *s = strrchr(path, '/');
    return s ? s + 1 : path;
}


/* ------------------------------------------------------------ digest */

static int cmp_info(const void *a, const void *b)
{
    const tg_rule_info *x = *(const tg_rule_info *const *)a, *y = *(const tg_rule_info *const *)b;
    return strcmp(x->id, y->id);
}

const char *tg_history_metrics_digest(const tg_ruleset *rs, tg_arena *arena)
{
    size_t n = tg_rules_count(rs), k = 0;
    const tg_rule_info **v = malloc((n ? n : 1) * sizeof *v);
    if (!v) return NULL;
    for (size_t i = 0; i < n; i++) {
        const tg_rule_info *r = tg_rules_info(rs, i);
        if (r->enabled && r->regression && r->metric) v[k++] = r;
    }
    qsort(v, k, sizeof *v, cmp_info);
    tg_sha256 h;
    tg_sha256_init(&h);
    tg_sha256_str(&h, "tracegate regression metrics 1");
    for (size_t i = 0; i < k; i++) {
        tg_sha256_str(&h, v[i]->id);
        tg_sha256_str(&h, v[i]->metric);
        tg_sha256_str(&h, v[i]->samples);
        tg_sha256_str(&h, tg_unit_key(v[i]->metric_unit));
        tg_sha256_str(&h, tg_baseline_direction_name(v[i]->regression));
    }
    free(v);
    char hex[TG_SHA256_HEX];
    tg_sha256_hex(&h, hex);
    return tg_arena_printf(arena, "sha256:%s", hex);
}

/* -------------------------------------------------------------- runs */

/* The finite values of x, sorted, thinned to at most max by strata (the
** rule a baseline thins its pooled samples with, baseline.c). */
static bool thin_samples(const double *x, size_t n, size_t max, tg_arena *a, double **out, size_t *n_out)
{
    *out = NULL;
    *n_out = 0;
    size_t m = 0;
    double *pool = n ? malloc(n * sizeof *pool) : NULL;
    if (n && !pool) return false;
    for (size_t i = 0; i < n; i++)
        if (isfinite(x[i])) pool[m++] = x[i];
    if (m == 0) {
        free(pool);
        return true;
    }
    tg_stats_sort(pool, m);
    size_t k = m < max ? m : max;
    double *s = tg_arena_alloc(a, k * sizeof *s);
    if (s)
        for (size_t i = 0; i < k; i++) s[i] = pool[((2 * i + 1) * m) / (2 * k)];
    free(pool);
    if (!s) return false;
    *out = s;
    *n_out = k;
    return true;
}

static int cmp_metric(const void *a, const void *b)
{
    return strcmp(((const tg_hist_metric *)a)->rule, ((const tg_hist_metric *)b)->rule);
}

/* A work list without its rows: at most keep entries, the rest summed
** into one TG_BASELINE_OTHER entry. */
static bool copy_entries(const tg_work_entry *in, size_t n, size_t keep, tg_arena *a, tg_work_entry **out,
                         size_t *n_out)
{
    size_t k = n <= keep ? n : keep;
    size_t m = k + (n > keep);
    *out = m ? tg_arena_alloc(a, m * sizeof **out) : NULL;
    *n_out = m;
    if (m && !*out) return false;
    for (size_t i = 0; i < k; i++) {
        (*out)[i] = (tg_work_entry){.name = tg_utf8_clean(a, in[i].name), .kind = in[i].kind,
                                    .count = in[i].count, .total = in[i].total, .time = in[i].time,
                                    .launches = in[i].launches};
        if (!(*out)[i].name) return false;
    }
    if (n > keep) {
        tg_work_entry o = {.name = TG_BASELINE_OTHER, .kind = in[keep].kind, .time = 0, .launches = 0};
        bool per_iter = true;
        for (size_t i = keep; i < n; i++) {
            o.count += in[i].count;
            o.total += in[i].total;
            if (isnan(in[i].time)) per_iter = false;
            else o.time += in[i].time, o.launches += in[i].launches;
        }
        if (!per_iter) o.time = o.launches = NAN;
        (*out)[k] = o;
    }
    return true;
}

static tg_workload *copy_workload(const tg_workload *w, tg_arena *a)
{
    if (!w) return NULL;
    tg_workload *c = tg_arena_alloc(a, sizeof *c);
    if (!c) return NULL;
    *c = (tg_workload){.steady_iterations = w->steady_iterations, .gpu_time = w->gpu_time,
                       .period = w->period, .idle = w->idle, .total = w->total};
    if (!copy_entries(w->ops, w->n_ops, TG_BASELINE_MAX_WORK, a, &c->ops, &c->n_ops) ||
        !copy_entries(w->ranges, w->n_ranges, TG_BASELINE_MAX_RANGES, a, &c->ranges, &c->n_ranges))
        return NULL;
    return c;
}

static const char *now_iso(tg_arena *a)
{
    time_t t = time(NULL);
    struct tm tm;
    char buf[32];
    if (!gmtime_r(&t, &tm) || !strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm)) return NULL;
    return tg_arena_strdup(a, buf);
}

bool tg_history_run_of(const tg_trace_result *tr, const tg_ruleset *rs, const tg_hist_meta *meta,
                       tg_arena *a, tg_hist_run *out)
{
    *out = (tg_hist_run){0};
    const tg_hist_meta none = {0};
    if (!meta) meta = &none;
    const char *trace = base_name(tr->file);
    out->label = dup_or_null(a, meta->label ? meta->label : trace ? trace : "(unnamed trace)");
    out->time = meta->time ? dup_or_null(a, meta->time) : now_iso(a);
    out->branch = dup_or_null(a, meta->branch);
    out->workload = dup_or_null(a, meta->workload);
    out->gpu = dup_or_null(a, tr->gpu_names);
    out->format = dup_or_null(a, tr->trace_format ? tr->trace_format : tg_trace_format_names[TG_FORMAT_NSYS]);
    out->marker = dup_or_null(a, tr->iteration_marker ? tr->iteration_marker : "");
    out->nsys_version = dup_or_null(a, tr->nsys_version);
    out->schema_version = dup_or_null(a, tr->schema_version);
    out->trace = dup_or_null(a, trace);
    out->rules_digest = dup_or_null(a, meta->rules_digest);
    out->metrics_digest = rs ? tg_history_metrics_digest(rs, a) : NULL;
    out->tool_version = dup_or_null(a, meta->tool_version);
    out->verdict = dup_or_null(a, meta->verdict ? meta->verdict : "pass");
    out->regressed = meta->regressed;
    out->epoch = meta->epoch;
    if (!out->label || !out->time || !out->format || !out->marker || (rs && !out->metrics_digest) ||
        !out->verdict)
        return false;

    size_t n = 0;
    for (size_t i = 0; i < tr->n_results; i++) n += tr->results[i].metric && tr->results[i].rule;
    out->metrics = n ? tg_arena_alloc(a, n * sizeof *out->metrics) : NULL;
    if (n && !out->metrics) return false;
    for (size_t i = 0; i < tr->n_results; i++) {
        const tg_rule_result *r = &tr->results[i];
        if (!r->metric || !r->rule) continue;
        bool dup = false;
        for (size_t k = 0; k < out->n_metrics && !dup; k++) dup = !strcmp(out->metrics[k].rule, r->rule);
        if (dup) continue;
        long ri = rs ? tg_rules_find(rs, r->rule) : -1;
        tg_hist_metric *m = &out->metrics[out->n_metrics++];
        *m = (tg_hist_metric){
            .rule = tg_arena_strdup(a, r->rule),
            .metric = tg_arena_strdup(a, r->metric),
            .samples_field = ri >= 0 ? dup_or_null(a, tg_rules_info(rs, (size_t)ri)->samples) : NULL,
            .unit = r->metric_unit,
            .direction = r->regression > 0 ? 1 : r->regression < 0 ? -1 : 0,
            .value = !r->missing_data && isfinite(r->metric_value) ? r->metric_value : NAN,
            .verdict = tg_verdict_name(r->verdict),
        };
        if (!m->rule || !m->metric ||
            !thin_samples(r->samples, r->n_samples, TG_HISTORY_SAMPLES, a, &m->samples, &m->n_samples))
            return false;
    }
    qsort(out->metrics, out->n_metrics, sizeof *out->metrics, cmp_metric);
    if (tr->workload && !(out->work = copy_workload(tr->workload, a))) return false;
    return true;
}

/* ----------------------------------------------------------- matching */

static bool has_ops(const tg_workload *w)
{
    for (size_t i = 0; w && i < w->n_ops; i++)
        if (strcmp(w->ops[i].name, TG_BASELINE_OTHER) && (w->ops[i].total > 0 || w->ops[i].time > 0)) return true;
    return false;
}

/* Where it ran and how it is cut into iterations: what must be equal for
** two runs to be of one workload. */
static bool same_place(const tg_hist_run *a, const tg_hist_run *b)
{
    return (a->gpu && b->gpu ? tg_baseline_same_names(a->gpu, b->gpu) : tg_same_str(a->gpu, b->gpu)) &&
           tg_same_str(a->format, b->format) && tg_same_str(a->marker ? a->marker : "", b->marker ? b->marker : "");
}

const char *tg_history_match(const tg_hist_run *run, const tg_hist_run *runs, size_t n, double min_match)
{
    if (!(min_match > 0)) min_match = TG_BASELINE_DEFAULT_MIN_MATCH;
    const char *best = NULL;
    double best_score = -1;
    bool mine = has_ops(run->work);
    /* the most recent first: on a tie the latest run's key wins */
    for (size_t k = n; k-- > 0;) {
        const tg_hist_run *c = &runs[k];
        if (!c->workload || !same_place(run, c)) continue;
        double score;
        if (!mine || !has_ops(c->work)) {
            /* without GPU work there is nothing to fingerprint but the name */
            if (mine || has_ops(c->work) || !tg_same_str(run->trace, c->trace)) continue;
            score = 0;
        } else {
            double there = tg_baseline_workload_match(c->work, run->work);
            double back = tg_baseline_workload_match(run->work, c->work);
            if (!(there >= min_match) || !(back >= min_match)) continue;
            score = fmin(there, back);
        }
        if (score > best_score) best_score = score, best = c->workload;
    }
    return best;
}

/* ---------------------------------------------------------- baselines */

const tg_hist_metric *tg_history_metric(const tg_hist_run *r, const char *rule)
{
    for (size_t k = 0; r && k < r->n_metrics; k++)
        if (r->metrics[k].rule && !strcmp(r->metrics[k].rule, rule)) return &r->metrics[k];
    return NULL;
}

const tg_hist_metric *tg_history_series_metric(const tg_hist_series *s, size_t i)
{
    return i < s->n ? tg_history_metric(s->runs[i], s->rule) : NULL;
}

bool tg_history_series_wall_time(const tg_hist_series *s)
{
    const tg_hist_metric *m = s->n ? tg_history_series_metric(s, s->n - 1) : NULL;
    return !m || !m->samples_field || strcmp(m->samples_field, "gpu_time") != 0;
}

/* Has r a value for every enabled regression rule of rs? */
static bool judged_all(const tg_hist_run *r, const tg_ruleset *rs)
{
    for (size_t i = 0; i < tg_rules_count(rs); i++) {
        const tg_rule_info *ri = tg_rules_info(rs, i);
        if (!ri->enabled || !ri->regression || !ri->metric) continue;
        const tg_hist_metric *m = tg_history_metric(r, ri->id);
        if (!m || !isfinite(m->value)) return false;
    }
    return true;
}

static bool same_schema(const tg_hist_run *a, const tg_hist_run *b)
{
    return tg_baseline_schema_major(a->schema_version) == tg_baseline_schema_major(b->schema_version);
}

/* The latest accepted change point of workload w, or NULL. */
static const tg_hist_accept *latest_accept(const tg_hist_accept *acc, size_t n, const char *w)
{
    for (size_t k = n; k-- > 0;)
        if (tg_same_str(acc[k].workload, w)) return &acc[k];
    return NULL;
}

/* The window of runs[from..to) a baseline may draw from, narrowed by the
** change points of each regression metric over the candidates: a later
** improvement starts a new normal (its runs are the better ones); an
** unaccepted regression ends it (the runs after it carry the regression
** and are not a baseline until `history accept` says so). */
static bool narrow_by_changes(const tg_hist_run *const *cand, size_t n, const tg_ruleset *rs, size_t *from,
                              size_t *to, const char **cut_label)
{
    /* the series of every regression rule first, then their change points
    ** at once, on every core (tg_changepoints_batch: the searches are most
    ** of what a check against a long history costs, issue 30 item 8) */
    size_t n_rules = 0;
    for (size_t i = 0; i < tg_rules_count(rs); i++) {
        const tg_rule_info *ri = tg_rules_info(rs, i);
        n_rules += ri->enabled && ri->regression && ri->metric;
    }
    const tg_rule_info **rule = malloc((n_rules ? n_rules : 1) * sizeof *rule);
    size_t n_values = n_rules * n;
    double *v = malloc((n_values ? n_values : 1) * sizeof *v);
    tg_cp_job *jobs = calloc(n_rules ? n_rules : 1, sizeof *jobs);
    bool ok = rule && v && jobs;
    for (size_t i = 0, j = 0; ok && i < tg_rules_count(rs); i++) {
        const tg_rule_info *ri = tg_rules_info(rs, i);
        if (!ri->enabled || !ri->regression || !ri->metric) continue;
        for (size_t k = 0; k < n; k++) v[j * n + k] = tg_history_metric(cand[k], ri->id)->value;
        rule[j] = ri;
        jobs[j] = (tg_cp_job){.x = v + j * n, .n = n};
        j++;
    }
    tg_cp_opts opts = TG_CP_OPTS_DEFAULT;
    ok = ok && tg_changepoints_batch(jobs, n_rules, &opts, 0);
    /* per rule, in the order of its change points: an improvement starts a
    ** new normal (the runs after it; after a regression, the fix of it); a
    ** regression with no improvement after it ends the normal runs. The
    ** rules then agree on the runs every one of them finds normal. */
    for (size_t j = 0; ok && j < n_rules; j++) {
        const tg_rule_info *ri = rule[j];
        const tg_cp *cps = jobs[j].cps;
        size_t lo = 0, hi = n;
        const char *cut = NULL;
        /* a change below the rule's gate is noise to the gate: it moves nothing */
        double gate = tg_rules_param(rs, ri->id, "min_change", TG_BASELINE_DEFAULT_MIN_CHANGE);
        for (size_t c = 0; c < jobs[j].n_cps; c++) {
            double before = cps[c].before, rel = before != 0 ? (cps[c].after - before) / fabs(before) : INFINITY;
            if (!(fabs(rel) > gate)) continue;
            bool worse = (ri->regression > 0) == (cps[c].after > cps[c].before);
            if (!worse) {
                lo = cps[c].index, hi = n, cut = NULL;
            } else if (hi == n) {
                hi = cps[c].index;
                cut = cand[cps[c].index]->label;
            }
        }
        if (lo > *from) *from = lo;
        if (hi < *to) *to = hi, *cut_label = cut;
    }
    if (*to < *from) *to = *from;   /* no run every rule finds normal */
    for (size_t j = 0; jobs && j < n_rules; j++) free(jobs[j].cps);
    free(jobs);
    free(v);
    free(rule);
    return ok;
}

tg_baseline *tg_history_baseline(const tg_hist_run *runs, size_t n, const tg_hist_accept *accepts, size_t n_accepts,
                                 const tg_hist_run *current, const tg_ruleset *rs, const char *tool_version,
                                 tg_arena *arena, tg_hist_choice *choice, tg_diag *diag)
{
    *choice = (tg_hist_choice){0};
    const tg_hist_accept *since = latest_accept(accepts, n_accepts, current->workload);
    choice->since = since;
    const tg_hist_run **cand = n ? tg_arena_alloc(arena, n * sizeof *cand) : NULL;
    if (n && !cand) goto oom;
    /* the runs at or after the accepted change point */
    size_t start = 0;
    if (since)
        for (size_t i = 0; i < n; i++)
            if (runs[i].id == since->run_id) start = i;
    size_t n_cand = 0;
    for (size_t i = start; i < n; i++) {
        const tg_hist_run *r = &runs[i];
        if (r->id == current->id && current->id) continue;
        if (!tg_same_str(r->workload, current->workload) || !same_place(r, current) || !same_schema(r, current))
            continue;
        if (!tg_same_str(r->metrics_digest, current->metrics_digest)) {
            choice->n_other_metrics++;
            continue;
        }
        /* a run that regressed is not a baseline, unless it was judged
        ** before the change it carries was accepted */
        if (r->regressed && !(since && r->epoch != since->run_id)) continue;
        if (!judged_all(r, rs)) continue;
        cand[n_cand++] = r;
    }
    /* the change points that bound the baseline are searched over the last
    ** TG_HISTORY_CHANGE_WINDOW usable runs: what a check costs stays bounded
    ** however long the history (issue 30 item 8); history show searches the
    ** whole history */
    size_t off = n_cand > TG_HISTORY_CHANGE_WINDOW ? n_cand - TG_HISTORY_CHANGE_WINDOW : 0;
    size_t lo = 0, hi = n_cand - off;
    if (!narrow_by_changes(cand + off, n_cand - off, rs, &lo, &hi, &choice->cut_label)) goto oom;
    size_t from = off + lo, to = off + hi;
    choice->n_usable = to - from;
    if (choice->n_usable < TG_HISTORY_BASELINE_MIN) {
        choice->n_needed = TG_HISTORY_BASELINE_MIN - choice->n_usable;
        return NULL;
    }
    size_t first = to - (choice->n_usable < TG_HISTORY_BASELINE_MAX ? choice->n_usable : TG_HISTORY_BASELINE_MAX);
    choice->used = cand + first;
    choice->n_used = to - first;

    /* the used runs as the traces of a run, recorded as `baseline record
    ** --keep-outliers` records traces */
    tg_run_result run = {.arena = arena, .n_traces = choice->n_used};
    run.traces = tg_arena_alloc(arena, run.n_traces * sizeof *run.traces);
    if (!run.traces) goto oom;
    for (size_t t = 0; t < run.n_traces; t++) {
        const tg_hist_run *r = choice->used[t];
        tg_trace_result *tr = &run.traces[t];
        *tr = (tg_trace_result){.file = r->label, .nsys_version = r->nsys_version,
                                .schema_version = r->schema_version, .gpu_names = r->gpu,
                                .iteration_marker = r->marker && *r->marker ? r->marker : NULL,
                                .trace_format = r->format, .workload = r->work, .status = TG_OK,
                                .n_results = r->n_metrics};
        tr->results = r->n_metrics ? tg_arena_alloc(arena, r->n_metrics * sizeof *tr->results) : NULL;
        if (r->n_metrics && !tr->results) goto oom;
        for (size_t i = 0; i < r->n_metrics; i++) {
            const tg_hist_metric *m = &r->metrics[i];
            tr->results[i] = (tg_rule_result){.rule = m->rule, .metric = m->metric, .metric_unit = m->unit,
                                              .metric_value = m->value, .samples = m->samples,
                                              .n_samples = m->n_samples, .regression = m->direction,
                                              .missing_data = isnan(m->value)};
        }
    }
    tg_baseline *b = tg_baseline_record_keep(&run, rs, tool_version, NULL, true, diag);
    if (!b) return NULL;
    const char *l0 = choice->used[0]->label, *l1 = choice->used[choice->n_used - 1]->label;
    b->path = tg_arena_printf(b->arena, "the history's baseline (%zu run%s, %s%s%s)", choice->n_used,
                              choice->n_used == 1 ? "" : "s", l0, choice->n_used > 1 ? " .. " : "",
                              choice->n_used > 1 ? l1 : "");
    if (!b->path) {
        tg_baseline_free(b);
        goto oom;
    }
    return b;
oom:
    tg_diag_error(diag, TG_EINTERNAL, "out of memory while choosing the history's baseline");
    return NULL;
}
