"""Push's first step: which switches, with which config files, and whether those files may be sent at all.

Every input problem of the run is found here, before any session opens, and raised at once
(InputErrors: exit 2), in a dry run exactly as in a real push:

- a switch without a rendered config, or not in the lab;
- a config file that no longer matches render's ``manifest.json`` (its sha256), a missing or
  unreadable manifest, or a manifest written for another plan (its ``inventory_sha256``): a file
  edited by hand, or a render of something else. ``allow_edited`` accepts such files (the report
  marks each ``edited``); the scope check below still applies to every line;
- a line outside the managed scope or touching the management path (push/candidate.py).

The scope of each switch is derived from the plan: the global lines and sections it owns are those
render writes for the switch from this plan, never those of the file on disk.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from ipaddress import IPv4Interface
from pathlib import Path

from zcube_deploy.access import not_in_lab
from zcube_deploy.errors import InputErrors, Problem
from zcube_deploy.plan.scope import matches, only_patterns
from zcube_deploy.platforms import DEFAULT_PLATFORM, platform_module, require_device_access, switch_renderer
from zcube_deploy.push.candidate import Management, refusals
from zcube_deploy.push.scope import ManagedScope
from zcube_deploy.render import SWITCH_TEMPLATE
from zcube_deploy.render.views import PlanIndex, switch_view
from zcube_deploy.templating import template

MAX_PROBLEMS = 40  # input problems listed (the rest counted)


@dataclass
class Target:
    name: str
    host: str
    port: int
    intended: str
    scope: ManagedScope | None = None  # what push owns on this switch (None: the whole config, tests only)
    mgmt_address: str | None = None
    platform: str = DEFAULT_PLATFORM
    edited: bool = False  # the file differs from render's manifest (accepted with allow_edited)


def select_targets(plan: dict, configs_dir: Path, only: str | None, endpoints: dict[str, tuple[str, int]] | None,
                   allow_edited: bool = False, way_out: str | None = None) -> list[Target]:
    """The switches of ``plan`` to push (``only``: globs or ``rack:GLOB``), each with its checked config file.
    ``way_out``: the caller's own way past configs that are not render's (push's is ``--allow-edited``)."""
    platform = plan["cluster"]["platform"]
    require_device_access(platform)
    configs_dir = Path(configs_dir)
    if not (configs_dir / "configs").is_dir():
        raise InputErrors(Problem(str(configs_dir / "configs"), "no rendered configs here", "run `zcube render PLAN -o DIR` first"),
                          "cannot push")
    chosen = _chosen(plan, only)
    problems: list[Problem] = []
    files: dict[str, Path] = {}
    for sw in chosen:
        path = configs_dir / "configs" / f"{sw['name']}{platform_module(platform).CONFIG_SUFFIX}"
        if not path.is_file():
            problems.append(Problem(str(path), "no rendered config", "run `zcube render PLAN -o DIR` first"))
        elif endpoints is None or sw["name"] in endpoints:
            files[sw["name"]] = path
    problems += not_in_lab([sw["name"] for sw in chosen], endpoints)
    texts = {name: _read(path, problems) for name, path in files.items()}
    edited, manifest_problems = _against_manifest(plan, configs_dir, {n: t for n, t in texts.items() if t is not None},
                                                  "" if way_out else "--allow-edited")
    if not allow_edited:
        problems += manifest_problems
    targets = []
    planned = _planned_configs(plan, [sw for sw in chosen if texts.get(sw["name"]) is not None])
    for sw in chosen:
        text = texts.get(sw["name"])
        if text is None:
            continue
        plat = platform_module(platform)
        sections = plat.numbered_sections(planned[sw["name"]])
        scope = ManagedScope.for_switch(plan, sw, [s.text for s in sections], platform)
        problems += refusals(str(files[sw["name"]]), text, sections, scope, _management(plan, sw), plat, platform)
        host, port = endpoints[sw["name"]] if endpoints is not None else (sw["mgmt_address"], 22)
        targets.append(Target(sw["name"], host, port, text, scope, sw.get("mgmt_address"), platform, sw["name"] in edited))
    if problems:
        more = [Problem("", f"... and {len(problems) - MAX_PROBLEMS} more")] if len(problems) > MAX_PROBLEMS else []
        hint = (f" ({way_out or '--allow-edited pushes configs edited since render'})" if manifest_problems and not allow_edited else "")
        raise InputErrors(problems[:MAX_PROBLEMS] + more, "cannot push; nothing was sent" + hint)
    return targets


def _chosen(plan: dict, only: str | None) -> list[dict]:
    """The switches ``only`` takes (a rack pattern: the switches in those racks); each pattern that matches none is
    refused with a did-you-mean, before anything is read or contacted (plan/scope.py: one check for every --only)."""
    switches = plan["switches"]
    pats = only_patterns(only, [sw["name"] for sw in switches], [sw["rack"] for sw in switches], rack_noun="switch rack")
    return [sw for sw in switches if not pats or matches(sw["name"], sw["rack"], pats)]


def _read(path: Path, problems: list[Problem]) -> str | None:
    try:
        return path.read_bytes().decode("utf-8")
    except UnicodeDecodeError as exc:
        line = path.read_bytes()[: exc.start].count(b"\n") + 1
        problems.append(Problem(f"{path}:{line}", f"not UTF-8 text (byte {exc.object[exc.start]:#04x})"))
    except OSError as exc:
        problems.append(Problem(str(path), f"cannot read: {exc.strerror}"))
    return None


def render_manifest(plan: dict, configs_dir: Path, override: str = "") -> tuple[dict[str, str] | None, list[Problem]]:
    """(render's manifest.json of ``configs_dir``: {file: sha256}, or None when it cannot be used) and why not.

    Unusable: missing, unreadable, or written for another inventory than the plan's (configs rendered
    from another plan). Push and audit both refuse on it; ``override`` names the option that lets the
    caller go on anyway (push's ``--allow-edited``), for the hint.
    """
    path = configs_dir / "manifest.json"
    rerender = "run `zcube render PLAN -o DIR`" + (f", or give {override}" if override else "")
    try:
        manifest = json.loads(path.read_text(encoding="utf-8"))
        files = manifest["files"]
        if not isinstance(files, dict):
            raise TypeError("'files' is not a mapping")
    except FileNotFoundError:
        return None, [Problem(str(path), "no manifest: cannot tell whether the configs are the ones render wrote", rerender)]
    except (OSError, ValueError, KeyError, TypeError) as exc:
        return None, [Problem(str(path), f"unreadable manifest ({exc}): cannot tell whether the configs are the ones render wrote", rerender)]
    want, have = plan.get("inputs", {}).get("inventory_sha256"), manifest.get("inventory_sha256")
    if want and have != want:
        return None, [Problem(str(path), f"written for another inventory (sha256 {str(have)[:16]}, the plan's is {want[:16]}): "
                                         "the configs are not this plan's render", "run `zcube render PLAN -o DIR`")]
    return files, []


def _against_manifest(plan: dict, configs_dir: Path, texts: dict[str, str], override: str) -> tuple[set[str], list[Problem]]:
    """(switches whose file differs from render's manifest.json, the problems in words; ``override``: the option
    that pushes them anyway, for the hint)."""
    if not texts:
        return set(), []
    files, problems = render_manifest(plan, configs_dir, override)
    if files is None:
        return set(texts), problems
    edited: set[str] = set()
    suffix = platform_module(plan["cluster"]["platform"]).CONFIG_SUFFIX
    for name, text in sorted(texts.items()):
        rel = f"configs/{name}{suffix}"
        if files.get(rel) != hashlib.sha256(text.encode("utf-8")).hexdigest():
            edited.add(name)
            problems.append(Problem(str(configs_dir / rel), "does not match render's manifest.json (edited since render)"
                                    if rel in files else "not in render's manifest.json"))
    return edited, problems


def _planned_configs(plan: dict, switches: list[dict]) -> dict[str, str]:
    """The config render writes for each of ``switches`` from ``plan`` (the scope's global lines come from it)."""
    own = switch_renderer(plan["cluster"]["platform"])
    if own:
        return {sw["name"]: own[1](plan, sw) for sw in switches}
    if not switches:
        return {}
    index = PlanIndex(plan)
    tpl = template(plan["cluster"]["platform"], SWITCH_TEMPLATE)
    return {sw["name"]: tpl.render(switch_view(index, sw)) for sw in switches}


def _management(plan: dict, sw: dict) -> Management:
    interface = plan["models"]["switch"]["mgmt_interface"]
    address, plen = sw.get("mgmt_address"), plan.get("settings", {}).get("mgmt_prefix_len")
    network = IPv4Interface(f"{address}/{plen}").network if address and plen is not None else None
    return Management(interface, network)
