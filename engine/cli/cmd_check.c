/*
** `tracegate check`: load the rule set (built-in rules.d by default), run it
** over every trace (engine/cli/pipeline.c), compare with a baseline when one
** is given, write the reports asked for, and turn the verdicts into the exit
** status of DESIGN §5: 0 pass, 1 gate failed, 2 usage/rule/baseline error,
** 3 trace unreadable or lacking data a rule needs, 4 internal error.
*/
#include "cli.h"

#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../baseline/baseline.h"
#include "../report/report.h"
#include "inputs.h"
#include "tg_config.h"

#define MAX_OUTPUTS 16

typedef struct output {
    tg_format format;
    const char *path;          /* NULL: stdout */
} output;

typedef struct check_args {
    const char **rules;   size_t n_rules, cap_rules;
    tg_param_set *sets;   size_t n_sets, cap_sets;
    output outputs[MAX_OUTPUTS];
    size_t n_outputs;
    bool format_given;
    tg_severity fail_on;
    bool fail_never;
    tg_missing_mode missing;
    const char *baseline;
    bool allow_mismatch;
    const char *iteration_pattern;
    int jobs;
    int color;                 /* -1 auto, 0 never, 1 always */
    bool quiet;
} check_args;

static void check_usage(FILE *f)
{
    fprintf(f,
        "usage: tracegate check [options] TRACE...\n"
        "  --rules PATH          rule file or folder (repeatable; 'builtin' = the built-in rules)\n"
        "  --format FORMAT       text (default), json, junit, sarif, github, markdown\n"
        "  -o FORMAT=FILE        also write FORMAT to FILE (repeatable)\n"
        "  --fail-on LEVEL       error (default), warning, info or never\n"
        "  --missing-data MODE   fail (default: exit 3) or skip rules whose data was not recorded\n"
        "  --baseline FILE       compare metrics with a stored baseline\n"
        "  --allow-mismatch      accept a baseline from another GPU model or schema\n"
        "  --set RULE.PARAM=VAL  override a rule parameter (repeatable)\n"
        "  --iteration-pattern RE  NVTX range names that mark iterations\n"
        "  --jobs N              check N traces in parallel\n"
        "  --color WHEN          auto (default), always, never\n"
        "  --quiet               text: only failures and the verdict\n");
}

/* "RULE.PARAM=VALUE" -> a tg_param_set (strings point into arg). */
static bool parse_set(char *arg, tg_param_set *out)
{
    char *eq = strchr(arg, '=');
    if (!eq) return false;
    *eq = 0;
    char *dot = strrchr(arg, '.');
    if (!dot || dot == arg || !dot[1] || !eq[1]) return false;
    *dot = 0;
    out->rule = arg;
    out->param = dot + 1;
    out->value = eq + 1;
    return true;
}

static bool parse_severity(const char *s, check_args *a)
{
    a->fail_never = false;
    if (!strcmp(s, "error")) a->fail_on = TG_SEV_ERROR;
    else if (!strcmp(s, "warning")) a->fail_on = TG_SEV_WARNING;
    else if (!strcmp(s, "info")) a->fail_on = TG_SEV_INFO;
    else if (!strcmp(s, "never")) a->fail_never = true;
    else return false;
    return true;
}

static int bad_usage(const char *fmt, const char *arg)
{
    fprintf(stderr, "tracegate: ");
    fprintf(stderr, fmt, arg);
    fprintf(stderr, " (see 'tracegate check --help')\n");
    return TG_EUSAGE;
}

static int parse_args(int argc, char **argv, check_args *a)
{
    enum { O_RULES = 256, O_FORMAT, O_FAIL_ON, O_MISSING, O_BASELINE, O_MISMATCH,
           O_SET, O_PATTERN, O_JOBS, O_COLOR, O_QUIET, O_HELP };
    static const struct option opts[] = {
        {"rules", required_argument, 0, O_RULES},     {"format", required_argument, 0, O_FORMAT},
        {"fail-on", required_argument, 0, O_FAIL_ON}, {"missing-data", required_argument, 0, O_MISSING},
        {"baseline", required_argument, 0, O_BASELINE}, {"allow-mismatch", no_argument, 0, O_MISMATCH},
        {"set", required_argument, 0, O_SET},         {"iteration-pattern", required_argument, 0, O_PATTERN},
        {"jobs", required_argument, 0, O_JOBS},       {"color", required_argument, 0, O_COLOR},
        {"quiet", no_argument, 0, O_QUIET},           {"help", no_argument, 0, O_HELP},
        {0, 0, 0, 0}};
    a->fail_on = TG_SEV_ERROR;
    a->missing = TG_MISSING_FAIL;
    a->jobs = 1;
    a->color = -1;
    a->outputs[0] = (output){TG_FMT_TEXT, NULL};
    a->n_outputs = 1;
    optind = 1;
    opterr = 0;
    int c;
    while ((c = getopt_long(argc, argv, "o:j:q", opts, NULL)) != -1) {
        switch (c) {
        case O_RULES:
            if (!TG_PUSH(a->rules, a->n_rules, a->cap_rules, optarg)) return TG_EINTERNAL;
            break;
        case O_FORMAT: {
            int f = tg_format_parse(optarg);
            if (f < 0) return bad_usage("unknown format '%s'", optarg);
            a->outputs[0].format = (tg_format)f;
            a->format_given = true;
            break;
        }
        case 'o': {
            char *eq = strchr(optarg, '=');
            if (!eq || eq == optarg || !eq[1]) return bad_usage("-o wants FORMAT=FILE, not '%s'", optarg);
            *eq = 0;
            int f = tg_format_parse(optarg);
            if (f < 0) return bad_usage("unknown format '%s'", optarg);
            if (a->n_outputs >= MAX_OUTPUTS) return bad_usage("too many outputs at '%s'", eq + 1);
            a->outputs[a->n_outputs++] = (output){(tg_format)f, eq + 1};
            break;
        }
        case O_FAIL_ON:
            if (!parse_severity(optarg, a)) return bad_usage("--fail-on wants error, warning, info or never, not '%s'", optarg);
            break;
        case O_MISSING:
            if (!strcmp(optarg, "fail")) a->missing = TG_MISSING_FAIL;
            else if (!strcmp(optarg, "skip")) a->missing = TG_MISSING_SKIP;
            else return bad_usage("--missing-data wants fail or skip, not '%s'", optarg);
            break;
        case O_BASELINE: a->baseline = optarg; break;
        case O_MISMATCH: a->allow_mismatch = true; break;
        case O_SET: {
            tg_param_set s;
            char *copy = optarg;
            if (!parse_set(copy, &s)) return bad_usage("--set wants RULE.PARAM=VALUE, not '%s'", optarg);
            if (!TG_PUSH(a->sets, a->n_sets, a->cap_sets, s)) return TG_EINTERNAL;
            break;
        }
        case O_PATTERN: a->iteration_pattern = optarg; break;
        case 'j':
        case O_JOBS: {
            char *end;
            long n = strtol(optarg, &end, 10);
            if (*end || n < 1 || n > 256) return bad_usage("--jobs wants a number from 1 to 256, not '%s'", optarg);
            a->jobs = (int)n;
            break;
        }
        case O_COLOR:
            if (!strcmp(optarg, "auto")) a->color = -1;
            else if (!strcmp(optarg, "always")) a->color = 1;
            else if (!strcmp(optarg, "never")) a->color = 0;
            else return bad_usage("--color wants auto, always or never, not '%s'", optarg);
            break;
        case 'q':
        case O_QUIET: a->quiet = true; break;
        case O_HELP: check_usage(stdout); return -1;
        default:
            return bad_usage("unknown or incomplete option '%s'", argv[optind - 1]);
        }
    }
    return TG_OK;
}

/* The rule paths to load: --rules as given ('builtin' resolved), or the
** built-in set. */
static int rule_paths(check_args *a, const char ***paths, size_t *n)
{
    const char *builtin = tg_cli_builtin_rules();
    if (a->n_rules == 0) {
        if (!builtin) {
            fprintf(stderr, "tracegate: the built-in rules (rules.d) were not found; "
                            "set TRACEGATE_RULES_DIR or pass --rules PATH\n");
            return TG_EUSAGE;
        }
        static const char *one[1];
        one[0] = builtin;
        *paths = one;
        *n = 1;
        return TG_OK;
    }
    for (size_t i = 0; i < a->n_rules; i++) {
        if (strcmp(a->rules[i], "builtin") == 0) {
            if (!builtin) {
                fprintf(stderr, "tracegate: --rules builtin: the built-in rules (rules.d) were not found\n");
                return TG_EUSAGE;
            }
            a->rules[i] = builtin;
        }
    }
    *paths = a->rules;
    *n = a->n_rules;
    return TG_OK;
}

/* Exit status from the verdicts (DESIGN §5). */
static int verdict_status(const tg_run_result *run, const check_args *a, int eval_status)
{
    bool failed = false, missing = false, rule_error = false;
    for (size_t i = 0; i < run->n_traces; i++) {
        const tg_trace_result *tr = &run->traces[i];
        for (size_t j = 0; j < tr->n_results; j++) {
            const tg_rule_result *r = &tr->results[j];
            if (r->verdict == TG_V_ERROR) {
                if (r->missing_data) missing = true;
                else rule_error = true;
            }
            if (r->verdict == TG_V_FAIL && !a->fail_never &&
                (r->severity >= a->fail_on || r->regression != 0))
                failed = true;
        }
    }
    if (eval_status == TG_EINTERNAL || rule_error) return TG_EINTERNAL;
    if (eval_status == TG_ETRACE || missing) return TG_ETRACE;
    return failed ? TG_FAIL : TG_OK;
}

static int write_outputs(const check_args *a, const tg_run_result *run, const tg_ruleset *rs)
{
    int status = TG_OK;
    for (size_t i = 0; i < a->n_outputs; i++) {
        const output *o = &a->outputs[i];
        FILE *f = o->path ? fopen(o->path, "w") : stdout;
        if (!f) {
            fprintf(stderr, "tracegate: cannot write %s: %s\n", o->path, strerror(errno));
            status = TG_EUSAGE;
            continue;
        }
        tg_report_opts ro = {
            .color = o->path ? false : (a->color < 0 ? tg_cli_color(stdout) : a->color == 1),
            .quiet = a->quiet,
            .fail_on = a->fail_on,
            .fail_never = a->fail_never,
            .tool_version = TG_VERSION,
            .step_summary_path = getenv("GITHUB_STEP_SUMMARY"),
        };
        if (tg_report_write(o->format, run, rs, &ro, f) != TG_OK) status = TG_EINTERNAL;
        if (o->path && fclose(f) != 0) {
            fprintf(stderr, "tracegate: cannot write %s: %s\n", o->path, strerror(errno));
            status = TG_EUSAGE;
        } else if (!o->path) {
            fflush(stdout);
        }
    }
    return status;
}

static int run_check(check_args *a, int n_traces, char **traces)
{
    const char **paths;
    size_t n_paths;
    int st = rule_paths(a, &paths, &n_paths);
    if (st != TG_OK) return st;

    tg_diag diag;
    tg_diag_init(&diag);
    tg_ruleset *rs = tg_rules_load(paths, n_paths, a->sets, a->n_sets, &diag);
    st = tg_cli_report_diag(&diag, TG_OK);
    tg_diag_clear(&diag);
    if (!rs) return st != TG_OK ? st : TG_EUSAGE;

    tg_baseline *baseline = NULL;
    if (a->baseline) {
        baseline = tg_baseline_load(a->baseline, &diag);
        st = tg_cli_report_diag(&diag, TG_OK);
        tg_diag_clear(&diag);
        if (!baseline) {
            tg_rules_free(rs);
            return st != TG_OK ? st : TG_EUSAGE;
        }
    }

    tg_inputs inputs;
    st = tg_inputs_resolve((const char *const *)traces, (size_t)n_traces, &inputs);
    if (st != TG_OK) {
        tg_baseline_free(baseline);
        tg_rules_free(rs);
        return st;
    }

    tg_run_result run = {.arena = tg_arena_new()};
    tg_eval_opts eo = {.missing = a->missing, .has_baseline = baseline != NULL};
    tg_model_params mp = {.iteration_pattern = a->iteration_pattern};
    int eval_status = run.arena ? tg_cli_evaluate(inputs.paths, inputs.n, rs, &eo, &mp, a->jobs, &run)
                                : TG_EINTERNAL;

    if (baseline && eval_status != TG_EINTERNAL) {
        if (tg_baseline_apply(baseline, rs, &run, a->allow_mismatch, &diag) != TG_OK) {
            st = tg_cli_report_diag(&diag, TG_EUSAGE);
            tg_diag_clear(&diag);
            goto done;
        }
        tg_cli_report_diag(&diag, TG_OK); /* warnings (allowed mismatch) */
        tg_diag_clear(&diag);
    }

    st = verdict_status(&run, a, eval_status);
    int wst = write_outputs(a, &run, rs);
    if (wst != TG_OK && st == TG_OK) st = wst;
done:
    tg_cli_run_free(&run);
    tg_inputs_free(&inputs);
    tg_baseline_free(baseline);
    tg_rules_free(rs);
    return st;
}

int tg_cmd_check(int argc, char **argv)
{
    check_args a = {0};
    int st = parse_args(argc, argv, &a);
    if (st == TG_OK && optind >= argc) {
        fprintf(stderr, "tracegate: check needs at least one TRACE (see 'tracegate check --help')\n");
        st = TG_EUSAGE;
    }
    if (st == TG_OK) st = run_check(&a, argc - optind, argv + optind);
    free(a.rules);
    free(a.sets);
    return st < 0 ? TG_OK : st;
}
