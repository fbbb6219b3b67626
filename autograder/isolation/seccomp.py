"""A seccomp filter for sandboxes: the system calls a grader never needs fail with EPERM.

Among them the kernel keyring (`add_key`, `request_key`, `keyctl`): keyrings are not
namespaced, so a key written by one sandbox would outlive it and reach the next.
Also ptrace and reading other processes' memory (`pidfd_getfd` too), new namespaces (an
unprivileged user namespace would bring capabilities back), mounts, BPF, perf events,
io_uring (whose operations bypass seccomp), loading kernel modules and the like; System V
and POSIX shared memory, semaphores and message queues (where there is no IPC namespace they
are shared with the whole machine); and leaving the sandbox's process group (where there is
no PID namespace, the grader ends a sandbox by its process group). `clone3` fails with ENOSYS
so that the C library falls back to `clone`, whose flags the filter can see.

The rest keeps memory where the grader counts it (isolation.held, docs/measured-checks.md): no
socket may be made (a sandbox talks to the grader on the sockets it is given; a socket's queue
is memory no page fault shows), transparent huge pages stay off (one fault would map 2 MiB),
and, unless the sandbox may start CUDA (whose driver maps its device files shared), no file
or memfd is mapped shared (its pages, once in the page cache, map sixteen to a fault).
"""

from __future__ import annotations

import ctypes
import errno
import os
import struct

from .weakness import Gap, Weakness

AUDIT_ARCH = {"x86_64": 0xC000003E, "aarch64": 0xC00000B7}
DENIED = ("add_key", "request_key", "keyctl", "ptrace", "process_vm_readv", "process_vm_writev", "pidfd_getfd",
          "perf_event_open", "bpf", "userfaultfd", "mount", "umount2", "pivot_root", "chroot", "unshare", "setns",
          "kexec_load", "kexec_file_load", "init_module", "finit_module", "delete_module", "swapon", "swapoff",
          "reboot", "acct", "quotactl", "name_to_handle_at", "open_by_handle_at", "open_tree", "move_mount", "fsopen",
          "fsconfig", "fsmount", "fspick", "mount_setattr", "io_uring_setup", "io_uring_enter", "io_uring_register",
          "shmget", "shmat", "shmctl", "shmdt", "semget", "semop", "semctl", "semtimedop", "msgget", "msgsnd",
          "msgrcv", "msgctl", "mq_open", "mq_unlink", "mq_timedsend", "mq_timedreceive", "mq_notify",
          "mq_getsetattr", "setsid", "setpgid", "socket", "socketpair", "process_madvise", "remap_file_pages")
SHARED_FILES = ("memfd_create", "memfd_secret")  # denied unless the sandbox may map files shared (CUDA)
# name: (x86_64, aarch64)
_NUMBERS = {
    "add_key": (248, 217), "request_key": (249, 218), "keyctl": (250, 219), "ptrace": (101, 117),
    "process_vm_readv": (310, 270), "process_vm_writev": (311, 271), "pidfd_getfd": (438, 438),
    "perf_event_open": (298, 241), "bpf": (321, 280),
    "userfaultfd": (323, 282), "mount": (165, 40), "umount2": (166, 39), "pivot_root": (155, 41), "chroot": (161, 51),
    "unshare": (272, 97), "setns": (308, 268), "kexec_load": (246, 104), "kexec_file_load": (320, 294),
    "init_module": (175, 105), "finit_module": (313, 273), "delete_module": (176, 106), "swapon": (167, 224),
    "swapoff": (168, 225), "reboot": (169, 142), "acct": (163, 89), "quotactl": (179, 60),
    "name_to_handle_at": (303, 264), "open_by_handle_at": (304, 265), "open_tree": (428, 428),
    "move_mount": (429, 429), "fsopen": (430, 430), "fsconfig": (431, 431), "fsmount": (432, 432),
    "fspick": (433, 433), "mount_setattr": (442, 442), "io_uring_setup": (425, 425), "io_uring_enter": (426, 426),
    "io_uring_register": (427, 427), "clone": (56, 220), "clone3": (435, 435),
    "shmget": (29, 194), "shmat": (30, 196), "shmctl": (31, 195), "shmdt": (67, 197), "semget": (64, 190),
    "semop": (65, 193), "semctl": (66, 191), "semtimedop": (220, 192), "msgget": (68, 186), "msgsnd": (69, 189),
    "msgrcv": (70, 188), "msgctl": (71, 187), "mq_open": (240, 180), "mq_unlink": (241, 181),
    "mq_timedsend": (242, 182), "mq_timedreceive": (243, 183), "mq_notify": (244, 184), "mq_getsetattr": (245, 185),
    "setsid": (112, 157), "setpgid": (109, 154), "socket": (41, 198), "socketpair": (53, 199),
    "process_madvise": (440, 440), "remap_file_pages": (216, 234), "memfd_create": (319, 279),
    "memfd_secret": (447, 447), "mmap": (9, 222), "prctl": (157, 167), "madvise": (28, 233),
    "landlock_create_ruleset": (444, 444), "landlock_add_rule": (445, 445), "landlock_restrict_self": (446, 446),
}
SYSCALL_NUMBERS = {machine: {name: numbers[i] for name, numbers in _NUMBERS.items()}
                   for i, machine in enumerate(("x86_64", "aarch64"))}
NAMESPACE_FLAGS = 0x10000000 | 0x20000 | 0x20000000 | 0x40000000 | 0x8000000 | 0x4000000 | 0x2000000  # CLONE_NEW*
MAP_SHARED, MAP_ANONYMOUS = 0x01, 0x20  # MAP_SHARED_VALIDATE (0x03) has MAP_SHARED's bit
PR_SET_THP_DISABLE = 41
MADV_COLLAPSE = 25
X32_SYSCALL_BIT = 0x40000000

# classic BPF
LD_W_ABS, JEQ_K, JGE_K, JSET_K, RET_K = 0x20, 0x15, 0x35, 0x45, 0x06
RET_ALLOW, RET_KILL_PROCESS = 0x7FFF0000, 0x80000000
RET_ERRNO = 0x00050000
PR_SET_SECCOMP, SECCOMP_MODE_FILTER = 22, 2
OFFSET_NR, OFFSET_ARCH = 0, 4


def _arg(index: int) -> int:
    """Where the low 32 bits of argument `index` lie in the kernel's seccomp_data (little-endian)."""
    return 16 + 8 * index


class _Filter(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]


Step = tuple  # ("ld", offset) | (jump, k, label if true, label if false) | ("ret", k) | ("label", name); None: next


def program(machine: str, denied_names: tuple[str, ...] = DENIED, unsupported: tuple[str, ...] = ("clone3",),
            sandbox: bool = True, shared_files: bool = False) -> list[tuple[int, int, int, int]]:
    """The filter for `machine` as (code, jt, jf, k) instructions: `denied_names` fail with EPERM, as does
    a clone with namespace flags; `unsupported` fail with ENOSYS (clone3 always among them: its flags are
    out of a filter's sight). A `sandbox`'s filter also refuses turning transparent huge pages back on or
    collapsing memory into them, and (without `shared_files`) memfds and shared mappings of files."""
    numbers = SYSCALL_NUMBERS[machine]
    denied = [*denied_names, *(SHARED_FILES if sandbox and not shared_files else ())]
    steps: list[Step] = [("ld", OFFSET_ARCH), ("jeq", AUDIT_ARCH[machine], None, "kill"), ("ld", OFFSET_NR)]
    if machine == "x86_64":
        steps.append(("jge", X32_SYSCALL_BIT, "eperm", None))
    steps += [("jeq", numbers[name], "eperm", None) for name in dict.fromkeys(denied)]
    steps += [("jeq", numbers[name], "enosys", None) for name in dict.fromkeys(("clone3", *unsupported))]
    by_argument: dict[str, list[Step]] = {"clone": [("ld", _arg(0)), ("jset", NAMESPACE_FLAGS, "eperm", "allow")]}
    if sandbox:
        by_argument["prctl"] = [("ld", _arg(0)), ("jeq", PR_SET_THP_DISABLE, "eperm", "allow")]
        by_argument["madvise"] = [("ld", _arg(2)), ("jeq", MADV_COLLAPSE, "eperm", "allow")]
        if not shared_files:  # shared and not anonymous: a file's or a memfd's pages
            by_argument["mmap"] = [("ld", _arg(3)), ("jset", MAP_SHARED, None, "allow"),
                                   ("jset", MAP_ANONYMOUS, "allow", "eperm")]
    steps += [("jeq", numbers[name], name, None) for name in by_argument]
    steps.append(("ret", RET_ALLOW))
    for name, block in by_argument.items():
        steps += [("label", name), *block]
    steps += [("label", "allow"), ("ret", RET_ALLOW), ("label", "eperm"), ("ret", RET_ERRNO | errno.EPERM),
              ("label", "enosys"), ("ret", RET_ERRNO | errno.ENOSYS), ("label", "kill"), ("ret", RET_KILL_PROCESS)]
    return _assemble(steps)


def _assemble(steps: list[Step]) -> list[tuple[int, int, int, int]]:
    """BPF instructions from `steps`, each jump's labels turned into counts of instructions to skip."""
    at: dict[str, int] = {}
    count = 0
    for step in steps:
        if step[0] == "label":
            at[step[1]] = count
        else:
            count += 1
    code: list[tuple[int, int, int, int]] = []
    for step in (s for s in steps if s[0] != "label"):
        here = len(code)
        skip = lambda label: 0 if label is None else at[label] - here - 1  # noqa: E731, B023 - used at once
        if step[0] == "ld":
            code.append((LD_W_ABS, 0, 0, step[1]))
        elif step[0] == "ret":
            code.append((RET_K, 0, 0, step[1]))
        else:
            op = {"jeq": JEQ_K, "jge": JGE_K, "jset": JSET_K}[step[0]]
            code.append((op, skip(step[2]), skip(step[3]), step[1]))
    return code


def install(**choices) -> list[Weakness]:
    """Install the filter (`program`'s `choices`) on this process, after no_new_privs; what could not
    be done, in words."""
    machine = os.uname().machine
    if machine not in SYSCALL_NUMBERS:
        return [Weakness(Gap.FILTER, f"no seccomp filter on {machine} (the kernel keyring stays a channel between sandboxes)")]
    instructions = program(machine, **choices)
    raw = b"".join(struct.pack("<HBBI", *ins) for ins in instructions)
    buffer = ctypes.create_string_buffer(raw)
    prog = _Filter(len(instructions), ctypes.cast(buffer, ctypes.c_void_p))
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, ctypes.byref(prog), 0, 0) != 0:
        return [Weakness(Gap.FILTER, "no seccomp filter (the kernel keyring stays a channel between sandboxes)")]
    return []
