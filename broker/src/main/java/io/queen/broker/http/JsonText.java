package io.queen.broker.http;

import io.helidon.http.Status;
import io.helidon.webserver.http.ServerResponse;

import java.nio.charset.StandardCharsets;

/** Serves a JSON document a SQL function already built, byte for byte, without re-parsing it. */
final class JsonText {
    private JsonText() {
    }

    static void send(ServerResponse res, String json) {
        Json.sendBytes(res, Status.OK_200, json.getBytes(StandardCharsets.UTF_8));
    }
}
