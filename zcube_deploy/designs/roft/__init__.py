"""ROFT, a rail-optimized fat tree (docs/roft.md): rail leaves per pod and spines, eBGP. Its planner
(build.py), sizing (sizing.py, `zcube compare`'s arithmetic), addresses and routing (routing.py) and
invariants (checks.py); registered in zcube_deploy/designs as the design ``roft``."""
