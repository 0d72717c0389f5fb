"""helpers.stats against scipy.stats (an independent implementation) and against brute force."""
import itertools
import math

import numpy as np
import pytest
from scipy import stats as ss

from helpers import stats as S


@pytest.mark.parametrize("df", [1, 2, 3, 4.5, 9, 30, 250])
def test_t_distribution_matches_scipy(df):
    for t in (-40.0, -6.0, -2.2, -0.3, 0.0, 0.7, 1.96, 4.3, 12.0):
        assert S.t_cdf(t, df) == pytest.approx(ss.t.cdf(t, df), rel=1e-10, abs=1e-15)
        assert S.t_sf(t, df) == pytest.approx(ss.t.sf(t, df), rel=1e-10, abs=1e-15)
    for q in (0.001, 0.025, 0.3, 0.5, 0.8, 0.95, 0.975, 0.995, 0.9999):
        assert S.t_ppf(q, df) == pytest.approx(ss.t.ppf(q, df), rel=1e-10, abs=1e-12)


def test_t_distribution_rejects_bad_arguments():
    for df in (0, -1, math.nan, math.inf):
        with pytest.raises(ValueError, match="degrees of freedom"):
            S.t_sf(1.0, df)
    for q in (0.0, 1.0, 1.5):
        with pytest.raises(ValueError, match="q must be"):
            S.t_ppf(q, 3)


@pytest.mark.parametrize("n", [2, 3, 5, 10])
def test_mean_ci_matches_scipy(n):
    rng = np.random.default_rng(n)
    for _ in range(5):
        x = rng.normal(0.015, 0.001, n).tolist()
        for level in (0.9, 0.95, 0.99):
            m = S.mean_ci(x, level)
            lo, hi = ss.t.interval(level, n - 1, loc=np.mean(x), scale=ss.sem(x))
            assert m["mean"] == pytest.approx(np.mean(x), rel=1e-12)
            assert m["sd"] == pytest.approx(np.std(x, ddof=1), rel=1e-12)
            assert m["ci"] == pytest.approx([lo, hi], rel=1e-9)
            assert m["df"] == n - 1 and m["n"] == n and m["note"] is None


@pytest.mark.parametrize("n", [2, 3, 4, 7, 12])
def test_paired_t_matches_scipy(n):
    rng = np.random.default_rng(100 + n)
    for _ in range(5):
        a = rng.normal(0.014, 0.001, n)
        b = a + rng.normal(0.0005, 0.0008, n)
        res = S.paired_t(a.tolist(), b.tolist())
        ref = ss.ttest_rel(a, b)
        ci = ref.confidence_interval(0.95)
        assert res["t"] == pytest.approx(ref.statistic, rel=1e-9)
        assert res["p"] == pytest.approx(ref.pvalue, rel=1e-9)
        assert res["df"] == n - 1
        assert res["mean_diff"] == pytest.approx(np.mean(a - b), rel=1e-9)
        assert res["ci"] == pytest.approx([ci.low, ci.high], rel=1e-9)


def test_sign_test_matches_scipy_binomtest_and_drops_ties():
    for n in range(1, 16):
        for k in range(n + 1):
            a = [1.0] * k + [0.0] * (n - k) + [0.5, 0.5]  # two ties at the end
            b = [0.5] * (n + 2)
            res = S.sign_test(a, b)
            assert res["p"] == pytest.approx(ss.binomtest(k, n, 0.5).pvalue, rel=1e-12)
            assert (res["n_used"], res["ties_dropped"], res["a_higher"]) == (n, 2, k)
            assert res["note"] == "2 ties dropped"
    all_ties = S.sign_test([1.0, 2.0], [1.0, 2.0])
    assert all_ties["p"] == 1.0 and all_ties["n_used"] == 0 and "no test" in all_ties["note"]


def _wilcoxon_brute(d):
    """Two-sided p of W+ by enumerating every sign pattern (midranks for ties)."""
    d = [v for v in d if v != 0]
    ranks = ss.rankdata(np.abs(d))
    w = sum(r for r, v in zip(ranks, d) if v > 0)
    sums = [sum(r for r, s in zip(ranks, signs) if s) for signs in
            itertools.product((0, 1), repeat=len(d))]
    low = sum(s <= w + 1e-9 for s in sums) / len(sums)
    high = sum(s >= w - 1e-9 for s in sums) / len(sums)
    return min(1.0, 2 * min(low, high))


def test_wilcoxon_exact_matches_scipy_without_ties_and_brute_force_with_them():
    rng = np.random.default_rng(7)
    for n in range(3, 13):
        a, b = rng.normal(0, 1, n), rng.normal(0.3, 1, n)
        res = S.wilcoxon_exact(a.tolist(), b.tolist())
        assert res["p"] == pytest.approx(ss.wilcoxon(a, b, method="exact").pvalue, rel=1e-12)
        assert not res["ties_in_ranks"]
    tied = [0.3, -0.3, 0.3, 0.1, 0.0, -0.2, 0.2, 0.5]
    res = S.wilcoxon_exact(tied, [0.0] * len(tied))
    assert res["zeros_dropped"] == 1 and res["ties_in_ranks"] and res["n_used"] == 7
    assert res["p"] == pytest.approx(_wilcoxon_brute(tied), rel=1e-12)
    assert res["note"] == "1 zero difference dropped"


def _holm_rejects(ps, alpha):
    """Holm's procedure at level alpha, written out step by step."""
    order = sorted(range(len(ps)), key=lambda i: ps[i])
    rejected = set()
    for step, i in enumerate(order):
        if ps[i] <= alpha / (len(ps) - step):
            rejected.add(i)
        else:
            break
    return rejected


def test_holm_adjusted_p_rejects_exactly_what_the_procedure_rejects():
    rng = np.random.default_rng(3)
    for _ in range(200):
        m = int(rng.integers(1, 6))
        ps = (rng.uniform(0, 0.2, m) ** 2).tolist()
        adj = S.holm(ps)
        for alpha in (0.001, 0.01, 0.02, 0.05, 0.1):
            assert {i for i, p in enumerate(adj) if p <= alpha} == _holm_rejects(ps, alpha)
    assert S.holm([0.01, 0.04, 0.03]) == pytest.approx([0.03, 0.06, 0.06])
    # an untestable member still counts in the family (as p = 1 would)
    assert S.holm([0.01, None]) == [0.02, None]
    with pytest.raises(ValueError, match="not in"):
        S.holm([0.5, 1.2])


def test_small_samples_and_no_spread_give_no_interval_and_no_verdict():
    one = S.mean_ci([0.014])
    assert one["ci"] is None and one["sd"] is None and "one value" in one["note"]
    flat = S.mean_ci([0.014, 0.014, 0.014])
    assert flat["ci"] is None and flat["sd"] == 0.0 and "no spread" in flat["note"]
    assert S.vs_published([0.014], 0.0136)["verdict"] == "not resolved at 1 seed"
    assert S.vs_published([0.014] * 3, 0.0136)["verdict"] == "not resolved at 3 seeds"
    t = S.paired_t([0.01, 0.02], [0.02, 0.03])  # every difference the same
    assert t["p"] is None and t["ci"] is None and "no test" in t["note"]
    assert S.ordering([0.01, 0.02], [0.02, 0.03])["verdict"] == "not resolved at 2 seeds"
    assert S.ordering([0.01], [0.02])["verdict"] == "not resolved at 1 seed"
    assert S.comparable([0.01], [0.01], 0.001)["verdict"] == "not shown comparable at 1 seed"
    assert S.ordering([1.0], [2.0], n_unit="run")["verdict"] == "not resolved at 1 run"


def test_bad_input_is_a_clear_error():
    with pytest.raises(ValueError, match="not finite"):
        S.mean_ci([0.01, math.nan])
    with pytest.raises(ValueError, match="not finite"):
        S.paired_t([0.01, 0.02], [0.01, math.inf])
    with pytest.raises(ValueError, match="equal lengths"):
        S.paired_t([0.01, 0.02, 0.03], [0.01, 0.02])
    with pytest.raises(ValueError, match="equal lengths"):
        S.sign_test([0.01], [0.01, 0.02])
    with pytest.raises(ValueError, match="no values"):
        S.mean_ci([])
    with pytest.raises(ValueError, match="not a number"):
        S.mean_ci([0.01, "0.02"])
    with pytest.raises(ValueError, match="not a number"):
        S.mean_ci([True, False])
    with pytest.raises(ValueError, match="alpha"):
        S.vs_published([0.01, 0.02], 0.01, alpha=0)
    with pytest.raises(ValueError, match="margin"):
        S.comparable([0.01, 0.02], [0.01, 0.03], margin=0)


def test_vs_published_words():
    x = [0.0140, 0.0145, 0.0150]  # mean 1.45 %, 95 % interval about 1.33-1.57 %
    lo, hi = ss.t.interval(0.95, 2, loc=np.mean(x), scale=ss.sem(x))
    res = S.vs_published(x, 0.0136, scale=100, unit=" pp")
    assert res["verdict"] == "matches the paper" and res["ci"] == pytest.approx([lo, hi])
    assert S.vs_published(x, 0.0183, scale=100, unit=" pp")["verdict"] == \
        "better than the paper by 0.38 pp"
    assert S.vs_published(x, 0.0110, scale=100, unit=" pp")["verdict"] == \
        "worse than the paper by 0.35 pp"
    # higher is better (an accuracy): the same gap reads the other way
    assert S.vs_published(x, 0.0183, scale=100, unit=" pp", lower_is_better=False)["verdict"] \
        == "worse than the paper by 0.38 pp"
    # the published value just outside the interval, on each side
    assert S.vs_published(x, hi + 1e-9)["verdict"].startswith("better")
    assert S.vs_published(x, lo - 1e-9)["verdict"].startswith("worse")
    assert S.vs_published(x, hi - 1e-9)["verdict"] == "matches the paper"
    assert S.vs_published(x, 0.02, name="Table 2")["verdict"].endswith("than Table 2 by 0.01")


def test_ordering_words_and_the_holm_family():
    a = [0.0140, 0.0142, 0.0139, 0.0141, 0.0140]
    b = [0.0160, 0.0158, 0.0161, 0.0162, 0.0159]
    assert S.ordering(a, b)["verdict"] == "holds"
    assert S.ordering(b, a)["verdict"] == "reversed"
    noisy = [0.0150, 0.0130, 0.0170, 0.0135, 0.0165]
    res = S.ordering(a, noisy)
    assert res["verdict"] == "not resolved at 5 seeds" and res["p_used"] > 0.05
    assert res["sign_test"]["n_used"] == 5
    # a claim significant alone (p about 0.03) is not resolved in a family of three
    c, d = [1.0, 2.0, 3.5], [1.5, 2.3, 4.1]
    alone = S.ordering(c, d)
    assert alone["verdict"] == "holds" and 0.025 < alone["p_used"] < 0.05
    fam = S.ordering_family({"c<d": (c, d), "a<b": (a, b), "a<noisy": (a, noisy)})
    assert fam["a<b"]["verdict"] == "holds"
    assert fam["c<d"]["verdict"] == "not resolved at 3 seeds"
    assert fam["c<d"]["p_holm"] == pytest.approx(min(1, 2 * alone["p_used"]))
    assert fam["a<b"]["family_size"] == 3
    # an untestable claim stays in the family and says so
    fam = S.ordering_family({"one": ([1.0], [2.0]), "c<d": (c, d)})
    assert fam["one"]["verdict"] == "not resolved at 1 seed" and fam["one"]["p_holm"] is None
    assert fam["c<d"]["p_holm"] == pytest.approx(2 * alone["p_used"])
    fam = S.ordering_family({"later": None, "c<d": (c, d)})
    assert fam["later"]["verdict"] == "not measured yet" and fam["later"]["family_size"] == 2
    assert fam["c<d"]["p_holm"] == pytest.approx(2 * alone["p_used"])


def test_comparable_needs_the_whole_interval_inside_the_margin():
    a = [0.0140, 0.0142, 0.0139, 0.0141, 0.0140]
    b = [x + 0.0001 for x in a]
    b[0] += 0.00002
    res = S.comparable(a, b, margin=0.001)
    assert res["verdict"] == "comparable"
    lo, hi = res["t_test"]["ci"]
    assert -0.001 <= lo and hi <= 0.001
    assert S.comparable(a, b, margin=0.00005)["verdict"] == "not shown comparable at 5 seeds"
    wide = [0.0150, 0.0130, 0.0170, 0.0135, 0.0165]
    assert S.comparable(a, wide, margin=0.001)["verdict"] == "not shown comparable at 5 seeds"


def test_hodges_lehmann_and_the_exact_wilcoxon_interval():
    from helpers.stats import hodges_lehmann, wilcoxon_interval
    d = [1.0, 2.0, 4.0]
    # Walsh averages of (1, 2, 4): 1, 1.5, 2, 2.5, 3, 4 -> median 2.25
    assert hodges_lehmann(d, [0.0] * 3) == 2.25
    a = [3.1, -0.4, 2.2, 5.0, 1.7, 0.9, -1.3, 4.4, 2.8, 0.2]
    b = [0.0] * 10
    got = wilcoxon_interval(a, b)
    walsh = sorted((a[i] + a[j]) / 2 for i in range(10) for j in range(i, 10))
    assert len(walsh) == 55 and (got["low"], got["high"]) == (walsh[8], walsh[46])
    assert abs(got["coverage"] - (1 - 2 * 25 / 1024)) < 1e-12
    # a shift moves the estimate and the interval by the shift; the level widens it
    moved = wilcoxon_interval([v + 10 for v in a], b)
    assert abs(moved["low"] - got["low"] - 10) < 1e-9 and abs(moved["estimate"] -
                                                               got["estimate"] - 10) < 1e-9
    wide = wilcoxon_interval(a, b, level=0.99)
    assert wide["low"] < got["low"] and wide["high"] > got["high"]
    # the interval excludes 0 exactly when the exact test rejects at 5 % (no ties, no zeros)
    from helpers.stats import wilcoxon_exact
    for shift in (-2.0, -0.5, 0.0, 0.7, 1.5, 3.0):
        x = [v + shift for v in a]
        iv, p = wilcoxon_interval(x, b), wilcoxon_exact(x, b)["p"]
        assert (iv["low"] > 0 or iv["high"] < 0) == (p < 0.05), shift
    assert wilcoxon_interval([1.0, 2.0], [0.0, 0.0])["low"] is None


def test_bonferroni_interval_is_the_t_interval_at_the_adjusted_level():
    a = [0.0150, 0.0146, 0.0139, 0.0152, 0.0141]
    b = [0.0155, 0.0158, 0.0147, 0.0160, 0.0149]
    d = np.subtract(a, b)
    for m in (1, 2, 3):
        lo, hi = S.bonferroni_interval(a, b, m)
        q = ss.t.ppf(1 - 0.05 / (2 * m), len(d) - 1)
        half = q * d.std(ddof=1) / math.sqrt(len(d))
        assert (lo, hi) == pytest.approx((d.mean() - half, d.mean() + half), rel=1e-9)
    assert S.bonferroni_interval(a, b, 1) == pytest.approx(tuple(S.paired_t(a, b)["ci"]))
    assert S.bonferroni_interval(a, b, 3)[0] < S.bonferroni_interval(a, b, 2)[0]
    assert S.bonferroni_interval([1.0], [0.0], 3) is None
    with pytest.raises(ValueError, match="m must be"):
        S.bonferroni_interval(a, b, 0)


def test_holm_rejects_whenever_the_bonferroni_interval_excludes_zero():
    rng = np.random.default_rng(0)
    for _ in range(200):
        fam = [(list(rng.normal(s, 1, 5)), [0.0] * 5) for s in rng.normal(0, 1.5, 3)]
        adj = S.holm([S.paired_t(a, b)["p"] for a, b in fam])
        for (a, b), p in zip(fam, adj):
            lo, hi = S.bonferroni_interval(a, b, 3)
            assert (lo > 0 or hi < 0) == (3 * S.paired_t(a, b)["p"] < 0.05)
            if lo > 0 or hi < 0:
                assert p < 0.05


def test_holm_p_needed_is_the_bar_at_the_claims_own_step():
    """The raw p a new claim needs is decided by its place in Holm's order: with two others
    at 0.001 and 0.5 it comes second (bar 0.05/2); with others at 0.5 it must come first (0.05/3);
    with none it is alpha. At the bar the claim holds; just above it, it does not."""
    for others, bar in (([0.001, 0.5], 0.025), ([0.5, 0.6], 0.05 / 3), ([], 0.05)):
        got = S.holm_p_needed(others)
        assert got == pytest.approx(bar, rel=1e-9)
        assert S.holm([got * (1 - 1e-9)] + others)[0] < 0.05
        if got < 1:
            assert S.holm([got * (1 + 1e-6)] + others)[0] >= 0.05
