/*
** Limits on the regular expressions tracegate compiles from its input
** (`matches "..."` in rules, --iteration-pattern), measured before the
** matcher of regex.c compiles them: its automaton, like any, grows with
** the pattern once counted repetitions are written out, and matching
** costs the subject's length times the automaton's size. A 60 KB
** alternation or `((a{1,100}){1,100}){1,100}` would make millions of
** instructions, so a pattern is measured first: its length, each
** repetition bound, and its size with counted repetitions multiplied out.
** Back-references are refused too: POSIX ERE has none, and no automaton
** can match them in linear time.
*/
#include "common.h"

#include <string.h>

#define TG_REGEX_MAX_LEN 4096
#define TG_REGEX_MAX_REPEAT 255
#define TG_REGEX_MAX_WEIGHT 2000
#define TG_REGEX_MAX_GROUPS 256

/* Saturating product/sum kept just above the limit. */
static size_t cap_weight(size_t w) { return w > TG_REGEX_MAX_WEIGHT + 1 ? TG_REGEX_MAX_WEIGHT + 1 : w; }

/* Length of a bracket expression starting at p ('['), up to and including
** its ']'; the whole rest when unterminated (regcomp will refuse it). */
static size_t bracket_len(const char *p)
{
    size_t i = 1;
    if (p[i] == '^') i++;
    if (p[i] == ']') i++;
    for (; p[i]; i++) {
        if (p[i] == '[' && (p[i + 1] == ':' || p[i + 1] == '.' || p[i + 1] == '=')) {
            const char *close = strchr(p + i + 2, p[i + 1]);
            while (close && close[1] != ']') close = strchr(close + 1, p[i + 1]);
            if (!close) return strlen(p);
            i = (size_t)(close + 1 - p);
            continue;
        }
        if (p[i] == ']') return i + 1;
    }
    return i;
}

/* A bound "{m}", "{m,}" or "{m,n}" at p: its length, the largest count it
** allows in *max (m + 1 for "{m,}"), 0 when p is not a bound. */
static size_t bound_len(const char *p, size_t *max)
{
    size_t i = 1, m = 0, n = 0;
    bool digits = false, comma = false, digits_n = false;
    for (; p[i] >= '0' && p[i] <= '9'; i++, digits = true) m = m > 100000 ? m : m * 10 + (size_t)(p[i] - '0');
    if (p[i] == ',') {
        comma = true;
        for (i++; p[i] >= '0' && p[i] <= '9'; i++, digits_n = true)
            n = n > 100000 ? n : n * 10 + (size_t)(p[i] - '0');
    }
    if (!digits || p[i] != '}') return 0;
    *max = !comma ? m : digits_n ? (n > m ? n : m) : m + 1;
    return i + 1;
}

const char *tg_regex_refuse(const char *pattern)
{
    if (strlen(pattern) > TG_REGEX_MAX_LEN)
        return "is longer than 4096 bytes";
    size_t sum[TG_REGEX_MAX_GROUPS + 1];   /* weight of each open group so far */
    int depth = 0;
    size_t last = 0;                       /* weight of the atom a quantifier applies to */
    sum[0] = 0;
    for (const char *p = pattern; *p;) {
        size_t max, n;
        switch (*p) {
        case '(':
            if (depth == TG_REGEX_MAX_GROUPS) return "nests groups more than 256 deep";
            sum[++depth] = 0;
            last = 0;
            p++;
            continue;
        case ')':
            if (depth > 0) {
                last = cap_weight(sum[depth] + 1);
                depth--;
                sum[depth] = cap_weight(sum[depth] + last);
                p++;
                continue;
            }
            break;   /* an unmatched ')' is an ordinary character in ERE */
        case '[':
            n = bracket_len(p);
            last = 1;
            sum[depth] = cap_weight(sum[depth] + 1);
            p += n;
            continue;
        case '\\':
            if (p[1] >= '1' && p[1] <= '9')
                return "uses a back-reference (\\1 to \\9): POSIX ERE has none, and matching one can take exponential time";
            last = 1;
            sum[depth] = cap_weight(sum[depth] + 1);
            p += p[1] ? 2 : 1;
            continue;
        case '{':
            if ((n = bound_len(p, &max)) > 0) {
                if (max > TG_REGEX_MAX_REPEAT) return "repeats an element more than 255 times";
                if (max > 1) sum[depth] = cap_weight(sum[depth] + cap_weight(last * (max - 1)));
                last = cap_weight(last * (max ? max : 1));
                p += n;
                continue;
            }
            break;
        case '*': case '+': case '?': case '|':
            sum[depth] = cap_weight(sum[depth] + 1);
            if (*p == '|') last = 0;
            p++;
            continue;
        default:
            break;
        }
        last = 1;
        sum[depth] = cap_weight(sum[depth] + 1);
        p++;
    }
    size_t total = 0;
    for (int d = 0; d <= depth; d++) total = cap_weight(total + sum[d]);
    if (total > TG_REGEX_MAX_WEIGHT)
        return "is too complex: with its counted repetitions expanded it has more than 2000 elements";
    return NULL;
}
