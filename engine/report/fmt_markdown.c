/*
** Markdown for pull-request comments and the GitHub job summary: the
** verdict, the findings that fail the run in detail (message, advice,
** values, evidence table, reproduce SQL, cause), a table of every rule
** result (gating first, passes last), the other findings, the baseline
** comparisons and suppressions to review. Every string goes through
** tg_text_escape (engine/common/text.h: controls and invalid UTF-8 shown
** escaped, names capped), then markdown's own escaping: ASCII punctuation
** that markdown interprets gets a backslash, newlines become <br>, so a
** kernel named `__global__` or holding a `|` cannot break the table.
**
** Size: GitHub refuses a comment over 65,536 characters and drops a job
** summary over 1 MiB whole (report.h, TG_REPORT_COMMENT_MAX and
** TG_REPORT_SUMMARY_MAX). The report is built from blocks, each a whole
** markdown construct (a table row, a finding's section with its closed
** fence, a list item), rendered into memory first; a block that would
** pass the budget is left out and counted, a finding then tried in a
** short form (heading and message), so later small blocks still get in
** and the gating findings, rendered first, are the last to go. A final
** line counts what was left out and names the HTML and JSON reports that
** hold it. Long runs (thousands of ranks) are capped by rows too: at most
** 1000 table rows and 50 finding sections, counted the same way.
*/
#include "report_int.h"
#include "../common/units.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define MAX_ROWS 1000      /* rule table rows */
#define MAX_DETAILS 50     /* finding sections */

/* What a report left out, by kind, for its last line. */
typedef enum left_kind { LEFT_FINDING, LEFT_GATING, LEFT_ROW, LEFT_COMPARISON, LEFT_OTHER, LEFT_COUNT } left_kind;

typedef struct md {
    FILE *out;             /* the block being rendered: a memory stream over blk */
    char *blk;
    size_t blk_len;
    FILE *doc;             /* the report so far, a memory stream */
    size_t used;           /* bytes in doc */
    size_t budget;         /* bytes the blocks may take: the limit less the closing line's room */
    size_t left[LEFT_COUNT];
    size_t shortened;      /* findings shown in their short form */
    bool err;              /* out of memory or a write error */
} md;

/* Start a block; false (nothing to render) when memory ran out. */
static bool block_open(md *m)
{
    m->blk = NULL;
    m->blk_len = 0;
    m->out = m->err ? NULL : open_memstream(&m->blk, &m->blk_len);
    if (!m->out) m->err = true;
    return m->out != NULL;
}

/* End the block: into the report when it fits the budget, else dropped.
** Returns whether it was kept. */
static bool block_close(md *m)
{
    if (fclose(m->out) != 0) m->err = true;
    m->out = NULL;
    bool fits = !m->err && m->used + m->blk_len <= m->budget;
    if (fits) {
        fwrite(m->blk, 1, m->blk_len, m->doc);
        m->used += m->blk_len;
    }
    free(m->blk);
    m->blk = NULL;
    return fits;
}

/* A block of fixed text (a heading, a table's end). */
static bool put_block(md *m, const char *text)
{
    if (!block_open(m)) return false;
    fputs(text, m->out);
    return block_close(m);
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
static void put_evidence(FILE *out, const tg_rule_result *r, int64_t origin)
{
    fputs("| evidence | fields |\n| --- | --- |\n", out);
    for (size_t i = 0; i < r->n_evidence; i++) {
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
static void put_cause(FILE *out, const tg_cause *c)
{
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
    if (c->reproduce) put_sql(out, c->reproduce);
}

/* A finding's section; brief: its heading and message only, for a
** finding whose whole section does not fit. */
static void put_finding(FILE *out, const tg_trace_result *t, const tg_rule_result *r, bool brief)
{
    fprintf(out, "### %s ", tg_verdict_upper(r->verdict));
    put_code(out, r->rule);
    fputs(" in ", out);
    put_code(out, tg_report_basename(t->file));
    fprintf(out, " (%s)\n\n", tg_severity_name(r->severity));
    put_md(out, r->message ? r->message : r->title, TG_TEXT_CAP_TEXT);
    fputs("\n\n", out);
    if (brief) {
        fputs("_Its values, evidence and query did not fit here; the HTML and JSON reports have them._\n\n", out);
        return;
    }
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
    if (r->n_evidence) put_evidence(out, r, tg_report_origin(t));
    if (r->reproduce) put_sql(out, r->reproduce);
    if (r->cause) put_cause(out, r->cause);
}

/* One finding, whole or short or counted as left out. */
static void add_finding(md *m, const tg_trace_result *t, const tg_rule_result *r, bool gating, size_t *shown)
{
    for (int brief = 0; brief < 2 && *shown < MAX_DETAILS; brief++) {
        if (!block_open(m)) break;
        put_finding(m->out, t, r, brief);
        if (block_close(m)) {
            ++*shown;
            m->shortened += brief;
            return;
        }
    }
    m->left[gating ? LEFT_GATING : LEFT_FINDING]++;
}

/* A finding: a failure or an inconclusive comparison not suppressed. */
static bool is_finding(const tg_rule_result *r)
{
    return (r->verdict == TG_V_FAIL || r->verdict == TG_V_INCONCLUSIVE) && !r->suppressed;
}

/* The findings that make the run fail (gating), or the others. */
static void put_findings(md *m, const tg_run_result *run, const tg_report_opts *opts, bool gating,
                         size_t *shown)
{
    bool heading = false;
    for (size_t t = 0; t < run->n_traces; t++)
        for (size_t i = 0; i < run->traces[t].n_results; i++) {
            const tg_rule_result *r = &run->traces[t].results[i];
            if (!is_finding(r) || tg_report_gates(r, opts) != gating) continue;
            if (!heading)
                heading = put_block(m, gating ? "## Findings that fail the run\n\n"
                                              : "## Other findings (not failing the run)\n\n");
            if (heading) add_finding(m, &run->traces[t], r, gating, shown);
            else m->left[gating ? LEFT_GATING : LEFT_FINDING]++;
        }
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

/* Rows of a table: the header goes with the first row that fits, so a
** table is never a header alone; a row that does not fit is counted. */
typedef struct table {
    md *m;
    const char *header;
    bool open;
    left_kind kind;
} table;

static FILE *row_open(table *tb)
{
    if (!block_open(tb->m)) return NULL;
    if (!tb->open) fputs(tb->header, tb->m->out);
    return tb->m->out;
}

static bool row_close(table *tb)
{
    if (block_close(tb->m)) return tb->open = true;
    tb->m->left[tb->kind]++;
    return false;
}

static void table_end(table *tb)
{
    if (tb->open) put_block(tb->m, "\n");
}

static void put_baselines(md *m, const tg_run_result *run)
{
    table tb = {m, "## Baseline comparison\n\n"
                   "| trace | rule | metric | baseline | current | change | p-value | n (baseline/current) | "
                   "workload | result |\n"
                   "| --- | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | --- |\n", false, LEFT_COMPARISON};
    for (size_t t = 0; t < run->n_traces; t++)
        for (size_t i = 0; i < run->traces[t].n_results; i++) {
            const tg_rule_result *r = &run->traces[t].results[i];
            if (!r->baseline.present) continue;
            FILE *out = row_open(&tb);
            if (!out) return;
            put_baseline_row(out, &run->traces[t], r);
            row_close(&tb);
        }
    table_end(&tb);
}

static void put_unreadable(md *m, const tg_run_result *run)
{
    table tb = {m, "Unreadable traces:\n\n", false, LEFT_OTHER};
    for (size_t t = 0; t < run->n_traces; t++)
        if (run->traces[t].status != TG_OK) {
            FILE *out = row_open(&tb);
            if (!out) return;
            fputs("- ", out);
            put_code(out, run->traces[t].file);
            fputs(": ", out);
            put_md(out, run->traces[t].error ? run->traces[t].error : "the trace could not be read",
                   TG_TEXT_CAP_TEXT);
            fputc('\n', out);
            row_close(&tb);
        }
    table_end(&tb);
}

/* The order of the results table: what fails the run, other findings,
** rules not evaluated, suppressed, skipped, passed; so what a cut drops
** first is a pass. */
static int table_rank(const tg_rule_result *r, const tg_report_opts *opts)
{
    if (is_finding(r)) return tg_report_gates(r, opts) ? 0 : 1;
    if (r->verdict == TG_V_ERROR) return 2;
    if (r->suppressed) return 3;
    return r->verdict == TG_V_SKIP ? 4 : 5;
}

static void put_result_row(FILE *out, const tg_trace_result *t, const tg_rule_result *r)
{
    fputs("| ", out);
    put_code(out, tg_report_basename(t->file));
    fputs(" | ", out);
    put_code(out, r->rule);
    bool bold = is_finding(r);
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

static void put_table(md *m, const tg_run_result *run, const tg_report_opts *opts)
{
    table tb = {m, "## Results\n\n| trace | rule | severity | status | count | message |\n"
                   "| --- | --- | --- | --- | ---: | --- |\n", false, LEFT_ROW};
    size_t rows = 0;
    for (int rank = 0; rank <= 5; rank++)
        for (size_t t = 0; t < run->n_traces; t++)
            for (size_t i = 0; i < run->traces[t].n_results; i++) {
                const tg_rule_result *r = &run->traces[t].results[i];
                if (table_rank(r, opts) != rank) continue;
                if (rows >= MAX_ROWS) {
                    m->left[LEFT_ROW]++;
                    continue;
                }
                FILE *out = row_open(&tb);
                if (!out) return;
                put_result_row(out, &run->traces[t], r);
                rows += row_close(&tb);
            }
    table_end(&tb);
}

/* Suppressions that did not simply apply (unused, expired, exceeded). */
static void put_suppressions(md *m, const tg_run_result *run)
{
    table tb = {m, "Suppressions to review:\n\n", false, LEFT_OTHER};
    for (size_t i = 0; i < run->n_suppressions; i++) {
        char sentence[512];
        const tg_suppression_use *u = &run->suppressions[i];
        if (!tg_suppression_sentence(u, sentence, sizeof sentence)[0]) continue;
        FILE *out = row_open(&tb);
        if (!out) return;
        fputs("- ", out);
        put_code(out, u->file);
        fprintf(out, ":%d: ", u->line);
        put_md(out, sentence, TG_TEXT_CAP_TEXT);
        fputc('\n', out);
        row_close(&tb);
    }
    table_end(&tb);
}

static void put_head(md *m, const tg_run_result *run, const tg_report_opts *opts)
{
    char line[512];
    tg_report_verdict_line(run, opts, line, sizeof line);
    if (!block_open(m)) return;
    fprintf(m->out, "## tracegate: %s\n\n**%s**\n\n", line,
            tg_run_state_sentence(tg_report_run_state(run, opts)));
    block_close(m);
    for (size_t i = 0; i < opts->n_notes; i++) {   /* about the whole run (merge) */
        if (!block_open(m)) return;
        fputs("> **Note:** ", m->out);
        put_md(m->out, opts->notes[i], TG_TEXT_CAP_TEXT);
        fputs("\n\n", m->out);
        if (!block_close(m)) m->left[LEFT_OTHER]++;
    }
}

/* "N thing(s)" into the list of what was left out. */
static void put_left(FILE *out, size_t n, const char *one, const char *many, bool *first)
{
    if (!n) return;
    fprintf(out, "%s%zu %s", *first ? "" : ", ", n, n == 1 ? one : many);
    *first = false;
}

/* The closing line, "... and 37 more findings (2 of them failing the
** run), the details of 5 findings, left out to stay within LIMIT: see
** the HTML report `r.html` or the JSON report `r.json`, which hold every
** result."; with every count at its widest it measures its own room. */
static void put_closing(FILE *out, const size_t left[LEFT_COUNT], size_t shortened, const tg_report_opts *opts,
                        const char *limit)
{
    bool first = true;
    fputs("\n---\n\n_\xe2\x80\xa6 and ", out);
    put_left(out, left[LEFT_GATING] + left[LEFT_FINDING], "more finding", "more findings", &first);
    if (left[LEFT_GATING]) fprintf(out, " (%zu of them failing the run)", left[LEFT_GATING]);
    put_left(out, left[LEFT_ROW], "more result row", "more result rows", &first);
    put_left(out, left[LEFT_COMPARISON], "more baseline comparison", "more baseline comparisons", &first);
    put_left(out, left[LEFT_OTHER], "more line", "more lines", &first);
    if (shortened)
        fprintf(out, "%sthe details of %zu %s", first ? "" : ", ", shortened, shortened == 1 ? "finding" : "findings");
    fprintf(out, ", left out to stay within %s: see ", limit);
    if (opts->html_path) {
        fputs("the HTML report ", out);
        put_code(out, opts->html_path);
    }
    if (opts->json_path) {
        fputs(opts->html_path ? " or the JSON report " : "the JSON report ", out);
        put_code(out, opts->json_path);
    }
    if (!opts->html_path && !opts->json_path) fputs("the HTML or JSON report (`-o html=FILE`, `-o json=FILE`)", out);
    fputs(", which hold every result._\n", out);
}

static void render(md *m, const tg_run_result *run, const tg_report_opts *opts)
{
    size_t shown = 0;
    put_head(m, run, opts);
    put_unreadable(m, run);
    put_findings(m, run, opts, true, &shown);
    put_table(m, run, opts);
    put_findings(m, run, opts, false, &shown);
    put_baselines(m, run);
    put_suppressions(m, run);
}

tg_status tg_report_markdown_within(const tg_run_result *run, const tg_report_opts *opts, FILE *out,
                                    size_t max_bytes, const char *limit)
{
    /* the closing line's room: as long as it can be, every count at its widest */
    size_t widest[LEFT_COUNT];
    for (size_t i = 0; i < LEFT_COUNT; i++) widest[i] = SIZE_MAX;
    char *note = NULL;
    size_t note_len = 0;
    FILE *f = open_memstream(&note, &note_len);
    if (!f) return TG_EINTERNAL;
    put_closing(f, widest, SIZE_MAX, opts, limit);
    if (fclose(f) != 0) {
        free(note);
        return TG_EINTERNAL;
    }
    free(note);
    if (max_bytes < note_len) return TG_OK;   /* a job summary full already: nothing fits */

    char *text = NULL;
    size_t len = 0;
    md m = {.doc = open_memstream(&text, &len)};
    if (!m.doc) return TG_EINTERNAL;
    m.budget = max_bytes > note_len ? max_bytes - note_len : 0;
    render(&m, run, opts);
    bool cut = m.shortened > 0;
    for (size_t i = 0; i < LEFT_COUNT; i++) cut = cut || m.left[i] > 0;
    if (cut) put_closing(m.doc, m.left, m.shortened, opts, limit);
    bool ok = !m.err && fflush(m.doc) == 0 && !ferror(m.doc);
    if (fclose(m.doc) != 0) ok = false;
    if (ok) fwrite(text, 1, len, out);
    free(text);
    return ok && !ferror(out) ? TG_OK : TG_EINTERNAL;
}

TG_REPORT_WRITER(tg_report_markdown)
{
    (void)rs;   /* lists no rules */
    return tg_report_markdown_within(run, opts, out, TG_REPORT_COMMENT_MAX, TG_REPORT_COMMENT_LIMIT);
}
