/*
** The one regular-expression matcher of tracegate (`matches` in rules and
** rule tests, --iteration-pattern; docs/limits.md, "Regular expressions"):
** POSIX ERE as glibc's regcomp(REG_EXTENDED) reads it in the C locale, and
** a match in time linear in the subject.
**
** glibc's regexec backtracks: `nccl.*AllReduce` took 9.5 s on a 160 KB
** kernel name and grew with its square, `(a+)+$` 8.5 s on 40 KB. Here a
** pattern, once measured (regex_check.c: length, repetition bounds, size
** with counted repetitions expanded), is parsed into a tree and compiled
** into a Thompson automaton (counted repetitions written out), which runs
** over the subject once holding the set of live states (at most one
** thread per instruction): O(subject x pattern), no backtracking. The
** caller gives a step budget (a rule: per trace), so a long subject under
** a large pattern costs a bounded time and answers "cannot decide". A rule asks only whether a match exists, which does not
** depend on how POSIX (leftmost-longest) or Perl (leftmost-first) would
** pick one.
**
** The grammar, as glibc accepts it:
**
**   regex  -> branch ('|' branch)*          (empty branches allowed)
**   branch -> piece*
**   piece  -> atom ('*' | '+' | '?' | bound)*   (a** repeats a*)
**   bound  -> '{' m? (',' n?)? '}'        (m defaults to 0: glibc reads {,} as *)
**   atom   -> '(' regex ')' | '[' bracket ']' | '.' | '^' | '$'
**           | '\' char | char                (an unmatched ')' is a char)
**
** Escapes are glibc's: \w \W \s \S, \b \B, \< \> (word start and end),
** \` \' (subject start and end); any other escaped character is itself
** (\. is a dot, \d the letter d). Inside brackets a backslash is an
** ordinary character; [:class:] names the C locale's classes, [.c.] and
** [=c=] of one character are that character. Refused as glibc refuses
** them: a repetition with nothing to repeat (also after ^ or $), a '{'
** that starts no bound, n < m, an unclosed '(' or '[', a trailing
** backslash, an unknown class.
*/
#include "common.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Instructions a compiled pattern may hold: regex_check's limits keep
** real patterns far below (2000 elements expanded, a few instructions
** each). */
#define MAX_PROG 65536

/* ---------------------------------------------------------------- tree */

typedef enum node_kind { N_EMPTY, N_SET, N_ASSERT, N_CAT, N_ALT, N_REPEAT } node_kind;

typedef enum assert_kind {
    A_BOL, A_EOL, A_WORD_BOUNDARY, A_NOT_WORD_BOUNDARY, A_WORD_START, A_WORD_END
} assert_kind;

typedef struct node {
    node_kind kind;
    int set;                   /* N_SET: index of its 256-bit class */
    assert_kind assert;        /* N_ASSERT */
    struct node *a, *b;        /* N_CAT, N_ALT: both; N_REPEAT: a */
    int min, max;              /* N_REPEAT: max -1 = unbounded */
} node;

typedef struct byteset {
    uint8_t bits[32];
} byteset;

typedef struct parser {
    const char *p;
    tg_arena *arena;
    byteset *sets;
    size_t n_sets, cap_sets;
    const char *why;           /* refused: a phrase completing "the pattern ..." */
    bool oom;
} parser;

static void set_add(byteset *s, unsigned c) { s->bits[c >> 3] |= (uint8_t)(1u << (c & 7)); }
static bool set_has(const byteset *s, unsigned c) { return s->bits[c >> 3] >> (c & 7) & 1; }

static node *new_node(parser *ps, node_kind kind)
{
    node *n = tg_arena_alloc(ps->arena, sizeof *n);
    if (!n) {
        ps->oom = true;
        return NULL;
    }
    memset(n, 0, sizeof *n);
    n->kind = kind;
    return n;
}

static node *binary(parser *ps, node_kind kind, node *a, node *b)
{
    if (!a) return b;
    if (!b) return a;
    node *n = new_node(ps, kind);
    if (n) {
        n->a = a;
        n->b = b;
    }
    return n;
}

/* A new class; NULL when out of memory. Its index is n_sets - 1. */
static byteset *new_set(parser *ps)
{
    byteset empty = {{0}};
    if (!TG_PUSH(ps->sets, ps->n_sets, ps->cap_sets, empty)) {
        ps->oom = true;
        return NULL;
    }
    return &ps->sets[ps->n_sets - 1];
}

/* A node for the class just made by new_set. */
static node *set_node(parser *ps)
{
    node *n = new_node(ps, N_SET);
    if (n) n->set = (int)ps->n_sets - 1;
    return n;
}

static node *char_node(parser *ps, unsigned char c)
{
    byteset *s = new_set(ps);
    if (!s) return NULL;
    set_add(s, c);
    return set_node(ps);
}

static node *assert_node(parser *ps, assert_kind k)
{
    node *n = new_node(ps, N_ASSERT);
    if (n) n->assert = k;
    return n;
}

/* ---------------------------------------------------------------- classes */

static bool is_word(unsigned c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_'; }
static bool is_space(unsigned c) { return c == ' ' || (c >= '\t' && c <= '\r'); }

/* The C locale's character classes. */
static bool in_class(const char *name, size_t len, unsigned c)
{
#define IS(s) (len == sizeof s - 1 && !strncmp(name, s, len))
    bool upper = c >= 'A' && c <= 'Z', lower = c >= 'a' && c <= 'z', digit = c >= '0' && c <= '9';
    bool print = c >= 0x20 && c < 0x7f;
    if (IS("alpha")) return upper || lower;
    if (IS("digit")) return digit;
    if (IS("alnum")) return upper || lower || digit;
    if (IS("upper")) return upper;
    if (IS("lower")) return lower;
    if (IS("space")) return is_space(c);
    if (IS("blank")) return c == ' ' || c == '\t';
    if (IS("punct")) return print && c != ' ' && !upper && !lower && !digit;
    if (IS("print")) return print;
    if (IS("graph")) return print && c != ' ';
    if (IS("cntrl")) return c < 0x20 || c == 0x7f;
    if (IS("xdigit")) return digit || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
    return false;
#undef IS
}

static bool known_class(const char *name, size_t len)
{
    static const char *const names[] = {"alpha", "digit", "alnum", "upper", "lower", "space",
                                        "blank", "punct", "print", "graph", "cntrl", "xdigit"};
    for (size_t i = 0; i < sizeof names / sizeof *names; i++)
        if (strlen(names[i]) == len && !strncmp(names[i], name, len)) return true;
    return false;
}

/* One element of a bracket at ps->p: a character, or [.c.] / [=c=] of one
** character. -1 (ps->why set) when malformed. */
static int bracket_char(parser *ps)
{
    const char *p = ps->p;
    if (p[0] == '[' && (p[1] == '.' || p[1] == '=')) {
        if (p[2] && p[3] == p[1] && p[4] == ']') {
            ps->p += 5;
            return (unsigned char)p[2];
        }
        ps->why = "uses a collating element or equivalence class ([.xy.] or [=xy=]) of more than one "
                  "character, which tracegate does not support";
        return -1;
    }
    if (!p[0]) {
        ps->why = "has a '[' without its ']'";
        return -1;
    }
    if (p[0] == '[' && p[1] == ':') {   /* only a range end gets here */
        ps->why = "ends a range with a character class, such as [a-[:digit:]]";
        return -1;
    }
    ps->p++;
    return (unsigned char)p[0];
}

/* bracket -> '^'? ']'? (class | element ('-' element)?)* ']' */
static node *bracket(parser *ps)
{
    byteset *s = new_set(ps);
    if (!s) return NULL;
    size_t index = ps->n_sets - 1;
    ps->p++;   /* '[' */
    bool negate = *ps->p == '^';
    if (negate) ps->p++;
    for (bool first = true;; first = false) {
        if (!*ps->p) {
            ps->why = "has a '[' without its ']'";
            return NULL;
        }
        if (*ps->p == ']' && !first) {
            ps->p++;
            break;
        }
        if (ps->p[0] == '[' && ps->p[1] == ':') {
            const char *name = ps->p + 2, *end = strstr(name, ":]");
            if (!end || !known_class(name, (size_t)(end - name))) {
                ps->why = end ? "names an unknown character class (use [:alpha:], [:digit:], [:space:], ...)"
                              : "has a '[' without its ']'";
                return NULL;
            }
            for (unsigned c = 1; c < 256; c++)
                if (in_class(name, (size_t)(end - name), c)) set_add(s, c);
            ps->p = end + 2;
            continue;
        }
        int lo = bracket_char(ps);
        if (lo < 0) return NULL;
        int hi = lo;
        if (ps->p[0] == '-' && ps->p[1] && ps->p[1] != ']') {
            ps->p++;
            if ((hi = bracket_char(ps)) < 0) return NULL;
            if (hi < lo) {
                ps->why = "has a range whose end comes before its start, such as [z-a]";
                return NULL;
            }
            if (ps->p[0] == '-' && ps->p[1] != ']') {   /* glibc refuses [a-c-e] */
                ps->why = "has a '-' right after a range in a bracket expression (put a literal '-' last)";
                return NULL;
            }
        }
        for (int c = lo; c <= hi; c++) set_add(s, (unsigned)c);
    }
    if (negate)
        for (size_t i = 0; i < 32; i++) s->bits[i] = (uint8_t)~s->bits[i];
    s->bits[0] &= (uint8_t)~1u;   /* never NUL: subjects are C strings */
    node *n = new_node(ps, N_SET);
    if (n) n->set = (int)index;
    return n;
}

/* An escape at ps->p ('\\') outside brackets. */
static node *escape(parser *ps)
{
    unsigned char c = (unsigned char)ps->p[1];
    if (!c) {
        ps->why = "ends with a lone backslash";
        return NULL;
    }
    ps->p += 2;
    switch (c) {
    case 'b': return assert_node(ps, A_WORD_BOUNDARY);
    case 'B': return assert_node(ps, A_NOT_WORD_BOUNDARY);
    case '<': return assert_node(ps, A_WORD_START);
    case '>': return assert_node(ps, A_WORD_END);
    case '`': return assert_node(ps, A_BOL);
    case '\'': return assert_node(ps, A_EOL);
    case 'w': case 'W': case 's': case 'S': {
        byteset *s = new_set(ps);
        if (!s) return NULL;
        for (unsigned x = 1; x < 256; x++) {
            bool in = c == 'w' || c == 'W' ? is_word(x) : is_space(x);
            if (in == (c == 'w' || c == 's')) set_add(s, x);
        }
        return set_node(ps);
    }
    default:
        return char_node(ps, c);   /* \. \* \d (the letter d, as in glibc) ... */
    }
}

/* A bound at ps->p ('{') into *min, *max; false (ps->why) when malformed. */
static bool bound(parser *ps, int *min, int *max)
{
    const char *p = ps->p + 1;
    long m = 0, n = -1;
    bool has_m = false, comma = false;
    for (; *p >= '0' && *p <= '9'; p++, has_m = true) m = m > 100000 ? m : m * 10 + (*p - '0');
    if (*p == ',') {
        comma = true;
        p++;
        if (*p >= '0' && *p <= '9') n = 0;
        for (; *p >= '0' && *p <= '9'; p++) n = n > 100000 ? n : n * 10 + (*p - '0');
    }
    if (*p != '}' || (!has_m && !comma)) {
        ps->why = "has a '{' that starts no repetition count such as {2} or {1,3} (write \\{ for the character)";
        return false;
    }
    if (!comma) n = m;
    if (n >= 0 && n < m) {
        ps->why = "has a repetition count {m,n} with n below m";
        return false;
    }
    *min = (int)m;
    *max = (int)n;   /* regex_check capped both at 255 */
    ps->p = p + 1;
    return true;
}

static node *regex(parser *ps, int depth);

/* atom -> '(' regex ')' | bracket | '.' | '^' | '$' | escape | char;
** *repeatable false for the anchors (^ $ \b \B \< \> \` \'). */
static node *atom(parser *ps, int depth, bool *repeatable)
{
    *repeatable = true;
    char c = *ps->p;
    switch (c) {
    case '(': {
        if (depth >= 256) {
            ps->why = "nests groups more than 256 deep";
            return NULL;
        }
        ps->p++;
        node *r = regex(ps, depth + 1);
        if (ps->why || ps->oom) return NULL;
        if (*ps->p != ')') {
            ps->why = "has a '(' without its ')'";
            return NULL;
        }
        ps->p++;
        return r ? r : new_node(ps, N_EMPTY);
    }
    case '[':
        return bracket(ps);
    case '.': {
        ps->p++;
        byteset *s = new_set(ps);
        if (!s) return NULL;
        for (unsigned x = 1; x < 256; x++) set_add(s, x);
        return set_node(ps);
    }
    case '^': case '$':
        ps->p++;
        *repeatable = false;   /* glibc refuses ^* */
        return assert_node(ps, c == '^' ? A_BOL : A_EOL);
    case '\\':
        if (ps->p[1] && strchr("bB<>`'", ps->p[1])) *repeatable = false;   /* anchors, as ^ and $ */
        return escape(ps);
    default:
        ps->p++;
        return char_node(ps, (unsigned char)c);
    }
}

static bool is_quantifier(char c) { return c == '*' || c == '+' || c == '?' || c == '{'; }

/* branch -> piece*, piece -> atom quantifier* */
static node *branch(parser *ps, int depth)
{
    node *seq = NULL;
    bool any = false;
    while (*ps->p && *ps->p != '|' && !(*ps->p == ')' && depth > 0)) {
        if (is_quantifier(*ps->p)) {
            ps->why = "has a repetition (*, +, ? or {n}) with nothing before it to repeat";
            return NULL;
        }
        bool repeatable;
        node *a = atom(ps, depth, &repeatable);
        if (!a) return NULL;
        while (is_quantifier(*ps->p)) {
            if (!repeatable) {
                ps->why = "has a repetition (*, +, ? or {n}) with nothing before it to repeat";
                return NULL;
            }
            int min, max;
            if (*ps->p == '{') {
                if (!bound(ps, &min, &max)) return NULL;
            } else {
                min = *ps->p == '+' ? 1 : 0;
                max = *ps->p == '?' ? 1 : -1;
                ps->p++;
            }
            node *r = new_node(ps, N_REPEAT);
            if (!r) return NULL;
            r->a = a;
            r->min = min;
            r->max = max;
            a = r;
        }
        seq = binary(ps, N_CAT, seq, a);
        if (!seq) return NULL;
        any = true;
    }
    return any ? seq : new_node(ps, N_EMPTY);
}

/* regex -> branch ('|' branch)*. At the top, where no group is open, a
** ')' is read by atom() as an ordinary character. */
static node *regex(parser *ps, int depth)
{
    node *alt = NULL;
    for (;;) {
        node *b = branch(ps, depth);
        if (!b) return NULL;
        alt = alt ? binary(ps, N_ALT, alt, b) : b;
        if (!alt) return NULL;
        if (*ps->p != '|') return alt;
        ps->p++;
    }
}

/* ---------------------------------------------------------------- program */

typedef enum op { OP_SET, OP_ASSERT, OP_SPLIT, OP_JMP, OP_MATCH } op;

typedef struct inst {
    uint8_t op;
    uint8_t assert;            /* OP_ASSERT */
    int32_t x, y;              /* OP_SET: class; OP_SPLIT: both targets; OP_JMP: x */
} inst;

struct tg_regex {
    inst *prog;
    int n_prog;
    byteset *sets;
};

typedef struct compiler {
    inst *prog;
    int n, cap;
    bool overflow;
} compiler;

static int emit(compiler *c, op o, int x, int y)
{
    if (c->n >= MAX_PROG) {
        c->overflow = true;
        return c->n;
    }
    if (c->n == c->cap) {
        int cap = c->cap ? c->cap * 2 : 64;
        inst *p = realloc(c->prog, (size_t)cap * sizeof *p);
        if (!p) {
            c->overflow = true;
            return c->n;
        }
        c->prog = p;
        c->cap = cap;
    }
    c->prog[c->n] = (inst){.op = (uint8_t)o, .x = x, .y = y};
    return c->n++;
}

static void patch(compiler *c, int at, int x, int y)
{
    if (at < c->n) {
        c->prog[at].x = x;
        c->prog[at].y = y;
    }
}

/* Thompson's construction; a counted repetition is written out: m copies,
** then n - m optional ones (or a loop for {m,}). */
static void compile(compiler *c, const node *n)
{
    if (c->overflow) return;
    switch (n->kind) {
    case N_EMPTY:
        break;
    case N_SET:
        emit(c, OP_SET, n->set, 0);
        break;
    case N_ASSERT: {
        int at = emit(c, OP_ASSERT, 0, 0);
        if (at < c->n) c->prog[at].assert = (uint8_t)n->assert;
        break;
    }
    case N_CAT:
        compile(c, n->a);
        compile(c, n->b);
        break;
    case N_ALT: {
        int split = emit(c, OP_SPLIT, 0, 0);
        compile(c, n->a);
        int jmp = emit(c, OP_JMP, 0, 0);
        int second = c->n;
        compile(c, n->b);
        patch(c, split, split + 1, second);
        patch(c, jmp, c->n, 0);
        break;
    }
    case N_REPEAT: {
        for (int i = 0; i < n->min; i++) compile(c, n->a);
        if (n->max < 0) {          /* L: split body, out; body; jmp L */
            int split = emit(c, OP_SPLIT, 0, 0);
            compile(c, n->a);
            emit(c, OP_JMP, split, 0);
            patch(c, split, split + 1, c->n);
        } else {                   /* (split body, out; body) x (max - min), all out to the end */
            int splits[256], k = 0;
            for (int i = n->min; i < n->max && k < 256; i++) {
                splits[k++] = emit(c, OP_SPLIT, 0, 0);
                compile(c, n->a);
            }
            for (int i = 0; i < k; i++) patch(c, splits[i], splits[i] + 1, c->n);
        }
        break;
    }
    }
}

/* ---------------------------------------------------------------- API */

/* The tree of a pattern within regex_check's limits; NULL with ps->why
** (or ps->oom) set. The caller frees ps->sets and ps->arena. */
static node *parse(const char *pattern, parser *ps)
{
    *ps = (parser){.p = pattern, .why = tg_regex_refuse(pattern)};
    if (ps->why) return NULL;
    ps->arena = tg_arena_new();
    node *tree = ps->arena ? regex(ps, 0) : NULL;
    if (!ps->arena) ps->oom = true;
    if (tree && *ps->p && !ps->why) ps->why = "cannot be read past its end";   /* not reached: regex() reads all */
    return ps->why || ps->oom ? NULL : tree;
}

tg_regex *tg_regex_compile(const char *pattern, char *why, size_t why_size)
{
    parser ps;
    node *tree = parse(pattern, &ps);
    tg_regex *re = NULL;
    if (tree) {
        compiler c = {0};
        compile(&c, tree);
        emit(&c, OP_MATCH, 0, 0);
        re = calloc(1, sizeof *re);
        if (c.overflow || !re) {
            free(c.prog);
            free(re);
            re = NULL;
            if (c.n >= MAX_PROG) ps.why = "is too complex: its automaton would exceed 65536 instructions";
            else ps.oom = true;
        } else {
            re->prog = c.prog;
            re->n_prog = c.n;
            re->sets = ps.sets;
            ps.sets = NULL;
        }
    }
    if (!re) snprintf(why, why_size, "%s", ps.why ? ps.why : "cannot be compiled: out of memory");
    free(ps.sets);
    tg_arena_free(ps.arena);
    return re;
}

/* The assertion at position pos of s (len bytes). */
static bool assertion(int kind, const unsigned char *s, size_t len, size_t pos)
{
    bool before = pos > 0 && is_word(s[pos - 1]), after = pos < len && is_word(s[pos]);
    switch (kind) {
    case A_BOL: return pos == 0;
    case A_EOL: return pos == len;
    case A_WORD_BOUNDARY: return before != after;
    case A_NOT_WORD_BOUNDARY: return before == after;
    case A_WORD_START: return !before && after;
    case A_WORD_END: return before && !after;
    default: return false;
    }
}

typedef struct run {
    const tg_regex *re;
    const unsigned char *s;
    size_t len;
    int *mark;                 /* per instruction: the last position + 1 it was added at */
    int *stack;                /* pending epsilon moves */
    uint64_t steps;            /* instructions visited so far */
} run;

/* Add pc and everything it reaches without reading a byte to list (the
** threads about to read s[pos]); true when MATCH is among them. */
static bool add(run *r, int *list, int *n, int pc, size_t pos)
{
    int top = 0, stamp = (int)(pos % 0x7fffffff) + 1;
    r->stack[top++] = pc;
    while (top) {
        pc = r->stack[--top];
        r->steps++;
        if (r->mark[pc] == stamp) continue;
        r->mark[pc] = stamp;
        const inst *in = &r->re->prog[pc];
        switch (in->op) {
        case OP_MATCH: return true;
        case OP_JMP: r->stack[top++] = in->x; break;
        case OP_SPLIT:
            r->stack[top++] = in->y;   /* popped second */
            r->stack[top++] = in->x;
            break;
        case OP_ASSERT:
            if (assertion(in->assert, r->s, r->len, pos)) r->stack[top++] = pc + 1;
            break;
        default:
            list[(*n)++] = pc;
            break;
        }
    }
    return false;
}

/* The run's cost is counted in steps (an instruction visited, a thread
** moved over a byte) and checked once per byte against *budget, which it
** is then charged: past it the answer is -1, whatever the rest of the
** subject holds (docs/limits.md, "Matching cost"). */
int tg_regex_match(const tg_regex *re, const char *s, size_t len, uint64_t *budget)
{
    if (*budget == 0) return -1;
    int n = re->n_prog;
    /* Each list holds an instruction at most once per position; one
    ** closure pushes at most two entries per instruction, plus its start. */
    int small[2048];
    size_t need = (size_t)n * 5 + 2;
    int *buf = need <= sizeof small / sizeof *small ? small : malloc(need * sizeof *buf);
    if (!buf) return -1;   /* out of memory: undecided, never "no match" */
    run r = {.re = re, .s = (const unsigned char *)s, .len = len, .mark = buf, .stack = buf + n};
    int *cur = buf + 3 * n + 2, *next = buf + 4 * n + 2, n_cur = 0, n_next = 0;
    memset(r.mark, 0, (size_t)n * sizeof *r.mark);
    int found = 0;
    for (size_t pos = 0;; pos++) {
        /* a match may start anywhere: the start joins the live threads */
        if (add(&r, cur, &n_cur, 0, pos)) {
            found = 1;
            break;
        }
        if (pos == len) break;
        r.steps += (uint64_t)n_cur;
        if (r.steps > *budget) {
            found = -1;
            break;
        }
        n_next = 0;
        for (int i = 0; i < n_cur; i++) {
            const inst *in = &re->prog[cur[i]];
            if (set_has(&re->sets[in->x], r.s[pos]) && add(&r, next, &n_next, cur[i] + 1, pos + 1)) {
                found = 1;
                break;
            }
        }
        if (found) break;
        int *t = cur;
        cur = next;
        next = t;
        n_cur = n_next;
    }
    if (buf != small) free(buf);
    *budget = r.steps >= *budget ? 0 : *budget - r.steps;
    return found;
}

void tg_regex_free(tg_regex *re)
{
    if (!re) return;
    free(re->prog);
    free(re->sets);
    free(re);
}

/* ---------------------------------------------------------------- translation */

/* The pattern re-written from its tree for another engine (common.h):
** every class as an explicit bracket of ASCII members, groups where
** precedence needs them, counted repetitions as {m,n}. For SQLite the text
** stays in the subset that glibc's ERE reads the same way (no \xHH: the
** metacharacters escaped with a backslash, which both read as literals; in
** brackets '-' first, ']' never with it, a backslash doubled), so the
** tests' own regexp() and the shell agree on it. What the target cannot
** say sets tr->why. */
typedef struct translator {
    FILE *f;
    const byteset *sets;
    tg_regex_dialect d;
    const char *why;
} translator;

/* A character outside brackets. */
static void put_char(translator *t, unsigned c)
{
    bool meta = c < 0x80 && !is_word(c) && c >= 0x20 &&
                (t->d == TG_REGEX_ONIGURUMA ? c != ' ' : strchr("\\{}()[]|*+?.^$", (int)c) != NULL);
    if (meta) fputc('\\', t->f);
    fputc((int)c, t->f);
}

/* A member of a bracket: Oniguruma reads [ & - ] ^ \ there as syntax. */
static void put_member(translator *t, unsigned c)
{
    if (t->d == TG_REGEX_ONIGURUMA && c < 0x80 && !is_word(c) && c > 0x20) fputc('\\', t->f);
    else if (c == '\\') fputc('\\', t->f);
    fputc((int)c, t->f);
}

static bool range_end(unsigned c)
{
    return is_word(c) || (c > 0x20 && c < 0x7f && !strchr("\\[]^-", (int)c));
}

/* A class: `.` for every byte, one character, or a bracket. Bytes of 0x80
** and above can be only all in (a negated class: then, like `.`, it matches
** one UTF-8 character of a name where tracegate matches one byte) or all
** out. */
static void put_set(translator *t, const byteset *s)
{
    unsigned n = 0, high = 0;
    for (unsigned c = 1; c < 256; c++) {
        n += set_has(s, c);
        high += c >= 0x80 && set_has(s, c);
    }
    if (high && high != 128) {
        t->why = "has a class with some but not all bytes of 0x80 and above, which the target reads as characters";
        return;
    }
    if (n == 255) {
        fputs(t->d == TG_REGEX_ONIGURUMA ? "(?s:.)" : ".", t->f);
        return;
    }
    bool negate = high == 128;
    unsigned in = 0, only = 0;
    for (unsigned c = 1; c < 0x80; c++)
        if (set_has(s, c) != negate) in++, only = c;
    if (in == 1 && !negate) {
        put_char(t, only);
        return;
    }
    bool sqlite = t->d == TG_REGEX_SQLITE;
    bool dash = set_has(s, '-') != negate, bracket = set_has(s, ']') != negate;
    /* SQLite and ERE: ']' first, '-' first: not both in one bracket */
    bool split = sqlite && dash && bracket && !negate;
    if (split) fputs("(\\]|", t->f);
    if (sqlite && dash && bracket && negate) {
        t->why = "has a negated class holding both ']' and '-', which the sqlite3 shell cannot write";
        return;
    }
    fputs(negate ? "[^" : "[", t->f);
    if (sqlite && dash) fputc('-', t->f);
    else if (sqlite && bracket) fputc(']', t->f);
    for (unsigned c = 1; c < 0x80; c++) {
        if (set_has(s, c) == negate) continue;
        if (sqlite && (c == '-' || c == ']')) continue;
        unsigned e = c;
        while (range_end(c) && e + 1 < 0x80 && set_has(s, e + 1) != negate && range_end(e + 1)) e++;
        if (c == '^' && sqlite && in > 1) {
            /* not first: after the others */
            continue;
        }
        put_member(t, c);
        if (e > c) {
            if (e > c + 1) fputc('-', t->f);
            put_member(t, e);
        }
        c = e;
    }
    if (sqlite && set_has(s, '^') != negate) fputc('^', t->f);
    fputc(']', t->f);
    if (split) fputc(')', t->f);
}

static void translate(translator *t, const node *n, bool group);

static void put_assert(translator *t, assert_kind k)
{
    bool onig = t->d == TG_REGEX_ONIGURUMA;
    switch (k) {
    case A_BOL: fputs(onig ? "\\A" : "^", t->f); return;
    case A_EOL: fputs(onig ? "\\z" : "$", t->f); return;
    case A_WORD_BOUNDARY: fputs("\\b", t->f); return;
    case A_NOT_WORD_BOUNDARY:
        if (onig) fputs("\\B", t->f);
        else t->why = "uses \\B, which the sqlite3 shell's regexp() does not know";
        return;
    case A_WORD_START: case A_WORD_END:
        if (onig) fputs(k == A_WORD_START ? "\\b(?=\\w)" : "\\b(?<=\\w)", t->f);
        else t->why = "uses \\< or \\>, which the sqlite3 shell's regexp() does not know";
        return;
    }
}

/* n; group: wrap what is not one atom in parentheses (under a repetition
** or a concatenation's alternation). */
static void translate(translator *t, const node *n, bool group)
{
    if (t->why) return;
    switch (n->kind) {
    case N_EMPTY: fputs("()", t->f); return;
    case N_SET: put_set(t, &t->sets[n->set]); return;
    case N_ASSERT: put_assert(t, n->assert); return;
    case N_CAT:
        if (group) fputc('(', t->f);
        translate(t, n->a, n->a->kind == N_ALT);
        translate(t, n->b, n->b->kind == N_ALT);
        if (group) fputc(')', t->f);
        return;
    case N_ALT:
        if (group) fputc('(', t->f);
        translate(t, n->a, false);
        fputc('|', t->f);
        translate(t, n->b, false);
        if (group) fputc(')', t->f);
        return;
    case N_REPEAT:
        if (n->max == 0) {            /* a{0}: the empty string (the shell refuses {0}) */
            fputs("()", t->f);
            return;
        }
        translate(t, n->a, n->a->kind != N_SET && n->a->kind != N_EMPTY);
        if (n->min == 0 && n->max < 0) fputc('*', t->f);
        else if (n->min == 1 && n->max < 0) fputc('+', t->f);
        else if (n->min == 0 && n->max == 1) fputc('?', t->f);
        else if (n->max < 0) fprintf(t->f, "{%d,}", n->min);
        else if (n->max == n->min) fprintf(t->f, "{%d}", n->min);
        else fprintf(t->f, "{%d,%d}", n->min, n->max);
        return;
    }
}

char *tg_regex_translate(const char *pattern, tg_regex_dialect d, char *why, size_t why_size)
{
    parser ps;
    node *tree = parse(pattern, &ps);
    char *buf = NULL;
    size_t len = 0;
    translator t = {.sets = ps.sets, .d = d};
    if (tree && (t.f = open_memstream(&buf, &len)) != NULL) {
        translate(&t, tree, false);
        if (fclose(t.f) != 0) t.why = "cannot be translated: out of memory";
    }
    const char *fail = ps.why ? ps.why : t.why ? t.why : !buf ? "cannot be translated: out of memory" : NULL;
    if (fail) {
        snprintf(why, why_size, "%s", fail);
        free(buf);
        buf = NULL;
    }
    free(ps.sets);
    tg_arena_free(ps.arena);
    return buf;
}
