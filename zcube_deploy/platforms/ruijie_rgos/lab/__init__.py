"""The simulated RGOS switch (the lab's personality for this platform).

``zcube_deploy/lab/core.py`` (platform-neutral: wiring, faults, servers' LLDP) builds one
:class:`~.shell.SwitchState` per plan switch and talks to it through what this module exports:

- ``SwitchState``, ``Interface`` (state.py), ``Session`` and ``load_baseline`` (shell.py): the switch's
  state, its CLI session and the site baseline typed into it; the show outputs are shows.py;
- ``lldp`` (the ``Neighbor`` record and the show outputs), ``bgp`` (sessions, BFD, B routes);
- ``short_name``: the platform's abbreviation of an interface name (names.py, the one table);
- ``DEFAULT_BASELINE``: the site baseline a switch starts from (users, AAA, vty, SSH, ...);
- ``system_description(model)``: what the switch announces in LLDP;
- ``plan_drifts``, ``apply_drifts_each``, ``DRIFT_FAULT_KINDS`` (drift.py): hand edits of each audit kind drawn
  over the rendered configs and typed over SSH (`zcube lab drift`);
- ``console_paste`` (shell.py): lines pasted at the serial console (`zcube lab console`), and
  ``ssh_refusal``: why a factory-fresh unit still refuses SSH (what its console bootstrap must give it).
"""

from __future__ import annotations

from pathlib import Path

from zcube_deploy.platforms.ruijie_rgos.lab import bgp, lldp
from zcube_deploy.platforms.ruijie_rgos.bootstrap import SSH_NEEDS
from zcube_deploy.platforms.ruijie_rgos.lab.drift import DRIFT_FAULT_KINDS, apply_drifts_each, plan_drifts
from zcube_deploy.platforms.ruijie_rgos.lab.shell import Interface, Session, SwitchState, console_paste, load_baseline
from zcube_deploy.platforms.ruijie_rgos.names import short_name

DEFAULT_BASELINE = Path(__file__).resolve().parent / "baseline.cfg"
BASELINE_HINT = "a baseline holds RGOS configuration lines, as `show running-config` prints them"


def system_description(model: str) -> str:
    return (f"Ruijie Networks Data Center Switch({model}) By Ruijie Networks,\n"
            f"Running on Software RGOS 11.0(5)B9P66, Release(10172204)")


__all__ = ["BASELINE_HINT", "DRIFT_FAULT_KINDS", "apply_drifts_each", "plan_drifts", "DEFAULT_BASELINE", "Interface", "Session", "SwitchState", "console_paste", "load_baseline", "ssh_refusal", "bgp", "lldp", "short_name",
           "system_description"]


def ssh_refusal(st: SwitchState, mgmt_interface: str, address: str, gateway: str | None) -> str | None:
    """Why a factory-fresh unit refuses an SSH connection on its management address, else None.

    It needs the plan's management address on its management interface, the default route through the
    management gateway (the management station is off-subnet), and what ``bootstrap.SSH_NEEDS`` names
    (the SSH server on, a local user). The lab's model: RGOS's factory defaults are not confirmed.
    """
    itf = st.interfaces.get(mgmt_interface)
    if itf is None or itf.address is None or itf.address[0] != address:
        return f"no management address {address} on {mgmt_interface}"
    if gateway and f"ip route 0.0.0.0 0.0.0.0 {gateway}" not in st.routes:
        return f"no route through the management gateway {gateway}"
    tops = [text for region in st.verbatim.values() for text in region]
    for start, why in SSH_NEEDS:
        if not any(t == start or t.startswith(start + " ") for t in tops):
            return why
    return None
