"""PyTorch's scaled_dot_product_attention called a few times: the stand-in for a user's
own PyTorch program, profiled with `stallscope profile -- python3 sdpa_once.py`."""
import torch
import torch.nn.functional as F

q, k, v = (torch.rand(1, 64, 1024, 128, device="cuda").half() for _ in range(3))
for _ in range(3):
    out = F.scaled_dot_product_attention(q, k, v)
torch.cuda.synchronize()
print("sdpa:", tuple(out.shape), out.float().abs().mean().item())
