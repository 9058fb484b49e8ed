"""Mutation check of verify's classifiers: run tests/test_compare_findings.py against each mutated
classifier (the source is patched in memory only) and say whether the tests catch it.

    python tests/mutate_classify.py            # every mutant, in this one process
    python tests/mutate_classify.py "NAME"     # one (or several names)

The suite runs it (tests/test_compare_findings.py::test_every_classifier_mutant_is_killed): a mutant
that survives is a branch of classify.py that no test guards. Each mutant replaces
``zcube_deploy.verify.classify`` in ``sys.modules`` with a module executed from the patched source,
and the test module is imported afresh, so it binds the mutant's functions.
"""
import sys
import types
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SOURCE = ROOT / "zcube_deploy" / "verify" / "classify.py"
MUTANTS = {
 "duplicate never":      ("    if len(v.neighbours) <= 1:\n        return None\n    others", "    if len(v.neighbours) <= 2:\n        return None\n    others"),
 "down: no reseat":      ('fix = [{"op": FixOp.RESEAT, "device": v.switch, "port": v.port}, ctx.connect(v.cable)]', "fix = [ctx.connect(v.cable)]"),
 "down if up":           ("    if v.neighbours or v.up:\n        return None\n    cause, shut_end", "    if v.neighbours:\n        return None\n    cause, shut_end"),
 "down: shut never":     ("        if shut:\n            return DownCause.SHUT, end", "        if False:\n            return DownCause.SHUT, end"),
 "down: far end ignored": ("    ends = [(v.switch, v.port)] + ([v.expected] if v.expected[0] in ctx.switches else [])", "    ends = [(v.switch, v.port)]"),
 "down: silent is link": ("    return (DownCause.UNKNOWN if None in said else DownCause.LINK), None", "    return DownCause.LINK, None"),
 "down: shut reseated":  ('                        [], cause=cause, expected=v.exp_text(), observed=f"shut:', '                        [ctx.connect(v.cable)], cause=cause, expected=v.exp_text(), observed=f"shut:'),
 "down: silent physical only": ("    if cause == DownCause.UNKNOWN:\n        physical =", "    if False:\n        physical ="),
 "missing: no lldp_on":  ('fix = [{"op": FixOp.LLDP_ON, "server": exp[0]}] if exp[0] in ctx.servers else []', "fix = []"),
 "unknown peer never":   ("    if v.idents[0] is not None:\n        return None\n    n = v.neighbours[0]", "    if True:\n        return None\n    n = v.neighbours[0]"),
 "swapped never":        ("    if not (d_home[0] in ctx.lldp_scope and", "    if True or not (d_home[0] in ctx.lldp_scope and"),
 "wrong port: no missing": ("    if v.elsewhere:\n        return out, {did}", "    if True:\n        return out, {did}"),
 "wrong port: wrong home": ("                   [ctx.move_home(did, d_home)], expected=v.exp_text()", "                   [ctx.move_home(did, (sw, port))], expected=v.exp_text()"),
 "unplanned: no move":   ("                if ident is not None and ident in ctx.end_of:", "                if False:"),
 "unexpected: wrong op": ('[{"op": FixOp.UNPLUG, "device": sw, "port": port}], expected="nothing"',
                          '[{"op": FixOp.REMOVE, "device": sw, "port": port}], expected="nothing"'),
 "hostname never":       ("        if h != sw:", "        if False:"),
 "management never":     ('        if f"{want}/{plen}" not in have:', "        if False:"),
 "static: down hops counted": ("    return sorted(r for r in want - have if r[1] not in down_hops), sorted(have - want),",
                                  "    return sorted(want - have), sorted(have - want),"),
 "static: pools ignored": ("    have = {r for r in o.static_routes if ctx.in_pools(r[0])}", "    have = set(o.static_routes)"),
 "bgp: no cable cause":  ("        sessions, down = classify_bgp(ctx, findings)", "        sessions, down = classify_bgp(ctx, [])"),
 "bgp routes never":     ("        findings += sessions + classify_bgp_routes(ctx, down)", "        findings += sessions"),
 "no silent grouping":   ("    findings = group_silent_servers(ctx, findings) + not_checked_findings(ctx)\n",
                          "    findings = findings + not_checked_findings(ctx)\n"),
 "identity by alias off": ("        if name in self.switches or name in self.alias:", "        if name in self.switches:"),
 # issue 23: the branches a review found unguarded, and the not_checked branches
 "ok: elsewhere ignored": ("    if v.expected in v.idents or (not v.neighbours and v.elsewhere):", "    if v.expected in v.idents:"),
 "off plan: always missing": ("    if v.elsewhere:  # our cable's far end is plugged in elsewhere", "    if False:  # our cable's far end is plugged in elsewhere"),
 "unplugged twice":      ("                if frozenset({(sw, port), ident}) in ctx.unplugged:", "                if False:"),
 "unexpected per end":   ("                if key in reported:\n                    continue", "                if False:\n                    continue"),
 "identity by mgmt off": ("        if mgmt and mgmt in self.by_mgmt:", "        if False:"),
 "bgp routes: count ignored": ("(not set(have[p]) <= want[p][0] or len(have[p]) != want[p][1])", "(not set(have[p]) <= want[p][0])"),
 "static: extra ignored": ("if r[1] not in down_hops), sorted(have - want), len(want)", "if r[1] not in down_hops), [], len(want)"),
 "sort: bottom first":   ('-int(f["ends"][0]["u"] or 0)', 'int(f["ends"][0]["u"] or 0)'),
 "not checked: no findings": ("    findings = group_silent_servers(ctx, findings) + not_checked_findings(ctx)\n",
                              "    findings = group_silent_servers(ctx, findings)\n"),
 "not checked: hostname compared": ("        if (why := ctx.obs[sw].lacks(Fact.HOSTNAME)) is not None:", "        if False:"),
 "not checked: cabling compared": ("        self.lldp_scope = {sw for sw in self.scope if observed[sw].lacks(Fact.LLDP, Fact.LINK) is None}",
                                   "        self.lldp_scope = set(self.scope)"),
 "not checked: routes compared": ("        if (why := ctx.obs[sw].lacks(Fact.ROUTES)) is not None:", "        if False:"),
 "not checked: down hops without link": ("    down_hops = set() if o.lacks(Fact.LINK) else", "    down_hops = set() if False else"),
 "not checked: bgp silent": ("            ctx.skip(Check.BGP, sw, why)", "            pass"),
 "not checked: bfd silent": ("            ctx.skip(Check.BFD, sw, why)", "            pass"),
}


def run(name: str) -> bool:
    """True when tests/test_compare_findings.py fails against mutant ``name`` (the mutant is killed)."""
    src = SOURCE.read_text()
    a, b = MUTANTS[name]
    assert src.count(a) == 1, (name, src.count(a))
    import zcube_deploy.verify

    original = sys.modules.get("zcube_deploy.verify.classify")
    mod = types.ModuleType("zcube_deploy.verify.classify")
    mod.__file__ = str(SOURCE)
    sys.modules[mod.__name__] = mod
    zcube_deploy.verify.classify = mod
    try:
        exec(compile(src.replace(a, b), mod.__file__, "exec"), mod.__dict__)  # noqa: S102 (the mutant)
        sys.modules.pop("test_compare_findings", None)  # imported afresh: it binds the mutant's functions
        rc = pytest.main(["-qq", "--tb=no", "-x", "-p", "no:cacheprovider", "-p", "no:randomly", "--no-header", "-W", "ignore",
                          "--rootdir", str(ROOT), str(ROOT / "tests" / "test_compare_findings.py"),
                          "-k", "not test_every_classifier_mutant_is_killed"])
    finally:
        if original is not None:
            sys.modules[mod.__name__] = original
            zcube_deploy.verify.classify = original
        sys.modules.pop("test_compare_findings", None)
    return rc != 0


def main(names: list[str]) -> int:
    survived = []
    for name in names:
        killed = run(name)
        print("MUTANT", name, "KILLED" if killed else "SURVIVED", flush=True)
        if not killed:
            survived.append(name)
    print(f"{len(names) - len(survived)} of {len(names)} mutants killed; survived: {survived}")
    return 1 if survived else 0


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT / "tests"))
    sys.exit(main(sys.argv[1:] or list(MUTANTS)))
