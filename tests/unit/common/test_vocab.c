/*
** The "did you mean" of every error message (tg_suggest, common/vocab.h):
** a swap of two neighbours is one edit (chekc -> check), case is free,
** far words get nothing, and the limit grows with the word; and the run
** states' names, verdicts and sentences (TG_RUN_STATE_LIST).
*/
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "common/vocab.h"

static const char *const commands[] = {"check", "info", "metrics", "rules", "explain", "baseline", "merge", "help"};
#define N_COMMANDS (sizeof commands / sizeof *commands)

static void test_transposition_is_one_edit(void **state)
{
    (void)state;
    assert_string_equal(tg_suggest("chekc", commands, N_COMMANDS), "check");
    assert_string_equal(tg_suggest("mrege", commands, N_COMMANDS), "merge");
    assert_string_equal(tg_suggest("exlpain", commands, N_COMMANDS), "explain");
    /* a three-letter word is allowed one edit: only a swap counted as one
    ** reaches `set` from `ste` */
    static const char *const opts[] = {"set", "jobs"};
    assert_string_equal(tg_suggest("ste", opts, 2), "set");
}

static void test_insert_delete_substitute(void **state)
{
    (void)state;
    static const char *const opts[] = {"format", "fail-on", "rules", "baseline", "set"};
    assert_string_equal(tg_suggest("frmat", opts, 5), "format");
    assert_string_equal(tg_suggest("fail-onn", opts, 5), "fail-on");
    assert_string_equal(tg_suggest("Format", opts, 5), "format");   /* case is free */
    static const char *const ids[] = {"gpu-idle-gap", "gpu-starvation", "low-gpu-utilization"};
    assert_string_equal(tg_suggest("gpu-idle-gaps", ids, 3), "gpu-idle-gap");
}

static void test_unique_prefix(void **state)
{
    (void)state;
    static const char *const levels[] = {"info", "warning", "error", "never"};
    assert_string_equal(tg_suggest("warn", levels, 4), "warning");
    static const char *const opts[] = {"straggler-threshold", "straggler-severity", "format"};
    assert_null(tg_suggest("straggler", opts, 3));   /* two names start with it */
    assert_null(tg_suggest("e", levels, 4));           /* one letter says too little */
}

static void test_far_words_get_nothing(void **state)
{
    (void)state;
    assert_null(tg_suggest("zzzzz", commands, N_COMMANDS));
    assert_null(tg_suggest("xy", commands, N_COMMANDS));
    assert_null(tg_suggest("check", commands, N_COMMANDS));   /* the word itself is no hint */
    assert_null(tg_suggest(NULL, commands, N_COMMANDS));
    char long_word[100];
    memset(long_word, 'a', sizeof long_word - 1);
    long_word[sizeof long_word - 1] = 0;
    assert_null(tg_suggest(long_word, commands, N_COMMANDS));
}

static void test_run_states(void **state)
{
    (void)state;
    assert_string_equal(tg_run_state_name(TG_RUN_PASS), "pass");
    assert_string_equal(tg_run_state_name(TG_RUN_FAIL), "fail");
    assert_string_equal(tg_run_state_name(TG_RUN_ERROR), "error");
    assert_string_equal(tg_run_state_name(TG_RUN_COUNT), "error");   /* out of range: the worst */
    assert_int_equal(tg_run_state_verdict(TG_RUN_PASS), TG_V_PASS);
    assert_int_equal(tg_run_state_verdict(TG_RUN_FAIL), TG_V_FAIL);
    assert_int_equal(tg_run_state_verdict(TG_RUN_ERROR), TG_V_ERROR);
    assert_string_equal(tg_run_state_sentence(TG_RUN_PASS), "The gate passed.");
    assert_string_equal(tg_run_state_sentence(TG_RUN_FAIL), "The gate failed.");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_transposition_is_one_edit),
        cmocka_unit_test(test_insert_delete_substitute),
        cmocka_unit_test(test_unique_prefix),
        cmocka_unit_test(test_far_words_get_nothing),
        cmocka_unit_test(test_run_states),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
