/*
** `tracegate rules fields [--format text|markdown] [SOURCE]`: the field
** reference of the rule language -- every source a rule can read, the
** table an export must hold for it, and each field with its type, unit,
** whether it can be null and what it means -- printed from the field
** tables themselves (engine/model/fields.def, through tg_source_defs and
** tg_field_defs of source.h), so it says exactly what the rule compiler
** binds. Text is for people at a terminal; markdown is the generated part
** of docs/rules.md ("Sources and fields"), which tools/rules-doc.sh writes
** and the `docs` test compares, so the document cannot drift from the
** tables. An unknown SOURCE is one sentence with a did-you-mean, exit 2.
*/
#include "cli.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "../model/source.h"
#include "../rules/rules.h"

/* The unit a field carries, as files spell it ("ns", "bytes", "ratio"), or
** `none` for a plain number, a string or a condition. */
static const char *unit_of(const tg_field_def *f, const char *none)
{
    return f->unit == TG_UNIT_NONE ? none : tg_unit_key(f->unit);
}

/* The tables without which a rule on the source reports missing data
** (tg_source_required_tables; engine/eval checks them), as one clause:
** the export's table, and what stands for it in a Kineto trace
** (docs/kineto.md). */
static void put_needs(const tg_source_def *s, bool markdown)
{
    unsigned need = tg_source_required_tables(s->id);
    if (!need) {
        fputs(markdown ? "Needs no table of its own." : "  needs no table of its own", stdout);
        return;
    }
    fputs(markdown ? "A rule on it needs " : "  needs ", stdout);
    for (int t = 0, n = 0; t < TG_TABLE_COUNT; t++) {
        if (!(need & (1u << t))) continue;
        printf(markdown ? "%s`%s` (%s, recorded by `%s`; in a Kineto trace, its %s)"
                        : "%s%s (%s, recorded by '%s'; in a Kineto trace, its %s)",
               n++ ? ", " : "", tg_table_names[t], tg_table_what[t], tg_table_option[t], tg_table_kineto[t]);
    }
    fputs(markdown ? "; without it the rule reports missing data." : "; without it: missing data", stdout);
}

/* s with its first letter capitalised, for a sentence. */
static void put_sentence(const char *s)
{
    if (*s) putchar(toupper((unsigned char)*s++));
    fputs(s, stdout);
}

/* Markdown table cell text: a '|' would end the cell. */
static void put_cell(const char *s)
{
    for (; *s; s++) {
        if (*s == '|') putchar('\\');
        putchar(*s);
    }
}

static void print_markdown(const tg_source_def *s)
{
    printf("### `%s`\n\n", s->name);
    put_sentence(s->doc);
    fputs(". ", stdout);
    put_needs(s, true);
    if (s->id == TG_SRC_TRACE)
        fputs(" Any expression of any rule reads these fields as `trace.NAME`.", stdout);
    fputs("\n\n| field | type | unit | null | meaning |\n|---|---|---|---|---|\n", stdout);
    for (size_t i = 0; i < tg_field_count; i++) {
        const tg_field_def *f = &tg_field_defs[i];
        if (f->source != s->id) continue;
        printf("| `%s` | %s | %s | %s | ", f->name, tg_type_name(f->type), unit_of(f, ""),
               f->nullable ? "yes" : "");
        put_cell(f->doc);
        fputs(" |\n", stdout);
    }
}

static void print_text(const tg_source_def *s)
{
    int width = 5;
    for (size_t i = 0; i < tg_field_count; i++)
        if (tg_field_defs[i].source == s->id && (int)strlen(tg_field_defs[i].name) > width)
            width = (int)strlen(tg_field_defs[i].name);
    printf("%s: %s\n", s->name, s->doc);
    put_needs(s, false);
    putchar('\n');
    if (s->id == TG_SRC_TRACE) fputs("  any rule reads these fields as trace.NAME\n", stdout);
    printf("  %-*s  %-6s  %-5s  %-4s  %s\n", width, "FIELD", "TYPE", "UNIT", "NULL", "MEANING");
    for (size_t i = 0; i < tg_field_count; i++) {
        const tg_field_def *f = &tg_field_defs[i];
        if (f->source != s->id) continue;
        printf("  %-*s  %-6s  %-5s  %-4s  %s\n", width, f->name, tg_type_name(f->type), unit_of(f, "-"),
               f->nullable ? "yes" : "", f->doc);
    }
}

/* SOURCE as given: its definition, or NULL after saying why (exit 2). */
static const tg_source_def *find_source(const char *name)
{
    const tg_source_def *s = tg_source_find(name);
    if (s) return s;
    const char *names[TG_SRC_COUNT + 1] = {0};
    for (int i = 0; i < TG_SRC_COUNT; i++) names[i] = tg_source_defs[i].name;
    const char *hint = tg_suggest(name, names, TG_SRC_COUNT);
    char all[256];
    if (hint) tg_cli_say("rules fields: unknown source '%s' (did you mean '%s'?)", name, hint);
    else tg_cli_say("rules fields: unknown source '%s' (sources: %s)", name, tg_vocab_join(names, all, sizeof all));
    return NULL;
}

int tg_cmd_rules_fields(const tg_cli_args *a)
{
    bool markdown = tg_cli_choice(a, TG_CLI_OPT_FORMAT_FIELDS, 0) == 1;
    const char *source = a->n_operands ? a->operands[0] : NULL;
    const tg_source_def *only = source ? find_source(source) : NULL;
    if (source && !only) return TG_EUSAGE;
    for (int i = 0, n = 0; i < TG_SRC_COUNT; i++) {
        if (only && only != &tg_source_defs[i]) continue;
        if (n++) putchar('\n');
        if (markdown) print_markdown(&tg_source_defs[i]);
        else print_text(&tg_source_defs[i]);
    }
    return tg_cli_finish_output(NULL, "rules fields", TG_OK);
}
