#!/usr/bin/env bash
# collector_test.sh - GPU test of the collector: record collector_app with
# `kptprof record` and check the recording exactly (check_collector.c).
# Env: KPTPROF, APP, CHECK. Exit 77 without a GPU. KEEP=DIR keeps the
# recording there (scripts/gpu/collector.sh commits it as test data).
set -u
nvidia-smi -L >/dev/null 2>&1 || { echo "no GPU: skipped"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$KPTPROF" record -o "$tmp/app.kpt" -- "$APP"
rc=$?
if [ $rc -ne 0 ]; then
	echo "FAIL: kptprof record exited $rc"
	exit 1
fi
[ -z "$(ls -A "$tmp" | grep -v '^app.kpt$')" ] || { echo "FAIL: temporary files left: $(ls -A "$tmp")"; exit 1; }
"$CHECK" app "$tmp/app.kpt" || exit 1
[ -n "${KEEP:-}" ] && cp "$tmp/app.kpt" "$KEEP/collector_app.kpt"
exit 0
