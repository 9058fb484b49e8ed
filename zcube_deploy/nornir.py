"""A Nornir inventory built from plan.json: the fabric's switches as Nornir hosts.

Registered as the Nornir inventory plugin ``ZCubeInventory`` (entry point group
``nornir.plugins.inventory``), so::

    from nornir import InitNornir
    nr = InitNornir(inventory={"plugin": "ZCubeInventory",
                               "options": {"plan": "out/plan.json", "lab": "out/lab/lab.json"}})

builds one host per switch of the plan. Options (all but ``plan`` optional):

- ``plan``: a plan.json or the folder holding one;
- ``lab``: a lab.json from ``zcube lab up``: each switch's address and port come from it (instead of
  the plan's management address and port 22), its known_hosts file is used, and the lab's
  documented credentials are the defaults;
- ``configs``: a render output folder (``zcube render PLAN -o DIR``): each host's NAPALM connection
  options then carry the switch's managed scope (push/scope.py), so a configuration loaded through
  Nornir's NAPALM tasks touches only what the plan manages, exactly as ``zcube push`` does;
- ``known_hosts``: a known_hosts file (wins over the lab's).

Credentials come from ``ZCUBE_USERNAME``, ``ZCUBE_PASSWORD`` and ``ZCUBE_ENABLE_SECRET`` (with
``lab``, the lab's defaults where one is unset); they live in memory only. Without them (and
without ``lab``) hosts have no username or password and a connection fails with NAPALM's own
error; the inventory itself still loads (listing and filtering need no credentials).

Hosts carry ``platform`` = the platform's NAPALM driver name (``ruijie_rgos``), groups
``group_<odd|even>``, ``plane_<n>`` and ``rack_<rack>``, and in ``data`` the plan's facts about the
switch (group, plane, rack, u, model, loopback, asn, management address, its number of planned
interfaces). The inventory is a read of the plan: nothing is written.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from nornir.core.inventory import ConnectionOptions, Defaults, Group, Groups, Host, Hosts, Inventory, ParentGroups

from zcube_deploy.access import endpoints as lab_endpoints
from zcube_deploy.access import lab_credentials, not_in_lab
from zcube_deploy.errors import InputErrors, Problem
from zcube_deploy.plan.io import read_plan, wiring_identity_of
from zcube_deploy.plan.model import projection
from zcube_deploy.platforms import platform_module
from zcube_deploy.push import PLAN_FIELDS as PUSH_FIELDS
from zcube_deploy.push import select_targets

PLUGIN_NAME = "ZCubeInventory"
# the plan sections the inventory reads (a projection for read_plan); with configs, push's (the scope is push's)
PLAN_FIELDS = projection(switches={"name", "mgmt_address", "rack", "interfaces", "group", "plane", "u", "model", "loopback", "asn"},
                         port_map=None, addressing=None, models=None, cluster=None)


def _credentials(lab: bool) -> tuple[str | None, str | None, str | None]:
    env = tuple(os.environ.get(k) or None for k in ("ZCUBE_USERNAME", "ZCUBE_PASSWORD", "ZCUBE_ENABLE_SECRET"))
    if not lab:
        return env  # type: ignore[return-value]
    return lab_credentials()


def _group_names(sw: dict) -> list[str]:
    return [f"group_{sw['group']}", f"plane_{sw['plane']}", f"rack_{sw['rack']}"]


LAB_HINT = "the option `lab` takes the lab.json that `zcube lab up PLAN -o DIR` wrote in DIR"


class ZCubeInventory:
    """Nornir inventory plugin: ``load()`` returns the plan's switches as a Nornir ``Inventory``."""

    def __init__(self, plan: str | None = None, lab: str | None = None, configs: str | None = None, known_hosts: str | None = None) -> None:
        if not plan:  # an input error as the other options' are, not Python's TypeError about an argument
            raise InputErrors(Problem("options.plan", "missing: the plan.json (or its folder) whose switches are the hosts",
                                      'InitNornir(inventory={"plugin": "ZCubeInventory", "options": {"plan": "out/plan.json"}})'))
        self.plan_path = plan
        self.lab_path = lab
        self.configs = Path(configs) if configs else None
        self.known_hosts = known_hosts

    def load(self) -> Inventory:
        plan = read_plan(self.plan_path, PUSH_FIELDS if self.configs is not None else PLAN_FIELDS)
        platform = plan["cluster"]["platform"]
        driver_name = platform_module(platform).NAPALM_DRIVER
        endpoints, known_hosts = lab_endpoints(self.lab_path, self.known_hosts, (wiring_identity_of(self.plan_path),), LAB_HINT) \
            if self.lab_path else (None, self.known_hosts)
        username, password, secret = _credentials(bool(self.lab_path))
        problems = not_in_lab([sw["name"] for sw in plan["switches"]], endpoints, f"{self.lab_path}: switches")
        # with configs: push's own targets (the files checked against render's manifest and the scope derived
        # from the plan, as `zcube push` does; every problem of the configs folder raised at once)
        scopes = {t.name: t.scope for t in select_targets(plan, self.configs, None, endpoints)} if self.configs is not None else {}
        groups: dict[str, Group] = {}
        hosts: dict[str, Host] = {}
        for sw in plan["switches"]:
            name = sw["name"]
            if endpoints is not None:
                if name not in endpoints:
                    continue
                host, port = endpoints[name]
            else:
                host, port = sw["mgmt_address"], 22
            optional_args: dict[str, Any] = {"port": port, "secret": secret, "known_hosts": known_hosts}
            if self.configs is not None:
                optional_args["managed_scope"] = scopes[name]
            for g in _group_names(sw):
                groups.setdefault(g, Group(name=g))
            hosts[name] = Host(
                name=name, hostname=host, port=port, username=username, password=password, platform=driver_name,
                groups=ParentGroups(groups[g] for g in _group_names(sw)),
                data={"group": sw["group"], "plane": sw["plane"], "rack": sw["rack"], "u": sw.get("u"), "model": sw.get("model"),
                      "loopback": sw.get("loopback"), "asn": sw.get("asn"), "mgmt_address": sw.get("mgmt_address"),
                      "interfaces": len(sw.get("interfaces") or ())},
                connection_options={"napalm": ConnectionOptions(extras={"optional_args": optional_args})},
            )
        if problems:
            raise InputErrors(problems, f"cannot build the {PLUGIN_NAME} inventory")
        return Inventory(hosts=Hosts(hosts), groups=Groups(sorted(groups.items())), defaults=Defaults())
