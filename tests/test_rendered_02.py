"""Notebook 02's readings (helpers.regression), rendered from its results files: planted numbers
come out, and the wording follows the numbers rather than a fixed story."""
import copy
import re
import statistics

import pytest
import torch

from helpers import get_profile
from helpers import regression as R
from helpers import stats

METHODS = ("bbb_gaussian", "bbb_mixture", "mc_dropout", "deep_ensemble", "mle")


def _row(seed, ratio=2.0, std_in=0.06, rmse_in=0.065, **kw):
    row = {"seed": seed, "coverage50_in": 0.6, "coverage90_in": 0.9, "nll_in": -1.3,
           "rmse_in": rmse_in, "coverage50_out": 0.5, "coverage90_out": 0.9, "nll_out": 1.0,
           "rmse_out": 0.5, "std_ratio": ratio, "std_in": std_in, "std_out": std_in * ratio}
    row.update(kw)
    return row


def _per_seed(ratios, **kw):
    """{method: per-seed rows}, ``ratios[method]``: its std ratio on each seed."""
    return {m: [_row(s, r, **kw) for s, r in enumerate(rs)] for m, rs in ratios.items()}


def _summary(per_seed):
    out = {}
    for m, rows in per_seed.items():
        out[m] = {}
        for k in R.SCORES:
            vals = [r[k] for r in rows]
            out[m][k] = {"per_seed": vals, "mean": statistics.fmean(vals),
                         "sd": statistics.stdev(vals) if len(vals) > 1 else None}
    return out


def _curve(epi_in, epi_out, sigma=0.1):
    """A grid_curve whose epistemic variance is ``epi_in`` on [0, 0.5], ``epi_out`` elsewhere."""
    g = R.plot_grid().squeeze(1)
    epi = torch.where((g >= 0) & (g <= 0.5), torch.tensor(epi_in), torch.tensor(epi_out))
    return {"epistemic_var": epi.tolist(), "sigma": sigma, "quantiles": {}}


def _verdicts(outcomes, n=5, ci=(-0.2, 0.1), diffs=None):
    """A verdicts record of the plan's 24 claims: ``outcomes[claim]`` is 'holds' or 'reversed'
    (others: not resolved) or (verdict, ci). ``diffs[claim]``: its mean difference (default
    -0.05 against the standard network, +0.05 against the others: no score one-signed)."""
    metrics = {}
    for family, scores in R.FAMILY_SCORES.items():
        metrics[family] = {}
        for sc in scores:
            for b in R.BBB:
                for r in R.RIVALS:
                    name = R.claim_name(b, r, sc)
                    got = outcomes.get(name, f"not resolved at {n} seeds")
                    verdict, c = got if isinstance(got, tuple) else (got, ci)
                    d = (diffs or {}).get(name, -0.05 if r == "mle" else 0.05)
                    metrics[family][name] = {
                        "verdict": verdict, "alpha": 0.05, "p_holm": 0.5,
                        "t_test": {"n": n, "mean_diff": d, "ci": c and list(c),
                                   "p": 0.5 if verdict.startswith("not") else 0.001},
                        "sign_test": {"p": 0.0625}}
    return {"seed": list(range(n)), "metrics": metrics}


def _all(family_score, diff):
    """{claim: diff} for the six claims of one score (e.g. 'nll_in')."""
    return {R.claim_name(b, r, family_score): diff for b in R.BBB for r in R.RIVALS}


# ---- figure5_text ----

def test_figure5_text_follows_the_numbers():
    ps = {"bbb_gaussian": [_row(3, 12.5, std_in=0.07, rmse_in=0.0655)],
          "mle": [_row(3, 1.0, std_in=0.061, rmse_in=0.0648)]}
    text = R.figure5_text(ps, 3, 0.062)
    assert text.startswith("On seed 3 (the figure above):\n\n- **In the training range**")
    assert ("both bands are about as wide as the data's root-mean-square scatter of 0.062 "
            "(section 1): mean predictive std 0.070 for BBB (Gaussian prior) and 0.061 for the "
            "standard network.") in text
    assert "Both predictive means follow the data (RMSE, the root-mean-square error of the " \
           "mean on fresh draws: 0.0655 and 0.0648)." in text
    assert "the band of BBB (Gaussian prior) opens up: its mean predictive std is 0.875, 12.50 " \
           "times that inside." in text
    assert "- The band of the standard network keeps the same width everywhere (mean std 0.061)" \
           in text
    assert text.count("scatter") == 1 and text.count("\n- ") == 3
    ps = {"bbb_gaussian": [_row(3, 0.9, std_in=0.2, rmse_in=0.2)],
          "mle": [_row(3, 1.3, std_in=0.03, rmse_in=0.07)]}
    text = R.figure5_text(ps, 3, 0.062)
    assert ("the band of BBB (Gaussian prior) is 3.2 times as wide as the data's root-mean-square "
            "scatter of 0.062 (section 1) (mean predictive std 0.200); that of the standard "
            "network is only 0.48 times as wide as it (mean predictive std 0.030).") in text
    assert ("The predictive mean of BBB (Gaussian prior) strays from the data, that of the "
            "standard network follows the data") in text and "Both" not in text
    assert "does not open up on this seed" in text and "opens up" not in text
    assert "changes width away from the data: its mean std is 1.30 times that inside" in text
    assert "same width" not in text


# ---- widening_text and the std ratio table ----

def test_widening_text_follows_the_numbers():
    ps = _per_seed({"bbb_gaussian": [12, 9], "bbb_mixture": [1.5, 1.7], "mc_dropout": [3, 2],
                    "deep_ensemble": [6, 4], "mle": [1.0, 1.0]})
    text = R.widening_text(_summary(ps))
    assert text.startswith("- Every method that averages over networks widens its band away "
                           "from the data, on every one of the 2 seeds (std ratio above 1).")
    assert "mean std ratio" not in text and "10.50" not in text  # the table above says them
    assert "- The band of the standard network keeps the same width on every seed (std ratio " \
           "1.00)." in text
    ps["bbb_mixture"][1]["std_ratio"] = 0.9
    ps["mc_dropout"] = [dict(r, std_ratio=0.8) for r in ps["mc_dropout"]]
    ps["mle"][1]["std_ratio"] = 1.2
    text = R.widening_text(_summary(ps))
    assert "Every method" not in text
    assert ("- The std ratio is above 1 (a wider band away from the data) on 2 of 2 seeds for "
            "BBB (Gaussian prior) and the deep ensemble; on 1 of 2 seeds for BBB (scale-mixture "
            "prior); on 0 of 2 seeds for MC dropout.") in text
    assert "changes width (mean std ratio 1.10)" in text and "same width" not in text
    ps = _per_seed({m: [0.9, 0.95] for m in METHODS[:-1]} | {"mle": [1.0, 1.0]})
    text = R.widening_text(_summary(ps))
    assert text.startswith("- No method that averages over networks widens its band")


def test_std_ratio_and_verdict_tables():
    ps = _per_seed({"bbb_gaussian": [12, 9], "mle": [1.0, 1.0]})
    header, rows = R.std_ratio_rows(_summary(ps))
    assert rows == [["BBB, Gaussian prior", "10.50 ± 2.12 (12.00, 9.00)"],
                    ["standard network", "1.00 ± 0.00 (1.00, 1.00)"]]
    header, rows = R.std_ratio_rows(_summary(ps), ps)  # the ratio's denominator beside it
    assert header[2] == "mean predictive std in the training range"
    assert rows[0][2] == "0.060 ± 0.000 (0.060, 0.060)"
    # the variance methods_text describes: n - 1 in the denominator (two members 0 and 1: 0.5)
    assert R.Predictive(torch.tensor([[0.0], [1.0]]), 0.0).epistemic_var.item() == 0.5
    ps = _per_seed({"bbb_gaussian": [12, 9, 10.5], "bbb_mixture": [0.8, 1.2, 1.0],
                    "mle": [1.0, 1.0, 1.0]})
    assert R.std_ratio_test_text(ps) == (  # exploratory: BBB's mean against 1, no verdict word
        "*Exploratory:* the standard network's std ratio is 1 by construction (one constant σ), "
        "so BBB's is compared with 1. Mean over the 3 seeds (95 % interval): BBB (Gaussian "
        "prior) 10.50 (6.77 to 14.23), BBB (scale-mixture prior) 1.00 (0.50 to 1.50); only BBB "
        "(Gaussian prior)'s interval excludes 1.")
    ps["mle"] = [dict(r, std_ratio=1.2) for r in ps["mle"]]
    text = R.std_ratio_test_text(ps)
    assert "std ratio is 1.20 on average, so BBB's is compared with 1.20." in text
    assert "by construction" not in text and "; only BBB (Gaussian prior)'s interval" in text
    ps["bbb_mixture"] = [dict(r, std_ratio=3.0 + r["seed"]) for r in ps["bbb_mixture"]]
    assert R.std_ratio_test_text(ps).endswith("; both intervals exclude 1.20.")
    one = _per_seed({"bbb_gaussian": [12], "mle": [1.0]})  # the smoke profile: one seed
    assert R.std_ratio_test_text(one).startswith("*Exploratory:* mean over ") and \
        "12.00 (one seed: no interval)" in R.std_ratio_test_text(one)
    header, rows = R.verdict_rows(_verdicts({"bbb_mixture < mle on nll_out": "holds"}),
                                  "away from the data")
    assert "mean difference (BBB − rival)" in header and header[0].startswith("claim (BBB <")
    assert "p (Holm-adjusted)" in header and "|difference| a verdict needs (its Holm step)" in header
    # the difference a verdict needs: 2.12 (|t| at 0.05/12, df 4, over t at 0.975) x half-width
    assert rows[3] == ["BBB, scale-mixture prior < standard network", "NLL", "-0.050",
                       "[-0.200, +0.100]", "0.318", "0.500", "0.062", "holds"]
    assert rows[0][-1] == "not resolved at 5 seeds"
    # a bound that 3 decimals would print as 0 gets 4, so that excluding 0 stays visible
    header, rows = R.verdict_rows(_verdicts({}, ci=(0.0003, 0.0376)), "near the data")
    assert rows[0][3] == "[+0.0003, +0.0376]"
    header, rows = R.verdict_rows(_verdicts({}, n=1, ci=None), "near the data")
    assert rows[0][3:5] == ["—", "—"]


# ---- variance_split_text ----

def test_variance_split_text_follows_the_numbers():
    x = R.plot_grid()
    text = R.variance_split_text({"bbb_gaussian": _curve(0.001, 0.5)}, x, 7)
    assert text.startswith("On seed 7, for BBB (Gaussian prior):\n\n- **In the training range**")
    assert "lies below the aleatoric $\\sigma^2 = 0.01000$ at every grid point (at most 0.10 " \
           "times it). It makes up a small part of the total: 9 % on average" in text
    assert "close to the learned noise alone" in text
    assert "lies above the aleatoric $\\sigma^2$ at every grid point (on average 50 times it). " \
           "It makes up almost all of the total: 98 % on average" in text
    assert "- Only seed 7's curves are shown (the other seeds keep their scores" in text
    text = R.variance_split_text({"mc_dropout": _curve(0.02, 0.005)}, x, 7, method="mc_dropout")
    assert "for MC dropout:" in text
    assert "lies above the aleatoric $\\sigma^2 = 0.01000$ at every grid point (on average 2.00 " \
           "times it). It makes up most of the total: 67 %" in text
    assert "below the aleatoric $\\sigma^2$ at every grid point (at most 0.50 times it). It " \
           "makes up less than half of the total: 33 %" in text
    assert "close to the learned noise alone" not in text
    curve = _curve(0.001, 0.5)
    g = x.squeeze(1)
    curve["epistemic_var"] = [0.5 if 0 <= v <= 0.1 else e
                              for v, e in zip(g.tolist(), curve["epistemic_var"])]
    text = R.variance_split_text({"bbb_gaussian": curve}, x, 0)
    n_in = int(((g >= 0) & (g <= 0.5)).sum())
    n_hi = int(((g >= 0) & (g <= 0.1)).sum())
    assert f"below the aleatoric $\\sigma^2 = 0.01000$ at {n_in - n_hi} of {n_in} grid points, " \
           "above it at the others" in text


# ---- coverage_in_text and coverage_spread_text ----

def test_coverage_in_text_follows_the_numbers():
    ps = _per_seed({m: [1, 1, 1] for m in METHODS})
    for i, m in enumerate(METHODS):
        for s, row in enumerate(ps[m]):
            row["coverage50_in"] = 0.6 + 0.01 * i + 0.02 * s
            row["coverage90_in"] = 0.90 + 0.01 * i
    text = R.coverage_in_text(_summary(ps))
    assert text.startswith("- **In the training range** every method's central 50 % interval "
                           "covers more than 50 % of the fresh draws, on every one of the 3 seeds")
    assert "(means 0.620 to 0.660; lowest seed 0.600, BBB (Gaussian prior)'s): these intervals " \
           "are too wide." in text
    assert "- The central 90 % intervals cover 0.900 to 0.940 on average, all within 0.05 of " \
           "the target 0.90." in text
    assert "- A possible reason, not tested here: the noise on $y$ is not Gaussian" in text
    ps["deep_ensemble"][1]["coverage50_in"] = 0.45
    ps["mle"] = [dict(r, coverage50_in=0.4, coverage90_in=0.8) for r in ps["mle"]]
    text = R.coverage_in_text(_summary(ps))
    assert "every method" not in text
    assert ("covers more than 50 % on average for BBB (Gaussian prior), BBB (scale-mixture "
            "prior), MC dropout and the deep ensemble, at most 50 % for the standard network") \
        in text
    assert ("Per seed, it covers at most 50 % for the deep ensemble on 1 of 3 and the standard "
            "network on 3 of 3.") in text
    assert "lowest seed 0.400, the standard network's" in text
    assert "cover 0.800 to 0.930 on average (target 0.90)." in text and "within" not in text
    ps = {m: [dict(r, coverage50_in=0.45) for r in rows] for m, rows in ps.items()}
    text = R.coverage_in_text(_summary(ps))
    assert "on average for no method, at most 50 % for BBB (Gaussian prior)" in text
    assert "not Gaussian" not in text and "too wide" not in text


def test_coverage_spread_text_follows_the_numbers():
    ps = _per_seed({m: [1, 1, 1, 1, 1] for m in METHODS})
    for s, v in enumerate((0.995, 0.741, 1.0, 0.998, 0.998)):
        ps["bbb_gaussian"][s]["coverage90_out"] = v
    text = R.coverage_spread_text(_summary(ps))
    assert text == ("- **BBB (Gaussian prior), away from the data:**\n  - the central 90 % "
                    "interval covers 0.946 on average (target 0.90), but 0.741 to 1.000 per "
                    "seed: 4 seeds too wide and 1 too narrow by more than 0.05.")
    ps["bbb_gaussian"][1]["coverage90_out"] = 0.86  # not too narrow; the mean 0.970 not near
    text = R.coverage_spread_text(_summary(ps))
    assert text.startswith("- In these tables (5 seeds) no mean coverage within 0.05 of its "
                           "target")
    ps["bbb_gaussian"][1]["coverage90_out"] = 0.5  # the mean 0.898: near, both sides missed
    for s, v in enumerate((0.4, 0.42, 0.553, 0.447, 0.482)):
        ps["bbb_gaussian"][s]["coverage50_out"] = v
    ps["mle"][0]["coverage50_in"] = 0.3            # the mean 0.54 in, seeds 0.3 and 0.6
    text = R.coverage_spread_text(_summary(ps))
    assert text.count("\n- ") == 1 and text.count("\n  - ") == 3
    assert text.count("by more than 0.05") == 1
    assert ("- **BBB (Gaussian prior), away from the data:**\n  - the central 50 % interval "
            "covers 0.460 on average (target 0.50), but 0.400 to 0.553 per seed: 1 seed too wide "
            "and 3 too narrow by more than 0.05;\n  - the central 90 % interval covers 0.898") \
        in text
    assert ("- **The standard network, in the training range:**\n  - the central 50 % interval "
            "covers 0.540 on average (target 0.50), but 0.300 to 0.600 per seed: 4 seeds too "
            "wide and 1 too narrow.") in text


# ---- what_it_shows ----

def test_what_it_shows_follows_the_verdicts():
    v = _verdicts({"bbb_gaussian < mc_dropout on nll_out": "holds",
                   "bbb_gaussian < mle on cover_err_out": "holds",
                   "bbb_gaussian < mc_dropout on cover_err_out": "holds",
                   "bbb_gaussian < mle on cover_err_in": "reversed",
                   "bbb_gaussian < deep_ensemble on cover_err_in": "reversed",
                   "bbb_mixture < mle on nll_in": ("not resolved at 5 seeds", (0.01, 0.2))},
                  diffs=_all("nll_in", 0.02))
    text = R.what_it_shows(v)
    assert ("- **Away from the data:** BBB (Gaussian prior) is better than MC dropout on NLL, and "
            "better than the standard network and MC dropout on coverage error. No claim is "
            "reversed. The other 9 of the 12 claims are not resolved at 5 seeds.") in text
    assert ("- **Near the data:** No claim that BBB is better holds. The standard network and "
            "the deep ensemble are better than BBB (Gaussian prior) on coverage error. The other "
            "10 of the 12 claims are not resolved at 5 seeds.") in text
    assert ("- Near the data, BBB's mean NLL, with either prior, is higher than every rival's: "
            "all 6 mean differences lie above 0, by 0.020 to 0.020 nats; no 95 % interval "
            "reaches above +0.200 nats. None of these 6 NLL claims is resolved at 5 "
            "seeds.") in text and text.count("every rival's") == 1
    assert ("- 1 of the 19 unresolved claims has an unadjusted 95 % interval that excludes 0:\n"
            "  - near the data: none favours BBB and 1 favours the rival (interval above 0).\n"
            "- What a verdict needs") in text
    assert ("- What a verdict needs here (the column *|difference| a verdict needs*): with 5 "
            "seeds, the claim with the smallest p passes Holm only with |t| > 5.9 (df 4), a mean "
            "difference at least 2.1 times the half-width of its unadjusted 95 % interval; each "
            "later step needs a little less, down to 1.0 times at the last (α/1).") in text
    assert "away from the data:" not in text
    assert "cannot go below p = 0.0625" in text and "could never reach α = 0.05" in text
    assert " < " not in text
    v = _verdicts({"bbb_mixture < deep_ensemble on nll_in": "reversed",
                   "bbb_gaussian < mle on cover_err_out": "holds",
                   "bbb_mixture < mle on cover_err_out": "holds",
                   "bbb_gaussian < mle on nll_out": ("not resolved at 6 seeds", (-0.3, -0.1)),
                   "bbb_mixture < mle on nll_out": ("not resolved at 6 seeds", (-0.3, -0.1)),
                   "bbb_gaussian < mc_dropout on nll_out": ("not resolved at 6 seeds", (0.1, 0.3)),
                   "bbb_gaussian < mle on nll_in": ("not resolved at 6 seeds", (0.1, 0.3))},
                  n=6, diffs=_all("cover_err_out", -0.1))
    text = R.what_it_shows(v)
    assert ("- Away from the data, BBB's mean coverage error, with either prior, is lower than "
            "every rival's: all 6 mean differences lie below 0, by 0.100 to 0.100; no 95 % "
            "interval reaches below -0.200. 2 of these 6 coverage error "
            "claims are resolved.") in text and "higher than" not in text
    assert ("The deep ensemble is better than BBB (scale-mixture prior) on NLL. The other 11 of "
            "the 12 claims") in text
    assert ("- 4 of the 21 unresolved claims have an unadjusted 95 % interval that excludes 0:\n"
            "  - away from the data: 2 favour BBB (interval below 0) and 1 favours the rival "
            "(interval above 0);\n  - near the data: none favours BBB and 1 favours the rival "
            "(interval above 0).") in text
    assert "p = 0.0312" in text and "could never reach" not in text
    assert "with 6 seeds, the claim with the smallest p passes Holm only with |t| > 5.0 (df 5)" \
        in text
    text = R.what_it_shows(_verdicts({}, n=6))
    assert "- **Away from the data:** none of the 12 claims is resolved at 6 seeds." in text
    assert "- None of the 24 unresolved claims have an unadjusted 95 % interval that excludes " \
           "0." in text and "every rival's" not in text
    v = _verdicts({}, n=1, ci=None)  # one seed: no interval, so no line about intervals
    text = R.what_it_shows(v)
    assert "interval" not in text and "none of the 12 claims is resolved at 1 seed" in text


# ---- takeaways_text ----

def test_takeaways_text_follows_the_numbers():
    x = R.plot_grid()
    ps = _per_seed({"bbb_gaussian": [12, 9], "bbb_mixture": [1.5, 1.7], "mc_dropout": [3, 2],
                    "deep_ensemble": [6, 4], "mle": [1.0, 1.0]})
    for m, c in zip(METHODS, (0.95, 0.3, 0.4, 0.5, 0.1)):
        for r in ps[m]:
            r["coverage90_out"] = c
    ps["bbb_gaussian"][0]["coverage90_out"], ps["bbb_gaussian"][1]["coverage90_out"] = 1.0, 0.8
    v = _verdicts({"bbb_gaussian < mc_dropout on nll_out": ("holds", (-2.8, -1.0)),
                   "bbb_gaussian < mle on cover_err_in": ("reversed", (0.028, 0.048))},
                  diffs={"bbb_gaussian < mc_dropout on nll_out": -1.9,
                         "bbb_gaussian < mle on cover_err_in": 0.038})
    text = R.takeaways_text(_summary(ps), {"bbb_gaussian": _curve(0.001, 0.5)}, x, 0, v)
    assert text.startswith("- Away from the data every method that averages over networks "
                           "widens its band on every one of the 2 seeds (std ratio above 1, "
                           "section 4); the standard network's band cannot widen.")
    # the coverage away from the data is the answer's and section 6's, not repeated here
    assert "covers on average" not in text and "not always a right one" not in text
    assert ("- **What the declared tests found** (section 6, 5 seeds, 24 claims):\n  - away from "
            "the data, BBB (Gaussian prior) has a lower NLL than MC dropout (by 1.900, 95 % "
            "interval 1.000 to 2.800);\n  - near the data, BBB (Gaussian prior) has a higher "
            "coverage error than the standard network (by 0.038, 95 % interval 0.028 to 0.048);"
            "\n  - the other 22 claims are not resolved, among them all 12 about BBB "
            "(scale-mixture prior).\n") in text and "every rival's" not in text
    v = _verdicts({"bbb_gaussian < mle on cover_err_in": "reversed"}, diffs=_all("nll_in", 0.02))
    text2 = R.takeaways_text(_summary(ps), {"bbb_gaussian": _curve(0.001, 0.5)}, x, 0, v)
    # the one-signed NLL differences are section 6's reading (what_it_shows), not repeated here
    assert ("  - near the data, BBB (Gaussian prior) has a higher coverage error than the standard "
            "network (by -0.050, 95 % interval -0.200 to 0.100);\n  - the other 23 claims") in text2
    assert "every rival's" not in text2
    assert "every rival's" in R.what_it_shows(v)
    assert "away from the data, " not in text2
    assert ("the learned noise $\\sigma$ (aleatoric) dominates inside the training range "
            "(epistemic share of the total variance 9 % on average) and the spread over weights "
            "(epistemic) takes over away from the data (98 %)") in text
    ps["bbb_mixture"][1]["std_ratio"] = 0.9
    for m in METHODS[:-1]:
        for r in ps[m]:
            r["coverage90_out"] = 0.97
    text = R.takeaways_text(_summary(ps), {"bbb_gaussian": _curve(0.02, 0.005)}, x, 0,
                            _verdicts({}))
    assert ("the methods that average over networks widen their bands on 2 of 2 seeds for BBB "
            "(Gaussian prior), MC dropout and the deep ensemble, on 1 of 2 seeds for BBB "
            "(scale-mixture prior) (std ratio above 1") in text
    assert "every method" not in text
    assert text.count("- **What the declared tests found** (section 6, 5 seeds, 24 claims):\n"
                      "  - none of the 24 claims is resolved.\n") == 1
    text2 = R.takeaways_text(_summary(ps), {"bbb_gaussian": _curve(0.02, 0.005)}, x, 0,
                             _verdicts({}, diffs=_all("cover_err_out", -0.1)))
    assert "  - none of the 24 claims is resolved.\n" in text2 and "every rival's" not in text2
    assert "the spread over weights (epistemic) dominates already inside" in text
    assert "the learned noise (aleatoric) still dominates away from the data (33 %)" in text
    assert "declared tests" not in R.takeaways_text(_summary(ps), {"bbb_gaussian": _curve(
        0.02, 0.005)}, x, 0)


# ---- answer_text (the first screen) ----

def test_answer_text_follows_the_numbers():
    ps = _per_seed({"bbb_gaussian": [12, 9, 10], "bbb_mixture": [1.5, 1.7, 1.6],
                    "mc_dropout": [3, 2, 2.5], "deep_ensemble": [6, 4, 5], "mle": [1.0, 1.0, 1.0]})
    for m, cov in (("bbb_gaussian", (0.95, 0.74, 1.0)), ("mle", (0.1, 0.2, 0.0))):
        for row, c in zip(ps[m], cov):
            row["coverage90_out"] = c
    v = _verdicts({"bbb_gaussian < mc_dropout on nll_out": ("holds", (-2.8, -1.0)),
                   "bbb_gaussian < mle on cover_err_in": ("reversed", (0.028, 0.048))},
                  n=3, diffs={"bbb_gaussian < mc_dropout on nll_out": -1.9,
                              "bbb_gaussian < mle on cover_err_in": 0.038})
    text = R.answer_text(_summary(ps), v)
    assert text.startswith("**(a) Yes: away from the data the band of BBB (Gaussian prior) widens "
                           "10.3-fold (9.0 to 12.0 per seed); a standard network's keeps one "
                           "width; with the scale-mixture prior (a point of the paper's MNIST "
                           "grid, $\\pi=\\frac12$, $\\sigma_1=1$, $\\sigma_2=e^{-6}$; the paper "
                           "names no prior for Figure 5), BBB's widens only 1.6-fold.**\n\n"
                           "- **Coverage "
                           "there:** the central 90 % interval of BBB (Gaussian prior) covers "
                           "0.897 of fresh draws")
    assert ("on average (target 0.90), but 0.740 to 1.000 per seed: only 1 of its 3 seeds is "
            "within 0.05 (1 too wide, 1 too narrow).") in text and "off the truth" not in text
    assert "; on seed 4 the band is wide but its median lies off the truth (section 6)." in \
        R.answer_text(_summary(ps), v, off_centre=True, seed=4)
    assert ("\n- **The other methods there:** BBB (scale-mixture prior)'s std ratio is 1.6, "
            "below MC dropout's (2.5) and the deep ensemble's (5.0); its central 90 % "
            "interval covers 0.900 there.") in text
    assert "The standard network's covers 0.100." in text
    assert "MC dropout and the deep ensemble cover 0.900 and 0.900." in text
    assert " holds 0." not in text and " hold 0." not in text  # 'holds' is a verdict word only
    assert ("- **(b) BBB is better in 1 of 24 declared claims; 1 is reversed (the rival better) "
            "and 22 are not resolved at 3 seeds** (section 6).") in text  # (b), after (a)
    assert "Seldom" not in text and "MNIST prior" not in text
    assert ("not resolved at 3 seeds** (section 6). Away from the data, BBB (Gaussian prior) is better than MC "
            "dropout on NLL; near the data, the standard network is better than BBB (Gaussian "
            "prior) on coverage error (the differences with their 95 % intervals: the "
            "takeaways).") in text
    # the band of the widest BBB does not open on one seed, and no claim holds
    ps["bbb_gaussian"][1]["std_ratio"] = 0.8
    text = R.answer_text(_summary(ps), _verdicts({}, n=3))
    assert text.startswith("**(a) On 2 of 3 seeds: away from the data the band of BBB (Gaussian "
                           "prior) widens 7.6-fold (0.8 to 12.0 per seed); a standard network's "
                           "keeps one width; with the scale-mixture prior (a point of the paper's "
                           "MNIST grid,")
    assert "BBB's widens only 1.6-fold.**" in text
    assert ("- **(b) No: BBB is better in none of 24 declared claims; none are reversed (the "
            "rival better) and 24 are not resolved at 3 seeds** (section 6).") in text
    assert "better than" not in text
    names = [R.claim_name(b, r, sc) for scores in R.FAMILY_SCORES.values() for sc in scores
             for b in R.BBB for r in R.RIVALS]
    for k, lead in ((6, ""), (7, ""), (24, "Yes: ")):  # (b): the counts, no reading word
        v = _verdicts(dict.fromkeys(names[:k], "holds"), n=3)
        assert (f"- **(b) {lead}BBB is better in {k} of 24 declared claims; none are reversed "
                f"(the rival better) and {24 - k} ") in R.answer_text(_summary(ps), v)
    ps["bbb_mixture"] = [dict(r, std_ratio=7.0) for r in ps["bbb_mixture"]]  # not below half
    text = R.answer_text(_summary(ps))
    assert "; the paper names no prior for Figure 5), BBB's widens 7.0-fold.**" in text and \
        "widens only" not in text
    assert "'s std ratio is 7.0; its central" in text  # no rival's ratio above it
    assert "have std ratios 2.5, 5.0, all lower than BBB (Gaussian prior)'s, and cover" in text
    ps = {m: [dict(r, std_ratio=0.9) for r in rows] for m, rows in ps.items() if m != "mle"}
    text = R.answer_text(_summary(ps))
    assert text.startswith("**(a) No: away from the data the band of BBB (Gaussian prior) does not "
                           "widen (0.9-fold; 0.9 to 0.9 per seed).**")
    assert "standard network" not in text and "other methods there" in text
    assert "all lower" not in text and "widens" not in text and "less" not in text
    assert "'s std ratio is 0.9 (above 1 on 0 of 3 seeds); its central" in text
    assert "**(b) " not in text  # no verdicts given: no tests bullet


# ---- the committed results ----

def test_readings_run_on_the_committed_results(monkeypatch):
    monkeypatch.setenv("BBB_RESULTS_DIR", "/work/main/results")
    cfg = get_profile(R.NB, "default")
    rec = R.build_fits(cfg, 0.02)
    assert rec is not None, "the committed results of notebook 02 do not load"
    per_seed, curves, summary = rec["metrics"]["per_seed"], rec["metrics"]["curves"], rec["summary"]
    verdicts = R.load_verdicts()
    seed, x = cfg.seeds[0], R.plot_grid()
    first = {m: next(r for r in rows if r["seed"] == seed) for m, rows in per_seed.items()}
    scatter = R.effective_noise_std(0.02)
    text = R.figure5_text(per_seed, seed, scatter)
    assert f"{first['bbb_gaussian']['std_ratio']:.2f} times that inside" in text
    assert f"{scatter:.3f}" in text and f"{first['mle']['rmse_in']:.4f}" in text
    text = R.widening_text(summary)
    n = len(cfg.seeds)
    assert (f"on every one of the {n} seeds" in text) == all(
        v > 1 for m in summary if m != "mle" for v in summary[m]["std_ratio"]["per_seed"])
    header, rows = R.std_ratio_rows(summary, per_seed)  # the means the reading leaves to the table
    assert all(f"{summary[m]['std_ratio']['mean']:.2f} ±" in " ".join(map(" ".join, rows))
               for m in summary)
    sd_in = {m: sum(r["std_in"] for r in per_seed[m]) / len(per_seed[m]) for m in per_seed}
    assert len(header) == 3 and all(  # the takeaways' in-range std has its source here
        row[2].startswith(f"{sd_in[m]:.3f} ±") for row, m in zip(rows, summary))
    text = R.variance_split_text(curves, x, seed)
    assert f"{curves['bbb_gaussian']['sigma'] ** 2:.5f}" in text and f"On seed {seed}" in text
    text = R.coverage_in_text(summary)
    means = [s["coverage50_in"]["mean"] for s in summary.values()]
    assert f"{min(means):.3f} to {max(means):.3f}" in text
    assert R.coverage_spread_text(summary).startswith("- ")
    text = R.what_it_shows(verdicts)
    t = R.tally(verdicts)
    assert all(f"of the {f['claims']} claims" in text for f in t.values())
    lead = re.search(r"- (\d+) of the \d+ unresolved claims ha", text)
    favour = re.findall(r"(\d+|none) favours? (?:BBB|the rival)", text)
    assert lead and int(lead.group(1)) == sum(int(k) for k in favour if k != "none")
    text = R.takeaways_text(summary, curves, x, seed, verdicts, per_seed=per_seed)
    assert f"{len(cfg.seeds)} seeds" in text and "What the declared tests found" in text
    assert all(f"{R.NAMES[b]}'s {R._fold(ci['mean'])}-fold (" in text and
               f"{R._fold(ci['ci'][0])} to {R._fold(ci['ci'][1])}" in text for b, ci in
               ((b, stats.mean_ci([r["std_ratio"] for r in per_seed[b]])) for b in R.BBB))
    assert all(f"{sd_in[m]:.3f}" in text for m in ("bbb_gaussian", "mle", "deep_ensemble"))
    text = R.answer()
    assert f"{summary['bbb_gaussian']['std_ratio']['mean']:.1f}-fold" in text
    assert "its median lies off the truth (section 6)" in text  # seed 0's two intervals err apart
    text_sr = R.std_ratio_test_text(per_seed)  # exploratory: BBB's ratio against 1, no verdict
    assert all(r["std_ratio"] == 1.0 for r in per_seed["mle"])  # one constant sigma: 1 exactly
    ci = {b: stats.mean_ci([r["std_ratio"] for r in per_seed[b]]) for b in R.BBB}
    assert all(f"{R.NAMES[b]} {ci[b]['mean']:.2f} ({ci[b]['ci'][0]:.2f} to "
               f"{ci[b]['ci'][1]:.2f})" in text_sr for b in R.BBB)
    assert text_sr.endswith("; both intervals exclude 1.") == all(
        not c["ci"][0] <= 1 <= c["ci"][1] for c in ci.values())
    assert text_sr.startswith("*Exploratory:* the standard network's std ratio is 1 by "
                              "construction") and "hold" not in text_sr
    # one seed's left strip is section 3's, not the answer's; (b) follows (a)'s bullets
    assert "Left of the data" not in text
    assert text.index("**Coverage there:**") < text.index("- **(b) BBB is better in ")
    # the column 'a verdict needs' agrees with every verdict: a verdict passes its own step
    for family, claims in verdicts["metrics"].items():
        _, rows = R.verdict_rows(verdicts, family)
        steps = R.holm_steps(claims)
        failed = False  # Holm stops at the first step that fails
        for name in sorted(claims, key=lambda c: -steps[c]):
            row = rows[list(claims).index(name)]
            passes = abs(float(row[2])) >= float(row[4])
            resolved = not claims[name]["verdict"].startswith("not resolved")
            assert resolved == (passes and not failed), (family, name, row)
            failed = failed or not passes
    t = R.tally(verdicts)
    assert f"BBB is better in {sum(len(f['holds']) for f in t.values())} of " \
           f"{sum(f['claims'] for f in t.values())} declared claims; " in text
    assert all(f"{summary[m]['coverage90_out']['mean']:.3f}" in text for m in summary)


def test_answer_names_the_command_when_the_runs_are_missing(monkeypatch, tmp_path):
    monkeypatch.setenv("BBB_RESULTS_DIR", str(tmp_path))
    text = R.answer()
    assert "does not hold" in text and "`make notebooks ONLY=02 PROFILE=default TRAIN=1`" in text


# ---- left_strip_text ----

def test_left_strip_follows_the_numbers():
    x = R.plot_grid()
    g = x.squeeze(1)
    n_left = int((g < 0).sum())
    curve = _curve(0.0, 0.0, sigma=0.1)  # the same std everywhere: ratio 1
    curve["epistemic_var"] = [0.03 if v < 0 else 0.0 for v in g.tolist()]  # std 0.2 left of 0
    curve["quantiles"] = {"0.05": [-1.0] * len(g), "0.95": [1.0] * len(g)}
    truth = torch.where(g < -0.1, torch.tensor(2.0), torch.tensor(0.0))  # outside left of -0.1
    k = int((g < -0.1).sum())
    assert R.left_strip({"bbb_gaussian": curve}, x, truth)[1:] == (k, n_left)
    text = R.left_strip_text({"bbb_gaussian": curve}, x, truth, 4)
    assert text.startswith("- **Left of the data** ($x\\in[-0.2, 0)$, not scored in section 6), "
                           "on seed 4, the band of BBB (Gaussian prior) widens more than at the "
                           "same distance right of the data, $x\\in(0.5, 0.7)$: 2.00 "
                           "against 1.00 times its width in the training range (mean predictive "
                           "std), and the truth lies outside")  # no median stored: no 'flat'
    assert f"outside its 5–95 % band at {k} of the strip's {n_left} evenly spaced points" in text
    assert "centred" not in text
    inside = R.left_strip_text({"bbb_gaussian": curve}, x, torch.zeros(len(g)), 4)
    assert f"stays inside its 5–95 % band at all {n_left} of the strip's" in inside
    assert "outside" not in inside
    # a flat median the truth leaves, and a gap that widens more than the strip
    gap = (g > 0.5) & (g < 0.7)
    curve["epistemic_var"] = [0.03 if v < 0 else 0.3 if 0.5 < v < 0.7 else 0.0
                              for v in g.tolist()]
    curve["quantiles"]["0.5"] = [0.0] * len(g)
    falling = torch.where(g < 0, g * 8, torch.tensor(0.0))  # 0 down to -1.6 in the strip
    d = R.left_strip_detail({"bbb_gaussian": curve}, x, falling)
    assert d["median"] == (0.0, 0.0) and d["truth"][0] == pytest.approx(-1.6)
    k = int((falling < -1.0).sum())
    assert d["gap_ratio"] == pytest.approx(float((0.3 + 0.01) ** 0.5 / 0.1), rel=1e-5)
    assert int(gap.sum()) > 0
    text = R.left_strip_text({"bbb_gaussian": curve}, x, falling, 4)
    assert "widens far less than at the same distance right of the data" in text
    assert (", but its median stays between 0.00 and 0.00 while the truth runs from -0.03 down "
            f"to -1.60, so the truth lies outside its 5–95 % band at {k} of the strip's 57 evenly "
            "spaced points. One seed's") in text
    assert "centred" not in text  # the band did not widen as much as on the right
    curve["epistemic_var"] = [0.03 if v < 0 else 0.0 for v in g.tolist()]  # the gap: no wider
    text = R.left_strip_text({"bbb_gaussian": curve}, x, falling, 4)
    assert R._as_much_words(2.001, 2.0) == "as much as" and \
        R._as_much_words(2.5, 2.0) == "more than" and R._as_much_words(1.5, 2.0) == "less than"
    assert "widens more than at the same" in text and \
        " The band widens enough there; it is centred on a flat line the truth leaves." in text


def test_training_time_in_words():
    assert R.training_time({"wall_s": 2539.8}) == "42 min"
    assert R.training_time({"wall_s": 35.2}) == "35 s"
    assert R.training_time({}) == "an unrecorded time"
    assert R.training_time({"wall_s": 2539.8, "machine": {"device": "cpu", "threads": 2}}) == \
        "42 min on 2 CPU threads"
    assert R.training_time({"wall_s": 60, "machine": {"device": "cuda", "threads": 2}}) == "60 s"


def test_takeaways_add_the_left_strip_and_why_a_verdict_is_reversed():
    """The takeaways say what the answer does not: the left strip's band on the first seed
    (narrower than on the right, the truth outside it) and why BBB's coverage error near the data
    is higher (its in-range intervals cover more than the rivals', its band is wider)."""
    x = R.plot_grid()
    g = x.squeeze(1)
    ps = _per_seed({"bbb_gaussian": [12, 9], "bbb_mixture": [1.5, 1.7], "mc_dropout": [3, 2],
                    "deep_ensemble": [6, 4], "mle": [1.0, 1.0]})
    for r in ps["bbb_gaussian"]:
        r.update(coverage50_in=0.7, coverage90_in=0.94, std_in=0.075)
    for r in ps["mle"]:
        r.update(coverage50_in=0.65, coverage90_in=0.91, std_in=0.064)
    curve = _curve(0.001, 0.5)
    curve["epistemic_var"] = torch.where(g < 0, torch.tensor(0.04), torch.tensor(
        curve["epistemic_var"])).tolist()  # the left strip: sd about 0.22 against 0.105 inside
    truth = torch.full_like(g, 5.0)  # far outside every band
    curve["quantiles"] = {"0.05": [-1.0] * len(g), "0.95": [1.0] * len(g)}
    curves = {"bbb_gaussian": curve, "mle": {**_curve(0.0, 0.0, sigma=0.061), "quantiles": {}}}
    v = _verdicts({"bbb_gaussian < mle on cover_err_in": "reversed"})
    text = R.takeaways_text(_summary(ps), curves, x, 0, v, true_mean=truth, per_seed=ps)
    assert ("- Left of the data ($x\\in[-0.2, 0)$) the band of BBB (Gaussian prior) widens far "
            "less than at the same distance on the right ($x\\in(0.5, 0.7)$) on seed 0: 2.13 "
            "times its width in the training range against 6.81, and the truth lies outside its "
            "5–95 % band at 57 of 57 grid points there (section 3; one seed's curves, not "
            "tested).") in text
    assert ("- **Why BBB (Gaussian prior) loses on coverage error near the data** (the reversed "
            "verdicts): in the training range its central 50 % and 90 % intervals cover 0.700 "
            "and 0.940 on average, the standard network's 0.650 and 0.910 (targets 0.50 and "
            "0.90): all of them cover more than their targets, BBB (Gaussian prior)'s the most. "
            "Its band there is wider: mean predictive std 0.075 against 0.064 (mean over the "
            "seeds).") in text and "learns a noise" not in text
    assert ("(std ratio above 1, section 4): on average BBB (Gaussian prior)'s 10.5-fold (95 % "
            "interval ") in text
    assert "BBB (scale-mixture prior)'s 1.6-fold (" in text and "; exploratory intervals)" in text
    plain = R.takeaways_text(_summary(ps), curves, x, 0, _verdicts({}))
    assert "Left of the data" not in plain and "loses on coverage error" not in plain


def test_methods_text_gives_the_profiles_settings():
    for name in ("smoke", "default"):
        cfg = get_profile("02_regression_uncertainty", name)
        text = R.methods_text(cfg)
        assert (f"{cfg.steps} steps) on each seed's own draw of {cfg.n_train} training points"
                in text)
        assert f"a **deep ensemble** of {cfg.ensemble_size} standard networks" in text
        k = cfg.ensemble_size  # the ensemble's variance: n - 1 in the denominator, said so
        assert f"deep ensemble's {k} members that is {k}/{k - 1} of the spread" in text
        assert (f"Predictions use {cfg.pred_samples} weight draws" in text
                and f"{cfg.n_test} fresh test points" in text)
        assert "dropout rate 0.1" in text and "cosine decay" in text


def test_notebook_02_stays_under_5000_words():
    from pathlib import Path
    from test_rendered_01_r10 import rendered_words
    n = rendered_words(Path(__file__).resolve().parents[1] / "notebooks"
                       / "02_regression_uncertainty.ipynb")
    assert 1000 < n <= 5000, n  # issue 52: notebook 02 at most 5,000 rendered words


def test_opposite_errors_text_follows_the_numbers():
    """Why BBB's two intervals away from the data err in opposite directions: its median's
    distance from the truth against the two intervals' half-widths, on the curves' seed; nothing
    when the two do not err so."""
    x = R.plot_grid()
    g = x.squeeze(1)
    ps = _per_seed({"bbb_gaussian": [12, 9]})
    for r, (c50, c90) in zip(ps["bbb_gaussian"], ((0.4, 0.99), (0.45, 0.95))):
        r.update(coverage50_out=c50, coverage90_out=c90)
    curve = _curve(0.001, 0.5)
    curve["quantiles"] = {"0.05": [-2.0] * len(g), "0.25": [0.2] * len(g), "0.5": [0.5] * len(g),
                          "0.75": [0.8] * len(g), "0.95": [3.0] * len(g)}
    truth = torch.where(g > 0.8, torch.tensor(0.0), torch.tensor(0.1))  # dip to 0 beyond 0.8
    text = R.opposite_errors_text(_summary(ps), {"bbb_gaussian": curve}, x, truth, 7)
    assert text.startswith("- **Why the two intervals of BBB (Gaussian prior) err in opposite "
                           "directions** (seed 7, Figure 5): away from the data its median lies "
                           "on average 0.")
    assert "(above it by 0.50 at the truth's dip" in text
    assert "its 50 % interval reaches 0.30 either side of the median, its 90 % interval 2.50" in text
    assert "(coverage 0.400), the wide one almost none (0.990)." in text
    ps["bbb_gaussian"][0]["coverage50_out"] = 0.6  # the first seed's 50 % interval too wide
    assert R.opposite_errors_text(_summary(ps), {"bbb_gaussian": curve}, x, truth, 7) == ""
