#!/usr/bin/env bash
# The Slurm recipe (ci/examples/slurm) on a real single-node Slurm cluster:
# installs Debian's slurmctld, slurmd and munge (apt-get), starts munged,
# slurmctld and slurmd on private ports with a private configuration in a
# temporary directory, and submits the recipe's own batch script
# (train-and-gate.sbatch) with four tasks on the node. Its training step
# runs profile-rank.sh per task with a stand-in profiler that gives each
# rank a real trace from ../shared/traces (a symlink, read-only); the gate
# step checks the node's ranks there (--jobs from the allocation) and one
# merge decides. Three jobs, their exit status the merged verdict:
#
#   clean set (drv_train_run1..3)                 -> 0
#   rank 2 recorded drv_sync_memcpy (a failure)    -> 1
#   rank 3 wrote no trace                          -> 3 (a missing rank)
#   the clean job's results directory given again  -> 2 (an earlier run's
#                                                     results there)
#
# and the clean job's results merged again by hand give its verdict (the
# merged reports are written beside the results directory, not in it).
# Skips (exit 77) with the reason where the cluster cannot exist: not root,
# the packages cannot be installed, a daemon does not start, no traces; in
# the project's CI a skip fails (tests/require.sh).
#
#   bash tests/slurm/slurm_test.sh [build/tracegate]
set -uo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
bin=$(cd "$(dirname "${1:-$root/build/tracegate}")" && pwd)/$(basename "${1:-$root/build/tracegate}")
traces=${TG_SHARED_TRACES:-$root/../shared/traces}/h200-nsys
recipe=$root/ci/examples/slurm
# shellcheck source=tests/require.sh
. "$root/tests/require.sh"
skip() { tg_skip slurm "$@"; }
[ -x "$bin" ] || { echo "slurm: no tracegate binary at $bin"; exit 1; }
[ -r "$traces/drv_train_run1.sqlite" ] || skip "no real traces at $traces"
[ "$(id -u)" = 0 ] || skip "slurmctld, slurmd and munged need root to be installed and started here"

# ------------------------------------------------------------- packages
if ! command -v slurmctld >/dev/null || ! command -v slurmd >/dev/null || ! command -v munged >/dev/null ||
   ! command -v sbatch >/dev/null; then
    export DEBIAN_FRONTEND=noninteractive
    { apt-get update -qq && apt-get install -y -qq --no-install-recommends slurmctld slurmd munge slurm-client; } \
        >/tmp/slurm-test-apt.log 2>&1 ||
        { tail -5 /tmp/slurm-test-apt.log; skip "apt-get could not install slurmctld, slurmd, munge and slurm-client"; }
fi

# ------------------------------------------------------------- cluster
tmp=$(mktemp -d /tmp/tg-slurm-XXXXXX)
chmod 0755 "$tmp"
# shellcheck disable=SC2317  # run by the EXIT trap
cleanup() {
    for pidfile in "$tmp/slurmd.pid" "$tmp/slurmctld.pid" "$tmp/munge/munged.pid"; do
        [ -s "$pidfile" ] && kill "$(cat "$pidfile")" 2>/dev/null
    done
    sleep 1
    rm -rf "$tmp"
}
trap cleanup EXIT
mkdir -m 0755 "$tmp/munge"
mkdir "$tmp/state" "$tmp/spool" "$tmp/log" "$tmp/submit"
dd if=/dev/urandom of="$tmp/munge/munge.key" bs=1024 count=1 2>/dev/null
chmod 0400 "$tmp/munge/munge.key"
munged --force --socket="$tmp/munge/munge.socket" --key-file="$tmp/munge/munge.key" \
    --pid-file="$tmp/munge/munged.pid" --log-file="$tmp/munge/munged.log" --seed-file="$tmp/munge/munged.seed" ||
    skip "munged does not start: $(tail -3 "$tmp/munge/munged.log" 2>/dev/null)"

port_free() { ! (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
ctld_port=0
for _ in $(seq 20); do
    p=$((20000 + RANDOM % 30000))
    if port_free "$p" && port_free $((p + 1)); then ctld_port=$p; break; fi
done
[ "$ctld_port" != 0 ] || skip "no two free TCP ports for slurmctld and slurmd"
node=$(hostname -s)
export SLURM_CONF="$tmp/slurm.conf"
cat >"$SLURM_CONF" <<CONF
# a one-node cluster for tests/slurm/slurm_test.sh; 4 CPUs declared
# (config_overrides) so that four tasks fit whatever the machine has
ClusterName=tgtest
SlurmctldHost=$node(127.0.0.1)
SlurmUser=root
SlurmdUser=root
SlurmctldPort=$ctld_port
SlurmdPort=$((ctld_port + 1))
AuthType=auth/munge
AuthInfo=socket=$tmp/munge/munge.socket
CredType=cred/munge
StateSaveLocation=$tmp/state
SlurmdSpoolDir=$tmp/spool
SlurmctldPidFile=$tmp/slurmctld.pid
SlurmdPidFile=$tmp/slurmd.pid
SlurmctldLogFile=$tmp/log/slurmctld.log
SlurmdLogFile=$tmp/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
MpiDefault=none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
SlurmdParameters=config_overrides
ReturnToService=2
NodeName=$node NodeAddr=127.0.0.1 CPUs=4 State=UNKNOWN
PartitionName=tg Nodes=$node Default=YES MaxTime=INFINITE State=UP
CONF
slurmctld -f "$SLURM_CONF" || skip "slurmctld does not start: $(tail -3 "$tmp/log/slurmctld.log" 2>/dev/null)"
slurmd -f "$SLURM_CONF" || skip "slurmd does not start: $(tail -3 "$tmp/log/slurmd.log" 2>/dev/null)"
up=0
for _ in $(seq 360); do   # up to 3 min: a safety net on a loaded host, the node is up in about a second
    state=$(sinfo -h -n "$node" -o %t 2>/dev/null)
    case "$state" in idle*|mix*|alloc*) up=1; break ;; esac
    sleep 0.5
done
[ "$up" = 1 ] || { tail -5 "$tmp/log/slurmctld.log" "$tmp/log/slurmd.log"; skip "the node did not come up (state '$state')"; }
echo "slurm: cluster up: $(sinfo -V), node $node, $(sinfo -h -o '%c CPUs')"

# ------------------------------------------------------------- jobs
failures=0
fail() { echo "FAILED: $*"; failures=$((failures + 1)); }

# the stand-in profiler: rank N gets trace N of TG_TEST_TRACES ("-": none)
cat >"$tmp/fake-profiler.sh" <<'SH'
#!/usr/bin/env bash
# profile-rank.sh gives: -o OUT COMMAND...
out=$2
set -- $TG_TEST_TRACES
i=$((SLURM_PROCID + 1))
name=${!i}
[ "$name" = - ] && exit 0
ln -s "$TG_TEST_TRACE_ROOT/$name.sqlite" "$out.sqlite"
SH
chmod +x "$tmp/fake-profiler.sh"

# run_job NAME WANT "trace per rank" [RESULTS]: submit the recipe with 4
# tasks, wait, compare the job's exit status (the merged verdict) with
# WANT; the results go to $tmp/results/RESULTS (default NAME), the merged
# reports to $tmp/results/RESULTS.merged.{json,xml} (the recipe's default)
run_job() {
    local name=$1 want=$2 set=$3 got
    export TG_RECIPE_DIR="$recipe" TG_TRACEGATE="$bin" TG_PROFILER="$tmp/fake-profiler.sh"
    export TG_TEST_TRACES="$set" TG_TEST_TRACE_ROOT="$traces"
    export TG_TRACE_DIR="$tmp/node-local/$name" TG_RESULT_DIR="$tmp/results/${4:-$name}"
    (cd "$tmp/submit" && timeout 120 sbatch --wait --nodes=1 --ntasks=4 --job-name="tg-$name" \
        --output="$tmp/$name.out" "$recipe/train-and-gate.sbatch" ./train.py) >/dev/null
    got=$?
    echo "slurm: job $name ($set): exit $got, expected $want"
    [ "$got" = "$want" ] || fail "job $name exited $got, expected $want"
    # the job's output on a failure, or always with TG_SLURM_VERBOSE=1
    if [ "$got" != "$want" ] || [ -n "${TG_SLURM_VERBOSE:-}" ]; then sed 's/^/  | /' "$tmp/$name.out" | tail -30; fi
}

run_job clean 0 "drv_train_run1 drv_train_run2 drv_train_run3 drv_train_run2"
m="$tmp/results/clean.merged.json"
[ -s "$tmp/results/clean/node-$node.json" ] || fail "clean: no node result node-$node.json"
[ -s "$m" ] || fail "clean: no merged report $m"
[ -s "$tmp/results/clean.merged.xml" ] || fail "clean: no merged JUnit report"
[ "$(ls "$tmp/results/clean")" = "node-$node.json" ] ||
    fail "clean: the results directory holds more than the node result: $(ls "$tmp/results/clean" | tr '\n' ' ')"
[ "$(grep -c '"rank_from": "--rank-pattern"' "$m")" = 4 ] || fail "clean: the merged result does not hold 4 ranks"
grep -qF '"status": "pass"' "$m" || fail "clean: merged status is not pass"
grep -qF "\"host\": \"$node\"" "$m" || fail "clean: the host is not the node's"
grep -qF '"world_size": 4' "$m" || fail "clean: world size 4 not recorded"
grep -qF "4 traces, --jobs 4, check exit 0" "$tmp/clean.out" || fail "clean: the node step did not check 4 traces with --jobs 4"

# the results merged again (a re-run of the merge): the same verdict
"$bin" merge --quiet --world-size 4 "$tmp/results/clean" >"$tmp/remerge.out" 2>&1
got=$?
[ "$got" = 0 ] || fail "clean: merging its results again exited $got, expected 0: $(head -3 "$tmp/remerge.out")"

run_job failing-rank 1 "drv_train_run1 drv_train_run2 drv_sync_memcpy drv_train_run3"
m="$tmp/results/failing-rank.merged.json"
grep -qF '"status": "fail"' "$m" || fail "failing-rank: merged status is not fail"
grep -q 'rank 2 on .*: p50 iteration period .* from the median rank' "$m" || fail "failing-rank: no rank-straggler for rank 2"
grep -q 'FAIL .*sync-memcpy .*400 synchronous' "$tmp/failing-rank.out" || fail "failing-rank: rank 2's sync-memcpy failure is not reported"

run_job missing-rank 3 "drv_train_run1 drv_train_run2 drv_train_run3 -"
grep -qF 'no result for 1 of the 4 ranks of job' "$tmp/missing-rank.out" ||
    fail "missing-rank: the merge does not name the missing rank"

# a run given the clean job's results directory: its result could stand
# for a rank whose node writes none now, so the gate refuses
run_job stale-results 2 "drv_train_run1 drv_train_run2 drv_train_run3 -" clean
grep -qF "already holds 1 results" "$tmp/stale-results.out" ||
    fail "stale-results: the gate does not refuse the earlier run's results"

if [ "$failures" = 0 ]; then echo "slurm: all checks passed"; exit 0; fi
echo "slurm: $failures checks failed"
exit 1
