"""Continuous probes through the twin: every pair pinged at a fixed period while something happens.

``Prober(pairs, ns_of, period_ms).start()`` ... ``.stop()`` -> a ``ProbeResult``: per pair the echoes
sent, answered and lost, and the *loss intervals* (when a pair lost packets, how many, for how long),
in epoch seconds so they line up with the times of whatever was done meanwhile (a drain's steps, a
push). Used by `zcube twin test --drain` and by anything that must prove "0 packets lost while X".

Why not fping: one fping per source address (``-S``; a port's policy table is chosen by the source
address) is 2,048 processes at glm-1k. The prober is one child process (``python -m
zcube_deploy.twin.probe``, so it has a core of its own and never competes with the caller for the
GIL): one raw ICMP socket per source address, created inside that address's namespace and bound to
the address (the kernel then routes with the port's own table and delivers only that address's
replies to it), one ``epoll`` over all of them. The schedule spreads the pairs evenly over the
period (pair k of N is due at ``t0 + (round * N + k) * period / N``); the child sends whatever is due
every millisecond and records each echo's real send time, so a late send is measured, not assumed
(``max_lag_ms``: how far behind the schedule the child fell; a figure above the period means the
machine could not keep the rate, and the result says so).

An echo is answered when its reply (type 0, this prober's identifier, the pair's round in the
payload, from the pair's destination) arrives within ``timeout_ms``; a send the kernel refuses
(no route: the port's table ends in ``unreachable``) counts as sent and lost. A loss interval runs
from the send of its first lost echo to the send of the next answered one (or one period after its
last lost echo when none was answered after it).
"""

from __future__ import annotations

import json
import os
import secrets
import select
import socket
import struct
import subprocess
import sys
import time
from array import array
from dataclasses import asdict, dataclass

from zcube_deploy.twin.netns import InNamespace

TICK_S = 0.001  # the child sends what is due, then waits for replies, at most this long
NICE = -10
BATCH = 256
MAX_LATE = 100_000  # at most this many echoes sent before the replies are read
READY = "ready"


@dataclass(frozen=True)
class LossInterval:
    """Consecutive echoes of one pair without an answer: from ``start`` to ``end`` (epoch seconds)."""

    start: float
    end: float
    packets: int

    @property
    def ms(self) -> float:
        return round((self.end - self.start) * 1000, 1)


@dataclass(frozen=True)
class PairProbe:
    """One probed pair: echoes sent from ``src`` to ``dst``, how many were answered, its loss intervals."""

    src: str
    dst: str
    sent: int
    received: int
    intervals: tuple[LossInterval, ...] = ()

    @property
    def lost(self) -> int:
        return self.sent - self.received

    def lost_between(self, t0: float, t1: float) -> int:
        """Echoes lost in intervals that overlap [t0, t1) (whole intervals: they are counted where they start)."""
        return sum(i.packets for i in self.intervals if t0 <= i.start < t1)

    @property
    def back(self) -> bool:
        """The pair's last echo was answered (it works at the end, whatever it lost before)."""
        return self.sent > 0 and not self.lost_at_end

    lost_at_end: bool = False            # the last echo got no answer


@dataclass(frozen=True)
class ProbeResult:
    """What the prober measured between ``started`` and ``stopped`` (epoch seconds)."""

    period_ms: float
    timeout_ms: float
    started: float
    stopped: float
    max_lag_ms: float            # the latest any echo was sent after its scheduled time
    pairs: tuple[PairProbe, ...]
    late: tuple[tuple[float, float], ...] = ()   # (time, ms behind) of every send more than half a period late

    def max_lag_between(self, t0: float, t1: float) -> float:
        """How far behind its schedule the prober fell in [t0, t1) (ms; 0 when never more than half a period)."""
        return max((ms for t, ms in self.late if t0 <= t < t1), default=0.0)

    @property
    def sent(self) -> int:
        return sum(p.sent for p in self.pairs)

    @property
    def lost(self) -> int:
        return sum(p.lost for p in self.pairs)

    @property
    def kept_rate(self) -> bool:
        """The child sent every echo within one period of its schedule (the loss times are to +-1 period)."""
        return self.max_lag_ms <= self.period_ms

    def as_dict(self) -> dict:
        return {"period_ms": self.period_ms, "timeout_ms": self.timeout_ms, "started": self.started, "stopped": self.stopped,
                "max_lag_ms": self.max_lag_ms, "kept_rate": self.kept_rate, "pairs": len(self.pairs), "sent": self.sent,
                "lost": self.lost,
                "lossy_pairs": [{"src": p.src, "dst": p.dst, "sent": p.sent, "lost": p.lost,
                                 "intervals": [asdict(i) for i in p.intervals]} for p in self.pairs if p.lost]}


class ProbeError(RuntimeError):
    """The probe child failed (its error output is the message)."""


class Prober:
    """Continuous ICMP echoes between ``pairs`` of addresses, each sent from its source address's namespace.

    ``ns_of``: source address -> network namespace name (under /run/netns). Use as a context manager or
    ``start()`` / ``stop()``; ``stop`` waits ``timeout_ms`` for the last replies."""

    def __init__(self, pairs: list[tuple[str, str]], ns_of: dict[str, str], period_ms: float = 10.0, timeout_ms: float = 1000.0):
        if not pairs:
            raise ValueError("no pairs to probe")
        self.pairs = [(s, d) for s, d in pairs]
        self.ns_of = {s: ns_of[s] for s, _ in self.pairs}
        self.period_ms, self.timeout_ms = float(period_ms), float(timeout_ms)
        self.proc: subprocess.Popen | None = None
        self.started = 0.0

    def start(self) -> Prober:
        spec = {"pairs": self.pairs, "ns_of": self.ns_of, "period_ms": self.period_ms, "timeout_ms": self.timeout_ms}
        self.proc = subprocess.Popen([sys.executable, "-m", "zcube_deploy.twin.probe"], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        assert self.proc.stdin and self.proc.stdout
        self.proc.stdin.write(json.dumps(spec) + "\n")
        self.proc.stdin.flush()
        line = self.proc.stdout.readline().split()
        if not line or line[0] != READY:
            err = self.proc.stderr.read() if self.proc.stderr else ""
            self.proc.wait()
            raise ProbeError(f"the probe child did not start: {err.strip()[-800:]}")
        self.started = float(line[1])
        return self

    def stop(self) -> ProbeResult:
        """Stop sending, collect the last replies, return the result."""
        if not self.proc:
            raise ProbeError("the prober was not started")
        out, err = self.proc.communicate("stop\n", timeout=60 + self.timeout_ms / 1000)
        self.proc = None
        try:
            doc = json.loads(out)
        except ValueError:
            raise ProbeError(f"the probe child failed: {err.strip()[-800:]}") from None
        return _result(doc)

    def kill(self) -> None:
        if self.proc and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        self.proc = None

    def __enter__(self) -> Prober:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.kill()


def _result(doc: dict) -> ProbeResult:
    pairs = []
    for p in doc["pairs"]:
        pairs.append(PairProbe(p["src"], p["dst"], p["sent"], p["received"],
                               tuple(LossInterval(*i) for i in p["intervals"]), p["lost_at_end"]))
    return ProbeResult(doc["period_ms"], doc["timeout_ms"], doc["started"], doc["stopped"], doc["max_lag_ms"], tuple(pairs),
                       tuple(tuple(x) for x in doc["late"]))


# ------------------------------------------------------------------------ the child
ECHO = struct.Struct("!BBHHHII")  # type, code, checksum, identifier, sequence; payload: pair index, round
REPLY = struct.Struct("!HHII")      # identifier, sequence, pair index, round (after type, code, checksum)


def _echo(ident: int, k: int, r: int) -> bytes:
    """An echo request for pair ``k``, round ``r`` (the checksum summed directly: the header is 16 bytes)."""
    seq = r & 0xFFFF
    c = 0x0800 + ident + seq + (k >> 16) + (k & 0xFFFF) + (r >> 16) + (r & 0xFFFF)
    c = (c >> 16) + (c & 0xFFFF)
    c += c >> 16
    return ECHO.pack(8, 0, ~c & 0xFFFF, ident, seq, k, r)


def _open_sockets(ns_of: dict[str, str]) -> dict[str, socket.socket]:
    socks = {}
    for src, ns in sorted(ns_of.items(), key=lambda kv: kv[1]):
        with InNamespace(ns):
            s = socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ICMP)
        s.bind((src, 0))
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1 << 20)
        s.setblocking(False)
        socks[src] = s
    return socks


def _intervals(sent_at: array, got: bytearray, period: float) -> list[list]:
    """[start, end, packets] of each run of unanswered echoes (epoch seconds; see the module doc)."""
    out, run = [], None
    for r, ok in enumerate(got):
        if not ok:
            run = run or [r, 0]
            run[1] += 1
        elif run:
            out.append([sent_at[run[0]], sent_at[r], run[1]])
            run = None
    if run:
        last = run[0] + run[1] - 1
        out.append([sent_at[run[0]], sent_at[last] + period, run[1]])
    return out


def child(spec: dict, control) -> dict:
    """The probe loop (run in the child process): send what is due, read replies, stop on a line on ``control``."""
    pairs = [tuple(p) for p in spec["pairs"]]
    n, period, timeout = len(pairs), spec["period_ms"] / 1000, spec["timeout_ms"] / 1000
    socks = _open_sockets(spec["ns_of"])
    ident = secrets.randbelow(0xFFFF) + 1
    senders = [(socks[s].sendto, (d, 0)) for s, d in pairs]
    pair_of = {s.fileno(): (s.recvfrom, {}) for s in socks.values()}  # fd -> (recvfrom, reply source -> pair)
    for k, (src, dst) in enumerate(pairs):
        pair_of[socks[src].fileno()][1][dst] = k
    sent_at = [array("d") for _ in pairs]
    got = [bytearray() for _ in pairs]
    ep = select.epoll()
    for fd in pair_of:
        ep.register(fd, select.EPOLLIN)
    ctl = control.fileno()
    ep.register(ctl, select.EPOLLIN)
    slot = period / n
    t0 = time.time()
    print(READY, repr(t0), flush=True)
    next_slot, max_lag, stop_at, stopped = 0, 0.0, None, t0
    late: list[tuple[float, float]] = []  # (time, ms behind) of each batch sent more than half a period late

    def receive(fd: int, now: float) -> None:
        recv, kof = pair_of[fd]
        while True:
            try:
                data, addr = recv(256)
            except BlockingIOError:
                return
            ihl = (data[0] & 0x0F) * 4
            if len(data) < ihl + 16 or data[ihl] != 0:
                continue  # not an echo reply (an error from a router, an echo request)
            rid, _seq, k, r = REPLY.unpack_from(data, ihl + 4)
            if rid == ident and kof.get(addr[0]) == k and r < len(got[k]) and now - sent_at[k][r] <= timeout:
                got[k][r] = 1

    while True:
        now = time.time()
        if stop_at is None:
            due = min(int((now - t0) / slot) + 1, next_slot + BATCH)  # then read replies, even when behind
            if next_slot < due:
                lag = now - (t0 + next_slot * slot)
                max_lag = max(max_lag, lag)
                if lag > period / 2 and len(late) < MAX_LATE:
                    late.append((round(now, 4), round(lag * 1000, 1)))
            while next_slot < due:
                k, r = next_slot % n, next_slot // n
                sent_at[k].append(now)
                got[k].append(0)
                send, dest = senders[k]
                try:
                    send(_echo(ident, k, r), dest)
                except OSError:
                    pass  # no route (the port's table ends in `unreachable`), or the buffer is full: sent and lost
                next_slot += 1
        elif now >= stop_at:
            break
        behind = stop_at is None and next_slot < int((time.time() - t0) / slot) + 1
        for fd, _ev in ep.poll(0 if behind else TICK_S):
            if fd == ctl:
                control.readline()
                stopped, stop_at = time.time(), time.time() + timeout
                ep.unregister(fd)
            else:
                receive(fd, time.time())
    return {"period_ms": spec["period_ms"], "timeout_ms": spec["timeout_ms"], "started": t0, "stopped": stopped,
            "max_lag_ms": round(max_lag * 1000, 1), "late": late,
            "pairs": [{"src": s, "dst": d, "sent": len(got[k]), "received": sum(got[k]),
                       "lost_at_end": bool(got[k]) and not got[k][-1],
                       "intervals": _intervals(sent_at[k], got[k], period)} for k, (s, d) in enumerate(pairs)]}


def main() -> None:
    try:
        os.nice(NICE)  # root: ahead of the busy machine's other work, so that the schedule is kept
    except OSError:
        pass
    spec = json.loads(sys.stdin.readline())
    result = child(spec, sys.stdin)
    sys.stdout.write(json.dumps(result) + "\n")
    sys.stdout.flush()
    os._exit(0)


if __name__ == "__main__":
    main()
