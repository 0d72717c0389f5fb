"""Laplace as its library intends (issue 34, item 1): notebook 06's Laplace rows predict with the
linearised (GLM) predictive and the probit approximation, prior precision by marginal likelihood.

On two moons (helpers.data.make_toy_2d) a small MLP is trained as a MAP estimate, and every
Laplace flavour of helpers.alternatives is fitted around it with the functions notebook 06 uses
(``fit_laplace``, ``laplace_probs``, ``laplace_samples``). The GLM predictive must keep MAP's
accuracy (within ``ACC_POINTS``) and an NLL no worse than MAP's by more than ``NLL_SLACK``;
the ablation that samples weights through the network (``LAPLACE_NN_ABLATION``, what the
all-layer rows used before) fails the same check here. CPU, one thread, a few seconds.

``python tests/test_laplace_glm.py`` prints the numbers.
"""
from types import SimpleNamespace

import pytest
import torch
from torch.nn import functional as F

from helpers import alternatives as A
from helpers.data import make_toy_2d
from helpers.layers import mlp
from helpers.metrics import error_rate, nll
from helpers.utils import one_thread

pytest.importorskip("laplace")
pytest.importorskip("backpack")

ACC_POINTS = 0.02  # the GLM predictive's accuracy may trail MAP's by at most two points
NLL_SLACK = 0.05   # ... and its NLL exceed MAP's by at most this many nats


def toy(seed=0, steps=1000):
    """Return (MAP network, training data, x_test, y_test) on two moons."""
    x, y = make_toy_2d("moons", n=500, noise=0.2, seed=seed)
    x_test, y_test = make_toy_2d("moons", n=2000, noise=0.2, seed=seed + 1)
    torch.manual_seed(seed)
    net = mlp(2, (50, 50), 2)
    opt = torch.optim.Adam(net.parameters(), lr=1e-2, weight_decay=1e-4)
    for _ in range(steps):
        opt.zero_grad()
        F.cross_entropy(net(x), y).backward()
        opt.step()
    net.eval()
    return net, SimpleNamespace(x_train=x, y_train=y), x_test, y_test


def scores(probs, y):
    return {"accuracy": 1 - error_rate(probs, y), "nll": nll(probs, y)}


def acceptable(s, ref):
    return s["accuracy"] >= ref["accuracy"] - ACC_POINTS and s["nll"] <= ref["nll"] + NLL_SLACK


def measure():
    """Return {row: {accuracy, nll}} for MAP, each Laplace flavour (GLM, probit) and the
    all-layer flavours' weight-sampling ablation; and the fitted Laplace objects."""
    with one_thread():
        net, data, x_test, y_test = toy()
        with torch.no_grad():
            out = {"map": scores(F.softmax(net(x_test), -1), y_test)}
        fitted = {}
        for flavour in A.LAPLACE:
            la, _ = A.fit_laplace(net, data, flavour)
            fitted[flavour] = la
            p = A.laplace_probs(la, x_test)
            assert p.shape == (1, len(x_test), 2)
            out[f"{flavour} glm/probit"] = scores(p[0], y_test)
            samples = A.laplace_samples(la, x_test, n_samples=200, seed=0)
            out[f"{flavour} glm/mc (200 samples)"] = scores(samples.mean(0), y_test)
            if A.LAPLACE[flavour][0] == "all":
                p_nn = A.laplace_probs(la, x_test, predictive=A.LAPLACE_NN_ABLATION,
                                       n_samples=50, seed=0)
                out[f"{flavour} nn (ablation)"] = scores(p_nn.mean(0), y_test)
    return out, fitted, x_test


@pytest.fixture(scope="module")
def measured():
    return measure()


def _print(out):
    print("\n" + "\n".join(f"{k:34s} accuracy {v['accuracy']:.4f}  NLL {v['nll']:.4f}"
                           for k, v in out.items()))


def test_every_flavour_predicts_with_the_linearised_probit_predictive():
    assert A.LAPLACE_PREDICTIVE == {"pred_type": "glm", "link_approx": "probit"}
    for flavour, (subset, hessian, prior) in A.LAPLACE.items():
        s = A.laplace_settings(flavour)
        assert (s["pred_type"], s["link_approx"], s["prior_precision"]) == ("glm", "probit",
                                                                           "marglik")
        assert (s["subset_of_weights"], s["hessian_structure"], s["prior_structure"]) == (
            subset, hessian, prior)
    assert {A.LAPLACE[f][:2] for f in A.LAPLACE} >= {("last_layer", "kron"), ("all", "diag"),
                                                     ("all", "kron")}


def test_the_glm_predictive_keeps_maps_accuracy_and_nll_on_two_moons(measured):
    out, _, _ = measured
    _print(out)
    ref = out["map"]
    assert ref["accuracy"] > 0.9  # the toy network is a working classifier
    for flavour in A.LAPLACE:
        s = out[f"{flavour} glm/probit"]
        assert acceptable(s, ref), (flavour, s, ref)


def test_sampling_weights_through_the_network_fails_the_same_check(measured):
    """The ablation: the all-layer Laplace posterior sampled through the network (the predictive
    the all-layer rows used before) loses accuracy and NLL on this toy, as on MNIST."""
    out, _, _ = measured
    ref = out["map"]
    ablations = [k for k in out if k.endswith("nn (ablation)")]
    assert ablations
    for key in ablations:
        assert not acceptable(out[key], ref), (key, out[key], ref)


def test_glm_samples_for_the_mutual_information(measured):
    _, fitted, x_test = measured
    x = x_test[:300]
    for flavour, la in fitted.items():
        with one_thread():
            s = A.laplace_samples(la, x, n_samples=64, seed=3)
            again = A.laplace_samples(la, x, n_samples=64, seed=3)
            p = A.laplace_probs(la, x)[0]
        assert s.shape == (64, len(x), 2) and torch.equal(s, again)  # seeded
        assert torch.allclose(s.sum(-1), torch.ones(64, len(x)), atol=1e-5)
        # the same Gaussian over the logits: their mean and the probit predictive agree on
        # the class of almost every point
        assert (s.mean(0).argmax(-1) == p.argmax(-1)).float().mean() > 0.98, flavour


def test_the_samples_mean_passes_the_same_check(measured):
    """The mutual information's samples come from the same Gaussian over the logits as the
    probit predictive (which reads only its diagonal): their mean also keeps MAP's level."""
    out, _, _ = measured
    for flavour in A.LAPLACE:
        s = out[f"{flavour} glm/mc (200 samples)"]
        assert acceptable(s, out["map"]), (flavour, s, out["map"])


def test_evaluate_takes_the_mutual_information_from_the_samples_when_given():
    from helpers.data import ImageData
    torch.manual_seed(0)
    data = ImageData(*(torch.zeros(1, 784), torch.zeros(1, dtype=torch.long)) * 2,
                     torch.rand(50, 784), torch.randint(0, 10, (50,)))
    one = lambda x: torch.softmax(torch.randn(1, len(x), 10), -1)  # noqa: E731
    many = lambda x: torch.softmax(torch.randn(4, len(x), 10), -1)  # noqa: E731
    assert A.evaluate(one, data, torch.rand(40, 784), angles=(0,))["auroc_mi"] is None
    m = A.evaluate(one, data, torch.rand(40, 784), angles=(0,), samples_fn=many)
    assert m["auroc_mi"] is not None and 0 <= m["auroc_mi"] <= 1


def test_rows_made_with_other_laplace_settings_are_stale():
    current = {"method": "laplace_diag", "seed": 0, "laplace": A.laplace_settings("laplace_diag")}
    old = {"method": "laplace_kron", "seed": 0}  # before issue 34: no settings recorded
    other = {"method": "laplace_ll_kron", "seed": 0,
             "laplace": {**A.laplace_settings("laplace_ll_kron"), **A.LAPLACE_NN_ABLATION}}
    summary = {"metrics": {"per_seed": [current, old, other, {"method": "map", "seed": 0}]}}
    assert A.stale_laplace_rows(summary) == [old, other]


if __name__ == "__main__":
    _print(measure()[0])


def test_probs_and_samples_of_a_batch_share_one_library_pass_with_the_same_values(measured):
    """``share_glm_passes`` (applied by ``fit_laplace``): the predictive and its samples reuse
    one GLM pass per batch and give exactly what the library's own method gives."""
    _, fitted, x_test = measured
    x = x_test[:300]
    for flavour, la in fitted.items():
        before, prior = la._glm_predictive_distribution, la.prior_precision
        library = type(la)._glm_predictive_distribution.__get__(la)  # the library's method
        calls = []

        def counted(*a, **k):
            calls.append(1)
            return library(*a, **k)
        try:
            la._glm_predictive_distribution = counted
            ref_p = A.laplace_probs(la, x, batch_size=128)
            ref_s = A.laplace_samples(la, x, n_samples=7, batch_size=128, seed=3)
            assert len(calls) == 6  # 3 batches, twice
            A.share_glm_passes(la)
            calls.clear()
            assert torch.equal(A.laplace_probs(la, x, batch_size=128), ref_p)
            assert torch.equal(A.laplace_samples(la, x, n_samples=7, batch_size=128, seed=3),
                               ref_s)
            assert len(calls) == 3, flavour
            # another prior precision is another posterior: computed again
            la.prior_precision = prior * 2
            A.laplace_probs(la, x, batch_size=128)
            assert len(calls) == 6
            # a cache too small for one batch keeps only the latest: values still the same
            la.prior_precision = prior
            la._glm_predictive_distribution = counted
            A.share_glm_passes(la, max_bytes=1)
            calls.clear()
            assert torch.equal(A.laplace_probs(la, x, batch_size=128), ref_p)
            assert torch.equal(A.laplace_samples(la, x, n_samples=7, batch_size=128, seed=3),
                               ref_s)
            assert len(calls) == 6
        finally:
            la._glm_predictive_distribution, la.prior_precision = before, prior
