# shellcheck shell=bash
# Sourced by the tests that can skip (the browser test, the Slurm recipe,
# the nsys export test, the peer test): a skip is exit 77, which meson and ci/test.sh
# count as a pass. In the project's CI every such test must run, so there
# a skip is a failure:
#
#   TG_REQUIRE_ALL=1   a skip fails (.ci/run sets it)
#   TG_REQUIRE_ALL=0   a skip skips, whatever CI says
#   unset              a skip fails when CI is set (CI services set CI=true),
#                      else skips
#
# A user's clone without chromium, root or nsys still skips, saying why.

# true when a skip must fail
tg_required() {
    case "${TG_REQUIRE_ALL:-}" in
        1) return 0 ;;
        0) return 1 ;;
    esac
    case "${CI:-}" in
        ''|0|false|no) return 1 ;;
        *) return 0 ;;
    esac
}

# tg_skip NAME REASON...: exit 77 with the reason, or 1 where required
tg_skip() {
    local name=$1
    shift
    if tg_required; then
        echo "$name: FAILED: $* -- this test must run in CI (TG_REQUIRE_ALL=${TG_REQUIRE_ALL:-unset}, CI=${CI:-unset}); TG_REQUIRE_ALL=0 lets it skip"
        exit 1
    fi
    echo "$name: SKIPPED: $*"
    exit 77
}

# tg_find_nsys: the nsys to run -- TG_NSYS, nsys on PATH, or the one
# ci/nsys-deps.sh unpacks (under TG_NSYS_ROOT); empty when none
tg_find_nsys() {
    local nsys unpacked
    nsys=${TG_NSYS:-$(command -v nsys || true)}
    unpacked=${TG_NSYS_ROOT:-/var/cache/tracegate/nsight-systems-2022.4}/usr/lib/x86_64-linux-gnu/nsight-systems/target-linux-x64/nsys
    [ -n "$nsys" ] || [ ! -x "$unpacked" ] || nsys=$unpacked
    echo "$nsys"
}
