/*
** `tracegate baseline record` and `tracegate baseline show`
** (baselines/README.md).
**
** record evaluates the rules on every trace given (each trace is one run of
** the workload), keeps the value of every rule's `metric` and its per-row
** samples, and writes the baseline YAML (engine/baseline). The file is
** written next to its destination and renamed into place, so an
** interrupted run never leaves half a baseline. The date in the file is
** SOURCE_DATE_EPOCH's when set (reproducible builds), else today's, at day
** resolution in UTC: recording the same traces twice gives the same bytes.
**
** show prints a recorded baseline for people: provenance, then per metric
** the median, MAD, run-to-run band, per-run values and sample counts.
*/
#include "cli.h"
#include "../common/units.h"
#include "inputs.h"
#include "outfile.h"
#include "baseline/baseline.h"
#include "tg_config.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* ------------------------------------------------------------ options */

typedef struct record_opts {
    const char *out;
    tg_cli_sets sets;
    const char *iteration_pattern;
    tg_missing_mode missing;
    bool allow_mismatch;
    bool keep_outliers;
    int jobs;
    const char *const *traces;
    size_t n_traces;
} record_opts;

static int read_record(const tg_cli_args *a, record_opts *o)
{
    *o = (record_opts){
        .out = tg_cli_value(a, TG_CLI_OPT_OUTPUT_FILE),
        .iteration_pattern = tg_cli_value(a, TG_CLI_OPT_PATTERN),
        .missing = tg_cli_choice(a, TG_CLI_OPT_MISSING, 0) == 1 ? TG_MISSING_SKIP : TG_MISSING_FAIL,
        .allow_mismatch = tg_cli_flag(a, TG_CLI_OPT_ALLOW_MISMATCH),
        .keep_outliers = tg_cli_flag(a, TG_CLI_OPT_KEEP_OUTLIERS),
        .jobs = tg_cli_count(a, TG_CLI_OPT_JOBS, 1),
        .traces = a->operands,
        .n_traces = a->n_operands,
    };
    if (!o->out) return tg_cli_usage_error(a->cmd, "baseline record needs -o FILE (or -o - for stdout)");
    return tg_cli_param_sets(a, &o->sets);
}

/* ------------------------------------------------------------- record */

/* YYYY-MM-DD of SOURCE_DATE_EPOCH, else of now; UTC. False: bad variable. */
static bool record_date(char *buf, size_t size)
{
    const char *sde = getenv("SOURCE_DATE_EPOCH");
    time_t when;
    if (sde && *sde) {
        char *end;
        errno = 0;
        long long v = strtoll(sde, &end, 10);
        if (errno || *end || v < 0) {
            tg_cli_say("SOURCE_DATE_EPOCH must be seconds since 1970, not '%s'",
                       sde);
            return false;
        }
        when = (time_t)v;
    } else {
        when = time(NULL);
    }
    struct tm tm;
    if (!gmtime_r(&when, &tm) || !strftime(buf, size, "%Y-%m-%d", &tm)) {
        tg_cli_say("cannot format the recording date");
        return false;
    }
    return true;
}

static bool has_metric_rule(const tg_ruleset *rs)
{
    for (size_t i = 0; i < tg_rules_count(rs); i++) {
        const tg_rule_info *r = tg_rules_info(rs, i);
        if (r->enabled && r->metric) return true;
    }
    return false;
}

/* Rules with a metric that lack data in some trace: exit 3 in fail mode. */
static int check_missing(const tg_run_result *run, tg_missing_mode mode)
{
    int st = TG_OK;
    for (size_t t = 0; t < run->n_traces; t++) {
        const tg_trace_result *tr = &run->traces[t];
        for (size_t i = 0; i < tr->n_results; i++) {
            const tg_rule_result *r = &tr->results[i];
            if (!r->metric || !r->missing_data) continue;
            tg_cli_say("%s: %s: rule %s: %s%s", tr->file,
                       mode == TG_MISSING_FAIL ? "error" : "warning", r->rule,
                       r->message ? r->message : "the capture lacks the data this metric needs",
                       mode == TG_MISSING_FAIL ? "" : " (not recorded for this run)");
            if (mode == TG_MISSING_FAIL) st = TG_ETRACE;
        }
    }
    return st;
}

/* Whole or not at all: a temporary file beside `path` renamed into place,
** a FIFO or device written directly, "-" standard output (outfile.h). */
static int write_baseline(const tg_baseline *b, const char *path)
{
    tg_cli_outfile of;
    if (tg_cli_outfile_open(&of, path, "the baseline") != TG_OK) return TG_EINTERNAL;
    bool produced = tg_baseline_write(b, of.f) == TG_OK;
    return tg_cli_outfile_close(&of, produced || of.err);
}

/* The baseline must not land on a trace or rule file it is recorded from. */
static int check_output(const record_opts *o, const tg_inputs *in, const tg_ruleset *rs)
{
    tg_cli_reads reads = {0};
    bool listed = tg_cli_reads_add_rules(&reads, rs);
    for (size_t i = 0; listed && i < o->n_traces; i++) listed = tg_cli_reads_add(&reads, o->traces[i], "trace");
    for (size_t i = 0; listed && i < in->n; i++) listed = tg_cli_reads_add(&reads, in->paths[i], "trace");
    tg_cli_output out = {o->out, "the baseline"};
    int st = listed ? tg_cli_outputs_refused(&reads, &out, 1) : TG_EINTERNAL;
    tg_cli_reads_free(&reads);
    return st;
}

int tg_cmd_baseline_record(const tg_cli_args *a)
{
    record_opts o;
    int rc = read_record(a, &o);
    if (rc != TG_OK) {
        tg_cli_sets_free(&o.sets);
        return rc;
    }
    char date[16];
    const char **paths = NULL;
    size_t n_paths = 0;
    tg_ruleset *rs = NULL;
    tg_inputs in = {0};
    tg_run_result run = {0};
    tg_baseline *b = NULL;
    tg_diag diag;
    tg_diag_init(&diag);

    if (!record_date(date, sizeof date)) {
        rc = TG_EUSAGE;
        goto done;
    }
    paths = tg_cli_rule_paths(a->values[TG_CLI_OPT_RULES], a->n_values[TG_CLI_OPT_RULES], &n_paths);
    if (!paths) {
        rc = TG_EUSAGE;
        goto done;
    }
    rs = tg_rules_load(paths, n_paths, o.sets.sets, o.sets.n, &diag);
    if (!rs) {
        rc = tg_cli_report_diag(&diag, TG_EUSAGE);
        goto done;
    }
    tg_cli_report_diag(&diag, TG_OK);    /* warnings */
    tg_diag_clear(&diag);
    if (!has_metric_rule(rs)) {
        tg_cli_say("no enabled rule has a metric: nothing to record");
        rc = TG_EUSAGE;
        goto done;
    }
    if ((rc = tg_inputs_resolve(o.traces, o.n_traces, &in)) != TG_OK)
        goto done;
    if ((rc = check_output(&o, &in, rs)) != TG_OK) goto done;

    run.arena = tg_arena_new();
    if (!run.arena) {
        rc = TG_EINTERNAL;
        goto done;
    }
    /* has_baseline: regression rules compute their metric rather than skip */
    tg_check_plan plan = tg_check_plan_for(rs);
    plan.eval = (tg_eval_opts){.missing = o.missing, .has_baseline = true};
    plan.iteration_pattern = o.iteration_pattern;
    rc = tg_cli_evaluate(&in, &plan, o.jobs, &run);
    if (rc != TG_OK) {
        if (rc == TG_ETRACE)
            tg_cli_say("no baseline written: every trace must be readable");
        goto done;
    }
    if ((rc = check_missing(&run, o.missing)) != TG_OK) {
        tg_cli_say("no baseline written (--missing-data=skip records "
                   "the other runs' values)");
        goto done;
    }
    if (tg_baseline_check_results(&run, o.allow_mismatch, &diag) == TG_OK)
        b = tg_baseline_record_keep(&run, rs, TG_VERSION, date, o.keep_outliers, &diag);
    rc = tg_cli_report_diag(&diag, TG_OK);
    if (!b) {
        if (rc == TG_OK) rc = TG_EINTERNAL;
        goto done;
    }
    if ((rc = write_baseline(b, o.out)) != TG_OK) goto done;
    if (strcmp(o.out, "-"))
        tg_cli_say("recorded %zu metric%s from %zu run%s into %s",
                   b->n_metrics, b->n_metrics == 1 ? "" : "s", b->n_runs,
                   b->n_runs == 1 ? "" : "s", o.out);

done:
    tg_baseline_free(b);
    if (run.arena) tg_cli_run_free(&run);
    tg_inputs_free(&in);
    tg_rules_free(rs);
    free(paths);
    tg_diag_clear(&diag);
    tg_cli_sets_free(&o.sets);
    return rc;
}

/* --------------------------------------------------------------- show */

/* A string from the baseline file (names, versions, trace paths: recorded
** from traces, or edited by hand), escaped (engine/common/text.h). */
static void show_text(FILE *out, const char *s)
{
    tg_text_fput(out, s, TG_TEXT_CAP_NAME, 0);
}

static void show_metric(const tg_baseline *b, const tg_baseline_metric *m, FILE *out)
{
    char med[48], mad[48], v[48];
    tg_fmt_num_digits(med, sizeof med, m->median, m->unit, 6);
    tg_fmt_num(mad, sizeof mad, m->mad, m->unit);
    fputs("  ", out);
    show_text(out, m->rule);
    fputs("\n    metric   ", out);
    show_text(out, m->metric);
    fprintf(out, " (%s)\n", tg_baseline_direction_name(m->direction));
    fprintf(out, "    median   %s   MAD %s   runs with a value: %zu of %zu\n", med, mad,
            m->n_runs, b->n_runs);
    tg_spread sp;
    if (tg_baseline_spread(b, m, NAN, &sp) && sp.measured) {
        char lo[48], hi[48], c[48];
        tg_fmt_num(lo, sizeof lo, sp.lo, m->unit);
        tg_fmt_num(hi, sizeof hi, sp.hi, m->unit);
        tg_fmt_num_digits(c, sizeof c, sp.value, m->unit, 6);
        fprintf(out, "    band     %s .. %s (%s +- %g x the spread of %zu runs, %.3g%%%s)\n", lo, hi, c,
                TG_BASELINE_BAND_K, sp.n_runs, 100 * sp.rel, sp.clamped ? ", clamped at 0" : "");
    } else {
        fprintf(out, "    band     not measured (needs %d runs; a check assumes the rule's run_noise)\n",
                TG_BASELINE_MIN_BAND_RUNS);
    }
    if (m->n_kept_outliers) {
        fprintf(out, "    outliers kept, left out of the value and band:");
        for (size_t i = 0; i < m->n_kept_outliers; i++) {
            size_t k = m->kept_outliers[i];
            fputc(' ', out);
            show_text(out, b->runs[k].trace);
            tg_fmt_num_digits(v, sizeof v, m->runs[k], m->unit, 6);
            fprintf(out, " (%s)%s", v, i + 1 < m->n_kept_outliers ? "," : "");
        }
        fputc('\n', out);
    }
    fprintf(out, "    per run ");
    for (size_t i = 0; i < b->n_runs; i++) {
        tg_fmt_num_digits(v, sizeof v, m->runs[i], m->unit, 6);
        fprintf(out, " %s%s", v, i + 1 < b->n_runs ? "," : "");
    }
    fprintf(out, "\n    samples  %zu kept of %zu", m->n_samples, m->n_samples_total);
    if (m->samples_field) {
        fputs(" (", out);
        show_text(out, m->samples_field);
        fputc(')', out);
    }
    if (m->n_samples) {
        char lo[48], hi[48];
        tg_fmt_num(lo, sizeof lo, m->samples[0], m->unit);
        tg_fmt_num(hi, sizeof hi, m->samples[m->n_samples - 1], m->unit);
        fprintf(out, ", range %s .. %s", lo, hi);
    }
    fprintf(out, "\n");
}

int tg_cmd_baseline_show(const tg_cli_args *a)
{
    const char *const *argv = a->operands;
    tg_diag diag;
    tg_diag_init(&diag);
    tg_baseline *b = tg_baseline_load(argv[0], &diag);
    int rc = tg_cli_report_diag(&diag, TG_OK);
    tg_diag_clear(&diag);
    if (!b) return rc ? rc : TG_EUSAGE;
    fputs("baseline ", stdout);
    show_text(stdout, argv[0]);
    printf(": format %d, recorded ", b->format_version);
    show_text(stdout, b->date ? b->date : "(no date)");
    fputs(" by tracegate ", stdout);
    show_text(stdout, b->tool_version ? b->tool_version : "(unknown)");
    printf("\nruns (%zu):\n", b->n_runs);
    for (size_t i = 0; i < b->n_runs; i++) {
        const tg_baseline_run *r = &b->runs[i];
        printf("  %zu. ", i + 1);
        show_text(stdout, r->trace);
        fputs("  GPU ", stdout);
        show_text(stdout, r->gpu_names ? r->gpu_names : "unknown");
        fputs("  nsys ", stdout);
        show_text(stdout, r->nsys_version ? r->nsys_version : "unknown");
        fputs("  schema ", stdout);
        show_text(stdout, r->schema_version ? r->schema_version : "unknown");
        fputc('\n', stdout);
    }
    printf("metrics (%zu):\n", b->n_metrics);
    for (size_t i = 0; i < b->n_metrics; i++) show_metric(b, &b->metrics[i], stdout);
    tg_baseline_free(b);
    return fflush(stdout) == 0 ? TG_OK : TG_EINTERNAL;
}
