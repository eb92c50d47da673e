package io.queen.broker.http;

import io.helidon.http.Status;
import io.helidon.webserver.http.Filter;
import io.helidon.webserver.http.FilterChain;
import io.helidon.webserver.http.RoutingRequest;
import io.helidon.webserver.http.RoutingResponse;

import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;

/**
 * Before any route: the path and the query string, once percent-decoded, must be UTF-8 text that
 * can be stored (see {@link Names}). Helidon decodes malformed UTF-8 to replacement characters and
 * passes NUL through; either would reach a handler, and NUL would reach PostgreSQL. A request that
 * fails is a 400 naming the part of the URL, before any route runs.
 */
public final class RequestTextFilter implements Filter {
    @Override
    public void filter(FilterChain chain, RoutingRequest req, RoutingResponse res) {
        String problem = problem("path", req.path().rawPath());
        if (problem == null) {
            problem = problem("query string", req.query().rawValue());
        }
        if (problem != null) {
            ErrorMapping.send(res, Status.BAD_REQUEST_400, "bad_request", problem, null);
            return;
        }
        chain.proceed();
    }

    static String problem(String part, String raw) {
        if (raw == null || raw.isEmpty() || (raw.indexOf('%') < 0 && Names.storable(raw) == null)) {
            return null;
        }
        ByteArrayOutputStream bytes = new ByteArrayOutputStream(raw.length());
        for (int i = 0; i < raw.length(); i++) {
            char c = raw.charAt(i);
            if (c == '%' && i + 2 < raw.length()
                    && Character.digit(raw.charAt(i + 1), 16) >= 0 && Character.digit(raw.charAt(i + 2), 16) >= 0) {
                bytes.write(Character.digit(raw.charAt(i + 1), 16) * 16 + Character.digit(raw.charAt(i + 2), 16));
                i += 2;
            } else if (c < 0x80) {
                bytes.write(c);
            } else {
                byte[] b = String.valueOf(c).getBytes(StandardCharsets.UTF_8);
                bytes.write(b, 0, b.length);
            }
        }
        String decoded;
        try {
            decoded = StandardCharsets.UTF_8.newDecoder()
                    .onMalformedInput(CodingErrorAction.REPORT)
                    .onUnmappableCharacter(CodingErrorAction.REPORT)
                    .decode(ByteBuffer.wrap(bytes.toByteArray()))
                    .toString();
        } catch (CharacterCodingException e) {
            return "invalid " + part + ": its percent-encoded bytes are not valid UTF-8";
        }
        String why = Names.storable(decoded);
        return why == null ? null : "invalid " + part + ": " + why;
    }
}
