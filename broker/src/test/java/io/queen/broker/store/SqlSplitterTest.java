package io.queen.broker.store;

import org.junit.jupiter.api.Test;

import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

class SqlSplitterTest {

    @Test
    void splitsOnTopLevelSemicolonsAndDropsTheTerminator() {
        assertEquals(List.of("SELECT 1", "SELECT 2"), SqlSplitter.split("SELECT 1;\nSELECT 2;\n"));
    }

    @Test
    void keepsALastStatementWithoutSemicolon() {
        assertEquals(List.of("SELECT 1", "SELECT 2"), SqlSplitter.split("SELECT 1; SELECT 2"));
    }

    @Test
    void ignoresSemicolonsInsideSingleQuotedStringsWithDoubledQuotes() {
        assertEquals(List.of("SELECT 'a;''b;'", "SELECT 3"), SqlSplitter.split("SELECT 'a;''b;'; SELECT 3;"));
    }

    @Test
    void ignoresSemicolonsInsideEscapeStringsWithBackslashQuotes() {
        assertEquals(List.of("SELECT E'x\\';y'", "SELECT 4"), SqlSplitter.split("SELECT E'x\\';y'; SELECT 4;"));
    }

    @Test
    void ignoresSemicolonsInsideQuotedIdentifiers() {
        assertEquals(List.of("SELECT 1 AS \"a;b\"", "SELECT 2"), SqlSplitter.split("SELECT 1 AS \"a;b\"; SELECT 2;"));
    }

    @Test
    void keepsAPlainDollarQuotedBodyWhole() {
        String fn = "CREATE FUNCTION f() RETURNS int LANGUAGE sql AS $$ SELECT 1; SELECT 2; $$";
        assertEquals(List.of(fn, "SELECT f()"), SqlSplitter.split(fn + ";\nSELECT f();"));
    }

    @Test
    void keepsNestedDollarTagsWhole() {
        String fn = """
                CREATE FUNCTION g() RETURNS void LANGUAGE plpgsql AS $fn$
                BEGIN
                  EXECUTE $q$SELECT ';'; SELECT $$inner;$$$q$;
                  PERFORM 1;
                END
                $fn$""";
        assertEquals(List.of(fn, "SELECT 5"), SqlSplitter.split(fn + ";\nSELECT 5;"));
    }

    @Test
    void doesNotMistakePositionalParametersForDollarTags() {
        assertEquals(List.of("PREPARE p AS SELECT $1::int", "SELECT $2 + $3", "SELECT 6"),
                SqlSplitter.split("PREPARE p AS SELECT $1::int; SELECT $2 + $3; SELECT 6;"));
    }

    @Test
    void ignoresSemicolonsInLineComments() {
        assertEquals(List.of("-- one; two\nSELECT 7", "SELECT 8"), SqlSplitter.split("-- one; two\nSELECT 7; SELECT 8;"));
    }

    @Test
    void ignoresSemicolonsInNestedBlockComments() {
        assertEquals(List.of("/* a; /* b; */ c; */ SELECT 9", "SELECT 10"),
                SqlSplitter.split("/* a; /* b; */ c; */ SELECT 9; SELECT 10;"));
    }

    @Test
    void ignoresQuotesInsideComments() {
        assertEquals(List.of("-- it's fine\nSELECT 11", "SELECT 12"), SqlSplitter.split("-- it's fine\nSELECT 11; SELECT 12;"));
    }

    @Test
    void dropsCommentOnlyAndEmptyStatements() {
        assertEquals(List.of("SELECT 13"), SqlSplitter.split("-- header only;\n;;\n/* note */;\nSELECT 13;\n-- trailer\n"));
    }

    @Test
    void identifiersEndingInDollarAreNotTags() {
        assertEquals(2, SqlSplitter.split("SELECT a$b$c FROM t; SELECT 14;").size());
    }

    @Test
    void rejectsAnUnterminatedDollarQuote() {
        assertThrows(IllegalArgumentException.class, () -> SqlSplitter.split("SELECT $$ never closed;"));
    }

    @Test
    void rejectsAnUnterminatedString() {
        assertThrows(IllegalArgumentException.class, () -> SqlSplitter.split("SELECT 'open;"));
    }
}
