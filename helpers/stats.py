"""Two-sided tests and verdict words over small samples: plain functions on lists of floats.

This module knows no experiment. It gives a mean with its t-interval, the paired t-test, the
exact sign test, the exact Wilcoxon signed-rank test, Holm's correction over a family (with the
Bonferroni interval, simultaneous over a family of m, beside it), and the
three verdict words the project uses:

- ``vs_published``: "matches <name>" when the published value lies inside the interval of the
  mean, else "better than <name> by x" / "worse than <name> by x";
- ``ordering`` / ``ordering_family``: a claim "a < b" over paired values "holds", is
  "reversed", or is "not resolved at n <units>" (Holm-adjusted two-sided p over the family);
- ``comparable``: "comparable" when the paired difference's interval lies inside +-margin,
  else "not shown comparable at n <units>".

Small samples get clear answers rather than numbers that look like evidence: with fewer than
two values, or with no spread at all, there is no interval and no t-test (None, with a
``note``), and the verdicts say "not resolved" / "not shown comparable". NaN, infinite or
non-numeric values, and paired lists of unequal length, are a ValueError.

The t distribution is computed here (the regularised incomplete beta function by its continued
fraction) rather than imported: the module needs nothing beyond the standard library, and the
tests compare it with scipy.stats, an independent implementation, so those comparisons can fail.
"""
import math
from fractions import Fraction

__all__ = ["t_cdf", "t_sf", "t_ppf", "mean_ci", "paired_t", "sign_test", "wilcoxon_exact",
           "holm", "bonferroni_interval", "vs_published", "ordering", "ordering_family",
           "comparable", "at_n"]


# ---- the t distribution ------------------------------------------------------------------

def _betacf(a, b, x):
    """Continued fraction of the incomplete beta function (modified Lentz)."""
    tiny, eps = 1e-300, 1e-16
    qab, qap, qam = a + b, a + 1.0, a - 1.0
    c, d = 1.0, 1.0 - qab * x / qap
    d = 1.0 / (d if abs(d) > tiny else tiny)
    h = d
    for m in range(1, 10_000):
        m2 = 2 * m
        aa = m * (b - m) * x / ((qam + m2) * (a + m2))
        d = 1.0 + aa * d
        d = 1.0 / (d if abs(d) > tiny else tiny)
        c = 1.0 + aa / c
        c = c if abs(c) > tiny else tiny
        h *= d * c
        aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2))
        d = 1.0 + aa * d
        d = 1.0 / (d if abs(d) > tiny else tiny)
        c = 1.0 + aa / c
        c = c if abs(c) > tiny else tiny
        delta = d * c
        h *= delta
        if abs(delta - 1.0) < eps:
            return h
    raise ArithmeticError(f"incomplete beta did not converge (a={a}, b={b}, x={x})")


def _betainc(a, b, x):
    """Regularised incomplete beta function I_x(a, b) for a, b > 0 and 0 <= x <= 1."""
    if x <= 0.0:
        return 0.0
    if x >= 1.0:
        return 1.0
    log_front = (math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b)
                 + a * math.log(x) + b * math.log1p(-x))
    if x < (a + 1.0) / (a + b + 2.0):
        return math.exp(log_front) * _betacf(a, b, x) / a
    return 1.0 - math.exp(log_front) * _betacf(b, a, 1.0 - x) / b


def _check_df(df):
    if not (isinstance(df, (int, float)) and math.isfinite(df) and df > 0):
        raise ValueError(f"degrees of freedom must be a positive finite number, got {df!r}")


def t_sf(t, df):
    """P(T > t) for Student's t with ``df`` degrees of freedom."""
    _check_df(df)
    if math.isnan(t):
        raise ValueError("t is NaN")
    if math.isinf(t):
        return 0.0 if t > 0 else 1.0
    tail = 0.5 * _betainc(df / 2.0, 0.5, df / (df + t * t))  # P(T > |t|)
    return tail if t >= 0 else 1.0 - tail


def t_cdf(t, df):
    """P(T <= t) for Student's t with ``df`` degrees of freedom."""
    return t_sf(-t, df)


def t_ppf(q, df):
    """The ``q`` quantile of Student's t with ``df`` degrees of freedom (0 < q < 1)."""
    _check_df(df)
    if not 0.0 < q < 1.0:
        raise ValueError(f"q must be in (0, 1), got {q!r}")
    if q == 0.5:
        return 0.0
    if q < 0.5:
        return -t_ppf(1.0 - q, df)
    want = 1.0 - q  # upper tail
    lo, hi = 0.0, 1.0
    while t_sf(hi, df) > want:
        lo, hi = hi, 2.0 * hi
        if hi > 1e300:
            return math.inf
    for _ in range(200):  # bisection to the last bit
        mid = 0.5 * (lo + hi)
        if mid in (lo, hi):
            break
        if t_sf(mid, df) > want:
            lo = mid
        else:
            hi = mid
    return 0.5 * (lo + hi)


# ---- input checks ------------------------------------------------------------------------

def _values(values, what="values"):
    """Return ``values`` as a list of finite floats (ValueError otherwise)."""
    if isinstance(values, (str, bytes)) or not hasattr(values, "__iter__"):
        raise ValueError(f"{what} must be a list of numbers, got {values!r}")
    out = []
    for i, v in enumerate(values):
        if isinstance(v, bool) or not isinstance(v, (int, float)) and not hasattr(v, "__float__"):
            raise ValueError(f"{what}[{i}] = {v!r} is not a number")
        f = float(v)
        if not math.isfinite(f):
            raise ValueError(f"{what}[{i}] = {f} is not finite: a missing or failed run must be "
                             "left out (or fixed) before a test, not averaged in")
        out.append(f)
    return out


def _pairs(a, b):
    a, b = _values(a, "a"), _values(b, "b")
    if len(a) != len(b):
        raise ValueError(f"paired values need equal lengths: {len(a)} values of a, {len(b)} of b "
                         "(pair them by seed first)")
    if not a:
        raise ValueError("no paired values")
    return a, b


def at_n(n, unit="seed"):
    """'at 1 seed', 'at 3 seeds'."""
    return f"at {n} {unit}{'' if n == 1 else 's'}"


def _level(alpha):
    if not 0.0 < alpha < 1.0:
        raise ValueError(f"alpha must be in (0, 1), got {alpha!r}")
    return 1.0 - alpha


# ---- summaries and tests -----------------------------------------------------------------

NO_SPREAD = 1e-12  # an sd below this fraction of the largest |value| is rounding, not spread


def mean_ci(values, level=0.95):
    """Mean of ``values`` with its two-sided t-interval at ``level``.

    Returns {n, mean, sd, se, df, level, ci, note}: ``ci`` = [lo, hi], or None (and ``sd``/``se``
    None) with fewer than two values; ``ci`` None too when every value is the same up to
    rounding (``NO_SPREAD``: no spread, so no interval), with a ``note`` saying which.
    """
    x = _values(values)
    if not x:
        raise ValueError("no values")
    if not 0.0 < level < 1.0:
        raise ValueError(f"level must be in (0, 1), got {level!r}")
    n = len(x)
    mean = math.fsum(x) / n
    out = {"n": n, "mean": mean, "sd": None, "se": None, "df": n - 1, "level": level,
           "ci": None, "note": None}
    if n < 2:
        out["note"] = "one value: no spread, no interval"
        return out
    sd = math.sqrt(math.fsum((v - mean) ** 2 for v in x) / (n - 1))
    out["sd"], out["se"] = sd, sd / math.sqrt(n)
    if sd <= NO_SPREAD * max(abs(v) for v in x):  # equal up to rounding (e.g. 0.01 - 0.02)
        out["note"] = "every value the same: no spread, no interval"
        return out
    half = t_ppf(0.5 + level / 2.0, n - 1) * out["se"]
    out["ci"] = [mean - half, mean + half]
    return out


def paired_t(a, b, level=0.95):
    """Two-sided paired t-test of a - b (a[i] and b[i] measured on the same unit, e.g. seed).

    Returns {n, mean_diff, sd_diff, se, ci, t, df, p, level, note}; ``ci`` is the t-interval of
    the mean difference at ``level``. With fewer than two pairs, or differences that are all the
    same, the test is undefined: ``ci``, ``t`` and ``p`` are None and ``note`` says why.
    """
    a, b = _pairs(a, b)
    d = [x - y for x, y in zip(a, b)]
    m = mean_ci(d, level)
    out = {"n": m["n"], "mean_diff": m["mean"], "sd_diff": m["sd"], "se": m["se"],
           "ci": m["ci"], "t": None, "df": m["df"], "p": None, "level": level, "note": m["note"]}
    if m["ci"] is None:
        out["note"] = ("one pair: no test" if m["n"] < 2
                       else "every difference the same: no spread, no test")
        return out
    t = m["mean"] / m["se"]
    out["t"], out["p"] = t, min(1.0, 2.0 * t_sf(abs(t), m["df"]))
    return out


def sign_test(a, b):
    """Exact two-sided sign test of the pairs (a[i], b[i]); ties (a[i] == b[i]) are dropped.

    Returns {n, ties_dropped, n_used, a_higher, b_higher, p, note}: p = min(1, 2 P(X <= k)),
    X ~ Binomial(n_used, 1/2), k the smaller count (exact, from integer arithmetic); p is 1 when
    every pair ties.
    """
    a, b = _pairs(a, b)
    up = sum(x > y for x, y in zip(a, b))
    down = sum(x < y for x, y in zip(a, b))
    ties = len(a) - up - down
    n = up + down
    note = f"{ties} tie{'' if ties == 1 else 's'} dropped" if ties else None
    if n == 0:
        return {"n": len(a), "ties_dropped": ties, "n_used": 0, "a_higher": 0, "b_higher": 0,
                "p": 1.0, "note": "every pair ties: no test"}
    k = min(up, down)
    tail = Fraction(sum(math.comb(n, i) for i in range(k + 1)), 2 ** n)
    return {"n": len(a), "ties_dropped": ties, "n_used": n, "a_higher": up, "b_higher": down,
            "p": float(min(Fraction(1), 2 * tail)), "note": note}


def _midranks(values):
    """Ranks 1..n of ``values`` (ties share their mean rank), doubled so they are integers."""
    order = sorted(range(len(values)), key=lambda i: values[i])
    ranks2 = [0] * len(values)
    i = 0
    while i < len(order):
        j = i
        while j + 1 < len(order) and values[order[j + 1]] == values[order[i]]:
            j += 1
        for k in range(i, j + 1):
            ranks2[order[k]] = (i + 1) + (j + 1)  # twice the mean of ranks i+1..j+1
        i = j + 1
    return ranks2


def wilcoxon_exact(a, b):
    """Exact two-sided Wilcoxon signed-rank test of a - b (zero differences dropped).

    Tied absolute differences share their mean rank; the null distribution of W+ (the sum of the
    ranks of the positive differences) is enumerated exactly for those ranks, so the test is
    exact given the ties. Returns {n, zeros_dropped, n_used, w_plus, ties_in_ranks, p, note};
    p = min(1, 2 min(P(W+ <= w), P(W+ >= w))).
    """
    a, b = _pairs(a, b)
    d = [x - y for x, y in zip(a, b) if x != y]
    zeros = len(a) - len(d)
    note = f"{zeros} zero difference{'' if zeros == 1 else 's'} dropped" if zeros else None
    if not d:
        return {"n": len(a), "zeros_dropped": zeros, "n_used": 0, "w_plus": 0.0,
                "ties_in_ranks": False, "p": 1.0, "note": "every difference zero: no test"}
    ranks2 = _midranks([abs(v) for v in d])
    w2 = sum(r for r, v in zip(ranks2, d) if v > 0)
    counts = {0: 1}  # number of sign patterns giving each doubled W+
    for r in ranks2:
        nxt = dict(counts)
        for s, c in counts.items():
            nxt[s + r] = nxt.get(s + r, 0) + c
        counts = nxt
    total = 2 ** len(d)
    low = sum(c for s, c in counts.items() if s <= w2)
    high = sum(c for s, c in counts.items() if s >= w2)
    p = float(min(Fraction(1), 2 * Fraction(min(low, high), total)))
    return {"n": len(a), "zeros_dropped": zeros, "n_used": len(d), "w_plus": w2 / 2.0,
            "ties_in_ranks": len(set(ranks2)) < len(ranks2), "p": p, "note": note}


def _walsh(a, b):
    a, b = _pairs(a, b)
    d = [x - y for x, y in zip(a, b)]
    return d, sorted((d[i] + d[j]) / 2.0 for i in range(len(d)) for j in range(i, len(d)))


def hodges_lehmann(a, b):
    """The Hodges-Lehmann estimate of the paired shift a - b: the median of the n(n+1)/2 Walsh
    averages (d_i + d_j) / 2, i <= j, of the differences d = a - b."""
    _, w = _walsh(a, b)
    m = len(w)
    return w[m // 2] if m % 2 else 0.5 * (w[m // 2 - 1] + w[m // 2])


def wilcoxon_interval(a, b, level=0.95):
    """The exact confidence interval of the paired shift a - b from inverting the two-sided
    Wilcoxon signed-rank test (no ties among |d| assumed for its coverage): with c the largest
    count whose null probability P(W+ <= c) is at most (1 - level) / 2, the interval runs from
    the (c + 1)-th smallest to the (c + 1)-th largest Walsh average. At n = 10 and 95 %: the 9th
    and 47th of 55 (coverage 1 - 2 x 25 / 1024 = 95.1 %). Returns {estimate (Hodges-Lehmann),
    low, high, coverage, n}; low and high are None when n is too small for the level."""
    d, w = _walsh(a, b)
    n = len(d)
    counts = {0: 1}  # the null distribution of W+ over ranks 1..n
    for r in range(1, n + 1):
        nxt = dict(counts)
        for s, c in counts.items():
            nxt[s + r] = nxt.get(s + r, 0) + c
        counts = nxt
    total, tail, cum, c = 2 ** n, (1.0 - level) / 2.0, 0, -1
    for s in range(max(counts) + 1):
        if (cum + counts.get(s, 0)) / total > tail:
            break
        cum += counts.get(s, 0)
        c = s
    est = hodges_lehmann(a, b)
    if c < 0:
        return {"estimate": est, "low": None, "high": None, "coverage": None, "n": n}
    return {"estimate": est, "low": w[c], "high": w[len(w) - 1 - c],
            "coverage": 1.0 - 2.0 * cum / total, "n": n}


def holm(pvalues):
    """Holm's step-down adjustment of a family of p-values; returns the adjusted list.

    A None entry (a test that could not be run) stays None but still counts in the family's
    size, as a p-value of 1 would: the family is the one declared before the data, not the
    tests that happened to be computable.
    """
    ps = [None if p is None else float(p) for p in pvalues]
    for i, p in enumerate(ps):
        if p is not None and not (math.isfinite(p) and 0.0 <= p <= 1.0):
            raise ValueError(f"p-value {i} = {p} is not in [0, 1]")
    m = len(ps)
    order = sorted(range(m), key=lambda i: (1.0 if ps[i] is None else ps[i], i))
    adjusted, running = [None] * m, 0.0
    for step, i in enumerate(order):
        p = 1.0 if ps[i] is None else ps[i]
        running = max(running, min(1.0, (m - step) * p))
        adjusted[i] = None if ps[i] is None else running
    return adjusted



def holm_p_needed(others, alpha=0.05):
    """The largest raw p below which one more claim, added to a family whose other claims'
    p-values are ``others`` (None counts as 1, as in ``holm``), gets a Holm-adjusted p below
    ``alpha`` (Holm's step-down with the other p-values as they are: the claim's place in the
    order, and the steps before it, decide; alpha / m only when it must come first)."""
    ps = [1.0 if p is None else p for p in others]
    lo, hi = 0.0, 1.0  # holds at lo (adjusted p -> 0 as p -> 0), not at hi unless it holds at 1
    if holm([hi] + ps)[0] < alpha:
        return hi
    for _ in range(200):  # the adjusted p only grows with p: bisect to the boundary
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if holm([mid] + ps)[0] < alpha else (lo, mid)
    return lo

def bonferroni_interval(a, b, m, level=0.95):
    """Paired t-interval of the mean of a - b at level 1 - (1 - ``level``) / ``m``.

    Over a family of ``m`` such intervals, all hold together with probability at least
    ``level`` (Bonferroni), so the interval is simultaneous over the family and consistent with
    Bonferroni's test at alpha = 1 - ``level``: it excludes 0 exactly when m * p < 1 - level.
    Holm's step-down adjustment never exceeds Bonferroni's, so Holm rejects whenever this
    interval excludes 0 (the converse need not hold). Returns (low, high), or None where
    ``paired_t`` gives no interval (fewer than two pairs, or no spread).
    """
    if not (isinstance(m, int) and m >= 1):
        raise ValueError(f"m must be a positive integer, not {m!r}")
    ci = paired_t(a, b, level=1.0 - (1.0 - level) / m)["ci"]
    return None if ci is None else (ci[0], ci[1])


# ---- verdict words -----------------------------------------------------------------------

def vs_published(values, published, alpha=0.05, lower_is_better=True, scale=1.0, unit="",
                 digits=2, name="the paper", n_unit="seed"):
    """Compare the mean of ``values`` with a published value through its (1 - alpha) t-interval.

    Verdict: "matches <name>" when ``published`` lies inside the interval; else "better than
    <name> by x" or "worse than <name> by x", x = |mean - published| * ``scale`` written with
    ``digits`` decimals and ``unit`` (e.g. scale=100, unit=" pp" for error rates stored as
    fractions); "not resolved at n <n_unit>s" when there is no interval (fewer than two values,
    or no spread). Returns {verdict, mean, ci, diff, n, note} (diff = mean - published, unscaled).
    """
    published = _values([published], "published")[0]
    m = mean_ci(values, _level(alpha))
    out = {"verdict": None, "mean": m["mean"], "sd": m["sd"], "ci": m["ci"], "n": m["n"],
           "published": published, "diff": m["mean"] - published, "alpha": alpha,
           "note": m["note"]}
    if m["ci"] is None:
        out["verdict"] = f"not resolved {at_n(m['n'], n_unit)}"
    elif m["ci"][0] <= published <= m["ci"][1]:
        out["verdict"] = f"matches {name}"
    else:
        better = (m["mean"] < published) == bool(lower_is_better)
        out["verdict"] = (f"{'better' if better else 'worse'} than {name} by "
                          f"{abs(out['diff']) * scale:.{digits}f}{unit}")
    return out


def _ordering_word(mean_diff, p, alpha, n, n_unit):
    if p is None or p >= alpha:
        return f"not resolved {at_n(n, n_unit)}"
    return "holds" if mean_diff < 0 else "reversed"


def ordering(a, b, alpha=0.05, p_adjusted=None, n_unit="seed"):
    """The claim "a < b" over paired values (a[i], b[i]), two-sided.

    "holds" when the p-value is below ``alpha`` and the mean of a - b is negative, "reversed"
    when it is below ``alpha`` and the mean is positive, else "not resolved at n <n_unit>s".
    The p-value is ``p_adjusted`` when given (e.g. Holm's, see ``ordering_family``), else the
    paired t-test's own. Returns {verdict, t_test, sign_test, p_used, alpha}.
    """
    tt, st = paired_t(a, b, _level(alpha)), sign_test(a, b)
    p = tt["p"] if p_adjusted is None else p_adjusted
    if p is not None and not 0.0 <= p <= 1.0:
        raise ValueError(f"p_adjusted = {p} is not in [0, 1]")
    return {"verdict": _ordering_word(tt["mean_diff"], p, alpha, tt["n"], n_unit),
            "t_test": tt, "sign_test": st, "p_used": p, "alpha": alpha}


def ordering_family(claims, alpha=0.05, n_unit="seed"):
    """Claims "a < b" tested as one family: {name: (a, b)} -> {name: ordering result}.

    Each claim gets the two-sided paired t-test; the p-values are Holm-adjusted over the
    family and the verdict uses the adjusted p (``p_holm``). The exact sign test is reported
    beside it (not used for the verdict). A claim given as None (no values yet) stays in the
    family, as an untestable member does (see ``holm``), with the verdict "not measured yet".
    """
    names = list(claims)
    raw = {k: None if claims[k] is None else paired_t(*claims[k], level=_level(alpha))
           for k in names}
    adjusted = dict(zip(names, holm([None if raw[k] is None else raw[k]["p"] for k in names])))
    out = {}
    for k in names:
        if claims[k] is None:
            res = {"verdict": "not measured yet", "t_test": None, "sign_test": None,
                   "p_used": None, "alpha": alpha}
        else:
            res = ordering(*claims[k], alpha=alpha, p_adjusted=adjusted[k], n_unit=n_unit)
        res["p_holm"], res["family_size"] = adjusted[k], len(names)
        out[k] = res
    return out


def comparable(a, b, margin, alpha=0.05, n_unit="seed"):
    """Are paired a and b within ``margin`` of each other?

    "comparable" when the (1 - alpha) t-interval of the mean of a - b lies inside
    [-margin, margin] (stricter than the two one-sided tests at alpha, which use the 1 - 2 alpha
    interval); else "not shown comparable at n <n_unit>s" (also with no interval). Returns
    {verdict, t_test, margin}.
    """
    margin = _values([margin], "margin")[0]
    if margin <= 0:
        raise ValueError(f"margin must be positive, got {margin}")
    tt = paired_t(a, b, _level(alpha))
    inside = tt["ci"] is not None and -margin <= tt["ci"][0] and tt["ci"][1] <= margin
    return {"verdict": "comparable" if inside else f"not shown comparable {at_n(tt['n'], n_unit)}",
            "t_test": tt, "margin": margin, "alpha": alpha}
