package io.queen.operator;

import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import org.junit.jupiter.api.Test;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.concurrent.atomic.AtomicBoolean;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

class HealthServerTest {
    private static final HttpClient HTTP = HttpClient.newHttpClient();

    @Test
    void probesFollowTheOperatorAndMetricsAreInPrometheusFormat() throws Exception {
        AtomicBoolean ready = new AtomicBoolean(false);
        PrometheusMeterRegistry metrics = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
        metrics.counter("queen_operator_test_total").increment();
        try (HealthServer server = HealthServer.start(0, () -> true, ready::get, metrics)) {
            assertEquals(200, get(server, "/healthz").statusCode());
            assertEquals(503, get(server, "/readyz").statusCode());
            ready.set(true);
            assertEquals(200, get(server, "/readyz").statusCode());
            HttpResponse<String> scrape = get(server, "/metrics");
            assertEquals(200, scrape.statusCode());
            assertTrue(scrape.body().contains("queen_operator_test_total 1.0"), scrape.body());
        }
    }

    private static HttpResponse<String> get(HealthServer server, String path) throws Exception {
        return HTTP.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + server.port() + path)).build(),
                HttpResponse.BodyHandlers.ofString());
    }
}
