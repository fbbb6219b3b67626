# why: tries to write /tmp, /var/tmp, /dev/shm, the project, the graders, the --out folder (overwriting base's results with full marks) and another student's file
# earns: base
import json as _json
import os as _os

_targets = [
    "/tmp/adv-pwned-@TOKEN@", "/var/tmp/adv-pwned-@TOKEN@", "/dev/shm/adv-pwned-@TOKEN@",
    "@ROOT@/adv-pwned-@TOKEN@", "@ROOT@/autograder/adv-pwned-@TOKEN@", "@ROOT@/autograder/graders/test_masks.py",
    "@ROOT@/attention_ref/masks.py", "@OUT@/adv-pwned-@TOKEN@", "@OUT@/grades.csv", "@OUT@/buggy_masks_fill_zero/results.json",
    "@SUBS@/buggy_masks_fill_zero.py", "@SUBS@/adv-pwned-@TOKEN@", _os.path.expanduser("~/adv-pwned-@TOKEN@"),
]
_fake = _json.dumps({"score": 999, "tests": []})
for _target in _targets:
    try:
        _os.makedirs(_os.path.dirname(_target), exist_ok=True)
        with open(_target, "w") as _f:
            _f.write(_fake)
    except OSError:
        pass
    try:
        _os.symlink("/tmp/adv-pwned-@TOKEN@", _target + ".link")
    except OSError:
        pass
