"""The driver suite for asyncpg with its default settings (binary format for parameters and results,
statements prepared with Parse/Describe/Flush and cached, binary COPY for copy_records_to_table).
Run by scripts/driver-suite; prints one PASS/FAIL line per check (tests/drivers/harness.py)."""
import asyncio
import datetime as dt
import io
import random
from decimal import Decimal

import asyncpg

from harness import DB, HOST, PORT, SOCKET_DIR, USER, Mismatch, expect, finish, run_async

P = "apg_"  # this driver's table prefix
UTC = dt.timezone.utc
IST = dt.timezone(dt.timedelta(hours=5, minutes=30))
ERROR_WAIT_S = 3  # an error must come back this fast (PostgreSQL answers at once)


async def conn(host=HOST):
    return await asyncpg.connect(host=host, port=PORT, user=USER, database=DB, timeout=10)


async def drop(c, *tables):
    for t in tables:
        try:
            await c.execute(f"DROP TABLE IF EXISTS {t}")
        except asyncpg.PostgresError:
            pass


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
    "oid": ("oid", [(0, 0), (4294967295, 4294967295), (12345, 12345)]),
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

    async def check():
        c = await conn()
        try:
            await drop(c, table)
            await c.execute(f"CREATE TABLE {table} (id int4 PRIMARY KEY, v {column})")
            for k, (param, _) in enumerate(cases, 1):
                await c.execute(f"INSERT INTO {table} (id, v) VALUES ($1, $2)", k, param)
            await c.execute(f"INSERT INTO {table} (id, v) VALUES ($1, $2)", 0, None)
            rows = await c.fetch(f"SELECT v FROM {table} ORDER BY id")
            expect(len(rows), len(cases) + 1, "rows")
            if rows[0][0] is not None:
                raise Mismatch(f"NULL came back as {rows[0][0]!r}")
            for row, (param, want) in zip(rows[1:], cases):
                expect(row["v"], want, f"result for parameter {param!r}")
            param, want = cases[0]
            expect(await c.fetchval(f"SELECT count(*) FROM {table} WHERE v = $1", param), 1, f"WHERE v = {param!r}")
            expect(await c.fetchval(f"SELECT $1::{column}", param), want, f"SELECT $1::{column}")
            if column == "numeric(12,2)":  # exact arithmetic on the column, with a parameter
                got = tuple(await c.fetchrow(f"SELECT v * 3, v + $1 FROM {table} WHERE id = 1", Decimal("0.01")))
                expect(got, (Decimal("3703703670.36"), Decimal("1234567890.13")), "v * 3, v + 0.01")
        finally:
            await c.close()
    return f"types.{name}", check


async def connect_tcp():
    c = await conn("127.0.0.1")
    expect(await c.fetchval("SELECT 1"), 1)
    await c.close()


async def connect_unix():
    c = await conn(SOCKET_DIR)
    expect(await c.fetchval("SELECT 1"), 1)
    await c.close()


async def batch_executemany():
    t = P + "many"
    c = await conn()
    await drop(c, t)
    await c.execute(f"CREATE TABLE {t} (id int4 PRIMARY KEY, v text, n numeric(12,2))")
    await c.executemany(f"INSERT INTO {t} VALUES ($1, $2, $3)", [(k, f"v{k}", Decimal(k) / 4) for k in range(500)])
    expect(tuple(await c.fetchrow(f"SELECT count(*), sum(id), sum(n) FROM {t}")), (500, 124750, Decimal("31187.50")))
    # executemany is atomic: a failing row undoes the whole batch.
    try:
        await c.executemany(f"INSERT INTO {t} VALUES ($1, $2, $3)", [(k, "x", None) for k in (1000, 1001, 1, 1002)])
        raise Mismatch("a batch with a duplicate key raised nothing")
    except asyncpg.UniqueViolationError:
        pass
    expect(await c.fetchval(f"SELECT count(*) FROM {t}"), 500, "rows after the failed batch")
    await c.close()


async def copy_in_out():
    t = P + "copy"
    c = await conn()
    await drop(c, t)
    await c.execute(f"CREATE TABLE {t} (id int8 PRIMARY KEY, v text, ok bool, f float8, by bytea, n numeric(12,2), "
                    "d date, ts timestamp, tz timestamptz)")
    recs = [(k, f"r{k} ü\t'\\", k % 2 == 0, k / 8, bytes([k % 256, 0]), Decimal(k) / 100, dt.date(2024, 1, 1) + dt.timedelta(days=k),
             dt.datetime(2024, 1, 1) + dt.timedelta(seconds=k), dt.datetime(2024, 1, 1, tzinfo=UTC) + dt.timedelta(minutes=k))
            for k in range(300)]
    status = await c.copy_records_to_table(t, records=recs)  # COPY ... FROM STDIN (FORMAT binary)
    expect(status, "COPY 300", "copy_records_to_table status")
    back = [tuple(r) for r in await c.fetch(f"SELECT * FROM {t} ORDER BY id")]
    expect(back, recs, "rows after copy_records_to_table")
    # copy_from_table: COPY ... TO STDOUT, text and csv formats
    out = io.BytesIO()
    status = await c.copy_from_table(t, columns=["id", "v", "n"], output=out)
    expect(status, "COPY 300", "copy_from_table status")
    lines = sorted(out.getvalue().decode().splitlines(), key=lambda x: int(x.split("\t")[0]))
    expect(lines[3], "3\tr3 ü\\t'\\\\\t0.03", "copy_from_table text line for id 3")
    out = io.BytesIO()
    await c.copy_from_query(f"SELECT id, v FROM {t} WHERE id < $1 ORDER BY id", 2, output=out, format="csv", header=True)
    expect(out.getvalue().decode(), "id,v\n0,r0 ü\t'\\\n1,r1 ü\t'\\\n", "copy_from_query csv")
    # copy_to_table from a CSV source with options: COPY ... FROM STDIN (FORMAT csv, HEADER, DELIMITER '|', NULL 'none')
    t2 = P + "copy_csv"
    await drop(c, t2)
    await c.execute(f"CREATE TABLE {t2} (id int4 PRIMARY KEY, name text, note text)")
    src = io.BytesIO(b"id|name|note\n1|a|none\n2|\"b|c\"|\n3|d|x\n")
    status = await c.copy_to_table(t2, source=src, format="csv", header=True, delimiter="|", null="none")
    expect(status, "COPY 3", "copy_to_table status")
    expect([tuple(r) for r in await c.fetch(f"SELECT * FROM {t2} ORDER BY id")],
           [(1, "a", None), (2, "b|c", ""), (3, "d", "x")], "rows after copy_to_table csv")
    await c.close()


async def prepared():
    t = P + "prep"
    c = await conn()
    await drop(c, t)
    await c.execute(f"CREATE TABLE {t} (id int4 PRIMARY KEY, grp int4, v text)")
    await c.executemany(f"INSERT INTO {t} VALUES ($1, $2, $3)", [(k, k % 10, f"v{k}") for k in range(1000)])
    stmt = await c.prepare(f"SELECT count(*), min(v) FROM {t} WHERE grp = $1 AND id >= $2")
    expect([a.name for a in stmt.get_attributes()], ["count", "min"], "prepared statement's columns")
    expect([p.name for p in stmt.get_parameters()], ["int4", "int4"], "prepared statement's parameter types")
    # PostgreSQL considers the generic plan after 5 custom ones: 12 executions go past it.
    for k in range(12):
        g, lo = k % 10, k * 50
        want = sum(1 for i in range(lo, 1000) if i % 10 == g)
        vals = sorted(f"v{i}" for i in range(lo, 1000) if i % 10 == g)
        expect(tuple(await stmt.fetchrow(g, lo)), (want, vals[0]), f"execution {k + 1}")
    for k in range(12):  # the connection's statement cache: fetchval prepares once, then reuses
        expect(await c.fetchval(f"SELECT v FROM {t} WHERE id = $1", k * 7), f"v{k * 7}", f"cached execution {k + 1}")
    await c.close()


async def transactions():
    t = P + "tx"
    c, other = await conn(), await conn()
    await drop(c, t)
    await c.execute(f"CREATE TABLE {t} (id int4 PRIMARY KEY, v text)")
    async with c.transaction():
        await c.execute(f"INSERT INTO {t} VALUES (1, 'committed')")
        expect(await other.fetchval(f"SELECT count(*) FROM {t}"), 0, "uncommitted row seen by another session")
    expect(await other.fetchval(f"SELECT v FROM {t}"), "committed", "after commit")
    try:
        async with c.transaction():
            await c.execute(f"INSERT INTO {t} VALUES (2, 'rolled back')")
            raise ZeroDivisionError
    except ZeroDivisionError:
        pass
    expect(await c.fetchval(f"SELECT count(*) FROM {t}"), 1, "after a transaction block raised")
    tr = c.transaction()
    await tr.start()
    await c.execute(f"INSERT INTO {t} VALUES (3, 'x')")
    try:
        await c.execute(f"INSERT INTO {t} VALUES (3, 'x')")
        raise Mismatch("a duplicate key raised nothing")
    except asyncpg.UniqueViolationError:
        pass
    try:
        await c.fetchval("SELECT 1")
        raise Mismatch("a statement in an aborted transaction ran")
    except asyncpg.InFailedSQLTransactionError as e:
        expect(e.sqlstate, "25P02")
    await tr.rollback()
    expect(await c.fetchval(f"SELECT count(*) FROM {t}"), 1, "after the failed transaction's rollback")
    await c.close()
    await other.close()


async def errors():
    t = P + "err"
    c = await conn()
    await drop(c, t)
    await c.execute(f"CREATE TABLE {t} (id int4 PRIMARY KEY, v text)")
    await c.execute(f"INSERT INTO {t} VALUES ($1, $2)", 1, "a")
    try:
        await c.execute(f"INSERT INTO {t} VALUES ($1, $2)", 1, "b")
        raise Mismatch("the duplicate key INSERT succeeded")
    except asyncpg.UniqueViolationError as e:
        got = (e.sqlstate, e.constraint_name, e.table_name, e.schema_name, e.detail)
        expect(got, ("23505", f"{t}_pkey", t, "public", "Key (id)=(1) already exists."),
               "sqlstate, constraint, table, schema, detail")
    expect(await c.fetchval("SELECT 1"), 1, "the connection after the error")
    await c.close()


async def errors_at_prepare():
    """Errors raised while asyncpg prepares (Parse, Describe, Flush): they must come back at once."""
    t = P + "err"
    c = await conn()
    for sql, args, state in (("SELEC 1", (), "42601"), (f"SELECT * FROM {P}missing", (), "42P01"),
                             (f"SELECT * FROM {P}missing WHERE id = $1", (1,), "42P01"),
                             (f"SELECT v FROM {t} WHERE id = $1 +", (1,), "42601")):
        try:
            await asyncio.wait_for(c.fetch(sql, *args), ERROR_WAIT_S)
            raise Mismatch(f"{sql!r} raised nothing")
        except asyncio.TimeoutError:
            raise Mismatch(f"{sql!r}: no error within {ERROR_WAIT_S} s (hang)") from None
        except asyncpg.PostgresError as e:
            if e.sqlstate != state:
                raise Mismatch(f"{sql!r}: got [{e.sqlstate}] {e}, want {state}") from e
    # execute() without arguments is a simple Query: the connection is alive whatever the formats
    expect(await asyncio.wait_for(c.execute("SELECT 1"), ERROR_WAIT_S), "SELECT 1", "the connection after the errors")
    await c.close()


async def cancel():
    """A statement waiting for a locked row, given up by asyncpg's timeout: asyncpg sends a CancelRequest
    and waits for the statement's end; the connection stays usable and the statement had no effect."""
    t = P + "cancel"
    holder, waiter = await conn(), await conn()
    await drop(holder, t)
    await holder.execute(f"CREATE TABLE {t} (id int4 PRIMARY KEY, v int4)")
    await holder.execute(f"INSERT INTO {t} VALUES (1, 0)")
    tr = holder.transaction()
    await tr.start()
    await holder.execute(f"UPDATE {t} SET v = 1 WHERE id = 1")  # holds the row lock
    try:
        await waiter.execute(f"UPDATE {t} SET v = 2 WHERE id = 1", timeout=1.0)
        raise Mismatch("the UPDATE waiting for a locked row finished instead of being cancelled")
    except asyncio.TimeoutError:
        pass
    # Also a cancelled task, the other way asyncpg cancels (Task.cancel -> CancelRequest).
    task = asyncio.ensure_future(waiter.execute(f"UPDATE {t} SET v = 3 WHERE id = 1"))
    await asyncio.sleep(0.5)
    task.cancel()
    try:
        await task
        raise Mismatch("the cancelled task's UPDATE finished")
    except asyncio.CancelledError:
        pass
    expect(await asyncio.wait_for(waiter.fetchval("SELECT 1"), 10), 1, "the cancelled connection afterwards")
    await tr.commit()
    expect(await waiter.fetchval(f"SELECT v FROM {t}"), 1, "the row after the cancelled UPDATEs")
    await holder.close()
    await waiter.close()


async def workload():
    """A pool of 4 connections makes random transfers between 10 accounts, each in a transaction that
    locks its rows in id order, and logs them; the total never changes and every balance equals its
    logged movements."""
    acc, log = P + "accounts", P + "transfers"
    n_acc, start, workers, per_worker = 10, 1000, 4, 40
    c = await conn()
    await drop(c, acc, log)
    await c.execute(f"CREATE TABLE {acc} (id int4 PRIMARY KEY, balance numeric(12,2) NOT NULL)")
    await c.execute(f"CREATE TABLE {log} (id int8 PRIMARY KEY, src int4, dst int4, amount numeric(12,2))")
    await c.executemany(f"INSERT INTO {acc} VALUES ($1, $2)", [(k, Decimal(start)) for k in range(n_acc)])
    pool = await asyncpg.create_pool(host=HOST, port=PORT, user=USER, database=DB, min_size=workers, max_size=workers)

    async def worker(w):
        rng = random.Random(w)
        for k in range(per_worker):
            a, b = rng.sample(range(n_acc), 2)
            amount = Decimal(rng.randint(1, 5000)) / 100
            async with pool.acquire() as pc:
                async with pc.transaction():
                    for i in sorted((a, b)):
                        await pc.fetchval(f"SELECT balance FROM {acc} WHERE id = $1 FOR UPDATE", i)
                    if await pc.fetchval(f"SELECT balance FROM {acc} WHERE id = $1", a) < amount:
                        continue
                    await pc.execute(f"UPDATE {acc} SET balance = balance - $1 WHERE id = $2", amount, a)
                    await pc.execute(f"UPDATE {acc} SET balance = balance + $1 WHERE id = $2", amount, b)
                    await pc.execute(f"INSERT INTO {log} VALUES ($1, $2, $3, $4)", w * 1000 + k, a, b, amount)
    try:
        await asyncio.gather(*(worker(w) for w in range(workers)))
    finally:
        await pool.close()
    expect(tuple(await c.fetchrow(f"SELECT sum(balance), count(*) FROM {acc}")), (Decimal(start * n_acc), n_acc),
           "sum of balances")
    balances = {r[0]: r[1] for r in await c.fetch(f"SELECT id, balance FROM {acc}")}
    for src, dst, amount in await c.fetch(f"SELECT src, dst, amount FROM {log}"):
        balances[src] += amount
        balances[dst] -= amount
    bad = {k: v for k, v in balances.items() if v != start}
    if bad:
        raise Mismatch(f"balances with their logged transfers undone, want {start} each: {bad}")
    if await c.fetchval(f"SELECT count(*) FROM {log}") == 0:
        raise Mismatch("no transfer was made")
    await c.close()


async def main():
    await run_async("connect.tcp", connect_tcp)
    await run_async("connect.unix", connect_unix)
    for name, (column, cases) in TYPES.items():
        await run_async(*type_check(name, column, cases))
    await run_async("batch.executemany", batch_executemany)
    await run_async("copy", copy_in_out)
    await run_async("prepared.generic_plan", prepared)
    await run_async("transactions", transactions)
    await run_async("errors.unique_violation", errors)
    await run_async("errors.at_prepare", errors_at_prepare)
    await run_async("cancel", cancel)
    await run_async("workload.transfers", workload, timeout_s=120)
    finish()


if __name__ == "__main__":
    asyncio.run(main())
