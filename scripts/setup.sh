# scripts/setup.sh - sourced by scripts/demo and scripts/test: makes sure the
# Debian packages are there (installing them when run as root, otherwise
# printing the exact apt-get line), then configures and builds into a
# build directory.

OP_PACKAGES="cmake make gcc clang pkg-config python3 liblua5.4-dev libcurl4-openssl-dev \
libcjson-dev libcmocka-dev liblz4-dev libzstd-dev libsnappy-dev zlib1g-dev libzip-dev libsqlite3-dev libmicrohttpd-dev curl openssl"

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

# op_build DIR [cmake args...]: configure and build quietly; the log is
# shown only when something fails.
op_build() {
    local dir=$1 log
    shift
    mkdir -p "$dir"
    log="$dir/build.log"
    if ! { cmake -S "$OP_ROOT" -B "$dir" "$@" && cmake --build "$dir" -j "$(nproc)"; } >"$log" 2>&1; then
        cat "$log" >&2
        echo "setup: build in $dir failed (log: $log)" >&2
        exit 1
    fi
    echo "setup: built $dir"
}

OP_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
export OP_ROOT
