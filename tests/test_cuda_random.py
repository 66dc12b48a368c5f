"""cudakit.cuda.random (Numba's numba.cuda.random): the xoroshiro128+ states
and draws against a reference written here from the algorithms' description
(SplitMix64 seeding, the xoroshiro128+ step with a, b, c = 55, 14, 36, the
jump polynomial, the uniforms' 53-bit conversion and Box-Muller), on both
devices; the same bits on the CPU and the GPU; Monte Carlo pi; translations
built by NVRTC; and, where Numba is installed, Numba's own functions."""
import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import cudakit as ck
from cudakit import cuda
from cudakit.cuda.random import (create_xoroshiro128p_states, init_xoroshiro128p_states, init_xoroshiro128p_state,
                                 init_xoroshiro128p_states_cpu,
                                 xoroshiro128p_dtype, xoroshiro128p_jump, xoroshiro128p_next,
                                 xoroshiro128p_normal_float32, xoroshiro128p_normal_float64, xoroshiro128p_type,
                                 xoroshiro128p_uniform_float32, xoroshiro128p_uniform_float64)
from conftest import DEVICES

GPU_ONLY = pytest.mark.skipif("cuda" not in DEVICES, reason="no usable CUDA device")
SETTINGS = settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])

# ---------------------------------------------------------- the reference

MASK = (1 << 64) - 1
JUMP = (0xBEAC0467EBA5FACB, 0xD86B048B86AA9922)


def ref_splitmix64(seed):
    z = (seed + 0x9E3779B97F4A7C15) & MASK
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK
    return z ^ (z >> 31)


def ref_rotl(x, k):
    return ((x << k) | (x >> (64 - k))) & MASK


def ref_next(s):
    s0, s1 = s
    r = (s0 + s1) & MASK
    s1 ^= s0
    s[0] = ref_rotl(s0, 55) ^ s1 ^ ((s1 << 14) & MASK)
    s[1] = ref_rotl(s1, 36)
    return r


def ref_jump(s):
    a = b = 0
    for word in JUMP:
        for bit in range(64):
            if word >> bit & 1:
                a ^= s[0]
                b ^= s[1]
            ref_next(s)
    s[0], s[1] = a, b


def ref_states(n, seed, sub=0):
    s = [ref_splitmix64(seed % (1 << 64))] * 2
    for _ in range(sub):
        ref_jump(s)
    rows = []
    for i in range(n):
        if i:
            ref_jump(s)
        rows.append(list(s))
    return np.array(rows, dtype=np.uint64).reshape(n, 2)


def ref_steps(states, count):
    """The next count outputs of every generator (rows of a (n, 2) uint64 array),
    vectorised over the generators; and the states after."""
    s0, s1 = states[:, 0].copy(), states[:, 1].copy()
    out = np.empty((len(states), count), np.uint64)
    for k in range(count):
        out[:, k] = s0 + s1
        t = s1 ^ s0
        s0 = ((s0 << np.uint64(55)) | (s0 >> np.uint64(9))) ^ t ^ (t << np.uint64(14))
        s1 = (t << np.uint64(36)) | (t >> np.uint64(28))
    return out, np.stack([s0, s1], axis=1)


def ref_uniform64(x):
    return (x >> np.uint64(11)).astype(np.float64) * 2.0 ** -53


def ref_uniform32(x):
    return ref_uniform64(x).astype(np.float32)


def _f32_of_f64(fn, x):
    # a correctly rounded float32 function, as the platforms' logf and cosf nearly are
    return fn(x.astype(np.float64)).astype(np.float32)


def ref_normal32(x1, x2):
    u1, u2 = ref_uniform32(x1), ref_uniform32(x2)
    with np.errstate(divide="ignore"):
        return np.sqrt(np.float32(-2.0) * _f32_of_f64(np.log, u1)) * _f32_of_f64(np.cos, np.float32(2 * math.pi) * u2)


def ref_normal64(x1, x2):
    u1, u2 = ref_uniform32(x1), ref_uniform32(x2)
    with np.errstate(divide="ignore"):
        return np.sqrt(-2.0 * _f32_of_f64(np.log, u1).astype(np.float64)) * np.cos(2 * math.pi * u2.astype(np.float64))


def test_reference_splitmix64_known_answers():
    """The reference's SplitMix64 against the first outputs of splitmix64.c for seed 1234567."""
    s, outs = 1234567, []
    for _ in range(3):
        outs.append(ref_splitmix64(s))
        s = (s + 0x9E3779B97F4A7C15) & MASK
    assert outs == [6457827717110365317, 3203168211198807973, 9817491932198370423]


# ---------------------------------------------------------------- states

@pytest.mark.parametrize("seed", [0, 1, 42, 2 ** 63, 2 ** 64 - 1])
@pytest.mark.parametrize("sub", [0, 1, 3])
def test_states_match_the_reference(device, seed, sub):
    st = create_xoroshiro128p_states(17, seed, sub, device=device)
    assert st.shape == (17, 2) and st.dtype == ck.uint64 and st.device.type == device
    np.testing.assert_array_equal(ck.asnumpy(st), ref_states(17, seed, sub))


@SETTINGS
@given(n=st.integers(0, 12), seed=st.integers(-2 ** 63, 2 ** 64 - 1), sub=st.integers(0, 4),
       step=st.integers(1, 3), order=st.sampled_from("CF"))
def test_states_into_any_layout(device, n, seed, sub, step, order):
    """Any seed Numba takes, into views of any row step and either order."""
    whole = ck.zeros((n * step, 2), dtype=ck.uint64, device=device, order=order)
    init_xoroshiro128p_states(whole[::step], seed, sub)
    got = ck.asnumpy(whole)
    np.testing.assert_array_equal(got[::step], ref_states(n, seed, sub))
    assert not np.delete(got, np.s_[::step], axis=0).any()


def test_states_seeds_as_numba_converts_them():
    want = ck.asnumpy(create_xoroshiro128p_states(3, 2 ** 64 - 1, device="cpu"))
    for seed in (-1, np.int64(-1), np.uint64(2 ** 64 - 1)):
        np.testing.assert_array_equal(ck.asnumpy(create_xoroshiro128p_states(3, seed, device="cpu")), want)
    np.testing.assert_array_equal(ck.asnumpy(create_xoroshiro128p_states(3, 5.0, device="cpu")),
                                  ck.asnumpy(create_xoroshiro128p_states(3, np.int32(5), device="cpu")))


def test_subsequences_are_the_same_generators():
    """Generator i of subsequence_start k is generator k + i of subsequence_start 0; far
    starts (reached by squaring the jump's matrix) agree with one more jump of the reference."""
    whole = ck.asnumpy(create_xoroshiro128p_states(40, 9, device="cpu"))
    np.testing.assert_array_equal(ck.asnumpy(create_xoroshiro128p_states(12, 9, 28, device="cpu")), whole[28:])
    for far in (2 ** 40, 2 ** 63 + 12345, 2 ** 64 - 2):
        a = ck.asnumpy(create_xoroshiro128p_states(2, 3, far, device="cpu"))
        b = ck.asnumpy(create_xoroshiro128p_states(1, 3, far + 1, device="cpu"))
        s = [int(a[0, 0]), int(a[0, 1])]
        ref_jump(s)
        assert s == [int(a[1, 0]), int(a[1, 1])] == [int(b[0, 0]), int(b[0, 1])]


def test_many_states(device):
    n = 100_000
    st = ck.asnumpy(create_xoroshiro128p_states(n, 77, device=device))
    s = [int(st[n - 2, 0]), int(st[n - 2, 1])]
    ref_jump(s)
    assert s == [int(st[n - 1, 0]), int(st[n - 1, 1])]
    np.testing.assert_array_equal(st[:5], ref_states(5, 77))
    assert len(np.unique(st[:, 0])) == n


def test_no_states():
    st = create_xoroshiro128p_states(0, 1, device="cpu")
    assert st.shape == (0, 2)


def test_init_in_place(device):
    """init_xoroshiro128p_states fills what it is given: cudakit arrays of any device
    and strides, NumPy arrays of Numba's records or of uint64 pairs."""
    big = ck.zeros((10, 4), dtype=ck.uint64, device=device)
    init_xoroshiro128p_states(big[:, 1:3], 5, 2)
    got = ck.asnumpy(big)
    np.testing.assert_array_equal(got[:, 1:3], ref_states(10, 5, 2))
    assert not got[:, [0, 3]].any()
    every_other = ck.zeros((8, 2), dtype=ck.uint64, device=device)
    init_xoroshiro128p_states(every_other[::2], 5)
    np.testing.assert_array_equal(ck.asnumpy(every_other)[::2], ref_states(4, 5))
    rec = np.zeros(6, dtype=xoroshiro128p_dtype)
    init_xoroshiro128p_states(rec, 11)
    want = ref_states(6, 11)
    np.testing.assert_array_equal(rec["s0"], want[:, 0])
    np.testing.assert_array_equal(rec["s1"], want[:, 1])
    pairs = np.zeros((6, 2), np.uint64)
    init_xoroshiro128p_states(pairs, 11)
    np.testing.assert_array_equal(pairs, want)
    rec2 = np.zeros(6, dtype=xoroshiro128p_dtype)
    init_xoroshiro128p_states_cpu(rec2, 11, 0)
    np.testing.assert_array_equal(rec2, rec)
    np.testing.assert_array_equal(ck.asnumpy(create_xoroshiro128p_states(6, 11, device=device)).view(
        xoroshiro128p_dtype)[:, 0], rec)


def test_states_with_a_stream(device):
    s = cuda.Stream(device=device)
    st = create_xoroshiro128p_states(9, 4, stream=s)
    s.synchronize()
    assert st.device.type == device
    np.testing.assert_array_equal(ck.asnumpy(st), ref_states(9, 4))


def test_device_array_of_records():
    """cuda.device_array(n, dtype=xoroshiro128p_dtype), as Numba's users make states by hand."""
    st = cuda.device_array(7, dtype=xoroshiro128p_dtype)
    assert st.shape == (7, 2) and st.dtype == ck.uint64
    init_xoroshiro128p_states(st, 3)
    np.testing.assert_array_equal(ck.asnumpy(st), ref_states(7, 3))
    with pytest.raises(TypeError, match="structured"):
        cuda.device_array(7, dtype=np.dtype([("a", np.float32), ("b", np.int32)]))


def test_state_errors():
    with pytest.raises(ValueError, match="negative"):
        create_xoroshiro128p_states(-1, 1)
    with pytest.raises(TypeError):
        create_xoroshiro128p_states(2.5, 1)
    with pytest.raises(OverflowError, match="seed"):
        create_xoroshiro128p_states(2, 2 ** 64)
    with pytest.raises(OverflowError, match="seed"):
        create_xoroshiro128p_states(2, -2 ** 63 - 1)
    with pytest.raises(TypeError, match="seed must be an integer"):
        create_xoroshiro128p_states(2, "1")
    with pytest.raises(ValueError, match="finite"):
        create_xoroshiro128p_states(2, float("nan"))
    with pytest.raises(ValueError, match="subsequence_start must be >= 0"):
        create_xoroshiro128p_states(2, 1, -1)
    with pytest.raises(TypeError, match=r"\(n, 2\) uint64"):
        init_xoroshiro128p_states(ck.zeros((3, 2), dtype=ck.float64, device="cpu"), 1)
    with pytest.raises(TypeError, match=r"\(n, 2\) uint64"):
        init_xoroshiro128p_states(ck.zeros(6, dtype=ck.uint64, device="cpu"), 1)
    with pytest.raises(TypeError, match=r"\(n, 2\) uint64"):
        init_xoroshiro128p_states(np.zeros((3, 2)), 1)
    with pytest.raises(TypeError, match="xoroshiro128p_dtype"):
        init_xoroshiro128p_states(np.zeros(3, dtype=[("s0", np.uint32), ("s1", np.uint32)]), 1)
    ro = np.zeros((3, 2), np.uint64)
    ro.flags.writeable = False
    with pytest.raises(ValueError, match="read-only"):
        init_xoroshiro128p_states(ro, 1)
    with pytest.raises(TypeError, match="cudakit or NumPy array"):
        init_xoroshiro128p_states([[0, 0]], 1)


# ----------------------------------------------------------------- draws

@cuda.jit
def draw_all(states, u32, u64, n32, n64, raw):
    i = cuda.grid(1)
    if i < states.shape[0]:
        for k in range(u32.shape[1]):
            u32[i, k] = xoroshiro128p_uniform_float32(states, i)
            u64[i, k] = xoroshiro128p_uniform_float64(states, i)
            n32[i, k] = xoroshiro128p_normal_float32(states, i)
            n64[i, k] = xoroshiro128p_normal_float64(states, i)
            raw[i, k] = xoroshiro128p_next(states, i)


def run_draw_all(states, k):
    n, dev = states.shape[0], states.device
    outs = [ck.zeros((n, k), dtype=d, device=dev) for d in ("float32", "float64", "float32", "float64", "uint64")]
    draw_all[(n + 63) // 64, 64](states, *outs)
    return [ck.asnumpy(o) for o in outs]


def ref_draw_all(states, k):
    x, after = ref_steps(states, 7 * k)
    return [ref_uniform32(x[:, 0::7]), ref_uniform64(x[:, 1::7]), ref_normal32(x[:, 2::7], x[:, 3::7]),
            ref_normal64(x[:, 4::7], x[:, 5::7]), x[:, 6::7]], after


def test_draws_match_the_reference(device):
    """Uniforms and raw steps bit for bit; normals to the last bits of logf and cosf."""
    states = create_xoroshiro128p_states(200, 2024, device=device)
    start = ck.asnumpy(states).copy()
    got = run_draw_all(states, 16)
    want, after = ref_draw_all(start, 16)
    for g, w in zip(got, want):
        assert g.dtype == w.dtype and g.shape == w.shape
    np.testing.assert_array_equal(got[0], want[0])
    np.testing.assert_array_equal(got[1], want[1])
    np.testing.assert_array_equal(got[4], want[4])
    np.testing.assert_allclose(got[2], want[2], rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(got[3], want[3], rtol=1e-6, atol=1e-6)
    np.testing.assert_array_equal(ck.asnumpy(states), after)


def test_draws_are_distributed_as_they_should(device):
    states = create_xoroshiro128p_states(512, 1, device=device)
    u32, u64, n32, n64, _ = run_draw_all(states, 64)
    for u in (u32, u64):
        assert 0 <= u.min() and u.max() < 1
        assert abs(u.mean() - 0.5) < 0.01 and abs(u.var() - 1 / 12) < 0.005
    for z in (n32, n64):
        assert abs(z.mean()) < 0.02 and abs(z.std() - 1) < 0.02


def test_uniform32_rounds_as_numba():
    """float32 is the float64 draw rounded to nearest: the top draws give 1.0 (Numba's conversion)."""
    x = np.array([MASK, MASK - (1 << 38), 1 << 11, 0], dtype=np.uint64)
    assert list(ref_uniform32(x)) == [1.0, np.float32(1.0), np.float32(2.0 ** -53), 0.0]
    # a state whose next output is 2^64 - 1: s0 = 2^64 - 1, s1 = 0
    st = ck.asarray(np.array([[MASK, 0]], np.uint64), device="cpu")
    out = ck.zeros(1, dtype=ck.float32, device="cpu")
    one_draw[1, 1](st, out)
    assert ck.asnumpy(out)[0] == 1.0


@cuda.jit
def one_draw(states, out):
    out[0] = xoroshiro128p_uniform_float32(states, 0)


@cuda.jit
def states_in_a_kernel(states, seed):
    if cuda.grid(1) == 0:
        init_xoroshiro128p_state(states, 0, seed)
        for i in range(1, states.shape[0]):
            states[i, 0] = states[i - 1, 0]
            states[i, 1] = states[i - 1, 1]
            xoroshiro128p_jump(states, i)


def test_init_and_jump_in_a_kernel(device):
    """init_xoroshiro128p_state and xoroshiro128p_jump in a kernel make what the host makes."""
    st = ck.zeros((33, 2), dtype=ck.uint64, device=device)
    states_in_a_kernel[1, 32](st, 123)
    np.testing.assert_array_equal(ck.asnumpy(st), ref_states(33, 123))
    st2 = ck.zeros((4, 2), dtype=ck.uint64, device=device)
    states_in_a_kernel[1, 1](st2, np.int32(-1))
    np.testing.assert_array_equal(ck.asnumpy(st2), ref_states(4, 2 ** 64 - 1))


@cuda.jit(device=True)
def _gauss_pair(states, i):
    return xoroshiro128p_normal_float64(states, i), cuda.random.xoroshiro128p_uniform_float64(states, i)


@cuda.jit
def through_device_function(states, out):
    i = cuda.grid(1)
    if i < out.shape[0]:
        z, u = _gauss_pair(states, -1 - i)
        out[i, 0] = z
        out[i, 1] = u


def test_draws_in_device_functions_and_negative_indices(device):
    """Draws from device functions, through cuda.random's attributes, with Python's
    negative indices (generator -1 is the last)."""
    states = create_xoroshiro128p_states(10, 8, device=device)
    start = ck.asnumpy(states).copy()
    out = ck.zeros((10, 2), dtype=ck.float64, device=device)
    through_device_function[1, 32](states, out)
    x, after = ref_steps(start[::-1], 3)
    got = ck.asnumpy(out)
    np.testing.assert_allclose(got[:, 0], ref_normal64(x[:, 0], x[:, 1]), rtol=1e-6)
    np.testing.assert_array_equal(got[:, 1], ref_uniform64(x[:, 2]))
    np.testing.assert_array_equal(ck.asnumpy(states), after[::-1])


def test_record_arrays_as_kernel_arguments(device):
    """A NumPy array of Numba's records is a kernel argument (copied around a GPU launch)."""
    rec = np.zeros(5, dtype=xoroshiro128p_dtype)
    init_xoroshiro128p_states(rec, 6)
    start = ck.asnumpy(create_xoroshiro128p_states(5, 6, device="cpu"))
    out = ck.zeros((5, 1), dtype=ck.float64, device=device)

    u = ck.zeros((5, 1), dtype=ck.float32, device=device)
    args = (u, out, ck.zeros_like(u), ck.zeros_like(out), ck.zeros((5, 1), dtype=ck.uint64, device=device))
    if device == "cpu":
        draw_all[1, 32](rec, *args)
    else:
        with pytest.warns(cuda.KernelArgumentWarning, match="copied"):
            draw_all[1, 32](rec, *args)
    want, after = ref_draw_all(start, 1)
    np.testing.assert_array_equal(ck.asnumpy(u), want[0])
    np.testing.assert_array_equal(rec["s0"], after[:, 0])
    np.testing.assert_array_equal(rec["s1"], after[:, 1])


def test_eager_signature_with_xoroshiro128p_type():
    k = cuda.jit(cuda.void(xoroshiro128p_type[::1], cuda.float32[::1]))(one_draw.py_func)
    st = create_xoroshiro128p_states(1, 5, device="cpu")
    start = ck.asnumpy(st).copy()
    out = ck.zeros(1, dtype=ck.float32, device="cpu")
    k[1, 1](st, out)
    assert ck.asnumpy(out)[0] == ref_uniform32(ref_steps(start, 1)[0][:, 0])[0]
    assert repr(xoroshiro128p_type[:]) == "array(uint64, 2d, A)"
    with pytest.raises(TypeError, match="one-dimensional"):
        xoroshiro128p_type[:, :]


@cuda.jit(debug=True)
def draw_past_the_end(states, out):
    out[0] = xoroshiro128p_uniform_float64(states, states.shape[0])


def test_debug_kernels_check_the_index(device):
    st = create_xoroshiro128p_states(3, 1, device=device)
    with pytest.raises(IndexError, match="'states'"):
        draw_past_the_end[1, 1](st, ck.zeros(1, dtype=ck.float64, device=device))


def bad_states_kind(states, out):
    out[0] = xoroshiro128p_uniform_float32(states, 0)


def bad_index(states, out):
    out[0] = xoroshiro128p_uniform_float32(states, 0.5)


def bad_arity(states, out):
    out[0] = xoroshiro128p_normal_float32(states)


@pytest.mark.parametrize("fn, states, match", [
    (bad_states_kind, np.zeros(4, np.uint64), r"states must be the \(n, 2\) uint64 array"),
    (bad_states_kind, np.zeros((2, 2), np.float32), r"states must be the \(n, 2\) uint64 array"),
    (bad_index, np.zeros((2, 2), np.uint64), "index must be an integer"),
    (bad_arity, np.zeros((2, 2), np.uint64), "takes 2 arguments"),
])
def test_typing_errors(fn, states, match):
    with pytest.raises(cuda.TypingError, match=match) as info:
        cuda.jit(fn)[1, 1](states, np.zeros(1, np.float32))
    assert fn.__name__ in str(info.value)


def test_host_calls_say_where_they_belong():
    with pytest.raises(RuntimeError, match="inside a kernel"):
        xoroshiro128p_uniform_float32(np.zeros((1, 2), np.uint64), 0)


def test_module_attribute():
    assert cuda.random.create_xoroshiro128p_states is create_xoroshiro128p_states


# ---------------------------------------------------------- Monte Carlo pi

@cuda.jit
def compute_pi(states, iterations, out):
    i = cuda.grid(1)
    if i < out.shape[0]:
        inside = 0
        for _ in range(iterations):
            x = xoroshiro128p_uniform_float32(states, i)
            y = xoroshiro128p_uniform_float32(states, i)
            if x * x + y * y <= 1.0:
                inside += 1
        out[i] = inside


def test_monte_carlo_pi(device):
    """Numba's Monte Carlo pi, against the same draws in NumPy: the counts agree (but
    for a sample on the circle a fused multiply-add may decide) and pi comes out."""
    threads, blocks, iters = 64, 24, 500
    n = threads * blocks
    states = create_xoroshiro128p_states(n, seed=1, device=device)
    start = ck.asnumpy(states).copy()
    out = ck.zeros(n, dtype=ck.int64, device=device)
    compute_pi[blocks, threads](states, iters, out)
    x = ref_uniform32(ref_steps(start, 2 * iters)[0])
    xs, ys = x[:, 0::2], x[:, 1::2]
    want = (xs * xs + ys * ys <= np.float32(1.0)).sum(axis=1)
    got = ck.asnumpy(out)
    assert got.dtype == np.int64 and got.shape == (n,)
    assert np.abs(got - want).sum() <= 2
    assert abs(4.0 * got.sum() / (n * iters) - math.pi) < 0.01


# --------------------------------------------------------- both devices

@GPU_ONLY
def test_gpu_same_bits_as_cpu():
    c = create_xoroshiro128p_states(300, 99, 5, device="cpu")
    g = create_xoroshiro128p_states(300, 99, 5, device="cuda")
    np.testing.assert_array_equal(ck.asnumpy(c), ck.asnumpy(g))
    gc, gg = run_draw_all(c, 8), run_draw_all(g, 8)
    for i in (0, 1, 4):
        np.testing.assert_array_equal(gc[i], gg[i])
    for i in (2, 3):
        np.testing.assert_allclose(gc[i], gg[i], rtol=1e-6, atol=1e-6)
    np.testing.assert_array_equal(ck.asnumpy(c), ck.asnumpy(g))


@pytest.mark.parametrize("sig", [
    "void(uint64[:, ::1], float32[:, ::1], float64[:, ::1], float32[:, ::1], float64[:, ::1], uint64[:, ::1])",
    "void(uint64[:, :], float32[:, :], float64[:, :], float32[:, :], float64[:, :], uint64[:, :])",
])
def test_translations_compile_for_the_gpu(sig):
    """The generator's code builds with NVRTC (sm_90) for C-ordered and strided states."""
    for k, s in ((draw_all, sig), (states_in_a_kernel, "void(uint64[:, ::1], int64)"),
                 (states_in_a_kernel, "void(uint64[:, :], float64)"),
                 (compute_pi, "void(uint64[:, ::1], int32, int64[::1])"),
                 (through_device_function, "void(uint64[:, ::1], float64[:, ::1])"),
                 (draw_past_the_end, "void(uint64[:, ::1], float64[::1])")):
        src = k.inspect_cuda(s, full=True)
        try:
            ck._core._kernel_compile(src, f"{k.__name__}.cu", 90)
        except ck.cuda.CUDAError as e:
            pytest.skip(f"no NVRTC here: {e}")


# ------------------------------------------------------------ Numba's own

def _numba_random():
    nr = pytest.importorskip("numba.cuda.random", reason="Numba's CUDA target (numba-cuda) is not installed")
    return nr


def test_numba_host_functions_agree():
    """Numba's states (init_xoroshiro128p_states_cpu) and its draws called on the host
    (its CPU-compiled functions) against cudakit's CPU kernels."""
    nr = _numba_random()
    n, k = 16, 4
    for seed, sub in ((1, 0), (np.uint64(2 ** 64 - 1), 3), (-5, 2)):
        rec = np.empty(n, dtype=nr.xoroshiro128p_dtype)
        nr.init_xoroshiro128p_states_cpu(rec, seed, sub)
        ours = create_xoroshiro128p_states(n, seed, sub, device="cpu")
        np.testing.assert_array_equal(ck.asnumpy(ours)[:, 0], rec["s0"])
        np.testing.assert_array_equal(ck.asnumpy(ours)[:, 1], rec["s1"])
        got = run_draw_all(ours, k)
        fns = (nr.xoroshiro128p_uniform_float32, nr.xoroshiro128p_uniform_float64,
               nr.xoroshiro128p_normal_float32, nr.xoroshiro128p_normal_float64, nr.xoroshiro128p_next)
        want = [np.empty((n, k), g.dtype) for g in got]
        for i in range(n):
            for j in range(k):
                for w, f in zip(want, fns):
                    w[i, j] = f(rec, i)
        for i in (0, 1, 4):
            np.testing.assert_array_equal(got[i], want[i])
        for i in (2, 3):
            np.testing.assert_allclose(got[i], want[i], rtol=1e-6, atol=1e-6)
        np.testing.assert_array_equal(ck.asnumpy(ours)[:, 0], rec["s0"])


@GPU_ONLY
def test_numba_cuda_kernels_agree():
    """On the GPU: Numba's kernel and cudakit's, the same source, from the same seed."""
    nr = _numba_random()
    from numba import cuda as ncuda
    if not ncuda.is_available():
        pytest.skip("Numba sees no GPU")
    n, k = 4096, 8

    @ncuda.jit
    def numba_draw_all(states, u32, u64, n32, n64, raw):
        i = ncuda.grid(1)
        if i < states.shape[0]:
            for j in range(u32.shape[1]):
                u32[i, j] = nr.xoroshiro128p_uniform_float32(states, i)
                u64[i, j] = nr.xoroshiro128p_uniform_float64(states, i)
                n32[i, j] = nr.xoroshiro128p_normal_float32(states, i)
                n64[i, j] = nr.xoroshiro128p_normal_float64(states, i)
                raw[i, j] = nr.xoroshiro128p_next(states, i)

    ns = nr.create_xoroshiro128p_states(n, seed=31)
    outs = [ncuda.device_array((n, k), dtype=d) for d in ("float32", "float64", "float32", "float64", "uint64")]
    numba_draw_all[(n + 127) // 128, 128](ns, *outs)
    want = [o.copy_to_host() for o in outs]
    got = run_draw_all(create_xoroshiro128p_states(n, 31, device="cuda"), k)
    for i in (0, 1, 4):
        np.testing.assert_array_equal(got[i], want[i])
    for i in (2, 3):
        np.testing.assert_allclose(got[i], want[i], rtol=1e-6, atol=1e-6)
        # both call libdevice's logf and cosf: expected bit for bit
        assert np.mean(got[i] == want[i]) > 0.999, np.mean(got[i] == want[i])
