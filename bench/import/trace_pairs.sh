#!/usr/bin/env bash
# trace_pairs.sh - on a GPU machine: N interleaved before/after/before2
# traces (each a fresh process) of torch_trace_pairs.py, into $OUT/traces.tar
# (OUT: the result folder). Order per round: before, after, before2 with the
# first of the round rotated, so drift weighs on all three alike.
#   N=10 bench/import/trace_pairs.sh
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
N=${N:-10}
OUT=${OUT:?OUT must name the result folder}
T=$(mktemp -d)
nvidia-smi -L > "$T/gpu.txt"
nvidia-smi --query-gpu=name,driver_version,uuid,pci.bus_id --format=csv >> "$T/gpu.txt"
for i in $(seq 0 $((N - 1))); do
	cases=(before after before2)
	for j in 0 1 2; do
		c=${cases[$(( (i + j) % 3 ))]}
		k=1024; [ "$c" = after ] && k=1080
		python3 "$HERE/torch_trace_pairs.py" --k $k --seed $i --out "$T/$c-$i.json.gz"
	done
	echo "round $i done"
done
python3 - "$T" <<'PY'
import gzip, json, sys, glob, collections
for c in ("before", "after"):
    f = sorted(glob.glob(sys.argv[1] + "/%s-0.json.gz" % c))[0]
    d = json.load(gzip.open(f))
    ks = collections.Counter(e["name"] for e in d["traceEvents"] if e.get("cat") == "kernel")
    print(c, "kernels:", len(ks))
    for n, m in ks.most_common(8):
        print("  ", m, n[:110])
PY
tar -C "$T" -cf "$OUT/traces.tar" .
ls -la "$OUT"
