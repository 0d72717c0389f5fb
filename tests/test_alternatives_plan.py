"""Notebook 06's plan v3 (helpers/alternatives_plan.py) and its IVON trial: equal searches for
every method, no head start, validation only, the plan committed before its numbers."""
import json
import subprocess
from pathlib import Path

import pytest

from helpers import alternatives_plan as A
from helpers import ivon_trial as IT
from helpers.analysis_plan import plan_precedes
from helpers.sweep import resolve_trial
from helpers.utils import PROJECT_ROOT as ROOT


def test_the_committed_plan_is_valid_and_is_the_codes():
    committed = json.loads((ROOT / A.PLAN).read_text())
    assert A.validate(committed) == []
    fresh = json.loads(json.dumps(A.plan()))
    assert {k: v for k, v in committed.items() if k != "estimate"} == \
        {k: v for k, v in fresh.items() if k != "estimate"}
    assert {m: len(A.configs(m)) for m in A.SEARCHES} == {m: A.TRIALS for m in A.SEARCHES}
    assert all(c["epochs"] == A.MAX_EPOCHS for m in A.SEARCHES for c in A.configs(m))
    if subprocess.run(["git", "-C", str(ROOT), "rev-parse"], capture_output=True).returncode:
        pytest.skip("not a git checkout")
    assert plan_precedes(ROOT, plan=A.PLAN, governs=A.GOVERNS) == []


def test_breaches_are_found():
    p = json.loads(json.dumps(A.plan()))
    p["searches"]["ivon"]["grid"]["lr"] = [0.1, 0.3]  # 8 trials instead of 16
    p["searches"]["map"]["grid"] = {"lr": [1e-3, 3e-3], "weight_decay": [1e-5, 1e-4]}
    p["budget"]["early_stopping"] = "ASHA"
    p["reported_seeds"] = [0, 100]
    bad = " | ".join(A.validate(p))
    for words in ("unequal", "early stopping", "reported seeds", "map: no numeric dimension",
                  "search seed is a reported seed"):
        assert words in bad, words
    assert A.validate(json.loads(json.dumps(A.plan()))) == []


def test_the_ivon_trial_checks_its_settings():
    with pytest.raises(ValueError, match="not IVON trial settings"):
        IT.make({"lr": 0.1, "seed": 0, "momentum": 0.9})
    with pytest.raises(ValueError, match="needs"):
        IT.make({"seed": 0})
    with pytest.raises(ValueError, match="hess_init"):
        IT.make({"lr": 0.1, "seed": 0, "hess_init": 0.0})
    with pytest.raises(ValueError, match="schedule"):
        IT.make({"lr": 0.1, "seed": 0, "schedule": "step"})
    c = IT.make({"lr": 0.1, "seed": 3, "ess_factor": 2.0})
    assert "ess2" in IT.name(c) and "ess" not in IT.name(IT.make({"lr": 0.1, "seed": 3}))
    # the plan's IVON trains at a constant rate, and its checkpoints say so
    assert all(c["schedule"] == "constant" and "_const_" in IT.name(c) for c in A.configs("ivon"))


def test_trials_run_from_epoch_zero_and_the_choice_is_the_lowest_validation_nll(
        shared_data, tmp_path, monkeypatch):
    monkeypatch.setenv("BBB_DATA_DIR", str(shared_data))
    monkeypatch.setenv("BBB_RESULTS_DIR", str(tmp_path / "results"))
    monkeypatch.setenv("BBB_CHECKPOINT_DIR", str(tmp_path / "checkpoints"))
    small = {"map": [dict(method="sgd", H=16, lr=lr, seed=100, epochs=2) for lr in (1e-3, 3e-3)],
             "ivon": [dict(H=16, lr=lr, hess_init=0.1, seed=100, epochs=2, schedule=sch)
                      for lr, sch in ((0.1, "constant"), (0.3, "cosine"))]}
    made = {m: [resolve_trial(A.SEARCHES[m]["trial"]).make(c) for c in cs]
            for m, cs in small.items()}
    monkeypatch.setattr(A, "configs", lambda m: made[m])
    # the plan's rule on two-epoch trials: score the last epoch alone
    monkeypatch.setattr(A, "MAX_EPOCHS", 2)
    monkeypatch.setattr(A, "EPOCH_STEP", 2)
    monkeypatch.setattr(A, "SMOOTH", 1)
    # a leftover checkpoint of a killed attempt: the trial starts again from epoch 0
    ck = tmp_path / "checkpoints" / f"{A.NB}/v{A.VERSION}" / f"{IT.name(made['ivon'][0])}.pt"
    ck.parent.mkdir(parents=True)
    ck.write_bytes(b"half-written")
    for m in small:
        assert A.chosen(m) is None
        for c in made[m]:
            row = A.run_trial(m, c, n_train=500, n_eval=300)
            assert [e for e, _ in row["val_curve"]] == [1, 2] and row["error"] is None
        rows = [json.loads(A.trial_path(m, c).read_text()) for c in made[m]]
        assert all(r["test_evaluated"] is False and "test_error" not in json.dumps(r)
                   for r in rows)
        best = min(rows, key=lambda r: (r["row"]["val"], r["row"]["best_epoch"]))
        assert A.chosen(m)["name"] == best["row"]["name"]
    assert A.pending(["map", "ivon"]) == []


def _row(name, vals, error=None):
    return {"name": name, "config": {"lr": 1.0}, "metric": "val_nll", "error": error,
            "val_curve": [[e + 1, v] for e, v in enumerate(vals)]}


def test_the_choice_averages_five_epochs_and_takes_only_complete_error_free_trials():
    flat = _row("a_flat", [0.30] * 10)
    # one lucky epoch: the lowest single value (epoch 10), but the highest 5-epoch mean there
    lucky = _row("b_lucky", [0.50] * 9 + [0.10])
    c = A.choose([lucky, flat], max_epochs=10, epoch_step=5, smooth=5)
    assert c["name"] == "a_flat" and c["epochs"] == 5 and c["val"] == pytest.approx(0.30)
    assert c["config"]["epochs"] == 5 and c["val_at_epoch"] == 0.30
    # with smooth=1 the same rule takes the lucky epoch
    assert A.choose([lucky, flat], max_epochs=10, epoch_step=5, smooth=1)["name"] == "b_lucky"
    best = _row("c_best", [0.20] * 10)
    for bad in (_row("c_best", [0.20] * 10, error="RuntimeError: loss is NaN"),
                _row("c_best", [0.20] * 9),  # stopped before the last epoch
                _row("c_best", [0.20] * 8 + [float("nan"), 0.2])):
        assert A.choose([bad, flat], max_epochs=10, epoch_step=5, smooth=5)["name"] == "a_flat"
    assert A.choose([best, flat], max_epochs=10, epoch_step=5, smooth=5)["name"] == "c_best"
    # ties: fewer epochs, then the name
    assert A.choose([_row("z", [0.2] * 10), _row("y", [0.2] * 10)], max_epochs=10,
                    epoch_step=5, smooth=5)["name"] == "y"
    assert A.choose([_row("x", [0.2] * 3)], max_epochs=10) is None


def test_a_version_2_twin_is_compared_epoch_by_epoch(tmp_path, monkeypatch):
    monkeypatch.setenv("BBB_RESULTS_DIR", str(tmp_path))
    c = A.configs("map")[0]
    new = A.trial_path("map", c)
    old = Path(str(new.parent).replace(f"v{A.VERSION}", "v2")) / "old.json"
    for p in (new, old):
        p.parent.mkdir(parents=True, exist_ok=True)
    curve = [[e, 0.5 / e] for e in range(1, A.MAX_EPOCHS + 1)]
    new.write_text(json.dumps({"row": {"name": "new", "config": c, "val_curve": curve}}))
    v2_curve = [[e, v + (1e-3 if e == 7 else 0.0)] for e, v in curve[:30]]
    old.write_text(json.dumps({"row": {"name": "old", "config": {**c, "epochs": 30},
                                       "val_curve": v2_curve}}))
    (tw,) = A.v2_twins("map")
    assert tw["v2"] == "old" and tw["epochs"] == 30
    assert tw["max_abs_diff"] == pytest.approx(1e-3)
