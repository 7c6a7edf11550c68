/* Names of value types and units, for messages, `explain` and files. */
#include "value.h"

#include <string.h>

const char *tg_type_name(tg_type t)
{
    static const char *names[] = {"null", "bool", "int", "float", "string"};
    return (unsigned)t < 5 ? names[t] : "?";
}

#define UNIT_KEY(id, key, name) key,
#define UNIT_NAME(id, key, name) name,
static const char *const unit_keys[] = {TG_UNITS(UNIT_KEY)};
static const char *const unit_names[] = {TG_UNITS(UNIT_NAME)};

const char *tg_unit_name(tg_unit u)
{
    return (unsigned)u < TG_UNIT_COUNT_ ? unit_names[u] : "?";
}

const char *tg_unit_key(tg_unit u)
{
    return (unsigned)u < TG_UNIT_COUNT_ ? unit_keys[u] : "?";
}

bool tg_unit_parse_key(const char *key, tg_unit *out)
{
    for (unsigned u = 0; key && u < TG_UNIT_COUNT_; u++)
        if (!strcmp(key, unit_keys[u])) {
            *out = (tg_unit)u;
            return true;
        }
    return false;
}
