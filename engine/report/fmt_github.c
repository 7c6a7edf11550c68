/*
** GitHub Actions: one workflow command per failing finding (::error,
** ::warning or ::notice after the rule's severity), per rule error and per
** unreadable trace, so they show as annotations on the run; and, when the
** CLI passes $GITHUB_STEP_SUMMARY as opts->step_summary_path, the markdown
** report appended to the job summary. Workflow-command escaping: in the
** message % \r \n become %25 %0D %0A; property values also escape : and ,
** (%3A %2C), since those delimit properties; other control characters
** are dropped.
*/
#include "report_int.h"

#include <string.h>

static void put_escaped(FILE *out, const char *s, bool property)
{
    for (const char *p = s ? s : ""; *p; p++) {
        switch (*p) {
        case '%': fputs("%25", out); break;
        case '\r': fputs("%0D", out); break;
        case '\n': fputs("%0A", out); break;
        case ':': fputs(property ? "%3A" : ":", out); break;
        case ',': fputs(property ? "%2C" : ",", out); break;
        default:
            /* other control characters would only garble the log */
            if ((unsigned char)*p >= 0x20 && *p != 0x7f) fputc(*p, out);
        }
    }
}

/* ::LEVEL title=tracegate RULE::TRACE: TEXT[\nADVICE] */
static void put_command(FILE *out, const char *level, const char *rule, const char *trace,
                        const char *text, const char *advice)
{
    fprintf(out, "::%s title=tracegate", level);
    if (rule) {
        fputc(' ', out);
        put_escaped(out, rule, true);
    }
    fputs("::", out);
    put_escaped(out, trace, false);
    fputs(": ", out);
    put_escaped(out, text, false);
    if (advice) {
        put_escaped(out, "\n", false);
        put_escaped(out, advice, false);
    }
    fputc('\n', out);
}

static tg_status write_summary(const tg_run_result *run, const tg_report_opts *opts)
{
    FILE *f = fopen(opts->step_summary_path, "a");
    if (!f) return TG_EINTERNAL;
    tg_status st = tg_report_markdown(run, opts, f);
    if (fclose(f) != 0) st = TG_EINTERNAL;
    return st;
}

tg_status tg_report_github(const tg_run_result *run, const tg_ruleset *rs,
                           const tg_report_opts *opts, FILE *out)
{
    (void)rs;
    for (size_t t = 0; t < run->n_traces; t++) {
        const tg_trace_result *tr = &run->traces[t];
        const char *file = tr->file ? tr->file : "?";
        if (tr->status != TG_OK)
            put_command(out, "error", NULL, file, tr->error ? tr->error : "the trace could not be read", NULL);
        for (size_t i = 0; i < tr->n_results; i++) {
            const tg_rule_result *r = &tr->results[i];
            const char *msg = r->message ? r->message : r->title ? r->title : "";
            if (r->verdict == TG_V_FAIL)
                put_command(out, tg_severity_github(r->severity), r->rule, tg_report_basename(file), msg,
                            r->advice);
            else if (r->verdict == TG_V_ERROR)
                put_command(out, "error", r->rule, tg_report_basename(file), msg, NULL);
            else if (r->verdict == TG_V_INCONCLUSIVE)
                put_command(out, tg_report_gates(r, opts) ? "error" : "warning", r->rule,
                            tg_report_basename(file), msg, r->advice);
        }
    }
    if (ferror(out)) return TG_EINTERNAL;
    return opts->step_summary_path ? write_summary(run, opts) : TG_OK;
}
