package io.queen.broker.http;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
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
            throw new BadRequestException("bad body: " + e.getMessage());
        }
        if (body == null || body.isNull()) {
            return null;
        }
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
            return MAPPER.readTree(bytes);
        } catch (JsonProcessingException e) {
            throw new BadRequestException("invalid JSON: " + e.getOriginalMessage());
        } catch (IOException e) {
            throw new BadRequestException("cannot read request body: " + e.getMessage());
        }
    }

    /**
     * The request body's bytes. With a Content-Length (which the server has already checked against
     * the body size limit, QUEEN_MAX_BODY_BYTES) they are read straight into one array of that size;
     * readAllBytes collects 16 KB chunks and copies them again, a second pass over every 100 KB push.
     */
    public static byte[] rawBody(ServerRequest req) {
        try (InputStream in = req.content().inputStream()) {
            OptionalLong declared = req.headers().contentLength();
            if (declared.isEmpty() || declared.getAsLong() > Integer.MAX_VALUE - 8) {
                return in.readAllBytes();
            }
            int length = (int) declared.getAsLong();
            // readNBytes(int) would chunk and copy as well; this overload fills the given array.
            byte[] bytes = new byte[length];
            int read = in.readNBytes(bytes, 0, length);
            if (read < length) {
                throw new BadRequestException("cannot read request body: " + read + " of "
                        + length + " declared bytes arrived");
            }
            return bytes;
        } catch (IOException e) {
            throw new BadRequestException("cannot read request body: " + e.getMessage());
        }
    }
}
