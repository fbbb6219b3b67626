"""A request waits to be sent by its own call's deadline: a large request to a process that is slow to
read it (kept off the CPU) is not cut short by the timeout an earlier, shorter exchange left on the
socket (the 2 s of a part's first request once cut a 60-s call at 2 s, reported as a timeout)."""

from __future__ import annotations

import socket
import threading
import time

from autograder.isolation import frames
from autograder.isolation.deadline import Deadline
from autograder.isolation.sandbox import FROM_SANDBOX_REPLY, _exchange


def test_a_large_request_to_a_slow_reader_is_sent_by_the_calls_own_deadline():
    ours, theirs = socket.socketpair()
    ours.settimeout(0.05)  # what an earlier exchange's last wait left on the socket

    def slow_reader() -> None:
        time.sleep(0.3)  # the process has not had the CPU yet
        theirs.settimeout(5.0)  # the whole request, or the sender gave up
        try:
            request = frames.recv_frame(theirs)
            frames.send_frame(theirs, FROM_SANDBOX_REPLY + len(request).to_bytes(8, "little"))
        except TimeoutError:
            pass

    reader = threading.Thread(target=slow_reader)
    reader.start()
    try:
        request = b"x" * (8 * 2**20)  # far more than the socket's buffer holds
        reply = _exchange(ours, request, Deadline(10.0), on_callback=lambda message: {})
        assert int.from_bytes(reply, "little") == len(request)
    finally:
        ours.close()
        reader.join()
        theirs.close()
