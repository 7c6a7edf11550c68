/*
** A rule file as a small tree of YAML nodes (scalars, sequences, mappings)
** built from libyaml's event stream, each node with its position and each
** scalar with the byte range of its raw text, so that a position inside
** an expression string can be mapped back onto the file (yaml_scalar.c).
**
** The reader is defensive: rule files are input, and a hostile one must get
** a clear error quickly and with bounded memory. Files over 4 MiB, scalars
** over 64 KiB, nesting deeper than 64, more than 200000 nodes and aliases
** expanding to more than 10000 nodes (billion laughs) are refused.
*/
#ifndef TG_RULES_YAML_DOC_H
#define TG_RULES_YAML_DOC_H

#include "ast.h"

#define TG_YAML_MAX_FILE     (4u * 1024 * 1024)
#define TG_YAML_MAX_SCALAR   (64u * 1024)
#define TG_YAML_MAX_DEPTH    64
#define TG_YAML_MAX_NODES    200000
#define TG_YAML_MAX_EXPANDED 10000

typedef enum tg_ynode_kind { TG_Y_SCALAR, TG_Y_SEQ, TG_Y_MAP } tg_ynode_kind;

/* Scalar styles, numbered as libyaml's yaml_scalar_style_t. */
typedef enum tg_yscalar_style {
    TG_YS_ANY, TG_YS_PLAIN, TG_YS_SINGLE, TG_YS_DOUBLE, TG_YS_LITERAL, TG_YS_FOLDED
} tg_yscalar_style;

typedef struct tg_ynode {
    tg_ynode_kind kind;
    tg_pos pos;                /* start of the node (the quote / indicator for scalars) */
    const tg_src *src;
    /* scalars */
    const char *value;
    size_t len;
    tg_yscalar_style style;
    size_t raw_start, raw_end; /* byte range of the raw scalar in src->text */
    /* sequences: items[0..n); mappings: keys items[i], values vals[i] */
    struct tg_ynode **items;
    struct tg_ynode **vals;
    size_t n;
    size_t expanded;           /* nodes in this subtree, aliases expanded */
} tg_ynode;

/* Read a file into a new tg_src registered in ctx (size limit checked).
** NULL after reporting when it cannot be read. */
tg_src *tg_src_read_file(tg_rules_ctx *ctx, const char *path);
/* Register an in-memory text (copied) under `name`. */
tg_src *tg_src_from_text(tg_rules_ctx *ctx, const char *name, const char *text, size_t len);
/* Release the texts of every src of ctx (positions stay valid). */
void tg_src_release_all(tg_rules_ctx *ctx);

/* Parse src as one YAML document. Returns its root; NULL for an empty
** document (*ok true) or after reporting an error (*ok false). */
tg_ynode *tg_yaml_parse(tg_rules_ctx *ctx, const tg_src *src, bool *ok);

/* Position map of a scalar's value (yaml_scalar.c): plain, quoted and block
** scalars, with escapes, folding and indentation accounted for. */
tg_srcmap *tg_yaml_scalar_map(tg_arena *a, const tg_ynode *scalar);

/* Mapping lookup by key; NULL when absent. */
tg_ynode *tg_ymap_get(const tg_ynode *map, const char *key);
static inline bool tg_yscalar_is(const tg_ynode *n, const char *s);

static inline bool tg_yscalar_is(const tg_ynode *n, const char *s)
{
    size_t l = 0;
    while (s[l]) l++;
    if (!n || n->kind != TG_Y_SCALAR || n->len != l) return false;
    for (size_t i = 0; i < l; i++)
        if (n->value[i] != s[i]) return false;
    return true;
}

const char *tg_ynode_kind_name(const tg_ynode *n);

#endif
