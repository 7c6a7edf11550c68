/*
** A small JSON Schema checker for the reporter tests, so that the JSON
** result is checked against docs/result-schema.json itself rather than a
** second description of it. It knows the keywords that schema uses (type,
** required, properties, additionalProperties, items, enum, const, minimum,
** local $ref) and fails on any other, so a schema edit it cannot follow
** is noticed. Strict mode also rejects object members the schema does not
** declare, which catches output that is not documented.
*/
#ifndef TG_SCHEMA_CHECK_H
#define TG_SCHEMA_CHECK_H

#include <stdbool.h>
#include <stddef.h>
#include <jansson.h>

/* Check instance against root (the whole schema document). On failure,
** err holds "path: reason". */
bool schema_check(const json_t *root, const json_t *instance, bool strict, char *err, size_t errsz);

#endif
