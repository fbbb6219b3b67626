"""The submission's side names what went wrong: an allocation refused at the memory limit is not a bug to retry."""

from __future__ import annotations

import math

import pytest

from autograder.isolation import protocol
from autograder.isolation.server import error_info


def _raised(exc: BaseException) -> BaseException:
    try:
        raise exc
    except BaseException as caught:  # noqa: BLE001 - a traceback, as a submission's call would have
        return caught


@pytest.mark.parametrize("exc, kind", [
    (MemoryError(), protocol.MEMORY),
    (RuntimeError("[enforce fail at alloc_cpu.cpp:127] DefaultCPUAllocator: can't allocate memory: you tried to "
                  "allocate 536870912 bytes."), protocol.MEMORY),
    (RuntimeError("shape mismatch"), protocol.EXCEPTION),
    (NotImplementedError(), protocol.NOT_IMPLEMENTED),
])
def test_error_kinds(exc, kind):
    assert error_info(_raised(exc))["kind"] == kind


def test_a_real_allocation_refused_by_the_address_space_limit_is_out_of_memory():
    """torch's own message, from a child process whose address space is capped."""
    import multiprocessing

    context = multiprocessing.get_context("fork")
    queue = context.Queue()
    process = context.Process(target=_allocate_beyond_limit, args=(queue,))
    process.start()
    kind = queue.get(timeout=60)
    process.join()
    assert kind == protocol.MEMORY


def _allocate_beyond_limit(queue) -> None:
    import resource

    import torch

    resource.setrlimit(resource.RLIMIT_AS, (2**36, 2**36))  # 64 GiB of address space, far less than asked
    try:
        torch.empty(2**37, dtype=torch.uint8).fill_(1)
    except BaseException as exc:  # noqa: BLE001
        queue.put(error_info(exc)["kind"])
    else:
        queue.put("allocated")


def test_magics_and_shell_commands_do_nothing_when_graded(tmp_path):
    """The calls IPython makes of a cell's magics and shell commands (model.jupyter) find a `get_ipython()` that
    runs nothing and returns what lets the code around them go on."""
    from autograder.model.jupyter import Turner
    from autograder.isolation.server import Runtime

    flag = tmp_path / "ran"
    cells = [f"!touch {flag}\nlisted = !ls {tmp_path}\n%matplotlib inline\nres = %timeit -o sum([1])\n",
             f"%%bash\ntouch {flag}\n", "torch.tril?\nafter = 1\n"]
    runtime = Runtime()
    runtime.load([(f"cell {i}", Turner().python(cell)[0]) for i, cell in enumerate(cells)])
    assert not runtime.load_errors and not flag.exists()
    names = runtime.namespace
    assert names["listed"] == [] and names["res"].all_runs == [] and math.isnan(names["res"].average)
    assert names["after"] == 1
