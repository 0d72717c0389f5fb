"""Notebook 05's plan, version 2 (issue 34, item 3): its out-of-distribution table on one budget.

Version 1 of notebook 05's table (trained on MNIST, shown Fashion-MNIST) compares BBB, chosen by a
search of its own, with baselines searched differently: the single network without weight decay,
MC dropout over its rate, the ensemble from the single network's short choice. Notebook 06's plan
v3 (``helpers.alternatives_plan``) already trains the same kinds of network on MNIST with the
same search for every method (16 trials, 60 epochs, validation NLL), ten paired seeds, and scores
every one of them on Fashion-MNIST. Version 2 of notebook 05 adopts those runs instead of a second
campaign of the same kind: its MNIST-trained table is plan v3's MAP (the single network, with its
weight decay searched), MC dropout, deep ensemble and BBB rows, on the same seeds; its claims are
its own family (below), tested with the project's statistics module.

What version 2 does not rerun, a stated limitation: the Fashion-MNIST-trained direction (one seed
in version 1). It stays in the notebook as version 1's, marked so, with no verdict.

``write_plan()`` writes results/05_uncertainty/plan_v2.json, committed before any number it
governs exists (results/05_uncertainty/v2/** and the final records of plan v3 it reads; a test
checks the git order); ``analysis()`` tests
its claims on plan v3's final records (helpers.alternatives_final).
"""
import json
from pathlib import Path

from . import alternatives_plan as A

NB = "05_uncertainty"
VERSION = 2
PLAN = Path("results") / NB / f"plan_v{VERSION}.json"
# its own outputs, and the final runs it reads, none of which exists when it is committed
GOVERNS = [f"results/{NB}/v{VERSION}/**", f"results/{A.NB}/v{A.VERSION}/final/**"]
ROWS = {"map": "one network (MAP: Adam with weight decay)", "mc_dropout": "MC dropout",
        "ensemble": "deep ensemble (5)", "bbb": "BBB"}
RIVALS = ("map", "mc_dropout", "ensemble")
# the AUROC claims are plan v3's own (Holm over its family of seven): read from it, not tested a
# second time under another correction; the ECE claims are this plan's own family
FROM_V3 = {"OOD AUROC (entropy)": [f"{r} < bbb on auroc_entropy" for r in RIVALS]}
FAMILIES = {"test ECE": [f"bbb < {r} on ece" for r in RIVALS]}
ALPHA = 0.05


def plan():
    return {
        "version": VERSION, "notebook": NB,
        "question": "Trained on MNIST with the same search for every method, does BBB separate "
                    "Fashion-MNIST better (AUROC of the predictive entropy) than one network, MC "
                    "dropout and a deep ensemble, and at what cost in calibration (ECE)?",
        "runs": {"from": str(A.PLAN), "version": A.VERSION,
                 "what": "plan v3 of notebook 06: its searches (16 trials per method, 60 epochs, "
                         "no early stopping, validation NLL averaged over 5 epochs) and its final "
                         "runs on its reported seeds; no run of its own",
                 "rows": ROWS, "reported_seeds": list(A.REPORTED_SEEDS),
                 "scored_on": "the whole MNIST test set and Fashion-MNIST's test images, 20 "
                              "predictive samples where the method samples"},
        "tests": {"from_plan_v3": {"families": FROM_V3,
                                   "how": "the verdicts of plan v3's own tests (its family "
                                          "'OOD AUROC (entropy)', Holm over its seven claims), "
                                          "quoted, not tested again"},
                  "families": FAMILIES,
                  "test": "two-sided paired t-test over the seeds, Holm within each family "
                          "(helpers.stats.ordering_family), decides the verdict word; the exact "
                          "sign test beside it decides nothing",
                  "alpha": ALPHA,
                  "verdict_words": ["holds", "reversed",
                                    f"not resolved at {len(A.REPORTED_SEEDS)} seeds"]},
        "not_rerun": "the Fashion-MNIST-trained direction (version 1: one seed, unequal "
                     "searches): shown as version 1's, marked so, no verdict",
        "replaces": "version 1's table (results/05_uncertainty/ood.json): unequal searches "
                    "(the single network without weight decay, the ensemble from its choice)",
        "disclosed": "these claims were written after version 1's test table had been seen "
                     "(BBB ahead on AUROC, behind on ECE); the runs that will test them do not "
                     "exist yet",
        "governs": GOVERNS,
    }


def validate(p):
    """Return the breaches of the protocol in plan ``p`` (empty: none)."""
    bad = []
    if p["runs"]["from"] != str(A.PLAN) or p["runs"]["version"] != A.VERSION:
        bad.append("the runs must be notebook 06's current plan's")
    if p["runs"]["reported_seeds"] != list(A.REPORTED_SEEDS):
        bad.append("the reported seeds must be plan v3's (the runs are its)")
    families = {**p["tests"]["families"], **p["tests"]["from_plan_v3"]["families"]}
    v3 = json.loads(json.dumps(A.plan()))["tests"]["families"]
    for family, claims in p["tests"]["from_plan_v3"]["families"].items():
        if not set(claims) <= set(v3.get(family, [])):
            bad.append(f"{family}: claims quoted from plan v3 that it does not test")
    for family, claims in families.items():
        for claim in claims:
            lhs, rest = claim.split(" < ")
            rhs, metric = rest.split(" on ")
            if "bbb" not in (lhs, rhs) or {lhs, rhs} - set(ROWS):
                bad.append(f"{family}: {claim!r} is not BBB against a row of the table")
    return bad


def write_plan(root=None):
    from .utils import PROJECT_ROOT, atomic_write_bytes
    root = Path(root or PROJECT_ROOT)
    p = plan()
    bad = validate(p)
    if bad:
        raise ValueError("the plan breaks the protocol:\n- " + "\n- ".join(bad))
    return atomic_write_bytes(root / PLAN, (json.dumps(p, indent=1) + "\n").encode())


def analysis(recs=None, v3=None):
    """Return {family: {claim: result}}: the AUROC claims quoted from plan v3's analysis
    (``v3``: helpers.alternatives_final.analysis(), computed when not given), the ECE claims
    tested here, paired over the seeds both sides have (whole test and OOD sets)."""
    from . import alternatives_final as F
    from . import stats
    recs = F.records() if recs is None else recs
    v3 = F.analysis(recs) if v3 is None else v3
    out = {family: {c: {**v3["families"][family][c], "from": "plan v3"} for c in claims}
           for family, claims in FROM_V3.items()}
    for family, claims in FAMILIES.items():
        pairs, extra = {}, {}
        for claim in claims:
            lhs, rest = claim.split(" < ")
            rhs, metric = rest.split(" on ")
            a, b = F.per_seed(recs, lhs, metric, "full"), F.per_seed(recs, rhs, metric, "full")
            seeds = sorted(set(a) & set(b))
            pairs[claim] = ([a[s] for s in seeds], [b[s] for s in seeds]) if len(seeds) >= 2 \
                else None
            extra[claim] = {"on": "full", "seeds": seeds, "mc_sd_of_difference":
                            F.mc_noise(recs, lhs, rhs, metric, "full", seeds)
                            if len(seeds) >= 2 else None}
        out[family] = {k: {**v, **extra[k]}
                       for k, v in stats.ordering_family(pairs, alpha=ALPHA).items()}
    return out


def summary(recs=None, v3=None):
    """Return what results/05_uncertainty/v2/summary.json holds: the plan's claims
    (``analysis``), its rows' per-seed scores on the full test sets (from plan v3's analysis
    ``v3``), the seeds and whether the analysis is interim (plan v3's flag: a missing run or a
    failed consistency check of any method keeps it interim)."""
    from . import alternatives_final as F
    recs = F.records() if recs is None else recs
    v3 = F.analysis(recs) if v3 is None else v3
    from .utils import PROJECT_ROOT
    plan3 = json.loads((PROJECT_ROOT / A.PLAN).read_text())
    robust = F.mc_robustness(recs, lambda rr: analysis(
        rr, {"families": F._families(rr, plan3)}))
    return {"plan": str(PLAN), "alpha": ALPHA, "interim": v3["interim"],
            "families": analysis(recs, v3), "mc_robustness": robust, "rows": list(ROWS),
            "table": {m: v3["table"][m] for m in ROWS if m in v3["table"]},
            "status": v3["status"], "seeds": v3["seeds"],
            "n_records": sum(1 for (m, _) in recs if m in ROWS)}


def load_summary():
    """Return results/05_uncertainty/v2/summary.json, or None before its first analysis
    (``python tools/alternatives_search.py analyse`` writes it)."""
    from .utils import results_dir
    path = results_dir() / NB / f"v{VERSION}" / "summary.json"
    return json.loads(path.read_text()) if path.exists() else None


# ---- notebook 05's readings of version 2, rendered from its summary ----

NOUNS = {"map": "MAP", "mc_dropout": "MC dropout", "ensemble": "the deep ensemble", "bbb": "BBB"}
V1_KIND = {"map": "deterministic", "mc_dropout": "mc_dropout", "ensemble": "ensemble"}


def _claim(claim):
    """(rival, metric, higher is better) of a claim "a < b on metric" of BBB against a rival."""
    lhs, rest = claim.split(" < ")
    rhs, metric = rest.split(" on ")
    return (rhs if lhs == "bbb" else lhs), metric, metric.startswith("auroc")


def _mean(v2, method, metric):
    e = v2["table"].get(method, {}).get("full", {}).get(metric)
    return None if e is None else e["mean"]


_WORDS = {1: "One", 2: "Two", 3: "Three", 4: "Four", 5: "Five", 6: "Six"}


def _p(p):
    return "—" if p is None else f"{p:.3g}"


def v2_text(v2):
    """What version 2's verdicts say (Markdown bullets), grouped by verdict: the claims where
    BBB is better, worse, or not resolved, each with both means and Holm's p. Interim
    summaries say that their words are not the plan's verdicts."""
    head = (f"**What version 2 shows** ({len(v2['seeds'])} paired seeds; each verdict from a "
            "two-sided paired t-test with Holm's correction"
            + ("; **interim**: the runs are not complete, so these are not the plan's verdicts"
               if v2["interim"] else "") + "):")
    groups = {"holds": [], "reversed": [], "other": []}
    unresolved = None
    for claims in v2["families"].values():
        for claim, res in claims.items():
            rival, metric, high = _claim(claim)
            name = "AUROC" if high else "ECE"
            b, r = _mean(v2, "bbb", metric), _mean(v2, rival, metric)
            digits = 3 if high else 4
            nums = (f"{b:.{digits}f} against {r:.{digits}f}; " if b is not None and r is not None
                    else "") + f"Holm p {_p(res.get('p_holm'))}"
            side = "higher" if high else "lower"
            word = res["verdict"]
            if word == "holds":
                groups["holds"].append(f"{side} {name} than {NOUNS[rival]} ({nums})")
            elif word == "reversed":
                other = "lower" if high else "higher"
                groups["reversed"].append(f"{other} {name} than {NOUNS[rival]} ({nums})")
            else:
                unresolved = word
                groups["other"].append(f"{name} against {NOUNS[rival]} ({nums})")
    lines = []
    if groups["holds"]:
        lines.append("- **BBB better**: " + "; ".join(groups["holds"]) + ".")
    if groups["reversed"]:
        lines.append("- **BBB worse**: " + "; ".join(groups["reversed"]) + ".")
    if groups["other"]:
        lines.append(f"- **{unresolved[:1].upper() + unresolved[1:]}**: "
                     + "; ".join(groups["other"]) + ".")
    return (head + "\n\n" + "\n".join(lines)
            + "\n\nEach pair of numbers is BBB's mean, then the rival's.")


def robustness_text(v2):
    """Whether any of version 2's verdicts rests on one draw of the predictive samples (its
    ``mc_robustness``: the claims retested with each extra predictive seed), in plain words,
    naming the verdicts whose Holm p lies between 0.01 and 0.1."""
    rob = v2.get("mc_robustness") or {}
    if not rob:
        return ""
    n = len(next(iter(next(iter(rob.values())).values()))["verdicts"])
    changed, close, total = [], [], 0
    for family, claims in rob.items():
        for claim, e in claims.items():
            total += 1
            main = v2["families"][family][claim]
            rival, metric, high = _claim(claim)
            label = f"BBB against {NOUNS[rival]} on {'AUROC' if high else 'ECE'}"
            if any(v != main["verdict"] for v in e["verdicts"]):
                changed.append(f"{label} ({main['verdict']}; rescored: "
                               + ", ".join(e["verdicts"]) + ")")
            elif any(p is not None and 0.01 <= p < 0.1 for p in [main.get("p_holm"),
                                                                 *e["p_holm"]]):
                close.append(f"{label} (Holm p {main['p_holm']:.3f}; rescored "
                             f"{min(e['p_holm']):.3f}–{max(e['p_holm']):.3f})")
    text = ("**Does a verdict rest on one draw of the predictive samples?** Rescored with each "
            f"of {n} other sampling seeds, "
            + (f"{total - len(changed)} of the {total} verdicts stay the same; changed: "
               + "; ".join(changed) + "." if changed else
               f"all {total} verdicts stay the same."))
    if close:
        count = _WORDS.get(len(close), str(len(close)))
        text += (f" {count} {'verdict lies' if len(close) == 1 else 'verdicts lie'} near the "
                 "threshold: " + "; ".join(close) + ".")
    return text


EDGE_WORDS = {"lr": "learning rate", "weight_decay": "weight decay", "dropout": "dropout rate",
              "rho_init": "`rho_init`"}
_COUNT = {1: "one edge", 2: "two edges", 3: "three edges"}


def edges_text(choices=None):
    """Where version 2's searched choices sit in plan v3's grids (Table 4's last column, in
    words), read from plan v3's search records (``choices``: {method: chosen trial or None},
    default ``alternatives_plan.chosen`` of BBB, MAP and MC dropout): each setting at an edge
    of its grid, epochs at the most (or fewest) allowed, and that the verdicts are about these
    grids, which the plan does not widen."""
    if choices is None:
        choices = {m: A.chosen(m) for m in ("bbb", "map", "mc_dropout")}
    lines, first = [], True
    for m in sorted(choices, key=lambda k: k != "bbb"):
        c = choices[m]
        who = f"{NOUNS[m]}'s choice" if first else f"{NOUNS[m]}'s"
        if c is None:
            lines.append(f"{NOUNS[m]}'s search has no choice yet.")
            continue
        first = False
        words = []
        for key, values in A.SEARCHES[m]["grid"].items():
            v = c["config"][key]
            if v in (min(values), max(values)):
                low = v == min(values)
                words.append(f"{EDGE_WORDS.get(key, key)} {v:g} (the "
                             f"{'smallest' if low else 'largest'} value searched"
                             + (": the least initial posterior uncertainty"
                                if (m, key, low) == ("bbb", "rho_init", True) else "") + ")")
        if c["epochs"] == A.MAX_EPOCHS:
            words.append(f"{c['epochs']} epochs (the most allowed)")
        elif c["epochs"] == max(A.EPOCH_STEP, A.SMOOTH):
            words.append(f"{c['epochs']} epochs (the fewest allowed)")
        if not words:
            lines.append(f"{who} sits inside its grid.")
            continue
        line = (f"{who} sits at {_COUNT.get(len(words), f'{len(words)} edges')} of its grid: "
                + (words[0] if len(words) == 1 else
                   ", ".join(words[:-1]) + " and " + words[-1]) + ".")
        if m == "map":
            line += " The deep ensemble's members are MAP networks."
        lines.append(line)
    edge = any("sits at" in x for x in lines)
    return ("**Where version 2's choices sit** (plan v3's search records; Table 4's last column "
            "in words):\n\n" + "\n".join(f"- {x}" for x in lines)
            + ("\n\nThe plan fixed its grids in advance and does not widen them for edges, so "
               "the verdicts above are about these grids. A wider grid or longer training could "
               "move a choice at an edge, and with it a verdict." if edge else ""))
