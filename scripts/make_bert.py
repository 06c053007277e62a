#!/usr/bin/python3
"""A BERT sentence encoder in plain torch: the reference of msp's native embedder.

msp's native embedder (src/embed/native/) runs BERT-family sentence encoders
(all-MiniLM-L6-v2, bge-small-en-v1.5, e5-small-v2, gte-small) from their
model.safetensors, config.json and vocab.txt / tokenizer.json. This script
builds random models of that architecture and the files a real model has, and
computes what the model should output, independently of msp:

  make_bert.py fixtures DIR   a tiny model (2 layers, hidden 32) and
                              reference.json: token ids (uncased and cased) and
                              embeddings (mean and CLS pooling) of a set of
                              texts; tests/data/native_bert is made by it and
                              committed, so the tests need no torch.
  make_bert.py bench DIR      a MiniLM-L6-shaped model (6 layers, hidden 384,
                              12 heads, intermediate 1536; ~90 MB, not
                              committed) and torch's CPU timings on it, as JSON
                              on stdout (bench/native_bench.sh); bench-torch
                              times torch again without writing the files.

Needs Debian's python3-torch (bookworm: 1.13.1): run it with /usr/bin/python3.
transformers is not used (not packaged in bookworm): the model below is
BertModel's forward written out, and the tokenizer is BertTokenizer's
algorithm (BasicTokenizer, then WordPiece) written out.
"""
import json
import math
import os
import re
import struct
import sys
import time
import unicodedata

import torch
import torch.nn.functional as F

# ---------------------------------------------------------------- tokenizer


def _is_whitespace(c):
    return c in " \t\n\r" or unicodedata.category(c) == "Zs"


def _is_control(c):
    if c in "\t\n\r":
        return False
    return unicodedata.category(c).startswith("C")


def _is_punctuation(c):
    cp = ord(c)
    if (33 <= cp <= 47) or (58 <= cp <= 64) or (91 <= cp <= 96) or (123 <= cp <= 126):
        return True
    return unicodedata.category(c).startswith("P")


def _is_cjk(cp):
    return ((0x4E00 <= cp <= 0x9FFF) or (0x3400 <= cp <= 0x4DBF) or (0x20000 <= cp <= 0x2A6DF)
            or (0x2A700 <= cp <= 0x2B73F) or (0x2B740 <= cp <= 0x2B81F) or (0x2B820 <= cp <= 0x2CEAF)
            or (0xF900 <= cp <= 0xFAFF) or (0x2F800 <= cp <= 0x2FA1F))


def basic_tokenize(text, lower, strip_accents, chinese=True):
    out = []
    for c in text:
        cp = ord(c)
        if cp == 0 or cp == 0xFFFD or _is_control(c):
            continue
        out.append(" " if _is_whitespace(c) else c)
    text = "".join(out)
    if chinese:
        text = "".join(" %s " % c if _is_cjk(ord(c)) else c for c in text)
    tokens = []
    for token in text.strip().split():
        if lower:
            token = token.lower()
        if strip_accents:
            token = "".join(c for c in unicodedata.normalize("NFD", token) if unicodedata.category(c) != "Mn")
        current = []
        for c in token:
            if _is_punctuation(c):
                if current:
                    tokens.append("".join(current))
                    current = []
                tokens.append(c)
            else:
                current.append(c)
        if current:
            tokens.append("".join(current))
    return " ".join(tokens).strip().split()


def wordpiece(token, vocab, unk="[UNK]", max_chars=100):
    if len(token) > max_chars:
        return [unk]
    pieces, start = [], 0
    while start < len(token):
        end, found = len(token), None
        while start < end:
            piece = token[start:end]
            if start > 0:
                piece = "##" + piece
            if piece in vocab:
                found = piece
                break
            end -= 1
        if found is None:
            return [unk]
        pieces.append(found)
        start = end
    return pieces


SPECIAL_TOKENS = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]


def encode(text, vocab, lower, max_tokens):
    """BertTokenizer's encode: special tokens written in the text (exactly,
    case and all) are split out first and kept whole; the rest is tokenized."""
    ids = [vocab["[CLS]"]]
    pattern = "(" + "|".join(re.escape(t) for t in SPECIAL_TOKENS if t in vocab) + ")"
    for i, part in enumerate(re.split(pattern, text)):
        if i % 2 == 1:
            ids.append(vocab[part])
            continue
        for token in basic_tokenize(part, lower, lower):
            ids.extend(vocab[p] for p in wordpiece(token, vocab))
    ids = ids[:max_tokens - 1]
    ids.append(vocab["[SEP]"])
    return ids

# ---------------------------------------------------------------- model


def make_weights(cfg, seed):
    g = torch.Generator().manual_seed(seed)
    H, I = cfg["hidden_size"], cfg["intermediate_size"]

    def rnd(*shape, scale=0.1):
        return torch.randn(*shape, generator=g) * scale

    def ln(prefix, w):
        w[prefix + ".weight"] = 1.0 + rnd(H)
        w[prefix + ".bias"] = rnd(H)

    w = {}
    w["embeddings.word_embeddings.weight"] = rnd(cfg["vocab_size"], H, scale=0.5)
    w["embeddings.position_embeddings.weight"] = rnd(cfg["max_position_embeddings"], H, scale=0.5)
    w["embeddings.token_type_embeddings.weight"] = rnd(cfg["type_vocab_size"], H, scale=0.5)
    ln("embeddings.LayerNorm", w)
    for i in range(cfg["num_hidden_layers"]):
        p = "encoder.layer.%d." % i
        for name in ("query", "key", "value"):
            w[p + "attention.self.%s.weight" % name] = rnd(H, H, scale=1.0 / math.sqrt(H))
            w[p + "attention.self.%s.bias" % name] = rnd(H)
        w[p + "attention.output.dense.weight"] = rnd(H, H, scale=1.0 / math.sqrt(H))
        w[p + "attention.output.dense.bias"] = rnd(H)
        ln(p + "attention.output.LayerNorm", w)
        w[p + "intermediate.dense.weight"] = rnd(I, H, scale=1.0 / math.sqrt(H))
        w[p + "intermediate.dense.bias"] = rnd(I)
        w[p + "output.dense.weight"] = rnd(H, I, scale=1.0 / math.sqrt(I))
        w[p + "output.dense.bias"] = rnd(H)
        ln(p + "output.LayerNorm", w)
    # BertModel's pooler: in real files, unused by sentence encoders.
    w["pooler.dense.weight"] = rnd(H, H)
    w["pooler.dense.bias"] = rnd(H)
    return w


def forward(w, cfg, ids, mask):
    """Hidden states [B, S, H] of BertModel (absolute positions, token type 0)."""
    H, nh = cfg["hidden_size"], cfg["num_attention_heads"]
    hd, eps = H // nh, cfg["layer_norm_eps"]
    B, S = ids.shape
    x = (w["embeddings.word_embeddings.weight"][ids] + w["embeddings.position_embeddings.weight"][:S]
         + w["embeddings.token_type_embeddings.weight"][0])
    x = F.layer_norm(x, (H,), w["embeddings.LayerNorm.weight"], w["embeddings.LayerNorm.bias"], eps)
    ext = (1.0 - mask[:, None, None, :].float()) * torch.finfo(torch.float32).min
    for i in range(cfg["num_hidden_layers"]):
        p = "encoder.layer.%d." % i

        def lin(name, t):
            return F.linear(t, w[p + name + ".weight"], w[p + name + ".bias"])

        def heads(t):
            return t.view(B, S, nh, hd).transpose(1, 2)

        q = heads(lin("attention.self.query", x))
        k = heads(lin("attention.self.key", x))
        v = heads(lin("attention.self.value", x))
        scores = q @ k.transpose(-1, -2) / math.sqrt(hd) + ext
        ctx = (scores.softmax(-1) @ v).transpose(1, 2).reshape(B, S, H)
        x = F.layer_norm(lin("attention.output.dense", ctx) + x, (H,), w[p + "attention.output.LayerNorm.weight"],
                         w[p + "attention.output.LayerNorm.bias"], eps)
        h = F.gelu(lin("intermediate.dense", x))
        x = F.layer_norm(lin("output.dense", h) + x, (H,), w[p + "output.LayerNorm.weight"],
                         w[p + "output.LayerNorm.bias"], eps)
    return x


def pool(x, mask, mode):
    if mode == "cls":
        v = x[:, 0]
    else:
        m = mask[:, :, None].float()
        v = (x * m).sum(1) / m.sum(1).clamp(min=1e-9)
    return F.normalize(v, p=2, dim=1)

# ---------------------------------------------------------------- files


def write_safetensors(path, tensors):
    header, offset, blobs = {"__metadata__": {"format": "pt"}}, 0, []
    for name, t in tensors.items():
        data = t.contiguous().to(torch.float32).numpy().astype("<f4").tobytes()
        header[name] = {"dtype": "F32", "shape": list(t.shape), "data_offsets": [offset, offset + len(data)]}
        offset += len(data)
        blobs.append(data)
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * (-len(text) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)))
        f.write(text)
        for b in blobs:
            f.write(b)


def write_model(directory, cfg, weights, vocab_list, lower=True, pooling="mean"):
    os.makedirs(os.path.join(directory, "1_Pooling"), exist_ok=True)
    write_safetensors(os.path.join(directory, "model.safetensors"), weights)
    config = dict(cfg, architectures=["BertModel"], model_type="bert", hidden_act="gelu",
                  position_embedding_type="absolute", torch_dtype="float32")
    with open(os.path.join(directory, "config.json"), "w") as f:
        json.dump(config, f, indent=2)
    with open(os.path.join(directory, "vocab.txt"), "w", encoding="utf-8") as f:
        f.write("\n".join(vocab_list) + "\n")
    with open(os.path.join(directory, "tokenizer_config.json"), "w") as f:
        json.dump({"do_lower_case": lower, "tokenizer_class": "BertTokenizer"}, f, indent=2)
    tokenizer = {
        "version": "1.0",
        "added_tokens": [{"id": vocab_list.index(t), "content": t, "single_word": False, "lstrip": False,
                          "rstrip": False, "normalized": False, "special": True}
                         for t in SPECIAL_TOKENS if t in vocab_list],
        "normalizer": {"type": "BertNormalizer", "clean_text": True, "handle_chinese_chars": True,
                       "strip_accents": None, "lowercase": lower},
        "pre_tokenizer": {"type": "BertPreTokenizer"},
        "model": {"type": "WordPiece", "unk_token": "[UNK]", "continuing_subword_prefix": "##",
                  "max_input_chars_per_word": 100, "vocab": {t: i for i, t in enumerate(vocab_list)}},
    }
    with open(os.path.join(directory, "tokenizer.json"), "w", encoding="utf-8") as f:
        json.dump(tokenizer, f, ensure_ascii=False, indent=1)
    with open(os.path.join(directory, "1_Pooling", "config.json"), "w") as f:
        json.dump({"word_embedding_dimension": cfg["hidden_size"], "pooling_mode_cls_token": pooling == "cls",
                   "pooling_mode_mean_tokens": pooling == "mean"}, f, indent=2)

# ---------------------------------------------------------------- fixtures

TEXTS = [
    "Hello, world!",
    "The user moved to Berlin in 2023.",
    "Café naïve résumé — ÉCOLE, e\u0301te\u0301",
    "中文和日本語のテキスト",
    "Привет, мир! Ελληνικά",
    "She is allergic to peanuts; allergies... (serious)",
    "Emoji 🙂 and symbols ©®™ ½",
    "한국어 text",
    "a\u0000b\u200bc\x07d\ufffde tab\there\nnew\u2028line\u00a0nbsp",
    "İstanbul ǅungla straße ﬁne ΣΑΣ",
    "x" * 101 + " " + "y" * 100,
    " ".join("word%d" % (i % 10) for i in range(200)),
    "",
    "   \t\n  ",
    "fill the [MASK] here,[SEP]then [mask] and [UNK]x [CLS",
    "unaffable 'quoted' [brackets] {braces} <angle> `tick` ~tilde~ ^caret^ |pipe| \\back\\",
]


def fixture_vocab():
    vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
    ascii_chars = [chr(c) for c in range(33, 127)]
    vocab += ascii_chars + ["##" + c for c in ascii_chars if c.isalnum()]
    words = ["hello", "world", "the", "user", "moved", "to", "berlin", "in", "cafe", "naive", "resume",
             "ecole", "ete", "she", "is", "allerg", "##ic", "##ies", "peanut", "##s", "serious", "emoji",
             "and", "symbols", "text", "tab", "here", "new", "line", "nbsp", "word", "istanbul", "fine",
             "una", "##ff", "##able", "quoted", "brackets", "Hello", "The", "Berlin", "Café", "##ll",
             "##o", "##orld", "str", "##aße", "strasse", "##ung", "##la", "ǆ", "σας", "σ", "##α", "##ς",
             "при", "##вет", "мир", "ελλη", "##νικα", "##νικά", "中", "文", "和", "日", "本", "語", "の",
             "テキスト", "ᄒ", "##ᅡ", "##ᆫ", "국", "##어", "i̇", "##stanbul", "©", "®", "™", "½", "—", "ﬁ",
             "y" * 40, "##" + "y" * 60]
    for w in words:
        if w not in vocab:
            vocab.append(w)
    return vocab


def fixtures(directory):
    cfg = {"vocab_size": 0, "hidden_size": 32, "num_hidden_layers": 2, "num_attention_heads": 4,
           "intermediate_size": 64, "max_position_embeddings": 64, "type_vocab_size": 2,
           "layer_norm_eps": 1e-12, "pad_token_id": 0}
    vocab_list = fixture_vocab()
    cfg["vocab_size"] = len(vocab_list)
    vocab = {t: i for i, t in enumerate(vocab_list)}
    weights = make_weights(cfg, seed=22)
    write_model(directory, cfg, weights, vocab_list)
    cases = []
    for text in TEXTS:
        ids = encode(text, vocab, True, cfg["max_position_embeddings"])
        t = torch.tensor([ids])
        mask = torch.ones_like(t)
        with torch.no_grad():
            x = forward(weights, cfg, t, mask)
            mean, cls = pool(x, mask, "mean")[0], pool(x, mask, "cls")[0]
        cases.append({"text": text, "ids": ids,
                      "cased_ids": encode(text, vocab, False, cfg["max_position_embeddings"]),
                      "mean": [round(float(v), 7) for v in mean], "cls": [round(float(v), 7) for v in cls]})
    with open(os.path.join(directory, "reference.json"), "w", encoding="utf-8") as f:
        json.dump({"generator": "scripts/make_bert.py fixtures", "torch": torch.__version__, "cases": cases},
                  f, ensure_ascii=False, indent=1)

# ---------------------------------------------------------------- bench


def bench(directory, write=True):
    cfg = {"vocab_size": 30522, "hidden_size": 384, "num_hidden_layers": 6, "num_attention_heads": 12,
           "intermediate_size": 1536, "max_position_embeddings": 512, "type_vocab_size": 2,
           "layer_norm_eps": 1e-12, "pad_token_id": 0}
    vocab_list = ["[PAD]"] + ["[unused%d]" % i for i in range(99)] + ["[UNK]", "[CLS]", "[SEP]", "[MASK]"]
    vocab_list += ["w%d" % i for i in range(cfg["vocab_size"] - len(vocab_list))]
    weights = make_weights(cfg, seed=6)
    if write:
        write_model(directory, cfg, weights, vocab_list)
    torch.set_num_threads(1)
    g = torch.Generator().manual_seed(1)

    def run(batch, seq):
        ids = torch.randint(1000, cfg["vocab_size"], (batch, seq), generator=g)
        mask = torch.ones_like(ids)
        with torch.no_grad():
            return pool(forward(weights, cfg, ids, mask), mask, "mean")

    for _ in range(3):
        run(1, 32)
    lat, lat_cpu = [], []
    for _ in range(200):
        t0, c0 = time.perf_counter(), time.process_time()
        run(1, 32)
        lat.append(time.perf_counter() - t0)
        lat_cpu.append(time.process_time() - c0)
    lat.sort()
    lat_cpu.sort()
    run(32, 128)
    rounds, t0, c0 = 5, time.perf_counter(), time.process_time()
    for _ in range(rounds):
        run(32, 128)
    per_batch = (time.perf_counter() - t0) / rounds
    per_batch_cpu = (time.process_time() - c0) / rounds
    json.dump({"backend": "torch " + torch.__version__, "threads": torch.get_num_threads(),
               "latency_p50_ms_seq32": lat[len(lat) // 2] * 1e3,
               "latency_p50_cpu_ms_seq32": lat_cpu[len(lat_cpu) // 2] * 1e3,
               "batch32_seq128_texts_per_s": 32 / per_batch,
               "batch32_seq128_texts_per_cpu_s": 32 / per_batch_cpu}, sys.stdout)
    print()


if __name__ == "__main__":
    if len(sys.argv) != 3 or sys.argv[1] not in ("fixtures", "bench", "bench-torch"):
        sys.exit("usage: make_bert.py fixtures|bench|bench-torch DIR")
    os.makedirs(sys.argv[2], exist_ok=True)
    if sys.argv[1] == "fixtures":
        fixtures(sys.argv[2])
    else:
        bench(sys.argv[2], write=sys.argv[1] == "bench")
