"""benchmarks/: every benchmark runs in its quick mode and writes the schema its results file
promises, and the helpers row of the step benchmark is a step of ``helpers.fit`` (so the
benchmark follows the training loop instead of rotting beside it)."""
import importlib.util
import json
import math
import subprocess
import sys
from pathlib import Path

import pytest
import torch

import helpers as H

ROOT = Path(__file__).resolve().parent.parent
BENCH = ROOT / "benchmarks"


def _load(name):
    spec = importlib.util.spec_from_file_location(f"bench_{name}", BENCH / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _run(script, *args, timeout=240):
    proc = subprocess.run([sys.executable, str(BENCH / script), *args], capture_output=True,
                          text=True, timeout=timeout, cwd=ROOT)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-3000:]
    return proc.stdout


def test_step_benchmark_quick_mode_covers_every_row(tmp_path):
    bench = _load("bench_step")
    out = tmp_path / "step.json"
    stdout = _run("bench_step.py", "--quick", "--out", str(out))
    rec = json.loads(out.read_text())
    assert rec["settings"]["quick"] is True and rec["settings"]["H"] == bench.QUICK["H"]
    assert len(rec["machine"]["load_avg_before"]) == 3
    assert "load average" in rec["machine"]["load_note"]
    assert rec["machine"]["threads"] == rec["settings"]["threads"] == bench.QUICK["threads"]
    rows = {(r["impl"], r["H"]): r for r in rec["rows"]}
    skipped = rec["skipped"]
    for impl in bench.IMPLS:  # every implementation has a row, or is a peer skipped with a reason
        if impl in skipped:
            assert impl in bench.PEER_MODULES and "not installed" in skipped[impl]
            assert f"skipped {impl}: not installed" in stdout
            continue
        for Hs in bench.QUICK["H"]:
            r = rows[(impl, Hs)]
            assert r["optimizer"] == bench.optimizer_of(impl) in rec["settings"]["optimizers"]
            for key in ("median_ms", "p25_ms", "p75_ms", "ratio", "ratio_vs_det_fused"):
                assert math.isfinite(r[key]) and r[key] > 0, (impl, key, r[key])
            assert r["p25_ms"] <= r["median_ms"] <= r["p75_ms"]
            measured = impl in bench.QUICK["memory"]
            assert (r["peak_mb"] is not None) == measured, (impl, r["peak_mb"])
            if measured:
                assert math.isfinite(r["peak_mb"]) and r["peak_mb"] >= 0
    assert rows[("det", bench.QUICK["H"][0])]["ratio"] == 1.0
    assert rows[("det_fused", bench.QUICK["H"][0])]["ratio_vs_det_fused"] == 1.0
    assert set(rec["implementations"]) == set(bench.IMPLS)
    assert {g["estimator"] for g in rec["grad_variance"]} == {"reparam", "lrt", "flipout"}
    assert all(g["mean_var_grad_mu"] > 0 for g in rec["grad_variance"])


def test_step_benchmark_refuses_bad_settings(tmp_path):
    proc = subprocess.run([sys.executable, str(BENCH / "bench_step.py"), "--quick", "--impls",
                           "helpers_paper", "--out", str(tmp_path / "x.json")],
                          capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert proc.returncode == 2 and "need both 'det' and 'det_fused'" in proc.stderr
    with pytest.raises(ValueError, match="unknown implementation"):
        _load("bench_step").build("helpers_papr", 8, torch.device("cpu"))


@pytest.mark.parametrize("impl", ["helpers_paper", "helpers_paper_torch",
                                  "helpers_closed_form"])
def test_the_helpers_row_is_one_step_of_fit(impl, monkeypatch):
    """Same model, optimiser, seed and minibatch: the benchmark's step and ``fit`` on a training
    set of one minibatch leave the same parameters (float rounding aside; fit visits the
    minibatch in its own order, which weight noise does not see)."""
    bench = _load("bench_step")
    if impl == "helpers_paper_torch":
        monkeypatch.setenv("BBB_NATIVE", "0")
    x, y = bench.make_data(torch.device("cpu"))
    xb, yb = x[:bench.BATCH], y[:bench.BATCH]
    torch.manual_seed(0)
    a = bench.helpers_model(impl, 24)
    b = bench.helpers_model(impl, 24)
    b.load_state_dict(a.state_dict())
    start = {k: v.clone() for k, v in a.state_dict().items()}
    torch.manual_seed(1)
    loss = bench.helpers_step(a, H.make_optimizer(a.parameters(), "adam", 1e-3),
                              kl_weight=1.0)(xb, yb)
    torch.manual_seed(1)  # fit with one minibatch per epoch: M = 1, so the KL weight is 1
    data = type("OneBatch", (), {"x_train": xb, "y_train": yb})()
    hist = H.fit(b, data, epochs=1, lr=1e-3, batch_size=bench.BATCH, eval_sets=(), seed=0)
    assert math.isclose(hist[0]["loss"], loss, rel_tol=1e-5)
    for name, pa in a.named_parameters():
        assert not torch.equal(pa, start[name]), f"{name} did not move: nothing was compared"
        # Adam's first step moves every parameter by about lr = 1e-3 whatever the gradient's
        # size, so a gradient within rounding of zero may move by a few 1e-6 more or less in one
        # of the two (seen on an AMD EPYC: 1 of 18,816 weights by 1.5e-6); a different loss,
        # KL weight or noise would move many parameters by ~1e-3
        assert torch.allclose(pa, dict(b.named_parameters())[name], rtol=0, atol=1e-5), name


def test_bandit_benchmark_quick_mode(tmp_path):
    out = tmp_path / "bandit.json"
    _run("bench_bandit.py", "--quick", "--out", str(out))
    rec = json.loads(out.read_text())
    bench = _load("bench_bandit")
    assert [r["impl"] for r in rec["rows"]] == bench.IMPLS and rec["settings"]["quick"] is True
    for r in rec["rows"]:
        assert math.isfinite(r["ratio_vs_eager_stacked"]) and r["median_ms"] > 0
    assert len(rec["machine"]["load_avg_before"]) == 3
    assert "load average" in rec["machine"]["load_note"]


def test_accuracy_benchmark_quick_mode(tmp_path, shared_data, monkeypatch):
    monkeypatch.setenv("BBB_DATA_DIR", str(shared_data))
    out = tmp_path / "accuracy.json"
    _run("accuracy_fast_vs_reference.py", "--quick", "--out", str(out))
    rec = json.loads(out.read_text())
    assert rec["quick"] is True and rec["n_train"] == 2000 and set(rec["runs"]) == {"fast",
                                                                                   "reference"}
    for run in rec["runs"].values():
        assert 0 <= run["test_error_posterior_mean"] <= 1 and len(run["history"]) == 1
    assert math.isfinite(rec["abs_difference_pp"])


def test_step_profile_quick_mode_splits_the_whole_step(tmp_path):
    """profile_step.py: the parts of each step add up to the step, the deterministic step spends
    nothing in the BBB kernels, and the BBB step spends time in them when they are usable."""
    out = tmp_path / "profile.json"
    _run("profile_step.py", "--quick", "--out", str(out))
    rec = json.loads(out.read_text())
    rows = rec["rows"]
    for key in ("det_fused_h64", "helpers_paper_h64"):
        share = rows[key]["share"]
        assert set(share) == {"kernel_forward", "kernel_backward", "optimizer", "rest"}
        assert math.isclose(sum(share.values()), 1.0, rel_tol=1e-9)
        assert all(v >= 0 for p, v in share.items() if p != "rest")
    det, bbb = rows["det_fused_h64"]["mean_ms"], rows["helpers_paper_h64"]["mean_ms"]
    assert det["kernel_forward"] == 0.0 and det["kernel_backward"] == 0.0 and det["optimizer"] > 0
    if rec["machine"]["native_kernels"]:
        assert bbb["kernel_forward"] > 0 and bbb["kernel_backward"] > 0
    over = rows["overhead_h64"]
    assert over["ratio"] > 0 and math.isfinite(over["overhead_ms"])


def test_kernel_overhead_benchmark_quick_mode(tmp_path):
    """bench_kernel_overhead.py: baseline and current kernels, each in its own subprocess with
    its own helpers package, Adam and SGD rows for both, and the cut between them."""
    out = tmp_path / "kernel_overhead.json"
    _run("bench_kernel_overhead.py", "--quick", "--out", str(out))
    rec = json.loads(out.read_text())
    bench = _load("bench_kernel_overhead")
    assert rec["settings"]["quick"] is True and rec["settings"]["H"] == bench.QUICK["H"]
    assert len(rec["machine"]["load_avg_before"]) == 3 and "load average" in rec["machine"][
        "load_note"]
    assert set(rec["versions"]) == {"baseline", "current"}
    if rec["notes"] and "unavailable" in rec["notes"][0]:  # a shallow clone: current vs current
        assert rec["versions"]["baseline"]["tree"] == "."
    else:
        assert rec["versions"]["baseline"]["tree"].endswith(f"baseline_{bench.BASELINE}")
    rows = {(r["H"], r["version"], r["optimizer"]): r for r in rec["rows"]}
    for Hs in bench.QUICK["H"]:
        for version in ("baseline", "current"):
            for opt in ("adam", "sgd"):
                r = rows[(Hs, version, opt)]
                assert r["det_ms"] > 0 and r["bbb_ms"] > 0 and math.isfinite(r["overhead"])
                assert len(r["round_overheads"]) == bench.QUICK["rounds"]
    assert {(c["H"], c["optimizer"]) for c in rec["cut"]} == {(h, o) for h in bench.QUICK["H"]
                                                             for o in ("adam", "sgd")}
    for c in rec["cut"]:
        assert c["cut_percent"] is None or math.isfinite(c["cut_percent"])


def test_epoch_times_quick_mode(tmp_path, shared_data, monkeypatch):
    """benchmarks/epoch_times.py: seconds per epoch of each method, from a warm-up-free mean."""
    monkeypatch.setenv("BBB_DATA_DIR", str(shared_data))
    out = tmp_path / "epoch_times.json"
    _run("epoch_times.py", "--quick", "--out", str(out))
    rec = json.loads(out.read_text())
    bench = _load("epoch_times")
    assert {(r["method"], r["H"]) for r in rec["rows"]} == {(m, h) for m in bench.METHODS
                                                           for h in bench.QUICK["H"]}
    assert all(r["s_per_epoch"] > 0 and r["epochs_timed"] == bench.QUICK["epochs"] - 1
               for r in rec["rows"])
