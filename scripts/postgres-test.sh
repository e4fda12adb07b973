#!/usr/bin/env bash
# A throwaway PostgreSQL cluster on loopback for the gateway's store tests.
#
#   eval "$(bash scripts/postgres-test.sh start)"   # prints: export SEALEDPUSH_TEST_POSTGRES_URL=postgres://…
#   bash scripts/postgres-test.sh running           # exits 0 when the cluster is up
#   bash scripts/postgres-test.sh restart [SECONDS] # stops the server (fast: sessions cut), waits SECONDS (default
#                                                   # 0), starts it again; the data stays (the restart tests use it)
#   bash scripts/postgres-test.sh stop              # stops the cluster and deletes its directory
#
# Needs Debian's `postgresql` package (installed when missing). The cluster runs as the unprivileged `postgres`
# user in a temporary directory, listens on 127.0.0.1 only (port SEALEDPUSH_TEST_POSTGRES_PORT, default 5433) with
# its socket in the same directory, trusts local connections (loopback, test data only), and holds one database,
# `sealedpush_test`. fsync is off: the cluster is disposable and the tests exercise SQL semantics, not the disk.
# State lives in SEALEDPUSH_TEST_POSTGRES_DIR (default /tmp/sealedpush-postgres-test): the data directory and its log.
set -euo pipefail
port="${SEALEDPUSH_TEST_POSTGRES_PORT:-5433}"
state="${SEALEDPUSH_TEST_POSTGRES_DIR:-/tmp/sealedpush-postgres-test}"
bin=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1 || true)
# From / : the postgres user may not be allowed into the caller's directory (a clone under /root, say).
as_postgres() { (cd / && if [ "$(id -un)" = postgres ]; then "$@"; else runuser -u postgres -- "$@"; fi); }
url="postgres://postgres@127.0.0.1:${port}/sealedpush_test"
# The server is a daemon: it must not inherit the caller's open files (a test process's sockets or the pipe its
# process monitor waits on would stay open as long as the server runs).
server_start() {
    local fd
    for fd in $(ls /proc/$$/fd); do
        [ "$fd" -gt 2 ] && eval "exec $fd>&-" 2>/dev/null || true
    done
    as_postgres "$bin/pg_ctl" -D "$state/data" -l "$state/server.log" -w -t 30 \
        -o "-k $state -h 127.0.0.1 -p $port -c fsync=off -c full_page_writes=off" start >&2
}

case "${1:-}" in
start)
    if [ -z "$bin" ] || ! id postgres >/dev/null 2>&1; then
        echo "==> installing postgresql (Debian)" >&2
        sudo=""
        [ "$(id -u)" = 0 ] || sudo="sudo"
        $sudo env DEBIAN_FRONTEND=noninteractive apt-get update -qq >&2
        $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql >/dev/null
        bin=$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -1)
    fi
    if [ -f "$state/data/postmaster.pid" ] && as_postgres "$bin/pg_ctl" -D "$state/data" status >/dev/null 2>&1; then
        echo "==> PostgreSQL test cluster already running in $state" >&2
    else
        rm -rf "$state"
        mkdir -p "$state"
        chown postgres: "$state"
        chmod 700 "$state"
        as_postgres "$bin/initdb" -D "$state/data" -U postgres --auth=trust --encoding=UTF8 --no-locale >/dev/null
        server_start
        as_postgres "$bin/createdb" -h 127.0.0.1 -p "$port" -U postgres sealedpush_test
    fi
    echo "export SEALEDPUSH_TEST_POSTGRES_URL=$url"
    ;;
running)
    [ -n "$bin" ] && [ -f "$state/data/postmaster.pid" ] && as_postgres "$bin/pg_ctl" -D "$state/data" status >/dev/null 2>&1
    ;;
restart)
    down="${2:-0}"
    if [ -z "$bin" ] || [ ! -f "$state/data/postmaster.pid" ]; then
        echo "postgres-test.sh: no cluster running in $state" >&2
        exit 1
    fi
    as_postgres "$bin/pg_ctl" -D "$state/data" -m fast -w -t 30 stop >&2
    sleep "$down"
    server_start
    ;;
stop)
    if [ -n "$bin" ] && [ -f "$state/data/postmaster.pid" ]; then
        as_postgres "$bin/pg_ctl" -D "$state/data" -m fast -w -t 30 stop >&2 || true
    fi
    rm -rf "$state"
    ;;
*)
    echo "usage: $0 start|running|restart [seconds-down]|stop" >&2
    exit 2
    ;;
esac
