"""Notebook 02's readings (helpers.regression), rendered from its results files: planted numbers
come out, and the wording follows the numbers rather than a fixed story."""
import statistics

import torch

from helpers import get_profile
from helpers import regression as R

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


def test_figure5_text_follows_the_numbers():
    ps = {"bbb_gaussian": [_row(3, 12.5, std_in=0.07, rmse_in=0.0655)],
          "mle": [_row(3, 1.0, std_in=0.061, rmse_in=0.0648)]}
    text = R.figure5_text(ps, 3, 0.062)
    assert "On seed 3" in text and "scatter of 0.062" in text
    assert "BBB (Gaussian prior) follows the data with a band about as wide as that scatter " \
           "(mean predictive std 0.070, RMSE on fresh draws 0.0655)" in text
    assert "the band of BBB (Gaussian prior) opens up" in text and "is 0.875, 12.50 times" in text
    assert "keeps the same width everywhere (mean std 0.061 on both ranges)" in text
    ps = {"bbb_gaussian": [_row(3, 0.9, std_in=0.2, rmse_in=0.2)],
          "mle": [_row(3, 1.3, std_in=0.03, rmse_in=0.07)]}
    text = R.figure5_text(ps, 3, 0.062)
    assert "BBB (Gaussian prior) strays from the data with a band 3.2 times as wide" in text
    assert "the standard network follows the data with a band narrower than that scatter " \
           "(0.48 times it" in text
    assert "does not open up on this seed" in text and "opens up" not in text
    assert "changes width away from the data (std ratio 1.30)" in text
    assert "same width" not in text


def test_bands_text_follows_the_numbers():
    ps = _per_seed({"bbb_gaussian": [12.61, 9], "bbb_mixture": [1.76, 2], "mc_dropout": [3.15, 3],
                    "deep_ensemble": [6.49, 5], "mle": [1.0, 1.0]})
    text = R.bands_text(ps, 0)
    assert text.startswith("On seed 0 the bands of every method that averages over networks "
                           "open up beyond the data by different amounts")
    assert ("12.61 for BBB (Gaussian prior), 6.49 for the deep ensemble, 3.15 for MC dropout "
            "and 1.76 for BBB (scale-mixture prior)") in text
    assert "the standard network keeps a constant width (1.00)" in text
    ps = _per_seed({"bbb_gaussian": [1, 9], "bbb_mixture": [0.8, 2], "mc_dropout": [3.15, 3],
                    "deep_ensemble": [6.49, 5], "mle": [1.0, 1.0]})
    text = R.bands_text(ps, 0)
    assert ("the bands of the deep ensemble and MC dropout open up beyond the data, those of "
            "BBB (Gaussian prior) and BBB (scale-mixture prior) do not") in text
    assert "every method" not in text and "0.80 for BBB (scale-mixture prior)" in text
    text = R.bands_text(ps, 1)  # the seed asked for, not the first row
    assert "9.00 for BBB (Gaussian prior)" in text and "every method" in text
    ps = _per_seed({m: [0.9] for m in METHODS[:-1]} | {"mle": [1.0]})
    assert "none of the methods that average over networks opens up" in R.bands_text(ps, 0)
    ps = _per_seed({"bbb_gaussian": [1.0004], "bbb_mixture": [0.9996], "mc_dropout": [1.02],
                    "deep_ensemble": [2.41], "mle": [1.0]})
    text = R.bands_text(ps, 0)  # a ratio near 1 is shown with the digits that tell it from 1
    assert ("the bands of the deep ensemble, MC dropout and BBB (Gaussian prior) open up beyond "
            "the data, those of BBB (scale-mixture prior) do not") in text
    assert "1.0004 for BBB (Gaussian prior) and 0.9996 for BBB (scale-mixture prior)" in text


def test_variance_split_text_follows_the_numbers():
    x = R.plot_grid()
    text = R.variance_split_text({"bbb_gaussian": _curve(0.001, 0.5)}, x, 7)
    assert text.startswith("On seed 7, for BBB (Gaussian prior): in the training range")
    assert "lies below the aleatoric $\\sigma^2 = 0.01000$ at every grid point (at most 0.10 " \
           "times it) and makes up a small part of the total (9 % on average" in text
    assert "close to the learned noise alone" in text
    assert "lies above the aleatoric $\\sigma^2$ at every grid point (on average 50 times it) " \
           "and makes up almost all of the total (98 % on average" in text
    text = R.variance_split_text({"mc_dropout": _curve(0.02, 0.005)}, x, 7, method="mc_dropout")
    assert "for MC dropout: in the training range" in text
    assert "lies above the aleatoric $\\sigma^2 = 0.01000$ at every grid point (on average 2.00 " \
           "times it) and makes up most of the total (67 %" in text
    assert "below the aleatoric $\\sigma^2$ at every grid point (at most 0.50 times it) and " \
           "makes up less than half of the total (33 %" in text
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


def test_coverage_in_text_follows_the_numbers():
    ps = _per_seed({m: [1, 1, 1] for m in METHODS})
    for i, m in enumerate(METHODS):
        for s, row in enumerate(ps[m]):
            row["coverage50_in"] = 0.6 + 0.01 * i + 0.02 * s
            row["coverage90_in"] = 0.90 + 0.01 * i
    text = R.coverage_in_text(_summary(ps))
    assert text.startswith("Inside the training range every method covers more than 50 % with "
                           "its central 50 % interval, on every one of the 3 seeds")
    assert "(means 0.620–0.660; the lowest seed, 0.600, is BBB (Gaussian prior)'s)" in text
    assert "covers 0.900–0.940 on average: the noise on $y$ is not Gaussian" in text
    ps["deep_ensemble"][1]["coverage50_in"] = 0.45
    ps["mle"] = [dict(r, coverage50_in=0.4) for r in ps["mle"]]
    text = R.coverage_in_text(_summary(ps))
    assert "every method" not in text
    assert ("covers more than 50 % on average for BBB (Gaussian prior), BBB (scale-mixture "
            "prior), MC dropout and the deep ensemble, at most 50 % for the standard network; "
            "per seed, at most 50 % for the deep ensemble on 1 of 3 and the standard network on "
            "3 of 3") in text
    assert "the lowest seed, 0.400, is the standard network's" in text
    ps = {m: [dict(r, coverage50_in=0.45) for r in rows] for m, rows in ps.items()}
    text = R.coverage_in_text(_summary(ps))
    assert "on average for no method, at most 50 % for BBB (Gaussian prior)" in text
    assert "not Gaussian" not in text


def test_coverage_spread_text_follows_the_numbers():
    ps = _per_seed({m: [1, 1, 1, 1, 1] for m in METHODS})
    for s, v in enumerate((0.995, 0.741, 1.0, 0.998, 0.998)):
        ps["bbb_gaussian"][s]["coverage90_out"] = v
    text = R.coverage_spread_text(_summary(ps))
    assert ("BBB (Gaussian prior) away from the data: the central 90 % interval covers 0.946 on "
            "average (target 0.90), yet per seed 0.995, 0.741, 1.000, 0.998, 0.998: 4 seeds too "
            "wide, 1 too narrow") in text
    assert "(5 seeds)" in text and text.count("interval covers") == 1
    ps["bbb_gaussian"][1]["coverage90_out"] = 0.86  # not too narrow; the mean 0.970 not near
    text = R.coverage_spread_text(_summary(ps))
    assert text.startswith("In these tables (5 seeds) no mean coverage within 0.05 of its target")
    ps["bbb_gaussian"][1]["coverage90_out"] = 0.5  # the mean 0.898: near, both sides missed
    ps["mle"][0]["coverage50_in"] = 0.3            # the mean 0.54 in, seeds 0.3 and 0.6
    text = R.coverage_spread_text(_summary(ps))
    assert "the standard network in the training range: the central 50 % interval covers 0.540" \
           in text and "4 seeds too wide, 1 too narrow" in text and "0.898" in text


def test_takeaways_text_follows_the_numbers():
    x = R.plot_grid()
    ps = _per_seed({"bbb_gaussian": [12, 9], "bbb_mixture": [1.5, 1.7], "mc_dropout": [3, 2],
                    "deep_ensemble": [6, 4], "mle": [1.0, 1.0]})
    curves = {"bbb_gaussian": _curve(0.001, 0.5)}
    text = R.takeaways_text(ps, curves, x, 0)
    assert ("every method that averages over networks widens its band on every one of the 2 "
            "seeds (std ratio above 1); how far depends on the method and the prior: mean std ratio 10.50 for BBB "
            "(Gaussian prior), 5.00 for the deep ensemble, 2.50 for MC dropout and 1.60 for BBB "
            "(scale-mixture prior); the standard network's band cannot widen (std ratio 1.00)"
            ) in text
    assert ("the learned noise $\\sigma$ (aleatoric) dominates inside the training range "
            "(epistemic share of the total variance 9 % on average) and the spread over weights "
            "(epistemic) takes over away from the data (98 %)") in text
    assert text.count("\n- ") == 1 and text.startswith("- ")
    ps["bbb_mixture"][1]["std_ratio"] = 0.9
    text = R.takeaways_text(ps, {"bbb_gaussian": _curve(0.02, 0.005)}, x, 0)
    assert ("the methods that average over networks widen their bands on 2 of 2 seeds for BBB "
            "(Gaussian prior), the deep ensemble and MC dropout, on 1 of 2 seeds for BBB "
            "(scale-mixture prior) (std ratio above 1)") in text
    assert "every method" not in text and "1.20 for BBB (scale-mixture prior)" in text
    assert "the spread over weights (epistemic) dominates already inside" in text
    assert "the learned noise (aleatoric) still dominates away from the data (33 %)" in text


def test_readings_run_on_the_committed_results(monkeypatch):
    monkeypatch.setenv("BBB_RESULTS_DIR", "/work/main/results")
    cfg = get_profile(R.NB, "default")
    rec = R.build_fits(cfg, 0.02)
    assert rec is not None, "the committed results of notebook 02 do not load"
    per_seed, curves, summary = rec["metrics"]["per_seed"], rec["metrics"]["curves"], rec["summary"]
    seed, x = cfg.seeds[0], R.plot_grid()
    first = {m: next(r for r in rows if r["seed"] == seed) for m, rows in per_seed.items()}
    scatter = R.effective_noise_std(0.02)
    text = R.figure5_text(per_seed, seed, scatter)
    assert f"{first['bbb_gaussian']['std_ratio']:.2f} times that inside" in text
    assert f"{scatter:.3f}" in text and f"{first['mle']['rmse_in']:.4f}" in text
    text = R.bands_text(per_seed, seed)
    assert all(f"{first[m]['std_ratio']:.2f}" in text for m in per_seed)
    text = R.variance_split_text(curves, x, seed)
    assert f"{curves['bbb_gaussian']['sigma'] ** 2:.5f}" in text and f"On seed {seed}" in text
    text = R.coverage_in_text(summary)
    means = [s["coverage50_in"]["mean"] for s in summary.values()]
    assert f"{min(means):.3f}–{max(means):.3f}" in text
    text = R.coverage_spread_text(summary)
    assert f"({len(cfg.seeds)} seeds)" in text
    text = R.takeaways_text(per_seed, curves, x, seed)
    assert all(f"{summary[m]['std_ratio']['mean']:.2f}" in text for m in summary)
    assert f"{len(cfg.seeds)} seeds" in text
