#!/usr/bin/env bash
# Nsight Systems 2022.4 for tests/nsys_test.sh (`nsys profile` and `nsys
# export` of real reports on a machine without a GPU): Debian bookworm's
# nsight-systems and nsight-systems-target (non-free), unpacked with
# dpkg-deb, not installed (the GUI's dependencies are not needed; Qt
# WebEngine, translations and documentation are left out) into
# $TG_NSYS_ROOT (default /var/cache/tracegate/nsight-systems-2022.4).
# Quick when run again: an unpacked root that runs is used as it is, and
# the two .deb files stay in apt's archive cache (/var/cache/apt/archives),
# so only the unpacking is redone. nsys is not put on PATH: the other
# tests check what tracegate does without it; the nsys test finds it here.
#
# Where a skip is a failure (the project's CI: tests/require.sh) a failed
# install fails here; elsewhere it says why and the nsys test skips.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
# shellcheck source=tests/require.sh
. tests/require.sh
root=${TG_NSYS_ROOT:-/var/cache/tracegate/nsight-systems-2022.4}
nsys=$root/usr/lib/x86_64-linux-gnu/nsight-systems/target-linux-x64/nsys
give_up() {
    if tg_required; then echo "nsys-deps: FAILED: $* (the nsys test must run in CI)" >&2; exit 1; fi
    echo "nsys-deps: $*; the nsys test will be skipped" >&2
    exit 0
}
if [ -x "$nsys" ] && "$nsys" --version >/dev/null 2>&1; then exit 0; fi
[ "$(id -u)" = 0 ] || give_up "unpacking Nsight Systems into $root needs root here"
export DEBIAN_FRONTEND=noninteractive

# the .debs: from apt's cache, else from the non-free component of this
# machine's Debian archive (lists of their own: the machine's apt
# configuration is left as it is)
cache=/var/cache/apt/archives
debs() { ls "$cache"/nsight-systems_2022.4*_amd64.deb "$cache"/nsight-systems-target_2022.4*_amd64.deb 2>/dev/null; }
if [ "$(debs | wc -l)" != 2 ]; then
    apt_dir=/var/lib/tracegate-apt
    mkdir -p "$apt_dir/lists/partial"
    uri=$(awk '/^URIs:/{print $2; exit}' /etc/apt/sources.list.d/debian.sources 2>/dev/null)
    [ -n "$uri" ] || uri=$(awk '$1 == "deb" && $2 !~ /security/ {print $2; exit}' /etc/apt/sources.list 2>/dev/null)
    [ -n "$uri" ] || give_up "no Debian archive found in /etc/apt"
    echo "deb $uri bookworm non-free" > "$apt_dir/sources.list"
    apt_opts=(-o Dir::Etc::sourcelist="$apt_dir/sources.list" -o Dir::Etc::sourceparts=-
              -o Dir::State::Lists="$apt_dir/lists")
    apt-get "${apt_opts[@]}" update -qq >/dev/null || give_up "apt-get update of $uri bookworm non-free failed"
    (cd "$cache" && apt-get "${apt_opts[@]}" download nsight-systems nsight-systems-target >/dev/null 2>&1) ||
        give_up "apt-get download nsight-systems nsight-systems-target failed"
    [ "$(debs | wc -l)" = 2 ] || give_up "bookworm non-free has no nsight-systems 2022.4"
fi
# the host tools need libssh (a library of the main archive)
dpkg -s libssh-4 >/dev/null 2>&1 || apt-get install -y -qq --no-install-recommends libssh-4 >/dev/null ||
    give_up "apt-get install libssh-4 failed"

# unpack beside the root, then move it in place: a root is whole or absent
part="$root.partial"
rm -rf "$part"
mkdir -p "$part"
for deb in $(debs); do
    dpkg-deb --fsys-tarfile "$deb" | tar -x -C "$part" --exclude='*libQt6WebEngine*' --exclude='*/translations/*' \
        --exclude='*/resources/qtwebengine*' --exclude='./usr/share/doc/*' ||
        give_up "unpacking $deb failed"
done
# the layout nsys expects: host and target tools beside each other
ln -sfn ../../nsight-systems/host-linux-x64 "$part/usr/lib/x86_64-linux-gnu/nsight-systems/host-linux-x64"
ln -sf /usr/lib/x86_64-linux-gnu/libssh.so.4 "$part/usr/lib/nsight-systems/host-linux-x64/libssh.so"
rm -rf "$root"
mv "$part" "$root"
"$nsys" --version >/dev/null 2>&1 || give_up "$nsys does not run"
echo "nsys-deps: $("$nsys" --version) in $root"
