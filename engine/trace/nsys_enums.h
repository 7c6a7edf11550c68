/*
** The nsys enumerations tracegate names (the export's ENUM_CUDA_MEMCPY_OPER
** and ENUM_CUDA_MEM_KIND; docs/architecture.md, "The nsys export"), each one
** list: the model's kind names, the workload's "[memcpy HtoD]" labels, the
** rule tests' `kind:` values and the SQL codes of the evidence all expand
** from it. ORDER: the enum ids.
*/
#ifndef TG_NSYS_ENUMS_H
#define TG_NSYS_ENUMS_H

#include <stddef.h>

/* X(id, name) of ENUM_CUDA_MEMCPY_OPER, ids 0..13. */
#define TG_COPY_KIND_LIST(X)                                                    \
    X(0, "unknown") X(1, "HtoD") X(2, "DtoH") X(3, "HtoA") X(4, "AtoH")         \
    X(5, "AtoA") X(6, "AtoD") X(7, "DtoA") X(8, "DtoD") X(9, "HtoH")            \
    X(10, "PtoP") X(11, "UVM_HtoD") X(12, "UVM_DtoH") X(13, "UVM_DtoD")

/* X(id, name) of ENUM_CUDA_MEM_KIND, ids 0..7. */
#define TG_MEM_KIND_LIST(X)                                                     \
    X(0, "pageable") X(1, "pinned") X(2, "device") X(3, "array")                \
    X(4, "managed") X(5, "device_static") X(6, "managed_static") X(7, "unknown")

#define TG_ENUM_COUNT_ONE(id, name) +1
enum {
    TG_COPY_KIND_COUNT = 0 TG_COPY_KIND_LIST(TG_ENUM_COUNT_ONE),
    TG_MEM_KIND_COUNT = 0 TG_MEM_KIND_LIST(TG_ENUM_COUNT_ONE),
};
#define TG_COPY_KIND_UNKNOWN 0         /* the name of codes this build does not know */
#define TG_MEM_KIND_UNKNOWN 7

extern const char *const tg_copy_kind_names[];   /* by id, NULL-terminated */
extern const char *const tg_mem_kind_names[];
extern const size_t tg_copy_kind_count, tg_mem_kind_count;

/* Code of a copy kind's name (exact), or -1. */
int tg_copy_kind_code(const char *name, size_t len);

#endif
