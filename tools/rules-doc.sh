#!/usr/bin/env bash
# The generated parts of docs/rules.md, kept true to the code:
#
#  - the field reference between the two "rules fields" markers is what
#    `tracegate rules fields --format markdown` prints from the field
#    tables (engine/model/fields.def);
#  - the grammar in the ```ebnf block is the one heading the expression
#    parser (engine/rules/parse.c), the lines starting with "**   ".
#
#   tools/rules-doc.sh BINARY           rewrite the field reference in place
#   tools/rules-doc.sh --check BINARY   exit 1 with a diff when either part
#                                       differs (the `docs` test runs this)
#
# The grammar is written by hand in both places; --check only compares.
set -uo pipefail
check=false
if [ "${1:-}" = "--check" ]; then check=true; shift; fi
bin=${1:?usage: tools/rules-doc.sh [--check] BINARY}
root=$(cd "$(dirname "$0")/.." && pwd)
doc="$root/docs/rules.md"
parser="$root/engine/rules/parse.c"
begin='<!-- BEGIN generated: tracegate rules fields --format markdown -->'
end='<!-- END generated: tracegate rules fields -->'
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

if [ "$(grep -cxF "$begin" "$doc")" != 1 ] || [ "$(grep -cxF "$end" "$doc")" != 1 ]; then
    echo "rules-doc: $doc must hold each marker line once:"
    echo "  $begin"
    echo "  $end"
    exit 1
fi
if ! "$bin" rules fields --format markdown > "$tmp/fields.md"; then
    echo "rules-doc: '$bin rules fields --format markdown' failed"
    exit 1
fi
# The document with the generated lines replaced by the binary's output.
awk -v b="$begin" -v e="$end" -v gen="$tmp/fields.md" '
    $0 == b { print; while ((getline line < gen) > 0) print line; skip = 1; next }
    $0 == e { skip = 0 }
    !skip { print }' "$doc" > "$tmp/rules.md"

if ! $check; then
    if cmp -s "$doc" "$tmp/rules.md"; then
        echo "rules-doc: $doc is up to date"
    else
        cp "$tmp/rules.md" "$doc" && echo "rules-doc: rewrote the field reference of $doc"
    fi
    exit 0
fi

status=0
if ! diff -u "$doc" "$tmp/rules.md" > "$tmp/fields.diff"; then
    echo "rules-doc: the field reference in docs/rules.md is not what 'tracegate rules fields"
    echo "--format markdown' prints (engine/model/fields.def changed?); run tools/rules-doc.sh BINARY:"
    cat "$tmp/fields.diff"
    status=1
fi
sed -n 's/^\*\*   //p' "$parser" > "$tmp/grammar.parser"
awk '/^```ebnf$/ { on = 1; next } on && /^```$/ { on = 0 } on' "$doc" > "$tmp/grammar.doc"
if [ ! -s "$tmp/grammar.parser" ] || [ ! -s "$tmp/grammar.doc" ]; then
    echo "rules-doc: no grammar found (the '**   ' lines of engine/rules/parse.c, the \`\`\`ebnf block of docs/rules.md)"
    status=1
elif ! diff -u "$tmp/grammar.parser" "$tmp/grammar.doc" > "$tmp/grammar.diff"; then
    echo "rules-doc: the grammar of docs/rules.md differs from the one heading engine/rules/parse.c:"
    cat "$tmp/grammar.diff"
    status=1
fi
[ $status = 0 ] && echo "rules-doc: docs/rules.md matches the field tables and the parser's grammar"
exit $status
