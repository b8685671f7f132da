#!/usr/bin/env bash
# The gate compares something, and knows the same machine when it sees it
# (issue 20): a recording of no suite is never gated against `default`;
# fewer than half of the keys matched is exit 2, never a pass; base and new
# of one GPU and boot are compared with no between-machine part (real
# recordings: the counters pair, one machine, minutes apart, copy +10% by
# real extra work), and --other-machine turns that off; --against needs a
# GPU (77) and is not combined with --from.
. "$(dirname "$0")/cli_lib.sh"
D=$KPT_DATA

# a user program's recording: no suite, so no default baseline
run "$KPTPROF" gate --from "$D/torch_small.kpt"
expect_error "gate --from a program" "is not a recording of a suite"
# named, but nothing matches: an error, not "no regression"
run "$KPTPROF" gate --from "$D/torch_small.kpt" --suite default --baselines "$KPT_SRC/baselines" --json "$T/g.json"
# (after gate's progress line naming what it compares)
expect_rc 2 "gate of nothing matched"
[ ! -s "$T/out" ] || fail "an unmatched gate wrote to stdout"
[ "$(grep -vc -e '^hint: ' -e '^kptprof gate: ' "$T/err")" = 1 ] || fail "not one error line: $(cat "$T/err")"
expect_err "matched 0 of the baseline's"
grep -q '"result": *"error"' "$T/g.json" || fail "gate --json of an unmatched gate: $(head -c 300 "$T/g.json")"

# the same GPU and boot: compared with that session alone, no machine part
run "$KPTPROF" diff "$D/counters_pair_base_h100.kpt" "$D/counters_pair_plant_h100.kpt"
expect_rc 1 "same-machine diff of the planted copy"
expect_out "same GPU (UUID) and boot as 1 of the base's 1 session"
grep -E '^copy_vec.* SLOW$' "$T/out" >/dev/null || fail "copy +10% not SLOW on the same machine: $(grep copy_vec "$T/out")"
run "$KPTPROF" diff "$D/counters_pair_base_h100.kpt" "$D/counters_pair_plant_h100.kpt" --other-machine
expect_out "base holds one session: the between-machine part of the noise is a prior"
! grep -q "same GPU (UUID) and boot" "$T/out" || fail "--other-machine still used the same-machine case"

# diff X X: every key whose run-to-run noise is under its threshold is SAME
run "$KPTPROF" diff "$D/heldout_h100_pool.kpt" "$D/heldout_h100_pool.kpt" --all --json "$T/xx.json" --quiet
expect_rc 0 "diff X X"
python3 - "$T/xx.json" <<'PY' || fail "diff X X: a quiet key is not SAME"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["model"]["machine"] == "same_boot", d["model"]
rows = d["keys"]
bad = [r for r in rows if r["verdict"] != "SAME" and r.get("noise_pct", 99) * 2.5 < r["threshold_pct"]]
assert not bad, [(r["name"][:40], r["verdict"], r["noise_pct"]) for r in bad]
assert sum(r["verdict"] == "SAME" for r in rows) > 0.8 * len(rows)
PY

# --against: both builds run here, so it needs a GPU; never with --from
run "$KPTPROF" gate --against "$KPT_BUILD" --from "$D/heldout_h100_pool.kpt"
expect_error "gate --against --from" "--against runs both builds here"
# --settle-us says how to record: nothing is recorded with --from
run "$KPTPROF" gate --settle-us 1000 --from "$D/heldout_h100_pool.kpt"
expect_error "gate --settle-us with --from" "--settle-us is how to record: not with --from"

# an idle gap before each timed iteration other than the baseline's: the
# compute-bound kernels ran in another power state, so a gate refuses it
# (exit 2, one line), a diff says so in a note and compares
need_synth
S=("$KPT_BUILD/kpt-synth" --runs 3 --iterations 10 --names 6 --suite default)
mkdir -p "$T/bl/nvidia-h100-80gb-hbm3/default"
"${S[@]}" -o "$T/bl/nvidia-h100-80gb-hbm3/default/20261126T000000Z-a.kpt" --meta settle_us=3000 --seed 1 || fail "kpt-synth base"
"${S[@]}" -o "$T/gap0.kpt" --seed 2 || fail "kpt-synth new (no gap)"
"${S[@]}" -o "$T/gap3000.kpt" --meta settle_us=3000 --seed 3 || fail "kpt-synth new (gap)"
run "$KPTPROF" gate --from "$T/gap0.kpt" --baselines "$T/bl"
expect_rc 2 "gate of another idle gap"
[ "$(grep -vc -e '^hint: ' -e '^kptprof gate: ' "$T/err")" = 1 ] || fail "not one error line: $(cat "$T/err")"
expect_err "recorded with 0 us idle before each timed iteration, the baseline with 3000 us"
run "$KPTPROF" gate --from "$T/gap3000.kpt" --baselines "$T/bl"
[ "$RC" != 2 ] || fail "gate of the same idle gap refused: $(cat "$T/err")"
run "$KPTPROF" diff "$T/bl/nvidia-h100-80gb-hbm3/default" "$T/gap0.kpt"
[ "$RC" != 2 ] || fail "diff of another idle gap refused: $(cat "$T/err")"
expect_out "idle gap before each timed iteration: base 3000 us, new 0 us"
run "$KPTPROF" gate --against "$KPT_BUILD" --settle-us 2000000
expect_rc 2 "gate --settle-us out of range"
if [ ! -e /dev/nvidiactl ] && [ ! -e /proc/driver/nvidia/version ]; then
	run "$KPTPROF" gate --against "$KPT_BUILD"
	expect_rc 77 "gate --against without a GPU"
fi
# baseline update says when a folder's sessions would mix idle gaps
run "$KPTPROF" baseline update "$T/gap0.kpt" --baselines "$T/bl"
expect_rc 0 "baseline update of another idle gap"
expect_err "1 other session of '$T/bl/nvidia-h100-80gb-hbm3/default' was recorded with another idle gap"
echo ok
