"""Populations: float32 words with a class label each, reproducible from a seed."""

from __future__ import annotations

import enum
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

__all__ = ["Population", "WordClass"]


class WordClass(enum.Enum):
    """Why a word is in a population; results are counted by class."""

    RANDOM = "random"
    SATURATION = "saturation"
    TIE = "tie"
    LADDER = "ladder"
    ZERO = "zero"
    SPECIAL = "special"
    SPLIT = "split"  # where a rule and a neighbour of it give different codes


@dataclass(frozen=True, eq=False)
class Population:
    """Read-only float32 words and their class labels.

    Args:
        name: what built it.
        words: float32 array of inputs.
        classes: one :class:`WordClass` per word.
    """

    name: str
    words: npt.NDArray[np.float32]
    classes: tuple[WordClass, ...]

    def __post_init__(self) -> None:
        if self.words.dtype != np.float32 or self.words.ndim != 1:
            raise TypeError("population words must be a 1-D float32 array")
        if len(self.classes) != self.words.size:
            raise ValueError(f"{self.words.size} words but {len(self.classes)} labels")
        self.words.setflags(write=False)

    def __len__(self) -> int:
        return int(self.words.size)

    def mask(self, *word_classes: WordClass) -> npt.NDArray[np.bool_]:
        """Boolean mask of the words in any of ``word_classes``."""
        wanted = set(word_classes)
        return np.array([c in wanted for c in self.classes], np.bool_)

    def subset(self, *word_classes: WordClass) -> Population:
        """The words of the given classes, in population order."""
        keep = self.mask(*word_classes)
        labels = tuple(c for c, k in zip(self.classes, keep, strict=False) if k)
        return Population(
            f"{self.name}[{'+'.join(c.value for c in word_classes)}]",
            self.words[keep].copy(),
            labels,
        )
