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


# ---- the notebook's one Table 1: the paper's protocol beside the Adam recipe ----

def _srow(key, H, errs, seeds=None):
    return {"key": key, "H": H, "seeds": list(seeds or range(len(errs))), "test_error": list(errs)}


def _summary(rows, plan_width=None):
    return {"rows": rows, **({"plan_width": plan_width} if plan_width else {})}


def _planted(mix_minus_sgd, n=3, continued=None):
    """A summary at 2×400: SGD around 1.8 %, the scale mixture ``mix_minus_sgd`` below it (seed
    noise of a few hundredths of a pp), dropout and the Gaussian prior, optionally the control
    'SGD trained on' ``continued`` above the mixture."""
    noise = [0.0001 * ((-1) ** i) * (1 + i % 2) for i in range(n)]
    sgd = [0.018 + e for e in noise]
    mix = [s + mix_minus_sgd + 0.00005 * i for i, s in enumerate(sgd)]
    rows = [_srow("sgd", 400, sgd), _srow("bbb_mixture", 400, mix),
            _srow("dropout", 400, [0.015 + e for e in noise]),
            _srow("bbb_gaussian", 400, [0.0175 - e for e in noise])]
    if continued is not None:
        rows.append(_srow("sgd_continued", 400, [m - continued + 0.00003 * (-1) ** i
                                                 for i, m in enumerate(mix)]))
    return _summary(rows)


def test_effects_reproduce_the_committed_analyses():
    """The notebook's intervals and Holm p are recomputed from the rows: on the committed
    summaries they equal what each campaign's own analysis wrote."""
    for sub in ("paper_protocol", "plan_v1"):
        path = RESULTS / sub / "summary.json"
        if not path.exists():
            pytest.skip(f"no committed {sub} summary")
        rec = json.loads(path.read_text())
        eff = T.effects(rec)
        for (W, a, b), e in eff.items():
            if sub == "paper_protocol":
                fam = rec["analysis"]["orderings"].get(str(W), {})
                res = {"bbb_mixture < bbb_gaussian": fam.get("scale mixture < Gaussian prior"),
                       "bbb_mixture < sgd": fam.get("BBB (scale mixture) < SGD"),
                       "dropout < sgd": fam.get("dropout < SGD")}.get(f"{a} < {b}")
            else:
                an = rec["analysis"][str(W)]
                res = (an["orderings"].get(f"{a} < {b}") or an["controls"].get(f"{a} < {b}"))
            if res is None or e["family"] == "comparable":
                continue
            assert e["diff"] == pytest.approx(res["t_test"]["mean_diff"], abs=1e-12)
            assert e["verdict"] == res["verdict"]
            if e["ci"]:
                assert e["ci"] == pytest.approx(res["t_test"]["ci"], abs=1e-12)
                assert e["p_holm"] == pytest.approx(res["p_holm"], abs=1e-12)


def test_paper_outside_says_whether_the_interval_rules_out_the_papers_difference():
    e = {"ci_adj": [-0.0011, -0.0001], "paper": -0.0047}
    assert T.paper_outside(e) == "yes"
    assert T.paper_outside({**e, "ci_adj": [-0.0017, 0.0002]}) == "yes"
    assert T.paper_outside({**e, "ci_adj": [-0.0050, -0.0040]}) == "no"
    assert T.paper_outside({**e, "ci_adj": [-0.0050, 0.0010]}) == "no"
    assert T.paper_outside({"ci_adj": [-0.001, 0.001], "paper": None}) == "—"
    assert T.paper_outside({"ci_adj": None, "paper": -0.0047}) == ""
    # the adjusted interval decides, not the unadjusted one
    assert T.paper_outside({"ci": [-0.0011, -0.0001], "ci_adj": [-0.0050, 0.0010],
                            "paper": -0.0047}) == "no"


def test_effects_carry_the_bonferroni_interval_of_the_declared_family():
    from helpers import stats
    rec = _with_random_start(_planted(-0.0005, n=5, continued=0.0), 0.004)
    eff = T.effects(rec)
    by = T.story_rows(rec)
    for (W, a, b), e in eff.items():
        m = {"orderings": 3, "controls": 2, "comparable": 1}[e["family"]]
        assert e["m"] == m
        xa, xb = by[(a, W)]["test_error"], by[(b, W)]["test_error"]
        if e["ci"] is None:  # no spread (the planted dropout − SGD): no interval either
            assert e["ci_adj"] is None
            continue
        assert e["ci_adj"] == pytest.approx(stats.bonferroni_interval(xa, xb, m))
        if m > 1:  # wider than the unadjusted interval
            assert e["ci_adj"][0] < e["ci"][0] and e["ci_adj"][1] > e["ci"][1]
        else:
            assert e["ci_adj"] == pytest.approx(e["ci"])
    # a summary that records its own family size is read, not the default
    rec["analysis"] = {"400": {"orderings": {"x": {"family_size": 4}}}}
    assert T.declared_m(rec, 400, "orderings") == 4 and T.declared_m(rec, 400, "controls") == 2
    assert T.effects(rec)[(400, "bbb_mixture", "sgd")]["m"] == 4


def test_declared_m_reads_the_committed_summaries():
    for sub, fams in (("paper_protocol", {"orderings": 3}),
                      ("plan_v1", {"orderings": 3, "controls": 2})):
        path = RESULTS / sub / "summary.json"
        if not path.exists():
            pytest.skip(f"no committed {sub} summary")
        rec = json.loads(path.read_text())
        for fam, m in fams.items():
            assert T.declared_m(rec, 400, fam) == m


def _with_random_start(rec, shift):
    """``rec`` plus a random-start mixture ``shift`` above the (warm) mixture, seed by seed."""
    mix = next(r for r in rec["rows"] if r["key"] == "bbb_mixture")
    rec["rows"].append(_srow("bbb_random_start", mix["H"],
                             [m + shift + 0.00002 * i for i, m in enumerate(mix["test_error"])]))
    for r in rec["rows"]:
        if r["key"] == "bbb_mixture":
            r["recipe"] = {"init_from": "sgd"}
    return rec


def test_the_answer_follows_the_planted_effects():
    small = T.answer(_planted(-0.0006), _planted(-0.0005, n=5, continued=0.0))
    assert small.startswith("**The answer, test by test** (pp; m, [interval], Holm p: as "
                            "defined above):")
    table = [line for line in small.split("\n") if line.startswith("| ")]
    assert len(table) <= 7  # the header and at most six claims
    head = [c.strip() for c in table[0].strip("|").split("|")]
    assert head[0].startswith("claim at 2×400") and head[1] == "paper's difference (pp)"
    assert head[2] == "m"
    assert head[3] == "Adam recipe: a − b [interval] (seeds), verdict"  # the Adam recipe leads
    # the paper's difference outside our interval, per width (the answer leads with it)
    assert head[4] == "paper's difference outside? (2×400)"
    assert head[5] == "the paper's protocol: the same"
    rows = {r.split("|")[1].strip(): [c.strip() for c in r.strip("|").split("|")]
            for r in table[1:]}
    assert rows["mixture − plain network"][1] == "−0.47" and rows["mixture − plain network"][2] == "3"
    assert rows["mixture − plain network"][4] == "yes"  # −0.47 outside [−0.05, −0.03]
    rows = {k: v[:4] + v[5:] for k, v in rows.items()}
    assert rows["mixture − plain network"][4].startswith("−0.05 [−0.08, −0.03] (3), Holm p ")
    assert rows["mixture − plain network"][4].endswith(": *holds*")
    assert rows["mixture − plain network"][3].startswith("−0.04 [−0.05, −0.03] (5), Holm p ")
    assert "dropout − plain network" in rows
    md = rows["mixture − dropout"][3]
    assert rows["mixture − dropout"][2] == "1"  # a test of its own
    assert ": *not shown comparable* (" in md and "Holm p" not in md  # no Holm p: not a family
    ctl = rows["mixture − plain network, extended training (control)"]
    assert ctl[4] == "not run" and ctl[2] == "2"
    assert ctl[3].endswith(": *not resolved*") and "(5), Holm p " in ctl[3]
    assert "excluding 0" not in small and "excludes 0" not in small
    # nothing after the table: whether any recipe reaches the paper's value is said once, in
    # the takeaways
    assert small.split("\n")[-1].startswith("| ")
    reach = T._reach_takeaway(_planted(-0.0006), _planted(-0.0005, n=5, continued=0.0))
    assert reach.startswith("- **Our scale mixture never reaches the paper's test error")
    assert "against 1.36–1.36%, every interval of our mean above the paper's value" in reach
    # the plain answer says it first, in words: no test names, no verdict words
    plain = T.plain_answer(_planted(-0.0006), _planted(-0.0005, n=5, continued=0.0))
    # reader r19: a bold lead of at most two sentences (the verdict with its number, then
    # whether any of the paper's orderings is confirmed), then at most three short bullets
    lead, rest = plain.split("\n\n")
    assert lead == ("**In short: trained with Adam (settings searched on validation), BBB with "
                    "the scale mixture prior (means warm-started from a trained plain network) "
                    "is better than a plain network at 2×400: at 2×400 (two hidden layers of 400 "
                    "units) its test error is −0.04 percentage points (pp) from the plain "
                    "network's (95 % interval −0.05 to −0.03, adjusted for three claims), which "
                    "rules out the paper's −0.47 pp.**")  # an ordering holds: no second sentence
    bullets = rest.split("\n")
    assert 1 <= len(bullets) <= 3 and all(b.startswith("- ") for b in bullets), rest
    assert ("- At 2×400 each of the paper's three differences lies outside our interval at that "
            "width (*How to read*, below).") in bullets
    # the baseline said as our Adam-trained plain network against the paper's, and our mixture
    assert ("Our Adam-trained plain network is 0.03 pp better than the paper's; our "
            "mixture is 0.40 pp worse than the paper's mixture.") in plain
    assert "none of the paper's Table 1 margins is reproduced" not in plain
    assert not any(w in plain for w in ("Holm", "resolved", "*holds*", "comparable", "[")), plain
    assert plain.count(". ") <= 4 and plain.count("**") == 2  # a few plain sentences
    assert "one width of" not in plain  # one width: no "one width of 1"
    unresolved = T.plain_answer(_planted(-0.0006), _planted(-0.0001, n=5, continued=0.0))
    assert "is not measurably better than a plain network: at 2×400" in unresolved
    assert ("pp. With Adam, none of the paper's three orderings (mixture below plain network and "
            "below Gaussian prior, dropout below plain network) holds at any width.**"
            ) in unresolved
    big = T.plain_answer(_planted(-0.0047), _planted(-0.0006, n=5, continued=-0.003))
    assert "which rules out the paper's −0.47 pp" in big
    assert T.answer(_summary([]), _planted(-0.0006)) == ""
    assert T.plain_answer(_summary([]), _planted(-0.0006)) == ""
    # where sigma stayed near its start, the paper protocol's tests are shown once, in section 3
    led = T.answer(_planted(-0.0006), _planted(-0.0005, n=5), sigma_fixed=0.0067)
    assert "the paper's protocol" not in led.split("\n")[2]  # no column of its numbers
    assert "−0.05 [−0.08, −0.03] (3)" not in led
    open_ = T.plain_answer(_planted(-0.0006), _planted(-0.0005, n=5), sigma_fixed=0.0067)
    where = T.paper_rerun_words()  # σ measured in a rerun; the 600-epoch runs inferred
    assert ("\n- Under the paper's protocol as we filled it in (plain SGD, 600 epochs), "
            "BBB's σ (each weight's posterior spread) did not learn "
            + (where[:-1] + "; the 600-epoch runs recorded no σ: section 3 extrapolates)"
               if where else "(section 3)")
            + ", so its three comparisons with BBB (section 2's table) get no verdict") in open_
    assert "confirmed" not in open_  # one verdict word: *holds*
    assert len(open_.split("\n\n")[1].split("\n")) <= 3  # still at most three bullets
    assert "chapter" not in open_ and "until runs" not in open_  # no campaign status
    assert "as we filled it in" not in T.plain_answer(_planted(-0.0006), _planted(-0.0005, n=5))
    plan = RESULTS / "paper_protocol" / "plan.json"
    (P.root()).mkdir(parents=True)
    (P.root() / "plan.json").write_text(plan.read_text())
    rho = json.loads(plan.read_text())["fixed"]["rho_init"]
    assert T.paper_fill_in() == f"ρ₀ = {rho:g}, one learning rate for μ and ρ".replace("-", "−")
    open_ = T.plain_answer(_planted(-0.0006), _planted(-0.0005, n=5), sigma_fixed=0.0067)
    assert "ρ₀" not in open_  # the settings are named in section 1, not in the first screen
    assert "*holds*" in T.answer(_planted(-0.0006), _planted(-0.0005, n=5)).split("\n")[4]
    # the answer's column headers stay short (definitions live in Terms)
    head = T.answer(_planted(-0.0006), _planted(-0.0005, n=5)).split("\n")[2]
    assert all(len(h.split()) <= 8 for h in head.strip("|").split("|")), head
    assert not any(w in led + open_ for w in ("will ", "not yet", "in progress", "width σ",
                                              "widths", "campaign"))
    # the warm start: lower than a random start, not than SGD trained on -> it rests on it
    warm = _with_random_start(_planted(-0.0005, n=5, continued=0.0), 0.004)
    text = T.answer(_planted(-0.0006), warm)
    assert text.split("\n")[-1].startswith("| ")  # the controls' reading: once, in the takeaways
    assert "rests on" not in text
    row = next(r for r in text.split("\n") if r.startswith("| mixture − random-start"))
    assert row.split("|")[4].strip().endswith(": *lower*")


def test_holm_p_and_the_comparable_reading_follow_the_effect():
    e = {"diff": -0.0006, "ci": [-0.0011, -0.0001], "ci_adj": [-0.0013, 0.0001], "p_holm": 0.054,
         "verdict": "not resolved", "family": "orderings", "n": 5, "paper": -0.0047, "m": 3}
    # the interval beside a verdict is the adjusted one
    assert T._answer_effect(e) == "−0.06 [−0.13, +0.01] (5), Holm p 0.054: *not resolved*"
    assert T._answer_effect(e, verdict=False) == "−0.06 [−0.13, +0.01] (5)"
    assert T._effect_cell(e)[0] == "−0.06 [−0.13, +0.01], Holm p 0.054: *not resolved*"
    c = {**e, "p_holm": None, "family": "comparable", "verdict": "not shown comparable", "m": 1}
    reading = lambda lo, hi: T.comparable_reading({**c, "ci_adj": [lo, hi]})  # noqa: E731
    assert reading(0.0025, 0.0040) == "entirely above +0.1 pp"
    assert reading(-0.0040, -0.0025) == "entirely below −0.1 pp"
    assert reading(0.00004, 0.0027) == "above 0, crosses +0.1 pp"
    assert reading(-0.0027, -0.00004) == "below 0, crosses −0.1 pp"
    assert reading(-0.0005, 0.0013) == "contains 0, crosses +0.1 pp"
    assert reading(-0.0018, 0.0035) == "contains 0, crosses −0.1 and +0.1 pp"
    assert reading(-0.0005, 0.0005) == ""  # inside the margin: the verdict says it
    for lo, hi in ((0.0025, 0.004), (0.00004, 0.0027), (-0.0005, 0.0013)):  # no direction words
        assert not any(w in reading(lo, hi) for w in ("worse", "better", "holds", "tell"))
    # beside the declared verdict, which side of 0 an interval that excludes 0 lies on
    assert T._answer_effect({**c, "ci_adj": [0.0025, 0.0040]}).endswith(
        "(5): *not shown comparable* (higher error than dropout: entirely above +0.1 pp)")
    assert T._answer_effect({**c, "ci_adj": [-0.0027, -0.00004]}).endswith(
        ": *not shown comparable* (lower error than dropout: below 0, crosses −0.1 pp)")
    assert T._answer_effect({**c, "ci_adj": [-0.0005, 0.0013]}).endswith(
        ": *not shown comparable* (contains 0, crosses +0.1 pp)")  # no side: 0 inside
    assert T.comparable_side({**c, "ci_adj": [0.00004, 0.0027]}) == "higher error than dropout"
    # reader r18: a side that the interval adjusted for the widths does not carry is not named
    one = {**c, "ci_adj": [0.00004, 0.0027], "ci_widths": [-0.0005, 0.0033], "m_widths": 3}
    assert T._answer_effect(one).endswith(
        ": *not shown comparable* (above 0, crosses +0.1 pp at this width alone; adjusted for "
        "the three widths [−0.05, +0.33], contains 0)")
    both = {**one, "ci_widths": [0.00002, 0.0033]}
    assert T._answer_effect(both).endswith(
        ": *not shown comparable* (higher error than dropout: above 0, crosses +0.1 pp; "
        "adjusted for the three widths [+0.002, +0.330], excludes 0)")
    assert T.comparable_side({**c, "ci_adj": [-0.0005, 0.0013]}) == ""


def test_comparable_terms_and_resolvable_words_read_the_half_widths():
    a, p = _planted(-0.0005, n=5), _planted(-0.0006)
    hw = [(e["ci_adj"][1] - e["ci_adj"][0]) / 2 for e in list(T.effects(a).values())
          + list(T.effects(p).values()) if e["family"] == "comparable" and e["ci"]]
    hw = [(e["ci_adj"][1] - e["ci_adj"][0]) / 2 for e in T.effects(a).values()
          if e["family"] == "comparable" and e["ci"]]  # the Adam recipe's
    terms = T.detectable_words(p, a)
    assert terms.startswith("**What the seeds can detect** (Adam recipe).")
    lo, hi = f"{100 * min(hw):.2f}", f"{100 * max(hw):.2f}"
    assert lo == hi  # one width: said per width, with what it leaves
    assert (f"*Comparable* could pass at 2×400 (half-width {lo} pp) "
            "only for a mean difference within ") in terms
    room = 0.1 - 100 * min(hw)
    assert f"within ±{room:.2f} pp." in terms
    e = T.effects(a)[(400, "bbb_mixture", "sgd")]
    assert (f"any gain of the scale mixture over the plain network is at most "
            f"{-100 * e['ci_adj'][0]:.2f} pp, ") in terms
    assert T.detectable_words(_summary([]), _summary([])) == ""
    words = T.resolvable_words(p, a)
    assert "t(1 − 0.025/m, n − 1) · sd(paired differences) / √n" in words
    line = next(x for x in words.split("\n") if x.startswith("- 2×400: "))
    half = [(e["ci_adj"][1] - e["ci_adj"][0]) / 2 for e in T.effects(a).values() if e["ci_adj"]]
    assert line.startswith(f"- 2×400: Adam recipe {100 * min(half):.2f}") and "(5 seeds)" in line
    assert "the paper's protocol" in line and "(3 seeds)" in line
    assert T.resolvable_words(_summary([]), _summary([])) == ""


def test_answer_cells_name_other_widths_only_where_the_verdict_differs():
    rec = _planted(-0.0006, n=5)
    sgd = next(r for r in rec["rows"] if r["key"] == "sgd")["test_error"]
    for r in list(rec["rows"]):  # the same rows at 2×1200, the mixture there beside SGD
        errs = r["test_error"] if r["key"] != "bbb_mixture" else [
            x + 0.0003 * (-1) ** i for i, x in enumerate(sgd)]
        rec["rows"].append({**r, "H": 1200, "test_error": errs})
    eff = T.effects(rec)
    cell = T._answer_cell(eff, 400, "bbb_mixture", "sgd")
    assert cell.startswith("−0.05 [") and cell.split("; at 2×1200: ")[0].endswith("*holds*")
    assert cell.endswith("(5), Holm p 1: *not resolved*") and "; at 2×1200: +0.0" in cell
    assert "2×1200" not in T._answer_cell(eff, 400, "dropout", "sgd")  # same verdict
    assert T._answer_cell(eff, 800, "bbb_mixture", "sgd") == "not run"


def test_sgd_vs_paper_and_seeds_words_follow_the_summaries():
    words = T.sgd_vs_paper_words(_planted(-0.0006), _planted(-0.0005, n=5))
    assert words.startswith("**The paper's plain-network baseline was weak.** The Adam recipe's "
                            "plain network minus the paper's, with the "
                            "unadjusted 95% interval of our mean: −0.03 pp [−0.05, −0.01] at 2×400.")
    # reader r17: dropout's interval against the paper's, which Figure 2's takeaway cites
    # reader r19: the scale mixture against the paper's too, the README's "ours − paper"
    assert ("Trained as the paper says, our plain network, dropout and scale mixture are −0.03 "
            "pp [−0.07, +0.01], −0.01 pp [−0.05, +0.03] and +0.38 pp [+0.34, +0.43] from the "
            "paper's at 2×400.") in words
    assert "Our scale mixture minus the paper's, again unadjusted: +" in words
    assert "more than half" not in words  # 0.03 pp of the paper's 0.47 pp margin
    near = _planted(-0.0006, n=5)
    near["rows"][0]["test_error"] = [0.0183, 0.0185, 0.0181, 0.0184, 0.0182]
    assert T.sgd_vs_paper_words(_summary([]), near).startswith(
        "**Our plain network against the paper's.** The Adam recipe's plain network minus the "
        "paper's, with the unadjusted 95% interval of our mean: +0.00 pp [")
    same = _planted(-0.0006, n=5)
    for r in same["rows"]:
        if r["key"] == "sgd":
            r["test_error"] = [0.0143, 0.0145, 0.0141, 0.0144, 0.0142]
    weak = T.sgd_vs_paper_words(_summary([]), same)
    assert weak.startswith("**The paper's plain-network baseline was weak.**")
    assert "more than half the paper's margin" in weak and "Trained as" not in weak
    assert T.sgd_vs_paper_words(_planted(-0.0006), _summary([])) == ""
    a = _planted(-0.0005, n=5)
    a["rows"] += [{**r, "H": 800, "test_error": r["test_error"][:3],
                   "seeds": r["seeds"][:3]} for r in list(a["rows"])]
    seeds = T.seeds_words(_planted(-0.0006), a)
    eff = T.effects(a)
    ratio = max((eff[(800, x, y)]["ci_adj"][1] - eff[(800, x, y)]["ci_adj"][0])
                / (eff[(400, x, y)]["ci_adj"][1] - eff[(400, x, y)]["ci_adj"][0])
                for (V, x, y) in eff if V == 800 and eff[(V, x, y)].get("ci_adj")
                and (eff.get((400, x, y)) or {}).get("ci_adj"))
    from helpers import stats
    q = 1 - 0.05 / (2 * 3)  # the orderings' family, m = 3
    alone = stats.t_ppf(q, 2) / stats.t_ppf(q, 4) * (5 / 3) ** 0.5  # the seed count alone
    assert 2.3 < alone < 2.7
    more = (f", up to {ratio:.0f} times with its larger seed-to-seed spread"
            if ratio > 1.1 * alone else "")
    assert seeds == (f"**Seeds.** 2×800 has 3 seeds with the Adam recipe, against 5 at 2×400: "
                     f"intervals about {alone:.1f} times as wide from the seed count alone "
                     f"(m = 3){more}.")
    one = _planted(-0.0006)
    one["rows"] += [{**r, "H": 1200, "test_error": r["test_error"][:1], "seeds": r["seeds"][:1]}
                    for r in list(one["rows"])]
    assert T.seeds_words(one, _planted(-0.0005, n=5)) == (
        "**Seeds.** 2×1200 has 1 seed under the paper's protocol: no interval.")
    same = T.seeds_words(_planted(-0.0006), _planted(-0.0005, n=5))
    assert same == ""  # every width has its recipe's most seeds: nothing to say
    assert "plans" not in seeds and "not recorded" not in seeds
    assert T.seeds_words(_summary([]), a) == ""


def test_intervals_show_enough_decimals_to_read_what_they_exclude():
    assert T._ci_pp([0.0000437, 0.00272]) == "[+0.004, +0.272]"
    assert T._ci_pp([-0.0011, -0.0001]) == "[−0.11, −0.01]"
    assert T._ci_pp([0.0, 0.0012]) == "[+0.00, +0.12]"  # an end that is 0 stays two decimals
    assert T._ci_pp([-0.0000004, 0.001]) == "[−0.0000, +0.1000]"  # at most four


def test_controls_read_lower_or_higher_and_comparability_per_row():
    rec = _planted(-0.0006, n=5)
    rec["rows"].append(_srow("bbb_random_start", 400,
                             [m + 0.004 + 0.00002 * i for i, m in
                              enumerate(rec["rows"][1]["test_error"])]))
    rows = T.effects_rows(_summary([]), rec)[1]  # the Adam recipe's columns come first
    ctl = next(r for r in rows if r[1] == "mixture − random-start mixture (control)")
    assert ctl[4].endswith(": *lower*") and ", Holm p " in ctl[4] and ctl[3] == "2"
    assert next(r for r in rows if r[1] == "mixture − plain network")[4].endswith(": *holds*")
    gauss = next(r for r in rows if r[1] == "mixture − Gaussian")
    assert gauss[4].endswith(": *not resolved*") or gauss[4].endswith(": *holds*")
    assert gauss[3] == "3"
    md = next(r for r in rows if r[1] == "mixture − dropout")
    assert ": *not shown comparable* (" in md[4] and "Holm p" not in md[4] and md[3] == "1"
    same = _planted(-0.0006, n=5)
    same["rows"][2]["test_error"] = [x + 0.00001 * (i % 3) for i, x in
                                     enumerate(same["rows"][1]["test_error"])]
    md = next(r for r in T.effects_rows(_summary([]), same)[1] if r[1] == "mixture − dropout")
    assert md[4].endswith(": *comparable*")
    head = T.effects_rows(_summary([]), same)[0]
    assert head[3] == "m"
    assert head[4].startswith("Adam recipe") and head[6].startswith("the paper's protocol")
    assert "[interval]" in head[4] and "unadjusted" not in head[4]  # defined in the answer
    assert head[5] == head[7] == "paper's difference outside it"


def test_comparable_margin_words_read_the_papers_differences():
    words = T.comparable_margin_words()
    assert words.startswith("**The ±0.1 pp margin of *comparable*** (10 of the 10,000 test "
                            "images)")
    assert words.endswith("the paper's own mixture − dropout difference lies outside it at "
                          "2×400.")  # −0.15 pp; +0.01 and −0.04 lie inside
    assert "(5 of the 5,000 test images)" in T.comparable_margin_words(n_test=5000)


def test_table_and_effect_rows_follow_the_summaries():
    head, rows = T.table1_rows(_planted(-0.0006), _summary([], None))
    assert len(head) == 5 and [r[1] for r in rows] == [T.TABLE_LABELS[k] for k in T.METHODS]
    assert rows[0][1] == "plain network"  # the method, not the optimiser
    assert rows[0][2] == "1.83%" and rows[0][4] == "not run" and rows[0][3].endswith("(3)")
    smoke = _summary([_srow("sgd", 16, [0.1, 0.12])], plan_width={"16": 400})
    assert T.table1_rows(_summary([]), smoke)[1][0][4].startswith("11.00 ± ")
    head, rows = T.effects_rows(_planted(-0.0006), _planted(-0.0006, n=5, continued=0.0))
    control = [r for r in rows if "extended training" in r[1]]
    assert len(control) == 1 and control[0][6] == "—" and control[0][7] == "—"
    mix_sgd = next(r for r in rows if r[1] == "mixture − plain network")
    assert mix_sgd[2] == "−0.47" and mix_sgd[4].endswith(": *holds*") and mix_sgd[5] == "yes"
    assert not any("excludes" in c or "0 and" in c for r in rows for c in r)
    assert not any("SGD" in r[1] for r in rows)  # the method is the plain network
    one = T.effects_rows(_planted(-0.0006, n=1), _summary([]))[1]
    assert all(r[6].endswith(" (one seed)") for r in one)  # the paper's protocol's column


def test_takeaways_give_each_finding_its_number():
    clear = _planted(-0.004, n=5)
    text = T.takeaways(clear, _planted(-0.0006, n=5, continued=0.0), sigma_fixed=True)
    bullets = text.split("\n")
    assert bullets[0].startswith("- **With a modern recipe")  # the Adam recipe leads
    assert bullets[-1].startswith("- **The paper's protocol, as run here, does not test a learned "
                                  "posterior**: σ shifted uniformly and did not learn (section 3), "
                                  "so its BBB numbers (its scale mixture: ")
    assert not any(b.startswith("− ") or b.startswith("−**") for b in bullets)  # "- " survives
    assert all(b.startswith("- **") for b in bullets), bullets
    assert bullets[-1].endswith("do not describe BBB with a learned σ; for BBB that half of "
                                "the question is open.")
    assert "reversing" not in text and "worse than" not in text  # no finding about BBB from it
    assert "BBB is resolved below the plain network or its control at some width" in bullets[0]
    assert "**The paper's margin was measured against a weak baseline**" in text
    # the headline effect with its adjusted interval and the paper's difference, and the control
    assert ("at 2×400 our per-width intervals exclude all the paper's differences; at "
            "2×400 mixture − plain network is −0.05 pp [−0.06, −0.04];") in bullets[0]
    assert "which excludes" not in bullets[0]  # said once, by the clause before it
    assert T._headline(T.effects(_planted(-0.0005, n=5)), 400).endswith(
        ", which excludes the paper's −0.47 pp")
    assert "; against the plain network with extended training, " in bullets[0]
    assert bullets[0].endswith(" (answer; section 2).") and "Holm p" not in text
    # mixture − dropout: its interval and, where it excludes 0, its side
    md = next(b for b in bullets if b.startswith("- **BBB is not shown to be as good as dropout"))
    assert ", higher error than dropout" in md and "pp [" in md
    weak = next(b for b in bullets if "weak baseline" in b)
    assert "every interval below 0" in weak and " pp over the widths" in weak
    unclear = _planted(-0.0001, n=5, continued=0.0)
    text = T.takeaways(_planted(-0.0006), unclear, sigma_fixed=False)
    assert "does not test a learned posterior" not in text
    assert "- **The paper's protocol, as run here**: its scale mixture is worse" in text
    assert ("BBB is resolved below neither the plain network nor its extended-training "
            "control") in text
    same = _planted(-0.0006, n=5)
    same["rows"][0]["test_error"] = [0.0183, 0.0185, 0.0181, 0.0184, 0.0182]
    assert "weak baseline" not in T.takeaways(_summary([]), same)
    # with the diagnostics, the sigma bullet says how far sigma moved
    def layer(s, d):
        return {"sigma_q": [s, s, s], "rho_drift_q": [d, d], "narrow_share": None}
    diag = {"runs": {"paper protocol, plain SGD, scale mixture": {"trace": [
        {"epoch": i, "layers": {"0": layer(0.0067 + 0.0001 * i, 0.01 * i)}, "nll": 0.1,
         "kl": 1.0} for i in range(3)]}}}
    clear["rows"] = [{**r, "epochs": 600} for r in clear["rows"]]
    last = T.takeaways(clear, _planted(-0.0006, n=5), sigma_fixed=True, diag=diag).split("\n")[-1]
    assert ("σ shifted uniformly and did not learn: its 95th percentile "
            "went from 0.0067 to 0.0069 in 2 epochs (section 3)") in last


def test_effects_figure_marks_the_rows_whose_sigma_did_not_learn():
    rec = _planted(-0.0006)
    labels = lambda fig: [t.get_text() for t in fig.legends[0].get_texts()]  # noqa: E731
    plain = T.effects_figure(rec, _planted(-0.0005, n=5))
    marked = T.effects_figure(rec, _planted(-0.0005, n=5), sigma_fixed=0.0067)
    assert not any("σ did not learn" in x for x in labels(plain))
    assert any("σ did not learn (section 3): no verdict" in x for x in labels(marked))
    pale = [ln for ln in marked.axes[0].lines if ln.get_alpha() is not None and ln.get_alpha() < 1]
    assert pale and not [ln for ln in plain.axes[0].lines
                         if ln.get_alpha() is not None and ln.get_alpha() < 1]
    lo, hi = marked.axes[0].get_xlim()  # every interval and the paper's crosses inside
    ends = [100 * x for e in T.effects(rec).values() if e.get("ci_adj") for x in e["ci_adj"]]
    assert lo < min(ends + [-0.47]) and hi > max(ends)


def test_headline_names_the_widths_that_cannot_tell():
    e = {"diff": -0.0006, "ci_adj": [-0.0013, 0.0001], "paper": -0.0047, "n": 5}
    ea = {(400, "bbb_mixture", "sgd"): e,
          (800, "bbb_mixture", "sgd"): {**e, "ci_adj": [-0.0052, 0.004], "paper": -0.005, "n": 3}}
    assert T._headline(ea, 400) == (": at 2×400 mixture − plain network is −0.06 pp [−0.13, "
                                    "+0.01], which excludes the paper's −0.47 pp; 2×800 (3 seeds, "
                                    "[−0.52, +0.40]) cannot tell")
    ea[(800, "bbb_mixture", "sgd")]["ci_adj"] = [-0.0040, 0.004]  # excludes the paper's
    assert "cannot tell" not in T._headline(ea, 400)


def test_figure3_takeaway_names_the_wider_samples():
    def rec(counts, outside=0):
        return {"metrics": {"weight_histogram": {"lo": -0.3, "hi": 0.3, "bins": 6,
                                                 "counts": counts, "outside": outside,
                                                 "total": sum(counts) + outside}}}
    runs = {"sgd": rec([0, 10, 40, 40, 10, 0]), "dropout": rec([1, 20, 29, 29, 20, 1]),
            "bbb_gaussian": rec([30, 10, 10, 10, 10, 30], 9),
            "bbb_mixture": rec([0, 1, 49, 49, 1, 0])}
    line = T._figure3_takeaway([("Adam recipe", runs)])
    assert line.startswith("- **Figure 3's wider BBB weights appear only for the Adam recipe's "
                           "BBB, Gaussian prior**: ")
    assert "% of its sample beyond ±0.1 against 42.00% at most for the plain network and " \
           "dropout" in line
    narrow = {**runs, "bbb_gaussian": rec([0, 1, 49, 49, 1, 0])}
    assert "do not appear" in T._figure3_takeaway([("Adam recipe", narrow)])
    assert T._figure3_takeaway([]) == ""


def test_weight_shares_say_what_lies_beyond_the_plotted_range():
    def rec(outside):
        return {"metrics": {"weight_histogram": {"lo": -0.3, "hi": 0.3, "bins": 4,
                                                 "counts": [1, 48, 48, 1], "total": 100,
                                                 "outside": outside}},
                "config": {"seed": 0, "H": 400}}
    head, rows, words = T.weight_share_rows({"sgd": rec(2), "bbb_gaussian": rec(0)})
    assert rows[0][3] == "2%" and rows[1][3] == "0%" and head[3].endswith("(±0.3)")
    assert "2% of the plain network sample lies beyond ±0.3 (right-hand panel)." in words
    assert "Why so wide" not in words  # only for the Gaussian prior, from its prior's sigma
    g = {**rec(9), "config": {"seed": 0, "H": 400, "prior_sigma": 1.0}}
    assert "towards the prior N(0, 1²), far wider than the plain network's weights" in \
        T.weight_share_rows(
        {"sgd": rec(0), "bbb_gaussian": g})[2]
    assert words.startswith("Neither BBB sample has wider tails than the plain network or dropout "
                            "(beyond ±0.1)")
    assert "4.00%" not in words and "2.00%" not in words  # the table's shares, not repeated
    assert "dips at 0" not in words  # no scale mixture here
    wide = T.weight_share_rows({"sgd": rec(0), "bbb_gaussian": rec(9)})[2]
    assert "Only BBB, Gaussian prior has wider tails than the plain network and dropout" in wide
    both = T.weight_share_rows({"sgd": rec(0), "bbb_gaussian": rec(9), "bbb_mixture": rec(0)})[2]
    assert "The scale mixture's sample is not wider (0.0% of its weights within ±0.01)." \
        in both and "scale mixture's sample is" not in wide
    spike = {"metrics": {"weight_histogram": {"lo": -0.3, "hi": 0.3, "bins": 4,
                                              "counts": [0, 50, 50, 0], "total": 100,
                                              "outside": 0}}, "config": {"seed": 0, "H": 400}}
    near0 = T.weight_share_rows({"sgd": rec(0), "bbb_gaussian": rec(9), "bbb_mixture": spike},
                                near=0.2)[2]
    assert "The scale mixture's sample is a spike at 0 (more of it within ±0.2 than the plain " \
        "network's or dropout's)." in near0
    def h6(counts, outside):  # bins of 0.1 over ±0.3
        return {"metrics": {"weight_histogram": {"lo": -0.3, "hi": 0.3, "bins": 6,
                                                 "counts": counts, "outside": outside,
                                                 "total": sum(counts) + outside}},
                "config": {"seed": 0, "H": 400}}
    tails = {"sgd": h6([0, 10, 40, 40, 10, 0], 0), "dropout": h6([1, 20, 29, 29, 20, 1], 0),
             "bbb_gaussian": h6([30, 10, 10, 10, 10, 30], 9),
             "bbb_mixture": h6([3, 1, 46, 46, 1, 3], 1)}
    hists = {k: v["metrics"]["weight_histogram"] for k, v in tails.items()}
    assert T._heavier_beyond(hists, "bbb_mixture", ["sgd", "dropout"]) == pytest.approx(0.2)
    assert T._heavier_beyond(hists, "sgd", ["dropout"]) is None
    # fewer weights than dropout beyond ±0.1, more beyond the range: the measure decides
    assert ("For the scale mixture it depends on the threshold (table): fewer of its weights "
            "than dropout's lie beyond ±0.1, more beyond ±0.3.") in T.weight_share_rows(tails)[2]
    assert T.weight_share_rows(tails)[1][3][2:] == ["8.91%", "0.99%"]  # the numbers: in the table
    assert T.weight_share_rows(tails)[1][1][2:] == ["42.00%", "0%"]
    inside = {**tails, "bbb_mixture": h6([3, 1, 46, 46, 1, 3], 0)}
    text = T.weight_share_rows(inside)[2]
    assert "depends on the threshold" not in text and "The scale mixture's sample is not wider" in text
    dip = {"metrics": {"weight_histogram": {"lo": -0.3, "hi": 0.3, "bins": 5,
                                            "counts": [1, 40, 2, 40, 1], "total": 84,
                                            "outside": 0}}, "config": {"seed": 0, "H": 400}}
    words = T.weight_share_rows({"bbb_mixture": dip}, narrow=0.001)[2]
    assert "The scale mixture's sample dips at 0 (density 0.2, against 4.0 and 4.0 at its modes " \
           "near −0.12 and +0.12); in section 3's rerun the prior's narrow component " \
           "claims at most 0.1% of the means; why, under a prior peaked at 0, is unexplained." \
           in words
    flat = {"metrics": {"weight_histogram": {**dip["metrics"]["weight_histogram"],
                                             "counts": [1, 30, 40, 30, 1], "total": 102}}}
    assert "dips" not in T.weight_share_rows({"bbb_mixture": flat})[2]
    fig = T.figure3_runs({"sgd": rec(2), "bbb_gaussian": rec(0)})
    labels = [t.get_text() for t in fig.axes[0].get_legend().get_texts()]
    # the share beyond the range is said once, in the right-hand panel, not in the legends
    assert labels[0] == "plain network" and fig.axes[0].get_xlim() == (-0.3, 0.3)
    bars = fig.axes[-1]  # the mass beyond the range, drawn as a share of each network
    assert len(fig.axes) == 2 and [p.get_width() for p in bars.patches] == [2.0, 0.0]
    assert bars.get_xlim()[1] >= 2.0 and bars.get_xscale() == "log"  # small shares visible
    # a sample with much of its mass beyond the range says so in its panel
    assert any("2% of the sample lies beyond ±0.3" in t.get_text() for t in fig.axes[0].texts)
    assert not T.figure3_runs({"sgd": rec(0), "bbb_gaussian": rec(0)}).axes[0].texts
    assert fig.axes[0].get_ylabel() == ("density per unit weight (log scale),\nnormalised over "
                                        "the whole sample")


def test_curve_rows_and_predictor_words_follow_the_records():
    row = {"key": "sgd", "H": 400, "test_error_last_100": [0.0180], "test_error_previous_100":
           [0.0181], "test_error_sd_last_100": [0.0005]}
    head, rows, words = P.curve_rows({"rows": [row]})
    assert rows == [["plain network", "2×400", "1", "−0.010", "0.050", "yes"]]
    # the rule, said before the table: |change| < 2 · sd · √(2 / (100 · n)), here ≈ 0.014 pp
    assert "2 · sd · √(2 / (100 · n)): twice the standard error" in P.curve_rule()
    assert words == ("**Conclusion:** the largest drift over the last 100 epochs is 0.010 pp "
                     "(plain network, 2×400), 1.0 of the 10,000 test images.")
    falling = {**row, "test_error_last_100": [0.0170]}
    head, rows, words = P.curve_rows({"rows": [falling, {**row, "key": "dropout"}]})
    assert rows[0][3] == "−0.110" and rows[0][5] == "no"
    assert words == ("**Conclusion:** the largest drift over the last 100 epochs is 0.110 pp "
                     "(plain network, 2×400), 11.0 of the 10,000 test images.")
    # 0.02 pp is inside one epoch-to-epoch sd (the old rule) but beyond the standard error
    drift = {**row, "test_error_last_100": [0.0179], "test_error_previous_100": [0.0181]}
    assert P.curve_rows({"rows": [drift]})[1][0][5] == "no"
    # against the narrowest adjusted half-width: "enough" only when the drift is far below it
    assert words.endswith("11.0 of the 10,000 test images.")  # the flat column says the rest
    far = P.curve_rows({"rows": [row]}, against=0.001)[2]
    assert far.endswith("That drift is 10% of the narrowest half-width of our intervals "
                        "(0.100 pp): 600 epochs are enough for these comparisons.")
    near = P.curve_rows({"rows": [row]}, against=0.0002)[2]
    assert "600 epochs are enough" not in near
    assert near.endswith("(0.020 pp): longer training could move the closest comparisons by "
                         "about that much.")
    # a resolved verdict whose interval ends further from 0 than twice the drift is safe from it
    safe = P.curve_rows({"rows": [row]}, against=0.0002,
                        verdicts=[("dropout − plain network at 2×400", [-0.0062, -0.0018])])[2]
    assert safe.endswith("It cannot change the resolved verdict (dropout − plain network at "
                         "2×400, [−0.62, −0.18]): its interval ends more than twice that drift "
                         "from 0.")
    close = P.curve_rows({"rows": [row]}, against=0.0002,
                         verdicts=[("x", [-0.0062, -0.00001])])[2]
    assert "cannot change" not in close
    three = {**drift, **{k: v * 3 for k, v in drift.items() if k.startswith("test_error")}}
    assert P.curve_rows({"rows": [three]})[1][0][2] == "3"  # n = 3 narrows the rule by √3
    assert P.curve_rows({"rows": [{**row, "test_error_last_100": [None]}]})[1:] == ([], "")

    def run(pred, ens, mean):
        return {"metrics": {"predictor": pred, "test_error_ensemble": ens,
                            "test_error_mean_weights": mean, "eval_samples": 10}}
    recs = {"bbb_mixture": [run("mean_weights", 0.019, 0.018), run("ensemble", 0.017, 0.018)]}
    words = P.predictor_words({"widths": [400]}, records=lambda m, H: recs.get(m, []))
    assert words == ("Validation chose the posterior mean for 1 of 2 BBB runs; on the test set "
                     "the average of 10 sampled networks had the lower error in 1 of 2.")


def test_figure2_gives_each_method_its_panel_and_paper_line_and_clips_nothing():
    hist = [{"test_error": 0.09}] + [{"test_error": 0.018}] * 9
    recs = {m: [{"history": hist}] for m in ("sgd", "dropout", "bbb_gaussian", "bbb_mixture")}
    fig = P.figure2({"widths": [400], "final_epochs": 10}, records=lambda m, H: recs[m])
    assert len(fig.axes) == 5  # small multiples: one panel per method, then all four together
    assert "1 seed per method (no band)" in fig._suptitle.get_text()  # no band promised
    assert "BBB: posterior-mean weights μ" in fig._suptitle.get_text()  # the predictor drawn
    assert [t.get_text() for t in fig.axes[4].texts] == ["plain network", "dropout",
                                                         "Gaussian prior", "scale mixture"]
    ys = sorted(t.xyann[1] for t in fig.axes[4].texts)  # four equal curves: labels kept apart
    assert all(b / a >= 1.19 for a, b in zip(ys, ys[1:]))
    for ax, m in zip(fig.axes, ("sgd", "dropout", "bbb_gaussian", "bbb_mixture")):
        labels = [t.get_text() for t in ax.get_legend().get_texts()]
        assert ax.get_title().startswith(P.TABLE_LABELS[m])
        assert labels == ["ours (1 seed)",
                          f"the paper: {100 * P.PAPER_TABLE1[m][400]:.2f}%"]
        assert all(t.get_fontsize() >= 9 for t in ax.get_legend().get_texts())
    lo, hi = fig.axes[0].get_ylim()
    assert lo <= 0.0136 and hi >= 0.09  # the first epoch and every paper line inside


def test_posterior_extrapolation_reads_the_drift_and_says_it_is_one():
    from helpers import posterior_diagnostics as PD

    def layer(s, d, t):
        return {"sigma_q": [s, s, s], "rho_drift_q": [d, t], "narrow_share": None}

    def run(drifts, s0=0.0067):  # rho's drift at its 95th percentile after each epoch
        return {"trace": [{"epoch": i, "layers": {"0": layer(s0, 0.9 * d, d)}, "nll": 0.1,
                           "kl": 1.0} for i, d in enumerate(drifts)], "epochs": len(drifts) - 1}
    steady = {"runs": {"paper protocol, plain SGD, scale mixture": run([0, 0.05, 0.1])}}
    text = PD.extrapolation(steady, 600)
    assert text.startswith("**σ in the 600-epoch runs: an extrapolation.**")
    assert "σ's 95th percentile, " in text and " (steadily), would reach" in text
    assert "width" not in text
    import math
    s600 = math.log1p(math.exp(math.log(math.expm1(0.0067)) + 0.05 * 600))
    # the extrapolated level, given for size only: the rule reads the spread
    assert "For size only (the *level*, which the rule does not read)" in text
    assert f", would reach about {s600:.4f} after 600." in text  # no Adam run here
    # the argument: the rule's own ratio, carried on (0.9 d vs d: 1/0.9 > 1.1, so "learned")
    assert "The rule reads the *spread* of ρ's drift" in text
    assert "its ratio fell from 1.111 (epoch 1) to 1.111 (epoch 2)" in text
    assert "it would be about 1.11 after 600 epochs: *learned*" in text
    tight = {"runs": {"paper protocol, plain SGD, scale mixture": run([0, 0.05, 0.1])}}
    for r in tight["runs"].values():  # median 0.95 d: ratio 1.05, read as shifted
        for e in r["trace"]:
            e["layers"]["0"]["rho_drift_q"][0] = 0.95 * e["layers"]["0"]["rho_drift_q"][1]
    assert ("about 1.05 after 600 epochs: *shifted uniformly*: σ did not learn there "
            "either.") in PD.extrapolation(tight, 600)
    assert PD.extrapolated(steady, 600)["s_end"] == pytest.approx(s600)
    assert PD.extrapolated(None, 600) is None
    assert "percentile, 0.0067 to 0.0067 in 2 epochs" in text  # the rerun's own change first
    bent = {"runs": {"paper protocol, plain SGD, scale mixture": run([0, 0.08, 0.1])}}
    assert "steadily" not in PD.extrapolation(bent, 600) and "600" in PD.extrapolation(bent, 600)
    assert PD.extrapolation({"runs": {}}, 600) == "" and PD.extrapolation(None, 600) == ""
    short = PD.extrapolation(steady, 600, level=False)  # notebook 01 (reader r19): the rule alone
    assert "For size only" not in short and "would reach" not in short
    assert short == text.split(" For size only")[0]


def test_posterior_answer_words_use_the_takeaways_statistic():
    from helpers import posterior_diagnostics as PD

    def run(drift_med, drift_top, s0, s1, narrow=None):
        layer = lambda s, d, t: {"sigma_q": [s, s, s], "rho_drift_q": [d, t],  # noqa: E731
                                   "narrow_share": narrow}
        return {"trace": [{"epoch": 0, "layers": {"0": layer(s0, 0, 0)}, "nll": None, "kl": 1.0},
                          {"epoch": 1, "layers": {"0": layer(s1, drift_med, drift_top)},
                           "nll": 0.1, "kl": 1.0}], "epochs": 1, "val_error": [0.02]}
    rec = {"settings": {"epochs": 50, "seed": 0}, "runs": {
        "paper protocol, plain SGD, scale mixture": run(0.05, 0.051, 0.0067, 0.0071, 0.002),
        "paper protocol, plain SGD, Gaussian": run(0.05, 0.051, 0.0067, 0.0071),
        "plan v1, Adam, scale mixture (random start)": run(0.5, 3.0, 0.0025, 0.1, 0.9)}}
    text = PD.answer_words(rec)
    assert text == ("BBB's σ did not learn: in a 50-epoch rerun every ρ moved by about "
                    "the same small amount, whatever the data (section 3)")
    assert PD.widths_phrase(rec) == "σ's 95th percentile went only from 0.0067 to 0.0071 in 1 epoch"
    assert PD.widths_phrase(PD.display(rec)) == PD.widths_phrase(rec)  # displayed labels too
    assert PD.widths_phrase(None) == "" and not PD.widths_phrase(rec).endswith(".")
    grown = {**rec, "runs": {**rec["runs"], "paper protocol, plain SGD, scale mixture":
                             run(0.5, 3.0, 0.0067, 0.05)}}
    assert PD.widths_phrase(grown) == "σ's 95th percentile went from 0.0067 to 0.0500 in 1 epoch"
    shows = PD.words(PD.display(rec))
    assert "(its 95th percentile grew 40-fold)" in shows and "largest σ" not in shows
    assert "In the *plain SGD* runs σ shifted uniformly and did not learn" in shows and "width" not in shows
    assert shows.count("| plain SGD, ρ₀ = −5,") == 2  # a table row per run
    assert PD.narrow_share(rec) == 0.002  # the runs whose widths did not learn only
    fig = PD.figure(rec)
    assert len(fig.axes) == 2 and fig.axes[0].get_title() == "layer 1 (input)"
    fig.canvas.draw()  # tick labels are set when drawn: major ticks only on the KL axis
    assert [t for t in fig.axes[-1].xaxis.get_minor_ticks() if t.label1.get_text()] == []
    assert any("the lines coincide" in t.get_text() for t in fig.axes[0].texts)
    rec["runs"] = {k: v for k, v in rec["runs"].items() if "Adam" in k}
    assert PD.answer_words(rec) == "" and PD.narrow_share(rec) is None and PD.answer_words(None) == ""


def test_effects_cells_give_holms_verdict_never_an_unadjusted_excludes_0():
    """An unadjusted interval that excludes 0 while Holm leaves the comparison not resolved
    reads as the interval and Holm's verdict: no mark, no 'excludes 0'."""
    rec = _planted(-0.0006, n=5)
    mix = next(r for r in rec["rows"] if r["key"] == "bbb_mixture")
    mix["test_error"] = [x + 0.0004 * (i % 2) for i, x in enumerate(mix["test_error"])]
    eff = T.effects(rec)[(400, "bbb_mixture", "sgd")]
    assert eff["ci"][1] < 0  # the unadjusted interval excludes 0 ...
    eff = {**eff, "p_holm": 0.06}  # ... and Holm leaves it not resolved
    cell, outside = T._effect_cell(eff)
    assert cell.endswith("], Holm p 0.06: *not resolved*") and outside == "yes"
    assert T._effect_cell({**eff, "p_holm": 0.01, "verdict": "holds"})[0].endswith(
        "], Holm p 0.01: *holds*")


def test_effects_rows_on_the_committed_results_say_nothing_of_0():
    paths = [RESULTS / sub / "summary.json" for sub in ("paper_protocol", "plan_v1")]
    if not all(p.exists() for p in paths):
        pytest.skip("no committed summaries")
    p, a = (json.loads(x.read_text()) for x in paths)
    head, rows = T.effects_rows(p, a)
    cells = [c for r in rows for c in r]
    assert not any(x in c for c in cells + head for x in ("†", "excludes 0", "0 and"))
    assert {r[5] for r in rows} | {r[7] for r in rows} <= {"yes", "no", "—", ""}
    assert {r[3] for r in rows} <= {"1", "2", "3"}
    verdicts = [c.split(" (")[0].split(": ")[-1] for c in cells if "]: " in c or "Holm p" in c]
    assert verdicts and set(verdicts) <= {"*holds*", "*reversed*", "*not resolved*", "*lower*",
                                          "*higher*", "*comparable*", "*not shown comparable*"}


def test_recipe_rows_read_each_rows_recipe():
    base = dict(optimizer="adam", lr=0.001, lr_decay=0.955, epochs=20, samples=2, rho_init=-6.0,
                mu_init=None, dropout=0.5, prior_sigma=1.0, pi=0.25, neg_log_sigma1=0.0,
                neg_log_sigma2=6.0, init_from=None, init_epochs=60, init_lr=None,
                init_lr_decay=None)
    rows = [{**_srow("sgd", 400, [0.015]), "recipe": {**base, "lr": 0.0003, "lr_decay": 1.0}},
            {**_srow("bbb_mixture", 400, [0.014]), "recipe": {
                **base, "init_from": "sgd", "init_epochs": 30, "init_lr": 0.001,
                "init_lr_decay": 0.955}},
            {**_srow("bbb_gaussian", 400, [0.016]), "recipe": {**base, "samples": 1,
                                                                "mu_init": 0.1}}]
    head, out = T.recipe_rows(_summary(rows))
    assert [r[1] for r in out] == ["plain network", "BBB, Gaussian prior",
                                   "BBB, scale mixture prior"]  # Table 1's labels
    assert out[0][2:] == ["0.0003, constant", "20", "—", "—", "random"]
    assert out[1][4:] == ["1, −6", "N(0, 1²)", "random, μ ~ U(±0.1)"]
    assert out[2][2] == "0.001 ×0.955/epoch" and out[2][4] == "2, −6"
    assert out[2][5] == "π = 0.25, −log σ₁ = 0, −log σ₂ = 6"
    # its source differs from this width's SGD row: the source's rate is named
    assert out[2][6] == "warm: 30-epoch plain network (Adam 0.001 ×0.955/epoch)"
    rows[0]["recipe"] = {**base, "lr": 0.001, "lr_decay": 0.955}  # the same as its source
    assert T.recipe_rows(_summary(rows))[1][2][6] == "warm: 30-epoch plain network"
    rows[0]["recipe"]["optimizer"] = "sgd"
    assert T.recipe_rows(_summary(rows))[1][0][2] == "Sgd 0.001 ×0.955/epoch"


def test_predictor_summary_counts_per_recipe():
    def run(pred, ens, mean):
        return {"metrics": {"predictor": pred, "test_error_ensemble": ens,
                            "test_error_mean_weights": mean, "eval_samples": 10}}
    a = {"bbb_mixture": [run("mean_weights", 0.019, 0.018), run("ensemble", 0.017, 0.018)]}
    b = {"bbb_gaussian": [run("mean_weights", 0.020, 0.016)]}
    head, rows, words = T.predictor_summary([("one", [400], lambda m, H: a.get(m, [])),
                                             ("two", [800], lambda m, H: b.get(m, []))])
    assert rows[0][:5] + rows[0][6:] == ["one", "BBB, scale mixture prior", "2×400", "2",
                                         "1 of 2", "1 of 2"]
    assert rows[0][5][1:] == "0.00 [−1.27, +1.27]"  # paired by run: −0.1 and +0.1 pp
    assert rows[1][5] == "−0.40 (one seed: no interval)"  # posterior mean − average, paired
    assert rows[1][:5] == ["two", "BBB, Gaussian prior", "2×800", "1", "1 of 1"]
    assert len(head) == len(rows[0]) == 7
    head1, rows1, _ = T.predictor_summary([("one", [400], lambda m, H: a.get(m, []))])
    assert head1 == head[1:] and rows1 == [r[1:] for r in rows[:1]]  # one recipe: no column
    assert words == ("One: validation chose μ in 1 of 2 BBB runs; on test the average of 10 "
                     "sampled networks was lower in 1. Two: validation chose μ in 1 of 1 BBB "
                     "runs; on test the average of 10 sampled networks was lower in 0.")
    # μ − average over the rows: said once, in the takeaway
    worse = {"bbb_mixture": [run("mean_weights", 0.019, 0.018), run("mean_weights", 0.0195, 0.018)]}
    text = T.predictor_summary([("one", [400], lambda m, H: worse.get(m, []))])[2]
    assert "μ − average" not in text
    line = T._predictor_takeaway([("one", [400], lambda m, H: worse.get(m, []))])
    assert line == ("- **Averaging sampled networks was worse on test than BBB's mean network "
                    "μ**: μ − average is −0.13 pp over section 6's 1 rows, below 0 in 0 "
                    "intervals.")  # how often validation chose μ: said once, in section 6
    # where intervals lie below 0, what that means is said
    assert T._predictor_takeaway([("one", [400], lambda m, H: {"bbb_mixture": [
        run("mean_weights", 0.019 + 0.0001 * i, 0.018) for i in range(3)]}.get(m, []))]).endswith(
        "below 0 in 1 intervals; the samples' noise costs more than averaging 10 of them "
        "recovers.")
    assert T._predictor_takeaway([("one", [400], lambda m, H: a.get(m, []))]).endswith(
        "below 0 in 0 intervals.")
    assert T._predictor_takeaway([]) == ""


def test_figure3_panels_hold_both_recipes_on_the_committed_results():
    plan = RESULTS / "plan_v1" / "summary.json"
    if not plan.exists():
        pytest.skip("no committed plan v1 summary")
    adam = json.loads(plan.read_text())
    panels = T.figure3_panels({"sgd": None}, adam, root=RESULTS / "plan_v1")  # one panel:
    # no paper-protocol record
    assert [name for name, _ in panels] == [T.RECIPES["adam"]]
    runs = panels[0][1]
    assert all(runs[m]["config"]["seed"] == 0 and runs[m]["config"]["H"] == max(adam["widths"])
               for m in T.METHODS)
    fig = T.figure3_runs(None, panels * 2)
    assert len(fig.axes) == 3 and all(ax.get_legend() for ax in fig.axes[:2])
    assert len(fig.axes[2].patches) == 8  # the mass beyond the range: a bar per network
    head, rows, words = T.weight_share_panels(panels)
    assert head[0] == "recipe" and len(rows) == 4 and words.startswith("**Adam recipe.**")
    big = max(r["metrics"]["weight_histogram"]["outside"] / r["metrics"]["weight_histogram"]["total"]
              for r in runs.values())
    assert ("(right-hand panel)" in words) == (big >= 0.001)


def test_fixed_sigma_rows_give_bbb_rows_no_verdict():
    rec = _planted(-0.0006)
    drop = next(r for r in rec["rows"] if r["key"] == "dropout")
    drop["test_error"] = [x + 0.00004 * i for i, x in enumerate(drop["test_error"])]
    words, head, rows = T.fixed_sigma_rows(rec, sigma=0.0067)
    assert words.startswith("**The paper's protocol at 2×400: its tests.** Its BBB's σ "
                            "(≈ 0.007) did not learn (section 3): the rows with BBB show their interval, no "
                            "verdict.")
    assert head[0] == "a − b (pp)" and head[1] == "m"  # one width: said once, in the words
    assert "[interval]" in head[2] and "unadjusted" not in head[2]  # defined above it
    mix = next(r for r in rows if r[0] == "mixture − plain network")
    assert mix[1] == "3" and mix[3] == "yes"
    assert mix[2].endswith("]: no verdict")  # why: said once, in the words above the table
    assert "Holm" not in mix[2]
    assert not any(w in c for r in rows if "mixture" in r[0] for c in r
                   for w in ("*holds*", "*reversed*", "*not resolved*", "comparable"))
    drop = next(r for r in rows if r[0] == "dropout − plain network")  # no BBB: its verdict
    assert ", Holm p " in drop[2] and drop[2].split(": ")[-1].startswith("*")
    two = _planted(-0.0006)
    two["rows"] += [{**r, "H": 1200} for r in list(two["rows"])]
    words, head, rows = T.fixed_sigma_rows(two)
    assert head[0] == "width" and {r[0] for r in rows} == {"2×400", "2×1200"}
    assert words.startswith("**The paper's protocol: its tests.**")
    assert T.fixed_sigma_rows(_planted(-0.0006, n=1))[0] == ""  # one seed: no interval
    assert T.fixed_sigma_label() == ("BBB whose σ shifted uniformly from its start and did not "
                                     "learn: not a learned posterior")
    assert "fixed-σ" not in words + T.fixed_sigma_label(0.0067)


def test_choices_direction_follows_the_controls_and_the_predictor_records():
    def run(pred, ens, mean):
        return {"metrics": {"predictor": pred, "test_error_ensemble": ens,
                            "test_error_mean_weights": mean}}
    warm = _with_random_start(_planted(-0.0005, n=5, continued=0.0), 0.004)
    recs = [run("mean_weights", 0.019, 0.018), run("ensemble", 0.020, 0.018)]
    groups = [("one", [400], lambda m, H: recs if m == "bbb_mixture" else [])]
    text = T.choices_direction(warm, groups)
    assert text.startswith("**Which way the choices made after seeing test errors lean** "
                           "(on test). ")
    assert ("\n\n| choice | BBB runs | against (first: what it replaced) | effect on test "
            "error | leans |") in text
    assert ("| warm start | the Adam recipe's scale mixture | a random start | warm − random "
            "start: means below 0 at every width; resolved at every width (section 2) | "
            "BBB's way |") in text
    # reader r19: one baseline per row: what it replaced (always the average), then always μ
    assert ("| predictor rule, BBB's own runs | 2; the average picked in 1 | always the average "
            "| lowered 1 | BBB's way |\n| predictor rule, BBB's own runs |  | always μ | raised 1 "
            "by 0.20 pp | against BBB |") in text
    assert ("(on test). Against what each replaced ([the predictor rule's disclosure]"
            "(../docs/choices.md#notebook-01-table-1)), the warm start and the "
            "predictor rule on BBB's own runs favour BBB. So 'BBB is not better' does not come "
            "from these choices.\n\n") in text
    assert "entry 4" not in text
    # the random-start control counts too, and whose error the pick raised follows its records
    ctl = [run("ensemble", 0.0167, 0.0149), run("mean_weights", 0.019, 0.018),
           run("ensemble", 0.0167, 0.0177)]
    both = [("one", [400], lambda m, H: recs if m == "bbb_mixture" else
             ctl if m == "bbb_random_start" else [])]
    text = T.choices_direction(warm, both)
    # both arms of the control are BBB: its rows say what the rule does to the warm start's lead
    assert ("| predictor rule, random-start control | 3; the average picked in 2 | always the "
            "average | lowered 1 | shrinks the warm start's advantage |\n| predictor rule, "
            "random-start control |  | always μ | raised 1, lowered 1; the control's mean +0.03 "
            "pp at 2×400 | widens the warm start's advantage |") in text
    assert ("; the rule on the control shrinks the warm start's advantage. So 'BBB is not "
            "better'") in text
    assert "against BBB (the warm start" not in text
    head, rows, words = T.predictor_summary(both)
    assert [r[0] for r in rows] == ["BBB, scale mixture prior", "random-start mixture (control)"]
    assert "2 of 5 BBB runs (the random-start control included)" in words
    cold = _with_random_start(_planted(-0.0005, n=5, continued=0.0), -0.004)
    good = [run("mean_weights", 0.019, 0.018), run("ensemble", 0.017, 0.018)]
    text = T.choices_direction(cold, [("one", [400], lambda m, H: good if m == "bbb_mixture"
                                       else [])])
    assert "| warm − random start: means above 0 at every width; resolved at every width " \
        "(section 2) | against BBB |" in text
    assert ("| always the average | lowered 1 | BBB's way |\n| predictor rule, BBB's own runs |  "
            "| always μ | lowered 1 by 0.10 pp | BBB's way |") in text
    assert "does not come from" not in text
    # against always μ, two raised runs of BBB's own withhold the closing line
    two = [run("mean_weights", 0.019, 0.018), run("ensemble", 0.020, 0.018),
           run("ensemble", 0.021, 0.018)]
    text = T.choices_direction(warm, [("one", [400], lambda m, H: two if m == "bbb_mixture"
                                       else [])])
    assert ("| always the average | lowered 1 | BBB's way |\n| predictor rule, BBB's own runs |  "
            "| always μ | raised 2 by 0.20 and 0.30 pp | against BBB |") in text
    assert "does not come from" not in text
    assert T.choices_direction(_summary([]), []) == ""


def test_posterior_contrast_and_fixed_sigma_read_the_configs():
    from helpers import posterior_diagnostics as PD

    def run(s0, s1, cfg):
        layer = lambda s, d: {"sigma_q": [s, s, s], "rho_drift_q": d,  # noqa: E731
                              "narrow_share": None}
        return {"trace": [{"epoch": 0, "layers": {"0": layer(s0, [0, 0])}, "nll": None,
                           "kl": 1.0},
                          {"epoch": 1, "layers": {"0": layer(s1, [0.05, 0.05] if s1 < 0.01
                                                              else [0.5, 3.0])},
                           "nll": 0.1, "kl": 1.0}], "epochs": 1, "val_error": [0.02],
                "config": cfg}
    sgd = dict(method="bbb_mixture", rho_init=-5.0, samples=1, lr_decay=1.0, pi=0.75,
               neg_log_sigma1=2.0, neg_log_sigma2=8.0, prior_sigma=1.0, reduction="sum")
    adam = {**sgd, "rho_init": -6.0, "samples": 2, "lr_decay": 0.955, "reduction": "mean"}
    rec = {"settings": {"epochs": 1, "seed": 0}, "runs": {
        PD.PAPER_RUN: run(0.0067, 0.0071, sgd),
        "plan v1, Adam, scale mixture (random start)": run(0.0025, 0.09, adam)}}
    text = PD.contrast_words(rec)
    assert text.startswith("Besides the optimiser, the Adam run differs from the plain-SGD runs "
                           "(in brackets): ρ₀ = −6 (−5); 2 weight samples per step (1); learning "
                           "rate ×0.955 per epoch (constant); cost averaged over the minibatch "
                           "(summed)")
    assert "prior" not in text and "not a controlled comparison" in text
    assert PD.fixed_sigma(rec) == pytest.approx(0.0067)
    rec["runs"]["plan v1, Adam, scale mixture (random start)"]["config"] = sgd
    assert PD.contrast_words(rec) == ""
    moved = {**rec, "runs": {PD.PAPER_RUN: run(0.0067, 0.09, sgd)}}
    assert PD.fixed_sigma(moved) is None and PD.contrast_words(None) == ""
