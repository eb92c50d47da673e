package io.queen.broker.engine;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Optional;
import java.util.OptionalLong;

/**
 * Operating-system view of this process, read from Linux {@code /proc/self} (the broker's
 * container platform): resident memory and CPU time split into user and system. Elsewhere the
 * files are absent and the readings are empty rather than invented.
 */
public final class ProcessGauges {
    /** /proc reports CPU times in USER_HZ ticks, fixed at 100 per second for user space on Linux. */
    private static final long MICROS_PER_TICK = 10_000L;

    private final Path status;
    private final Path stat;

    /** CPU time consumed since the process started, in microseconds. */
    public record CpuTimes(long userMicros, long systemMicros) {
    }

    public ProcessGauges() {
        this(Path.of("/proc/self/status"), Path.of("/proc/self/stat"));
    }

    ProcessGauges(Path status, Path stat) {
        this.status = status;
        this.stat = stat;
    }

    /** Resident set size in bytes (VmRSS). */
    public OptionalLong residentBytes() {
        try {
            for (String line : Files.readAllLines(status, StandardCharsets.US_ASCII)) {
                if (line.startsWith("VmRSS:")) {
                    return parseKilobytes(line.substring("VmRSS:".length()));
                }
            }
            return OptionalLong.empty();
        } catch (IOException | RuntimeException e) {
            return OptionalLong.empty();
        }
    }

    public Optional<CpuTimes> cpuTimes() {
        try {
            return parseStat(Files.readString(stat, StandardCharsets.US_ASCII));
        } catch (IOException | RuntimeException e) {
            return Optional.empty();
        }
    }

    static OptionalLong parseKilobytes(String value) {
        String v = value.trim();
        if (v.endsWith("kB")) {
            v = v.substring(0, v.length() - 2).trim();
        }
        try {
            return OptionalLong.of(Long.parseLong(v) * 1024L);
        } catch (NumberFormatException e) {
            return OptionalLong.empty();
        }
    }

    /**
     * utime and stime are fields 14 and 15 of /proc/[pid]/stat. The command name (field 2) is in
     * parentheses and may itself hold spaces or ')', so fields are counted from the last ')'.
     */
    static Optional<CpuTimes> parseStat(String line) {
        int close = line.lastIndexOf(')');
        if (close < 0) {
            return Optional.empty();
        }
        String[] fields = line.substring(close + 1).trim().split("\\s+");
        // fields[0] is field 3 (state), so field n is fields[n - 3].
        if (fields.length < 13) {
            return Optional.empty();
        }
        try {
            return Optional.of(new CpuTimes(Long.parseLong(fields[11]) * MICROS_PER_TICK,
                    Long.parseLong(fields[12]) * MICROS_PER_TICK));
        } catch (NumberFormatException e) {
            return Optional.empty();
        }
    }
}
