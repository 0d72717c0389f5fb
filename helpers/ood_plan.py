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
import math
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
# a decided verdict lies *near the threshold* when its Holm p, in the test or under another
# draw of the predictive samples, lies in [NEAR[0], NEAR[1]): notebook 06's band
# (helpers.alternatives_report.NEAR; tests/test_rendered_05.py checks that they agree)
NEAR = (0.01, 0.1)


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


def _robustness(v2, label, word, question, near):
    """The shared reading of ``robustness_text`` and ``robustness_words``: which of version 2's
    verdicts change when rescored with each extra predictive seed (``mc_robustness``), and which
    lie near the threshold (Holm p in ``NEAR``). ``label``: the claim's prefix; ``word``: how
    a verdict is written; ``question`` / ``near``: the sentence's head and its near-threshold
    phrase (one verdict, several)."""
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
            name = f"{label}{NOUNS[rival]} on {'AUROC' if high else 'ECE'}"
            if any(v != main["verdict"] for v in e["verdicts"]):
                changed.append(f"{name} ({word(main['verdict'])}; rescored: "
                               + ", ".join(word(v) for v in e["verdicts"]) + ")")
            elif any(p is not None and NEAR[0] <= p < NEAR[1]
                     for p in [main.get("p_holm"), *e["p_holm"]]):
                low = main.get("p_holm") is not None and main["p_holm"] < min(e["p_holm"])
                close.append(f"{name} (Holm p {_p(main['p_holm'])}; rescored "
                             f"{min(e['p_holm']):.3f}–{max(e['p_holm']):.3f}"
                             + (f": the reported draw gives the lowest of the {n + 1}, the "
                                "one most favourable to this verdict" if low else "") + ")")
    text = (f"**{question}** Rescored with each of {n} other sampling seeds, "
            + (f"{total - len(changed)} of the {total} verdicts stay the same; changed: "
               + "; ".join(changed) + "." if changed else
               f"all {total} verdicts stay the same."))
    if close:
        text += (f" {_WORDS.get(len(close), str(len(close)))} "
                 f"{near[0] if len(close) == 1 else near[1]} " + "; ".join(close) + ".")
    return text


def robustness_text(v2):
    """Whether any of version 2's verdicts rests on one draw of the predictive samples (its
    ``mc_robustness``: the claims retested with each extra predictive seed), in plain words,
    naming the verdicts whose Holm p lies in ``NEAR``."""
    return _robustness(v2, "BBB against ", lambda v: v,
                       "Does a verdict rest on one draw of the predictive samples?",
                       ("verdict lies near the threshold:", "verdicts lie near the threshold:"))


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


# ---- notebook 05's chapter: the final comparison in plain words, its tables and figures ----
#
# Every comparison is read as BBB minus its rival: on AUROC a positive difference favours BBB,
# on ECE a negative one. The verdict words say the direction in plain terms ("BBB better",
# "BBB worse") where the plan's test decides one, "not resolved at n seeds" where it decides
# neither; each comes with its difference and 95 % interval.

# Okabe–Ito (colour-blind safe), one colour per method in every figure of notebook 05
# the verdict colours of notebook 06's effects figure (helpers.alternatives_report.effects_figure,
# read-only; tests/test_rendered_05.py checks that they agree): one meaning per colour in both
VERDICT_COLOURS = {"BBB better": "#0072B2", "BBB worse": "#D55E00", None: "#737373"}


def method_colours():
    """{method: colour} of Figure 5.1: notebook 06's mapping
    (helpers.alternatives_report.COLOURS), so that a method has one colour in both notebooks."""
    from .alternatives_report import COLOURS
    return {m: COLOURS[m] for m in ROWS}


LABELS = {"map": "MAP", "mc_dropout": "MC dropout", "ensemble": "deep ensemble (5)",
          "bbb": "BBB"}
METRIC_NAMES = {"auroc_entropy": "AUROC", "ece": "ECE"}
DIRECTION = {"holds": "BBB better", "reversed": "BBB worse"}


def _direction(verdict):
    """The plain reading of a plan verdict (every claim is written in BBB's favour)."""
    return DIRECTION.get(verdict, verdict)


def effects(v2):
    """Return one dict per claim, AUROC claims first: rival, metric, both means, the paired
    difference BBB − rival (``diff``) with its 95 % t-interval (``ci``, unadjusted), Holm's p,
    the family's size, the seeds, the plain verdict (``word``) and whether a higher value is
    better (``high``)."""
    out = []
    for family, claims in v2["families"].items():
        for claim, res in claims.items():
            rival, metric, high = _claim(claim)
            tt = res.get("t_test") or {}
            sign = 1.0 if claim.startswith("bbb < ") else -1.0  # a − b → BBB − rival
            ci = tt.get("ci")
            out.append({"claim": claim, "rival": rival, "metric": metric, "high": high,
                        "family": family, "sd_diff": tt.get("sd_diff"), "n": tt.get("n"),
                        "bbb": _mean(v2, "bbb", metric), "other": _mean(v2, rival, metric),
                        "diff": None if tt.get("mean_diff") is None else sign * tt["mean_diff"],
                        "ci": None if ci is None else sorted(sign * c for c in ci),
                        "p_holm": res.get("p_holm"), "family_size": res.get("family_size"),
                        "seeds": res.get("seeds") or v2["seeds"], "verdict": res["verdict"],
                        "word": _direction(res["verdict"])})
    return sorted(out, key=lambda e: not e["high"])


def _digits(e):
    return 3 if e["high"] else 4


def _signed(x, d):
    return f"{x:+.{d}f}".replace("-", "−")


def effect_words(e, level=True):
    """'+0.038, 95 % interval [+0.014, +0.062]' (without ``level``: '+0.038 [+0.014, +0.062]'):
    the difference BBB − rival and its interval."""
    d = _digits(e)
    return (f"{_signed(e['diff'], d)}" + (", 95 % interval " if level else " ")
            + f"[{_signed(e['ci'][0], d)}, {_signed(e['ci'][1], d)}]")


def _join(items):
    items = list(items)
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


def _near(v2, e, lo=NEAR[0], hi=NEAR[1]):
    """Whether a decided verdict lies near the threshold: its Holm p, or its Holm p under
    any rescoring with other sampling seeds (``mc_robustness``), in [``lo``, ``hi``)."""
    if e["word"] not in DIRECTION.values():
        return False
    rescored = []
    for claims in (v2.get("mc_robustness") or {}).values():
        rescored += (claims.get(e["claim"]) or {}).get("p_holm") or []
    return any(p is not None and lo <= p < hi for p in [e["p_holm"], *rescored])


def _nll_claims(v3=None):
    """[(rival, word, BBB − rival, 95 % interval, (Holm p, family size, largest Holm p under
    another draw), near)] of notebook 06's test-NLL claims against this notebook's rivals
    (``v3``: its summary, helpers.alternatives_report.load_summary() when None; False: none),
    lower is better; ``near``: a decided verdict whose Holm p, in the test or under another
    draw of the predictive samples (``v3["mc_robustness"]``), lies in ``NEAR`` (the rule
    ``_near`` applies to this notebook's claims); [] when there are none."""
    if v3 is False:
        return []
    if v3 is None:
        from .alternatives_report import load_summary
        v3 = load_summary()
    out = []
    for claim, res in (((v3 or {}).get("families") or {}).get("test NLL") or {}).items():
        rival = _claim(claim)[0]
        tt = res.get("t_test") or {}
        if rival not in RIVALS or tt.get("mean_diff") is None:
            continue
        sign = 1.0 if claim.startswith("bbb < ") else -1.0
        word = _direction(res["verdict"])
        rescored = ((((v3.get("mc_robustness") or {}).get("test NLL") or {}).get(claim) or {})
                    .get("p_holm") or [])
        near = word in DIRECTION.values() and any(
            p is not None and NEAR[0] <= p < NEAR[1] for p in [res.get("p_holm"), *rescored])
        ps = [p for p in rescored if p is not None]
        out.append((rival, word, sign * tt["mean_diff"],
                    sorted(sign * c for c in tt["ci"]) if tt.get("ci") else None,
                    (res.get("p_holm"), res.get("family_size"), max(ps) if ps else None), near))
    return out


def _lead(v2, es, nll=()):
    """The answer's lead, two plain sentences from the verdicts: where BBB stands on flagging
    Fashion-MNIST (each rival named under its verdict, *near the threshold* said), then its ECE
    against the rivals, and (``nll``: ``_nll_claims``) the rivals that beat it on test NLL, the
    proper score the ECE alone can hide."""
    n = len(v2["seeds"])

    def named(group, word):
        return _join(NOUNS[e["rival"]] + (" (near the threshold)" if _near(v2, e) else "")
                     for e in group if e["word"] == word)

    def open_(group, what):
        rest = [e for e in group if e["word"] not in DIRECTION.values()]
        return (f"not resolved at {n} seeds against " + _join(f"{NOUNS[e['rival']]}{what}"
                                                               for e in rest)) if rest else ""
    auroc = [e for e in es if e["high"]]
    bits = [f"{side} than {named(auroc, w)}" for side, w in
            (("better", "BBB better"), ("worse", "BBB worse")) if named(auroc, w)]
    one = ("BBB flags Fashion-MNIST " + " and ".join(bits) if bits else
           "BBB does not flag Fashion-MNIST better or worse than its rivals")
    if open_(auroc, "") and bits:
        one += "; " + open_(auroc, "")
    ece = [e for e in es if not e["high"]]
    bits = [f"{side} than " + _join(f"{NOUNS[e['rival']]}'s" + (
        " (near the threshold)" if _near(v2, e) else "") for e in ece if e["word"] == w)
            for side, w in (("lower", "BBB better"), ("higher", "BBB worse"))
            if any(e["word"] == w for e in ece)]
    two = ""
    if ece:
        lo_hi = _ece_range(v2)
        under = " (all four methods' under 1 %)" if lo_hi and lo_hi[1] < 0.01 else ""
        two = (f"Its 15-bin ECE{under} is " + " and ".join(bits) if bits else
               "Its 15-bin ECE is not separated from its rivals'")
        if open_(ece, "'s") and bits:
            two += ", and " + open_(ece, "'s")
    two = two and two + (_nll_words(nll, "; but ") or "")
    worse = {NOUNS[e["rival"]] for e in es if e["word"] == "BBB worse"}
    worse |= {NOUNS[r] for r, w, *_ in nll if w == "BBB worse"}
    ece_ok = ece and not any(e["word"] == "BBB worse" for e in ece)
    bottom = (f"At one shared budget, BBB is not the best uncertainty method here: "
              f"{_join(sorted(worse))} {'beats' if len(worse) == 1 else 'each beat'} it on at "
              "least one score" + (", though no rival's ECE is resolved below BBB's" if ece_ok
                                   else "") + ". " if worse else "")
    return f"**The answer:** {bottom}{one}." + (f" {two}." if two else "")


def _nll_words(nll, head):
    """'; but MC dropout and the deep ensemble beat it on test NLL (notebook 06's test;
    against MC dropout near the threshold)': the rivals notebook 06's test-NLL test decides
    against BBB (or for it), the near-threshold flag attached to its comparison; '' when
    none is decided."""
    beat = [r for r, w, *_ in nll if w == "BBB worse"]
    lose = [r for r, w, *_ in nll if w == "BBB better"]
    near = [NOUNS[r] for r, w, *c in nll if c[-1] and w in DIRECTION.values()]
    flag = f"; against {_join(near)} near the threshold" if near else ""
    if beat:
        return (f"{head}{_join(NOUNS[r] for r in beat)} {'beats' if len(beat) == 1 else 'beat'}"
                f" it on test NLL (notebook 06's test{flag})")
    if lose:
        return (f"{head.replace('but', 'and')}BBB has a lower test NLL than "
                f"{_join(NOUNS[r] for r in lose)} (notebook 06's test{flag})")
    return ""


def _answer_cell(v2, e):
    """One cell of the answer's table: the difference BBB − rival, its 95 % interval, the
    verdict, and Holm's p where the verdict lies near the threshold."""
    near = (f" (Holm p {_p(e['p_holm'])}, near the {ALPHA:g} threshold; section 3)"
            if _near(v2, e) else "")
    return f"{effect_words(e, False)}: {e['word']}{near}"


NEAR_WORDS = ("*Near the threshold*: a decided verdict whose Holm p, in the test or under "
              "another draw of the predictive samples (section 3), lies from {lo:g} up to "
              "{hi:g}.")


def _v3_claims(v2, v3=None):
    """[(rival, BBB − rival, 95 % interval)] of the AUROC family's claims that notebook 06
    adds (``v3``: its summary, helpers.alternatives_report.load_summary() when None; False:
    none), signed as ``effects`` signs this notebook's."""
    if v3 is None:
        from .alternatives_report import load_summary
        v3 = load_summary()
    family = next(iter(FROM_V3))
    ours = set((v2.get("families") or {}).get(family) or {})
    out = []
    for claim, res in ((v3 or {}).get("families") or {}).get(family, {}).items():
        tt = res.get("t_test") or {}
        if claim in ours or tt.get("mean_diff") is None:
            continue
        sign = 1.0 if claim.startswith("bbb < ") else -1.0
        ci = sorted(sign * c for c in tt["ci"]) if tt.get("ci") else None
        out.append((_claim(claim)[0], sign * tt["mean_diff"], ci))
    return out


def _outside(v2, v3=None):
    """[(rival, BBB − rival, 95 % interval)] of notebook 06's failed fits in the AUROC family
    with a higher mean AUROC than BBB (no verdict against them), those whose interval excludes
    zero first."""
    from .alternatives_report import failed_fits, load_summary
    v3 = load_summary() if v3 is None else v3
    if not v3:
        return []
    failed = failed_fits(v3)
    above = [(r, d, ci) for r, d, ci in _v3_claims(v2, v3) if r in failed and ci and d < 0]
    return sorted(above, key=lambda x: x[2][1] >= 0)


def outside_text(v2, v3=None):
    """Section 3, after the AUROC family: the failed fits of notebook 06 that score a higher
    mean AUROC than BBB, each with its interval, said apart by whether the interval excludes
    zero (no verdict against a failed fit); empty when there are none."""
    from . import alternatives_final as F
    from .alternatives_report import SHORT
    above = _outside(v2, v3)
    if not above:
        return ""

    def name(r, d, ci):
        return (f"{SHORT.get(r, r)} (BBB − it {_signed(d, 3)} [{_signed(ci[0], 3)}, "
                f"{_signed(ci[1], 3)}]" + (", on the subset ‡" if r in F.ALL_LAYER else "") + ")")
    clear = [x for x in above if x[2][1] < 0]
    mean = [x for x in above if x[2][1] >= 0]
    bits = []
    if clear:
        one = len(clear) == 1
        bits.append(_join(name(*x) for x in clear) + f" {'scores' if one else 'score'} a "
                    "higher AUROC than BBB (the interval excludes zero)")
    if mean:
        one = len(mean) == 1
        bits.append(_join(name(*x) for x in mean) + f" {'is' if one else 'are'} higher in "
                    "mean only (the interval contains zero)")
    text = "; ".join(bits)
    passed = [x for x in family_steps(v2, v3) if x["failed"] and x["passes"]]
    without = "."
    if passed:
        one = len(passed) == 1
        without = ("; without that rule, set after the test numbers, "
                   + _join(f"the claim against {SHORT.get(x['rival'], x['rival'])} (step "
                           f"{x['step']} of the table)" for x in passed)
                   + f" would pass {'its' if one else 'their'} Holm step and read *BBB "
                   + ("worse*." if all((x["diff"] or 0) < 0 for x in passed) else "better*."))
    return (f"**Failed fits above BBB.** " if len(above) > 1 else "**A failed fit above BBB.** ") \
        + text[0].upper() + text[1:] + ". No verdict is given against a failed fit" + without


def _nll_cell(c):
    """One test-NLL cell of the answer's table (``_nll_claims``' tuple): BBB − rival, its 95 %
    interval, the verdict, and for a decided verdict its Holm p in notebook 06's family (the
    family's size; where it lies near the threshold, the largest Holm p under another draw)."""
    _, word, d, ci, (p, m, worst), near = c
    holm = f"Holm p {p:.2g}, of {m}" if p is not None and m else ""  # as notebook 06 prints
    if near and worst is not None and (p is None or worst > p):
        holm += f"{'; ' if holm else ''}up to {worst:.2g} under other draws"
    if near:
        holm += f"{': ' if holm else ''}near the {ALPHA:g} threshold"
    return (f"{_signed(d, 4)}" + (f" [{_signed(ci[0], 4)}, {_signed(ci[1], 4)}]" if ci else "")
            + f": {word}" + (f" ({holm})" if holm and word in DIRECTION.values() else ""))


def answer_text(v2, recipe=None, v3=None):
    """The chapter's answer: a two-sentence lead (``_lead``, with notebook 06's test-NLL
    verdicts, ``_nll_claims``; ``v3``: notebook 06's summary, False: none), then a table of the
    six comparisons (each rival's AUROC and ECE difference BBB − rival with its 95 % interval
    and verdict; with notebook 06's test-NLL claims a third column, its NLL difference), the
    verdict words and what *near the threshold* means (``NEAR``), and (``recipe``:
    ``recipe_facts``, read from the records when not given; omitted when they are missing) one
    sentence on the shared budget: this BBB's
    test error beside notebook 01's at the same width and the paper's. The ECEs' scale is
    under the scores table (``ece_sign_words``), the failed fits in section 3."""
    if v2 is None:
        return "*No final runs yet: the answer is not computed.*"
    n = len(v2["seeds"])
    es = effects(v2)
    nll = _nll_claims(v3)
    near = (" " + NEAR_WORDS.format(lo=NEAR[0], hi=NEAR[1])) if any(_near(v2, e) for e in es) \
        else ""
    by = {(e["rival"], e["high"]): e for e in es}
    nll_by = {c[0]: c for c in nll}
    rows = ["| BBB against | AUROC on Fashion-MNIST (higher is better) | ECE on MNIST (lower "
            "is better) |" + (" test NLL on MNIST (lower is better; notebook 06's test) |"
                              if nll else ""), "|---|---|---|" + ("---|" if nll else "")]
    for r in RIVALS:
        cells = [_answer_cell(v2, by[(r, h)]) if (r, h) in by else "—" for h in (True, False)]
        if nll:
            cells.append(_nll_cell(nll_by[r]) if r in nll_by else "—")
        rows.append(f"| {LABELS[r]} | " + " | ".join(cells) + " |")
    interim = (" *(Interim: not every run is in; these are not the final verdicts.)*"
               if v2["interim"] else "")
    facts = recipe_facts(v2) if recipe is None else recipe
    budget = ""
    if facts:
        paper = (f" and the paper's {facts['paper']:.2f} %" if facts.get("paper") else "")
        riv = _nb01_rivals(v2)
        rivals = ("; the rivals fall short of notebook 01's networks too ("
                  + _join(f"{LABELS[m]} {a:.2f} % against {NB01_NETS.get(m, 'its')} "
                          f"{b:.2f} %" for m, (a, b) in riv.items())
                  + "), so the budget limits every method"
                  if riv else "")
        budget = (f"\n\nAll four are compared at one shared budget (searches of the same size, "
                  f"at most {facts['max_epochs']} epochs from random weights; the ensemble "
                  "reuses MAP's choice), not each at its best: this BBB's test error is "
                  f"{facts['here']:.2f} %, against {facts['nb01']:.2f} % for notebook 01's BBB "
                  f"at the same width{paper}{rivals} (section 3 gives BBB's two recipes).")
    return (_lead(v2, es, nll) + "\n\n" + "\n".join(rows) + f"\n\nEach cell: the mean "
            f"difference BBB − rival over {n} paired seeds, its 95 % interval, and the verdict "
            "of the test corrected for the number of comparisons (Holm p, section 2): *BBB "
            "better* or *BBB worse* when it decides that direction, *not resolved at "
            f"{n} seeds* when it decides neither." + near + (
                " The test-NLL column is notebook 06's test on the same runs, corrected in its "
                "own Holm family. A lower ECE beside a higher NLL: BBB's confidence is closer "
                "to its accuracy on average, but its probabilities score worse as a whole (the "
                "NLL also rewards confident correct predictions)."
                if nll else "") + interim + budget)


NB01_NETS = {"map": "its plain network's", "mc_dropout": "its dropout network's"}


def _nb01_rivals(v2):
    """{method: (test error here, notebook 01's at the same width, in %)} for MAP and MC
    dropout against notebook 01's plain and dropout networks, as notebook 06 reads them
    (helpers.alternatives_report._nb01_rivals); {} without them."""
    from .alternatives_report import _nb01_rivals as rivals
    return rivals(v2) if v2 else {}


def _recipes(v2, v1_row=None, setting=None):
    """(BBB's test error entry here, notebook 01's plan_v1 row of BBB at 2×400, BBB's chosen
    setting here), read from their records when not given; any may be None."""
    import json as _json
    from .utils import results_dir
    bbb = (v2 or {}).get("table", {}).get("bbb", {}).get("full", {}).get("test_error")
    if v1_row is None:
        path = results_dir() / "01_mnist_classification" / "plan_v1" / "summary.json"
        if path.exists():
            rows = _json.loads(path.read_text())["rows"]
            v1_row = next((r for r in rows if r["H"] == 400 and r["key"] == "bbb_mixture"), None)
    if setting is None:
        choice = A.chosen("bbb")
        setting = choice and dict(choice["config"], epochs=choice["epochs"])
    return bbb, v1_row, setting


def recipe_facts(v2, v1_row=None, setting=None):
    """{here, nb01, paper: test errors in %, max_epochs}: BBB's test error here, notebook 01's
    at the same width and the paper's (its Table 1, 2×400 scale mixture), for the answer's last
    sentence; None when a record is missing or BBB here is not the weaker of the two."""
    bbb, v1_row, setting = _recipes(v2, v1_row, setting)
    if not (bbb and v1_row and setting) or bbb["mean"] <= v1_row["mean"]:
        return None
    from .classification import PAPER_TABLE1
    paper = PAPER_TABLE1["bbb_mixture"].get(v1_row.get("H"))
    return {"here": 100 * bbb["mean"], "nb01": 100 * v1_row["mean"], "max_epochs": A.MAX_EPOCHS,
            "paper": paper and 100 * paper}


def recipe_text(v2, v1_row=None, setting=None):
    """Why BBB's test error here differs from notebook 01's Adam recipe at the same width: the
    two recipes, read from their records (notebook 01's plan_v1 summary, BBB's final runs)."""
    bbb, v1_row, setting = _recipes(v2, v1_row, setting)
    if not (bbb and v1_row and setting):
        return ""
    r = v1_row["recipe"]
    start = (f"starts from a network trained {r['init_epochs']} epochs without noise (a *warm "
             f"start*) and trains {v1_row['epochs']} more" if r.get("init_from") else
             f"trains {v1_row['epochs']} epochs from random weights")
    decay = (f", its learning rate {r['lr']:g} shrunk by {r['lr_decay']:g} per epoch"
             if r.get("lr_decay", 1.0) != 1.0 else f" at a constant learning rate {r['lr']:g}")
    grid = A.SEARCHES["bbb"]["grid"]["rho_init"]
    edge = " (the edge of its grid)" if setting["rho_init"] in (min(grid), max(grid)) else ""
    pi = ((f", and its scale-mixture prior has π = {r['pi']:g}", f" and π = {setting['pi']:g}")
          if r.get("pi") is not None and setting.get("pi") not in (None, r["pi"]) else ("", ""))
    return (f"**Why BBB's test error here is not notebook 01's at the same width** (the "
            "answer gives both). A different recipe: notebook "
            f"01's BBB {start}{decay}, with {r['samples']} weight samples per step and "
            f"ρ₀ = {_signed(r['rho_init'], 0).lstrip('+')}{pi[0]}; here BBB trains "
            f"{setting['epochs']} epochs from random "
            f"weights at a constant learning rate {setting['lr']:g}, with {setting['samples']} "
            f"sample per step, ρ₀ = {_signed(setting['rho_init'], 0).lstrip('+')}{edge}{pi[1]}, "
            "because every searched method here gets a search of the same size and the same "
            "budget. Which of these "
            "differences makes the gap is not tested.")


def test_samples(v2):
    """{method: S}, the number of members averaged in each method's predictive distribution at
    test, read from the final runs' records (``v2["inputs"]``): the weight draws of BBB, the
    dropout masks of MC dropout, the networks of the deep ensemble, 1 for MAP; None where no
    record says."""
    root = Path(__file__).resolve().parent.parent
    out = {}
    for rel in (v2 or {}).get("inputs") or []:
        path = root / rel
        if not path.exists():
            continue
        rec = json.loads(path.read_text())
        m = rec.get("method")
        if m not in ROWS or m in out:
            continue
        out[m] = (rec.get("test_samples") or len(rec.get("member_seeds") or []) or 1)
    return out


def scores_rows(v2, metrics=("test_error", "nll", "ece", "auroc_entropy", "auroc_mi"),
                samples=None):
    """(header, rows) of the four methods' scores: mean ± sd over the seeds (error in %), after
    the number S of members each method averages at test (``samples``: ``test_samples``, read
    from the records when not given)."""
    samples = test_samples(v2) if samples is None else samples
    names = {"test_error": "test error (%)", "nll": "NLL", "brier": "Brier", "ece": "ECE",
             "auroc_entropy": "AUROC (entropy)", "auroc_mi": "AUROC (MI)"}
    rows = []
    for m in ROWS:
        cells = []
        for k in metrics:
            e = v2["table"].get(m, {}).get("full", {}).get(k)
            if e is None or e.get("mean") is None:
                cells.append("—")
                continue
            s = 100.0 if k == "test_error" else 1.0
            d = 2 if k == "test_error" else 3 if k.startswith("auroc") else 4
            cells.append(f"{s * e['mean']:.{d}f} ± {s * e['sd']:.{d}f}")
        rows.append([LABELS[m], str(samples.get(m, "—")), *cells])
    return ["method", "S", *(names[k] for k in metrics)], rows


def ece_sign_words(v2):
    """The four mean ECEs' range in percentage points, then why Table 5.2 cannot say which
    way a method is miscalibrated: the ECE is unsigned, and
    the stored runs keep no mean confidence; naming the method with the highest mean ECE (and
    whether it also has the lowest mean NLL, as a reader would ask)."""
    ece = {m: _mean(v2, m, "ece") for m in ROWS if _mean(v2, m, "ece") is not None}
    nll = {m: _mean(v2, m, "nll") for m in ROWS if _mean(v2, m, "nll") is not None}
    if not ece:
        return ""
    worst = max(ece, key=ece.get)
    also = (f"; yet the lowest mean NLL, {nll[worst]:.4f}" if nll and min(nll, key=nll.get)
            == worst else "")
    lo_hi = _ece_range(v2)
    scale = (f"All four mean ECEs lie between {lo_hi[0]:.4f} and {lo_hi[1]:.4f}: confidence "
             f"and accuracy differ by {100 * lo_hi[0]:.2f}–{100 * lo_hi[1]:.2f} percentage "
             "points, weighted by the images in each bin"
             + (", all under 1 %. " if lo_hi[1] < 0.01 else ". ") if lo_hi else "")
    return (f"**The ECE's scale, and no sign.** {scale}The ECE measures how far confidence is "
            f"from accuracy, not in which direction: it cannot say whether {NOUNS[worst]} (the highest mean ECE, "
            f"{ece[worst]:.4f}{also}) is over- or under-confident, and the stored runs keep no "
            "mean confidence that would tell.")


GRID_WORDS = {"lr": "learning rate", "weight_decay": "weight decay", "dropout": "dropout rate",
              "rho_init": "ρ₀"}
_SUP = str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹")


def _num(v):
    """A grid value as the text writes numbers: '0.0003', '3×10⁻⁵', '−7'."""
    t = f"{v:g}"
    if "e" in t:
        mant, exp = t.split("e")
        t = ("" if mant == "1" else f"{mant}×") + "10" + str(int(exp)).translate(_SUP)
    return t.replace("-", "−")


def prior_words(config):
    """'prior (fixed, not searched): π = 0.5, −log σ1 = 0, −log σ2 = 6' (the paper's
    parametrisation): a BBB record's scale-mixture prior, read from its config."""
    return (f"prior (fixed, not searched): π = {config['pi']:g}, "
            f"−log σ1 = {config['neg_log_sigma1']:g}, −log σ2 = {config['neg_log_sigma2']:g}")


def prior_fixed_words(config=None):
    """Why BBB's prior is not searched, when it is the project's point of the paper's MNIST
    grid (helpers.profiles.MNIST_MIXTURE): every search varies the same number of settings
    (its grid's size said), and one more would multiply the trials. ``config``: the chosen
    BBB config (read when None); empty otherwise."""
    from .profiles import MNIST_MIXTURE
    if config is None:
        c = A.chosen("bbb")
        config = (c or {}).get("config") or {}
    if "pi" not in config:
        return ""
    pi, s1, s2 = MNIST_MIXTURE
    if not (math.isclose(config["pi"], pi)
            and math.isclose(math.exp(-config["neg_log_sigma1"]), s1)
            and math.isclose(math.exp(-config["neg_log_sigma2"]), s2)):
        return ""
    sizes = [len(v) for v in A.SEARCHES["bbb"]["grid"].values()]
    if len(set(sizes)) != 1:
        return ""
    trials = math.prod(sizes)
    return (f"**BBB's prior is not searched:** its scale mixture (π = {config['pi']:g}, "
            f"−log σ1 = {config['neg_log_sigma1']:g}, −log σ2 = {config['neg_log_sigma2']:g}) "
            "is a point of the paper's MNIST grid, fixed before the runs, because every search "
            f"varies {_WORDS.get(len(sizes), str(len(sizes))).lower()} settings over "
            f"{_WORDS.get(sizes[0], str(sizes[0])).lower()} values each ({trials} trials) and "
            f"one more would take {trials * sizes[0]}.")


def choices_rows(choices=None):
    """(header, rows): per method, what its search varied (grid values), what validation NLL
    chose (with its epochs) and which of the choices sit at an edge of the grid."""
    if choices is None:
        choices = {m: A.chosen(m) for m in ("map", "mc_dropout", "bbb")}
    rows = []
    for m in ("map", "mc_dropout", "bbb"):
        grid = A.SEARCHES[m]["grid"]
        searched = "; ".join(f"{GRID_WORDS.get(k, k)} " + ", ".join(_num(v) for v in vals)
                             for k, vals in grid.items())
        c = choices.get(m)
        if c is None:
            rows.append([LABELS[m], searched, "no choice yet", "—", "—"])
            continue
        chosen = ", ".join(f"{GRID_WORDS.get(k, k)} {_num(c['config'][k])}" for k in grid)
        if m == "bbb" and "pi" in c["config"]:  # its scale-mixture prior: fixed
            chosen += "; " + prior_words(c["config"])
        edge = [GRID_WORDS.get(k, k) for k, vals in grid.items()
                if c["config"][k] in (min(vals), max(vals))]
        if c["epochs"] == A.MAX_EPOCHS:
            edge.append("epochs (the most allowed)")
        rows.append([LABELS[m], searched, chosen, str(c["epochs"]), ", ".join(edge) or "none"])
    rows.append([LABELS["ensemble"], "—", "MAP's network of the same seed and four more with "
                 "MAP's chosen settings, from seeds of their own (not shared between seeds)",
                 "—", "as MAP"])
    return ["method", "searched (Adam)", "chosen on validation NLL", "epochs",
            "at an edge of its grid"], rows


def effects_rows(v2):
    """(header, rows) of the six comparisons: both means, BBB − rival with its 95 % interval,
    Holm's p (and the family it is corrected over) and the plain verdict, flagged *near the
    threshold* as the answer flags it (``_near``)."""
    rows = []
    for e in effects(v2):
        d = _digits(e)
        name = METRIC_NAMES.get(e["metric"], e["metric"])
        rows.append([f"{name}: BBB vs {LABELS[e['rival']]}",
                     f"{e['bbb']:.{d}f}", f"{e['other']:.{d}f}",
                     f"{_signed(e['diff'], d)} [{_signed(e['ci'][0], d)}, "
                     f"{_signed(e['ci'][1], d)}]",
                     ("higher" if e["high"] else "lower"),
                     f"{_p(e['p_holm'])} (of {e['family_size']})",
                     e["word"] + (" (near the threshold)" if _near(v2, e) else "")])
    return ["comparison", "BBB", "rival", "BBB − rival [95 % interval]", "better is",
            "p (Holm, family size)", "verdict"], rows


def _excludes(e):
    """What the 95 % interval of e's difference rules out, in plain words."""
    d = _digits(e)
    lo, hi = e["ci"]
    gain, loss = (hi, -lo) if e["high"] else (-lo, hi)  # largest BBB gain, largest BBB deficit
    if e["word"] == "BBB better":
        return f"the interval excludes zero and puts BBB's gain between {-loss:.{d}f} and {gain:.{d}f}"
    if e["word"] == "BBB worse":
        return (f"the interval excludes zero and puts BBB's deficit between {-gain:.{d}f} and "
                f"{loss:.{d}f}")
    return (f"the interval contains zero, and excludes a gain of BBB above {gain:.{d}f} and a "
            f"deficit above {loss:.{d}f}")


def family_ps(v2, family, v3=None):
    """{claim: unadjusted p} of every claim in ``family`` as declared: this notebook's claims
    from ``v2``, and for a family shared with notebook 06 (the AUROC one) its other claims from
    notebook 06's summary ``v3`` (helpers.alternatives_report.load_summary() when None; False:
    this notebook's claims only). A claim without a p counts as p = 1, as Holm counts it."""
    if v3 is None:
        from .alternatives_report import load_summary
        v3 = load_summary()
    out = {c: (r.get("t_test") or {}).get("p") for c, r in v3["families"].get(family, {}).items()
           } if v3 and family in FROM_V3 else {}
    out.update({c: (r.get("t_test") or {}).get("p") for c, r in v2["families"][family].items()})
    return {c: 1.0 if p is None else p for c, p in out.items()}


def needed_difference(v2, e, v3=None, alpha=ALPHA):
    """(difference, bar, k): the mean difference BBB − rival, in size, that claim ``e``
    (``effects``) would need at its own spread of per-seed differences (sd, n) to hold, given
    the other p-values of its family as they are (``family_ps``): ``bar``, the largest
    unadjusted p at which it holds under Holm's step-down (notebook 04's
    ``helpers.stats.holm_p_needed``), is alpha / ``k``, k the claims left at its step;
    the paired t-test's two-sided p at that difference equals the bar. None without a
    spread."""
    from .stats import holm_p_needed
    from .stats import t_ppf
    if not e.get("sd_diff") or not e.get("n") or e["n"] < 2:
        return None
    ps = family_ps(v2, e["family"], v3)
    bar = holm_p_needed([p for c, p in ps.items() if c != e["claim"]], alpha)
    return t_ppf(1 - bar / 2, e["n"] - 1) * e["sd_diff"] / e["n"] ** 0.5, bar, round(alpha / bar)


# notebook 06's methods in the AUROC family, in one line each (defined where their p-values are)
METHOD_WORDS = {
    "ivon": "*IVON*, a variational method with an Adam-like optimiser",
    "laplace_ll_kron": "*last-layer Laplace*, a Gaussian fitted around the MAP weights from the "
                       "curvature of the loss (not the Laplace *prior* of the appendix), for the "
                       "output layer's weights only",
    "laplace_diag": "*all-layer diagonal Laplace*, such a Gaussian over every weight, each with "
                    "only its own curvature",
    "laplace_kron": "*all-layer KFAC Laplace*, every weight, each layer's curvature "
                    "approximated as a Kronecker product",
}


def family_steps(v2, v3=None, alpha=ALPHA):
    """Holm's step-down over the AUROC family (this notebook's three claims and notebook 06's
    others), one dict per claim in order of unadjusted p: rival, p, its step, the bar
    alpha / (claims left), whether it passes (every earlier step passed and p < bar), BBB −
    rival, whether the rival is a failed fit (helpers.alternatives_report.failed_fits) and
    whether it was scored on the all-layer subset; [] when the family is this notebook's
    alone."""
    from . import alternatives_final as F
    from .alternatives_report import failed_fits, load_summary
    v3 = load_summary() if v3 is None else v3
    family = next(iter(FROM_V3))
    ps = family_ps(v2, family, v3)
    if not v3 or len(ps) <= len(v2["families"][family]):
        return []
    failed = failed_fits(v3)
    diffs = {e["rival"]: e["diff"] for e in effects(v2) if e["family"] == family}
    diffs.update({r: d for r, d, _ in _v3_claims(v2, v3)})
    out, going, m = [], True, len(ps)
    for step, (c, p) in enumerate(sorted(ps.items(), key=lambda kv: kv[1]), 1):
        rival = _claim(c)[0]
        bar = alpha / (m + 1 - step)
        going = going and p < bar
        out.append({"rival": rival, "p": p, "step": step, "k": m + 1 - step, "bar": bar,
                    "passes": going, "diff": diffs.get(rival), "failed": rival in failed,
                    "subset": rival in F.ALL_LAYER})
    return out


def family_text(v2, v3=None, alpha=ALPHA):
    """The AUROC family as Holm's correction reads it: notebook 06's methods defined in a
    short list, then a table of its claims (this notebook's three and notebook 06's others) in
    order of unadjusted p, each with the bar it is tested at and whether it passes
    (``family_steps``), the failed fits (no verdict against them; the rule that withholds it
    was set after the test numbers) and the all-layer subset marked; empty when the family is
    this notebook's alone."""
    from .alternatives_report import SHORT
    steps = family_steps(v2, v3, alpha)
    if not steps:
        return ""
    family = next(iter(FROM_V3))
    m, n_ours = len(steps), len(v2["families"][family])
    theirs = [r for r in METHOD_WORDS if r in {x["rival"] for x in steps}]
    rows = ["| step | BBB against | scored on | BBB − rival | p | Holm bar | passes? |",
            "|---|---|---|---|---|---|---|"]
    stop = next((x["step"] for x in steps if not x["passes"]), None)
    for x in steps:
        mark = "†" if x["failed"] else ""
        d = "—" if x["diff"] is None else _signed(x["diff"], 3)
        if x["passes"]:
            word = "yes: " + ("no verdict (a failed fit †)" if x["failed"] else
                              "BBB better" if (x["diff"] or 0) > 0 else "BBB worse")
        elif x["step"] == stop:
            word = "no: the steps stop here"
        else:
            word = "not reached"
        name = LABELS.get(x["rival"]) or SHORT.get(x["rival"], x["rival"])
        rows.append(f"| {x['step']} | {name}{mark} | "
                    f"{'subset ‡' if x['subset'] else 'full test sets'} | {d} | {_p(x['p'])} | "
                    f"{alpha:g}/{x['k']} = {x['bar']:.3g} | {word} |")
    text = (f"**The AUROC family.** Holm's correction for the AUROC claims runs over {m} "
            f"claims: BBB against this notebook's {n_ours} rivals and against the "
            f"{m - n_ours} other method{'s' if m - n_ours != 1 else ''} of "
            "[notebook 06](06_alternatives.ipynb)"
            + (":\n\n" + "\n".join(f"- {METHOD_WORDS[r]}." for r in theirs) if theirs else ".")
            + f"\n\nIn order of their unadjusted p, each claim is tested at {alpha:g} divided by "
            "the number of claims not yet passed (its *Holm bar*); the steps stop at the first "
            "claim whose p is not below its bar.\n\n" + "\n".join(rows))
    if any(x["failed"] for x in steps):
        text += ("\n\n† A *failed fit*: the 95 % interval of its test NLL minus that of the MAP "
                 "network it wraps lies above zero, so notebook 06 gives no verdict against it. "
                 "Its claim stays in the family, which can only make the other verdicts harder "
                 "to reach; the rule that withholds its verdict was set after the test numbers "
                 "([why](../docs/choices.md#notebook-06s-laplace-rows-refitted)).")
    sub = A.LAPLACE["all_layer_subset"]
    if any(x["subset"] for x in steps):
        text += (f"{' ' if any(x['failed'] for x in steps) else chr(10) * 2}‡ Compared on a "
                 f"subset of {sub['test']:,} MNIST and {sub['ood']:,} Fashion-MNIST test images, "
                 "the same for every seed (BBB scored on it too), not on the full test sets.")
    return text


def _short(method):
    """A method's short name: notebook 06's (helpers.alternatives_report.SHORT), else ours."""
    from .alternatives_report import SHORT
    return SHORT.get(method) or NOUNS.get(method, method)


def _ordinal(k):
    return {1: "first", 2: "second", 3: "third", 4: "fourth", 5: "fifth", 6: "sixth",
            7: "seventh"}.get(k, f"{k}th")


def effects_text(v2, v3=None):
    """The table's reading, beyond what its intervals show at a glance: for the comparisons not
    resolved, the gains and deficits their interval still allows (for a lower-is-better score
    also as a share of the two methods' means), then the smallest mean difference these seeds
    could have resolved at each one's spread, with its Holm bar (``needed_difference``); the
    decided ones are the answer's, not repeated. Empty when every comparison is decided."""
    n = len(v2["seeds"])
    open_ = [e for e in effects(v2) if e["word"] not in DIRECTION.values()]
    if not open_:
        return ""

    def allows(e):
        d = _digits(e)
        lo, hi = e["ci"]
        gain, loss = (hi, -lo) if e["high"] else (-lo, hi)
        name = METRIC_NAMES.get(e["metric"], e["metric"])
        means = [_mean(v2, m, e["metric"]) for m in ("bbb", e["rival"])]

        def share(x, first):
            """' (about 17 % of either method's mean ECE)': x against the two means."""
            if e["high"] or not all(means):
                return ""
            pc = sorted(100 * x / m for m in means)
            span = f"{pc[0]:.0f}" + (f"–{pc[1]:.0f}" if f"{pc[0]:.0f}" != f"{pc[1]:.0f}" else "")
            return (f" (about {span} % of either method's mean {name})" if first
                    else f" (about {span} %)")
        return (f"against {NOUNS[e['rival']]} on {name}, the interval allows BBB up to "
                f"{gain:.{d}f} better{share(gain, True)} or {loss:.{d}f} worse"
                f"{share(loss, False)}")

    def needed(e):
        need = needed_difference(v2, e, v3)
        if not need:
            return None
        k = need[2]
        bar = f"{ALPHA:g}/{k}" if k > 1 else f"{ALPHA:g}"
        ps = family_ps(v2, e["family"], v3)
        m = len(ps)
        others = sorted((p, c) for c, p in ps.items() if c != e["claim"])
        ahead = (f"; it would then rank ahead of {_short(_claim(others[m - k][1])[0])}"
                 if m > 1 and k > 1 and m - k < len(others) else "")
        step = (f", the {_ordinal(m + 1 - k)} of the family's {m} Holm steps{ahead}"
                if m > 1 and k > 1 else "")
        return (f"{need[0]:.{_digits(e)}f} in {METRIC_NAMES.get(e['metric'], e['metric'])} "
                f"against {NOUNS[e['rival']]} (its Holm bar would be {bar}{step})")
    smallest = [x for x in (needed(e) for e in open_) if x]
    said = "; ".join(allows(e) for e in open_)
    return ("**What the unresolved comparisons rule out** (each interval is that one "
            "comparison's, unadjusted). " + said[0].upper() + said[1:] + "."
            + (f" The smallest mean differences these {n} seeds could have resolved at this "
               "spread: " + _join(smallest) + "." if smallest else ""))


def robustness_words(v2):
    """Whether any verdict rests on one draw of the predictive samples, in plain words (the
    same reading as ``robustness_text``, verdicts written as directions)."""
    text = _robustness(v2, "against ", _direction,
                       "Do the verdicts rest on one draw of the predictive samples?",
                       ("lies near the threshold:", "lie near the threshold:"))
    return text.replace(" Rescored with each of", " (A *sampling seed* fixes the test-time "
                        "draws of BBB's weights and of MC dropout's masks; MAP and the ensemble "
                        "draw nothing.) Rescored with each of", 1)


def edges_words(choices=None):
    """The choices at an edge of their grid (``choices_rows``' last column) and what that means
    for the verdicts; empty when none is at an edge."""
    header, rows = choices_rows(choices)
    at = [f"{m} ({e.replace(' (the most allowed)', ', the most allowed')})" for m, *_, e in rows
          if e not in ("none", "—", "as MAP")]
    if not at:
        return ""
    rho = ""
    bbb = (choices or {}).get("bbb") if choices is not None else A.chosen("bbb")
    fixed = prior_fixed_words((bbb or {}).get("config") or {})
    if bbb and "rho_init" in bbb.get("config", {}):
        r = bbb["config"]["rho_init"]
        rho = (f" (ρ₀ = {_signed(r, 0).lstrip('+')} starts every σ at "
               f"{math.log1p(math.exp(r)):.1g})")
    return ("**Choices at an edge of their grid:** " + "; ".join(at) + ". BBB's ρ₀ sits at the "
            f"end with the least initial posterior uncertainty{rho}; the deep ensemble's "
            "members are MAP networks. The grids were fixed before any test number of these "
            "runs was seen, and are not widened, so each verdict is about these grids: a "
            "wider grid or longer training could move a choice at an edge, and with it a "
            "verdict." + (f"\n\n{fixed}" if fixed else ""))


def cost_words(recs=None, trials=None):
    """One sentence on what training these runs took, in notebook 06's measure: training time
    (``train_s`` of the final runs, the training loops alone, test-time scoring left out; the
    ensemble's record counts all five networks, MAP's own included), summed over the seeds, and
    per method the mean of its per-seed ratios to MAP's network of the same seed (as
    helpers.alternatives_final.analysis computes notebook 06's cost column); then the
    searches' trials in notebook 06's and the runtimes table's measure (each trial's process
    wall time, ``process_wall_s``, its validation scoring included; the row's ``wall_s`` where
    a record lacks it, as helpers.alternatives_report.runtime_text reads them). ``recs``:
    helpers.alternatives_final.records(); ``trials``: {method: [trial record]}; empty before
    any record."""
    from . import alternatives_final as F
    recs = F.records() if recs is None else recs
    if trials is None:
        trials = {}
        for m in ROWS:
            if m in A.SEARCHES:
                paths = [A.trial_path(m, c) for c in A.configs(m)]
                trials[m] = [json.loads(q.read_text()) for q in paths if q.exists()]
    ok = {k: r for k, r in recs.items()
          if k[0] in ROWS and not r.get("failed") and r.get("train_s") is not None}
    hours = {m: round(sum(r["train_s"] for (mm, _), r in ok.items() if mm == m) / 3600, 2)
             for m in ROWS}
    hours = {m: h for m, h in hours.items() if h}
    if not hours:
        return ""
    ratio = {}
    for m in ROWS:
        rr = [r["train_s"] / ok[("map", s)]["train_s"] for (mm, s), r in ok.items()
              if mm == m and ok.get(("map", s), {}).get("train_s")]
        if rr and m != "map":
            ratio[m] = sum(rr) / len(rr)
    search = sum(r.get("process_wall_s") or (r.get("row") or {}).get("wall_s") or 0
                 for rr in trials.values() for r in rr)
    n = len({s for (m, s) in ok})
    return (f"**Training time** (the training loops alone, one CPU thread per run, as notebook "
            f"06's cost column counts it), summed over the {n} seed{'s' if n != 1 else ''}: "
            + _join(f"{NOUNS[m]} {h:.2f} hours" if i == 0 else f"{NOUNS[m]} {h:.2f}"
                    for i, (m, h) in enumerate(hours.items()))
            + (" (the deep ensemble's hours count its five networks, MAP's own among them)"
               if "ensemble" in hours else "")
            + (". Against MAP's network of the same seed (the mean of the "
               f"{n} per-seed ratios, as in notebook 06's cost column, so not the ratio of the "
               "summed hours): " + _join(f"{NOUNS[m]} {r:.1f}×" for m, r in ratio.items())
               if ratio else "")
            + ("; timings are noisy (the deep ensemble trains five MAP networks yet shows "
               f"{ratio['ensemble']:.1f}×)" if "ensemble" in ratio else "")
            + (f". The searches' {sum(len(v) for v in trials.values())} trials took "
               f"{search / 3600:.1f} hours more (whole runs, validation scoring included, as "
               "notebook 06 counts them)" if search else "")
            + ".")


SIGMA_CHECK = Path(A.NB) / f"v{A.VERSION}" / "bbb_sigma_check.json"


def _span(xs, digits=3):
    """'4.5' or '4.49–4.51': a range at ``digits`` significant digits, one number where the
    ends agree."""
    xs = list(xs)
    a, b = f"{min(xs):.{digits}g}", f"{max(xs):.{digits}g}"
    return a if a == b else f"{a}–{b}"


def _nb01_ratios():
    """(shifted, learned): the drift ratios (``helpers.table1.drift_ratio``) of notebook 01's
    σ readings, as its section 3 reads them (the diagnostics' runs at their last epoch and the
    seed-0 reruns of its Adam recipe), split by ``shifted_uniformly``; ([], []) without them."""
    from . import posterior_diagnostics as PD
    from .table1 import drift_ratio
    diag, measured = PD.load() or {}, PD.adam_load() or {}
    layers = [v["trace"][-1]["layers"] for v in (diag.get("runs") or {}).values()
              if v.get("trace")]
    layers += [e["layers"] for e in (measured.get("widths") or {}).values()]
    shifted = [drift_ratio(L) for L in layers if PD.shifted_uniformly(L)]
    return shifted, [drift_ratio(L) for L in layers if not PD.shifted_uniformly(L)]


def sigma_words(v2, check=None, nb01=None, sigma2=None):
    """Below the scores table: whether BBB's σ learned in these runs (notebook 06's σ check,
    results/06_alternatives/v3/bbb_sigma_check.json: seeds of the final BBB runs trained again,
    σ read at the end; ``check`` its content), with the drift ratio notebook 01's rule reads
    set beside notebook 01's own ratios (``nb01``: ``_nb01_ratios()`` when None) and how far
    it lies from the rule's threshold; where σ's median ended (the prior's narrow σ₂ when it
    sits there); then what BBB's AUROC from the mutual information says (its sampled networks
    disagree more on Fashion-MNIST), the evidence this BBB is not a point estimate. ``sigma2``:
    the prior's narrow σ₂ (from BBB's chosen setting when None). Empty without the check."""
    from .utils import results_dir
    if check is None:
        path = results_dir() / SIGMA_CHECK
        check = json.loads(path.read_text()) if path.exists() else None
    seeds = (check or {}).get("seeds") or {}
    if not seeds:
        return ""
    from .posterior_diagnostics import _rule_numbers
    from .table1 import _ratios
    med = [lay["sigma_q"][1] for r in seeds.values() for lay in r["layers"].values()]
    top = [lay["sigma_q"][2] for r in seeds.values() for lay in r["layers"].values()]
    start = {r["sigma_start"] for r in seeds.values()}
    learned = not any(r.get("shifted_uniformly") for r in seeds.values())
    names = sorted(int(k) for k in seeds)
    exact = all((r.get("reproduced") or {}).get("exact") for r in seeds.values())
    text = (f"**Did BBB's σ learn, or stay at its start?** (The networks are not stored, so "
            f"seeds {_join(str(k) for k in names)} of the {len(v2['seeds'])} runs were trained "
            "again to read σ" + (", reproducing their stored scores exactly" if exact else "")
            + ".) ")
    if all("rho_drift_q" in lay for r in seeds.values() for lay in r["layers"].values()):
        nums = [_rule_numbers(r["layers"]) for r in seeds.values()]
        ratios = [t / m for t, m in nums]
        text += ("Notebook 01's rule calls σ *learned* when ρ's 95th-percentile change from its "
                 "start (the largest over the layers) exceeds 1.1 times the smallest layer's "
                 "median change, and *shifted uniformly* otherwise.\n\n"
                 f"- *The rule's reading.* Here the ratio of the two is {_ratios(ratios)} "
                 f"({_span(t for t, _ in nums)} against {_span(m for _, m in nums)}): "
                 + ("above 1.1 in every rerun, so σ learned." if learned else
                    "not above 1.1 in every rerun, so σ did not always learn."))
        shifted, up = _nb01_ratios() if nb01 is None else nb01
        if learned and up and max(ratios) < min(up):
            text += (f"\n- *But weakly.* Notebook 01's learned runs have ratios of {_ratios(up)}"
                     + (f", its runs that shifted uniformly at most {_ratios([max(shifted)])}; "
                        f"any threshold from {_ratios([max(shifted)])} to "
                        f"{_ratios([min(ratios)])} sorts every run of notebooks 01 and 06 the "
                        "same way, and one above " f"{_ratios([min(ratios)])} would call this σ "
                        "shifted uniformly." if shifted else
                        f"; a threshold above {_ratios([min(ratios)])} would call this σ "
                        "shifted uniformly."))
    else:
        text += ("By notebook 01's rule it " if learned else "Not in every rerun, by notebook "
                 "01's rule, did it ") + ("learned." if learned else "learn.")
    if sigma2 is None:
        choice = A.chosen("bbb")
        s2 = choice and choice["config"].get("neg_log_sigma2")
        sigma2 = math.exp(-s2) if s2 is not None else None
    at = [x for x in med if sigma2 and abs(x / sigma2 - 1) < 0.05]
    onto = (f" (in {len(at)} of the {len(med)} layer readings it sits at the prior's narrow "
            f"σ₂ = e{str(round(math.log(sigma2))).translate(_SUP)} ≈ "
            f"{sigma2:.2g})" if at else "")
    text += (f"\n- *Where σ ended.* Its median over a layer's weights ends at "
             f"{min(med):.2g}–{max(med):.2g}{onto}, "
             f"its 95th percentile at {min(top):.2g}–{max(top):.2g}, from {min(start):.1g} at "
             "the start ([details](../docs/06_details.md#bbbs-σ)): most σ moved together, and "
             "the spread apart is in the upper tail.")
    mi = (v2.get("table", {}).get("bbb", {}).get("full", {}).get("auroc_mi") or {}).get("mean")
    if mi is not None:
        text += (f"\n- *The stronger evidence* that this BBB is not a point estimate is its AUROC "
                 f"from the mutual information alone, {mi:.3f}: its sampled networks disagree "
                 "more on Fashion-MNIST than on MNIST, the part of the uncertainty that a single "
                 "network (MAP) cannot express.")
    return text


def scores_notes(v2):
    """The notes under the scores table, in reading order: the ECE's lack of sign, whether
    BBB's σ learned (``sigma_words``), and why BBB's test error is not notebook 01's."""
    return "\n\n".join(t for t in (ece_sign_words(v2), sigma_words(v2), recipe_text(v2)) if t)


CAPTIONS = {
    "ood-scores": "**Figure 5.1.** Each method's scores (Table 5.2): AUROC on Fashion-MNIST "
                  "(left, higher is better) and ECE on MNIST (right, lower is better); a dot "
                  "per seed, the vertical line the mean over the seeds; each method in its "
                  "colour of notebook 06, each mean a grey line. The ECE axis does not start "
                  "at zero (Table 5.2 gives the values; the note below the figure discusses "
                  "the ECE's scale).",
    "ood-differences": "**Figure 5.2.** The six comparisons of Table 5.3: a dot per paired "
                       "seed and, above the dots, the mean with its 95 % interval. As in "
                       "notebook 06's effects figure, right of zero is BBB better in both panels "
                       "(ECE: rival − BBB, Table 5.3's sign flipped). Colour: the verdict (blue BBB better, vermillion BBB worse, grey not resolved). "
                       "Beside each row, the verdict and its Holm p, corrected for the number "
                       "of comparisons; *(near)*: near the threshold, as defined under the "
                       "answer.",
    "priors-moons": "**Figure 5.3.** One network per prior on the moons (Table 5.4). Top two "
                    "rows: the predicted probability of class 1; bottom two: its standard "
                    "deviation over weight samples on a log colour scale (below {floor:g} in the "
                    "darkest colour), the dashed line 0.5 from the nearest training point; the "
                    "markers are the training points. *Laplace, s ~ half-Cauchy* fits only "
                    "roughly: its boundary is a wide tilted band, and its std a diffuse wash "
                    "with no sharp ridge.",
}


def caption(name):
    """The caption printed under figure ``name`` (its file name's suffix); the std maps' colour
    floor read from ``helpers.toy.STD_RANGE``."""
    if "{floor" not in CAPTIONS[name]:
        return CAPTIONS[name]
    from .toy import STD_RANGE
    return CAPTIONS[name].format(floor=STD_RANGE[0])


def _per_seed_diffs(v2, e):
    a = v2["table"]["bbb"]["full"][e["metric"]]
    b = v2["table"][e["rival"]]["full"][e["metric"]]
    va, vb = dict(zip(a["seeds"], a["per_seed"])), dict(zip(b["seeds"], b["per_seed"]))
    return [va[s] - vb[s] for s in e["seeds"] if s in va and s in vb]


def scores_figure(v2, metrics=("auroc_entropy", "ece")):
    """Per method, each seed's score (dots) and the mean (bar), one panel per score."""
    import matplotlib.pyplot as plt
    import numpy as np
    fig, axes = plt.subplots(1, len(metrics), figsize=(10, 3.2), constrained_layout=True)
    from matplotlib import patheffects
    rng = np.random.default_rng(0)
    colours = method_colours()
    halo = [patheffects.withStroke(linewidth=4.5, foreground="white")]
    for ax, k in zip(np.atleast_1d(axes), metrics):
        for i, m in enumerate(ROWS):
            e = v2["table"][m]["full"][k]
            y = i + rng.uniform(-0.12, 0.12, len(e["per_seed"]))
            ax.scatter(e["per_seed"], y, s=22, color=colours[m], edgecolor="black", lw=0.4,
                       zorder=3)
            ax.plot([e["mean"]] * 2, [i - 0.34, i + 0.34], color="0.55", lw=3, zorder=4,
                    path_effects=halo)
        ax.set_yticks(range(len(ROWS)), [LABELS[m] for m in ROWS])
        ax.set_ylim(len(ROWS) - 0.5, -0.5)
        better = "higher" if k.startswith("auroc") else "lower"
        ax.set_xlabel(f"{METRIC_NAMES.get(k, k)} ({better} is better)")
    np.atleast_1d(axes)[0].set_title("Shown Fashion-MNIST: AUROC of the predictive entropy",
                                     fontsize=10)
    np.atleast_1d(axes)[-1].set_title("MNIST test set: ECE", fontsize=10)
    fig.suptitle(f"Each dot one seed ({len(v2['seeds'])} seeds); grey vertical line: the mean; "
                 "colours: the methods, as in notebook 06", fontsize=10)
    return fig


def differences_figure(v2):
    """Each seed's difference (dots) and the mean with its 95 % interval (the bar the verdict
    reads, drawn above the dots), one panel per score, each row in its verdict's colour
    (``VERDICT_COLOURS``, notebook 06's). As in notebook 06's effects figure, right of zero is
    BBB better in every panel: BBB − rival where higher is better (AUROC), rival − BBB where
    lower is better (ECE)."""
    import matplotlib.pyplot as plt
    import numpy as np
    from matplotlib.lines import Line2D
    from matplotlib.ticker import MaxNLocator
    es = effects(v2)
    metrics = list(dict.fromkeys(e["metric"] for e in es))
    fig, axes = plt.subplots(1, len(metrics), figsize=(11, 3.4), constrained_layout=True)
    rng = np.random.default_rng(0)
    for ax, k in zip(np.atleast_1d(axes), metrics):
        group = [e for e in es if e["metric"] == k]
        flip = 1.0 if group[0]["high"] else -1.0  # right of zero: BBB better (notebook 06's)
        for i, e in enumerate(group):
            diffs = [flip * d for d in _per_seed_diffs(v2, e)]
            c = VERDICT_COLOURS.get(e["word"], VERDICT_COLOURS[None])
            ax.scatter(diffs, i + rng.uniform(-0.12, 0.12, len(diffs)), s=16,
                       color=c, alpha=0.55, edgecolor="none", zorder=3)
            mid, (lo, hi) = flip * e["diff"], sorted(flip * x for x in e["ci"])
            ax.errorbar(mid, i - 0.3, xerr=[[mid - lo], [hi - mid]], fmt="o",
                        color=c, capsize=3, ms=5, lw=2, zorder=4)
        ax.axvline(0, color="black", lw=0.8, ls=":")
        ax.set_yticks(range(len(group)),
                      [f"vs {LABELS[e['rival']]}\n{e['word']}{' (near)' if _near(v2, e) else ''}"
                       f"\n(Holm p {_p(e['p_holm'])})" for e in group], fontsize=9)
        ax.set_ylim(len(group) - 0.4, -0.7)
        name = METRIC_NAMES.get(k, k)
        diff = "BBB − rival" if flip > 0 else "rival − BBB"
        ax.set_xlabel(f"{name}: {diff} (← BBB worse | BBB better →)")
        lo_x, hi_x = ax.get_xlim()
        span = 1.08 * max(abs(lo_x), abs(hi_x))
        ax.set_xlim(-span, span)
        ax.xaxis.set_major_locator(MaxNLocator(nbins=5, symmetric=True))
        ax.set_title(name, fontsize=10)
    n = len(v2["seeds"])
    fig.suptitle(f"Right of zero: BBB better in both panels. Each dot one seed ({n} paired "
                 "seeds); above the dots: the mean and its 95 % interval", fontsize=10)
    handles = [Line2D([], [], color=VERDICT_COLOURS[w], lw=2, marker="o", ms=5, label=lab)
               for w, lab in (("BBB worse", "BBB worse (Holm p < 0.05)"),
                              ("BBB better", "BBB better (Holm p < 0.05)"),
                              (None, f"not resolved at {n} seeds"))]
    fig.legend(handles=handles, loc="outside lower center", ncol=3, fontsize=8, frameon=False,
               title="colour: the verdict, as in notebook 06", title_fontsize=8)
    return fig


def _ece_range(v2):
    """(lowest, highest) of the four methods' mean ECEs, or None."""
    means = [_mean(v2, m, "ece") for m in ROWS if _mean(v2, m, "ece") is not None]
    return (min(means), max(means)) if means else None


def takeaways_text(v2, recipe=None, v3=None):
    """The chapter's takeaways on the comparison (Markdown bullets): where BBB stands on
    flagging unfamiliar images and on calibration, each comparison as BBB − rival with its
    95 % interval and *near the threshold* where the answer flags it, the test NLL beside the
    ECE (``v3``: notebook 06's summary, as ``_nll_claims`` reads it), and what the verdicts
    are about (``recipe``: ``recipe_facts``, read from the records when not given)."""
    n = len(v2["seeds"])
    es = effects(v2)

    def where(metric):
        """'higher than MAP's (+0.038 [+0.014, +0.061], near the threshold), lower than MC
        dropout's (…) and not resolved at 10 seeds against the deep ensemble's (…)': BBB
        against each rival, as the verdicts read, with each difference."""
        group = [e for e in es if e["metric"] == metric]
        high = group[0]["high"] if group else True
        side = {"BBB better": "higher" if high else "lower",
                "BBB worse": "lower" if high else "higher"}

        def each(e):
            return (f"{NOUNS[e['rival']]}'s ({effect_words(e, False)}"
                    + (", near the threshold" if _near(v2, e) else "") + ")")
        bits = [f"{side[w]} than " + _join(each(e) for e in group if e["word"] == w)
                for w in DIRECTION.values() if any(e["word"] == w for e in group)]
        open_ = [e for e in group if e["word"] not in DIRECTION.values()]
        if open_:
            bits.append(f"not resolved at {n} seeds against " + _join(each(e) for e in open_))
        return _join(bits)
    best = max(ROWS, key=lambda m: _mean(v2, m, "auroc_entropy") or -1)
    out = [f"- **Flagging unfamiliar images** (AUROC, BBB − rival). At one shared budget, "
           f"{NOUNS[best]} has the highest mean AUROC; BBB's is {where('auroc_entropy')}."]
    ece = [e for e in es if e["metric"] == "ece"]
    if ece:
        k = sum(e["word"] in DIRECTION.values() for e in ece)
        lo_hi = _ece_range(v2)
        under = " All four have 15-bin ECEs under 1 %;" if lo_hi and lo_hi[1] < 0.01 else ""
        claims = _nll_claims(v3)
        beat = _nll_words(claims, " Yet ")
        nll = (beat.replace("notebook 06's test", "the answer", 1) + ", so a lower ECE here "
               "does not make BBB the better-calibrated predictive overall."
               if any(w == "BBB worse" for _, w, *_ in claims) else "")
        out.append(f"- **Calibration: small differences, {_WORDS.get(k, str(k)).lower()} of "
                   f"{_WORDS.get(len(ece), str(len(ece))).lower()} resolved** (ECE, BBB − "
                   f"rival).{under} BBB's ECE is {where('ece')}.{nll}")
    facts = recipe_facts(v2) if recipe is None else recipe
    if facts:
        every = " (so is every rival here)" if _nb01_rivals(v2) else ""
        out.append("- **What the verdicts are about.** This BBB, weaker than notebook 01's"
                   f"{every}, is trained as every method here is, within the search grids of "
                   "Table 5.1; a "
                   "longer budget or a wider grid for BBB's choices at an edge of its grid "
                   "could move a verdict.")
    return "\n".join(out)
