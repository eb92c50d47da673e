package io.queen.broker.jobs;

import java.util.logging.Level;

/** One run of a background job. A thrown exception fails this run only; the schedule goes on. */
@FunctionalInterface
interface Cycle {

    Outcome run() throws Exception;

    /** What the run did, as one log line; idle runs log at a quieter level than working ones. */
    record Outcome(Level level, String summary) {
        static Outcome worked(String summary) {
            return new Outcome(Level.INFO, summary);
        }

        static Outcome idle(String summary) {
            return new Outcome(Level.FINE, summary);
        }
    }
}
