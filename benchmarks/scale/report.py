"""Markdown tables and the cost-curve plot from a bench_scale JSON document."""

from __future__ import annotations

from pathlib import Path

STAGES = [
    ("bm25_chunks", "chunk BM25"),
    ("bm25_papers", "paper BM25"),
    ("dense", "dense"),
    ("fusion", "fusion (RRF)"),
    ("rerank", "rerank 200"),
    ("relate", "Relate"),
    ("retrieve_subquery", "one subquery"),
]
NOT_BUILD = ("generate_records", "generate_texts", "ingest", "chunk", "draw_vectors")
"""Steps that are not index building: drawing the synthetic corpus, and ingest and chunking (their own columns)."""
PARTS = ["papers", "chunks", "bm25_chunks", "bm25_papers", "dense", "paper_vectors", "citations", "query_encoder"]


def _ms(stage: dict) -> str:
    return f"{stage['median_ms']:.1f} ({stage['p95_ms']:.1f})"


def _gb(mb: float) -> str:
    return f"{mb / 1000:.2f}"


def tables(doc: dict) -> str:
    """The benchmark's tables in markdown, one block per table."""
    sizes = doc["sizes"]
    out = [
        "| chunks | papers | ingest s (chunks/s) | chunk s | index build s | of which BM25 chunks / papers / dense s "
        "| index on disk GB | build peak RSS GB | embedding it would take |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for s in sizes:
        steps = s["steps"]
        build = sum(v["s"] for k, v in steps.items() if k not in NOT_BUILD)
        ingest = steps.get("ingest", {}).get("s")
        ingest_cell = "parts only" if ingest is None else f"{ingest:.1f} ({s['size'] / ingest:,.0f})"
        chunk = steps.get("chunk", {}).get("s")
        out.append(
            f"| {s['label']} | {s['made']['papers']:,} | {ingest_cell} | {'—' if chunk is None else f'{chunk:.1f}'} "
            f"| {build:.1f} | {steps['bm25_chunks']['s']:.1f} / {steps['bm25_papers']['s']:.1f} / "
            f"{steps['dense']['s']:.1f} | {_gb(sum(s['disk_mb'].values()))} | {_gb(s['build_peak_rss_mb'])} "
            f"| {_duration(s['embed_projection_s'])} |"
        )
    out += [
        "",
        "| chunks | " + " | ".join(name for _, name in STAGES) + " | query encoding |",
        "|---|" + "---|" * (len(STAGES) + 1),
    ]
    for s in sizes:
        stages = s["serve"]["stages"]
        cells = [_ms(stages[key]) if key in stages else "—" for key, _ in STAGES] + [_ms(stages["encode_query"])]
        out.append(f"| {s['label']} | " + " | ".join(cells) + " |")
    out += ["", "| chunks | " + " | ".join(PARTS) + " | serving process |", "|---|" + "---|" * (len(PARTS) + 1)]
    for s in sizes:
        parts = s["serve"]["parts"]
        cells = [f"{parts[p]['rss_mb']:,.0f}" if p in parts else "—" for p in PARTS]
        total = s["serve"]["rss_end"]["rss_mb"]
        out.append(
            f"| {s['label']} | " + " | ".join(cells) + f" | {total:,.0f}{' (parts)' if 'papers' not in parts else ''} |"
        )
    out += ["", "| chunks | Relate: paper vectors | coupling | paper BM25 (1,200-char query) |", "|---|---|---|---|"]
    for s in sizes:
        st = s["serve"]["stages"]
        out.append(
            f"| {s['label']} | {_ms(st['relate_paper_vectors'])} | {_ms(st['relate_coupling'])} "
            f"| {_ms(st['relate_bm25'])} |"
        )
    out += [
        "",
        "| chunks | BM25 load s (in memory / mmap) | RSS added by loading MB (in memory / mmap) "
        "| mmap: RSS added after the queries MB (anon + file) | latency ms in memory / mmap 1st pass / 2nd pass |",
        "|---|---|---|---|---|",
    ]
    for s in sizes:
        mem, mmap = s["serve"]["parts"]["bm25_chunks"], s["bm25_mmap"]
        last = mmap["passes"][-1]
        out.append(
            f"| {s['label']} | {mem['load_s']:.2f} / {mmap['load']['load_s']:.2f} | {mem['rss_mb']:,.0f} / "
            f"{mmap['load']['rss_mb']:,.0f} | {last['anon_mb']:,.0f} + {last['file_mb']:,.0f} "
            f"| {s['serve']['stages']['bm25_chunks']['median_ms']:.1f} / {mmap['passes'][0]['median_ms']:.1f} / "
            f"{last['median_ms']:.1f} |"
        )
    out += [
        "",
        "| chunks | dense index | build s | disk MB | memory MB (x raw vectors) | latency ms, k=100 "
        "| recall@10 | recall@100 | 5% of papers: ms, recall@100 | 50%: ms, recall@100 | one paper: recall@100 |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for s in sizes:
        for spec, v in s["dense_variants"].items():
            memory = v["load"]["rss_mb"]
            out.append(
                f"| {s['label']} | {spec} | {v['build_s']:.1f} | {v['disk_mb']:,.0f} | {memory:,.0f} "
                f"({memory / s['raw_vectors_mb']:.2f}x) | {_ms(v['all'])} | {v['all']['recall@10']:.3f} "
                f"| {v['all']['recall@100']:.3f} | {v['5%']['median_ms']:.1f}, {v['5%']['recall@100']:.3f} "
                f"| {v['50%']['median_ms']:.1f}, {v['50%']['recall@100']:.3f} | {v['one_paper']['recall@100']:.3f} |"
            )
    out += [
        "",
        "| chunks | dense index | knob | value | latency ms | recall@10 | recall@100 |",
        "|---|---|---|---|---|---|---|",
    ]
    for s in sizes:
        for spec, v in s["dense_variants"].items():
            for point in v.get("sweep", []):
                knob = next(k for k in point if k.startswith(("hnsw_", "ivf_")))
                out.append(
                    f"| {s['label']} | {spec} | {knob} | {point[knob]} | {_ms(point)} | {point['recall@10']:.3f} "
                    f"| {point['recall@100']:.3f} |"
                )
    return "\n".join(out)


def _duration(seconds: float) -> str:
    return f"{seconds / 3600:.1f} h" if seconds >= 3600 else f"{seconds / 60:.0f} min"


def plot(doc: dict, path: Path) -> None:
    """Four panels against corpus size (log-log): stage latency, serving memory by part, disk, dense variants."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    sizes = doc["sizes"]
    fig, axes = plt.subplots(2, 2, figsize=(12, 9))
    ax = axes[0][0]
    for key, name in STAGES:
        points = [(s["size"], s["serve"]["stages"][key]["median_ms"]) for s in sizes if key in s["serve"]["stages"]]
        ax.plot(*zip(*points, strict=True), marker="o", label=name)
    ax.set(title="Query latency by stage (median)", ylabel="ms per query")
    ax = axes[0][1]
    for part in PARTS:
        points = [
            (s["size"], max(s["serve"]["parts"][part]["rss_mb"], 0.1)) for s in sizes if part in s["serve"]["parts"]
        ]
        ax.plot(*zip(*points, strict=True), marker="o", label=part)
    full = [(s["size"], s["serve"]["rss_end"]["rss_mb"]) for s in sizes if s.get("mode", "full") == "full"]
    ax.plot(*zip(*full, strict=True), "k--", marker="s", label="serving process (whole pipeline)")
    ax.set(title="Resident memory of the serving process, by part", ylabel="MB")
    ax = axes[1][0]
    names = sorted({p for s in sizes for p in s["disk_mb"]} - {"manifest.json"})
    for name in names:
        having = [s for s in sizes if name in s["disk_mb"]]
        ax.plot([s["size"] for s in having], [max(s["disk_mb"][name], 0.01) for s in having], marker="o", label=name)
    ingest = [(s["size"], s["steps"]["ingest"]["s"]) for s in sizes if "ingest" in s["steps"]]
    ax.plot(*zip(*ingest, strict=True), "k:", marker="^", label="ingest seconds")
    ax.set(title="Index on disk by part (MB); ingest time (s)", ylabel="MB or s")
    ax = axes[1][1]
    specs = dict.fromkeys(spec for s in sizes for spec in s["dense_variants"])
    for spec in specs:
        having = [s for s in sizes if spec in s["dense_variants"]]
        last = having[-1]["dense_variants"][spec]["all"]
        ax.plot(
            [s["size"] for s in having],
            [s["dense_variants"][spec]["all"]["median_ms"] for s in having],
            marker="o",
            label=f"{spec} (recall@100 {last['recall@100']:.2f} at {having[-1]['label']})",
        )
    ax.set(title="Dense search, k=100, one query (median)", ylabel="ms per query")
    for ax in axes.flat:
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("chunks")
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=7)
    fig.suptitle(f"lit3r cost curve on {doc['cpu_count']} CPU cores (synthetic QASPER-shaped corpora)")
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)
