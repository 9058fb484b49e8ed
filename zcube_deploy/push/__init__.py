"""Safe batch push: back up, diff, (dry-run stops here), apply, read back, confirm, then write.

The device is reached through its platform's NAPALM driver (``napalm.get_network_driver``, see
platforms/<name>) and the NAPALM contract only: ``get_config`` is the backup, loading the
candidate runs the driver's pre-flight, ``compare_config`` is the diff, ``commit_config`` applies,
reads back and writes, ``rollback`` returns to the backup (optional_args ``rollback_to`` when a new
session must undo an earlier one's commit; ``managed_scope`` limits all of it to what push owns).

Any error after the first line was sent rolls the device back to its backup (reconnecting if the
session dropped) and leaves its startup config untouched; the whole running config is then read
back and compared with the backup: ``rolled_back`` only when they are equal, else
``rollback_incomplete`` naming the lines that differ. The save itself is the exception
(``StartupNotConfirmed``, platforms/contract.py): push then saves once more on a new session, when the
running config still holds exactly the change (status ``changed``, ``save_retried``); if that save
is not confirmed either, it rolls back, the startup config may hold the new config, and the switch
ends ``startup_uncertain`` with what to check.

The steps, one module each: ``targets.py`` (which switches, which files, every input problem at
once before any session: the candidate check of ``candidate.py`` inside the scope of ``scope.py``),
``device.py`` (one switch as named steps returning a typed :class:`DeviceResult`), ``runner.py``
(a bounded thread pool, an optional canary batch first, a failure budget that stops new switches
from starting, the report). ``guard.py`` is the management guard, ``options.py`` the run's records.
"""

from __future__ import annotations

from zcube_deploy.access import load_lab
from zcube_deploy.plan.model import projection
from zcube_deploy.push.device import DeviceResult, push_device
from zcube_deploy.push.options import Credentials, PushOptions
from zcube_deploy.push.runner import OK_STATUSES, push_all
from zcube_deploy.push.targets import Target, select_targets

__all__ = ["OK_STATUSES", "PLAN_FIELDS", "Credentials", "DeviceResult", "PushOptions", "Target", "load_lab", "push_all", "push_device",
           "select_targets"]

# the plan sections push reads (a projection for read_plan)
PLAN_FIELDS = projection(switches=None, port_map=None, addressing=None, models=None, cluster=None, inputs=None, tool_version=None,
                         settings=None, sizing=None, routing=None)
