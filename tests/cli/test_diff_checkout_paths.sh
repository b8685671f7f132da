#!/usr/bin/env bash
# One kernel built from two checkouts is one key. nvcc names anonymous
# namespaces after the source's full path (_GLOBAL__N__<hash>_...), so the
# committed H200 baseline sessions built in /tmp/fresh (2026-11-26) and in
# /work/main (2026-11-28) carry different raw names for the same kernels.
# A base of both kinds must still have one key per kernel: before the fix,
# such a base had 78 keys where each session alone has 49, every anonymous-
# namespace kernel twice, each copy with half the sessions (and so a
# between-machine part measured on half of them).
set -u
B=$KPT_SRC/baselines/nvidia-h200/default
old=$(ls "$B"/20261126T*.kpt 2>/dev/null | head -n 2)
new=$(ls "$B"/20261128T*.kpt 2>/dev/null | head -n 2)
held=$(ls "$B"/20261128T*.kpt 2>/dev/null | tail -n 1)
[ -n "$old" ] && [ -n "$new" ] || { echo "FAIL: committed H200 sessions missing"; exit 1; }
fail() { echo "FAIL: $*"; exit 1; }
# shellcheck disable=SC2086 # word-split: file lists without spaces
one=$("$KPTPROF" diff $new "$held" | tail -n 1) || fail "diff of one kind"
# shellcheck disable=SC2086
both=$("$KPTPROF" diff $old $new "$held" | tail -n 1) || fail "diff of both kinds"
k1=$(sed -n 's/.*(\([0-9]*\) keys;.*/\1/p' <<<"$one")
k2=$(sed -n 's/.*(\([0-9]*\) keys;.*/\1/p' <<<"$both")
[ -n "$k1" ] && [ "$k1" -gt 20 ] || fail "no key count in: $one"
[ "$k1" = "$k2" ] || fail "base of two checkouts: $k2 keys, one checkout: $k1 ($both)"
# the raw names really differ (else this test tests nothing)
names() { "$KPTPROF" export "$1" --format json -o - | grep -o '_GLOBAL__N__[0-9a-f]*_[0-9]*_attention_fwd_sm90_cu' | sort -u; }
n_old=$(names "$(head -n1 <<<"$old")")
n_new=$(names "$(head -n1 <<<"$new")")
[ -n "$n_old" ] && [ -n "$n_new" ] && [ "$n_old" != "$n_new" ] ||
	fail "the two checkouts' names do not differ ($n_old, $n_new)"
echo "ok: $k1 keys either way ($n_old vs $n_new)"
