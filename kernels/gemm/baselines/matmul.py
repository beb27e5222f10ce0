"""PyTorch's fp16 matmul (cuBLAS) as a stallscope worker, timed under the runner's protocol.

stallscope starts `python3 matmul.py --backend torch-matmul --shape M,N,K --seed N` and
speaks with it one JSON object a line (src/gpu/wire.rs), exactly as with the SDPA
worker (kernels/flash-attention/baselines/sdpa.py): the worker checks the backend's
first call against an fp32 product and says hello; then the runner asks it to calibrate
(build a CUDA graph of back-to-back calls lasting about rep_ms), to replay that graph
`count` times with an event between replays, and to check the last call's output after
poisoning it. The runner, not this script, decides warm-up, window and repetitions, and
watches the GPU's clocks and power, so cuBLAS is timed exactly as the ladder's own
kernels are.

The problem is the ladder's: A [M, K] and Bt [N, K] row-major fp16 (B stored
column-major), uniform in [-1, 1), C = A·B = A @ Btᵀ in fp16 with fp32 accumulation.
torch.matmul is called as a user calls it, with PyTorch's default cuBLAS settings.
"""
import argparse
import json
import math
import sys

BACKENDS = {
    "torch-matmul": "torch.matmul (cuBLAS)",
}
MAX_LAUNCHES = 10_000


def launches_for(rep_ms, launch_ms):
    return max(1, min(MAX_LAUNCHES, math.ceil(rep_ms / max(launch_ms, 1e-6))))


def say(obj):
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()


def error_stats(torch, out, ref):
    out = out.float()
    finite = torch.isfinite(out)
    non_finite = int((~finite).sum().item())
    diff = torch.where(finite, out - ref, torch.zeros_like(ref))
    ref_masked = torch.where(finite, ref, torch.zeros_like(ref))
    ref_norm = ref_masked.norm().item()
    rel = diff.norm().item() / ref_norm if ref_norm > 0 else diff.norm().item()
    return {
        "max_abs": diff.abs().max().item(),
        "rel_l2": rel,
        "non_finite": non_finite,
    }


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--backend", required=True, choices=sorted(BACKENDS))
    ap.add_argument("--shape", required=True)
    # Accepted so that a runner passing the attention workers' flag gets an answer, not
    # an argparse error: a GEMM has no causal variant.
    ap.add_argument("--causal", action="store_true")
    ap.add_argument("--seed", type=int, default=0)
    a = ap.parse_args()
    if a.causal:
        say({"event": "failed", "skipped": True, "message": "a GEMM has no causal variant"})
        return
    try:
        import torch
    except Exception as e:
        say({"event": "failed", "skipped": True, "message": f"PyTorch is not available ({e})"})
        return
    if not torch.cuda.is_available():
        say({"event": "failed", "skipped": True, "message": "PyTorch sees no CUDA device"})
        return

    try:
        m, n, k = (int(x) for x in a.shape.split(","))
        if min(m, n, k) <= 0:
            raise ValueError
    except ValueError:
        say({"event": "failed", "message": f"shape {a.shape!r} is not M,N,K (three positive integers)"})
        return
    g = torch.Generator(device="cuda").manual_seed(a.seed)

    def uniform(rows, cols, lo, hi):
        return (torch.rand(rows, cols, device="cuda", generator=g) * (hi - lo) + lo).half()

    # The timed runs' inputs, as the ladder's: A and Bt uniform in [-1, 1).
    mat_a, mat_bt = uniform(m, k, -1, 1), uniform(n, k, -1, 1)
    # The reference in fp32 from the same fp16 values, with TF32 off so that it is a
    # true fp32 product.
    torch.backends.cuda.matmul.allow_tf32 = False
    ref = mat_a.float() @ mat_bt.float().T
    torch.cuda.synchronize()

    def call():
        return torch.matmul(mat_a, mat_bt.T)

    props = torch.cuda.get_device_properties(0)
    versions = [["torch", torch.__version__]]
    if torch.version.cuda:
        versions.append(["cuda", str(torch.version.cuda)])
    try:
        first = call()
        torch.cuda.synchronize()
    except Exception as e:
        msg = f"{type(e).__name__}: {e}".splitlines()[0][:300]
        say({"event": "failed", "skipped": True, "message": msg})
        return
    say({
        "event": "ready",
        "gpu": torch.cuda.get_device_name(),
        "gpu_uuid": "GPU-" + str(getattr(props, "uuid", "")),
        "first": error_stats(torch, first, ref),
        "versions": versions,
    })
    del first

    graph, last = None, None
    stream = torch.cuda.current_stream()
    for line in sys.stdin:
        try:
            cmd = json.loads(line)
        except ValueError as e:
            say({"reply": "error", "message": f"not a command ({e}): {line.strip()}"})
            continue
        try:
            kind = cmd.get("cmd")
            if kind == "quit":
                return
            if kind == "calibrate":
                side = torch.cuda.Stream()
                side.wait_stream(stream)
                with torch.cuda.stream(side):
                    for _ in range(3):
                        call()
                stream.wait_stream(side)
                start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                start.record()
                call()
                end.record()
                end.synchronize()
                # A lone call carries its launch overhead: the graph is timed in turn
                # and captured again from its own time when the guess was off by more
                # than a fifth (as the runner's own worker does).
                n_calls = launches_for(cmd["rep_ms"], start.elapsed_time(end))
                for attempt in range(2):
                    graph = torch.cuda.CUDAGraph()
                    with torch.cuda.graph(graph):
                        for _ in range(n_calls):
                            last = call()
                    graph.replay()
                    torch.cuda.synchronize()
                    # The fastest of three replays: from an idle GPU the first ones run
                    # before the clock has risen.
                    fastest = math.inf
                    for _ in range(3):
                        start.record()
                        graph.replay()
                        end.record()
                        end.synchronize()
                        fastest = min(fastest, start.elapsed_time(end))
                    one = fastest / n_calls
                    better = launches_for(cmd["rep_ms"], one)
                    if attempt == 1 or abs(better / n_calls - 1) <= 0.2:
                        break
                    n_calls = better
                say({"reply": "calibrated", "launches": n_calls, "launch_ms": one})
            elif graph is None:
                say({"reply": "error", "message": f"{kind} before calibrate"})
            elif kind == "reps":
                count = int(cmd["count"])
                events = [torch.cuda.Event(enable_timing=True) for _ in range(count + 1)]
                events[0].record()
                for i in range(count):
                    graph.replay()
                    events[i + 1].record()
                events[-1].synchronize()
                say({"reply": "times", "ms": [events[i].elapsed_time(events[i + 1]) for i in range(count)]})
            elif kind == "check_last":
                last.fill_(float("nan"))
                graph.replay()
                torch.cuda.synchronize()
                say({"reply": "checked", "error": error_stats(torch, last, ref)})
            else:
                say({"reply": "error", "message": f"unknown command {kind!r}"})
        except Exception as e:
            say({"reply": "error", "message": f"{type(e).__name__}: {e}".splitlines()[0][:300]})
            return


if __name__ == "__main__":
    sys.exit(main())
