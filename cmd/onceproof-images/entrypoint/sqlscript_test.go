package main

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func sqls(steps []step) []string {
	var out []string
	for _, s := range steps {
		out = append(out, s.sql)
	}
	return out
}

func TestSplitSQL(t *testing.T) {
	cases := []struct {
		name string
		want []string
		src  string
	}{
		{"simple", []string{"SELECT 1", "SELECT 2", "SELECT 3"}, "SELECT 1; SELECT 2;\nSELECT 3"},
		{"quotes", []string{`INSERT INTO t VALUES ('a;b', 'it''s;')`, `SELECT "x;y" FROM t`},
			`INSERT INTO t VALUES ('a;b', 'it''s;'); SELECT "x;y" FROM t;`},
		{"escape string", []string{`SELECT E'\';still'`, "SELECT 2"}, `SELECT E'\';still'; SELECT 2;`},
		{"dollar quotes", []string{"CREATE FUNCTION f() RETURNS int AS $$ SELECT 1; $$ LANGUAGE sql", "DO $tag$ BEGIN PERFORM 1; END $tag$"},
			"CREATE FUNCTION f() RETURNS int AS $$ SELECT 1; $$ LANGUAGE sql;\nDO $tag$ BEGIN PERFORM 1; END $tag$;"},
		{"parameters are not dollar quotes", []string{"PREPARE p(int) AS SELECT $1", "SELECT 2"}, "PREPARE p(int) AS SELECT $1; SELECT 2;"},
		{"comments", []string{"-- leading; comment\nSELECT 1", "/* block; /* nested; */ */ SELECT 2"},
			"-- leading; comment\nSELECT 1; /* block; /* nested; */ */ SELECT 2; -- trailing\n-- only a comment;\n"},
		{"parentheses", []string{"CREATE RULE r AS ON INSERT TO t DO ALSO (INSERT INTO u VALUES (1); INSERT INTO u VALUES (2))"},
			"CREATE RULE r AS ON INSERT TO t DO ALSO (INSERT INTO u VALUES (1); INSERT INTO u VALUES (2));"},
	}
	for _, tc := range cases {
		steps, err := splitSQL(tc.src)
		require.NoError(t, err, tc.name)
		assert.Equal(t, tc.want, sqls(steps), tc.name)
		for _, s := range steps {
			assert.Equal(t, stepSQL, s.kind, tc.name)
		}
	}
}

func TestSplitSQLCopyAndMeta(t *testing.T) {
	src := "CREATE TABLE t (a int, b text);\n" +
		"COPY t (a, b) FROM stdin;\n1\tone\n2\ttwo; not a statement\n\\.\n" +
		"\\connect other\n" +
		"-- comment before a meta-command\n\\set ON_ERROR_STOP on\n" +
		"SELECT 1;\n" +
		"copy t from STDIN with (format csv);\n3,three\n"
	steps, err := splitSQL(src)
	require.NoError(t, err)
	require.Len(t, steps, 5)
	assert.Equal(t, step{kind: stepSQL, sql: "CREATE TABLE t (a int, b text)", line: 1}, steps[0])
	assert.Equal(t, step{kind: stepCopy, sql: "COPY t (a, b) FROM stdin", data: "1\tone\n2\ttwo; not a statement\n", line: 2}, steps[1])
	assert.Equal(t, step{kind: stepConnect, sql: "other", line: 6}, steps[2])
	assert.Equal(t, step{kind: stepSQL, sql: "SELECT 1", line: 9}, steps[3])
	assert.Equal(t, step{kind: stepCopy, sql: "copy t from STDIN with (format csv)", data: "3,three\n", line: 10}, steps[4])
}

func TestSplitSQLErrors(t *testing.T) {
	for src, msg := range map[string]string{
		"SELECT 'open":          "unterminated ' quote",
		`SELECT "open`:          `unterminated " quote`,
		"SELECT $x$ open":       "unterminated dollar quote",
		"SELECT 1 /* open":      "unterminated /* comment",
		"\\copy t from 'f.csv'": "meta-command \\copy is not supported",
		"SELECT 1 \\gset":       "meta-commands inside a statement",
		"\\c a b":               "only \\connect DBNAME",
	} {
		_, err := splitSQL(src)
		assert.ErrorContains(t, err, msg, src)
	}
}
