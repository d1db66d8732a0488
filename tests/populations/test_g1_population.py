from __future__ import annotations

from collections import Counter

import numpy as np

from fp8lab.populations import WordClass, g1_population, g1_structured_values


def test_sizes_and_classes_match_the_seed() -> None:
    pop = g1_population(0.13)
    counts = Counter(c.value for c in pop.classes)
    assert counts == {
        "random": 4096,
        "saturation": 11,
        "tie": 182,
        "ladder": 27,
        "zero": 3,
        "special": 4,
    }
    assert len(pop) == 4323
    assert len(g1_population(0.13, special=False)) == 4319  # the seed's population exactly
    assert len(pop.subset(WordClass.TIE, WordClass.LADDER)) == 209


def test_structured_words_word_for_word() -> None:
    values = g1_structured_values()
    sat = [v for c, v in values if c is WordClass.SATURATION]
    assert sat == [600.0, -600.0, 448.5, -448.5, 1e4, -1e4, 1e30, -1e30, 448.0, -448.0, 447.0]
    ties = [v for c, v in values if c is WordClass.TIE]
    assert ties[:4] == [1.0625 / 16, -1.0625 / 16, 1.1875 / 16, -1.1875 / 16]
    assert ties[-2:] == [464.0, -464.0]  # the top tie, (448 + 480) / 2
    ladder = [v for c, v in values if c is WordClass.LADDER]
    assert ladder[:6] == [0.0, 1 / 1024, -1 / 1024, 1 / 512, 3 / 1024, -3 / 1024]
    assert ladder[-3:] == [8 / 512, 17 / 1024, -17 / 1024]
    zero = [v for c, v in values if c is WordClass.ZERO]
    assert zero[0] == 0.0 and np.signbit(zero[1]) and zero[2] == 1 / 4096


def test_structured_words_are_float32_products_and_random_words_are_seeded() -> None:
    s = 7.25
    pop = g1_population(s)
    structured = np.array([v for _, v in g1_structured_values()], np.float32)
    assert np.array_equal(pop.words[4096:4319], structured * np.float32(s))
    random_words = pop.words[:4096]
    assert random_words.min() >= -2 and random_words.max() <= 2
    assert np.array_equal(random_words, g1_population(0.5).words[:4096])
    assert not np.array_equal(random_words, g1_population(0.5, seed=1).words[:4096])
    assert not pop.words.flags.writeable
