/*
** The compiled form of a rule set, shared by the compiler (compile*.c) and
** the evaluator (engine/eval): typed, resolved expression trees whose
** fields are bound to the columns of one source (fields.def), whose units
** are folded, whose regexes are compiled once, and whose aggregates are
** numbered slots the evaluator fills in its single pass over the source.
**
** A compiled rule set is read-only once tg_rules_load returns, so that
** several threads may evaluate it at the same time (`check --jobs N`):
** whatever an evaluation needs to remember (string ids of literals,
** memoised regex results) lives in the evaluation's own scratch, indexed
** by the `slot` numbers below.
*/
#ifndef TG_RULES_EXPR_H
#define TG_RULES_EXPR_H

#include "ast.h"
#include "rules.h"
#include "../model/source.h"

/* Statistics of the stored baseline a rule may read as baseline.NAME. */
#define TG_BASELINE_STATS(X) \
    X(VALUE,   "value",   METRIC, "baseline metric (median over the recorded runs)") \
    X(P50,     "p50",     METRIC, "same as baseline.value") \
    X(MEDIAN,  "median",  METRIC, "same as baseline.value") \
    X(CURRENT, "current", METRIC, "this trace's metric") \
    X(CHANGE,  "change",  RATIO,  "relative change (current - value) / value") \
    X(P_VALUE, "p_value", PLAIN,  "Mann-Whitney two-sided p-value") \
    X(N,       "n",       COUNT,  "samples in the baseline") \
    X(BAND_LO, "band_lo", METRIC, "low end of the run-to-run band (3+ runs)") \
    X(BAND_HI, "band_hi", METRIC, "high end of the run-to-run band (3+ runs)")

typedef enum tg_baseline_stat {
#define X(id, name, kind, doc) TG_BSTAT_##id,
    TG_BASELINE_STATS(X)
#undef X
    TG_BSTAT_COUNT
} tg_baseline_stat;

extern const char *const tg_baseline_stat_names[TG_BSTAT_COUNT];

typedef struct tg_expr tg_expr;
struct tg_expr {
    tg_node_kind op;
    tg_type type;
    tg_unit unit;
    tg_pos pos;
    tg_expr *a, *b;
    tg_value k;                 /* CONST (strings live in the set's arena) */
    int suffix;                 /* CONST written with a unit suffix: its index, else -1 */
    bool literal;               /* CONST written as a literal (not folded) */
    const char *param;          /* CONST read from params.NAME: the name */
    const tg_field_def *field;  /* FIELD, TRACE_REF */
    int agg;                    /* AGGREGATE: index into the rule's aggs */
    tg_baseline_stat stat;      /* BASELINE */
    tg_regex *re;               /* MATCHES: compiled once (engine/common/regex.c) */
    tg_value *list;             /* IN: the constant elements */
    size_t n_list;
    const char *list_name;      /* IN a named list: its name */
    int slot;                   /* string predicates: evaluation scratch slot; else -1 */
    int memo;                   /* the root of a macro's tree, shared by its uses: its value is
                                   computed once per row (per aggregate evaluation), kept in
                                   memo slot memo - 1 of the evaluation's scratch; else 0 */
};

/* One aggregate a rule uses (deduplicated by canonical text). */
typedef struct tg_agg_use {
    tg_agg_kind kind;
    tg_expr *arg;               /* row expression; NULL for plain count */
    const char *text;           /* canonical text: "sum(duration)" */
    const char *value_name;     /* name in the result's values: "sum_duration_ns" */
    tg_type type;
    tg_unit unit;
    int collect;                /* percentiles: index of the kept-values array; else -1 */
    const tg_field_def *field;  /* the argument is a plain field: that field */
} tg_agg_use;

/* Grouped evidence (docs/rule-language.md): one evidence row per distinct
** value of the group_by fields, its columns aggregates over the group's
** rows. At most TG_GROUP_KEYS fields. */
#define TG_GROUP_KEYS 4

typedef struct tg_group_col {
    const char *name;           /* the column's name in the evidence row */
    tg_expr *expr;              /* aggregate context over the group's rows; NULL: a group_by field */
    const tg_field_def *field;  /* the group_by field when expr is NULL */
} tg_group_col;

/* A message template: literal text and {expression} placeholders; a
** placeholder {expr|one|many} prints a word instead of the value: `one`
** when the value is 1, else `many` (docs/rule-language.md). */
typedef struct tg_msg_part {
    const char *text;           /* literal text, or the placeholder's expression text */
    tg_expr *expr;              /* NULL for literal text */
    const char *one, *many;     /* plural words, or NULL */
} tg_msg_part;

/* A guarded case of a message list: rendered when `when` holds and no
** case before it did (engine/eval/eval_render.c). */
typedef struct tg_msg_case {
    tg_expr *when;              /* aggregate context, a condition */
    const char *when_text, *text;
    tg_msg_part *parts;
    size_t n_parts;
} tg_msg_case;

typedef struct tg_param {
    const char *name;
    tg_value value;             /* strings in the set's arena */
    int suffix;                 /* unit suffix of the literal, -1 */
    tg_pos pos;
    bool from_cli;              /* overridden by --set */
    bool used;
} tg_param;

typedef struct tg_rule {
    tg_rule_info info;
    tg_pos pos;                 /* the rule's mapping in its defining file */
    tg_source_id source;
    tg_expr *where;             /* NULL: every row */
    tg_expr *fail_when;         /* NULL: the rule only measures (regression rules) */
    tg_expr *metric;            /* aggregate context; NULL when none */
    tg_expr *samples;           /* row expression; NULL when none */
    const char *where_text, *fail_when_text, *message_text;
    /* except (docs/rules.md, "Rows set aside"): where is where_kept and not
    ** except; where_kept (NULL: every row) is what the rows must pass before
    ** except sets them aside, counted, in the words except_one/except_many */
    tg_expr *except, *where_kept;
    const char *except_text, *except_one, *except_many, *except_note;
    tg_agg_use *aggs;
    size_t n_aggs;
    size_t n_value_aggs;        /* aggs[0..n_value_aggs): those of where/fail_when/message/metric,
                                   reported as the result's values; the rest serve only grouped
                                   evidence columns */
    int n_collect;              /* distinct kept-values arrays (percentiles) */
    tg_msg_part *message;       /* the template, or the last case of a list */
    size_t n_message;
    tg_msg_case *message_cases; /* the guarded cases before it */
    size_t n_message_cases;
    tg_param *params;
    size_t n_params;
    const tg_field_def *order_field;   /* evidence order; NULL = default */
    bool order_desc;
    size_t evidence_limit;      /* 0 = evaluation default; SIZE_MAX = cite no rows */
    const tg_field_def **columns;      /* evidence fields */
    size_t n_columns;
    const tg_field_def *group_by[TG_GROUP_KEYS];   /* grouped evidence; n_group_by 0: rows */
    size_t n_group_by;
    tg_group_col *group_cols;   /* the group_by fields, then the aggregate columns */
    size_t n_group_cols;
    int group_order;            /* the column that orders the groups (order_desc says how) */
    const tg_field_def **trace_refs;   /* trace.FIELD read by fail_when/message/metric */
    size_t n_trace_refs;
    int n_slots;                /* string-predicate scratch slots */
    int n_memos;                /* shared macro trees (tg_expr.memo) */
} tg_rule;

struct tg_ruleset {
    tg_arena *arena;
    tg_rule *rules;
    size_t n;
    tg_regex **regexes;         /* freed with the set (malloc'd array) */
    size_t n_regexes;
    const char **files;         /* the rule files read, in order (arena) */
    size_t n_files;
    struct tg_ruleset_list {    /* the named lists of every file (arena) */
        const char *name;
        const tg_value *items;
        size_t n;
    } *lists;
    size_t n_lists;
};

/* Constant operations shared by the folder and the evaluator's aggregate
** context (fold.c). Null operands give null (comparisons: false). */
tg_value tg_value_arith(tg_node_kind op, tg_value a, tg_value b, tg_unit result_unit);
bool tg_value_compare(tg_node_kind op, tg_value a, tg_value b);
/* The one comparison both contexts use: the three-way order of two
** numbers (false in *ok when either is NaN: NaN compares with nothing),
** and whether comparison op holds for an order c (<0, 0, >0). */
int tg_num_order(double x, double y, bool *ok);
bool tg_cmp_holds(tg_node_kind op, int c);
/* `in`: a is one of list (strings by content, numbers by value). */
bool tg_value_in(tg_value a, const tg_value *list, size_t n);
/* Numeric value as double (NaN for null and non-numbers). */
double tg_value_num(tg_value v);
bool tg_value_truthy(tg_value v);

/* The compiled tree, one node per line, indented (explain.c). */
void tg_expr_print(char **buf, size_t *len, size_t *cap, const tg_rule *r, const tg_expr *e, int indent);

#endif
