package io.queen.bench;

import java.io.IOException;
import java.net.ServerSocket;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * The broker under test, run as a child JVM ({@code io.queen.broker.Main} from a directory holding
 * queen-broker.jar and lib/, broker/target by default) on a
 * free port against one database, its output in a log file. Being a separate process its peak
 * resident set can be read from {@code /proc/<pid>/status}.
 */
final class BrokerProcess implements AutoCloseable {
    private static final long START_TIMEOUT_MS = 120_000;
    private static final int CLOCK_TICKS_PER_SECOND = 100; // USER_HZ, 100 on every Linux build in use

    private static final long HEALTH_POLL_MS = 50;

    private final Process process;
    private final URI baseUri;
    private final Path logFile;
    /** This broker's push spool (FILE_BUFFER_DIR), removed when it stops. */
    private final Path spoolDir;
    /** {@link System#nanoTime()} just before the process was started, and at its first /health 200. */
    private final long startedNanos;
    private long healthyNanos;

    private BrokerProcess(Process process, URI baseUri, Path logFile, Path spoolDir, long startedNanos) {
        this.process = process;
        this.baseUri = baseUri;
        this.logFile = logFile;
        this.spoolDir = spoolDir;
        this.startedNanos = startedNanos;
    }

    /** Starts the broker and returns once {@code GET /health} answers 200. */
    static BrokerProcess start(Path brokerDir, PgServer.Database db, Path logFile, int podMemoryMb)
            throws IOException, InterruptedException {
        return start(brokerDir, db, logFile, podMemoryMb, Map.of());
    }

    /** Like the other, with {@code extraEnv} added to the broker's environment (settings of a mode). */
    static BrokerProcess start(Path brokerDir, PgServer.Database db, Path logFile, int podMemoryMb,
                               Map<String, String> extraEnv) throws IOException, InterruptedException {
        return start(brokerDir, db, logFile, podMemoryMb, extraEnv, List.of());
    }

    /**
     * Like the others, with {@code extraJvm} options after the chart's (the ahead-of-time cache of
     * {@code --cold --aot}, for one).
     */
    static BrokerProcess start(Path brokerDir, PgServer.Database db, Path logFile, int podMemoryMb,
                               Map<String, String> extraEnv, List<String> extraJvm)
            throws IOException, InterruptedException {
        int port = freePort();
        List<String> cmd = new ArrayList<>();
        cmd.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        cmd.addAll(jvmOptionsFile(brokerDir));
        cmd.addAll(heapFlags(podMemoryMb));
        cmd.addAll(extraJvm);
        String extra = System.getenv("QUEEN_BENCH_BROKER_JAVA_OPTS");
        if (extra != null && !extra.isBlank()) {
            cmd.addAll(List.of(extra.trim().split("\\s+")));
        }
        cmd.add("-cp");
        // The java launcher expands lib/* itself.
        cmd.add(brokerDir.resolve("queen-broker.jar") + ":" + brokerDir.resolve("lib") + "/*");
        cmd.add("io.queen.broker.Main");
        Files.createDirectories(logFile.getParent());
        ProcessBuilder pb = new ProcessBuilder(cmd)
                .redirectErrorStream(true)
                .redirectOutput(logFile.toFile());
        var env = pb.environment();
        env.put("PG_HOST", db.host());
        env.put("PG_PORT", Integer.toString(db.port()));
        env.put("PG_USER", db.user());
        env.put("PG_PASSWORD", db.password());
        env.put("PG_DATABASE", db.name());
        env.put("PORT", Integer.toString(port));
        env.put("QUEEN_BIND_ADDR", "127.0.0.1");
        // As the image and bin/run set it: two malloc arenas, not eight per core.
        env.putIfAbsent("MALLOC_ARENA_MAX", "2");
        // A spool of its own: the default folder is shared by every broker of the machine, and
        // items a stopped run spooled would replay into the next run's database.
        Path spool = Files.createTempDirectory("queen-bench-spool-");
        env.put("FILE_BUFFER_DIR", spool.toString());
        env.putAll(extraEnv);
        long startedNanos = System.nanoTime();
        Process process = pb.start();
        // An interrupted benchmark (Ctrl-C) must not leave the broker running.
        Runtime.getRuntime().addShutdownHook(new Thread(process::destroy, "bench-broker-stop"));
        BrokerProcess broker = new BrokerProcess(process, URI.create("http://127.0.0.1:" + port), logFile, spool,
                startedNanos);
        try (BrokerHttp probe = new BrokerHttp(broker.baseUri)) {
            broker.awaitHealthy(probe);
        } catch (IOException | InterruptedException | RuntimeException e) {
            broker.close();
            throw e;
        }
        return broker;
    }

    /**
     * The broker's own JVM options (broker/jvm.options, copied beside the jar by bin/bench), as the
     * image and bin/run pass them; without the file only what the broker cannot start without.
     */
    static List<String> jvmOptionsFile(Path brokerDir) {
        Path file = brokerDir.resolve("jvm.options");
        return Files.isRegularFile(file) ? List.of("@" + file) : List.of("--enable-native-access=ALL-UNNAMED");
    }

    /**
     * The heap flags the chart gives a broker pod with a memory limit of {@code podMemoryMb}
     * (charts/queen: broker.heap, default 20%, grown on demand); -XX:MaxRAM stands in for the
     * container's limit, from which the JVM takes its percentage (MinRAMPercentage too: the JVM's own
     * choice below 512 MB, see the chart's queen.brokerHeapFlags). None for 0 (JVM defaults, sized
     * on the host).
     */
    static List<String> heapFlags(int podMemoryMb) {
        if (podMemoryMb == 0) {
            return List.of();
        }
        return List.of("-XX:MaxRAM=" + podMemoryMb + "m", "-XX:MaxRAMPercentage=20.0", "-XX:MinRAMPercentage=20.0");
    }

    URI baseUri() {
        return baseUri;
    }

    long pid() {
        return process.pid();
    }

    /** {@link System#nanoTime()} just before the process was started. */
    long startedNanos() {
        return startedNanos;
    }

    /** Nanoseconds from the process start to the first {@code GET /health} that answered 200. */
    long startToHealthyNanos() {
        return healthyNanos - startedNanos;
    }

    /** Peak resident set size so far (VmHWM), in MiB. */
    double peakRssMb() throws IOException {
        return ProcStatus.mib(status(), "VmHWM");
    }

    /** Resident set size now (VmRSS), in MiB. */
    double rssMb() throws IOException {
        return ProcStatus.mib(status(), "VmRSS");
    }

    private String status() throws IOException {
        return Files.readString(Path.of("/proc", Long.toString(process.pid()), "status"));
    }

    /**
     * The JVM options the broker runs with: its command line's options before the class path,
     * after any given by JAVA_TOOL_OPTIONS or JDK_JAVA_OPTIONS in its environment (inherited).
     */
    String jvmOptions() {
        List<String> out = new ArrayList<>();
        for (String var : List.of("JAVA_TOOL_OPTIONS", "JDK_JAVA_OPTIONS")) {
            String v = System.getenv(var);
            if (v != null && !v.isBlank()) {
                out.add(var + "=\"" + v.trim() + "\"");
            }
        }
        List<String> args = process.info().arguments().map(List::of).orElse(List.of());
        for (String a : args) {
            if (a.equals("-cp") || a.equals("-classpath")) {
                break;
            }
            out.add(a);
        }
        return out.isEmpty() ? "(none)" : String.join(" ", out);
    }

    /** CPU time (user + system) the broker process has used so far, in seconds. */
    double cpuSeconds() throws IOException {
        String stat = Files.readString(Path.of("/proc", Long.toString(process.pid()), "stat"));
        // Fields after the parenthesised command name: state is field 3, utime 14 and stime 15.
        String[] f = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
        return (Long.parseLong(f[11]) + Long.parseLong(f[12])) / (double) CLOCK_TICKS_PER_SECOND;
    }

    /**
     * CPU seconds the broker's JIT compiler threads have used so far (HotSpot names them
     * "C1 CompilerThreadN" / "C2 CompilerThreadN"); NaN where /proc has no per-thread names.
     */
    double compilerCpuSeconds() {
        Path tasks = Path.of("/proc", Long.toString(process.pid()), "task");
        long ticks = 0;
        try (var threads = Files.list(tasks)) {
            for (Path t : (Iterable<Path>) threads::iterator) {
                try {
                    String stat = Files.readString(t.resolve("stat"));
                    String name = stat.substring(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
                    if (name.contains("CompilerThre")) {
                        String[] f = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
                        ticks += Long.parseLong(f[11]) + Long.parseLong(f[12]);
                    }
                } catch (IOException | RuntimeException gone) {
                    // The thread ended between the listing and the read.
                }
            }
        } catch (IOException e) {
            return Double.NaN;
        }
        return ticks / (double) CLOCK_TICKS_PER_SECOND;
    }

    /** SIGTERM (the broker's shutdown hook closes it cleanly), then a kill after 15 s. */
    @Override
    public void close() {
        stop(15);
    }

    /** SIGTERM, then a kill after {@code graceSeconds} (a JVM writing its AOT cache takes a while). */
    void stop(int graceSeconds) {
        process.destroy();
        try {
            if (!process.waitFor(graceSeconds, TimeUnit.SECONDS)) {
                process.destroyForcibly().waitFor(5, TimeUnit.SECONDS);
            }
        } catch (InterruptedException e) {
            process.destroyForcibly();
            Thread.currentThread().interrupt();
        }
        removeSpool();
    }

    /** Deletes the spool folder; items left in it were never stored, which the run must say. */
    private void removeSpool() {
        if (!Files.exists(spoolDir)) {
            return;
        }
        try (var files = Files.walk(spoolDir)) {
            List<Path> all = files.sorted(java.util.Comparator.reverseOrder()).toList();
            long spooled = all.stream().filter(Files::isRegularFile).count();
            if (spooled > 0) {
                System.out.printf("bench: the broker stopped with %d spool file(s) in %s (pushes answered buffered, "
                        + "not stored); removed%n", spooled, spoolDir);
            }
            for (Path p : all) {
                Files.deleteIfExists(p);
            }
        } catch (IOException e) {
            System.out.println("bench: could not remove the broker's spool " + spoolDir + ": " + e.getMessage());
        }
    }

    private void awaitHealthy(BrokerHttp http) throws IOException, InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(START_TIMEOUT_MS);
        while (System.nanoTime() < deadline) {
            if (!process.isAlive()) {
                throw new IOException("the broker exited with code " + process.exitValue() + " before /health "
                        + "answered; see " + logFile);
            }
            if (http.healthy()) {
                healthyNanos = System.nanoTime();
                return;
            }
            Thread.sleep(HEALTH_POLL_MS);
        }
        throw new IOException("the broker did not answer /health within " + START_TIMEOUT_MS / 1000 + " s; see "
                + logFile);
    }

    private static int freePort() throws IOException {
        try (ServerSocket s = new ServerSocket(0)) {
            return s.getLocalPort();
        }
    }
}
