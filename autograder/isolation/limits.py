"""What one submission may use (`Limits`), and what the zygote is told to set up its sandboxes
(`SandboxConfig`). Imports nothing heavy.

A run's limits travel as one `Limits`, by field name, from the command line to where each is used:
`proxy.Clock` keeps a submission's time (`call_seconds`, `budget_seconds`, `leash_seconds`) in the
grading worker; the zygote is sent the same object inside its `SandboxConfig`, and every sandbox it
forks applies the rest (`confinement.confine`, `inside.serve`). A new limit is a field here and its use.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .fields import JsonFields
from .policy import View

# All calls into one submission together: half of Gradescope's default 10 minutes, so that a run that
# grades one upload (start-up, reports) always ends in time. Honest submissions take seconds; after a
# first timeout the leash (proxy.Clock) ends a looping one within about two call limits, far below this.
BUDGET_SECONDS = 300.0
# Each call after a submission's first timeout: an honest slow call at the graders' sizes takes under 1 s.
LEASH_SECONDS = 5.0


@dataclass(frozen=True)
class Limits(JsonFields):
    """What one submission may use; a run's are in `WorkerSettings.limits` (pool.worker)."""

    # the submission's time, kept by the grader (proxy.Clock)
    call_seconds: float = 60.0  # one call into the submission
    budget_seconds: float = BUDGET_SECONDS  # all its calls together
    leash_seconds: float = LEASH_SECONDS  # each call after its first timeout
    # each sandbox's resources, set by the sandbox itself (confinement.confine)
    cpu_seconds: int = 300
    memory_bytes: int = 4 * 2**30  # on top of what the interpreter and torch already map
    file_bytes: int = 16 * 2**20
    processes: int = 256
    scratch_bytes: int = 64 * 2**20  # all files together in the private /tmp (it is memory)
    # The share of each GPU's memory one sandbox's allocator may hold, so that one cannot starve the others
    # or the grader's own CUDA reference (PyTorch's allocator limit: code that bypasses torch is not bound).
    gpu_memory_fraction: float = 0.125


@dataclass(frozen=True)
class SandboxConfig(JsonFields):
    """What the zygote is told (as JSON, on its stdin or from the workers' parent): only what every sandbox
    may know, since each inherits the zygote's memory."""

    limits: Limits
    view: View  # the file system a sandbox sees
    preload: tuple[str, ...] = ()  # what the zygote imports once for all its sandboxes
    public: dict[str, bytes] = field(default_factory=dict)  # helper files in every sandbox's scratch folder
    fonts: dict[str, bytes] = field(default_factory=dict)  # matplotlib's font list, for the zygote's own import
