#!/bin/bash
# Packs the history-store fuzzer built here (run-history-fuzz.sh's sanitizer
# build) with the shared libraries it needs beyond the C library into DIR,
# to run it on a machine with many cores but no SQLite or libpq headers (the
# lent GPU machines): there, `DIR/run.sh -j N --count C SECONDS` runs it as
# run-history-fuzz.sh would, on the recordings in tests/data.
#   tests/fuzz/pack-history-fuzz.sh DIR
set -euo pipefail
dir=${1:?usage: pack-history-fuzz.sh DIR}
src=$(cd "$(dirname "$0")/../.." && pwd)
build=${KPT_FUZZ_HISTORY_BUILD:-$src/build-fuzz-history}
[ -x "$build/tests/fuzz_history" ] || { echo "pack-history-fuzz: build $build/tests/fuzz_history first" >&2; exit 2; }
mkdir -p "$dir/lib"
cp "$build/tests/fuzz_history" "$dir/"
ldd "$build/tests/fuzz_history" | awk '$3 ~ /^\// { print $3 }' |
	grep -vE '/(libc|libm|libdl|libpthread|librt|libresolv|ld-linux[^/]*)\.so' | xargs -r cp -L -t "$dir/lib/"
cat >"$dir/run.sh" <<'RUN'
#!/bin/bash
# run.sh [-j N] [--count C] SECONDS [SEED]: the packed history-store fuzzer
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
src=${KPT_SRC:-$(cd "$here/.." && pwd)}
jobs=$(nproc); count=()
while [ $# -gt 0 ]; do
	case $1 in -j) jobs=$2; shift 2 ;; --count) count=(--count "$2"); shift 2 ;; *) break ;; esac
done
secs=${1:-90}; seed=${2:-$(date +%s)}
work=$(mktemp -d /dev/shm/kpt-fuzz-history.XXXXXX)
echo "packed fuzz_history: $secs s, seed $seed, $jobs jobs"
LD_LIBRARY_PATH=$here/lib "$here/fuzz_history" --seed "$seed" --seconds "$secs" "${count[@]}" -j "$jobs" \
	--gnuplot-every 0 "$work/w" "$src/tests/data/copy_base.kpt" "$src/tests/data/copy_plant10_512MiB.kpt"
rc=$?
[ "$rc" = 1 ] && { mkdir -p "${OUT:-/tmp}/fuzz-failures"; cp "$work"/w/fail-*.db "${OUT:-/tmp}/fuzz-failures/" 2>/dev/null; }
rm -rf "$work"
exit $rc
RUN
chmod +x "$dir/run.sh"
du -sh "$dir"
