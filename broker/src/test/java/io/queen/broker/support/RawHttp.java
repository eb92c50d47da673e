package io.queen.broker.support;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;

/**
 * HTTP/1.1 over a bare socket, for requests a well-behaved client library refuses to send (bytes
 * that are not valid in a URL, broken chunk framing, a request line with tabs). One request per
 * connection; the answer is read until its framing ends or the server closes the connection.
 */
public final class RawHttp {
    /** The server's answer; {@code status} is -1 when the connection ended before a status line. */
    public record Answer(int status, Map<String, String> headers, String body, boolean closed) {
        public boolean answered() {
            return status > 0;
        }
    }

    private final int port;

    public RawHttp(int port) {
        this.port = port;
    }

    /** A request with a Content-Length body (or none when {@code body} is null). */
    public Answer send(String method, String target, Map<String, String> headers, byte[] body) {
        StringBuilder head = new StringBuilder(method).append(' ').append(target).append(" HTTP/1.1\r\n")
                .append("Host: 127.0.0.1\r\nConnection: close\r\n");
        headers.forEach((k, v) -> head.append(k).append(": ").append(v).append("\r\n"));
        if (body != null) {
            head.append("Content-Length: ").append(body.length).append("\r\n");
        }
        head.append("\r\n");
        ByteArrayOutputStream all = new ByteArrayOutputStream();
        all.writeBytes(head.toString().getBytes(StandardCharsets.ISO_8859_1));
        if (body != null) {
            all.writeBytes(body);
        }
        return exchange(all.toByteArray());
    }

    /** Exactly these bytes, then the answer. */
    public Answer exchange(byte[] request) {
        try (Socket s = new Socket()) {
            s.connect(new InetSocketAddress("127.0.0.1", port), 5_000);
            s.setSoTimeout(30_000);
            OutputStream out = s.getOutputStream();
            try {
                out.write(request);
                out.flush();
            } catch (IOException e) {
                // The server may answer and close before taking the whole request (a 413): read it.
            }
            return read(s.getInputStream());
        } catch (IOException e) {
            return new Answer(-1, Map.of(), e.toString(), true);
        }
    }

    /**
     * Declares {@code declared} body bytes and sends them in pieces, reading the answer as soon as
     * the server gives one: a client that is still sending when the broker refuses the body.
     */
    public Answer streamLargeBody(String target, long declared, boolean stopWhenAnswered) {
        try (Socket s = new Socket()) {
            s.connect(new InetSocketAddress("127.0.0.1", port), 5_000);
            s.setSoTimeout(30_000);
            OutputStream out = s.getOutputStream();
            out.write(("POST " + target + " HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                    + "Content-Length: " + declared + "\r\n\r\n").getBytes(StandardCharsets.ISO_8859_1));
            byte[] chunk = new byte[64 * 1024];
            java.util.Arrays.fill(chunk, (byte) ' ');
            long sent = 0;
            InputStream in = s.getInputStream();
            try {
                while (sent < declared) {
                    if (stopWhenAnswered && in.available() > 0) {
                        break;
                    }
                    int n = (int) Math.min(chunk.length, declared - sent);
                    out.write(chunk, 0, n);
                    sent += n;
                }
            } catch (IOException e) {
                // Refused mid-body: the answer may still be readable.
            }
            return read(in);
        } catch (IOException e) {
            return new Answer(-1, Map.of(), e.toString(), true);
        }
    }

    private static Answer read(InputStream in) throws IOException {
        ByteArrayOutputStream raw = new ByteArrayOutputStream();
        byte[] buf = new byte[8192];
        int headEnd = -1;
        try {
            while (headEnd < 0) {
                int n = in.read(buf);
                if (n < 0) {
                    break;
                }
                raw.write(buf, 0, n);
                headEnd = indexOf(raw.toByteArray(), "\r\n\r\n".getBytes(StandardCharsets.ISO_8859_1));
            }
        } catch (SocketTimeoutException | java.net.SocketException e) {
            // Fall through with what arrived.
        }
        byte[] bytes = raw.toByteArray();
        if (headEnd < 0) {
            return new Answer(-1, Map.of(), new String(bytes, StandardCharsets.ISO_8859_1), true);
        }
        String head = new String(bytes, 0, headEnd, StandardCharsets.ISO_8859_1);
        String[] lines = head.split("\r\n");
        int status = Integer.parseInt(lines[0].split(" ")[1]);
        Map<String, String> headers = new LinkedHashMap<>();
        for (int i = 1; i < lines.length; i++) {
            int colon = lines[i].indexOf(':');
            if (colon > 0) {
                headers.put(lines[i].substring(0, colon).trim().toLowerCase(Locale.ROOT), lines[i].substring(colon + 1).trim());
            }
        }
        ByteArrayOutputStream body = new ByteArrayOutputStream();
        body.write(bytes, headEnd + 4, bytes.length - headEnd - 4);
        String length = headers.get("content-length");
        boolean chunked = "chunked".equalsIgnoreCase(headers.get("transfer-encoding"));
        try {
            while (length == null || body.size() < Long.parseLong(length)) {
                if (chunked && endsWith(body.toByteArray(), "0\r\n\r\n")) {
                    break;
                }
                int n = in.read(buf);
                if (n < 0) {
                    break;
                }
                body.write(buf, 0, n);
            }
        } catch (SocketTimeoutException | java.net.SocketException e) {
            // Keep what arrived.
        }
        String text = chunked ? dechunk(body.toByteArray()) : body.toString(StandardCharsets.UTF_8);
        return new Answer(status, headers, text, true);
    }

    private static String dechunk(byte[] bytes) {
        StringBuilder out = new StringBuilder();
        String s = new String(bytes, StandardCharsets.ISO_8859_1);
        int pos = 0;
        while (pos < s.length()) {
            int eol = s.indexOf("\r\n", pos);
            if (eol < 0) {
                break;
            }
            int size = Integer.parseInt(s.substring(pos, eol).split(";")[0].trim(), 16);
            if (size == 0) {
                break;
            }
            int start = eol + 2;
            int end = Math.min(s.length(), start + size);
            out.append(s, start, end);
            pos = end + 2;
        }
        return new String(out.toString().getBytes(StandardCharsets.ISO_8859_1), StandardCharsets.UTF_8);
    }

    private static boolean endsWith(byte[] data, String suffix) {
        byte[] s = suffix.getBytes(StandardCharsets.ISO_8859_1);
        if (data.length < s.length) {
            return false;
        }
        for (int i = 0; i < s.length; i++) {
            if (data[data.length - s.length + i] != s[i]) {
                return false;
            }
        }
        return true;
    }

    private static int indexOf(byte[] data, byte[] needle) {
        outer:
        for (int i = 0; i + needle.length <= data.length; i++) {
            for (int j = 0; j < needle.length; j++) {
                if (data[i + j] != needle[j]) {
                    continue outer;
                }
            }
            return i;
        }
        return -1;
    }
}
