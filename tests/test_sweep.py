"""helpers.sweep: declared spaces, the validation-only choice, and a real Ray Tune sweep that is
interrupted (a trial fails on purpose) and restored without retraining finished trials; the
engine runs whatever trial it is handed and imports no experiment."""
import ast
import json
import math
from dataclasses import asdict
from pathlib import Path

import pytest

from helpers import classification_trial as CT
from helpers import get_profile
from helpers import sweep as S
from helpers.classification import RunConfig, chosen_config
from helpers.profiles import PROFILES

ROOT = Path(__file__).resolve().parent.parent
TRIAL = "helpers.classification_trial:TRIAL"


@pytest.fixture(autouse=True)
def _no_cluster(monkeypatch):
    """Each test decides where its trials run: no cluster or forced executor from outside."""
    monkeypatch.delenv("RAY_ADDRESS", raising=False)
    monkeypatch.delenv(S.EXECUTOR_ENV, raising=False)


def test_expand_bundles_and_deduplicates():
    space = {"trial": TRIAL, "base": {"method": "bbb_mixture", "H": 20},
             "grid": {"pi": [0.25, 0.5], "start": [{"mu_init": 0.1, "init_from": None},
                                                   {"mu_init": None, "init_from": "sgd"},
                                                   {"mu_init": 0.2, "init_from": "sgd"}]}}
    cfgs = S.expand(space)
    assert len(cfgs) == 4  # mu_init does not matter under a warm start: one config, not two
    assert all(c["seed"] == 100 for c in cfgs)
    with pytest.raises(ValueError, match="not RunConfig settings"):
        S.expand({"base": {"method": "sgd"}, "grid": {"learning_rate": [1e-3]}}, trial=CT.TRIAL)
    with pytest.raises(ValueError, match="needs a Trial"):
        S.expand({"base": {"method": "sgd"}, "grid": {"lr": [1e-3]}})  # no trial named
    with pytest.raises(ValueError, match="is not a helpers.sweep.Trial"):
        S.expand(space, trial="helpers.classification_trial:RULES")


def test_profiles_declare_the_paper_grid():
    paper = get_profile("01_mnist_classification", "paper").sweeps["bbb_mixture_h400"]["grid"]
    assert paper["lr"] == [1e-3, 1e-4, 1e-5] and paper["pi"] == [0.25, 0.5, 0.75]
    assert paper["neg_log_sigma1"] == [0.0, 1.0, 2.0] and paper["neg_log_sigma2"] == [6.0, 7.0, 8.0]
    default = get_profile("01_mnist_classification", "default")
    n, epochs = S.trial_epochs(default.sweeps["bbb_mixture_h400"], 60, 5, 3)
    assert n == 64 and epochs < 64 * 60


def test_choice_uses_validation_only():
    trials = [{"name": "a", "config": {"x": 1}, "val_error": 0.02, "best_epoch": 40,
               "stopped_early": False},
              {"name": "b", "config": {"x": 2}, "val_error": 0.015, "best_epoch": 60,
               "stopped_early": False},
              {"name": "c", "config": {"x": 3}, "val_error": 0.015, "best_epoch": 50,
               "stopped_early": False},
              {"name": "d", "config": {"x": 4}, "val_error": None, "best_epoch": None,
               "stopped_early": False}]
    chosen = S.choose(trials)
    assert chosen["name"] == "c" and chosen["config"]["epochs"] == 50  # tie: fewer epochs
    curve = [[1, 0.3], [2, 0.1], [3, 0.2], [4, 0.25], [5, 0.22], [6, 0.21], [7, 0.3]]
    assert S._best_epoch(curve, 5) == (5, 0.22)  # only multiples of 5 and the last epoch count


def test_ray_sweep_is_interrupted_and_restored(shared_data, tmp_path, monkeypatch):
    ray = pytest.importorskip("ray")
    monkeypatch.setenv("BBB_DATA_DIR", str(shared_data))  # the Ray workers inherit it
    space = {"trial": TRIAL, "base": {"method": "bbb_mixture", "H": 20, "init_epochs": 1},
             "grid": {"pi": [0.25, 0.5], "start": [{"mu_init": 0.1, "init_from": None},
                                                   {"mu_init": None, "init_from": "sgd"}]}}
    kw = dict(profile="smoke", max_epochs=3, grace=1, epoch_step=1, n_train=1000, n_eval=500,
              eval_samples=2, cpus=2,
              extra_config={"_crash_once_at_epoch": 2,
                            "_crash_marker": str(tmp_path / "crashed-once")})
    try:
        first = S.run_sweep("restore_test", space, **kw)
        errored = [t for t in first["metrics"]["trials"] if t["error"]]
        assert len(errored) == 1 and not first["metrics"]["complete"]
        started = {t["name"]: t["started_at"] for t in first["metrics"]["trials"] if not t["error"]}
        again = S.run_sweep("restore_test", space, **kw)
    finally:
        ray.shutdown()
    rows = {t["name"]: t for t in again["metrics"]["trials"]}
    assert again["metrics"]["complete"] and len(rows) == 4
    assert again["config"]["executor"] == "ray" and again["ray_cluster"]["nodes"] == 1
    assert again["cluster"] == "local" == again["ray_cluster"]["requested"]
    for name, t0 in started.items():  # finished trials were not trained again
        assert rows[name]["started_at"] == t0
    assert rows[errored[0]["name"]]["started_at"] != errored[0]["started_at"]
    # validation numbers only: nothing in the results file mentions the test set
    text = json.dumps(again)
    assert "test_error" not in text and again["test_evaluated"] is False
    assert again["selected_on"] == "validation" and again["metrics"]["chosen"]["val_error"] > 0
    assert math.isclose(again["metrics"]["chosen"]["val_error"],
                        min(t["val_error"] for t in rows.values()))
    # per-trial TensorBoard logs under the git-ignored checkpoint folder
    assert list((tmp_path / "checkpoints" / "ray").rglob("events.out.tfevents*"))


def test_local_executor_runs_the_same_trials_without_ray(shared_data, monkeypatch):
    monkeypatch.setenv("BBB_DATA_DIR", str(shared_data))
    space = {"trial": TRIAL, "base": {"method": "sgd", "H": 16}, "grid": {"lr_decay": [0.955, 1.0]}}
    rec = S.run_sweep("local_test", space, profile="smoke", max_epochs=2, epoch_step=1,
                      n_train=500, n_eval=300, executor="local", metric="val_nll",
                      eval_samples=2)
    trials = rec["metrics"]["trials"]
    assert rec["config"]["executor"] == "local" and rec["ray"] is None
    assert rec["config"]["executor_from"] == "declared" and rec["ray_cluster"] is None
    assert len(trials) == 2 and all(t["epochs_run"] == 2 and t["error"] is None for t in trials)
    assert rec["metrics"]["chosen"]["val"] == min(t["val"] for t in trials)
    assert "test_error" not in json.dumps(rec)
    with pytest.raises(ValueError, match="executor"):
        S.run_sweep("x", space, max_epochs=1, n_train=100, n_eval=100, executor="slurm")


def test_a_trial_resumed_after_restore_keeps_its_early_epochs(tmp_path, monkeypatch):
    # Ray reports only the epochs a resumed trial ran since the restore; the trial's own fit
    # checkpoint holds the earlier ones, and the results row splices them back in
    from helpers.train import save_checkpoint
    monkeypatch.setenv("BBB_CHECKPOINT_DIR", str(tmp_path))
    cfg = RunConfig(method="sgd", H=16, epochs=6, seed=100)
    config = {"cfg": asdict(cfg), "notebook": "nb"}
    history = [{"epoch": e, "val_error": v} for e, v in [(1, 0.30), (2, 0.05), (3, 0.20)]]
    save_checkpoint(CT.trial_checkpoint(cfg, "nb"), history=history)
    reports = [{"epoch": e, "val_error": v, "train_wall_s": 1.0, "started_at": 0.0}
               for e, v in [(3, 0.2), (4, 0.15), (5, 0.12), (6, 0.11)]]
    row = S._trial_row(CT.TRIAL, S._LocalResult(config, reports, None), epoch_step=1)
    assert [e for e, _ in row["val_curve"]] == [1, 2, 3, 4, 5, 6]
    assert (row["best_epoch"], row["val"]) == (2, 0.05)  # the early best is not lost
    nll_reports = [{**r, "val_nll": 0.5} for r in reports]
    row = S._trial_row(CT.TRIAL, S._LocalResult(config, nll_reports, None), 1, metric="val_nll")
    assert [e for e, _ in row["val_error_curve"]][:2] == [1, 2]
    assert row["val_curve"][0][0] == 3  # no validation NLL in the fit history: not invented


def test_splice_rewrites_a_sweep_whose_trial_resumed_and_chooses_again(tmp_path, monkeypatch):
    from helpers.train import save_checkpoint
    monkeypatch.setenv("BBB_CHECKPOINT_DIR", str(tmp_path / "ck"))
    monkeypatch.setenv("BBB_RESULTS_DIR", str(tmp_path / "res"))
    a, b = RunConfig(method="sgd", H=16, epochs=4, seed=100), RunConfig(method="sgd", H=8, epochs=4)
    late = [{"epoch": e, "val_error": v, "train_wall_s": 1.0, "started_at": 0.0}
            for e, v in [(3, 0.20), (4, 0.15)]]
    whole = [{"epoch": e, "val_error": 0.12, "train_wall_s": 1.0, "started_at": 0.0}
             for e in (1, 2, 3, 4)]
    rows = [S._trial_row(CT.TRIAL, S._LocalResult({"cfg": asdict(c)}, r, None), 1)  # as Ray's
            for c, r in ((a, late), (b, whole))]  # rows were before (no notebook)
    assert rows[0]["val_curve"][0][0] == 3
    path = tmp_path / "res" / "nb" / "sweep" / "s.json"
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps({"config": {"epoch_step": 1},
                                "metrics": {"trials": rows, "chosen": S.choose(rows)}}))
    assert S.load_sweep("s", "nb")["metrics"]["chosen"]["val"] == 0.12
    with pytest.raises(ValueError, match="needs a Trial"):  # the record names no trial
        S.splice_resumed_trials("s", "nb")
    assert S.splice_resumed_trials("s", "nb", trial=TRIAL) == []  # no checkpoint: nothing
    save_checkpoint(CT.trial_checkpoint(a, "nb"),
                    history=[{"epoch": 1, "val_error": 0.3}, {"epoch": 2, "val_error": 0.05}])
    assert S.splice_resumed_trials("s", "nb", trial=TRIAL) == [a.name]
    rec = S.load_sweep("s", "nb")
    assert rec["metrics"]["chosen"]["name"] == a.name and rec["metrics"]["chosen"]["epochs"] == 2
    assert rec["spliced_after_restore"]["trials"] == [a.name]
    assert S.splice_resumed_trials("s", "nb", trial=CT.TRIAL) == []  # idempotent


def _imports(path):
    """Return the modules ``path`` imports anywhere (top level and inside functions); relative
    ones as '.name'."""
    out = set()
    for node in ast.walk(ast.parse(Path(path).read_text())):
        if isinstance(node, ast.Import):
            out |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom):
            out.add("." * node.level + (node.module or ""))
    return out


def test_the_engine_imports_no_experiment():
    helpers_modules = {p.stem for p in (ROOT / "helpers").glob("*.py")}
    found = _imports(ROOT / "helpers" / "sweep.py")
    relative = {m.lstrip(".") for m in found if m.startswith(".")}
    absolute = {m.split(".")[0] for m in found if not m.startswith(".")}
    assert relative <= {"utils"}, f"helpers/sweep.py imports {sorted(relative - {'utils'})}"
    assert not absolute & (helpers_modules | {"helpers"}), absolute
    # and nothing it needs imports it back in a circle through an experiment
    assert ".sweep" not in _imports(ROOT / "helpers" / "utils.py")


def _toy_trial(log):
    """A trial of no experiment of this project: x is searched, val_error = (x - 3)^2 + 1/epoch."""
    def make(settings):
        if set(settings) - {"x", "epochs", "seed"}:
            raise ValueError(f"unknown settings {sorted(set(settings) - {'x', 'epochs', 'seed'})}")
        return {"x": int(settings["x"]), "epochs": int(settings.get("epochs", 1)),
                "seed": int(settings["seed"])}

    def train(config, report):
        cfg = config["cfg"]
        log.append((cfg["x"], config["notebook"], config["metric"]))
        for epoch in range(1, cfg["epochs"] + 1):
            report({"epoch": epoch, "val_error": (cfg["x"] - 3) ** 2 / 10 + 1 / (10 * epoch),
                    "train_wall_s": 0.01 * epoch, "started_at": 0.0})

    return S.Trial(make=make, name=lambda c: f"toy_x{c['x']}", train=train,
                   rules={"val_error": "the lowest toy error"})


def test_the_engine_runs_whatever_trial_it_is_handed():
    log = []
    trial = _toy_trial(log)
    space = {"base": {}, "grid": {"x": [1, 3, 4, 3]}}  # x=3 twice: one trial
    rec = S.run_sweep("toy", space, notebook="nb", profile="smoke", max_epochs=3, epoch_step=1,
                      executor="local", trial=trial)
    assert sorted(log) == [(1, "nb", "val_error"), (3, "nb", "val_error"), (4, "nb", "val_error")]
    assert rec["metrics"]["chosen"]["config"] == {"x": 3, "epochs": 3, "seed": 100}
    assert rec["rule"] == "the lowest toy error" and rec["metrics"]["complete"]
    assert rec["config"]["warm_start_sources"] == []  # the toy trial prepares nothing
    assert S.trial_epochs(space, 3, 1, 3, trial=trial)[0] == 3
    with pytest.raises(ValueError, match="metric must be one of"):
        S.run_sweep("toy", space, max_epochs=1, executor="local", trial=trial, metric="val_nll")
    with pytest.raises(ValueError, match="unknown settings"):
        S.expand({"base": {"y": 1}, "grid": {"x": [1]}}, trial=trial)


def test_where_the_trials_run(monkeypatch):
    assert S.resolve_executor("local") == ("local", "declared")
    assert S.resolve_executor("ray") == ("ray", "declared")
    monkeypatch.setenv("RAY_ADDRESS", "127.0.0.1:6390")  # a cluster user: never ignored
    assert S.resolve_executor("local") == ("ray", "$RAY_ADDRESS")
    monkeypatch.setenv(S.EXECUTOR_ENV, "local")  # an explicit choice wins
    assert S.resolve_executor("ray") == ("local", "$BBB_SWEEP_EXECUTOR")
    monkeypatch.setenv(S.EXECUTOR_ENV, "slurm")
    with pytest.raises(ValueError, match="BBB_SWEEP_EXECUTOR must be one of"):
        S.resolve_executor("ray")
    monkeypatch.delenv(S.EXECUTOR_ENV)
    with pytest.raises(ValueError, match="executor must be one of"):
        S.resolve_executor("slurm")


def test_every_declared_space_names_the_classification_trial():
    spaces = [(nb, prof, name, sp) for nb, profs in PROFILES.items() for prof, st in profs.items()
              for name, sp in st.get("sweeps", {}).items()]
    assert len({nb for nb, *_ in spaces}) == 3  # notebooks 01, 05 and 06 search
    for nb, prof, name, sp in spaces:
        assert S.resolve_trial(sp["trial"]) is CT.TRIAL, (nb, prof, name)
        assert S.expand(sp), (nb, prof, name)


def test_committed_sweep_files_read_unchanged(monkeypatch):
    """Every committed results file of a sweep reads back as before: its rows are what the trial
    makes of their configs, under the same names, and its choice is a RunConfig."""
    monkeypatch.setenv("BBB_RESULTS_DIR", str(ROOT / "results"))
    files = sorted((ROOT / "results").glob("*/sweep/*.json"))
    assert files
    for path in files:
        notebook, name = path.parent.parent.name, path.stem
        rec = S.load_sweep(name, notebook)
        for t in rec["metrics"]["trials"]:  # older files lack settings added later (defaults)
            made = CT.make(t["config"])
            assert {k: made[k] for k in t["config"]} == t["config"], (path, t["name"])
            assert CT.name(t["config"]) == t["name"]
        chosen = rec["metrics"]["chosen"]
        cfg = chosen_config(name, notebook, seed=7)
        assert isinstance(cfg, RunConfig) and cfg.seed == 7 and cfg.epochs == chosen["epochs"]
        assert S.choose(rec["metrics"]["trials"])["name"] == chosen["name"], path
