package io.queen.bench;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * The streams mode's accounting, per key (source partition) and window: the messages pushed (by
 * event time) and the results a sink consumer received (count and receive time). A window is
 * closed once a later event of its key was pushed (its end is at or before the key's last event
 * time), so once the pipeline drained every closed window must have been emitted exactly once
 * with the count pushed into it. Window-close latency is a result's receive time minus its
 * window's end, for the windows inside a given span of event time.
 */
final class WindowLedger {
    private final TumblingWindows windows;
    private final Map<String, TreeMap<Long, Window>> byKey = new TreeMap<>();
    private final Map<String, Long> lastEvent = new TreeMap<>();

    private static final class Window {
        long pushed;
        long emissions;
        long emittedCount;
        long receivedMicros;
    }

    /** The check of {@link #verdict()}: problems is empty when the emitted results match the pushes. */
    record Verdict(long closedWindows, long emittedWindows, long emittedSum, long pushedInClosed, List<String> problems) {
        boolean ok() {
            return problems.isEmpty();
        }
    }

    WindowLedger(TumblingWindows windows) {
        this.windows = windows;
    }

    synchronized void pushed(String key, long eventMs) {
        window(key, windows.start(eventMs)).pushed++;
        lastEvent.merge(key, eventMs, Math::max);
    }

    synchronized void emitted(String key, long windowStart, long count, long receivedMicros) {
        Window w = window(key, windowStart);
        if (w.emissions++ == 0) {
            w.emittedCount = count;
            w.receivedMicros = receivedMicros;
        } else {
            w.emittedCount += count;
        }
    }

    /** Closed windows not emitted yet; 0 once every closed window has a result. */
    synchronized long unemittedClosed() {
        long n = 0;
        for (var e : byKey.entrySet()) {
            for (var w : e.getValue().entrySet()) {
                if (closed(e.getKey(), w.getKey()) && w.getValue().emissions == 0) {
                    n++;
                }
            }
        }
        return n;
    }

    /** Receive time minus window end of the first result of each window with fromMs <= start, end <= toMs. */
    synchronized Latencies closeLatency(long fromMs, long toMs) {
        Latencies out = new Latencies();
        for (var perKey : byKey.values()) {
            for (var w : perKey.subMap(fromMs, true, toMs, true).entrySet()) {
                long end = windows.end(w.getKey());
                if (end <= toMs && w.getValue().emissions > 0) {
                    out.add(w.getValue().receivedMicros - end * 1000);
                }
            }
        }
        return out;
    }

    synchronized Verdict verdict() {
        List<String> problems = new ArrayList<>();
        long closedWindows = 0;
        long emittedWindows = 0;
        long emittedSum = 0;
        long pushedInClosed = 0;
        for (var e : byKey.entrySet()) {
            String key = e.getKey();
            for (var entry : e.getValue().entrySet()) {
                long start = entry.getKey();
                Window w = entry.getValue();
                boolean closed = closed(key, start);
                String name = key + " window " + start;
                if (closed) {
                    closedWindows++;
                    pushedInClosed += w.pushed;
                }
                if (w.emissions > 0) {
                    emittedWindows++;
                    emittedSum += w.emittedCount;
                }
                if (w.emissions > 1) {
                    problems.add(name + " emitted " + w.emissions + " times");
                } else if (closed && w.emissions == 0) {
                    problems.add(name + " closed with " + w.pushed + " messages but not emitted");
                } else if (!closed && w.emissions > 0) {
                    problems.add(name + " emitted before a later event of its key was pushed");
                } else if (w.emissions == 1 && w.emittedCount != w.pushed) {
                    problems.add(name + " emitted count " + w.emittedCount + ", pushed " + w.pushed);
                }
            }
        }
        return new Verdict(closedWindows, emittedWindows, emittedSum, pushedInClosed, List.copyOf(problems));
    }

    private boolean closed(String key, long start) {
        Long last = lastEvent.get(key);
        return last != null && windows.end(start) <= last;
    }

    private Window window(String key, long start) {
        return byKey.computeIfAbsent(key, k -> new TreeMap<>()).computeIfAbsent(start, s -> new Window());
    }
}
