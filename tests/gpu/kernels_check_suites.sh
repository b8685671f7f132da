#!/usr/bin/env bash
# kernels_check_suites.sh - kpt-workloads --check on every memory and FP8
# workload of the quick, default and seed suites (exit 77 without a GPU).
# The attention and MoE families have their own tests.
set -u
names=$("$KW" --list --suite quick --suite default --suite seed | awk 'NR > 1 && $1 ~ /^(memory|fp8)\./ { print $1 }')
[ -n "$names" ] || { echo "FAIL: no memory or fp8 workloads listed"; exit 1; }
# shellcheck disable=SC2086
exec "$KW" --check $names
