/*
** From rule files to rule definitions: walks the YAML tree of each file
** (yaml_doc.c) and collects `version`, `lists`, `macros`, `rules` and
** `override` into the loader. Directories contribute their *.yaml / *.yml
** files in name order, except rule test files (*.test.yaml, *_test.yaml).
** A rule id defined twice without `override` is an
** error that points at both places; an override replaces keys of a rule
** loaded earlier, or appends to its `where` (and-ed) and `tags`.
**
** Unknown keys are errors with a "did you mean" suggestion, and every
** error of every file is reported before the load gives up.
*/
#include "load.h"

#include <ctype.h>
#include <math.h>
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "../common/text.h"

const char *const tg_rule_key_names[TG_RK_COUNT] = {
#define X(id, name) name,
    TG_RULE_KEYS(X)
#undef X
};

static bool is_ident(const char *s)
{
    if (!isalpha((unsigned char)*s) && *s != '_') return false;
    for (s++; *s; s++)
        if (!isalnum((unsigned char)*s) && *s != '_') return false;
    return true;
}

bool tg_rules_valid_id(const char *s)
{
    if (!isalnum((unsigned char)*s)) return false;
    for (s++; *s; s++)
        if (!isalnum((unsigned char)*s) && *s != '_' && *s != '-') return false;
    return true;
}

static bool is_reserved(const char *s)
{
    static const char *const words[] = {"and", "or", "not", "in", "matches", "startswith", "contains",
                                        "null", "true", "false", "params", "trace", "baseline"};
    for (size_t i = 0; i < sizeof words / sizeof *words; i++)
        if (strcmp(words[i], s) == 0) return true;
    return tg_agg_find(s) >= 0;
}

/* Check the keys of a mapping: scalars, no duplicates, all in `allowed`. */
static bool check_keys(tg_rules_loader *ld, const tg_ynode *map, const char *const *allowed, size_t n_allowed,
                       const char *where)
{
    bool ok = true;
    for (size_t i = 0; i < map->n; i++) {
        const tg_ynode *k = map->items[i];
        if (k->kind != TG_Y_SCALAR) {
            tg_rules_error(&ld->ctx, k->pos, "keys of %s must be plain names, not %s", where,
                           tg_ynode_kind_name(k));
            ok = false;
            continue;
        }
        bool known = allowed == NULL;   /* NULL: any name (lists, macros) */
        for (size_t j = 0; j < n_allowed && !known; j++) known = strcmp(allowed[j], k->value) == 0;
        if (!known) {
            const char *hint = tg_suggest(k->value, allowed, n_allowed);
            if (hint)
                tg_rules_error(&ld->ctx, k->pos, "unknown key '%s' in %s (did you mean '%s'?)", k->value,
                               where, hint);
            else
                tg_rules_error(&ld->ctx, k->pos, "unknown key '%s' in %s", k->value, where);
            ok = false;
        }
        for (size_t j = 0; j < i; j++)
            if (map->items[j]->kind == TG_Y_SCALAR && strcmp(map->items[j]->value, k->value) == 0) {
                tg_rules_error(&ld->ctx, k->pos, "duplicate key '%s' in %s (first at line %d)", k->value,
                               where, map->items[j]->pos.line);
                ok = false;
                break;
            }
    }
    return ok;
}

tg_value tg_rfile_scalar_value(tg_rules_loader *ld, const tg_ynode *n, int *suffix)
{
    *suffix = -1;
    if (n->style == TG_YS_PLAIN) {
        double num;
        bool is_int;
        int64_t ival;
        tg_unit unit;
        if (tg_lex_number_literal(n->value, &num, &is_int, &ival, &unit)) {
            /* recover the suffix for printing: the trailing letters */
            size_t e = n->len, b = e;
            while (b > 0 && (isalpha((unsigned char)n->value[b - 1]) || n->value[b - 1] == '%')) b--;
            for (size_t i = 0; b < e && i < tg_unit_suffix_count; i++)
                if (strlen(tg_unit_suffixes[i].suffix) == e - b &&
                    memcmp(tg_unit_suffixes[i].suffix, n->value + b, e - b) == 0)
                    *suffix = (int)i;
            return is_int ? tg_int(ival, unit) : tg_float(num, unit);
        }
        if (tg_lex_number_out_of_range(n->value, &unit)) {
            /* not silently a string either; NaN of its unit keeps the
            ** rest of the rule from piling type errors on this one */
            tg_rules_error(&ld->ctx, n->pos, "the number '%.40s' is out of range (a finite number "
                           "is needed)", n->value);
            return tg_float(NAN, unit);
        }
        if (strcmp(n->value, "true") == 0) return tg_bool(true);
        if (strcmp(n->value, "false") == 0) return tg_bool(false);
        if (strcmp(n->value, "null") == 0 || strcmp(n->value, "~") == 0 || n->len == 0) return tg_null();
    }
    return tg_str(tg_arena_strdup(ld->ctx.arena, n->value));
}

tg_macro *tg_rfile_macro(tg_rules_loader *ld, const char *name)
{
    for (size_t i = 0; i < ld->n_macros; i++)
        if (strcmp(ld->macros[i].name, name) == 0) return &ld->macros[i];
    return NULL;
}

tg_list *tg_rfile_list(tg_rules_loader *ld, const char *name)
{
    for (size_t i = 0; i < ld->n_lists; i++)
        if (strcmp(ld->lists[i].name, name) == 0) return &ld->lists[i];
    return NULL;
}

/* A name for a list or macro: an identifier, not reserved, not taken. */
static bool check_name(tg_rules_loader *ld, const tg_ynode *k, const char *what)
{
    if (!is_ident(k->value)) {
        tg_rules_error(&ld->ctx, k->pos, "%s name '%s' must be an identifier (letters, digits, _)", what,
                       k->value);
        return false;
    }
    if (is_reserved(k->value)) {
        tg_rules_error(&ld->ctx, k->pos, "'%s' is a reserved word and cannot name a %s", k->value, what);
        return false;
    }
    const tg_macro *m = tg_rfile_macro(ld, k->value);
    const tg_list *l = tg_rfile_list(ld, k->value);
    if (m || l) {
        tg_pos first = m ? m->pos : l->pos;
        tg_rules_error(&ld->ctx, k->pos, "'%s' is already defined as a %s at %s:%d", k->value,
                       m ? "macro" : "list", first.file, first.line);
        return false;
    }
    return true;
}

static void load_lists(tg_rules_loader *ld, const tg_ynode *lists)
{
    if (lists->kind != TG_Y_MAP) {
        tg_rules_error(&ld->ctx, lists->pos, "'lists' must map names to lists, not %s", tg_ynode_kind_name(lists));
        return;
    }
    check_keys(ld, lists, NULL, 0, "lists");   /* only duplicates and key kinds matter */
    for (size_t i = 0; i < lists->n; i++) {
        const tg_ynode *k = lists->items[i], *v = lists->vals[i];
        if (k->kind != TG_Y_SCALAR || !check_name(ld, k, "list")) continue;
        if (v->kind != TG_Y_SEQ) {
            tg_rules_error(&ld->ctx, v->pos, "list '%s' must be a sequence such as [a, b], not %s", k->value,
                           tg_ynode_kind_name(v));
            continue;
        }
        tg_list l = {.name = tg_arena_strdup(ld->ctx.arena, k->value), .pos = k->pos, .n = v->n};
        l.items = tg_arena_alloc(ld->ctx.arena, (v->n ? v->n : 1) * sizeof *l.items);
        bool ok = l.items != NULL;
        for (size_t j = 0; ok && j < v->n; j++) {
            const tg_ynode *e = v->items[j];
            int sfx;
            if (e->kind != TG_Y_SCALAR) {
                tg_rules_error(&ld->ctx, e->pos, "elements of list '%s' must be strings or numbers, not %s",
                               k->value, tg_ynode_kind_name(e));
                ok = false;
                break;
            }
            l.items[j] = tg_rfile_scalar_value(ld, e, &sfx);
            if (l.items[j].type == TG_TY_NULL || l.items[j].type == TG_TY_BOOL)
                l.items[j] = tg_str(tg_arena_strdup(ld->ctx.arena, e->value));
        }
        if (ok) TG_PUSH(ld->lists, ld->n_lists, ld->cap_lists, l);
    }
}

static void load_macros(tg_rules_loader *ld, const tg_ynode *macros)
{
    if (macros->kind != TG_Y_MAP) {
        tg_rules_error(&ld->ctx, macros->pos, "'macros' must map names to expressions, not %s",
                       tg_ynode_kind_name(macros));
        return;
    }
    check_keys(ld, macros, NULL, 0, "macros");
    for (size_t i = 0; i < macros->n; i++) {
        const tg_ynode *k = macros->items[i], *v = macros->vals[i];
        if (k->kind != TG_Y_SCALAR || !check_name(ld, k, "macro")) continue;
        tg_macro m = {.name = tg_arena_strdup(ld->ctx.arena, k->value), .pos = k->pos};
        if (v->kind != TG_Y_SCALAR) {
            tg_rules_error(&ld->ctx, v->pos, "macro '%s' must be an expression (a string), not %s", k->value,
                           tg_ynode_kind_name(v));
        } else {
            const tg_srcmap *map = tg_yaml_scalar_map(ld->ctx.arena, v);
            if (map) m.ast = tg_parse_expr(&ld->ctx, map);
        }
        /* Registered even when broken, so that uses say "broken macro"
        ** rather than "unknown name". */
        TG_PUSH(ld->macros, ld->n_macros, ld->cap_macros, m);
    }
}

static tg_rule_def *find_def(tg_rules_loader *ld, const char *id)
{
    for (size_t i = 0; i < ld->n_defs; i++)
        if (strcmp(ld->defs[i].id, id) == 0) return &ld->defs[i];
    return NULL;
}

/* The `id` of a rule or override mapping, checked. */
static const char *rule_id(tg_rules_loader *ld, const tg_ynode *map, const char *what)
{
    const tg_ynode *id = tg_ymap_get(map, "id");
    if (!id) {
        tg_rules_error(&ld->ctx, map->pos, "%s without an 'id'", what);
        return NULL;
    }
    if (id->kind != TG_Y_SCALAR || !tg_rules_valid_id(id->value)) {
        tg_rules_error(&ld->ctx, id->pos,
                       "a rule id is letters, digits, '-' and '_', starting with a letter or digit");
        return NULL;
    }
    return id->value;
}

static void load_rules(tg_rules_loader *ld, const tg_ynode *rules)
{
    if (rules->kind != TG_Y_SEQ) {
        tg_rules_error(&ld->ctx, rules->pos, "'rules' must be a list of rules (each starting with '- id:'), not %s",
                       tg_ynode_kind_name(rules));
        return;
    }
    for (size_t i = 0; i < rules->n; i++) {
        tg_ynode *r = rules->items[i];
        if (r->kind != TG_Y_MAP) {
            tg_rules_error(&ld->ctx, r->pos, "a rule must be a mapping of keys (id, title, ...), not %s",
                           tg_ynode_kind_name(r));
            continue;
        }
        check_keys(ld, r, tg_rule_key_names, TG_RK_COUNT, "a rule");
        const char *id = rule_id(ld, r, "a rule");
        if (!id) continue;
        const tg_rule_def *prev = find_def(ld, id);
        if (prev) {
            tg_rules_error(&ld->ctx, tg_ymap_get(r, "id")->pos,
                           "duplicate rule id '%s' (first defined at %s:%d); use 'override:' to change a rule",
                           id, prev->pos.file, prev->pos.line);
            continue;
        }
        tg_rule_def d = {.id = tg_arena_strdup(ld->ctx.arena, id), .pos = r->pos};
        for (size_t k = 0; k < r->n; k++)
            for (int key = 0; key < TG_RK_COUNT; key++)
                if (tg_yscalar_is(r->items[k], tg_rule_key_names[key])) d.key[key] = r->vals[k];
        TG_PUSH(ld->defs, ld->n_defs, ld->cap_defs, d);
    }
}

static void apply_append(tg_rules_loader *ld, tg_rule_def *d, const tg_ynode *app)
{
    static const char *const keys[] = {"where", "tags"};
    if (app->kind != TG_Y_MAP) {
        tg_rules_error(&ld->ctx, app->pos, "'append' must be a mapping with 'where' and/or 'tags'");
        return;
    }
    if (!check_keys(ld, app, keys, 2, "append (only 'where' and 'tags' can be appended)")) return;
    for (size_t i = 0; i < app->n; i++) {
        tg_ynode *v = app->vals[i];
        if (tg_yscalar_is(app->items[i], "where"))
            TG_PUSH(d->where_more, d->n_where_more, d->cap_where_more, v);
        else
            TG_PUSH(d->tags_more, d->n_tags_more, d->cap_tags_more, v);
    }
}

static void load_overrides(tg_rules_loader *ld, const tg_ynode *ovs)
{
    if (ovs->kind != TG_Y_SEQ) {
        tg_rules_error(&ld->ctx, ovs->pos, "'override' must be a list of {id: ..., keys to replace}");
        return;
    }
    const char *allowed[TG_RK_COUNT + 1];
    for (int k = 0; k < TG_RK_COUNT; k++) allowed[k] = tg_rule_key_names[k];
    allowed[TG_RK_COUNT] = "append";
    for (size_t i = 0; i < ovs->n; i++) {
        const tg_ynode *o = ovs->items[i];
        if (o->kind != TG_Y_MAP) {
            tg_rules_error(&ld->ctx, o->pos, "an override must be a mapping with an 'id', not %s",
                           tg_ynode_kind_name(o));
            continue;
        }
        check_keys(ld, o, allowed, TG_RK_COUNT + 1, "an override");
        const char *id = rule_id(ld, o, "an override");
        if (!id) continue;
        tg_rule_def *d = find_def(ld, id);
        if (!d) {
            const char *names[256];
            size_t n = 0;
            for (size_t k = 0; k < ld->n_defs && n < 256; k++) names[n++] = ld->defs[k].id;
            const char *hint = tg_suggest(id, names, n);
            tg_rules_error(&ld->ctx, tg_ymap_get(o, "id")->pos,
                           "override of unknown rule '%s'%s%s%s (overrides apply to rules loaded before them)",
                           id, hint ? " (did you mean '" : "", hint ? hint : "", hint ? "'?)" : "");
            continue;
        }
        for (size_t k = 0; k < o->n; k++) {
            const tg_ynode *key = o->items[k];
            if (tg_yscalar_is(key, "id")) continue;
            if (tg_yscalar_is(key, "append")) {
                apply_append(ld, d, o->vals[k]);
                continue;
            }
            for (int rk = 0; rk < TG_RK_COUNT; rk++)
                if (tg_yscalar_is(key, tg_rule_key_names[rk])) {
                    d->key[rk] = o->vals[k];
                    if (rk == TG_RK_WHERE) d->n_where_more = 0;
                    if (rk == TG_RK_TAGS) d->n_tags_more = 0;
                }
        }
    }
}

/* `rules:` with nothing after it is an empty list, not an error. */
static bool is_empty(const tg_ynode *n)
{
    return n->kind == TG_Y_SCALAR && n->style == TG_YS_PLAIN && n->len == 0;
}

static bool load_src(tg_rules_loader *ld, const tg_src *src)
{
    int errors = ld->ctx.diag->n_errors;
    bool ok;
    tg_ynode *root = tg_yaml_parse(&ld->ctx, src, &ok);
    if (!ok) return false;
    tg_pos top = {.file = src->name, .line = 1, .col = 1};
    if (!root) {
        tg_rules_error(&ld->ctx, top, "empty rule file (expected 'version: 1' and 'rules:')");
        return false;
    }
    if (root->kind != TG_Y_MAP) {
        tg_rules_error(&ld->ctx, root->pos, "a rule file must be a mapping with 'version' and 'rules', not %s",
                       tg_ynode_kind_name(root));
        return false;
    }
    static const char *const top_keys[] = {"version", "lists", "macros", "rules", "override"};
    check_keys(ld, root, top_keys, 5, "a rule file");
    const tg_ynode *version = tg_ymap_get(root, "version");
    if (!version)
        tg_rules_error(&ld->ctx, root->pos, "missing 'version: 1' at the top of the rule file");
    else if (!tg_yscalar_is(version, "1"))
        tg_rules_error(&ld->ctx, version->pos, "unsupported rule file version '%s' (this tracegate reads version 1)",
                       version->kind == TG_Y_SCALAR ? version->value : "?");
    const tg_ynode *n;
    if ((n = tg_ymap_get(root, "lists")) && !is_empty(n)) load_lists(ld, n);
    if ((n = tg_ymap_get(root, "macros")) && !is_empty(n)) load_macros(ld, n);
    if ((n = tg_ymap_get(root, "rules")) && !is_empty(n)) load_rules(ld, n);
    if ((n = tg_ymap_get(root, "override")) && !is_empty(n)) load_overrides(ld, n);
    return ld->ctx.diag->n_errors == errors;
}

bool tg_rfile_text(tg_rules_loader *ld, const char *name, const char *text, size_t len)
{
    const tg_src *src = tg_src_from_text(&ld->ctx, name, text, len);
    return src && load_src(ld, src);
}

static bool load_file(tg_rules_loader *ld, const char *path)
{
    /* remembered so that the CLI never writes an output over a rule file */
    const char *copy = tg_arena_strdup(ld->ctx.arena, path);
    if (!copy || !TG_PUSH(ld->files, ld->n_files, ld->cap_files, copy)) {
        tg_diag_error(ld->ctx.diag, TG_EINTERNAL, "out of memory");
        return false;
    }
    const tg_src *src = tg_src_read_file(&ld->ctx, path);
    return src && load_src(ld, src);
}

static int cmp_names(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* A name longer than the suffix it ends with: ".yaml" alone is no rule file. */
static bool ends_with_one_of(const char *name, const char *const *suffixes, size_t n_suffixes)
{
    for (size_t i = 0; i < n_suffixes; i++)
        if (strlen(name) > strlen(suffixes[i]) && tg_ends_with(name, suffixes[i])) return true;
    return false;
}

bool tg_rules_is_test_file(const char *name)
{
#define SUFFIX(s) s,
    static const char *const suffixes[] = {TG_RULE_TEST_SUFFIXES(SUFFIX)};
#undef SUFFIX
    return ends_with_one_of(name, suffixes, sizeof suffixes / sizeof *suffixes);
}

bool tg_rules_is_rule_file(const char *name)
{
#define SUFFIX(s) s,
    static const char *const suffixes[] = {TG_RULE_FILE_SUFFIXES(SUFFIX)};
#undef SUFFIX
    return ends_with_one_of(name, suffixes, sizeof suffixes / sizeof *suffixes) && !tg_rules_is_test_file(name);
}

bool tg_rfile_path(tg_rules_loader *ld, const char *path)
{
    struct stat st;
    if (stat(path, &st) != 0) {
        tg_diag_add(ld->ctx.diag, TG_DIAG_ERROR, TG_EUSAGE, (tg_pos){.file = path}, NULL,
                    "cannot open the rules: %s", strerror(errno));
        return false;
    }
    if (!S_ISDIR(st.st_mode)) return load_file(ld, path);
    DIR *dir = opendir(path);
    if (!dir) {
        tg_diag_add(ld->ctx.diag, TG_DIAG_ERROR, TG_EUSAGE, (tg_pos){.file = path}, NULL,
                    "cannot read the directory: %s", strerror(errno));
        return false;
    }
    char **names = NULL;
    size_t n = 0, cap = 0;
    bool ok = true;
    for (struct dirent *e; (e = readdir(dir));) {
        if (e->d_name[0] == '.' || !tg_rules_is_rule_file(e->d_name)) continue;
        char *full = malloc(strlen(path) + strlen(e->d_name) + 2);
        if (!full) { ok = false; break; }
        sprintf(full, "%s%s%s", path, path[strlen(path) - 1] == '/' ? "" : "/", e->d_name);
        if (!TG_PUSH(names, n, cap, full)) { free(full); ok = false; break; }
    }
    closedir(dir);
    if (!ok) tg_diag_error(ld->ctx.diag, TG_EINTERNAL, "out of memory");
    if (n == 0 && ok && ld->lint)
        tg_diag_add(ld->ctx.diag, TG_DIAG_WARNING, TG_EUSAGE, (tg_pos){.file = path}, NULL,
                    "no *.yaml or *.yml files in this directory");
    if (n > 1) qsort(names, n, sizeof *names, cmp_names);   /* names is NULL when n == 0 */
    for (size_t i = 0; i < n; i++) {
        bool file_ok = load_file(ld, names[i]);
        ok = ok && file_ok;
        free(names[i]);
    }
    free(names);
    return ok;
}
