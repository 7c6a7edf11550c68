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

static void usage(FILE *f)
{
    fprintf(f,
        "usage: tracegate baseline record -o FILE [--rules PATH]... [--set RULE.PARAM=VALUE]...\n"
        "                                 [--iteration-pattern RE] [--missing-data fail|skip]\n"
        "                                 [--allow-mismatch] [--jobs N] TRACE...\n"
        "       tracegate baseline show FILE\n"
        "\n"
        "record: evaluate every rule's metric on each trace (one run each) and store the\n"
        "        per-run values, their median and MAD and a sample of the per-row values\n"
        "        (-o - writes to stdout). The runs must share a GPU model and an export\n"
        "        schema unless --allow-mismatch.\n"
        "show:   print a baseline's provenance and statistics.\n");
}

/* ------------------------------------------------------------ options */

typedef struct record_opts {
    const char *out;
    const char **rules;
    size_t n_rules;
    tg_param_set *sets;
    size_t n_sets;
    const char *iteration_pattern;
    tg_missing_mode missing;
    bool allow_mismatch;
    int jobs;
    const char **traces;
    size_t n_traces;
} record_opts;

/* "RULE.PARAM=VALUE"; the rule id may itself contain dots, the param not. */
static bool parse_set(const char *arg, tg_param_set *out)
{
    const char *eq = strchr(arg, '=');
    if (!eq) return false;
    const char *dot = NULL;
    for (const char *p = arg; p < eq; p++)
        if (*p == '.') dot = p;
    if (!dot || dot == arg || dot + 1 == eq || !eq[1]) return false;
    char *rule = strndup(arg, (size_t)(dot - arg));
    char *param = strndup(dot + 1, (size_t)(eq - dot - 1));
    if (!rule || !param) {
        free(rule);
        free(param);
        return false;
    }
    *out = (tg_param_set){rule, param, eq + 1};
    return true;
}

static void free_opts(record_opts *o)
{
    for (size_t i = 0; i < o->n_sets; i++) {
        free((char *)o->sets[i].rule);
        free((char *)o->sets[i].param);
    }
    free(o->sets);
    free(o->rules);
    free(o->traces);
}

/* Value of an option given as "--opt VALUE" or "--opt=VALUE". */
static const char *opt_value(int argc, char **argv, int *i, const char *name)
{
    size_t len = strlen(name);
    const char *a = argv[*i];
    if (strncmp(a, name, len)) return NULL;
    if (a[len] == '=') return a + len + 1;
    if (a[len] != 0) return NULL;
    if (*i + 1 >= argc) {
        tg_cli_say("%s needs a value", name);
        return "";
    }
    return argv[++*i];
}

#define PUSH_OR_FAIL(arr, n, val)                                                    \
    do {                                                                             \
        void *grown_ = realloc((void *)(arr), ((n) + 1) * sizeof *(arr));            \
        if (!grown_) {                                                               \
            tg_cli_say("out of memory");                           \
            return TG_EINTERNAL;                                                     \
        }                                                                            \
        (arr) = grown_;                                                              \
        (arr)[(n)++] = (val);                                                        \
    } while (0)

static int parse_record(int argc, char **argv, record_opts *o)
{
    *o = (record_opts){.missing = TG_MISSING_FAIL, .jobs = 1};
    bool only_traces = false;
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i], *v;
        if (only_traces || a[0] != '-' || !strcmp(a, "-")) {
            PUSH_OR_FAIL(o->traces, o->n_traces, a);
        } else if (!strcmp(a, "--")) {
            only_traces = true;
        } else if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            usage(stdout);
            return -1;
        } else if ((v = opt_value(argc, argv, &i, "-o")) ||
                   (v = opt_value(argc, argv, &i, "--output"))) {
            if (!*v) return TG_EUSAGE;
            o->out = v;
        } else if ((v = opt_value(argc, argv, &i, "--rules"))) {
            if (!*v) return TG_EUSAGE;
            PUSH_OR_FAIL(o->rules, o->n_rules, v);
        } else if ((v = opt_value(argc, argv, &i, "--set"))) {
            tg_param_set s;
            if (!*v) return TG_EUSAGE;
            if (!parse_set(v, &s)) {
                tg_cli_say("--set expects RULE.PARAM=VALUE, not '%s'", v);
                return TG_EUSAGE;
            }
            PUSH_OR_FAIL(o->sets, o->n_sets, s);
        } else if ((v = opt_value(argc, argv, &i, "--iteration-pattern"))) {
            if (!*v) return TG_EUSAGE;
            o->iteration_pattern = v;
        } else if ((v = opt_value(argc, argv, &i, "--missing-data"))) {
            if (!strcmp(v, "fail")) o->missing = TG_MISSING_FAIL;
            else if (!strcmp(v, "skip")) o->missing = TG_MISSING_SKIP;
            else {
                tg_cli_say("--missing-data is fail or skip, not '%s'", v);
                return TG_EUSAGE;
            }
        } else if ((v = opt_value(argc, argv, &i, "--jobs")) ||
                   (v = opt_value(argc, argv, &i, "-j"))) {
            char *end;
            long n = strtol(v, &end, 10);
            if (!*v || *end || n < 1 || n > 1024) {
                tg_cli_say("--jobs expects a number from 1 to 1024");
                return TG_EUSAGE;
            }
            o->jobs = (int)n;
        } else if (!strcmp(a, "--allow-mismatch")) {
            o->allow_mismatch = true;
        } else {
            tg_cli_say("baseline record: unknown option '%s'", a);
            usage(stderr);
            return TG_EUSAGE;
        }
    }
    if (!o->out) {
        tg_cli_say("baseline record needs -o FILE (or -o - for stdout)");
        return TG_EUSAGE;
    }
    if (o->n_traces == 0) {
        tg_cli_say("baseline record needs at least one TRACE");
        return TG_EUSAGE;
    }
    return TG_OK;
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

/* Resolve the --rules arguments ("builtin" and the default). */
static int rule_paths(const record_opts *o, const char ***paths, size_t *n)
{
    size_t count = o->n_rules ? o->n_rules : 1;
    *paths = calloc(count, sizeof **paths);
    if (!*paths) return TG_EINTERNAL;
    *n = count;
    for (size_t i = 0; i < count; i++) {
        const char *p = o->n_rules ? o->rules[i] : "builtin";
        if (!strcmp(p, "builtin")) {
            p = tg_cli_builtin_rules();
            if (!p) {
                tg_cli_say("the built-in rules (rules.d) were not found; "
                           "set TRACEGATE_RULES_DIR or pass --rules PATH");
                return TG_EUSAGE;
            }
        }
        (*paths)[i] = p;
    }
    return TG_OK;
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

static int cmd_record(int argc, char **argv)
{
    record_opts o;
    int rc = parse_record(argc, argv, &o);
    if (rc != TG_OK) {
        free_opts(&o);
        return rc < 0 ? TG_OK : rc;
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
    if ((rc = rule_paths(&o, &paths, &n_paths)) != TG_OK) goto done;
    rs = tg_rules_load(paths, n_paths, o.sets, o.n_sets, &diag);
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
    if ((rc = tg_inputs_resolve((const char *const *)o.traces, o.n_traces, &in)) != TG_OK)
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
    rc = tg_cli_evaluate(in.paths, in.n, &plan, o.jobs, &run);
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
        b = tg_baseline_record(&run, rs, TG_VERSION, date, &diag);
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
    free_opts(&o);
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
        char lo[48], hi[48];
        tg_fmt_num(lo, sizeof lo, sp.lo, m->unit);
        tg_fmt_num(hi, sizeof hi, sp.hi, m->unit);
        fprintf(out, "    band     %s .. %s (median +- %g x the spread of %zu runs, %.3g%%)\n", lo, hi,
                TG_BASELINE_BAND_K, sp.n_runs, 100 * sp.rel);
    } else {
        fprintf(out, "    band     not measured (needs %d runs; a check assumes the rule's run_noise)\n",
                TG_BASELINE_MIN_BAND_RUNS);
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

static int cmd_show(int argc, char **argv)
{
    if (argc != 1 || argv[0][0] == '-') {
        if (argc == 1 && (!strcmp(argv[0], "-h") || !strcmp(argv[0], "--help"))) {
            usage(stdout);
            return TG_OK;
        }
        usage(stderr);
        return TG_EUSAGE;
    }
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

int tg_cmd_baseline(int argc, char **argv)
{
    if (argc < 2) {
        usage(stderr);
        return TG_EUSAGE;
    }
    if (!strcmp(argv[1], "record")) return cmd_record(argc - 2, argv + 2);
    if (!strcmp(argv[1], "show")) return cmd_show(argc - 2, argv + 2);
    if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help") || !strcmp(argv[1], "help")) {
        usage(stdout);
        return TG_OK;
    }
    tg_cli_say("unknown baseline command '%s' (record or show)", argv[1]);
    return TG_EUSAGE;
}
