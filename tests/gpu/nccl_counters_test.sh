#!/usr/bin/env bash
# nccl_counters_test.sh - `kptprof record --counters -- torchrun
# --nproc-per-node 2` of a real NCCL job (nvtx_nccl_steps.py, one GPU per
# rank: three element-wise kernels and four collectives a step): the
# counters pass profiles every kernel of both ranks, the NCCL kernels (which
# wait on the other rank's GPU while profiled) as well as the compute ones,
# and the job still ends. Each rank must have counters with a positive
# sm__inst_executed.sum for at least one NCCL kernel and one other kernel,
# and as many kernels with counters as the timing run recorded.
# Env: KPTPROF, SCRIPT, CHECK (counters_check). Exit 77 with fewer than 2
# GPUs, no PyTorch with NCCL, or profiling restricted to admin users.
set -u
fail() { echo "FAIL: $*"; exit 1; }
. "$(dirname "$0")/need_two_gpus.sh"
T=$(mktemp -d "${TMPDIR:-/tmp}/kptncclc.XXXXXX")
trap 'rm -rf "$T"' EXIT
STEPS=5
M=sm__inst_executed.sum,dram__bytes_read.sum
KPTPROF_NO_CALIBRATE=1 timeout 240 "$KPTPROF" record -o "$T/c.kpt" --counters=$M -- python3 -m torch.distributed.run \
	--standalone --nproc-per-node 2 "$SCRIPT" $STEPS >"$T/out" 2>"$T/err"; rc=$?
cat "$T/err"
if [ $rc -ne 0 ] && grep -q "insufficient privileges" "$T/err"; then
	echo "SKIP: profiling is restricted to admin users on this machine"; exit 77
fi
[ $rc -eq 0 ] || { tail -20 "$T/out"; fail "record --counters -- torchrun exit $rc"; }
# the timing run and the counters pass each ran the job to its end
[ "$(grep -c "steps $STEPS done" "$T/out")" -ge 2 ] || { tail -20 "$T/out"; fail "the ranks did not finish both runs"; }
nk=$(sed -n 's/^kptprof: counters: \([0-9]*\) kernels.*/\1/p' "$T/err")
nt=$(sed -n 's/^kptprof: recorded \([0-9]*\) kernels.*/\1/p' "$T/err")
echo "timed kernels $nt, kernels with counters $nk"
[ -n "$nk" ] && [ -n "$nt" ] && [ "$nk" -eq "$nt" ] || fail "counters for ${nk:-?} kernels, timed ${nt:-?}"
"$CHECK" --list "$T/c.kpt" >"$T/list" || fail "counters_check --list"
python3 - "$T/list" <<'PY'
import collections, sys
# rank -> kind (nccl / other) -> kernels with a positive instruction count
got = collections.defaultdict(lambda: collections.defaultdict(set))
rows = 0
for line in open(sys.argv[1]):
    f = line.rstrip("\n").split("\t")
    if len(f) != 5:
        continue
    rows += 1
    rank, kernel, metric, value = f[0], f[2], f[3], float(f[4])
    if metric == "sm__inst_executed.sum" and value > 0:
        got[rank]["nccl" if "nccl" in kernel.lower() else "other"].add(kernel)
print("counter rows:", rows)
bad = 0
for rank in ("0", "1"):
    for kind in ("nccl", "other"):
        ks = sorted(got[rank][kind])
        print("rank %s %s kernels with counters: %d %s" % (rank, kind, len(ks), [k[:50] for k in ks[:4]]))
        if not ks:
            print("FAIL: rank %s has no %s kernel with a positive sm__inst_executed.sum" % (rank, kind))
            bad = 1
sys.exit(bad)
PY
[ $? -eq 0 ] || exit 1
echo "nccl_counters_test: ok"
