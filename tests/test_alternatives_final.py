"""Notebook 06's plan v3, final runs (helpers/alternatives_final.py): the network of the chosen
epoch, every method scored on the same images, the plan's claims tested."""
import json
from pathlib import Path

import pytest
import torch

from helpers import alternatives_final as F
from helpers import alternatives_plan as A
from helpers import alternatives_report as R
from helpers.classification import RunConfig, build_model
from helpers.train import fit


def _small_data(shared_data, monkeypatch, n_train=300, n_test=200):
    import helpers as H
    monkeypatch.setenv("BBB_DATA_DIR", str(shared_data))
    data = H.load_images("MNIST", n_train=n_train, n_test=n_test)
    x_ood = H.load_images("FashionMNIST", n_train=n_train, n_test=n_test).x_test
    return data, x_ood


@pytest.mark.parametrize("method", ["sgd", "bbb_mixture"])
def test_training_e_epochs_is_the_chosen_epochs_network_of_a_longer_run(shared_data, monkeypatch,
                                                                         method):
    data, _ = _small_data(shared_data, monkeypatch)
    cfg = RunConfig(method=method, H=16, lr=1e-3, seed=3, epochs=3)
    states = {}

    def train(epochs, keep=None):
        torch.manual_seed(cfg.seed)
        model = build_model(cfg, data.x_train.shape[1])
        snap = lambda row, net: states.__setitem__(row["epoch"], {  # noqa: E731
            k: v.clone() for k, v in net.state_dict().items()}) if row["epoch"] == keep else None
        fit(model, data, epochs=epochs, lr=cfg.lr, n_samples=cfg.samples,
            kl_weighting="uniform" if cfg.bayesian else "none", seed=cfg.seed, eval_sets=("val",),
            on_epoch=snap, weight_decay=1e-4)
        return model.state_dict()

    train(3, keep=2)
    short = train(2)
    assert states[2].keys() == short.keys()
    for k in short:
        torch.testing.assert_close(states[2][k], short[k], rtol=0, atol=0)


def test_ivon_trained_e_epochs_is_the_chosen_epochs_network_of_a_longer_run(
        shared_data, monkeypatch, tmp_path):
    monkeypatch.setenv("BBB_CHECKPOINT_DIR", str(tmp_path))
    data, _ = _small_data(shared_data, monkeypatch)
    from helpers.alternatives import train_ivon
    hp = dict(H=16, lr=0.1, hess_init=0.1, weight_decay=1e-4, schedule="constant")
    kept = {}
    train_ivon(hp, data, 3, 3, notebook="long",
               on_epoch=lambda e, m, o, row: kept.setdefault(e, {
                   k: v.clone() for k, v in m.state_dict().items()}))
    short, _, _ = train_ivon(hp, data, 3, 2, notebook="short")
    for k, v in short.state_dict().items():
        torch.testing.assert_close(kept[2][k], v, rtol=0, atol=0)


def test_the_subset_is_the_same_for_everyone_and_the_two_sets_draw_apart():
    a, b = F.subset(10_000, 2000, "test"), F.subset(10_000, 2000, "test")
    assert torch.equal(a, b) and len(a) == 2000 and len(set(a.tolist())) == 2000
    assert not torch.equal(a, F.subset(10_000, 2000, "ood"))
    assert torch.equal(F.subset(50, 2000, "test"), torch.arange(50))


def test_a_trial_is_eligible_only_when_every_epoch_ran_without_error():
    row = {"val_curve": [[e, 0.1] for e in range(1, A.MAX_EPOCHS + 1)], "error": None}
    assert A.eligible(row)
    assert not A.eligible({**row, "error": "boom"})
    assert not A.eligible({**row, "val_curve": row["val_curve"][:-1]})
    assert not A.eligible({**row, "val_curve": [*row["val_curve"][:-1],
                                                [A.MAX_EPOCHS, float("nan")]]})


def test_a_machine_failure_is_not_recorded_as_the_methods(monkeypatch, tmp_path):
    monkeypatch.setenv("BBB_RESULTS_DIR", str(tmp_path))

    def oom(*a, **k):
        raise RuntimeError("[enforce fail at alloc_cpu.cpp] DefaultCPUAllocator: can't allocate "
                           "memory: you tried to allocate 1 bytes")
    monkeypatch.setattr(F, "networks", oom)
    chosen = {m: {"config": {**A.configs(m)[0]}, "epochs": 1, "name": m} for m in A.SEARCHES}
    with pytest.raises(RuntimeError, match="allocate"):
        F.run_one("map", 0, None, None, chosen, progress_fn=lambda m: None)
    assert not F.record_path("map", 0).exists()  # no record: the run is tried again


def test_a_laplace_fit_on_another_device_never_trains_maps_network_there(monkeypatch, tmp_path):
    monkeypatch.setenv("BBB_RESULTS_DIR", str(tmp_path / "results"))
    monkeypatch.setenv("BBB_CHECKPOINT_DIR", str(tmp_path / "checkpoints"))
    from helpers.data import ImageData
    t = torch.empty(4, 784, device="meta")
    lab = torch.empty(4, dtype=torch.long, device="meta")
    data = ImageData(t, lab, t, lab, t, lab)
    chosen = {m: {"config": {**A.configs(m)[0]}, "epochs": 1, "name": m} for m in A.SEARCHES}
    with pytest.raises(FileNotFoundError, match="trained on a CPU"):
        F.run_one("laplace_kron", 3, data, t, chosen, progress_fn=lambda m: None)
    assert not F.record_path("laplace_kron", 3).exists()  # no record: retried where it can run


def _tool():
    import importlib.util
    spec = importlib.util.spec_from_file_location(
        "alternatives_search", Path(__file__).resolve().parent.parent / "tools" /
        "alternatives_search.py")
    tool = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(tool)
    return tool


@pytest.mark.parametrize("argv, says", [
    (["final", "--device", "cuda"], "trained on a CPU"),
    (["final", "--device", "cuda", "--methods", "map"], "trained on a CPU"),
    (["search", "--device", "cuda", "--methods", "laplace_kron"], "unknown methods"),
    (["search", "--device", "cuda", "--methods", "map"], "trained on a CPU"),
    (["final", "--methods", "laplce_kron"], "unknown methods")])
def test_the_tool_refuses_a_gpu_for_what_trains_and_unknown_methods(argv, says, capsys):
    with pytest.raises(SystemExit):
        _tool().main(argv)
    assert says in capsys.readouterr().err


def test_the_report_names_every_edge_a_choice_sits_at():
    c = {"config": {"lr": 3e-4, "weight_decay": 1e-1}, "epochs": 60}
    assert R.edges("map", c) == ["weight_decay", "epochs"]
    assert R.edges("map", {**c, "config": {"lr": 3e-5, "weight_decay": 1e-3},
                           "epochs": 30}) == ["lr"]
    assert R.edges("bbb", {"config": {"lr": 1e-3, "rho_init": -5.0}, "epochs": 5}) == ["epochs"]


def test_a_methods_final_runs_wait_for_its_own_search(tmp_path, monkeypatch):
    monkeypatch.setenv("BBB_RESULTS_DIR", str(tmp_path))
    with pytest.raises(F.SearchesIncomplete, match="alternatives_search.py search"):
        F.choices()
    assert F.choices(partial=True) == {} and F.pending(ready_only=True) == []
    assert len(F.pending()) == len(F.METHODS) * len(A.REPORTED_SEEDS)
    # the slow all-layer Laplace fits come after every other method's runs on every seed
    order = [m in F.ALL_LAYER for m, _ in F.pending()]
    assert order == sorted(order) and F.pending()[0] == ("map", 0)
    # MAP's search complete: MAP's runs are ready, and the ensemble and Laplace of a seed once
    # MAP's record of that seed exists; MC dropout, BBB and IVON wait for their own searches
    monkeypatch.setattr(A, "chosen", lambda m: {"name": "x"} if m == "map" else None)
    assert set(F.choices(partial=True)) == {"map"}
    assert F.pending(seeds=(0,), ready_only=True) == [("map", 0)]
    path = F.record_path("map", 0)
    path.parent.mkdir(parents=True)
    path.write_text("{}")
    assert {m for m, _ in F.pending(seeds=(0,), ready_only=True)} == {"ensemble", *F.LAPLACE}


def test_every_method_is_scored_on_one_seed_pair_and_the_plans_claims_are_tested(
        shared_data, monkeypatch, tmp_path):
    monkeypatch.setenv("BBB_RESULTS_DIR", str(tmp_path / "results"))
    monkeypatch.setenv("BBB_CHECKPOINT_DIR", str(tmp_path / "checkpoints"))
    data, x_ood = _small_data(shared_data, monkeypatch, n_train=400, n_test=150)
    chosen = {m: {"config": {**A.configs(m)[0], "H": 12}, "epochs": 1, "name": f"{m}-choice"}
              for m in A.SEARCHES}
    monkeypatch.setattr(F, "TEST_SAMPLES", 3)
    monkeypatch.setattr(F, "MC_REPEATS", 2)
    monkeypatch.setattr(F, "ENSEMBLE_SIZE", 2)
    torch.set_num_threads(1)
    # the ensemble and Laplace wait for MAP's record of their seed (they reuse its network)
    monkeypatch.setattr(A, "chosen", chosen.get)
    assert ("ensemble", 0) not in F.pending(seeds=(0,), ready_only=True)
    assert ("map", 0) in F.pending(seeds=(0,), ready_only=True)
    assert ("ensemble", 0) in F.pending(seeds=(0,))
    for seed in (0, 1):
        for method in F.METHODS:
            F.run_one(method, seed, data, x_ood, chosen, progress_fn=lambda m: None)
    assert F.pending(seeds=(0, 1)) == []
    recs = F.records()
    assert len(recs) == 2 * len(F.METHODS)
    for (method, seed), r in recs.items():
        assert r["subset_size"] == {"test": 150, "ood": 150}
        assert (r["full"] is None) == (method in F.ALL_LAYER)
        assert 0 <= r["subset"]["test_error"] <= 1 and r["subset"]["nll"] > 0
        assert (r["mc_repeats"] is not None) == (method in ("mc_dropout", "bbb", "ivon"))
        if r["mc_repeats"]:
            assert len(r["mc_repeats"]["full"]) == len(r["mc_repeats"]["subset"]) == 2
        assert r["epochs"] == 1 and r["code"] and r["machine"]["threads"] == 1
        assert r["failed"] is None and r["setting"]["seed"] == seed
        assert (r["map_network"] is not None) == (method in ("map", "ensemble", *F.LAPLACE))
    assert F.record_path("ensemble", 1).exists()
    assert json.loads(F.record_path("ensemble", 1).read_text())["member_seeds"] == [1, 1001]
        # each scored network is the final run of its seed (its checkpoint exists)
    ck = list((tmp_path / "checkpoints").rglob("*.pt"))
    assert any("_s1_" in p.name or "_s1." in p.name for p in ck)
    out = F.analysis()
    plan = A.plan()
    assert out["interim"] and not out["status"]["complete"]  # seeds 2-9 have no record
    assert out["status"]["failed"] == {} and out["status"]["map_network_mismatch"] == []
    for family, claims in plan["tests"]["families"].items():
        assert list(out["families"][family]) == claims
        for claim in claims:
            res = out["families"][family][claim]
            assert res["family_size"] == len(claims)
            assert res["verdict"] in ("holds", "reversed", "not resolved at 2 seeds")
    assert out["table"]["bbb"]["full"]["nll"]["seeds"] == [0, 1]
    assert out["cost"]["bbb"]["seeds"] == [0, 1] and out["cost"]["bbb"]["train_s"] > 0
    assert out["cost"]["ensemble"]["train_s"] > out["cost"]["map"]["train_s"]  # + members
    assert "full" not in out["table"]["laplace_kron"]
    nll = out["families"]["test NLL"]
    assert nll["bbb < map on nll"]["mc_sd_of_difference"] > 0  # BBB samples
    assert nll["bbb < laplace_kron on nll"]["on"] == "subset"
    # a record naming another MAP network is caught
    recs = F.records()
    recs[("ensemble", 1)] = {**recs[("ensemble", 1)], "map_network": "0" * 16}
    assert F.status(recs)["map_network_mismatch"][0]["seed"] == 1
    assert any("another MAP network" in p for p in F.status(recs)["problems"])
    # so is a record that ran another setting than its search chose, or uncommitted code
    recs = F.records()
    recs[("bbb", 0)] = {**recs[("bbb", 0)], "chosen": "something else"}
    recs[("ivon", 1)] = {**recs[("ivon", 1)], "code": {"commit": "c", "dirty": True}}
    problems = F.status(recs)["problems"]
    assert any(p.startswith("bbb seed 0 ran something else") for p in problems)
    assert any(p.startswith("ivon seed 1 was run from uncommitted code") for p in problems)
    full = {k: ({**r, "code": {"commit": "c", "dirty": False}} if k != ("bbb", 0) else
                {**r, "chosen": "something else", "code": {"commit": "c", "dirty": False}})
            for k, r in F.records().items()}
    monkeypatch.setattr(A, "REPORTED_SEEDS", (0, 1))
    assert F.status(full)["complete"] and F.analysis(full)["interim"]  # a problem: no verdict
    full[("bbb", 0)]["chosen"] = "bbb-choice"
    clean = F.analysis(full)
    assert not clean["interim"] and clean["status"]["problems"] == []
    assert "these are the plan's verdicts" in R.status_text(clean)
    monkeypatch.setattr(A, "REPORTED_SEEDS", tuple(range(10)))
    # the report renders every claim and method row from the analysis
    header, rows = R.test_rows(out)
    assert len(rows) == sum(len(c) for c in plan["tests"]["families"].values())
    assert all(r[3] == "2" and r[-1] == out["families"][r[0]][c]["verdict"] + " (interim)"
               for r, (c) in zip(rows, [c for cs in plan["tests"]["families"].values()
                                        for c in cs]))
    header, rows = R.table_rows(out, on="subset")
    assert len(rows) == len(F.METHODS) and all(r[1].endswith("(2)") for r in rows)
    assert len(R.table_rows(out)[1]) == len(F.METHODS) - len(F.ALL_LAYER)
    assert "interim" in R.status_text(out) and "Interim" in R.answer_text(out)
    assert all(r[-1].endswith("(interim)") for r in R.test_rows(out)[1])
    header, rows = R.per_seed_rows(out, "nll", on="subset")
    assert header == ["method", "seed 0", "seed 1"] and len(rows) == len(F.METHODS)
    assert rows[0][1] == f"{out['table']['map']['subset']['nll']['per_seed'][0]:.4f}"
    # the records name the choice they ran, and say it came from validation
    r = json.loads(F.record_path("ensemble", 1).read_text())
    assert r["chosen_from"].endswith("search/map/ (validation only)")


def test_a_failed_run_is_recorded_and_what_reuses_it_fails_with_it(shared_data, monkeypatch,
                                                                     tmp_path):
    monkeypatch.setenv("BBB_RESULTS_DIR", str(tmp_path / "results"))
    monkeypatch.setenv("BBB_CHECKPOINT_DIR", str(tmp_path / "checkpoints"))
    data, x_ood = _small_data(shared_data, monkeypatch, n_train=200, n_test=100)
    chosen = {m: {"config": {**A.configs(m)[0], "H": 8}, "epochs": 1, "name": f"{m}-choice"}
              for m in A.SEARCHES}

    def diverge(method, seed, *a, **k):
        raise FloatingPointError(f"loss is NaN at epoch 1 ({method})")
    monkeypatch.setattr(F, "networks", diverge)
    rec = F.run_one("map", 3, data, x_ood, chosen, progress_fn=lambda m: None)
    assert rec["failed"].startswith("FloatingPointError") and rec["full"] is None
    rec = F.run_one("laplace_diag", 3, data, x_ood, chosen, progress_fn=lambda m: None)
    assert "map's network of seed 3 failed" in rec["failed"]
    st = F.status(F.records())
    assert set(st["failed"]) == {"map seed 3", "laplace_diag seed 3"} and not st["complete"]
    assert F.per_seed(F.records(), "map", "nll", "full") == {}


def test_the_status_command_counts_trials_and_final_runs(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("BBB_RESULTS_DIR", str(tmp_path))
    _tool().main(["status"])
    out = capsys.readouterr().out
    assert out.count(f"trials left {A.TRIALS}") == len(A.SEARCHES)
    assert all(f"final {m:16s}  0 of 10 seeds" in out for m in F.METHODS)
    assert f"final runs left: {len(F.METHODS) * 10}," in out


def test_training_minutes_compare_cpu_runs_only_and_name_the_gpu_ones():
    assert F._device({"machine": {"device": "cuda:0"}}) == "cuda"
    assert F._device({"machine": {"device": "cpu"}}) == "cpu"
    cell = R._cost_cell({"train_s": 120.0, "seeds": [0, 1, 2],
                         "other_devices": {"NVIDIA H200": [3, 4]}})
    assert cell == "2.0 (3 CPU runs; 2 on NVIDIA H200)"
    assert R._cost_cell({"train_s": 60.0, "seeds": [0]}) == "1.0"
    assert R._cost_cell({"seeds": [], "other_devices": {"NVIDIA H200": [0]}}).startswith("—")
    # the committed analysis: no GPU run's seconds in a CPU mean
    import json
    root = Path(__file__).resolve().parent.parent / "results" / "06_alternatives" / f"v{A.VERSION}"
    summary = json.loads((root / "summary.json").read_text())
    recs = {(r["method"], r["seed"]): r for r in
            (json.loads(p.read_text()) for p in (root / "final").glob("*/seed*.json"))}
    for m, c in summary["cost"].items():
        assert all(F._device(recs[(m, s)]) == "cpu" for s in c["seeds"])
        for seeds in c.get("other_devices", {}).values():
            assert all(F._device(recs[(m, s)]) != "cpu" for s in seeds)


def test_the_takeaway_and_the_hardware_line_are_read_from_the_records():
    fam = {"test NLL": {"bbb < map on nll": {"verdict": "holds"},
                        "bbb < ivon on nll": {"verdict": "reversed"},
                        "bbb < mc_dropout on nll": {"verdict": "not resolved at 10 seeds"}}}
    done = R.takeaway_text({"interim": False, "seeds": list(range(10)), "families": fam,
                            "table": {}})
    assert "better than 1 of 3 rivals (MAP)" in done and "worse than 1 (IVON)" in done
    assert "interim" in R.takeaway_text({"interim": True, "seeds": [0], "families": fam})
    cpu = {"device": "cpu", "cpu": "AMD EPYC", "threads": 1, "torch": "2.14"}
    gpu = {"device": "cuda:0", "gpu": "NVIDIA H200", "torch": "2.11"}
    recs = {("map", 0): {"machine": cpu, "map_network": "a"},
            ("laplace_kron", 0): {"machine": gpu, "map_network": "a"}}
    text = R.hardware_text(recs, check_dir=Path("/nonexistent"))
    assert "1 on AMD EPYC (1 thread each, torch 2.14) and 1 on NVIDIA H200" in text
    assert "equals MAP's" in text
    recs[("laplace_kron", 0)]["map_network"] = "b"
    assert "differs from MAP's" in R.hardware_text(recs, check_dir=Path("/nonexistent"))


def test_the_prior_precision_check_pairs_bbb_with_each_setting_and_refuses_another_network(
        tmp_path, monkeypatch):
    from helpers import laplace_prior_check as P

    def rec(seed, nll):
        return {"seed": seed, "marglik_minus_plan_record": {"nll": 0.0},
                "settings": {k: {"prior_precision": p, **{part: {
                    "nll": nll + d, "auroc_entropy": 0.9, "ece": 0.01, "test_error": 0.02}
                    for part in ("full", "subset")}}
                    for (k, p), d in zip(zip(P.SETTINGS, (5.0, 1e4, 50.0)), (0.02, 0.0, 0.0))}}
    recs = {s: rec(s, 0.06 + 0.001 * s) for s in range(4)}

    def scores(nll, au):
        return {"nll": nll, "auroc_entropy": au}
    plan_recs = {}
    for s in range(4):
        b = scores(0.065 + 0.0005 * (s % 2), 0.92)
        plan_recs[("bbb", s)] = {"full": b, "subset": b, "mc_repeats": None}
        m = scores(0.07, 0.88 + 0.001 * s)
        plan_recs[("map", s)] = {"full": m, "subset": m, "mc_repeats": None}
        plan_recs[(P.METHOD, s)] = {"full": m, "subset": m, "mc_repeats": None}
    plan = {"tests": {"alpha": 0.05, "families": {
        "test NLL": ["bbb < laplace_ll_kron on nll", "bbb < map on nll"],
        "OOD AUROC (entropy)": ["laplace_ll_kron < bbb on auroc_entropy"]}}}
    out = P.analysis(recs, plan_recs, plan)
    assert out["seeds"] == [0, 1, 2, 3] and not out["complete"]
    # tested in the plan's family: Holm over both NLL claims, not over the check's two
    assert out["settings"]["marglik"]["tests"][P.CLAIMS[0]]["family_size"] == 2
    assert out["settings"]["marglik"]["tests"][P.CLAIMS[1]]["family_size"] == 1
    assert out["settings"]["marglik"]["tests"][P.CLAIMS[0]]["verdict"] == "holds"
    assert out["settings"]["map_weight_decay"]["tests"][P.CLAIMS[0]]["verdict"] != "holds"
    assert out["settings"]["gridsearch_val"]["prior_precision"] == [1e4] * 4
    # a network whose weights are not the plan's is refused before any fit
    monkeypatch.setenv("BBB_RESULTS_DIR", str(tmp_path))
    net = build_model(RunConfig(method="sgd", H=4, epochs=1), 784)
    monkeypatch.setattr(P, "_network", lambda *a, **k: (net, None))
    path = F.record_path(P.METHOD, 0)
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps({"map_network": "not-this-one"}))
    with pytest.raises(RuntimeError, match="differs"):
        P.run_seed(0, None, None, {}, progress_fn=lambda m: None)


def test_the_answer_line_names_losses_wins_and_the_unresolved():
    fams = {"test NLL": {"bbb < map on nll": {"verdict": "not resolved at 10 seeds"},
                         "bbb < mc_dropout on nll": {"verdict": "reversed"},
                         "bbb < laplace_ll_kron on nll": {"verdict": "holds"}},
            "OOD AUROC (entropy)": {"map < bbb on auroc_entropy": {"verdict": "holds"},
                                    "ivon < bbb on auroc_entropy": {
                                        "verdict": "not resolved at 10 seeds"}}}
    table = {"map": {"subset": {"nll": {"mean": 0.05}}},
             "laplace_ll_kron": {"subset": {"nll": {"mean": 0.07}}}}
    text = R.answer_line({"interim": False, "families": fams, "table": table,
                          "cost": {"bbb": {"train_ratio_to_map": 2.0}}})
    assert "loses to MC dropout on test NLL" in text
    assert "test NLL over Laplace (last layer) (fits that score worse than MAP itself)" in text
    assert "OOD AUROC over MAP" in text and "Against IVON," in text and "2.0×" in text
    assert R.answer_line({"interim": True}) == ""


def test_each_verdict_is_retested_under_every_extra_predictive_seed():
    def rec(v, reps):
        return {"full": {"nll": v}, "subset": {"nll": v},
                "mc_repeats": {"full": [{"nll": x} for x in reps],
                               "subset": [{"nll": x} for x in reps]} if reps else None}
    recs = {("bbb", 0): rec(1.0, [1.1, 2.0]), ("map", 0): rec(5.0, None)}
    seen = []
    out = F.mc_robustness(recs, lambda rr: seen.append(rr[("bbb", 0)]["full"]["nll"]) or {
        "f": {"c": {"verdict": "holds" if rr[("bbb", 0)]["full"]["nll"] < 1.5 else "reversed",
                    "p_holm": 0.01}}})
    assert seen == [1.1, 2.0]  # the sampling method takes each repeat; MAP stays as scored
    assert out["f"]["c"]["verdicts"] == ["holds", "reversed"]
    summary = {"families": {"f": {"bbb < map on nll": {"verdict": "holds", "p_holm": 0.01}}},
               "mc_robustness": {"f": {"bbb < map on nll": out["f"]["c"]}}}
    text = R.robustness_text(summary)
    assert "1 of 2" not in text and "0 of 1 verdicts" in text \
        and "BBB better → BBB better, BBB worse" in text


def test_the_grid_search_scores_every_prior_precision_afresh():
    """laplace-torch 0.3's default running NLL is never reset between grid values; the check
    hands over a plain function, whose value at one point ignores the points before it."""
    from helpers import laplace_prior_check as P
    curve = []
    y = torch.tensor([0, 1])
    bad = P._nll(torch.tensor([[0.5, 0.5], [0.5, 0.5]]), y, curve)
    good = P._nll(torch.tensor([[0.99, 0.01], [0.01, 0.99]]), y, curve)
    assert curve == [pytest.approx(float(bad)), pytest.approx(float(good))]
    assert float(good) == pytest.approx(-torch.log(torch.tensor(0.99)).item())
