"""No chosen hyperparameter at the edge of its grid without a written reason (issue 34, item 2).

Every committed search is read with the reader its notebook uses (``helpers.sweep.
chosen_settings`` for the sweeps, which ``helpers.classification.chosen_config`` turns into a
RunConfig; ``helpers.paper_protocol.chosen``; ``helpers.bandit.chosen_recipe``; the IVON tuning's
``metrics.chosen``, which ``helpers.alternatives.build`` trains with). For every numeric dimension
searched over three values or more, a choice equal to the smallest or the largest value fails
unless ``helpers.profiles.EDGE_REASONS`` says why that grid is not widened, or the dimension is in
``PENDING`` below: grids known to be too small, whose searches are still to be rerun. A pending
entry is no justification; it is listed so that it stays visible, and it fails once the rerun has
moved the choice inside a grid of three values or more (then the entry goes).

``python tests/test_grid_edges.py`` prints every edge choice and how it is treated.
"""
import json
import math
import os
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from helpers import alternatives_plan as A
from helpers import bandit as B
from helpers import paper_protocol as PP
from helpers import sweep as S
from helpers import table1_plan as T1
from helpers.profiles import EDGE_REASONS
from helpers.utils import results_dir

ROOT = Path(__file__).resolve().parent.parent

PENDING_NOTE = "grid to be widened (issue 34): rerun pending"
# (search id, dimension): the honest answer is that the grid is too small. Not a justification.
PENDING = {
    # notebook 06: MAP's weight decay chosen at the largest of {0, 1e-5, 1e-4}
    ("06_alternatives/sweep/map_mnist", "weight_decay"),
    # notebook 06: IVON's learning rate, the smaller of two values {0.2, 0.5}: with two values
    # every choice is at an edge, so the rule below cannot even ask
    ("06_alternatives/ivon_tuning", "lr"),
    # notebook 05: MC dropout on Fashion-MNIST chose the smallest rate of {0.1, 0.25, 0.5}
    ("05_uncertainty/sweep/mc_dropout_fashionmnist", "dropout"),
    # notebook 01, Table 1 plan v1 (pre-registered grids: widening one is a plan v2): SGD's
    # Adam rate at the largest of six, the Gaussian prior's sigma at the largest of three (both
    # widths so far), dropout's rate at the smallest of three (2x800 and 2x1200)
    ("01_mnist_classification/plan_v1/search/h400:sgd", "lr"),
    ("01_mnist_classification/plan_v1/search/h800:sgd", "lr"),
    ("01_mnist_classification/plan_v1/search/h800:bbb_gaussian", "prior_sigma"),
    ("01_mnist_classification/plan_v1/search/h800:dropout", "dropout"),
    ("01_mnist_classification/plan_v1/search/h400:bbb_gaussian", "prior_sigma"),
    ("01_mnist_classification/plan_v1/search/h1200:bbb_gaussian", "prior_sigma"),
    ("01_mnist_classification/plan_v1/search/h1200:dropout", "dropout"),
}
MIN_VALUES = 3  # a dimension with fewer values cannot show an interior optimum


@dataclass
class Search:
    """One committed search: what it searched and what it chose."""
    id: str
    grid: dict    # dimension -> the values searched
    chosen: dict  # dimension -> the chosen value
    files: list = field(default_factory=list)  # the results files it was read from
    declared: str = ""  # an edge rule its plan declared before its runs (a reason for all dims)


@dataclass(frozen=True)
class Edge:
    search: str
    dim: str
    chosen: float
    grid: tuple
    end: str  # 'smallest' or 'largest'
    declared: str = ""


# ---- reading the committed searches, with the notebooks' own readers ----

def sweep_searches(root):
    """The searches of helpers.sweep (notebooks 01, 05, 06): results/<notebook>/sweep/*.json."""
    for path in sorted(root.glob("*/sweep/*.json")):
        notebook, name = path.parent.parent.name, path.stem
        rec = S.load_sweep(name, notebook)
        if rec["metrics"]["chosen"] is None:
            continue  # no finished trial: nothing chosen yet
        chosen = S.chosen_settings(name, notebook)  # what chosen_config makes a RunConfig of
        yield Search(f"{notebook}/sweep/{name}", dict(rec["config"]["space"]["grid"]), chosen,
                     [path])


def ivon_search(root):
    """Notebook 06's IVON grid (a list of settings; helpers.alternatives.tune_ivon)."""
    path = root / "06_alternatives" / "ivon_tuning.json"
    if not path.exists():
        return
    rec = json.loads(path.read_text())
    grid = {}
    for hp in rec["config"]["grid"]:
        for key, value in hp.items():
            values = grid.setdefault(key, [])
            if value not in values:
                values.append(value)
    yield Search("06_alternatives/ivon_tuning", grid, dict(rec["metrics"]["chosen"]["hp"]), [path])


def bandit_searches(root):
    """Notebook 03's tuning: one choice per buffer (helpers.bandit.chosen_recipe)."""
    path = root / "03_contextual_bandit" / "tuning.json"
    if not path.exists():
        return
    rec = json.loads(path.read_text())
    if not rec["metrics"]["complete"]:
        return  # a partial tuning marks no choice (notebook 03)
    grid = {"prior": rec["config"]["grid"]["priors"], "recipe": rec["config"]["grid"]["recipes"]}
    for buffer in B.BUFFER_LABELS:
        prior, recipe = B.chosen_recipe(buffer, rec)
        yield Search(f"03_contextual_bandit/tuning:{buffer}", grid,
                     {"prior": prior, "recipe": recipe}, [path])


def paper_protocol_searches():
    """Table 1 under the paper's protocol: each method's screen and continuation
    (helpers.paper_protocol.chosen); the grid is the design it screened."""
    s = PP.settings("default")
    for method in PP.PAPER_SPACES:
        rec = PP.chosen(s, method)
        if rec is None:
            continue  # the search still runs
        grid = {}
        for point in PP.design(method, s["trials"]):
            for key, value in point.items():
                values = grid.setdefault(key, [])
                if value not in values:
                    values.append(value)
        files = [PP.search_path(c) for c in PP.screen_configs(method, s["search_width"], s)]
        yield Search(f"01_mnist_classification/paper_protocol:{method}", grid,
                     {k: rec["config"][k] for k in grid}, files)


def alternatives_plan_searches():
    """Notebook 06's planned searches (helpers.alternatives_plan.chosen: one record per trial
    under results/06_alternatives/v<version>/search/<method>/); the epoch is a dimension too."""
    for method, space in A.SEARCHES.items():
        rec = A.chosen(method)
        if rec is None:
            continue  # the search still runs
        grid = {**space["grid"], "epochs": list(range(A.EPOCH_STEP, A.MAX_EPOCHS + 1,
                                                      A.EPOCH_STEP))}
        files = [A.trial_path(method, c) for c in A.configs(method)]
        plan = json.loads((ROOT / A.PLAN).read_text())
        yield Search(f"{A.NB}/v{A.VERSION}/search:{method}", grid,
                     {k: rec["config"][k] for k in grid}, files, declared=plan["edges"])


def table1_plan_searches():
    """Table 1 under analysis plan v1: the searches of every width whose analysis is committed
    (summary.json says the width is done: its edges are then reported in notebook 01 and the
    README), with the grid the plan declared (helpers.table1_plan.search_edges reads the same)
    and the epochs as a dimension (the chosen trial's own epochs, in steps). A width still
    running is checked once its summary is committed, so that a search record landing mid-way
    never breaks the suite before its edges can be reported."""
    s = T1.settings(T1.load_plan(), "default")
    summary = T1.root() / "summary.json"
    analysis = json.loads(summary.read_text())["analysis"] if summary.exists() else {}
    for H in s["widths"]:
        if (analysis.get(str(H)) or {}).get("status") != "done":
            continue
        for method in s["methods"]:
            choice = T1.chosen(s, H, method)
            if choice is None:
                continue  # the search still runs
            cfg = choice["config"]
            step = s["budget"][H]["epoch_step"]
            last = s["budget"][H]["max_epochs"] - (cfg["init_epochs"] if cfg.get("init_from")
                                                   else 0)
            grid = {**s["spaces"][method], "epochs": list(range(step, last + 1, step))}
            chosen = {**{k: cfg.get(k) for k in grid}, "epochs": choice["epochs"]}
            yield Search(f"01_mnist_classification/plan_v1/search/h{H}:{method}", grid, chosen,
                         [T1.search_path(H, method)])


def committed_searches(root=None):
    """Every committed search under ``root`` (default: results_dir())."""
    root = Path(root or results_dir())
    return [*sweep_searches(root), *ivon_search(root), *bandit_searches(root),
            *paper_protocol_searches(), *alternatives_plan_searches(), *table1_plan_searches()]


# ---- the rule ----

def _numeric(value):
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def edge_choices(searches, min_values=MIN_VALUES):
    """Return the Edges: a numeric dimension searched over ``min_values`` values or more whose
    chosen value is its smallest or its largest."""
    out = []
    for s in searches:
        for dim, values in s.grid.items():
            grid = tuple(sorted({float(v) for v in values if _numeric(v)}))
            value = s.chosen.get(dim)
            if len(grid) < min_values or not _numeric(value):
                continue
            for end, label in ((grid[0], "smallest"), (grid[-1], "largest")):
                if math.isclose(value, end, rel_tol=1e-9, abs_tol=1e-15):
                    out.append(Edge(s.id, dim, value, grid, label, s.declared))
    return out


def unexplained(edges, reasons=None, pending=None):
    """Return the edges with neither a written reason nor a pending entry."""
    reasons = EDGE_REASONS if reasons is None else reasons
    pending = PENDING if pending is None else pending
    return [e for e in edges if not e.declared
            and not reasons.get(e.search, {}).get(e.dim) and (e.search, e.dim) not in pending]


def treatment(edge, reasons=None, pending=None):
    reasons = EDGE_REASONS if reasons is None else reasons
    pending = PENDING if pending is None else pending
    if edge.declared:
        return "declared in its plan before its runs: " + edge.declared
    if reasons.get(edge.search, {}).get(edge.dim):
        return "reason: " + reasons[edge.search][edge.dim]
    if (edge.search, edge.dim) in pending:
        return "PENDING: " + PENDING_NOTE
    return "NO REASON"


def report(searches):
    """Return the edge choices as lines of text (search, dimension, chosen value, grid, how)."""
    lines = []
    for e in edge_choices(searches):
        lines.append(f"{e.search}  {e.dim} = {e.chosen:g} ({e.end} of "
                     f"{{{', '.join(f'{v:g}' for v in e.grid)}}}): {treatment(e)}")
    for search, dim in sorted(PENDING):
        hit = [s for s in searches if s.id == search]
        if hit and dim in hit[0].grid and not any(
                (e.search, e.dim) == (search, dim) for e in edge_choices(searches)):
            values = ", ".join(f"{v:g}" if _numeric(v) else str(v) for v in hit[0].grid[dim])
            lines.append(f"{search}  {dim} = {hit[0].chosen.get(dim)} (grid of "
                         f"{len(hit[0].grid[dim])}: {{{values}}}): PENDING: {PENDING_NOTE}")
    return lines


@pytest.fixture
def committed(monkeypatch):
    monkeypatch.setenv("BBB_RESULTS_DIR", str(ROOT / "results"))
    return committed_searches()


# ---- the committed searches ----

def test_no_committed_choice_sits_at_a_grid_edge_without_a_reason(committed):
    print("\n" + "\n".join(report(committed)))
    bad = unexplained(edge_choices(committed))
    assert not bad, "choices at the edge of their grid with no reason in helpers.profiles." \
        "EDGE_REASONS and no PENDING entry:\n" + "\n".join(
            f"{e.search} {e.dim} = {e.chosen:g}, {e.end} of {e.grid}" for e in bad)


def test_pending_entries_are_still_due_and_never_count_as_reasons(committed):
    edges = {(e.search, e.dim) for e in edge_choices(committed)}
    by_id = {s.id: s for s in committed}
    for search, dim in PENDING:
        assert not EDGE_REASONS.get(search, {}).get(dim), \
            f"{search} {dim}: pending and justified at once"
        assert search in by_id and dim in by_id[search].grid, f"{search} {dim}: no such search"
        n = len({v for v in by_id[search].grid[dim] if _numeric(v)})
        assert (search, dim) in edges or n < MIN_VALUES, \
            f"{search} {dim}: chosen inside a grid of {n} values now: remove it from PENDING"


def test_every_reason_names_a_searched_dimension_and_says_why(committed):
    by_id = {s.id: s for s in committed}
    for search, dims in EDGE_REASONS.items():
        assert search in by_id, f"EDGE_REASONS names {search!r}, which no committed search is"
        for dim, reason in dims.items():
            values = {float(v) for v in by_id[search].grid.get(dim, []) if _numeric(v)}
            assert len(values) >= MIN_VALUES, f"{search} {dim}: not a dimension the rule checks"
            assert isinstance(reason, str) and len(reason) > 40, (search, dim)
            assert "pending" not in reason.lower() and "too small" not in reason.lower(), \
                f"{search} {dim}: a grid that is too small belongs in PENDING, not in a reason"


def test_every_committed_search_is_read(committed):
    read = {Path(p).resolve() for s in committed for p in s.files}
    root = ROOT / "results"
    expected = {p.resolve() for p in (*root.glob("*/sweep/*.json"), *root.glob("*/*tuning*.json"))}
    assert expected and expected <= read, sorted(map(str, expected - read))
    searched = {json.loads(p.read_text())["config"]["method"]
                for p in (root / PP.NB / PP.FOLDER / "search").glob("*.json")}
    ids = {s.id for s in committed}
    assert {f"{PP.NB}/paper_protocol:{m}" for m in searched} <= ids
    assert len(read & {p.resolve() for p in (root / PP.NB / PP.FOLDER / "search").glob("*.json")
                       }) >= 9 * len(searched)


# ---- the checker itself can fail ----

def test_the_checker_reports_a_planted_edge():
    planted = [Search("99_planted/sweep/x", {"lr": [1e-4, 1e-3, 1e-2], "start": [{"a": 1}]},
                      {"lr": 1e-2}),
               Search("99_planted/sweep/inside", {"lr": [1e-4, 1e-3, 1e-2]}, {"lr": 1e-3}),
               Search("99_planted/sweep/two", {"lr": [1e-4, 1e-3]}, {"lr": 1e-3}),
               Search("99_planted/sweep/low", {"rate": [0.0, 0.1, 0.5], "kind": ["a", "b", "c"]},
                      {"rate": 0.0, "kind": "a"})]
    edges = edge_choices(planted)
    assert [(e.search, e.dim, e.end) for e in edges] == [("99_planted/sweep/x", "lr", "largest"),
                                                         ("99_planted/sweep/low", "rate",
                                                          "smallest")]
    assert unexplained(edges, reasons={}, pending=set()) == edges
    assert unexplained(edges, reasons={"99_planted/sweep/x": {"lr": "a fixed grid, because"}},
                       pending={("99_planted/sweep/low", "rate")}) == []
    assert unexplained(edges, reasons={"99_planted/sweep/x": {"lr": ""}},
                       pending=set()) == edges  # an empty reason is no reason


def test_a_planted_results_file_at_an_edge_fails(tmp_path, monkeypatch):
    """A search written to a results folder as helpers.sweep writes it, read back by the same
    readers: its choice at the top of the grid is reported and is not explained."""
    monkeypatch.setenv("BBB_RESULTS_DIR", str(tmp_path))
    trials = [{"name": f"t{wd:g}", "config": {"method": "sgd", "weight_decay": wd, "seed": 100,
                                              "epochs": 5},
               "val": v, "val_error": v, "best_epoch": 5, "stopped_early": False}
              for wd, v in ((0.0, 0.3), (1e-5, 0.2), (1e-4, 0.1))]
    rec = {"config": {"space": {"base": {"method": "sgd"},
                                "grid": {"weight_decay": [0.0, 1e-5, 1e-4]}}},
           "metrics": {"trials": trials, "chosen": S.choose(trials)}}
    path = tmp_path / "99_planted" / "sweep" / "map_x.json"
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps(rec))
    searches = committed_searches()
    assert [s.id for s in searches] == ["99_planted/sweep/map_x"]
    bad = unexplained(edge_choices(searches))
    assert [(e.search, e.dim, e.chosen, e.end) for e in bad] == [
        ("99_planted/sweep/map_x", "weight_decay", 1e-4, "largest")]


def test_a_planted_plan_search_at_an_edge_fails(tmp_path, monkeypatch):
    """Notebook 06's planned search, one record per trial as helpers.alternatives_plan writes
    them: read back only once every trial has its record, and its edge choice is reported."""
    monkeypatch.setenv("BBB_RESULTS_DIR", str(tmp_path))
    configs = A.configs("map")
    top = max(c["lr"] for c in configs)
    for i, c in enumerate(configs):
        assert [s.id for s in alternatives_plan_searches()] == []  # incomplete: no choice
        val = 0.1 if (c["lr"] == top and i % 4 == 1) else 0.2
        row = {"name": f"t{i:02d}", "config": c, "metric": "val_nll", "error": None,
               "val_curve": [[e, val] for e in range(1, A.MAX_EPOCHS + 1)]}
        path = A.trial_path("map", c)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps({"row": row}))
    searches = list(alternatives_plan_searches())
    assert [s.id for s in searches] == [f"{A.NB}/v{A.VERSION}/search:map"]
    edges = {(e.dim, e.end) for e in edge_choices(searches)}
    assert ("lr", "largest") in edges and ("epochs", "smallest") in edges
    # the plan declared its edge rule before its runs (final: reported, not widened): that is
    # the written reason; without it the same edges fail
    assert unexplained(edge_choices(searches)) == []
    assert "final" in searches[0].declared
    undeclared = [Search(s.id, s.grid, s.chosen, s.files) for s in searches]
    bad = {(e.dim, e.end) for e in unexplained(edge_choices(undeclared))}
    assert ("lr", "largest") in bad and ("epochs", "smallest") in bad


if __name__ == "__main__":
    os.environ.setdefault("BBB_RESULTS_DIR", str(ROOT / "results"))
    print("\n".join(report(committed_searches())))


def test_notebook_01_names_every_edge_of_the_paper_protocol_searches(monkeypatch):
    """Section 7's sentence on where the choices lie (helpers.paper_protocol.edge_words) names
    every edge this test's own reader finds in the committed searches, and no other."""
    monkeypatch.setenv("BBB_RESULTS_DIR", str(ROOT / "results"))
    words = PP.edge_words(PP.settings("default"))
    edges = edge_choices(list(paper_protocol_searches()))
    assert edges and "search running" not in words  # the committed searches are complete
    for e in edges:
        method = e.search.split(":")[1]
        part = words.split(PP.SHORT[method] + ":")[1].split(";")[0]
        assert f"{PP.EDGE_NAMES.get(e.dim, e.dim)} {e.chosen:g} ({e.end} of {len(e.grid)})" \
            in part
    assert words.count(" of ") == len(edges)
