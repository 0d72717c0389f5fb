"""Notebook 05's readings, rendered from its records (helpers.uncertainty): planted records come
out as their numbers, and each reading's wording (orderings, "every method" / "all but ...",
under- or over-confident, at chance or not) follows the numbers, so that a different outcome
gives a different sentence. The last tests run every reading on the committed results."""
import json
import statistics
from pathlib import Path

import pytest
import torch

from helpers import uncertainty as U

ROOT = Path(__file__).resolve().parent.parent
KINDS = U.KINDS


def _m(vals):
    return {"per_seed": list(vals), "mean": statistics.fmean(vals),
            "sd": statistics.stdev(vals) if len(vals) > 1 else None}


def _summary(auroc, mi=None, ece=None, err=None, data="MNIST"):
    """{(data, kind): summary entry} from {kind: per-seed AUROCs} (and ECE, error, MI)."""
    out = {}
    for k, a in auroc.items():
        out[(data, k)] = {"seeds": list(range(len(a))), "auroc_entropy": _m(a),
                          "auroc_mi": None if k == "deterministic" or mi is None else _m(mi[k]),
                          "ece": _m((ece or {}).get(k, [0.005] * len(a))),
                          "test_error": _m((err or {}).get(k, [0.02] * len(a)))}
    return out


def _sweep(epochs, cap=50):
    return {"config": {"max_epochs": cap}, "metrics": {"chosen": {"epochs": epochs}}}


# ---- section 3: the deep ensemble's standing ----

def test_ensemble_text_ranks_the_ensemble_from_the_numbers():
    au = {"deterministic": (0.77, 0.78), "mc_dropout": (0.86, 0.88), "bbb": (0.93, 0.94),
          "ensemble": (0.80, 0.81)}
    mi = {k: (v[0] + 0.01, v[1] + 0.01) for k, v in au.items()}
    text = U.ensemble_text(_summary(au, mi), {"deterministic_mnist": _sweep(10)}, 5)
    assert "0.805 ± 0.007, ranks third of the 4" in text
    assert "below MC dropout's 0.870 and BBB's 0.935; above the deterministic network's 0.775" \
        in text
    assert "it reaches 0.815 ± 0.007" in text and "2 seeds" in text
    assert "Its 5 members" in text and "trained 10 of the 50 epochs allowed: short" in text
    # the ensemble on top, trained the whole cap: the words follow
    au["ensemble"] = (0.96, 0.97)
    text = U.ensemble_text(_summary(au, mi), {"deterministic_mnist": _sweep(50)}, 3)
    assert "ranks first of the 4" in text and "below" not in text
    assert "above the deterministic network's 0.775, MC dropout's 0.870 and BBB's 0.935" in text
    assert "all 50 epochs allowed" in text and "short" not in text


# ---- section 4: the entropy histograms ----

N_BINS = U.ENTROPY_BINS[2]


def _hist(first, high, total=1000):
    """A histogram with ``first`` images in bin 0, ``high`` from bin 20 (above 1.15 nats)
    and the rest in bin 5."""
    h = [0] * N_BINS
    h[0], h[20], h[5] = first, high, total - first - high
    return h


def _rel(bins):
    """Reliability record of 15 bins from {bin index: (accuracy, confidence, count)}."""
    rel = {"centres": [(i + 0.5) / 15 for i in range(15)], "accuracy": [None] * 15,
           "confidence": [None] * 15, "count": [0] * 15}
    for i, (a, c, k) in bins.items():
        rel["accuracy"][i], rel["confidence"][i], rel["count"][i] = a, c, k
    return rel


def _row(data, kind, seed, first_in=900, first_out=300, high_out=100, auroc=0.8, ece=0.005,
         err=0.02, rel=None):
    return {"data": data, "kind": kind, "seed": seed, "ood": U.OTHER[data],
            "entropy_hist_in": _hist(first_in, 0), "entropy_hist_out": _hist(first_out, high_out),
            "auroc_entropy": auroc, "ece": ece, "test_error": err,
            "reliability": rel or _rel({14: (0.99, 0.99, 950), 8: (0.6, 0.58, 50)})}


def _entropy_rows(fashion_ensemble_auroc):
    out0 = {"deterministic": 389, "mc_dropout": 220, "bbb": 85, "ensemble": 303}
    high = {"deterministic": 60, "mc_dropout": 360, "bbb": 235, "ensemble": 190}
    first_in = {"deterministic": 866, "mc_dropout": 915, "bbb": 797, "ensemble": 851}
    au = {"deterministic": (0.763, 0.791), "mc_dropout": (0.887, 0.866), "bbb": (0.927, 0.929),
          "ensemble": (0.786, 0.811)}
    rows = [_row("MNIST", k, s, first_in[k], out0[k], high[k], au[k][s])
            for k in KINDS for s in (0, 1)]
    fau = {"deterministic": 0.714, "mc_dropout": 0.818, "bbb": 0.839,
           "ensemble": fashion_ensemble_auroc}
    rows += [_row("FashionMNIST", k, 0, first_in[k] - 300, 100, 300, fau[k]) for k in KINDS]
    return rows


def test_entropy_text_reads_the_histograms_and_compares_the_training_sets():
    text = U.entropy_text(_entropy_rows(0.794), seed=0)
    assert "79.7 % (BBB) to 91.5 % (MC dropout) of the in-domain test images" in text
    assert "every method is almost certain on most in-domain images" in text
    assert ("holds 38.9 % for the deterministic network, 30.3 % for the deep ensemble, 22.0 % "
            "for MC dropout and 8.5 % for BBB") in text
    assert "the deterministic network classifies the most of them as some digit" in text
    assert "BBB the fewest" in text
    assert "36.0 % (MC dropout), 23.5 % (BBB), 19.0 % (deep ensemble) and 6.0 % (deterministic)" \
        in text
    assert "wider for every method" in text and "56.6 % of the in-domain images against 86.6 %" \
        in text
    # the ensemble's Fashion-MNIST AUROC lies between its MNIST seeds: not "every method"
    assert "for all but the deep ensemble (0.794, against 0.786 and 0.811)" in text
    assert "not every method separates the two sets less well" in text
    # below every MNIST seed: now every method
    text = U.entropy_text(_entropy_rows(0.70), seed=0)
    assert "for every method: every method separates the two sets less well" in text
    assert "all but" not in text


def test_entropy_text_follows_a_different_ordering():
    rows = [r for r in _entropy_rows(0.7) if r["data"] == "MNIST"]
    for r in rows:  # BBB now keeps the most unfamiliar images at entropy near 0
        if r["kind"] == "bbb":
            r["entropy_hist_out"] = _hist(700, 10)
            r["entropy_hist_in"] = _hist(300, 0)
    text = U.entropy_text(rows, seed=0)
    assert "BBB classifies the most of them" in text and "MC dropout the fewest" in text
    assert "all but BBB is almost certain on most in-domain images" in text
    assert "Trained on Fashion-MNIST" not in text  # one training set: no comparison


# ---- section 5: BBB's samples on single images ----

def _examples(spread):
    """20 samples of 3 in-domain images that agree, and 3 out-of-distribution images whose
    samples split between classes 2 and 5 when ``spread`` (else all pick class 3)."""
    S = 20
    agree = torch.zeros(S, 3, 10)
    agree[:, 0, 9], agree[:, 1, 2], agree[:, 2, 1] = 0.97, 0.99, 1.0
    agree[:10, 0, 9] = 0.95
    out = torch.zeros(S, 3, 10)
    out[:, :, 3] = 0.6
    out[:5, 2, 3] = 0.45
    if spread:
        out[:10, 0, 3], out[:10, 0, 2] = 0.1, 0.9
        out[10:, 1, 3], out[10:, 1, 5] = 0.05, 0.95
    return {"data": "FashionMNIST", "kind": "bbb",
            "examples": {"in_index": [0, 1, 2], "out_index": [0, 1, 2],
                         "in_probs": agree.tolist(), "out_probs": out.tolist()}}


def test_examples_text_says_whether_the_samples_agree():
    text = U.examples_text(_examples(True), ["ankle boot", "pullover", "trouser"],
                           ["7", "2", "1"], "Fashion-MNIST", "MNIST")
    assert ("On the Fashion-MNIST images (in domain) every weight sample picks the same class"
            in text)
    assert 'the ankle boot: all 20 samples pick class 9, "ankle boot", p(ankle boot) from 0.95 ' \
        "to 0.97" in text
    assert "the samples disagree on 2 of the 3 images" in text
    assert 'the 7: the samples\' top choices span 2 classes (2, 3; mean: class 2, "pullover")' \
        in text
    assert 'the 1: all 20 samples pick class 3, "dress", p(dress) from 0.45 to 0.60' in text
    text = U.examples_text(_examples(False), ["a", "b", "c"], ["7", "2", "1"], "Fashion-MNIST",
                           "MNIST")
    assert "disagree" not in text
    assert "On the MNIST images (out of distribution) every weight sample picks the same class" \
        in text


# ---- section 6: the reliability diagram ----

def _rel_rows(bbb_under):
    """Seed-0 rows: BBB under-confident (accuracy above confidence from bin 9 up) or
    over-confident; the others close to the diagonal."""
    b = ({14: (0.999, 0.996, 9100), 13: (0.97, 0.90, 300), 12: (0.95, 0.83, 160),
          11: (0.88, 0.77, 100), 9: (0.74, 0.63, 80), 7: (0.45, 0.50, 260)} if bbb_under else
         {14: (0.990, 0.998, 9500), 13: (0.85, 0.90, 300), 8: (0.50, 0.56, 200)})
    rows = []
    for k in KINDS:
        rel = _rel(b) if k == "bbb" else _rel({14: (0.996, 0.997, 9400), 13: (0.88, 0.90, 400),
                                                  8: (0.55, 0.56, 200)})  # 10,000 images each
        ece = (0.0095 if bbb_under else 0.0001) if k == "bbb" else 0.004
        rows.append(_row("MNIST", k, 0, ece=ece, err=0.016 + 0.001 * KINDS.index(k), rel=rel))
    return rows


def test_reliability_text_finds_the_side_of_the_diagonal():
    text = U.reliability_text(_rel_rows(True), seed=0)
    assert "test errors 1.60–1.90 %" in text
    assert "91.0 % to 94.0 % of each method's predictions fall in the top bin" in text
    assert "differ by at most 0.003" in text
    assert "The bins below 0.6 hold 2.0 % to 2.6 % of the images (at most 260 in one bin" in text
    assert "above its confidence in 5 of its 6 occupied bins (every one from confidence 0.63 up)" \
        in text
    assert "it is under-confident, right more often than it claims" in text
    assert "Its ECE at this seed, 0.0095, is the highest of the 4" in text
    text = U.reliability_text(_rel_rows(False), seed=0)
    assert "above its confidence in 0 of its 3 occupied bins" in text
    assert "it is over-confident, right less often than it claims" in text
    assert "94.0 % to 95.0 % of each method's predictions" in text
    assert "differ by at most 0.008" in text
    assert "the over-confident bins make 100 %" in text and "is the lowest of the 4" in text


# ---- section 7: the priors on 2-D data ----

def _acc(circles_laplace, moons_flat):
    priors = ("Normal", "Laplace", "Cauchy", "flat", "Laplace, s ~ half-Cauchy")
    acc = {("moons", p): 0.970 for p in priors}
    acc[("moons", "flat")] = moons_flat
    acc[("moons", "Laplace, s ~ half-Cauchy")] = 0.876
    acc.update({("circles", p): 0.992 for p in priors})
    acc[("circles", "Laplace")] = circles_laplace
    acc[("circles", "Cauchy")] = 0.994
    return acc


def test_prior_table_text_groups_the_priors_by_the_numbers():
    text = U.prior_table_text(_acc(0.483, 0.973), n_test=1000, steps=2000)
    assert "1 seed, 2,000 steps, 1,000 test points" in text
    assert "On the moons *Laplace, s ~ half-Cauchy* (0.876) falls behind; the other 4 fit about " \
        "equally well (0.970–0.973)." in text
    assert "On the circles *Laplace* (0.483) stays at chance" in text
    assert "the other 4 fit about equally well (0.992–0.994)" in text
    assert "may have collapsed onto its prior" in text and "with 1 seed and 2,000 steps" in text
    assert "No prior beats the plain Normal one beyond that noise" in text
    assert "+0.003 on the moons (*flat*, against 0.970) and +0.002 on the circles (*Cauchy*" in text
    # Laplace fits on the circles and the flat prior clearly beats Normal on the moons
    text = U.prior_table_text(_acc(0.990, 0.999), n_test=1000, steps=100)
    assert "at chance" not in text and "collapsed" not in text
    assert "On the circles every prior fits about equally well (0.990–0.994)" in text
    assert "Beyond that noise, on the moons *flat* beats the plain Normal prior" in text
    assert "+0.029 on the moons (*flat*, against 0.970)" in text


def test_weights_text_reads_the_draws():
    g = torch.Generator().manual_seed(0)
    z = torch.randn(10000, generator=g)
    draws = {("moons", "Normal"): z, ("moons", "flat"): 1.3 * z,
             ("circles", "Normal"): z, ("circles", "Laplace"): 0.1 * z,
             ("circles", "flat"): 4.0 * z}
    acc = {("moons", "Normal"): 0.97, ("moons", "flat"): 0.97, ("circles", "Normal"): 0.99,
           ("circles", "Laplace"): 0.49, ("circles", "flat"): 0.99}
    text = U.weights_text(draws, acc, n_test=1000)
    sd = float(z.std())
    assert f"On the moons the draws' standard deviations run from {sd:.2f} (*Normal*) to " \
        f"{1.3 * sd:.2f} (*flat*): a similar spread" in text
    far = float((4.0 * z).abs().gt(4).float().mean())
    assert "the widest is 40.0 times the narrowest" in text
    assert f"Beyond ±4 lie {100 * far:.1f} % (*flat*)" in text
    near = float((0.1 * z).abs().le(0.25).float().mean())
    assert f"The *Laplace* network, at chance in the table, has {100 * near:.1f} % of its draws " \
        "within ±0.25 of zero" in text
    acc[("circles", "Laplace")] = 0.95  # it fits: no "at chance"
    assert "at chance" not in U.weights_text(draws, acc, n_test=1000)


# ---- section 8: the conv net's expected error ----

def test_conv_error_text_counts_the_two_kinds_of_error():
    ee = torch.tensor([0.0] * 90 + [0.5] * 6 + [1.0] * 4)
    sd = torch.tensor([0.001] * 90 + [0.2] * 6 + [0.02] * 4)
    text = U.conv_error_text({"expected_error": ee, "std": sd})
    assert "Of the 100 test images, 90 no sample gets wrong (median std 0.001), 6 split the " \
        "samples (median std 0.200) and 4 every sample gets wrong (median std 0.020)" in text
    assert "a smaller median std" in text and "confidently wrong" in text
    sd = torch.tensor([0.001] * 90 + [0.02] * 6 + [0.2] * 4)
    text = U.conv_error_text({"expected_error": ee, "std": sd})
    assert "a larger median std" in text and "flags them as well" in text
    sd = torch.tensor([0.001] * 90 + [0.02] * 10)
    text = U.conv_error_text({"expected_error": ee, "std": sd})
    assert "the same median std as" in text and "does not tell the two kinds apart" in text


# ---- takeaways ----

def _v2(verdicts, interim=False):
    """A version-2 summary whose claims get ``verdicts`` (AUROC map, mc, ens; ECE map, mc,
    ens)."""
    claims = {"OOD AUROC (entropy)": [f"{r} < bbb on auroc_entropy" for r in
                                      ("map", "mc_dropout", "ensemble")],
              "test ECE": [f"bbb < {r} on ece" for r in ("map", "mc_dropout", "ensemble")]}
    it = iter(verdicts)
    return {"interim": interim, "seeds": list(range(10)),
            "families": {f: {c: {"verdict": next(it)} for c in cs} for f, cs in claims.items()}}


def _v1():
    au = {"deterministic": (0.77, 0.78), "mc_dropout": (0.86, 0.88), "bbb": (0.93, 0.94),
          "ensemble": (0.80, 0.81)}
    ece = {"deterministic": (0.005, 0.005), "mc_dropout": (0.004, 0.004),
           "bbb": (0.009, 0.0096), "ensemble": (0.003, 0.003)}
    return au, ece


def test_v1_takeaway_counts_what_version_2_upholds():
    au, ece = _v1()
    summary, rows = _summary(au, ece=ece), _rel_rows(True)
    nr = "not resolved at 10 seeds"
    text = U.v1_takeaway(summary, rows, _v2(["holds", "reversed", nr, nr, "holds", "holds"]))
    assert "(section 3, 2 seeds, no declared test) had BBB flagging unfamiliar images best " \
        "(mean AUROC 0.935; next MC dropout, 0.870)" in text
    assert "with the highest mean ECE (0.0093), under-confident on seed 0" in text
    assert "upholds 1 of 3 on OOD AUROC (entropy) (MAP: BBB better; MC dropout: BBB worse; " \
        f"deep ensemble (5): {nr})" in text
    assert "0 of 3 on test ECE" in text
    text = U.v1_takeaway(summary, rows, _v2(["holds"] * 3 + ["reversed"] * 3))
    assert "upholds 3 of 3 on OOD AUROC (entropy)" in text and "3 of 3 on test ECE" in text
    assert "version 2 has no final run yet" in U.v1_takeaway(summary, rows, None)
    assert "not complete" in U.v1_takeaway(summary, rows, _v2(["holds"] * 6, interim=True))
    au["mc_dropout"] = (0.95, 0.96)  # BBB no longer first; over-confident on seed 0
    text = U.v1_takeaway(_summary(au, ece=ece), _rel_rows(False), None)
    assert "behind MC dropout on the mean AUROC (0.935 against 0.955)" in text
    assert "over-confident on seed 0" in text


def test_search_takeaway_compares_with_notebook_06():
    au, _ = _v1()
    sweeps = {"deterministic_mnist": _sweep(10), "deterministic_fashionmnist": _sweep(15)}
    alt = {"config": {"chosen": {"map": {"epochs": 50}}},
           "metrics": {"rows": [{"method": "ensemble", "seeds": [0, 1, 2],
                                 "auroc_entropy": {"mean": 0.933}}]}}
    text = U.search_takeaway(sweeps, _summary(au), 5, alt)
    assert text.startswith("- The search space matters:")
    assert "stopped the single network at 10 of the 50 epochs allowed on MNIST (15 on " \
        "Fashion-MNIST)" in text
    assert "the deep ensemble of 5 such networks reaches an AUROC of 0.805 ± 0.007 here " \
        "(2 seeds)" in text
    assert "trains 50 epochs and its ensemble reaches 0.933 (3 seeds" in text
    alt["metrics"]["rows"][0]["auroc_entropy"]["mean"] = 0.70
    assert U.search_takeaway(sweeps, _summary(au), 5, alt).startswith(
        "- The search space did not help the ensemble here:")
    assert "notebook 06 trains MAP networks longer" in U.search_takeaway(sweeps, _summary(au), 5)
    text = U.search_takeaway({"deterministic_mnist": _sweep(50)}, _summary(au), 5)
    assert "let the single network train all 50 epochs allowed on MNIST" in text
    assert "stopped" not in text


# ---- on the committed results ----

@pytest.fixture
def committed(monkeypatch):
    monkeypatch.setenv("BBB_RESULTS_DIR", str(ROOT / "results"))
    path = ROOT / "results" / "05_uncertainty" / "ood.json"
    if not path.exists():
        pytest.skip("no committed results of notebook 05")
    return json.loads(path.read_text())


def test_readings_run_on_the_committed_results(committed):
    import helpers as H
    from helpers import ood_plan as O
    from helpers import sweep as S
    cfg = H.get_profile("05_uncertainty", committed["profile"])
    rows = committed["metrics"]["rows"]
    summary = U.summarise(rows)
    sweeps = S.ensure_sweeps("05_uncertainty", cfg, run_missing=False)
    ens = summary[("MNIST", "ensemble")]["auroc_entropy"]
    text = U.ensemble_text(summary, sweeps, cfg.ensemble_size)
    assert f"{ens['mean']:.3f} ± {ens['sd']:.3f}" in text
    assert f"{len(ens['per_seed'])} seeds" in text
    text = U.entropy_text(rows, seed=0, bins=committed["config"]["entropy_bins"])
    r = next(x for x in rows if (x["data"], x["kind"], x["seed"]) == ("MNIST", "bbb", 0))
    assert f"{100 * r['entropy_hist_out'][0] / sum(r['entropy_hist_out']):.1f} % for BBB" in text
    text = U.reliability_text(rows, seed=0)
    assert f"Its ECE at this seed, {r['ece']:.4f}" in text
    ex = next(x for x in rows if x["kind"] == "bbb" and "examples" in x)
    assert "weight sample" in U.examples_text(ex, ["a", "b", "c"], ["7", "2", "1"], "in", "out")
    v2 = O.load_summary()
    text = U.v1_takeaway(summary, rows, v2)
    assert f"{summary[('MNIST', 'bbb')]['auroc_entropy']['mean']:.3f}" in text
    alt = H.load_results("06_alternatives", "summary")
    text = U.search_takeaway(sweeps, summary, cfg.ensemble_size, alt)
    assert f"{ens['mean']:.3f}" in text
    assert f"{sweeps['deterministic_mnist']['metrics']['chosen']['epochs']} of the" in text


def test_prior_readings_run_on_the_committed_results(committed):
    import helpers as H
    from helpers.toy import TOY, build_toy
    rec = H.load_results("05_uncertainty", "priors_2d")
    toy = build_toy(rec["profile"], rec["config"]["n_train"], rec["config"]["steps"],
                    seed=rec["seed"])
    assert toy is not None
    models, acc, _ = toy
    text = U.prior_table_text(acc, rec["config"]["n_test"], rec["config"]["steps"])
    assert f"{acc[('circles', 'Laplace')]:.3f}" in text and f"{rec['config']['steps']:,} steps" \
        in text
    draws = U.last_layer_draws(models, TOY, ("Normal", "Laplace", "flat"), seed=rec["seed"])
    text = U.weights_text(draws, acc, rec["config"]["n_test"])
    assert f"{float(draws[('circles', 'flat')].std()):.2f}" in text
