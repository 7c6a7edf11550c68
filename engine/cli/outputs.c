/*
** Report options and writing, shared by `check` and `merge` (outputs.h).
*/
#include "outputs.h"

#include <errno.h>
#include <stdarg.h>
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>
#include <string.h>

#include "cli.h"
#include "tg_config.h"

void tg_cli_outputs_init(tg_cli_outputs *o)
{
    memset(o, 0, sizeof *o);
    o->out[0].format = TG_FMT_TEXT;
    o->n = 1;
    o->fail_on = TG_SEV_ERROR;
    o->color = -1;
}

static int usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static int usage_error(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *msg = NULL;
    if (vasprintf(&msg, fmt, ap) < 0) msg = NULL;
    va_end(ap);
    tg_cli_say("%s", msg ? msg : fmt);
    free(msg);
    return -1;
}

int tg_cli_outputs_option(tg_cli_outputs *o, const char *name, char *arg)
{
    if (!strcmp(name, "format")) {
        int f = tg_format_parse(arg);
        if (f < 0) return usage_error("unknown format '%s' (text, json, junit, sarif, github, markdown)", arg);
        o->out[0].format = (tg_format)f;
        return 1;
    }
    if (!strcmp(name, "o")) {
        char *eq = strchr(arg, '=');
        if (!eq || eq == arg || !eq[1]) return usage_error("-o wants FORMAT=FILE, not '%s'", arg);
        *eq = 0;
        int f = tg_format_parse(arg);
        if (f < 0) return usage_error("unknown format '%s' (text, json, junit, sarif, github, markdown)", arg);
        if (o->n >= TG_CLI_MAX_OUTPUTS) return usage_error("too many outputs at '%s'", eq + 1);
        o->out[o->n].format = (tg_format)f;
        o->out[o->n++].path = eq + 1;
        return 1;
    }
    if (!strcmp(name, "fail-on")) {
        o->fail_never = false;
        if (!strcmp(arg, "error")) o->fail_on = TG_SEV_ERROR;
        else if (!strcmp(arg, "warning")) o->fail_on = TG_SEV_WARNING;
        else if (!strcmp(arg, "info")) o->fail_on = TG_SEV_INFO;
        else if (!strcmp(arg, "never")) o->fail_never = true;
        else return usage_error("--fail-on wants error, warning, info or never, not '%s'", arg);
        return 1;
    }
    if (!strcmp(name, "inconclusive")) {
        if (!strcmp(arg, "pass")) o->inconclusive_fail = false;
        else if (!strcmp(arg, "fail")) o->inconclusive_fail = true;
        else return usage_error("--inconclusive wants pass or fail, not '%s'", arg);
        return 1;
    }
    if (!strcmp(name, "color")) {
        if (!strcmp(arg, "auto")) o->color = -1;
        else if (!strcmp(arg, "always")) o->color = 1;
        else if (!strcmp(arg, "never")) o->color = 0;
        else return usage_error("--color wants auto, always or never, not '%s'", arg);
        return 1;
    }
    if (!strcmp(name, "quiet")) {
        o->quiet = true;
        return 1;
    }
    return 0;
}

tg_report_opts tg_cli_outputs_gate(const tg_cli_outputs *o)
{
    return (tg_report_opts){.fail_on = o->fail_on, .fail_never = o->fail_never,
                            .inconclusive_fail = o->inconclusive_fail, .tool_version = TG_VERSION};
}

/* "the json report" for messages. */
static const char *report_label(tg_format f)
{
    static const char *const labels[TG_FMT_COUNT] = {
        "the text report", "the json report", "the junit report",
        "the sarif report", "the github report", "the markdown report",
    };
    return (unsigned)f < TG_FMT_COUNT ? labels[f] : "the report";
}

int tg_cli_outputs_check(const tg_cli_outputs *o, const tg_cli_reads *reads)
{
    tg_cli_output outs[TG_CLI_MAX_OUTPUTS + 1];
    size_t n = 0;
    bool github = false;
    for (size_t i = 0; i < o->n; i++) {
        outs[n++] = (tg_cli_output){o->out[i].path, report_label(o->out[i].format)};
        github = github || o->out[i].format == TG_FMT_GITHUB;
    }
    /* the github format appends the markdown report to the job summary */
    const char *summary = getenv("GITHUB_STEP_SUMMARY");
    if (github && summary && *summary)
        outs[n++] = (tg_cli_output){summary, "the GitHub job summary"};
    return tg_cli_outputs_refused(reads, outs, n);
}

/* The github format appends the markdown report to $GITHUB_STEP_SUMMARY
** itself (engine/report/fmt_github.c) and says only that it failed; the
** reason is that of opening the file again, a fresh call. */
static void summary_failed(const char *path)
{
    int fd = open(path, O_WRONLY | O_APPEND | O_CLOEXEC | O_NONBLOCK);
    int err = fd < 0 ? errno : 0;
    if (fd >= 0) close(fd);
    tg_cli_say("cannot append the GitHub job summary to %s (GITHUB_STEP_SUMMARY)%s%s",
               path, err ? ": " : "", err ? strerror(err) : "");
}

int tg_cli_outputs_write(const tg_cli_outputs *o, const tg_run_result *run, const tg_ruleset *rs)
{
    int status = TG_OK;
    for (size_t i = 0; i < o->n; i++) {
        const char *path = o->out[i].path;
        tg_cli_outfile of;
        if (tg_cli_outfile_open(&of, path, report_label(o->out[i].format)) != TG_OK) {
            status = TG_EINTERNAL;
            continue;
        }
        tg_report_opts ro = {
            .color = path ? false : (o->color < 0 ? tg_cli_color(stdout) : o->color == 1),
            .quiet = o->quiet,
            .fail_on = o->fail_on,
            .fail_never = o->fail_never,
            .inconclusive_fail = o->inconclusive_fail,
            .tool_version = TG_VERSION,
            .step_summary_path = getenv("GITHUB_STEP_SUMMARY"),
        };
        /* a write error is kept by the outfile; a report that fails for
        ** another reason is discarded all the same */
        bool produced = tg_report_write(o->out[i].format, run, rs, &ro, of.f) == TG_OK;
        if (!produced && !of.err && o->out[i].format == TG_FMT_GITHUB && ro.step_summary_path) {
            /* the annotations are whole: what failed is the job summary */
            summary_failed(ro.step_summary_path);
            produced = true;
            status = TG_EINTERNAL;
        }
        if (tg_cli_outfile_close(&of, produced || of.err) != TG_OK) status = TG_EINTERNAL;
    }
    return status;
}
