"""Load ``inventory.yaml``, check it against the catalog, and resolve generators into plain lists.

Every problem is collected with its data path (``servers.list[12].rack``), what is wrong and a
hint, then raised at once as :class:`~zcube_deploy.errors.InputErrors`. The concerns live in their
own modules: :mod:`.errors` (pydantic's errors as problems, the structural retry), :mod:`.layout`
(rows and racks), :mod:`.servers` (generated, listed and CSV servers), :mod:`.checks` (catalog
models, capacity, naming, pools, config lines, routing); this module reads the file and runs them
in order.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path

import yaml

from zcube_deploy.catalog import Catalog, NicModel, ServerModel, SwitchModel, load_catalog
from zcube_deploy.catalog.cabling import CablingCatalog, load_cabling_catalog
from zcube_deploy.errors import InputErrors, Problem, ZCubeError, not_utf8
from zcube_deploy.inventory import models as m
from zcube_deploy.inventory.checks import (
    capacity_servers,
    check_lossless,
    check_models,
    check_pools,
    check_roft,
    check_routing,
    check_switch_naming,
    model_lookup,
)
from zcube_deploy.inventory.errors import path_of, validate_structure
from zcube_deploy.inventory.layout import Rack, resolve_racks
from zcube_deploy.inventory.servers import Server, resolve_servers

__all__ = ["Rack", "ResolvedInventory", "Server", "inventory_digest", "load_inventory", "parse_inventory_text", "resolve_inventory"]


@dataclass(frozen=True)
class ResolvedInventory:
    """A checked inventory with generators expanded: the planner's only input besides the catalog."""

    spec: m.Inventory
    catalog: Catalog
    switch_model: SwitchModel
    server_model: ServerModel
    nic_model: NicModel
    racks: tuple[Rack, ...]
    servers: tuple[Server, ...]
    capacity_servers: int
    cabling: CablingCatalog | None = None
    source: str = ""
    sha256: str = ""
    cabling_source: str | None = None

    @property
    def planes(self) -> int:
        if self.spec.design == "roft":
            return (self.spec.roft or m.Roft()).planes
        return self.nic_model.ports // 2

    @property
    def roft(self) -> m.Roft:
        """design roft: its settings (the defaults when the inventory gives no ``roft:``)."""
        return self.spec.roft or m.Roft()


# An inventory is about 7 levels deep and, listing every server of a 64k-GPU hall, about 100,000
# values. Far beyond either is not an inventory, and would exhaust the checks' recursion or time
# (YAML aliases can repeat a node exponentially: the "billion laughs").
MAX_DEPTH = 64
MAX_VALUES = 2_000_000


class _TooBig(Exception):
    def __init__(self, loc: tuple, what: str):
        super().__init__(what)
        self.loc, self.what = loc, what


def _measure(node: object, loc: tuple, memo: dict[int, tuple[int, int]], active: set[int]) -> tuple[int, int]:
    """(values, height) of ``node`` with YAML aliases expanded, each shared node measured once;
    raises _TooBig where the data is too deep, too large or refers to itself."""
    if not isinstance(node, (dict, list)):
        return 1, 0
    if len(loc) > MAX_DEPTH:
        raise _TooBig(loc, f"nested more than {MAX_DEPTH} levels deep")
    key = id(node)
    if key in active:
        raise _TooBig(loc, "refers to itself (a YAML alias inside its own anchor)")
    if key not in memo:
        active.add(key)
        values, height = 1, 0
        for k, child in (node.items() if isinstance(node, dict) else enumerate(node)):
            v, h = _measure(child, (*loc, k), memo, active)
            values, height = values + v, max(height, h + 1)
            if values > MAX_VALUES:
                raise _TooBig(loc, f"holds more than {MAX_VALUES:,} values (YAML aliases expanded)")
        active.discard(key)
        memo[key] = (values, height)
    values, height = memo[key]
    if len(loc) + height > MAX_DEPTH:
        raise _TooBig(loc, f"nested more than {MAX_DEPTH} levels deep")
    return values, height


def parse_inventory_text(text: str, source: str = "inventory") -> dict:
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"{source}:{mark.line + 1}:{mark.column + 1}" if mark else source
        raise InputErrors(Problem(where, f"not valid YAML: {getattr(exc, 'problem', exc)}"), "cannot read inventory") from None
    except RecursionError:
        raise InputErrors(Problem(source, f"nested too deeply to read (an inventory is a few levels deep; at most {MAX_DEPTH})"),
                          "cannot read inventory") from None
    if not isinstance(data, dict):
        raise InputErrors(Problem(source, "the inventory must be a YAML mapping (key: value)"), "cannot read inventory")
    try:
        _measure(data, (), {}, set())
    except _TooBig as exc:
        shown = path_of(exc.loc[:8]) + ("..." if len(exc.loc) > 8 else "")
        raise InputErrors(Problem(shown or source, exc.what), f"invalid inventory {source}") from None
    return data


def load_inventory(path: str | Path) -> ResolvedInventory:
    """Read, validate and resolve an inventory file. Raises InputErrors listing every problem."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise InputErrors(Problem(str(path), f"cannot read the inventory: {exc.strerror}"), "cannot read inventory") from None
    except UnicodeDecodeError as exc:
        raise InputErrors(not_utf8(path, exc), "cannot read inventory") from None
    return resolve_inventory(parse_inventory_text(text, str(path)), base=path.parent, source=str(path), text=text)


def resolve_inventory(data: dict, base: Path = Path("."), source: str = "inventory", text: str | None = None,
                      catalog: Catalog | None = None) -> ResolvedInventory:
    """Validate an inventory mapping; ``catalog`` overrides the bundled one (tests, tools)."""
    spec, problems = validate_structure(data)
    structural = len(problems)
    if spec is None:
        raise InputErrors(problems, f"invalid inventory {source}")
    if catalog is None:
        catalog = load_catalog(base / spec.catalog if spec.catalog else None)
    cabling = load_cabling_catalog(base / spec.cabling_catalog if spec.cabling_catalog else None)
    sw = model_lookup("switch model", "switch_model", spec.switch_model, catalog.switch_models, problems)
    srv = model_lookup("server model", "server_model", spec.server_model, catalog.server_models, problems)
    nic = model_lookup("NIC model", "server_model.nic_model", srv.nic_model, catalog.nic_models, problems) if srv else None
    check_models(spec, sw, srv, nic, problems)
    racks = resolve_racks(spec, problems)
    servers = resolve_servers(spec, base, racks, srv, problems)
    capacity = capacity_servers(spec, len(servers), problems)
    if spec.design == "roft":
        check_roft(spec, sw, nic, problems)
    else:
        check_switch_naming(spec, nic, problems)
    check_pools(spec, problems)
    check_lossless(spec, problems)
    check_routing(spec, sw, problems)
    if problems:
        # semantic checks ran on the inventory with the structurally bad parts left out: report
        # those, and the semantic problems that are not just echoes of them
        bad_paths = {p.path for p in problems[:structural]}
        rest = [p for p in problems[structural:] if p.path not in bad_paths]
        raise InputErrors(problems[:structural] + rest, f"invalid inventory {source}")
    if text is None:
        text = yaml.safe_dump(data, sort_keys=True)
    digest = _digest(text, base / spec.servers.csv if spec.servers.csv else None, catalog.sha256, cabling.sha256)
    cabling_source = str(base / spec.cabling_catalog) if spec.cabling_catalog else None
    return ResolvedInventory(spec, catalog, sw, srv, nic, tuple(racks), tuple(servers), capacity, cabling, source,
                             digest, cabling_source)


def _digest(text: str, servers_csv: Path | None, catalog_sha256: str, cabling_sha256: str) -> str:
    """An inventory's fingerprint: its text, its servers CSV and the catalogs it was resolved with."""
    digest = hashlib.sha256(text.encode())
    if servers_csv is not None:
        digest.update(servers_csv.read_bytes())
    digest.update(catalog_sha256.encode())
    digest.update(cabling_sha256.encode())
    return digest.hexdigest()


def inventory_digest(path: str | Path) -> str | None:
    """The fingerprint :func:`load_inventory` gives the file at ``path`` (``ResolvedInventory.sha256``),
    without resolving its servers: what tells a command cheaply that a plan's inventory is unchanged.
    None when the file, its CSV or a catalog cannot be read (load_inventory says why)."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
        data = parse_inventory_text(text, str(path))
        catalog, cabling, servers = data.get("catalog"), data.get("cabling_catalog"), data.get("servers")
        csv = servers.get("csv") if isinstance(servers, dict) else None
        if not all(v is None or isinstance(v, str) for v in (catalog, cabling, csv)):
            return None
        return _digest(text, path.parent / csv if csv else None,
                       load_catalog(path.parent / catalog if catalog else None).sha256,
                       load_cabling_catalog(path.parent / cabling if cabling else None).sha256)
    except (ZCubeError, OSError, UnicodeDecodeError):
        return None
