/*
** Units for people, both ways: the literal suffixes of the rule language
** (units.def: 64KB, 20%, 500ms) and the one formatter every number a user
** reads goes through -- rule messages, reports, baseline listings, the CLI.
**
** The formatter prints three significant digits (or `digits`) and picks
** the unit after rounding, from the same ladders units.def defines:
** durations adapt (812 ns, 1.23 ms, 4.5 s, 2.5 min, 2 h); byte counts use
** decimal units only (16.8 MB for 16 MiB, 64 KB), so that the sizes of one
** report compare at a glance (docs/formats.md), and rates in the same
** decimal units per second (18.4 GB/s); ratios print as percentages
** (23.4%); plain integers as integers. NaN prints "n/a", infinities "inf".
** tg_fmt_literal is the exact form, for text an author pastes back.
** Every function writes into the caller's buffer and returns it.
*/
#ifndef TG_UNITS_H
#define TG_UNITS_H

#include <stddef.h>
#include "value.h"

/* One literal suffix (units.def): N<suffix> is N * scale in the base unit. */
typedef struct tg_unit_suffix {
    const char *suffix;
    tg_unit unit;
    double scale;
    const char *doc;
} tg_unit_suffix;

extern const tg_unit_suffix tg_unit_suffixes[];
extern const size_t tg_unit_suffix_count;

/* The suffix of a unit's base (scale 1 in units.def: "ns", "B", "B/s"), or
** NULL for a unit without one (none, ratio). */
const char *tg_unit_base_suffix(tg_unit unit);

/* A buffer that holds any number this header prints. */
#define TG_FMT_BUF 64

/* A value in its unit; strings as they are (truncated), null as "n/a". */
char *tg_fmt_value(char *buf, size_t size, tg_value v);
/* A number in a unit, with three significant digits or `digits` (1..17). */
char *tg_fmt_num(char *buf, size_t size, double x, tg_unit unit);
char *tg_fmt_num_digits(char *buf, size_t size, double x, tg_unit unit, int digits);
/* A signed relative change as a percentage: +6.5%, -0.1%, 0%. */
char *tg_fmt_change(char *buf, size_t size, double change);
/* The suffix the formatter would print x in (units.def: "ms" for 47.9e6
** ns, "MB", "GB/s", "%"), so that every tick of a chart's axis, and its
** title, use the one unit of the axis's largest value; NULL for a unit
** without suffixes (plain numbers). */
const tg_unit_suffix *tg_unit_rung(double x, tg_unit unit);
/* x in that suffix with `decimals` fixed decimals ("20 ms", "0.5 s",
** "40%"); without a suffix, a plain number. */
char *tg_fmt_num_in(char *buf, size_t size, double x, const tg_unit_suffix *rung, int decimals);
/* An integer as a literal of the rule language that reads back as the
** same value, for an author to paste (rule tests' differences): a
** duration in the largest of ns, us, ms, s that keeps it whole (2ms,
** 1500us, 7ns, 0ns); another unit in its base suffix (16777216B, 12). */
char *tg_fmt_literal(char *buf, size_t size, int64_t x, tg_unit unit);

#endif
