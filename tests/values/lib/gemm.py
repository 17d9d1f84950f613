"""One GEMM on the roofline (chapter 2): Y[m x n] = X[m x k] W^T reads X
and W once and writes Y once, 2mnk FLOP; its time is max(FLOP/peak,
bytes/bandwidth); the knee against the batch m is where the two terms meet,
2mnk/P = (in*(mk + nk) + out*mn)/beta solved for m; a measured sweep's knee
is where its flat floor meets the line through its largest batch's time.
Errors are (predicted - measured)/measured."""
import statistics


def work(m, n, k, in_elem, out_elem):
    flop = 2.0 * m * n * k
    nbytes = in_elem * (m * k + n * k) + out_elem * m * n
    return flop, nbytes


def predicted_time(m, n, k, in_elem, out_elem, peak, bandwidth):
    """(time, bound)."""
    flop, nbytes = work(m, n, k, in_elem, out_elem)
    tc, tm = flop / peak, nbytes / bandwidth
    return max(tc, tm), ("compute" if tc > tm else "memory")


def knee_batch(n, k, in_elem, out_elem, peak, bandwidth):
    slope = 2.0 * n * k / peak - (in_elem * k + out_elem * n) / bandwidth
    return in_elem * n * k / bandwidth / slope if slope > 0 else float("inf")


def measured_knee(t_floor, m_big, t_big):
    return t_floor * m_big / t_big


def relative_error(predicted, measured):
    return (predicted - measured) / measured


def error_summary(predicted, measured):
    """median |error|, worst |error|, mean signed error."""
    e = [relative_error(p, m) for p, m in zip(predicted, measured)]
    a = [abs(x) for x in e]
    return {"median_abs": statistics.median(a), "worst_abs": max(a), "mean": sum(e) / len(e)}
