package io.queen.broker.store;

import java.util.ArrayList;
import java.util.List;

/**
 * Splits a SQL file into statements on top-level semicolons. A semicolon does not end a statement
 * inside a single-quoted string (with '' escapes and E'' backslash escapes), a double-quoted
 * identifier, a dollar-quoted body ({@code $$} or {@code $tag$}, which may nest other tags), a
 * {@code --} line comment or a (nested) block comment. Statements that hold only comments and
 * whitespace are dropped; returned statements keep their text minus the terminating semicolon.
 */
public final class SqlSplitter {
    private SqlSplitter() {
    }

    public static List<String> split(String sql) {
        List<String> out = new ArrayList<>();
        StringBuilder current = new StringBuilder();
        boolean hasCode = false;
        int i = 0;
        int n = sql.length();
        while (i < n) {
            char c = sql.charAt(i);
            int end;
            if (c == '-' && i + 1 < n && sql.charAt(i + 1) == '-') {
                end = lineEnd(sql, i);
                current.append(sql, i, end);
                i = end;
                continue;
            }
            if (c == '/' && i + 1 < n && sql.charAt(i + 1) == '*') {
                end = blockCommentEnd(sql, i);
                current.append(sql, i, end);
                i = end;
                continue;
            }
            if (c == '\'') {
                boolean escapes = i > 0 && (sql.charAt(i - 1) == 'E' || sql.charAt(i - 1) == 'e')
                        && (i < 2 || !isIdentChar(sql.charAt(i - 2)));
                end = quotedEnd(sql, i, '\'', escapes);
            } else if (c == '"') {
                end = quotedEnd(sql, i, '"', false);
            } else if (c == '$' && (i == 0 || !isIdentChar(sql.charAt(i - 1)))) {
                String tag = dollarTag(sql, i);
                if (tag == null) {
                    end = i + 1;
                } else {
                    int close = sql.indexOf(tag, i + tag.length());
                    if (close < 0) {
                        throw new IllegalArgumentException("unterminated dollar-quoted string " + tag
                                + " starting at offset " + i);
                    }
                    end = close + tag.length();
                }
            } else if (c == ';') {
                if (hasCode) {
                    out.add(current.toString().strip());
                }
                current.setLength(0);
                hasCode = false;
                i++;
                continue;
            } else {
                end = i + 1;
            }
            if (!Character.isWhitespace(c)) {
                hasCode = true;
            }
            current.append(sql, i, end);
            i = end;
        }
        if (hasCode) {
            out.add(current.toString().strip());
        }
        return out;
    }

    private static int lineEnd(String sql, int from) {
        int nl = sql.indexOf('\n', from);
        return nl < 0 ? sql.length() : nl + 1;
    }

    private static int blockCommentEnd(String sql, int from) {
        int depth = 0;
        int i = from;
        while (i < sql.length() - 1) {
            if (sql.charAt(i) == '/' && sql.charAt(i + 1) == '*') {
                depth++;
                i += 2;
            } else if (sql.charAt(i) == '*' && sql.charAt(i + 1) == '/') {
                depth--;
                i += 2;
                if (depth == 0) {
                    return i;
                }
            } else {
                i++;
            }
        }
        throw new IllegalArgumentException("unterminated block comment starting at offset " + from);
    }

    private static int quotedEnd(String sql, int from, char quote, boolean backslashEscapes) {
        int i = from + 1;
        while (i < sql.length()) {
            char c = sql.charAt(i);
            if (backslashEscapes && c == '\\') {
                i += 2;
                continue;
            }
            if (c == quote) {
                if (i + 1 < sql.length() && sql.charAt(i + 1) == quote) {
                    i += 2;
                    continue;
                }
                return i + 1;
            }
            i++;
        }
        throw new IllegalArgumentException("unterminated " + quote + "-quoted text starting at offset " + from);
    }

    /** The full opening tag ($$ or $name$) at {@code from}, or null when this $ is not one (e.g. $1). */
    private static String dollarTag(String sql, int from) {
        int i = from + 1;
        if (i < sql.length() && Character.isDigit(sql.charAt(i))) {
            return null;
        }
        while (i < sql.length() && isIdentChar(sql.charAt(i))) {
            i++;
        }
        if (i < sql.length() && sql.charAt(i) == '$') {
            return sql.substring(from, i + 1);
        }
        return null;
    }

    private static boolean isIdentChar(char c) {
        return Character.isLetterOrDigit(c) || c == '_';
    }
}
