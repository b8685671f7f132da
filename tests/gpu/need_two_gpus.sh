# need_two_gpus.sh - sourced by the two-rank NCCL tests: exits 77 (ctest
# SKIP) with fewer than 2 GPUs, or without PyTorch with NCCL and 2 GPUs
# (NCCL needs a GPU per rank).
n=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU ')
[ "$n" -ge 2 ] || { echo "fewer than 2 GPUs ($n): skipped"; exit 77; }
python3 -c 'import torch, torch.distributed as d; assert torch.cuda.device_count() >= 2 and d.is_nccl_available()' 2>/dev/null ||
	{ echo "no PyTorch with NCCL and 2 GPUs: skipped"; exit 77; }
