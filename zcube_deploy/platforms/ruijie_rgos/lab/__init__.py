"""The simulated RGOS switch (the lab's personality for this platform).

``zcube_deploy/lab/core.py`` (platform-neutral: wiring, faults, servers' LLDP) builds one
:class:`~.shell.SwitchState` per plan switch and talks to it through what this module exports:

- ``SwitchState``, ``Interface`` (state.py), ``Session`` and ``load_baseline`` (shell.py): the switch's
  state, its CLI session and the site baseline typed into it; the show outputs are shows.py;
- ``lldp`` (the ``Neighbor`` record and the show outputs), ``bgp`` (sessions, BFD, B routes);
- ``short_name``: the platform's abbreviation of an interface name (names.py, the one table);
- ``DEFAULT_BASELINE``: the site baseline a switch starts from (users, AAA, vty, SSH, ...);
- ``system_description(model)``: what the switch announces in LLDP.
"""

from __future__ import annotations

from pathlib import Path

from zcube_deploy.platforms.ruijie_rgos.lab import bgp, lldp
from zcube_deploy.platforms.ruijie_rgos.lab.shell import Interface, Session, SwitchState, load_baseline
from zcube_deploy.platforms.ruijie_rgos.names import short_name

DEFAULT_BASELINE = Path(__file__).resolve().parent / "baseline.cfg"
BASELINE_HINT = "a baseline holds RGOS configuration lines, as `show running-config` prints them"


def system_description(model: str) -> str:
    return (f"Ruijie Networks Data Center Switch({model}) By Ruijie Networks,\n"
            f"Running on Software RGOS 11.0(5)B9P66, Release(10172204)")


__all__ = ["BASELINE_HINT", "DEFAULT_BASELINE", "Interface", "Session", "SwitchState", "load_baseline", "bgp", "lldp", "short_name",
           "system_description"]
