#!/usr/bin/env bash
# collector_torch_test.sh - `kptprof record -- python3 torch_workload.py`
# captures every kernel torch.profiler sees for the same script (same
# multiset of demangled names), and the torch.cuda.nvtx ranges.
# Env: KPTPROF, CHECK, SCRIPT. Exit 77 without a GPU or PyTorch.
set -u
nvidia-smi -L >/dev/null 2>&1 || { echo "no GPU: skipped"; exit 77; }
python3 -c 'import torch; assert torch.cuda.is_available()' 2>/dev/null || { echo "no PyTorch with CUDA: skipped"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
steps=5
python3 "$SCRIPT" --profile "$tmp/torch.txt" --steps $steps || { echo "FAIL: torch.profiler run"; exit 1; }
"$KPTPROF" record -o "$tmp/torch.kpt" -- python3 "$SCRIPT" --steps $steps || { echo "FAIL: kptprof record"; exit 1; }
"$CHECK" names "$tmp/torch.kpt" >"$tmp/kpt.txt" || exit 1
sort "$tmp/torch.txt" | uniq -c | sort -k2 >"$tmp/torch.cnt"
sort "$tmp/kpt.txt" | uniq -c | sort -k2 >"$tmp/kpt.cnt"
nt=$(wc -l <"$tmp/torch.txt"); nk=$(wc -l <"$tmp/kpt.txt")
echo "torch.profiler kernels: $nt, kptprof kernels: $nk"
fail=0
if ! diff "$tmp/torch.cnt" "$tmp/kpt.cnt" >"$tmp/diff.txt"; then
	echo "FAIL: kernel names/counts differ (< torch.profiler, > kptprof):"
	head -40 "$tmp/diff.txt"
	fail=1
fi
[ "$nt" -gt 0 ] || { echo "FAIL: torch.profiler saw no kernels"; fail=1; }
read -r _ nr _ nkr < <("$CHECK" range "$tmp/torch.kpt" kpt_step)
echo "nvtx ranges kpt_step: $nr, kernels inside: $nkr"
[ "$nr" -eq $steps ] || { echo "FAIL: $nr kpt_step ranges, want $steps"; fail=1; }
[ "$nkr" -gt 0 ] || { echo "FAIL: no kernel linked to a kpt_step range"; fail=1; }
[ -n "${KEEP:-}" ] && cp "$tmp/torch.kpt" "$KEEP/torch_small.kpt" && cp "$tmp/diff.txt" "$KEEP/torch_diff.txt"
exit $fail
