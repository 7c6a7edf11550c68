/*
** Entry point of the `tracegate` command: dispatches to subcommands and
** holds the few helpers they share (diagnostic printing, finding the
** built-in rules). Exit statuses follow docs/formats.md
** ("Run status and exit status").
*/
#include "cli.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <limits.h>
#include <sys/stat.h>

#include "tg_config.h"

int tg_cli_report_diag(const tg_diag *diag, int fallback)
{
    bool color = tg_cli_color(stderr);
    for (size_t i = 0; i < diag->n; i++) {
        char *s = tg_diag_format(&diag->msgs[i], color);
        if (s) {
            fprintf(stderr, "tracegate: %s\n", s);   /* escaped by tg_diag_format */
            free(s);
        }
    }
    if (diag->n_errors > (int)diag->n)
        tg_cli_say("... and %d more errors", diag->n_errors - (int)diag->n);
    return diag->n_errors ? (int)diag->status : fallback;
}

void tg_cli_say(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *msg = NULL;
    int n = vasprintf(&msg, fmt, ap);
    va_end(ap);
    fputs("tracegate: ", stderr);
    if (n >= 0) tg_text_fput(stderr, msg, TG_TEXT_CAP_TEXT, 0);
    else fputs("out of memory (while writing a message)", stderr);
    fputc('\n', stderr);
    if (n >= 0) free(msg);
}

int tg_cli_exit_status(const tg_run_result *run, const tg_report_opts *gate, int eval_status)
{
    int st = tg_report_exit_status(run, gate);
    /* what the evaluation itself reported ranks the same way: 4, 2, 1, 3 */
    if (eval_status == TG_EINTERNAL) return TG_EINTERNAL;
    if (eval_status == TG_EUSAGE && st != TG_EINTERNAL) return TG_EUSAGE;
    if (eval_status == TG_ETRACE && st == TG_OK) return TG_ETRACE;
    return st;
}

int tg_cli_finish_output(json_t *traces, const char *cmd, int status)
{
    if (traces) {
        json_t *out = json_pack("{s:s, s:s, s:i, s:o}", "tool", "tracegate", "version", TG_VERSION,
                                "schema", 1, "traces", traces);
        if (!out || json_dumpf(out, stdout, JSON_INDENT(2)) != 0) status = TG_EINTERNAL;
        else fputc('\n', stdout);
        json_decref(out);
    }
    if (fflush(stdout) != 0 && status == TG_OK) {
        tg_cli_say("%s: cannot write the output", cmd);
        status = TG_EINTERNAL;
    }
    return status;
}

const char *tg_cli_first_error(const tg_diag *d)
{
    for (size_t i = 0; i < d->n; i++)
        if (d->msgs[i].level == TG_DIAG_ERROR) return d->msgs[i].text;
    return "unreadable trace";
}

bool tg_cli_color(FILE *f)
{
    const char *nc = getenv("NO_COLOR");
    if (nc && *nc) return false;
    return isatty(fileno(f));
}

static bool is_dir(const char *p)
{
    struct stat st;
    return stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

const char *tg_cli_builtin_rules(void)
{
    static char found[PATH_MAX];
    const char *env = getenv("TRACEGATE_RULES_DIR");
    if (env && is_dir(env)) return env;
    char exe[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n > 0) {
        exe[n] = 0;
        char *slash = strrchr(exe, '/');
        if (slash) {
            *slash = 0;
            /* next to the binary, then one level up (build dir in the tree) */
            const char *cands[] = {"%s/rules.d", "%s/../rules.d", "%s/../share/tracegate/rules.d"};
            for (size_t i = 0; i < sizeof cands / sizeof *cands; i++) {
                char cand[PATH_MAX];
                snprintf(cand, sizeof cand, cands[i], exe);
                /* resolved, so that reports name the rules folder, not
                ** "build/../rules.d" (docs/formats.md, "Rule locations") */
                if (is_dir(cand) && realpath(cand, found)) return found;
            }
        }
    }
    if (is_dir(TG_SOURCE_ROOT "/rules.d")) return TG_SOURCE_ROOT "/rules.d";
    if (is_dir(TG_RULES_INSTALL_DIR)) return TG_RULES_INSTALL_DIR;
    return NULL;
}

const char *tg_cli_docs_uri(void)
{
    static char uri[PATH_MAX + 16];
    if (TG_HOMEPAGE[0]) return TG_HOMEPAGE;
    const char *rules = tg_cli_builtin_rules();
    if (!rules) return NULL;
    /* the rules' documentation beside the built-in rules: the source
    ** tree's docs/ or the installed share/doc/tracegate/ */
    const char *cands[] = {"%s/../docs/rules.md", "%s/../../doc/tracegate/rules.md"};
    for (size_t i = 0; i < sizeof cands / sizeof *cands; i++) {
        char cand[PATH_MAX], real[PATH_MAX];
        snprintf(cand, sizeof cand, cands[i], rules);
        if (realpath(cand, real)) {
            snprintf(uri, sizeof uri, "file://%s", real);
            return uri;
        }
    }
    return NULL;
}

/* `tracegate help [COMMAND] [--man]` */
static int cmd_help(const tg_cli_args *a)
{
    if (tg_cli_flag(a, TG_CLI_OPT_MAN)) {
        tg_cli_print_man(stdout, TG_VERSION);
        return tg_cli_finish_output(NULL, "help", TG_OK);
    }
    if (a->n_operands == 0) {
        tg_cli_print_commands(stdout);
        return tg_cli_finish_output(NULL, "help", TG_OK);
    }
    /* `help rules` is `rules --help` */
    char *words_v[2] = {(char *)a->operands[0], a->n_operands > 1 ? (char *)a->operands[1] : "--help"};
    int words = 0;
    int cmd = tg_cli_find_command(2, words_v, &words);
    if (cmd == -2) return TG_OK;   /* a group's help, printed */
    if (cmd < 0) return TG_EUSAGE;
    if ((size_t)words < a->n_operands)
        return tg_cli_usage_error(TG_CLI_CMD_HELP, "help takes one command ('%s %s' is not one)",
                                  a->operands[0], a->operands[words]);
    tg_cli_print_help((tg_cli_command_id)cmd, stdout);
    return tg_cli_finish_output(NULL, "help", TG_OK);
}

static int cmd_version(const tg_cli_args *a)
{
    (void)a;
    printf("tracegate %s\n", TG_VERSION);
    return tg_cli_finish_output(NULL, "version", TG_OK);
}

static int cmd_completion(const tg_cli_args *a)
{
    if (strcmp(a->operands[0], "bash") != 0)
        return tg_cli_bad_choice(a->cmd, "completion", TG_CLI_CH_SHELL, a->operands[0]);
    tg_cli_print_bash_completion(stdout);
    return tg_cli_finish_output(NULL, "completion", TG_OK);
}

/* ORDER: tg_cli_command_id (options.def). */
static int (*const handlers[TG_CLI_CMD_COUNT])(const tg_cli_args *) = {
    [TG_CLI_CMD_CHECK] = tg_cmd_check,
    [TG_CLI_CMD_INFO] = tg_cmd_info,
    [TG_CLI_CMD_METRICS] = tg_cmd_metrics,
    [TG_CLI_CMD_RULES_LIST] = tg_cmd_rules_list,
    [TG_CLI_CMD_RULES_LINT] = tg_cmd_rules_lint,
    [TG_CLI_CMD_RULES_TEST] = tg_cmd_rules_test,
    [TG_CLI_CMD_RULES_FIELDS] = tg_cmd_rules_fields,
    [TG_CLI_CMD_EXPLAIN] = tg_cmd_explain,
    [TG_CLI_CMD_BASELINE_RECORD] = tg_cmd_baseline_record,
    [TG_CLI_CMD_BASELINE_SHOW] = tg_cmd_baseline_show,
    [TG_CLI_CMD_HISTORY_ADD] = tg_cmd_history_add,
    [TG_CLI_CMD_HISTORY_SHOW] = tg_cmd_history_show,
    [TG_CLI_CMD_HISTORY_ACCEPT] = tg_cmd_history_accept,
    [TG_CLI_CMD_HISTORY_REPORT] = tg_cmd_history_report,
    [TG_CLI_CMD_MERGE] = tg_cmd_merge,
    [TG_CLI_CMD_HELP] = cmd_help,
    [TG_CLI_CMD_VERSION] = cmd_version,
    [TG_CLI_CMD_COMPLETION] = cmd_completion,
};

static int run(int argc, char **argv);

int main(int argc, char **argv)
{
    int status = run(argc, argv);
    const char *broken = tg_invariant_failure();
    if (broken) {
        tg_cli_say("internal error: %s; the verdicts above cannot be trusted (please report this)", broken);
        return TG_EINTERNAL;
    }
    return status;
}

static int run(int argc, char **argv)
{
    if (argc < 2) {
        tg_cli_print_commands(stderr);
        return TG_EUSAGE;
    }
    const char *first = argv[1];
    if (!strcmp(first, "-V") || !strcmp(first, "--version")) first = "version";
    else if (!strcmp(first, "-h") || !strcmp(first, "--help")) first = "help";
    char *words_v[2] = {(char *)first, argc > 2 ? argv[2] : NULL};
    int words = 0;
    int cmd = tg_cli_find_command(argc - 1, words_v, &words);
    if (cmd == -2) return TG_OK;   /* `rules --help`: the group's help */
    if (cmd < 0) return TG_EUSAGE;
    TG_ASSERT(handlers[cmd] != NULL);
    tg_cli_args args;
    int st = tg_cli_parse((tg_cli_command_id)cmd, argc - 1 - words, argv + 1 + words, &args);
    if (st == TG_OK) st = handlers[cmd](&args);
    else if (st < 0) st = tg_cli_finish_output(NULL, "help", TG_OK);   /* --help printed */
    tg_cli_args_free(&args);
    return st;
}
