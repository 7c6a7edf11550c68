#!/usr/bin/env bash
# ci/layers.sh catches what it is for (issue #15): this repository passes
# it; in a small tree of every layer, each planted violation below is
# reported by file and line (exit 1), and the allowed includes leave it at
# 0. The violations are the ways a textual check was got around: angle
# brackets (resolved through -Iengine), extra spaces or tabs, `# include`,
# paths through `..` or `.`, a path from the root, a computed include, a
# folder missing from the matrix; and tests/ or fuzz/ reaching into
# engine/ by a relative path or including a .c file.
set -uo pipefail
script="${TG_SOURCE_ROOT:-$(dirname "$0")/..}/ci/layers.sh"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
layers="common trace model rules eval baseline report suppress check ruletest cli"
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

# tree DIR: a clean tree, every layer with a header and a source that
# includes its own header and common's, a subfolder, a unit test, a fuzzer.
tree() {
    for l in $layers; do
        mkdir -p "$1/engine/$l"
        printf '#include "../common/common.h"\n' > "$1/engine/$l/$l.h"
        printf '#include "%s.h"\n#include <stdio.h>\n' "$l" > "$1/engine/$l/$l.c"
    done
    mkdir -p "$1/engine/trace/sub" "$1/tests/unit" "$1/fuzz"
    printf '#include "../trace.h"\n' > "$1/engine/trace/sub/part.h"
    printf '#include "eval/eval.h"\n#include "fixture.h"\n' > "$1/tests/unit/t.c"
    printf '#include "check/check.h"\n' > "$1/fuzz/f.c"
}

# plant DIR FILE TEXT: TEXT as a new file FILE of the tree (line 1).
plant() {
    mkdir -p "$(dirname "$1/$2")"
    printf '%s\n' "$3" > "$1/$2"
}

out=$(bash "$script" 2>&1) || fail "this repository breaks its layers:"$'\n'"$out"

# allowed: one tree, exit 0
tree "$tmp/ok"
plant "$tmp/ok" engine/eval/a1.c '#include "../rules/rules.h"'
plant "$tmp/ok" engine/eval/a2.c '#include <rules/rules.h>'
plant "$tmp/ok" engine/eval/a3.c '#  include "rules/rules.h"'
plant "$tmp/ok" engine/cli/a4.c '#include "../ruletest/ruletest.h"'
plant "$tmp/ok" engine/trace/a5.c '#include "sub/part.h"'
plant "$tmp/ok" engine/trace/a6.c '#include "tg_config.h"'
plant "$tmp/ok" engine/rules/a7.c '/* not an include: #include "../cli/cli.h" */'
plant "$tmp/ok" tests/unit/a8.c '#include "rules/rules.h"'
plant "$tmp/ok" tests/unit/a9.c '#include <cli/cli.h>'
out=$(bash "$script" "$tmp/ok" 2>&1) || fail "allowed includes refused:"$'\n'"$out"

# violations: one tree, each reported by file:line
tree "$tmp/bad"
violations=(
    'engine/rules/v1.c' '#include <cli/cli.h>'
    'engine/eval/v2.c' '#include  "../check/check.h"'
    'engine/model/v3.c' '#  include "../report/report.h"'
    'engine/model/v4.h' '	#include	"../report/report.h"'
    'engine/trace/v5.c' '#include "rules/../cli/cli.h"'
    'engine/trace/v6.c' '#include "./../model/model.h"'
    'engine/common/v7.c' '#include "../../engine/trace/trace.h"'
    'engine/common/v8.c' '#include "engine/trace/trace.h"'
    'engine/trace/sub/v9.h' '#include "../../model/model.h"'
    'engine/eval/v10.c' '#include <report/report.h>'
    'engine/check/v11.c' '#include HEADER'
    'engine/baseline/v12.c' '#include "../suppress/suppress.h"'
    'engine/eval/v13.c' '#include "../newlayer/x.h"'
    'tests/unit/v14.c' '#include "../../engine/eval/eval.h"'
    'tests/unit/v15.c' '#include "eval/eval.c"'
    'fuzz/v16.c' '#include <../engine/cli/cli.h>'
)
for ((i = 0; i < ${#violations[@]}; i += 2)); do plant "$tmp/bad" "${violations[i]}" "${violations[i + 1]}"; done
plant "$tmp/bad" engine/newlayer/x.h '#include "../common/common.h"'
out=$(bash "$script" "$tmp/bad" 2>&1)
rc=$?
[ "$rc" = 1 ] || fail "planted violations: exit $rc, expected 1"
for ((i = 0; i < ${#violations[@]}; i += 2)); do
    if [[ $out == *"${violations[i]}:1:"* ]]; then
        echo "ok:   ${violations[i]}: ${violations[i + 1]}"
    else
        fail "not reported: ${violations[i]}: ${violations[i + 1]}"
    fi
done
[[ $out == *"engine/newlayer is not in the matrix"* ]] || fail "engine/newlayer (not in the matrix) not reported"
# nothing of the clean part of the tree is reported
reported=$(grep -c '^layers: ' <<<"$out")
[ "$reported" = $((${#violations[@]} / 2 + 1)) ] || fail "$reported lines reported, expected $((${#violations[@]} / 2 + 1)):"$'\n'"$out"

if [ "$failures" != 0 ]; then
    echo "$failures check(s) failed; ci/layers.sh said:"
    echo "$out"
    exit 1
fi
echo "ci/layers.sh: every planted violation caught, every allowed include let through"
