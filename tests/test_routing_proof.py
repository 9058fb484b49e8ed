"""The routing proof's rejection branches (render/routing_proof.py), each shown a path it must refuse.

The walk itself (topology/forwarding.py's Network.walk) is tested with real files elsewhere
(tests/test_render.py: a black hole; tests/test_routing.py: a session down). Here the proof is given
lab-64's real files and network, with the walk or one address's owner replaced, so that each of its
own checks after a delivered walk is the one that must fail: more than two switches, a first switch
not cabled to the source, a path that does not run from the first switch to the destination's, a loop.
"""

from __future__ import annotations


from zcube_deploy.render import routing_proof


def prove(directory, monkeypatch, change):
    """prove_routing on ``directory`` with ``change(net, ports)`` applied to the network it loaded."""
    real = routing_proof.load_rendered

    def load(d):
        net, ports = real(d)
        change(net, ports)
        return net, ports

    monkeypatch.setattr(routing_proof, "load_rendered", load)
    return routing_proof.prove_routing(directory, samples=200, seed=3)


def replace_walk(net, fn):
    """The walk (every ECMP branch; ZCube has one) with its one path replaced by ``fn(path as a list, error)``."""
    real = net.walk_all

    def walk(src, dst, max_switches=4):
        paths, err = real(src, dst, max_switches)
        path, err = fn(list(paths[0]) if paths else [], err)
        return [tuple(path)], err

    net.walk_all = walk


def test_the_real_files_prove(lab64_build, monkeypatch):
    r = prove(lab64_build, monkeypatch, lambda net, ports: None)
    assert r["ok"] and r["delivered"] == r["checked"] == 200 and not r["failures"]


def test_a_path_through_three_switches_is_refused(lab64_build, monkeypatch):
    r = prove(lab64_build, monkeypatch, lambda net, _: replace_walk(net, lambda p, e: (p + ["ZC-E004", "ZC-O005"][:3 - len(p)], e)))
    assert not r["ok"] and r["delivered"] == 0
    assert all(": 3 switches (path " in f for f in r["failures"])


def test_a_first_switch_not_cabled_to_the_source_is_refused(lab64_build, monkeypatch):
    """The first switch of a packet must be one of the source server's own switches."""
    def change(net, ports):
        for via in {r[2] for p in ports for r in p["routes"]}:
            net.owner[via] = "ZC-FAR"  # every next hop a host uses now belongs to a switch cabled to nobody
        replace_walk(net, lambda p, e: (["ZC-FAR"], None))

    r = prove(lab64_build, monkeypatch, change)
    assert not r["ok"] and r["delivered"] == 0
    assert "first switch ZC-FAR is not cabled to gpu" in r["failures"][0]


def test_a_path_not_from_the_first_switch_to_the_destinations_is_refused(lab64_build, monkeypatch):
    r = prove(lab64_build, monkeypatch, lambda net, _: replace_walk(net, lambda p, e: (p[::-1] if len(p) == 2 else ["ZC-X"], e)))
    assert not r["ok"] and r["delivered"] == 0
    assert all(" path(s) " in f and ", not the 1 its design takes: " in f for f in r["failures"])


def test_a_loop_on_one_switch_is_refused(lab64_build, monkeypatch):
    """A same-switch pair walked as [X, X]: the first and last switch are right, the path is a loop."""
    r = prove(lab64_build, monkeypatch, lambda net, _: replace_walk(net, lambda p, e: (p * 2 if len(p) == 1 else p, e)))
    assert not r["ok"] and r["checked"] > r["delivered"] > 0
    assert r["failures"] and all(f.split(": ", 1)[1].startswith("loop (path ") for f in r["failures"])


def test_no_pair_checked_is_not_a_proof(lab64_build, monkeypatch):
    """Host tables that route nowhere: nothing is checked, and that is no proof (exhaustive mode)."""
    real = routing_proof.load_rendered

    def load(d):
        net, ports = real(d)
        for p in ports:
            p["routes"] = []
        return net, ports

    monkeypatch.setattr(routing_proof, "load_rendered", load)
    r = routing_proof.prove_routing(lab64_build)
    assert r["checked"] == 0 and not r["ok"]
    assert r["failures"][0] == f"no NIC port of the {r['ports']} rendered has a route to another port of its island: no pair was walked"


def test_no_pair_to_sample_is_not_a_proof_and_no_crash(lab64_build, monkeypatch):
    """The sampled mode with host tables that route nowhere: was ValueError (randrange(0)); now no pair walked, not ok."""
    def change(net, ports):
        for p in ports:
            p["routes"] = []

    r = prove(lab64_build, monkeypatch, change)
    assert r["mode"].startswith("sampled") and r["checked"] == 0 and not r["ok"]
    assert "no pair was walked" in r["failures"][0]
