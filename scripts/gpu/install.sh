#!/usr/bin/env bash
# scripts/gpu/install.sh - the CUDA build installed (issue 23): cmake
# --install of BUILD into a temporary prefix, then from the prefix alone
# `kptprof record --suite quick`, `report` and `gate --from` against a
# second recording of the same suite (the collector and kpt-workloads found
# relative to the installed kptprof). Writes under $RES; needs SRC, BUILD,
# RES.
set -u -o pipefail
: "${SRC:?}" "${BUILD:?}" "${RES:?}"
P=$RES/prefix
cmake --install "$BUILD" --prefix "$P" >"$RES/install.log" 2>&1 || { echo "install failed"; tail -5 "$RES/install.log"; exit 1; }
ls -R "$P" | head -40
cd "$RES" || exit 2
env -i PATH="$P/bin:/usr/bin:/bin" HOME="$HOME" "$P/bin/kptprof" record --suite quick --runs 3 -o q1.kpt; echo "record rc=$?"
env -i PATH="$P/bin:/usr/bin:/bin" HOME="$HOME" "$P/bin/kptprof" record --suite quick --runs 3 -o q2.kpt; echo "record rc=$?"
"$P/bin/kptprof" report q1.kpt | head -12; echo "report rc=$?"
mkdir -p bl && "$P/bin/kptprof" baseline update --baselines bl q1.kpt; echo "baseline rc=$?"
"$P/bin/kptprof" gate --from q2.kpt --baselines bl --suite quick; echo "gate rc=$?"
man -M "$P/share/man" -w kptprof 2>/dev/null; ls "$P/share/man/man1" | head
