package io.queen.broker.engine.segment;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.queen.broker.support.CapturedLog;
import org.junit.jupiter.api.Test;

import javax.crypto.Cipher;
import javax.crypto.spec.GCMParameterSpec;
import javax.crypto.spec.SecretKeySpec;
import java.nio.charset.StandardCharsets;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Base64;
import java.util.HexFormat;
import java.util.List;
import java.util.logging.Level;
import java.util.logging.LogRecord;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

class PayloadCipherTest {
    private static final ObjectMapper MAPPER = new ObjectMapper();
    private static final SecureRandom RANDOM = new SecureRandom();

    private static String randomHexKey() {
        byte[] key = new byte[32];
        RANDOM.nextBytes(key);
        return HexFormat.of().formatHex(key);
    }

    private static byte[] utf8(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    @Test
    void roundTrip() {
        PayloadCipher cipher = PayloadCipher.fromHexKey(randomHexKey());
        assertTrue(cipher.isEnabled());
        for (String plain : List.of("{\"a\":1,\"s\":\"héllo 日本\"}", "null", "\"x\"", "", "[" + "1,".repeat(5000) + "1]")) {
            byte[] envelope = cipher.encrypt(utf8(plain));
            assertTrue(PayloadCipher.looksLikeEnvelope(envelope));
            assertArrayEquals(utf8(plain), cipher.decryptIfEnvelope(envelope), plain);
        }
    }

    @Test
    void envelopeShape() throws Exception {
        PayloadCipher cipher = PayloadCipher.fromHexKey(randomHexKey());
        byte[] plain = utf8("{\"order\":42}");
        JsonNode env = MAPPER.readTree(cipher.encrypt(plain));
        assertTrue(env.isObject());
        assertEquals(List.of("encrypted", "iv", "authTag"), fieldNames(env));
        env.forEach(v -> assertTrue(v.isTextual()));
        Base64.Decoder b64 = Base64.getDecoder();
        assertEquals(16, b64.decode(env.get("iv").asText()).length);
        assertEquals(16, b64.decode(env.get("authTag").asText()).length);
        // GCM is a stream mode: ciphertext is as long as the plaintext, tag stored apart.
        assertEquals(plain.length, b64.decode(env.get("encrypted").asText()).length);
        // A fresh IV per call.
        assertFalse(Arrays.equals(cipher.encrypt(plain), cipher.encrypt(plain)));
    }

    @Test
    void onlyFirstTwelveIvBytesAreTheNonce() throws Exception {
        // Built independently with the JCE, the way the C++/OpenSSL broker does it.
        String hexKey = randomHexKey();
        byte[] iv = new byte[16];
        RANDOM.nextBytes(iv);
        Cipher jce = Cipher.getInstance("AES/GCM/NoPadding");
        jce.init(Cipher.ENCRYPT_MODE, new SecretKeySpec(HexFormat.of().parseHex(hexKey), "AES"),
                new GCMParameterSpec(128, Arrays.copyOf(iv, 12)));
        byte[] sealed = jce.doFinal(utf8("{\"legacy\":true}"));
        Base64.Encoder b64 = Base64.getEncoder();
        String envelope = "{ \"iv\" : \"" + b64.encodeToString(iv) + "\", \"authTag\":\""
                + b64.encodeToString(Arrays.copyOfRange(sealed, sealed.length - 16, sealed.length))
                + "\", \"encrypted\":\"" + b64.encodeToString(Arrays.copyOf(sealed, sealed.length - 16)) + "\"}";
        assertArrayEquals(utf8("{\"legacy\":true}"),
                PayloadCipher.fromHexKey(hexKey.toUpperCase()).decryptIfEnvelope(utf8(envelope)));
    }

    @Test
    void wrongKeyOrTamperingLeavesEnvelopeUnchanged() throws Exception {
        PayloadCipher cipher = PayloadCipher.fromHexKey(randomHexKey());
        byte[] envelope = cipher.encrypt(utf8("{\"secret\":1}"));
        assertSame(envelope, PayloadCipher.fromHexKey(randomHexKey()).decryptIfEnvelope(envelope));

        JsonNode env = MAPPER.readTree(envelope);
        byte[] ct = Base64.getDecoder().decode(env.get("encrypted").asText());
        ct[0] ^= 1;
        byte[] tampered = utf8("{\"encrypted\":\"" + Base64.getEncoder().encodeToString(ct) + "\",\"iv\":\""
                + env.get("iv").asText() + "\",\"authTag\":\"" + env.get("authTag").asText() + "\"}");
        assertSame(tampered, cipher.decryptIfEnvelope(tampered));

        byte[] badBase64 = utf8("{\"encrypted\":\"!!\",\"iv\":\"AAAA\",\"authTag\":\"AAAA\"}");
        assertSame(badBase64, cipher.decryptIfEnvelope(badBase64));
    }

    @Test
    void invalidKeyDisablesWithOneWarning() {
        try (CapturedLog log = CapturedLog.of(PayloadCipher.class)) {
            List<LogRecord> records = log.records();
            for (String bad : List.of("abc", "0".repeat(63), "0".repeat(65), "zz" + "0".repeat(62))) {
                records.clear();
                PayloadCipher cipher = PayloadCipher.fromHexKey(bad);
                assertFalse(cipher.isEnabled(), bad);
                assertEquals(1, records.size(), bad);
                assertEquals(Level.WARNING, records.getFirst().getLevel());
                byte[] plain = utf8("{\"a\":1}");
                assertSame(plain, cipher.encrypt(plain));
            }
            records.clear();
            assertFalse(PayloadCipher.fromHexKey(null).isEnabled());
            assertFalse(PayloadCipher.fromHexKey("  ").isEnabled());
            assertEquals(0, records.size(), "absent key is not worth a warning");
        }
    }

    @Test
    void disabledCipherServesEnvelopeAsIs() {
        byte[] envelope = PayloadCipher.fromHexKey(randomHexKey()).encrypt(utf8("1"));
        assertSame(envelope, PayloadCipher.disabled().decryptIfEnvelope(envelope));
    }

    @Test
    void nonEnvelopesPassThrough() {
        PayloadCipher cipher = PayloadCipher.fromHexKey(randomHexKey());
        for (String s : List.of("", "null", "42", "\"s\"", "[1]", "{}", "{\"a\":1}", "not json",
                "{\"encrypted\":\"a\",\"iv\":\"b\"}",
                "{\"encrypted\":\"a\",\"iv\":\"b\",\"authTag\":\"c\",\"x\":1}",
                "{\"encrypted\":1,\"iv\":\"b\",\"authTag\":\"c\"}",
                "{\"encrypted\":\"a\",\"iv\":\"b\",\"authTag\":\"c\",\"iv\":\"d\"}",
                "{\"encrypted\":\"a\",\"iv\":\"b\",\"authTag\":\"c\"} trailing",
                "[{\"encrypted\":\"a\",\"iv\":\"b\",\"authTag\":\"c\"}]")) {
            byte[] payload = utf8(s);
            assertFalse(PayloadCipher.looksLikeEnvelope(payload), s);
            assertSame(payload, cipher.decryptIfEnvelope(payload), s);
        }
        assertTrue(PayloadCipher.looksLikeEnvelope(utf8(" {\"authTag\":\"c\",\"iv\":\"b\",\"encrypted\":\"a\"} ")));
    }

    private static List<String> fieldNames(JsonNode node) {
        List<String> names = new ArrayList<>();
        node.fieldNames().forEachRemaining(names::add);
        return names;
    }
}
