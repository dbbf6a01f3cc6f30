#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""
Reference figures for lab's decision engine (tests/unit/test-decide.c),
computed independently of lab with SciPy/NumPy (and statsmodels for
Benjamini-Hochberg: Debian 12's SciPy 1.10 has no false_discovery_control).

    apt-get install -y python3-scipy python3-statsmodels
    tests/tools/stats-reference.py > tests/data/stats-reference.txt

Run once; the output is committed. Every line is
    <case> <key> <count> <value>...
with values printed %.17g ("nan": none). Lines starting with # are comments.
Conventions (those of lab/result/decide.h and stats.h): a is the baseline,
b the compared side, effects are b against a, alpha 0.05, power 0.8.
"""
import itertools
import math
import sys

import numpy as np
import scipy
import scipy.stats as st
import statsmodels
from statsmodels.stats.multitest import multipletests

ALPHA = 0.05
POWER = 0.8

# ~12 small datasets: n from 2 to 12 a side, ties, a side with no variance,
# negative values, values spanning decades. a is the baseline.
_rng = np.random.default_rng(20240521)
DATASETS = {
    "d01": ([10.0, 10.4], [10.9, 11.5]),                                   # n = 2 a side
    "d02": ([100, 102, 99], [104, 103, 107]),                               # n = 3
    "d03": ([5, 5, 6, 7, 7], [6, 7, 7, 8, 8]),                              # ties
    "d04": ([3.1, 3.3, 2.9, 3.0], [3.5, 3.5, 3.5, 3.5]),                    # b has no variance
    "d05": ([0.01, 0.5, 12, 300, 4000], [0.03, 2, 80, 900, 20000, 1.5]),    # spanning decades
    "d06": ([-1.2, 0.4, 1.1, -0.3, 0.8], [0.9, 1.7, 2.2, 1.1, 0.5]),        # negative values
    "d07": ([12.0, 9.5, 11.2, -1.0, 10.4, 13.1],
            [14.2, 15.0, 13.3, 16.1, 12.9, 0.0, 14.7]),                    # a negative and a 0: Fieller
    "d08": ([1.11, 1.32, 0.97, 1.05, 1.21, 1.18, 1.02],
            [1.25, 1.41, 1.38, 1.19, 1.50]),                                # 7 vs 5, no ties: exact ranks
    "d09": ([float(x) for x in np.round(_rng.lognormal(3, 0.1, 8), 4)],
            [float(x) for x in np.round(_rng.lognormal(3.05, 0.1, 8), 4)]),  # 8 vs 8, no ties
    "d10": ([float(x) for x in np.round(_rng.lognormal(5, 0.05, 12), 3)],
            [float(x) for x in np.round(_rng.lognormal(5.02, 0.05, 12), 3)]),  # 12 a side
    "d11": ([2.0, 3, 3, 4, 9, 1], [4.0, 4, 5, 3, 6, 7, 7, 8, 2]),           # 6 vs 9, ties
    "d12": ([1000.1, 1000.3, 999.9], [1000.5, 1000.4, 1000.8, 1000.6]),     # close, large values
    "d13": ([4.0, 5, 6], [4.0, 5, 6]),                                      # identical sides
    "d14": ([2.0, 2, 2], [3.0, 3, 3]),                                      # no variance at all
    "d15": ([3.0, 5, 8, 13, 21], [2.0, 34, 55, 89, 144, 233, 377, 610, 987, 1597, 2584, 4181]),  # 5 vs 12
    "d16": ([-10.2, -10.5, -9.7], [-12.1, -11.8, -12.6]),                   # negative means: a fall
    "d17": ([-5.1, -4.8, -5.3, -4.9], [-1.0, 0.5, -0.2, 0.3]),              # negative baseline, b around 0
}

# Grouped datasets: per side, the runs of each boot (boots are the units).
GROUPED = {
    "g01": ([[100, 102, 101], [96, 97, 95, 98], [104, 103], [99, 101, 100]],
            [[105, 104, 107], [101, 103, 102], [108, 106, 107, 109]]),
    "g02": ([[10.0, 12.0, 11.0], [11.5, 10.5, 11.0]],                       # boots agree better than runs:
            [[12.0, 10.0, 13.0], [11.0, 12.5, 11.5], [13.0, 11.0, 12.0]]),  # the between part is 0
}

# p-values for Benjamini-Hochberg: ties, a NaN (not counted), 0 and 1.
BH_P = [0.001, 0.008, 0.039, 0.041, 0.042, 0.06, 0.074, 0.205, 0.212, 0.216,
        0.222, 0.251, 0.269, 0.275, 0.34, 0.341, float("nan"), 0.039, 0.0, 1.0]

out = sys.stdout


def put(case, key, values):
    if not isinstance(values, (list, tuple, np.ndarray)):
        values = [values]
    vals = " ".join("%.17g" % float(v) for v in values)
    out.write("%s %s %d %s\n" % (case, key, len(values), vals))


def pct(x):
    return 100 * math.expm1(x)


def tppf(p, df):
    """Student's t quantile. SciPy 1.10's t.ppf (cephes stdtrit) is only good
    to ~1e-10 relative at non-integer df (checked against mpmath at 40
    digits: df 7.4079, 0.975 is off by 1.5e-10); two Newton steps on its
    accurate cdf (t.sf, t.pdf) bring it to ~1e-16."""
    q = st.t.ppf(p, df)
    for _ in range(2):
        q += (st.t.sf(q, df) - (1 - p)) / st.t.pdf(q, df)
    return q


def welch(x, y, conf):
    """Welch's test of mean(y) - mean(x): p from scipy.stats.ttest_ind, the
    interval from the Welch-Satterthwaite df and scipy.stats.t.ppf."""
    x, y = np.asarray(x, float), np.asarray(y, float)
    va, vb = x.var(ddof=1) / len(x), y.var(ddof=1) / len(y)
    se = math.sqrt(va + vb)
    df = (va + vb) ** 2 / (va * va / (len(x) - 1) + vb * vb / (len(y) - 1))
    diff = y.mean() - x.mean()
    p = st.ttest_ind(y, x, equal_var=False).pvalue
    assert abs(p - 2 * st.t.sf(abs(diff / se), df)) <= 1e-12 * max(p, 1e-300) + 1e-300
    tq = tppf(1 - (1 - conf) / 2, df)
    return dict(diff=diff, se=se, df=df, p=p, lo=diff - tq * se, hi=diff + tq * se)


def welch_mde(w, alpha, power):
    """The smallest difference a Welch test at alpha detects with power."""
    return (tppf(1 - alpha / 2, w["df"]) + tppf(power, w["df"])) * w["se"]


def has_variance(x):
    return len(set(x)) > 1


def mann_whitney(a, b):
    """U of b (scipy returns the U of its first argument) and SciPy's p."""
    method = "exact" if scipy_auto_exact(a, b) else "asymptotic"
    r = st.mannwhitneyu(b, a, alternative="two-sided", method=method)
    return r.statistic, r.pvalue


def scipy_auto_exact(a, b):
    """SciPy 1.10's choice for method "auto" (_mwu_choose_method): exact
    unless both sides have more than 8 values or there are ties; lab also
    takes the normal approximation past 10,000 pairs."""
    ties = len(set(a) | set(b)) < len(a) + len(b)
    return not (len(a) > 8 and len(b) > 8) and not ties and len(a) * len(b) <= 10000


def u_null_cdf(na, nb):
    """P(U_b <= u) with no ties, by enumerating every choice of b's ranks."""
    n = na + nb
    counts = np.zeros(na * nb + 1)
    for ranks in itertools.combinations(range(1, n + 1), nb):
        counts[sum(ranks) - nb * (nb + 1) // 2] += 1
    return np.cumsum(counts) / counts.sum()


def hl_interval(a, b, conf, exact):
    """lab's definition of the Hodges-Lehmann interval (stats.h: "with its
    interval from the order statistics"), reimplemented here independently:
    the sorted pairwise differences d (0-based), c the largest order with
    P(U <= c) <= (1 - conf) / 2 under the null (exact distribution; with
    ties or large sides floor(mn / 2 - z s) with s the tie-corrected
    standard deviation of U), the interval [d[c], d[mn - 1 - c]]; NaN when
    c < 0 or c >= mn - 1 - c (too few values for conf). The exact branch is
    taken when SciPy's "auto" takes it (the rule lab's header cites)."""
    d = np.sort(np.subtract.outer(np.asarray(b, float), np.asarray(a, float)).ravel())
    mn, n = len(a) * len(b), len(a) + len(b)
    if exact:
        cdf = u_null_cdf(len(a), len(b))
        c = -1
        while c + 1 <= mn and cdf[c + 1] <= (1 - conf) / 2:
            c += 1
    else:
        _, t = np.unique(np.concatenate([a, b]), return_counts=True)
        tie = float(np.sum(t ** 3 - t))
        s = math.sqrt(mn / 12 * ((n + 1) - tie / (n * (n - 1))))
        c = math.floor(mn / 2 - st.norm.ppf(1 - (1 - conf) / 2) * s)
    if c < 0 or c >= mn - 1 - c:
        return float("nan"), float("nan")
    return d[c], d[mn - 1 - c]


def permutation(a, b):
    """The exact permutation test of mean(b) - mean(a) (SciPy, every
    arrangement). "abs": P(|T| >= |t|), lab's two-sided definition;
    "scipy2": SciPy's own two-sided p, 2 min(P(T <= t), P(T >= t))."""
    def diff(x, y, axis):
        return np.mean(y, axis=axis) - np.mean(x, axis=axis)

    def absdiff(x, y, axis):
        return np.abs(diff(x, y, axis))

    kw = dict(permutation_type="independent", n_resamples=np.inf, vectorized=True)
    pa = st.permutation_test((a, b), absdiff, alternative="greater", **kw).pvalue
    p2 = st.permutation_test((a, b), diff, alternative="two-sided", **kw).pvalue
    return pa, p2


def fieller(ma, va, mb, vb, tq):
    """Fieller's interval for mb / ma, independent means with squared
    standard errors va, vb (Fieller 1954, J. R. Stat. Soc. B 16:175-185;
    the closed form as in Motulsky, Intuitive Biostatistics, and Franz 2007,
    BMC Research Notes "Ratios: a short guide to confidence limits"):
        q = mb / ma, g = tq^2 va / ma^2 (bounded only when g < 1),
        q / (1 - g) +- tq / (|ma| (1 - g)) sqrt(vb (1 - g) + q^2 va)."""
    q = mb / ma
    g = tq * tq * va / (ma * ma)
    if g >= 1:
        return float("nan"), float("nan")
    h = tq / (abs(ma) * (1 - g)) * math.sqrt(vb * (1 - g) + q * q * va)
    return q / (1 - g) - h, q / (1 - g) + h


def positive(x):
    return all(v > 0 for v in x)


def welch_log_case(name, a, b, key="wl"):
    """decide_effect, welch-log: the percent change and its intervals at 1 - alpha, 1 - 2 alpha."""
    la, lb = np.log(a), np.log(b)
    w, w2 = welch(la, lb, 1 - ALPHA), welch(la, lb, 1 - 2 * ALPHA)
    put(name, key + ".p", w["p"])
    put(name, key + ".df", w["df"])
    put(name, key + ".change", pct(w["diff"]))
    put(name, key + ".lo", pct(w["lo"]))
    put(name, key + ".hi", pct(w["hi"]))
    put(name, key + ".elo", pct(w2["lo"]))
    put(name, key + ".ehi", pct(w2["hi"]))
    put(name, key + ".mde", pct(welch_mde(w, ALPHA, POWER)))


def fieller_case(name, a, b):
    """decide_effect on values not all positive: the ratio of means by
    Fieller, as a change relative to |mean(a)| (docs/statistics.md): it
    follows the sign of mean(b) - mean(a) when the baseline is negative."""
    a, b = np.asarray(a, float), np.asarray(b, float)
    w = welch(a, b, 1 - ALPHA)
    va, vb = a.var(ddof=1) / len(a), b.var(ddof=1) / len(b)
    sign = 1 if a.mean() > 0 else -1
    put(name, "fi.change", 100 * (b.mean() - a.mean()) / abs(a.mean()))
    put(name, "fi.mde", 100 * welch_mde(w, ALPHA, POWER) / abs(a.mean()))
    for key, tq in (("", tppf(1 - ALPHA / 2, w["df"])), ("e", tppf(1 - ALPHA, w["df"]))):
        lo, hi = fieller(a.mean(), va, b.mean(), vb, tq)
        ends = sorted([100 * sign * (lo - 1), 100 * sign * (hi - 1)])
        put(name, "fi.%slo" % key, ends[0])
        put(name, "fi.%shi" % key, ends[1])
        put(name, "fi.%sratio_lo" % key, lo)
        put(name, "fi.%sratio_hi" % key, hi)
        put(name, "fi.%stq" % key, tq)
    put(name, "fi.ma", a.mean())
    put(name, "fi.va", va)
    put(name, "fi.mb", b.mean())
    put(name, "fi.vb", vb)


def dataset(name, a, b):
    put(name, "a", a)
    put(name, "b", b)
    exact = scipy_auto_exact(a, b)
    if has_variance(a) or has_variance(b):
        w = welch(a, b, 1 - ALPHA)
        for k in ("diff", "se", "df", "p", "lo", "hi"):
            put(name, "w." + k, w[k])
        if positive(a) and positive(b):
            welch_log_case(name, a, b)
        else:
            fieller_case(name, a, b)
    u, p = mann_whitney(a, b)
    put(name, "mw.u", u)
    put(name, "mw.p", p)
    put(name, "mw.exact", 1 if exact else 0)
    put(name, "mw.shift", np.median(np.subtract.outer(np.asarray(b, float), np.asarray(a, float))))
    lo, hi = hl_interval(a, b, 1 - ALPHA, exact)
    put(name, "mw.lo", lo)
    put(name, "mw.hi", hi)
    if positive(a) and positive(b) and (has_variance(a) or has_variance(b)):
        la, lb = np.log(a), np.log(b)
        put(name, "mwl.change", pct(np.median(np.subtract.outer(lb, la))))
        for key, conf in (("", 1 - ALPHA), ("e", 1 - 2 * ALPHA)):
            lo, hi = hl_interval(la, lb, conf, exact)
            put(name, "mwl.%slo" % key, pct(lo))
            put(name, "mwl.%shi" % key, pct(hi))
    pa, p2 = permutation(a, b)
    put(name, "perm.p", pa)
    put(name, "perm.scipy2", p2)
    put(name, "perm.exact", 1 if math.comb(len(a) + len(b), len(a)) <= 50000 else 0)


def variance_parts(boots):
    """One-way random effects by ANOVA moments (Searle, Casella & McCulloch,
    Variance Components, 3.5): MSW = SSW / (N - k), MSB = SSB / (k - 1),
    n0 = (N - sum n_i^2 / N) / (k - 1), between = max(0, (MSB - MSW) / n0),
    within = MSW; as CV, % of the mean of all runs."""
    runs = np.concatenate([np.asarray(x, float) for x in boots])
    N, k = len(runs), len(boots)
    gm = runs.mean()
    means = np.array([np.mean(x) for x in boots])
    ns = np.array([len(x) for x in boots], float)
    ssw = sum(np.sum((np.asarray(x, float) - m) ** 2) for x, m in zip(boots, means))
    ssb = np.sum(ns * (means - gm) ** 2)
    msw, msb = ssw / (N - k), ssb / (k - 1)
    n0 = (N - np.sum(ns ** 2) / N) / (k - 1)
    between = max(0.0, (msb - msw) / n0)
    return 100 * math.sqrt(between) / abs(gm), 100 * math.sqrt(msw) / abs(gm), means


def grouped(name, a, b):
    for side, boots in (("a", a), ("b", b)):
        put(name, side + ".sizes", [len(x) for x in boots])
        put(name, side, [v for x in boots for v in x])
        cvb, cvw, _ = variance_parts(boots)
        put(name, side + ".cvb", cvb)
        put(name, side + ".cvw", cvw)
    # the boots are the units: Welch on the logs of the boot means
    welch_log_case(name, variance_parts(a)[2], variance_parts(b)[2], "bw")


def main():
    out.write("# Reference figures for tests/unit/test-decide.c: generated by\n")
    out.write("#   tests/tools/stats-reference.py > tests/data/stats-reference.txt\n")
    out.write("# with Python %s, SciPy %s, NumPy %s, statsmodels %s (Debian 12 packages).\n" %
              (sys.version.split()[0], scipy.__version__, np.__version__, statsmodels.__version__))
    out.write("# Line: <case> <key> <count> <values %.17g>. Keys: w. Welch on the values;\n")
    out.write("# wl. decide_effect welch-log (%); fi. Fieller (decide_effect when a value is not\n")
    out.write("# positive); mw. Mann-Whitney U of b, SciPy's p, Hodges-Lehmann shift and lab's\n")
    out.write("# order-statistic interval (reimplemented); mwl. the same on logs, in %; perm.p\n")
    out.write("# exact P(|T| >= |t|) from scipy.stats.permutation_test; bh. Benjamini-Hochberg\n")
    out.write("# (statsmodels fdr_bh); g cases: variance parts (CV %) and Welch-log on boot means.\n")
    for name, (a, b) in DATASETS.items():
        dataset(name, a, b)
    for name, (a, b) in GROUPED.items():
        grouped(name, a, b)
    p = np.array(BH_P)
    ok = ~np.isnan(p)
    q = np.full(len(p), np.nan)
    q[ok] = multipletests(p[ok], method="fdr_bh")[1]
    put("bh", "p", p)
    put("bh", "q", q)


if __name__ == "__main__":
    main()
