# shellcheck shell=bash
# tests/e2e/lib/wait.sh - waiting on events, never on time (docs/testing.md
# "No timing in tests"); sourced by lib/check.sh and tests/fetch/lib.sh.
# The hook helpers need $tmp.

# wait_until CMD...: runs CMD every 0.05 s until it succeeds, for a state
# that stays once reached (a file written, an analysis ended, a hook
# passed). Bounded by OP_TEST_WAIT_S seconds (default 120): a safety net
# that ends a hung test with a failure, never a synchronisation. 1 when
# the bound ran out. Never wait this way for a state that passes (a
# process "still running"): pause it at a test hook instead.
wait_until() {
    local end=$((SECONDS + ${OP_TEST_WAIT_S:-120}))
    until "$@"; do
        [ "$SECONDS" -lt "$end" ] || return 1
        sleep 0.05
    done
}

# Test hooks (core/testhook.h, docs/testing.md): named points of the code
# where optipipe, its server and workers publish an event and may pause.
#   hooks_on             a new empty $tmp/hooks, exported as
#                        OPTIPIPE_TEST_HOOKS
#   hook_pause POINT     the processes that reach POINT from now on wait
#                        there until hook_release POINT
#   hook_wait POINT      waits (wait_until) until POINT was reached; prints
#                        the pid of the process that reached it last
#   hook_release POINT   lets the paused ones go on
hooks_on() { # a fresh, empty folder each time
    rm -rf "$tmp/hooks" && mkdir -m 700 "$tmp/hooks" &&
        export OPTIPIPE_TEST_HOOKS=$tmp/hooks
}
hook_pause() { : >"$OPTIPIPE_TEST_HOOKS/$1.pause"; }
hook_wait() { wait_until test -s "$OPTIPIPE_TEST_HOOKS/$1" && cat "$OPTIPIPE_TEST_HOOKS/$1"; }
hook_release() { : >"$OPTIPIPE_TEST_HOOKS/$1.release"; }
