package io.queen.broker.warmup;

import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLSocket;
import javax.net.ssl.SSLSocketFactory;
import java.io.BufferedInputStream;
import java.io.BufferedOutputStream;
import java.io.ByteArrayOutputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.Locale;
import java.util.Queue;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;

/**
 * The warm-up's HTTP/1.1 client to the broker's own listener: keep-alive connections over a plain
 * or a TLS socket, one request at a time on each, answers framed by content-length or chunked.
 * The JDK's HttpClient did this before, but it loads some 280 classes of its own and, even for
 * http://, the default TLS context with the JDK's CA certificates parsed (some 370 classes more).
 * Classes stay loaded for the life of the process, so a warm-up of a few seconds cost a steady
 * broker about 5 MB of metaspace (broker/DESIGN.md, "Memory and start-up"). It is not a general
 * client: no redirects, proxies, 1xx answers or request bodies other than strings.
 */
final class LoopbackHttp implements AutoCloseable {
    static final int CONNECT_TIMEOUT_MS = 5_000;
    private static final int MAX_LINE = 8 * 1024;
    private static final int MAX_BODY = 64 * 1024 * 1024;

    /** An answer: its status and its body as UTF-8 (empty when it had none). */
    record Response(int status, String body) {
    }

    private final String host;
    private final int port;
    private final String hostHeader;
    private final SSLSocketFactory tls;
    private final int readTimeoutMs;
    private final Queue<Connection> idle = new ConcurrentLinkedQueue<>();
    private final Set<Connection> open = ConcurrentHashMap.newKeySet();

    /** {@code base} is {@code http://host:port} or {@code https://host:port}; {@code sslContext} only for https. */
    LoopbackHttp(URI base, SSLContext sslContext, int readTimeoutMs) {
        String h = base.getHost();
        this.host = h.startsWith("[") ? h.substring(1, h.length() - 1) : h;
        this.port = base.getPort();
        this.hostHeader = h + ":" + port;
        this.tls = "https".equals(base.getScheme()) ? sslContext.getSocketFactory() : null;
        this.readTimeoutMs = readTimeoutMs;
    }

    /**
     * Sends one request ({@code pathAndQuery} as it goes on the request line; a JSON {@code body}
     * or null) and reads its answer. A kept-alive connection the listener closed meanwhile is
     * noticed before any answer byte arrives; the request then goes once more on a new connection
     * (nothing was processed: the listener answers every request it reads).
     */
    Response send(String method, String pathAndQuery, String body, String authorization) throws IOException {
        Connection reused = idle.poll();
        if (reused != null) {
            try {
                return exchange(reused, method, pathAndQuery, body, authorization);
            } catch (StaleConnection e) {
                discard(reused);
            } catch (IOException | RuntimeException e) {
                discard(reused);
                throw e;
            }
        }
        Connection fresh = connect();
        try {
            return exchange(fresh, method, pathAndQuery, body, authorization);
        } catch (IOException | RuntimeException e) {
            discard(fresh);
            throw e;
        }
    }

    private Response exchange(Connection c, String method, String pathAndQuery, String body, String authorization)
            throws IOException {
        byte[] payload = body == null ? null : body.getBytes(StandardCharsets.UTF_8);
        StringBuilder head = new StringBuilder(256).append(method).append(' ').append(pathAndQuery)
                .append(" HTTP/1.1\r\nhost: ").append(hostHeader).append("\r\n");
        if (payload != null) {
            head.append("content-type: application/json\r\ncontent-length: ").append(payload.length).append("\r\n");
        }
        if (authorization != null) {
            head.append("authorization: ").append(authorization).append("\r\n");
        }
        head.append("\r\n");
        try {
            c.out.write(head.toString().getBytes(StandardCharsets.ISO_8859_1));
            if (payload != null) {
                c.out.write(payload);
            }
            c.out.flush();
        } catch (IOException e) {
            throw new StaleConnection("sending the request: " + e.getMessage()); // a reset or broken pipe
        }

        String statusLine = readLine(c.in, true);
        if (!statusLine.startsWith("HTTP/1.") || statusLine.length() < 12) {
            throw new IOException("not an HTTP/1.x answer: " + abbreviate(statusLine));
        }
        int status = parseInt(statusLine.substring(9, 12), statusLine);
        long length = -1;
        boolean chunked = false;
        boolean close = statusLine.startsWith("HTTP/1.0");
        for (String line = readLine(c.in, false); !line.isEmpty(); line = readLine(c.in, false)) {
            int colon = line.indexOf(':');
            if (colon <= 0) {
                throw new IOException("malformed header line: " + abbreviate(line));
            }
            String name = line.substring(0, colon).trim().toLowerCase(Locale.ROOT);
            String value = line.substring(colon + 1).trim();
            switch (name) {
                case "content-length" -> length = parseInt(value, line);
                case "transfer-encoding" -> chunked = value.toLowerCase(Locale.ROOT).contains("chunked");
                case "connection" -> close |= value.equalsIgnoreCase("close");
                default -> { }
            }
        }
        byte[] content;
        if (status == 204 || status == 304 || method.equals("HEAD")) {
            content = new byte[0];
        } else if (chunked) {
            content = readChunked(c.in);
        } else if (length >= 0) {
            content = readExactly(c.in, length);
        } else {
            content = readToEnd(c.in); // framed by the close itself
            close = true;
        }
        if (close) {
            discard(c);
        } else {
            idle.add(c);
        }
        return new Response(status, new String(content, StandardCharsets.UTF_8));
    }

    private Connection connect() throws IOException {
        Socket socket = new Socket();
        try {
            socket.connect(new InetSocketAddress(host, port), CONNECT_TIMEOUT_MS);
            socket.setTcpNoDelay(true);
            socket.setSoTimeout(readTimeoutMs);
            if (tls != null) {
                SSLSocket secure = (SSLSocket) tls.createSocket(socket, host, port, true);
                secure.startHandshake();
                socket = secure;
            }
            Connection c = new Connection(socket);
            open.add(c);
            return c;
        } catch (IOException | RuntimeException e) {
            socket.close();
            throw e;
        }
    }

    private void discard(Connection c) {
        open.remove(c);
        idle.remove(c);
        c.close();
    }

    /** Closes every connection, idle or not. */
    @Override
    public void close() {
        for (Connection c : open) {
            discard(c);
        }
    }

    private static byte[] readChunked(InputStream in) throws IOException {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        while (true) {
            String sizeLine = readLine(in, false);
            int semicolon = sizeLine.indexOf(';');
            String hex = (semicolon >= 0 ? sizeLine.substring(0, semicolon) : sizeLine).trim();
            long size;
            try {
                size = Long.parseLong(hex, 16);
            } catch (NumberFormatException e) {
                throw new IOException("malformed chunk size: " + abbreviate(sizeLine));
            }
            if (size == 0) {
                while (!readLine(in, false).isEmpty()) {
                    // trailers: none expected, none kept
                }
                return out.toByteArray();
            }
            if (size > MAX_BODY - out.size()) {
                throw new IOException("answer larger than " + MAX_BODY + " bytes");
            }
            out.write(readExactly(in, size));
            if (!readLine(in, false).isEmpty()) {
                throw new IOException("chunk not followed by CRLF");
            }
        }
    }

    private static byte[] readExactly(InputStream in, long length) throws IOException {
        if (length > MAX_BODY) {
            throw new IOException("answer larger than " + MAX_BODY + " bytes");
        }
        byte[] b = in.readNBytes((int) length);
        if (b.length < length) {
            throw new EOFException("answer ended after " + b.length + " of " + length + " bytes");
        }
        return b;
    }

    private static byte[] readToEnd(InputStream in) throws IOException {
        byte[] b = in.readNBytes(MAX_BODY + 1);
        if (b.length > MAX_BODY) {
            throw new IOException("answer larger than " + MAX_BODY + " bytes");
        }
        return b;
    }

    /**
     * One CRLF- (or LF-) terminated line in ISO-8859-1, without its terminator. {@code first}: the
     * status line, where an end of stream before any byte means the listener had closed the
     * connection while it was idle.
     */
    private static String readLine(InputStream in, boolean first) throws IOException {
        StringBuilder line = new StringBuilder(64);
        while (true) {
            int b = in.read();
            if (b < 0) {
                if (first && line.isEmpty()) {
                    throw new StaleConnection("the listener closed the connection unanswered");
                }
                throw new EOFException("answer ended inside a line");
            }
            if (b == '\n') {
                int end = line.length();
                if (end > 0 && line.charAt(end - 1) == '\r') {
                    line.setLength(end - 1);
                }
                return line.toString();
            }
            if (line.length() >= MAX_LINE) {
                throw new IOException("answer line longer than " + MAX_LINE + " bytes");
            }
            line.append((char) b);
        }
    }

    private static int parseInt(String digits, String line) throws IOException {
        try {
            return Integer.parseInt(digits.trim());
        } catch (NumberFormatException e) {
            throw new IOException("malformed number in: " + abbreviate(line));
        }
    }

    private static String abbreviate(String s) {
        return s.length() > 80 ? s.substring(0, 80) + "..." : s;
    }

    /** The connection failed before any byte of the answer: the request was not processed. */
    private static final class StaleConnection extends IOException {
        StaleConnection(String message) {
            super(message);
        }
    }

    private static final class Connection {
        final Socket socket;
        final InputStream in;
        final OutputStream out;

        Connection(Socket socket) throws IOException {
            this.socket = socket;
            this.in = new BufferedInputStream(socket.getInputStream(), 16 * 1024);
            this.out = new BufferedOutputStream(socket.getOutputStream(), 16 * 1024);
        }

        void close() {
            try {
                socket.close();
            } catch (IOException ignored) {
                // closing: nothing left to do with it
            }
        }
    }
}
