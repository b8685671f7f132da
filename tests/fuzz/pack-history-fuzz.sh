#!/bin/bash
# Packs the history-store fuzzer built here (run-history-fuzz.sh's sanitizer
# build) with the shared libraries it needs beyond the C library into DIR,
# to run it on a machine with many cores but no SQLite or libpq headers (the
# lent GPU machines): there, from a checkout, `DIR/run.sh -j N --count C
# SECONDS` is run-history-fuzz.sh on the packed build (no gnuplot).
#   tests/fuzz/pack-history-fuzz.sh DIR
set -euo pipefail
dir=${1:?usage: pack-history-fuzz.sh DIR}
src=$(cd "$(dirname "$0")/../.." && pwd)
build=${KPT_FUZZ_HISTORY_BUILD:-$src/build-fuzz-history}
[ -x "$build/tests/fuzz_history" ] || { echo "pack-history-fuzz: build $build/tests/fuzz_history first" >&2; exit 2; }
mkdir -p "$dir/lib" "$dir/tests"
cp "$build/tests/fuzz_history" "$dir/tests/"
ldd "$build/tests/fuzz_history" | awk '$3 ~ /^\// { print $3 }' |
	grep -vE '/(libc|libm|libdl|libpthread|librt|libresolv|ld-linux[^/]*)\.so' | xargs -r cp -L -t "$dir/lib/"
cat >"$dir/run.sh" <<'RUN'
#!/bin/bash
# run.sh [-j N] [--count C] SECONDS [SEED]: run-history-fuzz.sh on this packed build
here=$(cd "$(dirname "$0")" && pwd)
src=${KPT_SRC:-$(cd "$here/.." && pwd)}
KPT_FUZZ_HISTORY_BUILD=$here KPT_FUZZ_HISTORY_LIBS=$here/lib KPT_FUZZ_GNUPLOT_EVERY=${KPT_FUZZ_GNUPLOT_EVERY:-0} \
	exec "$src/tests/fuzz/run-history-fuzz.sh" "$@"
RUN
chmod +x "$dir/run.sh"
du -sh "$dir"
