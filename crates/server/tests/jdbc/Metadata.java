// pgjdbc's DatabaseMetaData against one server, for the client-tools suite
// (crates/server/tests/client_tools_jdbc.rs): creates tables with primary
// keys, unique and secondary indexes, NOT NULL, defaults, a foreign key, a
// serial column and a table partitioned by range, then prints what
// getTables, getColumns, getPrimaryKeys, getIndexInfo, getSchemas,
// getImportedKeys/getExportedKeys, a query's ResultSetMetaData and
// getGeneratedKeys answer, one "label|value|..." line per row. The test
// runs it against turnstile (both profiles) and PostgreSQL 15 and compares
// the lines, so everything printed must be about the user's objects.
//
// Usage: java -cp postgresql.jar:<classes> Metadata <host> <port>
// Exit status 1 (with the exception on stderr) when a call fails.

import java.sql.Connection;
import java.sql.DatabaseMetaData;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.ResultSetMetaData;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.Properties;

public class Metadata {
    /** The schema every object is created in, and every lookup names. */
    static final String SCHEMA = "public";

    static final String[] SETUP = {
        "CREATE TABLE j_parent (id int4 PRIMARY KEY, code varchar(20) NOT NULL UNIQUE,"
            + " qty int8 NOT NULL DEFAULT 0, name text DEFAULT 'unnamed', price numeric(10,2) DEFAULT 9.99,"
            + " active bool NOT NULL DEFAULT true, added date, seen timestamptz, blob bytea, ratio float8)",
        "CREATE INDEX j_parent_added_idx ON j_parent (added)",
        "CREATE INDEX j_parent_name_qty_idx ON j_parent (name, qty)",
        "CREATE TABLE j_child (cid int8 NOT NULL, parent_id int4 REFERENCES j_parent (id),"
            + " note char(8), PRIMARY KEY (cid))",
        "CREATE TABLE j_auto (id serial PRIMARY KEY, label text NOT NULL)",
        "CREATE TABLE j_trips (id int8 NOT NULL, thing int4, note text, PRIMARY KEY (id)) PARTITION BY RANGE (id)",
        "CREATE TABLE j_trips_1 PARTITION OF j_trips FOR VALUES FROM (MINVALUE) TO (100)",
        "CREATE TABLE j_trips_2 PARTITION OF j_trips FOR VALUES FROM (100) TO (MAXVALUE)",
        "INSERT INTO j_parent (id, code) VALUES (1, 'A-1'), (2, 'B-2')",
        "INSERT INTO j_child VALUES (10, 1, 'x'), (11, NULL, NULL)",
    };

    static final String[] TABLES = {"j_parent", "j_child", "j_auto", "j_trips", "j_trips_1"};

    public static void main(String[] args) throws Exception {
        String url = "jdbc:postgresql://" + args[0] + ":" + args[1] + "/postgres";
        Properties props = new Properties();
        props.setProperty("user", "postgres");
        props.setProperty("sslmode", "disable");
        try (Connection c = DriverManager.getConnection(url, props)) {
            try (Statement s = c.createStatement()) {
                for (String sql : SETUP) {
                    s.execute(sql);
                }
            }
            DatabaseMetaData md = c.getMetaData();
            print("getSchemas", md.getSchemas());
            print("getSchemas(public)", md.getSchemas(null, SCHEMA));
            print("getTables", md.getTables(null, SCHEMA, "j\\_%", null));
            print("getTables(TABLE)", md.getTables(null, SCHEMA, "%", new String[] {"TABLE"}));
            for (String t : TABLES) {
                print("getColumns " + t, md.getColumns(null, SCHEMA, t, "%"));
                print("getPrimaryKeys " + t, md.getPrimaryKeys(null, SCHEMA, t));
                print("getIndexInfo " + t, md.getIndexInfo(null, SCHEMA, t, false, false));
                print("getIndexInfo unique " + t, md.getIndexInfo(null, SCHEMA, t, true, false));
                print("getImportedKeys " + t, md.getImportedKeys(null, SCHEMA, t));
                print("getExportedKeys " + t, md.getExportedKeys(null, SCHEMA, t));
            }
            queryMetadata(c);
            generatedKeys(c);
        } catch (SQLException e) {
            System.err.println("SQLException " + e.getSQLState() + ": " + e.getMessage());
            e.printStackTrace();
            System.exit(1);
        }
    }

    /** A query's ResultSetMetaData: per column its label, type, nullability and the like. */
    static void queryMetadata(Connection c) throws SQLException {
        String sql = "SELECT p.id, p.code, p.qty, p.name, p.price, p.active, p.added, p.seen, p.blob, p.ratio,"
            + " ch.cid, ch.note, p.id + 1 AS next_id FROM j_parent p LEFT JOIN j_child ch ON ch.parent_id = p.id"
            + " ORDER BY p.id";
        try (Statement s = c.createStatement(); ResultSet rs = s.executeQuery(sql)) {
            ResultSetMetaData m = rs.getMetaData();
            System.out.println("== ResultSetMetaData");
            System.out.println("label|table|type|typeName|className|nullable|precision|scale|autoIncrement|signed");
            for (int i = 1; i <= m.getColumnCount(); i++) {
                System.out.println(String.join("|", m.getColumnLabel(i), m.getTableName(i),
                    String.valueOf(m.getColumnType(i)), m.getColumnTypeName(i), m.getColumnClassName(i),
                    String.valueOf(m.isNullable(i)), String.valueOf(m.getPrecision(i)),
                    String.valueOf(m.getScale(i)), String.valueOf(m.isAutoIncrement(i)),
                    String.valueOf(m.isSigned(i))));
            }
            print("rows", rs);
        }
    }

    /** getGeneratedKeys after inserts: all columns, and a named column. */
    static void generatedKeys(Connection c) throws SQLException {
        try (Statement s = c.createStatement()) {
            s.executeUpdate("INSERT INTO j_auto (label) VALUES ('one')", Statement.RETURN_GENERATED_KEYS);
            print("getGeneratedKeys", s.getGeneratedKeys());
        }
        try (PreparedStatement p = c.prepareStatement("INSERT INTO j_auto (label) VALUES (?)", new String[] {"id"})) {
            for (String label : new String[] {"two", "three"}) {
                p.setString(1, label);
                p.executeUpdate();
                print("getGeneratedKeys(id) " + label, p.getGeneratedKeys());
            }
        }
    }

    /** A result set as "== title", its labels and one line per row (SQL NULL as "<null>"). */
    static void print(String title, ResultSet rs) throws SQLException {
        try (rs) {
            System.out.println("== " + title);
            ResultSetMetaData m = rs.getMetaData();
            StringBuilder head = new StringBuilder();
            for (int i = 1; i <= m.getColumnCount(); i++) {
                head.append(i > 1 ? "|" : "").append(m.getColumnLabel(i));
            }
            System.out.println(head);
            while (rs.next()) {
                StringBuilder row = new StringBuilder();
                for (int i = 1; i <= m.getColumnCount(); i++) {
                    String v = rs.getString(i);
                    row.append(i > 1 ? "|" : "").append(v == null ? "<null>" : v);
                }
                System.out.println(row);
            }
        }
    }
}
