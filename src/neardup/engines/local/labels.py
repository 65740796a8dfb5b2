"""Labels a reader understands for the keys of summaries and settings (``timings_seconds`` →
"Timings (seconds)"), for the pages and reports that show them."""

from __future__ import annotations

LABELS = {
    "largest_cluster": "Largest cluster (documents)",
    "capped_buckets": "Index buckets capped",
    "template_shingles": "Template shingles discounted",
    "declined_pairs": "Pairs declined (removal would lose content)",
    "empty_ids": "Empty documents (first ids)",
    "bad_examples": "Bad records (first)",
    "config_id": "Config id",
    "template_df": "Template shingles: held by at least (documents)",
    "max_bucket": "Largest index bucket used (documents)",
    "params": "Method parameters",
    "keep": "Which document is kept",
    "guard": "Removal guard",
    "chain": "Chained clusters",
    "lang": "Language",
    "html": "Strip HTML",
    "wiki": "Strip wiki markup",
    "quotes": "Drop quoted lines",
    "normalize": "Unicode NFKC",
    "lowercase": "Case folding",
    "punctuation": "Remove punctuation",
    "stopwords": "Remove stop words",
    "segment": "Segment Chinese",
}
UNITS = {"seconds": "seconds", "bytes": "bytes", "ms": "milliseconds", "ids": "ids"}


def human_label(key: str) -> str:
    """``key`` as a reader's label: a known one, else its words capitalized, a trailing unit
    in parentheses (``timings_seconds`` → "Timings (seconds)")."""
    if key in LABELS:
        return LABELS[key]
    words = key.replace("-", "_").split("_")
    unit = ""
    if len(words) > 1 and words[-1] in UNITS:
        unit = f" ({UNITS[words.pop()]})"
    text = " ".join(w for w in words if w)
    return (text[:1].upper() + text[1:] if text else key) + unit
