# scripts/setup.sh - sourced by scripts/demo and scripts/test: makes sure the
# Debian packages are there (installing them when run as root, otherwise
# printing the exact apt-get line), then configures and builds into a
# build directory.

OP_PACKAGES="cmake make gcc clang pkg-config python3 liblua5.4-dev libcurl4-openssl-dev \
libcjson-dev libcmocka-dev liblz4-dev libzstd-dev libsnappy-dev zlib1g-dev libzip-dev libsqlite3-dev libmicrohttpd-dev curl openssl \
libpq-dev postgresql"

op_missing_packages() {
    local p missing=""
    for p in $OP_PACKAGES "$@"; do
        if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed"; then
            missing="$missing $p"
        fi
    done
    echo "${missing# }"
}

# op_install_packages [extra packages...]
op_install_packages() {
    local missing
    missing=$(op_missing_packages "$@")
    [ -z "$missing" ] && return 0
    if [ "$(id -u)" = 0 ]; then
        echo "setup: installing Debian packages: $missing" >&2
        export DEBIAN_FRONTEND=noninteractive
        apt-get update -qq >&2 || true
        # shellcheck disable=SC2086
        apt-get install -y -qq --no-install-recommends $missing >&2
    else
        echo "setup: missing Debian packages. Run:" >&2
        echo "  sudo apt-get install -y $missing" >&2
        exit 1
    fi
}

# op_progress: reads the build's output, writes it to the log file $1 and
# says on stderr how far the build is, at every tenth of it (a first build
# takes minutes on a small machine: it must not look hung).
op_progress() {
    local log=$1 line pct shown=-1
    while IFS= read -r line; do
        printf '%s\n' "$line" >>"$log"
        case $line in
        "["*"%]"*)
            pct=${line#[}
            pct=${pct%%%]*}
            pct=${pct// /}
            case $pct in *[!0-9]* | "") continue ;; esac
            if [ $((pct / 10)) -gt "$shown" ]; then
                shown=$((pct / 10))
                echo "setup: building $(basename "$OP_BUILD_DIR"): $pct%" >&2
            fi
            ;;
        esac
    done
}

# op_build DIR [cmake args...]: configure and build, showing the progress;
# the log is shown only when something fails.
op_build() {
    local dir=$1 log
    shift
    mkdir -p "$dir"
    log="$dir/build.log"
    : >"$log"
    echo "setup: configuring $dir" >&2
    if ! cmake -S "$OP_ROOT" -B "$dir" "$@" >>"$log" 2>&1; then
        cat "$log" >&2
        echo "setup: configuring $dir failed (log: $log)" >&2
        exit 1
    fi
    OP_BUILD_DIR=$dir
    if ! { cmake --build "$dir" -j "$(nproc)" 2>&1; echo "op-build-status $?"; } |
        op_progress "$log" || ! grep -q '^op-build-status 0$' "$log"; then
        cat "$log" >&2
        echo "setup: build in $dir failed (log: $log)" >&2
        exit 1
    fi
    echo "setup: built $dir"
}

# op_build_main [cmake args...]: build/, the build scripts/demo runs and
# scripts/test tests. It is Release (-O3): the optimizer's flow analysis
# warns at -O3 where -O2 does not, so the suite's one gcc build is the one
# that both ships and proves Release builds clean (docs/quality.md "Build
# types"); sanitizer and fuzz builds keep the default RelWithDebInfo.
op_build_main() {
    op_build "$OP_ROOT/build" -DCMAKE_BUILD_TYPE=Release "$@"
}

OP_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
export OP_ROOT
