/*
** The option layer of every subcommand (options.h): the tables expanded
** from options.def, finding the command, parsing argv, checking each
** value against its kind, and the typed accessors the commands read.
**
** Parsing follows getopt_long's conventions without its global state:
** `--name VALUE`, `--name=VALUE`, `-o VALUE`, `-oVALUE`, flags grouped
** (`-qj4`), options anywhere among the operands, `--` ends the options,
** a lone `-` is an operand. Long names are matched whole: a near miss
** gets a "did you mean" instead of silently meaning a longer name.
*/
#include "options.h"

#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "../model/model.h"
#include "../report/report.h"

#define CMD(id) (1u << TG_CLI_CMD_##id)
#define TG_CLI_ALL_COMMANDS 0xffffffffu

const tg_cli_command tg_cli_commands[TG_CLI_CMD_COUNT] = {
#define TG_CLI_COMMAND(ID, NAME, OPERANDS, OPERAND_KIND, MIN, MAX, SUMMARY, DESCRIPTION) \
    {NAME, OPERANDS, OPERAND_KIND, MIN, MAX, SUMMARY, DESCRIPTION},
#include "options.def"
};

const tg_cli_option tg_cli_options[TG_CLI_OPT_COUNT] = {
#define TG_CLI_OPTION(ID, COMMANDS, LONG, SHORT, METAVAR, KIND, CHOICES, HELP) \
    {COMMANDS, LONG, SHORT, METAVAR, KIND, TG_CLI_CH_##CHOICES, HELP},
#include "options.def"
};

const tg_cli_exit_doc tg_cli_exits[] = {
#define TG_CLI_EXIT(STATUS, MEANING) {STATUS, MEANING},
#include "options.def"
};
const size_t tg_cli_n_exits = sizeof tg_cli_exits / sizeof *tg_cli_exits;

const tg_cli_env_doc tg_cli_envs[] = {
#define TG_CLI_ENV(NAME, MEANING) {NAME, MEANING},
#include "options.def"
};
const size_t tg_cli_n_envs = sizeof tg_cli_envs / sizeof *tg_cli_envs;

/* ------------------------------------------------------------ choices */

const char **tg_cli_choice_words(tg_cli_choices ch, const char **words)
{
    size_t n = 0;
    switch (ch) {
    case TG_CLI_CH_FORMAT:
        for (int i = 0; i < TG_FMT_COUNT; i++) words[n++] = tg_format_names[i];
        break;
    case TG_CLI_CH_DOC_FORMAT: words[n++] = "text"; words[n++] = "json"; break;
    case TG_CLI_CH_FAIL_ON:
    case TG_CLI_CH_SEVERITY:
        /* severities, least severe first: the index is the tg_severity */
        for (int i = 0; i < TG_SEV_COUNT; i++) words[n++] = tg_severity_names[i];
        if (ch == TG_CLI_CH_FAIL_ON) words[n++] = "never";   /* TG_CLI_FAIL_ON_NEVER */
        break;
    case TG_CLI_CH_PASS_FAIL: words[n++] = "pass"; words[n++] = "fail"; break;
    case TG_CLI_CH_MISSING: words[n++] = "fail"; words[n++] = "skip"; break;
    case TG_CLI_CH_LOAD: words[n++] = "needed"; words[n++] = "all"; break;
    case TG_CLI_CH_COLOR: words[n++] = "auto"; words[n++] = "always"; words[n++] = "never"; break;
    case TG_CLI_CH_SHELL: words[n++] = "bash"; break;
    case TG_CLI_CH_FIELDS_FORMAT: words[n++] = "text"; words[n++] = "markdown"; break;
    default: break;
    }
    words[n] = NULL;
    return words;
}

/* The index of word in the option's choices; "md" is markdown. -1: none. */
static int choice_index(tg_cli_choices ch, const char *word)
{
    if (ch == TG_CLI_CH_FORMAT) return tg_format_parse(word);
    if (ch == TG_CLI_CH_FIELDS_FORMAT && !strcmp(word, "md")) return 1;   /* markdown, as for reports */
    const char *words[16];
    tg_cli_choice_words(ch, words);
    for (int i = 0; words[i]; i++)
        if (!strcmp(words[i], word)) return i;
    return -1;
}

/* ------------------------------------------------------------ messages */

int tg_cli_usage_error(tg_cli_command_id cmd, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *msg = NULL;
    if (vasprintf(&msg, fmt, ap) < 0) msg = NULL;
    va_end(ap);
    tg_cli_say("%s (see 'tracegate %s --help')", msg ? msg : fmt, tg_cli_commands[cmd].name);
    free(msg);
    return TG_EUSAGE;
}

/* " (did you mean 'x'?)" or "", into buf. */
static const char *hint(const char *word, const char *const *names, size_t n, const char *prefix,
                        char *buf, size_t size)
{
    const char *best = tg_suggest(word, names, n);
    if (best) snprintf(buf, size, " (did you mean '%s%s'?)", prefix, best);
    else buf[0] = 0;
    return buf;
}

/* ------------------------------------------------------------ commands */

/* The first word of a command's name ("rules" of "rules lint") into buf;
** true when the name has a second word. */
static bool head_word(const char *name, char *buf, size_t size)
{
    const char *space = strchr(name, ' ');
    size_t len = space ? (size_t)(space - name) : strlen(name);
    snprintf(buf, size, "%.*s", (int)len, name);
    return space != NULL;
}

/* The command of group `group` named by sub (NULL when missing). */
static int find_in_group(const char *group, const char *sub, int *words)
{
    const char *subs[TG_CLI_CMD_COUNT + 1];
    size_t n = 0, glen = strlen(group);
    for (int j = 0; j < TG_CLI_CMD_COUNT; j++) {
        const char *name = tg_cli_commands[j].name;
        if (strncmp(name, group, glen) || name[glen] != ' ') continue;
        if (sub && !strcmp(name + glen + 1, sub)) {
            *words = 2;
            return j;
        }
        subs[n++] = name + glen + 1;
    }
    subs[n] = NULL;
    if (sub && (!strcmp(sub, "--help") || !strcmp(sub, "-h") || !strcmp(sub, "help"))) {
        tg_cli_print_group_help(group, stdout);
        return -2;
    }
    char h[96], list[128];
    tg_vocab_join(subs, list, sizeof list);
    if (!sub) tg_cli_say("%s needs a command: %s (see 'tracegate %s --help')", group, list, group);
    else tg_cli_say("unknown %s command '%s'%s (%s; see 'tracegate %s --help')", group, sub,
                    hint(sub, subs, n, "", h, sizeof h), list, group);
    return -1;
}

int tg_cli_find_command(int argc, char **argv, int *words)
{
    const char *word = argv[0];
    char heads[TG_CLI_CMD_COUNT][32];
    const char *names[TG_CLI_CMD_COUNT];
    size_t n = 0;
    for (int i = 0; i < TG_CLI_CMD_COUNT; i++) {
        bool group = head_word(tg_cli_commands[i].name, heads[i], sizeof heads[i]);
        if (!strcmp(heads[i], word)) {
            if (group) return find_in_group(word, argc > 1 ? argv[1] : NULL, words);
            *words = 1;
            return i;
        }
        if (!n || strcmp(names[n - 1], heads[i])) names[n++] = heads[i];
    }
    char h[96];
    tg_cli_say("unknown command '%s'%s (see 'tracegate help')", word, hint(word, names, n, "", h, sizeof h));
    return -1;
}

/* ------------------------------------------------------------- values */

/* "RULE.PARAM=VALUE": the rule id may hold dots, the param not. */
static bool split_set(const char *arg, size_t *dot, size_t *eq)
{
    const char *e = strchr(arg, '=');
    if (!e) return false;
    const char *d = NULL;
    for (const char *p = arg; p < e; p++)
        if (*p == '.') d = p;
    if (!d || d == arg || d + 1 == e || !e[1]) return false;
    *dot = (size_t)(d - arg);
    *eq = (size_t)(e - arg);
    return true;
}

static bool parse_count(const char *s, int *out)
{
    char *end;
    long n = strtol(s, &end, 10);
    if (!*s || *end || n < 1 || n > 256) return false;
    *out = (int)n;
    return true;
}

/* A rank (lo 0) or a world size (lo 1): decimal digits, at most 2^31 - 1. */
static bool parse_whole(const char *s, int64_t lo, int64_t *out)
{
    char *end;
    if (*s < '0' || *s > '9') return false;
    long long v = strtoll(s, &end, 10);
    if (*end || v < lo || v > INT32_MAX) return false;
    *out = v;
    return true;
}

/* "10%", "0.1" -> 0.1 */
static bool parse_ratio(const char *s, double *out)
{
    char *end;
    double x = strtod(s, &end);
    if (end == s) return false;
    if (*end == '%') {
        x /= 100;
        end++;
    }
    if (*end || !isfinite(x) || x < 0) return false;
    *out = x;
    return true;
}

int tg_cli_output_spec(const char *value, const char **file)
{
    const char *eq = strchr(value, '=');
    if (!eq || eq == value || !eq[1]) return -1;
    char name[32];
    if ((size_t)(eq - value) >= sizeof name) return -1;
    memcpy(name, value, (size_t)(eq - value));
    name[eq - value] = 0;
    *file = eq + 1;
    return tg_format_parse(name);
}

/* A value that does not fit its choices: the words and a hint. */
int tg_cli_bad_choice(tg_cli_command_id cmd, const char *opt, tg_cli_choices ch, const char *value)
{
    const char *words[16];
    tg_cli_choice_words(ch, words);
    size_t n = 0;
    while (words[n]) n++;
    char list[256], h[96];
    return tg_cli_usage_error(cmd, "%s wants %s, not '%s'%s", opt, tg_vocab_join(words, list, sizeof list), value,
                              hint(value, words, n, "", h, sizeof h));
}

/* Check one value of option o; TG_OK or TG_EUSAGE after printing. */
static int check_value(tg_cli_command_id cmd, const tg_cli_option *o, const char *v)
{
    char opt[64];
    snprintf(opt, sizeof opt, "--%s", o->name);
    switch (o->kind) {
    case TG_CLI_K_CHOICE:
        return choice_index(o->choices, v) >= 0 ? TG_OK : tg_cli_bad_choice(cmd, opt, o->choices, v);
    case TG_CLI_K_OUTPUT: {
        const char *file;
        const char *eq = strchr(v, '=');
        if (!eq || eq == v || !eq[1]) return tg_cli_usage_error(cmd, "-o wants FORMAT=FILE, not '%s'", v);
        if (tg_cli_output_spec(v, &file) < 0) {
            char name[64];
            snprintf(name, sizeof name, "%.*s", (int)(eq - v), v);
            return tg_cli_bad_choice(cmd, "-o FORMAT=FILE: FORMAT", TG_CLI_CH_FORMAT, name);
        }
        return TG_OK;
    }
    case TG_CLI_K_SET: {
        size_t dot, eq;
        return split_set(v, &dot, &eq) ? TG_OK
               : tg_cli_usage_error(cmd, "--set wants RULE.PARAM=VALUE, not '%s'", v);
    }
    case TG_CLI_K_PATTERN: {
        tg_diag d;   /* a bad pattern is a usage error before any trace is read */
        tg_diag_init(&d);
        bool ok = tg_model_pattern_ok(v, &d);
        tg_cli_report_diag(&d, TG_OK);
        tg_diag_clear(&d);
        return ok ? TG_OK : TG_EUSAGE;
    }
    case TG_CLI_K_COUNT: {
        int n;
        return parse_count(v, &n) ? TG_OK
               : tg_cli_usage_error(cmd, "%s wants a number from 1 to 256, not '%s'", opt, v);
    }
    case TG_CLI_K_RANK:
    case TG_CLI_K_WORLD: {
        int64_t n;
        if (parse_whole(v, o->kind == TG_CLI_K_RANK ? 0 : 1, &n)) return TG_OK;
        return o->kind == TG_CLI_K_RANK
                   ? tg_cli_usage_error(cmd, "%s wants a rank: a number from 0, not '%s'", opt, v)
                   : tg_cli_usage_error(cmd, "%s wants the number of ranks: 1 or more, not '%s'", opt, v);
    }
    case TG_CLI_K_SIZE: {
        int64_t n;
        return tg_parse_size(v, &n) ? TG_OK
               : tg_cli_usage_error(cmd, "%s wants a size such as 512MiB or 4GiB, not '%s'", opt, v);
    }
    case TG_CLI_K_RATIO: {
        double x;
        return parse_ratio(v, &x) ? TG_OK
               : tg_cli_usage_error(cmd, "%s wants a ratio like 10%% or 0.1, not '%s'", opt, v);
    }
    default:
        return *v ? TG_OK : tg_cli_usage_error(cmd, "%s wants a value, not an empty string", opt);
    }
}

/* ------------------------------------------------------------ parsing */

static int find_long(tg_cli_command_id cmd, const char *name, size_t len)
{
    for (int i = 0; i < TG_CLI_OPT_COUNT; i++)
        if (tg_cli_takes(cmd, i) && strlen(tg_cli_options[i].name) == len &&
            !strncmp(tg_cli_options[i].name, name, len))
            return i;
    return -1;
}

static int find_short(tg_cli_command_id cmd, char c)
{
    for (int i = 0; i < TG_CLI_OPT_COUNT; i++)
        if (tg_cli_takes(cmd, i) && tg_cli_options[i].short_name == c) return i;
    return -1;
}

/* An unknown long option: a hint among this command's options, or the
** command that does take it. */
static int unknown_long(tg_cli_command_id cmd, const char *arg, size_t len)
{
    char word[128], h[128] = "";
    snprintf(word, sizeof word, "%.*s", (int)(len < 100 ? len : 100), arg);
    /* an option of another command is named as such, not "corrected" */
    for (int i = 0; i < TG_CLI_OPT_COUNT && !h[0]; i++)
        if (!strcmp(tg_cli_options[i].name, word))
            for (int c = 0; c < TG_CLI_CMD_COUNT; c++)
                if (tg_cli_takes((tg_cli_command_id)c, i)) {
                    snprintf(h, sizeof h, " (it is an option of %s)", tg_cli_commands[c].name);
                    break;
                }
    if (!h[0]) {
        const char *names[TG_CLI_OPT_COUNT];
        size_t n = 0;
        for (int i = 0; i < TG_CLI_OPT_COUNT; i++)
            if (tg_cli_takes(cmd, i)) names[n++] = tg_cli_options[i].name;
        hint(word, names, n, "--", h, sizeof h);
    }
    return tg_cli_usage_error(cmd, "unknown option '--%s'%s", word, h);
}

static bool add_value(tg_cli_args *a, int opt, const char *v)
{
    const char **grown = realloc(a->values[opt], (a->n_values[opt] + 1) * sizeof *grown);
    if (!grown) return false;
    grown[a->n_values[opt]++] = v;
    a->values[opt] = grown;
    return true;
}

/* One occurrence of option opt with value v (NULL for a flag). */
static int take(tg_cli_args *a, int opt, const char *v)
{
    if (opt == TG_CLI_OPT_HELP) {
        tg_cli_print_help(a->cmd, stdout);
        return -1;
    }
    if (v) {
        int st = check_value(a->cmd, &tg_cli_options[opt], v);
        if (st != TG_OK) return st;
    }
    if (!add_value(a, opt, v ? v : "")) {
        tg_cli_say("out of memory");
        return TG_EINTERNAL;
    }
    return TG_OK;
}

static int parse_long(tg_cli_args *a, int argc, char **argv, int *i)
{
    const char *name = argv[*i] + 2;
    const char *eq = strchr(name, '=');
    size_t len = eq ? (size_t)(eq - name) : strlen(name);
    int opt = find_long(a->cmd, name, len);
    if (opt < 0) return unknown_long(a->cmd, name, len);
    const tg_cli_option *o = &tg_cli_options[opt];
    if (!o->metavar) {
        if (eq) return tg_cli_usage_error(a->cmd, "option '--%s' takes no value", o->name);
        return take(a, opt, NULL);
    }
    if (eq) return take(a, opt, eq + 1);
    if (*i + 1 >= argc) return tg_cli_usage_error(a->cmd, "option '--%s' needs a value (%s)", o->name, o->metavar);
    return take(a, opt, argv[++*i]);
}

/* "-qj4", "-o x", "-ox": flags grouped, the first option with a value
** takes the rest of the word or the next argument. */
static int parse_short(tg_cli_args *a, int argc, char **argv, int *i)
{
    const char *p = argv[*i] + 1;
    for (; *p; p++) {
        int opt = find_short(a->cmd, *p);
        if (opt < 0) return tg_cli_usage_error(a->cmd, "unknown option '-%c'", *p);
        const tg_cli_option *o = &tg_cli_options[opt];
        if (!o->metavar) {
            int st = take(a, opt, NULL);
            if (st != TG_OK) return st;
            continue;
        }
        if (p[1]) return take(a, opt, p + 1);
        if (*i + 1 >= argc) return tg_cli_usage_error(a->cmd, "option '-%c' needs a value (%s)", *p, o->metavar);
        return take(a, opt, argv[++*i]);
    }
    return TG_OK;
}

/* "TRACE..." -> "TRACE", "[PATH...]" -> "PATH": the operand's name. */
static void operand_name(const char *synopsis, char *buf, size_t size)
{
    size_t n = 0;
    for (const char *p = synopsis; *p && n + 1 < size; p++)
        if (*p != '[' && *p != ']' && *p != '.') buf[n++] = *p;
    buf[n] = 0;
}

static int check_operands(const tg_cli_args *a)
{
    const tg_cli_command *c = &tg_cli_commands[a->cmd];
    size_t n = a->n_operands;
    char name[64];
    operand_name(c->operands, name, sizeof name);
    if ((int)n < c->min)
        return tg_cli_usage_error(a->cmd, "%s needs %s%s", c->name, c->max == 1 ? "a " : "at least one ", name);
    if (c->max == 0 && n > 0)
        return tg_cli_usage_error(a->cmd, "%s takes no arguments ('%s' given)", c->name, a->operands[0]);
    if (c->max > 0 && n > (size_t)c->max)
        return tg_cli_usage_error(a->cmd, "%s takes %s %s ('%s' and '%s' given)", c->name,
                                  c->max == 1 ? "one" : "at most two words of", name, a->operands[n - 2],
                                  a->operands[n - 1]);
    return TG_OK;
}

int tg_cli_parse(tg_cli_command_id cmd, int argc, char **argv, tg_cli_args *out)
{
    memset(out, 0, sizeof *out);
    out->cmd = cmd;
    out->operands = calloc((size_t)argc + 1, sizeof *out->operands);
    if (!out->operands) return TG_EINTERNAL;
    bool only_operands = false;
    for (int i = 0; i < argc; i++) {
        const char *arg = argv[i];
        int st = TG_OK;
        if (only_operands || arg[0] != '-' || !arg[1]) out->operands[out->n_operands++] = arg;
        else if (!strcmp(arg, "--")) only_operands = true;
        else if (arg[1] == '-') st = parse_long(out, argc, argv, &i);
        else st = parse_short(out, argc, argv, &i);
        if (st != TG_OK) return st;
    }
    return check_operands(out);
}

void tg_cli_args_free(tg_cli_args *a)
{
    for (int i = 0; i < TG_CLI_OPT_COUNT; i++) free(a->values[i]);
    free(a->operands);
    memset(a, 0, sizeof *a);
}

/* ---------------------------------------------------------- accessors */

bool tg_cli_flag(const tg_cli_args *a, tg_cli_option_id o)
{
    return a->n_values[o] > 0;
}

const char *tg_cli_value(const tg_cli_args *a, tg_cli_option_id o)
{
    return a->n_values[o] ? a->values[o][a->n_values[o] - 1] : NULL;
}

int tg_cli_choice(const tg_cli_args *a, tg_cli_option_id o, int dflt)
{
    const char *v = tg_cli_value(a, o);
    int i = v ? choice_index(tg_cli_options[o].choices, v) : -1;
    return i >= 0 ? i : dflt;
}

int tg_cli_count(const tg_cli_args *a, tg_cli_option_id o, int dflt)
{
    const char *v = tg_cli_value(a, o);
    int n;
    return v && parse_count(v, &n) ? n : dflt;
}

int64_t tg_cli_whole(const tg_cli_args *a, tg_cli_option_id o, int64_t dflt)
{
    const char *v = tg_cli_value(a, o);
    int64_t n;
    return v && parse_whole(v, tg_cli_options[o].kind == TG_CLI_K_RANK ? 0 : 1, &n) ? n : dflt;
}

int64_t tg_cli_size(const tg_cli_args *a, tg_cli_option_id o)
{
    const char *v = tg_cli_value(a, o);
    int64_t n;
    return v && tg_parse_size(v, &n) ? n : 0;
}

double tg_cli_ratio(const tg_cli_args *a, tg_cli_option_id o, double dflt)
{
    const char *v = tg_cli_value(a, o);
    double x;
    return v && parse_ratio(v, &x) ? x : dflt;
}

int tg_cli_param_sets(const tg_cli_args *a, tg_cli_sets *out)
{
    memset(out, 0, sizeof *out);
    size_t n = a->n_values[TG_CLI_OPT_SET], bytes = 0;
    if (!n) return TG_OK;
    for (size_t i = 0; i < n; i++) bytes += strlen(a->values[TG_CLI_OPT_SET][i]) + 1;
    out->sets = calloc(n, sizeof *out->sets);
    out->storage = malloc(bytes);
    if (!out->sets || !out->storage) {
        tg_cli_sets_free(out);
        return TG_EINTERNAL;
    }
    char *p = out->storage;
    for (size_t i = 0; i < n; i++) {
        const char *v = a->values[TG_CLI_OPT_SET][i];
        size_t dot, eq, len = strlen(v);
        if (!split_set(v, &dot, &eq)) continue;   /* checked while parsing */
        memcpy(p, v, len + 1);
        p[dot] = 0;
        p[eq] = 0;
        out->sets[out->n++] = (tg_param_set){.rule = p, .param = p + dot + 1, .value = p + eq + 1};
        p += len + 1;
    }
    return TG_OK;
}

void tg_cli_sets_free(tg_cli_sets *s)
{
    free(s->sets);
    free(s->storage);
    memset(s, 0, sizeof *s);
}

const char **tg_cli_rule_paths(const char *const *given, size_t n_given, size_t *n)
{
    const char **paths = calloc(n_given ? n_given : 1, sizeof *paths);
    *n = 0;
    if (!paths) {
        tg_cli_say("out of memory");
        return NULL;
    }
    for (size_t i = 0; i < (n_given ? n_given : 1); i++) {
        const char *p = n_given ? given[i] : "builtin";
        if (!strcmp(p, "builtin")) {
            p = tg_cli_builtin_rules();
            if (!p) {
                tg_cli_say("the built-in rules (rules.d) were not found; set TRACEGATE_RULES_DIR or pass --rules PATH");
                free(paths);
                return NULL;
            }
        }
        paths[(*n)++] = p;
    }
    return paths;
}
