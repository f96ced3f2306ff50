"""Isolate judged code by the operating system: the child cannot see, signal, trace or write to its judge.

A judge of untrusted code (IOI's ``isolate``, bubblewrap, nsjail) does not
trust a protocol to keep the judged code away from it: it asks the kernel.
``enter(...)`` is called by the child itself (``sandbox_child``,
``gpt.audit_child``) as its first act after reading its job, while only
specsim's own code has run in it, and on Linux it does this:

1. **Namespaces** (``unshare``): a new user namespace (the child is root
   *inside* it and nobody outside: no capability over anything of the
   judge's), and new mount, PID, network, IPC and UTS namespaces. The
   process forks once: the parent (the *holder*) only waits, and the child
   is PID 1 of the new PID namespace. From there the judge's process is not
   there to name: no ``kill``, no ``ptrace``, no ``/proc/<judge>``. When PID 1
   dies the kernel kills every process of the namespace, and PID 1 dies with
   the holder, which dies with the judge (``PR_SET_PDEATHSIG``): killing the
   judge, even with SIGKILL, ends the whole tree.
2. **Files**: every mount is made read-only, nosuid and nodev (recursively,
   ``mount_setattr``); a fresh ``/proc`` shows only the namespace (its
   ``/proc/sys`` and friends read-only); ``/dev`` is an empty read-only tmpfs
   (no terminal of the judge's, no disk) but for null, zero, full, random
   and urandom; the one writable place is a small private tmpfs at
   ``/dev/shm`` (``TMPDIR`` and the working directory point there) that
   vanishes with the namespace. ``/tmp`` stays where it is, read-only like
   everything else: the code and the interpreter may live there (a clone
   under /tmp), so it is not covered. The
   network namespace has no interface up: no network.
3. **No capabilities, no new processes**: the bounding and ambient sets are
   emptied, ``no_new_privs`` is set, and a seccomp filter refuses ``fork``,
   ``vfork``, ``clone`` without ``CLONE_THREAD`` (``clone3`` reads as absent,
   so threads fall back to ``clone``), ``ptrace``, ``process_vm_*``,
   ``unshare``, ``setns``, the mount calls, ``bpf``, ``perf_event_open``,
   ``keyctl``, ``userfaultfd`` and ``io_uring``. The judged code is one
   process (threads share its address space), so the address-space limit
   the child sets (``RLIMIT_AS``) is one memory limit for the whole tree and
   its process count is 1.

The judge, for its part (``judge_guard``), makes itself non-dumpable while a
child runs (``PR_SET_DUMPABLE`` 0): even a process of the same user outside
the namespaces could not ptrace it or open its ``/proc/<pid>/mem`` or ``fd``.
It checks the isolation itself (``verify``: the holder's namespaces differ
from its own), it does not take the child's word for it.

Where a step is impossible (not Linux, user namespaces disabled, a container
that forbids mounting ``proc``, an unknown CPU architecture for the filter),
``enter`` changes nothing and says why in one line (every step is tried
first in a throwaway fork, so a refusal at the last step leaves nothing
half done): the child runs as before
(the judge's protocol still bounds it) and the verdict says it was not
isolated; ``require=True`` refuses instead.

What an isolated verdict guarantees: the verdict is computed from the
child's answers alone, in a process the child cannot reach (no memory, no
signal, no descriptor, no file it reads later), within the judge's clocks
and limits, and nothing the child started outlives the check. What no
black-box check can guarantee: that code which behaves while judged behaves
the same elsewhere (it can detect the sandbox and answer honestly only
there). The judge asks every question twice, in another order and later,
so an answer that changes with order, count or time is caught; an answer
that depends on being judged is not.

Only the standard library is imported here: the child calls this before
anything else loads.
"""
from __future__ import annotations

import ctypes
import os
import platform
import struct
import sys

CLONE_THREAD = 0x00010000
CLONE_NEWNS, CLONE_NEWUTS, CLONE_NEWIPC = 0x00020000, 0x04000000, 0x08000000
CLONE_NEWUSER, CLONE_NEWPID, CLONE_NEWNET = 0x10000000, 0x20000000, 0x40000000
NAMESPACES = CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWNET | CLONE_NEWIPC | CLONE_NEWUTS
MS_NOSUID, MS_NODEV, MS_NOEXEC, MS_BIND, MS_REC, MS_PRIVATE = 2, 4, 8, 4096, 16384, 1 << 18
ATTR_RDONLY, ATTR_NOSUID, ATTR_NODEV, ATTR_NOEXEC = 1, 2, 4, 8
AT_FDCWD, AT_RECURSIVE = -100, 0x8000
SYS_OPEN_TREE, SYS_MOVE_MOUNT, SYS_MOUNT_SETATTR = 428, 429, 442  # one number on x86_64 and aarch64 alike
OPEN_TREE_CLONE, OPEN_TREE_CLOEXEC, MOVE_MOUNT_F_EMPTY_PATH = 1, 0o2000000, 4
DEVICES = ("null", "zero", "full", "random", "urandom")  # the only device nodes the child sees
PR_SET_PDEATHSIG, PR_SET_DUMPABLE, PR_GET_DUMPABLE = 1, 4, 3
PR_SET_SECCOMP, PR_CAPBSET_DROP, PR_SET_SECUREBITS, PR_SET_NO_NEW_PRIVS, PR_CAP_AMBIENT = 22, 24, 28, 38, 47
SECBITS = 0b11100011  # NOROOT + locked, KEEP_CAPS locked, NO_CAP_AMBIENT_RAISE + locked
TMP_SIZE = "16m"  # the private /dev/shm: memory outside the address-space limit, so small
PRIVATE = "/dev/shm"  # the one writable folder ($TMPDIR, the working directory)
WHAT = ("own user, PID, mount, network and IPC namespaces; read-only files but a private temporary folder; "
        "no capabilities; no new processes")

# -- the seccomp filter -------------------------------------------------------------------
AUDIT_ARCH = {"x86_64": 0xC000003E, "aarch64": 0xC00000B7}
SYSCALLS = {  # refused with EPERM; "clone" is refused unless it makes a thread, "clone3" reads as ENOSYS
    "x86_64": {"fork": 57, "vfork": 58, "clone": 56, "clone3": 435, "ptrace": 101, "process_vm_readv": 310,
               "process_vm_writev": 311, "unshare": 272, "setns": 308, "mount": 165, "umount2": 166,
               "pivot_root": 155, "kexec_load": 246, "bpf": 321, "perf_event_open": 298, "keyctl": 250,
               "add_key": 248, "request_key": 249, "userfaultfd": 323, "io_uring_setup": 425,
               "open_tree": 428, "move_mount": 429, "fsopen": 430, "fsconfig": 431, "fsmount": 432,
               "fspick": 433, "mount_setattr": 442},
    "aarch64": {"clone": 220, "clone3": 435, "ptrace": 117, "process_vm_readv": 270, "process_vm_writev": 271,
                "unshare": 97, "setns": 268, "mount": 40, "umount2": 39, "pivot_root": 41, "kexec_load": 104,
                "bpf": 280, "perf_event_open": 241, "keyctl": 219, "add_key": 217, "request_key": 218,
                "userfaultfd": 282, "io_uring_setup": 425, "open_tree": 428, "move_mount": 429, "fsopen": 430,
                "fsconfig": 431, "fsmount": 432, "fspick": 433, "mount_setattr": 442},
}
EPERM, ENOSYS = 1, 38
RET_ALLOW, RET_ERRNO, RET_KILL = 0x7FFF0000, 0x00050000, 0x80000000
LD_W_ABS, JEQ, JGE, JSET, RET = 0x20, 0x15, 0x35, 0x45, 0x06


class IsolationError(RuntimeError):
    """A step of the isolation failed; the message says which, in one line."""


def _op(code: int, k: int, jt: int = 0, jf: int = 0) -> bytes:
    return struct.pack("HBBI", code, jt, jf, k)


def seccomp_program(machine: str) -> bytes:
    """The filter as classic BPF for ``machine`` (``platform.machine()``): see the module docstring.

    >>> len(seccomp_program("x86_64")) % 8, len(seccomp_program("aarch64")) > 0
    (0, True)
    """
    calls = SYSCALLS[machine]
    prog = [_op(LD_W_ABS, 4), _op(JEQ, AUDIT_ARCH[machine], 1, 0), _op(RET, RET_KILL),  # another ABI: kill
            _op(LD_W_ABS, 0)]
    if machine == "x86_64":  # the x32 ABI's numbers: refused
        prog += [_op(JGE, 0x40000000, 0, 1), _op(RET, RET_ERRNO | EPERM)]
    for name, nr in calls.items():
        if name in ("clone", "clone3"):
            continue
        prog += [_op(JEQ, nr, 0, 1), _op(RET, RET_ERRNO | EPERM)]
    prog += [_op(JEQ, calls["clone3"], 0, 1), _op(RET, RET_ERRNO | ENOSYS),
             _op(JEQ, calls["clone"], 0, 4), _op(LD_W_ABS, 16),  # clone's flags (low word of args[0])
             _op(JSET, CLONE_THREAD, 0, 1), _op(RET, RET_ALLOW), _op(RET, RET_ERRNO | EPERM),
             _op(RET, RET_ALLOW)]
    return b"".join(prog)


# -- system calls -------------------------------------------------------------------------
_libc = None


def _c():
    global _libc
    if _libc is None:
        _libc = ctypes.CDLL(None, use_errno=True)
    return _libc


def _check(result: int, what: str) -> int:
    if result < 0:
        err = ctypes.get_errno()
        raise IsolationError(f"{what} failed: {os.strerror(err)}")
    return result


def prctl(option: int, a: int = 0, b: int = 0, c: int = 0, d: int = 0) -> int:
    return _c().prctl(ctypes.c_int(option), ctypes.c_ulong(a), ctypes.c_ulong(b), ctypes.c_ulong(c),
                      ctypes.c_ulong(d))


def _mount(source, target: str, fstype, flags: int, data=None) -> None:
    enc = (lambda s: None if s is None else s.encode())
    _check(_c().mount(enc(source), enc(target), enc(fstype), ctypes.c_ulong(flags), enc(data)),
           f"mount {target}")


def _setattr(path: str, attr_set: int, recursive: bool) -> None:
    attr = struct.pack("QQQQ", attr_set, 0, 0, 0)
    buf = ctypes.create_string_buffer(attr, len(attr))
    _check(_c().syscall(ctypes.c_long(SYS_MOUNT_SETATTR), ctypes.c_int(AT_FDCWD), path.encode(),
                        ctypes.c_uint(AT_RECURSIVE if recursive else 0), buf, ctypes.c_size_t(len(attr))),
           f"making {path} read-only")


def _write(path: str, text: str) -> None:
    fd = os.open(path, os.O_WRONLY)
    try:
        os.write(fd, text.encode())
    finally:
        os.close(fd)


# -- the child's steps ----------------------------------------------------------------------
def why_not() -> str | None:
    """Why this machine cannot isolate (one line), or None when it can try. ``SPECSIM_ISOLATION=off`` in
    the environment turns isolation off (to see the unisolated path, or on a system that misbehaves)."""
    if os.environ.get("SPECSIM_ISOLATION", "").lower() == "off":
        return "turned off by SPECSIM_ISOLATION=off"
    if not sys.platform.startswith("linux"):
        return f"isolation needs Linux namespaces; this is {sys.platform}"
    if platform.machine() not in SYSCALLS:
        return f"no process filter for the {platform.machine()} architecture"
    try:
        with open("/proc/sys/user/max_user_namespaces") as f:
            if int(f.read()) == 0:
                return "user namespaces are disabled on this machine (user.max_user_namespaces is 0)"
    except (OSError, ValueError):
        pass
    return None


def _namespaces() -> None:
    uid, gid = os.geteuid(), os.getegid()
    _check(_c().unshare(ctypes.c_int(NAMESPACES)), "unshare (user namespaces may be disabled here)")
    _write("/proc/self/setgroups", "deny")
    _write("/proc/self/uid_map", f"0 {uid} 1")
    _write("/proc/self/gid_map", f"0 {gid} 1")


def _hold(child: int, alive: int) -> None:
    """The holder: wait for PID 1 of the namespace and end with its status; never returns. It keeps only
    ``alive`` open (PID 1 reads end-of-file there once the holder is gone)."""
    os.closerange(0, alive)
    os.closerange(alive + 1, 65536)
    while True:
        try:
            _, status = os.waitpid(child, 0)
            break
        except InterruptedError:
            continue
        except ChildProcessError:
            os._exit(1)
    os._exit(os.waitstatus_to_exitcode(status) & 0xFF if os.WIFEXITED(status) else 128 + os.WTERMSIG(status))


def _clone(path: str) -> int:
    """A detached copy of the mount at ``path`` (a bind of that one file), as a descriptor."""
    return _check(_c().syscall(ctypes.c_long(SYS_OPEN_TREE), ctypes.c_int(AT_FDCWD), path.encode(),
                               ctypes.c_uint(OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC)), f"copying {path}")


def _attach(fd: int, path: str) -> None:
    _check(_c().syscall(ctypes.c_long(SYS_MOVE_MOUNT), ctypes.c_int(fd), b"", ctypes.c_int(AT_FDCWD),
                        path.encode(), ctypes.c_uint(MOVE_MOUNT_F_EMPTY_PATH)), f"mounting {path}")
    os.close(fd)


def _files() -> None:
    _mount(None, "/", None, MS_REC | MS_PRIVATE)  # nothing done here reaches the judge's mounts
    devices = {name: _clone(f"/dev/{name}") for name in DEVICES if os.path.exists(f"/dev/{name}")}
    _setattr("/", ATTR_RDONLY | ATTR_NOSUID | ATTR_NODEV, recursive=True)
    _mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC)  # this PID namespace only
    for sub in ("sys", "sysrq-trigger", "irq", "bus", "fs"):
        path = f"/proc/{sub}"
        if os.path.exists(path):
            _mount(path, path, None, MS_BIND | MS_REC)
            _setattr(path, ATTR_RDONLY | ATTR_NOSUID | ATTR_NODEV | ATTR_NOEXEC, recursive=True)
    _mount("tmpfs", "/dev", "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC, "size=64k,mode=755")
    os.mkdir(PRIVATE, 0o1777)
    for name, fd in devices.items():
        os.close(os.open(f"/dev/{name}", os.O_CREAT | os.O_WRONLY, 0o666))
        _attach(fd, f"/dev/{name}")
    _setattr("/dev", ATTR_RDONLY | ATTR_NOSUID | ATTR_NODEV | ATTR_NOEXEC, recursive=False)
    _mount("tmpfs", PRIVATE, "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC, f"size={TMP_SIZE},mode=1777")
    os.environ["TMPDIR"] = PRIVATE
    os.chdir(PRIVATE)


def _drop_capabilities() -> None:
    _check(prctl(PR_SET_NO_NEW_PRIVS, 1), "no_new_privs")
    _check(prctl(PR_SET_SECUREBITS, SECBITS), "securebits")
    cap = 0
    while prctl(PR_CAPBSET_DROP, cap) == 0:  # EINVAL past the last capability this kernel knows
        cap += 1
    prctl(PR_CAP_AMBIENT, 4)  # PR_CAP_AMBIENT_CLEAR_ALL
    header = ctypes.create_string_buffer(struct.pack("Ii", 0x20080522, 0), 8)  # _LINUX_CAPABILITY_VERSION_3
    data = ctypes.create_string_buffer(bytes(24), 24)  # effective, permitted, inheritable = 0, twice
    _check(_c().capset(header, data), "dropping capabilities")


def _filter() -> None:
    program = seccomp_program(platform.machine())
    filters = ctypes.create_string_buffer(program, len(program))
    fprog = ctypes.create_string_buffer(struct.pack("HxxxxxxQ", len(program) // 8, ctypes.addressof(filters)), 16)
    _check(prctl(PR_SET_SECCOMP, 2, ctypes.addressof(fprog)), "installing the process filter (seccomp)")


def enter(require: bool = False) -> dict:
    """Isolate this process (see the module docstring); {"isolated": bool, "why": one line or ""}.

    Call it as the first act of a child, single-threaded, before any judged code loads. In the
    isolated case the caller continues as PID 1 of the new namespaces (the original process stays
    behind as the holder and never returns here). ``require``: a machine that cannot isolate raises
    IsolationError instead of returning {"isolated": False}. Every path stays visible where it is,
    read-only: the judged file and the checkpoints need nothing carried in.
    """
    why = why_not() or _trial()
    if why is None:
        try:
            _namespaces()
        except (IsolationError, OSError) as e:
            why = str(e).splitlines()[0][:200]
    if why is not None:
        if require:
            raise IsolationError(why)
        return {"isolated": False, "why": why}
    alive_r, alive_w = os.pipe()
    pid = os.fork()
    if pid:
        os.close(alive_r)
        _hold(pid, alive_w)
    os.close(alive_w)
    prctl(PR_SET_PDEATHSIG, 9)  # PID 1 dies with the holder (and so with the judge) ...
    os.set_blocking(alive_r, False)
    try:
        gone = os.read(alive_r, 1) == b""  # ... or the holder died before that line: end now
    except BlockingIOError:
        gone = False
    os.close(alive_r)
    if gone:
        os._exit(1)
    os.setsid()
    try:
        _inside()
    except (IsolationError, OSError) as e:  # half isolated is not isolated: end, and say why
        raise IsolationError(f"isolating the child failed: {str(e).splitlines()[0][:200]}") from None
    return {"isolated": True, "why": ""}


def _inside() -> None:
    """The steps PID 1 takes in its new namespaces."""
    _files()
    _drop_capabilities()
    _filter()


def _trial() -> str | None:
    """Every step tried first in a throwaway copy of this process (a fork, then a fork inside the new
    namespaces), so that a kernel that allows some steps and refuses a later one (a container, a security
    module restricting user namespaces) leaves this process untouched to run unisolated. None when every
    step worked, else the first failure in one line."""
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(read)
        try:
            _namespaces()
            inner = os.fork()
            if inner == 0:
                try:
                    _inside()
                    os._exit(0)
                except BaseException as e:  # noqa: BLE001 (any failure is the answer)
                    os.write(write, str(e).splitlines()[0][:200].encode() if str(e) else b"failed")
                    os._exit(1)
            _, status = os.waitpid(inner, 0)
            os._exit(0 if status == 0 else 1)
        except BaseException as e:  # noqa: BLE001
            os.write(write, str(e).splitlines()[0][:200].encode() if str(e) else b"failed")
            os._exit(1)
    os.close(write)
    chunks = []
    while True:
        chunk = os.read(read, 4096)
        if not chunk:
            break
        chunks.append(chunk)
    os.close(read)
    _, status = os.waitpid(pid, 0)
    if status == 0:
        return None
    return b"".join(chunks).decode(errors="replace") or "the isolation's trial run failed"


# -- the judge's side -----------------------------------------------------------------------
class judge_guard:
    """``with judge_guard():`` the judge is non-dumpable (no ptrace, no /proc/<pid>/mem or fd for anyone
    without CAP_SYS_PTRACE over it), and dumpable again after."""

    def __enter__(self):
        self.old = prctl(PR_GET_DUMPABLE) if sys.platform.startswith("linux") else None
        if self.old is not None:
            prctl(PR_SET_DUMPABLE, 0)
        return self

    def __exit__(self, *exc):
        if self.old is not None and self.old > 0:
            prctl(PR_SET_DUMPABLE, self.old)


def _ns(pid, name: str) -> str | None:
    try:
        return os.readlink(f"/proc/{pid}/ns/{name}")
    except OSError:
        return None


def verify(holder_pid: int) -> bool:
    """The judge's own check that the child it started is isolated: the holder's user, mount, network
    and IPC namespaces and the PID namespace of its children all differ from the judge's."""
    names = ("user", "mnt", "net", "ipc")
    mine = [_ns("self", n) for n in names] + [_ns("self", "pid")]
    theirs = [_ns(holder_pid, n) for n in names] + [_ns(holder_pid, "pid_for_children")]
    return None not in theirs and None not in mine and all(a != b for a, b in zip(mine, theirs))


def describe(isolated: bool, why: str = "") -> str:
    """One line for a report: what the verdict is worth."""
    if isolated:
        return f"isolated: the judged code ran in its {WHAT}"
    return (f"NOT isolated ({why}): the judged code ran with your permissions, bounded only by the judge's "
            "clocks and limits; --require-isolation refuses instead")
