/*
** Rule sets: YAML files (lists, macros, rules, overrides) loaded with
** libyaml and compiled into typed predicate trees bound to the sources of
** fields.def. This header is the part other modules use; the AST and the
** compiler's internals live in the other headers of this folder.
*/
#ifndef TG_RULES_H
#define TG_RULES_H

#include "../common/common.h"
#include "../common/value.h"

typedef struct tg_ruleset tg_ruleset;

/* What reporters, baselines and the CLI may read of one rule. */
typedef struct tg_rule_info {
    const char *id;
    const char *title;
    tg_severity severity;
    const char *source;        /* "memcpy", "iteration", ... */
    const char *file;          /* defining file and line (after overrides: of the rule) */
    int line;
    const char *advice;        /* may be NULL */
    const char *explain;       /* longer text for `tracegate explain`, may be NULL */
    const char *const *tags;
    size_t n_tags;
    bool enabled;
    const char *metric;        /* aggregate text, e.g. "p50(gpu_time)", or NULL */
    tg_unit metric_unit;       /* the metric's unit, as the compiler typed it */
    const char *samples;       /* per-row field kept as distribution, or NULL */
    int regression;            /* 0 none, +1 higher_is_worse, -1 lower_is_worse */
    tg_cause_kind cause;       /* what a failure says about its cause (docs/host.md) */
} tg_rule_info;

/* File names in a rule folder: rule files, and the rule-test files that
** live beside them (`tracegate rules test`), which loading a folder skips. */
#define TG_RULE_FILE_SUFFIXES(X) X(".yaml") X(".yml")
#define TG_RULE_TEST_SUFFIXES(X) X(".test.yaml") X(".test.yml") X("_test.yaml") X("_test.yml")
bool tg_rules_is_rule_file(const char *name);   /* a rule file, not a test */
bool tg_rules_is_test_file(const char *name);

/* One `--set RULE.PARAM=VALUE`. The value is parsed as a literal of the rule
** language (units allowed: 200ms, 0.5%, 64KB). */
typedef struct tg_param_set {
    const char *rule;
    const char *param;
    const char *value;
} tg_param_set;

/* Load and compile files and directories (a directory: its *.yaml / *.yml
** files in name order), later files overriding earlier ones. Every error of
** every file is recorded in diag (status TG_EUSAGE); NULL if any error. */
tg_ruleset *tg_rules_load(const char *const *paths, size_t n_paths,
                          const tg_param_set *sets, size_t n_sets, tg_diag *diag);
void tg_rules_free(tg_ruleset *rs);

/* The same for in-memory texts (tests, inline rules): each text is loaded
** as a file called `name`, in order. */
typedef struct tg_rules_text {
    const char *name;
    const char *text;
} tg_rules_text;
tg_ruleset *tg_rules_load_texts(const tg_rules_text *texts, size_t n_texts,
                                const tg_param_set *sets, size_t n_sets, tg_diag *diag);
tg_status tg_rules_lint_texts(const tg_rules_text *texts, size_t n_texts, tg_diag *diag);

size_t tg_rules_count(const tg_ruleset *rs);
/* A rule id: a letter or digit, then letters, digits, '_' and '-'. */
bool tg_rules_valid_id(const char *s);
/* The rule files the set was loaded from (a folder's *.yaml / *.yml
** files one by one), as given or joined to their folder; the CLI refuses
** to write an output over any of them. */
size_t tg_rules_file_count(const tg_ruleset *rs);
const char *tg_rules_file(const tg_ruleset *rs, size_t i);
const tg_rule_info *tg_rules_info(const tg_ruleset *rs, size_t i);
/* Index of a rule by id, or -1. */
long tg_rules_find(const tg_ruleset *rs, const char *id);
/* A numeric param of a rule after --set (ratios as fractions, durations in
** ns); returns dflt when the rule or param does not exist. */
double tg_rules_param(const tg_ruleset *rs, const char *rule, const char *param, double dflt);
/* The same as a value (strings, booleans, numbers with their unit, after
** --set); false when the rule or param does not exist. */
bool tg_rules_param_value(const tg_ruleset *rs, const char *rule, const char *param, tg_value *out);
/* The elements of the set's named list (`lists:` of any file loaded), n in
** *n; NULL when there is no such list. */
const tg_value *tg_rules_list(const tg_ruleset *rs, const char *name, size_t *n);

/* Predicate pushdown for the model: the smallest lower bound the enabled
** rules on `source` (a tg_source_id) put on its integer field `field`
** through a `field >= X` / `field > X` conjunct at the top level of their
** `where` (X constant), so that no rule can see a row below it. INT64_MIN
** when some rule on the source has no such bound (or the field is not an
** integer field of it); INT64_MAX when no enabled rule reads the source. */
int64_t tg_rules_lower_bound(const tg_ruleset *rs, int source, const char *field);

/* Does an enabled rule read a field pred accepts (in any expression, its
** evidence columns, groups or order)? The check plan loads what such
** fields need (call stacks for call_site, ...). */
struct tg_field_def;
bool tg_rules_read_field(const tg_ruleset *rs, bool (*pred)(const struct tg_field_def *));

/* `tracegate rules lint`: load as above, plus warnings (unused macros and
** lists, ...). Returns TG_OK or TG_EUSAGE. */
tg_status tg_rules_lint(const char *const *paths, size_t n_paths, tg_diag *diag);

/* tg_suggest, the "did you mean" of every error message about a name:
** common/vocab.h (the command line uses it too). */

/* The set's part of a result's rule-set digest (docs/formats.md, "Where a
** result comes from"), fed to h (common/sha256.h): every rule by id (its
** severity, enabled, source, params after --set, texts and compiled
** trees: `explain` less where it was defined) and every named list, so
** that the same files and --set give the same digest whatever the order
** or path they were read from, and any change of a rule, a param or a
** severity changes it. False when out of memory. */
struct tg_sha256;
bool tg_rules_digest(const tg_ruleset *rs, struct tg_sha256 *h);

/* `tracegate explain`: the rule's text and its compiled tree, readable.
** Returns a malloc'd string, NULL if the rule is unknown. */
char *tg_rules_explain(const tg_ruleset *rs, const char *id);

#endif
