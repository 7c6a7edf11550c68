/*
** `tracegate check`: load the rule set (built-in rules.d by default), run it
** over every trace (engine/cli/pipeline.c), compare with a baseline when one
** is given, write the reports asked for, and turn the verdicts into the exit
** status of docs/formats.md: 0 pass, 1 gate failed, 2 usage/rule/baseline
** error, 3 trace unreadable or lacking data a rule needs, 4 internal error.
*/
#include "cli.h"

#include <getopt.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "../baseline/baseline.h"
#include "../report/report.h"
#include "inputs.h"
#include "outputs.h"
#include "tg_config.h"

typedef struct check_args {
    const char **rules;   size_t n_rules, cap_rules;
    tg_param_set *sets;   size_t n_sets, cap_sets;
    tg_cli_outputs out;
    tg_missing_mode missing;
    const char *baseline;
    bool allow_mismatch;
    const char *iteration_pattern;
    int jobs;
    int64_t max_memory;        /* --max-memory, 0 = no limit */
    bool load_all;             /* --load all */
    tg_origin_opts origin;     /* --rank, --world-size, --rank-pattern, --job, --host */
} check_args;

static void check_usage(FILE *f)
{
    fprintf(f,
        "usage: tracegate check [options] TRACE...\n"
        "  --rules PATH          rule file or folder (repeatable; 'builtin' = the built-in rules)\n"
        "  --format FORMAT       text (default), json, junit, sarif, github, markdown\n"
        "  -o FORMAT=FILE        also write FORMAT to FILE (repeatable)\n"
        "  --fail-on LEVEL       error (default), warning, info or never\n"
        "  --inconclusive MODE   pass (default) or fail: a regression rule whose change\n"
        "                        the baseline cannot tell from run-to-run noise\n"
        "  --missing-data MODE   fail (default: exit 3) or skip rules whose data was not recorded\n"
        "  --baseline FILE       compare metrics with a stored baseline\n"
        "  --allow-mismatch      accept a baseline from another GPU model or schema\n"
        "  --set RULE.PARAM=VAL  override a rule parameter (repeatable)\n"
        "  --iteration-pattern RE  NVTX range names that mark iterations\n"
        "  --jobs N              check N traces in parallel\n"
        "  --max-memory SIZE     refuse (exit 3) a trace whose loading would need more\n"
        "                        than SIZE (e.g. 512MiB, 4GiB), before reading it\n"
        "  --load WHAT           needed (default): keep only the rows the rules can\n"
        "                        count; all: keep every row of every table (same\n"
        "                        results, more memory)\n"
        "  --rank N              the trace is rank N of its job (one trace)\n"
        "  --rank-pattern RE     each trace's rank is group 1 of RE in its path,\n"
        "                        e.g. 'rank([0-9]+)' for rank12.sqlite\n"
        "  --world-size W        the job has W ranks (0 to W-1)\n"
        "  --job ID              the job the traces belong to (e.g. $SLURM_JOB_ID)\n"
        "  --host NAME           the host that recorded the traces\n"
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

static int bad_usage(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static int bad_usage(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *msg = NULL;
    if (vasprintf(&msg, fmt, ap) < 0) msg = NULL;
    va_end(ap);
    tg_cli_say("%s (see 'tracegate check --help')", msg ? msg : fmt);
    free(msg);
    return TG_EUSAGE;
}

/* A rank or a world size: decimal digits, at least lo, at most 2^31 - 1. */
static bool parse_count(const char *s, int64_t lo, int64_t *out)
{
    char *end;
    if (!*s || *s < '0' || *s > '9') return false;
    long long v = strtoll(s, &end, 10);
    if (*end || v < lo || v > INT32_MAX) return false;
    *out = v;
    return true;
}

static int parse_args(int argc, char **argv, check_args *a)
{
    enum { O_RULES = 256, O_FORMAT, O_FAIL_ON, O_INCONCLUSIVE, O_MISSING, O_BASELINE, O_MISMATCH,
           O_SET, O_PATTERN, O_JOBS, O_COLOR, O_QUIET, O_HELP, O_MAX_MEMORY, O_LOAD,
           O_RANK, O_RANK_PATTERN, O_WORLD_SIZE, O_JOB, O_HOST };
    static const struct option opts[] = {
        {"rules", required_argument, 0, O_RULES},     {"format", required_argument, 0, O_FORMAT},
        {"fail-on", required_argument, 0, O_FAIL_ON}, {"missing-data", required_argument, 0, O_MISSING},
        {"baseline", required_argument, 0, O_BASELINE}, {"allow-mismatch", no_argument, 0, O_MISMATCH},
        {"set", required_argument, 0, O_SET},         {"iteration-pattern", required_argument, 0, O_PATTERN},
        {"jobs", required_argument, 0, O_JOBS},       {"color", required_argument, 0, O_COLOR},
        {"quiet", no_argument, 0, O_QUIET},           {"help", no_argument, 0, O_HELP},
        {"max-memory", required_argument, 0, O_MAX_MEMORY},
        {"load", required_argument, 0, O_LOAD},       {"inconclusive", required_argument, 0, O_INCONCLUSIVE},
        {"rank", required_argument, 0, O_RANK},       {"rank-pattern", required_argument, 0, O_RANK_PATTERN},
        {"world-size", required_argument, 0, O_WORLD_SIZE}, {"job", required_argument, 0, O_JOB},
        {"host", required_argument, 0, O_HOST},
        {0, 0, 0, 0}};
    tg_cli_outputs_init(&a->out);
    a->missing = TG_MISSING_FAIL;
    a->jobs = 1;
    a->origin = TG_ORIGIN_OPTS_NONE;
    optind = 1;
    opterr = 0;
    int c;
    while ((c = getopt_long(argc, argv, "o:j:q", opts, NULL)) != -1) {
        switch (c) {
        case O_RULES:
            if (!TG_PUSH(a->rules, a->n_rules, a->cap_rules, optarg)) return TG_EINTERNAL;
            break;
        case O_FORMAT:
            if (tg_cli_outputs_option(&a->out, "format", optarg) < 0) return TG_EUSAGE;
            break;
        case 'o':
            if (tg_cli_outputs_option(&a->out, "o", optarg) < 0) return TG_EUSAGE;
            break;
        case O_FAIL_ON:
            if (tg_cli_outputs_option(&a->out, "fail-on", optarg) < 0) return TG_EUSAGE;
            break;
        case O_INCONCLUSIVE:
            if (tg_cli_outputs_option(&a->out, "inconclusive", optarg) < 0) return TG_EUSAGE;
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
        case O_PATTERN: {
            tg_diag d;   /* checked here: a bad pattern is a usage error before any trace */
            tg_diag_init(&d);
            bool ok = tg_model_pattern_ok(optarg, &d);
            tg_cli_report_diag(&d, TG_OK);
            tg_diag_clear(&d);
            if (!ok) return TG_EUSAGE;
            a->iteration_pattern = optarg;
            break;
        }
        case O_MAX_MEMORY:
            if (!tg_parse_size(optarg, &a->max_memory))
                return bad_usage("--max-memory wants a size such as 512MiB or 4GiB, not '%s'", optarg);
            break;
        case O_LOAD:
            if (!strcmp(optarg, "all")) a->load_all = true;
            else if (!strcmp(optarg, "needed")) a->load_all = false;
            else return bad_usage("--load wants needed or all, not '%s'", optarg);
            break;
        case 'j':
        case O_JOBS: {
            char *end;
            long n = strtol(optarg, &end, 10);
            if (*end || n < 1 || n > 256) return bad_usage("--jobs wants a number from 1 to 256, not '%s'", optarg);
            a->jobs = (int)n;
            break;
        }
        case O_RANK:
            if (!parse_count(optarg, 0, &a->origin.rank))
                return bad_usage("--rank wants a rank: a number from 0, not '%s'", optarg);
            break;
        case O_WORLD_SIZE:
            if (!parse_count(optarg, 1, &a->origin.world_size))
                return bad_usage("--world-size wants the number of ranks: 1 or more, not '%s'", optarg);
            break;
        case O_RANK_PATTERN: a->origin.rank_pattern = optarg; break;
        case O_JOB:
        case O_HOST:
            if (!*optarg) return bad_usage("--%s wants a non-empty value", c == O_JOB ? "job" : "host");
            *(c == O_JOB ? &a->origin.job : &a->origin.host) = optarg;
            break;
        case O_COLOR:
            if (tg_cli_outputs_option(&a->out, "color", optarg) < 0) return TG_EUSAGE;
            break;
        case 'q':
        case O_QUIET: a->out.quiet = true; break;
        case O_HELP: check_usage(stdout); return -1;
        default: {
            char why[128];
            return bad_usage("%s", tg_cli_option_error("o:j:q", argv, why, sizeof why));
        }
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
            tg_cli_say("the built-in rules (rules.d) were not found; "
                       "set TRACEGATE_RULES_DIR or pass --rules PATH");
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
                tg_cli_say("--rules builtin: the built-in rules (rules.d) were not found");
                return TG_EUSAGE;
            }
            a->rules[i] = builtin;
        }
    }
    *paths = a->rules;
    *n = a->n_rules;
    return TG_OK;
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
    if (tg_rules_count(rs) == 0) {
        /* e.g. --rules pointing at a folder without *.yaml files: a gate
        ** without rules would pass anything. */
        tg_cli_say("no rules were loaded from %s%s; a check without rules would pass "
                   "anything", paths[0], n_paths > 1 ? " and the other --rules paths" : "");
        tg_rules_free(rs);
        return TG_EUSAGE;
    }

    tg_baseline *baseline = NULL;
    if (a->baseline) {
        baseline = tg_baseline_load(a->baseline, &diag);
        st = tg_cli_report_diag(&diag, TG_OK);
        tg_diag_clear(&diag);
        /* the baseline must fit the rules: an entry for every regression
        ** rule, for its current definition (docs/regressions.md) */
        if (baseline && tg_baseline_validate(baseline, rs, &diag) != TG_OK) {
            st = tg_cli_report_diag(&diag, TG_EUSAGE);
            tg_diag_clear(&diag);
            tg_baseline_free(baseline);
            baseline = NULL;
        }
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

    /* Where the traces come from: options that cannot fit are refused
    ** before any trace is read (engine/check/origin.c). */
    st = tg_origin_opts_check(&a->origin, (const char *const *)traces, (size_t)n_traces, &diag);
    if (st != TG_OK) {
        tg_cli_report_diag(&diag, st);
        tg_diag_clear(&diag);
        tg_inputs_free(&inputs);
        tg_baseline_free(baseline);
        tg_rules_free(rs);
        return st;
    }

    /* No report may land on a file this check reads: refused before any
    ** trace is read or any report written (engine/cli/outfile.h). */
    tg_cli_reads reads = {0};
    bool listed = tg_cli_reads_add_rules(&reads, rs) && tg_cli_reads_add(&reads, a->baseline, "baseline");
    for (int i = 0; listed && i < n_traces; i++) listed = tg_cli_reads_add(&reads, traces[i], "trace");
    for (size_t i = 0; listed && i < inputs.n; i++) listed = tg_cli_reads_add(&reads, inputs.paths[i], "trace");
    st = listed ? tg_cli_outputs_check(&a->out, &reads) : TG_EINTERNAL;
    tg_cli_reads_free(&reads);
    if (st != TG_OK) {
        tg_inputs_free(&inputs);
        tg_baseline_free(baseline);
        tg_rules_free(rs);
        return st;
    }

    /* --max-memory: every trace is measured before any is read; one over
    ** the limit stops the check (exit 3) instead of the OOM killer. */
    bool over = false;
    tg_check_plan plan = tg_check_plan_for(rs);
    plan.load_all = a->load_all;
    plan.iteration_pattern = a->iteration_pattern;
    plan.eval.missing = a->missing;
    plan.eval.has_baseline = baseline != NULL;
    tg_load_opts load = tg_check_load_opts(&plan);
    for (size_t i = 0; a->max_memory > 0 && i < inputs.n; i++)
        if (!tg_trace_fits_with(inputs.paths[i], &load, a->max_memory, &diag)) over = true;
    if (over) {
        st = tg_cli_report_diag(&diag, TG_ETRACE);
        tg_diag_clear(&diag);
        tg_inputs_free(&inputs);
        tg_baseline_free(baseline);
        tg_rules_free(rs);
        return st;
    }

    tg_run_result run = {.arena = tg_arena_new()};
    /* baseline.STAT in rule expressions reads the stored statistics */
    if (baseline && run.arena) plan.eval.baselines = tg_baseline_rule_stats(baseline, rs, run.arena);
    int eval_status = run.arena ? tg_cli_evaluate(inputs.paths, inputs.n, &plan, a->jobs, &run) : TG_EINTERNAL;
    for (size_t i = 0; i < run.n_traces && eval_status != TG_EINTERNAL; i++) {
        tg_trace_result *t = &run.traces[i];
        if (!tg_origin_apply(&a->origin, t, traces[i], t->arena ? t->arena : run.arena, &diag))
            eval_status = TG_EINTERNAL;
    }
    tg_cli_report_diag(&diag, TG_OK);   /* an option replacing what a trace recorded */
    tg_diag_clear(&diag);

    if (baseline && eval_status != TG_EINTERNAL) {
        if (tg_baseline_apply(baseline, rs, &run, a->allow_mismatch, &diag) != TG_OK) {
            st = tg_cli_report_diag(&diag, TG_EUSAGE);
            tg_diag_clear(&diag);
            goto done;
        }
        tg_cli_report_diag(&diag, TG_OK); /* warnings (allowed mismatch) */
        tg_diag_clear(&diag);
    }

    tg_report_opts gate = tg_cli_outputs_gate(&a->out);
    st = tg_cli_exit_status(&run, &gate, eval_status);
    /* a report that could not be written is exit 4 whatever the verdict */
    int wst = tg_cli_outputs_write(&a->out, &run, rs);
    if (wst != TG_OK) st = wst;
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
        tg_cli_say("check needs at least one TRACE (see 'tracegate check --help')");
        st = TG_EUSAGE;
    }
    if (st == TG_OK) st = run_check(&a, argc - optind, argv + optind);
    free(a.rules);
    free(a.sets);
    return st < 0 ? TG_OK : st;
}
