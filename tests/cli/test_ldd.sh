# kptprof must start without a GPU driver: it links no CUDA driver, runtime,
# CUPTI or NVML library (docs/architecture.md), directly or through its dependencies.
. "$KPT_SRC/tests/cli/cli_lib.sh"
command -v ldd >/dev/null || skip "ldd is not installed"

ldd "$KPTPROF" >"$T/ldd" 2>&1 || fail "ldd failed: $(cat "$T/ldd")"
if grep -Ei 'libcuda\.|libcudart|libcupti|libnvidia-ml|libnvperf' "$T/ldd"; then
	fail "kptprof links a CUDA/CUPTI/NVML library"
fi
if command -v readelf >/dev/null; then
	readelf -d "$KPTPROF" | grep NEEDED >"$T/needed"
	! grep -Ei 'cuda|cupti|nvidia-ml|nvperf' "$T/needed" || fail "NEEDED lists a CUDA library"
fi
# and it runs: no driver here, or not needed
env -u LD_LIBRARY_PATH "$KPTPROF" version >/dev/null || fail "kptprof does not start"
exit 0
