"""The names of NumPy's main namespace that cudakit loads on first use, by module.

Read by cudakit/__init__.py (its lazy names and ``dir(cudakit)``) without
importing the modules; tests/test_numpy_coverage.py checks that each list is
its module's ``__all__``.
"""
_EXTRA = (
    "amax amin ptp asanyarray asarray_chkfinite require fabs float_power heaviside fix angle sinc spacing "
    "divmod modf frexp ldexp nan_to_num real_if_close isposinf isneginf iscomplex isreal iscomplexobj "
    "isrealobj isfortran isscalar iterable ndim shape size promote_types min_scalar_type common_type "
    "mintypecode typename issubdtype base_repr binary_repr format_float_positional format_float_scientific "
    "geomspace fromfunction fromiter frombuffer fromstring fromfile indices diagflat vander hanning hamming "
    "blackman bartlett i0 kaiser diag_indices_from tril_indices_from triu_indices_from mask_indices "
    "fill_diagonal place putmask copyto hsplit vsplit dsplit block rollaxis trim_zeros ediff1d sort_complex "
    "setxor1d lexsort apply_along_axis apply_over_axes piecewise convolve correlate interp gradient cross "
    "trapezoid unwrap bitwise_count packbits unpackbits histogram_bin_edges histogramdd histogram2d nanprod "
    "nancumsum nancumprod nanvar nanstd nanquantile nanpercentile nanmedian may_share_memory shares_memory "
    "ndindex ndenumerate broadcast flatiter matvec vecmat array_equiv einsum_path mgrid ogrid r_ c_ s_ "
    "index_exp seterr geterr seterrcall geterrcall errstate"
).split()
_IO = (
    "savez savez_compressed savetxt loadtxt genfromtxt set_printoptions get_printoptions "
    "printoptions array2string array_repr array_str"
).split()
_POLY = "poly poly1d polyadd polyder polydiv polyfit polyint polymul polysub polyval roots".split()

LAZY = {**{n: "_numpy_extra" for n in _EXTRA}, **{n: "_numpy_io" for n in _IO}, **{n: "_polynomial" for n in _POLY}}
