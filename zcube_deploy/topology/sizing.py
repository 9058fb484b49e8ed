"""Sizing: choose S (switches per group), K (host ports per switch) and m (parallel fabric links).

zcube.md section 3 [ours]: pick the smallest S such that capacity S*K >= N with K a multiple of
G, S a multiple of G where possible (true rail switches), m = ceil(K / (s*S)), K + S*m <= R, and
host and fabric lanes in separate cages.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from math import ceil

from zcube_deploy.errors import PlanError, Problem


@dataclass(frozen=True)
class Sizing:
    gpus_requested: int  # N: capacity servers x G
    gpus_per_server: int  # G
    logical_ports: int  # R at the NIC port speed
    lanes_per_cage: int
    cages: int
    oversubscription: float  # s
    S: int
    K: int
    m: int
    rail: bool  # S is a multiple of G: odd switches are true rail switches
    reasons: tuple[str, ...]

    @property
    def capacity_gpus(self) -> int:
        return self.S * self.K

    @property
    def host_cages(self) -> int:
        return ceil(self.K / self.lanes_per_cage)

    @property
    def fabric_cages(self) -> int:
        return ceil(self.S * self.m / self.lanes_per_cage)

    @property
    def fabric_ports(self) -> int:
        return self.S * self.m

    @property
    def effective_oversubscription(self) -> float:
        """Host bandwidth over fabric bandwidth towards the other group, per switch."""
        return self.K / (self.S * self.m)

    def as_dict(self) -> dict:
        d = asdict(self)
        d["reasons"] = list(self.reasons)
        d.update(
            capacity_gpus=self.capacity_gpus,
            host_cages=self.host_cages,
            fabric_cages=self.fabric_cages,
            fabric_ports=self.fabric_ports,
            effective_oversubscription=round(self.effective_oversubscription, 6),
        )
        return d


def _shape(n: int, g: int, s_over: float, S: int) -> tuple[int, int]:
    K = ceil(n / S)
    K = ceil(K / g) * g
    m = ceil(K / (s_over * S) - 1e-9)
    return K, max(m, 1)


def _fits(n: int, g: int, r: int, lanes: int, cages: int, s_over: float, S: int) -> tuple[bool, int, int, str]:
    K, m = _shape(n, g, s_over, S)
    if K + S * m > r:
        return False, K, m, f"K + S*m = {K} + {S}*{m} = {K + S * m} > R = {r}"
    need = ceil(K / lanes) + ceil(S * m / lanes)
    if need > cages:
        return False, K, m, f"host and fabric lanes need {need} separate cages > {cages}"
    return True, K, m, f"K + S*m = {K} + {S}*{m} = {K + S * m} <= R = {r}"


def size_fabric(n_gpus: int, gpus_per_server: int, logical_ports: int, lanes_per_cage: int, cages: int,
                oversubscription: float = 1.0) -> Sizing:
    """Choose S, K, m for ``n_gpus`` (capacity) GPUs. Raises PlanError, with the reason, when nothing fits."""
    g, r = gpus_per_server, logical_ports
    if n_gpus <= 0:
        raise PlanError(Problem("topology.capacity_servers", "nothing to size: no GPUs"))
    reasons: list[str] = []
    first_rejected: str | None = None
    for rail_pass in (True, False):
        candidates = range(g, r + 1, g) if rail_pass else range(1, r + 1)
        for S in candidates:
            ok, K, m, why = _fits(n_gpus, g, r, lanes_per_cage, cages, oversubscription, S)
            if not ok:
                if first_rejected is None or S == candidates[0]:
                    first_rejected = f"S={S} rejected: {why}"
                last_rejected = f"S={S} rejected: {why}"
                continue
            if rail_pass:
                reasons.append(f"S={S}: the smallest multiple of G={g} that fits ({why})")
                if S > g:
                    reasons.append(f"smaller multiples of G do not fit, e.g. {last_rejected}")
            else:
                reasons.append(f"no multiple of G={g} fits (e.g. {first_rejected}); S={S} is the smallest that does ({why}); "
                               "odd switches are NOT rail switches")
            reasons.append(f"K={K}: ceil(N/S) = ceil({n_gpus}/{S}) rounded up to a multiple of G={g}; capacity {S * K} GPUs")
            reasons.append(f"m={m}: ceil(K/(s*S)) = ceil({K}/({oversubscription:g}*{S}))")
            return Sizing(n_gpus, g, r, lanes_per_cage, cages, oversubscription, S, K, m, rail_pass, tuple(reasons))
    max_nb = (r // 2) ** 2
    raise PlanError(Problem(
        "topology",
        f"{n_gpus} GPUs do not fit one ZCube plane of switches with R={r} logical ports at oversubscription "
        f"{oversubscription:g} (the non-blocking maximum is (R/2)^2 = {max_nb} GPUs)",
        "use a larger switch model, raise topology.oversubscription, or lower the capacity",
    ), "cannot size the fabric")
