"""The autograd engine's semantics (issue 16): recording, the backward walk,
accumulation, broadcasting, retain_graph, the version counter, grad mode,
detach, leaves, autograd.grad/backward/Function, subclasses; and the rules
of the element-wise ops, reductions, layout ops and matmul against central
finite differences in float64, on both devices."""
import textwrap

import numpy as np
import pytest

import cudakit as ck


def arr(values, device, requires_grad=False, dtype=np.float64):
    return ck.asarray(np.asarray(values, dtype=dtype), device=device, requires_grad=requires_grad)


def npy(x):
    return ck.asnumpy(x)


def numeric_grad(f, xs, eps=1e-6):
    """Central differences of the scalar f(*xs) (NumPy arrays, float64) in each x."""
    grads = []
    for i, x in enumerate(xs):
        g = np.zeros_like(x)
        it = np.nditer(x, flags=["multi_index"])
        for _ in it:
            idx = it.multi_index
            xp = [y.copy() for y in xs]
            xm = [y.copy() for y in xs]
            xp[i][idx] += eps
            xm[i][idx] -= eps
            g[idx] = (f(*xp) - f(*xm)) / (2 * eps)
        grads.append(g)
    return grads


def check_grads(fn, inputs, device, atol=1e-6, rtol=1e-5):
    """fn maps cudakit arrays to a cudakit array; its sum's gradient in each
    input is compared with central differences."""
    xs = [ck.asarray(x, device=device, requires_grad=True) for x in inputs]
    out = fn(*xs)
    out.sum().backward()

    def f(*vals):
        return float(npy(fn(*[ck.asarray(v, device=device) for v in vals]).sum()))

    want = numeric_grad(f, [np.array(x, dtype=np.float64) for x in inputs])
    for x, w in zip(xs, want):
        assert x.grad is not None
        assert x.grad.shape == x.shape and x.grad.dtype == x.dtype
        np.testing.assert_allclose(npy(x.grad), w, atol=atol, rtol=rtol)


RNG = np.random.default_rng(16)


def rand(*shape, lo=-1.0, hi=1.0):
    return RNG.uniform(lo, hi, size=shape)


# ------------------------------------------------------------------ basics


def test_leaf_flags(device):
    x = arr([1.0, 2.0], device)
    assert not x.requires_grad and x.is_leaf and x.grad is None and x.grad_fn is None
    assert x.requires_grad_() is x
    assert x.requires_grad and x.is_leaf
    y = x * 2
    assert y.requires_grad and not y.is_leaf
    assert y.grad_fn.name() == "MulBackward0"
    nxt = y.grad_fn.next_functions
    assert len(nxt) == 2 and nxt[0][0].name() == "AccumulateGrad" and nxt[1][0] is None
    with pytest.raises(RuntimeError, match="leaf"):
        y.requires_grad = False
    x.requires_grad = False
    assert not (x * 2).requires_grad


def test_only_inexact_dtypes_require_grad(device):
    i = ck.arange(3, device=device)
    with pytest.raises(RuntimeError, match="floating point"):
        i.requires_grad_()
    z = ck.asarray(np.array([1 + 2j]), device=device, requires_grad=True)
    assert z.requires_grad


def test_creation_requires_grad(device):
    for x in (ck.zeros((2, 3), device=device, requires_grad=True), ck.ones(4, device=device, requires_grad=True),
              ck.full((2,), 3.0, device=device, requires_grad=True),
              ck.empty((2,), device=device, requires_grad=True),
              ck.zeros_like(ck.ones(3, device=device), requires_grad=True),
              ck.arange(4.0, device=device, requires_grad=True),
              ck.linspace(0, 1, 5, device=device, requires_grad=True),
              ck.eye(3, device=device, requires_grad=True),
              ck.array([1.0, 2.0], device=device, requires_grad=True),
              ck.random.randn(2, 2, device=device, requires_grad=True)):
        assert x.requires_grad and x.is_leaf
    assert not ck.zeros(3, device=device).requires_grad


def test_outputs_that_cannot_carry_a_gradient(device):
    x = arr([1.0, -2.0, 3.0], device, requires_grad=True)
    assert not (x > 0).requires_grad
    assert not ck.argmax(x).requires_grad
    assert not ck.isnan(x).requires_grad


def test_accumulation_and_sharing(device):
    x = arr([1.0, 2.0, 3.0], device, requires_grad=True)
    (x * x).sum().backward()
    np.testing.assert_allclose(npy(x.grad), [2, 4, 6])
    g = x.grad
    (x * 3).sum().backward()
    np.testing.assert_allclose(npy(x.grad), [5, 7, 9])
    assert x.grad is g          # accumulated in place
    x.grad = None
    y = x * x + x               # x reaches the sum along three paths
    y.sum().backward()
    np.testing.assert_allclose(npy(x.grad), [3, 5, 7])


def test_broadcast_inputs_get_their_shape(device):
    a = arr(rand(3, 1), device, requires_grad=True)
    b = arr(rand(4), device, requires_grad=True)
    c = arr(2.0, device, requires_grad=True)
    (a * b + c).sum().backward()
    assert a.grad.shape == (3, 1) and b.grad.shape == (4,) and c.grad.shape == ()
    np.testing.assert_allclose(npy(a.grad), np.full((3, 1), npy(b).sum()))
    np.testing.assert_allclose(npy(b.grad), np.full(4, npy(a).sum()))
    np.testing.assert_allclose(npy(c.grad), 12.0)


def test_mixed_dtypes_cast_back(device):
    a = arr([1.0, 2.0], device, requires_grad=True, dtype=np.float32)
    b = arr([3.0, 4.0], device, requires_grad=True)
    (a * b).sum().backward()
    assert a.grad.dtype == ck.float32 and b.grad.dtype == ck.float64
    np.testing.assert_allclose(npy(a.grad), [3, 4])


def test_backward_needs_a_scalar_or_a_gradient(device):
    x = arr([1.0, 2.0], device, requires_grad=True)
    y = x * 2
    with pytest.raises(RuntimeError, match="scalar outputs"):
        y.backward()
    y.backward(arr([1.0, 10.0], device))
    np.testing.assert_allclose(npy(x.grad), [2, 20])
    with pytest.raises(RuntimeError, match="shape"):
        (x * 2).backward(arr([1.0, 2.0, 3.0], device))
    with pytest.raises(RuntimeError, match="does not require grad"):
        arr([1.0], device).sum().backward()


def test_retain_graph(device):
    x = arr([1.0, 2.0], device, requires_grad=True)
    y = (x * x).sum()
    y.backward(retain_graph=True)
    y.backward()
    np.testing.assert_allclose(npy(x.grad), [4, 8])
    with pytest.raises(RuntimeError, match="backward through the graph a second time"):
        y.backward()
    # a node that saved nothing may run again (as PyTorch)
    z = (x + 1).sum()
    z.backward()
    z.backward()


def test_version_counter(device):
    x = arr([1.0, 2.0], device, requires_grad=True)
    y = x * 1
    v = y._version
    z = y * y                  # saves y
    y += 1                     # y's grad_fn becomes the add; z's saved y changed
    assert y._version == v + 1
    with pytest.raises(RuntimeError, match="modified by an inplace operation.*MulBackward0"):
        z.sum().backward()
    # an in-place change of something not saved is fine
    w = x * 1
    s = w + 1                  # add saves nothing
    w *= 3
    s.sum().backward()
    np.testing.assert_allclose(npy(x.grad), [1, 1])


def test_in_place_on_non_leaf_records(device):
    x = arr([1.0, 2.0, 3.0], device, requires_grad=True)
    y = x * 2
    y += x                    # y = 3x
    y *= y                    # y = 9x^2, the old y copied for the rule
    assert y.grad_fn.name() == "MulBackward0"
    y.sum().backward()
    np.testing.assert_allclose(npy(x.grad), 18 * npy(x))


def test_in_place_on_leaf_raises(device):
    x = arr([1.0, 2.0], device, requires_grad=True)
    with pytest.raises(RuntimeError, match="leaf Variable that requires grad"):
        x += 1
    with pytest.raises(RuntimeError, match="leaf Variable that requires grad"):
        x[0] = 5.0
    with pytest.raises(RuntimeError, match="view of a leaf Variable"):
        x[:1] += 1
    with pytest.raises(RuntimeError, match="out="):
        ck.add(x, 1, out=ck.zeros(2, device=device))
    with ck.no_grad():
        x -= 0.5 * x           # optimizers update under no_grad
        x[1] = 7.0
    np.testing.assert_allclose(npy(x), [0.5, 7.0])
    assert x.is_leaf and x.requires_grad


def test_put_moves_the_version(device):
    x = arr([1.0, 2.0, 3.0], device, requires_grad=True)
    y = x * 1
    z = y * y
    ck.put(y.detach(), ck.asarray([0], device=device), ck.asarray([5.0], device=device))
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        z.sum().backward()
    with pytest.raises(RuntimeError, match="leaf Variable"):
        ck.put(x, ck.asarray([0], device=device), ck.asarray([5.0], device=device))


def test_no_grad_enable_grad_set_grad_enabled(device):
    x = arr([1.0], device, requires_grad=True)
    assert ck.is_grad_enabled()
    with ck.no_grad():
        assert not ck.is_grad_enabled()
        assert not (x * 2).requires_grad
        with ck.enable_grad():
            assert (x * 2).requires_grad
    assert ck.is_grad_enabled()

    @ck.no_grad()
    def f():
        return x * 2

    @ck.no_grad
    def g():
        return x * 2

    assert not f().requires_grad and not g().requires_grad
    ck.set_grad_enabled(False)
    try:
        assert not (x * 2).requires_grad
    finally:
        ck.set_grad_enabled(True)
    with ck.set_grad_enabled(False):
        assert not (x * 2).requires_grad
    assert (x * 2).requires_grad
    with ck.inference_mode():
        assert not (x * 2).requires_grad


def test_detach(device):
    x = arr([1.0, 2.0], device, requires_grad=True)
    y = x * 2
    d = y.detach()
    assert not d.requires_grad and d.is_leaf
    (d * x).sum().backward()    # no gradient flows through d
    np.testing.assert_allclose(npy(x.grad), npy(y))
    with ck.no_grad():
        d[0] = 100.0            # shares y's memory
    assert npy(y)[0] == 100.0
    y.detach_()
    assert y.is_leaf and not y.requires_grad


def test_retain_grad(device):
    x = arr([1.0, 2.0], device, requires_grad=True)
    y = x * 3
    y.retain_grad()
    assert y.retains_grad
    (y * y).sum().backward()
    np.testing.assert_allclose(npy(y.grad), 2 * npy(y))
    z = x * 3
    (z * z).sum().backward()
    assert z.grad is None


def test_grad_setter(device):
    x = arr([1.0, 2.0], device, requires_grad=True)
    g = arr([5.0, 6.0], device)
    x.grad = g
    assert x.grad is g
    (x * 1).sum().backward()
    np.testing.assert_allclose(npy(x.grad), [6, 7])
    del x.grad
    assert x.grad is None
    with pytest.raises(RuntimeError, match="different size"):
        x.grad = arr([1.0], device)


def test_autograd_grad(device):
    x = arr([1.0, 2.0], device, requires_grad=True)
    w = arr([3.0, 4.0], device, requires_grad=True)
    u = arr([1.0], device, requires_grad=True)
    y = (x * w).sum()
    gx, gw = ck.autograd.grad(y, [x, w], retain_graph=True)
    np.testing.assert_allclose(npy(gx), [3, 4])
    np.testing.assert_allclose(npy(gw), [1, 2])
    assert x.grad is None and w.grad is None     # grad() touches no .grad
    h = x * w
    (gh,) = ck.autograd.grad(y, [x])
    with pytest.raises(RuntimeError, match="not have been used"):
        ck.autograd.grad((x * 2).sum(), [x, u])
    gx, gu = ck.autograd.grad((x * 2).sum(), [x, u], allow_unused=True)
    assert gu is None
    # the gradient with respect to a non-leaf
    s = (h * h).sum()
    (gh,) = ck.autograd.grad(s, [h])
    np.testing.assert_allclose(npy(gh), 2 * npy(h))


def test_autograd_backward_and_inputs(device):
    x = arr([1.0, 2.0], device, requires_grad=True)
    w = arr([3.0, 4.0], device, requires_grad=True)
    a, b = (x * w).sum(), (x * x).sum()
    ck.autograd.backward([a, b])
    np.testing.assert_allclose(npy(x.grad), npy(w) + 2 * npy(x))
    x.grad = None
    w.grad = None
    (x * w).sum().backward(inputs=[w])
    assert x.grad is None
    np.testing.assert_allclose(npy(w.grad), npy(x))


def test_function(device):
    class Cube(ck.autograd.Function):
        @staticmethod
        def forward(ctx, x, k):
            assert not ck.is_grad_enabled()
            ctx.save_for_backward(x)
            ctx.k = k
            return x * x * x * k

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            assert ctx.needs_input_grad == (True, False)
            return g * 3 * x * x * ctx.k, None

    x = arr([1.0, 2.0], device, requires_grad=True)
    y = Cube.apply(x, 2.0)
    assert y.requires_grad and y.grad_fn.name() == "CubeBackward"
    (y * 1).sum().backward()
    np.testing.assert_allclose(npy(x.grad), 6 * npy(x) ** 2)
    with ck.no_grad():
        assert not Cube.apply(x, 1.0).requires_grad

    class Bad(ck.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            raise ValueError("from backward")

    with pytest.raises(ValueError, match="from backward"):
        Bad.apply(x).sum().backward()


def docstring_example(obj, **names):
    """The namespace of the code block of obj's docstring (the lines after
    its '::'), run with ck and names defined."""
    lines = obj.__doc__.split("::\n", 1)[1].split("\n")
    block = []
    for line in lines:
        if line.strip() and len(line) - len(line.lstrip()) <= 4:
            break                      # the paragraph after the block
        block.append(line)
    ns = {"ck": ck, **names}
    exec(textwrap.dedent("\n".join(block)), ns)
    return ns


def test_function_saving_its_output_is_freed(device):
    """The Exp of autograd.Function's docstring, as written there."""
    import gc
    import weakref

    x = arr([0.0, 1.0], device, requires_grad=True)
    y = docstring_example(ck.autograd.Function, x=x).pop("y")
    y.sum().backward()
    np.testing.assert_allclose(npy(x.grad), np.exp([0.0, 1.0]))
    r = weakref.ref(y)
    del y
    gc.collect()
    assert r() is None


def test_function_multiple_outputs(device):
    class Split2(ck.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2, x * 3

        @staticmethod
        def backward(ctx, ga, gb):
            return ga * 2 + gb * 3

    x = arr([1.0, 2.0], device, requires_grad=True)
    a, b = Split2.apply(x)
    a.sum().backward()         # b's gradient is zeros
    np.testing.assert_allclose(npy(x.grad), [2, 2])


def test_op_without_rule_raises_naming_it(device):
    x = arr([3.0, 1.0, 2.0], device, requires_grad=True)
    y = ck.sort(x)
    assert y.requires_grad
    with pytest.raises(RuntimeError, match="'sort' has no gradient rule"):
        y.sum().backward()
    with pytest.raises(RuntimeError, match="'nextafter' has no gradient rule"):
        ck.nextafter(x, 0.0).sum().backward()


def test_subclass(device):
    class Param(ck.ndarray):
        def __new__(cls, data, requires_grad=True):
            return ck._core._make_subclass(cls, data, requires_grad)

    d = arr([1.0, 2.0], device)
    p = Param(d)
    assert isinstance(p, Param) and isinstance(p, ck.ndarray)
    assert p.requires_grad and p.is_leaf
    p.name = "weight"          # a Python subclass has a __dict__
    with ck.no_grad():
        p *= 2
    np.testing.assert_allclose(npy(d), [2, 4])   # shares d's memory
    y = p * p
    assert type(y) is ck.ndarray
    y.sum().backward()
    np.testing.assert_allclose(npy(p.grad), [4, 8])
    assert type(ck.ndarray((2,), device=device)) is ck.ndarray


def test_deep_graph(device):
    x = arr([1.0], device, requires_grad=True)
    y = x
    for _ in range(3000):      # iterative walk and release: no recursion limit
        y = y * 1.0
    y.sum().backward()
    np.testing.assert_allclose(npy(x.grad), [1.0])
    del y


def test_graph_is_freed(device):
    import gc
    import weakref
    x = arr([1.0, 2.0], device, requires_grad=True)
    y = (x * x).sum()
    r = weakref.ref(y)
    y.backward()
    del y
    gc.collect()
    assert r() is None


# ------------------------------------------------------------------ rules vs finite differences

UNARY = {
    "negative": (ck.negative, -1, 1), "positive": (ck.positive, -1, 1), "absolute": (ck.absolute, 0.2, 1),
    "square": (ck.square, -1, 1), "reciprocal": (ck.reciprocal, 0.5, 2), "sqrt": (ck.sqrt, 0.5, 2),
    "cbrt": (ck.cbrt, 0.5, 2), "exp": (ck.exp, -1, 1), "exp2": (ck.exp2, -1, 1), "expm1": (ck.expm1, -1, 1),
    "log": (ck.log, 0.5, 2), "log2": (ck.log2, 0.5, 2), "log10": (ck.log10, 0.5, 2), "log1p": (ck.log1p, 0.5, 2),
    "sin": (ck.sin, -1, 1), "cos": (ck.cos, -1, 1), "tan": (ck.tan, -1, 1), "arcsin": (ck.arcsin, -0.8, 0.8),
    "arccos": (ck.arccos, -0.8, 0.8), "arctan": (ck.arctan, -1, 1), "sinh": (ck.sinh, -1, 1),
    "cosh": (ck.cosh, -1, 1), "tanh": (ck.tanh, -1, 1), "arcsinh": (ck.arcsinh, -1, 1),
    "arccosh": (ck.arccosh, 1.5, 3), "arctanh": (ck.arctanh, -0.8, 0.8), "deg2rad": (ck.deg2rad, -1, 1),
    "rad2deg": (ck.rad2deg, -1, 1), "conjugate": (ck.conjugate, -1, 1),
    "sigmoid": (lambda x: 1 / (1 + ck.exp(-x)), -2, 2),
}


@pytest.mark.parametrize("name", sorted(UNARY))
def test_unary_rules(device, name):
    f, lo, hi = UNARY[name]
    check_grads(f, [rand(2, 3, lo=lo, hi=hi)], device)


def test_piecewise_constant_rules(device):
    for f in (ck.floor, ck.ceil, ck.trunc, ck.rint, ck.sign):
        x = arr(rand(4) * 3, device, requires_grad=True)
        f(x).sum().backward()
        np.testing.assert_array_equal(npy(x.grad), np.zeros(4))


BINARY = {
    "add": (ck.add, (-1, 1), (-1, 1)), "subtract": (ck.subtract, (-1, 1), (-1, 1)),
    "multiply": (ck.multiply, (-1, 1), (-1, 1)), "divide": (ck.divide, (-1, 1), (0.5, 2)),
    "power": (ck.power, (0.5, 2), (-2, 2)), "maximum": (ck.maximum, (-1, 1), (-1, 1)),
    "minimum": (ck.minimum, (-1, 1), (-1, 1)), "fmax": (ck.fmax, (-1, 1), (-1, 1)),
    "fmin": (ck.fmin, (-1, 1), (-1, 1)), "hypot": (ck.hypot, (0.5, 2), (0.5, 2)),
    "arctan2": (ck.arctan2, (0.5, 2), (0.5, 2)), "logaddexp": (ck.logaddexp, (-1, 1), (-1, 1)),
    "logaddexp2": (ck.logaddexp2, (-1, 1), (-1, 1)), "fmod": (ck.fmod, (2, 3), (0.7, 0.9)),
    "remainder": (ck.remainder, (2, 3), (0.7, 0.9)), "copysign": (ck.copysign, (0.5, 1), (-1, 1)),
}


@pytest.mark.parametrize("name", sorted(BINARY))
def test_binary_rules(device, name):
    f, (alo, ahi), (blo, bhi) = BINARY[name]
    # b broadcast along the first axis
    check_grads(f, [rand(3, 4, lo=alo, hi=ahi), rand(4, lo=blo, hi=bhi)], device)


def test_scalar_operands(device):
    check_grads(lambda x: x ** 3 + 2.0 * x - x / 4.0 + 1.5 ** x + x ** 2 + x ** 1 + x ** 0.5,
                [rand(5, lo=0.5, hi=2)], device)
    check_grads(lambda x: 3.0 - x + ck.maximum(x, 0.0) * 2 + ck.minimum(x, 0), [rand(6)], device)


def test_relu_as_maximum(device):
    x = arr([-1.0, 0.5, 2.0], device, requires_grad=True)
    ck.maximum(x, 0).sum().backward()
    np.testing.assert_array_equal(npy(x.grad), [0, 1, 1])


def test_maximum_tie_splits(device):
    a = arr([1.0, 2.0], device, requires_grad=True)
    b = arr([1.0, 3.0], device, requires_grad=True)
    ck.maximum(a, b).sum().backward()
    np.testing.assert_allclose(npy(a.grad), [0.5, 0])
    np.testing.assert_allclose(npy(b.grad), [0.5, 1])


def test_reductions(device):
    x = rand(3, 4, 2)
    check_grads(lambda a: a.sum(), [x], device)
    check_grads(lambda a: ck.sum(a, axis=1) * ck.arange(1.0, 3.0, device=device), [x], device)
    check_grads(lambda a: a.sum(axis=(0, 2), keepdims=True) ** 2, [x], device)
    check_grads(lambda a: a.mean(), [x], device)
    check_grads(lambda a: ck.mean(a, axis=-1) ** 2, [x], device)
    check_grads(lambda a: a.mean(axis=0, keepdims=True) * a, [x], device)
    a = ck.asarray(x, device=device, requires_grad=True)
    a.sum(dtype=ck.float32).backward()    # the gradient comes back in a's dtype
    assert a.grad.dtype == ck.float64
    np.testing.assert_array_equal(npy(a.grad), np.ones_like(x))


def test_layout_rules(device):
    x = rand(2, 3, 4)
    w = rand(24)
    check_grads(lambda a: a.reshape(4, 6) * w.reshape(4, 6), [x], device)
    check_grads(lambda a: ck.reshape(a, (-1,)) * w, [x], device)
    check_grads(lambda a: a.ravel() * w, [x], device)
    check_grads(lambda a: a.flatten() * w, [x], device)
    check_grads(lambda a: a.T.reshape(-1) * w, [x], device)
    check_grads(lambda a: a.transpose(1, 2, 0).reshape(-1) * w, [x], device)
    check_grads(lambda a: ck.transpose(a, (2, 0, 1)).reshape(-1) * w, [x], device)
    check_grads(lambda a: ck.swapaxes(a, 0, 2).reshape(-1) * w, [x], device)
    check_grads(lambda a: a.swapaxes(0, 1).reshape(-1) * w, [x], device)
    check_grads(lambda a: ck.moveaxis(a, 0, -1).reshape(-1) * w, [x], device)
    check_grads(lambda a: ck.flip(a, 1).reshape(-1) * w, [x], device)
    check_grads(lambda a: ck.expand_dims(a, 1).reshape(-1) * w, [x], device)
    check_grads(lambda a: ck.squeeze(a[:1]).reshape(-1) * w[:12], [x], device)
    r = rand(5, 3, 4)
    check_grads(lambda a: ck.broadcast_to(a[0], (5, 3, 4)) * r, [x], device)
    a = ck.asarray(x, device=device, requires_grad=True)
    (a.astype(ck.float32) * ck.asarray(w.reshape(2, 3, 4).astype(np.float32), device=device)).sum().backward()
    assert a.grad.dtype == ck.float64
    np.testing.assert_allclose(npy(a.grad), w.reshape(2, 3, 4), rtol=1e-6)
    m = rand(4, 4)
    check_grads(lambda a: ck.diagonal(a) * ck.arange(4.0, device=device), [m], device)
    check_grads(lambda a: a.diagonal(1) * ck.arange(3.0, device=device), [m], device)
    check_grads(lambda a: ck.trace(a) * a.trace(offset=-1), [m], device)
    check_grads(lambda a: ck.trace(a, axis1=1, axis2=2), [rand(2, 3, 3)], device)


def test_more_layout_rules(device):
    x = rand(3, 4)
    w = rand(3, 4)
    rand_fixed_tile = rand(2, 3, 12)
    check_grads(lambda a: ck.roll(a, 1, axis=1) * w, [x], device)
    check_grads(lambda a: ck.roll(a, (1, -2), axis=(0, 1)) * w, [x], device)
    check_grads(lambda a: ck.roll(a, 5) * w, [x], device)
    check_grads(lambda a: ck.tril(a, 1) * w, [x], device)
    check_grads(lambda a: ck.triu(a, -1) * w, [x], device)
    check_grads(lambda a: ck.tile(a, (2, 1, 3)) * rand_fixed_tile, [x], device)
    check_grads(lambda a: ck.repeat(a, 2, axis=1) * w.repeat(2, axis=1), [x], device)
    check_grads(lambda a: a.repeat(3) * ck.arange(36.0, device=device), [x], device)
    check_grads(lambda a: a.repeat(3, axis=0).reshape(-1) * ck.arange(36.0, device=device), [x], device)
    wp = rand(5, 7)
    check_grads(lambda a: ck.pad(a, ((1, 1), (2, 1))) * wp, [x], device)
    check_grads(lambda a: ck.pad(a, 1, constant_values=3.0) * wp[:, :6], [x], device)


def test_basic_indexing(device):
    x = rand(4, 5)
    check_grads(lambda a: a[1] * ck.arange(5.0, device=device), [x], device)
    check_grads(lambda a: a[1:3, ::2] ** 2, [x], device)
    check_grads(lambda a: a[::-1, None, 2] * 3, [x], device)
    check_grads(lambda a: a[..., -1] * a[0, :4], [x], device)
    check_grads(lambda a: a.T[1:, 2], [x], device)   # a view of a non-contiguous array


def test_setitem(device):
    x = arr(rand(3, 4), device, requires_grad=True)
    v = arr(rand(4), device, requires_grad=True)
    y = x * 2
    y[1] = v * 3              # y's node becomes the assignment's
    y[0, ::2] = 0.0
    assert y.grad_fn.name() == "SetitemBackward0"
    w = rand(3, 4)
    (y * ck.asarray(w, device=device)).sum().backward()
    want = 2 * w
    want[1] = 0
    want[0, ::2] = 0
    np.testing.assert_allclose(npy(x.grad), want)
    np.testing.assert_allclose(npy(v.grad), 3 * w[1])
    # a plain array filled with values that require grad
    buf = ck.zeros((2, 3), device=device)
    buf[:, 1] = v[:2]
    assert buf.requires_grad
    buf.sum().backward()
    np.testing.assert_allclose(npy(v.grad), 3 * w[1] + np.array([1, 1, 0, 0]))
    with pytest.raises(NotImplementedError, match="integer or boolean index"):
        buf[ck.asarray([0], device=device)] = v[:3]


MATMUL = [((3, 4), (4, 2)), ((4,), (4, 2)), ((3, 4), (4,)), ((4,), (4,)), ((2, 3, 4), (4, 5)),
          ((2, 1, 3, 4), (3, 4, 2)), ((5, 4), (2, 4, 3))]


@pytest.mark.parametrize("shapes", MATMUL, ids=str)
def test_matmul(device, shapes):
    a, b = rand(*shapes[0]), rand(*shapes[1])
    check_grads(lambda x, y: x @ y, [a, b], device)


def test_products_compose(device):
    a, b = rand(3, 4), rand(4, 2)
    check_grads(lambda x, y: ck.matmul(x, y), [a, b], device)
    check_grads(lambda x, y: ck.dot(x, y), [a, b], device)
    check_grads(lambda x, y: ck.tensordot(x, y, 1), [a, b], device)
    check_grads(lambda x, y: ck.einsum("ij,jk->ik", x, y), [a, b], device)
    check_grads(lambda x, y: ck.inner(x, y.T), [a, b], device)
    check_grads(lambda x, y: ck.outer(x[0], y[:, 0]), [a, b], device)


def test_mlp_step(device):
    """The seed's model, a step of it: Linear(784,128), ReLU, Linear(128,10),
    cross-entropy (composed here), against the same step in NumPy."""
    rng = np.random.default_rng(0)
    xb = rng.standard_normal((8, 20)).astype(np.float32)
    yb = rng.integers(0, 5, 8)
    w1 = (rng.standard_normal((16, 20)) * 0.1).astype(np.float32)
    b1 = np.zeros(16, np.float32)
    w2 = (rng.standard_normal((5, 16)) * 0.1).astype(np.float32)
    b2 = np.zeros(5, np.float32)
    P = [ck.asarray(p, device=device, requires_grad=True) for p in (w1, b1, w2, b2)]
    x = ck.asarray(xb, device=device)
    onehot = ck.asarray(np.eye(5, dtype=np.float32)[yb], device=device)
    h = ck.maximum(x @ P[0].T + P[1], 0)
    logits = h @ P[2].T + P[3]
    m = logits.max(axis=1, keepdims=True).detach()
    lse = ck.log(ck.exp(logits - m).sum(axis=1, keepdims=True)) + m
    loss = -((logits - lse) * onehot).sum() / 8
    loss.backward()
    # NumPy
    hp = np.maximum(xb @ w1.T + b1, 0)
    lg = hp @ w2.T + b2
    p = np.exp(lg - lg.max(1, keepdims=True))
    p /= p.sum(1, keepdims=True)
    d = (p - np.eye(5)[yb]) / 8
    gw2, gb2 = d.T @ hp, d.sum(0)
    dh = (d @ w2) * (hp > 0)
    gw1, gb1 = dh.T @ xb, dh.sum(0)
    for got, want in zip(P, (gw1, gb1, gw2, gb2)):
        np.testing.assert_allclose(npy(got.grad), want, rtol=1e-4, atol=1e-6)
        assert got.grad.flags.c_contiguous    # W.T's gradient is made in W's layout
