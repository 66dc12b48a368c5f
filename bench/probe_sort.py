"""Where the GPU sort's time goes: each kernel of a keys-only sort of 2^26
float32 (src/codegen/sort_kernels.cuh, driven as cuda_sort.c drives it),
timed alone with CUDA events, next to CuPy's whole sort.  A second copy of
the module with the look-back's waiting taken out (wrong results, timing
only) shows what the look-back costs.

    python3 bench/probe_sort.py
"""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_gpu import ck, ck_time_ms, cp, cupy_time_ms  # noqa: E402

SRC = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "src", "codegen", "sort_kernels.cuh")
TILE = 4096


BALLOTS = """        ck_u32 peers = __ballot_sync(0xffffffffu, ok);
#pragma unroll
        for (int b = 0; b < 8; b++) {
            const ck_u32 bit = (d >> b) & 1u, m = __ballot_sync(0xffffffffu, bit);
            peers &= bit ? m : ~m;
        }
"""
# Variants of the module by text substitution (timing only where marked).
VARIANTS = {
    "as built": [],
    "no look-back waiting (wrong results)": [("if ((v & CK_ST_EPOCH_MASK) != ep || !(v >> 62)) continue;",
                                              "if ((v & CK_ST_EPOCH_MASK) != ep || !(v >> 62)) break;")],
    "__match_any_sync for the eight ballots": [(BALLOTS, "        const ck_u32 peers = __match_any_sync(0xffffffffu, "
                                                         "ok ? d : 256u + lane);\n")],
    "three blocks a multiprocessor, not four": [("HEAD", "#define CK_RX_PASS_MINB 3\n")],
    "12 keys a thread, five blocks": [("HEAD", "#define CK_RX_ITEMS 12\n#define CK_RX_PASS_MINB 5\n")],
    "8 keys a thread, six blocks": [("HEAD", "#define CK_RX_ITEMS 8\n#define CK_RX_PASS_MINB 6\n")],
    "24 keys a thread, three blocks": [("HEAD", "#define CK_RX_ITEMS 24\n#define CK_RX_PASS_MINB 3\n")],
}


def module(subs):
    head = "#define CK_SK_T 10\n#define CK_SK_ISZ 4\n#define CK_SK_K64 0\n"
    src = open(SRC).read()
    for old, new in subs:
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


def timed(fn):
    return ck_time_ms(fn, reps=10)


def main():
    n = 1 << 26
    h = np.random.default_rng(0).random(n).astype(np.float32)
    for label, subs in VARIANTS.items():
        m = module(subs)
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
                                    status, counters[1:], np.int32(1), data if p == 0 else None, None, np.int32(2)))
            times.append(timed(do_pass))
        zero = timed(lambda: (status.__setitem__(Ellipsis, 0), counters.__setitem__(Ellipsis, 0)))
        print(f"{label}: keys+hist {t_keys:.3f} ms; passes (each with its status zeroing) "
              + ", ".join(f"{t:.3f}" for t in times) + f" ms; zeroing alone {zero:.3f} ms", flush=True)
    x = ck.asarray(h, device="cuda")
    print(f"ck.sort whole: {timed(lambda: ck.sort(x)):.3f} ms", flush=True)
    if cp is not None:
        cx = cp.asarray(h)
        print(f"cupy.sort whole: {cupy_time_ms(lambda: cp.sort(cx)):.3f} ms", flush=True)


if __name__ == "__main__":
    main()
