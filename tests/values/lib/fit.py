"""Fitting the rate model's parameters to a class's points (chapter 2;
code/napkin/calib/fit.h states the problem): the parameters t0, flop_frac,
byte_frac, blend (and t_item, item_frac, t_long where the points have work
items and spans) minimise the soft-L1 cost of the log-time residuals,
sum 2 s^2 (sqrt(1 + (r/s)^2) - 1), s = 0.10 (a residual past ~10 % counts
linearly), each parameter's log kept in its box.  Solved here by
iteratively reweighted, damped Gauss-Newton from the same start; a
different route to the same minimum.  A point's extra (seconds its
measured time holds beyond the op, priced apart: lib/published.py) adds to
the op's time before the log."""
import math

from lib import calibrated

SCALE = 0.10
NAMES = ("t0", "flop_frac", "byte_frac", "blend", "t_item", "item_frac", "t_long")
LO = (math.log(1e-9), math.log(1e-3), math.log(1e-3), 0.0, math.log(1e-15), math.log(1e-3), math.log(1e-12))
HI = (0.0, math.log(1.5), math.log(1.5), math.log(64.0), math.log(1e-3), math.log(1.5), math.log(1e-3))
START = (3e-6, 0.8, 0.8, 2.0, 1e-9, 1.0, 1e-6)  # the published fit's starting rates


def _rate(u, np):
    r = {k: (math.exp(u[i]) if i < np else 0.0) for i, k in enumerate(NAMES)}
    return r


def _residuals(u, np, pts):
    r = _rate(u, np)
    return [math.log((calibrated.op_rate_time(r, p["flop"], p["bytes"], p["items"], p["span"], p["peak"], p["bw"])
                      + p.get("extra", 0.0)) / p["time"]) for p in pts]


def _cost(res):
    return sum(2 * SCALE * SCALE * (math.sqrt(1 + (x / SCALE) ** 2) - 1) for x in res)


def _solve(a, b):
    n = len(b)
    m = [row[:] + [b[i]] for i, row in enumerate(a)]
    for c in range(n):
        piv = max(range(c, n), key=lambda i: abs(m[i][c]))
        m[c], m[piv] = m[piv], m[c]
        if abs(m[c][c]) < 1e-300:
            return None
        for i in range(c + 1, n):
            f = m[i][c] / m[c][c]
            for j in range(c, n + 1):
                m[i][j] -= f * m[c][j]
    x = [0.0] * n
    for i in range(n - 1, -1, -1):
        x[i] = (m[i][n] - sum(m[i][j] * x[j] for j in range(i + 1, n))) / m[i][i]
    return x


def fit_op_rate(pts):
    """The fitted rate (a dict of lib/calibrated's keys)."""
    np = 4
    for p in pts:
        if p["items"] > 0:
            np = max(np, 5)
            if p["span"] > 0:
                np = 7
    u = [min(max(math.log(v), LO[i]), HI[i]) for i, v in enumerate(START)]
    res = _residuals(u, np, pts)
    cost, lam = _cost(res), 1e-3
    for _ in range(500):
        w = [1 / math.sqrt(1 + (x / SCALE) ** 2) for x in res]  # soft-L1's weights
        jac = []
        for i in range(np):
            v = u[:]
            h = 1e-6
            v[i] += h
            jac.append([(b - a) / h for a, b in zip(res, _residuals(v, np, pts))])
        A = [[sum(wk * ji * jj for wk, ji, jj in zip(w, jac[i], jac[j])) for j in range(np)] for i in range(np)]
        g = [sum(wk * ji * rk for wk, ji, rk in zip(w, jac[i], res)) for i in range(np)]
        improved = False
        while lam < 1e12:
            D = [[A[i][j] + (lam * A[i][i] if i == j else 0.0) for j in range(np)] for i in range(np)]
            step = _solve(D, [-x for x in g])
            if step is None:
                lam *= 10
                continue
            v = [min(max(u[i] + (step[i] if i < np else 0.0), LO[i]), HI[i]) for i in range(len(u))]
            r2 = _residuals(v, np, pts)
            c2 = _cost(r2)
            if c2 < cost:
                done = cost - c2 < 1e-12 * max(1.0, cost)
                u, res, cost, lam, improved = v, r2, c2, max(lam / 10, 1e-12), True
                break
            lam *= 10
        if not improved or done:
            break
    return _rate(u, np)
