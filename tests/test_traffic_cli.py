"""`zcube traffic` as a user runs it: lab-64's plan, every design, the documented traffic.json keys,
failures, pd, traces with bad rows (exit 2 with their lines), determinism."""

from __future__ import annotations

import json
import re

import pytest

from tests.conftest import ROOT, run_zcube

KEYS = {"design", "workload", "gpus", "bytes", "gpu_bandwidth_gbps", "flows", "completion_time_s", "mlu", "rate_gbps", "hot"}


@pytest.fixture(scope="module")
def lab_plan(tmp_path_factory):
    out = tmp_path_factory.mktemp("traffic-plan")
    r = run_zcube("plan", "inventories/lab-64.yaml", "-o", str(out), cwd=ROOT)
    assert r.returncode == 0, r.stderr
    return out / "plan.json"


def traffic(plan, out, *args):
    r = run_zcube("traffic", str(plan), "-o", str(out), *args, cwd=ROOT)
    return r, (json.loads((out / "traffic.json").read_text()) if (out / "traffic.json").exists() else None)


def test_all_designs_with_a_failure(lab_plan, tmp_path):
    r, doc = traffic(lab_plan, tmp_path, "--design", "all", "--workload", "all-to-all,allreduce", "--fail", "tor")
    assert r.returncode == 0, r.stdout + r.stderr
    rows = doc["designs"]
    assert {x["design"] for x in rows} == {"zcube", "roft", "hpn", "rail-only", "clos"}
    assert len(rows) == 5 * 2 * 2  # designs x workloads x (healthy, failed)
    for x in rows:
        assert KEYS <= set(x), x["design"]
        assert set(x["rate_gbps"]) == {"min", "p50", "p99"}
        assert len(x["hot"]) <= 10 and all({"from", "to", "utilisation"} <= set(h) for h in x["hot"])
        assert x["gpus"] == 64 and x["gpu_bandwidth_gbps"] == 400.0
    healthy = {(x["design"], x["workload"]): x for x in rows if x["failure"] is None}
    # every design is non-blocking for all-to-all: the same completion time (ZCube within its 1024/1016-style edge)
    times = [healthy[(d, "all-to-all")]["completion_time_s"] for d in ("roft", "hpn", "rail-only", "clos")]
    assert max(times) / min(times) - 1 < 1e-9
    failed = [x for x in rows if x["failure"]]
    assert all("slowdown" in x for x in failed if not x["unrouted_flows"])
    assert {x["design"]: x.get("paper_one_tor_slowdown") for x in failed if x["workload"] == "allreduce"}["roft"] == 0.469
    assert all("slowdown" not in x for x in failed if x["unrouted_flows"])
    plan = json.loads(lab_plan.read_text())
    fabric = {c["id"] for c in plan["cables"] if c["kind"] == "fabric"}
    for x in rows:
        assert ("fabric_cable_utilisation" in x) == (x["design"] == "zcube")
        if x["design"] == "zcube":
            assert set(x["fabric_cable_utilisation"]) == fabric and max(x["fabric_cable_utilisation"].values()) <= 1 + 1e-9
    assert (tmp_path / "traffic.png").stat().st_size > 10_000
    assert "ZCube: 64 GPUs" in r.stdout and "ROFT" in r.stdout
    # a progress line per row, its time as the tables give it (it printed raw floats: "0.02147483648 s")
    progress = [ln.rstrip() for ln in r.stdout.splitlines() if re.match(r"\S.* (all-to-all|allreduce)( / .+)?: ", ln)]
    assert len(progress) == len(rows), progress
    assert all(re.fullmatch(r".*: (\d[\d,]*\.\d{3} ms|\d[\d,]*\.\d{2} s|not modelled)", ln) for ln in progress), progress


def test_same_input_same_bytes(lab_plan, tmp_path):
    a, b = tmp_path / "a", tmp_path / "b"
    for d in (a, b):
        r, _ = traffic(lab_plan, d, "--design", "zcube,roft", "--workload", "pd", "--ecmp", "hash", "--samples", "2",
                       "--requests", "200", "--placement", "random", "--seed", "3")
        assert r.returncode == 0, r.stderr
    assert (a / "traffic.json").read_bytes() == (b / "traffic.json").read_bytes()
    doc = json.loads((a / "traffic.json").read_text())
    for x in doc["designs"]:
        assert set(x["kv_transfer_s"]) == {"p50", "p99"} and x["kv_transfer_s"]["p99"] >= x["kv_transfer_s"]["p50"] > 0
        assert len(x["completion_time_samples_s"]) == 2


def test_fail_on_the_plans_own_elements(lab_plan, tmp_path):
    plan = json.loads(lab_plan.read_text())
    cable = next(c["id"] for c in plan["cables"] if c["kind"] == "fabric")
    switch = plan["switches"][0]["name"]
    for spec in (f"link:{cable}", f"switch:{switch}"):
        r, doc = traffic(lab_plan, tmp_path / spec.replace(":", "_"), "--fail", spec, "--workload", "allreduce")
        assert r.returncode == 0, r.stderr
        assert [x["failure"] for x in doc["designs"]] == [None, f"{spec.split(':')[0].replace('link', 'cable')} {spec.split(':')[1]}"]


@pytest.mark.parametrize("args,expect", [
    (("--fail", "switch:NOPE"), "no switch named 'NOPE'"),
    (("--fail", "random:x"), "is not link:CABLE"),
    (("--design", "roft,fat"), "unknown fat"),
    (("--workload", "pd", "--prefill", "9"), "do not fit"),
    (("--workload", "trace"), "trace needs --trace"),
    (("--bytes", "-1"), "positive number of bytes"),
    # an option without the one that reads it would be ignored in silence: refused, naming both
    (("--trace", "nosuch.csv"), "--trace: nosuch.csv given without the trace workload"),
    (("--samples", "5"), "only --ecmp hash draws them"),
    (("--requests", "10", "--placement", "spread"), "--requests, --placement: pd options given without the pd workload"),
])
def test_bad_options_exit_2(lab_plan, tmp_path, args, expect):
    r, doc = traffic(lab_plan, tmp_path, *args)
    assert r.returncode == 2, r.stdout + r.stderr
    assert expect in r.stdout + r.stderr
    assert "Traceback" not in r.stderr and doc is None


def test_trace_bad_rows_reported_with_their_lines(lab_plan, tmp_path):
    trace = tmp_path / "t.csv"
    trace.write_text("src,dst,bytes,start\n0,9,1e6,0\n1,1,5,0\n2,64,5,0\nx,3,5,0\n4,5,-2,0\n6,7,5\n8,9,5,-1\n")
    r, doc = traffic(lab_plan, tmp_path / "o", "--workload", "trace", "--trace", str(trace))
    assert r.returncode == 2 and doc is None
    text = r.stdout + r.stderr
    for line, what in ((3, "same GPU"), (4, "outside 0..63"), (5, "not integers"), (6, "not a positive number"), (7, "3 fields"),
                       (8, "not a time")):
        assert f"t.csv:{line}" in text and what in text, (line, what, text)
    assert "t.csv:2" not in text


def test_trace_runs(lab_plan, tmp_path):
    trace = tmp_path / "t.csv"
    trace.write_text("0,9,1e6,0\n1,9,1e6,0\n2,40,2e6,0.001\n")
    r, doc = traffic(lab_plan, tmp_path / "o", "--workload", "trace", "--trace", str(trace), "--design", "zcube,roft")
    assert r.returncode == 0, r.stderr
    z = doc["designs"][0]
    assert z["flows"] == 3 and z["completion_time_s"] > 0


def test_hall_colours_fabric_bundles_by_utilisation(lab_plan, tmp_path):
    r, doc = traffic(lab_plan, tmp_path / "t", "--workload", "all-to-all")
    assert r.returncode == 0, r.stderr
    h = run_zcube("hall", str(lab_plan), "-o", str(tmp_path / "h"), "--traffic", str(tmp_path / "t" / "traffic.json"), cwd=ROOT)
    assert h.returncode == 0, h.stderr
    html = (tmp_path / "h" / "hall" / "index.html").read_text()
    import re

    tagged = re.findall(r'data-group="(\w+)"[^>]*data-utilisation="([0-9.]+)"', html)
    assert tagged and {g for g, _ in tagged} == {"fabric"}
    # lab-64's all-to-all saturates ZCube's fabric links (non-blocking, every link used): the busiest bundle is at 100 %
    assert max(float(u) for _, u in tagged) > 0.99
    assert "#6a1b9a" in html  # the top colour of the scale
    plain = run_zcube("hall", str(lab_plan), "-o", str(tmp_path / "p"), cwd=ROOT)
    assert plain.returncode == 0 and "data-utilisation" not in (tmp_path / "p" / "hall" / "index.html").read_text()


def test_hall_refuses_a_traffic_json_of_another_plan(lab_plan, tmp_path):
    bad = tmp_path / "traffic.json"
    bad.write_text(json.dumps({"designs": [{"design": "zcube", "workload": "all-to-all", "failure": None,
                                            "fabric_cable_utilisation": {"F99999": 0.5}}]}))
    h = run_zcube("hall", str(lab_plan), "-o", str(tmp_path / "h"), "--traffic", str(bad), cwd=ROOT)
    assert h.returncode == 2 and "not fabric cables of this plan" in h.stdout + h.stderr
    bad.write_text(json.dumps({"designs": [{"design": "roft", "workload": "all-to-all"}]}))
    h = run_zcube("hall", str(lab_plan), "-o", str(tmp_path / "h"), "--traffic", str(bad), cwd=ROOT)
    assert h.returncode == 2 and "no healthy ZCube row" in h.stdout + h.stderr
    bad.write_text(json.dumps({"designs": [{"design": "zcube", "workload": "x", "fabric_cable_utilisation": {"F00001": "high"}}]}))
    h = run_zcube("hall", str(lab_plan), "-o", str(tmp_path / "h"), "--traffic", str(bad), cwd=ROOT)
    assert h.returncode == 2 and "designs[0].fabric_cable_utilisation" in h.stdout + h.stderr
