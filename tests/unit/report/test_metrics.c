/*
** metrics' counts take what the built-in rules define from the loaded rule
** set, not from a copy in C (issue #15): the small host-to-device exemption
** of sync_memcpy is sync-memcpy's small_htod, the memory kinds of
** sync_memset the host_visible list. Editing rules.d/10-host-sync.yaml
** changes the counts; a rule set that no longer defines them is refused
** with one sentence naming what is missing.
*/
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include <jansson.h>

#include "fixture.h"
#include "report/metrics.h"
#include "tg_config.h"

/* Three blocking host-to-device copies of 1000, 64000 and 500000 bytes;
** three blocking memsets, of pinned, managed and device memory. */
static const char *const rows =
    "INSERT INTO StringIds VALUES (1, 'cudaMemcpy'), (2, 'cudaMemset');"
    "INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME (start, end, globalTid, correlationId, nameId) VALUES"
    " (100, 900, (1 << 24) | 1, 1, 1), (1100, 1900, (1 << 24) | 1, 2, 1), (2100, 2900, (1 << 24) | 1, 3, 1),"
    " (3100, 3900, (1 << 24) | 1, 4, 2), (4100, 4900, (1 << 24) | 1, 5, 2), (5100, 5900, (1 << 24) | 1, 6, 2);"
    "INSERT INTO CUPTI_ACTIVITY_KIND_MEMCPY (start, end, deviceId, streamId, correlationId, globalPid, bytes,"
    " copyKind, srcKind, dstKind) VALUES (200, 800, 0, 7, 1, 1 << 24, 1000, 1, 1, 2),"
    " (1200, 1800, 0, 7, 2, 1 << 24, 64000, 1, 1, 2), (2200, 2800, 0, 7, 3, 1 << 24, 500000, 1, 1, 2);"
    "INSERT INTO CUPTI_ACTIVITY_KIND_MEMSET (start, end, deviceId, streamId, correlationId, globalPid, bytes,"
    " memKind) VALUES (3200, 3800, 0, 7, 4, 1 << 24, 4096, 1), (4200, 4800, 0, 7, 5, 1 << 24, 4096, 4),"
    " (5200, 5800, 0, 7, 6, 1 << 24, 4096, 2);";

/* The built-in host-sync rules, with `from` replaced by `to` (or as they
** are when from is NULL). */
static char *host_sync(const char *from, const char *to)
{
    FILE *f = fopen(TG_SOURCE_ROOT "/rules.d/10-host-sync.yaml", "r");
    assert_non_null(f);
    static char text[1 << 16];
    size_t n = fread(text, 1, sizeof text - 1, f);
    fclose(f);
    text[n] = 0;
    char *out = malloc(n + (to ? strlen(to) : 0) + 1);
    assert_non_null(out);
    char *at = from ? strstr(text, from) : NULL;
    if (from) assert_non_null(at);
    if (!at) {
        strcpy(out, text);
    } else {
        size_t k = (size_t)(at - text);
        memcpy(out, text, k);
        strcpy(out + k, to);
        strcat(out, at + strlen(from));
    }
    return out;
}

/* sync_memcpy and sync_memset of the fixture under the given rule text. */
static void counts(const char *rule_text, json_int_t *memcpys, json_int_t *memsets)
{
    tg_diag d;
    tg_diag_init(&d);
    tg_rules_text t = {"10-host-sync.yaml", rule_text};
    tg_ruleset *rs = tg_rules_load_texts(&t, 1, NULL, 0, &d);
    assert_non_null(rs);
    tg_metrics_defs *defs = tg_metrics_defs_new(rs, &d);
    tg_rules_free(rs);   /* the definitions need not outlive it */
    assert_non_null(defs);
    char *path = tg_fixture_build(tg_fixture_schema_3_0, rows);
    assert_non_null(path);
    tg_trace *tr = tg_trace_open(path, &d);
    assert_non_null(tr);
    tg_model *m = tg_model_build(tr, NULL, &d);
    assert_non_null(m);
    json_t *doc = tg_metrics_json(m, defs);
    assert_non_null(doc);
    *memcpys = json_integer_value(json_object_get(doc, "sync_memcpy"));
    *memsets = json_integer_value(json_object_get(doc, "sync_memset"));
    json_decref(doc);
    tg_model_free(m);
    tg_trace_close(tr);
    tg_fixture_remove(path);
    tg_metrics_defs_free(defs);
    tg_diag_clear(&d);
}

static void test_counts_follow_the_rules(void **state)
{
    (void)state;
    json_int_t c, s;
    char *text = host_sync(NULL, NULL);
    counts(text, &c, &s);
    free(text);
    assert_int_equal(c, 1);   /* the 500000-byte copy: up to 64 KB are exempt */
    assert_int_equal(s, 2);   /* pinned and managed */
    text = host_sync("small_htod: 64KB", "small_htod: 1MB");
    counts(text, &c, &s);
    free(text);
    assert_int_equal(c, 0);
    assert_int_equal(s, 2);
    text = host_sync("small_htod: 64KB", "small_htod: 999B");
    counts(text, &c, &s);
    free(text);
    assert_int_equal(c, 3);
    text = host_sync("host_visible: [pinned, managed]", "host_visible: [device]");
    counts(text, &c, &s);
    free(text);
    assert_int_equal(c, 1);
    assert_int_equal(s, 1);
}

/* Definitions the built-in rules no longer hold: one error naming them. */
static void test_missing_definitions(void **state)
{
    (void)state;
    static const struct { const char *from, *to, *named; } cases[] = {
        {"host_visible: [pinned, managed]", "visible: [pinned, managed]", "the list host_visible"},
        {"small_htod: 64KB", "smallest: 64KB", "the param sync-memcpy.small_htod"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char *text = host_sync(cases[i].from, cases[i].to);
        /* the rule itself must still load: it reads the renamed one */
        if (strstr(cases[i].to, "visible:")) {
            char *at = strstr(text, "mem_kind in host_visible");
            assert_non_null(at);
            memcpy(at, "mem_kind in visible     ", strlen("mem_kind in host_visible"));
        } else {
            char *at = strstr(text, "params.small_htod");
            assert_non_null(at);
            memcpy(at, "params.smallest  ", strlen("params.small_htod"));
        }
        tg_diag d;
        tg_diag_init(&d);
        tg_rules_text t = {"10-host-sync.yaml", text};
        tg_ruleset *rs = tg_rules_load_texts(&t, 1, NULL, 0, &d);
        if (!rs && d.n) print_message("%s\n", d.msgs[0].text);
        assert_non_null(rs);
        assert_null(tg_metrics_defs_new(rs, &d));
        assert_int_equal(d.n_errors, 1);
        assert_int_equal(d.status, TG_EUSAGE);
        assert_non_null(strstr(d.msgs[0].text, cases[i].named));
        assert_non_null(strstr(d.msgs[0].text, "of the built-in rules, which they do not define"));
        tg_rules_free(rs);
        tg_diag_clear(&d);
        free(text);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_counts_follow_the_rules),
        cmocka_unit_test(test_missing_definitions),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
