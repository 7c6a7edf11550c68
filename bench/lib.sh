# bench/lib.sh: what the bench scripts share (sourced, not run): the record
# of the machine and of the build a run measured, the load it ran under,
# and the min / median / max of repeated runs (issue 36 item 1; what the
# fields mean: bench/README.md, "What a run records"). A figure taken on a
# loaded machine says so: bench_trust flags it.

# The bounds past which a run is flagged as untrusted (bench/README.md).
BENCH_LOAD_PER_CORE_MAX=${BENCH_LOAD_PER_CORE_MAX:-0.5}    # 1-minute load average before the run, per core
BENCH_OTHERS_SHARE_MAX=${BENCH_OTHERS_SHARE_MAX:-0.25}    # CPU time of other processes during the run, share of all cores
BENCH_SPREAD_MAX=${BENCH_SPREAD_MAX:-1.25}          # max / min wall time of one tool at one size

bench_json_str() {  # text -> a JSON string
    local s=${1//\\/\\\\}
    s=${s//\"/\\\"}
    printf '"%s"' "${s//$'\t'/ }"
}

bench_loadavg() { cut -d' ' -f1 /proc/loadavg 2>/dev/null || echo 0; }

# Busy CPU seconds of the whole machine so far (/proc/stat, every process;
# steal counted: time another VM had our core).
bench_busy_s() {
    awk -v hz="$(getconf CLK_TCK 2>/dev/null || echo 100)" \
        '$1 == "cpu" { print ($2 + $3 + $4 + $7 + $8 + $9) / hz; exit }' /proc/stat 2>/dev/null || echo 0
}

# CPU seconds of this shell and its children so far (bash's `times`, run
# in this shell: a subshell's would start from zero) into BENCH_OWN.
bench_own_s() {
    local f
    f=$(mktemp "${TMPDIR:-/tmp}/bench-times-XXXXXX")
    times >"$f"
    BENCH_OWN=$(awk '{ for (i = 1; i <= 2; i++) { split($i, a, /[ms]/); s += a[1] * 60 + a[2] } } END { printf "%.3f", s }' "$f")
    rm -f "$f"
}

bench_now() { date +%s.%N; }

# The share of FILE in the page cache (fincore, util-linux), or null.
bench_cached() {
    fincore --bytes --noheadings --output RES,SIZE "$1" 2>/dev/null |
        awk '$2 > 0 { printf "%.3f", $1 / $2; ok = 1 } END { if (!ok) print "null" }'
}

# Start of a measured run: remembers the load and the counters.
bench_begin() {
    BENCH_LOAD_BEFORE=$(bench_loadavg)
    BENCH_LOADAVG_BEFORE=$(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo unknown)
    BENCH_T0=$(bench_now)
    BENCH_BUSY0=$(bench_busy_s)
    bench_own_s; BENCH_OWN0=$BENCH_OWN
}

# End of it: the load after, and the share of all cores other processes
# kept busy meanwhile (machine busy time minus this run's own).
bench_end() {
    local t1 busy1 own1
    t1=$(bench_now); busy1=$(bench_busy_s); bench_own_s; own1=$BENCH_OWN
    BENCH_LOAD_AFTER=$(bench_loadavg)
    BENCH_LOADAVG_AFTER=$(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo unknown)
    BENCH_OTHERS_SHARE=$(awk -v b0="$BENCH_BUSY0" -v b1="$busy1" -v o0="$BENCH_OWN0" -v o1="$own1" \
        -v t0="$BENCH_T0" -v t1="$t1" -v n="$(nproc)" \
        'BEGIN { o = (b1 - b0) - (o1 - o0); if (o < 0) o = 0; w = t1 - t0; printf "%.3f", (w > 0 ? o / (w * n) : 0) }')
}

# The build a binary comes from: meson's options of the build directory and
# the flags the compiler got for one engine file (compile_commands.json).
bench_build_json() {  # build dir
    python3 - "$1" <<'EOF' 2>/dev/null || echo '{"dir": "'"$1"'", "buildtype": "unknown"}'
import json, sys, os
d = sys.argv[1]
opts = {o["name"]: o["value"] for o in json.load(open(os.path.join(d, "meson-info", "intro-buildoptions.json")))}
flags = ""
for c in json.load(open(os.path.join(d, "compile_commands.json"))):
    if c["file"].endswith("engine/trace/trace_btree.c"):
        flags = " ".join(a for a in c["command"].split() if a.startswith(("-O", "-g", "-D", "-f", "-m")) and
                         not a.startswith("-fdiagnostics"))
        break
print(json.dumps({"dir": os.path.abspath(d), "buildtype": opts.get("buildtype"),
                  "optimization": opts.get("optimization"), "debug": opts.get("debug"),
                  "b_ndebug": opts.get("b_ndebug"), "c_args": opts.get("c_args"),
                  "compiler_flags": flags}))
EOF
}

# The machine: one JSON object (fields in bench/README.md). Arguments: the
# tracegate binary (whose libsqlite3 is named) and a program built in the
# same build that prints sqlite3_libversion() (floor --sqlite-version).
bench_machine_json() {  # tracegate floor
    local cpu mhz gov thp defrag virt lib libver shell mem
    cpu=$(awk -F': ' '/^model name/ { print $2; exit }' /proc/cpuinfo 2>/dev/null)
    mhz=$(awk -F': ' '/^cpu MHz/ { print $2; exit }' /proc/cpuinfo 2>/dev/null)
    gov=$(cat /sys/devices/system/cpu/cpu0/cpufreq/scaling_governor 2>/dev/null || echo "unreadable (no cpufreq)")
    thp=$(sed 's/.*\[\(.*\)\].*/\1/' /sys/kernel/mm/transparent_hugepage/enabled 2>/dev/null || echo unknown)
    defrag=$(sed 's/.*\[\(.*\)\].*/\1/' /sys/kernel/mm/transparent_hugepage/defrag 2>/dev/null || echo unknown)
    virt=$(systemd-detect-virt 2>/dev/null || echo unknown)
    mem=$(awk '/^MemTotal/ { printf "%.1f", $2 / 1048576 }' /proc/meminfo 2>/dev/null)
    lib=$(ldd "$1" 2>/dev/null | awk '/libsqlite3/ { print $3 }')
    libver=$("$2" --sqlite-version 2>/dev/null || echo unknown)
    shell=$(sqlite3 --version 2>/dev/null | cut -d' ' -f1)
    printf '{"cpu": %s, "cores": %d, "cpu_mhz": %s, "governor": %s, "thp": %s, "thp_defrag": %s, ' \
        "$(bench_json_str "${cpu:-unknown}")" "$(nproc)" "${mhz:-null}" "$(bench_json_str "$gov")" \
        "$(bench_json_str "$thp")" "$(bench_json_str "$defrag")"
    printf '"kernel": %s, "virtualization": %s, "memory_gib": %s, "sqlite_library": %s, "sqlite_library_path": %s, ' \
        "$(bench_json_str "$(uname -r)")" "$(bench_json_str "$virt")" "${mem:-null}" \
        "$(bench_json_str "$libver")" "$(bench_json_str "${lib:-static or unknown}")"
    printf '"sqlite_shell": %s, "TRACEGATE_READER": %s}' "$(bench_json_str "${shell:-none}")" \
        "$( [ -n "${TRACEGATE_READER:-}" ] && bench_json_str "$TRACEGATE_READER" || echo null)"
}

# The same record as lines for the terminal.
bench_machine_text() {  # machine json, build json...
    python3 - "$@" <<'EOF' 2>/dev/null || echo "machine: $1"
import json, sys
m = json.loads(sys.argv[1])
print("machine: %s, %d cores at %s MHz, governor %s, THP %s (defrag %s), kernel %s, %s, %s GiB" % (
    m["cpu"], m["cores"], m["cpu_mhz"], m["governor"], m["thp"], m["thp_defrag"], m["kernel"],
    m["virtualization"], m["memory_gib"]))
print("sqlite: library %s (%s), shell %s" % (m["sqlite_library"], m["sqlite_library_path"], m["sqlite_shell"]))
for b in sys.argv[2:]:
    b = json.loads(b)
    print("build: %s: buildtype %s, optimization %s, debug %s, b_ndebug %s, flags: %s" % (
        b["dir"], b.get("buildtype"), b.get("optimization"), b.get("debug"), b.get("b_ndebug"),
        b.get("compiler_flags", "")))
EOF
}

# Stats of one column of a runs file (tab-separated: tool size rep ...):
# "min median max" of the rows of one tool and size.
bench_stats() {  # runs-file tool size column
    awk -F'\t' -v t="$2" -v n="$3" -v c="$4" '$1 == t && $2 == n { print $c }' "$1" | sort -g |
        awk '{ v[NR] = $1 } END {
            if (NR == 0) { print "null null null"; exit }
            m = (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
            print v[1], m, v[NR] }'
}

# Whether the run can be trusted: sets BENCH_FLAGS (JSON strings, comma
# separated) and BENCH_TRUSTED; prints one line per flag. Arguments: lines
# "label max/min" of the spreads to judge.
bench_trust() {
    local n flags="" line label spread
    n=$(nproc)
    BENCH_FLAG_LINES=()
    if awk -v l="$BENCH_LOAD_BEFORE" -v n="$n" -v m="$BENCH_LOAD_PER_CORE_MAX" 'BEGIN { exit !(l / n > m) }'; then
        BENCH_FLAG_LINES+=("load average before the run $BENCH_LOAD_BEFORE on $n cores (more than $BENCH_LOAD_PER_CORE_MAX per core)")
    fi
    if awk -v s="$BENCH_OTHERS_SHARE" -v m="$BENCH_OTHERS_SHARE_MAX" 'BEGIN { exit !(s > m) }'; then
        BENCH_FLAG_LINES+=("other processes kept $(awk -v s="$BENCH_OTHERS_SHARE" 'BEGIN { printf "%.0f", s * 100 }')% of the cores busy during the run (more than $(awk -v m="$BENCH_OTHERS_SHARE_MAX" 'BEGIN { printf "%.0f", m * 100 }')%)")
    fi
    for line in "$@"; do
        label=${line% *}; spread=${line##* }
        if awk -v s="$spread" -v m="$BENCH_SPREAD_MAX" 'BEGIN { exit !(s != "null" && s > m) }'; then
            BENCH_FLAG_LINES+=("$label: slowest run / fastest run = $spread (more than $BENCH_SPREAD_MAX)")
        fi
    done
    BENCH_TRUSTED=true
    [ ${#BENCH_FLAG_LINES[@]} -gt 0 ] && BENCH_TRUSTED=false
    for line in "${BENCH_FLAG_LINES[@]}"; do
        flags+="${flags:+, }$(bench_json_str "$line")"
    done
    BENCH_FLAGS=$flags
}

bench_trust_print() {  # tool name
    local line
    if [ "$BENCH_TRUSTED" = true ]; then
        printf '%s: load OK (load average %s before, %s after; other processes %s of the cores)\n' "$1" \
            "$BENCH_LOAD_BEFORE" "$BENCH_LOAD_AFTER" "$BENCH_OTHERS_SHARE"
    else
        printf '%s: UNTRUSTED RUN: these figures were taken on a loaded or noisy machine; do not judge a target by them:\n' "$1"
        for line in "${BENCH_FLAG_LINES[@]}"; do printf '  - %s\n' "$line"; done
    fi
}
