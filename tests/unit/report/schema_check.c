/*
** The test-side JSON Schema subset checker (schema_check.h).
*/
#include "schema_check.h"

#include <stdio.h>
#include <string.h>

typedef struct checker {
    const json_t *root;
    bool strict;
    char *err;
    size_t errsz;
} checker;

static bool fail(checker *c, const char *path, const char *fmt, const char *arg)
{
    char reason[256];
    snprintf(reason, sizeof reason, fmt, arg);
    snprintf(c->err, c->errsz, "%s: %s", path[0] ? path : "/", reason);
    return false;
}

static bool type_is(const json_t *v, const char *type)
{
    if (!strcmp(type, "object")) return json_is_object(v);
    if (!strcmp(type, "array")) return json_is_array(v);
    if (!strcmp(type, "string")) return json_is_string(v);
    if (!strcmp(type, "integer")) return json_is_integer(v);
    if (!strcmp(type, "number")) return json_is_number(v);
    if (!strcmp(type, "boolean")) return json_is_boolean(v);
    if (!strcmp(type, "null")) return json_is_null(v);
    return false;
}

static bool check(checker *c, const json_t *schema, const json_t *v, const char *path);

static const json_t *resolve(checker *c, const char *ref)
{
    const char *prefix = "#/$defs/";
    if (strncmp(ref, prefix, strlen(prefix)) != 0) return NULL;
    return json_object_get(json_object_get(c->root, "$defs"), ref + strlen(prefix));
}

static bool check_type(checker *c, const json_t *type, const json_t *v, const char *path)
{
    if (json_is_string(type)) {
        if (type_is(v, json_string_value(type))) return true;
        return fail(c, path, "not of type %s", json_string_value(type));
    }
    size_t i;
    const json_t *t;
    json_array_foreach(type, i, t) if (type_is(v, json_string_value(t))) return true;
    return fail(c, path, "not of any type %s", "in the list");
}

static bool check_object(checker *c, const json_t *schema, const json_t *v, const char *path)
{
    const json_t *required = json_object_get(schema, "required");
    const json_t *props = json_object_get(schema, "properties");
    const json_t *extra = json_object_get(schema, "additionalProperties");
    size_t i;
    const json_t *name;
    json_array_foreach(required, i, name)
        if (!json_object_get(v, json_string_value(name)))
            return fail(c, path, "missing required member \"%s\"", json_string_value(name));
    const char *key;
    const json_t *member;
    json_object_foreach((json_t *)v, key, member) {
        char sub[512];
        snprintf(sub, sizeof sub, "%s/%s", path, key);
        const json_t *ps = props ? json_object_get(props, key) : NULL;
        if (ps) {
            if (!check(c, ps, member, sub)) return false;
        } else if (json_is_false(extra) || (c->strict && props && !extra)) {
            return fail(c, sub, "member \"%s\" is not declared in the schema", key);
        } else if (json_is_object(extra)) {
            if (!check(c, extra, member, sub)) return false;
        }
    }
    return true;
}

static bool check(checker *c, const json_t *schema, const json_t *v, const char *path)
{
    static const char *const annotations[] = {"$schema", "$id", "$defs", "$comment", "title",
                                              "description", "default", "examples"};
    const char *kw;
    const json_t *arg;
    json_object_foreach((json_t *)schema, kw, arg) {
        bool known = false;
        for (size_t i = 0; i < sizeof annotations / sizeof *annotations; i++)
            known |= !strcmp(kw, annotations[i]);
        if (known || !strcmp(kw, "required") || !strcmp(kw, "properties") ||
            !strcmp(kw, "additionalProperties"))
            continue;
        if (!strcmp(kw, "$ref")) {
            const json_t *target = resolve(c, json_string_value(arg));
            if (!target) return fail(c, path, "unresolvable $ref %s", json_string_value(arg));
            if (!check(c, target, v, path)) return false;
        } else if (!strcmp(kw, "type")) {
            if (!check_type(c, arg, v, path)) return false;
        } else if (!strcmp(kw, "const")) {
            if (!json_equal((json_t *)arg, (json_t *)v)) return fail(c, path, "not the constant%s", "");
        } else if (!strcmp(kw, "enum")) {
            bool found = false;
            size_t i;
            const json_t *e;
            json_array_foreach(arg, i, e) found |= json_equal((json_t *)e, (json_t *)v);
            if (!found) return fail(c, path, "not one of the enum values%s", "");
        } else if (!strcmp(kw, "minimum")) {
            if (json_is_number(v) && json_number_value(v) < json_number_value(arg))
                return fail(c, path, "below the minimum%s", "");
        } else if (!strcmp(kw, "items")) {
            size_t i;
            const json_t *item;
            json_array_foreach(v, i, item) {
                char sub[512];
                snprintf(sub, sizeof sub, "%s/%zu", path, i);
                if (!check(c, arg, item, sub)) return false;
            }
        } else {
            return fail(c, path, "schema keyword \"%s\" is not supported by this checker", kw);
        }
    }
    if (json_is_object(v)) return check_object(c, schema, v, path);
    return true;
}

bool schema_check(const json_t *root, const json_t *instance, bool strict, char *err, size_t errsz)
{
    checker c = {root, strict, err, errsz};
    err[0] = 0;
    return check(&c, root, instance, "");
}
