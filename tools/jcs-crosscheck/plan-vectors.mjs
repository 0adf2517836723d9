// Cross-checks vectors/plan/v2.json (version-2 plans, docs/spec/dpp-general.md
// "Plan model and ids") against an independent RFC 8785 implementation: the
// npm package `canonicalize` on Node's JSON.parse.
//
//   node plan-vectors.mjs check   verify canonical, plan_id, proposal_document, proposal_id
//   node plan-vectors.mjs write   fill them in (and each input's own proposal_id), then check
//
// `plans`: each input is a plan; its canonical bytes, plan_id, and the
// proposal document and proposal_id of it as proposed.
// `seals`: each input is a plan as proposed, every `after` filled in, no-ops
// included; the outputs are its proposal document and proposal_id and the
// plan sealed from it (no-ops left out, that proposal_id), or null when
// every operation is a no-op (NO_CHANGES).
//
// The C++ side (tests/core/test_plan_v2.cpp) replays the stored file only.
import canonicalize from 'canonicalize';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const file = path.resolve(here, '../../vectors/plan/v2.json');
const mode = process.argv[2] ?? 'check';
if (mode !== 'check' && mode !== 'write') {
  console.error('usage: node plan-vectors.mjs check|write');
  process.exit(2);
}
const sha256 = (text) => createHash('sha256').update(Buffer.from(text, 'utf8')).digest('hex');
const ABSENT = { exists: false, gid: 0, mode: 0, sha256: '', uid: 0 };

// The proposal document, written from the spec's rule: every `after` absent
// and proposal_id "".
function proposalDocument(plan) {
  const p = structuredClone(plan);
  p.proposal_id = '';
  for (const op of p.operations) op.after = { ...ABSENT };
  return canonicalize(p);
}

const doc = JSON.parse(fs.readFileSync(file, 'utf8'));
let failures = 0;
for (const v of doc.plans) {
  let plan = JSON.parse(v.input);
  const pdoc = proposalDocument(plan);
  const pid = sha256(pdoc);
  const isProposal = plan.proposal_id === '';
  if (mode === 'write') {
    if (!isProposal) {
      v.input = v.input.replace(/"proposal_id": "[0-9a-f]*"/, `"proposal_id": "${pid}"`);
      plan = JSON.parse(v.input);
    }
    v.canonical = canonicalize(plan);
    v.plan_id = sha256(v.canonical);
    v.proposal_document = pdoc;
    v.proposal_id = pid;
  }
  const check = (what, got, want) => {
    if (got !== want) {
      failures++;
      console.log(`FAIL ${v.name}: ${what}\n  got  ${got}\n  want ${want}`);
    }
  };
  check('canonical', canonicalize(plan), v.canonical);
  check('plan_id', sha256(v.canonical), v.plan_id);
  check('proposal_document', pdoc, v.proposal_document);
  check('proposal_id', pid, v.proposal_id);
  check('the plan\'s own proposal_id', plan.proposal_id, isProposal ? '' : pid);
}
// The no-op rule, written from the spec: a write whose target already holds
// the same bytes and mode, a remove of an absent target.
const isNoop = (op) =>
  op.action === 'remove'
    ? !op.before.exists
    : op.before.exists && op.before.sha256 === op.after.sha256 && op.before.mode === op.after.mode;
for (const v of doc.seals ?? []) {
  const proposed = JSON.parse(v.input);
  const pdoc = proposalDocument(proposed);
  const pid = sha256(pdoc);
  const kept = proposed.operations.filter((op) => !isNoop(op));
  const sealed = kept.length ? canonicalize({ ...proposed, operations: kept, proposal_id: pid }) : null;
  if (mode === 'write') {
    v.proposal_document = pdoc;
    v.proposal_id = pid;
    v.sealed = sealed;
    v.plan_id = sealed === null ? null : sha256(sealed);
  }
  const check = (what, got, want) => {
    if (got !== want) {
      failures++;
      console.log(`FAIL ${v.name}: ${what}\n  got  ${got}\n  want ${want}`);
    }
  };
  check('proposal_document', pdoc, v.proposal_document);
  check('proposal_id', pid, v.proposal_id);
  check('sealed', sealed, v.sealed);
  check('plan_id', sealed === null ? null : sha256(sealed), v.plan_id);
}
const total = doc.plans.length + (doc.seals ?? []).length;
if (mode === 'write') fs.writeFileSync(file, JSON.stringify(doc, null, 1) + '\n');
console.log(`${total - failures} passed, ${failures} failed`);
process.exit(failures ? 1 : 0);
