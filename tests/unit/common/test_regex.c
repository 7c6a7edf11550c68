/*
** The matcher of engine/common/regex.c against the dialect it replaces:
** glibc's regcomp(REG_EXTENDED) / regexec in the C locale. Fixed cases
** cover every construct of the grammar and glibc's quirks (a** repeats,
** {,n}, an unmatched ')' is a character, \d is the letter d, a backslash
** inside brackets is itself, ^* is refused); a random walk over a small
** alphabet compares acceptance and matches on thousands of patterns. Then
** the cost: the patterns that made glibc take seconds run in time linear
** in the subject. Last, the patterns rewritten for the sqlite3 shell
** (tg_regex_translate, docs/evidence.md "Patterns") match the same ASCII
** subjects as the original, read by this matcher and by glibc.
*/
#include <regex.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <cmocka.h>

#include "common/common.h"

/* glibc's answer: -1 refused, else 1 / 0 per subject. */
static int glibc_match(const char *pattern, const char *subject)
{
    regex_t re;
    if (regcomp(&re, pattern, REG_EXTENDED | REG_NOSUB) != 0) return -1;
    int m = regexec(&re, subject, 0, NULL, 0) == 0;
    regfree(&re);
    return m;
}

static int our_match(const char *pattern, const char *subject)
{
    char why[256];
    tg_regex *re = tg_regex_compile(pattern, why, sizeof why);
    if (!re) return -1;
    int m = tg_regex_match(re, subject, strlen(subject), &(uint64_t){TG_REGEX_STEP_BUDGET});
    tg_regex_free(re);
    return m;
}

static const char *const subjects[] = {
    "", "a", "b", "ab", "ba", "aab", "abab", "aaaa", "abc", "d", "\\", "\\d", "7", "a7b", "x{", "a)b",
    "a|b", "a$b", "*a", "foo bar", "foo_bar", "nccl", "ncclAllReduce", "ncclKernel_AllReduce_RING",
    "ProfilerStep#12", "iteration", "train_step", "cudaMemcpyAsync", "cuMemcpyHtoD_v2", "a\nb", "[x]",
    "-", "]", "^", "A", "Z9_", " \t", "\xc3\xa9t\xc3\xa9", "\x80\xff", ".", "..", "a.b", "{", "}",
};

/* The documented differences (docs/limits.md): glibc lets an anchor
** inside a pattern match at a newline of the subject (`x$.` matches
** "x\ny", `.^` matches "a\nb"), where here ^ and $ match only at its
** ends, as POSIX says without REG_NEWLINE; and glibc reads a bound with a
** backslash in it in a way of its own (`a{\,}` matches "a{,}", `a{1\,}`
** is accepted), which is refused here. */
static bool known_difference(const char *pattern, const char *subject, int g, int o)
{
    if (g >= 0 && o >= 0) return strchr(subject, '\n') && strpbrk(pattern, "^$");
    if (!(g >= 0 && o < 0)) return false;
    for (const char *b = strchr(pattern, '{'); b; b = strchr(b + 1, '{'))
        if (b[strcspn(b, "}\\")] == '\\') return true;   /* a backslash before the '}' */
    return false;
}

static void compare(const char *pattern)
{
    for (size_t i = 0; i < sizeof subjects / sizeof *subjects; i++) {
        int g = glibc_match(pattern, subjects[i]), o = our_match(pattern, subjects[i]);
        if (g != o && !known_difference(pattern, subjects[i], g, o))
            fail_msg("pattern \"%s\" on \"%s\": glibc %d, tracegate %d (-1: refused)", pattern, subjects[i], g, o);
    }
}

static void test_same_as_glibc(void **state)
{
    (void)state;
    static const char *const patterns[] = {
        /* the built-in and documented ones */
        "^(iteration|train_step|step|ProfilerStep#[0-9]+)$", "^nccl", "nccl.*AllReduce", "(gemm|conv).*_f16$",
        "^cu(da)?(Ctx|Device|Stream|Event)Synchronize", "^cuda.*Async$", "^cu(da)?Stream",
        /* literals, dot, anchors */
        "", "a", "ab", "a.b", ".", "..", "^a", "a$", "^$", "^", "$", "a^b", "a$b", "^a|b$", "\\.", "a\\|b",
        /* repetitions */
        "a*", "a+", "a?", "a*b", "(ab)+", "(a|b)*c", "a{2}", "a{1,2}", "a{2,}", "a{0}", "a{0,1}b", "a{,2}b",
        "(a+)+$", "(a*)*", "(a|aa)+b", "((a)*)*b", "a**", "a*?", "a+*", "a{2}{2}", "a{,}b", "(a{1,2}){2}", "()", "()*",
        /* alternation */
        "a|b", "a||b", "(|a)", "(a|)", "|", "a|", "(a|b)(c|d)?",
        /* brackets */
        "[ab]", "[^ab]", "[a-c]", "[]a]", "[^]a]", "[a-]", "[-a]", "[\\d]", "[[:digit:]]", "[[:alpha:]_]",
        "[[:space:]]", "[[:upper:][:digit:]]", "[[:punct:]]", "[[.a.]]", "[[=b=]]", "[.]", "[*]", "[$^]",
        "x[^a-z]y", "[[:xdigit:]]+", "[[:cntrl:]]", "[[:graph:]]", "[[:print:]]", "[[:blank:]]", "[[:lower:]]",
        "[[:alnum:]]", "[^[:alnum:]]",
        /* escapes */
        "\\d", "\\w", "\\W", "\\s", "\\S", "\\bfoo\\b", "\\Bar", "\\<bar", "foo\\>", "\\`a", "b\\'", "\\n",
        "\\*a", "\\(", "\\)", "\\{", "\\}", "\\\\", "\\^", "\\$",
        /* an unmatched ')' is a character */
        "a)b", ")", "a)*",
        /* refused by both */
        "*a", "(*a)", "(?:a)", "a|*b", "^*", "x{", "a{1", "{1}a", "a{1,2", "\\", "a{3,1}", "(a", "[a", "[[:foo:]]",
        "+", "?", "a(b|*c)",
    };
    for (size_t i = 0; i < sizeof patterns / sizeof *patterns; i++) compare(patterns[i]);
}

/* The translation for SQLite read back as ERE: the same answer on every
** ASCII subject (a non-ASCII name is matched by character there, by byte
** here: docs/evidence.md). Returns whether it was translated. */
static bool compare_translation(const char *pattern)
{
    char why[256];
    char *t = tg_regex_translate(pattern, TG_REGEX_SQLITE, why, sizeof why);
    if (!t) return false;
    for (size_t i = 0; i < sizeof subjects / sizeof *subjects; i++) {
        const char *subject = subjects[i];
        bool ascii = true;
        for (const char *c = subject; *c; c++) ascii &= (unsigned char)*c < 0x80;
        if (!ascii) continue;
        int o = our_match(pattern, subject), ot = our_match(t, subject), gt = glibc_match(t, subject);
        if (o != ot || (gt != o && !known_difference(t, subject, gt, ot)))
            fail_msg("pattern \"%s\" as \"%s\" on \"%s\": %d, translated %d (glibc %d)", pattern, t, subject, o, ot,
                     gt);
    }
    free(t);
    return true;
}

static void test_translation(void **state)
{
    (void)state;
    static const struct { const char *ere, *sqlite, *onig; } cases[] = {
        {"^cu[[:alpha:]]+Synchronize$", "^cu[A-Za-z]+Synchronize$", "\\Acu[A-Za-z]+Synchronize\\z"},
        {"^cud\\a\\d", "^cudad", "\\Acudad"},                      /* escapes as ERE reads them */
        {"x{0}y|a{2,}b{1,3}", "()y|a{2,}b{1,3}", "()y|a{2,}b{1,3}"},
        {"a.b\\.c[.]", "a.b\\.c\\.", "a(?s:.)b\\.c\\."},
        {"[]a-]", "(\\]|[-a])", "[\\-\\]a]"},
        {"[^a-c]x", "[^a-c]x", "[^a-c]x"},
        {"\\bfoo", "\\bfoo", "\\bfoo"},
        {"a|(b|c)d", "a|(b|c)d", "a|(b|c)d"},
        {"(a|b)*", "(a|b)*", "(a|b)*"},
        {"[$^]", "[$^]", "[\\$\\^]"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char why[256];
        char *s = tg_regex_translate(cases[i].ere, TG_REGEX_SQLITE, why, sizeof why);
        char *o = tg_regex_translate(cases[i].ere, TG_REGEX_ONIGURUMA, why, sizeof why);
        assert_non_null(s);
        assert_non_null(o);
        assert_string_equal(s, cases[i].sqlite);
        assert_string_equal(o, cases[i].onig);
        free(s);
        free(o);
        assert_true(compare_translation(cases[i].ere));
    }
    /* what the shell cannot say, and what is not a pattern */
    static const char *const refused[] = {"\\Bar", "\\<bar", "foo\\>", "[^]-]", "a[\x80-\xbf]", "(a", "[[:foo:]]",
                                        "(ab)\\1"};
    for (size_t i = 0; i < sizeof refused / sizeof *refused; i++) {
        char why[256] = "";
        char *s = tg_regex_translate(refused[i], TG_REGEX_SQLITE, why, sizeof why);
        if (s) fail_msg("\"%s\" translated to \"%s\"", refused[i], s);
        assert_true(why[0] != 0);
    }
    char why[256];
    char *o = tg_regex_translate("\\Bar\\<b", TG_REGEX_ONIGURUMA, why, sizeof why);
    assert_non_null(o);
    assert_string_equal(o, "\\Bar\\b(?=\\w)b");
    free(o);
}

/* A deterministic random walk: patterns of up to 9 symbols over a small
** alphabet, each compared on every subject, and its translation too. */
static void test_random_patterns(void **state)
{
    (void)state;
    static const char alphabet[] = "ab.()|*+?{}[]^$\\,1-:";
    uint64_t x = 0x9e3779b97f4a7c15ULL;
    int compared = 0, translated = 0;
    for (int i = 0; i < 30000; i++) {
        char pattern[16];
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        size_t len = 1 + x % 9;
        uint64_t y = x;
        for (size_t k = 0; k < len; k++) {
            y = y * 6364136223846793005ULL + 1442695040888963407ULL;
            pattern[k] = alphabet[(y >> 33) % (sizeof alphabet - 1)];
        }
        pattern[len] = 0;
        if (tg_regex_refuse(pattern)) continue;   /* over regex_check's limits: not the dialect's business */
        compare(pattern);
        translated += compare_translation(pattern);
        compared++;
    }
    assert_true(compared > 20000);
    print_message("%d of %d random patterns translated\n", translated, compared);
    assert_true(translated > 10000);   /* most of the rest are invalid: refused as by glibc */
}

/* Measured: 9.7 (nccl.*AllReduce) and 17.3 ((a+)+$) steps per byte; a
** matcher that backtracks takes a number per byte that grows with the
** subject (about a million here). */
#define STEPS_PER_BYTE 64
/* The matcher's cost as work, not wall clock (the machine may be loaded):
** the steps a match was charged (tg_regex_match's budget, docs/limits.md),
** which must grow linearly with the subject. */
static int match_steps(const tg_regex *re, const char *s, size_t n, uint64_t *steps)
{
    uint64_t budget = TG_REGEX_STEP_BUDGET;
    int m = tg_regex_match(re, s, n, &budget);
    *steps += TG_REGEX_STEP_BUDGET - budget;
    return m;
}

/* The issue's cases (glibc: 9.5 s and 8.5 s) on subjects 6 and 25 times
** longer: each match takes a few steps per byte of the subject (linear),
** where glibc's backtracking took seconds. */
static void test_linear_time(void **state)
{
    (void)state;
    size_t n = 1 << 20;
    char *s = malloc(n + 1);
    assert_non_null(s);
    for (size_t i = 0; i < n; i += 4) memcpy(s + i, "nccl", 4);
    s[n] = 0;
    char why[256];
    tg_regex *re = tg_regex_compile("nccl.*AllReduce", why, sizeof why);
    assert_non_null(re);
    uint64_t nccl = 0, nested = 0;
    assert_int_equal(match_steps(re, s, n, &nccl), 0);
    memcpy(s + n - 9, "AllReduce", 9);
    assert_int_equal(match_steps(re, s, n, &nccl), 1);
    tg_regex_free(re);

    memset(s, 'a', n);
    s[n - 1] = 'b';
    re = tg_regex_compile("(a+)+$", why, sizeof why);
    assert_non_null(re);
    assert_int_equal(match_steps(re, s, n, &nested), 0);   /* the b at the end */
    s[n - 1] = 'a';
    assert_int_equal(match_steps(re, s, n, &nested), 1);
    s[n - 1] = 'b';
    tg_regex_free(re);
    re = tg_regex_compile("^(a+)+$", why, sizeof why);
    assert_non_null(re);
    assert_int_equal(match_steps(re, s, n, &nested), 0);
    tg_regex_free(re);
    free(s);
    fprintf(stderr, "1 MiB subjects: nccl.*AllReduce %.1f steps per byte, (a+)+$ %.1f steps per byte\n",
            (double)nccl / (2.0 * (double)n), (double)nested / (3.0 * (double)n));
    /* two matches of nccl.*AllReduce, three of the nested ones, each at
    ** most STEPS_PER_BYTE steps per byte of the 1 MiB subject */
    assert_true(nccl <= 2 * STEPS_PER_BYTE * (uint64_t)n);
    assert_true(nested <= 3 * STEPS_PER_BYTE * (uint64_t)n);
}

/* The step budget: a match is charged what it took; one that would take
** more answers -1 (undecided, never "no match") and spends the budget,
** after which every match answers -1 at once. */
static void test_step_budget(void **state)
{
    (void)state;
    char why[256];
    tg_regex *re = tg_regex_compile("(.*){1,255}z", why, sizeof why);
    assert_non_null(re);
    size_t n = 100000;
    char *s = malloc(n + 1);
    assert_non_null(s);
    memset(s, 'a', n);
    s[n] = 0;
    uint64_t budget = TG_REGEX_STEP_BUDGET;
    assert_int_equal(tg_regex_match(re, "az", 2, &budget), 1);
    uint64_t small = TG_REGEX_STEP_BUDGET - budget;
    assert_true(small > 0 && small < 10000);
    assert_int_equal(tg_regex_match(re, s, n, &budget), 0);   /* about 1,800 steps a byte */
    uint64_t spent = TG_REGEX_STEP_BUDGET - budget - small;
    assert_true(spent > 100 * n && spent < 10000 * n);
    uint64_t tight = spent / 2;
    assert_int_equal(tg_regex_match(re, s, n, &tight), -1);
    assert_int_equal(tight, 0);
    assert_int_equal(tg_regex_match(re, "az", 2, &tight), -1);
    uint64_t exact = spent;   /* what it took, it may take */
    assert_int_equal(tg_regex_match(re, s, n, &exact), 0);
    assert_int_equal(exact, 0);
    free(s);
    tg_regex_free(re);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_same_as_glibc),
        cmocka_unit_test(test_translation),
        cmocka_unit_test(test_random_patterns),
        cmocka_unit_test(test_linear_time),
        cmocka_unit_test(test_step_budget),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
