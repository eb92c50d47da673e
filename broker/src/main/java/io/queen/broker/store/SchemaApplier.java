package io.queen.broker.store;

import io.queen.broker.store.SchemaFiles.SchemaFile;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;
import java.util.function.Supplier;
import java.util.logging.Level;
import java.util.logging.Logger;
import java.util.regex.Pattern;
import javax.sql.DataSource;

/**
 * Applies the packaged schema at every boot, before the broker serves, so a listening broker
 * always has its schema in place (broker/DESIGN.md, Layering).
 *
 * <p>One connection, {@code application_name = queen-schema-apply}. The server version is checked
 * before any DDL. Appliers serialise on session advisory lock 778120010, taken by polling a
 * try-lock so a waiting replica holds no snapshot (a peer's CREATE INDEX CONCURRENTLY would wait
 * for it). Files run in lexical order, one statement per transaction; a run of DROPs rides in the
 * transaction of the statement after it so live peers never see the gap. Lock-taking statements
 * run under {@code lock_timeout = 2s} and are retried on 55P03/40P01 with jittered backoff; a
 * CREATE INDEX CONCURRENTLY runs with no timeout and no retry. Any other error, or patience
 * exhausted, fails with the file, the statement's ordinal and preview, the server error and the
 * sessions holding locks in the schema.
 */
public final class SchemaApplier {
    public static final long ADVISORY_LOCK_KEY = 778120010L;
    private static final Logger LOG = Logger.getLogger(SchemaApplier.class.getName());
    private static final Pattern DROP = Pattern.compile("^\\s*DROP\\s", Pattern.CASE_INSENSITIVE);
    private static final Pattern CONCURRENT_INDEX = Pattern.compile(
            "^\\s*CREATE\\s+(UNIQUE\\s+)?INDEX\\s+CONCURRENTLY\\s", Pattern.CASE_INSENSITIVE);

    /** Knobs with production defaults; tests shorten the patience. */
    public record Options(
            int minServerVersionNum,
            Duration lockTimeout,
            int maxAttempts,
            Duration advisoryPollInterval,
            Duration advisoryMaxWait) {
        public static Options defaults() {
            return new Options(150000, Duration.ofSeconds(2), 40, Duration.ofMillis(500), Duration.ofMinutes(10));
        }

        public Options withMaxAttempts(int attempts) {
            return new Options(minServerVersionNum, lockTimeout, attempts, advisoryPollInterval, advisoryMaxWait);
        }

        public Options withLockTimeout(Duration timeout) {
            return new Options(minServerVersionNum, timeout, maxAttempts, advisoryPollInterval, advisoryMaxWait);
        }

        public Options withMinServerVersionNum(int versionNum) {
            return new Options(versionNum, lockTimeout, maxAttempts, advisoryPollInterval, advisoryMaxWait);
        }
    }

    /** What one apply did, for the boot log and tests. */
    public record Result(int files, int statements, int retries, long waitedForLockMs, long elapsedMs) {
    }

    private final DataSource dataSource;
    private final Options options;
    private final Supplier<List<SchemaFile>> files;

    public SchemaApplier(DataSource dataSource, Options options, Supplier<List<SchemaFile>> files) {
        this.dataSource = dataSource;
        this.options = options;
        this.files = files;
    }

    public SchemaApplier(DataSource dataSource) {
        this(dataSource, Options.defaults(), SchemaFiles::load);
    }

    public Result apply() {
        long started = System.nanoTime();
        List<SchemaFile> schema = files.get();
        try (Connection c = dataSource.getConnection()) {
            c.setAutoCommit(true);
            exec(c, "SET application_name = 'queen-schema-apply'");
            checkServerVersion(c);
            // A CREATE INDEX CONCURRENTLY on a big table may run long; the pool's statement timeout is for requests.
            exec(c, "SET statement_timeout = 0");
            exec(c, "SET lock_timeout = 0");
            long waited = acquireAdvisoryLock(c);
            try {
                int statements = 0;
                int retries = 0;
                for (SchemaFile file : schema) {
                    int[] counts = applyFile(c, file);
                    statements += counts[0];
                    retries += counts[1];
                }
                warnAboutInvalidIndexes(c);
                Result result = new Result(schema.size(), statements, retries, waited,
                        (System.nanoTime() - started) / 1_000_000);
                LOG.info(() -> "schema applied: " + result.files() + " files, " + result.statements()
                        + " statements, " + result.retries() + " lock retries, waited " + result.waitedForLockMs()
                        + " ms for the apply lock, " + result.elapsedMs() + " ms in all");
                return result;
            } finally {
                releaseAdvisoryLock(c);
                restoreSession(c);
            }
        } catch (SQLException e) {
            throw new SchemaApplyException("schema apply failed: " + e.getMessage(), e);
        }
    }

    /**
     * The connection goes back to the broker's pool: its settings return to the session's own (the
     * pool's statement timeout among them), or a request served on it later would never time out.
     */
    private static void restoreSession(Connection c) {
        try {
            exec(c, "RESET statement_timeout");
            exec(c, "RESET lock_timeout");
            exec(c, "RESET application_name");
        } catch (SQLException e) {
            LOG.fine(() -> "session settings not restored after the schema apply: " + e.getMessage());
        }
    }

    private void checkServerVersion(Connection c) throws SQLException {
        int num;
        String human;
        try (Statement s = c.createStatement();
             ResultSet rs = s.executeQuery("SELECT current_setting('server_version_num')::int, current_setting('server_version')")) {
            rs.next();
            num = rs.getInt(1);
            human = rs.getString(2);
        }
        if (num < options.minServerVersionNum()) {
            throw new SchemaApplyException("PostgreSQL " + (options.minServerVersionNum() / 10000)
                    + " or newer is required (the schema uses NULLS NOT DISTINCT); the server runs " + human
                    + " (server_version_num " + num + "); nothing was applied");
        }
    }

    private long acquireAdvisoryLock(Connection c) throws SQLException {
        long start = System.nanoTime();
        long deadline = start + options.advisoryMaxWait().toNanos();
        boolean logged = false;
        while (true) {
            try (Statement s = c.createStatement();
                 ResultSet rs = s.executeQuery("SELECT pg_try_advisory_lock(" + ADVISORY_LOCK_KEY + ")")) {
                rs.next();
                if (rs.getBoolean(1)) {
                    return (System.nanoTime() - start) / 1_000_000;
                }
            }
            if (System.nanoTime() > deadline) {
                throw new SchemaApplyException("another broker has held the schema apply lock (advisory "
                        + ADVISORY_LOCK_KEY + ") for more than " + options.advisoryMaxWait().toSeconds() + " s; "
                        + describeLockHolders(c));
            }
            if (!logged) {
                LOG.info("another broker is applying the schema; waiting for advisory lock " + ADVISORY_LOCK_KEY);
                logged = true;
            }
            sleep(options.advisoryPollInterval().toMillis());
        }
    }

    private static void releaseAdvisoryLock(Connection c) {
        try {
            exec(c, "SELECT pg_advisory_unlock(" + ADVISORY_LOCK_KEY + ")");
        } catch (SQLException e) {
            // Closing the session releases it anyway.
            LOG.log(Level.WARNING, "could not release the schema apply lock explicitly; the session close will", e);
        }
    }

    /** Returns {statements applied, lock retries}. */
    private int[] applyFile(Connection c, SchemaFile file) throws SQLException {
        List<String> statements;
        try {
            statements = SqlSplitter.split(file.sql());
        } catch (IllegalArgumentException e) {
            throw new SchemaApplyException("schema file " + file.name() + " cannot be split: " + e.getMessage(), e);
        }
        int retries = 0;
        List<String> pendingDrops = new ArrayList<>();
        int firstOrdinal = 1;
        for (int i = 0; i < statements.size(); i++) {
            String stmt = statements.get(i);
            int ordinal = i + 1;
            String code = withoutLeadingComments(stmt);
            if (DROP.matcher(code).find()) {
                if (pendingDrops.isEmpty()) {
                    firstOrdinal = ordinal;
                }
                pendingDrops.add(stmt);
                continue;
            }
            if (CONCURRENT_INDEX.matcher(code).find()) {
                if (!pendingDrops.isEmpty()) {
                    retries += runTransaction(c, file, firstOrdinal, pendingDrops);
                    pendingDrops.clear();
                }
                runConcurrentIndex(c, file, ordinal, stmt);
                continue;
            }
            List<String> group = new ArrayList<>(pendingDrops);
            group.add(stmt);
            retries += runTransaction(c, file, pendingDrops.isEmpty() ? ordinal : firstOrdinal, group);
            pendingDrops.clear();
        }
        if (!pendingDrops.isEmpty()) {
            retries += runTransaction(c, file, firstOrdinal, pendingDrops);
        }
        LOG.fine(() -> "applied " + file.name() + " (" + statements.size() + " statements)");
        return new int[] {statements.size(), retries};
    }

    /** Runs the statements in one transaction under lock_timeout, retrying lock conflicts. */
    private int runTransaction(Connection c, SchemaFile file, int ordinal, List<String> group) throws SQLException {
        for (int attempt = 1; ; attempt++) {
            try {
                c.setAutoCommit(false);
                exec(c, "SET LOCAL lock_timeout = '" + options.lockTimeout().toMillis() + "ms'");
                for (String stmt : group) {
                    exec(c, stmt);
                }
                c.commit();
                return attempt - 1;
            } catch (SQLException e) {
                rollbackQuietly(c);
                if (!SqlStates.isLockConflict(e)) {
                    throw failure(c, file, ordinal, group.get(group.size() - 1), e, "");
                }
                if (attempt >= options.maxAttempts()) {
                    throw failure(c, file, ordinal, group.get(group.size() - 1), e,
                            " after " + attempt + " attempts");
                }
                long backoff = backoffMillis(attempt);
                int a = attempt;
                LOG.warning(() -> "schema " + file.name() + " statement " + ordinal + ": " + e.getMessage().strip()
                        + " (SQLSTATE " + e.getSQLState() + "), attempt " + a + "/" + options.maxAttempts()
                        + ", retrying in " + backoff + " ms");
                sleep(backoff);
            } finally {
                c.setAutoCommit(true);
            }
        }
    }

    private void runConcurrentIndex(Connection c, SchemaFile file, int ordinal, String stmt) throws SQLException {
        try {
            exec(c, "SET lock_timeout = 0");
            exec(c, stmt);
        } catch (SQLException e) {
            throw failure(c, file, ordinal, stmt, e, "");
        }
    }

    /** The statement text after any comments that precede it, for classifying what kind it is. */
    static String withoutLeadingComments(String stmt) {
        String s = stmt.stripLeading();
        while (true) {
            if (s.startsWith("--")) {
                int nl = s.indexOf('\n');
                s = nl < 0 ? "" : s.substring(nl + 1).stripLeading();
            } else if (s.startsWith("/*")) {
                int end = s.indexOf("*/");
                s = end < 0 ? "" : s.substring(end + 2).stripLeading();
            } else {
                return s;
            }
        }
    }

    /** min(250 ms x attempt, 2 s) plus 0-50 % jitter, capped at 3 s. */
    static long backoffMillis(int attempt) {
        long base = Math.min(250L * attempt, 2000L);
        long jitter = (long) (base * ThreadLocalRandom.current().nextDouble(0.0, 0.5));
        return Math.min(base + jitter, 3000L);
    }

    private SchemaApplyException failure(Connection c, SchemaFile file, int ordinal, String stmt,
                                         SQLException e, String suffix) {
        String preview = stmt.replaceAll("\\s+", " ");
        if (preview.length() > 160) {
            preview = preview.substring(0, 160) + "...";
        }
        String msg = "schema apply failed in " + file.name() + " at statement " + ordinal + suffix
                + " [" + preview + "]: " + e.getMessage().strip() + " (SQLSTATE " + e.getSQLState() + "); "
                + describeLockHolders(c);
        return new SchemaApplyException(msg, e);
    }

    /** The other sessions holding locks on objects of schema queen, from pg_locks and pg_stat_activity. */
    private static String describeLockHolders(Connection c) {
        String sql = """
                SELECT a.pid, a.state, coalesce(a.application_name, ''),
                       left(regexp_replace(coalesce(a.query, ''), '\\s+', ' ', 'g'), 200),
                       string_agg(DISTINCT l.mode || ' on ' || coalesce(l.relation::regclass::text, l.locktype), ', ')
                FROM pg_locks l
                JOIN pg_stat_activity a ON a.pid = l.pid
                WHERE l.granted
                  AND l.pid <> pg_backend_pid()
                  AND (l.locktype = 'advisory'
                       OR l.relation IN (SELECT oid FROM pg_class
                                         WHERE relnamespace = (SELECT oid FROM pg_namespace WHERE nspname = 'queen')))
                GROUP BY a.pid, a.state, a.application_name, a.query
                ORDER BY a.pid
                """;
        StringBuilder out = new StringBuilder();
        try (Statement s = c.createStatement(); ResultSet rs = s.executeQuery(sql)) {
            while (rs.next()) {
                if (!out.isEmpty()) {
                    out.append("; ");
                }
                out.append("pid ").append(rs.getInt(1)).append(" (").append(rs.getString(2))
                        .append(", ").append(rs.getString(3)).append(") holds ").append(rs.getString(5))
                        .append(", running: ").append(rs.getString(4));
            }
        } catch (SQLException e) {
            return "lock holders unknown (" + e.getMessage().strip() + ")";
        }
        return out.isEmpty() ? "no other session holds locks in schema queen" : "lock holders: " + out;
    }

    private static void warnAboutInvalidIndexes(Connection c) throws SQLException {
        String sql = """
                SELECT c.relname FROM pg_index i
                JOIN pg_class c ON c.oid = i.indexrelid
                JOIN pg_namespace n ON n.oid = c.relnamespace
                WHERE n.nspname = 'queen' AND NOT i.indisvalid
                """;
        try (Statement s = c.createStatement(); ResultSet rs = s.executeQuery(sql)) {
            while (rs.next()) {
                LOG.warning("index queen." + rs.getString(1) + " is INVALID (an interrupted CREATE INDEX CONCURRENTLY?);"
                        + " drop it so the next boot rebuilds it");
            }
        }
    }

    private static void exec(Connection c, String sql) throws SQLException {
        try (Statement s = c.createStatement()) {
            s.execute(sql);
        }
    }

    private static void rollbackQuietly(Connection c) {
        try {
            c.rollback();
        } catch (SQLException ignored) {
            // The failure being reported matters more than this one.
        }
    }

    private static void sleep(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new SchemaApplyException("interrupted while applying the schema");
        }
    }
}
