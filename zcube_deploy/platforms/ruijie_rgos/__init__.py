"""Ruijie RGOS 11: everything zcube-deploy knows about this network OS, in one package.

This module is the platform's identity (its name, the NAPALM driver's, syntax facts) and what the
rest of the tool asks a platform (the seam, docs/platforms.md), re-exported from where it lives:

- ``NAPALM_DRIVER``: the name ``napalm.get_network_driver`` resolves (``driver.py``, the entry
  point ``napalm_ruijie_rgos`` in pyproject); push and verify use only the NAPALM contract.
- ``CONFIG_SUFFIX``, ``LOOPBACK``, ``MASK_STYLE``: syntax facts the views and readers need.
- :func:`config_facts` (``fastparse.py``, confirmed against the general reader ``reader.py``): config
  text -> the neutral facts (hostname, interfaces with addresses in prefix-length form, static
  routes, BGP) that render's self-check, the routing proof and push's candidate check read.
- :func:`l3_facts`, :func:`top_level_lines` (``hconfig.py``: the general reader's sections read as the
  hier_config tree reads them), :func:`parse_config`, :func:`config_drift` (the tree push remediates
  with): push's management guard, scope and read-back.
- :func:`numbered_sections`, :func:`section_interface`, ``NEGATION`` (``sections.py``, the general
  reader's ``read_sections``): push's check of a config file's lines, by line number, before it is sent.
- Two modules read config text: ``reader.py`` (the general reader: its sections, of which every view
  of a config's lines is a projection, and its facts) and ``fastparse.py`` (the fast reader, confirmed
  against it); docs/layout.md lists the views.
- ``VERIFY_COMMANDS``, ``FACT_COMMANDS``, :func:`command_error` (``commands.py``) and :func:`observe`
  (``observations.py``): what verify runs and how it is read; :func:`drift_rows` (``drift.py``): audit;
  :func:`remediation`, ``SECTION_END`` (``driver.py``): the lines push would send (expand's change sets).
- ``names.py`` (interface names and abbreviations: the one table), ``parsers.py`` (TextFSM),
  ``drain.py`` (the drain's edits), ``lab/`` (the simulated switch).
- :func:`console_bootstrap`, :func:`access_line_refusal`, :func:`ssh_gaps` (``bootstrap.py``): the console lines
  of a factory-fresh unit (`zcube replace`).
- ``platform.yaml``: the managed scope, the loopback push owns, the secret patterns.
"""

from __future__ import annotations

from collections import Counter

from zcube_deploy.platforms.ruijie_rgos.bootstrap import access_line_refusal, console_bootstrap, ssh_gaps  # noqa: F401 (a fresh unit's console lines)
from zcube_deploy.platforms.ruijie_rgos.commands import FACT_COMMANDS, VERIFY_COMMANDS, command_error
from zcube_deploy.platforms.ruijie_rgos.drain import GRACEFUL_SHUTDOWN_CONFIRMED, drained_config  # noqa: F401 (the platform's drain edits)
from zcube_deploy.platforms.ruijie_rgos.fastparse import config_facts, config_sections
from zcube_deploy.platforms.ruijie_rgos.hconfig import config_drift, l3_facts, parse_config, top_level_lines
from zcube_deploy.platforms.ruijie_rgos.names import long_name, short_name
from zcube_deploy.platforms.ruijie_rgos.sections import NEGATION, numbered_sections, section_interface

NAME = "ruijie_rgos"
NAPALM_DRIVER = "ruijie_rgos"
CONFIG_SUFFIX = ".cfg"
LOOPBACK = "Loopback 0"
BGP_SESSIONS_COMMAND = "show ip bgp summary"  # named in verify's fix texts
RUNNING_CONFIG_COMMAND = "show running-config"  # what audit compares with the rendered config
port_name = long_name  # a port id as LLDP reports it (abbreviated) -> the name the plan uses
MASK_STYLE = "dotted"  # addresses are written `ip address A.B.C.D M.M.M.M`: the views give both mask and prefix length

__all__ = ["CONFIG_SUFFIX", "access_line_refusal", "console_bootstrap", "ssh_gaps", "FACT_COMMANDS", "LOOPBACK", "MASK_STYLE", "NAME", "NAPALM_DRIVER", "NEGATION", "RUNNING_CONFIG_COMMAND",
           "VERIFY_COMMANDS", "command_error", "config_drift", "config_facts", "drained_config", "drift_rows", "intended_reading", "intended_side", "is_reading", "l3_facts", "long_name",
           "numbered_sections", "observe", "parse_config", "section_interface", "short_name", "top_level_lines"]


def drift_rows(running: str, intended, owns=None) -> list:
    """Config drift of ``running`` from ``intended`` (the rendered config's text, or :func:`intended_side`'s
    reading of it) inside ``owns``, as neutral rows (drift.py; audit's kinds)."""
    # start-up time: through the driver's remediation drift.py loads netmiko and napalm, which render, plan and
    # the offline commands never need
    from zcube_deploy.platforms.ruijie_rgos.drift import drift_rows as rows

    return rows(running, intended, owns)


def intended_side(intended: str, owns=None, reading: dict | None = None):
    """The rendered config ``intended`` read once for :func:`drift_rows` inside ``owns`` (picklable; audit keeps
    it across runs); ``reading``: :func:`intended_reading`'s of this very text, when the caller has it."""
    # start-up time, as for drift_rows
    from zcube_deploy.platforms.ruijie_rgos.drift import Intended

    if reading is None:
        return Intended(intended, owns)
    sections = reading["sections"].split("\n\n") if reading["counts"] else []
    return Intended(intended, owns, Counter(dict(zip(sections, reading["counts"]))))


def intended_reading(intended: str) -> dict:
    """What config drift reads of a rendered config that its text alone decides, as JSON data: its top-level lines
    (:func:`top_level_lines`: the managed scope's) and its sections (:func:`intended_side`'s), each once, joined by a
    blank line (no section holds one: config_sections drops blank lines), with their counts. Audit keeps it in a file
    cache by the text's hash (audit/cache.py): reading it is most of a rendered side; one string of sections reads
    back from JSON in a third of the time a list of them takes."""
    counts = Counter(config_sections(intended))
    joined = "\n\n".join(counts)
    if counts and joined.count("\n\n") != len(counts) - 1:  # (cannot happen; a reading must give its sections back)
        raise ValueError("a section of the rendered config holds a blank line")
    return {"top": top_level_lines(intended), "sections": joined, "counts": list(counts.values())}


def is_reading(data) -> bool:
    """Is ``data`` (JSON read back from audit's cache) of :func:`intended_reading`'s shape? (Else it is read anew.)
    (Tested on whole columns at once: it runs on every switch of every audit.)"""
    if type(data) is not dict or set(data) != {"top", "sections", "counts"}:
        return False
    top, sections, counts = data["top"], data["sections"], data["counts"]
    return (type(top) is list and type(sections) is str and type(counts) is list and set(map(type, top)) <= {str}
            and set(map(type, counts)) <= {int} and (min(counts) > 0 and sections.count("\n\n") == len(counts) - 1
                                                     if counts else sections == ""))


SECTION_END = "exit"  # the line a remediation (``remediation``) sends after a section's lines


def remediation(running: str, intended: str, owns=None) -> list[str]:
    """The lines push sends to take ``running`` to ``intended`` inside ``owns`` (the driver's
    ``remediation_lines``: what `zcube push --dry-run` writes to DIR/push/<switch>.diff); `zcube
    expand` computes its change sets with it, offline."""
    # start-up time: driver.py loads netmiko and napalm, which render, plan and the offline commands never need
    from zcube_deploy.platforms.ruijie_rgos.driver import remediation_lines

    return remediation_lines(running, intended, owns)


def observe(outputs: dict[str, str]) -> dict:
    """{command: raw text} -> verify's neutral observation (observations.py)."""
    # start-up time: the show-output readers load TextFSM templates, which render and push never need
    from zcube_deploy.platforms.ruijie_rgos.observations import observe as _observe

    return _observe(outputs)
