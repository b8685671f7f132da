# Nothing to compare is an error, never "no regression" (issue 40 (a),
# issue 34 item 10): `diff` of recordings that share fewer than half of
# either side's keys (or none) exits 2 with one line, as `gate` does;
# `--allow-unmatched` shows the table. A recording with 0 keys (every kernel
# outside the steps) is refused by `baseline update` and `history add`, and
# a diff of two of them (0 rows) does not hand qsort a NULL (a KPT_SANITIZE
# build of the old code failed here).
. "$KPT_SRC/tests/cli/cli_lib.sh"
need_python

# two programs that share no kernel
run "$KPTPROF" diff "$KPT_DATA/torch_small.kpt" "$KPT_DATA/collector_suite_quick.kpt"
expect_error "diff of two programs" "matched 0 of the baseline's 45 keys and 0 of its own 23: nothing to compare"
expect_err "hint: check that both recordings ran the same program"
run "$KPTPROF" diff "$KPT_DATA/torch_small.kpt" "$KPT_DATA/collector_suite_quick.kpt" --json "$T/e.json"
expect_rc 2 "diff --json of two programs"
python3 -c 'import json,sys; assert json.load(open(sys.argv[1]))["result"]=="error"' "$T/e.json" \
	|| fail "--json of a refused diff is not {\"result\": \"error\"}"
run "$KPTPROF" diff --allow-unmatched "$KPT_DATA/torch_small.kpt" "$KPT_DATA/collector_suite_quick.kpt"
expect_rc 0 "diff --allow-unmatched"
expect_out "GONE"
expect_out "NEW"
# a recording against itself still compares
run "$KPTPROF" diff "$KPT_DATA/torch_small.kpt" "$KPT_DATA/torch_small.kpt"
expect_rc 0 "self diff"
mkdir -p "$T/bl"

# a trace whose one kernel ran outside its step: a recording with 0 keys
python3 - "$T/empty.json" <<'PY'
import json, sys
ev = [
    {"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#1", "pid": 7, "tid": 7, "ts": 0.0, "dur": 100.0},
    {"ph": "X", "cat": "kernel", "name": "k_outside", "pid": 0, "tid": 7, "ts": 200.0, "dur": 50.0,
     "args": {"device": 0, "stream": 7, "correlation": 5, "grid": [1, 1, 1], "block": [32, 1, 1]}},
]
json.dump({"deviceProperties": [{"id": 0, "name": "NVIDIA H100 80GB HBM3", "numSms": 132}],
           "baseTimeNanoseconds": 1764000000000000000, "traceEvents": ev}, open(sys.argv[1], "w"))
PY
run "$KPTPROF" import "$T/empty.json" -o "$T/empty.kpt"
expect_rc 0 "import of a trace with its kernel outside the step"
run "$KPTPROF" diff "$T/empty.kpt" "$T/empty.kpt"
expect_error "diff of 0 keys" "matched 0 of the baseline's 0 keys and 0 of its own 0: nothing to compare"
run "$KPTPROF" diff --allow-unmatched "$T/empty.kpt" "$T/empty.kpt" --json "$T/z.json"
expect_rc 0 "diff --allow-unmatched of 0 keys"
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["keys"]==[], d["keys"]' "$T/z.json" \
	|| fail "a diff of 0 keys has rows"
run "$KPTPROF" baseline update "$T/empty.kpt" --baselines "$T/bl" --suite s
expect_error "baseline update of 0 keys" "holds no kernel key to compare (0 keys)"
[ -z "$(ls -A "$T/bl")" ] || fail "baseline update of 0 keys wrote $(ls -R "$T/bl")"
run "$KPTPROF" history add "$T/empty.kpt" --db "$T/h.db"
expect_error "history add of 0 keys" "holds no kernel key to store (0 keys)"
[ ! -e "$T/h.db" ] || fail "history add of 0 keys made a store"
echo "ok"
