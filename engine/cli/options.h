/*
** The command line of every subcommand, from one table (options.def):
** tg_cli_parse reads argv into a tg_cli_args (every occurrence of every
** option, checked against its kind and choices, and the operands), the
** accessors below hand out typed values, and docgen.c prints `--help`,
** the command list, the man page and the bash completion from the same
** table. A usage error is one line on stderr ending with "see 'tracegate
** CMD --help'", with a "did you mean" when a known word is close.
*/
#ifndef TG_CLI_OPTIONS_H
#define TG_CLI_OPTIONS_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "../common/common.h"
#include "../rules/rules.h"

/* What a value or an operand is: how it is checked and completed. */
typedef enum tg_cli_kind {
    TG_CLI_K_NONE,     /* a flag; or a command without operands */
    TG_CLI_K_TEXT,
    TG_CLI_K_CHOICE,   /* one of the option's choices */
    TG_CLI_K_FILE,     /* a file (completed as a file) */
    TG_CLI_K_TRACE,    /* a trace file */
    TG_CLI_K_RULES,    /* a rule file, a folder, or 'builtin' */
    TG_CLI_K_RULE_ID,  /* the id of a loaded rule */
    TG_CLI_K_OUTPUT,   /* FORMAT=FILE */
    TG_CLI_K_SET,      /* RULE.PARAM=VALUE */
    TG_CLI_K_PATTERN,  /* a POSIX ERE (tg_model_pattern_ok) */
    TG_CLI_K_COUNT,    /* 1 to 256 */
    TG_CLI_K_RANK,     /* 0 to 2^31 - 1 */
    TG_CLI_K_WORLD,    /* 1 to 2^31 - 1 */
    TG_CLI_K_SOURCE,   /* a rule source (kernel, memcpy, ...) */
    TG_CLI_K_SIZE,     /* tg_parse_size */
    TG_CLI_K_RATIO,    /* 10% or 0.1 */
    TG_CLI_K_COMMAND,  /* a command name */
    TG_CLI_K_SHELL,    /* bash */
} tg_cli_kind;

typedef enum tg_cli_command_id {
#define TG_CLI_COMMAND(ID, NAME, OPERANDS, OPERAND_KIND, MIN, MAX, SUMMARY, DESCRIPTION) TG_CLI_CMD_##ID,
#include "options.def"
    TG_CLI_CMD_COUNT
} tg_cli_command_id;

typedef enum tg_cli_option_id {
#define TG_CLI_OPTION(ID, COMMANDS, LONG, SHORT, METAVAR, KIND, CHOICES, HELP) TG_CLI_OPT_##ID,
#include "options.def"
    TG_CLI_OPT_COUNT
} tg_cli_option_id;

/* The word lists a choice value is checked against. */
typedef enum tg_cli_choices {
    TG_CLI_CH_NONE, TG_CLI_CH_FORMAT, TG_CLI_CH_DOC_FORMAT, TG_CLI_CH_FAIL_ON, TG_CLI_CH_PASS_FAIL,
    TG_CLI_CH_MISSING, TG_CLI_CH_LOAD, TG_CLI_CH_SEVERITY, TG_CLI_CH_COLOR, TG_CLI_CH_SHELL, TG_CLI_CH_FIELDS_FORMAT,
    TG_CLI_CH_COUNT
} tg_cli_choices;

/* --fail-on never: the index after the severities (tg_cli_choice). */
#define TG_CLI_FAIL_ON_NEVER TG_SEV_COUNT

typedef struct tg_cli_command {
    const char *name;          /* "check", "rules lint" */
    const char *operands;
    tg_cli_kind operand_kind;
    int min, max;              /* operands; max -1: any number */
    const char *summary, *description;
} tg_cli_command;

typedef struct tg_cli_option {
    uint32_t commands;         /* bit per tg_cli_command_id */
    const char *name;          /* long, without "--" */
    char short_name;           /* 0: none */
    const char *metavar;       /* NULL: a flag */
    tg_cli_kind kind;
    tg_cli_choices choices;
    const char *help;
} tg_cli_option;

extern const tg_cli_command tg_cli_commands[TG_CLI_CMD_COUNT];
extern const tg_cli_option tg_cli_options[TG_CLI_OPT_COUNT];

typedef struct tg_cli_exit_doc { int status; const char *meaning; } tg_cli_exit_doc;
typedef struct tg_cli_env_doc { const char *name, *meaning; } tg_cli_env_doc;
extern const tg_cli_exit_doc tg_cli_exits[];
extern const size_t tg_cli_n_exits;
extern const tg_cli_env_doc tg_cli_envs[];
extern const size_t tg_cli_n_envs;

static inline bool tg_cli_takes(tg_cli_command_id cmd, tg_cli_option_id opt)
{
    return (tg_cli_options[opt].commands >> cmd) & 1u;
}

/* The words of a choice list, NULL-terminated, into words (room for at
** least 16); returns words. Severities come from common/vocab.h and
** report formats from engine/report, so a new one appears here at once. */
const char **tg_cli_choice_words(tg_cli_choices ch, const char **words);

/* The command named by argv[0] (and argv[1] for a group such as "rules"):
** its id and how many words it took, or -1 after printing why not (an
** unknown command with a "did you mean"; a group without its word). */
int tg_cli_find_command(int argc, char **argv, int *words);

/* ----------------------------------------------------------- parsing */

typedef struct tg_cli_args {
    tg_cli_command_id cmd;
    const char **values[TG_CLI_OPT_COUNT];  /* every occurrence, in order */
    size_t n_values[TG_CLI_OPT_COUNT];
    const char **operands;
    size_t n_operands;
} tg_cli_args;

/* Read the options and operands of cmd from argv (the words after the
** command). Returns TG_OK; TG_EUSAGE after printing one usage error; or
** -1 after printing the help (--help, -h), which the caller turns into
** exit 0. Values point into argv. */
int tg_cli_parse(tg_cli_command_id cmd, int argc, char **argv, tg_cli_args *out);
void tg_cli_args_free(tg_cli_args *a);

/* "WHAT wants a, b or c, not 'x' (did you mean 'y'?)"; TG_EUSAGE. */
int tg_cli_bad_choice(tg_cli_command_id cmd, const char *what, tg_cli_choices ch, const char *value);

/* One line on stderr ending "(see 'tracegate CMD --help')"; TG_EUSAGE. */
int tg_cli_usage_error(tg_cli_command_id cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* ---------------------------------------------------------- accessors */

bool tg_cli_flag(const tg_cli_args *a, tg_cli_option_id o);
/* The last value given, or NULL. */
const char *tg_cli_value(const tg_cli_args *a, tg_cli_option_id o);
/* The index of the last value in the option's choice words, or dflt. */
int tg_cli_choice(const tg_cli_args *a, tg_cli_option_id o, int dflt);
/* --jobs N (dflt when absent), --max-memory SIZE (0), --straggler-threshold X,
** --rank and --world-size (dflt when absent). */
int tg_cli_count(const tg_cli_args *a, tg_cli_option_id o, int dflt);
int64_t tg_cli_whole(const tg_cli_args *a, tg_cli_option_id o, int64_t dflt);
int64_t tg_cli_size(const tg_cli_args *a, tg_cli_option_id o);
double tg_cli_ratio(const tg_cli_args *a, tg_cli_option_id o, double dflt);

/* Every --set as tg_param_set, in order; the strings live in sets' own
** storage. NULL (*n 0) when none; TG_EINTERNAL only when out of memory. */
typedef struct tg_cli_sets {
    tg_param_set *sets;
    size_t n;
    char *storage;
} tg_cli_sets;
int tg_cli_param_sets(const tg_cli_args *a, tg_cli_sets *out);
void tg_cli_sets_free(tg_cli_sets *s);

/* Rule paths from a list (--rules values, or `rules` operands): 'builtin'
** resolved, the built-in rules when the list is empty. malloc'd array of
** borrowed strings; NULL after printing when the built-in rules are not
** found or out of memory. */
const char **tg_cli_rule_paths(const char *const *given, size_t n_given, size_t *n);

/* "FORMAT=FILE" of -o: the format (tg_format) and the file. */
int tg_cli_output_spec(const char *value, const char **file);

/* --------------------------------------------------- generated texts */

/* docgen.c: `tracegate COMMAND --help`, the command list (`tracegate
** help`), the man page, the bash completion script. */
void tg_cli_print_help(tg_cli_command_id cmd, FILE *f);
void tg_cli_print_group_help(const char *group, FILE *f);
void tg_cli_print_commands(FILE *f);
void tg_cli_print_man(FILE *f, const char *version);
void tg_cli_print_bash_completion(FILE *f);

#endif
