"""The seccomp filter of a sandbox: the system calls a bot never needs, refused by the kernel.

:func:`program` assembles a classic BPF program (``struct sock_filter``: a u16
opcode, two u8 jump offsets, a u32 constant) for bubblewrap's ``--seccomp FD``,
in plain Python, no library needed. Inside the sandbox:

- a system call of another ABI than the machine's own (32-bit ``int 0x80`` on
  x86-64, the x32 ABI) kills the process: no program of the machine's kind
  makes one, and its numbers are another table's;
- what would leave or reshape the sandbox fails with ``EPERM``: new namespaces
  (``unshare``, ``setns``, ``clone`` with any ``CLONE_NEW*`` flag), mounts (the
  old and the new mount API, ``pivot_root``, ``chroot``), tracing and reading
  other processes (``ptrace``, ``process_vm_readv``/``writev``, ``kcmp``,
  ``pidfd_getfd``), the kernel's keyrings, ``bpf``, ``perf_event_open``,
  ``userfaultfd``, ``io_uring``, kernel modules, ``kexec``, ``reboot``, swap,
  ``syslog``, ``acct``, quotas, ``open_by_handle_at``, port I/O, and the
  ``ioctl``\\ s that type into a terminal (``TIOCSTI``, ``TIOCLINUX``);
- ``clone3`` fails with ``ENOSYS``: its flags are in memory, where a filter
  cannot look, so C libraries fall back to ``clone``, whose flags are checked.

Everything else is allowed. :func:`unsupported` says why no filter can be made
on this machine (a processor whose table is not here), if it cannot.
"""

from __future__ import annotations

import errno
import platform
import struct

# classic BPF opcodes (linux/filter.h)
_LD_ABS = 0x20  # BPF_LD | BPF_W | BPF_ABS
_JEQ = 0x15  # BPF_JMP | BPF_JEQ | BPF_K
_JGE = 0x35  # BPF_JMP | BPF_JGE | BPF_K
_JSET = 0x45  # BPF_JMP | BPF_JSET | BPF_K
_RET = 0x06  # BPF_RET | BPF_K

# seccomp (linux/seccomp.h)
RET_KILL_PROCESS = 0x80000000
RET_ERRNO = 0x00050000
RET_ALLOW = 0x7FFF0000

# struct seccomp_data: int nr; u32 arch; u64 instruction_pointer; u64 args[6] (little-endian: low half first)
_NR, _ARCH = 0, 4


def _arg_low(i: int) -> int:
    return 16 + 8 * i


X32_BIT = 0x40000000
CLONE_NEW = 0x00020000 | 0x02000000 | 0x04000000 | 0x08000000 | 0x10000000 | 0x20000000 | 0x40000000
"""CLONE_NEWNS, NEWCGROUP, NEWUTS, NEWIPC, NEWUSER, NEWPID, NEWNET (NEWTIME, 0x80, is clone3's and unshare's only)."""
TIOCSTI = 0x5412
TIOCLINUX = 0x541C

REFUSED = (
    *("unshare", "setns", "mount", "umount2", "pivot_root", "chroot"),
    *("fsopen", "fsconfig", "fsmount", "fspick", "move_mount", "open_tree", "mount_setattr"),
    *("ptrace", "process_vm_readv", "process_vm_writev", "kcmp", "pidfd_getfd"),
    *("keyctl", "add_key", "request_key", "bpf", "perf_event_open", "userfaultfd"),
    *("io_uring_setup", "io_uring_enter", "io_uring_register"),
    *("kexec_load", "kexec_file_load", "init_module", "finit_module", "delete_module", "reboot"),
    *("swapon", "swapoff", "syslog", "acct", "quotactl", "quotactl_fd", "open_by_handle_at", "iopl", "ioperm"),
)
"""Refused with EPERM (a name the machine's table lacks, e.g. ``iopl`` on arm64, is skipped)."""


class Table:
    """One processor's system call numbers and the audit arch that tags them."""

    def __init__(self, arch: int, numbers: dict[str, int], x32: bool = False) -> None:
        self.arch = arch
        self.numbers = numbers
        self.x32 = x32
        """Its numbers may carry the x32 bit (x86-64): refuse those."""


X86_64 = Table(
    0xC000003E,  # AUDIT_ARCH_X86_64
    {
        "ioctl": 16,
        "clone": 56,
        "ptrace": 101,
        "syslog": 103,
        "pivot_root": 155,
        "chroot": 161,
        "acct": 163,
        "mount": 165,
        "umount2": 166,
        "swapon": 167,
        "swapoff": 168,
        "reboot": 169,
        "iopl": 172,
        "ioperm": 173,
        "init_module": 175,
        "delete_module": 176,
        "quotactl": 179,
        "kexec_load": 246,
        "add_key": 248,
        "request_key": 249,
        "keyctl": 250,
        "unshare": 272,
        "perf_event_open": 298,
        "open_by_handle_at": 304,
        "setns": 308,
        "process_vm_readv": 310,
        "process_vm_writev": 311,
        "kcmp": 312,
        "finit_module": 313,
        "kexec_file_load": 320,
        "bpf": 321,
        "userfaultfd": 323,
        "io_uring_setup": 425,
        "io_uring_enter": 426,
        "io_uring_register": 427,
        "open_tree": 428,
        "move_mount": 429,
        "fsopen": 430,
        "fsconfig": 431,
        "fsmount": 432,
        "fspick": 433,
        "clone3": 435,
        "pidfd_getfd": 438,
        "mount_setattr": 442,
        "quotactl_fd": 443,
    },
    x32=True,
)

AARCH64 = Table(
    0xC00000B7,  # AUDIT_ARCH_AARCH64
    {
        "ioctl": 29,
        "umount2": 39,
        "mount": 40,
        "pivot_root": 41,
        "chroot": 51,
        "quotactl": 60,
        "acct": 89,
        "unshare": 97,
        "kexec_load": 104,
        "init_module": 105,
        "delete_module": 106,
        "syslog": 116,
        "ptrace": 117,
        "reboot": 142,
        "add_key": 217,
        "request_key": 218,
        "keyctl": 219,
        "clone": 220,
        "swapon": 224,
        "swapoff": 225,
        "perf_event_open": 241,
        "open_by_handle_at": 265,
        "setns": 268,
        "process_vm_readv": 270,
        "process_vm_writev": 271,
        "kcmp": 272,
        "finit_module": 273,
        "bpf": 280,
        "userfaultfd": 282,
        "kexec_file_load": 294,
        "io_uring_setup": 425,
        "io_uring_enter": 426,
        "io_uring_register": 427,
        "open_tree": 428,
        "move_mount": 429,
        "fsopen": 430,
        "fsconfig": 431,
        "fsmount": 432,
        "fspick": 433,
        "clone3": 435,
        "pidfd_getfd": 438,
        "mount_setattr": 442,
        "quotactl_fd": 443,
    },
)

TABLES = {"x86_64": X86_64, "aarch64": AARCH64}


def unsupported(machine: str | None = None) -> str | None:
    """Why no filter can be made for ``machine`` (this one by default), or None if one can."""
    machine = machine or platform.machine()
    if machine not in TABLES:
        return f"no seccomp filter is known for {machine} processors (only {', '.join(TABLES)})"
    return None


def program(machine: str | None = None) -> bytes:
    """The filter for ``machine`` (this one by default), as bubblewrap's ``--seccomp`` reads it."""
    machine = machine or platform.machine()
    if why := unsupported(machine):
        raise ValueError(why)
    return _assemble(_code(TABLES[machine]))


# An instruction before assembly: (opcode, label if true, label if false, k) for jumps, (opcode, k) otherwise.
_Insn = tuple[int, str, str, int] | tuple[int, int] | str


def _code(table: Table) -> list[_Insn]:
    """The program as instructions and labels (a label is a plain string; jumps name labels)."""
    nr = table.numbers
    code: list[_Insn] = [
        (_LD_ABS, _ARCH),
        (_JEQ, "", "kill", table.arch),  # "" is the next instruction
        (_LD_ABS, _NR),
    ]
    if table.x32:
        code.append((_JGE, "kill", "", X32_BIT))
    code += [(_JEQ, "eperm", "", nr[name]) for name in REFUSED if name in nr]
    code += [
        (_JEQ, "enosys", "", nr["clone3"]),
        (_JEQ, "clone", "", nr["clone"]),
        (_JEQ, "ioctl", "", nr["ioctl"]),
        (_RET, RET_ALLOW),
        "clone",
        (_LD_ABS, _arg_low(0)),
        (_JSET, "eperm", "", CLONE_NEW),
        (_RET, RET_ALLOW),
        "ioctl",
        (_LD_ABS, _arg_low(1)),
        (_JEQ, "eperm", "", TIOCSTI),
        (_JEQ, "eperm", "", TIOCLINUX),
        (_RET, RET_ALLOW),
        "kill",
        (_RET, RET_KILL_PROCESS),
        "eperm",
        (_RET, RET_ERRNO | errno.EPERM),
        "enosys",
        (_RET, RET_ERRNO | errno.ENOSYS),
    ]
    return code


def _assemble(code: list[_Insn]) -> bytes:
    """Resolve the labels (jumps only go forward, at most 255 instructions) and pack each instruction."""
    labels: dict[str, int] = {}
    insns: list[tuple[int, str, str, int] | tuple[int, int]] = []
    for item in code:
        if isinstance(item, str):
            labels[item] = len(insns)
        else:
            insns.append(item)
    out = bytearray()
    for at, insn in enumerate(insns):
        if len(insn) == 2:
            out += struct.pack("<HBBI", insn[0], 0, 0, insn[1])
            continue
        op, if_true, if_false, k = insn
        jumps = [labels[name] - at - 1 if name else 0 for name in (if_true, if_false)]
        if not all(0 <= j <= 255 for j in jumps):
            raise ValueError(f"instruction {at}: a jump of {jumps} cannot be encoded")
        out += struct.pack("<HBBI", op, jumps[0], jumps[1], k)
    return bytes(out)
