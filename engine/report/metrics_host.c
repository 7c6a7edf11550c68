/*
** The host side of `tracegate metrics` (docs/host.md): what the seed
** workflows' `nsys stats` reports osrt_sum, cudnn_api_sum and
** cublas_api_sum show, from the model's rows.
**
**   host_side {
**     osrt {recorded, calls, total_ns, names [{name, calls, total_ns, share,
**           mean_ns, p50_ns, min_ns, max_ns}], more_names}
**     libraries [{library (cudnn, cublas), recorded, calls, api_time_ns,
**                 kernels, kernel_time_ns, names [{name, calls, api_time_ns,
**                 kernels, kernel_time_ns}]}]
**   }
**
** `recorded` is false when the export holds no such rows (the capture did
** not ask for them: the table is absent or empty, or a Kineto trace); a
** library's kernels are those launched by CUDA calls
** made inside its calls, on the same thread (model_host.c).
*/
#include "metrics.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report_int.h"
#include "../common/stats.h"
#include "../common/units.h"

#define HOST_NAMES 50          /* per list in JSON */
#define HOST_TEXT_NAMES 10

typedef struct by_name {
    int32_t name;
    int64_t calls, total, kernels, kernel_time;
    int64_t *durs;             /* OS runtime calls: for the median */
    size_t n_durs;
} by_name;

static int cmp_total(const void *a, const void *b)
{
    const by_name *x = a, *y = b;
    if (x->total != y->total) return (x->total < y->total) - (x->total > y->total);
    return (x->name > y->name) - (x->name < y->name);
}

static int cmp_row_name(const void *a, const void *b, void *ctx)
{
    const int64_t *keys = ctx;
    int64_t x = keys[*(const size_t *)a], y = keys[*(const size_t *)b];
    return (x > y) - (x < y);
}

/* Rows (name, duration, kernels, kernel time) grouped by name, by total
** time descending; NULL on OOM (n 0: none). */
static by_name *group(const int32_t *names, const int64_t *durs, const int32_t *kernels, const int64_t *ktimes,
                      size_t n, bool keep_durs, size_t *n_groups)
{
    *n_groups = 0;
    if (!n) return calloc(1, sizeof(by_name));
    size_t *order = malloc(n * sizeof *order);
    int64_t *keys = malloc(n * sizeof *keys);
    by_name *g = calloc(n, sizeof *g);
    int64_t *all = keep_durs ? malloc(n * sizeof *all) : NULL;
    if (!order || !keys || !g || (keep_durs && !all)) {
        free(order), free(keys), free(g), free(all);
        return NULL;
    }
    for (size_t i = 0; i < n; i++) order[i] = i, keys[i] = names[i];
    qsort_r(order, n, sizeof *order, cmp_row_name, keys);
    for (size_t k = 0; k < n; k++) {
        size_t i = order[k];
        if (!*n_groups || g[*n_groups - 1].name != names[i]) {
            g[*n_groups] = (by_name){.name = names[i], .durs = all ? all + k : NULL};
            (*n_groups)++;
        }
        by_name *x = &g[*n_groups - 1];
        x->calls++;
        x->total = tg_add_sat(x->total, durs[i]);
        if (kernels) x->kernels += kernels[i], x->kernel_time = tg_add_sat(x->kernel_time, ktimes[i]);
        if (all) all[k] = durs[i], x->n_durs++;
    }
    free(order);
    free(keys);
    /* the duration arrays are slices of `all`, ordered before the groups are */
    if (all) {
        for (size_t k = 0; k < *n_groups; k++) {
            int64_t *copy = malloc(g[k].n_durs * sizeof *copy);
            if (!copy) {
                for (size_t j = 0; j < k; j++) free(g[j].durs);
                free(all), free(g);
                return NULL;
            }
            memcpy(copy, g[k].durs, g[k].n_durs * sizeof *copy);
            g[k].durs = copy;
        }
        free(all);
    }
    if (*n_groups > 1) qsort(g, *n_groups, sizeof *g, cmp_total);
    return g;
}

static void free_groups(by_name *g, size_t n)
{
    for (size_t i = 0; g && i < n; i++) free(g[i].durs);
    free(g);
}

static json_t *osrt_json(const tg_model *m)
{
    const tg_trace *t = m->trace;
    size_t n = t->n_osrts;
    int32_t *names = malloc((n + 1) * sizeof *names);
    int64_t *durs = malloc((n + 1) * sizeof *durs);
    json_t *o = json_object(), *list = json_array();
    bool ok = names && durs && o && list;
    int64_t total = 0;
    for (size_t i = 0; ok && i < n; i++) {
        names[i] = t->osrts[i].name;
        durs[i] = t->osrts[i].end - t->osrts[i].start;
        total = tg_add_sat(total, durs[i]);
    }
    size_t ng = 0;
    by_name *g = ok ? group(names, durs, NULL, NULL, n, true, &ng) : NULL;
    ok = ok && g;
    for (size_t i = 0; ok && i < ng && i < HOST_NAMES; i++) {
        tg_summary s = tg_stats_summarize_i64(g[i].durs, g[i].n_durs);
        json_t *e = json_pack("{s:o, s:I, s:I, s:f, s:f, s:f, s:f, s:f}", "name",
                              tg_report_json_str(tg_trace_str(t, g[i].name)), "calls", (json_int_t)g[i].calls,
                              "total_ns", (json_int_t)g[i].total, "share",
                              total ? (double)g[i].total / (double)total : 0.0, "mean_ns", s.mean, "p50_ns", s.p50,
                              "min_ns", s.min, "max_ns", s.max);
        ok = e && json_array_append_new(list, e) == 0;
    }
    if (ok)
        ok = json_object_set_new(o, "recorded", json_boolean(n > 0)) == 0 &&
             json_object_set_new(o, "calls", json_integer((json_int_t)n)) == 0 &&
             json_object_set_new(o, "total_ns", json_integer((json_int_t)total)) == 0 &&
             json_object_set_new(o, "names", list) == 0 &&
             json_object_set_new(o, "more_names", json_integer((json_int_t)(ng > HOST_NAMES ? ng - HOST_NAMES : 0))) == 0;
    else
        json_decref(list);
    free_groups(g, ng);
    free(names);
    free(durs);
    if (!ok) {
        json_decref(o);
        return NULL;
    }
    return o;
}

static json_t *library_json(const tg_model *m, int lib)
{
    const tg_trace *t = m->trace;
    size_t n = t->n_libcalls[lib];
    const tg_libcall *rows = t->libcalls[lib];
    int32_t *names = malloc((n + 1) * sizeof *names), *kernels = malloc((n + 1) * sizeof *kernels);
    int64_t *durs = malloc((n + 1) * sizeof *durs), *ktimes = malloc((n + 1) * sizeof *ktimes);
    json_t *list = json_array();
    bool ok = names && kernels && durs && ktimes && list;
    int64_t api = 0, kt = 0, nk = 0;
    for (size_t i = 0; ok && i < n; i++) {
        names[i] = rows[i].name;
        durs[i] = rows[i].end - rows[i].start;
        kernels[i] = rows[i].kernels;
        ktimes[i] = rows[i].kernel_time;
        api = tg_add_sat(api, durs[i]);
        kt = tg_add_sat(kt, ktimes[i]);
        nk += kernels[i];
    }
    size_t ng = 0;
    by_name *g = ok ? group(names, durs, kernels, ktimes, n, false, &ng) : NULL;
    ok = ok && g;
    for (size_t i = 0; ok && i < ng && i < HOST_NAMES; i++) {
        json_t *e = json_pack("{s:o, s:I, s:I, s:I, s:I}", "name", tg_report_json_str(tg_trace_str(t, g[i].name)),
                              "calls", (json_int_t)g[i].calls, "api_time_ns", (json_int_t)g[i].total, "kernels",
                              (json_int_t)g[i].kernels, "kernel_time_ns", (json_int_t)g[i].kernel_time);
        ok = e && json_array_append_new(list, e) == 0;
    }
    json_t *o = ok ? json_pack("{s:s, s:b, s:I, s:I, s:I, s:I, s:o}", "library", lib == TG_LIB_CUDNN ? "cudnn" : "cublas",
                               "recorded", n > 0, "calls", (json_int_t)n, "api_time_ns", (json_int_t)api,
                               "kernels", (json_int_t)nk, "kernel_time_ns", (json_int_t)kt, "names", list)
                   : NULL;
    if (!o && !ok) json_decref(list);
    free_groups(g, ng);
    free(names), free(kernels), free(durs), free(ktimes);
    return o;
}

json_t *tg_metrics_host_json(const tg_model *m)
{
    json_t *libs = json_array();
    for (int lib = 0; libs && lib < TG_LIB_COUNT; lib++)
        if (json_array_append_new(libs, library_json(m, lib)) != 0) {
            json_decref(libs);
            return NULL;
        }
    json_t *osrt = osrt_json(m);
    if (!osrt || !libs) {
        json_decref(osrt);
        json_decref(libs);
        return NULL;
    }
    return json_pack("{s:o, s:o}", "osrt", osrt, "libraries", libs);
}

/* ---------------------------------------------------------------- text */

static double num(const json_t *o, const char *key)
{
    const json_t *v = json_object_get(o, key);
    return json_is_number(v) ? json_number_value(v) : NAN;
}

static const char *dur(char *buf, double ns)
{
    return tg_fmt_num(buf, TG_FMT_BUF, ns, TG_UNIT_NS);
}

void tg_metrics_host_text(FILE *f, const json_t *doc)
{
    const json_t *host = json_object_get(doc, "host_side"), *osrt = json_object_get(host, "osrt");
    if (!host) return;
    char a[TG_FMT_BUF], b[TG_FMT_BUF], c[TG_FMT_BUF], d[TG_FMT_BUF], e[TG_FMT_BUF];
    fprintf(f, "host: OS runtime calls");
    if (!json_is_true(json_object_get(osrt, "recorded"))) {
        fprintf(f, " not recorded (nsys profile -t osrt)\n");
    } else {
        fprintf(f, " %.0f, %s in all\n", num(osrt, "calls"), dur(a, num(osrt, "total_ns")));
        const json_t *list = json_object_get(osrt, "names"), *x;
        if (json_array_size(list))
            fprintf(f, "  %7s %10s %8s %10s %10s %10s  %s\n", "share", "total", "calls", "mean", "p50", "max", "name");
        size_t i;
        json_array_foreach(list, i, x) {
            if (i == HOST_TEXT_NAMES) break;
            fprintf(f, "  %7s %10s %8.0f %10s %10s %10s  ", tg_fmt_num(e, sizeof e, num(x, "share"), TG_UNIT_RATIO),
                    dur(a, num(x, "total_ns")), num(x, "calls"), dur(b, num(x, "mean_ns")), dur(c, num(x, "p50_ns")),
                    dur(d, num(x, "max_ns")));
            const char *name = json_string_value(json_object_get(x, "name"));
            tg_text_fput(f, name ? name : "-", TG_TEXT_CAP_NAME, 0);
            fputc('\n', f);
        }
    }
    size_t i;
    const json_t *lib;
    json_array_foreach(json_object_get(host, "libraries"), i, lib) {
        const char *name = json_string_value(json_object_get(lib, "library"));
        if (!json_is_true(json_object_get(lib, "recorded"))) continue;   /* not asked for: nothing to say */
        fprintf(f, "host: %s calls %.0f, %s of API time; %.0f kernels launched inside them, %s of GPU time\n",
                name && !strcmp(name, "cudnn") ? "cuDNN" : "cuBLAS", num(lib, "calls"), dur(a, num(lib, "api_time_ns")),
                num(lib, "kernels"), dur(b, num(lib, "kernel_time_ns")));
        size_t k;
        const json_t *x;
        json_array_foreach(json_object_get(lib, "names"), k, x) {
            if (k == HOST_TEXT_NAMES) break;
            fprintf(f, "  %8.0f calls %10s API, %6.0f kernels %10s  ", num(x, "calls"), dur(a, num(x, "api_time_ns")),
                    num(x, "kernels"), dur(b, num(x, "kernel_time_ns")));
            const char *fn = json_string_value(json_object_get(x, "name"));
            tg_text_fput(f, fn ? fn : "-", TG_TEXT_CAP_NAME, 0);
            fputc('\n', f);
        }
    }
}
