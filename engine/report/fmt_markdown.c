/*
** Markdown for pull-request comments and the GitHub job summary: the
** verdict, one table row per rule result, then for each failure its
** message, advice, values, evidence table and reproduce SQL, and a table
** of baseline comparisons. Every string goes through tg_text_escape
** (engine/common/text.h: controls and invalid UTF-8 shown escaped, names
** capped), then markdown's own escaping: ASCII punctuation that markdown
** interprets gets a backslash, newlines become <br>, so a kernel named
** `__global__` or holding a `|` cannot break the table.
**
** Size: GitHub drops a job summary over 1 MiB whole, so the report is
** rendered into memory, remembering after each complete block (a table
** row, a failure section) where it could end; when it would pass the
** budget it ends at the last such point with a line saying it was cut.
** Long runs (thousands of ranks) are capped by rows first: at most 1000
** table rows and 50 failure sections.
*/
#include "report_int.h"
#include "../common/units.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define MAX_ROWS 1000      /* rule table rows */
#define MAX_DETAILS 50     /* failure sections */
/* Room kept for the note that says the report was cut. */
#define CUT_NOTE_ROOM 512

typedef struct md {
    FILE *out;             /* a memory stream */
    size_t budget;         /* bytes the report may take before the note */
    size_t safe;           /* end of the last complete block within budget */
    bool full;             /* the budget is reached: render nothing more */
} md;

/* After a complete block: remember where the report may end, or stop
** when it has grown past the budget. Returns false once full. */
static bool mark(md *m)
{
    if (m->full) return false;
    long pos = ftell(m->out);
    if (pos < 0 || (size_t)pos > m->budget) {
        m->full = true;
        return false;
    }
    m->safe = (size_t)pos;
    return true;
}

/* ---------------------------------------------------------------- escaping */

static void md_sink(void *ctx, const char *s, size_t n)
{
    FILE *out = ctx;
    for (size_t i = 0; i < n; i++) {
        if (s[i] == '\n') {
            fputs("<br>", out);
            continue;
        }
        if (strchr("\\`*_[]<>|~&#", s[i])) fputc('\\', out);
        fputc(s[i], out);
    }
}

/* Text in a table cell or a paragraph. */
static void put_md(FILE *out, const char *s, size_t cap)
{
    s = s ? s : "";
    tg_text_escape(s, strlen(s), cap, TG_TEXT_KEEP_NEWLINES, md_sink, out);
}

static int longest_backtick_run(const char *s)
{
    int run = 0, longest = 0;
    for (; *s; s++) {
        run = *s == '`' ? run + 1 : 0;
        if (run > longest) longest = run;
    }
    return longest;
}

/* An inline code span (ids, file names): only | needs care, newlines are
** shown as \n; the fence grows past any backtick run inside, padded with
** spaces then. */
static void put_code(FILE *out, const char *s)
{
    s = s ? s : "";
    int longest = longest_backtick_run(s);
    for (int i = 0; i <= longest; i++) fputc('`', out);
    if (longest) fputc(' ', out);
    tg_text_escape(s, strlen(s), TG_TEXT_CAP_NAME, 0, tg_report_backslash_sink,
                   &(tg_backslash_sink){out, "|"});
    if (longest) fputc(' ', out);
    for (int i = 0; i <= longest; i++) fputc('`', out);
}

/* A fenced block: longer than any backtick run inside, so nothing in the
** SQL can close it. */
static void put_sql(FILE *out, const char *sql)
{
    int longest = longest_backtick_run(sql);
    int fence = longest >= 3 ? longest + 1 : 3;
    for (int i = 0; i < fence; i++) fputc('`', out);
    fputs("sql\n", out);
    tg_file_sink r = {.out = out, .last = '\n'};
    tg_text_escape(sql, strlen(sql), TG_TEXT_CAP_LONG, TG_TEXT_KEEP_NEWLINES, tg_report_file_sink, &r);
    if (r.last != '\n') fputc('\n', out);
    for (int i = 0; i < fence; i++) fputc('`', out);
    fputs("\n\n", out);
}

/* ---------------------------------------------------------------- blocks */

static void put_value(FILE *out, const tg_named_value *v)
{
    char buf[TG_FMT_BUF];
    if (v->value.type == TG_TY_STRING) put_code(out, v->value.u.s);
    else put_md(out, tg_fmt_value(buf, sizeof buf, v->value), TG_TEXT_CAP_NAME);
}

static void put_values(FILE *out, const tg_named_value *v, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        char label[128];
        fputs(i ? ", " : "", out);
        put_md(out, tg_report_value_label(&v[i], label, sizeof label), TG_TEXT_CAP_NAME);
        fputs(" = ", out);
        put_value(out, &v[i]);
    }
}

static void put_name(FILE *out, const char *name)
{
    put_md(out, name, TG_TEXT_CAP_NAME);
}

/* The evidence as a table: each entry's sentence (report.c: the cited
** row, its span in ns, an idle gap or a device window kept apart from
** it) and the fields the sentence has not said. */
static void put_evidence(md *m, const tg_rule_result *r, int64_t origin)
{
    FILE *out = m->out;
    fputs("| evidence | fields |\n| --- | --- |\n", out);
    for (size_t i = 0; i < r->n_evidence && mark(m); i++) {
        const tg_evidence *e = &r->evidence[i];
        fputs("| ", out);
        tg_report_evidence_sentence(out, e, origin, put_name);
        fputs(" | ", out);
        for (size_t k = 0, shown = 0; k < e->n_fields; k++)
            if (!tg_report_evidence_said(e, &e->fields[k])) {
                fputs(shown++ ? ", " : "", out);
                put_values(out, &e->fields[k], 1);
            }
        fputs(" |\n", out);
    }
    fputc('\n', out);
}

/* What changed per steady iteration, as a table. */
static void put_changed(FILE *out, const tg_baseline_cmp *b)
{
    fputs("**What changed** (per steady iteration):\n\n| | name | baseline | now | change | launches |\n"
          "| --- | --- | ---: | ---: | ---: | ---: |\n", out);
    for (size_t i = 0; i < b->n_contributors; i++) {
        const tg_contributor *x = &b->contributors[i];
        char then[TG_FMT_BUF], now[TG_FMT_BUF], d[TG_FMT_BUF];
        tg_fmt_num(then, sizeof then, x->then_time, TG_UNIT_NS);
        tg_fmt_num(now, sizeof now, x->now_time, TG_UNIT_NS);
        tg_fmt_num(d, sizeof d, fabs(x->delta), TG_UNIT_NS);
        fprintf(out, "| %s | ", tg_contrib_status_name(x->status));
        put_code(out, x->name);
        fprintf(out, " | %s | %s | %s%s | ", then, now, x->delta >= 0 ? "+" : "-", d);
        if (x->kind != TG_WORK_NVTX) fprintf(out, "%.4g \xe2\x86\x92 %.4g", x->then_launches, x->now_launches);
        else fputs("NVTX range", out);
        fputs(" |\n", out);
    }
    fputc('\n', out);
}

/* The cause (docs/host.md): its sentence, what is unknown, the first
** window's or list's items, and its query. */
static void put_cause(md *m, const tg_cause *c)
{
    FILE *out = m->out;
    fputs("**Cause:** ", out);
    put_md(out, c->summary, TG_TEXT_CAP_TEXT);
    fputs("\n\n", out);
    for (size_t i = 0; i < c->n_unknown; i++) {
        fputs("- ", out);
        put_md(out, c->unknown[i], TG_TEXT_CAP_TEXT);
        fputc('\n', out);
    }
    if (c->n_unknown) fputc('\n', out);
    const tg_cause_item *items = c->n_windows ? c->windows[0].items : c->items;
    size_t n = c->n_windows ? c->windows[0].n_items : c->n_items;
    if (n) {
        fputs(c->kind == TG_CAUSE_HOST ? "| source | name | thread | count | time | share |\n|---|---|---|---|---|---|\n"
                                       : "| name | module | count | time | share |\n|---|---|---|---|---|\n", out);
        for (size_t i = 0; i < n && i < 5; i++) {
            char tm[TG_FMT_BUF], sh[TG_FMT_BUF];
            fputs("| ", out);
            if (c->kind == TG_CAUSE_HOST) fprintf(out, "%s | ", items[i].source);
            put_code(out, items[i].name ? items[i].name : "?");
            fputs(" | ", out);
            if (c->kind == TG_CAUSE_HOST) {
                if (items[i].thread) put_code(out, items[i].thread);
                fprintf(out, " (tid %lld) | ", (long long)items[i].tid);
            } else {
                if (items[i].module) put_code(out, items[i].module);
                fputs(" | ", out);
            }
            fprintf(out, "%lld | %s | %s |\n", (long long)items[i].count,
                    tg_fmt_num(tm, sizeof tm, items[i].time, TG_UNIT_NS),
                    tg_fmt_num(sh, sizeof sh, items[i].share, TG_UNIT_RATIO));
        }
        fputc('\n', out);
    }
    if (c->reproduce && !m->full) put_sql(out, c->reproduce);
}

static void put_failure(md *m, const tg_trace_result *t, const tg_rule_result *r)
{
    FILE *out = m->out;
    fprintf(out, "### %s ", tg_verdict_upper(r->verdict));
    put_code(out, r->rule);
    fputs(" in ", out);
    put_code(out, tg_report_basename(t->file));
    fprintf(out, " (%s)\n\n", tg_severity_name(r->severity));
    put_md(out, r->message ? r->message : r->title, TG_TEXT_CAP_TEXT);
    fputs("\n\n", out);
    if (r->advice) {
        fputs("**Advice:** ", out);
        put_md(out, r->advice, TG_TEXT_CAP_TEXT);
        fputs("\n\n", out);
    }
    if (r->n_values) {
        fputs("**Values:** ", out);
        put_values(out, r->values, r->n_values);
        fputs("\n\n", out);
    }
    char workload[160];
    if (tg_report_workload_sentence(&r->baseline, workload, sizeof workload))
        fprintf(out, "**Workload:** %s\n\n", workload);
    if (r->baseline.n_contributors) put_changed(out, &r->baseline);
    if (r->n_evidence) put_evidence(m, r, tg_report_origin(t));
    if (r->reproduce && !m->full) put_sql(out, r->reproduce);
    if (r->cause) put_cause(m, r->cause);
}

static void put_baseline_row(FILE *out, const tg_trace_result *t, const tg_rule_result *r)
{
    const tg_baseline_cmp *b = &r->baseline;
    char base[TG_FMT_BUF], cur[TG_FMT_BUF], chg[TG_FMT_BUF];
    fputs("| ", out);
    put_code(out, tg_report_basename(t->file));
    fputs(" | ", out);
    put_code(out, r->rule);
    fputs(" | ", out);
    if (r->metric) put_code(out, r->metric);
    fprintf(out, " | %s | %s | %s | ", tg_fmt_num(base, sizeof base, b->value, r->metric_unit),
            tg_fmt_num(cur, sizeof cur, b->current, r->metric_unit), tg_fmt_change(chg, sizeof chg, b->change));
    if (isnan(b->p_value)) fputs("n/a", out);
    else fprintf(out, "%.2g", b->p_value);
    char match[TG_FMT_BUF];
    fprintf(out, " | %zu/%zu | %s | %s |\n", b->n_baseline, b->n_current,
            tg_fmt_num(match, sizeof match, b->workload_match, TG_UNIT_RATIO),
            b->regression ? "**regression**" : b->inconclusive ? "**inconclusive**"
            : b->improvement ? "improvement" : b->outside_band ? "outside the band, passed (see the message)"
            : "no significant change");
}

static void put_baselines(md *m, const tg_run_result *run)
{
    bool header = false;
    for (size_t t = 0; t < run->n_traces; t++)
        for (size_t i = 0; i < run->traces[t].n_results && mark(m); i++) {
            const tg_rule_result *r = &run->traces[t].results[i];
            if (!r->baseline.present) continue;
            if (!header) {
                fputs("## Baseline comparison\n\n"
                      "| trace | rule | metric | baseline | current | change | p-value | n (baseline/current) | "
                      "workload | result |\n"
                      "| --- | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | --- |\n", m->out);
                header = true;
            }
            put_baseline_row(m->out, &run->traces[t], r);
        }
    if (header) fputc('\n', m->out);
    mark(m);
}

static void put_unreadable(md *m, const tg_run_result *run)
{
    bool any = false;
    for (size_t t = 0; t < run->n_traces && mark(m); t++)
        if (run->traces[t].status != TG_OK) {
            if (!any) fputs("Unreadable traces:\n\n", m->out);
            any = true;
            fputs("- ", m->out);
            put_code(m->out, run->traces[t].file);
            fputs(": ", m->out);
            put_md(m->out, run->traces[t].error ? run->traces[t].error : "the trace could not be read",
                   TG_TEXT_CAP_TEXT);
            fputc('\n', m->out);
        }
    if (any) fputc('\n', m->out);
}

static void put_table(md *m, const tg_run_result *run)
{
    FILE *out = m->out;
    size_t rows = 0, total = 0;
    fputs("| trace | rule | severity | status | count | message |\n"
          "| --- | --- | --- | --- | ---: | --- |\n", out);
    for (size_t t = 0; t < run->n_traces; t++)
        for (size_t i = 0; i < run->traces[t].n_results; i++, total++) {
            const tg_rule_result *r = &run->traces[t].results[i];
            if (rows >= MAX_ROWS || !mark(m)) continue;
            rows++;
            fputs("| ", out);
            put_code(out, tg_report_basename(run->traces[t].file));
            fputs(" | ", out);
            put_code(out, r->rule);
            bool bold = (r->verdict == TG_V_FAIL || r->verdict == TG_V_INCONCLUSIVE) && !r->suppressed;
            fprintf(out, " | %s | %s%s%s | ", tg_severity_name(r->severity), bold ? "**" : "",
                    r->suppressed ? "SUPPRESSED" : tg_verdict_upper(r->verdict), bold ? "**" : "");
            if (r->count != TG_NULL_I64) fprintf(out, "%lld", (long long)r->count);
            fputs(" | ", out);
            put_md(out, r->message ? r->message : r->title, TG_TEXT_CAP_TEXT);
            if (r->suppressed) {
                fputs(" (suppressed: ", out);
                put_md(out, r->suppressed, TG_TEXT_CAP_TEXT);
                fputs(", ", out);
                put_code(out, r->suppressed_at ? r->suppressed_at : "?");
                fputc(')', out);
            }
            fputs(" |\n", out);
        }
    fputc('\n', out);
    if (total > rows && !m->full) fprintf(out, "_%zu more results not shown; see the JSON report._\n\n", total - rows);
}

static void put_failures(md *m, const tg_run_result *run)
{
    size_t details = 0, failures = 0;
    for (size_t t = 0; t < run->n_traces; t++)
        for (size_t i = 0; i < run->traces[t].n_results; i++) {
            const tg_rule_result *r = &run->traces[t].results[i];
            if ((r->verdict != TG_V_FAIL && r->verdict != TG_V_INCONCLUSIVE) || r->suppressed) continue;
            if (failures++ == 0 && mark(m)) fputs("## Failures and inconclusive comparisons\n\n", m->out);
            if (details < MAX_DETAILS && mark(m)) {
                details++;
                put_failure(m, &run->traces[t], r);
            }
        }
    if (failures > details && mark(m))
        fprintf(m->out, "_%zu more failures not detailed; see the JSON report._\n\n", failures - details);
}

/* Suppressions that did not simply apply (unused, expired, exceeded). */
static void put_suppressions(md *m, const tg_run_result *run)
{
    bool any = false;
    for (size_t i = 0; i < run->n_suppressions && mark(m); i++) {
        char sentence[512];
        const tg_suppression_use *u = &run->suppressions[i];
        if (!tg_suppression_sentence(u, sentence, sizeof sentence)[0]) continue;
        if (!any) fputs("Suppressions to review:\n\n", m->out);
        any = true;
        char at[64];
        snprintf(at, sizeof at, ":%d", u->line);
        fputs("- ", m->out);
        put_code(m->out, u->file);
        fputs(at, m->out);
        fputs(": ", m->out);
        put_md(m->out, sentence, TG_TEXT_CAP_TEXT);
        fputc('\n', m->out);
    }
    if (any) fputc('\n', m->out);
}

static void render(md *m, const tg_run_result *run, const tg_report_opts *opts)
{
    char line[512];
    tg_report_verdict_line(run, opts, line, sizeof line);
    fprintf(m->out, "## tracegate: %s\n\n**%s**\n\n", line,
            tg_run_state_sentence(tg_report_run_state(run, opts)));
    for (size_t i = 0; i < opts->n_notes; i++) {   /* about the whole run (merge) */
        fputs("> **Note:** ", m->out);
        put_md(m->out, opts->notes[i], TG_TEXT_CAP_TEXT);
        fputs("\n\n", m->out);
    }
    put_unreadable(m, run);
    put_suppressions(m, run);
    put_table(m, run);
    put_failures(m, run);
    put_baselines(m, run);
}

tg_status tg_report_markdown_within(const tg_run_result *run, const tg_report_opts *opts, FILE *out,
                                    size_t max_bytes)
{
    char *buf = NULL;
    size_t len = 0;
    md m = {.out = open_memstream(&buf, &len)};
    if (!m.out) return TG_EINTERNAL;
    m.budget = max_bytes > CUT_NOTE_ROOM ? max_bytes - CUT_NOTE_ROOM : 0;
    render(&m, run, opts);
    bool ok = fflush(m.out) == 0 && !ferror(m.out);
    if (ok && len > m.budget) m.full = true;
    if (fclose(m.out) != 0) ok = false;
    if (ok && !m.full) {
        fwrite(buf, 1, len, out);
    } else if (ok) {
        fwrite(buf, 1, m.safe, out);
        fprintf(out, "\n_The report was cut here to stay within %zu bytes (GitHub drops a job summary over "
                     "1 MiB); the JSON report has every result._\n", max_bytes);
    }
    free(buf);
    return ok && !ferror(out) ? TG_OK : TG_EINTERNAL;
}

TG_REPORT_WRITER(tg_report_markdown)
{
    (void)rs;   /* lists no rules */
    return tg_report_markdown_within(run, opts, out, TG_REPORT_MARKDOWN_MAX);
}
