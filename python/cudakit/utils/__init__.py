"""cudakit.utils: ``cudakit.utils.data`` (datasets and data loaders, as PyTorch's torch.utils.data)."""
from . import data  # noqa: F401
