# why: causal_average never returns (each call is stopped at the time limit, the sandbox replaced)
# earns: zero-on causal_average
# runner: engine
# within: 3
# feedback: did not finish


def causal_average(T):
    while True:
        pass
