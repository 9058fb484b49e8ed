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
    drain,
    undrain,
    diff,
    expand,
    hall,
    lab,
    migrate,
    plan,
    push,
    render,
    replace,
    schema,
    traffic,
    twin,
    verify,
)
from zcube_deploy.cli.common import cli, handle_errors  # noqa: F401
from zcube_deploy.perf import keep_going_on_a_closed_pipe, run_then_exit_fast


def main() -> None:
    """The `zcube` program. After a `zcube plan` that succeeded (cli.plan.KEPT holds its plan) the process
    ends with ``os._exit`` once stdout and stderr are flushed: no object is freed one by one (0.5-0.8 s
    at 16k GPUs, seconds at 64k). That run holds nothing else: plan.json is written and closed, no
    worker, temporary file or finaliser is pending. Every other command ends as usual. A reader that stops
    reading (`zcube ... | head`) does not end the run: it goes on to its own exit code (perf.PipeSafe)."""
    keep_going_on_a_closed_pipe()
    run_then_exit_fast(lambda: cli(prog_name="zcube"), lambda: bool(plan.KEPT))


def __getattr__(name: str):
    if name == "_known_hosts_for":  # its old home (tests, scripts): the policy lives in access.py
        from zcube_deploy.access import known_hosts_for

        return known_hosts_for
    raise AttributeError(name)
