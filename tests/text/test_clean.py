"""HTML and MediaWiki markup removal (neardup.text.clean)."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from neardup.text.clean import (
    looks_like_html,
    looks_like_wiki,
    strip_html,
    strip_quoted,
    strip_wiki,
)

NEWS_EN = """<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>Harbour Gazette</title>
<script>window.trackerConfig = {campaign: "springpromo"};</script>
<style>.lead { font-weight: bold }</style></head>
<body class="has-sidebar page-news">
<header class="site-header"><a href="/">Harbour Gazette</a> <span>Subscribe today</span></header>
<nav id="main-nav"><ul><li><a href="/politics">Politics</a></li>
<li><a href="/weather">Weather</a></li>
<li><a href="/crosswords">Crosswords</a></li></ul></nav>
<div class="sidebar-left"><h3>Trending</h3><p>Lighthouse auction breaks record</p></div>
<div id="cookie-consent">This website stores cookies on your device.</div>
<article>
<h1>Ferry service resumes after storm</h1>
<p class="lead">The morning ferry left the harbour on Tuesday for the first time in a week.</p>
<p>Captain Ellen Moor said the crossing was calm<br>and the passengers applauded.</p>
<div class="social-share"><button>Tweet</button><a>Facebook</a></div>
</article>
<aside><p>Advertisement: discount kayaks</p></aside>
<footer><p>Copyright Harbour Gazette. All rights reserved.</p></footer>
<noscript>Please enable javascript</noscript>
</body></html>"""

NEWS_RU = """<html><head><script>var баннерПоказан = true;</script></head>
<body><div role="navigation"><a>Главная</a> <a>Политика</a> <a>Спорт</a></div>
<ul class="breadcrumbs"><li>Новости</li><li>Регион</li></ul>
<main><h1>Мост через реку открыли после ремонта</h1>
<p>В субботу по мосту снова пошли автобусы&nbsp;&mdash; ремонт занял
&laquo;всего&raquo; два месяца.</p>
<p>&#1055;&#1086;&#1076;&#1088;&#1103;&#1076;&#1095;&#1080;&#1082; обещал
закончить разметку к осени.</p>
<section class="comments"><p>Комментарий читателя: наконец-то</p></section>
</main>
<div class="footer">Все права защищены</div></body></html>"""

NEWS_ZH = """<html><body>
<div class="menu"><a>首页</a><a>财经</a><a>体育</a></div>
<div id="ad-banner">限时优惠广告</div>
<article><h1>城市图书馆延长开放时间</h1>
<p>从下个月开始，市图书馆每天晚上开放到十点。</p><p>馆长表示，这项措施是为了方便上班族。</p>
</article>
<script>console.log("统计代码")</script>
<footer>版权所有</footer></body></html>"""


def words(text: str) -> set[str]:
    return set(re.findall(r"\w+", text))


# ------------------------------------------------------------------ looks_like_html


@pytest.mark.parametrize(
    "text",
    [
        "<p>Hello</p>",
        "Some <b>bold</b> text",
        "line one<br/>line two",
        '<a href="/x">link</a>',
        "<!DOCTYPE html><html></html>",
        "text <!-- a comment -->",
        "Tom &amp; Jerry",
        "it&#39;s",
        "&#x43F;ривет",
        "ends with </div>",
    ],
)
def test_looks_like_html_detects_markup(text):
    assert looks_like_html(text)


@pytest.mark.parametrize(
    "text",
    [
        "A plain sentence about rivers and boats.",
        "Обычный текст без разметки.",
        "普通的中文句子。",
        "if x<y and a < b then",
        "Fish & chips",
        "",
    ],
)
def test_looks_like_html_rejects_plain_text(text):
    assert not looks_like_html(text)


# ------------------------------------------------------------------ strip_html: pages


def test_english_page_keeps_article_and_drops_furniture():
    out = strip_html(NEWS_EN)
    got = words(out)
    assert {"Ferry", "resumes", "harbour", "Captain", "Moor", "applauded"} <= got
    for gone in [
        "Politics",
        "Crosswords",
        "Lighthouse",
        "cookies",
        "Tweet",
        "Facebook",
        "kayaks",
        "Copyright",
        "trackerConfig",
        "springpromo",
        "javascript",
        "Subscribe",
        "font",
    ]:
        assert gone not in got, gone


def test_english_page_without_boilerplate_removal_keeps_menus_but_not_scripts():
    got = words(strip_html(NEWS_EN, boilerplate=False))
    assert {"Ferry", "Politics", "Crosswords", "Copyright", "kayaks"} <= got
    assert "trackerConfig" not in got
    assert "font" not in got
    assert "javascript" not in got


def test_russian_page_with_main_entities_and_role_navigation():
    out = strip_html(NEWS_RU)
    got = words(out)
    assert {"Мост", "автобусы", "ремонт", "Подрядчик", "разметку"} <= got
    assert "«всего»" in out
    assert "автобусы — ремонт" in out  # &nbsp; and &mdash; decoded, space collapsed
    for gone in ["Главная", "Политика", "Регион", "Комментарий", "защищены", "баннерПоказан"]:
        assert gone not in got, gone


def test_chinese_page():
    out = strip_html(NEWS_ZH)
    assert "城市图书馆延长开放时间" in out
    assert "从下个月开始" in out
    assert "馆长表示" in out
    for gone in ["首页", "财经", "限时优惠广告", "统计代码", "版权所有"]:
        assert gone not in out, gone


def test_blocks_do_not_glue_words():
    out = strip_html("<div><p>first paragraph end</p><p>Start of second</p>one<br>two</div>")
    got = words(out)
    assert {"end", "Start", "one", "two"} <= got
    assert "endStart" not in out
    assert "onetwo" not in out


@pytest.mark.parametrize(
    "html",
    [
        "<ul><li>alpha</li><li>beta</li></ul>",
        "<table><tr><td>alpha</td><td>beta</td></tr></table>",
        "<h1>alpha</h1><h2>beta</h2>",
        "<div>alpha</div><div>beta</div>",
        "<p>alpha<br>beta</p>",
    ],
)
def test_block_elements_separate_words(html):
    assert words(strip_html(html, boilerplate=False)) == {"alpha", "beta"}


def test_inline_elements_do_not_split_words():
    assert strip_html("<p>un<b>break</b>able <i>word</i></p>") == "unbreakable word"


def test_entities_are_decoded():
    out = strip_html(
        "<p>&laquo;Цитата&raquo; &mdash; &#1087;&#1088;&#1080;&#1074;&#1077;&#1090;"
        " &amp; it&#39;s</p>"
    )
    assert out == "«Цитата» — привет & it's"


def test_body_class_naming_sidebar_is_not_dropped():
    html = '<body class="has-sidebar"><div class="content">Real text of the page here.</div></body>'
    assert strip_html(html) == "Real text of the page here."


def test_wrapper_with_furniture_class_holding_the_article_is_kept():
    html = (
        '<div class="page-header-wrapper"><nav>Menu</nav>'
        "<article><p>Kept article text.</p></article></div>"
    )
    assert strip_html(html) == "Kept article text."


def test_small_wrapper_with_furniture_class_holding_the_article_is_kept():
    html = (
        '<div class="layout-with sidebar-layout"><article><p>Short kept story.</p></article></div>'
        f"<div>{'Unrelated loose words. ' * 30}</div>"
    )
    assert strip_html(html) == "Short kept story."


def test_article_header_holds_the_title():
    html = (
        "<header>Site logo</header><article><header><h1>Title words</h1></header>"
        "<p>Body words.</p><footer>Posted in news</footer></article>"
    )
    out = strip_html(html)
    assert "Title words" in out
    assert "Body words." in out
    assert "Site logo" not in out
    assert "Posted" not in out


def test_main_is_preferred_to_the_rest_of_the_page():
    html = "<div>Loose text outside</div><main><p>Main text.</p></main><div>Other loose</div>"
    assert strip_html(html) == "Main text."
    assert "Loose" in strip_html(html, boilerplate=False)


def test_several_articles_keep_the_substantial_ones():
    long = "word " * 60
    html = (
        f"<article><p>First {long}</p></article><article><p>Second {long}</p></article>"
        "<article><p>Teaser</p></article>"
    )
    out = strip_html(html)
    assert "First" in out
    assert "Second" in out
    assert "Teaser" not in out


def test_page_wide_form_is_not_furniture():
    # ASP.NET-style pages wrap the whole body in one <form>.
    html = (
        '<form id="aspnetForm"><div class="menu">Home About</div>'
        "<div><p>The committee approved the new budget for schools and roads.</p></div></form>"
    )
    out = strip_html(html)
    assert "committee approved" in out
    assert "About" not in out


def test_small_form_is_furniture():
    html = (
        "<p>The committee approved the new budget for schools and roads this week.</p>"
        "<form><label>Email</label><input></form>"
    )
    assert strip_html(html) == (
        "The committee approved the new budget for schools and roads this week."
    )


def test_page_of_only_furniture_falls_back_to_whole_text():
    assert strip_html("<nav>Home News Contacts</nav>") == "Home News Contacts"


@pytest.mark.parametrize(
    ("attr", "dropped"),
    [
        ('class="sidebar-left"', True),
        ('id="main-menu"', True),
        ('class="topnav"', True),
        ('class="navBar"', True),
        ('class="breadcrumb"', True),
        ('role="contentinfo"', True),
        ('class="ad"', True),
        ('class="advertisement"', True),
        ('class="has-sidebar"', False),
        ('class="unavailable"', False),
        ('class="headline"', False),
        ('id="content"', False),
    ],
)
def test_furniture_names(attr, dropped):
    html = f"<div {attr}>Furniture words</div><p>{'Body text. ' * 20}</p>"
    assert ("Furniture" not in strip_html(html)) is dropped


def test_escaped_html_from_feeds_is_stripped_too():
    assert strip_html("&lt;p&gt;Hello&lt;/p&gt;&lt;p&gt;world&lt;/p&gt;") == "Hello\nworld"


def test_text_without_tags_passes_through():
    assert strip_html("Just a sentence.") == "Just a sentence."
    assert strip_html("") == ""


html_pieces = st.sampled_from(
    [
        *("<p>", "</p>", "<div class='menu'>", "</div>", "<br>", "<nav>", "<script>"),
        *("&lt;p&gt;", "&amp;", "<", ">", "&", "word", " ", "\n", "<article>", "</article>"),
        *("<!--", "-->"),
    ]
)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.one_of(html_pieces, st.text(max_size=8)), max_size=40).map("".join))
def test_strip_html_never_raises_nor_leaves_tags(text):
    for boilerplate in (True, False):
        out = strip_html(text, boilerplate=boilerplate)
        assert isinstance(out, str)
        assert not re.search(r"</?p>", out)
        assert out == out.strip()


# ------------------------------------------------------------------ wiki

WIKI_RU = """== История ==
'''Москва''' — [[столица]] [[Россия|России]].<ref>Источник: {{cite web|url=http://x.ru|title=Справка}}</ref>
{{Карточка города|название=Москва|население=13}}
[[Файл:Kremlin.jpg|thumb|Кремль вечером]]
[[Категория:Города России]]
[[en:Moscow]]
"""

WIKI_EN = """{{Short description|River in Europe}}
== Course ==
The '''Danube''' flows through [[Vienna]]
and [[Budapest|the Hungarian capital]].<ref name="atlas">World Atlas, p. 12</ref>
[[File:Danube.jpg|thumb|The river at dawn]]
{| class="wikitable"
|-
! Country !! Length
|-
| Austria || 350 km
|}
=== Tributaries ===
* the Inn<br>the Drava
<!-- editor note: check figures --> [https://example.org official site] __NOTOC__
[[Category:Rivers of Europe]]
"""


def test_looks_like_wiki():
    assert looks_like_wiki(WIKI_RU)
    assert looks_like_wiki("see [[Vienna]]")
    assert looks_like_wiki("{{cite book}}")
    assert looks_like_wiki("'''bold'''")
    assert looks_like_wiki("intro\n== Heading ==\ntext")
    assert not looks_like_wiki("A plain sentence = fine, with 'quotes'.")
    assert not looks_like_wiki("Простое предложение.")


# MediaWiki's marks as one alternation: looks_like_wiki asks the same, one pattern at a time
WIKI_MARKS = re.compile(
    r"\[\[|\{\{|'''|''[^'\n]+''|<ref[\s>/]|^\{\||^=={0,4}[^=\n]+={2,6}\s*$|__[A-Z]{3,}__",
    re.MULTILINE,
)
MARK_PIECES = ["[", "[[", "{", "{{", "{|", "'", "''", "'''", "=", "==", "=T=", "<ref", "<ref "]
MARK_PIECES += ["__", "__TOC__", "\n", " ", "x", "Title", "\n= H ==", "\n=", "|", "A"]


@settings(max_examples=3000, deadline=None)
@given(st.lists(st.sampled_from(MARK_PIECES), max_size=12))
def test_looks_like_wiki_is_the_alternation(pieces):
    text = "".join(pieces)
    assert looks_like_wiki(text) == (WIKI_MARKS.search(text) is not None)


def test_strip_wiki_russian():
    out = strip_wiki(WIKI_RU)
    got = words(out)
    assert {"История", "Москва", "столица", "России"} <= got
    for gone in ["Источник", "cite", "Справка", "Карточка", "население", "Кремль", "Файл"]:
        assert gone not in got, gone
    for gone in ["Категория", "Города", "Moscow", "en"]:
        assert gone not in got, gone
    for mark in ["[[", "]]", "{{", "}}", "'''", "==", "<ref", "|"]:
        assert mark not in out, mark


def test_strip_wiki_english():
    out = strip_wiki(WIKI_EN)
    got = words(out)
    assert {"Course", "Danube", "Vienna", "Hungarian", "capital", "Tributaries"} <= got
    assert {"Austria", "350", "Country", "Length", "official", "site"} <= got
    assert {"Inn", "Drava"} <= got  # separated by <br>, not glued
    assert "Budapest" not in got  # the link's target; its text is kept
    for gone in ["Short", "Atlas", "dawn", "editor", "NOTOC", "Rivers", "wikitable"]:
        assert gone not in got, gone
    for mark in ["[[", "]]", "{{", "{|", "|}", "!!", "'''", "==", "<ref", "<br"]:
        assert mark not in out, mark


def test_strip_wiki_chinese():
    out = strip_wiki("'''长江'''是[[中国]]最长的[[河流|河]]。<ref>资料来源</ref>[[分类:河流]]")
    assert out == "长江是中国最长的河。"


def test_strip_wiki_nul_does_not_truncate():
    assert strip_wiki("[[first]] part\x00 and [[second|second part]]") == (
        "first part and second part"
    )


def test_strip_wiki_plain_text_unchanged():
    assert strip_wiki("Nothing to strip here.") == "Nothing to strip here."


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.one_of(
            st.sampled_from(["[[", "]]", "{{", "}}", "'''", "==", "|", "<ref>", "</ref>", "\n"]),
            st.text(max_size=6),
        ),
        max_size=30,
    ).map("".join)
)
def test_strip_wiki_never_raises_nor_loses_plain_words(text):
    out = strip_wiki(text)
    assert isinstance(out, str)
    if not looks_like_wiki(text) and "<" not in text and "&" not in text and "[" not in text:
        assert re.findall(r"\w+", out) == re.findall(r"\w+", text.replace("\x00", ""))


def test_quoted_lines_of_mail_replies_are_dropped():
    reply = "Thanks, that works.\n> the question\n>> an older quote\n  > indented\nBye\n>last"
    assert strip_quoted(reply) == "Thanks, that works.\nBye\n"
    assert strip_quoted("a > b\nno quote here") == "a > b\nno quote here"


@pytest.mark.parametrize(
    "attribution",
    [
        "On 1 Jan 2014 22:11, Karen Harris wrote:",
        "1 янв. 2014 22:11, Карен Харрис пишет:",
        "林怡君 於 2014年1月21日 07:28 寫道：",
    ],
)
def test_the_line_introducing_a_quote_goes_with_it(attribution):
    reply = f"Any update?\n\n{attribution}\n\n> the question\n> more\n\nBye\n"
    assert strip_quoted(reply) == "Any update?\n\n\nBye\n"
    # a colon line not followed by a quote is the reply's own text
    own = f"Steps:\nfirst\n{attribution}\nsecond\n> quoted"
    assert strip_quoted(own) == f"Steps:\nfirst\n{attribution}\nsecond\n"


def test_quotes_switch_keeps_quoted_lines_when_off():
    from neardup.text.canon import canonicalize
    from neardup.text.text_config import CanonConfig

    text = "my own words here\n> someone else wrote this"
    assert canonicalize(text, CanonConfig(stopwords=False)) == "my own words here"
    kept = canonicalize(text, CanonConfig(stopwords=False, quotes=False))
    assert kept == "my own words here someone else wrote this"


_WHITESPACE = " \n\t\r\x0b\x0c\x1c\x1d\x1e\x1f\x85\xa0\u2028\u2029\u3000"


@settings(max_examples=500, deadline=None)
@given(st.text(alphabet=st.sampled_from([*_WHITESPACE, "a", "é", "\u200b", "<"]), max_size=30))
def test_whitespace_collapses_as_the_two_patterns_did(text):
    from neardup.text.clean import _collapse_whitespace

    runs = re.sub(r"[^\S\n]+", " ", text)  # runs without a newline: a space
    assert _collapse_whitespace(text) == re.sub(r"\s*\n\s*", "\n", runs).strip()
