# same machine: the attention forward of 8d32beb (the code of the 2026-11-24
# baseline sessions) against today's, both built with nvcc alone for sm_90a,
# interleaved rounds, no idle gap (as those sessions were recorded).
# Run from the repository root on the GPU machine with the old sources carried:
#   git archive 8d32beb kernels lib | gzip > .carry/s11/old8d32beb.tgz
set -u
build() { # SRC OUT
	local SRC=$1 OUT=$2 inc f
	mkdir -p "$OUT/obj"
	inc="-DKPT_ATTN_SM90=1 -DKPT_ATTN_BWD_SM90=1 -DKPT_MOE_SM90=1 -I$SRC/lib -I$SRC/kernels"; for d in "$SRC"/kernels/*/; do inc="$inc -I$d"; done
	for f in $(find "$SRC/kernels" -name '*.cu'); do nvcc -O3 -std=c++17 -gencode arch=compute_90a,code=sm_90a --expt-relaxed-constexpr $inc -c "$f" -o "$OUT/obj/$(basename "$f").o" & done
	for f in $(find "$SRC/kernels" -name '*.c') $SRC/lib/kpt_err.c; do gcc -O2 -std=gnu11 $inc -isystem /usr/local/cuda/include -c "$f" -o "$OUT/obj/$(basename "$f").o" & done
	wait
	g++ -o "$OUT/kw" "$OUT"/obj/*.o -L/usr/local/cuda/lib64 -lcublasLt -lcublas -lcudart -ldl -lm -lpthread
}
mkdir -p /tmp/old && tar -xzf .carry/s11/old8d32beb.tgz -C /tmp/old
t=$SECONDS; build /tmp/old /tmp/bo > /tmp/bo.log 2>&1 & build "$PWD" /tmp/bn > /tmp/bn.log 2>&1 & wait
echo "built in $((SECONDS - t)) s: $(ls -la /tmp/bo/kw /tmp/bn/kw 2>&1 | awk '{print $5, $NF}' | tr '\n' ' ')"
[ -x /tmp/bo/kw ] && [ -x /tmp/bn/kw ] || { tail -5 /tmp/bo.log /tmp/bn.log; exit 1; }
W="attention.fwd.bf16.d128.s2048 attention.fwd.fp16.d128.s2048 attention.fwd.bf16.d128.s2048.causal attention.fwd.bf16.d128.s16384 attention.decode.bf16.d128.ctx4096.b8h32"
mkdir -p $OUT/ab
for r in $(seq 0 9); do
	if ((r % 2)); then
		/tmp/bn/kw $W --settle-us 0 --iterations 20 --warmup 3 --json > $OUT/ab/new-$r.json 2>/dev/null
		/tmp/bo/kw $W --iterations 20 --warmup 3 --json > $OUT/ab/old-$r.json 2>/dev/null
	else
		/tmp/bo/kw $W --iterations 20 --warmup 3 --json > $OUT/ab/old-$r.json 2>/dev/null
		/tmp/bn/kw $W --settle-us 0 --iterations 20 --warmup 3 --json > $OUT/ab/new-$r.json 2>/dev/null
	fi
	/tmp/bn/kw $W --settle-us 3000 --iterations 20 --warmup 3 --json > $OUT/ab/gap-$r.json 2>/dev/null
done
python3 - $OUT/ab <<'PY'
import json, sys, glob, statistics as st
d = sys.argv[1]
def load(k):
    out = {}
    for f in sorted(glob.glob(f"{d}/{k}-*.json")):
        for w in json.load(open(f)):
            out.setdefault(w["name"], []).append(w["median_s"] * 1e6)
    return out
o, n, g = load("old"), load("new"), load("gap")
for w in o:
    r = [b / a for a, b in zip(o[w], n[w])]
    print(f"{w:45s} old {st.median(o[w]):9.2f} us  new {st.median(n[w]):9.2f} us  new/old {st.median(r):.4f} [{min(r):.3f}, {max(r):.3f}]  new 3ms gap {st.median(g[w]):9.2f} us")
PY
