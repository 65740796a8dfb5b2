from neardup.io.sample_corpus import sample_documents


def test_sample_has_three_languages_and_unique_ids():
    docs = sample_documents()
    assert {d["lang"] for d in docs} == {"en", "ru", "zh"}
    assert len({d["id"] for d in docs}) == len(docs)
    assert all(d["text"].strip() for d in docs)
