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


def test_a_stream_of_callbacks_ends_the_call_at_its_deadline():
    """A thread of the submission's keeps callback frames queued on its socket: once the deadline has
    passed the grader takes only a reply, so the call ends then (it once served the queue for ever)."""
    from autograder.isolation import protocol, wire
    from autograder.isolation.sandbox import FROM_SANDBOX_CALLBACK, _Lost

    ours, theirs = socket.socketpair()
    callback = FROM_SANDBOX_CALLBACK + wire.encode({"op": protocol.CALLBACK, "handle": 1, "method": "call",
                                                     "args": [], "kwargs": {}})
    stop = threading.Event()

    def flood() -> None:  # frames far ahead of the grader's replies
        try:
            while not stop.is_set():
                frames.send_frame(theirs, callback)
        except OSError:
            pass

    def drain() -> None:
        try:
            while not stop.is_set() and theirs.recv(1 << 16):
                pass
        except OSError:
            pass

    threads = [threading.Thread(target=flood, daemon=True), threading.Thread(target=drain, daemon=True)]
    for thread in threads:
        thread.start()
    served, outcome = [0], []

    def on_callback(message: dict) -> dict:
        served[0] += 1
        return protocol.ok(None)

    def call() -> None:
        try:
            _exchange(ours, b"request", Deadline(0.3), on_callback)
        except _Lost as lost:
            outcome.append(lost.kind)

    caller = threading.Thread(target=call, daemon=True)
    caller.start()
    caller.join(timeout=10)
    stop.set()
    ours.close()
    theirs.close()
    assert not caller.is_alive(), f"the call was still serving callbacks after 10 s ({served[0]} served)"
    assert outcome == [protocol.TIMEOUT] and served[0] > 0
