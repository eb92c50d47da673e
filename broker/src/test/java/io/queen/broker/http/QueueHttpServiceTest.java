package io.queen.broker.http;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.queen.broker.engine.QueueAdminService;
import org.junit.jupiter.api.Test;

import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The request parsing of the queue routes, without a server: mode, the options bag, discovery batches. */
class QueueHttpServiceTest {
    static final ObjectMapper MAPPER = new ObjectMapper();

    static JsonNode json(String text) throws Exception {
        return MAPPER.readTree(text);
    }

    @Test
    void anAbsentModeMergesAndOnlyTheTwoWordsAreAccepted() throws Exception {
        assertFalse(QueueHttpService.replaceMode(null));
        assertFalse(QueueHttpService.replaceMode(json("null")));
        assertTrue(QueueHttpService.replaceMode(json("\"replace\"")));
        assertFalse(QueueHttpService.replaceMode(json("\"merge\"")));
        for (String bad : List.of("\"patch\"", "\"Replace\"", "\"\"", "true", "1")) {
            BadRequestException e = assertThrows(BadRequestException.class, () -> QueueHttpService.replaceMode(json(bad)));
            assertEquals("mode must be \"merge\" or \"replace\", got " + bad, e.getMessage());
        }
    }

    @Test
    void theBagIsTheOptionsObjectOrTheTopLevelWithoutRoutingKeys() throws Exception {
        assertEquals(json("{\"leaseTime\":60}"),
                QueueHttpService.optionsBag(json("{\"queue\":\"o\",\"options\":{\"leaseTime\":60},\"ttl\":5}")));
        assertEquals(json("{\"leaseTime\":60}"),
                QueueHttpService.optionsBag(json("{\"queue\":\"o\",\"leaseTime\":60,\"mode\":\"merge\"}")));
        assertEquals(json("{\"retryLimit\":7}"), QueueHttpService.optionsBag(
                json("{\"queue\":\"o\",\"options\":{\"replace\":true,\"retryLimit\":7}}")), "replace is mode's alone");
    }

    @Test
    void topLevelLabelsFoldInOnlyWhenNonEmptyAndNotAlreadyInTheBag() throws Exception {
        assertEquals(json("{\"namespace\":\"billing\",\"task\":\"ingest\"}"), QueueHttpService.optionsBag(
                json("{\"queue\":\"o\",\"namespace\":\"billing\",\"task\":\"ingest\",\"options\":{}}")));
        assertEquals(json("{}"), QueueHttpService.optionsBag(json("{\"queue\":\"o\",\"namespace\":\"\",\"options\":{}}")));
        assertEquals(json("{\"namespace\":null}"), QueueHttpService.optionsBag(
                json("{\"queue\":\"o\",\"namespace\":\"billing\",\"options\":{\"namespace\":null}}")));
    }

    @Test
    void discoveryEntriesAreValidatedAndLimitsClamped() throws Exception {
        List<QueueAdminService.ChangedEntry> entries = QueueHttpService.changedEntries(json(
                "{\"entries\":[{\"queue\":\"a\"},{\"queue\":\"b\",\"since\":\"2026-01-01T00:00:00Z\",\"after\":\"t|1|x\","
                        + "\"limit\":0},{\"queue\":\"c\",\"limit\":5000}]}"));
        assertEquals(new QueueAdminService.ChangedEntry("a", null, null, 1000), entries.get(0));
        assertEquals(new QueueAdminService.ChangedEntry("b", "2026-01-01T00:00:00Z", "t|1|x", 1), entries.get(1));
        assertEquals(1000, entries.get(2).limit());
        assertEquals(List.of(), QueueHttpService.changedEntries(json("{}")));
        for (String bad : List.of("[]", "{\"entries\":5}", "{\"entries\":[{\"queue\":\"\"}]}",
                "{\"entries\":[{\"queue\":1}]}", "{\"entries\":[{\"queue\":\"a\",\"since\":5}]}",
                "{\"entries\":[{\"queue\":\"a\",\"limit\":1.5}]}")) {
            assertThrows(BadRequestException.class, () -> QueueHttpService.changedEntries(json(bad)), bad);
        }
        StringBuilder many = new StringBuilder("{\"entries\":[");
        for (int i = 0; i < 65; i++) {
            many.append(i == 0 ? "" : ",").append("{\"queue\":\"q\"}");
        }
        BadRequestException e = assertThrows(BadRequestException.class,
                () -> QueueHttpService.changedEntries(json(many + "]}")));
        assertEquals("bad body: 65 entries exceeds the 64-entry limit", e.getMessage());
    }
}
