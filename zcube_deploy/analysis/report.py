"""`zcube analyze`: run the analysis on a plan and write DIR/analyze.json and DIR/unreachability.png."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from zcube_deploy.analysis.fabric import dual_plane_clos, zcube_from_plan
from zcube_deploy.analysis.failures import State, monte_carlo, pairs, path_statistics, physical_lost_pairs
from zcube_deploy.analysis.islands import gpus_by_ports, island_designs, island_plan
from zcube_deploy.analysis.routed import DENSE_GPU_LIMIT, RoutedModel, bgp_single_failures
from zcube_deploy.analysis.roft import RoftFabric, analyze_roft
from zcube_deploy.analysis.roft import single_failure_elements as roft_single_failure_elements
from zcube_deploy.analysis.single import single_failures
from zcube_deploy.errors import PlanFileError
from zcube_deploy.plan.model import projection
from zcube_deploy.plan.roles import ROFT_ROLES, ZCUBE_ROLES, design_of
from zcube_deploy.topology.forwarding import SWITCH_FIELDS

PLAN_FIELDS = projection(switches={"name", "group", "index", "plane", "interfaces"} | SWITCH_FIELDS, servers={"name": None, "nics": None},
                         cables={"id", "kind", "a", "b"}, sizing=None, models=None, cluster=None, routing=None,
                         settings=None)
DEFAULT_PROBABILITIES = (0.001, 0.002, 0.005, 0.01, 0.02, 0.05)


def _single_summary(rows: list[dict], kind: str) -> dict:
    sel = [r for r in rows if r["kind"] == kind]
    if not sel:
        return {"elements": 0}

    def worst(key: str) -> dict:
        r = max(sel, key=lambda r: (r[key], r["element"]))
        return {"value": r[key], "element": r["element"]}

    return {
        "elements": len(sel),
        "every_gpu_keeps_a_path": all(r["every_gpu_keeps_a_path"] for r in sel),
        "every_gpu_keeps_a_routed_path": all(r["every_gpu_keeps_a_routed_path"] for r in sel),
        "max_gpu_ports_cut_off": worst("gpu_ports_cut_off"),
        "max_port_pairs_lost": worst("port_pairs_lost"),
        "max_gpu_pairs_without_routed_path": worst("gpu_pairs_without_routed_path"),
        "max_gpu_pairs_disconnected": worst("gpu_pairs_disconnected"),
        "longest_port_detour_switches": worst("longest_port_detour_switches"),
        "longest_gpu_detour_switches": worst("longest_gpu_detour_switches"),
    }


SINGLE_FAILURE_COLUMNS = ("count", "GPU ports cut off", "port pairs lost", "GPU pairs w/o routed path", "GPU pairs disconnected",
                          "longest detour (port / GPU)")


def single_failure_rows(doc: dict) -> list[tuple[str, list[str]]]:
    """The single-failures table of an analyze.json: (failed element, its figures in SINGLE_FAILURE_COLUMNS'
    order, as text) per kind of element the plan has."""
    rows = []
    for kind, label in (("switch", "one switch"), ("fabric_link", "one fabric link")):
        sm = doc["single_failures"][kind]
        if sm["elements"]:
            rows.append((label, [str(sm["elements"]), f"{sm['max_gpu_ports_cut_off']['value']:,}", f"{sm['max_port_pairs_lost']['value']:,}",
                                 f"{sm['max_gpu_pairs_without_routed_path']['value']:,}", f"{sm['max_gpu_pairs_disconnected']['value']:,}",
                                 f"{sm['longest_port_detour_switches']['value']} / {sm['longest_gpu_detour_switches']['value']} switches"]))
    return rows


def analyze_plan(plan: dict, probabilities=DEFAULT_PROBABILITIES, samples: int = 400, seed: int = 1) -> dict:
    """The whole analysis as one JSON-able document (deterministic for a given plan, samples and seed); a ROFT plan's
    is analysis/roft.py's, a plan mixing designs (a migration stage) is not analysed."""
    roles = {s["group"] for s in plan["switches"]}
    if roles <= ROFT_ROLES:
        return analyze_roft(plan, probabilities, samples, seed)
    if not roles <= ZCUBE_ROLES:
        if design_of(plan) == "stage":
            return analyze_stage(plan, probabilities, samples, seed)
        raise PlanFileError(f"analyze takes a plan of one design or a migration stage's (design: stage); this one is "
                            f"{design_of(plan)!r} with switches of roles {', '.join(sorted(roles))}")
    fab, rt = zcube_from_plan(plan)
    sw = plan["models"]["switch"]
    h = plan["sizing"]["logical_ports"]  # switch ports at the NIC speed; the Clos uplinks run at twice that
    clos = dual_plane_clos(fab.n_gpus, h, h // 2)
    model = RoutedModel(plan, fab, rt)
    mode = model.mode
    if model.reconverges:
        singles = bgp_single_failures(fab, model)
        routed_lost = model.lost
        routed_exact = True
        modelled = "eBGP best paths (shortest AS paths over the surviving links, ECMP) and the host fallbacks"
    else:
        singles = single_failures(fab, rt)
        exact = _static_with_fallbacks(model, singles, fab)
        sampled_exact = fab.n_gpus <= DENSE_GPU_LIMIT  # the Monte-Carlo states' sparse work stays bounded
        routed_lost = model.lost if exact and sampled_exact else None
        routed_exact = exact and sampled_exact
        if exact and sampled_exact:
            modelled = "the static switch routes and the host fallbacks"
        elif exact:
            modelled = ("the static switch routes and the host fallbacks (single failures); random link failures: the static "
                        f"switch routes of the cross-group port pairs only above {DENSE_GPU_LIMIT:,} GPUs (the host fallbacks "
                        "are not counted there; those figures are an upper bound on what is lost)")
        else:
            modelled = ("the static switch routes of the cross-group port pairs only (the host fallbacks are not counted above "
                        "4,096 GPUs; the figures are an upper bound on what is lost)")
    return {
        "routing": {"mode": mode, "same_group_fallback": None if model.reconverges else bool(model.same_group),
                    "routed_means": modelled,
                    "routed_exact": routed_exact,  # False: the routed figures of random failures are an upper bound
                    "reachable_gpu_pair": "some port of GPU a and some port of GPU b pass a probe (request and reply) "
                                          "under the routing mode after convergence (analysis/predict.py)"},
        "plan": {"cluster": plan["cluster"].get("name"), "gpus": fab.n_gpus, "switches": fab.n_switches,
                 "fabric_links": len(fab.link_u), "S": plan["sizing"]["S"], "K": plan["sizing"]["K"], "m": plan["sizing"]["m"],
                 "switch_model": sw["name"]},
        "dual_plane_clos": {"gpus": clos.n_gpus, "switches": clos.n_switches, "switch_links": len(clos.link_u),
                            "rule": "HPN-style, the `zcube compare` rule for the same GPU count and switch capacity"},
        "parameters": {"probabilities": list(probabilities), "samples": samples, "seed": seed,
                       "failures": "independent, each host link and each switch-to-switch link with probability p"},
        "path_statistics": _path_statistics(fab, rt, model.reconverges),
        "single_failures": {"switch": _single_summary(singles, "switch"), "fabric_link": _single_summary(singles, "fabric_link"),
                            "elements": singles},
        "random_link_failures": monte_carlo(fab, rt, clos, list(probabilities), samples, seed, routed_lost),
    }


ISLAND_NAMES = {"roft": "ROFT", "zcube": "ZCube"}
CROSS_ISLAND_WHY = ("a migration stage keeps its two islands apart (no cable, no route between them: docs/migrate.md); "
                    "their GPU pairs are not expected to reach, so they are neither counted as lost nor as reached")


def healthy_reachability(island: dict, design: str) -> dict:
    """An island's GPU pairs with nothing failed: how many have no routed path and no path at all (the counts the
    failure analysis starts from; ``unreachable_routed`` None when the routed count is beyond the model's limit)."""
    both, one = gpus_by_ports(island)
    if design == "roft":
        rf = RoftFabric(island)
        fab, routed = rf.fab, rf.routed_lost_pairs
    else:
        fab, rt = zcube_from_plan(island)
        routed = RoutedModel(island, fab, rt).lost
    healthy = State.healthy(fab)
    return {"gpus": both, "gpus_with_one_port": one, "gpu_pairs": pairs(fab.n_gpus), "unreachable_routed": routed(healthy),
            "unreachable_any_path": physical_lost_pairs(fab, healthy)}


def analyze_stage(plan: dict, probabilities, samples: int, seed: int) -> dict:
    """A migration stage's plan: each island (islands.island_plan) on its own, as a plan of its design, with its GPU
    pairs' reachability when nothing has failed, then its failure analysis (left out, with the reason, for an island
    that does not reach itself healthy); the pairs across the islands are reported as not checked, out of scope
    (CROSS_ISLAND_WHY), never as lost or reached. ``problems``: what makes the stage fail its own islands (exit 1)."""
    islands: dict[str, dict] = {}
    problems: list[str] = []
    for design in island_designs(plan):
        sub = island_plan(plan, design)
        name = ISLAND_NAMES[design]
        reach = healthy_reachability(sub, design)
        bad = [f"{name} island: {reach[k]:,} of {reach['gpu_pairs']:,} GPU pairs {what} with nothing failed"
               for k, what in (("unreachable_routed", "without a routed path"), ("unreachable_any_path", "without any path")) if reach[k]]
        if reach["gpus_with_one_port"]:
            bad.append(f"{name} island: {reach['gpus_with_one_port']} GPU(s) with one NIC port on the island (in no pair counted)")
        if reach["unreachable_routed"] is None:
            bad.append(f"{name} island: the routed reachability was not counted (beyond the routed model's limit)")
        problems += bad
        islands[design] = {"name": name, "reachability": reach, "analysis": None if bad else analyze_plan(sub, probabilities, samples, seed),
                           "not_analysed": "; ".join(bad) or None}
    gpus = [isl["reachability"]["gpus"] for isl in islands.values()]
    cross = sum(a * b for i, a in enumerate(gpus) for b in gpus[i + 1:])
    return {
        "design": "stage",
        "plan": {"cluster": plan["cluster"].get("name"), "gpus": sum(gpus), "switches": len(plan["switches"]), "islands": len(islands)},
        "parameters": {"probabilities": list(probabilities), "samples": samples, "seed": seed},
        "islands": islands,
        "cross_island": {"gpu_pairs": cross, "checked": False, "status": "not checked: out of scope", "why": CROSS_ISLAND_WHY},
        "problems": problems,
    }


def single_failure_elements(plan: dict) -> list[dict]:
    """The single-failure rows exactly as `zcube analyze` reports them (``single_failures.elements``):
    mode bgp's reconverged counts, mode static's recounted with the host fallbacks; a ROFT's from analysis/roft.py.
    A plan mixing designs (a migration stage) is refused as analyze refuses it."""
    roles = {s["group"] for s in plan["switches"]}
    if roles <= ROFT_ROLES:
        return roft_single_failure_elements(plan)
    if not roles <= ZCUBE_ROLES:
        raise PlanFileError(f"a plan of one design is needed; this one has switches of roles {', '.join(sorted(roles))} "
                            "(a migration stage)")
    fab, rt = zcube_from_plan(plan)
    model = RoutedModel(plan, fab, rt)
    if model.reconverges:
        return bgp_single_failures(fab, model)
    singles = single_failures(fab, rt)
    _static_with_fallbacks(model, singles, fab)
    return singles


def _path_statistics(fab, rt, reconverging: bool) -> dict:
    ps = path_statistics(fab, rt)
    if reconverging:  # mode bgp: the routed path is the shortest one (AS-path length 1 across groups)
        cg = ps["cross_group"]
        unique = cg.get("every_pair_has_exactly_one_shortest_switch_path")
        cg["routed_paths_per_port_pair"] = cg["shortest_switch_paths"]["max"] if unique else None
        ps["gpu_pairs"]["routed_path_switches"] = cg["path_switches"]["max"] if unique else None
    return ps


def _static_with_fallbacks(model: RoutedModel, singles: list[dict], fab) -> bool:
    """Mode static: recount each single failure's GPU pairs without a routed path with the host
    fallbacks (the static cross-group count is kept as ..._switch_routes_only), at any size. False
    (and the rows keep the switch routes' count) when a state is beyond the sparse count's limit."""
    healthy = State.healthy(fab)
    idx = {n: i for i, n in enumerate(fab.switch_names)}
    link = {cid: k for k, cid in enumerate(fab.link_ids)}
    recount = []
    for row in singles:
        if not row["gpu_pairs_without_routed_path"]:
            recount.append(0)  # the host fallbacks only add paths: nothing lost by the switch routes alone, nothing lost
            continue
        st = State(healthy.host_up, healthy.link_up.copy(), healthy.switch_up.copy())
        if row["kind"] == "switch":
            st.switch_up[idx[row["element"]]] = False
        else:
            st.link_up[link[row["element"]]] = False
        lost = model.lost(st)
        if lost is None:
            return False
        recount.append(lost)
    for row, lost in zip(singles, recount):
        row["gpu_pairs_without_routed_path_switch_routes_only"] = row["gpu_pairs_without_routed_path"]
        row["gpu_pairs_without_routed_path"] = lost
        row["every_gpu_keeps_a_routed_path"] = lost == 0
    return True


def _series(doc: dict, prefix: str = "") -> list[tuple[list[dict], str, str, str, str]]:
    """(rows, key, label, colour, marker) of each curve of the plot: a ROFT's two, a ZCube's three (and the Clos's), a
    stage's of each island analysed (labelled by island, the ZCube island's in other colours)."""
    if doc.get("design") == "stage":
        return [c for d, isl in sorted(doc["islands"].items()) if isl["analysis"]
                for c in _series(isl["analysis"], f"{isl['name']} island: ")]
    rows = doc["random_link_failures"]
    if doc.get("design") == "roft":
        return [(rows, "roft", f"{prefix}ROFT (any live path)", "tab:blue", "o"), (rows, "roft_routed", f"{prefix}ROFT (eBGP as rendered)", "tab:cyan", "s")]
    colours = ("tab:green", "tab:olive") if prefix else ("tab:blue", "tab:cyan")
    return [(rows, "zcube", f"{prefix}ZCube (any live path)", colours[0], "o"),
            (rows, "zcube_routed", f"{prefix}ZCube ({doc.get('routing', {}).get('mode', 'static')} routing as rendered)", colours[1], "s"),
            (rows, "dual_plane_clos", f"{prefix}dual-plane Clos, same size", "tab:red", "^")]


def plot_unreachability(doc: dict, path: Path) -> Path:
    import matplotlib  # start-up time (~0.5 s), and the Agg backend is chosen before pyplot loads

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7.5, 5), dpi=110)
    p = np.array(doc["parameters"]["probabilities"], dtype=float)
    for rows, key, label, colour, marker in _series(doc):
        mean = np.array([r[key]["mean"] for r in rows])
        lo = np.array([r[key]["ci95"][0] for r in rows])
        hi = np.array([r[key]["ci95"][1] for r in rows])
        ok = mean > 0
        if ok.any():
            ax.errorbar(p[ok], mean[ok], yerr=[mean[ok] - np.maximum(lo[ok], mean[ok] * 1e-3), hi[ok] - mean[ok]],
                        label=label, color=colour, marker=marker, capsize=3, linewidth=1.2)
    fine = np.geomspace(p.min(), p.max(), 50)
    if doc.get("design", "zcube") == "zcube":  # ZCube's and the Clos's models
        ax.plot(fine, 2 * fine ** 2, "--", color="tab:blue", alpha=0.5, label="model 2p^2")
        ax.plot(fine, 4 * fine ** 2, "--", color="tab:red", alpha=0.5, label="model 4p^2")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("link failure probability p")
    ax.set_ylabel("fraction of GPU pairs unreachable")
    plan = doc["plan"]
    par = doc["parameters"]
    where = f" on {plan['islands']} islands (each island's own GPU pairs)" if doc.get("design") == "stage" else ""
    ax.set_title(f"{plan['cluster']}: {plan['gpus']:,} GPUs{where}, {par['samples']} trials per p (95% CI)", fontsize=10)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, format="png", metadata={"Software": None})
    plt.close(fig)
    return path


def write_analysis(doc: dict, out_dir: str | Path) -> tuple[Path, Path]:
    """DIR/analyze.json and DIR/unreachability.png, both or neither: each is written beside under a
    temporary name, the plot renamed into place first and analyze.json last."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    js, png = out / "analyze.json", out / "unreachability.png"
    js_tmp, png_tmp = out / "analyze.json.tmp", out / "unreachability.png.tmp"
    try:
        js_tmp.write_text(json.dumps(doc, indent=1, sort_keys=True) + "\n", encoding="utf-8")
        plot_unreachability(doc, png_tmp)
        png_tmp.replace(png)
        js_tmp.replace(js)
    finally:
        js_tmp.unlink(missing_ok=True)
        png_tmp.unlink(missing_ok=True)
    return js, png
