CREATE TABLE dim1 (id int PRIMARY KEY, val text);
INSERT INTO dim1 SELECT i, md5(i::text) FROM generate_series(1, 100) i;
CREATE TABLE fact_n1 (id int PRIMARY KEY, d1 int);
INSERT INTO fact_n1 SELECT i, 1 + (i * 3 + 1) % 100 FROM generate_series(1, 100000) i;
VACUUM ANALYZE;
