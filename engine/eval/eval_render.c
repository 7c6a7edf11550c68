/*
** Rendering a rule's message: literal text with each {expression}
** replaced by its value in its unit, three significant digits --
** durations adapt their unit (812 ns, 1.23 ms, 4.5 s, 2.5 min), byte
** counts print in binary units when they are an exact multiple of one
** (16 MiB, 64 KiB) and in decimal units otherwise (16.8 MB, 64 KB), ratios
** as percentages (23.4%), and a null as "n/a". The evaluator depends on
** nothing downstream, so this is its own small formatter; the scales are
** those of units.def.
*/
#include "eval_int.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Three significant digits without exponent notation. */
static void sig3(char *buf, size_t size, double x)
{
    snprintf(buf, size, "%.3g", x);
    if (strchr(buf, 'e')) snprintf(buf, size, "%.0f", x);
}

static char *scaled(char *buf, size_t size, double x, const double *scales, const char *const *names, size_t n)
{
    size_t k = 0;
    double ax = fabs(x);
    while (k + 1 < n && ax >= scales[k + 1] * 0.9995) k++;
    char num[48];
    sig3(num, sizeof num, x / scales[k]);
    snprintf(buf, size, "%s %s", num, names[k]);
    return buf;
}

static char *format_duration(char *buf, size_t size, double ns)
{
    static const double scales[] = {1, 1e3, 1e6, 1e9, 60e9, 3600e9};
    static const char *const names[] = {"ns", "us", "ms", "s", "min", "h"};
    if (fabs(ns) < 1000 && ns == floor(ns)) {
        snprintf(buf, size, "%.0f ns", ns);
        return buf;
    }
    return scaled(buf, size, ns, scales, names, 6);
}

static char *format_bytes(char *buf, size_t size, double b)
{
    static const double dec[] = {1, 1e3, 1e6, 1e9, 1e12};
    static const char *const dec_names[] = {"B", "KB", "MB", "GB", "TB"};
    static const double bin[] = {1024.0, 1048576.0, 1073741824.0, 1099511627776.0};
    static const char *const bin_names[] = {"KiB", "MiB", "GiB", "TiB"};
    if (fabs(b) < 1000) {
        if (b == floor(b)) snprintf(buf, size, "%.0f B", b);
        else snprintf(buf, size, "%.3g B", b);
        return buf;
    }
    for (int k = 3; k >= 0; k--) {
        double q = b / bin[k];
        if (fabs(q) >= 1 && q == floor(q) && fabs(q) < 1024) {
            snprintf(buf, size, "%.0f %s", q, bin_names[k]);
            return buf;
        }
    }
    return scaled(buf, size, b, dec, dec_names, 5);
}

char *tg_eval_format(char *buf, size_t size, tg_value v)
{
    switch (v.type) {
    case TG_TY_NULL: snprintf(buf, size, "n/a"); return buf;
    case TG_TY_BOOL: snprintf(buf, size, "%s", v.u.b ? "true" : "false"); return buf;
    case TG_TY_STRING: snprintf(buf, size, "%s", v.u.s ? v.u.s : "n/a"); return buf;
    default: break;
    }
    double x = tg_value_num(v);
    switch (v.unit) {
    case TG_UNIT_NS: return format_duration(buf, size, x);
    case TG_UNIT_BYTES: return format_bytes(buf, size, x);
    case TG_UNIT_RATIO: {
        char num[48];
        sig3(num, sizeof num, x * 100.0);
        snprintf(buf, size, "%s%%", num);
        return buf;
    }
    default:
        if (v.type == TG_TY_INT) snprintf(buf, size, "%lld", (long long)v.u.i);
        else if (x == floor(x) && fabs(x) < 1e15) snprintf(buf, size, "%.0f", x);
        else if (fabs(x) >= 1000) snprintf(buf, size, "%.0f", x);
        else sig3(buf, size, x);
        return buf;
    }
}

const char *tg_eval_render_message(tg_rule_state *st, const tg_value *aggs, tg_arena *arena)
{
    const tg_rule *r = st->rule;
    if (!r->n_message) {
        return tg_arena_printf(arena, "%lld matching %s row%s", (long long)st->count,
                               tg_source_defs[r->source].name, st->count == 1 ? "" : "s");
    }
    char *out = NULL;
    size_t len = 0, cap = 0;
    for (size_t i = 0; i < r->n_message; i++) {
        char buf[128];
        const char *piece = r->message[i].text;
        if (r->message[i].expr) {
            tg_value v = tg_eval_agg(st, aggs, r->message[i].expr);
            piece = tg_eval_format(buf, sizeof buf, v);
        }
        size_t n = strlen(piece);
        if (!tg_grow((void **)&out, &cap, len + n + 1, 1)) {
            free(out);
            return NULL;
        }
        memcpy(out + len, piece, n);
        len += n;
        out[len] = 0;
    }
    const char *res = tg_arena_strdup(arena, out ? out : "");
    free(out);
    return res;
}
