# The SQL conformance suite: every entry is run by `cargo test -p turnstile-server --test conformance`
# against `turnstile serve` (both profiles) and compared with expected.txt, which scripts/record-conformance
# recorded from PostgreSQL 15 through the same client path (psql -A, headers on, one session, in file order).
#
# Format, one item a line:
#   # ...                     a comment
#   @setup SQL                run before the entries; must succeed on both sides
#   @family PREFIX Title: what the family checks (the README's "Supported SQL" lists these)
#   ID SQL                    an entry: turnstile must give PostgreSQL's columns and rows, or its SQLSTATE
#   !ID [construct] SQL       an unsupported construct: turnstile must answer 0A000 (feature_not_supported);
#                             expected.txt still records what PostgreSQL answers
# Rows are compared in order when the statement has ORDER BY, as a multiset otherwise. Entries run in file
# order in one session, so an entry may rely on the tables that earlier entries created and filled.

@setup CREATE TABLE t (id int PRIMARY KEY, i int, b bigint, s text, v varchar(10), c char(5), f boolean, ts timestamp)
@setup INSERT INTO t VALUES (1, 10, 5000000000, 'apple', 'apple', 'apple', true, '2024-01-15 10:30:00')
@setup INSERT INTO t VALUES (2, -5, -9000000000, 'Banana', 'banana', 'ban', false, '2023-12-31 23:59:59.5')
@setup INSERT INTO t VALUES (3, NULL, NULL, NULL, NULL, NULL, NULL, NULL)
@setup INSERT INTO t VALUES (4, 0, 0, '', '', '', true, '2000-02-29 00:00:00')
@setup INSERT INTO t VALUES (5, 2147483647, 9223372036854775807, 'héllo wörld', 'héllo', 'hé', false, '1999-01-01 00:00:00')
@setup INSERT INTO t VALUES (6, -2147483647, -42, '漢字🙂', '漢字', '漢', NULL, '2024-02-29 12:00:00')
@setup INSERT INTO t VALUES (7, 10, 42, 'abc ', 'abc ', 'abc', true, '2024-01-15 10:30:00')
@setup INSERT INTO t VALUES (8, 7, NULL, 'Apple', NULL, 'x', false, NULL)
@setup CREATE TABLE u (id int PRIMARY KEY, tid int, k text, name varchar(20))
@setup INSERT INTO u VALUES (1, 1, 'apple', 'first'), (2, 1, 'banana', 'second'), (3, 2, 'abc', 'third'), (4, 9, NULL, 'orphan'), (5, NULL, 'héllo', 'fifth')
@setup CREATE TABLE g (id int PRIMARY KEY, grp text, n int, m bigint)
@setup INSERT INTO g VALUES (1, 'a', 1, 10), (2, 'a', 2, NULL), (3, 'b', NULL, NULL), (4, 'b', 5, -5), (5, NULL, 7, 70), (6, 'c', NULL, NULL), (7, 'a', 3, 30)

@family int Integers: int2, int4 and int8 arithmetic, literals and casts, with overflow as 22003
int-01 SELECT 1 + 2, 7 - 10, 6 * 7
int-02 SELECT 2147483647 + 1
int-03 SELECT (-2147483647 - 1) - 1
int-04 SELECT -2147483648 - 1
int-05 SELECT 65536 * 65536
int-06 SELECT 46341 * 46341
int-07 SELECT 46340 * 46340
int-08 SELECT -(-2147483647 - 1)
int-09 SELECT (-2147483647 - 1) / -1
int-10 SELECT (-2147483647 - 1) % -1
int-11 SELECT 2147483648, -2147483649
int-12 SELECT 2147483647 + 1::bigint
int-13 SELECT 9223372036854775807 + 1
int-14 SELECT 9223372036854775808
int-15 SELECT -9223372036854775807 - 2
int-16 SELECT (-9223372036854775807 - 1) / -1
int-17 SELECT 4611686018427387904 * 2
int-18 SELECT 32767::int2 + 1::int2
int-19 SELECT 32767::int2 + 1
int-20 SELECT (-32768)::int2 / (-1)::int2
int-21 SELECT 40000::int2
int-22 SELECT '40000'::smallint
int-23 SELECT 3000000000::int4
int-24 SELECT '3000000000'::int
int-25 SELECT 9223372036854775808::int8
int-26 SELECT '9223372036854775808'::bigint
int-27 SELECT '-9223372036854775808'::bigint
int-28 SELECT -7 / 2, -7 % 3, 7 % -3
int-29 SELECT 7 / 2 * 2, 2 + 3 * 4, (2 + 3) * 4
int-30 SELECT abs(-2147483647), abs(-5::bigint)
int-31 SELECT abs(-2147483647 - 1)
int-32 SELECT i + 1 FROM t WHERE id = 5
int-33 SELECT i - 1 FROM t WHERE id = 6
int-34 SELECT i * 2 FROM t WHERE id = 1
int-35 SELECT i * 300000000 FROM t WHERE id = 1
int-36 SELECT i::bigint * 300000000 FROM t WHERE id = 1
int-37 SELECT b * 2 FROM t WHERE id = 5
int-38 SELECT b + 1 FROM t WHERE id = 1
int-39 SELECT id, -i FROM t ORDER BY id
int-40 SELECT i + b FROM t ORDER BY id
int-41 SELECT id, i + b FROM t WHERE id IN (1, 2, 4) ORDER BY id
int-42 SELECT 5 / 2, 5.0 / 2, 5 / 2.0
int-43 SELECT 10 % 3, -10 % 3, 10.5 % 3

@family div Division by zero: 22012 for integer, numeric and float division and modulo
div-01 SELECT 1 / 0
div-02 SELECT 1 % 0
div-03 SELECT 1::bigint / 0
div-04 SELECT 1::int2 / 0::int2
div-05 SELECT 1.0 / 0
div-06 SELECT 1.5 % 0
div-07 SELECT 1::float8 / 0
div-08 SELECT 0 / 0
div-09 SELECT i / 0 FROM t WHERE id = 3
div-10 SELECT i / (i - i) FROM t WHERE id = 1
div-11 SELECT id, 100 / i FROM t WHERE i <> 0 ORDER BY id
div-12 SELECT sum(100 / i) FROM t

@family num Numeric: exact decimal arithmetic, PostgreSQL's display scale for + - * / and aggregates, numeric(p,s) rounding and columns
num-01 SELECT 0.1 + 0.2
num-02 SELECT 1.0 / 3
num-03 SELECT 1 / 3.0
num-04 SELECT 2.0 / 3
num-05 SELECT 10.0 / 4
num-06 SELECT 1.10 * 2, 1.5 + 1.25, 1.50 - 0.5
num-07 SELECT 0.1 * 0.2, 123.456 * 1000
num-08 SELECT CAST(59 AS numeric) / 4
num-09 SELECT 59::numeric / 4::numeric
num-10 SELECT 1::numeric / 7
num-11 SELECT 100::numeric / 3
num-12 SELECT 12345678901234567890.123 + 1
num-13 SELECT 99999999999999999999 * 99999999999999999999
num-14 SELECT 1.000 + 2.5, -0.5 + 0.5, 0.0 * -1
num-15 SELECT 1e3, 1.5e-3, 2E2 + 1
num-16 SELECT 7::numeric, 7.00::numeric * 1
num-17 SELECT '1.5'::numeric + 1
num-18 SELECT ' 12.50 '::numeric
num-19 SELECT 2.675::numeric(10,2), (-2.5)::numeric(10,0)
num-20 SELECT 12345.678::numeric(12,2)
num-21 SELECT 123456.789::numeric(5,2)
num-22 SELECT 0.001::numeric(4,2), 9.995::numeric(4,2)
num-23 SELECT 99.995::numeric(4,2)
num-24 SELECT CAST(1.23456 AS numeric(4,1))
num-25 SELECT 1.5::numeric(3,1) * 1.25
num-26 SELECT 10::numeric(5,2)
num-27 SELECT sum(i), sum(b) FROM t
num-28 SELECT sum(i) FROM t WHERE i > 0
num-29 SELECT sum(b) FROM t WHERE b > 0
num-30 SELECT avg(i) FROM t
num-31 SELECT avg(n) FROM g
num-32 SELECT avg(b) FROM t WHERE b > 0
num-33 SELECT sum(n * 1.5), avg(n * 1.5) FROM g
num-34 SELECT sum(m), avg(m) FROM g
num-35 SELECT avg(2), sum(1.5), count(*)
num-36 CREATE TABLE nm (id int PRIMARY KEY, x numeric(6,2), y numeric)
num-37 INSERT INTO nm VALUES (1, 1.005, 1.005), (2, -2.5, 10), (3, 1234.5678, 0.1)
num-38 INSERT INTO nm VALUES (4, 12345.67, 1)
num-39 SELECT id, x, y, x + y, x * y FROM nm ORDER BY id
num-40 SELECT id, x / 3, y / 3 FROM nm ORDER BY id
num-41 SELECT sum(x), avg(x), sum(y), avg(y) FROM nm
num-42 SELECT id FROM nm WHERE x = 1.01 ORDER BY id
num-43 SELECT x::int FROM nm ORDER BY id

@family float Floating point: float4 and float8 arithmetic, output, overflow and underflow (22003)
float-01 SELECT 1e308::float8 * 10
float-02 SELECT -1e308::float8 * 10
float-03 SELECT 1e308::float8 + 1e308::float8
float-04 SELECT 1e-300::float8 * 1e-300
float-05 SELECT '1e400'::float8
float-06 SELECT '1e-400'::float8
float-07 SELECT 0.1::float8 + 0.2::float8
float-08 SELECT 1::float8 / 3
float-09 SELECT 3.4e38::float4 * 10
float-10 SELECT '3.5e38'::float4
float-11 SELECT 1e300::float8::float4
float-12 SELECT 1e-50::float8::float4
float-13 SELECT 1.5::float4 + 1, 0.1::float4
float-14 SELECT 0.1::float4::float8
float-15 SELECT 'NaN'::float8, 'Infinity'::float8, '-inf'::float8
float-16 SELECT 'infinity'::float8 + 1, 'nan'::float8 = 'nan'::float8
float-17 SELECT 1e10::float8, 1e16::float8, 123456789012345678::float8
float-18 SELECT 1.0::float8, -0.0::float8, 9007199254740993::float8
float-19 SELECT 'abc'::float8
float-20 SELECT 2.5::float8::numeric, 0.1::float8::numeric
float-21 SELECT 1.5::real * 2::real, 2::double precision / 4

@family text Text, varchar(n) and char(n): comparison, length, concatenation, truncation on cast, 22001 on assignment
text-01 SELECT 'abc' = 'abc ', 'abc' < 'abd', 'a' < 'B', 'Z' < 'a'
text-02 SELECT length('  x  '), length('漢字🙂'), length('')
text-03 SELECT char_length('héllo'), length('héllo wörld')
text-04 SELECT 'abc'::char(5) = 'abc', length('abc'::char(5))
text-05 SELECT 'abc'::char(5) = 'abc  '::char(5), 'abc'::char(5) < 'abd'::char(3)
text-06 SELECT 'abc'::char(5) || '<'
text-07 SELECT '<' || 'ab'::char(4) || '>'
text-08 SELECT 'abc'::varchar(2), 'abc '::varchar(10) = 'abc'
text-09 SELECT 'abcdef'::char(3), 'abc'::char
text-10 SELECT '漢字🙂'::varchar(2), '漢字🙂'::char(1)
text-11 SELECT 'abc'::varchar(5) || 'def'
text-12 SELECT 'a' || NULL, NULL || 'a'
text-13 SELECT 'n: ' || 42, 42 || '!'
text-14 SELECT 1 || 2
text-15 SELECT ''::char(3) = '', 'a '::text = 'a'::char(3)
text-16 SELECT id, length(s), length(v), length(c) FROM t ORDER BY id
text-17 SELECT id, s = v FROM t ORDER BY id
text-18 SELECT id FROM t WHERE c = 'abc'
text-19 SELECT id, c FROM t ORDER BY id
text-20 SELECT id, c || '.' FROM t ORDER BY id
text-21 SELECT id, v || '.' FROM t ORDER BY id
text-22 SELECT 123::varchar(2), 12.5::text
text-23 CREATE TABLE tx (id int PRIMARY KEY, v varchar(3), c char(3))
text-24 INSERT INTO tx VALUES (1, 'abcd', 'a')
text-25 INSERT INTO tx VALUES (2, 'a', 'abcd')
text-26 INSERT INTO tx VALUES (3, 'abc   ', 'ab   ')
text-27 INSERT INTO tx VALUES (4, '漢字🙂', '漢字🙂')
text-28 INSERT INTO tx VALUES (5, 'a', 'b')
text-29 UPDATE tx SET v = 'toolong' WHERE id = 5
text-30 UPDATE tx SET v = v || 'x' WHERE id = 5
text-31 SELECT id, v, c, length(v), length(c) FROM tx ORDER BY id
text-32 SELECT id FROM tx WHERE c = 'ab' ORDER BY id

@family strfn String functions: length, char_length, upper, lower, left, right, substr, substring, repeat, md5, `||`
strfn-01 SELECT id, upper(s), lower(s) FROM t ORDER BY id
strfn-02 SELECT upper('héllo'), lower('ÀBC'), upper(NULL)
strfn-03 SELECT left('héllo', 2), right('héllo', 2), left('abc', -1), right('abc', -1)
strfn-04 SELECT left('abc', 10), right('abc', 0)
strfn-05 SELECT substr('héllo', 2), substr('héllo', 2, 3), substr('abc', 0, 2), substr('abc', -1, 3)
strfn-06 SELECT substr('abc', 2, -1)
strfn-07 SELECT substr('abc', 5), substr('', 1, 1)
strfn-08 SELECT substring('hello' FROM 2 FOR 3), substring('hello' FROM 3)
strfn-09 SELECT substring('hello' FOR 2)
strfn-10 SELECT repeat('ab', 3), repeat('x', 0), repeat('x', -1)
strfn-11 SELECT md5('abc'), md5('')
strfn-12 SELECT md5(s) FROM t WHERE id = 6
strfn-13 SELECT id, left(s, 3), substr(v, 2, 2) FROM t ORDER BY id
strfn-14 SELECT length(NULL), upper(NULL)
strfn-15 SELECT length(c::text), length(c || '') FROM t WHERE id = 2

@family bool Booleans: input forms, output as t/f, casts to text and int, three-valued logic
bool-01 SELECT true, false, NULL::boolean
bool-02 SELECT true::text, false::text
bool-03 SELECT 'yes'::boolean, 'off'::boolean, 't'::boolean, '0'::boolean, ' TRUE '::boolean, 'on'::boolean
bool-04 SELECT 'maybe'::boolean
bool-05 SELECT 'o'::boolean
bool-06 SELECT 'true1'::boolean
bool-07 SELECT 1::boolean, 0::boolean, true::int
bool-08 SELECT true AND NULL, false AND NULL, true OR NULL, false OR NULL, NOT NULL::boolean
bool-09 SELECT id, f, NOT f FROM t ORDER BY id
bool-10 SELECT id FROM t WHERE f ORDER BY id
bool-11 SELECT id FROM t WHERE f IS NOT TRUE ORDER BY id
bool-12 SELECT id FROM t WHERE f IS FALSE ORDER BY id
bool-13 SELECT true > false, true = 't'
bool-14 SELECT f::text FROM t WHERE id = 1
bool-15 SELECT 'true'::text::boolean
bool-16 SELECT 1 AND true
bool-17 SELECT count(*) FROM t WHERE f = 'yes'

@family cast Casts: CAST and ::, rounding of numeric (half away from zero) and float (half to even) to integers
cast-01 SELECT '42'::int + 1, ' 42 '::int, '+5'::int, '-0'::int
cast-02 SELECT 2.5::int, (-2.5)::int, 0.5::int, 1.5::int
cast-03 SELECT 2.5::float8::int, 3.5::float8::int, (-2.5)::float8::int
cast-04 SELECT 1.5::float8::bigint, 0.5::float8::int, (-0.5)::float8::int
cast-05 SELECT 2.4999::int, 2.5001::bigint, 2.5::smallint
cast-06 SELECT 3.7::int, -3.7::int, 3.7::bigint
cast-07 SELECT 2147483647.5::int
cast-08 SELECT 2147483647.4::int
cast-09 SELECT 1e10::float8::int
cast-10 SELECT 'NaN'::float8::int
cast-11 SELECT 42::text::int::bigint
cast-12 SELECT CAST('2024-01-15' AS timestamp)
cast-13 SELECT CAST(NULL AS int), NULL::text
cast-14 SELECT id, i::text FROM t ORDER BY id
cast-15 SELECT b::int FROM t ORDER BY id
cast-16 SELECT b::int FROM t WHERE id IN (2, 6) ORDER BY id
cast-17 SELECT s::int FROM t WHERE id = 1
cast-18 SELECT id, ts::text FROM t ORDER BY id
cast-19 SELECT i::numeric / 4 FROM t WHERE id = 1
cast-20 SELECT i::float8 / 4 FROM t WHERE id = 1
cast-21 SELECT '\x00'::bytea

@family time Dates and timestamps: input forms, validation (22008, 22007), output, comparison
time-01 SELECT '2023-02-29'::date
time-02 SELECT '2023-02-29'::timestamp
time-03 SELECT '2024-02-29'::timestamp, '2024-01-02 03:04:05.123+02'::timestamp
time-04 SELECT '2024-13-01'::timestamp
time-05 SELECT '2024-04-31'::date
time-06 SELECT '2024-01-01 24:00:00'::timestamp
time-07 SELECT '2024-01-01 25:00:00'::timestamp
time-08 SELECT '2024-01-01 12:60:00'::timestamp
time-09 SELECT 'not a date'::timestamp
time-10 SELECT ''::timestamp
time-11 SELECT '2024-01-15'::date, '2024-01-15 10:30:00'::date
time-12 SELECT '1999-12-31 23:59:59.999999'::timestamp, '2024-01-15 10:30:00.1234567'::timestamp
time-13 SELECT '2024-01-15T10:30:00'::timestamp
!time-14 [date and time input with month names] SELECT 'January 8, 1999'::date
time-15 SELECT '0001-01-01'::date, '5000-06-30'::date
time-16 SELECT '2024-01-15'::date < '2024-01-16'::date, '2024-01-15'::date = '2024-01-15 00:00'::timestamp
time-17 SELECT id, ts FROM t ORDER BY ts, id
time-18 SELECT id FROM t WHERE ts > '2024-01-01' ORDER BY id
time-19 SELECT id FROM t WHERE ts = '2024-01-15 10:30' ORDER BY id
time-20 SELECT max(ts), min(ts) FROM t
time-21 SELECT id, ts::date FROM t ORDER BY id
time-22 SELECT id FROM t WHERE ts = 'yesterday-ish'
time-23 CREATE TABLE dt (id int PRIMARY KEY, d date)
time-24 INSERT INTO dt VALUES (1, '2024-02-29'), (2, '1970-01-01')
time-25 INSERT INTO dt VALUES (3, '2023-02-29')
time-26 SELECT id, d FROM dt ORDER BY d

@family syntax Invalid input syntax: 22P02 for text that is not a value of the type
syntax-01 SELECT 'abc'::int
syntax-02 SELECT '12.5'::int
syntax-03 SELECT ''::int
syntax-04 SELECT 'abc'::bigint
syntax-05 SELECT '1e5'::int
syntax-06 SELECT ' 1 2 '::int
syntax-07 SELECT '0x1F'::int
syntax-08 SELECT '1.2.3'::numeric
syntax-09 SELECT 'abc'::numeric
syntax-10 SELECT 'a' + 1
syntax-11 SELECT '5' + 1
syntax-12 INSERT INTO t (id, i) VALUES (100, 'x')
syntax-13 SELECT id FROM t WHERE i = 'abc'
syntax-14 SELECT id FROM t WHERE i = '10' ORDER BY id
syntax-15 SELECT id FROM t WHERE b = '5000000000'
syntax-16 SELECT 1 IN (1, 'a')

@family resolve Function and operator resolution: by argument types, with PostgreSQL's implicit casts; 42883 and 42804 otherwise
resolve-01 SELECT length(123)
resolve-02 SELECT i LIKE 1 FROM t
resolve-03 SELECT i LIKE '1%' FROM t
resolve-04 SELECT upper(1)
resolve-05 SELECT md5(1)
resolve-06 SELECT nosuchfunction(1)
resolve-07 SELECT abs('x')
resolve-08 SELECT true + 1
resolve-09 SELECT s + 1 FROM t
resolve-10 SELECT s - s FROM t
resolve-11 SELECT -s FROM t
resolve-12 SELECT ts + 1 FROM t
resolve-13 SELECT substr(123, 1)
resolve-14 SELECT left(s) FROM t
resolve-15 SELECT repeat('a')
resolve-16 SELECT lower('ABC', 1)
resolve-17 SELECT sum(s) FROM t
resolve-18 SELECT avg(f) FROM t
resolve-19 SELECT min(f) FROM t
resolve-20 SELECT i = s FROM t
resolve-21 SELECT NOT 1
resolve-22 SELECT coalesce(s, 1) FROM t
resolve-23 SELECT coalesce(1, 'a')
resolve-24 SELECT coalesce(i, 'x') FROM t

@family group Grouping: GROUP BY, HAVING, DISTINCT, and 42803 for ungrouped columns and misplaced aggregates
group-01 SELECT i, count(*) FROM t
group-02 SELECT i, b FROM t GROUP BY i
group-03 SELECT grp, n FROM g GROUP BY grp
group-04 SELECT grp, count(*) FROM g GROUP BY grp ORDER BY grp
group-05 SELECT grp, sum(n), min(n), max(m) FROM g GROUP BY grp ORDER BY grp
group-06 SELECT grp, count(n), count(*) FROM g GROUP BY 1 ORDER BY 1
group-07 SELECT grp AS x, sum(n) FROM g GROUP BY x ORDER BY x
group-08 SELECT grp, count(*) FROM g GROUP BY grp HAVING count(*) > 1 ORDER BY grp
group-09 SELECT grp FROM g GROUP BY grp HAVING sum(n) > 5 ORDER BY grp
group-10 SELECT grp FROM g GROUP BY grp HAVING n > 1
group-11 SELECT n + 1, count(*) FROM g GROUP BY n + 1 ORDER BY 1
group-12 SELECT n, count(*) FROM g GROUP BY n + 1
group-13 SELECT upper(grp), count(*) FROM g GROUP BY grp ORDER BY 1
group-14 SELECT grp FROM g ORDER BY count(*)
group-15 SELECT sum(n) FROM g WHERE count(*) > 1
group-16 SELECT count(count(*)) FROM g
group-17 SELECT DISTINCT grp FROM g ORDER BY grp
group-18 SELECT count(DISTINCT grp), count(DISTINCT n) FROM g
group-19 SELECT DISTINCT n % 2 FROM g ORDER BY 1
group-20 SELECT 1, count(*) FROM g
group-21 SELECT id, grp FROM g GROUP BY id ORDER BY id
group-22 SELECT grp, sum(n) FROM g WHERE n > 1 GROUP BY grp ORDER BY grp
group-23 SELECT count(*) FROM g GROUP BY grp ORDER BY 1
group-24 SELECT f, count(*), sum(i) FROM t GROUP BY f ORDER BY f

@family notnull NOT NULL and DEFAULT: 23502 on INSERT and UPDATE, defaults filled in
notnull-01 CREATE TABLE nn (id int PRIMARY KEY, v varchar(10) NOT NULL, w text)
notnull-02 INSERT INTO nn VALUES (1, 'one', NULL)
notnull-03 INSERT INTO nn (id) VALUES (2)
notnull-04 INSERT INTO nn VALUES (3, NULL, 'x')
notnull-05 INSERT INTO nn (v) VALUES ('x')
notnull-06 INSERT INTO nn VALUES (NULL, 'x', 'y')
notnull-07 UPDATE nn SET v = NULL WHERE id = 1
notnull-08 INSERT INTO nn (id, v) VALUES (4, 'four'), (5, NULL)
notnull-09 SELECT id, v, w FROM nn ORDER BY id
notnull-10 CREATE TABLE df (id int PRIMARY KEY, n int DEFAULT 7, s text DEFAULT 'none', f boolean NOT NULL DEFAULT false)
notnull-11 INSERT INTO df (id) VALUES (1)
notnull-12 INSERT INTO df VALUES (2, DEFAULT, 'x', DEFAULT)
notnull-13 INSERT INTO df (id, n) VALUES (3, NULL)
notnull-14 INSERT INTO df (id, f) VALUES (4, NULL)
notnull-15 SELECT id, n, s, f FROM df ORDER BY id

@family unique Unique: primary keys and unique indexes (23505), NULLs distinct
unique-01 CREATE TABLE uq (id int PRIMARY KEY, code text)
unique-02 CREATE UNIQUE INDEX uq_code ON uq (code)
unique-03 INSERT INTO uq VALUES (1, 'a'), (2, 'b')
unique-04 INSERT INTO uq VALUES (1, 'c')
unique-05 INSERT INTO uq VALUES (3, 'a')
unique-06 INSERT INTO uq VALUES (3, NULL), (4, NULL)
unique-07 INSERT INTO uq VALUES (5, 'A')
unique-08 UPDATE uq SET code = 'b' WHERE id = 1
unique-09 INSERT INTO uq VALUES (6, 'x'), (6, 'y')
unique-10 UPDATE uq SET id = id + 10
unique-11 SELECT id, code FROM uq ORDER BY id
unique-12 CREATE TABLE uq2 (id int, code text UNIQUE)
unique-13 INSERT INTO uq2 VALUES (1, 'a'), (2, 'a')

@family names Result column names: as PostgreSQL names them (casts, functions, CASE, aliases); 42703, 42P01 for unknown names
names-01 SELECT 1, 'a', 1.5, true, NULL
names-02 SELECT 1 AS one, 2 two, 3 AS "Three"
names-03 SELECT 1::integer, 2::bigint, true::boolean, CAST(3 AS smallint)
names-04 SELECT 4::text, 5::varchar, 'x'::char(2), 1.5::numeric, 1::float8, 1::real, 1::double precision
names-05 SELECT substr('abc', 1, 2), CASE WHEN 1 = 1 THEN 'y' END, 1 + 1
names-06 SELECT count(*), sum(i), avg(i), min(i), max(i) FROM t
names-07 SELECT coalesce(1, 2), upper('a'), length('a'), abs(-1), left('a', 1), md5('a')
names-08 SELECT id, t.s, t.id AS "Id" FROM t WHERE id = 1
names-09 SELECT * FROM t WHERE id = 1
names-10 SELECT t.* FROM t WHERE id = 2
names-11 SELECT i AS x, sum(i), count(*) FROM t GROUP BY i ORDER BY x
names-12 SELECT -i, i + 1, (i) FROM t WHERE id = 1
names-13 SELECT 'a' || 'b', NOT true, i IS NULL FROM t WHERE id = 1
names-14 SELECT substring('abc' FROM 2), CASE WHEN true THEN 1 ELSE 0 END AS c, coalesce(NULL, 'z')
names-15 SELECT ts::date, i::bigint, s::varchar(3) FROM t WHERE id = 1
names-16 SELECT "ID" FROM t
names-17 SELECT nosuch FROM t
names-18 SELECT * FROM nosuch
names-19 SELECT "i", "I" FROM t

@family join Joins: inner joins on equality, self-joins under aliases, text = varchar, three tables
join-01 SELECT t.id, u.name FROM t JOIN u ON t.id = u.tid ORDER BY t.id, u.id
join-02 SELECT t.id, u.id FROM t JOIN u ON t.s = u.k ORDER BY 1, 2
join-03 SELECT t.id, u.id FROM t JOIN u ON t.v = u.k ORDER BY 1, 2
join-04 SELECT t.id, u.id FROM t JOIN u ON t.c = u.k ORDER BY 1, 2
join-05 SELECT t.id, u.id FROM t JOIN u ON u.k = t.v ORDER BY 1, 2
join-06 SELECT a.id, b.id FROM t a JOIN t b ON a.i = b.i AND a.id < b.id ORDER BY 1
join-07 SELECT a.id, b.id FROM t a JOIN t b ON a.id = b.id + 1 WHERE a.id <= 3 ORDER BY 1
join-08 SELECT count(*) FROM t a JOIN t b ON a.s = b.s
join-09 SELECT a.id, b.id FROM t a JOIN t b ON a.v = b.s ORDER BY 1, 2
join-10 SELECT t.id, u.id, g.id FROM t JOIN u ON t.id = u.tid JOIN g ON g.id = u.id ORDER BY 1, 2
join-11 SELECT t.id FROM t JOIN u ON t.id = u.tid WHERE u.name LIKE 's%' ORDER BY 1
join-12 SELECT u.name, count(*) FROM t JOIN u ON t.id = u.tid GROUP BY u.name ORDER BY 1
join-13 SELECT id FROM t JOIN u ON t.id = u.tid
join-14 SELECT t.id, u.name FROM t INNER JOIN u ON u.tid = t.id AND u.id > 1 ORDER BY 1, 2
join-15 SELECT * FROM t JOIN u ON t.id = u.id WHERE t.id = 1
join-16 SELECT x.id, y.name FROM t AS x JOIN u AS y ON x.id = y.tid ORDER BY 1, 2
join-17 SELECT t.id FROM t JOIN u ON t.id = u.tid WHERE t.nosuch = 1
join-18 SELECT t.id, u.id FROM t LEFT JOIN u ON t.id = u.tid ORDER BY 1, 2
join-19 SELECT count(*) FROM t, u
join-20 SELECT count(*) FROM t CROSS JOIN u
join-21 SELECT count(*) FROM t JOIN u ON t.i < u.id

@family order ORDER BY, LIMIT and OFFSET: NULLS FIRST/LAST, C collation, positions and aliases
order-01 SELECT id, i FROM t ORDER BY i, id
order-02 SELECT id, i FROM t ORDER BY i DESC, id
order-03 SELECT id, i FROM t ORDER BY i NULLS FIRST, id
order-04 SELECT id, i FROM t ORDER BY i DESC NULLS LAST, id
order-05 SELECT id FROM t ORDER BY id LIMIT 3
order-06 SELECT id FROM t ORDER BY id LIMIT 3 OFFSET 2
order-07 SELECT id FROM t ORDER BY id OFFSET 6
order-08 SELECT id FROM t ORDER BY id LIMIT 0
order-09 SELECT id FROM t ORDER BY id LIMIT ALL
order-10 SELECT id FROM t ORDER BY id LIMIT NULL
order-11 SELECT id FROM t ORDER BY id LIMIT -1
order-12 SELECT id FROM t ORDER BY id OFFSET -1
order-13 SELECT id, s FROM t ORDER BY s, id
order-14 SELECT id, s FROM t ORDER BY 2 DESC, 1
order-15 SELECT id, c FROM t ORDER BY c, id
order-16 SELECT id, v FROM t ORDER BY v DESC, id
order-17 SELECT id, b FROM t ORDER BY b DESC NULLS LAST LIMIT 3
order-18 SELECT id AS x FROM t ORDER BY x DESC LIMIT 2
order-19 SELECT id FROM t ORDER BY i * -1, id
order-20 SELECT id FROM t ORDER BY 5
order-21 SELECT id, f FROM t ORDER BY f, id
order-22 SELECT id, ts FROM t ORDER BY ts DESC, id
order-23 SELECT id FROM t ORDER BY upper(s), id
order-24 SELECT i FROM t ORDER BY id LIMIT 2 OFFSET 1

@family agg Aggregates: count, sum, avg, min, max, string_agg, array_agg over NULLs and empty input, DISTINCT, FILTER and an aggregate's own ORDER BY
agg-01 SELECT count(*), count(i), count(s), count(f) FROM t
agg-02 SELECT sum(i), min(i), max(i) FROM t
agg-03 SELECT min(b), max(b) FROM t
agg-04 SELECT min(s), max(s), min(v), max(v), min(c), max(c) FROM t
agg-05 SELECT min(ts), max(ts) FROM t
agg-06 SELECT sum(i), avg(i), count(i) FROM t WHERE i IS NULL
agg-07 SELECT count(*), sum(n), max(n), avg(n) FROM g WHERE id > 100
agg-08 SELECT count(DISTINCT i), sum(DISTINCT i) FROM t
agg-09 SELECT max(i) + 1 FROM t
agg-10 SELECT sum(i) + 1 FROM t
agg-11 SELECT count(*) FROM t WHERE i > 0
agg-12 SELECT count(1), count(NULL) FROM t
agg-13 SELECT sum(NULL::int) FROM t
agg-14 SELECT max(length(s)), min(length(v)) FROM t
agg-15 SELECT sum(i) FILTER (WHERE i > 0) FROM t
agg-16 SELECT count(*) FILTER (WHERE f) FROM t
agg-17 SELECT avg(i)::int FROM t
agg-18 SELECT sum(b) FROM t
agg-19 SELECT grp, min(m), max(m), avg(m) FROM g GROUP BY grp ORDER BY grp
agg-20 SELECT grp, string_agg(grp, '-'), count(*) FROM g GROUP BY grp ORDER BY grp
agg-21 SELECT string_agg(s, ','), array_agg(i) FROM t WHERE false
agg-22 SELECT array_agg(n), array_agg(DISTINCT grp) FROM g WHERE id = 3
agg-23 SELECT array_agg(id ORDER BY id DESC), string_agg(s, ',' ORDER BY s NULLS FIRST) FROM t WHERE id < 5
agg-24 SELECT grp, array_agg(n ORDER BY n DESC NULLS LAST, id) FROM g GROUP BY grp ORDER BY grp
agg-25 SELECT array_agg(DISTINCT grp ORDER BY grp DESC) FROM g
agg-26 SELECT upper(s ORDER BY s) FROM t

@family null WHERE with NULL logic: comparisons with NULL, NOT, AND/OR, IS [NOT] NULL, IS [NOT] TRUE/FALSE
null-01 SELECT id FROM t WHERE i = NULL
null-02 SELECT id FROM t WHERE i IS NULL ORDER BY id
null-03 SELECT id FROM t WHERE i IS NOT NULL ORDER BY id
null-04 SELECT id FROM t WHERE i <> 10 ORDER BY id
null-05 SELECT id FROM t WHERE NOT (i = 10) ORDER BY id
null-06 SELECT id FROM t WHERE i > 0 OR s IS NULL ORDER BY id
null-07 SELECT id FROM t WHERE i > 0 AND b > 0 ORDER BY id
null-08 SELECT id FROM t WHERE NOT (i > 0 AND f) ORDER BY id
null-09 SELECT NULL = NULL, NULL IS NULL, NULL <> 1, 1 IS NOT NULL
null-10 SELECT id, i > 0 OR f FROM t ORDER BY id
null-11 SELECT id FROM t WHERE f IS NOT FALSE ORDER BY id
null-12 SELECT id FROM t WHERE s = v ORDER BY id
null-13 SELECT id FROM t WHERE s <> v ORDER BY id

@family pred Predicates and conditionals: IN, BETWEEN, LIKE (with `_`, `%` and `\` escapes), CASE and COALESCE, with NULLs
pred-01 SELECT id FROM t WHERE i IN (10, 0) ORDER BY id
pred-02 SELECT id FROM t WHERE i NOT IN (10, 0) ORDER BY id
pred-03 SELECT id FROM t WHERE i NOT IN (10, NULL)
pred-04 SELECT 1 IN (1, NULL), 2 IN (1, NULL), 2 NOT IN (1, NULL)
pred-05 SELECT id FROM t WHERE s IN ('apple', 'Apple') ORDER BY id
pred-06 SELECT id FROM t WHERE v IN ('abc', 'abc ') ORDER BY id
pred-07 SELECT id FROM t WHERE c IN ('abc', 'x') ORDER BY id
pred-08 SELECT id FROM t WHERE i BETWEEN 0 AND 10 ORDER BY id
pred-09 SELECT id FROM t WHERE i NOT BETWEEN 0 AND 10 ORDER BY id
pred-10 SELECT id FROM t WHERE i BETWEEN 10 AND 0
pred-11 SELECT id FROM t WHERE s BETWEEN 'a' AND 'b' ORDER BY id
pred-12 SELECT id FROM t WHERE ts BETWEEN '2024-01-01' AND '2024-12-31' ORDER BY id
pred-13 SELECT 5 BETWEEN 1 AND NULL, 0 BETWEEN 1 AND NULL
pred-14 SELECT id FROM t WHERE s LIKE 'a%' ORDER BY id
pred-15 SELECT id FROM t WHERE s LIKE '%l%' ORDER BY id
pred-16 SELECT id FROM t WHERE s NOT LIKE '%e%' ORDER BY id
pred-17 SELECT id FROM t WHERE s LIKE '_____' ORDER BY id
pred-18 SELECT id FROM t WHERE s LIKE '漢%' ORDER BY id
pred-19 SELECT id FROM t WHERE s LIKE 'h_llo%' ORDER BY id
pred-20 SELECT id FROM t WHERE v LIKE 'abc_' ORDER BY id
pred-21 SELECT id FROM t WHERE c LIKE 'abc' ORDER BY id
pred-22 SELECT 'abc' LIKE 'ABC', 'abc' LIKE 'a%', 'abc' LIKE '_b_', '' LIKE '%'
pred-23 SELECT '50%' LIKE '50\%', 'a_c' LIKE 'a\_c', 'abc' LIKE 'a\_c'
pred-24 SELECT NULL LIKE 'a', 'a' LIKE NULL
pred-25 SELECT id, CASE WHEN i > 0 THEN 'pos' WHEN i < 0 THEN 'neg' ELSE 'zero or null' END FROM t ORDER BY id
pred-26 SELECT id, CASE i WHEN 10 THEN 'ten' WHEN 0 THEN 'zero' END FROM t ORDER BY id
pred-27 SELECT CASE WHEN false THEN 1 END
pred-28 SELECT CASE WHEN true THEN 1 ELSE 2.5 END, CASE WHEN false THEN 1 ELSE 2.5 END
pred-29 SELECT CASE WHEN true THEN 1 ELSE 'a' END
pred-30 SELECT id, CASE WHEN i > 0 THEN i ELSE b END FROM t ORDER BY id
pred-31 SELECT CASE WHEN 1 / 0 = 1 THEN 1 ELSE 2 END
pred-32 SELECT coalesce(NULL, NULL, 3), coalesce(NULL::int, 1), coalesce(NULL, 'a')
pred-33 SELECT id, coalesce(i, -1), coalesce(s, v, 'none') FROM t ORDER BY id
pred-34 SELECT id, coalesce(i, b) FROM t ORDER BY id
pred-35 SELECT coalesce(1, 1 / 0)

@family subq Subqueries: scalar, EXISTS, IN and NOT IN (with NULLs), ANY/ALL over a subquery, correlated (two levels deep), in FROM with aliases
subq-01 SELECT (SELECT 1)
subq-02 SELECT id, (SELECT max(i) FROM t) FROM t WHERE id = 1
subq-03 SELECT * FROM (SELECT 1 AS x) s
subq-04 SELECT EXISTS (SELECT 1 FROM t)
subq-05 SELECT id FROM t WHERE id IN (SELECT tid FROM u) ORDER BY id
subq-06 SELECT id FROM t WHERE id NOT IN (SELECT tid FROM u) ORDER BY id
subq-07 SELECT id FROM t WHERE id NOT IN (SELECT tid FROM u WHERE tid IS NOT NULL) ORDER BY id
subq-08 SELECT id, (SELECT count(*) FROM u WHERE u.tid = t.id) AS n FROM t ORDER BY id
subq-09 SELECT id FROM t WHERE EXISTS (SELECT 1 FROM u WHERE u.tid = t.id) ORDER BY id
subq-10 SELECT id FROM t WHERE NOT EXISTS (SELECT 1 FROM u WHERE u.tid = t.id) ORDER BY id
subq-11 SELECT (SELECT name FROM u WHERE u.tid = t.id) FROM t WHERE id = 1
subq-12 SELECT (SELECT id, tid FROM u)
subq-13 SELECT s.k, s.n FROM (SELECT tid AS k, count(*) AS n FROM u GROUP BY tid) s ORDER BY s.k NULLS FIRST
subq-14 SELECT * FROM (SELECT id, s FROM t WHERE id < 3) AS x (a, b) ORDER BY a
subq-15 SELECT count(*) FROM (SELECT 1) s, (SELECT 2) s2
subq-16 SELECT id FROM t WHERE i > ALL (SELECT n FROM g WHERE n IS NOT NULL) ORDER BY id
subq-17 SELECT id FROM t WHERE i = ANY (SELECT n FROM g) ORDER BY id
subq-18 SELECT 1 IN (SELECT NULL::int), 1 NOT IN (SELECT NULL::int), NULL::int IN (SELECT 1 WHERE false)
subq-19 SELECT id FROM t t1 WHERE 1 = (SELECT count(*) FROM u WHERE u.tid = t1.id AND EXISTS (SELECT 1 FROM g WHERE g.id = t1.id)) ORDER BY id
subq-20 SELECT grp, (SELECT max(m) FROM g g2 WHERE g2.grp = g.grp) AS top FROM g GROUP BY grp ORDER BY grp
subq-21 SELECT * FROM (SELECT 1)
subq-22 SELECT id, (SELECT k FROM u WHERE u.id = t.id) || '!' AS k FROM t ORDER BY id
subq-23 SELECT id FROM t WHERE (SELECT count(*) FROM u WHERE u.tid = t.id) > 1
subq-24 SELECT u.name FROM u WHERE u.tid IN (SELECT id FROM t WHERE s ILIKE 'a%') ORDER BY 1

@family cte WITH, WITH RECURSIVE and set operations: UNION [ALL], INTERSECT [ALL], EXCEPT [ALL], ORDER BY, LIMIT and FETCH FIRST over them
cte-01 WITH x AS (SELECT 1 AS a) SELECT a FROM x
cte-02 WITH a AS (SELECT id FROM t WHERE id < 4), b AS (SELECT id FROM a WHERE id > 1) SELECT * FROM b ORDER BY id
cte-03 WITH c (n) AS (SELECT count(*) FROM u) SELECT n FROM c
cte-04 SELECT 1 UNION SELECT 2
cte-05 SELECT id FROM t INTERSECT SELECT id FROM u
cte-06 SELECT id FROM t EXCEPT SELECT id FROM u
cte-07 SELECT tid FROM u UNION ALL SELECT id FROM t ORDER BY 1 NULLS FIRST
cte-08 SELECT grp FROM g UNION SELECT k FROM u ORDER BY 1 LIMIT 3
cte-09 SELECT n FROM g INTERSECT ALL SELECT n FROM g WHERE id > 2
cte-10 SELECT n FROM g EXCEPT ALL SELECT n FROM g WHERE id > 3
cte-11 SELECT 1 UNION SELECT 1, 2
cte-12 SELECT id, s FROM t WHERE id = 1 UNION ALL SELECT id, k FROM u WHERE id = 1 ORDER BY id, s
cte-13 (SELECT id FROM t ORDER BY id LIMIT 2) UNION ALL (SELECT id FROM u ORDER BY id DESC LIMIT 1)
cte-14 SELECT 1.5 UNION SELECT 2
cte-15 SELECT id FROM t ORDER BY id FETCH FIRST 2 ROWS ONLY
cte-16 SELECT id FROM t ORDER BY id OFFSET 6 ROWS FETCH NEXT 1 ROW ONLY
cte-17 WITH x AS (SELECT id FROM t) SELECT count(*) FROM x, x AS y
cte-18 SELECT 'T' AS k, s FROM t WHERE id < 3 UNION ALL SELECT 'C', name FROM u WHERE id < 3 ORDER BY 1, 2
cte-19 SELECT id FROM t UNION SELECT id FROM u EXCEPT SELECT id FROM g ORDER BY id
cte-20 SELECT x FROM (SELECT 1 AS x UNION ALL SELECT 2) AS v ORDER BY x DESC
cte-21 VALUES (1, 'a'), (2, NULL)
cte-22 SELECT id FROM t WHERE id IN (SELECT 1 UNION ALL VALUES (3)) ORDER BY id
cte-23 VALUES (1), (2, 3)
cte-24 WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM n WHERE x < 5) SELECT x FROM n ORDER BY x
cte-25 WITH RECURSIVE r AS (SELECT id, tid FROM u WHERE id = 2 UNION SELECT u.id, u.tid FROM u JOIN r ON u.id = r.tid) SELECT * FROM r ORDER BY id
cte-26 WITH RECURSIVE c(k) AS (SELECT 0 UNION SELECT (k + 1) % 3 FROM c) SELECT k FROM c ORDER BY k
cte-27 WITH RECURSIVE a AS (SELECT 1 AS v), b(w) AS (SELECT v FROM a UNION ALL SELECT w * 2 FROM b WHERE w < 8) SELECT w, (SELECT count(*) FROM b) FROM b ORDER BY w
cte-28 WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x + 1::bigint FROM n WHERE x < 3) SELECT x FROM n
cte-29 WITH RECURSIVE n(x, path) AS (SELECT id, s FROM t WHERE id = 1 UNION ALL SELECT t.id, n.path || '>' || t.s FROM n JOIN t ON t.id = n.x + 1 WHERE n.x < 3) SELECT * FROM n ORDER BY x

@family array Arrays: ARRAY[…], ARRAY(SELECT …) and '{…}' literals of the basic types, their text output, = ANY and <> ALL with NULLs, `||`, subscripts, array_to_string, array_remove and kin, unnest in FROM (WITH ORDINALITY) and in the select list, pg_options_to_table, subscripts of a name
array-01 SELECT ARRAY[1, 2]
array-02 SELECT 1 = ANY (ARRAY[1, 2])
array-03 SELECT ARRAY['a', 'b c', NULL, '', 'NULL', 'x"y', 'a,b']
array-04 SELECT '{1,2,3}'::int[], '{a,b}'::text[], '{}'::int8[], '{t,f,NULL}'::bool[]
array-05 SELECT id FROM t WHERE id = ANY ('{1,3,5}'::int[]) ORDER BY id
array-06 SELECT id FROM t WHERE s = ANY (ARRAY['apple', 'Banana']) ORDER BY id
array-07 SELECT id FROM t WHERE id <> ALL (ARRAY[1, 2, 3]) ORDER BY id
array-08 SELECT 1 = ANY (ARRAY[2, NULL]), 1 = ANY (ARRAY[1, NULL]), 1 <> ALL (ARRAY[2, NULL]), 1 = ALL ('{}'::int[]), NULL::int = ANY (ARRAY[1])
array-09 SELECT ARRAY[1.5, 2], ARRAY['2024-01-01'::date], ARRAY[1, 2]::text
array-10 SELECT '{1,x}'::int[]
array-11 SELECT ARRAY[]
array-12 SELECT ARRAY[]::varchar[], ARRAY[1, 2] = ARRAY[1, 2], '{a}'::name[]
array-13 SELECT id FROM t WHERE id > ANY (ARRAY[5, 6]) ORDER BY id
array-14 SELECT 'x' = ANY (ARRAY[1])
array-15 SELECT ARRAY[i, id] FROM t ORDER BY id
array-16 SELECT '{"a b", "c\"d"}'::text[], ' { x , y } '::varchar[]
array-17 SELECT ARRAY(SELECT id FROM t WHERE id < 4 ORDER BY id DESC), ARRAY(SELECT s FROM t WHERE false)
array-18 SELECT ARRAY(SELECT id, i FROM t)
array-19 SELECT id, ARRAY(SELECT u.id FROM u WHERE u.tid = t.id ORDER BY u.id) AS us FROM t ORDER BY id
array-20 SELECT array_to_string(ARRAY['a', NULL, 'b'], ','), array_to_string(ARRAY[1, NULL, 3], '-', '*'), array_to_string('{}'::text[], ',')
array-21 SELECT ARRAY[1, 2] || ARRAY[3], ARRAY['a'] || 'b'::text, 'z'::text || ARRAY['a'], NULL::int[] || ARRAY[1], ARRAY[1] || '{2,3}'
array-29 SELECT ARRAY['a'] || 'b'
array-22 SELECT (ARRAY[10, 20, 30])[2], (ARRAY[10, 20])[5], ('{a,b}'::text[])[1]
array-23 SELECT x FROM unnest(ARRAY[3, 1, 2]) x ORDER BY x
array-24 SELECT * FROM unnest('{a,NULL,c}'::text[]) AS u(v)
array-25 SELECT unnest(ARRAY[1, 2])
array-26 SELECT array_length(ARRAY[1, 2, 3], 1), array_length('{}'::int[], 1), cardinality(ARRAY[1, 2]), array_upper(ARRAY[5], 1), array_lower(ARRAY[5], 2)
array-27 SELECT id, (SELECT count(*) FROM unnest(ARRAY[id, i]) x WHERE x IS NOT NULL) AS n FROM t WHERE id < 4 ORDER BY id
array-28 SELECT array_append(ARRAY[1], 2), array_prepend(0, ARRAY[1]), array_cat(ARRAY[1], NULL)
array-30 SELECT * FROM unnest(ARRAY['a', 'b', NULL]) WITH ORDINALITY AS u(v, n) ORDER BY n
array-31 SELECT id, unnest(ARRAY[id, id * 10]) AS x FROM t WHERE id < 3 ORDER BY id, x
array-32 SELECT unnest(ARRAY[1, 2, 3]) AS a, unnest(ARRAY['x']) AS b, 7 AS c
array-33 SELECT array_remove(ARRAY[1, 2, 1, NULL], 1), array_remove(ARRAY['a', NULL], NULL), array_remove(NULL::int[], 1)
array-34 SELECT * FROM pg_options_to_table(ARRAY['fillfactor=70', 'a=b=c', 'flag']) ORDER BY 1
array-35 SELECT id, s FROM t, unnest(ARRAY[1, 3]) WITH ORDINALITY AS o(val, k) WHERE id = val ORDER BY k
array-36 SELECT n[0], n[2], n[3] = '', n[63] IS NULL, n[64] IS NULL, n[-1] IS NULL FROM (SELECT 'abc'::name AS n) AS s

@family regex Regular expressions and ILIKE: ~, ~*, !~, !~*, OPERATOR(pg_catalog.op), ~ ANY/ALL (array), ILIKE with Unicode case, 2201B for a bad pattern
regex-01 SELECT 'abc' ~ '^a'
regex-02 SELECT s, s ~ 'pp', s ~* '^a', s !~ 'a', s !~* 'A' FROM t ORDER BY id
regex-03 SELECT id FROM t WHERE s OPERATOR(pg_catalog.~) '^(apple|Apple)$' ORDER BY id
regex-04 SELECT 'abc' ILIKE 'A%'
regex-05 SELECT id FROM t WHERE s ILIKE 'APPLE' ORDER BY id
regex-06 SELECT 'ÉTÉ' ILIKE 'été', 'Été' ~* 'ÉTÉ', 'abc' NOT ILIKE 'A_C'
regex-07 SELECT 'a' ~ '('
regex-08 SELECT 'foo bar' ~ '\mbar\M', 'x12' ~ '[[:digit:]]+$', 'a.b' ~ 'a\.b'
regex-09 SELECT NULL ~ 'a', 'a' ~ NULL
regex-10 SELECT 1 ~ 'a'
regex-11 SELECT 'abc' OPERATOR(pg_catalog.=) 'abc', 2 OPERATOR(pg_catalog.+) 3, 'ab' OPERATOR(pg_catalog.~~) 'a%'
regex-12 SELECT id FROM t WHERE s ~ 'l' COLLATE pg_catalog.default ORDER BY id
regex-13 SELECT id, id OPERATOR(pg_catalog.<>) ALL ('{1,2}'::int[]) FROM t WHERE s OPERATOR(pg_catalog.=) ANY (ARRAY['apple', 'Banana']) ORDER BY id
regex-14 SELECT 'abc' ~ ANY (ARRAY['^a', 'x']), 'abc' ~ ALL (ARRAY['^a', 'x']), 'abc' !~* ALL (ARRAY['^A', 'x']), 'abc' ~ ANY ('{}'::text[]), NULL::text ~ ANY (ARRAY['a']), 'a' ~ ANY (ARRAY[NULL, 'b']), 'a' ~ ANY (ARRAY[NULL, 'a']), 'a' ~ ANY (NULL::text[])
regex-15 SELECT id FROM t WHERE s ~* ANY (ARRAY['^a', 'b$']) ORDER BY id

@family expr Everyday expressions: NULLIF, concat, concat_ws, greatest, least, trim, replace, position, lpad, rpad, split_part, strpos, initcap, upper/lower (Unicode), quote_ident, IS [NOT] DISTINCT FROM, BETWEEN SYMMETRIC, ^, COLLATE "C"
expr-01 SELECT replace('abc', 'b', 'x')
expr-02 SELECT trim('  x  '), ltrim('  x')
expr-03 SELECT position('b' IN 'abc')
expr-04 SELECT nullif(1, 1)
expr-05 SELECT greatest(1, 2), least(1, 2)
expr-06 SELECT concat('a', 1, NULL)
expr-07 SELECT lpad('x', 3), strpos('abc', 'c'), split_part('a,b', ',', 2)
expr-08 SELECT id FROM t WHERE i IS DISTINCT FROM 10 ORDER BY id
expr-09 SELECT 2 ^ 10
expr-10 SELECT 'a' < 'B' COLLATE "C"
expr-11 SELECT id, nullif(i, 10), greatest(i, 0), least(s, v) FROM t ORDER BY id
expr-12 SELECT concat_ws('-', s, i, f), concat(s, NULL, b) FROM t ORDER BY id
expr-13 SELECT trim(BOTH 'x' FROM 'xxaxx'), trim(LEADING FROM '  a '), trim(TRAILING 'ab' FROM 'cabab'), btrim('xyx', 'x'), rtrim('a  ')
expr-14 SELECT lpad('hello', 3), lpad('7', 3, '0'), rpad('ab', 5, 'xy'), lpad('x', -1), rpad('é', 3, 'ü')
expr-15 SELECT split_part('a.b.c', '.', -1), split_part('abc', '', 1), split_part('a.b', '.', 5)
expr-16 SELECT split_part('a', ',', 0)
expr-17 SELECT id, upper(s), lower(s), initcap(s) FROM t ORDER BY id
expr-18 SELECT upper('héllo'), lower('ÀBC'), initcap('hello wORLD-foo bar_baz 3rd')
expr-19 SELECT NULL IS DISTINCT FROM NULL, 1 IS NOT DISTINCT FROM NULL, 'a' IS DISTINCT FROM 'b'
expr-20 SELECT 4::float8 ^ 0.5, 0::float8 ^ 0
expr-21 SELECT 0::float8 ^ -1
expr-22 SELECT strpos('héllo', 'l'), position('' IN 'abc'), replace('aaa', '', 'x')
expr-23 SELECT greatest('a', NULL, 'c'), least(1, 2.5), greatest(NULL, NULL)
expr-24 SELECT nullif('a', 'a'), nullif(NULL::int, 1), nullif(2, NULL)
expr-25 SELECT greatest(1, 'a')
expr-26 SELECT 2 BETWEEN SYMMETRIC 3 AND 1, 2 NOT BETWEEN SYMMETRIC 3 AND 1, 5 BETWEEN ASYMMETRIC 3 AND 1
expr-27 SELECT id FROM t WHERE i BETWEEN SYMMETRIC (20 - 10) AND -5 ORDER BY id
expr-28 SELECT quote_ident('abc'), quote_ident('Abc'), quote_ident('a b'), quote_ident('select'), quote_ident('user'), quote_ident('name'), quote_ident('x"y')

@family ljoin Outer joins, USING and CASE: LEFT JOIN on any condition, JOIN … USING and NATURAL JOIN (merged columns), CASE in every position
ljoin-01 SELECT t.id, u.id FROM t LEFT JOIN u ON u.tid = t.id AND u.k LIKE 'a%' ORDER BY 1, 2
ljoin-02 SELECT t.id, u.name FROM t LEFT JOIN u ON t.id = u.tid WHERE u.id IS NULL ORDER BY 1
ljoin-03 SELECT t.id, x.n FROM t LEFT JOIN (SELECT tid, count(*) AS n FROM u GROUP BY tid) x ON x.tid = t.id ORDER BY 1
ljoin-04 SELECT t.id, u.id FROM t LEFT JOIN u ON t.id < u.id AND u.id < 3 ORDER BY 1, 2
ljoin-05 SELECT CASE WHEN id > 2 THEN 'big' ELSE 'small' END AS sz, count(*) FROM t GROUP BY 1 ORDER BY 1
ljoin-06 SELECT id FROM t ORDER BY CASE WHEN s IS NULL THEN 0 ELSE 1 END, id
ljoin-07 SELECT id FROM t WHERE CASE WHEN i > 0 THEN true ELSE false END ORDER BY id
ljoin-08 SELECT t.id, g.grp FROM t LEFT JOIN g ON g.id = t.id AND g.grp = 'a' LEFT JOIN u ON u.id = g.id ORDER BY 1
ljoin-09 SELECT count(*) FROM t JOIN u USING (id)
ljoin-10 SELECT count(*) FROM t NATURAL JOIN u
ljoin-11 SELECT * FROM t JOIN u USING (id) ORDER BY id
ljoin-12 SELECT id, t.s, u.k FROM t LEFT JOIN u USING (id) ORDER BY id
ljoin-13 SELECT * FROM g NATURAL JOIN (SELECT 1 AS id, 'a' AS grp) x
ljoin-14 SELECT * FROM u NATURAL LEFT JOIN (SELECT 2 AS id, 'banana' AS k) x ORDER BY id
ljoin-15 SELECT count(*) FROM t JOIN u USING (nope)
ljoin-16 SELECT id FROM t a JOIN t b USING (id) JOIN t c USING (id) ORDER BY id
ljoin-17 SELECT count(*) FROM t JOIN t b USING (id, id)
@family wr Writes: RETURNING on INSERT, UPDATE and DELETE; INSERT … ON CONFLICT DO NOTHING / DO UPDATE with EXCLUDED; sequences, nextval/currval/setval/lastval, SERIAL and identity columns
wr-01 INSERT INTO u VALUES (100, 1, 'x', 'y') RETURNING id
wr-02 UPDATE u SET k = k WHERE id = 1 RETURNING id
wr-03 CREATE TABLE wr1 (id serial PRIMARY KEY, v text, n int)
wr-04 INSERT INTO wr1 (v, n) VALUES ('a', 1), ('b', 2) RETURNING id, v || '!' AS x, n * 2
wr-05 INSERT INTO wr1 (v, n) SELECT s, i FROM t WHERE id IN (1, 2) RETURNING id, v, n
wr-06 UPDATE wr1 SET n = n + 10 WHERE id = 2 RETURNING *
wr-07 DELETE FROM wr1 WHERE id = 1 RETURNING id, upper(v), n IS NULL AS gone
wr-08 DELETE FROM wr1 WHERE id = 99 RETURNING id
wr-09 SELECT currval('wr1_id_seq'), lastval()
wr-10 SELECT id, v, n FROM wr1 ORDER BY id
wr-11 CREATE SEQUENCE wrs INCREMENT BY 5 START WITH 10
wr-12 SELECT currval('wrs')
wr-13 SELECT nextval('wrs'), nextval('wrs'), currval('wrs')
wr-14 SELECT setval('wrs', 100), nextval('wrs')
wr-15 SELECT setval('wrs', 50, false), nextval('wrs'), nextval('wrs')
wr-16 SELECT setval('wrs', 0)
wr-17 ALTER SEQUENCE wrs RESTART WITH 7
wr-18 SELECT nextval('wrs')
wr-19 ALTER SEQUENCE wrs INCREMENT BY 2
wr-20 SELECT nextval('wrs')
wr-21 DROP SEQUENCE wrs
wr-22 SELECT nextval('wrs')
wr-23 CREATE SEQUENCE wrc MINVALUE 1 MAXVALUE 2 CYCLE
wr-24 SELECT nextval('wrc'), nextval('wrc'), nextval('wrc')
wr-25 CREATE SEQUENCE wrm MAXVALUE 2 START 2
wr-26 SELECT nextval('wrm')
wr-27 SELECT nextval('wrm')
wr-28 CREATE SEQUENCE wrd INCREMENT BY -3
wr-29 SELECT nextval('wrd'), nextval('wrd')
wr-30 CREATE SEQUENCE wrz INCREMENT BY 0
wr-31 CREATE SEQUENCE wrx MINVALUE 10 MAXVALUE 5
wr-32 CREATE SEQUENCE wrc
wr-33 CREATE TABLE wr2 (id int GENERATED ALWAYS AS IDENTITY, v text)
wr-34 INSERT INTO wr2 (id, v) VALUES (1, 'x')
wr-35 INSERT INTO wr2 (v) VALUES ('x'), ('y') RETURNING id, v
wr-36 CREATE TABLE wr3 (id bigint GENERATED BY DEFAULT AS IDENTITY (START WITH 100 INCREMENT BY 10), v text)
wr-37 INSERT INTO wr3 (v) VALUES ('a') RETURNING id
wr-38 INSERT INTO wr3 (id, v) VALUES (5, 'b') RETURNING id
wr-39 INSERT INTO wr3 (v) VALUES ('c') RETURNING id
wr-40 CREATE TABLE wr4 (id bigserial, v text)
wr-41 SELECT setval('wr4_id_seq', 3000000000)
wr-42 INSERT INTO wr4 (v) VALUES ('a') RETURNING id, v
wr-43 DELETE FROM wr1 RETURNING count(*)
wr-44 SELECT nextval('nosuch')
wr-45 INSERT INTO u VALUES (1, 1, 'x', 'y') ON CONFLICT DO NOTHING
wr-46 CREATE TABLE wr5 (k int PRIMARY KEY, v int NOT NULL, note text)
wr-47 INSERT INTO wr5 VALUES (1, 10, 'a'), (2, 20, 'b') ON CONFLICT (k) DO NOTHING RETURNING k
wr-48 INSERT INTO wr5 VALUES (1, 5, 'c') ON CONFLICT (k) DO UPDATE SET v = wr5.v + EXCLUDED.v, note = EXCLUDED.note RETURNING *
wr-49 INSERT INTO wr5 VALUES (2, 5, 'd') ON CONFLICT ON CONSTRAINT wr5_pkey DO UPDATE SET v = 0 WHERE wr5.v > 100 RETURNING k
wr-50 INSERT INTO wr5 AS w VALUES (3, 1, 'e'), (2, 2, 'f') ON CONFLICT (k) DO UPDATE SET v = w.v * 2 RETURNING w.k, w.v
wr-51 INSERT INTO wr5 VALUES (9, 1, 'x') ON CONFLICT (v) DO NOTHING
wr-52 INSERT INTO wr5 VALUES (9, 1, 'x'), (9, 2, 'y') ON CONFLICT (k) DO UPDATE SET v = EXCLUDED.v
wr-53 INSERT INTO wr5 VALUES (9, 1, 'x'), (9, 2, 'y') ON CONFLICT (k) DO NOTHING RETURNING k, v
wr-54 INSERT INTO wr5 VALUES (1, 1, 'x') ON CONFLICT DO UPDATE SET v = 1
wr-55 INSERT INTO wr5 VALUES (1, 1, 'x') ON CONFLICT ON CONSTRAINT nosuch DO NOTHING
wr-56 SELECT k, v, note FROM wr5 ORDER BY k

@family fk Foreign keys: REFERENCES and FOREIGN KEY, 23503 on INSERT, UPDATE and DELETE, checked at the end of the statement, ON DELETE/UPDATE NO ACTION, RESTRICT, CASCADE, SET NULL, SET DEFAULT, ALTER TABLE ADD/DROP CONSTRAINT, 42830, DROP TABLE of a referenced table (2BP01)
fk-01 CREATE TABLE fkp (id int PRIMARY KEY, code text UNIQUE, note text)
fk-02 CREATE TABLE fkc (id int PRIMARY KEY, pid int REFERENCES fkp (id), code text REFERENCES fkp (code) ON UPDATE CASCADE)
fk-03 INSERT INTO fkp VALUES (1, 'a', 'one'), (2, 'b', 'two'), (3, 'c', 'three')
fk-04 INSERT INTO fkc VALUES (1, 99, NULL)
fk-05 INSERT INTO fkc VALUES (1, 1, 'a'), (2, NULL, 'b'), (3, 2, NULL)
fk-06 INSERT INTO fkc VALUES (4, 1, 'zz')
fk-07 UPDATE fkc SET pid = 98 WHERE id = 3
fk-08 DELETE FROM fkp WHERE id = 1
fk-09 UPDATE fkp SET id = 10 WHERE id = 2
fk-10 UPDATE fkp SET note = 'uno' WHERE id = 1 RETURNING id, note
fk-11 UPDATE fkp SET code = 'aa' WHERE id = 1
fk-12 SELECT id, pid, code FROM fkc ORDER BY id
fk-13 DELETE FROM fkp WHERE id = 3 RETURNING id
fk-14 UPDATE fkp SET id = id + 100 WHERE id IN (1, 2)
fk-15 CREATE TABLE fkself (id int PRIMARY KEY, up int REFERENCES fkself)
fk-16 INSERT INTO fkself VALUES (2, 1), (1, NULL)
fk-17 INSERT INTO fkself VALUES (3, 4)
fk-18 DELETE FROM fkself WHERE id = 1
fk-19 CREATE TABLE fkcas (id int PRIMARY KEY, pid int REFERENCES fkp ON DELETE CASCADE ON UPDATE CASCADE)
fk-20 CREATE TABLE fknul (id int PRIMARY KEY, pid int REFERENCES fkp ON DELETE SET NULL)
fk-21 CREATE TABLE fkdef (id int PRIMARY KEY, pid int DEFAULT 5 REFERENCES fkp ON DELETE SET DEFAULT)
fk-22 CREATE TABLE fkres (id int PRIMARY KEY, pid int REFERENCES fkp ON DELETE RESTRICT)
fk-23 INSERT INTO fkp VALUES (4, 'd', 'four'), (5, 'e', 'five'), (6, 'f', 'six'), (7, 'g', 'seven')
fk-24 INSERT INTO fkcas VALUES (1, 4), (2, 4), (3, 5)
fk-25 INSERT INTO fknul VALUES (1, 4), (2, 5)
fk-26 INSERT INTO fkdef VALUES (1, 6)
fk-27 INSERT INTO fkres VALUES (1, 7)
fk-28 DELETE FROM fkp WHERE id = 4 RETURNING id
fk-29 SELECT id, pid FROM fkcas ORDER BY id
fk-30 SELECT id, pid FROM fknul ORDER BY id
fk-31 UPDATE fkp SET id = 50 WHERE id = 5
fk-32 SELECT id, pid FROM fkcas ORDER BY id
fk-33 DELETE FROM fkp WHERE id = 6
fk-34 SELECT id, pid FROM fkdef ORDER BY id
fk-35 DELETE FROM fkp WHERE id = 7
fk-36 DELETE FROM fkres
fk-37 DELETE FROM fkp WHERE id = 7 RETURNING note
fk-38 CREATE TABLE fkalt (id int PRIMARY KEY, pid int)
fk-39 INSERT INTO fkalt VALUES (1, 1), (2, 42)
fk-40 ALTER TABLE fkalt ADD CONSTRAINT fkalt_fk FOREIGN KEY (pid) REFERENCES fkp (id)
fk-41 DELETE FROM fkalt WHERE id = 2
fk-42 ALTER TABLE fkalt ADD CONSTRAINT fkalt_fk FOREIGN KEY (pid) REFERENCES fkp (id) ON DELETE CASCADE
fk-43 INSERT INTO fkalt VALUES (3, 43)
fk-44 ALTER TABLE fkalt ADD CONSTRAINT fkalt_fk FOREIGN KEY (pid) REFERENCES fkp (id)
fk-45 ALTER TABLE fkalt DROP CONSTRAINT fkalt_fk
fk-46 ALTER TABLE fkalt DROP CONSTRAINT fkalt_fk
fk-47 ALTER TABLE fkalt DROP CONSTRAINT IF EXISTS fkalt_fk
fk-48 INSERT INTO fkalt VALUES (3, 43)
fk-49 CREATE TABLE fkbad (x int REFERENCES fkp (note))
fk-50 CREATE TABLE fkbad (x int REFERENCES nosuch)
fk-51 CREATE TABLE fkbad (x text REFERENCES fkp)
fk-52 CREATE TABLE fkbad (x int REFERENCES fkp (nosuch))
fk-53 CREATE TABLE fkbad (x int, FOREIGN KEY (x, x) REFERENCES fkp (id))
fk-54 CREATE TABLE fknopk (x int)
fk-55 CREATE TABLE fkbad (x int REFERENCES fknopk)
fk-56 DROP TABLE fkp
fk-57 CREATE TABLE fkmul (a int, b int, PRIMARY KEY (a, b))
fk-58 CREATE TABLE fkmc (id int PRIMARY KEY, a int, b int, CONSTRAINT fkmc_ab FOREIGN KEY (a, b) REFERENCES fkmul (a, b))
fk-59 INSERT INTO fkmul VALUES (1, 2)
fk-60 INSERT INTO fkmc VALUES (1, 1, 2), (2, 1, NULL), (3, NULL, 9)
fk-61 INSERT INTO fkmc VALUES (4, 2, 1)
fk-62 DELETE FROM fkmul
fk-63 SELECT id, a, b FROM fkmc ORDER BY id
fk-64 DROP TABLE fkmc
fk-65 DROP TABLE fkmul

@family dmlj UPDATE … FROM and DELETE … USING: the target joined with other tables, the first matching row's values, RETURNING over both
dmlj-01 CREATE TABLE dj (id int PRIMARY KEY, bal int NOT NULL)
dmlj-02 CREATE TABLE djp (acct int, amt int)
dmlj-03 INSERT INTO dj VALUES (1, 100), (2, 200), (3, 300)
dmlj-04 INSERT INTO djp VALUES (1, 5), (2, 70), (9, 1)
dmlj-05 UPDATE dj SET bal = dj.bal + p.amt FROM djp p WHERE p.acct = dj.id RETURNING dj.id, dj.bal, p.amt
dmlj-06 SELECT id, bal FROM dj ORDER BY id
dmlj-07 UPDATE dj AS d SET bal = 0 FROM djp WHERE djp.acct = d.id AND djp.amt > 1000
dmlj-08 DELETE FROM dj USING djp WHERE djp.acct = dj.id AND djp.amt > 50 RETURNING dj.id, djp.amt
dmlj-09 DELETE FROM dj d USING djp p, t WHERE p.acct = d.id AND t.id = p.acct RETURNING d.*
dmlj-10 SELECT id, bal FROM dj ORDER BY id
dmlj-11 UPDATE dj SET bal = x.s FROM (SELECT sum(amt) AS s FROM djp) x RETURNING id, bal
dmlj-12 UPDATE dj SET bal = 1 FROM djp WHERE nosuch = 1
dmlj-13 UPDATE dj SET bal = 1 FROM dj WHERE true
dmlj-14 UPDATE u SET k = t.s FROM t WHERE t.id = u.tid AND u.id = 1 RETURNING u.id, u.k

@family seqv pg_sequences: the sequences of the database with their definition and last value
seqv-01 CREATE SEQUENCE seqv_a INCREMENT BY 3 START WITH 10 CACHE 1
seqv-02 CREATE SEQUENCE seqv_b AS integer MAXVALUE 100 CYCLE
seqv-03 SELECT nextval('seqv_a'), nextval('seqv_a')
seqv-04 SELECT sequencename, data_type, start_value, min_value, max_value, increment_by, cycle, cache_size, last_value IS NULL AS unused FROM pg_sequences WHERE sequencename LIKE 'seqv%' ORDER BY sequencename
seqv-05 SELECT schemaname, sequenceowner FROM pg_sequences WHERE sequencename = 'seqv_a'

@family wdml Data-modifying WITH: INSERT, UPDATE and DELETE … RETURNING in WITH, read by the main query or not, and as the main statement
wdml-01 CREATE TABLE wd (id int PRIMARY KEY, bal int NOT NULL)
wdml-02 CREATE TABLE wdarch (id int, bal int)
wdml-03 WITH ins AS (INSERT INTO wd VALUES (1, 10), (2, 20), (3, 30) RETURNING *) SELECT count(*), sum(bal) FROM ins
wdml-04 WITH u AS (UPDATE wd SET bal = bal * 2 WHERE id >= 2 RETURNING id, bal) SELECT id, bal FROM u ORDER BY id
wdml-05 WITH moved AS (DELETE FROM wd WHERE bal > 50 RETURNING id, bal) INSERT INTO wdarch SELECT id, bal FROM moved RETURNING id
wdml-06 WITH ins AS (INSERT INTO wd VALUES (4, 1) RETURNING id) SELECT count(*) FROM wd
wdml-07 SELECT id, bal FROM wd ORDER BY id
wdml-08 SELECT id, bal FROM wdarch ORDER BY id
wdml-09 WITH d AS (DELETE FROM wdarch) SELECT * FROM d
wdml-10 WITH a AS (SELECT 5 AS k), i AS (INSERT INTO wd SELECT k, k FROM a RETURNING id AS new_id) SELECT new_id FROM i

@family lpart LIST partitioning: PARTITION BY LIST (column), FOR VALUES IN (…), routing of INSERT, UPDATE and DELETE, 23514 for a key no partition takes, overlapping lists, ATTACH PARTITION, pg_get_partkeydef and the bound's text
lpart-01 CREATE TABLE lpa (a int, b text) PARTITION BY LIST (a)
lpart-02 CREATE TABLE lpa1 PARTITION OF lpa FOR VALUES IN (1, 3, 2)
lpart-03 CREATE TABLE lpa2 PARTITION OF lpa FOR VALUES IN (4)
lpart-04 CREATE TABLE lpa3 PARTITION OF lpa FOR VALUES IN (3, 5)
lpart-05 INSERT INTO lpa VALUES (1, 'x'), (4, 'y'), (3, 'z') RETURNING *
lpart-06 INSERT INTO lpa VALUES (7, 'w')
lpart-07 SELECT a, b FROM lpa1 ORDER BY a
lpart-08 SELECT b FROM lpa WHERE a = 4
lpart-09 UPDATE lpa SET b = b || '!' WHERE a = 3 RETURNING *
lpart-10 DELETE FROM lpa WHERE a = 1 RETURNING b
lpart-11 SELECT relname, pg_get_expr(relpartbound, oid), pg_get_partkeydef(oid) FROM pg_class WHERE relname LIKE 'lpa%' ORDER BY 1
lpart-12 SELECT partstrat FROM pg_partitioned_table WHERE partrelid = 'lpa'::regclass
lpart-13 CREATE TABLE lpa9 (a int, b text)
lpart-14 INSERT INTO lpa9 VALUES (9, 'n')
lpart-15 ALTER TABLE lpa ATTACH PARTITION lpa9 FOR VALUES IN (9)
lpart-16 SELECT a, b FROM lpa ORDER BY a
lpart-17 INSERT INTO lpa VALUES (9, 'm'), (2, 'k') RETURNING a
lpart-18 SELECT count(*) FROM lpa9

@family xidx Expression indexes: CREATE [UNIQUE] INDEX on expressions, 23505 with the expression in DETAIL, ON CONFLICT (expression) inference, 42P17 for a function that is not IMMUTABLE, pg_index and pg_get_indexdef
xidx-01 CREATE TABLE xi (id int PRIMARY KEY, k text, n int)
xidx-02 INSERT INTO xi VALUES (1, 'Ab', 1), (2, 'cD', 2)
xidx-03 CREATE UNIQUE INDEX ON xi (lower(k))
xidx-04 INSERT INTO xi VALUES (3, 'AB', 3)
xidx-05 INSERT INTO xi VALUES (3, 'AB', 3) ON CONFLICT (lower(k)) DO UPDATE SET n = xi.n + EXCLUDED.n RETURNING id, k, n
xidx-06 INSERT INTO xi VALUES (4, 'CD', 4) ON CONFLICT (LOWER(k)) DO NOTHING RETURNING id
xidx-07 INSERT INTO xi VALUES (5, 'Ef', 5) ON CONFLICT (lower(k)) DO NOTHING RETURNING id
xidx-08 INSERT INTO xi VALUES (6, 'x', 6) ON CONFLICT (upper(k)) DO NOTHING
xidx-09 UPDATE xi SET k = 'EF' WHERE id = 1
xidx-10 UPDATE xi SET k = 'xy' WHERE id = 1
xidx-11 INSERT INTO xi VALUES (7, 'AB', 7)
xidx-12 SELECT id, k, n FROM xi ORDER BY id
xidx-13 CREATE INDEX ON xi ((n * 2), k)
xidx-14 CREATE INDEX ON xi (random())
xidx-15 SELECT indkey, indexprs IS NOT NULL AS e, pg_get_indexdef(indexrelid), pg_get_indexdef(indexrelid, 1, false) FROM pg_index WHERE indrelid = 'xi'::regclass ORDER BY indexrelid
xidx-16 SELECT pg_get_indexdef(indexrelid, 0, true) FROM pg_index WHERE indrelid = 'xi'::regclass ORDER BY indexrelid
xidx-17 SELECT count(*) FROM pg_constraint WHERE conrelid = 'xi'::regclass
xidx-18 SELECT id FROM xi WHERE lower(k) = 'ab'

@family win What pgjdbc and SQLAlchemy read the catalog with: window functions (row_number, rank, dense_rank and aggregates OVER (PARTITION BY … ORDER BY …) with peers sharing a running value, 42P20 outside the select list and ORDER BY); &, |, #, << and >> on integers; information_schema._pg_expandarray and (record).field; unnest and generate_subscripts of a catalog vector; a qualified column's subscript; WHERE over a comma join of catalog relations; bool_and, bool_or and every; to_regclass and kin; json_build_object
win-01 SELECT id, row_number() OVER (ORDER BY id) FROM t ORDER BY id
win-02 SELECT id, sum(i) OVER () FROM t ORDER BY id
win-03 SELECT id, grp, row_number() OVER (PARTITION BY grp ORDER BY id DESC) AS rn FROM g ORDER BY id
win-04 SELECT id, grp, rank() OVER (ORDER BY grp), dense_rank() OVER (ORDER BY grp) FROM g ORDER BY id
win-05 SELECT id, grp, n, sum(n) OVER (PARTITION BY grp ORDER BY n), count(*) OVER (PARTITION BY grp) FROM g ORDER BY id
win-06 SELECT id, row_number() OVER (ORDER BY id) + 100 AS r FROM g WHERE id > 2 ORDER BY row_number() OVER (ORDER BY id) DESC
win-07 SELECT * FROM (SELECT id, grp, row_number() OVER (PARTITION BY grp ORDER BY id) AS rn FROM g) s WHERE rn = 1 ORDER BY id
win-08 SELECT id, max(m) OVER (PARTITION BY grp ORDER BY id NULLS FIRST), array_agg(id) OVER (PARTITION BY grp ORDER BY id) FROM g ORDER BY id
win-09 SELECT id FROM g WHERE row_number() OVER () > 1
win-10 SELECT count(*) OVER (ORDER BY grp DESC NULLS LAST), grp FROM g ORDER BY 1, 2
win-11 SELECT 5 & 3, 5 | 3, 5 # 3, 1 << 4, -16 >> 2
win-12 SELECT 32767::int2 & 1::int2, 1::int2 << 15, 1 << 31, 1::int8 << 63, 7::int8 & 3
win-13 SELECT 1.5 & 1
win-14 SELECT id, i & 3, i | 256 FROM t ORDER BY id
win-15 SELECT (information_schema._pg_expandarray(ARRAY[10,20,30])).x, (information_schema._pg_expandarray(ARRAY[10,20,30])).n
win-16 SELECT information_schema._pg_expandarray(ARRAY['a b', 'c', NULL])
win-17 SELECT s.k, (s.k).x, (s.k).n FROM (SELECT information_schema._pg_expandarray(ARRAY[7, 8]) AS k) s ORDER BY (s.k).n DESC
win-18 SELECT (id).x FROM t
win-19 SELECT (s.k).y FROM (SELECT information_schema._pg_expandarray(ARRAY[1]) AS k) s
win-20 SELECT r.relname, c.contype, c.conkey[1], a.attname FROM pg_constraint c JOIN pg_class r ON r.oid = c.conrelid JOIN pg_attribute a ON a.attrelid = r.oid AND a.attnum = c.conkey[1] WHERE r.relname = 'u'
win-21 SELECT n.nspname, c.relname, a.attname, p.n FROM pg_namespace n, pg_class c, pg_attribute a, generate_series(1, 3) p(n) WHERE c.relnamespace = n.oid AND a.attrelid = c.oid AND c.relname = 'g' AND a.attnum = p.n ORDER BY p.n
win-22 SELECT setting FROM pg_settings WHERE name IN ('max_index_keys', 'max_identifier_length') ORDER BY name
win-23 SELECT i.indkey, (information_schema._pg_expandarray(i.indkey)).n, (information_schema._pg_expandarray(i.indkey)).x FROM pg_index i JOIN pg_class c ON c.oid = i.indrelid WHERE c.relname = 'u'
win-24 SELECT bool_and(f), bool_or(f), every(f) FROM t
win-25 SELECT grp, bool_and(n > 1), bool_or(n > 4) FROM g GROUP BY grp ORDER BY grp
win-26 SELECT bool_and(id) FROM t
win-27 SELECT to_regclass('t'), to_regclass('no_such_table'), to_regtype('int4'), to_regtype('hstore'), to_regnamespace('public'), to_regproc('now')
win-28 SELECT json_build_object('a', 1, 'b', true, 'c', 'x"y', 'd', NULL, 'e', 2.50)
win-29 SELECT json_build_object('a')
win-30 SELECT unnest(i.indkey), generate_subscripts(i.indkey, 1) FROM pg_index i JOIN pg_class c ON c.oid = i.indrelid WHERE c.relname = 'u'
win-31 SELECT generate_subscripts(ARRAY['a', 'b', 'c'], 1), unnest(ARRAY['a', 'b', 'c'])

@family acol ALTER COLUMN: SET and DROP DEFAULT, SET NOT NULL (23502 while a row holds a NULL, checked in every partition) and DROP NOT NULL (42P16 for a primary-key column or one NOT NULL in the parent, 42601 for an identity column)
acol-01 CREATE TABLE ac (id int PRIMARY KEY, v int, w serial, d text DEFAULT 'x')
acol-02 INSERT INTO ac (id, v) VALUES (1, NULL), (2, 3)
acol-03 ALTER TABLE ac ALTER COLUMN v SET NOT NULL
acol-04 ALTER TABLE ac ALTER COLUMN id DROP NOT NULL
acol-05 ALTER TABLE ac ADD PRIMARY KEY (v)
acol-06 ALTER TABLE ac ALTER COLUMN w DROP DEFAULT
acol-07 ALTER TABLE ac ALTER COLUMN d DROP DEFAULT
acol-08 ALTER TABLE ac ALTER COLUMN d DROP DEFAULT
acol-09 SELECT column_name, is_nullable, column_default FROM information_schema.columns WHERE table_name = 'ac' ORDER BY ordinal_position
acol-10 INSERT INTO ac (id, v) VALUES (3, 4)
acol-11 UPDATE ac SET v = 0 WHERE v IS NULL
acol-12 ALTER TABLE ac ALTER COLUMN v SET NOT NULL
acol-13 INSERT INTO ac (id, v, w) VALUES (4, NULL, 1)
acol-14 ALTER TABLE ac ALTER COLUMN v DROP NOT NULL, ALTER COLUMN d SET DEFAULT 'y'
acol-15 INSERT INTO ac (id, v, w) VALUES (5, NULL, 2)
acol-16 SELECT id, v, w, d FROM ac ORDER BY id
acol-17 CREATE TABLE aci (id int GENERATED ALWAYS AS IDENTITY, x int)
acol-18 ALTER TABLE aci ALTER COLUMN id DROP DEFAULT
acol-19 ALTER TABLE aci ALTER COLUMN id DROP NOT NULL
acol-20 CREATE TABLE acp (a int NOT NULL, b int) PARTITION BY RANGE (a)
acol-21 CREATE TABLE acp1 PARTITION OF acp FOR VALUES FROM (0) TO (10)
acol-22 ALTER TABLE acp1 ALTER COLUMN a DROP NOT NULL
acol-23 INSERT INTO acp VALUES (1, NULL)
acol-24 ALTER TABLE acp ALTER COLUMN b SET NOT NULL
acol-25 UPDATE acp SET b = 1
acol-26 ALTER TABLE acp ALTER COLUMN b SET NOT NULL
acol-27 ALTER TABLE acp1 ALTER COLUMN b DROP NOT NULL
acol-28 SELECT table_name, column_name, is_nullable FROM information_schema.columns WHERE table_name IN ('acp', 'acp1') ORDER BY 1, 2
acol-29 ALTER TABLE acp ALTER COLUMN b DROP NOT NULL
acol-30 INSERT INTO acp VALUES (2, NULL)
acol-31 SELECT a, b FROM acp ORDER BY a

@family hpart HASH partitioning: FOR VALUES WITH (MODULUS m, REMAINDER r), rows routed to the partitions PostgreSQL routes them to (so dumps move between the two), 23514 for a row inserted into the wrong partition
hpart-01 CREATE TABLE hpc (k bigint, v int) PARTITION BY HASH (k)
hpart-02 CREATE TABLE hpc0 PARTITION OF hpc FOR VALUES WITH (MODULUS 4, REMAINDER 0)
hpart-03 CREATE TABLE hpc1 PARTITION OF hpc FOR VALUES WITH (MODULUS 4, REMAINDER 1)
hpart-04 CREATE TABLE hpc2 PARTITION OF hpc FOR VALUES WITH (MODULUS 4, REMAINDER 2)
hpart-05 CREATE TABLE hpc3 PARTITION OF hpc FOR VALUES WITH (MODULUS 4, REMAINDER 3)
hpart-06 INSERT INTO hpc SELECT g, 1 FROM generate_series(-200, 200) g
hpart-07 INSERT INTO hpc VALUES (9223372036854775807, 2), (-9223372036854775808, 2), (5000000000, 2), (-5000000000, 2), (2147483648, 2), (-2147483649, 2)
hpart-08 SELECT (SELECT count(*) FROM hpc0) AS p0, (SELECT count(*) FROM hpc1) AS p1, (SELECT count(*) FROM hpc2) AS p2, (SELECT count(*) FROM hpc3) AS p3
hpart-09 SELECT k FROM hpc1 WHERE k BETWEEN -40 AND 40 ORDER BY k
hpart-10 SELECT k FROM hpc3 WHERE v = 2 ORDER BY k
hpart-11 INSERT INTO hpc0 VALUES (-1, 3)
hpart-12 INSERT INTO hpc1 VALUES (-1, 3)
hpart-13 SELECT k, v FROM hpc WHERE k = -1 ORDER BY v
hpart-20 INSERT INTO hpc VALUES (NULL, 4)
hpart-21 SELECT count(*) FROM hpc0 WHERE k IS NULL
hpart-22 INSERT INTO hpc3 VALUES (NULL, 5)
hpart-14 CREATE TABLE hpi (k int) PARTITION BY HASH (k)
hpart-15 CREATE TABLE hpi0 PARTITION OF hpi FOR VALUES WITH (MODULUS 3, REMAINDER 0)
hpart-16 CREATE TABLE hpi1 PARTITION OF hpi FOR VALUES WITH (MODULUS 3, REMAINDER 1)
hpart-17 CREATE TABLE hpi2 PARTITION OF hpi FOR VALUES WITH (MODULUS 3, REMAINDER 2)
hpart-18 INSERT INTO hpi SELECT g FROM generate_series(-30, 30) g
hpart-19 SELECT k FROM hpi2 ORDER BY k

@family unsup Unsupported constructs: each answers 0A000 and the connection goes on
!unsup-11 [TABLE t] TABLE t
!unsup-13 [RIGHT/FULL JOIN] SELECT t.id, u.id FROM t RIGHT JOIN u ON t.id = u.tid ORDER BY 1, 2
!unsup-14 [RIGHT/FULL JOIN] SELECT t.id, u.id FROM t FULL JOIN u ON t.id = u.tid ORDER BY 1, 2
!unsup-67 [window functions in a grouped query] SELECT grp, rank() OVER (ORDER BY grp) FROM g GROUP BY grp
!unsup-68 [window frame clauses] SELECT id, sum(n) OVER (ORDER BY id ROWS BETWEEN 1 PRECEDING AND CURRENT ROW) FROM g ORDER BY id
!unsup-22 [DISTINCT ON] SELECT DISTINCT ON (grp) grp, id FROM g ORDER BY grp, id
!unsup-24 [GROUP BY ROLLUP/CUBE/GROUPING SETS] SELECT grp, count(*) FROM g GROUP BY ROLLUP (grp)
!unsup-28 [INSERT DEFAULT VALUES] INSERT INTO g DEFAULT VALUES
!unsup-31 [CREATE TABLE … AS] CREATE TABLE ctas AS SELECT id FROM t
!unsup-32 [interval and date/time arithmetic] SELECT ts + interval '1 day' FROM t WHERE id = 1
!unsup-33 [interval and date/time arithmetic] SELECT '2024-02-29'::date + 1
!unsup-34 [interval and date/time arithmetic] SELECT '2024-03-01'::timestamp - '2024-02-01'::timestamp
!unsup-36 [IS UNKNOWN] SELECT id FROM t WHERE f IS UNKNOWN ORDER BY id
!unsup-38 [SIMILAR TO, LIKE … ESCAPE] SELECT 'abc' LIKE 'a#%' ESCAPE '#'
!unsup-39 [SIMILAR TO, LIKE … ESCAPE] SELECT 'abc' SIMILAR TO 'a%'
!unsup-43 [row constructors] SELECT (1, 2) = (1, 2)
!unsup-64 [row constructors] SELECT ROW(1, 2)
!unsup-47 [other types (json, interval)] SELECT '{"a": 1}'::json
!unsup-49 [other types (json, interval)] SELECT interval '1 day'
!unsup-53 [functions outside the list above (trunc, ceil, floor, extract, to_char, pg_typeof, octet_length, reverse and others)] SELECT trunc(2.5), ceil(2.1), floor(2.9)
!unsup-59 [functions outside the list above (trunc, ceil, floor, extract, to_char, pg_typeof, octet_length, reverse and others)] SELECT extract(year FROM ts) FROM t WHERE id = 1
!unsup-60 [functions outside the list above (trunc, ceil, floor, extract, to_char, pg_typeof, octet_length, reverse and others)] SELECT to_char(ts, 'YYYY') FROM t WHERE id = 1
!unsup-61 [functions outside the list above (trunc, ceil, floor, extract, to_char, pg_typeof, octet_length, reverse and others)] SELECT pg_typeof(1)
!unsup-63 [functions outside the list above (trunc, ceil, floor, extract, to_char, pg_typeof, octet_length, reverse and others)] SELECT octet_length('héllo'), reverse('abc'), initcap('ab cd')
!unsup-65 [TABLESAMPLE] SELECT count(*) FROM t TABLESAMPLE BERNOULLI (100)
!unsup-66 [generate_series WITH ORDINALITY] SELECT * FROM generate_series(1, 2) WITH ORDINALITY
