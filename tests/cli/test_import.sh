# kptprof import: hand-written torch.profiler (Kineto) and Nsight Systems
# traces (tests/data/import, written after the documented formats), a round
# trip of a real recording through kptprof's own Chrome trace, several files
# as runs, and bad input (one-line errors, exit 2, nothing written).
. "$KPT_SRC/tests/cli/cli_lib.sh"
need_python
D=$KPT_SRC/tests/data/import

# ---- Kineto: every field lands where docs/import.md says (--runs files: the
# file is one run, one process)
run "$KPTPROF" import "$D/kineto_small.json" --runs files -o "$T/k.kpt"
expect_rc 0 "import kineto_small.json"
expect_err "1 run, 6 kernels, 2 memops, 4 ranges (2 steps as kpt:iter), 1 GPU"
expect_err "launching thread 2, only in a step 2, launch not in the trace 1"
"$KPTPROF" export "$T/k.kpt" --format json -o "$T/k.json" || fail "export of the import failed"
python3 - "$T/k.json" <<'PY' || fail "imported kineto_small.json is wrong"
import json, sys
r = json.load(open(sys.argv[1]))
base = 1764000000000000000
k = {x["correlation"]: x for x in r["kernels"]}
assert sorted(k) == [11, 13, 21, 23, 31, 99], sorted(k)
g = k[11]
# ts 30.250 us, dur 100.125 us after baseTimeNanoseconds: exact ns
assert (g["start_ns"], g["end_ns"]) == (base + 30250, base + 130375), g
assert g["grid"] == [4, 1, 1] and g["block"] == [128, 1, 1], g
assert (g["registers"], g["shared_static"], g["stream"], g["device"]) == (64, 1024, 7, 0), g
assert g["range_path"] == "forward", g
assert sum(x["end_ns"] - x["start_ns"] for x in r["kernels"]) == 258252
rng = {x["id"]: x for x in r["ranges"]}
steps = [x for x in r["ranges"] if x["name"] == "kpt:iter"]
assert len(steps) == 2 and all(x["thread"] == 100 for x in steps), steps
# backward kernels launched on thread 200 (no range there): the step open at the launch
assert rng[k[13]["range"]]["name"] == "kpt:iter" and rng[k[13]["range"]]["start_ns"] == base, k[13]
assert rng[k[23]["range"]]["start_ns"] == base + 1000000, k[23]        # step 2 at 1000 us
assert "range" not in k[31] or k[31]["range"] is None, k[31]      # after the steps: none
assert "range" not in k[99] or k[99]["range"] is None, k[99]      # no launch event
fwd = [x for x in r["ranges"] if x["name"] == "forward"]
assert len(fwd) == 2 and all(rng[x["parent"]]["name"] == "kpt:iter" for x in fwd), fwd
m = sorted(r["memops"], key=lambda x: x["start_ns"])
assert (m[0]["kind"], m[0]["src"], m[0]["dst"], m[0]["bytes"]) == ("Memcpy HtoD", "Pageable", "Device", 4096), m[0]
assert (m[1]["kind"], m[1]["dst"], m[1]["bytes"], m[1]["end_ns"] - m[1]["start_ns"]) == ("Memset", "Device", 256, 1500), m[1]
p = r["processes"]
assert len(p) == 1 and p[0]["pid"] == 4242 and p[0]["rank"] == 1 and p[0]["run"] == 0, p
d = r["devices"]
assert len(d) == 1 and d[0]["name"] == "NVIDIA H100 80GB HBM3" and d[0]["sm_count"] == 132, d
assert (d[0]["compute_capability"], d[0]["memory_bytes"]) == ("9.0", 85029158912), d
meta = r["meta"]
assert meta["imported_from"] == "kineto" and meta["import.files"] == "kineto_small.json", meta
assert "NVML" in meta["import.lacks"] and "launch of some kernels" in meta["import.lacks"], meta
PY
run "$KPTPROF" report "$T/k.kpt"
expect_rc 0 "report of an import"
expect_out "imported  from kineto: kineto_small.json"
expect_out "lacks     NVML environment samples"
expect_out "L2 ?, driver ? (CUDA ?)"     # unknown, not 0 B
run "$KPTPROF" report "$T/k.kpt" --by range
expect_out "forward"

# ---- .json.gz (torch.profiler's tensorboard_trace_handler): read directly,
# the same recording as the plain file; without zlib in the build, refused
gzip -c "$D/kineto_small.json" >"$T/k.json.gz"
run "$KPTPROF" import "$T/k.json.gz" --runs files -o "$T/kgz.kpt"
if grep -q "built without zlib" "$T/err"; then
	expect_error "import .json.gz without zlib" "gunzip"
else
	expect_rc 0 "import kineto_small.json.gz"
	expect_err "1 run, 6 kernels, 2 memops, 4 ranges (2 steps as kpt:iter), 1 GPU"
	"$KPTPROF" export "$T/kgz.kpt" --format json -o "$T/kgz.json" || fail "export of the .gz import failed"
	python3 - "$T/k.json" "$T/kgz.json" <<'PY' || fail "the .json.gz import differs from the plain one"
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:])
for x in (a, b):
    x["meta"].pop("import.files")
assert a == b
PY
fi

# ---- one trace: its steps are the runs (a process each, of the file's pid)
run "$KPTPROF" import "$D/kineto_small.json" -o "$T/ks.kpt"
expect_rc 0 "import kineto_small.json, steps as runs"
expect_err "2 runs, 6 kernels, 2 memops, 4 ranges (2 steps as kpt:iter), 1 GPU"
expect_err "launching thread 2, only in a step 2, launch not in the trace 1"
"$KPTPROF" export "$T/ks.kpt" --format json -o "$T/ks.json" || fail "export of the steps import failed"
python3 - "$T/ks.json" <<'PY' || fail "steps of kineto_small.json are not its runs"
import json, sys
r = json.load(open(sys.argv[1]))
base = 1764000000000000000
p = sorted(r["processes"], key=lambda x: x["run"])
assert [(x["run"], x["pid"], x["rank"]) for x in p] == [(0, 4242, 1), (1, 4242, 1)], p
assert p[1]["start_ns"] == base + 1000000, p                      # step 2 starts at 1000 us
proc_run = {x["index"]: x["run"] for x in p}
k = {x["correlation"]: x for x in r["kernels"]}
# launched in step 1 (on thread 100 and on autograd's 200), in step 2, and after it
assert [proc_run[k[c]["process"]] for c in (11, 13, 21, 23, 31)] == [0, 0, 1, 1, 1], k
rng = {x["id"]: x for x in r["ranges"]}
assert proc_run[rng[k[23]["range"]]["process"]] == 1, k[23]          # its step is in its run
assert r["meta"]["runs"] == "2", r["meta"]
PY

# ---- several files: one run each; a diff of two such recordings works
sed 's/"dur": 100.125/"dur": 101.000/; s/"dur": 110.125/"dur": 103.000/' "$D/kineto_small.json" >"$T/k2.json"
run "$KPTPROF" import "$D/kineto_small.json" "$T/k2.json" -o "$T/ab.kpt"
expect_rc 0 "import of two files"
expect_err "2 runs, 12 kernels"
run "$KPTPROF" import "$T/k2.json" "$D/kineto_small.json" -o "$T/ba.kpt"
expect_rc 0 "import of two files, other order"
run "$KPTPROF" report "$T/ab.kpt" --format json
python3 -c 'import json,sys; c=json.load(open(sys.argv[1]))["counts"]; assert c["runs"]==2 and c["processes"]==2 and c["devices"]==1, c' "$T/out" \
	|| fail "two files are not two runs on one GPU"
run "$KPTPROF" diff "$T/ab.kpt" "$T/ba.kpt"
expect_rc 0 "diff of two imports"
expect_out "gemm_kernel"
expect_out "forward"

# imported recordings go where recorded ones go: a baseline, a gate, the history
run "$KPTPROF" baseline update "$T/ab.kpt" --baselines "$T/bl" --suite torch
expect_rc 0 "baseline update of an import"
[ -n "$(ls "$T/bl/nvidia-h100-80gb-hbm3/torch/")" ] || fail "no session under the H100's folder"
run "$KPTPROF" gate --from "$T/ba.kpt" --baselines "$T/bl" --suite torch
expect_rc 0 "gate of an import"
expect_out "no regression"

# ---- a real recording through kptprof's Chrome trace and back: same kernels, same GPU time
"$KPTPROF" export "$KPT_DATA/torch_small.kpt" --format chrome -o "$T/torch.json" || fail "export chrome failed"
run "$KPTPROF" import "$T/torch.json" -o "$T/torch.kpt"
expect_rc 0 "import of an exported real recording"
"$KPTPROF" report "$KPT_DATA/torch_small.kpt" --format json >"$T/r0.json" || fail "report failed"
"$KPTPROF" report "$T/torch.kpt" --format json >"$T/r1.json" || fail "report of the round trip failed"
python3 - "$T/r0.json" "$T/r1.json" <<'PY' || fail "round trip changed the kernels"
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:])
assert a["counts"]["kernels"] == b["counts"]["kernels"] == 422, (a["counts"], b["counts"])
assert a["counts"]["memops"] == b["counts"]["memops"], (a["counts"], b["counts"])
assert a["gpu_time_ns"] == b["gpu_time_ns"], (a["gpu_time_ns"], b["gpu_time_ns"])
inst = lambda r: sorted((k["instances"], k["total_ns"]) for k in r["kernels"])
assert inst(a) == inst(b)
assert a["devices"][0]["name"] == b["devices"][0]["name"]
PY

# ---- Nsight Systems SQLite export
mkdb() { # SQL file, db
	if command -v sqlite3 >/dev/null; then sqlite3 "$2" <"$1"
	else python3 -c 'import sqlite3,sys; sqlite3.connect(sys.argv[2]).executescript(open(sys.argv[1]).read())' "$1" "$2"
	fi
}
mkdb "$D/nsys_small.sql" "$T/n.sqlite" || fail "cannot build the nsys test database"
run "$KPTPROF" import "$T/n.sqlite" -o "$T/n.kpt"
if grep -q "built without SQLite" "$T/err"; then
	expect_error "import nsys without SQLite" "built without SQLite"
	[ ! -e "$T/n.kpt" ] || fail "a failed import left its output"
else
	expect_rc 0 "import nsys_small"
	expect_err "1 run, 6 kernels, 2 memops, 6 ranges (2 steps as kpt:iter), 1 GPU"
	expect_err "launching thread 2, only in a step 2, launch not in the trace 1"
	"$KPTPROF" export "$T/n.kpt" --format json -o "$T/n.json" || fail "export of the nsys import failed"
	python3 - "$T/n.json" <<'PY' || fail "imported nsys_small is wrong"
import json, sys
r = json.load(open(sys.argv[1]))
k = {x["correlation"]: x for x in r["kernels"]}
g = k[11]
assert g["mangled"] == "_Z11gemm_kernelPfi" and g["name"] == "gemm_kernel(float*, int)", g
assert (g["start_ns"], g["end_ns"], g["shared_static"], g["shared_dynamic"]) == (30250, 130375, 512, 512), g
assert g["range_path"] == "forward", g
rng = {x["id"]: x for x in r["ranges"]}
assert rng[k[13]["range"]]["name"] == "kpt:iter", k[13]
io = [x for x in r["ranges"] if x["name"] == "io"][0]
assert io["domain"] == "mydomain" and io["kind"] == 2, io
mark = [x for x in r["ranges"] if x["name"] == "a mark"][0]
assert mark["kind"] == 3 and mark["start_ns"] == mark["end_ns"] == 5000, mark
p = r["processes"]
assert len(p) == 1 and p[0]["pid"] == 4242, p
d = r["devices"][0]
assert d["uuid"].startswith("GPU-5f21059c") and d["l2_bytes"] == 52428800 and d["sm_count"] == 132, d
m = sorted(r["memops"], key=lambda x: x["start_ns"])
assert (m[0]["kind"], m[0]["src"], m[0]["dst"]) == ("Memcpy HtoD", "Pageable", "Device"), m[0]
assert r["meta"]["imported_from"] == "nsys"
PY
	# an older export: no mangledName column, no runtime table
	cp "$T/n.sqlite" "$T/old.sqlite"
	printf 'ALTER TABLE CUPTI_ACTIVITY_KIND_KERNEL DROP COLUMN mangledName;\nDROP TABLE CUPTI_ACTIVITY_KIND_RUNTIME;\n' >"$T/old.sql"
	mkdb "$T/old.sql" "$T/old.sqlite" || fail "cannot alter the nsys test database"
	run "$KPTPROF" import "$T/old.sqlite" -o "$T/old.kpt"
	expect_rc 0 "import of an older nsys export"
	expect_err "launching thread 0, only in a step 0, launch not in the trace 6"
	run "$KPTPROF" report "$T/old.kpt"
	expect_out "mangled kernel names"
	expect_out "the launch of some kernels"
	expect_out "gemm_kernel(float*, int)"
	run "$KPTPROF" history add "$T/ab.kpt" --db "$T/h.db" --commit abc
	expect_rc 0 "history add of an import"
	expect_out "2 kernel keys, 2 runs, NVIDIA H100 80GB HBM3"
	run "$KPTPROF" import "$T/n.sqlite" "$D/kineto_small.json" -o "$T/mixed.kpt"
	expect_error "mixed formats" "in one recording"
	[ ! -e "$T/mixed.kpt" ] || fail "a failed import left its output"
	printf 'CREATE TABLE StringIds (id INTEGER PRIMARY KEY, value TEXT NOT NULL);\n' >"$T/empty.sql"
	mkdb "$T/empty.sql" "$T/empty.sqlite"
	run "$KPTPROF" import "$T/empty.sqlite" -o "$T/e.kpt"
	expect_error "an export without GPU work" "no kernel, memcpy or memset"
fi

# ---- bad input: one line, exit 2, nothing written
bad() { # what, file content, expected text
	printf '%s' "$2" >"$T/bad.json"
	run "$KPTPROF" import "$T/bad.json" -o "$T/bad.kpt"
	expect_error "$1" "$3"
	[ ! -e "$T/bad.kpt" ] || fail "$1: a failed import left its output"
}
bad "trailing comma" '{"traceEvents": [{"ph": "X"},]}' "bad JSON at byte 29"
bad "unterminated" '{"traceEvents": [' "bad JSON"
bad "two values" '{"traceEvents": []} {}' "more after the top-level value"
bad "deep nesting" "{\"a\": $(printf '[%.0s' $(seq 70))" "nested deeper than 64"
bad "kernel without grid" '{"traceEvents": [{"ph": "X", "cat": "kernel", "name": "k", "ts": 1, "dur": 1, "args": {}}]}' \
	"trace event 1 (kernel): no 'grid' and 'block'"
bad "ts a string" '{"traceEvents": [{"ph": "X", "cat": "kernel", "name": "k", "ts": "1", "dur": 1}]}' "no number 'ts'"
bad "negative dur" '{"traceEvents": [{"ph": "X", "cat": "kernel", "name": "k", "ts": 1, "dur": -1}]}' "no number 'dur' of 0 or more"
bad "no GPU work" '{"traceEvents": [{"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 1, "tid": 1, "ts": 1, "dur": 1}]}' \
	"no kernel, memcpy or memset"
bad "neither format" 'hello' "neither a Chrome trace"
printf '\037\213\010\000' >"$T/t.json.gz"
run "$KPTPROF" import "$T/t.json.gz" -o "$T/gz.kpt"
expect_error "a gzip header alone" "gzip"
: >"$T/empty.json"
run "$KPTPROF" import "$T/empty.json" -o "$T/x.kpt"
expect_error "empty file" "the file is empty"
run "$KPTPROF" import "$T/nothere.json" -o "$T/x.kpt"
expect_error "missing file" "nothere.json"
run "$KPTPROF" import "$D/kineto_small.json"
expect_error "no -o" "missing -o FILE"
run "$KPTPROF" import -o "$T/x.kpt"
expect_error "no trace" "missing TRACE"
cp "$D/kineto_small.json" "$T/same.json"
run "$KPTPROF" import "$T/same.json" -o "$T/same.json"
expect_error "output is an input" "it is an input of this command"
cmp -s "$D/kineto_small.json" "$T/same.json" || fail "the input was overwritten"
run "$KPTPROF" import --bogus "$D/kineto_small.json" -o "$T/x.kpt"
expect_error "unknown option" "unknown option '--bogus'"
[ ! -e "$T/x.kpt" ] || fail "a failed import left its output"
echo "ok"
