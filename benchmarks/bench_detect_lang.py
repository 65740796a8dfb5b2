"""Speed of ``detect_lang`` on texts of about a megabyte (French, Russian, Chinese): the
milliseconds per megabyte of UTF-8, best of a few runs. The language of every text is found
on its letters alone, so this stays far under the cost of canonicalizing the text.

    python benchmarks/bench_detect_lang.py [--repeat 5]
"""

from __future__ import annotations

import argparse
import time

from neardup.text.script import detect_lang

TEXTS = {
    "fr": "Le garçon très rapide mange une crème brûlée près de la rivière. " * 16000,
    "ru": "Съешь же ещё этих мягких французских булок, да выпей чаю. " * 20000,
    "zh": "我们今天在北京讨论了人工智能的发展和未来的挑战。" * 50000,
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    opts = parser.parse_args()
    print(f"{'text':<6} {'MB':>6} {'answer':>6} {'ms/MB':>8}")
    for name, text in TEXTS.items():
        answer = detect_lang(text)  # compiled and warm
        best = float("inf")
        for _ in range(opts.repeat):
            started = time.perf_counter()
            detect_lang(text)
            best = min(best, time.perf_counter() - started)
        mb = len(text.encode("utf-8")) / 1e6
        print(f"{name:<6} {mb:>6.2f} {answer:>6} {1000 * best / mb:>8.2f}")


if __name__ == "__main__":
    main()
