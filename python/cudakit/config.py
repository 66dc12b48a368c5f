"""ck.config: TensorFlow's device listing, so ``tf.config.experimental.list_physical_devices('GPU')``
runs with ``import cudakit as tf``."""
from collections import namedtuple

PhysicalDevice = namedtuple("PhysicalDevice", ["name", "device_type"])


def list_physical_devices(device_type=None):
    """[PhysicalDevice('/physical_device:GPU:0', 'GPU'), ...]: every usable
    GPU, and the CPU, filtered by device_type ('GPU' or 'CPU')."""
    from . import cuda
    out = [PhysicalDevice("/physical_device:CPU:0", "CPU")]
    try:
        n = cuda.device_count() if cuda.is_available() else 0
    except Exception:  # a driver that cannot be used lists no GPU
        n = 0
    out += [PhysicalDevice(f"/physical_device:GPU:{i}", "GPU") for i in range(n)]
    if device_type is None:
        return out
    kind = str(device_type).upper()
    if kind not in ("CPU", "GPU"):
        raise ValueError(f"device_type must be 'CPU' or 'GPU', got {device_type!r}")
    return [d for d in out if d.device_type == kind]


def list_logical_devices(device_type=None):
    return list_physical_devices(device_type)


def set_visible_devices(devices, device_type=None):
    raise NotImplementedError("ck.config.set_visible_devices: choose the device with CUDAKIT_DEVICE or ck.set_default_device")


class experimental:
    """tf.config.experimental's names."""

    list_physical_devices = staticmethod(list_physical_devices)
    list_logical_devices = staticmethod(list_logical_devices)

    @staticmethod
    def set_memory_growth(device, enable):
        """Accepted and ignored: cudakit's pool grows on demand already."""

    @staticmethod
    def get_memory_growth(device):
        return True
