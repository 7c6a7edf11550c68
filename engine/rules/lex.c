/*
** The expression lexer: turns the text of a `where`, `fail_when`, macro or
** message placeholder into tokens. Numbers take their unit suffix from
** units.def and are scaled to base units here (64KB -> 64000 bytes, 20% ->
** 0.2), so the rest of the front end never sees a suffix again except for
** printing. Operators and keyword operators come from nodes.def.
**
** Errors name the offending text and suggest the likely intent (`=` for
** `==`, `&&` for `and`, `kb` for `KB`).
*/
#include "ast.h"

#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

void tg_lex_init(tg_lexer *lx, tg_rules_ctx *ctx, const tg_srcmap *map)
{
    memset(lx, 0, sizeof *lx);
    lx->ctx = ctx;
    lx->map = map;
}

static tg_pos pos_at(const tg_lexer *lx, size_t off)
{
    return lx->map->pos[off <= lx->map->len ? off : lx->map->len];
}

static tg_token lex_error(tg_lexer *lx, size_t off, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static tg_token lex_error(tg_lexer *lx, size_t off, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    tg_rules_vmsg(lx->ctx, TG_DIAG_ERROR, pos_at(lx, off), fmt, ap);
    va_end(ap);
    lx->failed = true;
    return (tg_token){.kind = TG_TK_ERROR, .off = off};
}

static int find_suffix(const char *s, size_t n)
{
    for (size_t i = 0; i < tg_unit_suffix_count; i++)
        if (strlen(tg_unit_suffixes[i].suffix) == n && memcmp(tg_unit_suffixes[i].suffix, s, n) == 0)
            return (int)i;
    return -1;
}

/* The longest number literal read; longer ones (hundreds of digits) are
** refused as out of range rather than cut (a cut "0.000...1" reads 0). */
#define TG_NUMBER_MAX_LEN 400

/* digits [. digits] [e [+-] digits], then an optional unit suffix. Returns
** the length consumed (0: not a number); *suffix_len reports the suffix.
** *num is NaN when the literal is longer than TG_NUMBER_MAX_LEN and
** infinite when it overflows a double (1e400). */
static size_t scan_number(const char *s, size_t len, double *num, size_t *suffix_start,
                          size_t *suffix_len)
{
    size_t i = 0;
    while (i < len && isdigit((unsigned char)s[i])) i++;
    if (i < len && s[i] == '.' && i + 1 < len && isdigit((unsigned char)s[i + 1])) {
        i++;
        while (i < len && isdigit((unsigned char)s[i])) i++;
    }
    if (i == 0) return 0;
    if (i < len && (s[i] == 'e' || s[i] == 'E')) {
        size_t j = i + 1;
        if (j < len && (s[j] == '+' || s[j] == '-')) j++;
        if (j < len && isdigit((unsigned char)s[j])) {
            while (j < len && isdigit((unsigned char)s[j])) j++;
            i = j;
        }
    }
    char buf[TG_NUMBER_MAX_LEN + 1];
    if (i < sizeof buf) {
        memcpy(buf, s, i);
        buf[i] = 0;
        *num = strtod(buf, NULL);
    } else {
        *num = NAN;
    }
    *suffix_start = i;
    if (i < len && s[i] == '%') {
        i++;
    } else {
        while (i < len && (isalpha((unsigned char)s[i]) || s[i] == '_')) i++;
        /* a rate: a size suffix per second (10GB/s), never the start of
        ** a division by a name (64KB/steady_iterations) */
        size_t k = i + 2;
        if (i > *suffix_start && k <= len && s[i] == '/' && s[i + 1] == 's' &&
            (k == len || !(isalnum((unsigned char)s[k]) || s[k] == '_' || s[k] == '.')) &&
            find_suffix(s + *suffix_start, k - *suffix_start) >= 0)
            i = k;
    }
    *suffix_len = i - *suffix_start;
    return i;
}

static void set_number(tg_token *t, double num, int suffix)
{
    t->suffix = suffix;
    t->unit = suffix >= 0 ? tg_unit_suffixes[suffix].unit : TG_UNIT_NONE;
    double v = suffix >= 0 ? num * tg_unit_suffixes[suffix].scale : num;
    /* Ratios stay fractional; whole values below 2^53 become integers. */
    double r = nearbyint(v);
    if (t->unit != TG_UNIT_RATIO && fabs(v - r) < 1e-9 * (fabs(v) > 1 ? fabs(v) : 1) && fabs(r) < 9007199254740992.0) {
        t->is_int = true;
        t->ival = (int64_t)r;
        t->num = r;
    } else {
        t->num = v;
    }
}

static tg_token lex_number(tg_lexer *lx, size_t at)
{
    const char *s = lx->map->text + at;
    size_t len = lx->map->len - at, sfx_start, sfx_len;
    double num;
    size_t n = scan_number(s, len, &num, &sfx_start, &sfx_len);
    tg_token t = {.kind = TG_TK_NUMBER, .off = at, .len = n, .suffix = -1};
    if (sfx_len) {
        int k = find_suffix(s + sfx_start, sfx_len);
        if (k < 0) {
            const char *names[65] = {0};
            size_t nn = 0;
            for (size_t i = 0; i < tg_unit_suffix_count && nn < 64; i++) names[nn++] = tg_unit_suffixes[i].suffix;
            char word[32], list[256];
            size_t wl = sfx_len < sizeof word - 1 ? sfx_len : sizeof word - 1;
            memcpy(word, s + sfx_start, wl);
            word[wl] = 0;
            const char *hint = tg_suggest(word, names, nn);
            if (hint)
                return lex_error(lx, at + sfx_start, "unknown unit '%s' in '%.*s' (did you mean '%s'?)", word,
                                 (int)n, s, hint);
            return lex_error(lx, at + sfx_start, "unknown unit '%s' in '%.*s' (units: %s)", word, (int)n, s,
                             tg_vocab_join(names, list, sizeof list));
        }
        set_number(&t, num, k);
    } else {
        set_number(&t, num, -1);
    }
    if (!isfinite(t.num))   /* 1e400, 1e300h, a 500-digit literal: never inf or NaN */
        return lex_error(lx, at, "the number '%.*s' is out of range (%s)", n > 40 ? 40 : (int)n, s,
                         isnan(t.num) ? "longer than 400 characters" : "it overflows a double");
    lx->at = at + n;
    return t;
}

static tg_token lex_string(tg_lexer *lx, size_t at)
{
    const char *s = lx->map->text;
    char quote = s[at];
    size_t i = at + 1, len = lx->map->len;
    /* The unescaped value is never longer than the raw text. */
    char *out = tg_arena_alloc(lx->ctx->arena, len - at + 1);
    if (!out) return lex_error(lx, at, "out of memory");
    size_t o = 0;
    while (i < len && s[i] != quote) {
        if (s[i] == '\\' && i + 1 < len) {
            char c = s[i + 1];
            switch (c) {
            case 'n': out[o++] = '\n'; break;
            case 't': out[o++] = '\t'; break;
            case '\\': case '"': case '\'': out[o++] = c; break;
            default:
                /* Keep unknown escapes as written: regexes need \. and \d. */
                out[o++] = '\\';
                out[o++] = c;
                break;
            }
            i += 2;
        } else {
            out[o++] = s[i++];
        }
    }
    if (i >= len) return lex_error(lx, at, "unterminated string: missing closing %c", quote);
    out[o] = 0;
    lx->at = i + 1;
    return (tg_token){.kind = TG_TK_STRING, .off = at, .len = i + 1 - at, .str = out, .suffix = -1};
}

static tg_token lex_word(tg_lexer *lx, size_t at)
{
    const char *s = lx->map->text;
    size_t i = at;
    while (i < lx->map->len && (isalnum((unsigned char)s[i]) || s[i] == '_')) i++;
    size_t n = i - at;
    lx->at = i;
    tg_token t = {.kind = TG_TK_IDENT, .off = at, .len = n, .suffix = -1};
    static const struct { const char *word; tg_tok_kind kind; } kw[] = {
        {"not", TG_TK_NOT}, {"null", TG_TK_NULL}, {"true", TG_TK_TRUE}, {"false", TG_TK_FALSE},
    };
    for (size_t k = 0; k < sizeof kw / sizeof *kw; k++)
        if (strlen(kw[k].word) == n && memcmp(kw[k].word, s + at, n) == 0) {
            t.kind = kw[k].kind;
            return t;
        }
    for (int k = 0; k < TG_N_COUNT; k++) {
        tg_node_class c = tg_node_classes[k];
        if ((c == TG_NC_LOGIC || c == TG_NC_CMP) && isalpha((unsigned char)tg_node_spelling[k][0]) &&
            strlen(tg_node_spelling[k]) == n && memcmp(tg_node_spelling[k], s + at, n) == 0) {
            t.kind = TG_TK_OP;
            t.op = (tg_node_kind)k;
            return t;
        }
    }
    t.str = tg_arena_strndup(lx->ctx->arena, s + at, n);
    return t;
}

static tg_token op_token(tg_lexer *lx, size_t at, size_t len, tg_node_kind op)
{
    lx->at = at + len;
    return (tg_token){.kind = TG_TK_OP, .off = at, .len = len, .op = op, .suffix = -1};
}

static tg_token punct(tg_lexer *lx, size_t at, tg_tok_kind kind)
{
    lx->at = at + 1;
    return (tg_token){.kind = kind, .off = at, .len = 1, .suffix = -1};
}

tg_token tg_lex_next(tg_lexer *lx)
{
    if (lx->failed) return (tg_token){.kind = TG_TK_ERROR, .off = lx->at};
    const char *s = lx->map->text;
    size_t len = lx->map->len, i = lx->at;
    while (i < len && isspace((unsigned char)s[i])) i++;
    if (i >= len) {
        lx->at = len;
        return (tg_token){.kind = TG_TK_EOF, .off = len, .suffix = -1};
    }
    char c = s[i], d = i + 1 < len ? s[i + 1] : 0;
    if (isdigit((unsigned char)c)) return lex_number(lx, i);
    if (c == '"' || c == '\'') return lex_string(lx, i);
    if (isalpha((unsigned char)c) || c == '_') return lex_word(lx, i);
    switch (c) {
    case '(': return punct(lx, i, TG_TK_LPAREN);
    case ')': return punct(lx, i, TG_TK_RPAREN);
    case '[': return punct(lx, i, TG_TK_LBRACK);
    case ']': return punct(lx, i, TG_TK_RBRACK);
    case ',': return punct(lx, i, TG_TK_COMMA);
    case '.': return punct(lx, i, TG_TK_DOT);
    case '+': return op_token(lx, i, 1, TG_N_ADD);
    case '-': return op_token(lx, i, 1, TG_N_SUB);
    case '*': return op_token(lx, i, 1, TG_N_MUL);
    case '/': return op_token(lx, i, 1, TG_N_DIV);
    case '<': return d == '=' ? op_token(lx, i, 2, TG_N_LE) : op_token(lx, i, 1, TG_N_LT);
    case '>': return d == '=' ? op_token(lx, i, 2, TG_N_GE) : op_token(lx, i, 1, TG_N_GT);
    case '=':
        if (d == '=') return op_token(lx, i, 2, TG_N_EQ);
        return lex_error(lx, i, "'=' is not an operator; compare with '=='");
    case '!':
        if (d == '=') return op_token(lx, i, 2, TG_N_NE);
        return lex_error(lx, i, "'!' is not an operator; negate with 'not'");
    case '&':
        return lex_error(lx, i, "'%s' is not an operator; use 'and'", d == '&' ? "&&" : "&");
    case '|':
        return lex_error(lx, i, "'%s' is not an operator; use 'or'", d == '|' ? "||" : "|");
    case '{': case '}':
        return lex_error(lx, i, "unexpected '%c' (placeholders in braces belong in `message`)", c);
    default:
        if ((unsigned char)c >= 0x80)
            return lex_error(lx, i, "unexpected non-ASCII character in an expression");
        return lex_error(lx, i, "unexpected character '%c'", c);
    }
}

/* 0: not a number literal; 1: a finite one, in *t; 2: one whose value is
** out of range (inf, NaN, too long). */
static int number_literal(const char *text, tg_token *out)
{
    while (isspace((unsigned char)*text)) text++;
    bool neg = false;
    if (*text == '-' || *text == '+') neg = *text++ == '-';
    size_t len = strlen(text);
    while (len && isspace((unsigned char)text[len - 1])) len--;
    double v;
    size_t sfx_start, sfx_len;
    size_t n = scan_number(text, len, &v, &sfx_start, &sfx_len);
    if (n == 0 || n != len) return 0;
    int k = -1;
    if (sfx_len && (k = find_suffix(text + sfx_start, sfx_len)) < 0) return 0;
    *out = (tg_token){0};
    set_number(out, neg ? -v : v, k);
    return isfinite(out->num) ? 1 : 2;
}

bool tg_lex_number_literal(const char *text, double *num, bool *is_int, int64_t *ival, tg_unit *unit)
{
    tg_token t;
    if (number_literal(text, &t) != 1) return false;
    *num = t.num;
    *is_int = t.is_int;
    *ival = t.ival;
    *unit = t.unit;
    return true;
}

bool tg_lex_number_out_of_range(const char *text, tg_unit *unit)
{
    tg_token t;
    if (number_literal(text, &t) != 2) return false;
    if (unit) *unit = t.unit;
    return true;
}
