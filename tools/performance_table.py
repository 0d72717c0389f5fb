"""Rewrite (or check) the speed section of docs/performance.md from the benchmark files.

    python tools/performance_table.py           # rewrite the block between the performance markers
    python tools/performance_table.py --check   # exit 1 when the document differs from the results

Reads results/benchmarks/step.json (benchmarks/bench_step.py: one training step of every
implementation, ratios within one run), kernel_overhead.json (benchmarks/bench_kernel_overhead.py:
the kernels against a baseline commit's), step_cuda.json (bench_step.py on a GPU) and
results/benchmarks/step_profile.json
(benchmarks/profile_step.py: where the BBB step's time goes, and the kernels' parts). Every
number of the block comes from those files; the machine and its load come with them.
"""
import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tools"))
from marked_block import rewrite  # noqa: E402

DOC = ROOT / "docs" / "performance.md"
START, END = "<!-- performance:start -->", "<!-- performance:end -->"
PARTS = ("kernel_forward", "kernel_backward", "optimizer", "rest")
PART_WORDS = {"kernel_forward": "forward kernel", "kernel_backward": "backward kernel",
              "optimizer": "extra optimiser time (twice the parameters)",
              "rest": "everything else (Python, autograd, allocation)"}
KERNEL_ROWS = (("noise", "the noise alone"),
               ("forward_nokeep", "forward, evaluation (nothing kept, fresh memory)"),
               ("forward", "forward, training (keeps what backward needs, reused buffers)"),
               ("forward_fresh", "forward, training, fresh memory"),
               ("backward", "backward pass"))


def _load(name):
    path = ROOT / "results" / "benchmarks" / name
    return json.loads(path.read_text()) if path.exists() else None


def _machine(m, wall=None):
    text = (f"{m.get('cpu')} ({m.get('cpu_capability')}), {m.get('threads')} thread(s), "
            f"torch {m.get('torch')}, {m.get('blas')}")
    if m.get("created"):
        text += f", {m['created'][:10]}"
    if wall is not None:
        text += f"; the run took {wall / 60:.1f} min"
    return text + f". {m.get('load_note', '')}"


def step_table(rec):
    """Markdown: one row per implementation and H, ratios to both deterministic steps."""
    texts = rec.get("implementations", {})
    lines = [f"One training step, median of interleaved rounds (`results/benchmarks/step.json`, "
             f"written by `benchmarks/bench_step.py`): {_machine(rec['machine'], rec.get('wall_s'))}",
             "",
             "| H | implementation | optimiser | median ms | × det. (torch Adam) | "
             "× det. (fused Adam) | peak MB |",
             "|---|---|---|---|---|---|---|"]
    for r in rec["rows"]:
        lines.append(f"| {r['H']} | `{r['impl']}` | {r['optimizer']} | {r['median_ms']:.2f} | "
                     f"{r['ratio']:.2f} | {r['ratio_vs_det_fused']:.2f} | {r['peak_mb']:.1f} |")
    lines += ["", "Implementations: " + "; ".join(f"`{k}`: {v}" for k, v in texts.items()) + "."]
    return "\n".join(lines)


def profile_table(rec, before=None, other=None):
    """Markdown: the BBB step's overhead over the fused deterministic step by part (and the same
    for the kernels of an earlier commit, ``before``, and on another CPU, ``other``), then the
    kernels' parts (on each CPU)."""
    rows = rec["rows"]
    Hs = rec["settings"]["H"]
    lines = [f"Where the time goes (`results/benchmarks/step_profile.json`, written by "
             f"`benchmarks/profile_step.py`): {_machine(rec['machine'], rec.get('wall_s'))}",
             "", "| H | kernels | BBB step ms | det. step ms (fused Adam) | ratio | overhead ms | "
             + " | ".join(PART_WORDS[p] for p in PARTS) + " |",
             "|---|---|---|---|---|---|" + "---|" * len(PARTS)]
    runs = ([("now", rec)] + ([(f"before (commit {before['code']['commit']})", before)]
                              if before else [])
            + ([(f"commit {other['code']['commit']}, on {other['machine']['cpu']}", other)]
               if other else []))
    for h in Hs:
        for which, r in runs:
            bbb, det, over = (r["rows"].get(f"helpers_paper_h{h}"),
                              r["rows"].get(f"det_fused_h{h}"), r["rows"].get(f"overhead_h{h}"))
            if not (bbb and det and over):
                continue
            bbb_ms, det_ms = sum(bbb["mean_ms"].values()), sum(det["mean_ms"].values())
            share = over["share_of_overhead"] or {}
            cells = [f"{over['overhead_ms'] * share[p]:.2f} ({100 * share[p]:.0f} %)"
                     for p in PARTS]
            lines.append(f"| {h} | {which} | {bbb_ms:.2f} | {det_ms:.2f} | {over['ratio']:.2f} | "
                         f"{over['overhead_ms']:.2f} | " + " | ".join(cells) + " |")
    if before:
        lines += ["", f"The earlier kernels' row: `results/benchmarks/step_profile_before.json`, "
                  f"{before['code']['how']}; {_machine(before['machine'], before.get('wall_s'))}"]
    if other:
        lines += ["", f"The other CPU's rows: `results/benchmarks/step_profile_xeon.json`, "
                  f"{other['code']['how']}; {_machine(other['machine'], other.get('wall_s'))}"]
    for label, r in [("", rec)] + ([(f" on {other['machine']['cpu']}", other)] if other else []):
        parts = r.get("kernel_parts")
        if not parts:
            continue
        lines += ["", f"The kernels alone{label}, on one array as long as the network's "
                  "parameters (scale-mixture prior, one sample; median of the rounds):", "",
                  "| H | parameters | " + " | ".join(words for _, words in KERNEL_ROWS) + " |",
                  "|---|---|" + "---|" * len(KERNEL_ROWS)]
        for h, p in parts.items():
            lines.append(f"| {h} | {p['parameters']:,} | " + " | ".join(
                f"{p['ms'][k]:.2f} ms ({p['ns_per_parameter'][k]:.2f} ns)"
                for k, _ in KERNEL_ROWS) + " |")
    return "\n".join(lines)


def overhead_table(rec):
    """Markdown: the BBB step's overhead over the deterministic step (same optimiser), this
    tree's kernels against a baseline commit's, alternating subprocesses in one run; the cut
    with the spread of the rounds (each round times both versions, one after the other)."""
    import statistics
    v = rec["versions"]
    b = v["baseline"]["commit"]
    lines = [f"The kernels against those of commit {b}, side by side "
             "(`results/benchmarks/kernel_overhead.json`, written by "
             f"`benchmarks/bench_kernel_overhead.py`; code {v['current']['commit']}; "
             f"{rec['settings']['rounds']} rounds per width, each timing both versions in "
             f"subprocesses of {rec['settings']['steps_per_subprocess']} steps): "
             f"{_machine(rec['machine'], rec.get('wall_s'))}", "",
             "Overhead = BBB step (paper estimator) / deterministic step with the same optimiser "
             "- 1, per round, then the median over rounds; step times are medians over all "
             "steps. The cut compares the two medians; beside it, the range of the cuts of single "
             "rounds (how much one round's reading moves).", "",
             f"| H | optimiser | det. ms, {b} | det. ms, now | BBB ms, {b} | BBB ms, now | "
             f"overhead, {b} | overhead, now | cut | cut, single rounds |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    rows = {(r["H"], r["version"], r["optimizer"]): r for r in rec["rows"]}
    for c in rec["cut"]:
        base = rows[(c["H"], "baseline", c["optimizer"])]
        now = rows[(c["H"], "current", c["optimizer"])]
        per_round = [100 * (1 - n / o) for o, n in zip(base["round_overheads"],
                                                        now["round_overheads"]) if o > 0]
        spread = (f"{min(per_round):.0f}–{max(per_round):.0f} % (median "
                  f"{statistics.median(per_round):.0f} %)" if per_round else "—")
        lines.append(f"| {c['H']} | {c['optimizer']} | {base['det_ms']:.2f} | {now['det_ms']:.2f} | "
                     f"{base['bbb_ms']:.2f} | {now['bbb_ms']:.2f} | {c['overhead_baseline']:.2f} | "
                     f"{c['overhead_current']:.2f} | {c['cut_percent']:.0f} % | {spread} |")
    return "\n".join(lines)


def gpu_table(rec):
    """Markdown: the step on a GPU, the BBB rows against the fused deterministic step."""
    m = rec["machine"]
    lines = [f"On a GPU (`results/benchmarks/step_cuda.json`, `benchmarks/bench_step.py --device "
             f"cuda`, no peers): {m.get('gpu')}, torch {m.get('torch')}, CUDA {m.get('cuda')}; "
             f"{rec['settings']['rounds']} rounds of {rec['settings']['steps_per_round']} steps.",
             "", "| H | implementation | median ms | × det. (fused Adam) |", "|---|---|---|---|"]
    for r in rec["rows"]:
        lines.append(f"| {r['H']} | `{r['impl']}` | {r['median_ms']:.2f} | "
                     f"{r['ratio_vs_det_fused']:.2f} |")
    return "\n".join(lines)


def block():
    step, prof = _load("step.json"), _load("step_profile.json")
    out = []
    if step:
        out.append(step_table(step))
    if _load("kernel_overhead.json"):
        out.append(overhead_table(_load("kernel_overhead.json")))
    if _load("step_cuda.json"):
        out.append(gpu_table(_load("step_cuda.json")))
    if prof:
        out.append(profile_table(prof, _load("step_profile_before.json"),
                                 _load("step_profile_xeon.json")))
    return "\n\n".join(out) if out else "(no benchmark results yet: run `make bench`)"


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--check", action="store_true")
    args = ap.parse_args(argv)
    rewrite(DOC, START, END, block(), "docs/performance.md's speed tables",
            "python tools/performance_table.py", check=args.check)


if __name__ == "__main__":
    main()
