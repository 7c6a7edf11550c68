/*
** What every stage of the rule front end shares: the tables expanded from
** nodes.def and aggregates.def, positions in rule texts (byte
** offset -> line and column, the offending line for a caret), reporting a
** message at a position, and the "did you mean" suggestion.
*/
#include "expr.h"

#include <stdlib.h>
#include <string.h>

const char *const tg_node_spelling[TG_N_COUNT] = {
#define TG_NODE(id, spelling, cls, bp) [TG_N_##id] = spelling,
#include "nodes.def"
#undef TG_NODE
};

const tg_node_class tg_node_classes[TG_N_COUNT] = {
#define TG_NODE(id, spelling, cls, bp) [TG_N_##id] = TG_NC_##cls,
#include "nodes.def"
#undef TG_NODE
};

const int tg_node_binding_power[TG_N_COUNT] = {
#define TG_NODE(id, spelling, cls, bp) [TG_N_##id] = bp,
#include "nodes.def"
#undef TG_NODE
};

const tg_agg_def tg_agg_defs[TG_AGG_COUNT_KINDS] = {
#define TG_AGG(id, nm, arg, result, q, doc) \
    [TG_AGG_##id] = {nm, TG_AGG_ARG_##arg, TG_AGG_RES_##result, q, doc},
#include "aggregates.def"
#undef TG_AGG
};

const char *const tg_baseline_stat_names[TG_BSTAT_COUNT] = {
#define X(id, name, kind, doc) name,
    TG_BASELINE_STATS(X)
#undef X
};

int tg_agg_find(const char *name)
{
    for (int i = 0; i < TG_AGG_COUNT_KINDS; i++)
        if (strcmp(tg_agg_defs[i].name, name) == 0) return i;
    return -1;
}

/* ------------------------------------------------------------ positions */

tg_srcmap *tg_srcmap_flat(tg_arena *a, const tg_src *src, const char *text, int line, int col0)
{
    tg_srcmap *m = tg_arena_alloc(a, sizeof *m);
    if (!m) return NULL;
    m->src = src;
    m->text = text;
    m->len = strlen(text);
    m->pos = tg_arena_alloc(a, (m->len + 1) * sizeof *m->pos);
    if (!m->pos) return NULL;
    for (size_t i = 0; i <= m->len; i++)
        m->pos[i] = (tg_pos){.file = src ? src->name : NULL, .line = line, .col = col0 + (int)i};
    return m;
}

/* ---------------------------------------------------------- diagnostics */

void tg_rules_vmsg(tg_rules_ctx *ctx, tg_diag_level level, tg_pos pos, const char *fmt, va_list ap)
{
    char *line_text = NULL;
    for (size_t i = 0; pos.file && pos.line > 0 && i < ctx->n_srcs; i++)
        if (ctx->srcs[i]->name == pos.file) {
            line_text = tg_src_line(ctx->srcs[i], pos.line);
            break;
        }
    tg_diag_vadd(ctx->diag, level, TG_EUSAGE, pos, line_text, fmt, ap);
    free(line_text);
}

void tg_rules_msg(tg_rules_ctx *ctx, tg_diag_level level, tg_pos pos, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    tg_rules_vmsg(ctx, level, pos, fmt, ap);
    va_end(ap);
}

