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

typedef struct html {
    FILE *out;
    const tg_report_opts *opts;
    const tg_run_result *run;
} html;

/* Text from a trace, a rule or a file name: tg_text_escape (no control
** character, capped at cap), then the HTML specials as entities; usable in
** element content and quoted attributes alike. */
void tg_html_text(html *h, const char *s, size_t cap);

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

/* A chart's value axis from ymin (bottom) to ymax (top) over a plot of
** height starting TG_HTML_MT from the top: a grid line and a label in unit
** at each round step, with the digits that tell neighbouring labels apart
** (three at least, as every number of a report). */
void tg_html_y_axis(html *h, double ymin, double ymax, double height, tg_unit unit);

/* The charts of one trace (html_chart.c): iterations with the baseline
** band, device utilization with its gaps, what changed against the
** baseline. Each is a <figure> with an SVG (role img, title and desc), its
** caption and its numbers as a table; nothing when there is nothing to
** draw. */
void tg_html_iteration_charts(html *h, const tg_trace_result *tr, size_t t);
void tg_html_timeline_chart(html *h, const tg_trace_result *tr, size_t t);
void tg_html_contributor_chart(html *h, const tg_trace_result *tr, size_t t);

#endif
