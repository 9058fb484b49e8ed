"""Side effects on the machine: namespaces, veths, ``ip -batch`` inside namespaces, sysctls.

Facts from shared/docs/twin.md: ``ip -batch`` leaks a file descriptor per ``netns NAME`` (chunks
of <= 4,000 lines); ``nsenter --net`` is much faster than ``ip -n`` at scale; per-namespace
sysctls are written from Python after ``setns`` (Python 3.11 has no ``os.setns``).
"""

from __future__ import annotations

import ctypes
import os
import shutil
import subprocess
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from zcube_deploy.errors import ZCubeError

CHUNK = 4000
CLONE_NEWNET = 0x40000000
NETNS_DIR = Path("/run/netns")
ARP_GC = {"net.ipv4.neigh.default.gc_thresh1": "8192", "net.ipv4.neigh.default.gc_thresh2": "32768",
          "net.ipv4.neigh.default.gc_thresh3": "65536"}

_libc = ctypes.CDLL(None, use_errno=True)


class TwinSystemError(ZCubeError):
    """A command on the machine failed (carries the command's error output)."""


def batch(lines: list[str], netns: str | None = None, force: bool = False) -> None:
    """Run ``ip -batch`` over ``lines`` (in chunks), inside ``netns`` when given."""
    prefix = ["nsenter", f"--net={NETNS_DIR / netns}"] if netns else []
    for k in range(0, len(lines), CHUNK):
        chunk = lines[k:k + CHUNK]
        cmd = [*prefix, "ip", *(["-force"] if force else []), "-batch", "-"]
        p = subprocess.run(cmd, input="\n".join(chunk) + "\n", capture_output=True, text=True)
        if p.returncode and not force:
            raise TwinSystemError(f"ip -batch{' in ' + netns if netns else ''} failed: {p.stderr.strip()[:800]}")


def batches(per_ns: dict[str, list[str]], jobs: int = 4) -> None:
    """Run one ``ip -batch`` per namespace, a few in parallel."""
    with ThreadPoolExecutor(max_workers=jobs) as pool:
        for f in [pool.submit(batch, lines, ns) for ns, lines in per_ns.items() if lines]:
            f.result()


def sysctl_path(key: str, root: str = "/proc/sys") -> Path:
    return Path(root, *key.split("."))


def read_sysctl(key: str) -> str:
    return sysctl_path(key).read_text().strip()


def write_sysctl(key: str, value: str) -> None:
    sysctl_path(key).write_text(f"{value}\n")


class InNamespace:
    """Context manager: the calling thread enters network namespace ``name`` and returns afterwards."""

    def __init__(self, name: str):
        self.name = name

    def __enter__(self):
        self._home = os.open("/proc/self/ns/net", os.O_RDONLY)
        fd = os.open(NETNS_DIR / self.name, os.O_RDONLY)
        try:
            if _libc.setns(fd, CLONE_NEWNET) != 0:
                raise TwinSystemError(f"setns({self.name}) failed: {os.strerror(ctypes.get_errno())}")
        finally:
            os.close(fd)
        return self

    def __exit__(self, *exc):
        try:
            if _libc.setns(self._home, CLONE_NEWNET) != 0:
                raise TwinSystemError(f"cannot return to the initial namespace: {os.strerror(ctypes.get_errno())}")
        finally:
            os.close(self._home)


def set_sysctls(netns: str, settings: list[tuple[str, str]], strict: bool = True) -> list[str]:
    """Write sysctls inside ``netns``; returns the keys that do not exist there (skipped when not strict)."""
    absent = []
    with InNamespace(netns):
        for key, value in settings:
            path = sysctl_path(key)
            if not path.exists():
                absent.append(key)
                continue
            path.write_text(f"{value}\n")
    if strict and absent:
        raise TwinSystemError(f"{netns}: no such sysctl: {', '.join(absent[:5])}")
    return absent


def existing_namespaces() -> list[str]:
    return sorted(p.name for p in NETNS_DIR.iterdir()) if NETNS_DIR.is_dir() else []


def missing_support() -> str | None:
    """None when this machine can build a twin, else what is missing and how to get it."""
    if os.geteuid() != 0:
        return "the twin needs root (network namespaces, veths, FRR): run 'sudo zcube twin ...'"
    for tool, pkg in (("ip", "iproute2"), ("nsenter", "util-linux"), ("fping", "fping"), ("nft", "nftables")):
        if not shutil.which(tool):
            return f"'{tool}' is missing: install it with 'apt-get install -y {pkg}'"
    if not Path("/proc/self/ns/net").exists():
        return "this kernel has no network namespaces (CONFIG_NET_NS): the twin needs a kernel with them"
    probe = f"zcube-probe-{os.getpid()}"
    p = subprocess.run(["ip", "netns", "add", probe], capture_output=True, text=True)
    if p.returncode:
        return f"cannot create a network namespace here ({p.stderr.strip()}): run on a machine or container with CAP_SYS_ADMIN"
    try:
        q = subprocess.run(["ip", "-n", probe, "link", "add", "zcp0", "type", "veth", "peer", "name", "zcp1"],
                           capture_output=True, text=True)
        if q.returncode:
            return f"cannot create veth pairs ({q.stderr.strip()}): the kernel needs CONFIG_VETH"
    finally:
        subprocess.run(["ip", "netns", "del", probe], capture_output=True)
    return None
