/*
** `tracegate info`: the document describing one loaded trace. tg_info_json
** builds it from the trace's arrays (counts, the span, GPUs, the processes
** that have activity, NVTX range names by frequency, and a sentence per
** kind of data the capture did not record, with the nsys option that
** records it); tg_info_text renders that same document for a terminal, so
** the two formats can never disagree.
*/
#include "info.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "iterdoc.h"
#include "report_int.h"
#include "../common/units.h"
#include "../common/text.h"

/* ---------------------------------------------------------------- helpers */

static json_t *info_doc(const tg_trace *t, const char *pattern, const tg_coverage *cov);

/* Names come from the profiled program: JSON carries them as UTF-8, each
** invalid byte as U+FFFD (tg_report_json_str, tg_utf8_clean). */
static json_t *str_or_null(const char *s) { return tg_report_json_str(s); }

static json_t *pool_str(const tg_trace *t, int32_t id)
{
    const char *s = tg_trace_str(t, id);
    return tg_report_json_str(s);
}

static json_t *i64_or_null(int64_t v) { return v == TG_NULL_I64 ? json_null() : json_integer(v); }
static json_t *i32_or_null(int32_t v) { return v < 0 ? json_null() : json_integer(v); }

/* ---------------------------------------------------------------- parts */

static json_t *gpus_json(const tg_trace *t)
{
    json_t *arr = json_array();
    for (size_t i = 0; arr && i < t->n_gpus; i++) {
        const tg_gpu *g = &t->gpus[i];
        json_t *cc = json_null();
        if (g->compute_major >= 0 && g->compute_minor >= 0) {
            char buf[32];
            snprintf(buf, sizeof buf, "%d.%d", (int)g->compute_major, (int)g->compute_minor);
            cc = json_string(buf);
        }
        json_t *o = json_pack("{s:i, s:o, s:o, s:o, s:o}", "id", (json_int_t)g->id,
                              "name", pool_str(t, g->name), "sm_count", i32_or_null(g->sm_count),
                              "memory", i64_or_null(g->memory), "compute_capability", cc);
        if (!o || json_array_append_new(arr, o) != 0) {
            json_decref(arr);
            return NULL;
        }
    }
    return arr;
}

/* Insert pid into the sorted unique array (few distinct pids per trace). */
static bool add_pid(int32_t **pids, size_t *n, size_t *cap, int32_t pid)
{
    if (pid < 0) return true;
    size_t lo = 0, hi = *n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if ((*pids)[mid] == pid) return true;
        if ((*pids)[mid] < pid) lo = mid + 1;
        else hi = mid;
    }
    if (!tg_grow((void **)pids, cap, *n + 1, sizeof **pids)) return false;
    memmove(*pids + lo + 1, *pids + lo, (*n - lo) * sizeof **pids);
    (*pids)[lo] = pid;
    (*n)++;
    return true;
}

#define ADD_PIDS(arr, count)                                               \
    for (size_t i_ = 0; ok && i_ < (count); i_++) {                        \
        if ((arr)[i_].pid == last) continue;                               \
        last = (arr)[i_].pid;                                              \
        ok = add_pid(&pids, &n, &cap, last);                               \
    }

/* The processes that own at least one loaded event, with their names. */
static json_t *processes_json(const tg_trace *t)
{
    int32_t *pids = NULL, last = -1;
    size_t n = 0, cap = 0;
    bool ok = true;
    if (t->kernels) ADD_PIDS(t->kernels, t->n_kernels);
    if (t->kspans) ADD_PIDS(t->kspans, t->n_kernels);
    ADD_PIDS(t->memcpys, t->n_memcpys);
    ADD_PIDS(t->memsets, t->n_memsets);
    ADD_PIDS(t->apis, t->n_apis);
    ADD_PIDS(t->nvtx, t->n_nvtx);
    ADD_PIDS(t->syncs, t->n_syncs);
    json_t *arr = ok ? json_array() : NULL;
    for (size_t i = 0; arr && i < n; i++) {
        int32_t name = TG_NO_STR;
        for (size_t j = 0; j < t->n_processes && name < 0; j++)
            if (t->processes[j].pid == pids[i]) name = t->processes[j].name;
        json_t *o = json_pack("{s:i, s:o}", "pid", (json_int_t)pids[i], "name", pool_str(t, name));
        if (!o || json_array_append_new(arr, o) != 0) {
            json_decref(arr);
            arr = NULL;
        }
    }
    free(pids);
    return arr;
}

typedef struct name_count {
    int32_t name;
    int64_t count;
    const char *text;
} name_count;

static int cmp_name_count(const void *a, const void *b)
{
    const name_count *x = a, *y = b;
    if (x->count != y->count) return x->count < y->count ? 1 : -1;
    return strcmp(x->text, y->text);
}

/* nvtx_ranges: range (not mark) names by count, most frequent first. */
static json_t *nvtx_names_json(const tg_trace *t, size_t *distinct)
{
    int32_t n_strings = tg_strpool_count(t->strings);
    int64_t *counts = calloc((size_t)n_strings + 1, sizeof *counts);  /* last: unnamed */
    if (!counts) return NULL;
    for (size_t i = 0; i < t->n_nvtx; i++) {
        const tg_nvtx *r = &t->nvtx[i];
        if (r->end == TG_NULL_I64) continue;
        counts[r->name >= 0 && r->name < n_strings ? r->name : n_strings]++;
    }
    size_t n = 0;
    for (int32_t i = 0; i <= n_strings; i++) n += counts[i] > 0;
    name_count *list = malloc((n ? n : 1) * sizeof *list);
    json_t *obj = list ? json_object() : NULL;
    if (obj) {
        size_t k = 0;
        for (int32_t i = 0; i <= n_strings; i++)
            if (counts[i] > 0)
                list[k++] = (name_count){.name = i, .count = counts[i],
                                         .text = i < n_strings ? tg_trace_str(t, i) : "(unnamed)"};
        qsort(list, n, sizeof *list, cmp_name_count);
        for (size_t j = 0; obj && j < n && j < TG_INFO_MAX_NVTX_NAMES; j++) {
            char *key = tg_utf8_clean(NULL, list[j].text);
            json_int_t prev = key ? json_integer_value(json_object_get(obj, key)) : 0;
            if (!key || json_object_set_new(obj, key, json_integer(prev + list[j].count)) != 0) {
                json_decref(obj);
                obj = NULL;
            }
            free(key);
        }
    }
    *distinct = n;
    free(list);
    free(counts);
    return obj;
}

static size_t table_rows(const tg_trace *t, tg_table_id id)
{
    switch (id) {
    case TG_TABLE_KERNEL: return t->n_kernels;
    case TG_TABLE_MEMCPY: return t->n_memcpys;
    case TG_TABLE_MEMSET: return t->n_memsets;
    case TG_TABLE_RUNTIME: return tg_trace_api_rows(t);
    case TG_TABLE_SYNC: return t->n_syncs;
    case TG_TABLE_NVTX: return t->n_nvtx;
    case TG_TABLE_GPU: return t->n_gpus;
    case TG_TABLE_OVERHEAD: return t->n_overheads;
    default: return 0;
    }
}

/* The op activity of a table (kernels, copies, memsets), -1 for others. */
static int op_activity(tg_table_id id)
{
    return id == TG_TABLE_KERNEL ? TG_COV_KERNEL : id == TG_TABLE_MEMCPY ? TG_COV_MEMCPY
         : id == TG_TABLE_MEMSET ? TG_COV_MEMSET : -1;
}

/* One sentence per kind of data a rule may need and the capture lacks.
** An op table without rows beside calls that launch its ops is check's
** account (tg_coverage_ops_absent): CUDA was traced and they were lost. */
static json_t *missing_json(const tg_trace *t, const tg_coverage *cov)
{
    static const tg_table_id checked[] = {TG_TABLE_KERNEL, TG_TABLE_MEMCPY, TG_TABLE_MEMSET,
                                          TG_TABLE_RUNTIME, TG_TABLE_NVTX, TG_TABLE_GPU};
    json_t *arr = json_array();
    for (size_t i = 0; arr && i < sizeof checked / sizeof *checked; i++) {
        tg_table_id id = checked[i];
        char buf[1024], why[512], how[768];
        if (id == TG_TABLE_GPU) {
            if (t->has_table[id]) continue;
            snprintf(buf, sizeof buf,
                     "no GPU descriptions (%s absent): GPU names, SM counts and memory sizes are unknown",
                     tg_table_names[id]);
        } else if (table_rows(t, id) > 0) {
            continue;
        } else if (tg_trace_range_profiled(t, id, how, sizeof how)) {
            snprintf(buf, sizeof buf, "no %s (%s is empty): %s", tg_table_what[id],
                     t->has_table[id] ? t->table_name[id] : tg_table_names[id], how);
        } else if ((id == TG_TABLE_RUNTIME || op_activity(id) >= 0) &&
                   tg_coverage_ops_absent(t, id, id == TG_TABLE_RUNTIME ? (int64_t)(t->n_kernels + t->n_memcpys + t->n_memsets)
                                          : cov && cov->set ? cov->act[op_activity(id)].op_calls : 0, why, sizeof why)) {
            snprintf(buf, sizeof buf, "no %s: %s", tg_table_what[id], why);
        } else if (t->has_table[id]) {
            snprintf(buf, sizeof buf, "no %s (%s is empty)", tg_table_what[id], t->table_name[id]);
        } else {
            snprintf(buf, sizeof buf, "no %s (%s absent): record them with `%s`%s", tg_table_what[id],
                     tg_trace_table_label(t, id), tg_trace_table_option(t, id), tg_trace_table_also(t, id));
        }
        if (json_array_append_new(arr, json_string(buf)) != 0) {
            json_decref(arr);
            return NULL;
        }
    }
    return arr;
}

static json_t *tables_json(const tg_trace *t)
{
    json_t *o = json_object();
    for (int i = 0; o && i < TG_TABLE_COUNT; i++)
        if (json_object_set_new(o, tg_table_names[i], str_or_null(t->table_name[i])) != 0) {
            json_decref(o);
            return NULL;
        }
    return o;
}

/* ---------------------------------------------------------------- document */

/* How the iterations are found, as the model would choose them. */
static json_t *markers_json(const tg_trace *t, const char *pattern)
{
    tg_diag diag;
    tg_diag_init(&diag);
    tg_iter_selection *sel = tg_model_select_iterations(t, pattern, &diag);
    json_t *doc = sel ? tg_iterdoc_json(sel) : NULL;
    tg_iter_selection_free(sel);
    tg_diag_clear(&diag);
    return doc;
}

json_t *tg_info_json(const tg_trace *t, const char *pattern)
{
    return tg_info_json_with(t, pattern, NULL);
}

/* The coverage keys of the document (tg_info_json_with); false on OOM. */
static bool add_coverage(json_t *doc, const tg_coverage *cov)
{
    json_t *lost = json_array();
    char what[2048];
    if (!lost || json_object_set_new(doc, "lost", lost) != 0) return false;
    if (tg_coverage_lost(cov, TG_COV_TOLERANCE, what, sizeof what)) {
        char *s = NULL;
        if (asprintf(&s, "%s: check reports every rule that reads GPU work as an error (exit 3)", what) < 0) return false;
        json_t *j = str_or_null(s);
        free(s);
        if (!j || json_array_append_new(lost, j) != 0) return false;
    }
    json_t *c = tg_report_coverage_json(cov);
    return c && json_object_set_new(doc, "coverage", c) == 0;
}

json_t *tg_info_json_with(const tg_trace *t, const char *pattern, const tg_coverage *cov)
{
    json_t *doc = info_doc(t, pattern, cov);
    if (doc && cov && cov->set && !add_coverage(doc, cov)) {
        json_decref(doc);
        return NULL;
    }
    return doc;
}

static json_t *info_doc(const tg_trace *t, const char *pattern, const tg_coverage *cov)
{
    size_t ranges = 0, marks = 0, distinct = 0;
    for (size_t i = 0; i < t->n_nvtx; i++) {
        if (t->nvtx[i].end == TG_NULL_I64) marks++;
        else ranges++;
    }
    json_t *counts = json_pack(
        "{s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I}",
        "kernel", (json_int_t)t->n_kernels, "memcpy", (json_int_t)t->n_memcpys,
        "memset", (json_int_t)t->n_memsets, "api", (json_int_t)table_rows(t, TG_TABLE_RUNTIME),
        "nvtx", (json_int_t)t->n_nvtx, "nvtx_ranges", (json_int_t)ranges,
        "nvtx_marks", (json_int_t)marks, "sync", (json_int_t)t->n_syncs,
        "overhead", (json_int_t)t->n_overheads, "gpu", (json_int_t)t->n_gpus);
    json_t *processes = processes_json(t);
    if (counts && processes)
        json_object_set_new(counts, "process", json_integer((json_int_t)json_array_size(processes)));
    json_t *nvtx_names = nvtx_names_json(t, &distinct);
    int64_t span = t->first_ns == TG_NULL_I64 ? TG_NULL_I64 : t->last_ns - t->first_ns;
    /* json_pack's "o" steals references and fails on NULL, freeing the rest. */
    return json_pack("{s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:I, s:o, s:b, s:I, s:o}",
                     "file", str_or_null(t->path ? t->path : ""),
                     "product", str_or_null(t->product_name),
                     "nsys_version", str_or_null(t->nsys_version),
                     "schema_version", str_or_null(t->schema_version),
                     "start_ns", i64_or_null(t->first_ns),
                     "end_ns", i64_or_null(t->last_ns),
                     "span_ns", i64_or_null(span),
                     "session_start_ns", i64_or_null(t->session_start_ns),
                     "gpus", gpus_json(t),
                     "processes", processes,
                     "tables", tables_json(t),
                     "counts", counts,
                     "nvtx_ranges", nvtx_names,
                     "nvtx_range_names", (json_int_t)distinct,
                     "iteration_markers", markers_json(t, pattern),
                     "duplicate_api_calls", (int)t->mixed_duplicate_api,
                     "api_twin_rows", (json_int_t)t->n_api_twins,
                     "missing", missing_json(t, cov));
}

/* ---------------------------------------------------------------- text */


static const char *jstr(const json_t *o, const char *key)
{
    return json_string_value(json_object_get(o, key));
}

static json_int_t jint(const json_t *o, const char *key)
{
    return json_integer_value(json_object_get(o, key));
}

/* A string from the export (names, versions, the file name) on one line:
** tg_text_escape (engine/common/text.h, docs/formats.md) shows controls,
** C1, invalid UTF-8 and newlines escaped and cuts it at max bytes with
** "…(N bytes)". Every such string of the text goes through here. */
static void print_name(FILE *f, const char *s, size_t max)
{
    tg_text_fput(f, s ? s : "", max, 0);
}

static void print_gpus(FILE *f, const json_t *gpus)
{
    size_t i;
    json_t *g;
    if (json_array_size(gpus) == 0) {
        fprintf(f, "  gpus:       none recorded\n");
        return;
    }
    json_array_foreach(gpus, i, g) {
        char mem[TG_FMT_BUF];
        const char *name = jstr(g, "name");
        fprintf(f, "  %-11s %lld: ", i == 0 ? "gpus:" : "", (long long)jint(g, "id"));
        print_name(f, name ? name : "(not described)", 80);
        if (json_is_integer(json_object_get(g, "sm_count")))
            fprintf(f, ", %lld SMs", (long long)jint(g, "sm_count"));
        if (json_is_integer(json_object_get(g, "memory")))
            fprintf(f, ", %s", tg_fmt_num(mem, sizeof mem, (double)jint(g, "memory"), TG_UNIT_BYTES));
        if (jstr(g, "compute_capability")) {
            fputs(", compute ", f);
            print_name(f, jstr(g, "compute_capability"), TG_TEXT_CAP_NAME);
        }
        fputc('\n', f);
    }
}

static void print_nvtx(FILE *f, const json_t *doc)
{
    const json_t *names = json_object_get(doc, "nvtx_ranges");
    json_int_t distinct = jint(doc, "nvtx_range_names");
    if (json_object_size(names) == 0) return;
    const char *key;
    json_t *v;
    size_t k = 0;
    json_object_foreach((json_t *)names, key, v) {
        if (k == 10) break;
        fprintf(f, "  %-11s %8lld  ", k == 0 ? "nvtx names:" : "", (long long)json_integer_value(v));
        print_name(f, key, 80);
        fputc('\n', f);
        k++;
    }
    if (distinct > (json_int_t)k)
        fprintf(f, "  %-11s %8s  ... and %lld more names\n", "", "", (long long)(distinct - (json_int_t)k));
}

/* CUDA 13000 -> "13.0" */
static void print_cuda(FILE *f, const json_t *v)
{
    json_int_t x = json_integer_value(v);
    fprintf(f, "%lld.%lld", (long long)(x / 1000), (long long)(x % 1000 / 10));
}

/* The versions a diagnosis compares: one line when any is recorded. */
static void print_versions(FILE *f, const json_t *cov)
{
    const json_t *p = json_object_get(cov, "profiler"), *d = json_object_get(cov, "driver");
    bool any = jstr(p, "version") || json_is_integer(json_object_get(p, "cupti_version")) ||
               json_is_integer(json_object_get(d, "cuda")) || jstr(d, "version");
    if (!any) return;
    fprintf(f, "  %-11s ", "versions:");
    const char *sep = "";
    if (jstr(p, "version")) {
        fputs("nsys ", f);
        print_name(f, jstr(p, "version"), TG_TEXT_CAP_NAME);
        if (json_is_integer(json_object_get(p, "cuda"))) {
            fputs(" (CUDA up to ", f);
            print_cuda(f, json_object_get(p, "cuda"));
            fputc(')', f);
        }
        sep = ", ";
    }
    if (json_is_integer(json_object_get(p, "cupti_version"))) {
        fprintf(f, "%sCUPTI %lld", sep, (long long)jint(p, "cupti_version"));
        sep = ", ";
    }
    if (json_is_integer(json_object_get(p, "cuda_runtime_version"))) {
        fprintf(f, "%sCUDA runtime ", sep);
        print_cuda(f, json_object_get(p, "cuda_runtime_version"));
        sep = ", ";
    }
    if (jstr(d, "version") || json_is_integer(json_object_get(d, "cuda"))) {
        fprintf(f, "%sdriver", sep);
        if (jstr(d, "version")) {
            fputc(' ', f);
            print_name(f, jstr(d, "version"), TG_TEXT_CAP_NAME);
        }
        if (json_is_integer(json_object_get(d, "cuda"))) {
            fputs(" (CUDA ", f);
            print_cuda(f, json_object_get(d, "cuda"));
            fputc(')', f);
        }
    }
    fputc('\n', f);
}

/* The coverage lines: each op activity's window and launches without a
** GPU record, then what was lost. */
static void print_coverage(FILE *f, const json_t *doc)
{
    const json_t *cov = json_object_get(doc, "coverage");
    if (!cov) return;
    json_int_t run0 = jint(cov, "run_first_ns");
    for (size_t i = 0; i < TG_COV_COUNT; i++) {
        const json_t *a = json_object_get(cov, tg_cov_activity_names[i]);
        fprintf(f, "  %-11s %-9s %lld records", i == 0 ? "coverage:" : "", tg_cov_activity_names[i],
                (long long)jint(a, "records"));
        if (jint(a, "records"))
            fprintf(f, ", %.3f s to %.3f s", (double)(jint(a, "first_ns") - run0) / 1e9,
                    (double)(jint(a, "last_ns") - run0) / 1e9);
        const json_t *u = json_object_get(a, "launches_without_gpu_record");
        if (u)
            fprintf(f, "; %lld of %lld launch calls without a GPU record, %lld after the capture",
                    (long long)jint(u, "count"), (long long)jint(a, "launch_calls"),
                    (long long)jint(a, "launches_after_capture"));
        fputc('\n', f);
    }
    print_versions(f, cov);
    size_t i;
    json_t *m;
    json_array_foreach(json_object_get(cov, "diagnostics"), i, m) {
        fprintf(f, "  %-11s %s, %lld times: ", i == 0 ? "profiler:" : "", jstr(m, "severity"),
                (long long)jint(m, "count"));
        print_name(f, jstr(m, "text"), TG_TEXT_CAP_TEXT);
        fputc('\n', f);
    }
    json_array_foreach(json_object_get(doc, "lost"), i, m) {
        fprintf(f, "  %-11s ", i == 0 ? "lost:" : "");
        print_name(f, json_string_value(m), TG_TEXT_CAP_TEXT);
        fputc('\n', f);
    }
}

char *tg_info_text(const tg_trace *t, const char *pattern)
{
    return tg_info_text_with(t, pattern, NULL);
}

char *tg_info_text_with(const tg_trace *t, const char *pattern, const tg_coverage *cov)
{
    json_t *doc = tg_info_json_with(t, pattern, cov);
    if (!doc) return NULL;
    char *out = NULL;
    size_t size = 0;
    FILE *f = open_memstream(&out, &size);
    if (!f) {
        json_decref(doc);
        return NULL;
    }
    const char *product = jstr(doc, "product"), *nsys = jstr(doc, "nsys_version");
    const char *schema = jstr(doc, "schema_version");
    print_name(f, jstr(doc, "file"), TG_TEXT_CAP_TEXT);
    fputc('\n', f);
    fprintf(f, "  %-11s ", "export:");
    print_name(f, product ? product : "unknown exporter", TG_TEXT_CAP_NAME);
    if (nsys) {
        fputc(' ', f);
        print_name(f, nsys, TG_TEXT_CAP_NAME);
    }
    fputs(", schema ", f);
    print_name(f, schema ? schema : "not recorded", TG_TEXT_CAP_NAME);
    fputc('\n', f);
    char a[TG_FMT_BUF];
    if (json_is_integer(json_object_get(doc, "span_ns")))
        fprintf(f, "  %-11s %s (%lld .. %lld ns)\n", "span:",
                tg_fmt_num(a, sizeof a, (double)jint(doc, "span_ns"), TG_UNIT_NS),
                (long long)jint(doc, "start_ns"), (long long)jint(doc, "end_ns"));
    else
        fprintf(f, "  %-11s no events\n", "span:");
    print_gpus(f, json_object_get(doc, "gpus"));

    size_t i;
    json_t *p, *procs = json_object_get(doc, "processes");
    json_array_foreach(procs, i, p) {
        if (i == 8) {
            fprintf(f, "  %-11s ... and %zu more\n", "", json_array_size(procs) - i);
            break;
        }
        fprintf(f, "  %-11s %lld ", i == 0 ? "processes:" : "", (long long)jint(p, "pid"));
        print_name(f, jstr(p, "name") ? jstr(p, "name") : "(unnamed)", 80);
        fputc('\n', f);
    }

    const json_t *c = json_object_get(doc, "counts");
    fprintf(f, "  %-11s %lld kernels, %lld copies, %lld memsets, %lld API calls, "
               "%lld NVTX ranges, %lld NVTX marks, %lld sync events, %lld profiler overhead\n",
            "counts:", (long long)jint(c, "kernel"), (long long)jint(c, "memcpy"),
            (long long)jint(c, "memset"), (long long)jint(c, "api"), (long long)jint(c, "nvtx_ranges"),
            (long long)jint(c, "nvtx_marks"), (long long)jint(c, "sync"), (long long)jint(c, "overhead"));
    print_nvtx(f, doc);
    tg_iterdoc_text(f, json_object_get(doc, "iteration_markers"), "  iterations: ", "              ");
    if (json_is_true(json_object_get(doc, "duplicate_api_calls")))
        fprintf(f, "  %-11s API calls are recorded twice (versioned and plain names), as old exports do: "
                   "%lld outer rows, each call counted once\n", "note:", (long long)jint(doc, "api_twin_rows"));
    json_t *m, *missing = json_object_get(doc, "missing");
    json_array_foreach(missing, i, m) {
        fprintf(f, "  %-11s ", i == 0 ? "missing:" : "");
        print_name(f, json_string_value(m), TG_TEXT_CAP_TEXT);
        fputc('\n', f);
    }
    print_coverage(f, doc);
    fclose(f);
    json_decref(doc);
    return out;
}
