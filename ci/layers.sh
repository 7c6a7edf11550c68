#!/usr/bin/env bash
# The layering check (docs/architecture.md): every include in engine/ must
# go to a layer the including one may see. Layers only look down; the
# matrix below is the rule, one line per layer:
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
  "history:common trace model rules eval baseline report"
  "ruletest:common trace model rules eval baseline check"
  "cli:common trace model rules eval baseline report suppress check ruletest history"
)
# (report, baseline and suppress sit side by side above eval; check runs the
# pipeline; ruletest and cli are its clients.)
#
# An include is read as the compiler reads it, not as text of one shape:
# any spacing (`#  include  "x"`, `# include <x>`), quotes or angle
# brackets, and the path resolved the way the build's include path
# resolves it -- a quoted path first beside the including file, then
# under engine/ (-Iengine) and the source root; an angle-bracket path
# under engine/ and the root only. The path is normalised (`.`, `x/..`), so
# "../check/check.h", <cli/cli.h>, "rules/../cli/cli.h" and
# "../../engine/cli/cli.h" all name engine/cli. A file of engine/L/ (at
# any depth) is of layer L. An include the script cannot read (a macro,
# `#include HEADER`) is refused: the check must not be the thing that is
# got around.
#
# tests/ and fuzz/ sit above every layer; they may include any engine
# header (unit tests read internals on purpose), but only a header (.h or
# .def) and only through the include path ("eval/eval.h"), never by a
# relative path into engine/ nor an engine .c file.
#
# Usage: ci/layers.sh [ROOT] (default: this repository; tests/layers_test.sh
# gives it trees with planted violations). Exit 1 with the offending lines
# when a file breaks the rule or a folder of engine/ is not in the matrix.
set -uo pipefail
cd "${1:-"$(dirname "$0")/.."}" || exit 2
status=0
declare -A may
for entry in "${allowed[@]}"; do may[${entry%%:*}]=" ${entry#*:} "; done

# norm PATH: PATH with `.` and `x/..` folded, into $normed (no fork).
norm() {
    local IFS=/ part
    local -a parts out=()
    read -ra parts <<<"$1"
    for part in "${parts[@]}"; do
        case $part in
        '' | .) ;;
        ..) if ((${#out[@]})) && [ "${out[-1]}" != .. ]; then unset 'out[-1]'; else out+=(..); fi ;;
        *) out+=("$part") ;;
        esac
    done
    normed="${out[*]}"
}

# resolve FILE QUOTE PATH: the file an include names, into $resolved:
# the first candidate that exists; for a quoted include that names none
# (a generated header), the path beside the including file; else empty
# (a system header).
resolve() {
    local file=$1 quote=$2 path=$3 dir cand
    dir=${file%/*}
    local -a cands=("engine/$path" "$path")
    [ "$quote" = '"' ] && cands=("$dir/$path" "${cands[@]}")
    resolved=
    for cand in "${cands[@]}"; do
        norm "$cand"
        if [ -f "$normed" ]; then resolved=$normed; return; fi
    done
    if [ "$quote" = '"' ]; then norm "$dir/$path"; resolved=$normed; fi
}

# includes FILE...: "file:line:text" for every include directive.
includes() {
    grep -HnE '^[[:space:]]*#[[:space:]]*include([^[:alnum:]_]|$)' "$@" 2>/dev/null
}

inc_re='^[[:space:]]*#[[:space:]]*include[[:space:]]*([<"])([^>"]+)[>"]'

for dir in engine/*/; do
    layer=$(basename "$dir")
    if [ -z "${may[$layer]+x}" ]; then
        echo "layers: engine/$layer is not in the matrix of ci/layers.sh"
        status=1
    fi
done

while IFS=: read -r file line text; do
    rel=${file#engine/}
    layer=${rel%%/*}
    [ -z "${may[$layer]+x}" ] && continue          # said above
    if ! [[ $text =~ $inc_re ]]; then
        echo "layers: $file:$line: an include this check cannot read (write the path in quotes or <>): $text"
        status=1
        continue
    fi
    resolve "$file" "${BASH_REMATCH[1]}" "${BASH_REMATCH[2]}"
    case $resolved in engine/*/*) ;; *) continue ;; esac
    target=${resolved#engine/}
    target=${target%%/*}
    [ "$target" = "$layer" ] && continue
    if [ -z "${may[$target]+x}" ] || [[ "${may[$layer]}" != *" $target "* ]]; then
        echo "layers: $file:$line: $layer may not include $target ($resolved): $text"
        status=1
    fi
done < <(find engine -type f \( -name '*.[ch]' -o -name '*.def' \) -print0 | sort -z | xargs -0 -r bash -c "$(declare -f includes); includes \"\$@\"" _)

for top in tests fuzz; do
    [ -d "$top" ] || continue
    while IFS=: read -r file line text; do
        if ! [[ $text =~ $inc_re ]]; then
            echo "layers: $file:$line: an include this check cannot read (write the path in quotes or <>): $text"
            status=1
            continue
        fi
        quote=${BASH_REMATCH[1]} path=${BASH_REMATCH[2]}
        resolve "$file" "$quote" "$path"
        case $resolved in engine/*) ;; *) continue ;; esac
        norm "$path"
        case $resolved in
        *.h | *.def) ;;
        *) echo "layers: $file:$line: $top may include engine headers only, not $resolved: $text"; status=1; continue ;;
        esac
        if [ "engine/$normed" != "$resolved" ]; then
            echo "layers: $file:$line: $top includes $resolved by a relative path; name it through the include path (\"${resolved#engine/}\"): $text"
            status=1
        fi
    done < <(find "$top" -type f \( -name '*.[ch]' -o -name '*.def' \) -print0 | sort -z | xargs -0 -r bash -c "$(declare -f includes); includes \"\$@\"" _)
done

[ $status = 0 ] && echo "layers: every include looks down"
exit $status
