"""Where `zcube compare` gets its numbers: a plan, an inventory, or bare parameters, priced from
the hardware and cabling catalogs."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

from zcube_deploy.analysis.designs import Params, Prices, parse_capacity
from zcube_deploy.catalog import load_catalog, parse_speed
from zcube_deploy.catalog.cabling import load_cabling_catalog
from zcube_deploy.errors import InputErrors, Problem
from zcube_deploy.inventory import load_inventory
from zcube_deploy.plan.io import read_plan


def catalog_prices(switch_price: float | None, cabling=None) -> Prices | None:
    """Unit prices for CapEx: the switch model's price, optics per link speed, and one copper and
    one fibre cable per link (the first copper and the first fibre medium of the cabling catalog)."""
    if switch_price is None:
        return None
    cab = cabling or load_cabling_catalog()
    copper = next((m for m in cab.media.values() if m.kind == "copper"), None)
    fibre = next((m for m in cab.media.values() if m.kind == "fibre"), None)
    optic = {parse_speed(s): float(v) for s, v in cab.optics.by_speed.items()}
    return Prices(switch=float(switch_price), optic=optic,
                  copper_cable=float(copper.unit_price_usd or 0) if copper else 0.0,
                  fibre_cable=float(fibre.unit_price_usd or 0) if fibre else 0.0)


def _switch_for_capacity(catalog, capacity_gbps: int, name: str | None):
    if name:
        if name not in catalog.switch_models:
            raise InputErrors(Problem("--switch-model", f"{name!r} is not in the catalog",
                                      f"known models: {', '.join(sorted(catalog.switch_models))}"))
        return name, catalog.switch_models[name]
    matches = sorted((m.placeholder, n) for n, m in catalog.switch_models.items() if parse_capacity(m.capacity) == capacity_gbps)
    if not matches:
        return None, None
    return matches[0][1], catalog.switch_models[matches[0][1]]


def from_parameters(gpus: int, capacity: str, nic_port_speed: str, gpus_per_server: int, oversubscription: float,
                    switch_model: str | None = None, catalog_path: str | None = None) -> tuple[Params, object, Prices | None, str]:
    problems = []
    try:
        cap = parse_capacity(capacity)
    except ValueError as exc:
        problems.append(Problem("--switch-capacity", str(exc)))
    try:
        b = parse_speed(nic_port_speed)
    except ValueError as exc:
        problems.append(Problem("--nic-port-speed", str(exc)))
    if gpus <= 0:
        problems.append(Problem("--gpus", "must be a positive number of GPUs"))
    if gpus_per_server <= 0:
        problems.append(Problem("--gpus-per-server", "must be positive"))
    if not oversubscription > 0:
        problems.append(Problem("--oversubscription", "must be positive (1.0 = non-blocking)"))
    if problems:
        raise InputErrors(problems)
    catalog = load_catalog(Path(catalog_path) if catalog_path else None)
    name, model = _switch_for_capacity(catalog, cap, switch_model)
    if model is not None:
        cap = parse_capacity(model.capacity)
    if cap % (2 * b):
        raise InputErrors(Problem("--switch-capacity", f"{cap}G is not a whole number of {2 * b}G ports"))
    lanes, cages = 2, cap // (2 * b)
    if model is not None and nic_port_speed in model.speeds:
        lanes, cages = model.speeds[nic_port_speed].lanes, model.cages
    p = Params(gpus=gpus, capacity_gbps=cap, nic_port_gbps=b, gpus_per_server=gpus_per_server, lanes_per_cage=lanes,
               cages=cages, oversubscription=oversubscription)
    label = f"{gpus:,} GPUs, {cap / 1000:g}T switches" + (f" ({name})" if name else " (no catalog model: no switch price)")
    return p, None, catalog_prices(model.unit_price_usd if model else None), label


def from_plan(path: str) -> tuple[Params, object, Prices | None, str]:
    plan = read_plan(path, {"sizing": None, "models": None, "cluster": None})
    sz, models = plan["sizing"], plan["models"]
    sw = models["switch"]
    p = Params(gpus=sz["gpus_requested"], capacity_gbps=parse_capacity(sw["capacity"]), nic_port_gbps=parse_speed(models["nic"]["speed"]),
               gpus_per_server=sz["gpus_per_server"], lanes_per_cage=sz["lanes_per_cage"], cages=sz["cages"],
               oversubscription=sz["oversubscription"])
    sizing = SimpleNamespace(S=sz["S"], K=sz["K"], m=sz["m"])
    label = f"plan {plan['cluster'].get('name', path)}: {p.gpus:,} GPUs, {sw['name']} ({sw['capacity']})"
    if sz.get("planes", 1) > 1:
        label += f", per plane (the plan has {sz['planes']} planes)"
    return p, sizing, catalog_prices(sw.get("unit_price_usd")), label


def from_inventory(path: str) -> tuple[Params, object, Prices | None, str]:
    from zcube_deploy.plan.build import stage_sizing  # the planner: ~0.2 s of start-up `zcube compare --gpus` does without

    inv = load_inventory(path)
    sizing = stage_sizing(inv, {})["sizing"]
    speed = inv.spec.topology.nic_port_speed
    p = Params(gpus=sizing.gpus_requested, capacity_gbps=parse_capacity(inv.switch_model.capacity), nic_port_gbps=parse_speed(speed),
               gpus_per_server=sizing.gpus_per_server, lanes_per_cage=sizing.lanes_per_cage, cages=sizing.cages,
               oversubscription=sizing.oversubscription)
    label = f"inventory {inv.spec.cluster}: {p.gpus:,} GPUs, {inv.spec.switch_model} ({inv.switch_model.capacity})"
    if inv.planes > 1:
        label += f", per plane (the inventory has {inv.planes} planes)"
    return p, sizing, catalog_prices(inv.switch_model.unit_price_usd, inv.cabling), label
