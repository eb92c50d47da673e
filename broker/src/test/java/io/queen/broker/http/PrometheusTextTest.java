package io.queen.broker.http;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class PrometheusTextTest {

    @Test
    void writesHelpAndTypeBeforeTheSamplesOfEachFamily() {
        String text = new PrometheusText()
                .family("queen_uptime_seconds", "gauge", "Process uptime in seconds").sample(42)
                .family("queen_dlq_depth_by_queue", "gauge", "Dead-letter depth per queue")
                .sample(3, "queue", "orders").sample(1, "queue", "billing")
                .text();
        assertEquals("""
                # HELP queen_uptime_seconds Process uptime in seconds
                # TYPE queen_uptime_seconds gauge
                queen_uptime_seconds 42
                # HELP queen_dlq_depth_by_queue Dead-letter depth per queue
                # TYPE queen_dlq_depth_by_queue gauge
                queen_dlq_depth_by_queue{queue="orders"} 3
                queen_dlq_depth_by_queue{queue="billing"} 1
                """, text);
        StrictPrometheusParser.Exposition e = StrictPrometheusParser.parse(text);
        assertEquals(3.0, e.value("queen_dlq_depth_by_queue", "queue", "orders"));
        assertEquals("gauge", e.types().get("queen_uptime_seconds"));
    }

    @Test
    void escapesBackslashQuoteAndNewlineInLabelValues() {
        String nasty = "a\\b\"c\nd";
        String text = new PrometheusText().family("m", "gauge", "h").sample(1, "queue", nasty).text();
        assertTrue(text.contains("m{queue=\"a\\\\b\\\"c\\nd\"} 1\n"), text);
        assertEquals(1.0, StrictPrometheusParser.parse(text).value("m", "queue", nasty));
    }

    @Test
    void escapesBackslashAndNewlineInHelp() {
        String text = new PrometheusText().family("m", "counter", "line one\nback\\slash").sample(0).text();
        assertTrue(text.startsWith("# HELP m line one\\nback\\\\slash\n"), text);
        StrictPrometheusParser.parse(text);
    }

    @Test
    void formatsIntegralDoublesWithoutAFractionAndKeepsSpecialValues() {
        assertEquals("5", PrometheusText.formatDouble(5.0));
        assertEquals("0.25", PrometheusText.formatDouble(0.25));
        assertEquals("NaN", PrometheusText.formatDouble(Double.NaN));
        assertEquals("+Inf", PrometheusText.formatDouble(Double.POSITIVE_INFINITY));
        assertEquals("-Inf", PrometheusText.formatDouble(Double.NEGATIVE_INFINITY));
        assertEquals("1.0E20", PrometheusText.formatDouble(1e20));
    }

    @Test
    void refusesASampleBeforeAnyFamily() {
        assertThrows(IllegalStateException.class, () -> new PrometheusText().sample(1));
    }

    @Test
    void refusesAFamilyWrittenTwice() {
        PrometheusText t = new PrometheusText().family("m", "gauge", "h").sample(1);
        assertThrows(IllegalStateException.class, () -> t.family("m", "gauge", "h"));
    }

    @Test
    void refusesTheSameSeriesTwice() {
        PrometheusText t = new PrometheusText().family("m", "gauge", "h").sample(1, "queue", "q");
        assertThrows(IllegalStateException.class, () -> t.sample(2, "queue", "q"));
    }

    @Test
    void refusesInvalidMetricAndLabelNamesAndUnknownTypes() {
        assertThrows(IllegalArgumentException.class, () -> new PrometheusText().family("9bad", "gauge", "h"));
        assertThrows(IllegalArgumentException.class, () -> new PrometheusText().family("m", "histo", "h"));
        PrometheusText t = new PrometheusText().family("m", "gauge", "h");
        assertThrows(IllegalArgumentException.class, () -> t.sample(1, "bad-label", "v"));
        assertThrows(IllegalArgumentException.class, () -> t.sample(1, "__reserved", "v"));
        assertThrows(IllegalArgumentException.class, () -> t.sample(1, "odd"));
    }

    @Test
    void theStrictParserRejectsWhatAScraperWouldReject() {
        assertThrows(AssertionError.class, () -> StrictPrometheusParser.parse("m 1\n"));
        assertThrows(AssertionError.class, () -> StrictPrometheusParser.parse(
                "# HELP m h\n# TYPE m gauge\nm 1\nm 2\n"));
        assertThrows(AssertionError.class, () -> StrictPrometheusParser.parse(
                "# HELP m h\n# TYPE m gauge\nm{q=\"a\\x\"} 1\n"));
        assertThrows(AssertionError.class, () -> StrictPrometheusParser.parse(
                "# HELP a h\n# TYPE a gauge\n# HELP b h\n# TYPE b gauge\na 1\n"));
        assertThrows(AssertionError.class, () -> StrictPrometheusParser.parse("# HELP m h\n# TYPE m gauge\nm one\n"));
    }
}
