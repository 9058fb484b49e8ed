"""The Nornir inventory plugin (zcube_deploy/nornir.py): hosts from plan.json, napalm_get over the lab."""

from __future__ import annotations

import json

import pytest
from nornir import InitNornir
from nornir_napalm.plugins.tasks import napalm_get

from conftest import ROOT
from zcube_deploy.errors import InputErrors
from zcube_deploy.lab.server import running_lab
from zcube_deploy.nornir import ZCubeInventory
from zcube_deploy.plan.io import wiring_identity_of


def _nornir(**options):
    return InitNornir(runner={"plugin": "threaded", "options": {"num_workers": 8}}, logging={"enabled": False},
                      inventory={"plugin": "ZCubeInventory", "options": options})


@pytest.fixture(scope="module")
def plan_dir(lab64_build):
    return lab64_build


def test_hosts_groups_and_data_from_the_plan(plan_dir):
    nr = _nornir(plan=str(plan_dir / "plan.json"))
    plan = json.loads((plan_dir / "plan.json").read_text())
    assert sorted(nr.inventory.hosts) == sorted(sw["name"] for sw in plan["switches"])
    for sw in plan["switches"]:
        h = nr.inventory.hosts[sw["name"]]
        assert (h.hostname, h.port, h.platform) == (sw["mgmt_address"], 22, "ruijie_rgos")
        assert {g.name for g in h.groups} == {f"group_{sw['group']}", f"plane_{sw['plane']}", f"rack_{sw['rack']}"}
        assert h.data["rack"] == sw["rack"] and h.data["interfaces"] == len(sw["interfaces"])
        # no configs given: no scope in the connection options
        assert "managed_scope" not in h.connection_options["napalm"].extras["optional_args"]
    odd = nr.filter(filter_func=lambda h: h.data["group"] == "odd")
    assert len(odd.inventory.hosts) == sum(sw["group"] == "odd" for sw in plan["switches"]) > 0


def test_configs_give_each_host_its_managed_scope(plan_dir):
    nr = _nornir(plan=str(plan_dir), configs=str(plan_dir))
    h = nr.inventory.hosts["ZC-O001"]
    scope = h.connection_options["napalm"].extras["optional_args"]["managed_scope"]
    assert scope.owns("hostname ZC-O001")
    assert not scope.owns("snmp-server location hall-B")  # a site line stays the site's


def test_bad_options_are_input_errors(plan_dir, tmp_path):
    with pytest.raises(InputErrors) as e:
        ZCubeInventory(plan=str(plan_dir), configs=str(tmp_path)).load()
    assert "no rendered configs here" in str(e.value)
    (tmp_path / "lab.json").write_text(json.dumps({"switches": {"ZC-O001": {"host": "127.0.0.1", "port": 1}},
                                                   "plan": wiring_identity_of(plan_dir)}))
    with pytest.raises(InputErrors) as e:
        ZCubeInventory(plan=str(plan_dir), lab=str(tmp_path / "lab.json")).load()
    text = "".join(str(p) for p in e.value.problems)
    assert len(e.value.problems) == 11 and "ZC-E002" in text and "... and 5 more" in text and "ZC-O001 " not in text
    with pytest.raises(InputErrors) as e:  # a plan given as the lab: the option named, not zcube's --lab
        ZCubeInventory(plan=str(plan_dir), lab=str(plan_dir / "plan.json")).load()
    assert "not a lab.json" in str(e.value) and "the option `lab` takes" in e.value.problems[0].hint
    with pytest.raises(InputErrors) as e:  # no plan: an input error naming the option (was a TypeError)
        ZCubeInventory()
    assert e.value.problems[0].path == "options.plan"


@pytest.mark.lab
def test_napalm_get_over_the_lab(plan_dir, tmp_path):
    plan = json.loads((plan_dir / "plan.json").read_text())
    with running_lab(plan, out_dir=tmp_path):
        nr = _nornir(plan=str(plan_dir / "plan.json"), lab=str(tmp_path / "lab.json"), configs=str(plan_dir))
        some = nr.filter(filter_func=lambda h: h.name in ("ZC-O001", "ZC-E002", "ZC-O003"))
        result = some.run(task=napalm_get, getters=["facts", "lldp_neighbors"])
        assert not result.failed, {h: r.exception for h, r in result.items() if r.failed}
        for name, multi in result.items():
            got = multi[0].result
            assert got["facts"]["vendor"] and got["facts"]["interface_list"]  # a fresh lab switch: factory hostname
            sw = next(s for s in plan["switches"] if s["name"] == name)
            # the lab's LLDP follows the planned wiring: every host port shows its planned server
            peers = {p: n[0]["hostname"] for p, n in got["lldp_neighbors"].items()}
            planned = {i["name"]: i["peer"]["device"] for i in sw["interfaces"] if i["kind"] == "host"}
            assert planned and {p: peers.get(p) for p in planned} == planned


@pytest.mark.lab
def test_the_documented_example_runs_as_written(plan_dir, tmp_path):
    """docs/nornir.md's example, run as written from a folder laid out as the README's `out/`: a line per odd
    switch, and no nornir.log left in the current folder (a new user found one after running it)."""
    import re
    import subprocess
    import sys

    code = re.search(r"```python\n(.*?)```", (ROOT / "docs" / "nornir.md").read_text(), re.S).group(1)
    out = tmp_path / "out"
    out.mkdir()
    for name in ("plan.json", "configs", "manifest.json"):
        if (plan_dir / name).exists():
            (out / name).symlink_to(plan_dir / name)
    plan = json.loads((plan_dir / "plan.json").read_text())
    odd = sorted(s["name"] for s in plan["switches"] if s["group"] == "odd")
    with running_lab(plan, out_dir=out / "lab"):
        r = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    lines = r.stdout.splitlines()
    assert [ln.split(":")[0] for ln in lines] == odd and all("failed" not in ln for ln in lines), r.stdout
    assert all(re.search(r", [1-9]\d* ports with LLDP neighbours$", ln) for ln in lines), r.stdout
    assert not (tmp_path / "nornir.log").exists()
