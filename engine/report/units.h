/*
** Human-readable numbers for reports and CLI listings: durations adapt
** their unit (ns, us, ms, s) and bytes use decimal prefixes (B, KB, MB, GB,
** TB), both with three significant digits; ratios print as percentages.
** A value's unit comes from its tg_value when set, otherwise from its name
** (names of the rule language's facts follow a convention: *_ns are
** durations, *_bytes byte counts, *_frac / *ratio* / *overlap* fractions;
** the model's duration fields duration, *time, period, span and queue are
** durations too). A name may be an expression: "p50(gpu_time)".
** Every function writes into a caller's buffer and returns it.
*/
#ifndef TG_UNITS_H
#define TG_UNITS_H

#include <stddef.h>
#include "../common/value.h"

/* Buffer size that holds any output of this header. */
#define TG_UNITS_BUF 64

char *tg_units_duration(char *buf, size_t size, double ns);
char *tg_units_bytes(char *buf, size_t size, double bytes);
char *tg_units_ratio(char *buf, size_t size, double ratio);
/* A plain number: integers as integers, others with up to 4 significant
** digits ("nan" and "inf" spelled out). */
char *tg_units_number(char *buf, size_t size, double x);
/* Signed relative change as a percentage: +6.52%, -0.1%. */
char *tg_units_change(char *buf, size_t size, double change);

/* The unit a fact name implies ("sum_duration_ns" -> TG_UNIT_NS). */
tg_unit tg_units_from_name(const char *name);

/* A value in its unit (explicit, else implied by name, which may be NULL);
** strings are copied as they are (truncated to the buffer), null is "null". */
char *tg_units_value(char *buf, size_t size, const char *name, const tg_value *v);

#endif
