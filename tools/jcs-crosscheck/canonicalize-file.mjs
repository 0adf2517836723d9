// node canonicalize-file.mjs FILE: the npm package's canonical bytes of FILE on
// stdout (the npm side of bench/base/jcs_bench.sh).
import canonicalize from 'canonicalize';
import fs from 'node:fs';

const text = fs.readFileSync(process.argv[2], 'utf8');
process.stdout.write(canonicalize(JSON.parse(text)));
