"""The agreement statistics of a calibration, written out (each is a few lines).

scikit-learn or scipy would give the same numbers for tens of megabytes of dependencies and
seconds of import time; these are short enough to read and are tested against hand-worked
values. ``None`` means the figure is undefined for this data (for example AUC with no bad cases),
never a made-up default.
"""

from __future__ import annotations

from collections.abc import Sequence


def accuracy(truth: Sequence[bool], predicted: Sequence[bool]) -> float | None:
    """Share of verdicts that match the human's."""
    if not truth:
        return None
    return sum(t == p for t, p in zip(truth, predicted, strict=True)) / len(truth)


def balanced_accuracy(truth: Sequence[bool], predicted: Sequence[bool]) -> float | None:
    """Mean of the pass rate on good answers and the fail rate on bad ones: a judge that passes
    everything scores 0.5 however lopsided the set is."""
    good = [p for t, p in zip(truth, predicted, strict=True) if t]
    bad = [p for t, p in zip(truth, predicted, strict=True) if not t]
    if not good or not bad:
        return None
    return (sum(good) / len(good) + sum(not p for p in bad) / len(bad)) / 2


def cohen_kappa(truth: Sequence[bool], predicted: Sequence[bool]) -> float | None:
    """Agreement beyond chance: (p_o - p_e) / (1 - p_e), where p_e is the agreement two raters
    with these pass rates would reach by luck. Undefined when p_e is 1 (both always agree by
    construction, e.g. every label and every verdict is 'good')."""
    n = len(truth)
    if n == 0:
        return None
    observed = sum(t == p for t, p in zip(truth, predicted, strict=True)) / n
    t_yes, p_yes = sum(truth) / n, sum(predicted) / n
    expected = t_yes * p_yes + (1 - t_yes) * (1 - p_yes)
    if expected >= 1.0:
        return None
    return (observed - expected) / (1 - expected)


def roc_auc(good: Sequence[float], bad: Sequence[float]) -> float | None:
    """Probability that a good answer outscores a bad one, ties counting half (the
    Mann-Whitney U statistic over len(good) * len(bad)), from average ranks in O(n log n)."""
    if not good or not bad:
        return None
    scored = sorted([(s, True) for s in good] + [(s, False) for s in bad], key=lambda x: x[0])
    rank_sum = 0.0
    i = 0
    while i < len(scored):
        j = i
        while j + 1 < len(scored) and scored[j + 1][0] == scored[i][0]:
            j += 1
        average_rank = (i + j) / 2 + 1  # ranks are 1-based; tied values share their mean
        rank_sum += average_rank * sum(1 for k in range(i, j + 1) if scored[k][1])
        i = j + 1
    u = rank_sum - len(good) * (len(good) + 1) / 2
    return u / (len(good) * len(bad))


def mean(values: Sequence[float]) -> float | None:
    return sum(values) / len(values) if values else None
