/*
** Units both ways (units.h): the suffix table the rule lexer reads, and the
** formatter whose ladders are built from the same table.
*/
#include "units.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

const tg_unit_suffix tg_unit_suffixes[] = {
#define TG_UNIT_SUFFIX(sfx, unit, scale, doc) {sfx, TG_UNIT_##unit, scale, doc},
#include "units.def"
#undef TG_UNIT_SUFFIX
};

const size_t tg_unit_suffix_count = sizeof tg_unit_suffixes / sizeof tg_unit_suffixes[0];

/* Rungs of a ladder, smallest first (units.def lists them so). */
typedef struct ladder {
    const tg_unit_suffix *rung[8];
    size_t n;
} ladder;

/* The suffixes of `unit`, in units.def's order; with base > 0 only those
** whose scale is a power of base (1 included). */
static ladder ladder_of(tg_unit unit, double base)
{
    ladder l = {.n = 0};
    for (size_t i = 0; i < tg_unit_suffix_count && l.n < 8; i++) {
        const tg_unit_suffix *s = &tg_unit_suffixes[i];
        if (s->unit != unit) continue;
        double x = s->scale;
        while (base > 0 && x >= base && fmod(x, base) == 0) x /= base;
        if (base == 0 || x == 1) l.rung[l.n++] = s;
    }
    return l;
}

static int clamp_digits(int digits)
{
    return digits < 1 ? 1 : digits > 17 ? 17 : digits;
}

/* `digits` significant digits without exponent notation. */
static void sig(char *buf, size_t size, double x, int digits)
{
    snprintf(buf, size, "%.*g", digits, x);
    if (strchr(buf, 'e')) snprintf(buf, size, "%.0f", x);
}

/* x in the largest rung it reaches once rounded to `digits` digits. */
static char *scaled(char *buf, size_t size, double x, const ladder *l, int digits)
{
    double reach = 1 - 0.5 * pow(10, -digits);   /* 999.7 us is 1 ms at 3 digits */
    size_t k = 0;
    while (k + 1 < l->n && fabs(x) >= l->rung[k + 1]->scale * reach) k++;
    char num[48];
    sig(num, sizeof num, x / l->rung[k]->scale, digits);
    snprintf(buf, size, "%s %s", num, l->rung[k]->suffix);
    return buf;
}

static char *duration(char *buf, size_t size, double ns, int digits)
{
    if (fabs(ns) < 1000 && ns == floor(ns)) {
        snprintf(buf, size, "%.0f ns", ns);
        return buf;
    }
    ladder l = ladder_of(TG_UNIT_NS, 0);
    return scaled(buf, size, ns, &l, digits);
}

/* Sizes and rates (unit BYTES or RATE). */
static char *bytes(char *buf, size_t size, double b, int digits, tg_unit unit)
{
    /* One prefix system, decimal (docs/formats.md): 16 MiB prints as
    ** 16.8 MB, so that two sizes of one report compare at a glance. */
    ladder dec = ladder_of(unit, 1000);
    if (fabs(b) < 1000) {
        if (b == floor(b)) snprintf(buf, size, "%.0f %s", b, dec.rung[0]->suffix);
        else snprintf(buf, size, "%.*g %s", digits, b, dec.rung[0]->suffix);
        return buf;
    }
    return scaled(buf, size, b, &dec, digits);
}

const char *tg_unit_base_suffix(tg_unit unit)
{
    for (size_t i = 0; i < tg_unit_suffix_count; i++)
        if (tg_unit_suffixes[i].unit == unit && tg_unit_suffixes[i].scale == 1.0 && unit != TG_UNIT_RATIO)
            return tg_unit_suffixes[i].suffix;
    return NULL;
}

char *tg_fmt_num_digits(char *buf, size_t size, double x, tg_unit unit, int digits)
{
    digits = clamp_digits(digits);
    if (isnan(x)) {
        snprintf(buf, size, "n/a");
        return buf;
    }
    if (isinf(x)) {
        snprintf(buf, size, "%sinf%s", x < 0 ? "-" : "", unit == TG_UNIT_RATIO ? "%" : "");
        return buf;
    }
    switch (unit) {
    case TG_UNIT_NS: return duration(buf, size, x, digits);
    case TG_UNIT_BYTES:
    case TG_UNIT_RATE: return bytes(buf, size, x, digits, unit);
    case TG_UNIT_RATIO: {
        char num[48];
        sig(num, sizeof num, x * 100.0, digits);
        snprintf(buf, size, "%s%%", num);
        return buf;
    }
    default:
        if ((x == floor(x) && fabs(x) < 1e15) || fabs(x) >= 1000) snprintf(buf, size, "%.0f", x);
        else sig(buf, size, x, digits);
        return buf;
    }
}

char *tg_fmt_num(char *buf, size_t size, double x, tg_unit unit)
{
    return tg_fmt_num_digits(buf, size, x, unit, 3);
}

const tg_unit_suffix *tg_unit_rung(double x, tg_unit unit)
{
    ladder l;
    switch (unit) {
    case TG_UNIT_NS: l = ladder_of(TG_UNIT_NS, 0); break;
    case TG_UNIT_BYTES:
    case TG_UNIT_RATE: l = ladder_of(unit, 1000); break;
    case TG_UNIT_RATIO: l = ladder_of(unit, 0); break;
    default: return NULL;
    }
    if (!l.n) return NULL;
    /* the rung scaled() picks at three digits */
    double reach = 1 - 0.5 * pow(10, -3);
    size_t k = 0;
    while (isfinite(x) && k + 1 < l.n && fabs(x) >= l.rung[k + 1]->scale * reach) k++;
    return l.rung[k];
}

char *tg_fmt_num_in(char *buf, size_t size, double x, const tg_unit_suffix *rung, int decimals)
{
    decimals = decimals < 0 ? 0 : decimals > 9 ? 9 : decimals;
    double v = rung ? x / rung->scale : x;
    if (fabs(v) < 0.5 * pow(10, -decimals)) v = 0;   /* no "-0" */
    if (!rung) snprintf(buf, size, "%.*f", decimals, v);
    else snprintf(buf, size, "%.*f%s%s", decimals, v, rung->unit == TG_UNIT_RATIO ? "" : " ", rung->suffix);
    return buf;
}

char *tg_fmt_value(char *buf, size_t size, tg_value v)
{
    switch (v.type) {
    case TG_TY_NULL: snprintf(buf, size, "n/a"); return buf;
    case TG_TY_BOOL: snprintf(buf, size, "%s", v.u.b ? "true" : "false"); return buf;
    case TG_TY_STRING: snprintf(buf, size, "%s", v.u.s ? v.u.s : "n/a"); return buf;
    case TG_TY_INT:
        if (v.unit == TG_UNIT_NONE) {
            snprintf(buf, size, "%lld", (long long)v.u.i);
            return buf;
        }
        return tg_fmt_num(buf, size, (double)v.u.i, v.unit);
    default: return tg_fmt_num(buf, size, v.u.f, v.unit);
    }
}

char *tg_fmt_literal(char *buf, size_t size, int64_t x, tg_unit unit)
{
    if (unit != TG_UNIT_NS) {
        const char *sfx = tg_unit_base_suffix(unit);
        snprintf(buf, size, "%lld%s", (long long)x, sfx ? sfx : "");
        return buf;
    }
    /* the powers of 1000 of units.def (min and h are not), largest first */
    ladder l = ladder_of(TG_UNIT_NS, 1000);
    size_t k = l.n - 1;
    while (k > 0 && (x == 0 || x % (int64_t)l.rung[k]->scale != 0)) k--;
    snprintf(buf, size, "%lld%s", (long long)(x / (int64_t)l.rung[k]->scale), l.rung[k]->suffix);
    return buf;
}

char *tg_fmt_change(char *buf, size_t size, double change)
{
    char num[TG_FMT_BUF];
    tg_fmt_num(num, sizeof num, change, TG_UNIT_RATIO);
    bool plus = change > 0 && !isnan(change);
    snprintf(buf, size, "%s%s", plus ? "+" : "", num);
    return buf;
}
