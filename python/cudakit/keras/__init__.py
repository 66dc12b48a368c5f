"""cudakit.keras: Keras's face of cudakit (the nn area writes the models and layers)."""
from . import datasets  # noqa: F401
