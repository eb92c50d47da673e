package io.queen.broker.http;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.NullNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.helidon.http.HeaderValues;
import io.helidon.http.Status;
import io.helidon.webserver.http.ServerRequest;
import io.helidon.webserver.http.ServerResponse;

import java.io.IOException;
import java.io.InputStream;
import java.util.OptionalLong;

/** JSON in and out of Helidon handlers with one shared mapper. Unknown fields are ignored, as upstream. */
public final class Json {
    public static final ObjectMapper MAPPER = new ObjectMapper()
            .configure(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES, false);

    private Json() {
    }

    public static ObjectNode object() {
        return MAPPER.createObjectNode();
    }

    public static void send(ServerResponse res, Status status, Object body) {
        byte[] bytes;
        try {
            bytes = MAPPER.writeValueAsBytes(body);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException("response not serialisable", e);
        }
        sendBytes(res, status, bytes);
    }

    /** A body already written as JSON (the hot routes write theirs by hand, see {@link JsonBytes}). */
    static void sendBytes(ServerResponse res, Status status, byte[] json) {
        res.status(status);
        res.header(HeaderValues.CONTENT_TYPE_JSON);
        res.send(json);
    }

    public static void error(ServerResponse res, Status status, String message) {
        send(res, status, object().put("error", message));
    }

    /**
     * JSON the broker stored (a payload, a dead letter's snapshot, trace data) as a tree to serve:
     * none or empty is JSON null, and text that is not JSON is served as null rather than failing.
     */
    static JsonNode storedOrNull(byte[] json) {
        if (json == null || json.length == 0) {
            return NullNode.getInstance();
        }
        try {
            JsonNode node = MAPPER.readTree(json);
            return node == null || node.isMissingNode() ? NullNode.getInstance() : node;
        } catch (IOException e) {
            return NullNode.getInstance();
        }
    }

    /** A JSON value as compact UTF-8 bytes, as stored in a frame. */
    public static byte[] bytes(JsonNode value) {
        try {
            return MAPPER.writeValueAsBytes(value);
        } catch (JsonProcessingException e) {
            throw new BadRequestException("unserialisable JSON value: " + e.getOriginalMessage());
        }
    }

    /**
     * The body as a JSON object, or null when it is empty, blank or JSON null (routes where a body
     * is optional); anything else that is not an object is a 400.
     */
    public static JsonNode optionalObject(ServerRequest req) {
        byte[] bytes = rawBody(req);
        if (new String(bytes, java.nio.charset.StandardCharsets.UTF_8).isBlank()) {
            return null;
        }
        JsonNode body;
        try {
            body = MAPPER.readTree(bytes);
        } catch (JsonProcessingException e) {
            throw new BadRequestException("bad body: invalid JSON: " + e.getOriginalMessage());
        } catch (IOException e) {
            throw new BadRequestException("bad body: the request body could not be parsed as JSON");
        }
        if (body == null || body.isNull()) {
            return null;
        }
        requireStorable(body);
        if (!body.isObject()) {
            throw new BadRequestException("bad body: a JSON object is required");
        }
        return body;
    }

    /** The request body as a JSON tree; a body that is not JSON is a 400. */
    public static JsonNode body(ServerRequest req) {
        byte[] bytes = rawBody(req);
        try {
            if (bytes.length == 0) {
                throw new BadRequestException("request body is empty; a JSON object is required");
            }
            JsonNode tree = MAPPER.readTree(bytes);
            requireStorable(tree);
            return tree;
        } catch (JsonProcessingException e) {
            throw new BadRequestException("invalid JSON: " + e.getOriginalMessage());
        } catch (IOException e) {
            throw new BadRequestException("cannot read request body as JSON");
        }
    }

    /**
     * Every string and member name of a body must be storable text ({@link Names#storable}), except
     * inside a {@code payload}, which is stored as the bytes sent and never as PostgreSQL text.
     */
    static void requireStorable(JsonNode body) {
        Unstorable bad = unstorable(body);
        if (bad != null) {
            String at = bad.path().isEmpty() ? "of the body" : "at " + bad.path().replaceFirst("^\\.", "");
            throw new BadRequestException("invalid value " + at + ": " + bad.why());
        }
    }

    /** Where in a body the first unstorable text is ({@code items[2].queue}), and why. */
    private record Unstorable(String path, String why) {
        Unstorable under(String step) {
            return new Unstorable(step + path, why);
        }
    }

    /** Null when storable; the path is built only on the way back up, so a good body costs nothing. */
    private static Unstorable unstorable(JsonNode node) {
        if (node.isTextual()) {
            String why = Names.storable(node.textValue());
            return why == null ? null : new Unstorable("", why);
        }
        if (node.isArray()) {
            for (int i = 0; i < node.size(); i++) {
                Unstorable bad = unstorable(node.get(i));
                if (bad != null) {
                    return bad.under("[" + i + "]");
                }
            }
        } else if (node.isObject()) {
            var fields = node.fields();
            while (fields.hasNext()) {
                var f = fields.next();
                String why = Names.storable(f.getKey());
                if (why != null) {
                    return new Unstorable("", "a member name " + why);
                }
                if (!f.getKey().equals("payload")) {
                    Unstorable bad = unstorable(f.getValue());
                    if (bad != null) {
                        return bad.under("." + f.getKey());
                    }
                }
            }
        }
        return null;
    }

    /** The refusal as a "bad body" one (routes whose contract prefixes body errors so), keeping its kind. */
    static BadRequestException asBadBody(BadRequestException e) {
        return e.getMessage().startsWith("bad body:") ? e : new BadRequestException("bad body: " + e.getMessage());
    }

    /**
     * The request body's bytes. With a Content-Length (which the server has already checked against
     * the body size limit, QUEEN_MAX_BODY_BYTES) they are read straight into one array of that size;
     * readAllBytes collects 16 KB chunks and copies them again, a second pass over every 100 KB push.
     * A body whose framing breaks while it is read (a chunk size that is not hex, a connection cut
     * short) is a {@link MalformedRequestException}; a body in UTF-16 or UTF-32 is refused, since
     * JSON bodies are UTF-8 and payloads are stored as the bytes sent.
     */
    public static byte[] rawBody(ServerRequest req) {
        byte[] bytes;
        try (InputStream in = req.content().inputStream()) {
            OptionalLong declared = req.headers().contentLength();
            if (declared.isEmpty() || declared.getAsLong() > Integer.MAX_VALUE - 8) {
                bytes = in.readAllBytes();
            } else {
                int length = (int) declared.getAsLong();
                // readNBytes(int) would chunk and copy as well; this overload fills the given array.
                bytes = new byte[length];
                int read = in.readNBytes(bytes, 0, length);
                if (read < length) {
                    throw new MalformedRequestException("bad body: " + read + " of " + length
                            + " declared bytes arrived");
                }
            }
        } catch (BadRequestException | io.helidon.http.HttpException | io.helidon.http.RequestException e) {
            throw e;
        } catch (IOException | RuntimeException e) {
            throw new MalformedRequestException("bad body: the request body could not be read"
                    + " (broken chunked framing or a connection cut short)");
        }
        requireUtf8Json(bytes);
        return bytes;
    }

    /**
     * JSON text starting with a byte-order mark or a NUL in its first four bytes is UTF-16 or UTF-32
     * (RFC 8259 requires JSON exchanged between systems to be UTF-8).
     */
    private static void requireUtf8Json(byte[] b) {
        boolean bom16 = b.length >= 2 && ((b[0] == (byte) 0xFE && b[1] == (byte) 0xFF)
                || (b[0] == (byte) 0xFF && b[1] == (byte) 0xFE));
        boolean nulAhead = false;
        for (int i = 0; i < Math.min(4, b.length); i++) {
            nulAhead |= b[i] == 0;
        }
        if (bom16 || nulAhead) {
            throw new BadRequestException("bad body: JSON bodies must be UTF-8 (this one looks like UTF-16 or UTF-32)");
        }
    }
}
