"""helpers.bandit_campaign (plan v3 draft): the jobs of each stage, a choice that reads tuning seeds
only, the Showdown's schedule on batched rows, and a stage runner that resumes per run."""
import json
from pathlib import Path

import pytest
import torch

from helpers import bandit_batch as BB
from helpers import bandit_campaign as C
from helpers.utils import PROJECT_ROOT


def _mushroom_like(n=300):
    """Synthetic data of the mushroom's shape: 22 one-hot attributes, 117 columns."""
    g = torch.Generator().manual_seed(1)
    sizes = torch.tensor([6] * 7 + [5] * 15)
    cats = (torch.rand(n, 22, generator=g) * sizes).long() + torch.cumsum(sizes, 0) - sizes
    x = torch.zeros(n, 117).scatter_(1, cats, 1.0)
    return x, x[:, 0] + x[:, 6] > 0


def _count(runs, **kw):
    return sum(all(getattr(r, k) == v for k, v in kw.items()) for r in runs)


def test_smoke_plan_has_the_declared_jobs_per_stage():
    pl = C.plan("smoke")
    n = pl["tuning"]["settings_per_family"]
    screen = C.stage_runs(pl, "screen")
    # paper: BBB n settings, greedy / 1 % / 5 % n learning rates each; showdown: 5 tuned agents
    assert _count(screen, tier="paper") == (1 + 3) * n * 2
    assert _count(screen, tier="showdown") == 5 * n * 2
    assert {r.seed for r in screen} == set(pl["seeds"]["screen"])
    assert {r.steps for r in screen} == {pl["screen_steps"]}
    # every batch shares one BatchConfig and is at most max_rows long
    for job in C.jobs(pl, "screen"):
        if job["engine"] == "batched":
            assert len({C.batch_config(pl, r) for r in job["runs"]}) == 1
            assert len(job["runs"]) <= C._profile_numbers("smoke")["max_rows"]
        else:
            assert len(job["runs"]) == 1 and job["runs"][0].agent in C.BA.AGENTS
    assert sum(len(j["runs"]) for j in C.jobs(pl, "screen")) == len(screen)
    with pytest.raises(ValueError, match="needs choose"):
        C.stage_runs(pl, "confirm")
    stand_in = {t: {a: {"top": fam["settings"][:2], "chosen": fam["settings"][0]}
                    for a, (_, fam) in C._tuned_agents(pl["tiers"][t]).items()}
                for t in C.TIERS}
    confirm = C.stage_runs(pl, "confirm", stand_in)
    assert len(confirm) == (4 + 5) * 2 * 4
    assert {r.seed for r in confirm} == set(pl["seeds"]["confirm"] + pl["seeds"]["screen"])
    reported = C.stage_runs(pl, "reported", stand_in)
    # paper: 4 agents + the one-draw ablation; showdown: 7 agents
    assert len(reported) == (5 + 7) * len(pl["seeds"]["reported"])
    assert {r.seed for r in reported} == set(pl["seeds"]["reported"])
    abl = [r for r in reported if r.agent == "bbb_one_draw"]
    assert abl and all(r.settings["thompson_samples"] == 1 for r in abl)
    main = [C.row_spec(pl, r) for r in reported if r.agent == "bbb" and r.tier == "paper"]
    assert all(row.thompson_samples == pl["tiers"]["paper"]["main_thompson_samples"]
               for row in main)
    # tuning and reported seeds never meet
    assert not set(pl["seeds"]["reported"]) & (set(pl["seeds"]["screen"])
                                               | set(pl["seeds"]["confirm"]))


def test_default_plan_fits_the_budget_and_uses_the_papers_numbers():
    pl = C.plan("default")
    assert pl["steps"] == 50_000 and pl["seeds"]["reported"] == list(range(4, 14))
    assert min(pl["seeds"]["screen"] + pl["seeds"]["confirm"]) >= 100
    sch = pl["tiers"]["paper"]["schedule"]
    assert (sch["updates_per_step"], sch["batch"]) == (64, 64)
    show = pl["tiers"]["showdown"]["schedule"]
    assert (show["train_every"], show["train_steps"], show["batch"]) == (50, 100, 512)
    n = pl["tuning"]["settings_per_family"]
    assert all(len(f["settings"]) == n for t in C.TIERS
               for f in pl["tiers"][t]["families"].values())
    assert pl["estimate"]["total_cpu_h"] <= 40
    json.dumps(pl)


def _fake_records(pl, stage, value, seeds=None, slope=None):
    """A record per (agent, setting, seed) of ``stage``: final regret value(agent, i, seed); a
    screen record's regret at the slope point is final - slope(agent, i, seed) (flat if None)."""
    recs = []
    seeds = pl["seeds"][stage] if seeds is None else seeds
    every = pl["record_every"]
    steps = pl["screen_steps"] if stage == "screen" else pl["steps"]
    k0 = pl["tuning"]["slope_from"] // every - 1
    for t in C.TIERS:
        for agent, (_, fam) in C._tuned_agents(pl["tiers"][t]).items():
            for i, s in enumerate(fam["settings"]):
                for sd in seeds:
                    v = float(value(agent, i, sd))
                    cum = [v] * (steps // every)
                    if slope is not None:
                        cum[k0] = v - slope(agent, i, sd)
                    recs.append({"tier": t, "stage": stage, "agent": agent, "seed": sd,
                                 "setting": s, "final_regret": v, "cum_regret": cum})
    return recs


def _records_for(pl, stage, settings_of, value, seeds):
    recs = []
    for t in C.TIERS:
        for agent in C._tuned_agents(pl["tiers"][t]):
            for j, s in enumerate(settings_of(t, agent)):
                for sd in seeds:
                    recs.append({"tier": t, "stage": stage, "agent": agent, "seed": sd,
                                 "setting": s, "final_regret": value(t, agent, j, sd)})
    return recs


def test_extrapolated_regret_ranks_a_flattened_run_above_a_climbing_one():
    pl = C.plan("smoke")
    T, T0, S = pl["screen_steps"], pl["tuning"]["slope_from"], pl["steps"]
    rec = {"cum_regret": [0.0] * (T // pl["record_every"])}
    rec["cum_regret"][T0 // pl["record_every"] - 1] = 40.0
    rec["cum_regret"][-1] = 50.0
    assert C.extrapolated(pl, rec) == 50.0 + (S - T) / (T - T0) * 10.0
    # setting 0: lowest regret so far but still climbing; setting 1 flat: 1 ranks first
    screen = _fake_records(pl, "screen", lambda a, i, s: 100.0 + 10 * i,
                           slope=lambda a, i, s: 30.0 if i == 0 else 0.0)
    top = C.choose(pl, screen, "screen")["paper"]["greedy"]["top"]
    fam = pl["tiers"]["paper"]["families"]["plain"]
    assert top == [fam["settings"][1], fam["settings"][2]]


def test_the_choice_reads_tuning_seeds_only():
    pl = C.plan("smoke")
    screen = _fake_records(pl, "screen", lambda a, i, s: 100.0 * (i + 1) + s)
    first = C.choose(pl, screen, "screen")
    bbb = pl["tiers"]["paper"]["families"]["bbb"]
    # BBB: the best setting of each KL divisor goes on (stratified), in rank order
    want = [next(s for s in bbb["settings"] if s["kl"] == v) for v in bbb["space"]["kl"]]
    want.sort(key=bbb["settings"].index)
    assert first["paper"]["bbb"]["top"] == want
    plain = pl["tiers"]["paper"]["families"]["plain"]["settings"]
    assert first["paper"]["eps1"]["top"] == plain[:2]
    # records of reported seeds (any stage), and of confirm seeds under 'screen', that would make
    # the last setting best by far: the choice does not move
    noise = (_fake_records(pl, "screen", lambda a, i, s: -1e6 * i, seeds=pl["seeds"]["reported"])
             + _fake_records(pl, "reported", lambda a, i, s: -1e6 * i,
                             seeds=pl["seeds"]["reported"])
             + _fake_records(pl, "screen", lambda a, i, s: -1e6 * i,
                             seeds=pl["seeds"]["confirm"]))
    assert C.choose(pl, screen + noise, "screen") == first
    # the confirm stage, on the screen and confirm seeds: the second top setting lower
    four = pl["seeds"]["screen"] + pl["seeds"]["confirm"]
    confirm = _records_for(pl, "confirm", lambda t, a: first[t][a]["top"],
                           lambda t, a, j, sd: 50.0 - j, four)
    chosen = C.choose(pl, screen + confirm, "confirm")
    assert chosen["paper"]["bbb"]["chosen"] == first["paper"]["bbb"]["top"][1]
    rep = [{**r, "seed": 4, "final_regret": 1e9 if r["setting"] ==
            first[r["tier"]][r["agent"]]["top"][1] else -1e9} for r in confirm]
    rep += [{**r, "stage": "reported", "seed": 5} for r in rep]
    assert C.choose(pl, screen + confirm + rep + noise, "confirm") == chosen
    # ... while a tuning-seed number does move it (the test is not vacuous)
    moved = [dict(r) for r in confirm]
    for r in moved:
        if r["tier"] == "paper" and r["agent"] == "bbb" and r["seed"] == 100 and \
                r["setting"] == first["paper"]["bbb"]["top"][0]:
            r["final_regret"] = -1000.0
    assert C.choose(pl, screen + moved, "confirm")["paper"]["bbb"]["chosen"] == \
        first["paper"]["bbb"]["top"][0]
    # a tuning seed missing is an error, not a silent choice
    with pytest.raises(ValueError, match="need"):
        C.choose(pl, [r for r in screen if r["seed"] != 101], "screen")
    with pytest.raises(ValueError, match="need"):
        C.choose(pl, screen + [r for r in confirm if r["seed"] != 100], "confirm")
    # the edge stage: an extension lower on the four seeds replaces the choice
    ext = {t: {a: chosen[t][a]["extensions"] for a in chosen[t]} for t in C.TIERS}
    assert ext["paper"]["bbb"], "the smoke grid's two values put every ordered factor at an edge"
    edge = _records_for(pl, "edge", lambda t, a: [e["setting"] for e in ext[t][a]],
                        lambda t, a, j, sd: 10.0 + j, four)
    final = C.choose(pl, screen + confirm + edge, "edge")
    assert final["paper"]["bbb"]["chosen"] == ext["paper"]["bbb"][0]["setting"]
    worse = [{**r, "final_regret": 99.0} for r in edge]
    kept = C.choose(pl, screen + confirm + worse, "edge")
    assert kept["paper"]["bbb"]["chosen"] == chosen["paper"]["bbb"]["chosen"]


def test_extensions_step_one_grid_step_outward():
    fam = {"space": {"prior": [0.02, 0.05, 0.1, [0.5, 1.0, 0.0025]], "rho_init": [-6.0, -5.0, -4.0],
                     "lr": [3e-4, 1e-3, 3e-3, 1e-2], "noise_sigma": [0.5, 1.0, 2.0],
                     "kl": ["capacity", "seen"]}}
    s = {"prior": 0.1, "rho_init": -6.0, "lr": 1e-3, "noise_sigma": 2.0, "kl": "seen"}
    got = {e["factor"]: e["setting"][e["factor"]] for e in C.extensions(fam, s)}
    assert got == {"prior": 0.2, "rho_init": -7.0, "noise_sigma": 4.0}
    assert C.extensions(fam, {**s, "prior": [0.5, 1.0, 0.0025], "rho_init": -5.0,
                              "noise_sigma": 1.0}) == []
    assert C._at_edge(fam, {**s, "prior": 0.2}) == ["prior", "rho_init", "noise_sigma"]


def test_schedule_of_every_step_is_the_plain_batched_run():
    x, p = _mushroom_like()
    cfg = BB.BatchConfig(steps=12, hidden=8, updates_per_step=2, batch=4, record_every=3)
    rows = [BB.RowSpec(seed=0, bayesian=True, buffer=12, kl_count="filled", thompson_samples=1),
            BB.RowSpec(seed=1, buffer=12)]
    plain = BB.BatchedRuns(rows, cfg, x, p)
    plain.advance(12)
    sched = C.ScheduledRuns(rows, cfg, x, p, train_every=1)
    sched.advance(12)
    for r in range(2):
        a, b = plain.row_state(r), sched.row_state(r)
        for k in a:
            if isinstance(a[k], torch.Tensor):  # (plain rows' sigma records are NaN)
                assert torch.equal(a[k].nan_to_num(-1.0), b[k].nan_to_num(-1.0)), k


def test_showdown_schedule_trains_every_k_steps_and_splits_cleanly():
    x, p = _mushroom_like()
    cfg = BB.BatchConfig(steps=20, hidden=8, updates_per_step=3, batch=4, record_every=5)
    rows = [BB.RowSpec(seed=2, bayesian=True, buffer=20, kl_count="filled"),
            BB.RowSpec(seed=3, buffer=20)]
    calls = []
    straight = C.ScheduledRuns(rows, cfg, x, p, train_every=5)
    real = BB.BatchedRuns._update

    def spy(self, codes, rewards, seeds, step):
        calls.append((self.t, step))
        return real(self, codes, rewards, seeds, step)
    straight_update = C.ScheduledRuns.__mro__[1]._update
    assert straight_update is real
    BB.BatchedRuns._update = spy
    try:
        straight.advance(20)
    finally:
        BB.BatchedRuns._update = real
    # trained after steps 5, 10, 15, 20 (1-based), 3 updates each, Adam's steps 1 ... 12
    assert [t for t, _ in calls] == [4] * 3 + [9] * 3 + [14] * 3 + [19] * 3
    assert [s for _, s in calls] == list(range(1, 13))
    split = C.ScheduledRuns(rows, cfg, x, p, train_every=5)
    split.advance(7)
    split.advance(20)
    for r in range(2):
        a, b = straight.row_state(r), split.row_state(r)
        assert torch.equal(a["weights"], b["weights"]) and a["cum"] == b["cum"]


def test_run_stages_end_to_end_and_resume_skips_finished_runs(tmp_path, monkeypatch):
    x, p = _mushroom_like()
    pl = C.plan("smoke")
    out, ck = tmp_path / "runs", tmp_path / "ck"
    got = C.run_stage(pl, "screen", x, p, out_dir=out, checkpoint_dir=ck, part=(0, 2))
    got2 = C.run_stage(pl, "screen", x, p, out_dir=out, checkpoint_dir=ck, part=(1, 2))
    n_screen = len(C.stage_runs(pl, "screen"))
    assert got["ran"] + got2["ran"] == n_screen and got["skipped"] == got2["skipped"] == 0
    recs = C.load_records(pl, out)
    assert len(recs) == n_screen
    assert all(len(r["cum_regret"]) == pl["screen_steps"] // pl["record_every"] for r in recs)
    # a second pass runs nothing: every engine would fail if called
    def boom(*a, **k):
        raise AssertionError("a finished run was run again")
    monkeypatch.setattr(C.BB, "run_rows", boom)
    monkeypatch.setattr(C, "run_scheduled", boom)
    monkeypatch.setattr(C, "run_agent", boom)
    assert C.run_stage(pl, "screen", x, p, out_dir=out, checkpoint_dir=ck) == \
        {"ran": 0, "skipped": n_screen}
    monkeypatch.undo()
    # one record lost: only that run runs again, with the same numbers
    lost = C.record_path(pl, C.stage_runs(pl, "screen")[0], out)
    before = json.loads(lost.read_text())
    lost.unlink()
    assert C.run_stage(pl, "screen", x, p, out_dir=out, checkpoint_dir=ck)["ran"] == 1
    assert json.loads(lost.read_text())["cum_regret"] == before["cum_regret"]
    # the next stages follow from the tuning records
    choice = C.choose(pl, C.load_records(pl, out), "screen")
    C.run_stage(pl, "confirm", x, p, choice=choice, out_dir=out, checkpoint_dir=ck)
    # a confirm run on a screen seed continued the screen's checkpoint: the same as a straight run
    for tier in C.TIERS:
        run = next(r for r in C.stage_runs(pl, "confirm", choice)
                   if r.tier == tier and r.agent == "bbb" and r.seed == pl["seeds"]["screen"][0])
        sch = pl["tiers"][tier]["schedule"]
        row, cfg = C.row_spec(pl, run), C.batch_config(pl, run)
        straight = (BB.run_rows([row], cfg, x, p) if sch["kind"] == "every_step" else
                    C.run_scheduled([row], cfg, x, p, sch["train_every"]))[0]
        assert json.loads(C.record_path(pl, run, out).read_text())["cum_regret"] == \
            straight["cum_regret"], tier
    conf = C.choose(pl, C.load_records(pl, out), "confirm")
    C.run_stage(pl, "edge", x, p, choice=conf, out_dir=out, checkpoint_dir=ck)
    assert all(C.record_path(pl, r, out).exists() for r in C.stage_runs(pl, "edge", conf))
    final = C.choose(pl, C.load_records(pl, out), "edge")
    res = C.run_stage(pl, "reported", x, p, choice=final, out_dir=out, checkpoint_dir=ck)
    assert res["ran"] == len(C.stage_runs(pl, "reported", final))
    rep = [r for r in C.load_records(pl, out) if r["stage"] == "reported"]
    assert {r["agent"] for r in rep} == {"bbb", "greedy", "eps1", "eps5", "bbb_one_draw",
                                         "neural_linear", "lin_full_post", "bootstrap",
                                         "dropout", "uniform"}
    assert all(r["mean_sigma"] is not None for r in rep if r["agent"].startswith("bbb"))
    # the why stage: BBB's chosen paper-tier setting under each KL variant, on its own seeds
    why = C.stage_runs(pl, "why", final)
    assert len(why) == (len(C.WHY_VARIANTS) + 1) * len(pl["seeds"]["why"])
    chosen = {k: v for k, v in final["paper"]["bbb"]["chosen"].items() if k != "kl"}
    assert all({k: v for k, v in r.settings.items() if k != "variant"} == chosen
               for r in why if r.agent == "bbb")
    C.run_stage(pl, "why", x, p, choice=final, out_dir=out, checkpoint_dir=ck,
                extra={"choice_sha256": "x" * 64})
    recs = [r for r in C.load_records(pl, out) if r["stage"] == "why" and r["agent"] == "bbb"]
    assert all(r["choice_sha256"] == "x" * 64 and r["finite"] is True for r in recs)
    assert {r["setting"]["variant"] for r in recs} == set(C.WHY_VARIANTS)
    for r in recs:
        assert len(r["kl"]) == len(r["nll"]) == len(r["kl_n"]) == len(r["cum_regret"])
        assert all(v > 0 for v in r["kl"]) and all(v == v for v in r["nll"])
    by = {r["setting"]["variant"]: r for r in recs}
    steps, every = pl["steps"], pl["record_every"]
    buf = C.B.buffer_settings("paper", steps)["buffer"]
    assert by["paper_capacity"]["kl_n"] == [float(buf)] * (steps // every)
    assert by["paper_seen"]["kl_n"] == [float(max(buf, t)) for t in range(every, steps + 1,
                                                                           every)]
    assert by["keep_all_filled"]["kl_n"] == [float(t) for t in range(every, steps + 1, every)]
    assert by["keep_all_floor4096"]["kl_n"] == [4096.0] * (steps // every)
    for r in recs:
        assert len(r["sigma_q"]) == steps // every and len(r["sigma_q"][0]) == 5
        assert all(v >= 0 for v in r["pred_sd"]) and all(v == v for v in r["nll_q"])


def test_diagnosed_runs_only_read_the_state():
    """DiagnosedRuns records more but runs every row exactly as BatchedRuns does, and its KL at
    the start is the closed form's (a Gaussian prior) within Monte-Carlo error."""
    x, p = _mushroom_like()
    cfg = BB.BatchConfig(steps=12, hidden=8, updates_per_step=2, batch=4, record_every=3)
    rows = [BB.RowSpec(seed=0, bayesian=True, buffer=6, prior=0.05, rho_init=-4.0),
            BB.RowSpec(seed=1, bayesian=True, buffer=12, prior=C.MIXTURE, kl_count="seen"),
            BB.RowSpec(seed=2, buffer=12)]
    plain, diag = BB.BatchedRuns(rows, cfg, x, p), C.DiagnosedRuns(rows, cfg, x, p)
    plain.advance(12)
    diag.advance(12)
    for r in range(3):
        a, b = plain.row_state(r), diag.row_state(r)
        for k in a:
            if isinstance(a[k], torch.Tensor):
                assert torch.equal(a[k].nan_to_num(-1.0), b[k].nan_to_num(-1.0)), k
    res = diag.results()
    assert "kl" not in res[2] and len(res[0]["kl"]) == 4
    assert res[0]["kl_se"] == [0.0] * 4 and all(v > 0 for v in res[1]["kl_se"])
    # the Monte-Carlo KL (as the mixture gets it) agrees with the exact one of a Gaussian prior
    fresh = C.DiagnosedRuns(rows[:1], BB.BatchConfig(steps=1, hidden=8, updates_per_step=0,
                                                     batch=4, record_every=1), x, p)
    fresh.advance(1)
    exact = fresh.results()[0]["kl"][0]
    mc = C.DiagnosedRuns([BB.RowSpec(**{**rows[0].__dict__, "prior": (0.5, 0.05, 0.05)})],
                         fresh.cfg, x, p)
    mc.advance(1)
    got = mc.results()[0]
    assert abs(got["kl"][0] - exact) < 4 * got["kl_se"][0] + 1e-3 * exact


def test_only_the_default_profile_writes_under_results():
    with pytest.raises(ValueError, match="may not write"):
        C.records_dir(C.plan("smoke"), PROJECT_ROOT / "results" / "x")
    assert C.records_dir(C.plan("default"), PROJECT_ROOT / "results" / "x")


def test_the_declared_plan_is_the_plan_the_code_builds():
    """Once declared, results/03_contextual_bandit/plan_v3.json must stay the code's plan: a
    change of helpers.bandit_campaign that moves the plan is a new version."""
    import importlib.util
    spec = importlib.util.spec_from_file_location("bandit_v3", PROJECT_ROOT / "tools" /
                                                  "bandit_v3.py")
    tool = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(tool)
    path = PROJECT_ROOT / "results" / "03_contextual_bandit" / "plan_v3.json"
    built = C.plan("default")
    assert tool.same_plan({**built, "declared": {"created": "x"}}, built)
    assert not tool.same_plan({**built, "steps": 1}, built)
    if not path.exists():
        pytest.skip("plan v3 not declared yet")
    assert tool.same_plan(json.loads(path.read_text()), built)
