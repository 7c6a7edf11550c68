/*
** Rule files and rule-test files through the one YAML reader
** (common/yaml.h), with the limits of a rule file: files over 4 MiB,
** scalars over 64 KiB, nesting deeper than 64, more than 200000 nodes and
** aliases expanding to more than 10000 nodes (billion laughs) are refused.
** The texts read are registered in the load's context, so that every
** message shows its offending line, and released together.
*/
#ifndef TG_RULES_YAML_DOC_H
#define TG_RULES_YAML_DOC_H

#include "ast.h"

#define TG_YAML_MAX_FILE     (4u * 1024 * 1024)
#define TG_YAML_MAX_SCALAR   (64u * 1024)
#define TG_YAML_MAX_DEPTH    64
#define TG_YAML_MAX_NODES    200000
#define TG_YAML_MAX_EXPANDED 10000

/* Read a file into a new tg_src registered in ctx (size limit checked).
** NULL after reporting when it cannot be read. */
tg_src *tg_src_read_file(tg_rules_ctx *ctx, const char *path);
/* Register an in-memory text (copied) under `name`. */
tg_src *tg_src_from_text(tg_rules_ctx *ctx, const char *name, const char *text, size_t len);
/* Release the texts of every src of ctx (positions stay valid). */
void tg_src_release_all(tg_rules_ctx *ctx);

/* Parse src as one YAML document with a rule file's limits. Returns its
** root; NULL for an empty document (*ok true) or after reporting an error
** (*ok false). */
tg_ynode *tg_yaml_parse(tg_rules_ctx *ctx, const tg_src *src, bool *ok);

/* Position map of a scalar's value (yaml_scalar.c): plain, quoted and block
** scalars, with escapes, folding and indentation accounted for. */
tg_srcmap *tg_yaml_scalar_map(tg_arena *a, const tg_ynode *scalar);

#endif
