"""Static vs bgp from real `zcube analyze` runs: one plot and one Markdown table (docs/routing.md).

    python benchmarks/routing_modes.py LABEL=DIR/analyze.json ... -o docs/img/routing-glm-1k.png

Each LABEL=analyze.json adds its routed curve; the dual-plane Clos and "any live path" curves
are taken from the first file (they do not depend on the routing mode).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("runs", nargs="+", help="LABEL=path/to/analyze.json")
    ap.add_argument("-o", "--output", required=True)
    args = ap.parse_args()
    runs = [(r.split("=", 1)[0], json.loads(Path(r.split("=", 1)[1]).read_text())) for r in args.runs]
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7.5, 5), dpi=110)
    first = runs[0][1]
    p = [r["p"] for r in first["random_link_failures"]]

    def curve(rows, key, label, **kw):
        xs = [r["p"] for r in rows if r[key]["mean"] > 0]
        ys = [r[key]["mean"] for r in rows if r[key]["mean"] > 0]
        ax.plot(xs, ys, label=label, **kw)

    curve(first["random_link_failures"], "dual_plane_clos", "dual-plane Clos, same size", color="tab:red", marker="^")
    curve(first["random_link_failures"], "zcube", "ZCube, any live path", color="tab:gray", marker=".", linestyle=":")
    for (label, doc), marker in zip(runs, "osdvx"):
        curve(doc["random_link_failures"], "zcube_routed", f"ZCube {label}", marker=marker)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("link failure probability p (host and fabric links)")
    ax.set_ylabel("fraction of GPU pairs unreachable")
    par = first["parameters"]
    ax.set_title(f"{first['plan']['cluster']}: {first['plan']['gpus']:,} GPUs, {par['samples']} trials per p, seed {par['seed']}",
                 fontsize=10)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(args.output, format="png", metadata={"Software": None})
    print(f"wrote {args.output}")
    # the table
    head = "| routing | one switch down: GPU pairs w/o routed path | one fabric link down | " + \
        " | ".join(f"p = {x:g}: unreachable (ratio to Clos)" for x in p if x >= 0.005) + " |"
    print(head)
    print("|" + "---|" * (3 + sum(1 for x in p if x >= 0.005)))
    for label, doc in runs:
        sf = doc["single_failures"]
        cells = [label, f"{sf['switch']['max_gpu_pairs_without_routed_path']['value']:,}",
                 f"{sf['fabric_link']['max_gpu_pairs_without_routed_path']['value']:,}"]
        for r in doc["random_link_failures"]:
            if r["p"] >= 0.005:
                ratio = r["ratio_zcube_routed_to_clos"]
                cells.append(f"{r['zcube_routed']['mean']:.2e} ({ratio['ratio']:.2f} [{ratio['ci95'][0]:.2f}, {ratio['ci95'][1]:.2f}])")
        print("| " + " | ".join(cells) + " |")
    clos = [f"{r['dual_plane_clos']['mean']:.2e}" for r in first["random_link_failures"] if r["p"] >= 0.005]
    print("| dual-plane Clos | | | " + " | ".join(clos) + " |")


if __name__ == "__main__":
    main()
