package io.queen.bench;

/**
 * Fields of a {@code /proc/<pid>/status} text, such as {@code VmRSS:   123456 kB} (the resident
 * set now) and {@code VmHWM} (its peak so far).
 */
final class ProcStatus {
    private ProcStatus() {
    }

    /** The value of {@code field} in kB; IllegalArgumentException when the text has no such line. */
    static long kilobytes(String status, String field) {
        for (String line : status.split("\n")) {
            if (line.startsWith(field + ":")) {
                String value = line.substring(field.length() + 1).trim();
                int space = value.indexOf(' ');
                return Long.parseLong(space < 0 ? value : value.substring(0, space));
            }
        }
        throw new IllegalArgumentException("no " + field + " line in the status text");
    }

    /** The value of {@code field} in MiB. */
    static double mib(String status, String field) {
        return kilobytes(status, field) / 1024.0;
    }
}
