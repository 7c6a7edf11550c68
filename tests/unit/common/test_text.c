/*
** tg_text_escape (engine/common/text.h), the one escaping rule of every
** human-facing output: each class of hostile text (terminal sequences,
** C1 controls, invalid UTF-8, encoded surrogates, noncharacters, bidi
** controls, newlines before a workflow command, "##[" anywhere, a leading
** "::" after Unicode blanks, megabyte names) against the exact escaped
** form, then two exhaustive sweeps: every code point and every pair of
** bytes escapes to printable UTF-8 that XML accepts, with no "##" and no
** line that starts with "::". And tg_ends_with, the one suffix test.
*/
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "common/common.h"
#include "common/text.h"

static void fwrite_sink(void *ctx, const char *s, size_t n) { fwrite(s, 1, n, ctx); }

/* Escaped form of the len bytes at s; the test frees it. */
static char *esc_n(const char *s, size_t len, size_t cap, unsigned flags)
{
    char *out = NULL;
    size_t n = 0;
    FILE *f = open_memstream(&out, &n);
    assert_non_null(f);
    tg_text_escape(s, len, cap, flags, fwrite_sink, f);
    assert_int_equal(fclose(f), 0);
    return out;
}

static void expect(const char *in, unsigned flags, const char *want)
{
    char *got = esc_n(in, strlen(in), TG_TEXT_NO_CAP, flags);
    if (strcmp(got, want) != 0) fail_msg("escape(\"%s\") = \"%s\", want \"%s\"", in, got, want);
    free(got);
}

static void test_plain_text_passes(void **state)
{
    (void)state;
    expect("void at::native::vectorized_elementwise_kernel<4, float>(int)", 0,
           "void at::native::vectorized_elementwise_kernel<4, float>(int)");
    expect("ncclKernel_AllReduce_RING_LL_Sum_float", 0, "ncclKernel_AllReduce_RING_LL_Sum_float");
    expect("caf\xc3\xa9 \xe6\xbc\xa2 \xf0\x9f\x9a\x80 #1 a#b", 0, "caf\xc3\xa9 \xe6\xbc\xa2 \xf0\x9f\x9a\x80 #1 a#b");
    expect("C:\\path\\x1b", 0, "C:\\path\\x1b");   /* backslashes are not doubled */
    expect("", 0, "");
}

static void test_terminal_sequences(void **state)
{
    (void)state;
    expect("\x1b[2J\x1b[1;31mred", 0, "\\x1b[2J\\x1b[1;31mred");                     /* CSI */
    expect("\x1b]0;owned\x07title", 0, "\\x1b]0;owned\\x07title");                   /* OSC title */
    expect("\x1b]8;;http://x\x1b\\link\x1b]8;;\x1b\\", 0,
           "\\x1b]8;;http://x\\x1b\\link\\x1b]8;;\\x1b\\");                        /* OSC 8 hyperlink */
    expect("a\tb\rc\x7f\x01", 0, "a\\tb\\rc\\x7f\\x01");
    expect("\xc2\x9b" "31m \xc2\x85 \xc2\x80", 0, "\\u009b31m \\u0085 \\u0080");  /* C1 as characters */
    expect("\x9b" "31m", 0, "\\x9b31m");                                          /* C1 as a raw byte */
}

static void test_invalid_utf8_and_nonchars(void **state)
{
    (void)state;
    expect("a\xff\xfe" "b", 0, "a\\xff\\xfeb");
    expect("\xc0\x80", 0, "\\xc0\\x80");                             /* overlong NUL */
    expect("\xed\xa0\x80\xed\xbf\xbf", 0, "\\xed\\xa0\\x80\\xed\\xbf\\xbf");   /* encoded surrogates */
    expect("\xe2\x82", 0, "\\xe2\\x82");                             /* truncated sequence */
    expect("\xf4\x90\x80\x80", 0, "\\xf4\\x90\\x80\\x80");           /* above U+10FFFF */
    expect("\xef\xbf\xbe\xef\xbf\xbf", 0, "\\ufffe\\uffff");
    expect("\xef\xb7\x90", 0, "\\ufdd0");
    expect("\xf0\x9f\xbf\xbe \xf4\x8f\xbf\xbf", 0, "\\U0001fffe \\U0010ffff");
    expect("\xef\xbf\xbd", 0, "\xef\xbf\xbd");                       /* U+FFFD is a character */
    expect("abc\xe2\x80\xae" "cba", 0, "abc\\u202ecba");             /* right-to-left override */
    expect("\xe2\x81\xa6x\xe2\x81\xa9", 0, "\\u2066x\\u2069");
    expect("a\xe2\x80\xa8" "b", 0, "a\\u2028b");                     /* line separator */
}

static void test_ci_log_commands(void **state)
{
    (void)state;
    /* a value can never make a line of its own */
    expect("x\n::error::forged", 0, "x\\n::error::forged");
    expect("x\r\n::error::forged", 0, "x\\r\\n::error::forged");
    /* nor start one with a command, whatever blanks come first */
    expect("::error::forged", 0, "\\x3a:error::forged");
    expect("   ::warning::x", 0, "   \\x3a:warning::x");
    expect("\xc2\xa0\xe3\x80\x80::notice::x", 0, "\xc2\xa0\xe3\x80\x80\\x3a:notice::x");
    expect(":single", 0, ":single");
    expect("std::vector<int>::push_back", 0, "std::vector<int>::push_back");
    /* kept newlines: each line is checked */
    expect("one\n::error::two\n  ::x", TG_TEXT_KEEP_NEWLINES, "one\n\\x3a:error::two\n  \\x3a:x");
    /* the runner's legacy syntax is read anywhere in a line */
    expect("kernel ##[add-mask]secret", 0, "kernel #\\x23[add-mask]secret");
    expect("##vso[task.setvariable]x ###", 0, "#\\x23vso[task.setvariable]x #\\x23#");
}

static void test_cap(void **state)
{
    (void)state;
    size_t big = 1 << 20;
    char *name = malloc(big + 1);
    memset(name, 'k', big);
    name[big] = 0;
    char *out = esc_n(name, big, TG_TEXT_CAP_NAME, 0);
    assert_int_equal(strspn(out, "k"), TG_TEXT_CAP_NAME);
    assert_string_equal(out + TG_TEXT_CAP_NAME, "\xe2\x80\xa6(1048576 bytes)");
    free(out);
    /* cut at a character boundary, never inside an escape */
    out = esc_n("\xc3\xa9\xc3\xa9\xc3\xa9", 6, 3, 0);
    assert_string_equal(out, "\xc3\xa9\xe2\x80\xa6(6 bytes)");
    free(out);
    out = esc_n("ab\x1b\x1b", 4, 5, 0);
    assert_string_equal(out, "ab\xe2\x80\xa6(4 bytes)");
    free(out);
    /* exactly at the cap: nothing is cut */
    out = esc_n("abcd", 4, 4, 0);
    assert_string_equal(out, "abcd");
    free(out);
    char *dup = tg_text_dup(name, 16, 0);
    assert_string_equal(dup, "kkkkkkkkkkkkkkkk\xe2\x80\xa6(1048576 bytes)");
    free(dup);
    free(name);
    dup = tg_text_dup(NULL, 16, 0);
    assert_string_equal(dup, "");
    free(dup);
}

/* What every escaped text must be: valid UTF-8 of XML characters, no
** control but (with kept newlines) LF, no C1, noncharacter or bidi
** control, no "##", no line whose first non-blank characters are "::". */
static void check_clean(const char *in, size_t len, const char *out, unsigned flags)
{
    size_t n = strlen(out);
    bool line_start = true;
    for (size_t i = 0; i < n;) {
        size_t k = tg_utf8_seq((const unsigned char *)out + i, n - i);
        if (!k) fail_msg("invalid UTF-8 escaping %zu bytes starting %02x", len, (unsigned char)in[0]);
        uint32_t cp = (unsigned char)out[i];
        if (k > 1) {
            cp &= 0xFF >> (k + 1);
            for (size_t j = 1; j < k; j++) cp = cp << 6 | ((unsigned char)out[i + j] & 0x3F);
        }
        bool nl = cp == '\n' && (flags & TG_TEXT_KEEP_NEWLINES);
        if (!nl && (cp < 0x20 || cp == 0x7F || (cp >= 0x80 && cp <= 0x9F) || (cp & 0xFFFE) == 0xFFFE ||
                    (cp >= 0xFDD0 && cp <= 0xFDEF) || (cp >= 0x202A && cp <= 0x202E) || cp == 0x2028 ||
                    cp == 0x2029))
            fail_msg("U+%04X survives escaping (input starts %02x)", (unsigned)cp, (unsigned char)in[0]);
        if (cp == '#' && i > 0 && out[i - 1] == '#') fail_msg("\"##\" survives escaping");
        if (line_start && cp == ':' && out[i + 1] == ':') fail_msg("a line starts with \"::\"");
        bool blank = cp == ' ' || cp == 0xA0 || cp == 0x1680 || (cp >= 0x2000 && cp <= 0x200A) ||
                     cp == 0x202F || cp == 0x205F || cp == 0x3000;
        if (!blank) line_start = nl;
        i += k;
    }
}

static void test_every_code_point(void **state)
{
    (void)state;
    for (uint32_t cp = 0; cp <= 0x10FFFF; cp++) {
        if (cp >= 0xD800 && cp <= 0xDFFF) continue;
        char in[8];
        size_t len;
        if (cp < 0x80) { in[0] = (char)cp; len = 1; }
        else if (cp < 0x800) { in[0] = (char)(0xC0 | cp >> 6); in[1] = (char)(0x80 | (cp & 0x3F)); len = 2; }
        else if (cp < 0x10000) {
            in[0] = (char)(0xE0 | cp >> 12); in[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
            in[2] = (char)(0x80 | (cp & 0x3F)); len = 3;
        } else {
            in[0] = (char)(0xF0 | cp >> 18); in[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
            in[2] = (char)(0x80 | ((cp >> 6) & 0x3F)); in[3] = (char)(0x80 | (cp & 0x3F)); len = 4;
        }
        in[len] = ':';     /* a ':' pair after each, to test the line-start rule too */
        in[len + 1] = ':';
        char *out = esc_n(in, len + 2, TG_TEXT_NO_CAP, cp & 1 ? TG_TEXT_KEEP_NEWLINES : 0);
        check_clean(in, len + 2, out, cp & 1 ? TG_TEXT_KEEP_NEWLINES : 0);
        free(out);
    }
}

static void test_every_byte_pair(void **state)
{
    (void)state;
    for (unsigned a = 0; a < 256; a++)
        for (unsigned b = 0; b < 256; b++) {
            char in[4] = {(char)a, (char)b, '#', '#'};
            for (unsigned flags = 0; flags <= TG_TEXT_KEEP_NEWLINES; flags++) {
                char *out = esc_n(in, 4, TG_TEXT_NO_CAP, flags);
                check_clean(in, 4, out, flags);
                free(out);
            }
        }
}

static void test_ends_with(void **state)
{
    (void)state;
    assert_true(tg_ends_with("run.nsys-rep", ".nsys-rep"));
    assert_true(tg_ends_with(".qdrep", ".qdrep"));       /* the whole string */
    assert_true(tg_ends_with("x", ""));
    assert_false(tg_ends_with("run.nsys-rep.sqlite", ".nsys-rep"));
    assert_false(tg_ends_with("rep", ".qdrep"));          /* shorter than the suffix */
}

/* A folder joined with a name: its trailing slashes go, so "dup/" and
** "dup//" name "dup/r1copy.json", never "dup//r1copy.json". */
static void test_path_join(void **state)
{
    (void)state;
    static const char *const dirs[][2] = {{"dup", "dup/r"}, {"dup/", "dup/r"}, {"dup//", "dup/r"},
                                          {"/", "/r"}, {"//", "/r"}, {"a/b/", "a/b/r"}};
    for (size_t i = 0; i < sizeof dirs / sizeof *dirs; i++) {
        char buf[64];
        snprintf(buf, sizeof buf, "%.*s/%s", tg_path_dir_len(dirs[i][0]), dirs[i][0], "r");
        assert_string_equal(buf, dirs[i][1]);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_plain_text_passes),
        cmocka_unit_test(test_ends_with),
        cmocka_unit_test(test_terminal_sequences),
        cmocka_unit_test(test_invalid_utf8_and_nonchars),
        cmocka_unit_test(test_ci_log_commands),
        cmocka_unit_test(test_cap),
        cmocka_unit_test(test_every_code_point),
        cmocka_unit_test(test_every_byte_pair),
        cmocka_unit_test(test_path_join),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
