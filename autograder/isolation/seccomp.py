"""A seccomp filter for sandboxes: the system calls a grader never needs fail with EPERM.

Among them the kernel keyring (`add_key`, `request_key`, `keyctl`): keyrings are not
namespaced, so a key written by one sandbox would outlive it and reach the next.
Also ptrace and reading other processes' memory, new namespaces (an unprivileged user
namespace would bring capabilities back), mounts, BPF, perf events, io_uring (whose
operations bypass seccomp), loading kernel modules and the like; System V shared memory,
semaphores and message queues (where there is no IPC namespace they are shared with the
whole machine); sockets of any family but AF_UNIX (where there is no network namespace);
and leaving the sandbox's process group (where there is no PID namespace, the grader ends a
sandbox by its process group). `clone3` fails with ENOSYS so that the C library falls back to
`clone`, whose flags the filter can see.
"""

from __future__ import annotations

import ctypes
import errno
import os
import struct

AUDIT_ARCH = {"x86_64": 0xC000003E, "aarch64": 0xC00000B7}
DENIED = ("add_key", "request_key", "keyctl", "ptrace", "process_vm_readv", "process_vm_writev", "perf_event_open",
          "bpf", "userfaultfd", "mount", "umount2", "pivot_root", "chroot", "unshare", "setns", "kexec_load",
          "kexec_file_load", "init_module", "finit_module", "delete_module", "swapon", "swapoff", "reboot", "acct",
          "quotactl", "name_to_handle_at", "open_by_handle_at", "open_tree", "move_mount", "fsopen", "fsconfig",
          "fsmount", "fspick", "mount_setattr", "io_uring_setup", "io_uring_enter", "io_uring_register",
          "shmget", "shmat", "shmctl", "shmdt", "semget", "semop", "semctl", "semtimedop", "msgget", "msgsnd",
          "msgrcv", "msgctl", "setsid", "setpgid")
# name: (x86_64, aarch64)
_NUMBERS = {
    "add_key": (248, 217), "request_key": (249, 218), "keyctl": (250, 219), "ptrace": (101, 117),
    "process_vm_readv": (310, 270), "process_vm_writev": (311, 271), "perf_event_open": (298, 241), "bpf": (321, 280),
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
    "msgrcv": (70, 188), "msgctl": (71, 187), "setsid": (112, 157), "setpgid": (109, 154), "socket": (41, 198),
    "landlock_create_ruleset": (444, 444), "landlock_add_rule": (445, 445), "landlock_restrict_self": (446, 446),
}
SYSCALL_NUMBERS = {machine: {name: numbers[i] for name, numbers in _NUMBERS.items()}
                   for i, machine in enumerate(("x86_64", "aarch64"))}
NAMESPACE_FLAGS = 0x10000000 | 0x20000 | 0x20000000 | 0x40000000 | 0x8000000 | 0x4000000 | 0x2000000  # CLONE_NEW*
AF_UNIX = 1
X32_SYSCALL_BIT = 0x40000000

# classic BPF
LD_W_ABS, JEQ_K, JGE_K, JSET_K, RET_K = 0x20, 0x15, 0x35, 0x45, 0x06
RET_ALLOW, RET_KILL_PROCESS = 0x7FFF0000, 0x80000000
RET_ERRNO = 0x00050000
PR_SET_SECCOMP, SECCOMP_MODE_FILTER = 22, 2
OFFSET_NR, OFFSET_ARCH, OFFSET_ARG0 = 0, 4, 16


class _Filter(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]


def program(machine: str, denied_names: tuple[str, ...] = DENIED, unsupported: tuple[str, ...] = ("clone3",),
            unix_only: bool = True) -> list[tuple[int, int, int, int]]:
    """The filter for `machine` as (code, jt, jf, k) instructions: `denied_names` fail with EPERM, as does
    a clone with namespace flags and (`unix_only`) a socket of another family than AF_UNIX;
    `unsupported` fail with ENOSYS (clone3 always among them: its flags are out of a filter's sight)."""
    numbers = SYSCALL_NUMBERS[machine]
    denied = [numbers[name] for name in denied_names]
    # ends: ALLOW, EPERM, ENOSYS, KILL; every jump counts instructions from the next one
    head: list[tuple] = [(LD_W_ABS, 0, 0, OFFSET_ARCH), ("arch",), (LD_W_ABS, 0, 0, OFFSET_NR)]
    if machine == "x86_64":
        head.append(("jge", X32_SYSCALL_BIT))
    head += [("deny", nr) for nr in denied]
    head += [("nosys", numbers[name]) for name in dict.fromkeys(("clone3", *unsupported))]
    head += [("socket", numbers["socket"])] if unix_only else []
    head += [("clone", numbers["clone"]),  # neither clone nor socket: allowed
             (LD_W_ABS, 0, 0, OFFSET_ARG0), ("flags",)]  # clone: no namespace flag
    socket_at = len(head)
    head += [(LD_W_ABS, 0, 0, OFFSET_ARG0), ("unix",)]  # socket: AF_UNIX only
    ends = [(RET_K, 0, 0, RET_ALLOW), (RET_K, 0, 0, RET_ERRNO | errno.EPERM), (RET_K, 0, 0, RET_ERRNO | errno.ENOSYS),
            (RET_K, 0, 0, RET_KILL_PROCESS)]
    allow, eperm, enosys, kill = (len(head) + i for i in range(4))
    code = []
    for i, op in enumerate(head):
        to = lambda target: target - i - 1  # noqa: E731, B023 - called within this iteration only
        if op[0] == "arch":
            code.append((JEQ_K, 0, to(kill), AUDIT_ARCH[machine]))
        elif op[0] == "jge":
            code.append((JGE_K, to(eperm), 0, op[1]))
        elif op[0] == "deny":
            code.append((JEQ_K, to(eperm), 0, op[1]))
        elif op[0] == "nosys":
            code.append((JEQ_K, to(enosys), 0, op[1]))
        elif op[0] == "socket":
            code.append((JEQ_K, to(socket_at), 0, op[1]))
        elif op[0] == "clone":
            code.append((JEQ_K, 0, to(allow), op[1]))  # not clone: allowed
        elif op[0] == "flags":
            code.append((JSET_K, to(eperm), to(allow), NAMESPACE_FLAGS))
        elif op[0] == "unix":
            code.append((JEQ_K, to(allow), to(eperm), AF_UNIX))
        else:
            code.append(op)
    return code + ends


def install(**choices) -> list[str]:
    """Install the filter (`program`'s `choices`) on this process, after no_new_privs; what could not
    be done, in words."""
    machine = os.uname().machine
    if machine not in SYSCALL_NUMBERS:
        return [f"no seccomp filter on {machine} (the kernel keyring stays a channel between sandboxes)"]
    instructions = program(machine, **choices)
    raw = b"".join(struct.pack("<HBBI", *ins) for ins in instructions)
    buffer = ctypes.create_string_buffer(raw)
    prog = _Filter(len(instructions), ctypes.cast(buffer, ctypes.c_void_p))
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, ctypes.byref(prog), 0, 0) != 0:
        return ["no seccomp filter (the kernel keyring stays a channel between sandboxes)"]
    return []
