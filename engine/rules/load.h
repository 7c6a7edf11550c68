/*
** The loader's state between reading YAML and compiling rules: every
** rule's keys as YAML nodes after overrides (a later file may replace a
** key or append to `where` and `tags`), the named lists and macros of all
** files, and the hooks from the loader (load.c) into the compiler
** (compile.c for expressions, compile_rule.c for a rule's keys).
*/
#ifndef TG_RULES_LOAD_H
#define TG_RULES_LOAD_H

#include "expr.h"
#include "yaml_doc.h"

#define TG_RULE_KEYS(X) \
    X(ID, "id") X(TITLE, "title") X(SEVERITY, "severity") X(TAGS, "tags") \
    X(SOURCE, "source") X(WHERE, "where") X(FAIL_WHEN, "fail_when") X(METRIC, "metric") \
    X(SAMPLES, "samples") X(REGRESSION, "regression") X(PARAMS, "params") \
    X(EVIDENCE, "evidence") X(MESSAGE, "message") X(ADVICE, "advice") \
    X(EXPLAIN, "explain") X(ENABLED, "enabled") X(CAUSE, "cause") X(EXCEPT, "except")

typedef enum tg_rule_key {
#define X(id, name) TG_RK_##id,
    TG_RULE_KEYS(X)
#undef X
    TG_RK_COUNT
} tg_rule_key;

extern const char *const tg_rule_key_names[TG_RK_COUNT];

typedef struct tg_rule_def {
    const char *id;
    tg_pos pos;                     /* the rule's mapping in its defining file */
    tg_ynode *key[TG_RK_COUNT];     /* current value of each key (after overrides) */
    tg_ynode **where_more;          /* `append: {where: ...}` clauses, and-ed */
    size_t n_where_more, cap_where_more;
    tg_ynode **tags_more;           /* `append: {tags: [...]}` */
    size_t n_tags_more, cap_tags_more;
} tg_rule_def;

typedef struct tg_macro {
    const char *name;
    const tg_ast *ast;              /* NULL when its text did not parse */
    tg_pos pos;
    bool used;
    /* compile.c: its size with every macro in it expanded, for rules on
    ** source size_src - 1 (0: not computed), capped just above the budget */
    size_t size;
    int size_src;
    bool sizing;                    /* being sized (a cycle stops there) */
} tg_macro;

typedef struct tg_list {
    const char *name;
    tg_value *items;
    size_t n;
    tg_pos pos;
    bool used;
} tg_list;

typedef struct tg_rules_loader {
    tg_rules_ctx ctx;
    tg_rule_def *defs;
    size_t n_defs, cap_defs;
    tg_macro *macros;
    size_t n_macros, cap_macros;
    tg_list *lists;
    size_t n_lists, cap_lists;
    tg_regex **regexes;             /* compiled patterns, handed to the rule set */
    size_t n_regexes, cap_regexes;
    bool lint;                      /* also report warnings */
    const char **files;             /* every rule file read (arena copies) */
    size_t n_files, cap_files;
    size_t nodes_left;              /* of TG_RULESET_NODE_BUDGET, for the rules still to compile */
} tg_rules_loader;

/* load.c: read a file or a directory of *.yaml / *.yml (name order), or an
** in-memory text, into the loader. False when it had errors. */
bool tg_rfile_path(tg_rules_loader *ld, const char *path);
bool tg_rfile_text(tg_rules_loader *ld, const char *name, const char *text, size_t len);
tg_macro *tg_rfile_macro(tg_rules_loader *ld, const char *name);
tg_list *tg_rfile_list(tg_rules_loader *ld, const char *name);
/* The value of a scalar written as a literal: plain scalars that read as a
** number (with unit) or true/false become those, everything else a string. */
tg_value tg_rfile_scalar_value(tg_rules_loader *ld, const tg_ynode *n, int *suffix);

/* compile_rule.c: compile one rule definition into out (arena memory).
** --set values for this rule are applied to its params. */
bool tg_compile_rule(tg_rules_loader *ld, const tg_rule_def *def, const tg_param_set *sets,
                     size_t n_sets, bool *set_used, tg_rule *out);

/* compile.c: the state of compiling one rule's expressions. Counted as if
** every macro use were expanded (docs/limits.md, "Macros"): a rule's trees
** hold at most TG_COMPILE_NODE_BUDGET nodes, of which macro uses add at
** most TG_MACRO_NODE_BUDGET, and all the rules of a load together at most
** TG_RULESET_NODE_BUDGET. A macro is compiled once per clause and its tree
** shared by every use (a DAG the evaluator computes once per row): the
** budgets bound what walks the tree whole (explain, the reproduce SQL, the
** load plan), the sharing what runs per row. */
#define TG_COMPILE_NODE_BUDGET 50000
#define TG_MACRO_NODE_BUDGET 5000
#define TG_RULESET_NODE_BUDGET 200000

/* A macro compiled in the current clause: its shared tree (NULL with done
** when it failed, its errors reported at the first use) and the number of
** nodes it stands for once expanded. */
typedef struct tg_macro_use {
    tg_expr *e;
    size_t size;
    bool done;
} tg_macro_use;

typedef enum tg_cmode { TG_CM_ROW, TG_CM_AGG } tg_cmode;

typedef struct tg_cstate {
    tg_rules_loader *ld;
    tg_rule *rule;
    const char *clause;             /* "where", "fail_when", ... for messages */
    tg_cmode mode;
    bool in_agg;                    /* inside an aggregate's argument */
    const char *stack[16];          /* macros being expanded */
    int depth;
    size_t budget;                  /* nodes left before "too large" */
    size_t macro_budget;            /* of those, nodes macro uses may still add */
    tg_macro_use *macro_uses;       /* per macro, outside and inside an aggregate's
                                       argument: reset for each clause (malloc'd) */
    tg_agg_use *aggs;               /* malloc'd while the rule compiles */
    size_t n_aggs, cap_aggs;
    const tg_field_def **trace_refs;
    size_t n_trace_refs, cap_trace_refs;
    char **collect_keys;            /* canonical argument texts of kept values */
    size_t n_collect, cap_collect;
} tg_cstate;

tg_expr *tg_compile_expr(tg_cstate *cs, const tg_ast *ast, tg_cmode mode, const char *clause);
/* compile_group.c: `evidence: {group_by: ...}` (columns and order_by may
** be NULL). */
void tg_compile_group_evidence(tg_cstate *cs, const tg_ynode *group_by, const tg_ynode *columns,
                               const tg_ynode *order_by);
/* A numeric or boolean expression check with a clear message. */
bool tg_compile_expect(tg_cstate *cs, const tg_expr *e, tg_type type, const char *what);
/* Build a compiled `a and b`. */
tg_expr *tg_compile_and(tg_cstate *cs, tg_expr *a, tg_expr *b);
/* Build a compiled `not a`. */
tg_expr *tg_compile_not(tg_cstate *cs, tg_expr *a);

#endif
