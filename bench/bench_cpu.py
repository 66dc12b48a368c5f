"""CPU benchmarks of cudakit against NumPy, measured side by side in one run.

    python bench/bench_cpu.py [--out bench/results/FILE.md]

Per-call figures are the best of several repeats of a loop of calls; large
array figures are the median of repeats.  Both libraries get the same data
and the same number of threads the machine has (NumPy's element-wise loops
use one core; cudakit splits large loops over the cores).
"""
import argparse
import os

os.environ.setdefault("CUDAKIT_DEVICE", "cpu")

import numpy as np  # noqa: E402

import cudakit as ck  # noqa: E402
from _report import cpu_machine, import_seconds, median_time, per_call, write_results  # noqa: E402


def import_time(module, runs=15):
    return import_seconds(module, runs, env=dict(os.environ, CUDAKIT_DEVICE="cpu"))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default=None)
    args = ap.parse_args()

    rows = []

    def row(name, t_ck, t_np, unit):
        ratio = t_ck / t_np
        rows.append((name, unit, {"cudakit": t_ck, "numpy": t_np, "ratio": ratio}, False))
        print(f"{name:42s} cudakit {t_ck:10.3f} {unit:3s} numpy {t_np:10.3f} {unit:3s} ratio {ratio:5.2f}", flush=True)

    t_py = import_time("sys")
    row("python -c 'import X' (process, ms)", import_time("cudakit") * 1e3, import_time("numpy") * 1e3, "ms")
    print(f"  (bare interpreter start: {t_py * 1e3:.1f} ms)")

    xn = np.arange(1000, dtype=np.float32)
    xc = ck.asarray(xn, device="cpu")
    row("x + 1, 1000 float32, per call", per_call(lambda: xc + 1) * 1e6, per_call(lambda: xn + 1) * 1e6, "us")
    row("x + y, 1000 float32, per call", per_call(lambda: xc + xc) * 1e6, per_call(lambda: xn + xn) * 1e6, "us")
    row("x.sum(), 1000 float32, per call", per_call(lambda: xc.sum()) * 1e6, per_call(lambda: xn.sum()) * 1e6, "us")

    n = 10**7
    rng = np.random.default_rng(0)
    an = rng.standard_normal(n, dtype=np.float32)
    bn = rng.standard_normal(n, dtype=np.float32)
    ac = ck.asarray(an, device="cpu")
    bc = ck.asarray(bn, device="cpu")
    row("add, 1e7 float32", median_time(lambda: ac + bc) * 1e3, median_time(lambda: an + bn) * 1e3, "ms")
    row("exp, 1e7 float32", median_time(lambda: ck.exp(ac)) * 1e3, median_time(lambda: np.exp(an)) * 1e3, "ms")
    row("sum, 1e7 float32", median_time(lambda: ac.sum()) * 1e3, median_time(lambda: an.sum()) * 1e3, "ms")
    row("sin, 1e7 float32", median_time(lambda: ck.sin(ac)) * 1e3, median_time(lambda: np.sin(an)) * 1e3, "ms")
    row("arctan2, 1e7 float32", median_time(lambda: ck.arctan2(ac, bc)) * 1e3,
        median_time(lambda: np.arctan2(an, bn)) * 1e3, "ms")
    row("tanh, 1e7 float32", median_time(lambda: ck.tanh(ac)) * 1e3, median_time(lambda: np.tanh(an)) * 1e3, "ms")
    row("clip, 1e7 float32", median_time(lambda: ck.clip(ac, -1, 1)) * 1e3,
        median_time(lambda: np.clip(an, -1, 1)) * 1e3, "ms")
    m = an.reshape(2000, 5000)
    mc = ck.asarray(m, device="cpu")
    row("sum axis 0, 2000x5000 float32", median_time(lambda: mc.sum(axis=0)) * 1e3,
        median_time(lambda: m.sum(axis=0)) * 1e3, "ms")
    row("sum axis 1, 2000x5000 float32", median_time(lambda: mc.sum(axis=1)) * 1e3,
        median_time(lambda: m.sum(axis=1)) * 1e3, "ms")

    sn = rng.standard_normal(n, dtype=np.float32)
    sc = ck.asarray(sn, device="cpu")
    in_ = rng.integers(-2**62, 2**62, size=n)
    ic = ck.asarray(in_, device="cpu")
    def slow(fn):   # the sorts take a good part of a second: fewer repeats
        return median_time(fn, repeats=5) * 1e3
    row("sort, 1e7 float32", slow(lambda: ck.sort(sc)), slow(lambda: np.sort(sn)), "ms")
    row("sort, 1e7 int64", slow(lambda: ck.sort(ic)), slow(lambda: np.sort(in_)), "ms")
    row("argsort, 1e7 float32", slow(lambda: ck.argsort(sc)), slow(lambda: np.argsort(sn)), "ms")

    mn = an > 0.3
    mc_ = ck.asarray(mn, device="cpu")
    gi = rng.integers(0, n, size=n)
    gc = ck.asarray(gi, device="cpu")
    row("x[mask], 1e7 float32", median_time(lambda: ac[mc_]) * 1e3, median_time(lambda: an[mn]) * 1e3, "ms")
    row("x[idx], 1e7 float32, 1e7 int64 idx", slow(lambda: ac[gc]), slow(lambda: an[gi]), "ms")

    # issue 17's floor: counting, order statistics, float64 transcendentals, argmin/argmax
    dn = rng.standard_normal(n)
    dc = ck.asarray(dn, device="cpu")
    wn = rng.uniform(-100.0, 100.0, n)
    wc = ck.asarray(wn, device="cpu")
    pn = rng.uniform(0.1, 100.0, n)
    pc = ck.asarray(pn, device="cpu")
    kn = rng.integers(0, 1000, n)
    kc = ck.asarray(kn, device="cpu")
    row("bincount, 1e7 int64 in [0, 1000)", median_time(lambda: ck.bincount(kc)) * 1e3,
        median_time(lambda: np.bincount(kn)) * 1e3, "ms")
    row("histogram, 1e7 float64, 100 bins", slow(lambda: ck.histogram(dc, bins=100)),
        slow(lambda: np.histogram(dn, bins=100)), "ms")
    row("median, 1e7 float64", slow(lambda: ck.median(dc)), slow(lambda: np.median(dn)), "ms")
    row("exp, 1e7 float64", median_time(lambda: ck.exp(dc)) * 1e3, median_time(lambda: np.exp(dn)) * 1e3, "ms")
    row("log, 1e7 float64 in [0.1, 100)", median_time(lambda: ck.log(pc)) * 1e3,
        median_time(lambda: np.log(pn)) * 1e3, "ms")
    row("sin, 1e7 float64 in [-100, 100)", slow(lambda: ck.sin(wc)), slow(lambda: np.sin(wn)), "ms")
    row("cos, 1e7 float64 in [-100, 100)", slow(lambda: ck.cos(wc)), slow(lambda: np.cos(wn)), "ms")
    row("argmax, 1e7 float64", median_time(lambda: ck.argmax(dc)) * 1e3, median_time(lambda: np.argmax(dn)) * 1e3, "ms")
    row("argmin, 1e7 float64", median_time(lambda: ck.argmin(dc)) * 1e3, median_time(lambda: np.argmin(dn)) * 1e3, "ms")

    # correctness of what was timed, so a fast wrong answer cannot pass
    assert np.array_equal(ck.asnumpy(ck.bincount(kc)), np.bincount(kn))
    hc, hn = ck.histogram(dc, bins=100), np.histogram(dn, bins=100)
    assert np.array_equal(ck.asnumpy(hc[0]), hn[0]) and np.array_equal(ck.asnumpy(hc[1]), hn[1])
    assert float(ck.median(dc)) == float(np.median(dn))
    assert int(ck.argmax(dc)) == int(np.argmax(dn)) and int(ck.argmin(dc)) == int(np.argmin(dn))
    for name, x, xn in (("exp", dc, dn), ("log", pc, pn), ("sin", wc, wn), ("cos", wc, wn)):
        np.testing.assert_allclose(ck.asnumpy(getattr(ck, name)(x)), getattr(np, name)(xn), rtol=3e-16, atol=1e-300)
    assert np.array_equal(ck.asnumpy(ac[mc_]), an[mn])
    assert np.array_equal(ck.asnumpy(ac[gc]), an[gi])
    assert np.array_equal(ck.asnumpy(ck.sort(sc)), np.sort(sn))
    assert np.array_equal(ck.asnumpy(ck.sort(ic)), np.sort(in_))
    assert np.array_equal(sn[ck.asnumpy(ck.argsort(sc))], np.sort(sn))
    np.testing.assert_allclose(ck.asnumpy(ck.sin(ac)), np.sin(an), rtol=2e-6, atol=1e-7)
    np.testing.assert_allclose(ck.asnumpy(ck.arctan2(ac, bc)), np.arctan2(an, bn), rtol=2e-6, atol=1e-7)
    np.testing.assert_allclose(ck.asnumpy(ck.tanh(ac)), np.tanh(an), rtol=2e-6, atol=1e-7)
    assert np.array_equal(ck.asnumpy(ck.clip(ac, -1, 1)), np.clip(an, -1, 1))
    np.testing.assert_allclose(ck.asnumpy(ac + bc), an + bn)
    np.testing.assert_allclose(ck.asnumpy(ck.exp(ac)), np.exp(an), rtol=2e-6)
    np.testing.assert_allclose(float(ac.sum()), float(an.astype(np.float64).sum()), rtol=1e-5)

    if args.out:
        write_results(args.out, "CPU benchmarks", cpu_machine(np, ck),
                      "python bench/bench_cpu.py (ratio = cudakit / NumPy, below 1 is better for cudakit)",
                      ["cudakit", "numpy", "ratio"], rows)
        print("wrote", args.out)


if __name__ == "__main__":
    main()
