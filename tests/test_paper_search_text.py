"""Notebook 01's paper-protocol section in words (helpers.paper_search_text), on synthetic
finished records built like tests/test_paper_search.py's ``_fake``: a search walked to its
recipes, final runs on five seeds at 2×400 (a width with the paper's values), ablations."""
import json
import statistics

import pytest

from helpers import paper_search as P
from helpers import paper_search_report as R
from helpers import paper_search_text as X
from helpers import stats

SEEDS = (0, 1, 2, 3, 4)
SGD = dict(zip(SEEDS, (0.0180, 0.0184, 0.0186, 0.0179, 0.0185)))
SHIFT = {"sgd": 0.0, "dropout": -0.0030, "bbb_gaussian": -0.0034, "bbb_mixture": -0.0035}
NOISE = {"sgd": (0, 0, 0, 0, 0), "dropout": (1, -2, 0, 2, -1),
         "bbb_gaussian": (6, -5, 4, -6, 2), "bbb_mixture": (-1, 1, 0, 1, -1)}


def settings():
    return dict(P.settings("smoke"), search_width=400, widths=(400,), seeds={400: SEEDS},
                ablation_seeds=(0, 1))


def _fake(path, cfg, val, test=None, posterior=None):
    rec = {"config": cfg.__dict__ | {"lr_milestones": cfg.lr_milestones}, "name": cfg.name,
           "metrics": {"val_error": val, **({"test_error": test} if test is not None else {})},
           "history": [] if test is None else
           [{"epoch": e + 1, "test_error": test + 0.001 * (3 - e), "val_error": val}
            for e in range(4)]}
    if posterior is not None:
        rec["posterior"] = posterior
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(rec, default=list))


def _posterior(spread):
    return {str(k): {"sigma_q": [0.01, 0.012, 0.01 * s]} for k, s in zip((0, 2, 4), spread)}


def walk_search(s):
    """Fake every rung of every method's search (validation only) until each has its recipe."""
    for m in P.COST_ORDER:
        for _ in range(4):
            st = P.search_state(s, m)
            if st["recipe"] is not None:
                break
            for j in st["jobs"]:
                val = 0.02 + 0.001 * (j.cfg.lr * 100 % 7) + (0.0005 if j.cfg.lr_milestones else 0)
                _fake(j.path, j.cfg, val)
        assert P.search_state(s, m)["recipe"] is not None


def finals(s, spread=(3.0, 1.2, 1.1), untrained=()):
    for m in P.COST_ORDER:
        for i, seed in enumerate(SEEDS):
            cfg = P.recipe_config(s, m, 400, seed)
            test = SGD[seed] + SHIFT[m] + 1e-4 * NOISE[m][i]
            post = None if not m.startswith("bbb") else \
                _posterior((1.1, 1.05, 1.2) if m in untrained else spread)
            _fake(P.record_path(cfg, "final"), cfg, test - 0.0002, test, post)


def ablations(s):
    for k, (label, cfg0) in enumerate(P.ablations(s)):
        for seed in s["ablation_seeds"]:
            cfg = cfg0.__class__.from_dict({**cfg0.__dict__, "seed": seed})
            test = SGD[seed] + SHIFT["bbb_mixture"] + 0.0003 * (k + 1) + 0.0001 * seed
            _fake(P.record_path(cfg, "ablation"), cfg, test, test)


@pytest.fixture
def done():
    s = settings()
    walk_search(s)
    finals(s)
    ablations(s)
    return s


def test_the_answer_renders_effects_numbers_and_the_verdict_follows_the_interval(done):
    rec = X.summary(done)
    text = X.answer(rec)
    e = R.effects(R.final_rows(done))[400]["BBB (scale mixture) < SGD"]
    # the same number, computed a second way from the rows
    mix = [SGD[s] + SHIFT["bbb_mixture"] + 1e-4 * n for s, n in zip(SEEDS, NOISE["bbb_mixture"])]
    d = statistics.fmean(a - SGD[s] for a, s in zip(mix, SEEDS))
    assert e["mean_diff"] == pytest.approx(d)
    shown = f"{100 * d:+.2f}".replace("-", "−") + " pp " + X._ci(e["ci"])
    assert shown in text
    # the interval, then whether it excludes the paper's difference, then the declared word
    part = text[text.index("mixture − plain network " + shown):]
    assert part.index("]") < part.index("lies outside") < part.index("*holds*")
    assert "*holds*" == X._verdict(rec, "400", "bbb_mixture", "sgd", "BBB (scale mixture) < SGD")
    # the Gaussian prior's ordering is noisy: not resolved, with its interval before the word
    g = rec["effects"]["400"]["scale mixture < Gaussian prior"]
    gtxt = X.effect_words(rec, 400, "bbb_mixture", "bbb_gaussian", "scale mixture < Gaussian prior")
    assert gtxt.index(X._ci(g["ci"])) < gtxt.index("*not resolved at 5 seeds*")
    # the margin of comparable is named, and the scale mixture's cell against the paper
    assert "±0.1 pp" in text and "(the paper: 1.36%)" in text
    cell = stats.vs_published(mix, 0.0136, scale=100, unit=" pp")
    assert f"{100 * statistics.fmean(mix):.2f}% (5 seeds)" in text and cell["verdict"] in text
    # every Table 1 cell's declared word against the paper, in the method order
    words = [f"*{rec['analysis']['cells'][f'{k}_h400']['verdict']}*" for k in X.METHODS]
    line = next(x for x in text.splitlines() if x.startswith("- Each Table 1 cell"))
    assert [line.index(w) for w in words] == sorted(line.index(w) for w in words)


def test_effects_table_shows_each_difference_with_its_interval_then_its_verdict(done):
    rec = X.summary(done)
    head, rows, words = X.effects_table(rec)
    by = {r[1]: r for r in rows}
    e = rec["effects"]["400"]["dropout < SGD"]
    row = by["dropout − plain network"]
    assert row[3].startswith(X._pp(e["mean_diff"]) + " " + X._ci(e["ci"]))
    assert row[2] == X._pp(0.0151 - 0.0183)
    assert row[-1] == "*holds*" and head[-1] == "verdict"
    assert row[4] == ("yes" if e["excludes_paper"] else "no")
    comp = by["mixture − dropout"]
    assert comp[-1] in ("*comparable*", "*not shown comparable at 5 seeds*")
    assert comp[-1] == f"*{rec['analysis']['comparable']['400']['verdict']}*"
    assert "0.0625" in words  # the sign test's floor at 5 seeds


def test_a_posterior_that_did_not_train_gets_no_verdict(tmp_path):
    s = settings()
    walk_search(s)
    finals(s, untrained=("bbb_mixture",))
    rec = X.summary(s)
    assert X.trained(rec, "bbb_mixture", 400) is False
    assert X.trained(rec, "bbb_gaussian", 400) is True and X.trained(rec, "sgd", 400) is None
    text = X.answer(rec)
    assert "widths of BBB, scale mixture prior did not train" in text
    # its cell against the paper, both orderings with the mixture, and mixture − dropout
    assert text.count(X.NO_VERDICT) == 4
    assert f"mixture {X.NOT_TRAINED};" not in text and f"; mixture {X.NOT_TRAINED}." in text
    assert "dropout − plain network" in text and "*holds*" in text  # no BBB side: counts
    head, rows, words = X.posterior_table(rec, per_seed=True)
    mix = [r for r in rows if r[1] == X.NAMES["bbb_mixture"]]
    assert len(mix) == 5 and {r[-1] for r in mix} == {"no"}
    assert f"{R.TRAINED_SPREAD:g}" in words
    assert mix[0][3] == "1.10 / 1.05 / 1.20"
    # sigma_moved per layer: the median 0.012 against softplus(rho0)
    rho0 = rec["rows"][3]["sigma_moved"][0]
    assert mix[0][4].startswith(f"{100 * rho0['0']:+.0f} %".replace("-", "−"))
    head, rows, words = X.posterior_table(rec)  # one row per width and method
    assert [r[-1] for r in rows] == ["5 of 5", "0 of 5"]
    assert rows[0][3] == "3.00 / 1.20 / 1.10"
    assert X.NO_VERDICT in X.takeaway(rec) and "*holds*" in X.takeaway(rec)
    t1 = X.table1(rec)[1]
    assert [r[5] for r in t1] == ["—", "—", "yes", "no"]
    assert X.NOT_TRAINED in t1[3][4] and "*" not in t1[3][4]
    assert "did not train" in X.posterior_words(rec)
    # the rule's edge: a spread exactly at the threshold trains
    assert X.trained({"rows": [{"key": "bbb_mixture", "H": 1, "sigma_spread": [
        {"0": R.TRAINED_SPREAD}]}]}, "bbb_mixture", 1) is True


def test_nothing_is_rendered_while_a_stage_is_missing(capsys):
    s = settings()
    rec = X.summary(s)
    assert X.search_table(rec) is None and X.main_effects_table(rec) is None
    walk_search(s)
    rec = X.summary(s)
    assert X.search_table(rec) is not None and X.main_effects_table(rec) is not None
    assert X.answer(rec) == "" and X.table1(rec) is None and X.effects_table(rec) is None
    assert X.posterior_table(rec) is None and X.ablation_table(rec) is None
    assert X.takeaway(rec) == "" and X.final_records(s, "sgd", 400, rec) == []
    assert X.figure2(s, rec) is None and X.figure2_words(rec) == ""
    assert X.show(X.answer(rec), "the final runs") is False
    assert "NOT COMPUTED YET: the final runs" in capsys.readouterr().out
    # four of five seeds of one method: the width is not finished, nothing of it renders
    finals(s)
    cfg = P.recipe_config(s, "dropout", 400, 4)
    P.record_path(cfg, "final").unlink()
    rec = X.summary(s)
    assert X.answer(rec) == "" and X.table1(rec) is None
    # a diverged run ends its seed: the width renders and the table names it
    _fake(P.record_path(cfg, "final"), cfg, None)
    rec = json.loads(P.record_path(cfg, "final").read_text())
    rec["diverged"] = "loss is nan"
    P.record_path(cfg, "final").write_text(json.dumps(rec))
    rec = X.summary(s)
    assert X.answer(rec) and "diverged: seed 4" in X.table1(rec)[1][1][3]
    assert not (P.root() / "summary.json").exists()  # reading writes nothing


def test_search_and_ablations_are_described_without_verdict_words(done):
    rec = X.summary(done)
    head, rows, words = X.search_table(rec)
    assert [r[0] for r in rows] == [X.NAMES[m] for m in X.METHODS]
    for r, m in zip(rows, X.METHODS):
        best = rec["search"][m]["rungs"][-1][0]
        assert r[3] == X._pct(best["score"])
        assert ("×0.1 after epoch 300" if best["schedule"] == "step" else "constant rate") in r[1]
    assert "not a finding" in words
    head, rows, words = X.ablation_table(rec)
    assert len(rows) == len(rec["ablations"])
    for r, a in zip(rows, rec["ablations"]):
        assert r[4] == X._pp(a["mean_diff"]) + " " + X._ci(a["ci"])
        assert a["mean_diff"] > 0 and "*" not in " ".join(r)
    assert "not tests" in words
    me = X.main_effects_table(rec)[1]
    lr = next(r[1] for r in me if r[0] == "learning rate")
    cells = rec["main_effects"]["bbb_mixture"]["lr"]
    assert sum(c["n"] for c in cells.values()) == done["trials"]
    assert all(X._pct(c["mean_score"]) in lr for c in cells.values() if c["mean_score"])
    runs = X.final_records(done, "bbb_mixture", 400, rec)
    assert [r["config"]["seed"] for r in runs] == list(SEEDS)


def test_table1_sits_beside_the_adam_recipe_and_figure2_draws_every_method(done):
    rec = X.summary(done)
    adam = {"rows": [{"key": "sgd", "H": 400, "seeds": [0, 1], "test_error": [0.015, 0.016]}]}
    head, rows, words = X.table1(rec, adam)
    assert rows[0][-1] == "1.55 ± 0.07% (2)"
    assert rows[1][-1] == "—" and rows[0][2] == "1.83%"
    sgd = [SGD[s] for s in SEEDS]
    assert rows[0][3].startswith(f"{100 * statistics.fmean(sgd):.2f} ± "
                                 f"{100 * statistics.stdev(sgd):.2f}% (5")
    fig = X.figure2(done, rec)
    labels = fig.axes[0].get_legend_handles_labels()[1]
    assert sum(lab.startswith("ours") for lab in labels) == 4
    assert "BBB, scale mixture prior" in X.figure2_words(rec)
