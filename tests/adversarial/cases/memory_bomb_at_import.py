# why: asks for 64 GiB at the top of the module, then 64 GiB more of tensors
# earns: nothing
# position: top
# feedback: MemoryError
import torch

_big_tensor = None
try:
    _big_tensor = torch.empty(2**34)
except RuntimeError:
    pass
_big = bytearray(64 * 2**30)
