/*
** Internals of the evaluator: the per-rule state of one evaluation (row
** count, aggregate accumulators, kept values for percentiles, samples, the
** evidence heap, the scratch that makes string tests cheap) and the
** functions the files of engine/eval share.
**
** Row context runs once per row and must not allocate: values are small
** tagged structs (tg_rv) on the stack, strings stay pool ids, a string
** literal is resolved to its pool id once per evaluation, and the result
** of a regex / startswith / contains / `in` test is memoised per string id.
*/
#ifndef TG_EVAL_INT_H
#define TG_EVAL_INT_H

#include "eval.h"
#include "../rules/expr.h"

typedef enum tg_rv_type { TG_RV_NULL, TG_RV_BOOL, TG_RV_INT, TG_RV_FLOAT, TG_RV_SID, TG_RV_STR } tg_rv_type;

/* A value in row context. */
typedef struct tg_rv {
    tg_rv_type t;
    union {
        bool b;
        int64_t i;
        double f;
        int32_t sid;           /* a string of the trace's pool */
        const char *s;         /* a string constant of the rule */
    } u;
} tg_rv;

/* Scratch of one string-predicate node (expr->slot). */
typedef struct tg_slot {
    int32_t sid;               /* ==, != against a constant: its pool id (-1: absent) */
    int8_t *memo;              /* per pool id: 0 unknown, 1 false, 2 true */
    int32_t n_memo;            /* ids it covers */
} tg_slot;

/* The value of a shared macro tree (expr->memo) for the evaluation it was
** computed in: row context and aggregate context number their
** evaluations alike (tg_rule_state.memo_gen). */
typedef struct tg_memo {
    uint64_t gen;              /* 0: never computed */
    tg_rv rv;                  /* row context */
    tg_value v;                /* aggregate context */
} tg_memo;

/* Streaming state of one aggregate. */
typedef struct tg_acc {
    int64_t n;                 /* rows with a non-null argument */
    int64_t hits;              /* count(pred), ratio(pred) */
    int64_t isum;
    bool int_ok;               /* isum exact (integer argument, no overflow) */
    double fsum, mean, m2;     /* Welford for mean / stddev / cv */
    double min, max;
    int64_t imin, imax;
} tg_acc;

/* Values kept for percentiles (one array per distinct argument). */
typedef struct tg_kept {
    double *v;
    size_t n, cap;
    const tg_expr *arg;
    bool sorted;
} tg_kept;

typedef struct tg_heap_item {
    tg_rv key;
    size_t row;
} tg_heap_item;

typedef struct tg_rule_state {
    const tg_rule *rule;
    tg_rule_result *out;
    const tg_model *m;
    const tg_baseline_cmp *baseline;   /* NULL when none */
    tg_slot *slots;
    tg_memo *memos;                    /* one per shared macro tree (rule->n_memos) */
    uint64_t memo_gen;                 /* evaluations started: one per row test, per aggregate value */
    tg_acc *accs;
    tg_kept *kept;
    int64_t count;
    double *samples;
    size_t n_samples, cap_samples;
    /* evidence: the best `limit` rows by the order key */
    const tg_field_def *order_field;   /* NULL: source order */
    tg_expr order_expr;                /* reads order_field */
    bool order_desc;
    size_t limit;
    tg_heap_item *heap;
    size_t n_heap;
    struct tg_groups *groups;          /* grouped evidence (eval_group.c); NULL: rows */
    bool oom;
    /* A `matches` whose matcher hit a limit (docs/limits.md): the rule
    ** errors instead of reading the test as false. The first such node and
    ** the length of the string it was given. */
    const tg_expr *regex_limit;
    size_t regex_limit_len;
    /* The GPU side of iterations (eval_missing.c): of the rows that pass
    ** the where, those without GPU work and those with a period. */
    bool watch_gpu, watch_period;
    int64_t no_gpu, periods;
    uint64_t regex_budget;             /* matcher steps left to the rule's tests (TG_REGEX_STEP_BUDGET) */
    /* except (docs/rules.md, "Rows set aside"): the rows it set aside and
    ** their time (the source's duration), not counted */
    int64_t set_aside, set_aside_time;
    tg_expr duration_expr;             /* reads the source's duration; .field NULL: none */
} tg_rule_state;

/* The test of a row set aside by except, `where_kept and except`, built
** in *buf for the reproduce queries (eval_sql.c, eval_jq.c). */
static inline const tg_expr *tg_rule_set_aside_test(const tg_rule *r, tg_expr *buf)
{
    if (!r->where_kept) return r->except;
    *buf = (tg_expr){.op = TG_N_AND, .a = r->where_kept, .b = r->except, .type = TG_TY_BOOL, .slot = -1};
    return buf;
}

/* The where a row must pass to be seen at all, counted or set aside by
** except (NULL: every row). */
static inline const tg_expr *tg_rule_seen_where(const tg_rule *r)
{
    return r->except ? r->where_kept : r->where;
}

/* eval_expr.c */
tg_rv tg_eval_row(tg_rule_state *st, const char *row, const tg_expr *e);
bool tg_eval_row_test(tg_rule_state *st, const char *row, const tg_expr *e);
tg_value tg_eval_agg(tg_rule_state *st, const tg_value *agg_values, const tg_expr *e);
double tg_rv_num(tg_rv v);
/* baseline.STAT of the rule's stored baseline (null without one). */
tg_value tg_eval_baseline_value(const tg_rule_state *st, tg_baseline_stat stat, tg_unit unit);
bool tg_eval_slots_init(tg_rule_state *st);
void tg_eval_slots_free(tg_rule_state *st);

/* eval_agg.c */
void tg_acc_init(tg_rule_state *st);
void tg_acc_row(tg_rule_state *st, const char *row);
/* Final values of the rule's aggregates (arena array, one per agg). */
tg_value *tg_acc_finish(tg_rule_state *st, tg_arena *arena);
void tg_acc_free(tg_rule_state *st);

/* eval_evidence.c */
void tg_evidence_setup(tg_rule_state *st, size_t default_limit);
void tg_evidence_offer(tg_rule_state *st, const char *row, size_t i);
void tg_evidence_build(tg_rule_state *st, tg_arena *arena);
/* The query that selects the given rows (tables: tg_table_id): sqlite3 SQL
** for an export, a jq program for a Kineto trace. */
const char *tg_evidence_rows_query(const tg_model *m, const int *tables, const int64_t *rowids, size_t n,
                                   tg_arena *arena);

/* eval_group.c: grouped evidence (rule->n_group_by > 0). */
bool tg_group_setup(tg_rule_state *st);
void tg_group_row(tg_rule_state *st, const char *row, size_t i);
void tg_group_build(tg_rule_state *st, tg_arena *arena);
void tg_group_free(tg_rule_state *st);

/* eval_sql.c: on an nsys export, SQL printing the finding's values and
** then its cited rows (rows: indices into the source of the cited rows;
** for grouped evidence, n cited groups); NULL for other traces or on OOM. */
const char *tg_sql_reproduce(tg_rule_state *st, const size_t *rows, size_t n, tg_arena *arena);
/* The fields of e, each once, appended to list (at most cap); the columns
** of a cited row in a reproduce query: the source's fields named in lead,
** the evidence columns, then every field `where` reads (their number). */
void tg_eval_fields_of(const tg_expr *e, const tg_field_def **list, size_t *n, size_t cap);
size_t tg_eval_cited_fields(const tg_rule *r, const char *const *lead, size_t n_lead, const tg_field_def **cols,
                            size_t cap);
/* A part of a query written to its own malloc'd buffer (open_memstream);
** false when out of memory (then *buf is NULL). */
bool tg_eval_part(FILE **f, char **buf, size_t *len);
bool tg_eval_part_end(FILE **f, char **buf);
/* The values a reproduce query states after count, in the result's order
** (set_values, eval.c): put_agg(q, a) for each aggregate of the rule but a
** plain count (that is `count`), then put_trace(q, f) for each trace.FIELD
** read; q is the writer's own (eval_sql.c, eval_jq.c). */
void tg_eval_each_value(const tg_rule *r, void *q, void (*put_agg)(void *q, const tg_agg_use *a),
                        void (*put_trace)(void *q, const tg_field_def *f));
/* eval_jq.c: the same as a jq program, on a Kineto JSON trace. */
const char *tg_jq_reproduce(tg_rule_state *st, const size_t *rows, size_t n, tg_arena *arena);
/* The one of the two for the trace's query language (eval_evidence.c). */
const char *tg_values_reproduce(tg_rule_state *st, const size_t *rows, size_t n, tg_arena *arena);

/* eval_missing.c (docs/rules.md, "Missing data"): before the scan, true
** when the rule reads data the capture lacks (res says what, verdict error
** or skip); watch and row count what the scan must see for the check after
** it, which is true when the rows that passed cannot be judged. */
bool tg_missing_before(const tg_rule *r, const tg_model *m, const tg_eval_opts *opts, tg_rule_result *res,
                       tg_arena *arena);
void tg_missing_watch(tg_rule_state *st);
void tg_missing_row(tg_rule_state *st, const char *row);
bool tg_missing_after(tg_rule_state *st, const tg_eval_opts *opts, tg_arena *arena);

/* eval_render.c: the rule's message with each {expression} filled in. */
const char *tg_eval_render_message(tg_rule_state *st, const tg_value *agg_values, tg_arena *arena);

/* The jq functions every reproduce program of eval_jq.c opens with
** (tg_q: the percentile, as the evaluator computes it). */
const char *tg_eval_jq_funcs(void);
/* "SELECT <the q-quantile of v>" over `rows` ("iteration WHERE ..."),
** interpolated between the closest ranks as the evaluator does, to f. */
void tg_eval_sql_put_quantile(FILE *f, const char *v, const char *rows, double quantile);

#endif
