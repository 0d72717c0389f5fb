"""Notebook 01 after its thirteenth reading: the short answer carries the paper protocol's one
resolved ordering and the prior/start confound; "outside our interval" names the per-width
interval and the three-width exception; the predictor-rule count covers every BBB run (the
random-start control included); the σ rule's threshold is the code's. Each check reads the
committed results or planted records, so each can fail."""
from pathlib import Path

import pytest

from helpers import paper_protocol as P
from helpers import posterior_diagnostics as PD
from helpers import table1 as T


ROOT = Path(__file__).resolve().parent.parent




def test_short_answer_names_the_paper_protocols_resolved_ordering(committed):
    _, paper_run, adam = committed
    plain = T.plain_answer(paper_run, adam, sigma_fixed=0.0067)
    e = T.effects(paper_run)[(400, "dropout", "sgd")]
    resolved = e["p_holm"] is not None and e["p_holm"] < T.ALPHA
    assert ("Dropout − plain network holds at 2×400: " in plain) == (
        resolved and e["verdict"] == "holds")
    if resolved:
        lo, hi = T._ci_pp(e["ci_adj"]).strip("[]").split(", ")
        assert f"(adjusted 95 % interval {lo} to {hi}); the paper's {T._pp(e['paper'])} pp lies " in plain
        inside = e["ci_adj"][0] <= e["paper"] <= e["ci_adj"][1]
        assert plain.rstrip(".").endswith("inside" if inside else "outside")
    assert "comparisons with BBB (section 2's table) get no verdict" in plain
    assert "not tested here" not in plain
    # without sigma_fixed nothing is said of the paper's protocol
    assert "as we filled it in" not in T.plain_answer(paper_run, adam)


def test_outside_names_the_per_width_interval_and_the_widths_exception(committed):
    _, paper_run, adam = committed
    ea = T.effects(adam)
    but = T.widths_exceptions(adam)
    want = [W for (W, a, b), e in ea.items() if e.get("ci_widths") and e["paper"] is not None
            and T.excluded(e)[1] and e["ci_widths"][0] <= e["paper"] <= e["ci_widths"][1]]
    assert [int(x.split("×")[1].split()[0]) for x in but] == sorted(want)
    words = T.excluded_words(adam)
    assert "our per-width intervals exclude each of the paper's" in words
    assert ("(but " in words) == bool([W for W in want if W in
                                       [V for V, (k, n) in T.paper_excluded(adam).items()
                                        if k == n]])
    if 1200 in want:  # reader r19: the answer table reads 2×400 only; the short answer, which
        # says "outside" at 2×1200, names the interval over the widths that holds the paper's
        text = T.answer(paper_run, adam, 0.0067)
        cell = next(r for r in text.split("\n") if r.startswith("| mixture − dropout |"))
        assert cell.split(" | ")[4].rstrip(" |") == "yes", cell
        assert text.split("\n")[-1].startswith("| ")  # no note under the table
        assert ("; but at 2×1200 the paper's mixture − dropout, −0.04 pp, lies inside its "
                "interval adjusted for the three widths, −0.05 to +0.33.") in \
            T.plain_answer(paper_run, adam, 0.0067)
    # the other way: move the paper's value outside the three-width interval too
    e = ea[(1200, "bbb_mixture", "dropout")]
    far = dict(e, ci_widths=[e["ci_adj"][0] - 1e-9, e["ci_adj"][1] + 1e-9])
    import unittest.mock as mock
    with mock.patch.object(T, "effects", return_value={**ea, (1200, "bbb_mixture", "dropout"): far}):
        assert T.widths_exceptions(adam) == []
        assert "(but " not in T.excluded_words(adam)


def test_answer_names_the_prior_start_confound(committed):
    """Reader r17 shortened the short answer to one sentence and three bullets: the prior/start
    confound of mixture − Gaussian is named once, in the answer table's row (defined terms),
    not in the short answer."""
    _, paper_run, adam = committed
    plain = T.plain_answer(paper_run, adam, sigma_fixed=0.0067)
    warm = T.warm_widths(adam)
    split = [W for W in adam["widths"] if (W in warm.get("bbb_mixture", []))
             != (W in warm.get("bbb_gaussian", []))]
    head, rows = T.answer_rows(paper_run, adam, sigma_fixed=0.0067)
    row = next(r[0] for r in rows if r[0].startswith("mixture − Gaussian"))
    assert ("(starts differ at " in row) == bool(split), row
    for W in split:
        assert f"2×{W}" in row.split(":")[0]
    # reader r18: the bold sentence says the mixture was warm-started; the confound stays out
    assert plain.count("warm") == 1 and "starts differ" not in plain
    assert "(means warm-started from a trained plain network)" in plain.split("\n")[0]


def test_predictor_rule_counts_every_bbb_run(committed):
    pp, _, adam = committed
    groups = [(T.RECIPES["paper"], pp["widths"], lambda m, W: P.run_records(pp, W)[m]),
              (T.RECIPES["adam"], adam["widths"], T.adam_records(adam))]
    runs = [v for *_, x in T._rule_runs(groups) for v in x]
    ctl = [v for _, m, _, x in T._rule_runs(groups) if m == "bbb_random_start" for v in x]
    assert ctl, "the random-start control's runs are counted"
    mu = sum(v["predictor"] == "mean_weights" for v in runs)
    text = T.choices_direction(adam, groups)
    lines = [r.split(" | ") for r in text.split("\n") if r.startswith("| predictor rule")]
    # reader r19: one baseline per row, what the rule replaced first, always μ on its own row
    rows = {r[0].strip("| "): r for r in lines if r[2] == "always the average"}
    vs_mu = {r[0].strip("| "): r for r in lines if r[2] == "always μ"}
    picked = sum(v["predictor"] != "mean_weights" for v in ctl)
    own = rows["predictor rule, BBB's own runs"]  # every BBB run but the control's
    assert own[1].startswith(f"{len(runs) - len(ctl)} (")
    assert own[1].endswith(f"the average picked in {len(runs) - mu - picked}")
    # reader r17: each recipe whose runs all chose μ says so (the paper protocol's are not shown)
    for name, *_ in groups:
        xs = [v for n_, m, _, x in T._rule_runs(groups) if n_ == name and m != "bbb_random_start"
              for v in x]
        every = all(v["predictor"] == "mean_weights" for v in xs)
        assert (f"{len(xs)} {'with the' if name == T.RECIPES['adam'] else 'under'} {name}, all μ"
                in own[1]) == every, own[1]
    assert rows["predictor rule, random-start control"][1] == (
        f"{len(ctl)}; the average picked in {picked}")
    up = sum(v["predictor"] != "mean_weights" and v["test_error_ensemble"]
             > v["test_error_mean_weights"] for v in ctl)
    if up:
        assert vs_mu["predictor rule, random-start control"][3].startswith(f"raised {up}, ")
    # reader r18: first against the rule it replaced, always the average (choices.md entry 4)
    own_runs = [v for _, m, _, x in T._rule_runs(groups) if m != "bbb_random_start" for v in x]
    for key, xs in (("predictor rule, BBB's own runs", own_runs),
                    ("predictor rule, random-start control", ctl)):
        d = [v["test_error_mean_weights"] - v["test_error_ensemble"] for v in xs
             if v["predictor"] == "mean_weights"]
        said = ", ".join(f"{k} {c}" for k, c in (("lowered", sum(x < 0 for x in d)),
                                                  ("raised", sum(x > 0 for x in d))) if c)
        assert rows[key][3] == said, rows[key][3]
    assert "Against what each replaced ([the predictor rule's disclosure](" in text
    head, rows, words = T.predictor_summary(groups[1:])
    assert any(r[0] == T.RULE_LABELS["bbb_random_start"] for r in rows)


def test_sigma_rule_states_the_codes_threshold(monkeypatch):
    monkeypatch.setenv("BBB_RESULTS_DIR", str(ROOT / "results"))
    thr = T.shift_threshold()
    assert PD.shifted_uniformly({"0": {"rho_drift_q": [1.0, thr * 0.999]}})
    assert not PD.shifted_uniformly({"0": {"rho_drift_q": [1.0, thr * 1.001]}})
    diag = PD.load()
    if diag is None:
        pytest.skip("no committed diagnostics")
    words = T.sigma_rule_words(diag, PD.adam_load())
    assert ("the largest layer's 95th percentile of *ρ drift* over the smallest layer's median, "
            f"at most {thr:g} where σ *shifted uniformly*") in words
    # how far the reading is from the threshold: the gap between the two groups of runs
    assert "Any threshold between " in words and " reads every run the same way." in words
    for run in diag["runs"].values():
        r = T.drift_ratio(run["trace"][-1]["layers"])
        assert T._ratios([r]) in words or "–" in words  # each run's ratio, or a range holding it
    alt = [T.drift_ratio(e["layers"]) for e in ((PD.bbb06_load() or {}).get("seeds") or {}).values()
           if not PD.shifted_uniformly(e["layers"])]
    if alt:  # reader r17 (05): notebook 06's BBB, learned by the same rule, narrows the gap
        assert (f"and {T._ratios([min(alt)])} (the lowest *learned* ratio in the project, a BBB "
                "run of notebook 06) reads every run") in words  # reader r18
    assert "*KL bound*" in words and "*ρ drift* over the smallest" in words
    # reader r17: why a learned median sits at its start is said above the figure, not here
    assert "softplus(ρ₀ = −6)" not in words
    med = T.median_words(diag)
    assert med.startswith("In the Adam-recipe run a median σ can sit at its start, ")
    assert "softplus(ρ₀ = −6)" in med and "σ₂ = e⁻⁶" in med
    nb = (ROOT / "notebooks" / f"{T.NB}.py").read_text()
    assert nb.index("T.median_words(diag)") < nb.index("PD.figure(diag)")


def test_short_answers_count_of_bbb_comparisons_matches_section_2s_table(committed):
    """Reader r17: the short answer said 'two comparisons that involve BBB get no verdict'
    while section 2's table showed three such rows (two orderings and mixture − dropout). The
    count is now read from the same comparisons the table shows."""
    _, paper_run, adam = committed
    plain = T.plain_answer(paper_run, adam, sigma_fixed=0.0067)
    _, head, rows = T.fixed_sigma_rows(paper_run, 0.0067)
    n = sum(T.NO_VERDICT in " ".join(r) for r in rows)
    assert n >= 1
    assert (f"so its {T._NUM.get(n, n)} comparisons with BBB (section 2's table) get no "
            "verdict") in plain, plain


def test_mixture_swing_names_its_sd(committed):
    """Reader r17: 'epoch-to-epoch sd' was undefined; the sentence now says what the sd is of
    (the test error over the last 100 epochs, ``test_error_sd_last_100``)."""
    pp, paper_run, _ = committed
    words = T.mixture_kick_words(paper_run, pp)
    if "swings most" not in words:
        pytest.skip("the scale mixture's curve is not the noisiest in the committed runs")
    assert "swings most (test-error sd over the last 100 epochs " in words
    assert "epoch-to-epoch" not in words
