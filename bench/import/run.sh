#!/bin/bash
# Imports a generated nsys export and Kineto trace of MB megabytes (default
# 100) with KPTPROF (default build/cli/kptprof) and prints wall time and
# peak memory of each (issue 34's goal: <= 10 s each on the 2-core machine).
#   bench/import/run.sh [MB]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
kptprof=${KPTPROF:-$here/../../build/cli/kptprof}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for fmt in kineto nsys; do
	in=$tmp/big.$fmt
	python3 "$here/gen_import.py" "$fmt" "$in" "${1:-100}"
	/usr/bin/time -f "$fmt: %e s, %M KB peak" "$kptprof" import "$in" -o "$tmp/out.kpt" 2>&1 | tail -1
	rm -f "$tmp/out.kpt" "$in"
done
