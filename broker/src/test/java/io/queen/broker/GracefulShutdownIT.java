package io.queen.broker;

import io.queen.broker.config.DatabaseSettings;
import io.queen.broker.support.BrokerFixture;
import io.queen.broker.support.HttpProbe;
import io.queen.broker.support.HttpProbe.Reply;
import io.queen.broker.support.TestPostgres;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * A broker told to stop (SIGTERM in a rolling restart) answers its parked long-polls with what they
 * have, an empty 204 or an empty fetch, rather than holding them through the shutdown grace period
 * (20 s) and then dropping their connections.
 */
class GracefulShutdownIT {

    @Test
    void parkedLongPollsAreAnsweredWhenTheBrokerStops() throws Exception {
        DatabaseSettings db = TestPostgres.freshDatabase("graceful_shutdown");
        Broker broker = BrokerFixture.start(db, Map.of());
        HttpProbe http = new HttpProbe(broker.port());
        http.push("quiet", "p", "{\"n\":0}");
        assertEquals(200, http.get("/api/v1/pop/queue/quiet?batch=1&wait=false&autoAck=true").status());

        CompletableFuture<Reply> pop = CompletableFuture.supplyAsync(
                () -> http.get("/api/v1/pop/queue/quiet?batch=1&wait=true&timeout=60000"));
        CompletableFuture<Reply> fetch = CompletableFuture.supplyAsync(() -> http.post("/api/v1/fetch",
                "{\"entries\":[{\"queue\":\"quiet\",\"partition\":\"p\",\"offset\":1}],\"maxWaitMs\":30000}"));
        // Nothing to answer them with: both stay parked until the broker stops.
        await("the pop and the fetch stay parked").during(Duration.ofMillis(500)).atMost(Duration.ofSeconds(5))
                .until(() -> !pop.isDone() && !fetch.isDone());

        broker.close();
        Reply popped = pop.get(15, TimeUnit.SECONDS);
        assertEquals(204, popped.status(), popped.body());
        Reply fetched = fetch.get(15, TimeUnit.SECONDS);
        assertEquals(200, fetched.status(), fetched.body());
        assertEquals(0, fetched.json().get("entries").get(0).get("records").size());
    }
}
