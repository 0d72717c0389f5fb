"""Notebooks 02, 04 and 05 draw their figures from numbers stored in results/: the training steps
write them, a plain `make notebooks` reads them back and trains nothing."""
import json
import os
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import torch

from helpers import regression as R
from helpers import toy
from helpers import uncertainty as U
from helpers.utils import results_dir

TINY_02 = SimpleNamespace(profile="tiny", n_train=20, n_test=20, steps=3, pred_samples=10,
                          seeds=(0,), ensemble_size=2)


def test_regression_fits_are_trained_only_when_asked_then_read_back():
    assert R.build_fits(TINY_02, 0.02, train=False) is None  # nothing stored, nothing trained
    rec = R.build_fits(TINY_02, 0.02, train=True)
    curves = rec["metrics"]["curves"]
    assert list(curves) == list(R.ORDER) and list(rec["summary"]) == list(R.ORDER)
    n = R.GRID[2]
    for curve in curves.values():
        assert sorted(curve["quantiles"]) == sorted(f"{q:g}" for q in R.QUANTILES)
        assert all(len(v) == n for v in curve["quantiles"].values())
        assert len(curve["epistemic_var"]) == n and curve["sigma"] > 0
        lo, mid, hi = (curve["quantiles"][k] for k in ("0.05", "0.5", "0.95"))
        assert all(a <= b <= c for a, b, c in zip(lo, mid, hi))
    assert curves["mle"]["epistemic_var"] == [0.0] * n  # one curve: no spread over weights
    again = R.build_fits(TINY_02, 0.02, train=False)
    assert again["created"] == rec["created"] and again["metrics"] == rec["metrics"]
    # other settings are not read back from this run
    assert R.build_fits(TINY_02, 0.03, train=False) is None
    # a run of an older version that scored less is not read back either (it would lack scores)
    path = results_dir() / R.NB / "mle.json"
    old = json.loads(path.read_text())
    del old["metrics"]["coverage50_in"]
    path.write_text(json.dumps(old))
    assert R.build_fits(TINY_02, 0.02, train=False) is None


def test_regression_figures_draw_from_stored_curves():
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    rec = R.build_fits(TINY_02, 0.02, train=True)
    curves, grid = rec["metrics"]["curves"], R.plot_grid()
    x, y = R.make_data(TINY_02.n_train, 0.02, generator=R.seed_generator(0))
    fig = R.plot_methods(curves, grid, x, y)
    _, ax = plt.subplots()
    R.plot_variance_split(ax, curves["bbb_gaussian"], grid, "t")
    plt.close("all")
    assert len(fig.axes) == 6


def test_toy_posteriors_round_trip_exactly():
    priors = {k: toy.PRIORS_2D[k] for k in ("Normal", "Normal, s ~ half-Cauchy")}
    assert toy.build_toy("tiny", 30, 3, priors=priors) is None
    fitted, acc, data = toy.build_toy("tiny", 30, 3, train=True, priors=priors)
    fresh, acc0, _ = toy.fit_toy_models(30, 3, priors=priors)
    for key, model in fitted.items():
        torch.manual_seed(0)
        a = toy.grid_probs(model, n=8, n_samples=5)
        torch.manual_seed(0)
        b = toy.grid_probs(fresh[key], n=8, n_samples=5)
        assert all(torch.equal(u, v) for u, v in zip(a, b)), key
        assert acc[key] == acc0[key]
    stored = json.loads((results_dir() / toy.NB / f"{toy.TOY_RESULTS}.json").read_text())
    assert set(stored["posteriors"]["moons"]) == set(priors)


def test_conv_net_per_image_numbers_redraw_its_figures():
    torch.manual_seed(0)
    p = torch.softmax(torch.randn(6, 50, 10) * 3, -1)
    y = torch.randint(0, 10, (50,))
    scores = U.per_image_scores(p, y)
    per = U.per_image_from_record({"per_image": U.stored_per_image(scores, 6)})
    assert torch.equal(per["expected_error"], scores["expected_error"])
    assert torch.allclose(per["std"], scores["std"], rtol=1e-4)
    groups = U.hardest_images(scores, y, k=4)
    assert [e["index"] for e in groups["least sure"]] == \
        scores["entropy"].argsort(descending=True)[:4].tolist()
    assert all(e["pred"] != e["label"] for e in groups["confidently wrong"])
    assert U.per_image_from_record({"metrics": {}}) is None


def test_conv_net_without_results_or_checkpoint_trains_nothing():
    prof = SimpleNamespace(profile="tiny", conv_epochs=1, eval_samples=2, conv_n_train=10,
                           n_eval=10)
    assert U.build_conv_net(prof, 0, train=False) is None
    assert not U.conv_checkpoint(prof, 0).exists()


def test_readme_table_of_long_runs_matches_the_results():
    root = Path(__file__).resolve().parent.parent
    env = {**os.environ, "BBB_RESULTS_DIR": str(root / "results")}  # the committed results
    proc = subprocess.run([sys.executable, str(root / "tools" / "runtimes_table.py"), "--check"],
                          capture_output=True, text=True, env=env)
    assert proc.returncode == 0, proc.stdout + proc.stderr
