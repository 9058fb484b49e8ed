"""A lab of the plan in DIR whose every switch starts configured with its rendered config, served over SSH until
SIGINT/SIGTERM: the state `zcube lab up` + `zcube push` leave, without the push (28.5 min for zcube-64k's 512
switches on this loaded 2-core machine). Each switch is configured the way a push types it: its rendered config's
lines fed to its CLI in configuration mode (the lab's own session, no SSH), as benchmarks/audit.py's
``record_in_process`` does. LAB_DIR/lab.json appears last, when the lab serves (as `zcube lab up` writes it).

Run: python benchmarks/_configured_lab.py DIR LAB_DIR   (benchmarks/audit.py --configured starts it)
"""

from __future__ import annotations

import asyncio
import signal
import sys
from pathlib import Path

from zcube_deploy import workflow
from zcube_deploy.lab.server import PLAN_FIELDS, Lab


def configured_lab(d: Path) -> Lab:
    plan = workflow.open_plan(str(d / "plan.json"), PLAN_FIELDS, short_lived=True)
    lab = Lab(plan)
    for sw in plan["switches"]:
        s = lab.model.new_session(sw["name"])
        for line in ("enable", lab.credentials[2]):
            s.feed(line)
        text = (d / "configs" / f"{sw['name']}.cfg").read_text()
        for line in ["configure terminal", *[x for x in text.splitlines() if x.strip() and not x.startswith("!") and x != "end"], "end"]:
            answer = s.feed(line)
            if isinstance(answer, str) and answer.lstrip().startswith("%"):
                raise SystemExit(f"{sw['name']}: the simulated switch rejected {line!r}: {answer.strip()}")
    return lab


async def serve(lab: Lab, out: Path) -> None:
    await lab.start()
    lab.write_files(out)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    await stop.wait()
    await lab.stop()


if __name__ == "__main__":
    asyncio.run(serve(configured_lab(Path(sys.argv[1])), Path(sys.argv[2])))
