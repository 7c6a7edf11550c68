/*
** Markdown for pull-request comments and the GitHub job summary: the
** verdict, one table row per rule result, then for each failure its
** message, advice, values, evidence table and reproduce SQL, and a table
** of baseline comparisons. Trace text is escaped (ASCII punctuation that
** markdown interprets gets a backslash, newlines become <br>) so a kernel
** named `__global__` or holding a `|` cannot break the table. Long runs
** (thousands of ranks) are capped: a job summary holds at most 1 MiB.
*/
#include "report_int.h"
#include "units.h"

#include <math.h>
#include <string.h>

#define MAX_ROWS 1000      /* rule table rows */
#define MAX_DETAILS 50     /* failure sections */

/* Text in a table cell or a paragraph. */
static void put_md(FILE *out, const char *s)
{
    for (const unsigned char *p = (const unsigned char *)(s ? s : ""); *p; p++) {
        if (*p == '\n') fputs("<br>", out);
        else if (*p == '\r' || *p == '\t') fputc(' ', out);
        else if (*p < 0x20 || *p == 0x7f) continue;
        else {
            if (strchr("\\`*_[]<>|~&#", *p)) fputc('\\', out);
            fputc(*p, out);
        }
    }
}

/* An inline code span (ids, file names): only | and newlines need care;
** the fence grows past any backtick run inside, padded with spaces then. */
static void put_code(FILE *out, const char *s)
{
    s = s ? s : "";
    int run = 0, longest = 0;
    for (const char *p = s; *p; p++) {
        run = *p == '`' ? run + 1 : 0;
        if (run > longest) longest = run;
    }
    for (int i = 0; i <= longest; i++) fputc('`', out);
    if (longest) fputc(' ', out);
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (*p == '|') fputs("\\|", out);
        else if (*p < 0x20 || *p == 0x7f) fputc(' ', out);
        else fputc(*p, out);
    }
    if (longest) fputc(' ', out);
    for (int i = 0; i <= longest; i++) fputc('`', out);
}

static void put_value(FILE *out, const tg_named_value *v)
{
    char buf[TG_UNITS_BUF];
    if (v->value.type == TG_TY_STRING) put_code(out, v->value.u.s);
    else put_md(out, tg_units_value(buf, sizeof buf, v->name, &v->value));
}

static void put_values(FILE *out, const tg_named_value *v, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        fputs(i ? ", " : "", out);
        put_md(out, v[i].name);
        fputs(" = ", out);
        put_value(out, &v[i]);
    }
}

static void put_evidence(FILE *out, const tg_rule_result *r)
{
    fputs("| table | rowid | start | end | fields |\n| --- | ---: | ---: | ---: | --- |\n", out);
    for (size_t i = 0; i < r->n_evidence; i++) {
        const tg_evidence *e = &r->evidence[i];
        fputs("| ", out);
        put_md(out, e->table);
        fprintf(out, " | %lld | ", (long long)e->rowid);
        if (e->start != TG_NULL_I64) fprintf(out, "%lld", (long long)e->start);
        fputs(" | ", out);
        if (e->end != TG_NULL_I64) fprintf(out, "%lld", (long long)e->end);
        fputs(" | ", out);
        put_values(out, e->fields, e->n_fields);
        fputs(" |\n", out);
    }
    fputc('\n', out);
}

static void put_sql(FILE *out, const char *sql)
{
    int run = 0, longest = 0;
    for (const char *p = sql; *p; p++) {
        run = *p == '`' ? run + 1 : 0;
        if (run > longest) longest = run;
    }
    int fence = longest >= 3 ? longest + 1 : 3;
    for (int i = 0; i < fence; i++) fputc('`', out);
    fputs("sql\n", out);
    fputs(sql, out);
    if (*sql && sql[strlen(sql) - 1] != '\n') fputc('\n', out);
    for (int i = 0; i < fence; i++) fputc('`', out);
    fputs("\n\n", out);
}

static void put_failure(FILE *out, const tg_trace_result *t, const tg_rule_result *r)
{
    fprintf(out, "### %s ", tg_verdict_upper(r->verdict));
    put_code(out, r->rule);
    fputs(" in ", out);
    put_code(out, tg_report_basename(t->file));
    fprintf(out, " (%s)\n\n", tg_severity_name(r->severity));
    put_md(out, r->message ? r->message : r->title);
    fputs("\n\n", out);
    if (r->advice) {
        fputs("**Advice:** ", out);
        put_md(out, r->advice);
        fputs("\n\n", out);
    }
    if (r->n_values) {
        fputs("**Values:** ", out);
        put_values(out, r->values, r->n_values);
        fputs("\n\n", out);
    }
    if (r->n_evidence) put_evidence(out, r);
    if (r->reproduce) put_sql(out, r->reproduce);
}

static void put_baselines(FILE *out, const tg_run_result *run)
{
    bool header = false;
    for (size_t t = 0; t < run->n_traces; t++)
        for (size_t i = 0; i < run->traces[t].n_results; i++) {
            const tg_rule_result *r = &run->traces[t].results[i];
            const tg_baseline_cmp *b = &r->baseline;
            if (!b->present) continue;
            if (!header) {
                fputs("## Baseline comparison\n\n"
                      "| trace | rule | metric | baseline | current | change | p-value | n (baseline/current) | result |\n"
                      "| --- | --- | --- | ---: | ---: | ---: | ---: | ---: | --- |\n", out);
                header = true;
            }
            char base[TG_UNITS_BUF], cur[TG_UNITS_BUF], chg[TG_UNITS_BUF];
            tg_value bv = tg_float(b->value, tg_report_metric_unit(r));
            tg_value cv = tg_float(b->current, bv.unit);
            fputs("| ", out);
            put_code(out, tg_report_basename(run->traces[t].file));
            fputs(" | ", out);
            put_code(out, r->rule);
            fputs(" | ", out);
            if (r->metric) put_code(out, r->metric);
            fprintf(out, " | %s | %s | %s | ", tg_units_value(base, sizeof base, NULL, &bv),
                    tg_units_value(cur, sizeof cur, NULL, &cv), tg_units_change(chg, sizeof chg, b->change));
            if (isnan(b->p_value)) fputs("n/a", out);
            else fprintf(out, "%.2g", b->p_value);
            fprintf(out, " | %zu/%zu | %s |\n", b->n_baseline, b->n_current,
                     b->regression ? "**regression**" : b->improvement ? "improvement" : "no significant change");
        }
    if (header) fputc('\n', out);
}

tg_status tg_report_markdown(const tg_run_result *run, const tg_report_opts *opts, FILE *out)
{
    char line[512];
    tg_report_verdict_line(run, opts, line, sizeof line);
    const char *status = tg_run_status(run, opts);
    fprintf(out, "## tracegate: %s\n\n**%s**\n\n", line,
            !strcmp(status, "pass") ? "The gate passed."
            : !strcmp(status, "fail") ? "The gate failed."
                                      : "The check could not complete: see the errors below.");
    bool any_unreadable = false;
    for (size_t t = 0; t < run->n_traces; t++)
        if (run->traces[t].status != TG_OK) {
            if (!any_unreadable) fputs("Unreadable traces:\n\n", out);
            any_unreadable = true;
            fputs("- ", out);
            put_code(out, run->traces[t].file);
            fputs(": ", out);
            put_md(out, run->traces[t].error ? run->traces[t].error : "the trace could not be read");
            fputc('\n', out);
        }
    if (any_unreadable) fputc('\n', out);

    size_t rows = 0, total = 0;
    fputs("| trace | rule | severity | status | count | message |\n"
          "| --- | --- | --- | --- | ---: | --- |\n", out);
    for (size_t t = 0; t < run->n_traces; t++)
        for (size_t i = 0; i < run->traces[t].n_results; i++, total++) {
            const tg_rule_result *r = &run->traces[t].results[i];
            if (rows >= MAX_ROWS) continue;
            rows++;
            fputs("| ", out);
            put_code(out, tg_report_basename(run->traces[t].file));
            fputs(" | ", out);
            put_code(out, r->rule);
            fprintf(out, " | %s | %s%s%s | ", tg_severity_name(r->severity),
                    r->verdict == TG_V_FAIL || r->verdict == TG_V_INCONCLUSIVE ? "**" : "",
                    tg_verdict_upper(r->verdict),
                    r->verdict == TG_V_FAIL || r->verdict == TG_V_INCONCLUSIVE ? "**" : "");
            if (r->count != TG_NULL_I64) fprintf(out, "%lld", (long long)r->count);
            fputs(" | ", out);
            put_md(out, r->message ? r->message : r->title);
            fputs(" |\n", out);
        }
    fputc('\n', out);
    if (total > rows) fprintf(out, "_%zu more results not shown; see the JSON report._\n\n", total - rows);

    size_t details = 0, failures = 0;
    for (size_t t = 0; t < run->n_traces; t++)
        for (size_t i = 0; i < run->traces[t].n_results; i++) {
            const tg_rule_result *r = &run->traces[t].results[i];
            if (r->verdict != TG_V_FAIL && r->verdict != TG_V_INCONCLUSIVE) continue;
            if (failures++ == 0) fputs("## Failures and inconclusive comparisons\n\n", out);
            if (details < MAX_DETAILS) {
                details++;
                put_failure(out, &run->traces[t], r);
            }
        }
    if (failures > details)
        fprintf(out, "_%zu more failures not detailed; see the JSON report._\n\n", failures - details);
    put_baselines(out, run);
    return ferror(out) ? TG_EINTERNAL : TG_OK;
}
