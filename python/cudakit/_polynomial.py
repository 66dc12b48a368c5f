"""NumPy's ``poly*`` family (coefficients highest power first), on cudakit arrays.

The arithmetic is ops on the coefficient arrays on their device; ``roots``
takes the eigenvalues of the companion matrix with ``numpy.linalg`` on a
host copy (a polynomial's coefficients are a handful of numbers, and the
GPU's non-symmetric eigensolver would need the round trip anyway), and
returns them on the coefficients' device.
"""
from . import _core
from ._core import asarray, ndarray

__all__ = ["poly", "poly1d", "polyadd", "polyder", "polydiv", "polyfit", "polyint", "polymul", "polysub",
           "polyval", "roots"]


def _ck():
    import cudakit

    return cudakit


def _np():
    import numpy

    return numpy


def _coeffs(p, device=None):
    if isinstance(p, poly1d):
        return p.coeffs
    a = _core.asarray(p, device=device) if device is not None and not isinstance(p, ndarray) else asarray(p)
    return a


def _trim(a):
    """a without leading zeros (one zero left for the zero polynomial)."""
    if a.ndim != 1 or a.shape[0] == 0:
        return a
    nz = _core.flatnonzero(_core.not_equal(a, 0))
    if nz.size == 0:
        return a[-1:].copy() * 0 if a.shape[0] else a
    return a[int(nz[0]):]


def polyval(p, x):
    """The value of the polynomial with coefficients p (highest power first) at x (Horner's scheme)."""
    if isinstance(p, poly1d):
        p = p.coeffs
        x = asarray(x)
    p = _coeffs(p)
    x = _core.asarray(x, device=p.device) if not isinstance(x, ndarray) else x
    if isinstance(x, poly1d):
        raise NotImplementedError("polyval at a poly1d")
    y = _core.zeros_like(x, dtype=_core.result_type(x, p))
    for i in range(p.shape[0]):
        y = _core.add(_core.multiply(y, x), p[i])
    return y


def _coeffs_1d(a1, a2):
    """The coefficients of two polynomials as 1-d arrays (a scalar as one),
    the second on the first's device."""
    a1 = _coeffs(a1)
    a2 = _coeffs(a2, a1.device)
    return (a1.reshape(-1) if a1.ndim == 0 else a1), (a2.reshape(-1) if a2.ndim == 0 else a2)


def _aligned(a1, a2):
    """The coefficients of two polynomials as 1-d arrays of one length (the
    shorter padded with leading zeros), the second on the first's device."""
    a1, a2 = _coeffs_1d(a1, a2)
    d = a2.shape[0] - a1.shape[0]
    if d > 0:
        a1 = _core.concatenate((_core.zeros((d,), dtype=a1.dtype, device=a1.device), a1))
    elif d < 0:
        a2 = _core.concatenate((_core.zeros((-d,), dtype=a2.dtype, device=a2.device), a2))
    return a1, a2


def polyadd(a1, a2):
    """The sum of two polynomials."""
    truepoly = isinstance(a1, poly1d) or isinstance(a2, poly1d)
    r = _core.add(*_aligned(a1, a2))
    return poly1d(r) if truepoly else r


def polysub(a1, a2):
    """The difference of two polynomials."""
    truepoly = isinstance(a1, poly1d) or isinstance(a2, poly1d)
    r = _core.subtract(*_aligned(a1, a2))
    return poly1d(r) if truepoly else r


def polymul(a1, a2):
    """The product of two polynomials (the convolution of their coefficients)."""
    truepoly = isinstance(a1, poly1d) or isinstance(a2, poly1d)
    a1 = _coeffs(a1)
    a2 = _coeffs(a2, a1.device)
    r = _ck().convolve(a1, a2)
    return poly1d(r) if truepoly else r


def polyder(p, m=1):
    """The m-th derivative of a polynomial."""
    m = int(m)
    if m < 0:
        raise ValueError("Order of derivative must be positive (see polyint)")
    truepoly = isinstance(p, poly1d)
    p = _coeffs(p)
    n = p.shape[0] - 1
    y = p
    if m > 0:
        y = _core.multiply(p[:-1], _core.arange(n, 0, -1, device=p.device))
        if m > 1:
            y = polyder(y, m - 1)
    return poly1d(y) if truepoly else y


def polyint(p, m=1, k=None):
    """The m-th antiderivative of a polynomial, with integration constants k (zeros by default)."""
    m = int(m)
    if m < 0:
        raise ValueError("Order of integral must be positive (see polyder)")
    if k is None:
        k = [0] * m
    k = _core.asarray(k).ravel() if not isinstance(k, ndarray) else k.ravel()
    if k.shape[0] == 1 and m > 1:
        k = _core.tile(k, m)
    if k.shape[0] < m:
        raise ValueError("k must be a scalar or a rank-1 array of length 1 or >m.")
    truepoly = isinstance(p, poly1d)
    p = _coeffs(p)
    if m == 0:
        return poly1d(p) if truepoly else p
    dt = _core.result_type(p.dtype, 1.0)
    y = _core.concatenate((_core.divide(p, _core.arange(p.shape[0], 0, -1, device=p.device)).astype(dt),
                           _core.asarray([k[0].item()], device=p.device).astype(dt)))
    val = polyint(y, m - 1, k=k[1:])
    return poly1d(val) if truepoly else val


def polydiv(u, v):
    """Quotient and remainder of the division of polynomial u by v."""
    truepoly = isinstance(u, poly1d) or isinstance(v, poly1d)
    u, v = _coeffs_1d(u, v)
    dt = _core.result_type(u, v, 1.0)
    u = u.astype(dt)
    v = v.astype(dt)
    m = u.shape[0] - 1
    n = v.shape[0] - 1
    scale = 1.0 / v[0]
    q = _core.zeros((max(m - n + 1, 1),), dtype=dt, device=u.device)
    r = u.copy()
    for k in range(0, m - n + 1):
        d = _core.multiply(scale, r[k])
        q[k] = d
        r[k:k + n + 1] = _core.subtract(r[k:k + n + 1], _core.multiply(d, v))
    # NumPy strips the leading (near-)zeros of the remainder
    rh = _core.asnumpy(r)
    np = _np()
    while np.allclose(rh[0], 0, rtol=1e-14) and rh.shape[-1] > 1:
        rh = rh[1:]
    r = _core.asarray(rh, device=u.device)
    if truepoly:
        return poly1d(q), poly1d(r)
    return q, r


def poly(seq_of_zeros):
    """The coefficients of the monic polynomial with the given roots (or a square matrix's characteristic polynomial)."""
    s = asarray(seq_of_zeros) if not isinstance(seq_of_zeros, poly1d) else seq_of_zeros.coeffs
    if s.ndim == 2 and s.shape[0] == s.shape[1] and s.shape[0] != 0:
        s = _ck().linalg.eigvals(s)
    elif s.ndim == 1:
        pass
    elif s.ndim == 0 or s.size == 0:
        return _core.ones((), dtype="float64", device=s.device) if s.ndim == 0 else _core.asarray(1.0, device=s.device)
    else:
        raise ValueError("input must be 1d or non-empty square 2d array.")
    if s.shape[0] == 0:
        return _core.asarray(1.0, device=s.device)
    dt = _core.result_type(s.dtype, 1.0)
    a = _core.ones((1,), dtype=dt, device=s.device)
    for i in range(s.shape[0]):
        a = _ck().convolve(a, _core.stack((_core.ones((), dtype=dt, device=s.device), _core.negative(s[i].astype(dt)))))
    if a.dtype.kind == "c":
        # conjugate pairs of roots give real coefficients
        sh = _core.asnumpy(s)
        np = _np()
        pos = np.sort_complex(sh[sh.imag > 0])
        neg = np.sort_complex(np.conjugate(sh[sh.imag < 0]))
        if len(pos) == len(neg) and np.all(pos == neg):
            a = a.real.copy()
    return a


def roots(p):
    """The roots of the polynomial with coefficients p (eigenvalues of the companion matrix, on the host)."""
    p = _coeffs(p)
    if p.ndim != 1:
        raise ValueError("Input must be a rank-1 array.")
    return _core.asarray(_np().roots(_core.asnumpy(p)), device=p.device)


def polyfit(x, y, deg, rcond=None, full=False, w=None, cov=False):
    """The least-squares fit of a polynomial of degree deg to points (x, y): its coefficients, highest power first."""
    ck = _ck()
    x = asarray(x)
    y = _core.asarray(y, device=x.device) if not isinstance(y, ndarray) else y
    deg = int(deg)
    if deg < 0:
        raise ValueError("expected deg >= 0")
    if x.ndim != 1:
        raise TypeError("expected 1D vector for x")
    if x.size == 0:
        raise TypeError("expected non-empty vector for x")
    if y.ndim < 1 or y.ndim > 2:
        raise TypeError("expected 1D or 2D array for y")
    if x.shape[0] != y.shape[0]:
        raise TypeError("expected x and y to have same length")
    if full or cov:
        np = _np()
        r = np.polyfit(_core.asnumpy(x), _core.asnumpy(y), deg, rcond, full, None if w is None else _core.asnumpy(asarray(w)), cov)
        return tuple(_core.asarray(v, device=x.device) if isinstance(v, np.ndarray) else v for v in r)
    xf = x.astype("float64")
    yf = y.astype("float64") if y.dtype.kind not in "fc" else y
    if rcond is None:
        rcond = len(x) * 2.220446049250313e-16
    lhs = ck.vander(xf, deg + 1)
    rhs = yf
    if w is not None:
        w = _core.asarray(w, device=x.device).astype("float64")
        if w.ndim != 1 or w.shape[0] != y.shape[0]:
            raise TypeError("expected a 1-d weight vector of the length of y")
        lhs = _core.multiply(lhs, w[:, None])
        rhs = _core.multiply(rhs, w if rhs.ndim == 1 else w[:, None])
    scale = _core.sqrt(_core.sum(_core.multiply(lhs, lhs), axis=0))
    scale = _core.where(_core.equal(scale, 0), _core.ones_like(scale), scale)
    lhs = _core.divide(lhs, scale)
    c = ck.linalg.lstsq(lhs, rhs, rcond=rcond)[0]
    c = _core.divide(c, scale if c.ndim == 1 else scale[:, None])
    return c


class poly1d:
    """A one-variable polynomial: ``poly1d([1, 2, 3])`` is x**2 + 2x + 3; ``poly1d(r, True)`` has roots r."""

    __hash__ = None

    def __init__(self, c_or_r, r=False, variable=None):
        if isinstance(c_or_r, poly1d):
            self._variable = c_or_r._variable
            self._coeffs = c_or_r._coeffs
            if variable is not None:
                self._variable = variable
            return
        if r:
            c_or_r = poly(c_or_r)
        c = asarray(c_or_r) if not isinstance(c_or_r, ndarray) else c_or_r
        if c.ndim > 1:
            raise ValueError("Polynomial must be 1d only.")
        c = c.reshape(-1) if c.ndim == 0 else c
        c = _trim(c)
        if c.shape[0] == 0:
            c = _core.zeros((1,), dtype=c.dtype, device=c.device)
        self._coeffs = c
        self._variable = "x" if variable is None else variable

    @property
    def coeffs(self):
        """The coefficients, highest power first."""
        return self._coeffs

    @coeffs.setter
    def coeffs(self, value):
        if value is not self._coeffs:
            raise AttributeError("Cannot set attribute")

    c = coef = coefficients = coeffs

    @property
    def variable(self):
        """The name of the variable in the printed form."""
        return self._variable

    @property
    def order(self):
        """The degree."""
        return self._coeffs.shape[0] - 1

    o = order

    @property
    def roots(self):
        """The roots (computed on the host, see cudakit.roots)."""
        return roots(self._coeffs)

    r = roots

    def __array__(self, dtype=None, copy=None):
        return _np().asarray(_core.asnumpy(self._coeffs), dtype=dtype)

    def __call__(self, val):
        if isinstance(val, poly1d):
            raise NotImplementedError("composition of poly1d objects")
        return polyval(self._coeffs, val)

    def __len__(self):
        return self.order

    def __repr__(self):
        vals = repr(_core.asnumpy(self._coeffs))[6:-1]
        return f"poly1d({vals})"

    def __str__(self):
        return str(_np().poly1d(_core.asnumpy(self._coeffs), variable=self._variable))

    def __neg__(self):
        return poly1d(_core.negative(self._coeffs))

    def __pos__(self):
        return self

    def __add__(self, other):
        return poly1d(polyadd(self._coeffs, _coeffs(other, self._coeffs.device)))

    __radd__ = __add__

    def __sub__(self, other):
        return poly1d(polysub(self._coeffs, _coeffs(other, self._coeffs.device)))

    def __rsub__(self, other):
        return poly1d(polysub(_coeffs(other, self._coeffs.device), self._coeffs))

    def __mul__(self, other):
        if not isinstance(other, (poly1d, list, tuple, ndarray)):
            return poly1d(_core.multiply(self._coeffs, other))
        return poly1d(polymul(self._coeffs, _coeffs(other, self._coeffs.device)))

    __rmul__ = __mul__

    def __truediv__(self, other):
        if not isinstance(other, (poly1d, list, tuple, ndarray)):
            return poly1d(_core.divide(self._coeffs, other))
        return polydiv(self, poly1d(_coeffs(other, self._coeffs.device)))

    def __rtruediv__(self, other):
        return polydiv(poly1d(_coeffs(other, self._coeffs.device)), self)

    def __pow__(self, val):
        if not isinstance(val, int) or val < 0:
            raise ValueError("Power to non-negative integers only.")
        res = poly1d([1])
        for _ in range(val):
            res = res * self
        return res

    def __eq__(self, other):
        if not isinstance(other, poly1d):
            return NotImplemented
        if self._coeffs.shape != other._coeffs.shape:
            return False
        return bool(_core.all(_core.equal(self._coeffs, other._coeffs)))

    def __ne__(self, other):
        r = self.__eq__(other)
        return r if r is NotImplemented else not r

    def __getitem__(self, val):
        ind = self.order - val
        if val > self.order or val < 0:
            return _core.zeros((), dtype=self._coeffs.dtype, device=self._coeffs.device)
        return self._coeffs[ind]

    def __iter__(self):
        return iter(self._coeffs)

    def integ(self, m=1, k=0):
        """The m-th antiderivative, as a poly1d."""
        return poly1d(polyint(self._coeffs, m=m, k=k))

    def deriv(self, m=1):
        """The m-th derivative, as a poly1d."""
        return poly1d(polyder(self._coeffs, m=m))


poly1d.__module__ = "cudakit"
