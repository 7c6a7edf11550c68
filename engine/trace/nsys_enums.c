/* The nsys enumerations of nsys_enums.h, expanded from their lists. */
#include "nsys_enums.h"

#include <string.h>

const char *const tg_copy_kind_names[] = {
#define X(id, name) [id] = name,
    TG_COPY_KIND_LIST(X)
#undef X
    NULL};
const char *const tg_mem_kind_names[] = {
#define X(id, name) [id] = name,
    TG_MEM_KIND_LIST(X)
#undef X
    NULL};
const size_t tg_copy_kind_count = sizeof tg_copy_kind_names / sizeof *tg_copy_kind_names - 1;
const size_t tg_mem_kind_count = sizeof tg_mem_kind_names / sizeof *tg_mem_kind_names - 1;

static int code_of(const char *const *names, size_t n, const char *name, size_t len)
{
    for (size_t i = 0; i < n; i++)
        if (strlen(names[i]) == len && !memcmp(names[i], name, len)) return (int)i;
    return -1;
}

int tg_copy_kind_code(const char *name, size_t len)
{
    return code_of(tg_copy_kind_names, tg_copy_kind_count, name, len);
}
