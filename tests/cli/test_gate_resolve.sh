#!/usr/bin/env bash
# gate resolves run-noise AMBG keys itself (issue 35): more runs of their
# workloads (here from --resolve-from, the test hook standing in for the
# recorder), appended to the candidate, looked at again at alpha/(1+rounds);
# a key decided in the first look keeps its verdict; keys AMBG by machine
# noise are not re-recorded and the gate names the mode that hears them;
# --resolve-rounds and --resolve-time cap the extra rounds.
. "$(dirname "$0")/cli_lib.sh"
need_synth
need_python
S=("$KPT_BUILD/kpt-synth" --iterations 10 --names 12 --suite default --seed 2)
BL="$T/bl/nvidia-h100-80gb-hbm3/default"
mkdir -p "$BL"
# one machine and boot: base 6 runs, the candidate 2 (many AMBG by run
# noise), extra runs 5 per round
"${S[@]}" --meta boot_id=b1 --runs 6 --noise 1 -o "$BL/20261126T000000Z-a.kpt" || fail "kpt-synth base"
"${S[@]}" --meta boot_id=b1 --runs 2 --noise 1.6 -o "$T/cand.kpt" || fail "kpt-synth candidate"
"${S[@]}" --meta boot_id=b1 --runs 5 --noise 1.2 -o "$T/more.kpt" || fail "kpt-synth more"
G=("$KPTPROF" gate --from "$T/cand.kpt" --baselines "$T/bl")

run "${G[@]}" --resolve-rounds 0 --json "$T/r0.json"
expect_rc 0 "gate without resolution"
run "${G[@]}" --resolve-from "$T/more.kpt" --json "$T/r2.json" --markdown "$T/r2.md" --all
expect_rc 0 "gate with 2 rounds"
expect_err "kptprof gate: resolving 8 AMBG keys: recording 5 more runs of synth.workload (round 1 of 2)"
expect_err "(round 2 of 2)"
grep -q "settled in round [12]" "$T/r2.md" || fail "markdown names no settled round"
run "${G[@]}" --resolve-from "$T/more.kpt" --all
grep -q "SAME (settled in round [12])" "$T/out" || fail "the table names no settled round: $(head -c 600 "$T/out")"
run "${G[@]}" --resolve-from "$T/more.kpt" --resolve-rounds 1 --json "$T/r1.json"
expect_rc 0 "gate with 1 round"
! grep -q "round 2" "$T/err" || fail "--resolve-rounds 1 recorded a second round"
run "${G[@]}" --resolve-from "$T/more.kpt" --resolve-time 0 --json "$T/rt.json"
expect_rc 0 "gate with no time for resolution"
expect_err "resolve budget"
! grep -q "resolving" "$T/err" || fail "--resolve-time 0 recorded more runs"

python3 - "$T/r0.json" "$T/r2.json" "$T/r1.json" "$T/rt.json" <<'PY' || fail "resolution"
import json, sys
r0, r2, r1, rt = (json.load(open(p)) for p in sys.argv[1:])
assert "resolve" not in r0, "resolve-rounds 0 wrote a resolve object"
def key(r): return (r["mangled"], r["path"], r["ordinal"], tuple(r["grid"]), tuple(r["block"]))
v0 = {key(r): r for r in r0["keys"]}
# chased: AMBG by run noise that more runs can settle (more_runs under its
# cap of 1000); the 5 others of the 13 stay AMBG untouched
amb0 = [k for k, r in v0.items() if r["verdict"] == "AMBG" and not r["machine_limited"] and r["more_runs"] < 1000]
stuck = [k for k, r in v0.items() if r["verdict"] == "AMBG" and not r["machine_limited"] and r["more_runs"] >= 1000]
assert len(stuck) == 5, len(stuck)
for d, rounds in ((r2, 2), (r1, 1), (rt, 0)):
    rs = d["resolve"]
    assert rs["rounds"] == rounds, (rs, rounds)
    assert rs["keys_ambg_run_noise_initial"] == len(amb0) == 8, rs
    assert rs["extra_runs"] == 5 * rounds, rs
    assert abs(rs["alpha_relook"] - 0.05 / 3) < 1e-12 or rounds < 2, rs
    settled = 0
    for r in d["keys"]:
        k = key(r)
        if v0[k]["verdict"] != "AMBG" or k in stuck:
            # a first-look verdict never changes
            # a first-look verdict never changes, nor a key not chased
            assert r["verdict"] == v0[k]["verdict"] and "settled_round" not in r, (k, r["verdict"])
        elif r["verdict"] != "AMBG":
            assert 1 <= r["settled_round"] <= rounds, r
            settled += 1
    assert settled == rs["settled"], (settled, rs)
    assert d["counts"]["AMBG"] == r0["counts"]["AMBG"] - settled
assert r2["resolve"]["settled"] >= 3, r2["resolve"]
PY

# another boot: the between-machine prior makes every key AMBG by machine
# noise: nothing re-recorded, one line names the modes that hear them
"${S[@]}" --runs 2 --noise 1.6 -o "$T/candm.kpt" || fail "kpt-synth other-machine candidate"
run "$KPTPROF" gate --from "$T/candm.kpt" --baselines "$T/bl" --resolve-from "$T/more.kpt" --json "$T/m.json"
expect_rc 0 "gate of machine-limited keys"
! grep -q "resolving" "$T/err" || fail "machine-limited keys were re-recorded"
expect_err "AMBG by machine noise (not re-recorded"
expect_err "'kptprof gate --against REF' or 'kptprof ab'"
python3 -c "
import json, sys
d = json.load(open(sys.argv[1]))
assert d['resolve']['rounds'] == 0 and d['resolve']['keys_ambg_run_noise_initial'] == 0, d['resolve']
assert all(r['machine_limited'] for r in d['keys'] if r['verdict'] == 'AMBG')
" "$T/m.json" || fail "machine-limited keys in the json"

# --against pairs both revisions: no extra rounds of one side
run "$KPTPROF" gate --against HEAD --resolve-rounds 1
expect_error "gate --against --resolve-rounds" "--resolve-rounds records more runs against a committed baseline: not with --against"
# a report never over the recording the extra runs come from
cp "$T/more.kpt" "$T/more2.kpt"
run "${G[@]}" --resolve-from "$T/more2.kpt" --json "$T/more2.kpt"
expect_rc 2 "gate --json over --resolve-from"
cmp -s "$T/more.kpt" "$T/more2.kpt" || fail "gate wrote over the --resolve-from recording"
echo ok
