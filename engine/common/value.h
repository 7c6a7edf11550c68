/*
** The one value type that flows through the rule compiler and evaluator
** (Lua's TValue, in spirit): null, bool, int, float or string, with a unit
** so that a duration compared with a byte count is caught at compile time.
*/
#ifndef TG_VALUE_H
#define TG_VALUE_H

#include <stdint.h>
#include <stdbool.h>

typedef enum tg_type {
    TG_TY_NULL, TG_TY_BOOL, TG_TY_INT, TG_TY_FLOAT, TG_TY_STRING
} tg_type;

/* Units: ns for times, bytes for sizes, ratio for fractions (20% = 0.2),
** bytes per second for rates (a size over a duration, the rule compiler
** types it). X(ID, key, name): key is how files spell it (baselines'
** `unit:`, results' `metric_unit` and `units`), name how messages do. */
#define TG_UNITS(X)                       \
    X(NONE,  "none",    "number")         \
    X(NS,    "ns",      "duration")       \
    X(BYTES, "bytes",   "bytes")          \
    X(RATIO, "ratio",   "ratio")          \
    X(RATE,  "bytes/s", "rate")

typedef enum tg_unit {
#define TG_UNIT_ENUM(id, key, name) TG_UNIT_##id,
    TG_UNITS(TG_UNIT_ENUM)
#undef TG_UNIT_ENUM
    TG_UNIT_COUNT_
} tg_unit;

typedef struct tg_value {
    tg_type type;
    tg_unit unit;
    union {
        bool b;
        int64_t i;
        double f;
        const char *s;   /* not owned */
    } u;
} tg_value;

static inline tg_value tg_null(void) { return (tg_value){.type = TG_TY_NULL}; }
static inline tg_value tg_int(int64_t i, tg_unit u) { return (tg_value){.type = TG_TY_INT, .unit = u, .u.i = i}; }
static inline tg_value tg_float(double f, tg_unit u) { return (tg_value){.type = TG_TY_FLOAT, .unit = u, .u.f = f}; }
static inline tg_value tg_bool(bool b) { return (tg_value){.type = TG_TY_BOOL, .u.b = b}; }
static inline tg_value tg_str(const char *s) { return (tg_value){.type = TG_TY_STRING, .u.s = s}; }

const char *tg_type_name(tg_type t);
const char *tg_unit_name(tg_unit u);
/* The file spelling of a unit, and back (false on an unknown key). */
const char *tg_unit_key(tg_unit u);
bool tg_unit_parse_key(const char *key, tg_unit *out);

#endif
