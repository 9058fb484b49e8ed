"""One traffic study: designs x workloads x (healthy, failed), each run through the fluid model,
summed up in the document `zcube traffic` writes as DIR/traffic.json (docs/traffic.md)."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field

import numpy as np

from zcube_deploy.analysis.designs import parse_capacity
from zcube_deploy.catalog import parse_speed
from zcube_deploy.analysis.report import PLAN_FIELDS as ANALYZE_FIELDS
from zcube_deploy.analysis.islands import island_designs, island_plan
from zcube_deploy.errors import InputErrors, PlanFileError, Problem, names_hint
from zcube_deploy.plan.model import projection
from zcube_deploy.plan.roles import ROFT_ROLES, ZCUBE_ROLES, design_of
from zcube_deploy.traffic import workloads as wl
from zcube_deploy.traffic.flows import SubFlows, Transfers, aggregated_all_to_all, build_subflows
from zcube_deploy.traffic.fluid import run_fluid
from zcube_deploy.traffic.net import (DEFAULT_NVLINK_GBPS, DESIGN_LABELS, KIND_FABRIC, Net, NotModelled, build_design, roft_from_plan,
                                      zcube_from_plan)

# the paper's Fig. 3b (4,096 GPUs, GPT-3 175B training, one ToR down): training slowdown per design
PAPER_ONE_TOR_SLOWDOWN = {"zcube": 0.028, "roft": 0.469, "rail-only": 0.462, "hpn": 0.090}
DEFAULT_BYTES = {"all-to-all": 1 << 20, "all-gather": 1 << 30, "allreduce": 1 << 30}  # per GPU pair / per GPU
HOT_LINKS = 10
ALL_TO_ALL_GPU_LIMIT = 8192  # per GPU pair: 67 million flows; larger fabrics use all-to-all-switch
NO_ZCUBE = ("a ROFT plan has no ZCube to model: plan the ZCube inventory (zcube plan INVENTORY -o DIR) and run "
            "zcube traffic DIR/plan.json")


# what `zcube traffic` reads of plan.json: analyze's fields and the port maps (a ROFT's host and fabric speeds)
PLAN_FIELDS = {**ANALYZE_FIELDS, **projection(port_map=None)}


@dataclass
class Options:
    designs: tuple[str, ...] = ()  # empty: the plan's own design (a stage: its islands)
    workloads: tuple[str, ...] = ("all-to-all",)
    nbytes: float | None = None
    ring: str = "all"
    ecmp: str = "split"
    samples: int = 1
    seed: int = 1
    fail: str | None = None
    nvlink_gbps: float = DEFAULT_NVLINK_GBPS
    pd: wl.PdParams = field(default_factory=wl.PdParams)
    trace: str | None = None
    pd_given: tuple[str, ...] = ()  # the pd options given on the command line (read only with workload pd)


def parse_list(text: str, known: tuple[str, ...], what: str, all_of: tuple[str, ...] | None = None) -> tuple[str, ...]:
    items = [x.strip() for x in text.split(",") if x.strip()]
    if all_of is not None and items == ["all"]:
        return all_of
    bad = [x for x in items if x not in known]
    if bad or not items:
        raise InputErrors(Problem(f"--{what}", f"{text!r}: unknown {', '.join(bad) or 'empty list'}",
                                  f"one or a comma-separated list of {', '.join(known)}" + (", or all" if all_of else "")))
    return tuple(dict.fromkeys(items))


def parse_fail(text: str | None) -> tuple[str, str] | None:
    """'link:CABLE', 'switch:NAME', 'tor', 'random:N' -> (kind, argument)."""
    if not text:
        return None
    kind, _, arg = text.partition(":")
    if kind == "tor" and not arg:
        return kind, ""
    if kind in ("link", "switch") and arg:
        return kind, arg
    if kind == "random" and arg.isdigit() and int(arg) > 0:
        return kind, arg
    raise InputErrors(Problem("--fail", f"{text!r} is not link:CABLE, switch:NAME, tor or random:N (N > 0)"))


def tor_switch(net: Net) -> int:
    """The switch carrying the most GPU ports; ties: the first in the design's order, ZCube's even
    (single-rail, top-of-rack) switches before its odd ones."""
    sw = net.port_switch[net.port_switch >= 0]
    count = np.bincount(sw, minlength=net.n_switches)
    order = np.arange(net.n_switches)
    if net.design == "zcube":
        even = np.array([not name.split("-")[-1].startswith("O") for name in net.switch_names])
        if net.table is not None:
            even = ~net.table.is_odd
        order = np.concatenate([order[even], order[~even]])
    return int(order[np.argmax(count[order])])


def failed(net: Net, spec: tuple[str, str], seed: int, missing_ok: bool = False) -> Net | None:
    """``net`` with the failure applied; None when the failure names an element of another design (a
    sized design), or with ``missing_ok`` one this net lacks (the other island of a stage holds it)."""
    kind, arg = spec
    if kind in ("link", "switch"):
        if not net.as_built:
            return None
        names = net.switch_names if kind == "switch" else net.cable_names
        if arg not in names:
            if missing_ok:
                return None
            what = "switch named" if kind == "switch" else "cable"
            raise InputErrors(Problem("--fail", f"no {what} {arg!r} in the plan", names_hint(arg, list(names), kind.replace("link", "cable"))))
        if kind == "switch":
            return net.with_failure(f"switch {arg}", switches=[net.switch_names.index(arg)])
        return net.with_failure(f"cable {arg}", cables=[net.cable_names.index(arg)])
    if kind == "tor":
        s = tor_switch(net)
        return net.with_failure(f"switch {net.switch_names[s]} (most GPUs)", switches=[s])
    n = int(arg)
    cables = len(net.cable_names)
    if n > cables:
        raise InputErrors(Problem("--fail", f"random:{n}: the {DESIGN_LABELS[net.design]} design has only {cables:,} cables"))
    pick = np.sort(np.random.default_rng(seed).choice(cables, n, replace=False))
    return net.with_failure(f"{n} random cables (seed {seed})", cables=pick)


def transfers_for(workload: str, net: Net, opts: Options) -> tuple[Transfers | None, dict]:
    if workload == "all-to-all-switch":
        nb = opts.nbytes or DEFAULT_BYTES["all-to-all"]
        return None, {"bytes": nb, "bytes_mean": "per GPU pair"}
    if workload == "all-to-all":
        nb = opts.nbytes or DEFAULT_BYTES[workload]
        return wl.all_to_all(net.n_gpus, nb), {"bytes": nb, "bytes_mean": "per GPU pair"}
    if workload in ("all-gather", "allreduce"):
        nb = opts.nbytes or DEFAULT_BYTES[workload]
        tr = wl.collective(workload, net.server_of, nb, opts.ring, net.local_of)
        return tr, {"bytes": nb, "bytes_mean": "per GPU", "ring": opts.ring}
    if workload == "pd":
        why = wl.pd_misfit(opts.pd, net.n_gpus, net.server_of, net.gpus_per_server)
        if why:
            raise NotModelled(why)
        tr, info = wl.pd(opts.pd, net.n_gpus)
        return tr, {"bytes": float(tr.nbytes.sum()), "bytes_mean": "in total", "pd": info}
    tr = wl.read_trace(opts.trace, net.n_gpus)
    return tr, {"bytes": float(tr.nbytes.sum()), "bytes_mean": "in total", "trace": str(opts.trace)}


def _pct(x: np.ndarray) -> dict:
    if len(x) == 0:
        return {"min": None, "p50": None, "p99": None}
    return {"min": float(x.min()), "p50": float(np.percentile(x, 50)), "p99": float(np.percentile(x, 99))}


def measure(net: Net, tr: Transfers, ecmp: str, rng: np.random.Generator | None) -> dict:
    """Run one workload on one net: the fluid run's figures (see docs/traffic.md, "Outputs")."""
    sf = build_subflows(net, tr, ecmp, rng)
    res = run_fluid(net.cap, sf)
    finish = np.full(len(tr), np.nan)
    if len(sf):
        first = np.flatnonzero(np.r_[True, sf.transfer[1:] != sf.transfer[:-1]])
        finish[sf.transfer[first]] = np.maximum.reduceat(res.finish, first)
    routed = ~np.isnan(finish)
    begin = float(tr.start[routed].min()) if routed.any() else 0.0
    completion = float(finish[routed].max() - begin) if routed.any() else None
    dur = finish[routed] - tr.start[routed]
    rate = tr.nbytes[routed][dur > 0] * 8 / 1e9 / dur[dur > 0]
    util = res.link_gbit / (net.cap * completion) if completion else np.zeros(net.n_links)
    hot = np.lexsort((np.arange(net.n_links), -util))[:HOT_LINKS]
    out = {"flows": int(len(tr)), "sub_flows": int(len(sf)), "unrouted_flows": int(len(sf.unrouted)),
           "completion_time_s": completion, "mlu": float(util.max()) if completion else None, "rate_gbps": _pct(rate),
           "hot": [{**net.link_label(int(k)), "utilisation": float(util[k])} for k in hot if util[k] > 0],
           "events": res.events, "fabric_busiest_flows": _busiest(net, sf) if ecmp == "hash" else None,
           "switch_utilisation": _per_switch(net, util)}
    if net.design == "zcube":
        out["fabric_cable_utilisation"] = _fabric_cables(net, util)
    if tr.group is not None:
        kv = np.full(int(tr.group.max()) + 1, -np.inf)
        np.maximum.at(kv, tr.group[routed], finish[routed] - tr.start[routed])
        out["kv_transfer_s"] = {k: v for k, v in _pct(kv[np.isfinite(kv)]).items() if k != "min"}
    return out


def measure_aggregated(net: Net, nbytes: float) -> dict:
    """``all-to-all-switch``: the all-to-all aggregated by switch pair (flows.aggregated_all_to_all);
    healthy designs without PXN only (NotModelled otherwise)."""
    if net.pxn:
        raise NotModelled(f"{DESIGN_LABELS[net.design]}: aggregation by switch pair does not model PXN (use all-to-all)")
    if net.failure:
        raise NotModelled("aggregation by switch pair assumes every port works (use all-to-all with a failure)")
    cap, sf, labels = aggregated_all_to_all(net, nbytes)
    res = run_fluid(cap, sf)
    completion = float(res.finish.max()) if len(sf) else None
    util = np.divide(res.link_gbit, cap * completion, out=np.zeros(len(cap)), where=cap > 0) if completion else np.zeros(len(cap))
    hot = np.lexsort((np.arange(len(cap)), -util))[:HOT_LINKS]
    L = net.n_links

    def label(k: int) -> dict:
        if k < L:
            return net.link_label(k)
        sw = net.switch_names[(k - L) % net.n_switches]
        up = k - L < net.n_switches
        return {"link": k, "from": labels[k - L] if up else sw, "to": sw if up else labels[k - L], "kind": "host bundle",
                "cable": None, "gbps": float(cap[k])}

    n = net.n_gpus
    rate = sf.gbit / res.finish * len(net.primary)  # per GPU pair: its shares over the policy's port pairs
    return {"flows": n * (n - 1), "sub_flows": int(len(sf)), "unrouted_flows": 0, "completion_time_s": completion,
            "mlu": float(util.max()) if completion else None, "rate_gbps": _pct(rate),
            "hot": [{**label(int(k)), "utilisation": float(util[k])} for k in hot if util[k] > 0], "events": res.events,
            "fabric_busiest_flows": None, "switch_utilisation": _per_switch(net, util[:L]),
            **({"fabric_cable_utilisation": _fabric_cables(net, util[:L])} if net.design == "zcube" else {}),
            "aggregated": "by switch pair: one flow per (source switch, destination route key); same-server pairs over NVLink left out"}


def _fabric_cables(net: Net, util: np.ndarray) -> dict[str, float]:
    """Per fabric cable of the plan: the utilisation of its busier direction (for `zcube hall --traffic`)."""
    fab = np.flatnonzero(net.kind == KIND_FABRIC)
    per = np.zeros(len(net.cable_names))
    np.maximum.at(per, net.cable[fab], util[fab])
    cables = np.unique(net.cable[fab])
    return {net.cable_names[c]: round(float(per[c]), 6) for c in cables}


def _busiest(net: Net, sf: SubFlows) -> int:
    """Most hashed sub-flows on one fabric link."""
    has = sf.route >= 0
    per_route = np.bincount(sf.route[has], minlength=sf.routes.n)
    per_link = np.bincount(sf.routes.link, weights=per_route[sf.routes.row], minlength=net.n_links)
    fab = net.kind == KIND_FABRIC
    return int(per_link[fab].max()) if fab.any() else 0


def _per_switch(net: Net, util: np.ndarray) -> dict:
    """Per switch: the mean and the maximum utilisation of the links it sends and receives on."""
    out = {}
    ends = np.concatenate([net.end_a, net.end_b])
    u2 = np.concatenate([util, util])
    sw = ends < net.n_switches
    s, u = ends[sw], u2[sw]
    mean = np.bincount(s, weights=u, minlength=net.n_switches) / np.maximum(np.bincount(s, minlength=net.n_switches), 1)
    mx = np.zeros(net.n_switches)
    np.maximum.at(mx, s, u)
    for i, name in enumerate(net.switch_names):
        out[name] = {"mean": round(float(mean[i]), 6), "max": round(float(mx[i]), 6)}
    return out


def evaluate(net: Net, tr: Transfers | None, opts: Options) -> dict:
    """``measure`` once (ecmp split) or over ``opts.samples`` hashings (completion: their mean)."""
    if tr is None:  # all-to-all-switch
        return measure_aggregated(net, opts.nbytes or DEFAULT_BYTES["all-to-all"])
    if opts.ecmp == "split":
        return measure(net, tr, "split", None)
    runs = [measure(net, tr, "hash", np.random.default_rng([opts.seed, i])) for i in range(opts.samples)]
    out = runs[0]
    times = [r["completion_time_s"] for r in runs if r["completion_time_s"] is not None]
    out["completion_time_s"] = float(np.mean(times)) if times else None
    out["completion_time_samples_s"] = times
    out["fabric_busiest_flows_mean"] = float(np.mean([r["fabric_busiest_flows"] for r in runs]))
    return out


def plan_kind(plan: dict) -> str:
    """``zcube``, ``roft`` or ``stage`` (switches of both designs: a migration stage), from the switches'
    roles (plan/roles.py); a plan with a role of neither design is bad input (exit 2)."""
    designs = island_designs(plan)
    unknown = sorted({s["group"] for s in plan["switches"]} - ZCUBE_ROLES - ROFT_ROLES)
    if unknown or not designs:
        raise PlanFileError(f"switch roles {', '.join(unknown) or 'none'}: `zcube traffic` takes a ZCube plan (roles odd, even), "
                            "a ROFT plan (leaf, spine) or a migration stage's plan (both)")
    return designs[0] if len(designs) == 1 else "stage"


def is_stage(plan: dict) -> bool:
    """A migration stage's plan: switches of both designs, or ``design: stage`` (the last stage holds one island)."""
    return plan_kind(plan) == "stage" or design_of(plan) == "stage"


def as_built(plan: dict, design: str, nvlink_gbps: float) -> Net:
    """The plan's own fabric (or an island's) as built: its ZCube or its ROFT."""
    return roft_from_plan(plan, nvlink_gbps) if design == "roft" else zcube_from_plan(plan, nvlink_gbps)


def design_nets(plan: dict, opts: Options) -> list[tuple[str, Net | None, str]]:
    """(design key, net or None, note) for each requested design: the plan's own design as built, the
    others sized for the plan's GPU count, GPUs per server, switch capacity and NIC port speed. A ROFT
    plan has no ZCube to model: its ``zcube`` row is not modelled, with a note saying what to run."""
    own = plan_kind(plan)
    built = as_built(plan, own, opts.nvlink_gbps)
    designs = opts.designs or (own,)
    if own != "zcube" and designs == ("zcube",):
        raise InputErrors(Problem("--design", "zcube: the plan is a ROFT; `zcube traffic` models a ZCube from a ZCube plan",
                                  "plan the ZCube inventory (zcube plan INVENTORY -o DIR) and run zcube traffic DIR/plan.json; "
                                  "or --design roft (this plan as built), hpn, rail-only, clos, all"))
    cap = parse_capacity(plan["models"]["switch"]["capacity"])
    b = float(parse_speed(plan["models"]["nic"]["speed"]))
    out = []
    for key in designs:
        if key == own:
            out.append((key, built, "; ".join(built.notes)))
        elif key == "zcube":
            out.append((key, None, NO_ZCUBE))
        else:
            try:
                out.append((key, build_design(key, built.n_gpus, built.gpus_per_server, cap, b, opts.nvlink_gbps), ""))
            except NotModelled as exc:
                out.append((key, None, str(exc)))
    return out


def check_options(opts: Options, n_gpus: int) -> None:
    """Every problem of the options at once (InputErrors, exit 2)."""
    probs = []
    if opts.ring not in wl.RINGS:
        probs.append(Problem("--ring", f"{opts.ring!r} is not one of {', '.join(wl.RINGS)}"))
    if opts.ecmp not in ("split", "hash"):
        probs.append(Problem("--ecmp", f"{opts.ecmp!r} is not split or hash"))
    if opts.samples != 1 and opts.ecmp != "hash":
        probs.append(Problem("--samples", f"{opts.samples} hashings asked for with --ecmp {opts.ecmp}: only --ecmp hash draws them",
                             "add --ecmp hash, or leave --samples out"))
    if opts.trace and "trace" not in opts.workloads:
        probs.append(Problem("--trace", f"{opts.trace} given without the trace workload: it would not be read",
                             "add trace to --workload, or leave --trace out"))
    if opts.pd_given and "pd" not in opts.workloads:
        probs.append(Problem(", ".join(opts.pd_given), "pd options given without the pd workload: they would not be used",
                             "add pd to --workload, or leave them out"))
    if opts.ecmp == "hash" and "all-to-all-switch" in opts.workloads:
        probs.append(Problem("--ecmp", "all-to-all-switch aggregates flows: it has no per-flow hashing", "use --ecmp split"))
    if opts.samples < 1:
        probs.append(Problem("--samples", "must be at least 1"))
    if opts.nbytes is not None and not (np.isfinite(opts.nbytes) and opts.nbytes > 0):
        probs.append(Problem("--bytes", "must be a positive number of bytes"))
    if not opts.nvlink_gbps > 0:
        probs.append(Problem("--nvlink-gbps", "must be positive"))
    if "pd" in opts.workloads:
        probs += wl.pd_problems(opts.pd, n_gpus)
    if "trace" in opts.workloads and not opts.trace:
        probs.append(Problem("--workload", "trace needs --trace FILE.csv"))
    if "all-to-all" in opts.workloads and n_gpus > ALL_TO_ALL_GPU_LIMIT:
        probs.append(Problem("--workload", f"all-to-all per GPU pair on {n_gpus:,} GPUs is {n_gpus * (n_gpus - 1):,} flows",
                             f"at most {ALL_TO_ALL_GPU_LIMIT:,} GPUs per GPU pair; use all-to-all-switch (aggregated by switch pair)"))
    if probs:
        raise InputErrors(probs)


def study(plan: dict, opts: Options, progress=None, baseline: dict | None = None, baseline_note: str = "") -> dict:
    """Every design x workload, healthy and (with ``opts.fail``) failed: the traffic.json document. A
    migration stage's plan goes to :func:`study_stage` (``baseline``: its FROM plan, or None and why)."""
    if is_stage(plan):
        return study_stage(plan, opts, progress, baseline, baseline_note)
    spec = parse_fail(opts.fail)
    check_options(opts, sum(len(s.get("nics") or ()) for s in plan["servers"]) // 2)
    rows = []
    for key, net, note in design_nets(plan, opts):
        rows += net_rows(key, net, note, spec, opts, progress)
    return {"designs": rows, "parameters": _parameters(plan, opts)}


ISLAND_LABELS = {"roft": "ROFT island", "zcube": "ZCube island"}
CROSS_ISLAND_WHY = ("a migration stage keeps its islands apart (no cable, no route between them: docs/migrate.md); a workload's "
                    "transfers between GPUs of different islands cannot run during the stage and are not modelled")


def study_stage(plan: dict, opts: Options, progress=None, baseline: dict | None = None, baseline_note: str = "") -> dict:
    """A migration stage's plan: each island (analysis/islands.island_plan: its in-service GPUs, its
    design) modelled on its own as built, rows labelled by island; the GPU pairs across the islands
    reported as not modelled (out of scope), never dropped silently; with ``baseline`` (the FROM
    plan) the same workloads on its whole fabric and, per island, what the stage costs: the GPUs'
    mean send rate on the island over the one on the whole FROM fabric."""
    if opts.designs:
        raise InputErrors(Problem("--design", f"{','.join(opts.designs)}: a migration stage's plan is modelled island by island, "
                                  "each as built", "leave --design out"))
    if "trace" in opts.workloads:
        raise InputErrors(Problem("--workload", "trace: a trace numbers the GPUs of one fabric; a stage's islands are two",
                                  "run the trace on the FROM or TO plan"))
    spec = parse_fail(opts.fail)
    nets = [(d, as_built(island_plan(plan, d), d, opts.nvlink_gbps)) for d in island_designs(plan)]
    check_options(opts, max(n.n_gpus for _, n in nets))
    if spec and spec[0] in ("link", "switch"):
        names = [set(n.switch_names if spec[0] == "switch" else n.cable_names) for _, n in nets]
        if not any(spec[1] in x for x in names):
            raise InputErrors(Problem("--fail", f"no {'switch' if spec[0] == 'switch' else 'cable'} {spec[1]!r} on either island of the stage",
                                      names_hint(spec[1], sorted(set().union(*names)), "switch" if spec[0] == "switch" else "cable")))
    rows = []
    for d, net in nets:
        rows += [{**r, "island": d} for r in net_rows(d, net, "; ".join(net.notes), spec, opts, progress, ISLAND_LABELS[d], True)]
    gpus = {d: n.n_gpus for d, n in nets}
    cross = sum(a * b for i, a in enumerate(gpus.values()) for b in list(gpus.values())[i + 1:])
    stage = {"islands": {d: {"label": ISLAND_LABELS[d], "gpus": n.n_gpus, "servers": len(n.server_names), "switches": n.n_switches}
                         for d, n in nets},
             "cross_island": {"gpu_pairs": cross, "ordered_pairs": 2 * cross, "modelled": False, "why": CROSS_ISLAND_WHY},
             "from_plan": None, "from_note": baseline_note, "cost": []}
    if baseline is not None:
        kind = plan_kind(baseline)
        if kind == "stage":
            raise InputErrors(Problem("FROM plan", "is itself a migration stage", "the FROM plan is the fabric as built (ROFT or ZCube)"))
        bnet = as_built(baseline, kind, opts.nvlink_gbps)
        base_rows = [{**r, "island": None, "baseline": True}
                     for r in net_rows(kind, bnet, "; ".join(bnet.notes), None, opts, progress, f"FROM plan ({DESIGN_LABELS[kind]}), whole fabric")]
        rows += base_rows
        stage["from_plan"] = {"design": kind, "gpus": bnet.n_gpus, "cluster": (baseline.get("cluster") or {}).get("name")}
        stage["cost"] = stage_cost(rows, base_rows)
    return {"designs": rows, "parameters": _parameters(plan, opts), "stage": stage}


def stage_cost(rows: list[dict], base_rows: list[dict]) -> list[dict]:
    """Per workload (healthy): the whole FROM fabric's completion time and mean GPU send rate, and each
    island's with its rate over the FROM one (1.0: the stage costs the island's GPUs nothing)."""
    out = []
    for b in base_rows:
        if b["failure"] is not None:
            continue
        entry = {"workload": b["workload"], "from_completion_time_s": b.get("completion_time_s"), "from_gpu_gbps": b.get("gpu_gbps"),
                 "islands": {}}
        for r in rows:
            if r.get("island") and r["workload"] == b["workload"] and r["failure"] is None:
                rate, ref = r.get("gpu_gbps"), b.get("gpu_gbps")
                entry["islands"][r["island"]] = {"gpus": r.get("gpus"), "completion_time_s": r.get("completion_time_s"), "gpu_gbps": rate,
                                                 "gpu_gbps_vs_from": rate / ref if rate and ref else None,
                                                 "modelled": r["modelled"], "note": r.get("note", "")}
        out.append(entry)
    return out


def net_rows(key: str, net: Net | None, note: str, spec, opts: Options, progress=None, label: str | None = None,
             missing_ok: bool = False) -> list[dict]:
    """One design's rows: each workload healthy and, with a failure, failed. ``missing_ok``: a failure
    naming a switch or cable the net lacks is skipped (an island of a stage holds some of them)."""
    rows = []
    variants = [(net, None)]
    if spec is not None and net is not None:
        fnet = failed(net, spec, opts.seed, missing_ok)
        if fnet is not None:
            variants.append((fnet, fnet.failure))
    for workload in opts.workloads:
        base = None
        for v, failure in variants:
            row = {"design": key, "label": label or DESIGN_LABELS[key], "workload": workload, "failure": failure, "note": note}
            if v is None:
                row.update({"modelled": False})
                rows.append(row)
                continue
            row.update({"modelled": True, "gpus": v.n_gpus, "gpus_per_server": v.gpus_per_server, "switches": v.n_switches,
                        "gpu_bandwidth_gbps": v.gpu_bandwidth_gbps})
            try:
                tr, info = transfers_for(workload, v, opts)
                row.update(info)
                row.update(evaluate(v, tr, opts))
            except NotModelled as exc:
                row.update({"modelled": False, "note": str(exc)})
                rows.append(row)
                continue
            row["gpu_gbps"] = gpu_gbps(row, v, tr)
            if failure is None:
                base = row["completion_time_s"]
            elif base and row["completion_time_s"] and not row["unrouted_flows"]:
                row["slowdown"] = row["completion_time_s"] / base - 1
                row["paper_one_tor_slowdown"] = PAPER_ONE_TOR_SLOWDOWN.get(key) if spec[0] == "tor" else None
            rows.append(row)
            if progress:
                progress(row)
    return rows


def gpu_gbps(row: dict, net: Net, tr: Transfers | None) -> float | None:
    """What a GPU sends into the network on average over the completion time (Gb/s): the workload's
    bytes between GPUs of different servers / GPUs / time (NVLink's left out); comparable between
    fabrics of different sizes (an island of a stage and the whole FROM fabric)."""
    t = row.get("completion_time_s")
    if not t:
        return None
    if tr is None:  # all-to-all-switch: every ordered pair of GPUs on different servers
        per = np.bincount(net.server_of)
        total = row["bytes"] * float(net.n_gpus ** 2 - (per.astype(float) ** 2).sum())
    else:
        total = float(tr.nbytes[net.server_of[tr.src] != net.server_of[tr.dst]].sum())
    return total / net.n_gpus * 8 / 1e9 / t


def _parameters(plan: dict, opts: Options) -> dict:
    return {"plan": (plan.get("cluster") or {}).get("name"), "routing_mode": (plan.get("routing") or {}).get("mode", "static"),
            "designs": list(opts.designs), "workloads": list(opts.workloads), "bytes": opts.nbytes, "ring": opts.ring,
            "ecmp": opts.ecmp, "samples": opts.samples, "seed": opts.seed, "fail": opts.fail, "nvlink_gbps": opts.nvlink_gbps,
            "pd": dataclasses.asdict(opts.pd) if "pd" in opts.workloads else None,
            "paper_one_tor_slowdown": PAPER_ONE_TOR_SLOWDOWN}
