#!/usr/bin/env bash
# The GitHub Action (action.yml, ci/action.sh) as a runner runs it, on a
# user's repository laid out in a temporary folder: a git repository with
# a trace, a baseline and a rule of the user's, none of tracegate's files.
# A small runner here reads action.yml's steps (id, if, env, run or uses),
# evaluates the ${{ inputs.X }} and ${{ steps.ID.outputs.K }} expressions
# of their env, runs each `run` step with the variables a GitHub runner
# sets (GITHUB_OUTPUT per step, GITHUB_STEP_SUMMARY, GITHUB_ACTION_PATH,
# RUNNER_TEMP, RUNNER_TOOL_CACHE, ...), skips a step without `if:
# always()` after a failed one, and stands in for the two `uses` steps:
# actions/cache (the tool cache folder persists between the runs here, as
# the cache restores it) and actions/upload-artifact (what it would upload
# is checked). Then:
#
#   1. cold run, built-in rules and a baseline: tracegate is built with
#      meson and installed into the cache prefix; the bundled example
#      (a synchronous copy, an idle gap) fails the gate: check's exit 1 in
#      the step outputs, ::error annotations, the job summary, the three
#      reports, and the job fails with exit 1;
#   2. warm run, the user's rule: a cache hit (nothing built), the gate
#      passes, the job passes;
#   3. the history: the run is recorded under the commit's label;
#   4. a traces glob that matches nothing: exit 3 (unreadable), the job fails;
#   and the installed tracegate finds its built-in rules, man page and
#   bash completion in the prefix, not in the source tree (meson install).
#
# usage: action_test.sh EXAMPLE_TRACE   (TG_SOURCE_ROOT: tracegate's tree)
# The build of run 1 is a debug build (-O0, faster to compile; the action's
# default is release).
set -euo pipefail
example=${1:?usage: action_test.sh EXAMPLE_TRACE}
src=${TG_SOURCE_ROOT:?TG_SOURCE_ROOT is not set}
tmp=$(mktemp -d)
trap '[ -n "${TG_KEEP:-}" ] || rm -rf "$tmp"' EXIT
fail() { echo "action_test: FAIL: $*" >&2; exit 1; }
ok() { echo "ok - $*"; }

# ------------------------------------------------------------ action.yml
# One line per step field: "STEP id", "IF expr", "ENV NAME expr",
# "RUN verb", "USES action"; and "INPUT name default" for the inputs.
parse_action() {
    awk '
        function val(s) { sub(/^[^:]*:[ ]*/, "", s); gsub(/^"|"$/, "", s); return s }
        /^inputs:/ { sect = "inputs"; next }
        /^outputs:/ { sect = "outputs"; next }
        /^runs:/ { sect = "runs"; next }
        sect == "inputs" && /^  [a-z-]+:$/ { name = $1; sub(/:$/, "", name); print "INPUT " name " "; next }
        sect == "inputs" && /^    default:/ { print "DEFAULT " name " " val($0); next }
        sect == "runs" && /^    - id:/ { print "STEP " val($0); inenv = 0; next }
        sect == "runs" && /^      if:/ { print "IF " val($0); next }
        sect == "runs" && /^      uses:/ { print "USES " val($0); next }
        sect == "runs" && /^      run:/ { r = $0; sub(/.*ci\/action\.sh"?[ ]*/, "", r); print "RUN " r; next }
        sect == "runs" && /^      env:/ { inenv = 1; next }
        sect == "runs" && /^      [a-z]/ { inenv = 0 }
        sect == "runs" && inenv && /^        [A-Z_]+:/ { n = $1; sub(/:$/, "", n); print "ENV " n " " val($0) }
    ' "$src/action.yml"
}
steps=$(parse_action)
[ "$(grep -c '^STEP ' <<< "$steps")" -ge 5 ] || fail "action.yml: fewer than 5 steps read"
verbs=$(grep '^RUN ' <<< "$steps" | cut -d' ' -f2 | tr '\n' ' ')
[ "$verbs" = "key deps build check verdict " ] || fail "action.yml runs '$verbs', not key deps build check verdict"
# every TG_ACTION_ variable the script reads is mapped by some step
for v in $(grep -o 'TG_ACTION_[A-Z][A-Z_]*' "$src/ci/action.sh" | sort -u); do
    grep -q "^ENV $v " <<< "$steps" || fail "ci/action.sh reads $v, which action.yml never sets"
done
# the copyable workflow passes only inputs the action has
inputs=$(grep '^INPUT ' <<< "$steps" | cut -d' ' -f2)
used=$(awk '/uses: OWNER\/tracegate@/ { on = 1; next }
            on && /^ *with:/ { next }
            on && /^          [a-z-]+:/ { k = $1; sub(/:$/, "", k); print k; next }
            { on = 0 }' "$src/ci/examples/github-actions.yml")
[ -n "$used" ] || fail "ci/examples/github-actions.yml: no input of the action read"
for k in $used; do grep -qx "$k" <<< "$inputs" || fail "ci/examples/github-actions.yml passes '$k', which action.yml does not take"; done
ok "action.yml: steps key deps build check verdict; every input the script reads is mapped; the example passes known inputs"

# ------------------------------------------------------------ the runner
declare -A input_default
while read -r _ name def; do input_default[$name]=$def; done < <(grep '^DEFAULT ' <<< "$steps")

# eval_expr EXPR: ${{ inputs.X }} / ${{ steps.ID.outputs.K }} / literal
declare -A with step_out
eval_expr() {
    local e=$1
    if [[ $e =~ ^\$\{\{\ inputs\.([a-z-]+)\ \}\}$ ]]; then
        local n=${BASH_REMATCH[1]}
        if [ -n "${with[$n]+x}" ]; then printf '%s' "${with[$n]}"; else printf '%s' "${input_default[$n]:-}"; fi
    elif [[ $e =~ ^\$\{\{\ steps\.([a-z-]+)\.outputs\.([a-z-]+)\ \}\}$ ]]; then
        printf '%s' "${step_out[${BASH_REMATCH[1]}.${BASH_REMATCH[2]}]:-}"
    else
        printf '%s' "$e"
    fi
}

# run_workflow LOG: one workflow run in $user with the inputs in `with`;
# its status is the job's
run_workflow() {
    local log=$1 id="" cond="" verb="" uses="" failed=0 kind rest
    step_out=()
    local -a envs=()
    : > "$log"
    run_step() {
        [ -n "$id" ] || return 0
        if [ "$failed" = 1 ] && [[ $cond != always\(\)* ]]; then echo "skip $id" >> "$log"; return 0; fi
        if [[ $cond == *"inputs.upload == 'true'"* ]] && [ "$(eval_expr '${{ inputs.upload }}')" != true ]; then return 0; fi
        if [ -n "$uses" ]; then echo "uses $uses (stood in for)" >> "$log"; return 0; fi
        local outf="$tmp/out.$id" st=0
        : > "$outf"
        (
            cd "$user"
            for kv in "${envs[@]}"; do export "$kv"; done
            export GITHUB_OUTPUT="$outf" GITHUB_ACTION_PATH="$src"
            bash "$src/ci/action.sh" "$verb"
        ) >> "$log" 2>&1 || st=$?
        while IFS='=' read -r k v; do [ -z "$k" ] || step_out[$id.$k]=$v; done < "$outf"
        echo "step $id exit $st" >> "$log"
        [ "$st" = 0 ] || failed=1
        job_status=$st
    }
    job_status=0
    while read -r kind rest; do
        case $kind in
            STEP) run_step; id=$rest; cond=""; verb=""; uses=""; envs=() ;;
            IF) cond=$rest ;;
            USES) uses=$rest ;;
            RUN) verb=$rest ;;
            ENV) envs+=("${rest%% *}=$(eval_expr "${rest#* }")") ;;
        esac
    done < <(grep -E '^(STEP|IF|USES|RUN|ENV) ' <<< "$steps")
    run_step
    return "$job_status"
}

# ------------------------------------------------------------ the user
user=$tmp/user
mkdir -p "$user/perf" "$tmp/runner" "$tmp/toolcache"
cp "$example" "$user/perf/run.sqlite"
cat > "$user/perf/rules.yaml" <<'EOF'
version: 1
rules:
  - id: team-long-kernel
    title: A kernel ran longer than the team's budget
    severity: error
    source: kernel
    params:
      max_duration: 10s
    where: duration > params.max_duration
    fail_when: count > 0
    message: "{count} {count|kernel|kernels} ran longer than {params.max_duration}"
EOF
git -C "$user" init -q
git -C "$user" -c user.name=ci -c user.email=ci@example.com add perf
git -C "$user" -c user.name=ci -c user.email=ci@example.com commit -qm "the user's trace and rule"
sha=$(git -C "$user" rev-parse HEAD)
export GITHUB_ACTIONS=true CI=true GITHUB_WORKSPACE=$user GITHUB_SHA=$sha GITHUB_REF_NAME=main \
    RUNNER_OS=Linux RUNNER_TEMP=$tmp/runner RUNNER_TOOL_CACHE=$tmp/toolcache \
    GITHUB_STEP_SUMMARY=$tmp/summary.md
[ ! -e "$user/ci" ] && [ ! -e "$user/meson.build" ] || fail "the user's repository holds tracegate's files"

# The baseline, as the user records it once: a binary installed from this
# tree into a DESTDIR (meson install) records it; tracegate's own build is
# where TG_BINARY points.
"${TG_BINARY:?TG_BINARY is not set}" baseline record -o "$user/perf/baseline.yaml" "$user/perf/run.sqlite" >/dev/null 2>&1 \
    || fail "baseline record on the example failed"

# 1. cold: built, the gate fails
with=([traces]="perf/*.sqlite" [baseline]=perf/baseline.yaml [buildtype]=debug)
: > "$GITHUB_STEP_SUMMARY"
st=0; run_workflow "$tmp/run1.log" || st=$?
[ "$st" = 1 ] || { cat "$tmp/run1.log"; fail "run 1: the job exited $st, not 1 (the example fails the gate)"; }
[ "${step_out[check.exit-code]:-}" = 1 ] || fail "run 1: check's exit-code output is '${step_out[check.exit-code]:-}', not 1"
grep -q '^::error' "$tmp/run1.log" || fail "run 1: no ::error annotation"
grep -q 'sync-memcpy' "$GITHUB_STEP_SUMMARY" || fail "run 1: the job summary does not name sync-memcpy"
for f in tracegate.json tracegate.html tracegate.xml; do
    [ -s "$user/tracegate-reports/$f" ] || fail "run 1: the report $f was not written"
done
jq -e '.traces | length == 1' "$user/tracegate-reports/tracegate.json" >/dev/null || fail "run 1: the JSON result is not one trace's"
grep -q 'uses actions/upload-artifact' "$tmp/run1.log" || fail "run 1: the upload step did not run after the failed gate"
prefix=${step_out[key.prefix]}
[ -x "$prefix/bin/tracegate" ] || fail "run 1: no tracegate installed in $prefix"
[ "${step_out[build.tracegate]:-}" = "$prefix/bin/tracegate" ] || fail "run 1: the tracegate output is not the installed binary"
ok "cold run: built and installed, the gate failed with exit 1, annotations, summary, reports uploaded"

# meson install: the installed tracegate needs no source tree
"$prefix/bin/tracegate" rules list > "$tmp/rules.txt"
grep -q "($prefix/share/tracegate/rules.d/10-host-sync.yaml:" "$tmp/rules.txt" \
    || { head -3 "$tmp/rules.txt"; fail "the installed tracegate does not read the installed built-in rules"; }
grep -q "$src" "$tmp/rules.txt" && fail "the installed tracegate reads rules from the source tree"
grep -q '^\.TH TRACEGATE 1' "$prefix/share/man/man1/tracegate.1" || fail "no man page installed"
bash -n "$prefix/share/bash-completion/completions/tracegate" || fail "the installed completion is not bash"
grep -q 'complete -F' "$prefix/share/bash-completion/completions/tracegate" || fail "the installed completion registers nothing"
(cd "$user" && "$prefix/bin/tracegate" check --format sarif perf/run.sqlite > "$tmp/run.sarif") || true
uri=$(jq -r '.runs[0].tool.driver.informationUri' "$tmp/run.sarif")
[ "$uri" = "file://$(realpath "$prefix/share/doc/tracegate/rules.md")" ] || fail "SARIF informationUri is '$uri', not the installed docs"
jq -e '[.runs[0].results[].locations[0].physicalLocation.artifactLocation | select(.uriBaseId == "TRACEGATE_RULES")] | length > 0' \
    "$tmp/run.sarif" >/dev/null || fail "SARIF names the built-in rules' files without the TRACEGATE_RULES base"
jq -e --arg u "file://$(realpath "$prefix/share/tracegate/rules.d")/" '.runs[0].originalUriBaseIds.TRACEGATE_RULES.uri == $u' \
    "$tmp/run.sarif" >/dev/null || fail "SARIF's TRACEGATE_RULES base is not the installed rules folder"
ok "installed: built-in rules, man page, completion and docs (SARIF informationUri, uriBaseId) from the prefix"

# 2. warm: a cache hit, the user's rule, the gate passes
with=([traces]=perf/run.sqlite [rules]=perf/rules.yaml [buildtype]=debug)
: > "$GITHUB_STEP_SUMMARY"
st=0; run_workflow "$tmp/run2.log" || st=$?
[ "$st" = 0 ] || { cat "$tmp/run2.log"; fail "run 2: the job exited $st, not 0"; }
grep -q 'cache hit): not built again' "$tmp/run2.log" || fail "run 2: tracegate was built again"
[ "${step_out[key.prefix]}" = "$prefix" ] || fail "run 2: another cache key for the same sources"
ls "$tmp/runner" | grep -q tracegate-build && fail "run 2: a build folder was made"
grep -q 'PASS' "$GITHUB_STEP_SUMMARY" || fail "run 2: the job summary does not say PASS"
ok "warm run: cache hit, the user's rule passes, the job passes"

# 3. the history, labelled by the commit
with=([traces]=perf/run.sqlite [rules]=perf/rules.yaml [history]=perf/history.db [buildtype]=debug [upload]=false)
st=0; run_workflow "$tmp/run3.log" || st=$?
[ "$st" = 0 ] || { cat "$tmp/run3.log"; fail "run 3: the job exited $st"; }
grep -q 'uses actions/upload-artifact' "$tmp/run3.log" && fail "run 3: upload: false still uploaded"
"$prefix/bin/tracegate" history show --db "$user/perf/history.db" > /dev/null || fail "run 3: history show failed"
labels=$(sqlite3 "$user/perf/history.db" "SELECT label || ' ' || branch FROM tg_runs")
[ "$labels" = "${sha:0:12} main" ] || fail "run 3: the history holds '$labels', not the run labelled ${sha:0:12} on main"
ok "history: the run is recorded under the commit's label"

# 4. a glob that matches nothing: never a pass
with=([traces]="perf/*.nsys-rep" [buildtype]=debug)
st=0; run_workflow "$tmp/run4.log" || st=$?
[ "$st" = 3 ] || { cat "$tmp/run4.log"; fail "run 4: the job exited $st, not 3 (no trace matched: unreadable)"; }
ok "no trace matched: exit 3 (a trace it could not read), the job fails"
echo "action_test: all passed"
