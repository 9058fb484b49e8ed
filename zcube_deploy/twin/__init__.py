"""The data-plane twin: the plan running on Linux network namespaces, veth pairs and FRR.

``up`` builds it (one namespace per switch and per server, one veth pair per cable, FRR on the
switches, the rendered host files applied on the servers), ``test`` sends real packets through it
and injects failures, ``down`` removes every trace. See docs/twin.md.
"""
