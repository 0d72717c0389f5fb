"""Measured numbers in a notebook's prose are rendered from results files, not typed (issue 32,
item 6).

Every number a committed notebook's Markdown cells state (outside maths, code and links) with a
decimal point, a thousands separator, or a unit (%, pp, ×) must be one of:

- ``ALLOWED``: not a measurement: the paper's values and section numbers, settings (data sizes,
  steps, buffer sizes, priors, pruning fractions, widths like 2×400), interval levels, and
  thresholds the text reads a figure at; or
- ``PENDING``: a measured number typed into version-1 prose that a declared rerun will replace
  (notebooks 03, 05 and 06: plans v2/v3) or that is still to be rendered. A pending entry is a
  debt, listed so that it stays visible; it must still occur (remove it once the prose is
  rendered), and no new measured number may be typed.

Numbers that code cells print (``helpers.report.show_markdown`` and tables) are outputs, not
prose, and are not checked here. ``python tests/test_prose_numbers.py`` prints each token and
how it is treated.
"""
import json
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))
TOKEN = re.compile(r"(?<![\w.\-/])(\d{1,3}(?:,\d{3})+|\d+\.\d+|\d+)(\s?%|\s?pp|×)?")

_SECTIONS = "the paper's section numbers"
_SETTING = "a setting of the experiment (declared in helpers/profiles.py or the plan)"
_PAPER = "the paper's value"
_LEVEL = "an interval level or a margin declared in a plan"
_READ = "a threshold or axis value the text reads a figure at, not a result"
ALLOWED = {
    "00_theory": {"3.1": _SECTIONS, "3.2": _SECTIONS, "3.3": _SECTIONS, "3.4": _SECTIONS,
                  "50,000": _SETTING, "1 %": "an exercise's threshold"},
    "01_mnist_classification": {"5.1": _SECTIONS, "3.2": _SECTIONS, "50,000": _SETTING,
                                "10,000": _SETTING, "2×": "a width, 2×400 ... 2×1200",
                                "95%": _LEVEL, "0.1 pp": _LEVEL, "0.3": _READ},
    "02_regression_uncertainty": {"5.2": _SECTIONS, "0.02": _SETTING, "0.1": _SETTING, "95 %": _LEVEL,
                                  "50 %": _LEVEL, "90 %": _LEVEL, "0.50": _LEVEL,
                                  "0.90": _LEVEL},
    "03_contextual_bandit": {"5.3": _SECTIONS, "20,000": _SETTING,
                             "50,000": _SETTING, "10,000": _SETTING, "4,096": _SETTING,
                             "1,000": _SETTING, "1 %": "the 1 % greedy agent's epsilon",
                             "5 %": "the 5 % greedy agent's epsilon",
                             "0.1 %": "the exploration figure's axis break"},
    "04_pruning": {"5.1": _SECTIONS, "2×": "a width, 2×400 or 2×1200", "0.05": _PAPER,
                   "95 %": _SETTING, "98 %": _SETTING, "75 %": _SETTING, "97 %": _SETTING,
                   "0 %": _SETTING},
    "05_uncertainty": {"0.5": _READ, "10,000": _SETTING, "1,000": _SETTING,
                       "0.955": _SETTING},
    "06_alternatives": {"0.5": _SETTING, "10,000": _SETTING,
                        "0.98": "a published value (Kristiadi et al. 2021)",
                        "0.99": "a published value (Kristiadi et al. 2021)",
                        "2,000": "plan v3's subset size (a setting)",
                        "95%": "the interval's level (a setting)",
                        "0.05": "the plan's alpha (a setting)",
                        "20,000": "the two test sets' size (data, not a measurement)"},
}
_V1 = "version-1 prose, replaced when the declared rerun lands"
PENDING = {
}


def prose_tokens(text):
    """Return the number tokens of Markdown ``text`` that this test checks."""
    text = re.sub(r"\$\$.*?\$\$", " ", text, flags=re.S)
    text = re.sub(r"\$[^$]*\$", " ", text)
    text = re.sub(r"\[[^\]]*\]\([^)]*\)", " ", text)
    text = re.sub(r"`[^`]*`", " ", text)
    out = []
    for m in TOKEN.finditer(text):
        number, unit = m.group(1), m.group(2) or ""
        if "." not in number and "," not in number and not unit:
            continue  # a plain integer: a count, an epoch, a seed
        out.append(number + unit)
    return out


def notebook_tokens(path):
    cells = json.loads(path.read_text())["cells"]
    return [(i, tok) for i, c in enumerate(cells) if c["cell_type"] == "markdown"
            for tok in prose_tokens("".join(c["source"]))]


def untreated(name, tokens, allowed=None, pending=None):
    allowed = ALLOWED.get(name, {}) if allowed is None else allowed
    pending = PENDING.get(name, {}) if pending is None else pending
    return [(i, t) for i, t in tokens if t not in allowed and t not in pending]


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_no_measured_number_is_typed_into_prose(path):
    bad = untreated(path.stem, notebook_tokens(path))
    assert not bad, (f"{path.name}: numbers typed into Markdown (cell, token): {bad}. Render a "
                     "measured number from its results file (helpers.report.show_markdown), or, "
                     "for a setting or the paper's value, add it to ALLOWED with its reason")


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_pending_entries_still_occur(path):
    present = {t for _, t in notebook_tokens(path)}
    gone = sorted(set(PENDING.get(path.stem, {})) - present)
    assert not gone, f"{path.name}: rendered now, remove from PENDING: {gone}"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_allowed_entries_still_occur(path):
    """An allowance that no longer occurs is removed: a stale entry would let a measured number
    with the same digits back in unnoticed (03's "3.3", filed as a section number, let a typed
    runtime of 3.3 CPU-hours through)."""
    present = {t for _, t in notebook_tokens(path)}
    gone = sorted(set(ALLOWED.get(path.stem, {})) - present)
    assert not gone, f"{path.name}: no longer in the prose, remove from ALLOWED: {gone}"


def test_the_check_finds_a_typed_measurement():
    text = ("BBB reaches 1.43 % test error ($\\sigma = 0.05$, `lr=0.001`), ahead of SGD by "
            "0.09 pp over 12,345 steps; see [1.2](https://x/1.2). Seeds 0-9, 600 epochs.")
    assert prose_tokens(text) == ["1.43 %", "0.09 pp", "12,345"]
    assert untreated("x", [(0, t) for t in prose_tokens(text)], allowed={"12,345": "a setting"},
                     pending={}) == [(0, "1.43 %"), (0, "0.09 pp")]


if __name__ == "__main__":
    for path in NOTEBOOKS:
        for i, tok in notebook_tokens(path):
            how = ("allowed: " + ALLOWED.get(path.stem, {})[tok] if tok in ALLOWED.get(path.stem, {})
                   else "PENDING: " + PENDING[path.stem][tok] if tok in PENDING.get(path.stem, {})
                   else "NOT TREATED")
            print(f"{path.stem} cell {i}: {tok}  {how}")
