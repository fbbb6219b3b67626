# why: its import takes three quarters of the time limit and causal_mask never returns: if the sandbox replaced after each timeout reloads the code under a time limit of its own, every call costs almost two limits
# earns: zero-on causal_mask
# runner: engine
# within: 4
# feedback: timed out
import time as _time

_time.sleep(0.75 * @CALL_SECONDS@)


def causal_mask(T_q, T_k=None, *, device=None):
    while True:
        pass
