#!/usr/bin/env python3
"""A model of how the persistent flash-attention kernels' causal order ends (v33-v35).

Each of SMS blocks takes the next item in draw order as soon as it is free; an item (one
128-row query tile of one head) costs its key tiles plus one for its start. The model
knows nothing of memory, clocks or the schedule's atomic: it says how much of a launch
the order's ending leaves to a few blocks, not how fast anything runs.

    kernels/causal-order-model.py [--sms 132] [B,H,S ...]

Prints, per shape, the makespan in tile units of v34's sections (full ones and what is
left for the last) and v35's (the same count, evened), against a perfect split of the
work. Default shapes: the B = 4 and 8 causal shapes of the part-3 grid and 8,16,1536."""
import heapq
import sys

BR = 128                      # query rows an item; key tiles are 128 keys too
L2_SECTION_BYTES = 16 << 20   # the kernels' constant
D = 128


def order(heads, s, even, sms):
    """The causal draw order as (head, query tile), as the kernels decode it."""
    q_tiles = (s + BR - 1) // BR
    blocks = min(sms, heads * q_tiles)
    most = max(1, min(heads, L2_SECTION_BYTES // (s * D * 4))) if 3 * heads > blocks else heads
    if even:
        sections = (heads + most - 1) // most
        sec = (heads + sections - 1) // sections
    else:
        sec = most
    out = []
    for i in range(heads * q_tiles):
        h0 = i // (sec * q_tiles) * sec
        hs = min(sec, heads - h0)
        k = i - h0 * q_tiles
        out.append((h0 + k % hs, q_tiles - 1 - k // hs))
    assert sorted(out) == [(h, q) for h in range(heads) for q in range(q_tiles)]
    return out


def makespan(items, sms):
    free = [(0.0, b) for b in range(min(sms, len(items)))]
    heapq.heapify(free)
    end = 0.0
    for _, q in items:
        t, b = heapq.heappop(free)
        t += q + 1 + 1.0      # key tiles of a causal item, and its start
        end = max(end, t)
        heapq.heappush(free, (t, b))
    return end


def main():
    args = sys.argv[1:]
    sms = 132
    if "--sms" in args:
        i = args.index("--sms")
        sms = int(args[i + 1])
        del args[i:i + 2]
    if any(a.startswith("-") for a in args):
        sys.exit(__doc__)
    shapes = [tuple(int(x) for x in a.split(",")) for a in args] or [
        (8, 16, 512), (8, 16, 1024), (8, 16, 1536), (8, 16, 2048), (8, 16, 4096),
        (4, 16, 1024), (4, 16, 2048), (4, 16, 4096)]
    print("| shape causal | v34 | v35 | perfect split | v35 against v34 |")
    print("|---|---:|---:|---:|---:|")
    for b, h, s in shapes:
        heads = b * h
        full = order(heads, s, False, sms)
        a = makespan(full, sms)
        e = makespan(order(heads, s, True, sms), sms)
        ideal = sum(q + 2.0 for _, q in full) / min(sms, len(full))
        print(f"| {b},{h},{s} | {a:.1f} | {e:.1f} | {ideal:.1f} | {100 * (e / a - 1):+.1f} % |")


if __name__ == "__main__":
    main()
