"""helpers.laplace_glm: the fast GLM probit predictive equals laplace-torch's own
``la(x, pred_type="glm", link_approx="probit")`` for every flavour notebook 06 fits (last-layer
KFAC, all-layer diagonal, all-layer KFAC), under scalar and per-tensor prior precisions, and
several values of each (issue 52, item 7). A small ReLU MLP on random data; CPU, one thread.
"""
import pytest
import torch
from torch.nn import functional as F

from helpers import laplace_glm as G
from helpers.layers import mlp
from helpers.utils import one_thread

pytest.importorskip("laplace")
pytest.importorskip("backpack")

FLAVOURS = {"laplace_ll_kron": ("last_layer", "kron"), "laplace_diag": ("all", "diag"),
            "laplace_kron": ("all", "kron")}
TOL = 1e-5  # absolute, on probabilities; the library computes in float32


def _fit(subset, hessian, dropout=0.0, seed=0):
    from laplace import Laplace
    from laplace.curvature import BackPackGGN
    from torch.utils.data import DataLoader, TensorDataset
    torch.manual_seed(seed)
    x, y = torch.randn(200, 12), torch.randint(0, 4, (200,))
    net = mlp(12, (16, 8), 4, dropout=dropout)
    opt = torch.optim.Adam(net.parameters(), lr=1e-2)
    for _ in range(100):
        opt.zero_grad()
        F.cross_entropy(net(x), y).backward()
        opt.step()
    net.eval()
    kw = {"backend": BackPackGGN} if subset == "all" else {}
    la = Laplace(net, "classification", subset_of_weights=subset, hessian_structure=hessian, **kw)
    la.fit(DataLoader(TensorDataset(x, y), batch_size=50))
    return la, torch.randn(40, 12) * 1.5


def fitted(flavour):
    """A fresh fit (laplace-torch 0.3 with BackPack: only the latest all-layer fit in a process
    can compute the library's own Jacobians, so each check fits its own)."""
    with one_thread():
        return _fit(*FLAVOURS[flavour])


@pytest.mark.parametrize("flavour", list(FLAVOURS))
def test_fast_equals_the_library_for_scalar_and_per_tensor_prior_precisions(flavour):
    """Probabilities under five prior precisions; then the whole covariance and the samples."""
    la, x = fitted(flavour)
    fast = G.FastGLM(la)
    cache = fast.cache(x)
    n = la.n_layers  # the prior precision: one value or one per fitted parameter tensor
    assert n == (2 if flavour == "laplace_ll_kron" else 6)
    per_tensor = torch.logspace(-1, 1.5, n)
    worst = 0.0
    with one_thread():
        for delta in (1e-2, 1.0, 30.0, per_tensor, per_tensor * 100):
            ref = G.library_probs(la, x, torch.as_tensor(delta, dtype=torch.float32))
            got = fast.probs(cache, delta)
            assert got.shape == ref.shape == (40, 4)
            worst = max(worst, float((got - ref.double()).abs().max()))
            # the variance is not negligible (else the check would not test it)
            assert float(fast.variance(cache, delta).max()) > 1e-3
    assert worst <= TOL, (flavour, worst)
    _check_covariance_and_samples(la, x)


def test_the_default_prior_precision_is_the_objects_own_and_batching_changes_nothing():
    la, x = fitted("laplace_kron")
    la.prior_precision = 3.0
    fast = G.FastGLM(la)
    assert torch.allclose(fast(x, batch_size=7), fast.probs(fast.cache(x), 3.0), atol=1e-12)
    assert G.max_abs_difference(la, x) <= TOL
    assert float(la.prior_precision) == 3.0  # library_probs restores it


def test_a_wrong_gradient_would_be_caught():
    """The check can fail: dropping the ReLU mask in the backward recursion changes the result."""
    la, x = fitted("laplace_diag")
    fast = G.FastGLM(la)
    good = fast.probs(fast.cache(x), 1.0)
    relu = torch.nn.ReLU
    fast.mods = [torch.nn.Identity() if isinstance(m, relu) else m for m in fast.mods]
    with torch.no_grad():
        bad = fast.probs(fast.cache(x), 1.0)
    assert float((good - bad).abs().max()) > 10 * TOL


def test_dropout_in_eval_mode_is_handled_and_other_layers_refused():
    with one_thread():
        la, x = _fit("all", "kron", dropout=0.3, seed=1)
        assert G.max_abs_difference(la, x, 1.0) <= TOL
    la.model.train()
    with pytest.raises(ValueError, match="eval mode"):
        G.FastGLM(la)
    la.model.eval()
    la.model[1] = torch.nn.Tanh()
    with pytest.raises(ValueError, match="ReLU MLPs"):
        G.FastGLM(la)


def _check_covariance_and_samples(la, x):
    """For the mutual information: the output covariance (not only its diagonal) and the
    library's GLM samples drawn from it with the same generator."""
    import warnings
    la.prior_precision = 2.0
    fast = G.FastGLM(la)
    cache = fast.cache(x)
    with torch.no_grad(), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        _, ref_cov = la._glm_predictive_distribution(x)
        ref = la.predictive_samples(x, pred_type="glm", n_samples=9,
                                    generator=torch.Generator().manual_seed(5))
    cov = fast.covariance(cache)
    assert torch.allclose(cov.diagonal(dim1=1, dim2=2), fast.variance(cache), rtol=1e-10)
    assert float((cov - ref_cov.double()).abs().max()) <= 1e-4 * float(ref_cov.abs().max())
    # the library draws one (K, S) normal block per call, shared by the call's inputs: the
    # same batches give the same samples
    got = G.samples(fast, x, 9, generator=torch.Generator().manual_seed(5), batch_size=40)
    assert got.shape == ref.shape == (9, 40, 4)
    assert float((got - ref).abs().max()) <= 1e-4
    other = G.samples(fast, x, 9, generator=torch.Generator().manual_seed(5), batch_size=15)
    assert float((other[:, :15] - ref[:, :15]).abs().max()) <= 1e-4
    assert float((got[0] - got[1]).abs().max()) > 1e-2  # the samples differ from one another
