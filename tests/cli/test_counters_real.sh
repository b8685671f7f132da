#!/bin/bash
# Counters recorded on programs kptprof did not write, read without a GPU
# (recorded on an H100 by scripts/gpu/counters_real.sh; tests/data/README.collector.md):
#  - torch_counters_h100.kpt: `record --counters -- python3 torch_workload.py`:
#    every kernel name the timing run saw has counters, and no counter row
#    names a kernel the timing run did not see (they match by mangled name,
#    the name diff keys by);
#  - counters_pair_{base,plant}_h100.kpt: `record --runs 3 --counters --
#    kpt-workloads memory.copy.64MiB memory.triad.f32.64M`, the second with
#    the copy planted 10% slower (it moves 10% more memory): diff says SLOW
#    for the copy alone and explains it with the counters (DRAM bytes up by
#    about the planted 10%), in the table and in --json.
. "$KPT_SRC/tests/cli/cli_lib.sh"
need_python
D=$KPT_SRC/tests/data
for f in torch_counters_h100 counters_pair_base_h100 counters_pair_plant_h100; do
	[ -s "$D/$f.kpt" ] || fail "tests/data/$f.kpt is missing"
done

run "$KPTPROF" report "$D/torch_counters_h100.kpt" --format json
expect_rc 0 "report --format json"
python3 - "$T/out" <<'PY' || fail "torch recording: counters do not match the timed kernels"
import json, sys
r = json.load(open(sys.argv[1]))
timed = {k["mangled"] for k in r["kernels"]}
counted = {k["mangled"] for k in r["kernel_counters"]}
print(len(timed), "kernel names timed,", len(counted), "with counters")
assert len(timed) >= 20, "a PyTorch training step launches more kernel kinds than that"
assert timed == counted, (sorted(timed - counted)[:5], sorted(counted - timed)[:5])
for k in r["kernel_counters"]:
    assert k["dram_bytes"] >= 0 and k["metrics"]["sm__inst_executed.sum"] > 0, k["name"]
PY

run "$KPTPROF" diff "$D/counters_pair_base_h100.kpt" "$D/counters_pair_plant_h100.kpt" --json "$T/d.json"
expect_rc 1 "diff of the planted pair"
grep -q '^copy_vec.*SLOW$' "$T/out" || fail "the planted copy is not SLOW: $(cat "$T/out")"
grep -q '^triad_vec.*SLOW' "$T/out" && fail "the unchanged triad is SLOW"
# the explanation line follows the SLOW row
grep -A1 '^copy_vec.*SLOW$' "$T/out" | grep -q 'counters: dram bytes read +1[0-2]%' \
	|| fail "no counter explanation under the SLOW key: $(cat "$T/out")"
python3 - "$T/d.json" <<'PY' || fail "diff --json: counters of the SLOW key"
import json, sys
r = json.load(open(sys.argv[1]))
slow = [k for k in r["keys"] if k["verdict"] == "SLOW"]
assert len(slow) == 1 and "copy_vec" in slow[0]["name"], slow
assert "dram bytes written +1" in slow[0]["counters"], slow[0]
assert all(k.get("counters") is None for k in r["keys"] if k["verdict"] != "SLOW")
PY
echo ok
