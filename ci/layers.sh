#!/usr/bin/env bash
# The layering check (docs/architecture.md): every #include "../X/..." or
# "X/..." (through the include path) in engine/ must go to a layer the
# including one may see. Layers only look
# down; the matrix below is the rule, one line per layer:
#
#   layer     may include
allowed=(
  "common:"
  "trace:common"
  "model:common trace"
  "rules:common trace model"
  "eval:common trace model rules"
  "baseline:common trace model rules eval"
  "report:common trace model rules eval"
  "suppress:common trace model rules eval"
  "check:common trace model rules eval baseline"
  "ruletest:common trace model rules eval baseline check"
  "cli:common trace model rules eval baseline report suppress check ruletest"
)
# (report, baseline and suppress sit side by side above eval; check runs the
# pipeline; ruletest and cli are its clients.) Exit 1 with the offending
# lines when a file breaks the rule or a folder is not in the matrix.
set -uo pipefail
cd "$(dirname "$0")/.."
status=0
declare -A may
for entry in "${allowed[@]}"; do may[${entry%%:*}]=" ${entry#*:} "; done
for dir in engine/*/; do
    layer=$(basename "$dir")
    if [ -z "${may[$layer]+x}" ]; then
        echo "layers: engine/$layer is not in the matrix of ci/layers.sh"
        status=1
        continue
    fi
    while IFS=: read -r file line text; do
        target=$(sed -n 's|.*#include "\(\.\./\)\{0,1\}\([a-z_]*\)/.*|\2|p' <<<"$text")
        [ -z "$target" ] && continue
        [ -z "${may[$target]+x}" ] && continue     # not a layer (a subfolder of this one)
        if [[ "${may[$layer]}" != *" $target "* ]]; then
            echo "layers: $file:$line: $layer may not include $target: $text"
            status=1
        fi
    done < <(grep -Hn '#include "[a-z_./]*/' "$dir"*.[ch] 2>/dev/null)
done
[ $status = 0 ] && echo "layers: every include looks down"
exit $status
