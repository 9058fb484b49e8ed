"""Mutation check of verify's classifiers: run tests/test_compare_findings.py against each mutated
classifier (the source is patched in memory only) and say whether the tests catch it.

    python tests/mutate_classify.py            # every mutant, one process each
    python tests/mutate_classify.py "NAME"     # one
"""
import subprocess
import sys
import types
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
MUTANTS = {
 "duplicate never":      ("    if len(v.neighbours) <= 1:\n        return None\n    others", "    if len(v.neighbours) <= 2:\n        return None\n    others"),
 "down: no reseat":      ('fix = [{"op": FixOp.RESEAT, "device": v.switch, "port": v.port}, ctx.connect(v.cable)]', "fix = [ctx.connect(v.cable)]"),
 "down if up":           ("    if v.neighbours or v.up:\n        return None\n    fix = [{\"op\": FixOp.RESEAT", "    if v.neighbours:\n        return None\n    fix = [{\"op\": FixOp.RESEAT"),
 "missing: no lldp_on":  ('fix = [{"op": FixOp.LLDP_ON, "server": exp[0]}] if exp[0] in ctx.servers else []', "fix = []"),
 "unknown peer never":   ("    if v.idents[0] is not None:\n        return None\n    n = v.neighbours[0]", "    if True:\n        return None\n    n = v.neighbours[0]"),
 "swapped never":        ("    if not (d_home[0] in ctx.scope and", "    if True or not (d_home[0] in ctx.scope and"),
 "wrong port: no missing": ("    if v.elsewhere:\n        return out, {did}", "    if True:\n        return out, {did}"),
 "wrong port: wrong home": ("                   [ctx.move_home(did, d_home)], expected=v.exp_text()", "                   [ctx.move_home(did, (sw, port))], expected=v.exp_text()"),
 "unplanned: no move":   ("                if ident is not None and ident in ctx.end_of:", "                if False:"),
 "unexpected: wrong op": ('[{"op": FixOp.UNPLUG, "device": sw, "port": port}]', '[{"op": FixOp.REMOVE, "device": sw, "port": port}]'),
 "hostname never":       ("        if h != sw:", "        if False:"),
 "management never":     ('        if f"{want}/{plen}" not in have:', "        if False:"),
 "static: down hops counted": ("        missing = sorted(r for r in want - have if r[1] not in down_hops)", "        missing = sorted(want - have)"),
 "static: pools ignored": ("        have = {r for r in ctx.obs[sw].static_routes if ctx.in_pools(r[0])}", "        have = set(ctx.obs[sw].static_routes)"),
 "bgp: no cable cause":  ("        sessions, down = classify_bgp(ctx, findings)", "        sessions, down = classify_bgp(ctx, [])"),
 "bgp routes never":     ("        findings += sessions + classify_bgp_routes(ctx, down)", "        findings += sessions"),
 "no silent grouping":   ("    findings = group_silent_servers(ctx, findings)\n", ""),
 "identity by alias off": ("        if name in self.switches or name in self.alias:", "        if name in self.switches:"),
}
if len(sys.argv) < 2:
    survived = [m for m in MUTANTS if "SURVIVED" in subprocess.run([sys.executable, __file__, m], check=False, capture_output=True,
                                                                     text=True).stdout]
    print(f"{len(MUTANTS) - len(survived)} of {len(MUTANTS)} mutants killed; survived: {survived}")
    sys.exit(1 if survived else 0)
name = sys.argv[1]
src = (ROOT / "zcube_deploy" / "verify" / "classify.py").read_text()
a, b = MUTANTS[name]
assert src.count(a) == 1, (name, src.count(a))
mod = types.ModuleType("zcube_deploy.verify.classify")
mod.__file__ = str(ROOT / "zcube_deploy" / "verify" / "classify.py")
sys.modules[mod.__name__] = mod
import zcube_deploy.verify  # noqa: E402 - after the module stub above

zcube_deploy.verify.classify = mod
exec(compile(  # noqa: S102 (the mutant)
    src.replace(a, b), mod.__file__, "exec"), mod.__dict__)
rc = pytest.main(["-q", "-x", "-p", "no:cacheprovider", "--rootdir", str(ROOT), str(ROOT / "tests" / "test_compare_findings.py")])
print("MUTANT", name, "KILLED" if rc != 0 else "SURVIVED")
