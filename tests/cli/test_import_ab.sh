# Imported torch.profiler traces before/after a change on one machine (issue
# 40 (b)): one trace's steps are its runs, the machine facts a trace holds
# (host name, GPU UUID, PCI bus, CUDA versions) make two traces one machine,
# `diff --same-machine` says so when they hold none, and a 5% slower 203 us
# kernel is SLOW. Traces: tests/synth/kineto_trace.py (.json.gz, as
# tensorboard_trace_handler writes them); rates: bench/import/kineto_ab.sh.
. "$KPT_SRC/tests/cli/cli_lib.sh"
need_python
G=$KPT_SRC/tests/synth/kineto_trace.py
VICTIM=ampere_bf16_s16816gemm_bf16_128x256_ldg8_f2f_stages_64x3_tn

python3 "$G" -o "$T/a.json.gz" --seed 1 || fail "kineto_trace.py"
run "$KPTPROF" import "$T/a.json.gz" -o "$T/a.kpt"
grep -q "built without zlib" "$T/err" && skip "kptprof was built without zlib"
expect_rc 0 "import of a .json.gz trace"
expect_err "30 runs, 600 kernels, 0 memops, 60 ranges (30 steps as kpt:iter), 1 GPU"
python3 "$G" -o "$T/b.json.gz" --seed 2 --pid 5000 --slow 5 || fail "kineto_trace.py --slow"
"$KPTPROF" import "$T/b.json.gz" -o "$T/b.kpt" 2>/dev/null || fail "import of b"

# no machine facts: other machines, the planted change is AMBG (the issue's trap)
run "$KPTPROF" diff "$T/a.kpt" "$T/b.kpt"
expect_rc 0 "diff of traces without machine facts"
expect_out "against 1 session of other machines"
grep "$VICTIM" "$T/out" | grep -q AMBG || fail "without facts the planted key is not AMBG: $(grep "$VICTIM" "$T/out")"
# --same-machine: SLOW on that key alone, exit 1
run "$KPTPROF" diff --same-machine "$T/a.kpt" "$T/b.kpt" --json "$T/s.json"
expect_rc 1 "diff --same-machine of a 5% slower kernel"
expect_out "one machine (--same-machine) as 1 of the base's 1 session"
python3 - "$T/s.json" "$VICTIM" <<'PY' || fail "--same-machine verdicts"
import json, sys
d = json.load(open(sys.argv[1]))
slow = [k["name"] for k in d["keys"] if k["verdict"] == "SLOW"]
assert slow == [sys.argv[2]], slow
assert d["model"]["machine"] == "same_boot", d["model"]
PY
run "$KPTPROF" diff --same-machine --other-machine "$T/a.kpt" "$T/b.kpt"
expect_error "contradicting machine options" "--same-machine and --other-machine contradict each other"

# facts in the trace: kept in meta; the same host compares as one machine, another host does not
python3 "$G" -o "$T/ha.json.gz" --seed 1 --host gpu-node-7 || fail "kineto_trace.py --host"
python3 "$G" -o "$T/hb.json.gz" --seed 2 --pid 5000 --slow 5 --host gpu-node-7 || fail "kineto_trace.py --host"
python3 "$G" -o "$T/hc.json.gz" --seed 2 --pid 5000 --slow 5 --host gpu-node-8 || fail "kineto_trace.py --host"
for x in ha hb hc; do "$KPTPROF" import "$T/$x.json.gz" -o "$T/$x.kpt" 2>/dev/null || fail "import of $x"; done
"$KPTPROF" export "$T/ha.kpt" --format json -o "$T/ha.json" || fail "export"
python3 - "$T/ha.json" <<'PY' || fail "machine facts are not in the meta"
import json, sys
r = json.load(open(sys.argv[1]))
m = r["meta"]
assert m["host"] == "gpu-node-7", m
assert (m["import.cuda_driver_version"], m["import.cuda_runtime_version"], m["import.cupti_version"]) == ("13000", "12080", "26"), m
assert m["import.machine"] == "host=gpu-node-7 gpu=NVIDIA H100 80GB HBM3 uuid= pci= driver=13000 cuda=12080", m
assert m["time"] == "2025-11-24T16:00:01Z", m
d = r["devices"][0]
assert (d["driver_version"], d["runtime_version"]) == (13000, 12080), d
PY
run "$KPTPROF" diff "$T/ha.kpt" "$T/hb.kpt"
expect_rc 1 "diff of two traces of one host"
expect_out "same machine (the host and GPU the imported traces name) as 1 of the base's 1 session"
run "$KPTPROF" diff "$T/ha.kpt" "$T/hc.kpt"
expect_rc 0 "diff of traces of two hosts"
expect_out "against 1 session of other machines"
run "$KPTPROF" report "$T/hb.kpt"
expect_out "on gpu-node-7"

# a GPU UUID and PCI bus in deviceProperties (cudaDeviceProp's names) are kept too
python3 - "$KPT_SRC/tests/data/import/kineto_small.json" "$T/u.json" <<'PY'
import json, sys
t = json.load(open(sys.argv[1]))
t["deviceProperties"][0].update(uuid="GPU-5f21059c-0000-1111-2222-333344445555", pciBusID=24, pciDomainID=0, pciDeviceID=0)
json.dump(t, open(sys.argv[2], "w"))
PY
"$KPTPROF" import "$T/u.json" -o "$T/u.kpt" 2>/dev/null || fail "import with a UUID"
"$KPTPROF" export "$T/u.kpt" --format json -o "$T/u.out.json" || fail "export"
python3 - "$T/u.out.json" <<'PY' || fail "UUID and PCI bus not kept"
import json, sys
r = json.load(open(sys.argv[1]))
assert r["devices"][0]["uuid"] == "GPU-5f21059c-0000-1111-2222-333344445555", r["devices"]
m = r["meta"]
assert m["import.gpu_uuid"] == "GPU-5f21059c-0000-1111-2222-333344445555" and m["import.pci_bus_id"] == "0000:18:00.0", m
assert m["import.machine"].startswith("host= gpu=NVIDIA H100 80GB HBM3 uuid=GPU-5f21059c"), m
PY

# the rates on 20 fixed seeds (out of sample: the generator's noise was set
# before the rule saw it): +5% found in >= 19 of 20, and at most one
# unchanged pair with a SLOW key (measured: 20/20 and 1/20, 2026-11-28)
"$KPT_SRC/bench/import/kineto_ab.sh" "$KPTPROF" 20 >"$T/rates.txt" || fail "kineto_ab.sh: $(tail -3 "$T/rates.txt")"
python3 - "$T/rates.txt" <<'PY' || fail "rates: $(tail -1 "$T/rates.txt")"
import re, sys
last = open(sys.argv[1]).read().splitlines()[-1]
m = re.match(r"found (\d+)/20; other SLOW keys (\d+) .*; unchanged pairs with a SLOW (\d+)/20", last)
found, other, aa = map(int, m.groups())
assert found >= 19 and other <= 1 and aa <= 1, last
PY
echo "ok"
