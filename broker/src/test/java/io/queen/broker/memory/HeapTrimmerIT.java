package io.queen.broker.memory;

import com.sun.management.HotSpotDiagnosticMXBean;
import io.queen.broker.config.HeapTrimSettings;
import org.junit.jupiter.api.Test;

import java.lang.management.ManagementFactory;
import java.lang.management.MemoryMXBean;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The trimmer on a real collector. It needs the serial one, which the test JVM need not run, so the
 * trim itself runs in a child JVM started as the broker is (serial, the jvm.options' ratios, no
 * stepped shrinking): the child grows its heap, lets the data go, and reports what the trimmer
 * made of it. An integration test because it starts a JVM.
 */
class HeapTrimmerIT {
    private static final long MB = 1024 * 1024;

    @Test
    void aQuietJvmGetsItsGrownHeapCutAndItsRatiosBack() throws Exception {
        String out = runChild("quiet");
        assertTrue(out.contains("trimmed committed="), out);
    }

    @Test
    void aTrimAskedForCutsTheHeapAtOnceWithoutWaitingForALook() throws Exception {
        String out = runChild("now");
        assertTrue(out.contains("trimmed committed="), out);
    }

    /** Runs {@link Child} in {@code mode}; returns its output once it exited 0. */
    private static String runChild(String mode) throws Exception {
        Process child = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-XX:+UseSerialGC", "-Xms8m", "-Xmx256m", "-XX:MinHeapFreeRatio=20", "-XX:MaxHeapFreeRatio=40",
                "-XX:-ShrinkHeapInSteps", "-cp", System.getProperty("java.class.path"), Child.class.getName(), mode)
                .redirectErrorStream(true).start();
        assertTrue(child.waitFor(60, TimeUnit.SECONDS), "the child JVM ended");
        String out = new String(child.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertEquals(0, child.exitValue(), out);
        return out;
    }

    @Test
    void offWhenTheIntervalIsZero() {
        assertNull(HeapTrimmer.start(new HeapTrimSettings(0, 32, 8)));
    }

    /**
     * The child: exits 0 when the trimmer cut the heap to under half and restored both ratios;
     * {@code quiet}: by its own look every second, {@code now}: by {@link HeapTrimmer#trimNow} with
     * the looks an hour apart.
     */
    public static final class Child {
        public static void main(String[] args) throws Exception {
            MemoryMXBean memory = ManagementFactory.getMemoryMXBean();
            HotSpotDiagnosticMXBean diagnostics = ManagementFactory.getPlatformMXBean(HotSpotDiagnosticMXBean.class);
            // Old-generation data that then dies: the heap grows for it and keeps it committed.
            List<long[]> held = new ArrayList<>();
            for (int i = 0; i < 120; i++) {
                held.add(new long[128 * 1024]);
            }
            System.gc();
            held.clear();
            long grown = memory.getHeapMemoryUsage().getCommitted();
            System.out.println("grown committed=" + grown / MB + " MB");
            if (grown < 100 * MB) {
                System.out.println("the heap did not grow");
                System.exit(2);
            }
            boolean now = args.length > 0 && args[0].equals("now");
            try (HeapTrimmer trimmer = HeapTrimmer.start(new HeapTrimSettings(now ? 3600 : 1, 64, 1))) {
                if (trimmer == null) {
                    System.out.println("the trimmer did not start");
                    System.exit(3);
                }
                if (now) {
                    trimmer.trimNow("asked by the test");
                }
                long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
                while (memory.getHeapMemoryUsage().getCommitted() > grown / 2 && System.nanoTime() < deadline) {
                    Thread.sleep(100);
                }
            }
            long trimmed = memory.getHeapMemoryUsage().getCommitted();
            String min = diagnostics.getVMOption("MinHeapFreeRatio").getValue();
            String max = diagnostics.getVMOption("MaxHeapFreeRatio").getValue();
            System.out.println("trimmed committed=" + trimmed / MB + " MB, ratios " + min + "/" + max);
            System.exit(trimmed <= grown / 2 && min.equals("20") && max.equals("40") ? 0 : 1);
        }
    }
}
