/*
** SARIF with a real rule set: the driver's rules come from the compiled
** rules (enabled ones, in file order, with tags, explain text and advice),
** rules that only results name are appended, and every result's ruleIndex
** points at its rule.
*/
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>
#include <jansson.h>

#include "run_fixture.h"

static const char rules_yaml[] =
    "version: 1\n"
    "rules:\n"
    "  - id: low-gpu-utilization\n"
    "    title: Low GPU utilization\n"
    "    severity: warning\n"
    "    tags: [gpu, utilization]\n"
    "    source: device\n"
    "    fail_when: min(busy_frac) < 50%\n"
    "    message: \"busy {min(busy_frac)}\"\n"
    "  - id: sync-memcpy\n"
    "    title: Synchronous memcpy blocks the host\n"
    "    severity: error\n"
    "    tags: [memcpy, host-sync]\n"
    "    source: memcpy\n"
    "    where: api_sync\n"
    "    fail_when: count > 0\n"
    "    message: \"{count} synchronous copies\"\n"
    "    advice: Use pinned memory.\n"
    "    explain: A blocking copy stalls the host.\n"
    "  - id: unused-rule\n"
    "    title: A rule no result names\n"
    "    severity: info\n"
    "    source: kernel\n"
    "    fail_when: count > 1000000\n"
    "    message: \"{count} kernels\"\n"
    "  - id: switched-off\n"
    "    title: Disabled\n"
    "    severity: info\n"
    "    enabled: false\n"
    "    source: kernel\n"
    "    fail_when: count > 0\n"
    "    message: \"{count}\"\n";

static void test_sarif_with_ruleset(void **state)
{
    (void)state;
    char path[] = "/tmp/tg-sarif-rules-XXXXXX.yaml";
    int fd = mkstemps(path, 5);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, rules_yaml, sizeof rules_yaml - 1), (ssize_t)(sizeof rules_yaml - 1));
    close(fd);
    const char *paths[] = {path};
    tg_diag diag;
    tg_diag_init(&diag);
    tg_ruleset *rs = tg_rules_load(paths, 1, NULL, 0, &diag);
    for (size_t i = 0; i < diag.n; i++) fprintf(stderr, "rules: %s\n", diag.msgs[i].text);
    assert_non_null(rs);
    tg_diag_clear(&diag);

    tg_run_result run;
    fixture_run(&run);
    tg_report_opts opts = {.fail_on = TG_SEV_ERROR, .tool_version = "9.9.9"};
    char *text = fixture_render(TG_FMT_SARIF, &run, rs, &opts);
    json_error_t jerr;
    json_t *doc = json_loads(text, 0, &jerr);
    assert_non_null(doc);
    json_t *r0 = json_array_get(json_object_get(doc, "runs"), 0);
    json_t *rules = json_object_get(json_object_get(json_object_get(r0, "tool"), "driver"), "rules");
    static const char *const ids[] = {"low-gpu-utilization", "sync-memcpy", "unused-rule",
                                      "pageable-async-memcpy", "gpu-idle-gap", "iteration-variance",
                                      "gpu-time-regression", "iteration-time-regression", "team:note,rule"};
    assert_int_equal(json_array_size(rules), 9);
    for (size_t i = 0; i < 9; i++)
        assert_string_equal(json_string_value(json_object_get(json_array_get(rules, i), "id")), ids[i]);
    json_t *sync = json_array_get(rules, 1);
    assert_non_null(strstr(json_string_value(json_object_get(json_object_get(sync, "fullDescription"), "text")),
                           "A blocking copy stalls the host."));
    assert_string_equal(json_string_value(json_object_get(json_object_get(sync, "help"), "text")),
                        "Use pinned memory.");
    json_t *tags = json_object_get(json_object_get(sync, "properties"), "tags");
    assert_int_equal(json_array_size(tags), 2);
    assert_string_equal(json_string_value(json_array_get(tags, 1)), "host-sync");
    assert_null(json_object_get(json_array_get(rules, 0), "fullDescription"));

    size_t i;
    json_t *res;
    json_array_foreach(json_object_get(r0, "results"), i, res) {
        json_int_t idx = json_integer_value(json_object_get(res, "ruleIndex"));
        assert_string_equal(json_string_value(json_object_get(json_array_get(rules, (size_t)idx), "id")),
                            json_string_value(json_object_get(res, "ruleId")));
    }
    json_decref(doc);
    free(text);
    tg_arena_free(run.arena);
    tg_rules_free(rs);
    unlink(path);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sarif_with_ruleset),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
