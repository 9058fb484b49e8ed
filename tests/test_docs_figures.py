"""What the docs quote is what the tool prints (issue 24, item 5).

Three kinds of quotation, each compared with a real run of the command on the bundled examples:

- **transcripts**: a code block whose lines start with ``$ zcube ...``; each command is run (paths
  mapped in TRANSCRIPTS to folders the tests built) and the quoted lines that follow it must appear
  in its output, in order;
- **quoted outputs**: any other untagged code block is either an output named in OUTPUTS (compared
  the same way) or listed in NOT_COMPARED with the reason; a new block in neither fails;
- **figures in prose**: the sentences and table rows in CLAIMS, each a pattern whose numbers must
  equal the figures the commands print today.

Lines are compared after masking the tool version and input hashes (conftest.normalise_volatile),
dropping box-drawing characters and collapsing runs of spaces, so a re-styled table border does not
fail while a changed figure does. One build per example (conftest's session fixtures) serves every
page; the zcube-16k and zcube-64k shapes are planned only in the slow run.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from conftest import ROOT, normalise_volatile, run_zcube
from test_docs import Block, code_blocks, doc_files, is_synopsis, shell_text

# --- comparing quoted lines with an output -------------------------------------------------------

_BOX = re.compile(r"[\u2500-\u257f]")


def normalise_line(line: str) -> str:
    return " ".join(_BOX.sub(" ", normalise_volatile(line)).split())


def missing_lines(quoted: list[str], output: str) -> list[str]:
    """The quoted lines (``...`` marks an elision) that are not in ``output`` in the quoted order."""
    actual = [n for n in (normalise_line(x) for x in output.splitlines()) if n]
    at, missing = 0, []
    for line in quoted:
        want = normalise_line(line)
        if not want or want in ("...", "…"):
            continue
        try:
            at = actual.index(want, at) + 1
        except ValueError:
            missing.append(line)
    return missing


def test_missing_lines_compares_figures_not_borders():
    out = "┏━━━┳━━━┓\n┃ a ┃  1 ┃\n│ switches      │ 16 RG-S6990  │\n  - S=8: fits\n"
    assert missing_lines([" a │ 1", "│ switches │ 16 RG-S6990 │", "...", "  - S=8: fits"], out) == []
    assert missing_lines(["│ switches │ 8 RG-S6990 │"], out) == ["│ switches │ 8 RG-S6990 │"]
    assert missing_lines(["  - S=8: fits", " a │ 1"], out) == [" a │ 1"]  # order counts


# --- the outputs the pages quote, produced once per session -------------------------------------

def _edited_lab64_plan(lab64: Path, dest: Path) -> None:
    """docs/plan-json.md's example: lab-64's plan.json edited by hand (a bad address, a field removed)."""
    plan = json.loads((lab64 / "plan.json").read_text(encoding="utf-8"))
    plan["switches"][0]["interfaces"][0]["address"] = "10.0.0.300"
    del plan["switches"][0]["mgmt_address"]
    dest.parent.mkdir(parents=True, exist_ok=True)
    dest.write_text(json.dumps(plan), encoding="utf-8")


# Each transcript command (as quoted, comment dropped) -> the paths in it and what stands for them:
# "lab-64" / "glm-1k" (the session's build of that example), "repository" (the path in this checkout)
# or "edited lab-64 plan". Commands run in a fresh folder; other relative paths are created there.
TRANSCRIPTS: dict[str, dict[str, str]] = {
    "zcube check-routing /tmp/dx/l64": {"/tmp/dx/l64": "lab-64"},
    "zcube check-routing out": {"out": "glm-1k"},
    "zcube compare --gpus 16384 --switch-capacity 51.2T": {},
    "zcube plan tests/bad_inventories/many_problems.yaml": {"tests/bad_inventories/many_problems.yaml": "repository"},
    "zcube render edited/plan.json -o out": {"edited/plan.json": "edited lab-64 plan"},
    "zcube migrate roft out -o mig": {"roft": "glm-1k-roft", "out": "glm-1k"},
    "zcube migrate roft out -o mig --unit 4-gpu": {"roft": "glm-1k-roft", "out": "glm-1k"},
    "zcube migrate roft beside -o mig --unit 4-gpu": {"roft": "glm-1k-roft", "beside": "glm-1k-beside-roft"},
    "zcube migrate roft inplace -o mig --unit 4-gpu": {"roft": "glm-1k-roft", "inplace": "glm-1k-inplace"},
    "zcube traffic roft -o t --workload allreduce --fail switch:RO-L01": {"roft": "glm-1k-roft"},
}


def transcripts() -> list[tuple[Block, str, list[str]]]:
    """(block, command, the quoted lines after it) for every ``$ zcube`` line of the pages."""
    found = []
    for path in doc_files():
        for block in code_blocks(path):
            if block.lang not in ("", "text") or not block.text.lstrip().startswith("$ "):
                continue
            for part in re.split(r"^\$ ", block.text, flags=re.M)[1:]:
                first, *rest = part.splitlines()
                found.append((block, re.sub(r"\s+#.*$", "", first).strip(), rest))
    return found


def _planned(tmp_path_factory, inventory: str) -> Path:
    """`zcube plan inventories/INVENTORY -o <tmp>` as a user runs it; returns the output folder."""
    out = tmp_path_factory.mktemp(inventory.removesuffix(".yaml"))
    r = run_zcube("plan", f"inventories/{inventory}", "-o", str(out), cwd=ROOT)
    assert r.returncode == 0, r.stderr
    return out


MIGRATE_PLANS = ("glm-1k-roft", "glm-1k-beside-roft", "glm-1k-inplace")  # docs/migrate.md migrates the first to the others


@pytest.fixture(scope="module")
def migrate_plans(tmp_path_factory) -> dict[str, Path]:
    """inventories/NAME.yaml planned, for each of MIGRATE_PLANS."""
    return {name: _planned(tmp_path_factory, f"{name}.yaml") for name in MIGRATE_PLANS}


@pytest.fixture(scope="module")
def built(lab64_build, glm1k_build, migrate_plans) -> dict[str, Path]:
    return {"lab-64": lab64_build, "glm-1k": glm1k_build, **migrate_plans}


def run_transcript(command: str, built: dict[str, Path], work: Path) -> str:
    """Run a quoted command with its paths mapped; its output with the real paths put back as quoted."""
    paths = TRANSCRIPTS[command]
    real: dict[str, str] = {}
    for quoted, what in paths.items():
        if what == "repository":
            real[quoted] = str(ROOT / quoted)
        elif what == "edited lab-64 plan":
            _edited_lab64_plan(built["lab-64"], work / quoted)
        else:
            real[quoted] = str(built[what])
    words = command.split()
    assert words[0] == "zcube", command
    args = [real.get(w, w) for w in words[1:]]
    r = run_zcube(*args, cwd=work)
    text = r.stdout + r.stderr
    for quoted, actual in sorted(real.items(), key=lambda kv: -len(kv[1])):
        text = text.replace(actual, quoted)
    return text


@pytest.mark.parametrize("index", range(len(transcripts())), ids=[f"{b.where} {c}" for b, c, _ in transcripts()])
def test_quoted_transcript_is_what_the_command_prints(index, built, tmp_path):
    block, command, quoted = transcripts()[index]
    assert command in TRANSCRIPTS, f"{block.where}: `$ {command}` is quoted but no test runs it: add it to TRANSCRIPTS"
    missing = missing_lines(quoted, run_transcript(command, built, tmp_path))
    assert not missing, f"{block.where}: `{command}` no longer prints these quoted lines:\n" + "\n".join(missing)


@pytest.fixture(scope="module")
def glm1k_plan_80(tmp_path_factory) -> str:
    """`zcube plan inventories/glm-1k.yaml` in an 80-column terminal (docs/plan.md quotes its table)."""
    out = tmp_path_factory.mktemp("plan80")
    r = run_zcube("plan", "inventories/glm-1k.yaml", "-o", str(out), cwd=ROOT, env={"COLUMNS": "80"})
    assert r.returncode == 0, r.stderr
    return r.stdout


# Untagged blocks that quote an output: the page and the block's first line -> how to get the output.
OUTPUTS = {
    ("docs/plan.md", "│ S / K / m"): lambda f: f["glm1k_plan_80"],
    ("docs/build.md", "rendered "): lambda f: f["glm1k_build_run"][1].replace(str(f["glm1k_build_run"][0]), "out"),
    ("docs/render.md", "! zcube-deploy"): lambda f: (f["glm1k_build_run"][0] / "configs" / "ZC-O001.cfg").read_text(encoding="utf-8"),
}
NOT_COMPARED = {
    ("docs/api.md", "lab64 - "): "the worked example's output: tests/test_api.py runs the example and compares it whole",
    ("docs/expand.md", "error: cannot expand"): "a refusal, excerpted: tests/test_expand.py::test_expand_refuses_what_moves checks its lines",
    ("docs/expand.md", "error: cannot expand (1 problem)"): "a ROFT plan and a ZCube inventory: "
                                                         "tests/test_design_paths.py::test_expand_refuses_another_design checks its lines",
    ("docs/expand.md", "expand: 64 -> 128"): "glm-1k grown from 64 to 128 servers: tests/test_expand.py::test_expand_glm_half_to_full checks these lines",
    ("docs/check-routing.md", "routing proof from roft"): "glm-1k-roft and a stage of its migration (a 40 s migrate): the same "
                                                          "lines on roft-small and its stages are checked by tests/test_design_paths.py",
    ("docs/migrate.md", "re-plan TO with"): "a line of `zcube migrate roft out` run where TO's inventory is found: "
                                            "tests/test_migrate_suggest.py::test_glm1k_round_trip_and_the_bundled_inplace_pair compares it",
    ("docs/render.md", "rendered 16 switch configs"): "lab-64 rendered into a glm-1k render's folder: "
                                                       "tests/test_render.py::test_render_into_another_fabrics_folder_removes_its_files_and_keeps_foreign_ones "
                                                       "compares these lines",
    ("docs/render.md", "warning: 2 files in"): "the same test compares this line",
    ("docs/layout.md", "zcube_deploy/"): "the repository's folders, not an output",
    ("docs/layout.md", " entry "): "the layer drawing, not an output (tests/test_layers.py holds it as its LAYERS table)",
    # (an empty first line: every other output block of the page)
    ("docs/replace.md", ""): "the walkthrough's outputs: tests/test_replace.py::test_the_docs_walkthrough runs the walkthrough over a "
                             "lab and compares every block marked `output of step N` with that step's output",
    ("docs/push.md", ""): "push's answers in failure cases (an unconfirmed write, a refused route or edited config, an "
                          "incomplete rollback), excerpts each checked by its tests/test_push_*.py over the lab",
}


def _key(block: Block) -> tuple[str, str]:
    return block.path.relative_to(ROOT).as_posix(), block.text.lstrip("\n").splitlines()[0] if block.text.strip() else ""


def quoted_outputs() -> list[Block]:
    """Untagged blocks that are neither commands nor transcripts: outputs, trees, excerpts."""
    return [b for p in doc_files() for b in code_blocks(p)
            if b.lang in ("", "text") and shell_text(b) is None and not is_synopsis(b) and b.text.strip()]


def _known(block: Block, table: dict) -> tuple | None:
    page, first = _key(block)
    return next((k for k in sorted(table, key=lambda k: -len(k[1])) if k[0] == page and first.startswith(k[1])), None)


@pytest.mark.parametrize("block", quoted_outputs(), ids=lambda b: b.where)
def test_quoted_output_is_what_the_command_prints(block, request):
    key = _known(block, OUTPUTS)
    if key is None:
        assert _known(block, NOT_COMPARED), (f"{block.where}: a quoted output no test compares: add it to OUTPUTS "
                                             f"(or, with the reason, to NOT_COMPARED) in {Path(__file__).name}")
        return
    fixtures = {name: request.getfixturevalue(name) for name in ("glm1k_plan_80", "glm1k_build_run")}
    missing = missing_lines(block.text.splitlines(), OUTPUTS[key](fixtures))
    assert not missing, f"{block.where}: the output no longer has these quoted lines:\n" + "\n".join(missing)


def test_every_listed_output_is_still_quoted():
    keys = {k for b in quoted_outputs() for k in (_known(b, OUTPUTS), _known(b, NOT_COMPARED)) if k}
    assert keys == set(OUTPUTS) | set(NOT_COMPARED), f"listed but no longer quoted: {set(OUTPUTS) | set(NOT_COMPARED) - keys}"
    assert {c for _, c, _ in transcripts()} == set(TRANSCRIPTS), "TRANSCRIPTS lists a command no page quotes any more"


# --- figures in prose ------------------------------------------------------------------------------

def _facts_from_plan(plan_dir: Path) -> dict:
    plan = json.loads((plan_dir / "plan.json").read_text(encoding="utf-8"))
    kinds = [c["kind"] for c in plan["cables"]]
    z = plan["sizing"]
    return {"S": z["S"], "K": z["K"], "m": z["m"], "switches": len(plan["switches"]), "servers": z["installed_servers"],
            "gpus": z["installed_gpus"], "host": kinds.count("host"), "fabric": kinds.count("fabric"), "model": plan["models"]["switch"]["name"]}


def _facts_from_summary(summary: dict) -> dict:
    return {"S": summary["S"], "K": summary["K"], "m": summary["m"], "switches": summary["switches"], "servers": summary["servers_installed"],
            "gpus": summary["gpus_installed"], "host": summary["host_cables"], "fabric": summary["fabric_cables"], "model": summary["switch_model"]}


@pytest.fixture(scope="module")
def example_facts(built) -> dict[str, dict]:
    return {"lab-64": _facts_from_plan(built["lab-64"]), "glm-1k": _facts_from_plan(built["glm-1k"])}


@pytest.fixture(scope="module")
def compare_16k() -> dict[str, dict]:
    r = run_zcube("compare", "--gpus", "16384", "--switch-capacity", "51.2T", "--json")
    assert r.returncode == 0, r.stderr
    return {d["design"]: d for d in json.loads(r.stdout)}


def _n(text: str) -> int:
    return int(text.replace(",", ""))


def _shape(f: dict) -> tuple:
    return f["S"], f["K"], f["m"], f["switches"]


# (page, pattern, example, what the pattern's groups must equal given that example's facts)
SHAPE_CLAIMS = [
    ("README.md", r"lab-64 (\d+)/(\d+)/(\d+) with (\d+) switches", "lab-64", _shape),
    ("README.md", r"glm-1k (\d+)/(\d+)/(\d+) with (\d+) switches,\s+([\d,]+) host and ([\d,]+) fabric cables", "glm-1k",
     lambda f: (*_shape(f), f["host"], f["fabric"])),
    ("README.md", r"zcube-16k (\d+)/(\d+)/(\d+) with (\d+) switches", "zcube-16k", _shape),
    ("README.md", r"zcube-64k (\d+)/(\d+)/(\d+) with (\d+) switches", "zcube-64k", _shape),
    ("README.md", r"starts a lab of (\d+) simulated Ruijie switches", "glm-1k", lambda f: (f["switches"],)),
    ("docs/demo.md", r"simulated Ruijie switches \((\d+) for glm-1k\)", "glm-1k", lambda f: (f["switches"],)),
    ("docs/api.md", r"lab-64 example \(([\d,]+) GPUs, (\d+) switches\)", "lab-64", lambda f: (f["gpus"], f["switches"])),
    ("docs/api.md", r"configs/ \((\d+) switch configs\)", "lab-64", lambda f: (f["switches"],)),
] + [
    ("docs/inventory.md", rf"^\| `{name}.yaml` \| ([\d,]+) \| ([\d,]+) \| (\S+) [^|]*\| (\d+)/(\d+)/(\d+) \| (\d+) \| ([\d,]+) / ([\d,]+) \|$", name,
     lambda f: (f["servers"], f["gpus"], f["model"], *_shape(f), f["host"], f["fabric"]))
    for name in ("lab-64", "glm-1k", "zcube-16k", "zcube-64k")
]
SLOW_EXAMPLES = ("zcube-16k", "zcube-64k")


def _claim_values(page: str, pattern: str, root: Path = ROOT) -> tuple:
    m = re.search(pattern.replace(" ", r"\s+"), (root / page).read_text(encoding="utf-8"), re.M)  # a claim may wrap
    assert m, f"{page}: the claim /{pattern}/ is gone: update SHAPE_CLAIMS with the page"
    return tuple(_n(g) if re.fullmatch(r"[\d,]+", g) else g for g in m.groups())


def _check_shape_claims(example: str, facts: dict, root: Path = ROOT) -> None:
    wrong = []
    for page, pattern, name, expected in SHAPE_CLAIMS:
        if name == example and _claim_values(page, pattern, root) != expected(facts):
            wrong.append(f"{page}: /{pattern}/ says {_claim_values(page, pattern, root)}, `zcube plan` gives {expected(facts)}")
    assert not wrong, "\n".join(wrong)


@pytest.mark.parametrize("example", ["lab-64", "glm-1k"])
def test_shapes_quoted_in_prose(example, example_facts):
    _check_shape_claims(example, example_facts[example])


@pytest.mark.slow
@pytest.mark.parametrize("example", SLOW_EXAMPLES)
def test_shapes_of_the_big_examples_quoted_in_prose(example, tmp_path):
    r = run_zcube("plan", f"inventories/{example}.yaml", "-o", str(tmp_path), "--json", cwd=ROOT)
    assert r.returncode == 0, r.stderr
    _check_shape_claims(example, _facts_from_summary(json.loads(r.stdout)))


def test_the_readmes_design_comparison(compare_16k):
    said = _claim_values("README.md", r"ZCube needs (\d+) switches against (\d+) for HPN dual-plane and Rail-only and (\d+) for ROFT, "
                                      r"([\d,]+)\s+optical modules against ([\d,]+) for HPN, and ([\d.]+) M USD of placeholder CapEx "
                                      r"against ([\d.]+) M\s+for\s+HPN")
    z, h, r, o = (compare_16k[d] for d in ("ZCube", "HPN dual-plane", "ROFT", "Rail-only"))
    assert h["switches"] == o["switches"], "the README says HPN and Rail-only need as many switches"
    assert said == (z["switches"], h["switches"], r["switches"], z["optical_modules"], h["optical_modules"],
                    f"{z['capex'] / 1e6:.2f}", f"{h['capex'] / 1e6:.2f}")


def test_every_shape_claim_is_on_its_page():
    for page, pattern, name, _ in SHAPE_CLAIMS:
        _claim_values(page, pattern)
        assert name in ("lab-64", "glm-1k", *SLOW_EXAMPLES)


# The check on what it must catch: a figure changed on a page fails, naming the page.
def test_a_changed_figure_fails(example_facts, tmp_path):
    for page in {c[0] for c in SHAPE_CLAIMS}:
        (tmp_path / page).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / page).write_text((ROOT / page).read_text(encoding="utf-8"), encoding="utf-8")
    _check_shape_claims("glm-1k", example_facts["glm-1k"], tmp_path)
    readme = tmp_path / "README.md"
    readme.write_text(readme.read_text(encoding="utf-8").replace("glm-1k 8/128/16 with 16 switches", "glm-1k 8/128/16 with 8 switches"),
                      encoding="utf-8")
    with pytest.raises(AssertionError, match=r"README.md: .* says \(8, 128, 16, 8, 2048, 1024\)"):
        _check_shape_claims("glm-1k", example_facts["glm-1k"], tmp_path)


# The analysis' single failures are exact (the Monte-Carlo trials are not: those figures name their
# trials and seed and are not re-measured here). Two trials are enough to print the exact table.
@pytest.mark.slow
def test_single_failure_figures(glm1k_build, tmp_path):
    r = run_zcube("analyze", str(glm1k_build / "plan.json"), "-o", str(tmp_path), "--samples", "2", "--probabilities", "0.01")
    assert r.returncode == 0, r.stderr
    page = (ROOT / "docs" / "analyze.md").read_text(encoding="utf-8")
    rows = re.findall(r"^\| (one switch|one fabric link) \|.*\|$", page, re.M)
    assert len(rows) == 2, "docs/analyze.md's single-failure table (glm-1k, mode static) is gone: update this test"
    quoted = [line.replace("|", " ") for line in re.findall(r"^\| one (?:switch|fabric link) \|.*\|$", page, re.M)]
    missing = missing_lines(quoted, r.stdout)
    assert not missing, "docs/analyze.md: `zcube analyze` on glm-1k no longer prints these single-failure rows:\n" + "\n".join(missing)
    static = re.search(r"^\| static \(default, same-group fallback\) \| ([\d,]+) \| ([\d,]+) \|", (ROOT / "README.md").read_text(encoding="utf-8"), re.M)
    assert static, "README.md's failure table lost its static row: update this test"
    unrouted = {m[1]: _n(m[2]) for m in re.finditer(r"^│ (one switch|one fabric link)\s+│(?:[^│]*│){3}\s+([\d,]+) │", r.stdout, re.M)}
    assert (_n(static[1]), _n(static[2])) == (unrouted["one switch"], unrouted["one fabric link"]), \
        f"README.md's static row says {static.groups()}, `zcube analyze` prints {unrouted}"
