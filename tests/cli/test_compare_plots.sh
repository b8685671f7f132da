#!/bin/bash
# kptprof compare --plots DIR: one bar plot script per workload
# (kpt_plot_compare), its data the GPU times of `compare --format json`, one
# bar per recording named by its GPU; PNGs when gnuplot is installed, the
# JSON on stdout untouched by the notes.
. "$KPT_SRC/tests/cli/cli_lib.sh"
need_synth
need_python
S="$KPT_BUILD/kpt-synth"
"$S" -o "$T/h100.kpt" --runs 3 --iterations 5 --names 20 || fail "kpt-synth h100"
"$S" -o "$T/l4.kpt" --runs 3 --iterations 5 --names 20 --gpu "NVIDIA L4" --slow _:300 || fail "kpt-synth l4"

run "$KPTPROF" compare --format json "$T/h100.kpt" "$T/l4.kpt" --plots "$T/p"
expect_rc 0 "compare --plots"
expect_err "kptprof compare: wrote 2 plots to '$T/p'"
[ -s "$T/p/compare-synth-workload.gp" ] || fail "no compare-synth-workload.gp: $(ls "$T/p" 2>&1)"
[ -s "$T/p/compare-all.gp" ] || fail "no compare-all.gp for (all): $(ls "$T/p" 2>&1)"
if command -v gnuplot >/dev/null; then
	for f in compare-synth-workload compare-all; do
		head -c 8 "$T/p/$f.png" | od -An -c | grep -q 'P   N   G' || fail "gnuplot is installed but $f.png is not a PNG"
	done
fi
python3 - "$T/out" "$T/p" <<'PY' || fail "plot data differ from compare --format json"
import json, os, sys
j = json.load(open(sys.argv[1]))            # stdout is still pure JSON
gpus = [f["gpu"] for f in j["files"]]
for stem, wl in (("compare-synth-workload", "synth.workload"), ("compare-all", "(all)")):
    rows, inside = [], False
    for line in open(os.path.join(sys.argv[2], stem + ".gp")):
        if line == "$data << EOD\n":
            inside = True
        elif inside and line == "EOD\n":
            break
        elif inside and not line.startswith("#"):
            rows.append(line.rstrip("\n"))
    cells = [r["cells"] for r in j["workloads"] if r["workload"] == wl][0]
    assert len(rows) == 2, rows
    for row, cell, gpu in zip(rows, cells, gpus):
        value = float(row.split()[1])
        assert abs(value - cell["ns"] / 1e3) <= 1e-5 * value, (stem, value, cell["ns"])
        assert row.split('"')[1] == gpu, (row, gpu)
    # the L4 recording is 4x slower (--slow _:300)
    v = [float(r.split()[1]) for r in rows]
    assert 3.5 < v[1] / v[0] < 4.5, v
PY

run "$KPTPROF" compare "$T/h100.kpt" "$T/l4.kpt" --plots
expect_rc 2 "--plots without DIR"
: >"$T/afile"
run "$KPTPROF" compare "$T/h100.kpt" "$T/l4.kpt" --plots "$T/afile/sub"
expect_rc 2 "--plots DIR that cannot be made"
expect_err "cannot create"
exit 0
