"""Write the tables of docs/lab_log.md from the committed results files.

    python tools/lab_log.py            # rewrites the tables between the markers in docs/lab_log.md
    python tools/lab_log.py --check    # exit 1 when docs/lab_log.md differs from the results

For every validation search (notebooks 01, 05 and 06, with notebook 06 plan v3's grids) and the
bandit's tuning: what each value of each searched setting gave at best, so a reader sees what was tried and what it showed. Only
validation numbers (and tuning seeds' regret) appear; no test number is read.
"""
import argparse
import json
import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DOC = ROOT / "docs" / "lab_log.md"
START, END = "<!-- tables:start -->", "<!-- tables:end -->"


def _start(cfg):
    if cfg.get("init_from"):
        return f"warm ({cfg['init_from']})"
    return "U(±0.1)" if cfg.get("mu_init") else "nn.Linear"


def _value(cfg, dim):
    return _start(cfg) if dim == "start" else str(cfg.get(dim))


def _dims(trials):
    """The settings that vary over a search's trials (with 'start' for the μ start)."""
    keys = ("lr", "lr_decay", "dropout", "prior_sigma", "pi", "neg_log_sigma1", "neg_log_sigma2",
            "samples", "rho_init", "kl_weighting", "start")
    return [k for k in keys if len({_value(t["config"], k) for t in trials}) > 1]


def sweep_table(path):
    rec = json.loads(path.read_text())
    m = rec["metrics"]
    trials = [t for t in m["trials"] if t.get("val") is not None]
    metric = rec["config"].get("metric", "val_error")
    unit = (lambda v: f"{100 * v:.2f}%") if metric == "val_error" else (lambda v: f"{v:.4f}")
    lines = [f"**{path.stem}** ({len(m['trials'])} trials, "
             f"{sum(t['stopped_early'] for t in m['trials'])} stopped early by ASHA; "
             f"`{path.relative_to(ROOT)}`): best {metric.replace('_', ' ')} per value",
             "", "| setting | value | trials | best | reached at epoch |", "|---|---|---|---|---|"]
    for dim in _dims(trials):
        for v in sorted({_value(t["config"], dim) for t in trials}):
            sub = [t for t in trials if _value(t["config"], dim) == v]
            best = min(sub, key=lambda t: (t["val"], t["best_epoch"]))
            lines.append(f"| {dim} | {v} | {len(sub)} | {unit(best['val'])} | {best['best_epoch']} |")
    return "\n".join(lines)


def prior_label(prior):
    sys.path.insert(0, str(ROOT))
    from helpers.bandit import prior_label as label
    return label(prior)


def tuning_table(path):
    rec = json.loads(path.read_text())
    m = rec["metrics"]
    seeds = rec["tuning_seeds"]
    lines = [f"**Bandit tuning** (BBB alone, seeds {', '.join(map(str, seeds))}, "
             f"{m['trials'][0]['steps']:,} steps; `{path.relative_to(ROOT)}`"
             f"{'' if m['complete'] else '; not complete'}): final cumulative regret",
             "", "| buffer recipe | prior | " + " | ".join(f"seed {s}" for s in seeds)
             + " | mean |", "|---|---|" + "---|" * (len(seeds) + 1)]
    for t in sorted(m["trials"], key=lambda t: (t["recipe"], t["regret_final_mean"])):
        prior = tuple(t["prior"]) if isinstance(t["prior"], list) else t["prior"]
        lines.append(f"| {t['recipe']} | {prior_label(prior)} | "
                     + " | ".join(f"{v:,.0f}" for v in t["regret_final_per_seed"])
                     + f" | {t['regret_final_mean']:,.0f} |")
    return "\n".join(lines)


def _plan_v3():
    os.environ["BBB_RESULTS_DIR"] = str(ROOT / "results")  # the committed results, read only
    sys.path.insert(0, str(ROOT))
    from helpers import alternatives_plan
    return alternatives_plan


def v3_search_table(method):
    """Notebook 06 plan v3's search of ``method`` as its 4 x 4 grid: per trial the plan's score
    (validation NLL averaged over 5 epochs) at the trial's best epoch; the choice in bold."""
    A = _plan_v3()
    grid = A.SEARCHES[method]["grid"]
    (d1, v1), (d2, v2) = list(grid.items())
    rows = {}
    for c in A.configs(method):
        path = A.trial_path(method, c)
        if path.exists():
            rows[(c[d1], c[d2])] = json.loads(path.read_text())["row"]
    chosen = A.chosen(method)
    folder = f"results/{A.NB}/v{A.VERSION}/search/{method}/"
    lines = [f"**Notebook 06 plan v3, {method}** ({len(rows)} of {len(A.configs(method))} "
             f"trials, {A.MAX_EPOCHS} epochs, seed {A.SEARCH_SEED}; `{folder}`): validation NLL "
             f"averaged over {A.SMOOTH} epochs at each trial's best epoch (multiples of "
             f"{A.EPOCH_STEP}); the plan's choice in bold",
             "", f"| {d1} \\ {d2} | " + " | ".join(f"{v:g}" for v in v2) + " |",
             "|---|" + "---|" * len(v2)]
    for a in v1:
        cells = []
        for b in v2:
            row = rows.get((a, b))
            best = A.choose([row]) if row else None
            if best is None:
                cells.append("—" if row is None else "not eligible")
                continue
            text = f"{best['val']:.4f} (epoch {best['epochs']})"
            cells.append(f"**{text}**" if chosen and best["name"] == chosen["name"] else text)
        lines.append(f"| {a:g} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def tables():
    parts = []
    for nb in ("01_mnist_classification", "05_uncertainty", "06_alternatives"):
        for path in sorted((ROOT / "results" / nb / "sweep").glob("*.json")):
            parts.append(sweep_table(path))
    for method in _plan_v3().SEARCHES:
        parts.append(v3_search_table(method))
    tuning = ROOT / "results" / "03_contextual_bandit" / "tuning.json"
    if tuning.exists():
        parts.append(tuning_table(tuning))
    return "\n\n".join(parts) if parts else "(no search has run yet)"


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--check", action="store_true")
    args = ap.parse_args(argv)
    sys.path.insert(0, str(ROOT / "tools"))
    from marked_block import rewrite
    rewrite(DOC, START, END, tables(), "docs/lab_log.md's tables", "python tools/lab_log.py",
            check=args.check)

if __name__ == "__main__":
    main()
