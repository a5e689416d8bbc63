"""The driver suite for psycopg 3 with its default settings (binary parameters for numbers, bytes and
datetimes, text results, automatic server-side prepare after 5 executions, pipeline mode in
executemany). Run by scripts/driver-suite; prints one PASS/FAIL line per check (tests/drivers/harness.py)."""
import datetime as dt
import random
import threading
import time
from decimal import Decimal

import psycopg
from psycopg import errors as E
from psycopg.types.numeric import Oid

from harness import DB, HOST, PORT, SOCKET_DIR, USER, Mismatch, expect, finish, run_sync

P = "psy_"  # this driver's table prefix
UTC = dt.timezone.utc
IST = dt.timezone(dt.timedelta(hours=5, minutes=30))


def conn(**kw):
    return psycopg.connect(host=HOST, port=PORT, user=USER, dbname=DB, connect_timeout=10, **kw)


def admin(sql):
    with conn(autocommit=True) as c:
        c.execute(sql)


def drop(*tables):
    for t in tables:
        try:
            admin(f"DROP TABLE IF EXISTS {t}")
        except psycopg.Error:
            pass


# (column type, [(parameter, value read back)]): every value goes in as a parameter and comes back as a result.
TYPES = {
    "int2": ("int2", [(0, 0), (-32768, -32768), (32767, 32767)]),
    "int4": ("int4", [(42, 42), (-2147483648, -2147483648), (2147483647, 2147483647)]),
    "int8": ("int8", [(9007199254740993, 9007199254740993), (-9223372036854775808, -9223372036854775808),
                      (9223372036854775807, 9223372036854775807)]),
    "float4": ("float4", [(1.5, 1.5), (-0.25, -0.25), (1e10, 1e10)]),
    "float8": ("float8", [(0.1, 0.1), (-2.5e-300, -2.5e-300), (1.7976931348623157e308, 1.7976931348623157e308),
                          (float("inf"), float("inf"))]),
    "bool": ("bool", [(True, True), (False, False)]),
    "text": ("text", [("hello", "hello"), ("", ""), ("ünïcødé ✓ 'q' \\ \"d\"\n\t", "ünïcødé ✓ 'q' \\ \"d\"\n\t")]),
    "varchar": ("varchar(20)", [("abc", "abc"), ("", "")]),
    "bpchar": ("char(5)", [("ab", "ab   "), ("abcde", "abcde")]),
    "bytea": ("bytea", [(b"\x00\x01'\\\xfe\xff", b"\x00\x01'\\\xfe\xff"), (b"", b""), (bytes(range(256)), bytes(range(256)))]),
    "oid": ("oid", [(Oid(0), 0), (Oid(4294967295), 4294967295), (Oid(12345), 12345)]),
    "numeric": ("numeric", [(Decimal("12345678901234567890.123456789"), Decimal("12345678901234567890.123456789")),
                            (Decimal("-0.000001"), Decimal("-0.000001")), (Decimal("0"), Decimal("0"))]),
    "numeric(12,2)": ("numeric(12,2)", [(Decimal("1234567890.12"), Decimal("1234567890.12")),
                                        (Decimal("-0.05"), Decimal("-0.05")), (Decimal("1.005"), Decimal("1.01")),
                                        (Decimal("7"), Decimal("7.00"))]),
    "date": ("date", [(dt.date(2024, 2, 29), dt.date(2024, 2, 29)), (dt.date(1999, 12, 31), dt.date(1999, 12, 31)),
                      (dt.date(1, 1, 1), dt.date(1, 1, 1))]),
    "timestamp": ("timestamp", [(dt.datetime(2024, 1, 2, 3, 4, 5, 123456), dt.datetime(2024, 1, 2, 3, 4, 5, 123456)),
                                (dt.datetime(1999, 12, 31, 23, 59, 59), dt.datetime(1999, 12, 31, 23, 59, 59)),
                                (dt.datetime(2000, 1, 1), dt.datetime(2000, 1, 1))]),
    "timestamptz": ("timestamptz", [(dt.datetime(2024, 1, 2, 3, 4, 5, 123456, UTC), dt.datetime(2024, 1, 2, 3, 4, 5, 123456, UTC)),
                                    (dt.datetime(2024, 7, 1, 12, 0, tzinfo=IST), dt.datetime(2024, 7, 1, 6, 30, tzinfo=UTC)),
                                    (dt.datetime(1999, 12, 31, 23, 59, 59, tzinfo=UTC), dt.datetime(1999, 12, 31, 23, 59, 59, tzinfo=UTC))]),
}


def type_check(name, column, cases):
    table = P + "t_" + "".join(ch if ch.isalnum() else "_" for ch in name)

    def check():
        drop(table)
        with conn() as c:
            c.execute(f"CREATE TABLE {table} (id int4 PRIMARY KEY, v {column})")
            for k, (param, _) in enumerate(cases, 1):
                c.execute(f"INSERT INTO {table} (id, v) VALUES (%s, %s)", (k, param))
            c.execute(f"INSERT INTO {table} (id, v) VALUES (%s, %s)", (0, None))
            c.commit()
            for fmt, cur in (("text", c.cursor()), ("binary", c.cursor(binary=True))):
                rows = cur.execute(f"SELECT v FROM {table} ORDER BY id").fetchall()
                expect(len(rows), len(cases) + 1, f"{fmt} results: rows")
                if rows[0][0] is not None:
                    raise Mismatch(f"{fmt} results: NULL came back as {rows[0][0]!r}")
                for (got,), (param, want) in zip(rows[1:], cases):
                    expect(got, want, f"{fmt} results for parameter {param!r}")
                    if isinstance(want, dt.datetime) and want.tzinfo is not None and got.utcoffset() is None:
                        raise Mismatch(f"{fmt} results: {got!r} lost its time zone")
            # The value as a parameter in a comparison, and as a result of an expression on a parameter.
            param, want = cases[0]
            got = c.execute(f"SELECT count(*) FROM {table} WHERE v = %s", (param,)).fetchone()
            expect(got, (1,), f"WHERE v = {param!r}")
            got = c.execute(f"SELECT CAST(%s AS {column})", (param,)).fetchone()[0]
            expect(got, want, f"SELECT CAST(%s AS {column})")
            if column == "numeric(12,2)":  # exact arithmetic on the column, with a parameter
                got = c.execute(f"SELECT v * 3, v + %s FROM {table} WHERE id = 1", (Decimal("0.01"),)).fetchone()
                expect(got, (Decimal("3703703670.36"), Decimal("1234567890.13")), "v * 3, v + 0.01")
    run_sync(f"types.{name}", check)


def connect_tcp():
    with psycopg.connect(host="127.0.0.1", port=PORT, user=USER, dbname=DB, connect_timeout=10) as c:
        expect(c.execute("SELECT 1").fetchone(), (1,))
        expect(c.info.host, "127.0.0.1")


def connect_unix():
    with psycopg.connect(host=SOCKET_DIR, port=PORT, user=USER, dbname=DB, connect_timeout=10) as c:
        expect(c.execute("SELECT 1").fetchone(), (1,))
        expect(c.info.host, SOCKET_DIR)


def batch_executemany():
    t = P + "many"
    drop(t)
    rows = [(k, f"v{k}", Decimal(k) / 4) for k in range(500)]
    with conn() as c:
        c.execute(f"CREATE TABLE {t} (id int4 PRIMARY KEY, v text, n numeric(12,2))")
        with c.cursor() as cur:
            cur.executemany(f"INSERT INTO {t} VALUES (%s, %s, %s)", rows)
            expect(cur.rowcount, 500, "executemany rowcount")
            cur.executemany(f"UPDATE {t} SET v = v || '!' WHERE id = %s", [(k,) for k in range(0, 500, 50)])
            expect(cur.rowcount, 10, "executemany UPDATE rowcount")
        c.commit()
        expect(c.execute(f"SELECT count(*), sum(id), sum(n) FROM {t}").fetchone(), (500, 124750, Decimal("31187.50")))
        expect(c.execute(f"SELECT v FROM {t} WHERE id = 50").fetchone(), ("v50!",))


def batch_pipeline():
    t = P + "pipe"
    drop(t)
    with conn(autocommit=True) as c:
        c.execute(f"CREATE TABLE {t} (id int4 PRIMARY KEY, v int8)")
        with c.pipeline():
            curs = []
            for k in range(100):
                c.execute(f"INSERT INTO {t} VALUES (%s, %s)", (k, k * k))
            for k in range(0, 100, 10):
                curs.append((k, c.execute(f"SELECT v FROM {t} WHERE id = %s", (k,))))
        for k, cur in curs:
            expect(cur.fetchone(), (k * k,), f"pipelined SELECT id = {k}")
        # An error inside a pipeline: the statements after it are not run, the pipeline reports it.
        try:
            with c.pipeline():
                c.execute(f"INSERT INTO {t} VALUES (%s, %s)", (1000, 1))
                c.execute(f"INSERT INTO {t} VALUES (%s, %s)", (1, 1))  # duplicate
                c.execute(f"INSERT INTO {t} VALUES (%s, %s)", (1001, 1))
            raise Mismatch("a duplicate key inside a pipeline raised nothing")
        except E.UniqueViolation:
            pass
        # One Sync ends the pipeline: its statements ran in one implicit transaction, which the error rolled back.
        expect(c.execute(f"SELECT count(*) FROM {t}").fetchone(), (100,), "rows after the failed pipeline")


def copy_text():
    t = P + "copy_text"
    drop(t)
    rows = [(k, f"r{k} ü\t'\\\n", None if k % 7 == 0 else Decimal(k) / 100, dt.date(2024, 1, 1) + dt.timedelta(days=k))
            for k in range(300)]
    with conn() as c:
        c.execute(f"CREATE TABLE {t} (id int8 PRIMARY KEY, v text, n numeric(12,2), d date)")
        with c.cursor().copy(f"COPY {t} (id, v, n, d) FROM STDIN") as cp:
            for r in rows:
                cp.write_row(r)
        c.commit()
        with c.cursor().copy(f"COPY {t} TO STDOUT") as cp:
            cp.set_types(["int8", "text", "numeric", "date"])
            back = sorted(cp.rows())
        expect(back, rows, "COPY TO STDOUT rows")


def copy_binary():
    t = P + "copy_bin"
    drop(t)
    rows = [(k, f"b{k}", k % 2 == 0, float(k) / 8, b"\x00" + bytes([k % 256]), Decimal(k) / 100,
             dt.datetime(2024, 1, 1) + dt.timedelta(seconds=k), dt.datetime(2024, 1, 1, tzinfo=UTC) + dt.timedelta(minutes=k))
            for k in range(200)]
    types = ["int8", "text", "bool", "float8", "bytea", "numeric", "timestamp", "timestamptz"]
    with conn() as c:
        c.execute(f"CREATE TABLE {t} (id int8 PRIMARY KEY, v text, ok bool, f float8, by bytea, n numeric(12,2), "
                  "ts timestamp, tz timestamptz)")
        with c.cursor().copy(f"COPY {t} FROM STDIN (FORMAT BINARY)") as cp:
            cp.set_types(types)
            for r in rows:
                cp.write_row(r)
        c.commit()
        expect(c.execute(f"SELECT count(*), sum(id) FROM {t}").fetchone(), (200, 19900))
        with c.cursor().copy(f"COPY {t} TO STDOUT (FORMAT BINARY)") as cp:
            cp.set_types(types)
            back = sorted(cp.rows())
        expect(back, rows, "COPY TO STDOUT (FORMAT BINARY) rows")


def copy_csv():
    t = P + "copy_csv"
    drop(t)

    def cell(v):
        return "" if v is None else '"' + v.replace('"', '""') + '"'
    rows = [(k, f'n{k} "q"; s', None if k % 3 == 0 else "" if k % 3 == 1 else f"line{k}\nnext") for k in range(1, 201)]
    data = "id;name;note\n" + "".join(f"{k};{cell(a)};{cell(b)}\n" for k, a, b in rows)
    with conn() as c:
        c.execute(f"CREATE TABLE {t} (id int4 PRIMARY KEY, name text, note text)")
        with c.cursor().copy(f"COPY {t} FROM STDIN (FORMAT csv, HEADER, DELIMITER ';')") as cp:
            cp.write(data)
        c.commit()
        expect(c.execute(f"SELECT count(*), count(note), count(*) FILTER (WHERE note = '') FROM {t}").fetchone(),
               (200, 134, 67))
        expect(c.execute(f"SELECT id, name, note FROM {t} WHERE id IN (7, 8, 9) ORDER BY id").fetchall(), rows[6:9])
        out = bytearray()
        with c.cursor().copy(f"COPY (SELECT id, note FROM {t} WHERE id <= 3 ORDER BY id) TO STDOUT "
                             "(FORMAT csv, HEADER, NULL 'NULL')") as cp:
            for chunk in cp:
                out += chunk
        expect(bytes(out).decode(), 'id,note\n1,\n2,"line2\nnext"\n3,NULL\n', "COPY TO STDOUT csv")


def prepared():
    t = P + "prep"
    drop(t)
    with conn() as c:
        c.execute(f"CREATE TABLE {t} (id int4 PRIMARY KEY, grp int4, v text)")
        c.cursor().executemany(f"INSERT INTO {t} VALUES (%s, %s, %s)", [(k, k % 10, f"v{k}") for k in range(1000)])
        c.commit()
        q = f"SELECT count(*), min(v) FROM {t} WHERE grp = %s AND id >= %s"
        # psycopg prepares a statement on the server after prepare_threshold (5) executions; PostgreSQL
        # considers its generic plan after 5 custom ones. 12 executions go past both.
        for k in range(12):
            g, lo = k % 10, k * 50
            want = sum(1 for i in range(lo, 1000) if i % 10 == g)
            vals = sorted(f"v{i}" for i in range(lo, 1000) if i % 10 == g)
            expect(c.execute(q, (g, lo)).fetchone(), (want, vals[0]), f"execution {k + 1}")
        # psycopg's cache of server-side statement names (private, but the version is pinned)
        if not any(b"grp = $1" in key[0] for key in c._prepared._names):
            raise Mismatch("psycopg did not prepare the statement on the server after 12 executions")
        for k in range(8):  # explicitly prepared from the first execution, with NULL parameters too
            got = c.execute(f"SELECT v FROM {t} WHERE id = %s", (k if k % 4 else None,), prepare=True).fetchone()
            expect(got, (f"v{k}",) if k % 4 else None, f"prepare=True execution {k + 1}")


def transactions():
    t = P + "tx"
    drop(t)
    with conn() as c, conn() as other:
        other.autocommit = True
        c.execute(f"CREATE TABLE {t} (id int4 PRIMARY KEY, v text)")
        c.commit()
        c.execute(f"INSERT INTO {t} VALUES (1, 'committed')")
        expect(other.execute(f"SELECT count(*) FROM {t}").fetchone(), (0,), "uncommitted row seen by another session")
        c.commit()
        expect(other.execute(f"SELECT v FROM {t}").fetchall(), [("committed",)], "after commit")
        c.execute(f"INSERT INTO {t} VALUES (2, 'rolled back')")
        c.rollback()
        expect(c.execute(f"SELECT count(*) FROM {t}").fetchone(), (1,), "after rollback")
        c.rollback()
        c.autocommit = True
        try:
            with c.transaction():
                c.execute(f"INSERT INTO {t} VALUES (3, 'in a block that raises')")
                raise ZeroDivisionError
        except ZeroDivisionError:
            pass
        expect(c.execute(f"SELECT count(*) FROM {t}").fetchone(), (1,), "after a transaction block raised")
        with c.transaction():
            c.execute(f"INSERT INTO {t} VALUES (4, 'block')")
        expect(other.execute(f"SELECT count(*) FROM {t}").fetchone(), (2,), "after a transaction block")
        # An error aborts the transaction: the next statement gets 25P02 until ROLLBACK.
        c.autocommit = False
        c.execute(f"INSERT INTO {t} VALUES (5, 'x')")
        try:
            c.execute(f"INSERT INTO {t} VALUES (5, 'x')")
            raise Mismatch("a duplicate key raised nothing")
        except E.UniqueViolation:
            pass
        try:
            c.execute("SELECT 1")
            raise Mismatch("a statement in an aborted transaction ran")
        except E.InFailedSqlTransaction as e:
            expect(e.sqlstate, "25P02")
        c.rollback()
        expect(c.execute(f"SELECT count(*) FROM {t}").fetchone(), (2,), "after the failed transaction's rollback")
        c.rollback()


def errors():
    t = P + "err"
    drop(t)
    with conn(autocommit=True) as c:
        c.execute(f"CREATE TABLE {t} (id int4 PRIMARY KEY, v text)")
        c.execute(f"INSERT INTO {t} VALUES (%s, %s)", (1, "a"))
        try:
            c.execute(f"INSERT INTO {t} VALUES (%s, %s)", (1, "b"))
            raise Mismatch("the duplicate key INSERT succeeded")
        except E.UniqueViolation as e:
            d = e.diag
            got = (e.sqlstate, d.constraint_name, d.table_name, d.schema_name, d.message_detail)
            expect(got, ("23505", f"{t}_pkey", t, "public", "Key (id)=(1) already exists."),
                   "sqlstate, constraint, table, schema, detail")
        expect(c.execute("SELECT 1").fetchone(), (1,), "the connection after the error")


def errors_statement():
    with conn(autocommit=True) as c:
        for sql, state, cls in (("SELEC 1", "42601", E.SyntaxError), (f"SELECT * FROM {P}missing", "42P01", E.UndefinedTable),
                                (f"SELECT * FROM {P}missing WHERE id = %s", "42P01", E.UndefinedTable)):
            try:
                c.execute(sql, (1,) if "%s" in sql else None)
                raise Mismatch(f"{sql!r} raised nothing")
            except psycopg.Error as e:
                if not isinstance(e, cls) or e.sqlstate != state:
                    raise Mismatch(f"{sql!r}: got [{e.sqlstate}] {e}, want {state}") from e
        expect(c.execute("SELECT 1").fetchone(), (1,), "the connection after the errors")


def cancel():
    t = P + "cancel"
    drop(t)
    with conn(autocommit=True) as holder, conn(autocommit=True) as waiter:
        holder.execute(f"CREATE TABLE {t} (id int4 PRIMARY KEY, v int4)")
        holder.execute(f"INSERT INTO {t} VALUES (1, 0)")
        holder.autocommit = False
        holder.execute(f"UPDATE {t} SET v = 1 WHERE id = 1")  # holds the row lock
        canceller = threading.Timer(1.0, waiter.cancel_safe)
        started = time.monotonic()
        canceller.start()
        try:
            waiter.execute(f"UPDATE {t} SET v = 2 WHERE id = 1")  # waits for the row
            raise Mismatch("the UPDATE waiting for a locked row finished instead of being cancelled")
        except E.QueryCanceled as e:
            expect(e.sqlstate, "57014")
        finally:
            canceller.join()
        if time.monotonic() - started < 0.9:
            raise Mismatch("the UPDATE ended before the cancel was sent")
        expect(waiter.execute("SELECT 1").fetchone(), (1,), "the cancelled connection afterwards")
        holder.commit()
        expect(waiter.execute(f"SELECT v FROM {t}").fetchone(), (1,), "the row after the cancelled UPDATE")


def workload():
    """4 sessions make random transfers between 10 accounts, each in a transaction with its rows locked in
    id order, and log each one; the total never changes and every balance equals its logged movements."""
    acc, log = P + "accounts", P + "transfers"
    drop(acc, log)
    n_acc, start, sessions, per_session = 10, 1000, 4, 40
    with conn() as c:
        c.execute(f"CREATE TABLE {acc} (id int4 PRIMARY KEY, balance numeric(12,2) NOT NULL)")
        c.execute(f"CREATE TABLE {log} (id int8 PRIMARY KEY, src int4, dst int4, amount numeric(12,2))")
        c.cursor().executemany(f"INSERT INTO {acc} VALUES (%s, %s)", [(k, Decimal(start)) for k in range(n_acc)])
        c.commit()
    failures, done = [], []

    def session(s):
        rng = random.Random(s)
        try:
            with conn() as c:
                for k in range(per_session):
                    a, b = rng.sample(range(n_acc), 2)
                    amount = Decimal(rng.randint(1, 5000)) / 100
                    with c.transaction():
                        for i in sorted((a, b)):
                            c.execute(f"SELECT balance FROM {acc} WHERE id = %s FOR UPDATE", (i,))
                        bal = c.execute(f"SELECT balance FROM {acc} WHERE id = %s", (a,)).fetchone()[0]
                        if bal < amount:
                            continue
                        c.execute(f"UPDATE {acc} SET balance = balance - %s WHERE id = %s", (amount, a))
                        c.execute(f"UPDATE {acc} SET balance = balance + %s WHERE id = %s", (amount, b))
                        c.execute(f"INSERT INTO {log} VALUES (%s, %s, %s, %s)", (s * 1000 + k, a, b, amount))
                    done.append(1)
        except Exception as e:  # noqa: BLE001
            failures.append(f"session {s}: {type(e).__name__}: {e}")
    threads = [threading.Thread(target=session, args=(s,)) for s in range(sessions)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    if failures:
        raise Mismatch("; ".join(failures))
    with conn() as c:
        total = c.execute(f"SELECT sum(balance), count(*) FROM {acc}").fetchone()
        expect(total, (Decimal(start * n_acc), n_acc), "sum of balances")
        balances = dict(c.execute(f"SELECT id, balance FROM {acc}").fetchall())
        for src, dst, amount in c.execute(f"SELECT src, dst, amount FROM {log}").fetchall():
            balances[src] += amount
            balances[dst] -= amount
        bad = {k: v for k, v in balances.items() if v != start}
        if bad:
            raise Mismatch(f"balances with their logged transfers undone, want {start} each: {bad}")
        n = c.execute(f"SELECT count(*) FROM {log}").fetchone()[0]
        if n == 0:
            raise Mismatch("no transfer was made")


def main():
    run_sync("connect.tcp", connect_tcp)
    run_sync("connect.unix", connect_unix)
    for name, (column, cases) in TYPES.items():
        type_check(name, column, cases)
    run_sync("batch.executemany", batch_executemany)
    run_sync("batch.pipeline", batch_pipeline)
    run_sync("copy.text", copy_text)
    run_sync("copy.binary", copy_binary)
    run_sync("copy.csv_options", copy_csv)
    run_sync("prepared.generic_plan", prepared)
    run_sync("transactions", transactions)
    run_sync("errors.unique_violation", errors)
    run_sync("errors.syntax_and_missing_table", errors_statement)
    run_sync("cancel", cancel)
    run_sync("workload.transfers", workload, timeout_s=120)
    finish()


if __name__ == "__main__":
    main()
