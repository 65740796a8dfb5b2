"""The pure parts of benchmarks/bench_real.py: as-written measures, the split, the labels, the
parsers of each bench's source, and the judging of a run's outputs (tiny fixtures only)."""

from __future__ import annotations

import itertools
import json
import random
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))

from bench_real import judge
from realcorpus import copyright, mail, manpages, sites
from realcorpus.labels import (
    copyright_rule,
    lacks_identity,
    mail_rule,
    manpages_rule,
    sites_rule,
)
from realcorpus.written import (
    containment,
    lacking,
    mentions,
    near_identical_pairs,
    resemblance,
    shingles,
    split_of,
    tokens,
)

# ------------------------------------------------------------------------------------------
# as written


def test_tokens_fold_case_and_width_and_split_han_by_character():
    assert tokens("Ｈｅｌｌｏ, World!") == ["hello", "world"]
    assert tokens("重复检测 abc") == ["重", "复", "检", "测", "abc"]


def test_shingles_are_a_set_of_three_word_runs_and_short_texts_one_shingle():
    assert shingles("a rose is a rose is a rose") == {"a rose is", "rose is a", "is a rose"}
    assert shingles("two words") == {"two words"}
    assert shingles("  ,. ") == frozenset()


def test_containment_and_resemblance():
    a, b = shingles("one two three four five"), shingles("one two three four six")
    assert containment(a, b) == pytest.approx(2 / 3)
    assert resemblance(a, b) == pytest.approx(2 / 4)
    assert containment(frozenset(), b) == 0.0


def brute_pairs(sets, bar):
    return sorted(
        (i, j, resemblance(sets[i], sets[j]))
        for i, j in itertools.combinations(range(len(sets)), 2)
        if sets[i] and sets[j] and resemblance(sets[i], sets[j]) >= bar
    )


@pytest.mark.parametrize("seed", range(6))
def test_near_identical_pairs_match_brute_force(seed):
    rng = random.Random(seed)
    vocab = [f"w{k}" for k in range(12)]
    base = [rng.choice(vocab) for _ in range(40)]
    texts = []
    for _ in range(60):  # variants of one text: many pairs near the bar
        words = list(base)
        for _ in range(rng.randrange(0, 4)):
            words[rng.randrange(len(words))] = rng.choice(vocab)
        texts.append(" ".join(words[: rng.randrange(30, 41)]))
    texts.append("")
    sets = [shingles(t) for t in texts]
    for bar in (0.8, 0.9):
        expected = brute_pairs(sets, bar)
        assert expected, "the fixture must hold pairs at the bar"
        assert near_identical_pairs(sets, bar) == expected


def test_split_is_stable_and_about_half():
    keys = [f"package-{k}" for k in range(2000)]
    first = [split_of(k) for k in keys]
    assert first == [split_of(k) for k in keys]
    assert set(first) == {"tune", "heldout"}
    assert 900 <= first.count("tune") <= 1100


def test_mentions_is_case_insensitive_whole_words_and_squashes_space():
    assert mentions("Copyright 2012 STEPHEN   Dolan", "Stephen Dolan")
    assert not mentions("the abc tool", "bc")
    assert mentions("GNU bc, the calculator", "bc")
    assert not mentions("anything", "")


def test_lacking_lists_the_words_the_keeper_does_not_hold():
    keeper = shingles("alpha beta gamma delta")
    assert lacking("alpha beta gamma delta epsilon zeta", keeper) == "gamma delta epsilon zeta"
    assert lacking("alpha beta gamma delta", keeper) == ""


# ------------------------------------------------------------------------------------------
# sources


COPYRIGHT = """Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/
Upstream-Name: jq
Source: <https://github.com/stedolan/jq>

Files: *
Copyright: 2012 Stephen Dolan <mu@netsoc.tcd.ie>
           2015-2019, Nico Williams
License: MIT
 Permission is hereby granted.

Files: debian/*
Copyright: Copyright (C) 2013 Simon Elsbrock <simon@iodev.org>
License: MIT
"""


def test_copyright_parse_names_upstream_and_holders_without_years_or_mail():
    upstream, holders = copyright.parse(COPYRIGHT)
    assert upstream == "jq"
    assert holders == ["Stephen Dolan", "Nico Williams", "Simon Elsbrock"]


def test_copyright_parse_free_form_lines():
    text = "This is bc.\n\nCopyright (C) 1991-2006 Free Software Foundation, Inc.\nGPL.\n"
    assert copyright.parse(text) == (None, ["Free Software Foundation"])


def test_copyright_holders_named_together_count_each():
    text = "Copyright (C) 2001-2006 Bart Massey, Jamey Sharp, and Josh Triplett.\n"
    assert copyright.parse(text) == (None, ["Bart Massey", "Jamey Sharp", "Josh Triplett"])


def test_copyright_build_reads_each_doc_directory(tmp_path):
    for pkg, text in (("jq", COPYRIGHT), ("bc", "Copyright 1991 Phil Nelson\n")):
        (tmp_path / pkg).mkdir()
        (tmp_path / pkg / "copyright").write_text(text)
    records = copyright.build(tmp_path)
    assert [r["id"] for r in records] == ["bc", "jq"]
    jq = records[1]
    assert jq["software"][-1] == "jq"
    assert "Nico Williams" in jq["holders"]


def test_mail_own_words_drop_quotes_signature_footer_and_forwarded_block():
    body = "Alice wrote:\n> the original question\nMy own answer here.\n-- \nBob, Signature Ltd\n"
    assert mail.own_words(body) == "Alice wrote:\nMy own answer here."
    fwd = "FYI\n\nBegin forwarded message:\n\nFrom: someone\nthe forwarded text\n"
    assert mail.own_words(fwd) == "FYI"
    listed = "Text.\n_______________________________________________\nList mailing list\n"
    assert mail.own_words(listed) == "Text."


def test_mail_thread_key_and_kind():
    assert mail.thread_key("Re: [SAtalk] RE: Fwd: Spam host?") == "spam host?"
    assert mail.kind("Fwd: x", "body") == "forward"
    assert mail.kind("Re: x", "body") == "reply"
    assert mail.kind("hello", "> quoted\nmine") == "reply"
    assert mail.kind("ILUG digest, Vol 1", "") == "digest"
    assert mail.kind("hello", "plain words") == "plain"


def test_mail_parse_reads_headers_and_plain_body():
    raw = (
        "From: Bob Smith <bob@example.org>\nSubject: Re: lunch\nMessage-ID: <1@x>\n"
        "Content-Type: text/plain\n\n> when?\nNoon works.\n"
    )
    record = mail.parse(raw)
    assert record["author"] == "Bob Smith"
    assert record["from"] == "bob@example.org"
    assert record["own"] == "Noon works."
    assert record["kind"] == "reply"
    assert record["names"] == ["Bob Smith", "bob@example.org"]
    html = "From: x@y.org\nContent-Type: text/plain\n\n<html><body><p>Win <b>now</b></p></body>"
    assert mail.parse(html)["text"].split() == ["Win", "now"]


def test_manpage_helpers():
    assert manpages.page_name("dpkg-buildflags.1.gz") == "dpkg-buildflags"
    assert manpages.is_redirect('.\\" comment\n.so man1/other.1\n')
    assert not manpages.is_redirect(".TH X 1\n.SH NAME\nx \\- does\n.so inc\n.PP\ntext\n")


def test_page_text_takes_the_main_region_and_its_heading():
    html = (
        "<html><head><title>Ch 1 - The Book</title><style>p{}</style></head><body>"
        "<nav><h1>The Book</h1><a>Chapter 1</a><a>Chapter 2</a></nav>"
        "<main><h1>Getting Started</h1><p>Install it.<script>x()</script></p></main>"
        "</body></html>"
    )
    assert sites.page_text(html) == ("Getting Started\nInstall it.", "Getting Started")
    text, title = sites.page_text("<title>T</title><body><h2>Head</h2><p>Body</p></body>")
    assert (text, title) == ("Head\nBody", "T")


# ------------------------------------------------------------------------------------------
# labels


def cr(pkg, source, text, names):
    return {"id": pkg, "source": source, "text": text, "names": names}


def test_copyright_rule():
    mit = "Permission is hereby granted, free of charge, to any person obtaining a copy. " * 3
    head = "Upstream-Name: jq\nCopyright: Stephen Dolan\n"
    jq = cr("jq", "jq", head + mit, ["jq", "Stephen Dolan"])
    icons = cr("adwaita", "adwaita", "Copyright: GNOME Project\n" + mit, ["adwaita"])
    libjq = cr("libjq1", "jq", "other text entirely", ["libjq1"])
    a, b = shingles(jq["text"]), shingles(icons["text"])
    assert copyright_rule(jq, icons, a, b)[0] == "wrong"
    assert copyright_rule(jq, libjq, a, shingles(libjq["text"]))[0] == "same"
    namer = cr("x", "x", "bundles jq " + mit, ["x"])
    assert copyright_rule(jq, namer, a, shingles(namer["text"])) == (
        "suspicious",
        "other source package, not near-identical",
    )
    assert lacks_identity(jq, icons)
    assert not lacks_identity(jq, namer)


def man(lang, name, text):
    return {
        "id": f"{lang}/1/{name}",
        "lang": lang,
        "original": lang == "en",
        "section": "1",
        "name": name,
        "text": text,
        "names": [name],
    }


def test_manpages_rule():
    en, de = man("en", "ls", "ls - list directory"), man("de", "ls", "ls - Verzeichnis")
    de2 = man("de", "ls", "ls - Verzeichnis anzeigen")
    other = man("en", "dir", "dir - list directory contents")
    e = frozenset()
    assert manpages_rule(en, de, e, e) == ("wrong", "English original into a translation")
    assert manpages_rule(de, en, e, e) == ("ok", "partial translation into its original")
    assert manpages_rule(de, man("fr", "ls", "ls - liste"), e, e)[0] == "wrong"
    assert manpages_rule(de, de2, e, e)[0] == "same"
    assert manpages_rule(en, other, e, e) == ("wrong", "into another page that never names it")


def test_mail_rule_judges_the_own_words_not_the_quotes():
    base = {"message_id": "", "kind": "reply", "group": "t", "names": []}
    reply = base | {
        "id": "r",
        "text": "> a long quoted question about the build\nYes it fails on my laptop too",
        "own": "Yes it fails on my laptop too",
    }
    quoting = base | {
        "id": "q",
        "message_id": "<q>",
        "own": "",
        "text": "a long quoted question about the build",
    }
    holder = base | {
        "id": "h",
        "message_id": "<h>",
        "own": "",
        "text": "I said: yes it fails on my laptop too, sadly",
    }
    a = shingles(reply["text"])
    assert mail_rule(reply, quoting, a, shingles(quoting["text"]))[0] == "wrong"
    assert mail_rule(reply, holder, a, shingles(holder["text"]))[0] == "ok"
    assert mail_rule(reply, reply | {"id": "r2"}, a, a)[0] == "same"


def test_sites_rule():
    def page(pid, title, text, hub=False):
        site, rel = pid.split(":")
        return {
            "id": f"{site}/{rel}",
            "site": site,
            "page": rel,
            "title": title,
            "text": text,
            "hub": hub,
            "names": [title],
        }

    ch = page("book:ch1.html", "Getting Started", "Getting Started\nInstall it.")
    whole = page("book:print.html", "The Book", "Getting Started\nInstall it.\nMore.", hub=True)
    other = page("book:ch2.html", "Ownership", "Ownership\nInstall it.")
    e = frozenset()
    assert sites_rule(ch, whole, e, e)[0] == "wrong"
    assert sites_rule(ch, other, e, e) == ("wrong", "keeper lacks the page's title")
    twin = page("book2:ch1.html", "Getting Started", "changed") | {"page": "ch1.html"}
    assert sites_rule(ch, twin, e, e)[0] == "same"


# ------------------------------------------------------------------------------------------
# judging a run's outputs


def test_judge_counts_wrong_lossy_and_missed_pairs(tmp_path):
    names = ["Stephen Dolan"]
    text = "Copyright Stephen Dolan. " + "the same licence words follow here " * 5
    docs = {
        "jq": cr("jq", "jq", text, names),
        "jq-copy": cr("jq-copy", "other", text + " extra", ["jq-copy"]),
        "icons": cr(
            "icons", "icons", "GNOME. " + "the same licence words follow here " * 5, ["icons"]
        ),
        "lone": cr("lone", "lone", "Copyright Stephen Dolan. nothing else", names),
        "twin": cr("twin", "twin", "Copyright Stephen Dolan. nothing else", ["twin"]),
    }
    out = tmp_path / "out"
    out.mkdir()
    removed = [{"id": "jq", "_duplicate_of": "icons"}, {"id": "lone", "_duplicate_of": "jq"}]
    (out / "removed.jsonl").write_text("".join(json.dumps(r) + "\n" for r in removed))
    clusters = [{"cluster": 0, "ids": ["icons", "jq"], "keep": "icons"}]
    (out / "clusters.jsonl").write_text("".join(json.dumps(c) + "\n" for c in clusters))
    pairs = [["jq", "jq-copy", 0.95], ["lone", "twin", 1.0], ["icons", "jq", 0.9]]
    figures = judge("copyright", docs, out, pairs)
    assert figures["removed"] == 2
    assert figures["wrong"] == 1  # jq into icons: never names Stephen Dolan
    assert figures["lacks_identity"] == 1
    assert figures["lossy_as_written"] == 1  # lone: its words are not in jq
    assert figures["near_identical_missed"] == 2  # jq/jq-copy and lone/twin: no shared cluster
    assert figures["reasons"] == {
        "wrong: keeper names neither its software nor its holders": 1,
        "suspicious: other source package, not near-identical": 1,
    }
