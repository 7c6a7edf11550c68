/*
** The one YAML reader: rule files, rule-test files and baselines are read
** into a small tree of nodes (scalars, sequences, mappings) from libyaml's
** event stream, each node with its position and each scalar with the byte
** range of its raw text, so that a position inside a scalar can be mapped
** back onto the file (rules/yaml_scalar.c).
**
** The reader is defensive: these files are input a CI job reads, and a
** hostile one must get a clear error quickly and with bounded memory. The
** caller gives the limits (tg_yaml_limits: file size, scalar size, nesting,
** nodes, and nodes that aliases expand to -- billion laughs); each is
** checked as events arrive, so a hostile file stops early. Aliases are not
** copied: an alias node points at its anchor's node.
**
** libyaml marks count characters; positions here are byte columns, the
** unit tg_diag_format places its caret with.
*/
#ifndef TG_YAML_H
#define TG_YAML_H

#include "common.h"

/* A text being read: its name (the tg_pos.file of its nodes), the text and
** the byte offset of each line. */
typedef struct tg_src {
    const char *name;          /* arena copy */
    const char *text;          /* whole text (malloc'd); NULL once released */
    size_t len;
    size_t *line_starts;       /* byte offset of each line (malloc'd) */
    size_t n_lines;
} tg_src;

/* A src over `text` (malloc'd, len bytes, NUL-terminated; owned from now
** on, freed on failure); NULL with an error in diag when out of memory. */
tg_src *tg_src_new(tg_arena *a, tg_diag *diag, const char *name, char *text, size_t len);
/* Free the text and line table (positions already made stay valid). */
void tg_src_release(tg_src *src);
/* Byte offset -> 1-based line and byte column. */
tg_pos tg_src_pos(const tg_src *src, size_t offset);
/* The text of a 1-based line (malloc'd, no newline, cut at 400 bytes),
** NULL if unavailable. */
char *tg_src_line(const tg_src *src, int line);
/* A message at pos of src, with the offending line shown. */
void tg_src_msg(tg_diag *diag, tg_diag_level level, tg_status status, const tg_src *src, tg_pos pos,
                const char *fmt, ...) __attribute__((format(printf, 6, 7)));

/* Read a regular file of at most max_bytes into a malloc'd NUL-terminated
** buffer. NULL on failure with *why set: a phrase ("cannot be opened: No
** such file or directory", "is a directory", "is not a regular file", "is
** larger than ...") for the caller to put in its sentence; *why is NULL
** when out of memory. A FIFO does not block the open. */
char *tg_read_small_file(const char *path, size_t max_bytes, size_t *len, char *why, size_t why_size);

typedef struct tg_yaml_limits {
    const char *what;          /* "rule file", "baseline": for the messages */
    size_t max_scalar;         /* bytes */
    size_t max_depth;          /* at most TG_YAML_DEPTH_CAP */
    size_t max_nodes;
    size_t max_expanded;       /* nodes that aliases stand for */
    bool one_document;         /* a second document is an error */
} tg_yaml_limits;
#define TG_YAML_DEPTH_CAP 64

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
    size_t raw_start, raw_end; /* byte range of the raw node in src->text */
    /* sequences: items[0..n); mappings: keys items[i], values vals[i] */
    struct tg_ynode **items;
    struct tg_ynode **vals;
    size_t n;
    size_t expanded;           /* nodes in this subtree, aliases expanded */
} tg_ynode;

/* Parse src as one YAML document into arena nodes. Returns its root; NULL
** for an empty document (*ok true) or after reporting an error (*ok
** false; TG_EUSAGE, or TG_EINTERNAL when out of memory). */
tg_ynode *tg_yaml_read(tg_arena *a, tg_diag *diag, const tg_src *src, const tg_yaml_limits *limits, bool *ok);

/* Mapping lookup by key; NULL when absent. */
tg_ynode *tg_ymap_get(const tg_ynode *map, const char *key);
/* A plain scalar that YAML reads as null: empty, ~, null, Null, NULL. */
bool tg_ynode_is_null(const tg_ynode *n);
/* "a scalar", "a list", "a mapping" (or "nothing"), for messages. */
const char *tg_ynode_kind_name(const tg_ynode *n);
/* The index of the first key of a mapping that repeats an earlier one
** (n log n), or -1. */
long tg_ymap_duplicate(const tg_ynode *map);

static inline bool tg_yscalar_is(const tg_ynode *n, const char *s)
{
    size_t l = 0;
    while (s[l]) l++;
    if (!n || n->kind != TG_Y_SCALAR || n->len != l) return false;
    for (size_t i = 0; i < l; i++)
        if (n->value[i] != s[i]) return false;
    return true;
}

#endif
