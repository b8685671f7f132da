# kptprof record --kinds LIST without a GPU: the list is checked before
# anything runs (exit 2, one line naming the bad word), and reaches the
# target as KPT_ACTIVITY_KINDS in the timing runs only, through a stand-in
# target that plays the collector's part (writes its recording to
# KPT_OUTPUT, as libkptinject.so does).
. "$KPT_SRC/tests/cli/cli_lib.sh"

cat >"$T/touch.sh" <<'SH'
#!/bin/bash
touch "$FAKE_DIR/ran"
SH
chmod +x "$T/touch.sh"
export FAKE_DIR="$T"

run "$KPTPROF" record --kinds bogus -- true
expect_error "unknown kind" "'bogus'"
run "$KPTPROF" record --kinds=kernel,bogus,memset -- "$T/touch.sh"
expect_error "unknown kind in a list" "'bogus'"
grep -qF "'kernel,bogus" "$T/err" && fail "the error quotes the list, not the bad word: $(cat "$T/err")"
run "$KPTPROF" record --kinds kernel,,sync -- "$T/touch.sh"
expect_error "empty item" "empty item"
run "$KPTPROF" record --kinds= -- "$T/touch.sh"
expect_error "empty list" "empty --kinds"
run "$KPTPROF" record --kinds Kernel --suite default
expect_error "words are lowercase" "'Kernel'"
run "$KPTPROF" record --kinds
expect_error "no value" "option '--kinds' needs a value"
[ ! -e "$T/ran" ] || fail "a bad --kinds still ran the target"

need_synth
"$KPT_BUILD/kpt-synth" -o "$T/timing.kpt" --runs 1 --iterations 2 --names 3 >/dev/null || fail "kpt-synth"
cat >"$T/target.sh" <<'SH'
#!/bin/bash
# Stand-in CUDA program: notes what it was given, records like the collector.
out=${KPT_OUTPUT//%p/$$}
st=${KPT_STATUS//%p/$$}
if [ -n "${KPT_COUNTERS:-}" ]; then
	echo "${KPT_ACTIVITY_KINDS-unset}" >"$FAKE_DIR/kinds.counters"
	printf "error notfound counter 'x' is unknown on this GPU\n" >"$st"
	exit 0
fi
echo "${KPT_ACTIVITY_KINDS-unset}" >>"$FAKE_DIR/kinds.timing"
cp "$FAKE_DIR/timing.kpt" "$out" && echo "ok $out" >"$st"
SH
chmod +x "$T/target.sh"
export KPTPROF_SKIP_GPU_CHECK=1 KPTPROF_INJECT="$T/target.sh"
unset KPT_ACTIVITY_KINDS

kinds() { cat "$T/kinds.$1" 2>/dev/null | tr '\n' ' '; rm -f "$T/kinds.$1"; }

run "$KPTPROF" record -o "$T/k.kpt" --runs 2 --kinds kernel,memcpy -- "$T/target.sh"
expect_rc 0 "--kinds kernel,memcpy"
got=$(kinds timing); [ "$got" = "kernel,memcpy kernel,memcpy " ] || fail "KPT_ACTIVITY_KINDS in the runs: $got"

# A program gets kernels only by default (memcpy, memset and sync are opt-in:
# they cost a launch-bound step +18%); --kinds all asks for the four.
run "$KPTPROF" record -o "$T/k.kpt" -- "$T/target.sh"
expect_rc 0 "no --kinds"
got=$(kinds timing); [ "$got" = "kernel " ] || fail "KPT_ACTIVITY_KINDS without --kinds: $got"
run "$KPTPROF" record -o "$T/k.kpt" --kinds all -- "$T/target.sh"
expect_rc 0 "--kinds all"
got=$(kinds timing); [ "$got" = "all " ] || fail "KPT_ACTIVITY_KINDS with --kinds all: $got"

# Without --kinds an inherited value is left alone (scripts/gpu/collector.sh
# sets it around record); --kinds replaces it.
KPT_ACTIVITY_KINDS=sync run "$KPTPROF" record -o "$T/k.kpt" -- "$T/target.sh"
expect_rc 0 "inherited KPT_ACTIVITY_KINDS"
got=$(kinds timing); [ "$got" = "sync " ] || fail "inherited KPT_ACTIVITY_KINDS changed: $got"
KPT_ACTIVITY_KINDS=sync run "$KPTPROF" record -o "$T/k.kpt" --kinds memset -- "$T/target.sh"
expect_rc 0 "--kinds over an inherited value"
got=$(kinds timing); [ "$got" = "memset " ] || fail "--kinds did not replace the inherited value: $got"

# The counters pass enables no activity: it never gets the list.
KPT_ACTIVITY_KINDS=sync run "$KPTPROF" record -o "$T/c.kpt" --kinds kernel --counters -- "$T/target.sh"
expect_error "counters pass" "counter 'x' is unknown"
got=$(kinds timing); [ "$got" = "kernel " ] || fail "timing run of --counters: $got"
got=$(kinds counters); [ "$got" = "unset " ] || fail "the counters pass got KPT_ACTIVITY_KINDS=$got"
exit 0
