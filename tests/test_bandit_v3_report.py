"""helpers.bandit_v3_report: the declared analysis of the mushroom-bandit plan v3, checked on
hand-made records against values computed by hand, by enumeration or with scipy.

Records that the analysis reads as a campaign's are built like the campaign's: every run of
every stage from helpers.bandit_campaign.stage_runs, the tuning records written to a folder of
their own and pinned by tools/bandit_v3.py's own ``pin_choice`` (the reference for the hash)."""
import functools
import hashlib
import importlib.util
import inspect
import itertools
import json
import math
import os
import statistics
import subprocess
import tempfile

import numpy as np
import pytest

from helpers import bandit_campaign as BC
from helpers import bandit_v3_report as R
from helpers import stats as S
from helpers.utils import PROJECT_ROOT

SEEDS10 = list(range(4, 14))


def _tool():
    spec = importlib.util.spec_from_file_location("bandit_v3_tool",
                                                  PROJECT_ROOT / "tools" / "bandit_v3.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


TOOL = _tool()


@pytest.fixture(autouse=True)
def _results_of_our_own(tmp_path, monkeypatch):
    """Never read the project's results/ (a campaign writes there): records_dir, and the
    choice.json the analysis looks for, point into this test's folder."""
    monkeypatch.setenv("BBB_RESULTS_DIR", str(tmp_path / "results"))


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


def _of_run(pl, run, final, **extra):
    """The record of a plan's Run, as helpers.bandit_campaign._write_record lays it out."""
    return {**rec(run.tier, run.stage, run.agent, run.seed, final, steps=run.steps,
                  every=pl["record_every"], profile=pl["profile"], setting=run.settings),
            "run_id": run.run_id, "finite": True, **extra}


def _tuning_value(run):
    """A final regret per (setting, seed) that spreads the settings (no ties), with fractions
    whose float sums depend on the order they are added in."""
    h = int(hashlib.sha256(f"{run.tier}|{run.agent}|{run.setting}".encode()).hexdigest()[:8], 16)
    return 1000.0 + h % 997 + 0.1 * (run.seed - 99) + (h % 13) / 7


@functools.lru_cache(maxsize=None)
def _tuning(profile):
    """The tuning records of the whole plan (screen, confirm, edge), written, read back with
    load_records and pinned by tools/bandit_v3.py's pin_choice as its ``run`` does. Returns
    (records as JSON text, the hash, choice.json's bytes)."""
    pl = BC.plan(profile)
    old = os.environ.get("BBB_RESULTS_DIR")
    with tempfile.TemporaryDirectory() as d:
        os.environ["BBB_RESULTS_DIR"] = d
        try:
            def write(runs):
                for run in runs:
                    path = BC.record_path(pl, run)
                    path.parent.mkdir(parents=True, exist_ok=True)
                    path.write_text(json.dumps(_of_run(pl, run, _tuning_value(run))))
            write(BC.stage_runs(pl, "screen"))
            write(BC.stage_runs(pl, "confirm", BC.choose(pl, BC.load_records(pl), "screen")))
            write(BC.stage_runs(pl, "edge", BC.choose(pl, BC.load_records(pl), "confirm")))
            recs = BC.load_records(pl)
            pinned = {s: BC.choose(pl, recs, s) for s in ("screen", "confirm", "edge")}
            sha = TOOL.pin_choice(pl, pinned)
            text = (BC.records_dir(pl) / "choice.json").read_bytes()
        finally:
            if old is None:
                os.environ.pop("BBB_RESULTS_DIR")
            else:
                os.environ["BBB_RESULTS_DIR"] = old
    return json.dumps(recs), sha, text


def campaign(profile="default", finals=None, why=None):
    """(plan, every record of a finished campaign): the tuning (``_tuning``), then the why and
    reported runs of the pinned choice with its hash. ``finals``: {tier: {agent: [final regret
    per reported seed]}} (else 1,000 + 10 x seed + 3 x the agent's place); ``why``: run -> extra
    fields of a why record."""
    pl = BC.plan(profile)
    text, sha, _ = _tuning(profile)
    recs = json.loads(text)
    final = BC.choose(pl, recs, "edge")
    seeds = pl["seeds"]["reported"]
    for run in BC.stage_runs(pl, "why", final):
        recs.append(_of_run(pl, run, 160.0 if run.agent == "bbb" else 100.0,
                            choice_sha256=sha, **(why(run) if why else {})))
    for run in BC.stage_runs(pl, "reported", final):
        vals = (finals or {}).get(run.tier, {}).get(run.agent)
        order = R.AGENTS[run.tier] + R.ABLATIONS[run.tier]
        v = vals[seeds.index(run.seed)] if vals else \
            1000.0 + 10 * run.seed + 3 * order.index(run.agent)
        recs.append(_of_run(pl, run, v, choice_sha256=sha))
    return pl, recs


BBB = [5000.0 + 130 * i for i in range(10)]
PAPER = {  # differences bbb - other: greedy all negative, eps1 all positive, eps5 mixed
    "bbb": BBB,
    "greedy": [b + 100 * (i + 1) for i, b in enumerate(BBB)],
    "eps1": [b - 37 * (i + 1) for i, b in enumerate(BBB)],
    "eps5": [b + (-1) ** i * 11 * (i + 1) for i, b in enumerate(BBB)],
    "bbb_one_draw": [b + 10 * (i + 1) ** 1.5 for i, b in enumerate(BBB)],
}


def paper(finals=PAPER):
    return campaign("default", {"paper": finals})


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


# ---- the pinned choice ------------------------------------------------


def test_a_consistent_campaign_passes_with_the_drivers_hash():
    for profile in ("smoke", "default"):
        pl, recs = campaign(profile)
        _, sha, text = _tuning(profile)
        got = R.check_against_plan(pl, recs)
        assert got["sha256"] == sha == hashlib.sha256(text).hexdigest()
        assert json.loads(text) == got["choice"]
        # the records in another order give the same hash (sums over seeds in the driver's order)
        assert R.check_against_plan(pl, recs[::-1])["sha256"] == sha
    # the declared plan file's form (with its 'declared' record) is the plan too
    assert R.check_against_plan({**pl, "declared": {"created": "x"}}, recs)["sha256"] == sha


def _reported_where(recs, **kw):
    return next(i for i, r in enumerate(recs) if r["stage"] == "reported"
                and all(r[k] == v for k, v in kw.items()))


def _rerun_id(r):
    """The record with its run_id recomputed from its fields (a run the plan could have had)."""
    return {**r, "run_id": BC.Run(r["tier"], r["stage"], r["agent"], r["seed"], r["steps"],
                                  json.dumps(r["setting"], sort_keys=True)).run_id}


def test_reported_records_must_be_the_pinned_choices_runs():
    pl, recs = campaign("smoke")
    fns = (lambda rs: R.reported(pl, rs, "paper"), lambda rs: R.final_table(pl, rs, "paper"),
           lambda rs: R.comparisons(pl, rs, "paper"), lambda rs: R.paper_claim(pl, rs),
           lambda rs: R.figure6(pl, rs))
    for fn in fns:
        fn(recs)   # consistent: no error
    i = _reported_where(recs, tier="paper", agent="eps1", seed=4)
    # a wrong setting (its run_id recomputed, so only the plan can tell)
    lr = recs[i]["setting"]["lr"]
    wrong = list(recs)
    wrong[i] = _rerun_id({**recs[i], "setting": {**recs[i]["setting"], "lr": lr * 3}})
    for fn in fns:
        with pytest.raises(ValueError, match=r"paper tier, stage reported: the records are not "
                                             r"the runs the pinned choice defines: 1 record"):
            fn(wrong)
    # wrong steps
    steps = list(recs)
    steps[i] = _rerun_id({**recs[i], "steps": recs[i]["steps"] + 5})
    with pytest.raises(ValueError, match="not the runs the pinned choice defines"):
        R.final_table(pl, steps, "paper")
    # the ablation with two draws (the main agent's), not one
    j = _reported_where(recs, tier="paper", agent="bbb_one_draw", seed=5)
    abl = list(recs)
    abl[j] = _rerun_id({**recs[j], "setting": {**recs[j]["setting"], "thompson_samples": 2}})
    with pytest.raises(ValueError, match="bbb_one_draw seed 5.*thompson_samples\": 2"):
        R.comparisons(pl, abl, "paper")
    # a setting changed under an unchanged run_id
    lied = list(recs)
    lied[i] = {**recs[i], "setting": {**recs[i]["setting"], "lr": lr * 3}}
    with pytest.raises(ValueError, match="its run_id is not the one"):
        R.final_table(pl, lied, "paper")
    # the keep-all tier's records are checked when that tier is read
    k = _reported_where(recs, tier="showdown", agent="dropout", seed=4)
    show = list(recs)
    show[k] = _rerun_id({**recs[k], "setting": {**recs[k]["setting"], "lr": 0.5}})
    R.final_table(pl, show, "paper")
    with pytest.raises(ValueError, match="showdown tier, stage reported"):
        R.final_table(pl, show, "showdown")


def test_every_reported_and_why_record_carries_the_hash():
    pl, recs = campaign("smoke")
    i = _reported_where(recs, tier="showdown", agent="uniform", seed=5)
    missing = list(recs)
    missing[i] = {k: v for k, v in recs[i].items() if k != "choice_sha256"}
    with pytest.raises(ValueError, match="uniform_s5.*has no choice_sha256"):
        R.final_table(pl, missing, "paper")   # any reported record, of either tier
    wrong = list(recs)
    wrong[i] = {**recs[i], "choice_sha256": "0" * 64}
    with pytest.raises(ValueError, match="carries choice hash 0000.*the tuning records give"):
        R.comparisons(pl, wrong, "paper")
    w = next(j for j, r in enumerate(recs) if r["stage"] == "why")
    why = list(recs)
    why[w] = {k: v for k, v in recs[w].items() if k != "choice_sha256"}
    for fn in (R.why_runs, R.why_rows, R.contraction, R.paper_claim):
        with pytest.raises(ValueError, match="why record .* has no choice_sha256"):
            fn(pl, why)
    # a why record of a setting the choice does not give
    other = list(recs)
    other[w] = _rerun_id({**recs[w], "setting": {**recs[w]["setting"], "rho_init": -9.0}})
    with pytest.raises(ValueError, match="paper tier, stage why: the records are not"):
        R.why_runs(pl, other)
    # a why record in the keep-all tier, where the plan has none
    show = recs + [_rerun_id({**recs[w], "tier": "showdown"})]
    with pytest.raises(ValueError, match="showdown tier, stage why"):
        R.why_runs(pl, show)
    # a why run missing
    with pytest.raises(ValueError, match="stage why.*1 run\\(s\\) of it without a record"):
        R.why_runs(pl, recs[:w] + recs[w + 1:])


def test_a_tuning_record_changed_after_pinning_is_refused():
    pl, recs = campaign("smoke")
    final = BC.choose(pl, recs, "edge")
    # raise the chosen BBB setting's confirm regret on one tuning seed far above the rest
    chosen = BC._key(final["paper"]["bbb"]["confirmed"])
    i = next(j for j, r in enumerate(recs) if r["stage"] == "confirm" and r["tier"] == "paper"
             and r["agent"] == "bbb" and BC._key(r["setting"]) == chosen)
    moved = list(recs)
    moved[i] = {**recs[i], "final_regret": 1e9}
    with pytest.raises(ValueError, match="the tuning records give no final choice"):
        R.final_table(pl, moved, "showdown")   # its edge runs are another setting's
    # even a change that keeps the choice changes the pinned text (its scores): refused
    j = next(j for j, r in enumerate(recs) if r["stage"] == "screen" and r["tier"] == "showdown")
    nudged = list(recs)
    nudged[j] = {**recs[j], "cum_regret": [v + 1e-6 for v in recs[j]["cum_regret"]]}
    with pytest.raises(ValueError, match="carries choice hash"):
        R.final_table(pl, nudged, "showdown")


def test_the_pinned_choice_file_must_match(tmp_path):
    pl, recs = campaign("smoke")
    _, sha, text = _tuning("smoke")
    path = BC.records_dir(pl) / "choice.json"   # under this test's BBB_RESULTS_DIR
    path.parent.mkdir(parents=True)
    path.write_bytes(text)
    assert R.check_against_plan(pl, recs)["sha256"] == sha
    R.final_table(pl, recs, "paper")
    path.write_bytes(text.replace(b"\n", b"\n ", 1))   # the same choice, other bytes
    with pytest.raises(ValueError, match="choice.json has SHA-256"):
        R.final_table(pl, recs, "paper")
    with pytest.raises(ValueError, match="choice.json has SHA-256"):
        R.why_runs(pl, recs)
    other = tmp_path / "pinned.json"
    other.write_bytes(text)
    assert R.check_against_plan(pl, recs, choice_path=other)["sha256"] == sha
    assert R.check_against_plan(pl, recs, choice_path=str(other))["sha256"] == sha
    with pytest.raises(FileNotFoundError):   # a path passed in must exist
        R.check_against_plan(pl, recs, choice_path=tmp_path / "none.json")


def test_plan_and_profile_must_match_the_records():
    pl, recs = campaign("smoke")
    dpl = BC.plan("default")
    for fn in (lambda p: R.final_table(p, recs, "paper"), lambda p: R.figure6(p, recs),
               lambda p: R.why_rows(p, recs), lambda p: R.choice_table(p, recs, "paper"),
               lambda p: R.measured_cost(p, recs)):
        with pytest.raises(ValueError, match="profile 'smoke', the plan passed of profile "
                                             "'default'"):
            fn(dpl)
    _, drecs = campaign("default")
    with pytest.raises(ValueError, match="profile 'default', the plan passed of profile 'smoke'"):
        R.comparisons(pl, drecs, "paper")
    seeds = {**pl, "seeds": {**pl["seeds"], "reported": [4, 5, 6]}}
    with pytest.raises(ValueError, match=r"not plan v3 \(smoke\).*\['seeds'\]"):
        R.final_table(seeds, recs, "paper")
    with pytest.raises(ValueError, match="plan v3 of profile"):
        R.final_table({"profile": "default"}, recs, "paper")


# ---- the statistics ------------------------------------------------


def test_wilcoxon_p_and_holm_match_independent_references():
    pl, recs = paper()
    rows = _by(R.comparisons(pl, recs, "paper"))
    assert list(rows) == ["greedy", "eps1", "eps5", "bbb_one_draw"]
    scipy_stats = pytest.importorskip("scipy.stats")
    for other in rows:
        d = [a - b for a, b in zip(PAPER["bbb"], PAPER[other])]
        ref = scipy_stats.wilcoxon(PAPER["bbb"], PAPER[other], method="exact").pvalue
        assert rows[other]["p"] == pytest.approx(ref, rel=1e-12)
        assert rows[other]["p"] == pytest.approx(_wilcoxon_by_enumeration(d), rel=1e-12)
        assert (rows[other]["zeros_dropped"], rows[other]["n_used"],
                rows[other]["ties_in_ranks"]) == (0, 10, False)
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
    pl, recs = paper()
    rows = _by(R.comparisons(pl, recs, "paper"))
    assert rows["greedy"]["verdict"] == "BBB lower"
    assert rows["eps1"]["verdict"] == "BBB higher"
    assert rows["eps5"]["verdict"] == "not resolved at 10 seeds"
    # the ablation: BBB's two draws per decision against one draw
    assert rows["bbb_one_draw"]["verdict"] == "two draws lower"
    assert rows["bbb_one_draw"]["role"] == "ablation" and rows["greedy"]["role"] == "main"
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
    claim = R.paper_claim(pl, recs)
    assert claim["claim"] == "reversed"  # BBB higher than eps1
    lower = {**PAPER, "eps1": PAPER["greedy"], "eps5": PAPER["greedy"]}
    assert R.paper_claim(*paper(lower))["claim"] == "holds"
    mixed = {**PAPER, "eps1": PAPER["eps5"]}
    assert R.paper_claim(*paper(mixed))["claim"] == "not resolved at 10 seeds"
    # one draw lower than two: the ablation's other word
    higher = {**PAPER, "bbb_one_draw": [b - 10 * (i + 1) ** 1.5 for i, b in enumerate(BBB)]}
    assert _by(R.comparisons(*paper(higher), "paper"))["bbb_one_draw"]["verdict"] == \
        "two draws higher"


def test_holm_can_turn_a_raw_p_below_005_into_not_resolved():
    # W+ = 5 on 10 seeds (positive differences at ranks 2 and 3): p = 2 * 10 / 1024 = 0.0195
    d = [-1, 2, 3, -4, -5, -6, -7, -8, -9, -10]
    moderate = {a: [b - x for b, x in zip(BBB, d)] for a in PAPER if a != "bbb"}
    rows = _by(R.comparisons(*paper({"bbb": BBB, **moderate}), "paper"))
    for a in ("greedy", "eps1", "eps5"):
        assert rows[a]["p"] == pytest.approx(20 / 1024)
        assert rows[a]["p_holm"] == pytest.approx(3 * 20 / 1024)  # 0.059
        assert rows[a]["verdict"] == "not resolved at 10 seeds"
    # the same p in the ablation's family of one stays below 0.05
    assert rows["bbb_one_draw"]["verdict"] == "two draws lower"
    assert rows["greedy"]["hl"] < 0 and rows["greedy"]["ci"][0] < 0


def test_all_zero_differences_and_tied_differences_make_the_level_nominal():
    tied = [b + (100 if i < 5 else 200) for i, b in enumerate(BBB)]   # |d| 100 x5, 200 x5
    rows = _by(R.comparisons(*paper({**PAPER, "greedy": list(BBB), "eps1": tied}), "paper"))
    z = rows["greedy"]   # every difference zero
    assert (z["p"], z["zeros_dropped"], z["n_used"]) == (1.0, 10, 0)
    assert z["verdict"] == "not resolved at 10 seeds" and z["p_holm"] == 1.0
    assert z["hl"] == 0.0 and z["ci"] == [0.0, 0.0] and z["t_ci"] is None
    assert z["level_achieved"] is None and z["level_note"] == "nominal: ties/zeros present"
    assert z["level_nominal"] == pytest.approx(1 - 50 / 1024)
    t = rows["eps1"]
    assert t["ties_in_ranks"] is True and (t["zeros_dropped"], t["n_used"]) == (0, 10)
    assert t["level_achieved"] is None and t["level_note"] == "nominal: ties/zeros present"
    assert t["p"] == pytest.approx(2 / 1024)   # every difference negative: the extreme W+ = 0
    assert t["verdict"] == "BBB lower" and t["hl"] == -150.0
    # without ties or zeros the level is exact
    e = rows["eps5"]
    assert e["level_achieved"] == e["level_nominal"] == pytest.approx(1 - 50 / 1024)
    assert e["level_note"] == "exact"
    # one zero difference among distinct ones: nominal too
    one = R.wilcoxon_interval([0.0] + [float(i) for i in range(1, 10)], [0.0] * 10)
    assert one["level_achieved"] is None and one["level_note"] == R.NOMINAL


def test_showdown_family_has_six_tests_and_no_papers_values():
    agents = R.AGENTS["showdown"]
    finals = {a: [b + 7 * i * (j + 1) for j, b in enumerate(BBB)] for i, a in enumerate(agents)}
    pl, recs = campaign("default", {"showdown": finals})
    rows = R.comparisons(pl, recs, "showdown")
    assert [r["other"] for r in rows] == list(agents[1:])
    assert all(r["family_size"] == 6 and r["paper_diff"] is None for r in rows)
    assert all(r["paper_50k"] is None for r in R.final_table(pl, recs, "showdown"))


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


def test_declared_constants_take_no_arguments(monkeypatch):
    params = {fn: list(inspect.signature(fn).parameters) for fn in (
        R.wilcoxon_interval, R.why_rows, R.contraction, R.why_figure, R.poison_blocks,
        R.diverged, R.figure6, R.final_table, R.comparisons, R.paper_claim, R.why_runs)}
    assert params[R.wilcoxon_interval] == ["a", "b"]
    assert params[R.poison_blocks] == params[R.diverged] == ["rec"]
    for fn in (R.why_rows, R.contraction, R.why_figure, R.figure6, R.paper_claim, R.why_runs):
        assert params[fn] == ["pl", "records"], fn
    assert params[R.final_table] == params[R.comparisons] == ["pl", "records", "tier"]
    # the default profile's constants are the plan's words
    pl = BC.plan("default")
    assert R.CONTRACT_STEPS["default"] == (10_000, 50_000) and R.CONTRACT_FACTOR == 0.5
    assert "at most 0.5 x its median sigma at 10,000 steps" in pl["why"]["contracts"]
    assert "at 50,000 steps" in pl["why"]["contracts"]
    assert R.WHY_POINTS["default"] == (10_000, 25_000, 50_000)
    assert "10k / 25k / 50k" in pl["why"]["reading"]
    assert "per 1,000 steps" in pl["why"]["reading"] and R.POISON_WINDOW["default"] == 1_000
    assert "last 10,000 steps" in pl["why"]["reading"] and R.REGRET_WINDOW["default"] == 10_000
    assert R.LEVEL == 0.95 and "95 %" in pl["tests"]["comparisons"]
    # a level moved only by changing the module (as a test may): the interval follows
    monkeypatch.setattr(R, "LEVEL", 0.80)
    assert R.wilcoxon_interval([float(i) for i in range(1, 11)], [0.0] * 10)[
        "level_nominal"] < 0.9


def test_unchanged_since_declaration_asks_git(monkeypatch):
    assert R.ANALYSIS_COMMIT in R.__doc__ or "ANALYSIS_COMMIT" in R.__doc__
    calls = []

    def fake(rc):
        def run(cmd, **kw):
            calls.append((cmd, kw.get("cwd")))
            return subprocess.CompletedProcess(cmd, rc)
        return run
    for rc, want in ((0, True), (1, False), (128, None)):
        monkeypatch.setattr(R.subprocess, "run", fake(rc))
        assert R.unchanged_since_declaration() is want
    cmd, cwd = calls[0]
    assert cmd == ["git", "diff", "--quiet", "-I", "^ANALYSIS_COMMIT = ", R.ANALYSIS_COMMIT,
                   "--", "helpers/bandit_v3_report.py", "helpers/stats.py"]
    assert cwd == PROJECT_ROOT

    def no_git(cmd, **kw):
        raise FileNotFoundError("git")
    monkeypatch.setattr(R.subprocess, "run", no_git)
    assert R.unchanged_since_declaration() is None
    monkeypatch.undo()
    # real git: an unknown commit cannot be read (None), HEAD gives a bool
    monkeypatch.setattr(R, "ANALYSIS_COMMIT", "0" * 40)
    assert R.unchanged_since_declaration() in (None,)
    monkeypatch.setattr(R, "ANALYSIS_COMMIT", "HEAD")
    assert R.unchanged_since_declaration() in (True, False, None)


# ---- the table ------------------------------------------------


def test_lowest_on_k_counts_ties_for_each_agent():
    finals = {"bbb": [100, 90], "greedy": [100, 80], "eps1": [200, 50], "eps5": [300, 400],
              "bbb_one_draw": [1, 1]}  # the ablation is no contestant
    pl, recs = campaign("smoke", {"paper": finals})
    rows = _by(R.final_table(pl, recs, "paper"), "agent")
    assert {a: rows[a]["lowest_k"] for a in rows} == {"bbb": 1, "greedy": 1, "eps1": 1,
                                                      "eps5": 0, "bbb_one_draw": None}
    assert rows["bbb"]["n"] == 2 and rows["bbb"]["seeds"] == [4, 5]
    assert rows["bbb"]["paper_50k"] == 5700 and rows["bbb_one_draw"]["paper_50k"] is None


def test_final_table_summaries_by_hand():
    pl, recs = paper()
    rows = _by(R.final_table(pl, recs, "paper"), "agent")
    b = rows["bbb"]
    assert b["mean"] == pytest.approx(5585.0)
    assert b["sd"] == pytest.approx(130 * math.sqrt(sum((i - 4.5) ** 2 for i in range(10)) / 9))
    assert b["median"] == pytest.approx(5585.0)
    # type-7 quartiles of 5000, 5130, ..., 6170: position 1 + 0.25 * 9 = 3.25
    assert b["q1"] == pytest.approx(5000 + 130 * 2.25)
    assert b["q3"] == pytest.approx(5000 + 130 * 6.75)
    assert b["q1"] == pytest.approx(np.percentile(PAPER["bbb"], 25))


def test_final_table_names_the_chosen_setting_and_its_edges():
    for profile in ("smoke", "default"):
        pl, recs = campaign(profile)
        final = BC.choose(pl, recs, "edge")
        for tier in BC.TIERS:
            for row in R.final_table(pl, recs, tier):
                a = row["agent"]
                of = pl["tiers"][tier].get("ablation", {}).get(a, {}).get("of", a)
                if of in final[tier]:
                    want = final[tier][of]["chosen"]
                    if a != of:
                        want = {**want, "thompson_samples": 1}
                    assert row["setting"] == want and row["tuned"]
                    assert row["at_edge"] == final[tier][of]["at_edge"]
                    assert row["setting_label"] == R.setting_label(want)
                else:   # untuned: LinFullPost, uniform
                    assert a in pl["tiers"][tier]["untuned"] and row["at_edge"] is None
                    assert not row["tuned"]
    # smoke grids hold two values per factor: a final choice is at an edge of some factor
    pl, recs = campaign("smoke")
    bbb = _by(R.final_table(pl, recs, "paper"), "agent")["bbb"]
    assert bbb["at_edge"] and set(bbb["at_edge"]) <= {"prior", "rho_init", "lr", "noise_sigma"}
    assert "lr" in bbb["setting_label"]


def test_refuses_unequal_seed_sets_missing_agents_and_undeclared_seeds():
    pl, recs = paper()
    short = [r for r in recs if not (r["stage"] == "reported" and r["agent"] == "eps1"
                                     and r["seed"] == 13)]
    for fn in (R.final_table, R.comparisons):
        with pytest.raises(ValueError, match=r"seed set.*'eps1': \[13\]"):
            fn(pl, short, "paper")
    with pytest.raises(ValueError, match="no reported records of \\['bbb_one_draw'\\]"):
        R.final_table(pl, [r for r in recs if r["agent"] != "bbb_one_draw"], "paper")
    shifted = [dict(r, seed=r["seed"] - 4) if r["stage"] == "reported" else r for r in recs]
    with pytest.raises(ValueError, match="declares"):  # default profile: seeds 4-13 only
        R.final_table(pl, shifted, "paper")
    first = _reported_where(recs, tier="paper")
    with pytest.raises(ValueError, match="two reported records"):
        R.final_table(pl, recs + [recs[first]], "paper")
    with pytest.raises(ValueError, match="plan version"):
        R.final_table(pl, [{**r, "plan_version": 2} for r in recs], "paper")


def test_other_stages_and_tiers_cannot_change_the_reported_analysis():
    pl, recs = paper()
    before = (R.final_table(pl, recs, "paper"), R.comparisons(pl, recs, "paper"),
              R.paper_claim(pl, recs))
    # other numbers in the why runs, the keep-all tier's reported runs, and tuning records of
    # reported seeds (which choose never reads): the paper tier's analysis does not move
    _, sha, _ = _tuning("default")
    extra = [{**r, "stage": "screen", "final_regret": -1e6, "run_id": _rerun_id(
        {**r, "stage": "screen"})["run_id"]} for r in recs if r["stage"] == "reported"][:20]
    noise = [dict(r, final_regret=-1e6, cum_regret=[-1.0] * len(r["cum_regret"]))
             if r["stage"] == "why" or (r["stage"] == "reported" and r["tier"] == "showdown")
             else r for r in recs]
    mixed = extra[:7] + noise + extra[7:]
    assert R.check_against_plan(pl, mixed)["sha256"] == sha
    assert (R.final_table(pl, mixed, "paper"), R.comparisons(pl, mixed, "paper"),
            R.paper_claim(pl, mixed)) == before
    # ... while a reported number does change them (the check is not vacuous)
    i = _reported_where(recs, tier="paper", agent="eps1", seed=4)
    moved = list(recs)
    moved[i] = dict(recs[i], final_regret=0.0)
    assert R.final_table(pl, moved, "paper") != before[0]


def test_aim_is_read_on_the_mean_with_its_t_interval():
    def aim(values):
        return R.paper_claim(*paper({**PAPER, "bbb": values}))["aim"]
    high = aim([6000.0 + 100 * i for i in range(10)])     # mean 6,450, every seed above 5,700
    assert high["verdict"] == "worse than the paper by 750"
    assert high["median"] == 6450.0 and (high["q1"], high["q3"]) == (6225.0, 6675.0)
    half = 2.2621571627409915 * 100 * math.sqrt(sum((i - 4.5) ** 2 for i in range(10)) / 9) \
        / math.sqrt(10)  # t(0.975, 9) x sd / sqrt(10)
    assert high["ci"] == pytest.approx([6450 - half, 6450 + half], rel=1e-9)
    assert aim([4000.0 + 100 * i for i in range(10)])["verdict"] == \
        "better than the paper by 1250"
    assert aim([5200.0 + 100 * i for i in range(10)])["verdict"] == "matches the paper"
    # seeds without spread: no t interval, so not resolved (the docstring says so)
    flat = aim([6000.0] * 10)
    assert flat["verdict"] == "not resolved at 10 seeds" and flat["ci"] is None


def test_diverged_names_the_first_block_that_stopped_eating():
    edible = 5 * R.EDIBLE_SHARE   # regret per step of passing every edible mushroom

    def run(per_step, ate):
        """A default-profile record of 50 blocks: per_step[b] regret a step in block b, ate[b]
        whether a poisonous mushroom was eaten in it."""
        cum, pr, total = [], [], 0.0
        for b in range(50):
            for _ in range(10):
                total += per_step[b] * 100
                cum.append(total)
                pr.append(0.2 if ate[b] else 0.0)
        return rec("paper", "reported", "bbb", 4, cum[-1], steps=50_000, every=100,
                   profile="default", finite=True) | {"cum_regret": cum, "poison_rate": pr}
    eats = [1.0] * 50
    assert R.diverged(run(eats, [True] * 50)) is None
    # stops in block 13 (steps 12,001-13,000) and never eats again
    stop = [1.0] * 12 + [edible] * 38
    got = R.diverged(run(stop, [True] * 12 + [False] * 38))
    assert got == {"reason": "stopped eating", "from_step": 12_001, "to_step": 13_000,
                   "resumed": False}
    # stops in blocks 13-15 only: the final 1,000 steps alone would not have seen it
    ate = [True] * 12 + [False] * 3 + [True] * 35
    got = R.diverged(run([1.0] * 12 + [edible] * 3 + [1.0] * 35, ate))
    assert (got["from_step"], got["to_step"], got["resumed"]) == (12_001, 13_000, True)
    # the threshold: no poison eaten but regret just below 0.8 x edible: not stopped
    below = [1.0] * 12 + [0.79 * edible] * 38
    assert R.diverged(run(below, [True] * 12 + [False] * 38)) is None
    at = [1.0] * 12 + [0.8 * edible * 1.0001] * 38
    assert R.diverged(run(at, [True] * 12 + [False] * 38))["from_step"] == 12_001
    # non-finite
    nan = run(eats, [True] * 50)
    nan["cum_regret"][-1] = float("nan")
    assert R.diverged(nan)["reason"] == "non-finite"
    assert R.diverged({**run(eats, [True] * 50), "finite": False})["reason"] == "non-finite"


def test_final_table_lists_diverged_runs():
    pl, recs = campaign("smoke")
    i = _reported_where(recs, tier="paper", agent="greedy", seed=5)
    r = recs[i]
    stopped = list(recs)
    # steps 1-10 eating, 11-20 passing everything: 2 records of 5 steps each per block
    stopped[i] = {**r, "poison_rate": [0.3, 0.2, 0.0, 0.0],
                  "cum_regret": [1.0, 2.0, 2.0 + 15.0, 2.0 + 30.0]}
    row = _by(R.final_table(pl, stopped, "paper"), "agent")["greedy"]
    assert row["diverged"] == [{"seed": 5, "reason": "stopped eating", "from_step": 11,
                                "to_step": 20, "resumed": False}]
    assert _by(R.final_table(pl, recs, "paper"), "agent")["greedy"]["diverged"] == []


# ---- the tuning ------------------------------------------------


def _hand_tuning(pl, value):
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
    tuning, edge = _hand_tuning(pl, value)
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
    _, edge2 = _hand_tuning(pl, lambda run: value(run, ext_best=moved))
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


# ---- the figures ------------------------------------------------


def test_figure6_has_one_log_panel_per_tier(tmp_path):
    import matplotlib.pyplot as plt
    pl, recs = campaign("smoke")
    fig = R.figure6(pl, recs)
    assert len(fig.axes) == 2
    assert all(ax.get_yscale() == "log" for ax in fig.axes)
    assert len(fig.axes[1].get_legend().get_texts()) == len(R.AGENTS["showdown"]) + 1
    fig.savefig(tmp_path / "f6.png")
    plt.close(fig)
    half = [r for r in recs if not (r["stage"] == "reported" and r["tier"] == "showdown")]
    fig = R.figure6(pl, half)  # a tier without records: an empty panel, still two
    assert len(fig.axes) == 2
    assert any(t.get_text() == "no reported runs" for t in fig.axes[1].texts)
    plt.close(fig)


def _why_fields(run):
    """The why stage's diagnostics of a smoke run (4 records of 5 steps); none for greedy."""
    if run.agent != "bbb":
        return {}
    n = run.steps // 5
    k = list(BC.WHY_VARIANTS).index(run.settings["variant"])
    sig = [[0.006 - 0.0005 * i - 0.0001 * j - 0.00001 * k for j in range(5)] for i in range(n)]
    return {"sigma_layers": sig,
            "sigma_q": [[[0.5 * v, v / (1 + i), 2 * v] for v in row] for i, row in enumerate(sig)],
            "kl": [1000.0 * (i + 1) for i in range(n)], "kl_n": [4096] * n, "kl_se": [0.0] * n,
            "nll_q": [2.5] * n, "pred_sd": [0.3] * n, "nll": [2.0 - 0.1 * i for i in range(n)],
            "poison_rate": [0.4, 0.2, 0.1, 0.3][:n]}


def test_why_rows_by_hand(monkeypatch):
    pl, recs = campaign("smoke", why=_why_fields)
    rows = R.why_rows(pl, recs)
    variants = list(BC.WHY_VARIANTS) + [BC.WHY_GREEDY]
    assert [(r["variant"], r["step"]) for r in rows] == [(v, s) for v in variants
                                                        for s in (10, 20)]
    g = rows[-2:]
    assert g[0]["sigma_layers"] is None and g[0]["kl_over_n"] is None
    assert g[1]["regret_added"] == pytest.approx(50.0)  # 100 at 20 minus 50 at 10
    r = rows[1]  # paper_capacity, step 20: record index 3
    rho = BC.choose(pl, recs, "edge")["paper"]["bbb"]["chosen"]["rho_init"]
    s0 = math.log(1 + math.exp(rho))
    assert r["sigma_init"] == pytest.approx(s0)
    assert r["sigma_layers"] == pytest.approx([0.006 - 0.0015 - 0.0001 * j for j in range(5)])
    assert r["sigma_ratio"][0] == pytest.approx(0.0045 / s0)
    assert r["kl_over_n"] == pytest.approx(4000.0 / 4096) and r["nll"] == pytest.approx(1.7)
    assert r["sigma_median"] == pytest.approx([v / 4 for v in r["sigma_layers"]])
    assert r["nll_q"] == 2.5 and r["pred_sd"] == 0.3
    assert r["poison_rate"] == pytest.approx((0.1 + 0.3) / 2)   # the last 10 steps: 2 records
    assert r["regret_added"] == pytest.approx(160.0 - 80.0)     # cum at 20 minus cum at 10
    assert rows[0]["regret_added"] == pytest.approx(80.0)       # cum at 10 minus nothing
    why = [x for x in recs if x["stage"] == "why"]
    assert R.poison_blocks(why[0]) == [(10, pytest.approx(0.3)), (20, pytest.approx(0.2))]
    # the declared points, read from the module: a point beyond the run gives no row
    monkeypatch.setitem(R.WHY_POINTS, "smoke", (10, 20, 25))
    assert len(R.why_rows(pl, recs)) == len(rows)
    monkeypatch.setitem(R.POISON_WINDOW, "smoke", 7)
    with pytest.raises(ValueError, match="multiple of record_every"):
        R.why_rows(pl, recs)


def test_contraction_rule_by_hand(monkeypatch):
    # median sigma at record i: sigma_mean / (1 + i); early = 10 (i = 1), late = 20 (i = 3)
    pl, recs = campaign("smoke", why=_why_fields)
    rows = R.contraction(pl, recs)
    assert len(rows) == 5 * len(BC.WHY_VARIANTS)   # the greedy reference has no sigma
    assert [r["layer"] for r in rows[:5]] == list(R.LAYERS) == [
        "first layer (weights incl. its bias row)", "second layer weights",
        "second layer bias", "output weights", "output bias"]
    a, b = 0.0055 / 2, 0.0045 / 4
    assert (rows[0]["early"], rows[0]["late"]) == (pytest.approx(a), pytest.approx(b))
    assert rows[0]["ratio"] == pytest.approx(b / a) and rows[0]["contracts"]  # 0.41 <= 0.5
    monkeypatch.setattr(R, "CONTRACT_FACTOR", 0.4)
    assert not R.contraction(pl, recs)[0]["contracts"]
    monkeypatch.undo()
    i = next(j for j, r in enumerate(recs) if r["stage"] == "why" and r["agent"] == "bbb")
    lacking = list(recs)
    lacking[i] = dict(recs[i], sigma_q=None)
    with pytest.raises(ValueError, match="sigma_q"):
        R.contraction(pl, lacking)


def test_why_figure_has_four_panels():
    import matplotlib.pyplot as plt
    pl, recs = campaign("smoke", why=_why_fields)
    fig = R.why_figure(pl, recs)
    assert len(fig.axes) == 4
    assert fig.axes[0].get_yscale() == "log" and fig.axes[1].get_yscale() == "log"
    # 4 variants x 1 seed x 5 layer parts thin lines in (a), plus legend handles
    assert sum(len(line.get_xdata()) > 0 for line in fig.axes[0].get_lines()) == 20
    assert "per 10 steps" in fig.axes[2].get_title()
    plt.close(fig)
    neg = [dict(r, nll=[-1.0] * 4) if r["stage"] == "why" and r["agent"] == "bbb" else r
           for r in recs]  # a negative NLL is not hidden by a log axis
    fig = R.why_figure(pl, neg)
    assert fig.axes[1].get_yscale() == "symlog"
    plt.close(fig)


# ---- cost ------------------------------------------------


def test_measured_cost_sums_cpu_seconds_beside_the_estimate():
    pl = BC.plan("default")
    parts = pl["estimate"]["parts"]
    recs = [rec("paper", "screen", "bbb", 100, 1.0, cpu_s=3600.0, profile="default"),
            rec("paper", "screen", "greedy", 100, 1.0, cpu_s=1800.0, profile="default"),
            rec("showdown", "reported", "uniform", 4, 1.0, cpu_s=360.0, profile="default")]
    rows = {(r["tier"], r["stage"]): r for r in R.measured_cost(pl, recs)}
    assert rows["paper", "screen"]["cpu_h"] == pytest.approx(1.5)
    assert rows["paper", "screen"]["ratio"] == pytest.approx(
        1.5 / parts["paper/screen"]["cpu_h"])
    assert rows["showdown", "reported"]["runs"] == 1 and rows["showdown", "reported"][
        "est_runs"] == parts["showdown/reported"]["runs"]
    assert rows["all", "all"]["cpu_h"] == pytest.approx(1.6)
    assert rows["all", "all"]["est_cpu_h"] == pytest.approx(
        sum(p["cpu_h"] for p in parts.values()))
    with pytest.raises(ValueError, match="cpu_s"):
        R.measured_cost(pl, [dict(recs[0], cpu_s=None)])


def test_declared_agents_are_the_plans():
    pl = BC.plan("smoke")
    for t in BC.TIERS:
        assert list(R.AGENTS[t]) == pl["tiers"][t]["agents"]
        assert list(R.ABLATIONS[t]) == list(pl["tiers"][t].get("ablation", {}))
    # the ablation's words: the main agent draws twice per decision, the ablation once
    assert pl["tiers"]["paper"]["main_thompson_samples"] == 2
    assert pl["tiers"]["paper"]["ablation"]["bbb_one_draw"]["thompson_samples"] == 1
    assert R.WORDS["ablation"] == ("two draws lower", "two draws higher")
    assert R.AIM == 5700
    assert set(R.AGENT_COLORS) >= set(R.AGENTS["paper"] + R.AGENTS["showdown"]
                                      + R.ABLATIONS["paper"])
