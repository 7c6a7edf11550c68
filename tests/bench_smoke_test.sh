#!/usr/bin/env bash
# bench/run at a tiny size (issue 36 item 1): the bundled example at x1 and
# a Kineto trace of 2,000 kernels from bench/kineto-trace, 3 repetitions,
# with the README's build compared (here: this build against itself), on
# the binaries of this build (--no-build). Checks what a run must record,
# not how fast anything is: the machine (CPU, cores, governor, THP, SQLite
# of the library and of the shell), the build (type, compiler flags), the
# load before and after, min / median / max of every tool, and the trust
# line with its flags, on stdout and in results.json. No wall-clock bound:
# the run is as valid on a loaded machine, only flagged (bench/README.md).
set -uo pipefail
root="$TG_SOURCE_ROOT"
example="$1"
build="$2"
# shellcheck source=tests/require.sh
. "$root/tests/require.sh"
command -v sqlite3 >/dev/null || tg_skip bench_smoke "the sqlite3 shell is not installed (bench/run times it)"
command -v python3 >/dev/null || tg_skip bench_smoke "python3 is not installed (bench/run times json.load)"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "bench_smoke: $*"; echo "--- stdout"; cat "$tmp/stdout"; echo "--- stderr"; tail -20 "$tmp/stderr"; exit 1; }

bash "$root/bench/run" --no-build --build "$build" --trace "$example" --sizes 1 --reps 3 --no-nsys \
    --kineto 2000 --compare-builds --readme-build "$build" --out "$tmp/out" >"$tmp/stdout" 2>"$tmp/stderr" ||
    fail "bench/run exited $?"

for line in '^machine: .*[0-9]* cores at .* MHz, governor .*, THP ' '^sqlite: library [0-9.]* (.*), shell ' \
            "^build: .*: buildtype .*, optimization .*, flags: " '^load average: before [0-9.]* .*, after [0-9.]* ' \
            '^x1 *check *[0-9.]* *[0-9.]* *[0-9.]* ' '^x1 *readme ' '^x1 *cli ' '^kineto *kcheck ' '^kineto *json_load ' \
            '^  x1 *readme/release wall [0-9.]*, cpu [0-9.]*: ' '^Kineto trace of 2000 kernels' \
            '^bench/run: \(load OK\|UNTRUSTED RUN\)'; do
    grep -q "$line" "$tmp/stdout" || fail "stdout lacks a line matching: $line"
done

python3 - "$tmp/out/results.json" <<'PY' || fail "results.json lacks the record"
import json, sys
d = json.load(open(sys.argv[1]))
m = d["machine"]
for k in ("cpu", "cores", "cpu_mhz", "governor", "thp", "thp_defrag", "sqlite_library", "sqlite_shell"):
    assert k in m and m[k] not in (None, ""), "machine." + k
assert m["cores"] >= 1
for b in (d["build"], d["readme_build"]):
    assert b["buildtype"] and b["optimization"] is not None and b["compiler_flags"].count("-O") == 1, b
assert set(d["load"]) == {"before", "after", "others_cpu_share"}
assert isinstance(d["trusted"], bool) and isinstance(d["flags"], list)
assert d["trusted"] == (not d["flags"]), "trusted iff no flag"
s = d["sizes"][0]
for t in ("check_wall_s", "floor_wall_s", "cli_wall_s", "readme_build_check_wall_s"):
    w = s[t]
    assert len(w["runs"]) == 3 and w["min"] <= w["median"] <= w["max"], t
    assert w["min"] == min(w["runs"]) and w["max"] == max(w["runs"]), t
k = d["kineto"]
assert k["kernels"] == 2000 and len(k["check_wall_s"]["runs"]) == 3 and len(k["json_load_wall_s"]["runs"]) == 3
assert k["check_peak_rss_kib"] > 0 and k["json_load_peak_rss_kib"] > 0
PY

# Round-robin: the first tool of each repetition is another one.
firsts=$(awk -F'\t' '$2 == 1 && !seen[$3]++ { print $1 }' "$tmp/out/runs.tsv" | sort -u | wc -l)
[ "$firsts" = 3 ] || fail "the tools' order is not rotated between repetitions (runs.tsv: $(cut -f1-3 "$tmp/out/runs.tsv" | tr '\n' ' '))"

# The flag: a run under a load past the bound is said untrusted, whatever
# this machine's load now (the bound lowered to nothing).
BENCH_LOAD_PER_CORE_MAX=-1 bash "$root/bench/run" --no-build --build "$build" --trace "$example" --sizes 1 --reps 1 \
    --no-nsys --out "$tmp/out2" >"$tmp/stdout" 2>"$tmp/stderr" || fail "bench/run (flag check) exited $?"
grep -q '^bench/run: UNTRUSTED RUN' "$tmp/stdout" || fail "no UNTRUSTED line under a load above the bound"
grep -q '^  - load average before the run .* per core)' "$tmp/stdout" || fail "the load flag is not said"
python3 -c 'import json, sys; d = json.load(open(sys.argv[1])); assert d["trusted"] is False and any("load average" in f for f in d["flags"])' \
    "$tmp/out2/results.json" || fail "results.json does not carry the load flag"
echo "bench_smoke: bench/run records the machine, the builds, the load and its flags"
