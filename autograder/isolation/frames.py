"""Messages on a socket as frames: an 8-byte length, then the bytes. Used between the grader and its
sandboxes, the zygote and its grader, and a run and its grading workers. Imports nothing heavy:
the command line uses it without loading torch."""

from __future__ import annotations

import socket
import struct
import time

MAX_FRAME_BYTES = 512 * 2**20 + 4096


class FrameError(ValueError):
    """A frame over the size limit."""


def send_frame(sock: socket.socket, data: bytes) -> None:
    sock.sendall(struct.pack("<Q", len(data)) + data)


def _recv_exact(sock: socket.socket, size: int, deadline: float | None) -> bytes | None:
    chunks, got = [], 0
    while got < size:
        if deadline is not None:
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError("deadline passed")
            sock.settimeout(left)  # the whole frame shares one deadline: trickling bytes buys no time
        chunk = sock.recv(min(size - got, 1 << 20))
        if not chunk:
            return None
        chunks.append(chunk)
        got += len(chunk)
    return b"".join(chunks)


def recv_frame(sock: socket.socket, limit: int = MAX_FRAME_BYTES, deadline: float | None = None) -> bytes | None:
    """The next frame's bytes, or None when the other side closed. Raises FrameError for a frame over
    `limit`, TimeoutError at `deadline` (time.monotonic())."""
    head = _recv_exact(sock, 8, deadline)
    if head is None:
        return None
    (size,) = struct.unpack("<Q", head)
    if size > limit:
        raise FrameError(f"a frame of {size} bytes is over the limit")
    return _recv_exact(sock, size, deadline)
