"""Datasets: the base class, arrays as a dataset, subsets."""
import operator


class Dataset:
    """A map from indices to samples: subclasses define ``__getitem__`` (and
    ``__len__``, which DataLoader needs)."""

    def __getitem__(self, index):
        raise NotImplementedError(f"{type(self).__name__} does not define __getitem__")


class TensorDataset(Dataset):
    """Arrays sharing their first dimension, as a dataset: ``ds[i]`` is
    ``tuple(t[i] for t in tensors)``.  The arrays are kept as given (cudakit
    arrays on any device, or NumPy arrays); DataLoader batches cudakit
    arrays on their device."""

    def __init__(self, *tensors):
        if not tensors:
            raise ValueError("TensorDataset needs at least one array")
        for t in tensors:
            if getattr(t, "ndim", 0) < 1:
                raise ValueError(f"TensorDataset's arrays need a first dimension; got {type(t).__name__} "
                                 f"of shape {getattr(t, 'shape', None)}")
        n = tensors[0].shape[0]
        if any(t.shape[0] != n for t in tensors):
            raise ValueError("Size mismatch between tensors: first dimensions "
                             + ", ".join(str(t.shape[0]) for t in tensors))
        self.tensors = tuple(tensors)

    def __getitem__(self, index):
        return tuple(t[index] for t in self.tensors)

    def __len__(self):
        return self.tensors[0].shape[0]


class Subset(Dataset):
    """The samples of ``dataset`` at ``indices``, in that order."""

    def __init__(self, dataset, indices):
        self.dataset = dataset
        self.indices = [operator.index(i) for i in indices]

    def __getitem__(self, index):
        if isinstance(index, list):
            return self.dataset[[self.indices[i] for i in index]]
        return self.dataset[self.indices[index]]

    def __len__(self):
        return len(self.indices)


def random_split(dataset, lengths, generator=None):
    """Subsets of ``dataset`` of the given lengths (ints summing to its
    length, or fractions summing to 1, the remainder given out one by one
    from the first), from a random permutation drawn from ``generator``
    (as DataLoader's)."""
    from ._loader import _host_permutation, _resolve_generator

    n = len(dataset)
    lengths = list(lengths)
    if lengths and all(0 <= x <= 1 for x in lengths) and any(isinstance(x, float) for x in lengths):
        if abs(sum(lengths) - 1) > 1e-6:
            raise ValueError(f"fractions must sum to 1, got {sum(lengths)}")
        counts = [int(x * n) for x in lengths]
        for i in range(n - sum(counts)):
            counts[i % len(counts)] += 1
        lengths = counts
    lengths = [operator.index(x) for x in lengths]
    if sum(lengths) != n:
        raise ValueError("Sum of input lengths does not equal the length of the input dataset!")
    perm = _host_permutation(_resolve_generator(generator), n).tolist()
    out, lo = [], 0
    for k in lengths:
        out.append(Subset(dataset, perm[lo:lo + k]))
        lo += k
    return out
