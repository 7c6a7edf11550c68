#!/usr/bin/env bash
# The steps of the GitHub Action (action.yml at the repository root), one
# verb each, run by a runner in the user's workspace with the variables a
# runner sets (GITHUB_ACTION_PATH, GITHUB_OUTPUT, GITHUB_STEP_SUMMARY,
# GITHUB_SHA, RUNNER_TEMP, RUNNER_OS) and the action's inputs in
# TG_ACTION_* (action.yml maps them). tests/action_test.sh runs these verbs
# in action.yml's order on a user's repository laid out in a temporary
# folder.
#
#   key      the cache key (hash of tracegate's sources and the build type)
#            and the install prefix, into GITHUB_OUTPUT
#   deps     the Debian packages the build needs, unless the prefix holds a
#            tracegate that runs (a cache hit)
#   build    meson setup + install into the prefix, unless it holds one;
#            prints tracegate's version; the binary's path into GITHUB_OUTPUT
#   check    tracegate check --format github with the HTML, JSON and JUnit
#            reports in TG_ACTION_REPORTS; the exit status into GITHUB_OUTPUT
#            (the step itself passes, so that the upload step runs)
#   verdict  exits with check's status: the job fails when the gate does,
#            and when check gave none (a broken step never passes)
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
verb=${1:?usage: ci/action.sh key|deps|build|check|verdict}

say() { printf 'tracegate action: %s\n' "$*" >&2; }
out() { printf '%s\n' "$@" >> "${GITHUB_OUTPUT:?GITHUB_OUTPUT is not set: run as a GitHub Actions step}"; }
prefix() { printf '%s' "${TG_ACTION_PREFIX:?TG_ACTION_PREFIX is not set (action.yml maps the key step output prefix)}"; }
installed() { local p; p=$(prefix); [ -x "$p/bin/tracegate" ] && "$p/bin/tracegate" --version >/dev/null 2>&1; }

# Every file a build reads: a change in any of them is a new key.
sources_hash() {
    (cd "$here" && find meson.build engine rules.d completions examples tools -type f \
        \( -name '*.c' -o -name '*.h' -o -name '*.def' -o -name 'meson.build' -o -name '*.yaml' -o -name '*.sql' \) \
        -print0 | LC_ALL=C sort -z | xargs -0 sha256sum) | sha256sum | cut -c1-16
}

do_key() {
    local bt=${TG_ACTION_BUILDTYPE:-release}
    local os=${RUNNER_OS:-$(uname -s)}
    local base=${RUNNER_TOOL_CACHE:-${RUNNER_TEMP:-${TMPDIR:-/tmp}}}
    local key="tracegate-$os-$(uname -m)-$bt-$(sources_hash)"
    out "key=$key" "prefix=$base/tracegate/$key"
    say "cache key $key"
}

do_deps() {
    if installed; then say "tracegate is installed in $(prefix) (cache hit): no packages needed"; return; fi
    local tool missing=0
    for tool in gcc meson ninja pkg-config; do command -v "$tool" >/dev/null || missing=1; done
    if [ "$missing" = 0 ] && pkg-config --exists yaml-0.1 sqlite3 jansson yajl zlib libpq; then
        say "the build's packages are installed"
        return
    fi
    local sudo=""
    [ "$(id -u)" = 0 ] || sudo=sudo
    export DEBIAN_FRONTEND=noninteractive
    $sudo apt-get update -qq
    $sudo apt-get install -y -qq --no-install-recommends \
        gcc libc6-dev meson ninja-build pkg-config \
        libyaml-dev libsqlite3-dev libjansson-dev libyajl-dev zlib1g-dev libpq-dev >/dev/null
}

do_build() {
    local p bt b
    p=$(prefix)
    bt=${TG_ACTION_BUILDTYPE:-release}
    if installed; then
        say "tracegate is installed in $p (cache hit): not built again"
    else
        b=${RUNNER_TEMP:-${TMPDIR:-/tmp}}/tracegate-build-$$
        meson setup "$b" "$here" --buildtype="$bt" --prefix="$p" >/dev/null
        # the installed parts only (the binary, its man page and completion),
        # not the test suite
        ninja -C "$b" tracegate tracegate.1 completions/tracegate >/dev/null
        meson install -C "$b" --no-rebuild --quiet
        rm -rf "$b"
    fi
    "$p/bin/tracegate" --version
    out "tracegate=$p/bin/tracegate"
}

do_check() {
    local p reports status=0
    p=$(prefix)
    reports=${TG_ACTION_REPORTS:-tracegate-reports}
    mkdir -p "$reports"
    local args=(check --format github
        -o "json=$reports/tracegate.json" -o "html=$reports/tracegate.html" -o "junit=$reports/tracegate.xml")
    [ -z "${TG_ACTION_BASELINE:-}" ] || args+=(--baseline "$TG_ACTION_BASELINE")
    if [ -n "${TG_ACTION_HISTORY:-}" ]; then
        local label=${TG_ACTION_LABEL:-}
        [ -n "$label" ] || label=${GITHUB_SHA:0:12}
        args+=(--history "$TG_ACTION_HISTORY")
        [ -z "$label" ] || args+=(--label "$label")
        [ -z "${GITHUB_REF_NAME:-}" ] || args+=(--branch "$GITHUB_REF_NAME")
    fi
    [ -z "${TG_ACTION_RULES:-}" ] || args+=(--rules "$TG_ACTION_RULES")
    # args: split as a shell would split words, without running anything
    if [ -n "${TG_ACTION_ARGS:-}" ]; then
        local extra
        read -r -a extra <<< "$(printf '%s' "$TG_ACTION_ARGS" | tr '\n' ' ')"
        args+=("${extra[@]}")
    fi
    # traces: paths or globs; a glob that matches nothing stays as written,
    # so tracegate names the missing file (exit 3) instead of checking none
    local traces=() t
    for t in $(printf '%s' "${TG_ACTION_TRACES:?the traces input is empty}" | tr '\n' ' '); do
        traces+=("$t")
    done
    [ ${#traces[@]} -gt 0 ] || { say "the traces input names no file"; out "exit-code=2"; return; }
    "$p/bin/tracegate" "${args[@]}" "${traces[@]}" || status=$?
    out "exit-code=$status" "result=$reports/tracegate.json"
    say "tracegate check exited $status"
}

do_verdict() {
    case "${TG_ACTION_EXIT:-}" in
        0) say "the gate passed" ;;
        '') say "tracegate check gave no exit status (the check step broke): failing"; exit 4 ;;
        *) say "the gate failed (exit $TG_ACTION_EXIT); the reports are in the artifact tracegate-reports"
           exit "$TG_ACTION_EXIT" ;;
    esac
}

case $verb in
    key) do_key ;;
    deps) do_deps ;;
    build) do_build ;;
    check) do_check ;;
    verdict) do_verdict ;;
    *) say "unknown verb '$verb' (key, deps, build, check, verdict)"; exit 2 ;;
esac
