package io.queen.broker.engine.segment;

import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.UUID;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class FrameTest {
    private static final UUID ID = new UUID(1, 2);

    @Test
    void requiredFields() {
        assertThrows(NullPointerException.class, () -> new Frame(null, null, "t", null, new byte[0], false));
        assertThrows(NullPointerException.class, () -> new Frame(ID, null, null, null, new byte[0], false));
        assertThrows(NullPointerException.class, () -> new Frame(ID, null, "t", null, null, false));
    }

    @Test
    void stringLimitsAreInUtf8Bytes() {
        String max = "a".repeat(65535);
        Frame f = new Frame(ID, null, max, max, new byte[0], false);
        assertEquals(List.of(f), SegmentCodec.decode(SegmentCodec.encode(List.of(f), 1)));

        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> new Frame(ID, null, "a".repeat(65536), null, new byte[0], false));
        assertTrue(e.getMessage().contains("65535"), e.getMessage());
        // 21846 three-byte chars = 65538 bytes although only 21846 chars.
        assertThrows(IllegalArgumentException.class,
                () -> new Frame(ID, null, "日".repeat(21846), null, new byte[0], false));
        assertThrows(IllegalArgumentException.class,
                () -> new Frame(ID, null, "t", "😀".repeat(16384), new byte[0], false));
        new Frame(ID, null, "😀".repeat(16383) + "abc", null, new byte[0], false); // 65535 bytes
    }

    @Test
    void utf8LengthMatchesEncoder() {
        for (String s : List.of("", "abc", "é", "日本", "😀", "\uD800", "a\uDC00b", "x😀\uD83Dy")) {
            assertEquals(s.getBytes(java.nio.charset.StandardCharsets.UTF_8).length, Frame.utf8Length(s), s);
        }
    }

    @Test
    void payloadComparedByContent() {
        Frame a = new Frame(ID, null, "t", null, new byte[] {'1'}, false);
        Frame b = new Frame(ID, null, "t", null, new byte[] {'1'}, false);
        assertEquals(a, b);
        assertEquals(a.hashCode(), b.hashCode());
        assertNotEquals(a, new Frame(ID, null, "t", null, new byte[] {'2'}, false));
    }
}
