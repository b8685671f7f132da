#!/bin/bash
# Fuzzes the history store for SECONDS (default 90): fuzz_history
# (tests/fuzz/fuzz_history.c) mutates copies of a small SQLite store and
# runs history ls/show/detect, gate --db, view --db and history add on
# each, under AddressSanitizer and UBSan.
#   tests/fuzz/run-history-fuzz.sh [-j N] [--count N] [SECONDS [SEED]]
# -j N: N workers (default: the number of CPUs); --count N: stop after N
# stores (or at SECONDS, whichever comes first).
# The build is $KPT_FUZZ_HISTORY_BUILD (default build-fuzz-history/),
# configured with -DKPT_SANITIZE=ON -DKPT_CUDA=OFF when it has no
# fuzz_history yet; .ci/run points it at its sanitizer build. SEED
# (default: the time) is printed; a failing store is named by its own seed
# and remade with: fuzz_history --seed N --count 1 WORKDIR BASE NEW.
# $KPT_FUZZ_HISTORY_LIBS: a folder put on LD_LIBRARY_PATH for fuzz_history
# alone (a build packed with its libraries: pack-history-fuzz.sh);
# $KPT_FUZZ_GNUPLOT_EVERY: fuzz_history's --gnuplot-every (0: no gnuplot).
# The stores live in /dev/shm when it is there ($TMPDIR otherwise): history
# add syncs each store, and a disk's syncs are not what is tested.
# Exit 0: no failure; 1: a crash, sanitizer report, odd exit or hang
# (seed and stderr printed); 2: could not build or set up.
set -euo pipefail
jobs=$(nproc 2>/dev/null || echo 1)
count=()
while [ $# -gt 0 ]; do
	case $1 in
	-j) [[ ${2:-} =~ ^[0-9]+$ ]] || { echo "run-history-fuzz.sh: -j needs a number" >&2; exit 2; }
		jobs=$2; shift 2 ;;
	--count) [[ ${2:-} =~ ^[0-9]+$ ]] || { echo "run-history-fuzz.sh: --count needs a number" >&2; exit 2; }
		count=(--count "$2"); shift 2 ;;
	*) break ;;
	esac
done
secs=${1:-90}
seed=${2:-$(date +%s)}
src=$(cd "$(dirname "$0")/../.." && pwd)
build=${KPT_FUZZ_HISTORY_BUILD:-$src/build-fuzz-history}
if [ ! -x "$build/tests/fuzz_history" ]; then
	cmake -S "$src" -B "$build" -DKPT_SANITIZE=ON -DKPT_CUDA=OFF -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null || exit 2
	cmake --build "$build" -j2 --target fuzz_history || exit 2
fi
tmp=${TMPDIR:-/tmp}
[ -d /dev/shm ] && [ -w /dev/shm ] && tmp=/dev/shm
work=$(mktemp -d "$tmp/kpt-fuzz-history.XXXXXX")
trap 'rm -rf "$work"' EXIT
echo "run-history-fuzz: $secs s from seed $seed in $work, $jobs job(s)"
rc=0
gp=()
[ -n "${KPT_FUZZ_GNUPLOT_EVERY:-}" ] && gp=(--gnuplot-every "$KPT_FUZZ_GNUPLOT_EVERY")
env ${KPT_FUZZ_HISTORY_LIBS:+LD_LIBRARY_PATH="$KPT_FUZZ_HISTORY_LIBS"} \
	"$build/tests/fuzz_history" --seed "$seed" --seconds "$secs" "${count[@]}" -j "$jobs" "${gp[@]}" "$work/w" \
	"$src/tests/data/copy_base.kpt" "$src/tests/data/copy_plant10_512MiB.kpt" || rc=$?
if [ "$rc" = 1 ]; then
	mkdir -p "$build/fuzz-history-failures"
	cp "$work"/w/fail-*.db "$build/fuzz-history-failures/" 2>/dev/null || true
	echo "run-history-fuzz: failing stores kept in $build/fuzz-history-failures/"
fi
exit "$rc"
