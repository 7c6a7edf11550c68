/*
** Report options and writing, shared by `check` and `merge` (outputs.h).
*/
#include "outputs.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <sys/stat.h>
#include <stdlib.h>
#include <unistd.h>
#include <string.h>

#include "cli.h"
#include "tg_config.h"

/* How many -o sql=DIR; the folder of the last, NULL without. */
static size_t sql_dirs(const tg_cli_outputs *o)
{
    size_t n = 0;
    for (size_t i = 0; i < o->n; i++) n += o->out[i].format == TG_FMT_SQL;
    return n;
}

static const char *sql_dir(const tg_cli_outputs *o)
{
    for (size_t i = 0; i < o->n; i++)
        if (o->out[i].format == TG_FMT_SQL) return o->out[i].path;
    return NULL;
}

void tg_cli_outputs_init(tg_cli_outputs *o)
{
    memset(o, 0, sizeof *o);
    o->out[0].format = TG_FMT_TEXT;
    o->n = 1;
    o->fail_on = TG_SEV_ERROR;
    o->color = -1;
}

int tg_cli_outputs_read(tg_cli_outputs *o, const tg_cli_args *a)
{
    o->out[0].format = (tg_format)tg_cli_choice(a, TG_CLI_OPT_FORMAT, TG_FMT_TEXT);
    for (size_t i = 0; i < a->n_values[TG_CLI_OPT_OUTPUT]; i++) {
        const char *file;
        int f = tg_cli_output_spec(a->values[TG_CLI_OPT_OUTPUT][i], &file);   /* checked by the parser */
        if (o->n >= TG_CLI_MAX_OUTPUTS) return tg_cli_usage_error(a->cmd, "too many outputs at '%s'", file);
        o->out[o->n].format = (tg_format)f;
        o->out[o->n++].path = file;
    }
    int fail_on = tg_cli_choice(a, TG_CLI_OPT_FAIL_ON, TG_SEV_ERROR);
    o->fail_never = fail_on == TG_CLI_FAIL_ON_NEVER;
    o->fail_on = o->fail_never ? TG_SEV_ERROR : (tg_severity)fail_on;
    o->inconclusive_fail = tg_cli_choice(a, TG_CLI_OPT_INCONCLUSIVE, 0) == 1;
    static const int colors[] = {-1, 1, 0};   /* auto, always, never */
    o->color = colors[tg_cli_choice(a, TG_CLI_OPT_COLOR, 0)];
    o->quiet = tg_cli_flag(a, TG_CLI_OPT_QUIET);
    o->reproduce = tg_cli_flag(a, TG_CLI_OPT_REPRODUCE);
    if (!tg_format_is_stream(o->out[0].format))
        return tg_cli_usage_error(a->cmd, "--format %s writes a folder, not standard output: -o %s=DIR",
                                  tg_format_name(o->out[0].format), tg_format_name(o->out[0].format));
    if (sql_dirs(o) > 1) return tg_cli_usage_error(a->cmd, "-o sql=DIR is given more than once");
    return TG_OK;
}

bool tg_cli_outputs_want_timeline(const tg_cli_outputs *o)
{
    for (size_t i = 0; i < o->n; i++)
        if (o->out[i].format == TG_FMT_HTML) return true;
    return false;
}

tg_report_opts tg_cli_outputs_gate(const tg_cli_outputs *o)
{
    return (tg_report_opts){.fail_on = o->fail_on, .fail_never = o->fail_never,
                            .inconclusive_fail = o->inconclusive_fail, .tool_version = TG_VERSION};
}

/* "the json report" for messages. */
static const char *report_label(tg_format f)
{
    return (unsigned)f < TG_FMT_COUNT ? tg_format_labels[f] : "the report";
}

/* -o sql=DIR: a folder, or a path that does not exist yet (made when the
** files are written); never one an input lies in, since its files are
** written there by name (docs/formats.md, "sql"). */
static bool sql_dir_refused(const char *dir, const tg_cli_reads *reads)
{
    struct stat st;
    if (stat(dir, &st) != 0) return false;
    if (!S_ISDIR(st.st_mode)) {
        tg_cli_say("-o sql=%s: %s is not a folder (the reproduce files are written into one)", dir, dir);
        return true;
    }
    for (size_t i = 0; i < reads->n; i++) {
        char *copy = strdup(reads->files[i].path);
        struct stat p;
        bool inside = copy && stat(dirname(copy), &p) == 0 && p.st_dev == st.st_dev && p.st_ino == st.st_ino;
        free(copy);
        if (inside) {
            tg_cli_say("-o sql=%s: the %s %s lies in that folder; write the reproduce files into a folder of "
                       "their own", dir, reads->files[i].role, reads->files[i].path);
            return true;
        }
    }
    return false;
}

/* Write one reproduce file per finding into dir (made if absent), each
** whole or not at all (outfile.h). TG_OK or TG_EINTERNAL after saying why. */
static int write_sql_dir(const char *dir, const tg_run_result *run)
{
    if (mkdir(dir, 0777) != 0 && errno != EEXIST) {
        tg_cli_say("cannot make the folder %s for -o sql=DIR: %s", dir, strerror(errno));
        return TG_EINTERNAL;
    }
    int status = TG_OK;
    for (size_t t = 0; t < run->n_traces; t++)
        for (size_t i = 0; i < run->traces[t].n_results; i++)
            for (int cause = 0; cause < 2; cause++) {
                char name[512], path[4096];
                if (!tg_report_reproduce_name(run, t, i, cause, name, sizeof name)) continue;
                snprintf(path, sizeof path, "%s%s%s", dir, dir[strlen(dir) - 1] == '/' ? "" : "/", name);
                tg_cli_outfile of;
                if (tg_cli_outfile_open(&of, path, "the reproduce file") != TG_OK) {
                    status = TG_EINTERNAL;
                    continue;
                }
                bool ok = tg_report_reproduce_file(run, t, i, cause, of.f) == TG_OK;
                if (tg_cli_outfile_close(&of, ok) != TG_OK) status = TG_EINTERNAL;
            }
    return status;
}

int tg_cli_outputs_check(const tg_cli_outputs *o, const tg_cli_reads *reads)
{
    tg_cli_output outs[TG_CLI_MAX_OUTPUTS + 1];
    size_t n = 0;
    bool github = false;
    for (size_t i = 0; i < o->n; i++) {
        if (o->out[i].format == TG_FMT_SQL) {
            if (sql_dir_refused(o->out[i].path, reads)) return TG_EUSAGE;
            continue;
        }
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

/* The file of the first report in format f (a cut markdown report names
** it); NULL when none goes to a file. */
static const char *report_path(const tg_cli_outputs *o, tg_format f)
{
    for (size_t i = 0; i < o->n; i++)
        if (o->out[i].format == f && o->out[i].path) return o->out[i].path;
    return NULL;
}

int tg_cli_outputs_write(const tg_cli_outputs *o, const tg_run_result *run, const tg_ruleset *rs)
{
    int status = TG_OK;
    for (size_t i = 0; i < o->n; i++) {
        const char *path = o->out[i].path;
        if (o->out[i].format == TG_FMT_SQL) {
            if (write_sql_dir(path, run) != TG_OK) status = TG_EINTERNAL;
            continue;
        }
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
            .rules_digest = o->rules_digest,
            .notes = o->notes,
            .n_notes = o->n_notes,
            .ranks_not_compared = o->ranks_not_compared,
            .builtin_rules_dir = tg_cli_builtin_rules(),
            .reproduce_inline = o->reproduce,
            .sql_dir = sql_dir(o),
            .info_uri = tg_cli_docs_uri(),
            .html_path = report_path(o, TG_FMT_HTML),
            .json_path = report_path(o, TG_FMT_JSON),
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
