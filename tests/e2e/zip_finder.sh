#!/usr/bin/env bash
# A .zip written the way macOS Finder (Archive Utility) writes one is read
# as unzip(1) reads it (core/unzip.c): members with data descriptors whose
# local header carries the CRC but zero sizes (libzip's consistency check
# calls that "Zip archive inconsistent"), a folder member, and Finder's
# metadata (__MACOSX/._name AppleDouble files, .DS_Store), which are not
# unpacked. The caps still hold on such an archive: a member that inflates
# past the ratio cap is refused. The zips are written here (python3) from
# a fixture, and from the real Databricks rollover folder under REAL_DIR
# (skipped with a notice when absent).
# Usage: zip_finder.sh OPTIPIPE SOURCE_DIR REAL_DIR
set -u
bin=$1
src=$2
real=$3/spark/platforms/databricks_example_1
. "$(dirname "$0")/lib/check.sh"

mkdir -p "$tmp/t"
export TMPDIR=$tmp/t

# finder_zip ZIP PREFIX FILE...: the files under PREFIX/ as Finder writes
# them: streamed (data descriptors), the CRC copied into the local header,
# plus a __MACOSX/PREFIX/._name for each and a PREFIX/.DS_Store.
finder_zip() {
    python3 - "$@" <<'PY'
import io, os, struct, sys, zipfile
out, pre, files = sys.argv[1], sys.argv[2], sys.argv[3:]
class Stream(io.RawIOBase):          # not seekable: zipfile then writes
    def __init__(s, f): s.f = f      # data descriptors (flag bit 3)
    def writable(s): return True
    def write(s, b): return s.f.write(b)
with open(out, "wb") as raw:
    z = zipfile.ZipFile(Stream(raw), "w", zipfile.ZIP_DEFLATED)
    z.writestr(zipfile.ZipInfo(pre + "/"), b"")
    for f in files:
        name = os.path.basename(f)
        with open(f, "rb") as h:
            z.writestr(pre + "/" + name, h.read())
        z.writestr("__MACOSX/" + pre + "/._" + name,
                   b"\x00\x05\x16\x07\x00\x02\x00\x00Mac OS X        " + b"\0" * 60)
    z.writestr(pre + "/.DS_Store", b"\0\0\0\1Bud1" + b"\0" * 100)
    z.close()
b = bytearray(open(out, "rb").read())
cd = {}
j = b.find(b"PK\x01\x02")
while j >= 0:
    n, = struct.unpack_from("<H", b, j + 28)
    cd[bytes(b[j + 46:j + 46 + n])] = struct.unpack_from("<I", b, j + 16)[0]
    j = b.find(b"PK\x01\x02", j + 4)
i = b.find(b"PK\x03\x04")
while i >= 0:
    flags, = struct.unpack_from("<H", b, i + 6)
    n, = struct.unpack_from("<H", b, i + 26)
    name = bytes(b[i + 30:i + 30 + n])
    if flags & 8 and not name.endswith(b"/"):
        struct.pack_into("<I", b, i + 14, cd[name])   # CRC, sizes stay 0
    i = b.find(b"PK\x03\x04", i + 4)
open(out, "wb").write(b)
PY
}
run() { "$bin" "$@" >"$tmp/out" 2>"$tmp/err"; rc=$?; }
no_tmp_left() { [ -z "$(ls -A "$tmp/t")" ]; }

# --- a fixture log, zipped by "Finder" ---------------------------------------
finder_zip "$tmp/logs.zip" logs "$src/fixtures/spark/healthy.zstd"
check "the test zip is one unzip reads" unzip -tq "$tmp/logs.zip"
run analyze "$tmp/logs.zip"
check "Finder zip: exit 0" test "$rc" = 0
check "Finder zip: no 'inconsistent' refusal" sh -c "! grep -qi inconsistent '$tmp/err'"
check "Finder zip: one input, one run" has "$tmp/out" "1 input, 1 run"
"$bin" analyze "$src/fixtures/spark/healthy.zstd" >"$tmp/plain.txt" 2>/dev/null
check "Finder zip: the same findings as the log itself" \
    cmp -s <(sed 1d "$tmp/plain.txt") <(sed 1d "$tmp/out")
check "Finder zip: the metadata members are no input and no error" \
    sh -c "! grep -q -e '__MACOSX' -e '\\._' -e DS_Store '$tmp/err'"
check "Finder zip: the temporary folder is removed" no_tmp_left

# --- still bounded: a member that claims 0 bytes and inflates past the cap ---
python3 -c 'import sys; sys.stdout.buffer.write(b"{\"Event\":\"x\"}\n" * 800000)' >"$tmp/big.log"
finder_zip "$tmp/bomb.zip" logs "$tmp/big.log"
run analyze "$tmp/bomb.zip"
check "Finder-style bomb: refused by the ratio cap" has "$tmp/err" "member 'logs/big.log' not read"
check "Finder-style bomb: nothing left behind" no_tmp_left

# --- the real Databricks rollover folder, zipped by "Finder" -----------------
if [ -d "$real" ]; then
    finder_zip "$tmp/db.zip" databricks_example_1 "$real"/*
    run normalize --format json "$tmp/db.zip"
    check "real Databricks folder, Finder zip: exit 0" test "$rc" = 0
    check "real Databricks folder, Finder zip: one stitched run of 72 jobs" \
        python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); r=d["runs"]; sys.exit(not(len(r)==1 and r[0]["metrics"]["jobs"]==72))' "$tmp/out"
else
    echo "notice: $real absent: the real Finder zip case is skipped"
fi
finish
