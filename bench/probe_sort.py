"""Where the GPU sort's time goes: each kernel of a keys-only sort of 2^26
float32 (src/codegen/sort_kernels.cuh, driven as cuda_sort.c drives it),
timed alone with CUDA events, next to CuPy's whole sort.  A second copy of
the module with the look-back's waiting taken out (wrong results, timing
only) shows what the look-back costs.

    python3 bench/probe_sort.py          # time the variants
    python3 bench/probe_sort.py --ncu    # each kernel once, for ncu
"""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_gpu import ck, ck_time_ms, cp, cupy_time_ms  # noqa: E402

SRC = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "src", "codegen", "sort_kernels.cuh")
TILE = 4096


RANK_BALLOTS = """            peers = 0xffffffffu;
#pragma unroll
            for (int b = 0; b < 8; b++) {
                /* r: bit b of d copied to all 32 bits; the lanes whose bit b
                 * is this lane's are those where the ballot equals it */
                const ck_u32 r = (ck_u32)((int)(d << (31 - b)) >> 31), m = __ballot_sync(0xffffffffu, r);
                peers &= ~(m ^ r);
            }
"""
RANK_LEADER = """        if (lane == leader) before = atomicAdd(&mine[d], (ck_u32)__popc(peers));
        before = __shfl_sync(0xffffffffu, before, leader);
"""
# match masks built by a shared atomicOr a key (a per-warp word a digit),
# reset by the leader after the shuffle
ATOMIC_OR = [
    ("    const ck_u32 lt = (1u << lane) - 1u;\n    ck_u32 *mine = wh + warp * 256;\n",
     "    const ck_u32 lt = (1u << lane) - 1u;\n    ck_u32 *mine = wh + warp * 256;\n    __shared__ ck_u32 mmw[CK_RX_WARPS * 256];\n"
     "    ck_u32 *mm = mmw + warp * 256;\n    for (int j = lane; j < 256; j += 32) mm[j] = 0;\n"),
    (RANK_BALLOTS, "            atomicOr(&mm[d], 1u << lane);\n            __syncwarp();\n            peers = mm[d];\n"),
    (RANK_LEADER, RANK_LEADER + "        if (HOW == CK_RANK_BALLOT) { if (lane == leader) mm[d] = 0; __syncwarp(); }\n"),
]
# Variants of the module by text substitution (timing only where marked).
VARIANTS = {
    "as built": [],
    "no look-back waiting (wrong results)": [
        ("if ((v[j] & CK_ST_EPOCH_MASK) != ep || !(v[j] >> 62)) break;",
         "if ((v[j] & CK_ST_EPOCH_MASK) != ep || !(v[j] >> 62)) { inc = true; break; }")],
    "look-back one tile a load": [("HEAD", "#define CK_RX_LOOK 1\n")],
    "look-back eight tiles a step": [("HEAD", "#define CK_RX_LOOK 8\n")],
    "first pass by ballots, not atomics": [("HOW", (0, 0, 0, 1))],
    "match masks by atomicOr, not eight ballots": ATOMIC_OR,
    "20 keys a thread, three blocks": [("HEAD", "#define CK_RX_ITEMS 20\n#define CK_RX_PASS_MINB 3\n")],
    "24 keys a thread, three blocks": [("HEAD", "#define CK_RX_ITEMS 24\n#define CK_RX_PASS_MINB 3\n")],
    "32 keys a thread, two blocks": [("HEAD", "#define CK_RX_ITEMS 32\n#define CK_RX_PASS_MINB 2\n")],
}
# how cuda_sort.c ranks the passes of uniform [0, 1) float32: atomics for
# the first, ballots, then a match instruction for the top byte's few digits
HOW = (2, 0, 0, 1)


def module(subs):
    head = "#define CK_SK_T 10\n#define CK_SK_ISZ 4\n#define CK_SK_K64 0\n"
    src = open(SRC).read()
    for old, new in subs:
        if old == "HOW":
            continue
        if old == "HEAD":
            head += new
            continue
        assert old in src, old
        src = src.replace(old, new)
    return ck.RawModule(code=head + src)


def tile_of(subs):
    for old, new in subs:
        if old == "HEAD" and "CK_RX_ITEMS" in new:
            return 256 * int(new.split("CK_RX_ITEMS")[1].split()[0])
    return TILE


# --ncu: each kernel once (as built), then CuPy's sort once, for a profiler
ONCE = "--ncu" in sys.argv


def timed(fn):
    if ONCE:
        fn()
        return float("nan")
    return ck_time_ms(fn, reps=10)


def main():
    n = 1 << 26
    h = np.random.default_rng(0).random(n).astype(np.float32)
    for label, subs in VARIANTS.items():
        if ONCE and subs:
            continue
        m = module(subs)
        hows = dict(subs).get("HOW", HOW)
        nb = -(-n // tile_of(subs))
        data = ck.asarray(h, device="cuda")
        hist = ck.zeros(8 * 256, dtype=ck.uint32, device="cuda")
        status = ck.zeros(nb * 256, dtype=ck.uint64, device="cuda")
        counters = ck.zeros(64, dtype=ck.uint32, device="cuda")
        k0 = ck.empty(n, dtype=ck.uint32, device="cuda")
        k1 = ck.empty(n, dtype=ck.uint32, device="cuda")
        keys = m.get_function("ck_sk_keys")
        pas = m.get_function("ck_rx_pass")
        kgrid = ck.cuda.get_device_properties(0)["multi_processor_count"] * 6

        def do_keys():
            hist[...] = 0
            keys((kgrid,), (256,), (np.uint32(n), np.int64(n), data, np.int64(0), np.int64(4), None, None,
                                    np.int32(1), np.int32(2), np.int32(1), hist))
        t_keys = timed(do_keys)
        times = []
        bufs = (k1, k0)   # pass p writes bufs[p % 2] and reads what pass p - 1 wrote (pass 0: the values)
        for p in range(4):
            def do_pass(p=p):
                status[...] = 0
                counters[...] = 0
                pas((nb,), (256,), (np.uint32(n), bufs[(p + 1) % 2], bufs[p % 2], np.int32(8 * p), hist[p * 256:],
                                    status, counters[1:], np.int32(1), data if p == 0 else None, None, np.int32(2),
                                    np.int32(hows[p])))
            times.append(timed(do_pass))
        zero = timed(lambda: (status.__setitem__(Ellipsis, 0), counters.__setitem__(Ellipsis, 0)))
        print(f"{label}: keys+hist {t_keys:.3f} ms; passes (each with its status zeroing) "
              + ", ".join(f"{t:.3f}" for t in times) + f" ms; zeroing alone {zero:.3f} ms", flush=True)
    x = ck.asarray(h, device="cuda")
    print(f"ck.sort whole: {timed(lambda: ck.sort(x)):.3f} ms", flush=True)
    if cp is not None:
        cx = cp.asarray(h)
        if ONCE:
            cp.sort(cx)
            cp.cuda.Device().synchronize()
        else:
            print(f"cupy.sort whole: {cupy_time_ms(lambda: cp.sort(cx)):.3f} ms", flush=True)


if __name__ == "__main__":
    main()
