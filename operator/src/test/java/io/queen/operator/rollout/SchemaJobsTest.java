package io.queen.operator.rollout;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

class SchemaJobsTest {
    @Test
    void aJobNameFitsALabelValueEvenForTheLongestStatefulSetName() {
        String longest = "b".repeat(62) + "x";
        String name = SchemaJobs.jobName(longest, "queen-broker:1.5.3");
        assertTrue(name.length() <= 63, name + " has " + name.length() + " characters");
        assertTrue(name.matches("[a-z0-9]([-a-z0-9]*[a-z0-9])?"), name);
        assertEquals(name, SchemaJobs.jobName(longest, "queen-broker:1.5.3"), "deterministic");
        assertNotEquals(name, SchemaJobs.jobName(longest, "queen-broker:1.5.4"), "one Job per image");
    }

    @Test
    void aCutNeverEndsOnADash() {
        String name = SchemaJobs.jobName("a".repeat(44) + "-rest-of-the-name", "img");
        assertTrue(!name.contains("--"), name);
    }

    @Test
    void aShortNameIsKept() {
        assertTrue(SchemaJobs.jobName("queen-broker", "img").startsWith("queen-broker-schema-"));
    }
}
