"""Notebook 06, plan v3: its searches, final runs and tests, as tables and sentences.

Reads what ``helpers.alternatives_plan`` (the search records) and ``helpers.alternatives_final``
(``analysis``: results/06_alternatives/v3/summary.json) wrote; computes nothing a verdict rests
on. Every number shown comes from those files.
"""
import json
import math
import statistics
from pathlib import Path

from . import alternatives as ALT
from . import alternatives_final as F
from . import alternatives_plan as A

LABELS = {"map": "MAP", "mc_dropout": "MC dropout", "ensemble": "deep ensemble (5)",
          "bbb": "BBB (scale mixture)", "ivon": "IVON", "laplace_ll_kron": "Laplace (last layer)",
          "laplace_diag": "Laplace (all layers diagonal)",
          "laplace_kron": "Laplace (all layers KFAC)"}
REGULARISER = {"map": "weight_decay", "mc_dropout": "dropout", "bbb": "rho_init",
               "ivon": "hess_init"}
# the end of a Bayesian method's grid with the least initial posterior uncertainty: BBB's
# smallest rho_init (sigma = softplus(rho)), IVON's largest hess_init (the initial precision)
LEAST_UNCERTAIN = {"bbb": {"rho_init": min}, "ivon": {"hess_init": max}}
# the regularisers in words (Table 6.1's column heads and the search reading)
REG_WORDS = {"weight_decay": "weight decay", "dropout": "dropout rate",
             "rho_init": "initial ρ (σ = log(1 + e^ρ))",
             "hess_init": "initial Hessian (its initial precision)"}
REG_SHORT = {"weight_decay": "weight decay", "dropout": "dropout rate", "rho_init": "initial ρ",
             "hess_init": "initial Hessian"}
METRIC_LABELS = {"test_error": "test error", "nll": "NLL", "brier": "Brier", "ece": "ECE",
                 "auroc_entropy": "AUROC (entropy)", "auroc_mi": "AUROC (MI)"}


def load_summary():
    """Return results/06_alternatives/v3/summary.json, or None before its first analysis."""
    from .utils import results_dir
    path = results_dir() / A.NB / f"v{A.VERSION}" / "summary.json"
    return json.loads(path.read_text()) if path.exists() else None


def edges(method, choice):
    """Return the names of the chosen values that sit at an edge of the method's grid (the
    chosen epoch counts: its grid is epoch_step .. max_epochs)."""
    grid = A.SEARCHES[method]["grid"]
    out = [k for k, vals in grid.items()
           if choice["config"][k] in (min(vals), max(vals))]
    if choice["epochs"] in (A.MAX_EPOCHS, max(A.EPOCH_STEP, A.SMOOTH)):
        out.append("epochs")
    return out


def search_rows():
    """Return (header, rows) of the four searches: grid, trials done, choice, its validation
    NLL (the plan's 5-epoch mean) and the edges it sits at."""
    header = ["method", "learning rates", "its own setting",
              "choice*: learning rate, own setting, epochs", "validation NLL", "at a grid edge"]
    rows = []
    for m, spec in A.SEARCHES.items():
        reg = REGULARISER[m]
        recs = [json.loads(A.trial_path(m, c).read_text()) for c in A.configs(m)
                if A.trial_path(m, c).exists()]
        c = A.chosen(m)
        rows.append([
            LABELS[m], ", ".join(f"{v:g}" for v in spec["grid"]["lr"]),
            f"{REG_WORDS[reg]}: " + ", ".join(_num(v) for v in spec["grid"][reg]),
            f"{c['config']['lr']:g}, {_num(c['config'][reg])}, {c['epochs']}" if c else
            "(under way)",
            f"{c['val']:.4f}" if c else "—",
            (", ".join(REG_SHORT.get(x, x) for x in edges(m, c)) or "none") if c else "—"])
    return header, rows


def _num(v):
    """A setting as ``:g`` with a true minus sign."""
    return format(v, "g").replace("-", "−")


def _trials():
    """(run, planned, eligible) over the four searches (their trial records)."""
    run = planned = ok = 0
    for m in A.SEARCHES:
        recs = [json.loads(A.trial_path(m, c).read_text()) for c in A.configs(m)
                if A.trial_path(m, c).exists()]
        run, planned = run + len(recs), planned + len(A.configs(m))
        ok += sum(A.eligible(r["row"]) for r in recs)
    return run, planned, ok


def runtime_text(summary):
    """Provenance: what retraining costs, from the records: the four searches' trials (their
    process wall time, one thread each) and the final runs' training (the cost column's
    seconds times the seeds timed on a CPU), in hours; the Laplace fits run elsewhere on a GPU
    are named, not timed."""
    if summary is None:
        return ""
    search = 0.0
    for m in A.SEARCHES:
        for c in A.configs(m):
            if A.trial_path(m, c).exists():
                r = json.loads(A.trial_path(m, c).read_text())
                search += r.get("process_wall_s") or r["row"].get("wall_s") or 0.0
    cost = summary.get("cost", {})
    final = sum((c.get("train_s") or 0.0) * len(c.get("seeds") or []) for c in cost.values())
    gpu = [SHORT[m] for m, c in cost.items() if c.get("other_devices")]
    return (f"**Retraining costs** about {search / 3600:.0f} CPU-hours for the four searches and "
            f"{final / 3600:.0f} for the final runs' training (one thread per run)"
            + (f", plus GPU time for some seeds of {_join(gpu)}" if gpu else "") + ".")


def search_note():
    """Table 6.1's footnote: the trials run and eligible, what an eligible trial is (the plan's
    rule, helpers.alternatives_plan.eligible) and how the choice is made."""
    run, planned, ok = _trials()
    done = (f"all {planned} trials ran and were eligible" if run == planned == ok else
            f"{run} of {planned} trials ran, {ok} eligible")
    return (f"\\* *Eligible*: a trial that ran all {A.MAX_EPOCHS} epochs without an error or a "
            "diverged (NaN) validation loss; only eligible trials can be chosen. The choice is the "
            f"eligible setting and epoch (a multiple of {A.EPOCH_STEP}) with the lowest "
            f"validation NLL averaged over the {A.SMOOTH} epochs ending at it. Of the four "
            f"searches' trials, {done}.")


def _cell(entry, digits, scale=1.0):
    if entry is None:
        return "—"
    sd = entry.get("sd")
    text = f"{entry['mean'] * scale:.{digits}f}"
    return text + (f" ± {sd * scale:.{digits}f}" if sd is not None else "") + \
        f" ({len(entry['seeds'])})"


def _cost_cell(cost):
    """Mean training minutes on one CPU thread; where some seeds ran on a GPU (a Laplace fit),
    over the CPU seeds alone, with the others named."""
    train_s = cost.get("train_s")
    text = "—" if train_s is None else f"{train_s / 60:.1f}"
    other = cost.get("other_devices")
    if other:
        n = len(cost.get("seeds", []))
        text += f" ({n} CPU run{'s' if n != 1 else ''}; " + "; ".join(
            f"{len(v)} on {k}" for k, v in other.items()) + ")"
    return text


def table_rows(summary, on="full", methods=None, cost=True):
    """Return (header, rows): per method (``methods``, default every method of the summary) the
    mean ± sd over its seeds (seed count in brackets) of each score on the full test sets
    (``on='full'``) or on the plan's subset; error in %; with ``cost`` the CPU runs' training
    minutes, training time against MAP's network of the same seeds, and prediction seconds for
    10,000 images (the subset's, scaled, for the all-layer rows)."""
    header = ["method", *(METRIC_LABELS[k] + (" (%)" if k == "test_error" else "")
                          for k in F.SCORES), "training min (1 thread)",
              "training time / MAP's (same seeds)", "prediction s / 10k images (1 thread)",
              "failed seeds", "choice at a grid edge"]
    if not cost:
        header = [h for h in header if "training" not in h and "prediction" not in h]
    failed = summary["status"]["failed"]
    rows = []
    for m in methods or F.METHODS:
        part = summary["table"].get(m, {}).get(on)
        bad = sorted(k.split(" seed ")[1] for k in failed if k.split(" seed ")[0] == m)
        if part is None and not bad:
            if on == "subset" or m not in F.ALL_LAYER:  # scored on this set: no run yet
                rows.append([LABELS[m], "no run yet", *["—"] * (len(header) - 2)])
            continue
        part = part or {}
        source = F.DEPENDS.get(m, m)
        c = A.chosen(source)
        edge = "—" if c is None else ", ".join(edges(source, c)) or "none"
        if c is not None and source != m and edge != "none":
            edge += f" ({LABELS[source]}'s)"
        c = summary.get("cost", {}).get(m, {})
        ratio, pred = c.get("train_ratio_to_map"), c.get("predict_s_10k")
        rows.append([LABELS[m], *(_cell(part.get(k), 2 if k == "test_error" else 4,
                                        100.0 if k == "test_error" else 1.0)
                                  for k in F.SCORES),
                     *([_cost_cell(c), "—" if ratio is None else f"{ratio:.1f}×",
                        "—" if pred is None else f"{pred:,.{1 if pred < 100 else 0}f}"]
                       if cost else []),
                     ", ".join(bad) or "none", edge])
    return header, rows


PAPER_SECTION = "section 5.1, Table 1"


def paper_text(summary):
    """Below Table 6.2: the paper's own MNIST test errors at this architecture (Blundell et al.
    2015, Table 1, 2×400 units; read from helpers.classification.PAPER_TABLE1, where notebook 01
    keeps them) beside ours, and where the paper's protocol is reproduced (notebook 01)."""
    from .classification import PAPER_TABLE1
    if summary is None:
        return ""
    t = summary["table"]
    H = A.H
    ours = lambda m: 100 * t[m]["full"]["test_error"]["mean"]  # noqa: E731
    paper = lambda k: 100 * PAPER_TABLE1[k][H]  # noqa: E731
    return (f"**The paper's numbers** ({PAPER_SECTION}: 784-{H}-{H}-10, 600 epochs). Test error: "
            f"BBB with the scale-mixture prior {paper('bbb_mixture'):.2f} %, dropout "
            f"{paper('dropout'):.2f} %, plain SGD {paper('sgd'):.2f} % (ours after at most "
            f"{A.MAX_EPOCHS} epochs: Table 6.2). The paper reports no NLL or OOD score. "
            "[Notebook 01](01_mnist_classification.ipynb) trains BBB under the paper's protocol "
            "and compares it with these numbers.")


BRIEF_SCORES = ("test_error", "nll", "brier", "ece", "auroc_entropy")


def brief_rows(summary, on="full", methods=None, cost=True):
    """(header, rows) of notebook 06's score tables: per method the mean ± sd over its seeds
    (seed count in brackets) of test error (%), NLL, Brier, ECE and OOD AUROC (entropy) on
    ``on`` ('full' or the plan's 'subset'), and with ``cost`` two cost columns, both on one CPU
    thread: training time relative to MAP's network of the same seeds, and seconds to predict
    10,000 images."""
    header = ["method", *(METRIC_LABELS[k] + (" (%)" if k == "test_error" else "")
                          for k in BRIEF_SCORES)] + (
        ["training time (× MAP's)", "predict 10k images (s)"] if cost else [])
    rows = []
    for m in methods or F.METHODS:
        part = summary["table"].get(m, {}).get(on)
        if part is None:
            if on == "subset" or m not in F.ALL_LAYER:
                rows.append([LABELS[m], "no run yet", *["—"] * (len(header) - 2)])
            continue
        ratio = summary.get("cost", {}).get(m, {}).get("train_ratio_to_map")
        pred = summary.get("cost", {}).get(m, {}).get("predict_s_10k")
        rows.append([LABELS[m] + PLAN_DELTA.get(m, ""), *(_cell(part.get(k), 2 if k == "test_error" else 4,
                                        100.0 if k == "test_error" else 1.0)
                                  for k in BRIEF_SCORES)]
                    + (["—" if ratio is None else f"{ratio:.1f}×",
                        "—" if pred is None else f"{pred:.1f}"] if cost else []))
    return header, rows


def cost_note(summary):
    """Below Table 6.2: what the cost columns measure (one CPU thread; the mean of per-seed
    ratios, each run timed apart, so machine load moves them: the ensemble's ratio against its
    member count shows how much) and that IVON's training time is not in the verdict, its cause
    unmeasured (``ivon_cost_text``: details)."""
    cost = (summary or {}).get("cost", {})
    ratio = cost.get("ivon", {}).get("train_ratio_to_map")
    ens = cost.get("ensemble", {}).get("train_ratio_to_map")
    k = A.ENSEMBLE_SIZE
    return ("*Cost*, timed on one CPU thread: training time against MAP's network of the same "
            "seed, averaged over the seeds (an ensemble counts all its members; a Laplace row, "
            "MAP's training plus the fit), and seconds to "
            "predict the 10,000 MNIST test images. A ratio moves with machine load"
            + (f" (the ensemble of {k} MAP networks shows {ens:.1f}×)"
               if ens is not None and abs(ens - k) >= 0.05 else "") + "."
            + (f" IVON's {ratio:.1f}× is unexplained ([details]({DETAILS_LINK}#ivons-cost)) "
               "and unused by the verdict." if ratio else ""))


# which prior precision the plan's Laplace rows used (Table 6.5 has both choices per fit)
PLAN_DELTA = {"laplace_ll_kron": ", marginal likelihood, one δ",
              "laplace_diag": ", marginal likelihood, one δ per tensor",
              "laplace_kron": ", marginal likelihood, one δ per tensor"}


def _claim_label(claim):
    lhs, rest = claim.split(" < ")
    rhs, metric = rest.split(" on ")
    return f"{LABELS[lhs]} < {LABELS[rhs]}", metric


def _rival(claim):
    """The method a claim "a < b on metric" compares BBB with."""
    lhs, rest = claim.split(" < ")
    return rest.split(" on ")[0] if lhs == "bbb" else lhs


def _worse_than_map(summary):
    """(Laplace rows whose mean subset NLL is above MAP's, {method: that NLL})."""
    sub = {m: t.get("subset", {}).get("nll", {}).get("mean") for m, t in summary["table"].items()}
    return [m for m in F.LAPLACE if sub.get(m) is not None and sub.get("map") is not None
            and sub[m] > sub["map"]], sub


def _favours(claim, tt):
    """Which side the mean paired difference of claim "a < b" favours: every claim is written so
    that a negative difference favours BBB (the side on the left of an NLL or ECE claim, on the
    right of an AUROC claim)."""
    if not tt or tt["mean_diff"] == 0:
        return "—"
    rival = _rival(claim)
    return "BBB" if tt["mean_diff"] < 0 else LABELS.get(rival, rival)


def test_rows(summary):
    """Return (header, rows): every claim of the plan with its seeds, the paired mean difference
    and its 95 % interval, Holm's p, the sign test's p, the Monte-Carlo sd of the difference and
    the verdict word."""
    header = ["family", "claim", "scored on", "seeds", "mean difference (a − b)",
              "95% interval (unadjusted)", "sd over seeds", "MC sd (one evaluation)",
              "the mean favours", "p (Holm)", "sign test p (unadjusted)", "verdict"]
    rows = []
    for family, claims in summary["families"].items():
        for claim, res in claims.items():
            label, _ = _claim_label(claim)
            tt, st = res.get("t_test"), res.get("sign_test")
            f = (lambda v: f"{v:+.4f}")
            if res.get("from"):
                family_label = f"{family} ({res['from']}, Holm over {res['family_size']})"
            else:
                family_label = family
            rows.append([
                family_label,
                label, "2,000-image subset" if res.get("on") == "subset" else "full sets",
                str(len(res.get("seeds", []))), f(tt["mean_diff"]) if tt else "—",
                f"[{f(tt['ci'][0])}, {f(tt['ci'][1])}]" if tt and tt["ci"] else "—",
                f"{tt['sd_diff']:.4f}" if tt and tt.get("sd_diff") is not None else "—",
                f"{res['mc_sd_of_difference']:.4f}"
                if res.get("mc_sd_of_difference") is not None else "—",
                _favours(claim, tt),
                f"{res['p_holm']:.3g}" if res.get("p_holm") is not None else "—",
                f"{st['p']:.3g}" if st else "—",
                res["verdict"] + (" (interim)" if summary["interim"] else "")])
    return header, rows


def status_text(summary, methods=None):
    """One paragraph: how many final runs of ``methods`` (default: all of plan v3's) exist and
    whether the verdicts are the plan's."""
    methods = list(methods or F.METHODS)
    n_all = len(methods) * len(A.REPORTED_SEEDS)
    st = summary["status"]
    missing = [x for x in st["missing"] if x.rsplit(" seed ", 1)[0] in methods]
    seeds = summary["seeds"]
    head = (f"**{summary['n_records']} of {n_all} final runs** are recorded (seeds "
            f"{', '.join(map(str, seeds)) or 'none'}).")
    problems = st.get("problems", [])
    if problems:
        head += (f" **{len(problems)} consistency check(s) failed**, so no verdict below is "
                 "the plan's: " + "; ".join(problems[:5]) + ("; …" if len(problems) > 5 else "")
                 + ".")
    if summary["interim"] and missing:
        return head + (" This is an **interim** analysis: the plan's verdicts need every "
                       "method on all ten seeds, so the words below are not yet the plan's "
                       "answer; each claim pairs only the seeds both of its sides have, and "
                       "each row's mean covers its own seeds (their number in brackets). "
                       f"Missing: {len(missing)} runs.")
    if problems:
        return head
    fails = st["failed"]
    return head + " Every planned run exists: these are the plan's verdicts" + (
        f"; failed runs (left out of their method's tests, as the plan says): "
        f"{', '.join(fails)}." if fails else "; no run failed.")


def answer_text(summary, subset_note=True):
    """The direct answer to the plan's question, from the verdicts (interim ones named so);
    ``subset_note``: say which claims compare on the plan's subset (notebook 06)."""
    out = []
    for family, claims in summary["families"].items():
        words = {}
        for claim, res in claims.items():
            words.setdefault(res["verdict"], []).append(LABELS[_rival(claim)])
        say = {"holds": "BBB better", "reversed": "BBB worse"}
        parts = [f"{say.get(v, v)} than {', '.join(names)}" if v in say else
                 f"{v} against {', '.join(names)}" for v, names in sorted(words.items())]
        out.append(f"- **{family}**: " + "; ".join(parts) + ".")
    lead = ("Interim reading (not the plan's verdict):" if summary["interim"]
            else "The plan's answer:")
    subset = [LABELS[m] for m in F.ALL_LAYER]
    return (lead + "\n\n" + "\n".join(out) + (
        f"\n\nThe claims on {' and '.join(subset)} compare on the plan's 2,000 + 2,000-image "
        "subset; the others on the full test sets." if subset_note else ""))


def search_text():
    """The one reading the search table's edge column does not give: whether the Bayesian
    methods' choices sit at the end of their grids with the least initial posterior
    uncertainty (read from the search records); searches still under way are named."""
    pending = [LABELS[m] for m in A.SEARCHES if A.chosen(m) is None]
    least = [(m, f"{REG_SHORT[k]} {_num(A.chosen(m)['config'][k])}")
             for m in LEAST_UNCERTAIN if A.chosen(m) is not None
             for k, side in LEAST_UNCERTAIN[m].items()
             if A.chosen(m)["config"][k] == side(A.SEARCHES[m]["grid"][k])]
    text = ""
    if least:
        short = lambda m: LABELS[m].split(" (")[0]  # noqa: E731
        many = len(least) > 1
        text = (_join([f"{short(m)}'s choice ({v})" if i == 0 else f"{short(m)}'s ({v})"
                       for i, (m, v) in enumerate(least)])
                + (" sit at the end of their grids" if many else " sits at the end of its grid")
                + " with the least initial posterior uncertainty: a wider grid could move "
                + ("them" if many else "it") + " further toward a deterministic network.")
    elif all(A.chosen(m) is not None for m in LEAST_UNCERTAIN):
        text = ("No Bayesian method's choice sits at the end of its grid with the least initial "
                "posterior uncertainty.")
    if pending:
        text += (" " if text else "") + f"Still searching: {_join(pending)}."
    return text


def per_seed_rows(summary, metric, on="full"):
    """Return (header, rows): ``metric`` of every method on every seed it has (failed or missing
    seeds show a dash), for reading the paired differences seed by seed."""
    seeds = summary["seeds"]
    header = ["method", *(f"seed {s}" for s in seeds)]
    rows = []
    scale, digits = (100.0, 2) if metric == "test_error" else (1.0, 4)
    for m in F.METHODS:
        entry = summary["table"].get(m, {}).get(on, {}).get(metric)
        if entry is None:
            continue
        vals = dict(zip(entry["seeds"], entry["per_seed"]))
        rows.append([LABELS[m], *(f"{vals[s] * scale:.{digits}f}" if s in vals else "—"
                                  for s in seeds)])
    return header, rows


def _ordinal(n):
    return f"{n}{'th' if 10 <= n % 100 <= 20 else {1: 'st', 2: 'nd', 3: 'rd'}.get(n % 10, 'th')}"


def standing_text(summary):
    """Where BBB stands so far among the methods scored on the full test sets: the best mean
    test NLL and AUROC, and BBB's rank on each (means over each method's own seeds)."""
    out = []
    for metric, label, better in (("nll", "test NLL", min), ("auroc_entropy", "AUROC", max)):
        means = {m: t["full"][metric]["mean"] for m, t in summary["table"].items()
                 if "full" in t and metric in t["full"]}
        if "bbb" not in means:
            return "BBB has no final run yet."
        order = sorted(means, key=means.get, reverse=better is max)
        best = order[0]
        out.append(f"{label}: best {LABELS[best]} ({means[best]:.4f}), BBB "
                   f"{_ordinal(order.index('bbb') + 1)} of the {len(order)} methods scored on "
                   f"the full sets ({means['bbb']:.4f})")
    n = {m: len(t["full"]["nll"]["seeds"]) for m, t in summary["table"].items() if "full" in t}
    lead = ("**Standing so far** (interim; means over each method's own seeds, "
            f"{min(n.values())}–{max(n.values())} per method; not a test): "
            if summary["interim"] else "**Standing** (means over the seeds; the tests are above): ")
    return lead + "; ".join(out) + "."


def hardware_text(recs=None, check_dir=None, code=True):
    """Where the final runs ran, read from their records: the CPU, and any Laplace fit made on a
    GPU (around MAP's CPU-trained network of its seed), with the check that rescored CPU runs on
    that GPU (``results/06_alternatives/v3/device_check``: the same network, the scores' largest
    differences)."""
    from .utils import results_dir
    recs = F.records() if recs is None else recs
    if not recs:
        return ""
    by = {}
    for (m, s), r in sorted(recs.items(), key=lambda kv: (F._device(kv[1]) != "cpu", kv[0])):
        mach = r.get("machine", {})
        where = (f"{mach.get('gpu')} (torch {mach.get('torch')})" if F._device(r) != "cpu"
                 else f"{mach.get('cpu')} ({mach.get('threads')} thread each, torch "
                 f"{mach.get('torch')})")
        by.setdefault(where, {}).setdefault(m, []).append(s)
    parts = []
    for where, runs in by.items():
        n = sum(len(v) for v in runs.values())
        if len(by) > 1 and any(F._device(recs[(m, v[0])]) != "cpu" for m, v in runs.items()):
            parts.append(f"{n} on {where}: " + "; ".join(
                f"{LABELS[m]} seeds {', '.join(map(str, v))}" for m, v in runs.items()))
        else:
            parts.append(f"{n} on {where}")
    text = "**Hardware.** The final runs ran " + " and ".join(parts) + "."
    gpu_runs = [(m, s) for (m, s), r in recs.items() if F._device(r) != "cpu"]
    if gpu_runs:
        match = all(recs[k].get("map_network") == (recs.get(("map", k[1])) or {}).get(
            "map_network") for k in gpu_runs)
        text += (" A fit on the GPU starts from MAP's network of its seed trained on the CPU ("
                 + ("every such record's network fingerprint equals MAP's" if match else
                    "**a record's network fingerprint differs from MAP's**")
                 + "); its seconds are left out of the training-minutes column.")
    check_dir = check_dir or results_dir() / A.NB / f"v{A.VERSION}" / "device_check"
    pairs = []
    for path in sorted(check_dir.glob("*.json")) if check_dir.exists() else []:
        gpu = json.loads(path.read_text())
        cpu = recs.get((gpu["method"], gpu["seed"]))
        if cpu is None or F._device(cpu) != "cpu":
            continue
        pairs.append((gpu, cpu))
    if pairs:
        same_net = all(g["map_network"] == c["map_network"] for g, c in pairs)
        diff = {k: max(abs(g["subset"][k] - c["subset"][k]) for g, c in pairs)
                for k in ("test_error", "nll", "auroc_entropy", "auroc_mi")}
        text += (f" A check rescored {len(pairs)} CPU runs ("
                 + ", ".join(f"{LABELS[g['method']]} seed {g['seed']}" for g, _ in pairs)
                 + ") on the GPU: " + ("the same network; " if same_net else
                                      "**another network**; ")
                 + f"largest differences: test error {diff['test_error'] * 100:.2g} pp, NLL "
                 f"{diff['nll']:.1g}, AUROC (entropy) {diff['auroc_entropy']:.1g}, AUROC (MI) "
                 f"{diff['auroc_mi']:.1g} (the MI draws its predictive samples from the "
                 "device's own random stream)")
        codes = {} if not code else {(g["code"]["commit"] or "?")[:7] + (" with uncommitted changes"
                                                     if g["code"]["dirty"] else "")
                 for g, _ in pairs}
        text += ("; the check's records name code " + ", ".join(sorted(codes)) + "."
                 if codes else ".")
    return text


V3_LEAD = "Version 3 (section 7: the same search for every method it trains"


def takeaway_text(summary, lead=V3_LEAD, ps=None):
    """The first takeaway of notebook 06 (``lead``: of notebook 05): the plan's answer in one
    bullet (interim until every run exists), from the summary's verdicts; with ``ps`` (section
    7's prior-precision check) what the last-layer Laplace verdicts become under the other priors."""
    name = lead.split(" (")[0]
    if summary is None:
        return f"- {name} has no final run yet."
    if summary["interim"]:
        return (f"- {name}'s runs are not complete, so its words are interim (its standing is "
                "rendered above).")
    out = []
    for family, claims in summary["families"].items():
        better, worse = [], []
        for claim, res in claims.items():
            {"holds": better, "reversed": worse}.get(res["verdict"], []).append(
                LABELS[_rival(claim)])
        n = len(claims)
        out.append(f"on {family} BBB is better than {len(better)} of {n} rivals"
                   + (f" ({', '.join(better)})" if better else "")
                   + f" and worse than {len(worse)}" + (f" ({', '.join(worse)})" if worse else "")
                   + ", the rest not resolved")
    text = (f"- {lead}, {len(summary['seeds'])} paired seeds, two-sided tests with Holm's "
            "correction): "
            + "; ".join(out) + ".")
    # a win over a rival that scores worse than the network it wraps says little about BBB
    worse, sub = _worse_than_map(summary)
    map_claim = summary["families"].get("test NLL", {}).get("bbb < map on nll")
    if worse and map_claim:
        text += ("\n- The NLL wins over " + ", ".join(LABELS[m] for m in worse)
                 + " are over fits whose NLL is higher than that of the MAP network they wrap "
                 f"(on the subset: " + ", ".join(f"{sub[m]:.4f}" for m in worse)
                 + f" against MAP's {sub['map']:.4f}); against MAP itself BBB's NLL is "
                 + ("better" if map_claim["verdict"] == "holds" else "worse"
                    if map_claim["verdict"] == "reversed" else map_claim["verdict"])
                 + f" (Holm p {map_claim['p_holm']:.2g}).")
    if ps:
        from . import laplace_prior_check as P
        other = [k for k in P.SETTINGS if k != "marglik"]
        w = {k: {c: ps["settings"][k]["tests"][c]["verdict"] for c in P.CLAIMS}
             for k in P.SETTINGS}
        text += (" A check after the plan's numbers (not a plan verdict; section 7's last "
                 "table) sets last-layer Laplace's prior precision by "
                 + " or by ".join(P.LABELS[k] for k in other) + " instead: \"BBB better on "
                 "NLL\" is then "
                 + "; ".join(f"{w[k][P.CLAIMS[0]]} ({P.LABELS[k]})" for k in other)
                 + ", \"BBB better on AUROC\" " + "; ".join(
                     f"{w[k][P.CLAIMS[1]]} ({P.LABELS[k]})" for k in other) + ".")
    return text


def answer_line(summary):
    """The section's answer as short bullets, from the plan's verdicts and the cost columns:
    whom BBB loses to, whom it beats (and whether those rivals score worse than MAP's own
    network), where ten seeds do not separate it, and its training time."""
    if summary is None or summary["interim"]:
        return ""
    by = {"holds": {}, "reversed": {}}
    unresolved, open_on = set(), {}
    for family, claims in summary["families"].items():
        short = "NLL" if "NLL" in family else "AUROC"
        for claim, res in claims.items():
            rival = LABELS[_rival(claim)]
            if res["verdict"] in by:
                by[res["verdict"]].setdefault(short, []).append(rival)
            else:
                unresolved.add(rival)
                open_on.setdefault(short, []).append(rival)
    worse, sub = _worse_than_map(summary)
    worse_than_map = {LABELS[m] for m in worse}
    where = {"NLL": "test NLL", "AUROC": "OOD AUROC"}
    lose = [f"{_join(v)} on {where[k]}" for k, v in by["reversed"].items()]
    lose = ", and to ".join(lose)
    wins = [f"on {where[k]} over {_join(v)}" + (
        " (fits that score worse than MAP itself)"
        if k == "NLL" and all(x in worse_than_map for x in v) else "")
        for k, v in by["holds"].items()]
    resolved = {x for d in by.values() for v in d.values() for x in v}
    rest = sorted(unresolved - resolved)
    out = ["**Answer (version 3).** " + ("BBB does not lead this comparison." if lose
                                        else "BBB loses to no rival."), ""]
    if lose:
        out.append(f"- It loses to {lose}.")
    out.append("- Its wins (claims that hold): " + ", and ".join(wins) + "." if wins
               else "- It has no win (no claim holds).")
    beaten = [m for m in worse if LABELS[m] in by["holds"].get("NLL", [])]
    if beaten and "map" in sub:
        out.append(f"- Mean test NLL of {'those fits' if len(beaten) > 1 else 'that fit'} on the "
                   "subset: " + _join([f"{sub[m]:.4f}" for m in beaten])
                   + f", against MAP's {sub['map']:.4f}.")
    map_nll = summary["families"].get("test NLL", {}).get("bbb < map on nll")
    said_map = bool(map_nll and map_nll["verdict"] not in by and map_nll.get("p_holm") is not None)
    if said_map:
        out.append(f"- Against MAP itself, the NLL claim is {map_nll['verdict']} "
                   f"(Holm p {map_nll['p_holm']:.2g}).")
    if rest:
        out.append(f"- Against {_join(rest)}, ten seeds do not separate it on either score.")
    for k, v in open_on.items():
        others = [x for x in v if x not in rest and not (k == "NLL" and x == "MAP" and said_map)]
        if others:
            out.append(f"- On {where[k]}, ten seeds do not separate it from {_join(others)}.")
    ratio = summary.get("cost", {}).get("bbb", {}).get("train_ratio_to_map")
    if ratio:
        out.append(f"- It trains {ratio:.1f}× as long as MAP (same seeds, one CPU thread).")
    return "\n".join(out)


def underconfidence(error, ece):
    """How far below its accuracy a predictive's mean confidence must lie, at least, given only
    its error rate and its binned ECE (both fractions, on the same images and bins): no bin can be
    over-confident by more than its own error rate, so the over-confident bins add at most
    ``error`` to the ECE, the under-confident ones at least ``ece - error``, and the mean
    confidence is at most accuracy - (ece - 2 error). Positive: under-confident on average, by at
    least that much; zero or negative: the two numbers do not tell the direction."""
    return ece - 2 * error


from .report import and_list as _join  # noqa: E402  'a, b and c'


def laplace_note(summary):
    """The all-layer Laplace rows on the subset, as short bullets: their error rates beside
    MAP's, their ECE, and where that ECE exceeds twice the error rate, the under-confidence it
    implies (``underconfidence``); then which row detects Fashion-MNIST best on the subset."""
    t = summary["table"]
    if any("subset" not in t.get(m, {}) for m in ("map", *F.ALL_LAYER)):
        return ""
    get = lambda m, k: t[m]["subset"][k]["mean"]  # noqa: E731
    names = _join([LABELS[m] for m in F.ALL_LAYER])
    n = min(len(t[m]["subset"]["ece"]["seeds"]) for m in F.ALL_LAYER)
    gap = {m: underconfidence(get(m, "test_error"), get(m, "ece")) for m in F.ALL_LAYER}
    under = [m for m in F.ALL_LAYER if gap[m] > 0]
    rest = [m for m in F.ALL_LAYER if m not in under]
    out = [f"**The all-layer Laplace fits** ({names}; subset table, means over {n} seeds):", "",
           "- Error: " + _join([f"{100 * get(m, 'test_error'):.2f} %" for m in F.ALL_LAYER])
           + f" (MAP {100 * get('map', 'test_error'):.2f} %); ECE: "
           + _join([f"{get(m, 'ece'):.3f}" for m in F.ALL_LAYER])
           + f" (MAP {get('map', 'ece'):.3f})."]
    if under:
        pl = len(under) > 1
        who = ("Both fits' ECE is" if len(under) == len(F.ALL_LAYER) > 1 else
               f"The ECE of {_join([LABELS[m] for m in under])} is")
        out.append(f"- {who} more than twice {'their' if pl else 'its'} error rate. "
                   "A bin can be over-confident by at "
                   "most its own error rate, so only under-confidence gives such an ECE: "
                   f"{'their' if pl else 'its'} mean confidence lies at least "
                   + _join([f"{gap[m]:.3f}" for m in under]) + " below the accuracy.")
        out.append(f"- {'Their' if pl else 'Its'} NLL above MAP's therefore comes with this "
                   "under-confidence (the linearised predictive with the marginal-likelihood "
                   "prior), not only with errors.")
    if rest:
        out.append(f"- For {_join([LABELS[m] for m in rest])} the ECE is at most twice the error "
                   "rate, so it does not tell on which side of the diagonal the predictive "
                   "misses.")
    best = _best_auroc_note(summary)
    if best:
        out.append("- " + best)
    return "\n".join(out)


def _best_auroc_note(summary):
    """Which row detects Fashion-MNIST best on the subset, with its prediction cost."""
    t = summary["table"]
    au = {m: x["subset"]["auroc_entropy"]["mean"] for m, x in t.items()
          if "subset" in x and "auroc_entropy" in x["subset"]}
    best = max(au, key=au.get)
    if best not in F.ALL_LAYER:
        return ""
    cost = summary.get("cost", {})
    pb, pr = (cost.get(m, {}).get("predict_s_10k") for m in ("bbb", best))
    text = (f"{LABELS[best]} has the highest AUROC on the subset ({au[best]:.3f}; BBB "
            f"{au['bbb']:.3f})")
    if pb and pr:
        text += (f", at {pr:,.0f} s per 10,000 predictions on one CPU thread "
                 f"({pr / pb:,.0f}× BBB's)")
    return text + "."


def load_v1():
    """Version 1's summary (results/06_alternatives/summary.json), or None."""
    from .utils import results_dir
    path = results_dir() / A.NB / "summary.json"
    return json.loads(path.read_text()) if path.exists() else None


def load_v1_searches(v1=None):
    """Version 1's search records by method (None where absent): MAP's search and IVON's tuning
    (this notebook, ``helpers.alternatives.load_searches``), MC dropout's (notebook 05) and
    BBB's (notebook 01), whose choices version 1 reused."""
    from .sweep import load_sweep
    out = dict(ALT.load_searches())
    width = ((v1 or {}).get("config") or {}).get("H", 400)
    for m, (name, nb) in {"mc_dropout": ("mc_dropout_mnist", "05_uncertainty"),
                          "bbb": (f"bbb_mixture_h{width}", "01_mnist_classification")}.items():
        try:
            out[m] = load_sweep(name, nb)
        except FileNotFoundError:
            out[m] = None
    return out


SETTING_WORDS = (("dropout", "dropout {}"), ("lr", "learning rate {}"),
                 ("lr_decay", "learning-rate decay per epoch {}"),
                 ("weight_decay", "weight decay {}"), ("epochs", "{} epochs"))


def _setting_changes(old, new):
    """'dropout 0.25 → 0.4; ...' for the settings that differ (a decay of 1: 'none')."""
    out = []
    for key, words in SETTING_WORDS:
        a, b = old.get(key), new.get(key)
        if key == "lr_decay":
            a, b = (1.0 if x is None else x for x in (a, b))
        if a is None or b is None or a == b:
            continue
        show = lambda v: ("none" if key == "lr_decay" and v == 1 else f"{v:g}")  # noqa: E731
        out.append(words.format(f"{show(a)} → {show(b)}"))
    return "; ".join(out)


def _v1_search_facts(searches):
    """(trial counts, epoch caps, early stopping in any, a learning-rate decay searched in any)
    of version 1's search records."""
    trials, caps, early, decay = [], [], False, False
    for m, rec in searches.items():
        if not rec:
            continue
        cfg = rec.get("config", {})
        if m == "ivon":
            trials.append(len(cfg.get("grid", [])))
            caps.append(cfg.get("epochs"))
            continue
        trials.append(len(rec.get("metrics", {}).get("trials", [])))
        caps.append(cfg.get("max_epochs"))
        early |= bool((cfg.get("scheduler") or {}).get("name"))
        decay |= any(v != 1 for v in cfg.get("space", {}).get("grid", {}).get("lr_decay", [1]))
    return trials, [c for c in caps if c], early, decay


def _span(values):
    lo, hi = min(values), max(values)
    return f"{lo}" if lo == hi else f"{lo}–{hi}"


def version1_text(summary, v1=None, searches=None, recs=None):
    """The takeaway on version 1 against version 3, as a description (no test compares the
    versions): the two largest changes (MC dropout's AUROC, with its rank among the working
    methods, and last-layer Laplace's ECE), then what changed between the versions: the seeds,
    the searches (version 1's search records against plan v3), MC dropout's chosen setting and
    the MAP networks under the Laplace fit (version 1's summary against version 3's final
    records). It names no cause."""
    v1 = load_v1() if v1 is None else v1
    if not v1 or summary is None:
        return ""
    r1 = {x["method"]: x for x in ALT.working(v1)}
    full = {m: x["full"] for m, x in summary["table"].items() if "full" in x}
    moved = {}
    if "mc_dropout" in r1 and "mc_dropout" in full:
        a1 = {m: r["auroc_entropy"]["mean"] for m, r in r1.items()}
        a3 = {m: x["auroc_entropy"]["mean"] for m, x in full.items()}
        rank = lambda a: ("the highest" if max(a, key=a.get) == "mc_dropout" else  # noqa: E731
                          "the lowest" if min(a, key=a.get) == "mc_dropout" else None)
        text = f"MC dropout's AUROC: {a1['mc_dropout']:.3f} in version 1"
        if rank(a1) and rank(a3) and rank(a1) != rank(a3):
            text += (f" ({rank(a1)} of its working methods), {a3['mc_dropout']:.3f} in version 3"
                     f" ({rank(a3)} on the full test sets)")
        else:
            text += f", {a3['mc_dropout']:.3f} in version 3"
        moved["mc_dropout"] = text
    ll = "laplace_ll_kron"
    if ll in r1 and ll in full:
        moved[ll] = (f"Last-layer Laplace's ECE: {r1[ll]['ece']['mean']:.4f} in version 1, "
                     f"{full[ll]['ece']['mean']:.4f} in version 3")
    if not moved:
        return ""
    out = ["- **Version 1 against version 3** (a description: no test compares the versions, "
           "and much changed between them, so what moved these numbers is not known)."]
    out += [f"  - {x}." for x in moved.values()]
    seeds1 = v1.get("config", {}).get("seeds") or []
    seeds3 = summary.get("seeds") or []
    searches = load_v1_searches(v1) if searches is None else searches
    trials, caps, early, decay = _v1_search_facts(searches)
    if seeds1 and seeds3 and list(seeds1) != list(seeds3):
        out.append(f"  - Seeds: {_span(seeds1)} → {_span(seeds3)}.")
    if trials:
        was = ", ".join([f"{_span(trials)} trials per method"]
                        + ([f"epoch caps of {_span(caps)}"] if caps else [])
                        + (["early stopping in some"] if early else [])
                        + (["a learning-rate decay among the settings"] if decay else []))
        by_error = [LABELS[m].split(" (")[0] for m, rec in searches.items()
                    if rec and (rec.get("config") or {}).get("metric") == "val_error"]
        out.append(f"  - Searches. Version 1: {was}"
                   + (f"; {_join(by_error)}'s chosen by validation error" if by_error else "")
                   + f". Version 3: {A.TRIALS} trials each, {A.MAX_EPOCHS} epochs, no early "
                   "stopping, a constant learning rate, every choice by validation NLL, other "
                   "grids.")
    recs = F.records() if recs is None else recs
    first = seeds3[0] if seeds3 else None
    new = lambda m: (recs.get((m, first)) or {}).get("setting") or {}  # noqa: E731
    sw = (searches.get("mc_dropout") or {}).get("metrics", {}).get("chosen")
    if "mc_dropout" in moved and sw and new("mc_dropout"):
        diff = _setting_changes({**sw["config"], "epochs": sw["epochs"]}, new("mc_dropout"))
        own = ((searches.get("mc_dropout") or {}).get("config") or {}).get("metric")
        if diff:
            out.append("  - MC dropout's chosen setting"
                       + (" (in both versions from its own validation-NLL search)"
                          if own == "val_nll" else "") + f": {diff}.")
    old_map = v1.get("config", {}).get("chosen", {}).get("map")
    if ll in moved and old_map and new("map"):
        diff = _setting_changes(old_map, new("map"))
        if diff:
            out.append(f"  - MAP's chosen setting, under the Laplace fit: {diff}.")
    return "\n".join(out)


def robustness_text(summary, skip=(), nb05=None, brief=False):
    """Whether any verdict rests on one draw of the predictive's samples: the claims retested
    with every sampling method scored with each extra predictive seed (``mc_robustness``);
    claims against a rival in ``skip`` (failed fits: no verdict) are left out, and those
    notebook 05 tests (``IN_NOTEBOOK_05``) are read from its summary ``nb05`` (its own check;
    left out without it)."""
    theirs = (nb05 or {}).get("mc_robustness") or {}
    rob = {f: {c: (theirs.get(f, {}).get(c) if (f, _rival(c)) in IN_NOTEBOOK_05 else e)
               for c, e in claims.items() if _rival(c) not in skip}
           for f, claims in (summary.get("mc_robustness") or {}).items()}
    rob = {f: {c: e for c, e in cl.items() if e} for f, cl in rob.items()}
    rob = {f: c for f, c in rob.items() if c}
    if not rob:
        return ""
    n = len(next(iter(next(iter(rob.values())).values()))["verdicts"])
    changed, close, low = [], [], []
    total = 0
    for family, claims in rob.items():
        for claim, e in claims.items():
            total += 1
            in05 = (family, _rival(claim)) in IN_NOTEBOOK_05
            main = (nb05["families"][family][claim] if in05 else
                    summary["families"][family][claim])
            label = f"BBB vs {SHORT[_rival(claim)]}"
            where = "; tested in notebook 05" if in05 else ""
            fam_name = SCORE_OF.get(family, (None, family))[1]
            if any(v != main["verdict"] for v in e["verdicts"]):
                word = lambda v: WORDS.get(v, v)  # noqa: E731
                changed.append(f"{label} ({fam_name}{where}): {word(main['verdict'])} → "
                               + ", ".join(word(v) for v in e["verdicts"]))
            elif main["verdict"] in WORDS and is_near(main.get("p_holm"), e["p_holm"]):
                word = WORDS[main["verdict"]]
                close.append(f"{label} ({fam_name}, {word}{where}): "
                             + near_label(main["p_holm"], e["p_holm"]).split(": near")[0])
            elif main["verdict"] not in WORDS and is_near(None, e["p_holm"]):
                low.append(f"{label} ({fam_name}): Holm p {main['p_holm']:.3f}; "
                           f"{min(e['p_holm']):.3f}–{max(e['p_holm']):.3f} under the other draws")
    text = ("**Does a verdict rest on one draw of the samples?** BBB, MC dropout and IVON "
            "predict by averaging over random draws of their weights (or dropout masks). Scored "
            f"again with {n} other sets of such draws on every seed, "
            + (f"{total - len(changed)} of {total} verdicts stay the same under all {n}"
               if changed else f"every one of the {total} verdicts stays the same"))
    text += (": changed: " + "; ".join(changed) + "." if changed else ".")
    if brief:  # the notebook: one sentence; the question and each claim's Holm p: docs/
        return (f"**Other draws.** Scored again with {n} other draws of the predictive samples "
                "(BBB, MC dropout, IVON), "
                + (f"{total - len(changed)} of {total} verdicts stay the same: changed: "
                   + "; ".join(changed) if changed else f"all {total} verdicts stay the same")
                + f" ([each claim's Holm p]({DETAILS_LINK}#sampling-draws)).")
    if close:
        text += ("\n\nNear the threshold (as defined under Terms):\n\n"
                 + "\n".join(f"- {x}." for x in close))
    if low:
        text += ("\n\nNot resolved in the test or under any other draw, though some draws "
                 f"give a Holm p under {NEAR[1]:g} (a verdict needs one under 0.05): "
                 + "; ".join(low) + ".")
    return text


def _mc_cell(ps, k, claim):
    mc = (ps["settings"][k].get("mc") or {}).get(claim)
    if not mc:
        return "—"
    main = ps["settings"][k]["tests"][claim]["verdict"]
    same = all(v == main for v in mc["verdicts"])
    return ("same" if same else ", ".join(mc["verdicts"])) + \
        f" (Holm p {min(mc['p_holm']):.2g}–{max(mc['p_holm']):.2g})"


def _check_failed(ps, summary):
    """{setting: (fit − MAP paired t-result over the seeds, ``nll_status``: 'failed', 'equal'
    or 'below')} of the prior-precision check, on the full test sets (MAP's per-seed NLL from
    the plan's summary)."""
    from . import laplace_prior_check as P
    from .stats import paired_t
    mp = summary["table"]["map"]["full"]["nll"]
    pm = dict(zip(mp["seeds"], mp["per_seed"]))
    out = {}
    for k in P.SETTINGS:
        x = ps["settings"][k]
        per = x.get("per_seed", {}).get("nll")
        d = None
        if per is not None:
            pairs = [(v, pm[s]) for s, v in zip(ps["seeds"], per) if s in pm]
            d = paired_t([a for a, _ in pairs], [b for _, b in pairs]) if len(pairs) > 1 else None
        out[k] = (d, nll_status(d, x["mean"]["nll"], mp["mean"]))
    return out


def prior_check_rows(ps, summary):
    """(header, rows) of the last-layer Laplace prior-precision check: per setting its prior
    precision (median over seeds; the top of the grid search's range marked), mean test NLL,
    the paired difference fit − MAP with its 95 % interval, ECE, AUROC, BBB − it on both scores
    (95 % intervals, the plan's tests applied) and the outcome: a failed fit (``FIT_RULE``)
    gets no verdict; a fit equal to MAP on NLL is marked so."""
    from . import laplace_prior_check as P
    header = ["prior precision set by", "prior precision (median over seeds)", "test NLL",
              "fit − MAP, NLL [95 % interval]", "ECE", "AUROC (entropy)",
              "BBB − it, NLL [95 % interval]", "BBB − it, AUROC [95 % interval]", "outcome"]
    top = 10.0 ** P.GRID["log_prior_prec_max"]
    bad = _check_failed(ps, summary)
    rows = []
    for k in P.SETTINGS:
        x = ps["settings"][k]
        t = x["tests"]
        med = statistics.median_low(x["prior_precision"])
        d, status = bad[k]
        cells = []
        for c, sign, dig in ((P.CLAIMS[0], 1.0, 4), (P.CLAIMS[1], -1.0, 3)):
            tt = t[c].get("t_test") or {}
            if tt.get("ci"):
                lo, hi = sorted(sign * v for v in tt["ci"])
                cells.append(f"{_fmt(sign * tt['mean_diff'], dig)} [{_fmt(lo, dig)}, "
                             f"{_fmt(hi, dig)}]")
            else:
                cells.append("—")
        if status == "failed":
            outcome = FAILED_FIT
        else:
            outcome = ("indistinguishable from MAP on NLL; " if status == "equal" else "") + "; ".join(
                f"{what}: {WORDS.get(t[c]['verdict'], t[c]['verdict'])}"
                for c, what in zip(P.CLAIMS, ("NLL", "AUROC")))
        rows.append([P.LABELS[k], f"{med:.3g}" + (" (top of the range)"
                                                  if k == "gridsearch_val" and med >= top * (1 - 1e-6)
                                                  else ""),
                     f"{x['mean']['nll']:.4f}",
                     f"{_fmt(d['mean_diff'], 5)} [{_fmt(d['ci'][0], 5)}, {_fmt(d['ci'][1], 5)}]"
                     if d and d.get("ci") else "—",
                     f"{x['mean']['ece']:.4f}", f"{x['mean']['auroc_entropy']:.4f}", *cells,
                     outcome])
    return header, rows


def prior_check_text(ps, summary):
    """What the prior-precision check shows, as short bullets: how the prior precision trades
    the row's AUROC against its NLL, where the largest precision leaves it (at MAP), how often
    the validation grid search hit the top of its range, which settings leave the fit worse than
    MAP on NLL (failed fits, no outcome drawn), the outcomes of the plan's test applied to the
    others and what BBB's extra sampling seeds change there, and whether the plan's own row is
    reproduced."""
    from . import laplace_prior_check as P
    if not ps or not ps["seeds"]:
        return "No record yet: run `python tools/laplace_prior_check.py run`."
    st = ps["settings"]
    n = len(ps["seeds"])
    mp = {k: summary["table"]["map"]["full"][k]["mean"] for k in ("nll", "auroc_entropy")}
    med = {k: statistics.median_low(st[k]["prior_precision"]) for k in P.SETTINGS}
    order = sorted(P.SETTINGS, key=med.get)
    trail = lambda key, d: " → ".join(f"{st[k]['mean'][key]:.{d}f}" for k in order)  # noqa: E731
    au, nl = [st[k]["mean"]["auroc_entropy"] for k in order], [st[k]["mean"]["nll"] for k in order]
    move = lambda v, up, down: (up if v[-1] > v[0] else down)  # noqa: E731
    out = [f"**What the check shows** ({n} seeds; the prior precisions are medians over seeds):",
           "",
           "- From the smallest prior precision to the largest ("
           + " → ".join(f"{med[k]:.3g}" for k in order) + ") the row's NLL "
           + move(nl, "worsens", "improves") + f" ({trail('nll', 4)}) while its AUROC "
           + move(au, "rises", "falls") + f" ({trail('auroc_entropy', 3)}).",
           f"- For comparison, MAP's own network: AUROC {mp['auroc_entropy']:.3f}, NLL "
           f"{mp['nll']:.4f}."]
    top = 10.0 ** P.GRID["log_prior_prec_max"]
    at_top = sum(v >= top * (1 - 1e-6) for v in st["gridsearch_val"]["prior_precision"])
    if at_top:
        out.append(f"- The validation grid search chose the top of its range ({top:.0e}) on "
                   f"{at_top} of {n} seeds: the validation NLL keeps falling toward MAP's.")
    bad = _check_failed(ps, summary)
    failed = [k for k in P.SETTINGS if bad[k][1] == "failed"]
    ok = [k for k in P.SETTINGS if bad[k][1] != "failed"]
    if failed:
        out.append("- " + ("Under every setting tried" if not ok else
                           "With the precision set by " + _join([P.LABELS[k] for k in failed]))
                   + " the interval of fit − MAP lies above zero: "
                   + ("failed fits, so no comparison with BBB is drawn from them."
                      if len(failed) > 1 else "a failed fit, so no comparison with BBB is "
                      "drawn from it."))
    for k in ok:
        words = [f"{what} {WORDS.get(st[k]['tests'][c]['verdict'], st[k]['tests'][c]['verdict'])}"
                 for c, what in zip(P.CLAIMS, ("NLL:", "AUROC:"))]
        shaky = [what for c, what in zip(P.CLAIMS, ("NLL", "AUROC"))
                 if (st[k].get("mc") or {}).get(c) and any(
                     v != st[k]["tests"][c]["verdict"] for v in st[k]["mc"][c]["verdicts"])]
        out.append(f"- With the precision set by {P.LABELS[k]}, "
                   + ("the fit is *indistinguishable from MAP* on NLL (the interval of fit − MAP contains "
                      "zero: in effect MAP's network), and " if bad[k][1] == "equal" else "")
                   + "the plan's test applied gives "
                   + "; ".join(words) + (f" (BBB's extra sampling seeds change the {_join(shaky)}"
                                         " outcome: read it as not resolved)" if shaky else "")
                   + ".")
    same = ps.get("marglik_reproduces_plan") or {}
    if same.get("nll") is not None:
        exact = same["nll"] == 0 and same.get("auroc_entropy") == 0
        out.append("- The marginal-likelihood row reproduces the plan's own records"
                   + (" exactly." if exact else
                      f" (largest difference: NLL {same['nll']:.1g}, AUROC (entropy) "
                      f"{same.get('auroc_entropy', float('nan')):.1g})."))
    return "\n".join(out)


def load_prior_check():
    """results/06_alternatives/v3/laplace_prior/summary.json, or None before its analysis."""
    from .laplace_prior_check import summary_path
    path = summary_path()
    return json.loads(path.read_text()) if path.exists() else None


def laplace_vs_map_text(summary, method="laplace_ll_kron"):
    """Why section 7's prior-precision check is made, from the full-set NLLs: the last-layer
    Laplace row's mean test NLL against that of the MAP networks it wraps, seed by seed (a
    comparison of means; the plan tests BBB against each rival, not this pair), and what sets
    the uncertainty the fit adds."""
    t = summary["table"]
    try:
        a, b = t[method]["full"]["nll"], t["map"]["full"]["nll"]
    except KeyError:
        return ""
    pa, pb = dict(zip(a["seeds"], a["per_seed"])), dict(zip(b["seeds"], b["per_seed"]))
    seeds = sorted(set(pa) & set(pb))
    up = sum(pa[s] > pb[s] for s in seeds)
    word = ("higher than" if a["mean"] > b["mean"] else "lower than" if a["mean"] < b["mean"]
            else "equal to")
    return (f"**Why check.** The last-layer Laplace fit adds uncertainty around MAP's network. "
            f"Its mean test NLL ({a['mean']:.4f}) is {word} that of the MAP networks it wraps "
            f"({b['mean']:.4f}), and higher on {up} of {len(seeds)} paired seeds (full test "
            "sets; a comparison of means, not one of the plan's tests). How much uncertainty the "
            "fit adds is set by its prior precision, so the check below scores the same fits "
            "under two other prior precisions.")


def subset_ece_text(summary, fair=None):
    """Whether the binned ECE on the plan's subset comes out larger than on the full test sets,
    per method of Tables 6.2 and 6.4 scored on both (means over the seeds) and over every
    method-seed pair; then, with ``fair``, the plan's all-layer fits, which Table 6.5 rescores
    on the full test sets (unchanged fits): whether their ECE is larger there instead."""
    t = summary["table"]
    both = [m for m in F.METHODS if {"full", "subset"} <= set(t.get(m, {}))
            and "ece" in t[m]["full"] and "ece" in t[m]["subset"]]
    if not both:
        return ""
    e = lambda m, on: t[m][on]["ece"]  # noqa: E731
    larger = [m for m in both if e(m, "subset")["mean"] > e(m, "full")["mean"]]
    pairs = up = 0
    for m in both:
        full = dict(zip(e(m, "full")["seeds"], e(m, "full")["per_seed"]))
        sub = dict(zip(e(m, "subset")["seeds"], e(m, "subset")["per_seed"]))
        for s in set(full) & set(sub):
            pairs += 1
            up += sub[s] > full[s]
    size = A.LAPLACE["all_layer_subset"]["test"]
    who = (f"for every method in Tables 6.2 and 6.4 ({len(larger)} of {len(both)})"
           if len(larger) == len(both) else
           f"for none of the {len(both)} methods in Tables 6.2 and 6.4" if not larger else
           f"for {len(larger)} of the {len(both)} methods in Tables 6.2 and 6.4 (not for "
           + _join([LABELS[m] for m in both if m not in larger]) + ")")
    text = (f"**ECE on the subset.** On the {size:,}-image subset the binned ECE comes out "
            f"larger than on the full test sets {who}, and on {up} of {pairs} method-seed pairs. "
            "That is expected: each bin's accuracy is estimated from fewer images, and the gap "
            "|accuracy − confidence| grows with that sampling noise, so the binned ECE is biased "
            "upward on fewer images.")
    if fair and fair.get("flavours"):
        rest = [(m, fair["flavours"][m]["marglik_layerwise"]["mean"]["full"]["ece"],
                 t[m]["subset"]["ece"]["mean"]) for m in fair["flavours"]
                if m not in both and "ece" in t.get(m, {}).get("subset", {})
                and "ece" in fair["flavours"][m]["marglik_layerwise"]["mean"].get("full", {})]
        lower = [x for x in rest if x[1] >= x[2]]
        if lower:
            text += (" The exception: " + _join([SHORT[m] for m, _, _ in lower])
                     + ", rescored on the full test sets in Table 6.5, score a larger ECE there ("
                     + _join([f"{a:.3f} against {b:.3f}" for _, a, b in lower])
                     + "): their ECE comes from under-confidence (below), not from bin noise.")
    return text + " Compare ECE only within one table."


def laplace_takeaway(summary, v1=None):
    """The takeaway on all-layer Laplace: version 1's rows, which sampled weights through the
    network (``helpers.alternatives.stale_laplace_rows``), against version 3's linearised ones on
    the subset (error rates beside MAP's), and whether their ECE implies under-confidence
    (``underconfidence``; the numbers are in section 7's subset reading)."""
    t = summary["table"] if summary else {}
    sub = {m: t[m]["subset"] for m in ("map", *F.ALL_LAYER) if "subset" in t.get(m, {})}
    failed = []
    if v1:
        rows = {r["method"]: r for r in v1["metrics"]["rows"]}
        stale = {r["method"] for r in ALT.stale_laplace_rows(v1)}
        failed = [m for m in F.ALL_LAYER if m in rows and m in stale
                  and rows[m]["test_error"]["mean"] >= 0.5]
    if not all(m in sub for m in ("map", *F.ALL_LAYER)):
        return ""
    get = lambda m, k: sub[m][k]["mean"]  # noqa: E731
    works = all(get(m, "test_error") < 0.5 for m in F.ALL_LAYER)
    errs = _join([f"{100 * get(m, 'test_error'):.2f} %" for m in F.ALL_LAYER])
    mp = f"MAP {100 * get('map', 'test_error'):.2f} %"
    if failed and works:
        text = ("- **All-layer Laplace.** With weights sampled through the whole network "
                "(version 1) the fits erred on "
                + _join([f"{100 * rows[m]['test_error']['mean']:.0f} %" for m in failed])
                + f" of the test digits. With the linearised predictive (version 3) they err on "
                f"{errs} of the subset ({mp}). The MAP networks underneath differ between the "
                "versions, so this is no same-network comparison; it is consistent with "
                "[Immer et al. (2021)](https://arxiv.org/abs/2008.08400), who found that "
                "sampling through the network underfits and the linearised predictive does "
                "not.")
    else:
        text = (f"- **All-layer Laplace** with its linearised predictive (version 3) errs on "
                f"{errs} of the subset's test digits ({mp}).")
    gap = {m: underconfidence(get(m, "test_error"), get(m, "ece")) for m in F.ALL_LAYER}
    if all(g > 0 for g in gap.values()):
        text += " Both fits are under-confident (section 7's subset reading)."
    else:
        text += (" ECE: " + _join([f"{get(m, 'ece'):.3f}" for m in F.ALL_LAYER])
                 + f" (MAP {get('map', 'ece'):.3f}).")
    return text


def takeaways_text(summary, v1=None, ps=None):
    """Notebook 06's takeaways: where the answer is and whether version 1's is superseded, what
    changed between the versions (``version1_text``), all-layer Laplace (``laplace_takeaway``) and,
    with the prior-precision check ``ps``, whether last-layer Laplace's claims move with its
    prior precision. The verdict lists themselves are rendered once, in section 7."""
    if summary is None:
        return "- Version 3 has no final run yet."
    if summary["interim"]:
        return ("- Version 3's runs are not complete, so its words are interim (its standing is "
                "rendered in section 7).")
    beaten = {fam: any(r["verdict"] == "reversed" for r in claims.values())
              for fam, claims in summary["families"].items()}
    fams = [f.split(" (")[0] for f in beaten]
    beaten = dict(zip(fams, beaten.values()))
    if all(beaten.values()):
        lead = f"other methods beat BBB on both tested scores, {_join(fams)}"
    elif not any(beaten.values()):
        lead = f"no method beats BBB on either tested score, {_join(fams)}"
    else:
        lead = (f"other methods beat BBB on {_join([f for f in fams if beaten[f]])}, none on "
                f"{_join([f for f in fams if not beaten[f]])}")
    out = [f"- **The answer is version 3's** (section 7, below its claims table): with equal "
           f"search budgets and {len(summary['seeds'])} paired seeds, {lead}. Version 1's answer "
           "(section 6) is superseded."]
    for x in (version1_text(summary, v1), laplace_takeaway(summary, v1)):
        if x:
            out.append(x)
    if ps and ps.get("seeds"):
        from . import laplace_prior_check as P
        moved = [what for c, what in zip(P.CLAIMS, ("NLL", "AUROC"))
                 if len({ps["settings"][k]["tests"][c]["verdict"] for k in P.SETTINGS}) > 1]
        if moved:
            out.append("- **Last-layer Laplace's comparison with BBB depends on its prior "
                       f"precision**: the plan's test on {_join(moved)} gives other outcomes "
                       "under other precisions (section 7's check, made after the plan's "
                       "numbers).")
    return "\n".join(out)


BUDGET = 3.0  # section 6's question: at no more than three times MAP's training time


def _best_other(vals, better):
    """The method other than BBB with the best mean of ``vals`` ({method: entry})."""
    return better((m for m in vals if m != "bbb"), key=lambda m: vals[m]["mean"])


def _reaches(vals, better):
    """(BBB's mean is the best, the best other method)."""
    other = _best_other(vals, better)
    b, o = vals["bbb"]["mean"], vals[other]["mean"]
    return (b > o if better is max else b < o), other


def question_text(summary, budget=BUDGET):
    """Section 6's question answered with version 3's numbers (full test sets): does BBB reach
    the best other method's AUROC (with the plan's verdict against that method) and ECE (not
    tested in version 3: the gap against one seed spread) at no more than ``budget`` times
    MAP's training time (the cost column)?"""
    if summary is None or summary["interim"]:
        return ""
    full = {m: x["full"] for m, x in summary["table"].items() if "full" in x}
    verdict = {"holds": "finds BBB better", "reversed": "finds BBB worse"}
    out = []
    for key, name, better, d in (("auroc_entropy", "AUROC", max, 3), ("ece", "ECE", min, 4)):
        vals = {m: full[m][key] for m in full if key in full[m]}
        best, other = _reaches(vals, better)
        b, o = vals["bbb"], vals[other]
        word = "highest" if better is max else "lowest"
        text = (f"- **{name}**: BBB's {b['mean']:.{d}f} "
                + (f"is the {word}, ahead of {LABELS[other]}'s {o['mean']:.{d}f}" if best else
                   f"does not reach {LABELS[other]}'s {o['mean']:.{d}f}, the {word}"))
        if key == "auroc_entropy":
            claim = summary["families"].get("OOD AUROC (entropy)", {}).get(
                f"{other} < bbb on auroc_entropy")
            if claim:
                text += (f"; the plan's test {verdict[claim['verdict']]} than {LABELS[other]} "
                         f"({claim['verdict']})"
                         if claim["verdict"] in verdict else
                         f"; the plan's test does not separate them ({claim['verdict']})")
        else:
            within = abs(b["mean"] - o["mean"]) <= max(b["sd"] or 0, o["sd"] or 0)
            text += (f", a gap {'inside' if within else 'larger than'} one seed spread (the ECE "
                     "is not tested in version 3)")
        out.append(text + ".")
    ratio = summary.get("cost", {}).get("bbb", {}).get("train_ratio_to_map")
    if ratio:
        out.append(f"- **Training time**: BBB {ratio:.1f}× MAP's, "
                   f"{'within' if ratio <= budget else 'above'} the {budget:g}× asked.")
    return (f"**Section 6's question, with version 3's numbers** (full test sets, "
            f"{len(summary['seeds'])} seeds): does BBB reach the best other method's AUROC and "
            f"ECE within {budget:g}× MAP's training time?\n\n" + "\n".join(out))


def superseded_text(v1, summary, budget=BUDGET):
    """The note under version 1's answer (section 6), only once version 3's runs are complete:
    that version 3 asks the question again, and on which of its three parts (AUROC, ECE,
    training time) its answer differs from version 1's."""
    if v1 is None or summary is None or summary["interim"]:
        return ""
    rows = {r["method"]: r for r in ALT.working(v1)}
    full = {m: x["full"] for m, x in summary["table"].items() if "full" in x}
    differ = []
    for key, name, better in (("auroc_entropy", "AUROC", max), ("ece", "ECE", min)):
        r1, _ = _reaches({m: r[key] for m, r in rows.items()}, better)
        r3, _ = _reaches({m: x[key] for m, x in full.items() if key in x}, better)
        if r1 != r3:
            differ.append(name)
    ratio1 = {r["method"]: r for r in v1["metrics"]["rows"]}["bbb"]["train_time_ratio"]["mean"]
    ratio3 = summary.get("cost", {}).get("bbb", {}).get("train_ratio_to_map")
    if ratio3 is not None and (ratio1 <= budget) != (ratio3 <= budget):
        differ.append("training time")
    return ("**Superseded by version 3.** Section 7 asks this question again with equal "
            "search budgets and ten paired seeds, and answers it below its claims table; "
            + (f"its answer differs on {_join(differ)}." if differ else
               "its answer agrees on all three parts.")
            + " Read that answer, not this one.")


def ivon_cost_text(summary, recs=None, v1=None):
    """IVON's measured training time against its design claim (about Adam's cost per step):
    the ratio to MAP's (cost column), the epochs and batch size both ran (their records), one
    weight sample per training step (``helpers.alternatives.train_ivon``), and version 1's
    ratio per epoch. Whatever the records do not explain is said to be unexplained."""
    if summary is None:
        return ""
    ratio = summary.get("cost", {}).get("ivon", {}).get("train_ratio_to_map")
    recs = F.records() if recs is None else recs
    setting = {m: (recs.get((m, summary["seeds"][0])) or {}).get("setting") or {}
               for m in ("map", "ivon")} if summary.get("seeds") else {}
    if ratio is None or not all(setting.get(m) for m in ("map", "ivon")):
        return ""
    same = [w.format(setting["map"][k]) for k, w in (("epochs", "{} epochs"),
                                                     ("batch_size", "batches of {} images"))
            if setting["map"].get(k) == setting["ivon"].get(k)]
    text = (f"**IVON's cost.** IVON is designed to cost about as much as Adam per step, yet here "
            f"it trains {ratio:.1f}× as long as MAP.")
    if len(same) == 2:
        text += (f" Both train {same[0]} with {same[1]}, and IVON draws one weight sample per "
                 "training step (`helpers.alternatives.train_ivon`). So neither more steps nor "
                 "more than one sample per step explains the gap; where the time goes was not "
                 "measured.")
    else:
        text += " Their epochs or batch sizes differ (their records), which may explain part of it."
    if v1:
        rows = {r["method"]: r for r in v1["metrics"]["rows"]}
        ch = v1["config"]["chosen"]
        if "ivon" in rows and ch.get("map", {}).get("epochs") and ch.get("ivon", {}).get("epochs"):
            per = (rows["ivon"]["train_time_ratio"]["mean"] * ch["map"]["epochs"]
                   / ch["ivon"]["epochs"])
            text += (f" Version 1 measured about {per:.1f}× MAP's time per epoch "
                     f"({ch['ivon']['epochs']} epochs against MAP's {ch['map']['epochs']}).")
    return text


def hardware_line(recs=None):
    """One line on where the final runs ran (the detail: ``hardware_text``)."""
    recs = F.records() if recs is None else recs
    if not recs:
        return ""
    cpu = [r for r in recs.values() if F._device(r) == "cpu"]
    gpu = [r for r in recs.values() if F._device(r) != "cpu"]
    names = sorted({r.get("machine", {}).get("cpu") or "?" for r in cpu})
    text = (f"**Hardware.** {len(cpu)} run{'s' if len(cpu) != 1 else ''} on one CPU thread "
            f"({', '.join(names)})")
    if gpu:
        gnames = sorted({r.get("machine", {}).get("gpu") or "?" for r in gpu})
        methods = sorted({r["method"] for r in gpu}, key=F.METHODS.index)
        plural = "s" if len(gpu) != 1 else ""
        what = (f"all-layer Laplace fit{plural}" if set(methods) <= set(F.ALL_LAYER) else
                f"run{plural} (" + _join([LABELS[m] for m in methods]) + ")")
        text += (f"; {len(gpu)} {what} on a GPU ({', '.join(gnames)}), around MAP's "
                 "CPU-trained networks")
    return text + ". Details: the notebook's last cell."


# ---- notebook 06's story: the answer, the effects, failed fits, the figures ----------------

WORDS = {"holds": "BBB better", "reversed": "BBB worse"}
FAILED_FIT = "failed fit: no verdict"
SHORT = {"map": "MAP", "mc_dropout": "MC dropout", "ensemble": "the deep ensemble",
         "bbb": "BBB", "ivon": "IVON", "laplace_ll_kron": "last-layer Laplace",
         "laplace_diag": "all-layer diagonal Laplace", "laplace_kron": "all-layer KFAC Laplace"}
SCORE_OF = {"test NLL": ("nll", "test NLL", 4), "OOD AUROC (entropy)": ("auroc_entropy",
                                                                       "OOD AUROC", 3)}


def _fmt(v, d):
    """A signed number with a true minus sign."""
    return f"{v:+.{d}f}".replace("-", "−")


def nll_status(diff, mean_fit, mean_map):
    """Where a Laplace fit's NLL stands against its MAP network's (``FIT_RULE``): 'failed' when
    the 95 % interval of the paired difference fit − MAP (``diff``, helpers.stats.paired_t)
    lies above zero, 'below' when it lies below zero, 'equal' when it contains zero; without
    an interval (fewer than two seeds, or the same difference on every seed) the means decide."""
    ci = (diff or {}).get("ci")
    if ci:
        return "failed" if ci[0] > 0 else "below" if ci[1] < 0 else "equal"
    return "failed" if mean_fit > mean_map else "below" if mean_fit < mean_map else "equal"


FIT_RULE = ("a Laplace fit is a *failed fit* when the 95 % interval of its paired NLL "
            "difference fit − MAP (against the MAP networks it wraps, on the same images) lies "
            "above zero; *indistinguishable from MAP* when that interval contains zero; *better than MAP* "
            "when it lies below zero")


def failed_fits(summary):
    """{Laplace row: {on, nll, map_nll, diff, up, n}} for every Laplace row that is a failed fit
    (``FIT_RULE``): on the images its claims are scored on (the full test sets or the plan's
    subset), the 95 % interval of the paired difference fit − MAP lies above zero (without an
    interval, its mean NLL is above MAP's). Such a fit adds uncertainty that makes it worse than
    its own base network, so its prior precision is misconfigured and no comparison with it is
    a verdict. ``diff``: that paired difference over the seeds both have (helpers.stats.paired_t);
    ``up``: the seeds on which the fit is worse, of ``n``."""
    from .stats import paired_t
    if not summary:
        return {}
    on_of = {}
    for claims in summary.get("families", {}).values():
        for claim, res in claims.items():
            on_of.setdefault(_rival(claim), res.get("on") or "full")
    t = summary["table"]
    out = {}
    for m in F.LAPLACE:
        on = on_of.get(m, "subset" if m in F.ALL_LAYER else "full")
        try:
            a, b = t[m][on]["nll"], t["map"][on]["nll"]
        except KeyError:
            continue
        pa, pb = dict(zip(a["seeds"], a["per_seed"])), dict(zip(b["seeds"], b["per_seed"]))
        seeds = sorted(set(pa) & set(pb))
        diff = paired_t([pa[s] for s in seeds], [pb[s] for s in seeds]) if len(seeds) > 1 else None
        if nll_status(diff, a["mean"], b["mean"]) != "failed":
            continue
        out[m] = {"on": on, "nll": a["mean"], "map_nll": b["mean"], "diff": diff,
                  "up": sum(pa[s] > pb[s] for s in seeds), "n": len(seeds)}
    return out


def effects(summary):
    """Every claim of the plan as an effect, BBB − rival (negative favours BBB on NLL, positive
    on AUROC), with its 95 % t-interval, the plan's Holm p and the outcome word: "BBB better" /
    "BBB worse" (Holm p < alpha), "not resolved at n seeds", or ``FAILED_FIT`` for a rival that
    is a failed fit (``failed_fits``). A list of dicts in the plan's order."""
    failed = failed_fits(summary)
    out = []
    for family, claims in summary["families"].items():
        key, score, d = SCORE_OF.get(family, (None, family, 4))
        for claim, res in claims.items():
            rival = _rival(claim)
            tt = res.get("t_test") or {}
            sign = 1.0 if claim.startswith("bbb < ") else -1.0  # a − b is BBB − rival or not
            mean = None if tt.get("mean_diff") is None else sign * tt["mean_diff"]
            ci = (sorted(sign * v for v in tt["ci"]) if tt.get("ci") else None)
            word = (FAILED_FIT if rival in failed else WORDS.get(res["verdict"], res["verdict"]))
            out.append({"family": family, "score": score, "key": key, "digits": d,
                        "rival": rival, "on": res.get("on") or "full", "mean": mean, "ci": ci,
                        "p_holm": res.get("p_holm"), "sign_p": (res.get("sign_test") or {}).get("p"),
                        "verdict": res["verdict"], "word": word,
                        "lower_better": key != "auroc_entropy"})
    return out


# the claims notebook 05 reads in detail (the same runs, the same tests): its AUROC comparisons
# of BBB with MAP, MC dropout and the deep ensemble; notebook 06 keeps the others
IN_NOTEBOOK_05 = {("OOD AUROC (entropy)", r) for r in ("map", "mc_dropout", "ensemble")}
NOTEBOOK_05 = "[notebook 05](05_uncertainty.ipynb)"


def own_effects(summary):
    """``effects`` without the claims notebook 05 reads (``IN_NOTEBOOK_05``)."""
    return [e for e in effects(summary) if (e["family"], e["rival"]) not in IN_NOTEBOOK_05]


def _effect(e, with_ci=True):
    d = e["digits"]
    if e["mean"] is None:
        return "—"
    text = _fmt(e["mean"], d)
    if with_ci and e["ci"]:
        text += f" [{_fmt(e['ci'][0], d)}, {_fmt(e['ci'][1], d)}]"
    return text


def _excludes(e, ref=None):
    """What a 95 % interval of BBB − rival rules out, in words: BBB better or worse by more
    than its bounds allow; with ``ref`` (a size: the largest decided difference on the same
    score), whether it rules out BBB being that much worse and that much better."""
    d = e["digits"]
    lo, hi = e["ci"]
    good, bad = (-lo, hi) if e["lower_better"] else (hi, -lo)
    text = (f"rules out BBB being more than {max(good, 0):.{d}f} better or "
            f"{max(bad, 0):.{d}f} worse")
    if ref is None:
        return text
    r = f"{ref:.{d}f}"
    out = [w for w, b in (("better", good), ("worse", bad)) if b < ref]
    return text + (f", so {r} either way" if len(out) == 2 else
                   f", so BBB being {r} {out[0]}, not {r} "
                   f"{'worse' if out[0] == 'better' else 'better'}" if out else
                   f", but not {r} either way")


def needed_effect(summary, e, nb05=None):
    """The smallest mean difference BBB − rival, in size, that claim ``e`` (``effects``) would
    have needed at its own spread of per-seed differences to be decided (Holm p < 0.05), the
    other claims of its family as they are (``helpers.stats.holm_p_needed``): the t-interval's
    half-width scaled to the Holm bar. Notebook 05's claims (``IN_NOTEBOOK_05``) are read from
    its own ``helpers.ood_plan.needed_difference``, so both notebooks give one number. None
    without an interval."""
    from .stats import holm_p_needed, t_ppf
    if (e["family"], e["rival"]) in IN_NOTEBOOK_05 and nb05:
        from . import ood_plan as O
        for x in O.effects(nb05):
            if x["rival"] == e["rival"] and x["metric"] == e["key"]:
                need = O.needed_difference(nb05, x)
                return need[0] if need else None
        return None
    if not e.get("ci"):
        return None
    n = len(summary["seeds"])
    claim = _claim_of(summary, e)
    others = [(r.get("t_test") or {}).get("p") for c, r in summary["families"][e["family"]].items()
              if c != claim]
    bar = holm_p_needed(others)
    se = (e["ci"][1] - e["ci"][0]) / 2 / t_ppf(0.975, n - 1)
    return t_ppf(1 - bar / 2, n - 1) * se


def effect_rows(summary, nb05=None):
    """(header, rows) of the comparisons table: per claim the score, the rival, the images, BBB
    − rival with its 95 % interval, Holm's p, the sign test's p and the outcome word; a failed
    fit's row has no p-values. The claims notebook 05 tests (``IN_NOTEBOOK_05``) appear only
    with ``nb05`` (its summary, ``load_nb05``), read from it and marked as tested there, with
    notebook 05's near-threshold flag."""
    header = ["score (NLL: lower is better; AUROC: higher)", "rival", "scored on",
              "BBB − rival (mean)", "95 % interval", "p", "Holm p (× m)", "sign test p",
              "outcome"]
    theirs = nb05_claims(nb05) if nb05 else {}
    near = near_threshold(summary, nb05)
    rows = []
    for e in effects(summary):
        in05 = (e["family"], e["rival"]) in IN_NOTEBOOK_05
        if in05 and e["rival"] not in theirs:
            continue
        if in05:
            c = theirs[e["rival"]]
            e = {**e, "mean": c["mean"], "ci": c["ci"], "p_holm": c["p_holm"],
                 "sign_p": c["sign_p"], "word": c["word"], "on": "full"}
        fit = e["word"] == FAILED_FIT
        word = e["word"] + (" (interim)" if summary.get("interim") else "")
        if in05:
            flag = theirs[e["rival"]].get("near")
            word += " (tested in notebook 05" + ("; near the threshold" if flag else "") + ")"
        elif (e["family"], e["rival"]) in near:  # the same flag as the answer and the figure
            lab = near[(e["family"], e["rival"])]
            word += (" (near the threshold" + (f": {lab.split('up to ')[1].split(' under')[0]} "
                                               "under another draw" if "but up to" in lab else "")
                     + ")")
        claim = _claim_of(summary, e)
        raw = (summary["families"][e["family"]][claim].get("t_test") or {}).get("p")
        m = _holm_rank(summary, claim, raw)[0] if raw is not None else None
        rows.append([e["score"], LABELS[e["rival"]], "subset" if e["on"] == "subset"
                     else "full", _effect(e, False),
                     f"[{_fmt(e['ci'][0], e['digits'])}, {_fmt(e['ci'][1], e['digits'])}]"
                     if e["ci"] else "—",
                     f"{raw:.2g}" if raw is not None else "—",
                     f"{e['p_holm']:.2g}" + (f" (× {m})" if m else "")
                     if e["p_holm"] is not None and not fit else "—",
                     f"{e['sign_p']:.2g}" if e["sign_p"] is not None and not fit else "—",
                     word])
    return header, rows


def _group(es, near=None):
    """'MC dropout (+0.0052 [+0.0027, +0.0078]) and the deep ensemble (…)'; a verdict near the
    threshold (``near``: {(family, rival): words}) says so inside its brackets."""
    near = near or {}
    return _join([f"{SHORT[e['rival']]} ({_effect(e)}"
                   + (f"; {near[(e['family'], e['rival'])]}" if (e["family"], e["rival"]) in near
                      else "") + ")" for e in es])


# *near the threshold*, the one rule (notebook 05's too: helpers.ood_plan._near's defaults): a
# decided verdict whose Holm p, in the test or under any other draw of the predictive samples,
# lies in [NEAR[0], NEAR[1])
NEAR = (0.01, 0.1)


def is_near(p, redraws=()):
    """Whether a decided verdict's Holm p ``p`` or any of its ``redraws`` lies in ``NEAR``."""
    return any(NEAR[0] <= x < NEAR[1] for x in [p, *redraws] if x is not None)


def near_label(p, redraws=()):
    """The flag's words, the test's Holm p first: 'Holm p 0.031; 0.039–0.046 under other
    draws: near the threshold' when the test's p lies in the band; 'Holm p 0.004, but up to
    0.028 under other draws: near the threshold' when only another draw's does; a draw that
    moves p across 0.05 is said so."""
    r = [x for x in redraws if x is not None]
    if p is None or not is_near(p, r):
        return ""
    if NEAR[0] <= p < NEAR[1]:  # two significant digits, as the tables print a p
        text = f"Holm p {p:.2g}" + (f"; {min(r):.2g}–{max(r):.2g} under other draws" if r
                                    else "")
    else:
        inside = [x for x in r if NEAR[0] <= x < NEAR[1]]
        text = f"Holm p {p:.2g}, but up to {max(inside):.2g} under other draws"
    across = [x for x in r if (x < 0.05) != (p < 0.05)]
    if across:
        text += f"; {len(across)} of {len(r)} other draws put it across 0.05"
    return text + ": near the threshold"


def near_threshold(summary, nb05=None):
    """{(family, rival): words} for every decided verdict (BBB better / worse) near the
    threshold (``is_near``: its Holm p in the test or under any other predictive draw,
    ``mc_robustness``, in ``NEAR``), the words from ``near_label``: the claims tested here from
    ``summary``, notebook 05's from its summary (its own flag, the same rule)."""
    out = {}
    theirs = nb05_claims(nb05) if nb05 else {}
    for e in effects(summary):
        key = (e["family"], e["rival"])
        if key in IN_NOTEBOOK_05:
            c = theirs.get(e["rival"])
            if c and c["near"]:
                out[key] = near_label(c["p_holm"], c["rescored"]) or "near the threshold"
            continue
        if e["word"] not in WORDS.values():
            continue
        r = [p for p in (((summary.get("mc_robustness") or {}).get(e["family"]) or {})
                         .get(_claim_of(summary, e)) or {}).get("p_holm") or [] if p is not None]
        if is_near(e["p_holm"], r):
            out[key] = near_label(e["p_holm"], r)
    return out


def _claim_of(summary, e):
    return next(c for c in summary["families"][e["family"]] if _rival(c) == e["rival"])


def plain_answer(summary):
    """One plain sentence: is BBB worth it here, which rival beats it on which scores, and what
    the cheapest of them costs to train against BBB (training time as a multiple of MAP's)."""
    es = [e for e in effects(summary) if e["word"] == WORDS["reversed"]]
    scores = list(dict.fromkeys(e["score"] for e in effects(summary) if e["word"] != FAILED_FIT))
    beat = {}
    for e in es:
        beat.setdefault(e["rival"], []).append(e["score"])
    if not beat:
        return "Yes: no rival beats BBB on any tested score at this budget."
    lost = {sc for v in beat.values() for sc in v}
    word = ("No, BBB is not worth it" if lost == set(scores) else
            f"BBB is worth it on {_join([x for x in scores if x not in lost])} only")
    who = "; ".join(f"{SHORT[m]} beats BBB on {_join(v)}" for m, v in beat.items())
    cost = summary.get("cost", {})
    ratio = lambda m: cost.get(m, {}).get("train_ratio_to_map")  # noqa: E731
    known = [m for m in beat if ratio(m) is not None]
    tail = ""
    if known and ratio("bbb") is not None:
        m = min(known, key=ratio)
        tail = (f"; {SHORT[m]} trains in {ratio(m):.1f}× MAP's time against BBB's "
                f"{ratio('bbb'):.1f}×")
    return f"{word}, at this budget: {who}{tail}."


def _recipe_words(summary):
    """'Adam at a constant learning rate for at most 60 epochs, 1 weight sample per step': the
    recipe this notebook's BBB was trained with (the plan's budget and search base)."""
    plan = _plan_json()
    k = (((plan or {}).get("searches") or {}).get("bbb") or {}).get("base", {}).get("samples")
    return (f"Adam at a constant learning rate for at most {A.MAX_EPOCHS} epochs"
            + (f", {k} weight sample{'s' if k != 1 else ''} per step" if k else ""))


def short_answer(summary, nb05=None, fair=None):
    """The first screen's answer in three or four plain sentences, in words a reader of the
    paper has (no term that Terms defines after it): the verdict and what the cheapest winner
    costs (``plain_answer``); whom BBB beats (here and, on ECE, in notebook 05), how many of
    the decided verdicts, wins and losses alike, lie near the threshold; the rivals no score
    separates from BBB; and what the Laplace fits do (with laplace-torch's default prior worse
    than their own MAP network, the loss to BBB that leaves unjudged named; tuned, MAP's
    network again, so a lead over them is the lead over MAP). The BBB recipe and notebook 01's
    comparison: ``headline_text``, after Terms."""
    if summary is None:
        return "No final run yet: `python tools/alternatives_search.py final`, then `analyse`."
    lead = ("**The answer** (interim: not every run exists). " if summary["interim"] else
            "**The answer.** ")
    text = lead + plain_answer(summary)
    es = [e for e in effects(summary) if e["word"] == WORDS["holds"]]
    wins = [c for c in nb05_ece(nb05) if c["word"] == WORDS["holds"]] if nb05 else []
    items = [f"{e['score']} over {SHORT[e['rival']]} (by {abs(e['mean']):.{e['digits']}f})"
             for e in es]
    if wins:
        items.append("a slightly lower ECE than " + _join(
            [f"{SHORT[c['rival']]} (by {-c['mean']:.4f})" for c in wins]))
    all05 = bool(items) and all((e["family"], e["rival"]) in IN_NOTEBOOK_05 for e in es)
    beats = (("BBB's only tested wins" if len(items) > 1 else "BBB's only tested win")
             + " over the planned rivals: "
             + (f"in {NOTEBOOK_05}'s tests, " if all05 else "") + _join(items)
             if items else "BBB beats no rival on either score")
    # the flag, counted both ways: wins and losses alike (its rule: Terms)
    decided = [e for e in effects(summary) if e["word"] in WORDS.values()]
    near = near_threshold(summary, nb05)
    k = sum(1 for e in decided if (e["family"], e["rival"]) in near) + sum(
        1 for c in (nb05_ece(nb05) if nb05 else []) if c["near"])
    n_dec = len(decided) + sum(1 for c in (nb05_ece(nb05) if nb05 else [])
                               if c["word"] in WORDS.values())
    text += " " + beats + "."
    if k:
        text += (f" {k} of the {n_dec} decided comparisons above, wins and losses together, "
                 "are close calls (corrected p near 0.05; the answer in detail).")
    open_ = [m for m in dict.fromkeys(e["rival"] for e in effects(summary))
             if all(e["word"].startswith("not resolved") for e in effects(summary)
                    if e["rival"] == m)]
    if open_:
        text += (f" Against {_join([SHORT[m] for m in open_])}, {len(summary['seeds'])} seeds "
                 "resolve no difference on either score.")
    if failed_fits(summary):
        lost = withheld_losses(summary)
        text += (" The Laplace approximation, with laplace-torch's default prior, scores a worse "
                 "test NLL than the MAP network it wraps, so it gets no verdict"
                 + (" (though its " + _join([_fit_name(e) for e in lost]) + " tells "
                    "Fashion-MNIST apart better than BBB)" if lost else ""))
        if _fair_auroc_bound(fair) is not None:
            dec = [v for v in _fair_verdicts(fair) if v[2] in WORDS]
            text += ("; tuned on validation data it stays close to MAP's network, so "
                     + (("its one decided comparison" if len(dec) == 1 else
                         "its decided comparisons") + " with BBB (Table 6.6: " + _join(
                         [f"{WORDS[v[2]]} on {v[1]} than the {_fit_name({'rival': v[0]})}"
                          + (", a close call" if v[3] else "") for v in dec]) + (") restates" if len(dec) == 1 else ") restate")
                        + " BBB − MAP" if dec else
                        "BBB's differences from it restate BBB − MAP (Table 6.6)"))
        text += "."
    return text


def withheld_losses(summary):
    """The plan's OOD AUROC claims that BBB loses (Holm p < 0.05) against a Laplace fit the
    failed-fit rule, added after the test numbers, leaves without a verdict."""
    failed = failed_fits(summary)
    return [e for e in effects(summary) if e["rival"] in failed
            and e["key"] == "auroc_entropy" and e["verdict"] == "reversed"]


def _fit_name(e):
    """'all-layer KFAC fit': a Laplace rival named as one of Laplace's fits."""
    return SHORT[e["rival"]].removeprefix("the ").replace(" Laplace", "") + " fit"


def headline_text(summary, nb05=None, fair=None):
    """The answer in detail, below Terms: one short sentence per score, each with its sign
    convention (BBB − rival; lower or higher is better), whom BBB is worse and better than (with
    the 95 % interval) and whom the seeds do not separate it from; then the Laplace rows that
    are failed fits (no verdict)."""
    if summary is None:
        return "No final run yet: `python tools/alternatives_search.py final`, then `analyse`."
    es = effects(summary)
    near = near_threshold(summary, nb05)
    n = len(summary["seeds"])
    lead = (f"**The answer in detail** ({n} paired seeds; each number: BBB − rival [95 % "
            "interval]; verdicts as defined under Terms):")
    sentences = []
    for score in dict.fromkeys(e["score"] for e in es):
        fam = [e for e in es if e["score"] == score]
        worse = [e for e in fam if e["word"] == WORDS["reversed"]]
        better = [e for e in fam if e["word"] == WORDS["holds"]]
        open_ = [e for e in fam if e["word"].startswith("not resolved")]
        bits = ([f"worse than {_group(worse, near)}"] if worse else []) + \
            ([f"better than {_group(better, near)}"] if better else [])
        if open_:
            bits.append(f"not resolved at {n} seeds against {_group(open_)}")
        side = "lower" if fam[0]["lower_better"] else "higher"
        in05 = [SHORT[e["rival"]] for e in fam if (e["family"], e["rival"]) in IN_NOTEBOOK_05]
        where = (f"; {_join(in05)}: tested in {NOTEBOOK_05}" if in05 else "")
        sentences.append(f"on {score} ({side} is better{where}), BBB is "
                         + (_join(bits) if bits else "compared with no rival") + ".")
    ece = ece_words(nb05, n) if nb05 else ""
    if ece:
        sentences.append(f"on ECE (lower is better; tested in {NOTEBOOK_05}), BBB has {ece}.")
    text = lead + "\n\n" + "\n".join("- " + x[0].upper() + x[1:] for x in sentences)
    failed = failed_fits(summary)
    if failed:
        one = len(failed) == 1
        text += ("\n- Laplace: with δ by the marginal likelihood, " + ("the fit is a failed fit"
                 if one else f"all {len(failed)} fits are failed fits") + " (no verdict; "
                 "section 4). "
                 + without_rule(summary, numbers=False))
    if fair:  # section 4's refits (``fair_answer``)
        text += " " + fair_answer(fair)
    nb01 = _nb01_bbb() if "bbb" in summary.get("table", {}) else None
    err = ((summary["table"].get("bbb") or {}).get("full") or {}).get("test_error")
    if err:  # the recipe the verdict is about (moved here from the first screen, reader r19)
        text += (f"\n\nThe verdict is about this BBB recipe ({_recipe_words(summary)})"
                 + (f": [notebook 01](01_mnist_classification.ipynb)'s BBB errs less on the "
                    "MNIST test set" + (", and so do its MAP and dropout networks"
                                        if len(_nb01_rivals(summary)) == 2 else "")
                    if nb01 else "") + " (section 2).")
    return text


def effects_text(summary, nb05=None):
    """Below the comparisons table: what each unresolved interval excludes (notebook 05's
    claims too, read from ``nb05`` and marked so), and that the paper states no difference on
    these scores to set beside them."""
    theirs = nb05_claims(nb05) if nb05 else {}
    es = []
    for e in effects(summary):
        if (e["family"], e["rival"]) in IN_NOTEBOOK_05:
            c = theirs.get(e["rival"])
            if not c:
                continue
            e = {**e, "mean": c["mean"], "ci": c["ci"], "word": c["word"], "in05": True}
        if e["word"].startswith("not resolved") and e["ci"]:
            es.append(e)
    # each unresolved interval against the largest decided difference on its score
    big = {}
    for e in effects(summary):
        if (e["family"], e["rival"]) in IN_NOTEBOOK_05:
            c = theirs.get(e["rival"])
            e = {**e, "mean": c["mean"], "word": c["word"]} if c else e
        if e["word"] in WORDS.values() and e["mean"] is not None and abs(e["mean"]) > big.get(
                e["score"], (0,))[0]:
            big[e["score"]] = (abs(e["mean"]), e)
    out = []
    if es:
        ref = "; ".join(f"{sc}: {v[0]:.{v[1]['digits']}f}, BBB − {SHORT[v[1]['rival']]}"
                        for sc, v in big.items())
        out += ["**What the intervals say.** What each unresolved 95 % interval of BBB − rival "
                "in Table 6.3 rules out"
                + (f", against the largest decided difference on its score ({ref})"
                   if big else "") + ", and the smallest mean difference the "
                f"{len(summary['seeds'])} seeds would have resolved at its spread (Holm p "
                "below 0.05, the other claims as they are):", ""]
        for e in es:
            need = needed_effect(summary, e, nb05)
            out.append(f"- {SHORT[e['rival']][0].upper() + SHORT[e['rival']][1:]}, {e['score']}"
                       f": {_excludes(e, big.get(e['score'], (None,))[0])}"
                       + (f"; resolvable: {need:.{e['digits']}f}" if need else "") + ".")
    return "\n".join(out)


def families_text(summary, brief=False):
    """The Holm families, named: per score, how many claims Holm corrects over, which rivals
    they compare BBB with, and which notebook tests which of them (``IN_NOTEBOOK_05``).
    ``brief``: one paragraph (the rivals are the table's rows)."""
    if summary is None:
        return ""
    if brief:
        sizes = []
        for family, claims in summary["families"].items():
            k = {r.get("family_size") for r in claims.values()} - {None}
            sizes.append(f"{SCORE_OF.get(family, (None, family))[1]} "
                         f"({k.pop() if len(k) == 1 else len(claims)} claims)")
        return ("**The Holm families.** One per score, " + _join(sizes) + ", one claim per "
                "rival, the failed fits' claims included in the count.")
    out = ["**The Holm families.** Holm's correction runs over the claims of one score, one "
           "claim per rival, the failed fits' claims included in the count:", ""]
    for family, claims in summary["families"].items():
        score = SCORE_OF.get(family, (None, family))[1]
        rivals = [_rival(c) for c in claims]
        sizes = {r.get("family_size") for r in claims.values()} - {None}
        k = sizes.pop() if len(sizes) == 1 else len(claims)
        in05 = [SHORT[r] for r in rivals if (family, r) in IN_NOTEBOOK_05]
        here = [SHORT[r] for r in rivals if (family, r) not in IN_NOTEBOOK_05]
        where = (f"all tested here (Table 6.3)" if not in05 else
                 f"{_join(in05)} tested in {NOTEBOOK_05} (its comparisons table: the same runs, "
                 f"test and family), {_join(here)} here (Table 6.3)")
        out.append(f"- *{score}* ({k} claims): BBB against {_join([SHORT[r] for r in rivals])}; "
                   f"{where}.")
    out += ["", "Table 6.6's refits are each tested in a copy of their score's family, in "
            "place of the plan's claim on the same Laplace variant (last layer, all-layer "
            "diagonal or all-layer KFAC); the other claims, the failed fits' included, count in "
            "that copy's Holm correction (section 4)."]
    return "\n".join(out)


def failed_fit_text(summary):
    """The Laplace rows that are failed fits: their NLL against that of the MAP networks they
    wrap (fit − MAP, 95 % interval, seeds on which the fit is worse) on the images their claims
    use, and what the rule means."""
    failed = failed_fits(summary)
    if not failed:
        return ""
    out = ["**Failed fits.** A Laplace approximation only adds uncertainty around MAP's network; "
           "a fit that is worse than that network adds more uncertainty than the data support "
           "(its prior precision δ sets how much). The rule, added after the test numbers: "
           + FIT_RULE + ". The rows, without verdict words:", ""]
    for m, x in failed.items():
        d = x["diff"]
        ci = (f" [{_fmt(d['ci'][0], 4)}, {_fmt(d['ci'][1], 4)}]" if d and d.get("ci") else "")
        out.append(f"- {LABELS[m]} ({'subset' if x['on'] == 'subset' else 'full test sets'}): "
                   f"NLL {x['nll']:.4f} against MAP's {x['map_nll']:.4f}; fit − MAP "
                   f"{_fmt(d['mean_diff'], 4) if d else '—'}{ci}, worse on {x['up']} of "
                   f"{x['n']} seeds.")
    return "\n".join(out + ["", "What the plan's tests would read without the rule: the "
                             f"answer in detail ([details]({DETAILS_LINK}#the-failed-fits-plainly))."])


def without_rule(summary, numbers=True):
    """What the plan's own tests say about the failed fits when the failed-fit rule (added after
    the test numbers) is set aside: per score, whom BBB is better / worse than (with BBB − fit,
    its 95 % interval and the plan's Holm p when ``numbers``) and against whom it is not
    resolved; a link to the details page's plain account. '' without failed fits."""
    failed = failed_fits(summary)
    es = [e for e in effects(summary) if e["rival"] in failed]
    if not es:
        return ""
    k = len(failed)
    out = []
    for score in dict.fromkeys(e["score"] for e in es):
        fam = [e for e in es if e["score"] == score]
        bits = []
        for v, w in (("holds", "BBB better than"), ("reversed", "BBB worse than")):
            g = [e for e in fam if e["verdict"] == v]
            if not g:
                continue
            who = (f"all {k}" if len(g) == k > 1 else _join([SHORT[e["rival"]] for e in g]))
            if numbers and (len(g) < k or k == 1):
                who += " (" + "; ".join(f"{_effect(e)}, Holm p {e['p_holm']:.2g}" for e in g) + ")"
            elif numbers:
                who += f" (Holm p {max(e['p_holm'] for e in g):.1e} or less)"
            bits.append(f"{w} {who} on {score}")
        rest = [e for e in fam if not e["verdict"] in ("holds", "reversed")]
        if rest and bits:
            bits.append("not resolved against the other " + (str(len(rest)) if len(rest) > 1
                                                              else "one"))
        elif rest:
            bits.append(f"not resolved against any on {score}")
        out.append("; ".join(bits))
    link = f"[details]({DETAILS_LINK}#the-failed-fits-plainly)"
    if numbers:
        return ("**Without the rule**, the plan's tests would read: " + "; ".join(out)
                + f" ({link}).")
    return ("Without the failed-fit rule the plan's tests would read: "
            + "; ".join(out) + f" ({link}).")


PLAN_LINK = "../docs/choices.md#notebook-06s-plan-versions"  # names the plan file and its history
FAIR_PLAN_LINK = "../results/06_alternatives/v3/laplace_fair/plan.json"


def _declares_failed_fit(path):
    """Whether the plan file at ``path`` declares the failed-fit rule (None: no such file)."""
    try:
        text = json.dumps(json.loads(Path(path).read_text()))
    except (OSError, ValueError):
        return None
    return "failed_fit" in text or "failed fit" in text


def failed_fit_plain(summary, fair=None):
    """Below the failed-fit rows: whether the rule was declared before the test numbers (read
    from the two plan files: the analysis plan behind Tables 6.2–6.4, and the refits' plan
    behind Table 6.5), and in one plain sentence what the failed fits score against BBB on NLL
    (BBB − fit with its 95 % interval), without a verdict word."""
    from .laplace_fair import plan_path
    from .utils import results_dir
    failed = failed_fits(summary)
    if not failed:
        return ""
    main = _declares_failed_fit(results_dir() / A.NB / A.PLAN.name)
    refit = _declares_failed_fit(plan_path()) if fair else None
    out = []
    if main is not None:
        out.append(("The rule is part of the [analysis plan](" + PLAN_LINK + ") declared "
                    "before the test numbers of Tables 6.2–6.4." if main else
                    "The rule is not in the [analysis plan](" + PLAN_LINK + ") declared before "
                    "the test numbers of Tables 6.2–6.4: it was added after those numbers were "
                    "known (the box at the top).")
                   + ("" if refit is None else
                      " The refits of Table 6.5 declared it in [their own plan](" + FAIR_PLAN_LINK
                      + ") before any of their test numbers." if refit else
                      " The refits of Table 6.5 do not declare it in [their plan]("
                      + FAIR_PLAN_LINK + ")."))
    es = {e["rival"]: e for e in effects(summary)
          if e["rival"] in failed and e["key"] == "nll" and e["mean"] is not None}
    worse = [m for m in es if es[m]["mean"] < 0]
    if worse:
        out.append("Plainly: as laplace-torch ships it (δ from the marginal likelihood), "
                   + _join([f"{SHORT[m]}{' (on the subset)' if es[m]['on'] == 'subset' else ''}"
                            for m in worse])
                   + (" scores" if len(worse) == 1 else " score")
                   + " worse than BBB on test NLL (BBB − it "
                   + ", ".join(_effect(es[m]) for m in worse)
                   + "); the rule withholds a verdict because "
                   + ("it is" if len(worse) == 1 else "each is")
                   + " also worse than the MAP network it wraps, so the comparison speaks of "
                   "its prior precision more than of the method.")
    au = [e for e in effects(summary) if e["rival"] in failed and e["key"] == "auroc_entropy"
          and e["mean"] is not None]
    if au:
        for v, w in (("reversed", "better than BBB"), ("holds", "worse than BBB")):
            g = [e for e in au if e["verdict"] == v]
            if g:
                out.append("On OOD AUROC, by the plan's own test, " + _join(
                    [f"{SHORT[e['rival']]}{' (on the subset)' if e['on'] == 'subset' else ''}"
                     for e in g]) + (" scores" if len(g) == 1 else " score") + f" {w} (BBB − it "
                    + "; ".join(f"{_effect(e)}, Holm p {e['p_holm']:.2g}" for e in g) + ").")
        rest = [e for e in au if e["verdict"] not in ("holds", "reversed")]
        if rest:
            out.append("Against " + _join([SHORT[e["rival"]] for e in rest]) + " the plan's "
                       "AUROC test is not resolved (BBB − it " + "; ".join(
                           f"{_effect(e)}, Holm p {e['p_holm']:.2g}" for e in rest) + ").")
    return " ".join(out)


def fair_fit_text(ps, summary):
    """What the last-layer prior-precision check leaves open, and what a fair fit needs: where
    the validation grid search's choices sit in its range, and whether any setting gives a NLL
    at or below MAP's."""
    from . import laplace_prior_check as P
    if not ps or not ps.get("seeds") or summary is None:
        return ""
    st = ps["settings"]
    mp = summary["table"]["map"]["full"]["nll"]["mean"]
    n = len(ps["seeds"])
    top = 10.0 ** P.GRID["log_prior_prec_max"]
    at_top = sum(v >= top * (1 - 1e-6) for v in st["gridsearch_val"]["prior_precision"])
    status = {k: v[1] for k, v in _check_failed(ps, summary).items()}
    below = [P.LABELS[k] for k in P.SETTINGS if status[k] == "below"]
    text = ("**What a fair fit needs.** "
            + (f"No prior precision tried gives a test NLL below MAP's ({mp:.4f}) beyond its "
               "interval; " if not below else
               f"Only {_join(below)} gives a test NLL below MAP's ({mp:.4f}); ")
            + f"the validation grid search chose the top of its range ({top:.0e}) on {at_top} of "
            f"{n} seeds, where the fit is MAP's network with almost no added uncertainty, so its "
            "best value was not found inside the grid. A fair fit chooses the prior precision "
            "as the library advises: the marginal likelihood with one precision per layer, and "
            "a validation-NLL grid with the linearised (GLM) predictive, widened until its best "
            "value is interior. That refit has not been run; until it is, this notebook draws "
            "no verdict against Laplace.")
    return text


COLOURS = {"map": "#000000", "mc_dropout": "#E69F00", "ensemble": "#999933",
           "bbb": "#0072B2", "ivon": "#009E73", "laplace_ll_kron": "#CC79A7",
           "laplace_diag": "#882255", "laplace_kron": "#332288"}
# Okabe–Ito, but the all-layer diagonal Laplace in Tol's wine (Okabe–Ito's vermillion is too
# close to MC dropout's orange), the deep ensemble in Tol's olive (Okabe–Ito's sky blue sat
# too close to BBB's blue) and the all-layer KFAC Laplace in Tol's indigo (grey reads as "not
# resolved" in the effects figure)


def _scores_panel(ax, summary, on, key, failed, log=False, slots=None):
    """One panel: every seed's value (dots) and the mean with its 95 % interval (bar) per
    method scored on ``on``; failed fits hollow; MAP's mean as a dotted line. ``slots``: the
    methods' x positions (the same in every panel; a method not scored on ``on`` leaves its
    slot empty, labelled so)."""
    from .stats import mean_ci
    t = summary["table"]
    scored = [m for m in F.METHODS if key in t.get(m, {}).get(on, {})]
    methods = list(slots) if slots else scored
    for i, m in enumerate(methods):
        if m not in scored:
            continue
        e = t[m][on][key]
        c = COLOURS[m]
        hollow = m in failed
        x = [i + 0.12 * ((j % 5) - 2) / 2 for j in range(len(e["per_seed"]))]
        ax.scatter(x, e["per_seed"], s=12, facecolor="none" if hollow else c, edgecolor=c,
                   linewidth=0.8, alpha=0.8, zorder=3)
        ci = mean_ci(e["per_seed"])["ci"]
        ax.errorbar(i + 0.3, e["mean"], yerr=None if ci is None else
                    [[e["mean"] - ci[0]], [ci[1] - e["mean"]]], fmt="D", ms=5, color=c,
                    mfc="white" if hollow else c, capsize=3, zorder=4)
    if "map" in scored:
        ax.axhline(t["map"][on][key]["mean"], color="black", ls=":", lw=0.8, zorder=1)
    ax.set_xticks(range(len(methods)), [TICKS[m] + ("\n(failed)" if m in failed else "")
                                        + ("" if m in scored else "\n(Table\n6.5)")
                                        for m in methods],
                  fontsize=9 if len(methods) <= 6 else 8.5, rotation=0)
    ax.tick_params(axis="y", labelsize=10)
    ax.set_xlim(-0.55, len(methods) - 0.35)
    if log:
        _log_ticks(ax)
    return scored


def _log_ticks(ax):
    """Label a log y-axis at 1, 2 and 5 of each decade inside its range, adding 1.5, 3, 7 and
    then 1.2, 4, 6, 8 where a stretch of the axis (its ends included) would otherwise go
    without a number, so that every point can be read off a nearby label."""
    import math
    from matplotlib.ticker import FixedLocator, FormatStrFormatter, NullFormatter, NullLocator
    ax.set_yscale("log")
    lo, hi = ax.get_ylim()
    decades = range(math.floor(math.log10(lo)), math.ceil(math.log10(hi)) + 1)
    levels = ((1, 2, 5), (1.5, 3, 7), (1.2, 4, 6, 8))
    ticks = []
    for n, level in enumerate(levels):
        gaps = [math.log10(b / a) for a, b in zip([lo, *ticks], [*ticks, hi])]
        if n and len(ticks) >= 3 and max(gaps) <= 0.25:
            break
        for t in sorted(m * 10.0 ** e for e in decades for m in level):
            if lo <= t <= hi and all(abs(math.log10(t / u)) >= 0.09 for u in ticks):
                ticks = sorted(ticks + [t])
    # points above the last label: stretch the axis a little to the next level's value, if near
    cands = sorted(m * 10.0 ** e for e in range(decades[0], decades[-1] + 2)
                   for level in levels for m in level)
    inside = [c for c in cands if ticks and ticks[-1] * 10 ** 0.09 <= c <= hi]
    nxt = next((c for c in cands if c > hi), None)
    if inside:
        ticks.append(inside[-1])
    elif ticks and nxt and math.log10(hi / ticks[-1]) > 0.04 and math.log10(nxt / hi) < 0.04:
        ticks.append(nxt)
        hi = nxt * 10 ** 0.006
    ax.yaxis.set_major_locator(FixedLocator(ticks))
    ax.yaxis.set_major_formatter(FormatStrFormatter("%.3g"))
    ax.yaxis.set_minor_locator(NullLocator())
    ax.yaxis.set_minor_formatter(NullFormatter())
    ax.set_ylim(lo, hi)


TICKS = {"map": "MAP", "mc_dropout": "MC\ndropout", "ensemble": "deep\nensemble",
         "bbb": "BBB", "ivon": "IVON", "laplace_ll_kron": "Laplace\nlast\nlayer",
         "laplace_diag": "Laplace\nall,\ndiag.", "laplace_kron": "Laplace\nall,\nKFAC"}


def summary_figure(summary):
    """The final runs' scores: test NLL, OOD AUROC (entropy) and ECE, each seed a dot and each
    method's mean with its 95 % t-interval, on the full test sets (top) and on the plan's
    2,000 + 2,000-image subset, the only images the plan scores the all-layer Laplace fits on
    (bottom; their empty top-row slots point to Table 6.5's full-set rescoring), each method in
    the same column in both rows. Real values (ECE, and the
    subset's NLL, on a log axis, labelled so); failed fits hollow; MAP's
    mean dotted."""
    import matplotlib.pyplot as plt
    failed = failed_fits(summary)
    keys = (("nll", "test NLL{} (lower is better)", {"subset"}),
            ("auroc_entropy", "OOD AUROC, entropy{} (higher is better)", set()),
            ("ece", "ECE{} (lower is better)", {"full", "subset"}))
    fig, axes = plt.subplots(2, 3, figsize=(16, 9.4), constrained_layout=True,
                             gridspec_kw={"width_ratios": [1, 1, 1]})
    n = len(summary["seeds"])
    names = {("full", False): "MNIST test set (10,000 images)",
             ("full", True): "10,000 MNIST against 10,000 Fashion-MNIST test images",
             ("subset", False): "the subset: 2,000 MNIST test images",
             ("subset", True): "the subset: 2,000 MNIST against 2,000 Fashion-MNIST images"}
    slots = [m for m in F.METHODS if any(m in summary["table"] and on in summary["table"][m]
                                         for on in ("full", "subset"))]
    for r, on in enumerate(("full", "subset")):
        for c, (key, label, log) in enumerate(keys):
            ax = axes[r, c]
            _scores_panel(ax, summary, on, key, failed, log=on in log, slots=slots)
            ax.set_title(f"{label.format(', log scale' if on in log else '')}\n"
                         f"{names[(on, key.startswith('auroc'))]}", fontsize=10)
    from matplotlib.lines import Line2D
    handles = [Line2D([], [], ls="", marker="o", ms=4, color="0.3", label=f"one seed ({n} per method)"),
               Line2D([], [], ls="", marker="D", ms=5, color="0.3",
                      label="mean and its 95 % interval"),
               Line2D([], [], ls="", marker="o", ms=4, mfc="none", color="0.3",
                      label="failed fit (NLL worse than its MAP network's; section 4)"),
               Line2D([], [], ls=":", color="black", label="MAP's mean")]
    fig.legend(handles=handles, loc="outside lower center", ncol=4, fontsize=9, frameon=False)
    return fig


def effects_figure(summary, nb05=None):
    """BBB's advantage over each rival that is not a failed fit, with its 95 % interval, on
    one sign convention for every panel (right of zero: BBB better): rival − BBB on test NLL
    (lower is better), BBB − rival on OOD AUROC; each axis says which. The outcome word above
    each row. The claims notebook 05 tests (``IN_NOTEBOOK_05``: the same runs and test) are
    drawn too, dashed with square markers; each axis spans its intervals."""
    import matplotlib.pyplot as plt
    from matplotlib.lines import Line2D
    from matplotlib.ticker import MaxNLocator
    es = [e for e in effects(summary) if e["word"] != FAILED_FIT and e["ci"]]
    near = near_threshold(summary, nb05)
    fams = list(dict.fromkeys(e["score"] for e in es))
    fig, axes = plt.subplots(1, len(fams), figsize=(6.5 * len(fams), 3.9),
                             constrained_layout=True, squeeze=False)
    colour = {WORDS["holds"]: "#0072B2", WORDS["reversed"]: "#D55E00"}
    for ax, fam in zip(axes[0], fams):
        rows = [e for e in es if e["score"] == fam]
        flip = -1.0 if rows[0]["lower_better"] else 1.0  # right of zero: BBB better
        rows = [{**e, "mean": flip * e["mean"], "ci": sorted(flip * v for v in e["ci"])}
                for e in rows]
        for i, e in enumerate(rows):
            lo, hi = e["ci"]
            c = colour.get(e["word"], "0.45")
            in05 = (e["family"], e["rival"]) in IN_NOTEBOOK_05
            ax.plot([lo, hi], [i, i], color=c, lw=2.2, ls=(0, (4, 2)) if in05 else "-")
            ax.plot(e["mean"], i, "s" if in05 else "o", color=c, ms=7, mew=1.6)
            flag = near.get((e["family"], e["rival"]))
            ax.annotate(e["word"] + (" (near the threshold)\n" + flag.split(": near")[0]
                                     if flag else ""), (e["mean"], i), xytext=(0, 6),
                        textcoords="offset points", ha="center", va="bottom", fontsize=8,
                        color=c, bbox={"fc": "white", "ec": "none", "pad": 0.6}, zorder=5)
        ax.axvline(0, color="black", lw=0.8)
        ax.set_yticks(range(len(rows)),
                      [f"BBB vs {LABELS[e['rival']]}" + ("\n(tested in notebook 05)"
                       if (e["family"], e["rival"]) in IN_NOTEBOOK_05 else "") for e in rows],
                      fontsize=8)
        ax.set_ylim(len(rows) - 0.5, -0.8)  # inverted: the first row on top, room for its word
        lo = min(min(e["ci"][0] for e in rows), 0)
        hi = max(max(e["ci"][1] for e in rows), 0)
        ax.set_xlim(lo - 0.2 * (hi - lo), hi + 0.14 * (hi - lo))  # room for the words
        ax.xaxis.set_major_locator(MaxNLocator(6))
        ax.tick_params(axis="x", labelsize=8)
        diff = ("rival − BBB (right of zero: BBB's NLL lower)" if flip < 0 else
                "BBB − rival (right of zero: BBB's AUROC higher)")
        ax.set_xlabel(f"{fam}: {diff}\n← BBB worse | BBB better →", fontsize=9)
        ax.set_title(f"BBB's advantage in {fam}, {len(summary['seeds'])} paired seeds: mean "
                     "and 95 % interval", fontsize=9)
    handles = [Line2D([], [], color=colour[WORDS["reversed"]], lw=2.2, marker="o", ms=7,
                      label="BBB worse (Holm p < 0.05)"),
               Line2D([], [], color=colour[WORDS["holds"]], lw=2.2, marker="o", ms=7,
                      label="BBB better (Holm p < 0.05)"),
               Line2D([], [], color="0.45", lw=2.2, marker="o", ms=7,
                      label=f"not resolved at {len(summary['seeds'])} seeds")]
    if any((e["family"], e["rival"]) in IN_NOTEBOOK_05 for e in es):
        style = [Line2D([], [], color="#777777", lw=1.6, marker="o", ms=6, mfc="white",
                        label="solid, circle: tested here"),
                 Line2D([], [], color="#777777", lw=1.6, ls=(0, (4, 2)), marker="s", ms=6,
                        mfc="white", label="dashed, square: tested in notebook 05"),
                 Line2D([], [], ls="", label=" ")]
        # matplotlib fills a legend column by column: colours on the first row, styles below
        handles = [h for pair in zip(handles, style) for h in pair]
    fig.legend(handles=handles, loc="outside lower center", ncol=3, fontsize=8, frameon=False)
    return fig


def verdict_words(summary, near=None, laplace=True):
    """The verdict in words, without numbers (the answer gives them): per tested score the
    rivals that beat BBB and those BBB beats, and the Laplace rows without a verdict; whether BBB
    is worth it here: "No" when some rival beats it on every score, "Yes" when none beats it on
    any, else on which scores only."""
    es = [e for e in effects(summary) if e["word"] != FAILED_FIT]
    scores = list(dict.fromkeys(e["score"] for e in es))
    parts, unbeaten = [], []
    for score in scores:
        fam = [e for e in es if e["score"] == score]
        mark = lambda e: SHORT[e["rival"]] + (  # noqa: E731
            f" ({(near or {})[(e['family'], e['rival'])]})"
            if (e["family"], e["rival"]) in (near or {}) else "")
        worse = [mark(e) for e in fam if e["word"] == WORDS["reversed"]]
        better = [mark(e) for e in fam if e["word"] == WORDS["holds"]]
        unbeaten += [] if worse else [score]
        bit = (f"{_join(worse)} beat{'s' if len(worse) == 1 else ''} BBB" if worse else
               "no rival beats BBB")
        bit += f", BBB beats {_join(better)}" if better else ""
        parts.append(f"on {score}, {bit}")
    lead = ("Is BBB worth it here? " + ("No" if not unbeaten else "Yes" if unbeaten == scores
                                         else f"On {_join(unbeaten)} only"))
    failed = failed_fits(summary) if laplace else {}
    tail = ("" if not failed else "; the Laplace fit gets no verdict (a failed fit, section 4)"
            if len(failed) == 1 else
            f"; the {len(failed)} Laplace fits get no verdict (failed fits, section 4)")
    return f"{lead}, at this budget: " + "; ".join(parts) + tail + "."


def _predict_words(summary, ms):
    """'; to predict 10,000 images MC dropout takes 4.6 s, BBB 4.1 s': prediction seconds of
    the rivals ``ms`` beside BBB's ('' when a time is missing)."""
    cost = summary.get("cost", {})
    t = {m: cost.get(m, {}).get("predict_s_10k") for m in [*ms, "bbb"]}
    if not ms or any(v is None for v in t.values()):
        return ""
    return ("; to predict 10,000 images " + _join([f"{SHORT[m]} takes {t[m]:.1f} s" for m in ms])
            + f" against BBB's {t['bbb']:.1f} s")


def story_takeaways(summary, ps=None, fair=None, nb05=None):
    """Notebook 06's takeaways as short bullets: the verdict first (``verdict_words``), then the
    cost (what the rivals that beat BBB cost to train, against BBB's cost) and the caveats (the
    Laplace rows, the grid edges, the scope)."""
    if summary is None:
        return ""
    es = effects(summary)
    cost = summary.get("cost", {})
    ratio = lambda m: cost.get(m, {}).get("train_ratio_to_map")  # noqa: E731
    beat = list(dict.fromkeys(e["rival"] for e in es if e["word"] == WORDS["reversed"]))
    # the Laplace fits' lack of a verdict: the caveats say it
    flags = {k: "near the threshold" for k in near_threshold(summary, nb05)}  # both ways
    out = ["- **Verdict.** " + verdict_words(summary, flags, laplace=False).removesuffix(".")
           + "; intervals: Table 6.3."]
    open_ = [m for m in dict.fromkeys(e["rival"] for e in es)
             if all(e["word"].startswith("not resolved") for e in es if e["rival"] == m)]
    if open_:  # a rival no score separates from BBB is named too (reader r19)
        out[0] += (f" Against {_join([SHORT[m] for m in open_])} neither score is resolved at "
                   f"{len(summary['seeds'])} seeds.")
    wins = [c for c in nb05_ece(nb05) if c["word"] == WORDS["holds"]] if nb05 else []
    if wins:
        out[0] += (" BBB has a lower ECE (intervals: the answer) than "
                   + _join([SHORT[c["rival"]] + (" (near the threshold)" if c["near"] else "")
                            for c in wins])
                   + ": small differences between well-calibrated networks.")
    if beat and ratio("bbb") is not None and all(ratio(m) is not None for m in beat):
        cheap = [m for m in beat if ratio(m) <= ratio("bbb")]
        dear = [m for m in beat if m not in cheap]
        who = lambda ms: _join([f"{SHORT[m]} ({ratio(m):.1f}×)" for m in ms])  # noqa: E731
        out.append("- **Cost** (training time as a multiple of MAP's; an ensemble counts all its "
                   "members). "
                   + (f"{who(cheap)} beat{'s' if len(cheap) == 1 else ''} BBB with less "
                      f"training than BBB's {ratio('bbb'):.1f}×" if cheap else
                      f"Every rival that beats BBB trains longer than BBB's "
                      f"{ratio('bbb'):.1f}×: {who(dear)}")
                   + (f"; {who(dear)} beat{'s' if len(dear) == 1 else ''} it with more"
                      if cheap and dear else "")
                   + _predict_words(
                       summary, cheap) + ".")
    caveats = []
    failed = failed_fits(summary)
    if failed and fair and fair.get("seeds"):
        fl = fair["flavours"]
        k = sum(fl[f]["marglik_layerwise"]["outcome"] == "failed fit" for f in fl)
        vg = sorted({fl[f]["val_grid"]["outcome"] for f in fl})
        as_map = set(vg) == {"equal to MAP"}
        caveats.append(("Laplace gets no verdict that is about Laplace rather than MAP: "
                        if as_map and k == len(fl) else
                        "Laplace: ")
                       + f"with the marginal likelihood's prior precision {k} of {len(fl)} fits "
                       "fail" + (" (though the " + _join([_fit_name(e) for e in withheld_losses(
                           summary)]) + " separates Fashion-MNIST better than BBB: the answer)"
                                 if withheld_losses(summary) else "")
                       + f", and with one chosen on validation NLL they are "
                       f"{_join([FAIR_OUTCOME_WORDS.get(v, v) for v in vg])} on NLL"
                       + (", close to MAP's network" if as_map else "") + " (section 4)")
    elif failed:
        caveats.append("Laplace is not yet compared: its fits are failed fits, and no prior "
                       "precision tried brings the last-layer fit below MAP's NLL (section 4)"
                       if ps and ps.get("seeds") and all(
                           v[1] != "below" for v in _check_failed(ps, summary).values()) else
                       "Laplace is not yet compared: its fits are failed fits (section 4)")
    name = lambda m: LABELS[m].split(" (")[0]  # noqa: E731
    last = [name(m) for m in A.SEARCHES if (c := A.chosen(m)) and "epochs" in edges(m, c)]
    at_edge = [name(m) for m in A.SEARCHES if (c := A.chosen(m)) and
               any(x != "epochs" for x in edges(m, c))]
    if last or at_edge:
        caveats.append(", ".join(
            ([f"{_join(last)} stopped at the last allowed epoch"] if last else [])
            + ([f"{_join(at_edge)} {'also ' if last else ''}chose an end of "
                f"{'its' if len(at_edge) == 1 else 'their'} own grid"] if at_edge else []))
            + " (Table 6.1)")
    caveats.append(f"one architecture, one split, at most {A.MAX_EPOCHS} epochs at a constant "
                   f"learning rate, {len(summary['seeds'])} seeds")
    out.append("- **Caveats.** " + "; ".join(c[0].upper() + c[1:] if k == 0 else c
                                              for k, c in enumerate(caveats)) + ".")
    return "\n".join(out)


# ---- section 4: the Laplace rows with their prior precision chosen fairly ----

FAIR_CHOICES = {"marglik_layerwise": "marginal likelihood, one δ per weight tensor",
                "val_grid": "validation-NLL grid, one δ"}
FAIR_OUTCOME_WORDS = {"failed fit": FAILED_FIT, "equal to MAP": "indistinguishable from MAP",
                      "better than MAP": "better than MAP"}


def load_fair():
    """results/06_alternatives/v3/laplace_fair/summary.json (``tools/laplace_fair.py
    analyse``), or None before its analysis."""
    from .laplace_fair import summary_path
    path = summary_path()
    return json.loads(path.read_text()) if path.exists() else None


def _fair_effect(res, claim):
    """(BBB − row, its 95 % interval) from one claim's test: the NLL claim ``bbb < row`` is
    BBB − row as it is, the AUROC claim ``row < bbb`` has its sign turned."""
    tt = (res or {}).get("t_test") or {}
    if tt.get("mean_diff") is None:
        return None, None
    sign = 1.0 if claim.startswith("bbb < ") else -1.0
    return sign * tt["mean_diff"], (sorted(sign * v for v in tt["ci"]) if tt.get("ci")
                                     else None)


def _with_ci(mean, ci, d):
    if mean is None:
        return "—"
    return _fmt(mean, d) + (f" [{_fmt(ci[0], d)}, {_fmt(ci[1], d)}]" if ci else "")


def _diff(d):
    """(mean, 95 % interval) of a helpers.stats.paired_t result, or (None, None)."""
    return (d["mean_diff"], d["ci"]) if d else (None, None)


def _log10_text(x):
    """δ = 10^x written plainly: 10^1.75, 10^12."""
    return f"10^{x:g}".replace("-", "−")


def _grid_choices(fair, f):
    """The validation grid's chosen log10 δ on each analysed seed of flavour ``f``."""
    val = fair["flavours"][f].get("validation") or {}
    return [val[str(s)]["chosen_log10"] for s in fair["seeds"] if str(s) in val]


def _fair_delta(row, n, choices=None, cap=None):
    """The chosen δ over the seeds. The validation grid: how many seeds chose the cap and the
    range of the others' choices (``choices``: per-seed log10 δ; a median would hide that
    split); the marginal likelihood: the range of its per-tensor medians over the seeds."""
    if "median_log10" in row:
        at = row["at_cap"]
        rest = sorted(x for x in (choices or []) if cap is None or x < cap)
        where = ("" if not rest else
                 f"{_log10_text(rest[0])}" if rest[0] == rest[-1] else
                 f"{_log10_text(rest[0])} to {_log10_text(rest[-1])}")
        if not at:
            return f"all {n} interior: {where}" if where else "interior on every seed"
        return (f"{at} of {n} at the cap" + (f" ({_log10_text(cap)})" if cap is not None else "")
                + (f"; the other {n - at}: {where}" if where else ""))
    v = row["median_log10_per_tensor"]
    return f"{_log10_text(round(min(v), 2))} to {_log10_text(round(max(v), 2))} per tensor"


def _fair_outcome(row, claims):
    """The outcome word and, for a row that is not a failed fit, the plan's two tests."""
    word = FAIR_OUTCOME_WORDS.get(row["outcome"], "—")
    if not row.get("tests"):
        return word
    parts = [f"{'NLL' if 'nll' in c else 'AUROC'}: "
             f"{WORDS.get(row['tests'][c]['verdict'], row['tests'][c]['verdict'])}"
             for c in claims]
    return f"{word}; " + "; ".join(parts)


def fair_rows(fair):
    """(header, rows) of Table 6.5, the refits' scores, all on the full test sets: per flavour
    and choice of the prior precision, the δ chosen over the seeds (``_fair_delta``), the test
    NLL, fit − MAP NLL with its 95 % interval, ECE, OOD AUROC and the fit's outcome (failed fit
    / equal to MAP / better than MAP). The tests against BBB: ``fair_test_rows``."""
    from . import laplace_fair as P
    header = ["Laplace fit", "δ chosen by", "δ chosen (10 seeds)", "test NLL",
              "fit − MAP, NLL [95 %]", "ECE", "OOD AUROC", "outcome"]
    n = len(fair["seeds"])
    header[2] = (f"δ chosen over {n} seed{'s' if n != 1 else ''} (marginal likelihood: "
                 "per-tensor medians)")
    cap = (fair.get("grid_cap_log10") or [None, None])[1]
    rows = [[LABELS["map"] + " (the network each fit wraps)", "—", "—",
             f"{fair['map']['full']['nll']:.4f}", "—", f"{fair['map']['full']['ece']:.4f}",
             f"{fair['map']['full']['auroc_entropy']:.3f}", "—"]]
    diffs = {}
    for choice in P.CHOICES:  # one precision per choice's rows
        pairs = [(d and (d["mean_diff"], d["ci"])) or (None, None) for d in
                 (fair["flavours"][f][choice]["fit_minus_map_nll"]["full"] for f in P.FLAVOURS)]
        diffs.update(zip([(f, choice) for f in P.FLAVOURS], _small_cis(pairs, 4)))
    for f in P.FLAVOURS:
        for choice in P.CHOICES:
            row = fair["flavours"][f][choice]
            m = row["mean"]["full"]
            rows.append([LABELS[f], FAIR_CHOICES[choice],
                         _fair_delta(row, n, _grid_choices(fair, f), cap), f"{m['nll']:.4f}",
                         diffs[(f, choice)],
                         f"{m['ece']:.4f}", f"{m['auroc_entropy']:.3f}",
                         FAIR_OUTCOME_WORDS.get(row["outcome"], "—")])
    return header, rows


def _ci_digits(mean, ci, d):
    """The decimals ``_small_ci`` uses: ``d``, or up to 2 more to keep every bound off ±0."""
    for k in (d, d + 1, d + 2):
        if all(abs(v) >= 0.5 * 10 ** -k or v == 0 for v in [mean, *(ci or [])]):
            break
    return k


def _small_ci(mean, ci, d):
    """``_with_ci``, with as many more decimals as keep every bound off ±0 (at most 2 more)."""
    if mean is None:
        return "—"
    return _with_ci(mean, ci, _ci_digits(mean, ci, d))


def _small_cis(pairs, d):
    """``_small_ci`` of each (mean, ci) in ``pairs``, all at one precision (the most any
    needs), so that a column or a list reads alike."""
    k = max([_ci_digits(m, c, d) for m, c in pairs if m is not None], default=d)
    return ["—" if m is None else _with_ci(m, c, k) for m, c in pairs]


def _family_of(summary, claim):
    return next((f for f, cl in summary["families"].items() if claim in cl), None)


def _holm_rank(summary, claim, p):
    """(multiplier, the claims below): Holm multiplies the k-th smallest of a family's m
    p-values by m − k + 1. ``claim`` replaced by a refit with raw p ``p``, the others keep the
    plan's raw p (``summary``): the rivals whose claims have a smaller p, and m minus their
    number."""
    fam = summary["families"][_family_of(summary, claim)]
    below = [c for c, r in fam.items() if c != claim
             and ((r.get("t_test") or {}).get("p") or 1.0) < p]
    return len(fam) - len(below), [_rival(c) for c in below]


def _per_seed(summary, method, on, key):
    e = summary["table"][method][on][key]
    return dict(zip(e["seeds"], e["per_seed"]))


def _bbb_minus(summary, other, on, key, seeds):
    """paired_t of BBB − ``other`` ({seed: value}) on the seeds both have."""
    from .stats import paired_t
    b = _per_seed(summary, "bbb", on, key)
    s = [x for x in seeds if x in b and x in other]
    return paired_t([b[x] for x in s], [other[x] for x in s]) if len(s) > 1 else None


TESTED_ON = {"full": "full test sets", "subset": "2,000 + 2,000 subset"}


def fair_test_rows(fair, summary, brief=False):
    """(header, rows) of Table 6.6: on each refit that is not a failed fit, the plan's two
    claims as the refits' plan tests them (the row in place of the plan's, in the plan's
    families; the last-layer row on the full test sets, the all-layer rows on the plan's
    subset): the images, BBB − it with its 95 % interval, the unadjusted p, Holm's p with its
    multiplier, the verdict; beside them, not tested, BBB − it on the full test sets and BBB −
    MAP on the images the claim is tested on."""
    from . import laplace_fair as P
    header = ["refit", "score", "tested on", "BBB − it [95 %] (tested)", "p", "Holm p (× m)",
              "verdict", "BBB − it, full test sets [95 %] (not tested)",
              "BBB − MAP, same images as the test [95 %]"]
    rows = []
    if not fair or summary is None:
        return header, rows
    seeds = fair["seeds"]
    for f in P.FLAVOURS:
        for choice in P.CHOICES:
            row = fair["flavours"][f][choice]
            if not row.get("tests"):
                continue
            for c in P.CLAIMS[f]:
                res = row["tests"][c]
                key, d = ("nll", 4) if c.endswith(" on nll") else ("auroc_entropy", 3)
                on = res.get("on") or "full"
                mean, ci = _fair_effect(res, c)
                p = (res.get("t_test") or {}).get("p")
                k, _ = _holm_rank(summary, c, p) if p is not None else (None, [])
                holm = "—" if res.get("p_holm") is None else (
                    f"{res['p_holm']:.2g}" + (f" (× {k})" if k and abs(res["p_holm"] - min(
                        1.0, k * p)) < 1e-9 else ""))
                fit_full = dict(zip(seeds, row["per_seed"]["full"][key]))
                full = _bbb_minus(summary, fit_full, "full", key, seeds)
                bm = _bbb_minus(summary, _per_seed(summary, "map", on, key), on, key, seeds)
                rows.append([f"{LABELS[f]}, δ by " + ("the validation grid" if choice == "val_grid"
                                                      else "the marginal likelihood"),
                             "test NLL" if key == "nll" else "OOD AUROC", TESTED_ON[on],
                             _small_ci(mean, ci, d), "—" if p is None else f"{p:.2g}", holm,
                             WORDS.get(res["verdict"], res["verdict"])
                             + (" (near the threshold)" if res["verdict"] in WORDS
                                and is_near(res.get("p_holm")) else ""),
                             "same as tested" if on == "full" else _small_ci(*_diff(full), d),
                             _small_ci(*_diff(bm), d)])
    if brief:  # the two columns that are not tested: docs/06_details.md
        return header[:7], [r[:7] for r in rows]
    return header, rows


def fair_text(fair, brief=False):
    """What Table 6.5 shows, as short bullets rendered from the analysis: what the marginal
    likelihood does, what the validation grid chooses (near MAP or at the cap) and what that
    means for the AUROC; the reproduction check; when the check was made."""
    from . import laplace_fair as P
    if not fair or not fair.get("seeds"):
        return "No scored seed yet: run `python tools/laplace_fair.py score`, then `analyse`."
    n, fl = len(fair["seeds"]), fair["flavours"]
    mp = fair["map"]["full"]
    ml = {f: fl[f]["marglik_layerwise"] for f in P.FLAVOURS}
    vg = {f: fl[f]["val_grid"] for f in P.FLAVOURS}
    failed = [SHORT[f] for f in P.FLAVOURS if ml[f]["outcome"] == "failed fit"]
    out = [f"**What the refits show** ({n} seed{'s' if n != 1 else ''}; test scores on the full MNIST and "
           "Fashion-MNIST test sets; *δ*: the prior precision, the Gaussian prior's inverse "
           "variance: the larger δ, the less uncertainty the fit adds around MAP's network):", ""]
    spread = max((max(v) - min(v) for f in P.FLAVOURS
                  for v in zip(*[[math.log10(x) for x in pp]
                                 for pp in ml[f]["prior_precision"]])), default=None)
    out.append("- *The marginal likelihood* picks one δ per weight tensor (per-tensor medians "
               "over the seeds: "
               + _join([f"{_fair_delta(ml[f], n).removesuffix(' per tensor')} for {SHORT[f]}"
                        for f in P.FLAVOURS])
               + ("" if spread is None else
                  f"; no tensor's δ varies by more than {spread:.2f} decades over the seeds, so "
                  "the medians hide no split") + "); "
               + (f"with it {_join(failed)} {'is a failed fit' if len(failed) == 1 else 'are failed fits'}"
                  " (test NLL "
                  + ", ".join(f"{ml[f]['mean']['full']['nll']:.4f}" for f in P.FLAVOURS
                              if SHORT[f] in failed)
                  + f" against MAP's {mp['nll']:.4f}): it adds more uncertainty than the test "
                  "data support." if failed else
                  f"no fit is a failed fit (MAP's test NLL {mp['nll']:.4f})."))
    cap = fair["grid_cap_log10"][1]
    out.append(f"- *The validation grid's choices split*: at the cap ({_log10_text(cap)}, where "
               "the fit is MAP's network) on "
               + _join([f"{vg[f]['at_cap']} of {n} seeds ({SHORT[f]})" for f in P.FLAVOURS])
               + "; the other seeds choose "
               + _join([f"{_fair_delta(vg[f], n, _grid_choices(fair, f), cap).split(': ')[-1]}"
                        f" ({SHORT[f]})" for f in P.FLAVOURS if vg[f]["at_cap"] < n])
               + ". Test NLL " + _join([f"{vg[f]['mean']['full']['nll']:.4f}" for f in P.FLAVOURS])
               + ", fit − MAP " + _join(_small_cis([_diff(vg[f]["fit_minus_map_nll"]["full"])
                                                    for f in P.FLAVOURS], 4)) + ".")
    au = [vg[f]["fit_minus_map_auroc"] for f in P.FLAVOURS]
    same = kfac_last_layer_match(fair)
    med = ml["laplace_kron"].get("median_log10_per_tensor") or []
    k = len(ml["laplace_ll_kron"].get("median_log10_per_tensor") or [])
    ends = {med.index(min(med)), med.index(max(med))} if med else set()
    same_range = (same is not None and same < 1e-3 and k
                  and ends <= set(range(len(med) - k, len(med))))
    if brief:  # Table 6.5 has the δ and NLL; the notebook keeps what the table lacks
        return (f"**What the refits show.** With the marginal likelihood's δ "
                + (f"{_join(failed)} {'stays a failed fit' if len(failed) == 1 else 'stay failed fits'}"
                   ". " if failed else "no fit is a failed fit. ")
                + _grid_vs_marglik(fair, cap)
                + f" With δ from the validation grid, each fit's OOD AUROC stays within "
                f"{_fair_auroc_bound(fair):.3f} of "
                f"MAP's ({mp['auroc_entropy']:.3f}): fit − MAP "
                + _join(_small_cis([_diff(a) for a in au], 3)) + " (the three fits in turn). "
                + ("Two fits share a marginal-likelihood range: all-layer KFAC's extremes are "
                   "the last layer's tensors. " if same_range else "")
                + f"Per-tensor δ over the seeds{' and why' if same_range else ''}: "
                f"[details]({DETAILS_LINK}#the-refits-in-full).")
    out.append("- *What that means.* A Laplace fit whose δ is chosen on validation NLL adds "
               "almost no uncertainty around this MAP network, so its OOD AUROC stays within a "
               f"few thousandths of MAP's ({mp['auroc_entropy']:.3f}): fit − MAP "
               + _join(_small_cis([_diff(a) for a in au], 3)) + " (the three fits in turn).")
    if same_range:
        out.insert(3, "- *Why two ranges are identical.* All-layer KFAC Laplace's extremes are the "
                   "last layer's two tensors, whose δ agree with last-layer Laplace's (largest "
                   f"difference over the seeds {same:.0e} in log10 δ): with a Kronecker-factored "
                   "Hessian each tensor's marginal-likelihood term depends on its own δ alone.")
    return "\n".join(out)


def _grid_vs_marglik(fair, cap):
    """Where the validation grid's single δ falls against the marginal likelihood's per-tensor
    δ (their per-seed medians' range), per fit: above every one of them (how many seeds at the
    cap), or inside that range on some seeds, where one δ for the whole fit, not its size, is
    what separates it from the failed fit."""
    from . import laplace_fair as P
    fl, n = fair["flavours"], len(fair["seeds"])
    above, inside = [], []
    for f in P.FLAVOURS:
        med = fl[f]["marglik_layerwise"].get("median_log10_per_tensor") or []
        ch = _grid_choices(fair, f)
        if not med or not ch:
            continue
        k = sum(min(med) <= x <= max(med) for x in ch)
        if k:
            inside.append((f, k, min(med), max(med)))
        elif min(ch) > max(med):
            above.append((f, min(ch), fl[f]["val_grid"]["at_cap"]))
    bits = []
    if above:
        bits.append(f"For {_join([SHORT[f] for f, _, _ in above])} the validation grid picks δ "
                    f"of {_log10_text(min(x for _, x, _ in above))} or more, above every "
                    "per-tensor δ of the marginal likelihood ("
                    + _join([str(c) for _, _, c in above]) + f" of {n} seeds at the cap, "
                    f"{_log10_text(cap)}, where the fit is MAP's network).")
    plan = plan_delta_log10()
    for f, k, lo, hi in inside:
        ch = _grid_choices(fair, f)
        bits.append(f"For {SHORT[f]} it picks {_log10_text(min(ch))} or more, on {k} of {n} "
                    f"seeds inside the marginal likelihood's per-tensor range "
                    f"({_log10_text(round(lo, 2))} to {_log10_text(round(hi, 2))}), and the fit "
                    "is indistinguishable from MAP"
                    + (f"; the plan's one δ ({_log10_text(round(plan, 2))}, median over the "
                       "seeds) sits with the refit's smaller per-tensor δ, "
                       + ("about a decade" if round(min(ch) - plan) == 1 else
                          f"{min(ch) - plan:.1f} decades")
                       + " below every grid choice: the failed fits' δ is too small, whether "
                       "one for the layer or one per tensor" if f == "laplace_ll_kron"
                       and plan is not None and min(ch) - plan > 0.5 else "") + ".")
    return " ".join(bits)


def plan_delta_log10():
    """log10 of the plan's last-layer Laplace δ (one δ from the marginal likelihood), median over
    the seeds, read from the prior-precision check, whose marginal-likelihood setting
    reproduces the plan's row exactly; None when the check or that match is missing."""
    import statistics
    ps = load_prior_check()
    try:
        if any(abs(v) > 1e-9 for v in ps["marglik_reproduces_plan"].values()):
            return None
        return math.log10(statistics.median(ps["settings"]["marglik"]["prior_precision"]))
    except (TypeError, KeyError, ValueError):
        return None


def kfac_last_layer_match(fair):
    """The largest difference, over the seeds, between the marginal likelihood's log10 δ of the
    last layer's tensors (the last two) in all-layer KFAC Laplace and in last-layer Laplace
    (which fits those two tensors only); None when the records lack them."""
    try:
        ll = fair["flavours"]["laplace_ll_kron"]["validation"]
        kr = fair["flavours"]["laplace_kron"]["validation"]
        diffs = [abs(a - b) for s in ll
                 for a, b in zip(ll[s]["marglik_log10_per_tensor"],
                                 kr[s]["marglik_log10_per_tensor"][-len(
                                     ll[s]["marglik_log10_per_tensor"]):])]
    except (KeyError, TypeError):
        return None
    return max(diffs) if diffs else None


FAIR_LINTHRESH = 1e-4  # the figure's y axis: linear within ±1e-4, logarithmic beyond


def fair_figure(fair):
    """Validation NLL minus MAP's against log10 δ, one panel per flavour: each seed a thin line,
    the grid's chosen δ (dot; the number of seeds whose choice lies at the cap written there),
    the marginal likelihood's fits summarised over the seeds (``_marglik_summary``: a cross at
    the seeds' median validation NLL − MAP's and median mean-log10 δ, a horizontal bar over every
    seed's per-tensor δ, a vertical whisker over the seeds' NLL − MAP's; each at its true value),
    the cap (dashed). Symmetric-log y
    axis: linear within ±``FAIR_LINTHRESH`` (drawn two decades tall), its region below zero
    labelled. The last-layer panel marks the plan's own one δ (``plan_delta_log10``)."""
    import matplotlib.pyplot as plt
    from matplotlib.lines import Line2D

    from . import laplace_fair as P
    fig, axes = plt.subplots(1, 3, figsize=(13, 4.8), sharey=True)
    cap = fair["grid_cap_log10"][1]
    plan = plan_delta_log10()
    for ax, f in zip(axes, P.FLAVOURS):
        col = COLOURS[f]
        val = sorted(fair["flavours"][f]["validation"].items(), key=lambda x: int(x[0]))
        at_cap = 0
        for s, v in val:
            xs, ys = zip(*v["curve"])
            ax.plot(xs, ys, color=col, lw=1.0, alpha=0.85)
            y = dict(v["curve"])[v["chosen_log10"]]
            at_cap += v["chosen_log10"] >= cap
            ax.plot(v["chosen_log10"], y, "o", color="#E69F00", ms=5, mec="black", mew=0.5,
                    zorder=4)
        m = _marglik_summary([v for _, v in val])
        ax.plot([m["x_lo"], m["x_hi"]], [m["y"]] * 2, color="#0072B2", lw=1.2)
        ax.plot([m["x"]] * 2, [m["y_lo"], m["y_hi"]], color="#0072B2", lw=1.2)
        ax.plot(m["x"], m["y"], "x", color="#0072B2", ms=6, mew=1.2)
        if at_cap:
            ax.annotate(f"n = {at_cap}\nat the cap", (cap, 0), xytext=(-6, 10),
                        textcoords="offset points", ha="right", va="bottom", fontsize=9)
        ax.axvline(cap, ls="--", color="black", lw=0.8)
        if f == "laplace_ll_kron" and plan is not None:  # the plan's own failed fit, one δ
            ax.axvline(plan, ls="-.", color="#555555", lw=1.5)
        ax.axhline(0, ls=":", color="black", lw=0.8)
        ax.set_yscale("symlog", linthresh=FAIR_LINTHRESH, linscale=2)
        ax.set_title(LABELS[f])
        ax.set_xlabel("log10 prior precision δ")
    _fair_yticks(axes[0], [y for fl in fair["flavours"].values()
                           for v in fl["validation"].values() for _, y in v["curve"]])
    axes[0].set_ylabel("validation NLL − MAP's (2,000 images)")
    handles = [tuple(Line2D([], [], color=COLOURS[f], lw=1.2) for f in P.FLAVOURS),
               Line2D([], [], ls="", marker="o", color="#E69F00", ms=5, mec="black", mew=0.5),
               Line2D([], [], color="#0072B2", lw=1.2),
               Line2D([], [], ls="", marker="x", color="#0072B2", ms=6, mew=1.2),
               Line2D([], [], ls="--", color="black", lw=0.8),
               Line2D([], [], ls=":", color="black", lw=0.8)]
    labels = ["one seed's validation curve (each panel's colour)", "grid's choice (one seed)",
              "marginal likelihood, all seeds: per-tensor δ (bar), NLL (whisker)",
              "marginal likelihood: the seeds' median", "the grid's cap",
              "MAP's validation NLL"]
    if plan is not None:
        handles.append(Line2D([], [], ls="-.", color="#555555", lw=1.5))
        labels.append("the plan's one δ (last layer; median over the seeds)")
    from matplotlib.legend_handler import HandlerTuple
    fig.legend(handles, labels, loc="lower center", ncol=3, fontsize=9, frameon=False,
               handler_map={tuple: HandlerTuple(ndivide=None, pad=0.2)})
    fig.tight_layout(rect=(0, 0.12, 1, 1))
    return fig


def _marglik_summary(seeds):
    """The marginal-likelihood fits of one flavour over its seeds, each at its true value: x =
    the median of the seeds' mean log10 δ, from the smallest to the largest per-tensor δ of any
    seed; y = the median validation NLL − MAP's, from the smallest to the largest seed's."""
    ys = [v["marglik_minus_map"] for v in seeds]
    xs = [statistics.fmean(v["marglik_log10_per_tensor"]) for v in seeds]
    per = [d for v in seeds for d in v["marglik_log10_per_tensor"]]
    return {"x": statistics.median(xs), "x_lo": min(per), "x_hi": max(per),
            "y": statistics.median(ys), "y_lo": min(ys), "y_hi": max(ys)}


def _plain(x):
    """A tick value as a plain decimal, one format on the whole axis: 0.0003, 0.01, 1."""
    return f"{x:.10f}".rstrip("0").rstrip(".")


def _fair_yticks(ax, ys):
    """Labelled ticks on the symlog axis, the region below zero included: below zero the
    linear band's edge −``FAIR_LINTHRESH`` and, when the lowest value lies beyond it, the next
    decade past the lowest value, which becomes the axis floor (so the lowest points sit inside
    the axes and the two labels stand a decade apart, as above zero), 0, then every decade from
    ``FAIR_LINTHRESH`` up to the top."""
    import math
    ticks, labels = [0.0], ["0"]
    low = min(ys)
    if low < 0:
        floor = max(10 ** math.ceil(math.log10(-low) - 1e-9), FAIR_LINTHRESH)
        for v in sorted({FAIR_LINTHRESH, floor}):
            ticks.insert(0, -v)
            labels.insert(0, "−" + _plain(v))
        ax.set_ylim(bottom=-floor * (1.15 if floor == FAIR_LINTHRESH else 1.0))
    e = round(math.log10(FAIR_LINTHRESH))
    while 10 ** e <= max(ys):
        ticks.append(10 ** e)
        labels.append(_plain(10 ** e))
        e += 1
    ax.set_yticks(ticks, labels)  # the axes share y: one call labels all three


FAIR_CHOICES_LINK = "../docs/choices.md#notebook-06s-laplace-rows-refitted"


def fair_method_text():
    """How section 4's refits choose their prior precision (rendered from
    helpers.laplace_fair's declared settings)."""
    from . import laplace_fair as P
    lo, hi = P.GRID["start_log10"]
    cap = P.GRID["cap_log10"][1]
    try:
        fast = max(v["fast_vs_library_max"] for v in P.summary()["flavours"].values()
                   if v["fast_vs_library_max"] is not None)
    except (OSError, ValueError, KeyError, IndexError):
        fast = None
    return ("**How the refits choose δ.** (a) The marginal likelihood, one δ per weight tensor; "
            "(b) one δ minimising the validation NLL of "
            f"the linearised predictive on the first {P.VAL_IMAGES:,} validation images, "
            f"over log10 δ = {_fmt(lo, 0)}, …, {_fmt(hi, 0)}, widened a decade at a time while "
            f"the best value lies at an end (cap 10^{cap}, where the fit is MAP's network), then "
            "refined to quarter decades."
            + (f" The faster predictive's probabilities differ from laplace-torch's by at most "
               f"{fast:.0e}." if fast is not None else "")
            + " Table 6.6 tests each refit that is not a failed fit in place of the plan's "
            f"claim on the same variant ([why these fits]({FAIR_CHOICES_LINK})).")


def _fair_verdicts(fair):
    """[(flavour, score words, verdict, near)] of Table 6.6: BBB against each validation-grid
    refit that is not a failed fit, on each score."""
    from . import laplace_fair as P
    out = []
    for f in P.FLAVOURS:
        t = fair["flavours"][f]["val_grid"].get("tests") or {}
        for c in P.CLAIMS[f]:
            if c in t and t[c].get("verdict"):
                out.append((f, "test NLL" if c.endswith(" on nll") else "OOD AUROC",
                            t[c]["verdict"], t[c]["verdict"] in WORDS
                            and is_near(t[c].get("p_holm"))))
    return out


def _fair_auroc_bound(fair):
    """The largest |fit − MAP| mean OOD AUROC over the validation-grid refits that are equal to
    MAP on NLL (None when there are none)."""
    from . import laplace_fair as P
    if not fair or not fair.get("seeds"):
        return None
    fl = fair["flavours"]
    au = [abs(fl[f]["val_grid"]["fit_minus_map_auroc"]["mean_diff"]) for f in P.FLAVOURS
          if fl[f]["val_grid"].get("outcome") == "equal to MAP"
          and fl[f]["val_grid"].get("fit_minus_map_auroc")]
    return max(au) if au else None


def fair_answer(fair):
    """The answer's Laplace clause on section 4's refits: with δ chosen on validation NLL,
    their outcome on NLL and, when all are equal to MAP, that they stay close to MAP's network
    (OOD AUROC within so much of MAP's), so BBB's differences from them repeat BBB − MAP's and
    Table 6.6's verdicts differ from it only by image set and Holm rank."""
    from . import laplace_fair as P
    if not fair or not fair.get("seeds"):
        return ""
    fl = fair["flavours"]
    vg = {fl[f]["val_grid"]["outcome"] for f in P.FLAVOURS} - {None}
    if not vg:
        return ""
    if vg != {"equal to MAP"}:
        return ("With δ tuned on validation NLL the fits are "
                + _join([FAIR_OUTCOME_WORDS.get(v, v) for v in sorted(vg)])
                + " on NLL (section 4, Table 6.6).")
    return ("With δ tuned on validation NLL they stay close to MAP's network: BBB − them "
            "repeats BBB − MAP (Table 6.6).")


# ---- which BBB was run; the search's validation NLL against the test NLL ----

def _plan_json():
    from .utils import PROJECT_ROOT
    path = PROJECT_ROOT / A.PLAN
    return json.loads(path.read_text()) if path.exists() else None


def _test_samples(method="bbb"):
    """The predictive samples each final record of ``method`` averages at test (its records'
    ``test_samples``), or None."""
    got = set()
    for s in A.REPORTED_SEEDS:
        p = F.record_path(method, s)
        if p.exists():
            got.add(json.loads(p.read_text()).get("test_samples"))
    got -= {None}
    return got.pop() if len(got) == 1 else None


def _nb01_bbb():
    """Notebook 01's scale-mixture BBB at this width (its plan_v1 row, read as notebook 05 reads
    it: ``helpers.ood_plan._recipes``; read-only), or None."""
    from . import ood_plan as O
    try:
        return O._recipes(None)[1]
    except (OSError, ValueError, KeyError):
        return None


NB01_RIVALS = {"map": "sgd", "mc_dropout": "dropout"}  # notebook 01's plain and dropout rows


def _nb01_rivals(summary):
    """{method: (its test error here, notebook 01's at the same width, in %)} for MAP and MC
    dropout against notebook 01's plain and dropout networks (its plan_v1 rows), where both
    exist and the one here is the larger."""
    import json as _json
    from .utils import results_dir
    path = results_dir() / "01_mnist_classification" / "plan_v1" / "summary.json"
    if summary is None or not path.exists():
        return {}
    rows = {r["key"]: r for r in _json.loads(path.read_text())["rows"] if r["H"] == A.H}
    out = {}
    for m, k in NB01_RIVALS.items():
        here = ((summary["table"].get(m) or {}).get("full") or {}).get("test_error")
        if here and k in rows and here["mean"] > rows[k]["mean"]:
            out[m] = (100 * here["mean"], 100 * rows[k]["mean"])
    return out


NB01_NAME = {"map": "notebook 01's plain network's", "mc_dropout": "its dropout network's"}


def bbb_run_text(summary, plan=None, nb01=None):
    """One line: which BBB was run. Its prior (π, σ₁, σ₂; samples per step: the box, and
    ``_recipe_words`` in the answer) from the plan's search base, the predictive samples in the search (the plan's budget) and at test (the
    records), the chosen ρ₀ and epochs and the grid edges they sit at (the search records),
    and its test error beside notebook 01's BBB at the same width and the paper's."""
    import math
    from .classification import PAPER_TABLE1
    plan = _plan_json() if plan is None else plan
    c = A.chosen("bbb")
    if summary is None or plan is None or c is None:
        return ""
    base = plan["searches"]["bbb"]["base"]
    s1, s2 = math.exp(-base["neg_log_sigma1"]), math.exp(-base["neg_log_sigma2"])
    rho = c["config"]["rho_init"]
    at = [REG_SHORT.get(x, x) for x in edges("bbb", c)]
    nb01 = _nb01_bbb() if nb01 is None else nb01
    ours = 100 * summary["table"]["bbb"]["full"]["test_error"]["mean"]
    text = (f"**Which BBB was run.** The paper's scale-mixture prior with π = {base['pi']:g}, "
            f"σ₁ = {s1:g}, σ₂ = e^−{base['neg_log_sigma2']:g} ≈ {s2:.4f} (fixed: the box); "
            + f"the search chose ρ₀ = {_num(rho)} (σ₀ = log(1 + e^ρ₀) ≈ "
            f"{math.log1p(math.exp(rho)):.4f}) and {c['epochs']} epochs"
            + (f", choices at {len(at)} edge{'s' if len(at) != 1 else ''} of its grid "
               f"({_join(at)})" if at else "") + sigma_learned_text()
            + f". Its test error, {ours:.2f} %")
    above = bool(nb01) and 100 * nb01["mean"] < ours
    text += ", lies above" if above else ""
    if nb01:
        r = nb01.get("recipe") or {}
        how = ([f"a warm start ({r['init_epochs']} epochs as a plain network, then BBB from "
                "those weights)"] if r.get("init_from") else []) \
            + ([f"{r['samples']} samples per step"] if r.get("samples") else []) \
            + (["a decaying learning rate"] if r.get("lr_decay", 1.0) != 1.0 else [])
        text += (f"{'' if above else ', against'} {100 * nb01['mean']:.2f} % for [notebook 01](01_mnist_classification"
                 f".ipynb)'s BBB at the same width (its Adam recipe"
                 + (f": {_join(how)}" if how else "") + f"; {len(nb01['seeds'])} seeds)")
    text += f" and the paper's {100 * PAPER_TABLE1['bbb_mixture'][A.H]:.2f} %"
    riv = _nb01_rivals(summary)
    if riv:
        text += (". The rivals fall short of notebook 01's networks too ("
                 + "; ".join(f"{LABELS[m]} {a:.2f} % against "
                             f"{NB01_NAME[m] if i or m == 'map' else NB01_NAME['map'].replace('plain', 'dropout')} "
                             f"{b:.2f} %" for i, (m, (a, b)) in enumerate(riv.items()))
                 + "), so the budget holds back every method. One recipe serves all methods so "
                 "that each gets the same search and budget; notebook 01's was tuned for BBB "
                 "alone")
    return text + "."


SIGMA_CHECK = "v3/bbb_sigma_check.json"


def sigma_learned_text():
    """'; σ did learn: from 0.0009 to layer medians of 0.0025–0.027 at the end (seeds 0–2
    retrained; details)': the σ check's verdict by notebook 01's rule
    (``posterior_diagnostics.shifted_uniformly``) and σ's per-layer medians at the end, ranges
    over layers and seeds; '' until the check exists."""
    from .posterior_diagnostics import shifted_uniformly
    from .utils import results_dir
    path = results_dir() / A.NB / SIGMA_CHECK
    try:
        got = json.loads(path.read_text())["seeds"]
    except (OSError, ValueError, KeyError, TypeError):
        return ""
    if not got:
        return ""
    still = [s for s, e in got.items() if shifted_uniformly(e["layers"])]
    med = [v["sigma_q"][1] for e in got.values() for v in e["layers"].values()]
    start = min(e["sigma_start"] for e in got.values())
    word = ("σ did learn" if not still else "σ did not learn" if len(still) == len(got) else
            "σ learned on some seeds only")
    return (f"; {word}: from {start:.4f} to layer medians of {min(med):.2g}–{max(med):.2g} at "
            f"the end ([details]({DETAILS_LINK}#bbbs-σ))")


def sigma_check_text():
    """Whether BBB's σ moved in these runs: '' until
    results/06_alternatives/v3/bbb_sigma_check.json exists (``tools/posterior_diagnostics.py
    --alternatives-bbb`` writes it: reruns of seeds 0-2, ``posterior_diagnostics.bbb06_text``
    renders its ``text``; this module never writes it). Once it exists: its ``text`` (or
    ``summary``) field when it has one, else a pointer to the file."""
    from .utils import results_dir
    path = results_dir() / A.NB / SIGMA_CHECK
    if not path.exists():
        return ""
    try:
        rec = json.loads(path.read_text())
    except ValueError:
        return ""
    said = rec.get("text") or rec.get("summary") if isinstance(rec, dict) else None
    return ("**Did BBB's σ move from its start?** "
            + (said if isinstance(said, str) else
               f"Measured in [the σ check](../results/{A.NB}/{SIGMA_CHECK})."))


def search_vs_test_text(summary, plan=None):
    """Below Table 6.1: why its validation NLL is not Table 6.2's test NLL. The search scores
    one run (the plan's search seed) on the validation images, averaged over the epochs ending
    at the choice, with the plan's ``eval_samples`` predictive samples; the test scores average
    the final runs' ``test_samples`` over the reported seeds. The gaps test − validation per
    searched method, from the records; what the samples contribute is not measured."""
    plan = _plan_json() if plan is None else plan
    if summary is None or plan is None:
        return ""
    gap = {}
    for m in A.SEARCHES:
        c = A.chosen(m)
        if c is not None and m in summary["table"]:
            gap[m] = summary["table"][m]["full"]["nll"]["mean"] - c["val"]
    sampled = [m for m in gap if F.SAMPLES.get(m)]
    plain = [m for m in gap if not F.SAMPLES.get(m)]
    if not sampled or not plain:
        return ""
    test_s = _test_samples("bbb")
    b = plan["budget"]
    lo, hi = min(gap[m] for m in sampled), max(gap[m] for m in sampled)
    return (f"*Validation against test NLL.* Table 6.1's validation NLL is one run (seed "
            f"{b['seed']}) on the validation images, averaged over the "
            f"{plan.get('smooth', A.SMOOTH)} epochs ending at the choice, and the sampling methods "
            f"({_join([LABELS[m] for m in sampled])}) "
            f"average {b['eval_samples']} predictive samples there"
            + (f" against {test_s} at test" if test_s else "")
            + f"; Table 6.2 averages {len(summary['seeds'])} seeds at the chosen epoch on the "
            "test images. So the two are not comparable across tables, and the ranking may "
            "differ: the sampling methods' test NLL lies "
            + (f"{-hi:.4f} to {-lo:.4f} below" if hi < 0 else
               f"{_fmt(lo, 4)} to {_fmt(hi, 4)} from")
            + f" their validation NLL, while {_join([LABELS[m] for m in plain])}'s (no "
            "samples) moves by " + _join([_fmt(gap[m], 4) for m in plain])
            + ". More samples lower a sampled predictive's NLL, which fits that pattern; how "
            "much of the gap they make was not measured.")


def scores_title(summary, on="full"):
    """A scores table's title, with the status line before it while the analysis is interim."""
    title = ("**Table 6.2. Full test sets** (MNIST and Fashion-MNIST)." if on == "full" else
             "**Table 6.4. The plan's subset** (2,000 + 2,000 test images).")
    return (status_text(summary) + "\n\n" + title) if summary and summary.get("interim") \
        else title


# ---- notebook 05's three AUROC claims, read from its results (helpers.ood_plan, read-only) ----

def load_nb05():
    """Notebook 05's summary (results/05_uncertainty/v2/summary.json, through
    helpers.ood_plan.load_summary), or None."""
    from . import ood_plan as O
    return O.load_summary()


def nb05_claims(v2):
    """{rival: {mean, ci, p_holm, sign_p, word, near, rescored}} for notebook 05's AUROC claims
    of BBB against MAP, MC dropout and the deep ensemble (``IN_NOTEBOOK_05``), as notebook 05
    reports them: BBB − rival with its 95 % interval, Holm p, the verdict word, whether notebook
    05 flags it as near the threshold (``helpers.ood_plan._near``) and its Holm p under the other
    predictive draws (``mc_robustness``)."""
    from . import ood_plan as O
    if not v2:
        return {}
    out = {}
    for e in O.effects(v2):
        fam = next((f for f, cl in v2["families"].items() if e["claim"] in cl), None)
        if (fam, e["rival"]) not in IN_NOTEBOOK_05 or e["diff"] is None:
            continue
        res = v2["families"][fam][e["claim"]]
        rob = ((v2.get("mc_robustness") or {}).get(fam) or {}).get(e["claim"]) or {}
        out[e["rival"]] = {"mean": e["diff"], "ci": e["ci"], "p_holm": e["p_holm"],
                           "sign_p": (res.get("sign_test") or {}).get("p"),
                           "word": e["word"], "near": bool(O._near(v2, e)),
                           "rescored": [p for p in rob.get("p_holm") or [] if p is not None],
                           "rescored_verdicts": rob.get("verdicts") or []}
    return out


def nb05_ece(v2):
    """Notebook 05's ECE claims (BBB against MAP, MC dropout and the deep ensemble, its own Holm
    family), read from its summary through ``helpers.ood_plan`` (read-only): a list of
    {rival, mean, ci, p_holm, word, near, rescored, family_size}, BBB − rival (lower is
    better)."""
    from . import ood_plan as O
    if not v2:
        return []
    out = []
    for e in O.effects(v2):
        if e["metric"] != "ece" or e["diff"] is None:
            continue
        rob = ((v2.get("mc_robustness") or {}).get(e["family"]) or {}).get(e["claim"]) or {}
        out.append({"rival": e["rival"], "mean": e["diff"], "ci": e["ci"], "p_holm": e["p_holm"],
                    "word": e["word"], "near": bool(O._near(v2, e)),
                    "rescored": [p for p in rob.get("p_holm") or [] if p is not None],
                    "family_size": e["family_size"]})
    return out


def _ece_group(cs, near=True):
    return _join([f"{SHORT[c['rival']]} ({_fmt(c['mean'], 4)} [{_fmt(c['ci'][0], 4)}, "
                  f"{_fmt(c['ci'][1], 4)}]" + (f"; {_near_words(c)}" if near and _near_words(c)
                                                else "") + ")" for c in cs])


def ece_words(v2, n=None):
    """'a lower 15-bin ECE than MC dropout (−0.0008 [...]; Holm p ...: near the threshold) and
    the deep ensemble (...); not resolved at 10 seeds against MAP (...)': notebook 05's ECE
    verdicts, each difference with its interval; '' without them."""
    cs = nb05_ece(v2)
    if not cs:
        return ""
    n = n or len(v2["seeds"])
    good = [c for c in cs if c["word"] == WORDS["holds"]]
    bad = [c for c in cs if c["word"] == WORDS["reversed"]]
    rest = [c for c in cs if c not in good and c not in bad]
    bits = ([f"a lower 15-bin ECE than {_ece_group(good)}"] if good else []) + \
        ([f"a higher 15-bin ECE than {_ece_group(bad)}"] if bad else []) + \
        ([f"not resolved at {n} seeds against {_ece_group(rest)}"] if rest else [])
    return "; ".join(bits)


def samples_text():
    """Method's bullet on predictive samples: how many each sampling method averages at test
    (its final records' ``test_samples``) and the Laplace fits' predictive (no sampling with the
    probit link, ``ALT.LAPLACE_PREDICTIVE``); '' before any final record."""
    got = {m: _test_samples(m) for m in F.SAMPLES if F.SAMPLES[m]}
    by = {}
    for m, k in got.items():
        if k:
            by.setdefault(k, []).append(SHORT[m])
    if not by:
        return ""
    text = "- *Predictive samples*: at test, " + "; ".join(
        f"{_join(ms)} average {k} samples" for k, ms in by.items())
    if ALT.LAPLACE_PREDICTIVE.get("link_approx") == "probit":
        text += "; the Laplace fits use none (the probit approximation: the softmax averaged over the Gaussian in closed form)"
    return text + ".\n"


def not_tested_text(v2):
    """Method's last bullet: what is tested elsewhere (ECE, in notebook 05: its family size and
    rivals, from its summary) and what is shown only (cost, test error)."""
    cs = nb05_ece(v2)
    ece = (f"*ECE: tested in {NOTEBOOK_05}* on these same runs (BBB against "
           f"{_join([SHORT[c['rival']] for c in cs])}, its own Holm family of "
           f"{cs[0]['family_size']} claims; its verdicts: the answer above). " if cs else
           "*ECE*: shown, not tested here. ")
    return "- " + ece + "*Cost and test error*: shown, not tested."


def ece_text(v2):
    """Below Table 6.2: notebook 05's ECE tests on these runs, with each difference and its
    95 % interval; '' without notebook 05's summary."""
    words = ece_words(v2)
    if not words:
        return ""
    return (f"**ECE: tested in {NOTEBOOK_05}** (the same runs and seeds; BBB − rival, lower is "
            "better, Holm-corrected over notebook 05's own ECE claims). BBB has " + words
            + ". IVON and the Laplace fits are not tested on ECE.")


def _near_words(c):
    """``near_label``'s words for a claim notebook 05 flags (the same rule), else ''."""
    if not c.get("near"):
        return ""
    return near_label(c.get("p_holm"), c.get("rescored") or []) or "near the threshold"


# ---- section 4: why the refits' verdicts differ ----

def fair_tests_text(fair, summary, nb05=None, brief=False):
    """Below Table 6.6: why near-identical refits get different verdicts. The images each claim
    is tested on (the plan's rule); Holm's multiplier per row (each refit replaces one plan
    claim in its family; the other claims, the plan's failed fits' included, keep their p and
    count); and that the validation-grid fits stay close to MAP's network, so their AUROC
    claims restate BBB against MAP (BBB − MAP on both image sets; notebook 05's test)."""
    from . import laplace_fair as P
    if not fair or summary is None:
        return ""
    ranks, near, size = [], [], None
    for f in P.FLAVOURS:
        row = fair["flavours"][f]["val_grid"]
        t = row.get("tests") or {}
        c = P.CLAIMS[f][1]
        if c not in t or (t[c].get("t_test") or {}).get("p") is None:
            continue
        p = t[c]["t_test"]["p"]
        k, below = _holm_rank(summary, c, p)
        failed = failed_fits(summary)
        names = [("the plan's failed " + SHORT[r] + " fit") if r in failed else SHORT[r]
                 for r in below]
        size = len(summary["families"][_family_of(summary, c)])
        ranks.append(f"{SHORT[f]}: p {p:.4f}, {len(below)} smaller"
                     + (f" ({', '.join(names)})" if names else "") + f", × {k}")
        if t[c].get("p_holm") is not None and is_near(t[c]["p_holm"]) \
                and t[c]["verdict"] in WORDS:
            near.append(f"{SHORT[f]} (Holm p {t[c]['p_holm']:.3f})")
    out = ["**Why near-identical refits get different verdicts.**", ""]
    out.append("- *Images.* The plan tests claims on the last-layer row on the full test sets and "
               "claims on the all-layer rows on the 2,000 + 2,000 subset (as Table 6.3 does); "
               "the refits' plan keeps that. The next-to-last column gives every refit's "
               "difference on the full test sets: descriptive, not tested.")
    if ranks:
        out.append("- *Holm.* Each refit row replaces one of the plan's claims in its score's "
                   f"family of {size}; the other {size - 1} claims keep their p values and "
                   "count, the plan's failed fits' included (they get no verdict but stay in "
                   "the family). "
                   f"Holm multiplies the k-th smallest of the family's {size} p values by "
                   f"{size + 1} − k; on OOD AUROC: " + "; ".join(ranks) + ".")
    b = {on: _bbb_minus(summary, _per_seed(summary, "map", on, "auroc_entropy"), on,
                        "auroc_entropy", fair["seeds"]) for on in ("full", "subset")}
    m05 = (nb05_claims(nb05) if nb05 else {}).get("map")
    what = ("The validation-grid fits stay close to MAP's network (fit − "
               "MAP on OOD AUROC within a few thousandths), so BBB's differences from them "
               "restate BBB − MAP's, though their verdicts need not: BBB − MAP on OOD AUROC "
               + _with_ci(*_diff(b["full"]), 3) + " on the full test sets"
               + (f" (tested in {NOTEBOOK_05}; "
                  + (_near_words(m05) or f"Holm p {m05['p_holm']:.3f}") + ")" if m05 else "")
               + " and " + _with_ci(*_diff(b["subset"]), 3) + " on the subset (not tested). "
               "The verdicts differ by image set and Holm rank, not by method"
               + (f"; {_join(near)} is near the threshold by the test's Holm p alone (the "
                  "refits were not rescored under other draws)" if near else "") + ".")
    if brief:  # the images, Holm's multipliers and the flags, row by row: docs/
        return ("**Why near-identical refits get different verdicts.** They restate BBB − MAP "
                "on OOD AUROC (" + _with_ci(*_diff(b["full"]), 3) + " on the full test sets); "
                "only the images a claim is tested on and its Holm rank differ "
                f"([the arithmetic]({DETAILS_LINK}#why-near-identical-refits-get-different-"
                "verdicts)).")
    out.append("- *What they test.* " + what)
    return "\n".join(out)


DETAILS = "docs/06_details.md"
DETAILS_LINK = "../docs/06_details.md"


FAIR_TITLE = ("**Table 6.5. Laplace fits on the full test sets** (MNIST and Fashion-MNIST): "
              "the plan's all-layer fits rescored and the refits; their tests against BBB: "
              "Table 6.6. ([Table 6.4](../docs/06_details.md#the-plans-subset), the subset's "
              "scores, is in the details.)")
FAIR_TESTS_TITLE = ("**Table 6.6. BBB against each refit that is not a failed fit**, paired by "
                    "seed, on the images the plan tests each claim on; columns as in Table 6.3.")
FAIR_TESTS_NOTE = (f" Two untested columns more: [Table 6.6 in full]({DETAILS_LINK}"
                   "#table-66-in-full).")
FAIR_TESTS_MORE = (" Beside them, not tested: BBB − it on the full test sets, and BBB − MAP on "
                   "the claim's images.")


# ---- docs/06_details.md: what a reader of notebook 06 does not need for its answer ----



def _md_table(header, rows):
    """A Markdown table, as ``helpers.plotting.show_table`` renders it in a notebook."""
    cell = lambda x: str(x).replace("\\|", "|").replace("|", "\\|")  # noqa: E731
    return ("| " + " | ".join(map(cell, header)) + " |\n|" + "---|" * len(header) + "\n"
            + "\n".join("| " + " | ".join(map(cell, r)) + " |" for r in rows))


def _from_docs(text):
    """Links written for notebooks/ (``05_uncertainty.ipynb``), made to resolve from docs/."""
    import re
    return re.sub(r"\]\((\d\d_[\w-]+\.ipynb)", r"](../notebooks/\1", text)


def details_text(summary, fair, nb05):
    """docs/06_details.md: the checks and per-fit detail moved out of notebook 06, rendered
    from the same results (``python -m helpers.alternatives_report --check`` tells whether the
    committed page is current)."""
    if summary is None:
        return ""
    failed = set(failed_fits(summary))
    parts = [
        "# Notebook 06: details",
        "",
        "Checks and per-fit detail behind [notebook 06](../notebooks/06_alternatives.ipynb), "
        "which a reader does not need for its answer, rendered from `results/06_alternatives/`. "
        "Terms, verdict words and tables: as in the notebook.",
        "", "## Validation against test NLL", "", search_vs_test_text(summary),
        "", "## BBB's σ", "", sigma_check_text(),
        "", "## IVON's cost", "", ivon_cost_text(summary),
        "", "## Sampling draws", "", robustness_text(summary, skip=failed, nb05=nb05),
        "", "## The failed fits, plainly", "", failed_fit_plain(summary, fair),
        "", without_rule(summary).split(" ([details]")[0] + ".",
        "", "## The plan's subset", "", scores_title(summary, on="subset"), "",
        _md_table(*brief_rows(summary, on="subset", cost=False)), "",
        subset_ece_text(summary, fair), "", laplace_note(summary)]
    if fair is not None:
        parts += ["", "## The refits in full", "", fair_text(fair),
                  "", "## Table 6.6 in full", "", FAIR_TESTS_TITLE + FAIR_TESTS_MORE, "",
                  _md_table(*fair_test_rows(fair, summary)),
                  "", "## Why near-identical refits get different verdicts", "",
                  fair_tests_text(fair, summary, nb05).split("\n", 2)[-1]]
    return _from_docs("\n".join(parts)).rstrip() + "\n"


def main(argv=None):
    """``--write`` renders docs/06_details.md from the committed results; ``--check`` exits 1
    when the committed page differs from them."""
    import argparse
    import sys
    from .utils import PROJECT_ROOT
    ap = argparse.ArgumentParser(description=main.__doc__)
    ap.add_argument("--write", action="store_true")
    ap.add_argument("--check", action="store_true")
    args = ap.parse_args(argv)
    path = Path(PROJECT_ROOT) / DETAILS
    text = details_text(load_summary(), load_fair(), load_nb05())
    if args.write:
        path.write_text(text)
    elif args.check and (not path.exists() or path.read_text() != text):
        print(f"{DETAILS} differs from the results: run python -m helpers.alternatives_report "
              "--write", file=sys.stderr)
        return 1
    else:
        sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
