package io.queen.broker.support;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.logging.Handler;
import java.util.logging.LogRecord;
import java.util.logging.Logger;

/** The records one class's java.util.logging logger publishes while open; try-with-resources detaches it. */
public final class CapturedLog implements AutoCloseable {
    private final Logger logger;
    private final List<LogRecord> records = new CopyOnWriteArrayList<>();
    private final Handler handler = new Handler() {
        @Override
        public void publish(LogRecord r) {
            records.add(r);
        }

        @Override
        public void flush() {
        }

        @Override
        public void close() {
        }
    };

    private CapturedLog(Class<?> source) {
        this.logger = Logger.getLogger(source.getName());
        logger.addHandler(handler);
    }

    public static CapturedLog of(Class<?> source) {
        return new CapturedLog(source);
    }

    /** What was published so far (live). */
    public List<LogRecord> records() {
        return records;
    }

    /** The messages published so far, in order. */
    public List<String> messages() {
        return records.stream().map(LogRecord::getMessage).toList();
    }

    /** True when a message published so far contains {@code text}. */
    public boolean contains(String text) {
        return messages().stream().anyMatch(m -> m.contains(text));
    }

    @Override
    public void close() {
        logger.removeHandler(handler);
    }
}
