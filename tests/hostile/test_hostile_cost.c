/*
** Inputs whose cost grew faster than their size (issue #16, "Hangs and
** blow-ups"): many ops and calls sharing one correlation id (the launch
** join was quadratic in them), keys crafted to collide in the join's hash
** tables, long kernel names under backtracking-prone patterns, and macros
** that expand exponentially (in size, and in work per row). Each runs the binary under the hostile
** CPU budget (hostile.h: CPU time, which a loaded machine does not
** change) and checks the answer as well as the cost: a fast wrong answer
** is no fix.
*/
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "fixture.h"
#include "hostile.h"

#define N_DUP 200000
#define STR(x) #x
#define XSTR(x) STR(x)

#define SERIES(n) "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < " n ") "
#define STRINGS "INSERT INTO StringIds VALUES (1, 'k'), (2, 'cudaLaunchKernel'), (3, 'cudaMemcpy'), " \
                "(4, 'cudaLaunchKernel_v7000');"

/* metrics --format json on rows: exit 0 in time, and the document holds
** every one of the NULL-terminated parts. */
static void expect_metrics(const char *what, const char *rows, ...)
{
    char *p = tg_fixture_build(tg_fixture_schema_3_0, rows);
    assert_non_null(p);
    hx_result r;
    hx_run(&r, "metrics", "--format", "json", p);
    hx_expect_warnings(what, &r, 0, 0, NULL);
    va_list ap;
    va_start(ap, rows);
    for (const char *part; (part = va_arg(ap, const char *));)
        if (!strstr(r.out, part)) fail_msg("%s: the metrics lack %s (queue: %.200s)", what, part, strstr(r.out, "queue") ? strstr(r.out, "queue") : "none");
    va_end(ap);
    hx_free(&r);
    tg_fixture_remove(p);
}

/* 200,000 kernels of one process under one correlation id, one call: the
** call launches them all, and only the first has a queue time, 1010 - 20 ns
** (docs/rules.md, "CUDA graphs": the others waited for it, not the host). */
static void test_kernels_sharing_an_id(void **state)
{
    (void)state;
    expect_metrics("200000 kernels sharing one correlation id",
        STRINGS SERIES(XSTR(N_DUP))
        "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL (start, end, deviceId, streamId, correlationId, globalPid,"
        " demangledName) SELECT 1000 + x * 10, 1005 + x * 10, 0, 7, 7, 1 << 24, 1 FROM c;"
        "INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME (start, end, globalTid, correlationId, nameId)"
        " VALUES (10, 20, (1 << 24) | 1, 7, 2);",
        "\"kernels\": 200000", "\"api_calls\": 1,", "\"queue_p50_ns\": 990,", "\"queue_kernels\": 1,", NULL);
}

/* The same with 1 MiB device-to-host copies, launched by a blocking
** cudaMemcpy: every one is a synchronous copy. */
static void test_copies_sharing_an_id(void **state)
{
    (void)state;
    expect_metrics("200000 copies sharing one correlation id",
        STRINGS SERIES(XSTR(N_DUP))
        "INSERT INTO CUPTI_ACTIVITY_KIND_MEMCPY (start, end, deviceId, streamId, correlationId, globalPid,"
        " bytes, copyKind, srcKind, dstKind) SELECT 1000 + x * 10, 1005 + x * 10, 0, 7, 7, 1 << 24, 1 << 20, 2, 2, 0"
        " FROM c;"
        "INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME (start, end, globalTid, correlationId, nameId)"
        " VALUES (10, 20, (1 << 24) | 1, 7, 3);",
        "\"memcpys\": 200000", "\"api_calls\": 1,", "\"sync_memcpy\": 200000", NULL);
}

/* 100,000 kernels and 100,000 calls (cudaMemcpy and cudaLaunchKernel by
** turns) under one id. A call whose id the previous holder had under the
** same name is its twin (model_join.c): the copies make one call, the
** launches 50,000. The first launch (end 22) launches every kernel, and
** only the first of them has a queue time (2000010 - 22 ns), the later
** launches none. */
static void test_calls_and_kernels_sharing_an_id(void **state)
{
    (void)state;
    expect_metrics("100000 kernels and 100000 calls sharing one correlation id",
        STRINGS SERIES("100000")
        "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL (start, end, deviceId, streamId, correlationId, globalPid,"
        " demangledName) SELECT 2000000 + x * 10, 2000005 + x * 10, 0, 7, 7, 1 << 24, 1 FROM c;"
        SERIES("100000")
        "INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME (start, end, globalTid, correlationId, nameId)"
        " SELECT x * 10, x * 10 + 2, (1 << 24) | 1, 7, 2 + (x % 2) FROM c;",
        "\"kernels\": 100000", "\"api_calls\": 50001,", "\"duplicate_api_rows\": 49999",
        "\"queue_p50_ns\": 1999988,", "\"queue_kernels\": 1,", NULL);
}

/* 200,000 rows of one call (its twins, as old exports record a call twice,
** many times over): one call, the others duplicates of it. */
static void test_call_twins_by_the_thousand(void **state)
{
    (void)state;
    expect_metrics("200000 twins of one call",
        STRINGS SERIES(XSTR(N_DUP))
        "INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME (start, end, globalTid, correlationId, nameId)"
        " SELECT x * 10, x * 10 + 2, (1 << 24) | 1, 7, 2 + 2 * (x % 2) FROM c;"
        "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL (start, end, deviceId, streamId, correlationId, globalPid,"
        " demangledName) VALUES (3000000, 3000005, 0, 7, 7, 1 << 24, 1);",
        "\"api_calls\": 1,", "\"duplicate_api_rows\": 199999", NULL);
}

/* ---------------------------------------------------------------- crafted collisions */

/* SQL text built in one growing buffer. */
typedef struct sqlbuf {
    char *s;
    size_t n, cap;
} sqlbuf;

static void sql_add(sqlbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void sql_add(sqlbuf *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    assert_true(n >= 0);
    if (b->n + (size_t)n + 1 > b->cap) {
        b->cap = (b->n + (size_t)n + 1) * 2;
        b->s = realloc(b->s, b->cap);
        assert_non_null(b->s);
    }
    va_start(ap, fmt);
    vsnprintf(b->s + b->n, (size_t)n + 1, fmt, ap);
    va_end(ap);
    b->n += (size_t)n;
}

/* x * inverse(k) = 1 mod 2^64, k odd (Newton's iteration). */
static uint64_t inverse(uint64_t k)
{
    uint64_t x = k;
    for (int i = 0; i < 6; i++) x *= 2 - k * x;
    return x;
}

/* The inverse of x ^= x >> s. */
static uint64_t unxorshift(uint64_t y, int s)
{
    uint64_t x = y;
    for (int i = 0; i < 64 / s + 1; i++) x = y ^ (x >> s);
    return x;
}

/* The correlation id of process 1 that the launch join's unseeded hash
** (model_join.c before issue #16) put in slot 0 of every table up to 2^32
** slots: x3 = i << 32 | i keeps the low bits of x3 ^ x3 >> 32 at zero. */
static int64_t colliding_id(uint64_t i)
{
    uint64_t x3 = i << 32 | i;   /* x3 ^ x3 >> 32 has i ^ i = 0 in its low 32 bits */
    uint64_t x1 = unxorshift(x3 * inverse(0xbf58476d1ce4e5b9ULL), 29);
    return (int64_t)((x1 ^ 0xc2b2ae3d27d4eb4fULL) * inverse(0x9e3779b97f4a7c15ULL));
}

/* 200,000 kernels and their calls under distinct ids that all shared one
** slot of the fixed hash (the base took 32 s); the answer must not change. */
static void test_colliding_correlation_ids(void **state)
{
    (void)state;
    sqlbuf b = {0};
    sql_add(&b, STRINGS);
    for (uint64_t i = 1; i <= N_DUP; i++) {
        int64_t id = colliding_id(i);
        sql_add(&b, "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL (start, end, deviceId, streamId, correlationId,"
                    " globalPid, demangledName) VALUES (%llu, %llu, 0, 7, %lld, 1 << 24, 1);"
                    "INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME (start, end, globalTid, correlationId, nameId)"
                    " VALUES (%llu, %llu, (1 << 24) | 1, %lld, 2);",
                (unsigned long long)(1000 + i * 10), (unsigned long long)(1005 + i * 10), (long long)id,
                (unsigned long long)(i * 10), (unsigned long long)(i * 10 + 2), (long long)id);
    }
    /* every kernel waits 998 ns after its call ends */
    expect_metrics("200000 correlation ids crafted to collide", b.s, "\"kernels\": 200000",
                   "\"api_calls\": 200000,", "\"queue_ns_p50\": 998.0", NULL);
    free(b.s);
}

/* 200,000 string ids the trace layer's unseeded id map (x ^= x >> 33;
** x *= C; x ^= x >> 33) put in one slot: y = i << 32, inverted. */
static void test_colliding_string_ids(void **state)
{
    (void)state;
    sqlbuf b = {0};
    sql_add(&b, "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL (start, end, deviceId, streamId, correlationId, globalPid,"
                " demangledName) VALUES (1000, 2000, 0, 7, 1, 1 << 24, %lld);",
            (long long)unxorshift(unxorshift((uint64_t)N_DUP << 32, 33) * inverse(0xff51afd7ed558ccdULL), 33));
    for (uint64_t i = 1; i <= N_DUP; i++) {
        uint64_t id = unxorshift(unxorshift(i << 32, 33) * inverse(0xff51afd7ed558ccdULL), 33);
        sql_add(&b, "INSERT INTO StringIds VALUES (%lld, 'name %llu');", (long long)id, (unsigned long long)i);
    }
    expect_metrics("200000 string ids crafted to collide", b.s, "\"kernels\": 1,", NULL);
    /* the kernel's name is the last of them, found through the map */
    char *dir = hx_tempdir(), *rules = hx_path(dir, "named.yaml");
    static const char rule[] =
        "version: 1\nrules:\n  - id: named\n    title: the last name\n    severity: error\n"
        "    source: kernel\n    where: name == \"name 200000\"\n    fail_when: count > 0\n"
        "    message: \"{count} kernel named so\"\n";
    hx_write_file(rules, rule, sizeof rule - 1);
    char *p = tg_fixture_build(tg_fixture_schema_3_0, b.s);
    assert_non_null(p);
    hx_result r;
    hx_run(&r, "check", "--rules", rules, p);
    hx_expect_warnings("check, 200000 string ids crafted to collide", &r, 1, 0, NULL);
    if (!strstr(r.out, "1 kernel named so")) fail_msg("the kernel's name was not found: %s", r.out);
    hx_free(&r);
    tg_fixture_remove(p);
    hx_rmtree(dir);
    free(rules);
    free(dir);
    free(b.s);
}

/* FNV-1a's low K bits depend on the low K bits of its state only, so two
** 4-byte blocks that agree there from one state agree from then on (3-byte
** blocks cannot: 24 bits in, 24 out, nearly a permutation): 18 such pairs,
** one after the other, make 2^19 names sharing the low 24 bits of their
** hash (a Joux multicollision), which the unseeded string pool put in one
** slot. */
#define FNV_K 24
#define FNV_STEPS 19

#define BLK 4

static uint64_t fnv_block(uint64_t h, const unsigned char *blk)
{
    for (int i = 0; i < BLK; i++) h = (h ^ blk[i]) * 1099511628211ULL;
    return h;
}

/* The c-th printable block, every byte varying from one c to the next
** (blocks whose last bytes stay fixed are nearly a permutation again). */
static void block_of(uint32_t c, unsigned char *blk)
{
    uint64_t x = (uint64_t)c * 0x9e3779b97f4a7c15ULL;
    x ^= x >> 31;
    for (int i = 0; i < BLK; i++, x /= 94) blk[i] = (unsigned char)('!' + x % 94);
}

/* Two printable blocks whose hashes from h agree in the low FNV_K bits. */
static void fnv_pair(uint64_t h, unsigned char pair[2][BLK], uint64_t *next)
{
    enum { SLOTS = 1 << 16 };
    uint32_t *low = malloc(SLOTS * sizeof *low), *code = malloc(SLOTS * sizeof *code);
    assert_true(low && code);
    memset(code, 0xff, SLOTS * sizeof *code);
    const uint64_t mask = ((uint64_t)1 << FNV_K) - 1;
    for (uint32_t c = 0;; c++) {
        assert_true(c < SLOTS / 2);   /* a birthday collision comes after about 5,000 */
        unsigned char blk[BLK];
        block_of(c, blk);
        uint32_t v = (uint32_t)(fnv_block(h, blk) & mask);
        uint32_t j = (v * 2654435761u) >> 16;
        for (; code[j] != UINT32_MAX && low[j] != v; j = (j + 1) & (SLOTS - 1)) {}
        if (code[j] == UINT32_MAX) {
            low[j] = v;
            code[j] = c;
            continue;
        }
        block_of(code[j], pair[0]);
        memcpy(pair[1], blk, BLK);
        *next = fnv_block(h, blk);
        break;
    }
    free(low);
    free(code);
}

static void test_colliding_names(void **state)
{
    (void)state;
    unsigned char pairs[FNV_STEPS][2][BLK];
    uint64_t h = 1469598103934665603ULL;
    for (int s = 0; s < FNV_STEPS; s++) fnv_pair(h, pairs[s], &h);
    sqlbuf b = {0};
    sql_add(&b, STRINGS);
    for (uint32_t m = 0; m < (1u << FNV_STEPS); m++) {
        char name[BLK * FNV_STEPS + 1];
        for (int s = 0; s < FNV_STEPS; s++) memcpy(name + BLK * s, pairs[s][m >> s & 1], BLK);
        name[BLK * FNV_STEPS] = 0;
        sql_add(&b, "INSERT INTO StringIds VALUES (%u, '", 100 + m);
        for (const char *c = name; *c; c++) sql_add(&b, *c == '\'' ? "''" : "%c", *c);
        sql_add(&b, "');");
    }
    expect_metrics("524288 names crafted to collide", b.s, "\"kernels\": 0,", NULL);
    free(b.s);
}

/* ---------------------------------------------------------------- regular expressions */

/* check --rules with one kernel rule `where: name matches PATTERN` on
** kernels named by `names` (SQL expressions): exit `status`, the report
** holding `want`. */
static void expect_kernel_rule(const char *what, const char *pattern, const char *const *names, size_t n,
                               int status, const char *want)
{
    sqlbuf b = {0};
    for (size_t i = 0; i < n; i++) {
        sql_add(&b, "INSERT INTO StringIds VALUES (%zu, %s);", i + 1, names[i]);
        sql_add(&b, "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL (start, end, deviceId, streamId, correlationId,"
                    " globalPid, demangledName) VALUES (%zu, %zu, 0, 7, %zu, 1 << 24, %zu);",
                1000 * (i + 1), 1000 * (i + 1) + 500, i + 1, i + 1);
    }
    char *p = tg_fixture_build(tg_fixture_schema_3_0, b.s);
    assert_non_null(p);
    char *dir = hx_tempdir(), *rules = hx_path(dir, "match.yaml");
    sqlbuf r = {0};
    sql_add(&r, "version: 1\nrules:\n  - id: matching\n    title: t\n    severity: error\n    source: kernel\n"
                "    where: name matches \"%s\"\n    fail_when: count > 0\n    message: \"{count} kernels\"\n",
            pattern);
    hx_write_file(rules, r.s, r.n);
    hx_result res;
    hx_run(&res, "check", "--rules", rules, p);
    hx_expect_warnings(what, &res, status, 0, NULL);
    if (!strstr(res.out, want)) fail_msg("%s: the report lacks \"%s\":\n%.2000s", what, want, res.out);
    hx_free(&res);
    hx_rmtree(dir);
    free(rules);
    free(dir);
    free(r.s);
    free(b.s);
    tg_fixture_remove(p);
}

static void expect_kernel_matches(const char *what, const char *pattern, const char *const *names, size_t n,
                                  int matching)
{
    char want[64];
    snprintf(want, sizeof want, "%d kernels", matching);
    expect_kernel_rule(what, pattern, names, n, 1, want);
}

/* The cases: with glibc's regexec, 9.5 s on a 160 KB name and
** 8.5 s on 40 KB, growing with the square; linear now. */
static void test_regex_on_long_names(void **state)
{
    (void)state;
    static const char *const nccl[] = {
        "replace(printf('%.*c', 40000, 'x'), 'x', 'nccl')",   /* 160 KB, no AllReduce */
        "'ncclKernel_AllReduce_RING_LL_Sum_float'",
    };
    expect_kernel_matches("nccl.*AllReduce on a 160 KB name", "nccl.*AllReduce", nccl, 2, 1);
    static const char *const as[] = {"printf('%.*c', 40000, 'a') || 'b'", "'aaa'", "'b'"};
    expect_kernel_matches("(a+)+$ on a 40 KB name", "(a+)+$", as, 3, 1);
}

/* Linear is not bounded: a pattern at the limits costs about 1,800 steps
** per byte of name, and ten distinct 1 MiB names took 55 s (these three,
** 16 s). The matcher
** stops at the rule's step budget (docs/limits.md, "Matching cost") and
** the rule cannot be decided: exit 4, never a pass. */
static void test_regex_step_budget(void **state)
{
    (void)state;
    static const char *const names[] = {
        "printf('%.*c', 1048576, 'a')", "printf('%.*c', 1048576, 'b')", "printf('%.*c', 1048576, 'c')",
    };
    expect_kernel_rule("(.*){1,255}z on three 1 MiB names", "(.*){1,255}z", names, 3, 4,
                       "rule matching cannot be decided: its regular expression \"(.*){1,255}z\" hit a limit of "
                       "the matcher on a string of 1048576 bytes (docs/limits.md)");
}

/* The iteration pattern goes through the same matcher, with a budget for
** all the names of a trace. */
static void test_iteration_pattern_step_budget(void **state)
{
    (void)state;
    char *p = tg_fixture_build(tg_fixture_schema_3_0,
        "INSERT INTO NVTX_EVENTS (start, end, eventType, text, globalTid) VALUES"
        " (0, 100, 59, printf('%.*c', 1048576, 'a'), (1 << 24) | 1),"
        " (200, 300, 59, printf('%.*c', 1048576, 'b'), (1 << 24) | 1),"
        " (400, 500, 59, printf('%.*c', 1048576, 'c'), (1 << 24) | 1);");
    assert_non_null(p);
    hx_result r;
    hx_run(&r, "metrics", "--iteration-pattern", "(.*){1,255}z", p);
    hx_expect_line("--iteration-pattern (.*){1,255}z, three 1 MiB names", &r, 4,
                   "the iteration pattern \"(.*){1,255}z\" hit a limit of the matcher on an NVTX range name of "
                   "1048576 bytes (docs/limits.md)");
    hx_free(&r);
    tg_fixture_remove(p);
}

/* The iteration pattern goes through the same matcher. */
static void test_iteration_pattern_on_long_names(void **state)
{
    (void)state;
    char *p = tg_fixture_build(tg_fixture_schema_3_0,
        "INSERT INTO NVTX_EVENTS (start, end, eventType, text, globalTid) VALUES"
        " (0, 100, 59, printf('%.*c', 40000, 'a') || 'b', (1 << 24) | 1),"
        " (200, 300, 59, 'aaaa', (1 << 24) | 1), (400, 500, 59, 'aa', (1 << 24) | 1);");
    assert_non_null(p);
    hx_result r;
    hx_run(&r, "metrics", "--format", "json", "--iteration-pattern", "(a+)+$", p);
    hx_expect_warnings("--iteration-pattern (a+)+$ on a 40 KB NVTX name", &r, 0, 0, NULL);
    if (!strstr(r.out, "\"iterations\": 2,")) fail_msg("two iterations expected:\n%.2000s", r.out);
    hx_free(&r);
    tg_fixture_remove(p);
}

/* ---------------------------------------------------------------- macros */

/* A rule file whose macro m<i> uses m<i-1> `uses` times (m0: name == "x",
** which no kernel is called), with `rules` rules whose where is `where`. */
static char *macro_file(const char *dir, int levels, int uses, int rules, const char *where)
{
    sqlbuf b = {0};
    sql_add(&b, "version: 1\nmacros:\n  m0: name == \"x\"\n");
    for (int i = 1; i <= levels; i++) {
        sql_add(&b, "  m%d: m%d", i, i - 1);
        for (int k = 1; k < uses; k++) sql_add(&b, " or m%d", i - 1);
        sql_add(&b, "\n");
    }
    sql_add(&b, "rules:\n");
    for (int i = 0; i < rules; i++)
        sql_add(&b, "  - id: boom%d\n    title: t\n    severity: error\n    source: kernel\n    where: %s\n"
                    "    fail_when: count > 0\n    message: \"{count} kernels\"\n    advice: none\n", i, where);
    char *path = hx_path(dir, "macros.yaml");
    hx_write_file(path, b.s, b.n);
    free(b.s);
    return path;
}

/* 16 macros each using the previous one 4 times (a 0.6 KB file, 4^16
** nodes): refused at once, before expanding, with the cap's message. What
** macro uses may add to a rule is capped (docs/limits.md, "Macros"): m5
** (4095 nodes) fits, twice it does not. */
static void test_macro_explosion(void **state)
{
    (void)state;
    char *dir = hx_tempdir();
    char *p = macro_file(dir, 16, 4, 1, "m16");
    static const char *const cmds[][3] = {{"rules", "lint", NULL}, {"check", "--rules", NULL}};
    for (size_t i = 0; i < 2; i++) {
        hx_result r;
        if (i == 0) hx_run(&r, cmds[i][0], cmds[i][1], p);
        else hx_run(&r, cmds[i][0], cmds[i][1], p, "/dev/null");
        char what[64];
        snprintf(what, sizeof what, "%s %s: 4^16 macro nodes", cmds[i][0], cmds[i][1]);
        hx_expect_rule_error(what, &r, 2, "expression too large (more than 50000 nodes after macro expansion): "
                                          "macro 'm16' expands to more than 50000 nodes");
        hx_free(&r);
    }
    free(p);
    p = macro_file(dir, 5, 4, 1, "m5");
    hx_result r;
    hx_run(&r, "rules", "lint", p);
    hx_expect_warnings("rules lint: 4095 macro nodes", &r, 0, 0, NULL);
    hx_free(&r);
    free(p);
    p = macro_file(dir, 5, 4, 1, "m5 or m5");
    hx_run(&r, "rules", "lint", p);
    hx_expect_rule_error("rules lint: 2 x 4095 macro nodes", &r, 2, "macro 'm5' expands to 4095 nodes");
    hx_free(&r);
    free(p);
    hx_rmtree(dir);
    free(dir);
}

/* The audit's 357-byte file (m6 used three times, 49,000 nodes within the
** former cap) made check take 119 s on 250,000 kernels: refused now. Within
** the cap, eight rules using m5 (4095 nodes each) took 88 s on 100,000
** kernels, every node evaluated on every row: a macro's tree is shared and
** computed once per row now. Half the kernels last 10 ns, which
** `duration > 7ns` finds after m5 said no. */
static void test_macro_cost_per_row(void **state)
{
    (void)state;
    char *dir = hx_tempdir();
    hx_result r;
    char *p = tg_fixture_build(tg_fixture_schema_3_0,
        STRINGS SERIES("100000")
        "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL (start, end, deviceId, streamId, correlationId, globalPid,"
        " demangledName) SELECT 1000 + x * 100, 1005 + x * 100 + (x % 2) * 5, 0, 7, x, 1 << 24, 1 FROM c;");
    assert_non_null(p);
    char *rules = macro_file(dir, 5, 4, 8, "m5 or duration > 7ns");
    hx_run(&r, "check", "--rules", rules, p);
    hx_expect_warnings("check: 8 rules x 4095 macro nodes, 100000 kernels", &r, 1, 0, NULL);
    for (int i = 0; i < 8; i++) {
        char want[64];
        snprintf(want, sizeof want, "boom%d 50000 kernels", i);
        if (!strstr(r.out, want)) fail_msg("the report lacks \"%s\":\n%.2000s", want, r.out);
    }
    hx_free(&r);
    free(rules);
    rules = macro_file(dir, 6, 4, 1, "m6 or m6 or m6");
    hx_run(&r, "check", "--rules", rules, p);
    hx_expect_rule_error("check: m6 used three times", &r, 2, "macro 'm6' expands to 16383 nodes");
    hx_free(&r);
    free(rules);
    tg_fixture_remove(p);
    hx_rmtree(dir);
    free(dir);
}

/* What all the rules of a load hold is capped too (200,000 nodes): 200
** rules using m5 (819,000 nodes) passed lint before, and 200 rules of the
** 357-byte rule (28 KB) took 9.8 s and 1.5 GB. Both are refused at once. */
static void test_macro_total(void **state)
{
    (void)state;
    char *dir = hx_tempdir();
    char *p = macro_file(dir, 5, 4, 200, "m5");
    hx_result r;
    hx_run(&r, "rules", "lint", p);
    hx_expect_rule_error("rules lint: 200 rules x 4095 macro nodes", &r, 2,
                         "the rules are too large: together they may hold 200000 nodes after macro expansion, "
                         "and rule 'boom48' goes past that with macro 'm5'");
    if (r.max_rss_kb > hx_rss_cap_kb(100 * 1024)) fail_msg("rules lint used %ld KB", r.max_rss_kb);
    hx_free(&r);
    free(p);
    p = macro_file(dir, 6, 4, 200, "m6 or m6 or m6");
    hx_run(&r, "rules", "lint", p);
    printf("  %-44s exit %d in %.2f s (%.2f s CPU), %ld KB\n", "rules lint: 200 rules x 3 x m6 (28 KB)", r.status,
           r.seconds, r.cpu_seconds, r.max_rss_kb);
    hx_expect_in_time("rules lint on 200 x 3 x m6", &r);
    assert_int_equal(r.status, 2);
    if (!strstr(r.err, "tracegate: 200 errors")) fail_msg("one error per rule expected:\n%.2000s", r.err);
    if (r.max_rss_kb > hx_rss_cap_kb(100 * 1024)) fail_msg("rules lint used %ld KB", r.max_rss_kb);
    hx_free(&r);
    free(p);
    hx_rmtree(dir);
    free(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_kernels_sharing_an_id),
        cmocka_unit_test(test_copies_sharing_an_id),
        cmocka_unit_test(test_calls_and_kernels_sharing_an_id),
        cmocka_unit_test(test_call_twins_by_the_thousand),
        cmocka_unit_test(test_colliding_correlation_ids),
        cmocka_unit_test(test_colliding_string_ids),
        cmocka_unit_test(test_colliding_names),
        cmocka_unit_test(test_regex_on_long_names),
        cmocka_unit_test(test_iteration_pattern_on_long_names),
        cmocka_unit_test(test_regex_step_budget),
        cmocka_unit_test(test_iteration_pattern_step_budget),
        cmocka_unit_test(test_macro_explosion),
        cmocka_unit_test(test_macro_cost_per_row),
        cmocka_unit_test(test_macro_total),
    };
    /* TG_HOSTILE_SMALL=1 (ci/valgrind.sh's phase 2, the binary under
    ** memcheck): the cases whose fixtures are small (long names, macros);
    ** the 200,000-row ones take minutes there and run in the plain and
    ** sanitized suites */
    const struct CMUnitTest small[] = {
        cmocka_unit_test(test_regex_on_long_names),
        cmocka_unit_test(test_iteration_pattern_on_long_names),
        cmocka_unit_test(test_macro_explosion),
    };
    const char *only_small = getenv("TG_HOSTILE_SMALL");
    if (only_small && !strcmp(only_small, "1")) return cmocka_run_group_tests(small, NULL, NULL);
    return cmocka_run_group_tests(tests, NULL, NULL);
}
