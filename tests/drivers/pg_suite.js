// The driver suite for node-postgres (`pg`) with its default settings (text format both ways, JS Dates
// sent as local time with a UTC offset, int8 and numeric read as strings), plus pg-copy-streams for
// COPY. Run by scripts/driver-suite; prints `START name`, then `PASS name` or `FAIL name: why`.
'use strict'
const { Client, Pool, Query } = require('pg')
const { from: copyFrom, to: copyTo } = require('pg-copy-streams')
const { pipeline } = require('stream/promises')
const { Readable, Writable } = require('stream')

const cfg = {
  host: process.env.DRIVER_HOST || '127.0.0.1',
  port: +(process.env.DRIVER_PORT || 5432),
  user: process.env.DRIVER_USER || 'postgres',
  database: process.env.DRIVER_DB || 'postgres',
  connectionTimeoutMillis: 10000,
}
const SOCKET_DIR = process.env.DRIVER_SOCKET_DIR || '/tmp'
const P = 'npg_' // this driver's table prefix
const CHECK_TIMEOUT_MS = 30000
const results = { pass: 0, fail: 0 }

class Mismatch extends Error {}

function show(v) {
  if (v instanceof Date) return `Date(${isNaN(v) ? 'invalid' : v.toISOString()})`
  if (Buffer.isBuffer(v)) return `Buffer(${v.toString('hex')})`
  if (typeof v === 'bigint') return `${v}n (bigint)`
  return `${JSON.stringify(v)} (${v === null ? 'null' : typeof v})`
}

function same(a, b) {
  if (a instanceof Date || b instanceof Date) return a instanceof Date && b instanceof Date && a.getTime() === b.getTime()
  if (Buffer.isBuffer(a) || Buffer.isBuffer(b)) return Buffer.isBuffer(a) && Buffer.isBuffer(b) && a.equals(b)
  if (Array.isArray(a) || Array.isArray(b)) {
    return Array.isArray(a) && Array.isArray(b) && a.length === b.length && a.every((x, i) => same(x, b[i]))
  }
  if (a && b && typeof a === 'object' && typeof b === 'object') {
    const ka = Object.keys(a), kb = Object.keys(b)
    return same(ka, kb) && ka.every((k) => same(a[k], b[k]))
  }
  return typeof a === typeof b && (a === b || (Number.isNaN(a) && Number.isNaN(b)))
}

function expect(got, want, what) {
  if (!same(got, want)) {
    const s = (v) => (Array.isArray(v) || (v && typeof v === 'object' && !(v instanceof Date) && !Buffer.isBuffer(v))
      ? JSON.stringify(v) : show(v))
    throw new Mismatch(`${what ? what + ': ' : ''}got ${s(got)}, want ${s(want)}`)
  }
}

function describe(e) {
  const code = e.code ? ` [${e.code}]` : ''
  const where = (String(e.stack || '').split('\n').find((l) => l.includes('pg_suite.js')) || '').trim()
  return `${e.constructor.name}${code}: ${String(e.message).split('\n')[0]}${where && !(e instanceof Mismatch) ? ` (${where})` : ''}`
}

async function check(name, fn, timeoutMs = CHECK_TIMEOUT_MS) {
  console.log(`START ${name}`)
  let timer
  const hang = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${timeoutMs / 1000} s (hang)`)), timeoutMs)
  })
  try {
    await Promise.race([fn(), hang])
    results.pass++
    console.log(`PASS ${name}`)
  } catch (e) {
    results.fail++
    console.log(`FAIL ${name}: ${describe(e)}`)
  } finally {
    clearTimeout(timer)
  }
}

async function connect(extra = {}) {
  const c = new Client({ ...cfg, ...extra })
  c.on('error', () => {}) // a connection the server drops fails its check, not the program
  await c.connect()
  return c
}

async function drop(c, ...tables) {
  for (const t of tables) {
    try { await c.query(`DROP TABLE IF EXISTS ${t}`) } catch (e) { /* the check reports what matters */ }
  }
}

async function expectError(promise, code, what) {
  try {
    await promise
  } catch (e) {
    if (e.code !== code) throw new Mismatch(`${what}: got ${describe(e)}, want ${code}`)
    return e
  }
  throw new Mismatch(`${what}: no error, want ${code}`)
}

const local = (...a) => new Date(...a) // a JS Date in the process's time zone (TZ)
// [column type, [[parameter, value read back]]]; int8 and numeric come back as strings (node-postgres' default).
const TYPES = {
  int2: ['int2', [[0, 0], [-32768, -32768], [32767, 32767]]],
  int4: ['int4', [[42, 42], [-2147483648, -2147483648], [2147483647, 2147483647]]],
  int8: ['int8', [['9007199254740993', '9007199254740993'], ['-9223372036854775808', '-9223372036854775808'],
    [9223372036854775807n, '9223372036854775807'], [12, '12']]],
  float4: ['float4', [[1.5, 1.5], [-0.25, -0.25], [1e10, 1e10]]],
  float8: ['float8', [[0.1, 0.1], [-2.5e-300, -2.5e-300], [1.7976931348623157e308, 1.7976931348623157e308], [Infinity, Infinity]]],
  bool: ['bool', [[true, true], [false, false]]],
  text: ['text', [['hello', 'hello'], ['', ''], ['ünïcødé ✓ \'q\' \\ "d"\n\t', 'ünïcødé ✓ \'q\' \\ "d"\n\t']]],
  varchar: ['varchar(20)', [['abc', 'abc'], ['', '']]],
  bpchar: ['char(5)', [['ab', 'ab   '], ['abcde', 'abcde']]],
  bytea: ['bytea', [[Buffer.from([0, 1, 39, 92, 254, 255]), Buffer.from([0, 1, 39, 92, 254, 255])], [Buffer.alloc(0), Buffer.alloc(0)],
    [Buffer.from([...Array(256).keys()]), Buffer.from([...Array(256).keys()])]]],
  oid: ['oid', [[0, 0], [4294967295, 4294967295], [12345, 12345]]],
  numeric: ['numeric', [['12345678901234567890.123456789', '12345678901234567890.123456789'], ['-0.000001', '-0.000001'], [0, '0']]],
  'numeric(12,2)': ['numeric(12,2)', [['1234567890.12', '1234567890.12'], ['-0.05', '-0.05'], ['1.005', '1.01'], [7, '7.00']]],
  date: ['date', [['2024-02-29', local(2024, 1, 29)], [local(1999, 11, 31), local(1999, 11, 31)], ['1970-01-01', local(1970, 0, 1)]]],
  timestamp: ['timestamp', [[local(2024, 0, 2, 3, 4, 5, 123), local(2024, 0, 2, 3, 4, 5, 123)],
    ['1999-12-31 23:59:59', local(1999, 11, 31, 23, 59, 59)], ['2024-01-03T03:04:05.123+00:00', local(2024, 0, 3, 3, 4, 5, 123)]]],
  timestamptz: ['timestamptz', [[new Date(Date.UTC(2024, 0, 2, 3, 4, 5, 123)), new Date(Date.UTC(2024, 0, 2, 3, 4, 5, 123))],
    ['2024-07-01 12:00:00+05:30', new Date(Date.UTC(2024, 6, 1, 6, 30))], [local(1999, 11, 31, 23, 59, 59), local(1999, 11, 31, 23, 59, 59)]]],
}

function typeCheck(name, column, cases) {
  const table = P + 't_' + name.replace(/[^a-z0-9]/g, '_')
  return check(`types.${name}`, async () => {
    const c = await connect()
    try {
      await drop(c, table)
      await c.query(`CREATE TABLE ${table} (id int4 PRIMARY KEY, v ${column})`)
      for (const [k, [param]] of cases.entries()) await c.query(`INSERT INTO ${table} (id, v) VALUES ($1, $2)`, [k + 1, param])
      await c.query(`INSERT INTO ${table} (id, v) VALUES ($1, $2)`, [0, null])
      const rows = (await c.query(`SELECT v FROM ${table} ORDER BY id`)).rows
      expect(rows.length, cases.length + 1, 'rows')
      expect(rows[0].v, null, 'NULL')
      cases.forEach(([param, want], k) => expect(rows[k + 1].v, want, `result for parameter ${show(param)}`))
      const [param, want] = cases[0]
      expect((await c.query(`SELECT count(*)::int4 AS n FROM ${table} WHERE v = $1`, [param])).rows[0].n, 1, `WHERE v = ${show(param)}`)
      expect((await c.query(`SELECT $1::${column} AS v`, [param])).rows[0].v, want, `SELECT $1::${column}`)
      if (column === 'numeric(12,2)') { // exact arithmetic on the column, with a parameter
        const r = (await c.query(`SELECT v * 3 AS m, v + $1 AS p FROM ${table} WHERE id = 1`, ['0.01'])).rows[0]
        expect(r, { m: '3703703670.36', p: '1234567890.13' }, 'v * 3, v + 0.01')
      }
    } finally {
      await c.end()
    }
  })
}

async function connectVia(host) {
  const c = await connect({ host })
  expect((await c.query('SELECT 1 AS one')).rows, [{ one: 1 }])
  await c.end()
}

async function batches() {
  const t = P + 'batch'
  const c = await connect()
  await drop(c, t)
  await c.query(`CREATE TABLE ${t} (id int4 PRIMARY KEY, v text, n numeric(12,2))`)
  await c.end()
  // pipeline mode: every query is sent without waiting for the one before
  const p = await connect({ pipeline: true })
  const inserts = []
  for (let k = 0; k < 300; k++) inserts.push(p.query(`INSERT INTO ${t} VALUES ($1, $2, $3)`, [k, `v${k}`, (k / 4).toFixed(2)]))
  const selects = [0, 100, 299].map((k) => p.query(`SELECT v FROM ${t} WHERE id = $1`, [k]))
  await Promise.all(inserts)
  expect((await Promise.all(selects)).map((r) => r.rows[0].v), ['v0', 'v100', 'v299'], 'pipelined SELECTs')
  // a failing query in a pipeline fails alone
  const dup = p.query(`INSERT INTO ${t} VALUES ($1, 'x', 0)`, [5])
  const after = p.query(`SELECT count(*)::int4 AS n FROM ${t}`)
  await expectError(dup, '23505', 'pipelined duplicate key')
  expect((await after).rows[0].n, 300, 'the query after the failed one')
  await p.end()
  // a multi-statement simple query: one round trip, one result per statement
  const c2 = await connect()
  const res = await c2.query(`INSERT INTO ${t} VALUES (1000, 'a', 1); UPDATE ${t} SET v = 'b' WHERE id >= 299; SELECT count(*) AS n, sum(n) AS s FROM ${t}`)
  expect(res.map((r) => [r.command, r.rowCount]), [['INSERT', 1], ['UPDATE', 2], ['SELECT', 1]], 'multi-statement results')
  expect(res[2].rows[0], { n: '301', s: '11213.50' }, 'count and sum')
  await c2.end()
}

async function copyInOut() {
  const t = P + 'copy'
  const c = await connect()
  await drop(c, t)
  await c.query(`CREATE TABLE ${t} (id int4 PRIMARY KEY, v text, n numeric(12,2), d date)`)
  const esc = (s) => s.replace(/\\/g, '\\\\').replace(/\t/g, '\\t').replace(/\n/g, '\\n')
  const rows = [...Array(300).keys()].map((k) => [k, `r${k} ü\t'\\\n`, k % 7 === 0 ? null : (k / 100).toFixed(2), `2024-01-${String(1 + (k % 28)).padStart(2, '0')}`])
  const text = rows.map((r) => r.map((v) => (v === null ? '\\N' : esc(String(v)))).join('\t') + '\n').join('')
  await pipeline(Readable.from([text]), c.query(copyFrom(`COPY ${t} FROM STDIN`)))
  expect((await c.query(`SELECT count(*)::int4 AS n, count(n)::int4 AS nn FROM ${t}`)).rows[0], { n: 300, nn: 257 }, 'rows after COPY FROM')
  let out = ''
  await pipeline(c.query(copyTo(`COPY (SELECT * FROM ${t} ORDER BY id) TO STDOUT`)), new Writable({
    write(chunk, _, done) { out += chunk.toString(); done() },
  }))
  expect(out, text, 'COPY TO STDOUT text')
  // csv with options, both ways
  const t2 = P + 'copy_csv'
  await drop(c, t2)
  await c.query(`CREATE TABLE ${t2} (id int4 PRIMARY KEY, name text, note text)`)
  const csv = 'id;name;note\n1;"a;b";\n2;"say ""hi""";""\n3;x;"line\nnext"\n'
  const stream = c.query(copyFrom(`COPY ${t2} FROM STDIN (FORMAT csv, HEADER, DELIMITER ';')`))
  await pipeline(Readable.from([csv]), stream)
  expect(stream.rowCount, 3, 'COPY FROM csv rowCount')
  expect((await c.query(`SELECT id, name, note FROM ${t2} ORDER BY id`)).rows,
    [{ id: 1, name: 'a;b', note: null }, { id: 2, name: 'say "hi"', note: '' }, { id: 3, name: 'x', note: 'line\nnext' }], 'rows after csv COPY')
  out = ''
  await pipeline(c.query(copyTo(`COPY ${t2} TO STDOUT (FORMAT csv, HEADER, DELIMITER ';', NULL 'none')`)), new Writable({
    write(chunk, _, done) { out += chunk.toString(); done() },
  }))
  expect(out.split('\n').slice(0, 2).join('\n'), 'id;name;note\n1;"a;b";none', 'COPY TO STDOUT csv')
  await c.end()
}

async function prepared() {
  const t = P + 'prep'
  const c = await connect()
  await drop(c, t)
  await c.query(`CREATE TABLE ${t} (id int4 PRIMARY KEY, grp int4, v text)`)
  const vals = [...Array(1000).keys()].map((k) => `(${k}, ${k % 10}, 'v${k}')`).join(', ')
  await c.query(`INSERT INTO ${t} VALUES ${vals}`)
  // A named statement is parsed once and then only bound and executed; 12 executions go past
  // PostgreSQL's switch to a generic plan after 5 custom ones.
  for (let k = 0; k < 12; k++) {
    const g = k % 10, lo = k * 50
    const ids = [...Array(1000).keys()].filter((i) => i >= lo && i % 10 === g)
    const r = await c.query({ name: 'by_group', text: `SELECT count(*)::int4 AS n, min(v) AS v FROM ${t} WHERE grp = $1 AND id >= $2`, values: [g, lo] })
    expect(r.rows[0], { n: ids.length, v: ids.map((i) => `v${i}`).sort()[0] }, `execution ${k + 1}`)
  }
  await c.end()
}

async function transactions() {
  const t = P + 'tx'
  const c = await connect(), other = await connect()
  await drop(c, t)
  await c.query(`CREATE TABLE ${t} (id int4 PRIMARY KEY, v text)`)
  await c.query('BEGIN')
  await c.query(`INSERT INTO ${t} VALUES ($1, $2)`, [1, 'committed'])
  expect((await other.query(`SELECT count(*)::int4 AS n FROM ${t}`)).rows[0].n, 0, 'uncommitted row seen by another session')
  await c.query('COMMIT')
  expect((await other.query(`SELECT v FROM ${t}`)).rows, [{ v: 'committed' }], 'after COMMIT')
  await c.query('BEGIN')
  await c.query(`INSERT INTO ${t} VALUES ($1, $2)`, [2, 'rolled back'])
  await c.query('ROLLBACK')
  expect((await c.query(`SELECT count(*)::int4 AS n FROM ${t}`)).rows[0].n, 1, 'after ROLLBACK')
  await c.query('BEGIN')
  await expectError(c.query(`INSERT INTO ${t} VALUES ($1, $2)`, [1, 'dup']), '23505', 'duplicate key in a transaction')
  await expectError(c.query('SELECT 1'), '25P02', 'a statement in an aborted transaction')
  await c.query('ROLLBACK')
  expect((await other.query(`SELECT id FROM ${t} ORDER BY id`)).rows, [{ id: 1 }], 'after the failed transaction')
  await c.end()
  await other.end()
}

async function errors() {
  const t = P + 'err'
  const c = await connect()
  await drop(c, t)
  await c.query(`CREATE TABLE ${t} (id int4 PRIMARY KEY, v text)`)
  await c.query(`INSERT INTO ${t} VALUES ($1, $2)`, [1, 'a'])
  const e = await expectError(c.query(`INSERT INTO ${t} VALUES ($1, $2)`, [1, 'b']), '23505', 'duplicate key')
  expect([e.constraint, e.table, e.schema, e.detail, e.severity], [`${t}_pkey`, t, 'public', 'Key (id)=(1) already exists.', 'ERROR'],
    'constraint, table, schema, detail, severity')
  await expectError(c.query('SELEC 1'), '42601', 'SELEC 1 (simple protocol)')
  await expectError(c.query('SELEC $1', [1]), '42601', 'SELEC $1 (extended protocol)')
  await expectError(c.query(`SELECT * FROM ${P}missing`), '42P01', 'missing table (simple protocol)')
  await expectError(c.query(`SELECT * FROM ${P}missing WHERE id = $1`, [1]), '42P01', 'missing table (extended protocol)')
  await expectError(c.query(`SELECT v FROM ${t} WHERE id = $1`, ['one']), '22P02', 'bad int4 parameter')
  expect((await c.query('SELECT 1 AS one')).rows, [{ one: 1 }], 'the connection after the errors')
  await c.end()
}

async function cancel() {
  const t = P + 'cancel'
  const holder = await connect(), waiter = await connect()
  await drop(holder, t)
  await holder.query(`CREATE TABLE ${t} (id int4 PRIMARY KEY, v int4)`)
  await holder.query(`INSERT INTO ${t} VALUES (1, 0)`)
  await holder.query('BEGIN')
  await holder.query(`UPDATE ${t} SET v = 1 WHERE id = 1`) // holds the row lock
  const q = new Query(`UPDATE ${t} SET v = 2 WHERE id = 1`)
  const ended = new Promise((resolve) => { q.on('error', resolve); q.on('end', () => resolve(null)) })
  waiter.query(q)
  // Cancel only once the UPDATE waits for the row lock (seen in pg_stat_activity), not after a fixed
  // sleep: on a loaded machine the UPDATE may not have reached the server yet.
  const deadline = Date.now() + 30000
  for (;;) {
    const r = await holder.query(
      "SELECT count(*)::int4 AS n FROM pg_stat_activity WHERE pid = $1 AND wait_event_type = 'Lock'", [waiter.processID])
    if (r.rows[0].n === 1) break
    if (Date.now() > deadline) throw new Mismatch('the UPDATE never waited for the locked row')
    await new Promise((res) => setTimeout(res, 20))
  }
  new Client(cfg).cancel(waiter, q) // node-postgres' CancelRequest on a new connection
  const err = await ended
  if (!err) throw new Mismatch('the UPDATE waiting for a locked row finished instead of being cancelled')
  expect(err.code, '57014', `the cancelled UPDATE's error (${err.message})`)
  expect((await waiter.query('SELECT 1 AS one')).rows, [{ one: 1 }], 'the cancelled connection afterwards')
  await holder.query('COMMIT')
  expect((await waiter.query(`SELECT v FROM ${t}`)).rows, [{ v: 1 }], 'the row after the cancelled UPDATE')
  await holder.end()
  await waiter.end()
}

async function workload() {
  // A pool of 4 connections makes random transfers between 10 accounts, each in a transaction that
  // locks its rows in id order, and logs them; the total never changes and every balance equals its
  // logged movements.
  const acc = P + 'accounts', log = P + 'transfers'
  const nAcc = 10, start = 1000, workers = 4, perWorker = 40
  const c = await connect()
  await drop(c, acc, log)
  await c.query(`CREATE TABLE ${acc} (id int4 PRIMARY KEY, balance numeric(12,2) NOT NULL)`)
  await c.query(`CREATE TABLE ${log} (id int8 PRIMARY KEY, src int4, dst int4, amount numeric(12,2))`)
  for (let k = 0; k < nAcc; k++) await c.query(`INSERT INTO ${acc} VALUES ($1, $2)`, [k, start])
  const pool = new Pool({ ...cfg, max: workers })
  pool.on('error', () => {})
  let seed = 12345
  const rand = (n) => { seed = (seed * 1103515245 + 12345) % 2147483648; return seed % n }
  async function worker(w) {
    for (let k = 0; k < perWorker; k++) {
      const a = rand(nAcc), b = (a + 1 + rand(nAcc - 1)) % nAcc
      const cents = 1 + rand(5000), amount = (cents / 100).toFixed(2)
      const pc = await pool.connect()
      try {
        await pc.query('BEGIN')
        for (const i of [a, b].sort((x, y) => x - y)) await pc.query(`SELECT balance FROM ${acc} WHERE id = $1 FOR UPDATE`, [i])
        const bal = (await pc.query(`SELECT balance FROM ${acc} WHERE id = $1`, [a])).rows[0].balance
        if (Math.round(parseFloat(bal) * 100) >= cents) {
          await pc.query(`UPDATE ${acc} SET balance = balance - $1 WHERE id = $2`, [amount, a])
          await pc.query(`UPDATE ${acc} SET balance = balance + $1 WHERE id = $2`, [amount, b])
          await pc.query(`INSERT INTO ${log} VALUES ($1, $2, $3, $4)`, [w * 1000 + k, a, b, amount])
        }
        await pc.query('COMMIT')
      } catch (e) {
        await pc.query('ROLLBACK').catch(() => {})
        throw e
      } finally {
        pc.release()
      }
    }
  }
  try {
    await Promise.all([...Array(workers).keys()].map(worker))
  } finally {
    await pool.end()
  }
  expect((await c.query(`SELECT sum(balance) AS s, count(*)::int4 AS n FROM ${acc}`)).rows[0], { s: (start * nAcc).toFixed(2), n: nAcc }, 'sum of balances')
  // every balance, with its logged transfers undone, is back at the start (in cents: exact)
  const cents = {}
  for (const r of (await c.query(`SELECT id, balance FROM ${acc}`)).rows) cents[r.id] = Math.round(parseFloat(r.balance) * 100)
  for (const r of (await c.query(`SELECT src, dst, amount FROM ${log}`)).rows) {
    const m = Math.round(parseFloat(r.amount) * 100)
    cents[r.src] += m
    cents[r.dst] -= m
  }
  const bad = Object.entries(cents).filter(([, v]) => v !== start * 100)
  if (bad.length) throw new Mismatch(`balances with their logged transfers undone, want ${start * 100} cents each: ${JSON.stringify(bad)}`)
  if ((await c.query(`SELECT count(*)::int4 AS n FROM ${log}`)).rows[0].n === 0) throw new Mismatch('no transfer was made')
  await c.end()
}

async function main() {
  await check('connect.tcp', () => connectVia('127.0.0.1'))
  await check('connect.unix', () => connectVia(SOCKET_DIR))
  for (const [name, [column, cases]] of Object.entries(TYPES)) await typeCheck(name, column, cases)
  await check('batch.pipeline', batches)
  await check('copy', copyInOut)
  await check('prepared.generic_plan', prepared)
  await check('transactions', transactions)
  await check('errors', errors)
  await check('cancel', cancel)
  await check('workload.transfers', workload, 120000)
}

main().catch((e) => { results.fail++; console.log(`FAIL program: ${describe(e)}`) }).finally(() => {
  console.log(`# ${results.pass} passed, ${results.fail} failed`)
  process.exit(results.fail ? 1 : 0)
})
