"""`zcube audit`: the running fabric against its plan, on a schedule (docs/audit.md).

``run.py`` is the pipeline (collect or replay, verify's checks, config drift, audit.json),
``drift.py`` the pure comparison of running and rendered configs inside the managed scope,
``metrics.py`` the Prometheus textfile output.
"""
