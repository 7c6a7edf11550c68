/*
** `tracegate rules list|lint|test PATH...` and `tracegate explain RULE`
** (`rules fields` lives in cmd_fields.c): thin wrappers over engine/rules.
** Errors print like a compiler's (file:line:col, the offending line, a caret)
** through tg_cli_report_diag and exit with status 2. `rules test` runs rule
** test files (tests/rules/README.md, engine/ruletest/ruletest.h): one line
** per case, a diff of expected and actual for each failure, a summary line;
** exit 1 when a case fails, 2 when a test file is malformed.
*/
#include "cli.h"

#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "rules/rules.h"
#include "ruletest/ruletest.h"
#include "../suppress/suppress.h"

/* s escaped (engine/common/text.h) and padded to width characters. */
static void put_cell(const char *s, size_t width)
{
    char *clean = tg_text_dup(s, TG_TEXT_CAP_NAME, 0);
    const char *p = clean ? clean : "?";
    size_t chars = 0;
    for (const char *q = p; *q; q++) chars += ((unsigned char)*q & 0xC0) != 0x80;
    fputs(p, stdout);
    for (; chars < width; chars++) fputc(' ', stdout);
    free(clean);
}

/* One line per rule; ids, titles and files come from rule files, so they
** are escaped like every human-facing string. */
static void print_rules(const tg_ruleset *rs)
{
    size_t w_id = 2, w_src = 6;
    for (size_t i = 0; i < tg_rules_count(rs); i++) {
        const tg_rule_info *r = tg_rules_info(rs, i);
        if (strlen(r->id) > w_id) w_id = strlen(r->id);
        if (r->source && strlen(r->source) > w_src) w_src = strlen(r->source);
    }
    printf("%-*s  %-8s  %-*s  %s\n", (int)w_id, "ID", "SEVERITY", (int)w_src, "SOURCE", "TITLE (FILE:LINE)");
    for (size_t i = 0; i < tg_rules_count(rs); i++) {
        const tg_rule_info *r = tg_rules_info(rs, i);
        put_cell(r->id, w_id);
        printf("  %-8s  ", tg_severity_name(r->severity));
        put_cell(r->source ? r->source : "?", w_src);
        printf("  %s", r->enabled ? "" : "[disabled] ");
        tg_text_fput(stdout, r->title ? r->title : "", TG_TEXT_CAP_TEXT, 0);
        fputs(" (", stdout);
        tg_text_fput(stdout, r->file, TG_TEXT_CAP_TEXT, 0);
        printf(":%d)\n", r->line);
    }
}

/* --ids: one id per line (completion and scripts read it). */
static void print_ids(const tg_ruleset *rs)
{
    for (size_t i = 0; i < tg_rules_count(rs); i++) {
        tg_text_fput(stdout, tg_rules_info(rs, i)->id, TG_TEXT_CAP_NAME, 0);
        fputc('\n', stdout);
    }
}

int tg_cmd_rules_list(const tg_cli_args *a)
{
    size_t n_paths;
    const char **paths = tg_cli_rule_paths(a->operands, a->n_operands, &n_paths);
    if (!paths) return TG_EUSAGE;
    tg_diag diag;
    tg_diag_init(&diag);
    tg_ruleset *rs = tg_rules_load(paths, n_paths, NULL, 0, &diag);
    int status = tg_cli_report_diag(&diag, TG_OK);
    if (rs && tg_cli_flag(a, TG_CLI_OPT_IDS)) print_ids(rs);
    else if (rs) print_rules(rs);
    tg_rules_free(rs);
    tg_diag_clear(&diag);
    free(paths);
    return status;
}

/* --suppress FILE: the files' format, and the rule ids they name against
** the rules linted; expired suppressions are warnings. Messages go to
** diag, counted with the rules' own. */
static tg_status lint_suppressions(const tg_cli_args *a, const char **paths, size_t n_paths, tg_diag *diag)
{
    tg_ruleset *rs = tg_rules_load(paths, n_paths, NULL, 0, diag);
    if (!rs) return TG_EUSAGE;
    size_t n_ids;
    const char **ids = tg_cli_rule_ids(rs, &n_ids);
    tg_suppressions *s = ids ? tg_suppress_load(a->values[TG_CLI_OPT_SUPPRESS], a->n_values[TG_CLI_OPT_SUPPRESS], diag)
                             : NULL;
    char today[16];
    tg_cli_today(today, sizeof today);
    tg_status st = !ids ? TG_EINTERNAL : !s ? TG_EUSAGE : tg_suppress_check_rules(s, ids, n_ids, today, true, diag);
    tg_suppress_free(s);
    free(ids);
    tg_rules_free(rs);
    return st;
}

int tg_cmd_rules_lint(const tg_cli_args *a)
{
    size_t n_paths;
    const char **paths = tg_cli_rule_paths(a->operands, a->n_operands, &n_paths);
    if (!paths) return TG_EUSAGE;
    tg_diag diag;
    tg_diag_init(&diag);
    tg_status st = tg_rules_lint(paths, n_paths, &diag);
    if (st == TG_OK && a->n_values[TG_CLI_OPT_SUPPRESS]) st = lint_suppressions(a, paths, n_paths, &diag);
    tg_cli_report_diag(&diag, TG_OK);
    int warnings = 0;
    for (size_t i = 0; i < diag.n; i++) warnings += diag.msgs[i].level == TG_DIAG_WARNING;
    if (diag.n_errors || warnings)
        tg_cli_say("%d error%s, %d warning%s", diag.n_errors, diag.n_errors == 1 ? "" : "s",
                   warnings, warnings == 1 ? "" : "s");
    else
        printf("no problems found in %zu path%s\n", n_paths, n_paths == 1 ? "" : "s");
    int status = st == TG_OK ? TG_OK : (diag.status ? (int)diag.status : TG_EUSAGE);
    tg_diag_clear(&diag);
    free(paths);
    return status;
}

/* ------------------------------------------------------------ rules test */

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The test files of a folder (not recursive), in name order. Returns false
** after printing when the folder cannot be read or holds none. */
static bool collect_tests(const char *dir, char ***files, size_t *n, size_t *cap)
{
    DIR *d = opendir(dir);
    if (!d) {
        tg_cli_say("%s: %s", dir, strerror(errno));
        return false;
    }
    size_t first = *n;
    size_t dl = strlen(dir);
    bool slash = dl && dir[dl - 1] == '/';
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.' || !tg_rules_is_test_file(e->d_name)) continue;
        size_t need = dl + strlen(e->d_name) + 2;
        char *p = malloc(need);
        if (!p) break;
        snprintf(p, need, "%s%s%s", dir, slash ? "" : "/", e->d_name);
        struct stat st;
        if (stat(p, &st) != 0 || !S_ISREG(st.st_mode) || !TG_PUSH(*files, *n, *cap, p)) free(p);
    }
    closedir(d);
    if (*n == first) {
        static const char *const patterns[] = {
#define SUFFIX(s) "*" s,
            TG_RULE_TEST_SUFFIXES(SUFFIX)
#undef SUFFIX
            NULL};
        char list[128];
        tg_cli_say("no rule test files (%s) in %s", tg_vocab_join(patterns, list, sizeof list), dir);
        return false;
    }
    qsort(*files + first, *n - first, sizeof **files, cmp_str);
    return true;
}

/* A string from a test file or a result, escaped (engine/common/text.h). */
static void put_text(const char *s)
{
    tg_text_fput(stdout, s ? s : "", TG_TEXT_CAP_TEXT, 0);
}

static void print_result(const tg_ruletest_file *f, const tg_rt_result *r, bool color)
{
    const char *red = color ? "\033[31m" : "", *green = color ? "\033[32m" : "", *off = color ? "\033[0m" : "";
    printf("%s%s%s ", r->passed ? green : red, r->passed ? "ok  " : "FAILED", off);
    put_text(f->path);
    printf(":%d ", r->c->pos.line);
    put_text(r->c->name);
    putchar('\n');
    if (!r->passed && r->error) {
        fputs("    error: ", stdout);
        put_text(r->error);
        putchar('\n');
    } else if (!r->passed) {
        printf("    %s- expected%s\n    %s+ actual%s\n", red, off, green, off);
        for (size_t i = 0; i < r->n_diffs; i++) {
            const tg_rt_diff *d = &r->diffs[i];
            printf("    %s- ", red);
            put_text(d->what);
            fputs(": ", stdout);
            put_text(d->expected);
            printf("%s\n    %s+ ", off, green);
            put_text(d->what);
            fputs(": ", stdout);
            put_text(d->actual);
            printf("%s\n", off);
        }
        fputs("    (rule ", stdout);
        put_text(r->c->rule);
        printf(" gave %s, count %lld: \"", tg_verdict_name(r->verdict), (long long)r->count);
        put_text(r->message);
        fputs("\")\n", stdout);
    }
    if (r->kept) {
        fputs("    kept: ", stdout);
        put_text(r->kept);
        putchar('\n');
    }
}

int tg_cmd_rules_test(const tg_cli_args *a)
{
    bool keep = tg_cli_flag(a, TG_CLI_OPT_KEEP);
    char **files = NULL;
    size_t n_files = 0, cap = 0;
    int status = TG_OK;
    for (size_t i = 0; i < a->n_operands; i++) {
        const char *path = a->operands[i];
        struct stat st;
        if (stat(path, &st) != 0) {
            tg_cli_say("%s: no such file or folder", path);
            status = TG_EUSAGE;
        } else if (S_ISDIR(st.st_mode)) {
            if (!collect_tests(path, &files, &n_files, &cap)) status = TG_EUSAGE;
        } else {
            char *p = strdup(path);
            if (!p || !TG_PUSH(files, n_files, cap, p)) {
                free(p);
                status = TG_EINTERNAL;
            }
        }
    }
    if (status != TG_OK) goto out;

    tg_rt_opts opts = {.builtin_rules = tg_cli_builtin_rules(), .keep = keep};
    bool color = tg_cli_color(stdout);
    size_t passed = 0, failed = 0;
    bool malformed = false;
    for (size_t i = 0; i < n_files; i++) {
        tg_diag diag;
        tg_diag_init(&diag);
        tg_ruletest_file *f = tg_ruletest_load(files[i], &diag);
        tg_rt_report rep = {0};
        tg_status st = f ? tg_ruletest_run(f, &opts, &rep, &diag) : (diag.status ? diag.status : TG_EUSAGE);
        fflush(stdout);
        tg_cli_report_diag(&diag, TG_OK);
        for (size_t k = 0; k < rep.n_results; k++) print_result(f, &rep.results[k], color);
        passed += rep.passed;
        failed += rep.failed;
        if (st == TG_EINTERNAL) status = TG_EINTERNAL;
        else if (st != TG_OK) malformed = true;
        tg_rt_report_free(&rep);
        tg_ruletest_free(f);
        tg_diag_clear(&diag);
    }
    printf("%zu passed, %zu failed\n", passed, failed);
    if (status == TG_OK) status = malformed ? TG_EUSAGE : failed ? TG_FAIL : TG_OK;
out:
    for (size_t i = 0; i < n_files; i++) free(files[i]);
    free(files);
    return status;
}

int tg_cmd_explain(const tg_cli_args *a)
{
    const char *rule = a->operands[0];
    size_t n_paths;
    const char **paths = tg_cli_rule_paths(a->values[TG_CLI_OPT_RULES], a->n_values[TG_CLI_OPT_RULES], &n_paths);
    tg_cli_sets sets;
    if (!paths) return TG_EUSAGE;
    if (tg_cli_param_sets(a, &sets) != TG_OK) {
        free(paths);
        return TG_EINTERNAL;
    }
    tg_diag diag;
    tg_diag_init(&diag);
    tg_ruleset *rs = tg_rules_load(paths, n_paths, sets.sets, sets.n, &diag);
    int status = tg_cli_report_diag(&diag, TG_OK);
    if (rs) {
        char *text = tg_rules_explain(rs, rule);
        if (text) {
            fputs(text, stdout);
            free(text);
        } else {
            size_t n_ids;
            const char **ids = tg_cli_rule_ids(rs, &n_ids);
            const char *near = ids ? tg_suggest(rule, ids, n_ids) : NULL;
            tg_cli_say("no rule '%s' in the loaded rules%s%s%s (see 'tracegate rules list')", rule,
                       near ? " (did you mean '" : "", near ? near : "", near ? "'?)" : "");
            free(ids);
            status = TG_EUSAGE;
        }
    }
    tg_rules_free(rs);
    tg_diag_clear(&diag);
    tg_cli_sets_free(&sets);
    free(paths);
    return status;
}
