package io.queen.operator.support;

import java.time.Duration;

import static org.awaitility.Awaitility.await;

/**
 * "Nothing happens", which no event can signal, checked as a condition that must keep holding: the
 * check runs every 100 ms for the whole period, and its first failure (an {@link AssertionError})
 * ends the wait at once with its own message. The period is the claim ("not within 3 s"), so it
 * should exceed whatever would make it fail (a retry interval, a poll of the operator).
 */
public final class Steady {
    /** Room past the period for a slow last check; a check that keeps passing ends at the period. */
    private static final Duration SLACK = Duration.ofSeconds(10);

    private Steady() {
    }

    /** Fails as soon as {@code check} fails within {@code period}; returns once it held throughout. */
    public static void holdsFor(Duration period, String what, Runnable check) {
        await(what).during(period).atMost(period.plus(SLACK)).pollInterval(Duration.ofMillis(100)).until(() -> {
            check.run();
            return true;
        });
    }
}
