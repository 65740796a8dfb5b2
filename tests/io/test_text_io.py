import pytest

from neardup.errors import InputError
from neardup.io.text_input import decode_text, read_text


def test_reads_utf8_and_strips_bom(tmp_path):
    f = tmp_path / "t.txt"
    f.write_bytes("\ufeffПривет".encode())
    assert read_text(f) == "Привет"


def test_invalid_utf8_names_byte_and_line():
    with pytest.raises(InputError, match=r"x\.txt: invalid UTF-8 at byte 6 \(line 3\)"):
        decode_text(b"ok\nok\n\xff", "x.txt")


def test_binary_and_missing_and_directory(tmp_path):
    with pytest.raises(InputError, match="binary"):
        decode_text(b"a\x00b", "b.bin")
    with pytest.raises(InputError, match="no such file"):
        read_text(tmp_path / "missing.txt")
    with pytest.raises(InputError, match="directory"):
        read_text(tmp_path)
