"""The project's seeded generator, written again from its documented
algorithm (code/napkin/core/rng.h): xoshiro256** (Blackman and Vigna)
seeded with four words of splitmix64 from the 64-bit seed; uniform draws
take the top 53 bits; the open interval (0, 1) adds half a unit; a normal
is Box-Muller's cosine branch (one of the pair kept); an exponential is
-ln(U)/rate on the open interval; a lognormal exp(mu + sigma*Z).  Python's
math functions are the platform's libm, as the C's are, so a seeded stream
replays the same draws."""
import math

M64 = (1 << 64) - 1
TWO_PI = 6.283185307179586


def splitmix64(x):
    """(next state, output word) of one splitmix64 step."""
    x = (x + 0x9E3779B97F4A7C15) & M64
    z = x
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & M64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & M64
    return x, z ^ (z >> 31)


class Rng:
    def __init__(self, seed):
        x, s = seed & M64, []
        for _ in range(4):
            x, w = splitmix64(x)
            s.append(w)
        if not any(s):
            s[0] = 1
        self.s = s

    def next(self):
        s0, s1, s2, s3 = self.s
        x = (s1 * 5) & M64
        result = ((((x << 7) | (x >> 57)) & M64) * 9) & M64
        t = (s1 << 17) & M64
        s2 ^= s0
        s3 ^= s1
        s1 ^= s2
        s0 ^= s3
        s2 ^= t
        s3 = ((s3 << 45) | (s3 >> 19)) & M64
        self.s = [s0, s1, s2, s3]
        return result

    def uniform(self):
        return (self.next() >> 11) * (1.0 / (1 << 53))

    def uniform_open(self):
        return ((self.next() >> 11) + 0.5) * (1.0 / (1 << 53))

    def below(self, n):
        """Uniform integer in [0, n), the top sliver of words rejected."""
        if n == 0:
            return 0
        limit = M64 - M64 % n
        while True:
            x = self.next()
            if x < limit:
                return x % n

    def exponential(self, rate):
        return -math.log(self.uniform_open()) / rate

    def normal(self):
        u1, u2 = self.uniform_open(), self.uniform()
        return math.sqrt(-2.0 * math.log(u1)) * math.cos(TWO_PI * u2)

    def lognormal(self, mu, sigma):
        return math.exp(mu + sigma * self.normal())
