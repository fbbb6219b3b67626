"""Grade submissions one after another through `engine.grade`, with limits short enough for hostile cases.

Run as `python tests/adversarial/engine_run.py` with a JSON job on stdin:
{"paths": [...], "parts": [...], "secret": "...", "limits": {Limits field: value}}.
Prints one JSON object: for each submission in order, its id, the seconds it took and its
checks in the Gradescope shape (plus "internal" for a grader error). One zygote serves them
all, as in a grading worker, so a crash that leaked into the next submission would show.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # this checkout's autograder, not another install

from autograder.engine import grade, sandbox_backend  # noqa: E402
from autograder.sandbox import Limits, Zygote  # noqa: E402
from autograder.submission import ASSIGNMENT_DIR, PUBLIC_HELPERS, read_submission  # noqa: E402

ROOT = ASSIGNMENT_DIR.parent.parent


def main() -> int:
    job = json.load(sys.stdin)
    paths = [Path(p) for p in job["paths"]]
    hidden = [ROOT / "attention_ref", ROOT / "autograder" / "graders", ROOT / "assignments", ROOT / "solutions",
              ROOT / "tests", *sorted({p.resolve().parent for p in paths})]
    public = [ASSIGNMENT_DIR / name for name in PUBLIC_HELPERS]
    zygote = Zygote(Limits(**job["limits"]), [h for h in hidden if h.is_dir()], public)
    results = []
    try:
        for path in paths:
            start = time.perf_counter()
            graded = grade(read_submission(path), job["secret"], tuple(job["parts"]), sandbox_backend(zygote))
            results.append({
                "id": graded.submission.id,
                "seconds": time.perf_counter() - start,
                "problems": graded.submission.problems,
                "tests": [{**c.as_gradescope(), "internal": c.internal_error} for c in graded.checks],
            })
    finally:
        zygote.close()
    json.dump({"weaknesses": zygote.weaknesses, "results": results}, sys.stdout)
    return 0


if __name__ == "__main__":
    sys.exit(main())
