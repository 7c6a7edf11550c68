/*
** Texts generated from the command-line table (options.def): a command's
** `--help`, a group's (`rules --help`), the command list (`tracegate
** help`), the man page (`tracegate help --man`, roff) and the bash
** completion script (`tracegate completion bash`). The build writes the
** last two into build/ (tracegate.1, tracegate.bash) and installs them;
** tests/cli_docs_test.sh holds that each lists every option.
*/
#include "options.h"

#include <string.h>

#include "cli.h"
#include "../model/source.h"

#define HELP_COLUMN 28
#define WIDTH 79

/* Words of text, wrapped at WIDTH, each line after the first (and the
** first when first_col is 0) indented by indent. */
static void wrap(FILE *f, const char *text, int indent, int first_col)
{
    int col = first_col;
    const char *p = text;
    while (*p) {
        while (*p == ' ') p++;
        size_t len = strcspn(p, " ");
        if (!len) break;
        if (col > indent && col + 1 + (int)len > WIDTH) {
            fputc('\n', f);
            col = 0;
        }
        if (col < indent) {
            fprintf(f, "%*s", indent - col, "");
            col = indent;
        } else if (col > indent) {
            fputc(' ', f);
            col++;
        }
        fwrite(p, 1, len, f);
        col += (int)len;
        p += len;
    }
    fputc('\n', f);
}

/* Options besides --help? */
static bool has_options(tg_cli_command_id cmd)
{
    for (int i = 0; i < TG_CLI_OPT_COUNT; i++)
        if (tg_cli_takes(cmd, i) && i != TG_CLI_OPT_HELP) return true;
    return false;
}

static void usage_line(tg_cli_command_id cmd, FILE *f, const char *lead)
{
    const tg_cli_command *c = &tg_cli_commands[cmd];
    fprintf(f, "%stracegate %s%s%s%s\n", lead, c->name, has_options(cmd) ? " [options]" : "",
            *c->operands ? " " : "", c->operands);
}

/* "  -o, --output FORMAT=FILE" */
static int option_label(const tg_cli_option *o, char *buf, size_t size)
{
    int n;
    if (o->short_name) n = snprintf(buf, size, "  -%c, --%s%s%s", o->short_name, o->name, o->metavar ? " " : "",
                                    o->metavar ? o->metavar : "");
    else n = snprintf(buf, size, "  --%s%s%s", o->name, o->metavar ? " " : "", o->metavar ? o->metavar : "");
    return n;
}

static void option_help(const tg_cli_option *o, FILE *f)
{
    char label[96], text[512];
    int col = option_label(o, label, sizeof label);
    fputs(label, f);
    if (col + 2 > HELP_COLUMN) {
        fputc('\n', f);
        col = 0;
    }
    snprintf(text, sizeof text, "%s", o->help);
    for (char *p = text; *p; p++)
        if (*p == '\n') *p = ' ';
    wrap(f, text, HELP_COLUMN, col);
    if (o->kind == TG_CLI_K_CHOICE) {
        const char *words[16];
        char list[256];
        tg_cli_choice_words(o->choices, words);
        snprintf(text, sizeof text, "%s: %s", o->metavar, tg_vocab_join(words, list, sizeof list));
        wrap(f, text, HELP_COLUMN, 0);
    }
}

void tg_cli_print_help(tg_cli_command_id cmd, FILE *f)
{
    usage_line(cmd, f, "usage: ");
    fputc('\n', f);
    wrap(f, tg_cli_commands[cmd].description, 0, 0);
    fputs("\noptions:\n", f);
    for (int i = 0; i < TG_CLI_OPT_COUNT; i++)
        if (tg_cli_takes(cmd, i)) option_help(&tg_cli_options[i], f);
    fputs("\nexit status: 0 pass, 1 gate failed, 2 usage/rule/baseline error, 3 trace\n"
          "unreadable or lacking data, 4 internal error ('tracegate help' says which wins)\n", f);
}

void tg_cli_print_group_help(const char *group, FILE *f)
{
    size_t glen = strlen(group);
    const char *lead = "usage: ";
    for (int i = 0; i < TG_CLI_CMD_COUNT; i++) {
        const char *name = tg_cli_commands[i].name;
        if (strncmp(name, group, glen) || name[glen] != ' ') continue;
        usage_line((tg_cli_command_id)i, f, lead);
        fprintf(f, "         %s\n", tg_cli_commands[i].summary);
        lead = "       ";
    }
    fprintf(f, "\n'tracegate %s COMMAND --help' for a command's options.\n", group);
}

void tg_cli_print_commands(FILE *f)
{
    fputs("usage: tracegate COMMAND [options] [ARGUMENTS]\n\n"
          "A CI gate for GPU performance: checks NVIDIA Nsight Systems SQLite exports and\n"
          "PyTorch profiler traces against YAML rules and baselines.\n\ncommands:\n", f);
    for (int i = 0; i < TG_CLI_CMD_COUNT; i++)
        fprintf(f, "  %-18s %s\n", tg_cli_commands[i].name, tg_cli_commands[i].summary);
    fputs("\n'tracegate COMMAND --help' or 'tracegate help COMMAND' for a command's options,\n"
          "'tracegate help --man' for the manual page, -V for the version.\n\n"
          "exit status, the first that applies wins:\n", f);
    for (size_t i = 0; i < tg_cli_n_exits; i++) {
        fprintf(f, "  %d  ", tg_cli_exits[i].status);
        wrap(f, tg_cli_exits[i].meaning, 5, 5);
    }
}

/* ---------------------------------------------------------------- man */

/* Text for roff: backslashes doubled as \e, a leading dot or quote
** guarded, '-' as \- (options must stay ASCII hyphens). */
static void roff(FILE *f, const char *s, bool line_start)
{
    for (; *s; s++) {
        if (line_start && (*s == '.' || *s == '\'')) fputs("\\&", f);
        line_start = *s == '\n';
        if (*s == '\\') fputs("\\e", f);
        else if (*s == '-') fputs("\\-", f);
        else fputc(*s, f);
    }
}

static void man_option(const tg_cli_option *o, FILE *f)
{
    fputs(".TP\n", f);
    if (o->short_name) fprintf(f, "\\fB\\-%c\\fR, ", o->short_name);
    fputs("\\fB\\-\\-", f);
    roff(f, o->name, false);
    fputs("\\fR", f);
    if (o->metavar) {
        fputs(" \\fI", f);
        roff(f, o->metavar, false);
        fputs("\\fR", f);
    }
    fputc('\n', f);
    for (const char *p = o->help; *p; p++) {
        char c[2] = {*p == '\n' ? ' ' : *p, 0};
        roff(f, c, p == o->help);
    }
    if (o->kind == TG_CLI_K_CHOICE) {
        const char *words[16];
        char list[256];
        tg_cli_choice_words(o->choices, words);
        fputs(". ", f);
        roff(f, o->metavar, false);
        fputs(": ", f);
        roff(f, tg_vocab_join(words, list, sizeof list), false);
    }
    fputs(".\n", f);
}

void tg_cli_print_man(FILE *f, const char *version)
{
    fprintf(f, ".\\\" Generated by `tracegate help --man` from engine/cli/options.def; do not edit.\n"
               ".TH TRACEGATE 1 \"\" \"tracegate %s\" \"User Commands\"\n"
               ".SH NAME\ntracegate \\- a CI gate for GPU performance traces\n.SH SYNOPSIS\n", version);
    for (int i = 0; i < TG_CLI_CMD_COUNT; i++) {
        fputs(".br\n\\fBtracegate ", f);
        roff(f, tg_cli_commands[i].name, false);
        fputs("\\fR ", f);
        roff(f, tg_cli_commands[i].operands, false);
        fputc('\n', f);
    }
    fputs(".SH DESCRIPTION\ntracegate reads GPU profiles exported by NVIDIA Nsight Systems "
          "(nsys export \\-\\-type sqlite) and PyTorch profiler (Kineto) traces, checks them "
          "against declarative YAML rules and stored baselines, and answers pass or fail with "
          "cited evidence: every number comes with the table, the rows and a query that "
          "reproduces it.\n.SH COMMANDS\n", f);
    for (int i = 0; i < TG_CLI_CMD_COUNT; i++) {
        const tg_cli_command *c = &tg_cli_commands[i];
        fputs(".SS \"tracegate ", f);
        roff(f, c->name, false);
        fputc(' ', f);
        roff(f, c->operands, false);
        fputs("\"\n", f);
        roff(f, c->description, true);
        fputc('\n', f);
        for (int o = 0; o < TG_CLI_OPT_COUNT; o++)
            if (tg_cli_takes((tg_cli_command_id)i, o)) man_option(&tg_cli_options[o], f);
    }
    fputs(".SH \"EXIT STATUS\"\nWhen several apply, the first in this list wins.\n", f);
    for (size_t i = 0; i < tg_cli_n_exits; i++) {
        fprintf(f, ".TP\n.B %d\n", tg_cli_exits[i].status);
        roff(f, tg_cli_exits[i].meaning, true);
        fputs(".\n", f);
    }
    fputs(".SH ENVIRONMENT\n", f);
    for (size_t i = 0; i < tg_cli_n_envs; i++) {
        fprintf(f, ".TP\n.B %s\n", tg_cli_envs[i].name);
        roff(f, tg_cli_envs[i].meaning, true);
        fputs(".\n", f);
    }
    fputs(".SH \"SEE ALSO\"\n\\fBnsys\\fR(1); README.md and docs/ in the tracegate sources: "
          "the output formats (docs/formats.md), the rule language (docs/rule\\-language.md), "
          "suppressions (docs/suppressions.md).\n", f);
}

/* --------------------------------------------------------- completion */

/* The words a value of option o completes to, as a compgen command. */
static void bash_value(FILE *f, const tg_cli_option *o)
{
    const char *words[16];
    switch (o->kind) {
    case TG_CLI_K_CHOICE:
        tg_cli_choice_words(o->choices, words);
        fputs("COMPREPLY=($(compgen -W \"", f);
        for (int i = 0; words[i]; i++) fprintf(f, "%s%s", i ? " " : "", words[i]);
        fputs("\" -- \"$cur\"))", f);
        break;
    case TG_CLI_K_OUTPUT:
        /* FORMAT= first (no space after it), then a file after the '=' */
        tg_cli_choice_words(TG_CLI_CH_FORMAT, words);
        fputs("compopt -o nospace 2>/dev/null; COMPREPLY=($(compgen -W \"", f);
        for (int i = 0; words[i]; i++) fprintf(f, "%s%s=", i ? " " : "", words[i]);
        fputs("\" -- \"$cur\"))", f);
        break;
    case TG_CLI_K_RULES: fputs("COMPREPLY=($(compgen -W builtin -- \"$cur\") $(compgen -f -- \"$cur\"))", f); break;
    case TG_CLI_K_FILE:
    case TG_CLI_K_TRACE: fputs("COMPREPLY=($(compgen -f -- \"$cur\"))", f); break;
    default: fputs("COMPREPLY=()", f); break;
    }
}

static void bash_operands(FILE *f, tg_cli_kind kind)
{
    switch (kind) {
    case TG_CLI_K_RULE_ID:
        fputs("COMPREPLY=($(compgen -W \"$(\"${COMP_WORDS[0]}\" rules list --ids $rules 2>/dev/null)\" -- \"$cur\"))", f);
        break;
    case TG_CLI_K_COMMAND: {
        fputs("COMPREPLY=($(compgen -W \"", f);
        char head[32] = "";
        for (int i = 0; i < TG_CLI_CMD_COUNT; i++) {
            const char *name = tg_cli_commands[i].name;
            size_t len = strcspn(name, " ");
            if (strlen(head) == len && !strncmp(head, name, len)) continue;
            snprintf(head, sizeof head, "%.*s", (int)len, name);
            fprintf(f, "%s%s", i ? " " : "", head);
        }
        fputs("\" -- \"$cur\"))", f);
        break;
    }
    case TG_CLI_K_SHELL: fputs("COMPREPLY=($(compgen -W bash -- \"$cur\"))", f); break;
    case TG_CLI_K_SOURCE:
        fputs("COMPREPLY=($(compgen -W \"", f);
        for (int i = 0; i < TG_SRC_COUNT; i++) fprintf(f, "%s%s", i ? " " : "", tg_source_defs[i].name);
        fputs("\" -- \"$cur\"))", f);
        break;
    case TG_CLI_K_NONE: fputs("COMPREPLY=()", f); break;
    case TG_CLI_K_RULES: fputs("COMPREPLY=($(compgen -W builtin -- \"$cur\") $(compgen -f -- \"$cur\"))", f); break;
    default: fputs("COMPREPLY=($(compgen -f -- \"$cur\"))", f); break;
    }
}

static void bash_command(FILE *f, tg_cli_command_id cmd)
{
    fprintf(f, "    \"%s\")\n        case \"$prev\" in\n", tg_cli_commands[cmd].name);
    for (int o = 0; o < TG_CLI_OPT_COUNT; o++) {
        const tg_cli_option *opt = &tg_cli_options[o];
        if (!tg_cli_takes(cmd, o) || !opt->metavar) continue;
        fputs("        ", f);
        if (opt->short_name) fprintf(f, "-%c|", opt->short_name);
        fprintf(f, "--%s) ", opt->name);
        if (opt->kind == TG_CLI_K_OUTPUT) {
            fputs("if [ \"$eq\" = 1 ]; then COMPREPLY=($(compgen -f -- \"$cur\")); else ", f);
            bash_value(f, opt);
            fputs("; fi", f);
        } else {
            bash_value(f, opt);
        }
        fputs("; return ;;\n", f);
    }
    fputs("        esac\n        if [[ $cur == -* ]]; then\n            COMPREPLY=($(compgen -W \"", f);
    bool first = true;
    for (int o = 0; o < TG_CLI_OPT_COUNT; o++)
        if (tg_cli_takes(cmd, o)) {
            fprintf(f, "%s--%s", first ? "" : " ", tg_cli_options[o].name);
            first = false;
        }
    fputs("\" -- \"$cur\"))\n            return\n        fi\n        ", f);
    bash_operands(f, tg_cli_commands[cmd].operand_kind);
    fputs(" ;;\n", f);
}

void tg_cli_print_bash_completion(FILE *f)
{
    fputs("# bash completion for tracegate, generated by `tracegate completion bash`\n"
          "# from engine/cli/options.def; do not edit.\n"
          "_tracegate() {\n"
          "    local cur prev cmd group i w eq=0 rules=\"\"\n"
          "    cur=${COMP_WORDS[COMP_CWORD]}\n"
          "    prev=${COMP_WORDS[COMP_CWORD-1]}\n"
          "    # --opt=VALUE and FORMAT=FILE: bash splits the word at '='\n"
          "    if [ \"$cur\" = \"=\" ]; then cur=\"\"; prev=${COMP_WORDS[COMP_CWORD-1]}; eq=1\n"
          "        [[ $prev == -* ]] || prev=${COMP_WORDS[COMP_CWORD-2]}\n"
          "    elif [ \"$prev\" = \"=\" ]; then prev=${COMP_WORDS[COMP_CWORD-2]}; eq=1\n"
          "        [[ $prev == -* ]] || prev=${COMP_WORDS[COMP_CWORD-3]}\n"
          "    fi\n"
          "    cmd=\"\"\n"
          "    for ((i = 1; i < COMP_CWORD; i++)); do\n"
          "        w=${COMP_WORDS[i]}\n"
          "        if [ -z \"$cmd\" ]; then\n"
          "            case \"$w\" in -*) continue ;; esac\n"
          "            cmd=$w\n"
          "            case \"$cmd\" in", f);
    /* groups take a second word */
    char head[32] = "";
    for (int i = 0; i < TG_CLI_CMD_COUNT; i++) {
        const char *name = tg_cli_commands[i].name;
        size_t len = strcspn(name, " ");
        if (!name[len] || (strlen(head) == len && !strncmp(head, name, len))) continue;
        snprintf(head, sizeof head, "%.*s", (int)len, name);
        fprintf(f, " %s)", head);
        fputs(" group=1 ;;", f);
    }
    fputs(" *) group=0 ;; esac\n"
          "        elif [ \"$group\" = 1 ]; then\n"
          "            cmd=\"$cmd $w\"; group=0\n"
          "        elif [ \"$w\" = --rules ] && [ $((i + 1)) -lt $COMP_CWORD ]; then\n"
          "            rules=\"$rules ${COMP_WORDS[i + 1]}\"\n"
          "        fi\n"
          "    done\n"
          "    [ -n \"$rules\" ] && rules=$(for w in $rules; do printf -- '%s ' \"$w\"; done)\n"
          "    if [ -z \"$cmd\" ]; then\n", f);
    fputs("        ", f);
    bash_operands(f, TG_CLI_K_COMMAND);
    fputs("\n        [[ $cur == -* ]] && COMPREPLY=($(compgen -W \"-V --version -h --help\" -- \"$cur\"))\n"
          "        return\n    fi\n    if [ \"$group\" = 1 ]; then\n        case \"$cmd\" in\n", f);
    head[0] = 0;
    for (int i = 0; i < TG_CLI_CMD_COUNT; i++) {
        const char *name = tg_cli_commands[i].name;
        size_t len = strcspn(name, " ");
        if (!name[len] || (strlen(head) == len && !strncmp(head, name, len))) continue;
        snprintf(head, sizeof head, "%.*s", (int)len, name);
        fprintf(f, "        %s) COMPREPLY=($(compgen -W \"", head);
        bool first = true;
        for (int j = 0; j < TG_CLI_CMD_COUNT; j++)
            if (!strncmp(tg_cli_commands[j].name, head, len) && tg_cli_commands[j].name[len] == ' ') {
                fprintf(f, "%s%s", first ? "" : " ", tg_cli_commands[j].name + len + 1);
                first = false;
            }
        fputs(" --help\" -- \"$cur\")) ;;\n", f);
    }
    fputs("        esac\n        return\n    fi\n    case \"$cmd\" in\n", f);
    for (int i = 0; i < TG_CLI_CMD_COUNT; i++) bash_command(f, (tg_cli_command_id)i);
    fputs("    esac\n}\ncomplete -F _tracegate tracegate\n", f);
}
