"""A simulated Ruijie RGOS 11 switch's state: its interfaces, routes, unmodelled sections (kept
verbatim) and running/startup configuration (no CLI here: shell.py is the session that edits it,
shows.py the show outputs that read it).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from zcube_deploy.platforms.ruijie_rgos.lab.router import RouterBgp

VERSION = "RGOS 11.0(5)B9P66"
DEFAULT_HOSTNAME = "Ruijie"


@dataclass(slots=True)
class Interface:
    name: str
    physical: bool = True
    description: str | None = None
    routed: bool = False
    address: tuple[str, str] | None = None  # (address, dotted mask)
    shutdown: bool = False
    bfd: str | None = None  # "bfd interval X min_rx Y multiplier Z" (platforms/ruijie_rgos/lab/router.py)
    # sub-commands the lab does not model, verbatim, in order; None until the first (512 switches x 514 ports: no empty dicts)
    extra: dict[str, None] | None = None

    def lines(self) -> list[str]:
        out = []
        if self.description is not None:
            out.append(f" description {self.description}")
        if self.routed and self.physical and not self.name.startswith("Mgmt"):
            out.append(" no switchport")
        if self.address:
            out.append(f" ip address {self.address[0]} {self.address[1]}")
        if self.bfd:
            out.append(f" {self.bfd}")
        out += [f" {x}" for x in self.extra or ()]
        if self.shutdown:
            out.append(" shutdown")
        return out


@dataclass(slots=True)
class Verbatim:
    """A configuration line the lab does not model, with its sub-commands, kept as entered."""

    text: str
    children: dict[str, "Verbatim"] = field(default_factory=dict)  # by their text (one entry per text), in order
    body: list[str] = field(default_factory=list)  # a multi-line banner's text lines, as entered

    def lines(self, depth: int = 0) -> list[str]:
        out = [" " * depth + self.text] + self.body
        for c in self.children.values():
            out += c.lines(depth + 1)
        return out


def _verbatim_lines(blocks: dict[str, Verbatim]) -> list[str]:
    """Unmodelled sections as RGOS shows them: a '!' after each section with sub-commands and after the group."""
    out: list[str] = []
    for v in blocks.values():
        out += v.lines() + (["!"] if v.children else [])
    if out and out[-1] != "!":
        out.append("!")
    return out


def _words_match(entry: str, text: str) -> bool:
    """``no TEXT`` removes an entry equal to TEXT, or one that TEXT starts (word by word)."""
    return entry == text or entry.startswith(text + " ")


def _remove(entries: dict, text: str) -> bool:
    """Remove the entry keyed ``text`` (keys are single-spaced), else the first one that ``text`` starts."""
    text = " ".join(text.split())
    if text in entries:
        del entries[text]
        return True
    key = next((k for k in entries if _words_match(k, text)), None)
    if key is None:
        return False
    del entries[key]
    return True


@dataclass
class SwitchState:
    """Running and startup configuration of one simulated switch."""

    model: str
    interface_names: list[str]
    abbreviations: dict[str, str]
    serial: str = "G1RL71S00000"
    hostname: str = DEFAULT_HOSTNAME
    global_lines: list[str] = field(default_factory=list)
    routes: dict[str, None] = field(default_factory=dict)  # "ip route N M NH", in entry order
    interfaces: dict[str, Interface] = field(default_factory=dict)
    startup: str = ""
    config_log: list[str] = field(default_factory=list)  # every line entered in config mode
    writes: int = 0
    write_failures: int = 0  # saves refused by a write_fault
    bgp: RouterBgp | None = None  # `router bgp` (platforms/ruijie_rgos/lab/router.py)
    generation: int = 0  # bumped by every configuration line: the lab's protocol model caches on it
    # unmodelled top-level sections, verbatim, by where they stand: before the interfaces ("pre"),
    # between the interfaces and the static routes ("mid"), after the routes ("post")
    # (each region's sections keyed by their single-spaced text: one section per text, found in constant time)
    verbatim: dict[str, dict[str, Verbatim]] = field(default_factory=lambda: {"pre": {}, "mid": {}, "post": {}})
    region: str = "mid"  # where a new unmodelled section goes

    def __post_init__(self) -> None:
        if not self.interfaces:
            for name in self.interface_names:
                self.interfaces[name] = Interface(name)
        self.startup = self.running_config(header=False)

    # ---- views
    def running_config(self, header: bool = True) -> str:
        body = [f"version {VERSION}", f"hostname {self.hostname}", "!"]
        body += self.global_lines + (["!"] if self.global_lines else [])
        body += _verbatim_lines(self.verbatim["pre"])
        for itf in self.interfaces.values():
            body.append(f"interface {itf.name}")
            body += itf.lines()
            body.append("!")
        body += _verbatim_lines(self.verbatim["mid"])
        if self.bgp is not None:
            body += self.bgp.render() + ["!"]
        body += list(self.routes) + (["!"] if self.routes else [])
        body += _verbatim_lines(self.verbatim["post"])
        body.append("end")
        text = "\n".join(body) + "\n"
        if not header:
            return text
        return f"Building configuration...\nCurrent configuration : {len(text)} bytes\n\n{text}"

    def find_verbatim(self, text: str) -> Verbatim | None:
        """The unmodelled top-level section whose text is ``text`` (single-spaced), wherever it stands."""
        return next((r[text] for r in self.verbatim.values() if text in r), None)

    def remove_verbatim(self, text: str) -> bool:
        return any(_remove(self.verbatim[r], text) for r in ("pre", "mid", "post"))

    def resolve_interface(self, words: list[str]) -> str | None:
        """'TwoHundredGigabitEthernet 0/1:1', 'twohundredgigabitethernet0/1:1', 'Loopback 0' -> canonical name."""
        text = " ".join(words)
        m = re.match(r"^([A-Za-z-]+)\s*(\d+(?:/\d+)*(?::\d+)?)$", text)
        if not m:
            return None
        kw, num = m.group(1).lower(), m.group(2)
        for name in self.interfaces:
            nkw, _, nnum = name.partition(" ")
            if nnum == num and nkw.lower().startswith(kw) and len(kw) >= 2:
                return name
        if "loopback".startswith(kw) and len(kw) >= 2 and re.match(r"^\d+$", num):
            return f"Loopback {num}"
        return None
