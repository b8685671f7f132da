# Every table kptprof prints fits the terminal it is printed on, down to 80
# columns (report, diff, gate, history ls/show, baseline list/show,
# workloads, --help), at 80 and 120 columns: forced with the hidden
# --width N, with $KPTPROF_COLUMNS, and under a real pseudo-terminal
# (`script`, where installed). On the README's main output data (the
# committed H100 baseline against the held-out recording) no two rows of
# diff's kernel table, nor of report's, show the same name for different
# kernels. Piped output keeps whole names and every column; --wide gives
# them on a terminal too.
. "$KPT_SRC/tests/cli/cli_lib.sh"
need_python

B=$KPT_SRC/baselines/nvidia-h100-80gb-hbm3/default
NEW=$KPT_DATA/heldout_h100_s11.kpt
[ -d "$B" ] && [ -r "$NEW" ] || skip "the committed baseline or tests/data recordings are missing"

# the committed baselines under a folder as deep as a CI clone's and more
DEEP=$T/a-checkout-folder-as-deep-as-a-ci-clone/kptprof/baselines
mkdir -p "${DEEP%/*}" && ln -s "$KPT_SRC/baselines" "$DEEP" || fail "cannot link $DEEP"

# fits W FILE WHAT: no line of FILE is wider than W columns.
fits() {
	python3 - "$1" "$2" <<'PY' || fail "$3 at $1 columns has wider lines"
import sys
w, path = int(sys.argv[1]), sys.argv[2]
lines = open(path, encoding="utf-8", errors="replace").read().replace("\r", "").split("\n")
bad = [l for l in lines if len(l) > w]
for l in bad[:5]:
    print("%d columns: %s" % (len(l), l), file=sys.stderr)
sys.exit(1 if bad else 0)
PY
}

# distinct_rows FITTED WIDE WHAT: the rows of the kernel table (the lines
# between the header starting with HEAD and the first line that is not a
# row) show different kernels differently: where two rows of WIDE (the
# same table, whole) differ, their cells before the first number differ in
# FITTED too.
distinct_rows() {
	python3 - "$@" <<'PY' || fail "$3: rows that name different kernels look the same"
import re, sys
fitted, wide, what, head = sys.argv[1:5]
def rows(path):
    lines = open(path, encoding="utf-8").read().replace("\r", "").split("\n")
    start = next(i for i, l in enumerate(lines) if l.startswith(head))
    out = []
    for l in lines[start + 1:]:
        m = re.search(r"\s+[-+]?\d[\d.]*( ns| us| ms| s|%)\s", l)
        if not l.strip() or not m:
            break
        # diff: the cells before Base; report: the name after the numbers
        out.append(" ".join(l[:m.start()].split()) if head == "Kernel" else l.rsplit("  ", 1)[-1].strip())
    return out
f, w = rows(fitted), rows(wide)
assert len(f) == len(w) and len(f) >= 10, (len(f), len(w))
seen = {}
bad = 0
for a, b in zip(f, w):
    if a in seen and seen[a] != b:
        print("'%s' shows both\n  %s\n  %s" % (a, seen[a], b), file=sys.stderr)
        bad += 1
    seen[a] = b
sys.exit(1 if bad else 0)
PY
}

"$KPTPROF" diff "$B" "$NEW" --all >"$T/diff.wide" || fail "diff piped: exit $?"
"$KPTPROF" report "$NEW" >"$T/report.wide" || fail "report piped: exit $?"
# piped: whole names, every column, no note about --wide
grep -qF 'void (anonymous namespace)::attn_fwd_sm90_kernel<false, true>(CUtensorMap_st' "$T/diff.wide" ||
	fail "piped diff lost its whole names"
grep -q '^Kernel .* Config .* Interval % *Noise  Verdict$' "$T/diff.wide" || fail "piped diff lost columns"
! grep -q -- '--wide' "$T/diff.wide" || fail "piped diff talks of --wide"

for w in 80 120; do
	# diff and gate: the README's main command; every row (--all)
	run "$KPTPROF" diff "$B" "$NEW" --all --width $w
	expect_rc 0 "diff --width $w"
	cp "$T/out" "$T/diff.$w"
	fits $w "$T/diff.$w" "diff"
	distinct_rows "$T/diff.$w" "$T/diff.wide" "diff at $w columns" Kernel
	run "$KPTPROF" gate --suite default --from "$NEW" --baselines "$KPT_SRC/baselines" --width $w
	expect_rc 0 "gate --from --width $w"
	fits $w "$T/out" "gate"
	run env KPTPROF_COLUMNS=$w "$KPTPROF" diff "$B" "$NEW"
	fits $w "$T/out" "diff with KPTPROF_COLUMNS"

	# report, by kernel, range and rank
	for f in "$NEW" "$KPT_DATA/torch_small.kpt" "$KPT_DATA/collector_app.kpt"; do
		run "$KPTPROF" report "$f" --width $w
		expect_rc 0 "report $f --width $w"
		fits $w "$T/out" "report $(basename "$f")"
	done
	run "$KPTPROF" report "$NEW" --width $w --by range
	fits $w "$T/out" "report --by range"
	run "$KPTPROF" report "$KPT_DATA/ddp_2gpu_h200.kpt" --width $w --by rank
	fits $w "$T/out" "report --by rank"
	"$KPTPROF" report "$NEW" --width $w >"$T/report.$w"
	distinct_rows "$T/report.$w" "$T/report.wide" "report at $w columns" "Time %"

	# baselines
	run "$KPTPROF" baseline list --baselines "$KPT_SRC/baselines" --width $w
	expect_rc 0 "baseline list --width $w"
	fits $w "$T/out" "baseline list"
	run "$KPTPROF" baseline show --gpu nvidia-h100-80gb-hbm3 --suite default --baselines "$KPT_SRC/baselines" --width $w
	expect_rc 0 "baseline show --width $w"
	fits $w "$T/out" "baseline show"
	run "$KPTPROF" baseline show "$NEW" --width $w
	fits $w "$T/out" "baseline show FILE"
	# a deep checkout: the folder in show's first line keeps its tail
	# (a clone under /tmp/tmp.XXXXXXXXXX made it 82 columns)
	run "$KPTPROF" baseline show --gpu nvidia-h100-80gb-hbm3 --suite default --baselines "$DEEP" --width $w
	expect_rc 0 "baseline show (deep folder) --width $w"
	fits $w "$T/out" "baseline show (deep folder)"
	grep -q '^baseline: .*nvidia-h100-80gb-hbm3/default (7 sessions)$' "$T/out" ||
		fail "baseline show (deep folder): first line $(head -1 "$T/out")"

	# --help of the commands with the longest option tables
	for c in record diff gate report history; do
		run env KPTPROF_COLUMNS=$w "$KPTPROF" $c --help
		fits $w "$T/out" "$c --help"
	done
done

# 80 columns: the verdict's hint and the optional columns gave way, and say so
grep -q '^Kernel .* New .* Change  Verdict$' "$T/diff.80" || fail "diff at 80: header $(grep '^Kernel' "$T/diff.80")"
grep -qF -- '--wide shows' "$T/diff.80" || fail "diff at 80 does not point to --wide"
# names keep their distinguishing template arguments where there is room
grep -qF 'attn_fwd_sm90_kernel<false,true>' "$T/diff.120" || grep -qF 'attn_fwd_sm90_kernel<false,...' "$T/diff.120" ||
	fail "diff at 120 lost the template arguments: $(grep attn_fwd "$T/diff.120")"

# history ls and show (with SQLite)
DB=$T/h.db
if "$KPTPROF" history add "$KPT_DATA/history_plant_h100_01.kpt" --db "$DB" --commit aaaa01 --branch main \
	--label runner=a-very-long-runner-label-that-goes-on-and-on >/dev/null 2>"$T/err"; then
	"$KPTPROF" history add "$KPT_DATA/history_plant_h100_02.kpt" --db "$DB" --commit aaaa02 --branch main >/dev/null ||
		fail "history add"
	for w in 80 120; do
		run "$KPTPROF" history ls --db "$DB" --width $w
		expect_rc 0 "history ls --width $w"
		fits $w "$T/out" "history ls"
		run "$KPTPROF" history show 1 --db "$DB" --width $w
		expect_rc 0 "history show --width $w"
		fits $w "$T/out" "history show"
	done
	run "$KPTPROF" history ls --db "$DB"
	expect_out "runner=a-very-long-runner-label-that-goes-on-and-on"
	# detect: 13 sessions of other machines, then 3 with planted steps
	D2=$T/d.db
	for f in "$KPT_SRC"/tests/data/baselines-20261124/nvidia-h100-80gb-hbm3/default/*.kpt; do
		"$KPTPROF" history add "$f" --db "$D2" --commit "m$(basename "$f" .kpt | cut -c1-8)" >/dev/null || fail "history add $f"
	done
	for i in 01 02 03; do
		"$KPTPROF" history add "$KPT_DATA/history_plant_h100_$i.kpt" --db "$D2" --commit "p$i" --suite default >/dev/null ||
			fail "history add plant $i"
	done
	for w in 80 120; do
		run "$KPTPROF" history detect --db "$D2" --width $w
		expect_rc 1 "history detect --width $w"
		fits $w "$T/out" "history detect"
		expect_out "workload memory.triad.f32.64M (sum of its kernels)"
	done
	run "$KPTPROF" history detect --db "$D2"
	expect_rc 1 "history detect piped"
	grep -q "REGRESSION workload memory.copy.128MiB (sum of its kernels)$" "$T/out" ||
		fail "piped detect rows changed: $(head -c 600 "$T/out")"
else
	grep -q "built without SQLite" "$T/err" || fail "history add: $(cat "$T/err")"
fi

# workloads: a stand-in runner's --tsv listing, sizes as sizes
cat >"$T/runner" <<'EOF'
#!/bin/sh
case " $* " in *" --tsv "*) ;; *) echo "kpt-workloads: want --tsv" >&2; exit 2 ;; esac
printf 'memory.copy.4MiB\tmemory\t0\t8388608\tdefault quick seed\n'
printf 'fp8.gemm.e4m3xe4m3.8192x8192x8192\tfp8\t1099511627776\t201326592\tdefault\n'
printf 'attention.fwd.bf16.d128.s16384.causal.a.long.name.to.cut.on.a.narrow.terminal\tattention\t5.5e11\t1.5e9\tdefault quick\n'
EOF
chmod +x "$T/runner"
run env KPTPROF_WORKLOADS="$T/runner" "$KPTPROF" workloads
expect_rc 0 "workloads"
expect_out "8.0 MiB"
expect_out "attention.fwd.bf16.d128.s16384.causal.a.long.name.to.cut.on.a.narrow.terminal"
expect_no_out "e+0"
for w in 80 120; do
	run env KPTPROF_WORKLOADS="$T/runner" "$KPTPROF" workloads --width $w
	fits $w "$T/out" "workloads"
done

# a real terminal: its width, and --wide
if command -v script >/dev/null; then
	for w in 80 120; do
		script -qec "stty cols $w; NO_COLOR=1 $KPTPROF diff $B $NEW" /dev/null >"$T/tty" 2>&1 </dev/null
		grep -q '^Kernel' "$T/tty" || fail "diff under script printed no table: $(head -c 300 "$T/tty")"
		fits $w "$T/tty" "diff on a $w-column terminal"
		script -qec "stty cols $w; $KPTPROF report $NEW" /dev/null >"$T/tty" 2>&1 </dev/null
		fits $w "$T/tty" "report on a $w-column terminal"
		script -qec "stty cols $w; $KPTPROF help" /dev/null >"$T/tty" 2>&1 </dev/null
		fits $w "$T/tty" "help on a $w-column terminal"
	done
	script -qec "stty cols 80; NO_COLOR=1 $KPTPROF diff $B $NEW --wide" /dev/null >"$T/tty" 2>&1 </dev/null
	grep -qF 'void (anonymous namespace)::attn_fwd_sm90_kernel<false, true>(CUtensorMap_st' "$T/tty" ||
		fail "--wide on a terminal cut the names"
fi
echo ok
