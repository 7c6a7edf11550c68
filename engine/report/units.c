/*
** Human-readable numbers (units.h). Values are first rounded to three
** significant digits and only then given a prefix, so that 999.7 us prints
** as "1.00 ms" and not as "1000 us".
*/
#include "units.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

/* x rounded to `digits` significant digits (0 and non-finite unchanged). */
static double round_sig(double x, int digits)
{
    if (x == 0 || !isfinite(x)) return x;
    double mag = ceil(log10(fabs(x)));
    double scale = pow(10, digits - mag);
    double r = round(x * scale) / scale;
    return isfinite(r) ? r : x;
}

/* "%.Nf" with N chosen so that |v| shows three significant digits. */
static char *fmt_sig3(char *buf, size_t size, double v, const char *suffix)
{
    double a = fabs(v);
    int decimals = a >= 100 ? 0 : a >= 10 ? 1 : 2;
    snprintf(buf, size, "%.*f%s", decimals, v, suffix);
    return buf;
}

static char *fmt_nonfinite(char *buf, size_t size, double x, const char *suffix)
{
    snprintf(buf, size, "%s%s", isnan(x) ? "nan" : x > 0 ? "inf" : "-inf", suffix);
    return buf;
}

/* Shared by durations and bytes: a ladder of units, each `step` times the
** previous; the first rung is printed as an integer. */
static char *fmt_ladder(char *buf, size_t size, double x, const char *const *names,
                        size_t n_names, double step)
{
    if (!isfinite(x)) return fmt_nonfinite(buf, size, x, names[0]);
    double r = round_sig(x, 3);
    size_t rung = 0;
    double div = 1;
    while (rung + 1 < n_names && fabs(r) >= div * step) {
        div *= step;
        rung++;
    }
    if (rung == 0) {
        snprintf(buf, size, "%.0f%s", x, names[0]);
        return buf;
    }
    /* The last rung keeps every integer digit (12345 s stays 12345 s). */
    if (rung + 1 == n_names && fabs(x / div) >= 1000) {
        snprintf(buf, size, "%.0f%s", x / div, names[rung]);
        return buf;
    }
    return fmt_sig3(buf, size, r / div, names[rung]);
}

char *tg_units_duration(char *buf, size_t size, double ns)
{
    static const char *const names[] = {" ns", " us", " ms", " s"};
    return fmt_ladder(buf, size, ns, names, 4, 1000);
}

char *tg_units_bytes(char *buf, size_t size, double bytes)
{
    static const char *const names[] = {" B", " KB", " MB", " GB", " TB"};
    return fmt_ladder(buf, size, bytes, names, 5, 1000);
}

char *tg_units_ratio(char *buf, size_t size, double ratio)
{
    if (!isfinite(ratio)) return fmt_nonfinite(buf, size, ratio, "");
    double pct = round_sig(ratio * 100, 3);
    double a = fabs(pct);
    if (a == 0) snprintf(buf, size, "0%%");
    else if (a >= 100) snprintf(buf, size, "%.0f%%", pct);
    else if (a >= 1) fmt_sig3(buf, size, pct, "%");
    else snprintf(buf, size, "%.3g%%", pct);
    return buf;
}

char *tg_units_number(char *buf, size_t size, double x)
{
    if (!isfinite(x)) return fmt_nonfinite(buf, size, x, "");
    if (x == floor(x) && fabs(x) < 1e15) snprintf(buf, size, "%.0f", x);
    else snprintf(buf, size, "%.4g", x);
    return buf;
}

char *tg_units_change(char *buf, size_t size, double change)
{
    if (isnan(change)) {
        snprintf(buf, size, "n/a");
        return buf;
    }
    if (!isfinite(change)) {
        snprintf(buf, size, "%sinf%%", change > 0 ? "+" : "-");
        return buf;
    }
    char tmp[TG_UNITS_BUF];
    tg_units_ratio(tmp, sizeof tmp, change);
    snprintf(buf, size, "%s%s", change > 0 ? "+" : "", tmp);
    return buf;
}

/* True when `word` is one of the components of name, separated by
** anything but letters and digits ("p50(gpu_time)" has p50, gpu, time). */
static bool has_component(const char *name, const char *word)
{
    size_t wl = strlen(word);
    const char *p = name;
    while (*p) {
        while (*p && !isalnum((unsigned char)*p)) p++;
        const char *start = p;
        while (isalnum((unsigned char)*p)) p++;
        if ((size_t)(p - start) == wl && memcmp(start, word, wl) == 0) return true;
    }
    return false;
}

tg_unit tg_units_from_name(const char *name)
{
    if (!name) return TG_UNIT_NONE;
    /* Unitless aggregates keep no unit whatever they aggregate (cv_period). */
    if (!strncmp(name, "cv_", 3) || !strncmp(name, "count", 5)) return TG_UNIT_NONE;
    /* The model's duration fields: duration, gpu_time, period, span, queue. */
    static const char *const ns_words[] = {"ns", "duration", "time", "period", "span", "queue"};
    for (size_t i = 0; i < sizeof ns_words / sizeof *ns_words; i++)
        if (has_component(name, ns_words[i])) return TG_UNIT_NS;
    if (has_component(name, "bytes")) return TG_UNIT_BYTES;
    if (has_component(name, "frac") || has_component(name, "ratio") ||
        has_component(name, "overlap"))
        return TG_UNIT_RATIO;
    return TG_UNIT_NONE;
}

char *tg_units_value(char *buf, size_t size, const char *name, const tg_value *v)
{
    double x;
    switch (v->type) {
    case TG_TY_NULL: snprintf(buf, size, "null"); return buf;
    case TG_TY_BOOL: snprintf(buf, size, "%s", v->u.b ? "true" : "false"); return buf;
    case TG_TY_STRING: snprintf(buf, size, "%s", v->u.s ? v->u.s : ""); return buf;
    case TG_TY_INT: x = (double)v->u.i; break;
    default: x = v->u.f; break;
    }
    tg_unit unit = v->unit != TG_UNIT_NONE ? v->unit : tg_units_from_name(name);
    switch (unit) {
    case TG_UNIT_NS: return tg_units_duration(buf, size, x);
    case TG_UNIT_BYTES: return tg_units_bytes(buf, size, x);
    case TG_UNIT_RATIO: return tg_units_ratio(buf, size, x);
    default:
        if (v->type == TG_TY_INT) {
            snprintf(buf, size, "%lld", (long long)v->u.i);
            return buf;
        }
        return tg_units_number(buf, size, x);
    }
}
