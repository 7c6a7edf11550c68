/*
** Running a rule test file: load its rule set (and one per case that sets
** params), check that every case names a rule of it and that every
** baseline loads, then for each case materialise its events (or take its
** trace), run the path `check` takes -- tg_check_trace (engine/check: the
** planned, lean load), tg_baseline_apply -- and compare the case's rule
** result with the expectations (ruletest_compare.c).
**
** Problems with the test file itself (rules that do not load, an unknown
** rule id or param, a bad baseline or iteration pattern) are reported at
** the test file's positions and stop the file before any case runs: the
** test is malformed, not failing. A case whose input cannot be read fails
** with that sentence. Generated files live in a private mkdtemp folder,
** removed after the case unless the caller keeps them.
*/
#include "ruletest_int.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>


/* What the validation pass prepares for each case. */
typedef struct case_prep {
    tg_ruleset *rs;            /* the case's own set when it sets params, else NULL */
    tg_baseline *baseline;
} case_prep;

/* --------------------------------------------------------------- rule sets */

/* NAME.test.yaml -> the rule file NAME.yaml (or .yml) beside it, when
** that file exists; the suffixes are rules.h's lists. */
static const char *sibling_rules(const char *path, tg_arena *a)
{
    size_t len = strlen(path);
#define SUFFIX(s) s,
    static const char *const tests[] = {TG_RULE_TEST_SUFFIXES(SUFFIX)};
    static const char *const rules[] = {TG_RULE_FILE_SUFFIXES(SUFFIX)};
#undef SUFFIX
    for (size_t i = 0; i < sizeof tests / sizeof *tests; i++) {
        size_t sl = strlen(tests[i]);
        if (len <= sl || strcmp(path + len - sl, tests[i]) != 0) continue;
        for (size_t r = 0; r < sizeof rules / sizeof *rules; r++) {
            char *p = tg_arena_printf(a, "%.*s%s", (int)(len - sl), path, rules[r]);
            if (p && access(p, R_OK) == 0) return p;
        }
    }
    return NULL;
}

static const char **rule_paths(const tg_ruletest_file *f, const tg_rt_opts *opts, tg_rules_ctx *ctx,
                               size_t *n)
{
    const char **paths = tg_arena_alloc(f->arena, (f->n_rule_paths + 2) * sizeof *paths);
    *n = 0;
    if (!paths) return NULL;
    if (f->n_rule_paths == 0) {
        if (!opts->builtin_rules) {
            tg_rules_error(ctx, (tg_pos){.file = f->path}, "the built-in rules (rules.d) were not found; "
                                                           "name the rules with 'rules:'");
            return NULL;
        }
        paths[(*n)++] = opts->builtin_rules;
        const char *sib = sibling_rules(f->path, f->arena);
        if (sib) paths[(*n)++] = sib;
        return paths;
    }
    for (size_t i = 0; i < f->n_rule_paths; i++) {
        const char *p = f->rule_paths[i];
        if (strcmp(p, "builtin") == 0) {
            if (!opts->builtin_rules) {
                tg_rules_error(ctx, f->rules_pos, "rules: 'builtin': the built-in rules (rules.d) were not found");
                return NULL;
            }
            p = opts->builtin_rules;
        }
        paths[(*n)++] = p;
    }
    return paths;
}

/* Load with the case's params; errors move to the case's `params:`. */
static tg_ruleset *case_rules(const tg_rt_case *c, const char *const *paths, size_t n, tg_rules_ctx *ctx)
{
    tg_diag d;
    tg_diag_init(&d);
    tg_ruleset *rs = tg_rules_load(paths, n, c->sets, c->n_sets, &d);
    for (size_t i = 0; i < d.n; i++)
        if (d.msgs[i].level == TG_DIAG_ERROR) tg_rules_error(ctx, c->sets_pos, "%s", d.msgs[i].text);
    if (!rs && d.n_errors == 0) tg_diag_error(ctx->diag, TG_EINTERNAL, "out of memory");
    tg_diag_clear(&d);
    return rs;
}

static bool check_rule(const tg_rt_case *c, const tg_ruleset *rs, tg_rules_ctx *ctx)
{
    long i = tg_rules_find(rs, c->rule);
    if (i >= 0 && tg_rules_info(rs, (size_t)i)->enabled) return true;
    if (i >= 0) {
        tg_rules_error(ctx, c->rule_pos, "rule '%s' is disabled in the loaded rules", c->rule);
        return false;
    }
    size_t n = tg_rules_count(rs);
    const char **ids = malloc((n ? n : 1) * sizeof *ids);
    for (size_t k = 0; ids && k < n; k++) ids[k] = tg_rules_info(rs, k)->id;
    const char *hint = ids ? tg_suggest(c->rule, ids, n) : NULL;
    if (hint) tg_rules_error(ctx, c->rule_pos, "no rule '%s' in the loaded rules (did you mean '%s'?)", c->rule, hint);
    else tg_rules_error(ctx, c->rule_pos, "no rule '%s' in the loaded rules", c->rule);
    free(ids);
    return false;
}

/* ------------------------------------------------------------- one case */

/* The generated file's path in a new private folder: NAME-lineN.sqlite. */
static char *temp_path(const tg_ruletest_file *f, const tg_rt_case *c, const tg_rt_opts *opts, tg_diag *diag)
{
    const char *tmp = opts->tmpdir ? opts->tmpdir : getenv("TMPDIR");
    if (!tmp || !*tmp) tmp = "/tmp";
    char dir[4096];
    snprintf(dir, sizeof dir, "%s/tracegate-ruletest-XXXXXX", tmp);
    if (!mkdtemp(dir)) {
        tg_diag_error(diag, TG_EINTERNAL, "cannot create a temporary folder in %s: %s", tmp, strerror(errno));
        return NULL;
    }
    const char *base = strrchr(f->path, '/');
    base = base ? base + 1 : f->path;
    size_t blen = strcspn(base, ".");
    if (blen == 0 || blen > 200) blen = strlen(base) > 200 ? 200 : strlen(base);
    size_t need = strlen(dir) + blen + 48;
    char *p = malloc(need);
    if (!p) {
        rmdir(dir);
        tg_diag_error(diag, TG_EINTERNAL, "out of memory");
        return NULL;
    }
    snprintf(p, need, "%s/%.*s-line%d.sqlite", dir, (int)blen, base, c->pos.line);
    return p;
}

static void remove_temp(char *path)
{
    unlink(path);
    char *slash = strrchr(path, '/');
    if (slash) {
        *slash = 0;
        rmdir(path);
        *slash = '/';
    }
}

static const tg_rule_result *find_result(const tg_trace_result *tr, const char *id)
{
    for (size_t i = 0; i < tr->n_results; i++)
        if (strcmp(tr->results[i].rule, id) == 0) return &tr->results[i];
    return NULL;
}

/* Check the case's input the way `check` does (engine/check: the same
** planned load, streamed API table and all), compare it with the
** baseline, and compare its rule's result with the expectations. Returns
** false only when out of memory. */
static bool evaluate(const tg_rt_case *c, const char *path, const tg_ruleset *rs, const tg_baseline *b,
                     tg_arena *out_arena, tg_rt_result *r)
{
    tg_diag d;
    tg_diag_init(&d);
    bool ok = true;
    tg_run_result run = {.arena = tg_arena_new()};
    tg_trace_result tr = {0};
    tg_check_plan plan = tg_check_plan_for(rs);
    plan.iteration_pattern = c->iteration_pattern;
    plan.eval = (tg_eval_opts){.missing = c->missing, .has_baseline = b != NULL};
    if (!run.arena || (b && !(plan.eval.baselines = tg_baseline_rule_stats(b, rs, run.arena)))) {
        ok = false;
    } else if (tg_check_trace(&plan, path, &tr, &d) != TG_OK) {
        r->error = tg_arena_strdup(out_arena, tr.error ? tr.error : d.n ? d.msgs[0].text : "the case could not run");
    } else if (b) {
        run.traces = &tr;
        run.n_traces = 1;
        if (tg_baseline_apply(b, rs, &run, false, &d) != TG_OK)
            r->error = tg_arena_strdup(out_arena, d.n ? d.msgs[d.n - 1].text : "the baseline comparison failed");
        run.traces = NULL;
        run.n_traces = 0;
    }
    if (ok && !r->error) {
        const tg_rule_result *res = find_result(&tr, c->rule);
        r->api_streamed = tr.api_streamed;
        if (!res) r->error = tg_arena_printf(out_arena, "rule '%s' gave no result", c->rule);
        else ok = tg_ruletest_compare(c, res, out_arena, r);
    }
    if (r->error && !r->error[0]) r->error = "the case could not run";
    tg_arena_free(tr.arena);
    tg_arena_free(run.arena);
    tg_diag_clear(&d);
    return ok;
}

static bool run_case(const tg_ruletest_file *f, const tg_rt_case *c, const tg_ruleset *rs, const tg_baseline *b,
                     const tg_rt_opts *opts, tg_arena *arena, tg_rt_result *r)
{
    *r = (tg_rt_result){.c = c, .verdict = TG_V_ERROR};
    char *tmp = NULL;
    const char *path = c->trace;
    if (c->events) {
        tg_diag d;
        tg_diag_init(&d);
        tmp = temp_path(f, c, opts, &d);
        if (tmp && tg_ruletest_write_events(c->events, tmp, &d) != TG_OK) {
            remove_temp(tmp);
            free(tmp);
            tmp = NULL;
        }
        if (!tmp) r->error = tg_arena_strdup(arena, d.n ? d.msgs[0].text : "cannot write the test trace");
        tg_diag_clear(&d);
        path = tmp;
        if (!tmp) return r->error != NULL;
    }
    bool ok = evaluate(c, path, rs, b, arena, r);
    if (tmp) {
        if (opts->keep) r->kept = tg_arena_strdup(arena, tmp);
        else remove_temp(tmp);
        free(tmp);
    }
    if (r->error) r->passed = false;
    return ok;
}

/* ------------------------------------------------------------------ file */

static tg_status prepare(const tg_ruletest_file *f, const tg_rt_opts *opts, tg_rules_ctx *ctx,
                         tg_ruleset **rs_out, case_prep *prep)
{
    int errors = ctx->diag->n_errors;
    size_t n_paths;
    const char **paths = rule_paths(f, opts, ctx, &n_paths);
    if (!paths) return ctx->diag->n_errors > errors ? TG_EUSAGE : TG_EINTERNAL;
    tg_ruleset *rs = tg_rules_load(paths, n_paths, NULL, 0, ctx->diag);
    if (!rs) {
        if (ctx->diag->n_errors == errors) tg_diag_error(ctx->diag, TG_EINTERNAL, "out of memory");
        else tg_rules_error(ctx, f->n_rule_paths ? f->rules_pos : (tg_pos){.file = f->path},
                            "the rules of this test file do not load (errors above)");
        return ctx->diag->status ? ctx->diag->status : TG_EUSAGE;
    }
    *rs_out = rs;
    for (size_t i = 0; i < f->n_cases; i++) {
        const tg_rt_case *c = &f->cases[i];
        if (!check_rule(c, rs, ctx)) continue;
        if (c->n_sets) prep[i].rs = case_rules(c, paths, n_paths, ctx);
        if (c->baseline) {
            int before = ctx->diag->n_errors;
            prep[i].baseline = tg_baseline_load(c->baseline, ctx->diag);
            if (!prep[i].baseline && ctx->diag->n_errors > before)
                tg_rules_error(ctx, c->baseline_pos, "the baseline of this test does not load (errors above)");
        }
    }
    if (ctx->diag->n_errors > errors) return ctx->diag->status ? ctx->diag->status : TG_EUSAGE;
    return TG_OK;
}

tg_status tg_ruletest_run(const tg_ruletest_file *f, const tg_rt_opts *opts, tg_rt_report *out, tg_diag *diag)
{
    static const tg_rt_opts defaults = {0};
    if (!opts) opts = &defaults;
    tg_rules_ctx ctx = *tg_rt_file_ctx(f);
    ctx.diag = diag;
    out->arena = tg_arena_new();
    case_prep *prep = calloc(f->n_cases + 1, sizeof *prep);
    if (!out->arena || !prep) {
        free(prep);
        tg_diag_error(diag, TG_EINTERNAL, "out of memory");
        return TG_EINTERNAL;
    }
    tg_ruleset *rs = NULL;
    tg_status st = prepare(f, opts, &ctx, &rs, prep);
    if (st == TG_OK) {
        out->results = tg_arena_alloc(out->arena, (f->n_cases + 1) * sizeof *out->results);
        if (!out->results) st = TG_EINTERNAL;
        for (size_t i = 0; st == TG_OK && i < f->n_cases; i++) {
            tg_rt_result *r = &out->results[out->n_results++];
            if (!run_case(f, &f->cases[i], prep[i].rs ? prep[i].rs : rs, prep[i].baseline, opts, out->arena, r))
                st = TG_EINTERNAL;
            if (r->passed) out->passed++;
            else out->failed++;
        }
        if (st == TG_EINTERNAL) tg_diag_error(diag, TG_EINTERNAL, "out of memory while running rule tests");
    }
    for (size_t i = 0; i < f->n_cases; i++) {
        tg_rules_free(prep[i].rs);
        tg_baseline_free(prep[i].baseline);
    }
    free(prep);
    tg_rules_free(rs);
    return st;
}

void tg_rt_report_free(tg_rt_report *r)
{
    if (!r) return;
    tg_arena_free(r->arena);
    memset(r, 0, sizeof *r);
}
