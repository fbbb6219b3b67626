# why: causal_average allocates and touches memory 64 MiB at a time until something gives
# earns: zero-on causal_average
# runner: engine
# feedback: ran out of memory
# within: 3


def causal_average(T):
    hoard = []
    while True:
        hoard.append(bytearray(64 * 2**20))
        hoard[-1][:: 4096] = b"\1" * len(hoard[-1][:: 4096])
