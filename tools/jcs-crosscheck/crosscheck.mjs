// Cross-checks vectors/jcs against an independent implementation: the npm
// package `canonicalize` (pinned in package.json / package-lock.json) on
// Node's own JSON.parse, plus Number.prototype.toString for number files.
//
//   node crosscheck.mjs check   verify every expected output (exit 1 on any mismatch)
//   node crosscheck.mjs write   regenerate expected outputs (canonical, sha256,
//                               io/output files, number strings), then check
//
// Run it whenever vectors/jcs changes. The C++ tests never run this script:
// they replay the stored vectors only.
//
// Rejected vectors cannot be produced by canonicalize (JSON.parse is lenient:
// it keeps the last of duplicate keys, accepts lone surrogates, turns 1e400
// into Infinity), so each rejection is confirmed by an independent JavaScript
// check of its kind, written from the rule in docs/spec/jcs.md.
import canonicalize from 'canonicalize';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const vectorsDir = path.resolve(here, '../../vectors/jcs');
const mode = process.argv[2] ?? 'check';
if (mode !== 'check' && mode !== 'write') {
  console.error('usage: node crosscheck.mjs check|write');
  process.exit(2);
}

const MAX_SAFE = 9007199254740991n;
const MAX_DEPTH = 128; // the default json::ReadLimits::max_depth
let failures = 0;
let checked = 0;

function fail(name, message) {
  failures++;
  console.log(`FAIL ${name}: ${message}`);
}

function sha256(text) {
  return createHash('sha256').update(Buffer.from(text, 'utf8')).digest('hex');
}

function hasLoneSurrogate(s) {
  return !s.isWellFormed();
}

// A small tokenizer over a JSON text that JSON.parse has accepted, reporting
// what JSON.parse hides: every string and key unescaped (duplicates compared
// after unescaping, per object), every number's spelling, and the depth.
function inspect(text) {
  const facts = { duplicate: false, loneSurrogate: false, depth: 0, strings: [], numbers: [] };
  const stack = []; // per open container: null for arrays, a Set of keys for objects
  let i = 0;
  let expectKey = false;
  while (i < text.length) {
    const c = text[i];
    if (c === '{' || c === '[') {
      stack.push(c === '{' ? new Set() : null);
      facts.depth = Math.max(facts.depth, stack.length);
      expectKey = c === '{';
      i++;
    } else if (c === '}' || c === ']') {
      stack.pop();
      expectKey = false;
      i++;
    } else if (c === ',') {
      expectKey = stack.length > 0 && stack[stack.length - 1] !== null;
      i++;
    } else if (c === ':') {
      expectKey = false;
      i++;
    } else if (c === '"') {
      let j = i + 1;
      while (text[j] !== '"') j += text[j] === '\\' ? 2 : 1;
      const value = JSON.parse(text.slice(i, j + 1));
      if (hasLoneSurrogate(value)) facts.loneSurrogate = true;
      facts.strings.push(value);
      if (expectKey) {
        const keys = stack[stack.length - 1];
        if (keys.has(value)) facts.duplicate = true;
        keys.add(value);
        expectKey = false;
      }
      i = j + 1;
    } else if (c === '-' || (c >= '0' && c <= '9')) {
      const m = /^-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?/.exec(text.slice(i));
      facts.numbers.push(m[0]);
      i += m[0].length;
    } else {
      i++; // whitespace and literals
    }
  }
  return facts;
}

// Violations of a profile's value rules (not the JSON grammar), as kinds.
function profileViolations(facts, profile) {
  const kinds = new Set();
  if (facts.duplicate) kinds.add('duplicate_key');
  if (facts.loneSurrogate) kinds.add('invalid_unicode');
  if (facts.depth > MAX_DEPTH) kinds.add('depth');
  for (const n of facts.numbers) {
    const v = Number(n);
    if (!Number.isFinite(v)) kinds.add('invalid_number');
    if (profile === 'hello') {
      if (n.startsWith('-')) kinds.add('negative');
      else if (!/^[0-9]+$/.test(n)) kinds.add('fraction');
      else if (BigInt(n) > MAX_SAFE) kinds.add('unsafe_integer');
    }
    if (profile === 'metewand' && Number.isFinite(v) && Number.isInteger(v) && Math.abs(v) > Number(MAX_SAFE)) {
      kinds.add('unsafe_integer');
    }
  }
  if (profile === 'hello') {
    for (const s of facts.strings) {
      for (const ch of s) {
        const cp = ch.codePointAt(0);
        if (cp < 32 || cp > 126) kinds.add('not_printable_ascii');
      }
    }
  }
  return kinds;
}

function inputBytes(v) {
  return v.input_hex !== undefined ? Buffer.from(v.input_hex, 'hex') : Buffer.from(v.input, 'utf8');
}

// Why an input must be rejected, judged independently; null when it is fine.
function independentRejection(bytes, profile) {
  if (bytes.length >= 3 && bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf) return new Set(['bom']);
  let text;
  try {
    text = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true }).decode(bytes);
  } catch {
    return new Set(['utf8']);
  }
  try {
    JSON.parse(text);
  } catch {
    return new Set(['malformed', 'trailing']);
  }
  const kinds = profileViolations(inspect(text), profile);
  return kinds.size ? kinds : null;
}

function npmCanonical(text) {
  return canonicalize(JSON.parse(text));
}

function checkFixture(file) {
  const rel = path.relative(vectorsDir, file);
  const fx = JSON.parse(fs.readFileSync(file, 'utf8'));
  const profile = fx.profile ?? 'rfc8785';
  for (const v of fx.accepted ?? []) {
    const name = `${rel}#${v.name}`;
    checked++;
    const bytes = inputBytes(v);
    const why = independentRejection(bytes, profile);
    if (why) {
      fail(name, `accepted vector violates ${[...why].join(', ')}`);
      continue;
    }
    let expected;
    try {
      expected = npmCanonical(bytes.toString('utf8'));
    } catch (e) {
      fail(name, `canonicalize refused it: ${e.message}`);
      continue;
    }
    if (mode === 'write') {
      v.canonical = expected;
      if (v.sha256 !== undefined || profile === 'hello') v.sha256 = sha256(expected);
    }
    if (v.canonical !== expected) fail(name, `expected ${JSON.stringify(expected)}, vector has ${JSON.stringify(v.canonical)}`);
    if (v.sha256 !== undefined && v.sha256 !== sha256(expected)) fail(name, `sha256 differs from ${sha256(expected)}`);
  }
  for (const v of fx.rejected ?? []) {
    const name = `${rel}#${v.name}`;
    checked++;
    const why = independentRejection(inputBytes(v), profile);
    if (!why) fail(name, 'nothing independent rejects this input');
    else if (!why.has(v.kind)) fail(name, `kind ${v.kind} not confirmed (independent check found ${[...why].join(', ')})`);
  }
  if (mode === 'write') {
    const order = (v, keys) => Object.fromEntries(keys.filter((k) => v[k] !== undefined).map((k) => [k, v[k]]));
    const acc = (fx.accepted ?? []).map((v) => order(v, ['name', 'input', 'input_hex', 'canonical', 'sha256', 'note']));
    const rej = (fx.rejected ?? []).map((v) => order(v, ['name', 'kind', 'input', 'input_hex', 'note']));
    const out = ['{', '  "version": 1,', `  "profile": ${JSON.stringify(profile)},`];
    out.push(`  "description": ${JSON.stringify(fx.description)},`);
    out.push('  "accepted": [', acc.map((v) => '    ' + JSON.stringify(v)).join(',\n'), '  ],');
    out.push('  "rejected": [', rej.map((v) => '    ' + JSON.stringify(v)).join(',\n'), '  ]', '}');
    fs.writeFileSync(file, out.filter((l) => l !== '').join('\n') + '\n');
  }
}

function checkInputOutput(dir) {
  for (const leaf of fs.readdirSync(path.join(dir, 'input')).sort()) {
    const name = path.relative(vectorsDir, path.join(dir, 'input', leaf));
    checked++;
    const expected = npmCanonical(fs.readFileSync(path.join(dir, 'input', leaf), 'utf8'));
    const outFile = path.join(dir, 'output', leaf);
    if (mode === 'write') fs.writeFileSync(outFile, expected);
    const have = fs.existsSync(outFile) ? fs.readFileSync(outFile, 'utf8') : null;
    if (have !== expected) fail(name, `expected ${JSON.stringify(expected)}, output has ${JSON.stringify(have)}`);
  }
}

function checkNumbers(file) {
  const rel = path.relative(vectorsDir, file);
  const lines = fs.readFileSync(file, 'utf8').split('\n');
  const out = [];
  lines.forEach((line, idx) => {
    if (line === '') return;
    if (line.startsWith('#')) {
      out.push(line);
      return;
    }
    const [hex, have] = line.split(',');
    const buf = Buffer.alloc(8);
    buf.writeBigUInt64BE(BigInt('0x' + hex));
    const expected = String(buf.readDoubleBE(0));
    checked++;
    out.push(`${hex},${expected}`);
    if (mode !== 'write' && have !== expected) fail(`${rel}:${idx + 1}`, `expected ${expected}, file has ${have}`);
  });
  if (mode === 'write') fs.writeFileSync(file, out.join('\n') + '\n');
}

function walk(dir) {
  const entries = fs.readdirSync(dir, { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : 1));
  const io = entries.some((e) => e.name === 'input') && entries.some((e) => e.name === 'output');
  if (io) checkInputOutput(dir);
  for (const e of entries) {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) {
      if (!(io && ['input', 'output', 'outhex'].includes(e.name))) walk(p);
    } else if (e.name.endsWith('.json')) {
      checkFixture(p);
    } else if (e.name.endsWith('.numbers') || (path.basename(dir) === 'numbers' && e.name.endsWith('.txt'))) {
      checkNumbers(p);
    }
  }
}

walk(vectorsDir);
console.log(`${checked} vectors cross-checked against canonicalize@${JSON.parse(fs.readFileSync(path.join(here, 'node_modules/canonicalize/package.json'), 'utf8')).version}: ${checked - failures} passed, ${failures} failed`);
process.exit(failures ? 1 : 0);
