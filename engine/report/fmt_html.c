/*
** The HTML report (`-o html=FILE`, docs/formats.md "html"): one
** self-contained file -- no script, no network, no external font, style
** sheet or image; charts are inline SVG (html_chart.c) -- that a person
** opens from a CI artifact. At the top the verdict and every finding in a
** table; per trace its charts (iterations against the baseline band,
** device utilization with the gaps marked, what changed) and then each
** finding with its values, baseline comparison, evidence rows and the
** query that reproduces them. A drawn gap or iteration that a finding
** cites links to its evidence row.
**
** For people of every kind: landmarks and headings in order, a skip
** link, visible focus, every chart an image with a title, a description
** and its numbers as a table, status given in words and not only in
** colour, and a print style. Every string from a trace, a rule or a file
** goes through tg_text_escape and then HTML escaping (tg_html_text).
*/
#include "html_int.h"
#include "../common/units.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------ escaping */

static void html_sink(void *ctx, const char *s, size_t n)
{
    FILE *out = ctx;
    for (size_t i = 0; i < n; i++) {
        switch (s[i]) {
        case '&': fputs("&amp;", out); break;
        case '<': fputs("&lt;", out); break;
        case '>': fputs("&gt;", out); break;
        case '"': fputs("&quot;", out); break;
        case '\'': fputs("&#39;", out); break;
        default: fputc(s[i], out);
        }
    }
}

void tg_html_text(html *h, const char *s, size_t cap)
{
    if (!s) return;
    tg_text_escape(s, strlen(s), cap, 0, html_sink, h->out);
}

void tg_html_label(html *h, const char *s, size_t chars)
{
    char *esc = tg_text_dup(s ? s : "", TG_TEXT_CAP_NAME, 0);
    if (!esc) return;
    size_t n = 0, cut = 0, len = strlen(esc);
    for (size_t i = 0; i < len; i++)
        if (((unsigned char)esc[i] & 0xC0) != 0x80 && ++n == chars) cut = i;   /* where character `chars` starts */
    if (n <= chars) {
        html_sink(h->out, esc, len);
    } else {
        html_sink(h->out, esc, cut);   /* chars - 1 characters */
        fputs("&#8230;<title>", h->out);
        html_sink(h->out, esc, len);
        fputs("</title>", h->out);
    }
    free(esc);
}

void tg_html_code(html *h, const char *s, size_t cap)
{
    char *esc = tg_text_dup(s ? s : "", cap, 0);
    if (!esc) return;
    size_t len = strlen(esc);
    fputs(len > 64 || strpbrk(esc, " \t") ? "<code class=\"long\">" : "<code>", h->out);
    html_sink(h->out, esc, len);
    fputs("</code>", h->out);
    free(esc);
}

const char *tg_html_result_id(size_t t, size_t i, char *buf, size_t size)
{
    snprintf(buf, size, "t%zu-r%zu", t + 1, i + 1);
    return buf;
}

const char *tg_html_evidence_id(size_t t, size_t i, size_t k, char *buf, size_t size)
{
    snprintf(buf, size, "t%zu-r%zu-e%zu", t + 1, i + 1, k + 1);
    return buf;
}

const char *tg_html_cited(const tg_trace_result *tr, size_t t, const char *table, int64_t rowid, char *buf,
                          size_t size)
{
    for (size_t i = 0; table && i < tr->n_results; i++) {
        const tg_rule_result *r = &tr->results[i];
        if (r->verdict != TG_V_FAIL && r->verdict != TG_V_INCONCLUSIVE) continue;
        for (size_t k = 0; k < r->n_evidence; k++)
            if (r->evidence[k].rowid == rowid && r->evidence[k].table && !strcmp(r->evidence[k].table, table))
                return tg_html_evidence_id(t, i, k, buf, size);
    }
    return NULL;
}

/* ------------------------------------------------------------- status */

typedef enum badge { B_PASS, B_FAIL, B_WARN, B_SKIP, B_ERROR, B_SUPPRESSED, B_INCONCLUSIVE } badge;

static const char *const badge_class[] = {"pass", "fail", "warn", "skip", "error", "suppressed", "inconclusive"};

/* How a result reads at a glance: a failure below --fail-on is a warning
** (it does not fail the gate); the word is always written too. */
static badge badge_of(const tg_rule_result *r, const tg_report_opts *opts)
{
    if (r->suppressed && (r->verdict == TG_V_FAIL || r->verdict == TG_V_INCONCLUSIVE)) return B_SUPPRESSED;
    switch (r->verdict) {
    case TG_V_PASS: return B_PASS;
    case TG_V_FAIL: return tg_report_gates(r, opts) ? B_FAIL : B_WARN;
    case TG_V_SKIP: return B_SKIP;
    case TG_V_INCONCLUSIVE: return B_INCONCLUSIVE;
    default: return B_ERROR;
    }
}

static void put_badge(html *h, const tg_rule_result *r)
{
    badge b = badge_of(r, h->opts);
    const char *word = b == B_SUPPRESSED ? "SUPPRESSED" : tg_verdict_upper(r->verdict);
    fprintf(h->out, "<span class=\"badge %s\">%s</span>", badge_class[b], word);
}

/* ---------------------------------------------------------------- head */

const char tg_html_style[] =
    ":root{--fg:#1b1f24;--muted:#57606a;--line:#d0d7de;--bg:#fff;--soft:#f6f8fa;--pass:#1a7f37;"
    "--fail:#cf222e;--warn:#9a6700;--skip:#57606a;--err:#8250df;--sup:#0969da;--band:#ddf4ff;--busy:#2da44e}\n"
    "*{box-sizing:border-box}body{margin:0;font:15px/1.5 system-ui,-apple-system,'Segoe UI',Roboto,sans-serif;"
    "color:var(--fg);background:var(--bg)}\n"
    "a{color:#0550ae}a:focus-visible,summary:focus-visible,[tabindex]:focus-visible{outline:3px solid #0969da;"
    "outline-offset:2px}\n"
    ".skip{position:absolute;left:-999px}.skip:focus{left:8px;top:8px;background:#fff;padding:4px 8px;z-index:9}\n"
    "header.top{padding:16px 24px;border-bottom:1px solid var(--line);background:var(--soft)}\n"
    "header.top h1{margin:0 0 8px;font-size:20px}main{padding:8px 24px 32px;max-width:1100px}\n"
    ".verdict{font-size:22px;font-weight:600;margin:4px 0;padding:8px 12px;border-left:6px solid;border-radius:4px}\n"
    ".verdict.pass{border-color:var(--pass);background:#dafbe1}.verdict.fail{border-color:var(--fail);"
    "background:#ffebe9}.verdict.error{border-color:var(--err);background:#fbefff}\n"
    ".meta{color:var(--muted);margin:2px 0}h2{margin-top:32px;border-bottom:1px solid var(--line);"
    "padding-bottom:4px;font-size:18px;word-break:break-all}\n"
    "h3{font-size:16px;margin-top:24px}h4{margin:0 0 6px;font-size:15px}\n"
    "table{border-collapse:collapse;margin:8px 0;font-size:13px}th,td{border:1px solid var(--line);"
    "padding:3px 6px;text-align:left;vertical-align:top;overflow-wrap:anywhere}th{background:var(--soft)}"
    "td.num{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}\n"
    "td code{white-space:nowrap}td code.long{white-space:normal;overflow-wrap:anywhere}\n"
    ".badge{display:inline-block;min-width:5.5em;text-align:center;font-size:12px;font-weight:700;"
    "padding:1px 6px;border-radius:10px;color:#fff;background:var(--skip)}\n"
    ".badge.pass{background:var(--pass)}.badge.fail{background:var(--fail)}.badge.warn{background:var(--warn)}"
    ".badge.error{background:var(--err)}.badge.suppressed{background:var(--sup)}"
    ".badge.inconclusive{background:var(--warn)}\n"
    "article.finding{border:1px solid var(--line);border-left:6px solid var(--skip);border-radius:4px;"
    "padding:10px 14px;margin:12px 0;break-inside:avoid}\n"
    "article.finding.fail{border-left-color:var(--fail)}article.finding.warn,article.finding.inconclusive"
    "{border-left-color:var(--warn)}article.finding.suppressed{border-left-color:var(--sup)}"
    "article.finding.error{border-left-color:var(--err)}\n"
    "article.finding:target,tr:target{background:#fff8c5}\n"
    "pre{background:var(--soft);border:1px solid var(--line);padding:8px;overflow:auto;white-space:pre-wrap;"
    "word-break:break-all;font-size:12px}\n"
    "code{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace}\n"
    "figure{margin:16px 0;break-inside:avoid}figcaption{color:var(--muted);font-size:13px}\n"
    "svg{max-width:100%;height:auto;font:11px system-ui,sans-serif}svg text{fill:var(--fg)}\n"
    "svg .axis{stroke:#8c959f}svg .grid{stroke:#eaeef2}svg .band{fill:var(--band)}svg .base{stroke:#0969da;"
    "stroke-dasharray:5 3}svg .now{stroke:var(--fail)}svg .series{fill:none;stroke:#0550ae;stroke-width:1.5}\n"
    "svg .pt{fill:#0550ae}svg .pt.warm{fill:#fff;stroke:#8c959f}svg .pt.cited{fill:var(--fail);r:4}\n"
    "svg .busy{fill:var(--busy)}svg .steady{fill:#eaeef2}svg .gap{fill:rgba(207,34,46,.12);stroke:var(--fail)}"
    "svg .grew{fill:var(--fail)}svg .shrank{fill:var(--pass)}\n"
    "svg a:focus-visible rect,svg a:focus-visible circle{stroke:#0969da;stroke-width:3}\n"
    "details{margin:4px 0}summary{cursor:pointer;color:#0550ae}\n"
    "ul.review li{color:var(--warn)}\n"
    "@media print{.skip,nav{display:none}main{max-width:none;padding:0}a{color:inherit;text-decoration:none}"
    "header.top{background:none}}\n";

static void put_head(html *h, const char *verdict)
{
    fputs("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
          "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
          "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; "
          "img-src data:\">\n<title>tracegate: ", h->out);
    tg_html_text(h, verdict, TG_TEXT_CAP_TEXT);
    fprintf(h->out, "</title>\n<style>\n%s</style>\n</head>\n<body>\n"
                    "<a class=\"skip\" href=\"#findings\">Skip to the findings</a>\n", tg_html_style);
}

/* ----------------------------------------------------------- findings */

static void put_trace_name(html *h, const tg_trace_result *tr)
{
    tg_html_code(h, tg_report_basename(tr->file), TG_TEXT_CAP_TEXT);
}

/* A message in the summary table: a long one (a regression's, with what
** changed) up to its first clause after 160 bytes, the rest in the
** details. */
static void put_headline(html *h, const char *msg)
{
    if (!msg) return;
    size_t len = strlen(msg);
    const char *cut = len > 200 ? strchr(msg + 160, ';') : NULL;
    if (!cut && len > 200) cut = msg + 200;
    if (!cut) {
        tg_html_text(h, msg, TG_TEXT_CAP_TEXT);
        return;
    }
    while (cut > msg && ((unsigned char)*cut & 0xC0) == 0x80) cut--;   /* a whole character */
    char *head = strndup(msg, (size_t)(cut - msg));
    tg_html_text(h, head ? head : "", TG_TEXT_CAP_TEXT);
    fputs(" &hellip;", h->out);
    free(head);
}

/* The table of every result of the run, linking to their details. */
static void put_summary(html *h)
{
    const tg_run_result *run = h->run;
    fputs("<section aria-labelledby=\"findings\">\n<h2 id=\"findings\">Findings</h2>\n"
          "<table>\n<caption class=\"meta\">Every rule on every trace; a row links to its details.</caption>\n"
          "<thead><tr><th scope=\"col\">status</th><th scope=\"col\">severity</th><th scope=\"col\">rule</th>"
          "<th scope=\"col\">trace</th><th scope=\"col\">count</th><th scope=\"col\">message</th></tr></thead>\n"
          "<tbody>\n", h->out);
    char id[64];
    for (size_t t = 0; t < run->n_traces; t++) {
        const tg_trace_result *tr = &run->traces[t];
        if (tr->status != TG_OK) {
            fprintf(h->out, "<tr><td><span class=\"badge error\">UNREADABLE</span></td><td></td><td></td><td>"
                            "<a href=\"#t%zu\">", t + 1);
            put_trace_name(h, tr);
            fputs("</a></td><td></td><td>", h->out);
            tg_html_text(h, tr->error ? tr->error : "the trace could not be read", TG_TEXT_CAP_TEXT);
            fputs("</td></tr>\n", h->out);
        }
        for (size_t i = 0; i < tr->n_results; i++) {
            const tg_rule_result *r = &tr->results[i];
            fputs("<tr><td>", h->out);
            put_badge(h, r);
            fprintf(h->out, "</td><td>%s</td><td><a href=\"#%s\">", tg_severity_name(r->severity),
                    tg_html_result_id(t, i, id, sizeof id));
            tg_html_code(h, r->rule, TG_TEXT_CAP_NAME);
            fputs("</a></td><td>", h->out);
            put_trace_name(h, tr);
            fputs("</td><td class=\"num\">", h->out);
            if (r->count != TG_NULL_I64) fprintf(h->out, "%lld", (long long)r->count);
            fputs("</td><td>", h->out);
            put_headline(h, r->message ? r->message : r->title);
            if (r->suppressed) {
                fputs(" <em>(suppressed: ", h->out);
                tg_html_text(h, r->suppressed, TG_TEXT_CAP_TEXT);
                fputs(")</em>", h->out);
            }
            fputs("</td></tr>\n", h->out);
        }
    }
    fputs("</tbody>\n</table>\n</section>\n", h->out);
}

static void put_value(html *h, const tg_value *v)
{
    char buf[TG_FMT_BUF];
    if (v->type == TG_TY_STRING) tg_html_text(h, v->u.s, TG_TEXT_CAP_NAME);
    else fputs(tg_fmt_value(buf, sizeof buf, *v), h->out);
}

static void put_values(html *h, const tg_named_value *v, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        char label[128];
        fputs(i ? ", " : "", h->out);
        tg_html_code(h, tg_report_value_label(&v[i], label, sizeof label), TG_TEXT_CAP_NAME);
        fputs(" = ", h->out);
        put_value(h, &v[i].value);
    }
}

/* A name from the trace in a sentence (report.c's evidence and cause
** sentences), escaped for HTML. */
static void put_name(FILE *out, const char *name)
{
    tg_text_escape(name, strlen(name), TG_TEXT_CAP_NAME, 0, html_sink, out);
}

/* The evidence as a table, one row per entry (its id is what a drawn gap
** or iteration links to): the entry's sentence, as every human format
** says it (report.c: the cited row and its span in ns, an idle gap or a
** device window kept apart from the row), then the fields the sentence
** has not said. */
static void put_evidence(html *h, const tg_rule_result *r, size_t t, size_t i)
{
    if (!r->n_evidence) return;
    char id[64];
    fprintf(h->out, "<table>\n<caption class=\"meta\">Evidence: %zu row%s the query below selects</caption>\n"
                    "<thead><tr><th scope=\"col\">evidence</th><th scope=\"col\">fields</th></tr></thead>\n"
                    "<tbody>\n", r->n_evidence, r->n_evidence == 1 ? "" : "s");
    for (size_t k = 0; k < r->n_evidence; k++) {
        const tg_evidence *e = &r->evidence[k];
        fprintf(h->out, "<tr id=\"%s\"><td>", tg_html_evidence_id(t, i, k, id, sizeof id));
        tg_report_evidence_sentence(h->out, e, tg_report_origin(&h->run->traces[t]), put_name);
        fputs("</td><td>", h->out);
        for (size_t f = 0, shown = 0; f < e->n_fields; f++)
            if (!tg_report_evidence_said(e, &e->fields[f])) {
                fputs(shown++ ? ", " : "", h->out);
                put_values(h, &e->fields[f], 1);
            }
        fputs("</td></tr>\n", h->out);
    }
    fputs("</tbody>\n</table>\n", h->out);
}

/* A cause's items (docs/host.md), at most this many per window or list. */
#define CAUSE_ITEMS 4

static void put_cause_items(html *h, tg_cause_kind kind, const tg_cause_item *items, size_t n)
{
    if (!n) return;
    fputs("<ul>\n", h->out);
    for (size_t i = 0; i < n && i < CAUSE_ITEMS; i++) {
        fputs("<li>", h->out);
        tg_report_cause_item(h->out, kind, &items[i], put_name);
        fputs("</li>\n", h->out);
    }
    fputs("</ul>\n", h->out);
}

/* What the finding says about its cause, as the text report does: the
** sentence, per window of the host what it did, the call sites or
** kernels, what the capture cannot tell, and the query. */
static void put_cause(html *h, const tg_trace_result *tr, const tg_cause *c)
{
    fputs("<p><strong>Cause:</strong> ", h->out);
    tg_html_text(h, c->summary, TG_TEXT_CAP_TEXT);
    fputs("</p>\n", h->out);
    for (size_t w = 0; w < c->n_windows; w++) {
        fputs("<p class=\"meta\">", h->out);
        tg_report_cause_window(h->out, &c->windows[w], tg_report_origin(tr));
        fputs("</p>\n", h->out);
        put_cause_items(h, c->kind, c->windows[w].items, c->windows[w].n_items);
    }
    put_cause_items(h, c->kind, c->items, c->n_items);
    if (c->n_unknown) {
        fputs("<ul>\n", h->out);
        for (size_t i = 0; i < c->n_unknown; i++) {
            fputs("<li>unknown: ", h->out);
            tg_html_text(h, c->unknown[i], TG_TEXT_CAP_TEXT);
            fputs("</li>\n", h->out);
        }
        fputs("</ul>\n", h->out);
    }
    if (c->reproduce) {
        /* collapsed: a few KB of SQL a person opens when they want it */
        fprintf(h->out, "<details><summary><strong>Reproduce the cause</strong> (%s)</summary>\n<pre><code>",
                tg_report_format(tr)->reproduce_with);
        tg_html_text(h, c->reproduce, TG_TEXT_CAP_LONG);
        fputs("</code></pre></details>\n", h->out);
    }
}

static void put_comparison(html *h, const tg_rule_result *r)
{
    const tg_baseline_cmp *b = &r->baseline;
    char base[TG_FMT_BUF], cur[TG_FMT_BUF], chg[TG_FMT_BUF], lo[TG_FMT_BUF], hi[TG_FMT_BUF];
    fprintf(h->out, "<p><strong>Baseline:</strong> %s &rarr; %s (%s)", tg_fmt_num(base, sizeof base, b->value, r->metric_unit),
            tg_fmt_num(cur, sizeof cur, b->current, r->metric_unit), tg_fmt_change(chg, sizeof chg, b->change));
    if (!isnan(b->p_value)) fprintf(h->out, ", p = %.2g", b->p_value);
    fprintf(h->out, ", n = %zu baseline / %zu now", b->n_baseline, b->n_current);
    if (!isnan(b->band_lo) && !isnan(b->band_hi))
        fprintf(h->out, "; band %s &ndash; %s%s%s", tg_fmt_num(lo, sizeof lo, b->band_lo, r->metric_unit),
                tg_fmt_num(hi, sizeof hi, b->band_hi, r->metric_unit), b->band_measured ? "" : " (assumed)",
                b->outside_band ? ", outside" : "");
    fprintf(h->out, "%s</p>\n", b->regression ? ": <strong>regression</strong>"
                                : b->inconclusive ? ": <strong>inconclusive</strong>"
                                : b->improvement ? ": improvement" : "");
    char workload[160];
    if (tg_report_workload_sentence(b, workload, sizeof workload))
        fprintf(h->out, "<p><strong>Workload:</strong> %s</p>\n", workload);
}

static void put_finding(html *h, const tg_trace_result *tr, size_t t, size_t i)
{
    const tg_rule_result *r = &tr->results[i];
    char id[64];
    fprintf(h->out, "<article class=\"finding %s\" id=\"%s\" aria-labelledby=\"%s-h\">\n<h4 id=\"%s-h\">",
            badge_class[badge_of(r, h->opts)], tg_html_result_id(t, i, id, sizeof id), id, id);
    put_badge(h, r);
    fprintf(h->out, " %s <code>", tg_severity_name(r->severity));
    tg_html_text(h, r->rule, TG_TEXT_CAP_NAME);
    fputs("</code> &mdash; ", h->out);
    tg_html_text(h, r->title, TG_TEXT_CAP_TEXT);
    fputs("</h4>\n<p>", h->out);
    tg_html_text(h, r->message, TG_TEXT_CAP_TEXT);
    if (r->missing_data) fputs(" (missing data)", h->out);
    fputs("</p>\n", h->out);
    if (r->suppressed) {
        fputs("<p><strong>Suppressed:</strong> ", h->out);
        tg_html_text(h, r->suppressed, TG_TEXT_CAP_TEXT);
        fputs(" (<code>", h->out);
        tg_html_text(h, r->suppressed_at, TG_TEXT_CAP_TEXT);
        fputs("</code>)</p>\n", h->out);
    }
    if (r->n_values) {
        fputs("<p><strong>Values:</strong> ", h->out);
        put_values(h, r->values, r->n_values);
        fputs("</p>\n", h->out);
    }
    if (r->baseline.present) put_comparison(h, r);
    put_evidence(h, r, t, i);
    if (r->reproduce) {
        fprintf(h->out, "<details><summary><strong>Reproduce</strong> (%s)</summary>\n<pre><code>",
                tg_report_format(tr)->reproduce_with);
        tg_html_text(h, r->reproduce, TG_TEXT_CAP_LONG);
        fputs("</code></pre></details>\n", h->out);
    }
    if (r->cause) put_cause(h, tr, r->cause);
    if (r->advice) {
        fputs("<p><strong>Advice:</strong> ", h->out);
        tg_html_text(h, r->advice, TG_TEXT_CAP_TEXT);
        fputs("</p>\n", h->out);
    }
    fputs("</article>\n", h->out);
}

/* ------------------------------------------------------------- traces */

static void put_trace(html *h, size_t t)
{
    const tg_trace_result *tr = &h->run->traces[t];
    fprintf(h->out, "<section id=\"t%zu\" aria-labelledby=\"t%zu-h\">\n<h2 id=\"t%zu-h\">", t + 1, t + 1, t + 1);
    tg_html_text(h, tr->file ? tr->file : "?", TG_TEXT_CAP_TEXT);
    fputs("</h2>\n", h->out);
    if (tr->status != TG_OK) {
        fputs("<p class=\"verdict error\">Unreadable: ", h->out);
        tg_html_text(h, tr->error ? tr->error : "the trace could not be read", TG_TEXT_CAP_TEXT);
        fputs("</p>\n</section>\n", h->out);
        return;
    }
    fputs("<p class=\"meta\">", h->out);
    tg_report_trace_kind(h->out, tr, put_name);
    if (tr->gpu_names) {
        fputs(" &middot; ", h->out);
        tg_html_text(h, tr->gpu_names, TG_TEXT_CAP_TEXT);
    }
    if (tr->iteration_marker) {
        fputs(" &middot; iterations: ", h->out);
        tg_html_text(h, tr->iteration_marker, TG_TEXT_CAP_TEXT);
    }
    fputs("</p>\n", h->out);
    if (tr->timeline) {
        tg_html_iteration_charts(h, tr, t);
        tg_html_timeline_chart(h, tr, t);
    } else {
        fputs("<p class=\"meta\">No charts: this result does not carry the trace's timeline (a merged "
              "result; run check with -o html=FILE on the trace).</p>\n", h->out);
    }
    tg_html_contributor_chart(h, tr, t);
    fprintf(h->out, "<h3 id=\"t%zu-details\">Findings in detail</h3>\n", t + 1);
    size_t shown = 0;
    for (size_t i = 0; i < tr->n_results; i++) {
        tg_verdict v = tr->results[i].verdict;
        if (v == TG_V_FAIL || v == TG_V_INCONCLUSIVE || v == TG_V_ERROR || tr->results[i].baseline.present) {
            put_finding(h, tr, t, i);
            shown++;
        }
    }
    if (!shown) fputs("<p>No finding: every rule passed or was skipped.</p>\n", h->out);
    /* passes and skips keep an anchor for the summary's links */
    fputs("<details><summary>Rules that passed or were skipped</summary>\n<ul>\n", h->out);
    char id[64];
    for (size_t i = 0; i < tr->n_results; i++) {
        const tg_rule_result *r = &tr->results[i];
        if (r->verdict != TG_V_PASS && r->verdict != TG_V_SKIP) continue;
        if (r->baseline.present) continue;
        fprintf(h->out, "<li id=\"%s\">", tg_html_result_id(t, i, id, sizeof id));
        put_badge(h, r);
        fputs(" <code>", h->out);
        tg_html_text(h, r->rule, TG_TEXT_CAP_NAME);
        fputs("</code> ", h->out);
        tg_html_text(h, r->message ? r->message : r->title, TG_TEXT_CAP_TEXT);
        fputs("</li>\n", h->out);
    }
    fputs("</ul>\n</details>\n</section>\n", h->out);
}

/* Suppressions to review (unused, expired, exceeded). */
static void put_review(html *h)
{
    bool any = false;
    for (size_t i = 0; i < h->run->n_suppressions; i++) {
        char sentence[512];
        const tg_suppression_use *u = &h->run->suppressions[i];
        if (!tg_suppression_sentence(u, sentence, sizeof sentence)[0]) continue;
        if (!any) fputs("<p><strong>Suppressions to review:</strong></p>\n<ul class=\"review\">\n", h->out);
        any = true;
        fputs("<li><code>", h->out);
        tg_html_text(h, u->file, TG_TEXT_CAP_TEXT);
        fprintf(h->out, ":%d</code>: ", u->line);
        tg_html_text(h, sentence, TG_TEXT_CAP_TEXT);
        fputs("</li>\n", h->out);
    }
    if (any) fputs("</ul>\n", h->out);
}

TG_REPORT_WRITER(tg_report_html)
{
    (void)rs;   /* lists no rules */
    html h = {out, opts, run};
    char line[512];
    tg_report_verdict_line(run, opts, line, sizeof line);
    tg_run_state state = tg_report_run_state(run, opts);
    put_head(&h, line);
    fprintf(out, "<header class=\"top\" role=\"banner\">\n<h1>tracegate report</h1>\n"
                 "<p class=\"verdict %s\" role=\"status\">", tg_run_state_name(state));
    tg_html_text(&h, line, TG_TEXT_CAP_TEXT);
    fprintf(out, "</p>\n<p class=\"meta\">%s &middot; tracegate %s</p>\n", tg_run_state_sentence(state),
            opts->tool_version ? opts->tool_version : "");
    for (size_t i = 0; i < opts->n_notes; i++) {   /* about the whole run (merge) */
        fputs("<p class=\"note\" role=\"note\"><strong>Note:</strong> ", out);
        tg_html_text(&h, opts->notes[i], TG_TEXT_CAP_TEXT);
        fputs("</p>\n", out);
    }
    fputs("</header>\n<nav aria-label=\"Traces\"><ul>\n", out);
    for (size_t t = 0; t < run->n_traces; t++) {
        fprintf(out, "<li><a href=\"#t%zu\">", t + 1);
        tg_html_text(&h, run->traces[t].file ? run->traces[t].file : "?", TG_TEXT_CAP_TEXT);
        fputs("</a></li>\n", out);
    }
    fputs("</ul></nav>\n<main>\n", out);
    put_review(&h);
    put_summary(&h);
    for (size_t t = 0; t < run->n_traces; t++) put_trace(&h, t);
    fputs("</main>\n<footer class=\"meta\" style=\"padding:0 24px 24px\">Numbers are printed as tracegate's "
          "text report prints them; the JSON report (-o json=FILE) keeps the raw values.</footer>\n"
          "</body>\n</html>\n", out);
    return ferror(out) ? TG_EINTERNAL : TG_OK;
}
