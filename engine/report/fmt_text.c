/*
** The terminal report: per trace a header, per rule one aligned line
** (verdict, severity, id, message), and under each failure the numbers it
** rests on: the aggregate values, the evidence rows (table, rowid,
** start..end, fields), the SQL that reproduces them, the advice and the
** baseline comparison. It ends with the verdict line. Every string from
** the trace or the rules goes through tg_text_escape (engine/common/text.h,
** docs/formats.md): controls, C1, invalid UTF-8 shown escaped, newlines as
** \n, names cut at TG_TEXT_CAP_NAME, so a hostile name can neither drive
** the terminal nor forge a line of a CI log.
*/
#include "report_int.h"
#include "../common/units.h"

#include <math.h>
#include <string.h>

#define INDENT "        "

typedef struct text_ctx {
    const tg_report_opts *opts;
    FILE *out;
    int id_width;
    const tg_run_result *run;
    size_t trace;              /* the trace being written */
    int64_t origin;            /* its time origin: tg_report_origin */
    int verdict_width;         /* verdict_width */
} text_ctx;

static const char *paint(const text_ctx *c, const char *code)
{
    return c->opts->color ? code : "";
}

static const char *verdict_color(tg_verdict v)
{
    switch (v) {
    case TG_V_PASS: return "\033[32m";
    case TG_V_FAIL: return "\033[1;31m";
    case TG_V_SKIP: return "\033[33m";
    case TG_V_INCONCLUSIVE: return "\033[1;33m";
    default: return "\033[1;35m";
    }
}

/* A string from the trace or the rules, escaped and capped. */
static void put_text(FILE *out, const char *s, size_t cap)
{
    tg_text_fput(out, s ? s : "", cap, 0);
}

/* A rule id (rule files and merged results choose it), escaped and padded
** to width characters. */
static void put_padded(FILE *out, const char *s, int width)
{
    tg_file_sink c = {.out = out};
    tg_text_escape(s, strlen(s), TG_TEXT_CAP_NAME, 0, tg_report_file_sink, &c);
    for (; c.chars < width; c.chars++) fputc(' ', out);
}

/* A value: strings quoted when they hold blanks, quotes or '=', numbers in
** their unit. */
static void put_value(FILE *out, const tg_value *v)
{
    if (v->type == TG_TY_STRING) {
        const char *s = v->u.s ? v->u.s : "";
        if (*s && !strpbrk(s, " \t\n\"'=")) {
            put_text(out, s, TG_TEXT_CAP_NAME);
            return;
        }
        fputc('"', out);
        tg_text_escape(s, strlen(s), TG_TEXT_CAP_NAME, 0, tg_report_backslash_sink,
                       &(tg_backslash_sink){out, "\""});   /* inside quotes a quote is \" */
        fputc('"', out);
        return;
    }
    char buf[TG_FMT_BUF];
    fputs(tg_fmt_value(buf, sizeof buf, *v), out);
}

static void put_named(FILE *out, const tg_named_value *vals, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        char label[128];
        fputs(i ? "  " : "", out);
        put_text(out, tg_report_value_label(&vals[i], label, sizeof label), TG_TEXT_CAP_NAME);
        fputc('=', out);
        put_value(out, &vals[i].value);
    }
}

static void put_name(FILE *out, const char *name)
{
    put_text(out, name, TG_TEXT_CAP_NAME);
}

/* One evidence line: its sentence (report.c), then the fields it has not
** said. */
static void put_evidence(const text_ctx *c, const tg_evidence *e)
{
    FILE *out = c->out;
    fputs(INDENT "  ", out);
    tg_report_evidence_sentence(out, e, c->origin, put_name);
    for (size_t i = 0; i < e->n_fields; i++) {
        if (tg_report_evidence_said(e, &e->fields[i])) continue;
        fputs("  ", out);
        put_named(out, &e->fields[i], 1);
    }
    fputc('\n', out);
}

/* What changed, one line each: per steady iteration, baseline -> now. */
static void put_contributors(const text_ctx *c, const tg_baseline_cmp *b)
{
    for (size_t i = 0; i < b->n_contributors; i++) {
        const tg_contributor *x = &b->contributors[i];
        char then[TG_FMT_BUF], now[TG_FMT_BUF], d[TG_FMT_BUF];
        tg_fmt_num(then, sizeof then, x->then_time, TG_UNIT_NS);
        tg_fmt_num(now, sizeof now, x->now_time, TG_UNIT_NS);
        tg_fmt_num(d, sizeof d, fabs(x->delta), TG_UNIT_NS);
        fprintf(c->out, INDENT "%s %-6s ", i == 0 ? "changed:" : "        ", tg_contrib_status_name(x->status));
        put_text(c->out, x->name, TG_TEXT_CAP_NAME);
        fprintf(c->out, "  %s \xe2\x86\x92 %s per iteration (%s%s", then, now, x->delta >= 0 ? "+" : "-", d);
        if (x->kind != TG_WORK_NVTX) fprintf(c->out, ", %.4g \xe2\x86\x92 %.4g launches", x->then_launches, x->now_launches);
        fprintf(c->out, "%s)\n", x->kind == TG_WORK_NVTX ? ", NVTX range" : "");
    }
}

/* baseline -> now (change), p, n, band and what it means: one line. */
static void put_baseline_line(const text_ctx *c, const tg_rule_result *r)
{
    const tg_baseline_cmp *b = &r->baseline;
    tg_unit unit = r->metric_unit;
    char base[TG_FMT_BUF], cur[TG_FMT_BUF], chg[TG_FMT_BUF];
    char lo[TG_FMT_BUF], hi[TG_FMT_BUF];
    tg_fmt_num(base, sizeof base, b->value, unit);
    tg_fmt_num(cur, sizeof cur, b->current, unit);
    tg_fmt_change(chg, sizeof chg, b->change);
    fprintf(c->out, INDENT "baseline: %s \xe2\x86\x92 %s (%s)", base, cur, chg);
    if (isnan(b->p_value)) fputs(", p n/a", c->out);
    else fprintf(c->out, ", p=%.2g", b->p_value);
    fprintf(c->out, ", n=%zu baseline / %zu now", b->n_baseline, b->n_current);
    if (!isnan(b->band_lo) && !isnan(b->band_hi)) {
        fprintf(c->out, ", band %s..%s%s%s", tg_fmt_num(lo, sizeof lo, b->band_lo, unit),
                tg_fmt_num(hi, sizeof hi, b->band_hi, unit), b->outside_band ? " (outside)" : "",
                b->band_measured ? "" : " assumed");
    }
    if (b->regression) fprintf(c->out, "  %sregression%s", paint(c, "\033[1;31m"), paint(c, "\033[0m"));
    else if (b->improvement) fprintf(c->out, "  %simprovement%s", paint(c, "\033[32m"), paint(c, "\033[0m"));
    else if (b->inconclusive) fprintf(c->out, "  %sinconclusive%s", paint(c, "\033[1;33m"), paint(c, "\033[0m"));
    fputc('\n', c->out);
}

static void put_baseline(const text_ctx *c, const tg_rule_result *r)
{
    const tg_baseline_cmp *b = &r->baseline;
    put_baseline_line(c, r);
    char workload[160];
    if (tg_report_workload_sentence(b, workload, sizeof workload))
        fprintf(c->out, INDENT "workload: %s\n", workload);
    put_contributors(c, b);
}

/* The query that reproduces a finding's numbers (or its cause's): whole
** with --reproduce; else one line: the file -o sql=DIR wrote it to, or how
** to get it (docs/formats.md, "text"). */
static void put_reproduce(const text_ctx *c, const char *indent, const tg_rule_result *r, bool cause)
{
    const char *q = cause ? r->cause->reproduce : r->reproduce;
    if (!q) return;
    FILE *out = c->out;
    fprintf(out, "%sreproduce: ", indent);
    if (c->opts->reproduce_inline) {
        put_text(out, q, TG_TEXT_CAP_LONG);
        fputc('\n', out);
        return;
    }
    char name[512];
    if (c->opts->sql_dir && tg_report_reproduce_name(c->run, c->trace, (size_t)(r - c->run->traces[c->trace].results),
                                                     cause, name, sizeof name)) {
        put_text(out, c->opts->sql_dir, TG_TEXT_CAP_TEXT);
        fputs(c->opts->sql_dir[0] && c->opts->sql_dir[strlen(c->opts->sql_dir) - 1] == '/' ? "" : "/", out);
        put_text(out, name, TG_TEXT_CAP_NAME);
        fputc('\n', out);
        return;
    }
    char size[TG_FMT_BUF];
    fprintf(out, "%s of %s: --reproduce prints it, -o sql=DIR saves it\n",
            tg_fmt_num(size, sizeof size, (double)strlen(q), TG_UNIT_BYTES),
            tg_query_lang_what[tg_report_format(&c->run->traces[c->trace])->query]);
}

/* Item lines of a cause: at most this many per window or list. */
#define CAUSE_LINES 4

static void put_cause_item(FILE *out, tg_cause_kind kind, const tg_cause_item *it)
{
    fputs(INDENT "  ", out);
    tg_report_cause_item(out, kind, it, put_name);
    fputc('\n', out);
}

/* What the finding says about its cause (docs/host.md). */
static void put_cause(const text_ctx *c, const tg_rule_result *r)
{
    FILE *out = c->out;
    const tg_cause *x = r->cause;
    fputs(INDENT "cause: ", out);
    put_text(out, x->summary, TG_TEXT_CAP_TEXT);
    fputc('\n', out);
    for (size_t w = 0; w < x->n_windows; w++) {
        const tg_cause_window *win = &x->windows[w];
        fputs(INDENT "  ", out);
        tg_report_cause_window(out, win, c->origin);
        fputc('\n', out);
        for (size_t i = 0; i < win->n_items && i < CAUSE_LINES; i++) put_cause_item(out, x->kind, &win->items[i]);
    }
    for (size_t i = 0; i < x->n_items && i < CAUSE_LINES; i++) put_cause_item(out, x->kind, &x->items[i]);
    for (size_t i = 0; i < x->n_unknown; i++) {
        fputs(INDENT "  unknown: ", out);
        put_text(out, x->unknown[i], TG_TEXT_CAP_TEXT);
        fputc('\n', out);
    }
    put_reproduce(c, INDENT "  ", r, true);
}

/* The verdict column: as wide as the longest label the run shows
** (INCONCLUSIVE, SUPPRESSED), at least 5, so the columns after it stay in
** line. */
static int verdict_width(const tg_run_result *run)
{
    int w = 5;
    for (size_t t = 0; t < run->n_traces; t++)
        for (size_t i = 0; i < run->traces[t].n_results; i++) {
            const tg_rule_result *r = &run->traces[t].results[i];
            int n = (int)strlen(r->suppressed ? "SUPPRESSED" : tg_verdict_upper(r->verdict));
            if (n > w) w = n;
        }
    return w;
}

static void put_result(const text_ctx *c, const tg_rule_result *r)
{
    FILE *out = c->out;
    const char *msg = r->message && *r->message ? r->message : r->title;
    const char *label = r->suppressed ? "SUPPRESSED" : tg_verdict_upper(r->verdict);
    fprintf(out, "  %s%-*s%s %-8s ", paint(c, r->suppressed ? "\033[36m" : verdict_color(r->verdict)), c->verdict_width, label,
            paint(c, "\033[0m"), tg_severity_name(r->severity));
    put_padded(out, r->rule ? r->rule : "?", c->id_width);
    fputc(' ', out);
    put_text(out, msg, TG_TEXT_CAP_TEXT);
    if (r->missing_data) fputs(" (missing data)", out);
    fputc('\n', out);
    if (r->untimed) {
        /* a verdict on part of the GPU work says so whatever it is */
        fputs(INDENT "untimed: ", out);
        put_text(out, r->untimed, TG_TEXT_CAP_TEXT);
        fputc('\n', out);
    }
    if (r->suppressed) {
        /* accepted, never dropped: the reason, then (unless --quiet) the details */
        fputs(INDENT "suppressed: ", out);
        put_text(out, r->suppressed, TG_TEXT_CAP_TEXT);
        fputs(" (", out);
        put_text(out, r->suppressed_at ? r->suppressed_at : "?", TG_TEXT_CAP_TEXT);
        fputs(")\n", out);
        if (c->opts->quiet) return;
    }
    bool detail = r->verdict == TG_V_FAIL || r->verdict == TG_V_INCONCLUSIVE;
    if (c->opts->quiet) {
        /* one screen: the headline, and for a regression its comparison */
        if (detail && r->baseline.present) put_baseline_line(c, r);
        return;
    }
    if (detail && r->n_values) {
        fputs(INDENT "values: ", out);
        put_named(out, r->values, r->n_values);
        fputc('\n', out);
    }
    if (r->baseline.present && (detail || !c->opts->quiet)) put_baseline(c, r);
    if (!detail) return;
    if (r->n_evidence) {
        fprintf(out, INDENT "evidence (%zu row%s):\n", r->n_evidence, r->n_evidence == 1 ? "" : "s");
        for (size_t i = 0; i < r->n_evidence; i++) put_evidence(c, &r->evidence[i]);
    }
    put_reproduce(c, INDENT, r, false);
    if (r->cause) put_cause(c, r);
    if (r->advice) {
        fputs(INDENT "advice: ", out);
        put_text(out, r->advice, TG_TEXT_CAP_TEXT);
        fputc('\n', out);
    }
}

static bool shown(const text_ctx *c, const tg_rule_result *r)
{
    return !c->opts->quiet || r->verdict == TG_V_FAIL || r->verdict == TG_V_ERROR ||
           r->verdict == TG_V_INCONCLUSIVE;
}

/* "  rank 1  pid 1732  device 1  period p50 18.9 ms  GPU p50 18.3 ms  idle 3%":
** one line per rank a trace holds (docs/iterations.md, "Ranks within one
** export"; the queries are in the JSON). */
static void put_ranks(FILE *out, const tg_trace_result *t)
{
    for (size_t i = 0; i < t->n_ranks; i++) {
        const tg_rank_result *r = &t->ranks[i];
        char per[TG_FMT_BUF], gpu[TG_FMT_BUF], idle[TG_FMT_BUF];
        tg_fmt_num(per, sizeof per, r->period, TG_UNIT_NS);
        tg_fmt_num(gpu, sizeof gpu, r->gpu_time, TG_UNIT_NS);
        tg_fmt_num(idle, sizeof idle, r->idle_frac, TG_UNIT_RATIO);
        fprintf(out, "  rank %lld  pid %d  device %d  %lld steady iterations  period p50 %s  GPU p50 %s  idle %s\n",
                (long long)r->rank, (int)r->pid, (int)r->device, (long long)r->steady_iterations, per, gpu, idle);
    }
}

static void put_trace(const text_ctx *c, const tg_trace_result *t)
{
    FILE *out = c->out;
    size_t n_shown = 0;
    for (size_t i = 0; i < t->n_results; i++) n_shown += shown(c, &t->results[i]);
    if (c->opts->quiet && t->status == TG_OK && n_shown == 0) return;
    fprintf(out, "%s", paint(c, "\033[1m"));
    put_text(out, t->file ? t->file : "?", TG_TEXT_CAP_TEXT);
    fprintf(out, "%s", paint(c, "\033[0m"));
    if (t->status == TG_OK) {
        fputs("  (", out);
        tg_report_trace_kind(out, t, put_name);
        if (t->gpu_names) {
            fputs(", ", out);
            put_text(out, t->gpu_names, TG_TEXT_CAP_TEXT);
        }
        if (t->iteration_marker) {
            fputs(", iterations: ", out);
            put_text(out, t->iteration_marker, TG_TEXT_CAP_TEXT);
        }
        if (c->origin != TG_NULL_I64) fprintf(out, "; times in s from its first record, %lld ns", (long long)c->origin);
        fputc(')', out);
    }
    fputc('\n', out);
    if (t->status != TG_OK) {
        fprintf(out, "  %sERROR%s unreadable: ", paint(c, verdict_color(TG_V_ERROR)), paint(c, "\033[0m"));
        put_text(out, t->error ? t->error : "the trace could not be read", TG_TEXT_CAP_TEXT);
        fputc('\n', out);
    }
    if (t->status == TG_OK && !c->opts->quiet) put_ranks(out, t);
    for (size_t i = 0; i < t->n_results; i++)
        if (shown(c, &t->results[i])) put_result(c, &t->results[i]);
}

TG_REPORT_WRITER(tg_report_text)
{
    (void)rs;   /* lists no rules */
    text_ctx c = {.opts = opts, .out = out, .run = run, .verdict_width = verdict_width(run)};
    for (size_t t = 0; t < run->n_traces; t++)
        for (size_t i = 0; i < run->traces[t].n_results; i++) {
            const char *id = run->traces[t].results[i].rule;
            int len = id ? (int)strlen(id) : 1;
            if (len > c.id_width) c.id_width = len < 40 ? len : 40;
        }
    for (size_t t = 0; t < run->n_traces; t++) {
        c.trace = t;
        c.origin = tg_report_origin(&run->traces[t]);
        put_trace(&c, &run->traces[t]);
        if (!opts->quiet) fputc('\n', out);
    }
    /* suppressions that did not simply apply: unused, expired, exceeded */
    for (size_t i = 0; i < run->n_suppressions; i++) {
        char sentence[512];
        if (!tg_suppression_sentence(&run->suppressions[i], sentence, sizeof sentence)[0]) continue;
        fputs("suppression ", out);
        put_text(out, run->suppressions[i].file, TG_TEXT_CAP_TEXT);
        fprintf(out, ":%d: ", run->suppressions[i].line);
        put_text(out, sentence, TG_TEXT_CAP_TEXT);
        fputc('\n', out);
    }
    for (size_t i = 0; i < opts->n_notes; i++) {   /* about the whole run (merge) */
        fputs("note: ", out);
        put_text(out, opts->notes[i], TG_TEXT_CAP_TEXT);
        fputc('\n', out);
    }
    char line[512];
    tg_report_verdict_line(run, opts, line, sizeof line);
    tg_verdict v = tg_run_state_verdict(tg_report_run_state(run, opts));
    fprintf(out, "tracegate: %s%s%s\n", paint(&c, verdict_color(v)), line, paint(&c, "\033[0m"));
    return ferror(out) ? TG_EINTERNAL : TG_OK;
}
