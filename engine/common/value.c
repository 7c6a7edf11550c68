/* Names of value types and units, for messages and `explain`. */
#include "value.h"

const char *tg_type_name(tg_type t)
{
    static const char *names[] = {"null", "bool", "int", "float", "string"};
    return (unsigned)t < 5 ? names[t] : "?";
}

const char *tg_unit_name(tg_unit u)
{
    static const char *names[] = {"number", "duration", "bytes", "ratio"};
    return (unsigned)u < 4 ? names[u] : "?";
}
