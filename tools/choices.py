"""Write the generated table of docs/choices.md: today's two-sided tests on both sides of every
choice that was made after a test number of its experiment had been seen.

    python tools/choices.py            # rewrites the table between the markers in docs/choices.md
    python tools/choices.py --check    # exit 1 when docs/choices.md differs from the results

Both sides are read from committed results files (run records, the bandit's and notebooks 05
and 06's results); nothing is trained. The verdicts are helpers.stats' words, with the same
tests as Table 1 (helpers.table1.analysis). A side that no results file holds any more is named
in docs/choices.md's text, not here.
"""
import argparse
import copy
import json
import os
import statistics
import sys
from dataclasses import replace
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DOC = ROOT / "docs" / "choices.md"
START, END = "<!-- choices:start -->", "<!-- choices:end -->"
NB = "01_mnist_classification"


def _helpers():
    os.environ["BBB_RESULTS_DIR"] = str(ROOT / "results")  # the committed results, read only
    sys.path.insert(0, str(ROOT))
    from helpers import stats
    from helpers import table1 as T
    return stats, T


def _load(rel):
    return json.loads((ROOT / "results" / rel).read_text())


def _rows(T, widths, sweeps, seeds=(0, 1, 2), predictor=None):
    """Table 1's rows for ``widths`` from the run records the cells name (``predictor``
    'ensemble': every BBB row's test error is its average-of-samples predictor's)."""
    rows = []
    for cell in T.cells(widths, sweeps, NB, base_H=400):
        recs = []
        for seed in seeds:
            rec = json.loads(T.run_path(replace(cell.config, seed=seed), NB).read_text())
            if predictor == "ensemble" and cell.config.bayesian:
                rec = copy.deepcopy(rec)
                rec["metrics"]["test_error"] = rec["metrics"]["test_error_ensemble"]
                rec["metrics"]["predictor"] = "ensemble"
            recs.append(rec)
        rows.append(T.row(cell, recs, NB))
    return rows


def _pct(v):
    return f"{100 * v:.2f}%"


def _table1_line(T, choice, side, rows, H):
    """One line: a side of a Table 1 choice at width H, in Table 1's words."""
    by = {(r["key"], r["H"]): r for r in rows}
    w = T.analysis(rows)["widths"][str(H)]
    mix = by[("bbb_mixture", H)]
    order = ", ".join(f"{T.SHORT[a]} < {T.SHORT[b]}: {w['orderings'][f'{a} < {b}']['verdict']}"
                      for a, b in T.FAMILY)
    means = " / ".join(_pct(by[(k, H)]["mean"]) for k in T.METHODS)
    return [choice, side, f"2×{H}", means, mix["vs_paper"]["verdict"], order,
            w["comparable"]["verdict"]]


def table1_lines(T):
    from helpers.profiles import PROFILES
    own = PROFILES[NB]["default"]["sweeps"]  # with the 2x1200 searches
    base_only = {k: v for k, v in own.items() if k.endswith("_h400")}
    out = []
    choice = "2×1200 searches (WIDTH_SWEEPS)"
    out.append(_table1_line(T, choice, "before: 2×400's recipes and epochs",
                            _rows(T, (1200,), base_only), 1200))
    out.append(_table1_line(T, choice, "after: searched at 2×1200", _rows(T, (1200,), own), 1200))
    choice = "BBB predictor chosen on validation"
    for H in (400, 800, 1200):
        out.append(_table1_line(T, choice, "before: always the average of 10 samples",
                                _rows(T, (H,), own, predictor="ensemble"), H))
        out.append(_table1_line(T, choice, "after: mean weights or average, on validation",
                                _rows(T, (H,), own), H))
    choice = "seeds 1–2 added"
    for H in (800, 1200):
        for side, seeds in (("before: seed 0", (0,)), ("after: seeds 0–2", (0, 1, 2))):
            out.append(_table1_line(T, choice, side, _rows(T, (H,), own, seeds=seeds), H))
    return out


def warm_start_lines(stats, T):
    """The warm-start arm at 2x400: the best random-start trial of the same search (the control
    row) against the warm start that was chosen."""
    from helpers.profiles import PROFILES
    rows = _rows(T, (400,), PROFILES[NB]["default"]["sweeps"])
    by = {r["key"]: r for r in rows}
    out = []
    for side, key in (("before: no warm start (best random-start trial)",
                       "bbb_mixture_random_start"), ("after: warm start from SGD", "bbb_mixture")):
        r = by[key]
        vs = stats.vs_published(r["test_error"], by["bbb_mixture"]["paper"], scale=100,
                                unit=" pp")["verdict"]
        sgd = stats.ordering(r["test_error"], by["sgd"]["test_error"])["verdict"]
        drop = stats.comparable(r["test_error"], by["dropout"]["test_error"], 0.001)["verdict"]
        out.append(["warm-start arm in the search", side, "2×400", _pct(r["mean"]), vs,
                    f"mixture < SGD (alone): {sgd}", drop])
    return out


def bandit_lines(stats):
    out = []
    for buffer, side in (("paper", "before: the paper's buffer"),
                         ("keep_all", "after: keep-all buffer")):
        s = _load(f"03_contextual_bandit/reported_{buffer}.json")["metrics"]["summary"]
        names = {"greedy": "greedy", "eps1": "1% greedy", "eps5": "5% greedy"}
        fam = stats.ordering_family({names[a]: (s["bbb"]["final_per_seed"], s[a]["final_per_seed"])
                                     for a in names})
        out.append(["bandit keep-all buffer", side, "4 seeds", f"BBB {s['bbb']['mean']:,.0f}",
                    "—", ", ".join(f"BBB < {k}: {v['verdict']}" for k, v in fam.items()), "—"])
    return out


def map_lines(stats):
    """BBB's AUROC against the other methods: notebook 05 (no weight decay searched) and 06."""
    r05 = {k: _load(f"05_uncertainty/{k}_mnist.json")["metrics"]["auroc_entropy"]["per_seed"]
           for k in ("bbb", "deterministic", "mc_dropout", "ensemble")}
    r06 = {r["method"]: r["auroc_entropy"]["per_seed"]
           for r in _load("06_alternatives/summary.json")["metrics"]["rows"]}
    out = []
    for side, res, single in (("before: notebook 05, no weight decay", r05, "deterministic"),
                              ("after: notebook 06, weight decay searched", r06, "map")):
        # AUROC: higher is better, so the claim "BBB better" is "other < BBB"
        fam = stats.ordering_family({k: (res[k], res["bbb"])
                                     for k in (single, "mc_dropout", "ensemble")})
        means = ", ".join(f"{k} {statistics.fmean(res[k]):.3f}"
                          for k in ("bbb", single, "ensemble"))
        out.append(["MAP's search widened (weight decay)", side, "3 seeds", means, "—",
                    ", ".join(f"{k} < BBB: {v['verdict']}" for k, v in fam.items()), "—"])
    return out


def regression_lines(stats):
    """Notebook 02's std ratio (BBB against the standard network), on the seeds it had before
    its analysis plan (0-2) and on the plan's seeds (0-4), both from today's fits."""
    rows = _load("02_regression_uncertainty/fits.json")["metrics"]["per_seed"]
    out = []
    for side, seeds in (("before: seeds 0–2", (0, 1, 2)), ("after: seeds 0–4 (the plan's)",
                                                           (0, 1, 2, 3, 4))):
        ratio = {m: [r["std_ratio"] for r in rows[m] if r["seed"] in seeds]
                 for m in ("mle", "bbb_gaussian", "bbb_mixture")}
        if any(len(v) != len(seeds) for v in ratio.values()):
            continue  # the fits do not hold these seeds (yet)
        fam = stats.ordering_family({"Gaussian": (ratio["mle"], ratio["bbb_gaussian"]),
                                     "mixture": (ratio["mle"], ratio["bbb_mixture"])})
        out.append(["notebook 02: seeds 3–4 added (std ratio)", side, f"{len(seeds)} seeds",
                    f"Gaussian {statistics.fmean(ratio['bbb_gaussian']):.1f}, mixture "
                    f"{statistics.fmean(ratio['bbb_mixture']):.1f}, standard net "
                    f"{statistics.fmean(ratio['mle']):.1f}", "—",
                    ", ".join(f"standard net < {k}: {v['verdict']}" for k, v in fam.items()),
                    "—"])
    return out


def table():
    stats, T = _helpers()
    header = ["choice", "side", "net / seeds", "ours (SGD / dropout / Gaussian / mixture)",
              "mixture vs paper", "orderings (Holm per width)", "mixture vs dropout (±0.1 pp)"]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    body = (table1_lines(T) + warm_start_lines(stats, T) + bandit_lines(stats)
            + map_lines(stats) + regression_lines(stats))
    lines += ["| " + " | ".join(r) + " |" for r in body]
    return "\n".join(lines)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--check", action="store_true")
    args = ap.parse_args(argv)
    sys.path.insert(0, str(ROOT / "tools"))
    from marked_block import rewrite
    rewrite(DOC, START, END, table(), "docs/choices.md's table", "python tools/choices.py",
            check=args.check)


if __name__ == "__main__":
    main()
