import torch, sys
sys.argv = ["x"]
E, K, H, F, T = 128, 8, 2048, 768, 32768
torch.manual_seed(0)
rows = T * K
counts = torch.full((E,), rows // E, dtype=torch.int32)
offs = torch.cumsum(counts, 0).to(torch.int32).cuda()
x = torch.randn(rows, H, device="cuda", dtype=torch.bfloat16)
w1 = torch.randn(E, H, F, device="cuda", dtype=torch.bfloat16) * 0.02
w2 = torch.randn(E, F, H, device="cuda", dtype=torch.bfloat16) * 0.02
for _ in range(2):
    h = torch._grouped_mm(x, w1, offs=offs)
    y = torch._grouped_mm(h, w2, offs=offs)
torch.cuda.synchronize()
print("ok", y.shape)
