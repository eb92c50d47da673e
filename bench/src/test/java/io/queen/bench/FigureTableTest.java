package io.queen.bench;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

class FigureTableTest {
    @Test
    void padsColumnsToTheWidestCellFiguresRightAligned() {
        String out = new FigureTable("phase", "ops/s").row("broker put", "543").row("JDBC", "12,017").render();
        String nl = System.lineSeparator();
        assertEquals("phase        ops/s" + nl + "broker put     543" + nl + "JDBC        12,017" + nl, out);
    }

    @Test
    void aRowMustFillEveryColumn() {
        assertThrows(IllegalArgumentException.class, () -> new FigureTable("a", "b").row("only one"));
    }

    @Test
    void formatsMillisecondsAndRates() {
        assertEquals("-", FigureTable.ms(Double.NaN));
        assertEquals("2.63", FigureTable.ms(2.634));
        assertEquals("63.2", FigureTable.ms(63.24));
        assertEquals("11,541", FigureTable.rate(11_541.4));
    }
}
