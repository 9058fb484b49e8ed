"""Parse RGOS command output with the TextFSM templates in templates/textfsm (ntc-templates naming)."""

from __future__ import annotations

from functools import lru_cache
from io import StringIO

import textfsm

from zcube_deploy.resources import data_dir

COMMANDS = {
    "show version": "ruijie_os_show_version.textfsm",
    "show interface status": "ruijie_os_show_interface_status.textfsm",
    "show lldp neighbors": "ruijie_os_show_lldp_neighbors.textfsm",
    "show lldp neighbors detail": "ruijie_os_show_lldp_neighbors_detail.textfsm",
    "show ip route": "ruijie_os_show_ip_route.textfsm",
    "show ip bgp summary": "ruijie_os_show_ip_bgp_summary.textfsm",
    "show bfd neighbors": "ruijie_os_show_bfd_neighbors.textfsm",
}


@lru_cache(maxsize=None)
def _template_text(command: str) -> str:
    return (data_dir("templates") / "textfsm" / COMMANDS[command]).read_text(encoding="utf-8")


def parse(command: str, text: str) -> list[dict]:
    """Rows of ``command``'s output as dicts with lower-case keys (CRLF and CR are accepted)."""
    fsm = textfsm.TextFSM(StringIO(_template_text(command)))
    rows = fsm.ParseText(text.replace("\r\n", "\n").replace("\r", "\n"))
    keys = [h.lower() for h in fsm.header]
    return [dict(zip(keys, row)) for row in rows]
