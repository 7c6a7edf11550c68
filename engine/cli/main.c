/*
** Entry point of the `tracegate` command: dispatches to subcommands and
** holds the few helpers they share (diagnostic printing, finding the
** built-in rules). Exit statuses follow docs/formats.md
** ("Run status and exit status").
*/
#include "cli.h"

#include <stdarg.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <limits.h>
#include <sys/stat.h>

#include "tg_config.h"

static void usage(FILE *f)
{
    fprintf(f,
        "usage: tracegate COMMAND [options] ...\n"
        "\n"
        "commands:\n"
        "  check [--rules PATH]... [--format F] [-o F=FILE] [--fail-on LEVEL]\n"
        "        [--baseline FILE] [--set RULE.PARAM=VALUE] [--missing-data fail|skip] TRACE...\n"
        "                        check traces against rules (and a baseline)\n"
        "  info [--format text|json] TRACE...     what an export contains\n"
        "  metrics [--format text|json] TRACE     every fact the engine computes\n"
        "  rules list|lint|test PATH...           list, validate or test rule files\n"
        "  rules fields [--format text|markdown] [SOURCE]\n"
        "                        the sources rules read and their fields\n"
        "  explain [--rules PATH]... RULE         a rule's text and compiled tree\n"
        "  baseline record -o FILE TRACE... | baseline show FILE\n"
        "  merge [--format F] [-o F=FILE] RESULT.json...  combine per-rank JSON results,\n"
        "                        with the cross-rank straggler check\n"
        "  version                                print the version\n"
        "\n"
        "exit status: 0 pass, 1 gate failed, 2 usage/rule/baseline error,\n"
        "             3 trace unreadable or lacking data, 4 internal error\n");
}

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
    bool failed = false, missing = false, rule_error = false, usage = eval_status == TG_EUSAGE;
    for (size_t i = 0; i < run->n_traces; i++) {
        const tg_trace_result *tr = &run->traces[i];
        if (tr->status == TG_ETRACE) missing = true;
        if (tr->status == TG_EUSAGE) usage = true;   /* e.g. a bad --iteration-pattern: never a pass */
        if (tr->status == TG_EINTERNAL) rule_error = true;
        for (size_t j = 0; j < tr->n_results; j++) {
            const tg_rule_result *r = &tr->results[j];
            if (r->verdict == TG_V_ERROR) {
                tg_status es = r->error_status != TG_OK ? r->error_status
                             : r->missing_data ? TG_ETRACE : TG_EINTERNAL;
                if (es == TG_ETRACE) missing = true;
                else if (es == TG_EUSAGE) usage = true;
                else rule_error = true;
            }
            if (tg_report_gates(r, gate)) failed = true;
        }
    }
    if (eval_status == TG_EINTERNAL || rule_error) return TG_EINTERNAL;
    if (usage) return TG_EUSAGE;
    if (eval_status == TG_ETRACE || missing) return TG_ETRACE;
    return failed ? TG_FAIL : TG_OK;
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

const char *tg_cli_option_error(const char *shortopts, char **argv, char *buf, size_t size)
{
    if (optopt > 0 && optopt < 256 && optopt != ':') {
        const char *known = strchr(shortopts, optopt);
        if (known && known[1] == ':') snprintf(buf, size, "option '-%c' needs a value", optopt);
        else snprintf(buf, size, "unknown option '-%c'", optopt);
    } else {
        snprintf(buf, size, "unknown or incomplete option '%s'", argv[optind - 1]);
    }
    return buf;
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
                snprintf(found, sizeof found, cands[i], exe);
                if (is_dir(found)) return found;
            }
        }
    }
    if (is_dir(TG_SOURCE_ROOT "/rules.d")) return TG_SOURCE_ROOT "/rules.d";
    if (is_dir(TG_RULES_INSTALL_DIR)) return TG_RULES_INSTALL_DIR;
    return NULL;
}

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
        usage(stderr);
        return TG_EUSAGE;
    }
    const char *cmd = argv[1];
    static const struct { const char *name; int (*fn)(int, char **); } cmds[] = {
        {"check", tg_cmd_check},     {"info", tg_cmd_info},
        {"metrics", tg_cmd_metrics}, {"rules", tg_cmd_rules},
        {"explain", tg_cmd_explain}, {"baseline", tg_cmd_baseline},
        {"merge", tg_cmd_merge},
    };
    for (size_t i = 0; i < sizeof cmds / sizeof *cmds; i++)
        if (strcmp(cmd, cmds[i].name) == 0) return cmds[i].fn(argc - 1, argv + 1);
    if (!strcmp(cmd, "version") || !strcmp(cmd, "--version")) {
        printf("tracegate %s\n", TG_VERSION);
        return 0;
    }
    if (!strcmp(cmd, "help") || !strcmp(cmd, "--help") || !strcmp(cmd, "-h")) {
        usage(stdout);
        return 0;
    }
    tg_cli_say("unknown command '%s' (try 'tracegate help')", cmd);
    return TG_EUSAGE;
}
