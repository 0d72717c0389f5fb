"""Write the README's at-a-glance table from the committed results files.

    python tools/status_table.py            # rewrites the table between the markers in README.md
    python tools/status_table.py --check    # exit 1 when README.md differs from the results

Every number in the table comes from a results file; the verdict rules are in ``verdict_*``.
"""
import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
START, END = "<!-- status:start -->", "<!-- status:end -->"


AGENTS = {"greedy": "greedy", "eps1": "1% greedy", "eps5": "5% greedy"}


def _load(path):
    p = ROOT / "results" / path
    return json.loads(p.read_text()) if p.exists() else None


def _pct(v, sd=None, n=None):
    out = f"{100 * v:.2f}%"
    if sd is not None:
        out = f"{100 * v:.2f} ± {100 * sd:.2f}%"
    return out + (f" ({n} seeds)" if n and n > 1 else " (1 seed)" if n == 1 else "")


def verdict_error(mean, paper):
    """Table 1 cells: within 0.2 pp of the paper (or better) = reproduced; within 0.5 = partly."""
    gap = 100 * (mean - paper)
    return "reproduced" if gap <= 0.2 else "partly" if gap <= 0.5 else "not reproduced"


def _paper_range():
    sys.path.insert(0, str(ROOT))
    from helpers.table1 import PAPER_TABLE1
    vals = [v for row in PAPER_TABLE1.values() for v in row.values()]
    return f"{100 * min(vals):.2f}–{100 * max(vals):.2f}%"


def _pending(what, paper, command, notebook):
    return [what, paper, "not run yet", "pending", f"run `{command}`",
            f"[{notebook[:2]}](notebooks/{notebook}.ipynb)"]


def _width_row(H, cells, nb01):
    """One status row for a wider Table 1 network: its four cells, paper against ours."""
    done = [r for r in cells if r["mean"] is not None]
    paper = " / ".join(f"{100 * r['paper']:.2f}" for r in cells) + "%"
    ours = " / ".join("—" if r["mean"] is None else f"{100 * r['mean']:.2f}" for r in cells) + "%"
    seeds = sorted({len(r["seeds"]) for r in done})
    if done:
        ours += (f" ({'–'.join(map(str, seeds))} seed{'s' if seeds[-1] > 1 else ''}"
                 + (", means)" if seeds[-1] > 1 else ")"))
    short = {"sgd": "SGD", "dropout": "dropout", "bbb_gaussian": "BBB Gaussian",
             "bbb_mixture": "BBB mixture"}
    within = sum(verdict_error(r["mean"], r["paper"]) == "reproduced" for r in done)
    mean = {r["key"]: r["mean"] for r in done}
    lost = [k for k in ("bbb_gaussian", "sgd") if k in mean and "bbb_mixture" in mean
            and mean["bbb_mixture"] > mean[k]]   # the paper: the mixture below both
    order = ("" if "bbb_mixture" not in mean or len(mean) < len(cells) else
             "; orderings hold" if not lost else
             f"; BBB mixture's error above {' and '.join(short[k] for k in lost)}")
    verdict = ("pending" if not done else
               f"{'reproduced' if within == len(cells) and not lost else 'partly'}: "
               f"{within} of {len(cells)} cells within 0.2 pp{order}"
               + (f" ({len(cells) - len(done)} not run yet)" if len(done) < len(cells) else ""))
    epochs = sorted({r["protocol"]["epochs"] + r["protocol"]["init_epochs"] for r in cells})
    if not done:
        return _pending(f"Table 1 at 2×{H}", paper, "make table1", "01_mnist_classification")
    return [f"Table 1 at 2×{H}: " + " / ".join(short.get(r["key"], r["key"]) for r in cells),
            paper, ours, verdict, f"Adam; {epochs[0]}–{epochs[-1]} epochs (paper 600); BBB "
            f"mixture warm-started; {_recipes(H, cells)}", f"[01]({nb01})"]


def _recipes(H, cells):
    """Where a wider width's recipes come from: its own searches, or 2x400's."""
    own = sum(f"_h{H}" in (r.get("sweep") or "") for r in cells)
    return (f"recipes searched at 2×{H}" if own == len(cells) else "2×400's recipes" if not own
            else f"{own} of {len(cells)} recipes searched at 2×{H}")


def rows():
    out = []
    nb01 = "notebooks/01_mnist_classification.ipynb"
    table = _load("01_mnist_classification/table1.json")
    if table:
        base = min(r["H"] for r in table["metrics"]["rows"])
        for r in table["metrics"]["rows"]:
            if r["paper"] is None or r["H"] != base or r["mean"] is None:
                continue
            p = r["protocol"]
            start = "warm start from the SGD net" if p["init_epochs"] else "random start"
            epochs = (f"{p['init_epochs']} + {p['epochs']}" if p["init_epochs"] else
                      str(p["epochs"]))
            out.append([f"Table 1: {r['label']}, 2×{r['H']}", f"{100 * r['paper']:.2f}%",
                        _pct(r["mean"], r["sd"], len(r["seeds"])),
                        verdict_error(r["mean"], r["paper"]),
                        f"Adam; {epochs} epochs (paper 600); {start}" if r["key"].startswith("bbb")
                        else f"Adam; {epochs} epochs (paper 600)", f"[01]({nb01})"])
        for H in sorted({r["H"] for r in table["metrics"]["rows"]} - {base}):
            out.append(_width_row(H, [r for r in table["metrics"]["rows"]
                                      if r["H"] == H and r["paper"] is not None], nb01))
    if not table:
        out.append(_pending("Table 1 (SGD, dropout, BBB; 400 / 800 / 1200 units)", _paper_range(),
                            "make sweep ONLY=01; make table1", "01_mnist_classification"))
    prune = _load("04_pruning/snr.json")
    if not (prune and "models" in prune["metrics"]):
        out.append(_pending("Table 2: 95% of weights removed by SNR", "+0.05 pp",
                            "make table1; make notebooks ONLY=04", "04_pruning"))
    if prune and "models" in prune["metrics"]:
        import statistics
        H = prune["metrics"]["models"][0]["H"]
        ds = [100 * (m["error_at"]["snr"]["95"] - m["error_at"]["snr"]["0"])
              for m in prune["metrics"]["models"] if m["H"] == H]
        d95 = statistics.fmean(ds)
        sd = f" ± {statistics.stdev(ds):.2f}" if len(ds) > 1 else ""
        paper_net = "" if H == 1200 else " (paper: 2×1200)"
        out.append([f"Table 2: 95% of weights removed by SNR, 2×{H}{paper_net}", "+0.05 pp",
                    f"{d95:+.2f}{sd} pp ({len(ds)} seed{'s' if len(ds) > 1 else ''})",
                    "reproduced" if d95 <= 0.2 else "not reproduced",
                    "the Table 1 network", "[04](notebooks/04_pruning.ipynb)"])
    reg = _load("02_regression_uncertainty/bbb_gaussian.json")
    mle = _load("02_regression_uncertainty/mle.json")
    if reg and mle and isinstance(reg["metrics"].get("std_ratio"), dict):
        b, s = reg["metrics"]["std_ratio"], mle["metrics"]["std_ratio"]
        mix = _load("02_regression_uncertainty/bbb_mixture.json")
        m = mix["metrics"]["std_ratio"] if mix else None
        out.append(["Figure 5: predictive std away from / near the data (BBB vs standard net)",
                    "qualitative: BBB widens",
                    f"Gaussian prior {b['mean']:.1f}"
                    + (f", scale mixture {m['mean']:.1f}" if m else "")
                    + f" vs {s['mean']:.1f} ({len(b['per_seed'])} seeds)",
                    "reproduced" if b["mean"] > 2 * s["mean"] else "not reproduced",
                    "noise std 0.02 (paper: \"N(0, 0.02)\"); both priors shown",
                    "[02](notebooks/02_regression_uncertainty.ipynb)"])
    for buffer, departure in (("paper", "none (the paper's last 4,096 tuples)"),
                              ("keep_all", "departure: keeps every tuple (Riquelme et al. 2018)")):
        rec = _load(f"03_contextual_bandit/reported_{buffer}.json")
        if not rec or not rec["metrics"].get("complete"):
            out.append(_pending(f"Figure 6: BBB's regret after 50,000 steps, buffer: "
                                f"{buffer.replace('_', ' ')}", "~5,700",
                                "python tools/bandit_tuning.py; python tools/bandit_runs.py",
                                "03_contextual_bandit"))
            continue
        s = rec["metrics"]["summary"]
        bbb = s["bbb"]
        rival = min(("greedy", "eps1", "eps5"), key=lambda a: s[a]["mean"])
        gap, spread = s[rival]["mean"] - bbb["mean"], max(bbb["sd"], s[rival]["sd"])
        verdict = ("ordering reproduced" if gap > spread else
                   f"not reproduced: {AGENTS[rival]} lower" if gap < -spread else
                   f"unclear: BBB vs {AGENTS[rival]} within the seed spread")
        finals = list(zip(*(s[a]["final_per_seed"] for a in ("bbb", *AGENTS))))
        wins = sum(f[0] < min(f[1:]) for f in finals)
        if gap > spread and 2 * wins <= len(finals):
            verdict = f"partly: lowest mean regret, but lowest on {wins} of {len(finals)} seeds"
        else:
            verdict += f" (BBB lowest on {wins} of {len(finals)} seeds)"
        out.append([f"Figure 6: BBB's regret after 50,000 steps, buffer: {buffer.replace('_', ' ')}",
                    "~5,700", f"{bbb['mean']:,.0f} ± {bbb['sd']:,.0f} ({len(bbb['final_per_seed'])} seeds)",
                    verdict,
                    f"prior and KL scaling tuned on seeds 100–101; {departure}",
                    "[03](notebooks/03_contextual_bandit.ipynb)"])
    label = "Beyond the paper: AUROC MNIST → Fashion-MNIST, BBB vs the best other method"
    recs = {k: _load(f"05_uncertainty/{k}_mnist.json")
            for k in ("bbb", "mc_dropout", "ensemble", "deterministic")}
    if not all(recs.values()):
        out.append(_pending(label, "—", "make sweep ONLY=05; python tools/ood_table.py",
                            "05_uncertainty"))
    else:
        au = {k: r["metrics"]["auroc_entropy"] for k, r in recs.items()}
        best = max((k for k in au if k != "bbb"), key=lambda k: au[k]["mean"])
        names = {"mc_dropout": "MC dropout", "ensemble": "deep ensemble",
                 "deterministic": "one network"}
        a, b = au["bbb"], au[best]
        out.append([label, "—", f"{a['mean']:.3f} ± {a['sd']:.3f} vs {names[best]} "
                    f"{b['mean']:.3f} ± {b['sd']:.3f} ({len(a['per_seed'])} seeds)", "—",
                    "all settings chosen on validation NLL", "[05](notebooks/05_uncertainty.ipynb)"])
    alt = _load("06_alternatives/summary.json")
    if not alt:
        out.append(_pending("Beyond the paper: BBB vs IVON, Laplace, ensembles", "—",
                            "make notebooks ONLY=06", "06_alternatives"))
    if alt:
        r = {x["method"]: x for x in alt["metrics"]["rows"]}
        best = max((x for m, x in r.items() if m != "bbb"),
                   key=lambda x: x["auroc_entropy"]["mean"])
        out.append(["Beyond the paper: BBB vs IVON, Laplace, ensembles (AUROC; train time / MAP)",
                    "—", f"BBB {r['bbb']['auroc_entropy']['mean']:.3f}, "
                    f"{r['bbb']['train_time_ratio']['mean']:.1f}×; best other: {best['label']} "
                    f"{best['auroc_entropy']['mean']:.3f}, {best['train_time_ratio']['mean']:.1f}×",
                    "—", "one MLP, one split", "[06](notebooks/06_alternatives.ipynb)"])
    return out


def table():
    header = ["experiment", "paper", "ours (mean ± sd)", "verdict", "protocol / departures",
              "notebook"]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(r) + " |" for r in rows()]
    return "\n".join(lines)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--check", action="store_true")
    args = ap.parse_args(argv)
    sys.path.insert(0, str(ROOT / "tools"))
    from marked_block import rewrite
    rewrite(ROOT / "README.md", START, END, table(), "README.md's status table",
            "python tools/status_table.py", check=args.check)

if __name__ == "__main__":
    main()
