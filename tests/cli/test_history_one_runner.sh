# history detect on a store fed by one runner (issue 40 (c)): the sessions of
# one machine (here imported torch.profiler traces of one host: their
# machine facts make them one machine) need no 3-machine minimum; detect
# says which mode it used; a +5% step of the 203 us GEMM in the last four
# sessions exits 1, the same history without it exits 0. The rates of the
# rule on 20 + 20 one-machine histories: tests/unit/test_history_pool.c.
. "$KPT_SRC/tests/cli/cli_lib.sh"
need_python
G=$KPT_SRC/tests/synth/kineto_trace.py
"$KPTPROF" history ls --db "$T/x.db" 2>&1 | grep -q "built without SQLite" && skip "kptprof is built without SQLite"

for i in $(seq 1 12); do
	python3 "$G" -o "$T/u$i.json.gz" --seed $((700 + i)) --pid $((100 + i)) --steps 20 --host runner-1 || fail "kineto_trace.py"
	slow=0
	[ "$i" -gt 8 ] && slow=5
	python3 "$G" -o "$T/p$i.json.gz" --seed $((700 + i)) --pid $((100 + i)) --steps 20 --host runner-1 --slow $slow ||
		fail "kineto_trace.py --slow"
	for h in u p; do
		"$KPTPROF" import "$T/$h$i.json.gz" -o "$T/$h$i.kpt" 2>"$T/err" || {
			grep -q "built without zlib" "$T/err" && skip "kptprof is built without zlib"
			fail "import $h$i: $(cat "$T/err")"
		}
		run "$KPTPROF" history add "$T/$h$i.kpt" --db "$T/$h.db" --commit "c$i" --suite torch
		expect_rc 0 "history add $h$i"
	done
done

run "$KPTPROF" history detect --db "$T/u.db"
expect_rc 0 "detect, one runner, no change"
expect_out "mode: one runner (1 machine): its session-to-session noise is the noise"
run "$KPTPROF" history detect --db "$T/u.db" --format json
python3 -c 'import json,sys; g=json.load(open(sys.argv[1]))["groups"][0]; assert (g["mode"], g["machines"], g["min_machines_used"]) == ("one_runner", 1, 1), g' "$T/out" \
	|| fail "detect --format json does not say one runner: $(head -c 400 "$T/out")"

run "$KPTPROF" history detect --db "$T/p.db"
expect_rc 1 "detect, one runner, +5% at the head"
expect_out "mode: one runner (1 machine)"
grep "ampere_bf16_s16816gemm_bf16_128x256_ldg8_f2f_stages_64x3_tn" "$T/out" | grep -q "c9" \
	|| fail "the step is not found at c9: $(cat "$T/out")"
run "$KPTPROF" history detect --db "$T/p.db" --format json
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["result"]=="regression" and d["head_regressions"]>=1, d' "$T/out" \
	|| fail "detect --format json of the step"
echo "ok"
