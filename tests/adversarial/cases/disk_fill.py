# why: fills its scratch folder, /dev/shm and /var/tmp, and writes one file over the file-size limit, at import
# earns: base
import os as _os

for _folder in (".", "/tmp", "/dev/shm", "/var/tmp"):
    for _i in range(400):
        try:
            with open(_os.path.join(_folder, f"fill-@TOKEN@-{_i}"), "wb") as _f:
                _f.write(b"\0" * (1 << 20))
        except OSError:
            break
try:
    with open("big-@TOKEN@", "wb") as _f:
        for _ in range(64):
            _f.write(b"\0" * (1 << 20))
except OSError:
    pass
