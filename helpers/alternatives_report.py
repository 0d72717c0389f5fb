"""Notebook 06, plan v3: its searches, final runs and tests, as tables and sentences.

Reads what ``helpers.alternatives_plan`` (the search records) and ``helpers.alternatives_final``
(``analysis``: results/06_alternatives/v3/summary.json) wrote; computes nothing a verdict rests
on. Every number shown comes from those files.
"""
import json
import statistics

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
    NLL (the plan's 5-epoch mean), the edges it sits at and the CPU time the trials took."""
    header = ["method", "learning rates", "regulariser", "trials (eligible)",
              "choice (lr, regulariser, epochs)", "validation NLL", "at a grid edge",
              "process hours (1 thread each, 2 per machine)"]
    rows = []
    for m, spec in A.SEARCHES.items():
        reg = REGULARISER[m]
        recs = [json.loads(A.trial_path(m, c).read_text()) for c in A.configs(m)
                if A.trial_path(m, c).exists()]
        c = A.chosen(m)
        cpu_h = sum(r["process_wall_s"] for r in recs) / 3600
        rows.append([
            LABELS[m], ", ".join(f"{v:g}" for v in spec["grid"]["lr"]),
            f"{reg}: " + ", ".join(f"{v:g}" for v in spec["grid"][reg]),
            f"{len(recs)}/{len(A.configs(m))} "
            f"({sum(A.eligible(r['row']) for r in recs)})",
            f"{c['config']['lr']:g}, {c['config'][reg]:g}, {c['epochs']}" if c else "(under way)",
            f"{c['val']:.4f}" if c else "—",
            (", ".join(edges(m, c)) or "none") if c else "—", f"{cpu_h:.1f}"])
    return header, rows


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
    """A paragraph on the searches: which choices sit at an edge of their grid, read from the
    search records (the plan: version 3 is final for edges; they are reported, not widened)."""
    done, out = [], []
    for m in A.SEARCHES:
        c = A.chosen(m)
        if c is None:
            out.append(f"{LABELS[m]}'s search is under way")
            continue
        done.append(m)
        e = edges(m, c)
        if e:
            vals = [f"{k} = {c['epochs'] if k == 'epochs' else format(c['config'][k], 'g')}"
                    for k in e]
            out.append(f"{LABELS[m]}'s choice sits at the edge of its grid in "
                       f"{' and '.join(vals)}")
        else:
            out.append(f"{LABELS[m]}'s choice is inside its grid")
    text = "; ".join(out) + "."
    least = [f"{LABELS[m]} ({k} = {format(A.chosen(m)['config'][k], 'g')})" for m in done
             for k, side in LEAST_UNCERTAIN.get(m, {}).items()
             if A.chosen(m)["config"][k] == side(A.SEARCHES[m]["grid"][k])]
    if least:
        text += (" The Bayesian methods' edges point one way: " + " and ".join(least)
                 + (" sit" if len(least) > 1 else " sits") + " at the grid's end of the least "
                 "initial posterior uncertainty, so a wider grid could move "
                 + ("them" if len(least) > 1 else "it") + " further toward a deterministic "
                 "network.")
    if any(edges(m, A.chosen(m)) for m in done):
        text += (" The grids were fixed in advance: a choice at an edge is reported beside its "
                 "row, not searched again, so a method at an edge may do better with a wider "
                 "grid (an epoch edge: with longer training).")
    return text[0].upper() + text[1:]


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


def hardware_text(recs=None, check_dir=None):
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
        codes = {(g["code"]["commit"] or "?")[:7] + (" with uncommitted changes"
                                                     if g["code"]["dirty"] else "")
                 for g, _ in pairs}
        text += "; the check's records name code " + ", ".join(sorted(codes)) + "."
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
    """The section's answer in a few sentences, from the plan's verdicts and the cost columns:
    whom BBB loses to, whom it beats, what ten seeds do not separate, and its training time."""
    if summary is None or summary["interim"]:
        return ""
    by = {"holds": {}, "reversed": {}}
    unresolved = set()
    for family, claims in summary["families"].items():
        short = "NLL" if "NLL" in family else "AUROC"
        for claim, res in claims.items():
            rival = LABELS[_rival(claim)]
            if res["verdict"] in by:
                by[res["verdict"]].setdefault(short, []).append(rival)
            else:
                unresolved.add(rival)
    worse_than_map = {LABELS[m] for m in _worse_than_map(summary)[0]}
    where = {"NLL": "test NLL", "AUROC": "OOD AUROC"}
    lose = "; ".join(f"{', '.join(v)} on {where[k]}" for k, v in by["reversed"].items())
    win = "; ".join(f"{where[k]} over {', '.join(v)}" + (
        " (fits that score worse than MAP itself)"
        if k == "NLL" and all(x in worse_than_map for x in v) else "")
        for k, v in by["holds"].items())
    resolved = {x for d in by.values() for v in d.values() for x in v}
    ratio = summary.get("cost", {}).get("bbb", {}).get("train_ratio_to_map")
    text = "**Answer (version 3).** " + (
        f"BBB does not lead this comparison: it loses to {lose}. " if lose
        else "BBB loses to no rival. ")
    text += (f"Its resolved wins: {win}. " if win else "It has no resolved win. ")
    rest = sorted(unresolved - resolved)
    if rest:
        text += f"Against {', '.join(rest)}, ten seeds do not separate it on either score. "
    if ratio:
        text += f"It trains {ratio:.1f}× as long as MAP (same seeds, one CPU thread)."
    return text


def underconfidence(error, ece):
    """How far below its accuracy a predictive's mean confidence must lie, at least, given only
    its error rate and its binned ECE (both fractions, on the same images and bins): no bin can be
    over-confident by more than its own error rate, so the over-confident bins add at most
    ``error`` to the ECE, the under-confident ones at least ``ece - error``, and the mean
    confidence is at most accuracy - (ece - 2 error). Positive: under-confident on average, by at
    least that much; zero or negative: the two numbers do not tell the direction."""
    return ece - 2 * error


def _join(words):
    return words[0] if len(words) == 1 else ", ".join(words[:-1]) + " and " + words[-1]


def laplace_note(summary):
    """A rendered sentence on the all-layer Laplace rows' calibration on the subset: their ECE,
    NLL and error beside MAP's, and where their ECE exceeds twice their error rate, the
    under-confidence that this implies (``underconfidence``)."""
    t = summary["table"]
    if any("subset" not in t.get(m, {}) for m in ("map", *F.ALL_LAYER)):
        return ""
    get = lambda m, k: t[m]["subset"][k]["mean"]  # noqa: E731
    rows = ", ".join(f"{LABELS[m]} ECE {get(m, 'ece'):.3f}, NLL {get(m, 'nll'):.3f}, error "
                     f"{100 * get(m, 'test_error'):.2f} %" for m in F.ALL_LAYER)
    n = min(len(t[m]["subset"]["ece"]["seeds"]) for m in F.ALL_LAYER)
    text = (f"**The all-layer fits on the subset** (means over {n} seeds): {rows}, against "
            f"MAP's ECE {get('map', 'ece'):.3f}, NLL {get('map', 'nll'):.3f}, error "
            f"{100 * get('map', 'test_error'):.2f} %.")
    gap = {m: underconfidence(get(m, "test_error"), get(m, "ece")) for m in F.ALL_LAYER}
    under = [m for m in F.ALL_LAYER if gap[m] > 0]
    if under:
        text += (f" The ECE of {_join([LABELS[m] for m in under])} "
                 "is more than twice the error rate, which only under-confidence can give (a bin "
                 "can be over-confident by at most its own error rate): "
                 + ("they are" if len(under) > 1 else "it is") + " less confident than "
                 + ("they" if len(under) > 1 else "it") + " should be, the mean confidence at "
                 "least " + _join([f"{gap[m]:.3f}" for m in under]) + " below the accuracy. "
                 + ("Their" if len(under) > 1 else "Its") + " NLL claims below include this "
                 "under-confidence (the linearised predictive with the marginal-likelihood "
                 "prior), not only errors.")
    rest = [m for m in F.ALL_LAYER if m not in under]
    if rest:
        text += (f" For {_join([LABELS[m] for m in rest])} the ECE is at most twice the error "
                 "rate, so it does not tell on which side of the diagonal the predictive misses.")
    return text + _best_auroc_note(summary)


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
    text = (f" Yet {LABELS[best]} has the highest AUROC on the subset ({au[best]:.3f}; BBB "
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


def version1_leaders(v1):
    """What version 1's table found (its working methods, no test): the methods within one seed
    spread of the best mean OOD AUROC, and the two lowest mean ECEs, with their numbers."""
    rows = {r["method"]: r for r in v1["metrics"]["rows"]}
    ok = [r["method"] for r in ALT.working(v1)]
    au = {m: rows[m]["auroc_entropy"] for m in ok}
    best = max(ok, key=lambda m: au[m]["mean"])
    band = [m for m in sorted(ok, key=lambda m: -au[m]["mean"])
            if au[best]["mean"] - au[m]["mean"] <= max(au[best]["sd"] or 0, au[m]["sd"] or 0)]
    ece = sorted(ok, key=lambda m: rows[m]["ece"]["mean"])[:2]
    n = len(rows[best]["seeds"])
    lead = (f"it found {_join([LABELS[m] for m in band])} within one seed spread of the best OOD "
            f"AUROC (best: {LABELS[best]}, {au[best]['mean']:.3f}; {n} seeds)"
            if len(band) > 1 else
            f"it found {LABELS[best]} alone with the best OOD AUROC ({au[best]['mean']:.3f}, "
            f"more than one seed spread ahead; {n} seeds)")
    return (lead + ", and the two lowest ECEs for " + _join(
        [f"{LABELS[m]} ({rows[m]['ece']['mean']:.4f})" for m in ece]))


def version1_text(summary):
    """The takeaway on version 1 (sections 1-6), with what version 3 says on calibration and
    the largest changes between them."""
    ll = "laplace_ll_kron"
    t = {m: x["full"]["ece"]["mean"] for m, x in summary["table"].items()
         if "full" in x and "ece" in x["full"]}
    order = sorted(t, key=t.get)
    flips = []
    v1 = load_v1()
    if v1:
        r1 = {x["method"]: x for x in v1["metrics"]["rows"]}
        au3 = {m: x["full"]["auroc_entropy"]["mean"] for m, x in summary["table"].items()
               if "full" in x}
        if "mc_dropout" in r1 and "mc_dropout" in au3:
            flips.append(f"MC dropout's AUROC went from "
                         f"{r1['mc_dropout']['auroc_entropy']['mean']:.3f} (version 1, its rate "
                         f"taken from notebook 05) to {au3['mc_dropout']:.3f} (its own search)")
        if ll in r1 and ll in t:
            flips.append(f"last-layer Laplace's ECE from {r1[ll]['ece']['mean']:.4f} to "
                         f"{t[ll]:.4f} (around MAP networks of another search)")
    return ("- Version 1 (sections 1–6) compared methods after unequal searches"
            + (f"; {version1_leaders(v1)}" if v1 else "") + "."
            + (" " + "; ".join(flips) + "." if flips else "")
            + " With equal searches (section 7) the lowest full-set ECE is "
            + " and ".join(f"{LABELS[m]}'s ({t[m]:.4f})" for m in order[:2])
            + (f", last-layer Laplace's ({t[ll]:.4f}) is the highest of {len(order)}"
               if ll in t and order[-1] == ll else
               f", last-layer Laplace's is {t[ll]:.4f}" if ll in t else "")
            + (f", IVON's {t['ivon']:.4f}" if "ivon" in t else "")
            + "; and the AUROC verdicts are those of section 7's table. Read section 7 where "
            "the two differ.")


def robustness_text(summary):
    """Whether any verdict rests on one draw of the predictive's samples: the claims retested
    with every sampling method scored with each extra predictive seed (``mc_robustness``)."""
    rob = summary.get("mc_robustness") or {}
    if not rob:
        return ""
    n = len(next(iter(next(iter(rob.values())).values()))["verdicts"])
    changed, close = [], []
    total = 0
    for family, claims in rob.items():
        for claim, e in claims.items():
            total += 1
            main = summary["families"][family][claim]
            label = _claim_label(claim)[0]
            if any(v != main["verdict"] for v in e["verdicts"]):
                changed.append(f"{label} ({family}): {main['verdict']} → "
                               + ", ".join(e["verdicts"]))
            elif any(p is not None and 0.01 <= p < 0.1
                     for p in [main.get("p_holm"), *e["p_holm"]]):
                close.append(f"{label} ({family}): Holm p {main['p_holm']:.3f}, "
                             f"{min(e['p_holm']):.3f}–{max(e['p_holm']):.3f} under the repeats")
    text = (f"**Does a verdict rest on one draw of the samples?** Scored again with each of the "
            f"{n} extra predictive seeds of the Monte-Carlo check, "
            + (f"{total - len(changed)} of {total} verdicts stay the same under all {n}"
               if changed else f"every one of the {total} verdicts stays the same"))
    text += (": changed: " + "; ".join(changed) + "." if changed else ".")
    if close:
        text += " Near the threshold: " + "; ".join(close) + "."
    return text


def _mc_cell(ps, k, claim):
    mc = (ps["settings"][k].get("mc") or {}).get(claim)
    if not mc:
        return "—"
    main = ps["settings"][k]["tests"][claim]["verdict"]
    same = all(v == main for v in mc["verdicts"])
    return ("same" if same else ", ".join(mc["verdicts"])) + \
        f" (Holm p {min(mc['p_holm']):.2g}–{max(mc['p_holm']):.2g})"


def prior_check_rows(ps):
    """(header, rows) of the last-layer Laplace prior-precision check: per setting its prior
    precision (median over seeds; the top of the grid search's range marked), mean test NLL,
    ECE, AUROC, and plan v3's two claims on this row, tested in the plan's families with the
    row in place of the plan's, and again under each of BBB's extra predictive seeds."""
    from . import laplace_prior_check as P
    header = ["prior precision set by", "prior precision (median over seeds)", "test NLL",
              "ECE", "AUROC (entropy)", "BBB < it on NLL (Holm p)",
              "… under BBB's 3 extra sampling seeds", "it < BBB on AUROC (Holm p)",
              "… under BBB's 3 extra sampling seeds"]
    top = 10.0 ** P.GRID["log_prior_prec_max"]
    rows = []
    for k in P.SETTINGS:
        x = ps["settings"][k]
        t = x["tests"]
        cell = lambda c: (f"{t[c]['verdict']} ({t[c]['p_holm']:.2g})"  # noqa: E731
                          if t[c].get("p_holm") is not None else t[c]["verdict"])
        med = statistics.median_low(x["prior_precision"])
        rows.append([P.LABELS[k], f"{med:.3g}" + (" (top of the range)"
                                                  if k == "gridsearch_val" and med >= top * (1 - 1e-6)
                                                  else ""),
                     f"{x['mean']['nll']:.4f}", f"{x['mean']['ece']:.4f}",
                     f"{x['mean']['auroc_entropy']:.4f}", cell(P.CLAIMS[0]),
                     _mc_cell(ps, k, P.CLAIMS[0]), cell(P.CLAIMS[1]), _mc_cell(ps, k, P.CLAIMS[1])])
    return header, rows


def prior_check_text(ps, summary):
    """What the check says, from its summary: how the prior precision trades the row's NLL for
    its AUROC, where the largest precision leaves it (at MAP), the two claims' verdicts in the
    plan's families under each setting, and what BBB's extra sampling seeds change."""
    from . import laplace_prior_check as P
    if not ps or not ps["seeds"]:
        return "No record yet: run `python tools/laplace_prior_check.py run`."
    st = ps["settings"]
    mp = {k: summary["table"]["map"]["full"][k]["mean"] for k in ("nll", "auroc_entropy")}
    order = sorted(P.SETTINGS, key=lambda k: statistics.median_low(st[k]["prior_precision"]))
    trail = lambda key, d: " → ".join(f"{st[k]['mean'][key]:.{d}f}" for k in order)  # noqa: E731
    text = ("**The prior precision moves both verdicts.** From the smallest precision to the "
            "largest (" + " → ".join(f"{statistics.median_low(st[k]['prior_precision']):.3g}" for k in order)
            + f", medians over seeds) last-layer Laplace trades AUROC ({trail('auroc_entropy', 3)})"
            f" for NLL ({trail('nll', 4)}); MAP's own are {mp['auroc_entropy']:.3f} and "
            f"{mp['nll']:.4f}, so at the largest the row is MAP's network in all but name.")
    top = 10.0 ** P.GRID["log_prior_prec_max"]
    at_top = sum(v >= top * (1 - 1e-6) for v in st["gridsearch_val"]["prior_precision"])
    if at_top:
        text += (f" The validation grid search chose the top of its range ({top:.0e}) on "
                 f"{at_top} of {len(ps['seeds'])} seeds: the validation NLL keeps falling toward "
                 "MAP's (each seed's curve is in its record).")
    words = lambda c: "; ".join(f"{st[k]['tests'][c]['verdict']} ({P.LABELS[k]})"  # noqa: E731
                                for k in P.SETTINGS)
    text += (f" Tested as the plan tests (this row in place of the plan's, Holm over the plan's "
             f"seven claims per score, {len(ps['seeds'])} seeds): \"BBB better on NLL\": "
             f"{words(P.CLAIMS[0])}. \"BBB better on AUROC\": {words(P.CLAIMS[1])}.")
    shaky = [f"{P.LABELS[k]}, {'NLL' if c == P.CLAIMS[0] else 'AUROC'}"
             for k in P.SETTINGS for c in P.CLAIMS
             if (st[k].get("mc") or {}).get(c) and any(
                 v != st[k]["tests"][c]["verdict"] for v in st[k]["mc"][c]["verdicts"])]
    text += (" Under BBB's three extra sampling seeds " + (
        "the verdict changes for: " + "; ".join(shaky) + " (read those as not resolved)."
        if shaky else "no verdict changes."))
    if not any(st[k]["tests"][c]["verdict"] == "reversed" for k in P.SETTINGS for c in P.CLAIMS):
        text += " Under no setting does last-layer Laplace beat BBB on either score."
    same = ps.get("marglik_reproduces_plan") or {}
    if same.get("nll") is not None:
        text += (f" The marginal-likelihood row reproduces the plan's records (largest "
                 f"difference: NLL {same['nll']:.1g}, AUROC (entropy) "
                 f"{same.get('auroc_entropy', float('nan')):.1g}).")
    text += (" N × weight decay is the nominal prior of MAP's training (MAP stops at a fixed "
             "epoch, not at the penalised loss's minimum). This check came after the plan's "
             "numbers: it qualifies the plan's verdict on this row and replaces none "
             "(docs/choices.md).")
    return text


def load_prior_check():
    """results/06_alternatives/v3/laplace_prior/summary.json, or None before its analysis."""
    from .laplace_prior_check import summary_path
    path = summary_path()
    return json.loads(path.read_text()) if path.exists() else None


def laplace_vs_map_text(summary, method="laplace_ll_kron"):
    """The question of section 7's prior-precision check, from the full-set NLLs: the last-layer
    Laplace row's mean test NLL against that of the MAP networks it wraps, seed by seed (a
    comparison of means; the plan tests BBB against each rival, not this pair)."""
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
    return (f"**The question.** The last-layer Laplace row's mean test NLL ({a['mean']:.4f}) is "
            f"{word} that of the MAP networks it wraps ({b['mean']:.4f}); it is the higher of "
            f"the two on {up} of {len(seeds)} paired seeds (full test sets; a comparison of "
            "means, not one of the plan's tests). A referee asked what sets this difference.")


def subset_ece_text(summary):
    """Whether the binned ECE on the plan's subset comes out larger than on the full test sets,
    per method scored on both (means over the seeds) and over every method-seed pair."""
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
    who = (f"for every method scored on both ({len(larger)} of {len(both)})"
           if len(larger) == len(both) else
           f"for none of the {len(both)} methods scored on both" if not larger else
           f"for {len(larger)} of the {len(both)} methods scored on both (not for "
           + _join([LABELS[m] for m in both if m not in larger]) + ")")
    return (f"On the {size:,}-image subset the binned ECE comes out larger than on the full test "
            f"sets {who}, and on {up} of {pairs} method-seed pairs (means, subset against full: "
            + ", ".join(f"{LABELS[m]} {e(m, 'subset')['mean']:.4f} against "
                        f"{e(m, 'full')['mean']:.4f}" for m in both) + ").")


def laplace_takeaway(summary, v1=None):
    """The takeaway on all-layer Laplace: version 1's rows, which sampled weights through the
    network (``helpers.alternatives.stale_laplace_rows``), against version 3's linearised ones on
    the subset: their error rates and whether their ECE implies under-confidence
    (``underconfidence``)."""
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
    if failed and works:
        text = ("- All-layer Laplace needs its linearised predictive, not weight sampling: "
                "version 1's all-layer rows, which sampled weights through the network, err on "
                + _join([f"{100 * rows[m]['test_error']['mean']:.0f} %" for m in failed])
                + f" of the test digits; with the linearised predictive (version 3) they err on "
                f"{errs} of the subset's (MAP {100 * get('map', 'test_error'):.2f} %)")
    else:
        text = (f"- All-layer Laplace with its linearised predictive (version 3) errs on {errs} "
                f"of the subset's test digits (MAP {100 * get('map', 'test_error'):.2f} %)")
    gap = {m: underconfidence(get(m, "test_error"), get(m, "ece")) for m in F.ALL_LAYER}
    if all(g > 0 for g in gap.values()):
        text += (", and both fits are less confident than they should be: ECE "
                 + _join([f"{get(m, 'ece'):.3f}" for m in F.ALL_LAYER])
                 + ", more than twice their error rates (section 7's subset table).")
    else:
        text += (", with ECE " + _join([f"{get(m, 'ece'):.3f}" for m in F.ALL_LAYER])
                 + f" (MAP {get('map', 'ece'):.3f}; section 7's subset table).")
    return text + (" For the last-layer fit, section 7's last table shows how much of its row is "
                   "the prior precision.")
