import numpy as np

from neardup._kernels.script import script_counts
from neardup.text.chars import codepoints
from neardup.text.script import lang_from_counts, langs_from_counts


def counts(*texts):
    cps = codepoints("\x00".join(texts))
    lengths = np.array([len(t) for t in texts])
    starts = np.concatenate(([0], np.cumsum(lengths[:-1] + 1)))
    return script_counts(cps, starts, starts + lengths)


def test_letters_are_counted_per_script_and_nothing_else():
    got = counts("Hello, World! 123 _@[`{", "Привет, мир", "中文 和 English", "Ünïcödé ẞ")
    assert got.tolist() == [[0, 0, 10], [0, 9, 0], [3, 0, 7], [0, 0, 8]]


def test_vectorized_rule_equals_the_scalar_rule():
    c = np.array([[0, 0, 0], [5, 0, 20], [1, 0, 20], [0, 7, 3], [0, 3, 3]])
    assert langs_from_counts(c) == [lang_from_counts(*row) for row in c.tolist()]
    assert langs_from_counts(c) == ["en", "zh", "en", "ru", "en"]
