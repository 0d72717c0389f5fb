"""Notebook 01's rendered readings that replaced typed sentences (helpers.table1,
helpers.paper_protocol): planted records come out in the words, the words follow the records
(each function is tried on at least two planted outcomes), and each runs on the committed
results."""
import json
from pathlib import Path

import pytest

from helpers import paper_protocol as P
from helpers import table1 as T

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "results" / T.NB


def _row(key, H, start="random", init_epochs=0, runs=(), seeds=(), errs=()):
    return {"key": key, "H": H, "label": "stored label", "protocol": {
        "start": start, "init_epochs": init_epochs, "epochs": 30, "paper_epochs": 600},
        "runs": list(runs), "seeds": list(seeds), "test_error": list(errs)}


WARM = dict(start="warm (sgd, 60 epochs)", init_epochs=60)


def _table(rows):
    return {"metrics": {"rows": rows}}


# ---- warm starts and where their controls are ----

def test_warm_start_words_name_the_widths_without_controls():
    rows = [_row("sgd", H) for H in (400, 800, 1200)]
    rows += [_row("bbb_mixture", H, **WARM) for H in (400, 800, 1200)]
    rows += [_row("sgd_equal_compute", 400), _row("bbb_mixture_random_start", 400)]
    words = T.warm_start_words(_table(rows))
    assert "scale mixture prior starts its means from the trained SGD network at 2×400, " \
           "2×800 and 2×1200" in words
    assert "equal epochs, not equal compute" in words
    assert "This table has them at 2×400 only: at 2×800 and 2×1200 the warm start has no " \
           "control here" in words


def test_warm_start_words_when_every_warm_width_has_controls_or_none_is_warm():
    rows = [_row("bbb_mixture", 400, **WARM), _row("bbb_gaussian", 400),
            _row("bbb_mixture", 800), _row("sgd_equal_compute", 400)]
    words = T.warm_start_words(_table(rows))
    assert "at 2×400 (the start column)" in words and "at 2×800" not in words
    assert words.endswith("This table has them at 2×400.") and "only" not in words
    rows = [_row("bbb_mixture", 400, **WARM)]  # warm, no control anywhere
    assert T.warm_start_words(_table(rows)).endswith("This table has them at no width.")
    cold = T.warm_start_words(_table([_row("bbb_mixture", 400), _row("sgd", 400)]))
    assert "No recipe of this table starts from a trained network" in cold


def test_display_label_says_equal_epochs_even_for_an_older_record():
    old = {**_row("sgd_equal_compute", 400), "label": "SGD, equal compute (control)",
           "paper": None, "diff_pp": None, "mean": 0.015, "sd": None, "test_error": [0.015]}
    assert T.table_rows(_table([old]))[1][0][0] == "SGD, equal epochs (control)"
    other = {**old, "key": "something_new", "label": "kept as stored"}
    assert T.table_rows(_table([other]))[1][0][0] == "kept as stored"


# ---- plan v1 against section 3: shared seeds, repeated runs ----

def _plan(rows):
    return {"rows": rows}


def _prow(key, H, names, seeds, errs):
    return {"key": key, "H": H, "runs": [f"runs/h{H}/{key}/{n}.json" for n in names],
            "seeds": list(seeds), "test_error": list(errs)}


def test_repeat_words_count_repeats_and_say_which_differ():
    table = _table([_row("sgd", 400, runs=["a0", "a1", "a2"], seeds=[0, 1, 2],
                         errs=[0.0143, 0.0153, 0.0161]),
                    _row("bbb_gaussian", 400, runs=["g0", "g1"], seeds=[0, 1],
                         errs=[0.0171, 0.0151])])
    plan = _plan([_prow("sgd", 400, ["a0", "a1", "a2", "a3"], [0, 1, 2, 3],
                        [0.0143, 0.0153, 0.0161, 0.0150]),
                  _prow("bbb_gaussian", 400, ["g0", "g1"], [0, 1], [0.0171, 0.0153]),
                  _prow("dropout", 400, ["d0"], [0], [0.014])])
    words = T.repeat_words(table, plan)
    assert "the plan's seeds include section 3's seeds 0, 1" in words
    assert "At 2×400, 5 of the plan's runs repeat a section 3 run" in words
    assert "SGD, no regularisation: seeds 0, 1, 2; BBB, Gaussian prior: seeds 0, 1" in words
    assert "4 of 5 give the same test error as before. 1 differs: BBB, Gaussian prior, " \
           "seed 1: 1.53% here, 1.51% in section 3 (the code changed" in words
    same = _plan([_prow("sgd", 400, ["a0"], [0], [0.0143])])
    assert "all 1 give the same test error as before" in T.repeat_words(table, same)


def test_repeat_words_count_the_plans_seeds_while_a_width_runs():
    """Mid-way through a width the plan's seeds are those it reports, not those done so far."""
    table = _table([_row("sgd", 1200, runs=["a0", "a1", "a2"], seeds=[0, 1, 2],
                         errs=[0.0143, 0.0153, 0.0161])])
    running = {**_prow("sgd", 1200, ["b0"], [0], [0.0150]), "pending_seeds": [1, 2, 3, 4]}
    words = T.repeat_words(table, _plan([running]))
    assert "2×1200 the plan's seeds include section 3's seeds 0, 1, 2" in words


def test_repeat_words_without_repeats_or_shared_seeds():
    table = _table([_row("sgd", 400, runs=["a0"], seeds=[0], errs=[0.0143])])
    other_recipe = _plan([_prow("sgd", 400, ["b0"], [0], [0.0150])])
    words = T.repeat_words(table, other_recipe)
    assert "seeds include section 3's seeds 0" in words
    assert "No plan run repeats a section 3 recipe" in words and "same draw" not in words
    fresh = _plan([_prow("sgd", 400, ["b5"], [5], [0.0150]), _prow("sgd", 800, [], [], [])])
    assert "At no width do plan v1's finished runs share a seed with section 3's" in \
        T.repeat_words(table, fresh)
    elsewhere = _plan([_prow("sgd", 800, ["b0"], [0], [0.0150])])  # seed 0, another width
    assert "At no width" in T.repeat_words(table, elsewhere)


# ---- section 7's takeaway: the summed cost is argued, and where the learning rates lie ----

def _chosen(lrs):
    return lambda s, method: None if lrs.get(method) is None else {"config": {"lr": lrs[method]}}


@pytest.mark.parametrize("lrs, expect", [
    ({m: 1e-3 for m in P.PAPER_SPACES}, "All 4 methods chose the largest learning rate"),
    ({"sgd": 1e-3, "dropout": 1e-4, "bbb_gaussian": 1e-5, "bbb_mixture": 1e-4},
     "At an edge of the learning rates their search tried: plain SGD (the largest); the "
     "Gaussian prior (the smallest), of 4 methods"),
    ({m: 1e-4 for m in P.PAPER_SPACES}, "Every chosen learning rate lies inside"),
    ({"sgd": 1e-3}, "The one finished search (plain SGD) chose the largest"),
    ({}, "Its searches are still running."),
])
def test_cost_takeaway_follows_the_chosen_learning_rates(monkeypatch, lrs, expect):
    monkeypatch.setattr(P, "chosen", _chosen(lrs))
    words = P.cost_takeaway(P.settings("default"))
    assert expect in words
    assert "no run on the averaged cost tests that argument" in words


# ---- on the committed results ----

@pytest.mark.skipif(not (RESULTS / "table1.json").exists(), reason="no committed table1.json")
def test_the_readings_run_on_the_committed_results():
    table = json.loads((RESULTS / "table1.json").read_text())
    words = T.warm_start_words(table)
    assert words.startswith("**Warm start")
    plan_file = RESULTS / "plan_v1" / "summary.json"
    if plan_file.exists():
        plan = json.loads(plan_file.read_text())
        words = T.repeat_words(table, plan)
        assert words.startswith("**Plan v1 and section 3.**")


@pytest.mark.skipif(not (RESULTS / "plan_v1" / "summary.json").exists(),
                    reason="no committed plan v1 summary")
def test_sign_test_floor_reads_complete_widths_only():
    """A width still running (one seed done) does not set the sign test's floor of the
    verdicts, which are those of the complete widths."""
    from helpers import table1_plan as TP
    rec = json.loads((RESULTS / "plan_v1" / "summary.json").read_text())
    done = [H for H in rec["widths"] if rec["analysis"][str(H)]["status"] == "done"]
    if not done:
        pytest.skip("no complete width")
    n = min(len(r["seeds"]) for r in rec["rows"] if r["H"] in done and r["seeds"])
    running = [H for H in rec["widths"] if H not in done]
    rows = [r for r in rec["rows"] if r["H"] in done]
    if running:  # one seed of one row done at a width still running
        rows.append({**rec["rows"][0], "H": running[0], "seeds": [0], "test_error": [0.015]})
    text = TP.what_it_shows({**rec, "rows": rows})
    assert f"with {n} seeds its smallest two-sided p is {2 * 0.5 ** n:g}" in text
    for m in {len(r["seeds"]) for r in rec["rows"] if r["H"] in done and r["seeds"]}:
        assert f"with {m} seeds its smallest two-sided p is {2 * 0.5 ** m:g}" in text  # each width


def test_choices_effects_reads_notebook_01_rows_of_the_generated_table():
    text = ("intro\n<!-- choices:start -->\n| choice | side | net / seeds | ours | vs paper | "
            "orderings | comparable |\n|---|---|---|---|---|---|---|\n"
            "| predictor | before | 2×400 | 1.60% | worse | holds | no |\n"
            "| predictor | after | 2×400 | 1.43% | matches | not resolved | no |\n"
            "| bandit buffer | before | 4 seeds | 8,320 | — | — | — |\n<!-- choices:end -->\n")
    head, rows = T.choices_effects(text)
    assert head == ["choice", "side", "net / seeds", "ours", "vs paper", "orderings"]
    assert rows == [["predictor", "before", "2×400", "1.60%", "worse", "holds"],
                    ["predictor", "after", "2×400", "1.43%", "matches", "not resolved"]]
    with pytest.raises(ValueError, match="tools/choices.py"):
        T.choices_effects("no table here")


def test_choices_doc_is_current_and_covers_notebook_01():
    """docs/choices.md's generated table is what the committed results give today (the notebook
    shows its rows), and it holds both sides of the warm start and of the predictor rule."""
    import subprocess
    import sys
    out = subprocess.run([sys.executable, str(ROOT / "tools" / "choices.py"), "--check"],
                         capture_output=True, text=True)
    assert out.returncode == 0, out.stdout + out.stderr
    _, rows = T.choices_effects()
    choices = {r[0] for r in rows}
    assert any("warm" in c for c in choices) and any("predictor" in c for c in choices)
    assert {r[1].split(":")[0] for r in rows} == {"before", "after"}
