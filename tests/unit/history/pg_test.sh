#!/usr/bin/env bash
# The team history on a real PostgreSQL server (engine/history/store_pg.c):
# starts a throwaway cluster (Debian's postgresql package: initdb, pg_ctl,
# postgres of the newest /usr/lib/postgresql/N/bin) in a temporary
# directory of its own, listening on a Unix socket there and nowhere else
# (listen_addresses ''), creates the roles the cases need, and runs
# test_store_pg ($1) against it with TG_PG_URI, the maintenance URI of the
# test's role. The cluster is stopped and removed on every exit.
#
# postgres refuses to run as root, and CI runs tests as root: there the
# server runs as the `postgres` user the package creates (or `nobody`),
# owning the cluster's directory; the test binary runs as the caller and
# connects through the socket. The cluster does not live under the build
# or the source tree, which a CI clone in a 0700 directory hides from that
# user, but in its own directory under /tmp, made reachable.
#
# Skips (exit 77) with the reason when the server binaries are absent; in
# the project's CI a skip fails (tests/require.sh).
#
#   bash tests/unit/history/pg_test.sh build/tests/unit/history/history_test_store_pg
set -uo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=tests/require.sh
. "$here/../../require.sh"
skip() { tg_skip history_pg "$@"; }
if [ $# != 1 ] || [ ! -x "$1" ]; then echo "history_pg: usage: pg_test.sh TEST_STORE_PG_BINARY"; exit 1; fi
bin=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")

# ------------------------------------------------------------- server binaries
pgbin=""
for d in $(printf '%s\n' /usr/lib/postgresql/*/bin | sort -V); do
    [ -x "$d/initdb" ] && [ -x "$d/pg_ctl" ] && [ -x "$d/postgres" ] && [ -x "$d/psql" ] && pgbin=$d
done
if [ -z "$pgbin" ] && command -v initdb >/dev/null && command -v pg_ctl >/dev/null; then
    pgbin=$(dirname "$(readlink -f "$(command -v initdb)")")
    [ -x "$pgbin/postgres" ] && [ -x "$pgbin/psql" ] || pgbin=""
fi
[ -n "$pgbin" ] || skip "no PostgreSQL server binaries (initdb, pg_ctl, postgres, psql in /usr/lib/postgresql/N/bin):" \
    "Debian's postgresql package provides them (ci/deps.sh installs it)"

# who runs the server: the caller, or an unprivileged user when root
as_server=()
server_user=$(id -un)
if [ "$(id -u)" = 0 ]; then
    if getent passwd postgres >/dev/null; then server_user=postgres; else server_user=nobody; fi
    if command -v runuser >/dev/null; then
        as_server=(runuser -u "$server_user" --)
    elif command -v setpriv >/dev/null; then
        as_server=(setpriv --reuid="$server_user" --regid="$(id -g "$server_user")" --init-groups --)
    else
        skip "running as root without runuser or setpriv (util-linux) to start postgres as $server_user"
    fi
fi

# ------------------------------------------------------------- cluster
tmp=$(mktemp -d /tmp/tg-pg-XXXXXX)
chmod 0755 "$tmp"
cd "$tmp" || exit 1   # the server's user may not enter the caller's directory (initdb, psql say so)
data=$tmp/data
sock=$tmp/sock
# shellcheck disable=SC2317  # run by the EXIT trap
cleanup() {
    if [ -s "$data/postmaster.pid" ]; then
        "${as_server[@]}" "$pgbin/pg_ctl" -D "$data" -m immediate -w -t 60 stop >/dev/null 2>&1 ||
            kill -9 "$(head -1 "$data/postmaster.pid")" 2>/dev/null
    fi
    rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 1' INT TERM HUP
mkdir -m 0700 "$data"
mkdir -m 0755 "$sock"
: >"$tmp/server.log"
if [ "$(id -u)" = 0 ]; then chown "$server_user" "$data" "$sock" "$tmp/server.log"; fi
"${as_server[@]}" "$pgbin/initdb" -D "$data" -U tg_admin --auth=trust -E UTF8 --locale=C.UTF-8 --no-sync \
    >"$tmp/initdb.log" 2>&1 ||
    "${as_server[@]}" "$pgbin/initdb" -D "$data" -U tg_admin --auth=trust -E UTF8 --locale=C --no-sync \
        >"$tmp/initdb.log" 2>&1 ||
    { tail -5 "$tmp/initdb.log"; echo "history_pg: FAILED: initdb of a throwaway cluster as $server_user"; exit 1; }

# The socket lives in the cluster's private directory, so any port number
# names a free socket there; a random one still keeps two runs apart in a
# log. The roles: tg_test (the cases' own: creates a database per case),
# tg_reader (granted SELECT only by the read-only case), tg_pw (the only
# one with a password; every other role is trusted on the socket).
port=$((20000 + RANDOM % 30000))
cat >>"$data/postgresql.conf" <<CONF
# tests/unit/history/pg_test.sh: a throwaway cluster on a private socket
listen_addresses = ''
unix_socket_directories = '$sock'
port = $port
fsync = off
synchronous_commit = off
full_page_writes = off
max_connections = 60
shared_buffers = 16MB
CONF
cat >"$data/pg_hba.conf" <<HBA
local all tg_pw scram-sha-256
local all all trust
HBA
start=$(date +%s.%N)
# -t 180: a safety net on a loaded host; the server is up in about a second
"${as_server[@]}" "$pgbin/pg_ctl" -D "$data" -l "$tmp/server.log" -w -t 180 start >/dev/null 2>&1 ||
    { tail -5 "$tmp/server.log"; echo "history_pg: FAILED: the server did not start"; exit 1; }
up=$(date +%s.%N)
psql_admin() { "${as_server[@]}" "$pgbin/psql" -X -q -v ON_ERROR_STOP=1 -h "$sock" -p "$port" -U tg_admin -d postgres "$@"; }
psql_admin -c "CREATE ROLE tg_test LOGIN CREATEDB" -c "CREATE ROLE tg_reader LOGIN" \
    -c "CREATE ROLE tg_pw LOGIN PASSWORD 'tg-right-password'" ||
    { echo "history_pg: FAILED: creating the test's roles"; exit 1; }
echo "history_pg: $("$pgbin/postgres" --version) up as $server_user on $sock port $port in" \
    "$(awk -v a="$start" -v b="$up" 'BEGIN { printf "%.2f", b - a }') s"

export TG_PG_URI="postgresql:///postgres?host=$sock&port=$port&user=tg_test"
export TG_PG_READER=tg_reader TG_PG_PW_ROLE=tg_pw TG_PG_PW=tg-right-password
"$bin"
rc=$?
[ "$rc" = 0 ] || { echo "history_pg: test_store_pg exited $rc; the server's log ends:"; tail -20 "$tmp/server.log"; }

# The commands on the same server, as a team's CI runners use it: a
# password in the URI (masked in every message), ten runners adding at
# once, a check judged against what they added. Needs the shared traces.
cli() {
    local tg=${TG_BINARY:-} traces=${TG_SHARED_TRACES:-} f=0
    if [ -z "$tg" ] || [ ! -x "$tg" ] || [ ! -d "$traces/h200-nsys" ]; then
        echo "history_pg: the commands' part skipped: no TG_BINARY or shared traces"
        return 0
    fi
    psql_admin -c "CREATE DATABASE tg_cli OWNER tg_pw" || return 1
    local uri="postgresql://tg_pw:tg-right-password@/tg_cli?host=$sock&port=$port" d=$traces/h200-nsys pids=()
    for n in $(seq 1 10); do
        "$tg" history add --db "$uri" --label "n$n" --time "2026-11-$(printf %02d "$n")T03:00:00Z" \
            "$d/drv_train_run$(( (n - 1) % 3 + 1 )).sqlite" >"$tmp/add$n.out" 2>&1 &
        pids+=($!)
    done
    for n in $(seq 1 10); do
        wait "${pids[$((n - 1))]}" || { echo "history_pg: FAILED: history add n$n:"; cat "$tmp/add$n.out"; f=1; }
    done
    local runs
    runs=$("$tg" history show --db "$uri" --format json | jq '.runs')
    [ "$runs" = 10 ] || { echo "history_pg: FAILED: ten runners added at once, the history holds $runs"; f=1; }
    "$tg" check --history "$uri" --no-record "$d/drv_train_run2.sqlite" >"$tmp/check.out" 2>&1 ||
        { echo "history_pg: FAILED: check --history on PostgreSQL:"; cat "$tmp/check.out"; f=1; }
    grep -q "judged against 10 runs of workload" "$tmp/check.out" ||
        { echo "history_pg: FAILED: check --history does not say what judged it"; f=1; }
    if grep -q "tg-right-password" "$tmp/check.out" "$tmp"/add*.out; then
        echo "history_pg: FAILED: a message shows the password"; f=1
    fi
    grep -q "tg_pw:\*\*\*@" "$tmp/check.out" || { echo "history_pg: FAILED: the note does not mask the password"; f=1; }
    "$tg" history add --db "$uri" --label n1 "$d/drv_train_run1.sqlite" >/dev/null 2>"$tmp/dup.err"
    [ $? = 2 ] && grep -q "already holds a run labelled n1" "$tmp/dup.err" ||
        { echo "history_pg: FAILED: a label twice"; cat "$tmp/dup.err"; f=1; }
    [ $f = 0 ] && echo "history_pg: the commands on PostgreSQL: 10 runners at once, check --history, masked password: ok"
    return $f
}
if [ "$rc" = 0 ]; then cli || rc=1; fi
exit "$rc"
