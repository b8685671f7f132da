#!/usr/bin/env bash
# report's "probes" line (meta calibration.*, docs/counters.md "Ceilings"):
# shown with the medians and where they were measured when a recording has
# them; absent without them; values that are not finite numbers > 0 are not
# shown as numbers; a hostile "where" is printed cleaned (no escape bytes).
. "$KPT_SRC/tests/cli/cli_lib.sh"
need_synth
S=$KPT_BUILD/kpt-synth
"$S" -o "$T/p.kpt" --runs 5 --seed 3 --probes 3703.4:762.2:1323.2:1973.1 >/dev/null || fail "kpt-synth"
run "$KPTPROF" report "$T/p.kpt" --top 1
expect_rc 0 "report with probes"
grep -qx "probes    copy 3703 GB/s, bf16 762, e4m3 1323 TFLOP/s, SM 1973 MHz under load (median of 5 runs, in each run)" \
	"$T/out" || fail "no probes line: $(grep -n probes "$T/out")"
"$S" -o "$T/none.kpt" --runs 2 --seed 3 >/dev/null || fail "kpt-synth"
run "$KPTPROF" report "$T/none.kpt" --top 1
expect_rc 0 "report without probes"
grep -q "^probes" "$T/out" && fail "a probes line without probes"
# before compute capability 8.9: no e4m3 probe
"$S" -o "$T/a100.kpt" --runs 2 --seed 3 --probes 1800:280:0:1400 >/dev/null || fail "kpt-synth"
run "$KPTPROF" report "$T/a100.kpt" --top 1
grep -q "^probes    copy 1800 GB/s, bf16 280 TFLOP/s, SM 1400 MHz under load" "$T/out" || fail "no e4m3: $(grep probes "$T/out")"
# junk values and a hostile where
"$S" -o "$T/junk.kpt" --runs 2 --seed 3 --meta calibration.copy_gbps=inf --meta calibration.bf16_tflops=-800 \
	--meta calibration.fp8_tflops=1610abc --meta calibration.sm_mhz=nan >/dev/null || fail "kpt-synth"
run "$KPTPROF" report "$T/junk.kpt" --top 1
expect_rc 0 "report with junk probes"
grep -q "^probes" "$T/out" && fail "junk probes shown: $(grep probes "$T/out")"
"$S" -o "$T/evil.kpt" --runs 2 --seed 3 --probes 1:2:3:4 --probe-where "$(printf 'x\033]0;pwned\007y')" >/dev/null ||
	fail "kpt-synth"
run "$KPTPROF" report "$T/evil.kpt" --top 1
grep "^probes" "$T/out" | grep -q "$(printf '\033')" && fail "an escape byte reached the terminal"
grep -q "^probes    copy 1 GB/s" "$T/out" || fail "no probes line for the hostile where"
echo ok
