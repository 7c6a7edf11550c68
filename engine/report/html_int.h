/*
** Private to the HTML pages (fmt_html.c writes the check report,
** html_chart.c its inline SVG charts; engine/history/trend_html.c, the
** history's trend page, shares the style, the escaping and the axes): the
** writer state, escaping, and the anchors that link a drawn gap or
** iteration to the evidence row that cites it.
*/
#ifndef TG_REPORT_HTML_INT_H
#define TG_REPORT_HTML_INT_H

#include "report_int.h"
#include "../common/units.h"

typedef struct html {
    FILE *out;
    const tg_report_opts *opts;
    const tg_run_result *run;
} html;

/* Text from a trace, a rule or a file name: tg_text_escape (no control
** character, capped at cap), then the HTML specials as entities; usable in
** element content and quoted attributes alike. */
void tg_html_text(html *h, const char *s, size_t cap);

/* A name in a chart (a kernel, a range): whole when it has at most
** `chars` characters, else its first chars - 1 and an ellipsis -- never
** longer than the name it stands for -- with the whole name (up to the
** name cap) in a <title>, which browsers show on hover. Written inside a
** <text> element. */
void tg_html_label(html *h, const char *s, size_t chars);

/* A name in a table cell as <code>: one that reads as an identifier (no
** blank, at most 64 bytes escaped: a rule id, a file name, a field)
** never wraps; a longer one breaks anywhere rather than widen the
** table (the style's td code and code.long). */
void tg_html_code(html *h, const char *s, size_t cap);

/* The id of result i of trace t ("t1-r5") and of its evidence row k
** ("t1-r5-e0"), into buf. */
const char *tg_html_result_id(size_t t, size_t i, char *buf, size_t size);
const char *tg_html_evidence_id(size_t t, size_t i, size_t k, char *buf, size_t size);

/* The anchor of the first evidence row of trace t that cites (table,
** rowid), or NULL: what a drawn gap or iteration links to. */
const char *tg_html_cited(const tg_trace_result *tr, size_t t, const char *table, int64_t rowid, char *buf,
                          size_t size);

/* The style sheet of every tracegate page (fmt_html.c): the check report
** and the history's trend page (engine/history/trend_html.c) look alike.
** No '<' or '&' in it: a page that is also well-formed XML may embed it. */
extern const char tg_html_style[];

/* The charts' geometry in SVG user units (html_chart.c): the width, and
** the margins around the plot (the left one holds the axis labels). */
#define TG_HTML_W 880.0
#define TG_HTML_ML 78.0
#define TG_HTML_MR 16.0
#define TG_HTML_MT 14.0

/* A round step for about n ticks over a span of max: 1, 2 or 5 x 10^k. */
double tg_html_nice_step(double max, int n);

/* A chart's value axis: its round step, and the one unit every tick and
** the axis title are written in (that of its largest value: "0 ms" under
** "80 ms", never "0 ns"), with the decimals the step needs. */
typedef struct tg_html_axis {
    double step;
    const tg_unit_suffix *rung;   /* NULL: plain numbers */
    int decimals;
} tg_html_axis;

tg_html_axis tg_html_axis_of(double lo, double hi, int ticks, tg_unit unit);
/* v as a tick of the axis, into buf */
const char *tg_html_tick(const tg_html_axis *a, double v, char *buf, size_t size);
/* An axis title: `what` and the axis's unit in parentheses ("period
** (ms)"), class axis-title and x or y, at (x, y), text-anchor anchor. */
void tg_html_axis_title(html *h, const char *xy, double x, double y, const char *anchor, const char *what,
                        const tg_html_axis *a);

/* A chart's value axis from ymin (bottom) to ymax (top) over a plot of
** height starting TG_HTML_MT from the top: a grid line and a tick label
** at each round step, all in the axis's unit (tg_html_axis_of). Returns
** the axis, for its title. */
tg_html_axis tg_html_y_axis(html *h, double ymin, double ymax, double height, tg_unit unit);

/* The charts of one trace (html_chart.c): iterations with the baseline
** band, device utilization with its gaps, what changed against the
** baseline. Each is a <figure> with an SVG (role img, title and desc), its
** caption and its numbers as a table; nothing when there is nothing to
** draw. */
void tg_html_iteration_charts(html *h, const tg_trace_result *tr, size_t t);
void tg_html_timeline_chart(html *h, const tg_trace_result *tr, size_t t);
void tg_html_contributor_chart(html *h, const tg_trace_result *tr, size_t t);

#endif
