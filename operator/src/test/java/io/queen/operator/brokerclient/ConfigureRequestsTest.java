package io.queen.operator.brokerclient;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.queen.operator.crd.QueueOptions;
import io.queen.operator.crd.QueueSpec;
import org.junit.jupiter.api.Test;

import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

class ConfigureRequestsTest {
    private static final ObjectMapper JSON = new ObjectMapper();

    @Test
    void aSpecBecomesAReplaceModeBodyWithOnlyTheSetOptions() throws Exception {
        QueueSpec spec = new QueueSpec();
        spec.setNamespace("billing");
        spec.setTask("invoice");
        spec.setOptions(new QueueOptions().withLeaseTime(120).withDeadLetterQueue(false).withRetentionSinkHold("s3"));

        ObjectNode body = ConfigureRequests.body("orders", spec);

        assertEquals(JSON.readTree("""
                {"queue":"orders","namespace":"billing","task":"invoice",
                 "options":{"leaseTime":120,"deadLetterQueue":false,"retentionSinkHold":"s3"},"mode":"replace"}"""), body);
    }

    @Test
    void aSpecWithoutOptionsOrLabelsSendsAnEmptyOptionObjectSoEveryOptionIsReset() throws Exception {
        ObjectNode body = ConfigureRequests.body("orders", new QueueSpec());

        assertEquals(JSON.readTree("{\"queue\":\"orders\",\"options\":{},\"mode\":\"replace\"}"), body);
    }

    @Test
    void theHashIgnoresFieldOrderAndChangesWithAnyValue() throws Exception {
        ObjectNode a = (ObjectNode) JSON.readTree("{\"queue\":\"q\",\"options\":{\"ttl\":1,\"priority\":2},\"mode\":\"replace\"}");
        ObjectNode b = (ObjectNode) JSON.readTree("{\"mode\":\"replace\",\"options\":{\"priority\":2,\"ttl\":1},\"queue\":\"q\"}");
        ObjectNode c = (ObjectNode) JSON.readTree("{\"queue\":\"q\",\"options\":{\"ttl\":1,\"priority\":3},\"mode\":\"replace\"}");

        assertEquals(ConfigureRequests.hash(a), ConfigureRequests.hash(b));
        assertNotEquals(ConfigureRequests.hash(a), ConfigureRequests.hash(c));
        assertTrue(ConfigureRequests.hash(a).startsWith("sha256:"));
    }

    @Test
    void differencesNameEachLabelAndOptionThatDiffers() throws Exception {
        QueueSpec spec = new QueueSpec();
        spec.setNamespace("billing");
        spec.setOptions(new QueueOptions().withLeaseTime(120).withEncryptionEnabled(true));
        ObjectNode request = ConfigureRequests.body("orders", spec);
        BrokerQueue actual = new BrokerQueue("orders", "", "stale", JSON.readTree(
                "{\"leaseTime\":60,\"encryptionEnabled\":true,\"ttl\":3600}"), 0);

        List<String> diffs = ConfigureRequests.differences(request, actual);

        assertEquals(List.of("namespace: want \"billing\", broker has \"\"", "task: want \"\", broker has \"stale\"",
                "leaseTime: want 120, broker has 60"), diffs);
    }

    @Test
    void optionsTheBrokerDoesNotReportAreNotDifferences() throws Exception {
        QueueSpec spec = new QueueSpec();
        spec.setOptions(new QueueOptions().withLeaseTime(120));
        ObjectNode request = ConfigureRequests.body("orders", spec);

        assertEquals(List.of(), ConfigureRequests.differences(request, new BrokerQueue("orders", "", "", null, 0)));
        assertEquals(List.of(), ConfigureRequests.optionDifferences(request, JSON.readTree("{\"ttl\":5}")));
        assertEquals(List.of(), ConfigureRequests.optionDifferences(request, JSON.readTree("{\"leaseTime\":120.0}")));
    }
}
