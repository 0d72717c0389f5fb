"""Notebook 04's sentence on Figure 4, read from a planted analysis (helpers.pruning)."""
from helpers import pruning


def test_figure4_words_count_above_zero_db_and_place_the_cuts():
    lo, hi, n = pruning.DB_EDGES
    hist = [0] * n
    width = (hi - lo) / n
    hist[int((-10 - lo) / width)] = 90   # below 0 dB
    hist[int((5 - lo) / width)] = 10     # above 0 dB
    entry = {"n_weights": 100, "snr_hist": hist, "snr_outside": 0,
             "cuts_db": {"50": -10.0, "95": -2.0}}
    words = pruning.figure4_words(entry)
    assert "10.00% have an SNR above 0 dB" in words
    assert "remove 50 %, 95 % of the weights lie at -10.0, -2.0 dB, every one of them below" in words
    entry["cuts_db"]["98"] = 5.0
    assert "every one" not in pruning.figure4_words(entry)
