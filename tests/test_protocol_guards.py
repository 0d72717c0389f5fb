"""Tests that guard the protocol itself, not the numerics: the validation images are the last
10,000 of the training file and none of them is a training image; no choice reads a test
number; reported seeds and tuning seeds never meet. Each guard is also run on a planted
violation, so that it can be seen to fail."""
import copy
import hashlib
import json

import numpy as np
import pytest
import torch

import helpers as H
from helpers import bandit as B
from helpers import paper_protocol as PP
from helpers import profiles as PR
from helpers import sweep as SW
from helpers import table1 as T
from helpers.classification import RunConfig

ROOT = H.utils.PROJECT_ROOT


# ---- validation = the last 10,000 training images, disjoint from training -----------------

def _raw_train_images(root):
    """The MNIST training images straight from the IDX file (not through helpers.data)."""
    import gzip
    path = root / "MNIST" / "raw" / "train-images-idx3-ubyte"
    raw = path.read_bytes() if path.exists() else gzip.open(f"{path}.gz").read()
    return np.frombuffer(raw, np.uint8, offset=16).reshape(60_000, 784)


def _split_problems(data, raw, n_val=10_000):
    """What is wrong with ``data``'s training / validation split against the raw file."""
    def pixels(x):
        return (x * H.data.PAPER_PIXEL_SCALE).round().to(torch.uint8).numpy()
    out = []
    tr, va = pixels(data.x_train), pixels(data.x_val)
    first = len(raw) - n_val
    if not np.array_equal(va, raw[first:first + len(va)]):
        out.append("validation is not the last 10,000 training images (in order)")
    if not np.array_equal(tr, raw[:len(tr)]):
        out.append("training is not the first training images (in order)")
    if len(tr) > first:
        out.append(f"{len(tr)} training images reach into the last {n_val}")
    seen = {hashlib.sha1(r.tobytes()).digest() for r in tr}
    shared = sum(hashlib.sha1(r.tobytes()).digest() in seen for r in va)
    if shared:
        out.append(f"{shared} validation images are also training images")
    return out


@pytest.mark.parametrize("n_train, n_test", [(None, None), (2000, 1000)])
def test_validation_is_the_last_10000_training_images_and_none_is_trained_on(shared_data,
                                                                                 n_train, n_test):
    data = H.load_mnist(data_dir_=shared_data, download=False, n_train=n_train, n_test=n_test)
    raw = _raw_train_images(shared_data)
    assert len(data.x_val) == (10_000 if n_test is None else n_test)
    assert len(data.x_train) == (50_000 if n_train is None else n_train)
    assert _split_problems(data, raw) == []


def test_the_split_guard_finds_validation_images_taken_from_training(shared_data):
    data = H.load_mnist(data_dir_=shared_data, download=False)
    raw = _raw_train_images(shared_data)
    data.x_val = data.x_train[-10_000:]  # the planted bug: validation from inside training
    assert "validation is not the last 10,000 training images (in order)" in \
        _split_problems(data, raw)
    data = H.load_mnist(data_dir_=shared_data, download=False)
    data.x_val = torch.cat([data.x_val[:-1], data.x_train[:1]])  # one image overlaps
    assert "1 validation images are also training images" in _split_problems(data, raw)


# ---- no choice reads a test number --------------------------------------------------------

def _trial(name, val, epoch, test):
    cfg = RunConfig(method="sgd", H=8, epochs=60, lr=float(name))
    return {"name": cfg.name, "config": {**cfg.__dict__}, "metric": "val_error", "val": val,
            "val_error": val, "best_epoch": epoch, "stopped_early": False, "test_error": test,
            "test_error_curve": [[epoch, test]]}


def _poisoned_and_clean(trials):
    clean = [{k: v for k, v in t.items() if not k.startswith("test")} for t in trials]
    return trials, clean


def test_the_sweep_choice_ignores_test_numbers():
    # the test numbers rank the trials the other way round from validation
    trials = [_trial("0.001", 0.016, 45, 0.019), _trial("0.0003", 0.018, 30, 0.012),
              _trial("0.0001", 0.020, 60, 0.011)]
    poisoned, clean = _poisoned_and_clean(trials)
    assert SW.choose(poisoned) == SW.choose(clean)
    assert SW.choose(clean)["config"]["lr"] == 0.001 and SW.choose(clean)["epochs"] == 45


def test_table1_controls_and_cells_ignore_test_numbers():
    warm = RunConfig(method="bbb_mixture", H=20, epochs=30, init_from="sgd", init_epochs=60)
    cold = [RunConfig(method="bbb_mixture", H=20, epochs=60, mu_init=0.1, pi=p)
            for p in (0.25, 0.5)]
    sgd = RunConfig(method="sgd", H=20, epochs=45)

    def write(poison):
        def t(cfg, val, epoch, test):
            row = {"name": cfg.name, "config": {**cfg.__dict__}, "val": val, "val_error": val,
                   "best_epoch": epoch, "stopped_early": False}
            return {**row, "test_error": test} if poison else row
        for name, trials, chosen in (
                ("sgd_h20", [t(sgd, 0.02, 45, 0.01)], sgd),
                ("bbb_mixture_h20", [t(warm, 0.015, 30, 0.02), t(cold[0], 0.017, 50, 0.011),
                                     t(cold[1], 0.019, 55, 0.010)], warm)):
            H.save_results("01_mnist_classification", f"sweep/{name}", config={},
                           metrics={"trials": trials, "chosen": {"config": {**chosen.__dict__},
                                                                 "epochs": chosen.epochs}},
                           profile="smoke", seed=100)
    write(poison=True)
    poisoned = T.controls("01_mnist_classification", 20)
    write(poison=False)
    clean = T.controls("01_mnist_classification", 20)
    assert [c.config for c in poisoned] == [c.config for c in clean]
    cold_row = next(c for c in clean if c.key == "bbb_mixture_random_start")
    assert cold_row.config.pi == 0.25 and cold_row.config.epochs == 50  # by validation


def test_paper_protocol_ranking_ignores_test_numbers():
    recs = [{"name": n, "metrics": {"val_error": v, "test_error": t}}
            for n, v, t in (("a", 0.015, 0.020), ("b", 0.016, 0.010), ("c", None, 0.001))]
    clean = [{"name": r["name"], "metrics": {"val_error": r["metrics"]["val_error"]}}
             for r in recs]
    assert [r["name"] for r in PP.rank(recs)] == [r["name"] for r in PP.rank(clean)] == \
        ["a", "b", "c"]


def test_bandit_tuning_choice_reads_the_tuning_seeds_only():
    rows = [{"key": k, "buffer": b, "prior": 0.05, "recipe": b, "regret_final_mean": m,
             "reported_regret_final_mean": r}
            for k, b, m, r in (("p1", "paper", 7000, 9000), ("p2", "paper", 8000, 5000),
                               ("k1", "keep_all", 6000, 8000), ("k2", "keep_all", 6500, 3000))]
    clean = [{k: v for k, v in r.items() if not k.startswith("reported")} for r in rows]
    assert B.choose_tuned(rows) == B.choose_tuned(clean)
    assert {g: c["key"] for g, c in B.choose_tuned(clean).items()} == \
        {"paper": "p1", "keep_all": "k1", "overall": "k1"}


def _tiny_data(test_seed):
    g = torch.Generator().manual_seed(0)
    x, y = torch.rand(96, 784, generator=g), torch.randint(0, 10, (96,), generator=g)
    t = torch.Generator().manual_seed(test_seed)
    return H.ImageData(x[:64], y[:64], x[64:], y[64:], torch.rand(40, 784, generator=t),
                       torch.randint(0, 10, (40,), generator=t))


def test_a_sweep_gives_the_same_choice_whatever_the_test_set(monkeypatch):
    """Two local sweeps that differ only in their test set: the same trials, curves and choice,
    and no reported number about the test set."""
    def sweep_with(test_seed):
        monkeypatch.setattr(H.data, "load_images", lambda *a, **k: _tiny_data(test_seed))
        space = {"base": {"method": "sgd", "H": 8}, "grid": {"lr": [1e-3, 3e-2]},
                 "trial": "helpers.classification_trial:TRIAL"}
        return SW.run_sweep("guard", space, notebook=f"guard_{test_seed}", profile="smoke",
                            max_epochs=3, epoch_step=1, executor="local",
                            data=_tiny_data(test_seed))
    a, b = sweep_with(1), sweep_with(2)
    key = lambda r: [(t["name"], t["val_curve"], t["best_epoch"])  # noqa: E731
                     for t in r["metrics"]["trials"]]
    assert key(a) == key(b) and a["metrics"]["chosen"] == b["metrics"]["chosen"]
    assert all(len(t["val_curve"]) == 3 for t in a["metrics"]["trials"])  # both trained
    assert not any("test" in k for t in a["metrics"]["trials"] for k in t)
    assert a["test_evaluated"] is False


def test_the_bbb_predictor_is_chosen_without_the_test_set(monkeypatch):
    """classification.run: the predictor (posterior mean or average of samples) and every
    validation number come out the same whatever the test set, and choose_predictor is called
    with the two validation errors only."""
    from helpers import classification as C
    calls = []
    real = C.choose_predictor

    def spy(*args):
        calls.append(args)
        return real(*args)
    monkeypatch.setattr(C, "choose_predictor", spy)
    cfg = RunConfig(method="bbb_mixture", H=6, epochs=1, mu_init=0.1, batch_size=32)
    out = []
    for test_seed in (1, 2):
        _, rec = C.run(cfg, _tiny_data(test_seed), notebook=f"guard_{test_seed}", eval_samples=2)
        out.append(rec["metrics"])
    val = {k: v for k, v in out[0].items() if k.startswith("val") or k == "predictor"}
    assert val == {k: out[1][k] for k in val} and len(calls) == 2 and calls[0] == calls[1]
    assert calls[0] == (out[0]["val_error_mean_weights"], out[0]["val_error_ensemble"])


# ---- reported and tuning seeds never meet --------------------------------------------------

def seed_overlaps(profiles, paper_protocol, width_sweeps_seed=None):
    """Return every place where a tuning seed is also a reported seed, or a reported seed is
    outside 0-9 / a tuning seed below 10, over every profile of every notebook."""
    bad = []

    def check(where, reported, tuning):
        reported, tuning = set(reported), set(tuning)
        if reported & tuning:
            bad.append(f"{where}: seeds {sorted(reported & tuning)} both tuned on and reported")
        if any(not 0 <= s <= 9 for s in reported):
            bad.append(f"{where}: reported seeds {sorted(reported)} outside 0-9")
        if any(s < 10 for s in tuning):
            bad.append(f"{where}: tuning seeds {sorted(tuning)} below 10 (0-9 are reported)")
    for name, p in profiles["01_mnist_classification"].items():
        reported = {s for v in p["table"]["seeds"].values() for s in v}
        tuning = {_seed_of(c) for space in p["sweeps"].values()
                  for c in SW.expand(space, seed=p["sweep"]["seed"])}
        check(f"01 {name}", reported, tuning)
    for name, p in profiles["03_contextual_bandit"].items():
        check(f"03 {name}", p["seeds"], p["tuning"]["seeds"])
    for name, p in profiles["05_uncertainty"].items():
        reported = {s for v in p["seeds"].values() for s in v}
        tuning = {_seed_of(c) for space in p["sweeps"].values()
                  for c in SW.expand(space, seed=p["sweep"]["seed"])}
        check(f"05 {name}", reported, tuning)
    for name, p in profiles["06_alternatives"].items():
        tuning = {_seed_of(c) for space in p["sweeps"].values()
                  for c in SW.expand(space, seed=p["sweep"]["seed"])}
        check(f"06 {name}", p["seeds"], tuning | {100})  # IVON's grid: tune_ivon(seed=100)
    for name, s in paper_protocol.items():
        check(f"paper protocol {name}", {x for v in s["seeds"].values() for x in v},
              {s["tuning_seed"]})
    return bad


def _seed_of(config):
    """The seed of a configuration a trial made: a RunConfig or a dict of settings."""
    return config["seed"] if isinstance(config, dict) else config.seed


def test_reported_and_tuning_seeds_never_meet():
    assert seed_overlaps(PR.PROFILES, PR.PAPER_PROTOCOL) == []


def test_the_seed_guard_finds_planted_overlaps():
    profiles = copy.deepcopy(PR.PROFILES)
    profiles["01_mnist_classification"]["default"]["sweep"]["seed"] = 2
    profiles["03_contextual_bandit"]["default"]["tuning"]["seeds"] = (3, 100)
    profiles["05_uncertainty"]["default"]["seeds"]["MNIST"] = (0, 100)
    sweeps = profiles["06_alternatives"]["default"]["sweeps"]
    sweeps["map_mnist"] = {**sweeps["map_mnist"], "base": {**sweeps["map_mnist"]["base"],
                                                           "seed": 1}}
    pp = copy.deepcopy(PR.PAPER_PROTOCOL)
    pp["default"]["tuning_seed"] = 0
    bad = seed_overlaps(profiles, pp)
    for where in ("01 default: seeds [2]", "03 default: seeds [3]", "05 default: seeds [100]",
                  "06 default: seeds [1]", "paper protocol default: seeds [0]"):
        assert any(b.startswith(where) for b in bad), (where, bad)


def test_ensemble_members_use_neither_reported_nor_tuning_seeds(monkeypatch):
    """Notebooks 05 and 06 train extra ensemble members on derived seeds: none may be a tuning
    seed (read from the committed searches: the default profile)."""
    monkeypatch.setenv("BBB_RESULTS_DIR", str(ROOT / "results"))
    from helpers import alternatives as A
    from helpers import uncertainty as U
    p5 = H.get_profile("05_uncertainty", "default")
    p6 = H.get_profile("06_alternatives", "default")
    tuning = {p5.sweep["seed"], p6.sweep["seed"], 100}
    for data_name, seeds in p5.seeds.items():
        for seed in seeds:
            members = U.method_configs("ensemble", data_name, seed, p5.ensemble_size)
            extra = {c.seed for c in members[1:]}
            assert not extra & tuning and not extra & set(range(10)), (data_name, seed, extra)
    for seed in p6.seeds:
        extra = {c.seed for k, (c, _) in A.reported_configs(seed, p6).items()
                 if k.startswith("ensemble_")}
        assert extra and not extra & tuning and not extra & set(range(10))


def test_the_committed_sweeps_ran_on_their_tuning_seed():
    """Every committed search record says it ran on the profile's tuning seed, and so do its
    trials (a search rerun on a reported seed would be caught here)."""
    for nb in ("01_mnist_classification", "05_uncertainty", "06_alternatives"):
        prof = H.get_profile(nb, "default")
        for path in sorted((ROOT / "results" / nb / "sweep").glob("*.json")):
            rec = json.loads(path.read_text())
            assert rec["config"]["seed"] == prof.sweep["seed"], path
            assert {t["config"]["seed"] for t in rec["metrics"]["trials"]} == \
                {prof.sweep["seed"]}, path
