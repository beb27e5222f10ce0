"""torch.matmul on the GEMM ladder's reference shape, three times, for ncu: the first two
are warm-ups (`profile --launch-skip 2`), the third is profiled. Inputs as the ladder's:
A [M, K] and Bt [N, K] fp16, uniform in [-1, 1); C = A·Btᵀ.
    stallscope profile --ladder gemm --version torch-matmul -k 'regex:gemm|nvjet|xmma|cutlass' \\
        --launch-skip 2 -- python3 kernels/gemm/baselines/matmul_once.py [M,N,K]
"""
import sys

import torch

m, n, k = (int(x) for x in (sys.argv[1] if len(sys.argv) > 1 else "8192,8192,8192").split(","))
g = torch.Generator(device="cuda").manual_seed(1)
a = torch.rand(m, k, device="cuda", generator=g, dtype=torch.float16) * 2 - 1
bt = torch.rand(n, k, device="cuda", generator=g, dtype=torch.float16) * 2 - 1
torch.cuda.synchronize()
for _ in range(3):
    c = torch.matmul(a, bt.t())
torch.cuda.synchronize()
print(f"C = A·Btᵀ at {m},{n},{k}: C[0, 0] = {c[0, 0].item():.4f}")
