package io.queen.broker;

import io.helidon.common.buffers.DataReader;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.lang.reflect.Field;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayDeque;
import java.util.List;
import java.util.Queue;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * The socket reader that ships is the one build/ReaderNodePatch.java rewrote (broker/DESIGN.md,
 * "Memory and start-up"): a chunk the reader has moved past no longer links to the next one, and
 * reads across chunks still return every byte in order. An integration test because only the
 * package phase patches target/lib, and failsafe puts that copy on the class path (broker/pom.xml).
 * Every other integration test serves its HTTP through the same patched reader.
 */
class SocketReaderPatchIT {
    @BeforeAll
    static void patchedOnlyWhereTheBuildCanPatch() {
        // The pom's profile patches on JDK 24+ only (the class-file API); the tests run on the same JDK.
        assumeTrue(Runtime.version().feature() >= 24, "built on JDK " + Runtime.version().feature());
    }

    @Test
    void theReaderComesFromThePatchedJarInTargetLib() throws Exception {
        Path jar = Path.of(DataReader.class.getProtectionDomain().getCodeSource().getLocation().toURI());
        assertEquals("lib", jar.getParent().getFileName().toString(), "DataReader loaded from " + jar);
        assertNotNull(DataReader.class.getClassLoader().getResource("META-INF/queen-reader-node-patch"),
                "the patch marker is on the class path");
    }

    @Test
    void aConsumedChunkForgetsItsSuccessorAndNoByteIsLost() throws Exception {
        Queue<byte[]> socket = new ArrayDeque<>();
        for (String chunk : List.of("ab", "cd", "ef")) {
            socket.add(chunk.getBytes(StandardCharsets.US_ASCII));
        }
        DataReader reader = DataReader.create(socket::poll);

        StringBuilder read = new StringBuilder();
        read.append((char) reader.read());
        Object first = field(DataReader.class, "head").get(reader);
        Field next = field(first.getClass(), "next");
        read.append((char) reader.read());
        read.append((char) reader.read()); // crosses into "cd": the head moves past "ab"

        Object second = field(DataReader.class, "head").get(reader);
        assertTrue(first != second, "the head moved to the next chunk");
        assertNull(next.get(first), "the chunk behind the head still links to the next one");

        while (read.length() < 6) {
            read.append((char) reader.read());
        }
        assertEquals("abcdef", read.toString());
        assertNull(next.get(second), "the second chunk was unlinked too");
    }

    private static Field field(Class<?> owner, String name) throws NoSuchFieldException {
        Field field = owner.getDeclaredField(name);
        field.setAccessible(true);
        return field;
    }
}
