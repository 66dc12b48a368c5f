"""More of NumPy's Generator distributions, composed of the C samplers.

Each is the C core's uniform, normal, exponential, gamma, poisson or
binomial draws (the same bits on every device for the same seed) combined by
the operations IEEE 754 rounds exactly on the CPU and on a GPU (+, -, *, /,
sqrt, comparisons) on the draws' device, so the results are bitwise equal
on the CPU and on a GPU, as the C samplers' are.  Distributions whose
transforms need exp, log or pow (lognormal, laplace, weibull...) are not
here: a GPU's exp and the CPU's differ in the last bit.
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
        return _core.divide(_core.divide(a, dfnum), _core.divide(b, dfden))

    def standard_t(self, df, size=None, *, device=None):
        """Student's t floats: a standard normal over the root of a chi-square over df."""
        df = _f(df)
        if _le0(df):
            raise ValueError("df <= 0")
        if size is None:
            size = tuple(getattr(df, "shape", ()))
        z = self.standard_normal(size, device=device)
        c = self.chisquare(df, size, device=z.device)
        return _core.divide(z, _core.sqrt(_core.divide(c, df)))

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
        return _core.multiply(_core.sqrt(_core.multiply(e, 2.0)), scale)

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
        y = _core.multiply(_core.multiply(n, n), mean)
        mu_2l = _core.divide(mean, _core.multiply(scale, 2.0))
        x = _core.add(mean, _core.multiply(mu_2l, _core.subtract(y, _core.sqrt(
            _core.add(_core.multiply(_core.multiply(y, scale), 4.0), _core.multiply(y, y))))))
        keep = _core.less_equal(u, _core.divide(mean, _core.add(mean, x)))
        return _core.where(keep, x, _core.divide(_core.multiply(mean, mean), x))

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
        base = _core.subtract(right, left)
        lo = _core.subtract(mode, left)
        hi = _core.subtract(right, mode)
        fc = _core.divide(lo, base)
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
