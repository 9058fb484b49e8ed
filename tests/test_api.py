"""The public Python API (issue 13, item 5): docs/api.md's worked example runs as written and prints
what the page says; its files are checked independently of the code that wrote them."""

from __future__ import annotations

import hashlib
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
API_DOC = ROOT / "docs" / "api.md"


def _blocks(lang: str) -> list[str]:
    return re.findall(rf"^```{lang}\n(.*?)^```$", API_DOC.read_text(encoding="utf-8"), re.DOTALL | re.MULTILINE)


def test_the_worked_example_runs_and_prints_what_the_page_says(tmp_path):
    example, printed = _blocks("python")[0], _blocks("text")[0]
    script = tmp_path / "example.py"
    script.write_text(example)
    r = subprocess.run([sys.executable, str(script)], cwd=tmp_path, capture_output=True, text=True, timeout=600, check=False,
                       env={"PATH": "/usr/bin:/bin", "TMPDIR": str(tmp_path), "HOME": str(tmp_path)})
    assert r.returncode == 0, r.stderr
    assert r.stdout == printed

    work = next(tmp_path.glob("zcube-api-*"))
    plan = json.loads((work / "plan.json").read_text())
    names = {s["name"] for s in plan["switches"]}
    assert {p.stem for p in (work / "configs").glob("*.cfg")} == names
    assert {p.name.split(".")[0] for p in (work / "hosts").glob("*.yaml")} == {s["name"] for s in plan["servers"]}
    manifest = json.loads((work / "manifest.json").read_text())
    assert len(manifest["files"]) == len(names) + 2 * len(plan["servers"])
    for rel, digest in manifest["files"].items():
        assert hashlib.sha256((work / rel).read_bytes()).hexdigest() == digest
    with open(work / "cables.csv", encoding="utf-8") as f:
        assert sum(1 for _ in f) - 1 == len(plan["cables"]) == int(re.search(r"cabling: (\d+) cables", r.stdout)[1])
    assert (work / "cabling.xlsx").stat().st_size > 0
    analysis = json.loads((work / "analyze" / "analyze.json").read_text())
    assert [x["p"] for x in analysis["random_link_failures"]] == [0.01]
    assert (work / "analyze" / "unreachability.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_api_functions_are_typed_and_documented():
    import inspect

    import zcube_deploy

    for name in zcube_deploy.__all__:
        if name == "__version__":
            continue
        fn = getattr(zcube_deploy, name)
        assert callable(fn) and fn.__doc__ and len(fn.__doc__) > 60, name
        sig = inspect.signature(fn)
        assert sig.return_annotation is not inspect.Signature.empty, name
        assert all(p.annotation is not inspect.Parameter.empty for p in sig.parameters.values()), name
        assert f"`{name}(" in API_DOC.read_text(), f"{name} is not in docs/api.md"


def test_api_names_survive_importing_the_subpackages():
    """A function named like a subpackage (zcube_deploy.plan ...) would be replaced by it on import."""
    import zcube_deploy
    import zcube_deploy.cabling.run
    import zcube_deploy.plan.io
    import zcube_deploy.push
    import zcube_deploy.render
    import zcube_deploy.verify.pipeline

    for name in zcube_deploy.__all__[1:]:
        assert inspect_is_function(getattr(zcube_deploy, name)), name


def inspect_is_function(obj) -> bool:
    import inspect

    return inspect.isfunction(obj)


def test_bad_input_is_a_list_of_problems_not_a_traceback(tmp_path):
    import zcube_deploy
    from zcube_deploy.errors import InputErrors

    with pytest.raises(InputErrors) as exc:
        zcube_deploy.compare_designs(gpus=16384, switch_capacity="7X")
    assert exc.value.problems and all(p.message for p in exc.value.problems)
    with pytest.raises(InputErrors) as exc:
        zcube_deploy.analyze_failures(tmp_path / "plan.json", tmp_path, probabilities=[0.0])
    assert exc.value.problems[0].path == "--probabilities"


@pytest.mark.slow
def test_push_and_verify_through_the_api_against_a_lab(tmp_path):
    """The page's push-and-verify snippet against a running lab: pushed, then no findings."""
    import zcube_deploy as zc
    from zcube_deploy.lab.server import running_lab

    plan = zc.plan_inventory(ROOT / "inventories" / "lab-64.yaml", tmp_path)
    zc.render_configs(plan, tmp_path)
    with running_lab(plan, out_dir=tmp_path / "lab"):
        lab = tmp_path / "lab" / "lab.json"
        dry = zc.push_configs(tmp_path / "plan.json", tmp_path, lab=lab)
        assert dry["ok"] and {d["status"] for d in dry["devices"]} == {"would_change"}
        report = zc.push_configs(tmp_path / "plan.json", tmp_path, dry_run=False, lab=lab)
        assert report["ok"] and {d["status"] for d in report["devices"]} == {"changed"}
        result = zc.verify_network(tmp_path / "plan.json", tmp_path / "verify", lab=lab)
    assert result["findings"] == [] and result["errors"] == {}
    doc = json.loads((tmp_path / "verify" / "verify.json").read_text())
    assert doc["summary"]["switches_verified"] == len(plan["switches"])
