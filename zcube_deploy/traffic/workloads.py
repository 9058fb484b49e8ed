"""Workloads as transfers (source GPU, destination GPU, bytes, start). GPUs are numbered server-major
(the plan's order for ZCube; server s holds GPUs s*G .. s*G+G-1 in the other designs).

- ``all-to-all``: every ordered GPU pair sends ``bytes`` (per pair), all at t = 0.
- ``all-gather``, ``allreduce``: NCCL rings in their steady state: each GPU sends to its ring
  successor (m-1)/m x S (all-gather) or 2(m-1)/m x S (all-reduce, reduce-scatter then all-gather)
  for a buffer of S = ``bytes`` per GPU and m ring members, as one pipelined flow. ``ring="all"``:
  one ring over every GPU in index order (hops inside a server cross NVLink); ``ring="rail"``: one
  ring per local GPU index across the servers (the inter-server step of a hierarchical collective;
  its NVLink steps are not modelled).
- ``pd``: prefill/decode disaggregation (:class:`PdParams`; every default is an assumption,
  docs/traffic.md): requests arrive as a Poisson process, queue at a prefill instance (round robin),
  prefill takes prompt tokens / prefill speed; then the KV cache (tokens x KV bytes per token) goes
  to a decode instance (round robin) shard by shard: prefill GPU i to decode GPU i.
- ``trace``: a CSV of ``src,dst,bytes,start`` (GPU indexes, bytes, seconds), header optional.
"""

from __future__ import annotations

import csv
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from zcube_deploy.errors import InputErrors, Problem
from zcube_deploy.traffic.flows import Transfers

WORKLOADS = ("all-to-all", "all-to-all-switch", "all-gather", "allreduce", "pd", "trace")
RINGS = ("all", "rail")
PLACEMENTS = ("packed", "spread", "random")


def local_index(server_of: np.ndarray) -> np.ndarray:
    """Position of each GPU within its server (GPUs of a server are consecutive)."""
    first = np.searchsorted(server_of, server_of, side="left")
    return np.arange(len(server_of)) - first


def all_to_all(n: int, nbytes: float) -> Transfers:
    a = np.repeat(np.arange(n, dtype=np.int32), n - 1)
    off = np.tile(np.arange(1, n, dtype=np.int32), n)
    b = (a + off) % n
    return Transfers(a, b, np.full(len(a), float(nbytes)), np.zeros(len(a)))


def ring_successors(server_of: np.ndarray, ring: str, local: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(source, successor, members of the source's ring) of every ring edge; ``local``: each GPU's index
    in its server (its rail; default its position among its server's GPUs)."""
    n = len(server_of)
    g = np.arange(n)
    if ring == "all":
        return g, (g + 1) % n, np.full(n, n)
    local = local_index(server_of) if local is None else local
    src, dst, size = [], [], []
    for i in np.unique(local):
        members = g[local == i]
        src.append(members)
        dst.append(np.roll(members, -1))
        size.append(np.full(len(members), len(members)))
    return np.concatenate(src), np.concatenate(dst), np.concatenate(size)


def collective(kind: str, server_of: np.ndarray, nbytes: float, ring: str = "all", local: np.ndarray | None = None) -> Transfers:
    """All-gather or all-reduce of ``nbytes`` per GPU on rings (see module doc; ``local``: the GPUs' rails)."""
    src, dst, m = ring_successors(server_of, ring, local)
    keep = m > 1
    src, dst, m = src[keep], dst[keep], m[keep].astype(float)
    factor = (m - 1) / m if kind == "all-gather" else 2 * (m - 1) / m
    return Transfers(src, dst, factor * float(nbytes), np.zeros(len(src)))


@dataclass(frozen=True)
class PdParams:
    """Prefill/decode defaults (assumptions, docs/traffic.md): instances of 8 GPUs (one server),
    half of the instance slots prefill and half decode; a 70B-class GQA model's KV cache, 2 x 80
    layers x 8 KV heads x 128 head dim x 2 bytes = 327,680 bytes per token (1.34 GB at 4K tokens,
    the figure traffic.md cites); prompts log-normal around 4,096 tokens (sigma 0.6, clipped to
    [64, 131,072]); 40,000 prompt tokens per second per prefill instance; requests arriving at 90 %
    of the prefill instances' capacity unless ``rate`` is given."""

    requests: int = 1000
    rate: float | None = None  # requests per second
    gpus_per_instance: int = 8
    prefill: int | None = None  # instances
    decode: int | None = None
    placement: str = "packed"
    seed: int = 1
    prompt_tokens: int = 4096
    prompt_sigma: float = 0.6
    kv_bytes_per_token: int = 327_680
    prefill_tokens_per_s: float = 40_000.0
    load: float = 0.9


def pd_problems(p: PdParams, n_gpus: int) -> list[Problem]:
    probs = []
    slots = n_gpus // p.gpus_per_instance if p.gpus_per_instance > 0 else 0
    if p.gpus_per_instance <= 0:
        probs.append(Problem("--gpus-per-instance", "must be positive"))
    P, D = pd_counts(p, n_gpus) if slots else (0, 0)
    if slots and (P < 1 or D < 1 or P + D > slots):
        probs.append(Problem("--prefill/--decode", f"{P} prefill + {D} decode instances of {p.gpus_per_instance} GPUs do not fit "
                                                   f"{slots} instance slots ({n_gpus:,} GPUs)", "each needs at least one instance"))
    if p.requests <= 0:
        probs.append(Problem("--requests", "must be positive"))
    if p.rate is not None and not p.rate > 0:
        probs.append(Problem("--rate", "must be positive (requests per second)"))
    if p.placement not in PLACEMENTS:
        probs.append(Problem("--placement", f"{p.placement!r} is not one of {', '.join(PLACEMENTS)}"))
    if p.prompt_tokens <= 0 or p.prompt_sigma < 0 or p.kv_bytes_per_token <= 0 or not p.prefill_tokens_per_s > 0:
        probs.append(Problem("--prompt-tokens/--prompt-sigma/--kv-bytes-per-token/--prefill-tokens-per-s",
                             "must be positive (sigma may be 0: every prompt the same length)"))
    return probs


def pd_misfit(p: PdParams, n_gpus: int, server_of: np.ndarray, gpus_per_server: int) -> str | None:
    """Why pd's instances do not fit these GPUs (None when they do): each instance (``gpus_per_instance``
    consecutive GPUs) must lie in one server or be whole servers (all ``gpus_per_server`` GPUs of each
    here), and the slots must hold the instances. An island of a migration stage can hold servers with
    some of their GPUs only: an instance over two half servers is refused, not modelled as a server."""
    probs = pd_problems(p, n_gpus)
    if probs:
        return "; ".join(str(x) for x in probs)
    gpi = p.gpus_per_instance
    first = np.arange(n_gpus // gpi) * gpi
    last = first + gpi - 1
    edge = np.flatnonzero(server_of[1:] != server_of[:-1])
    starts, ends = np.zeros(n_gpus, bool), np.zeros(n_gpus, bool)
    starts[np.r_[0, edge + 1]] = True
    ends[np.r_[edge, n_gpus - 1]] = True
    part = np.cumsum(np.bincount(server_of)[server_of] != gpus_per_server)  # GPUs of partial servers up to here
    whole = part[last] - np.r_[0, part][first] == 0
    ok = (server_of[first] == server_of[last]) | (starts[first] & ends[last] & whole)
    if ok.all():
        return None
    sizes = sorted(set(np.bincount(server_of)[np.unique(server_of)].tolist()))
    return (f"pd: instances of {gpi} GPUs (--gpus-per-instance) would span servers of which only {', '.join(map(str, sizes))} of "
            f"{gpus_per_server} GPUs are here: an instance must be part of one server or whole servers; give --gpus-per-instance "
            f"{min(sizes)} or fewer")


def pd_counts(p: PdParams, n_gpus: int) -> tuple[int, int]:
    slots = n_gpus // p.gpus_per_instance
    P = p.prefill if p.prefill is not None else (slots - p.decode if p.decode is not None else slots // 2)
    D = p.decode if p.decode is not None else slots - P
    return P, D


def pd_placement(p: PdParams, n_gpus: int) -> tuple[np.ndarray, np.ndarray]:
    """First GPU of each prefill and each decode instance."""
    P, D = pd_counts(p, n_gpus)
    slots = n_gpus // p.gpus_per_instance
    if p.placement == "packed":
        order = np.arange(slots)
    elif p.placement == "spread":  # prefill and decode alternate as evenly as their counts allow
        key = np.concatenate([(np.arange(P) + 0.5) / P, (np.arange(D) + 0.5) / D])
        chosen = np.argsort(key, kind="stable")  # position in the interleaving of instance i (prefill first)
        order = np.empty(P + D, np.int64)
        order[chosen] = np.arange(P + D)
    else:
        order = np.random.default_rng(p.seed).permutation(slots)
    base = order * p.gpus_per_instance
    return base[:P], base[P:P + D]


def pd(p: PdParams, n_gpus: int) -> tuple[Transfers, dict]:
    """KV-cache transfers of ``p.requests`` requests and what the report says about them."""
    P, D = pd_counts(p, n_gpus)
    pre, dec = pd_placement(p, n_gpus)
    rng = np.random.default_rng(p.seed)
    tokens = np.round(p.prompt_tokens * np.exp(p.prompt_sigma * rng.standard_normal(p.requests))) if p.prompt_sigma else \
        np.full(p.requests, float(p.prompt_tokens))
    tokens = np.clip(tokens, 64, 131_072)
    capacity = P * p.prefill_tokens_per_s / float(np.mean(tokens))  # requests per second the prefill instances sustain
    rate = p.rate if p.rate is not None else p.load * capacity
    arrival = np.cumsum(rng.exponential(1.0 / rate, p.requests))
    ready = np.empty(p.requests)
    free = np.zeros(P)
    for i in range(p.requests):  # each prefill instance serves its requests in order
        inst = i % P
        begin = max(arrival[i], free[inst])
        free[inst] = ready[i] = begin + tokens[i] / p.prefill_tokens_per_s
    gpi = p.gpus_per_instance
    req = np.repeat(np.arange(p.requests), gpi)
    shard = np.tile(np.arange(gpi), p.requests)
    src = pre[req % P] + shard
    dst = dec[req % D] + shard
    nbytes = (tokens * p.kv_bytes_per_token / gpi)[req]
    info = {"requests": p.requests, "rate_per_s": rate, "prefill_instances": P, "decode_instances": D, "gpus_per_instance": gpi,
            "placement": p.placement, "seed": p.seed, "prompt_tokens_median": p.prompt_tokens, "prompt_sigma": p.prompt_sigma,
            "kv_bytes_per_token": p.kv_bytes_per_token, "prefill_tokens_per_s": p.prefill_tokens_per_s,
            "mean_kv_bytes": float(np.mean(tokens) * p.kv_bytes_per_token), "prefill_wait_s_p99": float(np.percentile(ready - arrival, 99))}
    return Transfers(src, dst, nbytes, ready[req], group=req), info


def read_trace(path: str | Path, n_gpus: int) -> Transfers:
    """Rows ``src,dst,bytes,start``; every bad row is reported with its line (InputErrors, exit 2)."""
    path = Path(path)
    if not path.is_file():
        raise InputErrors(Problem(str(path), "no such file"))
    problems: list[Problem] = []
    rows = []
    with path.open(newline="", encoding="utf-8") as fh:
        for line, row in enumerate(csv.reader(fh), start=1):
            if not row or (len(row) == 1 and not row[0].strip()) or row[0].lstrip().startswith("#"):
                continue
            if line == 1 and row[0].strip().lower() in ("src", "source", "src_gpu"):
                continue
            where = f"{path}:{line}"
            if len(row) != 4:
                problems.append(Problem(where, f"{len(row)} fields; want src,dst,bytes,start"))
                continue
            bad = []
            try:
                s, d = int(row[0]), int(row[1])
            except ValueError:
                bad.append(f"GPU indexes {row[0]!r}, {row[1]!r} are not integers")
                s = d = 0
            for name, g in (("src", s), ("dst", d)):
                if not 0 <= g < n_gpus:
                    bad.append(f"{name} GPU {g} is outside 0..{n_gpus - 1}")
            if s == d and not bad:
                bad.append("src and dst are the same GPU")
            try:
                nb, st = float(row[2]), float(row[3])
                if not (np.isfinite(nb) and nb > 0):
                    bad.append(f"bytes {row[2]!r} is not a positive number")
                if not (np.isfinite(st) and st >= 0):
                    bad.append(f"start {row[3]!r} is not a time >= 0 s")
            except ValueError:
                bad.append(f"bytes {row[2]!r} or start {row[3]!r} is not a number")
            if bad:
                problems.append(Problem(where, "; ".join(bad)))
            else:
                rows.append((s, d, nb, st))
    if not rows and not problems:
        problems.append(Problem(str(path), "no transfers in the trace"))
    if problems:
        raise InputErrors(problems)
    arr = np.array(rows, float)
    return Transfers(arr[:, 0].astype(np.int64), arr[:, 1].astype(np.int64), arr[:, 2], arr[:, 3])
