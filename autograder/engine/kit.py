"""Everything a grader module (autograder/graders/test_<part>.py) imports from the package, in one place:
the checks' API (a check's points, how it compares and explains), the figures a check may draw, the
plugin's devices, what a call into the student's code raises or shows, the hints' catalogue, and the quiz
and the release it is graded against. A grader needs nothing else of the package."""

from __future__ import annotations

from .. import quiz, releases
from ..hints import hint
from ..isolation.protocol import EXCEPTION
from ..isolation.proxy import Seen, StudentError
from ..text import byte_size
from . import figures
from .checks import (ROW_SUM_TOLERANCE, Diagnosis, Failure, Hint, as_number, as_tensor, bounded_numel, check, covering,
                     describe, diagnosed, draw, expect, expect_close, fail, pictures, root_cause, some, tolerance,
                     unravel, waits)
from .plugin import PLUGIN, available_devices

__all__ = ["EXCEPTION", "PLUGIN", "ROW_SUM_TOLERANCE", "Diagnosis", "Failure", "Hint", "Seen", "StudentError",
           "as_number", "as_tensor", "available_devices", "bounded_numel", "byte_size", "check", "covering",
           "describe", "diagnosed", "draw", "expect", "expect_close", "fail", "figures", "hint", "pictures", "quiz",
           "releases", "root_cause", "some", "tolerance", "unravel", "waits"]
