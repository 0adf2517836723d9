"""bench/core/growth.py: what many applied plans weigh in a root's journal, without waiting
hours for their fsyncs (docs/PERFORMANCE.md, "Core engine"). Used by compare.py (hello plans)
and compare_v2.py (version-2 plans)."""
import os, sqlite3

# The rows one transaction owns, per kind of plan.
HELLO_TABLES = ("plan", "operation", "artifact", "backup", "effect", "event")
V2_TABLES = ("plan", "operation", "file_artifact", "file_backup", "effect", "event", "proposal_log")


def grow(root, n, tables, txn=1):
    """Clones the root's DONE transaction `txn` n times at the SQL level: its txn row (fresh
    proposal and plan ids) and its rows of every table in `tables`. Then the owner of each of
    its paths is the newest clone, re-derived as Store::transition does it. The clones' ids are
    random, not their plans' digests: `store check` reports them as tampered, nothing else."""
    db = sqlite3.connect(os.path.join(root, ".dot", "store.db"))
    def cols(table):
        info = list(db.execute(f"PRAGMA table_info({table})"))
        key = [r for r in info if r[5] > 0]
        # A lone INTEGER PRIMARY KEY is the rowid (txn.id, event.seq): each clone gets its own;
        # txn_id is set to the clone's id below.
        rowid = key[0][1] if len(key) == 1 and key[0][2].upper() == "INTEGER" and key[0][1] != "txn_id" else None
        return [r[1] for r in info if r[1] != rowid]
    tc = cols("txn")
    fresh = {"proposal_id": "lower(hex(randomblob(32)))", "plan_id": "lower(hex(randomblob(32)))"}
    db.execute("BEGIN")
    first = db.execute("SELECT max(id) + 1 FROM txn").fetchone()[0]
    db.execute(f"WITH RECURSIVE k(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM k WHERE i < {n}) "
               f"INSERT INTO txn ({', '.join(tc)}) SELECT {', '.join(fresh.get(c, 't.' + c) for c in tc)} "
               f"FROM k, (SELECT * FROM txn WHERE id = {txn}) t")
    for table in tables:
        c = cols(table)
        sel = ", ".join("x.id" if x == "txn_id" else "o." + x for x in c)
        db.execute(f"INSERT INTO {table} ({', '.join(c)}) SELECT {sel} FROM txn x, {table} o "
                   f"WHERE x.id >= {first} AND o.txn_id = {txn}")
    for (name,) in db.execute("SELECT name FROM operation WHERE txn_id = ?", (txn,)).fetchall():
        db.execute("DELETE FROM path_owner WHERE path = ?", (name,))
        db.execute("INSERT INTO path_owner (path, plugin_id, txn_id) SELECT path, plugin_id, txn_id "
                   "FROM derived_owner WHERE path = ?", (name,))
    db.commit()
    db.close()
