"""The paper's protocol, version 2: the design, the branch to a step schedule, successive halving."""
import json
import math
from collections import Counter
from dataclasses import replace
from itertools import combinations

import pytest
import torch

import helpers as H
from helpers import paper_search as P
from helpers.classification import RunConfig, checkpoint_path
from helpers.layers import BayesMLP
from helpers.priors import ScaleMixturePrior
from helpers.train import branch_checkpoint, fit, load_checkpoint


def test_every_method_gets_twelve_distinct_trials_each_value_equally_often():
    for method, space in P.SPACES.items():
        points = P.design(method)
        assert len(points) == 12
        assert len({json.dumps(p, sort_keys=True) for p in points}) == 12
        for key, values in space.items():
            assert Counter(p[key] for p in points) == Counter({v: 12 // len(values)
                                                               for v in values}), (method, key)
    # the BBB designs try every pair of values of every two factors at least once (e.g. pi 3/4
    # with sigma1 = 1, the pilot's prior), and most pairs equally often
    mix = P.design("bbb_mixture")
    for method in ("bbb_mixture", "bbb_gaussian"):
        space, points = P.SPACES[method], P.design(method)
        for a, b in combinations(space, 2):
            counts = Counter((p[a], p[b]) for p in points)
            assert len(counts) == len(space[a]) * len(space[b]), (method, a, b)
    space = P.SPACES["bbb_mixture"]
    exact = [(a, b) for a, b in combinations(space, 2)
             if len(space[a]) == len(space[b]) == 2 or {a, b} == {"lr", "pi"}]
    for a, b in exact:
        counts = Counter((p[a], p[b]) for p in mix)
        assert set(counts.values()) == {12 // (len(space[a]) * len(space[b]))}, (a, b)
    assert P.design("bbb_mixture") == mix  # deterministic
    assert P.design("bbb_mixture", 4) == mix[:4]


def test_an_unbalanced_design_is_refused_and_imbalance_is_zero_for_a_full_grid():
    with pytest.raises(ValueError, match="multiple"):
        P.balanced_design({"a": (1, 2, 3), "b": (1, 2)}, 8)
    grid = {"a": [0, 0, 1, 1], "b": [0, 1, 0, 1]}
    assert P.imbalance(grid, {"a": 2, "b": 2}) == 0
    assert P.imbalance({"a": [0, 0, 1, 1], "b": [0, 0, 1, 1]}, {"a": 2, "b": 2}) > 0


def _data(n=64):
    g = torch.Generator().manual_seed(0)
    x, y = torch.rand(n + 32, 20, generator=g), torch.randint(0, 3, (n + 32,), generator=g)
    return H.ImageData(x[:n], y[:n], x[n:n + 16], y[n:n + 16], x[n + 16:], y[n + 16:])


def _model():
    torch.manual_seed(3)
    return BayesMLP(20, (8,), 3, prior=ScaleMixturePrior(0.5, 1.0, math.exp(-6)), rho_init=-4.0)


def test_a_branched_checkpoint_resumes_as_the_scheduled_run_from_the_start(tmp_path):
    kw = dict(lr=0.05, batch_size=16, optimizer="sgd", seed=1, eval_sets=("val",),
              reduction="sum", rho_lr_scale=3.0)
    whole = _model()
    h_whole = fit(whole, _data(), epochs=6, lr_milestones=(4,), lr_gamma=0.1,
                  checkpoint=tmp_path / "whole.pt", checkpoint_every=1, **kw)
    const = _model()
    fit(const, _data(), epochs=3, checkpoint=tmp_path / "const.pt", checkpoint_every=1, **kw)
    branch_checkpoint(tmp_path / "const.pt", tmp_path / "branch.pt", (4,), 0.1)
    branched = _model()
    h_branch = fit(branched, _data(), epochs=6, lr_milestones=(4,), lr_gamma=0.1,
                   checkpoint=tmp_path / "branch.pt", checkpoint_every=1, **kw)
    assert [r["val_error"] for r in h_branch] == [r["val_error"] for r in h_whole]
    assert [r["loss"] for r in h_branch] == [r["loss"] for r in h_whole]
    for a, b in zip(whole.parameters(), branched.parameters()):
        assert torch.equal(a, b)
    # the step is real: the same run at a constant rate ends elsewhere
    fit(const, _data(), epochs=6, checkpoint=tmp_path / "const.pt", checkpoint_every=1, **kw)
    assert not torch.equal(next(const.parameters()), next(whole.parameters()))
    # a milestone already passed, or a scheduled source, is refused
    with pytest.raises(ValueError, match="milestone must come later"):
        branch_checkpoint(tmp_path / "const.pt", tmp_path / "late.pt", (4,))
    with pytest.raises(ValueError, match="constant-rate"):
        branch_checkpoint(tmp_path / "whole.pt", tmp_path / "again.pt", (9,))
    assert load_checkpoint(tmp_path / "branch.pt")["run"]["lr_milestones"] == [4]


def test_sigma_moved_reads_the_median_against_the_start():
    from helpers import paper_search_report as R
    s0 = math.log1p(math.exp(-4.0))
    rec = {"config": {"rho_init": -4.0},
           "posterior": {"0": {"sigma_q": [0.0, 1.2 * s0, 2.0]}, "2": {"sigma_q": [0, s0, 1]}}}
    moved = R.sigma_moved(rec)
    assert moved["0"] == pytest.approx(0.2) and moved["2"] == pytest.approx(0.0)
    assert R.sigma_moved({"config": {"rho_init": -4.0}}) is None
    # a drift that moves every sigma alike is not a trained posterior; a spread is
    drift = {"config": {"rho_init": -5.0}, "posterior": {"0": {"sigma_q": [0.012, 0.0121, 0.0123]}}}
    assert R.sigma_moved(drift)["0"] > 0.7 and R.sigma_spread(drift)["0"] < R.TRAINED_SPREAD
    learned = {"config": {"rho_init": -5.0}, "posterior": {"0": {"sigma_q": [0.003, 0.01, 0.09]}}}
    assert R.sigma_spread(learned)["0"] >= R.TRAINED_SPREAD


def test_stratified_halving_keeps_the_best_of_each_value_of_the_late_factor():
    trials = [{"point": {"r": r, "i": i}, "schedule": None, "score": sc}
              for i, (r, sc) in enumerate([(1, 0.010), (1, 0.011), (1, 0.012), (30, 0.020),
                                           (30, 0.019), (1, 0.013)])]
    plain = P.select(trials, 2)
    assert [t["score"] for t in plain] == [0.010, 0.011]
    strat = P.select(trials, 2, "r")
    assert [t["score"] for t in strat] == [0.010, 0.019]
    four = P.select(trials, 4, "r")
    assert [t["score"] for t in four] == [0.010, 0.011, 0.012, 0.019]
    assert P.STRATIFY["bbb_mixture"] == "rho_lr_scale" and "sgd" not in P.STRATIFY


def test_effects_pair_by_seed_and_say_whether_the_paper_is_excluded():
    from helpers import paper_search_report as R
    rows = [{"key": "sgd", "H": 400, "seeds": [0, 1, 2], "test_error": [0.018, 0.0185, 0.019]},
            {"key": "bbb_mixture", "H": 400, "seeds": [2, 1, 0],
             "test_error": [0.0178, 0.0181, 0.0179]}]
    e = R.effects(rows)[400]["BBB (scale mixture) < SGD"]
    assert e["n"] == 3 and e["mean_diff"] == pytest.approx(-0.0017 / 3, abs=1e-9)
    assert e["paper_diff"] == pytest.approx(0.0136 - 0.0183)
    assert e["excludes_paper"] is True


def test_halving_keeps_the_best_by_mean_validation_error_and_scores_divergence_worst():
    recs = [{"metrics": {"val_error": 0.02}}, {"metrics": {"val_error": 0.01}}]
    assert P.score(recs) == pytest.approx(0.015)
    assert P.score(recs + [{"metrics": {"val_error": None}}]) == math.inf


def _fake(path, cfg, val, test=None):
    rec = {"config": cfg.__dict__ | {"lr_milestones": cfg.lr_milestones}, "name": cfg.name,
           "metrics": {"val_error": val, **({"test_error": test} if test is not None else {})},
           "history": []}
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(rec, default=list))


def test_the_search_reads_validation_only_and_walks_the_rungs():
    """Fake records: the trial best on validation goes on whatever the test numbers say."""
    s = P.settings("smoke")
    st = P.search_state(s, "sgd")
    assert len(st["jobs"]) == s["trials"] * 2 and st["recipe"] is None
    points = P.design("sgd", s["trials"])
    vals = [0.05, 0.02, 0.03, 0.04]  # trial 1 best, then 2
    for p, v in zip(points, vals):
        for seed in s["tuning_seeds"]:
            cfg = P.base_config("sgd", p, s["search_width"], seed, s["rungs"][0], None, s)
            _fake(P.record_path(cfg, "rung1"), cfg, v, test=1 - v)
    st = P.search_state(s, "sgd")
    kept = [j.cfg.lr for j in st["jobs"]]
    assert set(kept) == {points[1]["lr"], points[2]["lr"]} and all(j.stage == "rung2"
                                                                   for j in st["jobs"])
    assert all(j.start_from == checkpoint_path(replace(j.cfg, epochs=s["rungs"][0]), P.NB)
               for j in st["jobs"])
    for j in st["jobs"]:
        _fake(j.path, j.cfg, 0.01 if j.cfg.lr == points[2]["lr"] else 0.02)
    st = P.search_state(s, "sgd")
    assert {(j.cfg.lr, j.cfg.lr_milestones) for j in st["jobs"]} == \
        {(points[2]["lr"], None), (points[2]["lr"], s["schedules"]["step"])}
    assert {j.branch for j in st["jobs"]} == {None, s["schedules"]["step"]}
    for j in st["jobs"]:
        _fake(j.path, j.cfg, 0.005 if j.cfg.lr_milestones else 0.006)
    st = P.search_state(s, "sgd")
    assert st["recipe"]["schedule"] == "step" and st["recipe"]["point"] == points[2]
    cfg = P.recipe_config(s, "sgd", 50, 0)
    assert cfg.lr_milestones == s["schedules"]["step"] and cfg.epochs == s["final_epochs"]


def test_the_smoke_campaign_runs_every_stage(shared_data, monkeypatch):
    monkeypatch.setenv("BBB_DATA_DIR", str(shared_data))
    s = P.settings("smoke")
    data = H.load_mnist(scale="paper", n_train=s["n_train"], n_test=s["n_eval"])
    with pytest.raises(ValueError, match="unknown stages"):
        P.drive(data, s, log=lambda m: None, stages=["screen"])
    assert P.drive(data, s, log=lambda m: None, poll_s=0.01) > 0
    assert P.plan_jobs(s) == ([], 0)
    search = [json.loads(p.read_text()) for p in (P.root() / "search").glob("*.json")]
    per_method = 2 * (s["trials"] + s["keep"][0] + s["keep"][1] * 2)
    assert len(search) == 4 * per_method
    assert all("test_error" not in r["metrics"] for r in search)
    runs = [json.loads(p.read_text()) for p in (P.root() / "runs").glob("*.json")]
    assert sorted(r["config"]["method"] for r in runs) == sorted(P.SPACES)
    for rec in runs:
        assert len(rec["history"]) == s["final_epochs"]
        assert all("test_error" in row for row in rec["history"])
        if rec["config"]["method"].startswith("bbb"):
            assert set(rec["posterior"]) and all("sigma_q" in v
                                                 for v in rec["posterior"].values())
    # a rung-3 step run continued its rung-2 checkpoint: its first epochs are rung 2's
    step = [r for r in search if r["stage"] == "rung3" and r["config"]["lr_milestones"]]
    assert step
    for r in step:
        prev = json.loads(P.record_path(replace(RunConfig.from_dict(r["config"]),
                                                epochs=s["rungs"][1], lr_milestones=None),
                                        "rung2").read_text())
        assert r["history"][:s["rungs"][1]] == prev["history"]
    assert P.drive(data, s, log=lambda m: None, poll_s=0.01) == 0
    # the report reads the campaign back: every row complete, effects beside the paper's
    from helpers import paper_search_report as R
    rec = R.write_summary(s)
    assert rec["complete"] and (P.root() / "summary.json").exists()
    assert {r["key"] for r in rec["rows"]} == set(P.SPACES)
    for r in rec["rows"]:
        assert r["seeds"] == list(s["seeds"][50]) and len(r["test_error"]) == 1
        assert ("posterior_trained" in r) == r["key"].startswith("bbb")
    assert all(len(rungs["rungs"]) == 3 for rungs in rec["search"].values())
    assert set(rec["main_effects"]["bbb_mixture"]) == set(P.SPACES["bbb_mixture"])
    for a in rec["ablations"]:
        assert a["seeds"] == list(s["ablation_seeds"]) and a["mean_diff"] is not None
    fig = R.figure2(s, H=50)
    labels = fig.axes[0].get_legend_handles_labels()[1]
    assert sum(lab.startswith("ours") for lab in labels) == 4


def test_the_committed_plan_is_what_the_code_runs():
    """The declared plan (committed before its first run) and the code agree: designs, rungs,
    seeds and schedules."""
    from pathlib import Path
    path = Path(__file__).resolve().parent.parent / "results" / P.NB / P.FOLDER / "plan.json"
    if not path.exists():
        pytest.skip("no committed plan v2")
    plan = json.loads(path.read_text())
    s = P.settings("default")
    assert plan["version"] == 2 and plan["designs"] == {m: P.design(m) for m in P.COST_ORDER}
    for key in ("tuning_seeds", "trials", "rungs", "keep", "final_epochs", "ablation_seeds",
                "search_width", "widths"):
        assert plan["settings"][key] == json.loads(json.dumps(s[key])), key
    assert plan["settings"]["seeds"] == {str(h): list(v) for h, v in s["seeds"].items()}
    assert plan["settings"]["schedules"] == {k: (list(v) if v else None)
                                             for k, v in s["schedules"].items()}
    assert plan["estimate"]["total_cpu_h"] <= 90
