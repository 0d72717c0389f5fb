"""Plan v1's campaign (helpers.table1_plan, tools/table1_plan.py): every setting read from the
plan, the whole smoke campaign end to end (searches that see no test image, final runs,
controls, the plan's tests), a killed driver that resumes instead of restarting, and a driver
that refuses to run without a valid plan."""
import copy
import hashlib
import json
import re
import sys
from pathlib import Path

import pytest

from helpers import analysis_plan as A
from helpers import table1_plan as T

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tools"))
import table1_plan as tool  # noqa: E402


@pytest.fixture(scope="module")
def plan():
    return A.load()


def test_every_budget_space_seed_and_rule_comes_from_the_plan(plan):
    s = T.settings(plan, "default")
    assert s["widths"] == plan["cells"]["widths"] and s["methods"] == plan["cells"]["methods"]
    assert s["seeds"] == {H: plan["seeds"]["reported"][str(H)] for H in s["widths"]}
    assert s["tuning_seed"] == plan["seeds"]["tuning"] and s["spaces"] == plan["search"]["spaces"]
    assert s["eval_samples"] == 10 and s["redraws"] == (5, 12345)
    assert [" < ".join(c) for c in s["family"]] == plan["tests"]["orderings"]["family_per_width"]
    for H in s["widths"]:
        b = plan["search"]["budget"][str(H)]
        for method in s["methods"]:
            configs = T.expand(T.space(s, H, method, {"lr": 3e-4, "lr_decay": 1.0}),
                               s["tuning_seed"], T.TRIAL)
            assert len(configs) == b["trials"]  # equal searches: the full grid, every method
            for c in configs:
                assert c["seed"] == plan["seeds"]["tuning"] and c["H"] == H
                own = c["epochs"] + (c["init_epochs"] if c["init_from"] else 0)
                assert own == b["max_epochs"]  # a warm start's epochs count in the budget
    # a changed plan changes the campaign: nothing is typed twice
    other = copy.deepcopy(plan)
    other["search"]["budget"]["800"]["max_epochs"] = 50
    other["search"]["spaces"]["sgd"]["lr"] = [0.001, 0.0005, 0.0003, 0.0002, 0.0001, 0.00002]
    s2 = T.settings(other, "default")
    assert s2["budget"][800]["max_epochs"] == 50 and 0.00002 in s2["spaces"]["sgd"]["lr"]
    other["search"]["fixed"]["momentum"] = 0.9
    with pytest.raises(T.PlanError, match="momentum"):
        T.settings(other, "default")


def test_warm_starts_wait_for_the_sgd_search_and_finals_for_their_searches(plan):
    s = T.settings(plan, "default")
    ready, remaining, blocked = T.plan_jobs(s)
    assert {j.stage for j in ready} == {"search"} and not blocked
    assert all(j.cfg.init_from is None for j in ready)
    assert len(ready) == 3 * (12 + 12 + 6 + 6)  # every random-start trial at every width
    assert remaining > len(ready)
    first = ready[0]
    assert (first.H, first.key) == (400, "sgd")


def test_the_cost_estimate_counts_every_trial(plan):
    s = T.settings(plan, "default")
    spe = dict.fromkeys(["sgd", "dropout", "bbb_gaussian", "bbb_mixture", "bbb_mixture_mc2"],
                        1.0)
    est = T.estimate(s, spe, 400)
    # sgd, dropout: 12 x 60; each BBB search: 6 x 60 + 6 x 30; one warm-start source: 30
    assert est["search_cpu_h"] == round((720 + 720 + 540 + 540 + 30) / 3600, 2)
    assert est["seeds"] == 5 and est["total_cpu_h_at_most"] >= est["search_cpu_h"]


def test_a_warm_start_source_and_a_network_trained_on(tmp_path):
    """The warm start's source is the chosen SGD recipe (init_lr, init_lr_decay), and a
    deterministic run handed ``init_model`` starts from exactly those weights."""
    import torch

    from helpers import classification as C
    from helpers.data import ImageData
    cfg = C.RunConfig(method="bbb_mixture", H=8, lr=1e-3, lr_decay=0.955, init_from="sgd",
                      init_epochs=3, init_lr=3e-4, init_lr_decay=1.0)
    src = cfg.init_source()
    assert (src.method, src.lr, src.lr_decay, src.epochs) == ("sgd", 3e-4, 1.0, 3)
    assert "initlr0p0003_initdecay1" in cfg.name
    assert C.RunConfig(method="bbb_mixture", init_from="sgd").init_source().lr == 1e-3  # as before
    with pytest.raises(ValueError, match="need init_from"):
        C.RunConfig(method="bbb_mixture", init_lr=1e-3)
    g = torch.Generator().manual_seed(0)
    x, y = torch.rand(64, 784, generator=g), torch.randint(0, 10, (64,), generator=g)
    data = ImageData(x[:32], y[:32], x[32:48], y[32:48], x[48:], y[48:])
    model, rec = C.run(C.RunConfig(method="sgd", H=8, epochs=2, seed=3), data, notebook="a")
    _, rec0 = C.run(C.RunConfig(method="sgd", H=8, epochs=0, seed=3), data, notebook="b",
                    init_model=model)
    assert rec0["metrics"]["test_misclassified"] == rec["metrics"]["test_misclassified"]
    with pytest.raises(ValueError, match="init_model"):
        C.run(C.RunConfig(method="bbb_mixture", H=8, epochs=1), data, notebook="c",
              init_model=model)


def _exit_message(argv):
    with pytest.raises(SystemExit) as err:
        tool.main(argv)
    return str(err.value.code)


def test_the_driver_refuses_to_run_without_a_valid_plan(tmp_path, plan, monkeypatch):
    monkeypatch.setenv("BBB_OUTPUT_DIR", str(tmp_path / "out"))
    missing = tmp_path / "analysis_plan.json"
    msg = _exit_message(["run", "--profile", "smoke", "--plan", str(missing)])
    assert "no analysis plan at" in msg and str(missing) in msg
    missing.write_text("{not json")
    assert "is not JSON" in _exit_message(["run", "--profile", "smoke", "--plan", str(missing)])
    bad = copy.deepcopy(plan)
    bad["tests"]["alpha"] = 0.1
    bad["search"]["budget"].pop("1200")
    missing.write_text(json.dumps(bad))
    msg = _exit_message(["run", "--profile", "smoke", "--plan", str(missing)])
    assert msg.startswith("table1_plan: refusing to run") and "alpha" in msg and "2x1200" in msg
    assert "committed plan only" in _exit_message(["run", "--plan", str(missing)])
    assert not (tmp_path / "out").exists() or not list((tmp_path / "out").rglob("*.json"))


def _keys(obj):
    if isinstance(obj, dict):
        for k, v in obj.items():
            yield k
            yield from _keys(v)
    elif isinstance(obj, list):
        for v in obj:
            yield from _keys(v)


def _done(lines):
    return [m.group(1) for line in lines for m in [re.search(r" done (.+) \(", line)] if m]


def test_the_smoke_campaign_end_to_end_resumes_after_a_kill(shared_data, tmp_path, monkeypatch,
                                                             capsys):
    monkeypatch.setenv("BBB_DATA_DIR", str(shared_data))
    monkeypatch.setenv("BBB_OUTPUT_DIR", str(tmp_path / "out"))
    # a driver stopped after three jobs ...
    tool.main(["run", "--profile", "smoke", "--max-jobs", "3", "--poll", "0.01"])
    out = capsys.readouterr().out
    assert "ran 3 jobs" in out
    done = _done(out.splitlines())
    # ... one killed inside a trial (after its checkpoint of epoch 3) ...
    s = T.settings(T.load_plan(), "smoke")
    log = []
    with pytest.raises(RuntimeError, match="failing on purpose"):
        T.drive(s, log=log.append, poll_s=0.01,
                trial_extra={"_crash_once_at_epoch": 3, "_crash_marker": str(tmp_path / "x")})
    done += _done(log)
    # ... and one started again: it resumes, and finishes the campaign
    tool.main(["run", "--profile", "smoke", "--poll", "0.01"])
    out = capsys.readouterr().out
    assert "0 still to do" in out and "summary.json" in out
    done += _done(out.splitlines())
    base = T.root()
    records = {p: json.loads(p.read_text()) for p in base.rglob("*.json")
               if p.name != "summary.json" and p.parent.name not in ("h16", "h24")}
    assert len(done) == len(set(done)) == len(records)  # no job trained twice
    resumed = [r for r in records.values() if r.get("resumed_from_epoch")]
    assert len(resumed) == 1 and resumed[0]["resumed_from_epoch"] == 3
    # every part of the resumed run names its code and machine; a run in one go has one part
    assert [seg["from_epoch"] for seg in resumed[0]["segments"]] == [0, 3]
    assert all(seg["code"] and seg["machine"] for seg in resumed[0]["segments"])
    assert all(len(r["segments"]) == 1 for r in records.values()
               if "segments" in r and not r.get("resumed_from_epoch"))
    assert [e for e, _ in resumed[0]["row"]["val_error_curve"]] == [1, 2, 3, 4]
    assert T.drive(s, poll_s=0.01) == 0  # nothing left: nothing trained again

    # searches: validation only, every trial its full budget, the choice by helpers.sweep.choose
    for path, rec in records.items():
        if "search" in path.relative_to(base).parts:
            assert not [k for k in _keys(rec) if "test" in k and k != "test_evaluated"], path
            assert rec["test_evaluated"] is False and rec["machine"] and rec["code"]
    for H in s["widths"]:
        for method in s["methods"]:
            srec = json.loads(T.search_path(H, method).read_text())
            assert len(srec["trials"]) == s["budget"][H]["trials"] and not srec["budget"]["asha"]
            assert srec["chosen"] == T.choose(srec["trials"])
            assert not [k for k in _keys(srec) if "test" in k and k != "test_evaluated"]

    # final runs: config, per-seed val and test error, per-epoch history, machine, date, commit
    finals = [r for p, r in records.items() if "runs" in p.relative_to(base).parts]
    for rec in finals:
        assert rec["metrics"]["test_error"] is not None and rec["metrics"]["val_error"] is not None
        assert all("test_error" in h and "val_error" in h for h in rec["history"])
        assert rec["machine"]["cpu"] and rec["created"] and "commit" in rec["code"]
        assert rec["metrics"]["train_wall_s"] >= 0

    summary = json.loads((base / "summary.json").read_text())
    assert summary["complete"] and summary["machines"]
    assert sum(c["records"] for c in summary["code_versions"]) == sum(
        isinstance(r.get("code"), dict) for r in records.values())
    assert summary["plan"]["sha256"] == hashlib.sha256(A.plan_path().read_bytes()).hexdigest()
    for rel, sha in summary["inputs"].items():
        assert hashlib.sha256((base / rel).read_bytes()).hexdigest() == sha
    keys = {(r["key"], r["H"]) for r in summary["rows"]}
    for H in s["widths"]:  # the smoke mixture is warm-started: its controls are rows too
        assert {(k, H) for k in s["methods"] + ["warm_start_source", "sgd_continued",
                                               "bbb_random_start"]} <= keys
    for r in summary["rows"]:
        assert r["seeds"] == s["seeds"][r["H"]] and len(r["test_error"]) == 2
        if r["key"] == "sgd_continued":  # as many epochs as BBB after the same source
            bbb = next(x for x in summary["rows"] if (x["key"], x["H"]) == ("bbb_mixture", r["H"]))
            assert r["total_epochs"] == bbb["total_epochs"]
    word = re.compile(r"^(holds|reversed|not resolved at \d+ seeds?)$")
    for H, a in summary["analysis"].items():
        assert a["status"] == "done" and not T.check_words(s, a)
        assert list(a["orderings"]) == [" < ".join(c) for c in s["family"]]
        assert all(word.match(c["verdict"]) and c["family_size"] == 3
                   for c in a["orderings"].values())
        assert set(a["cells"]) == set(s["methods"])
        assert a["comparable"]["margin_pp"] == pytest.approx(0.1)
        assert set(a["controls"]) == {"bbb_mixture < sgd_continued",
                                      "bbb_mixture < bbb_random_start"}
    before = (base / "summary.json").read_bytes()
    T.write_summary(s)
    assert (base / "summary.json").read_bytes() == before  # same inputs, same bytes

    # notebook 01's progress view: everything done, and never a test number
    items, done_n, todo = T.progress(s)
    assert todo == 0 and "complete" in T.progress_words(s)
    for it in items:
        assert it["seeds_done"] == it["seeds_planned"]
        assert it["search_trials"] is None or it["search_done"] == it["search_trials"]
        assert not [k for k in it if "test" in k]
    head, body = T.progress_table(s)
    assert len(body) == len(items) and not [h for h in head if "test" in h]

    # ... and its Table 1 and tests, read from the summary: the same rows and verdicts
    head, body = T.results_table(summary)
    assert len(body) == len(summary["rows"])
    assert {r[0] for r in body} == {f"2×{s['plan_width'][H]}" for H in s["widths"]}
    assert T.results_table(T.summary(s))[1] == body  # in memory (number keys) as from the file
    col = head.index("vs the paper")
    for row, r in zip(body, summary["rows"]):
        cell = summary["analysis"][str(r["H"])]["cells"].get(r["key"])
        assert row[col] == (cell["verdict"] if cell else "—")
    head, body = T.tests_table(summary)
    verdicts = [c["verdict"] for H in s["widths"] for fam in ("orderings", "controls")
                for c in summary["analysis"][str(H)][fam].values()]
    verdicts += [summary["analysis"][str(H)]["comparable"]["verdict"] for H in s["widths"]]
    assert sorted(r[head.index("verdict")] for r in body) == sorted(verdicts)

    # ... its figure: per complete width a column, test errors above and the tests below
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig = T.figure(summary)
    assert len(fig.axes) == 2 * len(s["widths"])
    claims = len(T._claim_panels(summary["analysis"][str(s["widths"][0])]))
    assert len(fig.axes[len(s["widths"])].get_xticklabels()) == claims
    plt.close(fig)

    # ... its takeaway gives each width's answer, and section 7 reads plan v1's rows
    words = T.takeaway(summary)
    assert all(summary["analysis"][str(H)]["comparable"]["verdict"] in words
               and summary["analysis"][str(H)]["cells"]["bbb_mixture"]["verdict"] in words
               for H in s["widths"])
    ours = T.ours_for_paper_table(summary, None)["metrics"]["rows"]
    assert sorted((r["key"], r["H"]) for r in ours) == sorted(
        (k, H) for H in s["widths"] for k in T.MAIN_KEYS)
    assert {r["source"] for r in ours} == {"plan v1"}

    # ... how far ahead each search's choice is, per width, in validation images
    lead = T.margin_words(s)
    assert all(f"at 2×{s['plan_width'][H]}, by " in lead for H in s["widths"])
    assert lead.count(" images;") + lead.count(" images.") >= len(s["widths"])

    # ... its paragraph says every verdict of the tables
    words = T.what_it_shows(summary)
    assert all(v in words for v in verdicts)
    assert all(summary["analysis"][str(H)]["cells"]["bbb_mixture"]["verdict"] in words
               for H in s["widths"])

    # ... and the README's row of a complete width says the plan's verdicts
    import status_table
    for i, H in enumerate(s["widths"]):
        a = summary["analysis"][str(H)]
        row = status_table.plan_v1_row(H, summary, "nb", first=i == 0)
        assert row[0].startswith(f"Table 1 at 2×{s['plan_width'][H]}, plan v1")
        assert a["cells"]["bbb_mixture"]["verdict"] in row[3]
        assert a["comparable"]["verdict"] in row[3] and "controls: " in row[3]
        assert all(f"{n} {w}" in row[3].split("controls: ")[1] for w, n in
                   {v: [c["verdict"] for c in a["controls"].values()].count(v)
                    for v in {c["verdict"] for c in a["controls"].values()} if v != "holds"}.items())
        assert status_table.verdict_orderings(a["orderings"]) in row[3]
        if i:  # below another plan v1 row: the same cells, what repeats said as "as above"
            short = status_table.plan_v1_row(H, summary, "nb", first=False,
                                             above=s["widths"][i - 1])
            assert short[:4] == row[:4] and short[5] == row[5]
            assert short[4].startswith("as above") and len(short[4]) < len(row[4])
            assert short[4].split("grid edges: ")[1:] == row[4].split("grid edges: ")[1:]


def test_progress_before_any_run_counts_what_is_to_do(tmp_path, monkeypatch):
    monkeypatch.setenv("BBB_OUTPUT_DIR", str(tmp_path / "out"))
    s = T.settings(T.load_plan(), "smoke")
    items, done_n, todo = T.progress(s)
    assert done_n == 0 and todo == T.plan_jobs(s)[1] > 0
    assert all(it["chosen"] is None and it["seeds_done"] == 0 for it in items)
    # no search has finished: its final runs are counted "at least" (controls not yet known)
    assert not T.todo_is_exact(s)
    assert f"0 runs done, at least {todo} to do" in T.progress_words(s)
    rec = T.summary(s)
    assert all(row[1].startswith("not complete") for row in T.results_table(rec)[1])
    assert T.tests_table(rec)[1][0][1].startswith("no width complete")
    assert T.what_it_shows(rec).startswith("No width of plan v1 is complete yet")


def test_runs_to_do_are_exact_only_once_every_search_has_finished(tmp_path, monkeypatch):
    """``todo_is_exact`` from planted trial records: a warm start still waiting, a trial still
    missing, every trial there; and ``progress_words`` says "at least" only when it is not."""
    s = T.settings(T.load_plan(), "smoke")
    H = s["widths"][0]
    sgd = T.search_configs(s, H, "sgd")[0][0]  # any real configuration names a trial file
    configs = {m: [sgd] for m in s["methods"]}
    later = {m: 0 for m in s["methods"]}
    monkeypatch.setattr(T, "search_configs", lambda s_, H_, m: (configs[m], later[m]))
    monkeypatch.setattr(T, "trial_path", lambda H_, m, name: tmp_path / f"{H_}_{m}_{name}.json")
    for m in s["methods"]:
        T.trial_path(H, m, T.TRIAL.name(configs[m][0])).write_text("{}")
    assert T.todo_is_exact(s, [H])
    later["bbb_mixture"] = 2  # warm-started trials wait for the SGD search's choice
    assert not T.todo_is_exact(s, [H])
    later["bbb_mixture"] = 0
    T.trial_path(H, "dropout", T.TRIAL.name(configs["dropout"][0])).unlink()
    assert not T.todo_is_exact(s, [H])
    monkeypatch.setattr(T, "progress", lambda s_, widths=None: ([], 7, 3))
    assert "running: 7 runs done, at least 3 to do." in T.progress_words(s, [H])
    monkeypatch.setattr(T, "todo_is_exact", lambda s_, widths=None: True)
    assert "running: 7 runs done, 3 to do." in T.progress_words(s, [H])


def test_bbb_against_dropout_says_where_the_interval_lies():
    """The takeaway's words for BBB against dropout: the plan's verdict, then where the paired
    interval lies against the margin (each case planted)."""
    from helpers import stats

    def comp(a, b):
        return {**stats.comparable(a, b, 0.001), "margin_pp": 0.1}
    base = [0.0150, 0.0142, 0.0160, 0.0151, 0.0147]
    near = comp([b + d for b, d in zip(base, (1e-4, -1e-4, 2e-4, 0, 1e-4))], base)
    assert T._against_dropout(near).endswith("comparable within the plan's ±0.1 pp")
    worse = comp([b + d for b, d in zip(base, (3e-3, 2.5e-3, 3.2e-3, 2.8e-3, 3e-3))], base)
    assert "not shown comparable" in T._against_dropout(worse)
    assert "above the margin: dropout's error is lower" in T._against_dropout(worse)
    better = comp(base, [b + d for b, d in zip(base, (3e-3, 2.5e-3, 3.2e-3, 2.8e-3, 3e-3))])
    assert "below the margin: BBB's error is lower" in T._against_dropout(better)
    wide = comp([b + d for b, d in zip(base, (3e-3, -2e-3, 1e-3, -1e-3, 0))], base)
    assert "contains zero" in T._against_dropout(wide)
    # past the margin on one side, above zero: dropout lower at these seeds, said as such
    above = comp([b + d for b, d in zip(base, (1.4e-3, 0.2e-3, 2.5e-3, 0.8e-3, 1.8e-3))], base)
    words = T._against_dropout(above)
    assert "lies above zero: dropout's mean error is lower at these seeds" in words
    assert "not a result" in words
    assert "no test of this direction" in words and "contains zero" not in words
    below = comp(base, [b + d for b, d in zip(base, (1.4e-3, 0.2e-3, 2.5e-3, 0.8e-3, 1.8e-3))])
    words = T._against_dropout(below)
    assert "lies below zero: BBB's mean error is lower at these seeds" in words


def test_start_words_count_the_search_at_the_first_rung():
    """Notebook 01 section 2's sentence on warm against random starts, from planted trials."""
    from helpers import table1 as T1

    def trial(init, curve, run):
        return {"config": {"init_from": init, "init_epochs": 60 if init else 0},
                "val_curve": curve, "epochs_run": run}
    sweep = {"config": {"scheduler": {"grace_period": 5}},
             "metrics": {"chosen": {"config": {"init_from": "sgd"}}, "trials": [
                 trial("sgd", [[5, 0.015]], 60), trial("sgd", [[5, 0.030]], 5),
                 trial(None, [[5, 0.020]], 5), trial(None, [[5, 0.025]], 46)]}}
    words = T1.start_words(sweep)
    assert "1 of 2 trials that start from the trained SGD network (itself trained 60" in words
    assert "stopped 1 of those 2 at epoch 5 (the other at epoch 46)" in words
    assert words.endswith("chose a warm start.")
    sweep["metrics"]["trials"] = sweep["metrics"]["trials"][:2]
    assert T1.start_words(sweep) == ""


def test_weight_shares_read_the_histograms(monkeypatch, tmp_path):
    """Figure 3's shares from planted weight histograms (4 bins over ±0.3)."""
    import json as _json
    from helpers import table1 as T1
    runs = tmp_path / "results" / T1.NB / "runs"
    runs.mkdir(parents=True)
    rows = []
    for key, counts, outside in (("sgd", [1, 4, 4, 1], 0), ("bbb_gaussian", [3, 1, 1, 3], 2)):
        (runs / f"{key}.json").write_text(_json.dumps({"metrics": {"weight_histogram": {
            "lo": -0.3, "hi": 0.3, "bins": 4, "counts": counts, "total": sum(counts) + outside,
            "outside": outside}}}))
        rows.append({"key": key, "H": 50, "runs": [key]})
    monkeypatch.setenv("BBB_RESULTS_DIR", str(tmp_path / "results"))
    head, body, words = T1.weight_shares({"metrics": {"rows": rows}}, 50, near=0.1, far=0.2)
    # bin centres ±0.075 (near) and ±0.225 (far)
    assert body[0][1:] == ["80.0%", "20.0%", "0.0%"]
    assert body[1][1:] == ["20.0%", "80.0%", "20.0%"]
    assert "within ±0.1 of zero: SGD" in words and "range: BBB, Gaussian prior (20.0%)" in words


def test_provenance_words_name_machines_dates_and_code_versions():
    cpu = {"cpu": "AMD EPYC", "threads": 1, "torch": "2.14.1", "python": "3.11.7"}
    gpu = {"cpu": "Xeon", "gpu": "NVIDIA H200", "threads": 1, "torch": "2.11.0", "python": "3.12.3"}
    rec = {"machines": [{"machine": cpu, "records": 7}, {"machine": gpu, "records": 2}],
           "records_created": ["2026-11-25T00:00:00Z", "2026-11-26T22:00:00Z"],
           "code_versions": [{"commit": "aaaaaaa", "records": 5}, {"commit": "bbbbbbb", "records": 3},
                             {"commit": "ccccccc", "records": 1}, {"commit": "ddddddd", "records": 0}]}
    text = T.provenance_words(rec)
    assert "The 9 run records" in text
    assert "on these machines: 7 on AMD EPYC (1 thread, torch 2.14.1, Python 3.11.7); 2 on NVIDIA H200" in text
    assert "between 2026-11-25T00:00:00Z and 2026-11-26T22:00:00Z" in text
    assert "4 code versions (most records: aaaaaaa (5), bbbbbbb (3), ccccccc (1))" in text
    assert T.provenance_words({}) == "**Provenance.** No run record yet."


def test_pp_interval_shows_an_end_near_zero_with_three_decimals():
    assert T._pp_interval({"ci": [0.0000386, 0.00272]}) == "[+0.004, +0.27] pp"
    assert T._pp_interval({"ci": [-0.0027, -0.0004]}) == "[-0.27, -0.04] pp"
    assert T._pp_interval({"ci": [0.0, 0.001]}) == "[+0.00, +0.10] pp"


def test_answer_states_plan_v1s_reply_from_the_summary():
    def width(diff, comp, cont, holds=()):
        claims = {c: {"verdict": "holds" if c in holds else "not resolved at 5 seeds"}
                  for c in ("bbb_mixture < bbb_gaussian", "bbb_mixture < sgd", "dropout < sgd")}
        return {"status": "done", "cells": {"sgd": {"verdict": "better than the paper by 0.30 pp"}},
                "comparable": {"verdict": comp, "margin_pp": 0.1, "t_test": {"mean_diff": diff}},
                "orderings": claims,
                "controls": {"bbb_mixture < sgd_continued": {"verdict": cont},
                             "bbb_mixture < bbb_random_start": {
                                 "verdict": "holds" if "rs" in holds else "not resolved at 5 seeds"}}}
    rec = {"widths": [400, 1200], "plan_width": {"400": 400, "1200": 1200},
           "analysis": {"400": width(0.0004, "not shown comparable at 5 seeds",
                                     "not resolved at 5 seeds"),
                        "1200": width(0.0014, "not shown comparable at 5 seeds",
                                      "not resolved at 5 seeds", holds=("rs",))}}
    rec["analysis"]["1200"]["controls"]["bbb_mixture < bbb_random_start"]["verdict"] = "holds"
    text = T.answer(rec)
    assert "shown within ±0.1 pp of dropout at 0 of 2 widths" in text
    assert "+0.04 pp at 2×400, +0.14 pp at 2×1200" in text
    assert "Against its SGD start trained on for the same epochs: not resolved at every width" in text
    assert "only BBB mixture < BBB random start at 2×1200 holds" in text
    assert "better than the paper by 0.30 pp at 2×400" in text
    assert "so what it gains cannot be credited" in text
    # a control that holds at one width: the words per width, and no "cannot be credited"
    rec["analysis"]["400"]["controls"]["bbb_mixture < sgd_continued"]["verdict"] = "holds"
    text = T.answer(rec)
    assert "epochs: holds at 2×400; not resolved at 2×1200." in text
    assert "cannot be credited" not in text
    rec["analysis"]["1200"]["status"] = "running"  # a width still running: no answer yet
    assert T.answer(rec) == ""
