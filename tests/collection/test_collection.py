"""The persistent collection: add / query / remove over a store, and agreement with dedup."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
import pytest

from neardup.collection import CollectionMeta, DuplicateIdError, MemoryStore, SQLiteStore, Store
from neardup.collection.persistent import Collection
from neardup.dedup import DedupConfig, deduplicate
from neardup.errors import ConfigError, SignatureError
from neardup.fingerprints.shingles import FingerprintBatch, fingerprint_batch
from neardup.methods.idf import IdfModel
from neardup.text.text_config import ShingleConfig, TextConfig
from textgen import edit, near_copies, text


@pytest.fixture(params=["memory", "sqlite"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Store:
    return MemoryStore() if request.param == "memory" else SQLiteStore(tmp_path / "c.db")


def test_add_reports_near_copy_with_score(store: Store) -> None:
    coll = Collection.create(store, DedupConfig(method="full", threshold=0.5))
    original = text(1)
    [first] = coll.add([("a", original, {"src": "feed"})])
    assert first.id == "a"
    assert first.duplicates == []
    [second] = coll.add([("b", edit(original, 2, 3), None), ("c", text(3), None)])[:1]
    assert second.id == "b"
    assert [d.id for d in second.duplicates] == ["a"]
    assert 0.5 <= second.duplicates[0].score < 1.0
    assert coll.stats()["documents"] == 3
    assert coll.get("a").meta == {"src": "feed"}
    assert coll.get("zz") is None


def test_near_copy_within_one_batch(store: Store) -> None:
    coll = Collection.create(store, DedupConfig(method="minhash", threshold=0.5))
    body = text(4)
    results = coll.add([("a", body, None), ("b", edit(body, 5, 2), None)])
    assert results[0].duplicates == []
    assert [d.id for d in results[1].duplicates] == ["a"]


def test_query_stores_nothing_and_remove(store: Store) -> None:
    coll = Collection.create(store, DedupConfig(method="full", threshold=0.5))
    body = text(6)
    coll.add([("a", body, None)])
    [hit, miss] = coll.query([edit(body, 7, 2), text(8)])
    assert hit.id is None
    assert [d.id for d in hit.duplicates] == ["a"]
    assert miss.duplicates == []
    assert coll.stats()["documents"] == 1
    assert coll.remove(["a", "nope"]) == ["a"]
    assert coll.query([body])[0].duplicates == []
    assert coll.stats()["documents"] == 0


def test_duplicate_id_and_upsert(store: Store) -> None:
    coll = Collection.create(store, DedupConfig(method="full"))
    body = text(9)
    coll.add([("a", body, {"v": 1})])
    with pytest.raises(DuplicateIdError, match="'a'"):
        coll.add([("new", text(10), None), ("a", body, None)])
    assert coll.stats()["documents"] == 1
    [replaced] = coll.add([("a", body, {"v": 2})], upsert=True)
    assert replaced.duplicates == []  # not its own duplicate
    assert coll.get("a").meta == {"v": 2}
    assert coll.stats()["documents"] == 1


def test_recent_lists_the_last_added_newest_first(store: Store) -> None:
    coll = Collection.create(store, DedupConfig(method="minhash", template_df=2))
    coll.add([("a", text(11), None), ("b", text(12), None), ("c", text(13), None)])
    assert coll.recent() == ["c", "b", "a"]
    assert coll.recent(2) == ["c", "b"]
    coll.add([("a", text(14), None)], upsert=True)  # a replaced document is the newest
    coll.remove(["b"])
    assert coll.recent() == ["a", "c"]


def test_reopen_with_another_config_is_refused(tmp_path: Path) -> None:
    config = DedupConfig(method="minhash", threshold=0.7)
    coll = Collection.create(SQLiteStore(tmp_path / "c.db"), config)
    coll.add([("a", text(11), None)])
    coll.store.close()
    again = Collection.open(SQLiteStore(tmp_path / "c.db"), config)
    assert again.stats()["documents"] == 1
    assert Collection.open(SQLiteStore(tmp_path / "c.db")).config.threshold == 0.7
    for other in (
        dataclasses.replace(config, threshold=0.8),
        dataclasses.replace(config, method="full"),
        dataclasses.replace(config, measure="resemblance"),
    ):
        with pytest.raises(ConfigError, match="another config"):
            Collection.open(SQLiteStore(tmp_path / "c.db"), other)


def test_open_refuses_other_format_version_and_empty_store() -> None:
    with pytest.raises(ConfigError, match="no collection"):
        Collection.open(MemoryStore())
    store = MemoryStore()
    coll = Collection.create(store)
    meta = store.meta()
    assert meta is not None
    old = MemoryStore()
    old.create(CollectionMeta(meta.config, coll.config_id, meta.format_version + 1))
    with pytest.raises(SignatureError, match="format version"):
        Collection.open(old)


WORD_1 = TextConfig(shingle=ShingleConfig(unit="word", size=1))


def stored_model(coll: Collection) -> IdfModel:
    """The IDF model of exactly the documents stored now, fitted from scratch."""
    ids = [f"d{i}" for i in range(100)] + ["copy", "a", "b", "c"]
    docs = coll.store.get(ids)
    values = np.concatenate([d.prints for d in docs])
    offsets = np.cumsum([0] + [d.prints.size for d in docs])
    return IdfModel.fit([FingerprintBatch(values, offsets, np.ones(values.size, np.int64))])


def test_idf_model_kept_in_store_follows_adds_upserts_removes(store: Store) -> None:
    config = DedupConfig(method="simhash", params=(("weighting", "tfidf"),), text=WORD_1)
    coll = Collection.create(store, config)
    coll.add([("a", text(20), None), ("b", text(21), None), ("c", text(22), None)])
    coll.add([("b", text(23), None)], upsert=True)
    with pytest.raises(DuplicateIdError):
        coll.add([("d9", text(24), None), ("a", text(25), None)])  # rolled back, df too
    coll.remove(["c", "zz"])
    model = stored_model(coll)
    assert model.n_docs == 2
    freqs = store.doc_freqs(model.features)
    assert freqs.n_docs == 2
    assert freqs.df.tolist() == model.df.tolist()
    assert freqs.min_df == int(model.df.min())
    gone = np.setdiff1d(_prints(text(22)), model.features)  # c's own words left with it
    assert gone.size
    assert not store.doc_freqs(gone).df.any()


def _prints(body: str) -> np.ndarray:
    return fingerprint_batch([body], WORD_1)[0]


def test_imatch_collection_finds_copies_with_the_stored_model(store: Store) -> None:
    # every word seen is in the band: the signature hashes the whole word set, which the
    # growing model cannot move
    config = DedupConfig(
        method="imatch", params=(("low", 0.05), ("high", 1.0)), text=WORD_1, threshold=0.9
    )
    coll = Collection.create(store, config)
    corpus = [(f"d{i}", text(400 + i), None) for i in range(100)]
    coll.add(corpus[:50])
    coll.add(corpus[50:])
    original = corpus[7][1]
    [res] = coll.add([("copy", original.upper().replace(" ", " ,  "), None)])
    assert [(d.id, d.score) for d in res.duplicates] == [("d7", 1.0)]
    assert store.doc_freqs(np.empty(0, np.uint64)).n_docs == 101
    [hit] = coll.query([original])
    assert [d.id for d in hit.duplicates] == ["copy", "d7"]


def test_idf_collection_query_when_empty() -> None:
    coll = Collection.create(MemoryStore(), DedupConfig(method="imatch", text=WORD_1))
    assert coll.query(["anything at all"])[0].duplicates == []


@pytest.mark.parametrize("one_batch", [False, True])
def test_bucket_cap_pairs_with_the_oldest_like_dedup(store: Store, one_batch: bool) -> None:
    config = DedupConfig(method="full", threshold=0.5, max_bucket=3)
    corpus = [(f"c{i}", "one two three four five six", None) for i in range(6)]
    coll = Collection.create(store, config)
    # in one batch the cap counts documents earlier in the batch too
    batches = [corpus] if one_batch else [[doc] for doc in corpus]
    results = [res for batch in batches for res in coll.add(batch)]
    found = {res.id: [d.id for d in res.duplicates] for res in results}
    capped = {f"c{i}": ["c0"] for i in range(3, 6)}
    assert found == {"c0": [], "c1": ["c0"], "c2": ["c0", "c1"], **capped}
    result = deduplicate([(i, t) for i, t, _ in corpus], config)
    pairs = {
        (result.ids[a], result.ids[b])
        for a, b in zip(result.pairs.left, result.pairs.right, strict=True)
    }
    assert pairs == {("c0", later) for later in ("c1", "c2", "c3", "c4", "c5")}


@pytest.mark.parametrize(
    ("method", "measure"),
    [("full", "containment"), ("minhash", "resemblance"), ("bottomn", "containment")],
)
def test_query_finds_exactly_the_pairs_dedup_finds(method: str, measure: str) -> None:
    bases = [text(100 + i) for i in range(8)]
    corpus = [(f"d{i}", b) for i, b in enumerate(bases)]
    corpus += [(f"e{i}", edit(b, 200 + i, 1 + i % 4)) for i, b in enumerate(bases)]
    corpus += [(f"f{i}", edit(b, 300 + i, 6 + 2 * i)) for i, b in enumerate(bases[:4])]
    config = DedupConfig(method=method, threshold=0.6, measure=measure)
    result = deduplicate(corpus, config)
    expected = {
        frozenset((result.ids[a], result.ids[b])): round(float(s), 9)
        for a, b, s in zip(result.pairs.left, result.pairs.right, result.pairs.score, strict=True)
    }
    assert expected  # the corpus does have near-duplicates

    coll = Collection.create(MemoryStore(), config)
    added = coll.add([(doc_id, body, None) for doc_id, body in corpus])
    in_batch = {
        frozenset((res.id, dup.id)): round(dup.score, 9) for res in added for dup in res.duplicates
    }
    assert in_batch == expected  # each pair reported once, by its later document
    found = {}
    for (doc_id, _), res in zip(corpus, coll.query([b for _, b in corpus]), strict=True):
        for dup in res.duplicates:
            if dup.id != doc_id:
                found[frozenset((doc_id, dup.id))] = round(dup.score, 9)
    assert found == expected


@pytest.mark.parametrize("method", ["minhash", "simhash", "megashingle"])
@pytest.mark.parametrize("measure", ["containment", "resemblance"])
def test_lsh_collection_finds_lightly_edited_copies(
    store: Store, measure: str, method: str
) -> None:
    # the case: index at threshold 0.8, query copies with 3 % of their words changed;
    # ≥ 95 % must be found by every LSH method (expected 96–100 %; the former keys found 105
    # (minhash 9 × 13 bands), 58 (simhash k = 3) and 4 (megashingle 6 × 14) of 200)
    originals, copies = near_copies(200, seed=2000)
    coll = Collection.create(store, DedupConfig(method=method, threshold=0.8, measure=measure))
    coll.add([(f"o{i}", body, None) for i, body in enumerate(originals)])
    results = coll.query(copies)
    found = sum(f"o{i}" in [d.id for d in res.duplicates] for i, res in enumerate(results))
    assert found >= 190
    assert all(len(res.duplicates) <= 1 for res in results)
    assert all(d.score >= 0.8 for res in results for d in res.duplicates)


def test_answers_say_which_document_holds_the_other(store: Store) -> None:
    question = text(11, 40)
    answer = question + " " + text(12, 40)
    news = Collection.create(store, DedupConfig())
    news.add([("question", question, None)])
    (found,) = news.add([("answer", answer, None)])[0].duplicates
    assert (found.id, found.contained) == ("question", "stored_in_new")
    assert found.stored_in_new == 1.0
    assert found.new_in_stored < 0.6
    assert found.as_dict()["contained"] == "stored_in_new"
    held = {d.id: d.contained for d in news.query([question])[0].duplicates}
    assert held == {"question": None, "answer": "new_in_stored"}


# --- shared templates ---------------------------------------------------------------------------

FOOTER = " ".join(f"listfooter{i}" for i in range(40))  # a list's 40-word footer


def own_words(n: int, words: int) -> str:
    """``words`` words of message ``n`` that no other message has."""
    return " ".join(f"m{n}word{k}" for k in range(words))


def list_messages() -> list[tuple[str, str]]:
    """20 long and 20 very short messages of a list, interleaved, each ending in its footer."""
    messages = []
    for i in range(20):
        messages.append((f"long{i}", f"{own_words(i, 200)} {FOOTER}"))
        messages.append((f"short{i}", f"{own_words(100 + i, 5)} {FOOTER}"))
    return messages


def footer_held(coll: Collection) -> int:
    """The smallest holder count of the footer's own shingles."""
    return int(coll.store.shingle_counts(fingerprint_batch([FOOTER], coll.config.text)[0]).min())


def test_shared_footer_is_not_content(store: Store) -> None:
    coll = Collection.create(store, DedupConfig())  # template_df 10
    reported, after_template = [], 0
    for doc_id, body in list_messages():
        is_template = footer_held(coll) >= coll.config.template_df
        [res] = coll.add([(doc_id, body, None)])
        if is_template:
            after_template += 1
            reported += [(doc_id, d.id) for d in res.duplicates]
    assert after_template >= 20  # the footer is a template once 10 long messages hold it
    assert reported == []
    # the short messages are near copies of each other: their group counts once
    assert footer_held(coll) == 21
    assert sum(d.counted for d in store.get([i for i, _ in list_messages()])) == 21
    assert all(res.duplicates == [] for res in coll.query([f"hello there {FOOTER}"]))


def test_without_the_discount_the_footer_makes_duplicates(store: Store) -> None:
    coll = Collection.create(store, DedupConfig(template_df=0))
    results = [coll.add([(i, body, None)])[0] for i, body in list_messages()]
    assert sum(bool(res.duplicates) for res in results) >= 15
    assert footer_held(coll) == 0  # nothing is counted


@pytest.mark.parametrize("batch", [1, 20])
def test_copies_to_many_recipients_count_once(store: Store, batch: int) -> None:
    body = text(31, 100)
    names = [f"recipient{chr(97 + i // 26)}{chr(97 + i % 26)}" for i in range(80)]
    copies = [
        (f"to{i}", f"Dear {name}, {body} Regards to {name}.", None) for i, name in enumerate(names)
    ]
    coll = Collection.create(store, DedupConfig(method="minhash", threshold=0.8))
    results = [
        res for start in range(0, 80, batch) for res in coll.add(copies[start : start + batch])
    ]
    assert results[0].duplicates == []
    assert all(res.duplicates for res in results[1:])  # all 79 later copies are found
    assert all(d.new_in_stored >= 0.9 for res in results for d in res.duplicates)
    assert [d.counted for d in store.get([i for i, _, _ in copies])] == [True] + [False] * 79
    shared = fingerprint_batch([body], coll.config.text)[0]
    assert store.shingle_counts(shared).tolist() == [1] * shared.size
    assert [d.id for d in coll.query([f"Dear someone, {body}"])[0].duplicates][:1] == ["to0"]


def test_answer_quoting_a_question_on_a_list(store: Store) -> None:
    coll = Collection.create(store, DedupConfig())
    coll.add([(f"post{i}", f"{own_words(i, 60)} {FOOTER}", None) for i in range(12)])
    question = f"{text(41, 40)} {FOOTER}"
    coll.add([("question", question, None)])
    answer = f"{text(42, 50)} > {text(41, 40)} {FOOTER}"
    [res] = coll.add([("answer", answer, None)])
    (found,) = res.duplicates
    assert (found.id, found.contained) == ("question", "stored_in_new")
    assert found.stored_in_new == 1.0
    assert found.new_in_stored < 0.55
    assert found.score == found.stored_in_new


def test_dedup_and_the_collection_agree_with_templates(store: Store) -> None:
    """Documents added one by one report the pairs dedup reports, with the same scores.

    Counting is incremental: a pair scored before its shingles reached ``template_df`` holders
    is scored without the discount. Here the footer's first holders (long posts) share too
    little to pair anyway, so the corpus is one where both orders of counting agree.
    """
    corpus = [(f"post{i}", f"{own_words(i, 80)} {FOOTER}") for i in range(12)]
    corpus += [(f"short{i}", f"{own_words(50 + i, 5)} {FOOTER}") for i in range(6)]
    corpus += [(f"edit{i}", edit(corpus[i][1], 60 + i, 1 + i)) for i in range(4)]
    corpus += [("reply", f"{text(70, 30)} {corpus[5][1]}")]
    bases = [text(100 + i) for i in range(6)]
    corpus += [(f"d{i}", b) for i, b in enumerate(bases)]
    corpus += [(f"e{i}", edit(b, 200 + i, 1 + 2 * i)) for i, b in enumerate(bases)]
    config = DedupConfig(template_df=10)
    result = deduplicate(corpus, config)
    assert result.template_shingles >= 38
    expected = {
        frozenset((result.ids[a], result.ids[b])): round(float(s), 9)
        for a, b, s in zip(result.pairs.left, result.pairs.right, result.pairs.score, strict=True)
    }
    assert len(expected) >= 8
    assert not any(pair & {"short0", "short1"} for pair in expected)
    coll = Collection.create(store, config)
    found = {
        frozenset((res.id, d.id)): round(d.score, 9)
        for doc_id, body in corpus
        for res in coll.add([(doc_id, body, None)])
        for d in res.duplicates
    }
    assert found == expected


def test_open_refuses_an_older_store_layout() -> None:
    store = MemoryStore()
    coll = Collection.create(store)
    meta = store.meta()
    assert meta is not None
    old = MemoryStore()
    old.create(CollectionMeta(meta.config, coll.config_id, meta.format_version, schema=1))
    with pytest.raises(ConfigError, match="store layout 1"):
        Collection.open(old)


def test_template_df_is_part_of_the_config(tmp_path: Path) -> None:
    Collection.create(SQLiteStore(tmp_path / "c.db"), DedupConfig(template_df=5)).store.close()
    with pytest.raises(ConfigError, match="another config"):
        Collection.open(SQLiteStore(tmp_path / "c.db"), DedupConfig())
    assert Collection.open(SQLiteStore(tmp_path / "c.db")).stats()["template_df"] == 5
