"""cudakit.utils.data: datasets and batches, as PyTorch's ``torch.utils.data``.

    >>> import cudakit as ck
    >>> from cudakit.utils.data import TensorDataset, DataLoader
    >>> x = ck.asarray(images, device="cuda")          # the whole set on the GPU
    >>> y = ck.asarray(labels, device="cuda")
    >>> loader = DataLoader(TensorDataset(x, y), batch_size=64, shuffle=True,
    ...                     generator=ck.random.default_rng(0))
    >>> for xb, yb in loader:                           # gathered on the GPU
    ...     ...

Where the batches are made:

- a ``TensorDataset`` of cudakit arrays is batched on the arrays' device:
  one ``take`` an array for a batch (a copy of a slice without shuffling),
  with the epoch's permutation made on that device; nothing crosses to the
  host (the CPU is such a device too);
- host data (NumPy arrays, cudakit CPU arrays bound for a GPU, or items a
  ``Dataset`` returns) with ``device=`` is gathered into page-locked
  (pinned) buffers and copied to the device on a side stream one batch
  ahead, so the copy of the next batch overlaps the work on this one (the
  same code runs for ``device="cpu"``); without ``device``, host
  batches are pinned when a GPU is usable (``pin_memory=None``, the
  default; True or False choose), so that ``data.to(device)`` in the
  user's loop copies without waiting;
- any other dataset: its items, collated by ``collate_fn``
  (``default_collate``: arrays stacked, numbers made arrays, tuples, lists
  and dicts collated field by field) into cudakit arrays.

``shuffle`` draws a new order each epoch from ``generator``: a
``ck.random.Generator`` (``ck.random.default_rng(seed)``: the same order on
every device for a seed), an int seed, or a NumPy Generator; without one,
from cudakit's global generator (``ck.random.seed``).
"""
from ._dataset import Dataset, TensorDataset, Subset, random_split
from ._loader import DataLoader, default_collate

__all__ = ["Dataset", "TensorDataset", "Subset", "random_split", "DataLoader", "default_collate"]
