/*
** Where a trace was recorded, as the export says it (docs/formats.md,
** "Where a result comes from"): the host of TARGET_INFO_SYSTEM_ENV's
** Hostname row, and the rank, world size and job id of the environment
** nsys recorded (its DeviceEnvironment row, "NAME=value;NAME=value"),
** read by the variables of origin.def; plus the processes that did GPU
** work. Nothing is guessed: an export that does not say leaves the member
** NULL or -1, and a rank variable is only believed when a single process
** did GPU work (`nsys profile torchrun ...` records the launcher's
** environment, not its children's, and the export then holds several
** GPU processes).
*/
#include "trace_int.h"

#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------- GPU pids */

/* Every pid (>= 0) of n rows of esz bytes whose pid member is at pid_off,
** into the map s; rows of one process come in runs, so only a change of
** pid is looked up. */
static bool add_rows(tg_idmap *s, const void *rows, size_t n, size_t esz, size_t pid_off)
{
    int32_t last = -1;
    for (size_t i = 0; i < n; i++) {
        int32_t pid;
        memcpy(&pid, (const char *)rows + i * esz + pid_off, sizeof pid);
        if (pid == last || pid < 0) continue;
        last = pid;
        if (!tg_idmap_put(s, pid, 0)) return false;
    }
    return true;
}

static int cmp_i32(const void *a, const void *b)
{
    int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
    return (x > y) - (x < y);
}

int64_t tg_trace_gpu_pids(const tg_trace *t, int32_t **out)
{
    *out = NULL;
    tg_idmap s = {0};         /* the pids (>= 0) as keys */
    bool ok = t->kernels ? add_rows(&s, t->kernels, t->n_kernels, sizeof *t->kernels, offsetof(tg_kernel, pid))
                         : add_rows(&s, t->kspans, t->kspans ? t->n_kernels : 0, sizeof *t->kspans,
                                    offsetof(tg_kspan, pid));
    ok = ok && add_rows(&s, t->memcpys, t->n_memcpys, sizeof *t->memcpys, offsetof(tg_memop, pid)) &&
         add_rows(&s, t->memsets, t->n_memsets, sizeof *t->memsets, offsetof(tg_memop, pid));
    size_t count = tg_idmap_count(&s);
    int32_t *pids = ok ? malloc((count ? count : 1) * sizeof *pids) : NULL;
    if (!pids) {
        tg_idmap_free(&s);
        return -1;
    }
    size_t n = 0, pos = 0;
    int64_t key;
    int32_t val;
    while (tg_idmap_next(&s, &pos, &key, &val)) pids[n++] = (int32_t)key;
    tg_idmap_free(&s);
    qsort(pids, n, sizeof *pids, cmp_i32);
    *out = pids;
    return (int64_t)n;
}

/* ------------------------------------------------------------ environment */

/* The value of NAME in "A=1;NAME=2;B=3" (a copy, malloc'd), or NULL. A
** name is matched at the start of the string or after a ';' only. */
static char *env_value(const char *env, size_t len, const char *name)
{
    size_t n = strlen(name);
    for (size_t i = 0; i + n < len; i++) {
        if ((i > 0 && env[i - 1] != ';') || env[i + n] != '=' || memcmp(env + i, name, n) != 0) continue;
        const char *v = env + i + n + 1, *end = memchr(v, ';', len - (size_t)(v - env));
        size_t vlen = end ? (size_t)(end - v) : len - (size_t)(v - env);
        char *copy = malloc(vlen + 1);
        if (copy) {
            memcpy(copy, v, vlen);
            copy[vlen] = 0;
        }
        return copy;
    }
    return NULL;
}

/* A decimal number in [lo, INT32_MAX], else -1 (so "3a", "", "-1" are not ranks). */
static int32_t env_int(const char *s, int32_t lo)
{
    if (!s || !*s || strlen(s) > 10) return -1;
    int64_t v = 0;
    for (const char *p = s; *p; p++) {
        if (*p < '0' || *p > '9') return -1;
        v = v * 10 + (*p - '0');
    }
    return v >= lo && v <= INT32_MAX ? (int32_t)v : -1;
}

typedef struct rank_var {
    const char *launcher, *rank, *size;
    const char *source;        /* "env RANK": tg_trace.rank_source */
} rank_var;

static const rank_var rank_vars[] = {
#define TG_ORIGIN_RANK(launcher, rank, size) {launcher, rank, size, "env " rank},
#define TG_ORIGIN_JOB(var, scheduler)
#include "origin.def"
#undef TG_ORIGIN_RANK
#undef TG_ORIGIN_JOB
};

static const char *const job_vars[] = {
#define TG_ORIGIN_RANK(launcher, rank, size)
#define TG_ORIGIN_JOB(var, scheduler) var,
#include "origin.def"
#undef TG_ORIGIN_RANK
#undef TG_ORIGIN_JOB
};

/* Rank, world size and job id from the recorded environment. */
static void read_env(tg_trace *t, const char *env, size_t len)
{
    for (size_t i = 0; i < sizeof rank_vars / sizeof *rank_vars && t->rank < 0; i++) {
        char *r = env_value(env, len, rank_vars[i].rank), *w = env_value(env, len, rank_vars[i].size);
        int32_t rank = env_int(r, 0), size = env_int(w, 1);
        bool set = r != NULL;
        free(r);
        free(w);
        if (!set) continue;
        /* the first launcher that sets its variable decides: a bad value
        ** there is not a reason to believe the next one */
        if (rank >= 0 && (size < 0 || rank < size)) {
            t->rank = rank;
            t->world_size = size;
            t->rank_source = rank_vars[i].source;
        }
        break;
    }
    for (size_t i = 0; i < sizeof job_vars / sizeof *job_vars && !t->job; i++) {
        char *job = env_value(env, len, job_vars[i]);
        if (job && !*job) {
            free(job);
            job = NULL;
        }
        t->job = job;
    }
}

/* Whole text of column col, NULL for NULL; false when out of memory. */
static bool cell_copy(tg_loader *ld, const tg_row *st, int col, char **out, size_t *len)
{
    const char *text;
    char *owned = NULL;
    *out = NULL;
    if (!tg_cell_text(st, col, &text, len, &owned)) return tg_load_oom(ld);
    if (text) *out = owned ? owned : strndup(text, *len);
    if (text && !*out) tg_load_fail(ld, TG_EINTERNAL, "out of memory");
    return !text || *out;
}

/* The first DeviceEnvironment of the table, read after the scan. */
typedef struct env_read {
    char *env;
    size_t len;
} env_read;

/* A row of TARGET_INFO_SYSTEM_ENV: the first Hostname and the first
** DeviceEnvironment are kept (an empty value as none). */
static bool env_row(tg_loader *ld, const tg_row *st, void *ctx)
{
    tg_trace *t = ld->t;
    env_read *e = ctx;
    const char *name;
    size_t name_len;
    char *owned;
    if (!tg_cell_text(st, COL(0), &name, &name_len, &owned)) return tg_load_oom(ld);
    bool host = name && !strcmp(name, "Hostname") && !t->host;
    bool dev_env = name && !strcmp(name, "DeviceEnvironment") && !e->env;
    /* the versions a diagnosis compares (trace_capture.c) */
    bool cuda = name && !strcmp(name, "CudaDriverVersion") && t->capture.cuda_driver == TG_NULL_I64;
    bool nv = name && !strcmp(name, "NvDriverVersion") && !t->capture.nv_driver;
    free(owned);
    if (cuda) {
        char *v;
        size_t n;
        if (!cell_copy(ld, st, COL(1), &v, &n)) return false;
        char *end = NULL;
        long long x = v ? strtoll(v, &end, 10) : -1;
        if (v && end != v && !*end && x > 0 && x < 1000000) t->capture.cuda_driver = x;
        free(v);
        return true;
    }
    if (nv) {
        size_t n;
        if (!cell_copy(ld, st, COL(1), &t->capture.nv_driver, &n)) return false;
        return true;
    }
    if (!host && !dev_env) return true;
    char *value;
    size_t len;
    if (!cell_copy(ld, st, COL(1), &value, &len)) return false;
    if (value && !*value) {
        free(value);
        value = NULL;
    }
    if (host) t->host = value;
    else {
        e->env = value;
        e->len = len;
    }
    return true;
}

bool tg_load_origin(tg_loader *ld)
{
    tg_trace *t = ld->t;
    static const tg_colspec cols[] = {{"name", NULL, false}, {"value", NULL, false}};
    env_read e = {.env = NULL};
    if (tg_load_rows(ld, tg_load_find_table(ld, "TARGET_INFO_SYSTEM_ENV"), cols, 2, env_row, &e) && e.env) {
        int32_t *pids;
        int64_t n = tg_trace_gpu_pids(t, &pids);
        free(pids);
        if (n < 0) tg_load_fail(ld, TG_EINTERNAL, "out of memory");
        else {
            read_env(t, e.env, e.len);
            if (n > 1) {   /* the environment of one process, the work of several */
                t->rank = t->world_size = -1;
                t->rank_source = NULL;
            }
        }
    }
    free(e.env);
    return !ld->failed;
}
