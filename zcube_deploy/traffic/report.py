"""What `zcube traffic` prints and writes: a table per design, DIR/traffic.json and DIR/traffic.png."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from zcube_deploy.traffic.net import DESIGN_KEYS

COLUMNS = ("workload", "failure", "flows", "completion", "slowdown (paper)", "MLU", "rate p50 / p99 (Gb/s)", "KV p50 / p99",
           "hottest link")
# a narrow terminal (80 columns): the same figures in two tables, each led by the row's workload and failure
NARROW_COLUMNS = ((0, 1, 2, 3, 4, 5), (0, 1, 6, 7, 8))


def time_text(x) -> str:
    """A completion time as the tables print it: ms with three decimals below 10 s, else s with two; '-' for none."""
    if x is None:
        return "-"
    return f"{x * 1e3:,.3f} ms" if x < 10 else f"{x:,.2f} s"


def _row(r: dict) -> list[str]:
    if not r.get("modelled"):
        return [r["workload"], r["failure"] or "none", "-", "not modelled", "", "", "", "", r.get("note", "")]
    slow = ""
    if "slowdown" in r:
        slow = f"{r['slowdown']:+.1%}"
        if r.get("paper_one_tor_slowdown") is not None:
            slow += f" (paper +{r['paper_one_tor_slowdown']:.1%})"
    rate = r["rate_gbps"]
    kv = r.get("kv_transfer_s")
    hot = r["hot"][0] if r["hot"] else None
    flows = f"{r['flows']:,}" + (f" ({r['unrouted_flows']:,} unrouted)" if r["unrouted_flows"] else "")
    return [r["workload"], r["failure"] or "none", flows, time_text(r["completion_time_s"]), slow,
            "-" if r["mlu"] is None else f"{r['mlu']:.3f}",
            "-" if rate["p50"] is None else f"{rate['p50']:,.1f} / {rate['p99']:,.1f}",
            f"{time_text(kv['p50'])} / {time_text(kv['p99'])}" if kv and kv["p50"] is not None else "",
            f"{hot['from']} -> {hot['to']} {hot['utilisation']:.2f}" if hot else "-"]


def design_tables(doc: dict) -> list[tuple[str, list[str], list[list[str]]]]:
    """(title, header, rows) per design (a stage: per island, then the FROM plan), in the order of the document."""
    out: dict[str, tuple[str, list[str], list[list[str]]]] = {}
    for r in doc["designs"]:
        if r["label"] not in out:
            gb = f", {r['gpu_bandwidth_gbps']:,.0f} Gb/s per GPU" if r.get("gpu_bandwidth_gbps") else ""
            out[r["label"]] = (f"{r['label']}: {r.get('gpus', 0):,} GPUs, {r.get('switches', 0)} switches{gb}", list(COLUMNS), [])
        out[r["label"]][2].append(_row(r))
    return list(out.values())


def stage_text(doc: dict) -> str:
    """:func:`stage_lines` as printed text, each line ended ("" for a plan that is not a stage)."""
    return "".join(line + "\n" for line in stage_lines(doc))


def stage_lines(doc: dict) -> list[str]:
    """What a migration stage's document says besides its tables: the pairs across the islands (not
    modelled) and, against the FROM plan, what the stage costs each island's GPUs. Empty for a plan."""
    st = doc.get("stage")
    if not st:
        return []
    x = st["cross_island"]
    lines = [f"across the islands: {x['gpu_pairs']:,} GPU pairs not modelled (out of scope: {x['why']})" if len(st["islands"]) > 1
             else f"one island ({next(iter(st['islands'].values()))['label']}): no GPU pairs across islands"]
    if not st["cost"]:
        return lines + [st["from_note"]]
    lines.append(f"what the stage costs the workload (mean network send rate per GPU on the island / on the whole FROM fabric, "
                 f"{st['from_plan']['gpus']:,} GPUs):")
    for c in st["cost"]:
        parts = [f"{st['islands'][k]['label']}, {v['gpus'] or 0:,} GPUs: "
                 + (f"{time_text(v['completion_time_s'])}, {v['gpu_gbps']:,.1f} Gb/s = {v['gpu_gbps_vs_from']:.2f} x" if v["gpu_gbps_vs_from"]
                    else "not modelled")
                 for k, v in c["islands"].items()]
        ref = f"{time_text(c['from_completion_time_s'])}, {c['from_gpu_gbps']:,.1f} Gb/s" if c["from_gpu_gbps"] else "not modelled"
        lines.append(f"  {c['workload']}: FROM plan {ref}; " + "; ".join(parts))
    return lines


def plot(doc: dict, path: Path) -> Path:
    """Completion time and maximum link utilisation per design and workload (healthy and failed),
    and the utilisation of every switch's links (the first workload, healthy)."""
    import matplotlib  # start-up time (~0.5 s), and the Agg backend is chosen before pyplot loads

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = [r for r in doc["designs"] if r.get("modelled")]
    labels = list(dict.fromkeys(r["label"] for r in rows))  # a design's, an island's or the FROM plan's
    designs = sorted(labels, key=lambda x: min(DESIGN_KEYS.index(r["design"]) for r in rows if r["label"] == x))
    keys = list(dict.fromkeys((r["workload"], r["failure"] is not None) for r in rows))
    fig, axes = plt.subplots(1, 3, figsize=(15, 4.6), dpi=100)
    width = 0.8 / max(len(keys), 1)
    for ax, metric, label in ((axes[0], "completion_time_s", "completion time (s, log)"), (axes[1], "mlu", "max link utilisation")):
        for i, (w, f) in enumerate(keys):
            vals = []
            for d in designs:
                hit = [r for r in rows if r["label"] == d and r["workload"] == w and (r["failure"] is not None) == f]
                vals.append(hit[0][metric] if hit and hit[0][metric] is not None else np.nan)
            ax.bar(np.arange(len(designs)) + i * width, vals, width, label=f"{w}{' (failure)' if f else ''}", hatch="//" if f else None)
        ax.set_xticks(np.arange(len(designs)) + width * (len(keys) - 1) / 2)
        ax.set_xticklabels(designs, fontsize=8)
        ax.set_ylabel(label)
        ax.grid(True, axis="y", alpha=0.3)
        if metric == "completion_time_s":
            ax.set_yscale("log")
    axes[0].legend(fontsize=7)
    first = keys[0][0] if keys else None
    for d in designs:
        hit = [r for r in rows if r["label"] == d and r["workload"] == first and r["failure"] is None]
        if hit:
            u = sorted((v["max"] for v in hit[0]["switch_utilisation"].values()), reverse=True)
            axes[2].plot(np.arange(1, len(u) + 1) / len(u), u, marker=".", label=d)
    axes[2].set_xlabel("switches, busiest first (fraction)")
    axes[2].set_ylabel(f"busiest link utilisation per switch ({first})")
    axes[2].grid(True, alpha=0.3)
    axes[2].legend(fontsize=7)
    p = doc["parameters"]
    fig.suptitle(f"{p['plan']}: {', '.join(p['workloads'])}; ECMP {p['ecmp']}" + (f"; failure {p['fail']}" if p["fail"] else ""),
                 fontsize=10)
    fig.tight_layout()
    fig.savefig(path, format="png", metadata={"Software": None})
    plt.close(fig)
    return path


def write(doc: dict, out_dir: str | Path) -> tuple[Path, Path]:
    """DIR/traffic.json (sorted keys, same input same bytes) and DIR/traffic.png."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    js = out / "traffic.json"
    tmp = out / "traffic.json.partial"
    tmp.write_text(json.dumps(doc, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    png = plot(doc, out / "traffic.png")
    tmp.replace(js)
    return js, png
