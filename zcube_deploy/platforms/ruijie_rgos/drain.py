"""How an RGOS switch is drained: the config lines, as edits of its rendered config (platform data).

- A port is taken down with ``shutdown`` in its ``interface`` section (the rendered config has
  ``no shutdown``, which RGOS does not show: confirmed, ruijie.md).
- In mode bgp, transit is steered away first with ``bgp graceful-shutdown`` in ``router bgp``
  (RFC 8326: the switch tags what it advertises with GRACEFUL_SHUTDOWN, 65535:0, and its peers
  prefer any other path). **UNCONFIRMED on RGOS**: this is FRR's (and IOS-XR's) spelling; whether
  RGOS has the command, and under which name, is unknown (ruijie.md). The twin's FRR has it.
"""

from __future__ import annotations

from collections.abc import Iterable

GRACEFUL_SHUTDOWN = "bgp graceful-shutdown"
GRACEFUL_SHUTDOWN_CONFIRMED = False  # see the module doc


def drained_config(intended: str, ports: Iterable[str], graceful: bool) -> str:
    """``intended`` (a rendered config) with ``ports`` shut and, with ``graceful``, BGP graceful shutdown on."""
    wanted = {f"interface {p}" for p in ports}
    found: set[str] = set()
    out: list[str] = []
    section = ""

    def close_section() -> None:
        if section in wanted:
            at = len(out)
            while at > 0 and (not out[at - 1].strip() or out[at - 1].strip() == "!"):
                at -= 1  # before the section's trailing "!" lines
            out.insert(at, " shutdown")
            found.add(section)

    for line in intended.splitlines():
        if line and not line[0].isspace() and line.strip() != "!":
            close_section()
            section = line.rstrip()
            out.append(line)
            if graceful and section.startswith("router bgp "):
                out.append(f" {GRACEFUL_SHUTDOWN}")
            continue
        if section in wanted and line.strip() == "no shutdown":
            continue
        out.append(line)
    close_section()
    if wanted - found:
        raise ValueError(f"no such section in the rendered config: {sorted(wanted - found)[0]!r}")
    if graceful and not any(x.startswith("router bgp ") for x in out):
        raise ValueError("no `router bgp` section in the rendered config (mode static has no BGP to steer)")
    return "\n".join(out) + ("\n" if intended.endswith("\n") else "")
