"""Trust benches: corpora of the kinds users meet, with ground truth, tune and held-out splits.

Built from real texts of ``shared/data/corpus`` (Gutenberg chunks, RusLit chunks, Chinese poems:
sentences, lines and paragraphs are cut out of them), deterministic (seeded; stdlib + numpy):

- ``mail``: a mailing-list archive in threads over 6 lists, each list with its own footer (and
  some with a long legal / HTML-mail disclaimer), senders with signatures, short replies
  ("+1"), replies quoting the previous message whole or in part. True duplicates: re-sent
  messages (identical or with another date line), cross-posts (another list's footer),
  forwards, light edits (1–3 % of the new text's words). ``allowed`` lists the pairs (a, b)
  where a is quoted whole inside b: removing a for b loses nothing.
- ``newsletter``: ~40 newsletters × 12–52 issues, the newsletter's template 50–75 % of every
  issue's words. True duplicates: an issue sent twice, or its "view in browser" copy.
- ``syndicated``: a few articles copied on 200–500 sites each (site header / byline / footer
  5–25 % of the words; the sites' own unrelated articles carry the same boilerplate), a spam
  campaign of 80 copies with per-recipient names and amounts, ~2000 unrelated articles.
- ``mixed``: documents whose paragraphs mix en / ru / zh (quotes, names), with exact copies,
  light edits, copies inside larger documents and partial copies.

The two splits use disjoint raw texts (even / odd record index of each corpus file) and
different seeds. Output per (kind, lang, split) in ``--out`` (default
``$TMPDIR/neardup-trust``): ``{kind}-{lang}-{split}-docs.jsonl.gz`` (``id, text, lang, kind,
role``), ``-truth.jsonl.gz`` (``id, cluster`` for every document), ``-allowed.jsonl.gz``
(``a, b``: a wholly inside b) and ``-manifest.json`` (arguments, counts). A corpus already made
with the same arguments is skipped (``--force`` remakes it).

    python benchmarks/make_trust_bench.py [--kinds mail,newsletter,syndicated,mixed]
        [--langs en,ru,zh] [--split tune|heldout|both] [--scale 1.0] [--out DIR] [--check]
"""

from __future__ import annotations

import argparse
import gzip
import json
import random
import re
import tempfile
import textwrap
import time
from collections import Counter
from datetime import datetime, timedelta
from functools import cache
from pathlib import Path

import numpy as np
from _corpus import CORPUS

VERSION = 1
KINDS = ("mail", "newsletter", "syndicated", "mixed")
LANGS = ("en", "ru", "zh")
SPLITS = {"tune": (0, 1000), "heldout": (1, 2000)}  # record parity, seed base
RAW = {  # file, records read (both splits together)
    "en": ("en-gutenberg-100k.jsonl.gz", 16000),
    "ru": ("ru-ruslit-40k.jsonl.gz", 40000),
    "zh": ("zh-poetry-100k.jsonl.gz", 80000),
}
KIND_SEED = {"mail": 1, "newsletter": 2, "syndicated": 3, "mixed": 4}
LANG_SEED = {"en": 10, "ru": 20, "zh": 30}
DEFAULT_OUT = Path(tempfile.gettempdir()) / "neardup-trust"

# ------------------------------------------------------------------------------------------
# language material

FIRST = {
    "en": "James Mary John Patricia Robert Jennifer Michael Linda William Elizabeth David "
    "Barbara Richard Susan Joseph Jessica Thomas Sarah Charles Karen Daniel Nancy Mark Lisa",
    "ru": "Александр Мария Сергей Елена Дмитрий Ольга Андрей Наталья Алексей Татьяна Иван Анна "
    "Михаил Ирина Николай Светлана Владимир Юлия Павел Екатерина Игорь Марина Олег Вера",
    "zh": "偉 芳 娜 敏 靜 麗 強 磊 軍 洋 勇 艷 傑 娟 濤 明 超 秀英 華 平 建國 志強 淑芬 美玲 家豪 "
    "冠宇 怡君 雅婷",
}
LAST = {
    "en": "Smith Johnson Williams Brown Jones Garcia Miller Davis Wilson Anderson Taylor Thomas "
    "Moore Martin Jackson Thompson White Harris Clark Lewis Walker Young King Wright",
    "ru": "Иванов Смирнов Кузнецов Попов Васильев Петров Соколов Михайлов Новиков Фёдоров "
    "Морозов Волков Алексеев Лебедев Семёнов Егоров Павлов Козлов Степанов Николаев",
    "zh": "王 李 張 劉 陳 楊 黃 趙 吳 周 徐 孫 馬 朱 胡 郭 何 林 高 羅 鄭 梁 謝 宋",
}
LATIN = "al an ar be da el en er ka ko la le li lo ma mi na ne ni no ra re ri ro sa se ta to va vi"
SHORT = {
    "en": [
        "Thanks, that fixed it.",
        "+1",
        "Thanks!",
        "Works for me.",
        "Same here.",
        "Agreed.",
        "Thank you, this helps a lot.",
        "Never mind, found it.",
        "Any update on this?",
        "LGTM.",
        "I see the same problem.",
        "Sounds good to me.",
        "Done.",
        "Fixed in trunk, thanks.",
        "Ping?",
    ],
    "ru": [
        "Спасибо, помогло.",
        "+1",
        "Спасибо!",
        "У меня работает.",
        "Аналогично.",
        "Согласен.",
        "Спасибо, очень помогло.",
        "Всё, разобрался.",
        "Есть новости?",
        "Поддерживаю.",
        "Та же проблема.",
        "Меня устраивает.",
        "Готово.",
        "Исправил, спасибо.",
        "Ап.",
    ],
    "zh": [
        "謝謝，問題解決了。",
        "+1",
        "謝謝！",
        "我這邊可以用了。",
        "我也遇到同樣的問題。",
        "同意。",
        "非常感謝，很有幫助。",
        "沒事了，已經找到原因。",
        "請問有進展嗎？",
        "贊成。",
        "我這裡也一樣。",
        "好的，沒問題。",
        "已修正，謝謝。",
        "收到。",
        "頂。",
    ],
}
HEADER = {
    "en": ("From", "Date", "Subject"),
    "ru": ("От", "Дата", "Тема"),
    "zh": ("寄件者", "日期", "主旨"),
}
COLON = {"en": ": ", "ru": ": ", "zh": "："}
REPLY = {"en": "Re: ", "ru": "Re: ", "zh": "回覆："}
FWD = {"en": "Fwd: ", "ru": "Fwd: ", "zh": "轉寄："}
FWD_HEAD = {
    "en": "---------- Forwarded message ---------",
    "ru": "---------- Пересылаемое сообщение ----------",
    "zh": "---------- 轉寄的郵件 ----------",
}
FWD_NOTE = {
    "en": [
        "FYI",
        "Forwarding this to the list.",
        "See below, thought you might be interested.",
        "",
    ],
    "ru": ["К сведению.", "Пересылаю в список.", "См. ниже, может быть интересно.", ""],
    "zh": ["供參考。", "轉寄到列表。", "請看下面，大家可能有興趣。", ""],
}
WROTE = {
    "en": "On {date}, {name} wrote:",
    "ru": "{date}, {name} пишет:",
    "zh": "{name} 於 {date} 寫道：",
}
FOOTER = {
    "en": (
        "{title} mailing list\n{addr}\nTo post a message to all the list members, send email to "
        "{addr}\nTo unsubscribe or change subscription options visit {url}/listinfo/{name}",
        [
            "Archives: {url}/pipermail/{name}/",
            "Please read the posting guidelines at {url}/guidelines before posting.",
            "Code of conduct: {url}/conduct. Be kind to each other and stay on topic.",
            "Searchable archives and answers to frequently asked questions: {url}/faq",
            "This list is hosted by {org}; for help with your subscription write to {help}.",
        ],
    ),
    "ru": (
        "Список рассылки {title}\n{addr}\nЧтобы написать всем участникам, отправьте письмо на "
        "{addr}\nОтписаться или изменить настройки подписки: {url}/listinfo/{name}",
        [
            "Архив: {url}/pipermail/{name}/",
            "Перед отправкой прочитайте правила списка: {url}/rules.",
            "Правила поведения: {url}/conduct. Будьте вежливы и не отклоняйтесь от темы.",
            "Поиск по архиву и ответы на частые вопросы: {url}/faq",
            "Список поддерживается {org}; по вопросам подписки пишите на {help}.",
        ],
    ),
    "zh": (
        "{title} 郵件列表\n{addr}\n如要發信給所有成員，請寄到 {addr}\n"
        "取消訂閱或更改訂閱設定請到 {url}/listinfo/{name}",
        [
            "郵件存檔：{url}/pipermail/{name}/",
            "發信前請先閱讀本列表的發文守則：{url}/rules。",
            "行為準則：{url}/conduct。請互相尊重，並且不要離題。",
            "存檔搜尋與常見問題解答：{url}/faq",
            "本列表由{org}維護，訂閱相關問題請寫信到 {help}。",
        ],
    ),
}
DISCLAIMER = {
    "en": [
        "CONFIDENTIALITY NOTICE: This e-mail message, including any attachments, is for the "
        "sole use of the intended recipient(s) and may contain confidential and privileged "
        "information. Any unauthorized review, use, disclosure or distribution is prohibited. "
        "If you are not the intended recipient, please contact the sender by reply e-mail and "
        "destroy all copies of the original message. This message was sent in HTML format; if "
        "it does not display correctly, please view it in your web browser.",
        "Disclaimer: the views expressed in this message are those of the author and do not "
        "necessarily reflect the views of {org}. This message has been scanned for viruses and "
        "dangerous content and is believed to be clean. Please consider the environment before "
        "printing this e-mail. Messages to this list are archived publicly.",
    ],
    "ru": [
        "КОНФИДЕНЦИАЛЬНОСТЬ: Это сообщение, включая все вложения, предназначено только для "
        "указанных получателей и может содержать конфиденциальную информацию. Любое "
        "несанкционированное использование, раскрытие или распространение запрещено. Если вы "
        "получили это сообщение по ошибке, пожалуйста, сообщите об этом отправителю ответным "
        "письмом и удалите все копии исходного сообщения. Сообщение отправлено в формате HTML; "
        "если оно отображается некорректно, откройте его в браузере.",
        "Оговорка: мнения, высказанные в этом письме, принадлежат автору и могут не совпадать "
        "с позицией {org}. Сообщение проверено на вирусы и опасное содержимое. Пожалуйста, "
        "подумайте об окружающей среде, прежде чем распечатывать это письмо. Сообщения этого "
        "списка публично архивируются.",
    ],
    "zh": [
        "保密聲明：本電子郵件及其附件僅供指定收件人使用，可能含有機密或受法律保護的資訊。"
        "未經授權，禁止任何審閱、使用、揭露或散布。如果您並非指定收件人，請立即回覆通知寄件者，"
        "並刪除本郵件的所有副本。本郵件以HTML格式發送，如無法正常顯示，請在瀏覽器中開啟。",
        "免責聲明：本郵件所表達的意見僅代表作者本人，並不代表{org}的立場。本郵件已經過病毒掃描，"
        "列印前請考慮環境保護。寄到本列表的郵件都會公開存檔，請勿在信中附上個人資料。",
    ],
}
TITLES = {
    "en": "Senior Engineer|Project Lead|Research Fellow|System Administrator|Product Manager|"
    "Developer|PhD Student|Consultant|CTO|Librarian",
    "ru": "Ведущий инженер|Руководитель проекта|Научный сотрудник|Системный администратор|"
    "Менеджер продукта|Разработчик|Аспирант|Консультант|Технический директор|Библиотекарь",
    "zh": "資深工程師|專案負責人|研究員|系統管理員|產品經理|開發者|博士生|顧問|技術長|圖書館員",
}
ORGS = {
    "en": "Acme Corp|Northwind Labs|Globex Systems|Initech|Umbrella Research|Stark Data|"
    "Wayne Analytics|Hooli|Vandelay Industries|Soylent Software",
    "ru": "ООО «Вектор»|НИИ «Квант»|АО «Север»|Яндекс-подобная компания|ООО «Орбита»|"
    "Институт информатики|ЗАО «Сигма»|ООО «Альфа-Софт»|ГК «Прогресс»|НПО «Эра»",
    "zh": "遠東科技|華新資訊|大同研究院|天工軟體|中研數據|"
    "光明網路|長江系統|明德大學|聯合開發|新創工作室",
}
PHONE = {"en": "Tel: +1 {n}", "ru": "Тел.: +7 {n}", "zh": "電話：+886 {n}"}
LIST_NAMES = {
    "en": ["users", "devel", "announce", "science", "books", "linux-help", "photo", "gardening"],
    "ru": ["ru-users", "razrabotka", "novosti", "nauka", "knigi", "linux-ru", "foto", "sad"],
    "zh": ["yonghu", "kaifa", "gonggao", "kexue", "dushu", "linux-tw", "sheying", "yuanyi"],
}
LIST_TITLES = {
    "en": ["Users", "Developers", "Announcements", "Science", "Book Club", "Linux Help"],
    "ru": ["Пользователи", "Разработка", "Новости", "Наука", "Книжный клуб", "Помощь по Linux"],
    "zh": ["使用者", "開發者", "公告", "科學", "讀書會", "Linux求助"],
}
MONTHS = {
    "en": ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"],
    "ru": ["янв", "фев", "мар", "апр", "мая", "июн", "июл", "авг", "сен", "окт", "ноя", "дек"],
}
NEWS = {
    "en": {
        "issue": "Issue #{n} · {date}",
        "toc": "In this issue:",
        "sections": "Top stories|News in brief|From the community|Events|Research|"
        "Tools and resources|Opinion|Jobs|Reader questions|Announcements|Around the web|Tips",
        "footer": "You are receiving this email because you subscribed to {name} at {domain}. "
        "If you no longer wish to receive these emails, you can unsubscribe here: "
        "{url}/unsubscribe. Update your preferences: {url}/preferences. Forward this email to a "
        "friend. {name} is published by {org}, {address}. Copyright © {year} {org}. All rights "
        "reserved.",
        "sponsor": "This issue is supported by {org}.",
        "view": "View this email in your browser: {url}/archive/{n}",
        "address": "{num} {street} Street, Suite {suite}, {city}",
        "cities": "Springfield|Riverton|Lakewood|Fairview|Georgetown|Salem|Madison|Clinton",
    },
    "ru": {
        "issue": "Выпуск №{n} · {date}",
        "toc": "В этом выпуске:",
        "sections": "Главное|Коротко|Из жизни сообщества|События|Исследования|"
        "Инструменты и ресурсы|Мнения|Вакансии|Вопросы читателей|Объявления|В сети|Советы",
        "footer": "Вы получили это письмо, потому что подписались на рассылку {name} на сайте "
        "{domain}. Если вы больше не хотите получать эти письма, отпишитесь по ссылке: "
        "{url}/unsubscribe. Настройки подписки: {url}/preferences. Перешлите это письмо другу. "
        "Рассылку {name} выпускает {org}, {address}. © {year} {org}. Все права защищены.",
        "sponsor": "Этот выпуск вышел при поддержке {org}.",
        "view": "Открыть это письмо в браузере: {url}/archive/{n}",
        "address": "г. {city}, ул. {street}, д. {num}, офис {suite}",
        "cities": "Москва|Казань|Самара|Томск|Пермь|Тверь|Омск|Иркутск",
    },
    "zh": {
        "issue": "第{n}期 · {date}",
        "toc": "本期內容：",
        "sections": "頭條|簡訊|社群動態|活動預告|研究新知|工具與資源|"
        "觀點|徵才|讀者來信|公告|網路精選|小技巧",
        "footer": "您收到這封郵件，是因為您在{domain}訂閱了{name}。如果您不想再收到這些郵件，"
        "請點此取消訂閱：{url}/unsubscribe。更改訂閱設定：{url}/preferences。"
        "歡迎將本郵件轉寄給朋友。{name}由{org}發行，地址：{address}。"
        "版權所有 © {year} {org}，保留一切權利。",
        "sponsor": "本期由{org}贊助。",
        "view": "在瀏覽器中查看本郵件：{url}/archive/{n}",
        "address": "{city}{street}路{num}號{suite}樓",
        "cities": "台北市|新竹市|台中市|台南市|高雄市|桃園市|嘉義市|花蓮市",
    },
}
SITE = {
    "en": {
        "nav": "Home|News|World|Business|Culture|Science|Sports|Opinion|Travel|Contact|About",
        "byline": "By {author} | {date}",
        "share": "Share this article: Facebook · Twitter · Email · Print",
        "rights": "Copyright © {year} {site}. All rights reserved.",
        "extras": [
            "Subscribe to our newsletter and never miss a story.",
            "Comments are moderated and may take a while to appear.",
            "Advertise with us | Privacy policy | Terms of use | Cookie settings",
            "Follow {site} on social media for the latest updates.",
            "Related articles",
            "Most read this week",
        ],
        "readmore": "Read the full story at {url}",
        "words": "Daily|Herald|Times|Post|Review|Journal|Gazette|Observer|Digest|Tribune",
    },
    "ru": {
        "nav": "Главная|Новости|В мире|Экономика|Культура|Наука|Спорт|Мнения|Путешествия|"
        "Контакты|О нас",
        "byline": "Автор: {author} | {date}",
        "share": "Поделиться: ВКонтакте · Телеграм · Почта · Печать",
        "rights": "© {year} {site}. Все права защищены.",
        "extras": [
            "Подпишитесь на нашу рассылку, чтобы не пропустить новые материалы.",
            "Комментарии проходят модерацию и появляются не сразу.",
            "Реклама на сайте | Политика конфиденциальности | Условия использования",
            "Следите за {site} в социальных сетях.",
            "Читайте также",
            "Самое читаемое за неделю",
        ],
        "readmore": "Полностью читайте на {url}",
        "words": "Вестник|Известия|Курьер|Обозрение|Листок|Ведомости|Новь|Заря|Дайджест|Голос",
    },
    "zh": {
        "nav": "首頁|新聞|國際|財經|文化|科學|體育|評論|旅遊|聯絡我們|關於",
        "byline": "作者：{author}　{date}",
        "share": "分享本文：臉書 · 推特 · 電子郵件 · 列印",
        "rights": "版權所有 © {year} {site}，保留一切權利。",
        "extras": [
            "訂閱我們的電子報，不錯過任何一篇好文章。",
            "留言需經審核後才會顯示。",
            "廣告合作 | 隱私權政策 | 使用條款 | Cookie設定",
            "歡迎在社群媒體上追蹤{site}。",
            "相關文章",
            "本週熱門",
        ],
        "readmore": "全文請見 {url}",
        "words": "日報|時報|週刊|評論|晚報|快訊|文摘|觀察|論壇|新聞網",
    },
}
SPAM = {
    "en": "Dear {name},\n\nWe are pleased to inform you that you have been selected to receive "
    "a compensation payment of {amount} from the International Settlement Fund. Your reference "
    "number is {ref}. To claim your funds, please reply to this message with your full name, "
    "home address, telephone number and a copy of a valid identification document. A small "
    "processing fee of {fee} is required before the transfer can be completed. This offer is "
    "valid for seven days only, so act now to avoid losing your payment.\n\n"
    "Yours faithfully,\nDr. Williams Okafor\nDirector of Remittance",
    "ru": "Уважаемый(ая) {name}!\n\nРады сообщить, что вы выбраны для получения компенсационной "
    "выплаты в размере {amount} из Международного фонда урегулирования. Ваш номер обращения "
    "{ref}. Чтобы получить средства, ответьте на это письмо, указав полное имя, домашний адрес, "
    "номер телефона и копию документа, удостоверяющего личность. Перед переводом необходимо "
    "оплатить небольшой сбор за обработку в размере {fee}. Предложение действительно только "
    "семь дней, поэтому не откладывайте, чтобы не потерять выплату.\n\n"
    "С уважением,\nд-р Уильямс Окафор\nДиректор по переводам",
    "zh": "親愛的{name}您好：\n\n我們很高興通知您，您已被選中領取國際清算基金的補償金{amount}。"
    "您的案件編號是{ref}。請回覆本郵件並提供您的全名、住址、電話號碼以及有效身分證件影本，"
    "以便領取款項。在完成轉帳之前，需要先支付一筆{fee}的手續費。本優惠僅在七天內有效，"
    "請儘快辦理，以免失去這筆款項。\n\n此致\n敬禮\n匯款部主任 歐卡福博士",
}
CURRENCY = {"en": "${:,} USD", "ru": "{:,} руб.", "zh": "新台幣{:,}元"}

# ------------------------------------------------------------------------------------------
# raw text


@cache
def raw_texts(lang: str, parity: int) -> tuple[str, ...]:
    """Texts of the lang's corpus file with record index of the given parity (a split)."""
    name, limit = RAW[lang]
    out = []
    with gzip.open(CORPUS / name, "rt", encoding="utf-8") as fh:
        for i, line in enumerate(fh):
            if i >= limit:
                break
            if i % 2 == parity:
                out.append(json.loads(line)["text"])
    return tuple(out)


SENT_END = re.compile(r"(?<=[.!?…])[\"'”»)]*\s+(?=[\"'“«(—-]?[A-ZА-ЯЁ])")
ALNUM = re.compile(r"\w+")


def split_sentences(text: str, lang: str) -> list[list[str]]:
    """Paragraphs of sentences (zh: stanzas of lines; the title line dropped)."""
    if lang == "zh":
        lines = [ln.strip() for ln in text.split("\n")[1:]]
        lines = [ln for ln in lines if 5 <= len(ln) <= 40]
        return [lines] if lines else []
    paras = []
    for block in re.split(r"\n\s*\n", text):
        flat = " ".join(block.split())
        if not flat:
            continue
        sents = [s.strip() for s in SENT_END.split(flat)]
        sents = [s for s in sents if 4 <= len(s.split()) <= 45 and not s.isupper()]
        if sents:
            paras.append(sents)
    return paras


def key(sentence: str) -> str:
    return "".join(ALNUM.findall(sentence.lower()))


def units(text: str, lang: str) -> int:
    """Words (zh: CJK characters, plus latin words)."""
    if lang == "zh":
        return len(re.findall(r"[\u4e00-\u9fff]", text)) + len(re.findall(r"[A-Za-z0-9]+", text))
    return len(text.split())


class Pool:
    """Fresh sentences of one language, in reading order of shuffled raw texts; a sentence
    (normalized) is given out once per corpus, so unrelated documents share no text."""

    def __init__(self, lang: str, parity: int, rng: random.Random) -> None:
        self.lang = lang
        self.texts = list(raw_texts(lang, parity))
        rng.shuffle(self.texts)
        self.next_text = 0
        self.current: list[list[str]] = []
        self.seen: set[str] = set()
        self.words: list[str] = []

    def _refill(self) -> None:
        while not self.current:
            if self.next_text >= len(self.texts):
                raise SystemExit(f"raw {self.lang} texts exhausted: lower --scale")
            self.current = split_sentences(self.texts[self.next_text], self.lang)
            self.next_text += 1
            if len(self.words) < 20000:
                for para in self.current:
                    for s in para:
                        self.words.extend(
                            list(re.sub(r"[^\u4e00-\u9fff]", "", s))
                            if self.lang == "zh"
                            else re.findall(r"[^\W\d_]{3,}", s)
                        )

    def sentence(self) -> str:
        while True:
            self._refill()
            para = self.current[0]
            s = para.pop(0)
            if not para:
                self.current.pop(0)
            k = key(s)
            if k and k not in self.seen:
                self.seen.add(k)
                return s

    def sentences(self, n: int) -> list[str]:
        return [self.sentence() for _ in range(n)]

    def paragraph(self, rng: random.Random, lo: int = 2, hi: int = 5) -> str:
        sents = self.sentences(rng.randint(lo, hi))
        return ("\n" if self.lang == "zh" else " ").join(sents)

    def text_of(self, rng: random.Random, target: int) -> list[str]:
        """Paragraphs until ``target`` units."""
        paras: list[str] = []
        total = 0
        while total < target:
            p = self.paragraph(rng)
            paras.append(p)
            total += units(p, self.lang)
        return paras

    def word(self, rng: random.Random) -> str:
        if not self.words:
            self._refill()
        return rng.choice(self.words)


def light_edit(text: str, lang: str, rate: float, pool: Pool, rng: random.Random) -> str:
    """Substitute / delete / insert / typo ``rate`` of the words (zh: CJK characters)."""
    if lang == "zh":
        spans = [m.span() for m in re.finditer(r"[\u4e00-\u9fff]", text)]
    else:
        spans = [m.span() for m in re.finditer(r"[^\W\d_]+", text)]
    if not spans:
        return text
    k = max(1, round(rate * len(spans)))
    chosen = sorted(rng.sample(range(len(spans)), min(k, len(spans))), reverse=True)
    for i in chosen:
        a, b = spans[i]
        word = text[a:b]
        op = rng.random()
        if op < 0.4:
            new = pool.word(rng)
        elif op < 0.6:
            new = ""
        elif op < 0.8:
            new = word + ("" if lang == "zh" else " ") + pool.word(rng)
        elif len(word) >= 2:
            j = rng.randrange(len(word) - 1)
            new = word[:j] + word[j + 1] + word[j] + word[j + 2 :]
        else:
            new = pool.word(rng)
        text = text[:a] + new + text[b:]
    return re.sub(r"  +", " ", text)


def person(lang: str, rng: random.Random) -> str:
    first, last = rng.choice(FIRST[lang].split()), rng.choice(LAST[lang].split())
    if lang == "zh":
        return last + first
    if lang == "ru" and first[-1] in "аяь" and first != "Игорь":
        last += "а"
    return f"{first} {last}"


def handle(rng: random.Random) -> str:
    syl = LATIN.split()
    return "".join(rng.choice(syl) for _ in range(rng.randint(2, 3))) + str(rng.randint(1, 99))


def fmt_date(when: datetime, lang: str, with_time: bool = True) -> str:
    hm = f" {when:%H:%M}" if with_time else ""
    if lang == "zh":
        return f"{when.year}年{when.month}月{when.day}日{hm}"
    month = MONTHS[lang][when.month - 1]
    return f"{when.day} {month} {when.year}{hm}"


def wrap(sentences: list[str], lang: str, rng: random.Random) -> str:
    """Sentences as 1–3 paragraphs of mail text (wrapped at 72 columns; zh a line each)."""
    if lang == "zh":
        return "\n".join(sentences)
    cuts = sorted(rng.sample(range(1, len(sentences)), min(len(sentences) - 1, rng.randint(0, 2))))
    paras = [sentences[a:b] for a, b in zip([0, *cuts], [*cuts, len(sentences)], strict=True)]
    return "\n\n".join(textwrap.fill(" ".join(p), 72) for p in paras)


def quote(text: str) -> str:
    return "\n".join(
        ">" + ("" if line.startswith(">") or not line else " ") + line for line in text.split("\n")
    )


# ------------------------------------------------------------------------------------------
# corpora: each builder returns docs [{id, text, role, cluster}] and allowed pairs (i, j)


class Corpus:
    def __init__(self, kind: str, lang: str, split: str) -> None:
        self.docs: list[dict] = []
        self.allowed: list[tuple[int, int]] = []
        self.clusters = 0

    def cluster(self) -> int:
        self.clusters += 1
        return self.clusters - 1

    def add(self, text: str, role: str, cluster: int, **extra: object) -> int:
        self.docs.append({"text": text, "role": role, "cluster": cluster, **extra})
        return len(self.docs) - 1


def make_mail(lang: str, pool: Pool, rng: random.Random, scale: float) -> Corpus:
    c = Corpus("mail", lang, "")
    target = round(6000 * scale)
    orgs = ORGS[lang].split("|")
    lists = []
    for i in range(6):
        name = LIST_NAMES[lang][i]
        domain = f"{rng.choice(['lists', 'mail', 'ml'])}.{handle(rng)}.org"
        fields = {
            "title": LIST_TITLES[lang][i],
            "name": name,
            "addr": f"{name}@{domain}",
            "url": f"https://{domain}/mailman",
            "org": rng.choice(orgs),
            "help": f"{name}-owner@{domain}",
        }
        head, extras = FOOTER[lang]
        lines = [head, *rng.sample(extras, rng.randint(0, len(extras)))]
        footer = "_" * 47 + "\n" + "\n".join(x.format(**fields) for x in lines)
        if i in (1, 4):  # lists adding a long disclaimer
            footer += "\n\n" + DISCLAIMER[lang][i % 2].format(org=fields["org"])
        lists.append({"name": name, "footer": footer})
    senders = []
    for _ in range(round(400 * scale)):
        name = person(lang, rng)
        sig = ""
        if rng.random() < 0.3:
            lines = [name, rng.choice(TITLES[lang].split("|")), rng.choice(orgs)]
            lines.append(PHONE[lang].format(n=rng.randint(10**8, 10**9 - 1)))
            sig = "\n".join(lines[: rng.randint(2, 4)])
        senders.append({"name": name, "email": f"{handle(rng)}@{handle(rng)}.com", "sig": sig})

    h_from, h_date, h_subj = HEADER[lang]
    col = COLON[lang]
    messages: list[dict] = []  # structured, rendered at the end

    def render(m: dict) -> str:
        lst = lists[m["list"]]
        s = m["sender"]
        parts = [
            f"{h_from}{col}{s['name']} <{s['email']}>\n{h_date}{col}{fmt_date(m['date'], lang)}"
            f"\n{h_subj}{col}[{lst['name']}] {m['subject']}"
        ]
        body = [m["new"]] if m["new"] else []
        if m["quote"]:
            body = [*body, m["quote"]] if m["top"] else [m["quote"], *body]
        parts += body
        if s["sig"]:
            parts.append("-- \n" + s["sig"])
        parts.append(lst["footer"])
        return "\n\n".join(parts)

    def new_text() -> str:
        if rng.random() < 0.15:
            return rng.choice(SHORT[lang])
        return wrap(pool.sentences(rng.randint(1, 8)), lang, rng)

    def emit(m: dict) -> dict:
        m["text"] = render(m)
        m["n"] = len(messages)
        messages.append(m)
        return m

    start = datetime(2014, 1, 1)
    while len(messages) < target:
        li = rng.randrange(6)
        when = start + timedelta(minutes=rng.randrange(3 * 365 * 24 * 60))
        subject = " ".join(pool.sentence().split()[: rng.randint(3, 7)]).rstrip(",.;:")
        if lang == "zh":
            subject = subject[: rng.randint(4, 9)]
        root = emit(
            {
                "list": li,
                "sender": rng.choice(senders),
                "date": when,
                "subject": subject,
                "new": wrap(pool.sentences(rng.randint(1, 8)), lang, rng),
                "quote": "",
                "top": True,
                "whole": set(),
                "role": "new",
                "cluster": c.cluster(),
            }
        )
        thread = [root]
        for _ in range(min(int(rng.expovariate(1 / 3.0)), 25)):
            parent = thread[-1] if rng.random() < 0.7 else rng.choice(thread)
            when = parent["date"] + timedelta(minutes=rng.randint(5, 3000))
            sender = rng.choice(senders)
            attribution = WROTE[lang].format(
                date=fmt_date(parent["date"], lang), name=parent["sender"]["name"]
            )
            whole = rng.random() < 0.4 and units(parent["text"], lang) < 700
            if whole:
                quoted = parent["text"]
            else:
                lines = [ln for ln in parent["new"].split("\n") if ln.strip()]
                a = rng.randrange(len(lines))
                part = lines[a : a + rng.randint(1, 3)]
                quoted = "\n".join(part)
                body_whole = len(part) == len(lines)  # the parent's own words, all quoted
            subj = parent["subject"]
            if not subj.startswith(REPLY[lang]):
                subj = REPLY[lang] + subj
            reply = emit(
                {
                    "list": parent["list"],
                    "sender": sender,
                    "date": when,
                    "subject": subj,
                    "new": new_text(),
                    "quote": attribution + "\n" + quote(quoted),
                    "top": rng.random() < 0.5,
                    "whole": ({parent["n"]} | parent["whole"]) if whole else set(),
                    "body": {parent["n"]} if not whole and body_whole else set(),
                    "role": "reply-whole" if whole else "reply-part",
                    "cluster": c.cluster(),
                }
            )
            thread.append(reply)
        # true duplicates of this thread's messages
        for m in list(thread):
            r = rng.random()
            later = m["date"] + timedelta(minutes=rng.randint(1, 600))
            if r < 0.025:  # re-sent, identical or with another date line
                copy = dict(m, role="resent-same")
                if rng.random() < 0.5:
                    copy.update(date=later, role="resent-date")
                emit(copy)
            elif r < 0.045 and m is root:  # cross-posted to another list
                other = (m["list"] + rng.randint(1, 5)) % 6
                emit(dict(m, list=other, role="crosspost"))
            elif r < 0.065:  # forwarded (to its own or another list) by someone else
                s = m["sender"]
                block = (
                    f"{FWD_HEAD[lang]}\n{h_from}{col}{s['name']} <{s['email']}>\n"
                    f"{h_date}{col}{fmt_date(m['date'], lang)}\n{h_subj}{col}{m['subject']}"
                    f"\n\n" + m["text"]
                )
                emit(
                    {
                        "list": rng.randrange(6),
                        "sender": rng.choice(senders),
                        "date": later + timedelta(days=rng.randint(0, 30)),
                        "subject": FWD[lang] + m["subject"].removeprefix(REPLY[lang]),
                        "new": rng.choice(FWD_NOTE[lang]),
                        "quote": block,
                        "top": True,
                        "whole": {m["n"]} | m["whole"],
                        "role": "forward",
                        "cluster": m["cluster"],
                    }
                )
            elif r < 0.095 and units(m["new"], lang) >= 30:  # re-posted with light edits
                new = light_edit(m["new"], lang, rng.uniform(0.01, 0.03), pool, rng)
                emit(dict(m, new=new, date=later, role="edited"))
    # archive order: by date (stable)
    order = sorted(range(len(messages)), key=lambda i: (messages[i]["date"], i))
    index = {old: new for new, old in enumerate(order)}
    for old in order:
        m = messages[old]
        c.add(m["text"], m["role"], m["cluster"])
    # allowed: a quoted whole (transitively) inside b, or its own words all quoted (a reply
    # quoting every line of a short message), and exact copies of a
    by_text: dict[str, list[int]] = {}
    for i, m in enumerate(messages):
        by_text.setdefault(m["text"], []).append(i)
    pairs = set()
    for j, m in enumerate(messages):
        for a in m["whole"] | m.get("body", set()):
            for x in by_text[messages[a]["text"]]:
                if messages[x]["cluster"] != m["cluster"]:
                    pairs.add((index[x], index[j]))
    c.allowed = sorted(pairs)
    return c


def make_newsletter(lang: str, pool: Pool, rng: random.Random, scale: float) -> Corpus:
    c = Corpus("newsletter", lang, "")
    res = NEWS[lang]
    orgs = ORGS[lang].split("|")
    sections_all = res["sections"].split("|")
    for _ in range(round(40 * scale)):
        name = (
            " ".join(pool.word(rng).capitalize() for _ in range(2))
            if lang != "zh"
            else (pool.word(rng) + pool.word(rng) + "通訊")
        )
        domain = f"{handle(rng)}.com"
        url = f"https://{domain}"
        org = rng.choice(orgs)
        address = res["address"].format(
            num=rng.randint(1, 300),
            street=pool.word(rng).capitalize(),
            suite=rng.randint(1, 40),
            city=rng.choice(res["cities"].split("|")),
        )
        tagline = pool.sentence()
        about = " ".join(pool.sentences(rng.randint(1, 3)))
        sponsor = res["sponsor"].format(org=rng.choice(orgs)) + " " + pool.sentence()
        sections = rng.sample(sections_all, rng.randint(3, 5))
        footer = res["footer"].format(
            name=name, domain=domain, url=url, org=org, address=address, year=2016
        )
        when = datetime(2015, 1, 1) + timedelta(days=rng.randrange(300))
        step = rng.choice([7, 7, 14, 30])
        for n in range(1, rng.randint(12, 52) + 1):
            when += timedelta(days=step)
            template = [
                name,
                tagline,
                res["toc"] + " " + " · ".join(sections),
                about,
                sponsor,
                footer,
                res["issue"],
            ]
            t_units = sum(units(x, lang) for x in template) + sum(units(s, lang) for s in sections)
            share = rng.uniform(0.5, 0.75)
            target = t_units * (1 - share) / share
            items: dict[str, list[str]] = {s: [] for s in sections}
            total = 0
            while total < target:
                s = rng.choice(sections)
                sent = pool.sentence()
                items[s].append(sent)
                total += units(sent, lang)
            body = [
                f"{name}\n{tagline}\n{res['issue'].format(n=n, date=fmt_date(when, lang, False))}",
                res["toc"] + " " + " · ".join(sections),
            ]
            for s in sections:
                body.append(s.upper() + "\n" + "\n".join(f"• {x}" for x in items[s]))
            body += [about, sponsor, footer]
            text = "\n\n".join(body)
            cluster = c.cluster()
            c.add(text, "issue", cluster, order=when)
            r = rng.random()
            if r < 0.06:
                c.add(text, "sent-twice", cluster, order=when + timedelta(hours=rng.randint(1, 48)))
            elif r < 0.12:
                view = res["view"].format(url=url, n=n)
                c.add(
                    view + "\n\n" + text,
                    "browser-copy",
                    cluster,
                    order=when + timedelta(days=rng.randint(0, 90)),
                )
    return c


def make_syndicated(lang: str, pool: Pool, rng: random.Random, scale: float) -> Corpus:
    c = Corpus("syndicated", lang, "")
    res = SITE[lang]
    nav = res["nav"].split("|")
    length = {"en": (200, 600), "ru": (150, 450), "zh": (150, 450)}[lang]
    sites = []
    for _ in range(round(500 * scale)):
        site = (
            pool.word(rng).capitalize() + " " + rng.choice(res["words"].split("|"))
            if lang != "zh"
            else pool.word(rng) + pool.word(rng) + rng.choice(res["words"].split("|"))
        )
        url = f"https://www.{handle(rng)}.{rng.choice(['com', 'net', 'org', 'info'])}"
        share = rng.uniform(0.05, 0.25)
        budget = share / (1 - share) * sum(length) / 2
        head = [site, " | ".join(rng.sample(nav, rng.randint(4, len(nav))))]
        foot = [res["share"], res["rights"].format(year=rng.randint(2010, 2020), site=site)]
        extras = [x.format(site=site) for x in res["extras"]]
        rng.shuffle(extras)
        while sum(units(x, lang) for x in head + foot) < budget:
            foot.append(extras.pop() if extras else pool.sentence())
        if rng.random() < 0.5:
            head.append(pool.sentence())  # the site's slogan
        sites.append({"site": site, "url": url, "head": "\n".join(head), "foot": "\n\n".join(foot)})

    def page(site: dict, paras: list[str], title: str, author: str) -> str:
        byline = res["byline"].format(
            author=author,
            date=fmt_date(datetime(2017, 1, 1) + timedelta(days=rng.randrange(900)), lang, False),
        )
        return "\n\n".join([site["head"], title, byline, *paras, site["foot"]])

    def article() -> tuple[str, list[str]]:
        title = " ".join(pool.sentence().split()[:8]) if lang != "zh" else pool.sentence()[:8]
        return title, pool.text_of(rng, rng.randint(*length))

    for _ in range(max(1, round(4 * scale))):
        title, paras = article()
        author = person(lang, rng)
        cluster = c.cluster()
        origin = rng.choice(sites)
        c.add(page(origin, paras, title, author), "original", cluster)
        for site in rng.sample(sites, min(len(sites), rng.randint(200, 500))):
            if site is origin:
                continue
            r = rng.random()
            body, role = paras, "copy"
            if r < 0.1:
                body, role = [light_edit(p, lang, 0.02, pool, rng) for p in paras], "copy-edited"
            elif r < 0.2 and len(paras) >= 3:
                keep = max(2, round(len(paras) * rng.uniform(0.6, 0.9)))
                body = [*paras[:keep], res["readmore"].format(url=origin["url"])]
                role = "copy-truncated"
            c.add(page(site, body, title, rng.choice([author, person(lang, rng)])), role, cluster)
    cluster = c.cluster()
    for _ in range(80):
        amount = CURRENCY[lang].format(rng.randrange(1000, 9_000_000, 50))
        fee = CURRENCY[lang].format(rng.randrange(50, 999))
        ref = f"{handle(rng).upper()}-{rng.randint(10000, 99999)}"
        c.add(
            SPAM[lang].format(name=person(lang, rng), amount=amount, fee=fee, ref=ref),
            "spam",
            cluster,
        )
    for _ in range(round(2000 * scale)):
        title, paras = article()
        c.add(page(rng.choice(sites), paras, title, person(lang, rng)), "article", c.cluster())
    return c


def make_mixed(lang: str, pools: dict[str, Pool], rng: random.Random, scale: float) -> Corpus:
    c = Corpus("mixed", lang, "")
    others = [x for x in LANGS if x != lang]
    pool = pools[lang]

    def paragraph() -> str:
        r = rng.random()
        if r < 0.2:
            return pools[rng.choice(others)].paragraph(rng, 1, 4)
        p = pool.paragraph(rng, 2, 5)
        if r < 0.45:  # a quote or a name of another language inside
            other = rng.choice(others)
            inner = pools[other].sentence() if rng.random() < 0.6 else person(other, rng)
            q = {"en": "“{}”", "ru": "«{}»", "zh": "「{}」"}[lang].format(inner)
            cut = p.find(" ", len(p) // 2) if lang != "zh" else len(p) // 2
            cut = len(p) if cut < 0 else cut
            p = p[:cut] + " " + q + " " + p[cut:].lstrip()
        return p

    base = []
    for _ in range(round(2000 * scale)):
        paras = [paragraph() for _ in range(rng.randint(3, 7))]
        cluster = c.cluster()
        base.append((paras, cluster))
        c.add("\n\n".join(paras), "base", cluster)
    for paras, cluster in rng.sample(base, len(base) // 4):
        for _ in range(1 if rng.random() < 0.7 else 2):
            r = rng.random()
            if r < 0.25:
                c.add("\n\n".join(paras), "exact", cluster)
            elif r < 0.65:
                rate = rng.uniform(0.01, 0.03)
                edited = [light_edit(p, lang, rate, pool, rng) for p in paras]
                c.add("\n\n".join(edited), "light", cluster)
            elif r < 0.8:  # inside a larger document
                before = [paragraph() for _ in range(rng.randint(1, 3))]
                after = [paragraph() for _ in range(rng.randint(1, 3))]
                c.add("\n\n".join(before + paras + after), "contained", cluster)
            else:
                keep = sorted(rng.sample(range(len(paras)), max(2, round(len(paras) * 0.75))))
                c.add("\n\n".join(paras[i] for i in keep), "partial", cluster)
    return c


# ------------------------------------------------------------------------------------------


def write_jsonl(path: Path, rows: list[dict]) -> None:
    with open(path, "wb") as raw, gzip.GzipFile(filename="", mode="wb", fileobj=raw, mtime=0) as fh:
        for r in rows:
            fh.write((json.dumps(r, ensure_ascii=False) + "\n").encode())


def paths(out: Path, kind: str, lang: str, split: str) -> dict[str, Path]:
    stem = out / f"{kind}-{lang}-{split}"
    return {
        "docs": Path(f"{stem}-docs.jsonl.gz"),
        "truth": Path(f"{stem}-truth.jsonl.gz"),
        "allowed": Path(f"{stem}-allowed.jsonl.gz"),
        "manifest": Path(f"{stem}-manifest.json"),
    }


def build(kind: str, lang: str, split: str, scale: float, out: Path, force: bool = False) -> dict:
    """Make one corpus (or find it made with the same arguments); its manifest."""
    p = paths(out, kind, lang, split)
    args = {"kind": kind, "lang": lang, "split": split, "scale": scale, "version": VERSION}
    if not force and p["manifest"].exists() and all(p[k].exists() for k in p):
        manifest = json.loads(p["manifest"].read_text())
        if manifest.get("args") == args:
            manifest["cached"] = True
            return manifest
    t0 = time.perf_counter()
    parity, seed_base = SPLITS[split]
    seed = seed_base + 100 * KIND_SEED[kind] + LANG_SEED[lang]
    rng = random.Random(seed)
    np.random.seed(seed)  # nothing random comes from numpy; kept for reproducibility of helpers
    if kind == "mixed":
        pools = {x: Pool(x, parity, random.Random(seed * 7 + i)) for i, x in enumerate(LANGS)}
        corpus = make_mixed(lang, pools, rng, scale)
    else:
        pool = Pool(lang, parity, random.Random(seed * 7))
        corpus = {"mail": make_mail, "newsletter": make_newsletter, "syndicated": make_syndicated}[
            kind
        ](lang, pool, rng, scale)
    docs = corpus.docs
    if kind == "newsletter":  # archive order: by date
        order = sorted(range(len(docs)), key=lambda i: (docs[i]["order"], i))
    elif kind in ("syndicated", "mixed"):
        order = list(range(len(docs)))
        rng.shuffle(order)
    else:
        order = list(range(len(docs)))
    pos = {old: new for new, old in enumerate(order)}
    width = len(str(len(docs)))
    ids = [f"{kind}-{lang}-{split}-{pos[i]:0{width}d}" for i in range(len(docs))]
    # clusters renumbered by first appearance; ids of the allowed pairs
    rows, truth, names = [], [], {}
    for old in order:
        d = docs[old]
        name = names.setdefault(d["cluster"], f"{kind}-{lang}-{split}-c{len(names)}")
        rows.append(
            {"id": ids[old], "text": d["text"], "lang": lang, "kind": kind, "role": d["role"]}
        )
        truth.append({"id": ids[old], "cluster": name})
    allowed = [{"a": ids[a], "b": ids[b]} for a, b in corpus.allowed]
    out.mkdir(parents=True, exist_ok=True)
    write_jsonl(p["docs"], rows)
    write_jsonl(p["truth"], truth)
    write_jsonl(p["allowed"], allowed)
    sizes = Counter(Counter(t["cluster"] for t in truth).values())
    n_units = [units(r["text"], lang) for r in rows]
    manifest = {
        "args": args,
        "seed": seed,
        "docs": len(rows),
        "clusters": len(names),
        "true_pairs": sum(s * (s - 1) // 2 * n for s, n in sizes.items()),
        "allowed_pairs": len(allowed),
        "cluster_sizes": {str(k): v for k, v in sorted(sizes.items())},
        "roles": dict(sorted(Counter(r["role"] for r in rows).items())),
        "units": {
            "mean": round(float(np.mean(n_units)), 1),
            "p10": int(np.percentile(n_units, 10)),
            "p50": int(np.percentile(n_units, 50)),
            "p90": int(np.percentile(n_units, 90)),
        },
        "seconds": round(time.perf_counter() - t0, 2),
    }
    p["manifest"].write_text(json.dumps(manifest, ensure_ascii=False, indent=1) + "\n")
    manifest["cached"] = False
    return manifest


def check(out: Path, kind: str, lang: str, split: str, samples: int = 2) -> None:
    """Print a couple of sample documents and verify the allowed pairs textually."""
    p = paths(out, kind, lang, split)
    with gzip.open(p["docs"], "rt", encoding="utf-8") as fh:
        docs = {r["id"]: r for r in map(json.loads, fh)}
    with gzip.open(p["allowed"], "rt", encoding="utf-8") as fh:
        allowed = [json.loads(line) for line in fh]

    def norm(text: str) -> str:
        return " ".join(text.replace(">", " ").split())

    bad = sum(norm(docs[a["a"]]["text"]) not in norm(docs[a["b"]]["text"]) for a in allowed)
    print(f"  allowed pairs: {len(allowed)}, not textually contained: {bad}")
    rng = random.Random(0)
    ids = list(docs)
    wanted = ["reply-whole", "forward", "browser-copy", "copy-truncated", "spam", "contained"]
    shown = [i for i in ids if docs[i]["role"] in wanted][:1] + rng.sample(ids, samples)
    for i in shown[: samples + 1]:
        text = docs[i]["text"]
        print(f"  --- {i} ({docs[i]['role']}, {len(text)} chars)")
        print(textwrap.indent(text[:1200] + ("\n[…]" if len(text) > 1200 else ""), "  | "))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kinds", default=",".join(KINDS))
    parser.add_argument("--langs", default=",".join(LANGS))
    parser.add_argument("--split", default="both", choices=[*SPLITS, "both"])
    parser.add_argument("--scale", type=float, default=1.0)
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    parser.add_argument("--force", action="store_true", help="remake corpora already made")
    parser.add_argument("--check", action="store_true", help="print samples, verify allowed")
    args = parser.parse_args()
    splits = list(SPLITS) if args.split == "both" else [args.split]
    for split in splits:
        for kind in args.kinds.split(","):
            for lang in args.langs.split(","):
                m = build(kind, lang, split, args.scale, args.out, args.force)
                state = "cached" if m["cached"] else f"{m['seconds']:.1f}s"
                top = ", ".join(f"{k}:{v}" for k, v in list(m["cluster_sizes"].items())[:8])
                print(
                    f"{kind}-{lang}-{split}: {m['docs']} docs, {m['clusters']} clusters, "
                    f"{m['true_pairs']} true pairs, {m['allowed_pairs']} allowed ({state})\n"
                    f"  cluster sizes {top}{' …' if len(m['cluster_sizes']) > 8 else ''}\n"
                    f"  roles {m['roles']}\n  units {m['units']}"
                )
                if args.check:
                    check(args.out, kind, lang, split)
    print(f"written to {args.out}")


if __name__ == "__main__":
    main()
