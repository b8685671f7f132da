# Every command that needs a GPU exits 77 (skipped) on a machine without
# one, with one line saying so: devices, record, gate (without --from), ab.
. "$KPT_SRC/tests/cli/cli_lib.sh"
if [ -e /dev/nvidiactl ] || [ -e /proc/driver/nvidia/version ]; then
	skip "this machine has an NVIDIA driver"
fi

run "$KPTPROF" devices
expect_rc 77 "devices without a GPU"
expect_err "kptprof: no NVIDIA driver"
[ ! -s "$T/out" ] || fail "devices without a GPU wrote to stdout: $(cat "$T/out")"

# record: a collector and a runner that exist, so that the GPU check decides
run env KPTPROF_INJECT=/dev/null KPTPROF_WORKLOADS=/bin/true "$KPTPROF" record --suite quick -o "$T/r.kpt"
expect_rc 77 "record without a GPU"
expect_err "no NVIDIA driver"
[ -e "$T/r.kpt" ] && fail "record without a GPU wrote '$T/r.kpt'"

mkdir -p "$T/bl"
run "$KPTPROF" gate --suite quick --baselines "$T/bl"
expect_rc 77 "gate without a GPU"
run "$KPTPROF" ab --runs 2 -- /bin/true ::: /bin/true
expect_rc 77 "ab without a GPU"
exit 0
