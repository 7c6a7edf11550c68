/*
** `tracegate check`: load the rule set (built-in rules.d by default), run it
** over every trace (engine/cli/pipeline.c), compare with a baseline when one
** is given, write the reports asked for, and turn the verdicts into the exit
** status of docs/formats.md: 0 pass, 1 gate failed, 2 usage/rule/baseline
** error, 3 trace unreadable or lacking data a rule needs, 4 internal error.
*/
#include "cli.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../baseline/baseline.h"
#include "../history/history.h"
#include "../common/sha256.h"
#include "../suppress/suppress.h"
#include "../report/report.h"
#include "inputs.h"
#include "outputs.h"
#include "tg_config.h"

typedef struct check_args {
    const tg_cli_args *args;
    const char **rule_paths;   size_t n_rules;   /* 'builtin' resolved */
    tg_cli_sets sets;
    tg_cli_outputs out;
    tg_missing_mode missing;
    const char *baseline;
    const char *history;       /* --history DB */
    bool record, replace;      /* not --no-record; --replace */
    tg_hist_meta meta;         /* --label, --time, --branch, --workload */
    char time_buf[32];
    bool allow_mismatch;
    const char *iteration_pattern;
    int jobs;
    int64_t max_memory;        /* --max-memory, 0 = no limit */
    bool load_all;             /* --load all */
    tg_origin_opts origin;     /* --rank, --world-size, --rank-pattern, --job, --host */
} check_args;

/* --history and what goes with it (docs/history.md). */
static int read_history_args(const tg_cli_args *in, check_args *a)
{
    a->history = tg_cli_value(in, TG_CLI_OPT_HISTORY);
    a->record = !tg_cli_flag(in, TG_CLI_OPT_NO_RECORD);
    a->replace = tg_cli_flag(in, TG_CLI_OPT_REPLACE);
    const tg_cli_option_id only[] = {TG_CLI_OPT_NO_RECORD, TG_CLI_OPT_REPLACE, TG_CLI_OPT_LABEL, TG_CLI_OPT_TIME,
                                     TG_CLI_OPT_BRANCH, TG_CLI_OPT_WORKLOAD};
    const char *names[] = {"--no-record", "--replace", "--label", "--time", "--branch", "--workload"};
    for (size_t i = 0; !a->history && i < sizeof only / sizeof *only; i++)
        if (in->n_values[only[i]] || tg_cli_flag(in, only[i]))
            return tg_cli_usage_error(in->cmd, "%s goes with --history DB", names[i]);
    if (a->history && a->baseline)
        return tg_cli_usage_error(in->cmd, "--history and --baseline are two baselines: give one");
    if (!a->history) return TG_OK;
    return tg_cli_history_meta(in, in->n_operands, &a->meta, a->time_buf);
}

/* The parsed command line (options.h) into check_args. */
static int read_args(const tg_cli_args *in, check_args *a)
{
    a->args = in;
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
    a->origin = TG_ORIGIN_OPTS_NONE;
    a->origin.rank = tg_cli_whole(in, TG_CLI_OPT_RANK, -1);
    a->origin.world_size = tg_cli_whole(in, TG_CLI_OPT_WORLD_SIZE, -1);
    a->origin.rank_pattern = tg_cli_value(in, TG_CLI_OPT_RANK_PATTERN);
    a->origin.job = tg_cli_value(in, TG_CLI_OPT_JOB);
    a->origin.host = tg_cli_value(in, TG_CLI_OPT_HOST);
    if (tg_cli_param_sets(in, &a->sets) != TG_OK) return TG_EINTERNAL;
    st = read_history_args(in, a);
    if (st != TG_OK) return st;
    a->rule_paths = tg_cli_rule_paths(in->values[TG_CLI_OPT_RULES], in->n_values[TG_CLI_OPT_RULES], &a->n_rules);
    return a->rule_paths ? TG_OK : TG_EUSAGE;
}

/* What a check holds while it runs; freed at once by check_free. */
typedef struct check_state {
    tg_ruleset *rs;
    tg_suppressions *suppressions;
    tg_baseline *baseline;
    tg_cli_history *history;
    tg_inputs inputs;
    tg_run_result run;
    char digest[8 + TG_SHA256_HEX];   /* "sha256:" and the hex digits */
} check_state;

static void check_free(check_state *c)
{
    if (c->run.arena) tg_cli_run_free(&c->run);
    tg_inputs_free(&c->inputs);
    tg_baseline_free(c->baseline);
    tg_cli_history_close(c->history);
    tg_suppress_free(c->suppressions);
    tg_rules_free(c->rs);
}

/* The rules, the suppressions naming them, the baseline fitting them. */
static int load_rules(check_args *a, check_state *c)
{
    tg_diag diag;
    tg_diag_init(&diag);
    c->rs = tg_rules_load(a->rule_paths, a->n_rules, a->sets.sets, a->sets.n, &diag);
    int st = tg_cli_report_diag(&diag, TG_OK);
    tg_diag_clear(&diag);
    if (!c->rs) return st != TG_OK ? st : TG_EUSAGE;
    if (tg_rules_count(c->rs) == 0) {
        /* e.g. --rules pointing at a folder without *.yaml files: a gate
        ** without rules would pass anything. */
        tg_cli_say("no rules were loaded from %s%s; a check without rules would pass anything", a->rule_paths[0],
                   a->n_rules > 1 ? " and the other --rules paths" : "");
        return TG_EUSAGE;
    }
    /* --suppress: the ids it names must be rules of this set */
    size_t n_ids;
    const char **ids = tg_cli_rule_ids(c->rs, &n_ids);
    st = ids ? tg_cli_load_suppressions(a->args, ids, n_ids, false, &c->suppressions) : TG_EINTERNAL;
    free(ids);
    if (st != TG_OK || !a->baseline) return st;
    c->baseline = tg_baseline_load(a->baseline, &diag);
    st = tg_cli_report_diag(&diag, TG_OK);
    tg_diag_clear(&diag);
    /* the baseline must fit the rules: an entry for every regression
    ** rule, for its current definition (docs/regressions.md) */
    if (c->baseline && tg_baseline_validate(c->baseline, c->rs, &diag) != TG_OK) {
        st = tg_cli_report_diag(&diag, TG_EUSAGE);
        tg_diag_clear(&diag);
        tg_baseline_free(c->baseline);
        c->baseline = NULL;
    }
    return c->baseline ? TG_OK : st != TG_OK ? st : TG_EUSAGE;
}

/* Where the traces come from: options that cannot fit are refused before
** any trace is read (engine/check/origin.c). */
static int check_origin(check_args *a, int n_traces, const char *const *traces)
{
    tg_diag diag;
    tg_diag_init(&diag);
    int st = tg_origin_opts_check(&a->origin, traces, (size_t)n_traces, &diag);
    if (st != TG_OK) tg_cli_report_diag(&diag, st);
    tg_diag_clear(&diag);
    return st;
}

/* No report may land on a file this check reads: refused before any
** trace is read or any report written (engine/cli/outfile.h). */
static int check_outputs(check_args *a, check_state *c, int n_traces, const char *const *traces)
{
    tg_cli_reads reads = {0};
    bool listed = tg_cli_reads_add_rules(&reads, c->rs) && tg_cli_reads_add(&reads, a->baseline, "baseline") &&
                  tg_cli_reads_add(&reads, a->history, "history");
    for (size_t i = 0; listed && i < a->args->n_values[TG_CLI_OPT_SUPPRESS]; i++)
        listed = tg_cli_reads_add(&reads, a->args->values[TG_CLI_OPT_SUPPRESS][i], "suppression file");
    for (int i = 0; listed && i < n_traces; i++) listed = tg_cli_reads_add(&reads, traces[i], "trace");
    for (size_t i = 0; listed && i < c->inputs.n; i++)
        listed = tg_cli_reads_add(&reads, c->inputs.paths[i], "trace");
    int st = listed ? tg_cli_outputs_check(&a->out, &reads) : TG_EINTERNAL;
    tg_cli_reads_free(&reads);
    return st;
}

/* --max-memory: every trace is measured before any is read; one over the
** limit stops the check (exit 3) instead of the OOM killer. */
static int check_memory(check_args *a, check_state *c, const tg_check_plan *plan)
{
    tg_diag diag;
    tg_diag_init(&diag);
    tg_load_opts load = tg_check_load_opts(plan);
    bool over = false;
    for (size_t i = 0; a->max_memory > 0 && i < c->inputs.n; i++) {
        if (!c->inputs.paths[i]) continue;
        load.threads = tg_trace_read_threads(c->inputs.paths[i], tg_cli_cores());   /* at most what a check uses */
        if (!tg_trace_fits_with(c->inputs.paths[i], &load, a->max_memory, &diag)) over = true;
    }
    int st = over ? tg_cli_report_diag(&diag, TG_ETRACE) : TG_OK;
    tg_diag_clear(&diag);
    return st;
}

/* Evaluate, compare with the baseline, apply the suppressions; the exit
** status, then every report written. */
static int evaluate_and_report(check_args *a, check_state *c, tg_check_plan *plan)
{
    tg_run_result *run = &c->run;
    /* baseline.STAT in rule expressions reads the stored statistics */
    if (c->baseline) plan->eval.baselines = tg_baseline_rule_stats(c->baseline, c->rs, run->arena);
    int eval_status = tg_cli_evaluate(&c->inputs, plan, a->jobs, run);
    tg_diag diag;
    tg_diag_init(&diag);
    for (size_t i = 0; i < run->n_traces && eval_status != TG_EINTERNAL; i++) {
        tg_trace_result *t = &run->traces[i];
        if (!tg_origin_apply(&a->origin, t, c->inputs.given[i], t->arena ? t->arena : run->arena, &diag))
            eval_status = TG_EINTERNAL;
    }
    tg_cli_report_diag(&diag, TG_OK);   /* an option replacing what a trace recorded */
    tg_diag_clear(&diag);
    if (c->history && eval_status != TG_EINTERNAL) {
        int st = tg_cli_history_judge(c->history, c->rs, &a->meta, run, a->allow_mismatch);
        if (st != TG_OK) return st;
        a->out.notes = tg_cli_history_notes(c->history, &a->out.n_notes);
    }
    if (c->baseline && eval_status != TG_EINTERNAL) {
        bool fits = tg_baseline_apply(c->baseline, c->rs, run, a->allow_mismatch, &diag) == TG_OK;
        int st = tg_cli_report_diag(&diag, fits ? TG_OK : TG_EUSAGE);   /* or the allowed mismatch's warnings */
        tg_diag_clear(&diag);
        if (!fits) return st;
    }
    /* findings a team accepts: marked, still reported (engine/suppress) */
    if (tg_cli_apply_suppressions(c->suppressions, run) != TG_OK) eval_status = TG_EINTERNAL;
    tg_report_opts gate = tg_cli_outputs_gate(&a->out);
    int st = tg_cli_exit_status(run, &gate, eval_status);
    /* the run joins the history once judged; one that could not be added
    ** is said, and the check's status says it too */
    int hst = c->history && a->record && eval_status != TG_EINTERNAL
                  ? tg_cli_history_record(c->history, run, &gate, a->replace) : TG_OK;
    /* a report that could not be written is exit 4 whatever the verdict */
    int wst = tg_cli_outputs_write(&a->out, run, c->rs);
    return wst != TG_OK ? wst : hst != TG_OK && st <= TG_FAIL ? hst : st;
}

/* The identity of what judges the traces, which the JSON result records
** and merge compares (docs/formats.md, "Where a result comes from"): the
** compiled rules with their params and severities, and the suppressions. */
static int rules_digest(check_args *a, check_state *c)
{
    int st = tg_cli_rules_digest(c->rs, c->suppressions, c->digest);
    a->out.rules_digest = c->digest;
    a->meta.rules_digest = c->digest;
    a->meta.tool_version = TG_VERSION;
    return st;
}

static int run_check(check_args *a, int n_traces, const char *const *traces)
{
    check_state c = {0};
    int st = load_rules(a, &c);
    if (st == TG_OK) st = rules_digest(a, &c);
    if (st == TG_OK) st = tg_inputs_resolve(traces, (size_t)n_traces, &c.inputs);
    if (st == TG_OK) st = check_origin(a, n_traces, traces);
    if (st == TG_OK) st = check_outputs(a, &c, n_traces, traces);
    /* a history that cannot be used is said before any trace is read */
    if (st == TG_OK && a->history) st = tg_cli_history_open(a->history, a->record, &c.history);
    tg_check_plan plan = {0};
    if (st == TG_OK) {
        plan = tg_check_plan_for(c.rs);
        plan.load_all = a->load_all;
        plan.max_memory = a->max_memory;
        plan.iteration_pattern = a->iteration_pattern;
        plan.eval.missing = a->missing;
        plan.eval.has_baseline = c.baseline != NULL || c.history != NULL;
        plan.timeline = tg_cli_outputs_want_timeline(&a->out);   /* the HTML report draws it */
        plan.straggler = true;   /* ranks within one export compared (docs/iterations.md) */
        st = check_memory(a, &c, &plan);
    }
    if (st == TG_OK && !(c.run.arena = tg_arena_new())) st = TG_EINTERNAL;
    if (st == TG_OK) st = evaluate_and_report(a, &c, &plan);
    check_free(&c);
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
