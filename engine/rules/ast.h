/*
** Internals of the rule front end: the node kinds of nodes.def, the tokens
** of the expression lexer (lex.c), the abstract syntax tree the parser
** (parse.c) builds, and the position map that turns an offset inside a
** YAML scalar into file:line:column (yaml_doc.c computes it).
**
** Every AST node carries the position of its first character in the rule
** file, so that the compiler (compile.c) can point at the offending text
** the way a C compiler does. Everything is allocated from the arena of the
** rule set being loaded.
*/
#ifndef TG_RULES_AST_H
#define TG_RULES_AST_H

#include "../common/common.h"
#include "../common/value.h"
#include "../common/units.h"
#include "../common/yaml.h"
#include "rules.h"

typedef enum tg_node_kind {
#define TG_NODE(id, spelling, cls, bp) TG_N_##id,
#include "nodes.def"
#undef TG_NODE
    TG_N_COUNT
} tg_node_kind;

typedef enum tg_node_class { TG_NC_LIT, TG_NC_REF, TG_NC_UNARY, TG_NC_LOGIC,
                             TG_NC_CMP, TG_NC_ARITH, TG_NC_AGG } tg_node_class;

extern const char *const tg_node_spelling[TG_N_COUNT];
extern const tg_node_class tg_node_classes[TG_N_COUNT];
extern const int tg_node_binding_power[TG_N_COUNT];

typedef enum tg_agg_kind {
#define TG_AGG(id, name, arg, result, q, doc) TG_AGG_##id,
#include "aggregates.def"
#undef TG_AGG
    TG_AGG_COUNT_KINDS
} tg_agg_kind;

typedef enum tg_agg_arg { TG_AGG_ARG_NONE, TG_AGG_ARG_OPT_PRED, TG_AGG_ARG_PRED, TG_AGG_ARG_NUM } tg_agg_arg;
typedef enum tg_agg_result { TG_AGG_RES_COUNT, TG_AGG_RES_SAME, TG_AGG_RES_FLOAT,
                             TG_AGG_RES_PLAIN, TG_AGG_RES_RATIO } tg_agg_result;

typedef struct tg_agg_def {
    const char *name;
    tg_agg_arg arg;
    tg_agg_result result;
    int quantile;
    const char *doc;
} tg_agg_def;

extern const tg_agg_def tg_agg_defs[TG_AGG_COUNT_KINDS];
int tg_agg_find(const char *name);          /* -1 when unknown */


/* ------------------------------------------------------------ positions */

/* A text the rule expressions come from (tg_src, common/yaml.h): a rule
** file held in memory while the set loads, or the argument of a --set.
** Diagnostics take their offending line from it. */

/* Position of every byte offset (0..len) of a scalar's value. */
typedef struct tg_srcmap {
    const tg_src *src;
    const char *text;          /* the value (decoded scalar) */
    size_t len;
    tg_pos *pos;               /* len + 1 entries */
} tg_srcmap;

/* A map where value offset k sits at column col0 + k of line `line`
** (single-line texts such as --set arguments and tests). */
tg_srcmap *tg_srcmap_flat(tg_arena *a, const tg_src *src, const char *text, int line, int col0);

/* --------------------------------------------------------- diagnostics */

/* Shared state of one load: where errors go and which texts are known. */
typedef struct tg_rules_ctx {
    tg_arena *arena;
    tg_diag *diag;
    tg_src **srcs;
    size_t n_srcs, cap_srcs;
} tg_rules_ctx;

/* Record a message at pos, with the offending line when pos's file is one
** of ctx's texts. Errors carry status TG_EUSAGE. */
void tg_rules_msg(tg_rules_ctx *ctx, tg_diag_level level, tg_pos pos, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
void tg_rules_vmsg(tg_rules_ctx *ctx, tg_diag_level level, tg_pos pos, const char *fmt, va_list ap)
    __attribute__((format(printf, 4, 0)));
#define tg_rules_error(ctx, pos, ...) tg_rules_msg((ctx), TG_DIAG_ERROR, (pos), __VA_ARGS__)
#define tg_rules_warning(ctx, pos, ...) tg_rules_msg((ctx), TG_DIAG_WARNING, (pos), __VA_ARGS__)

/* tg_suggest, the "did you mean" of error messages: common/vocab.h. */

/* ---------------------------------------------------------------- lexer */

typedef enum tg_tok_kind {
    TG_TK_EOF, TG_TK_ERROR, TG_TK_NUMBER, TG_TK_STRING, TG_TK_IDENT,
    TG_TK_OP,                  /* an operator or keyword operator: tok.op */
    TG_TK_LPAREN, TG_TK_RPAREN, TG_TK_LBRACK, TG_TK_RBRACK, TG_TK_COMMA, TG_TK_DOT,
    TG_TK_NOT, TG_TK_NULL, TG_TK_TRUE, TG_TK_FALSE
} tg_tok_kind;

typedef struct tg_token {
    tg_tok_kind kind;
    size_t off, len;           /* byte range in the scalar's value */
    tg_node_kind op;           /* TG_TK_OP */
    /* TG_TK_NUMBER: the value after the unit's scale */
    double num;
    bool is_int;
    int64_t ival;
    tg_unit unit;
    int suffix;                /* index into tg_unit_suffixes, -1 = none */
    const char *str;           /* TG_TK_STRING (unescaped) / TG_TK_IDENT (arena) */
} tg_token;

typedef struct tg_lexer {
    tg_rules_ctx *ctx;
    const tg_srcmap *map;
    size_t at;
    bool failed;               /* an error was reported: stop */
} tg_lexer;

void tg_lex_init(tg_lexer *lx, tg_rules_ctx *ctx, const tg_srcmap *map);
/* Next token; on a lexical error reports it and returns TG_TK_ERROR. */
tg_token tg_lex_next(tg_lexer *lx);
/* Parse a whole text as one number literal with an optional unit and sign
** (the values of params and --set). False when it is not one, or when its
** value is not a finite double (1e400, 1e300h, more than 400 characters):
** tg_lex_number_out_of_range tells that case apart for messages. */
bool tg_lex_number_literal(const char *text, double *num, bool *is_int, int64_t *ival,
                           tg_unit *unit);
bool tg_lex_number_out_of_range(const char *text, tg_unit *unit);

/* ------------------------------------------------------------------ AST */

typedef struct tg_ast {
    tg_node_kind kind;
    tg_pos pos;
    size_t off;                /* offset in its text (for explain excerpts) */
    struct tg_ast *a, *b;      /* operands */
    struct tg_ast **items;     /* LIST elements, CALL arguments */
    size_t n_items;
    const char *name;          /* NAME / CALL: identifier; STRING: value */
    const char *member;        /* NAME: the part after the dot, or NULL */
    bool bval;                 /* BOOL_LIT */
    double num;                /* NUMBER: value in base units */
    bool is_int;
    int64_t ival;
    tg_unit unit;
    int suffix;                /* NUMBER: unit suffix as written, -1 = none */
} tg_ast;

/* Parse a whole expression; NULL (after reporting) on a syntax error. */
tg_ast *tg_parse_expr(tg_rules_ctx *ctx, const tg_srcmap *map);
/* The expression as canonical text ("sum(end - start)"), arena-allocated. */
const char *tg_ast_text(tg_arena *a, const tg_ast *n);

#endif
