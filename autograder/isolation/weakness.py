"""What a sandbox on this machine lacks, as the probe sandbox found it: a kind (`Gap`), which decides what the
run says of its isolation, and a sentence for the instructor. Decisions read the kind, never the words."""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from typing import Any


class Gap(Enum):
    """The kinds of weakness."""

    NAMESPACES = "namespaces"  # no private namespace or file system: no view of its own
    VIEW = "view"  # a view of its own, with a part weaker than planned (/proc, read-only, /dev/shm)
    NO_LANDLOCK = "no landlock"  # no Landlock at all: without namespaces, nothing hides the graders
    LANDLOCK = "landlock"  # Landlock without some of its rules (network, signals)
    UID = "uid"  # sandboxes cannot take a uid of their own
    LIMITS = "limits"  # a limit or share missing (a cgroup's CPU share, memory, huge pages)
    FILTER = "filter"  # no seccomp filter or no no_new_privs
    GPU = "gpu"  # the GPU cannot be opened


@dataclass(frozen=True)
class Weakness:
    gap: Gap
    text: str  # for the instructor: what is missing and what a submission could do for it

    def to_json(self) -> list[str]:
        return [self.gap.value, self.text]

    @classmethod
    def from_json(cls, data: Any) -> "Weakness":
        gap, text = data
        return cls(Gap(gap), str(text))
