package dev.feigneureka.interop;

import java.io.IOException;

/**
 * Ties a fixture's life to the process that launched it. Compiled into both fixtures (each pom
 * adds this directory as a source root).
 */
final class ExitWithLauncher {
    private ExitWithLauncher() {
    }

    /**
     * With {@code -Dfeign.interop.exitOnStdinEof=true}, exits (running shutdown hooks) when stdin
     * reaches end of file: the launcher holds the write end, so the app never outlives the test
     * process, however that process ends.
     */
    static void whenStdinCloses() {
        if (!Boolean.getBoolean("feign.interop.exitOnStdinEof")) {
            return;
        }
        Thread watcher = new Thread(() -> {
            try {
                while (System.in.read() != -1) {
                    // discard
                }
            } catch (IOException e) {
                // treat as closed
            }
            System.exit(0);
        }, "stdin-eof-watcher");
        watcher.setDaemon(true);
        watcher.start();
    }
}
