"""Notebook 01 after its fifteenth reading: the short answer's lead in short sentences; the
predictor rule defined before its first use; the answer's table at one width, every other
width's comparisons in section 2's table; the Gaussian prior's σ status said beside the
scale mixture's; which way the late choices lean, after the results they cite; Figure 2 and
section 6 in the takeaways. Each check reads the committed notebook or results, so each can
fail."""
import json
from pathlib import Path
import pytest

from helpers import posterior_diagnostics as PD
from helpers import table1 as T

ROOT = Path(__file__).resolve().parent.parent
NB = ROOT / "notebooks" / f"{T.NB}.ipynb"


def _cells():
    """Each cell's text as the reader meets it: markdown source, else its outputs' markdown."""
    out = []
    for c in json.loads(NB.read_text())["cells"]:
        if c["cell_type"] == "markdown":
            out.append("".join(c["source"]))
        else:
            out.append("".join("".join(o.get("data", {}).get("text/markdown", ""))
                               for o in c.get("outputs", [])))
    return out


def test_terms_come_before_their_first_use_and_the_lean_after_the_results():
    cells = _cells()
    first = next(i for i, t in enumerate(cells) if "predictor rule" in t.lower())
    assert "*Predictor rule*:" in cells[first]  # the glossary defines it where it first appears
    lean = next(i for i, t in enumerate(cells) if t.startswith("**Which way the choices"))
    sec6 = next(i for i, t in enumerate(cells) if t.startswith("## 6."))
    take = next(i for i, t in enumerate(cells) if t.startswith("## Takeaways"))
    assert sec6 < lean < take
    # the figure's caption sits right above the figure, not above the table
    cap = next(i for i, t in enumerate(cells) if t.startswith("**Figure: every comparison"))
    assert cells[cap - 1].startswith("| width | a − b (pp)")


def test_short_answer_leads_with_one_bold_sentence(committed):
    """Reader r17: one bold sentence carries the whole answer (the verdict, its interval and
    the paper's value), then at most three short bullets; the widths' reading is a bullet."""
    _, paper_run, adam = committed
    lead, rest = T.plain_answer(paper_run, adam, sigma_fixed=0.0067).split("\n\n")
    depth, deepest = 0, 0  # no bracket inside a bracket
    for ch in lead:
        depth += (ch == "(") - (ch == ")")
        deepest = max(deepest, depth)
    assert deepest == 1 and lead.startswith("**In short: ") and lead.endswith(".**"), lead
    # reader r19: two sentences, all bold: the verdict with its number, then the orderings
    assert lead.count(". ") == 1 and lead.count("**") == 2, lead
    e = T.effects(adam)[(400, "bbb_mixture", "sgd")]
    lo, hi = T._ci_pp(e["ci_adj"]).strip("[]").split(", ")
    assert f"from the plain network's (95 % interval {lo} to {hi}, adjusted for three claims)" \
        in lead  # reader r18: the headline's interval says it is adjusted
    first, second = lead.split(". ")
    assert "not measurably better than a plain network: at 2×400" in first
    assert second.startswith("With Adam, none of the paper's three orderings (")
    assert "reproduced" not in lead  # "confirmed": 'not reproduced' read as 'refuted'
    bullets = rest.split("\n")
    assert len(bullets) <= 3 and all(b.startswith("- ") for b in bullets)
    assert any(b.startswith("- At 2×400 and 2×1200 each of the paper's four differences, its "
                            "three orderings and mixture − dropout, lies outside our interval at "
                            "that width") for b in bullets), rest
    ex = T.paper_excluded(adam)
    for W, (k, n) in ex.items():
        if k < n:
            assert f"At 2×{W}, with " in rest and f"our intervals cannot tell ({k} of {n} excluded)." in rest


def test_answer_shows_one_width_and_section_2_every_other(committed):
    _, paper_run, adam = committed
    head, rows = T.answer_rows(paper_run, adam, sigma_fixed=0.0067)
    assert head[0] == "claim at 2×400 (2×800, 2×1200: section 2)"
    assert not any("; at 2×" in c for r in rows for c in r)  # no other width inside a cell
    _, rows = T.effects_rows(paper_run, adam, skip_answer=True)
    ea = T.effects(adam)
    want = {(f"2×{W}", a, b) for (W, a, b) in ea if W != 400}
    names = {(a, b): w for a, b, w, _ in T.STORY_CLAIMS}
    got = {(r[0], r[1]) for r in rows}
    assert {(w, names[(a, b)]) for w, a, b in want} <= got
    assert ("2×1200", "mixture − dropout") in got  # the two rows the reader could not find
    assert ("2×1200", "mixture − random-start mixture (control)") in got


def test_sigma_line_says_the_gaussian_priors_sigma_is_inferred(monkeypatch):
    monkeypatch.setenv("BBB_RESULTS_DIR", str(ROOT / "results"))
    measured = PD.adam_load()
    if not measured:
        import pytest
        pytest.skip("no committed Adam-recipe σ check")
    line = T.sigma_line(measured, 0.0067)
    assert "the Gaussian prior's was not rerun, so its verdicts count on an inference" in line
    where = T.paper_rerun_words()  # measured in a rerun, extrapolated to the full runs
    assert where.startswith("in a 50-epoch rerun (seed 0, 2×"), where
    assert line.endswith(f"The paper's protocol: σ shifted uniformly {where}, extrapolated in "
                         "section 3.")
    assert "Gaussian" not in T.sigma_line(None, 0.0067)
    # reader r17: whether that inference could change a verdict, from the Adam recipe's tests
    import json
    adam = json.loads((ROOT / "results" / "01_mnist_classification" / "plan_v1" /
                       "summary.json").read_text())
    g = [e for (W, a, b), e in T.effects(adam).items() if "bbb_gaussian" in (a, b)
         and e.get("ci_adj")]
    res = [e for e in g if e["p_holm"] is not None and e["p_holm"] < T.ALPHA]
    line = T.sigma_line(measured, 0.0067, adam)
    assert ("none of them is resolved, so none would change" in line) == (bool(g) and not res)
    assert (f"{len(res)} of them resolved would lose its verdict" in line) == bool(res)
    assert "none would change" not in T.sigma_line(measured, 0.0067)


def test_rho_push_says_it_holds_at_every_width(monkeypatch):
    monkeypatch.setenv("BBB_RESULTS_DIR", str(ROOT / "results"))
    diag = PD.load()
    if diag is None:
        import pytest
        pytest.skip("no committed diagnostics")
    assert "The push does not depend on width: it holds at 2×1200 (not rerun)." in \
        T.rho_push_words(diag)


def test_takeaways_do_not_repeat_the_first_screen():
    """The takeaways point to the answer instead of restating it: the answer's headline interval
    (mixture − plain network at 2×400) and the weak-baseline finding appear in the first
    screen only; the warm start, Figure 2 (at the paper's 2×1200 width) and section 6 stay."""
    cells = _cells()
    short_at = next(i for i, t in enumerate(cells) if t.startswith("**In short: "))
    short = cells[short_at]
    take = cells[next(i for i, t in enumerate(cells) if t.startswith("## Takeaways")) + 1]
    assert take.startswith("Beyond the answer at the top:")
    lo, hi = (short.split("at 2×400 ")[1].split("(95 % interval ")[1]
              .split(",")[0].split(" to "))
    assert f"[{lo}, {hi}]" in cells[short_at + 2]  # the answer's table has it ...
    assert f"[{lo}, {hi}]" not in take  # ... the takeaways do not repeat it
    assert "weak baseline" not in take and "resolved below neither" not in take
    assert "**The warm start helps" in take and "(the paper's Figure 2; one seed, no interval)" in take


def test_mixture_kick_is_the_narrow_components_stiffness():
    """lr/(M σ₂²) for the paper-protocol scale mixture, and the largest one-step move of μ from
    the prior's gradient: it sits near the edge of the narrow component, and vanishes for an
    averaged cost or a flat prior (the words are then left out)."""
    import math
    c = {"method": "bbb_mixture", "reduction": "sum", "lr": 0.001, "batch_size": 128,
         "pi": 0.75, "neg_log_sigma1": 2.0, "neg_log_sigma2": 8.0}
    k = T.mixture_kick(c)
    assert k["M"] == 391
    assert k["stiff"] == pytest.approx(0.001 / (391 * math.exp(-16)))
    s2 = math.exp(-8)
    assert 1 * s2 < k["w_kick"] < 4 * s2  # where the narrow component stops dominating
    assert 0.5 * 0.001 / 391 * k["w_kick"] / s2**2 < k["kick"] <= 0.001 / 391 * k["w_kick"] / s2**2
    assert T.mixture_kick({**c, "reduction": "mean"}) is None
    assert T.mixture_kick({**c, "method": "bbb_gaussian"}) is None
    assert T.mixture_kick({**c, "neg_log_sigma2": 2.0, "lr": 1e-6})["stiff"] < 2


def test_search_words_follow_the_declared_plan():
    plan = {"search": {"budget": {"400": {"trials": 7, "max_epochs": 40}},
                       "spaces": {"sgd": {"lr": [1e-3]}, "bbb_mixture": {"start": ["warm"]}}}}
    words = T.search_words(plan)
    assert words == (" (7 trials per method and width, up to 40 epochs; BBB's start, random or "
                     "warm, searched; [the spaces](../docs/choices.md#notebook-01-table-1))")
    cold = {"search": {**plan["search"], "spaces": {"bbb_gaussian": {"lr": [1e-3]}}}}
    assert "start" not in T.search_words(cold) and "7 trials" in T.search_words(cold)
    two = {"search": {**plan["search"], "budget": {"400": {"trials": 7, "max_epochs": 40},
                                                  "800": {"trials": 9, "max_epochs": 40}}}}
    assert T.search_words(two) == ""


def test_epochs_enough_says_its_margin_in_numbers(committed):
    """Reader r19: 'ends more than twice that late change from 0' read as an odd factor; the
    margin is said as the interval's nearer end against both arms' largest late changes."""
    _, paper_run, _ = committed
    words = T.epochs_enough(paper_run, sigma_fixed=True)
    if "cannot change" not in words:
        pytest.skip("no resolved verdict under the paper's protocol")
    import re
    m = re.search(r"interval ends (\d+\.\d+) pp from 0, over (\d+) times the most both arms' "
                  r"late changes could move it \(2 × (\d+\.\d+) pp\)\.$", words)
    assert m, words
    near, k, big = float(m.group(1)), int(m.group(2)), float(m.group(3))
    assert k <= near / (2 * big) < k + 1.05  # the factor recomputes from the printed numbers
    assert "more than twice" not in words
