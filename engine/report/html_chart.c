/*
** The HTML report's charts (html_int.h), inline SVG with no script:
**
** - iterations: the period and the GPU time of each iteration of one
**   process, steady ones filled, warm-up and cut ones hollow, over the
**   regression rule's baseline band (median +- 3 x spread), the baseline
**   median dashed and this run's median solid;
** - the device timeline: per device the share of each time slice busy,
**   the steady window shaded, the idle gaps the model kept outlined;
** - what changed: per regression finding, its contributors as bars of
**   the change in GPU time per iteration (grew red, shrank green).
**
** An iteration or a gap that a finding cites is a link to that evidence
** row (keyboard-focusable, named for screen readers). Each chart is a
** figure: an SVG with role img, a title and a description that says what
** it shows in words, a caption, and its numbers as a table in a details
** element. Numbers go through the one formatter (common/units.h).
*/
#include "html_int.h"
#include "../common/stats.h"
#include "../common/units.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define W TG_HTML_W
#define ML TG_HTML_ML      /* left margin: the axis labels */
#define MR TG_HTML_MR
#define MT TG_HTML_MT
#define TABLE_ROWS 200

double tg_html_nice_step(double max, int n)
{
    if (!(max > 0)) return 1;
    double raw = max / n, p = pow(10, floor(log10(raw))), f = raw / p;
    return (f <= 1 ? 1 : f <= 2 ? 2 : f <= 5 ? 5 : 10) * p;
}

/* ------------------------------------------------------------ iterations */

typedef struct series {
    const char *key;           /* "period", "gpu_time" */
    const char *title;
    double *v;                 /* per iteration; NaN: none */
    size_t n;
    const tg_rule_result *cmp; /* the regression finding on this metric, or NULL */
} series;

static double value_of(const tg_iter_point *p, bool gpu)
{
    int64_t x = gpu ? p->gpu_time : p->period;
    return x == TG_NULL_I64 ? NAN : (double)x;
}

/* The regression result whose metric reads `key` over iterations, with a
** baseline comparison. */
static const tg_rule_result *comparison(const tg_trace_result *tr, const char *key)
{
    char needle[32];
    snprintf(needle, sizeof needle, "(%s)", key);
    for (size_t i = 0; i < tr->n_results; i++) {
        const tg_rule_result *r = &tr->results[i];
        if (r->baseline.present && r->metric && strstr(r->metric, needle)) return r;
    }
    return NULL;
}

/* The median of the steady iterations' values (common/stats.c); NaN
** without one. */
static double steady_median(const series *s, const tg_timeline *tl)
{
    double *tmp = malloc((s->n ? s->n : 1) * sizeof *tmp);
    size_t k = 0;
    for (size_t i = 0; tmp && i < s->n; i++)
        if (tl->iterations[i].steady && !isnan(s->v[i])) tmp[k++] = s->v[i];
    double med = tmp ? tg_stats_median(tmp, k) : NAN;
    free(tmp);
    return med;
}

static void hline(html *h, const char *cls, double y)
{
    fprintf(h->out, "<line class=\"%s\" x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\"/>\n", cls, ML, W - MR, y, y);
}

tg_html_axis tg_html_axis_of(double lo, double hi, int ticks, tg_unit unit)
{
    tg_html_axis a = {tg_html_nice_step(hi - lo, ticks), tg_unit_rung(fmax(fabs(lo), fabs(hi)), unit), 0};
    double step = a.rung ? a.step / a.rung->scale : a.step;
    if (step > 0 && step < 1) a.decimals = (int)ceil(-log10(step) - 1e-9);
    /* 2.5 x 10^k steps do not occur (1, 2, 5), so that is enough */
    return a;
}

const char *tg_html_tick(const tg_html_axis *a, double v, char *buf, size_t size)
{
    return tg_fmt_num_in(buf, size, v, a->rung, a->decimals);
}

void tg_html_axis_title(html *h, const char *xy, double x, double y, const char *anchor, const char *what,
                        const tg_html_axis *a)
{
    fprintf(h->out, "<text class=\"axis-title %s\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"%s\">%s", xy, x, y, anchor, what);
    if (a && a->rung) fprintf(h->out, " (%s)", a->rung->suffix);
    fputs("</text>\n", h->out);
}

/* From 0 or from ymin > 0 (a trend over a narrow range): the first tick
** is the round value at or above ymin (ymin / step of a round ymin may
** come out a hair above its integer). */
tg_html_axis tg_html_y_axis(html *h, double ymin, double ymax, double height, tg_unit unit)
{
    double span = ymax - ymin;
    tg_html_axis a = tg_html_axis_of(ymin, ymax, 4, unit);
    char buf[TG_FMT_BUF];
    for (double y = ceil(ymin / a.step - 1e-9) * a.step; y <= ymin + span * 1.0001; y += a.step) {
        double py = MT + height * (1 - (y - ymin) / span);
        fprintf(h->out, "<line class=\"grid\" x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\"/>"
                        "<text class=\"tick y\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\">%s</text>\n",
                ML, W - MR, py, py, ML - 6, py + 4, tg_html_tick(&a, y, buf, sizeof buf));
    }
    fprintf(h->out, "<line class=\"axis\" x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\"/>\n", ML, ML, MT, MT + height);
    return a;
}

static void iteration_points(html *h, const tg_trace_result *tr, size_t t, const series *s, double ymax,
                             double height)
{
    const tg_timeline *tl = tr->timeline;
    double span = s->n > 1 ? (double)(s->n - 1) : 1;
    /* the steady points joined */
    fputs("<polyline class=\"series\" points=\"", h->out);
    for (size_t i = 0; i < s->n; i++)
        if (tl->iterations[i].steady && !isnan(s->v[i]))
            fprintf(h->out, "%.1f,%.1f ", ML + (W - ML - MR) * (double)i / span, MT + height * (1 - s->v[i] / ymax));
    fputs("\"/>\n", h->out);
    char anchor[64], buf[TG_FMT_BUF];
    for (size_t i = 0; i < s->n; i++) {
        if (isnan(s->v[i])) continue;
        const tg_iter_point *p = &tl->iterations[i];
        double x = ML + (W - ML - MR) * (double)i / span, y = MT + height * (1 - s->v[i] / ymax);
        const char *cited = tg_html_cited(tr, t, tl->iter_table, p->rowid, anchor, sizeof anchor);
        tg_fmt_num(buf, sizeof buf, s->v[i], TG_UNIT_NS);
        if (cited)
            fprintf(h->out, "<a href=\"#%s\" aria-label=\"iteration %d: %s %s, cited evidence\">", cited, p->index,
                    s->title, buf);
        fprintf(h->out, "<circle class=\"pt%s%s\" cx=\"%.1f\" cy=\"%.1f\" r=\"%s\"><title>iteration %d%s: %s %s</title>"
                        "</circle>", p->steady ? "" : " warm", cited ? " cited" : "", x, y, cited ? "4" : "2.5",
                p->index, p->steady ? "" : " (warm-up or cut)", s->title, buf);
        if (cited) fputs("</a>", h->out);
        fputc('\n', h->out);
    }
}

static void iteration_table(html *h, const tg_timeline *tl, const series *s)
{
    char buf[TG_FMT_BUF];
    fprintf(h->out, "<details><summary>%s per iteration as a table</summary>\n<table>\n<thead><tr>"
                    "<th scope=\"col\">iteration</th><th scope=\"col\">steady</th><th scope=\"col\">%s</th>"
                    "</tr></thead>\n<tbody>\n", s->title, s->title);
    for (size_t i = 0; i < s->n && i < TABLE_ROWS; i++)
        fprintf(h->out, "<tr><td class=\"num\">%d</td><td>%s</td><td class=\"num\">%s</td></tr>\n",
                tl->iterations[i].index, tl->iterations[i].steady ? "yes" : "no",
                isnan(s->v[i]) ? "n/a" : tg_fmt_num(buf, sizeof buf, s->v[i], TG_UNIT_NS));
    fputs("</tbody>\n</table>\n", h->out);
    if (s->n > TABLE_ROWS) fprintf(h->out, "<p class=\"meta\">The first %d of %zu iterations.</p>\n", TABLE_ROWS, s->n);
    fputs("</details>\n", h->out);
}

/* The iterations' x axis: a tick at every round step of the iterations
** drawn, labelled with the iteration's index. */
static void iteration_axis(html *h, const tg_timeline *tl, size_t n, double y)
{
    double span = n > 1 ? (double)(n - 1) : 1, step = fmax(1, tg_html_nice_step(span, 8));
    for (double i = 0; i < (double)n; i += step) {
        double x = ML + (W - ML - MR) * i / span;
        fprintf(h->out, "<line class=\"axis\" x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\"/>"
                        "<text class=\"tick x\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">%d</text>\n",
                x, x, y, y + 4, x, y + 16, tl->iterations[(size_t)i].index);
    }
}

/* A legend entry under the plot: a sample of the mark (a line of class
** cls, or the band's swatch) and its words; returns where the next one
** starts. Widths are reckoned at 7 px a character, more than the 11 px
** sans-serif of the charts takes, so entries never meet. */
static double legend(html *h, double x, double y, const char *cls, const char *words)
{
    if (!strcmp(cls, "band"))
        fprintf(h->out, "<rect class=\"band\" x=\"%.1f\" y=\"%.1f\" width=\"18\" height=\"8\"/>", x, y - 8);
    else
        fprintf(h->out, "<line class=\"%s\" x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\"/>", cls, x, x + 18,
                y - 4, y - 4);
    fprintf(h->out, "<text x=\"%.1f\" y=\"%.1f\">%s</text>\n", x + 22, y, words);
    return x + 22 + 7.0 * (double)strlen(words) + 18;
}

#define TOP 20.0   /* above the plot: the y axis's title */

static void iteration_chart(html *h, const tg_trace_result *tr, size_t t, const series *s)
{
    const tg_timeline *tl = tr->timeline;
    const tg_baseline_cmp *b = s->cmp ? &s->cmp->baseline : NULL;
    double now = b && !isnan(b->current) ? b->current : steady_median(s, tl);
    double ymax = 0;
    for (size_t i = 0; i < s->n; i++)
        if (!isnan(s->v[i]) && s->v[i] > ymax) ymax = s->v[i];
    if (b && !isnan(b->band_hi) && b->band_hi > ymax) ymax = b->band_hi;
    if (b && !isnan(b->value) && b->value > ymax) ymax = b->value;
    if (!(ymax > 0)) return;
    ymax = tg_html_nice_step(ymax * 1.08, 4) * ceil(ymax * 1.08 / tg_html_nice_step(ymax * 1.08, 4));
    double height = 170, total = TOP + MT + height + 62;
    char id[48], med[TG_FMT_BUF], lo[TG_FMT_BUF], hi[TG_FMT_BUF], base[TG_FMT_BUF];
    snprintf(id, sizeof id, "t%zu-%s", t + 1, s->key);
    size_t steady = 0, outside = 0;
    for (size_t i = 0; i < s->n; i++) {
        if (!tl->iterations[i].steady || isnan(s->v[i])) continue;
        steady++;
        if (b && !isnan(b->band_lo) && (s->v[i] < b->band_lo || s->v[i] > b->band_hi)) outside++;
    }
    fprintf(h->out, "<figure id=\"%s\">\n<svg role=\"img\" aria-labelledby=\"%s-title %s-desc\" viewBox=\"0 0 %.0f %.0f\" "
                    "width=\"%.0f\" height=\"%.0f\">\n<title id=\"%s-title\">%s per iteration</title>\n<desc id=\"%s-desc\">",
            id, id, id, W, total, W, total, id, s->title, id);
    fprintf(h->out, "%zu iterations of process %d, %zu steady; median %s over the steady ones", s->n,
            (int)tl->iter_pid, steady, tg_fmt_num(med, sizeof med, now, TG_UNIT_NS));
    if (b && !isnan(b->value)) fprintf(h->out, "; baseline median %s", tg_fmt_num(base, sizeof base, b->value, TG_UNIT_NS));
    if (b && !isnan(b->band_lo))
        fprintf(h->out, ", band %s to %s, %zu steady iterations outside it", tg_fmt_num(lo, sizeof lo, b->band_lo, TG_UNIT_NS),
                tg_fmt_num(hi, sizeof hi, b->band_hi, TG_UNIT_NS), outside);
    fputs(".</desc>\n", h->out);
    tg_html_axis ya = tg_html_axis_of(0, ymax, 4, TG_UNIT_NS);
    char what[64];
    snprintf(what, sizeof what, "%s of the iteration", s->title);
    tg_html_axis_title(h, "y", 4, 13, "start", what, &ya);
    fprintf(h->out, "<g transform=\"translate(0 %.0f)\">\n", TOP);
    if (b && !isnan(b->band_lo) && !isnan(b->band_hi)) {
        double y1 = MT + height * (1 - b->band_hi / ymax), y2 = MT + height * (1 - b->band_lo / ymax);
        fprintf(h->out, "<rect class=\"band\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\"><title>baseline band "
                        "%s to %s</title></rect>\n", ML, y1, W - ML - MR, y2 - y1 > 1 ? y2 - y1 : 1, lo, hi);
    }
    tg_html_y_axis(h, 0, ymax, height, TG_UNIT_NS);
    if (b && !isnan(b->value)) hline(h, "base", MT + height * (1 - b->value / ymax));
    if (!isnan(now)) hline(h, "now", MT + height * (1 - now / ymax));
    iteration_points(h, tr, t, s, ymax, height);
    iteration_axis(h, tl, s->n, MT + height);
    char who[64];
    snprintf(who, sizeof who, "iteration of process %d", (int)tl->iter_pid);
    tg_html_axis_title(h, "x", (ML + W - MR) / 2, MT + height + 32, "middle", who, NULL);
    /* the medians named below the plot, where they meet no point */
    double x = ML, y = MT + height + 54;
    char words[3 * TG_FMT_BUF];
    if (!isnan(now)) {
        snprintf(words, sizeof words, "now: steady median %s", med);
        x = legend(h, x, y, "now", words);
    }
    if (b && !isnan(b->value)) {
        snprintf(words, sizeof words, "baseline median %s", base);
        x = legend(h, x, y, "base", words);
    }
    if (b && !isnan(b->band_lo) && !isnan(b->band_hi)) {
        snprintf(words, sizeof words, "baseline band %s to %s", lo, hi);
        legend(h, x, y, "band", words);
    }
    fputs("</g>\n</svg>\n<figcaption>", h->out);
    fprintf(h->out, "%s of each iteration: steady iterations filled, warm-up and cut ones hollow", s->title);
    if (b) {
        fputs("; the shaded band is the baseline's run-to-run band, the dashed line its median (", h->out);
        tg_html_text(h, s->cmp->rule, TG_TEXT_CAP_NAME);
        fputc(')', h->out);
    }
    fputs("; points a finding cites are red links to their evidence.</figcaption>\n", h->out);
    iteration_table(h, tl, s);
    fputs("</figure>\n", h->out);
}

void tg_html_iteration_charts(html *h, const tg_trace_result *tr, size_t t)
{
    const tg_timeline *tl = tr->timeline;
    if (!tl || !tl->n_iterations) {
        fputs("<p class=\"meta\">No iteration chart: no NVTX range marks iterations in this trace "
              "(docs/iterations.md).</p>\n", h->out);
        return;
    }
    fprintf(h->out, "<h3 id=\"t%zu-iterations\">Iterations</h3>\n", t + 1);
    static const struct { const char *key, *title; bool gpu; } kinds[] = {
        {"period", "Period", false}, {"gpu_time", "GPU time", true}};
    for (size_t k = 0; k < 2; k++) {
        series s = {kinds[k].key, kinds[k].title, malloc(tl->n_iterations * sizeof(double)), tl->n_iterations,
                    comparison(tr, kinds[k].key)};
        if (!s.v) continue;
        for (size_t i = 0; i < s.n; i++) s.v[i] = value_of(&tl->iterations[i], kinds[k].gpu);
        iteration_chart(h, tr, t, &s);
        free(s.v);
    }
}

/* ------------------------------------------------------------ timeline */

/* Time from the first operation, every tick in the unit of the span. */
static tg_html_axis time_axis(html *h, const tg_timeline *tl, double y)
{
    double span = (double)(tl->to - tl->from);
    tg_html_axis a = tg_html_axis_of(0, span, 6, TG_UNIT_NS);
    char buf[TG_FMT_BUF];
    for (double x = 0; x <= span * 1.0001; x += a.step) {
        double px = ML + (W - ML - MR) * x / span;
        fprintf(h->out, "<line class=\"axis\" x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\"/>"
                        "<text class=\"tick x\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">%s</text>\n",
                px, px, y, y + 4, px, y + 16, tg_html_tick(&a, x, buf, sizeof buf));
    }
    return a;
}

static double px_of(const tg_timeline *tl, int64_t ns)
{
    double f = (double)(ns - tl->from) / (double)(tl->to - tl->from);
    return ML + (W - ML - MR) * (f < 0 ? 0 : f > 1 ? 1 : f);
}

static void device_row(html *h, const tg_trace_result *tr, size_t t, size_t d, double top, double row_h)
{
    const tg_timeline *tl = tr->timeline;
    double bw = (W - ML - MR) / (double)tl->n_bins;
    char anchor[64], dur[TG_FMT_BUF], at[TG_FMT_BUF];
    /* the device, and the row's own scale: 0 to 100% busy */
    fprintf(h->out, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\">GPU %d</text>"
                    "<text class=\"tick y\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\">100%%</text>"
                    "<text class=\"tick y\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\">0%%</text>\n",
            ML - 36, top + row_h / 2 + 4, (int)tl->devices[d], ML - 4, top + 8, ML - 4, top + row_h);
    if (tl->has_iterations)
        fprintf(h->out, "<rect class=\"steady\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\"/>\n",
                px_of(tl, tl->steady_start), top, px_of(tl, tl->steady_end) - px_of(tl, tl->steady_start), row_h);
    for (size_t b = 0; b < tl->n_bins; b++) {
        double f = tl->busy[d * tl->n_bins + b];
        if (f <= 0) continue;
        fprintf(h->out, "<rect class=\"busy\" x=\"%.1f\" y=\"%.1f\" width=\"%.2f\" height=\"%.1f\"/>", ML + bw * (double)b,
                top + row_h * (1 - f), bw, row_h * f);
    }
    fputc('\n', h->out);
    for (size_t g = 0; g < tl->n_gaps; g++) {
        const tg_timeline_gap *gap = &tl->gaps[g];
        if (gap->device != tl->devices[d]) continue;
        const char *cited = tg_html_cited(tr, t, gap->table, gap->rowid, anchor, sizeof anchor);
        tg_fmt_num(dur, sizeof dur, (double)(gap->end - gap->start), TG_UNIT_NS);
        tg_fmt_num(at, sizeof at, (double)(gap->start - tl->from), TG_UNIT_NS);
        double x1 = px_of(tl, gap->start), x2 = px_of(tl, gap->end);
        if (cited) fprintf(h->out, "<a href=\"#%s\" aria-label=\"GPU %d idle %s from +%s, cited evidence\">", cited,
                           (int)gap->device, dur, at);
        fprintf(h->out, "<rect class=\"gap\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\"><title>GPU %d idle %s "
                        "from +%s%s</title></rect>", x1, top, x2 - x1 > 2 ? x2 - x1 : 2, row_h, (int)gap->device, dur, at,
                cited ? " (cited: follow the link)" : "");
        if (cited) fputs("</a>", h->out);
        fputc('\n', h->out);
    }
}

static void gap_table(html *h, const tg_trace_result *tr, size_t t)
{
    const tg_timeline *tl = tr->timeline;
    char anchor[64], dur[TG_FMT_BUF], at[TG_FMT_BUF], busy[TG_FMT_BUF];
    fputs("<details><summary>Devices and gaps as a table</summary>\n<table>\n<thead><tr><th scope=\"col\">GPU</th>"
          "<th scope=\"col\">name</th><th scope=\"col\">busy over the trace</th></tr></thead>\n<tbody>\n", h->out);
    for (size_t d = 0; d < tl->n_devices; d++) {
        double sum = 0;
        for (size_t b = 0; b < tl->n_bins; b++) sum += tl->busy[d * tl->n_bins + b];
        fprintf(h->out, "<tr><td class=\"num\">%d</td><td>", (int)tl->devices[d]);
        tg_html_text(h, tl->device_names[d], TG_TEXT_CAP_NAME);
        fprintf(h->out, "</td><td class=\"num\">%s</td></tr>\n",
                tg_fmt_num(busy, sizeof busy, sum / (double)tl->n_bins, TG_UNIT_RATIO));
    }
    fputs("</tbody>\n</table>\n", h->out);
    if (tl->n_gaps) {
        fputs("<table>\n<thead><tr><th scope=\"col\">GPU</th><th scope=\"col\">from</th><th scope=\"col\">idle</th>"
              "<th scope=\"col\">op before</th><th scope=\"col\">evidence</th></tr></thead>\n<tbody>\n", h->out);
        for (size_t g = 0; g < tl->n_gaps && g < TABLE_ROWS; g++) {
            const tg_timeline_gap *gap = &tl->gaps[g];
            const char *cited = tg_html_cited(tr, t, gap->table, gap->rowid, anchor, sizeof anchor);
            fprintf(h->out, "<tr><td class=\"num\">%d</td><td class=\"num\">+%s</td><td class=\"num\">%s</td><td><code>",
                    (int)gap->device, tg_fmt_num(at, sizeof at, (double)(gap->start - tl->from), TG_UNIT_NS),
                    tg_fmt_num(dur, sizeof dur, (double)(gap->end - gap->start), TG_UNIT_NS));
            tg_html_text(h, gap->table, TG_TEXT_CAP_NAME);
            fprintf(h->out, "</code>&#160;rowid %lld</td><td>", (long long)gap->rowid);
            if (cited) fprintf(h->out, "<a href=\"#%s\">cited</a>", cited);
            fputs("</td></tr>\n", h->out);
        }
        fputs("</tbody>\n</table>\n", h->out);
    }
    fputs("</details>\n", h->out);
}

void tg_html_timeline_chart(html *h, const tg_trace_result *tr, size_t t)
{
    const tg_timeline *tl = tr->timeline;
    if (!tl || !tl->n_devices) {
        fputs("<p class=\"meta\">No device timeline: no GPU work in this trace.</p>\n", h->out);
        return;
    }
    double row_h = 40, gap_v = 14, height = (double)tl->n_devices * (row_h + gap_v), total = TOP + MT + height + 30;
    char id[32], span[TG_FMT_BUF];
    snprintf(id, sizeof id, "t%zu-timeline", t + 1);
    size_t cited = 0;
    char anchor[64];
    for (size_t g = 0; g < tl->n_gaps; g++) cited += tg_html_cited(tr, t, tl->gaps[g].table, tl->gaps[g].rowid, anchor, sizeof anchor) != NULL;
    fprintf(h->out, "<h3 id=\"t%zu-devices\">Device timeline</h3>\n<figure id=\"%s\">\n<svg role=\"img\" "
                    "aria-labelledby=\"%s-title %s-desc\" viewBox=\"0 0 %.0f %.0f\" width=\"%.0f\" height=\"%.0f\">\n"
                    "<title id=\"%s-title\">GPU utilization over time</title>\n<desc id=\"%s-desc\">",
            t + 1, id, id, id, W, total, W, total, id, id);
    fprintf(h->out, "%zu device%s over %s; %zu idle gap%s marked, %zu of them cited by a finding.</desc>\n",
            tl->n_devices, tl->n_devices == 1 ? "" : "s",
            tg_fmt_num(span, sizeof span, (double)(tl->to - tl->from), TG_UNIT_NS), tl->n_gaps,
            tl->n_gaps == 1 ? "" : "s", cited);
    tg_html_axis_title(h, "y", 4, 13, "start", "each GPU: busy share of each time slice (%)", NULL);
    fprintf(h->out, "<g transform=\"translate(0 %.0f)\">\n", TOP);
    for (size_t d = 0; d < tl->n_devices; d++) device_row(h, tr, t, d, MT + (double)d * (row_h + gap_v), row_h);
    tg_html_axis xa = time_axis(h, tl, MT + height - gap_v + 2);
    tg_html_axis_title(h, "x", (ML + W - MR) / 2, MT + height - gap_v + 32, "middle",
                       "time from the first GPU operation", &xa);
    fputs("</g>\n</svg>\n<figcaption>The share of each time slice each GPU was busy (green), from its first to its last "
          "operation; ", h->out);
    if (tl->has_iterations) fputs("the steady window is shaded grey; ", h->out);
    fputs("idle gaps the rules look at are outlined red, and the ones a finding cites link to their evidence.", h->out);
    fputs("</figcaption>\n", h->out);
    gap_table(h, tr, t);
    fputs("</figure>\n", h->out);
}

/* --------------------------------------------------------- contributors */

/* The scale every what-changed chart of a trace shares, so that bars of
** two findings compare: from the most negative change (or 0) to the
** largest (or 0), widened to round ticks. */
typedef struct change_scale {
    tg_html_axis a;
    double lo, hi;
} change_scale;

#define LABEL_CHARS 36   /* a name's characters left of the bars */
#define BAR_X0 280.0     /* the bars' plot, between the names and the numbers */
#define BAR_X1 540.0

static double bar_px(const change_scale *c, double v)
{
    return BAR_X0 + (BAR_X1 - BAR_X0) * (v - c->lo) / (c->hi - c->lo);
}

static void contributor_chart(html *h, const tg_rule_result *r, size_t t, size_t i, const change_scale *c)
{
    const tg_baseline_cmp *b = &r->baseline;
    double bar_h = 18, plot = (double)b->n_contributors * (bar_h + 6), total = TOP + MT + plot + 40;
    char id[48], d[TG_FMT_BUF], then[TG_FMT_BUF], now[TG_FMT_BUF], tick[TG_FMT_BUF];
    snprintf(id, sizeof id, "t%zu-r%zu-changed", t + 1, i + 1);
    fprintf(h->out, "<figure id=\"%s\">\n<svg role=\"img\" aria-labelledby=\"%s-title %s-desc\" viewBox=\"0 0 %.0f %.0f\" "
                    "width=\"%.0f\" height=\"%.0f\">\n<title id=\"%s-title\">What changed: ", id, id, id, W, total, W,
            total, id);
    tg_html_text(h, r->rule, TG_TEXT_CAP_NAME);
    fprintf(h->out, "</title>\n<desc id=\"%s-desc\">The %zu kernels, copies or NVTX ranges whose time per steady "
                    "iteration changed most against the baseline, as bars of the change, on the scale every "
                    "what-changed chart of this trace shares.</desc>\n", id, b->n_contributors);
    tg_html_axis_title(h, "y", BAR_X0 - 10, 13, "end", "kernel, copy or NVTX range", NULL);
    fprintf(h->out, "<g transform=\"translate(0 %.0f)\">\n", TOP);
    double zero = bar_px(c, 0), bottom = MT + plot;
    for (double v = ceil(c->lo / c->a.step - 1e-9) * c->a.step; v <= c->hi + c->a.step * 1e-6; v += c->a.step) {
        double x = bar_px(c, v);
        tg_html_tick(&c->a, fabs(v), tick, sizeof tick);
        fprintf(h->out, "<line class=\"grid\" x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\"/>"
                        "<text class=\"tick x\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">%s%s</text>\n",
                x, x, MT - 4, bottom, x, bottom + 16, v > c->a.step * 1e-6 ? "+" : v < -c->a.step * 1e-6 ? "-" : "", tick);
    }
    fprintf(h->out, "<line class=\"axis\" x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\"/>\n", zero, zero, MT - 4, bottom);
    for (size_t k = 0; k < b->n_contributors; k++) {
        const tg_contributor *x = &b->contributors[k];
        double y = MT + (double)k * (bar_h + 6), end = bar_px(c, x->delta);
        double left = fmin(zero, end), len = fabs(end - zero);
        fprintf(h->out, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\">", BAR_X0 - 10, y + bar_h - 5);
        tg_html_label(h, x->name, LABEL_CHARS);
        fprintf(h->out, "</text><rect class=\"%s\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\"/>"
                        "<text x=\"%.1f\" y=\"%.1f\">%s%s (%s%s, %s &#8594; %s)</text>\n",
                x->delta >= 0 ? "grew" : "shrank", len < 1 && x->delta < 0 ? zero - 1 : left, y, len > 1 ? len : 1, bar_h,
                BAR_X1 + 10, y + bar_h - 5, x->delta >= 0 ? "+" : "-", tg_fmt_num(d, sizeof d, fabs(x->delta), TG_UNIT_NS),
                tg_contrib_status_name(x->status), x->kind == TG_WORK_NVTX ? ", NVTX range" : "",
                tg_fmt_num(then, sizeof then, x->then_time, TG_UNIT_NS), tg_fmt_num(now, sizeof now, x->now_time, TG_UNIT_NS));
    }
    tg_html_axis_title(h, "x", (BAR_X0 + BAR_X1) / 2, bottom + 32, "middle", "change per steady iteration", &c->a);
    fputs("</g>\n", h->out);
    fputs("</svg>\n<figcaption>Change per steady iteration, baseline to now, of what changed most (red grew, green "
          "shrank): GPU time for kernels and copies, the time inside for NVTX ranges; ", h->out);
    tg_html_text(h, r->rule, TG_TEXT_CAP_NAME);
    fputs(".</figcaption>\n<details><summary>As a table</summary>\n<table>\n<thead><tr><th scope=\"col\">name</th>"
          "<th scope=\"col\">change</th><th scope=\"col\">baseline</th><th scope=\"col\">now</th>"
          "<th scope=\"col\">per iteration</th></tr></thead>\n<tbody>\n", h->out);
    for (size_t k = 0; k < b->n_contributors; k++) {
        const tg_contributor *x = &b->contributors[k];
        fputs("<tr><td>", h->out);
        tg_html_code(h, x->name, TG_TEXT_CAP_NAME);
        fprintf(h->out, "</td><td>%s</td><td class=\"num\">%s</td><td class=\"num\">%s</td>"
                        "<td class=\"num\">%s%s</td></tr>\n", tg_contrib_status_name(x->status),
                tg_fmt_num(then, sizeof then, x->then_time, TG_UNIT_NS), tg_fmt_num(now, sizeof now, x->now_time, TG_UNIT_NS),
                x->delta >= 0 ? "+" : "-", tg_fmt_num(d, sizeof d, fabs(x->delta), TG_UNIT_NS));
    }
    fputs("</tbody>\n</table>\n</details>\n</figure>\n", h->out);
}

void tg_html_contributor_chart(html *h, const tg_trace_result *tr, size_t t)
{
    change_scale c = {.lo = 0, .hi = 0};
    for (size_t i = 0; i < tr->n_results; i++) {
        const tg_baseline_cmp *b = &tr->results[i].baseline;
        for (size_t k = 0; b->present && k < b->n_contributors; k++)
            if (isfinite(b->contributors[k].delta)) {
                c.lo = fmin(c.lo, b->contributors[k].delta);
                c.hi = fmax(c.hi, b->contributors[k].delta);
            }
    }
    if (!(c.hi > c.lo)) return;   /* nothing changed: no bar to draw */
    c.a = tg_html_axis_of(c.lo, c.hi, 4, TG_UNIT_NS);
    c.lo = floor(c.lo / c.a.step + 1e-9) * c.a.step;
    c.hi = ceil(c.hi / c.a.step - 1e-9) * c.a.step;
    if (!(c.hi > c.lo)) c.hi = c.lo + c.a.step;
    fprintf(h->out, "<h3 id=\"t%zu-changed\">What changed against the baseline</h3>\n", t + 1);
    for (size_t i = 0; i < tr->n_results; i++) {
        const tg_rule_result *r = &tr->results[i];
        if (r->baseline.present && r->baseline.n_contributors) contributor_chart(h, r, t, i, &c);
    }
}
