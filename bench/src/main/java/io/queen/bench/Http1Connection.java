package io.queen.bench;

import java.io.BufferedInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.Locale;

/**
 * One keep-alive HTTP/1.1 connection, used by one thread at a time: write a request, read the
 * whole response. The load generator shares the machine with the broker and PostgreSQL, so it must
 * cost little: java.net.http hands every request across a selector thread and an executor, which
 * on 2 cores took about a third of the CPU the broker itself used. Bodies are Content-Length or
 * chunked; anything else is refused.
 */
final class Http1Connection implements AutoCloseable {
    record Response(int status, byte[] body) {
    }

    private static final int MAX_HEADER_LINE = 16 * 1024;

    private final URI base;
    /** An {@code Authorization} header value sent with every request, or null (bench --auth). */
    private final String authorization;
    private Socket socket;
    private InputStream in;
    private OutputStream out;

    Http1Connection(URI base) {
        this(base, null);
    }

    Http1Connection(URI base, String authorization) {
        this.base = base;
        this.authorization = authorization;
    }

    /** Sends one request ({@code body} null: none) and reads the response; {@code timeoutMs} bounds each read. */
    Response exchange(String method, String pathAndQuery, byte[] body, int timeoutMs) throws IOException {
        if (socket == null) {
            connect();
        }
        try {
            socket.setSoTimeout(timeoutMs);
            StringBuilder head = new StringBuilder(160)
                    .append(method).append(' ').append(pathAndQuery).append(" HTTP/1.1\r\n")
                    .append("Host: ").append(base.getHost()).append(':').append(base.getPort()).append("\r\n");
            if (authorization != null) {
                head.append("Authorization: ").append(authorization).append("\r\n");
            }
            if (body != null) {
                head.append("Content-Type: application/json\r\nContent-Length: ").append(body.length).append("\r\n");
            }
            head.append("\r\n");
            out.write(head.toString().getBytes(StandardCharsets.US_ASCII));
            if (body != null) {
                out.write(body);
            }
            out.flush();
            return readResponse(method);
        } catch (IOException | RuntimeException e) {
            close(); // The stream's position is unknown now: the next request opens a new connection.
            throw e;
        }
    }

    private void connect() throws IOException {
        Socket s = new Socket();
        s.setTcpNoDelay(true);
        s.connect(new InetSocketAddress(base.getHost(), base.getPort()), 5_000);
        socket = s;
        in = new BufferedInputStream(s.getInputStream(), 64 * 1024);
        out = new java.io.BufferedOutputStream(s.getOutputStream(), 64 * 1024);
    }

    private Response readResponse(String method) throws IOException {
        String statusLine = readLine();
        if (!statusLine.startsWith("HTTP/1.1 ") && !statusLine.startsWith("HTTP/1.0 ")) {
            throw new IOException("not an HTTP/1.x response: " + statusLine);
        }
        int status = Integer.parseInt(statusLine.substring(9, 12));
        long length = -1;
        boolean chunked = false;
        boolean closeAfter = statusLine.startsWith("HTTP/1.0");
        for (String line; !(line = readLine()).isEmpty(); ) {
            int colon = line.indexOf(':');
            if (colon < 0) {
                continue;
            }
            String name = line.substring(0, colon).trim().toLowerCase(Locale.ROOT);
            String value = line.substring(colon + 1).trim();
            switch (name) {
                case "content-length" -> length = Long.parseLong(value);
                case "transfer-encoding" -> chunked = value.toLowerCase(Locale.ROOT).contains("chunked");
                case "connection" -> closeAfter = value.equalsIgnoreCase("close");
                default -> { }
            }
        }
        byte[] body;
        if (status == 204 || status == 304 || method.equals("HEAD") || (status >= 100 && status < 200)) {
            body = new byte[0];
        } else if (chunked) {
            body = readChunked();
        } else if (length >= 0) {
            body = in.readNBytes((int) length);
            if (body.length != length) {
                throw new IOException("connection closed after " + body.length + " of " + length + " body bytes");
            }
        } else {
            throw new IOException("response " + status + " has neither Content-Length nor chunked encoding");
        }
        if (closeAfter) {
            close();
        }
        return new Response(status, body);
    }

    private byte[] readChunked() throws IOException {
        ByteArrayOutputStream body = new ByteArrayOutputStream();
        while (true) {
            String sizeLine = readLine();
            int semicolon = sizeLine.indexOf(';');
            int size = Integer.parseInt((semicolon < 0 ? sizeLine : sizeLine.substring(0, semicolon)).trim(), 16);
            if (size == 0) {
                while (!readLine().isEmpty()) {
                    // trailers
                }
                return body.toByteArray();
            }
            byte[] chunk = in.readNBytes(size);
            if (chunk.length != size) {
                throw new IOException("connection closed inside a chunk");
            }
            body.write(chunk);
            readLine(); // the CRLF after the chunk
        }
    }

    private String readLine() throws IOException {
        StringBuilder sb = new StringBuilder(64);
        while (true) {
            int b = in.read();
            if (b < 0) {
                throw new IOException("connection closed by the broker");
            }
            if (b == '\n') {
                int n = sb.length();
                return n > 0 && sb.charAt(n - 1) == '\r' ? sb.substring(0, n - 1) : sb.toString();
            }
            if (sb.length() >= MAX_HEADER_LINE) {
                throw new IOException("response header line longer than " + MAX_HEADER_LINE + " bytes");
            }
            sb.append((char) b);
        }
    }

    @Override
    public void close() {
        if (socket != null) {
            try {
                socket.close();
            } catch (IOException ignored) {
                // Closing a broken connection.
            }
        }
        socket = null;
        in = null;
        out = null;
    }
}
