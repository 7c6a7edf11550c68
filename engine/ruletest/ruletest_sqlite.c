/*
** Materialising a rule test's inline events: a new SQLite file in the
** export layout of nsys 2022.4 (schema 3.0.0, ruletest_schema.h), written
** the way that nsys writes it, so the normal loader reads it with no
** special case:
**
** - tables are created as nsys creates them, lazily: a category the test
**   lists (even as an empty list) gets its table; one it leaves out does
**   not exist, which is how a capture without that data looks. Listing any
**   CUDA category (kernels, memcpys, memsets, api) also creates the API
**   table and TARGET_INFO_GPU, as `nsys profile -t cuda` always does;
** - every name is a StringIds id (NVTX text is inline, as NVTX writes
**   unregistered strings), processes and threads are serialized GlobalIds
**   (TG_RT_GLOBAL_ID_HIGH | pid << 24 | tid), named in PROCESSES and
**   ThreadNames;
** - rows are inserted in the order the test wrote them, so rowid N is the
**   Nth row of its category (NVTX domain definitions come after the ranges).
**
** Values are bound, never spliced into SQL: names in a test are data.
*/
#include "ruletest_int.h"
#include "ruletest_schema.h"

#include <sqlite3.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef struct writer {
    sqlite3 *db;
    tg_diag *diag;
    const char *path;
    tg_strpool *strings;       /* StringIds: id = pool id + 1 */
    bool failed;
} writer;

static void fail_db(writer *w, const char *doing)
{
    if (w->failed) return;
    w->failed = true;
    tg_diag_error(w->diag, TG_EINTERNAL, "cannot write the test trace %s (%s): %s", w->path, doing,
                  w->db ? sqlite3_errmsg(w->db) : "out of memory");
}

static void exec(writer *w, const char *sql)
{
    if (w->failed) return;
    char *err = NULL;
    if (sqlite3_exec(w->db, sql, NULL, NULL, &err) != SQLITE_OK) {
        w->failed = true;
        tg_diag_error(w->diag, TG_EINTERNAL, "cannot write the test trace %s: %s", w->path,
                      err ? err : "SQLite error");
    }
    sqlite3_free(err);
}

static int64_t string_id(writer *w, const char *s)
{
    int32_t id = tg_strpool_intern(w->strings, s, strlen(s));
    if (id < 0) {
        fail_db(w, "interning a name");
        return 0;
    }
    return (int64_t)id + 1;
}

static sqlite3_stmt *prepare(writer *w, const char *sql)
{
    sqlite3_stmt *st = NULL;
    if (!w->failed && sqlite3_prepare_v2(w->db, sql, -1, &st, NULL) != SQLITE_OK) fail_db(w, "preparing an insert");
    return st;
}

/* Bind and step one row. spec: 'i' int64 (TG_NULL_I64 binds NULL), 't'
** text (NULL binds NULL), 'd' double, 'n' NULL without an argument. */
static void insert(writer *w, sqlite3_stmt *st, const char *spec, ...)
{
    if (w->failed || !st) return;
    va_list ap;
    va_start(ap, spec);
    int k = 1, rc = SQLITE_OK;
    for (const char *c = spec; *c && rc == SQLITE_OK; c++, k++) {
        switch (*c) {
        case 'i': {
            int64_t v = va_arg(ap, int64_t);
            rc = v == TG_NULL_I64 ? sqlite3_bind_null(st, k) : sqlite3_bind_int64(st, k, v);
            break;
        }
        case 't': {
            const char *s = va_arg(ap, const char *);
            rc = s ? sqlite3_bind_text(st, k, s, -1, SQLITE_TRANSIENT) : sqlite3_bind_null(st, k);
            break;
        }
        case 'd': rc = sqlite3_bind_double(st, k, va_arg(ap, double)); break;
        default: rc = sqlite3_bind_null(st, k); break;
        }
    }
    va_end(ap);
    if (rc == SQLITE_OK) rc = sqlite3_step(st);
    if (rc != SQLITE_DONE) fail_db(w, "inserting a row");
    sqlite3_reset(st);
    sqlite3_clear_bindings(st);
}

static int64_t gpid(int32_t pid)
{
    return TG_RT_GLOBAL_ID_HIGH | ((int64_t)pid << 24);
}

static int64_t gtid(int32_t pid, int32_t tid)
{
    return gpid(pid) | (int64_t)tid;
}

/* ---------------------------------------------------------- activity */

static void write_ops(writer *w, const tg_rt_events *ev)
{
    static const char *const sql[3] = {
        "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL (start, end, deviceId, contextId, streamId, correlationId, "
        "globalPid, demangledName, shortName, mangledName, launchType, cacheConfig, registersPerThread, gridX, "
        "gridY, gridZ, blockX, blockY, blockZ, staticSharedMemory, dynamicSharedMemory, localMemoryPerThread, "
        "localMemoryTotal, gridId, sharedMemoryExecuted, graphNodeId, sharedMemoryLimitConfig) "
        "VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
        "INSERT INTO CUPTI_ACTIVITY_KIND_MEMCPY (start, end, deviceId, contextId, streamId, correlationId, "
        "globalPid, bytes, copyKind, deprecatedSrcId, srcKind, dstKind, srcDeviceId, srcContextId, dstDeviceId, "
        "dstContextId, migrationCause, graphNodeId, virtualAddress) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
        "INSERT INTO CUPTI_ACTIVITY_KIND_MEMSET (start, end, deviceId, contextId, streamId, correlationId, "
        "globalPid, value, bytes, graphNodeId, memKind) VALUES (?,?,?,?,?,?,?,?,?,?,?)",
    };
    for (int c = 0; c < 3; c++) {
        if (!ev->listed[c]) continue;
        sqlite3_stmt *st = prepare(w, sql[c]);
        for (size_t i = 0; i < ev->n_ops[c] && !w->failed; i++) {
            const tg_rt_op *o = &ev->ops[c][i];
            int64_t common[7] = {o->start, o->end, o->device, o->context, o->stream, o->correlation, gpid(o->pid)};
            if (c == TG_RT_KERNELS) {
                int64_t name = string_id(w, o->name), short_name = string_id(w, o->short_name);
                insert(w, st, "iiiiiiiiiiiiiiiiiiiiiiiiini", common[0], common[1], common[2], common[3], common[4],
                       common[5], common[6], name, short_name, name, (int64_t)1, (int64_t)0,
                       (int64_t)o->registers, (int64_t)o->grid[0], (int64_t)o->grid[1], (int64_t)o->grid[2],
                       (int64_t)o->block[0], (int64_t)o->block[1], (int64_t)o->block[2], (int64_t)o->static_smem,
                       (int64_t)o->dynamic_smem, (int64_t)0, (int64_t)0, (int64_t)(i + 1),
                       (int64_t)(o->static_smem + o->dynamic_smem), (int64_t)0);
            } else if (c == TG_RT_MEMCPYS) {
                insert(w, st, "iiiiiiiiiniinnnnnnn", common[0], common[1], common[2], common[3], common[4],
                       common[5], common[6], o->bytes, (int64_t)o->copy_kind, (int64_t)o->src_kind,
                       (int64_t)o->dst_kind);
            } else {
                insert(w, st, "iiiiiiiiini", common[0], common[1], common[2], common[3], common[4], common[5],
                       common[6], o->value, o->bytes, (int64_t)o->mem_kind);
            }
        }
        sqlite3_finalize(st);
    }
}

static int64_t chain_id(int32_t stack)
{
    return stack >= 0 ? (int64_t)stack + 1 : TG_NULL_I64;
}

static void write_calls(writer *w, const tg_rt_events *ev)
{
    sqlite3_stmt *st = prepare(w, "INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME (start, end, eventClass, globalTid, "
                                  "correlationId, nameId, returnValue, callchainId) VALUES (?,?,?,?,?,?,?,?)");
    for (size_t i = 0; i < ev->n_calls && !w->failed; i++) {
        const tg_rt_call *c = &ev->calls[i];
        insert(w, st, "iiiiiiii", c->start, c->end, (int64_t)1, gtid(c->pid, c->tid), c->correlation,
               string_id(w, c->name), (int64_t)c->return_value, chain_id(c->stack));
    }
    sqlite3_finalize(st);
}

/* ------------------------------------------------------------ host side */

static bool calls_have_stacks(const tg_rt_events *ev)
{
    for (size_t i = 0; i < ev->n_calls; i++)
        if (ev->calls[i].stack >= 0) return true;
    return false;
}

/* The frames of the stacks `used` marks into CUDA_CALLCHAINS or
** OSRT_CALLCHAINS (id = stack index + 1, depth 0 innermost). */
static void write_stacks(writer *w, const tg_rt_events *ev, const char *table, const bool *used)
{
    char sql[160];
    snprintf(sql, sizeof sql, "INSERT INTO %s (id, symbol, module, unresolved, stackDepth) VALUES (?,?,?,?,?)", table);
    sqlite3_stmt *st = prepare(w, sql);
    for (size_t s = 0; s < ev->n_stacks && !w->failed; s++) {
        if (!used[s]) continue;
        for (size_t d = 0; d < ev->stacks[s].n; d++)
            insert(w, st, "iiiii", (int64_t)s + 1, string_id(w, ev->stacks[s].frames[d].symbol),
                   string_id(w, ev->stacks[s].frames[d].module), (int64_t)0, (int64_t)d);
    }
    sqlite3_finalize(st);
}

static void write_host_stacks(writer *w, const tg_rt_events *ev)
{
    bool *cuda = calloc(ev->n_stacks + 1, sizeof *cuda), *osrt = calloc(ev->n_stacks + 1, sizeof *osrt);
    if (!cuda || !osrt) {
        free(cuda);
        free(osrt);
        fail_db(w, "listing stacks");
        return;
    }
    for (size_t i = 0; i < ev->n_calls; i++)
        if (ev->calls[i].stack >= 0) cuda[ev->calls[i].stack] = true;
    for (size_t i = 0; i < ev->n_osrts; i++)
        if (ev->osrts[i].stack >= 0) osrt[ev->osrts[i].stack] = true;
    if (calls_have_stacks(ev)) write_stacks(w, ev, "CUDA_CALLCHAINS", cuda);
    if (ev->listed[TG_RT_OSRT]) write_stacks(w, ev, "OSRT_CALLCHAINS", osrt);
    free(cuda);
    free(osrt);
}

static void write_osrt(writer *w, const tg_rt_events *ev)
{
    sqlite3_stmt *st = prepare(w, "INSERT INTO OSRT_API (start, end, eventClass, globalTid, nameId, returnValue, "
                                  "nestingLevel, callchainId) VALUES (?,?,?,?,?,?,?,?)");
    for (size_t i = 0; i < ev->n_osrts && !w->failed; i++) {
        const tg_rt_osrt *o = &ev->osrts[i];
        /* nsys writes a callchain id on every row, with or without frames */
        insert(w, st, "iiiiiiii", o->start, o->end, (int64_t)27, gtid(o->pid, o->tid), string_id(w, o->name),
               o->return_value, (int64_t)0, o->stack >= 0 ? (int64_t)o->stack + 1 : (int64_t)0);
    }
    sqlite3_finalize(st);
}

static void write_libcalls(writer *w, const tg_rt_events *ev, int lib)
{
    sqlite3_stmt *st = prepare(w, lib == 0 ? "INSERT INTO CUDNN_EVENTS (start, end, eventClass, globalTid, nameId) "
                                             "VALUES (?,?,?,?,?)"
                                           : "INSERT INTO CUBLAS_EVENTS (start, end, eventClass, globalTid, nameId) "
                                             "VALUES (?,?,?,?,?)");
    for (size_t i = 0; i < ev->n_libcalls[lib] && !w->failed; i++) {
        const tg_rt_libcall *c = &ev->libcalls[lib][i];
        insert(w, st, "iiiii", c->start, c->end, (int64_t)0, gtid(c->pid, c->tid), string_id(w, c->name));
    }
    sqlite3_finalize(st);
}

/* Ranges in order, then one domain definition (eventType 75) per process
** and named domain, as NVTX records nvtxDomainCreate. */
static void write_nvtx(writer *w, const tg_rt_events *ev)
{
    sqlite3_stmt *st = prepare(w, "INSERT INTO NVTX_EVENTS (start, end, eventType, text, globalTid, endGlobalTid, "
                                  "domainId) VALUES (?,?,?,?,?,?,?)");
    const char **domains = calloc(ev->n_ranges + 1, sizeof *domains);
    size_t n_domains = 0;
    if (!domains) fail_db(w, "listing domains");
    for (size_t i = 0; i < ev->n_ranges && !w->failed; i++) {
        const tg_rt_range *r = &ev->ranges[i];
        int64_t domain = 0;
        if (r->domain) {
            size_t d = 0;
            while (d < n_domains && strcmp(domains[d], r->domain) != 0) d++;
            if (d == n_domains) domains[n_domains++] = r->domain;
            domain = (int64_t)d + 1;
        }
        int64_t tid = gtid(r->pid, r->tid);
        insert(w, st, "iiitiii", r->start, r->end, (int64_t)r->event_type, r->name, tid,
               r->event_type == 60 ? tid : TG_NULL_I64, domain);
    }
    for (size_t d = 0; d < n_domains && !w->failed; d++) {
        /* one definition per process that uses the domain, at its first use */
        for (size_t i = 0; i < ev->n_ranges && !w->failed; i++) {
            const tg_rt_range *r = &ev->ranges[i];
            if (!r->domain || strcmp(r->domain, domains[d]) != 0) continue;
            bool seen = false;
            for (size_t j = 0; j < i && !seen; j++)
                seen = ev->ranges[j].domain && ev->ranges[j].pid == r->pid && !strcmp(ev->ranges[j].domain, domains[d]);
            if (!seen)
                insert(w, st, "iiitiii", r->start, TG_NULL_I64, (int64_t)75, domains[d], gtid(r->pid, r->tid),
                       TG_NULL_I64, (int64_t)d + 1);
        }
    }
    free(domains);
    sqlite3_finalize(st);
}

static void write_overheads(writer *w, const tg_rt_events *ev)
{
    sqlite3_stmt *st = prepare(w, "INSERT INTO PROFILER_OVERHEAD (start, end, globalTid, nameId, returnValue) "
                                  "VALUES (?,?,?,?,?)");
    for (size_t i = 0; i < ev->n_overheads && !w->failed; i++) {
        const tg_rt_overhead *o = &ev->overheads[i];
        insert(w, st, "iiiii", o->start, o->end, gtid(o->pid, o->tid), string_id(w, o->name), (int64_t)0);
    }
    sqlite3_finalize(st);
}

/* ------------------------------------------------------ system tables */

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* Sorted distinct values; returns the count. */
static size_t uniq(int64_t *v, size_t n)
{
    if (!n) return 0;
    qsort(v, n, sizeof *v, cmp_i64);
    size_t k = 1;
    for (size_t i = 1; i < n; i++)
        if (v[i] != v[k - 1]) v[k++] = v[i];
    return k;
}

static void write_gpus(writer *w, const tg_rt_events *ev)
{
    sqlite3_stmt *st = prepare(w, "INSERT INTO TARGET_INFO_GPU (vmId, id, name, busLocation, isDiscrete, l2CacheSize, "
                                  "totalMemory, memoryBandwidth, clockRate, smCount, pwGpuId, uuid, luid, chipName, "
                                  "cuDevice, computeMajor, computeMinor, smMajor, smMinor) "
                                  "VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)");
    size_t n = ev->listed[TG_RT_DEVICES] ? ev->n_gpus : ev->n_ops[0] + ev->n_ops[1] + ev->n_ops[2] + 1;
    tg_rt_gpu *gpus = calloc(n + 1, sizeof *gpus);
    int64_t *ids = calloc(n + 1, sizeof *ids);
    if (!gpus || !ids) fail_db(w, "listing devices");
    if (!w->failed && ev->listed[TG_RT_DEVICES]) {
        memcpy(gpus, ev->gpus, n * sizeof *gpus);
    } else if (!w->failed) {
        /* not described: every device that ran work (device 0 when none),
        ** as the GPU the 3.0.0 exports were recorded on */
        size_t k = 0;
        for (int c = 0; c < 3; c++)
            for (size_t i = 0; i < ev->n_ops[c]; i++) ids[k++] = ev->ops[c][i].device;
        if (!k) ids[k++] = TG_RT_DEFAULT_DEVICE;
        n = uniq(ids, k);
        for (size_t i = 0; i < n; i++)
            gpus[i] = (tg_rt_gpu){(int32_t)ids[i], TG_RT_DEFAULT_GPU_NAME, 132, INT64_C(150109880320), 9, 0};
    }
    for (size_t i = 0; i < n && !w->failed; i++) {
        const tg_rt_gpu *g = &gpus[i];
        char bus[32], uuid[64];
        snprintf(bus, sizeof bus, "0000:%02x:00.0", (unsigned)(g->id & 0xFF));
        snprintf(uuid, sizeof uuid, "00000000-0000-0000-0000-%012x", (unsigned)g->id);
        insert(w, st, "iittiiiiiiititiiiii", TG_RT_GLOBAL_ID_HIGH, (int64_t)g->id, g->name, bus, (int64_t)1,
               (int64_t)62914560, g->memory, INT64_C(4814304000000), (int64_t)1980000000, (int64_t)g->sm_count,
               (int64_t)g->id, uuid, (int64_t)0, "GH100", (int64_t)g->id, (int64_t)g->cc_major,
               (int64_t)g->cc_minor, (int64_t)g->cc_major, (int64_t)g->cc_minor);
    }
    free(gpus);
    free(ids);
    sqlite3_finalize(st);
}

/* PROCESSES and ThreadNames: every process and thread that appears. */
static void write_processes(writer *w, const tg_rt_events *ev)
{
    size_t n = ev->n_calls + ev->n_ranges + ev->n_overheads + ev->n_ops[0] + ev->n_ops[1] + ev->n_ops[2] +
               ev->n_osrts + ev->n_libcalls[0] + ev->n_libcalls[1] + ev->n_threads + 1;
    int64_t *pids = calloc(n, sizeof *pids), *tids = calloc(n * 2, sizeof *tids);
    if (!pids || !tids) {
        free(pids);
        free(tids);
        fail_db(w, "listing processes");
        return;
    }
    size_t np = 0, nt = 0;
#define ADD(pid_, tid_) do { pids[np++] = (pid_); if ((tid_) >= 0) tids[nt++] = gtid((pid_), (tid_)); } while (0)
    for (size_t i = 0; i < ev->n_calls; i++) ADD(ev->calls[i].pid, ev->calls[i].tid);
    for (size_t i = 0; i < ev->n_ranges; i++) ADD(ev->ranges[i].pid, ev->ranges[i].tid);
    for (size_t i = 0; i < ev->n_overheads; i++) ADD(ev->overheads[i].pid, ev->overheads[i].tid);
    for (size_t i = 0; i < ev->n_osrts; i++) ADD(ev->osrts[i].pid, ev->osrts[i].tid);
    for (int l = 0; l < 2; l++)
        for (size_t i = 0; i < ev->n_libcalls[l]; i++) ADD(ev->libcalls[l][i].pid, ev->libcalls[l][i].tid);
    for (size_t i = 0; i < ev->n_threads; i++) ADD(ev->threads[i].pid, ev->threads[i].tid);
    for (int c = 0; c < 3; c++)
        for (size_t i = 0; i < ev->n_ops[c]; i++) ADD(ev->ops[c][i].pid, -1);
    if (!np) ADD(TG_RT_DEFAULT_PID, -1);
#undef ADD
    np = uniq(pids, np);
    /* a process whose threads made no call still has its main thread */
    for (size_t i = 0; i < np; i++) tids[nt++] = gtid((int32_t)pids[i], TG_RT_DEFAULT_TID);
    nt = uniq(tids, nt);
    sqlite3_stmt *st = prepare(w, "INSERT INTO PROCESSES (globalPid, pid, name) VALUES (?,?,?)");
    for (size_t i = 0; i < np && !w->failed; i++)
        insert(w, st, "iit", gpid((int32_t)pids[i]), pids[i], TG_RT_PROCESS_NAME);
    sqlite3_finalize(st);
    st = prepare(w, "INSERT INTO ThreadNames (nameId, priority, globalTid) VALUES (?,?,?)");
    int64_t name = string_id(w, TG_RT_PROCESS_NAME);
    for (size_t i = 0; i < nt && !w->failed; i++) {
        int64_t this_name = name;   /* a `threads` entry names its thread */
        for (size_t k = 0; k < ev->n_threads; k++)
            if (gtid(ev->threads[k].pid, ev->threads[k].tid) == tids[i]) this_name = string_id(w, ev->threads[k].name);
        insert(w, st, "iii", this_name, (int64_t)20, tids[i]);
    }
    sqlite3_finalize(st);
    free(pids);
    free(tids);
}

static void write_strings(writer *w)
{
    sqlite3_stmt *st = prepare(w, "INSERT INTO StringIds (id, value) VALUES (?,?)");
    for (int32_t i = 0; i < tg_strpool_count(w->strings) && !w->failed; i++)
        insert(w, st, "it", (int64_t)i + 1, tg_strpool_get(w->strings, i));
    sqlite3_finalize(st);
}

/* -------------------------------------------------------------- entry */

static void create_tables(writer *w, const tg_rt_events *ev)
{
    bool cuda = ev->listed[TG_RT_KERNELS] || ev->listed[TG_RT_MEMCPYS] || ev->listed[TG_RT_MEMSETS] ||
                ev->listed[TG_RT_API];
    exec(w, TG_RT_SQL_3_0_META_TABLE TG_RT_SQL_3_0_STRING_IDS);
    if (ev->listed[TG_RT_KERNELS]) exec(w, TG_RT_SQL_3_0_KERNEL);
    if (ev->listed[TG_RT_MEMCPYS]) exec(w, TG_RT_SQL_3_0_MEMCPY);
    if (ev->listed[TG_RT_MEMSETS]) exec(w, TG_RT_SQL_3_0_MEMSET);
    if (cuda) exec(w, TG_RT_SQL_3_0_RUNTIME);
    if (ev->listed[TG_RT_NVTX]) exec(w, TG_RT_SQL_3_0_NVTX);
    if (cuda || ev->listed[TG_RT_DEVICES]) exec(w, TG_RT_SQL_3_0_GPU);
    if (ev->listed[TG_RT_OVERHEAD]) exec(w, TG_RT_SQL_3_0_OVERHEAD);
    /* the host side: as -t osrt, --cudabacktrace, -t cudnn, -t cublas create them */
    if (ev->listed[TG_RT_OSRT]) exec(w, TG_RT_SQL_3_0_OSRT TG_RT_SQL_3_0_OSRT_CALLCHAINS);
    if (calls_have_stacks(ev)) exec(w, TG_RT_SQL_3_0_CUDA_CALLCHAINS);
    if (ev->listed[TG_RT_CUDNN]) exec(w, TG_RT_SQL_3_0_CUDNN);
    if (ev->listed[TG_RT_CUBLAS]) exec(w, TG_RT_SQL_3_0_CUBLAS);
    exec(w, TG_RT_SQL_3_0_PROCESSES TG_RT_SQL_3_0_THREAD_NAMES TG_RT_SQL_3_0_SESSION_START
            TG_RT_SQL_3_0_ENUM_MEMCPY_OPER TG_RT_SQL_3_0_ENUM_MEM_KIND TG_RT_SQL_3_0_ENUM_SYNC_TYPE
            TG_RT_SQL_3_0_ENUM_EVENT_TYPE TG_RT_SQL_3_0_META_ROWS
            /* a fixed session start keeps generated files identical run to run */
            "INSERT INTO TARGET_INFO_SESSION_START_TIME VALUES "
            "(1735689600000000000, '2025-01-01T00:00:00', '2025-01-01T00:00:00');\n");
    if (cuda) write_calls(w, ev);
    write_ops(w, ev);
    if (ev->listed[TG_RT_NVTX]) write_nvtx(w, ev);
    if (cuda || ev->listed[TG_RT_DEVICES]) write_gpus(w, ev);
    if (ev->listed[TG_RT_OVERHEAD]) write_overheads(w, ev);
    if (ev->listed[TG_RT_OSRT]) write_osrt(w, ev);
    for (int lib = 0; lib < 2; lib++)
        if (ev->listed[lib == 0 ? TG_RT_CUDNN : TG_RT_CUBLAS]) write_libcalls(w, ev, lib);
    write_host_stacks(w, ev);
    write_processes(w, ev);
    write_strings(w);
}

tg_status tg_ruletest_write_events(const tg_rt_events *ev, const char *path, tg_diag *diag)
{
    writer w = {.diag = diag, .path = path, .strings = tg_strpool_new()};
    if (access(path, F_OK) == 0) {
        tg_diag_error(diag, TG_EINTERNAL, "cannot write the test trace %s: the file exists", path);
        tg_strpool_free(w.strings);
        return TG_EINTERNAL;
    }
    if (!w.strings) fail_db(&w, "starting");
    else if (sqlite3_open_v2(path, &w.db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, NULL) != SQLITE_OK)
        fail_db(&w, "creating the file");
    exec(&w, "BEGIN");
    if (!w.failed) create_tables(&w, ev);
    exec(&w, "COMMIT");
    if (w.db && sqlite3_close(w.db) != SQLITE_OK) fail_db(&w, "closing the file");
    tg_strpool_free(w.strings);
    if (w.failed) {
        unlink(path);
        return TG_EINTERNAL;
    }
    return TG_OK;
}
