"""The C kernels (float32 CPU fast path) against the plain-autograd reference."""
import math

import pytest
import torch
from torch.nn import functional as F

from helpers import (BayesMLP, CauchyPrior, GaussianPrior, LaplacePrior, ScaleMixturePrior,
                     configure, elbo, native, seed_everything)
from helpers.layers import softplus

needs_native = pytest.mark.skipif(native.library() is None, reason="no C compiler here")
PRIORS = [ScaleMixturePrior(0.5, 1.0, math.exp(-6)), GaussianPrior(1.0), LaplacePrior(0.1),
          CauchyPrior(0.1)]


def _grads(model, x, y, S, seed, kl_weight=0.1):
    torch.manual_seed(seed)
    parts = elbo(model, x, y, kl_weight=kl_weight, n_samples=S)
    model.zero_grad()
    parts.loss.backward()
    return parts, [p.grad.clone() for p in model.parameters()]


@needs_native
@pytest.mark.parametrize("prior", PRIORS, ids=lambda p: type(p).__name__)
@pytest.mark.parametrize("S", [1, 3])
def test_native_equals_reference_float32(prior, S):
    torch.manual_seed(0)
    fast = BayesMLP(300, (64,), 5, prior=prior, rho_init=-4.0)
    ref = BayesMLP(300, (64,), 5, prior=prior, rho_init=-4.0)
    ref.load_state_dict(fast.state_dict())
    configure(ref, impl="reference")
    x, y = torch.randn(32, 300), torch.randint(0, 5, (32,))
    (pf, gf), (pr, gr) = _grads(fast, x, y, S, 4), _grads(ref, x, y, S, 4)
    assert pf.kl.item() == pytest.approx(pr.kl.item(), rel=2e-5)
    assert pf.loss.item() == pytest.approx(pr.loss.item(), rel=2e-5)
    for a, b in zip(gf, gr):
        scale = b.abs().max().item()
        assert torch.allclose(a, b, rtol=1e-3, atol=1e-4 * scale)


@needs_native
def test_native_closed_form_equals_reference():
    torch.manual_seed(0)
    kw = dict(prior=GaussianPrior(0.3), kl="closed", rho_init=-3.0)
    fast, ref = BayesMLP(300, (64,), 5, **kw), BayesMLP(300, (64,), 5, impl="reference", **kw)
    ref.load_state_dict(fast.state_dict())
    x, y = torch.randn(32, 300), torch.randint(0, 5, (32,))
    for S in (1, 2):
        (pf, gf), (pr, gr) = _grads(fast, x, y, S, 9), _grads(ref, x, y, S, 9)
        assert pf.loss.item() == pytest.approx(pr.loss.item(), rel=2e-5)
        for a, b in zip(gf, gr):
            assert torch.allclose(a, b, rtol=1e-3, atol=1e-4 * b.abs().max().item())


@needs_native
def test_native_noise_is_standard_normal_and_seeded():
    z = native.normal((1_000_000,), 123)
    assert abs(z.mean().item()) < 5e-3 and abs(z.std().item() - 1) < 5e-3
    # tail mass and the Kolmogorov-Smirnov distance to N(0, 1)
    assert (z.abs() > 3).float().mean().item() == pytest.approx(0.0027, abs=4e-4)
    zs = torch.sort(z[:100_000].double()).values
    cdf = 0.5 * (1 + torch.erf(zs / math.sqrt(2)))
    ks = (cdf - torch.arange(1, len(zs) + 1, dtype=torch.float64) / len(zs)).abs().max().item()
    assert ks < 0.01
    assert torch.equal(native.normal((10,), 5), native.normal((10,), 5))
    assert not torch.equal(native.normal((10,), 5), native.normal((10,), 6))


@needs_native
def test_same_seed_same_training_step():
    outs = []
    for _ in range(2):
        seed_everything(1)
        model = BayesMLP(50, (20,), 3)
        x, y = torch.randn(8, 50), torch.randint(0, 3, (8,))
        parts, grads = _grads(model, x, y, 2, 3)
        outs.append((parts.loss.item(), grads[0]))
    assert outs[0][0] == outs[1][0] and torch.equal(outs[0][1], outs[1][1])


def test_torch_path_when_kernels_disabled(monkeypatch):
    monkeypatch.setattr(native, "library", lambda: None)
    torch.manual_seed(0)
    fast = BayesMLP(300, (64,), 5)
    ref = BayesMLP(300, (64,), 5, impl="reference")
    ref.load_state_dict(fast.state_dict())
    x, y = torch.randn(32, 300), torch.randint(0, 5, (32,))
    (pf, gf), (pr, gr) = _grads(fast, x, y, 1, 4), _grads(ref, x, y, 1, 4)
    assert pf.loss.item() == pytest.approx(pr.loss.item(), rel=2e-5)
    for a, b in zip(gf, gr):
        assert torch.allclose(a, b, rtol=1e-3, atol=1e-4 * b.abs().max().item())


def test_fast_softplus_matches_torch():
    rho = torch.linspace(-30, 60, 200_001)
    assert torch.allclose(softplus(rho), F.softplus(rho), rtol=1e-6, atol=0)
    assert torch.isfinite(softplus(torch.full((10_000,), 500.0))).all()


def test_fast_softplus_gradient():
    rho = torch.linspace(-8, 8, 10_001, dtype=torch.float64, requires_grad=True)
    softplus(rho).sum().backward()
    assert torch.allclose(rho.grad, torch.sigmoid(rho.detach()), atol=1e-12)


def _reuse_run(monkeypatch, reuse):
    """Training steps that stress reused buffers: two samples per step, two forward passes before
    one backward, a backward run twice over a retained graph, gradients accumulated over steps."""
    monkeypatch.setattr(native, "REUSE", reuse)
    monkeypatch.setattr(native, "REUSE_FROM", 1)  # every array, even this small network's
    native.release_buffers()
    seed_everything(3)
    model = BayesMLP(40, (30, 30), 4, prior=ScaleMixturePrior(0.5, 1.0, math.exp(-6)),
                     rho_init=-4.0)
    opt = torch.optim.Adam(model.parameters(), 1e-2)
    x, y = torch.randn(16, 40), torch.randint(0, 4, (16,))
    out = []
    for step in range(4):
        opt.zero_grad(set_to_none=step % 2 == 0)  # odd steps add into the kept .grad
        parts = elbo(model, x, y, kl_weight=0.1, n_samples=2)
        # a second forward pass before any backward, same shapes: the same buffers are asked for
        other = elbo(model, x, y, kl_weight=0.1, n_samples=2).loss
        loss = parts.loss + other
        loss.backward(retain_graph=True)
        first = [p.grad.clone() for p in model.parameters()]
        loss.backward()  # again through the same graph: the saved buffers must still hold
        out += [loss.detach(), *first, *[p.grad.clone() for p in model.parameters()]]
        opt.step()
    return out + [p.detach().clone() for p in model.parameters()]


@needs_native
def test_reused_buffers_change_no_number(monkeypatch):
    assert native.REUSE, "this torch lacks the storage use count: buffers are never reused"
    fresh, reused = _reuse_run(monkeypatch, False), _reuse_run(monkeypatch, True)
    assert len(fresh) == len(reused)
    for a, b in zip(fresh, reused):
        assert torch.equal(a, b)


def test_buffer_is_reused_only_when_released(monkeypatch):
    if not native.REUSE:
        pytest.skip("this torch lacks the storage use count")
    monkeypatch.setattr(native, "REUSE_FROM", 1)
    native.release_buffers()
    a = native.buffer("t", (1000,))
    ptr = a.data_ptr()
    view = a[10:]
    del a
    b = native.buffer("t", (1000,))  # a view of the first is alive: new memory
    assert b.data_ptr() != ptr
    del view
    c = native.buffer("t", (1000,))  # released: the first buffer again
    assert c.data_ptr() == ptr
    assert native.buffer("t", (999,)).data_ptr() not in (ptr, b.data_ptr())  # other shape
    assert native.buffer("u", (1000,)).data_ptr() not in (ptr, b.data_ptr())  # other tag
    native.release_buffers()


@needs_native
def test_forward_keeps_nothing_without_grad():
    """keep=False (no backward follows) gives the same samples and sums as keep=True."""
    torch.manual_seed(0)
    mu, rho = torch.randn(5000) * 0.1, torch.empty(5000).uniform_(-8, 1)
    kind, consts = native.prior_constants(ScaleMixturePrior(0.5, 1.0, math.exp(-6)))
    w1, e1, s1, kept1 = native.forward(mu, rho, 2, 11, kind, consts, keep=True)
    w0, e0, s0, kept0 = native.forward(mu, rho, 2, 11, kind, consts, keep=False)
    assert kept0 is None and len(kept1) == 3
    assert torch.equal(w0, w1) and torch.equal(e0, e1) and torch.equal(s0, s1)


@needs_native
def test_evaluation_keeps_nothing_and_inference_mode_then_training(monkeypatch):
    """A pass under no_grad keeps nothing for a backward pass and leaves the pool alone; buffers
    are never made in inference mode (such tensors could not be saved for backward later)."""
    monkeypatch.setattr(native, "REUSE_FROM", 1)
    native.release_buffers()
    seed_everything(0)
    model = BayesMLP(20, (16,), 3)
    x, y = torch.randn(8, 20), torch.randint(0, 3, (8,))
    with torch.no_grad():
        model(x)
    assert native._POOL == {}
    with torch.inference_mode():
        model(x)
    assert native._POOL == {}
    F.cross_entropy(model(x), y).backward()  # training after both works
    assert native._POOL and all(p.grad is not None for p in model.parameters())
    native.release_buffers()
