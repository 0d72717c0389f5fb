"""The helpers behind the validation-only protocol: Table 1's cells and rows, the OOD summary,
notebook 06's evaluation, the pruning analysis (tiny models, no real training)."""
import json

import pytest
import torch

import helpers as H
from helpers import alternatives as A
from helpers import pruning as P
from helpers import table1 as T
from helpers import uncertainty as U
from helpers.classification import RunConfig


def _sweep(name, trials, chosen):
    H.save_results("01_mnist_classification", f"sweep/{name}", config={},
                   metrics={"trials": trials, "chosen": chosen}, profile="smoke", seed=100)


def _trial(cfg, val, epoch):
    return {"name": cfg.name, "config": {**cfg.__dict__}, "val": val, "val_error": val,
            "best_epoch": epoch, "stopped_early": False}


def test_table_cells_follow_the_sweeps_and_add_controls():
    sgd = RunConfig(method="sgd", H=20, epochs=45)
    bbb_warm = RunConfig(method="bbb_mixture", H=20, epochs=30, init_from="sgd", init_epochs=60)
    bbb_cold = RunConfig(method="bbb_mixture", H=20, epochs=60, mu_init=0.1)
    for name, cfg in (("sgd_h20", sgd), ("dropout_h20", RunConfig(method="dropout", H=20, epochs=50)),
                      ("bbb_gaussian_h20", RunConfig(method="bbb_gaussian", H=20, epochs=40))):
        _sweep(name, [_trial(cfg, 0.02, cfg.epochs)], {"config": {**cfg.__dict__}, "epochs": cfg.epochs})
    _sweep("bbb_mixture_h20", [_trial(bbb_warm, 0.015, 30), _trial(bbb_cold, 0.019, 55)],
           {"config": {**bbb_warm.__dict__}, "epochs": 30})
    cells = T.cells((20, 40), {"sgd_h20": 1}, base_H=20)
    keys = [(c.key, c.H) for c in cells]
    assert ("sgd_equal_compute", 20) in keys and ("bbb_mixture_random_start", 20) in keys
    equal = next(c for c in cells if c.key == "sgd_equal_compute")
    assert equal.config.epochs == 60 + 30 and equal.config.method == "sgd"
    cold = next(c for c in cells if c.key == "bbb_mixture_random_start")
    assert cold.config.init_from is None and cold.config.epochs == 55
    wide = next(c for c in cells if c.key == "bbb_mixture" and c.H == 40)
    assert wide.config.epochs == 30 and wide.config.H == 40 and "width 40" in wide.derived
    # a width with its own search: that search's recipe and its epochs (chosen at that width)
    sgd40 = RunConfig(method="sgd", H=40, epochs=25, lr=3e-4)
    _sweep("sgd_h40", [_trial(sgd40, 0.02, 25)], {"config": {**sgd40.__dict__}, "epochs": 25})
    own = next(c for c in T.cells((40,), {"sgd_h40": 1}, base_H=20) if c.key == "sgd")
    assert (own.config.epochs, own.config.lr, own.derived) == (25, 3e-4, "sweep sgd_h40")
    rec = {"config": {"seed": 1}, "metrics": {"test_error": 0.02, "val_error": 0.021,
                                              "predictor": "network", "train_wall_s": 1.0},
           "name": "x"}
    row = T.row(cells[0], [rec, {**rec, "config": {"seed": 2},
                                 "metrics": {**rec["metrics"], "test_error": 0.03}}])
    assert row["mean"] == pytest.approx(0.025) and row["seeds"] == [1, 2]
    assert row["selected_on"] == "validation" and row["sd"] == pytest.approx(0.00707, rel=1e-3)


def test_ood_summary_and_evaluation():
    rows = [{"data": "MNIST", "kind": "bbb", "seed": s, "test_error": e, "nll": 0.1, "brier": 0.02,
             "ece": 0.01, "auroc_entropy": a, "auroc_mi": 0.9, "train_wall_s": 1.0}
            for s, e, a in ((0, 0.02, 0.9), (1, 0.03, 0.8))]
    s = U.summarise(rows)[("MNIST", "bbb")]
    assert s["seeds"] == [0, 1] and s["test_error"]["mean"] == pytest.approx(0.025)
    assert s["auroc_entropy"]["per_seed"] == [0.9, 0.8]
    data = H.ImageData(*(torch.zeros(1, 784), torch.zeros(1, dtype=torch.long)) * 2,
                       torch.rand(50, 784), torch.randint(0, 10, (50,)))
    probs = lambda x: torch.softmax(torch.randn(3, len(x), 10), -1)  # noqa: E731
    m = A.evaluate(probs, data, torch.rand(40, 784), angles=(0, 90))
    assert m["rotation"]["angle"] == [0, 90] and len(m["rotation"]["error"]) == 2
    assert 0 <= m["auroc_entropy"] <= 1 and m["auroc_mi"] is not None and m["predict_s_10k"] > 0


def test_pruning_analysis_of_a_tiny_network():
    torch.manual_seed(0)
    model = H.BayesMLP(784, (16,), 10, rho_init=-4.0)
    data = H.ImageData(torch.rand(8, 784), torch.randint(0, 10, (8,)), torch.rand(8, 784),
                       torch.randint(0, 10, (8,)), torch.rand(64, 784), torch.randint(0, 10, (64,)))
    out = P.analyse(model, data)
    assert out["n_weights"] == 784 * 16 + 16 * 10
    assert sum(out["snr_hist"]) + out["snr_outside"] == out["n_weights"]
    assert out["weights_kept"]["100"] == 0 and out["weights_kept"]["0"] == out["n_weights"]
    assert set(out["error_at"]) == {"snr", "magnitude", "random"}
    json.dumps(out)  # fits a results file


def test_table2_groups_networks_by_width_and_gives_the_seed_spread():
    """Table 2 and the gap line average over the seeds of each width (the main width first)."""
    import matplotlib.pyplot as plt

    def net(H, seed, err0, err95):
        at = {str(f): err0 for f in P.FRACTIONS}
        at["95"] = err95
        return {"H": H, "seed": seed, "error_at": {k: dict(at) for k in P.KINDS}}
    rec = {"metrics": {"models": [net(1200, 0, 0.010, 0.011), net(1200, 1, 0.012, 0.015),
                                  net(400, 0, 0.020, 0.040), net(400, 1, 0.022, 0.042)]}}
    header, rows = P.table2_rows(rec, 400)
    assert header[2] == "ours 2×1200: SNR" and header[-3] == "ours 2×400: SNR"
    assert header[-1] == "2×400: random"  # both widths by SNR, |μ| and at random
    row95 = rows[list(P.FRACTIONS).index(95)]
    assert row95[2] == "1.30 ± 0.28%" and row95[-3] == "4.10 ± 0.14%"
    line = P.gap_line(rec, 95)
    assert "+0.20 ± 0.14 pp" in line and "+0.10, +0.30" in line and "paper: +0.05 pp" in line
    for m, p in zip(rec["metrics"]["models"], (0.5, 1e-11, 0.0004, 0.01)):
        m["mcnemar_snr_vs_magnitude"] = {"95": {"only_snr_wrong": 1, "only_magnitude_wrong": 2,
                                                "p": p}}
    assert [r[-1] for r in P.mcnemar_rows(rec)[1]] == ["0.500", "<0.001", "<0.001", "0.010"]
    fig = P.curves_figure(rec)
    # one panel per width, then random removal; each width's legend counts its own seeds
    assert [a.get_title().split(":")[0] for a in fig.axes[:2]] == ["2×1200", "2×400"]
    assert len(fig.axes) == 3
    assert "2×400 (open: mean of 2 seeds)" in str(fig.axes[1].get_legend_handles_labels())
    assert "2×1200 (open: mean of 2 seeds)" in str(fig.axes[0].get_legend_handles_labels())
    plt.close(fig)


def test_missing_results_are_shown_as_pending_not_invented(capsys):
    """Without training, a notebook shows what is missing: Table 1 rows without a number, no
    pruning, no OOD table, no reported bandit runs, and a notice that says what to run."""
    cfgs = {m: RunConfig(method=m, H=20, epochs=5) for m in T.METHODS}
    for m, cfg in cfgs.items():
        _sweep(f"{m}_h20", [_trial(cfg, 0.02, 5)], {"config": {**cfg.__dict__}, "epochs": 5})
    rec = T.build((20, 40), {20: (0, 1), 40: (0,)}, [], train=False, base_H=20)
    rows = rec["metrics"]["rows"]
    assert len(rows) == 8 and all(r["mean"] is None and r["test_error"] == [] for r in rows)
    assert rows[0]["pending_seeds"] == [0, 1] and rows[0]["diff_pp"] is None
    assert "not run yet" in T.table_rows(rec)[1][0]
    assert P.build(H.get_profile("04_pruning", "smoke"), train=False) is None  # no checkpoints
    prof = H.get_profile("05_uncertainty", "smoke")
    assert U.build_ood(prof, train=False) is None
    from helpers import bandit as B
    assert B.ensure("smoke", train=False) == (None, {})
    assert H.pending(None, "the runs", "make x") and "NOT COMPUTED YET: the runs" in capsys.readouterr().out
    assert not H.pending({"a": 1}, "the runs", "make x") and capsys.readouterr().out == ""


def test_orderings_are_two_sided_paired_tests_with_holm_per_width():
    def r(key, H, tests, seeds=None):
        import statistics
        return {"key": key, "H": H, "label": key, "seeds": list(seeds or range(len(tests))),
                "test_error": tests, "mean": statistics.fmean(tests) if tests else None,
                "sd": statistics.stdev(tests) if len(tests) > 1 else None}
    rows = [r("bbb_mixture", 400, [0.0140, 0.0142, 0.0144, 0.0141, 0.0143]),
            r("bbb_gaussian", 400, [0.0170, 0.0171, 0.0172, 0.0170, 0.0173]),
            r("sgd", 400, [0.0130, 0.0150, 0.0170, 0.0140, 0.0160]),
            r("dropout", 400, [0.0135, 0.0136, 0.0137, 0.0135, 0.0138]),
            r("bbb_mixture", 800, []), r("sgd", 800, [0.016]),
            r("bbb_mixture", 1200, [0.0145]), r("sgd", 1200, [0.0134, 0.0131, 0.0134]),
            r("dropout", 1200, [0.0150, 0.0151, 0.0149], seeds=[0, 1, 2]),
            r("bbb_gaussian", 1200, [0.0150, 0.0152], seeds=[3, 4])]
    res = T.analysis(rows)
    w400 = res["widths"]["400"]["orderings"]
    assert w400["bbb_mixture < bbb_gaussian"]["verdict"] == "holds"  # large, steady difference
    assert w400["bbb_mixture < bbb_gaussian"]["family_size"] == 3
    assert w400["bbb_mixture < sgd"]["verdict"] == "not resolved at 5 seeds"  # SGD's spread
    assert w400["dropout < sgd"]["verdict"] == "not resolved at 5 seeds"
    p = w400["bbb_mixture < bbb_gaussian"]
    assert p["p_holm"] >= p["p"] and p["diff_pp"] < 0 and p["seeds"] == [0, 1, 2, 3, 4]
    assert res["widths"]["400"]["comparable"]["verdict"] == "comparable"  # within 0.1 pp
    # pairs by seed: the 2x1200 Gaussian row shares no seed with the mixture row
    w1200 = res["widths"]["1200"]["orderings"]
    assert w1200["bbb_mixture < bbb_gaussian"]["verdict"] == "not measured yet"
    assert w1200["bbb_mixture < sgd"]["verdict"] == "not resolved at 1 seed"
    assert w1200["dropout < sgd"]["verdict"] == "reversed"  # dropout above SGD on every seed
    # the untestable claims still count in the family: Holm multiplies by 3, not 1
    assert w1200["dropout < sgd"]["p_holm"] == pytest.approx(3 * w1200["dropout < sgd"]["p"])
    assert w1200["bbb_mixture < bbb_gaussian"]["family_size"] == 3
    lines = T.orderings({"metrics": {"rows": rows}})
    assert lines[0].startswith("2×400: the scale mixture beats the Gaussian prior: holds")
    assert "Holm over 3" in lines[0] and "sign test p = 0.062" in lines[0]
    assert "BBB (scale mixture) beats SGD: not resolved at 5 seeds" in lines[1]
    assert any(x.startswith("2×800") and "not measured yet" in x for x in lines)
    assert any("2×1200: BBB (scale mixture) beats SGD: not resolved at 1 seed" in x for x in lines)
    # the words never claim more than the test: no "holds" without a significant Holm p
    for w in res["widths"].values():
        for c in w["orderings"].values():
            if c["verdict"] in ("holds", "reversed"):
                assert c["p_holm"] < T.ALPHA


def test_table1_verdicts_use_the_plans_alpha_family_and_margin():
    from helpers import analysis_plan
    plan = analysis_plan.load()
    assert plan["tests"]["alpha"] == T.ALPHA
    assert plan["tests"]["orderings"]["family_per_width"] == [f"{a} < {b}" for a, b in T.FAMILY]
    a, b, margin = T.COMPARABLE
    assert plan["tests"]["comparability"]["pair"] == f"{a} vs {b}"
    assert plan["tests"]["comparability"]["margin_pp"] == pytest.approx(100 * margin)


def test_ood_training_lanes_must_name_pairs_of_the_profile():
    """A worker's share (tools/ood_table.py --train-only --lane) is checked before any training."""
    prof = H.get_profile("05_uncertainty", "smoke")
    with pytest.raises(ValueError, match="not \\(training set, seed\\) pairs"):
        U.train_ood_networks(prof, [("MNIST", 99)])


def test_alternatives_training_lanes_must_name_reported_seeds():
    prof = H.get_profile("06_alternatives", "smoke")
    with pytest.raises(ValueError, match="not reported seeds"):
        A.train_networks(prof, [7])


def test_a_complete_comparison_is_read_back_not_rewritten():
    """Reading notebook 06's results back keeps the record of the run that made them."""
    prof = H.get_profile("06_alternatives", "smoke")
    rows = [{"method": m, "seed": s} for s in prof.seeds for m in A.METHODS]
    path = H.save_results("06_alternatives", "summary", config={}, metrics={"per_seed": rows},
                          profile="smoke", seed=list(prof.seeds), wall_s=123.0)
    before = path.read_text()
    assert A.build(prof, train=False)["wall_s"] == 123.0
    assert path.read_text() == before


def test_complete_ood_results_are_read_back_not_rewritten():
    """Notebook 05 reading its committed results back leaves every results file as it was."""
    prof = H.get_profile("05_uncertainty", "smoke")
    rows = [{"data": d, "kind": k, "seed": s, "train_wall_s": 1.0,
             **{m: 0.5 for m in U.METRICS}}
            for d, seeds in prof.seeds.items() for s in seeds for k in U.KINDS]
    U._save_ood(rows, prof, "05_uncertainty")
    for d in prof.seeds:
        for k in U.KINDS:
            H.save_results("05_uncertainty", f"{k}_{d.lower()}", config={}, metrics={},
                           profile="smoke", seed=0)
    files = sorted((H.results_dir() / "05_uncertainty").glob("*.json"))
    before = [f.read_text() for f in files]
    assert U.build_ood(prof, train=False)["metrics"]["rows"] == rows
    assert [f.read_text() for f in files] == before


def test_training_minutes_count_map_once_and_keep_reused_networks_apart():
    rows = [{"method": "map", "seed": 0, "train_s": 60.0},
            {"method": "ensemble", "seed": 0, "train_s": 300.0},
            {"method": "ivon", "seed": 0, "train_s": 120.0},
            {"method": next(iter(A.LAPLACE)), "seed": 0, "train_s": 90.0},
            {"method": "bbb", "seed": 0, "train_s": 600.0}]
    own, reused = A.training_minutes({"metrics": {"per_seed": rows}})
    assert (own, reused) == (7.5, 10.0)


def test_pruning_reuses_its_results_only_while_they_prune_table1s_current_networks(shared_data):
    """snr.json is reused while its networks are the ones Table 1 reports; after Table 1's
    recipe changes it is recomputed (here: no checkpoint, so nothing to prune: None)."""
    cfg = RunConfig(method="bbb_mixture", H=50, epochs=2, mu_init=0.1)
    H.save_results("01_mnist_classification", f"runs/{cfg.name}", config={**cfg.__dict__},
                   metrics={}, profile="smoke", seed=0)
    H.save_results("01_mnist_classification", "table1", config={}, profile="smoke", seed=0,
                   metrics={"rows": [{"key": "bbb_mixture", "H": 50, "runs": [cfg.name],
                                      "seeds": [0]}]})
    prof = H.get_profile("04_pruning", "smoke")
    for name, reused in ((cfg.name, True), ("an_older_recipe", False)):
        H.save_results("04_pruning", "snr", config={}, profile="smoke", seed=0,
                       metrics={"models": [{"name": name}], "complete": True})
        rec = P.build(prof, train=False, progress_fn=None)
        assert (rec is not None) == reused


def _table_inputs(H=20, seeds=(0, 1, 2)):
    """Sweeps and run records of a whole tiny table (nothing trained), two machines."""
    from dataclasses import replace
    sgd = RunConfig(method="sgd", H=H, epochs=45)
    bbb_warm = RunConfig(method="bbb_mixture", H=H, epochs=30, init_from="sgd", init_epochs=60)
    bbb_cold = RunConfig(method="bbb_mixture", H=H, epochs=60, mu_init=0.1)
    for name, cfg in ((f"sgd_h{H}", sgd), (f"dropout_h{H}", RunConfig(method="dropout", H=H,
                                                                       epochs=50)),
                      (f"bbb_gaussian_h{H}", RunConfig(method="bbb_gaussian", H=H, epochs=40))):
        _sweep(name, [_trial(cfg, 0.02, cfg.epochs)], {"config": {**cfg.__dict__},
                                                       "epochs": cfg.epochs})
    _sweep(f"bbb_mixture_h{H}", [_trial(bbb_warm, 0.015, 30), _trial(bbb_cold, 0.019, 55)],
           {"config": {**bbb_warm.__dict__}, "epochs": 30})
    for i, cell in enumerate(T.cells((H,), {}, base_H=H)):
        for seed in seeds:
            cfg = replace(cell.config, seed=seed)
            rec = {"config": {**cfg.__dict__}, "name": cfg.name,
                   "metrics": {"test_error": 0.015 + 0.001 * i + 0.0003 * seed,
                               "val_error": 0.016, "predictor": "network",
                               "train_wall_s": 10.0 + seed, "test_misclassified": [seed, i]},
                   "machine": {"cpu": "CPU A" if seed < 2 else "CPU B", "threads": 1},
                   "created": f"2026-01-0{seed + 1}T00:00:00Z"}
            T.run_path(cfg).parent.mkdir(parents=True, exist_ok=True)
            T.run_path(cfg).write_text(json.dumps(rec))
            if cfg.init_from:  # the warm start's source network: read, not tabulated
                T.run_path(cfg.init_source()).write_text(json.dumps(rec))
    return T.cells((H,), {}, base_H=H)


def test_table1_json_names_its_inputs_not_the_machine_that_aggregated_them():
    """Rewriting table1.json from the same run records gives the same bytes; the file lists the
    run files with their hashes and the runs' machines, and claims no machine or date itself."""
    _table_inputs()
    args = ((20,), {20: (0, 1, 2)}, {})
    rec = T.build(*args, train=False, base_H=20, profile="smoke", progress_fn=None)
    path = H.results_dir() / "01_mnist_classification" / "table1.json"
    first = path.read_bytes()
    for key in ("machine", "created", "wall_s", "device", "torch"):
        assert key not in rec, key
    prov = rec["provenance"]
    assert sorted(m["machine"]["cpu"] for m in prov["run_machines"]) == ["CPU A", "CPU B"]
    assert sum(m["runs"] for m in prov["run_machines"]) == len(prov["inputs"]["runs"]) == 18
    assert prov["runs_created"] == ["2026-01-01T00:00:00Z", "2026-01-03T00:00:00Z"]
    assert "sweep/bbb_mixture_h20.json" in prov["inputs"]["sweeps"]
    import time as _time
    _time.sleep(1.1)  # a clock that moved on must not change the file
    T.build(*args, train=False, base_H=20, profile="smoke", progress_fn=None)
    assert path.read_bytes() == first
    # a changed input changes the recorded hash
    name = next(iter(prov["inputs"]["runs"]))
    run = H.results_dir() / "01_mnist_classification" / "runs" / f"{name}.json"
    run.write_text(run.read_text().replace("CPU A", "CPU C"))
    again = T.build(*args, train=False, base_H=20, profile="smoke", progress_fn=None)
    assert again["provenance"]["inputs_sha256"] != prov["inputs_sha256"]
    assert again["metrics"]["analysis"]["widths"]["20"]["orderings"]["bbb_mixture < sgd"][
        "verdict"] == rec["metrics"]["analysis"]["widths"]["20"]["orderings"][
        "bbb_mixture < sgd"]["verdict"]
