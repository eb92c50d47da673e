package io.queen.bench;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * CPU time of the three parties sharing the machine in a phase: the broker, PostgreSQL and this
 * benchmark's JVM (the client), read from /proc. Divided by the phase's messages it says where a
 * message's CPU goes, which the throughput figure alone cannot: on a small machine the three
 * compete for the same cores.
 *
 * <p>PostgreSQL is measured only when it runs on this host: the sum over every process named
 * {@code postgres} of its own CPU plus that of its reaped children (a backend that exits adds its
 * time to the postmaster's), so connections opened and closed inside the phase still count.
 */
final class CpuMeter {
    private static final double TICKS_PER_SECOND = 100; // USER_HZ, 100 on Linux
    private static final Path PROC = Path.of("/proc");

    /** CPU seconds used so far; NaN for a party that cannot be measured here. */
    record Sample(double broker, double postgres, double client) {
        static final Sample ZERO = new Sample(0, 0, 0);

        Sample minus(Sample o) {
            return new Sample(broker - o.broker, postgres - o.postgres, client - o.client);
        }

        Sample plus(Sample o) {
            return new Sample(broker + o.broker, postgres + o.postgres, client + o.client);
        }
    }

    /** CPU microseconds per message of each party between two samples. */
    record PerMessage(double broker, double postgres, double client) {
        static PerMessage between(Sample before, Sample after, long messages) {
            return new PerMessage(micros(after.broker - before.broker, messages),
                    micros(after.postgres - before.postgres, messages), micros(after.client - before.client, messages));
        }

        private static double micros(double seconds, long messages) {
            return messages == 0 ? Double.NaN : seconds * 1e6 / messages;
        }

        double total() {
            return (Double.isNaN(broker) ? 0 : broker) + (Double.isNaN(postgres) ? 0 : postgres) + client;
        }

        /** "broker 14.2 + PostgreSQL 10.9 + client 2.1 = 27.2 us CPU/msg"; a broker not measured is left out. */
        String describe() {
            StringBuilder sb = new StringBuilder();
            if (!Double.isNaN(broker)) {
                sb.append(String.format("broker %.1f + ", broker));
            }
            sb.append(Double.isNaN(postgres) ? "PostgreSQL not on this host + " : String.format("PostgreSQL %.1f + ", postgres));
            sb.append(String.format("client %.1f = %.1f us CPU/msg", client, total()));
            return sb.toString();
        }
    }

    private final long brokerPid;
    private final boolean postgresLocal;

    /** @param brokerPid the broker's pid, or 0 when no broker runs (the ceiling) */
    CpuMeter(long brokerPid, boolean postgresLocal) {
        this.brokerPid = brokerPid;
        this.postgresLocal = postgresLocal;
    }

    Sample sample() {
        double broker = brokerPid == 0 ? Double.NaN : seconds(brokerPid);
        double postgres = postgresLocal ? postgresSeconds() : Double.NaN;
        return new Sample(broker, postgres, seconds(ProcessHandle.current().pid()));
    }

    private static double postgresSeconds() {
        long ticks = 0;
        boolean any = false;
        try (var entries = Files.list(PROC)) {
            for (Path p : (Iterable<Path>) entries::iterator) {
                String name = p.getFileName().toString();
                if (!name.chars().allMatch(Character::isDigit)) {
                    continue;
                }
                long[] t = ticks(p);
                if (t != null && t[4] == 1) {
                    ticks += t[0] + t[1] + t[2] + t[3];
                    any = true;
                }
            }
        } catch (IOException e) {
            return Double.NaN;
        }
        return any ? ticks / TICKS_PER_SECOND : Double.NaN;
    }

    private static double seconds(long pid) {
        long[] t = ticks(PROC.resolve(Long.toString(pid)));
        return t == null ? Double.NaN : (t[0] + t[1]) / TICKS_PER_SECOND;
    }

    /** utime, stime, cutime, cstime and 1 when the command is "postgres"; null when the process is gone. */
    private static long[] ticks(Path process) {
        String stat;
        try {
            stat = Files.readString(process.resolve("stat"));
        } catch (IOException | RuntimeException gone) {
            return null;
        }
        int close = stat.lastIndexOf(')');
        String command = stat.substring(stat.indexOf('(') + 1, close);
        // Fields after the command: state is field 3; utime, stime, cutime, cstime are 14-17.
        String[] f = stat.substring(close + 2).split(" ");
        return new long[]{Long.parseLong(f[11]), Long.parseLong(f[12]), Long.parseLong(f[13]), Long.parseLong(f[14]),
                "postgres".equals(command) ? 1 : 0};
    }

    /** Whether a PostgreSQL at {@code host} runs on this machine, where /proc shows its processes. */
    static boolean isLocal(String host) {
        return host.equals("localhost") || host.startsWith("127.") || host.equals("::1") || host.equals("[::1]");
    }
}
