"""The packet link's two network namespaces and their TUN devices (Linux, root).

The forwarder creates both namespaces itself with ``unshare(CLONE_NEWNET)``: they have no
name in ``/run/netns`` and exist only while a process (the forwarder, or a server or client
started inside them) or an open handle refers to them. The TUN devices are not persistent:
they go with the forwarder's file descriptors. So a run that dies in any way, even by
SIGKILL (every child gets PR_SET_PDEATHSIG), leaves no namespace, device or route behind.

Each namespace holds only ``lo`` and one TUN device with a /32 address and its peer's
address as a point-to-point route: nothing can reach the host's interfaces.
"""

from __future__ import annotations

import ctypes
import fcntl
import os
import stat
import struct
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from kit.errors import TopologyError, UsageError

CLONE_NEWNET = 0x40000000
TUNSETIFF = 0x400454CA
IFF_TUN = 0x0001
IFF_NO_PI = 0x1000
DEVICE = "kit0"
# The namespace handles are kept at these descriptors, so the kit can start processes in
# them with ``nsenter --net=/proc/<forwarder pid>/fd/<fd>``.
CLIENT_NS_FD = 200
SERVER_NS_FD = 201


@dataclass(frozen=True)
class Side:
    """One namespace: its handle (an fd) and the TUN device's fd in it."""

    ns_fd: int
    tun_fd: int


CLONE_NEWUSER = 0x10000000
TUN_PATH = "/dev/net/tun"
NEEDS = "the packet link needs root (CAP_NET_ADMIN), or user namespaces"


def in_user_namespace() -> bool:
    """Whether the packet link runs in a user namespace of its own: when the kit is not
    root, the forwarder creates one (this user is root in it, nowhere else) and owns the
    network namespaces it creates there."""
    return os.geteuid() != 0


def missing() -> str | None:
    """What is missing for the packet link here (one line), or None when it can run."""
    if not os.path.exists(TUN_PATH):
        return "the packet link needs /dev/net/tun (the TUN driver)"
    if not in_user_namespace():
        return None
    if not os.access(TUN_PATH, os.R_OK | os.W_OK):
        mode = stat.filemode(os.stat(TUN_PATH).st_mode)
        return f"{NEEDS} and {TUN_PATH} open to this user (it is {mode}, root's, here)"
    probe = subprocess.run(
        ["unshare", "--user", "--map-root-user", "--net", "true"],
        capture_output=True,
        text=True,
        check=False,
    )
    if probe.returncode != 0:
        why = probe.stderr.strip().splitlines()[-1:] or ["refused"]
        return f"{NEEDS}, which this system refuses to this user ({why[0]})"
    return None


def enter_user_namespace() -> None:
    """Move this (single-threaded) process into a new user namespace where its user is
    root, so it may create network namespaces and TUN devices there."""
    uid, gid = os.geteuid(), os.getegid()
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.unshare(CLONE_NEWUSER) != 0:
        err = ctypes.get_errno()
        raise TopologyError(f"cannot create a user namespace: {os.strerror(err)}")
    for name, text in (("setgroups", "deny"), ("uid_map", f"0 {uid} 1"), ("gid_map", f"0 {gid} 1")):
        with open(f"/proc/self/{name}", "w", encoding="ascii") as f:
            f.write(text)


def _unshare_net() -> None:
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.unshare(CLONE_NEWNET) != 0:
        err = ctypes.get_errno()
        raise TopologyError(f"cannot create a network namespace: {os.strerror(err)}")


def _ip(*args: str) -> None:
    done = subprocess.run(["ip", *args], capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise TopologyError(f"ip {' '.join(args)}: {done.stderr.strip()}")


def _open_tun() -> int:
    fd = os.open("/dev/net/tun", os.O_RDWR | os.O_NONBLOCK | os.O_CLOEXEC)
    fcntl.ioctl(fd, TUNSETIFF, struct.pack("16sH", DEVICE.encode(), IFF_TUN | IFF_NO_PI))
    return fd


def _set_congestion(name: str) -> None:
    """The namespace's default congestion control (a per-namespace sysctl)."""
    try:
        with open("/proc/sys/net/ipv4/tcp_congestion_control", "w", encoding="ascii") as f:
            f.write(name)
    except OSError:
        with open("/proc/sys/net/ipv4/tcp_available_congestion_control", encoding="ascii") as f:
            known = f.read().strip()
        raise UsageError(
            f"--cc: {name!r} is not available here (this kernel has: {known})"
        ) from None


# The TUN device's own ring (its txqueuelen, in packets) lies before the forwarder reads a
# packet, so before the link's schedule sees it: a packet dropped there would be a loss the
# link never set (tun drops when the ring is full and does not push back on the sender, as
# it frees each packet from its socket's accounting). Sized for 32 MiB of packets, more
# than any sender's burst of a window (Linux's default of 500 dropped hundreds of packets
# of a 4 MiB window's slow start here).
DEVICE_QUEUE_BYTES = 32 * 1024 * 1024


def device_queue_packets(mtu: int) -> int:
    return max(1000, DEVICE_QUEUE_BYTES // mtu)


def new_side(addr: str, peer: str, mtu: int, keep_at: int, congestion: str = "") -> Side:
    """A new namespace (this process moves into it) with ``lo`` and the TUN device up."""
    _unshare_net()
    if congestion:
        _set_congestion(congestion)
    ns_fd = os.open("/proc/self/ns/net", os.O_RDONLY)
    os.dup2(ns_fd, keep_at, inheritable=False)
    os.close(ns_fd)
    tun_fd = _open_tun()
    _ip("link", "set", "lo", "up")
    _ip("addr", "add", addr, "peer", peer, "dev", DEVICE)
    queue = str(device_queue_packets(mtu))
    _ip("link", "set", DEVICE, "mtu", str(mtu), "txqueuelen", queue, "up")
    return Side(keep_at, tun_fd)


def _setns(fd: int) -> None:
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.setns(fd, CLONE_NEWNET) != 0:
        err = ctypes.get_errno()
        raise TopologyError(f"cannot enter a network namespace: {os.strerror(err)}")


@contextmanager
def inside(ns_fd: int) -> Iterator[None]:
    """The calling thread inside the namespace whose handle is ``ns_fd``, back in its own
    afterwards (sockets and files opened meanwhile stay in that namespace)."""
    home = os.open("/proc/thread-self/ns/net", os.O_RDONLY)
    try:
        _setns(ns_fd)
        try:
            yield
        finally:
            _setns(home)
    finally:
        os.close(home)


def device_drops(ns_fd: int) -> int:
    """Packets the namespace's TUN device dropped before the forwarder read them (its tx
    drops in ``/proc/net/dev``): 0 unless its ring overflowed."""
    with inside(ns_fd), open("/proc/thread-self/net/dev", encoding="ascii") as f:
        lines = f.read().splitlines()
    for line in lines:
        name, _, counters = line.partition(":")
        if name.strip() == DEVICE:
            return int(counters.split()[11])  # rx: 8 fields; tx: bytes packets errs drop
    return 0


def nsenter_prefix(forwarder_pid: int, ns_fd: int) -> tuple[str, ...]:
    """The argv prefix that starts a program inside one of the forwarder's namespaces (and
    its user namespace, when it has one of its own)."""
    net = f"--net=/proc/{forwarder_pid}/fd/{ns_fd}"
    if not in_user_namespace():
        return ("nsenter", net, "--")
    user = f"--user=/proc/{forwarder_pid}/ns/user"
    return ("nsenter", user, "--preserve-credentials", net, "--")
