#!/usr/bin/env bash
# counters_app_test.sh - `kptprof record --counters` on a plain CUDA program
# (tests/gpu/collector_app.cu --big: kernels on three streams and the legacy
# stream, nested NVTX ranges, a CUDA graph, memcpy/memset, an exec'd child
# and a forked one, then a 64 MiB read and a 256 MiB copy) profiles its
# kernels, the exec'd child's included (the two processes hand the GPU's
# counters over), and its values agree with Nsight Compute's on the same
# kernels: per kernel name, the mean over launches of sm__inst_executed.sum
# equal, and of dram__bytes_read.sum + dram__bytes_write.sum within 2% for
# the kernels that move 1 MiB or more (a few KiB of DRAM traffic depend on
# what L2 holds) unless ncu is the further of the two from the bytes the
# kernel moves; the 64 MiB read moves 64 MiB within 2% and the 256 MiB
# copy moves 512 MiB, less at most what L2 holds. Graph kernel nodes are not profiled by the
# collector (docs/counters.md) and are left out of the comparison; they
# must not appear under another kernel's name either. Env: KPTPROF, APP.
# Exit 77 without a GPU or ncu.
set -u
fail() { echo "FAIL: $*"; exit 1; }
nvidia-smi -L >/dev/null 2>&1 || { echo "no GPU: skipped"; exit 77; }
NCU=${NCU:-$(command -v ncu || echo /usr/local/cuda/bin/ncu)}
[ -x "$NCU" ] || { echo "no ncu: skipped"; exit 77; }
T=$(mktemp -d "${TMPDIR:-/tmp}/kptcapp.XXXXXX")
trap 'rm -rf "$T"' EXIT
M=dram__bytes_read.sum,dram__bytes_write.sum,sm__inst_executed.sum

KPTPROF_NO_CALIBRATE=1 "$KPTPROF" record -o "$T/app.kpt" --counters=$M -- "$APP" --big 2>"$T/err"; rc=$?
cat "$T/err"
if [ $rc -ne 0 ] && grep -q "insufficient privileges" "$T/err"; then
	echo "SKIP: profiling is restricted to admin users on this machine"; exit 77
fi
[ $rc -eq 0 ] || fail "record --counters exit $rc"
grep -q "^kptprof: counters: 0 kernels" "$T/err" && fail "0 kernels profiled and exit 0"
grep -q "could not be read" "$T/err" && fail "a process lost its counters at exit"
"$KPTPROF" report "$T/app.kpt" --format json >"$T/report.json" || fail "report --format json"

# --no-fork: Nsight Compute spins in a child forked without exec (it has no
# kernels; kptprof's run above keeps it)
timeout 240 "$NCU" --csv --print-units base --print-kernel-base mangled --target-processes all --metrics $M \
	"$APP" --no-fork --big >"$T/ncu.csv" 2>"$T/ncu.err" || { cat "$T/ncu.err"; fail "ncu exit $?"; }

python3 - "$T/report.json" "$T/ncu.csv" <<'PY'
import csv, json, sys
from collections import defaultdict
rep = json.load(open(sys.argv[1]))
kpt = {k["mangled"]: k["metrics"] for k in rep.get("kernel_counters", [])}
acc = defaultdict(lambda: defaultdict(list))
lines = [l for l in open(sys.argv[2]) if l.startswith('"')]
for row in csv.DictReader(lines):
    try:
        v = float(row["Metric Value"].replace(",", ""))
    except ValueError:
        continue
    acc[row["Kernel Name"]][row["Metric Name"]].append(v)
ncu = {k: {m: sum(v) / len(v) for m, v in ms.items()} for k, ms in acc.items()}
print("kptprof kernels with counters:", sorted(kpt))
print("ncu kernels:", sorted(ncu))
graph = {k for k in kpt if "graph" in k}
bad = []
if graph:
    bad.append("graph kernel nodes have counters: %s" % sorted(graph))
want = {k for k in ncu if "kpt_t_" in k and "graph" not in k}
missing = want - set(kpt)
if missing:
    bad.append("kernels ncu profiled but kptprof did not: %s" % sorted(missing))
for k in sorted(want & set(kpt)):
    a, b = kpt[k], ncu[k]
    da = a["dram__bytes_read.sum"] + a["dram__bytes_write.sum"]
    db = b["dram__bytes_read.sum"] + b["dram__bytes_write.sum"]
    ia, ib = a["sm__inst_executed.sum"], b["sm__inst_executed.sum"]
    print("%-40s dram %12.0f vs ncu %12.0f   inst %12.0f vs ncu %12.0f" % (k[:40], da, db, ia, ib))
    # what the big kernels physically move: the read 64 MiB; the copy reads
    # 256 MiB and writes 256 MiB, of which up to L2's size (50 MB on an
    # H100) may still sit in L2, dirty, when it ends
    # (reads only: the writes under the read kernel are the copy's dirty
    # lines leaving L2, 1.6 MB of them on an H200 of 2026-11-28, ncu 2.3 MB)
    phys = 2**26 if "kpt_t_touch" in k else 2**29 if "kpt_t_stream" in k else None
    rd = a["dram__bytes_read.sum"]
    if phys == 2**26 and abs(rd - phys) > 0.02 * phys:
        bad.append("%s: DRAM bytes read %.0f, the read moves %d" % (k, rd, phys))
    if phys == 2**29 and not 0.88 * phys <= da <= 1.02 * phys:
        bad.append("%s: DRAM bytes %.0f, the copy moves %d" % (k, da, phys))
    # within 2% of ncu; where ncu is further from what the kernel moves than
    # kptprof (on the H100 ncu counted the 64 MiB read 3-4.5% high, with and
    # without its cache flush, kptprof 0.8%), the physical check above rules
    if max(da, db) >= 1 << 20 and abs(da - db) > 0.02 * max(da, db) and \
            not (phys == 2**26 and abs(da - phys) < abs(db - phys)):
        bad.append("%s: DRAM bytes %.0f, ncu %.0f" % (k, da, db))
    if ia != ib:
        bad.append("%s: instructions %.0f, ncu %.0f" % (k, ia, ib))
if not want:
    bad.append("ncu profiled none of the kpt_t_ kernels")
for k in ("kpt_t_child", "kpt_t_stream", "kpt_t_touch"):
    if not any(k in m for m in kpt):
        bad.append("no counters for %s" % k)
for b in bad:
    print("FAIL:", b)
sys.exit(1 if bad else 0)
PY
[ $? -eq 0 ] || exit 1
echo ok
