"""The interval quoted beside a benchmark's p95: where the true quantile lies, from the sample."""

import random

import pytest

from evals.metrics import quantile_interval


def test_the_interval_is_the_order_statistics_the_binomial_bounds():
    # 181 recalls (a loaded minute of bench_service): the 166th to the 178th of them
    assert quantile_interval([float(v) for v in range(1, 182)], 0.95) == (166.0, 178.0)
    # more ops, a narrower interval around the same quantile
    low, high = quantile_interval([float(v) for v in range(1, 1001)], 0.95)
    assert low < 950 < high and high - low < 30


def test_a_sample_too_small_for_the_quantile_has_no_interval():
    assert quantile_interval([float(v) for v in range(50)], 0.95) is None
    assert quantile_interval([], 0.95) is None


@pytest.mark.parametrize("n", [100, 181, 600])
def test_the_interval_covers_the_true_quantile_as_often_as_it_says(n):
    rng = random.Random(n)
    tries = 600
    covered = 0
    for _ in range(tries):
        low, high = quantile_interval([rng.expovariate(1.0) for _ in range(n)], 0.95)
        covered += low <= 2.995732273553991 <= high  # the exponential's p95: ln 20
    assert 0.93 <= covered / tries <= 0.99
