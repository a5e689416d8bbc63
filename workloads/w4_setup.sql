CREATE UNLOGGED TABLE copy_unlogged (data text NOT NULL);
