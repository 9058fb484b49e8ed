"""What each `zcube` command does, as library calls: the CLI parses arguments, calls one of these and prints.

Nothing here prints. Long runs report progress through callbacks or by yielding ``(stage, result)``
pairs, so the caller decides what the user sees. ``short_lived=True`` (the CLI) freezes the loaded
plan out of the garbage collector's sight (:func:`zcube_deploy.perf.keep_forever`); a library caller
leaves it False. Each function imports its stage's modules inside itself, for start-up time: a command
loads only what it runs (the planner, napalm, asyncssh, openpyxl, numpy are each a good part of a second).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, nullcontext
from pathlib import Path
from typing import TYPE_CHECKING

from zcube_deploy.errors import InputErrors, Problem
from zcube_deploy.perf import bulk_allocation, keep_forever

if TYPE_CHECKING:  # the twin's modules load when a twin command runs
    from zcube_deploy.twin.test import TwinReport

Progress = Callable[[str, int], AbstractContextManager[Callable[[], None]]]
"""``progress(description, total)``: a context manager yielding ``advance()``, called once per finished item."""


# ---------------------------------------------------------------- plans
def stale_warning(plan: dict) -> str | None:
    """Why ``plan`` may be out of date (its inventory changed since it was planned), or None."""
    from zcube_deploy.plan.io import inventory_changed

    return inventory_changed(plan) or None


def open_plan(path: str, fields=None, short_lived: bool = False) -> dict:
    """Read a plan.json (only ``fields`` when given: see each stage's PLAN_FIELDS)."""
    from zcube_deploy.plan.io import read_plan

    plan = read_plan(path, fields) if fields is not None else read_plan(path)
    if short_lived:
        keep_forever()
    return plan


def plan_identity(plan: dict, plan_path: str | None) -> dict:
    """The plan's ``plan.io.wiring_identity``: of ``plan`` when it holds its cables, else read from ``plan_path``
    without keeping them."""
    from zcube_deploy.plan.io import wiring_identity, wiring_identity_of

    if "cables" in plan:
        return wiring_identity(plan)
    if plan_path is None:
        raise ValueError("a plan read without its cables needs its path for its wiring identity")
    return wiring_identity_of(plan_path)


def plan_inventory(inventory: str | Path, short_lived: bool = False) -> dict:
    """Validate an inventory file and plan it (raises InputErrors listing every problem)."""
    from zcube_deploy.inventory import load_inventory
    from zcube_deploy.designs import build_plan

    with bulk_allocation():  # loading and planning make millions of objects and no cycles
        plan = build_plan(load_inventory(inventory))
        if short_lived:
            keep_forever()  # before the collector is back: otherwise its first passes rescan the whole plan
    return plan


def write_plan(plan: dict, out_dir: str | Path) -> tuple[Path, dict]:
    """Write DIR/plan.json of ``plan`` as :func:`plan_inventory` built it (its big row lists are not validated
    again: plan/io.py ``fresh``); returns its path and the plan's summary (what `zcube plan` prints)."""
    from zcube_deploy.plan.io import write_plan as _write
    from zcube_deploy.plan.summary import plan_summary

    return _write(plan, out_dir, fresh=True), plan_summary(plan)


def diff_fails(d: dict, fail_on: str) -> bool:
    """--fail-on: any change, only a moved or removed cable, or never."""
    s = d["summary"]
    if fail_on == "any":
        return bool(d["changed"])
    if fail_on == "moved":
        return bool(s["cables_moved"] or s["cables_removed"])
    return False


# ---------------------------------------------------------------- outputs
def render(plan: dict, out_dir: str | Path, only: str | None = None, jobs: int | None = None, source=None) -> dict:
    """Switch configs (DIR/configs), netplan files (DIR/hosts) and DIR/manifest.json, self-checked.

    ``plan``: a whole plan, or with ``source`` the shared part :func:`open_for_render` gives."""
    from zcube_deploy.render import render_all

    return render_all(plan, out_dir, only=only, jobs=jobs, source=source)


def open_for_render(path: str, short_lived: bool = False) -> tuple[dict, object]:
    """The part of a plan.json every render worker shares and the file's identity (pass it to :func:`render`
    as ``source``: each worker then reads and validates the switches and servers it renders)."""
    from zcube_deploy.render import read_shared

    plan, source = read_shared(path)
    if short_lived:
        keep_forever()
    return plan, source


def cabling(plan: dict, out_dir: str | Path, catalog: str | None = None, accept_catalog_change: bool = False) -> dict:
    """The cabling outputs; the catalog is ``catalog``, else the plan's, else the bundled one (it must be the one the
    plan was made with unless ``accept_catalog_change``: catalog/cabling.py's ``plan_catalog``)."""
    from zcube_deploy.cabling.run import write_cabling

    return write_cabling(plan, out_dir, catalog or plan["inputs"].get("cabling_catalog"), accept_catalog_change=accept_catalog_change)


def hall(plan: dict, out_dir: str | Path, catalog: str | None = None, accept_catalog_change: bool = False, **overlays) -> dict:
    """DIR/hall/index.html, with the optional overlays ``cabling``, ``verify``, ``analyze`` and ``traffic`` (file paths); the catalog
    as for :func:`cabling` (``catalog_changes`` in the result: what differs from the plan's, when accepted)."""
    from zcube_deploy.catalog.cabling import plan_catalog
    from zcube_deploy.hall import write_hall

    path = catalog or plan["inputs"].get("cabling_catalog")
    _, changes = plan_catalog(plan, path, accept_catalog_change)
    return {**write_hall(plan, out_dir, catalog_path=path, **overlays), "catalog_changes": changes}


def build(inventory: str | Path, out_dir: str | Path, jobs: int | None = None, short_lived: bool = False) -> Iterator[tuple[str, dict]]:
    """`zcube build`: plan, render, cabling, hall. Yields each stage's result as it finishes:
    ("plan", {"summary", "path"}), ("render", ...), ("cabling", ...), ("hall", ...)."""
    plan = plan_inventory(inventory, short_lived)
    path, summary = write_plan(plan, out_dir)
    yield "plan", {"summary": summary, "path": path}
    yield "render", render(plan, out_dir, None, jobs)
    yield "cabling", cabling(plan, out_dir, None)
    yield "hall", hall(plan, out_dir)


# ---------------------------------------------------------------- push
def push(plan: dict, configs_dir: str, *, dry_run: bool = False, only: str | None = None, concurrency: int = 8, canary: int = 0,
         max_failures: int | None = None, lab_path: str | None = None, known_hosts: str | None = None,
         trust_on_first_use: bool = False, timeout: float = 30, prompt=None, progress: Progress | None = None,
         allow_edited: bool = False, drained: dict[str, set[str]] | None = None, plan_path: str | None = None,
         lab_may_run: tuple[dict, ...] = ()) -> tuple[dict, int]:
    """Push DIR/configs to the switches of ``plan``; returns (push report, number of targets).

    With ``lab_path`` the lab must run this plan (``access.endpoints``): its wiring identity is the plan's, or,
    for a plan read without its cables (push's PLAN_FIELDS), that of the file ``plan_path``; ``lab_may_run``:
    other plans the lab may run (an expansion's old plan).

    ``allow_edited``: push config files that differ from render's manifest.json (the scope check still applies).
    ``drained`` (switch -> ports shut by `zcube drain`): a drained switch among the targets is refused (a push
    would undo its drain) unless it is left out; pass None to push it anyway (--include-drained)."""
    from zcube_deploy.push import PushOptions, push_all, select_targets
    from zcube_deploy.access import credentials, endpoints, known_hosts_for

    eps, kh = endpoints(lab_path, known_hosts, (plan_identity(plan, plan_path), *lab_may_run) if lab_path else ())
    targets = select_targets(plan, Path(configs_dir), only, eps, allow_edited=allow_edited)
    refused = sorted(t.name for t in targets if t.name in (drained or {}))
    if refused:
        raise InputErrors([Problem(name, "is drained (a drain record beside the plan names it, whatever its status: drained, or a "
                                         "drain or undrain that failed or was interrupted): a push would undo the drain",
                                   "undrain it first (`zcube undrain PLAN ELEMENT` for each record in the plan's drains/ that names it: "
                                   f"switch:{name}, or link:CABLE for a cable drain), leave it out with --only, or --include-drained")
                           for name in refused],
                          "cannot push")
    creds = credentials(bool(lab_path), prompt)
    opts = PushOptions(dry_run=dry_run, concurrency=concurrency, canary=canary, max_failures=max_failures,
                       known_hosts=known_hosts_for(kh, trust_on_first_use), trust_on_first_use=trust_on_first_use, timeout=timeout)
    bar = progress("dry-run" if dry_run else "push", len(targets)) if progress else nullcontext(lambda: None)
    with bar as advance:
        report = push_all(targets, creds, opts, configs_dir, on_result=lambda r: advance())
    return report, len(targets)


# ---------------------------------------------------------------- expand
def expand(old_plan_path: str, inventory: str, out_dir: str, *, push_changes: bool = False, dry_run: bool = False, canary: int = 1,
           concurrency: int = 8, lab_path: str | None = None, known_hosts: str | None = None, trust_on_first_use: bool = False,
           timeout: float = 30, prompt=None, progress: Progress | None = None, twin_dir: str | None = None, log=None) -> dict:
    """`zcube expand`: the grown plan, its add-only change sets and new cables' sheets in ``out_dir``
    (expand/run.py; InputErrors when anything existing would move); with ``push_changes`` then a push of
    the changed switches only (a canary batch first) and a verify of the whole grown plan, split into the
    new cables and the old ones; with ``twin_dir`` (a twin of the old plan) the expansion pushed into the twin
    under continuous probes (expand/twin.py). Returns {"report", "push", "verify", "twin"} (None when not run), "dir" and
    "render" (what publishing the grown render did to DIR's earlier files: render/owned.py's publish)."""
    from zcube_deploy.expand.run import check_output, prepare, split_findings
    from zcube_deploy.plan.io import wiring_identity
    from zcube_deploy.verify.pipeline import run_verify

    check_output(old_plan_path, out_dir)
    old = open_plan(old_plan_path)
    new = plan_inventory(inventory)
    prepared = prepare(old, new, out_dir)
    result: dict = {"report": prepared.report, "push": None, "verify": None, "twin": None, "dir": str(out_dir),
                    "render": prepared.render}
    changed = prepared.report["changed_switches"]
    if twin_dir:
        from zcube_deploy.expand.twin import measure_expansion

        result["twin"] = measure_expansion(old, new, str(Path(out_dir) / "plan.json"), twin_dir, log=log or (lambda *_: None))
    if not push_changes or not changed:
        return result
    report, _ = push(new, out_dir, dry_run=dry_run, only=",".join(changed), concurrency=concurrency, canary=canary, max_failures=1,
                     lab_path=lab_path, known_hosts=known_hosts, trust_on_first_use=trust_on_first_use, timeout=timeout, prompt=prompt,
                     progress=progress, drained=drain_held(old_plan_path, old), lab_may_run=(wiring_identity(old),))
    result["push"] = report
    if dry_run or not report["ok"]:
        return result
    v = run_verify(new, str(Path(out_dir) / "verify"), lab_path, known_hosts, timeout=timeout, prompt=prompt,
                   drained=drained_ports(old_plan_path, old), lab_may_run=(wiring_identity(old),))
    old_ids = [c["id"] for c in old["cables"]]
    result["verify"] = {"summary": v["summary"], **split_findings(v["findings"], prepared.growth.new_cables, old_ids)}
    return result


def expansion_ok(result: dict) -> bool:
    """An expansion run ended well: its push (when run) left every switch in a good state, its verify (when
    run) found nothing, and no check was left undone."""
    pushed = result["push"] is None or bool(result["push"]["ok"])
    v, t = result["verify"], result["twin"]
    twin_ok = t is None or (t["echoes_lost"] == 0 and t["kept_rate"] and t["new_pairs_reached"] == t["new_pairs_tried"])
    return pushed and twin_ok and (v is None or (v["summary"]["findings"] == 0 and not v["not_checked"]))


# ---------------------------------------------------------------- compare / analyze
def design_comparison(source: str | None, gpus: int | None, switch_capacity: str = "51.2T", nic_port_speed: str = "200G",
                      gpus_per_server: int = 8, oversubscription: float = 1.0, switch_model: str | None = None,
                      catalog_path: str | None = None) -> tuple[list, object, object, str]:
    """ZCube against HPN dual-plane Clos, ROFT and Rail-only (a design comparison, not a check of a network).

    ``source``: a plan.json or an inventory; else ``gpus`` and the hardware parameters.
    Returns (designs, parameters, prices or None, label)."""
    from zcube_deploy.analysis import inputs
    from zcube_deploy.analysis.designs import compare_designs

    if source and gpus:
        raise InputErrors(Problem("--gpus", "give a plan/inventory or --gpus, not both"))
    if source:
        if not Path(source).exists():
            raise InputErrors(Problem(source, "no such file"))
        load = inputs.from_plan if source.endswith(".json") else inputs.from_inventory
        params, sizing, prices, label = load(source)
    elif gpus is not None:
        params, sizing, prices, label = inputs.from_parameters(gpus, switch_capacity, nic_port_speed, gpus_per_server,
                                                               oversubscription, switch_model, catalog_path)
    else:
        raise InputErrors(Problem("compare", "nothing to compare", "give a plan.json, an inventory, or --gpus N"))
    return compare_designs(params, prices, sizing), params, prices, label


def failure_probabilities(text: str) -> list[float]:
    """--probabilities "0.001,0.01": sorted, distinct, each strictly between 0 and 1."""
    try:
        probs = [float(x) for x in text.split(",") if x.strip()]
    except ValueError:
        probs = []
    if not probs or any(not 0 < x < 1 for x in probs):
        raise InputErrors(Problem("--probabilities", f"{text!r}: give probabilities between 0 and 1, e.g. 0.001,0.01"))
    return sorted(set(probs))


def analyze(plan: str | dict, out_dir: str, probabilities: list[float], samples: int = 400, seed: int = 1) -> tuple[dict, Path, Path]:
    """Failure analysis of a plan (a dict or a plan.json path); writes DIR/analyze.json and DIR/unreachability.png.
    Returns (document, json path, png path)."""
    from zcube_deploy.analysis.report import PLAN_FIELDS, analyze_plan, write_analysis

    if not isinstance(plan, dict):
        plan = open_plan(plan, PLAN_FIELDS)
    doc = analyze_plan(plan, probabilities, samples, seed)
    js, png = write_analysis(doc, out_dir)
    return doc, js, png


# ---------------------------------------------------------------- twin
def twin_up(plan_path: str, out_dir: str, slow_bfd: bool | None = None) -> dict:
    """Build the data-plane twin of a plan (root, FRR); returns DIR/twin.json's description."""
    from zcube_deploy.twin import build as twin_build

    twin_build.require_support()
    return twin_build.up(open_plan(plan_path), plan_path, out_dir, slow_bfd)


def twin_test(twin_dir: str, pairs: int | None, seed: int, fail: list[str], mode: str, gpu_pairs: int,
              report_path: str | None, log: Callable[[str], None], drain: str | None = None, drain_order: str = "drain",
              settle: float | None = None, probe_period_ms: float = 100.0, probe_rate: int = 3000,
              undrain_order: str = "staged", every_gpu_pair: bool = False, fib_walk: bool = False) -> tuple[TwinReport, Path, list[str]]:
    """Real packets through the twin; writes the JSON report. Returns (the typed report, its path, names of failed checks).
    ``every_gpu_pair``: the baseline on one port pair of every GPU pair of each island instead of port pairs.
    ``fib_walk``: after the baseline, every in-service port pair of each island walked on the kernels' FIBs (twin/fibwalk.py).

    ``drain`` (``switch:NAME`` or ``link:CABLE``): after the failures, the drain measured under continuous probes
    (drain/twin.py), in ``drain_order`` (``drain``: zcube drain's; the others are known-bad orders)."""
    from zcube_deploy.drain import twin as drain_twin
    from zcube_deploy.twin import build as twin_build
    from zcube_deploy.twin import fibwalk
    from zcube_deploy.twin import test as twin_run

    twin_build.require_support()
    then = (lambda s: [drain_twin.measure(s, drain, drain_order, settle, probe_period_ms, probe_rate, undrain_order, log=log)]) \
        if drain else None
    first = (lambda s: [fibwalk.measure(s)]) if fib_walk else None
    rep = twin_run.run(twin_dir, pairs, seed, list(fail), mode, gpu_pairs, log=log, then=then, every_gpu_pair=every_gpu_pair,
                       first=first)
    path = Path(report_path or Path(twin_dir) / "test-report.json")
    path.write_text(json.dumps(rep.as_dict(), indent=1, sort_keys=True) + "\n")
    return rep, path, [c.name for c in rep.checks if not c.ok]


def twin_down(twin_dir: str) -> dict:
    """Remove the twin in DIR: its daemons, namespaces and the host's sysctls."""
    from zcube_deploy.twin import build as twin_build

    return twin_build.down(twin_dir)


# ---------------------------------------------------------------- traffic
def traffic(plan_path: str, out_dir: str, design: str | None = None, workload: str = "all-to-all", progress=None,
            **options) -> tuple[dict, Path, Path]:
    """`zcube traffic`: the flow-level model of the workloads on the plan's own fabric as built (a ZCube
    or a ROFT; a migration stage island by island) and the designs `zcube compare` sizes
    (zcube_deploy/traffic/). ``design`` None: the plan's own. ``options``: the fields of
    traffic.run.Options and, prefixed ``pd_``, of traffic.workloads.PdParams. A stage's FROM plan is
    read from the migrate.json beside its folder (`zcube migrate -o DIR`: DIR/stage-NN/plan.json).
    Writes DIR/traffic.json and DIR/traffic.png."""
    from zcube_deploy.traffic import report, run
    from zcube_deploy.traffic.net import DESIGN_KEYS
    from zcube_deploy.traffic.workloads import WORKLOADS, PdParams

    pd = PdParams(**{k[3:]: v for k, v in options.items() if k.startswith("pd_") and v is not None})
    rest = {k: v for k, v in options.items() if not k.startswith("pd_")}
    designs = run.parse_list(design, DESIGN_KEYS, "design", DESIGN_KEYS) if design is not None else ()
    given = tuple("--" + k[3:].replace("_", "-") for k, v in options.items() if k.startswith("pd_") and k != "pd_seed" and v is not None)
    opts = run.Options(designs=designs, workloads=run.parse_list(workload, WORKLOADS, "workload"), pd=pd, pd_given=given, **rest)
    plan = open_plan(plan_path, run.PLAN_FIELDS)
    baseline, note = (None, "")
    if run.is_stage(plan):
        baseline, note = _stage_from_plan(plan_path, run.PLAN_FIELDS)
    doc = run.study(plan, opts, progress, baseline, note)
    js, png = report.write(doc, out_dir)
    return doc, js, png


def _stage_from_plan(plan_path: str, fields: dict) -> tuple[dict | None, str]:
    """(the FROM plan of a migration stage, or None, and what was found), from DIR/migrate.json beside
    the stage's folder DIR/stage-NN; its ``from.plan`` path, relative paths taken from where migrate ran
    (the current folder) and then from DIR's parent."""
    src = Path(plan_path)
    mig = (src if src.is_dir() else src.parent).resolve().parent / "migrate.json"
    from zcube_deploy.migrate.doc import from_plan  # start-up time: pydantic's shapes load only for a stage's analysis

    named, problems = from_plan(mig)
    if named is None:
        return None, f"no FROM plan: {problems[0].path}: {problems[0].message}: the stage's cost is not said"
    for cand in (Path(named), mig.parent.parent / named):
        if (cand / "plan.json" if cand.is_dir() else cand).is_file():
            return open_plan(str(cand), fields), f"FROM plan {named} (named by {mig})"
    return None, f"no FROM plan: {mig} names {named}, which holds no plan.json: the stage's cost is not said"


def drain_setup(plan_path: str, configs_dir: str | None, lab_path: str | None, known_hosts: str | None, dry_run: bool, timeout: float,
                prompt=None, element: str | None = None, **options):
    """(plan, the plan's folder, DrainOptions, credentials) for `zcube drain` / `zcube undrain`; ``element`` is
    checked against the plan before any credential is asked for (a typo costs no password)."""
    from zcube_deploy.drain.blast import parse_element
    from zcube_deploy.drain.run import DrainOptions
    from zcube_deploy.access import credentials

    src = Path(plan_path)
    if element is not None and plan_path.startswith(("switch:", "link:")) and not src.exists():
        raise InputErrors(Problem("PLAN", f"{plan_path!r} is an element, not a plan file (PLAN and ELEMENT swapped?)",
                                  f"the order is PLAN then ELEMENT (zcube drain PLAN ELEMENT; undrain alike), e.g. {element} {plan_path}"))
    plan_dir = src if src.is_dir() else src.parent
    plan = open_plan(plan_path)
    if element is not None:
        parse_element(element, plan)
    opts = DrainOptions(Path(configs_dir) if configs_dir else plan_dir, lab_path, known_hosts, dry_run, timeout=timeout, plan_path=plan_path,
                        **options)
    return plan, plan_dir, opts, credentials(bool(lab_path), prompt)


def drained_ports(plan_path: str, plan: dict | None = None) -> dict[str, set[str]]:
    """switch -> ports shut by `zcube drain`, from the records in the plan's folder (docs/drain.md), checked
    against ``plan``'s switches and ports when given."""
    from zcube_deploy.drain.records import drained_ports as ports

    src = Path(plan_path)
    return ports(src if src.is_dir() else src.parent, plan)


def drain_held(plan_path: str, plan: dict | None = None) -> dict[str, set[str]]:
    """switch -> ports shut by drains, for every switch a drain record names whatever its status (push refuses them)."""
    from zcube_deploy.drain.records import held_switches

    src = Path(plan_path)
    return held_switches(src if src.is_dir() else src.parent, plan)


def drain_state(plan_path: str, plan: dict) -> tuple[dict[str, set[str]], set[str]]:
    """(switch -> ports shut by drains, switches in BGP graceful shutdown by a drain), from the records beside the plan."""
    from zcube_deploy.drain.records import graceful_now, read_records

    src = Path(plan_path)
    records = read_records(src if src.is_dir() else src.parent, plan)
    return drained_ports(plan_path, plan), set().union(*(graceful_now(d) for d in records)) if records else set()


def replace_setup(plan_path: str, configs_dir: str | None, lab_path: str | None, known_hosts: str | None, prompt=None,
                  switch: str | None = None, **options):
    """(plan, the plan's folder, ReplaceOptions, credentials) for `zcube replace`; ``switch`` is checked against
    the plan before any credential is asked for."""
    from zcube_deploy.access import credentials
    from zcube_deploy.replace.run import ReplaceOptions, plan_switch

    src = Path(plan_path)
    plan_dir = src if src.is_dir() else src.parent
    plan = open_plan(plan_path)
    if switch is not None:
        plan_switch(plan, switch)
    opts = ReplaceOptions(Path(configs_dir) if configs_dir else plan_dir, lab_path, known_hosts, **options)
    return plan, plan_dir, opts, credentials(bool(lab_path), prompt)


def settle_default(settle_s: float | None, lab_path: str | None) -> float:
    """`zcube replace --settle`: 30 s on real switches (LLDP's transmit interval), 0 in the lab (its LLDP follows at once)."""
    if settle_s is not None:
        return settle_s
    return 0.0 if lab_path else 30.0
