/*
** Rule files through the one YAML reader (yaml_doc.h): the texts are
** registered in the load's context (every message shows its line) and
** parsed with a rule file's limits.
*/
#include "yaml_doc.h"

#include <stdlib.h>
#include <string.h>

static const tg_yaml_limits rule_file_limits = {
    .what = "rule file", .max_scalar = TG_YAML_MAX_SCALAR, .max_depth = TG_YAML_MAX_DEPTH,
    .max_nodes = TG_YAML_MAX_NODES, .max_expanded = TG_YAML_MAX_EXPANDED, .one_document = true,
};

static tg_src *src_register(tg_rules_ctx *ctx, const char *name, char *text, size_t len)
{
    tg_src *s = tg_src_new(ctx->arena, ctx->diag, name, text, len);
    if (s && !TG_PUSH(ctx->srcs, ctx->n_srcs, ctx->cap_srcs, s)) {
        tg_src_release(s);
        tg_diag_error(ctx->diag, TG_EINTERNAL, "out of memory");
        return NULL;
    }
    return s;
}

tg_src *tg_src_from_text(tg_rules_ctx *ctx, const char *name, const char *text, size_t len)
{
    if (len > TG_YAML_MAX_FILE) {
        tg_diag_add(ctx->diag, TG_DIAG_ERROR, TG_EUSAGE, (tg_pos){.file = name}, NULL,
                    "the text is %zu bytes, more than the %u bytes (4 MiB) a rule file may hold",
                    len, TG_YAML_MAX_FILE);
        return NULL;
    }
    char *copy = malloc(len + 1);
    if (!copy) {
        tg_diag_error(ctx->diag, TG_EINTERNAL, "out of memory");
        return NULL;
    }
    memcpy(copy, text, len);
    copy[len] = 0;
    return src_register(ctx, name, copy, len);
}

tg_src *tg_src_read_file(tg_rules_ctx *ctx, const char *path)
{
    char why[256];
    size_t len;
    char *text = tg_read_small_file(path, TG_YAML_MAX_FILE, &len, why, sizeof why);
    if (!text) {
        if (!why[0]) tg_diag_error(ctx->diag, TG_EINTERNAL, "out of memory");
        else tg_diag_add(ctx->diag, TG_DIAG_ERROR, TG_EUSAGE, (tg_pos){.file = path}, NULL, "the rule file %s", why);
        return NULL;
    }
    return src_register(ctx, path, text, len);
}

void tg_src_release_all(tg_rules_ctx *ctx)
{
    for (size_t i = 0; i < ctx->n_srcs; i++) tg_src_release(ctx->srcs[i]);
    free(ctx->srcs);
    ctx->srcs = NULL;
    ctx->n_srcs = ctx->cap_srcs = 0;
}

tg_ynode *tg_yaml_parse(tg_rules_ctx *ctx, const tg_src *src, bool *ok)
{
    return tg_yaml_read(ctx->arena, ctx->diag, src, &rule_file_limits, ok);
}
