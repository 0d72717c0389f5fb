"""Notebook 04's plan v2 (helpers.pruning_plan): the plan, deterministic magnitude pruning, the
claims' tests on known values, and one network trained, pruned and recorded end to end."""
import json

import pytest
import torch

from helpers import pruning
from helpers import pruning_plan as P
from helpers.analysis_plan import plan_precedes
from helpers.layers import mlp
from helpers.utils import PROJECT_ROOT


def test_plan_is_valid_committed_and_first():
    assert P.validate(P.plan()) == []
    committed = json.loads((PROJECT_ROOT / P.PLAN).read_text())
    assert committed == json.loads(json.dumps(P.plan())), \
        "plan_v2.json differs from helpers.pruning_plan.plan(): a change is a new version"
    assert plan_precedes(PROJECT_ROOT, P.PLAN) == []
    v3 = json.loads((PROJECT_ROOT / P.PLAN_V3).read_text())
    assert v3 == P.plan_v3() and P.validate(v3) == [] and v3["extends"] == str(P.PLAN)
    assert plan_precedes(PROJECT_ROOT, P.PLAN_V3) == []
    bad = P.plan()
    bad["tests"]["families"]["x"] = ["bbb_snr < lasso at 95%", "bbb_snr < sgd_magnitude at 90%"]
    assert len(P.validate(bad)) == 2
    assert "x" not in P.FAMILIES  # the plan is a copy


def test_magnitude_pruning_of_a_deterministic_network():
    torch.manual_seed(0)
    net = mlp(6, (5,), 3)
    total = sum(layer.weight.numel() for layer in pruning.weight_layers(net))
    assert total == 6 * 5 + 5 * 3
    pruned, kept = pruning.prune(net, 0.6, "magnitude")
    w = torch.cat([layer.weight.flatten() for layer in pruning.weight_layers(pruned)])
    orig = torch.cat([layer.weight.flatten() for layer in pruning.weight_layers(net)]).detach()
    assert kept == total - round(0.6 * total) == int((w != 0).sum())
    # the kept weights are the largest in magnitude, over both layers together
    assert orig.abs()[w != 0].min() >= orig.abs()[w == 0].max()
    assert all(layer.bias.ne(0).all() for layer in pruning.weight_layers(pruned))  # biases kept
    assert net[0].weight.ne(0).all()  # the original is untouched
    with pytest.raises(ValueError, match="no posterior width"):
        pruning.scores(net, "snr")


def _analysis(errors):
    return {"error_at": {k: {str(f): v for f, v in zip(pruning.FRACTIONS, e)}
                         for k, e in errors.items()}}


def test_claims_are_paired_by_seed_and_tested():
    fr = len(pruning.FRACTIONS)
    # BBB-SNR clearly below SGD-magnitude at every seed; against BBB |mu| identical values
    found = {"bbb": {s: _analysis({"snr": [0.01 + 0.001 * s] * fr,
                                   "magnitude": [0.01 + 0.001 * s] * fr}) for s in P.SEEDS},
             "sgd": {s: _analysis({"magnitude": [0.01 + 0.001 * s] + [0.2 + 0.01 * s] * (fr - 1)})
                     for s in P.SEEDS}}
    nets = [{"role": "sgd", "seed": 0, "name": "x"}, {"role": "dropout", "seed": 0, "name": "y"},
            {"role": "start", "seed": 0, "name": "z"}]
    s = P.summary(found=found, networks=nets)
    assert s["missing"] == ["y"]  # plan v3's network is not plan v2's
    full = P.summary(found=found, networks=nets[:1])
    assert not full["interim"]
    fam = s["families"]["error after pruning"]
    assert fam["bbb_snr < sgd_magnitude at 95%"]["verdict"] == "holds"
    assert fam["bbb_snr < sgd_magnitude at 95%"]["seeds"] == [0, 1, 2]
    assert fam["bbb_snr < bbb_magnitude at 98%"]["verdict"].startswith("not resolved")
    assert fam["bbb_snr < dropout_magnitude at 95%"]["verdict"] == "not measured yet"
    added = s["families"]["error added by pruning"]["bbb_snr < sgd_magnitude at 98%"]
    assert added["lhs"] == [0.0, 0.0, 0.0] and added["verdict"] == "holds"
    assert s["interim"] and s["missing"] == ["y"]
    assert s["table"]["sgd_magnitude"]["95"] == pytest.approx({0: 0.2, 1: 0.21, 2: 0.22})
    # what the notebook shows, from the summary as stored (JSON: seed keys become strings)
    s = json.loads(json.dumps(s))
    header, rows = P.table_rows(s)
    row95 = next(r for r in rows if r[0] == "95%")
    assert row95[header.index("plain, |w|")] == "21.00 ± 1.00%"
    assert rows[-1][header.index("dropout, |w|")] == "none"
    _, trows = P.test_rows(s, ("error after pruning",))
    assert len(trows) == 6
    sgd95 = next(r for r in trows if r[1] == "BBB, SNR |μ|/σ < plain, |w|, 95 % removed")
    assert sgd95[3].startswith("s0: 1.00 vs 20.00") and sgd95[2] == "3"
    # no verdict word while the plan's networks are incomplete (no interim look declared)
    assert sgd95[-1] == "pending (1 networks to train)"
    assert next(r for r in trows if "dropout" in r[1])[-1] == "not measured yet"
    assert any("[exploratory]" in r[1] for r in trows)
    assert "not complete" in P.standing_text(s) and "holds" not in P.standing_text(s)
    full = json.loads(json.dumps(full))
    assert "holds against plain, |w| (95 % and 98 % removed)" in P.standing_text(full)
    assert "|t| > 10.9 (df 2)" in P.needs_text(full)  # t(0.05 / 12, df 2) = 10.89
    reading = P.reading_text(full)
    assert "holds against plain, |w| (95 % and 98 % removed); not measured yet against " \
           "dropout, |w| (95 % and 98 % removed)." in reading
    assert "- **Does σ help?**" in reading  # SNR against |mu|: its one place
    assert P.reading_text(s) == P.standing_text(s)  # interim: no reading, no verdict


def test_one_network_trained_pruned_and_recorded(shared_data, monkeypatch):
    from helpers.classification import RunConfig
    from helpers.data import load_mnist
    monkeypatch.setenv("BBB_DATA_DIR", str(shared_data))
    data = load_mnist(n_train=600, n_test=300)
    cfg = RunConfig(method="sgd", H=16, epochs=2, lr=1e-3, seed=0)
    job = {"role": "sgd", "H": 16, "seed": 0, "name": cfg.name, "cfg": cfg, "adopted": None}
    rec = P.run_job(job, data, progress_fn=None)
    saved = json.loads(P.record_path(cfg.name).read_text())
    assert saved == json.loads(json.dumps(rec))
    e = saved["analysis"]["error_at"]
    assert set(e) == {"magnitude", "random"} and e["magnitude"]["100"] > 0.5
    assert e["magnitude"]["0"] == pytest.approx(saved["trained_here"]["test_error"], abs=1e-6)
    assert saved["table1_record"] is None and saved["code"]["commit"]
