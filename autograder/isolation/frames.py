"""Messages on a socket as frames: an 8-byte length, then the bytes. Used between the grader and its
sandboxes, the zygote and its grader, and a run and its grading workers. Imports nothing heavy:
the command line uses it without loading torch."""

from __future__ import annotations

import socket
import struct
import time
from typing import Callable, Union

# when a reply is due (time.monotonic()): a fixed time, or one asked again as it may move (a `Deadline`)
Due = Union[float, Callable[[], float], None]

MAX_FRAME_BYTES = 512 * 2**20 + 4096


class FrameError(ValueError):
    """A frame over the size limit."""


class FrameTimeout(TimeoutError):
    """The deadline passed before the whole frame came."""


def send_frame(sock: socket.socket, data: bytes) -> None:
    sock.sendall(struct.pack("<Q", len(data)) + data)


def _recv_exact(sock: socket.socket, size: int, deadline: Due) -> bytes | None:
    chunks, got = [], 0
    while got < size:
        chunk = sock.recv(min(size - got, 1 << 20)) if deadline is None else _recv_by(sock, size - got, deadline)
        if chunk is None:
            continue  # the wait ended where the deadline was: it may have moved since
        if not chunk:
            return None
        chunks.append(chunk)
        got += len(chunk)
    return b"".join(chunks)


def _recv_by(sock: socket.socket, size: int, deadline: float | Callable[[], float]) -> bytes | None:
    """What has arrived of at most `size` bytes, waiting until `deadline` at most (the whole frame shares
    one deadline: trickling bytes buys no time); None when the wait reached it. Once it has passed, what
    is already there is read, so that a grader which was itself kept off the CPU still takes a reply that
    came in time; raises FrameTimeout when less than all of it is there."""
    left = (deadline() if callable(deadline) else deadline) - time.monotonic()
    if left > 0:
        sock.settimeout(left)
        try:
            return sock.recv(min(size, 1 << 20))
        except TimeoutError:
            return None
    want, timeout = min(size, 1 << 20), sock.gettimeout()
    sock.settimeout(0)
    try:
        chunk = sock.recv(want)
    except BlockingIOError:
        chunk = None
    finally:
        sock.settimeout(timeout)
    if chunk is None or 0 < len(chunk) < want:
        raise FrameTimeout("deadline passed")
    return chunk


def recv_frame(sock: socket.socket, limit: int = MAX_FRAME_BYTES, deadline: Due = None) -> bytes | None:
    """The next frame's bytes, or None when the other side closed. Raises FrameError for a frame over
    `limit`, FrameTimeout (a TimeoutError) once `deadline` has passed."""
    head = _recv_exact(sock, 8, deadline)
    if head is None:
        return None
    (size,) = struct.unpack("<Q", head)
    if size > limit:
        raise FrameError(f"a frame of {size} bytes is over the limit")
    return _recv_exact(sock, size, deadline)
