#!/usr/bin/env bash
# The cookbook (docs/cookbook.md) stays true: every recipe under
# examples/rules/ is a rule file with its test file, `tracegate rules test
# examples/rules/` passes all their cases (at least 10 recipes), the
# recipes lint clean on top of the built-ins, the overrides do what the
# cookbook says (gpu-idle-gap disabled, copy-dominated at 80%), and every
# output it shows is what the tool prints (tools/cookbook-doc.py, on the
# real traces of ../shared).
set -euo pipefail
bin="$TG_BINARY"
dir="$TG_SOURCE_ROOT/examples/rules"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

recipes=0
for rules in "$dir"/*.yaml; do
    case "$rules" in *.test.yaml) continue ;; esac
    test_file="${rules%.yaml}.test.yaml"
    [ -f "$test_file" ] || { echo "recipe $(basename "$rules") has no test file"; exit 1; }
    grep -q "(docs/cookbook.md)" "$rules" || { echo "recipe $(basename "$rules") does not point at docs/cookbook.md"; exit 1; }
    name=$(basename "$rules" .yaml)
    grep -q "examples/rules/$name.yaml" "$TG_SOURCE_ROOT/docs/cookbook.md" ||
        { echo "docs/cookbook.md does not show examples/rules/$name.yaml"; exit 1; }
    recipes=$((recipes + 1))
done
[ "$recipes" -ge 10 ] || { echo "$recipes recipes, the cookbook promises at least 10"; exit 1; }

"$bin" rules test "$dir/" > "$tmp/out" || { cat "$tmp/out"; echo "rules test examples/rules/ failed"; exit 1; }
cat "$tmp/out"
last=$(tail -n 1 "$tmp/out")
case "$last" in *" passed, 0 failed") ;; *) echo "unexpected summary: $last"; exit 1 ;; esac
passed=${last%% *}
[ "$passed" -ge "$recipes" ] || { echo "$passed cases for $recipes recipes"; exit 1; }

"$bin" rules lint builtin "$dir/" 2> "$tmp/lint" || { cat "$tmp/lint"; echo "recipes do not lint"; exit 1; }
if grep "examples/rules" "$tmp/lint"; then echo "recipes lint with warnings"; exit 1; fi

"$bin" rules list builtin "$dir/project-overrides.yaml" > "$tmp/list"
grep -q '^gpu-idle-gap .*\[disabled\]' "$tmp/list" || { echo "project-overrides.yaml does not disable gpu-idle-gap"; exit 1; }
grep -q '^copy-dominated ' "$tmp/list" || { echo "copy-dominated missing"; exit 1; }
# the outputs the cookbook shows are what the tool prints today
# (tools/cookbook-doc.py runs every command shown again)
traces="${TG_SHARED_TRACES:-}"
if [ -n "$traces" ] && [ -d "$traces/h200-torch" ]; then
    python3 "$TG_SOURCE_ROOT/tools/cookbook-doc.py" "$bin" "$traces" > "$tmp/cookbook.md"
    if ! cmp -s "$TG_SOURCE_ROOT/docs/cookbook.md" "$tmp/cookbook.md"; then
        diff -u "$TG_SOURCE_ROOT/docs/cookbook.md" "$tmp/cookbook.md" | head -40
        echo "docs/cookbook.md shows outputs the tool no longer prints: regenerate it with tools/cookbook-doc.py --write build/tracegate"
        exit 1
    fi
    shown=$(grep -c '^\$ tracegate ' "$TG_SOURCE_ROOT/docs/cookbook.md")
    echo "docs/cookbook.md: the $shown commands shown print what it shows"
else
    # shellcheck source=tests/require.sh
    . "$TG_SOURCE_ROOT/tests/require.sh"
    tg_required && { echo "FAILED: ../shared/traces is absent: the cookbook's outputs cannot be checked"; exit 1; }
    echo "note: ../shared/traces is absent: the cookbook's shown outputs are not checked"
fi
echo "$recipes recipes, $passed cases: cookbook ok"
