#!/usr/bin/env python3
"""Writes the version-1 (pre-capability) store fixtures of vectors/store/.

Version 1 is the store layout from before the post-commit-effects capability:
no effect ledger, no effect count, plans without an "effects" key. Each output
is a plain SQL script (reviewable text) that builds a complete version-1
database when fed to sqlite3 or sqlite3_exec.

The plans are hello-profile plans (docs/spec/dpp-hello.md) in canonical form: every
key sorted, no whitespace, ASCII only, small integers, which is exactly what
json.dumps(sort_keys=True, separators=(",", ":")) writes for such values.
plan_id = sha256(canonical bytes); proposal_id as the spec defines it.

Run from the repository root:  python3 vectors/store/make_v1_fixtures.py
"""
import hashlib
import json
import os

HERE = os.path.dirname(os.path.abspath(__file__))

ROOT_ID = "5" * 8 + hashlib.sha256(b"fixture root").hexdigest()[8:]
PLUGIN_DIGEST = hashlib.sha256(b"dot-hello fixture build").hexdigest()
T0 = 1764000000000  # 2025-11-24T16:00:00Z, an arbitrary fixed time

SCHEMA_V1 = """\
CREATE TABLE root (
  id INTEGER PRIMARY KEY CHECK (id = 1),
  root_id TEXT NOT NULL CHECK (length(root_id) = 64),
  created_at_ms INTEGER NOT NULL
);
CREATE TABLE plugin (
  id INTEGER PRIMARY KEY CHECK (id = 1),
  plugin_id TEXT NOT NULL,
  sha256 TEXT NOT NULL CHECK (length(sha256) = 64),
  manifest BLOB NOT NULL,
  registered_at_ms INTEGER NOT NULL
);
CREATE TABLE txn (
  id INTEGER PRIMARY KEY,
  state TEXT NOT NULL CHECK (state IN ('PROPOSING','ABANDONED','SEALED','DISCARDED','STALE',
    'PREPARED','COMMITTING','COMMITTED','ROLLING_BACK','ROLLED_BACK','DONE')),
  plugin_id TEXT NOT NULL,
  plugin_digest TEXT NOT NULL,
  proposal_id TEXT CHECK (proposal_id IS NULL OR length(proposal_id) = 64),
  plan_id TEXT UNIQUE CHECK (plan_id IS NULL OR length(plan_id) = 64),
  created_at_ms INTEGER NOT NULL,
  updated_at_ms INTEGER NOT NULL,
  finished_at_ms INTEGER,
  error_code TEXT,
  error_detail TEXT,
  plugin_stderr BLOB CHECK (plugin_stderr IS NULL OR length(plugin_stderr) <= 65536),
  stderr_truncated INTEGER NOT NULL DEFAULT 0,
  operation_count INTEGER NOT NULL DEFAULT 0,
  pruned INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX txn_by_state ON txn (state, id);
CREATE INDEX txn_by_proposal ON txn (proposal_id);
CREATE TABLE plan (
  txn_id INTEGER PRIMARY KEY REFERENCES txn (id),
  canonical BLOB NOT NULL,
  sealed_at_ms INTEGER NOT NULL
);
CREATE TABLE operation (
  txn_id INTEGER NOT NULL REFERENCES txn (id),
  slot INTEGER NOT NULL CHECK (slot >= 0),
  name TEXT NOT NULL,
  before_sha256 TEXT NOT NULL,
  after_sha256 TEXT NOT NULL,
  PRIMARY KEY (txn_id, slot)
) WITHOUT ROWID;
CREATE TABLE artifact (
  txn_id INTEGER NOT NULL REFERENCES txn (id),
  slot INTEGER NOT NULL CHECK (slot >= 0),
  bytes BLOB NOT NULL CHECK (length(bytes) <= 65536),
  sha256 TEXT NOT NULL CHECK (length(sha256) = 64),
  PRIMARY KEY (txn_id, slot)
);
CREATE TABLE backup (
  txn_id INTEGER NOT NULL REFERENCES txn (id),
  slot INTEGER NOT NULL CHECK (slot >= 0),
  present INTEGER NOT NULL CHECK (present IN (0, 1)),
  bytes BLOB NOT NULL CHECK (length(bytes) <= 65536),
  sha256 TEXT NOT NULL,
  PRIMARY KEY (txn_id, slot)
);
CREATE TABLE event (
  seq INTEGER PRIMARY KEY,
  txn_id INTEGER NOT NULL REFERENCES txn (id),
  state TEXT NOT NULL,
  at_ms INTEGER NOT NULL,
  code TEXT,
  detail TEXT
);
CREATE INDEX event_by_txn ON event (txn_id, seq);
"""

HISTORY = {
    "PROPOSING": ["PROPOSING"],
    "ABANDONED": ["PROPOSING", "ABANDONED"],
    "SEALED": ["PROPOSING", "SEALED"],
    "DISCARDED": ["PROPOSING", "SEALED", "DISCARDED"],
    "STALE": ["PROPOSING", "SEALED", "STALE"],
    "PREPARED": ["PROPOSING", "SEALED", "PREPARED"],
    "COMMITTING": ["PROPOSING", "SEALED", "PREPARED", "COMMITTING"],
    "COMMITTED": ["PROPOSING", "SEALED", "PREPARED", "COMMITTING", "COMMITTED"],
    "ROLLING_BACK": ["PROPOSING", "SEALED", "PREPARED", "COMMITTING", "ROLLING_BACK"],
    "ROLLED_BACK": ["PROPOSING", "SEALED", "PREPARED", "ROLLING_BACK", "ROLLED_BACK"],
    "DONE": ["PROPOSING", "SEALED", "PREPARED", "COMMITTING", "COMMITTED", "DONE"],
}
CODES = {
    "ABANDONED": ("DOT_E_PROTOCOL", "plugin wrote trailing bytes after the shutdown response"),
    "STALE": ("DOT_E_CONFLICT", "hello.txt changed since it was observed"),
    "ROLLED_BACK": ("DOT_E_COMMIT", "ENOSPC writing welcome.txt; rolled back"),
}
PAST_PREPARED = {"PREPARED", "COMMITTING", "COMMITTED", "ROLLING_BACK", "ROLLED_BACK", "DONE"}


def sha(b):
    return hashlib.sha256(b).hexdigest()


def canon(v):
    return json.dumps(v, sort_keys=True, separators=(",", ":"), ensure_ascii=True)


def absent():
    return {"exists": False, "gid": 0, "mode": 0, "sha256": "", "uid": 0}


def present(data):
    return {"exists": True, "gid": 0, "mode": 384, "sha256": sha(data), "uid": 0}


def q(s):
    return "'" + s.replace("'", "''") + "'"


def blob(data):
    # Text with newlines as char(10), so the script stays one statement per line.
    parts = data.decode("ascii").split("\n")
    expr = " || char(10) || ".join(q(p) for p in parts)
    return f"CAST({expr} AS BLOB)"


def transaction(n, state):
    """SQL for transaction number n (1-based row id) ending in `state`."""
    hello = f"Hello from fixture plan {n}\n".encode()
    welcome = f"Welcome, fixture plan {n}\n".encode()
    old_welcome = b"old welcome\n"
    befores = [absent(), present(old_welcome)]
    afters = [present(hello), present(welcome)]
    names = ["hello.txt", "welcome.txt"]
    nonce = sha(f"fixture nonce {n}".encode())
    proposal_doc = {
        "nonce": nonce,
        "operations": [{"after": absent(), "before": b, "name": nm} for b, nm in zip(befores, names)],
        "plugin_digest": PLUGIN_DIGEST,
        "proposal_id": "",
        "root_id": ROOT_ID,
        "version": 1,
    }
    proposal_id = sha(canon(proposal_doc).encode())
    plan_doc = dict(proposal_doc)
    plan_doc["operations"] = [{"after": a, "before": b, "name": nm} for a, b, nm in zip(afters, befores, names)]
    plan_doc["proposal_id"] = proposal_id
    plan_bytes = canon(plan_doc).encode()
    plan_id = sha(plan_bytes)
    hist = HISTORY[state]
    sealed = "SEALED" in hist
    t_created = T0 + n * 60000
    times = [t_created + i * 250 for i in range(len(hist))]
    code, detail = CODES.get(state, (None, None))
    out = [f"-- transaction {n}: {state}" + (f" (plan {plan_id})" if sealed else "")]
    stderr = "NULL"
    if state == "ABANDONED":
        stderr = blob(b"hello: bad state\nhello: exiting\n")
    out.append(
        "INSERT INTO txn (id, state, plugin_id, plugin_digest, proposal_id, plan_id, created_at_ms, "
        "updated_at_ms, finished_at_ms, error_code, error_detail, plugin_stderr, operation_count) VALUES ("
        f"{n}, {q(state)}, 'org.dot.hello', {q(PLUGIN_DIGEST)}, "
        f"{q(proposal_id) if state != 'PROPOSING' else 'NULL'}, {q(plan_id) if sealed else 'NULL'}, "
        f"{t_created}, {times[-1]}, {times[1] if len(times) > 1 else 'NULL'}, "
        f"{q(code) if code else 'NULL'}, {q(detail) if detail else 'NULL'}, {stderr}, {2 if sealed else 0});")
    if sealed:
        out.append(f"INSERT INTO plan (txn_id, canonical, sealed_at_ms) VALUES ({n}, CAST({q(plan_bytes.decode())} AS BLOB), {times[1]});")
        for slot, (nm, b, a, data) in enumerate(zip(names, befores, afters, [hello, welcome])):
            out.append(f"INSERT INTO operation VALUES ({n}, {slot}, {q(nm)}, {q(b['sha256'])}, {q(a['sha256'])});")
            out.append(f"INSERT INTO artifact VALUES ({n}, {slot}, {blob(data)}, {q(sha(data))});")
    if state in PAST_PREPARED:
        out.append(f"INSERT INTO backup VALUES ({n}, 0, 0, CAST('' AS BLOB), '');")
        out.append(f"INSERT INTO backup VALUES ({n}, 1, 1, {blob(old_welcome)}, {q(sha(old_welcome))});")
    for s, t in zip(hist, times):
        c, d = (code, detail) if s == state and code else (None, None)
        out.append(f"INSERT INTO event (txn_id, state, at_ms, code, detail) VALUES ({n}, {q(s)}, {t}, "
                   f"{q(c) if c else 'NULL'}, {q(d) if d else 'NULL'});")
    return "\n".join(out), (plan_id if sealed else None)


def script(title, states):
    manifest = canon({"assurance": "audit", "id": "org.dot.hello", "profile": "org.dot.hello/v1",
                      "protocol": 1, "sha256": PLUGIN_DIGEST})
    parts = [
        f"-- {title}",
        "-- A version-1 (pre-capability) dot-core store, generated by make_v1_fixtures.py.",
        "-- Build it with: sqlite3 fixture.db < this-file.sql",
        "PRAGMA application_id = 1148154947;  -- 0x446f7443, \"DotC\"",
        "PRAGMA user_version = 1;",
        "BEGIN;",
        SCHEMA_V1.rstrip(),
        f"INSERT INTO root VALUES (1, {q(ROOT_ID)}, {T0});",
        f"INSERT INTO plugin VALUES (1, 'org.dot.hello', {q(PLUGIN_DIGEST)}, CAST({q(manifest)} AS BLOB), {T0});",
    ]
    ids = []
    for n, state in enumerate(states, start=1):
        sql, plan_id = transaction(n, state)
        parts.append(sql)
        ids.append((n, state, plan_id))
    parts.append("COMMIT;")
    listing = "\n".join(f"--   {n:2} {s:<12} {p or '-'}" for n, s, p in ids)
    parts.insert(3, "-- Transactions (row id, state, plan id):\n" + listing)
    return "\n".join(parts) + "\n"


def main():
    all_states = list(HISTORY.keys())
    with open(os.path.join(HERE, "v1-all-states.sql"), "w") as f:
        f.write(script("Every state once (PROPOSING .. DONE), all pre-capability.", all_states))
    # One unfinished transaction each, beside finished ones: what a root holds
    # after a crash (at most one transaction is between PREPARED and its end).
    for state in ["PREPARED", "COMMITTING", "COMMITTED", "ROLLING_BACK"]:
        name = f"v1-unfinished-{state.lower().replace('_', '-')}.sql"
        with open(os.path.join(HERE, name), "w") as f:
            f.write(script(f"One unfinished {state} transaction beside finished and sealed ones.",
                           ["DONE", "SEALED", state]))


if __name__ == "__main__":
    main()
