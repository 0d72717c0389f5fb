"""Notebook 00's rendered readings (helpers.theory): the takeaways come from
results/00_theory/checks.json, the Monte-Carlo KL table reports standard errors of the mean, and
the committed notebook shows what the results file holds."""
import copy
import json
import math
from pathlib import Path

import torch

import helpers as H
from helpers import theory

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOK = ROOT / "notebooks" / "00_theory.ipynb"


def _record():
    rows = [{"S": 1, "repeats": 100, "mean": 99.0, "sd": 10.0, "se": 1.0},
            {"S": 100, "repeats": 50, "mean": 100.05, "sd": 1.0, "se": 0.1}]
    return {"metrics": {
        "vi_fit": {"mu_q": 0.111, "sigma_q": 0.222, "mean_exact": 0.333, "sd_exact": 0.444},
        "reparam_grad": {
            "mu": {"estimate": 1.2345, "exact": 1.2, "standard_error": 0.0111, "within_4se": True},
            "sigma": {"estimate": 0.6543, "exact": 0.6, "standard_error": 0.0222,
                      "within_4se": True}},
        "kl_mc": {"exact": 100.0, "rows": rows},
        "scratch": {"loss_scratch": 12.34567, "loss_helpers": 12.34568, "max_grad_gap": 3.2e-7}}}


def test_takeaways_render_the_planted_numbers():
    text = theory.takeaways(_record())
    for planted in ("0.111", "0.222", "0.333", "0.444", "1.2345 ± 0.0111", "0.6543 ± 0.0222",
                    "12.34567", "12.34568", "3.2e-07", "100.00"):
        assert planted in text, planted
    # the largest gap in standard errors: |99 - 100| / 1 = 1.0 and |100.05 - 100| / 0.1 = 0.5
    assert "within 4 standard errors" in text and "the largest $|z|$: 1.0" in text
    # pooled with weights 1 and 100: (-1 + 100 * 0.05) / 101 = +0.040
    assert "+0.040 ±" in text
    assert "0.050 nats" in text  # the gap at the largest S


def test_takeaways_say_when_the_gradient_check_fails():
    rec = copy.deepcopy(_record())
    assert "the check fails" not in theory.takeaways(rec)
    rec["metrics"]["reparam_grad"]["sigma"]["within_4se"] = False
    assert "the check fails" in theory.takeaways(rec)


def test_mc_kl_rows_use_the_standard_error_of_the_mean():
    torch.manual_seed(0)
    layer = H.BayesLinear(5, 3, prior=H.GaussianPrior(0.3), rho_init=-2.0)
    rows = theory.mc_kl_rows(layer, (1, 10), total=200, min_repeats=30)
    assert [r["repeats"] for r in rows] == [200, 30]
    for r in rows:
        assert math.isclose(r["se"], r["sd"] / math.sqrt(r["repeats"]))
    exact = layer.kl_closed().item()
    for r in rows:  # unbiased: the mean within 5 standard errors of the closed form
        assert abs(r["mean"] - exact) < 5 * r["se"]
    lines = theory.mc_kl_lines(rows, exact)
    assert len(lines) == 3 and "z" in lines[0]


def test_committed_notebook_shows_the_results_file():
    rec = json.loads((ROOT / "results" / "00_theory" / "checks.json").read_text())
    cells = json.loads(NOTEBOOK.read_text())["cells"]
    shown = "".join("".join(o.get("text", "")) + "".join(o.get("data", {}).get("text/markdown", ""))
                    for c in cells if c["cell_type"] == "code" for o in c.get("outputs", []))
    assert theory.takeaways(rec) in shown
    kl = rec["metrics"]["kl_mc"]
    assert "\n".join(theory.mc_kl_lines(kl["rows"], kl["exact"])) in shown
    assert f"{rec['metrics']['scratch']['max_grad_gap']:.1e}" in shown
    assert f"{rec['metrics']['scratch']['val_error']:.2%}" in shown
    assert "\n".join(theory.log_q_gradient_lines(rec["metrics"]["reparam_grad_log_q"])) in shown
    assert "\n".join(theory.mixture_tail_lines(0.5, 1.0, math.exp(-6))) in shown
    vi = rec["metrics"]["vi_fit"]
    assert theory.fit_gap_line(vi["mu_q"], vi["sigma_q"], vi["mean_exact"], vi["sd_exact"]) in shown


def test_header_runtime_line_promises_nothing_the_notebook_does_not_show():
    """The header once said that the last cell prints the run's time; it printed none."""
    first = "".join(json.loads(NOTEBOOK.read_text())["cells"][0]["source"])
    assert "**Runtime**" in first
    assert "last cell prints" not in first
    assert "well under a minute" not in first  # contradicted by the recorded run
    cells = json.loads(NOTEBOOK.read_text())["cells"]
    shown = "".join("".join(o.get("data", {}).get("text/markdown", "")) for o in cells[1]["outputs"])
    # reader r19: the first screen gives the checks' outcome, then the recorded time
    rec = json.loads((ROOT / "results" / "00_theory" / "checks.json").read_text())
    assert shown == theory.first_screen() == theory.checks_answer(rec) + "\n\n" + theory.runtime_line()


def test_runtime_line_gives_one_time_that_of_the_run_shown(tmp_path):
    """Reader r18: the header gave two times (the run shown and an older timed `make notebooks`
    run) and a note on the project's history; it gives one now, that of the run whose numbers
    are shown, and falls back to results/runtimes.json only when no such run is recorded."""
    rec = json.loads((ROOT / "results" / "00_theory" / "checks.json").read_text())
    line = theory.runtime_line()
    assert line == (f"Recorded time (profile `default`): about {rec['wall_s'] / 60:.0f} min on a "
                    f"CPU for the run that computed the numbers shown ({rec['created'][:10]}, "
                    f"`results/00_theory/checks.json`).")
    assert "make notebooks" not in line and "older" not in line and "earlier version" not in line
    # planted files: the run shown wins; runtimes.json only without it; neither: no time
    (tmp_path / "00_theory").mkdir()
    (tmp_path / "runtimes.json").write_text(json.dumps(
        {"default": {"00_theory": {"wall_s": 120.0, "date": "2000-01-02"}}}))
    assert "about 2 min" in theory.runtime_line(root=tmp_path)
    assert "timed `make notebooks` run (2000-01-02" in theory.runtime_line(root=tmp_path)
    (tmp_path / "00_theory" / "checks.json").write_text(json.dumps(
        {"profile": "default", "wall_s": 600.0, "created": "2000-01-03T00:00:00"}))
    line = theory.runtime_line(root=tmp_path)
    assert "about 10 min" in line and "(2000-01-03," in line and "2000-01-02" not in line
    assert "No run" in theory.runtime_line(profile="no-such-profile", root=tmp_path)
    # the first screen: the checks' outcome from the recorded file, or a plain line without one
    assert theory.first_screen(root=tmp_path / "none").startswith("No run of the checks")
    assert "busy with other jobs" not in line and "EPYC" not in line  # no machine talk


def test_fit_gap_line_bounds_both_gaps_as_printed():
    """Reader r18: the prose said "a few per cent" of gaps under one per cent; the bound is
    rendered now, above both gaps as they are printed."""
    assert "both gaps under 1% of" in theory.fit_gap_line(0.5027, 0.3, 0.5, 0.3 / 1.007)  # +0.9 %, -0.7 %
    line = theory.fit_gap_line(0.50299, 0.3, 0.5, 0.3)  # +0.997 % prints as +1.0 %
    assert "+1.0%" in line and "under 2%" in line
    assert "under 4%" in theory.fit_gap_line(0.5, 0.3 * 0.968, 0.5, 0.3)  # -3.2 %


def test_log_q_check_tests_the_direct_term():
    """Reader r18: f = w^2 has no direct term df/dtheta; f = log q (BBB's theta-dependent part)
    has. Its exact gradient is (0, -1/sigma); the direct term has mean 0 and the sum is exact in
    every draw, while each term alone scatters."""
    torch.manual_seed(0)
    eps = torch.randn(20_000, dtype=torch.float64)
    check = theory.log_q_gradient_check(0.6, 0.3, eps)
    assert check["sigma"]["exact"] == -1 / 0.3 and check["mu"]["exact"] == 0.0
    for k in ("mu", "sigma"):
        assert check[k]["both_exact_every_draw"]
        assert check[k]["path"]["within_4se"] and check[k]["direct"]["within_4se"]
        assert check[k]["path"]["standard_error"] > 1e-3  # each term alone is noisy
    # the per-draw terms are known: path -eps^2/sigma and direct (eps^2 - 1)/sigma for sigma
    assert math.isclose(check["sigma"]["path"]["estimate"], -(eps ** 2).mean().item() / 0.3)
    assert math.isclose(check["sigma"]["direct"]["estimate"], ((eps ** 2).mean().item() - 1) / 0.3,
                        abs_tol=1e-12)
    lines = theory.log_q_gradient_lines(check)
    assert lines[-1].endswith(": True") and "exact -3.3333 in every draw: True" in lines[2]
    broken = copy.deepcopy(check)
    broken["sigma"]["direct"]["within_4se"] = False
    assert theory.log_q_gradient_lines(broken)[-1].endswith(": False")
    assert "the check fails" in theory.log_q_takeaway(broken)
    assert "exact gradient in every draw" in theory.log_q_takeaway(check)
    assert theory.log_q_takeaway(None) == ""


def test_kl_weighting_figure_marks_the_crossing_in_both_panels():
    """Reader r18: the crossing the text points at was squeezed against the right panel's edge."""
    import matplotlib
    matplotlib.use("Agg")
    M = 469
    uni, bl = H.kl_weights(M, "uniform"), H.kl_weights(M, "blundell")
    fig = theory.kl_weighting_figure(uni, bl)
    cross = int((bl < uni).nonzero()[0]) + 1
    assert bl[cross - 1] < uni[cross - 1] <= bl[cross - 2]
    for ax in fig.axes:
        vlines = [ln for ln in ax.get_lines() if list(ln.get_xdata()) == [cross, cross]]
        assert len(vlines) == 1, ax.get_title()
        assert f"from $i$ = {cross}" in vlines[0].get_label()


def test_mc_kl_verdict_pools_the_rows_and_names_the_missed_bars():
    rows = _record()["metrics"]["kl_mc"]["rows"]
    gap, se = theory.pooled_gap(rows, 100.0)
    assert math.isclose(gap, (-1.0 + 100 * 0.05) / 101) and math.isclose(se, 1 / math.sqrt(101))
    text = theory.mc_kl_verdict(rows, 100.0)
    assert "Every bar covers zero" in text and "1 of the 2 gaps are negative" in text
    assert f"{gap:+.3f} nats" in text and "holds zero" in text
    missed = [dict(r, mean=r["mean"] - 0.3) for r in rows]  # S = 100: gap -0.25 = -2.5 s.e.
    text = theory.mc_kl_verdict(missed, 100.0)
    assert "The bar of $S$ = 100 ($z$ = -2.5) misses zero" in text and "misses zero." not in text
    assert "uncertain by about ±10%" in text  # the last row's sd from 50 repeats: 1/sqrt(98)


def test_mc_kl_verdict_names_both_ends_of_the_interval_and_reads_the_last_sd():
    rows = _record()["metrics"]["kl_mc"]["rows"]
    gap, se = theory.pooled_gap(rows, 100.0)
    text = theory.mc_kl_verdict(rows, 100.0)
    assert f"below {gap - 1.96 * se:+.2f} or above {gap + 1.96 * se:+.2f} nats" in text
    # S = 100: sd * sqrt(S) = 10, as at S = 1, so its point is on the line: within chance
    assert "+0% off" in text and "(within chance)" in text
    far = [rows[0], dict(rows[1], sd=1.5)]  # +50 % off the line, 5 times a ±10 % uncertainty
    assert "more than chance readily explains" in theory.mc_kl_verdict(far, 100.0)


def test_section_texts_agree_with_their_figures():
    """Reader r17: the priors text contradicted the figure (Cauchy below the Gaussian on [-1, 1];
    the mixture's tails Gaussian), the criterion claimed every check, notebook 01's jargon."""
    src = (ROOT / "notebooks" / "00_theory.py").read_text()
    assert "heavy tail plus a sharp spike" not in src and "tails are still Gaussian" in src
    # reader r18: the paper is quoted, not paraphrased as "heavy next to the spike"
    assert "heavy next to the spike" not in src
    assert '"provides a heavier tail in the prior density\n# than is seen in a plain Gaussian prior"' in src
    assert "Cauchy's density is lower than the Gaussian's all over" in src
    assert "criterion for every\n# check of this notebook" not in src
    assert "paper-protocol" not in src and "Adam recipe" not in src
    assert '"Bayes by Backprop" (BBB)' in src
    # reader r18: section 3 says what each check tests; no bars claimed where there are none
    assert "$f(w) = w^2$ (path term only)" in src and "BBB's own $\\theta$-dependent term" in src
    assert "The figures' bars" not in src and "Section 6's figure draws $\\pm 2$ s.e. bars" in src
    assert "a few per cent" not in src and "project's one seeding helper" not in src
    # reader r19: no hypothetical number in the training log; the rescaled KL is rendered prose
    assert "rescaled, not a run" not in src and "theory.kl_scale_line(kl_ex, cfg.scratch_n)" in src
    # reader r19: the paper's sections, the free energy's sign, no claim the notebook doesn't show
    assert "§2–3" not in src and "| Bayes' rule for weights | §3 (its opening) |" in src
    assert 'BayesLinear(kl="mc"' not in src and "negative evidence lower bound" not in src
    assert "pushes many weights" not in src and "hundreds of orders" not in src
    assert "sets no threshold" not in src and "it is not a pass criterion" in src
    assert "the rest are driven by the data alone" not in src and "\\log_2 \\mathrm{KL}" in src
    assert "Gaussian of the mixture's variance" in src and "*same\n# variance*" in src
    assert "$\\rho_0 = -1$" in src and "starting at $-2$" in src
    cauchy, gauss = H.CauchyPrior(1.0), H.GaussianPrior(1.0)
    w = torch.linspace(-1, 1, 201)
    assert (cauchy.log_prob(w) < gauss.log_prob(w)).all()  # what the text now says
    ratio = lambda p: (p.log_prob(torch.zeros(1)) - p.log_prob(torch.ones(1))).exp().item()  # noqa: E731
    assert ratio(cauchy) > ratio(gauss) and ratio(H.LaplacePrior(1.0)) > ratio(gauss)


def test_departures_box_renders_the_profile():
    cfg = H.get_profile("00_theory", "smoke")
    box = theory.departures(cfg)
    assert box.startswith("**Departures from the paper and choices made after seeing numbers**")
    # reader r18: the title's second half is answered, and rho_0 is explained where it is used
    assert "No choice in this notebook followed a result" in box
    assert "The starting $\\rho$ (the parameter of each weight's $\\sigma$, section 4)" in box
    assert f"first {cfg.scratch_n:,} training images for {cfg.scratch_epochs} epochs" in box
    assert "lab_log.md#notebook-00" in box
    # the box holds departures only: the history of the divisor lives in docs/lab_log.md
    assert "it now" not in box and "fixed batch size of 128" in box
    assert "Section 7" not in box  # section 7 follows the paper; it is no departure
    # reader r19: Laplace's KL has a closed form too; section 6's prior is a setup choice
    assert "the one prior with a closed-form KL" not in box
    assert "A setup choice, not a departure: section 6" in box and "kl_closed()" in box
    assert "stochastic gradient descent (SGD)" in box and "$\\rho_0 = -1$" in box


def test_committed_notebook_shows_the_verdict_and_the_box():
    rec = json.loads((ROOT / "results" / "00_theory" / "checks.json").read_text())
    cells = json.loads(NOTEBOOK.read_text())["cells"]
    shown = "".join("".join(o.get("data", {}).get("text/markdown", ""))
                    for c in cells if c["cell_type"] == "code" for o in c.get("outputs", []))
    kl = rec["metrics"]["kl_mc"]
    assert theory.mc_kl_verdict(kl["rows"], kl["exact"]) in shown
    cfg = H.get_profile("00_theory", rec["profile"])
    assert theory.departures(cfg) in shown


def test_checks_answer_gives_the_outcome_and_says_when_a_check_fails():
    """Reader r19: the first screen states what the checks found, not only that they exist."""
    rec = copy.deepcopy(_record())
    rec["metrics"]["reparam_grad_log_q"] = theory.log_q_gradient_check(
        0.6, 0.3, torch.randn(2_000, dtype=torch.float64, generator=torch.Generator().manual_seed(0)))
    text = theory.checks_answer(rec)
    assert "every check with a pass criterion passes" in text and "not every" not in text
    assert "largest $|z|$ 3.1" in text  # (1.2345 - 1.2) / 0.0111 = 3.11; the KL rows' largest: 1.0
    assert "largest $|z|$ 1.0" in text and "on a KL of 100 nats" in text
    assert "relative 3.2e-07" in text and "12.34567 against 12.34568" in text
    assert "at most 50.0% of the posterior's sd" in text  # |0.111 - 0.333| / 0.444
    assert "sets no pass criterion" in text
    bad = copy.deepcopy(rec)
    bad["metrics"]["scratch"]["max_grad_gap"] = 2e-4
    assert "**not every check passes**: the from-scratch layer (section 8) failed" in \
        theory.checks_answer(bad)
    bad = copy.deepcopy(rec)
    bad["metrics"]["kl_mc"]["rows"][0]["mean"] = 95.0  # 5 standard errors off
    assert "the Monte-Carlo KL (section 6) failed" in theory.checks_answer(bad)
    bad = copy.deepcopy(rec)
    bad["metrics"]["reparam_grad_log_q"]["sigma"]["both_exact_every_draw"] = False
    assert "the Monte-Carlo gradients (section 3) failed" in theory.checks_answer(bad)


def test_kl_scale_line_rescales_the_kl_part():
    line = theory.kl_scale_line(30.0, 5_000, n_big=50_000)
    assert "3.00 nats per example" in line and "KL/N = 30.00 here" in line
    assert "$\\log 10$ = 2.30" in line


def test_mixture_tail_lines_compare_with_the_gaussian_of_equal_variance():
    """Reader r19: the paper's "heavier tail" is against a Gaussian of the same variance."""
    var, kurt = 0.5 * 1 + 0.5 * 0.01 ** 2, 3 * (0.5 + 0.5 * 0.01 ** 4) / (0.5 + 0.5 * 0.01 ** 2) ** 2 - 3
    lines = theory.mixture_tail_lines(0.5, 1.0, 0.01, w=10.0)
    assert f"sigma = {math.sqrt(var):.3f}" in lines[0] and f"excess kurtosis is {kurt:.2f}" in lines[0]
    log_n = lambda s: -0.5 * math.log(2 * math.pi * s * s) - 50 / (s * s)  # noqa: E731
    mix = H.ScaleMixturePrior(0.5, 1.0, 0.01).log_prob(torch.tensor([10.0])).item()
    assert f"mixture {mix:.1f}, Gaussian of equal variance {log_n(math.sqrt(var)):.1f}" in lines[1]
    assert mix > log_n(math.sqrt(var)) + 40  # far heavier than the equal-variance Gaussian
    assert f"Gaussian sigma = 1 {log_n(1.0):.1f}" in lines[1] and "log(1/pi) = 0.69" in lines[1]


def test_kl_weighting_figure_hides_no_weight():
    """Reader r19: the log panel was cut at 1e-12 and hid pi_i beyond i = 40."""
    import matplotlib
    matplotlib.use("Agg")
    uni, bl = H.kl_weights(469, "uniform"), H.kl_weights(469, "blundell")
    fig = theory.kl_weighting_figure(uni, bl)
    low, high = fig.axes[1].get_ylim()
    assert low < bl.min().item() and high >= bl.max().item()
    # one legend below both panels: none covers the crossing line or the curves
    assert all(ax.get_legend() is None for ax in fig.axes) and len(fig.legends) == 1


def test_mc_kl_verdict_says_how_much_the_pooled_gap_rests_on_the_last_row():
    """Reader r20: the pooled interval bounds a bias common to every S, its weight lies mostly on
    the last row, and the other rows alone may tell another story."""
    rows = [{"S": 1, "repeats": 100, "mean": 99.0, "sd": 10.0, "se": 1.0},
            {"S": 10, "repeats": 100, "mean": 99.0, "sd": 3.0, "se": 1.0},
            {"S": 100, "repeats": 50, "mean": 100.05, "sd": 1.0, "se": 0.1}]
    sp = theory.pooled_split(rows, 100.0)
    assert math.isclose(sp["share"], 100 / 102) and math.isclose(sp["rest"], -1.0)
    assert math.isclose(sp["rest_se"], 1 / math.sqrt(2)) and sp["df"] == 2
    gap = (-2 + 100 * 0.05) / 102
    q = 2 * (-1 - gap) ** 2 + 100 * (0.05 - gap) ** 2
    assert math.isclose(sp["q"], q) and math.isclose(sp["p"], math.exp(-q / 2))  # chi2, 2 df
    text = theory.mc_kl_verdict(rows, 100.0)
    assert "a bias common to every $S$" in text and "carries 98% of its weight" in text
    assert "$S$ ≤ 10 alone give -1.00 nats" in text and "an interval that holds zero" in text
    assert f"$Q$ = {q:.1f} on 2 degrees of freedom" in text
    assert ("no more than chance allows" in text) == (sp["p"] >= 0.05)


def test_chi2_tail_matches_the_closed_forms():
    for x in (0.5, 3.0, 8.4):
        assert math.isclose(theory._chi2_sf(x, 1), math.erfc(math.sqrt(x / 2)))
        assert math.isclose(theory._chi2_sf(x, 4), math.exp(-x / 2) * (1 + x / 2))
        assert math.isclose(theory._chi2_sf(x, 3), math.erfc(math.sqrt(x / 2))
                            + math.sqrt(2 * x / math.pi) * math.exp(-x / 2))


def test_first_screen_largest_z_covers_the_log_q_check():
    rec = copy.deepcopy(_record())
    rec["metrics"]["reparam_grad_log_q"] = {"sigma": {
        "exact": -1.0, "both_exact_every_draw": True,
        "path": {"estimate": -1.5, "standard_error": 0.1, "within_4se": False},
        "direct": {"estimate": 0.5, "standard_error": 0.1, "within_4se": False}}}
    text = theory.checks_answer(rec)
    assert "largest $|z|$ 5.0" in text and "failed" in text
    assert "carries 99% of that weight" in text and "the other rows alone give -1.00" in text
