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

/* ----------------------------------------------------------- suggestions */

static size_t edit_distance(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b);
    if (la > 64 || lb > 64) return (size_t)-1;
    size_t row[65];
    for (size_t j = 0; j <= lb; j++) row[j] = j;
    for (size_t i = 1; i <= la; i++) {
        size_t diag = row[0];
        row[0] = i;
        for (size_t j = 1; j <= lb; j++) {
            size_t up = row[j];
            size_t cost = (a[i - 1] == b[j - 1]) ? 0 : 1;
            /* case differences are cheap: KB vs kb, Duration vs duration */
            if (cost && (a[i - 1] | 0x20) == (b[j - 1] | 0x20)) cost = 0;
            size_t best = diag + cost;
            if (row[j] + 1 < best) best = row[j] + 1;
            if (row[j - 1] + 1 < best) best = row[j - 1] + 1;
            row[j] = best;
            diag = up;
        }
    }
    return row[lb];
}

const char *tg_suggest(const char *word, const char *const *names, size_t n)
{
    const char *best = NULL;
    size_t best_d = (size_t)-1;
    size_t len = strlen(word);
    size_t limit = len <= 3 ? 1 : (len / 3 > 2 ? len / 3 : 2);
    for (size_t i = 0; i < n; i++) {
        if (!names[i] || strcmp(names[i], word) == 0) continue;
        size_t d = edit_distance(word, names[i]);
        if (d < best_d) {
            best_d = d;
            best = names[i];
        }
    }
    return best_d <= limit ? best : NULL;
}
