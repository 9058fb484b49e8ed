"""`zcube compare`: the construction rules on cases worked out by hand (README, "Comparing
designs"), the 16,384-GPU figures of zcube.md section 7, and the CLI."""

from __future__ import annotations

import json

import pytest

from conftest import INVENTORIES, run_zcube
from zcube_deploy.analysis.designs import Params, Prices, compare_designs, parse_capacity

PRICES = Prices(switch=60000, optic={200: 500, 400: 900}, copper_cable=150, fibre_cable=60)


def by_name(n: int, cap: str = "51.2T", **kw) -> dict:
    return {d.design: d for d in compare_designs(Params(n, parse_capacity(cap), **kw), PRICES)}


def test_16k_on_51t_matches_the_paper():
    d = by_name(16384)
    z, h, r, ro = d["ZCube"], d["HPN dual-plane"], d["ROFT"], d["Rail-only"]
    # zcube.md section 7: ZCube 256 switches and 49,152 x 200G links; ROFT 640; Rail-only 384; HPN 384
    assert (z.switches, z.host_links + z.switch_links, z.switch_link_gbps) == (256, 49152, 200)
    assert (h.switches, r.switches, ro.switches) == (384, 640, 384)
    assert r.layers == {"leaves": 256, "aggregation": 256, "cores": 128} and r.diameter == 5
    assert r.host_links + r.switch_links == 49152 and r.switch_link_gbps == 400  # 49,152 x 400G
    assert h.layers == {"leaves": 256, "spines": 128}  # 4N/R leaves, 2N/R spines
    # 2N host links each; switch links: N at 200G for ZCube, 2N-equivalent (N at 400G) for HPN
    assert z.host_links == h.host_links == 32768
    assert h.switch_link_tbps == 2 * z.switch_link_tbps
    # one third fewer switches and optical modules than HPN
    assert z.switches / h.switches == pytest.approx(2 / 3) and z.optical_modules / h.optical_modules == pytest.approx(2 / 3)
    assert (z.copper_cables, z.fibre_cables, z.optical_modules) == (16384, 32768, 65536)
    assert (z.diameter, h.diameter, ro.diameter) == (2, 3, 3)
    assert (z.max_gpus, h.max_gpus, r.max_gpus, ro.max_gpus) == (16384, 16384, 524288, 65536)
    # CapEx by hand: 256 x 60k + 65,536 x 500 + 16,384 DAC x 150 + 32,768 fibres x 60
    assert z.capex == 256 * 60000 + 65536 * 500 + 16384 * 150 + 32768 * 60
    # HPN: 384 x 60k + 2 x 32,768 x 500 (host) + 2 x 16,384 x 900 (400G uplinks) + 49,152 fibres x 60
    assert h.capex == 384 * 60000 + 65536 * 500 + 32768 * 900 + 49152 * 60


def test_1k_by_hand():
    d = by_name(1024)
    # ZCube: S = 8 (smallest multiple of G), K = 128, m = 16; 8*8*16 fabric links
    assert (d["ZCube"].switches, d["ZCube"].switch_links) == (16, 1024)
    # HPN per plane: 1024/128 = 8 leaves, 8*64/128 = 4 spines
    assert (d["HPN dual-plane"].switches, d["HPN dual-plane"].switch_links) == (24, 2 * 8 * 64)
    # ROFT: 128 servers in pods of 64 -> 8*2 = 16 leaves <= 128: 2-tier, 8 spines
    assert (d["ROFT"].switches, d["ROFT"].diameter, d["ROFT"].switch_links) == (24, 3, 16 * 64)
    # Rail-only: per rail 128 GPUs -> 2 leaves, 1 spine; 8 rails
    assert (d["Rail-only"].switches, d["Rail-only"].switch_links) == (24, 8 * 2 * 64)
    assert d["HPN dual-plane"].fibre_cables == 2048 + 1024 and d["HPN dual-plane"].optical_modules == 2 * 3072


def test_tiny_needs_no_spines():
    d = by_name(64, "25.6T")  # h = 128, k = 64
    assert (d["HPN dual-plane"].switches, d["HPN dual-plane"].switch_links, d["HPN dual-plane"].diameter) == (2, 0, 1)
    assert (d["Rail-only"].switches, d["Rail-only"].diameter) == (8, 1)  # one leaf per rail
    assert d["ROFT"].layers == {"leaves": 8, "spines": 4}  # 8 rails of one pod; 8*32/64 spines


def test_roft_turns_three_tier_past_k_squared_over_two():
    assert by_name(8192)["ROFT"].layers == {"leaves": 128, "spines": 64}
    big = by_name(8192 + 8)["ROFT"]  # 1,025 servers: 17 pods of up to 64 servers, 8 leaves each
    assert big.diameter == 5 and big.layers == {"leaves": 136, "aggregation": 136, "cores": 68}
    assert big.switch_links == 136 * 64 * 2


def test_64k_needs_102t_for_one_plane():
    d = by_name(65536)
    assert not d["ZCube"].feasible and not d["HPN dual-plane"].feasible and d["ROFT"].feasible
    d = by_name(65536, "102.4T", lanes_per_cage=4, cages=128)
    assert (d["ZCube"].switches, d["HPN dual-plane"].switches, d["ROFT"].switches, d["Rail-only"].switches) == (512, 768, 1280, 768)


def test_cli_bare_parameters_table_and_json():
    r = run_zcube("compare", "--gpus", "16384", "--switch-capacity", "51.2T")
    assert r.returncode == 0, r.stderr
    assert "256" in r.stdout and "384" in r.stdout and "640" in r.stdout and "ratio" in r.stdout
    r = run_zcube("compare", "--gpus", "16384", "--switch-capacity", "51.2T", "--json")
    rows = json.loads(r.stdout)
    assert [x["design"] for x in rows] == ["ZCube", "HPN dual-plane", "ROFT", "Rail-only"]
    for x in rows:
        assert {"design", "switches", "switch_links", "host_links", "copper_cables", "fibre_cables", "optical_modules",
                "diameter", "max_gpus", "capex"} <= set(x)
    assert rows[0]["switches"] == 256 and rows[0]["capex"] == 52551680


def test_cli_inventory_and_plan_agree(tmp_path):
    inv = run_zcube("compare", str(INVENTORIES / "glm-1k.yaml"), "--json")
    assert inv.returncode == 0, inv.stderr
    run_zcube("plan", str(INVENTORIES / "glm-1k.yaml"), "-o", str(tmp_path))
    plan = run_zcube("compare", str(tmp_path / "plan.json"), "--json")
    assert plan.returncode == 0, plan.stderr
    assert json.loads(inv.stdout) == json.loads(plan.stdout)
    assert json.loads(plan.stdout)[0]["switches"] == 16


@pytest.mark.parametrize("args, where", [
    (["--gpus", "1024", "--switch-capacity", "fast"], "--switch-capacity"),
    (["--gpus", "0"], "--gpus"),
    ([], "nothing to compare"),
    (["--gpus", "64", "--switch-model", "NOPE"], "--switch-model"),
    (["--gpus", "64", "--oversubscription", "0"], "--oversubscription"),
])
def test_cli_bad_input(args, where):
    r = run_zcube("compare", *args)
    assert r.returncode == 2 and where in r.stderr and "Traceback" not in r.stderr


def test_cli_reports_every_bad_flag_at_once():
    r = run_zcube("compare", "--gpus", "-5", "--switch-capacity", "7X", "--oversubscription", "0")
    assert r.returncode == 2 and "internal error" not in r.stderr and "3 problems" in r.stderr
    for flag in ("--switch-capacity", "--gpus", "--oversubscription"):
        assert f"- {flag}:" in r.stderr
