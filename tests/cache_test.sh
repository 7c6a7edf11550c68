#!/usr/bin/env bash
# The export cache of .nsys-rep inputs trusts only what nobody else could
# have written (issue 31; docs/limits.md, "The export cache"). No nsys is
# needed: a report's export is planted in the cache under the name of the
# report's bytes (SHA-256, computed here), and with nsys off PATH
#
#   - a planted export in a cache of this user's (0700 directory, 0600
#     entry) is used: the failing-looking report passes (exit 0), which
#     shows that a planted export is what a check would read;
#   - in a cache directory writable by its group or others, owned by
#     another user (as root: uid 65534), or reached through a symbolic
#     link, or as an entry that is a symbolic link, group-writable, another
#     user's, a FIFO, it is NOT used: one warning names the directory or
#     entry and why, and the report, with no nsys to export it, is one
#     unreadable trace (exit 3), never a pass;
#   - so too in /tmp/tracegate-cache-UID, the cache when HOME is unset,
#     that someone else made first (when it does not exist yet);
#   - directories the cache needs are made 0700;
#   - a cache of this user's that cannot be written is still read;
#   - a report that is a FIFO is refused (exit 3), never waited on.
#
# The export of a report that is not cached (nsys run on a private copy)
# is tests/nsys_test.sh's, with the real nsys.
set -uo pipefail
bin="$TG_BINARY"
example="$1"
tmp=$(mktemp -d)
tmp_cache=/tmp/tracegate-cache-$(id -u)
made_tmp_cache=
cleanup() {
    chmod -R u+rwx "$tmp" 2>/dev/null
    rm -rf "$tmp"
    [ -z "$made_tmp_cache" ] || rm -rf "$tmp_cache"
}
trap cleanup EXIT
failures=0
fail() { echo "FAILED: $*"; failures=$((failures + 1)); }
root=false
[ "$(id -u)" = 0 ] && root=true

# the cache's name of a file's bytes: their SHA-256 (engine/cli/inputs.c)
cache_name() { sha256sum "$1" | cut -d' ' -f1; }

# a "report" (never exported: only its bytes are hashed) and a rule that
# the planted export, the bundled example, passes
printf 'not really an Nsight Systems report\n' > "$tmp/run.nsys-rep"
entry=$(cache_name "$tmp/run.nsys-rep").sqlite
cat > "$tmp/pass.yaml" <<'YAML'
version: 1
rules:
  - id: no-such-kernel
    title: A kernel of a name no trace has
    severity: error
    source: kernel
    where: name matches "^no such kernel$"
    fail_when: count > 0
    message: "{count} found"
YAML

# run XDG_CACHE_HOME: check the report with nsys off PATH; exit status in
# $st, stderr in $tmp/err
run() {
    env PATH=/nonexistent XDG_CACHE_HOME="$1" "$bin" check --rules "$tmp/pass.yaml" "$tmp/run.nsys-rep" \
        >"$tmp/out" 2>"$tmp/err"
    st=$?
}
# plant DIR: a cache directory of this user's holding the report's export
plant() {
    mkdir -p "$1/tracegate"
    chmod 700 "$1/tracegate"
    cp "$example" "$1/tracegate/$entry"
    chmod 600 "$1/tracegate/$entry"
}
# refused CASE DIR WARNING: the planted export was not used
refused() {
    [ "$st" = 3 ] || fail "$1: exit $st, expected 3 (the planted export must not be used): $(head -c 300 "$tmp/err")"
    grep -qF "warning: $3" "$tmp/err" || fail "$1: no warning '$3' in: $(head -c 400 "$tmp/err")"
    [ "$(grep -c warning: "$tmp/err")" = 1 ] || fail "$1: not one warning: $(cat "$tmp/err")"
    grep -qF "nsys is not on PATH" "$tmp/err" || fail "$1: the report is not unreadable for want of nsys: $(cat "$tmp/err")"
}

# 1. a cache of this user's is used (no nsys needed)
plant "$tmp/good"
run "$tmp/good"
[ "$st" = 0 ] || fail "own cache: exit $st, expected 0 (the cached export): $(cat "$tmp/err")"
[ ! -s "$tmp/err" ] || fail "own cache: something on stderr: $(cat "$tmp/err")"
echo "cache: an export in a cache of this user's is used without nsys"

# 2. cache directories someone else could have written
for mode in 770 707 777 1777; do
    plant "$tmp/m$mode"
    chmod "$mode" "$tmp/m$mode/tracegate"
    run "$tmp/m$mode"
    refused "directory mode $mode" "$tmp/m$mode" \
        "not using the cache directory $tmp/m$mode/tracegate: it is writable by its group or others"
done
mkdir "$tmp/link"
ln -s "$tmp/good/tracegate" "$tmp/link/tracegate"
run "$tmp/link"
refused "symlinked directory" "$tmp/link" "not using the cache directory $tmp/link/tracegate: it is a symbolic link"
if $root; then
    plant "$tmp/other"
    chown -R 65534:65534 "$tmp/other/tracegate"
    run "$tmp/other"
    refused "directory of uid 65534" "$tmp/other" \
        "not using the cache directory $tmp/other/tracegate: it belongs to uid 65534, not to this user (uid 0)"
else
    echo "cache: not root: the sub-cases of another user's directory and entry are skipped"
fi
echo "cache: a cache directory others can write, another user's or a symbolic link is not used"

# 3. entries someone else could have written, in a cache of this user's
plant "$tmp/e-link"
mv "$tmp/e-link/tracegate/$entry" "$tmp/e-link/real.sqlite"
ln -s "$tmp/e-link/real.sqlite" "$tmp/e-link/tracegate/$entry"
run "$tmp/e-link"
refused "symlinked entry" "$tmp/e-link" "not using the cached export $tmp/e-link/tracegate/$entry: it is a symbolic link"
plant "$tmp/e-mode"
chmod 664 "$tmp/e-mode/tracegate/$entry"
run "$tmp/e-mode"
refused "group-writable entry" "$tmp/e-mode" \
    "not using the cached export $tmp/e-mode/tracegate/$entry: it is writable by its group or others (mode 664)"
mkdir -p "$tmp/e-fifo/tracegate"
mkfifo "$tmp/e-fifo/tracegate/$entry"
run "$tmp/e-fifo"
refused "FIFO entry" "$tmp/e-fifo" "not using the cached export $tmp/e-fifo/tracegate/$entry: it is not a regular file"
if $root; then
    plant "$tmp/e-other"
    chown 65534:65534 "$tmp/e-other/tracegate/$entry"
    run "$tmp/e-other"
    refused "entry of uid 65534" "$tmp/e-other" \
        "not using the cached export $tmp/e-other/tracegate/$entry: it belongs to uid 65534"
fi
echo "cache: an entry that is a symbolic link, others can write, another user's or not a file is not used"

# 4. HOME unset: /tmp/tracegate-cache-UID, made first by someone else (here
#    group- and world-writable), when it does not exist yet
if [ ! -e "$tmp_cache" ] && mkdir "$tmp_cache" 2>/dev/null; then
    made_tmp_cache=1
    chmod 777 "$tmp_cache"
    cp "$example" "$tmp_cache/$entry"
    chmod 600 "$tmp_cache/$entry"
    env -u HOME -u XDG_CACHE_HOME PATH=/nonexistent "$bin" check --rules "$tmp/pass.yaml" "$tmp/run.nsys-rep" \
        >"$tmp/out" 2>"$tmp/err"
    st=$?
    refused "HOME unset" "$tmp_cache" "not using the cache directory $tmp_cache: it is writable by its group or others"
    rm -rf "$tmp_cache"
    made_tmp_cache=
    echo "cache: $tmp_cache made by someone else is not used"
else
    echo "cache: $tmp_cache exists: its sub-case is skipped"
fi

# 5. what the cache needs is made 0700
run "$tmp/new/deeper"
[ "$st" = 3 ] || fail "new cache: exit $st, expected 3 (nothing cached, no nsys)"
grep -q "nsys is not on PATH" "$tmp/err" && ! grep -q warning "$tmp/err" || fail "new cache: $(cat "$tmp/err")"
for d in "$tmp/new" "$tmp/new/deeper" "$tmp/new/deeper/tracegate"; do
    [ "$(stat -c %a "$d" 2>/dev/null)" = 700 ] || fail "new cache: $d is not a directory of mode 700"
done
echo "cache: the directories made for the cache are 0700"

# 6. a cache of this user's that cannot be written is still read
plant "$tmp/ro"
chmod 500 "$tmp/ro/tracegate"
run "$tmp/ro"
[ "$st" = 0 ] && [ ! -s "$tmp/err" ] || fail "read-only cache: exit $st, expected 0 and no message: $(cat "$tmp/err")"
echo "cache: a read-only cache of this user's is read"

# 7. a report that is a FIFO: refused, not waited on (nothing writes it)
mkfifo "$tmp/fifo.nsys-rep"
env PATH=/nonexistent XDG_CACHE_HOME="$tmp/good" "$bin" check --rules "$tmp/pass.yaml" "$tmp/fifo.nsys-rep" \
    >"$tmp/out" 2>"$tmp/err"
st=$?
[ "$st" = 3 ] && grep -qF "$tmp/fifo.nsys-rep: the report is not a regular file" "$tmp/err" ||
    fail "FIFO report: exit $st: $(cat "$tmp/err")"
echo "cache: a report that is a FIFO is one unreadable trace"

if [ "$failures" = 0 ]; then echo "cache: all checks passed"; exit 0; fi
echo "cache: $failures checks failed"
exit 1
