# why: ignores SIGTERM, SIGINT and SIGHUP, then padding_mask loops forever in Python and sleeps in C
# earns: zero-on padding_mask
# runner: engine
# within: 3
# feedback: did not finish
import signal as _signal
import time as _time

for _sig in (_signal.SIGTERM, _signal.SIGINT, _signal.SIGHUP):
    _signal.signal(_sig, _signal.SIG_IGN)


def padding_mask(lengths, T):
    while True:
        try:
            _time.sleep(1000)
        except BaseException:  # noqa: BLE001
            pass
