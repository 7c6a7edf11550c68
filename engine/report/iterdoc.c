/*
** The iteration-marker document of `info` and `metrics` (iterdoc.h): the
** model's tg_iter_selection as JSON, and that JSON as text. Marker names
** come from the profiled program; JSON carries them as text (invalid UTF-8
** bytes, which JSON cannot hold, become U+FFFD), text escapes them.
*/
#include "iterdoc.h"
#include "report_int.h"
#include "../common/text.h"

#include <stdlib.h>
#include <string.h>

/* A marker name as JSON (U+FFFD per invalid UTF-8 byte). */
static json_t *name_json(const char *s) { return tg_report_json_str(s); }

static json_t *series_json(const tg_iter_selection *sel, const tg_iter_series *s)
{
    json_t *markers = json_array();
    size_t shown = s->n_counts < TG_ITERDOC_MAX_MARKERS ? s->n_counts : TG_ITERDOC_MAX_MARKERS;
    for (size_t i = 0; markers && i < shown; i++) {
        const tg_marker_count *c = &sel->counts[s->first_count + i];
        json_t *o = json_pack("{s:o, s:i, s:s, s:I}", "marker",
                              name_json(tg_iter_marker_name(sel, c->marker)), "tid", (int)c->tid,
                              "role", tg_marker_role_name(c->role), "ranges", (json_int_t)c->ranges);
        if (!o || json_array_append_new(markers, o) != 0) {
            json_decref(markers);
            return NULL;
        }
    }
    return json_pack("{s:i, s:i, s:b, s:I, s:I, s:o, s:I}", "pid", (int)s->pid, "tid", (int)s->tid,
                     "main_thread", (int)s->main_thread, "iterations", (json_int_t)s->iterations,
                     "partial", (json_int_t)s->partial, "markers", markers,
                     "more_markers", (json_int_t)(s->n_counts - shown));
}

json_t *tg_iterdoc_json(const tg_iter_selection *sel)
{
    json_t *procs = json_array();
    size_t shown = sel->n_series < TG_ITERDOC_MAX_PROCESSES ? sel->n_series : TG_ITERDOC_MAX_PROCESSES;
    for (size_t i = 0; procs && i < shown; i++) {
        json_t *o = series_json(sel, &sel->series[i]);
        if (!o || json_array_append_new(procs, o) != 0) {
            json_decref(procs);
            return NULL;
        }
    }
    return json_pack("{s:o, s:o, s:I}", "pattern",
                     name_json(sel->pattern), "processes", procs,
                     "more_processes", (json_int_t)(sel->n_series - shown));
}

/* ---------------------------------------------------------------- text */

/* A name from the trace or the command line, escaped and capped
** (docs/formats.md, "Text from traces"). */
static void put_name(FILE *f, const char *s)
{
    tg_text_fput(f, s ? s : "", TG_TEXT_CAP_NAME, 0);
}

static json_int_t jint(const json_t *o, const char *key)
{
    return json_integer_value(json_object_get(o, key));
}

/* "50 ProfilerStep#N, 4 train_step" for the markers of one role; other
** threads' markers name their thread. */
static void put_role(FILE *f, const json_t *markers, const char *role, bool with_role, size_t *n)
{
    size_t i;
    json_t *m;
    json_array_foreach(markers, i, m) {
        if (strcmp(json_string_value(json_object_get(m, "role")), role) != 0) continue;
        fprintf(f, "%s%lld ", (*n)++ ? ", " : "", (long long)jint(m, "ranges"));
        put_name(f, json_string_value(json_object_get(m, "marker")));
        if (with_role && !strcmp(role, "other thread"))
            fprintf(f, " (thread %lld)", (long long)jint(m, "tid"));
        else if (with_role)
            fprintf(f, " (%s)", role);
    }
}

void tg_iterdoc_text(FILE *f, const json_t *doc, const char *label, const char *indent)
{
    const json_t *procs = json_object_get(doc, "processes");
    if (json_array_size(procs) == 0) {
        fprintf(f, "%snone: no NVTX range matches ", label);
        put_name(f, json_string_value(json_object_get(doc, "pattern")));
        fputc('\n', f);
        return;
    }
    size_t i;
    json_t *p;
    json_array_foreach(procs, i, p) {
        if (i == 8) {
            fprintf(f, "%s... and %zu more processes\n", indent,
                    json_array_size(procs) - i + (size_t)jint(doc, "more_processes"));
            break;
        }
        const json_t *markers = json_object_get(p, "markers");
        fprintf(f, "%sprocess %lld, thread %lld%s: ", i == 0 ? label : indent, (long long)jint(p, "pid"),
                (long long)jint(p, "tid"), json_is_true(json_object_get(p, "main_thread")) ? " (main)" : "");
        size_t n = 0;
        put_role(f, markers, "iterations", false, &n);
        if (jint(p, "partial"))
            fprintf(f, " (%lld partial: cut by the capture)", (long long)jint(p, "partial"));
        fputc('\n', f);
        bool others = false;
        size_t k;
        json_t *m;
        json_array_foreach(markers, k, m)
            others |= strcmp(json_string_value(json_object_get(m, "role")), "iterations") != 0;
        if (others || jint(p, "more_markers")) {
            fprintf(f, "%s  not iterations: ", indent);
            n = 0;
            put_role(f, markers, "nested", true, &n);
            put_role(f, markers, "other thread", true, &n);
            if (jint(p, "more_markers"))
                fprintf(f, "%s... and %lld more markers", n ? ", " : "", (long long)jint(p, "more_markers"));
            fputc('\n', f);
        }
    }
}
