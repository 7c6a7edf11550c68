/*
** `tracegate rules list|lint|test PATH...` and `tracegate explain RULE`:
** thin wrappers over engine/rules. Errors print like a compiler's
** (file:line:col, the offending line, a caret) through tg_cli_report_diag
** and exit with status 2. `rules test` (rule test files, DESIGN §7) is not
** built yet and says so.
*/
#include "cli.h"

#include <stdlib.h>
#include <string.h>

#include "rules/rules.h"

static const char *resolve_path(const char *p)
{
    if (strcmp(p, "builtin") != 0) return p;
    const char *b = tg_cli_builtin_rules();
    if (!b) fprintf(stderr, "tracegate: the built-in rules (rules.d) were not found\n");
    return b;
}

/* PATH... arguments (or the built-in rules when there are none). */
static const char **collect_paths(int argc, char **argv, size_t *n)
{
    const char **paths = calloc((size_t)(argc > 0 ? argc : 1), sizeof *paths);
    *n = 0;
    if (!paths) return NULL;
    for (int i = 0; i < argc; i++) {
        const char *p = resolve_path(argv[i]);
        if (!p) {
            free(paths);
            return NULL;
        }
        paths[(*n)++] = p;
    }
    if (*n == 0) {
        const char *b = resolve_path("builtin");
        if (!b) {
            free(paths);
            return NULL;
        }
        paths[(*n)++] = b;
    }
    return paths;
}

static int rules_list(int argc, char **argv)
{
    size_t n_paths;
    const char **paths = collect_paths(argc, argv, &n_paths);
    if (!paths) return TG_EUSAGE;
    tg_diag diag;
    tg_diag_init(&diag);
    tg_ruleset *rs = tg_rules_load(paths, n_paths, NULL, 0, &diag);
    int status = tg_cli_report_diag(&diag, TG_OK);
    if (rs) {
        size_t w_id = 2, w_src = 6;
        for (size_t i = 0; i < tg_rules_count(rs); i++) {
            const tg_rule_info *r = tg_rules_info(rs, i);
            if (strlen(r->id) > w_id) w_id = strlen(r->id);
            if (r->source && strlen(r->source) > w_src) w_src = strlen(r->source);
        }
        printf("%-*s  %-8s  %-*s  %s\n", (int)w_id, "ID", "SEVERITY", (int)w_src, "SOURCE", "TITLE (FILE:LINE)");
        for (size_t i = 0; i < tg_rules_count(rs); i++) {
            const tg_rule_info *r = tg_rules_info(rs, i);
            printf("%-*s  %-8s  %-*s  %s%s (%s:%d)\n", (int)w_id, r->id, tg_severity_name(r->severity), (int)w_src,
                   r->source ? r->source : "?", r->enabled ? "" : "[disabled] ", r->title ? r->title : "",
                   r->file, r->line);
        }
    }
    tg_rules_free(rs);
    tg_diag_clear(&diag);
    free(paths);
    return status;
}

static int rules_lint(int argc, char **argv)
{
    size_t n_paths;
    const char **paths = collect_paths(argc, argv, &n_paths);
    if (!paths) return TG_EUSAGE;
    tg_diag diag;
    tg_diag_init(&diag);
    tg_status st = tg_rules_lint(paths, n_paths, &diag);
    tg_cli_report_diag(&diag, TG_OK);
    int warnings = 0;
    for (size_t i = 0; i < diag.n; i++) warnings += diag.msgs[i].level == TG_DIAG_WARNING;
    if (diag.n_errors || warnings)
        fprintf(stderr, "tracegate: %d error%s, %d warning%s\n", diag.n_errors, diag.n_errors == 1 ? "" : "s",
                warnings, warnings == 1 ? "" : "s");
    else
        printf("no problems found in %zu path%s\n", n_paths, n_paths == 1 ? "" : "s");
    int status = st == TG_OK ? TG_OK : (diag.status ? (int)diag.status : TG_EUSAGE);
    tg_diag_clear(&diag);
    free(paths);
    return status;
}

static void rules_usage(FILE *f)
{
    fprintf(f, "usage: tracegate rules list [PATH...]   rules, severities and sources (default: built-in)\n"
               "       tracegate rules lint [PATH...]   validate rule files: errors and warnings\n"
               "       tracegate rules test PATH...     run rule test files (not available yet)\n"
               "PATH is a rule file, a folder of *.yaml / *.yml files, or 'builtin'.\n");
}

int tg_cmd_rules(int argc, char **argv)
{
    if (argc < 2) {
        rules_usage(stderr);
        return TG_EUSAGE;
    }
    const char *sub = argv[1];
    if (!strcmp(sub, "-h") || !strcmp(sub, "--help") || !strcmp(sub, "help")) {
        rules_usage(stdout);
        return TG_OK;
    }
    if (!strcmp(sub, "list")) return rules_list(argc - 2, argv + 2);
    if (!strcmp(sub, "lint")) return rules_lint(argc - 2, argv + 2);
    if (!strcmp(sub, "test")) {
        fprintf(stderr, "tracegate: 'rules test' is not implemented yet; "
                        "use 'tracegate rules lint' to validate rule files\n");
        return TG_EUSAGE;
    }
    fprintf(stderr, "tracegate: unknown rules command '%s' (list, lint or test)\n", sub);
    return TG_EUSAGE;
}

/* "RULE.PARAM=VALUE" split at the last '.' before '='; strings point into arg. */
static bool parse_set(char *arg, tg_param_set *out)
{
    char *eq = strchr(arg, '=');
    if (!eq) return false;
    *eq = 0;
    char *dot = strrchr(arg, '.');
    if (!dot || dot == arg || !dot[1]) return false;
    *dot = 0;
    *out = (tg_param_set){.rule = arg, .param = dot + 1, .value = eq + 1};
    return true;
}

int tg_cmd_explain(int argc, char **argv)
{
    const char **paths = calloc((size_t)argc + 1, sizeof *paths);
    tg_param_set *sets = calloc((size_t)argc + 1, sizeof *sets);
    size_t n_paths = 0, n_sets = 0;
    const char *rule = NULL;
    int status = TG_EUSAGE;
    if (!paths || !sets) goto out;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
            printf("usage: tracegate explain [--rules PATH]... [--set RULE.PARAM=VALUE]... RULE\n");
            status = TG_OK;
            goto out;
        } else if (!strcmp(argv[i], "--rules") && i + 1 < argc) {
            if (!(paths[n_paths] = resolve_path(argv[++i]))) goto out;
            n_paths++;
        } else if (!strcmp(argv[i], "--set") && i + 1 < argc) {
            if (!parse_set(argv[++i], &sets[n_sets])) {
                fprintf(stderr, "tracegate: --set wants RULE.PARAM=VALUE, not '%s'\n", argv[i]);
                goto out;
            }
            n_sets++;
        } else if (argv[i][0] == '-' && argv[i][1]) {
            fprintf(stderr, "tracegate: unknown option '%s' for explain\n", argv[i]);
            goto out;
        } else if (rule) {
            fprintf(stderr, "tracegate: explain takes one rule id ('%s' and '%s' given)\n", rule, argv[i]);
            goto out;
        } else {
            rule = argv[i];
        }
    }
    if (!rule) {
        fprintf(stderr, "usage: tracegate explain [--rules PATH]... [--set RULE.PARAM=VALUE]... RULE\n");
        goto out;
    }
    if (n_paths == 0 && !(paths[n_paths++] = resolve_path("builtin"))) goto out;
    tg_diag diag;
    tg_diag_init(&diag);
    tg_ruleset *rs = tg_rules_load(paths, n_paths, sets, n_sets, &diag);
    status = tg_cli_report_diag(&diag, TG_OK);
    if (rs) {
        char *text = tg_rules_explain(rs, rule);
        if (text) {
            fputs(text, stdout);
            free(text);
        } else {
            fprintf(stderr, "tracegate: no rule '%s' in the loaded rules (see 'tracegate rules list')\n", rule);
            status = TG_EUSAGE;
        }
    }
    tg_rules_free(rs);
    tg_diag_clear(&diag);
out:
    free(paths);
    free(sets);
    return status;
}
