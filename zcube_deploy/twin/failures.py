"""Failures injected into the twin: what a spec names, and how it is done and undone.

- ``carrier``: the cable is cut. One end is set down (``ip link set down``), so the other end
  loses carrier; a failed switch has all its ports set down (its neighbours lose carrier).
- ``silent``: the link stays up but carries nothing: nftables ``netdev`` ingress and egress chains
  with ``policy drop`` on one end of each failed cable (its switch end), or on every port of a failed
  switch, in one nft transaction per namespace (a failed switch goes silent at once: all its ports in
  one atomic ruleset). Carrier stays up on both ends; only BFD (mode bgp) can notice.
"""

from __future__ import annotations

import random
import subprocess
from dataclasses import dataclass, field

from zcube_deploy.errors import InputErrors, Problem
from zcube_deploy.twin import netns

MODES = ("carrier", "silent")
NFT_TABLE = "zcube_twin_fail"


@dataclass
class Failure:
    spec: str
    cables: list[str] = field(default_factory=list)
    switches: list[str] = field(default_factory=list)

    @property
    def label(self) -> str:
        return ",".join([f"link:{c}" for c in self.cables] + [f"switch:{s}" for s in self.switches])


def parse(specs: list[str], state: dict, seed: int) -> list[Failure]:
    """Each spec -> one or more failures, each injected and repaired on its own; all problems at once."""
    cables = {l["cable"] for l in state["links"]}
    switches = set(state["switches"])
    out, problems = [], []
    rng = random.Random(seed)
    for k, spec in enumerate(specs):
        kind, _, arg = spec.partition(":")
        where = f"--fail[{k}]"
        if kind == "link":
            if arg not in cables:
                problems.append(Problem(where, f"no cable {arg!r} in this twin", "a cable id from cables.csv, e.g. F00001 or H000001"))
            else:
                out.append(Failure(spec, cables=[arg]))
        elif kind == "switch":
            if arg not in switches:
                problems.append(Problem(where, f"no switch {arg!r} in this twin", f"one of {', '.join(sorted(switches)[:4])}, ..."))
            else:
                out.append(Failure(spec, switches=[arg]))
        elif kind == "random":
            if not arg.isdigit() or not 0 < int(arg) <= len(cables):
                problems.append(Problem(where, f"random:{arg} is not a count of cables (1..{len(cables)})"))
            else:
                for c in rng.sample(sorted(cables), int(arg)):
                    out.append(Failure(spec, cables=[c]))
        else:
            problems.append(Problem(where, f"{spec!r} is not link:CABLE, switch:NAME or random:N"))
    if problems:
        raise InputErrors(problems)
    return out


def _down_ends(state: dict, failure: Failure) -> list[tuple[str, str]]:
    """(namespace, interface) set down in carrier mode: the switch end of each failed cable (a failed switch: all its ports)."""
    switches = set(state["switches"])
    out = []
    for l in state["links"]:
        if l["cable"] in failure.cables or l["a"]["device"] in failure.switches or l["b"]["device"] in failure.switches:
            a, b = l["a"], l["b"]
            if b["device"] in failure.switches and a["device"] not in failure.switches:
                a, b = b, a
            end = a if a["device"] in switches else b
            out.append((state["namespaces"][end["device"]], end["ifname"]))
    return out


def _silent_ends(state: dict, failure: Failure) -> dict[str, list[str]]:
    """namespace -> interfaces that drop everything in silent mode: the same switch ends as carrier mode
    sets down (a failed switch: all its ports), so each failure is one ruleset in one namespace."""
    out: dict[str, list[str]] = {}
    for ns, itf in _down_ends(state, failure):
        out.setdefault(ns, []).append(itf)
    return {ns: sorted(set(v)) for ns, v in sorted(out.items())}


def _nft(ns: str, script: str) -> None:
    p = subprocess.run(["nsenter", f"--net={netns.NETNS_DIR / ns}", "nft", "-f", "-"], input=script, capture_output=True, text=True)
    if p.returncode:
        raise netns.TwinSystemError(f"nft in {ns} failed: {p.stderr.strip()[:400]}")


def inject(state: dict, failure: Failure, mode: str) -> None:
    if mode == "carrier":
        per_ns: dict[str, list[str]] = {}
        for ns, itf in _down_ends(state, failure):
            per_ns.setdefault(ns, []).append(f"link set dev {itf} down")
        netns.batches(per_ns, jobs=8)
        return
    for ns, itfs in _silent_ends(state, failure).items():
        chains = "\n".join(f'  chain drop_{hook}_{k} {{ type filter hook {hook} device "{i}" priority -500; policy drop; }}'
                           for k, i in enumerate(itfs) for hook in ("ingress", "egress"))
        _nft(ns, f"table netdev {NFT_TABLE} {{\n{chains}\n}}\n")


def repair(state: dict, failure: Failure, mode: str) -> None:
    if mode == "carrier":
        per_ns: dict[str, list[str]] = {}
        for ns, itf in _down_ends(state, failure):
            per_ns.setdefault(ns, []).append(f"link set dev {itf} up")
        netns.batches(per_ns, jobs=8)
        return
    for ns in sorted(_silent_ends(state, failure)):
        _nft(ns, f"delete table netdev {NFT_TABLE}\n")
