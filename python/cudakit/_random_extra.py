"""More of NumPy's Generator distributions, composed of the C samplers.

Each is the C core's uniform, normal, exponential, gamma, poisson or
binomial draws (the same bits on every device for the same seed: the
samplers' logarithms, exponentials and sines are their own, of exactly
rounded operations, src/formulas/random_formulas.h) combined by the
operations IEEE 754 rounds exactly on the CPU and on a GPU (+, -, *, /,
sqrt, comparisons) on the draws' device, so the results are bitwise equal
on the CPU and on a GPU.  Parameters are floats or arrays moved to the
draws' device.  The ``Transcendental`` group (lognormal, weibull,
logistic...) also applies the element-wise exp, log, expm1, log1p or
power, whose GPU kernels agree with the CPU's loops to an ulp or so, not
always to the bit (the GPU contracts a * b + c in ck_exp and ck_log into
an FMA; expm1, log1p and pow are each device's math library).
"""
import operator as _operator

import numpy as _np

from . import _core


def _f(x):
    """A parameter as a float, or as a float64 cudakit array."""
    if isinstance(x, _core.ndarray):
        return x.astype("float64") if x.ndim else float(x)
    a = _np.asarray(x, dtype=_np.float64)
    return float(a) if a.ndim == 0 else _core.asarray(a)


def _lt0(x):
    return bool(_core.any(_core.less(x, 0))) if isinstance(x, _core.ndarray) else x < 0


def _le0(x):
    return bool(_core.any(_core.less_equal(x, 0))) if isinstance(x, _core.ndarray) else x <= 0


def _put(x, dev):
    """A parameter where the draws are: a float as it is, an array on dev."""
    return _core.asarray(x, device=dev) if isinstance(x, _core.ndarray) and x.device != dev else x


def _par(f, *args):
    """f of parameters: a float where they all are floats (an op on Python
    scalars alone gives a 0-d array on the CPU, which a GPU's draws cannot
    meet; the float is the same IEEE double the op computed)."""
    r = f(*args)
    return r if any(isinstance(a, _core.ndarray) for a in args) else float(r)


class Distributions:
    """Generator's distributions that are compositions of its C samplers (mixed into Generator)."""

    def standard_gamma(self, shape, size=None, dtype=_np.float64, out=None, *, device=None):
        """Standard gamma floats (scale 1): ``gamma(shape, 1.0)``."""
        r = self.gamma(shape, 1.0, size, device=device)
        if _np.dtype(dtype) == _np.float32:
            r = r.astype("float32")
        elif _np.dtype(dtype) != _np.float64:
            raise TypeError(f"Unsupported dtype {_np.dtype(dtype).name!r} for standard_gamma")
        if out is not None:
            out[...] = r
            return out
        return r

    def chisquare(self, df, size=None, *, device=None):
        """Chi-square floats with df degrees of freedom: ``gamma(df / 2, 2)``."""
        df = _f(df)
        if _le0(df):
            raise ValueError("df <= 0")
        return self.gamma(_core.divide(df, 2.0) if isinstance(df, _core.ndarray) else df / 2.0, 2.0, size,
                          device=device)

    def f(self, dfnum, dfden, size=None, *, device=None):
        """F floats: the ratio of two chi-squares, each over its degrees of freedom."""
        dfnum, dfden = _f(dfnum), _f(dfden)
        if _le0(dfnum):
            raise ValueError("dfnum <= 0")
        if _le0(dfden):
            raise ValueError("dfden <= 0")
        if size is None:
            size = _np.broadcast_shapes(*(tuple(getattr(v, "shape", ())) for v in (dfnum, dfden)))
        a = self.chisquare(dfnum, size, device=device)
        b = self.chisquare(dfden, size, device=a.device)
        return _core.divide(_core.divide(a, _put(dfnum, a.device)), _core.divide(b, _put(dfden, a.device)))

    def standard_t(self, df, size=None, *, device=None):
        """Student's t floats: a standard normal over the root of a chi-square over df."""
        df = _f(df)
        if _le0(df):
            raise ValueError("df <= 0")
        if size is None:
            size = tuple(getattr(df, "shape", ()))
        z = self.standard_normal(size, device=device)
        c = self.chisquare(df, size, device=z.device)
        return _core.divide(z, _core.sqrt(_core.divide(c, _put(df, z.device))))

    def standard_cauchy(self, size=None, *, device=None):
        """Standard Cauchy floats: the ratio of two standard normals."""
        a = self.standard_normal(size, device=device)
        b = self.standard_normal(size, device=a.device)
        return _core.divide(a, b)

    def rayleigh(self, scale=1.0, size=None, *, device=None):
        """Rayleigh floats: ``scale * sqrt(2 * standard_exponential())``."""
        scale = _f(scale)
        if _lt0(scale):
            raise ValueError("scale < 0")
        if size is None:
            size = tuple(getattr(scale, "shape", ()))
        e = self.standard_exponential(size, device=device)
        return _core.multiply(_core.sqrt(_core.multiply(e, 2.0)), _put(scale, e.device))

    def wald(self, mean, scale, size=None, *, device=None):
        """Wald (inverse Gaussian) floats, by Michael, Schucany and Haas's transformation."""
        mean, scale = _f(mean), _f(scale)
        if _le0(mean):
            raise ValueError("mean <= 0")
        if _le0(scale):
            raise ValueError("scale <= 0")
        if size is None:
            size = _np.broadcast_shapes(*(tuple(getattr(v, "shape", ())) for v in (mean, scale)))
        n = self.standard_normal(size, device=device)
        u = self.random(size, device=n.device)
        mean, scale = _put(mean, n.device), _put(scale, n.device)
        y = _core.multiply(_core.multiply(n, n), mean)
        mu_2l = _par(_core.divide, mean, _par(_core.multiply, scale, 2.0))
        x = _core.add(mean, _core.multiply(mu_2l, _core.subtract(y, _core.sqrt(
            _core.add(_core.multiply(_core.multiply(y, scale), 4.0), _core.multiply(y, y))))))
        keep = _core.less_equal(u, _core.divide(mean, _core.add(mean, x)))
        return _core.where(keep, x, _core.divide(_par(_core.multiply, mean, mean), x))

    def triangular(self, left, mode, right, size=None, *, device=None):
        """Triangular floats on [left, right] peaking at mode (inversion of the distribution function)."""
        left, mode, right = _f(left), _f(mode), _f(right)
        if bool(_core.any(_core.greater(left, mode))):
            raise ValueError("left > mode")
        if bool(_core.any(_core.greater(mode, right))):
            raise ValueError("mode > right")
        if bool(_core.any(_core.equal(left, right))):
            raise ValueError("left == right")
        if size is None:
            size = _np.broadcast_shapes(*(tuple(getattr(v, "shape", ())) for v in (left, mode, right)))
        u = self.random(size, device=device)
        left, mode, right = _put(left, u.device), _put(mode, u.device), _put(right, u.device)
        base = _par(_core.subtract, right, left)
        lo = _par(_core.subtract, mode, left)
        hi = _par(_core.subtract, right, mode)
        fc = _par(_core.divide, lo, base)
        a = _core.add(left, _core.sqrt(_core.multiply(_core.multiply(u, base), lo)))
        b = _core.subtract(right, _core.sqrt(_core.multiply(_core.multiply(_core.subtract(1.0, u), base), hi)))
        return _core.where(_core.less(u, fc), a, b)

    def negative_binomial(self, n, p, size=None, *, device=None):
        """Negative binomial int64s: Poisson draws whose rates are gamma(n, (1 - p) / p) draws."""
        n, p = _f(n), _f(p)
        if _le0(n):
            raise ValueError("n <= 0")
        if bool(_core.any(_core.less_equal(p, 0))) or bool(_core.any(_core.greater(p, 1))):
            raise ValueError("p <= 0 or p > 1")
        if size is None:
            size = _np.broadcast_shapes(*(tuple(getattr(v, "shape", ())) for v in (n, p)))
        q = _core.divide(_core.subtract(1.0, p), p)
        lam = self.gamma(n, q if isinstance(q, _core.ndarray) and q.ndim else float(q), size, device=device)
        return self.poisson(lam)

    def multinomial(self, n, pvals, size=None, *, device=None):
        """Multinomial int64 counts of n trials over len(pvals) outcomes (conditional binomials)."""
        n = _operator.index(n) if not isinstance(n, _core.ndarray) else n
        p = _np.asarray(_core.asnumpy(pvals) if isinstance(pvals, _core.ndarray) else pvals, dtype=_np.float64)
        if p.ndim != 1:
            raise NotImplementedError("multinomial with more than one pvals vector is not implemented")
        if _np.any(p < 0) or _np.any(p > 1):
            raise ValueError("pvals < 0, pvals > 1 or pvals contains NaNs")
        if p[:-1].sum() > 1.0 + 1e-12:
            raise ValueError("sum(pvals[:-1]) > 1.0")
        shape = () if size is None else ((size,) if isinstance(size, int) else tuple(size))
        k = p.shape[0]
        remaining = _core.full(shape, float(n) if not isinstance(n, _core.ndarray) else 0.0, dtype="float64",
                               device=device if device is not None else _core.get_default_device())
        if isinstance(n, _core.ndarray):
            remaining = _core.add(remaining, n.astype("float64"))
        cols = []
        left = 1.0
        for i in range(k - 1):
            pi = min(max(p[i] / left, 0.0), 1.0) if left > 0 else 0.0
            x = self.binomial(remaining, pi, shape).astype("float64")
            cols.append(x)
            remaining = _core.subtract(remaining, x)
            left -= p[i]
        cols.append(remaining)
        return _core.stack(cols, axis=-1).astype("int64")

    def dirichlet(self, alpha, size=None, *, device=None):
        """Dirichlet floats: gamma(alpha_i) draws over their sum (added in a fixed order on every device)."""
        a = _np.asarray(_core.asnumpy(alpha) if isinstance(alpha, _core.ndarray) else alpha, dtype=_np.float64)
        if a.ndim != 1:
            raise ValueError("object of too small depth for desired array")
        if _np.any(a < 0) or _np.any(_np.isnan(a)):
            raise ValueError("alpha < 0 or alpha is NaN")
        shape = () if size is None else ((size,) if isinstance(size, int) else tuple(size))
        dev = device if device is not None else (alpha.device if isinstance(alpha, _core.ndarray) else None)
        al = _core.asarray(a, device=dev if dev is not None else _core.get_default_device())
        g = self.gamma(_core.broadcast_to(al, shape + (a.shape[0],)), 1.0, shape + (a.shape[0],))
        s = g[..., 0]
        for i in range(1, a.shape[0]):
            s = _core.add(s, g[..., i])
        return _core.divide(g, s[..., None])

    def bytes(self, length):
        """length random bytes."""
        return _core.asnumpy(self.integers(0, 256, _operator.index(length), dtype=_np.uint8, device="cpu")).tobytes()

    def permuted(self, x, *, axis=None, out=None):
        """x with each slice along axis shuffled on its own (the whole flattened array when axis is None)."""
        x = _core.asarray(x)
        if axis is None:
            flat = x.ravel()
            keys = self.random(flat.shape, device=x.device)
            r = _core.take(flat, _core.argsort(keys, kind="stable")).reshape(x.shape)
        else:
            from ._numpy_extra import _norm_axis

            ax = _norm_axis(axis, x.ndim)
            keys = self.random(x.shape, device=x.device)
            r = _core.take_along_axis(x, _core.argsort(keys, axis=ax, kind="stable"), axis=ax)
        if out is not None:
            out[...] = r
            return out
        return r


def _shape_of(size, *params):
    if size is not None:
        return size
    return _np.broadcast_shapes(*(tuple(getattr(v, "shape", ())) for v in params))


class Transcendental:
    """Generator's distributions whose transforms of the C samplers' draws need exp, log or pow."""

    def lognormal(self, mean=0.0, sigma=1.0, size=None, *, device=None):
        """Log-normal floats: ``exp(mean + sigma * standard_normal())``."""
        mean, sigma = _f(mean), _f(sigma)
        if _lt0(sigma):
            raise ValueError("sigma < 0")
        return _core.exp(self.normal(mean, sigma, _shape_of(size, mean, sigma), device=device))

    def laplace(self, loc=0.0, scale=1.0, size=None, *, device=None):
        """Laplace floats: loc plus scale times the difference of two standard exponentials."""
        loc, scale = _f(loc), _f(scale)
        if _lt0(scale):
            raise ValueError("scale < 0")
        shape = _shape_of(size, loc, scale)
        a = self.standard_exponential(shape, device=device)
        b = self.standard_exponential(shape, device=a.device)
        return _core.add(_put(loc, a.device), _core.multiply(_put(scale, a.device), _core.subtract(a, b)))

    def logistic(self, loc=0.0, scale=1.0, size=None, *, device=None):
        """Logistic floats: ``loc + scale * log(u / (1 - u))``."""
        loc, scale = _f(loc), _f(scale)
        if _lt0(scale):
            raise ValueError("scale < 0")
        u = self.random(_shape_of(size, loc, scale), device=device)
        return _core.add(_put(loc, u.device),
                         _core.multiply(_put(scale, u.device), _core.log(_core.divide(u, _core.subtract(1.0, u)))))

    def gumbel(self, loc=0.0, scale=1.0, size=None, *, device=None):
        """Gumbel floats: ``loc - scale * log(standard_exponential())``."""
        loc, scale = _f(loc), _f(scale)
        if _lt0(scale):
            raise ValueError("scale < 0")
        e = self.standard_exponential(_shape_of(size, loc, scale), device=device)
        return _core.subtract(_put(loc, e.device), _core.multiply(_put(scale, e.device), _core.log(e)))

    def weibull(self, a, size=None, *, device=None):
        """Weibull floats: ``standard_exponential() ** (1 / a)`` (0 where a is 0)."""
        a = _f(a)
        if _lt0(a):
            raise ValueError("a < 0")
        e = self.standard_exponential(_shape_of(size, a), device=device)
        if not isinstance(a, _core.ndarray):
            return _core.power(e, 1.0 / a) if a else _core.zeros_like(e)
        a = _put(a, e.device)
        r = _core.power(e, _core.divide(1.0, a))
        return _core.where(_core.equal(a, 0), _core.zeros_like(r), r)

    def pareto(self, a, size=None, *, device=None):
        """Pareto II (Lomax) floats: ``expm1(standard_exponential() / a)``."""
        a = _f(a)
        if _le0(a):
            raise ValueError("a <= 0")
        e = self.standard_exponential(_shape_of(size, a), device=device)
        return _core.expm1(_core.divide(e, _put(a, e.device)))

    def power(self, a, size=None, *, device=None):
        """Power-law floats on [0, 1]: ``(-expm1(-standard_exponential())) ** (1 / a)``."""
        a = _f(a)
        if _le0(a):
            raise ValueError("a <= 0")
        e = self.standard_exponential(_shape_of(size, a), device=device)
        return _core.power(_core.negative(_core.expm1(_core.negative(e))), _par(_core.divide, 1.0, _put(a, e.device)))

    def geometric(self, p, size=None, *, device=None):
        """Geometric int64s (trials to the first success): ``ceil(-standard_exponential() / log1p(-p))``."""
        p = _f(p)
        if bool(_core.any(_core.less_equal(p, 0))) or bool(_core.any(_core.greater(p, 1))):
            raise ValueError("p <= 0, p > 1 or p contains NaNs")
        e = self.standard_exponential(_shape_of(size, p), device=device)
        k = _core.ceil(_core.divide(_core.negative(e), _core.log1p(_core.negative(_core.asarray(p, device=e.device)))))
        return _core.maximum(k, 1.0).astype("int64")

    def logseries(self, p, size=None, *, device=None):
        """Logarithmic-series int64s (Kemp's second algorithm)."""
        p = _f(p)
        if bool(_core.any(_core.less(p, 0))) or bool(_core.any(_core.greater_equal(p, 1))):
            raise ValueError("p < 0, p >= 1 or p is NaN")
        shape = _shape_of(size, p)
        v = self.random(shape, device=device)
        u = self.random(shape, device=v.device)
        pp = _core.asarray(p, device=v.device)
        r = _core.log1p(_core.negative(pp))
        q = _core.negative(_core.expm1(_core.multiply(r, u)))
        k = _core.floor(_core.add(1.0, _core.divide(_core.log(v), _core.log(q))))
        out = _core.where(_core.less_equal(v, _core.multiply(q, q)), k,
                          _core.where(_core.greater_equal(v, q), _core.ones_like(k), _core.full_like(k, 2.0)))
        out = _core.where(_core.greater_equal(v, pp), _core.ones_like(out), out)
        out = _core.where(_core.equal(pp, 0), _core.ones_like(out), out)
        return _core.maximum(out, 1.0).astype("int64")

    def noncentral_chisquare(self, df, nonc, size=None, *, device=None):
        """Noncentral chi-square floats: a chi-square with df - 1 degrees plus a squared shifted normal (df > 1),
        else a chi-square whose degrees of freedom are shifted by twice a Poisson draw."""
        df, nonc = _f(df), _f(nonc)
        if _le0(df):
            raise ValueError("df <= 0")
        if _lt0(nonc):
            raise ValueError("nonc < 0")
        shape = _shape_of(size, df, nonc)
        if isinstance(df, float) and df > 1:
            c = self.chisquare(df - 1, shape, device=device)
            n = self.standard_normal(shape, device=c.device)
            z = _core.add(n, _core.sqrt(_core.asarray(nonc, device=c.device)))
            return _core.add(c, _core.multiply(z, z))
        lam = _core.divide(nonc, 2.0) if isinstance(nonc, _core.ndarray) else nonc / 2.0
        k = self.poisson(lam, shape, device=device)
        return self.chisquare(_core.add(_core.multiply(k, 2), df).astype("float64"))

    def noncentral_f(self, dfnum, dfden, nonc, size=None, *, device=None):
        """Noncentral F floats: a noncentral chi-square over dfnum, over a chi-square over dfden."""
        dfnum, dfden, nonc = _f(dfnum), _f(dfden), _f(nonc)
        if _le0(dfnum):
            raise ValueError("dfnum <= 0")
        if _le0(dfden):
            raise ValueError("dfden <= 0")
        shape = _shape_of(size, dfnum, dfden, nonc)
        t = self.noncentral_chisquare(dfnum, nonc, shape, device=device)
        d = self.chisquare(dfden, shape, device=t.device)
        return _core.divide(_core.divide(t, _put(dfnum, t.device)), _core.divide(d, _put(dfden, t.device)))

    def multivariate_normal(self, mean, cov, size=None, check_valid="warn", tol=1e-8, *, method="svd",
                            device=None):
        """Multivariate normal floats: mean + standard normals times a factor of cov (computed with
        numpy.linalg on the host: svd, eigh or cholesky, as NumPy's methods)."""
        m = _np.asarray(_core.asnumpy(mean) if isinstance(mean, _core.ndarray) else mean, dtype=_np.float64)
        c = _np.asarray(_core.asnumpy(cov) if isinstance(cov, _core.ndarray) else cov, dtype=_np.float64)
        if m.ndim != 1 or c.ndim != 2 or c.shape != (m.shape[0], m.shape[0]):
            raise ValueError("mean must be 1 dimensional and cov 2 dimensional and square, of the same length")
        if method == "cholesky":
            factor = _np.linalg.cholesky(c)
        elif method == "eigh":
            s, u = _np.linalg.eigh(c)
            factor = u * _np.sqrt(_np.abs(s))
        elif method == "svd":
            u, s, vh = _np.linalg.svd(c)
            if check_valid != "ignore" and not _np.allclose(_np.dot(vh.T * s, vh), c, rtol=tol, atol=tol):
                if check_valid == "raise":
                    raise ValueError("covariance is not symmetric positive-semidefinite.")
                import warnings

                warnings.warn("covariance is not symmetric positive-semidefinite.", RuntimeWarning, stacklevel=2)
            factor = vh.T * _np.sqrt(s)
        else:
            raise ValueError("method must be one of {'eigh', 'svd', 'cholesky'}")
        shape = () if size is None else ((size,) if isinstance(size, int) else tuple(size))
        z = self.standard_normal(shape + (m.shape[0],), device=device)
        dev = z.device
        x = _core.add(_core.sum(_core.multiply(z[..., None, :], _core.asarray(factor, device=dev)), axis=-1),
                      _core.asarray(m, device=dev))
        return x


# The distributions both faces have: Generator's methods, NumPy's legacy
# RandomState methods and module functions of cudakit.random.
_SHARED = ("beta binomial chisquare dirichlet exponential f gamma geometric gumbel laplace logistic lognormal "
           "logseries multinomial multivariate_normal negative_binomial noncentral_chisquare noncentral_f normal "
           "pareto poisson power rayleigh standard_cauchy standard_exponential standard_gamma standard_normal "
           "standard_t triangular uniform wald weibull bytes permutation shuffle choice zipf vonmises hypergeometric").split()


class RandomState:
    """NumPy's legacy RandomState API (``rand``, ``randn``, ``randint``, ``random_sample``, the distributions),
    drawing from cudakit's Philox4x32-10 stream: the same seed gives the same numbers on every device, not
    the numbers of NumPy's MT19937."""

    def __init__(self, seed=None):
        from .random import Generator

        self._gen = Generator(seed)

    def __repr__(self):
        return "RandomState(Philox4x32-10)"

    def seed(self, seed=None):
        """Reseed."""
        from .random import Generator

        self._gen = Generator(seed)

    def get_state(self, legacy=True):
        """The generator's state (key and counter), as a dict."""
        return dict(self._gen.state)

    def set_state(self, state):
        """Restore a state from get_state."""
        self._gen.state = state

    def rand(self, *shape, device=None):
        """Floats in [0, 1) of the given shape."""
        return self._gen.random(shape or None, device=device)

    def randn(self, *shape, device=None):
        """Standard normal floats of the given shape."""
        return self._gen.standard_normal(shape or None, device=device)

    def randint(self, low, high=None, size=None, dtype=int, *, device=None):
        """Integers in [low, high) ([0, low) when high is None)."""
        return self._gen.integers(low, high, size=size, dtype=_np.int64 if dtype is int else dtype, device=device)

    def random_integers(self, low, high=None, size=None, *, device=None):
        """Integers in [low, high], both ends included ([1, low] when high is None); deprecated in NumPy."""
        if high is None:
            low, high = 1, low
        return self._gen.integers(low, high, size=size, endpoint=True, device=device)

    def random_sample(self, size=None, *, device=None):
        """Floats in [0, 1)."""
        return self._gen.random(size, device=device)

    random = ranf = sample = random_sample

    def tomaxint(self, size=None, *, device=None):
        """Non-negative int64s below 2**63."""
        return self._gen.integers(0, 2**63 - 1, size=size, endpoint=True, device=device)


def _delegate(name):
    def method(self, *args, **kwargs):
        return getattr(self._gen, name)(*args, **kwargs)
    method.__name__ = name
    method.__qualname__ = f"RandomState.{name}"
    method.__doc__ = f"Generator.{name} on this RandomState's stream."
    return method


for _n in _SHARED:
    setattr(RandomState, _n, _delegate(_n))
RandomState.__module__ = "cudakit.random"


def legacy_functions(gen):
    """cudakit.random's module functions of the shared distributions, drawing from gen."""
    out = {}
    for name in _SHARED:
        def f(*args, _name=name, **kwargs):
            return getattr(gen, _name)(*args, **kwargs)
        f.__name__ = name
        f.__doc__ = f"Generator.{name} on the generator behind the module's functions (seed() reseeds it)."
        out[name] = f
    return out


def _full(x, shape, dev):
    return _core.ascontiguousarray(_core.broadcast_to(_core.asarray(x, device=dev).astype("float64"), shape)).ravel()


class Rejection:
    """Generator's distributions drawn by rejection or sequential sampling: each round draws fresh numbers
    for the elements still pending, so every device takes the same rounds where the comparisons agree."""

    def zipf(self, a, size=None, *, device=None):
        """Zipf int64s with exponent a > 1 (Devroye's rejection method)."""
        a = _f(a)
        if bool(_core.any(_core.less_equal(a, 1))):
            raise ValueError("a <= 1 or a is NaN")
        shape = _shape_of(size, a)
        n = int(_np.prod(shape))
        dev = self.random(0, device=device).device
        am1 = _core.subtract(_full(a, shape, dev), 1.0)
        b = _core.power(2.0, am1)
        out = _core.zeros((n,), dtype="float64", device=dev)
        pending = _core.arange(n, device=dev)
        while pending.size:
            k = pending.size
            u = _core.subtract(1.0, self.random(k, device=dev))
            v = self.random(k, device=dev)
            am = _core.take(am1, pending)
            bb = _core.take(b, pending)
            x = _core.floor(_core.power(u, _core.divide(-1.0, am)))
            ok = _core.logical_and(_core.greater_equal(x, 1), _core.less(x, 9.2e18))
            xs = _core.where(ok, x, _core.ones_like(x))
            t = _core.power(_core.add(1.0, _core.divide(1.0, xs)), am)
            ok = _core.logical_and(ok, _core.less_equal(_core.divide(_core.multiply(_core.multiply(v, xs), _core.subtract(t, 1.0)), _core.subtract(bb, 1.0)), _core.divide(t, bb)))
            out[pending[ok]] = xs[ok]
            pending = pending[_core.logical_not(ok)]
        return out.astype("int64").reshape(shape)

    def vonmises(self, mu, kappa, size=None, *, device=None):
        """Von Mises floats on [-pi, pi] (Best and Fisher's rejection method)."""
        import math

        mu, kappa = _f(mu), _f(kappa)
        if _lt0(kappa):
            raise ValueError("kappa < 0")
        shape = _shape_of(size, mu, kappa)
        n = int(_np.prod(shape))
        dev = self.random(0, device=device).device
        k = _full(kappa, shape, dev)
        m = _full(mu, shape, dev)
        r = _core.add(1.0, _core.sqrt(_core.add(1.0, _core.multiply(_core.multiply(k, k), 4.0))))
        rho = _core.divide(_core.subtract(r, _core.sqrt(_core.multiply(r, 2.0))), _core.multiply(k, 2.0))
        s = _core.divide(_core.add(1.0, _core.multiply(rho, rho)), _core.multiply(rho, 2.0))
        s = _core.where(_core.less(k, 1e-5), _core.add(_core.divide(1.0, k), k), s)
        w_all = _core.zeros((n,), dtype="float64", device=dev)
        pending = _core.arange(n, device=dev)
        while pending.size:
            c = pending.size
            u = self.random(c, device=dev)
            v = self.random(c, device=dev)
            sp = _core.take(s, pending)
            kp = _core.take(k, pending)
            z = _core.cos(_core.multiply(u, math.pi))
            w = _core.divide(_core.add(1.0, _core.multiply(sp, z)), _core.add(sp, z))
            y = _core.multiply(kp, _core.subtract(sp, w))
            ok = _core.logical_or(_core.greater_equal(_core.subtract(_core.multiply(y, _core.subtract(2.0, y)), v), 0),
                                  _core.greater_equal(_core.subtract(_core.add(_core.log(_core.divide(y, v)), 1.0), y), 0))
            w_all[pending[ok]] = w[ok]
            pending = pending[_core.logical_not(ok)]
        u = self.random(n, device=dev)
        res = _core.arccos(_core.clip(w_all, -1.0, 1.0))
        res = _core.where(_core.less(u, 0.5), _core.negative(res), res)
        res = _core.add(res, m)
        neg = _core.less(res, 0)
        mod = _core.subtract(_core.fmod(_core.add(_core.absolute(res), math.pi), 2 * math.pi), math.pi)
        res = _core.where(neg, _core.negative(mod), mod)
        tiny = _core.less(k, 1e-8)
        res = _core.where(tiny, _core.multiply(_core.subtract(_core.multiply(self.random(n, device=dev), 2.0), 1.0), math.pi), res)
        return res.reshape(shape)

    def hypergeometric(self, ngood, nbad, nsample, size=None, *, device=None):
        """Hypergeometric int64s: good items among nsample drawn without replacement (one draw per step,
        nsample steps on the device)."""
        g, b, ns = (_np.asarray(_core.asnumpy(x) if isinstance(x, _core.ndarray) else x) for x in (ngood, nbad, nsample))
        if _np.any(g < 0) or _np.any(b < 0) or _np.any(ns < 0):
            raise ValueError("ngood, nbad and nsample must be non-negative")
        if _np.any(g + b < ns):
            raise ValueError("ngood + nbad < nsample")
        shape = _shape_of(size, g, b, ns)
        dev = self.random(0, device=device).device
        good = _core.asarray(_np.broadcast_to(g, shape).astype(_np.float64), device=dev)
        bad = _core.asarray(_np.broadcast_to(b, shape).astype(_np.float64), device=dev)
        steps = _core.asarray(_np.broadcast_to(ns, shape).astype(_np.float64), device=dev)
        count = _core.zeros(shape, dtype="float64", device=dev)
        for i in range(int(ns.max()) if ns.size else 0):
            u = self.random(shape, device=dev)
            active = _core.less(float(i), steps)
            pick = _core.logical_and(active, _core.less(_core.multiply(u, _core.add(good, bad)), good))
            miss = _core.logical_and(active, _core.logical_not(pick))
            count = _core.add(count, pick.astype("float64"))
            good = _core.subtract(good, pick.astype("float64"))
            bad = _core.subtract(bad, miss.astype("float64"))
        return count.astype("int64")

    def multivariate_hypergeometric(self, colors, nsample, size=None, method="marginals", *, device=None):
        """Counts of each color among nsample items drawn without replacement (conditional hypergeometrics)."""
        c = _np.asarray(_core.asnumpy(colors) if isinstance(colors, _core.ndarray) else colors, dtype=_np.int64)
        if c.ndim != 1 or _np.any(c < 0):
            raise ValueError("colors must be a one-dimensional sequence of nonnegative integers")
        if nsample < 0 or nsample > c.sum():
            raise ValueError("nsample must be in [0, sum(colors)]")
        if method not in ("marginals", "count"):
            raise ValueError('method must be "count" or "marginals".')
        shape = () if size is None else ((size,) if isinstance(size, int) else tuple(size))
        remaining = _np.full(shape, int(nsample), dtype=_np.int64) if shape else _np.int64(nsample)
        cols = []
        rest = int(c.sum())
        left = _core.asarray(remaining, device=device if device is not None else _core.get_default_device())
        for i in range(c.shape[0] - 1):
            rest -= int(c[i])
            x = self.hypergeometric(int(c[i]), rest, _core.asnumpy(left), size=shape, device=left.device)
            cols.append(x)
            left = _core.subtract(left, x)
        cols.append(left)
        return _core.stack(cols, axis=-1)


def install(cls):
    """Give Generator the distributions of this module that it does not define itself."""
    for group in (Distributions, Transcendental, Rejection):
        for name, f in vars(group).items():
            if callable(f) and not name.startswith("_") and not hasattr(cls, name):
                setattr(cls, name, f)
