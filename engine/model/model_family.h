/*
** Kernel families (docs/regressions.md, "Kernel families"): the one
** definition of which kernel names are one entry of the workload, and its
** two mirrors, the SQL and the jq test that select a family's kernels in
** a reproduce query. The three must agree name for name; the definition
** is written so that each step has a plain counterpart in SQL (replace,
** instr, substr, rtrim) and in jq (match, split, sub), and the unit test
** (tests/unit/model/test_family.c) runs all three over the names of the
** real traces.
**
** The family is the kernel's short name: the function name without
** return type, namespaces, template arguments and parameter list.
**   1. The head: the name up to its first `<` or `(`, where the tokens
**      `(anonymous namespace)` and `<unnamed>` are part of the name, not
**      brackets ("void at::native::<unnamed>::foo<float>(int)" has head
**      "void at::native::<unnamed>::foo").
**   2. The short name: what follows the last `::` of the head (the
**      separators found left to right), then what follows the last space
**      in that (the return type): "foo".
**   3. A Triton kernel `triton_KIND_fused_OPS_N` (KIND poi, red, per...;
**      N the kernel's index in its compiled graph) is of family
**      `triton_KIND_fused_OPS`: the kernels of one fused op list are one
**      family, as the instantiations of one template are.
**   4. An empty short name (a head that is empty or ends in a separator)
**      leaves the whole name as its own family.
** A mangled name (`_ZN...`) and a C name are their own family; a generic
** wrapper such as `cutlass::Kernel2<cutlass_80_..._gemm>(...)` is of
** family `Kernel2`, as nsys's own shortName column says.
*/
#ifndef TG_MODEL_FAMILY_H
#define TG_MODEL_FAMILY_H

#include <stddef.h>
#include <stdio.h>

/* The family of kernel name s (len bytes): s[*from .. *from + *n). */
void tg_kernel_family_span(const char *s, size_t len, size_t *from, size_t *n);

/* SQL: the CTE columns a family test reads, computed from column `name`
** of the rows selected by `select_sql` (with its FROM):
** "SELECT *, HEAD AS head FROM (...)" as a subquery text. */
void tg_family_sql_put_rows(FILE *f, const char *select_sql);

/* SQL: a boolean expression, true when row `alias` (of
** tg_family_sql_put_rows) is a kernel of family `family`. */
void tg_family_sql_put_test(FILE *f, const char *alias, const char *family);

/* jq: the definition of `tg_family` (a kernel name to its family), to be
** put before the program that uses it. */
extern const char tg_family_jq_def[];

#endif
