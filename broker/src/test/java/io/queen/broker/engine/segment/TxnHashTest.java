package io.queen.broker.engine.segment;

import org.junit.jupiter.api.Test;

import java.util.HexFormat;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

class TxnHashTest {

    // Canonical XXH3-128 vectors (seeded with 0), cross-checked against several independent implementations' test suites
    // (reference xxhash sanity vectors, PHP hash('xxh128'), Rust/Node bindings).
    @Test
    void knownAnswers() {
        assertEquals("99aa06d3014798d86001c324468d497f", TxnHash.hex(TxnHash.of("")));
        assertEquals("b5e9c1ad071b3e7fc779cfaa5e523818", TxnHash.hex(TxnHash.of("hello")));
        assertEquals("06b05ab6733a618578af5f94892f3950", TxnHash.hex(TxnHash.of("abc")));
        assertEquals("ddf7ff67be2b60f50f178df33653476f", TxnHash.hex(TxnHash.of("helloworld")));
        assertEquals("df8d09e93f874900a99b8775cc15b6c7", TxnHash.hex(TxnHash.of("hello world")));
    }

    @Test
    void sixteenBytesBigEndian() {
        byte[] h = TxnHash.of("hello");
        assertEquals(16, h.length);
        // High 64 bits first: the first byte of the canonical hex.
        assertEquals((byte) 0xb5, h[0]);
        assertEquals((byte) 0x18, h[15]);
    }

    @Test
    void concatKeepsOrder() {
        String unicode = "tx-é-日本-😀";
        byte[] all = TxnHash.concat(List.of("hello", "", unicode));
        assertEquals(48, all.length);
        assertEquals("b5e9c1ad071b3e7fc779cfaa5e523818" + "99aa06d3014798d86001c324468d497f"
                + TxnHash.hex(TxnHash.of(unicode)), HexFormat.of().formatHex(all));
        assertArrayEquals(new byte[0], TxnHash.concat(List.of()));
    }
}
