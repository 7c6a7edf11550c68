# shellcheck shell=bash
# Sourced by ci/valgrind.sh and ci/fuzz.sh.
# two_at_a_time FN ITEM...: runs `FN ITEM` for every ITEM, two at a time
# (CI's machines have 2 cores and each FN is one busy process), then
# waits for all of them. FN records its own outcome: a background job's
# status is not kept here.
two_at_a_time() {
    local fn=$1 running=0 item
    shift
    for item in "$@"; do
        if [ "$running" -ge 2 ]; then
            wait -n || true
            running=$((running - 1))
        fi
        "$fn" "$item" &
        running=$((running + 1))
    done
    wait
}
