package io.queen.broker.memory;

import com.sun.management.HotSpotDiagnosticMXBean;
import io.queen.broker.config.HeapTrimSettings;
import io.queen.broker.lifecycle.BackgroundThread;

import java.lang.management.GarbageCollectorMXBean;
import java.lang.management.ManagementFactory;
import java.lang.management.MemoryMXBean;
import java.time.Duration;
import java.util.Set;
import java.util.logging.Logger;
import java.util.stream.Collectors;

/**
 * Gives heap back to the operating system once traffic is quiet (broker/DESIGN.md, Memory and
 * start-up). The serial collector grows the heap under a burst and shrinks it only at a full
 * collection, which a broker whose garbage dies young rarely has: without this, a pod that once
 * took a burst keeps its peak heap resident at 1,000 msg/s. Every interval it reads the process's
 * allocation rate; when {@link TrimPolicy} says so, it runs one full collection with the free-space
 * ratios lowered for that collection only (both are manageable flags), so the heap is cut to the
 * live set plus a tenth, then restores the ratios the JVM was started with, so that collections
 * under load size the heap as before.
 *
 * <p>Process-wide, so {@code Main} starts it, never a {@code Broker} (tests run many in one JVM).
 * Only with the serial collector: G1 and the others have their own ways to give memory back.
 */
public final class HeapTrimmer implements AutoCloseable {
    private static final Logger LOG = Logger.getLogger(HeapTrimmer.class.getName());
    private static final Set<String> SERIAL = Set.of("Copy", "MarkSweepCompact");
    /** Free space left after a trim: 5-10% of the heap, against the jvm.options' 20-40%. */
    private static final String TRIM_MIN_FREE = "5";
    private static final String TRIM_MAX_FREE = "10";
    private static final long MB = 1024 * 1024;

    private final HeapTrimSettings settings;
    private final HotSpotDiagnosticMXBean diagnostics;
    private final com.sun.management.ThreadMXBean threads;
    private final MemoryMXBean memory = ManagementFactory.getMemoryMXBean();
    private final TrimPolicy policy;
    private volatile boolean stopping;
    private Thread thread;

    private HeapTrimmer(HeapTrimSettings settings, HotSpotDiagnosticMXBean diagnostics,
                        com.sun.management.ThreadMXBean threads) {
        this.settings = settings;
        this.diagnostics = diagnostics;
        this.threads = threads;
        this.policy = new TrimPolicy(settings.quietMbPerSecond() * MB, settings.growthMb() * MB);
    }

    /** Starts the trimmer, or returns null (saying why) when it is off or this JVM cannot do it. */
    public static HeapTrimmer start(HeapTrimSettings settings) {
        if (!settings.enabled()) {
            LOG.info("heap trim off (QUEEN_HEAP_TRIM_SECONDS=0)");
            return null;
        }
        Set<String> collectors = ManagementFactory.getGarbageCollectorMXBeans().stream()
                .map(GarbageCollectorMXBean::getName).collect(Collectors.toSet());
        HotSpotDiagnosticMXBean diagnostics = ManagementFactory.getPlatformMXBean(HotSpotDiagnosticMXBean.class);
        if (!collectors.equals(SERIAL) || diagnostics == null) {
            LOG.info("heap trim off: it needs HotSpot's serial collector, this JVM runs " + collectors);
            return null;
        }
        if (Boolean.parseBoolean(diagnostics.getVMOption("DisableExplicitGC").getValue())) {
            LOG.info("heap trim off: -XX:+DisableExplicitGC");
            return null;
        }
        if (!(ManagementFactory.getThreadMXBean() instanceof com.sun.management.ThreadMXBean threads)
                || !threads.isThreadAllocatedMemorySupported() || !threads.isThreadAllocatedMemoryEnabled()) {
            LOG.info("heap trim off: this JVM does not count allocated bytes");
            return null;
        }
        HeapTrimmer trimmer = new HeapTrimmer(settings, diagnostics, threads);
        trimmer.thread = BackgroundThread.start("queen-heap-trim", trimmer::loop);
        LOG.info("heap trim on: every " + settings.intervalSeconds() + " s below " + settings.quietMbPerSecond()
                + " MB/s of allocation, once the heap grew " + settings.growthMb() + " MB");
        return trimmer;
    }

    /**
     * Trims now, whatever the allocation rate: the caller knows a burst has just ended and its
     * garbage is dead (the warm-up before readiness, whose pushes grew the heap to 41 MB committed
     * where a steady broker keeps 26-30; the next look comes up to an interval later, under the first
     * traffic, and its rate still holds the warm-up's allocation).
     */
    public void trimNow(String why) {
        trim(why);
    }

    private void loop() {
        while (!stopping && BackgroundThread.pause(settings.intervalSeconds() * 1000L)) {
            trimIfQuiet();
        }
    }

    private synchronized void trimIfQuiet() {
        if (policy.shouldTrim(threads.getTotalThreadAllocatedBytes(), System.nanoTime(),
                memory.getHeapMemoryUsage().getCommitted())) {
            trim("quiet");
        }
    }

    /** Synchronized: the trimmer's own thread and {@link #trimNow} both set the ratios and the policy. */
    private synchronized void trim(String why) {
        long before = memory.getHeapMemoryUsage().getCommitted();
        String minFree = diagnostics.getVMOption("MinHeapFreeRatio").getValue();
        String maxFree = diagnostics.getVMOption("MaxHeapFreeRatio").getValue();
        // The collector damps shrinking over consecutive full collections unless told not to: 0% of
        // the excess at the first, 10% and 40% next, all of it at the fourth.
        int collections = Boolean.parseBoolean(diagnostics.getVMOption("ShrinkHeapInSteps").getValue()) ? 4 : 1;
        long start = System.nanoTime();
        // Min stays at or below Max at every step: lower Min first, raise Max first.
        diagnostics.setVMOption("MinHeapFreeRatio", TRIM_MIN_FREE);
        diagnostics.setVMOption("MaxHeapFreeRatio", TRIM_MAX_FREE);
        try {
            for (int i = 0; i < collections; i++) {
                System.gc();
            }
        } finally {
            diagnostics.setVMOption("MaxHeapFreeRatio", maxFree);
            diagnostics.setVMOption("MinHeapFreeRatio", minFree);
        }
        long pauseMs = Duration.ofNanos(System.nanoTime() - start).toMillis();
        var after = memory.getHeapMemoryUsage();
        policy.trimmed(after.getCommitted());
        LOG.info(String.format("heap trimmed (%s): committed %d MB -> %d MB (%d MB live) in %d ms, %d collection(s),"
                        + " allocation %.1f MB/s at the last look", why, before / MB, after.getCommitted() / MB,
                after.getUsed() / MB, pauseMs, collections, policy.lastRateBytesPerSecond() / MB));
    }

    @Override
    public void close() {
        stopping = true;
        BackgroundThread.stop(thread, Duration.ofSeconds(5), "a heap trim");
    }
}
