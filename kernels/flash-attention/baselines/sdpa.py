"""PyTorch SDPA backends as baselines, timed the way stallscope times its own kernels.

stallscope runs this with `python3 sdpa.py --shape B,H,S,D [--causal] --reps N --seed N`
and reads one JSON object from the last line of stdout. Each backend is checked against
PyTorch's math backend in fp32 on the same inputs, then timed by replaying a CUDA graph
of back-to-back calls (a Python call per launch would cost more than the kernel) with
CUDA events: median, fastest and slowest repetition, per call.
"""
import argparse
import json
import sys


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--shape", required=True)
    ap.add_argument("--causal", action="store_true")
    ap.add_argument("--reps", type=int, default=15)
    ap.add_argument("--calls", type=int, default=20)
    ap.add_argument("--seed", type=int, default=0)
    a = ap.parse_args()
    try:
        import torch
        import torch.nn.functional as F
        from torch.nn.attention import SDPBackend, sdpa_kernel
    except Exception as e:  # no torch: every backend is skipped
        print(json.dumps({"error": f"PyTorch is not available ({e})"}))
        return
    if not torch.cuda.is_available():
        print(json.dumps({"error": "PyTorch sees no CUDA device"}))
        return

    b, h, s, d = (int(x) for x in a.shape.split(","))
    g = torch.Generator(device="cuda").manual_seed(a.seed)
    q, k, v = (
        (torch.rand(b, h, s, d, device="cuda", generator=g) * 2 - 1).half()
        for _ in range(3)
    )
    q = (q.float() * 2).half()
    with sdpa_kernel(SDPBackend.MATH):
        ref = F.scaled_dot_product_attention(q.float(), k.float(), v.float(), is_causal=a.causal)

    results = []
    for backend, name in [
        (SDPBackend.CUDNN_ATTENTION, "cudnn"),
        (SDPBackend.FLASH_ATTENTION, "fa2"),
        (SDPBackend.EFFICIENT_ATTENTION, "mem-efficient"),
    ]:
        try:
            with sdpa_kernel(backend):
                out = F.scaled_dot_product_attention(q, k, v, is_causal=a.causal)
                torch.cuda.synchronize()
                err = ((out.float() - ref).norm() / ref.norm()).item()
                max_abs = (out.float() - ref).abs().max().item()
                side = torch.cuda.Stream()
                side.wait_stream(torch.cuda.current_stream())
                with torch.cuda.stream(side):
                    for _ in range(3):
                        F.scaled_dot_product_attention(q, k, v, is_causal=a.causal)
                torch.cuda.current_stream().wait_stream(side)
                graph = torch.cuda.CUDAGraph()
                with torch.cuda.graph(graph):
                    for _ in range(a.calls):
                        F.scaled_dot_product_attention(q, k, v, is_causal=a.causal)
            graph.replay()
            torch.cuda.synchronize()
            times = []
            for _ in range(a.reps):
                start = torch.cuda.Event(enable_timing=True)
                end = torch.cuda.Event(enable_timing=True)
                start.record()
                graph.replay()
                end.record()
                end.synchronize()
                times.append(start.elapsed_time(end) * 1e3 / a.calls)
            times.sort()
            results.append(
                {
                    "backend": name,
                    "median_us": times[len(times) // 2],
                    "min_us": times[0],
                    "max_us": times[-1],
                    "rel_l2_err": err,
                    "max_abs_err": max_abs,
                }
            )
            del graph
        except Exception as e:
            results.append({"backend": name, "skipped": f"{type(e).__name__}: {e}".splitlines()[0][:200]})
    print(json.dumps({"gpu": torch.cuda.get_device_name(), "torch": torch.__version__, "results": results}))


if __name__ == "__main__":
    sys.exit(main())
