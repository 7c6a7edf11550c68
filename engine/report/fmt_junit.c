/*
** JUnit XML for CI test views (GitLab, Jenkins, GitHub test reporters):
** one <testsuite> per trace, one <testcase> per rule result, with
** <failure type=SEVERITY> carrying the message as attribute and the
** numbers, evidence, reproduce SQL and advice as body for a finding that
** fails the gate; a finding below --fail-on is a passing test case with
** the same text in <system-out>, so CI views count as failures only what
** fails the job (docs/formats.md); <skipped> and <error> for skips and
** rule errors. A trace that could not be read is a
** suite with one errored testcase named "load", so the failure shows in the
** CI view. Every string goes through tg_text_escape first
** (engine/common/text.h): what reaches the XML is printable UTF-8 and line
** feeds only, so no input can make the file ill-formed (U+FFFE, a C0
** control, invalid UTF-8 are shown as \ufffe, \x01, \xff); names are
** capped. Then the XML specials become entities, and in attributes line
** feeds become &#10; so that parsers keep them.
*/
#include "report_int.h"
#include "../common/units.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct xml_out {
    FILE *out;
    bool attr;
} xml_out;

static void xml_sink(void *ctx, const char *s, size_t n)
{
    const xml_out *x = ctx;
    for (size_t i = 0; i < n; i++) {
        switch (s[i]) {
        case '&': fputs("&amp;", x->out); break;
        case '<': fputs("&lt;", x->out); break;
        case '>': fputs("&gt;", x->out); break;
        case '"': fputs(x->attr ? "&quot;" : "\"", x->out); break;
        case '\'': fputs(x->attr ? "&apos;" : "'", x->out); break;
        case '\n': fputs(x->attr ? "&#10;" : "\n", x->out); break;
        default: fputc(s[i], x->out);
        }
    }
}

/* Escaped, capped XML text (in an attribute when attr). */
static void put_xml_cap(FILE *out, const char *s, bool attr, size_t cap)
{
    if (!s) return;
    xml_out x = {out, attr};
    tg_text_escape(s, strlen(s), cap, TG_TEXT_KEEP_NEWLINES, xml_sink, &x);
}

/* Names and values; sentences use put_xml_cap with TG_TEXT_CAP_TEXT. */
static void put_xml(FILE *out, const char *s, bool attr)
{
    put_xml_cap(out, s, attr, TG_TEXT_CAP_NAME);
}

static void put_one(FILE *out, const tg_named_value *v)
{
    char buf[TG_FMT_BUF], name[128];
    put_xml(out, tg_report_value_label(v, name, sizeof name), false);
    fputc('=', out);
    if (v->value.type == TG_TY_STRING) put_xml(out, v->value.u.s, false);
    else fputs(tg_fmt_value(buf, sizeof buf, v->value), out);
}

static void put_named(FILE *out, const char *label, const tg_named_value *v, size_t n)
{
    if (!n) return;
    fputs(label, out);
    for (size_t i = 0; i < n; i++) {
        fputs(i ? ", " : "", out);
        put_one(out, &v[i]);
    }
    fputc('\n', out);
}

static void put_name(FILE *out, const char *name)
{
    put_xml(out, name, false);
}

/* The body of a <failure>: everything a reader needs to act on it. */
static void put_failure_body(FILE *out, const tg_rule_result *r, int64_t origin)
{
    put_xml_cap(out, r->message, false, TG_TEXT_CAP_TEXT);
    fputc('\n', out);
    put_named(out, "values: ", r->values, r->n_values);
    const tg_baseline_cmp *b = &r->baseline;
    if (b->present) {
        char chg[TG_FMT_BUF], base[TG_FMT_BUF], cur[TG_FMT_BUF], p[32] = "n/a";
        if (!isnan(b->p_value)) snprintf(p, sizeof p, "%.2g", b->p_value);
        fprintf(out, "baseline: %s -> %s (%s), p=%s, n=%zu baseline / %zu now%s\n",
                tg_fmt_num(base, sizeof base, b->value, r->metric_unit),
                tg_fmt_num(cur, sizeof cur, b->current, r->metric_unit),
                tg_fmt_change(chg, sizeof chg, b->change), p, b->n_baseline, b->n_current,
                b->regression ? ", regression" : b->inconclusive ? ", inconclusive" : b->improvement ? ", improvement" : "");
        char workload[160];
        if (tg_report_workload_sentence(b, workload, sizeof workload)) fprintf(out, "workload: %s\n", workload);
        for (size_t i = 0; i < b->n_contributors; i++) {
            const tg_contributor *x = &b->contributors[i];
            char then[TG_FMT_BUF], now[TG_FMT_BUF], d[TG_FMT_BUF], sh[TG_FMT_BUF];
            tg_fmt_num(then, sizeof then, x->then_time, TG_UNIT_NS);
            tg_fmt_num(now, sizeof now, x->now_time, TG_UNIT_NS);
            tg_fmt_num(d, sizeof d, fabs(x->delta), TG_UNIT_NS);
            fprintf(out, "%s%s ", i ? "         " : "changed: ", tg_contrib_status_name(x->status));
            put_xml_cap(out, x->name, false, TG_TEXT_CAP_NAME);
            fprintf(out, " %s -> %s per iteration (%s%s", then, now, x->delta >= 0 ? "+" : "-", d);
            if (!isnan(x->share)) fprintf(out, ", %s of the change", tg_fmt_num(sh, sizeof sh, x->share, TG_UNIT_RATIO));
            if (x->kind != TG_WORK_NVTX) fprintf(out, "; %.4g -> %.4g launches", x->then_launches, x->now_launches);
            fputs(")\n", out);
        }
    }
    if (r->n_evidence) fputs("evidence:\n", out);
    for (size_t i = 0; i < r->n_evidence; i++) {
        const tg_evidence *e = &r->evidence[i];
        fputs("  ", out);
        tg_report_evidence_sentence(out, e, origin, put_name);
        fputc('\n', out);
        size_t shown = 0;
        for (size_t k = 0; k < e->n_fields; k++)
            if (!tg_report_evidence_said(e, &e->fields[k])) {
                fputs(shown++ ? ", " : "    ", out);
                put_one(out, &e->fields[k]);
            }
        if (shown) fputc('\n', out);
    }
    if (r->reproduce) {
        fputs("reproduce: ", out);
        put_xml_cap(out, r->reproduce, false, TG_TEXT_CAP_LONG);
        fputc('\n', out);
    }
    if (r->cause) {
        fputs("cause: ", out);
        put_xml_cap(out, r->cause->summary, false, TG_TEXT_CAP_TEXT);
        fputc('\n', out);
        for (size_t i = 0; i < r->cause->n_unknown; i++) {
            fputs("  unknown: ", out);
            put_xml_cap(out, r->cause->unknown[i], false, TG_TEXT_CAP_TEXT);
            fputc('\n', out);
        }
        if (r->cause->reproduce) {
            fputs("  reproduce: ", out);
            put_xml_cap(out, r->cause->reproduce, false, TG_TEXT_CAP_LONG);
            fputc('\n', out);
        }
    }
    if (r->advice) {
        fputs("advice: ", out);
        put_xml_cap(out, r->advice, false, TG_TEXT_CAP_TEXT);
        fputc('\n', out);
    }
}

static void put_attr(FILE *out, const char *name, const char *value)
{
    fprintf(out, " %s=\"", name);
    put_xml_cap(out, value ? value : "", true, TG_TEXT_CAP_TEXT);
    fputc('"', out);
}

static void put_testcase(FILE *out, const char *file, const tg_rule_result *r, int64_t origin,
                         const tg_report_opts *opts)
{
    fputs("    <testcase", out);
    put_attr(out, "classname", file);
    put_attr(out, "name", r->rule);
    if (r->verdict == TG_V_PASS && !(r->regression && r->baseline.present && r->baseline.outside_band)) {
        fputs(" time=\"0\"/>\n", out);
        return;
    }
    if (r->verdict == TG_V_PASS) {
        /* passed outside the baseline's band (below the gate, an
        ** improvement): said in its output (docs/regressions.md) */
        fputs(" time=\"0\">\n      <system-out>", out);
        put_xml_cap(out, r->message ? r->message : "", false, TG_TEXT_CAP_TEXT);
        fputs("</system-out>\n    </testcase>\n", out);
        return;
    }
    fputs(" time=\"0\">\n", out);
    const char *msg = r->message ? r->message : "";
    if (r->suppressed && (r->verdict == TG_V_FAIL || r->verdict == TG_V_INCONCLUSIVE)) {
        /* accepted: a skip CI views show, with the reason and the finding */
        char *why = NULL;
        if (asprintf(&why, "suppressed: %s (%s)", r->suppressed, r->suppressed_at ? r->suppressed_at : "?") < 0)
            why = NULL;
        fputs("      <skipped", out);
        put_attr(out, "message", why ? why : r->suppressed);
        put_attr(out, "type", "suppressed");
        fputs(">", out);
        put_failure_body(out, r, origin);
        fputs("</skipped>\n    </testcase>\n", out);
        free(why);
        return;
    }
    switch (r->verdict) {
    case TG_V_FAIL:
        if (!tg_report_gates(r, opts)) {
            /* below --fail-on: a passing test case (CI views count what
            ** fails the job), the finding kept in its output */
            fprintf(out, "      <system-out>%s finding below --fail-on, not failing the gate: ",
                    tg_severity_name(r->severity));
            put_failure_body(out, r, origin);
            fputs("</system-out>\n", out);
            break;
        }
        fputs("      <failure", out);
        put_attr(out, "message", msg);
        put_attr(out, "type", tg_severity_name(r->severity));
        fputs(">", out);
        put_failure_body(out, r, origin);
        fputs("</failure>\n", out);
        break;
    case TG_V_SKIP:
        fputs("      <skipped", out);
        put_attr(out, "message", msg);
        fputs("/>\n", out);
        break;
    case TG_V_INCONCLUSIVE:
        /* a skip CI views show, or a failure under --inconclusive=fail */
        fputs(tg_report_gates(r, opts) ? "      <failure" : "      <skipped", out);
        put_attr(out, "message", msg);
        put_attr(out, "type", "inconclusive");
        fputs(">", out);
        put_failure_body(out, r, origin);
        fputs(tg_report_gates(r, opts) ? "</failure>\n" : "</skipped>\n", out);
        break;
    case TG_V_ERROR:
        fputs("      <error", out);
        put_attr(out, "message", msg);
        put_attr(out, "type", r->missing_data ? "missing-data" : "rule-error");
        fputs(">", out);
        put_xml_cap(out, msg, false, TG_TEXT_CAP_TEXT);
        fputs("</error>\n", out);
        break;
    default: break;
    }
    fputs("    </testcase>\n", out);
}

static void put_property(FILE *out, const char *name, const char *value)
{
    if (!value) return;
    fputs("      <property", out);
    put_attr(out, "name", name);
    put_attr(out, "value", value);
    fputs("/>\n", out);
}

static void put_suite(FILE *out, const tg_trace_result *t, const tg_report_opts *opts, bool first)
{
    size_t n_fail = 0, n_skip = 0, n_err = t->status != TG_OK;
    for (size_t i = 0; i < t->n_results; i++) {
        const tg_rule_result *r = &t->results[i];
        bool inconclusive = r->verdict == TG_V_INCONCLUSIVE;
        bool finding = r->verdict == TG_V_FAIL || inconclusive;
        n_fail += finding && tg_report_gates(r, opts);
        n_skip += r->verdict == TG_V_SKIP || (inconclusive && !tg_report_gates(r, opts)) ||
                  (finding && r->suppressed && !inconclusive);
        n_err += t->results[i].verdict == TG_V_ERROR;
    }
    const char *file = t->file ? t->file : "";
    fputs("  <testsuite", out);
    put_attr(out, "name", file);
    fprintf(out, " tests=\"%zu\" failures=\"%zu\" errors=\"%zu\" skipped=\"%zu\" time=\"0\">\n",
            t->n_results + (t->status != TG_OK), n_fail, n_err, n_skip);
    /* notes about the whole run (merge): once, in the first suite */
    size_t n_notes = first && opts ? opts->n_notes : 0;
    if (t->nsys_version || t->schema_version || t->gpu_names || n_notes) {
        fputs("    <properties>\n", out);
        for (size_t i = 0; i < n_notes; i++) put_property(out, "tracegate_note", opts->notes[i]);
        put_property(out, "nsys_version", t->nsys_version);
        put_property(out, "schema_version", t->schema_version);
        put_property(out, "gpus", t->gpu_names);
        fputs("    </properties>\n", out);
    }
    if (t->status != TG_OK) {
        const char *err = t->error ? t->error : "the trace could not be read";
        fputs("    <testcase", out);
        put_attr(out, "classname", file);
        fputs(" name=\"load\" time=\"0\">\n      <error", out);
        put_attr(out, "message", err);
        fputs(" type=\"trace-unreadable\">", out);
        put_xml_cap(out, err, false, TG_TEXT_CAP_TEXT);
        fputs("</error>\n    </testcase>\n", out);
    }
    for (size_t i = 0; i < t->n_results; i++) put_testcase(out, file, &t->results[i], tg_report_origin(t), opts);
    fputs("  </testsuite>\n", out);
}

TG_REPORT_WRITER(tg_report_junit)
{
    (void)rs;   /* lists no rules */
    tg_report_tally t;
    tg_report_tally_run(run, opts, &t);
    size_t inconclusive_failing = opts && opts->inconclusive_fail && !opts->fail_never ? t.inconclusive : 0;
    fputs("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n", out);
    fprintf(out, "<testsuites name=\"tracegate\" tests=\"%zu\" failures=\"%zu\" errors=\"%zu\""
                 " skipped=\"%zu\" time=\"0\">\n",
            t.results + t.traces_unreadable, t.gating,
            t.errors + t.traces_unreadable, t.skipped + t.inconclusive - inconclusive_failing + t.suppressed);
    for (size_t i = 0; i < run->n_traces; i++) put_suite(out, &run->traces[i], opts, i == 0);
    fputs("</testsuites>\n", out);
    return ferror(out) ? TG_EINTERNAL : TG_OK;
}
