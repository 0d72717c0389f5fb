"""Checks that need a CUDA GPU; skipped where there is none (CI has none).

Users batch-run the notebooks on other hardware (``DEVICE=None`` picks CUDA first) and the paper
protocol's campaign resumed runs across machines (GPU to CPU). These tests hold that path to the
CPU path's standards: BBB's torch path on CUDA tensors gives exact per-weight gradients; every
method of notebook 01 trains on CUDA through ``classification.run``; a run repeats bit for bit on
the same GPU; the deterministic network (method 'sgd', trained with Adam) on the GPU follows the
CPU run of the same seed; a checkpoint written on one device resumes on the other, exactly. Run them on a GPU machine with
``python -m pytest tests/test_cuda.py`` (``BBB_DATA_DIR`` pointing at the MNIST files). Their
runs so far: ``results/device_checks/`` (pytest's output and JUnit XML, the GPU in the file name).
"""
import math

import pytest
import torch

import helpers as H
from helpers import layers as L
from helpers import native
from helpers.classification import RunConfig, load_model, run
from helpers.train import fit

from test_correctness import _check, _design, _reference

pytestmark = pytest.mark.skipif(not torch.cuda.is_available(),
                                reason="needs a CUDA GPU (run on a GPU machine: "
                                       "python -m pytest tests/test_cuda.py)")
CUDA = torch.device("cuda")
MIXES = [(0.25, 1.0, math.exp(-6)), (0.5, math.exp(-1), math.exp(-7)),
         (0.75, math.exp(-2), math.exp(-8))]


@pytest.mark.parametrize("mix", MIXES, ids=["pi0.25", "pi0.5", "pi0.75"])
@pytest.mark.parametrize("dtype,rel", [(torch.float32, 1e-4), (torch.float64, 1e-10)],
                         ids=["float32", "float64"])
def test_mixture_gradient_per_weight_on_cuda(mix, dtype, rel):
    mu, rho = (t.to(CUDA) for t in _design(*mix, dtype=dtype))
    assert not native.usable(mu)  # CUDA tensors take the torch path
    torch.manual_seed(5)
    eps = L._noise(mu, 1)
    mu.requires_grad_(), rho.requires_grad_()
    torch.manual_seed(5)
    w, kl = L._SampleMC.apply(mu, rho, H.ScaleMixturePrior(*mix), 1)
    assert w.device.type == "cuda" and kl.device.type == "cuda"
    assert torch.equal(w, torch.addcmul(mu.detach(), L.softplus(rho.detach()), eps))
    kl.backward()
    g_mu, g_rho, terms_mu, terms, wide = _reference(mu.cpu(), rho.cpu(), eps.cpu(), *mix)
    assert wide.any() and (~wide).any()
    _check(mu.grad.cpu(), g_mu, terms_mu, rel)
    _check(rho.grad.cpu(), g_rho, terms, rel)


@pytest.fixture(scope="module")
def mnist_small(shared_data):
    kw = dict(data_dir_=shared_data, n_train=3000, n_val=1000, n_test=2000, download=False)
    return H.load_mnist(device="cpu", **kw), H.load_mnist(device=CUDA, **kw)


def _cfg(method, **kw):
    return RunConfig(method=method, H=64, epochs=2, lr=1e-3, seed=11, **kw)


@pytest.mark.parametrize("method", ["sgd", "dropout", "bbb_gaussian", "bbb_mixture"])
def test_every_method_trains_on_cuda_and_repeats_bit_for_bit(method, mnist_small, tmp_path,
                                                            monkeypatch):
    _, gpu = mnist_small
    runs = []
    for k in range(2):
        monkeypatch.setenv("BBB_CHECKPOINT_DIR", str(tmp_path / f"ck{k}"))
        model, rec = run(_cfg(method), gpu, notebook="cuda", eval_samples=4)
        assert all(p.device.type == "cuda" for p in model.parameters())
        runs.append(rec)
    m = runs[0]["metrics"]
    assert 0 <= m["test_error"] < 0.5, m  # chance is 0.9: two epochs on 3,000 images learn
    assert m["val_error"] < 0.5
    a, b = ([{k: v for k, v in row.items() if k != "wall_s"} for row in r["history"]] for r in runs)
    assert a == b  # same seed, same GPU: the same numbers
    for key in ("test_error", "val_error", "predictor", "test_misclassified"):
        assert runs[0]["metrics"][key] == runs[1]["metrics"][key]


def test_the_deterministic_net_on_cuda_follows_the_cpu_run_of_the_same_seed(mnist_small, tmp_path,
                                                                           monkeypatch):
    cpu, gpu = mnist_small  # the same images; init and data order come from the CPU generator
    rec = {}
    for name, data in (("cpu", cpu), ("cuda", gpu)):
        monkeypatch.setenv("BBB_CHECKPOINT_DIR", str(tmp_path / name))
        rec[name] = run(_cfg("sgd"), data, notebook="cuda")[1]
    assert len(rec["cpu"]["history"]) == len(rec["cuda"]["history"]) == 2
    for r_cpu, r_gpu in zip(rec["cpu"]["history"], rec["cuda"]["history"]):
        assert r_gpu["loss"] == pytest.approx(r_cpu["loss"], rel=1e-3)
        assert abs(r_gpu["val_error"] - r_cpu["val_error"]) <= 0.005  # at most 5 of 1,000 images
    assert abs(rec["cuda"]["metrics"]["test_error"] - rec["cpu"]["metrics"]["test_error"]) <= 0.005


class _Stop(Exception):
    pass


def _recorder(rows, stop_at=None):
    def on_epoch(row, model):
        rows.append(dict(row))
        if row["epoch"] == stop_at:
            raise _Stop
    return on_epoch


@pytest.mark.parametrize("first,then", [("cuda", "cpu"), ("cpu", "cuda")])
def test_a_bbb_checkpoint_resumes_on_the_other_device(first, then, mnist_small, tmp_path):
    data = dict(zip(("cpu", "cuda"), mnist_small))
    dev = {"cpu": torch.device("cpu"), "cuda": CUDA}
    ck = tmp_path / "run.pt"
    kw = dict(epochs=3, lr=1e-3, checkpoint=ck, checkpoint_every=1, seed=3, eval_sets=("val",))
    first_rows, later_rows = [], []

    def net():
        torch.manual_seed(3)
        return H.BayesMLP(784, (32, 32), 10, prior=H.ScaleMixturePrior(0.5, 1.0, math.exp(-6)))

    with pytest.raises(_Stop):  # one epoch on the first device, checkpointed, then "killed"
        fit(net().to(dev[first]), data[first], on_epoch=_recorder(first_rows, stop_at=1), **kw)
    saved = H.load_checkpoint(ck)["model"]
    # loading alone (no epoch left to train) puts the first device's weights, bit for bit, on the other
    loaded = net().to(dev[then])
    assert fit(loaded, data[then], **{**kw, "epochs": 1}) == first_rows
    for name, value in loaded.state_dict().items():
        assert value.device.type == dev[then].type and torch.equal(value.cpu(), saved[name].cpu())
    hist = fit(net().to(dev[then]), data[then], on_epoch=_recorder(later_rows), **kw)
    assert hist[0] == first_rows[0]  # epoch 1 (its wall time too) comes from the checkpoint
    assert [r["epoch"] for r in later_rows] == [2, 3]  # only epochs 2 and 3 trained here
    assert hist[-1]["val_error"] < 0.5 and math.isfinite(hist[-1]["loss"])
    assert int(H.load_checkpoint(ck)["epoch"]) == 3


def test_a_model_trained_on_cuda_predicts_the_same_on_the_cpu(mnist_small, tmp_path, monkeypatch):
    cpu, gpu = mnist_small
    monkeypatch.setenv("BBB_CHECKPOINT_DIR", str(tmp_path))
    cfg = _cfg("bbb_mixture")
    model, rec = run(cfg, gpu, notebook="cuda", eval_samples=4)
    back = load_model(cfg, notebook="cuda", device="cpu")
    with H.sampling(model, False), H.sampling(back, False), torch.no_grad():
        p_gpu = torch.softmax(model(gpu.x_test), -1).cpu()
        p_cpu = torch.softmax(back(cpu.x_test), -1)
    assert torch.allclose(p_gpu, p_cpu, atol=1e-4)
    err = H.evaluate_error(back, cpu.x_test, cpu.y_test)  # a borderline image may flip
    assert abs(err - rec["metrics"]["test_error_mean_weights"]) <= 0.001
