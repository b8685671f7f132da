#!/usr/bin/env bash
# kernels_list.sh - the registry as kpt-workloads --list and `kptprof
# workloads` show it, without a GPU: names follow family.kernel.params and
# are unique, every workload moves bytes, suites are the known ones and the
# three required suites are not empty; usage errors exit 2.
set -u
fail() { echo "FAIL: $*"; exit 1; }
json=$("$KW" --list --json) || fail "--list --json exit $?"
python3 - "$json" <<'PY' || exit 1
import json, re, sys
d = json.loads(sys.argv[1])
suites = {s["name"] for s in d["suites"]}
names = [w["name"] for w in d["workloads"]]
assert len(names) == len(set(names)), "duplicate names"
for w in d["workloads"]:
    assert re.fullmatch(r"[a-z0-9]+\.[a-z0-9_]+\.[A-Za-z0-9_.x]+", w["name"]), w["name"]
    assert w["name"].startswith(w["family"] + "."), w["name"]
    assert w["bytes"] > 0 or w["name"].endswith((".0B", ".0", ".0x7", ".0x0")), w["name"]
    assert set(w["suites"].split()) <= suites, w["name"]
for s in ("quick", "default", "seed", "check"):
    assert any(s in w["suites"].split() for w in d["workloads"]), f"suite {s} empty"
plant = [w["name"] for w in d["workloads"] if w["plantable"]]
assert "memory.copy.4MiB" in plant and "memory.copy.512MiB" in plant, plant
# MoE: every entry (SM90 and AUTO, the default suite's too: the wgmma FFN's
# plant where it runs) is plantable; attention: the default suite's d64
# forward too (no longer pinned to mma.sync tiles); fp8: quantize and
# dequantize, not the cuBLASLt GEMM
assert "moe.layer.e8.top2.h512.f2048.b8.s512" in plant, plant
assert "moe.layer.e8.top2.h512.b32.s128" in plant and "moe.layer.e128.top8.h2048.f768.b32.s1024" in plant
assert "attention.fwd.bf16.d64.s2048" in plant, plant
assert "fp8.quant.e4m3.bf16.per_token.8192x8192" in plant and "fp8.dequant.e4m3.bf16.per_token.8192x8192" in plant
assert not any(n.startswith("fp8.gemm.") for n in plant), plant
print(f"{len(names)} workloads, {len(plant)} plantable")
PY
"$KW" --list --suite quick | grep -q '^memory.copy.4MiB ' || fail "quick list lacks memory.copy.4MiB"
"$KW" --list --suite quick | grep -q 'memory.copy.512MiB' && fail "--suite quick lists a default-only workload"
"$KW" --suite nosuch >/dev/null 2>&1; [ $? -eq 2 ] || fail "unknown suite must exit 2"
"$KW" --iterations 0 memory.copy.4MiB >/dev/null 2>&1; [ $? -eq 2 ] || fail "--iterations 0 must exit 2"
"$KW" --plant memory.transpose.f32.1024x1000=5 memory.transpose.f32.1024x1000 >/dev/null 2>&1; [ $? -eq 2 ] || fail "--plant on a fixed workload must exit 2"
"$KW" --plant fp8.gemm.e4m3xe4m3.4096x4096x4096=5 fp8.gemm.e4m3xe4m3.4096x4096x4096 >/dev/null 2>&1; [ $? -eq 2 ] || fail "--plant on the cuBLASLt GEMM must exit 2"
"$KW" no.such.workload 2>&1 | grep -q "unknown workload 'no.such.workload'" || fail "unknown workload message"
if [ -n "${KPTPROF:-}" ] && "$KPTPROF" help workloads >/dev/null 2>&1; then
	KPTPROF_WORKLOADS=$KW "$KPTPROF" workloads | grep -q '^memory.copy.4MiB ' || fail "kptprof workloads (KPTPROF_WORKLOADS)"
	KPTPROF_WORKLOADS=/nonexistent "$KPTPROF" workloads 2>/tmp/kw.$$; rc=$?
	[ $rc -eq 2 ] && grep -q "KPTPROF_WORKLOADS='/nonexistent'" /tmp/kw.$$ || { rm -f /tmp/kw.$$; fail "missing runner: rc $rc"; }
	rm -f /tmp/kw.$$
fi
echo ok
