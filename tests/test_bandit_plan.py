"""Notebook 03's campaign plan v2 (helpers/bandit_plan.py): equal tuning budgets, tuning seeds
never reported, enough reported seeds for the declared tests to resolve, and the plan committed
before anything it governs."""
import copy
import json
import subprocess

import pytest

from helpers import bandit_plan as P
from helpers import stats
from helpers.analysis_plan import plan_precedes
from helpers.utils import PROJECT_ROOT as ROOT


@pytest.fixture(scope="module")
def committed():
    return json.loads((ROOT / P.PLAN).read_text())


def test_the_committed_plan_is_valid_and_is_the_codes(committed):
    assert P.validate(committed) == []
    fresh = P.plan(json.loads((ROOT / "results" / "benchmarks" / "bandit.json").read_text()))
    # the estimate is the one declared with the plan; everything else is what the code declares
    assert {k: v for k, v in committed.items() if k != "estimate"} == \
        json.loads(json.dumps({k: v for k, v in fresh.items() if k != "estimate"}))


def test_every_family_gets_the_same_budget_from_inside_its_space():
    for family, spec in P.FAMILIES.items():
        chosen = P.settings(family)
        assert len(chosen) == P.SETTINGS_PER_FAMILY
        assert chosen == P.settings(family)  # the declared draw is reproducible
        for s in chosen:
            for k, v in spec["space"].items():
                assert s[k] in v, (family, k, s[k])
    # a space larger than the budget: a Latin-hypercube design, every value of every dimension
    # appears (the eight learning rates once each), not the space's first points
    for family in ("bbb_paper", "bbb_keep_all", "bootstrap", "neural_linear", "dropout"):
        chosen = P.settings(family)
        for k, values in P.FAMILIES[family]["space"].items():
            seen = [json.dumps(s[k]) for s in chosen]
            assert {json.dumps(v) for v in values} == set(seen), (family, k)
            counts = [seen.count(json.dumps(v)) for v in values]
            assert max(counts) - min(counts) <= 1, (family, k, counts)


def test_the_smallest_holm_p_is_what_the_exact_test_gives():
    for n, m in ((8, 6), (8, 3), (6, 6)):
        best = stats.wilcoxon_exact([1.0 + i for i in range(n)], [0.0] * n)["p"]
        assert P.smallest_holm_p(n, m) == pytest.approx(min(1.0, m * best))


def test_planted_breaches_are_found(committed):
    def breach(edit):
        p = copy.deepcopy(committed)
        edit(p)
        return P.validate(p)
    assert any("unequal" in b for b in breach(
        lambda p: p["tuning"]["families"]["bootstrap"]["settings"].pop()))
    assert any(">= 100" in b for b in breach(
        lambda p: p["tuning"].update(screen_seeds=[99, 100])))
    assert any("also reported" in b for b in breach(
        lambda p: p["reported"].update(seeds=list(range(8)) + [102])))

    def six_seeds(p):  # six seeds: Holm over six claims can never reach alpha
        p["reported"]["seeds"] = list(range(6))
        for t in p["tests"]["families"].values():
            t["smallest_holm_p"] = P.smallest_holm_p(6, len(t["claims"]))
    assert any("cannot resolve" in b for b in breach(six_seeds))
    assert any("twice" in b for b in breach(
        lambda p: p["tuning"]["families"]["dropout"]["settings"].__setitem__(
            1, p["tuning"]["families"]["dropout"]["settings"][0])))


def test_the_plan_is_committed_before_any_run_it_governs():
    if subprocess.run(["git", "-C", str(ROOT), "rev-parse"], capture_output=True).returncode:
        pytest.skip("not a git checkout")
    assert plan_precedes(ROOT, plan=P.PLAN, governs=P.GOVERNS) == []


def _small_plan(committed):
    """The committed plan cut down to two families of two settings, one screen seed, one confirm
    seed and one reported seed: every stage of the driver, in seconds."""
    p = copy.deepcopy(committed)
    fams = p["tuning"]["families"]
    p["tuning"]["families"] = {f: dict(fams[f], settings=fams[f]["settings"][:2])
                               for f in ("bbb_paper", "lin_full_post")}
    p["tuning"].update(screen_seeds=[100, 101], confirm_seeds=[102], continued=1)
    p["reported"]["seeds"] = [0]
    return p


def test_the_driver_runs_every_stage_and_chooses_on_tuning_seeds_only(
        committed, shared_data, tmp_path, monkeypatch):
    from helpers import bandit_v2 as V
    monkeypatch.setenv("BBB_DATA_DIR", str(shared_data))
    monkeypatch.setenv("BBB_RESULTS_DIR", str(tmp_path / "results"))
    monkeypatch.setenv("BBB_CHECKPOINT_DIR", str(tmp_path / "checkpoints"))
    plan, scale = _small_plan(committed), {"steps": 40, "updates_per_step": 2}
    stages = []
    for _ in range(20):
        todo, _ = V.jobs(plan)
        if not todo:
            break
        stages.append(sorted({j.stage for j in todo}))
        for job in todo:
            V.run_job(job, plan, scale)
    assert stages == [["screen"], ["confirm"], ["reported"]]
    # BBB stacks a job's seeds in one run; LinFullPost runs one seed per job
    assert V.read(V.Job("screen", "bbb_paper", 0, (100, 101)))["seeds"] == [100, 101]
    assert V.read(V.Job("screen", "lin_full_post", 1, (101,)))["seeds"] == [101]
    for family in plan["tuning"]["families"]:
        index, mean = V.choice(family, plan)
        screen = {i: V._mean_final([V.read(V.Job("screen", family, i, g))
                                    for g in V._seed_groups(family, [100, 101])])
                  for i in range(2)}
        assert V.continued(family, plan) == [min(screen, key=lambda i: (screen[i], i))]
        assert index == V.continued(family, plan)[0] and mean >= 0
    reported = {p.name for p in (tmp_path / "results").rglob("reported_*.json")}
    assert reported == {"reported_paper_bbb_s0.json", "reported_keep_all_lin_full_post_s0.json",
                        "reported_keep_all_uniform_s0.json"}
    one = V.read(V.Job("screen", "bbb_paper", 0, (100, 101)))
    assert one["score_per_seed"] == one["final_per_seed"]  # one agent: its own regret
    rec = json.loads(next((tmp_path / "results").rglob("reported_paper_bbb_s0.json")).read_text())
    assert rec["seeds"] == [0] and rec["setting_index"] == V.choice("bbb_paper", plan)[0]
    assert rec["code"]["commit"] is None or len(rec["code"]["commit"]) == 40
