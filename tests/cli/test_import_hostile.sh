#!/usr/bin/env bash
# test_import_hostile.sh - hostile inputs to `kptprof import` and a hostile
# .kpt table of contents (issue 34, items 2, 4, 6, 8, 9, 12, 13). Each must
# end within 60 s under a 1 GB address-space and a 1 GB file-size limit,
# with one line and exit 2 where refused, and write nothing beside its
# input. The nsys files are made here with python3's sqlite3.
. "$(dirname "$0")/cli_lib.sh"
need_python
D=$KPT_SRC/tests/data/import

LIMIT_KB=$((1024 * 1024))
# AddressSanitizer reserves terabytes of shadow address space, which a
# virtual-memory limit forbids (the plain build's run keeps the bound).
grep -q __asan_init "$KPTPROF" 2>/dev/null && LIMIT_KB=unlimited
# limited CMD...: run (see cli_lib.sh) under the limits; RC 124 on timeout.
limited() {
	(ulimit -v $LIMIT_KB -f $((1024 * 1024)) && exec timeout 60 "$@") </dev/null >"$T/out" 2>"$T/err"
	RC=$?
}
# refused WHAT FILE TEXT: import FILE is one line, exit 2, no output.
refused() {
	limited "$KPTPROF" import "$2" -o "$T/r.kpt"
	expect_error "$1" "$3"
	[ ! -e "$T/r.kpt" ] || fail "$1: a failed import left its output"
}

# nsys_small.sql into a database, then SQL of the test on top
mkdb() { # db, extra SQL
	python3 - "$D/nsys_small.sql" "$1" "$2" <<'PY'
import sqlite3, sys
c = sqlite3.connect(sys.argv[2])
c.executescript(open(sys.argv[1]).read())
c.executescript(sys.argv[3])
c.close()
PY
}
mkdb "$T/base.sqlite" "" || fail "cannot build the nsys test database"
run "$KPTPROF" import "$T/base.sqlite" -o "$T/base.kpt"
grep -q "built without SQLite" "$T/err" && skip "kptprof is built without SQLite"
expect_rc 0 "import nsys_small"

# ---- item 2: a view named like a table runs a query that never ends
mkdb "$T/view.sqlite" "DROP TABLE CUPTI_ACTIVITY_KIND_KERNEL;
CREATE VIEW CUPTI_ACTIVITY_KIND_KERNEL AS WITH RECURSIVE r(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM r)
  SELECT x AS start, x AS end, 0 AS deviceId, 0 AS streamId, 0 AS correlationId, 0 AS globalPid,
  1 AS mangledName, 1 AS gridX, 1 AS gridY, 1 AS gridZ, 1 AS blockX, 1 AS blockY, 1 AS blockZ,
  0 AS registersPerThread, 0 AS staticSharedMemory, 0 AS dynamicSharedMemory FROM r ORDER BY x DESC;" ||
	fail "cannot build the view"
refused "a view for a table" "$T/view.sqlite" "'CUPTI_ACTIVITY_KIND_KERNEL' is not a plain table"
# a generated column computes a 1 MB string per row
mkdb "$T/gen.sqlite" "DROP TABLE StringIds;
CREATE TABLE StringIds (id INTEGER PRIMARY KEY, value TEXT GENERATED ALWAYS AS (printf('%.*c', 1000000, 'x')));
WITH RECURSIVE r(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM r WHERE x < 100000) INSERT INTO StringIds (id) SELECT x FROM r;" ||
	fail "cannot build the generated column"
refused "a generated column" "$T/gen.sqlite" "table 'StringIds' has a generated column"
# a trigger in the file never runs (nothing is written) and the data imports
mkdb "$T/trig.sqlite" "CREATE TABLE log (x); CREATE TRIGGER t AFTER INSERT ON StringIds BEGIN INSERT INTO log VALUES (1); END;"
limited "$KPTPROF" import "$T/trig.sqlite" -o "$T/trig.kpt"
expect_rc 0 "an export with a trigger"

# ---- item 4: one GPU per kernel
mkdb "$T/gpus.sqlite" "WITH RECURSIVE r(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM r WHERE x < 100)
INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL (start, end, deviceId, contextId, streamId, correlationId, globalPid,
  demangledName, shortName, mangledName, registersPerThread, gridX, gridY, gridZ, blockX, blockY, blockZ,
  staticSharedMemory, dynamicSharedMemory, localMemoryPerThread, localMemoryTotal, gridId)
  SELECT x, x + 1, x, 1, 7, 0, 71168950272, 1, 2, 3, 32, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, x FROM r;"
refused "kernels on 100 GPUs" "$T/gpus.sqlite" "GPU work on more than 64 GPUs"

# ---- item 6: a locked export is an error, not an absent table
cp "$T/base.sqlite" "$T/lock.sqlite"
python3 - "$T/lock.sqlite" >"$T/lock.out" <<'PY' &
import sqlite3, sys, time
c = sqlite3.connect(sys.argv[1], isolation_level=None)
c.execute("BEGIN EXCLUSIVE")
c.execute("INSERT INTO StringIds VALUES (999, 'x')")
print("locked", flush=True)
time.sleep(60)
PY
LOCKER=$!
for _ in $(seq 100); do grep -q locked "$T/lock.out" && break; sleep 0.1; done
grep -q locked "$T/lock.out" || fail "the locking process did not start"
refused "a locked export" "$T/lock.sqlite" "database is locked"
kill "$LOCKER"
wait "$LOCKER" 2>/dev/null

# ---- item 12: nothing written beside the input, read-only inputs
mkdir "$T/ro"
mkdb "$T/ro/wal.sqlite" "PRAGMA journal_mode=WAL;" || fail "cannot build the WAL-mode export"
[ "$(od -An -tu1 -j18 -N2 "$T/ro/wal.sqlite" | tr -s ' ')" = " 2 2" ] || fail "the export is not in WAL mode"
chmod 444 "$T/ro/wal.sqlite"
chmod 555 "$T/ro"
limited "$KPTPROF" import "$T/ro/wal.sqlite" -o "$T/wal.kpt"
chmod 755 "$T/ro"
expect_rc 0 "a read-only WAL-mode export in a read-only folder"
[ "$(ls -A "$T/ro")" = wal.sqlite ] || fail "import wrote beside its input: $(ls -A "$T/ro")"
: >"$T/ro/wal.sqlite-wal"
refused "a WAL-mode export with its log" "$T/ro/wal.sqlite" "a write-ahead log ('-wal') lies beside it"
rm -f "$T/ro/wal.sqlite-wal"
limited "$KPTPROF" import "$T/base.sqlite" -o "$T/base2.kpt"
expect_rc 0 "import of a rollback-journal export"
[ -z "$(ls "$T"/base.sqlite-* 2>/dev/null)" ] || fail "import wrote beside its input: $(ls "$T"/base.sqlite-*)"

# ---- item 9: times that overflow, durations beyond a day
kin() { # ts, dur
	printf '{"traceEvents": [{"ph": "X", "cat": "kernel", "name": "k", "ts": %s, "dur": %s, "args": {"grid": [1,1,1], "block": [1,1,1]}}]}' "$1" "$2" >"$T/t.json"
}
kin 1 4600000000000000
refused "a 4.6e9-second kernel" "$T/t.json" "'dur' longer than a day"
kin 4600000000000000 1000
refused "ts near 2^62 ns" "$T/t.json" "'ts' out of range"
mkdb "$T/long.sqlite" "UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET end = start + 4600000000000000000 WHERE correlationId = 11;"
refused "an nsys kernel of 4.6e9 s" "$T/long.sqlite" "a kernel with start"

# ---- item 13: a FIFO is refused at once, not read
mkfifo "$T/fifo.json"
refused "a FIFO" "$T/fifo.json" "not a regular file"

# ---- item 8: a table of contents that names one section 2,000 times
python3 - "$KPT_SRC/tests/data/torch_small.kpt" "$T/toc.kpt" <<'PY' || fail "cannot build the repeated TOC"
import struct, sys
d = bytearray(open(sys.argv[1], "rb").read())
toc_off, toc_n = struct.unpack_from("<QI", d, 16)
toc = [bytes(d[toc_off + 48 * i:toc_off + 48 * (i + 1)]) for i in range(toc_n)]
big = max(toc, key=lambda e: struct.unpack_from("<Q", e, 24)[0])
out = d[:toc_off] + b"".join(toc) + big * 2000
struct.pack_into("<I", out, 24, toc_n + 2000)
struct.pack_into("<Q", out, 32, len(out))
open(sys.argv[2], "wb").write(out)
PY
limited "$KPTPROF" report "$T/toc.kpt"
expect_error "a repeated TOC entry" "sections overlap at offset"
# 8 entries of their own bytes, each promising 64 MiB of strings
python3 - "$KPT_SRC/tests/data/torch_small.kpt" "$T/budget.kpt" <<'PY' || fail "cannot build the large TOC"
import struct, sys
d = bytearray(open(sys.argv[1], "rb").read())
toc_off, toc_n = struct.unpack_from("<QI", d, 16)
toc = b"".join(bytes(d[toc_off + 48 * i:toc_off + 48 * (i + 1)]) for i in range(toc_n))
# 16-byte slices past the file's own sections, which the TOC then names
end = max(o + s for o, s in (struct.unpack_from("<QQ", toc, 48 * i + 8) for i in range(toc_n)))
out = d[:end] + bytes(16 * 8)
extra = b"".join(struct.pack("<IIQQQQQ", 2, 1, end + 16 * i, 16, 64 << 20, 65536, 0) for i in range(8))
toc_at = len(out)
out += toc + extra
struct.pack_into("<QI", out, 16, toc_at, toc_n + 8)
struct.pack_into("<Q", out, 32, len(out))
open(sys.argv[2], "wb").write(out)
PY
limited "$KPTPROF" report "$T/budget.kpt"
expect_error "a TOC promising 512 MiB" "its table of contents promises"
# a gzip bomb: 300 KB that inflate to 300 MiB of '[' (a trace never
# grows that much when compressed: at most 256 times, so at most 256 MiB
# written to TMPDIR for an input this small)
python3 - "$T/bomb.json.gz" <<'PY' || fail "cannot write the gzip bomb"
import gzip, sys
with gzip.open(sys.argv[1], "wb", compresslevel=9) as f:
    block = b"[" * (1 << 20)
    for _ in range(300):
        f.write(block)
PY
refused "a gzip bomb" "$T/bomb.json.gz" "MiB once decompressed"
echo "ok"
