#!/bin/bash
# Runs the command examples of README.md and docs/*.md (tests/docs/check_examples.py
# has the convention) against the committed data.
#   tests/docs/check-examples.sh            check, exit 1 on a drift
#   tests/docs/check-examples.sh --update   rewrite the outputs that drifted
#                                           (those with no '...' cut in them)
#   tests/docs/check-examples.sh --list     say how each command is checked
# KPTPROF (default build/cli/kptprof) and KPT_BUILD (default build) name the build.
src=$(cd "$(dirname "$0")/../.." && pwd)
build=${KPT_BUILD:-$src/build}
kptprof=${KPTPROF:-$build/cli/kptprof}
command -v python3 >/dev/null || { echo "SKIP: python3 is not installed" >&2; exit 77; }
[ -x "$kptprof" ] || { echo "check-examples: no kptprof at '$kptprof' (build it, or set KPTPROF)" >&2; exit 2; }
exec python3 "$src/tests/docs/check_examples.py" --kptprof "$kptprof" --src "$src" --build "$build" "$@"
