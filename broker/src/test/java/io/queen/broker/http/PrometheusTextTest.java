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

    @Test
    void writesAHistogramTheStrictParserReadsBack() {
        String text = new PrometheusText().family("a", "gauge", "h").sample(1)
                .histogram("lat_seconds", "lateness", new double[] {0.5, 5}, new long[] {1, 3, 4}, 12.5)
                .family("b", "counter", "h").sample(2).text();
        assertTrue(text.contains("# TYPE lat_seconds histogram\nlat_seconds_bucket{le=\"0.5\"} 1\n"
                + "lat_seconds_bucket{le=\"5\"} 3\nlat_seconds_bucket{le=\"+Inf\"} 4\nlat_seconds_sum 12.5\n"
                + "lat_seconds_count 4\n"), text);
        StrictPrometheusParser.Exposition e = StrictPrometheusParser.parse(text);
        assertEquals("histogram", e.types().get("lat_seconds"));
        assertEquals(3.0, e.value("lat_seconds_bucket", "le", "5"));
        assertEquals(4.0, e.value("lat_seconds_count"));
        assertEquals(2.0, e.value("b"));
    }

    @Test
    void refusesAHistogramThatFallsAndASampleAfterIt() {
        assertThrows(IllegalArgumentException.class, () -> new PrometheusText()
                .histogram("h", "h", new double[] {1, 2}, new long[] {3, 2, 4}, 0));
        assertThrows(IllegalArgumentException.class, () -> new PrometheusText()
                .histogram("h", "h", new double[] {2, 1}, new long[] {1, 2, 3}, 0));
        assertThrows(IllegalStateException.class, () -> new PrometheusText()
                .histogram("h", "h", new double[] {1}, new long[] {1, 2}, 0).sample(1));
    }

    @Test
    void theStrictParserChecksHistogramBucketsAgainstTheirCount() {
        String head = "# HELP h x\n# TYPE h histogram\n";
        StrictPrometheusParser.parse(head + "h_bucket{le=\"1\"} 1\nh_bucket{le=\"+Inf\"} 2\nh_sum 3\nh_count 2\n");
        assertThrows(AssertionError.class, () -> StrictPrometheusParser.parse(
                head + "h_bucket{le=\"1\"} 1\nh_bucket{le=\"+Inf\"} 2\nh_sum 3\nh_count 3\n"));
        assertThrows(AssertionError.class, () -> StrictPrometheusParser.parse(
                head + "h_bucket{le=\"1\"} 3\nh_bucket{le=\"+Inf\"} 2\nh_sum 3\nh_count 2\n"));
        assertThrows(AssertionError.class, () -> StrictPrometheusParser.parse(head + "h 1\n"));
        assertThrows(AssertionError.class, () -> StrictPrometheusParser.parse(
                "# HELP g x\n# TYPE g gauge\ng_count 1\n"));
    }
}
