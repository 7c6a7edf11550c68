/*
** Writing the baseline file with libyaml's emitter (baseline_load.c reads
** it back). The layout is documented in baselines/README.md.
**
** Output is byte-stable: keys in sorted order at every level, numbers in
** the shortest form that reads back to the same double (integral values as
** plain integers), strings double-quoted so that versions and dates stay
** strings for any YAML reader, and nothing time-dependent beyond the date
** the caller supplies.
*/
#include "baseline.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

/* ------------------------------------------------------------- writing */

typedef struct writer {
    yaml_emitter_t em;
    bool ok;
} writer;

static void emit(writer *w, yaml_event_t *ev)
{
    if (!w->ok) {
        yaml_event_delete(ev);
        return;
    }
    if (!yaml_emitter_emit(&w->em, ev)) w->ok = false;
}

static void w_scalar(writer *w, const char *s, yaml_scalar_style_t style)
{
    /* libyaml refuses invalid UTF-8; the recorder already cleaned what it
    ** stores, this keeps a baseline built by hand writable too */
    char *clean = tg_utf8_valid(s, strlen(s)) ? NULL : tg_utf8_clean(NULL, s);
    if (clean) s = clean;
    yaml_event_t ev;
    if (!yaml_scalar_event_initialize(&ev, NULL, NULL, (yaml_char_t *)s, (int)strlen(s), 1, 1,
                                      style)) {
        w->ok = false;
        free(clean);
        return;
    }
    free(clean);
    emit(w, &ev);
}

static void w_key(writer *w, const char *k) { w_scalar(w, k, YAML_ANY_SCALAR_STYLE); }

static void w_str(writer *w, const char *s)
{
    if (s) w_scalar(w, s, YAML_DOUBLE_QUOTED_SCALAR_STYLE);
    else w_scalar(w, "null", YAML_PLAIN_SCALAR_STYLE);
}

/* Shortest decimal that strtod reads back to v; integral values without
** exponent; an exponent form always carries a '.' (a YAML 1.1 float). */
static void format_number(double v, char *buf, size_t size)
{
    if (isnan(v)) {
        snprintf(buf, size, "null");
        return;
    }
    if (isinf(v)) {
        snprintf(buf, size, v > 0 ? ".inf" : "-.inf");
        return;
    }
    if (v == floor(v) && fabs(v) < 1e17) {
        snprintf(buf, size, "%.0f", v == 0 ? 0.0 : v);
        return;
    }
    for (int prec = 1; prec <= 17; prec++) {
        snprintf(buf, size, "%.*g", prec, v);
        if (strtod(buf, NULL) == v) break;
    }
    char *e = strchr(buf, 'e');
    if (e && !memchr(buf, '.', (size_t)(e - buf))) {
        char tail[32];
        snprintf(tail, sizeof tail, "%s", e);
        snprintf(e, size - (size_t)(e - buf), ".0%s", tail);
    }
}

static void w_num(writer *w, double v)
{
    char buf[40];
    format_number(v, buf, sizeof buf);
    w_scalar(w, buf, YAML_PLAIN_SCALAR_STYLE);
}

static void w_uint(writer *w, size_t v)
{
    char buf[32];
    snprintf(buf, sizeof buf, "%zu", v);
    w_scalar(w, buf, YAML_PLAIN_SCALAR_STYLE);
}

static void w_map_start(writer *w, yaml_mapping_style_t style)
{
    yaml_event_t ev;
    yaml_mapping_start_event_initialize(&ev, NULL, NULL, 1, style);
    emit(w, &ev);
}

static void w_map_end(writer *w)
{
    yaml_event_t ev;
    yaml_mapping_end_event_initialize(&ev);
    emit(w, &ev);
}

static void w_seq_start(writer *w, yaml_sequence_style_t style)
{
    yaml_event_t ev;
    yaml_sequence_start_event_initialize(&ev, NULL, NULL, 1, style);
    emit(w, &ev);
}

static void w_seq_end(writer *w)
{
    yaml_event_t ev;
    yaml_sequence_end_event_initialize(&ev);
    emit(w, &ev);
}

static void w_numbers(writer *w, const double *v, size_t n)
{
    w_seq_start(w, YAML_FLOW_SEQUENCE_STYLE);
    for (size_t i = 0; i < n; i++) w_num(w, v[i]);
    w_seq_end(w);
}

/* Keys of a metric entry, in sorted order. */
static void write_metric(writer *w, const tg_baseline *b, const tg_baseline_metric *m)
{
    w_key(w, m->rule);
    w_map_start(w, YAML_BLOCK_MAPPING_STYLE);
    w_key(w, "direction");
    w_scalar(w, tg_baseline_direction_name(m->direction), YAML_PLAIN_SCALAR_STYLE);
    if (m->n_kept_outliers) {
        w_key(w, "kept_outliers");
        w_seq_start(w, YAML_FLOW_SEQUENCE_STYLE);
        for (size_t i = 0; i < m->n_kept_outliers; i++) w_uint(w, m->kept_outliers[i]);
        w_seq_end(w);
    }
    w_key(w, "mad");
    w_num(w, m->mad);
    w_key(w, "median");
    w_num(w, m->median);
    w_key(w, "metric");
    w_str(w, m->metric);
    w_key(w, "n_runs");
    w_uint(w, m->n_runs);
    w_key(w, "n_samples");
    w_uint(w, m->n_samples_total);
    w_key(w, "runs");
    w_numbers(w, m->runs, b->n_runs);
    w_key(w, "samples");
    w_numbers(w, m->samples, m->n_samples);
    w_key(w, "samples_field");
    w_str(w, m->samples_field);
    w_key(w, "unit");
    w_scalar(w, tg_unit_key(m->unit), YAML_PLAIN_SCALAR_STYLE);
    w_map_end(w);
}

static void write_run(writer *w, const tg_baseline_run *r)
{
    w_map_start(w, YAML_BLOCK_MAPPING_STYLE);
    w_key(w, "gpu_names");
    w_str(w, r->gpu_names);
    if (r->iteration_marker) {
        w_key(w, "iteration_marker");
        w_str(w, r->iteration_marker[0] ? r->iteration_marker : NULL);
    }
    w_key(w, "nsys_version");
    w_str(w, r->nsys_version);
    w_key(w, "schema_version");
    w_str(w, r->schema_version);
    w_key(w, "trace");
    w_str(w, r->trace);
    if (r->trace_format) {
        w_key(w, "trace_format");
        w_str(w, r->trace_format);
    }
    w_map_end(w);
}


/* One name of the workload, keys sorted, on one line. */
static void write_entry(writer *w, const tg_work_entry *e)
{
    w_map_start(w, YAML_FLOW_MAPPING_STYLE);
    w_key(w, "count");
    w_num(w, (double)e->count);
    w_key(w, "kind");
    w_scalar(w, tg_work_kind_name(e->kind), YAML_PLAIN_SCALAR_STYLE);
    w_key(w, "launches");
    w_num(w, e->launches);
    w_key(w, "name");
    w_str(w, e->name);
    w_key(w, "time");
    w_num(w, e->time);
    w_key(w, "total");
    w_num(w, e->total);
    w_map_end(w);
}

static void write_workload(writer *w, const tg_workload *wl)
{
    w_key(w, "workload");
    w_map_start(w, YAML_BLOCK_MAPPING_STYLE);
    w_key(w, "gpu_time");
    w_num(w, wl->gpu_time);
    w_key(w, "nvtx");
    w_seq_start(w, YAML_BLOCK_SEQUENCE_STYLE);
    for (size_t i = 0; i < wl->n_ranges; i++) write_entry(w, &wl->ranges[i]);
    w_seq_end(w);
    w_key(w, "ops");
    w_seq_start(w, YAML_BLOCK_SEQUENCE_STYLE);
    for (size_t i = 0; i < wl->n_ops; i++) write_entry(w, &wl->ops[i]);
    w_seq_end(w);
    w_key(w, "steady_iterations");
    w_num(w, (double)wl->steady_iterations);
    w_key(w, "total");
    w_num(w, wl->total);
    w_map_end(w);
}

tg_status tg_baseline_write(const tg_baseline *b, FILE *out)
{
    fprintf(out, "# tracegate baseline, format %d: the fields are described in "
                 "baselines/README.md.\n"
                 "# Re-record with: tracegate baseline record -o FILE TRACE...\n",
            b->format_version > TG_BASELINE_FORMAT_PLAIN ? b->format_version : TG_BASELINE_FORMAT_PLAIN);
    writer w = {.ok = true};
    if (!yaml_emitter_initialize(&w.em)) return TG_EINTERNAL;
    yaml_emitter_set_output_file(&w.em, out);
    yaml_emitter_set_unicode(&w.em, 1);
    yaml_emitter_set_width(&w.em, 100);
    yaml_emitter_set_indent(&w.em, 2);
    yaml_event_t ev;
    yaml_stream_start_event_initialize(&ev, YAML_UTF8_ENCODING);
    emit(&w, &ev);
    yaml_document_start_event_initialize(&ev, NULL, NULL, NULL, 1);
    emit(&w, &ev);
    w_map_start(&w, YAML_BLOCK_MAPPING_STYLE);

    w_key(&w, "date");
    w_str(&w, b->date);
    w_key(&w, "format_version");
    w_uint(&w, (size_t)(b->format_version > TG_BASELINE_FORMAT_PLAIN ? b->format_version
                                                                      : TG_BASELINE_FORMAT_PLAIN));
    w_key(&w, "metrics");
    w_map_start(&w, YAML_BLOCK_MAPPING_STYLE);
    for (size_t i = 0; i < b->n_metrics; i++) write_metric(&w, b, &b->metrics[i]);
    w_map_end(&w);
    w_key(&w, "runs");
    w_seq_start(&w, YAML_BLOCK_SEQUENCE_STYLE);
    for (size_t i = 0; i < b->n_runs; i++) write_run(&w, &b->runs[i]);
    w_seq_end(&w);
    w_key(&w, "tool_version");
    w_str(&w, b->tool_version);
    if (b->workload) write_workload(&w, b->workload);

    w_map_end(&w);
    yaml_document_end_event_initialize(&ev, 1);
    emit(&w, &ev);
    yaml_stream_end_event_initialize(&ev);
    emit(&w, &ev);
    if (w.ok && !yaml_emitter_flush(&w.em)) w.ok = false;
    yaml_emitter_delete(&w.em);
    if (fflush(out) != 0 || ferror(out)) w.ok = false;
    return w.ok ? TG_OK : TG_EINTERNAL;
}

