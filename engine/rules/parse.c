/*
** The expression parser: a Pratt parser over the tokens of lex.c, with the
** binding powers of nodes.def (or < and < not < comparisons < + - < * / <
** unary minus). The language it accepts, in EBNF ({x}: x repeated, zero or
** more times; [x]: x optional; "...": a token; ? ... ?: said in words).
** docs/rules.md holds the same grammar, and tools/rules-doc.sh --check
** (the `docs` test) compares the two:
**
**   expression  = disjunction ;
**   disjunction = conjunction { "or" conjunction } ;
**   conjunction = comparison { "and" comparison } ;
**   comparison  = sum [ comparator sum ] ;
**   comparator  = "==" | "!=" | "<" | "<=" | ">" | ">="
**               | [ "not" ] ( "in" | "matches" | "startswith" | "contains" ) ;
**   sum         = product { ( "+" | "-" ) product } ;
**   product     = prefix { ( "*" | "/" ) prefix } ;
**   prefix      = "not" comparison | "-" prefix | primary ;
**   primary     = number | string | "null" | "true" | "false"
**               | list | call | name | "(" expression ")" ;
**   list        = "[" [ expression { "," expression } ] "]" ;
**   call        = identifier "(" [ expression { "," expression } ] ")" ;
**   name        = identifier [ "." identifier ] ;
**   number      = digits [ "." digits ] [ ( "e" | "E" ) [ "+" | "-" ] digits ] [ unit ] ;
**   digits      = digit { digit } ;
**   unit        = ? a suffix of engine/common/units.def: ns us ms s min h B KB ... % B/s ... TB/s ? ;
**   string      = '"' { ? a character but '"' and "\" ? | escape } '"'
**               | "'" { ? a character but "'" and "\" ? | escape } "'" ;
**   escape      = "\" ? any character; \n \t \\ \" \' are decoded, others kept as written ? ;
**   identifier  = ( letter | "_" ) { letter | digit | "_" } ;
**
** How the productions map onto the code: parse_bp is disjunction down to
** prefix, one loop for all infix levels (an infix operator binds when its
** power exceeds the caller's, so + - * / and or associate to the left);
** parse_primary is prefix and primary; parse_name is call and name;
** parse_items the bracketed lists of list and call; lex.c the tokens
** (number, string, identifier). Where the grammar is ambiguous the parser
** takes the longest operand: `not` applies to the whole comparison after
** it (`not a == b` is `not (a == b)`), wherever it starts an operand
** (`a + not b < c` is `a + not (b < c)`). A comparator's absent second
** operand makes `a < b < c` an error rather than a surprise. `x not in L`
** (and `not matches`, `not startswith`, `not contains`) is read as
** `not (x in L)`. Whitespace separates tokens and is otherwise ignored; an
** identifier is none of the keywords not, null, true, false, and, or, in,
** matches, startswith, contains. What a name or a call may refer to, and
** where null and lists may stand, is the compiler's business (compile.c).
**
** Every node records the position of its first character through the
** scalar's position map, so later stages report errors at the exact
** column. The first syntax error of an expression ends its parse; the
** caller goes on with the next expression, so one run reports them all.
** tg_ast_text prints a tree back as canonical text (value names, explain).
*/
#include "ast.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_NESTING 200
#define NOT_BP 30
#define NEG_BP 70

typedef struct parser {
    tg_rules_ctx *ctx;
    const tg_srcmap *map;
    tg_lexer lx;
    tg_token tok;
    int depth;
    bool failed;
} parser;

static void advance(parser *p)
{
    p->tok = tg_lex_next(&p->lx);
    if (p->tok.kind == TG_TK_ERROR) p->failed = true;
}

static tg_pos pos_at(const parser *p, size_t off)
{
    return p->map->pos[off <= p->map->len ? off : p->map->len];
}

static void syntax_error(parser *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void syntax_error(parser *p, const char *fmt, ...)
{
    if (p->failed) return;
    va_list ap;
    va_start(ap, fmt);
    tg_rules_vmsg(p->ctx, TG_DIAG_ERROR, pos_at(p, p->tok.off), fmt, ap);
    va_end(ap);
    p->failed = true;
}

/* How the current token reads in a message. */
static const char *tok_text(parser *p)
{
    if (p->tok.kind == TG_TK_EOF) return "the end of the expression";
    size_t len = p->tok.len > 40 ? 40 : p->tok.len;
    char *s = tg_arena_printf(p->ctx->arena, "'%.*s'", (int)len, p->map->text + p->tok.off);
    return s ? s : "a token";
}

static tg_ast *new_node(parser *p, tg_node_kind kind, size_t off)
{
    tg_ast *n = tg_arena_alloc(p->ctx->arena, sizeof *n);
    if (!n) {
        syntax_error(p, "out of memory");
        return NULL;
    }
    n->kind = kind;
    n->off = off;
    n->pos = pos_at(p, off);
    n->suffix = -1;
    return n;
}

static tg_ast *parse_bp(parser *p, int min_bp);

/* Comma-separated expressions up to `close`; the opening token is consumed. */
static bool parse_items(parser *p, tg_ast *n, tg_tok_kind close, const char *what)
{
    tg_ast **items = NULL;
    size_t count = 0, cap = 0;
    if (p->tok.kind != close) {
        for (;;) {
            tg_ast *e = parse_bp(p, 0);
            if (!e || !TG_PUSH(items, count, cap, e)) {
                free(items);
                return false;
            }
            if (p->tok.kind == TG_TK_COMMA) {
                advance(p);
                continue;
            }
            break;
        }
    }
    if (p->tok.kind != close) {
        syntax_error(p, "expected ',' or '%s' in %s, found %s", close == TG_TK_RPAREN ? ")" : "]",
                     what, tok_text(p));
        free(items);
        return false;
    }
    advance(p);
    n->n_items = count;
    if (count) {
        n->items = tg_arena_alloc(p->ctx->arena, count * sizeof *items);
        if (n->items) memcpy(n->items, items, count * sizeof *items);
    }
    free(items);
    return !count || n->items;
}

static tg_ast *parse_name(parser *p)
{
    tg_token id = p->tok;
    advance(p);
    if (p->tok.kind == TG_TK_LPAREN) {
        tg_ast *n = new_node(p, TG_N_CALL, id.off);
        if (!n) return NULL;
        n->name = id.str;
        advance(p);
        return parse_items(p, n, TG_TK_RPAREN, "the arguments") ? n : NULL;
    }
    tg_ast *n = new_node(p, TG_N_NAME, id.off);
    if (!n) return NULL;
    n->name = id.str;
    if (p->tok.kind == TG_TK_DOT) {
        advance(p);
        if (p->tok.kind != TG_TK_IDENT) {
            syntax_error(p, "expected a name after '%s.', found %s", id.str, tok_text(p));
            return NULL;
        }
        n->member = p->tok.str;
        advance(p);
        if (p->tok.kind == TG_TK_DOT) {
            syntax_error(p, "names have at most one dot ('params.x', 'trace.duration')");
            return NULL;
        }
    }
    return n;
}

static tg_ast *parse_primary(parser *p)
{
    tg_token t = p->tok;
    tg_ast *n;
    switch (t.kind) {
    case TG_TK_NUMBER:
        if (!(n = new_node(p, TG_N_NUMBER, t.off))) return NULL;
        n->num = t.num;
        n->is_int = t.is_int;
        n->ival = t.ival;
        n->unit = t.unit;
        n->suffix = t.suffix;
        advance(p);
        return n;
    case TG_TK_STRING:
        if (!(n = new_node(p, TG_N_STRING, t.off))) return NULL;
        n->name = t.str;
        advance(p);
        return n;
    case TG_TK_NULL:
    case TG_TK_TRUE:
    case TG_TK_FALSE:
        if (!(n = new_node(p, t.kind == TG_TK_NULL ? TG_N_NULL_LIT : TG_N_BOOL_LIT, t.off))) return NULL;
        n->bval = t.kind == TG_TK_TRUE;
        advance(p);
        return n;
    case TG_TK_IDENT:
        return parse_name(p);
    case TG_TK_LPAREN: {
        advance(p);
        tg_ast *e = parse_bp(p, 0);
        if (!e) return NULL;
        if (p->tok.kind != TG_TK_RPAREN) {
            syntax_error(p, "expected ')' to close the '(' at column %d, found %s",
                         pos_at(p, t.off).col, tok_text(p));
            return NULL;
        }
        advance(p);
        return e;
    }
    case TG_TK_LBRACK:
        if (!(n = new_node(p, TG_N_LIST, t.off))) return NULL;
        advance(p);
        return parse_items(p, n, TG_TK_RBRACK, "the list") ? n : NULL;
    case TG_TK_NOT:
        if (!(n = new_node(p, TG_N_NOT, t.off))) return NULL;
        advance(p);
        n->a = parse_bp(p, NOT_BP);
        return n->a ? n : NULL;
    case TG_TK_OP:
        if (t.op == TG_N_SUB) {
            if (!(n = new_node(p, TG_N_NEG, t.off))) return NULL;
            advance(p);
            n->a = parse_bp(p, NEG_BP);
            return n->a ? n : NULL;
        }
        syntax_error(p, "expected an expression before %s", tok_text(p));
        return NULL;
    case TG_TK_ERROR:
        p->failed = true;
        return NULL;
    default:
        syntax_error(p, "expected an expression, found %s", tok_text(p));
        return NULL;
    }
}

/* `not` followed by a keyword comparison: `x not in L`. */
static bool peek_negated_cmp(parser *p, tg_node_kind *op)
{
    if (p->tok.kind != TG_TK_NOT) return false;
    tg_lexer save = p->lx;
    tg_token next = tg_lex_next(&p->lx);
    p->lx = save;
    if (next.kind == TG_TK_OP && (next.op == TG_N_IN || next.op == TG_N_MATCHES ||
                                  next.op == TG_N_STARTSWITH || next.op == TG_N_CONTAINS)) {
        *op = next.op;
        return true;
    }
    return false;
}

static tg_ast *parse_bp(parser *p, int min_bp)
{
    if (++p->depth > MAX_NESTING) {
        syntax_error(p, "expression nested more than %d levels deep", MAX_NESTING);
        return NULL;
    }
    tg_ast *lhs = parse_primary(p);
    bool lhs_is_cmp = false;
    while (lhs && !p->failed) {
        tg_node_kind op;
        bool negated = peek_negated_cmp(p, &op);
        if (!negated) {
            if (p->tok.kind != TG_TK_OP) break;
            op = p->tok.op;
        }
        int bp = tg_node_binding_power[op];
        if (bp <= min_bp) break;
        bool is_cmp = tg_node_classes[op] == TG_NC_CMP;
        if (is_cmp && lhs_is_cmp) {
            syntax_error(p, "comparisons do not chain; combine them with 'and'");
            return NULL;
        }
        size_t op_off = p->tok.off;
        advance(p);
        if (negated) advance(p);
        tg_ast *n = new_node(p, op, lhs->off);
        if (!n) return NULL;
        n->a = lhs;
        n->b = parse_bp(p, bp);
        if (!n->b) {
            if (!p->failed) syntax_error(p, "expected an operand after '%s'", tg_node_spelling[op]);
            return NULL;
        }
        (void)op_off;
        if (negated) {
            tg_ast *neg = new_node(p, TG_N_NOT, lhs->off);
            if (!neg) return NULL;
            neg->a = n;
            n = neg;
        }
        lhs = n;
        lhs_is_cmp = is_cmp;
    }
    p->depth--;
    return p->failed ? NULL : lhs;
}

tg_ast *tg_parse_expr(tg_rules_ctx *ctx, const tg_srcmap *map)
{
    parser p = {.ctx = ctx, .map = map};
    tg_lex_init(&p.lx, ctx, map);
    advance(&p);
    if (p.tok.kind == TG_TK_EOF) {
        syntax_error(&p, "empty expression");
        return NULL;
    }
    tg_ast *e = parse_bp(&p, 0);
    if (e && p.tok.kind != TG_TK_EOF) {
        if (p.tok.kind == TG_TK_RPAREN) syntax_error(&p, "unbalanced ')'");
        else syntax_error(&p, "unexpected %s after a complete expression", tok_text(&p));
        return NULL;
    }
    return p.failed ? NULL : e;
}

/* ------------------------------------------------------------- printing */

typedef struct sbuf {
    char *s;
    size_t n, cap;
} sbuf;

static void put(sbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void put(sbuf *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char tmp[256];
    int n = vsnprintf(tmp, sizeof tmp, fmt, ap);
    va_end(ap);
    if (n < 0) return;
    size_t len = (size_t)n < sizeof tmp ? (size_t)n : sizeof tmp - 1;
    if (b->n + len + 1 > b->cap) {
        size_t cap = (b->n + len + 1) * 2;
        char *s = realloc(b->s, cap);
        if (!s) return;
        b->s = s;
        b->cap = cap;
    }
    memcpy(b->s + b->n, tmp, len);
    b->n += len;
    b->s[b->n] = 0;
}

static int prec_of(const tg_ast *n)
{
    if (n->kind == TG_N_NOT) return NOT_BP;
    if (n->kind == TG_N_NEG) return NEG_BP;
    int bp = tg_node_binding_power[n->kind];
    return bp ? bp : 100;
}

static void print_ast(sbuf *b, const tg_ast *n);

static void print_child(sbuf *b, const tg_ast *child, int parent_prec, bool right)
{
    int cp = prec_of(child);
    bool paren = cp < parent_prec || (right && cp == parent_prec && cp < 100);
    if (paren) put(b, "(");
    print_ast(b, child);
    if (paren) put(b, ")");
}

static void print_ast(sbuf *b, const tg_ast *n)
{
    switch (n->kind) {
    case TG_N_NULL_LIT: put(b, "null"); break;
    case TG_N_BOOL_LIT: put(b, "%s", n->bval ? "true" : "false"); break;
    case TG_N_NUMBER:
        if (n->suffix >= 0)
            put(b, "%.15g%s", n->num / tg_unit_suffixes[n->suffix].scale, tg_unit_suffixes[n->suffix].suffix);
        else if (n->is_int)
            put(b, "%lld", (long long)n->ival);
        else
            put(b, "%.15g", n->num);
        break;
    case TG_N_STRING:
        put(b, "\"");
        for (const char *s = n->name; *s; s++) {
            if (*s == '"' || *s == '\\') put(b, "\\%c", *s);
            else put(b, "%c", *s);
        }
        put(b, "\"");
        break;
    case TG_N_NAME:
        put(b, "%s%s%s", n->name, n->member ? "." : "", n->member ? n->member : "");
        break;
    case TG_N_CALL:
    case TG_N_LIST:
        put(b, "%s%s", n->kind == TG_N_CALL ? n->name : "", n->kind == TG_N_CALL ? "(" : "[");
        for (size_t i = 0; i < n->n_items; i++) {
            if (i) put(b, ", ");
            print_ast(b, n->items[i]);
        }
        put(b, "%s", n->kind == TG_N_CALL ? ")" : "]");
        break;
    case TG_N_NOT:
        put(b, "not ");
        print_child(b, n->a, NOT_BP, false);
        break;
    case TG_N_NEG:
        put(b, "-");
        print_child(b, n->a, NEG_BP, false);
        break;
    default:
        if (n->a && n->b) {
            int bp = prec_of(n);
            print_child(b, n->a, bp, false);
            put(b, " %s ", tg_node_spelling[n->kind]);
            print_child(b, n->b, bp, true);
        }
        break;
    }
}

const char *tg_ast_text(tg_arena *a, const tg_ast *n)
{
    sbuf b = {0};
    print_ast(&b, n);
    const char *out = tg_arena_strdup(a, b.s ? b.s : "");
    free(b.s);
    return out;
}
