"""A child's one answer: fork, let the child compute bytes and write them to a pipe, read them in the parent."""

from __future__ import annotations

import os
from typing import Callable


def answer_of_child(fork: Callable[[], int], work: Callable[[int], bytes]) -> bytes:
    """What a child forked by `fork` answers. The child runs `work(fd)` (`fd`: the end of the pipe it writes
    to, which it must keep open through whatever it does) and writes what that returns; then it ends, whatever
    happened, without running anything of its parent's (os._exit). The parent reads the answer to its end
    (b"" when the child wrote none) and reaps the child."""
    read, write = os.pipe()
    pid = fork()
    if pid == 0:
        try:
            os.close(read)
            answer = work(write)
            with os.fdopen(write, "wb") as out:
                out.write(answer)
        finally:
            os._exit(0)
    os.close(write)
    with os.fdopen(read, "rb") as pipe:
        data = pipe.read()
    os.waitpid(pid, 0)
    return data
