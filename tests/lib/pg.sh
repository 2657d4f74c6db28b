#!/usr/bin/env bash
# pg.sh - a throw-away PostgreSQL server for the tests (docs/testing.md
# "PostgreSQL"): initdb + pg_ctl from the Debian bin folder in a temporary
# folder, on a free loopback port, as the `postgres` system user when run
# as root; password authentication over TCP with the password in a
# PGPASSFILE (as users are told to do), never on a command line.
#
#   pg.sh start            starts one; prints its folder, then the URI of
#                          its `postgres` database; exit 77 (skip) with a
#                          notice on stderr when PostgreSQL is not installed
#   pg.sh createdb DIR NAME  a new empty database; prints its URI
#   pg.sh stop DIR         stops it and removes its folder
#
# Sourced (. pg.sh), it defines pg_start (sets PG_DIR, PG_URI and exports
# PGPASSFILE; returns 77 when not installed), pg_createdb NAME (prints the
# URI), pg_pause/pg_resume (stopped and started again on its port),
# pg_stop and pg_e2e_start OPTIPIPE (skips or fails the test when there is
# no server); e2e tests `trap pg_stop EXIT`.
# OPTIPIPE_PG_BIN names the bin folder (default: the newest
# /usr/lib/postgresql/*/bin). OPTIPIPE_PG_DURABLE=1 keeps fsync on (the
# benchmarks); tests run with fsync off (nothing survives them anyway).

pg_bin() {
    local d
    if [ -n "${OPTIPIPE_PG_BIN:-}" ]; then
        echo "$OPTIPIPE_PG_BIN"
        return
    fi
    for d in $(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V -r); do
        [ -x "$d/initdb" ] && [ -x "$d/pg_ctl" ] && { echo "$d"; return; }
    done
}

# Runs "$@" as the server's owner (postgres when we are root).
pg_as() {
    if [ "$(id -u)" = 0 ]; then
        runuser -u postgres -- "$@"
    else
        "$@"
    fi
}

pg_free_port() {
    python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# pg_ctl_start DIR: starts DIR's server on the port in DIR/port and
# waits until it answers; 0, or 1 (its logs in DIR).
pg_ctl_start() {
    local dir=$1 bin fsync=off
    bin=$(pg_bin)
    [ "${OPTIPIPE_PG_DURABLE:-0}" = 1 ] && fsync=on
    pg_as "$bin/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 120 \
        -o "-c listen_addresses=127.0.0.1 -p $(cat "$dir/port") -k $dir \
            -c fsync=$fsync -c synchronous_commit=$fsync \
            -c full_page_writes=$fsync -c max_connections=64" \
        start >"$dir/pg_ctl.log" 2>&1 &&
        "$bin/pg_isready" -q -h 127.0.0.1 -p "$(cat "$dir/port")" -t 120
}

# pg_start_in DIR: initdb and start; 0, or 1 with the log on stderr.
pg_start_in() {
    local dir=$1 bin tries
    bin=$(pg_bin)
    umask 077
    printf 'optipipe-test-%s\n' "$$-$RANDOM" >"$dir/pw"
    chmod 644 "$dir/pw" # initdb reads it as postgres; removed below
    pg_as "$bin/initdb" -D "$dir/data" -U optipipe --pwfile="$dir/pw" \
        --auth-local=trust --auth-host=scram-sha-256 -E UTF8 --locale=C.UTF-8 \
        >"$dir/initdb.log" 2>&1 || { cat "$dir/initdb.log" >&2; return 1; }
    for tries in 1 2 3 4 5; do # a port taken between the probe and the bind
        echo "$(pg_free_port)" >"$dir/port"
        pg_ctl_start "$dir" && break
        [ "$tries" = 5 ] && { cat "$dir/pg_ctl.log" "$dir/server.log" >&2; return 1; }
    done
    # the password for the clients: a PGPASSFILE of our own (0600)
    printf '127.0.0.1:%s:*:optipipe:%s\n' "$(cat "$dir/port")" "$(cat "$dir/pw")" >"$dir/pgpass"
    chmod 600 "$dir/pgpass"
    rm -f "$dir/pw"
}

pg_uri_of() { # pg_uri_of DIR DB
    printf 'postgresql://optipipe@127.0.0.1:%s/%s\n' "$(cat "$1/port")" "$2"
}

pg_start() {
    local bin
    bin=$(pg_bin)
    if [ -z "$bin" ] || ! command -v python3 >/dev/null; then
        echo "SKIP: PostgreSQL is not installed (apt-get install postgresql; scripts/setup.sh does)" >&2
        return 77
    fi
    PG_DIR=$(mktemp -d /tmp/optipipe-pg.XXXXXX) || return 1
    chmod 711 "$PG_DIR"
    [ "$(id -u)" = 0 ] && chown postgres "$PG_DIR"
    if ! pg_start_in "$PG_DIR"; then
        pg_stop
        return 1
    fi
    export PGPASSFILE=$PG_DIR/pgpass
    PG_URI=$(pg_uri_of "$PG_DIR" postgres)
}

pg_createdb() { # pg_createdb NAME: prints its URI
    PGPASSFILE=$PG_DIR/pgpass "$(pg_bin)/createdb" -h 127.0.0.1 \
        -p "$(cat "$PG_DIR/port")" -U optipipe "$1" || return 1
    pg_uri_of "$PG_DIR" "$1"
}

# pg_pause / pg_resume: the server stopped, its folder and port kept, and
# started again (a store that goes away and comes back).
pg_pause() {
    pg_as "$(pg_bin)/pg_ctl" -D "$PG_DIR/data" -m fast -w -t 120 stop >/dev/null 2>&1
}
pg_resume() {
    pg_ctl_start "$PG_DIR" || { cat "$PG_DIR/pg_ctl.log" "$PG_DIR/server.log" >&2; return 1; }
}

# pg_e2e_start OPTIPIPE: what an e2e test over PostgreSQL does first: exit
# 77 (skip, saying why) when OPTIPIPE has no PostgreSQL support or the
# server is not installed, 1 when it did not start, else pg_start's state.
pg_e2e_start() {
    if "$1" history --history postgresql://nobody@127.0.0.1:1/x jobs 2>&1 |
        grep -q "not compiled in"; then
        echo "SKIP: this optipipe is built without PostgreSQL support (-DOP_POSTGRES=OFF)"
        exit 77
    fi
    pg_start
    case $? in
    0) ;;
    77) exit 77 ;;
    *) echo "FAIL: the PostgreSQL test server did not start"; exit 1 ;;
    esac
}

pg_stop() {
    [ -n "${PG_DIR:-}" ] && [ -d "$PG_DIR" ] || return 0
    if [ -f "$PG_DIR/data/postmaster.pid" ]; then
        pg_as "$(pg_bin)/pg_ctl" -D "$PG_DIR/data" -m fast -w -t 120 stop >/dev/null 2>&1
    fi
    rm -rf "$PG_DIR"
    PG_DIR=
}

if [ "${BASH_SOURCE[0]}" = "$0" ]; then
    set -u
    case "${1:-}" in
    start)
        pg_start || exit $?
        printf '%s\n%s\n' "$PG_DIR" "$PG_URI"
        ;;
    createdb)
        PG_DIR=$2
        pg_createdb "$3"
        ;;
    stop)
        PG_DIR=$2
        pg_stop
        ;;
    *)
        echo "usage: pg.sh start | createdb DIR NAME | stop DIR" >&2
        exit 2
        ;;
    esac
fi
