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
    assert kept0 is None and len(kept1) == 2 and kept1[0] is rho  # rho, d log p / dw
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


# ---- the kernels' inline math, the noise, and what the backward pass recomputes ----

def _ulps(got, ref64):
    """|got - ref| in units in the last place of the float32 reference."""
    a = ref64.float().abs()
    ulp = (torch.nextafter(a, torch.full_like(a, math.inf)) - a).double()
    return (got.double() - ref64).abs() / ulp


def _math_cases():
    g = torch.Generator().manual_seed(0)
    rho = torch.cat([torch.linspace(-80, 100, 400_001), torch.empty(100_000).uniform_(-8, 2, generator=g)])
    rd = rho.double()
    sp = F.softplus(rd)
    logs = torch.exp(torch.empty(400_000).uniform_(-87, 88, generator=g))
    logs = logs[(logs > 1.2e-38) & torch.isfinite(logs)]
    y = torch.cat([torch.rand(400_000, generator=g),
                   torch.exp(torch.empty(100_000).uniform_(-80, 0, generator=g)), torch.ones(1)])
    return {  # name: (input, float64 reference, max error in ulp)
        "exp": (torch.linspace(-87, 88, 400_001), lambda x: torch.exp(x.double()), 1.5),
        "log": (logs, lambda x: torch.log(x.double()), 1.5),
        "log1p": (y, lambda x: torch.log1p(x.double()), 3.0),
        "softplus": (rho, lambda x: sp, 3.5),
        "sigmoid": (rho, lambda x: torch.sigmoid(rd), 3.5),
        "sigmoid_over_softplus": (rho, lambda x: torch.where(rd < -20, 1 - 0.5 * torch.exp(rd),
                                                             torch.sigmoid(rd) / sp), 6.0),
    }


@needs_native
@pytest.mark.parametrize("name", ["exp", "log", "log1p", "softplus", "sigmoid",
                                  "sigmoid_over_softplus"])
def test_kernel_math_is_accurate(name):
    """The inline exp / log / log1p and what the kernels build from them, against float64
    (measured: exp 1.0, log 0.75, log1p 2.0, softplus 2.5, sigmoid 2.3, ratio 4.3 ulp at most)."""
    x, ref, tol = _math_cases()[name]
    err = _ulps(native.kernel_math(name, x), ref(x))
    assert err.max().item() <= tol, (name, err.max().item(), x[err.argmax()].item())


@needs_native
def test_kernel_math_log_softplus_and_noise_angles():
    rho = torch.linspace(-80, 100, 400_001)
    rd = rho.double()
    ref = torch.where(rd < -20, rd, torch.log(F.softplus(rd)))
    got = native.kernel_math("log_softplus", rho).double()
    # absolute: log(sigma) near sigma = 1 inherits sigma's rounding (a few 1e-8 relative)
    assert ((got - ref).abs() <= 4e-7 * torch.clamp(ref.abs(), min=1.0)).all()
    b = torch.arange(0, 2**24, 3, dtype=torch.float32)  # every third angle of the 2^24
    ang = 2 * math.pi * b.double() / 2**24
    for name, fn in (("cos_turn", torch.cos), ("sin_turn", torch.sin)):
        err = (native.kernel_math(name, b).double() - fn(ang)).abs().max().item()
        assert err < 2e-7, (name, err)  # measured 1.2e-7: a few ulp of values up to 1


@needs_native
@pytest.mark.parametrize("name", sorted(native.MATH))
def test_kernel_math_vector_and_scalar_round_alike(name):
    """Every function rounds the same in a vector loop as one element at a time: what lets the
    backward pass recompute sigma exactly as the forward pass computed it, whatever the loop's
    vector width, tail or thread split."""
    g = torch.Generator().manual_seed(1)
    n = 100_003  # a tail in every vector width
    x = {"exp": torch.empty(n).uniform_(-87, 88, generator=g),
         "log": torch.exp(torch.empty(n).uniform_(-80, 80, generator=g)),
         "log1p": torch.rand(n, generator=g),
         "cos_turn": torch.randint(0, 2**24, (n,), generator=g).float(),
         "sin_turn": torch.randint(0, 2**24, (n,), generator=g).float()}.get(
        name, torch.empty(n).uniform_(-100, 60, generator=g))
    y, z = torch.randn(n, generator=g), torch.randn(n, generator=g)
    assert torch.equal(native.kernel_math(name, x, y, z), native.kernel_math(name, x, y, z,
                                                                             vector=False))


@needs_native
@pytest.mark.parametrize("n", [5003, 4096 * 3 + 77])
def test_forward_samples_with_the_sigma_backward_recomputes(n):
    """w is bit for bit sigma * eps + mu with sigma = the kernels' softplus(rho), the function the
    backward pass evaluates again (vector or scalar alike, previous test); eps is the generator's
    noise at indices s * n + j whatever the block alignment."""
    torch.manual_seed(0)
    mu, rho = torch.randn(n) * 0.1, torch.empty(n).uniform_(-9, 1)
    rho[:7] = torch.tensor([-100.0, -80.5, -25.0, -20.0, 20.5, 30.0, 0.0])
    kind, consts = native.prior_constants(ScaleMixturePrior(0.5, 1.0, math.exp(-6)))
    w, eps, sums, kept = native.forward(mu, rho, 3, 21, kind, consts)
    assert torch.equal(eps, native.normal((3, n), 21))
    for vector in (True, False):
        sig = native.kernel_math("softplus", rho, vector=vector)
        for s in range(3):
            assert torch.equal(w[s], native.kernel_math("madd", sig, eps[s], mu, vector=vector))


@needs_native
@pytest.mark.parametrize("S", [1, 2])
def test_forward_sums_and_backward_gradient_match_float64(S):
    """The sums (logs of products) and the gradient at the sampled weights against float64."""
    torch.manual_seed(1)
    n = 20_011
    prior = ScaleMixturePrior(0.5, 1.0, math.exp(-6))
    mu, rho = torch.randn(n) * 0.05, torch.empty(n).uniform_(-8, 0)
    rho[:3] = torch.tensor([-30.0, -90.0, 25.0])
    kind, consts = native.prior_constants(prior)
    w, eps, sums, kept = native.forward(mu, rho, S, 5, kind, consts)
    rd = rho.double()
    sig = F.softplus(rd)
    wd = w.double().requires_grad_(True)
    logp = prior.double().log_prob(wd)
    (dlogp,) = torch.autograd.grad(logp.sum(), wd)
    log_sig = torch.where(rd < -20, rd, torch.log(sig))
    assert sums[0].item() == pytest.approx(log_sig.sum().item(), rel=1e-6)
    assert sums[1].item() == pytest.approx((eps.double() ** 2).sum().item(), rel=1e-6)
    assert sums[2].item() == pytest.approx(logp.sum().item(), rel=1e-6)
    # grad_w = g, grad_kl = k: d/dmu = sum_s (g - k/S dlogp), d/drho = sum_s (...) eps sigmoid
    # - k sigmoid / sigma
    g = torch.randn(w.shape) * 1e-2
    k = 0.7
    gmu, grho = native.backward(mu, eps, kept, g, k, S, kind)
    dw = g.double() - k / S * dlogp
    ratio = torch.where(rd < -20, 1 - 0.5 * torch.exp(rd), torch.sigmoid(rd) / sig)
    ref_mu = dw.reshape(S, n).sum(0)
    ref_rho = (dw * eps.double()).reshape(S, n).sum(0) * torch.sigmoid(rd) - k * ratio
    # per weight, against the size of the terms summed (the float32 rounding of a sum scales with
    # them; a tolerance relative to the largest entry would let small entries be anything)
    terms_mu = (g.double().abs() + (k / S * dlogp).abs()).reshape(S, n).sum(0)
    terms_rho = ((dw * eps.double()).abs().reshape(S, n).sum(0) * torch.sigmoid(rd)
                 + (k * ratio).abs())
    for got, ref, terms in ((gmu, ref_mu, terms_mu), (grho, ref_rho, terms_rho)):
        err = (got.double() - ref).abs()
        assert (err <= 1e-5 * terms).all(), (err / terms).max().item()


@needs_native
def test_changing_rho_before_backward_is_caught():
    """The backward pass reads rho again: changing it in place in between is an error."""
    from helpers import BayesLinear
    layer = BayesLinear(300, 300, prior=ScaleMixturePrior(0.5, 1.0, math.exp(-6)))
    w, kl = layer._sample(layer.weight_mu, layer.weight_rho, 1)
    with torch.no_grad():
        layer.weight_rho.add_(0.1)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        (w.sum() + kl).backward()


@needs_native
def test_noise_branches_moments_and_threads():
    """Both Box-Muller branches are standard normal and uncorrelated within a pair; the noise
    and every forward output are the same for one thread and two."""
    z = native.normal((2_000_000,), 7).double()
    idx = torch.arange(z.numel())
    cos_half, sin_half = z[(idx & 16) == 0], z[(idx & 16) != 0]
    for h in (cos_half, sin_half):
        assert abs(h.mean().item()) < 4e-3 and abs(h.var().item() - 1) < 6e-3
        assert abs(((h - h.mean()) ** 3).mean().item()) < 1e-2  # skewness
        assert abs(((h - h.mean()) ** 4).mean().item() / h.var().item() ** 2 - 3) < 2.5e-2
    pairs = z.reshape(-1, 2, 16)  # groups of 32: 16 cosines, then the 16 sines of the same pairs
    c, s = pairs[:, 0].reshape(-1), pairs[:, 1].reshape(-1)
    assert abs(torch.corrcoef(torch.stack([c, s]))[0, 1].item()) < 3e-3
    assert abs(torch.corrcoef(torch.stack([c * c, s * s]))[0, 1].item()) < 3e-3
    for lag in (1, 15, 16, 17, 32):  # neighbours, across the cosine/sine halves and groups
        for f in (lambda x: x, lambda x: x * x):
            r = torch.corrcoef(torch.stack([f(z[:-lag]), f(z[lag:])]))[0, 1].item()
            assert abs(r) < 3e-3, (lag, r)
    kind, consts = native.prior_constants(ScaleMixturePrior(0.5, 1.0, math.exp(-6)))
    torch.manual_seed(0)
    mu, rho = torch.randn(300_001) * 0.05, torch.empty(300_001).uniform_(-8, 0)
    threads = torch.get_num_threads()
    outs = []
    try:
        for t in (1, 2):
            torch.set_num_threads(t)
            w, eps, sums, kept = native.forward(mu, rho, 2, 3, kind, consts)
            gm, gr = native.backward(mu, eps, kept, torch.ones_like(w), 0.5, 2, kind)
            outs.append([x.clone() for x in (w, eps, kept[1], gm, gr)] + [sums.clone()])
    finally:
        torch.set_num_threads(threads)
    for a, b in zip(outs[0][:-1], outs[1][:-1]):
        assert torch.equal(a, b)
    assert torch.allclose(outs[0][-1], outs[1][-1], rtol=1e-12, atol=0)


@needs_native
@pytest.mark.parametrize("kind_name", ["mixture", "closed"])
def test_nan_and_inf_rho_reach_the_outputs(kind_name):
    """A NaN in rho (or mu) shows in w and in the sums (the KL), as with libm's functions; an
    infinite rho gives an infinite sigma; a very negative one log sigma = rho."""
    n = 1000
    mu, rho = torch.zeros(n), torch.full((n,), -5.0)
    rho[3], rho[500], rho[999] = math.nan, math.inf, -math.inf
    if kind_name == "closed":
        kind, consts = -1, torch.zeros(6)
    else:
        kind, consts = native.prior_constants(ScaleMixturePrior(0.5, 1.0, math.exp(-6)))
    w, eps, sums, _ = native.forward(mu, rho, 1, 2, kind, consts)
    assert math.isnan(w[3].item()) and not math.isfinite(w[500].item())
    assert math.isnan(sums[0].item())
    rho[3], rho[500] = -5.0, -5.0
    w, eps, sums, _ = native.forward(mu, rho, 1, 2, kind, consts)
    assert sums[0].item() == -math.inf  # log sigma = rho = -inf
    rho[999] = -100.0
    w, eps, sums, _ = native.forward(mu, rho, 1, 2, kind, consts)
    ref = 999 * math.log(F.softplus(torch.tensor(-5.0, dtype=torch.float64)).item()) - 100.0
    assert sums[0].item() == pytest.approx(ref, rel=1e-6)
    if kind_name == "mixture":
        mu[7] = math.nan
        w, eps, sums, _ = native.forward(mu, rho, 1, 2, kind, consts)
        assert math.isnan(sums[2].item()) and math.isnan(w[7].item())
