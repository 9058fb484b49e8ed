"""Config drift inside the managed scope: the running config against the rendered one (pure).

What push would send to bring a switch back to its rendered config is the platform's remediation
(``remediation_lines``: hier_config, both sides cut to the managed scope, the same lines push
sends). Audit reads that remediation block by block and names each difference:

| kind | the remediation holds | example |
|---|---|---|
| ``port_shut`` | ``no shutdown`` under a planned port | a port shut by hand |
| ``stray_route`` | ``no ip route ...`` (a route inside the plan's pools the plan does not have) | a static route added by hand |
| ``missing_route`` | ``ip route ...`` with no route of that prefix on the switch | a planned route removed by hand |
| ``config_changed`` | a line whose key (e.g. ``hostname``, ``description``, ``ip address``, ``ip route PREFIX``) the switch has with another value | a description or address edited by hand |
| ``config_stray`` | ``no X``: a managed line the rendered config does not have | a line added inside a planned port |
| ``config_missing`` | ``X``: a rendered line the switch does not have | a planned line removed by hand |

Lines outside the managed scope (users, SNMP, vty, management routes, ...) are never compared:
they are the site's. Each finding has a stable ID (the same drift gives the same ID on every run)
and its fix: the remediation lines of its block, which ``zcube push --only SWITCH`` sends.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass

DRIFT_KINDS = ("port_shut", "stray_route", "missing_route", "config_changed", "config_stray", "config_missing")

Remediation = Callable[[str, str, Callable[[str], bool] | None], list[str]]


@dataclass(frozen=True)
class Block:
    """One top-level remediation line with its sub-lines (indentation removed, ``exit`` dropped)."""
    head: str
    children: tuple[str, ...]

    def lines(self) -> list[str]:
        return [self.head] + [" " + c for c in self.children] + (["exit"] if self.children else [])


def drift_id(kind: str, device: str, section: str, line: str) -> str:
    """A stable finding ID: the same drift on the same switch gets the same ID on every run."""
    return "A" + hashlib.sha1("|".join((kind, device, section, line)).encode()).hexdigest()[:10]


def blocks(remediation: list[str]) -> list[Block]:
    """The remediation lines (as ``remediation_lines`` writes them) grouped by top-level line."""
    out: list[Block] = []
    head, children = None, []
    for line in remediation:
        if line == "exit":
            continue
        if line.startswith(" "):
            children.append(line.strip())
            continue
        if head is not None:
            out.append(Block(head, tuple(children)))
        head, children = line, []
    if head is not None:
        out.append(Block(head, tuple(children)))
    return out


def _key(line: str) -> str:
    """The key a replacing line shares with the line it replaces: ``ip route P M`` for routes, else
    the words before the value (``hostname``, ``description``, ``ip address``, ``mtu``, ...)."""
    words = line.split()
    if line.startswith("ip route "):
        return " ".join(words[:4])
    if line.startswith(("ip address ", "ipv6 address ", "bfd interval ", "mtu forwarding ", "neighbor ")):
        return " ".join(words[:2])
    return words[0] if words else ""


def running_sections(text: str) -> dict[str, list[str]]:
    """The running config as top-level line -> its sub-lines (stripped), in order."""
    out: dict[str, list[str]] = {}
    head = None
    for raw in text.replace("\r", "").splitlines():
        if not raw.strip() or raw.lstrip().startswith("!"):
            continue
        if raw[0] == " ":
            if head is not None:
                out[head].append(raw.strip())
            continue
        head = raw.rstrip()
        out.setdefault(head, [])
    return out


def classify(device: str, remediation: list[str], running: dict[str, list[str]]) -> list[dict]:
    """The drift findings of a remediation (``remediation_lines``'s output) against ``running`` (running_sections)."""
    bl = blocks(remediation)
    top_have: dict[str, list[str]] = {}
    for line in running:
        top_have.setdefault(_key(line), []).append(line)
    negated: dict[str, list[str]] = {}
    for b in bl:
        if not b.children and b.head.startswith("no "):
            negated.setdefault(_key(b.head[3:]), []).append(b.head[3:])
    replaced = {_key(b.head) for b in bl if not b.children and not b.head.startswith("no ")}
    out: list[dict] = []
    for b in bl:
        line = b.head
        if b.children:
            out.extend(_classify_section(device, b, running.get(line, [])))
        elif line.startswith("no "):
            if _key(line[3:]) not in replaced:  # else reported with the line that replaces it
                kind = "stray_route" if line.startswith("no ip route ") else "config_stray"
                out.append(_finding(kind, device, line[3:], line[3:], b.lines(), have=line[3:]))
        else:
            gone = negated.get(_key(line), [])
            # routes are not replaced in place (several next hops share a prefix): only a negated one was changed
            have = gone or ([] if line.startswith("ip route ") else [h for h in top_have.get(_key(line), ()) if h != line])
            if have:
                fix = [f"no {h}" for h in gone] + b.lines()
                out.append(_finding("config_changed", device, line, line, fix, have=have[0], want=line))
            else:
                kind = "missing_route" if line.startswith("ip route ") else "config_missing"
                out.append(_finding(kind, device, line, line, b.lines(), want=line))
    return out


def _classify_section(device: str, block: Block, have: list[str]) -> list[dict]:
    """The findings of one section's remediation (``interface X`` with its sub-lines)."""
    fix = block.lines()
    negated = {_key(c[3:]): c[3:] for c in block.children if c.startswith("no ") and c != "no shutdown"}
    positive = {_key(c) for c in block.children if not c.startswith("no ")}
    have_keys = {_key(c): c for c in have}
    out = []
    for child in block.children:
        if child == "no shutdown":
            out.append(_finding("port_shut", device, block.head, "shutdown", fix, have="shutdown"))
        elif child.startswith("no "):
            if _key(child[3:]) not in positive:  # else reported with the line that replaces it
                out.append(_finding("config_stray", device, block.head, child[3:], fix, have=child[3:]))
        else:
            old = negated.get(_key(child)) or have_keys.get(_key(child))
            if old is not None and old != child:
                out.append(_finding("config_changed", device, block.head, child, fix, have=old, want=child))
            else:
                out.append(_finding("config_missing", device, block.head, child, fix, want=child))
    return out


def _finding(kind: str, device: str, section: str, line: str, fix: list[str], have: str | None = None,
             want: str | None = None) -> dict:
    where = section if section == line else f"{section} / {line}"
    what = {"port_shut": f"{section} is shut down on the switch; the plan has it up",
            "stray_route": f"the switch has {line!r}, inside the plan's pools but not in the plan",
            "missing_route": f"the switch lacks the planned {line!r}",
            "config_changed": f"{where}: the switch has {have!r}, the plan {want!r}",
            "config_stray": f"{where}: the switch has {line!r}, the plan does not",
            "config_missing": f"{where}: the switch lacks the planned {line!r}"}[kind]
    return {"id": drift_id(kind, device, section, line), "kind": kind, "device": device, "section": section,
            "line": line, "have": have, "want": want, "what": what, "fix": fix}


def config_drift(device: str, running: str, intended: str, owns: Callable[[str], bool] | None,
                 remediation: Remediation) -> list[dict]:
    """Every drift of ``running`` from ``intended`` inside the scope ``owns`` (a test on a top-level line)."""
    return classify(device, remediation(running, intended, owns), running_sections(running))
