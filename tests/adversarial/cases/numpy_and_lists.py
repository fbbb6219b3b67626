# why: correct values as a numpy array (causal_mask) and as nested lists (causal_average)
# earns: zero-on causal_average, causal_mask
# feedback: return a torch.Tensor
_base_causal_average, _base_causal_mask = causal_average, causal_mask


def causal_average(T):
    return _base_causal_average(T).tolist()


def causal_mask(T_q, T_k=None, *, device=None):
    return _base_causal_mask(T_q, T_k).numpy()
