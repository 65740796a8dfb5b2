import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from neardup.text import script
from neardup.text.canon import split_texts as _split
from neardup.text.script import lang_from_counts, langs_from_counts
from neardup.text.script_kernels import char_counts, script_counts


def counts(*texts):
    return script_counts(*_split(texts))


def test_letters_are_counted_per_script_and_nothing_else():
    got = counts("Hello, World! 123 _@[`{", "Привет, мир", "中文 和 English", "Ünïcödé ẞ")
    assert got.tolist() == [[0, 0, 10], [0, 9, 0], [3, 0, 7], [0, 0, 8]]


def test_vectorized_rule_equals_the_scalar_rule():
    c = np.array([[0, 0, 0], [5, 0, 20], [1, 0, 20], [0, 7, 3], [0, 3, 3]])
    assert langs_from_counts(c) == [lang_from_counts(*row) for row in c.tolist()]
    assert langs_from_counts(c) == ["en", "zh", "en", "ru", "en"]


BOUNDARIES = [
    0x40,
    0x41,
    0x5A,
    0x5B,
    0x60,
    0x61,
    0x7A,
    0x7B,
    0xBF,
    0xC0,
    0xD7,
    0xF7,
    0x24F,
    0x250,
    0x3FF,
    0x400,
    0x52F,
    0x530,
    0x1C80,
    0x1C8F,
    0x1C90,
    0x1DFF,
    0x1E00,
    0x1EFF,
    0x1F00,
    0x2DDF,
    0x2DE0,
    0x2DFF,
    0x33FF,
    0x3400,
    0x4DBF,
    0x4DC0,
    0x4DFF,
    0x4E00,
    0x9FFF,
    0xA000,
    0xA63F,
    0xA640,
    0xA69F,
    0xA6A0,
    0xF8FF,
    0xF900,
    0xFAFF,
    0xFB00,
    0x1FFFF,
    0x20000,
    0x2A6DF,
    0x2A6E0,
    0x2A700,
    0x2EE5F,
    0x2EE60,
    0x2F800,
    0x2FA1F,
    0x2FA20,
    0x30000,
    0x323AF,
    0x323B0,
]


@settings(max_examples=200, deadline=None)
@given(st.lists(st.sampled_from(BOUNDARIES) | st.integers(0, 0x323FF), max_size=40))
def test_compiled_counts_equal_the_regex_definition(codes):
    text = "".join(chr(c) for c in codes if not 0xD800 <= c <= 0xDFFF and c != 0)
    _, han_runs, cyrillic_runs, latin_runs = script._patterns()
    han = script._letters(han_runs, text)
    cyrillic = script._letters(cyrillic_runs, text)
    latin = script._letters(latin_runs, text)
    assert counts(text).tolist() == [[han, cyrillic, latin]]


@settings(deadline=None)
@given(st.lists(st.text(max_size=200), max_size=6))  # long enough for the vector loop
def test_char_counts_are_the_lengths_of_the_decoded_texts(texts):
    encoded = [t.encode("utf-8", "surrogatepass") for t in texts]
    lengths = np.array([len(e) for e in encoded], dtype=np.int64)
    ends = np.cumsum(lengths)
    buf = np.frombuffer(b"".join(encoded), dtype=np.uint8)
    assert char_counts(buf, ends - lengths, ends).tolist() == [len(t) for t in texts]


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet=st.sampled_from("@AMZ[`amz{ 09.\n~\x7féжД中"), max_size=80))
def test_ascii_runs_counted_eight_bytes_at_a_time_equal_the_regex_definition(text):
    """Runs of 8 ASCII bytes have their letters counted at once: every ASCII character
    (``@[`{`` beside the letters), at any place in or across such runs, counts as alone."""
    _, _, cyrillic_runs, latin_runs = script._patterns()
    latin = script._letters(latin_runs, text)
    cyrillic = script._letters(cyrillic_runs, text)
    assert counts(text, "x" + text).tolist() == [
        [text.count("中"), cyrillic, latin],
        [text.count("中"), cyrillic, latin + 1],
    ]
