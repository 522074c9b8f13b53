import ArgumentParser
import Cabinet
import TerminalProgress

/// `--quiet`, for the commands that report their progress: verify, backup,
/// restore, copy, compact.
struct ProgressOptions: ParsableArguments {
    @Flag(name: .shortAndLong, help: "Draw no progress bar (none is drawn either when standard error is not a terminal).")
    var quiet = false

    /// Runs `body` with a handler that draws a bar named after `verb` on the
    /// terminal, or with none (so the library skips even counting the records)
    /// when nothing is to be drawn. The bar is cleared before `body`'s result is printed.
    func reporting<R>(_ verb: String, _ body: (StoreProgress.Handler?) throws -> R) rethrows -> R {
        let bar = ProgressBar(quiet: quiet)
        defer { bar.finish() }
        guard bar.isEnabled else { return try body(nil) }
        return try body { progress in bar.update("\(verb) \(progress.what)", completed: progress.completed, total: progress.total) }
    }
}
