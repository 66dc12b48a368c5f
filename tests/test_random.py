"""cudakit.random: the Philox4x32-10 bits against Random123's known answers,
the element -> counter map, determinism (seeds, successive calls, thread
counts), distribution checks (moments, Kolmogorov-Smirnov, chi-square) and
NumPy's dtypes, shapes and errors."""
import math
import subprocess
import sys

import numpy as np
import pytest

import cudakit as ck
from conftest import DEVICES

N = 10**6


def on(device, x):
    assert x.device == ck.Device(device), (x.device, device)
    return ck.asnumpy(x)


def ks_stat(sample, cdf):
    """The Kolmogorov-Smirnov statistic D_n of sample against cdf."""
    x = np.sort(np.asarray(sample, dtype=np.float64))
    n = x.size
    f = cdf(x)
    i = np.arange(1, n + 1)
    return max(np.max(i / n - f), np.max(f - (i - 1) / n))


# P(sqrt(n) D_n > 1.95) ~ 0.001: the streams are fixed, so this is a check
# on the samplers, not a flaky test
KS_CRIT = 1.95


_erf = np.frompyfunc(math.erf, 1, 1)


def normal_cdf(x):
    return 0.5 * (1.0 + _erf(x / math.sqrt(2.0)).astype(np.float64))


def chi2_stat(counts, expected):
    counts = np.asarray(counts, np.float64)
    expected = np.asarray(expected, np.float64)
    return float(np.sum((counts - expected) ** 2 / expected))


def chi2_crit(df):
    # Wilson-Hilferty: the 0.9999 quantile of chi-square(df)
    z = 3.719
    return df * (1 - 2 / (9 * df) + z * math.sqrt(2 / (9 * df))) ** 3


# ------------------------------------------------------------ Philox bits

KAT = [  # Random123 kat_vectors: counter, key -> output
    ((0, 0, 0, 0), (0, 0), (0x6627E8D5, 0xE169C58D, 0xBC57AC4C, 0x9B00DBD8)),
    ((0xFFFFFFFF,) * 4, (0xFFFFFFFF,) * 2, (0x408F276D, 0x41C83B0E, 0xA20BC7C6, 0x6D5451FD)),
    ((0x243F6A88, 0x85A308D3, 0x13198A2E, 0x03707344), (0xA4093822, 0x299F31D0),
     (0xD16CFE09, 0x94FDCCEB, 0x5001E420, 0x24126EA1)),
]


@pytest.mark.parametrize("ctr,key,want", KAT)
def test_philox_known_answers(ctr, key, want):
    assert ck._core._random_philox(ctr, key) == want


def _blocks(key, start, n):
    """n Philox blocks from 128-bit counter start, as a flat uint32 array."""
    k = (key & 0xFFFFFFFF, key >> 32)
    out = []
    for b in range(n):
        c = (start + b) % (1 << 128)
        out.extend(ck._core._random_philox(tuple((c >> (32 * j)) & 0xFFFFFFFF for j in range(4)), k))
    return np.array(out, dtype=np.uint32)


def test_fill_layout_matches_block_function(device):
    rng = ck.random.default_rng(1234)
    key = rng.state["key"]
    # a counter about to carry from word 0 into word 1, and from 1 into 2
    start = (1 << 64) - 2
    rng.state = {"key": key, "counter": start}
    got32 = on(device, rng.integers(0, 1 << 32, size=10, dtype=np.uint64, device=device))  # 4 per block
    words = _blocks(key, start, 3)
    np.testing.assert_array_equal(got32, words[:10].astype(np.uint64))
    assert rng.state["counter"] == start + 3

    rng.state = {"key": key, "counter": start}
    u = on(device, rng.random(5, device=device))
    w64 = words[0::2].astype(np.uint64) | (words[1::2].astype(np.uint64) << np.uint64(32))
    np.testing.assert_array_equal(u, (w64[:5] >> np.uint64(11)).astype(np.float64) * 2.0**-53)
    assert rng.state["counter"] == start + 3

    rng.state = {"key": key, "counter": start}
    f = on(device, rng.random(6, dtype=np.float32, device=device))
    np.testing.assert_array_equal(f, (words[:6] >> np.uint32(8)).astype(np.float32) * np.float32(2.0**-24))

    # the Box-Muller pairs of the documented formula
    rng.state = {"key": key, "counter": start}
    z = on(device, rng.standard_normal(4, device=device))
    u1 = 1.0 - (w64[0::2] >> np.uint64(11)).astype(np.float64) * 2.0**-53
    u2 = (w64[1::2] >> np.uint64(11)).astype(np.float64) * 2.0**-53
    r = np.sqrt(-2 * np.log(u1))
    want = np.stack([r * np.cos(2 * np.pi * u2), r * np.sin(2 * np.pi * u2)], axis=1).ravel()
    np.testing.assert_allclose(z, want[:4], rtol=1e-13, atol=1e-15)


# ------------------------------------------------------------ determinism

METHODS = [
    ("random", lambda g, d: g.random(1000, device=d)),
    ("random32", lambda g, d: g.random(1000, dtype=np.float32, device=d)),
    ("standard_normal", lambda g, d: g.standard_normal((10, 100), device=d)),
    ("normal", lambda g, d: g.normal(2.0, 3.0, 1000, device=d)),
    ("uniform", lambda g, d: g.uniform(-2, 5, 1000, device=d)),
    ("integers", lambda g, d: g.integers(-5, 17, 1000, device=d)),
    ("integers64", lambda g, d: g.integers(0, 3 << 62, 1000, dtype=np.uint64, device=d)),
    ("exponential", lambda g, d: g.exponential(2.0, 1000, device=d)),
    ("gamma", lambda g, d: g.gamma(2.5, 1.0, 1000, device=d)),
    ("beta", lambda g, d: g.beta(0.5, 2.0, 1000, device=d)),
    ("poisson", lambda g, d: g.poisson(30.0, 1000, device=d)),
    ("binomial", lambda g, d: g.binomial(100, 0.4, 1000, device=d)),
    ("choice", lambda g, d: g.choice(50, 1000, p=np.full(50, 0.02), device=d)),
    ("permutation", lambda g, d: g.permutation(1000, device=d)),
]


@pytest.mark.parametrize("name,draw", METHODS, ids=[m[0] for m in METHODS])
def test_same_seed_same_numbers(device, name, draw):
    a1 = on(device, draw(ck.random.default_rng(7), device))
    a2 = on(device, draw(ck.random.default_rng(7), device))
    np.testing.assert_array_equal(a1, a2)
    b = on(device, draw(ck.random.default_rng(8), device))
    assert not np.array_equal(a1, b)
    g = ck.random.default_rng(7)
    first = on(device, draw(g, device))
    second = on(device, draw(g, device))
    np.testing.assert_array_equal(first, a1)
    assert not np.array_equal(first, second)   # the counter moved on


def test_seeds():
    assert ck.random.default_rng(0).state["key"] != ck.random.default_rng(1).state["key"]
    assert ck.random.default_rng(None).state["key"] != ck.random.default_rng(None).state["key"]
    big = ck.random.default_rng(2**100 + 5).state["key"]
    assert big != ck.random.default_rng(5).state["key"]
    assert ck.random.default_rng([1, 2]).state["key"] == ck.random.default_rng([1, 2]).state["key"]
    g = ck.random.default_rng(3)
    assert ck.random.default_rng(g) is g
    with pytest.raises(ValueError):
        ck.random.default_rng(-1)
    with pytest.raises(TypeError):
        ck.random.default_rng(1.5)


@pytest.mark.parametrize("name,draw", [
    ("uniform", lambda g: g.random(N)),
    ("uniform32", lambda g: g.random(N + 3, dtype=np.float32)),
    ("normal", lambda g: g.standard_normal(N + 1)),
    ("normal32", lambda g: g.standard_normal(N + 1, dtype=np.float32)),
    ("exponential", lambda g: g.exponential(1.0, N)),
    ("integers", lambda g: g.integers(0, 3 << 30, N, dtype=np.uint32)),   # many rejections
    ("integers64", lambda g: g.integers(0, 3 << 62, N // 2, dtype=np.uint64)),
    ("gamma", lambda g: g.gamma(0.7, 1.0, 200_000)),
    ("poisson", lambda g: g.poisson(40.0, 200_000)),
    ("binomial", lambda g: g.binomial(500, 0.3, 200_000)),
])
def test_independent_of_thread_count(name, draw):
    saved = ck.get_num_threads()
    try:
        ck.set_num_threads(1)
        one = ck.asnumpy(draw(ck.random.default_rng(99)))
        ck.set_num_threads(2)
        two = ck.asnumpy(draw(ck.random.default_rng(99)))
        ck.set_num_threads(5)
        five = ck.asnumpy(draw(ck.random.default_rng(99)))
    finally:
        ck.set_num_threads(saved)
    np.testing.assert_array_equal(one, two)
    np.testing.assert_array_equal(one, five)


# ------------------------------------------------------------ statistics

def test_uniform_statistics(device):
    g = ck.random.default_rng(2024)
    u = on(device, g.random(N, device=device))
    assert u.min() >= 0 and u.max() < 1
    assert abs(u.mean() - 0.5) < 5 * math.sqrt(1 / 12 / N)
    assert abs(u.var() - 1 / 12) < 5 * math.sqrt(1 / 180 / N)
    assert math.sqrt(N) * ks_stat(u, lambda x: x) < KS_CRIT
    f = on(device, g.random(N, dtype=np.float32, device=device))
    assert f.dtype == np.float32 and f.min() >= 0 and f.max() < 1
    assert math.sqrt(N) * ks_stat(f, lambda x: x) < KS_CRIT
    v = on(device, g.uniform(-3.0, 5.0, N, device=device))
    assert v.min() >= -3 and v.max() < 5
    assert math.sqrt(N) * ks_stat(v, lambda x: (x + 3) / 8) < KS_CRIT


def test_normal_statistics(device):
    g = ck.random.default_rng(11)
    z = on(device, g.standard_normal(N, device=device))
    assert abs(z.mean()) < 5 / math.sqrt(N)
    assert abs(z.var() - 1) < 5 * math.sqrt(2 / N)
    assert math.sqrt(N) * ks_stat(z, normal_cdf) < KS_CRIT
    z32 = on(device, g.standard_normal(200_000, dtype=np.float32, device=device))
    assert z32.dtype == np.float32
    assert math.sqrt(z32.size) * ks_stat(z32, normal_cdf) < KS_CRIT
    y = on(device, g.normal(10.0, 2.0, N, device=device))
    assert abs(y.mean() - 10) < 5 * 2 / math.sqrt(N)
    assert abs(y.std() - 2) < 0.01


def test_exponential_statistics(device):
    g = ck.random.default_rng(5)
    e = on(device, g.exponential(1.0, N, device=device))
    assert e.min() >= 0
    assert abs(e.mean() - 1) < 5 / math.sqrt(N)
    assert math.sqrt(N) * ks_stat(e, lambda x: -np.expm1(-x)) < KS_CRIT
    e2 = on(device, g.exponential(3.0, N, device=device))
    assert abs(e2.mean() - 3) < 5 * 3 / math.sqrt(N)
    s = on(device, g.standard_exponential(200_000, dtype=np.float32, device=device))
    assert s.dtype == np.float32
    assert math.sqrt(s.size) * ks_stat(s, lambda x: -np.expm1(-x)) < KS_CRIT


@pytest.mark.parametrize("low,high,dtype,bins", [
    (0, 10, np.int64, 10),
    (-7, 3, np.int8, 10),
    (0, 3 << 30, np.uint32, 3),          # a rejection rate of 1/4: a biased method shows here
    (0, 3 << 62, np.uint64, 3),          # the 64-bit path, same idea
    (-(1 << 63), (1 << 63) - 1, np.int64, 4),
])
def test_integers_chi_square(device, low, high, dtype, bins):
    g = ck.random.default_rng(77)
    n = N // 2
    x = on(device, g.integers(low, high, n, dtype=dtype, device=device))
    assert x.dtype == np.dtype(dtype)
    xs = [int(v) for v in x[:1000]]
    assert min(xs) >= low and max(xs) < high
    # bins of equal width over [low, high)
    width = (high - low) // bins
    idx = (x.astype(object) - low) // width if dtype in (np.uint64, np.int64) else (x.astype(np.int64) - low) // width
    counts = np.bincount(np.asarray(idx, dtype=np.int64), minlength=bins)[:bins]
    assert chi2_stat(counts, np.full(bins, n / bins)) < chi2_crit(bins - 1)


def test_integers_endpoint_and_full_range(device):
    g = ck.random.default_rng(3)
    x = on(device, g.integers(0, 255, 100_000, dtype=np.uint8, endpoint=True, device=device))
    assert x.min() == 0 and x.max() == 255
    y = on(device, g.integers(0, 2**64 - 1, 10, dtype=np.uint64, endpoint=True, device=device))
    assert y.dtype == np.uint64
    b = on(device, g.integers(0, 2, 10_000, dtype=bool, device=device))
    assert b.dtype == np.bool_ and 4500 < b.sum() < 5500
    one = on(device, g.integers(5, 6, 10, device=device))
    np.testing.assert_array_equal(one, 5)


def _pmf_chi2(x, pmf, support):
    """chi-square of x against pmf over support, pooling the tails."""
    n = x.size
    exp = np.array([n * pmf(k) for k in support])
    obs = np.array([np.sum(x == k) for k in support], dtype=np.float64)
    keep = exp >= 5
    exp_in, obs_in = exp[keep], obs[keep]
    rest_e, rest_o = n - exp_in.sum(), n - obs_in.sum()
    stat = chi2_stat(np.append(obs_in, rest_o), np.append(exp_in, rest_e)) if rest_e >= 5 else chi2_stat(obs_in, exp_in)
    return stat, int(keep.sum())


@pytest.mark.parametrize("n,p", [(20, 0.3), (200, 0.4), (1000, 0.93), (5, 1.0), (7, 0.0)])
def test_binomial(device, n, p):
    g = ck.random.default_rng(n)
    x = on(device, g.binomial(n, p, 200_000, device=device))
    assert x.dtype == np.int64 and x.min() >= 0 and x.max() <= n
    if p in (0.0, 1.0):
        np.testing.assert_array_equal(x, int(n * p))
        return
    m, v = n * p, n * p * (1 - p)
    assert abs(x.mean() - m) < 5 * math.sqrt(v / x.size)
    assert abs(x.var() / v - 1) < 0.03

    def pmf(k):
        return math.comb(n, k) * p**k * (1 - p) ** (n - k)
    stat, df = _pmf_chi2(x, pmf, range(n + 1))
    assert stat < chi2_crit(df)


@pytest.mark.parametrize("lam", [0.0, 3.0, 40.0, 1e6])
def test_poisson(device, lam):
    g = ck.random.default_rng(int(lam) + 1)
    x = on(device, g.poisson(lam, 200_000, device=device))
    assert x.dtype == np.int64 and x.min() >= 0
    if lam == 0:
        assert x.max() == 0
        return
    assert abs(x.mean() - lam) < 5 * math.sqrt(lam / x.size)
    assert abs(x.var() / lam - 1) < 0.03
    if lam < 100:
        def pmf(k):
            return math.exp(k * math.log(lam) - lam - math.lgamma(k + 1))
        stat, df = _pmf_chi2(x, pmf, range(int(lam * 3) + 10))
        assert stat < chi2_crit(df)


@pytest.mark.parametrize("shape,scale", [(0.3, 1.0), (1.0, 2.0), (4.5, 0.5)])
def test_gamma(device, shape, scale):
    g = ck.random.default_rng(17)
    x = on(device, g.gamma(shape, scale, 300_000, device=device))
    assert x.dtype == np.float64 and x.min() >= 0
    m, v = shape * scale, shape * scale**2
    assert abs(x.mean() - m) < 5 * math.sqrt(v / x.size)
    assert abs(x.var() / v - 1) < 0.04
    if shape == 1.0:   # exponential with mean 2
        assert math.sqrt(x.size) * ks_stat(x, lambda t: -np.expm1(-t / scale)) < KS_CRIT


@pytest.mark.parametrize("a,b", [(0.5, 0.5), (2.0, 5.0), (0.3, 3.0)])
def test_beta(device, a, b):
    g = ck.random.default_rng(19)
    x = on(device, g.beta(a, b, 300_000, device=device))
    assert x.min() >= 0 and x.max() <= 1
    m, v = a / (a + b), a * b / ((a + b) ** 2 * (a + b + 1))
    assert abs(x.mean() - m) < 5 * math.sqrt(v / x.size)
    assert abs(x.var() / v - 1) < 0.04
    if a == b == 0.5:   # the arcsine law
        assert math.sqrt(x.size) * ks_stat(x, lambda t: 2 / np.pi * np.arcsin(np.sqrt(t))) < KS_CRIT


def test_array_parameters(device):
    g = ck.random.default_rng(23)
    y = on(device, g.normal([0.0, 100.0], [1.0, 0.0], size=(1000, 2), device=device))
    assert y.shape == (1000, 2)
    np.testing.assert_array_equal(y[:, 1], 100.0)
    assert abs(y[:, 0].mean()) < 0.2
    lam = on(device, g.poisson(ck.asarray([1.0, 50.0], device=device), size=(20000, 2), device=device))
    assert abs(lam[:, 0].mean() - 1) < 0.05 and abs(lam[:, 1].mean() - 50) < 0.5
    gm = on(device, g.gamma([1.0, 2.0, 3.0], device=device))
    assert gm.shape == (3,)
    bn = on(device, g.binomial([10, 20], [0.0, 1.0], device=device))
    np.testing.assert_array_equal(bn, [0, 20])
    with pytest.raises(ValueError):
        g.normal([0.0, 1.0], 1.0, size=3)


# ------------------------------------------------------------ choice / permutations

def test_choice(device):
    g = ck.random.default_rng(31)
    n = 300_000
    x = on(device, g.choice(7, n, device=device))
    assert x.dtype == np.int64
    assert chi2_stat(np.bincount(x, minlength=7), np.full(7, n / 7)) < chi2_crit(6)
    p = np.array([0.1, 0.0, 0.2, 0.3, 0.4])
    y = on(device, g.choice(5, n, p=p, device=device))
    counts = np.bincount(y, minlength=5)
    assert counts[1] == 0
    keep = p > 0
    assert chi2_stat(counts[keep], n * p[keep]) < chi2_crit(3)
    z = on(device, g.choice(100, 60, replace=False, device=device))
    assert len(set(z.tolist())) == 60 and z.min() >= 0 and z.max() < 100
    w = on(device, g.choice(5, 3, replace=False, p=p, device=device))
    assert len(set(w.tolist())) == 3 and 1 not in w.tolist()
    s = on(device, g.choice(ck.asarray([10.5, 20.5, 30.5], device=device), (4, 2), device=device))
    assert s.shape == (4, 2) and set(s.ravel().tolist()) <= {10.5, 20.5, 30.5}
    with pytest.raises(ValueError):
        g.choice(5, 6, replace=False)
    with pytest.raises(ValueError):
        g.choice(3, 2, p=[0.5, 0.6, 0.1])
    with pytest.raises(ValueError):
        g.choice(3, 2, p=[0.5, 0.5])
    with pytest.raises(ValueError):
        g.choice(5, 4, replace=False, p=p * 0 + np.array([0.5, 0, 0, 0, 0.5]))


def test_choice_without_replacement_weighted_first_pick():
    # the first pick of successive sampling follows p exactly
    g = ck.random.default_rng(37)
    p = np.array([0.5, 0.3, 0.2])
    firsts = np.array([int(ck.asnumpy(g.choice(3, 2, replace=False, p=p))[0]) for _ in range(3000)])
    assert chi2_stat(np.bincount(firsts, minlength=3), 3000 * p) < chi2_crit(2)


def test_permutation_and_shuffle(device):
    g = ck.random.default_rng(41)
    perm = on(device, g.permutation(1000, device=device))
    assert perm.dtype == np.int64
    np.testing.assert_array_equal(np.sort(perm), np.arange(1000))
    a = ck.arange(12, device=device).reshape(4, 3)
    pa = on(device, g.permutation(a))
    assert pa.shape == (4, 3)
    np.testing.assert_array_equal(np.sort(pa[:, 0]), [0, 3, 6, 9])
    np.testing.assert_array_equal(pa[:, 1] - pa[:, 0], 1)       # rows move whole
    np.testing.assert_array_equal(ck.asnumpy(a), np.arange(12).reshape(4, 3))  # a copy
    x = ck.arange(10, device=device)
    assert g.shuffle(x) is None
    xs = on(device, x)
    np.testing.assert_array_equal(np.sort(xs), np.arange(10))
    assert not np.array_equal(xs, np.arange(10))
    lst = list(range(10))
    g.shuffle(lst)
    assert sorted(lst) == list(range(10))
    # all 6 orders of 3 equally likely
    orders = [tuple(ck.asnumpy(g.permutation(3)).tolist()) for _ in range(3000)]
    counts = np.array([orders.count(o) for o in set(orders)])
    assert len(counts) == 6 and chi2_stat(counts, np.full(6, 500)) < chi2_crit(5)


# ------------------------------------------------------------ dtypes, shapes, errors

def test_dtypes_and_shapes(device):
    g = ck.random.default_rng(0)
    want = np.random.default_rng(0)
    for size in [None, 5, (2, 3), (0,), (2, 0, 4)]:
        for fn in ["random", "standard_normal"]:
            for dt in [np.float64, np.float32]:
                r = getattr(g, fn)(size, dtype=dt, device=device)
                w = np.asarray(getattr(want, fn)(size, dtype=dt))
                # (NumPy gives a Python float for size=None; we a 0-d array of dt)
                assert r.shape == w.shape and r.dtype == np.dtype(dt), (fn, size, dt)
                assert r.device == ck.Device(device)
        for name, args in [("integers", (0, 5)), ("uniform", (0, 1)), ("normal", (0, 1)), ("exponential", (1.0,)),
                           ("poisson", (2.0,)), ("binomial", (5, 0.5)), ("gamma", (2.0, 1.0)), ("beta", (1.0, 2.0))]:
            r = getattr(g, name)(*args, size=size, device=device)
            w = np.asarray(getattr(want, name)(*args, size=size))
            assert r.shape == w.shape and r.dtype == w.dtype, (name, size, r.dtype, w.dtype)
    for dt in [np.int8, np.uint8, np.int16, np.uint16, np.int32, np.uint32, np.int64, np.uint64, np.bool_]:
        r = g.integers(0, 2, size=4, dtype=dt, device=device)
        assert r.dtype == np.dtype(dt)
    assert g.choice(5, device=device).shape == ()
    assert g.permutation(0).shape == (0,)


def test_out(device):
    g = ck.random.default_rng(2)
    out = ck.empty((3, 4), dtype=ck.float32, device=device)
    r = g.random(dtype=np.float32, out=out)   # NumPy also wants dtype to match out
    assert r is out
    vals = on(device, out)
    assert vals.min() >= 0 and vals.max() < 1
    want = ck.random.default_rng(2).random((3, 4), dtype=np.float32, device=device)
    np.testing.assert_array_equal(vals, on(device, want))
    with pytest.raises(TypeError):
        g.random(out=ck.empty(3, dtype=ck.float64, device=device), dtype=np.float32)


def test_errors():
    g = ck.random.default_rng(0)
    for call in [lambda: g.normal(0, -1), lambda: g.exponential(-1.0), lambda: g.gamma(-1.0),
                 lambda: g.gamma(1.0, -2.0), lambda: g.beta(0.0, 1.0), lambda: g.beta(1.0, -1.0),
                 lambda: g.poisson(-1.0), lambda: g.poisson(1e20), lambda: g.binomial(-1, 0.5),
                 lambda: g.binomial(10, 1.5), lambda: g.binomial(10, float("nan")),
                 lambda: g.integers(5, 5), lambda: g.integers(5, 3), lambda: g.integers(5, 4, endpoint=True),
                 lambda: g.integers(0, 300, dtype=np.uint8), lambda: g.integers(-1, 3, dtype=np.uint8),
                 lambda: g.choice(0, 3), lambda: g.choice(-2)]:
        with pytest.raises(ValueError):
            call()
    with pytest.raises(TypeError):
        g.random(3, dtype=np.int32)
    with pytest.raises(TypeError):
        g.standard_normal(3, dtype=np.float16)
    with pytest.raises(TypeError):
        g.integers(0, 3, dtype=np.float64)
    with pytest.raises(OverflowError):
        g.uniform(-1e308, 1e308)


def test_errors_match_numpy():
    ours, theirs = ck.random.default_rng(0), np.random.default_rng(0)
    for name, args in [("normal", (0, -1)), ("exponential", (-1.0,)), ("gamma", (-1.0,)), ("beta", (0.0, 1.0)),
                       ("poisson", (-1.0,)), ("binomial", (-1, 0.5)), ("binomial", (3, 1.5)), ("integers", (5, 5)),
                       ("integers", (5, 3))]:
        with pytest.raises(ValueError):
            getattr(theirs, name)(*args)
        with pytest.raises(ValueError):
            getattr(ours, name)(*args)


# ------------------------------------------------------------ the legacy module functions

def test_legacy_functions(device):
    r = ck.random
    r.seed(123)
    a = ck.asnumpy(r.rand(3, 2))
    r.seed(123)
    np.testing.assert_array_equal(ck.asnumpy(r.rand(3, 2)), a)
    assert a.shape == (3, 2) and a.dtype == np.float64
    assert r.randn(4).shape == (4,)
    assert r.rand().shape == ()
    x = r.randint(3, 9, size=1000)
    assert x.dtype == np.int64 and ck.asnumpy(x).min() >= 3 and ck.asnumpy(x).max() < 9
    assert r.randint(5, size=3).shape == (3,)
    assert r.random((2, 2)).shape == (2, 2)
    assert r.random_sample(3).shape == (3,)
    assert r.uniform(1, 2, 5).shape == (5,)
    assert r.normal(0, 1, (2, 5)).shape == (2, 5)
    assert r.choice(10, 4).shape == (4,)
    assert sorted(ck.asnumpy(r.permutation(5)).tolist()) == list(range(5))
    y = ck.arange(6, device=device)
    r.shuffle(y)
    assert sorted(on(device, y).tolist()) == list(range(6))
    assert r.rand(2, device=device).device == ck.Device(device)
    r.seed(123)
    np.testing.assert_array_equal(ck.asnumpy(r.rand(3, 2)), a)


def test_import_is_lazy():
    code = ("import sys, cudakit; assert 'cudakit.random' not in sys.modules; "
            "r = cudakit.random; assert 'cudakit.random' in sys.modules and cudakit.random is r; "
            "assert callable(r.default_rng)")
    subprocess.run([sys.executable, "-c", code], check=True, env={**__import__("os").environ, "CUDAKIT_DEVICE": "cpu"})
    with pytest.raises(AttributeError):
        ck.no_such_name  # noqa: B018


GPU_ONLY = pytest.mark.skipif("cuda" not in DEVICES, reason="no usable CUDA device")
BITWISE = [
    ("random", lambda g, d: g.random(1001, device=d)),
    ("random32", lambda g, d: g.random((7, 333), dtype=np.float32, device=d)),
    ("uniform", lambda g, d: g.uniform(-2, 5, 1003, device=d)),
    ("uniform_arrays", lambda g, d: g.uniform(np.arange(10.0), 20.0, (50, 10), device=d)),
    ("integers", lambda g, d: g.integers(-5, 17, 1002, device=d)),
    ("integers8", lambda g, d: g.integers(-100, 100, 999, dtype=np.int8, device=d)),
    ("integers_bool", lambda g, d: g.integers(0, 2, 77, dtype=bool, device=d)),
    ("integers_u32_full", lambda g, d: g.integers(0, 1 << 32, 513, dtype=np.uint32, device=d)),
    ("integers_big", lambda g, d: g.integers(0, 3 << 62, 1001, dtype=np.uint64, device=d)),
    ("integers_full64", lambda g, d: g.integers(-(1 << 63), (1 << 63) - 1, 1001, endpoint=True, device=d)),
    # the permutations are stable argsorts of the same bits: the same on both
    ("permutation", lambda g, d: g.permutation(1000, device=d)),
    ("permutation_array", lambda g, d: g.permutation(ck.arange(60, device=d).reshape(20, 3), axis=0)),
    ("choice", lambda g, d: g.choice(ck.arange(50.0, device=d), size=(4, 5))),
    ("choice_noreplace", lambda g, d: g.choice(300, size=40, replace=False, device=d)),
    ("choice_p", lambda g, d: g.choice(5, size=100, p=[0.1, 0.2, 0.3, 0.4, 0.0], device=d)),
    # the samplers' log, exp and sines are their own (random_formulas.h) and
    # the GPU's kernels contract no a * b + c: the CPU's bits here too
    ("normal", lambda g, d: g.standard_normal(1001, device=d)),
    ("normal32", lambda g, d: g.standard_normal((3, 335), dtype=np.float32, device=d)),
    ("normal_loc_scale", lambda g, d: g.normal(1.0, 2.0, 999, device=d)),
    ("exponential", lambda g, d: g.standard_exponential(1003, device=d)),
    ("exponential32", lambda g, d: g.standard_exponential(1001, dtype=np.float32, device=d)),
]


@GPU_ONLY
@pytest.mark.parametrize("name,draw", BITWISE, ids=[b[0] for b in BITWISE])
def test_gpu_bitwise_same_as_cpu(name, draw):
    """The GPU's Philox fill gives the CPU's bits for the same seed, and
    leaves the generator at the same counter."""
    gc, gg = ck.random.default_rng(11), ck.random.default_rng(11)
    for _ in range(2):   # the second draw starts where the first left the counter
        c, g = on("cpu", draw(gc, "cpu")), on("cuda", draw(gg, "cuda"))
        hc, hg = ck.asnumpy(c), ck.asnumpy(g)
        assert hc.dtype == hg.dtype and hc.shape == hg.shape
        np.testing.assert_array_equal(hc.view(np.uint8), hg.view(np.uint8))
        assert gc.state == gg.state


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_normal_exponential_from_the_uniforms(device, dtype):
    """The normal and exponential fills are Box-Muller and -log(1 - u) of
    the uniforms the same seed gives (a block's words: u1, u2 for a pair
    of normals, one u an exponential), with the samplers' own log, sine and
    cosine: NumPy's C library computes the same to a few ulps."""
    n = 4000
    u = ck.asnumpy(ck.random.default_rng(7).random(n, dtype=dtype, device=device)).astype(np.float64)
    z = ck.asnumpy(ck.random.default_rng(7).standard_normal(n, dtype=dtype, device=device))
    e = ck.asnumpy(ck.random.default_rng(7).standard_exponential(n, dtype=dtype, device=device))
    assert z.dtype == e.dtype == dtype
    r = np.sqrt(-2.0 * np.log(1.0 - u[0::2]))
    t = 2.0 * np.pi * u[1::2]
    want = np.empty(n)
    want[0::2], want[1::2] = r * np.cos(t), r * np.sin(t)
    # an ulp of the radius or the angle shows as an ulp of the result's scale, not of a small cosine
    np.testing.assert_allclose(z, want.astype(dtype), rtol=0, atol=8 * np.finfo(dtype).eps * np.maximum(r, 1).max())
    np.testing.assert_array_max_ulp(e, (-np.log1p(-u)).astype(dtype), maxulp=2)


@GPU_ONLY
def test_gpu_fill_into_out_and_views():
    """out= on the GPU (contiguous: filled in place; a strided view: through
    a temporary) gives the CPU's numbers."""
    o = ck.empty((4, 100), dtype=np.float32, device="cuda")
    r = ck.random.default_rng(3).random(out=o, dtype=np.float32)
    assert r is o
    want = ck.asnumpy(ck.random.default_rng(3).random((4, 100), dtype=np.float32, device="cpu"))
    np.testing.assert_array_equal(ck.asnumpy(o), want)
    big = ck.zeros((4, 200), dtype=np.float64, device="cuda")
    ck.random.default_rng(3).random(out=big[:, ::2])
    want = ck.asnumpy(ck.random.default_rng(3).random((4, 100), device="cpu"))
    np.testing.assert_array_equal(ck.asnumpy(big)[:, ::2], want)


def test_permutation_choice_shuffle_stay_on_device(device):
    """permutation, shuffle and choice draw and gather on the array's device
    and agree with NumPy's shapes and with their own definitions."""
    g = ck.random.default_rng(3)
    x = ck.arange(24, dtype=ck.float32, device=device).reshape(6, 4)
    p = g.permutation(x, axis=1)
    assert p.device == x.device and p.shape == (6, 4)
    assert sorted(ck.asnumpy(p)[0].tolist()) == [0.0, 1.0, 2.0, 3.0]
    y = x.copy()
    g.shuffle(y)
    assert y.device == x.device
    assert sorted(ck.asnumpy(y)[:, 0].tolist()) == [0.0, 4.0, 8.0, 12.0, 16.0, 20.0]
    np.testing.assert_array_equal(np.sort(ck.asnumpy(y), axis=0), ck.asnumpy(x))
    c = g.choice(x, size=(2, 3), axis=1)
    assert c.device == x.device and c.shape == (6, 2, 3)
    assert np.isin(ck.asnumpy(c)[0], [0.0, 1.0, 2.0, 3.0]).all()
    c0 = g.choice(x)
    assert c0.shape == (4,)
    nr = ck.asnumpy(g.choice(10, size=10, replace=False, device=device))
    assert sorted(nr.tolist()) == list(range(10))
    pw = g.choice(3, size=20000, p=ck.asarray([0.5, 0.0, 0.5], device=device))
    counts = np.bincount(ck.asnumpy(pw), minlength=3)
    assert counts[1] == 0 and abs(counts[0] - 10000) < 600
    with pytest.raises(ValueError, match="larger sample"):
        g.choice(3, size=4, replace=False, device=device)


@GPU_ONLY
@pytest.mark.parametrize("name,draw", [
    ("gamma", lambda g, d: g.gamma(ck.asarray(np.linspace(0.2, 9.0, 2000), device=d), 2.0)),
    ("beta", lambda g, d: g.beta(0.7, 3.5, 2000, device=d)),
    ("poisson", lambda g, d: g.poisson(np.linspace(0.5, 80.0, 2000), device=d)),
    ("binomial", lambda g, d: g.binomial(np.arange(2000) % 97, 0.3, device=d)),
])
def test_gpu_heavy_distributions_follow_the_cpu(name, draw):
    """gamma/beta/poisson/binomial run on the GPU (a thread per element on
    its own stream, the CPU's algorithm, its own log, exp and pow, no FMA
    contraction): the CPU's bits."""
    gc, gg = ck.random.default_rng(5), ck.random.default_rng(5)
    c = draw(gc, "cpu")
    g = draw(gg, "cuda")
    assert g.device.type == "cuda" and c.dtype == g.dtype and c.shape == g.shape
    hc, hg = ck.asnumpy(c), ck.asnumpy(g)
    np.testing.assert_array_equal(hc.view(np.uint8), hg.view(np.uint8))
    assert gc.state == gg.state


def test_heavy_distributions_follow_their_parameters_device(device):
    """A parameter array on a device puts the draw there (as for every op)."""
    g = ck.random.default_rng(9)
    lam = ck.asarray(np.linspace(0.5, 20.0, 64), device=device)
    for x in (g.gamma(lam, 1.0), g.poisson(lam), g.beta(lam, 2.0),
              g.binomial(ck.asarray(np.arange(64), device=device), 0.5)):
        assert x.device.type == device and x.shape == (64,)


def test_array_parameters_stay_on_their_device(device):
    """uniform/normal/exponential with cudakit array parameters draw on the
    parameters' device and scale there, with NumPy's checks of the values
    (each one value read back), and the same numbers as scalar parameters
    give element by element."""
    loc = ck.asarray(np.array([0.0, 10.0, -5.0]), device=device)
    scale = ck.asarray(np.array([1.0, 0.0, 2.0]), device=device)
    g1, g2 = ck.random.default_rng(5), ck.random.default_rng(5)
    y = g1.normal(loc, scale, size=(4, 3))
    assert y.device.type == device and y.shape == (4, 3) and y.dtype == np.float64
    z = ck.asnumpy(g2.standard_normal((4, 3), device=device))
    np.testing.assert_allclose(ck.asnumpy(y), np.array([0.0, 10.0, -5.0]) + np.array([1.0, 0.0, 2.0]) * z,
                               rtol=1e-15, atol=0)
    u = ck.random.default_rng(6).uniform(ck.asarray(np.array([1.0, 2.0]), device=device), 3.0, size=(500, 2))
    hu = ck.asnumpy(u)
    assert u.device.type == device and (hu[:, 0] >= 1).all() and (hu[:, 1] >= 2).all() and (hu < 3).all()
    e = ck.random.default_rng(7).exponential(ck.asarray(np.array([1.0, 4.0]), device=device), size=(20000, 2))
    he = ck.asnumpy(e)
    assert e.device.type == device and abs(he[:, 0].mean() - 1) < 0.05 and abs(he[:, 1].mean() - 4) < 0.2
    g = ck.random.default_rng(8)
    with pytest.raises(ValueError, match="scale < 0"):
        g.normal(0.0, ck.asarray(np.array([1.0, -1.0]), device=device))
    with pytest.raises(ValueError, match="scale < 0"):
        g.exponential(ck.asarray(np.array([-1.0]), device=device))
    with pytest.raises(ValueError, match="lam < 0 or lam is NaN"):
        g.poisson(ck.asarray(np.array([1.0, np.nan]), device=device))
    with pytest.raises(OverflowError):
        g.uniform(ck.asarray(np.array([-np.inf]), device=device), 1.0)
    with pytest.raises(TypeError, match="same_kind"):
        g.binomial(ck.asarray(np.array([2.5]), device=device), 0.5)
    bn = g.binomial(ck.asarray(np.array([3.0, 5.0]), device=device), ck.asarray(np.array([1.0, 0.0]), device=device))
    assert bn.device.type == device
    np.testing.assert_array_equal(ck.asnumpy(bn), [3, 0])
