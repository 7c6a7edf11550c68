/*
** Rendering a rule's message: literal text with each {expression}
** replaced by its value in its unit, printed by common's formatter
** (units.h: 812 ns, 1.23 ms, 16.8 MB, 23.4%, n/a for null), and each
** {expression|one|many} by the word that agrees with the value. A
** message list renders its first case whose condition holds.
*/
#include "eval_int.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *tg_eval_render_message(tg_rule_state *st, const tg_value *aggs, tg_arena *arena)
{
    const tg_rule *r = st->rule;
    if (!r->n_message) {
        return tg_arena_printf(arena, "%lld matching %s row%s", (long long)st->count,
                               tg_source_defs[r->source].name, st->count == 1 ? "" : "s");
    }
    /* a message list: the first case whose condition holds, else the last */
    const tg_msg_part *parts = r->message;
    size_t n_parts = r->n_message;
    for (size_t c = 0; c < r->n_message_cases; c++)
        if (tg_value_truthy(tg_eval_agg(st, aggs, r->message_cases[c].when))) {
            parts = r->message_cases[c].parts;
            n_parts = r->message_cases[c].n_parts;
            break;
        }
    char *out = NULL;
    size_t len = 0, cap = 0;
    for (size_t i = 0; i < n_parts; i++) {
        char buf[128];
        const char *piece = parts[i].text;
        if (parts[i].expr) {
            tg_value v = tg_eval_agg(st, aggs, parts[i].expr);
            if (parts[i].one) piece = tg_value_num(v) == 1 ? parts[i].one : parts[i].many;
            else piece = tg_fmt_value(buf, sizeof buf, v);
        }
        size_t n = strlen(piece);
        if (!tg_grow((void **)&out, &cap, len + n + 1, 1)) {
            free(out);
            return NULL;
        }
        memcpy(out + len, piece, n);
        len += n;
        out[len] = 0;
    }
    const char *res = tg_arena_strdup(arena, out ? out : "");
    free(out);
    return res;
}
