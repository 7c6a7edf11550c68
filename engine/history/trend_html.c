/*
** history report (docs/history.md): the history as one self-contained
** page -- no script, no network, no outside font, style sheet or image;
** the check report's style sheet and inline SVG charts (engine/report,
** html_int.h) -- that a person opens from a CI artifact.
**
** At the top what needs a decision: the change points, regressions not
** accepted first, and the workloads. Then per workload and regression
** metric a chart of the value of every run in history order, over the
** band the baseline of that run allowed, runs that failed the rule in
** red, a vertical line at the first run after each change point, and
** beside it each change point explained: the medians before and after,
** the relative change, p, whether it is a regression, what changed in the
** work between the two segments (as `check` names it), and, once
** accepted, who said why and when. Every chart is a figure with a title,
** a description in words, a caption and its latest numbers as a table.
**
** Bounded: up to POINTS_MAX runs a chart draws one circle per run with
** its tooltip; past that the line, the dots and the band are one path
** each and the tooltips cover HITS_MAX slices of runs, so that 1,000 runs
** of 20 metrics make a page of a few MB (tests/unit/history/
** test_trend_html.c measures it). Deterministic: the same view gives the
** same bytes. Well-formed XML as well as HTML (every element closed, no
** named entity but XML's), so tests can check it with an XML parser.
** Every string from the history goes through tg_html_text (escaped).
*/
#include "history.h"
#include "../common/text.h"
#include "../common/units.h"
#include "../report/html_int.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define W TG_HTML_W
#define ML TG_HTML_ML
#define MR TG_HTML_MR
#define MT TG_HTML_MT
#define PLOT_H 180.0        /* the plot; below it the run labels, slanted */
#define MB 86.0
#define POINTS_MAX 150      /* runs drawn one element each, with a tooltip */
#define HITS_MAX 150        /* above that: tooltips over slices of runs */
#define X_LABELS 10         /* run labels under a chart, besides the change points' */
#define LABEL_GAP 13.0      /* px between two run labels at least */
#define LABEL_BYTES 14      /* of a label under a chart; its tooltip has it whole */
#define TABLE_RUNS 40       /* the latest runs of a series in its table */
#define DESC_CHANGES 5      /* change points a chart's description names */
#define SUMMARY_CHANGES 200 /* rows of the summary's table of change points */

/* What the trend page adds to the check report's style (tg_html_style). */
static const char trend_style[] =
    "svg .dots{fill:none;stroke:#0550ae;stroke-width:4;stroke-linecap:round}"
    "svg .dots.fail{stroke:var(--fail);stroke-width:7}svg .dots.dense{stroke-width:2}svg .dots.fail.dense"
    "{stroke-width:4}svg .pt.fail{fill:var(--fail);stroke:#fff}\n"
    "svg .hit{fill:transparent}svg .hit:hover{fill:rgba(9,105,218,.08)}svg .xl{font-size:10px}"
    "svg .xl.cp{font-weight:700}\n"
    "svg .cpl{stroke-width:2}svg .cpl.regression{stroke:var(--fail)}svg .cpl.improvement{stroke:var(--pass)}"
    "svg .cpl.change{stroke:var(--warn)}svg .cpl.accepted{stroke:var(--sup);stroke-dasharray:5 3}\n"
    "svg .cpt{font-weight:700}svg a:focus-visible text{outline:3px solid #0969da}\n"
    "article.change{border:1px solid var(--line);border-left:6px solid var(--warn);border-radius:4px;"
    "padding:8px 12px;margin:8px 0;break-inside:avoid}article.change.regression{border-left-color:var(--fail)}"
    "article.change.improvement{border-left-color:var(--pass)}article.change.accepted{border-left-color:var(--sup)}"
    "article.change:target{background:#fff8c5}\n";

/* ------------------------------------------------------------ the data */


/* Did run i fail the series' rule? ("fail": TG_HIST_VERDICT_LIST) */
static bool failed(const tg_hist_series *s, size_t i)
{
    const tg_hist_metric *m = tg_history_series_metric(s, i);
    return m && m->verdict && !strcmp(m->verdict, "fail");
}

static double band_lo(const tg_hist_series *s, size_t i) { return s->band_lo ? s->band_lo[i] : NAN; }
static double band_hi(const tg_hist_series *s, size_t i) { return s->band_hi ? s->band_hi[i] : NAN; }

static bool has_band(const tg_hist_series *s, size_t i)
{
    return isfinite(band_lo(s, i)) && isfinite(band_hi(s, i));
}


static bool same_accept(const tg_hist_accept *a, const tg_hist_accept *b)
{
    return a == b || (a && b && tg_same_str(a->workload, b->workload) && tg_same_str(a->label, b->label));
}


/* A p-value as the check report prints one. */
static const char *fmt_p(char *buf, size_t size, double p)
{
    if (isnan(p)) snprintf(buf, size, "n/a");
    else snprintf(buf, size, "%.2g", p);
    return buf;
}

static const char *kind_of(const tg_hist_change *c)
{
    return c->regression ? "regression" : c->improvement ? "improvement" : "change";
}

/* The badge of a change point: its kind, or accepted. */
static void put_change_badge(html *h, const tg_hist_change *c)
{
    static const char *const cls[] = {"fail", "pass", "warn"}, *const word[] = {"REGRESSION", "IMPROVEMENT", "CHANGE"};
    int k = c->regression ? 0 : c->improvement ? 1 : 2;
    fprintf(h->out, "<span class=\"badge %s\">%s</span>", cls[k], word[k]);
    if (c->accepted) fputs(" <span class=\"badge suppressed\">ACCEPTED</span>", h->out);
}

/* A label cut to LABEL_BYTES at a character boundary, for under a chart. */
static void put_short(html *h, const char *s)
{
    if (!s) s = "?";
    size_t len = strlen(s);
    if (len <= LABEL_BYTES) {
        tg_html_text(h, s, TG_TEXT_CAP_NAME);
        return;
    }
    size_t cut = LABEL_BYTES;
    while (cut > 0 && ((unsigned char)s[cut] & 0xC0) == 0x80) cut--;
    char buf[LABEL_BYTES + 1];
    memcpy(buf, s, cut);
    buf[cut] = '\0';
    tg_html_text(h, buf, TG_TEXT_CAP_NAME);
    fputs("&#8230;", h->out);
}

/* A cell of a table: escaped text; a name as code. */
static void td(html *h, const char *s, bool code)
{
    fputs(code ? "<td><code>" : "<td>", h->out);
    tg_html_text(h, s, code ? TG_TEXT_CAP_NAME : TG_TEXT_CAP_TEXT);
    fputs(code ? "</code></td>" : "</td>", h->out);
}

/* "LABEL (TIME, branch B)" */
static void put_run(html *h, const tg_hist_run *r)
{
    tg_html_text(h, r->label ? r->label : "?", TG_TEXT_CAP_NAME);
    if (!r->time && !r->branch) return;
    fputs(" (", h->out);
    tg_html_text(h, r->time, TG_TEXT_CAP_NAME);
    if (r->branch) {
        fputs(r->time ? ", branch " : "branch ", h->out);
        tg_html_text(h, r->branch, TG_TEXT_CAP_NAME);
    }
    fputc(')', h->out);
}

/* ----------------------------------------------------------- the chart */

typedef struct plot {
    html *h;
    const tg_hist_series *s;
    size_t id;          /* the series' number from 1: ids s1, s1-c1 */
    double lo, hi;      /* the value axis */
    double dx;          /* the width of one run's column */
} plot;

static double px(const plot *p, size_t i) { return ML + p->dx * ((double)i + 0.5); }
static double py(const plot *p, double v) { return MT + PLOT_H * (1 - (v - p->lo) / (p->hi - p->lo)); }

/* The value axis: every value and band of the series, with a margin,
** from 0 when the values come near it; false when no run has a value. */
static bool axis_of(plot *p)
{
    const tg_hist_series *s = p->s;
    double lo = INFINITY, hi = -INFINITY;
    for (size_t i = 0; i < s->n; i++) {
        double v[3] = {s->values[i], band_lo(s, i), band_hi(s, i)};
        for (size_t k = 0; k < 3; k++)
            if (isfinite(v[k])) lo = fmin(lo, v[k]), hi = fmax(hi, v[k]);
    }
    if (!isfinite(lo)) return false;
    bool negative = lo < 0;
    double span = hi - lo;
    if (!(span > 0)) span = lo != 0 ? fabs(lo) * 0.1 : 1;
    lo -= span * 0.08;
    hi += span * 0.08;
    if ((lo < 0 && !negative) || (lo > 0 && lo < hi - lo)) lo = 0;
    double step = tg_html_nice_step(hi - lo, 4);
    p->lo = floor(lo / step) * step;
    p->hi = ceil(hi / step) * step;
    if (!(p->hi > p->lo)) p->hi = p->lo + step;
    p->dx = (W - ML - MR) / (double)s->n;
    return true;
}

/* Would the edge of the band move as drawn (to a tenth of a unit)? */
static bool moved(const plot *p, double from, double to)
{
    return fabs(py(p, from) - py(p, to)) >= 0.05;
}

/* The band each run was judged against, one column per run: one path of
** a closed shape per stretch of runs with a band. */
static void band_path(const plot *p)
{
    const tg_hist_series *s = p->s;
    FILE *out = p->h->out;
    bool any = false;
    for (size_t i = 0; i < s->n && !any; i++) any = has_band(s, i);
    if (!any) return;
    fputs("<path class=\"band\" d=\"", out);
    for (size_t i = 0; i < s->n;) {
        if (!has_band(s, i)) {
            i++;
            continue;
        }
        size_t j = i;
        while (j + 1 < s->n && has_band(s, j + 1)) j++;
        fprintf(out, "M%.1f,%.1f", ML + p->dx * (double)i, py(p, band_hi(s, i)));
        for (size_t k = i; k <= j; k++) {   /* the top, left to right */
            fprintf(out, "H%.1f", ML + p->dx * (double)(k + 1));
            if (k < j && moved(p, band_hi(s, k), band_hi(s, k + 1))) fprintf(out, "V%.1f", py(p, band_hi(s, k + 1)));
        }
        fprintf(out, "V%.1f", py(p, band_lo(s, j)));
        for (size_t k = j + 1; k-- > i;) {  /* the bottom, right to left */
            fprintf(out, "H%.1f", ML + p->dx * (double)k);
            if (k > i && moved(p, band_lo(s, k), band_lo(s, k - 1))) fprintf(out, "V%.1f", py(p, band_lo(s, k - 1)));
        }
        fputc('Z', out);
        i = j + 1;
    }
    fputs("\"><title>the baseline band each run was judged against</title></path>\n", out);
}

/* The values joined, a new stroke after a run without one. */
static void value_line(const plot *p)
{
    const tg_hist_series *s = p->s;
    fputs("<path class=\"series\" d=\"", p->h->out);
    bool pen = false;
    for (size_t i = 0; i < s->n; i++) {
        if (!isfinite(s->values[i])) {
            pen = false;
            continue;
        }
        fprintf(p->h->out, "%s%.1f,%.1f", pen ? " " : "M", px(p, i), py(p, s->values[i]));
        pen = true;
    }
    fputs("\"/>\n", p->h->out);
}

/* What a run's tooltip says: label, time, branch, value, verdict, band. */
static void run_tip(const plot *p, size_t i)
{
    const tg_hist_series *s = p->s;
    const tg_hist_metric *m = tg_history_series_metric(s, i);
    char v[TG_FMT_BUF], lo[TG_FMT_BUF], hi[TG_FMT_BUF];
    fprintf(p->h->out, "<title>run %zu: ", i + 1);
    put_run(p->h, s->runs[i]);
    fprintf(p->h->out, ": %s", tg_fmt_num(v, sizeof v, s->values[i], s->unit));
    if (m && m->verdict) {
        fputs(", ", p->h->out);
        tg_html_text(p->h, m->verdict, TG_TEXT_CAP_NAME);
    }
    if (has_band(s, i))
        fprintf(p->h->out, "; band %s to %s", tg_fmt_num(lo, sizeof lo, band_lo(s, i), s->unit),
                tg_fmt_num(hi, sizeof hi, band_hi(s, i), s->unit));
    fputs("</title>", p->h->out);
}

/* Few runs: a circle each, with its tooltip. */
static void points(const plot *p)
{
    const tg_hist_series *s = p->s;
    for (size_t i = 0; i < s->n; i++) {
        if (!isfinite(s->values[i])) continue;
        bool f = failed(s, i);
        fprintf(p->h->out, "<circle class=\"pt%s\" cx=\"%.1f\" cy=\"%.1f\" r=\"%s\">", f ? " fail" : "", px(p, i),
                py(p, s->values[i]), f ? "4.5" : "3");
        run_tip(p, i);
        fputs("</circle>\n", p->h->out);
    }
}

/* Many runs: the dots as two paths (passed, failed) of zero-length
** strokes with round caps, and the tooltips over slices of runs. */
static void dots(const plot *p)
{
    const tg_hist_series *s = p->s;
    FILE *out = p->h->out;
    for (int fail = 0; fail < 2; fail++) {
        bool any = false;
        for (size_t i = 0; i < s->n; i++) {
            if (!isfinite(s->values[i]) || failed(s, i) != (bool)fail) continue;
            if (!any) fprintf(out, "<path class=\"dots%s%s\" d=\"", fail ? " fail" : "", p->dx < 2.5 ? " dense" : "");
            fprintf(out, "M%.1f,%.1fh0", px(p, i), py(p, s->values[i]));
            any = true;
        }
        if (any) fputs("\"/>\n", out);
    }
    size_t per = (s->n + HITS_MAX - 1) / HITS_MAX;
    char lo[TG_FMT_BUF], hi[TG_FMT_BUF];
    for (size_t a = 0; a < s->n; a += per) {
        size_t b = a + per < s->n ? a + per : s->n, n_fail = 0, n_val = 0;
        double vmin = INFINITY, vmax = -INFINITY;
        for (size_t i = a; i < b; i++) {
            n_fail += failed(s, i);
            if (!isfinite(s->values[i])) continue;
            n_val++;
            vmin = fmin(vmin, s->values[i]);
            vmax = fmax(vmax, s->values[i]);
        }
        fprintf(out, "<rect class=\"hit\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\"><title>runs %zu to %zu of "
                     "%zu: ", ML + p->dx * (double)a, MT, p->dx * (double)(b - a), PLOT_H, a + 1, b, s->n);
        put_run(p->h, s->runs[a]);
        fputs(" to ", out);
        put_run(p->h, s->runs[b - 1]);
        if (n_val) fprintf(out, "; %s to %s", tg_fmt_num(lo, sizeof lo, vmin, s->unit), tg_fmt_num(hi, sizeof hi, vmax, s->unit));
        else fputs("; no value", out);
        if (n_fail) fprintf(out, "; %zu failed", n_fail);
        fputs("</title></rect>\n", out);
    }
}

/* A vertical line at run i linking to what explains it: marker_open, the
** tooltip's text, then marker_close. */
static void marker_open(const plot *p, const char *href)
{
    fprintf(p->h->out, "<a href=\"#%s\"><title>", href);
}

static void marker_close(const plot *p, size_t i, const char *cls, const char *top)
{
    FILE *out = p->h->out;
    double x = px(p, i);
    fprintf(out, "</title><line class=\"cpl %s\" x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\"/>", cls, x, x, MT,
            MT + PLOT_H);
    if (top)
        fprintf(out, "<text class=\"cpt\" x=\"%.1f\" y=\"%.1f\"%s>%s</text>", x + (x > W / 2 ? -3 : 3), MT + 10,
                x > W / 2 ? " text-anchor=\"end\"" : "", top);
    fputs("</a>\n", out);
}

static void change_markers(const plot *p, const tg_hist_view *v)
{
    const tg_hist_series *s = p->s;
    FILE *out = p->h->out;
    char id[48], chg[TG_FMT_BUF], b[TG_FMT_BUF], a[TG_FMT_BUF];
    for (size_t c = 0; c < s->n_changes; c++) {
        const tg_hist_change *x = &s->changes[c];
        if (x->index >= s->n) continue;
        snprintf(id, sizeof id, "s%zu-c%zu", p->id, c + 1);
        tg_fmt_change(chg, sizeof chg, x->change);
        marker_open(p, id);
        fprintf(out, "change point at run %zu, ", x->index + 1);
        tg_html_text(p->h, x->label, TG_TEXT_CAP_NAME);
        fprintf(out, ": %s to %s (%s), %s%s; the link leads to its explanation", tg_fmt_num(b, sizeof b, x->before, s->unit),
                tg_fmt_num(a, sizeof a, x->after, s->unit), chg, kind_of(x), x->accepted ? ", accepted" : "");
        marker_close(p, x->index, x->accepted ? "accepted" : kind_of(x), chg);
    }
    /* an accepted run of this workload where no change point was found */
    for (size_t k = 0; k < v->n_accepts; k++) {
        const tg_hist_accept *acc = &v->accepts[k];
        if (!tg_same_str(acc->workload, s->workload)) continue;
        bool shown = false;
        for (size_t c = 0; c < s->n_changes && !shown; c++) shown = same_accept(s->changes[c].accepted, acc);
        for (size_t i = 0; i < s->n && !shown; i++) {
            const tg_hist_run *r = s->runs[i];
            if (!(acc->run_id ? r->id == acc->run_id : tg_same_str(r->label, acc->label))) continue;
            snprintf(id, sizeof id, "a%zu", k + 1);
            marker_open(p, id);
            fprintf(out, "accepted as the new normal at run %zu, ", i + 1);
            tg_html_text(p->h, acc->label, TG_TEXT_CAP_NAME);
            fputs(": ", out);
            tg_html_text(p->h, acc->reason, TG_TEXT_CAP_TEXT);
            marker_close(p, i, "accepted", NULL);
            shown = true;
        }
    }
}

/* Is run i the first after a change point? */
static bool changes_at(const tg_hist_series *s, size_t i)
{
    for (size_t c = 0; c < s->n_changes; c++)
        if (s->changes[c].index == i) return true;
    return false;
}

/* The run labels under the plot: every change point's (LABEL_GAP apart),
** then the first, the last and about X_LABELS evenly between where they
** do not crowd one already placed. */
static void run_labels(const plot *p)
{
    const tg_hist_series *s = p->s;
    unsigned char *mark = calloc(s->n, 1);   /* 1: placed; 2: a change point's */
    if (!mark) return;
    size_t reach = (size_t)ceil(LABEL_GAP / p->dx);   /* runs a label keeps others away */
    double last = -INFINITY;
    for (size_t i = 0; i < s->n; i++)
        if (changes_at(s, i) && px(p, i) - last >= LABEL_GAP) {
            mark[i] = 2;
            last = px(p, i);
        }
    size_t every = s->n > X_LABELS ? (s->n + X_LABELS - 1) / X_LABELS : 1;
    for (size_t i = 0; i < s->n; i++) {
        if (i % every && i != s->n - 1) continue;
        bool crowded = false;
        for (size_t k = i >= reach ? i - reach + 1 : 0; k < s->n && k < i + reach && !crowded; k++) crowded = mark[k] != 0;
        if (!crowded) mark[i] = 1;
    }
    FILE *out = p->h->out;
    double y = MT + PLOT_H + 12;
    for (size_t i = 0; i < s->n; i++) {
        if (!mark[i]) continue;
        double x = px(p, i);
        fprintf(out, "<text class=\"xl%s\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\" transform=\"rotate(-45 %.1f %.1f)\">",
                mark[i] == 2 ? " cp" : "", x, y, x, y);
        put_short(p->h, s->runs[i]->label);
        fputs("<title>", out);
        put_run(p->h, s->runs[i]);
        fputs("</title></text>\n", out);
    }
    free(mark);
}

/* The description of a chart in words. */
static void chart_desc(const plot *p, const char *id)
{
    const tg_hist_series *s = p->s;
    FILE *out = p->h->out;
    size_t n_fail = 0, n_band = 0, last = s->n;
    for (size_t i = 0; i < s->n; i++) {
        n_fail += failed(s, i);
        n_band += has_band(s, i);
        if (isfinite(s->values[i])) last = i;
    }
    char v[TG_FMT_BUF], b[TG_FMT_BUF], a[TG_FMT_BUF], chg[TG_FMT_BUF];
    fprintf(out, "<desc id=\"%s-desc\">%zu run%s from ", id, s->n, s->n == 1 ? "" : "s");
    put_run(p->h, s->runs[0]);
    fputs(" to ", out);
    put_run(p->h, s->runs[s->n - 1]);
    if (last < s->n) {
        fprintf(out, "; the latest value %s, at ", tg_fmt_num(v, sizeof v, s->values[last], s->unit));
        tg_html_text(p->h, s->runs[last]->label, TG_TEXT_CAP_NAME);
    }
    fprintf(out, "; %zu run%s failed the rule; %zu run%s judged against a band; %zu change point%s", n_fail,
            n_fail == 1 ? "" : "s", n_band, n_band == 1 ? " was" : "s were", s->n_changes, s->n_changes == 1 ? "" : "s");
    for (size_t c = 0; c < s->n_changes && c < DESC_CHANGES; c++) {
        const tg_hist_change *x = &s->changes[c];
        fputs(c ? "; at " : ": at ", out);
        tg_html_text(p->h, x->label, TG_TEXT_CAP_NAME);
        fprintf(out, " %s to %s (%s), %s%s", tg_fmt_num(b, sizeof b, x->before, s->unit),
                tg_fmt_num(a, sizeof a, x->after, s->unit), tg_fmt_change(chg, sizeof chg, x->change), kind_of(x),
                x->accepted ? ", accepted" : "");
    }
    if (s->n_changes > DESC_CHANGES) fprintf(out, "; and %zu more", s->n_changes - DESC_CHANGES);
    fputs(".</desc>\n", out);
}

static void chart(html *h, const tg_hist_view *v, const tg_hist_series *s, size_t id_n)
{
    plot p = {h, s, id_n, 0, 0, 0};
    FILE *out = h->out;
    char id[32];
    snprintf(id, sizeof id, "s%zu", id_n);
    if (!s->n || !axis_of(&p)) {
        fputs("<p class=\"meta\">No chart: no run has a value of this metric.</p>\n", out);
        return;
    }
    double total = MT + PLOT_H + MB;
    fprintf(out, "<svg role=\"img\" aria-labelledby=\"%s-title %s-desc\" viewBox=\"0 0 %.0f %.0f\" width=\"%.0f\" "
                 "height=\"%.0f\">\n<title id=\"%s-title\">",
            id, id, W, total, W, total, id);
    tg_html_text(h, s->rule, TG_TEXT_CAP_NAME);
    fputs(" over the history of ", out);
    tg_html_text(h, s->workload_name ? s->workload_name : s->workload, TG_TEXT_CAP_NAME);
    fputs("</title>\n", out);
    chart_desc(&p, id);
    band_path(&p);
    tg_html_y_axis(h, p.lo, p.hi, PLOT_H, s->unit);
    fprintf(out, "<line class=\"axis\" x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\"/>\n", ML, W - MR, MT + PLOT_H,
            MT + PLOT_H);
    value_line(&p);
    if (s->n <= POINTS_MAX) points(&p);
    else dots(&p);
    change_markers(&p, v);
    run_labels(&p);
    fputs("</svg>\n", out);
}

/* ------------------------------------------------- the explanations */

static void contributors(html *h, const tg_hist_change *c)
{
    const tg_baseline_cmp *b = &c->cmp;
    FILE *out = h->out;
    if (!b->n_contributors) {
        fputs("<p class=\"meta\">No contributor: the work of the runs on either side was not recorded, or did not "
              "change.</p>\n", out);
        return;
    }
    fputs("<table>\n<caption class=\"meta\">What changed per steady iteration, the runs before to the runs after "
          "(kernels and copies: GPU time; NVTX ranges: the time inside)</caption>\n<thead><tr><th scope=\"col\">name"
          "</th><th scope=\"col\">kind</th><th scope=\"col\">status</th><th scope=\"col\">before &#8594; after</th>"
          "<th scope=\"col\">change</th><th scope=\"col\">share</th></tr></thead>\n<tbody>\n", out);
    char then[TG_FMT_BUF], now[TG_FMT_BUF], d[TG_FMT_BUF], share[TG_FMT_BUF];
    for (size_t k = 0; k < b->n_contributors; k++) {
        const tg_contributor *x = &b->contributors[k];
        fputs("<tr>", out);
        td(h, x->name, true);
        fprintf(out, "<td>%s</td><td>%s</td><td class=\"num\">%s &#8594; %s</td><td class=\"num\">%s%s</td>"
                     "<td class=\"num\">%s</td></tr>\n",
                tg_work_kind_name(x->kind), tg_contrib_status_name(x->status),
                tg_fmt_num(then, sizeof then, x->then_time, TG_UNIT_NS), tg_fmt_num(now, sizeof now, x->now_time, TG_UNIT_NS),
                x->delta >= 0 ? "+" : "-", tg_fmt_num(d, sizeof d, fabs(x->delta), TG_UNIT_NS),
                isnan(x->share) ? "n/a" : tg_fmt_num(share, sizeof share, x->share, TG_UNIT_RATIO));
    }
    fputs("</tbody>\n</table>\n", out);
}

static void put_accepted(html *h, const tg_hist_accept *a)
{
    fputs("<p><strong>Accepted</strong> as the new normal", h->out);
    if (a->time) {
        fputs(" at ", h->out);
        tg_html_text(h, a->time, TG_TEXT_CAP_NAME);
    }
    fputs(": ", h->out);
    tg_html_text(h, a->reason && *a->reason ? a->reason : "no reason given", TG_TEXT_CAP_TEXT);
    fputs("</p>\n", h->out);
}

static void explain(html *h, const tg_hist_series *s, size_t id_n, size_t c)
{
    const tg_hist_change *x = &s->changes[c];
    FILE *out = h->out;
    char id[48], b[TG_FMT_BUF], a[TG_FMT_BUF], chg[TG_FMT_BUF];
    snprintf(id, sizeof id, "s%zu-c%zu", id_n, c + 1);
    fprintf(out, "<article class=\"change %s\" id=\"%s\" aria-labelledby=\"%s-h\">\n<h4 id=\"%s-h\">",
            x->accepted ? "accepted" : kind_of(x), id, id, id);
    put_change_badge(h, x);
    fputs(" at <code>", out);
    tg_html_text(h, x->label, TG_TEXT_CAP_NAME);
    fputs("</code></h4>\n<p class=\"meta\">", out);
    if (x->index < s->n) {
        fprintf(out, "The first run after the change: run %zu of %zu, ", x->index + 1, s->n);
        put_run(h, s->runs[x->index]);
    }
    char pv[TG_FMT_BUF];
    fprintf(out, "</p>\n<p>Median %s &#8594; %s (%s), p = %s: %s.</p>\n", tg_fmt_num(b, sizeof b, x->before, s->unit),
            tg_fmt_num(a, sizeof a, x->after, s->unit), tg_fmt_change(chg, sizeof chg, x->change), fmt_p(pv, sizeof pv, x->p),
            x->regression ? "a regression" : x->improvement ? "an improvement" : "a change (the rule has no direction)");
    const tg_baseline_cmp *w = &x->cmp;
    if (isfinite(w->busy_then) && isfinite(w->busy_now)) {
        fprintf(out, "<p>GPU busy per iteration %s &#8594; %s", tg_fmt_num(b, sizeof b, w->busy_then, TG_UNIT_NS),
                tg_fmt_num(a, sizeof a, w->busy_now, TG_UNIT_NS));
        double rest = (x->after - x->before) - (w->busy_now - w->busy_then);
        if (tg_history_series_wall_time(s) && s->unit == TG_UNIT_NS && isfinite(rest))
            fprintf(out, "; the rest of the change (%s%s) is time the GPU waited (host work, syncs, data loading)",
                    rest >= 0 ? "+" : "-", tg_fmt_num(chg, sizeof chg, fabs(rest), TG_UNIT_NS));
        fputs(".</p>\n", out);
    }
    contributors(h, x);
    if (x->accepted) put_accepted(h, x->accepted);
    fputs("</article>\n", out);
}

/* The latest runs of a series as a table. */
static void runs_table(html *h, const tg_hist_series *s)
{
    FILE *out = h->out;
    size_t from = s->n > TABLE_RUNS ? s->n - TABLE_RUNS : 0;
    fputs("<details><summary>", out);
    if (from) fprintf(out, "The latest %d of %zu runs as a table", TABLE_RUNS, s->n);
    else fputs("The runs as a table", out);
    fputs("</summary>\n<table>\n<thead><tr><th scope=\"col\">run</th><th scope=\"col\">label</th><th scope=\"col\">time"
          "</th><th scope=\"col\">branch</th><th scope=\"col\">value</th><th scope=\"col\">band</th>"
          "<th scope=\"col\">verdict</th></tr></thead>\n<tbody>\n", out);
    char v[TG_FMT_BUF], lo[TG_FMT_BUF], hi[TG_FMT_BUF];
    for (size_t i = from; i < s->n; i++) {
        const tg_hist_run *r = s->runs[i];
        const tg_hist_metric *m = tg_history_series_metric(s, i);
        fprintf(out, "<tr><td class=\"num\">%zu</td>", i + 1);
        td(h, r->label, true);
        td(h, r->time, false);
        td(h, r->branch, false);
        fprintf(out, "<td class=\"num\">%s</td><td class=\"num\">", tg_fmt_num(v, sizeof v, s->values[i], s->unit));
        if (has_band(s, i))
            fprintf(out, "%s &#8211; %s", tg_fmt_num(lo, sizeof lo, band_lo(s, i), s->unit),
                    tg_fmt_num(hi, sizeof hi, band_hi(s, i), s->unit));
        fputs("</td>", out);
        td(h, m && m->verdict ? m->verdict : "-", false);
        fputs("</tr>\n", out);
    }
    fputs("</tbody>\n</table>\n</details>\n", out);
}

static void series_figure(html *h, const tg_hist_view *v, const tg_hist_series *s, size_t id_n)
{
    FILE *out = h->out;
    fprintf(out, "<figure id=\"s%zu\">\n<h3>", id_n);
    tg_html_text(h, s->rule, TG_TEXT_CAP_NAME);
    fputs("</h3>\n", out);
    chart(h, v, s, id_n);
    fputs("<figcaption><code>", out);
    tg_html_text(h, s->metric, TG_TEXT_CAP_TEXT);
    fprintf(out, "</code> (%s) of each run in history order, labels under the chart (the time in the tooltip); the "
                 "shaded band is what the baseline of each run allowed (none before 3 usable runs); red points failed "
                 "the rule; a vertical line marks the first run after a change point: red a regression, green an "
                 "improvement, dashed blue accepted.</figcaption>\n",
            tg_baseline_direction_name(s->direction));
    for (size_t c = 0; c < s->n_changes; c++) explain(h, s, id_n, c);
    if (s->n) runs_table(h, s);
    fputs("</figure>\n", out);
}

/* ------------------------------------------------------- the summary */

/* The series [*j, end) of one workload. */
static size_t workload_end(const tg_hist_view *v, size_t j)
{
    size_t e = j + 1;
    while (e < v->n_series && tg_same_str(v->series[e].workload, v->series[j].workload)) e++;
    return e;
}

/* Its longest series: the runs of the workload. */
static const tg_hist_series *workload_runs(const tg_hist_view *v, size_t j, size_t end)
{
    const tg_hist_series *best = &v->series[j];
    for (size_t k = j + 1; k < end; k++)
        if (v->series[k].n > best->n) best = &v->series[k];
    return best;
}

typedef struct cp_ref {
    int rank;           /* 0 a regression not accepted, 1 another not accepted, 2 accepted */
    size_t series, change;
} cp_ref;

static int cmp_cp(const void *a, const void *b)
{
    const cp_ref *x = a, *y = b;
    if (x->rank != y->rank) return x->rank - y->rank;
    if (x->series != y->series) return x->series < y->series ? -1 : 1;
    return x->change < y->change ? -1 : x->change > y->change;
}

static int rank_of(const tg_hist_change *c)
{
    return c->accepted ? 2 : c->regression ? 0 : 1;
}

static void change_table(html *h, const tg_hist_view *v, size_t total)
{
    FILE *out = h->out;
    if (!total) {
        fputs("<p>No change point in the history.</p>\n", out);
        return;
    }
    cp_ref *refs = malloc(total * sizeof *refs);
    if (!refs) return;
    size_t n = 0;
    for (size_t j = 0; j < v->n_series; j++)
        for (size_t c = 0; c < v->series[j].n_changes; c++) refs[n++] = (cp_ref){rank_of(&v->series[j].changes[c]), j, c};
    qsort(refs, n, sizeof *refs, cmp_cp);
    fputs("<table>\n<caption class=\"meta\">Change points, regressions not accepted first; a row links to its "
          "explanation.</caption>\n<thead><tr><th scope=\"col\">status</th><th scope=\"col\">workload</th>"
          "<th scope=\"col\">rule</th><th scope=\"col\">first run after</th><th scope=\"col\">before &#8594; after</th>"
          "<th scope=\"col\">change</th><th scope=\"col\">p</th></tr></thead>\n<tbody>\n", out);
    char b[TG_FMT_BUF], a[TG_FMT_BUF], chg[TG_FMT_BUF], pv[TG_FMT_BUF];
    for (size_t k = 0; k < n && k < SUMMARY_CHANGES; k++) {
        const tg_hist_series *s = &v->series[refs[k].series];
        const tg_hist_change *x = &s->changes[refs[k].change];
        fputs("<tr><td>", out);
        put_change_badge(h, x);
        fputs("</td>", out);
        td(h, s->workload_name ? s->workload_name : s->workload, false);
        fprintf(out, "<td><a href=\"#s%zu-c%zu\"><code>", refs[k].series + 1, refs[k].change + 1);
        tg_html_text(h, s->rule, TG_TEXT_CAP_NAME);
        fputs("</code></a></td>", out);
        td(h, x->label, true);
        fprintf(out, "<td class=\"num\">%s &#8594; %s</td><td class=\"num\">%s</td><td class=\"num\">%s</td>"
                     "</tr>\n",
                tg_fmt_num(b, sizeof b, x->before, s->unit), tg_fmt_num(a, sizeof a, x->after, s->unit),
                tg_fmt_change(chg, sizeof chg, x->change), fmt_p(pv, sizeof pv, x->p));
    }
    fputs("</tbody>\n</table>\n", out);
    if (n > SUMMARY_CHANGES)
        fprintf(out, "<p class=\"meta\">The first %d of %zu change points; every one is explained under its chart.</p>\n",
                SUMMARY_CHANGES, n);
    free(refs);
}

static void workload_table(html *h, const tg_hist_view *v)
{
    FILE *out = h->out;
    fputs("<table>\n<caption class=\"meta\">The workloads of the history.</caption>\n<thead><tr>"
          "<th scope=\"col\">workload</th><th scope=\"col\">key</th><th scope=\"col\">GPU</th><th scope=\"col\">runs</th>"
          "<th scope=\"col\">metrics</th><th scope=\"col\">change points</th><th scope=\"col\">latest run</th>"
          "<th scope=\"col\">its verdict</th></tr></thead>\n<tbody>\n", out);
    for (size_t j = 0, w = 1; j < v->n_series; j = workload_end(v, j), w++) {
        size_t end = workload_end(v, j), n_cp = 0;
        for (size_t k = j; k < end; k++) n_cp += v->series[k].n_changes;
        const tg_hist_series *r = workload_runs(v, j, end);
        const tg_hist_run *last = r->n ? r->runs[r->n - 1] : NULL;
        fprintf(out, "<tr><td><a href=\"#w%zu\">", w);
        tg_html_text(h, r->workload_name ? r->workload_name : "?", TG_TEXT_CAP_NAME);
        fputs("</a></td>", out);
        td(h, r->workload, true);
        td(h, last ? last->gpu : NULL, false);
        fprintf(out, "<td class=\"num\">%zu</td><td class=\"num\">%zu</td><td class=\"num\">%zu</td><td>", r->n,
                end - j, n_cp);
        if (last) put_run(h, last);
        fputs("</td>", out);
        td(h, last ? last->verdict : NULL, false);
        fputs("</tr>\n", out);
    }
    fputs("</tbody>\n</table>\n", out);
}

static void accept_table(html *h, const tg_hist_view *v)
{
    FILE *out = h->out;
    if (!v->n_accepts) return;
    fputs("<table>\n<caption class=\"meta\">Change points accepted as the new normal (history accept), in order of "
          "acceptance.</caption>\n<thead><tr><th scope=\"col\">workload</th><th scope=\"col\">run</th>"
          "<th scope=\"col\">accepted at</th><th scope=\"col\">reason</th></tr></thead>\n<tbody>\n", out);
    for (size_t k = 0; k < v->n_accepts; k++) {
        const tg_hist_accept *a = &v->accepts[k];
        fprintf(out, "<tr id=\"a%zu\">", k + 1);
        td(h, a->workload, true);
        td(h, a->label, true);
        td(h, a->time, false);
        td(h, a->reason, false);
        fputs("</tr>\n", out);
    }
    fputs("</tbody>\n</table>\n", out);
}

/* The top: the state of the history in one line and its counts. */
static void header(html *h, const tg_hist_view *v, const char *title, size_t *n_changes)
{
    FILE *out = h->out;
    size_t workloads = 0, open_reg = 0, improvements = 0, accepted = 0, total = 0;
    const char *first = NULL, *last = NULL;
    for (size_t j = 0; j < v->n_series; j = workload_end(v, j)) workloads++;
    for (size_t j = 0; j < v->n_series; j++) {
        const tg_hist_series *s = &v->series[j];
        for (size_t c = 0; c < s->n_changes; c++) {
            const tg_hist_change *x = &s->changes[c];
            total++;
            accepted += x->accepted != NULL;
            open_reg += !x->accepted && x->regression;
            improvements += !x->accepted && x->improvement;
        }
        for (size_t i = 0; i < s->n; i++) {
            const char *t = s->runs[i]->time;
            if (t && (!first || strcmp(t, first) < 0)) first = t;
            if (t && (!last || strcmp(t, last) > 0)) last = t;
        }
    }
    *n_changes = total;
    fputs("<header class=\"top\" role=\"banner\">\n<h1>", out);
    tg_html_text(h, title, TG_TEXT_CAP_TEXT);
    if (open_reg)
        fprintf(out, "</h1>\n<p class=\"verdict fail\" role=\"status\">%zu regression%s not accepted</p>\n", open_reg,
                open_reg == 1 ? "" : "s");
    else
        fputs("</h1>\n<p class=\"verdict pass\" role=\"status\">No regression that is not accepted</p>\n", out);
    fprintf(out, "<p class=\"meta\">%zu workload%s &#183; %zu run%s &#183; %zu change point%s (%zu regression%s not "
                 "accepted, %zu improvement%s, %zu accepted)",
            workloads, workloads == 1 ? "" : "s", v->n_runs, v->n_runs == 1 ? "" : "s", total, total == 1 ? "" : "s",
            open_reg, open_reg == 1 ? "" : "s", improvements, improvements == 1 ? "" : "s", accepted);
    if (first && last) {
        fputs(" &#183; ", out);
        tg_html_text(h, first, TG_TEXT_CAP_NAME);
        fputs(" to ", out);
        tg_html_text(h, last, TG_TEXT_CAP_NAME);
    }
    fputs("</p>\n</header>\n", out);
}

/* ------------------------------------------------------------ the page */

static void put_head(html *h, const char *title)
{
    fputs("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\"/>\n"
          "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\"/>\n"
          "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; "
          "img-src data:\"/>\n<title>tracegate: ", h->out);
    tg_html_text(h, title, TG_TEXT_CAP_TEXT);
    fprintf(h->out, "</title>\n<style>\n%s%s</style>\n</head>\n<body>\n"
                    "<a class=\"skip\" href=\"#summary\">Skip to the summary</a>\n", tg_html_style, trend_style);
}

static void workload_section(html *h, const tg_hist_view *v, size_t j, size_t end, size_t w)
{
    FILE *out = h->out;
    const tg_hist_series *r = workload_runs(v, j, end);
    const tg_hist_run *r0 = r->n ? r->runs[0] : NULL;
    fprintf(out, "<section id=\"w%zu\" aria-labelledby=\"w%zu-h\">\n<h2 id=\"w%zu-h\">", w, w, w);
    tg_html_text(h, r->workload_name ? r->workload_name : "?", TG_TEXT_CAP_NAME);
    fputs("</h2>\n<p class=\"meta\">workload <code>", out);
    tg_html_text(h, r->workload, TG_TEXT_CAP_NAME);
    fputs("</code>", out);
    if (r0) {
        const char *what[] = {r0->gpu, r0->format, r0->marker && *r0->marker ? r0->marker : NULL};
        for (size_t k = 0; k < 3; k++)
            if (what[k]) {
                fputs(k == 2 ? " &#183; iterations: " : " &#183; ", out);
                tg_html_text(h, what[k], TG_TEXT_CAP_NAME);
            }
    }
    fprintf(out, " &#183; %zu run%s</p>\n", r->n, r->n == 1 ? "" : "s");
    for (size_t k = 0; k < v->n_accepts; k++) {
        const tg_hist_accept *a = &v->accepts[k];
        if (!tg_same_str(a->workload, r->workload)) continue;
        fprintf(out, "<p><a href=\"#a%zu\">Accepted</a> at <code>", k + 1);
        tg_html_text(h, a->label, TG_TEXT_CAP_NAME);
        fputs("</code>", out);
        if (a->time) {
            fputs(" on ", out);
            tg_html_text(h, a->time, TG_TEXT_CAP_NAME);
        }
        fputs(": ", out);
        tg_html_text(h, a->reason, TG_TEXT_CAP_TEXT);
        fputs("</p>\n", out);
    }
    for (size_t k = j; k < end; k++) series_figure(h, v, &v->series[k], k + 1);
    fputs("</section>\n", out);
}

tg_status tg_history_write_html(FILE *out, const tg_hist_view *v, const char *title)
{
    html h = {out, NULL, NULL};
    if (!title || !*title) title = "history";
    size_t n_changes = 0;
    put_head(&h, title);
    header(&h, v, title, &n_changes);
    fputs("<nav aria-label=\"Workloads\"><ul>\n", out);
    for (size_t j = 0, w = 1; j < v->n_series; j = workload_end(v, j), w++) {
        fprintf(out, "<li><a href=\"#w%zu\">", w);
        tg_html_text(&h, v->series[j].workload_name ? v->series[j].workload_name : v->series[j].workload,
                     TG_TEXT_CAP_NAME);
        fputs("</a></li>\n", out);
    }
    fputs("</ul></nav>\n<main>\n<section aria-labelledby=\"summary\">\n<h2 id=\"summary\">Summary</h2>\n", out);
    if (!v->n_series)
        fprintf(out, "<p>No regression metric to draw in %zu run%s: the history's runs were judged by no rule with a "
                     "metric.</p>\n", v->n_runs, v->n_runs == 1 ? "" : "s");
    else {
        change_table(&h, v, n_changes);
        workload_table(&h, v);
    }
    accept_table(&h, v);
    fputs("</section>\n", out);
    for (size_t j = 0, w = 1; j < v->n_series; j = workload_end(v, j), w++) workload_section(&h, v, j, workload_end(v, j), w);
    fputs("</main>\n<footer class=\"meta\" style=\"padding:0 24px 24px\">Numbers are printed as tracegate's text "
          "prints them; <code>tracegate history show --format json</code> gives the raw values of every run.</footer>\n"
          "</body>\n</html>\n", out);
    return ferror(out) ? TG_EINTERNAL : TG_OK;
}
