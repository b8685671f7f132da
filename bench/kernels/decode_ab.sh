#!/usr/bin/env bash
# decode_ab.sh - was the decode plant's parameter-struct version (a105789:
# the plant pointer, percent and rows in dec_params, an `if (p.plant)`
# epilogue in the chunk kernel) slower unplanted than the chunk kernel as
# it was before plants existed (this tree)? Builds kpt-workloads a second
# time from a copy of the tree F with OLD_DECODE (that version of
# kernels/attention/attention_decode.cu) in place, then `kptprof ab`: the
# default suite's decode workloads, old build as A, this build as B, on
# one GPU, PAIRS interleaved pairs (the old side built for sm_90 alone, KW
# as the caller built it: the same sm_90 code when KW's build has 90).
# Needs K (kptprof), KW (this build's
# kpt-workloads), F (the source tree they were built from), OLD_DECODE, RES.
set -u -o pipefail
: "${K:?}" "${KW:?}" "${F:?}" "${OLD_DECODE:?}" "${RES:?}"
O=/tmp/decode-old
rm -rf "$O" && mkdir -p "$O" && (cd "$F" && tar -cf - --exclude=./build .) | tar -xf - -C "$O" || exit 2
cp "$OLD_DECODE" "$O/kernels/attention/attention_decode.cu" || exit 2
(cd "$O" && cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 >/dev/null &&
	cmake --build build -j"$(nproc)" --target kpt-workloads >/dev/null) || { echo "old build failed"; exit 2; }
W=$("$KW" --list --suite default | awk 'NR > 1 && $1 ~ /^attention\.decode\./ { print $1 }')
# shellcheck disable=SC2086
timeout 240 "$K" ab --runs "${PAIRS:-15}" -o "$RES/decode_ab" -- "$O/build/cli/kpt-workloads" $W ::: "$KW" $W \
	>"$RES/decode_ab.log" 2>&1
echo "decode_ab rc=$?"
rm -f "$RES"/decode_ab/[ab]-*.kpt
grep -E "attn_decode_chunk|SLOW|FAST|^[0-9]+ SLOW" "$RES/decode_ab.log" | cut -c1-220
