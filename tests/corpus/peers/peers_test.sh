#!/usr/bin/env bash
# The peer test (issue 38; docs/peers.md): tracegate's numbers against
# `nsys stats` 2022.4 on every export of ../shared/traces, by
# peers_test.py. Here: find nsys (tests/require.sh: where it must run, a
# missing nsys fails) and the traces (absent: skip, as every corpus test).
# python3 is on every machine that runs the suite: meson is a python3
# program, and nsys stats 2022.4 runs its reports with /usr/bin/python3.
set -uo pipefail
root="$TG_SOURCE_ROOT"
# shellcheck source=tests/require.sh
. "$root/tests/require.sh"
traces=${TG_SHARED_TRACES:-}
if [ -z "$traces" ] || [ ! -d "$traces" ]; then
    echo "peers: SKIPPED: ../shared/traces is absent (TG_SHARED_TRACES=${traces:-unset}); nothing to compare"
    exit 77
fi
nsys=$(tg_find_nsys)
[ -n "$nsys" ] || tg_skip peers "no nsys (TG_NSYS, PATH, or the root of bash ci/nsys-deps.sh, which unpacks Nsight Systems 2022.4)"
version=$("$nsys" --version 2>&1) || tg_skip peers "$nsys does not run: $version"
case "$version" in
    *" 2022.4."*) ;;
    *) tg_skip peers "$nsys is not Nsight Systems 2022.4 ($version): the differences listed are that version's" ;;
esac
echo "peers: $version"
exec python3 "$root/tests/corpus/peers/peers_test.py" "$nsys" "$TG_BINARY" "$traces"
