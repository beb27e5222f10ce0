"""One PyTorch SDPA backend as a stallscope worker, timed under the runner's protocol.

stallscope starts `python3 sdpa.py --backend cudnn|fa2|mem-efficient --shape B,H,S,D
[--causal] --seed N` and speaks with it one JSON object a line (src/gpu/wire.rs):
the worker checks the backend's first call against PyTorch's math backend in fp32 and
says hello; then the runner asks it to calibrate (build a CUDA graph of back-to-back
calls lasting about rep_ms), to replay that graph `count` times with an event between
replays, and to check the last call's output after poisoning it. The runner, not this
script, decides warm-up, window and repetitions, and watches the GPU's clocks and power,
so the backends are timed exactly as the ladder's own kernels are.
"""
import argparse
import json
import math
import sys

BACKENDS = {
    "cudnn": "CUDNN_ATTENTION",
    "fa2": "FLASH_ATTENTION",
    "mem-efficient": "EFFICIENT_ATTENTION",
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
    ap.add_argument("--causal", action="store_true")
    ap.add_argument("--seed", type=int, default=0)
    a = ap.parse_args()
    try:
        import torch
        import torch.nn.functional as F
        from torch.nn.attention import SDPBackend, sdpa_kernel
    except Exception as e:
        say({"event": "failed", "skipped": True, "message": f"PyTorch is not available ({e})"})
        return
    if not torch.cuda.is_available():
        say({"event": "failed", "skipped": True, "message": "PyTorch sees no CUDA device"})
        return

    b, h, s, d = (int(x) for x in a.shape.split(","))
    g = torch.Generator(device="cuda").manual_seed(a.seed)

    def uniform(lo, hi):
        return (torch.rand(b, h, s, d, device="cuda", generator=g) * (hi - lo) + lo).half()

    # The timed runs' inputs, as the ladder's: Q in [-2, 2), K and V in [-1, 1).
    q, k, v = uniform(-2, 2), uniform(-1, 1), uniform(-1, 1)
    with sdpa_kernel(SDPBackend.MATH):
        ref = F.scaled_dot_product_attention(q.float(), k.float(), v.float(), is_causal=a.causal)
    torch.cuda.synchronize()
    backend = getattr(SDPBackend, BACKENDS[a.backend])

    def call():
        return F.scaled_dot_product_attention(q, k, v, is_causal=a.causal)

    props = torch.cuda.get_device_properties(0)
    versions = [["torch", torch.__version__]]
    if torch.backends.cudnn.is_available():
        versions.append(["cudnn", str(torch.backends.cudnn.version())])
    try:
        with sdpa_kernel(backend):
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
            with sdpa_kernel(backend):
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
                    # A lone call carries its launch overhead: the graph is timed in
                    # turn and captured again from its own time when the guess was off
                    # by more than a fifth (as the runner's own worker does).
                    n = launches_for(cmd["rep_ms"], start.elapsed_time(end))
                    for attempt in range(2):
                        graph = torch.cuda.CUDAGraph()
                        with torch.cuda.graph(graph):
                            for _ in range(n):
                                last = call()
                        graph.replay()
                        torch.cuda.synchronize()
                        # The fastest of three replays: from an idle GPU the first
                        # ones run before the clock has risen.
                        fastest = math.inf
                        for _ in range(3):
                            start.record()
                            graph.replay()
                            end.record()
                            end.synchronize()
                            fastest = min(fastest, start.elapsed_time(end))
                        one = fastest / n
                        better = launches_for(cmd["rep_ms"], one)
                        if attempt == 1 or abs(better / n - 1) <= 0.2:
                            break
                        n = better
                    say({"reply": "calibrated", "launches": n, "launch_ms": one})
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
