# why: causal_mask asks for 64 GiB of tensors, then 64 GiB of bytes
# earns: zero-on causal_mask


def causal_mask(T_q, T_k=None, *, device=None):
    try:
        torch.ones(2**34)
    except RuntimeError:
        pass
    return bytearray(64 * 2**30)
