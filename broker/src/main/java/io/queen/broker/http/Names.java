package io.queen.broker.http;

import io.helidon.webserver.http.ServerRequest;

import java.nio.charset.StandardCharsets;
import java.util.UUID;
import java.util.regex.Pattern;

/**
 * The one place that says what a name a client gives the broker may be: a queue, a partition, a
 * consumer group, a namespace or task, a transaction id, a trace name, a lease id, a worker or host
 * filter. Every route (push, pop, configure, the transaction route, the admin routes) takes names
 * through here, so a name PostgreSQL would refuse is a 400 naming the field before anything is
 * written, never a database error.
 *
 * <p>Every text value, named or not, must be storable: no NUL (PostgreSQL text cannot hold it) and
 * no unpaired UTF-16 surrogate (it has no UTF-8 form). Names also fit their columns: the limits
 * below are the schema's widths ({@code varchar(255)} counts characters), and a partition name,
 * kept in a btree of text, is capped in bytes well below the 2.7 KB an index entry holds.
 */
public final class Names {
    private static final Pattern CANONICAL_UUID =
            Pattern.compile("[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}");

    /** A name's field (as the client spells it) and its limits; {@code maxBytes} 0 for none. */
    public record Rule(String field, int maxChars, int maxBytes) {
    }

    public static final Rule QUEUE = new Rule("queue", 255, 0);
    public static final Rule PARTITION = new Rule("partition", 2048, 2048);
    public static final Rule CONSUMER_GROUP = new Rule("consumerGroup", 255, 0);
    public static final Rule NAMESPACE = new Rule("namespace", 255, 0);
    public static final Rule TASK = new Rule("task", 255, 0);
    /** Stored in segment frames, whose string fields hold 65535 bytes. */
    public static final Rule TRANSACTION_ID = new Rule("transactionId", 65535, 65535);
    public static final Rule TRACE_NAME = new Rule("traceName", 255, 0);
    public static final Rule LEASE_ID = new Rule("leaseId", 255, 0);
    public static final Rule SUBSCRIPTION_MODE = new Rule("subscriptionMode", 50, 0);
    public static final Rule WORKER_ID = new Rule("workerId", 255, 0);
    public static final Rule HOSTNAME = new Rule("hostname", 255, 0);
    /** Text stored as given (an ack's error message): only storable, any length. */
    public static final Rule FREE_TEXT = new Rule("text", Integer.MAX_VALUE, 0);
    /** Filters that are not stored (a status, an interval): only storable, and not absurdly long. */
    public static final Rule FILTER = new Rule("filter", 2048, 8192);

    private Names() {
    }

    /**
     * {@code value} when it satisfies {@code rule}, else a 400 naming {@code where} (the field as the
     * client sent it, such as {@code items[3].queue}). Null passes: whether a name is required is the
     * route's rule.
     */
    public static String check(Rule rule, String value, String where) {
        if (value == null) {
            return null;
        }
        String problem = storable(value);
        if (problem == null) {
            problem = fits(rule, value);
        }
        if (problem != null) {
            throw new BadRequestException("invalid " + where + ": " + problem);
        }
        return value;
    }

    /** The same, with the rule's own field name as {@code where}. */
    public static String check(Rule rule, String value) {
        return check(rule, value, rule.field());
    }

    /** A path parameter, checked: a 400 names it. */
    public static String path(ServerRequest req, String param, Rule rule) {
        return check(rule, req.path().pathParameters().get(param), "path parameter " + param);
    }

    /** Whether {@code text} is a UUID in its canonical 8-4-4-4-12 hex form (either case). */
    static boolean isUuid(String text) {
        return text != null && CANONICAL_UUID.matcher(text).matches();
    }

    /** A UUID a client gave, canonical form only; anything else is a 400 naming {@code field}. */
    static UUID uuid(String field, String text) {
        if (!isUuid(text)) {
            throw new BadRequestException(field + " \"" + text + "\" is not a UUID");
        }
        return UUID.fromString(text);
    }

    /** Null when {@code value} can be stored as text, else why not. */
    static String storable(String value) {
        for (int i = 0; i < value.length(); i++) {
            char c = value.charAt(i);
            if (c == 0) {
                return "contains a NUL character (\\u0000) at position " + i;
            }
            if (Character.isHighSurrogate(c)) {
                if (i + 1 < value.length() && Character.isLowSurrogate(value.charAt(i + 1))) {
                    i++;
                    continue;
                }
                return "contains an unpaired UTF-16 surrogate at position " + i + " (not valid Unicode)";
            }
            if (Character.isLowSurrogate(c)) {
                return "contains an unpaired UTF-16 surrogate at position " + i + " (not valid Unicode)";
            }
        }
        return null;
    }

    private static String fits(Rule rule, String value) {
        if (value.length() > rule.maxChars() && value.codePointCount(0, value.length()) > rule.maxChars()) {
            return "longer than " + rule.maxChars() + " characters";
        }
        if (rule.maxBytes() > 0 && value.length() * 3L > rule.maxBytes()
                && value.getBytes(StandardCharsets.UTF_8).length > rule.maxBytes()) {
            return "longer than " + rule.maxBytes() + " bytes of UTF-8";
        }
        return null;
    }
}
