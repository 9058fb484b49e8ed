"""The `zcube` command line: one module per command (group), each parsing arguments, calling the
library (mostly :mod:`zcube_deploy.workflow`) and printing. ``cli/common.py`` holds the root group,
error handling and printing helpers. A command imports the library modules it runs inside its
function (start-up time: `zcube --help` and every other command load none of them).

Exit codes: 0 success; 1 the run worked but found problems; 2 bad input or usage.
"""

from __future__ import annotations

from zcube_deploy.cli import (  # noqa: F401  (each module registers its commands on the root group)
    analyze,
    audit,
    build,
    cabling,
    check_routing,
    compare,
    demo,
    diff,
    hall,
    lab,
    plan,
    push,
    render,
    schema,
    traffic,
    twin,
    verify,
)
from zcube_deploy.cli.common import cli, handle_errors  # noqa: F401


def main() -> None:
    cli(prog_name="zcube")


def __getattr__(name: str):
    if name == "_known_hosts_for":  # its old home (tests, scripts): the policy lives in access.py
        from zcube_deploy.access import known_hosts_for

        return known_hosts_for
    raise AttributeError(name)
