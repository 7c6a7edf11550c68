/*
** GitHub Actions: one workflow command per failing finding (::error,
** ::warning or ::notice after the rule's severity), per rule error and per
** unreadable trace, a ::notice per suppressed finding with its reason and
** a ::warning at the line of each suppression to review (unused, expired,
** exceeded), so they show as annotations on the run; and, when the
** CLI passes $GITHUB_STEP_SUMMARY as opts->step_summary_path, the markdown
** report appended to the job summary within GitHub's 1 MiB (report.h,
** TG_REPORT_SUMMARY_MAX; what the file already holds counts).
**
** Escaping, in two steps. tg_text_escape (engine/common/text.h) first: no
** control character, C1, invalid UTF-8 or "##" survives and names are
** capped; line feeds are kept. Then GitHub's workflow-command escaping
** (the runner's ActionCommand unescaping, read backwards): in the message
** % and LF become %25 and %0A (a CR cannot remain); property values also
** escape : and , (%3A %2C), which delimit properties. So every command is
** one line, and nothing a trace holds can start another.
*/
#include "report_int.h"

#include <string.h>

typedef struct command_out {
    FILE *out;
    bool property;     /* a property value (the title), else the message */
} command_out;

static void command_sink(void *ctx, const char *s, size_t n)
{
    FILE *out = ((command_out *)ctx)->out;
    bool property = ((command_out *)ctx)->property;
    for (size_t i = 0; i < n; i++) {
        switch (s[i]) {
        case '%': fputs("%25", out); break;
        case '\r': fputs("%0D", out); break;
        case '\n': fputs("%0A", out); break;
        case ':': fputs(property ? "%3A" : ":", out); break;
        case ',': fputs(property ? "%2C" : ",", out); break;
        default: fputc(s[i], out);
        }
    }
}

static void put_escaped(FILE *out, const char *s, bool property, size_t cap)
{
    command_out c = {out, property};
    s = s ? s : "";
    tg_text_escape(s, strlen(s), cap, TG_TEXT_KEEP_NEWLINES, command_sink, &c);
}

/* ::LEVEL title=tracegate RULE::TRACE: TEXT[\nCause: CAUSE][\nWorkload: WORKLOAD][\nADVICE] */
static void put_command(FILE *out, const char *level, const char *rule, const char *trace,
                        const char *text, const char *cause, const char *workload, const char *advice)
{
    fprintf(out, "::%s title=tracegate", level);
    if (rule) {
        fputc(' ', out);
        put_escaped(out, rule, true, TG_TEXT_CAP_NAME);
    }
    fputs("::", out);
    put_escaped(out, trace, false, TG_TEXT_CAP_TEXT);
    fputs(": ", out);
    put_escaped(out, text, false, TG_TEXT_CAP_TEXT);
    if (cause) {
        fputs("%0ACause: ", out);
        put_escaped(out, cause, false, TG_TEXT_CAP_TEXT);
    }
    if (workload) {
        fputs("%0AWorkload: ", out);
        put_escaped(out, workload, false, TG_TEXT_CAP_TEXT);
    }
    if (advice) {
        fputs("%0A", out);
        put_escaped(out, advice, false, TG_TEXT_CAP_TEXT);
    }
    fputc('\n', out);
}

/* A finding a suppression accepts: a notice, with the reason. */
static void put_suppressed(FILE *out, const tg_rule_result *r, const char *trace, const char *msg)
{
    fputs("::notice title=tracegate ", out);
    put_escaped(out, r->rule, true, TG_TEXT_CAP_NAME);
    fputs(" (suppressed)::", out);
    put_escaped(out, trace, false, TG_TEXT_CAP_TEXT);
    fputs(": ", out);
    put_escaped(out, msg, false, TG_TEXT_CAP_TEXT);
    fputs("%0Asuppressed: ", out);
    put_escaped(out, r->suppressed, false, TG_TEXT_CAP_TEXT);
    fputs(" (", out);
    put_escaped(out, r->suppressed_at ? r->suppressed_at : "?", false, TG_TEXT_CAP_TEXT);
    fputs(")\n", out);
}

static tg_status write_summary(const tg_run_result *run, const tg_report_opts *opts)
{
    FILE *f = fopen(opts->step_summary_path, "a");
    if (!f) return TG_EINTERNAL;
    long held = fseek(f, 0, SEEK_END) == 0 ? ftell(f) : -1;   /* earlier steps' summaries count */
    size_t room = held < 0 ? TG_REPORT_SUMMARY_MAX
                 : (size_t)held < TG_REPORT_SUMMARY_MAX ? TG_REPORT_SUMMARY_MAX - (size_t)held : 0;
    tg_status st = tg_report_markdown_within(run, opts, f, room, TG_REPORT_SUMMARY_LIMIT);
    if (fclose(f) != 0) st = TG_EINTERNAL;
    return st;
}

TG_REPORT_WRITER(tg_report_github)
{
    (void)rs;
    for (size_t i = 0; i < opts->n_notes; i++)   /* about the whole run (merge) */
        put_command(out, "warning", NULL, "merge", opts->notes[i], NULL, NULL, NULL);
    for (size_t t = 0; t < run->n_traces; t++) {
        const tg_trace_result *tr = &run->traces[t];
        const char *file = tr->file ? tr->file : "?";
        if (tr->status != TG_OK)
            put_command(out, "error", NULL, file, tr->error ? tr->error : "the trace could not be read", NULL, NULL,
                        NULL);
        for (size_t i = 0; i < tr->n_results; i++) {
            const tg_rule_result *r = &tr->results[i];
            const char *msg = r->message ? r->message : r->title ? r->title : "";
            char buf[160];
            const char *workload = tg_report_workload_sentence(&r->baseline, buf, sizeof buf);
            if (r->suppressed && (r->verdict == TG_V_FAIL || r->verdict == TG_V_INCONCLUSIVE))
                put_suppressed(out, r, tg_report_basename(file), msg);
            else if (r->verdict == TG_V_FAIL)
                put_command(out, tg_severity_github(r->severity), r->rule, tg_report_basename(file), msg,
                            r->cause ? r->cause->summary : NULL, workload, r->advice);
            else if (r->verdict == TG_V_ERROR)
                put_command(out, "error", r->rule, tg_report_basename(file), msg, NULL, NULL, NULL);
            else if (r->verdict == TG_V_INCONCLUSIVE)
                put_command(out, tg_report_gates(r, opts) ? "error" : "warning", r->rule,
                            tg_report_basename(file), msg, NULL, workload, r->advice);
        }
    }
    /* a suppression to review points at its line in the suppression file */
    for (size_t i = 0; i < run->n_suppressions; i++) {
        char sentence[512];
        const tg_suppression_use *u = &run->suppressions[i];
        if (!tg_suppression_sentence(u, sentence, sizeof sentence)[0]) continue;
        fputs("::warning file=", out);
        put_escaped(out, u->file, true, TG_TEXT_CAP_TEXT);
        fprintf(out, ",line=%d,title=tracegate suppression::", u->line);
        put_escaped(out, sentence, false, TG_TEXT_CAP_TEXT);
        fputc('\n', out);
    }
    if (ferror(out)) return TG_EINTERNAL;
    return opts->step_summary_path ? write_summary(run, opts) : TG_OK;
}
