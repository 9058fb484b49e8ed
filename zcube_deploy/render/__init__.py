"""Render switch configs and server netplan files from the plan; self-check; write a manifest."""

from __future__ import annotations

import hashlib
import json
import multiprocessing
import os
import re
import shutil
import tempfile
from concurrent.futures import Future, ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from zcube_deploy.errors import InvalidPlanFile, PlanFileError, Problem, RenderError
from zcube_deploy.plan.consistency import View, server_row, switch_row
from zcube_deploy.plan.io import read_plan
from zcube_deploy.plan.model import projection
from zcube_deploy.plan.roles import design_of
from zcube_deploy.plan.scope import matches, only_patterns
from zcube_deploy.platforms import switch_renderer
from zcube_deploy.render.owned import by_folder, carried, foreign, move_files, previous_render, retire
from zcube_deploy.render.selfcheck import check_switch_config
from zcube_deploy.render.views import PlanIndex, server_view, switch_view, sysctl_view
from zcube_deploy.templating import template

# what rendering reads of a plan (the cable list, the largest part, is not needed)
PLAN_FIELDS = projection(
    switches=None, servers=None, port_map=None, models=None, settings=None, sizing=None,
    cluster=None, inputs=None, tool_version=None, routing=None,
)
# rendering from plan.json (read_shared): what the main process reads (the devices' names, racks and
# ASNs: enough to select and index them); the switches and servers are read by whoever renders them
SHARED_FIELDS = projection(
    switches={"name", "rack", "asn", "routing_mode", "group", "plane"}, servers={"name", "rack"}, port_map=None, models=None, settings=None, sizing=None,
    cluster=None, inputs=None, tool_version=None, routing=None,
)
_ROWS = {"switches": projection(switches=None), "servers": projection(servers=None)}

SWITCH_TEMPLATE = "switch.cfg.j2"
HOST_PLATFORM = "netplan"
HOST_TEMPLATE = "host.yaml.j2"
SYSCTL_TEMPLATE = "host.sysctl.conf.j2"


Source = tuple[Path, tuple[int, int, int]]  # a plan.json and its identity when read (inode, size, mtime)


@dataclass(frozen=True)
class RenderJob:
    """What every chunk of a render reads: the plan, the output folder and the plan's index.

    ``source``: the plan.json ``plan`` was read from, with its identity when read (inode, size,
    mtime); each chunk then reads its own switches or servers from it (``plan`` holds only their
    names, racks and ASNs), so that two workers read and validate the big lists side by side
    instead of the parent alone before them. A file replaced since is an error, not a mixed render;
    the rows read are checked against the rest of the plan (plan.consistency) before they render.

    ``stage``: a folder inside ``out`` that receives every file whose bytes change; render_all moves
    them into ``out`` only once every device has rendered and passed its self-check.
    """

    plan: dict
    out: Path
    index: PlanIndex
    source: Source | None = None
    stage: Path | None = None  # where changed files are written until every device has rendered (render_all)


def _identity(path: Path) -> tuple[int, int, int]:
    st = path.stat()
    return st.st_ino, st.st_size, st.st_mtime_ns


def _rows(job: RenderJob, kind: str, indices: list[int]):
    """The ``kind`` rows ("switches" or "servers") at ``indices``, by position: the plan's list, or read
    from the plan file (a dict position -> row)."""
    if job.source is None:
        return job.plan[kind]
    path, identity = job.source
    positions = sorted(set(indices))
    rows = read_plan(path, _ROWS[kind], pick={kind: positions})[kind]  # in position order
    if _identity(path) != identity:
        raise PlanFileError(f"{path}: the plan file changed while it was rendered from; run `zcube render` again")
    if len(rows) != len(positions):
        raise PlanFileError(f"{path}: {kind} has fewer entries than when the render began; run `zcube render` again")
    view = View(job.plan, SHARED_FIELDS)  # the names of every device: what these rows refer to
    check = switch_row if kind == "switches" else server_row
    problems = [p for pos, row in zip(positions, rows) for p in check(view, pos, row)]
    if problems:
        raise InvalidPlanFile(problems, f"{path}: not a consistent plan (its parts disagree)")
    return dict(zip(positions, rows))


class _Worker:
    """The job of a forked worker process, set once by the pool's initializer (the parent never sets it).

    With the fork start method the initializer's arguments are inherited, not pickled: the workers
    share the parent's plan copy-on-write, as before, without a module-global in the parent.
    """

    job: RenderJob | None = None


def _init_worker(job: RenderJob) -> None:
    _Worker.job = job


def _worker_switches(indices: list[int]) -> tuple[dict[str, str], list[str]]:
    return _render_switches(_Worker.job, indices)


def _worker_servers(indices: list[int]) -> dict[str, str]:
    return _render_servers(_Worker.job, indices)


def select(names_racks: list[tuple[str, str]], pats: list[str]) -> list[int]:
    """Indices whose name or rack one of ``pats`` (plan/scope.py's only_patterns) takes (all when there is none)."""
    if not pats:
        return list(range(len(names_racks)))
    return [i for i, (n, r) in enumerate(names_racks) if matches(n, r, pats)]


def _write(job: RenderJob, rel: str, text: str) -> str:
    """Write ``text`` as ``rel`` unless ``job.out/rel`` already holds exactly these bytes; returns their sha256.

    A re-render into the same directory mostly rewrites identical files: leaving them alone keeps
    their mtimes (rsync, make) and avoids ext4's flush on truncate-and-rewrite (``auto_da_alloc``),
    which made rewriting 4,096 host files cost seconds. A changed file goes to ``job.stage/rel``
    (moved into place by render_all once everything rendered); without a stage it is written
    beside and renamed over the old one, so a reader (a push running from the directory) sees the
    old or the new file, never a missing or half-written one.

    The paths are strings, not ``Path`` objects: a render writes a file per device (4,352 at 16k GPUs),
    and pathlib's joins and ``write_bytes`` cost more CPU than the writes here (docs/benchmarks.md).
    """
    data = text.encode("utf-8")
    path = f"{job.out}/{rel}"
    try:
        with open(path, "rb") as f:
            same = f.read(len(data) + 1) == data
    except FileNotFoundError:
        same = None
    if job.stage is not None and not same:
        _put(f"{job.stage}/{rel}", data)
    elif same is None:
        _put(path, data)
    elif not same:
        _put(path + ".tmp", data)
        os.replace(path + ".tmp", path)
    return hashlib.sha256(data).hexdigest()


def _put(path: str, data: bytes) -> None:
    with open(path, "wb") as f:
        f.write(data)


def _render_switches(job: RenderJob, indices: list[int]) -> tuple[dict[str, str], list[str]]:
    plan, index = job.plan, job.index
    own = switch_renderer(plan["cluster"]["platform"])
    if own:  # a platform that renders itself (platforms.switch_renderer)
        suffix, render = own
        switches = _rows(job, "switches", indices)
        return {f"configs/{sw['name']}{suffix}": _write(job, f"configs/{sw['name']}{suffix}", render(plan, sw))
                for sw in (switches[i] for i in indices)}, []
    tpl = template(plan["cluster"]["platform"], SWITCH_TEMPLATE)
    hashes, problems = {}, []
    settings = plan["settings"]
    switches = _rows(job, "switches", indices)
    for i in indices:
        sw = switches[i]
        view = switch_view(index, sw)
        text = tpl.render(view)
        rel = f"configs/{sw['name']}.cfg"
        hashes[rel] = _write(job, rel, text)
        problems += check_switch_config(text, sw, [u["name"] for u in view["unused"]], view["mgmt"]["name"], settings["mgmt_prefix_len"],
                                        view["bgp"], platform=plan["cluster"]["platform"])
    return hashes, problems


def _render_servers(job: RenderJob, indices: list[int]) -> dict[str, str]:
    index = job.index
    tpl = template(HOST_PLATFORM, HOST_TEMPLATE)
    sysctl = template(HOST_PLATFORM, SYSCTL_TEMPLATE)
    hashes = {}
    servers = _rows(job, "servers", indices)
    for i in indices:
        srv = servers[i]
        rel = f"hosts/{srv['name']}.yaml"
        hashes[rel] = _write(job, rel, tpl.render(server_view(index, srv)))
        rel = f"hosts/{srv['name']}.sysctl.conf"
        hashes[rel] = _write(job, rel, sysctl.render(sysctl_view(index, srv)))
    return hashes


def _chunks(items: list[int], n: int) -> list[list[int]]:
    return [items[k::n] for k in range(n) if items[k::n]]


def read_shared(path: str | Path) -> tuple[dict, Source | None]:
    """The part of a plan.json that every render worker shares (SHARED_FIELDS), and the file's identity:
    pass both to :func:`render_all`, whose workers then read the switches and servers they render.

    A plan.json not in the canonical layout (hand-formatted) can only be parsed whole: it is read
    whole once, here (PLAN_FIELDS), and the source is None.
    """
    p = Path(path)
    if p.is_dir():
        p = p / "plan.json"
    identity = _identity(p) if p.is_file() else None
    plan = read_plan(p, SHARED_FIELDS, canonical_only=True)
    if plan is None:
        return read_plan(p, PLAN_FIELDS), None
    if identity is None or _identity(p) != identity:
        raise PlanFileError(f"{p}: the plan file changed while it was read; run `zcube render` again")
    return plan, (p, identity)


def render_all(plan: dict, out_dir: str | Path, only: str | None = None, jobs: int | None = None, source: Source | None = None) -> dict:
    """Render every (or every ``only``-matching) device. Returns the manifest; raises RenderError on a self-check
    mismatch, InvalidPlanFile when the rows read disagree with the rest of the plan.

    ``plan``: a whole plan (PLAN_FIELDS), or with ``source`` the shared part :func:`read_shared` gives.
    All or nothing: changed files are written to a stage folder inside ``out_dir``; only when every device
    rendered and passed its self-check are they moved into place and manifest.json written (last, by
    rename). A failed render leaves ``out_dir`` as it was (docs/render.md).

    The result holds the manifest, the counts, ``removed`` (the files of the previous render this one has not:
    render/owned.py), ``previous_unreadable`` (a previous manifest.json that could not be read: nothing removed)
    and ``foreign`` (what configs/ and hosts/ hold that the manifest does not list: never removed).
    """
    out = Path(out_dir)
    switches, servers = [(s["name"], s["rack"]) for s in plan["switches"]], [(s["name"], s["rack"]) for s in plan["servers"]]
    pats = only_patterns(only, [n for n, _ in switches + servers], [r for _, r in switches + servers], what="switch or server",
                         noun="device")
    sw_idx, srv_idx = select(switches, pats), select(servers, pats)
    index = PlanIndex(plan)
    out.mkdir(parents=True, exist_ok=True)
    stage = Path(tempfile.mkdtemp(prefix=".render-", dir=out))
    try:
        (stage / "configs").mkdir()
        (stage / "hosts").mkdir()
        hashes = _render_staged(RenderJob(plan, out, index, source, stage), sw_idx, srv_idx, jobs)
        manifest, removed = _publish(plan, out, stage, hashes, only)
    finally:
        shutil.rmtree(stage, ignore_errors=True)
    return {"manifest": manifest, "switches": len(sw_idx), "servers": len(srv_idx),
            # what this render did to the previous one's files, and what in configs/ and hosts/ is no render's
            "removed": removed or [], "removed_by_folder": by_folder(removed or []), "previous_unreadable": removed is None,
            "foreign": foreign(out, manifest["files"])}


def _render_staged(job: RenderJob, sw_idx: list[int], srv_idx: list[int], jobs: int | None) -> dict[str, str]:
    """Render the devices into ``job.stage`` (in worker processes on big plans); their files' hashes. Every
    chunk is waited for, so the plan problems of all of them are reported together."""
    jobs = jobs or min(2, os.cpu_count() or 1)
    hashes: dict[str, str] = {}
    problems: list[str] = []
    plan_problems: list[Problem] = []
    title = ""

    def collect(result) -> None:
        nonlocal title
        try:
            value = result.result() if isinstance(result, Future) else result()
        except InvalidPlanFile as exc:
            plan_problems.extend(exc.problems)
            title = exc.title
            return
        if isinstance(value, tuple):
            hashes.update(value[0])
            problems.extend(value[1])
        else:
            hashes.update(value)

    work = len(sw_idx) * 8 + len(srv_idx)
    if jobs > 1 and work > 2000 and "fork" in multiprocessing.get_all_start_methods():
        ctx = multiprocessing.get_context("fork")
        with ProcessPoolExecutor(max_workers=jobs, mp_context=ctx, initializer=_init_worker, initargs=(job,)) as pool:
            futures = [pool.submit(_worker_switches, c) for c in _chunks(sw_idx, jobs)]
            futures += [pool.submit(_worker_servers, c) for c in _chunks(srv_idx, jobs)]
            for f in futures:
                collect(f)
    else:
        collect(lambda: _render_switches(job, sw_idx))
        collect(lambda: _render_servers(job, srv_idx))
    if plan_problems:
        raise InvalidPlanFile(sorted(plan_problems, key=_position), title)
    if problems:
        raise RenderError("rendered configs do not match the plan:\n  " + "\n  ".join(problems[:50]))
    return hashes


def _position(problem: Problem) -> tuple:
    """A problem's place in the plan (section, then the numbers of its path), for a stable order across workers."""
    head, _, rest = problem.path.partition("[")
    return head, [int(n) for n in re.findall(r"\d+", rest)], problem.path


def _switch_suffix(plan: dict) -> str:
    own = switch_renderer(plan["cluster"]["platform"])
    return own[0] if own else ".cfg"


def _publish(plan: dict, out: Path, stage: Path, hashes: dict[str, str], only: str | None) -> tuple[dict, list[str] | None]:
    """Move the staged files into ``out`` and write manifest.json last (its old copy removed first, so that
    while files move no manifest describes a mix). Returns the manifest and the files of the previous render
    this one removed (render/owned.py: the previous manifest listed them, this one does not; None: the previous
    manifest could not be read, so nothing was removed)."""
    manifest_path = out / "manifest.json"
    previous = previous_render(manifest_path)
    files = carried(previous, plan, _switch_suffix(plan)) if only else {}  # the devices not selected keep theirs
    files.update(hashes)
    manifest = {
        "tool_version": plan["tool_version"],
        "cluster": plan["cluster"]["name"],
        "inventory_sha256": plan["inputs"]["inventory_sha256"],
        # what `zcube check-routing` holds the files to: the plan's design and each switch's role and plane
        "design": design_of(plan),
        "roles": {s["name"]: [s["group"], s["plane"]] for s in sorted(plan["switches"], key=lambda s: s["name"])},
        "files": dict(sorted(files.items())),
    }
    # before the old manifest goes: interrupted here, the next render still finds them listed in it
    removed = retire(out, previous.get("files", {}), files) if previous is not None else None
    manifest_path.unlink(missing_ok=True)
    move_files(stage, out)  # a rename per changed file
    tmp = out / "manifest.json.tmp"
    tmp.write_text(json.dumps(manifest, indent=1, sort_keys=True) + "\n")
    tmp.replace(manifest_path)
    return manifest, removed
