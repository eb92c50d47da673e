package io.queen.bench;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

class ProcStatusTest {
    /** An excerpt of a real /proc/<pid>/status of a JVM. */
    private static final String STATUS = """
            Name:\tjava
            Umask:\t0022
            State:\tS (sleeping)
            Pid:\t32071
            VmPeak:\t 3954216 kB
            VmSize:\t 3889704 kB
            VmHWM:\t  871432 kB
            VmRSS:\t  262144 kB
            RssAnon:\t  840000 kB
            Threads:\t51
            """;

    @Test
    void readsTheResidentSetAndItsPeakInKilobytesAndMib() {
        assertEquals(262_144, ProcStatus.kilobytes(STATUS, "VmRSS"));
        assertEquals(871_432, ProcStatus.kilobytes(STATUS, "VmHWM"));
        assertEquals(256.0, ProcStatus.mib(STATUS, "VmRSS"), 1e-9);
        assertEquals(51, ProcStatus.kilobytes(STATUS, "Threads"), "a value without a unit");
    }

    @Test
    void aFieldMustMatchWholeNotAsAPrefix() {
        assertEquals(840_000, ProcStatus.kilobytes(STATUS, "RssAnon"));
        assertThrows(IllegalArgumentException.class, () -> ProcStatus.kilobytes(STATUS, "Rss"));
        assertThrows(IllegalArgumentException.class, () -> ProcStatus.kilobytes("Name:\tjava\n", "VmRSS"));
    }

    @Test
    void theBrokersOwnStatusParsesLikeAnyProcess() throws Exception {
        String self = java.nio.file.Files.readString(java.nio.file.Path.of("/proc/self/status"));
        double rss = ProcStatus.mib(self, "VmRSS");
        double hwm = ProcStatus.mib(self, "VmHWM");
        org.junit.jupiter.api.Assertions.assertTrue(rss > 0 && hwm >= rss, rss + " / " + hwm);
    }
}
