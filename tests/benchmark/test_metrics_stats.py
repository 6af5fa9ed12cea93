"""Statistics of the metrics: bootstrap CIs, paired sign-flip tests, MT-POI weight sensitivity
(seed 000 §6–7, Appendix D.2)."""

from __future__ import annotations

import numpy as np
import pytest

from tpguard.benchmark.metrics import (
    ALTERNATIVE_WEIGHTS,
    bootstrap_ci,
    sign_flip_test,
    spearman,
    weight_sensitivity,
)
from tpguard.benchmark.metrics._stats import bootstrap_means, resample_indices


def test_bootstrap_ci_contains_the_mean_and_narrows_with_n() -> None:
    rng = np.random.default_rng(7)
    small = rng.uniform(0, 1, 20)
    large = rng.uniform(0, 1, 2000)
    lo_s, hi_s = bootstrap_ci(small, seed=1)
    lo_l, hi_l = bootstrap_ci(large, seed=1)
    assert lo_s <= small.mean() <= hi_s
    assert lo_l <= large.mean() <= hi_l
    # width ∝ 1/√n: 100× more cases → about 10× narrower
    assert (hi_l - lo_l) < (hi_s - lo_s) / 5
    assert bootstrap_ci(small, seed=1) == (lo_s, hi_s)  # seeded: reproducible


def test_bootstrap_ignores_undefined_cases_and_constant_data() -> None:
    assert bootstrap_ci([None, None]) is None
    assert bootstrap_ci([0.5, None, 0.5]) == (0.5, 0.5)
    m = np.array([[1.0, np.nan], [0.0, np.nan], [1.0, 2.0]])
    means = bootstrap_means(m, resample_indices(3, 50, seed=3))
    assert means.shape == (50, 2)
    assert np.all((means[:, 0] >= 0) & (means[:, 0] <= 1))
    # column 2: a resample with only NaN rows has no mean (NaN), otherwise exactly 2.0
    col = means[:, 1]
    assert np.all(np.isnan(col) | (col == 2.0)) and np.isnan(col).any() and (col == 2.0).any()


def test_sign_flip_small_p_for_a_consistent_difference_large_for_noise() -> None:
    rng = np.random.default_rng(11)
    consistent = -0.3 + rng.normal(0, 0.05, 40)
    noise = rng.normal(0, 1.0, 40)
    strong = sign_flip_test(consistent, seed=0)
    weak = sign_flip_test(noise, seed=0)
    assert strong["n"] == 40 and strong["p_value"] < 0.001
    assert weak["p_value"] > 0.05
    assert sign_flip_test([0.0, 0.0, None])["p_value"] == 1.0
    assert sign_flip_test([None])["p_value"] is None
    # exact enumeration for small n: 5 positive differences → p = 2/32
    assert sign_flip_test([1, 2, 3, 4, 5])["p_value"] == pytest.approx(2 / 32)


def test_spearman() -> None:
    assert spearman([3, 1, 2], [30, 10, 20]) == 1.0
    assert spearman([1, 2, 3], [3, 2, 1]) == -1.0
    assert spearman([1, 1], [1, 1]) == 1.0
    assert spearman([1, 1], [1, 2]) is None and spearman([1], [1]) is None


def test_weight_sensitivity_appendix_d2() -> None:
    assert ALTERNATIVE_WEIGHTS["severity-heavy"].SWLR == 0.5
    # components proportional across rows → every weighting ranks them the same: ρ = 1
    rows = [{"FOR": x, "SWLR": x, "ToolFOR": x, "FreeTextFOR": x, "MidFOR": x} for x in (5, 20, 9)]
    assert weight_sensitivity(rows) == {
        "equal-core": 1.0, "severity-heavy": 1.0, "free-text-heavy": 1.0,
    }
    # row A leaks mostly in free text, row B in severe fields. Default MT-POI (ranks):
    # A = 0.2·(10+10+10+70+10) = 22 (1), B = 0.2·(20+45+20+0+20) = 21 (2), C = 1 (3)
    rows = [
        {"FOR": 10, "SWLR": 10, "ToolFOR": 10, "FreeTextFOR": 70, "MidFOR": 10},  # default 22
        {"FOR": 20, "SWLR": 45, "ToolFOR": 20, "FreeTextFOR": 0, "MidFOR": 20},   # default 21
        {"FOR": 1, "SWLR": 1, "ToolFOR": 1, "FreeTextFOR": 1, "MidFOR": 1},       # default 1
    ]
    rho = weight_sensitivity(rows)
    # severity-heavy: A = 0.1·10+0.5·10+0.2·10+0.2·10 = 10, B = 2+22.5+4+4 = 32.5 → A, B swap
    # ranks (1,2,3)→(2,1,3): ρ = 1 − 6·(1+1)/(3·8) = 0.5
    assert rho["severity-heavy"] == pytest.approx(0.5)
    # free-text-heavy: A = 1+2.5+1.5+24.5+1.5 = 31, B = 2+11.25+3+0+3 = 19.25 → same order
    assert rho["free-text-heavy"] == 1.0


def test_sign_flip_agrees_with_scipy_permutation_test() -> None:
    from scipy import stats

    d = np.linspace(-1.0, 1.4, 40)  # mean 0.2: a borderline p
    ours = sign_flip_test(d, n_resamples=20000, seed=1)["p_value"]
    ref = stats.permutation_test(
        (d,), lambda x, axis: np.mean(x, axis=axis), permutation_type="samples",
        vectorized=True, n_resamples=20000, rng=np.random.default_rng(2),
    ).pvalue
    assert 0.02 < ref < 0.98 and ours == pytest.approx(ref, abs=0.015)
