"""`zcube twin test --fib-walk` (twin/fibwalk.py): every in-service port pair of each island walked on the kernels'
FIBs. The parsers on `ip -j` output as the twin's kernels print it; the walk on a migration stage's own routes (the
plan's, as the twin installs them), with known-bad FIBs; the real twin in test_design_paths.py (slow)."""

from __future__ import annotations

import json

import pytest

from conftest import ROOT, run_zcube
from zcube_deploy.ipv4 import aton, ntoa
from zcube_deploy.topology.forwarding import network_from_plan
from zcube_deploy.twin import fibwalk
from zcube_deploy.twin.test import Ports

SWITCH_ROUTES = [
    {"dst": "10.16.0.32/31", "dev": "TH0-1_1", "protocol": "kernel", "scope": "link", "prefsrc": "10.16.0.32", "flags": []},
    {"type": "blackhole", "dst": "10.16.0.32/29", "protocol": "static", "metric": 20, "flags": []},
    {"dst": "10.16.0.40/29", "protocol": "bgp", "metric": 20, "flags": [],
     "nexthops": [{"gateway": "10.210.0.17", "dev": "FH0-3", "weight": 1, "flags": []},
                  {"gateway": "10.210.0.19", "dev": "FH0-4", "weight": 1, "flags": ["dead", "linkdown"]}]},
    {"dst": "10.16.0.48/29", "gateway": "10.210.0.19", "dev": "FH0-4", "protocol": "static", "metric": 30, "flags": []},
    {"dst": "10.16.0.48/29", "gateway": "10.210.0.17", "dev": "FH0-3", "protocol": "static", "metric": 10, "flags": []},
    {"dst": "10.99.0.0/24", "dev": "FH0-3", "protocol": "static", "scope": "link", "flags": []},
]
RULES = [{"priority": 0, "src": "all", "table": "local"}, {"priority": 101, "src": "10.0.0.1", "table": "101"},
         {"priority": 32766, "src": "all", "table": "main"}]
HOST_ROUTES = [
    {"type": "unreachable", "dst": "10.0.0.0/25", "table": "101", "metric": 1000, "flags": []},
    {"dst": "10.0.0.0/25", "gateway": "10.0.0.128", "dev": "ens1f1np1", "table": "101", "metric": 200, "flags": []},
    {"dst": "10.0.0.0/28", "gateway": "10.0.0.0", "dev": "ens1f0np0", "table": "101", "metric": 100, "flags": ["linkdown"]},
    {"dst": "10.0.0.0/25", "gateway": "10.0.0.0", "dev": "ens1f0np0", "table": "101", "metric": 100, "flags": []},
    {"dst": "10.0.0.0/25", "gateway": "10.9.9.9", "dev": "ens1f0np0", "table": "102", "metric": 1, "flags": []},
]


def test_kernel_tables_are_read_as_the_kernel_forwards():
    entries, odd = fibwalk.switch_routes(SWITCH_ROUTES)
    got: dict[tuple[str, int], list[str]] = {}
    for n, pl, h in entries:
        got.setdefault((ntoa(n), pl), []).append(ntoa(h))
    assert got == {("10.16.0.32", 29): ["0.0.0.0"],                # a blackhole: the walk stops there
                   ("10.16.0.40", 29): ["10.210.0.17"],            # the dead member left out
                   ("10.16.0.48", 29): ["10.210.0.17"]}            # the lowest metric only; the connected /31 is the address's
    assert odd == 1                                                # the route out of a device without a gateway: said, not followed
    rows = fibwalk.host_port_routes(RULES, HOST_ROUTES, "10.0.0.1")
    assert [(ntoa(n), pl, gw and ntoa(gw), m) for n, pl, gw, m in rows] == [
        ("10.0.0.0", 25, "10.0.0.0", 100), ("10.0.0.0", 25, "10.0.0.128", 200), ("10.0.0.0", 25, None, 1000)]
    assert fibwalk.host_port_routes(RULES, HOST_ROUTES, "10.0.0.3") is None
    addrs = [{"ifname": "lo", "flags": ["LOOPBACK", "UP", "LOWER_UP"], "addr_info": [{"family": "inet", "local": "127.0.0.1", "prefixlen": 8}]},
             {"ifname": "FH0-3", "flags": ["BROADCAST", "UP"], "addr_info": [{"family": "inet", "local": "10.210.0.16", "prefixlen": 31}]}]
    assert fibwalk.interfaces(addrs) == [("lo", aton("127.0.0.1"), 8)]  # no carrier: not an address the walk can use


@pytest.fixture(scope="module")
def stage(tmp_path_factory):
    """Stage 1 of roft-small -> zcube-small (4-GPU units, floor 0.5): the ROFT island in eBGP, the ZCube one in mode bgp."""
    d = tmp_path_factory.mktemp("fibwalk")
    for name, inv in (("roft", "roft-small.yaml"), ("zcube", "zcube-small.yaml")):
        assert run_zcube("plan", str(ROOT / "tests" / "inventories" / inv), "-o", str(d / name)).returncode == 0
    r = run_zcube("migrate", str(d / "roft" / "plan.json"), str(d / "zcube" / "plan.json"), "-o", str(d / "mig"),
                  "--unit", "4-gpu", "--capacity-floor", "0.5")
    assert r.returncode == 0, r.stderr
    return json.loads((d / "mig" / "stage-01" / "plan.json").read_text())


def _net(plan: dict):
    """The stage's forwarding as the twin installs it (the plan's routes), its host ports keyed by address as
    fibwalk.kernel_network keys them."""
    nics = {s["name"]: s["nics"] for s in plan["servers"]}
    net = network_from_plan(plan["routing"], plan["switches"], nics)
    net.host_routes = {(h, ntoa(net.host_address[(h, p)])): r for (h, p), r in net.host_routes.items()}
    return net, Ports(plan, {"namespaces": {s["name"]: s["name"] for s in plan["servers"]}})


def test_every_pair_of_each_island_walked_and_known_bad_fibs_found(stage):
    """All 1,152 port pairs (the twin's baseline counts the same), 96 + 96 GPU pairs, none across the islands walked.
    Known-bad: a blackhole route for one port on a leaf fails the pairs that cross it (the GPU pairs still reach by
    the other port pair); a GPU whose two addresses nobody holds leaves every pair with it unreachable."""
    net, ports = _net(stage)
    islands, cross, oos, examples = fibwalk.walk(net, ports, stage)
    assert {k: (i.gpu_pairs, i.gpu_pairs_unreachable, i.port_pairs_failed) for k, i in islands.items()} == \
        {"roft": (96, 0, 0), "zcube": (96, 0, 0)}
    assert sum(i.port_pairs_walked for i in islands.values()) == 1152 and cross == 16 * 16 and oos == 0 and not examples
    leaf = next(s for s in stage["switches"] if s["group"] == "leaf")
    far = next(n for s in stage["servers"] for n in s["nics"] if n["group"] == "leaf" and n["switch"] != leaf["name"])
    net.tables[leaf["name"]].setdefault(32, {})[aton(far["address"])] = [fibwalk.NO_NEXT_HOP]
    net.tables[leaf["name"]] = dict(sorted(net.tables[leaf["name"]].items(), reverse=True))
    net._next_memo.clear()
    islands, _, _, examples = fibwalk.walk(net, ports, stage)
    assert islands["roft"].port_pairs_failed > 0 and islands["roft"].gpu_pairs_unreachable == 0
    assert all(dst == far["address"] and "blackhole" in why for _, dst, why in examples)
    net, ports = _net(stage)
    srv = next(s for s in stage["servers"] if any(n["group"] == "odd" for n in s["nics"]))
    gone = [n for n in srv["nics"] if n["gpu"] == min(m["gpu"] for m in srv["nics"] if m["group"] == "odd")]
    for n in gone:
        net.owner.pop(aton(n["address"]))
    net._connected_memo.clear()
    islands, _, _, _ = fibwalk.walk(net, ports, stage)
    others = {(s["name"], n["gpu"]) for s in stage["servers"] for n in s["nics"] if n["group"] in ("odd", "even") and s["name"] != srv["name"]}
    assert islands["zcube"].gpu_pairs_unreachable == len(others) and islands["roft"].gpu_pairs_unreachable == 0


def test_a_walk_that_could_not_be_trusted_passes_nothing():
    """A FIB that changed during the read, or a read problem, fails both checks (never reported as passed)."""
    isl = {"roft": fibwalk.IslandWalk(4, 6, 0, 12, 0, 0, "1 or 3")}
    good = fibwalk.FibWalk(isl, 0, 0, True, [], [], 0.1, 0.1)
    assert all(c.ok for c in good.checks())
    assert not any(c.ok for c in fibwalk.FibWalk(isl, 0, 0, False, [], [], 0.1, 0.1).checks())
    assert not any(c.ok for c in fibwalk.FibWalk(isl, 0, 0, True, ["gpu01: no policy rule from 10.0.0.1"], [], 0.1, 0.1).checks())
    empty = {"roft": fibwalk.IslandWalk(0, 0, 0, 0, 0, 0, "1 or 3")}
    assert not any(c.ok for c in fibwalk.FibWalk(empty, 0, 0, True, [], [], 0.1, 0.1).checks())
