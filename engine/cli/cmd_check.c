/*
** `tracegate check`: load the rule set (built-in rules.d by default), run it
** over every trace (engine/cli/pipeline.c), compare with a baseline when one
** is given, write the reports asked for, and turn the verdicts into the exit
** status of DESIGN §5: 0 pass, 1 gate failed, 2 usage/rule/baseline error,
** 3 trace unreadable or lacking data a rule needs, 4 internal error.
*/
#include "cli.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "../baseline/baseline.h"
#include "../report/report.h"
#include "inputs.h"
#include "outputs.h"
#include "tg_config.h"

typedef struct check_args {
    const char **rule_paths;   size_t n_rules;   /* 'builtin' resolved */
    tg_cli_sets sets;
    tg_cli_outputs out;
    tg_missing_mode missing;
    const char *baseline;
    bool allow_mismatch;
    const char *iteration_pattern;
    int jobs;
    int64_t max_memory;        /* --max-memory, 0 = no limit */
    bool load_all;             /* --load all */
} check_args;

/* The parsed command line (options.h) into check_args. */
static int read_args(const tg_cli_args *in, check_args *a)
{
    tg_cli_outputs_init(&a->out);
    int st = tg_cli_outputs_read(&a->out, in);
    if (st != TG_OK) return st;
    a->missing = tg_cli_choice(in, TG_CLI_OPT_MISSING, 0) == 1 ? TG_MISSING_SKIP : TG_MISSING_FAIL;
    a->baseline = tg_cli_value(in, TG_CLI_OPT_BASELINE);
    a->allow_mismatch = tg_cli_flag(in, TG_CLI_OPT_ALLOW_MISMATCH);
    a->iteration_pattern = tg_cli_value(in, TG_CLI_OPT_PATTERN);
    a->jobs = tg_cli_count(in, TG_CLI_OPT_JOBS, 1);
    a->max_memory = tg_cli_size(in, TG_CLI_OPT_MAX_MEMORY);
    a->load_all = tg_cli_choice(in, TG_CLI_OPT_LOAD, 0) == 1;
    if (tg_cli_param_sets(in, &a->sets) != TG_OK) return TG_EINTERNAL;
    a->rule_paths = tg_cli_rule_paths(in->values[TG_CLI_OPT_RULES], in->n_values[TG_CLI_OPT_RULES], &a->n_rules);
    return a->rule_paths ? TG_OK : TG_EUSAGE;
}

static int run_check(check_args *a, int n_traces, const char *const *traces)
{
    const char **paths = a->rule_paths;
    size_t n_paths = a->n_rules;
    tg_diag diag;
    tg_diag_init(&diag);
    tg_ruleset *rs = tg_rules_load(paths, n_paths, a->sets.sets, a->sets.n, &diag);
    int st = tg_cli_report_diag(&diag, TG_OK);
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
    st = tg_inputs_resolve(traces, (size_t)n_traces, &inputs);
    if (st != TG_OK) {
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
        if (inputs.paths[i] && !tg_trace_fits_with(inputs.paths[i], &load, a->max_memory, &diag)) over = true;
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
    int eval_status = run.arena ? tg_cli_evaluate(&inputs, &plan, a->jobs, &run) : TG_EINTERNAL;

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

int tg_cmd_check(const tg_cli_args *in)
{
    check_args a = {0};
    int st = read_args(in, &a);
    if (st == TG_OK) st = run_check(&a, (int)in->n_operands, in->operands);
    free(a.rule_paths);
    tg_cli_sets_free(&a.sets);
    return st;
}
