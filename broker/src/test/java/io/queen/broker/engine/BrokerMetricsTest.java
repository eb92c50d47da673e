package io.queen.broker.engine;

import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.concurrent.atomic.AtomicLong;

import static org.junit.jupiter.api.Assertions.assertEquals;

class BrokerMetricsTest {

    @Test
    void countsRequestsMessagesAndAckOutcomes() {
        BrokerMetrics m = new BrokerMetrics(new AtomicLong()::get);
        m.requestServed();
        m.requestServed();
        m.pushed(3);
        m.popped(2);
        m.popped(0);
        m.acked(List.of(result(true), result(false), result(true)));
        BrokerMetrics.Counters c = m.snapshot();
        assertEquals(2, c.httpRequests());
        assertEquals(1, c.pushRequests());
        assertEquals(3, c.pushMessages());
        assertEquals(2, c.popRequests());
        assertEquals(2, c.popMessages());
        assertEquals(1, c.popEmpty());
        assertEquals(1, c.ackRequests());
        assertEquals(3, c.ackMessages());
        assertEquals(2, c.ackSuccess());
        assertEquals(1, c.ackFailed());
        assertEquals(8, c.messages());
    }

    @Test
    void uptimeFollowsTheInjectedClock() {
        AtomicLong now = new AtomicLong(5_000);
        BrokerMetrics m = new BrokerMetrics(now::get);
        now.addAndGet(61_999);
        assertEquals(61, m.uptimeSeconds());
    }

    @Test
    void ratesAreTheMeanOfTheLastMinuteExcludingTheSecondInProgress() {
        AtomicLong now = new AtomicLong(1_000_000);
        BrokerMetrics m = new BrokerMetrics(now::get);
        for (int i = 0; i < 120; i++) {
            m.requestServed();
        }
        m.pushed(60);
        assertEquals(0.0, m.requestsPerSecond(), "the current second is not counted yet");
        now.addAndGet(1_000);
        assertEquals(2.0, m.requestsPerSecond());
        assertEquals(1.0, m.messagesPerSecond());
        now.addAndGet(59_000);
        assertEquals(2.0, m.requestsPerSecond(), "still inside the window 60 s later");
        now.addAndGet(1_000);
        assertEquals(0.0, m.requestsPerSecond(), "aged out after 61 s");
    }

    @Test
    void aSlotReusedOnALaterLapStartsFromZero() {
        AtomicLong now = new AtomicLong(0);
        RateWindow w = new RateWindow(now::get);
        w.add(600);
        now.set(60_000);
        w.add(60);
        now.set(61_000);
        assertEquals(1.0, w.perSecond());
    }

    private static AckService.Result result(boolean success) {
        return new AckService.Result(0, "t", success ? AckOutcome.APPLIED : AckOutcome.INVALID_LEASE, true, false);
    }
}
