"""The seed documents' array examples, on the default device."""
import numpy as np

import cudakit as ck

np.set_printoptions(threshold=20)   # summarise the 1000 values as NumPy does for long arrays

x = ck.arange(1000, dtype=ck.float32)
y = x + 1
print("x = ck.arange(1000, dtype=ck.float32); y = x + 1")
print("ck.asnumpy(y) ->", ck.asnumpy(y))
print()
z = ck.array([1, 2, 3]) + ck.array([4, 5, 6])
print("ck.array([1, 2, 3]) + ck.array([4, 5, 6]) ->", z)
print()
print(f"device: {y.device} (the default device: {ck.get_default_device()})")
