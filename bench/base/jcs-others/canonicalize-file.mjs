// node canonicalize-file.mjs PACKAGE FILE: PACKAGE's canonical bytes of FILE on
// stdout, read and written as tools/jcs-crosscheck/canonicalize-file.mjs does
// for npm canonicalize 4.0.0 (one read, JSON.parse, one write), so that the
// packages differ only in their canonicalizer.
import { createRequire } from 'node:module';
import fs from 'node:fs';

const require = createRequire(import.meta.url);
const [pkg, file] = process.argv.slice(2);
let canonicalize;
switch (pkg) {
  case 'json-canonicalize': canonicalize = require('json-canonicalize').canonicalize; break;
  case '@truestamp/canonify': canonicalize = require('@truestamp/canonify').canonify; break;
  case 'json-canon': canonicalize = require('json-canon'); break;
  case 'canonicalize': canonicalize = (await import('canonicalize')).default; break;
  default: throw new Error(`unknown package ${pkg}`);
}
const text = fs.readFileSync(file, 'utf8');
process.stdout.write(canonicalize(JSON.parse(text)));
