/*
** Events nobody reads, elided before the parser sees them. Two thirds of a
** training trace's bytes are cpu_op events (their args: shapes, strides,
** concrete inputs) and a tenth flow events; the rows hold none of them
** (trace_kineto_map.c), yet tokenizing them was most of a read. This pass
** runs over the text as it streams by, tracking only strings and nesting,
** and replaces each such element of traceEvents by `0`: yajl still counts
** it (event indices are unchanged) but parses one byte instead of hundreds.
**
** An event is elided only when its head reads exactly `{"ph": "<not X or
** M>"` or `{"ph": "X", "cat": "cpu_op"|"Operator"|"python_function"` (a
** cpu_op named ProfilerStep#N is kept: it marks iterations); anything else,
** any other key order or spelling, is left to the parser. The text outside
** elided events is passed on byte for byte. Elided events are not checked
** as JSON, so when the parser then meets an error, the reader reads the
** file again without this pass and reports the error exactly (trace_kineto.c).
*/
#include "trace_kineto.h"

#include <string.h>

/* Bytes of an event's head that decide it (its ph, cat and name start). */
#define HEAD_MAX 160

enum { KEEP, ELIDE, MORE, ELIDE_OP };

static size_t ws(const unsigned char *s, size_t i, size_t n)
{
    while (i < n && (s[i] == ' ' || s[i] == '\n' || s[i] == '\r' || s[i] == '\t')) i++;
    return i;
}

/* s[*i..] starts with lit (after blanks); advances past it. */
static int lit(const unsigned char *s, size_t *i, size_t n, const char *text)
{
    size_t j = ws(s, *i, n), len = strlen(text);
    if (j + len > n) return MORE;
    if (memcmp(s + j, text, len) != 0) return KEEP;
    *i = j + len;
    return ELIDE;
}

/* The head of an event at s[0] == '{'. */
static int classify(const unsigned char *s, size_t n, bool final)
{
    size_t i = 1;
    int r;
    if ((r = lit(s, &i, n, "\"ph\"")) != ELIDE || (r = lit(s, &i, n, ":")) != ELIDE ||
        (r = lit(s, &i, n, "\"")) != ELIDE)
        goto out;
    if (i + 2 > n) { r = MORE; goto out; }
    if (s[i + 1] != '"') { r = KEEP; goto out; }
    if (s[i] != 'X') { r = s[i] == 'M' ? KEEP : ELIDE; goto out; }
    i += 2;
    if ((r = lit(s, &i, n, ",")) != ELIDE || (r = lit(s, &i, n, "\"cat\"")) != ELIDE ||
        (r = lit(s, &i, n, ":")) != ELIDE)
        goto out;
    size_t at = i;
    if (lit(s, &at, n, "\"python_function\"") == ELIDE) { r = ELIDE_OP; goto out; }
    at = i;
    if ((r = lit(s, &at, n, "\"cpu_op\"")) == KEEP) {
        at = i;
        r = lit(s, &at, n, "\"Operator\"");
    }
    if (r != ELIDE) goto out;
    /* an operator: elided unless it is a ProfilerStep#N */
    if ((r = lit(s, &at, n, ",")) != ELIDE || (r = lit(s, &at, n, "\"name\"")) != ELIDE ||
        (r = lit(s, &at, n, ":")) != ELIDE)
        goto out;
    r = lit(s, &at, n, "\"ProfilerStep#");
    r = r == ELIDE ? KEEP : r == KEEP ? ELIDE_OP : MORE;
out:
    if (r == MORE && (final || n >= HEAD_MAX)) r = KEEP;
    return r;
}

/* Bytes that matter outside strings, and inside them: everything between
** two of them is copied (or dropped) as a run. */
static const bool structural[256] = {['"'] = true, ['{'] = true, ['}'] = true, ['['] = true, [']'] = true};
static const bool in_string[256] = {['"'] = true, ['\\'] = true};

/* The text w[from, to) of a string directly inside an elided event. */
static void note_key_text(tg_kin_skip *k, const unsigned char *w, size_t from, size_t to)
{
    for (size_t i = from; i < to && k->str_n < 5; i++, k->str_n++)
        if (k->str_n < 4) k->str_head[k->str_n] = (char)w[i];
}

/* That string closed at w[at]: a key (a ':' follows, or the text ends
** before telling) that is a second ph, cat or name, or holds an escape
** that might spell one, makes the elision doubtful. Values never do. */
static void note_key_end(tg_kin_skip *k, const unsigned char *w, size_t at, size_t len)
{
    size_t m = ws(w, at + 1, len);
    if (m < len && w[m] != ':') return;
    uint8_t n = k->str_n;
    bool is_ph = n == 2 && memcmp(k->str_head, "ph", 2) == 0;
    bool is_cat = n == 3 && memcmp(k->str_head, "cat", 3) == 0;
    bool is_name = n == 4 && memcmp(k->str_head, "name", 4) == 0;
    k->n_ph += is_ph;
    k->n_cat += is_cat;
    k->n_name += is_name;
    if (k->str_escaped || k->n_ph > 1 || k->n_cat > 1 || k->n_name > 1) k->suspect = true;
}

/* Copy w[from, to) to out unless dropping. */
static inline size_t run(const tg_kin_skip *k, const unsigned char *w, size_t from, size_t to, unsigned char *out,
                         size_t o)
{
    if (!k->dropping && to > from) {
        memcpy(out + o, w + from, to - from);
        o += to - from;
    }
    return o;
}

size_t tg_kin_skip_run(tg_kin_skip *k, const unsigned char *in, size_t n, unsigned char *out, bool final)
{
    /* the undecided head kept from the last call comes first */
    unsigned char *w = k->work;
    size_t len = k->n_carry;
    if (len + n > sizeof k->work) n = sizeof k->work - len;   /* never: callers give TG_KIN_CHUNK */
    memcpy(w + len, in, n);
    len += n;
    k->n_carry = 0;
    size_t o = 0, i = 0;
    while (!k->started && i < len) {
        unsigned char b = w[i];
        if (b != ' ' && b != '\n' && b != '\r' && b != '\t') {
            k->started = true;
            k->top_object = b == '{';
            break;
        }
        out[o++] = b;
        i++;
    }
    while (i < len) {
        if (k->escaped) {                      /* the byte after a backslash */
            k->escaped = false;
            o = run(k, w, i, i + 1, out, o);
            i++;
            continue;
        }
        size_t j = i;
        if (k->in_string) {
            while (j < len && !in_string[w[j]]) j++;
            o = run(k, w, i, j, out, o);
            bool event_key = k->dropping && k->depth == k->drop_depth + 1;
            if (event_key) note_key_text(k, w, i, j);
            if (j == len) break;
            if (w[j] == '\\') {
                k->escaped = true;
                if (event_key) k->str_escaped = true;
            } else {
                k->in_string = false;
                if (event_key) note_key_end(k, w, j, len);
            }
            o = run(k, w, j, j + 1, out, o);
            i = j + 1;
            continue;
        }
        while (j < len && !structural[w[j]]) j++;
        o = run(k, w, i, j, out, o);
        if (j == len) break;
        unsigned char b = w[j];
        i = j;
        if (b == '"') {
            k->in_string = true;
            k->str_n = 0;
            k->str_escaped = false;
        } else if (b == '{' || b == '[') {
            if (b == '{' && !k->dropping && k->top_object && k->depth == 2) {
                int c = classify(w + i, len - i, final);
                if (c == MORE) {
                    k->n_carry = len - i;
                    memmove(k->work, w + i, k->n_carry);
                    break;
                }
                if (c == ELIDE || c == ELIDE_OP) {
                    out[o++] = '0';
                    k->elided_ops += c == ELIDE_OP;
                    k->elided++;
                    k->drop_depth = k->depth;
                    k->dropping = true;
                    k->n_ph = k->n_cat = k->n_name = 0;
                }
            }
            k->depth++;
        } else {
            k->depth--;
            if (k->dropping && k->depth == k->drop_depth) {
                k->dropping = false;           /* its closing brace goes too */
                i++;
                continue;
            }
        }
        o = run(k, w, i, i + 1, out, o);
        i++;
    }
    return o;
}
