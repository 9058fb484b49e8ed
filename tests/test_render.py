"""Render: golden configs, self-check, injection safety, routing proof from the files alone."""

from __future__ import annotations

import copy
import json
import re
import string

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import GOLDEN, INVENTORIES, ROOT, check_golden, run_zcube
from test_docs import code_blocks
from zcube_deploy.errors import InputErrors, RenderError
from zcube_deploy.inventory import load_inventory, resolve_inventory
from zcube_deploy.plan import build_plan
from zcube_deploy.render import render_all
from zcube_deploy.templating import template
from zcube_deploy.render.routing_proof import prove_routing
from zcube_deploy.render.selfcheck import check_switch_config
from zcube_deploy.render.views import PlanIndex, server_view, switch_view


def test_golden_configs_lab64(lab64_build, update_golden):
    files = sorted((lab64_build / "configs").glob("*.cfg")) + sorted((lab64_build / "hosts").glob("*.yaml")) \
        + sorted((lab64_build / "hosts").glob("*.sysctl.conf"))
    assert len(files) == 16 + 8 + 8
    for f in files:
        check_golden(GOLDEN / "lab-64" / f.parent.name / f.name, f.read_text(), update_golden)


def test_golden_configs_glm1k_sample(glm1k_build, update_golden):
    assert len(list((glm1k_build / "configs").glob("*.cfg"))) == 16
    assert len(list((glm1k_build / "hosts").glob("*.yaml"))) == 128
    for rel in ("configs/ZC-O001.cfg", "configs/ZC-E002.cfg", "hosts/gpu0001.yaml", "hosts/gpu0128.yaml"):
        check_golden(GOLDEN / "glm-1k" / rel, (glm1k_build / rel).read_text(), update_golden)


def test_manifest_hashes_every_file(glm1k_build):
    import hashlib

    manifest = json.loads((glm1k_build / "manifest.json").read_text())
    assert len(manifest["files"]) == 16 + 128 + 128  # configs, netplan and sysctl files
    for rel, digest in manifest["files"].items():
        assert hashlib.sha256((glm1k_build / rel).read_bytes()).hexdigest() == digest


def test_render_is_deterministic(tmp_path, glm1k_build):
    r = run_zcube("render", str(glm1k_build / "plan.json"), "-o", str(tmp_path))
    assert r.returncode == 0, r.stderr
    assert (tmp_path / "manifest.json").read_bytes() == (glm1k_build / "manifest.json").read_bytes()


def test_render_only_subset(tmp_path, glm1k_build):
    r = run_zcube("render", str(glm1k_build / "plan.json"), "-o", str(tmp_path), "--only", "ZC-O00*")
    assert r.returncode == 0, r.stderr
    assert sorted(p.name for p in (tmp_path / "configs").glob("*.cfg")) == [f"ZC-O00{n}.cfg" for n in (1, 3, 5, 7, 9)]
    assert not list((tmp_path / "hosts").glob("*.yaml"))
    r = run_zcube("render", str(glm1k_build / "plan.json"), "-o", str(tmp_path), "--only", "nothing-matches")
    assert r.returncode == 2


def test_netplan_is_valid_yaml_with_policy_routing(glm1k_build):
    doc = yaml.safe_load((glm1k_build / "hosts" / "gpu0001.yaml").read_text())
    eth = doc["network"]["ethernets"]
    assert len(eth) == 16
    p1 = eth["ens1f0np0"]
    assert p1["mtu"] == 9000 and p1["addresses"] == ["10.0.0.1/31"]
    assert {"to": "10.0.8.0/21", "via": "10.0.0.0", "table": 101, "metric": 100} in p1["routes"]
    assert p1["routing-policy"][0]["from"] == "10.0.0.1/32"


def test_rgos_config_shape(glm1k_build):
    text = (glm1k_build / "configs" / "ZC-O001.cfg").read_text()
    assert "\nhostname ZC-O001\n" in text
    block = text.split("interface TwoHundredGigabitEthernet 0/1:1\n")[1].split("!")[0]
    assert block == (" description gpu0001 ens1f0np0 H000001\n no switchport\n ip address 10.0.0.0 255.255.255.254\n no shutdown\n")
    assert text.count("\nip route ") == 128 + 4  # cross-group routes, then the same-group fallback (4 ECMP next hops)
    assert text.rstrip().endswith("end")


def test_self_check_catches_mismatches(glm1k_plan):
    index = PlanIndex(glm1k_plan)
    sw = glm1k_plan["switches"][0]
    view = switch_view(index, sw)
    text = template("ruijie_rgos", "switch.cfg.j2").render(view)
    unused = [u["name"] for u in view["unused"]]
    assert check_switch_config(text, sw, unused, "Mgmt 0", 24) == []
    bad = copy.deepcopy(sw)
    bad["routes"][0]["next_hop"] = "10.200.9.9"
    bad["interfaces"][3]["address"] = "10.0.0.200"
    problems = check_switch_config(text, bad, unused, "Mgmt 0", 24)
    assert any("missing route" in p for p in problems)
    assert any("unexpected route" in p for p in problems)
    assert any("expected address 10.0.0.200/31" in p for p in problems)
    # a dropped line in the text is caught too
    assert check_switch_config(text.replace(" no switchport\n", "", 1), sw, unused, "Mgmt 0", 24)


def test_render_refuses_a_plan_with_an_unsafe_string(tmp_path, glm1k_plan):
    plan = copy.deepcopy(glm1k_plan)
    plan["switches"][0]["interfaces"][0]["peer"]["device"] = "gpu1\ninterface Vlan 1"
    with pytest.raises(RenderError, match="refusing to render"):
        render_all(plan, tmp_path, only="ZC-O001")


LINE_BREAKERS = st.text(alphabet=string.printable + "\u2028\x85\x00\x1b", min_size=1, max_size=20)
# half the examples are names the inventory must accept, so the render path is really exercised
# (with LINE_BREAKERS alone nearly every example was refused and the test returned early)
NAMES = st.one_of(st.from_regex(r"[A-Za-z0-9][A-Za-z0-9._-]{0,18}", fullmatch=True), LINE_BREAKERS)


@settings(max_examples=80, deadline=None)
@given(server_name=NAMES, rack=NAMES, cluster=NAMES)
def test_no_inventory_string_breaks_out_of_its_line(server_name, rack, cluster):
    """Any string either is refused by the inventory, or renders inside exactly one config line."""
    from zcube_deploy.safety import check_name

    data = yaml.safe_load((INVENTORIES / "lab-64.yaml").read_text())
    data["cluster"] = cluster
    data["layout"]["rows"][0]["racks"].append({"name": rack, "role": "network"})
    data["servers"]["list"] = [{"name": server_name, "rack": rack, "u": 1}]
    data["topology"]["capacity_servers"] = 16
    unsafe = [v for v in (server_name, rack, cluster) if check_name(v) is not None]
    clash = rack in {r["name"] for row in data["layout"]["rows"] for r in row["racks"][:-1]}
    try:
        plan = build_plan(resolve_inventory(data, base=INVENTORIES))
    except InputErrors as exc:
        # refused only for a reason: an unsafe string (named in the message) or a rack name already taken
        assert unsafe or clash, f"safe names refused: {exc}"
        assert clash or any(repr(v) in str(exc) for v in unsafe), str(exc)
        return
    assert not unsafe, f"accepted unsafe {unsafe!r}"
    index = PlanIndex(plan)
    srv = next(s for s in plan["servers"] if s["name"] == server_name)
    host = template("netplan", "host.yaml.j2").render(server_view(index, srv))
    assert yaml.safe_load(host)["network"]["ethernets"]
    sw = next(s for s in plan["switches"] if s["name"] == srv["nics"][0]["switch"])
    text = template("ruijie_rgos", "switch.cfg.j2").render(switch_view(index, sw))
    starts = ("!", "hostname ", "mtu forwarding ", "interface ", " description ", " no switchport", " ip address ",
              " no shutdown", " shutdown", "ip route ", "end")
    assert all(ln.startswith(starts) for ln in text.splitlines()), "a line starts with something no template emits"
    lines = [ln for ln in text.splitlines() if f" {server_name} ens" in ln]
    assert len(lines) == sum(1 for n in srv["nics"] if n["switch"] == sw["name"])
    assert all(ln.startswith(" description ") for ln in lines)
    assert all(c not in text for c in "?\x00\x1b")


@pytest.mark.parametrize("inventory", ["lab-64.yaml", "glm-1k.yaml", "zcube-16k.yaml", pytest.param("zcube-64k.yaml", marks=pytest.mark.slow)])
def test_templates_render_without_undefined(inventory, glm1k_plan):
    """StrictUndefined: every example renders; big ones on a few devices to keep the suite fast."""
    from zcube_deploy.inventory import load_inventory

    plan = glm1k_plan if inventory == "glm-1k.yaml" else build_plan(load_inventory(INVENTORIES / inventory))
    index = PlanIndex(plan)
    for sw in plan["switches"][:2] + plan["switches"][-2:]:
        assert template("ruijie_rgos", "switch.cfg.j2").render(switch_view(index, sw))
    for srv in plan["servers"][:2] + plan["servers"][-1:]:
        assert yaml.safe_load(template("netplan", "host.yaml.j2").render(server_view(index, srv)))


def test_routing_proof_lab64_exhaustive(lab64_build):
    r = prove_routing(lab64_build)
    assert r["mode"] == "exhaustive"
    assert r["pairs_total"] == 128 * 127  # every ordered pair of NIC ports: every table routes to every other port
    assert r["ok"] and r["delivered"] == r["pairs_total"] and r["max_switches"] == 2
    # cross-group: every port pair in different groups leaves through its own switch (2 switches);
    # same group: on one switch (GPU 8 per switch: 8 x 7 ordered pairs each) or through the other port
    assert r["path_kinds"] == {"via own switch": 64 * 64 * 2, "same switch": 16 * 8 * 7,
                               "via the other port's switch": 128 * 127 - 64 * 64 * 2 - 16 * 8 * 7}


def test_routing_proof_glm1k_sampled(glm1k_build):
    r = run_zcube("check-routing", str(glm1k_build), "--samples", "20000", "--json")
    assert r.returncode == 0, r.stdout + r.stderr
    rep = json.loads(r.stdout)
    assert rep["checked"] == rep["delivered"] == 20000 and rep["max_switches"] == 2


@pytest.mark.slow
def test_routing_proof_zcube16k_sampled(tmp_path):
    r = run_zcube("build", "inventories/zcube-16k.yaml", "-o", str(tmp_path), cwd=ROOT)
    assert r.returncode == 0, r.stderr
    assert len(list((tmp_path / "configs").glob("*.cfg"))) == 256
    rep = prove_routing(tmp_path, samples=20000, seed=16)
    assert rep["ok"] and rep["checked"] == 20000 and rep["max_switches"] == 2, rep["failures"]
    # `zcube render` of the written plan: two workers, each reading and validating its own switches and
    # servers from plan.json, write what `zcube build` (one plan in memory, shared by the workers) wrote
    again = tmp_path / "again"
    r = run_zcube("render", str(tmp_path / "plan.json"), "-o", str(again), cwd=ROOT)
    assert r.returncode == 0, r.stderr
    assert (again / "manifest.json").read_bytes() == (tmp_path / "manifest.json").read_bytes()
    # a bad value in one server's row: the worker that reads it reports its position in the whole file
    lines = (tmp_path / "plan.json").read_text().split("\n")
    first = lines.index('"servers":[') + 1
    lines[first + 1001] = lines[first + 1001].replace('"address":"10.', '"address":"10.999.', 1)
    bad = tmp_path / "bad"
    bad.mkdir()
    (bad / "plan.json").write_text("\n".join(lines))
    r = run_zcube("render", str(bad / "plan.json"), "-o", str(bad), cwd=ROOT)
    assert r.returncode == 2, r.stdout + r.stderr
    assert "servers[1001].nics[" in r.stderr and "Traceback" not in r.stderr, r.stderr


def test_render_workers_refuse_a_plan_file_that_changed(tmp_path, glm1k_build):
    """A worker reading its rows from a plan.json that was replaced since the render began stops with
    a clear error instead of mixing two plans."""
    import shutil

    from zcube_deploy.errors import PlanFileError
    from zcube_deploy.render import RenderJob, _render_servers, read_shared

    shutil.copy(glm1k_build / "plan.json", tmp_path / "plan.json")
    plan, source = read_shared(tmp_path)
    (tmp_path / "out" / "hosts").mkdir(parents=True)
    job = RenderJob(plan, tmp_path / "out", PlanIndex(plan), source)
    assert len(_render_servers(job, [0, 5])) == 4  # two servers, two files each
    shutil.copy(glm1k_build / "plan.json", tmp_path / "plan.json.new")
    (tmp_path / "plan.json.new").replace(tmp_path / "plan.json")  # as `zcube plan` writes it: a new file renamed over
    with pytest.raises(PlanFileError, match="changed while it was rendered"):
        _render_servers(job, [1])


def test_routing_proof_fails_on_a_broken_file(tmp_path, lab64_build):
    import shutil

    shutil.copytree(lab64_build, tmp_path / "b")
    cfg = tmp_path / "b" / "configs" / "ZC-E002.cfg"
    lines = cfg.read_text().splitlines(True)
    cfg.write_text("".join(ln for ln in lines if not ln.startswith("ip route 10.0.0.0 ")))
    r = run_zcube("check-routing", str(tmp_path / "b"))
    assert r.returncode == 1
    assert "black hole at ZC-E002" in r.stdout


@pytest.mark.parametrize("value", ["gpu01\n", "ZC-O001\r\n", "A01\n"])
def test_a_trailing_line_break_is_refused(value):
    """'$' in a validation pattern also matches before a final newline: the checks must not."""
    from zcube_deploy.safety import check_description, check_interface, check_name

    assert check_name(value) and check_interface(value) and check_description(value)


@pytest.mark.parametrize("bad", ["gpu1\ninterface Vlan 1", "x!", "what?", "a" * 241, "end\n", "\r", "\x85", "\u2028", "tab\there", "é"])
def test_descriptions_checked_together_refuse_what_one_check_refuses(bad):
    """The view checks a switch's descriptions with one match over all of them; any value the single check
    refuses is refused, with the single check's words, wherever it stands among good ones."""
    from zcube_deploy.render.views import _safe_all
    from zcube_deploy.safety import DESCRIPTIONS_RE, check_description

    assert check_description(bad)
    for values in ([bad], ["gpu1 ens1 H1", bad], [bad, "gpu1 ens1 H1", "a" * 240], ["", bad, ""]):
        with pytest.raises(RenderError, match=f"refusing to render description {re.escape(repr(bad))}: it {re.escape(check_description(bad))}"):
            _safe_all("description", values, DESCRIPTIONS_RE, check_description)
    _safe_all("description", ["gpu1 ens1 H1", "", "a" * 240, "(x) [y] <z> a=b+c@d#e%f&g*h,i:j/k.l_m-n"], DESCRIPTIONS_RE, check_description)
    _safe_all("description", [], DESCRIPTIONS_RE, check_description)


def test_rerender_rewrites_only_what_changed(tmp_path, glm1k_plan):
    """A re-render into the same directory leaves files that already hold the right bytes alone (their
    mtimes stay), and replaces a changed, truncated, longer or foreign file with exactly the new bytes."""
    import os

    render_all(glm1k_plan, tmp_path, only="ZC-O00*")
    cfgs = sorted((tmp_path / "configs").glob("*.cfg"))
    want = {p: p.read_bytes() for p in cfgs}
    old = 1_000_000_000
    for p in cfgs:
        os.utime(p, (old, old))
    edited = {cfgs[0]: want[cfgs[0]].replace(b"no shutdown", b"shutdown", 1), cfgs[1]: want[cfgs[1]][:-10],
              cfgs[2]: want[cfgs[2]] + b"!\n", cfgs[3]: b""}
    for p, data in edited.items():
        p.write_bytes(data)
        os.utime(p, (old, old))
    render_all(glm1k_plan, tmp_path, only="ZC-O00*")
    assert {p: p.read_bytes() for p in cfgs} == want
    assert {p for p in cfgs if p.stat().st_mtime != old} == set(edited)


def test_render_of_a_hand_formatted_plan_file(tmp_path, glm1k_build):
    """A plan.json not in the canonical layout (here re-indented by another tool) is read whole once, by the
    main process, and renders the same files."""
    from zcube_deploy.render import read_shared

    doc = json.loads((glm1k_build / "plan.json").read_text())
    (tmp_path / "plan.json").write_text(json.dumps(doc, indent=2))
    plan, source = read_shared(tmp_path / "plan.json")
    assert source is None and len(plan["servers"]) == 128 and "nics" in plan["servers"][0]
    r = run_zcube("render", str(tmp_path / "plan.json"), "-o", str(tmp_path / "out"))
    assert r.returncode == 0, r.stderr
    assert (tmp_path / "out" / "manifest.json").read_bytes() == (glm1k_build / "manifest.json").read_bytes()


def _rendered(out) -> set[str]:
    return {f"{sub}/{p.name}" for sub in ("configs", "hosts") for p in (out / sub).iterdir()}


def test_render_into_another_fabrics_folder_removes_its_files_and_keeps_foreign_ones(tmp_path, glm1k_build, lab64_build):
    """glm-1k rendered, then lab-64 into the same folder: only lab-64's files remain in configs/ and hosts/ (the
    256 glm-1k host files its manifest listed are removed, and said so), a file no manifest lists is kept and named
    in a warning; then a ROFT (other switch names) removes lab-64's 16 configs. Entries of a hand-edited manifest
    outside configs/ and hosts/ are never followed."""
    import shutil

    out = tmp_path / "out"
    for sub in ("configs", "hosts"):
        shutil.copytree(glm1k_build / sub, out / sub)
    shutil.copy(glm1k_build / "manifest.json", out)
    (out / "configs" / "hand-made.cfg").write_text("hostname X\n")
    (out / "hosts" / "notes.txt").write_text("mine\n")
    r = run_zcube("render", str(lab64_build / "plan.json"), "-o", str(out))
    assert r.returncode == 0, r.stderr
    lab64 = set(json.loads((lab64_build / "manifest.json").read_text())["files"])
    assert set(json.loads((out / "manifest.json").read_text())["files"]) == lab64
    assert _rendered(out) == lab64 | {"configs/hand-made.cfg", "hosts/notes.txt"}
    quoted = [b.text for b in code_blocks(ROOT / "docs" / "render.md") if b.text.startswith(("rendered 16", "warning: 2 files"))]
    printed = " ".join((r.stdout + r.stderr).replace(str(out), "out").split())
    assert len(quoted) == 2 and all(" ".join(line.split()) in printed for q in quoted for line in q.splitlines()), printed
    assert (out / "configs" / "hand-made.cfg").read_text() == "hostname X\n"

    victim = tmp_path / "victim"
    victim.write_text("not the tool's\n")
    doc = json.loads((out / "manifest.json").read_text())
    doc["files"].update({"../victim": "0", "configs/../../victim": "0", str(victim): "0", "configs/..": "0"})
    (out / "manifest.json").write_text(json.dumps(doc))
    from zcube_deploy.designs import build_plan as build_any

    roft = build_any(load_inventory(ROOT / "tests" / "inventories" / "roft-small.yaml"))
    result = render_all(roft, out)
    assert victim.exists() and (out / "configs" / "hand-made.cfg").exists()
    assert sum(rel.startswith("configs/ZC-") for rel in result["removed"]) == 16
    assert _rendered(out) == set(result["manifest"]["files"]) | {"configs/hand-made.cfg", "hosts/notes.txt"}
    assert result["foreign"] == ["configs/hand-made.cfg", "hosts/notes.txt"]


def test_partial_render_keeps_only_this_inventorys_files(tmp_path, glm1k_plan, lab64_plan):
    """--only keeps the previous render's files of the devices not selected, when that render is of this plan's
    inventory; a previous render of another inventory is not carried into this plan's manifest (push would take its
    configs for this plan's), and its files go."""
    render_all(glm1k_plan, tmp_path, only="ZC-O00*,gpu0001")
    again = render_all(glm1k_plan, tmp_path, only="ZC-E002")
    assert not again["removed"]
    assert set(again["manifest"]["files"]) == {f"configs/ZC-O00{n}.cfg" for n in (1, 3, 5, 7, 9)} | {
        "configs/ZC-E002.cfg", "hosts/gpu0001.yaml", "hosts/gpu0001.sysctl.conf"}
    other = render_all(lab64_plan, tmp_path, only="ZC-O001")
    assert set(other["manifest"]["files"]) == {"configs/ZC-O001.cfg"} == _rendered(tmp_path)
    assert len(other["removed"]) == 7 and not other["foreign"]  # the 8 but ZC-O001, rendered again


def test_unreadable_previous_manifest_removes_nothing_and_says_so(tmp_path, lab64_plan):
    render_all(lab64_plan, tmp_path, only="ZC-O001,ZC-E002")
    (tmp_path / "manifest.json").write_text("{")
    r = render_all(lab64_plan, tmp_path, only="ZC-O001")
    assert r["previous_unreadable"] and not r["removed"] and r["foreign"] == ["configs/ZC-E002.cfg"]


def test_check_routing_reads_the_manifests_files(tmp_path, lab64_build):
    """check-routing reads the files render's manifest lists, not the folder's listing: a config no manifest lists
    (here a copy of a rendered one: a hostname in two configs) is not read and named; a listed file that is missing
    is an input error."""
    import shutil

    out = tmp_path / "out"
    for sub in ("configs", "hosts"):
        shutil.copytree(lab64_build / sub, out / sub)
    shutil.copy(lab64_build / "manifest.json", out)
    shutil.copy(out / "configs" / "ZC-O001.cfg", out / "configs" / "ZC-O001-copy.cfg")
    r = run_zcube("check-routing", str(out), "--samples", "200")
    assert r.returncode == 0, r.stdout + r.stderr
    assert "not read: 1 file in configs/ and hosts/ that manifest.json does not list: configs/ZC-O001-copy.cfg" in r.stdout
    (out / "configs" / "ZC-O003.cfg").unlink()
    r = run_zcube("check-routing", str(out), "--samples", "200")
    assert r.returncode == 2 and "ZC-O003.cfg: listed in manifest.json but missing" in r.stderr, r.stdout + r.stderr
