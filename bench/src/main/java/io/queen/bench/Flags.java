package io.queen.bench;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * A bench command line: {@code --name value} or {@code --name=value} flags, and bare
 * {@code --switch}es (the modes, {@code --aot}). One parser for every mode's options, so each
 * refuses what it does not know in the same words.
 */
final class Flags {
    /** The values by name (an alias stored under its target) and the switches, in command-line order. */
    record Parsed(Map<String, String> values, List<String> switches) {
    }

    private Flags() {
    }

    /** IllegalArgumentException names the bad argument. */
    static Parsed parse(String[] args, Set<String> switches, Set<String> valued, Map<String, String> aliases) {
        Map<String, String> values = new HashMap<>();
        List<String> seen = new ArrayList<>();
        for (int i = 0; i < args.length; i++) {
            String arg = args[i];
            if (!arg.startsWith("--")) {
                throw new IllegalArgumentException("unexpected argument " + arg);
            }
            String name = arg.substring(2);
            if (switches.contains(name)) {
                seen.add(name);
                continue;
            }
            String value;
            int eq = name.indexOf('=');
            if (eq >= 0) {
                value = name.substring(eq + 1);
                name = name.substring(0, eq);
            } else if (i + 1 < args.length) {
                value = args[++i];
            } else {
                throw new IllegalArgumentException("--" + name + " needs a value");
            }
            if (!valued.contains(name)) {
                throw new IllegalArgumentException("unknown flag --" + name);
            }
            values.put(aliases.getOrDefault(name, name), value);
        }
        return new Parsed(values, seen);
    }
}
