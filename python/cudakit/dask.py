"""cudakit and Dask: clusters of cudakit workers on this machine
(``local_cluster``) and the registrations of ``cudakit._dask`` (the array
backend ``"cudakit"``, the chunk dispatch tables, distributed's
serialization), which Dask finds by itself.  docs/dask.md has the recipes."""
from ._dask import local_cluster, register, register_distributed

__all__ = ["local_cluster", "register", "register_distributed"]
