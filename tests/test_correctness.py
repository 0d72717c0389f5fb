"""Correctness and bad input: one regression test (or more) per finding of the independent test.

Gradients are checked per weight against a float64 autograd reference built from
``torch.distributions``: relative error <= 1e-4 in float32 and <= 1e-10 in float64 wherever the
true gradient is not itself tiny (not the result of a cancellation of much larger terms).
"""
import io
import json
import math
import re
import shutil
from pathlib import Path

import numpy as np
import pytest
import torch
from torch import distributions as D
from torch.nn import functional as F

import helpers as H
from helpers import bandit as B
from helpers import layers as L
from helpers import native
from helpers.data import DataError
from helpers.train import CheckpointError

ROOT = Path(__file__).resolve().parent.parent
needs_native = pytest.mark.skipif(native.library() is None, reason="no C compiler here")
MIXTURES = [(pi, s1, s2) for pi in (0.25, 0.5, 0.75) for s1 in (1.0, math.exp(-1), math.exp(-2))
            for s2 in (math.exp(-6), math.exp(-7), math.exp(-8))]
mixture_ids = [f"pi{p:g}-s1e{math.log(a):.0f}-s2e{math.log(b):.0f}" for p, a, b in MIXTURES]


# ---- 1, 2 and 12: the scale-mixture gradient, per weight, on every path ----

def _crossover(pi, s1, s2):
    """|w| where both components of the mixture have the same density."""
    ka, kb = 0.5 / s1**2, 0.5 / s2**2
    gap = math.log((1 - pi) / pi) + math.log(s1 / s2)
    return math.sqrt(gap / (kb - ka))


def _design(pi, s1, s2, n=2000, dtype=torch.float32, seed=0):
    """mu spread (log-uniformly) from deep inside the narrow component to far inside the wide one,
    tiny sigma so every weight stays in its component; rho from -14 to -6."""
    g = torch.Generator().manual_seed(seed)
    c = _crossover(pi, s1, s2)
    mag = torch.exp(torch.empty(n, dtype=torch.float64).uniform_(math.log(c / 20), math.log(2.0),
                                                                  generator=g))
    sign = torch.where(torch.rand(n, generator=g) < 0.5, -1.0, 1.0).double()
    rho = torch.empty(n, dtype=torch.float64).uniform_(-14.0, -6.0, generator=g)
    rho[: n // 4] = -14.0
    return (mag * sign).to(dtype), rho.to(dtype)


def _reference(mu, rho, eps, pi, s1, s2, kl_scale=1.0):
    """float64 autograd: d/d(mu, rho) of kl_scale * [log q(w) - log p(w)], w = mu + sigma eps, and
    the scales of the terms that cancel in each (to tell where the true gradient is itself tiny:
    for mu, w = mu + sigma eps near 0; for rho, the prior's pull against -1 / sigma)."""
    mu = mu.detach().double().requires_grad_()
    rho = rho.detach().double().requires_grad_()
    sigma = F.softplus(rho)
    w = mu + sigma * eps.double()
    prior = D.MixtureSameFamily(D.Categorical(probs=torch.tensor([pi, 1 - pi], dtype=torch.float64)),
                                D.Normal(torch.zeros(2, dtype=torch.float64),
                                         torch.tensor([s1, s2], dtype=torch.float64)))
    # log q(w) = log N(eps; 0, 1) - log sigma (change of variables; written this way, autograd
    # does not subtract two terms of size eps / sigma that cancel exactly)
    log_q = D.Normal(0.0, 1.0).log_prob(eps.double()) - torch.log(sigma)
    kl = kl_scale * (log_q - prior.log_prob(w)).sum()
    kl.backward()
    with torch.no_grad():
        wd = w.detach().requires_grad_()
    lp = prior.log_prob(wd).sum()
    (dlogp,) = torch.autograd.grad(lp, wd)
    sg = torch.sigmoid(rho.detach())
    terms = (kl_scale * (dlogp * eps.double() * sg).abs() + kl_scale * (sg / sigma.detach()))
    wd = w.detach()
    spread = mu.detach().abs() + (sigma.detach() * eps.double()).abs()
    terms_mu = mu.grad.abs() * spread / wd.abs().clamp_min(1e-300)
    wide = wd.abs() > _crossover(pi, s1, s2)
    return mu.grad, rho.grad, terms_mu, terms, wide


def _check(got, ref, terms, rel):
    """Per-weight relative error <= rel where |ref| >= 1 % of its terms, absolute elsewhere."""
    got, ref = got.double(), ref.double()
    err = (got - ref).abs()
    strict = ref.abs() >= 0.01 * terms
    assert strict.float().mean() > 0.9
    worst = (err[strict] / ref[strict].abs()).max().item()
    assert worst <= rel, f"relative error {worst:.3g} > {rel:g}"
    assert (err[~strict] <= 100 * rel * terms[~strict]).all()


def _noise_of(mu, seed):
    torch.manual_seed(seed)
    if native.usable(mu):
        return native.normal(mu.shape, native.draw_seed())
    return L._noise(mu, 1)


@needs_native
@pytest.mark.parametrize("mix", MIXTURES, ids=mixture_ids)
def test_mixture_gradient_per_weight_c_kernels(mix):
    mu, rho = _design(*mix)
    eps = _noise_of(mu, 3)
    mu.requires_grad_(), rho.requires_grad_()
    torch.manual_seed(3)
    w, kl = L._NativeSample.apply(mu, rho, H.ScaleMixturePrior(*mix), 1, False, True)
    assert torch.allclose(w, mu.detach() + L.softplus(rho.detach()) * eps, rtol=1e-5, atol=1e-8)
    kl.backward()
    g_mu, g_rho, terms_mu, terms, wide = _reference(mu, rho, eps, *mix)
    assert wide.any() and (~wide).any()  # weights in both components
    _check(mu.grad, g_mu, terms_mu, 1e-4)
    _check(rho.grad, g_rho, terms, 1e-4)


@pytest.mark.parametrize("dtype,rel", [(torch.float32, 1e-4), (torch.float64, 1e-10)],
                         ids=["float32", "float64"])
@pytest.mark.parametrize("mix", MIXTURES, ids=mixture_ids)
def test_mixture_gradient_per_weight_torch_path(mix, dtype, rel, monkeypatch):
    monkeypatch.setattr(native, "library", lambda: None)  # BBB_NATIVE=0, CUDA, no compiler
    mu, rho = _design(*mix, dtype=dtype)
    eps = _noise_of(mu, 5)
    mu.requires_grad_(), rho.requires_grad_()
    torch.manual_seed(5)
    w, kl = L._SampleMC.apply(mu, rho, H.ScaleMixturePrior(*mix), 1)
    assert torch.equal(w, torch.addcmul(mu.detach(), L.softplus(rho.detach()), eps))
    kl.backward()
    g_mu, g_rho, terms_mu, terms, _ = _reference(mu, rho, eps, *mix)
    _check(mu.grad, g_mu, terms_mu, rel)
    _check(rho.grad, g_rho, terms, rel)


def _bandit_grads(mix, use_native, monkeypatch):
    """One update of a one-agent Bayesian bandit net; its gradient read back from Adam's first
    moment (m = (1 - beta1) g after the first step)."""
    if not use_native:
        monkeypatch.setattr(native, "library", lambda: None)
    torch.manual_seed(0)
    net = B.StackedNets(1, 1, 30, 20, -6.0, H.ScaleMixturePrior(*mix))
    assert net.native == use_native
    mu, rho = _design(*mix, n=net.mu.numel())
    net.mu.copy_(mu), net.rho.copy_(rho), net.sig.copy_(net.sigma())
    net.sample()
    x = torch.cat([torch.rand(1, 16, 30), torch.ones(1, 16, 1)], 2)
    net.update(x, torch.randn(1, 16), noise_sigma=1e6, kl_scale=1.0)  # data term ~1e-12
    c = (torch.tensor(1.0) - torch.tensor(net.betas[0])).item()
    return mu, rho, net.eps.clone(), net.bayes_adam[0] / c, net.bayes_adam[2] / c


@pytest.mark.parametrize("use_native", [True, False], ids=["c_kernel", "torch"])
@pytest.mark.parametrize("mix", MIXTURES[::4], ids=mixture_ids[::4])
def test_mixture_gradient_per_weight_bandit(mix, use_native, monkeypatch):
    if use_native and native.library() is None:
        pytest.skip("no C compiler here")
    mu, rho, eps, g_mu, g_rho = _bandit_grads(mix, use_native, monkeypatch)
    r_mu, r_rho, terms_mu, terms, wide = _reference(mu, rho, eps, *mix)
    assert wide.any() and (~wide).any()
    _check(g_mu, r_mu, terms_mu, 1e-4)
    _check(g_rho, r_rho, terms, 1e-4)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("path", ["c_kernels", "torch"])
def test_rho_gradient_finite_for_very_negative_rho(path, dtype, monkeypatch):
    if path == "c_kernels" and (dtype != torch.float32 or native.library() is None):
        pytest.skip("the C kernels cover float32 CPU tensors")
    if path == "torch":
        monkeypatch.setattr(native, "library", lambda: None)
    rho = torch.tensor([-90.0, -100.0, -200.0, -5.0], dtype=dtype, requires_grad=True)
    mu = torch.full((4,), 0.01, dtype=dtype, requires_grad=True)
    for prior, closed in ((H.ScaleMixturePrior(), False), (H.GaussianPrior(0.1), True)):
        layer = H.BayesLinear(2, 2, bias=False, prior=prior, kl="closed" if closed else "mc")
        w, kl = layer._sample(mu.view(2, 2), rho.view(2, 2), 1)
        assert torch.isfinite(kl)
        (w.sum() + kl).backward()
        assert torch.isfinite(rho.grad).all() and torch.isfinite(mu.grad).all()
        # d(-log sigma)/d rho = -sigmoid(rho) / softplus(rho) -> -1 as rho -> -inf
        assert rho.grad[:3].tolist() == pytest.approx([-1.0] * 3, rel=1e-6, abs=1e-6)
        rho.grad, mu.grad = None, None


def test_priors_keep_float64_constants_in_any_model():
    for model in (H.BayesMLP(3, (4,), 2).double(), H.BayesMLP(3, (4,), 2).double().float()):
        for m in model.modules():
            if isinstance(m, H.Prior):
                assert all(b.dtype == torch.float64 for b in m.buffers())
    prior = H.ScaleMixturePrior(0.5, 1.0, math.exp(-6)).double()
    assert prior._buf("sigma2") == math.exp(-6)  # exact, not rounded to float32
    w = torch.linspace(-0.5, 0.5, 101, dtype=torch.float64)
    ref = D.MixtureSameFamily(D.Categorical(probs=torch.tensor([0.5, 0.5], dtype=torch.float64)),
                              D.Normal(torch.zeros(2, dtype=torch.float64),
                                       torch.tensor([1.0, math.exp(-6)], dtype=torch.float64)))
    assert torch.allclose(prior.log_prob(w), ref.log_prob(w), rtol=1e-13, atol=0)
    assert prior.log_prob(w.float()).dtype == torch.float32


def test_sample_mc_supports_a_second_backward(monkeypatch):
    monkeypatch.setattr(native, "library", lambda: None)
    mu = torch.randn(5, 4, requires_grad=True)
    rho = torch.full((5, 4), -3.0, requires_grad=True)
    w, kl = L._SampleMC.apply(mu, rho, H.ScaleMixturePrior(), 2)
    loss = (w ** 2).sum() + kl
    loss.backward(retain_graph=True)
    first = (mu.grad.clone(), rho.grad.clone())
    mu.grad, rho.grad = None, None
    loss.backward()
    assert torch.equal(mu.grad, first[0]) and torch.equal(rho.grad, first[1])


# ---- 3: no process-wide floating-point mode change ----

def _subnormals_survive():
    tiny = 1e-39  # a float32 subnormal
    checks = {
        "torch main thread": (torch.tensor(tiny) * 1.0).item() != 0.0,
        "torch softplus(-88)": F.softplus(torch.tensor(-88.0)).item() > 0.0,
        "numpy": float(np.float32(tiny) * np.float32(1.0)) != 0.0,
        # 4M entries: split over torch's intra-op threads
        "torch intra-op threads": bool((torch.full((4_000_000,), tiny) * 1.0 != 0).all()),
    }
    return [k for k, ok in checks.items() if not ok]


@needs_native
def test_kernels_leave_the_floating_point_mode_alone():
    threads = torch.get_num_threads()
    torch.set_num_threads(2)
    try:
        layer = H.BayesLinear(784, 400)  # > 65,536 weights: the kernels use 2 threads
        layer(torch.randn(8, 784)).sum().backward()
        net = B.StackedNets(4, 1, 119, 100, -5.0, H.GaussianPrior(0.05))
        for _ in range(3):
            net.sample()
            net.update(torch.rand(4, 64, 120), torch.randn(4, 64), 1.0, 1e-3)
        assert _subnormals_survive() == []
        assert native.fp_mode_bits(2) == [0, 0]  # the kernels' own thread pool too
    finally:
        torch.set_num_threads(threads)


# ---- 4 and 5: data files are checked on every load ----

@pytest.fixture
def mnist_copy(shared_data, tmp_path):
    """A writable copy of the shared MNIST files."""
    dst = tmp_path / "MNIST" / "raw"
    shutil.copytree(shared_data / "MNIST" / "raw", dst)
    for f in dst.iterdir():
        f.chmod(0o644)
    return tmp_path


def _load(root):
    return H.load_images("MNIST", data_dir_=root, download=False)


def test_mnist_flipped_byte_is_a_clear_error(mnist_copy):
    f = mnist_copy / "MNIST" / "raw" / "train-images-idx3-ubyte"
    raw = bytearray(f.read_bytes())
    raw[100_000] ^= 0x01
    f.write_bytes(bytes(raw))
    with pytest.raises(DataError, match=r"train-images-idx3-ubyte.*(SHA-256|corrupt).*delete"):
        _load(mnist_copy)


def test_mnist_truncated_file_is_a_clear_error(mnist_copy):
    f = mnist_copy / "MNIST" / "raw" / "t10k-images-idx3-ubyte"
    f.write_bytes(f.read_bytes()[:-1000])
    with pytest.raises(DataError, match=r"t10k-images-idx3-ubyte is truncated"):
        _load(mnist_copy)


def test_mnist_swapped_file_is_a_clear_error(mnist_copy):
    raw = mnist_copy / "MNIST" / "raw"
    shutil.copy(raw / "t10k-labels-idx1-ubyte", raw / "train-labels-idx1-ubyte")
    with pytest.raises(DataError, match=r"train-labels-idx1-ubyte.*10,000 items.*test file"):
        _load(mnist_copy)


def test_mnist_label_out_of_range_is_a_clear_error(mnist_copy):
    f = mnist_copy / "MNIST" / "raw" / "train-labels-idx1-ubyte"
    raw = bytearray(f.read_bytes())
    raw[8 + 17] = 200
    f.write_bytes(bytes(raw))
    with pytest.raises(DataError, match=r"train-labels-idx1-ubyte holds label 200"):
        _load(mnist_copy)


@pytest.fixture
def mushroom_copy(shared_data, tmp_path):
    dst = tmp_path / "mushroom" / "agaricus-lepiota.data"
    dst.parent.mkdir()
    dst.write_bytes((shared_data / "mushroom" / "agaricus-lepiota.data").read_bytes())
    return dst


def _edit_row(path, number, fn):
    lines = path.read_text().splitlines()
    lines[number - 1] = fn(lines[number - 1])
    path.write_text("\n".join(lines) + "\n")


@pytest.mark.parametrize("edit,pattern", [
    (lambda r: "x" + r[1:], r"row 7: class 'x' is not 'e'"),
    (lambda r: r[:-1] + "q", r"row 7: habitat = 'q' is not one of"),
    (lambda r: r + ",a", r"row 7: 24 comma-separated values"),
])
def test_mushroom_schema_errors_name_the_row(mushroom_copy, edit, pattern):
    _edit_row(mushroom_copy, 7, edit)
    with pytest.raises(DataError, match=pattern):
        H.load_mushroom(mushroom_copy.parent.parent, download=False)


def test_mushroom_upper_case_file_is_refused(mushroom_copy):
    mushroom_copy.write_text(mushroom_copy.read_text().upper())
    with pytest.raises(DataError, match=r"row 1: class 'P' is not 'e'"):
        H.load_mushroom(mushroom_copy.parent.parent, download=False)


def test_mushroom_half_file_is_refused(mushroom_copy):
    text = mushroom_copy.read_text()
    mushroom_copy.write_text(text[: len(text) // 2].rsplit("\n", 1)[0] + "\n")
    with pytest.raises(DataError, match="differs from the published UCI file"):
        H.load_mushroom(mushroom_copy.parent.parent, download=False)
    x, p = H.load_mushroom(mushroom_copy.parent.parent, download=False, verify=False)
    assert len(x) < 8124  # on purpose: the user's own file


def test_interrupted_mushroom_download_leaves_nothing(tmp_path, monkeypatch):
    import urllib.request

    def half_then_fail(url, filename):
        Path(filename).write_text("p,x,s,n,t,p,f,c,n,k,e,e,s,s,w,w,p,w,o,p,k,s,u\n")
        raise ConnectionError("connection reset")
    monkeypatch.setattr(urllib.request, "urlretrieve", half_then_fail)
    with pytest.raises(FileNotFoundError, match="download failed"):
        H.load_mushroom(tmp_path)
    folder = tmp_path / "mushroom"
    assert not (folder / "agaricus-lepiota.data").exists() and list(folder.iterdir()) == []

    def wrong_file(url, filename):
        Path(filename).write_text("e,x,s,n,t,p,f,c,n,k,e,e,s,s,w,w,p,w,o,p,k,s,u\n")
    monkeypatch.setattr(urllib.request, "urlretrieve", wrong_file)
    with pytest.raises(DataError, match="nothing was written"):
        H.load_mushroom(tmp_path)
    assert list(folder.iterdir()) == []


# ---- 6, 7 and 8: fit validates its settings, its parameters and what it resumes ----

def _toy_data(n=256, d=6, classes=3, seed=0):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(n, d, generator=g)
    y = (x @ torch.randn(d, classes, generator=g)).argmax(1)
    return H.ImageData(x[:192], y[:192], x[192:224], y[192:224], x[224:], y[224:], name="toy")


@pytest.mark.parametrize("kw,pattern", [
    (dict(lr_decay=float("nan")), "lr_decay"), (dict(lr_decay=-0.5), "lr_decay"),
    (dict(lr_decay=0.0), "lr_decay"), (dict(lr_decay=1.5), "lr_decay"),
    (dict(lr=float("inf")), "lr"), (dict(lr=-1e-3), "lr"), (dict(epochs=2.5), "epochs"),
    (dict(epochs=-1), "epochs"), (dict(batch_size=0), "batch_size"),
    (dict(n_samples=0), "n_samples"), (dict(momentum=1.0), "momentum"),
    (dict(optimizer="rmsprop"), "optimizer"), (dict(eval_sets=("dev",)), "eval_sets"),
])
def test_fit_validates_every_setting(kw, pattern):
    args = dict(epochs=1, lr=1e-3)
    args.update(kw)
    with pytest.raises(ValueError, match=pattern):
        H.fit(H.BayesMLP(6, (8,), 3), _toy_data(), **args)


def test_fit_refuses_nan_inputs():
    data = _toy_data()
    data.x_train[3, 2] = float("nan")
    with pytest.raises(ValueError, match="x_train holds NaN"):
        H.fit(H.BayesMLP(6, (8,), 3), data, epochs=1)


def test_non_finite_parameters_stop_the_run_before_a_checkpoint(tmp_path):
    def nan_gradient_nll(out, y):  # value 0 (finite loss), gradient NaN
        return torch.sqrt((out - out.detach()).abs()).sum()
    ck = tmp_path / "nan.pt"
    model = H.BayesMLP(6, (8,), 3)
    with pytest.raises(FloatingPointError, match="NaN or inf in epoch 1"):
        H.fit(model, _toy_data(), epochs=1, batch_size=192, nll=nan_gradient_nll, checkpoint=ck,
              checkpoint_every=1)
    assert not ck.exists()


def _run(ck, **kw):
    torch.manual_seed(0)
    args = dict(epochs=2, lr=1e-3, batch_size=64, seed=0, checkpoint=ck, checkpoint_every=1)
    args.update(kw)
    data = args.pop("data", _toy_data())
    return H.fit(H.BayesMLP(6, (8,), 3), data, **args)


@pytest.mark.parametrize("kw,field", [(dict(seed=1), "seed"), (dict(lr=1e-2), "lr"),
                                      (dict(data=_toy_data(n=300)), "data"),
                                      (dict(kl_weighting="blundell"), "kl_weighting"),
                                      (dict(batch_size=32), "batch_size")])
def test_resume_refuses_another_runs_checkpoint(tmp_path, kw, field):
    ck = tmp_path / "run.pt"
    _run(ck)
    with pytest.raises(CheckpointError, match=rf"belongs to another run \(.*{field}: checkpoint"):
        _run(ck, epochs=3, **kw)


def test_resume_refuses_a_longer_checkpoint(tmp_path):
    ck = tmp_path / "run.pt"
    _run(ck, epochs=4)
    with pytest.raises(CheckpointError, match="holds 4 epochs, more than the 2 asked for"):
        _run(ck, epochs=2)
    assert len(_run(ck, epochs=5)) == 5  # a longer run continues it


def test_fit_always_samples_and_restores_the_switch():
    model = H.BayesMLP(6, (8,), 3, rho_init=-4.0)
    H.set_sampling(model, False)
    rho0 = model[0].weight_rho.detach().clone()
    history = H.fit(model, _toy_data(), epochs=1, lr=1e-2)
    assert not torch.equal(model[0].weight_rho, rho0)  # sigma was trained
    assert history[0]["kl"] > 0
    assert all(not layer.sample for layer in H.layers.bayes_layers(model))


# ---- 10 and 11: provenance, and no machine paths in the committed notebooks ----

def test_results_name_the_machine():
    info = H.machine_info()
    for key in ("cpu", "isa", "threads", "blas", "onednn", "torch", "cpu_capability"):
        assert key in info
    assert info["cpu"] not in ("", "x86_64", "aarch64") or not Path("/proc/cpuinfo").exists()
    path = H.save_results("nb", "exp", {}, {"test_error": 0.1}, "smoke", 0)
    assert json.loads(path.read_text())["machine"]["isa"] == info["isa"]


ABSOLUTE = re.compile(r"(?<![\w.~])/(?:work|root|home|Users|tmp|mnt|opt|var|srv|private)/[^\s\"']+")


@pytest.mark.parametrize("path", sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb")),
                         ids=lambda p: p.stem)
def test_committed_notebooks_hold_no_absolute_paths(path):
    nb = json.loads(path.read_text())
    hits = ABSOLUTE.findall(json.dumps(nb["metadata"]))
    for cell in nb["cells"]:
        hits += ABSOLUTE.findall(json.dumps(cell.get("outputs", [])))
        hits += ABSOLUTE.findall(json.dumps(cell.get("metadata", {})))
    assert not hits, f"{path.name} holds absolute paths: {sorted(set(hits))[:3]}"


def test_driver_writes_repository_relative_metadata(tmp_path):
    import sys
    sys.path.insert(0, str(ROOT / "tools"))
    import nbformat
    import run_notebooks
    nb = nbformat.v4.new_notebook()
    nb.metadata["papermill"] = {"input_path": str(ROOT / "notebooks" / "00_theory.ipynb"),
                                "output_path": str(ROOT / "notebooks" / ".00_theory.running.ipynb")}
    f = tmp_path / "x.ipynb"
    nbformat.write(nb, str(f))
    run_notebooks.clean_metadata(f, ROOT / "notebooks" / "00_theory.ipynb",
                                 ROOT / "notebooks" / "00_theory.ipynb")
    meta = json.loads(f.read_text())["metadata"]["papermill"]
    assert meta == {"input_path": "notebooks/00_theory.ipynb",
                    "output_path": "notebooks/00_theory.ipynb"}


# ---- 12: checkpoints carry a checksum; stale temporary files go; metrics refuse NaN ----

def test_checkpoint_checksum_and_stale_tmp(tmp_path):
    ck = tmp_path / "c.pt"
    stale = tmp_path / ".c.pt.abc123.tmp"  # what a killed write leaves behind
    stale.write_bytes(b"half a checkpoint")
    H.save_checkpoint(ck, x=torch.arange(1000))
    assert not stale.exists()
    assert torch.equal(H.load_checkpoint(ck)["x"], torch.arange(1000))
    raw = bytearray(ck.read_bytes())
    raw[len(raw) // 2] ^= 0x10
    ck.write_bytes(bytes(raw))
    with pytest.raises(CheckpointError, match=r"c\.pt is corrupt or truncated"):
        H.load_checkpoint(ck)
    ck.write_bytes(bytes(raw[:100]))
    with pytest.raises(CheckpointError, match="corrupt or truncated"):
        H.load_checkpoint(ck)
    ck.write_bytes(b"")
    with pytest.raises(CheckpointError, match=r"c\.pt is empty"):
        H.load_checkpoint(ck)
    buf = io.BytesIO()
    torch.save({"x": 1}, buf)
    ck.write_bytes(buf.getvalue())
    with pytest.raises(CheckpointError, match="not a checkpoint written by helpers"):
        H.load_checkpoint(ck)


def test_fit_removes_stale_tmp_of_its_checkpoint(tmp_path):
    ck = tmp_path / "run.pt"
    stale = tmp_path / ".run.pt.k1ll3d.tmp"
    stale.write_bytes(b"")
    _run(ck, epochs=1)
    assert not stale.exists() and ck.exists()


def test_predict_and_metrics_refuse_nan():
    model = H.BayesMLP(4, (5,), 3)
    x = torch.randn(6, 4)
    x[2, 1] = float("nan")
    with pytest.raises(ValueError, match="inputs x holds NaN"):
        H.predict(model, x)
    probs = torch.full((4, 3), 1 / 3)
    probs[1, 0] = float("nan")
    y = torch.zeros(4, dtype=torch.long)
    for fn in (H.error_rate, H.ece, H.nll, H.reliability):
        with pytest.raises(ValueError, match="NaN"):
            fn(probs, y)
    with pytest.raises(ValueError, match="NaN"):
        H.predictive_entropy(probs)
    with pytest.raises(ValueError, match="NaN"):
        H.auroc(torch.tensor([0.1, float("nan")]), torch.tensor([0.5]))
    with pytest.raises(ValueError, match="NaN"):
        H.mutual_information(probs.unsqueeze(0))
