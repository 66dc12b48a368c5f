"""The seed documents' array examples, on the default device."""
import cudakit as ck

x = ck.arange(1000, dtype=ck.float32)
y = x + 1
print("x = ck.arange(1000, dtype=ck.float32); y = x + 1")
print("ck.asnumpy(y) ->", ck.asnumpy(y))
print()
z = ck.array([1, 2, 3]) + ck.array([4, 5, 6])
print("ck.array([1, 2, 3]) + ck.array([4, 5, 6]) ->", z)
print()
print("device:", y.device, "(default:", ck.get_default_device(), ")")
