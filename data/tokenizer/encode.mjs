// Encodes texts with js-tiktoken's cl100k_base, for msp's tokenizer
// agreement test (src/working/cl100k_test.cc): reads a JSON array of strings
// on standard input and prints a JSON array with the token ids of each,
// encoded as ordinary text (special tokens such as <|endoftext|> are not
// treated as special, as msp counts them).
//
//   echo '["hello world"]' | node data/tokenizer/encode.mjs
import { Tiktoken } from "js-tiktoken/lite";
import cl100k from "js-tiktoken/ranks/cl100k_base";

const chunks = [];
for await (const chunk of process.stdin) chunks.push(chunk);
const texts = JSON.parse(Buffer.concat(chunks).toString("utf8"));
const enc = new Tiktoken(cl100k);
const out = texts.map((t) => enc.encode(t, [], []));
process.stdout.write(JSON.stringify(out));
