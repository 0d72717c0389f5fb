"""Rewrite (or check) the README's line on run times and docs/reading.md's table of long runs
from the results files.

    python tools/runtimes_table.py           # rewrite the blocks between the runtimes markers
    python tools/runtimes_table.py --check   # exit 1 when a block differs from the results

Times, all recorded by committed code: `make notebooks` from results/runtimes.json (written by
tools/run_notebooks.py), every training step from the wall times its own results files hold.
"""
import argparse
import re
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tools"))
from marked_block import rewrite  # noqa: E402

START, END = "<!-- runtimes:start -->", "<!-- runtimes:end -->"
NOTEBOOKS = ("00_theory", "01_mnist_classification", "02_regression_uncertainty",
             "03_contextual_bandit", "04_pruning", "05_uncertainty", "06_alternatives")


def _results():
    from helpers.utils import results_dir
    return results_dir()


def _load(rel):
    path = _results() / rel
    return json.loads(path.read_text()) if path.exists() else None


def duration(seconds):
    """'1.5 min' below 10 minutes, '12 min' below 90, else '3.4 h'; '—' when unknown."""
    if seconds is None:
        return "—"
    if seconds < 600:
        return f"{seconds / 60:.1f} min"
    return f"{seconds / 60:.0f} min" if seconds < 5400 else f"{seconds / 3600:.1f} h"


def notebooks_time(profile="default"):
    """Return (seconds, entries) of the latest run of every notebook in ``profile`` (None when one
    is missing)."""
    runs = (_load("runtimes.json") or {}).get(profile, {})
    entries = [runs.get(nb) for nb in NOTEBOOKS]
    if any(e is None for e in entries):
        return None, entries
    return sum(e["wall_s"] for e in entries), entries


def _run_seconds(names):
    """Training wall time of notebook 01's run records ``names`` and of the runs their means start
    from, each counted once."""
    from helpers.classification import RunConfig
    todo, seen, total = list(names), set(), 0.0
    while todo:
        name = todo.pop(0)
        rec = None if name in seen else _load(f"01_mnist_classification/runs/{name}.json")
        seen.add(name)
        if rec is None:
            continue
        total += rec["metrics"]["train_wall_s"]
        source = RunConfig.from_dict(rec["config"]).init_source()
        if source is not None:
            todo.append(source.name)
    return total


def _sweeps(notebook):
    files = sorted((_results() / notebook / "sweep").glob("*.json"))
    return sum(json.loads(f.read_text())["wall_s"] or 0 for f in files) if files else None


def steps():
    """Return the rows (what, seconds, command, counted in the total) of every long step."""
    from helpers import pruning
    from helpers.alternatives import training_minutes
    table1, snr = _load("01_mnist_classification/table1.json"), _load("04_pruning/snr.json")
    fits, toy = _load("02_regression_uncertainty/fits.json"), _load("05_uncertainty/priors_2d.json")
    conv, ood = _load("05_uncertainty/bbb_conv_net.json"), _load("05_uncertainty/ood.json")
    summary06 = _load("06_alternatives/summary.json")
    bandit = [_load(f"03_contextual_bandit/{n}.json")
              for n in ("tuning", "reported_paper", "reported_keep_all")]
    sweeps = [_sweeps(nb) for nb in ("01_mnist_classification", "05_uncertainty", "06_alternatives")]
    t1 = _run_seconds([n for r in table1["metrics"]["rows"] for n in r["runs"]]) if table1 else None
    return [
        ("searches (01, 05, 06)", sum(s for s in sweeps if s) if any(sweeps) else None,
         "`make sweep`", True),
        ("Table 1 (01)", t1, "`make table1`", True),
        ("regression fits (02)", fits and fits["wall_s"], "`make retrain ONLY=02`", True),
        ("bandit (03)",
         sum(b["wall_s"] for b in bandit) if all(bandit) else None,
         "`tools/bandit_*.py`", True),
        ("pruned nets (04; in Table 1)",
         snr and pruning.retrain_seconds(snr)[0], "`make retrain ONLY=04`", False),
        ("OOD runs (05)",
         ood and sum(r["train_wall_s"] for r in ood["metrics"]["rows"]), "`tools/ood_table.py`",
         True),
        ("2-D priors, conv net (05)",
         ((toy or {}).get("wall_s") or 0) + (conv["metrics"]["train_wall_s"] if conv else 0),
         "`make retrain ONLY=05`", True),
        ("methods compared (06)", summary06 and 60 * training_minutes(summary06)[0],
         "`tools/alternatives.py`", True),
    ]


def lacking():
    """Return [(what, seconds)]: the training steps of notebooks 02, 04 and 05 whose results a
    plain `make notebooks` cannot read back, with the time they took when last recorded."""
    from helpers import regression, toy
    from helpers.profiles import get_profile
    out = []
    p02 = get_profile("02_regression_uncertainty", "default")
    p05 = get_profile("05_uncertainty", "default")
    if regression.load_fits(p02, 0.02) is None:
        fits = _load("02_regression_uncertainty/fits.json")
        out.append(("regression fits", fits and fits["wall_s"]))
    if toy.load_toy("default", p05.toy_n, p05.toy_steps) is None:
        out.append(("2-D priors", (_load("05_uncertainty/priors_2d.json") or {}).get("wall_s")))
    conv = _load("05_uncertainty/bbb_conv_net.json")
    if not conv or "per_image" not in conv:
        out.append(("conv net", conv and conv["metrics"]["train_wall_s"]))
    snr = _load("04_pruning/snr.json")
    if not snr or not snr["metrics"].get("complete"):
        from helpers import pruning
        out.append(("pruned networks", snr and pruning.retrain_seconds(snr)[0]))
    return out


def summary():
    """The README's line: how long `make notebooks` takes from results/ and training everything
    from nothing; the table with every step, its date and machines is in docs/reading.md."""
    total, _ = notebooks_time()
    cold = sum(s or 0 for _, s, _, counted in steps() if counted)
    return (f"`make notebooks` takes about {duration(total)}; `make retrain` from an empty "
            f"`results/` about {duration(cold)} ([each step](docs/reading.md#how-long-each-step-takes)).")


def body():
    total, entries = notebooks_time()
    clean = all(e and e.get("train") is not True and e.get("checkpoints") is False
                for e in entries)
    dates = sorted({e["date"] for e in entries if e})
    note = "no checkpoints" if clean else "some with checkpoints or training"
    when = dates[-1] if dates else "never"
    rows = [("all notebooks, from results/", f"{duration(total)} ({when}, {note})",
             "`make notebooks`")]
    missing = lacking()
    what = ", ".join(w for w, _ in missing) or "nothing"
    rows.append((f"... `TRAIN=1`, fresh clone (trains {what})",
                 duration(None if total is None or any(s is None for _, s in missing)
                          else total + sum(s for _, s in missing)), "`make retrain`"))
    long = steps()
    rows += [(what, duration(s), cmd) for what, s, cmd, _ in long]
    cold = sum(s or 0 for _, s, _, counted in long if counted)
    rows.append(("from nothing (sum)", duration(cold), "`make retrain`, empty results/"))
    rows += paper_protocol_rows()
    lines = ["| step | time | command |", "|---|---|---|"]
    lines += [f"| {a} | {b} | {c} |" for a, b, c in rows]
    return "\n".join(lines)


def paper_protocol_rows():
    """Rows for Table 1 under the paper's protocol (not in the sum above): the plan's CPU-hour
    estimate per width, and the training time of the runs finished so far, with the kinds of
    machine they ran on (summary.json names them)."""
    plan = _load("01_mnist_classification/paper_protocol/plan.json")
    if not plan:
        return []
    summ = _load("01_mnist_classification/paper_protocol/summary.json") or {"rows": []}
    rows = []
    for H in plan["settings"]["widths"]:
        est = plan["estimate"][f"final_h{H}_cpu_h"]
        done = [(w, h) for r in summ["rows"] if r["H"] == H
                for w, h in zip(r["train_wall_s"], r.get("hardware") or [None] * len(r["runs"]))]
        n_all = len(plan["settings"]["seeds"][str(H)]) * 4
        # a run resumed on another machine lists its segments ("GPU; CPU from epoch N"): the
        # kinds of machine (a GPU, one CPU thread), each once; their names are in summary.json
        machines = sorted({"GPU" if re.match(r"^(NVIDIA|AMD Instinct|Tesla)", part) else
                           "1 CPU thread" if "1 thread" in part else "CPU"
                           for _, h in done if h for part in h.split("; ")})
        took = f"{duration(sum(w for w, _ in done))} ({'; '.join(machines)})"
        # complete: what the runs took (the plan's estimate stays in plan.json)
        when = (f"{len(done)} runs: {took}" if len(done) == n_all else
                f"{duration(est * 3600)} planned (1 CPU thread/run); "
                + (f"{len(done)} of {n_all} done: {took}" if done else f"0 of {n_all} done"))
        rows.append((f"paper's protocol, 2×{H} (01; not summed)", when,
                     f"`make table1 PROTOCOL=paper{'' if H == 400 else f' WIDTH={H}'} JOBS=2`"))
    return rows


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--check", action="store_true")
    args = ap.parse_args(argv)
    rewrite(ROOT / "README.md", START, END, summary(), "README's line on run times",
            "python tools/runtimes_table.py", check=args.check)
    rewrite(ROOT / "docs" / "reading.md", START, END, body(), "docs/reading.md's table of long runs",
            "python tools/runtimes_table.py", check=args.check)


if __name__ == "__main__":
    main()
