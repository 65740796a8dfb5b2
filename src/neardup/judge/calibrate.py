"""Pick the method, its parameters, the shingles and the threshold that suit labelled data.

A small grid (docs/guides/judge.md: pick the method and threshold): every method × shingle unit ×
shingle size × the method's parameter values in :data:`PARAM_GRID` (mod-m's m, bottom-n's n,
MinHash's LSH bands through the threshold they are tuned for, SimHash's key distance, the
I-Match IDF band). Every setting is judged as :mod:`neardup.judge.evaluate` judges it — by
default exactly as ``neardup dedup`` runs it (with cluster truth: dedup's clusters), so the
config file written makes ``dedup --config`` reproduce the figure reported; ``mode="estimates"``
searches the methods' own estimates instead (and writes ``verify: false`` where it used them).
Each combination is one :func:`~neardup.dedup.score_candidates` run (the grid gives MinHash's
``threshold`` parameter, so its bands do not follow t); every threshold is then one
:func:`~neardup.dedup.decide`.

Objectives: ``f1`` (highest F1), ``precision@recall=R`` (highest precision among settings with
recall ≥ R), ``recall@precision=P`` (highest recall with precision ≥ P). Ties go to the higher
F1, then the higher threshold, then the faster method. When no setting meets the bound the one
closest to it wins, and the result says so.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace
from typing import Any, Literal

from neardup.dedup import DedupConfig
from neardup.errors import ConfigError
from neardup.judge.evaluate import MODE_TEXT, Evaluation, Mode, PairScores, Row, method_config
from neardup.text.text_config import TextConfig

PARAM_GRID: dict[str, tuple[dict[str, Any], ...]] = {
    "full": ({},),
    "modm": ({"m": 10}, {"m": 25}),
    "bottomn": ({"n": 80}, {"n": 160}, {"n": 320}),
    "minhash": ({"threshold": 0.5}, {"threshold": 0.7}, {"threshold": 0.9}),
    "megashingle": ({},),
    "simhash": ({"max_distance": 3}, {"max_distance": 6, "blocks": 8}),
    "imatch": ({}, {"low": 0.1, "high": 0.3}),
}
DEFAULT_SIZES = (2, 3, 4, 5)
DEFAULT_UNITS = ("auto", "char")
DEFAULT_THRESHOLDS = "0.3:1.0:0.05"
Kind = Literal["f1", "precision@recall", "recall@precision"]


@dataclass(frozen=True, slots=True)
class Objective:
    """What calibration maximizes: F1, or one measure with a floor on the other."""

    kind: Kind = "f1"
    bound: float = 0.0

    @classmethod
    def parse(cls, text: str) -> Objective:
        """``f1`` | ``precision@recall=R`` | ``recall@precision=P`` (R, P in [0, 1])."""
        text = text.strip().lower()
        if text == "f1":
            return cls()
        kind, sep, value = text.partition("=")
        try:
            bound = float(value)
        except ValueError:
            bound = -1.0
        if not sep or kind not in ("precision@recall", "recall@precision") or not 0 <= bound <= 1:
            raise ConfigError(
                f"objective={text!r} is not one of f1, precision@recall=R, recall@precision=P "
                "(R and P in [0, 1])"
            )
        return cls(kind, bound)  # type: ignore[arg-type]

    def __str__(self) -> str:
        return self.kind if self.kind == "f1" else f"{self.kind}={self.bound:g}"

    def feasible(self, s: PairScores) -> bool:
        if self.kind == "precision@recall":
            return s.recall >= self.bound
        if self.kind == "recall@precision":
            return s.precision >= self.bound
        return True

    def value(self, s: PairScores) -> float:
        """The measure maximized."""
        return {"f1": s.f1, "precision@recall": s.precision, "recall@precision": s.recall}[
            self.kind
        ]

    def closeness(self, s: PairScores) -> float:
        """The bounded measure (what an infeasible setting is ranked by)."""
        return s.recall if self.kind == "precision@recall" else s.precision


@dataclass(frozen=True, slots=True)
class Choice:
    """One setting of the grid at one threshold."""

    config: DedupConfig  # threshold included
    row: Row
    seconds: float

    def describe(self) -> str:
        params = ", ".join(f"{k}={v}" for k, v in self.config.params)
        shingle = self.config.text.shingle
        extra = f" ({params})" if params else ""
        unit = f"{shingle.unit} {shingle.size}-shingles"
        return f"{self.config.method}{extra}, {unit}, t={self.row.threshold:g}"


@dataclass(frozen=True, slots=True)
class Calibration:
    """The winner, the runner-up (best setting of another method), and why."""

    objective: Objective
    winner: Choice
    runner_up: Choice | None
    met: bool  # a setting met the objective's bound
    tried: int  # settings × thresholds
    mode: Mode = "dedup"

    def reason(self) -> str:
        o, w = self.objective, self.winner.row.scores
        if o.kind == "f1":
            why = f"highest F1 ({w.f1:.4f})"
        else:
            measure, bounded = o.kind.split("@")
            floor = f"{bounded} ≥ {o.bound:g}"
            why = f"highest {measure} ({o.value(w):.4f}) among settings with {floor}"
            if not self.met:
                why = f"no setting reaches {floor}; the closest ({o.closeness(w):.4f})"
        if self.runner_up is not None:
            r = self.runner_up.row.scores
            why += f" vs {o.value(r):.4f} for the runner-up, {self.runner_up.describe()}"
        return f"{why}; {self.tried} settings × thresholds tried"

    def notes(self) -> dict[str, Any]:
        """What the config file records about the choice."""
        return {
            "objective": str(self.objective),
            "mode": self.mode,
            "scores_are": MODE_TEXT[self.mode],
            "met": self.met,
            "reason": self.reason(),
            "scores": self.winner.row.as_dict(),
            "runner_up": None
            if self.runner_up is None
            else {
                "setting": self.runner_up.describe(),
                "scores": self.runner_up.row.as_dict(),
            },
        }


def grid_configs(
    text: TextConfig,
    methods: Sequence[str],
    units: Sequence[str],
    sizes: Sequence[int],
    measure: str,
    thresholds: Sequence[float],
    mode: Mode = "dedup",
) -> list[DedupConfig]:
    """Every combination of the grid as the settings :mod:`neardup.judge.evaluate` judges."""
    configs = []
    for unit in units:
        for size in sizes:
            text_config = TextConfig(text.canon, replace(text.shingle, unit=unit, size=size))
            for name in methods:
                if name not in PARAM_GRID:
                    raise ConfigError(f"method={name!r} is not one of {', '.join(PARAM_GRID)}")
                for params in PARAM_GRID[name]:
                    configs.append(
                        method_config(name, text_config, measure, thresholds, params, mode=mode)
                    )
    return configs


def choices(ev: Evaluation) -> Iterable[Choice]:
    """Every setting at every threshold."""
    for me in ev.methods:
        for row in me.rows:
            yield Choice(replace(me.config, threshold=row.threshold), row, me.seconds)


def choose(ev: Evaluation, objective: Objective) -> Calibration:
    """The best setting for ``objective`` and the best setting of any other method."""
    every = list(choices(ev))
    if not every:
        raise ConfigError("nothing to calibrate: no method was evaluated")
    feasible = [c for c in every if objective.feasible(c.row.scores)]
    rank = _rank(objective) if feasible else _closest(objective)
    pool = feasible or every
    winner = max(pool, key=rank)
    others = [c for c in pool if c.config.method != winner.config.method]
    others = others or [c for c in pool if _setting(c) != _setting(winner)]
    runner_up = max(others, key=rank) if others else None
    return Calibration(objective, winner, runner_up, bool(feasible), len(every), ev.mode)


def _rank(objective: Objective) -> Callable[[Choice], tuple[float, ...]]:
    def key(c: Choice) -> tuple[float, ...]:
        s = c.row.scores
        return (objective.value(s), s.f1, c.row.threshold, -c.seconds)

    return key


def _closest(objective: Objective) -> Callable[[Choice], tuple[float, ...]]:
    def key(c: Choice) -> tuple[float, ...]:
        s = c.row.scores
        return (objective.closeness(s), objective.value(s), c.row.threshold, -c.seconds)

    return key


def _setting(c: Choice) -> tuple[Any, ...]:
    return (c.config.method, c.config.params, c.config.text)


__all__ = [
    "DEFAULT_SIZES",
    "DEFAULT_THRESHOLDS",
    "DEFAULT_UNITS",
    "PARAM_GRID",
    "Calibration",
    "Choice",
    "Objective",
    "choose",
    "grid_configs",
]
