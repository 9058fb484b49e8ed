"""Side-by-side design comparison (zcube.md section 7): ZCube against HPN-style dual-plane Clos,
ROFT and Rail-only, for the same GPU count and per-GPU bandwidth on switches of the same capacity.

Pure arithmetic; every rule is written out in the README ("Comparing designs"). Notation:
N GPUs, G GPUs per server (= rails), b the NIC port speed, h = C/b switch ports at b and
k = C/2b switch ports at 2b (C the switch capacity). 51.2T, b = 200G: h = 256, k = 128.

Media (the paper's rule): a NIC-to-even-switch link of ZCube is copper (same rack, DAC); every
other link, in every design, is fibre with an optical module at each end.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from math import ceil

from zcube_deploy.errors import PlanError
from zcube_deploy.topology.sizing import size_fabric

DESIGNS = ("ZCube", "HPN dual-plane", "ROFT", "Rail-only")


@dataclass(frozen=True)
class Prices:
    """Unit prices (USD). ``optic`` maps a link speed in Gbit/s to the price of one module."""

    switch: float
    optic: dict[int, float]
    copper_cable: float
    fibre_cable: float


@dataclass(frozen=True)
class Params:
    gpus: int  # N
    capacity_gbps: int  # C
    nic_port_gbps: int = 200  # b
    gpus_per_server: int = 8  # G
    lanes_per_cage: int = 2  # logical ports per cage at b (ZCube sizing)
    cages: int = 128
    oversubscription: float = 1.0

    @property
    def h(self) -> int:
        return self.capacity_gbps // self.nic_port_gbps

    @property
    def k(self) -> int:
        return self.capacity_gbps // (2 * self.nic_port_gbps)


@dataclass
class Design:
    design: str
    feasible: bool
    switches: int | None = None
    switch_links: int | None = None
    switch_link_gbps: int | None = None
    host_links: int | None = None
    host_link_gbps: int | None = None
    copper_cables: int | None = None
    fibre_cables: int | None = None
    optical_modules: int | None = None
    diameter: int | None = None
    max_gpus: int = 0
    capex: float | None = None
    capex_breakdown: dict[str, float] = field(default_factory=dict)
    layers: dict[str, int] = field(default_factory=dict)
    rule: str = ""
    note: str = ""

    @property
    def switch_link_tbps(self) -> float | None:
        if self.switch_links is None or self.switch_link_gbps is None:
            return None
        return self.switch_links * self.switch_link_gbps / 1000

    def as_dict(self) -> dict:
        d = asdict(self)
        d["switch_link_tbps"] = self.switch_link_tbps
        return d


def _price(d: Design, prices: Prices | None, links_by_speed: dict[int, int]) -> None:
    """CapEx = switches + optical modules (2 per fibre link, priced at the link speed) + cables."""
    if prices is None or not d.feasible:
        return
    missing = [s for s, n in links_by_speed.items() if n and s not in prices.optic]
    if missing:
        d.note = (d.note + " " if d.note else "") + f"no optic price for {', '.join(f'{s}G' for s in missing)}: CapEx left out"
        return
    sw = d.switches * prices.switch
    optics = sum(2 * n * prices.optic[s] for s, n in links_by_speed.items())
    cables = d.copper_cables * prices.copper_cable + d.fibre_cables * prices.fibre_cable
    d.capex_breakdown = {"switches": sw, "optics": optics, "cables": cables}
    d.capex = sw + optics + cables


def zcube(p: Params, prices: Prices | None = None, sizing=None) -> Design:
    """ZCube(n,2): 2S switches (S odd, S even), host links 2N (port 1 to an odd switch, port 2 to
    an even switch), S*S*m fabric links at b; diameter 2; max (h/2)^2 GPUs per plane."""
    max_gpus = (p.h // 2) ** 2
    rule = "S, K, m from the planner's sizing (zcube.md s.3); switches 2S, fabric links S*S*m"
    if sizing is None:
        if p.gpus > max_gpus:
            return Design("ZCube", False, max_gpus=max_gpus, rule=rule, note=f"more than (h/2)^2 = {max_gpus} GPUs per plane")
        try:
            sizing = size_fabric(p.gpus, p.gpus_per_server, p.h, p.lanes_per_cage, p.cages, p.oversubscription)
        except PlanError as exc:
            return Design("ZCube", False, max_gpus=max_gpus, rule=rule, note="; ".join(pr.message for pr in exc.problems))
    S, m = sizing.S, sizing.m
    fabric = S * S * m
    n = p.gpus
    d = Design("ZCube", True, switches=2 * S, switch_links=fabric, switch_link_gbps=p.nic_port_gbps, host_links=2 * n,
               host_link_gbps=p.nic_port_gbps, copper_cables=n, fibre_cables=n + fabric, optical_modules=2 * (n + fabric),
               diameter=2, max_gpus=max_gpus, layers={"odd": S, "even": S}, rule=rule + f" (S={S}, K={sizing.K}, m={m})")
    _price(d, prices, {p.nic_port_gbps: n + fabric})
    return d


def _two_tier(leaves: int, uplinks_per_leaf: int, spine_ports: int) -> int:
    """Spines of a 2-tier Clos: every leaf uplink lands on a spine port; one leaf needs none."""
    return 0 if leaves <= 1 else ceil(leaves * uplinks_per_leaf / spine_ports)


def hpn(p: Params, prices: Prices | None = None) -> Design:
    """HPN-style dual-plane 2-tier Clos: NIC port i goes to plane i. Per plane: leaves with h/2
    ports down at b and k/2 ports up at 2b (non-blocking), spines with k ports at 2b."""
    h, k, n = p.h, p.k, p.gpus
    max_gpus = k * (h // 2)  # k leaves per plane (each spine port to a different leaf)
    rule = "per plane: leaves = ceil(N/(h/2)), spines = ceil(leaves*(k/2)/k); x2 planes"
    if n > max_gpus:
        return Design("HPN dual-plane", False, max_gpus=max_gpus, rule=rule, note=f"more than k*h/2 = {max_gpus} GPUs in 2 tiers")
    leaves = ceil(n / (h // 2))
    spines = _two_tier(leaves, k // 2, k)
    links = 2 * leaves * (k // 2) if spines else 0
    d = Design("HPN dual-plane", True, switches=2 * (leaves + spines), switch_links=links, switch_link_gbps=2 * p.nic_port_gbps,
               host_links=2 * n, host_link_gbps=p.nic_port_gbps, copper_cables=0, fibre_cables=2 * n + links,
               optical_modules=2 * (2 * n + links), diameter=3 if spines else 1, max_gpus=max_gpus,
               layers={"leaves": 2 * leaves, "spines": 2 * spines}, rule=rule)
    _price(d, prices, {p.nic_port_gbps: 2 * n, 2 * p.nic_port_gbps: links})
    return d


def roft(p: Params, prices: Prices | None = None) -> Design:
    """Rail-optimized fat tree, one port at 2b per GPU. A pod is k/2 servers; leaf r of a pod takes
    GPU r of each of its servers. 2-tier while the leaves fit one spine layer (leaves <= k),
    otherwise 3-tier: aggregation switches = leaves (each takes k/2 leaf uplinks down and sends
    k/2 up, non-blocking) and cores = ceil(aggregation * (k/2) / k)."""
    k, G, n = p.k, p.gpus_per_server, p.gpus
    servers = ceil(n / G)
    leaves = G * ceil(servers / (k // 2))
    max_gpus = k ** 3 // 4
    rule = "leaves = G*ceil(servers/(k/2)); 2-tier if leaves <= k (spines = leaves/2), else aggs = leaves, cores = aggs/2"
    if n > max_gpus:
        return Design("ROFT", False, max_gpus=max_gpus, rule=rule, note=f"more than k^3/4 = {max_gpus} GPUs in 3 tiers")
    if leaves <= k:
        spines = _two_tier(leaves, k // 2, k)
        links = leaves * (k // 2) if spines else 0
        layers, diameter = {"leaves": leaves, "spines": spines}, 3 if spines else 1
    else:
        aggs = leaves
        cores = ceil(aggs * (k // 2) / k)
        links = leaves * (k // 2) + aggs * (k // 2)
        layers, diameter = {"leaves": leaves, "aggregation": aggs, "cores": cores}, 5
    switches = sum(layers.values())
    d = Design("ROFT", True, switches=switches, switch_links=links, switch_link_gbps=2 * p.nic_port_gbps, host_links=n,
               host_link_gbps=2 * p.nic_port_gbps, copper_cables=0, fibre_cables=n + links, optical_modules=2 * (n + links),
               diameter=diameter, max_gpus=max_gpus, layers=layers, rule=rule)
    _price(d, prices, {2 * p.nic_port_gbps: n + links})
    return d


def rail_only(p: Params, prices: Prices | None = None) -> Design:
    """One independent 2-tier Clos per rail (GPU r of every server), one port at 2b per GPU:
    per rail leaves = ceil(servers/(k/2)), spines = ceil(leaves/2). No cross-rail fabric."""
    k, G, n = p.k, p.gpus_per_server, p.gpus
    servers = ceil(n / G)
    max_gpus = G * k * (k // 2)
    rule = "per rail: leaves = ceil(servers/(k/2)), spines = ceil(leaves*(k/2)/k); x G rails"
    if n > max_gpus:
        return Design("Rail-only", False, max_gpus=max_gpus, rule=rule, note=f"more than G*k^2/2 = {max_gpus} GPUs")
    leaves = ceil(servers / (k // 2))
    spines = _two_tier(leaves, k // 2, k)
    links = G * leaves * (k // 2) if spines else 0
    d = Design("Rail-only", True, switches=G * (leaves + spines), switch_links=links, switch_link_gbps=2 * p.nic_port_gbps,
               host_links=n, host_link_gbps=2 * p.nic_port_gbps, copper_cables=0, fibre_cables=n + links,
               optical_modules=2 * (n + links), diameter=3 if spines else 1, max_gpus=max_gpus,
               layers={"leaves": G * leaves, "spines": G * spines}, rule=rule,
               note="no path between rails: cross-rail traffic is forwarded over NVLink inside the server")
    _price(d, prices, {2 * p.nic_port_gbps: n + links})
    return d


def compare_designs(p: Params, prices: Prices | None = None, sizing=None) -> list[Design]:
    """The four designs for ``p`` (ZCube first). ``sizing``: a plan's own sizing for the ZCube row."""
    return [zcube(p, prices, sizing), hpn(p, prices), roft(p, prices), rail_only(p, prices)]


JSON_FIELDS = ("design", "switches", "switch_links", "host_links", "copper_cables", "fibre_cables", "optical_modules",
               "diameter", "max_gpus", "capex")


def as_json(designs: list[Design]) -> list[dict]:
    """The documented ``--json`` rows (plus link speeds, layers, CapEx breakdown and the rule)."""
    out = []
    for d in designs:
        full = d.as_dict()
        row = {k: full[k] for k in JSON_FIELDS}
        row.update({k: full[k] for k in ("feasible", "switch_link_gbps", "host_link_gbps", "switch_link_tbps", "layers",
                                         "capex_breakdown", "rule", "note")})
        out.append(row)
    return out


def parse_capacity(text: str) -> int:
    """'51.2T' -> 51200, '25600G' -> 25600 (Gbit/s)."""
    t = text.strip().upper()
    try:
        if t.endswith("T"):
            return round(float(t[:-1]) * 1000)
        if t.endswith("G"):
            return int(t[:-1])
    except ValueError:
        pass
    raise ValueError(f"switch capacity {text!r} is not of the form '51.2T' or '51200G'")


def _n(v) -> str:
    return "-" if v is None else f"{v:,}"


ROWS = (
    ("switches", "switches", lambda d: _n(d.switches)),
    ("switch_links", "switch-to-switch links", lambda d: f"{_n(d.switch_links)} x {d.switch_link_gbps}G"),
    ("switch_link_tbps", "switch-to-switch bandwidth (Tb/s)", lambda d: f"{d.switch_link_tbps:,.1f}"),
    ("host_links", "host links", lambda d: f"{_n(d.host_links)} x {d.host_link_gbps}G"),
    ("copper_cables", "copper cables", lambda d: _n(d.copper_cables)),
    ("fibre_cables", "fibre cables", lambda d: _n(d.fibre_cables)),
    ("optical_modules", "optical modules", lambda d: _n(d.optical_modules)),
    ("diameter", "diameter (switch hops)", lambda d: _n(d.diameter)),
    ("max_gpus", "largest GPU count", lambda d: _n(d.max_gpus)),
    ("capex", "CapEx (USD, switches + optics + cables)", lambda d: "-" if d.capex is None else f"{d.capex / 1e6:,.2f} M"),
)


def table_rows(designs: list[Design]) -> tuple[list[str], list[list[str]]]:
    """Header and rows of the comparison table: one row per metric, one column per design, and
    after each design but ZCube its ratio to ZCube."""
    base = designs[0]
    header = ["", base.design]
    for d in designs[1:]:
        header += [d.design, "ratio"]
    rows = []
    for key, label, fmt in ROWS:
        row = [label, fmt(base) if base.feasible or key == "max_gpus" else "does not fit"]
        b = getattr(base, key)
        for d in designs[1:]:
            v = getattr(d, key)
            if not d.feasible and key != "max_gpus":
                row += ["does not fit", ""]
                continue
            row.append(fmt(d))
            row.append(f"{v / b:.2f}" if base.feasible and v is not None and b else "")
        rows.append(row)
    return header, rows


def narrow_columns(header: list[str]) -> list[tuple[int, ...]]:
    """For a narrow terminal, the comparison table's columns (``table_rows``' header) one design at a time:
    the metric, ZCube, the design and its ratio."""
    return [(0, 1, k, k + 1) for k in range(2, len(header), 2)]
