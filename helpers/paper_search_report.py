"""Reading the paper's protocol, version 2 (``helpers.paper_search``) back: Table 1, the orderings as
effects beside the paper's, whether each BBB posterior trained, the search, the ablations and the
paper's Figure 2.

Written before any of the campaign's test numbers existed: the analysis is the one its plan
declares (``results/01_mnist_classification/paper_protocol/v2/plan.json``, "analysis"): the same
tests as version 1 (``helpers.paper_protocol.analysis``), each ordering also as a paired difference
with its 95 % interval beside the paper's difference.
"""
import json
import statistics

from . import paper_search as S
from .paper_protocol import COMPARABLE, ORDERINGS, PAPER_TABLE1, analysis
from .utils import atomic_write_bytes

METHOD_ORDER = ("sgd", "dropout", "bbb_gaussian", "bbb_mixture")
LABELS = {"sgd": "SGD, no regularisation", "dropout": "SGD, dropout",
          "bbb_gaussian": "BBB, Gaussian prior", "bbb_mixture": "BBB, scale mixture prior"}
# Okabe-Ito: distinguishable with every common colour-vision deficiency
COLORS = {"sgd": "#009E73", "dropout": "#E69F00", "bbb_gaussian": "#CC79A7",
          "bbb_mixture": "#0072B2"}
TRAINED_SPREAD = 1.5  # widths trained: in some layer sigma's 95 % quantile >= 1.5 x its 5 % one


def sigma_moved(record):
    """Return, per layer, the relative change of the median sigma from its start softplus(rho0)
    (None for a network without a posterior)."""
    import math
    post = record.get("posterior")
    if not post:
        return None
    s0 = math.log1p(math.exp(record["config"]["rho_init"]))
    return {name: layer["sigma_q"][len(layer["sigma_q"]) // 2] / s0 - 1
            for name, layer in post.items()}


def sigma_spread(record):
    """Return, per layer, the ratio of sigma's 95 % to its 5 % quantile (1 at the start, where
    every sigma is softplus(rho0); a drift that moves every sigma alike leaves it near 1), or None
    for a network without a posterior."""
    post = record.get("posterior")
    if not post:
        return None
    return {name: layer["sigma_q"][-1] / layer["sigma_q"][0] for name, layer in post.items()}


def final_rows(s):
    """Return one row per method and width: the recipe, the seeds done and pending, per-seed test
    and validation errors of the chosen predictor, and (BBB) how far each posterior's widths moved."""
    rows = []
    for H in s["widths"]:
        for m in METHOD_ORDER:
            st = S.search_state(s, m)
            rec = st["recipe"]
            row = {"key": m, "label": LABELS[m], "H": H,
                   "recipe": None if rec is None else {"point": rec["point"],
                                                       "schedule": rec["schedule"]},
                   "seeds": [], "pending_seeds": [], "test_error": [], "val_error": [],
                   "predictor": [], "sigma_moved": [], "sigma_spread": [], "runs": []}
            for seed in s["seeds"][H]:
                r = None if rec is None else S.read(
                    S.record_path(S.recipe_config(s, m, H, seed), "final"))
                if r is None or r["metrics"].get("test_error") is None:
                    row["pending_seeds"].append(seed)
                    continue
                row["seeds"].append(seed)
                row["test_error"].append(r["metrics"]["test_error"])
                row["val_error"].append(r["metrics"]["val_error"])
                row["predictor"].append(r["metrics"].get("predictor"))
                row["sigma_moved"].append(sigma_moved(r))
                row["sigma_spread"].append(sigma_spread(r))
                row["runs"].append(r["name"])
            if m.startswith("bbb") and row["sigma_spread"]:
                row["posterior_trained"] = all(
                    any(v >= TRAINED_SPREAD for v in spread.values())
                    for spread in row["sigma_spread"])
            rows.append(row)
    return rows


def effects(rows, alpha=0.05):
    """Return per width each declared ordering (and BBB vs dropout) as a paired difference a - b
    over the common seeds with its 95 % t-interval, the paper's difference and whether the
    interval excludes it."""
    from . import stats
    by = {(r["key"], r["H"]): r for r in rows}
    out = {}
    for H in sorted({r["H"] for r in rows}):
        items = {}
        pairs = [(a, b, claim) for a, b, claim in ORDERINGS]
        pairs.append((COMPARABLE[0], COMPARABLE[1], "scale mixture vs dropout"))
        for a, b, claim in pairs:
            ra, rb = by.get((a, H)), by.get((b, H))
            if not ra or not rb:
                continue
            common = sorted(set(ra["seeds"]) & set(rb["seeds"]))
            va = dict(zip(ra["seeds"], ra["test_error"]))
            vb = dict(zip(rb["seeds"], rb["test_error"]))
            paper = (PAPER_TABLE1[a].get(H) - PAPER_TABLE1[b].get(H)
                     if H in PAPER_TABLE1[a] and H in PAPER_TABLE1[b] else None)
            t = stats.paired_t([va[x] for x in common], [vb[x] for x in common],
                               level=1 - alpha) if len(common) >= 2 else None
            ci = None if t is None else t["ci"]
            items[claim] = {"n": len(common), "mean_diff": None if t is None else t["mean_diff"],
                            "ci": ci, "paper_diff": paper,
                            "excludes_paper": (None if ci is None or paper is None
                                               else not ci[0] <= paper <= ci[1])}
        out[H] = items
    return out


def search_tables(s):
    """Return per method the search as it went: per rung, each trial's setting, schedule, the
    validation errors on the tuning seeds and its score (best first), and the recipe."""
    out = {}
    for m in METHOD_ORDER:
        st = S.search_state(s, m)
        rungs = []
        for rung in st["rungs"]:
            trials = [{"point": t["point"], "schedule": t["schedule"], "epochs": t["epochs"],
                       "val_error": [None if r is None else r["metrics"].get("val_error")
                                     for r in t["records"]],
                       "score": t["score"]} for t in rung]
            trials.sort(key=lambda t: (t["score"] is None, t["score"] if t["score"] is not None
                                       else 0.0, json.dumps(t["point"], sort_keys=True)))
            rungs.append(trials)
        out[m] = {"rungs": rungs, "recipe": None if st["recipe"] is None else
                  {"point": st["recipe"]["point"], "schedule": st["recipe"]["schedule"]}}
    return out


def main_effects(s, method):
    """Return, for the first rung of ``method``'s search, the mean score at each value of each
    factor (a description of the balanced design; the search chooses by trial, not by these)."""
    st = S.search_state(s, method)
    trials = [t for t in st["rungs"][0] if t["score"] is not None]
    out = {}
    for key, values in S.SPACES[method].items():
        row = {}
        for v in values:
            scores = [t["score"] for t in trials if t["point"].get(key) == v]
            finite = [x for x in scores if x != float("inf")]
            row[str(v)] = {"n": len(scores), "diverged": len(scores) - len(finite),
                           "mean_score": statistics.fmean(finite) if finite else None}
        out[key] = row
    return out


def ablation_rows(s, alpha=0.05):
    """Return the scale mixture's ablations: per step back to version 1, the recipe's and the
    ablated run's test errors on the same seeds and their paired difference (ablated - recipe)."""
    from dataclasses import replace

    from . import stats
    out = []
    for label, cfg0 in S.ablations(s):
        base, abl, seeds = [], [], []
        for seed in s["ablation_seeds"]:
            r0 = S.read(S.record_path(S.recipe_config(s, "bbb_mixture", s["search_width"], seed),
                                      "final"))
            r1 = S.read(S.record_path(replace(cfg0, seed=seed), "ablation"))
            if r0 is None or r1 is None or r1["metrics"].get("test_error") is None:
                continue
            seeds.append(seed)
            base.append(r0["metrics"]["test_error"])
            abl.append(r1["metrics"]["test_error"])
        t = stats.paired_t(abl, base, level=1 - alpha) if len(seeds) >= 2 else None
        out.append({"label": label, "seeds": seeds, "recipe": base, "ablated": abl,
                    "mean_diff": (statistics.fmean(abl) - statistics.fmean(base)) if seeds
                    else None, "ci": None if t is None else t["ci"]})
    return out


def write_summary(s):
    """Write v2/summary.json: Table 1's rows, the declared verdicts, the effects, the search and
    the ablations. The same records give the same bytes."""
    rows = final_rows(s)
    rec = {"protocol": "paper v2", "profile": s["profile"], "plan": "plan.json",
           "rows": rows, "analysis": analysis(rows), "effects": effects(rows),
           "search": search_tables(s),
           "main_effects": {m: main_effects(s, m) for m in METHOD_ORDER},
           "ablations": ablation_rows(s),
           "complete": all(not r["pending_seeds"] for r in rows),
           "inputs": sorted(f"runs/{n}.json" for r in rows for n in r["runs"])}
    path = S.root() / "summary.json"
    atomic_write_bytes(path, (json.dumps(rec, indent=1, default=str) + "\n").encode())
    return rec


def figure2(s, H=1200):
    """The paper's Figure 2 from the final runs at width ``H``: test error against epoch (the
    chosen predictor's curve: posterior-mean weights for BBB), the mean over seeds with the
    seeds' range as a band, each method's Table 1 value from the paper as a dashed line with its
    own legend entry."""
    import matplotlib.pyplot as plt

    from .plotting import percent_axis
    fig, ax = plt.subplots(figsize=(7.5, 4.6))
    lo, hi = 1.0, 0.0
    drawn = 0
    for m in ("bbb_mixture", "bbb_gaussian", "dropout", "sgd"):
        recs = []
        for seed in s["seeds"][H]:
            cfg = S.recipe_config(s, m, H, seed)
            r = None if cfg is None else S.read(S.record_path(cfg, "final"))
            if r is not None and r.get("history"):
                recs.append(r)
        paper = PAPER_TABLE1[m].get(H)
        if paper is not None:
            ax.axhline(paper, color=COLORS[m], ls="--", lw=1.0,
                       label=f"paper, {LABELS[m]}: {100 * paper:.2f}%")
            lo, hi = min(lo, paper), max(hi, paper)
        if not recs:
            continue
        drawn += 1
        n = min(len(r["history"]) for r in recs)
        ys = [[r["history"][i]["test_error"] for r in recs] for i in range(n)]
        x = list(range(1, n + 1))
        mean = [statistics.fmean(v) for v in ys]
        ax.plot(x, mean, color=COLORS[m], lw=1.1,
                label=f"ours, {LABELS[m]} ({len(recs)} seed{'s' if len(recs) > 1 else ''})")
        if len(recs) > 1:
            ax.fill_between(x, [min(v) for v in ys], [max(v) for v in ys], color=COLORS[m],
                            alpha=0.25, lw=0)
        tail = [y for v in ys[10:] for y in v]
        if tail:
            lo, hi = min(lo, min(tail)), max(hi, max(tail))
    ax.set_yscale("log")
    if hi > lo:
        ax.set_ylim(lo * 0.9, hi * 1.15)
    percent_axis(ax, "y", decimals=1)
    ax.set_xlim(0, s["final_epochs"])
    ax.set_xlabel("epoch")
    ax.set_ylabel("test error (log scale)")
    ax.set_title(f"Figure 2: 784-{H}-{H}-10, plain SGD on the summed cost")
    if not drawn:
        ax.text(0.5, 0.5, "no run of this width has finished", transform=ax.transAxes,
                ha="center", va="center", color="0.4")
    ax.legend(fontsize=7.5, loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False)
    fig.tight_layout()
    return fig
