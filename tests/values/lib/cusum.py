"""Page's CUSUM on a speculative decoder's per-round accepted counts
(chapter 11; code/napkin/serving/specmon.h states the design): a round
with a of gamma drafts accepted is a successes then, unless a = gamma, one
failure, so its log-likelihood ratio of alpha1 against alpha0 is
    llr(a) = a ln(alpha1/alpha0) + [a < gamma] ln((1 - alpha1)/(1 - alpha0));
S_n = max(0, S_{n-1} + llr(a_n)), an alarm when S_n >= h (and S restarts
at 0).  h = ln(ARL0) bounds the false-alarm rate by 1/ARL0 (ARL0 >= e^h);
by Wald's identity the expected delay from S = 0 is at most
(h + llr_max)/I1, I1 = E_alpha1[llr]; Siegmund's approximation without the
overshoot is (h - 1 + e^-h)/I1."""
import math


class Design:
    def __init__(self, alpha0, alpha1, gamma, arl0):
        self.a0, self.a1, self.gamma = alpha0, alpha1, gamma
        self.h = math.log(arl0)
        self.up = math.log(alpha1 / alpha0)              # per accepted draft
        self.down = math.log((1 - alpha1) / (1 - alpha0))  # per rejection

    def llr(self, accepted):
        return accepted * self.up + (self.down if accepted < self.gamma else 0.0)

    def llr_max(self):
        return self.llr(0)

    def drift(self, alpha):
        """E[llr] when drafts pass with probability alpha: E[accepted] =
        alpha + ... + alpha^gamma, P(a rejection) = 1 - alpha^gamma."""
        accepted = sum(alpha ** j for j in range(1, self.gamma + 1))
        return accepted * self.up + (1 - alpha ** self.gamma) * self.down

    def delay_bound(self, alpha):
        mu = self.drift(alpha)
        return (self.h + self.llr_max()) / mu if mu > 0 else math.inf

    def delay_approx(self, alpha):
        mu = self.drift(alpha)
        return (self.h - 1 + math.exp(-self.h)) / mu if mu > 0 else math.inf


def threshold_for_arl0(arl0):
    return math.log(arl0)


def accepted_in_round(uniform, alpha, gamma):
    """Drafts accepted in one round: draw until a rejection or gamma passes."""
    k = 0
    while k < gamma and uniform() < alpha:
        k += 1
    return k


def alpha_mle(accepted, rejections):
    """Accepted drafts over drafts examined (accepted plus one rejection per
    round that ended early)."""
    return accepted / (accepted + rejections)
