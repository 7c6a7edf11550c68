/*
** Private to the HTML report (fmt_html.c writes the document, html_chart.c
** its inline SVG charts): the writer state, escaping, and the anchors that
** link a drawn gap or iteration to the evidence row that cites it.
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

/* The charts of one trace (html_chart.c): iterations with the baseline
** band, device utilization with its gaps, what changed against the
** baseline. Each is a <figure> with an SVG (role img, title and desc), its
** caption and its numbers as a table; nothing when there is nothing to
** draw. */
void tg_html_iteration_charts(html *h, const tg_trace_result *tr, size_t t);
void tg_html_timeline_chart(html *h, const tg_trace_result *tr, size_t t);
void tg_html_contributor_chart(html *h, const tg_trace_result *tr, size_t t);

#endif
