"""helpers.bandit_v3_report: the declared analysis of the mushroom-bandit plan v3, checked on
hand-made records against values computed by hand, by enumeration or with scipy."""
import itertools
import math
import statistics

import numpy as np
import pytest
import torch

from helpers import bandit_campaign as BC
from helpers import bandit_v3_report as R
from helpers import stats as S

SEEDS10 = list(range(4, 14))


def rec(tier, stage, agent, seed, final, *, steps=20, every=5, profile="smoke", setting=None,
        cpu_s=1.0, **extra):
    """A run record of helpers.bandit_campaign's schema; cumulative regret rises linearly to
    ``final``."""
    n = steps // every
    return {"plan_version": 3, "profile": profile, "tier": tier, "stage": stage, "agent": agent,
            "seed": seed, "steps": steps, "setting": setting or {}, "run_id": f"{agent}_s{seed}",
            "record_every": every, "final_regret": float(final),
            "cum_regret": [final * (i + 1) / n for i in range(n)], "poison_rate": [0.1] * n,
            "mean_sigma": None, "sigma_layers": None, "cpu_s": cpu_s, **extra}


def tier_records(tier, finals, seeds=SEEDS10, profile=None, **kw):
    """Reported records from {agent: [final regret per seed]}."""
    profile = profile or ("default" if seeds == SEEDS10 else "smoke")
    return [rec(tier, "reported", a, s, v, profile=profile, **kw)
            for a, vals in finals.items() for s, v in zip(seeds, vals)]


BBB = [5000.0 + 130 * i for i in range(10)]
PAPER = {  # differences bbb - other: greedy all negative, eps1 all positive, eps5 mixed
    "bbb": BBB,
    "greedy": [b + 100 * (i + 1) for i, b in enumerate(BBB)],
    "eps1": [b - 37 * (i + 1) for i, b in enumerate(BBB)],
    "eps5": [b + (-1) ** i * 11 * (i + 1) for i, b in enumerate(BBB)],
    "bbb_one_draw": [b + 10 * (i + 1) ** 1.5 for i, b in enumerate(BBB)],
}


def _by(rows, key="other"):
    return {r[key]: r for r in rows}


def _wilcoxon_by_enumeration(d):
    """Two-sided exact signed-rank p of differences without zeros or ties in |d|."""
    ranks = {v: i + 1 for i, v in enumerate(sorted(abs(x) for x in d))}
    w = sum(ranks[abs(x)] for x in d if x > 0)
    sums = [sum(r for r, s in zip(range(1, len(d) + 1), signs) if s)
            for signs in itertools.product((0, 1), repeat=len(d))]
    lo, hi = sum(s <= w for s in sums), sum(s >= w for s in sums)
    return min(1.0, 2 * min(lo, hi) / len(sums))


def _holm_by_hand(ps):
    order = sorted(range(len(ps)), key=lambda i: ps[i])
    out, running = [0.0] * len(ps), 0.0
    for step, i in enumerate(order):
        running = max(running, min(1.0, (len(ps) - step) * ps[i]))
        out[i] = running
    return out


def test_wilcoxon_p_and_holm_match_independent_references():
    rows = _by(R.comparisons(tier_records("paper", PAPER), "paper"))
    assert list(rows) == ["greedy", "eps1", "eps5", "bbb_one_draw"]
    scipy_stats = pytest.importorskip("scipy.stats")
    for other in rows:
        d = [a - b for a, b in zip(PAPER["bbb"], PAPER[other])]
        ref = scipy_stats.wilcoxon(PAPER["bbb"], PAPER[other], method="exact").pvalue
        assert rows[other]["p"] == pytest.approx(ref, rel=1e-12)
        assert rows[other]["p"] == pytest.approx(_wilcoxon_by_enumeration(d), rel=1e-12)
    main = ["greedy", "eps1", "eps5"]  # the paper tier's family: 3 tests
    for other, p in zip(main, _holm_by_hand([rows[a]["p"] for a in main])):
        assert rows[other]["p_holm"] == pytest.approx(p, rel=1e-12)
        assert rows[other]["family_size"] == 3
    assert rows["greedy"]["p"] == pytest.approx(2 / 1024)
    assert rows["greedy"]["p_holm"] == pytest.approx(3 * 2 / 1024)
    # the ablation is a family of one: unadjusted
    assert rows["bbb_one_draw"]["family_size"] == 1
    assert rows["bbb_one_draw"]["p_holm"] == rows["bbb_one_draw"]["p"] == pytest.approx(2 / 1024)


def test_verdict_words_and_the_papers_differences():
    rows = _by(R.comparisons(tier_records("paper", PAPER), "paper"))
    assert rows["greedy"]["verdict"] == "BBB lower"
    assert rows["eps1"]["verdict"] == "BBB higher"
    assert rows["eps5"]["verdict"] == "not resolved at 10 seeds"
    assert rows["bbb_one_draw"]["verdict"] == "BBB lower"
    d = [a - b for a, b in zip(PAPER["bbb"], PAPER["greedy"])]  # -100, -200, ..., -1000
    # Hodges-Lehmann: the Walsh averages -50 (i + j + 2), i <= j, have median -550
    assert rows["greedy"]["hl"] == -550.0
    assert rows["greedy"]["bbb_lower_on"] == 10
    assert rows["greedy"]["mean_diff"] == pytest.approx(statistics.fmean(d))
    # the paper's bbb - other at 50k: 5,700 - 8,200 (greedy), - 18,500 (eps1), - 39,100 (eps5)
    assert [rows[a]["paper_diff"] for a in rows] == [-2500, -12800, -33400, None]
    lo, hi = rows["greedy"]["ci"]
    assert -1000 <= lo <= -550 <= hi <= -100
    assert rows["greedy"]["ci_excludes_paper"] is True  # -2,500 lies outside [-1000, -100]
    assert rows["greedy"]["t_excludes_paper"] is True
    assert rows["bbb_one_draw"]["ci_excludes_paper"] is None
    claim = R.paper_claim(tier_records("paper", PAPER))
    assert claim["claim"] == "reversed"  # BBB higher than eps1
    lower = {**PAPER, "eps1": PAPER["greedy"], "eps5": PAPER["greedy"]}
    assert R.paper_claim(tier_records("paper", lower))["claim"] == "holds"
    mixed = {**PAPER, "eps1": PAPER["eps5"]}
    assert R.paper_claim(tier_records("paper", mixed))["claim"] == "not resolved at 10 seeds"


def test_holm_can_turn_a_raw_p_below_005_into_not_resolved():
    # W+ = 5 on 10 seeds (positive differences at ranks 2 and 3): p = 2 * 10 / 1024 = 0.0195
    d = [-1, 2, 3, -4, -5, -6, -7, -8, -9, -10]
    moderate = {a: [b - x for b, x in zip(BBB, d)] for a in PAPER if a != "bbb"}
    rows = _by(R.comparisons(tier_records("paper", {"bbb": BBB, **moderate}), "paper"))
    for a in ("greedy", "eps1", "eps5"):
        assert rows[a]["p"] == pytest.approx(20 / 1024)
        assert rows[a]["p_holm"] == pytest.approx(3 * 20 / 1024)  # 0.059
        assert rows[a]["verdict"] == "not resolved at 10 seeds"
    # the same p in the ablation's family of one stays below 0.05
    assert rows["bbb_one_draw"]["verdict"] == "BBB lower"
    assert rows["greedy"]["hl"] < 0 and rows["greedy"]["ci"][0] < 0


def test_showdown_family_has_six_tests_and_no_papers_values():
    agents = R.AGENTS["showdown"]
    finals = {a: [b + 7 * i * (j + 1) for j, b in enumerate(BBB)] for i, a in enumerate(agents)}
    recs = tier_records("showdown", finals)
    rows = R.comparisons(recs, "showdown")
    assert [r["other"] for r in rows] == list(agents[1:])
    assert all(r["family_size"] == 6 and r["paper_diff"] is None for r in rows)
    assert all(r["paper_50k"] is None for r in R.final_table(recs, "showdown"))


def test_hodges_lehmann_interval_inverts_the_wilcoxon_test():
    a = [3.1, 9.4, 1.2, 7.7, 4.05, 12.6, 8.3, 2.25, 6.9, 30.0]
    b = [0.0] * 10
    out = R.wilcoxon_interval(a, b)
    walsh = sorted((a[i] + a[j]) / 2 for i in range(10) for j in range(i, 10))
    assert len(walsh) == 55 and out["hl"] == statistics.median(walsh)
    # P(W+ <= 8) = 25 / 1024 <= 0.025 < P(W+ <= 9) = 33 / 1024 at n = 10: ranks 9 and 47
    assert out["ci"] == [walsh[8], walsh[46]]
    assert out["level_achieved"] == pytest.approx(1 - 50 / 1024)
    # an independent reading: a shift is inside the interval exactly when the exact test of
    # a - shift does not reject at 0.05 (helpers.stats.wilcoxon_exact), checked between
    # consecutive Walsh averages
    mids = [(u + v) / 2 for u, v in zip(walsh, walsh[1:]) if u != v]
    accepted = [m for m in mids if S.wilcoxon_exact([x - m for x in a], b)["p"] > 0.05]
    assert min(accepted) > out["ci"][0] and max(accepted) < out["ci"][1]
    assert all(S.wilcoxon_exact([x - m for x in a], b)["p"] <= 0.05 for m in mids
               if not out["ci"][0] < m < out["ci"][1])
    # too few pairs for a 95 % interval: none, not a fake one
    assert R.wilcoxon_interval([1.0, 2.0, 3.0], [0.0] * 3)["ci"] is None
    assert R.wilcoxon_interval(a[:6], b[:6])["ci"] == [min(a[:6]), max(a[:6])]  # 1 - 2/64


def test_lowest_on_k_counts_ties_for_each_agent():
    finals = {"bbb": [100, 90], "greedy": [100, 80], "eps1": [200, 50], "eps5": [300, 400],
              "bbb_one_draw": [1, 1]}  # the ablation is no contestant
    rows = _by(R.final_table(tier_records("paper", finals, seeds=[4, 5]), "paper"), "agent")
    assert {a: rows[a]["lowest_k"] for a in rows} == {"bbb": 1, "greedy": 1, "eps1": 1,
                                                      "eps5": 0, "bbb_one_draw": None}
    assert rows["bbb"]["n"] == 2 and rows["bbb"]["seeds"] == [4, 5]
    assert rows["bbb"]["paper_50k"] == 5700 and rows["bbb_one_draw"]["paper_50k"] is None


def test_final_table_summaries_by_hand():
    rows = _by(R.final_table(tier_records("paper", PAPER), "paper"), "agent")
    b = rows["bbb"]
    assert b["mean"] == pytest.approx(5585.0)
    assert b["sd"] == pytest.approx(130 * math.sqrt(sum((i - 4.5) ** 2 for i in range(10)) / 9))
    assert b["median"] == pytest.approx(5585.0)
    # type-7 quartiles of 5000, 5130, ..., 6170: position 1 + 0.25 * 9 = 3.25
    assert b["q1"] == pytest.approx(5000 + 130 * 2.25)
    assert b["q3"] == pytest.approx(5000 + 130 * 6.75)
    assert b["q1"] == pytest.approx(np.percentile(PAPER["bbb"], 25))


def test_refuses_unequal_seed_sets_missing_agents_and_undeclared_seeds():
    recs = tier_records("paper", PAPER)
    short = [r for r in recs if not (r["agent"] == "eps1" and r["seed"] == 13)]
    for fn in (R.final_table, R.comparisons):
        with pytest.raises(ValueError, match=r"seed set.*'eps1': \[13\]"):
            fn(short, "paper")
    with pytest.raises(ValueError, match="no reported records of \\['bbb_one_draw'\\]"):
        R.final_table([r for r in recs if r["agent"] != "bbb_one_draw"], "paper")
    with pytest.raises(ValueError, match="declares"):  # default profile: seeds 4-13 only
        R.final_table(tier_records("paper", PAPER, seeds=list(range(0, 10)),
                                   profile="default"), "paper")
    with pytest.raises(ValueError, match="two reported records"):
        R.final_table(recs + recs[:1], "paper")
    with pytest.raises(ValueError, match="plan version"):
        R.final_table([{**r, "plan_version": 2} for r in recs], "paper")


def test_tuning_and_why_records_cannot_change_the_reported_analysis():
    recs = tier_records("paper", PAPER)
    before = (R.final_table(recs, "paper"), R.comparisons(recs, "paper"),
              R.paper_claim(recs))
    noise = [rec("paper", stage, a, s, -1e6 * (s + 1), profile="default")
             for stage, seeds in (("screen", [100, 101]), ("confirm", [102, 103]),
                                  ("why", [100, 101]))
             for a in PAPER for s in seeds]
    noise += tier_records("showdown", {a: [1.0] * 10 for a in R.AGENTS["showdown"]})
    mixed = noise[:7] + recs + noise[7:]
    assert (R.final_table(mixed, "paper"), R.comparisons(mixed, "paper"),
            R.paper_claim(mixed)) == before
    # ... while a reported number does change them (the check is not vacuous)
    moved = [dict(r, final_regret=0.0) if r["agent"] == "eps1" and r["seed"] == 4 else r
             for r in recs]
    assert R.final_table(moved, "paper") != before[0]


def test_aim_is_read_on_the_mean_with_its_t_interval():
    def aim(values):
        return R.paper_claim(tier_records("paper", {**PAPER, "bbb": values}))["aim"]
    high = aim([6000.0 + 100 * i for i in range(10)])     # mean 6,450, every seed above 5,700
    assert high["verdict"] == "worse than the paper by 750"
    assert high["median"] == 6450.0 and (high["q1"], high["q3"]) == (6225.0, 6675.0)
    half = 2.2621571627409915 * 100 * math.sqrt(sum((i - 4.5) ** 2 for i in range(10)) / 9) \
        / math.sqrt(10)  # t(0.975, 9) x sd / sqrt(10)
    assert high["ci"] == pytest.approx([6450 - half, 6450 + half], rel=1e-9)
    assert aim([4000.0 + 100 * i for i in range(10)])["verdict"] == \
        "better than the paper by 1250"
    assert aim([5200.0 + 100 * i for i in range(10)])["verdict"] == "matches the paper"


def _tuning(pl, value):
    """Screen, confirm and edge records of the paper tier, final regret ``value(run)``."""
    one = R._one_tier(pl, "paper")

    def mk(runs):
        return [rec(r.tier, r.stage, r.agent, r.seed, value(r), steps=r.steps,
                    setting=r.settings) for r in runs]
    recs = mk(BC.stage_runs(one, "screen"))
    recs += mk(BC.stage_runs(one, "confirm", BC.choose(one, recs, "screen")))
    return recs, mk(BC.stage_runs(one, "edge", BC.choose(one, recs, "confirm")))


def test_choice_table_reads_the_tuning_through_choose():
    pl = BC.plan("smoke")
    fam = pl["tiers"]["paper"]["families"]["bbb"]["settings"]

    def value(run, ext_best=None):
        s = run.settings
        if s not in fam:   # an edge extension: 60 + its place among the extensions
            return 10.0 if ext_best == s else 60.0 + run.seed % 2
        i = fam.index(s) if run.agent == "bbb" else 0
        if run.stage == "screen":  # extrapolated: R(10) + 2 (R(10) - R(5)) = 2 x final here
            return 10.0 * (len(fam) - i) + (run.seed - 100)
        return 50.0 - i + (run.seed - 102)
    tuning, edge = _tuning(pl, value)
    rows = [r for r in R.choice_table(pl, tuning + edge, "paper") if r["agent"] == "bbb"]
    grid = [r for r in rows if r["source"] == "grid"]
    assert [r["setting"] for r in grid] == fam
    assert [r["screen_score"] for r in grid] == [81.0, 61.0, 41.0, 21.0]
    assert [r["screen_rank"] for r in grid] == [4, 3, 2, 1]
    top = BC.choose(R._one_tier(pl, "paper"), tuning, "screen")["paper"]["bbb"]["top"]
    assert [r["confirmed"] for r in grid] == [s in top for s in fam] and sum(
        r["confirmed"] for r in grid) == pl["tuning"]["confirmed"]
    # confirm means over the 4 tuning seeds: 50 - i + mean(-2, -1, 0, 1)
    assert [r["confirm_mean"] for r in grid] == [49.5 - i if fam[i] in top else None
                                                for i in range(4)]
    best = max(i for i in range(4) if fam[i] in top)  # the lowest confirm mean
    assert [r["chosen"] for r in grid] == [i == best for i in range(4)]
    # smoke grids have two values per factor: the chosen setting sits at every ordered edge
    assert grid[best]["at_edge"] == ["rho_init", "lr", "noise_sigma"]
    ext = [r for r in rows if r["source"] != "grid"]
    assert [r["source"] for r in ext] == ["edge: rho_init " + ("low" if fam[best]["rho_init"]
                                                              == -5.0 else "high"),
                                          "edge: lr " + ("low" if fam[best]["lr"] == 1e-3
                                                         else "high"),
                                          "edge: noise_sigma " + (
                                              "low" if fam[best]["noise_sigma"] == 1.0
                                              else "high")]
    assert [r["edge_mean"] for r in ext] == [60.5] * 3 and not any(r["chosen"] for r in ext)
    assert all(r["decided"] == "edge" for r in rows)
    # an extension that does better becomes the choice
    moved = ext[1]["setting"]
    _, edge2 = _tuning(pl, lambda run: value(run, ext_best=moved))
    rows2 = [r for r in R.choice_table(pl, tuning + edge2, "paper") if r["agent"] == "bbb"]
    assert [r["setting"] for r in rows2 if r["chosen"]] == [moved]
    # records of a reported seed (any stage) cannot move it
    noise = [dict(r, seed=4, stage=st, final_regret=-1e9) for r in tuning + edge
             for st in ("screen", "confirm", "edge", "reported")]
    assert R.choice_table(pl, tuning + edge + noise, "paper") == \
        R.choice_table(pl, tuning + edge, "paper")
    # before the edge stage: the confirm choice; before the confirm stage: no choice
    conf = R.choice_table(pl, tuning, "paper")
    assert {r["decided"] for r in conf} == {"confirm"}
    assert [r["chosen"] for r in conf if r["agent"] == "bbb" and r["source"] == "grid"] == \
        [i == best for i in range(4)]
    screen = R.choice_table(pl, [r for r in tuning if r["stage"] == "screen"], "paper")
    assert not any(r["chosen"] for r in screen) and {r["decided"] for r in screen} == {"screen"}
    with pytest.raises(ValueError, match="need"):
        R.choice_table(pl, [r for r in tuning if r["seed"] != 101], "paper")


def _smoke_reported():
    finals = {"paper": {a: [100.0 + 10 * i, 120.0 + 5 * i] for i, a in
                        enumerate(R.AGENTS["paper"] + R.ABLATIONS["paper"])},
              "showdown": {a: [90.0 + 7 * i, 95.0 + 3 * i] for i, a in
                           enumerate(R.AGENTS["showdown"])}}
    return [r for t in BC.TIERS for r in tier_records(t, finals[t], seeds=[4, 5])]


def test_figure6_has_one_log_panel_per_tier(tmp_path):
    import matplotlib.pyplot as plt
    fig = R.figure6(_smoke_reported())
    assert len(fig.axes) == 2
    assert all(ax.get_yscale() == "log" for ax in fig.axes)
    assert len(fig.axes[1].get_legend().get_texts()) == len(R.AGENTS["showdown"]) + 1
    fig.savefig(tmp_path / "f6.png")
    plt.close(fig)
    half = [r for r in _smoke_reported() if r["tier"] == "paper"]
    fig = R.figure6(half)  # a tier without records: an empty panel, still two
    assert len(fig.axes) == 2
    plt.close(fig)


def _why_record(variant, seed, steps=20, every=5, rho=-5.0):
    n = steps // every
    sig = [[0.006 - 0.0005 * i - 0.0001 * k for k in range(5)] for i in range(n)]
    return rec("paper", "why", "bbb", seed, 40.0 * n, steps=steps, every=every,
               setting={"variant": variant, "rho_init": rho}, sigma_layers=sig,
               sigma_q=[[[0.5 * v, v / (1 + i), 2 * v] for v in row] for i, row in enumerate(sig)],
               kl=[1000.0 * (i + 1) for i in range(n)], kl_n=[4096] * n,
               kl_se=[0.0] * n, nll_q=[2.5] * n, pred_sd=[0.3] * n,
               nll=[2.0 - 0.1 * i for i in range(n)], poison_rate=[0.4, 0.2, 0.1, 0.3][:n])


def _greedy_reference(seed):
    return rec("paper", "why", "greedy", seed, 100.0, setting={"variant": "greedy_reference",
                                                               "lr": 1e-3})


def test_why_rows_by_hand():
    recs = [_why_record("paper_capacity", 104), _why_record("paper_seen", 104, rho=-4.0)]
    rows = R.why_rows(recs + [_greedy_reference(104)] + _smoke_reported(), points=(10, 20, 25),
                      poison_window=10, regret_window=10)
    assert [(r["variant"], r["step"]) for r in rows] == [
        ("paper_capacity", 10), ("paper_capacity", 20), ("paper_seen", 10), ("paper_seen", 20),
        ("greedy_reference", 10), ("greedy_reference", 20)]
    assert rows[4]["sigma_layers"] is None and rows[4]["kl_over_n"] is None
    assert rows[5]["regret_added"] == pytest.approx(50.0)  # 100 at 20 minus 50 at 10
    r = rows[1]  # step 20: record index 3
    s0 = math.log(1 + math.exp(-5.0))
    assert r["sigma_init"] == pytest.approx(s0)
    assert r["sigma_layers"] == pytest.approx([0.006 - 0.0015 - 0.0001 * k for k in range(5)])
    assert r["sigma_ratio"][0] == pytest.approx(0.0045 / s0)
    assert r["kl_over_n"] == pytest.approx(4000.0 / 4096) and r["nll"] == pytest.approx(1.7)
    assert r["sigma_median"] == pytest.approx([v / 4 for v in r["sigma_layers"]])
    assert r["nll_q"] == 2.5 and r["pred_sd"] == 0.3
    assert r["poison_rate"] == pytest.approx((0.1 + 0.3) / 2)   # the last 10 steps: 2 records
    assert r["regret_added"] == pytest.approx(160.0 - 80.0)     # cum at 20 minus cum at 10
    assert rows[0]["regret_added"] == pytest.approx(80.0)       # cum at 10 minus nothing
    assert rows[2]["sigma_init"] == pytest.approx(math.log(1 + math.exp(-4.0)))
    assert R.poison_blocks(recs[0], 10) == [(10, pytest.approx(0.3)), (20, pytest.approx(0.2))]
    with pytest.raises(ValueError, match="multiple of record_every"):
        R.why_rows(recs, points=(10,), poison_window=7, regret_window=10)


def test_contraction_rule_by_hand():
    # median sigma at record i: sigma_mean / (1 + i); early = 10 (i = 1), late = 20 (i = 3)
    recs = [_why_record("paper_capacity", 104), _greedy_reference(104)]
    rows = R.contraction(recs, early=10, late=20)
    assert len(rows) == 5 and rows[0]["layer"] == R.LAYERS[0]
    a, b = 0.0055 / 2, 0.0045 / 4
    assert (rows[0]["early"], rows[0]["late"]) == (pytest.approx(a), pytest.approx(b))
    assert rows[0]["ratio"] == pytest.approx(b / a) and rows[0]["contracts"]  # 0.41 <= 0.5
    assert not R.contraction(recs, early=10, late=20, factor=0.4)[0]["contracts"]
    with pytest.raises(ValueError, match="sigma_q"):
        R.contraction([dict(recs[0], sigma_q=None)], early=10, late=20)


def test_why_figure_has_four_panels():
    import matplotlib.pyplot as plt
    recs = [_why_record(v, s) for v in ("paper_capacity", "paper_seen", "keep_all_filled")
            for s in (104, 105)] + [_greedy_reference(s) for s in (104, 105)]
    fig = R.why_figure(recs, poison_window=10)
    assert len(fig.axes) == 4
    assert fig.axes[0].get_yscale() == "log" and fig.axes[1].get_yscale() == "log"
    # 3 variants x 2 seeds x 5 layer parts thin lines in (a), plus legend handles
    assert sum(len(line.get_xdata()) > 0 for line in fig.axes[0].get_lines()) == 30
    plt.close(fig)
    neg = [dict(r, nll=[-1.0] * 4) for r in recs]  # a negative NLL is not hidden by a log axis
    fig = R.why_figure(neg, poison_window=10)
    assert fig.axes[1].get_yscale() == "symlog"
    plt.close(fig)


def test_measured_cost_sums_cpu_seconds_beside_the_estimate():
    recs = [rec("paper", "screen", "bbb", 100, 1.0, cpu_s=3600.0),
            rec("paper", "screen", "greedy", 100, 1.0, cpu_s=1800.0),
            rec("showdown", "reported", "uniform", 4, 1.0, cpu_s=360.0)]
    pl = {"estimate": {"parts": {"paper/screen": {"runs": 2, "cpu_h": 3.0},
                                 "showdown/reported": {"runs": 10, "cpu_h": 0.2}}}}
    rows = {(r["tier"], r["stage"]): r for r in R.measured_cost(recs, pl)}
    assert rows["paper", "screen"]["cpu_h"] == pytest.approx(1.5)
    assert rows["paper", "screen"]["ratio"] == pytest.approx(0.5)
    assert rows["showdown", "reported"]["runs"] == 1 and rows["showdown", "reported"][
        "est_runs"] == 10
    assert rows["all", "all"]["cpu_h"] == pytest.approx(1.6)
    assert rows["all", "all"]["est_cpu_h"] == pytest.approx(3.2)
    assert R.measured_cost(recs)[0]["est_cpu_h"] is None
    with pytest.raises(ValueError, match="cpu_s"):
        R.measured_cost([dict(recs[0], cpu_s=None)])


def test_declared_agents_are_the_plans():
    pl = BC.plan("smoke")
    for t in BC.TIERS:
        assert list(R.AGENTS[t]) == pl["tiers"][t]["agents"]
        assert list(R.ABLATIONS[t]) == list(pl["tiers"][t].get("ablation", {}))
    assert R.AIM == 5700
    assert set(R.AGENT_COLORS) >= set(R.AGENTS["paper"] + R.AGENTS["showdown"]
                                      + R.ABLATIONS["paper"])
