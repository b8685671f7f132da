#!/usr/bin/env bash
# record --sample-every/--sample-steps/--on-demand and `kptprof trigger`
# without a GPU: option errors, pids that are no recording, --list, and a
# request answered end to end by a stand-in traced process
# (tests/cli/kpt_fake_traced.c polls and acks through lib/kpt_control.h)
# under `kptprof record --on-demand` with a stand-in collector.
. "$KPT_SRC/tests/cli/cli_lib.sh"
FAKE=$KPT_BUILD/tests/kpt_fake_traced
[ -x "$FAKE" ] || skip "kpt_fake_traced is not built"
: >"$T/libkptinject.so"
export KPTPROF_INJECT=$T/libkptinject.so KPTPROF_SKIP_GPU_CHECK=1
mkdir -m 700 "$T/xdg"
export XDG_RUNTIME_DIR=$T/xdg

bad() {
	local want=$1
	shift
	run "$KPTPROF" record -o "$T/w.kpt" "$@" -- sh -c 'touch "$0"' "$T/ran"
	expect_error "record $*" "$want"
	[ ! -e "$T/ran" ] || fail "record $* ran the program"
}
bad "bad --sample-every '0'" --sample-every 0
bad "bad --sample-every 'x'" --sample-every x
bad "bad --sample-steps '0'" --sample-every 1 --sample-steps 0
bad "--sample-steps needs --sample-every or --on-demand" --sample-steps 2
bad "--on-demand and --steps exclude each other" --on-demand --steps 1-2
bad "--sample-every and --every exclude each other" --sample-every 2 --every 3
bad "not with --capture-range cudaProfilerApi" --on-demand --capture-range cudaProfilerApi
bad "--sample-every and --delay or --duration exclude each other" --sample-every 2 --duration 3

# every error of trigger: "kptprof trigger: <problem>" (+ hint), exit 2
trig_error() {
	local what=$1 want=$2
	shift 2
	run "$KPTPROF" trigger "$@"
	expect_error "$what" "$want"
	head -n1 "$T/err" | grep -q '^kptprof trigger: ' || fail "$what: not 'kptprof trigger: ': $(head -n1 "$T/err")"
}
trig_error "trigger --steps 0" "--steps" --steps 0
trig_error "trigger --wait -1" "bad --wait '-1'" --wait -1
trig_error "trigger --wait x" "bad --wait 'x'" --wait x
trig_error "trigger 12x" "bad pid '12x'" 12x
trig_error "trigger of two pids" "one pid at most" 1 2
trig_error "trigger --list with a pid" "'--list' takes no pid" --list 1
trig_error "trigger of no process" "no process '999999999'" 999999999
sleep 30 &
SLEEPER=$!
trig_error "trigger of a process without the environment" "process '$SLEEPER' is not under kptprof record --on-demand" $SLEEPER
kill $SLEEPER
run "$KPTPROF" trigger --list
expect_rc 0 "trigger --list"
expect_out "no on-demand recording of this user is running"
trig_error "trigger with none running" "no on-demand recording"
# a control folder that is not ours: open to others, a link
mkdir -m 700 "$T/xdg/kptprof"
chmod 755 "$T/xdg/kptprof"
trig_error "trigger --list, base folder open to others" "control folder '$T/xdg/kptprof' is not private" --list
trig_error "trigger, base folder open to others" "control folder '$T/xdg/kptprof' is not private"
chmod 700 "$T/xdg/kptprof"
mkdir -m 700 "$T/elsewhere"
ln -s "$T/elsewhere" "$T/xdg/kptprof/$$"
trig_error "trigger of a linked folder" "control folder '$T/xdg/kptprof/$$' is a symbolic link: refused" $$ --wait 0
[ ! -e "$T/elsewhere/request" ] || fail "trigger wrote through a linked control folder"
rm "$T/xdg/kptprof/$$"

# --list piped: the whole command, however long; fitted to a width when given
LONG=long-argument-$(printf 'x%.0s' $(seq 300))-end
sh -c 'sleep 30; :' "$LONG" >"$T/sh.out" 2>&1 &
LISTED=$!
for _ in $(seq 100); do grep -q -- -end "/proc/$LISTED/cmdline" 2>/dev/null && break; sleep 0.05; done
mkdir -m 700 "$T/xdg/kptprof/$LISTED"
run "$KPTPROF" trigger --list
expect_rc 0 "trigger --list piped"
grep -q "^$LISTED .* sh -c sleep 30; : $LONG\$" "$T/out" || { kill $LISTED; fail "--list piped cut the command: $(cat "$T/out")"; }
KPTPROF_COLUMNS=80 run "$KPTPROF" trigger --list
grep -q "^$LISTED .*\.\.\..*-end\$" "$T/out" || { kill $LISTED; fail "--list did not fit 80 columns: $(cat "$T/out")"; }
[ "$(awk '{ if (length($0) > 80) n++ } END { print n + 0 }' "$T/out")" = 0 ] ||
	{ kill $LISTED; fail "--list wider than 80 columns: $(cat "$T/out")"; }
LISTED_CHILD=$(cat "/proc/$LISTED/task/$LISTED/children" 2>/dev/null)
kill $LISTED $LISTED_CHILD
wait $LISTED 2>/dev/null
# its pid gone (as after a SIGKILL), --list removes the folder it left
run "$KPTPROF" trigger --list
expect_out "no on-demand recording of this user is running"
[ ! -e "$T/xdg/kptprof/$LISTED" ] || fail "--list left the folder of a recording that is gone"

# the environment record gives the program
run "$KPTPROF" record -o "$T/w.kpt" --sample-every 2.5 --sample-steps 3 -- sh -c 'env >"$0"' "$T/env"
for kv in KPT_SAMPLE_EVERY=2.5 KPT_SAMPLE_STEPS=3; do
	grep -qx -- "$kv" "$T/env" || fail "the program's environment lacks $kv: $(grep ^KPT_ "$T/env")"
done
grep -q "^KPT_CONTROL_DIR=$T/xdg/kptprof/" "$T/env" || fail "no KPT_CONTROL_DIR: $(grep ^KPT_ "$T/env")"
[ -z "$(ls "$T/xdg/kptprof")" ] || fail "record left its control folder: $(ls "$T/xdg/kptprof")"

# end to end: record --on-demand runs a stand-in traced process; trigger asks, it acks
"$KPTPROF" record -o "$T/od.kpt" --on-demand -- "$FAKE" 20 2 >"$T/fake.out" 2>"$T/rec.err" &
REC=$!
for _ in $(seq 200); do grep -q ready "$T/fake.out" 2>/dev/null && break; sleep 0.05; done
grep -q ready "$T/fake.out" || { kill $REC; fail "the stand-in did not start: $(cat "$T/rec.err")"; }
grep -qx "kptprof record: on demand: kptprof trigger $REC --steps 1" "$T/rec.err" ||
	{ kill $REC; fail "record did not say how to trigger: $(cat "$T/rec.err")"; }
run "$KPTPROF" trigger --list
expect_rc 0 "trigger --list with one"
grep -q "^$REC .*record -o $T/od.kpt --on-demand" "$T/out" || { kill $REC; fail "--list lacks the recording: $(cat "$T/out")"; }
run "$KPTPROF" trigger --steps 4 --wait 10
[ "$RC" = 0 ] || { kill $REC; fail "trigger exit $RC: $(cat "$T/err")"; }
grep -Eq '^pid [0-9]+: capture from step 101, [0-9]+ ms after the request$' "$T/out" ||
	{ kill $REC; fail "trigger did not print the ack: $(cat "$T/out")"; }
grep -qx "request 1: 4 steps" "$T/fake.out" || { kill $REC; fail "the stand-in saw no 4-step request: $(cat "$T/fake.out")"; }
# by the record's pid, then the stand-in exits and record removes the folder
run "$KPTPROF" trigger $REC --wait 10
[ "$RC" = 0 ] || { kill $REC; fail "trigger $REC exit $RC: $(cat "$T/err")"; }
expect_out "capture from step 102"
wait $REC
[ -z "$(ls "$T/xdg/kptprof")" ] || fail "record left its control folder: $(ls "$T/xdg/kptprof")"
# a trigger nobody answers: exit 1, said
mkdir -m 700 "$T/xdg/kptprof/$$"
run "$KPTPROF" trigger $$ --wait 0.2
expect_rc 1 "unanswered trigger"
expect_err "no process began a capture"
echo ok
