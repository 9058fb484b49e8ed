"""`zcube traffic`: a flow-level model of what a fabric does to a workload (issue 25).

Pure core (numpy only), in the order of the pipeline:

- :mod:`.net`: the designs as graphs of directed links with capacities (the plan's ZCube with its
  forwarding; ROFT, HPN dual-plane, Rail-only and a non-blocking Clos sized as `zcube compare`
  sizes them), an NVLink domain per server, failures;
- :mod:`.routes`: switch-level forwarding: the plan's static tables, or shortest-path ECMP over the
  live switches (mode bgp and the Clos designs), as an even split or hashed per flow;
- :mod:`.flows`: transfers (GPU to GPU, bytes, start) to sub-flows on links, by each design's port
  policy (both ports of a ZCube or HPN NIC, PXN over NVLink in ROFT and Rail-only);
- :mod:`.maxmin`: max-min fair rates by progressive filling; :mod:`.fluid`: the event-driven run;
- :mod:`.workloads`: all-to-all, all-gather, all-reduce rings, prefill/decode KV transfers, traces;
- :mod:`.run`: one design and workload end to end, the report document, the table and the plot.

Every assumption and default is in docs/traffic.md.
"""
