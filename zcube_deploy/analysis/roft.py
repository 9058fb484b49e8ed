"""`zcube analyze` on a ROFT plan (docs/roft.md, "What analyze says"): what failures cost on rail
leaves and spines. Pure numpy; no I/O.

Two notions of reachable, as for ZCube (analysis/failures.py):

- any path: a live port of one GPU and a live port of the other in one connected component of
  the live switches and links (what an operator's rerouting could use);
- routed: eBGP after convergence. A ROFT's spines of a plane share one AS, so a path never crosses
  two spines (a spine drops a path holding its own AS): a GPU pair is routed when a live port of
  each sits on the same live leaf, or on two leaves with a live spine that has a live link to both.

What is ZCube's alone is said to be not applicable, never passed: the cross-group path statistics
(one path of two switches, zcube.md section 4) and the comparison with a dual-plane Clos of the
same size (a ZCube figure).
"""

from __future__ import annotations

import numpy as np

from zcube_deploy.analysis.fabric import Fabric
from zcube_deploy.analysis.failures import State, _draw, _summary, pairs, physical_lost_pairs
from zcube_deploy.errors import PlanFileError

NOT_APPLICABLE = {
    "cross_group_paths": "ZCube's one cross-group path of two switches (zcube.md section 4) does not apply to a ROFT",
    "dual_plane_clos": "the comparison with a dual-plane Clos of the same size is ZCube's figure; see `zcube compare` for ROFT",
}


class RoftFabric:
    """A ROFT plan's switches, leaf-spine links and GPU ports (both NIC ports of each installed GPU)."""

    def __init__(self, plan: dict):
        switches = plan["switches"]
        names = [s["name"] for s in switches]
        idx = {n: i for i, n in enumerate(names)}
        self.spine = np.array([s["group"] == "spine" for s in switches])
        fabric = sorted((c for c in plan["cables"] if c["kind"] == "fabric"), key=lambda c: c["id"])
        gpus: dict[tuple[str, int], dict[int, dict]] = {}
        for srv in plan["servers"]:
            for nic in srv["nics"]:
                gpus.setdefault((srv["name"], nic["gpu"]), {})[nic["nic_port"]] = nic
        keys = [k for k in gpus if set(gpus[k]) == {1, 2}]
        if not keys:
            raise PlanFileError("the plan has no installed GPU with two cabled NIC ports: nothing to analyse "
                                "(a ROFT is analysed with 2-port NICs)")
        port_switch = np.array([[idx[gpus[k][1]["switch"]], idx[gpus[k][2]["switch"]]] for k in keys], np.int64).reshape(-1, 2)
        self.fab = Fabric("ROFT", names, np.array([idx[c["a"]["device"]] for c in fabric], np.int64),
                          np.array([idx[c["b"]["device"]] for c in fabric], np.int64), port_switch, [c["id"] for c in fabric],
                          [f"{k[0]}/gpu{k[1]}" for k in keys])

    def routed_lost_pairs(self, st: State) -> int:
        """Unordered GPU pairs with no routed path: no live port of each on one live leaf, or on two leaves of one
        live spine with live links to both."""
        fab = self.fab
        n = fab.n_switches
        alive = st.links_alive(fab)
        adj = np.zeros((n, n), np.int64)
        np.add.at(adj, (fab.link_u[alive], fab.link_v[alive]), 1)
        leaf_spine = (adj > 0) & self.spine[None, :] & st.switch_up[None, :]
        reach = (leaf_spine.astype(np.int64) @ leaf_spine.T.astype(np.int64)) > 0
        reach |= np.diag(st.switch_up & ~self.spine)
        ports = np.where(st.port_alive(fab), fab.port_switch, -1)
        classes, count = np.unique(ports, axis=0, return_counts=True)
        ok = np.zeros((len(classes), len(classes)), bool)
        for a in range(2):
            for b in range(2):
                x, y = classes[:, a], classes[:, b]
                ok |= (x[:, None] >= 0) & (y[None, :] >= 0) & reach[np.ix_(np.maximum(x, 0), np.maximum(y, 0))]
        cnt = count.astype(np.int64)
        reachable = (np.outer(cnt, cnt) * ok).sum() - (cnt * ok.diagonal()).sum()  # ordered pairs of distinct GPUs
        return pairs(fab.n_gpus) - int(reachable // 2)


def _single(rf: RoftFabric) -> list[dict]:
    fab = rf.fab
    healthy = State.healthy(fab)
    rows = []
    elements = [("switch", name, i) for i, name in enumerate(fab.switch_names)] + \
               [("fabric_link", cid, k) for k, cid in enumerate(fab.link_ids)]
    for kind, name, i in elements:
        st = State(healthy.host_up, healthy.link_up.copy(), healthy.switch_up.copy())
        if kind == "switch":
            st.switch_up[i] = False
        else:
            st.link_up[i] = False
        cut = int((~st.port_alive(fab)).sum())
        routed, phys = rf.routed_lost_pairs(st), physical_lost_pairs(fab, st)
        rows.append({"kind": kind, "element": name, "gpu_ports_cut_off": cut, "gpu_pairs_disconnected": phys,
                     "gpu_pairs_without_routed_path": routed, "every_gpu_keeps_a_path": phys == 0,
                     "every_gpu_keeps_a_routed_path": routed == 0})
    return rows


def single_failure_elements(plan: dict) -> list[dict]:
    """A ROFT plan's single-failure rows (one per switch and per leaf-spine link), as analyze reports them."""
    return _single(RoftFabric(plan))


def _worst(rows: list[dict], kind: str) -> dict:
    sel = [r for r in rows if r["kind"] == kind]
    if not sel:
        return {"elements": 0}
    out = {"elements": len(sel), "every_gpu_keeps_a_path": all(r["every_gpu_keeps_a_path"] for r in sel),
           "every_gpu_keeps_a_routed_path": all(r["every_gpu_keeps_a_routed_path"] for r in sel)}
    for key in ("gpu_ports_cut_off", "gpu_pairs_disconnected", "gpu_pairs_without_routed_path"):
        r = max(sel, key=lambda r: (r[key], r["element"]))
        out[f"max_{key}"] = {"value": r[key], "element": r["element"]}
    return out


def analyze_roft(plan: dict, probabilities, samples: int, seed: int) -> dict:
    """The ROFT analysis as one JSON-able document (deterministic for a given plan, samples and seed)."""
    rf = RoftFabric(plan)
    fab = rf.fab
    healthy = State.healthy(fab)
    if rf.routed_lost_pairs(healthy):
        raise PlanFileError("the healthy ROFT has GPU pairs without a routed path: the plan breaks its invariants (run `zcube plan`)")
    singles = _single(rf)
    total = pairs(fab.n_gpus)
    random = []
    for pi, p in enumerate(probabilities):
        rng = np.random.default_rng([seed, pi, 0])
        routed, phys = np.zeros(samples), np.zeros(samples)
        for t in range(samples):
            st = _draw(fab, p, rng)
            routed[t] = rf.routed_lost_pairs(st) / total
            phys[t] = physical_lost_pairs(fab, st) / total
        random.append({"p": p, "roft": _summary(phys), "roft_routed": _summary(routed)})
    sz = plan["sizing"]
    return {
        "design": "roft",
        "routing": {"mode": "bgp", "routed_exact": True,
                    "routed_means": "eBGP best paths after convergence: one leaf, or leaf - spine - leaf (never two spines: "
                                    "the spines of a plane share an AS)",
                    "reachable_gpu_pair": "a live port of each GPU on one live leaf, or on two leaves sharing a live spine "
                                          "with live links to both"},
        "plan": {"cluster": plan["cluster"].get("name"), "gpus": fab.n_gpus, "switches": fab.n_switches, "fabric_links": len(fab.link_u),
                 "leaves_per_plane": sz["leaves_per_plane"], "spines_per_plane": sz["spines_per_plane"], "planes": sz["planes"],
                 "switch_model": plan["models"]["switch"]["name"]},
        "parameters": {"probabilities": list(probabilities), "samples": samples, "seed": seed,
                       "failures": "independent, each host link and each leaf-spine link with probability p"},
        "single_failures": {"switch": _worst(singles, "switch"), "fabric_link": _worst(singles, "fabric_link"), "elements": singles},
        "random_link_failures": random,
        "not_applicable": NOT_APPLICABLE,
    }


ROFT_SINGLE_COLUMNS = ["count", "GPU ports cut off", "GPU pairs w/o routed path", "GPU pairs disconnected"]


def single_failure_rows(doc: dict) -> list[tuple[str, list[str]]]:
    """The single-failures table of a ROFT analyze.json: (failed element, its figures in ROFT_SINGLE_COLUMNS' order)."""
    sf = doc["single_failures"]
    return [(label, [str(sf[k]["elements"])] + [f"{sf[k][f'max_{f}']['value']:,}" for f in
                                                ("gpu_ports_cut_off", "gpu_pairs_without_routed_path", "gpu_pairs_disconnected")])
            for k, label in (("switch", "one switch"), ("fabric_link", "one leaf-spine link")) if sf[k]["elements"]]
