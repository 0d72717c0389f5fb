"""Notebook 01's section on the paper's protocol with its open settings searched on validation
(``helpers.paper_search``), in words and tables: the answer, Table 1 beside the paper's and the
Adam recipe's, whether each BBB posterior trained, the search, the ablations and Figure 2.

Every number comes from the campaign's records through the analysis written before its runs
(``helpers.paper_search_report``: ``final_rows``, ``effects``, ``search_tables``,
``main_effects``, ``ablation_rows``, ``figure2``, ``sigma_moved``, ``sigma_spread``) and the
declared verdicts (``helpers.paper_protocol.analysis``). Nothing here trains or chooses. A part
whose runs are missing renders nothing: its function returns '' (or None), and ``show`` prints
the project's pending notice instead (``helpers.utils.pending``).

The intervals are those the plan declares: the two-sided 95 % t-interval of a paired difference
(not adjusted for the family; the verdict word comes from the Holm-adjusted p).
"""
import contextlib
import json
import math
import os
import statistics

from . import paper_search as S
from . import paper_search_report as R
from .paper_protocol import COMPARABLE, ORDERINGS, PAPER_TABLE1, analysis

COMMAND = "python tools/paper_protocol.py run"  # the campaign (version 2 is its default)
METHODS = R.METHOD_ORDER
NAMES = {"sgd": "plain network", "dropout": "dropout", "bbb_gaussian": "BBB, Gaussian prior",
         "bbb_mixture": "BBB, scale mixture prior"}  # notebook 01's names
SHORT = {"sgd": "plain network", "dropout": "dropout", "bbb_gaussian": "Gaussian",
         "bbb_mixture": "mixture"}
MIXTURE_VS_DROPOUT = "scale mixture vs dropout"  # R.effects' name of the comparability pair
CLAIMS = tuple((a, b, claim) for a, b, claim in ORDERINGS) + \
    ((COMPARABLE[0], COMPARABLE[1], MIXTURE_VS_DROPOUT),)
NOT_TRAINED = "posterior widths did not train"  # the plan's label
NO_VERDICT = f"no verdict ({NOT_TRAINED})"
FACTORS = {"lr": "learning rate", "dropout": "dropout rate", "prior_sigma": "prior σ",
           "pi": "π", "neg_log_sigma1": "−log σ₁", "neg_log_sigma2": "−log σ₂",
           "rho_init": "ρ₀", "rho_lr_scale": "ρ's learning rate (× μ's)",
           "mu_init": "μ's start"}
_SUP = str.maketrans("-0123456789.", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹·")
ABLATION_LABELS = {  # paper_search.ablations' labels in notebook 01's words
    "rho0 -5 (version 1)": "ρ₀ = −5",
    "one learning rate for mu and rho (version 1)": "one learning rate for μ and ρ",
    "constant learning rate (version 1)": "a constant learning rate",
    "learning rate 1e-3 (version 1)": "learning rate 10⁻³",
    "mu drawn as nn.Linear draws weights (version 1)": "μ drawn as nn.Linear draws weights",
    "version 1's prior (pi 3/4, sigma1 e^-2, sigma2 e^-8)":
        "the earlier prior (π = ¾, σ₁ = e⁻², σ₂ = e⁻⁸)"}


# --- reading the campaign -----------------------------------------------------------------------

@contextlib.contextmanager
def at(root):
    """Read (and write) the campaign under ``root`` (a folder that takes the place of the results
    and checkpoints folders) for the duration; ``root`` None: where ``helpers.utils`` says."""
    if root is None:
        yield
        return
    keys = ("BBB_RESULTS_DIR", "BBB_CHECKPOINT_DIR")
    old = {k: os.environ.get(k) for k in keys}
    os.environ["BBB_RESULTS_DIR"] = str(root)
    os.environ["BBB_CHECKPOINT_DIR"] = os.path.join(str(root), "checkpoints")
    try:
        yield
    finally:
        for k, v in old.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


@contextlib.contextmanager
def _memo_search():
    """Within the block, ``paper_search.search_state`` reads each method's records once (the
    report calls it once per seed and width); restored after."""
    original, cache = S.search_state, {}

    def cached(s, method):
        key = (json.dumps(s, sort_keys=True, default=str), method)
        if key not in cache:
            cache[key] = original(s, method)
        return cache[key]
    S.search_state = cached
    try:
        yield
    finally:
        S.search_state = original


def _diverged(s, row):
    """The seeds of ``row`` whose final run diverged (a record without a test error that says so)."""
    out = []
    with contextlib.suppress(Exception):
        for seed in row["pending_seeds"]:
            cfg = S.recipe_config(s, row["key"], row["H"], seed)
            rec = None if cfg is None else S.read(S.record_path(cfg, "final"))
            if rec is not None and rec.get("diverged"):
                out.append(seed)
    return out


def summary(s, root=None, write=False):
    """Return the campaign's summary as ``paper_search_report.write_summary`` builds it (read
    back as JSON would be: widths as strings), plus ``diverged_seeds`` per row and ``root``.
    ``write``: also write v2/summary.json (``write_summary``); by default nothing is written, so
    that reading the campaign while it runs touches none of its files."""
    with at(root), _memo_search():
        if write:
            rec = R.write_summary(s)
        else:
            rows = R.final_rows(s)
            rec = {"protocol": "paper v2", "profile": s["profile"], "plan": "plan.json",
                   "rows": rows, "analysis": analysis(rows), "effects": R.effects(rows),
                   "search": R.search_tables(s),
                   "main_effects": {m: R.main_effects(s, m) for m in METHODS},
                   "ablations": R.ablation_rows(s),
                   "complete": all(not r["pending_seeds"] for r in rows)}
        rec = json.loads(json.dumps(rec, default=str))
        for row in rec["rows"]:
            row["diverged_seeds"] = _diverged(s, row)
    rec["root"] = None if root is None else str(root)
    rec["settings"] = json.loads(json.dumps(s, default=str))
    return rec


SMOKE_FOLDER = "paper_protocol_v2_smoke"


def smoke_campaign(s, base=None, log=None):
    """Run the smoke profile's whole campaign in this process, from scratch, into the folder
    ``SMOKE_FOLDER`` under ``base`` (default: the output root, ``BBB_OUTPUT_DIR`` or
    build/smoke; never results/; a leftover of an earlier smoke run there is removed first) and
    return that folder: pass it to ``summary`` as ``root``."""
    import shutil
    from pathlib import Path

    import helpers as H
    from .utils import PROJECT_ROOT, output_root
    if s["profile"] != "smoke":
        raise ValueError("smoke_campaign trains the smoke profile only")
    root = Path(base or output_root()) / SMOKE_FOLDER
    if root.resolve() in (PROJECT_ROOT.resolve(), (PROJECT_ROOT / "results").resolve()):
        raise ValueError(f"{root}: the smoke campaign never runs in the committed results")
    shutil.rmtree(root, ignore_errors=True)
    root.mkdir(parents=True)
    data = H.load_mnist(scale="paper", n_train=s["n_train"], n_test=s["n_eval"])
    with at(root):
        S.drive(data, s, log=log or (lambda m: None), poll_s=0.01)
    return str(root)


def show(text, what, command=COMMAND):
    """Show ``text`` as Markdown, or the pending notice for ``what`` when it is empty; return
    whether it was shown."""
    from .report import show_markdown
    from .utils import pending
    if pending(text, what, command):
        return False
    show_markdown(text)
    return True


def show_table(table, what, command=COMMAND):
    """Show (header, rows, words) as words then a table, or the pending notice when ``table`` is
    None; return whether it was shown."""
    from .plotting import show_table as table_md
    from .report import show_markdown
    from .utils import pending
    if pending(table, what, command):
        return False
    head, rows, words = table
    if words:
        show_markdown(words)
    table_md(head, rows)
    return True


# --- formatting -----------------------------------------------------------------------------------

def _get(d, H):
    """``d[H]`` whether the width is an int or, read back from JSON, a string."""
    d = d or {}
    return d.get(str(H), d.get(H))


def _pp(x, sign=True, d=2):
    return (f"{100 * x:+.{d}f}" if sign else f"{100 * x:.{d}f}").replace("-", "−")


def _pct(x, d=2):
    return f"{100 * x:.{d}f}%"


def _ci(ci, sign=True):
    """'[−0.30, +0.10]' in pp; more decimals (up to four) where an end would show as ±0.00."""
    d = 2
    while d < 4 and any(x != 0 and round(100 * x, d) == 0 for x in ci):
        d += 1
    return f"[{_pp(ci[0], sign, d)}, {_pp(ci[1], sign, d)}]"


def _seeds(n):
    return f"{n} seed" + ("" if n == 1 else "s")


def _mean_sd(values, diverged=()):
    """'1.83 ± 0.07% (5)' (no sd at one value; diverged seeds named)."""
    m = statistics.fmean(values)
    sd = "" if len(values) < 2 else f" ± {100 * statistics.stdev(values):.2f}"
    div = f"; diverged: seed {', '.join(map(str, diverged))}" if diverged else ""
    return f"{100 * m:.2f}{sd}% ({len(values)}{div})"


def _widths(rec):
    return sorted({r["H"] for r in rec["rows"]})


def _row(rec, key, H):
    return next((r for r in rec["rows"] if r["key"] == key and r["H"] == H), None)


def complete(rec, H):
    """Whether every method's final runs at width ``H`` have ended (a test error, or diverged)."""
    rows = [r for r in rec["rows"] if r["H"] == H]
    return bool(rows) and all(set(r["pending_seeds"]) <= set(r.get("diverged_seeds") or [])
                              for r in rows) and all(r["seeds"] for r in rows)


def done_widths(rec):
    """The widths whose final runs have all ended, smallest first."""
    return [H for H in _widths(rec) if complete(rec, H)]


def trained(rec, key, H):
    """True / False: whether every seed's posterior of BBB row (key, H) trained (the plan's rule:
    some layer with σ's 95 % quantile ≥ ``TRAINED_SPREAD`` × its 5 %); None for SGD and dropout."""
    r = _row(rec, key, H)
    if r is None or not key.startswith("bbb") or not r["sigma_spread"]:
        return None
    return all(any(v >= R.TRAINED_SPREAD for v in spread.values())
               for spread in r["sigma_spread"] if spread is not None)


def _untrained(rec, H, a, b):
    """The BBB sides of a − b whose posterior did not train at width ``H``."""
    return [k for k in (a, b) if trained(rec, k, H) is False]


# --- the answer and Table 1 -----------------------------------------------------------------------

def _verdict(rec, H, a, b, claim):
    """The declared verdict word of a − b at width ``H`` (Holm's, or the comparability claim's),
    or ``NO_VERDICT`` where a BBB side's posterior did not train."""
    if _untrained(rec, H, a, b):
        return NO_VERDICT
    if claim == MIXTURE_VS_DROPOUT:
        comp = _get(rec["analysis"]["comparable"], H)
        return "—" if comp is None else f"*{comp['verdict']}*"
    res = (_get(rec["analysis"]["orderings"], H) or {}).get(claim)
    return "—" if res is None else f"*{res['verdict']}*"


def _effect(rec, H, a, b, claim):
    """``effects``' entry for a − b at width ``H``; with one common seed (no interval there) the
    difference at that seed; None without one."""
    e = (_get(rec["effects"], H) or {}).get(claim)
    if e and e["mean_diff"] is not None:
        return e
    ra, rb = _row(rec, a, H), _row(rec, b, H)
    if not ra or not rb:
        return None
    va, vb = dict(zip(ra["seeds"], ra["test_error"])), dict(zip(rb["seeds"], rb["test_error"]))
    common = sorted(set(va) & set(vb))
    if len(common) != 1:
        return None
    return {"n": 1, "mean_diff": va[common[0]] - vb[common[0]], "ci": None,
            "paper_diff": (e or {}).get("paper_diff"), "excludes_paper": None}


def effect_words(rec, H, a, b, claim):
    """'−0.20 pp [−0.30, −0.10] (5 seeds; the paper's −0.47 pp lies outside): *holds*': a − b
    at width ``H`` from ``effects`` with its 95 % interval, whether the interval excludes the
    paper's difference, then the declared verdict word; '' without a finished pair."""
    e = _effect(rec, H, a, b, claim)
    if e is None:
        return ""
    if e["ci"] is None:
        return f"{_pp(e['mean_diff'])} pp ({_seeds(e['n'])}: no interval)"
    paper = "" if e["paper_diff"] is None else (
        f"; the paper's {_pp(e['paper_diff'])} pp lies "
        + ("outside" if e["excludes_paper"] else "inside"))
    return (f"{_pp(e['mean_diff'])} pp {_ci(e['ci'])} ({_seeds(e['n'])}{paper}): "
            f"{_verdict(rec, H, a, b, claim)}")


def _cell_words(rec, key, H):
    """'1.40% (5 seeds), ours − paper +0.04 pp [−0.02, +0.10]: *matches the paper*'."""
    r = _row(rec, key, H)
    cell = (rec["analysis"]["cells"] or {}).get(f"{key}_h{H}")
    if not r or not r["test_error"]:
        return ""
    mean = statistics.fmean(r["test_error"])
    text = f"{_pct(mean)} ({_seeds(len(r['test_error']))}"
    if cell is None:
        return text + ")"
    if cell.get("ci") is None:
        return text + ", no interval)"
    lo, hi = (c - cell["published"] for c in cell["ci"])
    word = NO_VERDICT if trained(rec, key, H) is False else f"*{cell['verdict']}*"
    return text + f"), ours − paper {_pp(cell['diff'])} pp {_ci((lo, hi))}: {word}"


def _cell_verdict(rec, key, H):
    """The declared word of method ``key``'s cell against the paper's at width ``H`` (italic), or
    ``NOT_TRAINED`` for a BBB row whose posterior did not train; '' without one."""
    cell = (rec["analysis"]["cells"] or {}).get(f"{key}_h{H}")
    if not cell or cell.get("ci") is None:
        return ""
    return NOT_TRAINED if trained(rec, key, H) is False else f"*{cell['verdict']}*"


def answer(rec):
    """The answer for the first screen at the smallest width whose final runs have all ended (the
    others: section 2): a bold sentence with the scale mixture's test error against the paper's
    and the goal declared before the runs (the paper's + 0.1 pp), then two bullets: the paper's
    three orderings and mixture − dropout, each as our difference with its 95 % interval,
    whether that excludes the paper's difference, and the declared verdict word (none where a
    BBB posterior did not train: said). '' while no width has ended."""
    widths = done_widths(rec)
    if not widths:
        return ""
    H = widths[0]
    mix = _row(rec, "bbb_mixture", H)
    paper = PAPER_TABLE1["bbb_mixture"].get(H)
    mean = statistics.fmean(mix["test_error"])
    goal = "" if paper is None else (
        f", {'within' if mean <= paper + 0.001 else 'above'} the goal declared before the runs "
        f"({_pct(paper + 0.001)}, the paper's + 0.1 pp)")
    text = (f"**Trained the paper's way (plain SGD on the summed cost, a random start, 600 "
            f"epochs), with what the paper leaves open chosen on validation, BBB with the scale "
            f"mixture prior errs at 2×{H} on {_cell_words(rec, 'bbb_mixture', H)}"
            + ("" if paper is None else f" (the paper: {_pct(paper)})") + f"{goal}.**")
    cells = [f"{SHORT[k]} {_cell_verdict(rec, k, H)}" for k in METHODS if _cell_verdict(rec, k, H)]
    if cells:
        text += (f"\n- Each Table 1 cell at 2×{H} against the paper's (intervals: section 2): "
                 + "; ".join(cells) + ".")
    untrained = [NAMES[k] for k in ("bbb_gaussian", "bbb_mixture") if trained(rec, k, H) is False]
    if untrained:
        text += (f"\n- The posterior's widths of {' and '.join(untrained)} did not train (section "
                 "3): their comparisons show the difference and interval, no verdict word.")
    else:
        text += "\n- Both BBB posteriors' widths trained in every seed (section 3)."
    orders = [f"{SHORT[a]} − {SHORT[b]} {effect_words(rec, H, a, b, c)}"
              for a, b, c in CLAIMS[:3] if effect_words(rec, H, a, b, c)]
    if orders:
        text += "\n- The paper's orderings, ours (95 % interval): " + "; ".join(orders) + "."
    comp = effect_words(rec, H, *CLAIMS[3])
    if comp:
        text += (f"\n- Mixture − dropout {comp}; *comparable* needs the whole interval inside "
                 f"±{100 * COMPARABLE[2]:g} pp.")
    rest = [f"2×{W}" for W in widths[1:]]
    if rest:
        text += f"\n- At {' and '.join(rest)}: section 2."
    return text


def table1(rec, adam=None):
    """(header, rows, words): Table 1 per width and method: the paper's value; under the paper's
    protocol with its open settings searched, ours (mean ± sd, seeds), ours − paper with its
    95 % interval and the declared word, and whether BBB's posterior trained; the Adam recipe's
    mean ± sd beside it (summary ``adam``: table1_plan's, as notebook 01 renders it). A width
    whose final runs have not all ended shows '—' in the paper protocol's columns. None while
    there is nothing to show (no width ended and no ``adam``)."""
    from .table1 import story_rows
    ours = story_rows(adam) if adam else {}
    done = done_widths(rec)
    widths = sorted(set(done) | {W for _, W in ours})
    if not done and not ours:
        return None
    header = ["width", "method", "paper", "the paper's protocol: mean ± sd (seeds)",
              "ours − paper (pp) [95 % interval]: verdict", "posterior trained",
              "Adam recipe: mean ± sd (seeds)"]
    rows = []
    for H in widths:
        for key in METHODS:
            paper = PAPER_TABLE1[key].get(H)
            o = ours.get((key, H))
            adam_txt = "—" if not o else _mean_sd(o["test_error"])
            row = [f"2×{H}", NAMES[key], "—" if paper is None else _pct(paper)]
            if H not in done:
                rows.append(row + ["—", "—", "—", adam_txt])
                continue
            r = _row(rec, key, H)
            cell = (rec["analysis"]["cells"] or {}).get(f"{key}_h{H}")
            vs = "—"
            if cell and cell.get("ci"):
                lo, hi = (c - cell["published"] for c in cell["ci"])
                vs = f"{_pp(cell['diff'])} {_ci((lo, hi))}: " + (
                    NOT_TRAINED if trained(rec, key, H) is False else f"*{cell['verdict']}*")
            div = r.get("diverged_seeds") or []
            t = trained(rec, key, H)
            rows.append(row + [_mean_sd(r["test_error"], div), vs,
                               "—" if t is None else "yes" if t else "no", adam_txt])
    words = ("Test error after the last epoch, mean ± sd (seeds); BBB predicts by the predictor "
             "rule. *Matches the paper*: the 95 % interval of ours − paper contains 0. '—': not run"
             + ("" if set(done) >= {r["H"] for r in rec["rows"]} else
                " (or, under the paper's protocol, its runs have not all ended)") + ".")
    return header, rows, words


def effects_table(rec):
    """(header, rows, words): per finished width the paper's three orderings and mixture −
    dropout, each as ours (a − b, 95 % interval, seeds), the paper's difference, whether the
    interval excludes it, the Holm-adjusted and the sign test's p, and the verdict. None while
    no width has ended."""
    widths = done_widths(rec)
    if not widths:
        return None
    header = ["width", "a − b (pp)", "paper", "ours [95 % interval] (seeds)",
              "paper's difference outside?", "Holm p", "sign test p", "verdict"]
    rows = []
    for H in widths:
        fam = _get(rec["analysis"]["orderings"], H) or {}
        for a, b, claim in CLAIMS:
            e = _effect(rec, H, a, b, claim)
            if e is None:
                continue
            res = fam.get(claim) or {}
            rows.append([f"2×{H}", f"{SHORT[a]} − {SHORT[b]}",
                         "—" if e["paper_diff"] is None else _pp(e["paper_diff"]),
                         f"{_pp(e['mean_diff'])} "
                         + ("(no interval)" if e["ci"] is None else _ci(e["ci"]))
                         + f" ({e['n']})",
                         "—" if e["excludes_paper"] is None else
                         "yes" if e["excludes_paper"] else "no",
                         "—" if res.get("p_holm") is None else f"{res['p_holm']:.3f}",
                         "—" if not res.get("sign_test") else f"{res['sign_test']['p']:.3f}",
                         _verdict(rec, H, a, b, claim)])
    n = max(len(r["seeds"]) for r in rec["rows"])
    if n < 2:
        return header, rows, "One seed per method: differences without intervals or verdicts."
    words = (f"**The paper's protocol: the comparisons**, paired by seed; the interval is the "
             f"plain 95 % t-interval, the verdict uses Holm's p over the three orderings. The "
             f"sign test (beside, not used) cannot go below p = {2 / 2 ** n:.4f} at "
             f"{_seeds(n)}.")
    return header, rows, words


# --- did each posterior train? --------------------------------------------------------------------

def _layer_names(spread):
    return sorted(spread, key=lambda x: int(x) if str(x).isdigit() else x)


def _span(xs, fmt):
    lo, hi = fmt(min(xs)), fmt(max(xs))
    return lo if lo == hi else f"{lo}–{hi}"


def posterior_table(rec, per_seed=False):
    """(header, rows, words): per finished width and BBB method, each layer's σ spread (95 % /
    5 % quantile over its weights; 1 at the start) and the median σ's move from its start (the
    range over seeds; ``per_seed``: one row per seed), and in how many seeds the posterior
    trained by the plan's rule. None while no width has ended."""
    widths = done_widths(rec)
    if not widths:
        return None
    header = ["width", "method", "seed" if per_seed else "seeds",
              "σ's 95 % / 5 % quantile: layer 1 / 2 / output",
              "median σ ÷ its start − 1: layer 1 / 2 / output", "trained"]
    rows = []
    for H in widths:
        for key in ("bbb_gaussian", "bbb_mixture"):
            r = _row(rec, key, H)
            runs = [(seed, sp, mv) for seed, sp, mv in
                    zip(r["seeds"], r["sigma_spread"], r["sigma_moved"]) if sp is not None]
            if not runs:
                continue
            groups = [[x] for x in runs] if per_seed else [runs]
            for g in groups:
                names = _layer_names(g[0][1])
                ok = sum(any(sp[n] >= R.TRAINED_SPREAD for n in names) for _, sp, _ in g)
                spread = " / ".join(_span([sp[n] for _, sp, _ in g], lambda v: f"{v:.2f}")
                                    for n in names)
                moved = " / ".join(_span([mv[n] for _, _, mv in g],
                                         lambda v: f"{100 * v:+.0f}".replace("-", "−"))
                                   + " %" for n in names)
                rows.append([f"2×{H}", NAMES[key],
                             str(g[0][0]) if per_seed else str(len(g)), spread, moved,
                             ("yes" if ok else "no") if per_seed else f"{ok} of {len(g)}"])
    words = (f"**The rule** (declared before the runs): a BBB row's verdicts count only if in "
             f"every seed some layer's σ spread, its 95th percentile over the weights divided "
             f"by its 5th, is at least {R.TRAINED_SPREAD:g}. Where a row did not train, its "
             "numbers are shown and labelled, its comparisons carry no verdict word. Ranges: "
             "over the seeds.")
    return header, rows, words


def posterior_words(rec):
    """One sentence per finished width: which BBB rows trained by the rule, with the range of
    their largest per-layer spreads; '' while no width has ended."""
    out = []
    for H in done_widths(rec):
        said = []
        for key in ("bbb_gaussian", "bbb_mixture"):
            r = _row(rec, key, H)
            best = [max(sp.values()) for sp in r["sigma_spread"] if sp]
            if not best:
                continue
            t = trained(rec, key, H)
            said.append(f"{NAMES[key]} {'trained' if t else NOT_TRAINED.replace('posterior ', '')}"
                        f" (largest layer spread {min(best):.2f}–{max(best):.2f} over "
                        f"{_seeds(len(best))})")
        if said:
            out.append(f"At 2×{H}: " + "; ".join(said) + ".")
    return " ".join(out)


# --- the search -----------------------------------------------------------------------------------

def _value(key, v):
    if v is None or v == "None":
        return "nn.Linear's range" if key == "mu_init" else "—"
    if key == "mu_init":
        return f"U(±{float(v):g})"
    if key in ("neg_log_sigma1", "neg_log_sigma2", "rho_init"):
        return f"{float(v):g}".replace("-", "−")
    if key in ("lr", "prior_sigma"):
        x = float(v)
        e = math.log10(x) if key == "lr" else -math.log(x)
        if key == "prior_sigma":
            return "1" if abs(e) < 1e-9 else "e" + f"-{e:g}".translate(_SUP)
        return "10" + f"{e:.1f}".replace(".0", "").translate(_SUP)
    if key == "rho_lr_scale":
        return f"×{float(v):g}"
    return f"{float(v):g}"


def _setting(point, schedule):
    words = [f"{FACTORS.get(k, k)} {_value(k, v)}" for k, v in point.items()]
    words.append("×0.1 after epoch 300" if schedule == "step" else "constant rate"
                 if schedule == "constant" else str(schedule))
    return ", ".join(words)


def _edges(method, point):
    """The searched factors of ``point`` at an end of their grid (the plan names them)."""
    out = []
    for k, values in S.SPACES[method].items():
        nums = [v for v in values if isinstance(v, (int, float))]
        if k in ("rho_lr_scale",) or len(nums) < 2 or point.get(k) is None:
            continue
        if float(point[k]) in (min(nums), max(nums)):
            out.append(FACTORS.get(k, k))
    return out


def search_table(rec):
    """(header, rows, words): per method what was open, the chosen recipe (grid edges named) and
    its score, the mean validation error over the tuning seeds after the last rung, beside the
    runner-up's; None until every method's search has chosen."""
    srch = rec["search"]
    if any(srch[m]["recipe"] is None for m in METHODS):
        return None
    s = rec["settings"]
    header = ["method", "chosen", "at its grid's edge", "validation error: chosen",
              "next best"]
    rows = []
    for m in METHODS:
        last = [t for t in srch[m]["rungs"][-1] if t["score"] is not None]
        best, nxt = last[0], (last[1] if len(last) > 1 else None)
        rows.append([NAMES[m], _setting(srch[m]["recipe"]["point"], srch[m]["recipe"]["schedule"]),
                     ", ".join(_edges(m, srch[m]["recipe"]["point"])) or "—",
                     _pct(best["score"]), "—" if nxt is None else _pct(nxt["score"])])
    rungs, keep = s["rungs"], s["keep"]
    step = (s["schedules"].get("step") or [None])[0]
    words = (f"**The search** (validation only; tuning seeds {' and '.join(map(str, s['tuning_seeds']))}"
             f", never reported; at 2×{s['search_width']}). Per method {s['trials']} settings "
             f"trained {rungs[0]} epoch{'' if rungs[0] == 1 else 's'} at a constant rate; the "
             f"best {keep[0]} continued to {rungs[1]}; the best {keep[1]} to {rungs[2]}, each "
             f"under both schedules (constant, or ×{S.GAMMA:g} after epoch {step}): the best of "
             "those is the recipe. BBB keeps at each rung "
             "the best trial of each value of ρ's learning rate (σ moves slowly). The same "
             "trials and epochs for every method. Score: the mean validation error over the "
             "two seeds. On 10,000 validation images a two-seed mean has a standard error of "
             "about 0.1 pp, so near-ties are noise: the recipe is a choice, not a finding.")
    return header, rows, words


def main_effects_table(rec, method="bbb_mixture"):
    """(header, rows, words): the first rung of ``method``'s search described by factor, one row
    each: per value, the mean score of its trials that did not diverge (and how many diverged).
    A description of the balanced design, not what chose (the search chooses by trial). None
    until the first rung has ended."""
    me = rec["main_effects"].get(method)
    r1 = (rec["search"].get(method) or {}).get("rungs") or []
    if not me or not r1 or any(t["score"] is None for t in r1[0]):
        return None
    n = r1[0][0]["epochs"]
    header = ["setting", f"value: mean validation error after {n} epoch{'' if n == 1 else 's'}"
              " (trials; diverged)"]
    rows = []
    for key, values in me.items():
        rows.append([FACTORS.get(key, key), " · ".join(
            f"{_value(key, v)}: " + ("—" if c["mean_score"] is None else _pct(c["mean_score"]))
            + f" ({c['n']}" + (f"; {c['diverged']}" if c["diverged"] else "") + ")"
            for v, c in values.items())])
    words = (f"**{NAMES[method]}: the first rung by setting** (a description: each value is "
             "tried equally often, the other settings balanced; the search chose by trial).")
    return header, rows, words


# --- ablations --------------------------------------------------------------------------------------

def ablation_table(rec):
    """(header, rows, words): the scale mixture's recipe with one choice at a time set back to
    the fill-in of the runs before the search (seeds of ``ablation_seeds`` at the search width):
    the recipe's and the ablated runs' mean test error and their paired difference with its
    95 % interval; no verdict words. None while no ablation has ended."""
    abl = [a for a in rec["ablations"] if a["seeds"]]
    if not abl:
        return None
    header = ["set back", "seeds", "recipe", "ablated", "ablated − recipe (pp) [95 % interval]"]
    rows = []
    for a in abl:
        label = ABLATION_LABELS.get(a["label"], a["label"])
        rows.append([label, ", ".join(map(str, a["seeds"])),
                     _pct(statistics.fmean(a["recipe"])), _pct(statistics.fmean(a["ablated"])),
                     _pp(a["mean_diff"]) + ("" if a["ci"] is None else f" {_ci(a['ci'])}")])
    n = min(len(a["seeds"]) for a in abl)
    rho0 = f"{S.V1_CHOICES['rho_init']:g}".replace("-", "−")
    words = (f"**What the search changed** (ablations: the scale mixture's recipe with one "
             f"setting at a time set back to the earlier fill-in, ρ₀ = {rho0} and one learning "
             f"rate for μ and ρ; {_seeds(n)} each at 2×{rec['settings']['search_width']}). "
             + (f"An interval from {_seeds(n)} has {n - 1} degree{'' if n == 2 else 's'} of "
                "freedom and is wide: descriptions" if n > 1 else "Descriptions") + ", not tests.")
    return header, rows, words


# --- Figure 2 ---------------------------------------------------------------------------------------

def figure2(s, rec):
    """The paper's Figure 2 from the final runs at the largest width (``paper_search_report``'s;
    ``s`` the settings ``rec`` was read with), or None until that width's runs have all ended."""
    H = max(_widths(rec))
    if not complete(rec, H):
        return None
    with at(rec.get("root")), _memo_search():
        fig = R.figure2(s, H=H)
    ax = fig.axes[0]  # the report's method names in notebook 01's
    for line in ax.get_lines():
        label = line.get_label()
        for key in METHODS:
            label = label.replace(R.LABELS[key], NAMES[key])
        line.set_label(label)
    ax.legend(fontsize=7.5, loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False)
    return fig


def figure2_words(rec):
    """The caption's measured part: per method at the largest width, the mean test error after
    the last epoch against the paper's; '' until that width has ended."""
    H = max(_widths(rec))
    if not complete(rec, H):
        return ""
    bits = []
    for key in METHODS:
        r = _row(rec, key, H)
        paper = PAPER_TABLE1[key].get(H)
        bits.append(f"{NAMES[key]} {_pct(statistics.fmean(r['test_error']))}"
                    + ("" if paper is None else f" (paper {_pct(paper)})"))
    return (f"At 2×{H} after epoch {rec['settings']['final_epochs']}, mean over seeds: "
            + "; ".join(bits) + "." + (" The first ten epochs' errors may lie above the top edge"
                                       " (the axis is fitted to the later epochs)."
                                       if rec["settings"]["final_epochs"] > 10 else ""))


# --- what a missing part would take ---------------------------------------------------------------

STAGE_COST = {"search": ("search_cpu_h",), "final": ("final_h400_cpu_h", "final_h1200_cpu_h"),
              "final_h1200": ("final_h1200_cpu_h",), "ablation": ("ablations_cpu_h",)}
STAGE_WORDS = {"search": "the searches on validation data",
               "final": "the final runs on the reported seeds at both widths",
               "final_h1200": "the final runs at 2×1200",
               "ablation": "the ablations"}


def pending_what(stage):
    """'the final runs … (about 45 CPU-hours, the declared plan's estimate on an idle machine)':
    what the pending notice of a part names, from the committed plan's ``estimate``."""
    from .utils import PROJECT_ROOT
    plan = S.read(PROJECT_ROOT / "results" / S.NB / S.FOLDER / "plan.json") or {}
    est = plan.get("estimate") or {}
    hours = [est.get(k) for k in STAGE_COST[stage]]
    cost = "" if None in hours else (f" (about {sum(hours):.0f} CPU-hours, the declared plan's "
                                     "estimate on an idle machine)")
    return STAGE_WORDS[stage] + cost


# --- the runs behind the figures ----------------------------------------------------------------

def final_records(s, method, H, rec=None):
    """The final run records of ``method``'s recipe at width ``H``, seed order (those that
    exist; [] while the search runs): for notebook 01's Figure 3 and predictor table."""
    with at((rec or {}).get("root")), _memo_search():
        out = []
        for seed in s["seeds"][H]:
            cfg = S.recipe_config(s, method, H, seed)
            r = None if cfg is None else S.read(S.record_path(cfg, "final"))
            if r is not None and r["metrics"].get("test_error") is not None:
                out.append(r)
        return out


def takeaway(rec):
    """One takeaway bullet: per finished width the scale mixture against the paper and the
    paper's orderings' verdict words (no verdict where a posterior did not train); ''
    while no width has ended."""
    parts = []
    for H in done_widths(rec)[:1]:
        mix = _row(rec, "bbb_mixture", H)
        paper = PAPER_TABLE1["bbb_mixture"].get(H)
        words = "; ".join(f"{SHORT[a]} − {SHORT[b]}: {_verdict(rec, H, a, b, c)}"
                          for a, b, c in CLAIMS if _effect(rec, H, a, b, c))
        parts.append(f"at 2×{H} the scale mixture errs on {_pct(statistics.fmean(mix['test_error']))}"
                     + ("" if paper is None else f" (paper {_pct(paper)})")
                     + (f"; {words}" if words else ""))
    if not parts:
        return ""
    return ("- **Trained the paper's way, its open settings searched on validation**: "
            + "; ".join(parts) + " (other widths: section 2).")
