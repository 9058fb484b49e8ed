"""Real packets inside the twin: fping for reachability and hop counts, ``ping -D`` for outages.

Every command runs inside a server namespace (``nsenter --net``); nothing is sent from the
machine's own namespace. Path length is proved by TTL: a request sent with TTL 3 reaches a port two
switches away (each switch decrements it once, the host accepts TTL 1) and one sent with TTL 2
is answered by the second switch with "time exceeded" instead: both together mean exactly two
switches on the request path.
"""

from __future__ import annotations

import re
import signal
import subprocess
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

from zcube_deploy.twin.netns import NETNS_DIR

FPING_LINE = re.compile(r"^(\S+)\s*:\s*xmt/rcv/%loss = (\d+)/(\d+)/")
PING_REPLY = re.compile(r"^\[(\d+\.\d+)\] \S+ : \[(\d+)\], \d+ bytes")
PING_SENT = re.compile(r"^\S+ : xmt/rcv/%loss = (\d+)/(\d+)/")
PROBE_PERIOD_MS = 10  # fping's shortest period per target: the outage is measured to +-10 ms
JOBS = 8


def _fping(ns: str, src: str, targets: list[str], ttl: int | None, timeout_ms: int) -> dict[str, bool]:
    cmd = ["nsenter", f"--net={NETNS_DIR / ns}", "fping", "-q", "-c1", f"-t{timeout_ms}", "-i0", "-p20", "-S", src]
    if ttl:
        cmd += ["-H", str(ttl)]
    p = subprocess.run(cmd, input="\n".join(targets) + "\n", capture_output=True, text=True)
    got = {}
    for line in p.stderr.splitlines():
        m = FPING_LINE.match(line)
        if m:
            got[m.group(1)] = int(m.group(3)) > 0
    return {t: got.get(t, False) for t in targets}


def ping_pairs(pairs: list[tuple[str, str]], ns_of_address: dict[str, str], ttl: int | None = None,
               timeout_ms: int = 300, retry: bool = True, jobs: int = JOBS) -> dict[tuple[str, str], bool]:
    """One echo per (source address, destination address) pair, sent from the source's server namespace.

    With ``retry`` a pair that got no answer is tried once more (a first packet may wait on ARP);
    pass ``retry=False`` when no answer is the expected outcome.
    """
    by_src: dict[str, list[str]] = {}
    for s, d in pairs:
        by_src.setdefault(s, []).append(d)
    result: dict[tuple[str, str], bool] = {}

    def run(groups):
        with ThreadPoolExecutor(max_workers=jobs) as pool:
            futs = {pool.submit(_fping, ns_of_address[s], s, sorted(set(ds)), ttl, timeout_ms): s for s, ds in groups.items()}
            for f, s in futs.items():
                for d, ok in f.result().items():
                    result[(s, d)] = ok

    run(by_src)
    if retry:
        again: dict[str, list[str]] = {}
        for (s, d), ok in result.items():
            if not ok:
                again.setdefault(s, []).append(d)
        if again:
            run(again)
    return {p: result[p] for p in pairs}


@dataclass(frozen=True)
class FlowRecord:
    """One probe flow across a failure: what it sent and got back, and its outage."""

    src: str
    dst: str
    sent: int
    received: int
    lost: int | None                # None when fping reported no count
    recovered: bool                 # replies came after the failure
    outage_ms: float | None         # the largest gap in replies less one period (None: never came back, or no reply before)
    flowing_before: bool


class Probe:
    """An ``fping -l -D -p 10`` flow from one port address to another, for outage and loss measurement."""

    def __init__(self, ns: str, src: str, dst: str, period_ms: int = PROBE_PERIOD_MS):
        self.src, self.dst = src, dst
        self.proc = subprocess.Popen(["nsenter", f"--net={NETNS_DIR / ns}", "fping", "-D", "-l", "-p", str(period_ms),
                                      "-t", "1000", "-S", src, dst], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)

    def stop(self, t_fail: float) -> FlowRecord:
        self.proc.send_signal(signal.SIGINT)
        try:
            out, err = self.proc.communicate(timeout=5)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            out, err = self.proc.communicate()
        replies, sent = [], 0
        for line in (out + "\n" + err).splitlines():
            m = PING_REPLY.match(line)
            if m:
                replies.append((float(m.group(1)), int(m.group(2))))
                continue
            m = PING_SENT.match(line)
            if m:
                sent = int(m.group(1))
        times = sorted(t for t, _ in replies)
        before = [t for t in times if t <= t_fail]
        after = [t for t in times if t > t_fail]
        last_before = before[-1] if before else None
        recovered = bool(after)
        # the outage: the largest gap in replies from the last one before the failure on, less the one period a
        # reply is expected in anyway (None when the flow never came back)
        span = ([last_before] if last_before else []) + after
        gaps = [b - a for a, b in zip(span, span[1:])]
        outage = max(0.0, max(gaps, default=0.0) - PROBE_PERIOD_MS / 1000) if (recovered and last_before) else None
        seqs = {s for _, s in replies}
        lost = sent - len(seqs) if sent else None
        return FlowRecord(src=self.src, dst=self.dst, sent=sent, received=len(seqs), lost=lost, recovered=recovered,
                          outage_ms=round(outage * 1000, 1) if outage is not None else None, flowing_before=bool(before))


def start_probes(flows: list[tuple[str, str]], ns_of_address: dict[str, str]) -> list[Probe]:
    probes = [Probe(ns_of_address[s], s, d) for s, d in flows]
    time.sleep(0.4)
    return probes
